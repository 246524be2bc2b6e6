#!/bin/sh
# tests/audit_cli_shards.sh KAUDIT - a batch split into shards (--shard i/N,
# a Slurm array task's variables), its workers spread over GPUs (--gpus), and
# the shard ledgers merged (kaudit ledger merge) with duplicates, conflicts,
# torn lines and missing tasks refused.  No PyTorch needed: the pairs' files
# are missing (each audit ends at once with an INCONCL line), and where a
# worker must start, a stand-in python prints the GPU it was given.
K=$1
[ -n "$K" ] || { echo "usage: audit_cli_shards.sh KAUDIT" >&2; exit 2; }
# before the cd below: $0 and KAUDIT may be relative (sh tests/audit_cli_shards.sh build/bin/kaudit)
HERE=$(cd "$(dirname "$0")" && pwd)
case $K in /*) ;; *) K=$PWD/$K ;; esac
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fails=0 passes=0
check() { # what, condition...
    _what=$1; shift
    if "$@"; then passes=$((passes + 1)); else echo "FAIL: $_what"; fails=$((fails + 1)); fi
}
ids() { # LEDGER: its ids in order, one line (sed: no JSON tool needed, the batch writes "id" first)
    sed -n 's/^{"id":"\([^"]*\)".*/\1/p' "$1" | tr '\n' ' ' | sed 's/ $//'
}
cd "$T" || exit 99
for i in 0 1 2 3 4; do
    echo "{\"id\": \"t$i\", \"reference\": \"$T/none/r$i.py\", \"candidate\": \"$T/none/c$i.py\"}"
    [ $i = 1 ] && printf '\n# a comment and a blank line: not tasks\n'
done >tasks.jsonl
unset SLURM_ARRAY_TASK_ID SLURM_ARRAY_TASK_COUNT SLURM_ARRAY_TASK_MIN SLURM_ARRAY_TASK_MAX SLURM_ARRAY_TASK_STEP
batch() { # LEDGER ARGS...: status in $T/LEDGER.rc, stderr in $T/LEDGER.err
    _l=$1; shift
    timeout 120 "$K" audit --batch tasks.jsonl -o "$_l" --device cpu --jobs 1 "$@" >/dev/null 2>"$_l.err"
    echo $? >"$_l.rc"
}

# ---------------------------------------------------------------- --shard
batch s1.jsonl --shard 1/2
batch s2.jsonl --shard 2/2
check "--shard 1/2: exit 0 ($(cat s1.jsonl.err))" [ "$(cat s1.jsonl.rc)" = 0 ]
check "--shard 1/2: task lines 0, 2, 4 (got '$(ids s1.jsonl)')" [ "$(ids s1.jsonl)" = "t0 t2 t4" ]
check "--shard 2/2: task lines 1, 3 (got '$(ids s2.jsonl)')" [ "$(ids s2.jsonl)" = "t1 t3" ]
check "--shard says which" grep -q -- "--shard 2/2: 2 of the 5 pairs of tasks.jsonl" s2.jsonl.err
batch s5.jsonl --shard 5/5
check "--shard 5/5: the fifth task (got '$(ids s5.jsonl)')" [ "$(ids s5.jsonl)" = t4 ]
batch s9.jsonl --shard 7/9
check "a shard past the tasks runs nothing, exit 0" sh -c "[ $(cat s9.jsonl.rc) = 0 ] && [ ! -s s9.jsonl ]"
# two task lines run together: the second is not dropped without a word
{ head -1 tasks.jsonl | tr -d '\n'; tail -1 tasks.jsonl; } >glued_tasks.jsonl
timeout 120 "$K" audit --batch glued_tasks.jsonl -o glued_run.jsonl --device cpu --jobs 1 >/dev/null 2>glued_run.err
glued_rc=$?
check "a task file with two tasks on a line is refused (exit $glued_rc)" \
    sh -c "[ $glued_rc = 1 ] && [ ! -s glued_run.jsonl ]"
