#!/bin/sh
# tests/cli_ledger_weak.sh KAUDIT - `kaudit ledger weak`: KernelBench's own
# eval_results.json joined into a ledger as weak decisions, on the harness's
# keys (its kernel file names): a compiled and correct sample ACCEPT, a wrong
# one REJECT, one it never evaluated and a candidate of no KernelBench name left
# as they were; both layouts of eval_results.json; bad input refused with the
# file and place and nothing written; then `kaudit validators` scores it.
K=$1
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fails=0
ok() { echo "ok: $1"; }
bad() { echo "FAIL: $1"; fails=$((fails + 1)); }
rec() { # id candidate-path certificate
    printf '{"kaudit_audit_record": 1, "candidate": {"path": "%s"}, "certificate": "%s"}\n' "$2" "$3" >"$T/$1.json"
    printf '{"id": "%s", "certificate": "%s", "axes": {"semantic": "%s", "implementation": "PASS", "measurement": "PASS"}, "record": "%s"}\n' \
        "$1" "$3" "$3" "$T/$1.json" >>"$T/ledger.jsonl"
}
: >"$T/ledger.jsonl"
rec p3 /runs/r1/level_1_problem_3_sample_0_kernel.py PASS
rec p4 /runs/r1/level_1_problem_4_sample_1_kernel.py FAIL
rec p5 /runs/r1/level_1_problem_5_sample_0_kernel.py FAIL
rec own /work/candidates/mine.py PASS
cat >"$T/eval_results.json" <<'JSON'
{"3": [{"sample_id": 0, "compiled": true, "correctness": true, "metadata": {}, "runtime": 1.5, "runtime_stats": {}}],
 "4": [{"sample_id": 0, "compiled": true, "correctness": true, "metadata": {}},
       {"sample_id": 1, "compiled": true, "correctness": false, "metadata": {}}]}
JSON
if "$K" ledger weak "$T/ledger.jsonl" --kernelbench "$T/eval_results.json" -o "$T/out.jsonl" 2>"$T/err"; then
    ok "exit 0"
else
    bad "exit $?: $(cat "$T/err")"
fi
want() { # id expected weak_decisions.KernelBench (or "none")
    got=$(grep "\"id\":\"$1\"" "$T/out.jsonl" | sed -n 's/.*"KernelBench":"\([A-Z]*\)".*/\1/p')
    [ -n "$got" ] || got=none
    [ "$got" = "$2" ] && ok "$1: $2" || bad "$1: got $got, want $2: $(grep "\"id\":\"$1\"" "$T/out.jsonl")"
}
want p3 ACCEPT
want p4 REJECT
want p5 none
want own none
grep -q "2 of 4 records given KernelBench's decision" "$T/err" && ok "said how many joined" || bad "summary: $(cat "$T/err")"
# the older layout: one sample object per problem
printf '{"3": {"compiled": true, "correctness": false}}\n' >"$T/old.json"
"$K" ledger weak "$T/ledger.jsonl" --kernelbench "$T/old.json" -o "$T/old.jsonl" 2>/dev/null
grep "\"id\":\"p3\"" "$T/old.jsonl" | grep -q '"KernelBench":"REJECT"' && ok "older layout read" || bad "older layout: $(cat "$T/old.jsonl")"
# bad input: not JSON, names the file; nothing written
printf '{"3": [' >"$T/broken.json"
if "$K" ledger weak "$T/ledger.jsonl" --kernelbench "$T/broken.json" -o "$T/none.jsonl" 2>"$T/err2"; then
    bad "broken results accepted"
else
    grep -q "broken.json" "$T/err2" && ok "broken results refused, named: $(cat "$T/err2")" || bad "no file named: $(cat "$T/err2")"
fi
[ ! -e "$T/none.jsonl" ] && ok "nothing written" || bad "an output was written"
# scored: the joined decisions are a validator's
if "$K" validators "$T/out.jsonl" >"$T/md" 2>&1; then
    grep -q "KernelBench" "$T/md" && ok "validators scores KernelBench" || bad "validators: $(cat "$T/md")"
else
    bad "validators exit $?: $(cat "$T/md")"
fi
echo "$fails failed"
[ "$fails" -eq 0 ]
