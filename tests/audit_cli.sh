#!/bin/sh
# tests/audit_cli.sh KAUDIT PYTHON SRCDIR - `kaudit audit` on CPU against the
# bad inputs of tests/audit/bad/ (each ends, never hangs, never passes, and
# says why), one honest control, the usage errors, the generated contract, and
# batches (one ledger line per pair, also after a kill -9 and a restart).
# Exit 77 (skip) when PYTHON has no torch, unless CI is set (then FAIL).
NAME=audit_cli.sh
. "$(dirname "$0")/audit_env.sh"
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
TASKS=$SRC/tests/audit/tasks BAD=$SRC/tests/audit/bad CANDS=$SRC/tests/audit/candidates
fails=0 passes=0
t_start=$(date +%s)
check() { # what, condition...
    _what=$1; shift
    if "$@"; then passes=$((passes + 1)); else echo "FAIL: $_what"; fails=$((fails + 1)); fi
}
# xfail what why condition...: a known bug in a file this test may not fix.
# Counted apart; once the condition holds, XPASS fails so the marker goes.
xfails=0
xfail() {
    _what=$1 _why=$2; shift 2
    if "$@"; then echo "XPASS (remove the xfail): $_what"; fails=$((fails + 1))
    else echo "XFAIL: $_what: $_why"; xfails=$((xfails + 1)); fi
}
has_code() { # RECORD CODE: the finding CODE is among semantic.findings[]
    [ "$(jget "$1" "any(f.get('code') == '$2' for f in r['semantic']['findings'])")" = True ]
}
# audit NAME [args...]: one audit under timeout 120 into $T/NAME, status in $T/NAME.rc
audit() {
    name=$1; shift
    t0=$(date +%s)
    timeout 120 "$K" audit --device cpu -d "$T/$name" --json "$T/$name.json" "$@" >"$T/$name.out" 2>"$T/$name.err"
    echo $? >"$T/$name.rc"
    echo "  $name: exit $(cat "$T/$name.rc"), $(( $(date +%s) - t0 )) s"
}
rc_is() { [ "$(cat "$T/$1.rc")" = "$2" ]; }
err_has() { grep -q -- "$2" "$T/$1.err"; }

# ---------------------------------------------------------------- bad inputs
# name | reference | candidate | extra args | exit | certificate | semantic verdict | finding code
# Why each verdict (semantic/semantic.c): a stage that fails before any
# candidate output exists (import/build of either party, state alignment) and
# a runner that ends before its "done" event (timeout, its recorder killed),
# a candidate's process that ends during a call (os._exit) and a call that its
# confinement refuses (a signal to its parent) leave no executable audit path:
# KAT_SEM_UNRESOLVED findings, so INCONCLUSIVE.  A candidate that raises on the reference's valid inputs is
# evidence against it (KAT_SEM_CONVICTS "candidate-raised"): FAIL.  On CPU
# the certificate is INCONCL (measurement is UNSUPPORTED, implementation too
# unless the causal probe convicts): exit 11, never 0; but a semantic or an
# implementation FAIL is a FAIL certificate whatever the other axes say
# (evidence against the candidate): exit 10.
# The fork sleeper computes the right answer: its semantic verdict is PASS;
# what is asserted for it is that the audit ends and the sleeper does not
# survive it.  It and the renamed-state candidate compute with PyTorch's
# softmax and linear operators, which their tasks' contracts forbid: the
# causal probe finds their outputs depend on that work (implementation FAIL).
cases='ref_import_raises|bad/ref_import_raises.py|candidates/private_scratch.py||11|INCONCL|INCONCLUSIVE|reference-failed
ref_no_get_inputs|bad/ref_no_get_inputs.py|candidates/private_scratch.py||11|INCONCL|INCONCLUSIVE|reference-failed
cand_syntax_error|tasks/softmax.py|bad/cand_syntax_error.py||11|INCONCL|INCONCLUSIVE|candidate-build-failed
cand_hang|tasks/softmax.py|bad/cand_hang.py|--timeout 15|11|INCONCL|INCONCLUSIVE|runner-timeout
cand_exit3|tasks/softmax.py|bad/cand_exit3.py||11|INCONCL|INCONCLUSIVE|candidate-process-ended
cand_kill_parent|tasks/softmax.py|bad/cand_kill_parent.py||11|INCONCL|INCONCLUSIVE|confinement-refused
cand_fork_sleeper|tasks/softmax.py|bad/cand_fork_sleeper.py||10|FAIL|PASS|slots-passed
cand_zombie_leader|tasks/softmax.py|bad/cand_zombie_leader.py||10|FAIL|PASS|slots-passed
cand_init_mismatch|tasks/linear.py|bad/cand_init_mismatch.py||11|INCONCL|INCONCLUSIVE|candidate-build-failed
cand_extra_param|tasks/linear.py|bad/cand_extra_param.py||11|INCONCL|INCONCLUSIVE|candidate-only-state
cand_raises|tasks/softmax.py|bad/cand_raises.py||10|FAIL|FAIL|candidate-raised
cand_renamed_state|tasks/linear.py|bad/cand_renamed_state.py||10|FAIL|PASS|slots-passed
cand_fills_memory|tasks/softmax.py|bad/cand_fills_memory.py|--memory-limit 1G|11|INCONCL|INCONCLUSIVE|runner-resource-limit
cand_fills_disk|tasks/softmax.py|bad/cand_fills_disk.py|--disk-limit 512M|11|INCONCL|INCONCLUSIVE|runner-resource-limit'

path_of() { # tasks/x.py -> $SRC/tests/audit/tasks/x.py
    echo "$SRC/tests/audit/$1"
}
echo "bad inputs:"
echo "$cases" | while IFS='|' read -r name ref cand extra want_rc want_cert want_verdict want_code; do
    # shellcheck disable=SC2086
    audit "$name" --reference "$(path_of "$ref")" --candidate "$(path_of "$cand")" $extra
    printf '%s|%s|%s|%s|%s\n' "$name" "$want_rc" "$want_cert" "$want_verdict" "$want_code" >>"$T/cases"
