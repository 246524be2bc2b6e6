"""Positive (task layernorm): layernorm_ignores_affine. Must FAIL.

Normalizes each row but never applies the affine weight and bias: right
while they hold their initial ones and zeros, wrong once the state both
parties get is re-drawn (docs/audit.md, "State").
"""
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.norm = nn.LayerNorm(dim)

    def forward(self, x):
        mean = x.mean(dim=-1, keepdim=True)
        var = x.var(dim=-1, unbiased=False, keepdim=True)
        return (x - mean) / torch.sqrt(var + self.norm.eps)
