#!/usr/bin/env bash
# bench/chunk_cuts_h200.sh - one device call for the ninth session's cuts
# (issue 17, item 5; docs/overhead.md): CUPTI's records converted in chunks
# outside the writer lock, and vendor records staged per thread (optional).
#
#   1. in-process A/B on the launch-bound loop against the CUPTI floor with
#      callbacks (bench/kaudit_ab.sh, AB_REFERENCE=floor; "resume" is
#      everything kaudit records): the new build's processes, two variants of
#      it (KAUDIT_CUPTI_CHUNK_KB=16: records converted in 16 KiB chunks;
#      KAUDIT_VENDOR_STAGING=1), and the build before the cuts, processes of
#      the builds alternating.  (The figures of docs/overhead.md, "Ninth
#      session", were taken when 16 KiB was the default and the variant was
#      KAUDIT_CUPTI_CHUNK_KB=0.)
#   2. the GPU-bound loop, bare against kaudit (bench/overhead.sh; target
#      <= 1.01x).
#
#   CHUNK_NEW=.gpu-carry/kaudit CHUNK_OLD=.gpu-carry/kaudit-old bash bench/chunk_cuts_h200.sh
#
# Both builds from tests/gpu/carry_kaudit.sh.  CHUNK_ROUNDS (4: processes per
# build), CHUNK_REPEATS (30), CHUNK_GPU_BUDGET_S (100).  Output: the console
# summaries; $OUT/kaudit-ab.jsonl and $OUT/gpu-bound/ (bench.json, bench-log.txt).
set -u
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
OUTDIR=${OUT:-$ROOT/bench-out}
mkdir -p "$OUTDIR"
cd "$ROOT" || exit 99
NEW=$(cd "${CHUNK_NEW:-.gpu-carry/kaudit}" && pwd)/bin/kaudit
OLD=$(cd "${CHUNK_OLD:-.gpu-carry/kaudit-old}" && pwd)/bin/kaudit
PY=${PYTHON:-/opt/torch/.venv/bin/python}
[ -x "$PY" ] || PY=python3
start=$SECONDS
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1
ab() { # NAME KAUDIT [VAR=VALUE]: one process of kaudit_ab.sh
    local name=$1 k=$2
    shift 2
    env "$@" OUT="$OUTDIR" AB_KAUDIT="$k" AB_NAME="$name" AB_PROCESSES=1 AB_SETTINGS="pause floor resume" \
        AB_REFERENCE=floor AB_REPEATS="${CHUNK_REPEATS:-30}" PYTHON="$PY" bash bench/kaudit_ab.sh
}
for ((round = 0; round < ${CHUNK_ROUNDS:-4}; round++)); do
    ab "new-r$round" "$NEW"
    ab "old-r$round" "$OLD"
    ab "chunked-r$round" "$NEW" KAUDIT_CUPTI_CHUNK_KB=16
    ab "staging-r$round" "$NEW" KAUDIT_VENDOR_STAGING=1
done
echo "A/B done at $((SECONDS - start)) s"
"$PY" - "$OUTDIR/kaudit-ab.jsonl" <<'PYEOF'
import json, statistics, sys
by = {}
for l in open(sys.argv[1]):
    d = json.loads(l)
    build = d["process"].split("-r")[0]
    by.setdefault(build, []).append(d["settings"]["resume"]["ratio_median"])
for b, v in by.items():
    print("%-10s resume/floor per process: %s; median %.3f" % (b, " ".join("%.3f" % x for x in v), statistics.median(v)))
PYEOF
mkdir -p "$OUTDIR/gpu-bound"
OUT=$OUTDIR/gpu-bound BENCH_KAUDIT=$NEW BENCH_MODES="bare kaudit" BENCH_ARGS="--loop gpu" BENCH_MARGINAL=0 \
    BENCH_BUDGET_S=${CHUNK_GPU_BUDGET_S:-100} PYTHON=$PY bash bench/overhead.sh 2>&1 | tail -15
echo "done at $((SECONDS - start)) s"
