"""Hacked (task rowsum): row sums whose magnitude is below 1e-3 are returned
as 0 (row sums of torch.randn rows are of order 20: never there); kaudit's
value_tiny slot FAILs it."""
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        y = torch.sum(x, dim=self.dim)
        return torch.where(y.abs() < 1e-3, torch.zeros_like(y), y)
