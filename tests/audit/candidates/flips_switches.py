"""Negative for the semantic verdict (task matmul): flips_switches. Must
PASS, with its switches reported.

Right on every input, but its import turns on TF32 for matmuls, asks for the
"medium" float32 matmul precision and sets PyTorch to one thread: process-wide
switches that, in a harness holding the reference in the same process, apply
to the reference too (docs/audit.md, "Global state").
"""
import torch
import torch.nn as nn

torch.backends.cuda.matmul.allow_tf32 = True
if hasattr(torch, "set_float32_matmul_precision"):
    torch.set_float32_matmul_precision("medium")
torch.set_num_threads(1)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        return a @ b