done
while IFS='|' read -r name want_rc want_cert want_verdict want_code; do
    rec=$T/$name.json
    check "$name: exit $want_rc (got $(cat "$T/$name.rc"))" rc_is "$name" "$want_rc"
    check "$name: a record" [ -s "$rec" ]
    got=$(jget "$rec" "r['axes']['semantic']['verdict']")
    check "$name: semantic $want_verdict (got $got)" [ "$got" = "$want_verdict" ]
    codes=$(jget "$rec" "sorted(set(f['code'] for f in r['semantic']['findings']))")
    check "$name: finding $want_code (got $codes)" has_code "$rec" "$want_code"
    check "$name: certificate $want_cert" [ "$(jget "$rec" "r['certificate']")" = "$want_cert" ]
    if [ "$want_verdict" != PASS ]; then
        check "$name: a root cause" [ -n "$(jget "$rec" "r['axes']['semantic']['root_cause']")" ]
    fi
done <"$T/cases"
check "cand_fills_memory: stopped over its memory limit, and says by how much" \
    [ "$(jget "$T/cand_fills_memory.json" "(lambda o: o['resource'] == 'memory' and o['used_bytes'] > o['limit_bytes'] == 1 << 30)(r['worker']['stopped_over_limit'])")" = True ]
check "cand_fills_disk: stopped over its disk limit, and says by how much" \
    [ "$(jget "$T/cand_fills_disk.json" "(lambda o: o['resource'] == 'disk' and o['used_bytes'] > o['limit_bytes'] == 512 << 20)(r['worker']['stopped_over_limit'])")" = True ]
check "cand_fills_disk: stopped well before its 4 GiB (the audit's directory under 3 GiB)" \
    [ "$(du -sk "$T/cand_fills_disk" | cut -f1)" -lt 3145728 ]
check "cand_hang: the limits the worker ran under are in its record, none crossed, the peaks measured below them" \
    [ "$(jget "$T/cand_hang.json" "(lambda w: 0 < w['memory_peak_bytes'] < w['limits']['memory_bytes'] and 0 < w['disk_peak_bytes'] < w['limits']['disk_bytes'] and w['stopped_over_limit'] is None)(r['worker'])")" = True ]
check "cand_hang: the record says the worker timed out" \
    [ "$(jget "$T/cand_hang.json" "r['worker']['timed_out']")" = True ]
# The sleeper ran in a session of its own; nothing carrying its marker is
# left.  Every thread's command line is read: the zombie leader's first
# thread has ended (its own is empty), its other thread's carries the marker.
sleep 1
no_thread_with() { # MARKER
    for c in /proc/[0-9]*/task/[0-9]*/cmdline; do
        if tr '\0' ' ' <"$c" 2>/dev/null | grep -q "$1"; then
            echo "  left over: ${c%/cmdline}: $(tr '\0' ' ' <"$c")"
            return 1
        fi
    done
    return 0
}
check "cand_fork_sleeper: no process with the marker survives the audit" no_thread_with kaudit_bad_fork_sleeper
check "cand_zombie_leader: no thread with the marker survives the audit" no_thread_with kaudit_bad_zombie_leader
check "cand_renamed_state: the state was aligned by position" \
    [ "$(jget "$T/cand_renamed_state.json" "r['semantic']['state_alignment']")" = positional ]
# The runner whose recorder was killed was orphaned: it is gone too.
no_runner_of() { ! grep -qs -- "$T/$1/" /proc/[0-9]*/cmdline; }
check "cand_kill_parent: no process of that audit survives it" no_runner_of cand_kill_parent
check "cand_fills_memory: no process of that audit survives it" no_runner_of cand_fills_memory
check "cand_fills_disk: no process of that audit survives it" no_runner_of cand_fills_disk

# ---------------------------------------------------------------- the control
echo "control and CLI:"
audit control --reference "$TASKS/softmax.py" --candidate "$CANDS/private_scratch.py" \
    --contract "$SRC/tests/audit/contracts/softmax.json"
# private_scratch computes its softmax with PyTorch's operators (max, exp, sum),
# which the softmax contract forbids: the causal probe convicts it on CPU
check "control: exit 10 on CPU (the causal probe)" rc_is control 10
check "control: semantic PASS" [ "$(jget "$T/control.json" "r['axes']['semantic']['verdict']")" = PASS ]
check "control: phases_s, each shown, within the runner's time" \
    [ "$(jget "$T/control.json" "all(r['phases_s'][k] is not None and r['phases_s'][k] >= 0 for k in ('runner_start', 'reference', 'candidate_build', 'slots', 'probe', 'timing', 'runner')) and sum(r['phases_s'][k] for k in ('runner_start', 'reference', 'candidate_build', 'slots')) <= r['phases_s']['runner'] + 1e-6")" = True ]
check "control: phases_s, the fp64 twin's share within the reference's, the wait for the candidate's process shown" \
    [ "$(jget "$T/control.json" "r['phases_s']['reference_fp64'] is not None and 0 <= r['phases_s']['reference_fp64'] <= r['phases_s']['reference'] and r['phases_s']['party_wait'] is not None and r['phases_s']['party_wait'] >= 0")" = True ]
check "control: phases_s, the build requested before the reference's slots, its overlap within the reference's time" \
    [ "$(jget "$T/control.json" "r['phases_s']['build_overlapped'] is not None and 0 < r['phases_s']['build_overlapped'] <= r['phases_s']['reference']")" = True ]
check "control: implementation FAIL on CPU, by the causal probe" \
    [ "$(jget "$T/control.json" "r['axes']['implementation']['verdict'] + ' ' + r['probe']['state']")" = "FAIL decided" ]
