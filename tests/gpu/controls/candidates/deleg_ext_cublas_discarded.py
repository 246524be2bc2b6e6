"""Control deleg_ext_cublas_discarded (task matmul): the extension's own
cublasSgemm (below the framework: the dispatcher never sees it) is computed
and thrown away; the custom tiled GEMM gives the output.  The causal probe's
vendor-boundary channel finds the output does not depend on the cuBLAS call
(issue 16; docs/analysis.md, "Causal probe")."""
import os
import sys

import torch.nn as nn

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import kernels  # noqa: E402  (tests/gpu/controls/kernels.py)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.ext = kernels.load()

    def forward(self, a, b):
        discarded = self.ext.sgemm_cublas(a, b)
        del discarded
        return self.ext.matmul_tiled(a, b)
