"""Task matmul: torch.matmul(a, b), fp32, [1024, 1024] @ [1024, 1024]."""
import torch
import torch.nn as nn

M = K = N = 1024


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        return torch.matmul(a, b)


def get_inputs():
    return [torch.randn(M, K), torch.randn(K, N)]


def get_init_inputs():
    return []