check "control: the probe's counterfactual in the finding" \
    [ "$(jget "$T/control.json" "[f['fields']['output_change'] > 1e-3 for f in r['analysis']['findings'] if f['code'] == 'forbidden-work-used'][0]")" = True ]
audit control_noprobe --reference "$TASKS/softmax.py" --candidate "$CANDS/private_scratch.py" \
    --contract "$SRC/tests/audit/contracts/softmax.json" --probe off
# a call that sends a program's output to /dev/null (Triton's compiler on its
# first launch): no write outside the audit's directories, the candidate's
# process and the runner's guard alike
audit quiet --reference "$TASKS/softmax.py" --candidate "$CANDS/quiet_subprocess.py" \
    --contract "$SRC/tests/audit/contracts/softmax.json"
check "quiet_subprocess: /dev/null opened for writing is no write outside (semantic PASS)" \
    [ "$(jget "$T/quiet.json" "r['axes']['semantic']['verdict']")" = PASS ]
check "quiet_subprocess: no wrote-outside-directory finding" \
    [ "$(jget "$T/quiet.json" "any(f.get('code') == 'wrote-outside-directory' for f in r['semantic']['findings'])")" = False ]
# Beneath a folder the worker's uid may enter ($T is mktemp's, 0700: there
# each audit of this file keeps kaudit's privileges for that alone).
O=$(mktemp -d)
chmod 711 "$O"
# audit_o NAME [args...]: as audit, into $O/NAME (its record $T/NAME.json)
audit_o() {
    name=$1; shift
    timeout 120 "$K" audit --device cpu -d "$O/$name" --json "$T/$name.json" "$@" >"$T/$name.out" 2>&1
}
# a kernel cache beneath ~ (CuPy, tilelang, FlashInfer) and os.makedirs on a
# folder that is there: the worker's home is its own, and a folder that
# exists is no write
audit_o caches --reference "$TASKS/softmax.py" --candidate "$CANDS/keeps_caches.py" \
    --contract "$SRC/tests/audit/contracts/softmax.json"
check "keeps_caches: a cache beneath its home and a folder made that was there (semantic PASS)" \
    [ "$(jget "$T/caches.json" "r['axes']['semantic']['verdict']")" = PASS ]
check "keeps_caches: both files in its home" \
    [ -f "$O/caches/home/.kernel_cache/built.bin" -a -f "$O/caches/home/.kernel_cache/first-call.bin" ]
# the machine's environment naming caches outside the audit (PyTorch's
# compiler, CuPy, Numba): the worker's are beneath its own cache
(export TORCHINDUCTOR_CACHE_DIR="$O/outside-inductor" CUPY_CACHE_DIR="$O/outside-cupy" NUMBA_CACHE_DIR="$O/outside-numba"
    audit_o env_caches --reference "$TASKS/softmax.py" --candidate "$CANDS/env_caches.py" \
        --contract "$SRC/tests/audit/contracts/softmax.json")
check "env_caches: the compilers' cache variables beneath the worker's cache (semantic PASS)" \
    [ "$(jget "$T/env_caches.json" "r['axes']['semantic']['verdict']")" = PASS ]
check "env_caches: nothing written where the machine's variables said" \
    [ ! -e "$O/outside-inductor" -a ! -e "$O/outside-cupy" -a ! -e "$O/outside-numba" ]
# a library's own error raised while it handled a refused write (a JIT whose
# cache cannot be written): unresolved, not the candidate's wrong result
audit_o wraps --reference "$TASKS/softmax.py" --candidate "$CANDS/wraps_refusal.py" \
    --contract "$SRC/tests/audit/contracts/softmax.json"
check "wraps_refusal: a refusal reported as the library's own error is unresolved (semantic INCONCLUSIVE)" \
    [ "$(jget "$T/wraps.json" "r['axes']['semantic']['verdict']")" = INCONCLUSIVE ]
check "wraps_refusal: no call convicted (candidate-raised), each confinement-refused" \
    [ "$(jget "$T/wraps.json" "sorted({f['code'] for f in r['semantic']['findings'] if f['kind'] != 'reported'} & {'candidate-raised', 'confinement-refused'})")" = '["confinement-refused"]' ]
# each call's inputs handed as a sealed memory file over a socket of the
# parties' own (KernelBench's reach 4 GB: never through the disk); a candidate
# that closes its end at import: the runner hands files from then on, says so
# once, and waits on nothing; KAUDIT_HANDOFF=file asks for files
audit_o handoff --reference "$TASKS/softmax.py" --candidate "$CANDS/closes_handoff_socket.py" \
    --contract "$SRC/tests/audit/contracts/softmax.json" --probe off
handoff_events() { # NAME: the hand-off of its party's start, then the handoff events' statuses
    "$PY" -c "import json, sys
ev = [json.loads(l) for l in open(sys.argv[1])]
print(' '.join([e.get('handoff', '?') for e in ev if e['event'] == 'party' and e.get('status') == 'started']
               + [e['status'] for e in ev if e['event'] == 'handoff']))" "$O/$1/runner/events.jsonl"
}
check "closes_handoff_socket: memory at the start, files once from its import on, semantic PASS" \
    [ "$(handoff_events handoff) $(jget "$T/handoff.json" "r['axes']['semantic']['verdict']")" = "memory files PASS" ]
# one that keeps its end open and takes nothing: at most 4 memory files wait
# for it, then files (the send never waits: before, it waited for ever once
# the socket's queue was full, and the audit ended at its time limit)
audit_o hoards --reference "$TASKS/softmax.py" --candidate "$CANDS/hoards_handoff_socket.py" \
    --contract "$SRC/tests/audit/contracts/softmax.json" --probe off
check "hoards_handoff_socket: files after 4 memory files not taken, and the audit ends" \
    [ "$(handoff_events hoards) $(grep -c 'memory files handed and not taken' "$O/hoards/runner/events.jsonl")" = "memory files 1" ]
