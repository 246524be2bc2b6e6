#!/usr/bin/env bash
# tests/gpu/audit_h200.sh - `kaudit audit` on the H200, in one call:
#   1. the 16 semantic controls (tests/audit/controls.tsv) on CUDA, each
#      against its pinned contract, weak verifier ACCEPT;
#   2. an honest candidate with its own CUDA kernel (the tiled GEMM of
#      tests/gpu/controls), audited cold (extension build) then warm: the
#      certificate should be PASS, outcome C0, exit 0;
#   3. a batch of KernelBench level-1/2 tasks (.gpu-carry/KernelBench) with a
#      candidate that hands the work back to the reference's PyTorch code
#      (no build), --jobs AUDIT_JOBS (2): the per-candidate audit time (p50, p95);
#   4. real candidates (Triton, load_inline, KernelBench's adversarial test
#      kernels) on their KernelBench tasks, with cold then warm build caches;
#   parts "attacks" (tests/audit/attacks on CUDA) and "controls_ab" (the
#   controls' wall time, the candidate's process started early and late).
# kaudit is the full build carried in .gpu-carry/kaudit (tests/gpu/carry_kaudit.sh):
# the GPU machine lacks cJSON's headers.  Results: $OUT/audit-*.tsv, the
# records, and audit-log.txt.
set -u
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
. "$ROOT/tests/gpu/kernelbench_batch.sh"
OUTDIR=${OUT:-$ROOT/gpu-out}
mkdir -p "$OUTDIR"
K=${KAUDIT:-$ROOT/.gpu-carry/kaudit/bin/kaudit}
W=${KAUDIT_AUDIT_WORK:-/tmp/kaudit-audit-h200}
PARTS=${AUDIT_PARTS:-"honest controls batch real"}
BATCH_N=${AUDIT_BATCH_N:-24}
export KAUDIT_PYTHON=${KAUDIT_PYTHON:-python3}
log=$OUTDIR/audit-log.txt
rm -rf "$W"
mkdir -p "$W/records"
say() { echo "$*" | tee -a "$log"; }
say "landlock ABI: $($KAUDIT_PYTHON -c 'import ctypes; print(ctypes.CDLL(None).syscall(444, None, 0, 1))' 2>&1); kernel $(uname -r)"
say "kaudit: $("$K" version | head -1); python: $($KAUDIT_PYTHON -c 'import torch,sys; print(sys.version.split()[0], torch.__version__, torch.cuda.get_device_name(0))')"

verdicts() { # record -> "semantic impl meas certificate outcome first-finding"
    $KAUDIT_PYTHON - "$1" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))
a = r["axes"]
f = [x for x in r["semantic"]["findings"] if x["kind"] == "convicts"] or \
    [x for x in r["semantic"]["findings"] if x["kind"] == "unresolved"]
first = (f[0]["code"] + "@" + str(f[0].get("slot_name"))) if f else "-"
pr = r.get("probe") or {}
probe = "%s/%s" % (pr.get("state", "-"), (pr.get("baseline") or {}).get("state", "-"))
print(a["semantic"]["verdict"], a["implementation"]["verdict"], a["measurement"]["verdict"],
      r["certificate"], r["outcome"], first, "%.1f" % r["wall_s"], probe,
      (a["implementation"].get("root_cause") or "-")[:140].replace("\t", " "), sep="\t")
EOF
}

if [[ " $PARTS " == *" controls "* ]]; then
    table=$OUTDIR/audit-controls.tsv
    printf 'name\texpected\tsemantic\timplementation\tmeasurement\tcertificate\toutcome\tfirst_finding\twall_s\tprobe\timplementation_cause\n' >"$table"
    tail -n +2 "$ROOT/tests/audit/controls.tsv" | while IFS=$'\t' read -r name task cand expected what; do
        "$K" audit --reference "$ROOT/tests/audit/tasks/$task.py" --candidate "$ROOT/tests/audit/candidates/$cand.py" \
            --contract "$ROOT/tests/audit/contracts/$task.json" --device cuda --weak ACCEPT --quiet \
            -d "$W/ctl-$name" --json "$W/records/ctl-$name.json" >>"$log" 2>&1
        rc=$?
        # the runner's log: where the audit's time went (its events' times)
        mkdir -p "$OUTDIR/events"
        cp "$W/ctl-$name/runner/events.jsonl" "$OUTDIR/events/ctl-$name.jsonl" 2>/dev/null
        cp "$W/records/ctl-$name.json" "$OUTDIR/events/ctl-$name.record.json" 2>/dev/null
        if [ -f "$W/records/ctl-$name.json" ]; then
            printf '%s\t%s\t%s\n' "$name" "$expected" "$(verdicts "$W/records/ctl-$name.json")" >>"$table"
        else
            printf '%s\t%s\tno record (exit %s)\n' "$name" "$expected" "$rc" >>"$table"
        fi
    done
    cat "$table" | tee -a "$log"
    # the records themselves (passed_by_floor, the slots, the confinement)
    tar -C "$W/records" -czf "$OUTDIR/audit-controls-records.tar.gz" . 2>/dev/null
