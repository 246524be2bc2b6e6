#!/usr/bin/env python3
"""overhead_loops.py - the two loops whose wall time bench/overhead.sh compares.

  launch  launch-bound: x[64,512] -> Linear(512,512) -> relu -> Linear(512,512),
          many iterations; a few microseconds of GPU work per launch, so the
          time is the host's launch path (where a tracer adds its cost)
  gpu     GPU-bound: bf16 matmuls of 8192^3 (about 1.1 TFLOP each), enough
          iterations for one to two seconds

Each loop is warmed up first, then timed on the host clock from a
synchronized start to a torch.cuda.synchronize() after the last iteration.

  overhead_loops.py [--mode bare|profiler] [--loop launch|gpu|both]
                    [--launch-segments K] [--json]

--mode profiler runs each loop (warm-up and timed part) inside
torch.profiler with CPU and CUDA activities; the profiler's own processing at
exit is outside the timed part.  Under `kaudit run` use --mode bare: the
tracing is outside the script.

Output (stdout): with --loop launch or gpu, one number (seconds of the timed
part); with --loop both (the default) or --json, one JSON line with the
numbers and the iteration counts.  Nothing else goes to stdout.

--launch-segments K times the launch loop in K equal parts (each from a
synchronized start to a synchronize) and reports the median part times K, so
one part hit by a preemption or a tracer's buffer flush does not move it.

--launch-split K (after the launch loop) separates the host's cost from the
GPU's, K times: a GPU sleep kernel first, then --launch-split-iters iterations
issued while the GPU still sleeps.  The host time of issuing them is the
launch path alone (no waiting on the GPU); the GPU time from the sleep's end
to the last iteration (CUDA events) is the GPU's alone, its queue full.  The
JSON line gets the medians per iteration, launch_issue_us and
launch_drain_us, and launch_split_valid: the parts whose issuing ended
before the sleep did (only those count).  A tracer that adds GPU work per
kernel shows in the drain; one that slows the launch path, in the issue.

  overhead_loops.py --summarize RUNS.jsonl --out BENCH.json [--meta META.json]

reads the lines overhead.sh collected and prints the table (no torch needed).
"""

import argparse
import json
import os
import statistics
import sys
import time


def cpu_reference_us():
    """Microseconds of a fixed pure-Python workload: how fast this process's
    thread runs at all, to tell a slow host plateau from a tracer's cost."""
    t0 = time.perf_counter()
    total = 0
    for i in range(20000):
        total += i * i % 7
    return (time.perf_counter() - t0) * 1e6


def current_cpu():
    """The CPU the calling thread last ran on (/proc, field 39), or -1."""
    try:
        with open("/proc/thread-self/stat") as f:
            return int(f.read().rsplit(")", 1)[1].split()[36])
    except (OSError, ValueError, IndexError):
        return -1


def launch_model(torch):
    """The launch-bound loop's two Linear layers and its input, seeded."""
    import torch.nn as nn
    torch.manual_seed(0)
    return nn.Linear(512, 512).cuda(), nn.Linear(512, 512).cuda(), torch.randn(64, 512, device="cuda")


