#!/bin/sh
# tests/audit_attacks.sh KAUDIT PYTHON SRCDIR ATTACK [DEVICE] - one hostile
# candidate of tests/audit/attacks through `kaudit audit --device DEVICE`
# (cpu unless given: CI; cuda for the GPU-only ones) on task matmul with
# its pinned contract (gemm forbidden), and the property a correct defence
# gives.  These tests are the attacker's half of the security rule ("first
# the attack, shown working against today's tree, then the defence"): on a
# tree without the defence they FAIL, and say what the attack achieved.
#
# On --device cpu the certificate is never PASS (the implementation and
# measurement axes are UNSUPPORTED unless the probe convicts), so besides
# "certificate not PASS" each test checks the axis that a GPU audit would
# turn into a false PASS, or the attack's own marker:
#   core_pattern      no /tmp/kaudit-attack-core-pattern-<worker pid>.marker
#                     (the kernel ran no helper of the candidate's as root) and
#                     /proc/sys/kernel/core_pattern unchanged
#   proc_sys          work/attack-proc-sys.marker has no "ok" line
#   signal_ancestors  work/attack-signal-ancestors.marker counts 0
#   forge_events, steal_reference, precomputed (outputs are zeros)
#                     the semantic axis is FAIL or INCONCLUSIVE, with a cause
#   collect_directory (outputs are zeros; every collect answered with a
#                     directory) the semantic axis FAIL: an answer naming no
#                     file of its own is its failure, not a lost process
#   drop_inputs (torch.matmul; no --contract, --probe off, the "inputs" event hidden)
#                     the implementation axis INCONCLUSIVE with the cause
#                     contract-ungenerated, or FAIL (never judged against a
#                     contract that forbids nothing), or the event out of the
#                     candidate's reach (intact; on the CPU then UNSUPPORTED)
#   probe_pop_mode, probe_thread, probe_pool (torch.matmul, hidden from the probe)
#                     the implementation axis FAIL, or the probe unresolved
#   probe_unclassified_op (the GEMM by F.embedding_bag, in no work family)
#                     the implementation axis FAIL
#   probe_detect_zeros (torch.matmul; zeros while the probe watches)
#                     the implementation axis FAIL with probe-baseline-mismatch
#   chmod_runner (task scratch_tmp, --probe off: zeros after 40 calls; chmods
#                     the runner's tensors/ 0555 while the reference's later
#                     slots are written)
#                     the semantic axis FAIL or INCONCLUSIVE, with a cause:
#                     the runner's lost write where the chmod landed; no
#                     check skipped for it
#   probe_overwrite_reference (torch.matmul; a constant while the probe
#                     watches; nameless replays whose files the runner copied
#                     over its own reference files of the probe)
#                     the implementation axis FAIL, or the probe unresolved
#   chmod_reference_tmp (task scratch_tmp, --probe off: right everywhere;
#                     chmods the reference's TMPDIR 0555 at import)
#                     the semantic axis INCONCLUSIVE, reference-refused; no
#                     slot replaced or check skipped for the refusal
#   poison_reference_tmp (task shape_compiled, --require shapes: right only on
#                     the task's own shape, the reference's per-shape builds
#                     laid out in TMPDIR and the working directory)
#                     both shape probes convict, the semantic axis not PASS
# The adaptations of gpu-mode/pygpubench's exploits (pg_*.py; the table in
# docs/threat-model.md, "pygpubench's exploits"):
#   pg_gc_nan, pg_gc_copy, pg_combined, pg_heap_sig_scan, pg_stack_sig_scan,
#   pg_thread_fd, pg_fd_overwrite, pg_gpu_scan_zeros (outputs zeros, or only
#   what they stole)          the semantic axis FAIL or INCONCLUSIVE, with a cause
#   pg_pipe_interpose, pg_file_struct, pg_seccomp_trap (torch.matmul, the
#   probe's report rewritten)  the implementation axis FAIL, or the probe unresolved
#   pg_proc_mem_bypass        work/attack-proc-mem.marker: foreign_readable=0
#   pg_ptrace                 work/attack-ptrace.marker: foreign_attached=0
#   pg_replace_torch          every "planted" path of work/attack-replace-torch.marker
#                             beneath the audit's work/ tmp/ cache/ home/ party/
#   GPU only (DEVICE cuda; on the CPU they are skipped, 77):
#   pg_gpu_scan_zeros         as above
#   pg_event_array, pg_function_detour, pg_got_patch, pg_error_counter,
#   pg_warmup (correct outputs, the timing faked)
#   forge_reference_phase (torch.matmul on a thread born in a forged
#                             "kaudit:reference" range, the probe's answer
#                             rewritten)  the implementation axis FAIL
#   timing_hog_reference (its own copies on the GPU while the reference is
#                             timed)  the measurement axis not PASS, no speedup reported
#                             the measurement axis FAIL or INCONCLUSIVE with a
#                             cause (or the semantic axis, where the trick cost
#                             the outputs their correctness)
# Exit 0 when the defence holds, 1 when the attack worked.
# Exit 77 (skip) when PYTHON has no torch, unless CI is set (then FAIL).
NAME=audit_attacks.sh
ATTACK=$4
. "$(dirname "$0")/audit_env.sh"
DEVICE=${5:-cpu}
[ -n "$ATTACK" ] || { echo "usage: $NAME KAUDIT PYTHON SRCDIR ATTACK [DEVICE]" >&2; exit 2; }
A=$SRC/tests/audit
CP=/proc/sys/kernel/core_pattern
saved_cp=$(cat "$CP" 2>/dev/null)
T=$(mktemp -d)
# run as root, kaudit starts the worker as a uid of its own, which must reach
# the audit directory (mktemp's is 0700); elsewhere it keeps kaudit's
# privileges and the certificate is withheld (docs/audit.md, "Confinement")
chmod 711 "$T"
restore_cp() {
    # the candidate restores core_pattern itself; this is the second line
    if [ -n "$saved_cp" ] && [ "$(cat "$CP" 2>/dev/null)" != "$saved_cp" ]; then
        printf '%s\n' "$saved_cp" >"$CP" 2>/dev/null && echo "restored $CP to '$saved_cp'"
    fi
}
trap 'restore_cp; rm -rf "$T"' EXIT
trap 'exit 130' INT TERM HUP

