"""Control deleg_ext_cudnn (task conv): the legacy cudnnConvolutionForward called from the
candidate's own extension, below PyTorch's dispatcher.  Positive: delegation to cuDNN,
which the causal probe's vendor channel should convict with a counterfactual (issue 16)."""
import os
import sys

import torch.nn as nn

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import vendor_ext  # noqa: E402  (tests/gpu/controls/vendor_ext.py)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.ext = vendor_ext.load("vendor")

    def forward(self, x, w):
        return self.ext.conv_cudnn(x, w, 1)
