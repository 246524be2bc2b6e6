"""Positive (task linear): folds_scale_inplace. Must FAIL.

Its outputs are right on every call, but its first call multiplies its
weight by 2 in place and later calls divide the product by 2: the module's
state after the calls differs from the state it was given (docs/audit.md,
"State": the state is compared after the calls).
"""
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.fc = nn.Linear(in_features, out_features, bias=True)
        self._folded = False

    def forward(self, x):
        if not self._folded:
            with torch.no_grad():
                self.fc.weight.mul_(2.0)
            self._folded = True
        return torch.addmm(self.fc.bias, x, self.fc.weight.t()) - 0.5 * (x @ self.fc.weight.t())
