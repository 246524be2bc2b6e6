"""Control deleg_aten_cpp (task matmul): at::matmul called from the candidate's C++
extension.  Positive: the operator passes the dispatcher whoever calls it, so the
dispatcher channel of the causal probe should convict it (issue 16)."""
import os
import sys

import torch.nn as nn

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import vendor_ext  # noqa: E402  (tests/gpu/controls/vendor_ext.py)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.ext = vendor_ext.load("aten")

    def forward(self, a, b):
        return self.ext.matmul_aten(a, b)
