#!/usr/bin/env bash
# bench/batch_auto_h200.sh - the public corpus (bench/corpus/carry.sh) audited as
# one `kaudit audit --batch --jobs auto` on the GPU machine: issue 35's batch
# target (the batch's wall time at most 1.5 times the slowest single audit
# plus the sum of the audits' GPU phases), and what each audit's processes
# held against their share of the memory (worker.memory_peak_bytes).
#
# The slowest single audit comes from a corpus run's table (BATCH_SINGLES, a
# corpus.tsv of bench/corpus_h200.sh, e.g. $OUT/corpus.tsv of a call just
# before on the same machine); without it the bound is not computed.  The GPU
# phases are each record's reference, slots, probe and timing.
# BATCH_LIST: the candidates (default the carried leaderboard list; BATCH_LB: where
# its problems/ and solutions/ lie);
# BATCH_STORE: the batch's --build-store (default: kaudit's own default);
# BATCH_TIMEOUT_S: each audit's --timeout (300); BATCH_DEADLINE_S: the
# batch's own limit (575).  Results: $OUT/batch.tsv (one line per pair),
# batch-summary.txt, batch-ledger.jsonl, batch-out.txt.
set -u
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
OUTDIR=${OUT:-$ROOT/bench-out}
mkdir -p "$OUTDIR"
K=${KAUDIT:-$ROOT/.gpu-carry/kaudit/bin/kaudit}
LB=${BATCH_LB:-$ROOT/.gpu-carry/leaderboard}   # problems/ and solutions/ the list names
LIST=${BATCH_LIST:-$LB/list.tsv}
W=${BATCH_WORK:-/tmp/kaudit-batch-auto}
export KAUDIT_PYTHON=${KAUDIT_PYTHON:-python3}
rm -rf "$W"
mkdir -p "$W"
chmod 711 "$W"
tail -n +2 "$LIST" | while IFS=$'\t' read -r id level problem solution model kind; do
    printf '{"id": "%s", "reference": "%s", "candidate": "%s", "weak": "ACCEPT"}\n' \
        "$id" "$LB/problems/$problem" "$LB/solutions/$solution.py"
done >"$W/tasks.jsonl"
t0=$(date +%s.%N)
timeout "${BATCH_DEADLINE_S:-575}" "$K" audit --batch "$W/tasks.jsonl" -o "$W/ledger.jsonl" --jobs auto \
    --device "${BATCH_DEVICE:-cuda}" --timeout "${BATCH_TIMEOUT_S:-300}" ${BATCH_STORE:+--build-store "$BATCH_STORE"} </dev/null >"$OUTDIR/batch-out.txt" 2>&1
rc=$?
t1=$(date +%s.%N)
cp "$W/ledger.jsonl" "$OUTDIR/batch-ledger.jsonl" 2>/dev/null
$KAUDIT_PYTHON - "$W/ledger.jsonl" "$rc" "$t0" "$t1" "${BATCH_SINGLES:-}" "$OUTDIR/batch.tsv" <<'EOF' | tee "$OUTDIR/batch-summary.txt"
import csv, json, os, sys
ledger, rc, t0, t1, singles, table = sys.argv[1:7]
wall = float(t1) - float(t0)
lines = [json.loads(l) for l in open(ledger)] if os.path.exists(ledger) else []
gpu_sum, peaks = 0.0, []
with open(table, "w") as out:
    out.write("\t".join(["id", "certificate", "outcome", "wall_s", "gpu_phases_s", "memory_peak_bytes",
                         "memory_limit_bytes", "stopped_over_limit", "retried_alone"]) + "\n")
    for x in lines:
        ph = x.get("phases_s") or {}
        g = sum(ph.get(k) or 0 for k in ("reference", "slots", "probe", "timing"))
        gpu_sum += g
        w = {}
        try:
            w = json.load(open(x["record"]))["worker"]
        except Exception:
            pass
        peak, limit = w.get("memory_peak_bytes"), (w.get("limits") or {}).get("memory_bytes")
        if peak and limit:
            peaks.append(peak / limit)
        out.write("\t".join(str(v) for v in [x["id"], x.get("certificate"), x.get("outcome"), "%.2f" % x["wall_s"],
                                             "%.2f" % g, peak, limit, json.dumps(w.get("stopped_over_limit")),
                                             bool(x.get("retried_alone"))]) + "\n")
print("batch: exit %s, %d pairs in the ledger, %.1f s" % (rc, len(lines), wall))
print("sum of the GPU phases (reference, slots, probe, timing): %.1f s" % gpu_sum)
if singles and os.path.exists(singles):
    walls = [float(r["audit_wall_s"]) for r in csv.DictReader(open(singles), delimiter="\t") if r.get("audit_wall_s")]
    if walls:
        bound = 1.5 * max(walls) + gpu_sum
        print("bound: 1.5 x %.1f s (slowest single) + %.1f s = %.1f s: %s" %
              (max(walls), gpu_sum, bound, "met" if wall <= bound else "NOT met"))
if peaks:
    peaks.sort()
    print("memory peak over the audit's share: median %.2f, max %.2f (%d audits)" %
          (peaks[len(peaks) // 2], peaks[-1], len(peaks)))
EOF