fi

if [[ " $PARTS " == *" honest "* ]]; then
    table=$OUTDIR/audit-honest.tsv
    printf 'run\texit\tsemantic\timplementation\tmeasurement\tcertificate\toutcome\tfirst_finding\twall_s\tprobe\timplementation_cause\n' >"$table"
    # the candidate imports kernels.py from the folder above its own: --allow-read
    # a fresh extension cache for the cold run, the same one for the warm run
    export TORCH_EXTENSIONS_DIR=$W/torch-extensions   # the contract's candidate.objects pattern
    for run in cold warm; do
        "$K" audit --reference "$ROOT/tests/gpu/controls/tasks/matmul.py" \
            --candidate "$ROOT/tests/gpu/controls/candidates/clean_tiled_gemm.py" \
            --contract "$ROOT/contracts/controls/matmul.json" --device cuda --weak ACCEPT \
            --allow-read "$ROOT/tests/gpu/controls" \
            -d "$W/honest-$run" --json "$W/records/honest-$run.json" >>"$log" 2>&1
        rc=$?
        printf '%s\t%s\t%s\n' "$run" "$rc" "$(verdicts "$W/records/honest-$run.json" 2>/dev/null)" >>"$table"
    done
    cat "$table" | tee -a "$log"
    $KAUDIT_PYTHON -c 'import json,sys; r=json.load(open(sys.argv[1])); print("honest warm: confinement", r.get("confinement"), "phase_s", r.get("phase_s"))' \
        "$W/records/honest-warm.json" 2>&1 | tee -a "$log"
    cp "$W/honest-warm/record.json" "$OUTDIR/honest-warm-record.json" 2>/dev/null
    tar -C "$W/honest-warm" -czf "$OUTDIR/honest-warm-session.tar.gz" session runner/events.jsonl plan.json 2>/dev/null
    unset TORCH_EXTENSIONS_DIR
fi

# the controls' wall time with the candidate's process started early (while
# the reference works: the default) and late (KAUDIT_PARTY_START=late: when the
# candidate is built), interleaved control by control, the order alternating
if [[ " $PARTS " == *" controls_ab "* ]]; then
    table=$OUTDIR/audit-controls-ab.tsv
    printf 'name\tvariant\tcertificate\toutcome\twall_s\n' >"$table"
    i=0
    tail -n +2 "$ROOT/tests/audit/controls.tsv" | head -n "${AUDIT_AB_N:-100}" | while IFS=$'\t' read -r name task cand expected what; do
        i=$((i + 1))
        order="early late"; [ $((i % 2)) -eq 0 ] && order="late early"
        for v in $order; do
            start=; [ "$v" = late ] && start=late
            KAUDIT_PARTY_START=$start "$K" audit --reference "$ROOT/tests/audit/tasks/$task.py" \
                --candidate "$ROOT/tests/audit/candidates/$cand.py" --contract "$ROOT/tests/audit/contracts/$task.json" \
                --device cuda --weak ACCEPT --quiet -d "$W/ab-$name-$v" --json "$W/records/ab-$name-$v.json" >>"$log" 2>&1
            $KAUDIT_PYTHON -c 'import json,sys; r=json.load(open(sys.argv[1])); print(sys.argv[2], sys.argv[3], r["certificate"], r["outcome"], "%.2f" % r["wall_s"], sep="\t")' \
                "$W/records/ab-$name-$v.json" "$name" "$v" >>"$table" 2>/dev/null || printf '%s\t%s\tno record\n' "$name" "$v" >>"$table"
            rm -rf "$W/ab-$name-$v"
        done
    done
    cat "$table" | tee -a "$log"
fi

