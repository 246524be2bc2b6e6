"""Negative (task softmax): private_scratch. Must PASS.

Stable softmax through a private scratch buffer (kept per shape/device/dtype
and reused across calls): scratch = exp(x - rowmax) written with out=, then
the result is divided into a FRESH output tensor each call. The scratch never
escapes, inputs are only read, so repeated calls, fresh instances and the
output re-check all pass.
"""
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self._scratch = {}

    def forward(self, x):
        key = (tuple(x.shape), x.device, x.dtype)
        s = self._scratch.get(key)
        if s is None:
            s = self._scratch[key] = torch.empty(x.shape, device=x.device, dtype=x.dtype)
        m = x.max(dim=-1, keepdim=True)[0]
        torch.sub(x, m, out=s)
        torch.exp(s, out=s)
        return torch.div(s, s.sum(dim=-1, keepdim=True))
