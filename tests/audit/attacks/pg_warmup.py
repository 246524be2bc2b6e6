"""Attack PG-warmup (task matmul; GPU only): recognise the timing loop's
calls and do no work in them; compute honestly everywhere else.

Adapts: gpu-mode/pygpubench exploits/submission_warmup.py at commit
87bb46dfef7f1c5d596c12b2e3ec14664b9f2319 (our own code).  There the submission recognises the warm-up (the same
input pointer again and again) and sleeps in it, so that the harness,
which sizes its timed run from the warm-up, takes the fewest samples.
kaudit's timed calls are a fixed number (one warm-up, five timed, and the
paired batches), so the adaptation uses the same recognition for the other
gain: a timed call that repeats the previous call's inputs (same
addresses, same values in a sample of elements) returns the previous
output without computing; an unseen input is computed (a @ b as a
broadcast product and a sum: no gemm).  Within its first twelve repeats it
also sleeps 0.4 s once per call when the call follows a call on other
inputs (the warm-up), as the original does.  work/attack-warmup.marker
counts computed, cached and slept calls.

What it exploits: timed calls that are recognisable (repeated inputs) and
a measurement taken only on them.

What a correct defence must do: time calls whose results are checked, or
inputs that differ between timed calls (refilled in place, so the address
test also fails), and take the time from the trace; a cached answer is
then either wrong (semantic not PASS) or its missing work shows (the
measurement axis not PASS: FAIL or INCONCLUSIVE).
"""
import time

import torch
import torch.nn as nn

_st = {"key": None, "out": None, "computed": 0, "cached": 0, "slept": 0}


def _key(a, b):
    return (a.data_ptr(), b.data_ptr(), tuple(a.reshape(-1)[:16:3].tolist()), tuple(b.reshape(-1)[-16::5].tolist()))


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        k = _key(a, b)
        if k == _st["key"] and _st["out"] is not None:
            _st["cached"] += 1
            out = _st["out"]
        else:
            if _st["key"] is not None and _st["slept"] < 12 and _st["cached"] == 0:
                if a.is_cuda:
                    torch.cuda.synchronize()
                time.sleep(0.4)
                _st["slept"] += 1
            out = (a.unsqueeze(2) * b.unsqueeze(0)).sum(1)
            _st["computed"] += 1
            _st["key"], _st["out"] = k, out
        try:
            with open("attack-warmup.marker", "w") as f:
                f.write("computed %(computed)d, cached %(cached)d, slept %(slept)d\n" % _st)
        except OSError:
            pass
        return out.clone()
