"""Negative for state alignment (task linear): fp16_weights. Its state is
aligned (the reference's fp32 weights cast to its fp16 ones); the outputs
then decide: the product of fp16-rounded weights is off by about 1e-3
relative, beyond the fp32 task's tolerance, so the semantic axis FAILs on
the values, not INCONCLUSIVE on "cannot be aligned".
"""
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.fc = nn.Linear(in_features, out_features, bias=True).half()

    def forward(self, x):
        return nn.functional.linear(x, self.fc.weight.float(), self.fc.bias.float())
