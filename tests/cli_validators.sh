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
# --labels (tests/validators/labels.jsonl: its header has the answers by hand), joined to the ledger
L="$V/ledger.jsonl --decisions $V/decisions.jsonl --labels $V/labels.jsonl"
"$K" validators $L >"$T/lmd" 2>&1 || { echo "FAIL: --labels md exit"; fails=$((fails + 1)); }
check "labels md: cells" "$T/lmd" "| INCONCL | 0 | 0 | 1 |"
check "labels md: sensitivity" "$T/lmd" "| sensitivity | 1.000 | ["
check "labels md: unknown" "$T/lmd" "| unknown labels | 19.4% | ["
check "labels md: INCONCL defect" "$T/lmd" "| INCONCL defect | 0.0% | ["
check "labels md: lax" "$T/lmd" "| lax | 50.0% | ["
check "labels md: lax lower" "$T/lmd" "| 40.3% | ["
check "labels md: lax upper" "$T/lmd" "| 59.7% | ["
check "labels md: strict" "$T/lmd" "| strict | 0.0% | ["
"$K" validators $L >"$T/lmd2" 2>&1
cmp -s "$T/lmd" "$T/lmd2" || { echo "FAIL: --labels: two runs of one seed differ"; fails=$((fails + 1)); }
"$K" validators $L --seed 1 --fa-seed 2 >"$T/lmd3" 2>&1
cmp -s "$T/lmd" "$T/lmd3" && { echo "FAIL: --labels: --seed changed nothing"; fails=$((fails + 1)); }
check "labels md: --seed" "$T/lmd3" "(seed 1)"
"$K" validators $L --format json --replicates 50 -o "$T/ljson" || { echo "FAIL: --labels json exit"; fails=$((fails + 1)); }
check "labels json: unknown" "$T/ljson" '"unknown": {"estimate": 0.19444444444444442, "interval": ['
check "labels json: replicates" "$T/ljson" '"replicates": 50,'
check "labels json: then the rates" "$T/ljson" '  "rates": ['
"$K" validators $L --format csv -o "$T/lcsv" || { echo "FAIL: --labels csv exit"; fails=$((fails + 1)); }
check "labels csv: lax upper" "$T/lcsv" 'false_accepts_all_accepted_upper,"lax",0.597222,'
check "labels csv: INCONCL defect" "$T/lcsv" 'inconcl_defect,,0.000000,'
# the paper's OV120 sample (tests/validators/ov120.jsonl): Table 8's estimates
"$K" validators "$V/ledger.jsonl" --labels "$V/ov120.jsonl" >"$T/ov" 2>&1 || { echo "FAIL: ov120 exit"; fails=$((fails + 1)); }
check "ov120: sensitivity" "$T/ov" "| sensitivity | 0.964 | ["
check "ov120: specificity" "$T/ov" "| specificity | 0.626 | ["
check "ov120: PPV" "$T/ov" "| PPV | 0.763 | ["
check "ov120: NPV" "$T/ov" "| NPV | 0.934 | ["
check "ov120: unknown" "$T/ov" "| unknown labels | 3.9% | ["
check "ov120: INCONCL defect" "$T/ov" "| INCONCL defect | 39.5% | ["
# refusals: bad labels (file and line, non-zero exit), bad options
printf '{"stratum": "s", "N": 2, "n": 3}\n' >"$T/badl.jsonl"
if "$K" validators "$V/ledger.jsonl" --labels "$T/badl.jsonl" >"$T/lerr" 2>&1; then
    echo "FAIL: n_h > N_h was accepted"; fails=$((fails + 1))
fi
check "refused: n > N" "$T/lerr" "badl.jsonl:1: stratum 's': n_h 3 > N_h 2"
printf '{"stratum": "s", "N": 2}\n{"id": "a1", "stratum": "s", "label": "defect", "certificate": "PASS"}\n' >"$T/badc.jsonl"
if "$K" validators "$V/ledger.jsonl" --labels "$T/badc.jsonl" >"$T/lerr2" 2>&1; then
    echo "FAIL: a certificate against the ledger was accepted"; fails=$((fails + 1))
fi
check "refused: certificate conflict" "$T/lerr2" "badc.jsonl:2: unit 'a1': certificate PASS, but the ledger's record has FAIL"
printf '{"stratum": "s", "N": 2}\n{"id": "x", "stratum": "s", "label": "defect", "certificate": "FAIL"\n' >"$T/badj.jsonl"
if "$K" validators "$V/ledger.jsonl" --labels "$T/badj.jsonl" >"$T/lerr3" 2>&1; then
    echo "FAIL: malformed JSON was accepted"; fails=$((fails + 1))
fi
check "refused: malformed JSON" "$T/lerr3" "badj.jsonl:2: not a JSON object"
if "$K" validators "$V/ledger.jsonl" --labels "$V/labels.jsonl" --replicates 0 >"$T/lerr4" 2>&1; then
    echo "FAIL: --replicates 0"; fails=$((fails + 1))
fi
check "refused: replicates" "$T/lerr4" "--replicates takes an integer"
if "$K" validators "$V/ledger.jsonl" --labels "$V/labels.jsonl" --seed x >"$T/lerr5" 2>&1; then
    echo "FAIL: --seed x"; fails=$((fails + 1))
fi
check "refused: seed" "$T/lerr5" "--seed takes an integer"
[ "$fails" -eq 0 ]
