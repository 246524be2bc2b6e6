#!/bin/sh
# tests/cli_ledger_weak.sh KAUDIT - `kaudit ledger weak`: KernelBench's own
# eval_results.json joined into a ledger as weak decisions, on the harness's
# keys (its kernel file names): a compiled and correct sample ACCEPT, a wrong
# one REJECT, one it never evaluated and a candidate of no KernelBench name left
# as they were; both layouts of eval_results.json; bad input refused with the
# file and place and nothing written; then `kaudit validators` scores it.
# Then CUDA-L1's eval_pipeline logs (one per evaluation, the candidate's code
# in the first line), joined on the digest of that code: a finished log
# ACCEPT, an error line REJECT, an unfinished log no decision; the log that
# examples/real/cl1_mul_inline recorded on the H200 joined to its candidate.
# Then KernelBot's result lines (POPCORN_FD's "key: value"), joined on the
# digest of submission.py beside each: check pass ACCEPT, check fail REJECT,
# no check line no decision; a line that is no "key: value" and a result with
# no submission.py beside it refused.
#   sh tests/cli_ledger_weak.sh KAUDIT [SRCDIR]
K=$1
SRC=${2:-$(cd "$(dirname "$0")/.." && pwd)}
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
decided() { # ledger harness id expected weak_decisions.HARNESS (or "none")
    got=$(grep "\"id\":\"$3\"" "$1" | sed -n "s/.*\"$2\":\"\\([A-Z]*\\)\".*/\\1/p")
    [ -n "$got" ] || got=none
    [ "$got" = "$4" ] && ok "$2 $3: $4" || bad "$2 $3: got $got, want $4: $(grep "\"id\":\"$3\"" "$1")"
}
want() { decided "$T/out.jsonl" KernelBench "$@"; }
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

# ---- CUDA-L1: the code's digest (XXH3-128, as kaudit audit's record digests the
# candidate's file) joins a log to a record
recd() { # id candidate-path digest certificate
    printf '{"kaudit_audit_record": 1, "candidate": {"path": "%s", "digest": "%s"}, "certificate": "%s"}\n' "$2" "$3" "$4" >"$T/$1.json"
    printf '{"id": "%s", "certificate": "%s", "axes": {"semantic": "%s", "implementation": "PASS", "measurement": "PASS"}, "record": "%s"}\n' \
        "$1" "$4" "$4" "$T/$1.json" >>"$T/l1.jsonl"
}
: >"$T/l1.jsonl"
recd a /w/a.py 1ab43059f492725ace5cf911e5478801 PASS      # "class ModelNew:\n    pass\n"
recd b /w/b.py 5715c0abc395be1b534ca4b758be6108 FAIL      # "class ModelNew:\n    wrong = 1\n"
recd c /w/c.py 33baee763a4eacb6e78760145a0c105f PASS      # "class ModelNew:\n    cut = 1\n"
recd real /w/cl1_mul_inline.py d2861af6929cdcda13f2029b0b650603 PASS   # tests/gpu/real/candidates/cl1_mul_inline.py
recd other /w/other.py 00000000000000000000000000000000 PASS
head1() { printf '{"info_string": "", "start_time": "2026-12-05 10:00:00", "code": "%s"}\n' "$1"; }
{ head1 'class ModelNew:\n    pass\n'
  printf '{"info_string": "", "info": "stage1:Compile Success", "error": false, "done": false}\n'
  printf '{"info_string": "", "score": 1.2, "error": false, "done": true}\n'; } >"$T/a.log.json"
{ head1 'class ModelNew:\n    wrong = 1\n'
  printf '{"info_string": "", "info": "stage1:Compile Success", "error": false, "done": false}\n'
  printf '{"info_string": "", "error_msg": "Output mismatch", "error": true, "done": true}\n'; } >"$T/b.log.json"
{ head1 'class ModelNew:\n    cut = 1\n'
  printf '{"info_string": "", "info": "stage1:Compile Success", "error": false, "done": false}\n'; } >"$T/c.log.json"
if "$K" ledger weak "$T/l1.jsonl" --cudal1 "$T/a.log.json" --cudal1 "$T/b.log.json" --cudal1 "$T/c.log.json" \
    --cudal1 "$SRC/examples/real/cl1_mul_inline/cudal1-log.json" -o "$T/l1out.jsonl" 2>"$T/err3"; then
    ok "CUDA-L1: exit 0"
else
    bad "CUDA-L1: exit $?: $(cat "$T/err3")"
