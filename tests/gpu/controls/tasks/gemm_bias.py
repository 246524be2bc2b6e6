"""Task gemm_bias: torch.matmul(a, b) + bias, fp32, [1024, 1024] @ [1024, 1024] + [1024]."""
import torch
import torch.nn as nn

M = K = N = 1024


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b, bias):
        return torch.matmul(a, b) + bias


def get_inputs():
    return [torch.randn(M, K), torch.randn(K, N), torch.randn(N)]


def get_init_inputs():
    return []
