"""Positive (task linear): output_aliasing.

Writes every result into one preallocated output buffer (reallocated only when
shape/device/dtype change) and returns that buffer itself, so a result the
caller holds is overwritten by the next call.
Each call's values are right when read immediately.
Caught by: slot 11 repeated_calls: outputs of earlier calls are snapshotted
and re-checked at the end; they now hold the last call's values (output
aliasing). Subtle detail: a runner that compares each output right after its
call and never re-reads it would not see this.
"""
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.fc = nn.Linear(in_features, out_features, bias=True)
        self._out = None

    def forward(self, x):
        w, b = self.fc.weight, self.fc.bias
        shape = (x.shape[0], w.shape[0])
        o = self._out
        if o is None or tuple(o.shape) != shape or o.device != x.device or o.dtype != x.dtype:
            o = self._out = torch.empty(shape, device=x.device, dtype=x.dtype)
        with torch.no_grad():
            torch.matmul(x, w.t(), out=o)
            o.add_(b)
        return o