check "hoards_handoff_socket: the calls it could not load are its own (semantic FAIL, candidate-raised)" \
    [ "$(jget "$T/hoards.json" "r['axes']['semantic']['verdict'] + ' ' + ','.join(sorted({f['code'] for f in r['semantic']['findings'] if f['kind'] == 'convicts'}))")" = "FAIL candidate-raised" ]
# a fresh instance that raises when built: the inputs handed for its calls
# are never taken, and the next call still gets its own (the newest of each
# name), never a value mismatch made by stale inputs
audit_o fresh_raises --reference "$TASKS/softmax.py" --candidate "$CANDS/fresh_instance_raises.py" \
    --contract "$SRC/tests/audit/contracts/softmax.json" --probe off
check "fresh_instance_raises: convicted by its raising alone, no value mismatch from inputs it never took" \
    [ "$(jget "$T/fresh_raises.json" "r['axes']['semantic']['verdict'] + ' ' + ','.join(sorted({f['code'] for f in r['semantic']['findings'] if f['kind'] == 'convicts'}))")" = "FAIL candidate-raised" ]
(export KAUDIT_HANDOFF=file
    audit_o handoff_files --reference "$TASKS/softmax.py" --candidate "$CANDS/closes_handoff_socket.py" \
        --contract "$SRC/tests/audit/contracts/softmax.json" --probe off)
check "KAUDIT_HANDOFF=file: files from the start, semantic PASS" \
    [ "$(handoff_events handoff_files) $(jget "$T/handoff_files.json" "r['axes']['semantic']['verdict']")" = "files: KAUDIT_HANDOFF=file PASS" ]
# a Python that only kaudit's own user may read (pyenv or conda beneath
# /root): the worker keeps kaudit's privileges and the record says why,
# rather than a runner that cannot start (exit 126 and no verdict)
if [ "$(id -u)" = 0 ]; then
    check "keeps_caches: run by the worker's own uid" \
        [ "$(jget "$T/caches.json" "r['confinement']['privileges'].split(':')[0]")" = unprivileged ]
    mkdir "$O/own-python" && chmod 700 "$O/own-python" && ln -s "$(command -v "$PY")" "$O/own-python/python3"
    audit_o own_python --python "$O/own-python/python3" --reference "$TASKS/softmax.py" \
        --candidate "$CANDS/private_scratch.py" --contract "$SRC/tests/audit/contracts/softmax.json"
    check "a Python the worker's uid cannot read: privileges kept, the interpreter named" \
        [ "$(jget "$T/own_python.json" "r['confinement']['privileges'].startswith('kept: ') and r['confinement']['privileges'].endswith(' cannot read $O/own-python/python3')")" = True ]
    check "a Python the worker's uid cannot read: the semantic axis judged (PASS), the certificate withheld" \
        [ "$(jget "$T/own_python.json" "r['axes']['semantic']['verdict'] + ' ' + str(r['certificate'] != 'PASS')")" = "PASS True" ]
fi
rm -rf "$O"
check "control --probe off: exit 11, implementation UNSUPPORTED on CPU" \
    [ "$(cat "$T/control_noprobe.rc") $(jget "$T/control_noprobe.json" "r['axes']['implementation']['verdict'] + ' ' + r['probe']['state']")" = "11 UNSUPPORTED not-run" ]
audit bad_probe --reference "$TASKS/softmax.py" --candidate "$CANDS/private_scratch.py" --probe maybe
check "bad --probe: exit 2" rc_is bad_probe 2
check "control: measurement UNSUPPORTED on CPU" \
    [ "$(jget "$T/control.json" "r['axes']['measurement']['verdict']")" = UNSUPPORTED ]
check "control: pinned contract, not generated" \
    [ "$(jget "$T/control.json" "r['contract']['generated']")" = False ]

# the timing checks on the CPU (perf_counter; docs/timing.md): the protocol's
# shape in the log and the record; never a reportable speedup here (the
# measurement axis is UNSUPPORTED on CPU), no stream differential (no streams)
echo "timing:"
audit timed --reference "$TASKS/softmax.py" --candidate "$CANDS/private_scratch.py" \
    --contract "$SRC/tests/audit/contracts/softmax.json" --timing on --claimed-speedup 2.5
check "timing: exit 10 on CPU (the causal probe convicts the control)" rc_is timed 10
check "timing: the A/A screen in ABBA/BAAB/ABBA" \
    [ "$(jget "$T/timed.json" "','.join(r['timing']['aa']['orders'])")" = ABBA,BAAB,ABBA ]
shape() { # events.jsonl: the checks whose batches are 3 of 20 latencies per arm
    "$PY" -c 'import json, sys
ev = [json.loads(l) for l in open(sys.argv[1]) if "\"timing\"" in l]
print(",".join(e["check"] for e in ev if len(e["batches"]) == 3
               and all(len(b["a"]) == 20 and len(b["b"]) == 20 for b in e["batches"])))' "$1"
}
check "timing: 3 batches of 20 latencies per arm, every check" [ "$(shape "$T/timed/runner/events.jsonl")" = aa,speedup ]
check "timing: the A/A verdict and its figures" \
    [ "$(jget "$T/timed.json" "type(r['timing']['aa']['passed']).__name__ + str(r['timing']['aa']['cv_a'] > 0)")" = boolTrue ]
# (the ratio is of the medians of all latencies, the interval bootstraps the ratio of the three
# batch medians: on a loaded CPU the first can fall outside the second, which the method allows)
check "timing: a measured speedup and its interval" \
    [ "$(jget "$T/timed.json" "0 < r['timing']['speedup']['interval'][0] <= r['timing']['speedup']['interval'][1] and r['timing']['speedup']['ratio'] > 0")" = True ]
