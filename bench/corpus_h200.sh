#!/usr/bin/env bash
# bench/corpus_h200.sh - a public corpus of LLM-written KernelBench solutions
# (the KernelBench leaderboard, bench/corpus/carry.sh) on the GPU machine, each
# candidate cold under KernelBench's own evaluator (423217d, 5 correctness and
# 100 timed trials, a build_dir of its own) and under `kaudit audit` (its own
# private build cache), in one call: docs/corpus.md reads the certificates,
# bench/notes/gpu-suite.md keeps the figures.
#
# CORPUS_LANES lanes (8) run side by side, candidate k in lane k mod LANES;
# within a pair the order alternates (even k: KernelBench first), so neither
# tool always meets the other's build load.  Resumable: what is done is kept
# in $CORPUS_WORK (/tmp/kaudit-corpus) and skipped on the next call on a warm
# machine; no run starts with less than CORPUS_MIN_LEFT_S (150) left of
# CORPUS_DEADLINE_S (560), and a run cut by its limit is run again next time.
# Results: $OUT/corpus.tsv (one line per candidate), corpus-evidence.tar.gz
# (ledger lines, records, event logs, the evaluator's output), corpus-log.txt.
# CORPUS_LIST: another list of the same columns (a subset), beside $LB.
set -u
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
OUTDIR=${OUT:-$ROOT/bench-out}
mkdir -p "$OUTDIR"
K=${KAUDIT:-$ROOT/.gpu-carry/kaudit/bin/kaudit}
KB=$ROOT/.gpu-carry/KernelBench
LB=$ROOT/.gpu-carry/leaderboard
LIST=${CORPUS_LIST:-$LB/list.tsv}   # a subset: the same columns, its own file
W=${CORPUS_WORK:-/tmp/kaudit-corpus}
LANES=${CORPUS_LANES:-8}
DEADLINE=${CORPUS_DEADLINE_S:-560}
MIN_LEFT=${CORPUS_MIN_LEFT_S:-150}
export KAUDIT_PYTHON=${KAUDIT_PYTHON:-python3}
log=$OUTDIR/corpus-log.txt
mkdir -p "$W/done" "$W/kb" "$W/audit"
chmod 711 "$W" "$W/audit"
start=$SECONDS
say() { echo "$*" | tee -a "$log"; }
say "corpus: $(tail -n +2 "$LIST" | wc -l) candidates, $LANES lanes; kaudit $("$K" version | head -1); $($KAUDIT_PYTHON -c 'import torch,sys; print(sys.version.split()[0], torch.__version__, torch.cuda.get_device_name(0))' 2>&1)"

left() { echo $((DEADLINE - (SECONDS - start))); }

# run_kb ID PROBLEM SOLUTION: KernelBench's evaluator, cold (a fresh build_dir)
run_kb() {
    [ -e "$W/done/$1.kb" ] && return 0
    local l; l=$(left)
    [ "$l" -ge "$MIN_LEFT" ] || { say "$1: kernelbench not run ($l s left)"; return 1; }
    rm -rf "$W/kb/$1"; mkdir -p "$W/kb/$1"
    local t0 t1 rc
    t0=$(date +%s.%N)
    timeout $((l - 5)) $KAUDIT_PYTHON "$ROOT/tests/gpu/real/kernelbench_eval.py" "$KB" "$LB/problems/$2" "$LB/solutions/$3.py" \
        --perf-trials 100 --correct-trials 5 --build-dir "$W/kb/$1/build" </dev/null >"$W/kb/$1/out.txt" 2>&1
    rc=$?
    t1=$(date +%s.%N)
    [ "$rc" -eq 124 ] && { say "$1: kernelbench cut by the deadline"; return 1; }
    local decision; decision=$(grep -o 'WEAK [A-Z]*' "$W/kb/$1/out.txt" | tail -1 | cut -d' ' -f2)
    printf '%s\t%s\t%s\n' "${decision:-none}" "$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }')" "$rc" >"$W/done/$1.kb"
}

