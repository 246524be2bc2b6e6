"""Audit task layernorm: nn.LayerNorm(256) (affine) on x [64, 256], fp32.

At initialization the affine weight is all ones and the bias all zeros: a
candidate that ignores them is right until the state varies."""
import torch
import torch.nn as nn

BATCH, DIM = 64, 256


class Model(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.norm = nn.LayerNorm(dim)

    def forward(self, x):
        return self.norm(x)


def get_inputs():
    return [torch.randn(BATCH, DIM)]


def get_init_inputs():
    return [DIM]
