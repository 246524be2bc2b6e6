"""The causal probe's dispatcher channel (docs/audit.md, "Causal probe";
paper 3.3, Eq. 2): does the candidate's output depend on the forbidden work
it hands to the framework?

The runner calls run_probe() after the semantic slots.  On the task's own
inputs (get_inputs() under the plan's seed), the aligned candidate is called
under a TorchDispatchMode that sees every ATen operator the call dispatches,
from Python or from C++ (an extension calling at::matmul):

  baseline   records the operator sequence; the output is written
  repeat     the same call again: the sequence must be the same, and the
             output's change is the noise floor
  joint      the floating outputs of every targeted operator (the plan's
             forbidden classes) replaced in place by noise of the same mean
             and standard deviation, seeded by (seed, operator index)
  class:C    the same for the operators of one class at a time (localization)
  vendor     with the dispatcher untouched, the output of every library call
             (cuBLAS and cuBLASLt GEMMs, cuDNN convolutions) replaced after
             the real call by the preload (preload/vendor_probe.c)
  vendor-except-call:i, vendor-except:F
             the same for every library call but call i (at most
             VENDOR_CALLS_LOCALIZED calls), or but family F (gemm, conv)
             when there are more (localization): kaudit compares each with
             the vendor replay, so a call is cleared only when replacing it
             too, with every other call replaced, changes nothing (a call
             replaced alone can change nothing while the output still depends
             on it: a majority vote of three identical GEMMs)

The runner only calls, perturbs and writes; kaudit (audit/audit_probe.c)
compares the outputs, checks their structure and decides.  The noise is made
on the CPU and copied in, so that the probe launches no kernel of a
forbidden class in the candidate's phase.  Kernels a library launches below
the dispatcher (an extension calling cublasSgemm) are out of the dispatcher's
reach: the vendor replays reach those; what neither reaches (a kernel
launched without a library call) is left to launch provenance, the second
channel.
"""
import copy
import os
import time

import torch

import kaudit_tensors

try:
    from torch.utils._python_dispatch import TorchDispatchMode
except Exception:  # very old PyTorch
    TorchDispatchMode = None


PREIMPORTED_MODULE = "torch._dynamo"


