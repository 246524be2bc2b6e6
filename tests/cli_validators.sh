#!/bin/sh
# tests/cli_validators.sh KAUDIT SRCDIR - `kaudit validators` on the fixture
# ledger (tests/validators): each format's figures, and bad input refused with
# the file and line and a non-zero exit.
K=$1 SRC=$2
V=$SRC/tests/validators
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fails=0
check() { # what, command output file, expected text
    if grep -qF -- "$3" "$2"; then echo "ok: $1"; else echo "FAIL: $1: no '$3' in:"; sed 's/^/    /' "$2"; fails=$((fails + 1)); fi
}
"$K" validators "$V/ledger.jsonl" --decisions "$V/decisions.jsonl" >"$T/md" 2>&1 || { echo "FAIL: md exit $?"; fails=$((fails + 1)); }
check "md: lax pooled" "$T/md" "| lax | pooled | 12 | 10/12 (83.3%) | 6/10 (60.0%) | [50.0%, 66.7%] | 6/6 (100.0%) | 0/4 (0.0%) | 4 | 0 | 1 | 1 | 3 | 1 | 2 |"
check "md: strict pooled" "$T/md" "| strict | pooled | 11 | 10/11 (90.9%) | 0/3 (0.0%) | [0.0%, 0.0%] | 0/6 (0.0%) | 1/4 (25.0%) | 3 | 6 | 0 | 0 | 0 | 0 | 1 |"
check "md: pair" "$T/md" "| lax | strict | 6 | 0 | 6 | 3.13e-02 | 9.38e-02 |"
"$K" validators "$V/ledger.jsonl" --decisions "$V/decisions.jsonl" --format csv -o "$T/csv" || { echo "FAIL: csv exit"; fails=$((fails + 1)); }
check "csv: lax alpha" "$T/csv" '"lax","alpha",7,6,4,6,1,4,0,2,2,0,0,1,2,1,1'
"$K" validators "$V/ledger.jsonl" --decisions "$V/decisions.jsonl" --format json -o "$T/json" || { echo "FAIL: json exit"; fails=$((fails + 1)); }
check "json: bounds" "$T/json" '"abstention_bounds": [0.5, 0.66666666666666663]'
check "json: version" "$T/json" '"kaudit_validators": 1'
# refusals: a decision on a record the ledger lacks, a second decision, an unknown format
printf '{"id": "zz", "validator": "v", "decision": "ACCEPT"}\n' >"$T/bad.jsonl"
if "$K" validators "$V/ledger.jsonl" --decisions "$T/bad.jsonl" >"$T/err" 2>&1; then
    echo "FAIL: an unknown record was accepted"; fails=$((fails + 1))
fi
check "refused: unknown record" "$T/err" "bad.jsonl:1: record 'zz' is not in the ledger"
if "$K" validators "$V/ledger.jsonl" --decisions "$V/decisions.jsonl" --decisions "$V/decisions.jsonl" >"$T/err2" 2>&1; then
    echo "FAIL: a second decision was accepted"; fails=$((fails + 1))
fi
check "refused: second decision" "$T/err2" "decisions.jsonl:2: a second decision of validator 'strict'"
if "$K" validators "$V/ledger.jsonl" --format xml >"$T/err3" 2>&1; then echo "FAIL: --format xml"; fails=$((fails + 1)); fi
check "refused: format" "$T/err3" "--format takes md, csv or json"
[ "$fails" -eq 0 ]
