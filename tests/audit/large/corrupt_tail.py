"""Right everywhere but the last 7 elements of the last row (zeroed): a
defect of 7 elements in 5,242,880, which each call's sample of about 2^20
elements meets with probability 1 - (1 - 0.18)^7, about 0.75."""
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x):
        y = torch.tanh(x) * 2
        y[-1, -7:] = 0
        return y