class Preimport:
    """What the first operator dispatched under a TorchDispatchMode imports:
    on PyTorch 2.x that first dispatch imports torch._dynamo (4.5 s on an
    idle H100 machine, 8.5 to 14 s under eight parallel audits), which
    otherwise falls inside the probe's first replay, on the audit's critical
    path.  Where it is imported instead, and why there:

    - "before-ready" (finish() at the process's start): for a candidate that
      builds nothing, it then overlaps the runner's own start;
    - "during-build" (during()): for a candidate that compiles an
      extension, while its compilers run, in a thread of its own, when the
      process's only other thread waits on ninja and imports nothing, so the
      two imports never race (a concurrent circular import can hand a thread
      a partly initialised module) and the import costs no wall time, where
      before the process said ready it would have delayed the build;
    - "after-stages" (finish() after the candidate's stages): a candidate
      expected to build that did not.

    The runner says which to expect (KAUDIT_PREIMPORT_AT=build, from the
    candidate's text: kaudit_party_link.builds_expected); a wrong guess costs
    time, never evidence.  report(): {"module", "seconds", "when"[, "error"]};
    None where there is nothing to import (PyTorch 1.x) or
    KAUDIT_PROBE_PREIMPORT=off (for measuring the difference).  A failure is
    reported, never fatal: the probe then meets it as it would have.  The
    candidate's process's own report."""

    def __init__(self, module=PREIMPORTED_MODULE):
        self.module = module
        self.got = None
        self.thread = None
        self.wanted = os.environ.get("KAUDIT_PROBE_PREIMPORT") != "off" and self._importable(module)

    @staticmethod
    def _importable(module):
        import importlib.util
        try:
            return importlib.util.find_spec(module) is not None
        except Exception:
            return False

    def _import(self, when):
        import importlib
        t0 = time.monotonic()
        got = {"module": self.module, "when": when}
        try:
            importlib.import_module(self.module)
        except Exception as exc:
            got["error"] = "%s: %s" % (type(exc).__name__, str(exc).splitlines()[0][:200] if str(exc) else "")
        got["seconds"] = round(time.monotonic() - t0, 3)
        self.got = got

    def during(self, build):
        """build (PyTorch's ninja run) wrapped: the import starts beside the
        first one and is waited for before it returns."""
        def wrapped(*args, **kwargs):
            started = None
            if self.wanted and self.got is None and self.thread is None:
                import threading
                started = self.thread = threading.Thread(target=self._import, args=("during-build",),
                                                         name="kaudit-preimport", daemon=True)
                started.start()
            try:
                return build(*args, **kwargs)
            finally:
                if started is not None:
                    started.join()
        return wrapped

    def install(self):
        """during() around torch.utils.cpp_extension's ninja run, the one step of
        load() and load_inline() that only waits on compilers.  Returns the
        function to put back (None where PyTorch has no such step, or the
        import is done)."""
        if not self.wanted or self.got is not None:
            return None
        try:
            import torch.utils.cpp_extension as ext
        except Exception:
            return None
        original = getattr(ext, "_run_ninja_build", None)
        if not callable(original):
            return None
        ext._run_ninja_build = self.during(original)
        return original

    @staticmethod
    def uninstall(original):
        if original is not None:
            import torch.utils.cpp_extension as ext
            ext._run_ninja_build = original

    def finish(self, when="after-stages"):
        """The import done, here if no build did it; its report."""
        if self.wanted and self.got is None and self.thread is None:
            self._import(when)
        return self.got


# At most this many calls' input sizes are logged per operator.
SIZES_KEPT = 8
# The probe's inputs: get_inputs() under the plan's seed plus this (the slots' native
# seeds are the plan's seed plus a small offset).
PROBE_SEED_OFFSET = 0x5EED0BE
# Up to this many library calls are replayed one at a time; beyond, one family at a time.
VENDOR_CALLS_LOCALIZED = 8


def base_name(func):
    """'mm' for aten.mm.default, 'add' for aten.add_.Tensor (in place)."""
    name = func.overloadpacket.__name__
    if len(name) > 1 and name.endswith("_") and not name.endswith("__"):
        name = name[:-1]
    return name


def target_class(targets, name):
    cls = targets["names"].get(name)
    if cls is None:
        for prefix, c in targets["prefixes"]:
            if name.startswith(prefix):
                return c
    return cls


def unclassified_class(targets, func, name, args, kwargs, out):
    """The class an ATen operator in no family is targeted as (the plan's
    "unclassified"), or None: not for another class's operator (glue among
    them), another namespace's (the candidate's own extension ops), a view
    or an in-place result (replacing it would write into an input), nor an
    operator without a tensor input (a constant made in the call)."""
    cls = targets.get("unclassified")
    if not cls or name in targets["untargeted_names"] or \
            any(name.startswith(p) for p in targets["untargeted_prefixes"]):
        return None
    try:
        if str(func._schema.name).split("::")[0] != "aten" or \
                any(r.alias_info is not None for r in func._schema.returns):
            return None
    except AttributeError:
        return None
    inputs = [a for a in list(args) + list((kwargs or {}).values()) for a in tensor_leaves(a)]
    if not inputs:
        return None
    try:
        held = {storage_address(a) for a in inputs}
        if any(storage_address(t) in held for t in tensor_leaves(out)):
            return None
    except (RuntimeError, NotImplementedError):
        return None
    return cls


def storage_address(t):
    """Where t's storage starts (PyTorch 2's untyped_storage, 1.x's storage)."""
    return t.untyped_storage().data_ptr() if hasattr(t, "untyped_storage") else t.storage().data_ptr()


