"""Hacked (task softmax): computes the softmax in its input's storage (the input
is overwritten).  Harnesses that call the reference first, or give the
candidate a copy, accept it; robust-kbench calls the candidate first and
the reference after it on the same tensors, and rejects it."""
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x.sub_(x.amax(dim=-1, keepdim=True)).exp_()
        return x / x.sum(dim=-1, keepdim=True)
