"""Control deleg_torch_matmul (task matmul): forward is torch.matmul, nothing compiled.
Positive: delegation (the reference op itself, through cuBLAS)."""
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        return torch.matmul(a, b)