check "and names its file and line ($(head -1 glued_run.err))" \
    grep -q "glued_tasks.jsonl:1: more than one JSON value on the line" glued_run.err
for bad in 0/2 3/2 2 a/b 1/0; do
    batch bad.jsonl --shard "$bad"
    check "--shard $bad: a usage error (exit $(cat bad.jsonl.rc))" [ "$(cat bad.jsonl.rc)" = 2 ]
    check "--shard $bad: says why" grep -q -- "--shard" bad.jsonl.err
done
check "no ledger from the refused shards" [ ! -e bad.jsonl ]
# --jobs auto: one per two CPUs and 6 GiB available, at most the pairs (3 here), said
batch ja.jsonl --shard 1/2 --jobs auto
check "--jobs auto: exit 0 ($(cat ja.jsonl.err))" [ "$(cat ja.jsonl.rc)" = 0 ]
check "--jobs auto: says how many and from what ($(grep -- '--jobs auto' ja.jsonl.err))" \
    grep -Eq -- "--jobs auto: [1-3] at once \([0-9]+ CPUs, [0-9.]+ GiB available, 3 pairs\)" ja.jsonl.err
batch jb.jsonl --jobs many
check "--jobs many: a usage error (exit $(cat jb.jsonl.rc))" [ "$(cat jb.jsonl.rc)" = 2 ]
timeout 60 "$K" audit --reference a.py --candidate b.py --shard 1/2 --device cpu >/dev/null 2>"$T/one.err"
check "--shard without --batch: a usage error" sh -c "[ $? = 2 ] && grep -q 'needs --batch' '$T/one.err'"

# ---------------------------------------------------------------- Slurm arrays
SLURM_ARRAY_TASK_ID=8 SLURM_ARRAY_TASK_COUNT=2 SLURM_ARRAY_TASK_MIN=7 SLURM_ARRAY_TASK_MAX=8 \
    SLURM_ARRAY_TASK_STEP=1 batch a8.jsonl
check "array task 8 of 7-8: shard 2/2 (got '$(ids a8.jsonl)')" [ "$(ids a8.jsonl)" = "t1 t3" ]
check "array task: says which" grep -q "SLURM_ARRAY_TASK_ID=8 of SLURM_ARRAY_TASK_COUNT=2 (shard 2/2)" a8.jsonl.err
SLURM_ARRAY_TASK_ID=8 SLURM_ARRAY_TASK_COUNT=2 SLURM_ARRAY_TASK_MIN=7 batch ov.jsonl --shard 1/2
check "--shard wins over the array's variables (got '$(ids ov.jsonl)')" [ "$(ids ov.jsonl)" = "t0 t2 t4" ]
SLURM_ARRAY_TASK_ID=3 SLURM_ARRAY_TASK_COUNT=3 SLURM_ARRAY_TASK_MIN=1 SLURM_ARRAY_TASK_MAX=7 \
    SLURM_ARRAY_TASK_STEP=1 batch gap.jsonl
check "an array with gaps (1,3,7) is refused (exit $(cat gap.jsonl.rc))" [ "$(cat gap.jsonl.rc)" = 1 ]
check "and says so" grep -q "consecutive ids" gap.jsonl.err
check "and audits nothing" [ ! -s gap.jsonl ]
SLURM_ARRAY_TASK_ID=0 batch nocount.jsonl
check "SLURM_ARRAY_TASK_ID without COUNT is refused" sh -c "[ $(cat nocount.jsonl.rc) = 1 ] && grep -q SLURM_ARRAY_TASK_COUNT nocount.jsonl.err"

# ---------------------------------------------------------------- merge
"$K" ledger merge s1.jsonl s2.jsonl --tasks tasks.jsonl -o all.jsonl 2>merge.err
check "merge: exit 0 ($(cat merge.err))" [ $? = 0 ]
check "merge: every task once, in the order of the inputs (got '$(ids all.jsonl)')" \
    [ "$(ids all.jsonl)" = "t0 t2 t4 t1 t3" ]
