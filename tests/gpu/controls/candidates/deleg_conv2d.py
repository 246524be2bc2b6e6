"""Control deleg_conv2d (task conv): forward is F.conv2d.
Positive: delegation (cuDNN)."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x, w):
        return F.conv2d(x, w, padding=1)
