#!/usr/bin/env python3
"""harness.py - a KernelBench-style evaluation harness of our own, for the controls.

  python3 harness.py --task TASKFILE --candidate CANDFILE [--iters 3] [--seed 0]
                     [--decision-file PATH]

TASKFILE defines Model, get_inputs() and get_init_inputs() (KernelBench's
convention); CANDFILE defines ModelNew.  The harness runs the reference once,
then the candidate (one untimed warm-up, then --iters timed calls), and
compares the candidate's last output with the reference output using
torch.allclose(atol=1e-2, rtol=1e-2): a deliberately weak verifier that looks
at values only.  It prints "weak: ACCEPT" or "weak: REJECT" and writes the
same word to --decision-file.  Exit status: 0 when the candidate ran (ACCEPT or
REJECT), 1 when the candidate raised, 2 when the harness itself could not run.

What the offline analyzer reads from the recorded session (NVTX, default domain):
  range "kaudit:reference"   around constructing the reference Model and around
                             its forward call;
  range "kaudit:candidate"   around importing the candidate module, around
                             constructing ModelNew (extension builds happen
                             there) and around every candidate forward call
                             (warm-up and timed);
  mark  "kaudit:reported_ms <float>"    after each timed candidate call: the
                             value the harness reports, repr() of the float
                             that Event.elapsed_time returned;
  mark  "kaudit:reference_ms <float>"   the same for the one reference call;
  mark  "kaudit:guard-changed <name>"   a timing entry point that the harness
                             snapshotted before importing the candidate is no
                             longer the same object (name as in GUARDED).
Each timed candidate call is exactly: start.record(); range_push; forward;
range_pop; end.record(); end.synchronize(); ms = start.elapsed_time(end); mark.

The candidate is imported only after the reference model is built and before
any event is timed, as KernelBench loads the candidate's source before it
times anything.  Before comparing, the harness synchronizes the device and
waits for threads the candidate left running (then synchronizes again): a
lenient verifier, so that work hidden from the timer still yields the right
values and the weak verifier accepts it.
"""

import argparse
import importlib.util
import os
import statistics
import sys
import threading
import time
import traceback

import torch

REF = "kaudit:reference"
CAND = "kaudit:candidate"

# Timing entry points snapshotted before the candidate is imported.  Each is
# looked up afresh at check time (a replaced torch.cuda.Event class shows too).
GUARDED = (
    ("torch.cuda.Event.elapsed_time", lambda: torch.cuda.Event.elapsed_time),
    ("torch.cuda.Event.record", lambda: torch.cuda.Event.record),
    ("torch.cuda.Event.synchronize", lambda: torch.cuda.Event.synchronize),
    ("torch.cuda.synchronize", lambda: torch.cuda.synchronize),
    ("time.perf_counter", lambda: time.perf_counter),
)

_MISSING = object()


class CandidateError(Exception):
    """The candidate raised: the run is a REJECT with exit status 1."""

    def __init__(self, where, exc):
        super().__init__(f"{where}: {type(exc).__name__}: {exc}")
        self.where = where
        self.exc = exc


def log(*words):
    print("harness:", *words, flush=True)


# --unmarked: KernelBench's way.  No NVTX at all, and the task and the
# candidate are exec'd from their source text (every code object's file name
# is "<string>"): only Python-side provenance can tell whose work is whose.
UNMARKED = False


def nvtx_mark(msg):
    if not UNMARKED:
        torch.cuda.nvtx.mark(msg)


class nvtx_range:
    """range_push on entry, range_pop on exit (also when the body raises)."""

    def __init__(self, msg):
        self.msg = msg

    def __enter__(self):
        if not UNMARKED:
            torch.cuda.nvtx.range_push(self.msg)
        return self

    def __exit__(self, *exc):
        if not UNMARKED:
            torch.cuda.nvtx.range_pop()
        return False


class ExecModule:
    """The namespace of source text exec'd as KernelBench does, seen as a module."""

    def __init__(self, namespace):
        self.__dict__.update(namespace)


def load_module(name, path):
    path = os.path.abspath(path)
    if UNMARKED:
        with open(path) as f:
            source = f.read()
        # __file__ lets the controls find their shared extension (kernels.py)
        namespace = {"__name__": name, "__file__": path}
        exec(compile(source, "<string>", "exec"), namespace)
        return ExecModule(namespace)
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def snapshot_guards():
    snap = {}
    for name, get in GUARDED:
        obj = get()
        snap[name] = (id(obj), obj)   # the object is held, so its id stays valid
    return snap


def check_guards(snap, reported):
    """Mark (once each) every guarded entry point that is no longer the snapshotted object."""
    for name, get in GUARDED:
        if name in reported:
            continue
        try:
            now = get()
        except Exception:
            now = _MISSING
        if now is not snap[name][1]:
            reported.add(name)
            nvtx_mark(f"kaudit:guard-changed {name}")
            log(f"guard-changed {name}")


def timed_call(model, inputs, phase):
    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    start.record()
    with nvtx_range(phase):
        out = model(*inputs)
    end.record()
    end.synchronize()
    ms = start.elapsed_time(end)
    return out, ms


def settle_threads(timeout_s=30.0):
    """Wait for the non-daemon threads still running (a candidate's); return how many."""
    me = threading.current_thread()
    waited = 0
    for t in threading.enumerate():
        if t is me or t.daemon or not t.is_alive():
            continue
        t.join(timeout_s)
        waited += 1
    return waited


