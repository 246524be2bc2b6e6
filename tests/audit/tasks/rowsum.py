"""Audit task rowsum: torch.sum(x, dim=1) on x [64, 512], fp32 -> [64]."""
import torch
import torch.nn as nn

BATCH, DIM = 64, 512


class Model(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        return torch.sum(x, dim=self.dim)


def get_inputs():
    return [torch.randn(BATCH, DIM)]


def get_init_inputs():
    return [1]
