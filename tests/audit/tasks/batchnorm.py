"""Audit task batchnorm: nn.BatchNorm1d(128) on x [64, 128], fp32, in eval
mode (the running statistics normalize).

At initialization the running mean is all zeros and the running variance all
ones: a candidate that folds those values in is right until the state varies."""
import torch
import torch.nn as nn

BATCH, CHANNELS = 64, 128


class Model(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.bn = nn.BatchNorm1d(channels)

    def forward(self, x):
        return self.bn(x)


def get_inputs():
    return [torch.randn(BATCH, CHANNELS)]


def get_init_inputs():
    return [CHANNELS]
