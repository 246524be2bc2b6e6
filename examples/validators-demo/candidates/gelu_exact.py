"""Honest (task gelu): GELU from its definition, 0.5 x (1 + erf(x / sqrt 2)), in fp32."""
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return 0.5 * x * (1.0 + torch.erf(x * 0.7071067811865476))
