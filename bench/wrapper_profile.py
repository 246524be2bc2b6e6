#!/usr/bin/env python3
"""wrapper_profile.py - where the cublasLtMatmul wrapper's time goes inside the
launch-bound loop (x -> Linear -> relu -> Linear, two cublasLtMatmul calls an
iteration), per stage, in ns per call.  Needs a bench build of the preload
(cmake -DKAUDIT_WRAPPER_PROFILE=ON) and the benchmark control:

  KAUDIT_BENCH_CONTROL=1 kaudit run -d /tmp/s -- python3 bench/wrapper_profile.py

For each setting (wrappers: the wrappers alone; resume: everything) it runs
the loop, then reads the calling thread's cycle counters
(kaudit_wrapper_profile) and converts them with the TSC rate it measures.
Prints one JSON line.
"""
import ctypes
import json
import sys
import time

STAGES = ["summary", "begin", "real_call", "finish", "finish:clock_tid", "finish:caller_object",
          "finish:emit", None, "emit:lock", "emit:store", "emit:unlock"]


def main():
    lib = ctypes.CDLL(None)
    control = getattr(lib, "kaudit_bench_control", None)
    read = getattr(lib, "kaudit_wrapper_profile", None)
    if control is None or read is None:
        print("wrapper_profile.py: needs kaudit run, KAUDIT_BENCH_CONTROL=1 and a KAUDIT_WRAPPER_PROFILE build",
              file=sys.stderr)
        return 2
    control.argtypes = [ctypes.c_char_p]
    counters = (ctypes.c_ulonglong * len(STAGES))()
    import torch
    import torch.nn as nn
    torch.manual_seed(0)
    lin1 = nn.Linear(512, 512).cuda()
    lin2 = nn.Linear(512, 512).cuda()
    x = torch.randn(64, 512, device="cuda")
    inline_maps = getattr(lib, "kaudit_segments_mapped_inline", None)
    if inline_maps is not None:
        inline_maps.restype = ctypes.c_ulonglong
    tsc = getattr(lib, "kaudit_tsc_hz")
    tsc.restype = ctypes.c_double
    hz = tsc()
    out = {"tsc_hz": hz, "settings": {}}
    with torch.inference_mode():
        for setting in ["wrappers", "resume", "wrappers", "resume"]:
            control(setting.encode())
            for _ in range(500):
                lin2(torch.relu(lin1(x)))
            torch.cuda.synchronize()
            read(counters)
            maps0 = inline_maps() if inline_maps else 0
            t0 = time.perf_counter()
            for _ in range(4000):
                lin2(torch.relu(lin1(x)))
            torch.cuda.synchronize()
            us_iter = (time.perf_counter() - t0) / 4000 * 1e6
            read(counters)
            calls = counters[7] or 1
            row = {"us_per_iteration": round(us_iter, 2), "calls": counters[7]}
            if inline_maps:
                row["segments_mapped_inline"] = inline_maps() - maps0
            for i, name in enumerate(STAGES):
                if name is None:
                    continue
                cycles = counters[i] / calls
                row[name + "_cycles"] = round(cycles, 1)
                if hz:
                    row[name + "_ns"] = round(cycles / hz * 1e9, 1)
            out["settings"].setdefault(setting, []).append(row)
        control(b"resume")
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
