"""Negative (task rowsum): own_gain. Must PASS where the contract declares
its state.

Row sums scaled by a parameter of its own, gain, initialized to one: state
the reference lacks (the leaderboard's L1 34 holds gamma and beta that
way).  The paper abstains on undeclared candidate-only state: INCONCLUSIVE
candidate-only-state without a declaration, PASS with a contract whose
state.candidate_only names gain (docs/audit.md, "State alignment").
"""
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.dim = dim
        self.gain = nn.Parameter(torch.ones(1))

    def forward(self, x):
        return x.sum(dim=self.dim) * self.gain
