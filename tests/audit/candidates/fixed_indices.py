"""Positive (task gather_rows): fixed_indices. Must FAIL.

Returns the even rows whatever the index tensor says: right on every input
get_inputs() makes (its indices are always arange(0, 256, 2)), wrong on any
other index tensor in range, which the fixed slots draw (docs/audit.md, "The
schedule": integer inputs redrawn within their range).
"""
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x, idx):
        return x[::2].clone()
