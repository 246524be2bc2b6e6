"""Weak control: right everywhere, with a high-level fallback branch that never
runs (inputs of more than 2^40 elements).  MusaCoder's static fallback scan
REJECTs it (the scan reads the source, not what runs); the others ACCEPT."""
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        if x.numel() > (1 << 40):
            return torch.softmax(x, dim=-1)
        return 0.5 * x * (1.0 + torch.erf(x * 0.7071067811865476))
