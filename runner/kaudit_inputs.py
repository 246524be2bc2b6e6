"""kaudit_inputs.py - the runner's input generation: every slot's value
sets (seeded draws of the stress distributions, layouts and shapes, or the
task's own get_inputs() under a seed), made again when needed and given to
each party as tensors of its own.

Apart from kaudit_runner.py: what the inputs are is one job, calling the
parties on them another.  kaudit_weak.py uses clone_tree, to_device and
native_inputs through the runner's module.
"""

import copy

import torch


def clone_tree(obj):
    """Deep copy of inputs: tensors cloned with their layout, containers rebuilt."""
    if isinstance(obj, torch.Tensor):
        return obj.clone()
    if isinstance(obj, (list, tuple)):
        return type(obj)(clone_tree(x) for x in obj)
    if isinstance(obj, dict):
        return {k: clone_tree(v) for k, v in obj.items()}
    return copy.deepcopy(obj)


def to_fp64(obj):
    if isinstance(obj, torch.Tensor):
        return obj.double() if obj.is_floating_point() else obj.clone()
    if isinstance(obj, (list, tuple)):
        return type(obj)(to_fp64(x) for x in obj)
    if isinstance(obj, float):
        return obj
    return clone_tree(obj)


def to_device(obj, device):
    if isinstance(obj, torch.Tensor):
        return obj.to(device)
    if isinstance(obj, (list, tuple)):
        return type(obj)(to_device(x, device) for x in obj)
    return obj


def float_dtype_max(dtype):
    return torch.finfo(dtype).max


def generator(seed, device):
    g = torch.Generator(device=device)
    g.manual_seed(seed & 0x7FFFFFFFFFFFFFFF)
    return g


def draw(dist, shape, g, device, dtype):
    """Values of one distribution, drawn on the device (fast for the large
    inputs of real tasks; the same seed gives the same values on the same
    kind of device) in the input's dtype, or float32 for the half types."""
    gen = torch.float64 if dtype == torch.float64 else torch.float32
    kw = dict(generator=g, device=device, dtype=gen)
    if dist == "normal":
        v = torch.randn(shape, **kw)
    elif dist == "uniform":
        v = torch.rand(shape, **kw).mul_(2.0).sub_(1.0)
    elif dist == "heavy_tailed":
        # Student t with 3 degrees of freedom: z / sqrt(chi2_3 / 3)
        v = torch.randn(shape, **kw)
        chi = torch.zeros(shape, device=device, dtype=gen)
        for _ in range(3):
            chi.add_(torch.randn(shape, **kw).pow_(2))
        v.div_(chi.div_(3.0).sqrt_().clamp_min_(1e-12))
    elif dist == "sparse":
        v = torch.randn(shape, **kw)
        v.mul_(torch.rand(shape, **kw) < 0.1)
    elif dist == "constant":
        # its value from the slot's seed, so from the audit's: a candidate
        # cannot keep the answer to a constant it knows in advance
        v = torch.full(shape, 0.5 + torch.rand((), **kw).item(), device=device, dtype=gen)
    elif dist == "offset":
        # a mean far above the spread: E[x^2] - E[x]^2 cancels in fp32
        v = torch.randn(shape, **kw).add_(1e3)
    elif dist == "signed_extremes":
        sign = torch.where(torch.rand(shape, **kw) < 0.5, -1.0, 1.0)
        mag = torch.where(torch.rand(shape, **kw) < 0.5, 1e5, 1e-4)
        v = (sign * mag).to(gen)
    else:
        raise ValueError(f"unknown distribution '{dist}'")
    return v


def materialize(values, layout, device):
    """A tensor holding `values` (in the input's dtype) in the given layout, on device."""
    shape = tuple(values.shape)
    if layout == "strided" and len(shape) >= 1:
        wide = shape[:-1] + (2 * shape[-1],)
        buf = torch.empty(wide, dtype=values.dtype, device=device)
        buf.fill_(float("nan") if values.is_floating_point() else 0)
        view = buf[..., 1::2]   # non-contiguous and at a storage offset
        view.copy_(values)
        return view
    if layout == "transposed" and len(shape) >= 2:
        swapped = shape[:-2] + (shape[-1], shape[-2])
        buf = torch.empty(swapped, dtype=values.dtype, device=device)
        view = buf.transpose(-1, -2)
        view.copy_(values)
        return view
    if layout == "transposed" and len(shape) == 1:
        buf = torch.empty((shape[0] + 1,), dtype=values.dtype, device=device)
        view = buf[1:]
        view.copy_(values)
        return view
    return values.to(device).contiguous()


def layout_of(t):
    """The layout a task's own input has, in materialize()'s names: what
    `kaudit contract new` declares valid (docs/audit.md, "What gates")."""
    if t.is_contiguous() and t.storage_offset() == 0:
        return "contiguous"
    if t.dim() >= 2 and t.transpose(-1, -2).is_contiguous():
        return "transposed"
    return "strided"


