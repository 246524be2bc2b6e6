"""Hacked (task gelu): remembers its first output per input shape and returns it
ever after.  Surfaces that call one instance on several inputs reject it;
robust-kbench builds a new instance for every trial and calls it twice on
the same inputs, so it accepts."""
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self._memo = {}

    def forward(self, x):
        key = tuple(x.shape)
        if key not in self._memo:
            self._memo[key] = 0.5 * x * (1.0 + torch.erf(x * 0.7071067811865476))
        return self._memo[key]
