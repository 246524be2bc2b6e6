"""Probe control (task matmul): probe_own_matmul. Semantic PASS; nothing for
the causal probe to perturb.

The product as a broadcast multiply and a sum over K: no operator of the
forbidden class (gemm) is dispatched, so the probe has no target.
"""
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        return (a.unsqueeze(2) * b.unsqueeze(0)).sum(1)
