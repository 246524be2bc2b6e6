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
"""

import contextlib
import copy
import ctypes
import fcntl
import importlib.util
import json
import math
import os
import stat
import sys
import time
import traceback
import zlib

STARTED = time.monotonic()  # before torch's import: the events' "t" counts it

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import kaudit_tensors  # noqa: E402  (beside this file)
import kaudit_probe  # noqa: E402  (beside this file; imported before the candidate is)
import kaudit_weak  # noqa: E402  (beside this file; snapshots the timing functions before the candidate exists)

import torch  # noqa: E402

REF = "kaudit:reference"
CAND = "kaudit:candidate"
CALIB = "kaudit:calibration"

# Exit statuses (kaudit reads the event log, these only say where it stopped).
EXIT_DONE = 0
EXIT_STAGE_FAILED = 3
EXIT_BAD_PLAN = 4


class Log:
    """The event log: one JSON object per line, written and flushed at once.
    The file descriptor is opened before any task code runs."""

    def __init__(self, path):
        self.fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)

    def event(self, event_name, **fields):
        # t: seconds since the runner started (where an audit's time goes)
        fields = {"event": event_name, "t": round(time.monotonic() - STARTED, 3), **fields}
        line = json.dumps(fields, allow_nan=False, default=str) + "\n"
        data = line.encode()
        while data:
            n = os.write(self.fd, data)
            data = data[n:]


def short_error(exc):
    tb = traceback.format_exception(type(exc), exc, exc.__traceback__)
    text = "".join(tb[-3:]).strip()
    return f"{type(exc).__name__}: {exc}"[:500], text[-2000:]


class StageFailed(Exception):
    pass


def is_out_of_memory(exc):
    oom = getattr(torch.cuda, "OutOfMemoryError", None)
    return (oom is not None and isinstance(exc, oom)) or isinstance(exc, MemoryError) or \
        "out of memory" in str(exc)


def stage(log, name, fn):
    t0 = time.monotonic()
    try:
        value = fn()
    except BaseException as exc:  # SystemExit from a task too
        if isinstance(exc, KeyboardInterrupt):
            raise
        msg, tb = short_error(exc)
        log.event("stage", stage=name, status="error", error=msg, traceback=tb,
                  seconds=round(time.monotonic() - t0, 3))
        raise StageFailed(name)
    log.event("stage", stage=name, status="ok", seconds=round(time.monotonic() - t0, 3))
    return value


# ---------------------------------------------------------------- writes

class WriteGuard:
    """A Python audit hook (PEP 578: it cannot be removed once added) that
    refuses the tasks' Python-level writes outside their directories: the
    working directory, TMPDIR and the build caches (plan "write_roots").
    Each refused write is logged first ("write_outside"), so the audit
    says what was tried.  Native code bypasses audit hooks; Landlock, which
    kaudit applies to the whole worker, covers it (docs/audit.md,
    "Confinement").  The runner's own files (the tensor files and their
    directory) are written inside own(); the event log's descriptor was
    opened before the hook, and os.write is no audited event."""

    _FLAG_WRITES = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND
    # event -> the positions of the paths it changes, and its dir_fd position
    _EVENTS = {
        "os.remove": ((0,), 1), "os.rmdir": ((0,), 1), "os.mkdir": ((0,), 2),
        "os.rename": ((0, 1), None), "os.link": ((1,), None), "os.symlink": ((1,), 2),
        "os.truncate": ((0,), None), "os.chmod": ((0,), 2), "os.chown": ((0,), 3),
        "os.utime": ((0,), 3), "shutil.copyfile": ((1,), None), "shutil.copytree": ((1,), None),
        "shutil.move": ((0, 1), None), "shutil.rmtree": ((0,), 1),
    }

    def __init__(self, roots, log):
        self.roots = [os.path.realpath(r) for r in roots]
        self.beneath = tuple(r.rstrip("/") + "/" for r in self.roots)
        self.log = log
        self.party = "reference"
        self._own = 0
        self._busy = False

    @contextlib.contextmanager
    def own(self):
        self._own += 1
        try:
            yield
        finally:
            self._own -= 1

    def _inside(self, path, dir_fd=None):
        path = os.fsdecode(os.fspath(path))
        if not os.path.isabs(path) and dir_fd is not None:
            base = os.readlink("/proc/self/fd/%d" % dir_fd)
        else:
            base = os.getcwd()
        real = os.path.realpath(os.path.join(base, path))
        return real in self.roots or real.startswith(self.beneath), real

    def hook(self, event, args):
        if self._own or self._busy:
            return
        if event == "open":
            path, mode, flags = args
            writes = any(c in mode for c in "wax+") if isinstance(mode, str) else bool(flags & self._FLAG_WRITES)
            if not writes or path is None or isinstance(path, int):
                return
            targets, dir_fd = (path,), None
        elif event in self._EVENTS:
            where, fd_at = self._EVENTS[event]
            targets = tuple(args[i] for i in where if i < len(args) and not isinstance(args[i], int))
            dir_fd = args[fd_at] if fd_at is not None and fd_at < len(args) else None
        else:
            return
        self._busy = True
        try:
            for t in targets:
                try:
                    inside, real = self._inside(t, dir_fd)
                except (TypeError, ValueError, OSError):
                    inside, real = False, repr(t)
                if not inside:
                    self.log.event("write_outside", party=self.party, op=event, path=real)
                    raise PermissionError(13, "kaudit: writing outside the audit's directories is refused", real)
        finally:
            self._busy = False


# ---------------------------------------------------------------- NVTX marks

class Marks:
    def __init__(self, on):
        self.on = on

    def push(self, msg):
        if self.on:
            torch.cuda.nvtx.range_push(msg)

    def pop(self):
        if self.on:
            torch.cuda.nvtx.range_pop()

    def mark(self, msg):
        if self.on:
            torch.cuda.nvtx.mark(msg)


class phase:
    def __init__(self, marks, msg):
        self.marks, self.msg = marks, msg

    def __enter__(self):
        self.marks.push(self.msg)

    def __exit__(self, *exc):
        self.marks.pop()
        return False


# ---------------------------------------------------------------- loading

def load_module(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def need_module(module, attr, what):
    need(module, attr, what)
    return module


def need(module, attr, what):
    if not hasattr(module, attr):
        raise AttributeError(f"{what} defines no '{attr}'")
    return getattr(module, attr)


def clone_tree(obj):
    """Deep copy of inputs: tensors cloned with their layout, containers rebuilt."""
    if isinstance(obj, torch.Tensor):
        return obj.clone()
    if isinstance(obj, (list, tuple)):
        return type(obj)(clone_tree(x) for x in obj)
    if isinstance(obj, dict):
        return {k: clone_tree(v) for k, v in obj.items()}
    return copy.deepcopy(obj)


def to_fp64(obj):
    if isinstance(obj, torch.Tensor):
        return obj.double() if obj.is_floating_point() else obj.clone()
    if isinstance(obj, (list, tuple)):
        return type(obj)(to_fp64(x) for x in obj)
    if isinstance(obj, float):
        return obj
    return clone_tree(obj)


def to_device(obj, device):
    if isinstance(obj, torch.Tensor):
        return obj.to(device)
    if isinstance(obj, (list, tuple)):
        return type(obj)(to_device(x, device) for x in obj)
    return obj


def synchronize(device):
    if device.type == "cuda":
        torch.cuda.synchronize()


# ---------------------------------------------------------------- inputs

def float_dtype_max(dtype):
    return torch.finfo(dtype).max


def generator(seed, device):
    g = torch.Generator(device=device)
    g.manual_seed(seed & 0x7FFFFFFFFFFFFFFF)
    return g


def draw(dist, shape, g, device, dtype):
    """Values of one distribution, drawn on the device (fast for the large
    inputs of real tasks; the same seed gives the same values on the same
    kind of device) in the input's dtype, or float32 for the half types."""
    gen = torch.float64 if dtype == torch.float64 else torch.float32
    kw = dict(generator=g, device=device, dtype=gen)
    if dist == "normal":
        v = torch.randn(shape, **kw)
    elif dist == "uniform":
        v = torch.rand(shape, **kw).mul_(2.0).sub_(1.0)
    elif dist == "heavy_tailed":
        # Student t with 3 degrees of freedom: z / sqrt(chi2_3 / 3)
        v = torch.randn(shape, **kw)
        chi = torch.zeros(shape, device=device, dtype=gen)
        for _ in range(3):
            chi.add_(torch.randn(shape, **kw).pow_(2))
        v.div_(chi.div_(3.0).sqrt_().clamp_min_(1e-12))
    elif dist == "sparse":
        v = torch.randn(shape, **kw)
        v.mul_(torch.rand(shape, **kw) < 0.1)
    elif dist == "constant":
        v = torch.full(shape, 0.75, device=device, dtype=gen)
    elif dist == "signed_extremes":
        sign = torch.where(torch.rand(shape, **kw) < 0.5, -1.0, 1.0)
        mag = torch.where(torch.rand(shape, **kw) < 0.5, 1e5, 1e-4)
        v = (sign * mag).to(gen)
    else:
        raise ValueError(f"unknown distribution '{dist}'")
    return v


