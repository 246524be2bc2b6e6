"""The same function, computed in another order (2 * tanh(x))."""
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x):
        return 2 * torch.tanh(x)
