#!/bin/sh
# tests/audit_stress_v2.sh KAUDIT PYTHON SRCDIR - stress v2's controls.
# What a stress slot may convict (docs/audit.md, "What gates"): under the paper's contract-supported
# policy, the default, a layout slot gates only where the task's contract
# declares that layout valid (stress.layouts) or --require asks for it; else it
# runs as a reported slot whose difference is a finding that names it.
#   1. contiguous_only (right on contiguous rows, wrong on strided and
#      transposed views), task softmax, its contract (no layouts declared):
#      semantic PASS, two reported slots, findings layout-strided and
#      layout-transposed (signals), native seeds in slots 8 and 9
#   2. the same with --require layouts: semantic FAIL on slot 8 layout_strided
#   3. the same against softmax-layouts.json (stress.layouts declares both):
#      semantic FAIL, stress_policy.gating "strided,transposed"
#   4. private_scratch (right on every layout), default: PASS, no layout finding
#   5. contiguous_only with no --contract: the contract written from the
#      reference declares the layout its get_inputs() makes, ["contiguous"]
#   5b. shape_specialized (task matmul, K fixed at 256), no contract (no
#      alternative shapes declared): PASS with shape-odd-sizes (the shape
#      probe whose sizes are one larger: K 257); with --require shapes FAIL
#   5c. batchnorm_both_modes with --require shapes: INCONCLUSIVE
#      required-slot-unavailable (BatchNorm1d(128) cannot take 129 channels:
#      a required shape probe that cannot run is no pass)
# Aliasing judged against the reference:
#   6. aliases_as_reference (task relu_inplace: the reference returns its
#      input, changed in place; so does the candidate): semantic PASS, its
#      aliasing a signal output-aliased-as-reference, nothing convicts (the
#      output_aliasing control of audit_controls still FAILs)
# State that varies (docs/audit.md, "State"): both parties get a re-drawn
# state, and the candidate's state is compared with the reference's after the
# calls (slot state_after_calls):
#   7. layernorm_ignores_affine (task layernorm): semantic FAIL on the values
#   8. batchnorm_init_statistics (task batchnorm, eval): semantic FAIL
#   9. folds_scale_inplace (task linear; right outputs, its weight doubled in
#      place): semantic FAIL on state_after_calls, leaf state.fc.weight (and
#      on state_reload, whose fresh weight it halves), none of the sixteen
#  10. weight_cache_invalidated (task linear, honours the injected state):
#      semantic PASS, state_after_calls and state_reload judged and passed
#  10a. renamed_state (task batchnorm; its state under names of its own,
#      bn_weight ... bn_var, no batch count, as the leaderboard's L2 41):
#      semantic PASS, aligned by-similarity, the state check passed;
#      renamed_state_swapped (the same, scale and shift swapped): INCONCLUSIVE,
#      state-mapping-unverified (its mismatches convict nothing), never PASS;
#      renamed_state_wrong_eps (the same names, epsilon 1e-3): FAIL on
#      state_reload's first call, whose second state gives the four tensors
#      of one shape one value, so no mapping among them is what differs
#  10a2. own_gain (task rowsum; a parameter of its own, gain = 1): INCONCLUSIVE
#      candidate-only-state against rowsum.json, PASS against
#      rowsum-own-state.json (state.candidate_only: ["gain"]);
#      snapshot_own_state (task linear; computes with a copy of its initial
#      weight, declared in linear-own-state.json): FAIL on the values
#  10b. weights_packed_once (task linear, packs its weight at its first call):
#      FAIL on state_reload only (a second state loaded after its calls)
# Long run (docs/audit.md, "Long run"):
#  11. late_switch_bf16 (task matmul: fp32 for 64 calls, then bf16): semantic
#      FAIL on slot long_run (and the later state_reload), the slots of the
#      sixteen all passing
# Values (the long run's value sets):
#  12. one_pass_variance (task row_variance: E[x^2] - E[x]^2 in fp32): FAIL on
#      the long run's offset calls (1e3 + N(0, 1)), its N(0, 1) calls passing
#  13. sum_memo (task matmul, a result memoized under its inputs' fp64 sums):
#      FAIL on the long run only (its permuted and reversed sets share the sums)
#  13b. skips_work_when_timed (task matmul, an empty tensor when a caller
#      frame is kaudit's timing module): FAIL on timed_calls only (--timing
#      on; the timed calls' first and last outputs compared); an honest
#      candidate's timed calls pass (alt_fp32_algorithm)
#  14. fixed_indices (task gather_rows, whose get_inputs() always makes the same
#      indices; the candidate returns the even rows whatever idx says): FAIL
#      on value_normal (the fixed slots redraw integer inputs in their range)
# Modes (docs/audit.md, "Modes"): the reference's output depends on its mode
# (BatchNorm), so the slot train_mode runs:
#  15. batchnorm_eval_only (running statistics in every mode): FAIL on
#      train_mode (and on state_after_calls: no running statistics updated)
#  16. batchnorm_both_modes (batch statistics and their update in train mode):
#      PASS, train_mode judged and passed
# State alignment across dtypes (docs/audit.md, "State alignment"):
#  18. fp16_weights (task linear, its Linear in fp16): aligned through a cast
#      (not INCONCLUSIVE), then semantic FAIL on the values; its untouched
#      state passes the state check
# Global state (docs/audit.md, "Global state"):
#  17. flips_switches (task matmul; its import turns TF32 on and the float32
#      matmul precision to "medium"): PASS on the CPU (FAIL on a GPU, where
#      TF32 is real, with reference-under-candidate-flags), each switch a
#      signal global-state-changed, the reference rerun under them (a
#      reported slot)
# KAUDIT_TEST_DEVICE=cuda runs the same on a GPU (tests/gpu; CI runs cpu).
# Exit 77 (skip) when PYTHON has no torch, unless CI is set (then FAIL).
NAME=audit_stress_v2.sh
. "$(dirname "$0")/audit_env.sh"
A=$SRC/tests/audit
T=$(mktemp -d)
chmod 711 "$T"   # as root the worker runs as a uid of its own, which must reach it
# KAUDIT_TEST_KEEP=DIR: the records are copied there (the GPU runs bring them back)
trap '[ -n "${KAUDIT_TEST_KEEP:-}" ] && cp "$T"/*.json "$KAUDIT_TEST_KEEP"/ 2>/dev/null; rm -rf "$T"' EXIT
fails=0
check() { # description, python expression over the record r
    if [ "$(jget "$R" "$2")" = True ]; then
        echo "  ok: $1"
    else
        echo "  FAILED: $1 ($2)"
        fails=$((fails + 1))
    fi
}
audit() { # name candidate contract-args...
    n=$1 cand=$2
    shift 2
    timeout 300 "$K" audit --reference "$A/tasks/${task:-softmax}.py" --candidate "$A/candidates/$cand.py" "$@" \
        --device "${KAUDIT_TEST_DEVICE:-cpu}" --probe off -d "$T/$n" --json "$T/$n.json" --quiet >"$T/$n.out" 2>&1 </dev/null
    echo "$n: exit $?, semantic $(jget "$T/$n.json" 'r["axes"]["semantic"]["verdict"]'), policy $(jget "$T/$n.json" 'r["stress_policy"]')"
    R=$T/$n.json
}
codes='[f["code"] for f in r["semantic"]["findings"]]'
kinds='{f["code"]: f["kind"] for f in r["semantic"]["findings"]}'
contract="--contract $A/contracts/softmax.json --manifest $A/contracts/manifest.json"

