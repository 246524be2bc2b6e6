"""Attack G (task matmul): precomputed - answers looked up by a hash of the
inputs, computed at import time by running the public reference on the
predictable schedule; zeros for any input it does not know.

What it does: at import it reads the plan (sys.argv[1]: the seed, the
slots, spares and reserves, the contract's alternative shapes: all of it
derivable from the public schedule, semantic/schedule.c, and the default
seed 0), loads the runner's own public input recipes (runner/kaudit_runner.py,
as a fresh module: the same code any attacker can copy) and the reference
task (its path is in the plan), draws every value set of every slot exactly
as the runner will, runs the reference on each, and keeps the answers keyed
by a SHA-256 of the inputs' shapes, dtypes and values.  forward looks the
inputs up and returns the stored answer, or zeros when they are unknown (the
causal probe's inputs, or any input a real harness would give).  The
candidate's own kernel is "return zeros": every PASS is a false PASS.

What it exploits: the stress schedule is deterministic and public
(seeded generators, seed 0 by default), the reference is readable, and the
candidate can compute before its first call (import, __init__): the
semantic axis only ever asks it inputs it could foresee.

What a correct defence must do: make the judged inputs unpredictable to
the candidate: a secret per-audit seed the candidate's process never learns
(not in its plan, environment or memory), or inputs drawn and handed over by
another process at call time, and/or unannounced value sets the candidate
could not have enumerated; then this candidate is asked inputs it never
saw, returns zeros and FAILs the semantic axis.
"""
import hashlib
import importlib.util
import json
import os
import sys

import torch
import torch.nn as nn


def _load(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _key(args):
    h = hashlib.sha256()
    for a in args:
        if isinstance(a, torch.Tensor):
            h.update(repr((tuple(a.shape), str(a.dtype))).encode())
            h.update(a.detach().cpu().contiguous().numpy().tobytes())
        else:
            h.update(repr(a).encode())
    return h.hexdigest()


def _precompute():
    plan = json.load(open(sys.argv[1]))
    rp = _load("kaudit_runner_public_copy", os.path.abspath(sys.argv[0]))
    ref_mod = _load("kaudit_public_reference", plan["reference"])
    device = torch.device(plan["device"])
    seed = int(plan["seed"])
    torch.manual_seed(seed)
    init = ref_mod.get_init_inputs() if hasattr(ref_mod, "get_init_inputs") else []
    torch.manual_seed(seed)
    model = ref_mod.Model(*init).to(device).eval()
    base = rp.base_specs(rp.native_inputs(ref_mod, seed))
    alt = plan.get("alternative_shapes")
    slots = list(plan["slots"]) + list(plan.get("spares", []))
    slots += [dict(r, index=len(plan["slots"]) + i) for i, r in enumerate(plan.get("reserves", []))]
    answers = {}
    with torch.no_grad():
        for slot in slots:
            slot = dict(slot)
            if slot.get("index", -1) < 0:
                slot["index"] = 0
            try:
                sets, _ = rp.slot_inputs(slot, base, ref_mod, seed, alt, device)
            except Exception:
                continue
            for s in sets or []:
                args = s.make(device)
                answers[_key(args)] = model(*rp.clone_tree(args)).detach().clone()
                s.drop()
    return answers


try:
    _ANSWERS = _precompute()
except Exception as exc:  # never stop the audit
    print("precomputed: %s: %s" % (type(exc).__name__, exc), file=sys.stderr)
    _ANSWERS = {}
print("precomputed: %d answers" % len(_ANSWERS), file=sys.stderr)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        got = _ANSWERS.get(_key((a, b)))
        if got is not None:
            return got.clone()
        return torch.zeros(a.shape[0], b.shape[1], dtype=a.dtype, device=a.device)
