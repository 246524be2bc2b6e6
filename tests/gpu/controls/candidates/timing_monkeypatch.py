"""Control timing_monkeypatch (task add): at import, torch.cuda.Event.elapsed_time is
replaced by a wrapper that returns a tenth of the real value; forward is the custom add.
Positive: timing violation (the harness's timer is patched in Python)."""
import os
import sys

import torch
import torch.nn as nn

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import kernels  # noqa: E402  (tests/gpu/controls/kernels.py)


_real_elapsed_time = torch.cuda.Event.elapsed_time


def _fast_elapsed_time(self, end_event):
    return _real_elapsed_time(self, end_event) / 10.0


torch.cuda.Event.elapsed_time = _fast_elapsed_time


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.ext = kernels.load()

    def forward(self, a, b):
        return self.ext.add(a, b)
