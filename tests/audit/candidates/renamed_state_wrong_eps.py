"""Positive (task batchnorm): renamed_state_wrong_eps. Must FAIL.

BatchNorm by hand under names of its own (bn_weight, bn_bias, bn_mean,
bn_var, as renamed_state), but with epsilon 1e-3 where BatchNorm1d's is
1e-5: wrong by about 1e-3 relative wherever the variance is near one.  Its
four tensors share a shape, so the mapping by the words of their names is
verified by the outputs alone and a mismatch under it convicts nothing; the
state_reload slot's second state gives the four one value, under which no
mapping among them can change the outputs, so a mismatch there convicts
(docs/audit.md, "State alignment").  The leaderboard's L2 41 is wrong the
same way (its GroupNorm normalizes over one group where the task has eight).
"""
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.bn_mean_momentum = 0.1
        self.bn_eps = 1e-3   # the wrong epsilon (Keras's default), not BatchNorm1d's 1e-5
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
        return (x - mean) / torch.sqrt(var + self.bn_eps) * self.bn_weight + self.bn_bias
