"""Positive (task rowsum): tiny_loss.

Computes the fp32 row sums, then flushes every result with |y| < 1e-3 to zero
(a "denormal"/noise threshold). For unit-scale inputs the row sums are of
order 20 and essentially never below 1e-3, so it is exact there.
Caught by: slot 1 value_tiny (inputs * 1e-4: row sums ~2e-3, many flushed to
0): semantic tolerance (the absolute floor a is ~1e-8 there, not 1e-3).
"""
import torch
import torch.nn as nn

FLUSH = 1e-3


class ModelNew(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        y = torch.sum(x, dim=self.dim)
        return torch.where(y.abs() < FLUSH, torch.zeros_like(y), y)