case "$ATTACK" in
core_pattern) cand=escape_core_pattern ;;
proc_sys) cand=proc_sys_write ;;
signal_ancestors|forge_events|steal_reference|probe_pop_mode|probe_thread|probe_pool|probe_unclassified_op|probe_detect_zeros|precomputed|collect_directory) cand=$ATTACK ;;
drop_inputs) cand=drop_inputs_event ;;
pg_gc_nan|pg_gc_copy|pg_combined|pg_heap_sig_scan|pg_stack_sig_scan|pg_thread_fd|pg_fd_overwrite|\
pg_pipe_interpose|pg_file_struct|pg_seccomp_trap|pg_proc_mem_bypass|pg_ptrace|pg_replace_torch|\
pg_event_array|pg_function_detour|pg_got_patch|pg_gpu_scan_zeros|pg_error_counter|pg_warmup) cand=$ATTACK ;;
timing_hog_reference|forge_reference_phase|chmod_runner|probe_overwrite_reference|chmod_reference_tmp) cand=$ATTACK ;;
poison_reference_tmp) cand=$ATTACK ;;
*) echo "$NAME: unknown attack '$ATTACK'" >&2; exit 2 ;;
esac

case "$ATTACK:$DEVICE" in
pg_event_array:cpu|pg_function_detour:cpu|pg_got_patch:cpu|pg_gpu_scan_zeros:cpu|pg_error_counter:cpu|pg_warmup:cpu|\
timing_hog_reference:cpu|forge_reference_phase:cpu)
    echo "SKIP: $ATTACK attacks CUDA (events, streams, the driver): GPU only, run it with DEVICE cuda"
    exit 77 ;;
esac

