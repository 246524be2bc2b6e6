"""Negative (task batchnorm): batchnorm_both_modes. Must PASS.

BatchNorm by hand in both modes: the batch's statistics (and the running
statistics' update) in train mode, the running statistics in eval mode.
"""
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.bn = nn.BatchNorm1d(channels)

    def forward(self, x):
        bn = self.bn
        if self.training:
            mean = x.mean(dim=0)
            var = x.var(dim=0, unbiased=False)
            n = x.shape[0]
            with torch.no_grad():
                bn.running_mean.mul_(1 - bn.momentum).add_(bn.momentum * mean)
                bn.running_var.mul_(1 - bn.momentum).add_(bn.momentum * var * n / (n - 1))
                bn.num_batches_tracked.add_(1)
        else:
            mean, var = bn.running_mean, bn.running_var
        return (x - mean) / torch.sqrt(var + bn.eps) * bn.weight + bn.bias
