"""Honest (task gelu): the reference's own torch.nn.functional.gelu (CUDA-Agent
blocks torch.nn.functional during the candidate's call: a false reject there)."""
import torch.nn as nn
import torch.nn.functional as F


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return F.gelu(x)