# shellcheck disable=SC2086
audit default contiguous_only $contract
check "semantic PASS" 'r["axes"]["semantic"]["verdict"] == "PASS"'
check "nothing gates but the contract's" 'r["stress_policy"]["gating"] == "none" and r["stress_policy"]["policy"] == "contract-supported"'
check "four reported slots (two layouts, two shape probes), sixteen judged" 'r["semantic"]["slots_reported"] == 4 and r["semantic"]["slots_judged"] == 16'
check "layout-strided and layout-transposed reported as signals" "all($kinds.get(c) == 'signal' for c in ('layout-strided', 'layout-transposed'))"
check "slots 8 and 9 are native seeds standing in" '[(s["index"], s["kind"], s.get("replaces")) for s in r["semantic"]["slots"] if s["index"] in (8, 9)] == [(8, "native", "layout_strided"), (9, "native", "layout_transposed")]'
check "the reported slots say they do not gate" '[s["name"] for s in r["semantic"]["slots"] if s.get("gating") is False] == ["layout_strided", "layout_transposed", "shape_odd_sizes", "shape_batch"]'
check "no finding convicts" 'not [f for f in r["semantic"]["findings"] if f["kind"] == "convicts"]'
# what the audit prints says it too (a user reads that, not the record)
# shellcheck disable=SC2086
timeout 300 "$K" audit --reference "$A/tasks/softmax.py" --candidate "$A/candidates/contiguous_only.py" $contract \
    --device "${KAUDIT_TEST_DEVICE:-cpu}" --probe off --seed 7 -d "$T/printed" >"$T/printed.out" 2>&1 </dev/null