def materialize(values, layout, device):
    """A tensor holding `values` (in the input's dtype) in the given layout, on device."""
    shape = tuple(values.shape)
    if layout == "strided" and len(shape) >= 1:
        wide = shape[:-1] + (2 * shape[-1],)
        buf = torch.empty(wide, dtype=values.dtype, device=device)
        buf.fill_(float("nan") if values.is_floating_point() else 0)
        view = buf[..., 1::2]   # non-contiguous and at a storage offset
        view.copy_(values)
        return view
    if layout == "transposed" and len(shape) >= 2:
        swapped = shape[:-2] + (shape[-1], shape[-2])
        buf = torch.empty(swapped, dtype=values.dtype, device=device)
        view = buf.transpose(-1, -2)
        view.copy_(values)
        return view
    if layout == "transposed" and len(shape) == 1:
        buf = torch.empty((shape[0] + 1,), dtype=values.dtype, device=device)
        view = buf[1:]
        view.copy_(values)
        return view
    return values.to(device).contiguous()


class SlotInputs:
    """One value set.  Its values come from a recipe (a seeded draw, or the
    task's get_inputs() under a seed) and are made again when needed, so that
    the large inputs of real tasks are never kept for all slots at once; each
    party gets tensors of its own, in the slot's layout (clone() would not
    keep a strided layout)."""

    def __init__(self, recipe, layout):
        self.recipe = recipe        # () -> list of ("t", tensor) | ("o", object)
        self.layout = layout
        self._values = None

    def values(self):
        if self._values is None:
            self._values = self.recipe()
        return self._values

    def drop(self):
        self._values = None

    def make(self, device, fp64=False):
        out = []
        for kind, v in self.values():
            if kind == "t":
                vals = v.double() if (fp64 and v.is_floating_point()) else v
                if v.is_floating_point():
                    out.append(materialize(vals, self.layout, device))
                else:
                    out.append(vals.to(device).clone())
            else:
                out.append(to_fp64(v) if fp64 else clone_tree(v))
        return out

    def values_into(self, buffers):
        """Copy this set's values into existing tensors (fresh values, same buffers)."""
        for (kind, v), b in zip(self.values(), buffers):
            if kind == "t":
                b.copy_(v)


