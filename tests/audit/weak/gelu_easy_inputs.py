"""Weak control: right on the inputs the validators draw (torch.randn, |x| < 50
always in practice), wrong beyond: returns 0 where |x| > 50.  Every weak
surface ACCEPTs (they call get_inputs()); kaudit's value_large and
dist_signed_extremes slots (scale 1e5) FAIL it: a false accept of all seven,
the case the validator statistics count."""
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        y = 0.5 * x * (1.0 + torch.erf(x * 0.7071067811865476))
        return torch.where(x.abs() > 50.0, torch.zeros_like(y), y)