def sizes_of(args):
    out = []
    for a in args:
        if isinstance(a, torch.Tensor):
            out.append(list(a.shape))
        elif isinstance(a, (list, tuple)) and a and all(isinstance(x, torch.Tensor) for x in a):
            out.append([list(x.shape) for x in a])
        else:
            out.append([])
    return out


def tensor_leaves(out):
    if isinstance(out, torch.Tensor):
        return [out]
    if isinstance(out, (list, tuple)):
        return [t for o in out for t in tensor_leaves(o)]
    return []


def replace_with_noise(t, seed):
    """t's values replaced in place, drawn on the CPU from a generator seeded
    by seed: a floating tensor by noise of its mean and standard deviation (a
    constant one gets a spread of its magnitude, or 1); an integer tensor
    (argmax's, topk's indices) by integers drawn between its smallest and
    largest value; a bool tensor by coin flips.  Returns 1 when replaced, 0
    when it cannot be (complex)."""
    if t.numel() == 0:
        return 1  # nothing to replace: nothing flows from it
    g = torch.Generator()
    g.manual_seed(seed & 0x7FFFFFFFFFFFFFFF)
    if t.dtype == torch.bool:
        t.copy_(torch.randint(0, 2, tuple(t.shape), generator=g).bool())
        return 1
    if t.is_complex():
        return 0
    if not t.is_floating_point():
        host = t.detach().to("cpu", torch.int64)
        lo, hi = int(host.min()), int(host.max())
        if lo == hi:
            lo, hi = min(0, lo), max(1, hi, 2 * abs(hi))
        t.copy_(torch.randint(lo, hi + 1, tuple(t.shape), generator=g, dtype=torch.int64).to(t.dtype))
        return 1
    host = t.detach().to("cpu", torch.float64)
    finite = host[torch.isfinite(host)]
    mean = float(finite.mean()) if finite.numel() else 0.0
    std = float(finite.std()) if finite.numel() > 1 else 0.0
    if not std > 0:
        std = max(abs(mean), 1.0)
    noise = torch.randn(tuple(t.shape), generator=g, dtype=torch.float64) * std + mean
    t.copy_(noise.to(t.dtype))
    return 1


if TorchDispatchMode is not None:
    class Dispatch(TorchDispatchMode):
        """Records the operator sequence of one call; replaces the floating
        outputs of the operators at the indices in `perturb`."""

        def __init__(self, targets, perturb=frozenset(), seed=0):
            super().__init__()
            self.targets = targets
            self.perturb = perturb
            self.seed = seed
            self.seq = []           # (base name, class or None, input sizes)
            self.perturbed = []     # indices whose outputs were replaced

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            if WATCH.active:
                WATCH.dispatched += 1
            out = func(*args, **(kwargs or {}))
            i = len(self.seq)
            name = base_name(func)
            cls = target_class(self.targets, name)
            if cls is None:
                cls = unclassified_class(self.targets, func, name, args, kwargs, out)
            self.seq.append((name, cls, sizes_of(args)))
            if i in self.perturb:
                leaves = tensor_leaves(out)
                replaced = [replace_with_noise(t, self.seed * 1000003 + i * 131 + j) for j, t in enumerate(leaves)]
                if leaves and all(replaced):  # every output, or the operator counts as not perturbed
                    self.perturbed.append(i)
            return out


