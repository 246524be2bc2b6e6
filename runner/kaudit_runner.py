"""kaudit_runner.py - the thin Python worker of `kaudit audit` (docs/audit.md).

  python3 kaudit_runner.py PLAN.json

kaudit writes the plan (the task files, the device, the seed and the stress
schedule) and starts this runner, fresh for every candidate, under the preload
library (the same recording as `kaudit run`).  The runner only executes: it
builds the reference and the candidate, aligns their state, generates the
inputs of every slot, calls both parties and writes what they returned as
tensor files (docs/tensor-format.md, no pickle).  It judges nothing: the
tolerance, the comparisons and the verdicts are computed in C afterwards, from
the files and from the event log it appends to (one JSON object per line,
flushed at once, so that what was done before a crash or a kill is kept).

Order, and why:
  1. the reference is imported and built, and every slot's reference outputs
     (native precision, and fp64 on a state-identical copy) are computed and
     written BEFORE the candidate is imported, so nothing the candidate does
     at import or in its calls (patching torch, mutating shared objects) can
     change the reference's answers;
  2. the candidate is imported and built, its state is aligned with the
     reference's, then it is called on fresh clones of every slot's inputs;
  3. on a GPU, the candidate and the reference are timed with CUDA events the
     way KernelBench does, so that the measurement axis has windows to judge.
NVTX ranges (default domain) mark the parties' work: "kaudit:reference",
"kaudit:candidate", and "kaudit:calibration" around the fp64 reference.

This file is the entry point and the order of the work (Runner, run,
main); its parts, beside it, one job each: kaudit_events.py (the event
log), kaudit_guard.py (the write confinement), kaudit_inputs.py (the value
sets), kaudit_calls.py (around one call), kaudit_state.py (state
alignment), kaudit_turns.py (turns on the device), kaudit_timing.py (the
timed calls).  The candidate runs in a process of its own
(kaudit_party.py, started by kaudit_party_link.py): this process never
imports it.
"""

import copy
import hashlib
import json
import os
import random
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import kaudit_events  # noqa: E402  (beside this file; first: the events' "t" counts torch's import)
import kaudit_party_link  # noqa: E402  (beside this file; no torch)

# The candidate's process starts before anything here imports PyTorch, so
# that its interpreter's import runs beside this one's
# (kaudit_party_link.start_early).
EARLY_PARTY = kaudit_party_link.start_early(sys.argv) if __name__ == "__main__" else None
EARLY_PARTY_T = time.monotonic()

import kaudit_tensors  # noqa: E402  (beside this file)
import kaudit_flags  # noqa: E402  (beside this file)
import kaudit_probe  # noqa: E402  (beside this file; imported before the candidate is)

import torch  # noqa: E402

from kaudit_events import EvidenceLost, Log, StageFailed, short_error, stage, writing_evidence  # noqa: E402
from kaudit_guard import WriteGuard  # noqa: E402
from kaudit_inputs import (SlotInputs, base_specs, clone_tree, has_redrawable_integers, layout_of,  # noqa: E402
                           long_run_sets, native_inputs, slot_inputs)
from kaudit_calls import (REPEATED_CALLS, is_out_of_memory, is_refused_by_confinement, mutated,  # noqa: E402
                          output_leaves, overwritten, sampled, snapshot, synchronize)
from kaudit_turns import DeviceTurns  # noqa: E402
from kaudit_state import BOOKKEEPING, redraw_state  # noqa: E402
from kaudit_timing import AA_ORDERS, Timer, paired_batches  # noqa: E402
from kaudit_party_link import PartyGone, PartyLink  # noqa: E402
from kaudit_marks import Marks, load_module, phase  # noqa: E402

STARTED = kaudit_events.STARTED

REF = "kaudit:reference"
CAND = "kaudit:candidate"
CALIB = "kaudit:calibration"
# The indices of the extra slots' events (the state check, the long run,
# train_mode, the reference under the candidate's switches, state_reload):
# past the sixteen slots, the reserves and the reported slots (at most 16 + 4 + 16)
STATE_SLOT = 40
LONG_SLOT = 41
TRAIN_SLOT = 42
FLAGS_SLOT = 43
RELOAD_SLOT = 44
TIMED_SLOT = 45
# The long run compares its first call, its last two and this many more at
# positions drawn from the audit's seed (docs/audit.md, "Long run")
LONG_RUN_SAMPLED = 4

# Exit statuses (kaudit reads the event log, these only say where it stopped).
EXIT_DONE = 0
EXIT_STAGE_FAILED = 3
EXIT_BAD_PLAN = 4


def need_module(module, attr, what):
    need(module, attr, what)
    return module


def need(module, attr, what):
    if not hasattr(module, attr):
        raise AttributeError(f"{what} defines no '{attr}'")
    return getattr(module, attr)


