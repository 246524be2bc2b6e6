"""Attack F2 (task matmul, contract forbids gemm): probe_thread - delegate the
GEMM to torch.matmul on another thread, out of the causal probe's sight.

What it does: forward starts a thread that runs torch.matmul(a, b) and
joins it.  PyTorch's dispatch mode stack is thread-local, so the probe's
Dispatch mode (runner/kaudit_probe.py), pushed on the runner's thread, sees
no mm: the probe reports no-targets and on --device cpu, where it alone
decides the implementation axis, the delegation is unconvicted
(UNSUPPORTED instead of FAIL).  The output is correct: semantic PASS.  (On a
GPU the trace would show the GEMM's launch on the other thread: docs/audit.md
says launch provenance then convicts; on CPU there is no trace to judge.)

What it exploits: the probe's observation is per thread; the candidate
chooses the thread.

What a correct defence must do: observe every thread of the worker (a
dispatch hook installed process-wide, e.g. a C++ dispatcher fallback or
TLS propagated to new threads, or refusing/flagging threads started during
the probe's replays), so that the implementation axis is FAIL (forbidden
gemm used) or the probe unresolved with that cause.
"""
import threading

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        box = {}

        def work():
            box["out"] = torch.matmul(a, b)
        t = threading.Thread(target=work)
        t.start()
        t.join()
        return box["out"]
