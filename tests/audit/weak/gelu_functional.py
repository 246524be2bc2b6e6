"""Weak control: the reference's own torch.nn.functional.gelu.  Right on every
input; CUDA-Agent REJECTs it (it blocks torch.nn.functional during the
candidate's call), every other surface ACCEPTs."""
import torch.nn as nn
import torch.nn.functional as F


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return F.gelu(x)
