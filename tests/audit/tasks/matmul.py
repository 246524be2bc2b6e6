"""Audit task matmul: torch.matmul(a, b), fp32, [128, 256] @ [256, 96]. No weights."""
import torch
import torch.nn as nn

M, K, N = 128, 256, 96


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        return torch.matmul(a, b)


def get_inputs():
    return [torch.randn(M, K), torch.randn(K, N)]


def get_init_inputs():
    return []