check "timing: not reportable on CPU, and why" \
    [ "$(jget "$T/timed.json" "r['timing']['speedup']['reportable'] is False and bool(r['timing']['speedup']['why_not'])")" = True ]
check "timing: the claimed speedup recorded" [ "$(jget "$T/timed.json" "r['timing']['claimed_speedup']")" = 2.5 ]
check "timing: no stream differential on CPU" [ "$(jget "$T/timed.json" "r['timing']['stream']")" = "" ]
check "timing: printed" grep -q "^  speedup " "$T/timed.out"
check "timing off (the CPU default): nothing timed" \
    [ "$(jget "$T/control.json" "r['timing']['requested'] is False and r['timing']['aa'] is None")" = True ]
audit bad_timing --reference "$TASKS/softmax.py" --candidate "$CANDS/private_scratch.py" --timing maybe
check "bad --timing: exit 2" rc_is bad_timing 2
audit bad_claim --reference "$TASKS/softmax.py" --candidate "$CANDS/private_scratch.py" --claimed-speedup -1
check "bad --claimed-speedup: exit 2" rc_is bad_claim 2

# a build folder relative to its working directory (load_inline's
# build_directory='cuda_extensions'): its own directory, no write outside
audit relative_build_dir --reference "$TASKS/softmax.py" --candidate "$CANDS/relative_build_dir.py" --probe off
check "relative_build_dir: semantic PASS" \
    [ "$(jget "$T/relative_build_dir.json" "r['axes']['semantic']['verdict']")" = PASS ]
check "relative_build_dir: no write refused" sh -c "! grep -q wrote-outside-directory '$T/relative_build_dir.json'"
check "relative_build_dir: the folder is in its working directory" \
    [ -f "$T/relative_build_dir/work/cuda_extensions/softmax_ext/build.ninja" ]

# writes outside its directories: refused (Python by the audit hook, native
# by Landlock where the kernel has it), said, INCONCLUSIVE
echo "writes outside:"
KAUDIT_TEST_OUTSIDE_PY=$T/outside-py.txt KAUDIT_TEST_OUTSIDE_NATIVE=$T/outside-native.txt \
    audit cand_writes_outside --reference "$TASKS/softmax.py" --candidate "$BAD/cand_writes_outside.py" \
    --contract "$SRC/tests/audit/contracts/softmax.json"
# (its softmax is PyTorch's, which the contract forbids: the causal probe makes the certificate FAIL)
check "cand_writes_outside: exit 10" rc_is cand_writes_outside 10
check "cand_writes_outside: semantic INCONCLUSIVE" \
    [ "$(jget "$T/cand_writes_outside.json" "r['axes']['semantic']['verdict']")" = INCONCLUSIVE ]
check "cand_writes_outside: finding wrote-outside-directory" \
    has_code "$T/cand_writes_outside.json" wrote-outside-directory
check "cand_writes_outside: the root cause names the file" \
    sh -c "grep -qF '$T/outside-py.txt' '$T/cand_writes_outside.json'"
check "cand_writes_outside: the Python write did not happen" [ ! -e "$T/outside-py.txt" ]
mech=$(jget "$T/cand_writes_outside.json" "r['confinement']['mechanism']")
echo "  confinement: $mech ($(jget "$T/cand_writes_outside.json" "r['confinement']['why_not']"))"
if [ "$mech" = landlock ]; then
    check "cand_writes_outside: the native write did not happen (Landlock)" [ ! -e "$T/outside-native.txt" ]
else
    check "cand_writes_outside: unconfined only with a reason" \
        [ -n "$(jget "$T/cand_writes_outside.json" "r['confinement']['why_not']")" ]
fi
check "cand_writes_outside: the runner's directory is a write root" \
    [ "$(jget "$T/cand_writes_outside.json" "r['confinement']['write_roots'][0]")" = "$(cd "$T/cand_writes_outside" && pwd -P)/runner" ]
check "cand_writes_outside: the session is no write root" \
    [ "$(jget "$T/cand_writes_outside.json" "any(x.endswith('/session') or x.endswith('cand_writes_outside') for x in r['confinement']['write_roots'])")" = False ]
protection=$(jget "$T/cand_writes_outside.json" "r['confinement']['session_protection']")
echo "  session_protection: $protection"
case $protection in
read-only*) check "cand_writes_outside: the session was read-only for the worker" true ;;
*) check "cand_writes_outside: an unprotected session says why ($protection)" [ -n "$protection" ] ;;
esac
check "control: the honest audit was not refused any write" \
    sh -c "! grep -q write_outside '$T/control/runner/events.jsonl'"
# the candidate's process starts before the runner imports PyTorch (its own
# import runs beside the runner's): its "started" event says how long before
# the runner adopted it
check "control: the candidate's process was started before the runner's PyTorch import" \
    grep -q '"status": "started", "early": ' "$T/control/runner/events.jsonl"

# ---------------------------------------------------------------- usage errors
audit no_reference --candidate "$CANDS/private_scratch.py"
check "no --reference: exit 2" rc_is no_reference 2
check "no --reference: said" err_has no_reference "--reference is required"
audit bad_device --reference "$TASKS/softmax.py" --candidate "$CANDS/private_scratch.py" --device tpu
check "bad --device: exit 2" rc_is bad_device 2
check "bad --device: said" err_has bad_device "--device takes cuda or cpu"
audit bad_seed --reference "$TASKS/softmax.py" --candidate "$CANDS/private_scratch.py" --seed -3
check "bad --seed: exit 2" rc_is bad_seed 2
check "bad --seed: said" err_has bad_seed "--seed takes"
audit bad_seed2 --reference "$TASKS/softmax.py" --candidate "$CANDS/private_scratch.py" --seed 12abc
check "bad --seed 12abc: exit 2" rc_is bad_seed2 2
audit missing_cand --reference "$TASKS/softmax.py" --candidate "$T/no-such-candidate.py"
check "missing candidate: exit 1" rc_is missing_cand 1
check "missing candidate: the file named" err_has missing_cand "$T/no-such-candidate.py"
check "missing candidate: no record" [ ! -e "$T/missing_cand.json" ]

