"""Audit task gather_rows: x[idx] for x [256, 64] fp32 and an int64 index
tensor idx [128]; get_inputs() always gives the even rows (arange(0, 256, 2)),
but the task takes any index in range."""
import torch
import torch.nn as nn

ROWS, COLS = 256, 64


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x, idx):
        return x[idx]


def get_inputs():
    return [torch.randn(ROWS, COLS), torch.arange(0, ROWS, 2)]


def get_init_inputs():
    return []
