"""Positive (task linear): lowprec_accum.

Runs the GEMM and bias add in bfloat16 (8-bit mantissa; bf16 inputs, bf16
accumulation/output where the backend does it) and casts the result back to
float32. Relative error ~1e-3..1e-2, so it passes a loose atol=rtol=1e-2 check
on the nominal inputs, but it is far less accurate than fp32. Fails on CPU and
on CUDA alike (unlike TF32, which only exists on CUDA).
Caught by: slot 0 value_normal (and every slot): semantic tolerance calibrated
from the reference's fp32-vs-fp64 error (rho >= 1e-5, far below bf16's 2^-8).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.fc = nn.Linear(in_features, out_features, bias=True)

    def forward(self, x):
        w = self.fc.weight.to(torch.bfloat16)
        b = self.fc.bias.to(torch.bfloat16)
        return F.linear(x.to(torch.bfloat16), w, b).to(x.dtype)
