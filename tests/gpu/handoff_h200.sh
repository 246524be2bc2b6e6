#!/usr/bin/env bash
# tests/gpu/handoff_h200.sh - one GPU call (2026-12-06): the cost of handing
# each call's inputs to the candidate's process, and the real Triton
# candidates audited to the end with the hand-off through memory.
#   1. bench/handoff_cost.py: one 4 GiB tensor on the GPU (KernelBench
#      level 1's inputs since its sizes grew), file against sealed memory
#      file, 3 interleaved rounds;
#   2. kb_mul_triton (4 GiB in, 4 GiB out, sampled) with KAUDIT_HANDOFF=file
#      (the hand-off before), cut after HANDOFF_FILES_S (75) s: its slots'
#      seconds from the event log;
#   3. kb_prod_triton, kb_maxpool3d_triton, kb_mul_triton with the hand-off
#      through memory, each to its end (--timeout 240) while the call's
#      deadline allows: verdicts, and the slots' seconds.
# HANDOFF_PARTS (default "bench files real") picks parts; HANDOFF_DEADLINE_S
# (560) bounds the call.  $OUT: handoff-log.txt, handoff-cost.tsv,
# handoff-audits.tsv, handoff-evidence.tar.gz (records, event logs).
set -u
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
OUTDIR=${OUT:-$ROOT/gpu-out}
mkdir -p "$OUTDIR"
K=${KAUDIT:-$ROOT/.gpu-carry/kaudit/bin/kaudit}
export KAUDIT_PYTHON=${KAUDIT_PYTHON:-python3}
W=${HANDOFF_WORK:-/tmp/kaudit-handoff}
PARTS=${HANDOFF_PARTS:-"bench files real"}
deadline=$((SECONDS + ${HANDOFF_DEADLINE_S:-560}))
left() { echo $((deadline - SECONDS)); }
rm -rf "$W"
mkdir -p "$W/records"
chmod 711 "$W"   # the worker's uid enters it (a mktemp folder would keep kaudit's privileges)
log=$OUTDIR/handoff-log.txt
say() { echo "$*" | tee -a "$log"; }
say "kaudit $("$K" version | head -1); $($KAUDIT_PYTHON -c 'import torch,sys; print(sys.version.split()[0], torch.__version__, torch.cuda.get_device_name(0))' 2>&1)"
say "/dev/shm: $(df -h /dev/shm | tail -1); unix max_dgram_qlen $(cat /proc/sys/net/unix/max_dgram_qlen 2>&1)"
L1=$ROOT/.gpu-carry/KernelBench/KernelBench/level1 REAL=$ROOT/tests/gpu/real
table=$OUTDIR/handoff-audits.tsv
printf 'run\thandoff\texit\tsemantic\timplementation\tmeasurement\tcertificate\twall_s\tslots\tref_slot_p50_s\tcand_slot_p50_s\tcand_slot_max_s\tfirst_finding\n' >"$table"

row() { # RUN HANDOFF EXIT: a row from $W/RUN's record (if any) and event log
    $KAUDIT_PYTHON - "$W/$1" "$1" "$2" "$3" >>"$table" <<'PYEOF'
import json, os, sys
d, run, way, rc = sys.argv[1:5]
ref, cand = [], []
try:
    for line in open(os.path.join(d, "runner", "events.jsonl")):
        e = json.loads(line)
        if e.get("event") == "slot":
            s = e.get("seconds") or {}
            ref.append(s.get("reference") or 0)
            cand.append(s.get("candidate") or 0)
except OSError:
    pass
med = lambda v: sorted(v)[len(v) // 2] if v else float("nan")
cols = ["-"] * 5
first = "-"
try:
    r = json.load(open(os.path.join(d, "record.json")))
    a = r["axes"]
    cols = [a["semantic"]["verdict"], a["implementation"]["verdict"], a["measurement"]["verdict"],
            r["certificate"], "%.1f" % r["wall_s"]]
    f = [x for x in r["semantic"]["findings"] if x["kind"] in ("convicts", "unresolved")]
    first = (f[0]["code"] + "@" + str(f[0].get("slot_name"))) if f else \
        ((a["implementation"].get("root_cause") or "-")[:120])
except (OSError, ValueError, KeyError):
    pass
print("\t".join([run, way, rc] + cols + [str(len(cand)), "%.2f" % med(ref), "%.2f" % med(cand),
                                          "%.2f" % (max(cand) if cand else float("nan")), first]))
PYEOF
}

audit() { # RUN HANDOFF SECONDS REFERENCE CANDIDATE
    local run=$1 way=$2 secs=$3
    [ "$(left)" -gt 40 ] || { say "$run: not run, $(left) s left"; return; }
    [ "$secs" -lt "$(left)" ] || secs=$(($(left) - 20))
    local t0=$SECONDS
    if [ "$way" = files ]; then
        KAUDIT_HANDOFF=file timeout "$((secs + 15))" "$K" audit --device cuda --reference "$4" --candidate "$5" \
            --timeout "$secs" -d "$W/$run" --quiet >>"$log" 2>&1
    else
        timeout "$((secs + 15))" "$K" audit --device cuda --reference "$4" --candidate "$5" \
            --timeout "$secs" -d "$W/$run" --quiet >>"$log" 2>&1
    fi
    local rc=$?
    say "$run ($way): exit $rc after $((SECONDS - t0)) s"
    row "$run" "$way" "$rc"
}

for p in $PARTS; do
    case $p in
    bench)
        say "bench: 4 GiB, 3 rounds"
        timeout 150 $KAUDIT_PYTHON "$ROOT/bench/handoff_cost.py" "$W/bench" 4 3 cuda >"$OUTDIR/handoff-cost.tsv" 2>>"$log"
        say "bench: exit $?"
        cat "$OUTDIR/handoff-cost.tsv" | tee -a "$log"
        rm -rf "$W/bench" ;;
    files) audit mul-files files "${HANDOFF_FILES_S:-75}" "$L1/5_Matrix_scalar_multiplication.py" "$REAL/candidates/kb_mul_triton.py" ;;
    real)
        audit prod-memory memory 240 "$REAL/tasks/prod_reduction.py" "$REAL/candidates/kb_prod_triton.py"
        audit mul-memory memory 240 "$L1/5_Matrix_scalar_multiplication.py" "$REAL/candidates/kb_mul_triton.py"
        audit maxpool3d-memory memory 240 "$L1/43_Max_Pooling_3D.py" "$REAL/candidates/kb_maxpool3d_triton.py" ;;
    *) say "unknown part $p" ;;
    esac
done
cat "$table" | tee -a "$log"
(cd "$W" && tar -czf "$OUTDIR/handoff-evidence.tar.gz" */record.json */runner/events.jsonl */runner/worker.log 2>/dev/null)
ls -la "$OUTDIR"
