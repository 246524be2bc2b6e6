"""Writer of KernelAudit tensor files (docs/tensor-format.md).

One file per (slot, call, party): an output structure flattened into
leaves.  Plain bytes on purpose, never pickle: the auditor reads files that
hold a candidate's outputs and must not run anything from them.

stdlib and torch only (no numpy), so that it runs in any harness that has
torch: Debian's PyTorch 1.13 and current releases alike.
"""

import ctypes
import os
import struct

import torch

MAGIC = b"KATENSR1"
VERSION = 2  # 2: KIND_SAMPLED
MAX_NDIM = 16
MAX_PATH = 4096

KIND_TENSOR, KIND_INT, KIND_FLOAT, KIND_BOOL, KIND_NONE, KIND_OTHER, KIND_SAMPLED = range(7)

DT_NONE, DT_FLOAT64, DT_INT64, DT_BOOL = 0, 4, 9, 10

# Looked up by attribute so that a torch without one of them still imports.
_DTYPE_CODES = {}
for _name, _code in (("float16", 1), ("bfloat16", 2), ("float32", 3), ("float64", 4),
                     ("int8", 5), ("uint8", 6), ("int16", 7), ("int32", 8), ("int64", 9),
                     ("bool", 10), ("complex64", 11), ("complex128", 12)):
    _dt = getattr(torch, _name, None)
    if _dt is not None:
        _DTYPE_CODES[_dt] = _code

_I64_MIN, _I64_MAX = -(1 << 63), (1 << 63) - 1


def same_values(a, b):
    """Bitwise-equal values, NaN equal to NaN (torch.equal says a NaN differs from itself)."""
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    if a.is_floating_point():
        both_nan = torch.isnan(a) & torch.isnan(b)
        return bool(((a == b) | both_nan).all())
    return bool(torch.equal(a, b))


def flatten(obj, prefix="out"):
    """(path, value) leaves of obj, paths in Python's own subscript syntax:
    out, out[0], out[1][2], out['a'].  Dicts keep insertion order (that is
    the order the code under test produced them in); keys are written with
    repr so that out['1'] and out[1] stay apart.  An empty container is kept
    as an opaque leaf naming its type, so the structure is not lost."""
    leaves = []
    _flatten(obj, prefix, leaves)
    return leaves


def _flatten(obj, path, leaves):
    if isinstance(obj, (tuple, list)):
        if len(obj) == 0:
            leaves.append((path, _Opaque(type(obj).__name__)))
        for i, v in enumerate(obj):
            _flatten(v, "%s[%d]" % (path, i), leaves)
    elif isinstance(obj, dict):
        if len(obj) == 0:
            leaves.append((path, _Opaque(type(obj).__name__)))
        for k, v in obj.items():
            _flatten(v, "%s[%r]" % (path, k), leaves)
    else:
        leaves.append((path, obj))


class _Opaque(object):
    """A value kept only by its type name."""

    def __init__(self, name):
        self.name = name


def _type_name(value):
    t = type(value)
    mod = getattr(t, "__module__", "builtins")
    name = getattr(t, "__qualname__", t.__name__)
    return name if mod == "builtins" else "%s.%s" % (mod, name)


def _header(path, kind, dtype, shape, nbytes):
    p = path.encode("utf-8")
    if not 1 <= len(p) <= MAX_PATH:
        raise ValueError("leaf path of %d bytes outside 1..%d: %r" % (len(p), MAX_PATH, path))
    if len(shape) > MAX_NDIM:
        raise ValueError("leaf %r has %d dimensions, over the limit %d" % (path, len(shape), MAX_NDIM))
    return (struct.pack("<I", len(p)) + p + struct.pack("<BBHI", kind, dtype, 0, len(shape))
            + struct.pack("<%dq" % len(shape), *shape) + struct.pack("<Q", nbytes))


def _tensor_bytes(t):
    t = t.detach()
    # Lazy conjugate/negative views hold their flag, not their values.
    for fix in ("resolve_conj", "resolve_neg"):
        if hasattr(t, fix):
            t = getattr(t, fix)()
    t = t.to("cpu").contiguous()
    nbytes = t.numel() * t.element_size()
    # string_at copies raw memory, which works for bfloat16 as well, where
    # neither numpy nor tolist would give the bits back.
    data = ctypes.string_at(t.data_ptr(), nbytes) if nbytes else b""
    return tuple(t.shape), data


class Sampled(object):
    """A tensor too large to write whole: its shape, and its values at the
    given flat indices (a 1-D int64 tensor, strictly increasing)."""

    def __init__(self, tensor, index):
        self.tensor = tensor
        self.index = index


def _leaf(path, value):
    if isinstance(value, Sampled):
        t = value.tensor.detach()
        code = _DTYPE_CODES.get(t.dtype)
        if code is None or t.layout != torch.strided:
            return _leaf(path, _Opaque("torch.Tensor[%s, %s]" % (t.dtype, t.layout)))
        idx = value.index.to("cpu", torch.int64).contiguous()
        vals = t.reshape(-1)[idx.to(t.device)]
        _, data = _tensor_bytes(vals)
        m = idx.numel()
        ib = ctypes.string_at(idx.data_ptr(), 8 * m) if m else b""
        return (_header(path, KIND_SAMPLED, code, tuple(t.shape), 8 + len(ib) + len(data))
                + struct.pack("<Q", m) + ib + data)
    if isinstance(value, torch.Tensor):
        code = _DTYPE_CODES.get(value.dtype)
        if code is None or value.layout != torch.strided:
            return _leaf(path, _Opaque("torch.Tensor[%s, %s]" % (value.dtype, value.layout)))
        shape, data = _tensor_bytes(value)
        return _header(path, KIND_TENSOR, code, shape, len(data)) + data
    if isinstance(value, _Opaque):
        name = value.name.encode("utf-8")[:MAX_PATH]
        return _header(path, KIND_OTHER, DT_NONE, (), len(name)) + name
    if value is None:
        return _header(path, KIND_NONE, DT_NONE, (), 0)
    if isinstance(value, bool):  # before int: bool is an int subclass
        return _header(path, KIND_BOOL, DT_BOOL, (), 1) + struct.pack("<?", value)
    if isinstance(value, int):
        if not _I64_MIN <= value <= _I64_MAX:
            return _leaf(path, _Opaque("int (outside int64)"))
        return _header(path, KIND_INT, DT_INT64, (), 8) + struct.pack("<q", value)
    if isinstance(value, float):
        return _header(path, KIND_FLOAT, DT_FLOAT64, (), 8) + struct.pack("<d", value)
    return _leaf(path, _Opaque(_type_name(value)))


def write_tensor_file(path, leaves):
    """Writes leaves, a list of (path, value), to path.  Written to a
    temporary name and renamed, so a reader never sees half a file."""
    leaves = list(leaves)
    seen = set()
    for p, _ in leaves:
        if p in seen:
            raise ValueError("leaf path %r appears twice" % (p,))
        seen.add(p)
    tmp = "%s.tmp.%d" % (path, os.getpid())
    try:
        with open(tmp, "wb") as f:
            f.write(MAGIC + struct.pack("<II", VERSION, len(leaves)))
            for p, v in leaves:
                f.write(_leaf(p, v))
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