D=$T/audit
# drop_inputs attacks the contract written from the runner's evidence: no
# --contract; and no probe, whose own conviction on the CPU would hide how
# the implementation axis is judged without a contract (on a GPU the trace
# judges it: PASS against a contract that forbids nothing)
contract="--contract $A/contracts/matmul.json --manifest $A/contracts/manifest.json"
task=matmul
[ "$ATTACK" = drop_inputs ] && contract="--probe off"
# its victim is a reference that compiles per shape (tests/audit/tasks/
# shape_compiled.py); the shape probes, which it poisons, gate
[ "$ATTACK" = poison_reference_tmp ] && task=shape_compiled contract="--require shapes --probe off"
[ "$ATTACK" = chmod_reference_tmp ] || [ "$ATTACK" = chmod_runner ] && task=scratch_tmp contract="--probe off"
# shellcheck disable=SC2086
timeout 300 "$K" audit --reference "$A/tasks/$task.py" --candidate "$A/attacks/$cand.py" $contract \
    --device "$DEVICE" -d "$D" --json "$T/record.json" --quiet >"$T/out" 2>&1 </dev/null
rc=$?
restore_cp
R=$T/record.json
cert=$(jget "$R" 'r["certificate"]')
echo "attack $ATTACK ($cand.py, --device $DEVICE): exit $rc"
echo "  certificate:    $cert: $(jget "$R" 'r["certificate_reason"]')"
echo "  semantic:       $(jget "$R" 'r["axes"]["semantic"]["verdict"]'): $(jget "$R" 'r["axes"]["semantic"]["root_cause"] or "%d slots judged, %d calls compared" % (r["semantic"]["slots_judged"], r["semantic"]["calls_compared"])')"
echo "  implementation: $(jget "$R" 'r["axes"]["implementation"]["verdict"]'): $(jget "$R" 'r["axes"]["implementation"]["root_cause"]')"
echo "  probe:          $(jget "$R" 'r["probe"]["state"]') $(jget "$R" 'r["probe"].get("why") or ""')"
echo "  privileges:     $(jget "$R" 'r["confinement"].get("privileges")')"
echo "  confinement:    $(jget "$R" 'r["confinement"]["mechanism"]') abi $(jget "$R" 'r["confinement"]["landlock_abi"]'), session $(jget "$R" 'r["confinement"]["session_protection"]')"

fails=0
broken() { echo "ATTACK WORKED: $*"; fails=$((fails + 1)); }

# every attack: a record, and a certificate that is not PASS and says why
case "$cert" in
FAIL|INCONCL)
    [ -n "$(jget "$R" 'r["certificate_reason"]')" ] || broken "certificate $cert without a reason" ;;
*) broken "certificate '$cert' (want FAIL or INCONCL with a cause); kaudit said: $(tail -5 "$T/out")" ;;
esac

semantic_not_pass() {
    sem=$(jget "$R" 'r["axes"]["semantic"]["verdict"]')
    case "$sem" in
    FAIL|INCONCLUSIVE) [ -n "$(jget "$R" 'r["axes"]["semantic"]["root_cause"]')" ] ||
        broken "semantic $sem without a root cause" ;;
    *) broken "semantic axis '$sem' for a candidate whose own output is zeros (a false PASS; on a GPU with any compute of its own, a PASS certificate)" ;;
    esac
}

case "$ATTACK" in
core_pattern)
    pid=$("$PY" -c 'import json,sys
for l in open(sys.argv[1]):
    e = json.loads(l)
    if e["event"] == "start": print(e["pid"]); break' "$D/runner/events.jsonl" 2>/dev/null)
    echo "  candidate's log: $(tr '\n' ';' <"$D/work/attack-core-pattern.result" 2>/dev/null)"
    m=/tmp/kaudit-attack-core-pattern-$pid.marker
    if [ -n "$pid" ] && [ -f "$m" ]; then
        broken "the kernel ran the candidate's core_pattern helper outside the confinement: $m: $(cat "$m")"
        rm -f "$m"
    else
        echo "  no marker $m"
    fi
    [ "$(cat "$CP" 2>/dev/null)" = "$saved_cp" ] || broken "core_pattern still changed after the audit"
    ;;
proc_sys)
    mk=$D/work/attack-proc-sys.marker
    echo "  marker: $(tr '\n' ';' <"$mk" 2>/dev/null)"
    if [ -f "$mk" ] && grep -q ': ok' "$mk"; then
        broken "the worker wrote a kernel tunable or opened kernel devices for writing: $(grep ': ok' "$mk" | tr '\n' ';')"
    fi
    ;;
