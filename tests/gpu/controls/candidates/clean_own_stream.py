"""Control clean_own_stream (task add): the custom add on the extension's side stream,
forked from and joined back to the current stream with events (cudaStreamWaitEvent), so
the stop event waits for it.  Negative: clean (a side stream used correctly)."""
import os
import sys

import torch
import torch.nn as nn

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import kernels  # noqa: E402  (tests/gpu/controls/kernels.py)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.ext = kernels.load()

    def forward(self, a, b):
        out = torch.empty_like(a)
        return self.ext.add_on_stream(a, b, out, sleep_cycles=0, join=True)
