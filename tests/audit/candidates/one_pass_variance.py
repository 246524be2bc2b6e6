"""Positive (task row_variance): one_pass_variance. Must FAIL.

The variance in one pass, E[x^2] - E[x]^2, in fp32: right on zero-centred
inputs, wrong when the mean is far above the spread (1e3 + N(0, 1): the two
terms cancel and about a sixth of the variance is lost), which the long
run's offset value set draws (docs/audit.md, "Long run").
"""
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        mean = x.mean(dim=-1)
        return (x * x).mean(dim=-1) - mean * mean
