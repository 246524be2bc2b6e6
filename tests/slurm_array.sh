#!/bin/sh
# tests/slurm_array.sh KAUDIT PYTHON SRCDIR - a batch of CPU audits as a
# 2-task Slurm job array on a one-node cluster started here: munged,
# slurmctld and slurmd by hand from Debian's packages (slurm-wlm, munge),
# with a generated slurm.conf (no cgroups, no systemd), all under a temporary
# directory and on ports of this test's own.  The array runs the shipped
# examples/slurm/kaudit-array.sbatch unchanged; its two shard ledgers must
# each hold their shard's tasks, and merged, every task exactly once.
# Exit 77 (skip) when Slurm, munge or root is missing, or PYTHON has no
# torch, unless CI is set: then each is a failure.  The daemons are stopped
# on every exit.
NAME=slurm_array.sh
skip() { # WHY: skip, or fail under CI
    if [ -n "${CI:-}" ]; then
        echo "FAIL: CI is set but $1"
        exit 1
    fi
    echo "SKIP: $1"
    exit 77
}
for tool in munged slurmctld slurmd sbatch sinfo scontrol; do
    command -v "$tool" >/dev/null 2>&1 || skip "'$tool' is not installed (apt-get install slurm-wlm munge)"
done
[ "$(id -u)" = 0 ] || skip "slurmd must run as root to start jobs"
. "$(dirname "$0")/audit_env.sh"
K=$(realpath "$K")
T=$(mktemp -d /tmp/kaudit-slurm.XXXXXX)
chmod 0755 "$T"
pids=""
stop_all() {
    # jobs first (a sbatch that timed out leaves them running under slurmstepd)
    if [ -n "${SLURM_CONF:-}" ]; then
        scancel --partition=test >/dev/null 2>&1
        sleep 1
    fi
    for p in $pids; do
        kill "$p" 2>/dev/null
    done
    # give each a moment, then make sure
    for p in $pids; do
        i=0
        while kill -0 "$p" 2>/dev/null && [ $i -lt 50 ]; do
            sleep 0.1
            i=$((i + 1))
        done
        kill -9 "$p" 2>/dev/null
    done
    rm -rf "$T"
}
trap stop_all EXIT
trap 'exit 1' INT TERM HUP
fails=0
check() { # what, condition...
    _what=$1; shift
    if "$@"; then echo "ok: $_what"; else echo "FAIL: $_what"; fails=$((fails + 1)); fi
}
# COMMAND... in the background, waited for: a signal to this script is
# handled at once (sh defers its traps until a foreground command ends), and
# stop_all ends the command too.  Its status in $rc.
waited() {
    "$@" &
    _bg=$!
    pids="$_bg $pids"
    wait $_bg
    rc=$?
}
show_logs() {
    for f in "$T"/munged.stdout "$T"/munged.log "$T"/slurmctld.stdout "$T"/slurmctld.log "$T"/slurmd.stdout "$T"/slurmd.log "$T"/out/*.out; do
        [ -f "$f" ] || continue
        echo "---- $f (last 30 lines)"
        tail -n 30 "$f"
    done
}
cannot_start() {
    show_logs
    skip "$1"
}

# ---------------------------------------------------------------- munge
mkdir -p "$T/munge" "$T/state" "$T/spool" "$T/out"
chmod 0700 "$T/munge"
head -c 1024 /dev/urandom >"$T/munge/munge.key"
chmod 0400 "$T/munge/munge.key"
# in the foreground, as our child: a test killed from outside takes it along
munged --foreground --force --key-file="$T/munge/munge.key" --socket="$T/munge/munge.sock" \
    --pid-file="$T/munge/munged.pid" --seed-file="$T/munge/munged.seed" --log-file="$T/munged.log" \
    >"$T/munged.stdout" 2>&1 &
pids=$!
i=0
while [ ! -S "$T/munge/munge.sock" ] && [ $i -lt 100 ]; do
    kill -0 "$pids" 2>/dev/null || break
    sleep 0.1
    i=$((i + 1))
done
[ -S "$T/munge/munge.sock" ] || cannot_start "munged did not start ($(cat "$T/munged.stdout"))"

# ---------------------------------------------------------------- slurm.conf
node=$(hostname -s 2>/dev/null || hostname)
cpus=$(nproc)
port=$((20000 + $$ % 20000))
cat >"$T/slurm.conf" <<CONF
ClusterName=kaudit-test
SlurmctldHost=$node(127.0.0.1)
SlurmctldPort=$port
SlurmdPort=$((port + 1))
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$T/munge/munge.sock
StateSaveLocation=$T/state
SlurmdSpoolDir=$T/spool
SlurmctldPidFile=$T/slurmctld.pid
SlurmdPidFile=$T/slurmd.pid
SlurmctldLogFile=$T/slurmctld.log
SlurmdLogFile=$T/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerType=sched/backfill
MpiDefault=none
ReturnToService=2
SlurmctldTimeout=30
SlurmdTimeout=30
NodeName=$node NodeAddr=127.0.0.1 CPUs=$cpus State=UNKNOWN
PartitionName=test Nodes=$node Default=YES MaxTime=INFINITE State=UP
CONF
export SLURM_CONF="$T/slurm.conf"

# ---------------------------------------------------------------- daemons
slurmctld -f "$T/slurm.conf" -i -D >"$T/slurmctld.stdout" 2>&1 &
pids="$pids $!"
slurmd -f "$T/slurm.conf" -N "$node" -D >"$T/slurmd.stdout" 2>&1 &
pids="$pids $!"
i=0
state=
while [ $i -lt 60 ]; do
    state=$(sinfo -h -n "$node" -o %t 2>/dev/null)
    case $state in idle*) break ;; esac
    sleep 1
    i=$((i + 1))
done
case $state in
idle*) echo "slurm: node $node idle after ${i} s ($cpus CPUs, ports $port-$((port + 1)))" ;;
*) cannot_start "the Slurm node did not become idle in 60 s (state '$state')" ;;
esac

# ---------------------------------------------------------------- the array
TASKS=$SRC/tests/audit/tasks CANDS=$SRC/tests/audit/candidates C=$SRC/tests/audit/contracts
cat >"$T/tasks.jsonl" <<TASKS
# two CPU audits of honest candidates, one per shard
{"id": "softmax-scratch", "reference": "$TASKS/softmax.py", "candidate": "$CANDS/private_scratch.py", "contract": "$C/softmax.json"}
{"id": "rowsum-reordered", "reference": "$TASKS/rowsum.py", "candidate": "$CANDS/reordered_reduction.py", "contract": "$C/rowsum.json"}
TASKS
t0=$(date +%s)
export KAUDIT=$K
waited timeout 600 sbatch --wait --array=0-1 --output="$T/out/slurm-%A_%a.out" --chdir="$T" \
    "$SRC/examples/slurm/kaudit-array.sbatch" "$T/tasks.jsonl" "$T/out" --device cpu --jobs 1 --probe off \
    >"$T/sbatch.out" 2>&1
echo "sbatch --wait --array=0-1: exit $rc, $(( $(date +%s) - t0 )) s: $(cat "$T/sbatch.out")"
check "the array job ended with exit 0" [ "$rc" = 0 ]
ids() { # LEDGER: its ids, sorted, one line
    "$PY" -c 'import json,sys; print(" ".join(sorted(json.loads(l)["id"] for l in open(sys.argv[1]) if l.strip())))' "$1"
}
check "shard 1 (array task 0) holds the first task line" [ "$(ids "$T/out/ledger.0.jsonl" 2>/dev/null)" = softmax-scratch ]
check "shard 2 (array task 1) holds the second" [ "$(ids "$T/out/ledger.1.jsonl" 2>/dev/null)" = rowsum-reordered ]
check "each array task said which shard it ran" \
    grep -q "SLURM_ARRAY_TASK_ID=1 of SLURM_ARRAY_TASK_COUNT=2 (shard 2/2)" "$T"/out/slurm-*_1.out
"$K" ledger merge "$T/out/ledger.0.jsonl" "$T/out/ledger.1.jsonl" --tasks "$T/tasks.jsonl" \
    -o "$T/out/ledger.jsonl" >"$T/merge.out" 2>&1
rc=$?
check "the shard ledgers merge (exit $rc: $(cat "$T/merge.out"))" [ "$rc" = 0 ]
check "the merged ledger holds every task once" \
    [ "$(ids "$T/out/ledger.jsonl" 2>/dev/null)" = "rowsum-reordered softmax-scratch" ]
semantic() { # LEDGER ID
    "$PY" -c 'import json,sys
for l in open(sys.argv[1]):
    r = json.loads(l)
    if r["id"] == sys.argv[2]: print(r["axes"]["semantic"])' "$1" "$2"
}
check "softmax-scratch was audited: semantic PASS" [ "$(semantic "$T/out/ledger.jsonl" softmax-scratch)" = PASS ]
check "rowsum-reordered was audited: semantic PASS" [ "$(semantic "$T/out/ledger.jsonl" rowsum-reordered)" = PASS ]
# a shard's ledger given twice is refused
"$K" ledger merge "$T/out/ledger.0.jsonl" "$T/out/ledger.1.jsonl" "$T/out/ledger.0.jsonl" -o "$T/twice.jsonl" \
    >"$T/twice.out" 2>&1
rc=$?
check "a ledger given twice is refused, naming the file and line (exit $rc)" \
    sh -c "[ $rc = 1 ] && grep -q 'ledger.0.jsonl:1: id .softmax-scratch. is a duplicate' '$T/twice.out' && [ ! -e '$T/twice.jsonl' ]"
# an array with a gap (ids 0 and 2: SLURM_ARRAY_TASK_COUNT=2, MIN=0, MAX=2,
# STEP=1) cannot be split without losing a shard: each task refuses to start
waited timeout 300 sbatch --wait --array=0,2 --output="$T/out/gap-%A_%a.out" --chdir="$T" \
    "$SRC/examples/slurm/kaudit-array.sbatch" "$T/tasks.jsonl" "$T/gap" --device cpu --jobs 1 --probe off \
    >"$T/sbatch-gap.out" 2>&1
check "an array with a gap fails (sbatch --wait exit $rc)" [ "$rc" != 0 ]
check "its tasks say why" sh -c "[ \$(grep -l 'a batch splits only over an array of consecutive ids' '$T'/out/gap-*.out | wc -l) = 2 ]"
check "and audit nothing" sh -c "! cat '$T'/gap/ledger.*.jsonl 2>/dev/null | grep -q ."
if [ $fails -gt 0 ]; then
    show_logs
    echo "$fails check(s) failed"
    exit 1
fi
echo "all checks passed"
