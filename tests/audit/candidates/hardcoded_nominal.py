"""Positive (task matmul): hardcoded_nominal.

At construction it regenerates the nominal provider inputs (what get_inputs()
returns after torch.manual_seed(0), drawn from a private CPU generator so the
global RNG is untouched), computes their product once and returns that tensor
on every call whose shapes match, whatever the input values.

Right on the nominal inputs (native seed 0 = seed 0, called once), so a
validator that checks only those accepts it.
Caught by: slot 0 value_normal (and every other slot with fresh values):
semantic tolerance (output differs from the reference for the new values).
Subtle detail: with `--seed N` (N != 0) native_seed_0 differs too.
"""
import torch
import torch.nn as nn

M, K, N = 128, 256, 96
NOMINAL_SEED = 0


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        g = torch.Generator().manual_seed(NOMINAL_SEED)
        a = torch.randn(M, K, generator=g)
        b = torch.randn(K, N, generator=g)
        # not persistent: not part of the state_dict, but moves with .to(device)
        self.register_buffer("nominal", torch.matmul(a, b), persistent=False)

    def forward(self, a, b):
        if a.shape[0] == M and b.shape[1] == N:
            return self.nominal.clone()
        return torch.matmul(a, b)
