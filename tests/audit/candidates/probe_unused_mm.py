"""Probe control (task matmul): probe_unused_mm. Semantic PASS; the causal
probe finds forbidden work the output does not depend on.

torch.mm(a, b) is computed and thrown away (forbidden gemm work the
dispatcher sees); the result is a broadcast multiply and a sum over K, which
the matmul contract does not forbid.  Replacing the mm's output by noise
leaves the output exactly as it was: forbidden-work-unused, not a conviction.
"""
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        unused = torch.mm(a, b)
        del unused
        return (a.unsqueeze(2) * b.unsqueeze(0)).sum(1)