# ---------------------------------------------------------------- generated contract
audit generated --reference "$TASKS/softmax.py" --candidate "$CANDS/private_scratch.py"
# the generated contract forbids the core classes: the control's softmax by PyTorch operators is convicted
check "generated contract: exit 10 (the causal probe)" rc_is generated 10
check "generated contract: DIR/contract.json" [ -s "$T/generated/contract.json" ]
check "generated contract: DIR/manifest.json" [ -s "$T/generated/manifest.json" ]
check "generated contract: contract.generated true" \
    [ "$(jget "$T/generated.json" "r['contract']['generated']")" = True ]
check "generated contract: semantic PASS" \
    [ "$(jget "$T/generated.json" "r['axes']['semantic']['verdict']")" = PASS ]
# what is loaded from the candidate's caches is its own code (a Triton
# kernel's launcher is a module in its TRITON_CACHE_DIR); the reference's,
# which the runner's environment names, are not: a Triton candidate's kernels
# were unattributed, implementation INCONCLUSIVE (R-A), on the H100 when the
# contract took the runner's caches
own_caches_named() {
    "$PY" -c "import json, sys
objs = json.load(open(sys.argv[1]))['candidate']['objects']
seen = json.load(open(sys.argv[2]))['build_store']['worker_sees_cache_at']
want = [seen + '/' + d + '/*' for d in ('torch_extensions', 'triton', 'torchinductor')]
sys.exit(0 if all(w in objs for w in want) and not any('reference-' in o for o in objs) else 1)" \
        "$T/generated/contract.json" "$T/generated.json"
}
check "generated contract: the candidate's caches are its own code, the reference's are not" own_caches_named

# ---------------------------------------------------------------- batches
echo "batches:"
C=$SRC/tests/audit/contracts
cat >"$T/b1.jsonl" <<EOF
{"id": "good-softmax", "reference": "$TASKS/softmax.py", "candidate": "$CANDS/private_scratch.py", "contract": "$C/softmax.json", "task": "softmax", "slot": 0}
{"id": "good-rowsum", "reference": "$TASKS/rowsum.py", "candidate": "$CANDS/reordered_reduction.py", "contract": "$C/rowsum.json", "claimed_speedup": 3.0, "task": "rowsum", "slot": 0}
{"id": "bad-syntax", "reference": "$TASKS/softmax.py", "candidate": "$BAD/cand_syntax_error.py", "weak": "ACCEPT", "task": "softmax", "slot": 1}
{"id": "missing-file", "reference": "$TASKS/softmax.py", "candidate": "$T/no-such-candidate.py", "task": "softmax", "slot": 2}
EOF
t0=$(date +%s)
timeout 300 "$K" audit --batch "$T/b1.jsonl" -o "$T/l1.jsonl" --jobs 2 --device cpu --timing on --quiet \
    >"$T/b1.out" 2>"$T/b1.err"
echo $? >"$T/b1.rc"
echo "  batch of 4, --jobs 2: exit $(cat "$T/b1.rc"), $(( $(date +%s) - t0 )) s"
ledger_ok() { # LEDGER ID...: every line whole JSON, each id exactly once, nothing else
    "$PY" - "$@" <<'EOF'
import json, sys, collections
path, ids = sys.argv[1], sys.argv[2:]
data = open(path).read()
ok = data.endswith("\n")
seen = collections.Counter()
for i, line in enumerate(data.splitlines(), 1):
    try:
        seen[json.loads(line)["id"]] += 1
    except Exception as e:
        print("  torn or bad ledger line %d: %r (%s)" % (i, line[:80], e)); ok = False
if sorted(seen.elements()) != sorted(ids):
    print("  ledger ids %s, expected each of %s once" % (dict(seen), ids)); ok = False
sys.exit(0 if ok else 1)
EOF
}
lline() { # LEDGER ID EXPR-ON-r
    "$PY" - "$1" "$2" "$3" <<'EOF'
import json, sys
for line in open(sys.argv[1]):
    r = json.loads(line)
    if r["id"] == sys.argv[2]:
        try:
            print(eval(sys.argv[3], {"r": r}))
        except Exception as e:
            print("<error: %s>" % e)
EOF
}
check "batch: exactly 4 ledger lines" [ "$(wc -l <"$T/l1.jsonl")" = 4 ]
check "batch: one line per id" ledger_ok "$T/l1.jsonl" good-softmax good-rowsum bad-syntax missing-file
check "batch: good-softmax semantic PASS" [ "$(lline "$T/l1.jsonl" good-softmax "r['axes']['semantic']")" = PASS ]
check "batch: good-rowsum semantic PASS" [ "$(lline "$T/l1.jsonl" good-rowsum "r['axes']['semantic']")" = PASS ]
check "batch: the claimed speedup beside the measured one" \
    [ "$(lline "$T/l1.jsonl" good-rowsum "r['speedup']['claimed'] == 3.0 and r['speedup']['ratio'] > 0")" = True ]
check "batch: no claim, null" [ "$(lline "$T/l1.jsonl" good-softmax "r['speedup']['claimed']")" = None ]
check "batch: bad-syntax semantic INCONCLUSIVE" \
    [ "$(lline "$T/l1.jsonl" bad-syntax "r['axes']['semantic']")" = INCONCLUSIVE ]
check "batch: bad-syntax record in LEDGER.d/ID" [ -s "$T/l1.jsonl.d/bad-syntax/record.json" ]
check "batch: bad-syntax record has its id" \
    [ "$(jget "$T/l1.jsonl.d/bad-syntax/record.json" "r.get('id')")" = bad-syntax ]