fi
want1() { decided "$T/l1out.jsonl" CUDA-L1 "$@"; }
want1 a ACCEPT
want1 b REJECT
want1 c none
want1 real ACCEPT
want1 other none
grep -q "3 of 5 records given CUDA-L1's decision from 4 logs" "$T/err3" && ok "CUDA-L1: said how many joined" || bad "CUDA-L1 summary: $(cat "$T/err3")"
grep -q "1 CUDA-L1 log did not finish" "$T/err3" && ok "CUDA-L1: the unfinished log named" || bad "CUDA-L1 unfinished: $(cat "$T/err3")"
# bad input: a log whose first line holds no code, a torn line; named, nothing written
printf '{"info_string": "", "info": "stage1"}\n' >"$T/nocode.json"
if "$K" ledger weak "$T/l1.jsonl" --cudal1 "$T/a.log.json" --cudal1 "$T/nocode.json" -o "$T/none1.jsonl" 2>"$T/err4"; then
    bad "a log without code accepted"
else
    grep -q "nocode.json':1: no \"code\"" "$T/err4" && ok "log without code refused: $(cat "$T/err4")" || bad "no place named: $(cat "$T/err4")"
fi
{ head1 'x'; printf '{"info_string": "", "err\n'; } >"$T/torn.json"
if "$K" ledger weak "$T/l1.jsonl" --cudal1 "$T/torn.json" -o "$T/none1.jsonl" 2>"$T/err5"; then
    bad "a torn log accepted"
else
    grep -q "torn.json':2: not a JSON object" "$T/err5" && ok "torn log refused at its line" || bad "torn: $(cat "$T/err5")"
fi
[ ! -e "$T/none1.jsonl" ] && ok "CUDA-L1: nothing written on bad input" || bad "CUDA-L1: an output was written"
"$K" ledger weak "$T/l1.jsonl" --cudal1 "$T/a.log.json" --kernelbench "$T/eval_results.json" -o "$T/x.jsonl" 2>/dev/null &&
    bad "both harnesses at once accepted" || ok "one harness at a time"

# ---- KernelBot: work folders with submission.py and the lines eval.py wrote
for x in a b c; do mkdir -p "$T/kb_$x"; done
printf 'class ModelNew:\n    pass\n' >"$T/kb_a/submission.py"
printf 'class ModelNew:\n    wrong = 1\n' >"$T/kb_b/submission.py"
printf 'class ModelNew:\n    cut = 1\n' >"$T/kb_c/submission.py"
printf 'test-count: 2\ntest.0.spec: m: 64\ntest.0.status: pass\ntest.1.status: pass\ncheck: pass\n' >"$T/kb_a/result.txt"
printf 'test-count: 2\ntest.0.status: pass\ntest.1.status: fail\ntest.1.error: mismatch found\ncheck: fail\n' >"$T/kb_b/result.txt"
printf 'benchmark-count: 1\nbenchmark.0.spec: m: 64\n' >"$T/kb_c/result.txt"
: >"$T/kbot.jsonl"
cp "$T/l1.jsonl" "$T/kbot.jsonl"
if "$K" ledger weak "$T/kbot.jsonl" --kernelbot "$T/kb_a/result.txt" --kernelbot "$T/kb_b/result.txt" \
    --kernelbot "$T/kb_c/result.txt" -o "$T/kbout.jsonl" 2>"$T/err6"; then
    ok "KernelBot: exit 0"
else
    bad "KernelBot: exit $?: $(cat "$T/err6")"
fi
want2() { decided "$T/kbout.jsonl" KernelBot "$@"; }
want2 a ACCEPT
want2 b REJECT
want2 c none
want2 real none
grep -q "2 of 5 records given KernelBot's decision from 3 result files" "$T/err6" && ok "KernelBot: said how many joined" || bad "KernelBot summary: $(cat "$T/err6")"
grep -q "1 KernelBot result file did not finish" "$T/err6" && ok "KernelBot: the unfinished one named" || bad "KernelBot unfinished: $(cat "$T/err6")"
mkdir -p "$T/kb_lone" && printf 'check: pass\n' >"$T/kb_lone/result.txt"
if "$K" ledger weak "$T/kbot.jsonl" --kernelbot "$T/kb_lone/result.txt" -o "$T/none2.jsonl" 2>"$T/err7"; then
    bad "a result without submission.py accepted"
else
    grep -q "kb_lone/result.txt': no submission.py beside it" "$T/err7" && ok "no submission.py: refused, named" || bad "lone: $(cat "$T/err7")"
fi
printf 'check pass\n' >"$T/kb_a/torn.txt"
if "$K" ledger weak "$T/kbot.jsonl" --kernelbot "$T/kb_a/torn.txt" -o "$T/none2.jsonl" 2>"$T/err8"; then
    bad "a line that is no key: value accepted"
else
    grep -q "torn.txt':1: not a \"key: value\" line" "$T/err8" && ok "KernelBot: bad line refused at its line" || bad "torn: $(cat "$T/err8")"
fi
[ ! -e "$T/none2.jsonl" ] && ok "KernelBot: nothing written on bad input" || bad "KernelBot: an output was written"

echo "$fails failed"
[ "$fails" -eq 0 ]
