"""Positive (task linear): snapshot_own_state. Must FAIL even where the
contract declares its snapshot as state of its own.

Copies its initial weight into a buffer of its own, w_snap, and computes
with the copy: right while the injected weight equals the initial one.  A
contract's state.candidate_only keeps w_snap at the candidate's value, and
the re-drawn fc.weight it was given shows the difference.
"""
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.fc = nn.Linear(in_features, out_features, bias=True)
        self.register_buffer("w_snap", self.fc.weight.detach().clone())

    def forward(self, x):
        return torch.nn.functional.linear(x, self.w_snap, self.fc.bias)