class Runner:
    def __init__(self, plan, log, guard):
        self.plan = plan
        self.log = log
        self.guard = guard
        self.device = torch.device(plan["device"])
        self.marks = Marks(self.device.type == "cuda")
        self.out = plan["out_dir"]
        self.tensors = os.path.join(self.out, "tensors")
        with guard.own():
            os.makedirs(self.tensors, exist_ok=True)
        self.seed = int(plan["seed"])
        # which elements of a large output are compared: derived from the seed
        # (reproducible with it), which the candidate's process never learns
        self.sample_key = self.derived("sample") & 0xFFFFFFFF
        self.party = None
        self.ref_results = {}    # slot index -> its calls' reference files
        self.ref_seconds = {}    # slot index -> seconds of its reference phase
        self.ref64_seconds = {}  # slot index -> of those, the fp64 twin's (its inputs, call and file)
        self.ref_aliasing = {}   # slot index -> the reference's outputs a later call overwrote
        self.turn = DeviceTurns(plan, self.device, log, guard)

    def derived(self, what):
        """A 63-bit value derived from the audit's seed, that reveals nothing of it."""
        digest = hashlib.sha256(b"kaudit:%d:%s" % (self.seed, what.encode())).digest()
        return int.from_bytes(digest[:8], "little") & 0x7FFFFFFFFFFFFFFF

    def write(self, name, leaves):
        path = os.path.join(self.tensors, name)
        with writing_evidence("write %s" % path), self.guard.own():
            kaudit_tensors.write_tensor_file(path, leaves)
        return "tensors/" + name

    @staticmethod
    def refused(exc, what):
        """An error of the reference's that the kernel's refusal caused: the
        audit's end (EvidenceLost), not the slot's."""
        if is_refused_by_confinement(exc):
            raise EvidenceLost("reference-refused", "the reference was refused by the kernel %s: %s"
                               % (what, short_error(exc)[0])) from exc

    # --- reference side, in this process (the candidate builds in its own meanwhile, out of reach)

    def build_reference(self):
        plan = self.plan
        def load_reference():
            mod = load_module("kaudit_reference", plan["reference"])
            need(mod, "Model", "the reference")
            need(mod, "get_inputs", "the reference")
            return mod
        self.ref_mod = stage(self.log, "import_reference", load_reference)
        init = stage(self.log, "get_init_inputs", lambda: self._init_inputs())
        self.init_inputs = init

        def build():
            torch.manual_seed(self.seed)
            with phase(self.marks, REF):
                m = self.ref_mod.Model(*clone_tree(init))
                m = m.to(self.device)
                m.eval()
            return m
        self.ref = stage(self.log, "build_reference", build)
        # the state both parties get: re-drawn, not the initialization's
        # (kaudit_state.redraw_state; the fp64 twin is copied after it)
        drawn = stage(self.log, "redraw_state", lambda: redraw_state(self.ref, self.derived("state")))
        self.log.event("state_redrawn", redrawn=len(drawn["redrawn"]), kept=drawn["kept"][:32])
        self.ref_state = {k: v.detach().clone() for k, v in self.ref.state_dict().items()}

        def build64():
            m = copy.deepcopy(self.ref)
            return m.to(torch.float64)
        self.ref64 = stage(self.log, "build_reference_fp64", build64)
        # native value sets on the GPU when the task's get_inputs() allows it:
        # the canonical call tries there first, and the CPU is the fallback
        self.native_device = None

        def canonical():
            if self.device.type == "cuda" and hasattr(torch.device, "__enter__"):
                try:
                    got = native_inputs(self.ref_mod, self.seed, self.device)
                    self.native_device = self.device
                    return got
                except Exception as exc:
                    self.log.event("native_inputs", on="cpu", reason=short_error(exc)[0])
            return native_inputs(self.ref_mod, self.seed)
        args = stage(self.log, "get_inputs", canonical)
        self.log.event("native_inputs", on=str(self.native_device or "cpu"))
        self.log.event("inputs", specs=[
            ({"kind": "tensor", "dtype": str(v.dtype).replace("torch.", ""), "shape": list(v.shape),
              "layout": layout_of(v)}
             if k == "t" else {"kind": type(v).__name__, "value": repr(v)[:80]})
            for k, v in args])
        # the floating inputs' values are not kept: each slot draws its own
        self.base = base_specs(args)
        del args
        self.canonical = SlotInputs(lambda: native_inputs(self.ref_mod, self.seed, self.native_device),
                                    "contiguous")

    def _init_inputs(self):
        torch.manual_seed(self.seed)
        got = self.ref_mod.get_init_inputs() if hasattr(self.ref_mod, "get_init_inputs") else []
        if not isinstance(got, (list, tuple)):
            raise TypeError(f"get_init_inputs() returned {type(got).__name__}, not a list")
        return list(got)

    def call(self, model, args, party):
        """One call of a party's model, synchronized on both sides, inside its NVTX range."""
        with torch.no_grad():
            synchronize(self.device)
            with phase(self.marks, party):
                out = model(*args)
            synchronize(self.device)
        return out

    def reference_slots(self):
        """Every slot's reference outputs, fp32 and fp64.  Unsupported slots and
        slots the reference cannot run are replaced by spare native seeds."""
        plan = self.plan
        spares = list(plan.get("spares", []))
        alt = plan.get("alternative_shapes")
        self.slots = []
        # Reserves (native seeds) run after the slots; kaudit uses them in
        # place of slots whose tolerance cannot be calibrated (the
        # reference's own fp32 error on them is above rho_max).
        reserves = [dict(r, index=len(plan["slots"]) + i, reserve=True)
                    for i, r in enumerate(plan.get("reserves", []))]
        # Reported slots (transformations the contract does not declare
        # valid, the shape probes) run last; kaudit judges them, they gate only
        # when the plan says so, and one the reference cannot run is skipped,
        # not replaced.
        first = len(plan["slots"]) + len(reserves)
        reported = [dict(r, index=first + i, gating=bool(r.get("gating", False)), reported=True)
                    for i, r in enumerate(plan.get("reported", []))]
        for slot in list(plan["slots"]) + reserves + reported:
            self.turn.pause()
            # a native seed the plan put in place of an undeclared transformation
            replaced = {"name": slot["replaces"], "reason": slot.get("replaced_because")} \
                if slot.get("replaces") else None
            current = slot
            while True:
                sets, why = slot_inputs(current, self.base, self.ref_mod, self.seed, alt, self.device,
                                        self.native_device)
                if sets is not None:
                    ok, why = self._reference_for(current, sets)
                    if not ok and current["kind"] != "native" and has_redrawable_integers(self.base):
                        # integer inputs the reference needs as get_inputs() made
                        # them (sorted offsets, a fixed length): kept, said in the log
                        kept, _ = slot_inputs(current, self.base, self.ref_mod, self.seed, alt, self.device,
                                              self.native_device, integers=False)
                        if kept is not None and self._reference_for(current, kept)[0]:
                            self.log.event("integers_kept", index=slot["index"], name=current["name"], reason=why)
                            sets, ok = kept, True
                    if ok:
                        break
                if slot.get("reported"):
                    self.log.event("reported_slot_skipped", index=slot["index"], name=slot["name"], reason=why,
                                   gating=bool(slot.get("gating")))
                    current = None
                    break
                if not spares:
                    self.log.event("slot_unavailable", index=slot["index"], name=slot["name"], reason=why)
                    current = None
                    break
                replaced = replaced or {"name": slot["name"], "reason": why}
                self.log.event("slot_replaced", index=slot["index"], name=current["name"], reason=why,
                               by=spares[0]["name"])
                current = dict(spares.pop(0), index=slot["index"])
            if current is not None:
                self.slots.append((slot["index"], current, replaced, sets))
        if plan.get("long_run"):
            self.turn.pause()
            self.long_run = self._long_run_reference(int(plan["long_run"].get("calls", 100)))
        # the extra slots copy the reference (twins, saved states): one that
        # cannot (out of memory) is skipped and said, never the audit's end
        for key, attr, name, make in (("modes", "train_slot", "train_mode", self._train_mode_reference),
                                      ("state_reload", "reload_slot", "state_reload", self._state_reload_reference),
                                      ("timing", "timed_slot", "timed_calls", self._timed_reference)):
            if not plan.get(key):
                continue
            self.turn.pause()
            try:
                setattr(self, attr, make())
            except Exception as exc:
                self.log.event(name + "_skipped", reason=short_error(exc)[0])

    def _state_reload_reference(self):
        """The slot state_reload, on the reference: a second state drawn from the
        audit's seed (as redraw_state draws), and the reference's outputs with it
        on fresh N(0, 1) values.  The candidate gets that state after its calls,
        on an instance that has run (docs/audit.md, "State")."""
        twin = copy.deepcopy(self.ref)
        # tensors of one shape and dtype get one value: a mismatch under it is
        # no mapping's fault (semantic.c), where the first state's may be
        self.reload_symmetric = bool(redraw_state(twin, self.derived("state-reload"),
                                                  one_value_per_kind=True)["symmetric"])
        state = {k: v.detach().clone() for k, v in twin.state_dict().items()}
        slot = {"index": RELOAD_SLOT, "name": "state_reload", "kind": "reload"}
        sets, why = slot_inputs({"kind": "value", "dist": "normal", "scale": 1.0, "index": RELOAD_SLOT},
                                self.base, self.ref_mod, self.seed, None, self.device, self.native_device)
        ok = False
        if sets is not None:
            # call 0 with the second state; call 1, the same values, with the
            # first state loaded back (what every later check relies on)
            saved = (self.ref, self.ref64)
            self.ref, self.ref64 = twin, copy.deepcopy(twin).to(torch.float64)
            try:
                ok, why = self._reference_for(slot, sets)
            finally:
                self.ref, self.ref64 = saved
            if ok:
                ok, why = self._reference_for(slot, sets, first_call=1)
        if not ok:
            self.log.event("state_reload_skipped", reason=why)
            return None
        # the first state as the reference holds it now (train_mode moved its
        # running statistics): what the candidate is given back
        back = {k: v.detach().clone() for k, v in self.ref.state_dict().items()}
        return state, back, sets

    def _timed_reference(self):
        """The slot timed_calls, on the reference: its outputs on the inputs
        every timed call is given (the canonical draw), twice (the
        candidate's first and last timed calls are compared with them).  Made
        last among the extra slots: the reference's state is then the one the
        candidate is given back before it is timed."""
        slot = {"index": TIMED_SLOT, "name": "timed_calls", "kind": "timed"}
        ok, why = self._reference_for(slot, [self.canonical])
        if ok:
            ok, why = self._reference_for(slot, [self.canonical], first_call=1)
        if not ok:
            self.log.event("timed_calls_skipped", reason=why)
            return None
        return True

    def timed_calls_candidate(self):
        """The slot timed_calls: the outputs of the candidate's first and last
        timed calls (arm "candidate" of the speedup check, in its process, once
        that check finished), compared with the reference's on the same
        inputs.  A candidate that recognises the timing loop and skips its
        work there is wrong there."""
        if not getattr(self, "timed_slot", None):
            return
        idx, t0, calls = TIMED_SLOT, time.monotonic(), []
        for ci, which in enumerate(("first", "last")):
            # the timed calls run on clones: no input of theirs is compared
            entry = dict(self._entry(ci, self.ref_results[idx][ci]), reference_mutates=[], timed_call=which)
            try:
                self._collect(entry, idx, ci, "collect_timed", arm="candidate", which=which)
            except PartyGone as exc:
                entry["status"], entry["error"] = "candidate-process-ended", str(exc)
            calls.append(entry)
        self._extra_slot(idx, "timed_calls", "timed", calls, t0)

    def _train_mode_reference(self):
        """Whether the reference's output depends on its mode (BatchNorm's batch
        statistics, dropout): the canonical inputs in eval and in train mode,
        the generator reseeded alike, its state restored after.  If it does,
        the slot train_mode (one call in train mode on fresh N(0, 1) values,
        the generator reseeded from the audit's seed before each party's call)
        on the reference; else None (docs/audit.md, "Modes")."""
        saved = copy.deepcopy(self.ref.state_dict())
        outs = []
        try:
            for training in (False, True):
                args = self.canonical.make(self.device)
                self.ref.train(training)
                torch.manual_seed(self.derived("mode-probe"))
                outs.append([v for p, v in output_leaves(self.call(self.ref, args, REF))])
        except Exception as exc:
            self.refused(exc, "in train mode")
            self.log.event("modes", dependent=None, reason="the reference raised in train mode: " + short_error(exc)[0])
            return None
        finally:
            self.ref.eval()
            self.ref.load_state_dict(saved)
            self.canonical.drop()
        differ = len(outs[0]) != len(outs[1]) or any(
            isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor) and
            (a.shape != b.shape or not bool(torch.equal(a, b))) for a, b in zip(*outs))
        self.log.event("modes", dependent=differ)
        if not differ:
            return None
        slot = {"index": TRAIN_SLOT, "name": "train_mode", "kind": "mode", "mode": "train",
                "rng_seed": self.derived("train-mode")}
        sets, why = slot_inputs({"kind": "value", "dist": "normal", "scale": 1.0, "index": TRAIN_SLOT},
                                self.base, self.ref_mod, self.seed, None, self.device, self.native_device)
        if sets is None:
            self.log.event("train_mode_skipped", reason=why)
            return None
        saved64 = copy.deepcopy(self.ref64.state_dict())
        ok, why = self._reference_for(slot, sets)
        if not ok:
            # a call that ran in train mode moved the running statistics: put them back
            self.ref.load_state_dict(saved)
            self.ref64.load_state_dict(saved64)
            self.log.event("train_mode_skipped", reason=why)
            return None
        return slot, sets

    def _long_run_reference(self, n):
        """The long run's compared calls, on the reference: the first, the last
        two and LONG_RUN_SAMPLED at positions drawn from the seed, each on a
        fresh value set (kaudit_inputs.LONG_RUN_VARIANTS, N(0, 1) where the
        reference cannot take them).  (positions, value sets), or None when the task cannot
        take it (said in the log's long_run_skipped)."""
        draw = random.Random(self.derived("long-run"))
        positions = sorted({0, n - 2, n - 1} | set(draw.sample(range(1, n - 2), min(LONG_RUN_SAMPLED, n - 3))))
        slot = {"index": LONG_SLOT, "name": "long_run", "kind": "long"}
        set_seed = self.seed * 1000003 + LONG_SLOT * 7919 + 17
        for variants in (True, False):
            sets, why = long_run_sets(self.base, set_seed, self.device, len(positions), variants)
            if sets is None:
                break
            ok, why = self._reference_for(slot, sets)
            if ok:
                return positions, sets, n
            if variants:
                self.log.event("long_run_variants_dropped", reason=why)
        self.log.event("long_run_skipped", reason=why)
        return None

    def _reference_for(self, slot, sets, first_call=0):
        """The reference's outputs (fp32 and fp64 files) for one slot's calls;
        first_call numbers them on after calls an earlier pass wrote."""
        t0 = time.monotonic()
        idx = slot["index"]
        self.marks.mark(f"kaudit:slot {idx} {slot['name']} reference")
        repeated = slot["kind"] == "repeated"
        calls = REPEATED_CALLS if repeated else \
            [("A", i) for i in range(len(sets))] if slot["kind"] == "long" else (("A", 0),)
        results = []
        train = slot.get("mode") == "train"
        if train:   # the train_mode slot: both twins in train mode for its call
            self.ref.train()
            self.ref64.train()
        # The repeated slot runs the reference as the candidate's process runs
        # the candidate: later calls refill the first call's input buffers, and
        # the outputs are kept, so that an output the reference itself lets a
        # later call overwrite (it returns its input) is known: the candidate
        # is not convicted for aliasing exactly as the reference does.
        buffers, kept = None, []
        fp64_s = 0.0
        try:
            for ci, (_, vi) in enumerate(calls, start=first_call):
                args = sets[vi].make(self.device)
                if repeated and buffers is not None:
                    for b, v in zip(buffers, args):
                        if isinstance(b, torch.Tensor) and isinstance(v, torch.Tensor) and b.shape == v.shape:
                            b.copy_(v)
                    args = buffers
                if repeated:
                    buffers = args
                before = snapshot(args)
                if train:
                    torch.manual_seed(slot["rng_seed"])
                out = self.call(self.ref, args, REF)
                mut = mutated(args, before)
                leaves = output_leaves(out)
                # an input the reference changes in place is part of what it returns
                leaves += [(f"input[{i}]", args[i]) for i in mut]
                bad = [p for p, v in leaves if isinstance(v, torch.Tensor) and v.is_floating_point()
                       and not bool(torch.isfinite(v).all())]
                if bad and slot["kind"] != "native":
                    return False, f"the reference output {bad[0]} is not finite on this slot's inputs"
                t64 = time.monotonic()
                args64 = sets[vi].make(self.device, fp64=True)
                try:
                    if train:
                        torch.manual_seed(slot["rng_seed"])
                    out64 = self.call(self.ref64, args64, CALIB)
                    leaves64 = output_leaves(out64) + [(f"input[{i}]", args64[i]) for i in mut]
                    # written through the host: the device's work is done when this returns
                    f64 = self.write(f"s{idx:02d}c{ci}-ref64.kt", sampled(leaves64, (self.sample_key, idx, ci)))
                    fp64_error = None
                except Exception as exc:  # fp64 unsupported by an operator
                    self.refused(exc, "in fp64 on slot %d" % idx)
                    f64 = None
                    fp64_error = short_error(exc)[0]
                fp64_s += time.monotonic() - t64
                f32 = self.write(f"s{idx:02d}c{ci}-ref.kt", sampled(leaves, (self.sample_key, idx, ci)))
                sets[vi].drop()
                if repeated:
                    kept.append((ci, out, [(p, v.detach().clone()) for p, v in output_leaves(out)
                                           if isinstance(v, torch.Tensor)]))
                del out, args, args64, before
                results.append({"call": ci, "ref": f32, "ref64": f64, "fp64_error": fp64_error,
                                "reference_mutates": mut, "values": vi,
                                "poison": [(tuple(v.shape), v.dtype) for p, v in leaves
                                           if isinstance(v, torch.Tensor)]})
        except Exception as exc:
            self.refused(exc, "on slot %d" % idx)
            if is_out_of_memory(exc):
                # resource exhaustion is no property of the slot: no replacement
                self.log.event("stage", stage="reference_slots", status="error", code="resource-exhausted",
                               error=short_error(exc)[0])
                raise StageFailed("reference_slots")
            return False, "the reference raised on this slot's inputs: " + short_error(exc)[0]
        finally:
            if train:
                self.ref.eval()
                self.ref64.eval()
        self.ref_results[idx] = self.ref_results.get(idx, [])[:first_call] + results
        self.ref_aliasing[idx] = overwritten(kept)
        self.ref_seconds[idx] = round(time.monotonic() - t0, 3)
        self.ref64_seconds[idx] = round(fp64_s, 3)
        return True, None

    def _seconds(self, idx, t0):
        """A slot event's "seconds": the reference's (and of those its fp64
        twin's) and the candidate's since t0."""
        return {"reference": self.ref_seconds.get(idx), "reference_fp64": self.ref64_seconds.get(idx),
                "candidate": round(time.monotonic() - t0, 3)}

    def time_calls(self, model, party, mark):
        """One warm-up, then timed calls the way KernelBench times them:
        start.record(); forward (in the party's NVTX range); end.record();
        end.synchronize(); then a mark 'MARK <ms>' (the measurement axis's
        windows and reported times)."""
        if self.device.type != "cuda":
            return
        args = self.canonical.make(self.device)
        self.canonical.drop()
        with torch.no_grad():
            with phase(self.marks, party):
                model(*args)
            torch.cuda.synchronize()
            for _ in range(self.plan.get("timed_calls", 5)):
                start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                start.record()
                with phase(self.marks, party):
                    model(*args)
                end.record()
                end.synchronize()
                self.marks.mark(mark + " " + repr(start.elapsed_time(end)))

    def time_reference(self):
        self.time_calls(self.ref, REF, "kaudit:reference_ms")

    def timing_check(self, check, arms, orders, arm_a, arm_b):
        """Runs one paired check and logs its latencies (event 'timing');
        an error is logged, never raised: timing withholds a speedup or a
        certificate, it never ends the audit."""
        t0 = time.monotonic()
        record = {"check": check, "arms": arms, "clock": self.timer.clock}
        try:
            with torch.no_grad():
                record["batches"] = paired_batches(arm_a, arm_b, orders)
            record["status"] = "ok"
        except Exception as exc:
            record["status"] = "error"
            record["error"] = short_error(exc)[0]
        record["seconds"] = round(time.monotonic() - t0, 3)
        self.log.event("timing", **record)
        return record["status"]

    def timed(self, model, party, guard=False):
        """An arm: () -> ms of one call of model on inputs of its own.  Each
        arm draws its own inputs (no tensor is shared between the parties)
        and every call gets fresh clones of them, made before its start
        event: nothing keyed on a tensor's identity survives from one timed
        call to the next."""
        base = self.canonical.make(self.device)
        self.canonical.drop()

        def one():
            args = clone_tree(base)

            def call():
                with phase(self.marks, party):
                    model(*args)
            return self.timer.time(call, guard)
        return one

    def time_aa(self):
        """The A/A screen: two instances of the reference, before the
        candidate exists, under PyTorch's defaults (as the candidate runs)."""
        if not self.plan.get("timing"):
            return
        try:
            self.timer = Timer(self.device)
            torch.manual_seed(self.seed)
            with phase(self.marks, REF):
                twin = self.ref_mod.Model(*clone_tree(self.init_inputs)).to(self.device)
                twin.load_state_dict(self.ref_state)
                twin.eval()
            arms = (self.timed(self.ref, REF), self.timed(twin, REF))
        except Exception as exc:
            # a second instance that cannot be built (out of memory, an
            # __init__ that runs once) costs the screen, never the audit
            self.log.event("timing", check="aa", arms=["reference", "reference (second instance)"],
                           clock="cuda-event" if self.device.type == "cuda" else "perf-counter", status="error",
                           error="setting up: " + short_error(exc)[0], seconds=0)
            return
        self.timing_check("aa", ["reference", "reference (second instance)"], AA_ORDERS, *arms)
        del twin, arms

    def time_speedup(self):
        """The reference (this process) against the candidate (its own process),
        each batch ABBA or BAAB at random (seeded); then, on a GPU, the candidate
        with and without the synchronization guard (the stream differential),
        both arms in the candidate's process."""
        if not self.plan.get("timing"):
            return
        import random
        rng = random.Random(self.seed)
        orders = tuple(rng.choice(("ABBA", "BAAB")) for _ in AA_ORDERS)
        try:
            if not hasattr(self, "timer"):
                self.timer = Timer(self.device)
            arm_a, arm_b = self.timed(self.ref, REF), self.party_arm("candidate")
        except Exception as exc:
            self.log.event("timing", check="speedup", arms=["reference", "candidate"], clock="?", status="error",
                           error="setting up: " + short_error(exc)[0], seconds=0)
        else:
            if self.timing_check("speedup", ["reference", "candidate"], orders, arm_a, arm_b) == "ok":
                self.timed_calls_candidate()
            elif getattr(self, "timed_slot", None):
                self.log.event("timed_calls_skipped", reason="the speedup check did not finish")
        if self.device.type == "cuda":
            self.stream_check()

    def stream_check(self):
        arms = ["candidate guarded", "candidate"]
        t0 = time.monotonic()
        record = {"check": "stream", "arms": arms, "clock": "cuda-event"}
        try:
            self.party_arm("guarded", guard=True)
            self.party_arm("plain")
            got = self.party.request("paired", a="guarded", b="plain", orders=list(AA_ORDERS))
            if not got.get("ok"):
                raise RuntimeError(got.get("error", "the stream differential failed"))
            record["batches"] = [{"order": str(b["order"]), "a": [float(x) for x in b["a"]],
                                  "b": [float(x) for x in b["b"]]} for b in got["batches"]]
            record["status"] = "ok"
        except Exception as exc:
            record["status"] = "error"
            record["error"] = short_error(exc)[0]
        record["seconds"] = round(time.monotonic() - t0, 3)
        self.log.event("timing", **record)
        return record["status"]

    # --- candidate side: its own process (kaudit_party.py, through kaudit_party_link.py)

    def begin_build(self):
        """The candidate's process handed the reference's init inputs and state and
        asked to import, build and align the candidate, without waiting: its build
        (compilers, on the CPU, for a minute when cold) runs while this process
        computes the reference's slots.  build_candidate() takes the answer."""
        plan = self.plan
        self.build_error = None
        try:
            if self.party is None:
                self.party = PartyLink(plan, self.log, self.guard, wait=False)
            init = self.party.hand("init.pt", self.init_inputs)
            state = self.party.hand("state.pt", self.ref_state)
            self.party.send("build", device=str(self.device), candidate=plan["candidate"], init=init, state=state,
                            out_dir=self.party.out, build_seed=self.derived("candidate-build"),
                            write_roots=plan["party"]["python_write_roots"],
                            candidate_only=plan.get("candidate_only_state") or [])
            self.log.event("party", status="build_requested")
        except (PartyGone, OSError) as exc:
            self.build_error = exc

    def build_candidate(self):
        """The answer to begin_build()'s request: the candidate imported, built and
        aligned in its own process (kaudit_party.py)."""
        if self.build_error is not None:
            self.log.event("stage", stage="import_candidate", status="error",
                           error="the candidate's process could not be started: %s" % self.build_error)
            raise StageFailed("import_candidate")
        try:
            got = self.party.answer("build")
        except PartyGone as exc:
            self.log.event("stage", stage="import_candidate", status="error", error=str(exc))
            raise StageFailed("import_candidate")
        if not got.get("ok"):
            raise StageFailed(got.get("stage_failed") or "import_candidate")
        pre = got.get("preimported")
        self.log.event("party", status="built", preimported=pre if isinstance(pre, dict) else None)
        casts = got.get("casts")
        self.state_casts = {str(k): str(v) for k, v in casts.items()} if isinstance(casts, dict) else {}
        # the reference's bookkeeping the candidate does not hold (align_state): left
        # out of the state check; nothing else is, whatever the process says
        only = got.get("reference_only")
        self.state_reference_only = {k for k in only if isinstance(k, str) and k.rsplit(".", 1)[-1] in BOOKKEEPING} \
            if isinstance(only, list) else set()

    def start_party(self):
        """The candidate's process started while the reference works, so that its
        interpreter and PyTorch import (seconds, on the CPU) overlap the
        reference's timing and slots; it imports nothing of the candidate until
        asked.  Normally it was started before this process imported PyTorch
        (EARLY_PARTY) and is only adopted here.  For measuring the difference:
        KAUDIT_PARTY_START=after-reference starts it here, after the reference's
        build; late, when the build is requested (begin_build)."""
        global EARLY_PARTY
        if EARLY_PARTY is not None:
            self.party, EARLY_PARTY = EARLY_PARTY, None
            self.party.attach(self.log, self.guard, time.monotonic() - EARLY_PARTY_T)
            return
        if os.environ.get("KAUDIT_PARTY_START") == "late":
            return
        try:
            self.party = PartyLink(self.plan, self.log, self.guard, wait=False)
        except (PartyGone, OSError):
            self.party = None   # begin_build tries again; build_candidate says why

    def _ask(self, op, stage_name=None, **fields):
        """A request to the candidate's process; when the process is gone, a stage
        error (stage_name given) or PartyGone."""
        try:
            return self.party.request(op, **fields)
        except PartyGone as exc:
            if stage_name is None:
                raise
            self.log.event("stage", stage=stage_name, status="error", error=str(exc))
            raise StageFailed(stage_name)

    def candidate_slots(self):
        for idx, slot, replaced, sets in self.slots:
            self.turn.pause()
            t0 = time.monotonic()
            refs = self.ref_results[idx]
            calls_out = []
            record = {"index": idx, "name": slot["name"], "kind": slot["kind"],
                      "replaces": replaced["name"] if replaced else None,
                      "replaced_because": replaced["reason"] if replaced else None,
                      "layout": sets[0].layout, "calls": calls_out,
                      "reserve": bool(slot.get("reserve"))}
            if slot.get("gating") is False:
                record["gating"] = False
            mark = f"kaudit:slot {idx} {slot['name']} candidate"
            if slot["kind"] == "repeated":
                self._repeated(idx, sets, refs, calls_out, record, mark)
            else:
                args = sets[0].make(self.device)
                sets[0].drop()
                calls_out.append(self._one_call(idx, 0, args, refs[0], mark=mark))
                del args
            record["seconds"] = self._seconds(idx, t0)
            self.log.event("slot", **record)

    def _extra_slot(self, idx, name, kind, calls, t0=None, layout="contiguous", **more):
        """The "slot" event of a slot apart from the sixteen (the long run,
        train_mode, state_reload, the state check, the reference under the
        candidate's switches), with the seconds each side took when t0 is given."""
        if t0 is not None:
            more["seconds"] = self._seconds(idx, t0)
        self.log.event("slot", index=idx, name=name, kind=kind, replaces=None, replaced_because=None,
                       layout=layout, calls=calls, reserve=False, **more)

    @staticmethod
    def _failed_call(ci, status, error, **more):
        """A call entry with nothing to compare: what stopped it (its status and error)."""
        return dict({"call": ci, "status": status, "error": error, "ref": None, "ref64": None, "cand": None,
                     "reference_mutates": []}, **more)

    def long_run_candidate(self):
        """The long run on the candidate's instance A (every slot's calls before
        it count too): the compared calls on their own values, each followed by
        calls repeated on the same inputs up to the next compared position, so
        that a candidate that changes after some number of calls (a switch to
        bf16 after call 64) is compared after the switch."""
        if not getattr(self, "long_run", None):
            return
        positions, sets, n = self.long_run
        idx, t0, calls_out = LONG_SLOT, time.monotonic(), []
        self.turn.pause()
        for k, pos in enumerate(positions):
            args = sets[k].make(self.device)
            sets[k].drop()
            entry = self._one_call(idx, k, args, self.ref_results[idx][k],
                                   mark=f"kaudit:slot {idx} long_run candidate" if k == 0 else None)
            del args
            entry["position"] = pos
            calls_out.append(entry)
            if entry["status"] != "ok":
                break
            gap = (positions[k + 1] if k + 1 < len(positions) else n) - pos - 1
            if gap > 0:
                try:
                    got = self.party.request("repeat", times=gap)
                    status = got.get("status")
                    if status not in ("ok", "resource-exhausted", "confinement-refused"):
                        status = "candidate-raised"   # its answer: never a lost process
                except PartyGone as exc:
                    got, status = {"error": str(exc)}, "candidate-process-ended"
                if status != "ok":
                    # the calls between compared ones raised: the next compared call says so
                    calls_out.append(self._failed_call(k + 1, status, "in the calls repeated after position %d: %s"
                                                       % (pos, got.get("error", "?")), position=pos + 1))
                    break
        self._extra_slot(idx, "long_run", "long", calls_out, t0, calls_made=n)

    def train_mode_candidate(self):
        """The train_mode slot on the candidate's instance A: train mode and the
        same reseeded generator for its one call, eval mode after."""
        if not getattr(self, "train_slot", None):
            return
        slot, sets = self.train_slot
        idx, t0 = slot["index"], time.monotonic()
        self.turn.pause()
        args = sets[0].make(self.device)
        sets[0].drop()
        entry = self._one_call(idx, 0, args, self.ref_results[idx][0], mode="train", rng_seed=slot["rng_seed"],
                               mark=f"kaudit:slot {idx} train_mode candidate")
        self._extra_slot(idx, "train_mode", "mode", [entry], t0)

    def candidate_flags(self):
        """PyTorch's switches the candidate flipped (event "global_state", each a
        finding).  Where one can change a float32 result, the reference is run
        again on value_normal's inputs under the candidate's switches and
        compared with its own output there, as a reported slot (never gating):
        a difference says that a harness holding both in one process compares
        the candidate with a changed reference."""
        try:
            got = self.party.request("flags")
        except PartyGone:
            return
        before, after = got.get("before"), got.get("after")
        if not isinstance(before, dict) or not isinstance(after, dict):
            return
        flipped = kaudit_flags.changed(before, after)
        self.log.event("global_state", before=before, after=after, changed=flipped)
        affecting = [k for k in flipped if k in kaudit_flags.RESULT_FLAGS and kaudit_flags.allowed(k, after[k])]
        first = next((e for e in self.slots if e[0] == 0), None)
        if not affecting or first is None:
            return
        idx, _, _, sets = first
        r = self.ref_results[0][0]
        entry = {"call": 0, "ref": r["ref"], "ref64": r["ref64"], "fp64_error": r["fp64_error"],
                 "reference_mutates": r["reference_mutates"], "cand": None, "status": "ok"}
        try:
            # as the reference ran (TF32 off), then the candidate's switches
            # a twin with the state slot 0 ran on (train_mode may have moved the reference's since)
            twin = copy.deepcopy(self.ref)
            twin.load_state_dict(self.ref_state)
            with ieee_fp32(), kaudit_flags.applied({k: after[k] for k in affecting}):
                args = sets[0].make(self.device)
                out = self.call(twin, args, REF)
                leaves = output_leaves(out) + [(f"input[{i}]", args[i]) for i in r["reference_mutates"]]
                entry["cand"] = self.write(f"s{FLAGS_SLOT:02d}c0-cand.kt", sampled(leaves, (self.sample_key, 0, 0)))
            sets[0].drop()
        except Exception as exc:
            entry["status"], entry["error"] = "candidate-raised", \
                "the reference under the candidate's switches raised: " + short_error(exc)[0]
        self._extra_slot(FLAGS_SLOT, "reference_under_candidate_flags", "flags", [entry], gating=False,
                         flags={k: after[k] for k in affecting})

    def state_reload_candidate(self):
        """The slot state_reload on the candidate's instance A, which has run
        every slot: the second state loaded (load_state_dict through the
        verified mapping) and one call on the slot's values; then the first
        state loaded back and a call on the same values with it, which also
        rebuilds what the candidate derives from its weights before the probe
        and the timing.  A candidate that derives something from its weights
        once (packed at its first call) and never again differs here."""
        if not getattr(self, "reload_slot", None):
            return
        state, back, sets = self.reload_slot
        idx, t0, calls = RELOAD_SLOT, time.monotonic(), []
        self.turn.pause()
        for ci, (given, name, what) in enumerate(((state, "state-reload.pt", "loading the second state"),
                                                   (back, "state-first.pt", "loading the first state back"))):
            try:
                got = self.party.request("reload", state=self.party.hand(name, given))
            except PartyGone as exc:
                got = {"status": "candidate-process-ended", "error": str(exc)}
            if got.get("status") != "ok":
                status = "candidate-process-ended" if got.get("status") == "candidate-process-ended" \
                    else "candidate-raised"
                calls.append(self._failed_call(ci, status, "%s: %s" % (what, got.get("error", "?"))))
                break
            args = sets[0].make(self.device)
            sets[0].drop()
            calls.append(self._one_call(idx, ci, args, self.ref_results[idx][ci],
                                        mark=f"kaudit:slot {idx} state_reload candidate" if ci == 0 else None))
            del args
        self._extra_slot(idx, "state_reload", "reload", calls, t0,
                         state_symmetric=bool(getattr(self, "reload_symmetric", False)))

    def state_after_calls(self):
        """The candidate's state after its slots against the reference's after
        its own, judged by kaudit like a call's outputs (slot kind "state",
        counted apart from the sixteen): a parameter or running statistic the
        candidate changed in place and the reference did not is a FAIL."""
        idx = STATE_SLOT
        casts = getattr(self, "state_casts", {})

        def as_given(k, v):
            """v as the candidate was given it: cast to its dtype (when it keeps
            another floating dtype) and back, so that an untouched copy compares equal."""
            dt = getattr(torch, casts[k], None) if k in casts else None
            return v.to(dt).to(v.dtype) if isinstance(dt, torch.dtype) and v.is_floating_point() else v
        skip = getattr(self, "state_reference_only", set())
        ref = [("state." + k, as_given(k, v)) for k, v in self.ref.state_dict().items() if k not in skip]
        ref64 = [("state." + k, as_given(k, v)) for k, v in self.ref64.state_dict().items() if k not in skip]
        key = (self.sample_key, idx, 0)
        entry = {"call": 0, "ref": self.write(f"s{idx:02d}c0-ref.kt", sampled(ref, key)),
                 "ref64": self.write(f"s{idx:02d}c0-ref64.kt", sampled(ref64, key)), "fp64_error": None,
                 "reference_mutates": [], "cand": None, "status": "ok"}
        name = f"s{idx:02d}c0-cand.kt"
        try:
            took = self.party.request("state", name=name, key=list(key))
            if took.get("ok") is False:
                raise OSError(str(took.get("error", "its state could not be written")))
            self.party.take(str(took.get("file", "")), os.path.join(self.tensors, name))
            entry["cand"] = "tensors/" + name
        except PartyGone as exc:
            entry["status"], entry["error"] = "candidate-process-ended", str(exc)
        except (OSError, KeyError, TypeError, ValueError) as exc:
            entry["status"], entry["error"] = "candidate-raised", "taking its state: %s" % exc
        self._extra_slot(idx, "state_after_calls", "state", [entry], layout=None)

    def _one_call(self, idx, ci, args, r, instance="A", refill=False, keep=False, mark=None, mode=None,
                  rng_seed=None):
        """One call in the candidate's process on args, handed over; its outputs
        sampled as this process says once the call has returned."""
        entry = self._entry(ci, r)
        try:
            inputs = self.party.hand("inputs.pt", list(args))
            got = self.party.request("call", inputs=inputs, instance=instance, refill=refill, keep=keep,
                                     call=ci, mark=mark, reference_mutates=r["reference_mutates"],
                                     mode=mode, rng_seed=rng_seed,
                                     poison=[(list(sh), str(dt).replace("torch.", "")) for sh, dt in r["poison"]])
            if got.get("ok") is False:
                entry["status"], entry["error"] = "candidate-raised", got.get("error", "?")
                return entry
            if got.get("status") != "ok":
                entry["status"] = got.get("status") if got.get("status") in ("candidate-raised",
                                                                           "resource-exhausted",
                                                                           "confinement-refused") \
                    else "candidate-raised"
                entry["error"], entry["traceback"] = str(got.get("error", "?")), str(got.get("traceback", ""))
                return entry
            entry["candidate_mutates"] = [int(i) for i in got.get("candidate_mutates", [])]
            self._collect(entry, idx, ci, "collect")
        except PartyGone as exc:  # it exited, was killed or broke the channel: no result to judge
            entry["status"], entry["error"] = "candidate-process-ended", str(exc)
        return entry

    @staticmethod
    def _entry(ci, r):
        """A call's event entry before the candidate's answer: the reference's
        files r gives for it, nothing of the candidate's yet."""
        return {"call": ci, "ref": r["ref"], "ref64": r["ref64"], "fp64_error": r["fp64_error"],
                "reference_mutates": r["reference_mutates"], "cand": None, "status": "ok"}

    def _collect(self, entry, idx, ci, op, **fields):
        """The outputs the candidate's process writes on request op (sampled
        with the key given now), taken into this process's tensors as call ci
        of slot idx: entry's "cand", or its status and error.  PartyGone
        passes through."""
        name = f"s{idx:02d}c{ci}-cand.kt"
        took = self.party.request(op, name=name, key=[self.sample_key, idx, ci], **fields)
        if not took.get("ok"):
            entry["status"], entry["error"] = "candidate-raised", "writing its outputs: " + str(took.get("error"))
            return
        try:
            self.party.take(str(took.get("file", "")), os.path.join(self.tensors, name))
        except OSError as exc:  # missing, a link, not a regular file: nothing of its own to judge
            entry["status"], entry["error"] = "candidate-raised", "taking its outputs: %s" % exc
            return
        entry["cand"] = "tensors/" + name

    def _repeated(self, idx, sets, refs, calls_out, record, mark):
        buffers_made = False
        for ci, (inst, vi) in enumerate(REPEATED_CALLS):
            args = sets[vi].make(self.device)
            sets[vi].drop()
            entry = self._one_call(idx, ci, args, refs[ci], instance=inst, refill=buffers_made, keep=True,
                                   mark=mark if ci == 0 else None)
            buffers_made = True
            entry["instance"] = inst
            calls_out.append(entry)
            if entry["status"] == "candidate-raised" and entry.get("error", "").startswith("building a fresh"):
                return
        # An earlier call's output that a later call overwrote (output aliasing),
        # as the candidate's process reports it.
        try:
            got = self.party.request("aliasing")
            record["aliasing"] = [{"call": int(a["call"]), "leaf": str(a["leaf"])}
                                  for a in got.get("aliasing", [])]
        except (PartyGone, KeyError, TypeError, ValueError):
            record["aliasing"] = []
        record["reference_aliasing"] = self.ref_aliasing.get(idx, [])

    def time_candidate(self):
        if self.device.type != "cuda":
            return
        args = self.canonical.make(self.device)
        self.canonical.drop()
        got = self._ask("time_calls", inputs=self.party.hand("canonical.pt", list(args)),
                        mark="kaudit:reported_ms", timed_calls=self.plan.get("timed_calls", 5))
        if not got.get("ok"):
            raise RuntimeError(got.get("error", "the candidate's timed calls failed"))

    def party_arm(self, name, guard=False):
        """An arm timed in the candidate's process: () -> ms."""
        base = self.canonical.make(self.device)
        self.canonical.drop()
        got = self.party.request("arm", arm=name, inputs=self.party.hand("arm-%s.pt" % name, list(base)),
                                 guard=guard)
        if not got.get("ok"):
            raise RuntimeError(got.get("error", "setting up the candidate's arm"))

        def one():
            ms = self.party.request("time_one", arm=name)
            if not ms.get("ok"):
                raise RuntimeError(ms.get("error", "the candidate's timed call failed"))
            return float(ms["ms"])
        return one

    def probe_inputs(self, offset):
        """The task's get_inputs() under the plan's seed plus offset."""
        return SlotInputs(lambda: native_inputs(self.ref_mod, self.seed + offset, self.native_device), "contiguous")

    # --- the causal probe (runner/kaudit_probe.py)

    def probe(self, spec):
        """The candidate's call on the task's inputs, replayed in its process with its
        forbidden operators' outputs replaced by noise; one event "probe" (docs/audit.md)."""
        t0 = time.monotonic()
        nonce = os.urandom(8).hex()  # the sampled elements of large outputs: not predictable by the candidate
        fresh = self.probe_inputs(kaudit_probe.PROBE_SEED_OFFSET)
        # the reference on the probe's own inputs, in this process: the candidate's
        # unperturbed baseline must match it, or the counterfactual measured on
        # that baseline says nothing of the answer the slots judged
        reference = self.probe_reference(fresh, nonce)
        try:
            inputs = self.party.hand("probe.pt", list(fresh.make(self.device)))
            fresh.drop()
            got = self.party.request("probe", spec=spec, inputs=inputs, nonce=nonce)
            event = got.get("probe") if isinstance(got.get("probe"), dict) else {
                "status": "unresolved", "check": "probe-raised", "error": str(got.get("error", "?"))}
            # each replay's copy named here, by its place in the answer: never
            # after the candidate's name for it, which could be the name of
            # the reference's files of the probe beside them
            replays = event.get("replays", []) if isinstance(event.get("replays"), list) else []
            for i, rep in enumerate(replays):
                if not isinstance(rep, dict):
                    raise OSError("replay %d of the probe's answer is no object" % i)
                dest = "probe-replay-%03d.kt" % i
                self.party.take(os.path.basename(str(rep.get("file", ""))), os.path.join(self.tensors, dest))
                rep["file"] = "tensors/" + dest
        except PartyGone as exc:
            event = {"status": "unresolved", "check": "probe-raised", "error": str(exc)}
        except OSError as exc:
            event = {"status": "unresolved", "check": "probe-raised", "error": "taking its outputs: %s" % exc}
        event["seed"] = int(spec.get("seed", 0))
        event["reference"] = reference
        event["seconds"] = round(time.monotonic() - t0, 3)
        self.log.event("probe", **event)

    def probe_reference(self, fresh, nonce):
        """The reference's outputs on the probe's inputs, native precision (TF32
        off, as for the slots) and fp64, sampled as the candidate's replays are:
        {"ref": file, "ref64": file or None, "error": why or None}."""
        got = {"ref": None, "ref64": None, "error": None}
        key = ("probe", nonce)
        try:
            with ieee_fp32():
                out = self.call(self.ref, fresh.make(self.device), REF)
            got["ref"] = self.write("probe-reference.kt", sampled(output_leaves(out), key))
            del out
        except Exception as exc:
            self.refused(exc, "on the probe's inputs")
            got["error"] = "the reference raised on the probe's inputs: " + short_error(exc)[0]
            return got
        try:
            out64 = self.call(self.ref64, fresh.make(self.device, fp64=True), CALIB)
            got["ref64"] = self.write("probe-reference64.kt", sampled(output_leaves(out64), key))
            del out64
        except Exception as exc:  # fp64 unsupported by an operator
            self.refused(exc, "in fp64 on the probe's inputs")
            got["error"] = "the fp64 reference did not run on the probe's inputs: " + short_error(exc)[0]
        return got


