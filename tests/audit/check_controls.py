#!/usr/bin/env python3
"""Development self-check of the semantic controls in tests/audit (independent of kaudit).

For each row of controls.tsv it builds the reference Model and the candidate
ModelNew (torch.manual_seed(seed) before each), injects the reference's
state_dict, and runs a crude copy of `kaudit audit`'s 16-slot stress schedule:

  0 value_normal  1 value_tiny  2 value_large  3 dist_uniform  4 dist_heavy_tailed
  5 dist_sparse  6 dist_constant  7 dist_signed_extremes  8 layout_strided
  9 layout_transposed  10 shape_alternative (contract stress.alternative_shapes,
  else a native seed)  11 repeated_calls  12..15 native_seed_0..3

Each candidate output is compared with the fp64 reference cast down, with a
crude tolerance |k - r64| <= max(1e-4*|r64| + 1e-6*max|r64|, 4*|r32 - r64|),
plus nonfinite (NaN/Inf vs a finite reference), input-mutated (an input the
reference leaves alone changes) and, in slot 11, output-aliased (an earlier
output changed after later calls). Before each candidate call free memory is
"filled" with NaN like the runner does.

It also runs the "weak validator" on the nominal inputs (native seed 0, one
call, fresh module): torch.allclose(rtol=1e-2, atol=1e-2), KernelBench-style.

Expectations: a FAIL row must pass the weak validator AND show the claimed
code at every claimed slot (parsed from the 5th column: 'slot N name[, slot M
name]: code[|code]; note'); a PASS row must be clean at all 16 slots and match the
strict check on the nominal inputs.

    /usr/bin/python3 tests/audit/check_controls.py [--device cpu|cuda] [--seed 0] [NAME...]
"""
import argparse
import copy
import importlib.util
import json
import math
import os
import re
import sys
import time

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
SLOTS = ["value_normal", "value_tiny", "value_large", "dist_uniform", "dist_heavy_tailed",
         "dist_sparse", "dist_constant", "dist_signed_extremes", "layout_strided",
         "layout_transposed", "shape_alternative", "repeated_calls",
         "native_seed_0", "native_seed_1", "native_seed_2", "native_seed_3"]

_load_count = [0]
CALIBRATED = False


def load(path):
    """A fresh module object each time (class-level state starts empty)."""
    _load_count[0] += 1
    name = "audit_ctl_%d_%s" % (_load_count[0], os.path.splitext(os.path.basename(path))[0])
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def leaves(out):
    if isinstance(out, torch.Tensor):
        return [out]
    if isinstance(out, (list, tuple)):
        r = []
        for o in out:
            r += leaves(o)
        return r
    return []


def build(ref_mod, cand_mod, seed, device):
    init = ref_mod.get_init_inputs()
    torch.manual_seed(seed)
    ref = ref_mod.Model(*init).to(device).eval()
    torch.manual_seed(seed)
    cand = cand_mod.ModelNew(*init).to(device).eval()
    inject(ref, cand)
    ref64 = copy.deepcopy(ref).double()
    return ref, ref64, cand


def inject(ref, cand):
    rs, cs = ref.state_dict(), cand.state_dict()
    assert list(rs.keys()) == list(cs.keys()), (list(rs), list(cs))
    for k in rs:
        assert rs[k].shape == cs[k].shape and rs[k].dtype == cs[k].dtype, k
    cand.load_state_dict(rs)
    for k, v in cand.state_dict().items():
        assert torch.equal(v, rs[k]), k


def native(ref_mod, seed):
    torch.manual_seed(seed)
    return ref_mod.get_inputs()


def fill(t, slot, g):
    """New values for one floating input, same shape/dtype (CPU)."""
    shape = t.shape
    if slot == 0:
        return torch.randn(shape, generator=g)
    if slot == 1:
        return torch.randn(shape, generator=g) * 1e-4
    if slot == 2:
        return torch.randn(shape, generator=g) * 1e5
    if slot == 3:
        return torch.rand(shape, generator=g) * 2 - 1
    if slot == 4:  # Student-t, nu=3: N / sqrt(chi2_3 / 3)
        z = torch.randn(shape, generator=g)
        chi = (torch.randn((3,) + tuple(shape), generator=g) ** 2).sum(0)
        return z / torch.sqrt(chi / 3)
    if slot == 5:
        v = torch.randn(shape, generator=g)
        return v * (torch.rand(shape, generator=g) >= 0.9)
    if slot == 6:
        return torch.full(shape, 0.75)
    if slot == 7:
        sign = torch.where(torch.rand(shape, generator=g) < 0.5, -1.0, 1.0)
        mag = torch.where(torch.rand(shape, generator=g) < 0.5, 1e5, 1e-4)
        return sign * mag
    if slot in (8, 9):
        return torch.randn(shape, generator=g)
    raise ValueError(slot)


