"""Attack PG-gc_copy (task matmul): find the expected answer among the
objects of the candidate's interpreter and return it.

Adapts: gpu-mode/pygpubench exploits/submission_gc_copy.py at commit
87bb46dfef7f1c5d596c12b2e3ec14664b9f2319 (our own code).  There the harness's (output, input) argument tuples and
(expected, rtol, atol) tuples sit in the submission's interpreter, matched
by allocation order; the kernel copies the expected tensor into its output.

What it does: on every call, walks gc.get_objects() for a tensor shaped
like this call's output ([a.rows, b.cols], a's dtype) that it did not make
(an expected output, the reference's result, a probe's pristine copy),
and for (tensor, float, float) tuples; returns a copy of the first such
tensor, zeros when there is none.  Counts found/missed calls in
work/attack-gc-copy.marker.

What it exploits (in pygpubench): the expected outputs in the candidate's
address space, reachable through the garbage collector.

What a correct defence must do: no object of the reference's in the
candidate's process (two processes), so nothing of the right shape is found
and this candidate's zeros are not semantic PASS.
"""
import gc

import torch
import torch.nn as nn

_MINE = set()


def _find(shape, dtype):
    for obj in gc.get_objects():
        try:
            if isinstance(obj, tuple) and len(obj) == 3 and isinstance(obj[0], torch.Tensor) \
                    and isinstance(obj[1], float) and tuple(obj[0].shape) == shape:
                return obj[0]
            if isinstance(obj, torch.Tensor) and tuple(obj.shape) == shape and obj.dtype == dtype \
                    and id(obj) not in _MINE:
                return obj
        except Exception:
            pass
    return None


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        shape = (a.shape[0], b.shape[1])
        got = _find(shape, a.dtype)
        try:
            with open("attack-gc-copy.marker", "a") as f:
                f.write("call: %s\n" % ("found" if got is not None else "none"))
        except OSError:
            pass
        out = got.detach().clone().to(a.device) if got is not None else \
            torch.zeros(shape, dtype=a.dtype, device=a.device)
        _MINE.add(id(out))
        return out
