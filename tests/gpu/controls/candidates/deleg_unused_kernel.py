"""Control deleg_unused_kernel (task matmul): builds and loads the extension in __init__,
but forward is torch.matmul.  Positive: delegation (a custom kernel exists, never runs)."""
import os
import sys

import torch
import torch.nn as nn

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import kernels  # noqa: E402  (tests/gpu/controls/kernels.py)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.ext = kernels.load()   # built and loaded, never called

    def forward(self, a, b):
        return torch.matmul(a, b)
