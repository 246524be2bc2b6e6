#!/usr/bin/env python3
"""cupti_cost.py - what each CUPTI mechanism costs the launch-bound PyTorch loop,
inside one process (the mechanisms: bench/cupti_toggle.c; the C counterpart and
the reason for measuring inside one process: bench/cupti_cost.cu).

  cupti_cost.py LIBCUPTI_TOGGLE_SO [REPEATS [ITERS_PER_SEGMENT]]   (defaults 20, 200)

The loop is overhead_loops.py's: x[64,512] -> Linear -> relu -> Linear.  Each
repeat runs one segment per configuration in rotating order; a segment is
timed from a synchronized start to a synchronize.  Output: one JSON line, per
configuration the median and minimum microseconds per iteration, and what CUPTI
delivered for it.
"""
import ctypes
import json
import statistics
import sys
import time


def main():
    lib = ctypes.CDLL(sys.argv[1])
    repeats = int(sys.argv[2]) if len(sys.argv) > 2 else 20
    per_segment = int(sys.argv[3]) if len(sys.argv) > 3 else 200
    lib.ct_config_name.restype = ctypes.c_char_p
    import torch
    import torch.nn as nn
    if lib.ct_init() <= 0:
        print("cupti_cost.py: CUPTI setup failed", file=sys.stderr)
        return 1
    torch.manual_seed(0)
    lin1 = nn.Linear(512, 512).cuda()
    lin2 = nn.Linear(512, 512).cuda()
    x = torch.randn(64, 512, device="cuda")
    n = lib.ct_configs()
    names = [lib.ct_config_name(c).decode() for c in range(n)]
    times = {c: [] for c in range(n)}
    seen = {c: [0, 0, 0] for c in range(n)}
    counts = (ctypes.c_longlong * 3)()
    with torch.inference_mode():
        for c in range(n):
            lib.ct_apply(c, 1)
            for _ in range(300):
                y = lin2(torch.relu(lin1(x)))
            torch.cuda.synchronize()
            lib.ct_apply(c, 0)
        lib.ct_counts(counts)
        before = list(counts)
        for r in range(repeats):
            for j in range(n):
                c = (r + j) % n
                if lib.ct_apply(c, 1) != 0:
                    return 1
                torch.cuda.synchronize()
                t0 = time.perf_counter()
                for _ in range(per_segment):
                    y = lin2(torch.relu(lin1(x)))
                torch.cuda.synchronize()
                times[c].append((time.perf_counter() - t0) / per_segment * 1e6)
                lib.ct_apply(c, 0)
                lib.ct_counts(counts)
                for k in range(3):
                    seen[c][k] += counts[k] - before[k]
                    before[k] = counts[k]
    if not torch.isfinite(y).all():
        raise RuntimeError("non-finite output")
    out = {"workload": "torch", "repeats": repeats, "per_segment": per_segment,
           "unit": "us per iteration", "configs": {}}
    for c in range(n):
        out["configs"][names[c]] = {
            "median": round(statistics.median(times[c]), 4), "min": round(min(times[c]), 4),
            "kernel_records": seen[c][0], "api_records": seen[c][1], "callbacks": seen[c][2]}
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
