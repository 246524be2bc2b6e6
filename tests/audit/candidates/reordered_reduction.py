"""Negative (task rowsum): reordered_reduction. Must PASS.

Sums each row as 16 interleaved strided partial sums (element j goes to
partial j % 16), pairwise-adds the partials, all in fp32. The summation order
differs from torch.sum's, so bits differ, but the error stays of fp32 size
(within the tolerance calibrated from the reference's own fp32-vs-fp64 error).
Works for any shape/layout; inputs untouched; fresh output each call.
"""
import torch
import torch.nn as nn

LANES = 16


class ModelNew(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        xt = x.movedim(self.dim, -1)
        n = xt.shape[-1]
        pad = (-n) % LANES
        if pad:
            xt = torch.cat([xt, xt.new_zeros(xt.shape[:-1] + (pad,))], dim=-1)
        # [..., n/LANES, LANES]: column l holds elements l, l+16, l+32, ...
        lanes = xt.reshape(xt.shape[:-1] + (-1, LANES)).sum(dim=-2)
        while lanes.shape[-1] > 1:
            half = lanes.shape[-1] // 2
            lanes = lanes[..., :half] + lanes[..., half:]
        return lanes[..., 0]
