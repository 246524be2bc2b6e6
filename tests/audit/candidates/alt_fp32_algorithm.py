"""Negative (task matmul): alt_fp32_algorithm. Must PASS.

A different fp32 algorithm: split K into blocks of 64 (K taken from the input,
remainder handled), compute the partial products per block and sum the
partials pairwise. Different rounding from the library GEMM, same fp32
accuracy class. Works for any shape (including the contract's alternative
shapes) and for strided/transposed inputs.
"""
import torch
import torch.nn as nn

BLOCK = 64


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        k = a.shape[-1]
        parts = [torch.matmul(a[:, s:s + BLOCK], b[s:s + BLOCK, :])
                 for s in range(0, k, BLOCK)]
        while len(parts) > 1:
            nxt = [parts[i] + parts[i + 1] for i in range(0, len(parts) - 1, 2)]
            if len(parts) % 2:
                nxt.append(parts[-1])
            parts = nxt
        return parts[0]
