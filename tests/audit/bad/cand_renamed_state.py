"""Not a bad input: a candidate for task linear whose state has other names
(w, b instead of fc.weight, fc.bias) in the same order, shapes and dtypes.
State alignment maps it by position (verified: shapes, dtypes, values read
back, coverage), so the semantic axis can PASS."""
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.w = nn.Parameter(torch.empty(out_features, in_features))
        self.b = nn.Parameter(torch.empty(out_features))

    def forward(self, x):
        return x @ self.w.t() + self.b
