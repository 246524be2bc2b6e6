#!/usr/bin/env bash
# tests/gpu/timing_h200.sh - the timing controls of issue 17 on the H200, in
# one device call, with the full kaudit carried in .gpu-carry/kaudit
# (tests/gpu/carry_kaudit.sh) and KernelBench in .gpu-carry/KernelBench:
#   stable    two_pass_scale (512 MiB, two passes) against the fused Triton
#             candidate: A/A expected to pass, speedup about 2x, its interval
#             excluding 1;
#   tiny      the same on 4096 floats: the sub-0.1 ms task;
#   stream    KernelBench's own non_default_stream_kernel on its level-1
#             matmul: the stream differential;
#   self      the stable task against the reference's own code as the
#             candidate: a speedup whose interval should hold 1.
# Results: $OUT/timing-log.txt (one line per control) and the records in
# $OUT/timing-records.tar.gz.  docs/timing.md has the table.
set -u
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
OUTDIR=${OUT:-$ROOT/gpu-out}
mkdir -p "$OUTDIR"
K=${KAUDIT:-$ROOT/.gpu-carry/kaudit/bin/kaudit}
export KAUDIT_PYTHON=${KAUDIT_PYTHON:-python3}
KB=$ROOT/.gpu-carry/KernelBench
TD=$ROOT/tests/gpu/timing
W=$(mktemp -d /tmp/kaudit-timing.XXXXXX)
LOG=$OUTDIR/timing-log.txt
: >"$LOG"
say() { echo "$*" | tee -a "$LOG"; }

# the reference's own code as a candidate; the task on 4096 floats
sed 's/^class Model(/class ModelNew(/' "$TD/two_pass_scale.py" >"$W/self_scale.py"
sed 's/^N = .*/N = 4096/' "$TD/two_pass_scale.py" >"$W/tiny_scale.py"

controls="
stable $TD/two_pass_scale.py $TD/fused_scale_triton.py -
tiny $W/tiny_scale.py $TD/fused_scale_triton.py -
stream $KB/KernelBench/level1/1_Square_matrix_multiplication_.py $KB/src/kernelbench/unit_tests/test_kernels/non_default_stream_kernel.py $ROOT/contracts/real/kb-l1-1-matmul.json
self $TD/two_pass_scale.py $W/self_scale.py -
"
mkdir -p "$W/records"
echo "$controls" | while read -r name ref cand contract; do
    [ -n "$name" ] || continue
    set -- --reference "$ref" --candidate "$cand" --device cuda --timing on --weak ACCEPT --quiet \
        -d "$W/$name" --json "$W/records/$name.json"
    [ "$contract" != - ] && set -- "$@" --contract "$contract"
    t0=$SECONDS
    "$K" audit "$@" >>"$W/audit.log" 2>&1
    rc=$?
    if [ -f "$W/records/$name.json" ]; then
        summary=$("$KAUDIT_PYTHON" - "$W/records/$name.json" <<'PYEOF'
import json, sys
r = json.load(open(sys.argv[1]))
t, a = r["timing"], r["axes"]
def fmt(c, keys):
    if c is None:
        return "none"
    if "error" in c:
        return "error: " + c["error"]
    return " ".join("%s=%s" % (k, ("%.4g" % c[k]) if isinstance(c[k], float) else c[k]) for k in keys if k in c) + \
        " interval=[%.4g, %.4g]" % tuple(c["interval"])
print("axes %s/%s/%s cert %s |" % (a["semantic"]["verdict"], a["implementation"]["verdict"],
      a["measurement"]["verdict"], r["certificate"]),
      "AA", fmt(t["aa"], ["median_a_ms", "cv_a", "cv_b", "order_effect", "passed", "why_not"]), "|",
      "SPEEDUP", fmt(t["speedup"], ["median_a_ms", "median_b_ms", "ratio", "reportable", "why_not"]), "|",
      "STREAM", fmt(t["stream"], ["median_a_ms", "median_b_ms", "ratio", "criterion", "attributable", "withholds"]),
      "| cert_reason:", r["certificate_reason"])
PYEOF
)
        say "CONTROL $name rc=$rc $((SECONDS - t0))s $summary"
    else
        say "CONTROL $name rc=$rc no record"; tail -5 "$W/audit.log" | tee -a "$LOG"
    fi
    tar -C "$W" -czf "$OUTDIR/timing-records.tar.gz" records
done
say "timing done"