def launch_loop(torch, iters, warmup, profiler, segments=1, probes=None):
    """Seconds for ITERS iterations.  With SEGMENTS > 1 the iterations run in
    that many equal parts, each timed from a synchronized start to a
    synchronize, and the result is the median part's time times SEGMENTS:
    a part that a preemption or a tracer's buffer flush hit does not move it.
    Returns (seconds, [seconds of each part])."""
    lin1, lin2, x = launch_model(torch)
    per_part = max(1, iters // segments)
    parts = []
    with torch.inference_mode(), profiler():
        for _ in range(warmup):
            y = lin2(torch.relu(lin1(x)))
        torch.cuda.synchronize()
        for _ in range(segments):
            if probes is not None:
                probes["cpu_ref_us"].append(cpu_reference_us())
            t0 = time.perf_counter()
            for _ in range(per_part):
                y = lin2(torch.relu(lin1(x)))
            torch.cuda.synchronize()
            parts.append(time.perf_counter() - t0)
            if probes is not None:
                probes["cpus"].append(current_cpu())
    if not torch.isfinite(y).all():
        raise RuntimeError("launch loop produced non-finite values")
    if segments == 1:
        return parts[0], parts
    return statistics.median(parts) * iters / per_part, parts


def launch_split(torch, parts, iters_per_part, sleep_cycles):
    """Host issue time and GPU drain time per iteration of the launch loop,
    medians over the valid parts (see --launch-split)."""
    lin1, lin2, x = launch_model(torch)
    issue, drain, valid = [], [], 0
    with torch.inference_mode():
        for _ in range(50):
            y = lin2(torch.relu(lin1(x)))
        torch.cuda.synchronize()
        for _ in range(parts):
            before_sleep = torch.cuda.Event(enable_timing=True)
            after_sleep = torch.cuda.Event(enable_timing=True)
            done = torch.cuda.Event(enable_timing=True)
            before_sleep.record()
            torch.cuda._sleep(sleep_cycles)
            after_sleep.record()
            t0 = time.perf_counter()
            for _ in range(iters_per_part):
                y = lin2(torch.relu(lin1(x)))
            issued_s = time.perf_counter() - t0
            done.record()
            torch.cuda.synchronize()
            sleep_ms = before_sleep.elapsed_time(after_sleep)
            if issued_s * 1e3 < sleep_ms:
                valid += 1
                issue.append(issued_s * 1e6 / iters_per_part)
                drain.append(after_sleep.elapsed_time(done) * 1e3 / iters_per_part)
    if not torch.isfinite(y).all():
        raise RuntimeError("launch split produced non-finite values")
    result = {"launch_split_valid": valid, "launch_split_parts": parts,
              "launch_split_iters": iters_per_part}
    if valid:
        result["launch_issue_us"] = statistics.median(issue)
        result["launch_drain_us"] = statistics.median(drain)
    return result


def gpu_loop(torch, size, iters, warmup, profiler):
    torch.manual_seed(0)
    # Random data, not zeros: a matmul on zeros can run faster than on real data.
    a = torch.randn(size, size, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(size, size, device="cuda", dtype=torch.bfloat16)
    c = torch.empty(size, size, device="cuda", dtype=torch.bfloat16)
    with torch.inference_mode(), profiler():
        for _ in range(warmup):
            torch.matmul(a, b, out=c)
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for _ in range(iters):
            torch.matmul(a, b, out=c)
        torch.cuda.synchronize()
        elapsed = time.perf_counter() - t0
    if not torch.isfinite(c[:64, :64].float()).all():
        raise RuntimeError("gpu loop produced non-finite values")
    return elapsed


def run(args):
    import contextlib

    import torch
    if not torch.cuda.is_available():
        print("torch.cuda is not available", file=sys.stderr)
        return 2

    if args.mode == "profiler":
        from torch.profiler import ProfilerActivity, profile

        def profiler():
            return profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA])
    else:
        profiler = contextlib.nullcontext

    torch.empty(1, device="cuda")        # CUDA context outside every timed part
    result = {"mode": args.mode}
    # BENCH_LOOP_CONTROL=SETTING: under `kaudit run` with KAUDIT_BENCH_CONTROL=1,
    # hand SETTING to the preload's benchmark control once the context exists
    # (e.g. kinds=...: activity kinds switched on after start, not before).
    control = os.environ.get("BENCH_LOOP_CONTROL")
    if control:
        import ctypes
        fn = getattr(ctypes.CDLL(None), "kaudit_bench_control", None)
        if fn is None:
            print("BENCH_LOOP_CONTROL set, but no kaudit_bench_control", file=sys.stderr)
            return 2
        fn.argtypes = [ctypes.c_char_p]
        result["bench_control"] = control
        result["bench_control_rc"] = fn(control.encode())
    probes = {"cpu_ref_us": [], "cpus": []}
    if args.loop in ("launch", "both"):
        result["launch_s"], parts = launch_loop(torch, args.launch_iters, args.launch_warmup,
                                                profiler, args.launch_segments, probes)
        if probes["cpu_ref_us"]:
            result["cpu_ref_us"] = statistics.median(probes["cpu_ref_us"])
            result["cpus"] = sorted(set(probes["cpus"]))
        result["launch_iters"] = args.launch_iters
        if args.launch_segments > 1:
            result["launch_segments_s"] = [round(p, 6) for p in parts]
    if args.loop in ("launch", "both") and args.launch_split > 0:
        result.update(launch_split(torch, args.launch_split, args.launch_split_iters,
                                   args.launch_split_sleep_cycles))
    if args.loop in ("gpu", "both"):
        result["gpu_s"] = gpu_loop(torch, args.gpu_size, args.gpu_iters, args.gpu_warmup, profiler)
        result["gpu_iters"] = args.gpu_iters
        result["gpu_size"] = args.gpu_size
        result["gpu_tflops"] = 2.0 * args.gpu_size ** 3 * args.gpu_iters / result["gpu_s"] / 1e12
    if args.json:
        print(json.dumps(result))
    elif args.loop == "launch":
        print(f"{result['launch_s']:.6f}")
    elif args.loop == "gpu":
        print(f"{result['gpu_s']:.6f}")
    else:
        print(json.dumps(result))
    return 0


