"""Control deleg_ext_mixed (task matmul): two library calls from the candidate's own
extensions, below the dispatcher: cublasLtMatmul gives the output, a cublasSgemm of
another shape (512 rows) is computed and thrown away.  The vendor replays one call at a
time should convict the cuBLASLt call and find the cuBLAS one unused (issue 16)."""
import os
import sys

import torch.nn as nn

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import kernels  # noqa: E402  (tests/gpu/controls/kernels.py)
import vendor_ext  # noqa: E402  (tests/gpu/controls/vendor_ext.py)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.ext = vendor_ext.load("vendor")
        self.kernels = kernels.load()

    def forward(self, a, b):
        discarded = self.kernels.sgemm_cublas(a[:512].contiguous(), b)
        del discarded
        return self.ext.sgemm_cublaslt(a, b)