def relayout(v, slot, device):
    v = v.to(device)
    if slot == 8:  # x[..., ::2] of a wider buffer
        buf = torch.full(v.shape[:-1] + (2 * v.shape[-1],), float("nan"), dtype=v.dtype, device=device)
        view = buf[..., ::2]
        view.copy_(v)
        return view
    if slot == 9:
        if v.dim() >= 2:
            buf = torch.empty(v.transpose(-1, -2).shape, dtype=v.dtype, device=device)
            view = buf.transpose(-1, -2)
        else:
            buf = torch.empty(v.shape[0] + 3, dtype=v.dtype, device=device)
            view = buf[3:]
        view.copy_(v)
        return view
    return v


def slot_inputs(ref_mod, contract, slot, seed, device):
    base = native(ref_mod, seed + 1000 + slot)
    if slot == 10:
        alt = (contract.get("stress") or {}).get("alternative_shapes")
        if not alt:
            return None
        g = torch.Generator().manual_seed(seed + 10)
        return [torch.randn(tuple(s), generator=g).to(device) for s in alt]
    # not seed itself: slot 0 must not redraw the native seed-0 values
    g = torch.Generator().manual_seed(seed * 7919 + 104729 + slot)
    out = []
    for t in base:
        if isinstance(t, torch.Tensor) and t.is_floating_point():
            out.append(relayout(fill(t, slot, g).to(t.dtype), slot, device))
        else:
            out.append(t.to(device) if isinstance(t, torch.Tensor) else t)
    return out


def clone_like(xs):
    """Clone preserving strides (layout slots stay non-contiguous)."""
    r = []
    for x in xs:
        if isinstance(x, torch.Tensor):
            y = torch.empty_strided(x.size(), x.stride(), dtype=x.dtype, device=x.device)
            y.copy_(x)
            r.append(y)
        else:
            r.append(x)
    return r


def nan_fill(like):
    junk = [torch.full_like(t, float("nan")) for t in like]
    del junk


def ref_call(ref, ref64, xs):
    with torch.no_grad():
        r32 = leaves(ref(*clone_like(xs)))
        r64 = leaves(ref64(*[x.double() if isinstance(x, torch.Tensor) and x.is_floating_point() else x
                             for x in clone_like(xs)]))
    return [t.detach().clone() for t in r32], [t.detach().clone() for t in r64]


def cand_call(cand, bufs, r32):
    """Call the candidate on bufs (its own tensors); returns (outs, codes)."""
    snap = [b.clone() if isinstance(b, torch.Tensor) else b for b in bufs]
    nan_fill(r32)
    codes = set()
    try:
        with torch.no_grad():
            outs = leaves(cand(*bufs))
    except Exception as e:  # noqa
        return [], {"raised:%s" % type(e).__name__}
    for b, s in zip(bufs, snap):
        if isinstance(b, torch.Tensor) and not torch.equal(b, s) and not (
                torch.isnan(b).any() and torch.equal(torch.nan_to_num(b), torch.nan_to_num(s))):
            codes.add("input-mutated")
    return outs, codes


def compare(outs, r32, r64):
    codes = set()
    worst = 0.0
    if len(outs) != len(r64):
        return {"leaf-count"}, float("inf")
    for k, a, b in zip(outs, r32, r64):
        if tuple(k.shape) != tuple(b.shape):
            codes.add("shape")
            continue
        k = k.detach().double()
        a = a.double()
        fin = torch.isfinite(b)
        if (~torch.isfinite(k) & fin).any():
            codes.add("nonfinite")
        kk = torch.where(torch.isfinite(k), k, torch.zeros_like(k))
        if CALIBRATED:  # kaudit-like: from the reference's own fp32-vs-fp64 error
            d = (a - b).abs()[fin]
            rel = (d / b.abs()[fin].clamp_min(1e-300))[b.abs()[fin] > 0]
            p99a = torch.quantile(d, 0.99).item() if d.numel() else 0.0
            p99r = torch.quantile(rel, 0.99).item() if rel.numel() else 0.0
            rho, atol = max(1e-5, 4 * p99r), max(1e-8, 4 * p99a)
            tol = torch.maximum(atol + rho * b.abs(), 4 * (a - b).abs())
        else:
            amax = b[fin].abs().max().item() if fin.any() else 0.0
            tol = torch.maximum(1e-4 * b.abs() + 1e-6 * amax, 4 * (a - b).abs())
        err = (kk - b).abs()
        bad = (err > tol) & fin & torch.isfinite(k)
        if bad.any():
            codes.add("tolerance")
        ratio = (err / tol.clamp_min(1e-300))[fin & torch.isfinite(k)]
        if ratio.numel():
            worst = max(worst, ratio.max().item())
    return codes, worst


def run_slot(ref, ref64, cand, xs, ):
    r32, r64 = ref_call(ref, ref64, xs)
    bufs = clone_like(xs)
    outs, codes = cand_call(cand, bufs, r32)
    if outs:
        c, w = compare(outs, r32, r64)
        codes |= c
    else:
        w = float("inf")
    return codes, w