def native_inputs(mod, seed, device=None):
    """get_inputs() under a seed.  With a device (a GPU, PyTorch 2's default
    device context), the task's own torch.rand/randn draw there: the same
    distribution, at GPU speed; KernelBench's level-1 inputs reach 1.6e9
    elements, which the CPU generator takes seconds to draw, and an audit
    draws about twenty native value sets."""
    torch.manual_seed(seed)
    if device is not None:
        with device:
            got = mod.get_inputs()
    else:
        got = mod.get_inputs()
    if not isinstance(got, (list, tuple)):
        raise TypeError(f"get_inputs() returned {type(got).__name__}, not a list")
    args = []
    for x in got:
        if isinstance(x, torch.Tensor):
            args.append(("t", x.detach()))
        else:
            args.append(("o", x))
    return args


class Spec:
    """A floating input of the canonical get_inputs(): its shape and dtype only."""

    def __init__(self, t):
        self.shape = tuple(t.shape)
        self.dtype = t.dtype
        self.device = t.device

    def dim(self):
        return len(self.shape)


def base_specs(args):
    return [("s", Spec(v)) if k == "t" and v.is_floating_point() else (k, v) for k, v in args]


def slot_inputs(slot, base, mod, plan_seed, alt_shapes, device, native_device=None):
    """The value set(s) of one slot, or (None, reason) when the slot is not
    supported by the task (then a native-seed slot replaces it)."""
    kind = slot["kind"]
    seed = plan_seed * 1000003 + slot["index"] * 7919 + 17
    floating = [i for i, (k, v) in enumerate(base) if k == "s"]
    if kind == "native":
        s2 = plan_seed + slot["seed_offset"]
        return [SlotInputs(lambda: native_inputs(mod, s2, native_device), "contiguous")], None
    if not floating:
        return None, "the task has no floating-point tensor input"

    def recipe(dist, scale, set_seed, shapes=None):
        def make():
            args = []
            for i, (k, v) in enumerate(base):
                if k == "s":
                    shape = tuple(shapes[i]) if shapes else v.shape
                    g = generator(set_seed * 131 + i, device)
                    vals = draw(dist, shape, g, device, v.dtype)
                    if scale != 1.0:
                        vals.mul_(scale)
                    args.append(("t", vals.to(v.dtype)))
                else:
                    args.append((k, v))
            return args
        return make

    if kind == "value":
        scale = float(slot.get("scale", 1.0))
        dist = slot.get("dist", "normal")
        for i in floating:
            dt = base[i][1].dtype
            peak = 1e5 if dist == "signed_extremes" else 6.0 * scale
            if peak * 16 > float_dtype_max(dt):
                return None, f"input {i} ({str(dt)}) cannot hold values of scale {scale:g}"
        return [SlotInputs(recipe(dist, scale, seed), "contiguous")], None
    if kind == "layout":
        if not any(base[i][1].dim() >= 1 for i in floating):
            return None, "no floating input with a dimension"
        return [SlotInputs(recipe("normal", 1.0, seed), slot["layout"])], None
    if kind == "shape":
        if not alt_shapes:
            return None, "the contract declares no alternative input shapes (stress.alternative_shapes)"
        if len(alt_shapes) != len(base):
            return None, f"stress.alternative_shapes has {len(alt_shapes)} entries for {len(base)} inputs"
        shapes = {}
        for i, (k, v) in enumerate(base):
            if k == "s":
                shapes[i] = alt_shapes[i] if alt_shapes[i] is not None else v.shape
            elif k == "t" and alt_shapes[i] is not None and list(alt_shapes[i]) != list(v.shape):
                return None, f"input {i} is not floating: its alternative shape cannot be drawn"
        return [SlotInputs(recipe("normal", 1.0, seed, shapes), "contiguous")], None
    if kind == "repeated":
        return [SlotInputs(recipe("normal", 1.0, seed + 7 * k), "contiguous") for k in range(4)], None
    return None, f"unknown slot kind '{kind}'"


# Leaves above this many elements are written as a seeded sample of
# SAMPLE_SIZE elements (the same indices for every party of one call), so
# that a real task's outputs (up to 2^30 elements in KernelBench level 1)
# do not cost gigabytes of disk per slot.  docs/audit.md says what that
# leaves out.
WHOLE_LIMIT = 1 << 22
SAMPLE_SIZE = 1 << 20


_sample_index = {}


def sample_index(key, numel):
    """The sorted, distinct flat indices sampled for one call's leaves of
    numel elements: the same for every party (and drawn once)."""
    k = (key, numel)
    if k not in _sample_index:
        g = torch.Generator()
        g.manual_seed(zlib.crc32(repr(k).encode()) ^ 0x5EED)
        idx = torch.randint(0, numel, (SAMPLE_SIZE,), generator=g, dtype=torch.int64).sort().values
        keep = torch.ones(idx.numel(), dtype=torch.bool)
        keep[1:] = idx[1:] != idx[:-1]
        _sample_index[k] = idx[keep]
    return _sample_index[k]


