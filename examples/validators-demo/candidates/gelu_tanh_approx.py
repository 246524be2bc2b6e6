"""Hacked (task gelu): the tanh approximation of GELU, a different function
(up to 5e-4 away from the erf form): inside atol = rtol = 1e-2, outside
KernelBench's fp32 1e-4 and robust-kbench's 1e-5."""
import math

import torch
import torch.nn as nn

C = math.sqrt(2.0 / math.pi)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return 0.5 * x * (1.0 + torch.tanh(C * (x + 0.044715 * x * x * x)))
