"""kaudit_state.py - aligning the candidate's state with the reference's:
the reference's state_dict injected through a verified mapping, or the
reason none exists (docs/audit.md, "State alignment").

Apart from kaudit_runner.py: the one place the runner reads the parties'
parameters.
"""

import torch


def align_state(rs, cand, candidate_only=frozenset()):
    """Inject the reference's state (rs, its state_dict as built) into the
    candidate through a verified mapping: keys (by name, else by position,
    else by the words of the names), shapes, dtypes, then the values read
    back, and coverage (every tensor of both sides mapped once, but the
    candidate's keys the contract declares its own, candidate_only, which
    keep the candidate's values; a floating tensor of another floating dtype
    gets the reference's value cast to it).  Returns a description and the
    mapping (reference key -> candidate key); raises AlignmentError when the
    correspondence is unresolved."""
    whole = cand.state_dict()
    own = [k for k in whole if k in candidate_only and k not in rs]
    cs = {k: v for k, v in whole.items() if k not in own}
    rkeys, ckeys = list(rs.keys()), list(cs.keys())
    if not rkeys and not ckeys:
        info = {"mapping": "none", "tensors": 0}
        if own:
            info["candidate_only"] = own[:64]
        return info, {}
    mapping = None
    how = None
    if set(rkeys) == set(ckeys):
        mapping = {k: k for k in rkeys}
        how = "by-name"
    elif len(rkeys) == len(ckeys):
        pairs = list(zip(rkeys, ckeys))
        if all(tuple(rs[a].shape) == tuple(cs[b].shape) and castable(rs[a], cs[b]) for a, b in pairs):
            mapping = {a: b for a, b in pairs}
            how = "positional"
    if mapping is None:
        mapping = by_similarity(rs, cs)
        how = "by-similarity" if mapping is not None else None
    if mapping is None:
        extra = [k for k in ckeys if k not in rs]
        missing = [k for k in rkeys if k not in cs]
        if extra and not missing:
            raise AlignmentError("candidate-only-state",
                                 f"the candidate has state the reference lacks: {extra[:8]}")
        raise AlignmentError("unresolved-state-correspondence",
                             f"no verified mapping: reference-only {missing[:8]}, candidate-only {extra[:8]}")
    for a, b in mapping.items():
        if tuple(rs[a].shape) != tuple(cs[b].shape):
            raise AlignmentError("state-shape-mismatch",
                                 f"'{a}' has shape {tuple(rs[a].shape)} in the reference, {tuple(cs[b].shape)} in the candidate")
        if not castable(rs[a], cs[b]):
            raise AlignmentError("state-dtype-mismatch", f"'{a}' is {rs[a].dtype} in the reference, {cs[b].dtype} in the candidate")
    # a floating parameter the candidate keeps in another floating dtype (fp16
    # weights) gets the reference's value cast to it; the outputs then decide
    casts = {a: str(cs[b].dtype).replace("torch.", "") for a, b in mapping.items() if rs[a].dtype != cs[b].dtype}
    new = {b: rs[a].detach().clone().to(cs[b].dtype) for a, b in mapping.items()}
    # the declared state of its own keeps its values (strict: every key given)
    cand.load_state_dict({**{k: whole[k] for k in own}, **new}, strict=True)
    after = cand.state_dict()
    for a, b in mapping.items():
        x, y = new[b], after[b]
        if x.shape != y.shape or x.dtype != y.dtype or not torch.equal(x.detach().cpu(), y.detach().cpu()):
            raise AlignmentError("state-values-differ", f"after injection '{b}' does not hold the reference's '{a}'")
    info = {"mapping": how, "tensors": len(mapping), "pairs": [[a, b] for a, b in list(mapping.items())[:64]],
            "unverified": 0 if how == "by-name" else interchangeable(rs, mapping)}
    if len(mapping) < len(rkeys):
        info["reference_only"] = [k for k in rkeys if k not in mapping][:64]
    if own:
        info["candidate_only"] = own[:64]
    if casts:
        info["casts"] = dict(list(casts.items())[:64])
    return info, mapping


# Reference state no forward reads: BatchNorm's count of training batches
# (it only sets the running statistics' update factor when momentum is None).
# A candidate that holds the statistics under other names need not keep it.
BOOKKEEPING = ("num_batches_tracked",)
# Abbreviations in candidates' names for the modules a task's state lives in.
NAME_WORDS = {"bn": ("batch", "norm"), "batchnorm": ("batch", "norm"), "gn": ("group", "norm"),
              "groupnorm": ("group", "norm"), "ln": ("layer", "norm"), "layernorm": ("layer", "norm"),
              "w": ("weight",), "b": ("bias",), "gamma": ("weight",), "beta": ("bias",), "mu": ("mean",),
              "fc": ("linear",), "gemm": ("linear",), "matmul": ("linear",), "lin": ("linear",),
              "variance": ("var",)}
NAME_NOISE = ("running", "self", "param", "buffer", "")


def name_words(key):
    """The words of a state key: split at dots and underscores, abbreviations
    spelled out, digits and words that say nothing of the role dropped."""
    out = set()
    for part in key.lower().replace(".", "_").split("_"):
        if part.isdigit() or part in NAME_NOISE:
            continue
        out.update(NAME_WORDS.get(part, (part,)))
    return out


