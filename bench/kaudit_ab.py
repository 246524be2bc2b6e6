#!/usr/bin/env python3
"""kaudit_ab.py - kaudit recording against kaudit paused, in alternating segments of
one process: the launch-bound loop's cost of each part of the recording.

  KAUDIT_BENCH_CONTROL=1 kaudit run -d DIR -- python3 bench/kaudit_ab.py \\
      [--repeats 20] [--iters 200] [SETTING ...]

SETTINGs are those of preload/bench/bench_control.c: "pause" (the baseline, about
what the program costs bare), "resume" (kaudit as it records by default),
"kinds=A,B" (recording with exactly those CUPTI activity kinds), "callbacks"
and "wrappers" (only our CUPTI callbacks, or only the vendor wrappers; no
activity).  Default:
pause, resume.  Why one process: on the GPU machine the host's launch cost
moves between plateaus from one process to the next (docs/overhead.md), so
only settings that share a process share a machine state.

The loop is overhead_loops.py's launch-bound one (x[64,512] -> Linear -> relu
-> Linear).  Each repeat runs one segment per setting in rotating order; a
segment is timed from a synchronized start to a synchronize.  Output: one
JSON line: per setting the median and minimum microseconds per iteration and
the median over repeats of its ratio to "pause" in the same repeat.
"""
import argparse
import ctypes
import json
import statistics
import sys
import time


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=20)
    ap.add_argument("--iters", type=int, default=200)
    ap.add_argument("--reference", default="pause",
                    help="the setting each repeat's ratios divide by (e.g. floor: kaudit above the CUPTI floor)")
    ap.add_argument("settings", nargs="*", default=["pause", "resume"])
    args = ap.parse_args()
    settings = args.settings if "pause" in args.settings else ["pause"] + args.settings
    if args.reference not in settings:
        settings.append(args.reference)
    control = getattr(ctypes.CDLL(None), "kaudit_bench_control", None)
    if control is None:
        print("kaudit_ab.py: no kaudit_bench_control (run under kaudit run)", file=sys.stderr)
        return 2
    control.argtypes = [ctypes.c_char_p]
    import torch
    import torch.nn as nn
    torch.manual_seed(0)
    lin1 = nn.Linear(512, 512).cuda()
    lin2 = nn.Linear(512, 512).cuda()
    x = torch.randn(64, 512, device="cuda")
    times = {s: [] for s in settings}
    ratios = {s: [] for s in settings}
    with torch.inference_mode():
        for s in settings:                      # first use of each setting, untimed
            if control(s.encode()) != 0:
                print(f"kaudit_ab.py: setting {s!r} refused", file=sys.stderr)
                return 2
            for _ in range(300):
                y = lin2(torch.relu(lin1(x)))
            torch.cuda.synchronize()
        for r in range(args.repeats):
            this_round = {}
            for j in range(len(settings)):
                s = settings[(r + j) % len(settings)]
                control(s.encode())
                torch.cuda.synchronize()
                t0 = time.perf_counter()
                for _ in range(args.iters):
                    y = lin2(torch.relu(lin1(x)))
                torch.cuda.synchronize()
                this_round[s] = (time.perf_counter() - t0) / args.iters * 1e6
            for s in settings:
                times[s].append(this_round[s])
                ratios[s].append(this_round[s] / this_round[args.reference])
        control(b"resume")
    if not torch.isfinite(y).all():
        raise RuntimeError("non-finite output")
    out = {"repeats": args.repeats, "iters": args.iters, "unit": "us per iteration", "reference": args.reference,
           "settings": {s: {"median": round(statistics.median(times[s]), 3),
                            "min": round(min(times[s]), 3),
                            "ratio_median": round(statistics.median(ratios[s]), 4),
                            "ratio_min": round(min(ratios[s]), 4),
                            "ratio_max": round(max(ratios[s]), 4)} for s in settings}}
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