if grep -q "^    \[reported, not gating\] layout-strided: " "$T/printed.out" &&
    grep -q "^    \[reported, not gating\] layout-transposed: " "$T/printed.out"; then
    echo "  ok: the printed summary shows the layout findings"
else
    echo "  FAILED: the printed summary shows the layout findings"; sed 's/^/    /' "$T/printed.out"; fails=$((fails + 1))
fi

# shellcheck disable=SC2086
audit required contiguous_only $contract --require layouts
check "semantic FAIL" 'r["axes"]["semantic"]["verdict"] == "FAIL"'
check "convicted on slot 8 layout_strided" 'any(True for f in r["semantic"]["findings"] if f["kind"] == "convicts" and f.get("slot_name") == "layout_strided" and f.get("slot") == 8)'
check "the record names what was required" 'r["stress_policy"]["required"] == "layouts" and r["stress_policy"]["gating"] == "strided,transposed"'
check "no layout slot reported" 'r["semantic"]["slots_reported"] == 2 and not [s for s in r["semantic"]["slots"] if s.get("gating") is False and s["kind"] == "layout"]'

audit declared contiguous_only --contract "$A/contracts/softmax-layouts.json" --manifest "$A/contracts/manifest.json"
check "semantic FAIL" 'r["axes"]["semantic"]["verdict"] == "FAIL"'
check "the contract's layouts gate" 'r["stress_policy"]["gating"] == "strided,transposed" and r["stress_policy"]["required"] is None'

# shellcheck disable=SC2086
audit honest private_scratch $contract
check "semantic PASS" 'r["axes"]["semantic"]["verdict"] == "PASS"'
check "no layout finding" "not [c for c in $codes if c.startswith('layout-')]"

