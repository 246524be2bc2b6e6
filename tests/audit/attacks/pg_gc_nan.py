"""Attack PG-gc_nan (task matmul): poison every tensor of the harness that
the candidate's interpreter holds with NaN, then compute nothing.

Adapts: gpu-mode/pygpubench exploits/submission_gc_nan.py at commit
87bb46dfef7f1c5d596c12b2e3ec14664b9f2319 (our own code; the idea, not theirs).  There the expected outputs live in
the submission's interpreter as (tensor, rtol, atol) tuples, and the checker
takes a NaN in the expected output as "anything goes".

What it does: at import and again on every call, walks gc.get_objects() and
fills with NaN every floating-point tensor it did not make itself (inputs,
expected outputs, tolerances kept as tensors, the probe's pristine copies),
and every (tensor, float, float) tuple's floats it can reach by replacing
tuples in lists and dicts; writes work/attack-gc-nan.marker with the number
of tensors poisoned; returns zeros.

What it exploits (in pygpubench): the judge's expected answers in the
candidate's address space, and a comparison that treats NaN as a wildcard.

What a correct defence must do: no expected output in the candidate's
process (the reference runs elsewhere), and a comparison in which a NaN
anywhere is a mismatch, never a pass; this candidate's zeros are then not
semantic PASS.
"""
import gc

import torch
import torch.nn as nn

_MINE = set()


def _poison():
    n = 0
    for obj in gc.get_objects():
        try:
            if isinstance(obj, torch.Tensor) and obj.is_floating_point() and id(obj) not in _MINE:
                obj.data.fill_(float("nan"))
                n += 1
            elif isinstance(obj, list):
                for i, v in enumerate(obj):
                    if isinstance(v, tuple) and len(v) == 3 and isinstance(v[0], torch.Tensor) \
                            and isinstance(v[1], float) and isinstance(v[2], float):
                        obj[i] = (v[0], float("nan"), float("nan"))
                        n += 1
        except Exception:
            pass
    return n


_n = _poison()
try:
    with open("attack-gc-nan.marker", "a") as _f:   # work/, its own directory
        _f.write("import: poisoned %d\n" % _n)
except OSError:
    pass


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        n = _poison()
        out = torch.zeros(a.shape[0], b.shape[1], dtype=a.dtype, device=a.device)
        _MINE.add(id(out))
        try:
            with open("attack-gc-nan.marker", "a") as f:
                f.write("call: poisoned %d\n" % n)
        except OSError:
            pass
        return out
