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

The runner only calls, perturbs and writes; kaudit (tools/audit_probe.c)
compares the outputs, checks their structure and decides.  The noise is made
on the CPU and copied in, so that the probe launches no kernel of a
forbidden class in the candidate's phase.  Kernels a library launches below
the dispatcher (an extension calling cublasSgemm) are out of this channel's
reach (the vendor-boundary channel is not built yet; launch provenance
stays the second channel).
"""
import copy
import time

import torch

try:
    from torch.utils._python_dispatch import TorchDispatchMode
except Exception:  # very old PyTorch
    TorchDispatchMode = None

# At most this many calls' input sizes are logged per operator.
SIZES_KEPT = 8
# The probe's inputs: get_inputs() under the plan's seed plus this (the slots' native
# seeds are the plan's seed plus a small offset).
PROBE_SEED_OFFSET = 0x5EED0BE


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
            out = func(*args, **(kwargs or {}))
            i = len(self.seq)
            name = base_name(func)
            self.seq.append((name, target_class(self.targets, name), sizes_of(args)))
            if i in self.perturb:
                leaves = tensor_leaves(out)
                replaced = [replace_with_noise(t, self.seed * 1000003 + i * 131 + j) for j, t in enumerate(leaves)]
                if leaves and all(replaced):  # every output, or the operator counts as not perturbed
                    self.perturbed.append(i)
            return out


class VendorChannel:
    """The preload library's vendor-boundary channel (preload/vendor_probe.c):
    cuBLAS GEMM outputs replaced after the real call, for work that never
    passes the dispatcher (an extension calling cublasSgemm itself).  None
    outside `kaudit run` (no preload)."""

    OFF, COUNT, PERTURB = 0, 1, 2

    def __init__(self):
        import ctypes
        lib = ctypes.CDLL(None)
        self._set = lib.kaudit_probe_vendor
        self._set.argtypes = [ctypes.c_int, ctypes.c_uint64]
        self._set.restype = None
        self._counts = lib.kaudit_probe_vendor_counts
        self._counts.argtypes = [ctypes.POINTER(ctypes.c_uint64)] * 3
        self._counts.restype = None
        self._u64 = ctypes.c_uint64
        self._ref = ctypes.byref

    @classmethod
    def find(cls):
        try:
            return cls()
        except (AttributeError, OSError):
            return None

    def set(self, mode, seed=0):
        self._set(mode, seed & 0xFFFFFFFFFFFFFFFF)

    def counts(self):
        c, p, f = self._u64(), self._u64(), self._u64()
        self._counts(self._ref(c), self._ref(p), self._ref(f))
        return c.value, p.value, f.value


class ProbeUnresolved(Exception):
    def __init__(self, check, text):
        super().__init__(text)
        self.check = check


def run_probe(runner, spec, call, write, state_of):
    """spec: the plan's "probe" (targets: {names: {op: class}, prefixes: [[p, class]]},
    seed).  call(args) calls the aligned candidate once; write(name, out) writes
    its output and returns the file; state_of() a snapshot of the candidate's
    parameters and buffers.  Returns the event; ProbeUnresolved names the
    check that failed."""
    event = {"status": "ok", "seed": int(spec.get("seed", 0)), "replays": [], "targets": []}
    if TorchDispatchMode is None:
        raise ProbeUnresolved("no-dispatch-mode", "this PyTorch has no TorchDispatchMode")
    targets = {"names": dict(spec["targets"].get("names", {})),
               "prefixes": [tuple(p) for p in spec["targets"].get("prefixes", [])]}
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

    def replay(name, perturb, classes=None, vendor_mode=VendorChannel.OFF):
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
            vendor.set(vendor_mode, seed)
        # the baseline replay is marked in the trace, which then shows the library calls
        # made in it, whatever thread made them: what the probe must have seen
        window = name == "baseline"
        if window:
            runner.marks.push("kaudit:probe baseline")
        try:
            with mode:
                out = call(args)
        except Exception as exc:
            raise ProbeUnresolved("replay-raised", "the %s replay raised %s: %s"
                                  % (name, type(exc).__name__, str(exc).splitlines()[0][:200] if str(exc) else ""))
        finally:
            if window:
                runner.marks.pop()
            seen = vendor.counts() if vendor is not None else (0, 0, 0)
            if vendor is not None:
                vendor.set(VendorChannel.OFF)
        mode.vendor = seen
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
        # every cuBLAS GEMM of the call replaced after it returned (the work below the dispatcher);
        # a failure of this replay leaves the vendor channel unresolved, not the dispatcher's
        mode = replay("vendor", frozenset(), ["library"], vendor_mode=VendorChannel.PERTURB)
        calls, perturbed, failed = mode.vendor
        entry = event["replays"][-1]
        entry["expected"], entry["perturbed"] = vendor_calls, perturbed
        why = None
        if [s[0] for s in mode.seq] != names:
            why = ("the vendor replay dispatched another operator sequence than the baseline: the perturbation "
                   "changed the candidate's path")
        elif calls != vendor_calls or perturbed != calls or failed:
            why = ("the vendor replay made %d library calls (the baseline %d) and replaced the outputs of %d (%d "
                   "could not be: pointer arrays, GEMV, complex types, a stream being captured, or a copy failed)"
                   % (calls, vendor_calls, perturbed, failed))
        if why:
            event["replays"].pop()
            event["vendor_unresolved"] = why
    if not state_of_equal(before, state_of()):
        raise ProbeUnresolved("protected-state-changed", "the candidate's parameters or buffers changed during "
                              "the probe's replays")
    return event


def state_of_equal(a, b):
    if a.keys() != b.keys():
        return False
    return all(torch.equal(a[k], b[k]) for k in a)