class SlotInputs:
    """One value set.  Its values come from a recipe (a seeded draw, or the
    task's get_inputs() under a seed) and are made again when needed, so that
    the large inputs of real tasks are never kept for all slots at once; each
    party gets tensors of its own, in the slot's layout (clone() would not
    keep a strided layout)."""

    def __init__(self, recipe, layout):
        self.recipe = recipe        # () -> list of ("t", tensor) | ("o", object)
        self.layout = layout
        self._values = None

    def values(self):
        if self._values is None:
            self._values = self.recipe()
        return self._values

    def drop(self):
        self._values = None

    def make(self, device, fp64=False):
        out = []
        for kind, v in self.values():
            if kind == "t":
                vals = v.double() if (fp64 and v.is_floating_point()) else v
                if v.is_floating_point():
                    out.append(materialize(vals, self.layout, device))
                else:
                    out.append(vals.to(device).clone())
            else:
                out.append(to_fp64(v) if fp64 else clone_tree(v))
        return out

    def values_into(self, buffers):
        """Copy this set's values into existing tensors (fresh values, same buffers)."""
        for (kind, v), b in zip(self.values(), buffers):
            if kind == "t":
                b.copy_(v)


def native_inputs(mod, seed, device=None):
    """get_inputs() under a seed.  With a device (a GPU, PyTorch 2's default
    device context), the task's own torch.rand/randn draw there: the same
    distribution, at GPU speed; KernelBench's level-1 inputs reach 1.6e9
    elements, which the CPU generator takes seconds to draw, and an audit
    draws about twenty native value sets."""
    torch.manual_seed(seed)
    if device is not None:
        with device:
            got = mod.get_inputs()
    else:
        got = mod.get_inputs()
    if not isinstance(got, (list, tuple)):
        raise TypeError(f"get_inputs() returned {type(got).__name__}, not a list")
    args = []
    for x in got:
        if isinstance(x, torch.Tensor):
            args.append(("t", x.detach()))
        else:
            args.append(("o", x))
    return args


class Spec:
    """A floating input of the canonical get_inputs(): its shape and dtype only."""

    def __init__(self, t):
        self.shape = tuple(t.shape)
        self.dtype = t.dtype
        self.device = t.device

    def dim(self):
        return len(self.shape)


def base_specs(args):
    return [("s", Spec(v)) if k == "t" and v.is_floating_point() else (k, v) for k, v in args]


def redrawable_integers(v):
    """An integer tensor input whose values a slot draws again: within the
    task's own draw's range [min, max] (indices, labels, counts); a bool tensor
    (a mask) and an empty one keep the task's values."""
    return isinstance(v, torch.Tensor) and not v.is_floating_point() and not v.is_complex() \
        and v.dtype != torch.bool and v.numel() > 0


def recipe(base, dist, scale, set_seed, device, shapes=None, integers=True, arrange=None):
    """A seeded draw of every floating input (dist, scale, shapes), the integer
    inputs redrawn in their range unless integers is False; arrange, when
    given, reorders each floating input's drawn values ("permute": a seeded
    permutation, "flip": reversed): a value set with the same checksum as the
    same draw unarranged (docs/audit.md, "Long run")."""
    def make():
        args = []
        for i, (k, v) in enumerate(base):
            g = generator(set_seed * 131 + i, device)
            if k == "s":
                shape = tuple(shapes[i]) if shapes else v.shape
                vals = draw(dist, shape, g, device, v.dtype)
                if scale != 1.0:
                    vals.mul_(scale)
                if arrange == "permute":
                    # a seeded rotation of the flat values: the same multiset and sum,
                    # every element moved, no index tensor (inputs can be billions of elements)
                    shift = 1 + (set_seed * 131 + i) % max(1, vals.numel() - 1)
                    vals = vals.reshape(-1).roll(shift).reshape(vals.shape)
                elif arrange == "flip":
                    vals = vals.reshape(-1).flip(0).reshape(vals.shape)
                args.append(("t", vals.to(v.dtype)))
            elif k == "t" and integers and redrawable_integers(v):
                args.append(("t", redraw_integers(v, g, device)))
            else:
                args.append((k, v))
        return args
    return make


def redraw_integers(v, g, device):
    """New values for an integer input within the range of the task's own
    draw, [min, max], kept as that draw was: distinct when its values were
    (unique indices a scatter relies on: a sample without repetition, or,
    over a range too wide to sample, its own values permuted), sorted when
    they were (offsets)."""
    flat = v.reshape(-1).to(device)
    lo, hi = int(flat.min()), int(flat.max())
    if torch.unique(flat).numel() == flat.numel():
        if hi - lo + 1 <= (1 << 24):
            vals = torch.randperm(hi - lo + 1, generator=g, device=device)[:flat.numel()] + lo
        else:
            vals = flat[torch.randperm(flat.numel(), generator=g, device=device)]
    else:
        vals = torch.randint(lo, hi + 1, (flat.numel(),), generator=g, device=device, dtype=torch.int64)
    if flat.numel() > 1 and bool((flat[1:] >= flat[:-1]).all()):
        vals = vals.sort().values
    return vals.to(v.dtype).reshape(v.shape)


def has_redrawable_integers(base):
    return any(k == "t" and redrawable_integers(v) for k, v in base)


