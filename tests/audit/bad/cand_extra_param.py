"""Bad candidate for tasks/linear.py: an extra nn.Parameter the reference lacks
(expected: candidate-only-state, INCONCLUSIVE; its state cannot be aligned)."""
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.fc = nn.Linear(in_features, out_features, bias=True)
        self.gain = nn.Parameter(torch.ones(out_features))

    def forward(self, x):
        return self.fc(x) * self.gain
