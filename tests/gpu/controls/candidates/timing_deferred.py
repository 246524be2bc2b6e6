"""Control timing_deferred (task add): on the side stream, a one-thread spin of about
50 ms (100M cycles at ~1.98 GHz) holds the add back, and nothing joins it: the add ends
long after the stop event.  Positive: timing violation (deferred work)."""
import os
import sys

import torch
import torch.nn as nn

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import kernels  # noqa: E402  (tests/gpu/controls/kernels.py)


SLEEP_CYCLES = 100_000_000


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.ext = kernels.load()

    def forward(self, a, b):
        out = torch.empty_like(a)
        return self.ext.add_on_stream(a, b, out, sleep_cycles=SLEEP_CYCLES, join=False)
