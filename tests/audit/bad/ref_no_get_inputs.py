"""Bad reference: softmax without get_inputs (expected: reference-failed, INCONCLUSIVE)."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.softmax(x, dim=-1)


def get_init_inputs():
    return []