class ieee_fp32:
    """The reference's outputs in the task's own precision: on a GPU PyTorch
    lets cuDNN (and, when asked, cuBLAS) compute float32 in TF32, whose error
    is about 1e-3, far above float32's; calibrated against that, no tolerance
    resolves (rho_bar > rho_max) and a TF32 candidate would look exact.  The
    reference runs with TF32 off; the settings are put back before the
    candidate is imported, which then runs as any harness would run it."""

    def __enter__(self):
        self.saved = (torch.backends.cudnn.allow_tf32, torch.backends.cuda.matmul.allow_tf32)
        torch.backends.cudnn.allow_tf32 = False
        torch.backends.cuda.matmul.allow_tf32 = False
        return self

    def __exit__(self, *exc):
        torch.backends.cudnn.allow_tf32, torch.backends.cuda.matmul.allow_tf32 = self.saved
        return False


def run(plan, log, guard):
    r = Runner(plan, log, guard)
    run.runner = r
    r.turn.share()   # from here on its work on the device lets no other audit's timed phase in
    torch.manual_seed(r.seed)
    r.build_reference()
    if plan.get("describe_only"):
        return
    r.start_party()
    # timed while no code of the candidate exists anywhere: nothing of it can run
    # beside the reference's timed calls and slow them (a larger speedup)
    with r.turn.held("reference"):
        stage(log, "time_reference", r.time_reference)
        r.time_aa()
    r.begin_build()   # the candidate's build, in its own process, overlaps the reference's slots
    with ieee_fp32() as precision:
        log.event("precision", reference_tf32=False, restored_cudnn_tf32=precision.saved[0],
                  restored_matmul_tf32=precision.saved[1])
        r.reference_slots()
    with r.turn.released():   # importing and building: compilers, on the CPU, for minutes
        r.build_candidate()   # in its own process, aligned there (kaudit_party.py)
    r.candidate_slots()
    r.long_run_candidate()
    r.train_mode_candidate()
    r.state_after_calls()
    r.candidate_flags()
    r.state_reload_candidate()
    if plan.get("probe"):
        r.turn.pause()
        r.probe(plan["probe"])
    with r.turn.held("candidate"):
        stage(log, "time_candidate", r.time_candidate)
        r.time_speedup()


