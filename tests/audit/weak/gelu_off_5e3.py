"""Weak control: GELU plus 5e-3 everywhere.  Inside atol = rtol = 1e-2
(CUDA-Agent, KernelGYM, DeepReinforce, MusaCoder, CUDA-L1 ACCEPT), outside
KernelBench's fp32 1e-4 and robust-kbench's 1e-5 (REJECT); the semantic axis
FAILs (value-mismatch on every slot)."""
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return 0.5 * x * (1.0 + torch.erf(x * 0.7071067811865476)) + 5e-3
