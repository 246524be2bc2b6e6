#!/usr/bin/env bash
# bench/timing_tracing.sh - does recording bias the speedups kaudit audit
# measures?  (issue 17 item 4; docs/timing.md, "Timing under tracing")
#
#   bash bench/timing_tracing.sh     (on the GPU machine, carrying .gpu-carry)
#
# Three known pairs, each timed with the audit's own protocol
# (bench/timing_tracing.py), bare and under `kaudit run`, the two modes
# alternating, TT_ROUNDS rounds (5): the memory-bound two-pass scale against
# its fused Triton copy (about 2x), the same reference against itself (1x),
# and the 4096-float version of the first pair (launch-bound: host costs
# show).  Each run gives the speedup and its bootstrap interval
# (bench/timing_ratio.c, the audit's statistics); the summary compares the
# median traced speedup with the median bare one.
# Output: $OUT/timing-tracing.txt.
set -u
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
OUTDIR=${OUT:-$ROOT/bench-out}
mkdir -p "$OUTDIR"
K=${KAUDIT:-$ROOT/.gpu-carry/kaudit/bin/kaudit}
PY=${PYTHON:-python3}
ROUNDS=${TT_ROUNDS:-5}
TD=$ROOT/tests/gpu/timing
W=$(mktemp -d /tmp/kaudit-tt.XXXXXX)
LOG=$OUTDIR/timing-tracing.txt
: >"$LOG"
sed 's/^N = .*/N = 4096/' "$TD/two_pass_scale.py" >"$W/tiny_scale.py"
gcc -O2 -I"$ROOT/timing" -o "$W/ratio" "$ROOT/bench/timing_ratio.c" "$ROOT/timing/timing_stats.c" -lm || exit 1
pairs="fused:$TD/two_pass_scale.py:$TD/fused_scale_triton.py self:$TD/two_pass_scale.py:$TD/two_pass_scale.py tiny:$W/tiny_scale.py:$TD/fused_scale_triton.py"
one() { # mode pair ref cand
    local out
    if [ "$1" = bare ]; then
        out=$("$PY" "$ROOT/bench/timing_tracing.py" "$3" "$4" 2>"$W/err")
    else
        out=$("$K" run -d "$W/s-$2-$r" -- "$PY" "$ROOT/bench/timing_tracing.py" "$3" "$4" 2>"$W/err")
    fi
    local stats
    stats=$(echo "$out" | "$W/ratio") || { echo "$1 $2 error: $(tail -2 "$W/err")" | tee -a "$LOG"; return; }
    echo "$1 $2 $stats" | tee -a "$LOG"
}
for ((r = 0; r < ROUNDS; r++)); do
    for p in $pairs; do
        IFS=: read -r name ref cand <<<"$p"
        if ((r % 2)); then one traced "$name" "$ref" "$cand"; one bare "$name" "$ref" "$cand"
        else one bare "$name" "$ref" "$cand"; one traced "$name" "$ref" "$cand"; fi
    done
done
echo "summary (median over rounds of the speedup; mode pair ratio L U cv_a cv_b per run above):" | tee -a "$LOG"
for p in $pairs; do
    name=${p%%:*}
    b=$(awk -v n="$name" '$1 == "bare" && $2 == n { print $3 }' "$LOG" | sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }')
    t=$(awk -v n="$name" '$1 == "traced" && $2 == n { print $3 }' "$LOG" | sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }')
    awk -v n="$name" -v b="$b" -v t="$t" 'BEGIN { printf "%s: bare %.4f traced %.4f, traced/bare %.4f\n", n, b, t, t / b }' | tee -a "$LOG"
done