class Watch:
    """What a replay's call does to the probe's sight, as this process sees it:
    threads it starts (the dispatch mode is per thread) and dispatch modes it
    pops (the probe's among them).  Installed when this module is imported,
    before the candidate is: the functions that start threads and pop modes
    are wrapped where the candidate would find them.  Evidence from inside the
    candidate's process, so a self-report (docs/threat-model.md): native code
    can start threads or pop modes below these wrappers; what the trace shows
    (launch provenance) and the baseline's check against the reference do not
    depend on it."""

    def __init__(self):
        self.active = False
        self.threads = 0
        self.pops = 0
        self.dispatched = 0          # operators the probe's mode handled while active
        self.pops_per_dispatch = 0   # what PyTorch's own mode machinery pops for each (1.13: 1; 2.x: 0)

    def begin(self):
        self.threads = self.pops = self.dispatched = 0
        self.depth = self._depth()
        self.others = self._other_python_threads()
        self.active = True

    def end(self):
        """Why the call was out of the probe's sight, or None."""
        self.active = False
        why = []
        if self.threads:
            why.append("started %d thread%s" % (self.threads, "" if self.threads == 1 else "s"))
        popped = self.pops - self.pops_per_dispatch * self.dispatched
        if popped > 0:
            why.append("popped %d dispatch mode%s" % (popped, "" if popped == 1 else "s"))
        if self._depth() != self.depth:
            why.append("left the dispatch mode stack %d deep, not %d" % (self._depth(), self.depth))
        ran = [t for t, ns in self._other_python_threads().items() if ns > self.others.get(t, ns)]
        if ran:
            why.append("had %d other Python thread%s running (a pool started before)" %
                       (len(ran), "" if len(ran) == 1 else "s"))
        return "; ".join(why) or None

    @staticmethod
    def _other_python_threads():
        """{native id: nanoseconds it has run} of this process's other Python threads
        (the kernel's account, /proc/self/task/ID/schedstat): one that runs during the
        call does work the caller's dispatch mode does not see."""
        import threading
        me = threading.get_native_id()
        out = {}
        for t in threading.enumerate():
            tid = getattr(t, "native_id", None)
            if tid is None or tid == me:
                continue
            try:
                with open("/proc/self/task/%d/schedstat" % tid) as f:
                    out[tid] = int(f.read().split()[0])
            except (OSError, ValueError, IndexError):
                pass
        return out

    @staticmethod
    def _depth():
        try:
            return torch._C._len_torch_dispatch_stack()
        except AttributeError:
            return 0

    def install(self):
        import _thread
        import threading
        watch = self

        def counted(start):
            def start_new_thread(*args, **kwargs):
                if watch.active:
                    watch.threads += 1
                return start(*args, **kwargs)
            return start_new_thread
        for owner, name in ((_thread, "start_new_thread"), (threading, "_start_new_thread"),
                            (_thread, "start_joinable_thread"), (threading, "_start_joinable_thread")):
            if hasattr(owner, name):
                setattr(owner, name, counted(getattr(owner, name)))

        def counted_pop(pop):
            def pop_torch_dispatch_stack(*args, **kwargs):
                if watch.active:
                    watch.pops += 1
                return pop(*args, **kwargs)
            return pop_torch_dispatch_stack
        try:
            from torch.utils import _python_dispatch as pd
        except Exception:
            pd = None
        for owner in (torch._C, pd):
            if owner is not None and hasattr(owner, "_pop_torch_dispatch_stack"):
                owner._pop_torch_dispatch_stack = counted_pop(owner._pop_torch_dispatch_stack)
        # PyTorch 1.x runs a mode through a Python helper mode that pops it around
        # each call of its handler; later versions do that in C++.  Measured: 1 on
        # 1.13, 0 on 2.11.  (Not by running a mode here, at import: on 2.11 an
        # operator under a mode imports torch._dynamo, and done here that left
        # every later probe replay raising "Artifact ... already registered".)
        self.pops_per_dispatch = 1 if pd is not None and hasattr(pd, "_TorchDispatchStackMode") else 0


WATCH = Watch()
WATCH.install()


