#!/usr/bin/env bash
# bench/operators_overhead.sh - what the sitecustomize's operator sampler
# costs a launch-bound loop (docs/python-provenance.md, "Operators"):
# bench/operators_overhead.py bare, and under `kaudit run` with
# KAUDIT_PYTHON_OPERATORS=off, sample (the default) and all, the four
# interleaved, OO_ROUNDS rounds (3).  Ratios of medians against "off" (kaudit
# without operator ranges).  Output: $OUT/operators-overhead.txt.
#   bash bench/operators_overhead.sh     (on the GPU machine, carrying .gpu-carry)
set -u
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
OUTDIR=${OUT:-$ROOT/bench-out}
mkdir -p "$OUTDIR"
K=${KAUDIT:-$ROOT/.gpu-carry/kaudit/bin/kaudit}
PY=${PYTHON:-python3}
ROUNDS=${OO_ROUNDS:-3}
CALLS=${OO_CALLS:-3000}
W=$(mktemp -d /tmp/kaudit-oo.XXXXXX)
LOG=$OUTDIR/operators-overhead.txt
: >"$LOG"
for r in $(seq "$ROUNDS"); do
    for mode in bare off sample all; do
        if [ "$mode" = bare ]; then
            v=$("$PY" "$ROOT/bench/operators_overhead.py" "$CALLS" 2>&1 | sed -n 's/^us_per_call //p')
        else
            rm -rf "$W/s"
            v=$(KAUDIT_PYTHON_OPERATORS=$mode "$K" run -d "$W/s" -- "$PY" "$ROOT/bench/operators_overhead.py" "$CALLS" \
                2>&1 | sed -n 's/^us_per_call //p')
            ops=$("$K" dump --json "$W/s" 2>/dev/null | grep -o '"operators [^"]*"' | head -1)
            echo "# round $r $mode: $ops" >>"$LOG"
        fi
        echo "ROUND $r $mode ${v:-none}" | tee -a "$LOG"
    done
done
"$PY" - "$LOG" <<'PYEOF' | tee -a "$LOG"
import statistics, sys
vals = {}
for line in open(sys.argv[1]):
    p = line.split()
    if len(p) == 4 and p[0] == "ROUND" and p[3] != "none":
        vals.setdefault(p[2], []).append(float(p[3]))
med = {m: statistics.median(v) for m, v in vals.items()}
for m in ("bare", "off", "sample", "all"):
    if m in med:
        print("MEDIAN %s %.3f us/call%s" % (m, med[m], " (%.3fx off)" % (med[m] / med["off"]) if "off" in med else ""))
PYEOF
