"""Positive (task linear): weights_packed_once. Must FAIL.

Packs its transposed weight at its first call and uses the packed copy ever
after, never looking at the weight again: right while the state it was
given before its first call holds, wrong once a new state is loaded into an
instance that has run (the slot state_reload: docs/audit.md, "State").
Compare weight_cache_invalidated, which rebuilds its cache when the weight
changes.
"""
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.fc = nn.Linear(in_features, out_features, bias=True)
        self._wt = None

    def forward(self, x):
        if self._wt is None:
            self._wt = self.fc.weight.detach().t().contiguous()
        return torch.addmm(self.fc.bias, x, self._wt)
