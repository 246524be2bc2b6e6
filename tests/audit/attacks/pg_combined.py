"""Attack PG-combined (task matmul): poison the harness's tensors with NaN
(pg_gc_nan.py) and make the warm-up calls slow, so that a harness that
sizes its timed run from the warm-up takes few samples of a call that does
nothing.

Adapts: gpu-mode/pygpubench exploits/submission_combined.py at commit
87bb46dfef7f1c5d596c12b2e3ec14664b9f2319 (our own code): there gc NaN injection (the checker accepts anything)
with warm-up detection (the same input pointer again: sleep 0.4 s, so that
the harness plans the fewest timed calls).

What it does: at import and on every call, fills with NaN every
floating-point tensor among gc's objects that it did not make; on a call
whose first input has the address of the previous call's, the first
twelve times, synchronizes and sleeps 0.4 s (a warm-up or a timed call
of a loop that reuses its inputs, as KernelBench's timing and kaudit's
timed calls do); returns zeros.  work/attack-combined.marker counts both.

What it exploits (in pygpubench): the expected outputs in the submission's
interpreter, NaN as a wildcard, and a warm-up that is recognisable and
decides the timed run's length.

What a correct defence must do: the semantic axis judged on answers out of
the candidate's reach (zeros are then not semantic PASS); on a GPU the
number of timed calls not taken from a warm-up the candidate can stretch,
and a measurement judged from the trace, not from the candidate's reports.
"""
import gc
import time

import torch
import torch.nn as nn

_MINE = set()
_st = {"last": None, "slept": 0, "poisoned": 0}


def _poison():
    n = 0
    for obj in gc.get_objects():
        try:
            if isinstance(obj, torch.Tensor) and obj.is_floating_point() and id(obj) not in _MINE:
                obj.data.fill_(float("nan"))
                n += 1
        except Exception:
            pass
    _st["poisoned"] += n


_poison()


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        ptr = a.data_ptr()
        if ptr == _st["last"] and _st["slept"] < 12:
            if a.is_cuda:
                torch.cuda.synchronize()
            time.sleep(0.4)
            _st["slept"] += 1
        _st["last"] = ptr
        _poison()
        out = torch.zeros(a.shape[0], b.shape[1], dtype=a.dtype, device=a.device)
        _MINE.add(id(out))
        try:
            with open("attack-combined.marker", "w") as f:
                f.write("poisoned %d, slept %d\n" % (_st["poisoned"], _st["slept"]))
        except OSError:
            pass
        return out