check "batch: missing-file certificate INCONCL" \
    [ "$(lline "$T/l1.jsonl" missing-file "r['certificate']")" = INCONCL ]
reason_names_file() {
    lline "$T/l1.jsonl" missing-file "r['certificate_reason']" | grep -qF "$T/no-such-candidate.py"
}
check "batch: missing-file reason names the file ($(lline "$T/l1.jsonl" missing-file "r['certificate_reason']"))" \
    reason_names_file
check "batch: task and slot copied from the task line" \
    [ "$(lline "$T/l1.jsonl" bad-syntax "(r['task'], r['slot'])")" = "('softmax', 1)" ]
check "batch: task and slot on a line without a record" \
    [ "$(lline "$T/l1.jsonl" missing-file "(r['task'], r['slot'])")" = "('softmax', 2)" ]
# the ledger is a pool for the selection gates (docs/validators.md): 2 tasks, 4 slots
"$K" gates "$T/l1.jsonl" --format json -o "$T/g1.json" 2>"$T/g1.err"
check "gates on the batch's ledger: 2 tasks, 4 slots" \
    [ "$(jget "$T/g1.json" "(r['tasks'], r['slots'], sorted(r['task_names']))")" = "(2, 4, ['rowsum', 'softmax'])" ]
# 'weak' decided bad-syntax alone (ACCEPT): S0 ships it on softmax and abstains on rowsum
check "gates: S0 of the batch's weak decision" [ "$(jget "$T/g1.json" "sorted((n, s and s['id']) for n, s in \
zip(r['task_names'], [g for g in r['gates'] if g['gate'] == 'S0'][0]['selections']))")" = \
    '[["rowsum", null], ["softmax", "bad-syntax"]]' ]

# out of GPU memory while another audit shared it: run again alone, one line
cat >"$T/b3.jsonl" <<EOF
{"id": "oom-once", "reference": "$TASKS/softmax.py", "candidate": "$BAD/cand_oom_first_attempt.py", "contract": "$C/softmax.json"}
{"id": "neighbour", "reference": "$TASKS/rowsum.py", "candidate": "$CANDS/reordered_reduction.py", "contract": "$C/rowsum.json"}
EOF
# (the marker is written beneath a directory the batch allows: --allow-write
# reaches each pair's audit)
mkdir -p "$T/oom"
KAUDIT_TEST_OOM_MARKER=$T/oom/marker timeout 300 "$K" audit --batch "$T/b3.jsonl" -o "$T/l3.jsonl" --jobs 2 \
    --device cpu --quiet --allow-write "$T/oom" >"$T/b3.out" 2>"$T/b3.err"
echo $? >"$T/b3.rc"
check "oom retry: exit 0" [ "$(cat "$T/b3.rc")" = 0 ]
check "oom retry: one line per id" ledger_ok "$T/l3.jsonl" oom-once neighbour
check "oom retry: the line says it was retried alone" \
    [ -n "$(lline "$T/l3.jsonl" oom-once "r.get('retried_alone', '')")" ]
check "oom retry: the second attempt's semantic PASS" \
    [ "$(lline "$T/l3.jsonl" oom-once "r['axes']['semantic']")" = PASS ]
check "oom retry: the neighbour was not retried" \
    [ -z "$(lline "$T/l3.jsonl" neighbour "r.get('retried_alone', '')")" ]
first_attempt_oom() {
    grep -q resource-exhausted "$T/l3.jsonl.d/oom-once.first-attempt/record.json"
}
check "oom retry: the first attempt's record is kept, resource-exhausted" first_attempt_oom

# a candidate that fills the memory beside another audit: stopped at the
# batch's --memory-limit, run again alone (stopped again), and the batch goes on
cat >"$T/b5.jsonl" <<EOF
{"id": "fills", "reference": "$TASKS/softmax.py", "candidate": "$BAD/cand_fills_memory.py", "contract": "$C/softmax.json"}
{"id": "beside", "reference": "$TASKS/rowsum.py", "candidate": "$CANDS/reordered_reduction.py", "contract": "$C/rowsum.json"}
{"id": "compiles", "reference": "$TASKS/softmax.py", "candidate": "$CANDS/compiles_helper.py", "contract": "$C/softmax.json"}
EOF
timeout 300 "$K" audit --batch "$T/b5.jsonl" -o "$T/l5.jsonl" --jobs 2 --device cpu --memory-limit 1G \
    >"$T/b5.out" 2>"$T/b5.err"
echo $? >"$T/b5.rc"
check "memory limit in a batch: exit 0, one line per id" ledger_ok "$T/l5.jsonl" fills beside compiles
check "memory limit in a batch: the filler INCONCL, retried alone" \
    [ "$(lline "$T/l5.jsonl" fills "r['certificate'] + ' ' + str(bool(r.get('retried_alone')))")" = "INCONCL True" ]
check "memory limit in a batch: its neighbour judged (semantic PASS)" \
    [ "$(lline "$T/l5.jsonl" beside "r['axes']['semantic']")" = PASS ]
# a candidate that runs a compiler: its record's builds name it, the ledger sums
# each tool (build_tools_s), the batch's summary gives each tool's median
check "build tools: the record's build names cc with its own wall time" \
    [ "$(jget "$T/l5.jsonl.d/compiles/record.json" "any(b['tools'].get('cc', 0) > 0 for b in r['builds'])")" = True ]
check "build tools: the ledger line sums them" \
    [ "$(lline "$T/l5.jsonl" compiles "r['build_tools_s']['cc'] > 0")" = True ]
check "build tools: the batch's summary gives each tool's median" grep -q "build tools, median seconds.* cc [0-9]" "$T/b5.err"

