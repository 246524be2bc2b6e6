"""Control deleg_aten_blas (task matmul): ATen's own cuBLAS wrapper,
at::cuda::blas::gemm<float>, called from the candidate's C++ extension.  No operator is
dispatched and the library call comes from libtorch_cuda, not from the candidate's
object: the vendor channel of the causal probe should still reach it (issue 16)."""
import os
import sys

import torch.nn as nn

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import vendor_ext  # noqa: E402  (tests/gpu/controls/vendor_ext.py)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.ext = vendor_ext.load("aten_blas")

    def forward(self, a, b):
        return self.ext.gemm_aten_blas(a, b)