# run_audit ID PROBLEM SOLUTION: kaudit audit, cold (its private build cache),
# as a batch of one so that its ledger line is the one a batch writes
run_audit() {
    [ -e "$W/done/$1.audit" ] && return 0
    local l; l=$(left)
    [ "$l" -ge "$MIN_LEFT" ] || { say "$1: audit not run ($l s left)"; return 1; }
    rm -rf "$W/audit/$1"; mkdir -p "$W/audit/$1"; chmod 711 "$W/audit/$1"
    printf '{"id": "%s", "reference": "%s", "candidate": "%s", "weak": "ACCEPT"}\n' "$1" "$LB/problems/$2" "$LB/solutions/$3.py" \
        >"$W/audit/$1/task.jsonl"
    local t0 t1 rc
    t0=$(date +%s.%N)
    timeout $((l - 5)) "$K" audit --batch "$W/audit/$1/task.jsonl" -o "$W/audit/$1/ledger.jsonl" --jobs 1 --device "${CORPUS_DEVICE:-cuda}" \
        --timeout $((l - 20)) </dev/null >"$W/audit/$1/out.txt" 2>&1
    rc=$?
    t1=$(date +%s.%N)
    [ "$rc" -eq 124 ] && { say "$1: audit cut by the deadline"; return 1; }
    [ -s "$W/audit/$1/ledger.jsonl" ] || { say "$1: audit wrote no ledger line (exit $rc)"; return 1; }
    printf '%s\t%s\n' "$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }')" "$rc" >"$W/done/$1.audit"
}

lane() {
    local k=0
    tail -n +2 "$LIST" | while IFS=$'\t' read -r id level problem solution model kind; do
        if [ $((k % LANES)) -eq "$1" ]; then
            if [ $((k % 2)) -eq 0 ]; then
                run_kb "$id" "$problem" "$solution"; run_audit "$id" "$problem" "$solution"
            else
                run_audit "$id" "$problem" "$solution"; run_kb "$id" "$problem" "$solution"
            fi
        fi
        k=$((k + 1))
    done
}

for i in $(seq 0 $((LANES - 1))); do lane "$i" & done
wait
say "lanes done after $((SECONDS - start)) s"

# One line per candidate: the two walls and their ratio, KernelBench's decision,
# the certificate and what the ledger line says.
$KAUDIT_PYTHON - "$LIST" "$W" <<'EOF' >"$OUTDIR/corpus.tsv"
import json, os, sys
lst, w = sys.argv[1], sys.argv[2]
print("\t".join(["id", "model", "kind", "kb_decision", "kb_wall_s", "audit_wall_s", "ratio", "certificate", "outcome",
                 "semantic", "implementation", "measurement", "reported_findings", "phases_s", "certificate_reason"]))
for row in list(open(lst))[1:]:
    cid, level, problem, solution, model, kind = row.rstrip("\n").split("\t")
    kb = audit = None
    if os.path.exists(f"{w}/done/{cid}.kb"):
        kb = open(f"{w}/done/{cid}.kb").read().split()
    if os.path.exists(f"{w}/done/{cid}.audit"):
        audit = open(f"{w}/done/{cid}.audit").read().split()
    line = {}
    try:
        line = json.loads(open(f"{w}/audit/{cid}/ledger.jsonl").readline())
    except Exception:
        pass
    axes = line.get("axes") or {}
    ratio = "%.3f" % (float(audit[0]) / float(kb[1])) if kb and audit else ""
    print("\t".join([cid, model, kind, kb[0] if kb else "", kb[1] if kb else "", audit[0] if audit else "", ratio,
                     str(line.get("certificate", "")), str(line.get("outcome", "")),
                     str(axes.get("semantic", "")), str(axes.get("implementation", "")), str(axes.get("measurement", "")),
                     ",".join(line.get("reported_findings") or []), json.dumps(line.get("phases_s") or {}),
                     (line.get("certificate_reason") or "").replace("\t", " ")[:300]]))
EOF
cut -f1,4-11 "$OUTDIR/corpus.tsv" | tee -a "$log"
(cd "$W" && tar -czf "$OUTDIR/corpus-evidence.tar.gz" done kb/*/out.txt audit/*/ledger.jsonl audit/*/out.txt \
    audit/*/ledger.jsonl.d/*/record.json audit/*/ledger.jsonl.d/*/runner/worker.log \
    audit/*/ledger.jsonl.d/*/runner/events.jsonl 2>/dev/null)
ls -la "$OUTDIR" | tee -a "$log"
