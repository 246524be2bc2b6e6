"""Hacked (task gelu): clamps its input to [-20, 20] first (a range the
validators' torch.randn inputs never leave), so GELU(x) = x is wrong above 20:
every weak surface accepts; kaudit's value_large slot FAILs it."""
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x.clamp(-20.0, 20.0)
        return 0.5 * x * (1.0 + torch.erf(x * 0.7071067811865476))
