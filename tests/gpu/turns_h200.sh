#!/usr/bin/env bash
# tests/gpu/turns_h200.sh - does a batch's timing hold up when several audits
# share one GPU?  The same batch twice in one device call, `--jobs 4`: once
# with the timed phases taking no turns (KAUDIT_TIMING_LOCK_DIR=none), once
# with a timed phase having the device to itself (the default; docs/timing.md,
# "Concurrent audits").  The batch: the timing controls of timing_h200.sh that
# are long enough to time (two_pass_scale, 0.5 ms, against the fused Triton
# candidate, twice; against its own code), KernelBench's level-1 matmuls
# handing the work back to the reference (2.7 ms), and the 18 semantic
# controls of tests/audit as the other audits' load.  kaudit is the full build
# carried in .gpu-carry/kaudit (tests/gpu/carry_kaudit.sh), KernelBench at
# 423217d in .gpu-carry/KernelBench.  TURNS_BUDGET (240 s) bounds each batch;
# TURNS_DEVICE=cpu smoke-tests the script without a GPU.
# Results: $OUT/turns-log.txt (a line per timed pair and mode, the batch
# times), $OUT/turns-records.tar.gz.
set -u
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
. "$ROOT/tests/gpu/kernelbench_batch.sh"
OUTDIR=${OUT:-$ROOT/gpu-out}
mkdir -p "$OUTDIR"
K=${KAUDIT:-$ROOT/.gpu-carry/kaudit/bin/kaudit}
export KAUDIT_PYTHON=${KAUDIT_PYTHON:-python3}
KB=$ROOT/.gpu-carry/KernelBench/KernelBench/level1
TD=$ROOT/tests/gpu/timing
A=$ROOT/tests/audit
W=$(mktemp -d /tmp/kaudit-turns.XXXXXX)
LOG=$OUTDIR/turns-log.txt
: >"$LOG"
say() { echo "$*" | tee -a "$LOG"; }
sed 's/^class Model(/class ModelNew(/' "$TD/two_pass_scale.py" >"$W/self_scale.py"
T=$W/tasks.jsonl
line() { printf '{"id": "%s", "reference": "%s", "candidate": "%s"%s}\n' "$1" "$2" "$3" \
    "${4:+, \"contract\": \"$4\"}" >>"$T"; }
for ref in 1_Square_matrix_multiplication_ 13_Matmul_for_symmetric_matrices; do
    delegating_candidate "$KB/$ref.py" kb_ref "$W/kb_$ref.py"
done
line stable_a "$TD/two_pass_scale.py" "$TD/fused_scale_triton.py"
line kb_1 "$KB/1_Square_matrix_multiplication_.py" "$W/kb_1_Square_matrix_multiplication_.py"
line stable_b "$TD/two_pass_scale.py" "$TD/fused_scale_triton.py"
line self "$TD/two_pass_scale.py" "$W/self_scale.py"
line kb_13 "$KB/13_Matmul_for_symmetric_matrices.py" "$W/kb_13_Matmul_for_symmetric_matrices.py"
tail -n +2 "$A/controls.tsv" | while IFS='	' read -r name task cand rest; do
    case "$name" in probe_vendor_*|"") continue ;; esac
    line "ctl_$name" "$A/tasks/$task.py" "$A/candidates/$cand.py" "$A/contracts/$task.json"
done
say "kaudit: $("$K" version | head -1); $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1); $(wc -l <"$T") pairs"
export TRITON_CACHE_DIR=$W/triton-cache
for mode in none turns; do
    d=$W/$mode
    mkdir -p "$d"
    lockdir=none
    [ "$mode" = turns ] && lockdir=$W/locks
    t0=$SECONDS
    KAUDIT_TIMING_LOCK_DIR=$lockdir timeout "${TURNS_BUDGET:-240}" "$K" audit --batch "$T" -o "$d/ledger.jsonl" \
        --device "${TURNS_DEVICE:-cuda}" --timing on --jobs 4 --timeout 240 --quiet >>"$d/batch.log" 2>&1
    say "$mode: batch exit $? in $((SECONDS - t0)) s, $(wc -l <"$d/ledger.jsonl") pairs"
    "$KAUDIT_PYTHON" - "$d" "$mode" <<'PYEOF' | tee -a "$LOG"
import glob, json, os, sys
d, mode = sys.argv[1:3]
for rec in sorted(glob.glob(os.path.join(d, "ledger.jsonl.d", "*", "record.json"))):
    pid = rec.split(os.sep)[-2]
    r = json.load(open(rec))
    t = r.get("timing") or {}
    aa, sp = t.get("aa") or {}, t.get("speedup") or {}
    turns = " ".join("%s:%s/%.2fs" % (x["phase"][0], x["status"], x["waited_s"]) for x in t.get("turns") or [])
    share = ""
    for l in open(os.path.join(os.path.dirname(rec), "runner", "events.jsonl")):
        e = json.loads(l)
        if e.get("event") == "device_share":
            share = "share wait %.2fs" % e["waited_s"]
    if not pid.startswith("ctl_") or "-v" in sys.argv:
        print("%-6s %-10s A/A %-5s cv %.4f/%.4f ref %.3f ms | speedup %.3f [%.3f, %.3f] %s | %s %s" % (
            mode, pid, aa.get("passed"), aa.get("cv_a", float("nan")), aa.get("cv_b", float("nan")),
            aa.get("median_a_ms", float("nan")), sp.get("ratio", float("nan")),
            *(sp.get("interval") or [float("nan")] * 2), "reportable" if sp.get("reportable") else "withheld",
            turns, share))
ctl = [json.load(open(p)) for p in glob.glob(os.path.join(d, "ledger.jsonl.d", "ctl_*", "record.json"))]
print("%-6s controls: %d records, certificates %s" % (mode, len(ctl),
      {c: sum(1 for r in ctl if r.get("certificate") == c) for c in ("PASS", "FAIL", "INCONCL")}))
PYEOF
done
tar -C "$W" -czf "$OUTDIR/turns-records.tar.gz" --exclude='tensors' --exclude='triton-cache' \
    none/ledger.jsonl turns/ledger.jsonl $(cd "$W" && ls -d */ledger.jsonl.d/*/record.json */ledger.jsonl.d/*/runner/events.jsonl 2>/dev/null)
