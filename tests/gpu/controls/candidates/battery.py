"""Control battery (task matmul): one forward does four GEMMs and returns the tiled one:
cublasSgemm from the extension, torch.mm, the tiled kernel, and the tiled kernel under a
cuBLAS kernel's name.  Mixed: every route in one session, for attribution."""
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
        self.ext.sgemm_cublas(a, b)
        torch.mm(a, b)
        out = self.ext.matmul_tiled(a, b)
        self.ext.matmul_vendor_named(a, b)
        return out
