"""Audit task relu_inplace: torch.relu_(x) on x [64, 256], fp32: the reference
changes its input in place and returns it (its output aliases its input)."""
import torch
import torch.nn as nn

BATCH, DIM = 64, 256


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.relu_(x)


def get_inputs():
    return [torch.randn(BATCH, DIM)]


def get_init_inputs():
    return []