# ---------------------------------------------------------------------------
# Summary (run by overhead.sh after the rounds)


def median_ratio(rows, mode, key):
    """Median over rounds of mode's time / bare's time in the same round."""
    by_round = {}
    for r in rows:
        if key in r:
            by_round.setdefault(r["round"], {})[r["mode"]] = r[key]
    ratios = [d[mode] / d["bare"] for d in by_round.values()
              if mode in d and "bare" in d and d["bare"] > 0]
    return ratios


def speed_adjusted(ok_rows, all_modes, out):
    """Every process, adjusted for its host speed: the launch loop's us/iter
    moves with the process's pure-Python reference time (cpu_ref_us) about
    linearly, with one slope for every mode (measured: slow-plateau
    processes are slower at both).  The slope is fitted within modes
    (pooled least squares), each process's time is moved along it to the
    median reference time of all processes, and the medians are compared.
    Uses all processes, where the matched rows drop the slow ones."""
    per_mode = {}
    for mode in all_modes:
        pts = [(r["cpu_ref_us"], r["launch_s"] / r["launch_iters"] * 1e6) for r in ok_rows
               if r["mode"] == mode and r.get("launch_s") and r.get("cpu_ref_us")]
        if len(pts) >= 2:
            per_mode[mode] = pts
    if "bare" not in per_mode:
        return []
    sxx = sxy = 0.0
    for pts in per_mode.values():
        mx = statistics.mean(x for x, _ in pts)
        my = statistics.mean(y for _, y in pts)
        sxx += sum((x - mx) ** 2 for x, _ in pts)
        sxy += sum((x - mx) * (y - my) for x, y in pts)
    if sxx <= 0:
        return []
    slope = sxy / sxx
    ref = statistics.median(x for pts in per_mode.values() for x, _ in pts)
    adjusted = {m: statistics.median(y - slope * (x - ref) for x, y in pts) for m, pts in per_mode.items()}
    base = adjusted["bare"]
    out["speed_adjusted"] = {"slope_us_per_ref_us": slope, "reference_cpu_ref_us": ref,
                             "modes": {m: {"processes": len(per_mode[m]), "median_us_per_iter": v,
                                           "ratio": v / base} for m, v in adjusted.items()}}
    return [f"adjusted {m:<15} {len(per_mode[m]):>4} {'':>10} {v:>10.2f} {v / base:>34.3f}"
            f"  (all processes, at cpu-ref {ref:.0f} us)" for m, v in adjusted.items()]


