"""Control allowed_bias_epilogue (task gemm_bias): the GEMM is the candidate's own tiled
kernel; the bias add goes through PyTorch (at::native).  Negative: an allowed epilogue,
the main work is custom."""
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

    def forward(self, a, b, bias):
        return self.ext.matmul_tiled(a, b) + bias
