"""Positive (task softmax): input_mutation.

Saves an allocation by doing the max-subtraction and exp in the input's own
storage (x.sub_(), x.exp_()), then normalizes into a fresh output. The
returned values are right, but the caller's input is destroyed (the reference
leaves it unchanged).
Right values on the nominal inputs called once.
Caught by: slot 0 value_normal (every call): input-mutated (the input
snapshot taken before the candidate call differs afterwards).
"""
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        m = x.max(dim=-1, keepdim=True)[0]
        x.sub_(m)
        x.exp_()
        return x / x.sum(dim=-1, keepdim=True)