def summarize(args):
    rows = []
    with open(args.summarize) as f:
        for line in f:
            line = line.strip()
            if line:
                rows.append(json.loads(line))
    meta = {}
    if args.meta:
        with open(args.meta) as f:
            meta = json.load(f)
    ok_rows = [r for r in rows if r.get("ok")]
    for r in ok_rows:
        # The launch loop in units of the process's own CPU speed: a host
        # plateau slows both alike, a tracer only the loop.
        if r.get("launch_s") and r.get("cpu_ref_us"):
            r["launch_per_ref"] = r["launch_s"] / r["cpu_ref_us"] * 1e6
    targets = {"launch": 1.10, "gpu": 1.02}
    out = {"runs": rows, "meta": meta, "loops": {}}
    lines = []
    hdr = (f"{'loop':<7} {'mode':<16} {'runs':>4} {'median s':>10} {'us/iter':>10} "
           f"{'ratio vs bare (median, min..max)':>34}  target")
    all_modes = []
    for r in ok_rows:
        if r["mode"] not in all_modes:
            all_modes.append(r["mode"])
    all_modes.sort(key=lambda m: (m != "bare", m != "kaudit", m))
    procs = {}
    for mode in all_modes:
        w = [r["process_wall_s"] for r in ok_rows if r["mode"] == mode and "process_wall_s" in r]
        if w:
            procs[mode] = statistics.median(w)
    out["median_process_wall_s"] = procs
    lines.append(hdr)
    for loop in ("launch", "gpu"):
        key = f"{loop}_s"
        out["loops"][loop] = {}
        for mode in all_modes:
            times = [r[key] for r in ok_rows if r["mode"] == mode and key in r]
            if not times:
                continue
            iters = next(r[f"{loop}_iters"] for r in ok_rows if r["mode"] == mode and key in r)
            med = statistics.median(times)
            entry = {"runs": len(times), "median_s": med, "times_s": times,
                     "median_us_per_iter": med / iters * 1e6, "iters": iters}
            ratio_txt, target_txt = "", ""
            if mode != "bare":
                ratios = median_ratio(ok_rows, mode, key)
                if ratios:
                    mr = statistics.median(ratios)
                    entry.update(median_ratio=mr, ratios=ratios)
                    ratio_txt = f"{mr:.3f} ({min(ratios):.3f}..{max(ratios):.3f})"
                    if mode == "kaudit":
                        entry["target"] = targets[loop]
                        entry["meets_target"] = mr <= targets[loop]
                        target_txt = (f"<= {targets[loop]:.2f}: "
                                      f"{'met' if mr <= targets[loop] else 'NOT met'}")
            if loop == "gpu":
                tf = [r["gpu_tflops"] for r in ok_rows if r["mode"] == mode and "gpu_tflops" in r]
                if tf:
                    entry["median_tflops"] = statistics.median(tf)
            out["loops"][loop][mode] = entry
            lines.append(f"{loop:<7} {mode:<16} {len(times):>4} {med:>10.4f} "
                         f"{entry['median_us_per_iter']:>10.2f} {ratio_txt:>34}  {target_txt}")
    # The split parts (--launch-split): host issue and GPU drain, per iteration;
    # and the pure-Python reference (the process's plain CPU speed).
    for key, label in (("launch_issue_us", "issue"), ("launch_drain_us", "drain"),
                       ("cpu_ref_us", "cpu-ref"), ("launch_per_ref", "l/ref")):
        for mode in all_modes:
            values = [r[key] for r in ok_rows if r["mode"] == mode and key in r]
            if not values:
                continue
            med = statistics.median(values)
            entry = {"runs": len(values), "median_us_per_iter": med, "values_us": values}
            ratio_txt = ""
            if mode != "bare":
                ratios = median_ratio(ok_rows, mode, key)
                if ratios:
                    entry.update(median_ratio=statistics.median(ratios), ratios=ratios)
                    ratio_txt = (f"{entry['median_ratio']:.3f} "
                                 f"({min(ratios):.3f}..{max(ratios):.3f})")
            out["loops"].setdefault(label, {})[mode] = entry
            lines.append(f"{label:<7} {mode:<16} {len(values):>4} {'':>10} {med:>10.2f} "
                         f"{ratio_txt:>34}")
    # Plateau-matched: only processes whose pure-Python reference ran within
    # 25% of the fastest one, so a process that landed on a slow host
    # plateau (1.5-2x slower at plain Python, measured) does not count.
    refs = [r["cpu_ref_us"] for r in ok_rows if r.get("cpu_ref_us")]
    if refs:
        fast = min(refs) * 1.25
        matched = {}
        for mode in all_modes:
            v = [r["launch_s"] / r["launch_iters"] * 1e6 for r in ok_rows
                 if r["mode"] == mode and r.get("launch_s") and r.get("cpu_ref_us", fast + 1) <= fast]
            if v:
                matched[mode] = v
        out["plateau_matched"] = {m: {"us_per_iter": v, "median_us_per_iter": statistics.median(v)}
                                  for m, v in matched.items()}
        if "bare" in matched:
            base = statistics.median(matched["bare"])
            for mode, v in matched.items():
                ratio = statistics.median(v) / base
                out["plateau_matched"][mode]["ratio"] = ratio
                lines.append(f"matched {mode:<16} {len(v):>4} {'':>10} {statistics.median(v):>10.2f} "
                             f"{ratio:>34.3f}  (processes on the fast plateau)")
        lines.extend(speed_adjusted(ok_rows, all_modes, out))
    if procs:
        lines.append("whole process (python start to exit, both loops), median s: "
                     + ", ".join(f"{m} {v:.1f}" for m, v in procs.items()))
    failed = [r for r in rows if not r.get("ok")]
    out["failed_runs"] = len(failed)
    if "trace" in meta:
        t = meta["trace"]
        if t.get("kernels"):
            t["bytes_per_kernel"] = t["session_bytes"] / t["kernels"]
        m = meta.get("marginal")
        if m and m.get("kernels_delta"):
            m["bytes_per_kernel"] = m["bytes_delta"] / m["kernels_delta"]
    with open(args.out, "w") as f:
        json.dump(out, f, indent=1)
    print("\n".join(lines))
    if failed:
        print(f"{len(failed)} run(s) failed: "
              + "; ".join(f"round {r['round']} {r['mode']}: {r.get('error', '?')}" for r in failed[:5]))
    t = meta.get("trace") or {}
    if t.get("kernels"):
        print(f"trace size: {t['session_bytes']} bytes for {t['kernels']} kernels recorded "
              f"= {t['bytes_per_kernel']:.0f} bytes per kernel launch (whole session, one "
              f"launch+gpu run)")
    m = meta.get("marginal") or {}
    if m.get("kernels_delta"):
        print(f"marginal: {m['bytes_delta']} more bytes for {m['kernels_delta']} more kernels "
              f"= {m['bytes_per_kernel']:.0f} bytes per extra kernel launch")
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--mode", choices=("bare", "profiler"), default="bare")
    ap.add_argument("--loop", choices=("launch", "gpu", "both"), default="both")
    ap.add_argument("--launch-iters", type=int, default=5000)
    ap.add_argument("--launch-warmup", type=int, default=300)
    ap.add_argument("--launch-segments", type=int, default=1,
                    help="time the launch loop in this many parts and report the median part")
    ap.add_argument("--launch-split", type=int, default=0, metavar="K",
                    help="K parts that time the host's issuing and the GPU's draining apart")
    ap.add_argument("--launch-split-iters", type=int, default=100)
    ap.add_argument("--launch-split-sleep-cycles", type=int, default=100_000_000,
                    help="length of the GPU sleep in front of each split part (cycles)")
    ap.add_argument("--json", action="store_true",
                    help="print the JSON line even for a single loop")
    ap.add_argument("--gpu-size", type=int, default=8192)
    ap.add_argument("--gpu-iters", type=int, default=800)
    ap.add_argument("--gpu-warmup", type=int, default=20)
    ap.add_argument("--summarize", metavar="RUNS_JSONL")
    ap.add_argument("--out", metavar="BENCH_JSON")
    ap.add_argument("--meta", metavar="META_JSON")
    args = ap.parse_args()
    if args.summarize:
        if not args.out:
            ap.error("--summarize needs --out")
        return summarize(args)
    return run(args)


if __name__ == "__main__":
    sys.exit(main())