audit generated contiguous_only
check "semantic PASS" 'r["axes"]["semantic"]["verdict"] == "PASS"'
written=$(jget "$R" 'r["contract"]["path"] if r["contract"]["generated"] else ""')
R=$written
check "the written contract declares the task's own layout" 'r["stress"]["layouts"] == ["contiguous"]'
task=matmul audit shapes_reported shape_specialized
check "semantic PASS" 'r["axes"]["semantic"]["verdict"] == "PASS"'
check "shape-odd-sizes reported, shape_batch passed" "$kinds.get('shape-odd-sizes') == 'signal' and [(s['name'], s['calls'][0]['leaves'][0]['outcome']) for s in r['semantic']['slots'] if s['kind'] == 'shape_probe'] == [('shape_odd_sizes', 'fail'), ('shape_batch', 'pass')]"
task=matmul audit shapes_required shape_specialized --require shapes
check "semantic FAIL on shape_odd_sizes" 'r["axes"]["semantic"]["verdict"] == "FAIL" and any(f["kind"] == "convicts" and f["slot_name"] == "shape_odd_sizes" for f in r["semantic"]["findings"])'
task=batchnorm audit shapes_unavailable batchnorm_both_modes --require shapes
check "semantic INCONCLUSIVE, required-slot-unavailable" 'r["axes"]["semantic"]["verdict"] == "INCONCLUSIVE" and any(f["code"] == "required-slot-unavailable" and "shape_odd_sizes" in f["text"] for f in r["semantic"]["findings"])'
task=relu_inplace audit aliasing aliases_as_reference
check "semantic PASS" 'r["axes"]["semantic"]["verdict"] == "PASS"'
check "its aliasing is the reference's: a signal" "$kinds.get('output-aliased-as-reference') == 'signal'"
check "no finding convicts" 'not [f for f in r["semantic"]["findings"] if f["kind"] == "convicts"]'
task=layernorm audit ignores_affine layernorm_ignores_affine
check "semantic FAIL on the values" 'r["axes"]["semantic"]["verdict"] == "FAIL" and any(f["code"] == "value-mismatch" and f["slot"] < 16 for f in r["semantic"]["findings"])'
task=batchnorm audit init_statistics batchnorm_init_statistics
check "semantic FAIL on the values" 'r["axes"]["semantic"]["verdict"] == "FAIL" and any(f["code"] == "value-mismatch" and f["slot"] < 16 for f in r["semantic"]["findings"])'
task=linear audit folds_scale folds_scale_inplace
check "semantic FAIL on the state after the calls, none of the sixteen" '("state_after_calls", "state.fc.weight") in [(f["slot_name"], f.get("leaf")) for f in r["semantic"]["findings"] if f["kind"] == "convicts"] and not [f for f in r["semantic"]["findings"] if f["kind"] == "convicts" and f["slot"] < 16]'
task=rowsum audit own_undeclared own_gain --contract "$A/contracts/rowsum.json" --manifest "$A/contracts/manifest.json"
check "undeclared state of its own: INCONCLUSIVE candidate-only-state (the paper's rule)" 'r["axes"]["semantic"]["verdict"] == "INCONCLUSIVE" and "candidate-only-state" in [f["code"] for f in r["semantic"]["findings"]]'
task=rowsum audit own_declared own_gain --contract "$A/contracts/rowsum-own-state.json" --manifest "$A/contracts/manifest.json"
check "declared by the contract (state.candidate_only): semantic PASS" 'r["axes"]["semantic"]["verdict"] == "PASS"'
task=linear audit snapshot_declared snapshot_own_state --contract "$A/contracts/linear-own-state.json" --manifest "$A/contracts/manifest.json"
check "a declared snapshot of the initial weight: semantic FAIL on the values" 'r["axes"]["semantic"]["verdict"] == "FAIL" and r["semantic"]["state_alignment"] == "by-name" and any(f["code"] == "value-mismatch" and f["slot"] < 16 for f in r["semantic"]["findings"])'
task=batchnorm audit renamed_state renamed_state
check "semantic PASS, the state aligned by the words of its names" 'r["axes"]["semantic"]["verdict"] == "PASS" and r["semantic"]["state_alignment"] == "by-similarity"'
check "the state after the calls judged without the reference's batch count" '[c["leaves"][0]["outcome"] for s in r["semantic"]["slots"] if s["kind"] == "state" for c in s["calls"]] == ["pass"]'
task=batchnorm audit renamed_swapped renamed_state_swapped
check "semantic INCONCLUSIVE, state-mapping-unverified: nothing convicts" 'r["axes"]["semantic"]["verdict"] == "INCONCLUSIVE" and "state-mapping-unverified" in [f["code"] for f in r["semantic"]["findings"] if f["kind"] == "unresolved"] and not [f for f in r["semantic"]["findings"] if f["kind"] == "convicts"]'
check "state_reload's second state gave each shape one value" 'r["semantic"]["state_reload_symmetric"] is True'
task=batchnorm audit renamed_wrong renamed_state_wrong_eps
check "semantic FAIL on state_reload's first call alone, aligned by the words of its names" 'r["axes"]["semantic"]["verdict"] == "FAIL" and r["semantic"]["state_alignment"] == "by-similarity" and [(f["slot_name"], f["call"]) for f in r["semantic"]["findings"] if f["kind"] == "convicts"] == [("state_reload", 0)]'
check "its other mismatches still convict nothing (state-mapping-unverified)" '"state-mapping-unverified" in [f["code"] for f in r["semantic"]["findings"] if f["kind"] == "unresolved"] and any(f["code"] == "value-mismatch" and f["kind"] == "signal" for f in r["semantic"]["findings"])'
task=linear audit honours_state weight_cache_invalidated
check "semantic PASS" 'r["axes"]["semantic"]["verdict"] == "PASS"'
check "the state after the calls judged, apart from the sixteen" 'r["semantic"]["slots_judged"] == 16 and [c["leaves"][0]["outcome"] for s in r["semantic"]["slots"] if s["kind"] == "state" for c in s["calls"]] == ["pass"]'
check "the second state honoured, then the first again" '[l["outcome"] for s in r["semantic"]["slots"] if s["kind"] == "reload" for c in s["calls"] for l in c["leaves"]] == ["pass", "pass"]'
task=linear audit packed_once weights_packed_once
check "semantic FAIL on state_reload only" 'r["axes"]["semantic"]["verdict"] == "FAIL" and {f["slot_name"] for f in r["semantic"]["findings"] if f["kind"] == "convicts"} == {"state_reload"}'
task=matmul audit late_switch late_switch_bf16
check "semantic FAIL on the long run, none of the sixteen" 'r["axes"]["semantic"]["verdict"] == "FAIL" and "long_run" in {f["slot_name"] for f in r["semantic"]["findings"] if f["kind"] == "convicts"} and not [f for f in r["semantic"]["findings"] if f["kind"] == "convicts" and f["slot"] < 16]'
check "the long run made 100 calls, its last two compared" '[c["call"] for s in r["semantic"]["slots"] if s["kind"] == "long" for c in s["calls"]] == list(range(7))'
task=row_variance audit one_pass one_pass_variance
check "the long run's offset calls fail, its N(0, 1) calls pass" '[l["outcome"] for s in r["semantic"]["slots"] if s["kind"] == "long" for c in s["calls"] for l in c["leaves"]] == ["pass", "fail", "fail", "fail", "pass", "pass", "pass"]'
task=matmul audit sum_memo sum_memo
check "semantic FAIL on the long run only" 'r["axes"]["semantic"]["verdict"] == "FAIL" and {f["slot_name"] for f in r["semantic"]["findings"] if f["kind"] == "convicts"} == {"long_run"}'
task=matmul audit timed_skip skips_work_when_timed --timing on
check "semantic FAIL on timed_calls only" 'r["axes"]["semantic"]["verdict"] == "FAIL" and {f["slot_name"] for f in r["semantic"]["findings"] if f["kind"] == "convicts"} == {"timed_calls"}'
check "the first and the last timed call compared, apart from the sixteen" '[c["call"] for s in r["semantic"]["slots"] if s["kind"] == "timed" for c in s["calls"]] == [0, 1] and r["semantic"]["slots_judged"] == 16'
task=matmul audit timed_honest alt_fp32_algorithm --timing on
check "an honest candidate's timed calls pass" 'r["axes"]["semantic"]["verdict"] == "PASS" and [l["outcome"] for s in r["semantic"]["slots"] if s["kind"] == "timed" for c in s["calls"] for l in c["leaves"]] == ["pass", "pass"]'
task=gather_rows audit fixed_indices fixed_indices
check "semantic FAIL on value_normal" 'any(f["kind"] == "convicts" and f["slot_name"] == "value_normal" for f in r["semantic"]["findings"])'
task=batchnorm audit eval_only batchnorm_eval_only
check "semantic FAIL on train_mode" 'any(f["kind"] == "convicts" and f["slot_name"] == "train_mode" for f in r["semantic"]["findings"])'
task=batchnorm audit both_modes batchnorm_both_modes
check "semantic PASS, train_mode passed" 'r["axes"]["semantic"]["verdict"] == "PASS" and [l["outcome"] for s in r["semantic"]["slots"] if s["kind"] == "mode" for c in s["calls"] for l in c["leaves"]] == ["pass"]'
task=matmul audit switches flips_switches
if [ "${KAUDIT_TEST_DEVICE:-cpu}" = cuda ]; then
    # TF32 is real there: its own product is off the fp32 tolerance, and so is
    # the reference's once run under its switches (H100, 2026-12-05)
    check "semantic FAIL on the values" 'r["axes"]["semantic"]["verdict"] == "FAIL"'
    check "the reference changes under its switches" "$kinds.get('reference-under-candidate-flags') == 'signal'"
