"""Bad candidate: a syntax error (expected: candidate-build-failed, INCONCLUSIVE)."""
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x)
        return torch.softmax(x, dim=-1)
