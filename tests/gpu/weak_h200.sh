#!/usr/bin/env bash
# tests/gpu/weak_h200.sh - a corpus audited on the GPU with the seven weak
# surfaces (docs/validators.md, "Weak surfaces"), then scored by
# `kaudit validators`, in one call.  The corpora (WEAK_PARTS, default all):
#   kernelbench  every 6th level-1 and every 12th level-2 KernelBench task
#                (.gpu-carry/KernelBench; WEAK_KB_N of them, 24), each with a
#                candidate that hands the work back to the reference's code
#                (as tests/gpu/audit_h200.sh's batch);
#   real         the candidates with kernels of their own of audit_h200.sh's
#                "real" part (Triton, load_inline, KernelBench's adversarial
#                test kernels);
#   controls     the semantic controls of tests/audit/controls.tsv (pure
#                PyTorch, pinned contracts; the probe_vendor rows left out);
#   demo         examples/validators-demo (its manifest's contracts).
# kaudit is the full build carried in .gpu-carry/kaudit (tests/gpu/carry_kaudit.sh).
# The work directory is kept between calls: run again, the batch resumes from
# its ledger (WEAK_FRESH=1 starts over).  WEAK_BUDGET (540 s) bounds the
# batch; SIGTERM keeps the ledger; WEAK_DEVICE=cpu smoke-tests it without a GPU.
# The pairs are listed in WEAK_PARTS's order, so a budget that runs out cuts
# the last part first.  Results in $OUT: weak-ledger.jsonl,
# weak-validators.{md,json,csv}, weak-log.txt, weak-evidence.tar.gz.
set -u
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
. "$ROOT/tests/gpu/kernelbench_batch.sh"
OUTDIR=${OUT:-$ROOT/gpu-out}
mkdir -p "$OUTDIR"
K=${KAUDIT:-$ROOT/.gpu-carry/kaudit/bin/kaudit}
W=${KAUDIT_WEAK_WORK:-/tmp/kaudit-weak-h200}
PARTS=${WEAK_PARTS:-"kernelbench real controls demo"}
KB_N=${WEAK_KB_N:-24}
export KAUDIT_PYTHON=${KAUDIT_PYTHON:-python3}
log=$OUTDIR/weak-log.txt
[ "${WEAK_FRESH:-0}" = 1 ] && rm -rf "$W"
mkdir -p "$W/candidates"
say() { echo "$*" | tee -a "$log"; }
say "kaudit: $("$K" version | head -1); python: $($KAUDIT_PYTHON -c 'import torch,sys; print(sys.version.split()[0], torch.__version__, torch.cuda.get_device_name(0) if torch.cuda.is_available() else "no GPU")')"
T=$W/tasks.jsonl
: >"$T"
line() { # id corpus reference candidate [contract]
    if [ -n "${5:-}" ]; then
        printf '{"id": "%s", "corpus": "%s", "reference": "%s", "candidate": "%s", "contract": "%s"}\n' "$1" "$2" "$3" "$4" "$5" >>"$T"
    else
        printf '{"id": "%s", "corpus": "%s", "reference": "%s", "candidate": "%s"}\n' "$1" "$2" "$3" "$4" >>"$T"
    fi
}
KBR=$ROOT/.gpu-carry/KernelBench
part_kernelbench() {
    n=0
    for ref in $(kernelbench_batch_refs "$KBR/KernelBench"); do
        [ "$n" -ge "$KB_N" ] && break
        id=kb_$(basename "$ref" .py | tr -c 'A-Za-z0-9._\n-' '_')
        delegating_candidate "$ref" "kb_ref_$n" "$W/candidates/$id.py"
        line "$id" kernelbench-delegating "$ref" "$W/candidates/$id.py"
        n=$((n + 1))
    done
}
part_real() {
    L1=$KBR/KernelBench/level1 REAL=$ROOT/tests/gpu/real FIX=$KBR/src/kernelbench/unit_tests/test_kernels
    while read -r id ref cand; do
        line "$id" real "$ref" "$cand"
    done <<EOF
kb_mul_triton $L1/5_Matrix_scalar_multiplication.py $REAL/candidates/kb_mul_triton.py
kb_maxpool3d_triton $L1/43_Max_Pooling_3D.py $REAL/candidates/kb_maxpool3d_triton.py
kb_prod_triton $REAL/tasks/prod_reduction.py $REAL/candidates/kb_prod_triton.py
cl1_mul_inline $L1/5_Matrix_scalar_multiplication.py $REAL/candidates/cl1_mul_inline.py
kb_zero_out $L1/1_Square_matrix_multiplication_.py $FIX/zero_out_kernel.py
kb_non_default_stream $L1/1_Square_matrix_multiplication_.py $FIX/non_default_stream_kernel.py
kb_mul_torch $L1/5_Matrix_scalar_multiplication.py $REAL/candidates/kb_mul_torch.py
EOF
}
part_controls() {
    A=$ROOT/tests/audit
    tail -n +2 "$A/controls.tsv" | while IFS='	' read -r name task cand rest; do
        case "$name" in probe_vendor_*|"") continue ;; esac
        line "ctl_$name" controls "$A/tasks/$task.py" "$A/candidates/$cand.py" "$A/contracts/$task.json"
    done
}
part_demo() {
    D=$ROOT/examples/validators-demo
    tail -n +2 "$D/manifest.tsv" | while IFS='	' read -r id corpus ref cand contract rest; do
        [ "$contract" = - ] && contract= || contract=$D/$contract
        line "demo_$id" "demo-$corpus" "$ROOT/$ref" "$D/$cand" "$contract"
    done
}
# in the order WEAK_PARTS gives: a batch cut off by its budget keeps the first
for part in $PARTS; do
    case "$part" in
    kernelbench|real|controls|demo) "part_$part" ;;
    *) say "unknown part '$part' (kernelbench, real, controls, demo)"; exit 2 ;;
    esac