def report_turns(r):
    if r is not None:
        r.turn.report()


def run_weak(r, plan, log):
    """The weak surfaces (runner/kaudit_weak.py), after the audit's own work
    and its "done": whatever they do (hang, crash) the audit's evidence is
    complete; kaudit REJECTs the surfaces that did not report."""
    names = plan.get("weak_surfaces") or []
    if names and r is not None and r.party is not None:
        # the fp64 twin and the audit's value sets are not needed any more: room
        # for the surfaces' own instances and inputs (KernelBench's largest)
        r.ref64 = None
        r.ref_results = {}
        if r.device.type == "cuda":
            torch.cuda.empty_cache()
        # they imitate validators that hold both parties in one process: they run
        # in the candidate's, with the reference imported there
        # in the runner's own process: the candidate's process can open a "kaudit:weak"
        # range of its own, but the analysis takes its weak phase only from here on
        r.marks.mark("kaudit:weak requested")
        try:
            r.party.request("weak", names=names, reference=plan["reference"], candidate=plan["candidate"],
                            native_on_device=r.native_device is not None)
        except PartyGone:
            pass   # kaudit REJECTs the surfaces that did not report


def end_party(r):
    global EARLY_PARTY
    if r is not None and r.party is not None:
        r.party.close()
    if EARLY_PARTY is not None:   # started, never adopted (the reference failed first)
        EARLY_PARTY.close()
        EARLY_PARTY = None        # closed once: its descriptors' numbers may be reused