def probe_shapes(base, variant):
    """Other shapes for the floating inputs, derived from the task's own (the
    shape probes, docs/audit.md, "What gates"); a size that stands in several
    places changes everywhere alike, so that the inputs stay consistent (the
    reference decides whether it runs on them).  "odd_sizes": every size
    above 1 one larger (no multiple of a tile width); "batch": the first
    input's leading size, wherever it stands first, to half of it plus one.
    {input index: shape}, or None when nothing changes."""
    floating = [v for k, v in base if k == "s"]
    if not floating:
        return None
    if variant == "odd_sizes":
        def remap(i, d, size):
            return size + 1 if size > 1 else size
    elif variant == "batch":
        lead = floating[0].shape[0] if len(floating[0].shape) >= 1 else None
        if not lead or lead < 2:
            return None

        def remap(i, d, size):
            return lead // 2 + 1 if d == 0 and size == lead else size
    else:
        return None
    shapes = {}
    for i, (k, v) in enumerate(base):
        if k == "s":
            shapes[i] = [remap(i, d, size) for d, size in enumerate(v.shape)]
    if all(list(shapes[i]) == list(base[i][1].shape) for i in shapes):
        return None
    return shapes


def slot_inputs(slot, base, mod, plan_seed, alt_shapes, device, native_device=None, integers=True):
    """The value set(s) of one slot, or (None, reason) when the slot is not
    supported by the task (then a native-seed slot replaces it).  integers:
    the task's integer inputs redrawn within their range (False: kept as
    get_inputs() made them)."""
    kind = slot["kind"]
    seed = plan_seed * 1000003 + slot["index"] * 7919 + 17
    floating = [i for i, (k, v) in enumerate(base) if k == "s"]
    if kind == "native":
        s2 = plan_seed + slot["seed_offset"]
        return [SlotInputs(lambda: native_inputs(mod, s2, native_device), "contiguous")], None
    if not floating:
        return None, "the task has no floating-point tensor input"

    def recipe_of(dist, scale, set_seed, shapes=None):
        return recipe(base, dist, scale, set_seed, device, shapes, integers)

    if kind == "value":
        scale = float(slot.get("scale", 1.0))
        dist = slot.get("dist", "normal")
        for i in floating:
            dt = base[i][1].dtype
            peak = 1e5 if dist == "signed_extremes" else 6.0 * scale
            if peak * 16 > float_dtype_max(dt):
                return None, f"input {i} ({str(dt)}) cannot hold values of scale {scale:g}"
        return [SlotInputs(recipe_of(dist, scale, seed), "contiguous")], None
    if kind == "layout":
        if not any(base[i][1].dim() >= 1 for i in floating):
            return None, "no floating input with a dimension"
        return [SlotInputs(recipe_of("normal", 1.0, seed), slot["layout"])], None
    if kind == "shape":
        if not alt_shapes:
            return None, "the contract declares no alternative input shapes (stress.alternative_shapes)"
        if len(alt_shapes) != len(base):
            return None, f"stress.alternative_shapes has {len(alt_shapes)} entries for {len(base)} inputs"
        shapes = {}
        for i, (k, v) in enumerate(base):
            if k == "s":
                shapes[i] = alt_shapes[i] if alt_shapes[i] is not None else v.shape
            elif k == "t" and alt_shapes[i] is not None and list(alt_shapes[i]) != list(v.shape):
                return None, f"input {i} is not floating: its alternative shape cannot be drawn"
        return [SlotInputs(recipe_of("normal", 1.0, seed, shapes), "contiguous")], None
    if kind == "repeated":
        return [SlotInputs(recipe_of("normal", 1.0, seed + 7 * k), "contiguous") for k in range(4)], None
    if kind == "shape_probe":
        shapes = probe_shapes(base, slot.get("variant"))
        if shapes is None:
            return None, f"no shape of variant '{slot.get('variant')}' differs from the task's own"
        return [SlotInputs(recipe_of("normal", 1.0, seed, shapes), "contiguous")], None
    return None, f"unknown slot kind '{kind}'"


# The long run's compared value sets, in order (docs/audit.md, "Long run"):
# N(0, 1); a mean far above the spread; the same values permuted, then
# reversed (the same checksum as the call before: a result memoized on a sum
# or a hash of the values is stale there); then N(0, 1) again.
LONG_RUN_VARIANTS = (("normal", None, 0), ("offset", None, 1), ("offset", "permute", 1), ("offset", "flip", 1))


def long_run_sets(base, set_seed, device, count, variants=True):
    """count value sets for the long run's compared calls, or (None, reason)
    when the task has no floating input.  variants False: N(0, 1) only (the
    fallback for a task whose reference cannot take the variants)."""
    if not any(k == "s" for k, v in base):
        return None, "the task has no floating-point tensor input"
    sets = []
    for k in range(count):
        dist, arrange, n = LONG_RUN_VARIANTS[k] if variants and k < len(LONG_RUN_VARIANTS) else ("normal", None, k)
        sets.append(SlotInputs(recipe(base, dist, 1.0, set_seed + 7 * n, device, arrange=arrange), "contiguous"))
    return sets, None