# the attack candidates of tests/audit/attacks on CUDA (tests/audit_attacks.sh
# runs them on the CPU in CI): each must end FAIL or INCONCLUSIVE, never PASS.
# The glob takes the adaptations of gpu-mode/pygpubench's exploits too
# (pg_*.py), the GPU-only ones among them (pg_event_array, pg_function_detour,
# pg_got_patch, pg_gpu_scan_zeros, pg_error_counter, pg_warmup), which CI
# cannot run; tests/audit_attacks.sh KAUDIT PYTHON ROOT NAME cuda checks each
# one's own property (docs/threat-model.md, "pygpubench's exploits").
if [[ " $PARTS " == *" attacks "* ]]; then
    table=$OUTDIR/audit-attacks.tsv
    printf 'attack\texit\tsemantic\timplementation\tmeasurement\tcertificate\toutcome\tfirst_finding\twall_s\tprobe\timplementation_cause\n' >"$table"
    for a in "$ROOT"/tests/audit/attacks/*.py; do
        name=$(basename "$a" .py)
        # AUDIT_ATTACKS: the names to run (all when unset)
        [ -n "${AUDIT_ATTACKS:-}" ] && [[ " $AUDIT_ATTACKS " != *" $name "* ]] && continue
        contract="--contract $ROOT/tests/audit/contracts/matmul.json"
        [ "$name" = drop_inputs_event ] && contract=   # it attacks the contract written from the evidence
        # shellcheck disable=SC2086
        "$K" audit --reference "$ROOT/tests/audit/tasks/matmul.py" --candidate "$a" $contract --device cuda \
            --weak ACCEPT --quiet -d "$W/att-$name" --json "$W/records/att-$name.json" >>"$log" 2>&1
        rc=$?
        mkdir -p "$OUTDIR/events"
        cp "$W/records/att-$name.json" "$OUTDIR/events/att-$name.record.json" 2>/dev/null
        printf '%s\t%s\t%s\n' "$name" "$rc" "$(verdicts "$W/records/att-$name.json" 2>/dev/null)" >>"$table"
    done
    cat "$table" | tee -a "$log"
fi

if [[ " $PARTS " == *" batch "* ]]; then
    KB=$ROOT/.gpu-carry/KernelBench/KernelBench
    B=$W/batch
    mkdir -p "$B/candidates"
    : >"$B/tasks.jsonl"
    n=0
    for ref in $(kernelbench_batch_refs "$KB"); do
        [ "$n" -ge "$BATCH_N" ] && break
        id=$(basename "$ref" .py | tr -c 'A-Za-z0-9._\n-' '_')
        # the candidate delegates: the audit's cost is what is measured
        delegating_candidate "$ref" "kb_ref_$n" "$B/candidates/$id.py"
        printf '{"id": "%s", "reference": "%s", "candidate": "%s", "weak": "ACCEPT"}\n' "$id" "$ref" "$B/candidates/$id.py" >>"$B/tasks.jsonl"
        n=$((n + 1))
    done
    start=$(date +%s)
    # AUDIT_BATCH_BUDGET bounds the whole batch (the device call has a limit
    # of its own); SIGTERM stops the running audits and keeps the ledger.
    timeout "${AUDIT_BATCH_BUDGET:-100000}" "$K" audit --batch "$B/tasks.jsonl" -o "$B/ledger.jsonl" \
        --jobs "${AUDIT_JOBS:-2}" --device cuda --timeout "${AUDIT_PAIR_TIMEOUT:-150}" >>"$log" 2>&1
    say "batch: exit $? in $(( $(date +%s) - start )) s for $n pairs"
    cp "$B/ledger.jsonl" "$OUTDIR/audit-batch-ledger.jsonl"
    # where each pair's time went: the record's phase_s and the runner's
    # timed events (stage and slot seconds), kept small
    (cd "$B/ledger.jsonl.d" 2>/dev/null && tar -czf "$OUTDIR/audit-batch-evidence.tar.gz" \
        */record.json */runner/events.jsonl */runner/worker.log 2>/dev/null)
    $KAUDIT_PYTHON - "$B/ledger.jsonl" <<'EOF' | tee -a "$log"
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
walls = sorted(r["wall_s"] for r in rows)
def q(p):  # the paper's rule: zero-based index floor(n*q)
    return walls[min(len(walls) - 1, int(len(walls) * p))]