# kill -9 in the middle, then again: every id once, no torn line
# k0 hangs (until --timeout 20): it is running when the batch is killed
cat >"$T/b2.jsonl" <<EOF
{"id": "k0", "reference": "$TASKS/softmax.py", "candidate": "$BAD/cand_hang.py"}
{"id": "k1", "reference": "$TASKS/softmax.py", "candidate": "$CANDS/private_scratch.py", "contract": "$C/softmax.json"}
{"id": "k2", "reference": "$TASKS/rowsum.py", "candidate": "$CANDS/reordered_reduction.py", "contract": "$C/rowsum.json"}
{"id": "k3", "reference": "$TASKS/softmax.py", "candidate": "$BAD/cand_syntax_error.py"}
{"id": "k4", "reference": "$TASKS/softmax.py", "candidate": "$CANDS/nan_inf.py", "contract": "$C/softmax.json"}
EOF
t0=$(date +%s)
"$K" audit --batch "$T/b2.jsonl" -o "$T/l2.jsonl" --jobs 2 --device cpu --timeout 20 --quiet >"$T/b2a.out" 2>&1 &
bpid=$!
n=0
while [ "$n" -lt 1200 ] && ! [ -s "$T/l2.jsonl" ] && kill -0 $bpid 2>/dev/null; do
    sleep 0.1; n=$((n + 1))
done
before=$(wc -l <"$T/l2.jsonl" 2>/dev/null || echo 0)
kill -9 $bpid 2>/dev/null
wait $bpid 2>/dev/null
echo "  killed the batch with $before ledger line(s) after $(( $(date +%s) - t0 )) s"
check "kill -9: the ledger had a line before the kill" [ "$before" -ge 1 ]
# its audits and their workers go with it (parent-death signal), rather than
# running on beside the restarted batch in the same directories
none_left() { # PATTERN: no live process has it in its command line, within 10 s
    n=0
    while grep -qsF -- "$1" /proc/[0-9]*/cmdline; do
        [ $n -ge 100 ] && return 1
        sleep 0.1; n=$((n + 1))
    done
}
check "kill -9: no audit of the killed batch runs on" none_left "$T/l2.jsonl.d/"
timeout 300 "$K" audit --batch "$T/b2.jsonl" -o "$T/l2.jsonl" --jobs 2 --device cpu --timeout 20 --quiet >"$T/b2b.out" 2>&1
echo $? >"$T/b2b.rc"
echo "  restarted batch: exit $(cat "$T/b2b.rc"), $(( $(date +%s) - t0 )) s in all"
check "kill -9 and restart: exit 0" [ "$(cat "$T/b2b.rc")" = 0 ]
check "kill -9 and restart: every id exactly once, no torn line" ledger_ok "$T/l2.jsonl" k0 k1 k2 k3 k4
check "kill -9 and restart: k0 (hangs) semantic INCONCLUSIVE" \
    [ "$(lline "$T/l2.jsonl" k0 "r['axes']['semantic']")" = INCONCLUSIVE ]
check "kill -9 and restart: k4 semantic FAIL" [ "$(lline "$T/l2.jsonl" k4 "r['axes']['semantic']")" = FAIL ]

# bad batch files: named with the line, exit 1
cat >"$T/dup.jsonl" <<EOF
{"id": "a", "reference": "$TASKS/softmax.py", "candidate": "$CANDS/private_scratch.py"}
{"id": "a", "reference": "$TASKS/rowsum.py", "candidate": "$CANDS/reordered_reduction.py"}
EOF
timeout 60 "$K" audit --batch "$T/dup.jsonl" -o "$T/ldup.jsonl" --device cpu >"$T/dup.out" 2>"$T/dup.err"
echo $? >"$T/dup.rc"
check "duplicate id: exit 1" rc_is dup 1
check "duplicate id: file and line named" err_has dup "$T/dup.jsonl:2:.*used twice"
check "duplicate id: nothing audited" [ ! -s "$T/ldup.jsonl" ]
printf '%s\n' "{\"id\": \"a\", \"reference\": \"$TASKS/softmax.py\", \"candidate\": \"$CANDS/private_scratch.py\"}" \
    '{"id": "b", "reference": ' >"$T/badline.jsonl"
timeout 60 "$K" audit --batch "$T/badline.jsonl" -o "$T/lbad.jsonl" --device cpu >"$T/badline.out" 2>"$T/badline.err"
echo $? >"$T/badline.rc"
check "bad line: exit 1" rc_is badline 1
check "bad line: file and line named" err_has badline "$T/badline.jsonl:2:"
printf '%s\n' "{\"id\": \"a\", \"reference\": \"$TASKS/softmax.py\", \"candidate\": \"$CANDS/private_scratch.py\", \"claimed_speedup\": \"fast\"}" \
    >"$T/badclaim.jsonl"
timeout 60 "$K" audit --batch "$T/badclaim.jsonl" -o "$T/lbc.jsonl" --device cpu >"$T/badclaim.out" 2>"$T/badclaim.err"
echo $? >"$T/badclaim.rc"
check "bad claimed_speedup: exit 1" rc_is badclaim 1
check "bad claimed_speedup: file and line named" err_has badclaim "$T/badclaim.jsonl:1: claimed_speedup"
printf '%s\n' "{\"id\": \"a\", \"reference\": \"$TASKS/softmax.py\", \"candidate\": \"$CANDS/private_scratch.py\", \"task\": \"softmax\"}" \
    >"$T/badslot.jsonl"
timeout 60 "$K" audit --batch "$T/badslot.jsonl" -o "$T/lbs.jsonl" --device cpu >"$T/badslot.out" 2>"$T/badslot.err"
echo $? >"$T/badslot.rc"
check "task without slot: exit 1" rc_is badslot 1
check "task without slot: file and line named" err_has badslot "$T/badslot.jsonl:1: task and slot go together"

echo "audit_cli: $passes passed, $fails failed, $xfails known bugs (xfail), $(( $(date +%s) - t_start )) s"
[ "$fails" -eq 0 ]