def by_similarity(rs, cs):
    """A mapping between keys that differ, by the words of their names among
    tensors of the same shape and castable dtype: each reference tensor to the
    candidate tensor whose name shares most words with it, taken best first;
    None when a choice ties, a tensor is left over (but the reference's
    bookkeeping), or a pair shares no word where its shape has company.  It is
    verified by the outputs alone (the record's "unverified"): a wrong one
    cannot pass the slots with re-drawn values, and a FAIL under it is no
    conviction (semantic.c)."""
    rkeys = [k for k in rs if not (k.rsplit(".", 1)[-1] in BOOKKEEPING and k not in cs)]
    ckeys = list(cs)
    if len(rkeys) != len(ckeys) or not rkeys:
        return None

    def fits(a, b):
        return tuple(rs[a].shape) == tuple(cs[b].shape) and castable(rs[a], cs[b])

    def score(a, b):
        wa, wb = name_words(a), name_words(b)
        return len(wa & wb) / max(1, len(wa | wb))

    pairs = sorted(((score(a, b), a, b) for a in rkeys for b in ckeys if fits(a, b)), reverse=True)
    mapping, taken = {}, set()
    for i, (sc, a, b) in enumerate(pairs):
        if a in mapping or b in taken:
            continue
        # a tie with another open pair of a or of b: the names do not decide
        rivals = [p for p in pairs[i + 1:] if p[0] == sc and (p[1] == a or p[2] == b)
                  and p[1] not in mapping and p[2] not in taken]
        company = sum(1 for p in pairs if p[1] == a) > 1
        if rivals or (sc == 0 and company):
            return None
        mapping[a] = b
        taken.add(b)
    return mapping if len(mapping) == len(rkeys) else None


def interchangeable(rs, mapping):
    """How many mapped reference tensors share their shape and dtype with
    another mapped one: where only a name or a position put them, a swap would
    pass every check but the outputs."""
    kinds = {}
    for a in mapping:
        kinds.setdefault((tuple(rs[a].shape), rs[a].dtype), []).append(a)
    return sum(len(v) for v in kinds.values() if len(v) > 1)


def castable(r, c):
    """The same dtype, or both floating (aligned through a cast)."""
    return r.dtype == c.dtype or (r.is_floating_point() and c.is_floating_point())


# Buffers that are statistics a task's layers keep (BatchNorm's, InstanceNorm's
# with track_running_stats): re-drawn with the parameters.  Other buffers are
# structure (a causal mask, a constant table) that a candidate may legitimately
# build in: kept as the reference made them.
RUNNING_STATISTICS = ("running_mean", "running_var")


def same_kind_groups(state):
    """The tensors of a state_dict that share shape and dtype with another
    (the reference's bookkeeping aside): {(shape, dtype): [keys]}, groups of
    two or more, where a mapping by position or by the names' words may have
    paired the wrong ones."""
    kinds = {}
    for k, t in state.items():
        if isinstance(t, torch.Tensor) and k.rsplit(".", 1)[-1] not in BOOKKEEPING:
            kinds.setdefault((tuple(t.shape), t.dtype), []).append(k)
    return {kind: keys for kind, keys in kinds.items() if len(keys) > 1}


def symmetric(state):
    """Whether every group of same_kind_groups holds one value: then any
    mapping that pairs tensors of one shape and dtype gives the candidate the
    same state, and what it computes from it no longer depends on which."""
    for keys in same_kind_groups(state).values():
        first = state[keys[0]]
        if not all(torch.equal(first, state[k]) for k in keys[1:]):
            return False
    return True


def redraw_state(module, seed, one_value_per_kind=False):
    """Gives the reference's floating parameters and running statistics new
    values drawn from seed, at the scale the task's own initialization gave
    them (a tensor's mean and spread; a constant c becomes c * U(0.5, 1.5),
    zero U(-0.5, 0.5)), so that a candidate that ignores a parameter, folds in
    its initial value or snapshots its own initial weights differs; a tensor
    without negative values keeps none (docs/audit.md, "State").  With
    one_value_per_kind, the re-drawn tensors of one shape and dtype then get
    one value, U(0.5, 1.5) (positive, as a scale or a variance must be, and
    neither zero nor one): the state_reload slot's second state, under which
    a mapping that only the outputs verify cannot be what differs.  Returns
    {"redrawn": [keys], "kept": [keys], "symmetric": symmetric(state)}."""
    g = torch.Generator().manual_seed(seed)
    params = {id(p) for p in module.parameters()}
    redrawn, kept = [], []
    with torch.no_grad():
        for name, t in module.state_dict(keep_vars=True).items():
            if not isinstance(t, torch.Tensor) or not t.is_floating_point() or t.numel() == 0:
                continue
            if id(t) not in params and not name.rsplit(".", 1)[-1] in RUNNING_STATISTICS:
                kept.append(name)
                continue
            src = t.detach().to("cpu", torch.float64)
            spread = float(src.std()) if src.numel() > 1 else 0.0
            if spread > 0:
                new = src.mean() + spread * torch.randn(src.shape, generator=g, dtype=torch.float64)
            else:
                u = torch.rand(src.shape, generator=g, dtype=torch.float64) * 2 - 1
                new = torch.where(src != 0, src * (1 + 0.5 * u), 0.5 * u)
            if float(src.min()) >= 0:
                new = new.abs()   # a scale or variance the task keeps non-negative stays so
            t.copy_(new.to(t.dtype))
            redrawn.append(name)
        state = module.state_dict(keep_vars=True)
        if one_value_per_kind:
            for keys in same_kind_groups(state).values():
                mine = [k for k in keys if k in redrawn]
                if len(mine) < 2:
                    continue
                first = state[mine[0]]
                one = 0.5 + torch.rand(first.shape, generator=g, dtype=torch.float64)
                for k in mine:
                    state[k].copy_(one.to(state[k].dtype))
    return {"redrawn": redrawn, "kept": kept, "symmetric": symmetric(state)}


class AlignmentError(Exception):
    def __init__(self, code, text):
        super().__init__(text)
        self.code = code