class VendorChannel:
    """The preload library's vendor-boundary channel (preload/vendor_probe.c):
    library outputs replaced after the real call, for work that never passes
    the dispatcher (an extension calling cublasSgemm itself).  None outside
    `kaudit run` (no preload)."""

    OFF, COUNT, PERTURB = 0, 1, 2
    FAMILIES = {1: "gemm", 2: "conv"}
    CALLS_KEPT = 16

    def __init__(self):
        import ctypes
        lib = ctypes.CDLL(None)
        u64p = ctypes.POINTER(ctypes.c_uint64)
        self._set = lib.kaudit_probe_vendor_set
        self._set.argtypes = [ctypes.c_int, ctypes.c_uint64, ctypes.c_int64, ctypes.c_uint, ctypes.c_int]
        self._set.restype = None
        self._counts = lib.kaudit_probe_vendor_family_counts
        self._counts.argtypes = [ctypes.c_int, u64p, u64p, u64p]
        self._counts.restype = None
        self._info = lib.kaudit_probe_vendor_call_info
        self._info.argtypes = [ctypes.c_uint64, ctypes.POINTER(ctypes.c_int64)]
        self._info.restype = ctypes.c_int
        self._ct = ctypes

    @classmethod
    def find(cls):
        try:
            return cls()
        except (AttributeError, OSError):
            return None

    def set(self, mode, seed=0, call=-1, families=0, except_=False):
        """Selection and mode at once (the preload sets the selection first)."""
        self._set(mode, seed & 0xFFFFFFFFFFFFFFFF, call, families, 1 if except_ else 0)

    def counts(self, family=0):
        c, p, f = self._ct.c_uint64(), self._ct.c_uint64(), self._ct.c_uint64()
        self._counts(family, self._ct.byref(c), self._ct.byref(p), self._ct.byref(f))
        return c.value, p.value, f.value

    def seen(self):
        """What was counted since the mode was set: totals, per family, the first calls."""
        calls = []
        out = (self._ct.c_int64 * 5)()
        for i in range(self.CALLS_KEPT):
            if not self._info(i, out):
                break
            calls.append({"family": self.FAMILIES.get(out[0], str(out[0])), "library": int(out[1]),
                          "m": int(out[2]), "n": int(out[3]), "k": int(out[4])})
        return {"all": self.counts(), "families": {n: self.counts(f) for f, n in self.FAMILIES.items()},
                "calls": calls}


class ProbeUnresolved(Exception):
    def __init__(self, check, text):
        super().__init__(text)
        self.check = check
        self.traceback = None   # where a replay raised, for the log