check "merge: the lines as written" sh -c "cat s1.jsonl s2.jsonl | cmp -s - all.jsonl"
refused() { # WHAT PATTERN ARGS...: merge ARGS into out.jsonl: exit 1, PATTERN on stderr, nothing written
    _what=$1 _pat=$2; shift 2
    rm -f out.jsonl
    "$K" ledger merge "$@" -o out.jsonl >/dev/null 2>refused.err
    _rc=$?
    check "merge refuses $_what (exit $_rc)" [ $_rc = 1 ]
    check "merge names the place of $_what ($(head -1 refused.err))" grep -q -- "$_pat" refused.err
    check "merge writes nothing for $_what" [ ! -e out.jsonl ]
}
refused "a ledger given twice" "s2.jsonl:1: id 't1' is a duplicate: the ledger 's2.jsonl' is given twice" \
    s1.jsonl s2.jsonl s2.jsonl
cp s2.jsonl copy.jsonl
refused "a copy of a ledger" "copy.jsonl:2: id 't3' is a duplicate of s2.jsonl:2" s2.jsonl copy.jsonl
sed 's/"certificate":"INCONCL"/"certificate":"PASS"/' s2.jsonl >redo.jsonl
refused "another result for a record" "redo.jsonl:2: id 't3' conflicts with s2.jsonl:2" s1.jsonl s2.jsonl redo.jsonl
head -1 s2.jsonl >torn.jsonl
printf '{"id":"t3","certificate":"PA' >>torn.jsonl
refused "a torn last line" "torn.jsonl:2: the last line is incomplete" s1.jsonl torn.jsonl
printf '{"id":"x","certificate":"PASS"}\n[1,2]\n' >notobj.jsonl
refused "a line that is not an object" "notobj.jsonl:2: not a ledger line" notobj.jsonl
printf '{"id":"x","certificate":"PASS"}{"id":"y","certificate":"FAIL"}\n' >glued.jsonl
refused "two records run together on a line" "glued.jsonl:1: more than one JSON value on the line" glued.jsonl
printf '{"certificate":"PASS"}\n' >noid.jsonl
refused "a line without an id" "noid.jsonl:1: not a ledger line" noid.jsonl
head -2 s1.jsonl >part.jsonl
refused "a missing task" "tasks.jsonl:7: task 't4' is in no ledger" part.jsonl s2.jsonl --tasks tasks.jsonl
rm -f out.jsonl
"$K" ledger merge s2.jsonl s1.jsonl --tasks tasks.jsonl -o out.jsonl 2>/dev/null
check "any order of shards merges" [ "$(ids out.jsonl)" = "t1 t3 t0 t2 t4" ]
printf '{"id":"t0"}\n' >fewer.jsonl
refused "a record that is no task" "s2.jsonl:1: id 't1' is not a task of 'fewer.jsonl'" s1.jsonl s2.jsonl --tasks fewer.jsonl
refused "a missing ledger" "cannot read 'nope.jsonl'" s1.jsonl nope.jsonl
"$K" ledger merge s1.jsonl >/dev/null 2>&1
check "merge without -o: a usage error" [ $? = 2 ]
"$K" ledger split s1.jsonl >/dev/null 2>&1
check "an unknown ledger subcommand: a usage error" [ $? = 2 ]
cp all.jsonl inc.jsonl
printf '{"id":"t9","certificate":"PASS"}\n' >more.jsonl
"$K" ledger merge inc.jsonl more.jsonl -o inc.jsonl 2>/dev/null
check "the output may be an input (merged into it)" [ "$(ids inc.jsonl)" = "t0 t2 t4 t1 t3 t9" ]

# ---------------------------------------------------------------- one ledger per batch
touch locked.jsonl
flock locked.jsonl sleep 5 &
lockpid=$!
sleep 0.5
batch locked.jsonl --shard 1/2
kill $lockpid 2>/dev/null
wait $lockpid 2>/dev/null
check "a ledger another batch holds is refused (exit $(cat locked.jsonl.rc))" [ "$(cat locked.jsonl.rc)" = 1 ]
check "and says why" grep -q "is being written by another batch" locked.jsonl.err
check "and is left as it was" [ ! -s locked.jsonl ]