def sampled(leaves, key):
    out = []
    for path, v in leaves:
        if isinstance(v, torch.Tensor) and v.numel() > WHOLE_LIMIT:
            out.append((path, kaudit_tensors.Sampled(v, sample_index(key, v.numel()))))
        else:
            out.append((path, v))
    return out


# The calls of a repeated_calls slot: (instance, value set index).  Instance A
# three times with fresh values in the same buffers, then a fresh instance B
# with fresh values, then B again on the same values.
REPEATED_CALLS = (("A", 0), ("A", 1), ("A", 2), ("B", 3), ("B", 3))


# ---------------------------------------------------------------- state

def align_state(rs, cand):
    """Inject the reference's state (rs, its state_dict as built) into the
    candidate through a verified mapping: keys (by name, else by position),
    shapes, dtypes, then the values read back, and coverage (every tensor of
    both sides mapped once).  Returns a description; raises AlignmentError
    when the correspondence is unresolved."""
    cs = cand.state_dict()
    rkeys, ckeys = list(rs.keys()), list(cs.keys())
    if not rkeys and not ckeys:
        return {"mapping": "none", "tensors": 0}
    mapping = None
    how = None
    if set(rkeys) == set(ckeys):
        mapping = {k: k for k in rkeys}
        how = "by-name"
    elif len(rkeys) == len(ckeys):
        pairs = list(zip(rkeys, ckeys))
        if all(tuple(rs[a].shape) == tuple(cs[b].shape) and rs[a].dtype == cs[b].dtype for a, b in pairs):
            mapping = {a: b for a, b in pairs}
            how = "positional"
    if mapping is None:
        extra = [k for k in ckeys if k not in rs]
        missing = [k for k in rkeys if k not in cs]
        if extra and not missing:
            raise AlignmentError("candidate-only-state",
                                 f"the candidate has state the reference lacks: {extra[:8]}")
        raise AlignmentError("unresolved-state-correspondence",
                             f"no verified mapping: reference-only {missing[:8]}, candidate-only {extra[:8]}")
    for a, b in mapping.items():
        if tuple(rs[a].shape) != tuple(cs[b].shape):
            raise AlignmentError("state-shape-mismatch",
                                 f"'{a}' has shape {tuple(rs[a].shape)} in the reference, {tuple(cs[b].shape)} in the candidate")
        if rs[a].dtype != cs[b].dtype:
            raise AlignmentError("state-dtype-mismatch", f"'{a}' is {rs[a].dtype} in the reference, {cs[b].dtype} in the candidate")
    new = {b: rs[a].detach().clone() for a, b in mapping.items()}
    cand.load_state_dict(new, strict=True)
    after = cand.state_dict()
    for a, b in mapping.items():
        x, y = rs[a], after[b]
        if x.shape != y.shape or x.dtype != y.dtype or not torch.equal(x.detach().cpu(), y.detach().cpu()):
            raise AlignmentError("state-values-differ", f"after injection '{b}' does not hold the reference's '{a}'")
    return {"mapping": how, "tensors": len(mapping),
            "pairs": [[a, b] for a, b in list(mapping.items())[:64]]}


class AlignmentError(Exception):
    def __init__(self, code, text):
        super().__init__(text)
        self.code = code


# ---------------------------------------------------------------- calls

same_values = kaudit_tensors.same_values


def snapshot(args):
    return [a.detach().clone() if isinstance(a, torch.Tensor) else None for a in args]


def mutated(args, snap):
    return [i for i, (a, s) in enumerate(zip(args, snap))
            if isinstance(a, torch.Tensor) and not same_values(a.detach(), s)]


def output_leaves(out):
    return kaudit_tensors.flatten(out, "out")


def poison_like(leaves, device):
    """Fill the allocator's free blocks with NaN (or a sentinel), sized like the
    reference's outputs, so that an output returned without being computed
    (torch.empty reusing memory that held an earlier result) shows."""
    keep = []
    for shape, dtype in leaves:
        if math.prod(shape) > 0:
            t = torch.empty(shape, dtype=dtype, device=device)
            if t.is_floating_point():
                t.fill_(float("nan"))
            elif t.dtype == torch.bool:
                t.fill_(True)
            else:
                t.fill_(-7)
            keep.append(t)
    del keep
    synchronize(device)