print("pairs", len(rows), "p50 %.1f s" % q(0.5), "p95 %.1f s" % q(0.95), "max %.1f s" % walls[-1])
import os
d = sys.argv[1] + ".d"
for r in rows:
    print(r["id"], r.get("certificate"), r.get("axes"), "%.1f" % r["wall_s"], r.get("certificate_reason", "")[:120])
    # where the time went: record phases, runner stages, slot seconds
    try:
        rec = json.load(open(os.path.join(d, r["id"], "record.json")))
        ph = rec.get("phase_s", {})
    except Exception:
        ph = {}
    st, ref_s, cand_s, last_t = {}, 0.0, 0.0, None
    try:
        for line in open(os.path.join(d, r["id"], "runner", "events.jsonl")):
            e = json.loads(line)
            last_t = e.get("t", last_t)
            if e["event"] == "start":
                st["python+torch"] = e.get("t")
            if e["event"] == "stage":
                st[e["stage"]] = e.get("seconds")
            if e["event"] == "slot":
                ref_s += (e.get("seconds") or {}).get("reference") or 0
                cand_s += (e.get("seconds") or {}).get("candidate") or 0
    except Exception:
        pass
    print("   phases", {k: round(v, 1) for k, v in ph.items()}, "runner_end_t", last_t,
          "slots ref %.1f cand %.1f" % (ref_s, cand_s), "stages", st)
EOF
fi
if [[ " $PARTS " == *" real "* ]]; then
    # Real candidates with kernels of their own (Triton, load_inline) and
    # KernelBench's own adversarial test kernels, each against its
    # KernelBench task: audited with fresh build caches (cold), then again
    # with the caches they filled (warm).
    KB=$ROOT/.gpu-carry/KernelBench
    L1=$KB/KernelBench/level1 REAL=$ROOT/tests/gpu/real FIX=$KB/src/kernelbench/unit_tests/test_kernels
    R=$W/real
    mkdir -p "$R"
    : >"$R/tasks.jsonl"
    while read -r id ref cand; do
        printf '{"id": "%s", "reference": "%s", "candidate": "%s", "weak": "ACCEPT"}\n' "$id" "$ref" "$cand" >>"$R/tasks.jsonl"
    done <<EOF
kb_mul_triton $L1/5_Matrix_scalar_multiplication.py $REAL/candidates/kb_mul_triton.py
kb_maxpool3d_triton $L1/43_Max_Pooling_3D.py $REAL/candidates/kb_maxpool3d_triton.py
kb_prod_triton $REAL/tasks/prod_reduction.py $REAL/candidates/kb_prod_triton.py
cl1_mul_inline $L1/5_Matrix_scalar_multiplication.py $REAL/candidates/cl1_mul_inline.py
kb_zero_out $L1/1_Square_matrix_multiplication_.py $FIX/zero_out_kernel.py
kb_non_default_stream $L1/1_Square_matrix_multiplication_.py $FIX/non_default_stream_kernel.py
kb_result_reuse $L1/1_Square_matrix_multiplication_.py $FIX/result_reuse_kernel.py
kb_mul_torch $L1/5_Matrix_scalar_multiplication.py $REAL/candidates/kb_mul_torch.py
EOF
    export TORCH_EXTENSIONS_DIR=$W/real-torch-extensions TRITON_CACHE_DIR=$W/real-triton-cache
    for run in ${AUDIT_REAL_RUNS:-cold warm}; do
        start=$(date +%s)
        timeout "${AUDIT_REAL_BUDGET:-200}" "$K" audit --batch "$R/tasks.jsonl" -o "$R/ledger-$run.jsonl" \
            --jobs "${AUDIT_JOBS:-2}" --device cuda --timeout 150 >>"$log" 2>&1
        say "real candidates ($run caches): exit $? in $(( $(date +%s) - start )) s"
        cp "$R/ledger-$run.jsonl" "$OUTDIR/audit-real-$run-ledger.jsonl"
        $KAUDIT_PYTHON - "$R/ledger-$run.jsonl" <<'PYEOF' | tee -a "$log"
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
walls = sorted(r["wall_s"] for r in rows)
q = lambda p: walls[min(len(walls) - 1, int(len(walls) * p))]
print("pairs", len(rows), "p50 %.1f s" % q(0.5), "p95 %.1f s" % q(0.95), "max %.1f s" % walls[-1])
for r in rows:
    print(" ", r["id"], r.get("certificate"), r.get("outcome"), r.get("axes"), "%.1f" % r["wall_s"],
          (r.get("certificate_reason") or "")[:160])
PYEOF
    done
    (cd "$R" && tar -czf "$OUTDIR/audit-real-evidence.tar.gz" ledger-*.jsonl ledger-warm.jsonl.d/*/record.json \
        ledger-warm.jsonl.d/*/runner/events.jsonl ledger-cold.jsonl.d/*/runner/worker.log 2>/dev/null)
    unset TORCH_EXTENSIONS_DIR TRITON_CACHE_DIR
fi

df -h /tmp | tail -1 | tee -a "$log"
