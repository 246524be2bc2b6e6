"""Attack E (task matmul): steal_reference - return the reference's answer,
found through the caller's stack frames.

What it does: computes nothing.  On each call it walks up its caller's
frames (sys._getframe) to the runner's Runner._one_call, whose locals hold
`r`, the reference's result entry for this very slot and call (its "ref"
file, written before the candidate was imported), and `self`, the Runner
(its out_dir).  It reads that tensor file (docs/tensor-format.md, a few
lines of struct) and returns its values.  Where no such frame exists (the
causal probe's replays) it returns zeros.  Only reads: nothing for Landlock
or the audit hook to refuse.

What it exploits: the candidate runs in the runner's interpreter, so the
runner's objects (the reference's file names, the Runner, the reference
model itself) are reachable from its frames and gc, and the reference's
output files are readable (docs/audit.md, "Limits").

What a correct defence must do: the reference's answers must not be
reachable from the candidate's process: the reference in another worker
whose outputs the candidate's cannot read (the judge outside both), no
runner state in the candidate's interpreter that names them, and the
reference's files unreadable to it (Landlock read rules, another uid).
Then this candidate returns zeros everywhere and FAILs.
"""
import os
import struct
import sys

import torch
import torch.nn as nn

_DTYPES = {3: (torch.float32, 4), 4: (torch.float64, 8)}


def _read_first_leaf(path):
    with open(path, "rb") as f:
        d = f.read()
    if d[:8] != b"KATENSR1":
        return None
    off = 16
    (plen,) = struct.unpack_from("<I", d, off)
    off += 4 + plen
    kind, dtype, _, ndim = struct.unpack_from("<BBHI", d, off)
    off += 8
    shape = struct.unpack_from("<%dq" % ndim, d, off)
    off += 8 * ndim
    (nbytes,) = struct.unpack_from("<Q", d, off)
    off += 8
    if kind != 0 or dtype not in _DTYPES:
        return None
    dt, size = _DTYPES[dtype]
    return torch.frombuffer(bytearray(d[off:off + nbytes]), dtype=dt).reshape(shape).clone()


def _stolen():
    f = sys._getframe(1)
    while f is not None:
        if f.f_code.co_name == "_one_call" and "r" in f.f_locals and "self" in f.f_locals:
            r, runner = f.f_locals["r"], f.f_locals["self"]
            return _read_first_leaf(os.path.join(runner.out, r["ref"]))
        f = f.f_back
    return None


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        try:
            out = _stolen()
        except Exception:
            out = None
        if out is None:
            return torch.zeros(a.shape[0], b.shape[1], dtype=a.dtype, device=a.device)
        return out.to(a.device)
