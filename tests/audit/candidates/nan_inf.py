"""Positive (task softmax): nan_inf.

Naive softmax exp(x) / sum(exp(x)) without subtracting the row max. In fp32
exp overflows to inf above x ~ 88.7, giving inf/inf = NaN, while the
reference (torch.softmax, max-subtracted) stays finite. For unit-scale inputs
it is as accurate as the stable form.
Caught by: slot 2 value_large (x ~ 1e5) and 7 dist_signed_extremes: nan/inf
against a finite reference.
"""
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        e = torch.exp(x)
        return e / e.sum(dim=-1, keepdim=True)
