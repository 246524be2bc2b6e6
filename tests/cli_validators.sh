#!/bin/sh
# tests/cli_validators.sh KAUDIT SRCDIR - `kaudit validators` on the fixture
# ledger (tests/validators): each format's figures, and bad input refused with
# the file and line and a non-zero exit; then `kaudit gates` on the fixture pool.
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

# kaudit gates on tests/validators/pool.jsonl (its header counts every figure)
P="$V/pool.jsonl" H="$V/pool_human.jsonl"
"$K" gates "$P" --human "$H" >"$T/gmd" 2>&1 || { echo "FAIL: gates md exit"; fails=$((fails + 1)); }
check "gates md: lax (Table 11's columns)" "$T/gmd" "| lax | 60.0% (3) | 60.0% (3) | 5/5 | 40.0% (2) | 20.0% (1) | 1, 1 | 60.0% (60.0%) | 60.0–80.0% (60.0–80.0%) | 0 |"
check "gates md: picky, one undecided slot" "$T/gmd" "| picky | 20.0% (1) | 20.0% (1) | 4/5 | 20.0% (1) | 20.0% (1) | 1, 1 | 20.0% (25.0%) | 40.0% (50.0%) | 1 |"
check "gates md: S1 with its bounds" "$T/gmd" "| S1 | 6/12 | 3/5 (60.0%) | 2, 1 | 0 | 0 | [1,2]/5 (20.0–40.0%) | [1,2]/3 (33.3–66.7%) |"
check "gates md: S_axis-first" "$T/gmd" "| S_axis-first | 7/12 | 4/5 (80.0%) | - | 0 | 1 | [0,2]/5 (0.0–40.0%) | [0,2]/4 (0.0–50.0%) |"
check "gates md: contrasts" "$T/gmd" "| mean over 2 | 35.000 (range 20.000 to 50.000) | 5.000 (range 0.000 to 10.000) |"
check "gates md: SafeFast (Table G.2)" "$T/gmd" "| picky | (1, 0) | (2, 1) |"
check "gates md: a delivery without a label" "$T/gmd" "| S0-fast | lax | t3 | 1 | t3s1 |"
"$K" gates "$P" --format csv --k 1,1.5,2 -o "$T/gcsv" || { echo "FAIL: gates csv exit"; fails=$((fails + 1)); }
# t1s2 2.5 and t5s1 2.0 exceed 1.5; only t1s2 exceeds 2
check "gates csv: S0-fast picky, no labels, three thresholds" "$T/gcsv" 'S0-fast,"picky",5,12,7,1,4,3,1,1,1,1,,,,2,2,1'
check "gates csv: thresholds' columns" "$T/gcsv" "safefast_gt_1,safefast_gt_1.5,safefast_gt_2"
"$K" gates "$P" --human "$H" --format json -o "$T/gjson" || { echo "FAIL: gates json exit"; fails=$((fails + 1)); }
check "gates json: version" "$T/gjson" '"kaudit_gates": 1'
check "gates json: S1's selections" "$T/gjson" '"selections": [{"slot": 2, "id": "t1s2"}, {"slot": 1, "id": "t2s1"}, null, null, {"slot": 1, "id": "t5s1"}]'
check "gates json: S1's human bounds" "$T/gjson" '"unsafe_shipped": [0.33333333333333331, 0.66666666666666663]'
# refusals, each naming the file and line, exit 1
refused_gates() { # what, expected text, kaudit gates arguments...
    what=$1 want=$2
    shift 2
    "$K" gates "$@" >"$T/gerr" 2>&1
    rc=$?
    if [ "$rc" -ne 1 ]; then echo "FAIL: $what: exit $rc, not 1"; fails=$((fails + 1)); fi
    check "gates refused: $what" "$T/gerr" "$want"
}
refused_gates "a ledger without task and slot" 'ledger.jsonl:6: record '"'a1'"' has no "task" string' "$V/ledger.jsonl"
{ cat "$P"; printf '%s\n' '{"id": "again", "task": "t1", "slot": 2, "certificate": "PASS"}'; } >"$T/dup.jsonl"
refused_gates "a second record at one task and slot" "dup.jsonl:45: record 'again' at task 't1' slot 2, where line 35 put 't1s2'" "$T/dup.jsonl"
printf '%s\n' '{"id": "x", "label": "clean"}' >"$T/labels.jsonl"
refused_gates "a label of an unknown record" "labels.jsonl:1: record 'x' is not in the ledger" "$P" --human "$T/labels.jsonl"
printf '%s\n' '{"id": "t1s0", "task": "t1", "slot": 0, "certificate": "PASS"' >"$T/torn.jsonl"
refused_gates "malformed JSON" "torn.jsonl:1: not a JSON object" "$T/torn.jsonl"
{ grep -v '^#' "$P" | head -2 | tr -d '\n'; printf '\n'; } >"$T/glued.jsonl"
refused_gates "two records run together on a line" "glued.jsonl:1: more than one JSON value on the line" "$T/glued.jsonl"
if "$K" gates "$P" --k 2,x >"$T/gerr" 2>&1; then echo "FAIL: --k 2,x"; fails=$((fails + 1)); fi
check "gates refused: --k" "$T/gerr" "--k takes up to 8 positive numbers"
if "$K" gates "$P" --human "$H" --human "$H" >"$T/gerr" 2>&1; then echo "FAIL: --human twice"; fails=$((fails + 1)); fi
check "gates refused: --human twice" "$T/gerr" "--human is given once"
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
printf '{"stratum": "s", "N": 2, "cells": {"PASS": 1, "PASS": 1}}\n' >"$T/badk.jsonl"
if "$K" validators "$V/ledger.jsonl" --labels "$T/badk.jsonl" >"$T/lerrk" 2>&1; then
    echo "FAIL: a repeated cell key was accepted"; fails=$((fails + 1))