signal_ancestors)
    mk=$D/work/attack-signal-ancestors.marker
    echo "  marker: $(tr '\n' ';' <"$mk" 2>/dev/null)"
    n=$(sed -n 's/^signallable_ancestors=\([0-9]*\) .*/\1/p' "$mk" 2>/dev/null)
    if [ -n "$n" ] && [ "$n" -gt 0 ]; then
        broken "the candidate may signal $n process(es) above the worker"
    fi
    ;;
forge_events)
    echo "  forged log entries: $(grep -o '"cand": "tensors//s[0-9]*c[0-9]*-ref.kt"' "$D/runner/events.jsonl" 2>/dev/null | wc -l)"
    semantic_not_pass ;;
steal_reference) semantic_not_pass ;;
chmod_reference_tmp)
    echo "  candidate:      $(cat "$D/work/attack-chmod-reference-tmp.marker" 2>/dev/null)"
    refused=$(grep -c '"event": "\(slot_replaced\|slot_unavailable\|reported_slot_skipped\|[a-z_]*_skipped\)".*\(PermissionError\|Permission denied\)' "$D/runner/events.jsonl" 2>/dev/null)
    echo "  replaced or skipped for a refusal: $refused"
    [ "${refused:-0}" -eq 0 ] || broken "$refused slot(s) or check(s) replaced or skipped because the candidate made the reference's folder read-only"
    cause=$(jget "$R" 'r["axes"]["semantic"]["root_cause"]')
    case "$(jget "$R" 'r["axes"]["semantic"]["verdict"]'):$cause" in
    INCONCLUSIVE:*refused*) ;;
    *) broken "semantic '$(jget "$R" 'r["axes"]["semantic"]["verdict"]')' ($cause) for a reference refused by the kernel (want INCONCLUSIVE: reference-refused)" ;;
    esac ;;
chmod_runner)
    marker=$(cat "$D/work/attack-chmod-runner.marker" 2>/dev/null)
    echo "  candidate:      $marker"
    skipped=$(grep -c '"event": "[a-z_]*_skipped".*Permission' "$D/runner/events.jsonl" 2>/dev/null)
    echo "  skipped for a refused write: $skipped"
    [ "${skipped:-0}" -eq 0 ] || broken "$skipped check(s) skipped because the runner's own write was refused"
    semantic_not_pass
    # where the chmod landed, the runner's lost write is the cause
    case "$marker" in
    "chmod 0555: ok") case "$(jget "$R" 'r["axes"]["semantic"]["root_cause"]')" in
        *"cannot write"*) ;;
        *) broken "the runner's tensors/ was made read-only, and the cause is not its lost write: $(jget "$R" 'r["axes"]["semantic"]["root_cause"]')" ;;
        esac ;;
    esac ;;
collect_directory)
    sem=$(jget "$R" 'r["axes"]["semantic"]["verdict"]')
    [ "$sem" = FAIL ] || broken "semantic axis '$sem' for a candidate whose outputs are zeros and whose every answer names a directory (want FAIL: its answer is its own failure, not a lost process)" ;;
precomputed)
    echo "  worker: $(grep '^precomputed:' "$D/runner/worker.log" 2>/dev/null | tr '\n' ';')"
    semantic_not_pass ;;
