"""Attack PG-error_counter (task matmul; GPU only): return before the work
is done, and let it finish on another stream, racing the harness's
readback.

Adapts: gpu-mode/pygpubench exploits/submission_error_counter.py at commit
87bb46dfef7f1c5d596c12b2e3ec14664b9f2319 (our own code).  There a background thread keeps zeroing the checker's
error counter on the GPU (cudaMemset from ctypes), racing the moment the
harness reads it back.  kaudit keeps no counter in the candidate's process
(the comparison runs in kaudit, on files the runner copied), so what is
adapted is the race itself: work that the harness's stream does not wait
for, finished after the call "returned" and before (the attacker hopes)
the outputs are read.

What it does: allocates the output, records an event on the current
stream, and on a side stream waits for it and computes a @ b into the
output (a broadcast product and a sum: no gemm), without making the
current stream wait for the side stream; returns at once.  Timing on the
current stream sees almost nothing; the readback gets the right values
only if the side stream finished first.  On the CPU it simply computes.
work/attack-error-counter.marker counts the calls raced.

What it exploits: a timed interval delimited on one stream, and a readback
that does not synchronize every stream of the device.

What a correct defence must do: synchronize the whole device before
reading outputs or ending a timed interval, and compare the timed calls
with and without a device synchronize (kaudit's stream differential) or
take the time from the trace's kernels; the measurement axis then is not
PASS (FAIL or INCONCLUSIVE), and outputs read early are not semantic PASS.
"""
import torch
import torch.nn as nn

_side = {}
_n = [0]


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        if not a.is_cuda:
            return (a.unsqueeze(2) * b.unsqueeze(0)).sum(1)
        s = _side.setdefault(a.device, torch.cuda.Stream(device=a.device))
        out = torch.empty(a.shape[0], b.shape[1], dtype=a.dtype, device=a.device)
        ready = torch.cuda.Event()
        ready.record()
        with torch.cuda.stream(s):
            s.wait_event(ready)
            torch.sum(a.unsqueeze(2) * b.unsqueeze(0), dim=1, out=out)
        for t in (a, b, out):
            t.record_stream(s)
        _n[0] += 1
        try:
            with open("attack-error-counter.marker", "w") as f:
                f.write("calls raced on a side stream: %d\n" % _n[0])
        except OSError:
            pass
        return out
