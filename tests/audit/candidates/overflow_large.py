"""Positive (task rowsum): overflow_large.

Reduces 32-element chunks in fp32 but stores the partial sums in float16
(half the traffic for the second pass) before adding them up. Float16 tops out
at 65504: at the 1e5 input scale the partials overflow to +-inf (and inf-inf
gives NaN) while the fp32 reference is finite. At unit scale the fp16 rounding
of partials (~5e-4 relative) still passes a loose atol=rtol=1e-2 check.
Caught by: slot 2 value_large (also 7 dist_signed_extremes): nan/inf against
a finite reference. Subtle detail: the calibrated tolerance already flags the
fp16 rounding at slot 0 value_normal (error ~1e-3 absolute vs fp32 ~1e-6), so
the first failing slot is 0, not 2; the nan/inf finding is specific to 2/7.
"""
import torch
import torch.nn as nn

CHUNK = 32


class ModelNew(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        xt = x.movedim(self.dim, -1)
        n = xt.shape[-1]
        pad = (-n) % CHUNK
        if pad:
            xt = torch.cat([xt, xt.new_zeros(xt.shape[:-1] + (pad,))], dim=-1)
        parts = xt.reshape(xt.shape[:-1] + (-1, CHUNK)).sum(dim=-1)
        parts = parts.to(torch.float16)
        return parts.to(x.dtype).sum(dim=-1)
