#!/usr/bin/env python3
"""selftest_summarize.py - checks the readings bench/overhead.sh reports
(overhead_loops.py --summarize) on synthetic runs whose answer is known.

  python3 bench/selftest_summarize.py        (ctest: bench_summary_selftest)

The speed-adjusted rows must recover each mode's cost when the processes of
one mode landed on a slow host plateau more often than those of another (the
case they exist for), where the plain median does not.
"""
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import overhead_loops  # noqa: E402  (imports no torch at module level)

SLOPE = 0.03           # us of loop per us of pure-Python reference time
ITERS = 6000


def row(rnd, mode, intercept, ref_us):
    us = intercept + SLOPE * ref_us
    return {"round": rnd, "mode": mode, "ok": True, "rc": 0, "process_wall_s": 3.0,
            "launch_s": us * ITERS / 1e6, "launch_iters": ITERS, "cpu_ref_us": ref_us}


def runs():
    # bare: mostly on the fast plateau; kaudit: mostly on the slow one.
    fast = [1000, 1020, 1040, 1060, 1080, 1100, 1120]
    slow = [1900, 1950, 2000, 2050, 2100, 2150, 2200]
    bare_refs = fast[:6] + slow[:1]
    kaudit_refs = fast[:2] + slow[:5]
    rows = [row(i, "bare", 10.0, x) for i, x in enumerate(bare_refs)]
    rows += [row(i, "kaudit", 16.0, x) for i, x in enumerate(kaudit_refs)]
    rows += [row(0, "lonely", 12.0, 1500)]   # one process: too few to adjust
    return rows


def expect(cond, what, failures):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures.append(what)


def main():
    failures = []
    rows = runs()
    out = {}
    lines = overhead_loops.speed_adjusted(rows, ["bare", "kaudit", "lonely"], out)
    adj = out.get("speed_adjusted", {})
    modes = adj.get("modes", {})
    expect(abs(adj.get("slope_us_per_ref_us", 0) - SLOPE) < 1e-9,
           f"the fitted slope is the one the runs were made with ({adj.get('slope_us_per_ref_us')})", failures)
    ref = adj.get("reference_cpu_ref_us", 0)
    want = (16.0 + SLOPE * ref) / (10.0 + SLOPE * ref)
    got = modes.get("kaudit", {}).get("ratio", 0)
    expect(abs(got - want) < 1e-9, f"adjusted kaudit/bare ratio {got:.6f} == {want:.6f}", failures)
    raw = [r["launch_s"] for r in rows if r["mode"] == "kaudit"]
    raw_bare = [r["launch_s"] for r in rows if r["mode"] == "bare"]
    raw_ratio = sorted(raw)[len(raw) // 2] / sorted(raw_bare)[len(raw_bare) // 2]
    expect(abs(raw_ratio - want) > 0.2,
           f"the plain median ratio ({raw_ratio:.3f}) is far from it: the case needs the adjustment", failures)
    expect("lonely" not in modes, "a mode with one process is not adjusted", failures)
    expect(len(lines) == 2 and all(line.startswith("adjusted ") for line in lines),
           f"one 'adjusted' line per adjusted mode ({len(lines)})", failures)
    expect(overhead_loops.speed_adjusted([r for r in rows if r["mode"] != "bare"], ["kaudit"], {}) == [],
           "without bare processes nothing is adjusted", failures)

    # Through the command bench/overhead.sh runs: the rows reach bench.json.
    with tempfile.TemporaryDirectory() as tmp:
        runs_path, meta_path, out_path = (os.path.join(tmp, n) for n in ("runs.jsonl", "meta.json", "bench.json"))
        with open(runs_path, "w") as f:
            f.write("".join(json.dumps(r) + "\n" for r in rows))
        with open(meta_path, "w") as f:
            json.dump({"rounds": 7}, f)
        script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "overhead_loops.py")
        proc = subprocess.run([sys.executable, script, "--summarize", runs_path, "--meta", meta_path,
                               "--out", out_path], capture_output=True, text=True)
        expect(proc.returncode == 0, f"--summarize exits 0 ({proc.returncode}: {proc.stderr.strip()[-200:]})",
               failures)
        printed = [line for line in proc.stdout.splitlines() if line.startswith("adjusted kaudit")]
        expect(len(printed) == 1 and f"{want:.3f}" in printed[0],
               f"--summarize prints the adjusted kaudit row with {want:.3f}: {printed}", failures)
        saved = json.load(open(out_path)) if os.path.exists(out_path) else {}
        saved_ratio = saved.get("speed_adjusted", {}).get("modes", {}).get("kaudit", {}).get("ratio", 0)
        expect(abs(saved_ratio - want) < 1e-9, "bench.json holds the same ratio", failures)
    print(f"{len(failures)} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