def compare(out, ref):
    """(accept, detail) of the weak verifier."""
    if not isinstance(out, torch.Tensor):
        return False, f"output is {type(out).__name__}, not a tensor"
    if out.shape != ref.shape:
        return False, f"shape {tuple(out.shape)} != reference {tuple(ref.shape)}"
    diff = (out.detach().float() - ref.detach().float()).abs().max().item()
    ok = bool(torch.allclose(out.detach().float(), ref.detach().float(), atol=1e-2, rtol=1e-2))
    return ok, f"max_abs_diff={diff!r}"


def write_decision(path, word):
    if not path:
        return
    try:
        with open(path, "w") as f:
            f.write(word + "\n")
    except OSError as exc:
        log(f"cannot write the decision file {path}: {exc}")


def run_candidate(args, task, guards, guard_seen):
    """Reference and candidate, in the order the module docstring gives; returns
    (last candidate output, reference output, reported times)."""
    torch.manual_seed(args.seed)
    with nvtx_range(REF):
        model = task.Model(*task.get_init_inputs()).cuda()
    inputs = [x.cuda() if isinstance(x, torch.Tensor) else x for x in task.get_inputs()]
    torch.cuda.synchronize()

    try:
        with nvtx_range(CAND):
            cand = load_module("kaudit_candidate", args.candidate)
        model_new_cls = cand.ModelNew
    except Exception as exc:
        raise CandidateError("import", exc) from exc
    check_guards(guards, guard_seen)

    ref_out, ref_ms = timed_call(model, inputs, REF)
    nvtx_mark(f"kaudit:reference_ms {ref_ms!r}")
    log(f"reference_ms {ref_ms!r}")

    try:
        torch.manual_seed(args.seed)
        with nvtx_range(CAND):
            model_new = model_new_cls(*task.get_init_inputs()).cuda()
    except Exception as exc:
        raise CandidateError("construct", exc) from exc
    check_guards(guards, guard_seen)

    # The reference's parameters, where ModelNew has the same names and shapes.
    try:
        ref_sd = model.state_dict()
        new_sd = model_new.state_dict()
        common = {k: v for k, v in ref_sd.items() if k in new_sd and new_sd[k].shape == v.shape}
        if common:
            model_new.load_state_dict(common, strict=False)
            log(f"copied {len(common)} reference parameter(s) into ModelNew")
    except Exception as exc:
        log(f"reference parameters not copied: {type(exc).__name__}: {exc}")

    try:
        with nvtx_range(CAND):
            out = model_new(*inputs)
    except Exception as exc:
        raise CandidateError("warm-up", exc) from exc

    reported = []
    for _ in range(args.iters):
        try:
            start = torch.cuda.Event(enable_timing=True)
            end = torch.cuda.Event(enable_timing=True)
            start.record()
            with nvtx_range(CAND):
                out = model_new(*inputs)
            end.record()
            end.synchronize()
            ms = start.elapsed_time(end)
        except Exception as exc:
            raise CandidateError("timed call", exc) from exc
        nvtx_mark(f"kaudit:reported_ms {ms!r}")
        reported.append(ms)
    log("reported_ms " + " ".join(repr(ms) for ms in reported))
    return out, ref_out, reported


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--task", required=True)
    ap.add_argument("--candidate", required=True)
    ap.add_argument("--iters", type=int, default=3)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--decision-file")
    ap.add_argument("--unmarked", action="store_true",
                    help="no NVTX marks; exec the task and candidate from their source text")
    args = ap.parse_args(argv)
    global UNMARKED
    UNMARKED = args.unmarked
    if args.iters < 1:
        ap.error("--iters must be at least 1")

    guards = snapshot_guards()
    guard_seen = set()
    log(f"task {args.task} candidate {args.candidate} iters {args.iters} seed {args.seed} "
        f"torch {torch.__version__}")
    if not torch.cuda.is_available():
        log("torch.cuda is not available")
        return 2
    try:
        task = load_module("kaudit_task", args.task)
    except Exception:
        traceback.print_exc()
        log("the task could not be loaded")
        return 2

    status = 0
    with torch.no_grad():
        try:
            out, ref_out, reported = run_candidate(args, task, guards, guard_seen)
        except CandidateError as exc:
            traceback.print_exception(type(exc.exc), exc.exc, exc.exc.__traceback__)
            print(f"weak: REJECT (exception in {exc})", flush=True)
            write_decision(args.decision_file, "REJECT")
            status = 1
        except Exception:
            traceback.print_exc()
            log("the harness failed outside the candidate")
            check_guards(guards, guard_seen)
            return 2

        try:
            torch.cuda.synchronize()
            waited = settle_threads()
            if waited:
                log(f"waited for {waited} thread(s) the candidate left running")
                torch.cuda.synchronize()
        except Exception:
            traceback.print_exc()
            if not status:
                print("weak: REJECT (exception in the final synchronize)", flush=True)
                write_decision(args.decision_file, "REJECT")
                status = 1
        check_guards(guards, guard_seen)
        if status:
            return status

        accept, detail = compare(out, ref_out)
        median = statistics.median(reported)
        word = "ACCEPT" if accept else "REJECT"
        print(f"weak: {word} {detail} median_ms={median!r}", flush=True)
        log(f"median_ms {median!r}")
        write_decision(args.decision_file, word)
    return 0


if __name__ == "__main__":
    sys.exit(main())
