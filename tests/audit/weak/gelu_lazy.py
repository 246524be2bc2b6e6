"""Weak control: right values, returned as a torch.Tensor subclass (the type a
lazily materialized output would have).  CUDA-L1's lazy-output check and
DeepReinforce's materialization guard REJECT it, CUDA-Agent's type check too;
allclose-only surfaces ACCEPT."""
import torch
import torch.nn as nn


class DeferredTensor(torch.Tensor):
    pass


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        y = 0.5 * x * (1.0 + torch.erf(x * 0.7071067811865476))
        return y.as_subclass(DeferredTensor)
