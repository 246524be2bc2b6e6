"""Attack PG-event_array (task matmul; GPU only): compute the product
honestly, and move the timing loop's start event to the end of the work,
so that every timed call reads as about nothing.

Adapts: gpu-mode/pygpubench exploits/submission_event_array.py at commit
87bb46dfef7f1c5d596c12b2e3ec14664b9f2319 (our own code).  There the submission finds the harness's two arrays of
CUDA event handles on its heap and overwrites each end event with its start
event, so that cudaEventElapsedTime returns about 0 for every measurement;
the kernel does the real work, so correctness holds.

What it does: computes a @ b as a broadcast product and a sum (no gemm:
the contract's forbidden class is not used), then walks its callers'
frames for a torch.cuda.Event pair named start and end (the KernelBench
timing loop of runner/kaudit_party.py's op_time_calls, or any harness's)
and records start again, after its own work was queued: end - start is
then the time between its return and end.record().  On the CPU (no events)
it does nothing more than compute.  work/attack-event-array.marker counts
the events moved.

What it exploits: the timed interval is delimited by events the timed code
can reach and re-record.

What a correct defence must do: take the measurement from the trace
(CUPTI's kernel records, the preload's), not from events in the
candidate's process; the measurement axis then is not PASS on a reported
time that the kernels' own durations contradict (FAIL or INCONCLUSIVE).
"""
import sys

import torch
import torch.nn as nn

_n = [0]


def _move_start():
    f = sys._getframe(2)
    while f is not None:
        s, e = f.f_locals.get("start"), f.f_locals.get("end")
        if isinstance(s, torch.cuda.Event) and isinstance(e, torch.cuda.Event):
            s.record()
            _n[0] += 1
            try:
                with open("attack-event-array.marker", "w") as fh:
                    fh.write("start events re-recorded: %d\n" % _n[0])
            except OSError:
                pass
            return
        f = f.f_back


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        out = (a.unsqueeze(2) * b.unsqueeze(0)).sum(1)
        if a.is_cuda:
            _move_start()
        return out
