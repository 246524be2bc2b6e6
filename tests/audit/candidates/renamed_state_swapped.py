"""Positive (task batchnorm): renamed_state_swapped. Must not PASS.

BatchNorm by hand in both modes, its state held under names of its own, as
LLM-written kernels often hold it (KernelBench leaderboard, level 2 task 41:
bn_weight, bn_bias, bn_mean, bn_var), and without the count of training
batches: neither the names nor the order map it onto the reference's
bn.weight, bn.bias, bn.running_mean, bn.running_var, of one shape.  The
words of the names do; but this one uses its shift as the scale and its
scale as the shift.  Wrong, and under a mapping only its outputs could
verify: INCONCLUSIVE (state-mapping-unverified), never PASS.
"""
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.bn_mean_momentum = 0.1
        self.bn_eps = 1e-5
        self.register_buffer("bn_var", torch.ones(channels))
        self.register_buffer("bn_mean", torch.zeros(channels))
        self.bn_bias = nn.Parameter(torch.zeros(channels))
        self.bn_weight = nn.Parameter(torch.ones(channels))

    def forward(self, x):
        if self.training:
            mean = x.mean(dim=0)
            var = x.var(dim=0, unbiased=False)
            n, m = x.shape[0], self.bn_mean_momentum
            with torch.no_grad():
                self.bn_mean.mul_(1 - m).add_(m * mean)
                self.bn_var.mul_(1 - m).add_(m * var * n / (n - 1))
        else:
            mean, var = self.bn_mean, self.bn_var
        return (x - mean) / torch.sqrt(var + self.bn_eps) * self.bn_bias + self.bn_weight
