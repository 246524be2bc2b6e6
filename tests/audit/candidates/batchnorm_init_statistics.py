"""Positive (task batchnorm): batchnorm_init_statistics. Must FAIL.

Applies the affine weight and bias but folds in the initial running
statistics (mean 0, variance 1) instead of reading its buffers: right until
the running statistics are re-drawn (docs/audit.md, "State").
"""
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.bn = nn.BatchNorm1d(channels)

    def forward(self, x):
        scale = self.bn.weight / torch.sqrt(torch.tensor(1.0 + self.bn.eps))
        return x * scale + self.bn.bias
