"""Control deleg_discarded_gemm (task matmul): the custom tiled GEMM computes the
output; torch.matmul (cuBLAS) is computed too and thrown away.  Forbidden work
the output does not depend on: selection alone convicts it, the causal probe
does not (issue 16; docs/analysis.md, "Causal probe")."""
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
        discarded = torch.matmul(a, b)
        del discarded
        return self.ext.matmul_tiled(a, b)
