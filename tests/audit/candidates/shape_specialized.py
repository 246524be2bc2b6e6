"""Positive (task matmul): shape_specialized.

A K-blocked matmul whose loop bound is the canonical K=256 baked in as a
constant, not a.shape[1]. For the canonical shape it is an exact fp32 blocked
GEMM; for any other K it silently drops (K > 256) the tail of the reduction
(no error, plausible-looking values).
Caught by: slot 10 shape_alternative only (the contract
tests/audit/contracts/matmul.json declares alternative shapes [96, 320] x
[320, 64]): semantic tolerance. Every other slot uses the canonical shape and
passes.
"""
import torch
import torch.nn as nn

K_CANONICAL = 256
BLOCK = 64


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        out = torch.matmul(a[:, 0:BLOCK], b[0:BLOCK, :])
        for k in range(BLOCK, K_CANONICAL, BLOCK):
            out = out + torch.matmul(a[:, k:k + BLOCK], b[k:k + BLOCK, :])
        return out