done
say "corpus: $(wc -l <"$T") pairs ($PARTS)"
export TORCH_EXTENSIONS_DIR=$W/torch-extensions TRITON_CACHE_DIR=$W/triton-cache
start=$(date +%s)
timeout "${WEAK_BUDGET:-540}" "$K" audit --batch "$T" -o "$W/ledger.jsonl" --device "${WEAK_DEVICE:-cuda}" \
    --weak-surfaces all --jobs "${WEAK_JOBS:-2}" --timeout "${WEAK_PAIR_TIMEOUT:-240}" >>"$log" 2>&1
say "batch: exit $? in $(( $(date +%s) - start )) s; $(wc -l <"$W/ledger.jsonl") of $(wc -l <"$T") pairs in the ledger"
cp "$W/ledger.jsonl" "$OUTDIR/weak-ledger.jsonl"
for f in md json csv; do
    "$K" validators "$W/ledger.jsonl" --format "$f" -o "$OUTDIR/weak-validators.$f" || say "kaudit validators --format $f: exit $?"
done
cat "$OUTDIR/weak-validators.md" | tee -a "$log"
(cd "$W/ledger.jsonl.d" 2>/dev/null && tar -czf "$OUTDIR/weak-evidence.tar.gz" \
    */record.json */runner/events.jsonl 2>/dev/null)
# per pair: certificate, decisions, and what the weak phase cost and left out
$KAUDIT_PYTHON - "$W/ledger.jsonl" <<'EOF' | tee -a "$log"
import json, sys
S = ["KernelBench", "robust-kbench", "CUDA-Agent", "KernelGYM", "DeepReinforce", "MusaCoder", "CUDA-L1"]
walls, weak_s = [], []
for l in map(json.loads, open(sys.argv[1])):
    rec = json.load(open(l["record"])) if l.get("record") else {}
    ws = rec.get("weak_surfaces") or {}
    secs = sum(v.get("seconds", 0) for v in ws.values())
    excl = [f for f in (rec.get("analysis") or {}).get("findings", []) if f.get("code") == "weak-phase-excluded"]
    walls.append(l["wall_s"]); weak_s.append(secs)
    print("%-40s %-8s %-5s %s  wall %.1f s, weak %.1f s%s" % (
        l["id"][:40], l.get("certificate"), l.get("outcome") or "-",
        " ".join((ws.get(s, {}).get("decision") or "?")[0] for s in S), l["wall_s"], secs,
        ("; " + excl[0].get("text", "")[:90]) if excl else ""))
walls.sort(); weak_s.sort()
q = lambda v, p: v[min(len(v) - 1, int(len(v) * p))] if v else float("nan")
print("pairs", len(walls), "wall p50 %.1f p95 %.1f s; weak phase p50 %.1f p95 %.1f s" % (
    q(walls, .5), q(walls, .95), q(weak_s, .5), q(weak_s, .95)))
EOF