def run_probe(runner, spec, call, write, state_of):
    """spec: the plan's "probe" (targets: {names: {op: class}, prefixes: [[p, class]]},
    seed).  call(args) calls the aligned candidate once; write(name, out) writes
    its output and returns the file; state_of() a snapshot of the candidate's
    parameters and buffers.  Returns the event; ProbeUnresolved names the
    check that failed."""
    event = {"status": "ok", "seed": int(spec.get("seed", 0)), "replays": [], "targets": []}
    if TorchDispatchMode is None:
        raise ProbeUnresolved("no-dispatch-mode", "this PyTorch has no TorchDispatchMode")
    untargeted = spec["targets"].get("untargeted") or {}
    targets = {"names": dict(spec["targets"].get("names", {})),
               "prefixes": [tuple(p) for p in spec["targets"].get("prefixes", [])],
               "unclassified": spec["targets"].get("unclassified"),
               "untargeted_names": frozenset(untargeted.get("names", [])),
               "untargeted_prefixes": tuple(untargeted.get("prefixes", []))}
    seed = event["seed"]
    t_start = time.monotonic()
    before = state_of()
    # One set of input buffers for every replay, refilled from a pristine copy: the same
    # values (a candidate that writes into its inputs changes nothing for the next replay)
    # at the same addresses (a candidate that caches on an input's address sees the same
    # key in every replay, whatever the allocator does).
    # the task's get_inputs() under a seed of the probe's own, which no slot drew: a
    # candidate that caches results by their inputs' values has never seen these
    fresh = runner.probe_inputs(PROBE_SEED_OFFSET)
    pristine = [a.detach().clone() if isinstance(a, torch.Tensor) else a for a in fresh.make(runner.device)]
    fresh.drop()
    buffers = [a.clone() if isinstance(a, torch.Tensor) else a for a in pristine]
    event["inputs_s"] = round(time.monotonic() - t_start, 4)

    vendor = VendorChannel.find()

    def replay(name, perturb, classes=None, vendor_mode=VendorChannel.OFF, vendor_call=-1, vendor_families=0,
               vendor_except=False):
        t0 = time.monotonic()
        mode = Dispatch(targets, perturb, seed)
        args = []
        for b, p in zip(buffers, pristine):
            if isinstance(b, torch.Tensor):
                b.copy_(p)
                args.append(b)
            else:
                args.append(copy.deepcopy(p))
        if vendor is not None:
            vendor.set(vendor_mode, seed, vendor_call, vendor_families, vendor_except)
        # the baseline replay is marked in the trace, which then shows the library calls
        # made in it, whatever thread made them: what the probe must have seen
        window = name == "baseline"
        if window:
            runner.marks.push("kaudit:probe baseline")
        evaded = None
        try:
            with mode:
                WATCH.begin()
                try:
                    out = call(args)
                finally:
                    evaded = WATCH.end()   # before the mode's own exit pops it
        except Exception as exc:
            import traceback
            failed = ProbeUnresolved("replay-raised", "the %s replay raised %s: %s"
                                     % (name, type(exc).__name__, str(exc).splitlines()[0][:200] if str(exc) else ""))
            failed.traceback = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))[-3000:]
            raise failed
        finally:
            if window:
                runner.marks.pop()
            seen = vendor.seen() if vendor is not None else {"all": (0, 0, 0), "families": {}, "calls": []}
            if vendor is not None:
                vendor.set(VendorChannel.OFF)
        if evaded:
            raise ProbeUnresolved("probe-evaded", "the %s replay's call %s: what ran there was out of the "
                                  "dispatch mode's sight" % (name, evaded))
        mode.vendor = seen["all"]
        mode.vendor_seen = seen
        called = time.monotonic()
        entry = {"name": name, "file": write(name, out), "ops": len(mode.seq),
                 "expected": len(perturb), "perturbed": len(mode.perturbed),
                 "call_s": round(called - t0, 4), "write_s": round(time.monotonic() - called, 4)}
        if classes is not None:
            entry["classes"] = classes
        event["replays"].append(entry)
        return mode

    base = replay("baseline", frozenset(), vendor_mode=VendorChannel.COUNT)
    names = [s[0] for s in base.seq]
    event["ops"] = len(names)
    vendor_calls = base.vendor[0]
    event["vendor_channel"] = vendor is not None
    event["vendor_calls"] = vendor_calls
    if vendor_calls:
        event["vendor_families"] = {n: c[0] for n, c in base.vendor_seen["families"].items()}
        event["vendor_call_list"] = base.vendor_seen["calls"]
    groups = {}
    for i, (name, cls, sizes) in enumerate(base.seq):
        if cls is None:
            continue
        g = groups.setdefault((name, cls), {"op": name, "class": cls, "calls": 0, "sizes": [], "indices": []})
        g["calls"] += 1
        g["indices"].append(i)
        if len(g["sizes"]) < SIZES_KEPT:
            g["sizes"].append(sizes)
    event["targets"] = [{k: v for k, v in g.items() if k != "indices"} for g in groups.values()]
    again = replay("repeat", frozenset())
    if [s[0] for s in again.seq] != names:
        raise ProbeUnresolved("sequence-differs", "two identical calls dispatched different operator sequences "
                              "(%d and %d operators): the replays cannot be aligned" % (len(names), len(again.seq)))
    if not groups and not vendor_calls:
        event["status"] = "no-targets"
        return event
    by_class = {}
    for g in groups.values():
        by_class.setdefault(g["class"], []).extend(g["indices"])
    plan = []
    if by_class:
        every = frozenset(i for idx in by_class.values() for i in idx)
        plan.append(("joint", every, sorted(by_class)))
    if len(by_class) > 1:
        plan += [("class:" + c, frozenset(idx), [c]) for c, idx in sorted(by_class.items())]
    for name, perturb, classes in plan:
        mode = replay(name, perturb, classes)
        if [s[0] for s in mode.seq] != names:
            raise ProbeUnresolved("sequence-differs", "the %s replay dispatched another operator sequence than "
                                  "the baseline: the perturbation changed the candidate's path" % name)
        if len(mode.perturbed) != len(perturb):
            raise ProbeUnresolved("target-not-perturbed", "the %s replay perturbed %d of its %d targets (an "
                                  "operator without a floating output)" % (name, len(mode.perturbed), len(perturb)))
    if vendor_calls:
        vendor_replays(event, replay, names, base.vendor_seen)
    if not state_of_equal(before, state_of()):
        raise ProbeUnresolved("protected-state-changed", "the candidate's parameters or buffers changed during "
                              "the probe's replays")
    return event


