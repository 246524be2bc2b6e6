#!/bin/sh
# tests/validators_demo.sh KAUDIT PYTHON SRCDIR - the end-to-end demo of issue 18
# (examples/validators-demo/README.md): the demo corpus audited as one batch on
# the CPU with the seven weak surfaces, then `kaudit validators` on its ledger;
# examples/validators-demo/check_ledger.py asserts that every certificate, every
# weak decision and every count of the table is what the corpus's manifest
# says.  Prints the table.
# Exit 77 (skip) when PYTHON has no torch, unless CI is set (then FAIL).
NAME=validators_demo.sh
. "$(dirname "$0")/audit_env.sh"
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
D=$SRC/examples/validators-demo
t_start=$(date +%s)
"$PY" - "$D/manifest.tsv" "$SRC" "$D" >"$T/tasks.jsonl" <<'PYEOF' || { echo "FAIL: cannot read the manifest"; exit 1; }
import csv, json, os, sys
manifest, src, demo = sys.argv[1:4]
for r in csv.DictReader(open(manifest, newline=""), delimiter="\t"):
    line = {"id": r["id"], "corpus": r["corpus"], "reference": os.path.join(src, r["reference"]),
            "candidate": os.path.join(demo, r["candidate"])}
    if r["contract"] != "-":
        line["contract"] = os.path.join(demo, r["contract"])
    print(json.dumps(line))
PYEOF
"$K" audit --batch "$T/tasks.jsonl" -o "$T/ledger.jsonl" --device cpu --weak-surfaces all --jobs 2 \
    >"$T/batch.out" 2>&1
rc=$?
if [ "$rc" != 0 ]; then
    echo "FAIL: kaudit audit --batch exited $rc"
    tail -20 "$T/batch.out"
    exit 1
fi
"$K" validators "$T/ledger.jsonl" || { echo "FAIL: kaudit validators exited $?"; exit 1; }
"$K" validators "$T/ledger.jsonl" --format json -o "$T/validators.json" || exit 1
"$PY" "$D/check_ledger.py" "$D/manifest.tsv" "$T/ledger.jsonl" "$T/validators.json"
rc=$?
echo "validators_demo: $(( $(date +%s) - t_start )) s"
exit $rc