drop_inputs)
    impl=$(jget "$R" 'r["axes"]["implementation"]["verdict"]')
    cause=$(jget "$R" 'r["axes"]["implementation"]["root_cause"]')
    # out of its reach (the candidate in a process of its own): the runner's
    # log still holds its "inputs" event and the contract was written from it
    reached=yes
    grep -q '"event": "inputs"' "$D/runner/events.jsonl" 2>/dev/null &&
        [ "$(jget "$R" 'r["contract"]["generated"]')" = True ] && reached=no
    echo "  evidence:       the runner's inputs event $([ $reached = no ] && echo intact || echo gone)"
    case "$impl" in
    FAIL) ;;
    INCONCLUSIVE) case "$cause" in *contract-ungenerated*) ;; *) broken "implementation INCONCLUSIVE without the cause contract-ungenerated: $cause" ;; esac ;;
    UNSUPPORTED) [ "$reached" = no ] || broken "implementation UNSUPPORTED and the runner's inputs event gone (want INCONCLUSIVE: contract-ungenerated)" ;;
    *) broken "implementation '$impl' against a fallback contract that forbids nothing (want INCONCLUSIVE: contract-ungenerated)" ;;
    esac
    ;;
pg_*)
    for mk in "$D"/work/attack-*.marker; do
        [ -f "$mk" ] && echo "  $(basename "$mk"): $(head -c 1500 "$mk" | tr '\n' ';')"
    done ;;
esac

probe_hidden() {
    impl=$(jget "$R" 'r["axes"]["implementation"]["verdict"]')
    state=$(jget "$R" 'r["probe"]["state"]')
    if [ "$impl" != FAIL ] && [ "$state" != unresolved ]; then
        broken "torch.matmul delegated and hidden from the causal probe: implementation '$impl', probe '$state' (want FAIL, or the probe unresolved)"
    fi
}

case "$ATTACK" in
pg_gc_nan|pg_gc_copy|pg_combined|pg_heap_sig_scan|pg_stack_sig_scan|pg_thread_fd|pg_fd_overwrite|pg_gpu_scan_zeros)
    semantic_not_pass ;;
pg_event_array|pg_function_detour|pg_got_patch|pg_error_counter|pg_warmup)
    sem=$(jget "$R" 'r["axes"]["semantic"]["verdict"]')
    meas=$(jget "$R" 'r["axes"]["measurement"]["verdict"]')
    echo "  measurement:    $meas: $(jget "$R" 'r["axes"]["measurement"]["root_cause"]')"
    case "$meas:$sem" in
    FAIL:*|INCONCLUSIVE:*|*:FAIL|*:INCONCLUSIVE) ;;
    *) broken "measurement axis '$meas' (semantic '$sem') for a candidate whose timing is faked (want FAIL or INCONCLUSIVE)" ;;
    esac ;;
pg_pipe_interpose|pg_file_struct|pg_seccomp_trap|probe_overwrite_reference) probe_hidden ;;
forge_reference_phase)
    impl=$(jget "$R" 'r["axes"]["implementation"]["verdict"]')
    echo "  forged:         $(cat "$D/work/attack-forge.marker" 2>/dev/null)"
    [ "$impl" = FAIL ] || broken "torch.matmul on a thread born in a forged reference phase, the probe's answer rewritten: implementation '$impl' (want FAIL)" ;;
timing_hog_reference)
    meas=$(jget "$R" 'r["axes"]["measurement"]["verdict"]')
    reportable=$(jget "$R" 'r["timing"]["speedup"] and r["timing"]["speedup"].get("reportable")')
    echo "  measurement:    $meas: $(jget "$R" 'r["axes"]["measurement"]["root_cause"]')"
    echo "  speedup:        $(jget "$R" 'r["timing"]["speedup"] and r["timing"]["speedup"].get("ratio")') reportable $reportable"
    echo "  hog:            $(cat "$D/work/attack-hog.marker" 2>/dev/null)"
    [ "$meas" != PASS ] || broken "the reference was timed beside the candidate's copies: measurement PASS (speedup reportable: $reportable)"
    [ "$reportable" != True ] || broken "a speedup reported against a reference slowed by the candidate's work" ;;