class DeviceTurns:
    """Concurrent audits on one device take turns (docs/timing.md,
    "Concurrent audits"): a timed phase has the device to itself.  Every
    runner holds a shared flock on DIR/<device>.lock while it works on the
    device and lets go of it at pause points (between slots, before the
    probe, between weak surfaces) and while the candidate is imported and
    built (compilers run on the CPU for minutes); a timed phase holds it
    exclusively.  DIR/<device>.gate gives the timed phases precedence: a
    timed phase holds it exclusively while it waits and runs, and a runner
    passes through it (shared, then let go) before it shares the device
    again, so no stream of shared holders keeps a timed phase out.

    <device> is the GPU's UUID (the same card under any CUDA_VISIBLE_DEVICES
    numbering) or "cpu".  Every wait is bounded (plan timing_lock_wait_s): a
    timed phase past it is timed anyway and its event says so ("not-held"),
    and kaudit withholds its speedup; a runner that cannot share within it
    goes on without sharing and tries again, without waiting, at each later
    pause ("share_timeouts"), since whoever holds the gate that long
    (another audit's candidate can flock it too) must not stall every audit
    on the device.  One descriptor per file, so that this process's own
    locks never conflict with each other; a lock error (the candidate closed
    a descriptor, say) ends the turns, never the audit.  The functions are
    bound at import, before the candidate can patch them; each timed phase is
    one event "timing_turn" with CLOCK_MONOTONIC times (one clock for every
    process of the host), and the time spent waiting to share is the event
    "device_share" at the end."""

    _open, _close, _flock, _now, _sleep = os.open, os.close, fcntl.flock, time.clock_gettime, time.sleep
    _fstat, _stat, _fchmod, _isreg = os.fstat, os.stat, os.fchmod, stat.S_ISREG

    def __init__(self, plan, device, log, guard):
        # shared whenever kaudit gave a directory (timing on or off: an
        # untimed audit's work must stay out of others' timed windows too)
        self.dir = plan.get("timing_lock_dir")
        # whether the timed phases hold the device (kaudit decides: the
        # timing checks, and on a GPU the timed calls, which run always)
        self.times = bool(plan.get("timing_turns"))
        self.wait_s = float(plan.get("timing_lock_wait_s", 120))
        self.device = device
        self.log = log
        self.guard = guard
        self.key = None
        self.fd = self.gate = -1
        self.sharing = False
        self.shared_wait_s = 0.0
        self.pauses = 0
        self.share_timeouts = 0
        self.error = None

    def _key(self):
        if self.device.type != "cuda":
            return "cpu"
        uuid = getattr(torch.cuda.get_device_properties(self.device), "uuid", None)
        if uuid is None:
            # an index names different cards under different CUDA_VISIBLE_DEVICES
            raise RuntimeError("this PyTorch gives no GPU UUID to name the device's lock by")
        return "gpu-" + str(uuid)

    @staticmethod
    def _clock():
        return DeviceTurns._now(time.CLOCK_MONOTONIC)

    def _fail(self, exc):
        self.error = self.error or short_error(exc)[0]
        self.sharing = False

    def _ready(self):
        """The two descriptors, opened once; False (and why) when they cannot be."""
        if not self.dir or self.error:
            return False
        if self.fd >= 0:
            return True
        try:
            self.key = self._key()
            with self.guard.own():
                self.fd = self._open_lock(self._path(".lock"))
                self.gate = self._open_lock(self._path(".gate"))
            return True
        except Exception as exc:
            self._fail(exc)
            return False

    def _path(self, suffix):
        return os.path.join(self.dir, self.key + suffix)

    @staticmethod
    def _open_lock(path):
        """Read-only (flock needs no more), never through a link, a FIFO or
        anything but a regular file another user planted in the shared
        directory, and made only when missing (a file another user made
        opens without O_CREAT, which fs.protected_regular refuses in a sticky
        directory), readable by every user whatever our umask."""
        flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK
        for _ in range(3):
            fd, made = -1, False
            try:
                fd = DeviceTurns._open(path, flags)
            except FileNotFoundError:
                try:
                    fd, made = DeviceTurns._open(path, flags | os.O_CREAT | os.O_EXCL, 0o644), True
                except FileExistsError:
                    continue   # made by another audit meanwhile: open it as it is
            if not DeviceTurns._isreg(DeviceTurns._fstat(fd).st_mode):
                DeviceTurns._close(fd)
                raise OSError("'%s' is not a regular file" % path)
            if made:
                DeviceTurns._fchmod(fd, 0o644)
            return fd
        raise OSError("cannot open or make the lock file '%s'" % path)

    def _try(self, fd, mode, t0, wait=True):
        """flock(fd, mode) within wait_s of t0 (at once without wait): True,
        or False past it."""
        while True:
            try:
                DeviceTurns._flock(fd, mode | fcntl.LOCK_NB)
                return True
            except BlockingIOError:
                if not wait or self._clock() - t0 >= self.wait_s:
                    return False
                DeviceTurns._sleep(0.005)

    def share(self):
        """Waits while a timed phase holds or waits for the device, for at
        most the bound, and only once: after a timeout, later attempts do not
        wait."""
        if self.sharing or not self._ready():
            return
        t0 = self._clock()
        wait = self.share_timeouts == 0
        try:
            ok = self._try(self.gate, fcntl.LOCK_SH, t0, wait)
            if ok:
                ok = self._try(self.fd, fcntl.LOCK_SH, t0, wait)
                DeviceTurns._flock(self.gate, fcntl.LOCK_UN)
        except OSError as exc:
            self._fail(exc)
            return
        self.shared_wait_s += self._clock() - t0
        self.sharing = ok
        self.share_timeouts += not ok

    def unshare(self):
        if self.sharing:
            self.sharing = False
            try:
                DeviceTurns._flock(self.fd, fcntl.LOCK_UN)
            except OSError as exc:
                self._fail(exc)

    def pause(self):
        """Lets a waiting timed phase in (and waits for it to end)."""
        if self.sharing or self.share_timeouts:
            self.pauses += 1
            self.unshare()
            self.share()

    @contextlib.contextmanager
    def released(self):
        was = self.sharing
        self.unshare()
        try:
            yield
        finally:
            if was:
                self.share()

    @contextlib.contextmanager
    def held(self, phase_name):
        """The device to itself for a timed phase (bounded wait)."""
        if not self.dir or not self.times:
            yield
            return
        was = self.sharing or self.share_timeouts
        self.unshare()   # never wait for the device while holding a share of it
        record = {"phase": phase_name}
        t0 = self._clock()
        got_gate = got_device = False
        try:
            if not self._ready():
                raise RuntimeError(self.error)
            record["device"] = self.key
            got_gate = self._try(self.gate, fcntl.LOCK_EX, t0)
            got_device = got_gate and self._try(self.fd, fcntl.LOCK_EX, t0)
            # the file locked must be the one the path names: a lock file
            # unlinked and made again would split the audits between two
            if got_device and DeviceTurns._stat(self._path(".lock")).st_ino != DeviceTurns._fstat(self.fd).st_ino:
                raise RuntimeError("the lock file was replaced")
            record["status"] = "held" if got_device else "not-held"
        except Exception as exc:
            record["status"] = "error"
            record["error"] = short_error(exc)[0]
        start = self._clock()
        record["waited_s"] = round(start - t0, 3)
        record["from"] = round(start, 6)
        try:
            yield
        finally:
            record["until"] = round(self._clock(), 6)
            self.log.event("timing_turn", **record)   # before anything below can raise
            try:
                if got_device:
                    DeviceTurns._flock(self.fd, fcntl.LOCK_UN)
                if got_gate:
                    DeviceTurns._flock(self.gate, fcntl.LOCK_UN)
            except OSError as exc:
                self._fail(exc)
            if was:
                self.share()

    def report(self):
        if self.dir:
            self.log.event("device_share", device=self.key, waited_s=round(self.shared_wait_s, 3),
                           pauses=self.pauses, share_timeouts=self.share_timeouts, error=self.error)


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
        self.ref_results = {}    # slot index -> its calls' reference files
        self.ref_seconds = {}    # slot index -> seconds of its reference phase
        self.turn = DeviceTurns(plan, self.device, log, guard)

    def write(self, name, leaves):
        path = os.path.join(self.tensors, name)
        with self.guard.own():
            kaudit_tensors.write_tensor_file(path, leaves)
        return "tensors/" + name

    # --- reference side (before the candidate exists)

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
            ({"kind": "tensor", "dtype": str(v.dtype).replace("torch.", ""), "shape": list(v.shape)}
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
        for slot in list(plan["slots"]) + reserves:
            self.turn.pause()
            replaced = None
            current = slot
            while True:
                sets, why = slot_inputs(current, self.base, self.ref_mod, self.seed, alt, self.device,
                                        self.native_device)
                if sets is not None:
                    ok, why = self._reference_for(current, sets)
                    if ok:
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

    def _reference_for(self, slot, sets):
        t0 = time.monotonic()
        idx = slot["index"]
        self.marks.mark(f"kaudit:slot {idx} {slot['name']} reference")
        calls = REPEATED_CALLS if slot["kind"] == "repeated" else (("A", 0),)
        results = []
        try:
            for ci, (_, vi) in enumerate(calls):
                args = sets[vi].make(self.device)
                before = snapshot(args)
                out = self.call(self.ref, args, REF)
                mut = mutated(args, before)
                leaves = output_leaves(out)
                # an input the reference changes in place is part of what it returns
                leaves += [(f"input[{i}]", args[i]) for i in mut]
                bad = [p for p, v in leaves if isinstance(v, torch.Tensor) and v.is_floating_point()
                       and not bool(torch.isfinite(v).all())]
                if bad and slot["kind"] != "native":
                    return False, f"the reference output {bad[0]} is not finite on this slot's inputs"
                args64 = sets[vi].make(self.device, fp64=True)
                try:
                    out64 = self.call(self.ref64, args64, CALIB)
                    leaves64 = output_leaves(out64) + [(f"input[{i}]", args64[i]) for i in mut]
                    f64 = self.write(f"s{idx:02d}c{ci}-ref64.kt", sampled(leaves64, (idx, ci)))
                    fp64_error = None
                except Exception as exc:  # fp64 unsupported by an operator
                    f64 = None
                    fp64_error = short_error(exc)[0]
                f32 = self.write(f"s{idx:02d}c{ci}-ref.kt", sampled(leaves, (idx, ci)))
                sets[vi].drop()
                del out, args, args64, before
                results.append({"call": ci, "ref": f32, "ref64": f64, "fp64_error": fp64_error,
                                "reference_mutates": mut, "values": vi,
                                "poison": [(tuple(v.shape), v.dtype) for p, v in leaves
                                           if isinstance(v, torch.Tensor)]})
        except Exception as exc:
            if is_out_of_memory(exc):
                # resource exhaustion is no property of the slot: no replacement
                self.log.event("stage", stage="reference_slots", status="error", code="resource-exhausted",
                               error=short_error(exc)[0])
                raise StageFailed("reference_slots")
            return False, "the reference raised on this slot's inputs: " + short_error(exc)[0]
        self.ref_results[idx] = results
        self.ref_seconds[idx] = round(time.monotonic() - t0, 3)
        return True, None

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
        """The reference against the candidate, each batch ABBA or BAAB at
        random (seeded); then, on a GPU, the candidate with and without the
        synchronization guard (the stream differential)."""
        if not self.plan.get("timing"):
            return
        import random
        rng = random.Random(self.seed)
        orders = tuple(rng.choice(("ABBA", "BAAB")) for _ in AA_ORDERS)
        checks = [("speedup", ["reference", "candidate"], orders, lambda: self.timed(self.ref, REF),
                   lambda: self.timed(self.cand, CAND))]
        if self.device.type == "cuda":
            checks.append(("stream", ["candidate guarded", "candidate"], AA_ORDERS,
                           lambda: self.timed(self.cand, CAND, guard=True), lambda: self.timed(self.cand, CAND)))
        for check, arms, check_orders, make_a, make_b in checks:
            try:
                if not hasattr(self, "timer"):
                    self.timer = Timer(self.device)
                arm_a, arm_b = make_a(), make_b()
            except Exception as exc:
                self.log.event("timing", check=check, arms=arms, clock="?", status="error",
                               error="setting up: " + short_error(exc)[0], seconds=0)
                continue
            self.timing_check(check, arms, check_orders, arm_a, arm_b)

    # --- candidate side

    def build_candidate(self):
        plan = self.plan
        with phase(self.marks, CAND):
            self.cand_mod = stage(self.log, "import_candidate",
                                  lambda: need_module(load_module("kaudit_candidate", plan["candidate"]),
                                                      "ModelNew", "the candidate"))
        self.cand = stage(self.log, "build_candidate", self.new_candidate)

    def new_candidate(self):
        torch.manual_seed(self.seed)
        with phase(self.marks, CAND):
            m = self.cand_mod.ModelNew(*clone_tree(self.init_inputs))
            m = m.to(self.device)
            m.eval()
        return m

    def align(self, cand):
        return align_state(self.ref_state, cand)

    def cand_call(self, model, args, poison):
        poison_like(poison, self.device)
        return self.call(model, args, CAND)

    def candidate_slots(self):
        for idx, slot, replaced, sets in self.slots:
            self.turn.pause()
            t0 = time.monotonic()
            self.marks.mark(f"kaudit:slot {idx} {slot['name']} candidate")
            refs = self.ref_results[idx]
            calls_out = []
            record = {"index": idx, "name": slot["name"], "kind": slot["kind"],
                      "replaces": replaced["name"] if replaced else None,
                      "replaced_because": replaced["reason"] if replaced else None,
                      "layout": sets[0].layout, "calls": calls_out,
                      "reserve": bool(slot.get("reserve"))}
            if slot["kind"] == "repeated":
                self._repeated(idx, sets, refs, calls_out, record)
            else:
                r = refs[0]
                args = sets[0].make(self.device)
                sets[0].drop()
                entry = self._one_call(idx, 0, self.cand, args, r)
                del args
                calls_out.append(entry)
            record["seconds"] = {"reference": self.ref_seconds.get(idx),
                                 "candidate": round(time.monotonic() - t0, 3)}
            self.log.event("slot", **record)

    def _one_call(self, idx, ci, model, args, r, keep_output=None):
        entry = {"call": ci, "ref": r["ref"], "ref64": r["ref64"], "fp64_error": r["fp64_error"],
                 "reference_mutates": r["reference_mutates"], "cand": None, "status": "ok"}
        before = snapshot(args)
        try:
            out = self.cand_call(model, args, r["poison"])
        except Exception as exc:
            entry["status"] = "resource-exhausted" if is_out_of_memory(exc) else "candidate-raised"
            entry["error"], entry["traceback"] = short_error(exc)
            return entry
        mut = mutated(args, before)
        entry["candidate_mutates"] = mut
        leaves = output_leaves(out)
        leaves += [(f"input[{i}]", args[i]) for i in r["reference_mutates"]]
        entry["cand"] = self.write(f"s{idx:02d}c{ci}-cand.kt", sampled(leaves, (idx, ci)))
        if keep_output is not None:
            keep_output.append((ci, out, [(p, v.detach().clone()) for p, v in output_leaves(out)
                                          if isinstance(v, torch.Tensor)]))
        return entry

    def _repeated(self, idx, sets, refs, calls_out, record):
        instances = {"A": self.cand}
        buffers = sets[0].make(self.device)
        kept = []
        for ci, (inst, vi) in enumerate(REPEATED_CALLS):
            if inst not in instances:
                try:
                    m = self.new_candidate()
                    self.align(m)
                except Exception as exc:
                    calls_out.append({"call": ci, "status": "candidate-raised",
                                      "error": "building a fresh instance: " + short_error(exc)[0]})
                    return
                instances[inst] = m
            sets[vi].values_into(buffers)
            sets[vi].drop()
            entry = self._one_call(idx, ci, instances[inst], buffers, refs[ci], kept)
            entry["instance"] = inst
            calls_out.append(entry)
        # An earlier call's output that a later call overwrote (output aliasing).
        synchronize(self.device)
        aliasing = []
        for ci, out, snap in kept[:-1]:
            now = dict((p, v) for p, v in output_leaves(out) if isinstance(v, torch.Tensor))
            for p, v in snap:
                if p in now and not same_values(now[p].detach(), v):
                    aliasing.append({"call": ci, "leaf": p})
        record["aliasing"] = aliasing

    def time_candidate(self):
        self.time_calls(self.cand, CAND, "kaudit:reported_ms")

    def probe_inputs(self, offset):
        """The task's get_inputs() under the plan's seed plus offset."""
        return SlotInputs(lambda: native_inputs(self.ref_mod, self.seed + offset, self.native_device), "contiguous")

    # --- the causal probe (runner/kaudit_probe.py)

    def probe(self, spec):
        """The candidate's call on the task's inputs, replayed with its forbidden
        operators' outputs replaced by noise; one event "probe" (docs/audit.md)."""
        t0 = time.monotonic()

        def call(args):
            return self.call(self.cand, args, CAND)

        nonce = os.urandom(8).hex()  # the sampled elements of large outputs: not predictable by the candidate

        def write(name, out):
            return self.write("probe-%s.kt" % name.replace(":", "-"), sampled(output_leaves(out), ("probe", nonce)))

        def state_of():
            return {k: v.detach().clone() for k, v in self.cand.state_dict().items()}

        try:
            event = kaudit_probe.run_probe(self, spec, call, write, state_of)
        except kaudit_probe.ProbeUnresolved as exc:
            event = {"status": "unresolved", "check": exc.check, "error": str(exc)}
        except BaseException as exc:  # SystemExit raised under the mode, too: the audit goes on
            if isinstance(exc, KeyboardInterrupt):
                raise
            event = {"status": "unresolved", "check": "probe-raised", "error": short_error(exc)[0]}
        event.setdefault("seed", int(spec.get("seed", 0)))
        event["seconds"] = round(time.monotonic() - t0, 3)
        self.log.event("probe", **event)


# ---------------------------------------------------------------- timing

# The measurement tier's protocol (paper 3.4 and Appendix A; docs/timing.md):
# 10 warm-ups per arm, then three paired batches of 20 timings per arm, each
# batch in blocks of 10 in the order given (ABBA: A ten times, B twenty, A
# ten).  The statistics are kaudit's, in C (timing/timing_stats.c); the
# runner only times and logs.
TIMING_WARMUPS = 10
TIMING_PER_BATCH = 20
AA_ORDERS = ("ABBA", "BAAB", "ABBA")


class Timer:
    """One call's time in ms.  On a GPU with CUDA events on the current
    stream, as harnesses time (start.record(); call; end.record();
    end.synchronize()); with guard=True a full-device synchronize comes
    before the start and before the end event, so that work on any stream
    is inside (the stream differential's guarded arm).  On the CPU,
    time.perf_counter_ns around the call."""

    def __init__(self, device):
        self.cuda = device.type == "cuda"
        if self.cuda:
            self.start = torch.cuda.Event(enable_timing=True)
            self.end = torch.cuda.Event(enable_timing=True)

    @property
    def clock(self):
        return "cuda-event" if self.cuda else "perf-counter"

    def time(self, call, guard=False):
        if not self.cuda:
            t0 = time.perf_counter_ns()
            call()
            return (time.perf_counter_ns() - t0) / 1e6
        if guard:
            torch.cuda.synchronize()
        self.start.record()
        call()
        if guard:
            torch.cuda.synchronize()
        self.end.record()
        self.end.synchronize()
        return self.start.elapsed_time(self.end)


def paired_batches(arm_a, arm_b, orders):
    """arm_a, arm_b: () -> ms of one timed call.  Warm-ups alternate the
    arms; each batch's blocks follow its order.  Returns the batches with
    each arm's latencies in the order taken."""
    for _ in range(TIMING_WARMUPS):
        arm_a()
        arm_b()
    block = TIMING_PER_BATCH // 2
    batches = []
    for order in orders:
        lat = {"A": [], "B": []}
        for arm in order:
            f = arm_a if arm == "A" else arm_b
            lat[arm].extend(f() for _ in range(block))
        batches.append({"order": order, "a": lat["A"], "b": lat["B"]})
    return batches


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
    with ieee_fp32() as precision:
        log.event("precision", reference_tf32=False, restored_cudnn_tf32=precision.saved[0],
                  restored_matmul_tf32=precision.saved[1])
        r.reference_slots()
    with r.turn.held("reference"):
        stage(log, "time_reference", r.time_reference)
        r.time_aa()
    guard.party = "candidate"
    with r.turn.released():   # importing and building: compilers, on the CPU, for minutes
        r.build_candidate()
    try:
        info = r.align(r.cand)
    except AlignmentError as exc:
        log.event("stage", stage="align_state", status="unresolved", code=exc.code, error=str(exc))
        raise StageFailed("align_state")
    log.event("stage", stage="align_state", status="ok", **info)
    r.candidate_slots()
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
    if names and r is not None and getattr(r, "cand_mod", None) is not None:
        # the fp64 twin and the audit's value sets are not needed any more: room
        # for the surfaces' own instances and inputs (KernelBench's largest)
        r.ref64 = None
        r.ref_results = {}
        if r.device.type == "cuda":
            torch.cuda.empty_cache()
        kaudit_weak.Surfaces(r, names, log, sys.modules[__name__]).run()


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
    except StageFailed as exc:
        log.event("done", status="stage-failed", stage=str(exc))
        # the surfaces build their own instances: a candidate the audit could
        # not align (or call) may still be judged by them, as upstream would
        run_weak(getattr(run, "runner", None), plan, log)
        report_turns(getattr(run, "runner", None))
        return EXIT_STAGE_FAILED
    log.event("done", status="ok")
    run_weak(run.runner, plan, log)
    report_turns(run.runner)
    return EXIT_DONE


if __name__ == "__main__":
    code = main(sys.argv)
    sys.stdout.flush()
    sys.stderr.flush()
    # os._exit: a candidate's atexit handlers or lingering threads cannot
    # change the status or hang the exit.
    os._exit(code)
