#!/usr/bin/env bash
# bench/launch_split.sh - where kaudit's cost on the launch-bound loop lands:
# on the host's launch path, or on the GPU.
#
#   bash bench/launch_split.sh        (repository root, GPU machine; about 6 minutes)
#
# 1. bench/overhead.sh with --launch-split: besides the usual launch loop, every
#    process times its iterations' issuing on the host (while a GPU sleep
#    kernel holds the GPU, so the host never waits on it) and the GPU's
#    draining of them (CUDA events), per iteration.  Modes: bare, kaudit, and
#    kaudit with activity kinds left out or CUPTI settings changed
#    (SPLIT_VARIANTS, BENCH_VARIANTS syntax; SPLIT_ARGS replaces the loop's
#    arguments, SPLIT_ROUNDS and SPLIT_BUDGET_S the rounds).  Every process
#    also times a pure-Python reference before each part (cpu-ref), and the
#    loop in its units (l/ref): a slow host plateau moves both, a tracer only
#    the loop.
# 2. One kaudit session of the same loop: from its kernel records, the median
#    GPU duration of each kernel and the median gap between consecutive
#    kernels while the queue drains (what CUPTI's own timestamps say the GPU
#    spent, and between which kernels).  SPLIT_SESSION=0 leaves it out.
#
# Output: the tables on stdout; $OUT/launch-split.tar.gz holds bench.json,
# the console logs and the kernel statistics.
set -u
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
OUTDIR=${OUT:-$ROOT/bench-out}
mkdir -p "$OUTDIR"
W=$(mktemp -d /tmp/kaudit-split.XXXXXX)
PY=$(command -v "${PYTHON:-python3}")
cd "$ROOT" || exit 99
SPLIT_ARGS=${SPLIT_ARGS:-"--loop launch --launch-iters 6000 --launch-segments 12 --launch-split 12 --launch-split-iters 100 --json"}
VARIANTS=${SPLIT_VARIANTS-"none:KAUDIT_CUPTI_KINDS=device kernel:KAUDIT_CUPTI_KINDS=device,kernel pinned:KAUDIT_CUPTI_PINNED=1"}

mkdir -p "$W/bench"
OUT=$W/bench BENCH_MODES="bare kaudit" BENCH_ROUNDS=${SPLIT_ROUNDS:-6} BENCH_BUDGET_S=${SPLIT_BUDGET_S:-240} \
    BENCH_MARGINAL=0 BENCH_ARGS="$SPLIT_ARGS" BENCH_VARIANTS="$VARIANTS" \
    bash bench/overhead.sh >"$W/bench/console.txt" 2>&1
echo "bench done at $SECONDS s"

KAUDIT=$ROOT/build-gpu/bin/kaudit
[ "${SPLIT_SESSION:-1}" = 1 ] || { tar -C "$W" -czf "$OUTDIR/launch-split.tar.gz" .; tail -40 "$W/bench/console.txt"; exit 0; }
rm -rf "$W/session"
"$KAUDIT" run -d "$W/session" -- "$PY" bench/overhead_loops.py $SPLIT_ARGS >"$W/session-stdout.txt" 2>"$W/session-stderr.txt"
"$KAUDIT" dump --kernels "$W/session" >"$W/kernels.tsv" 2>>"$W/session-stderr.txt"
"$PY" - "$W/kernels.tsv" >"$W/kernel-stats.txt" <<'EOF'
import statistics, sys
from collections import defaultdict
rows = []
for line in open(sys.argv[1]):
    f = line.rstrip("\n").split("\t")
    if len(f) < 7 or not f[4].isdigit():
        continue
    rows.append((int(f[4]), int(f[5]), f[6]))
rows.sort()
# The drains: the kernels that follow each sleep kernel, until the next one.
durations, gaps = defaultdict(list), defaultdict(list)
in_drain, previous = False, None
for start, end, name in rows:
    if "spin" in name or "sleep" in name.lower():
        in_drain, previous = True, (start, end, name)
        continue
    if in_drain and previous is not None:
        durations[name].append(end - start)
        if "spin" not in previous[2]:
            gaps[previous[2][:40] + " -> " + name[:40]].append(start - previous[1])
    previous = (start, end, name)
print(f"{len(rows)} kernels in the session")
print("median GPU duration while draining (ns), per kernel name:")
for name, d in sorted(durations.items(), key=lambda kv: -len(kv[1]))[:8]:
    print(f"  {statistics.median(d):>8.0f}  n={len(d):<6} {name[:100]}")
print("median gap between consecutive kernels while draining (ns):")
for pair, g in sorted(gaps.items(), key=lambda kv: -len(kv[1]))[:8]:
    print(f"  {statistics.median(g):>8.0f}  n={len(g):<6} {pair}")
EOF
tail -1 "$W/session-stdout.txt" >>"$W/kernel-stats.txt"
rm -rf "$W/session"
tar -C "$W" -czf "$OUTDIR/launch-split.tar.gz" .
echo "===== bench"
tail -24 "$W/bench/console.txt"
echo "===== kernel statistics (one kaudit session)"
cat "$W/kernel-stats.txt"
echo "done at $SECONDS s"