poison_reference_tmp)
    # each shape probe convicts: the reference compiled its own helper for
    # it (65x513 beneath its TMPDIR, 33x512 beneath its working directory)
    convicted=$(jget "$R" "' '.join(sorted({f.get('slot_name') or '' for f in r['semantic']['findings'] if f['kind'] == 'convicts'} & {'shape_odd_sizes', 'shape_batch'}))")
    echo "  shape probes convicting: ${convicted:-none}"
    echo "  planted:        $(ls "$D/tmp" "$D/work/build" 2>/dev/null | grep kaudit_shape_ | tr '\n' ' ')"
    [ "$convicted" = "shape_batch shape_odd_sizes" ] ||
        broken "a candidate right only on the task's own shape passed shape probes whose reference it had laid out (convicting: '${convicted:-none}'; want shape_batch and shape_odd_sizes)"
    sem=$(jget "$R" 'r["axes"]["semantic"]["verdict"]')
    [ "$sem" != PASS ] || broken "semantic PASS, with gating shape probes, for a candidate wrong on every shape but the task's own" ;;
pg_proc_mem_bypass)
    n=$(sed -n 's/^foreign_readable=\([0-9]*\) .*/\1/p' "$D/work/attack-proc-mem.marker" 2>/dev/null)
    [ -n "$n" ] || broken "no foreign_readable count in work/attack-proc-mem.marker (the attack did not run)"
    [ "${n:-0}" -eq 0 ] || broken "the candidate's process read the memory of $n other process(es)"
    semantic_not_pass ;;
pg_ptrace)
    n=$(sed -n 's/^foreign_attached=\([0-9]*\) .*/\1/p' "$D/work/attack-ptrace.marker" 2>/dev/null)
    [ -n "$n" ] || broken "no foreign_attached count in work/attack-ptrace.marker (the attack did not run)"
    [ "${n:-0}" -eq 0 ] || broken "a child of the candidate's process attached with ptrace to $n process(es) above it"
    semantic_not_pass ;;
pg_replace_torch)
    mk=$D/work/attack-replace-torch.marker
    [ -f "$mk" ] || broken "no work/attack-replace-torch.marker (the attack did not run)"
    sed -n 's/^planted //p' "$mk" 2>/dev/null | while read -r p; do
        case "$p" in
        "$D"/work/*|"$D"/tmp/*|"$D"/cache/*|"$D"/home/*|"$D"/party/*) ;;
        *) echo "$p" ;;
        esac
    done >"$T/planted"
    [ -s "$T/planted" ] && broken "the candidate's process could create a module where others import from: $(tr '\n' ' ' <"$T/planted")" ;;
probe_pop_mode|probe_thread|probe_pool)
    impl=$(jget "$R" 'r["axes"]["implementation"]["verdict"]')
    state=$(jget "$R" 'r["probe"]["state"]')
    if [ "$impl" != FAIL ] && [ "$state" != unresolved ]; then
        broken "torch.matmul delegated and hidden from the causal probe: implementation '$impl', probe '$state' (want FAIL, or the probe unresolved)"
    fi
    ;;
probe_unclassified_op)
    impl=$(jget "$R" 'r["axes"]["implementation"]["verdict"]')
    [ "$impl" = FAIL ] || broken "the GEMM done by F.embedding_bag, an operator in no work family: implementation '$impl', probe '$(jget "$R" 'r["probe"]["state"]')' (want FAIL: forbidden-work-used)"
    ;;
probe_detect_zeros)
    impl=$(jget "$R" 'r["axes"]["implementation"]["verdict"]')
    cause=$(jget "$R" 'r["axes"]["implementation"]["root_cause"]')
    case "$impl:$cause" in
    FAIL:*probe-baseline-mismatch*) ;;
    *) broken "torch.matmul delegated, zeros returned to the probe: implementation '$impl' ($cause), probe '$(jget "$R" 'r["probe"]["state"]')' (want FAIL: probe-baseline-mismatch)" ;;
    esac
    ;;
esac

if [ "$fails" -eq 0 ]; then
    echo "audit_attack_$ATTACK: defended"
    exit 0
fi
echo "audit_attack_$ATTACK: the attack worked ($fails)"
exit 1