def main(argv):
    if len(argv) != 2:
        print("usage: kaudit_runner.py PLAN.json", file=sys.stderr)
        return EXIT_BAD_PLAN
    try:
        with open(argv[1]) as f:
            plan = json.load(f)
        if plan.get("kaudit_plan") != 1:
            raise ValueError(f"plan version {plan.get('kaudit_plan')!r}, this runner reads 1")
    except Exception as exc:
        print(f"kaudit_runner: cannot read plan '{argv[1]}': {exc}", file=sys.stderr)
        return EXIT_BAD_PLAN
    log = Log(os.path.join(plan["out_dir"], "events.jsonl"))
    log.event("start", pid=os.getpid(), python=sys.version.split()[0], torch=torch.__version__,
              device=plan["device"], cuda_available=bool(torch.cuda.is_available()))
    if plan["device"] == "cuda" and not torch.cuda.is_available():
        log.event("stage", stage="device", status="error", error="CUDA is not available to PyTorch")
        return EXIT_STAGE_FAILED
    os.chdir(plan.get("work_dir", plan["out_dir"]))
    guard = WriteGuard(plan.get("write_roots") or [os.getcwd()], log)
    sys.addaudithook(guard.hook)
    try:
        run(plan, log, guard)
    except (StageFailed, EvidenceLost) as exc:
        stopped = str(exc)
        if isinstance(exc, EvidenceLost):
            log.event("stage", stage="evidence", status="error", code=exc.code, error=str(exc)[:500])
            stopped = "evidence"
        log.event("done", status="stage-failed", stage=stopped)
        # the surfaces build their own instances: a candidate the audit could
        # not align (or call) may still be judged by them, as upstream would
        run_weak(getattr(run, "runner", None), plan, log)
        end_party(getattr(run, "runner", None))
        report_turns(getattr(run, "runner", None))
        return EXIT_STAGE_FAILED
    log.event("done", status="ok")
    run_weak(run.runner, plan, log)
    end_party(run.runner)
    report_turns(run.runner)
    return EXIT_DONE


if __name__ == "__main__":
    code = main(sys.argv)
    end_party(None)   # one main ended before adopting (a bad plan, no CUDA)
    sys.stdout.flush()
    sys.stderr.flush()
    # os._exit: a candidate's atexit handlers or lingering threads cannot
    # change the status or hang the exit.
    os._exit(code)