# ---------------------------------------------------------------- --gpus
# A worker must start for its environment to show: a real pair, run by a
# stand-in python that prints CUDA_VISIBLE_DEVICES and exits (INCONCL).
S=$HERE/audit
cat >fakepy <<'PY'
#!/bin/sh
echo "kaudit-test-gpu=${CUDA_VISIBLE_DEVICES-unset}" >&2
exit 3
PY
chmod +x fakepy
for i in 0 1 2 3; do
    echo "{\"id\": \"g$i\", \"reference\": \"$S/tasks/softmax.py\", \"candidate\": \"$S/candidates/private_scratch.py\", \"contract\": \"$S/contracts/softmax.json\"}"
done >gtasks.jsonl
gpu_of() { # LEDGER ID: the GPU its worker saw
    sed -n 's/.*kaudit-test-gpu=//p' "$1.d/$2/runner/worker.log" 2>/dev/null | head -1
}
gbatch() { # LEDGER ARGS...
    _l=$1; shift
    timeout 120 "$K" audit --batch gtasks.jsonl -o "$_l" --device cpu --python "$T/fakepy" "$@" >/dev/null 2>"$_l.err"
    echo $? >"$_l.rc"
}
gbatch g1.jsonl --gpus 4 --jobs 2
check "--gpus 4: every worker saw GPU 4 ($(gpu_of g1.jsonl g0) $(gpu_of g1.jsonl g3))" \
    sh -c "[ '$(gpu_of g1.jsonl g0)$(gpu_of g1.jsonl g1)$(gpu_of g1.jsonl g2)$(gpu_of g1.jsonl g3)' = 4444 ]"
check "--gpus: the ledger line names the GPU" grep -q '"id":"g2",.*"gpu":"4"' g1.jsonl
CUDA_VISIBLE_DEVICES=3,5 gbatch g2.jsonl --gpus auto --jobs 1
check "--gpus auto --jobs 1 under CUDA_VISIBLE_DEVICES=3,5: one worker at a time, on 3" \
    sh -c "[ '$(gpu_of g2.jsonl g0)$(gpu_of g2.jsonl g3)' = 33 ]"
CUDA_VISIBLE_DEVICES=3,5 gbatch g3.jsonl --gpus auto
check "--gpus auto without --jobs: one worker per GPU, both used" \
    sh -c "[ \"\$(for i in 0 1 2 3; do sed -n 's/.*kaudit-test-gpu=//p' g3.jsonl.d/g\$i/runner/worker.log; done | sort -u | tr '\n' ' ')\" = '3 5 ' ]"
CUDA_VISIBLE_DEVICES= gbatch g4.jsonl --gpus auto
check "--gpus auto with CUDA_VISIBLE_DEVICES empty: no GPU, the environment left alone" \
    sh -c "[ '$(gpu_of g4.jsonl g0)' = '' ] && grep -q 'no GPU found' g4.jsonl.err && ! grep -q '\"gpu\"' g4.jsonl"
if ! ls /dev/nvidia[0-9]* >/dev/null 2>&1; then
    (unset CUDA_VISIBLE_DEVICES; gbatch g5.jsonl --gpus auto --jobs 2)
    check "--gpus auto on a machine without a GPU: exit 0, workers ran as without it" \
        sh -c "[ $(cat g5.jsonl.rc) = 0 ] && [ '$(gpu_of g5.jsonl g1)' = unset ] && [ \$(wc -l <g5.jsonl) = 4 ]"
fi
gbatch g6.jsonl --gpus '0,,1'
check "--gpus with an empty entry is refused" sh -c "[ $(cat g6.jsonl.rc) = 1 ] && grep -q \"'' is not a GPU\" g6.jsonl.err"

echo "$passes passed, $fails failed"
[ $fails = 0 ]
