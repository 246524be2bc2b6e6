"""Positive (task matmul): nondeterministic.

Correct fp32 matmul, then multiplies by (1 + 1e-3 * noise) with noise from an
unseeded private generator (seeded from the OS), mimicking a racy/atomic
kernel whose result varies from call to call. The ~1e-3 relative deviation
passes a loose atol=rtol=1e-2 check on the nominal inputs.
Caught by: slot 0 value_normal (and every slot): semantic tolerance; the
repeated calls in slot 11 also disagree with each other.
"""
import torch
import torch.nn as nn

REL_NOISE = 1e-3


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self._gen = torch.Generator()
        self._gen.seed()  # nondeterministic seed, not torch.manual_seed

    def forward(self, a, b):
        out = torch.matmul(a, b)
        noise = torch.randn(out.shape, generator=self._gen).to(out.device, out.dtype)
        return out * (1 + REL_NOISE * noise)
