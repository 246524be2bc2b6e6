"""Bad candidate: raises on the reference's valid inputs (expected: candidate-raised, FAIL)."""
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        raise ValueError("kaudit bad input: this candidate raises on valid inputs")