fi
check "refused: a repeated cell key" "$T/lerrk" "badk.jsonl:1: \"cells\" has key 'PASS' twice"
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
{ grep -v '^#' "$V/ledger.jsonl" | head -2 | tr -d '\n'; printf '\n'; } >"$T/vglued.jsonl"
if "$K" validators "$T/vglued.jsonl" >"$T/lerr6" 2>&1; then
    echo "FAIL: two ledger records on one line were accepted"; fails=$((fails + 1))
fi
check "refused: two records run together in the ledger" "$T/lerr6" "vglued.jsonl:1: more than one JSON value on the line"
printf '{"stratum": "s", "N": 2}{"stratum": "t", "N": 2}\n' >"$T/lglued.jsonl"
if "$K" validators "$V/ledger.jsonl" --labels "$T/lglued.jsonl" >"$T/lerr7" 2>&1; then
    echo "FAIL: two labels lines run together were accepted"; fails=$((fails + 1))
fi
check "refused: two labels lines run together" "$T/lerr7" "lglued.jsonl:1: more than one JSON value on the line"
if "$K" validators "$V/ledger.jsonl" --labels "$V/labels.jsonl" --replicates 0 >"$T/lerr4" 2>&1; then
    echo "FAIL: --replicates 0"; fails=$((fails + 1))
fi
check "refused: replicates" "$T/lerr4" "--replicates takes an integer"
if "$K" validators "$V/ledger.jsonl" --labels "$V/labels.jsonl" --seed x >"$T/lerr5" 2>&1; then
    echo "FAIL: --seed x"; fails=$((fails + 1))
fi
check "refused: seed" "$T/lerr5" "--seed takes an integer"
if "$K" validators "$V/ledger.jsonl" --replicates 10 >"$T/lerr6" 2>&1; then
    echo "FAIL: --replicates without --labels"; fails=$((fails + 1))
fi
check "refused: --replicates without --labels" "$T/lerr6" "--replicates goes with --labels"
[ "$fails" -eq 0 ]