def repeated_calls(ref_mod, cand_mod, ref, ref64, cand, seed, device):
    """Slot 11: A x3 with fresh values in the same buffers, fresh B x1, B again same values."""
    vals = [slot_inputs(ref_mod, {}, 0, seed + 500 + i, device) for i in range(4)]
    bufs = clone_like(vals[0])
    codes, worst, held = set(), 0.0, []
    init = ref_mod.get_init_inputs()
    plan = [("A", 0), ("A", 1), ("A", 2), ("B", 3), ("B", None)]
    B = None
    for who, vi in plan:
        if who == "B" and B is None:
            torch.manual_seed(seed)
            B = cand_mod.ModelNew(*init).to(device).eval()
            inject(ref, B)
        model = cand if who == "A" else B
        if vi is not None:
            with torch.no_grad():
                for b, v in zip(bufs, vals[vi]):
                    if isinstance(b, torch.Tensor):
                        b.copy_(v)
            cur = vals[vi]
        r32, r64 = ref_call(ref, ref64, cur)
        outs, c = cand_call(model, bufs, r32)
        codes |= c
        if outs:
            c2, w = compare(outs, r32, r64)
            codes |= c2
            worst = max(worst, w)
            held.append((outs, [o.detach().clone() for o in outs]))
    for outs, snaps in held:
        for o, s in zip(outs, snaps):
            if not torch.equal(torch.nan_to_num(o), torch.nan_to_num(s)):
                codes.add("output-aliased")
    return codes, worst


def schedule(ref_mod, cand_mod, contract, seed, device):
    ref, ref64, cand = build(ref_mod, cand_mod, seed, device)
    res = {}
    extra = 4
    for slot in range(16):
        if slot == 11:
            res[slot] = repeated_calls(ref_mod, cand_mod, ref, ref64, cand, seed, device)
            continue
        if slot >= 12:
            xs = [x.to(device) for x in native(ref_mod, seed + slot - 12)]
        else:
            xs = slot_inputs(ref_mod, contract, slot, seed, device)
            if xs is not None:
                try:
                    ref_call(ref, ref64, xs)
                except Exception:
                    xs = None
            if xs is None:  # replaced by a further native seed
                xs = [x.to(device) for x in native(ref_mod, seed + extra)]
                extra += 1
        res[slot] = run_slot(ref, ref64, cand, xs)
    return res


def nominal(ref_mod, cand_mod, seed, device):
    """Weak (KernelBench-style) and crude strict check on native seed 0, one call."""
    ref, ref64, cand = build(ref_mod, cand_mod, seed, device)
    xs = [x.to(device) for x in native(ref_mod, seed)]
    r32, r64 = ref_call(ref, ref64, xs)
    with torch.no_grad():
        outs = leaves(cand(*clone_like(xs)))
    weak = len(outs) == len(r32) and all(
        o.shape == r.shape and torch.allclose(o.float(), r, rtol=1e-2, atol=1e-2) for o, r in zip(outs, r32))
    strict = not compare(outs, r32, r64)[0]
    return weak, strict


def parse_claim(what):
    head = what.split(";")[0]
    if ":" not in head:
        return [], None
    slots_part, code = head.rsplit(":", 1)
    return [int(s) for s in re.findall(r"slot (\d+)", slots_part)], code.strip()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--calibrated", action="store_true",
                    help="kaudit-like tolerance (rho = max(1e-5, 4*p99 rel err of fp32 ref), "
                         "a = max(1e-8, 4*p99 abs err)) instead of the crude rtol=1e-4")
    ap.add_argument("names", nargs="*")
    args = ap.parse_args()
    global CALIBRATED
    CALIBRATED = args.calibrated
    torch.set_num_threads(2)
    rows = []
    with open(os.path.join(HERE, "controls.tsv")) as f:
        next(f)
        for line in f:
            if line.strip():
                rows.append(line.rstrip("\n").split("\t"))
    failures = 0
    print("%-25s %-7s %-4s %-11s %-5s %s" % ("control", "task", "exp", "nominal", "ok", "slots with findings"))
    for name, task, cand, expected, what in rows:
        if args.names and name not in args.names:
            continue
        t0 = time.time()
        tpath = os.path.join(HERE, "tasks", task + ".py")
        cpath = os.path.join(HERE, "candidates", cand + ".py")
        with open(os.path.join(HERE, "contracts", task + ".json")) as f:
            contract = json.load(f)
        weak, strict = nominal(load(tpath), load(cpath), args.seed, args.device)
        res = schedule(load(tpath), load(cpath), contract, args.seed, args.device)
        found = {s: sorted(c) for s, (c, w) in res.items() if c}
        if expected == "PASS":
            ok = not found and strict
            why = "" if ok else "negative not clean"
        else:
            slots, code = parse_claim(what)
            missing = [s for s in slots if not set(code.split("|")) & res[s][0]]
            ok = weak and slots and not missing
            why = "" if ok else ("weak validator rejects nominal " if not weak else "") + \
                ("claimed %s missing at slots %s" % (code, missing) if missing else "")
        failures += not ok
        desc = ", ".join("%d:%s" % (s, "+".join(c)) for s, c in sorted(found.items())) or "none"
        print("%-25s %-7s %-4s weak=%d,st=%d %-5s %s  [%.1fs] %s" % (
            name, task, expected, weak, strict, "OK" if ok else "BAD", desc, time.time() - t0, why))
        sys.stdout.flush()
    print("%d control(s) not doing what they claim" % failures)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
