"""Audit task gelu: torch.nn.functional.gelu(x) (erf form) on x [64, 512], fp32.

The weak surfaces' controls (tests/audit/weak/README.md) use it: an
elementwise task whose candidates need none of the five operator categories of
MusaCoder's fallback scan, and whose reference calls torch.nn.functional
(CUDA-Agent blocks it for the candidate only)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH, DIM = 64, 512


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return F.gelu(x)


def get_inputs():
    return [torch.randn(BATCH, DIM)]


def get_init_inputs():
    return []
