"""Positive (task matmul): late_switch_bf16. Must FAIL.

Computes the product in fp32 for its first 64 calls, then in bf16: right
on every slot of the sixteen (about 25 calls), wrong on the long run's later
calls (docs/audit.md, "Long run").
"""
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    calls = 0

    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        ModelNew.calls += 1
        if ModelNew.calls > 64:
            return (a.to(torch.bfloat16) @ b.to(torch.bfloat16)).to(a.dtype)
        return a @ b
