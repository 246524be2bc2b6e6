#!/usr/bin/env bash
# bench/warm_h200.sh - issue 35's warm target on the GPU machine: the public
# corpus (bench/corpus/carry.sh) audited cold as one `--jobs auto` batch into a
# fresh build store (bench/batch_auto_h200.sh: its bound and memory peaks
# too), then each candidate audited again alone, one after another, starting
# from the builds the batch kept (docs/audit.md, "Builds kept across audits").
# Per warm audit: its wall time, the store's state, whether a compiler ran
# (the record's builds), and its certificate beside the cold one.
# WARM_DEADLINE_S: the whole script's limit (560); each warm audit gets
# --timeout WARM_TIMEOUT_S (120).  Results under $OUT: the batch's files,
# warm.tsv and warm-summary.txt.
set -u
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
OUTDIR=${OUT:-$ROOT/bench-out}
mkdir -p "$OUTDIR"
K=${KAUDIT:-$ROOT/.gpu-carry/kaudit/bin/kaudit}
LB=${BATCH_LB:-$ROOT/.gpu-carry/leaderboard}
W=/tmp/kaudit-warm
export KAUDIT_PYTHON=${KAUDIT_PYTHON:-python3}
t_start=$(date +%s)
deadline=$((t_start + ${WARM_DEADLINE_S:-560}))
rm -rf "$W"
mkdir -p "$W"
chmod 711 "$W"
STORE=$W/store
left=$((deadline - $(date +%s) - 150))   # leave the warm audits 150 s
BATCH_STORE=$STORE BATCH_WORK=$W/batch BATCH_DEADLINE_S=$left bash "$ROOT/bench/batch_auto_h200.sh"
echo "store after the batch: $(ls "$STORE" 2>/dev/null | wc -l) entries, $(du -sh "$STORE" 2>/dev/null | cut -f1)" \
    | tee -a "$OUTDIR/warm-summary.txt"
printf 'id\tstore\tcompiled\tcertificate\tcold_certificate\twall_s\tworker_s\n' >"$OUTDIR/warm.tsv"
tail -n +2 "$LB/list.tsv" | while IFS=$'\t' read -r id level problem solution model kind; do
    [ $(( deadline - $(date +%s) )) -lt 20 ] && { echo "deadline: stopped before $id"; break; }
    d=$W/warm-$id
    t0=$(date +%s.%N)
    timeout "${WARM_TIMEOUT_S:-120}" "$K" audit --reference "$LB/problems/$problem" \
        --candidate "$LB/solutions/$solution.py" --device cuda --timeout "${WARM_TIMEOUT_S:-120}" \
        --build-store "$STORE" -d "$d" --quiet </dev/null >"$d.out" 2>&1
    t1=$(date +%s.%N)
    $KAUDIT_PYTHON - "$d/record.json" "$W/batch/ledger.jsonl" "$id" "$t0" "$t1" <<'PY' >>"$OUTDIR/warm.tsv"
import json, sys
rec, ledger, pid, t0, t1 = sys.argv[1:6]
try:
    r = json.load(open(rec))
except Exception:
    r = {}
cold = ""
try:
    cold = next(json.loads(l)["certificate"] for l in open(ledger) if json.loads(l)["id"] == pid)
except Exception:
    pass
compilers = ("nvcc", "cicc", "ptxas", "c++", "g++", "cc1plus", "gcc", "cc")
ran = any(t in b.get("tools", {}) for b in r.get("builds", []) for t in compilers)
print("\t".join(str(v) for v in [pid, (r.get("build_store") or {}).get("state"), ran, r.get("certificate"), cold,
                                 "%.2f" % (float(t1) - float(t0)), (r.get("phase_s") or {}).get("worker")]))
PY
done
$KAUDIT_PYTHON - "$OUTDIR/warm.tsv" <<'PY' | tee -a "$OUTDIR/warm-summary.txt"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1]), delimiter="\t"))
walls = sorted(float(r["wall_s"]) for r in rows if r["store"] == "hit")
def q(p):
    return walls[min(len(walls) - 1, int(round(p * (len(walls) - 1))))] if walls else float("nan")
print("warm audits: %d, hits %d, compiled anyway %d, certificates as cold %d" % (
    len(rows), sum(r["store"] == "hit" for r in rows), sum(r["compiled"] == "True" for r in rows),
    sum(r["certificate"] == r["cold_certificate"] for r in rows)))
print("warm wall (hits): p50 %.1f s, p95 %.1f s, max %.1f s (target p50 <= 10 s)" % (q(0.5), q(0.95), walls[-1] if walls else float("nan")))
PY
