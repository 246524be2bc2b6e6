"""Positive (task matmul): sum_memo. Must FAIL.

Remembers its last result under the sums of its inputs (taken in fp64) and returns it when
the sums repeat: right whenever different inputs have different sums, wrong
on the long run's permuted and reversed value sets, which share the sums of
the call before them (docs/audit.md, "Long run").
"""
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self._key = None
        self._out = None

    def forward(self, a, b):
        key = (float(a.double().sum()), float(b.double().sum()))
        if key == self._key:
            return self._out.clone()
        self._key, self._out = key, a @ b
        return self._out.clone()