else
    check "semantic PASS" 'r["axes"]["semantic"]["verdict"] == "PASS"'
fi
check "the switches reported" 'sum(f["code"] == "global-state-changed" and f["kind"] == "signal" for f in r["semantic"]["findings"]) >= 1 and any("matmul_allow_tf32" in f["text"] for f in r["semantic"]["findings"])'
check "the reference rerun under them, not gating" '[(s.get("gating"), s["calls"][0]["status"]) for s in r["semantic"]["slots"] if s["kind"] == "flags"] == [(False, "ok")]'
task=linear audit fp16 fp16_weights
check "aligned by name through a cast" 'r["semantic"]["state_alignment"] == "by-name"'
check "semantic FAIL on the values" 'r["axes"]["semantic"]["verdict"] == "FAIL" and any(f["kind"] == "convicts" and f["code"] == "value-mismatch" and f["slot_name"] == "value_normal" for f in r["semantic"]["findings"])'
check "its state untouched" '[l["outcome"] for s in r["semantic"]["slots"] if s["kind"] == "state" for c in s["calls"] for l in c["leaves"]] == ["pass", "pass"]'
# The names' words on the leaderboard's L2 41 (nn.Linear, BatchNorm1d, GroupNorm
# against weight, bias, bn_weight, bn_bias, bn_mean, bn_var, gn_weight, gn_bias),
# and two unnamed tensors of one shape that nothing can place.
mapped=$(PYTHONPATH="$SRC/runner" "$PY" - <<'PYEOF'
import torch.nn as nn, torch
from kaudit_state import by_similarity
ref = nn.ModuleDict({"gemm": nn.Linear(8, 4), "batch_norm": nn.BatchNorm1d(4), "group_norm": nn.GroupNorm(2, 4)})
cand = {"weight": torch.zeros(4, 8)}
cand.update({k: torch.zeros(4) for k in ("bias", "bn_weight", "bn_bias", "bn_mean", "bn_var", "gn_weight", "gn_bias")})
m = by_similarity(ref.state_dict(), cand)
print(sorted(m.items()) if m else None, by_similarity(nn.LayerNorm(4).state_dict(), {"p1": torch.ones(4), "p2": torch.zeros(4)}))
PYEOF
)
want="[('batch_norm.bias', 'bn_bias'), ('batch_norm.running_mean', 'bn_mean'), ('batch_norm.running_var', 'bn_var'), ('batch_norm.weight', 'bn_weight'), ('gemm.bias', 'bias'), ('gemm.weight', 'weight'), ('group_norm.bias', 'gn_bias'), ('group_norm.weight', 'gn_weight')] None"
if [ "$mapped" = "$want" ]; then echo "ok: by-similarity maps L2 41's names, places no unnamed pair"
else echo "FAIL: by-similarity: $mapped"; fails=$((fails + 1)); fi
# state_reload's second state: one value per shape and dtype where asked, and
# only then symmetric; a kept buffer of the same shape (structure, not
# re-drawn) leaves it not symmetric.
sym=$(PYTHONPATH="$SRC/runner" "$PY" - <<'PYEOF'
import torch.nn as nn, torch
from kaudit_state import redraw_state
ref = nn.ModuleDict({"gemm": nn.Linear(8, 4), "batch_norm": nn.BatchNorm1d(4), "group_norm": nn.GroupNorm(2, 4)})
plain = redraw_state(ref, 7)["symmetric"]
one = redraw_state(ref, 7, one_value_per_kind=True)
sd = ref.state_dict()
same = all(torch.equal(sd["gemm.bias"], sd[k]) for k in sd if k not in ("gemm.weight", "batch_norm.num_batches_tracked"))
inside = bool(((sd["batch_norm.running_var"] >= 0.5) & (sd["batch_norm.running_var"] < 1.5)).all())
ref.register_buffer("mask", torch.arange(4.0))
print(plain, one["symmetric"], same, inside, redraw_state(ref, 7, one_value_per_kind=True)["symmetric"])
PYEOF
)
if [ "$sym" = "False True True True False" ]; then echo "ok: state_reload's second state: one value per shape, symmetric only so"
else echo "FAIL: one value per shape: $sym"; fails=$((fails + 1)); fi
echo "$fails failed"
[ "$fails" -eq 0 ]
