"""Control timing_side_stream (task add): the add runs 20 times on the extension's own
side stream, never joined to the timed stream, so the stop event does not wait for it.
Positive: timing violation (work outside the timed stream)."""
import os
import sys

import torch
import torch.nn as nn

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import kernels  # noqa: E402  (tests/gpu/controls/kernels.py)


REPEATS = 20


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.ext = kernels.load()

    def forward(self, a, b):
        out = torch.empty_like(a)
        return self.ext.add_on_stream(a, b, out, sleep_cycles=0, join=False, repeats=REPEATS)