def vendor_replays(event, replay, names, base_seen):
    """Every library output of the call replaced after it returned (the work below the
    dispatcher), then every one but one call (but one family when there are more
    than VENDOR_CALLS_LOCALIZED).  A failure of the joint replay leaves the vendor
    channel unresolved, not the dispatcher's; a failure of a localizing replay leaves
    only the localization out."""
    total = base_seen["all"][0]
    mode = replay("vendor", frozenset(), ["library"], vendor_mode=VendorChannel.PERTURB)
    why = vendor_replay_failure(event, mode, names, base_seen, total, "vendor")
    if why:
        event["replays"].pop()
        event["vendor_unresolved"] = why
        return
    families = {n: c[0] for n, c in base_seen["families"].items() if c[0]}
    plan = []
    if 2 <= total <= VENDOR_CALLS_LOCALIZED:
        plan = [("vendor-except-call:%d" % i, i, 0, total - 1) for i in range(total)]
    elif len(families) > 1:
        bits = {n: 1 << f for f, n in VendorChannel.FAMILIES.items()}
        plan = [("vendor-except:" + n, -1, bits[n], total - c) for n, c in sorted(families.items())]
    done = len(event["replays"])
    for name, call, bits, expected in plan:
        mode = replay(name, frozenset(), ["library"], vendor_mode=VendorChannel.PERTURB, vendor_call=call,
                      vendor_families=bits, vendor_except=True)
        why = vendor_replay_failure(event, mode, names, base_seen, expected, name)
        if why:
            del event["replays"][done:]
            event["vendor_localization_unresolved"] = why
            return
        event["replays"][-1]["except_call" if call >= 0 else "except_family"] = (
            call if call >= 0 else name.split(":", 1)[1])


def vendor_replay_failure(event, mode, names, base_seen, expected, name):
    """Why a vendor replay does not count (None when it does); its entry records what it replaced."""
    calls, perturbed, failed = mode.vendor
    total = base_seen["all"][0]
    entry = event["replays"][-1]
    entry["expected"], entry["perturbed"] = expected, perturbed
    if [s[0] for s in mode.seq] != names:
        return ("the %s replay dispatched another operator sequence than the baseline: the perturbation changed "
                "the candidate's path" % name)
    if mode.vendor_seen["calls"] != base_seen["calls"]:
        return ("the %s replay made other library calls, or in another order, than the baseline: its "
                "perturbation cannot be laid on the baseline's calls" % name)
    if calls != total or perturbed != expected or failed:
        return ("the %s replay made %d library calls (the baseline %d) and replaced the outputs of %d of %d (%d "
                "could not be: pointer arrays, GEMV, tiled layouts, integer types, a stream being captured, or a "
                "copy failed)" % (name, calls, total, perturbed, expected, failed))
    return None


def state_of_equal(a, b):
    if a.keys() != b.keys():
        return False
    return all(kaudit_tensors.same_values(a[k], b[k]) for k in a)
