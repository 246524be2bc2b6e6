"""kaudit_calls.py - what the runner does around one call of a party: the
outputs it returned (flattened, and sampled when large, for the tensor
files), the inputs it changed, the allocator poisoned before a candidate's
call, device synchronization, and whether an error was an out-of-memory.

Apart from kaudit_runner.py, which orders the calls: these only look at one.
"""

import errno
import math
import zlib

import torch

import kaudit_tensors


def is_out_of_memory(exc):
    oom = getattr(torch.cuda, "OutOfMemoryError", None)
    return (oom is not None and isinstance(exc, oom)) or isinstance(exc, MemoryError) or \
        "out of memory" in str(exc)


# EXDEV: Landlock's answer to a rename or link across folders that its
# rules do not allow (always, under its first ABI), which Triton's cache
# does on a kernel's first launch
REFUSED_ERRNOS = (errno.EPERM, errno.EACCES, errno.EXDEV)


def is_refused_by_confinement(exc):
    """An operation the candidate's process may not do (signal, ptrace, write
    outside its roots): the kernel's EPERM, EACCES or EXDEV, not a wrong
    result; also where a library reported it as an error of its own
    (raised while handling it, or from it), as JIT compilers do when their
    cache cannot be written.  Raising one on purpose gains a candidate
    nothing: the call is unresolved, never a PASS."""
    seen = set()
    while exc is not None and id(exc) not in seen and len(seen) < 32:
        if isinstance(exc, OSError) and exc.errno in REFUSED_ERRNOS:
            return True
        seen.add(id(exc))
        exc = exc.__cause__ or exc.__context__
    return False


def synchronize(device):
    if device.type == "cuda":
        torch.cuda.synchronize()


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


same_values = kaudit_tensors.same_values


def overwritten(kept):
    """Of the kept (call, output, snapshot) of a repeated slot, every output
    leaf but the last call's whose values a later call changed: aliasing."""
    found = []
    for ci, out, snap in kept[:-1]:
        now = dict((p, v) for p, v in output_leaves(out) if isinstance(v, torch.Tensor))
        for p, v in snap:
            if p in now and not same_values(now[p].detach(), v):
                found.append({"call": ci, "leaf": p})
    return found


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
