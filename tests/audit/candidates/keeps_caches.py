"""Negative (task softmax): keeps_caches. Semantic PASS.

Keeps a kernel cache beneath its home, as CuPy (~/.cupy/kernel_cache),
tilelang (~/.tilelang/cache), FlashInfer (~/.cache/flashinfer through
Path.home()) and DeepGEMM (~/.deep_gemm) do, once when built and again on
its first call; and, as cache code does before it writes, makes sure that
a folder which is there is there (os.makedirs(..., exist_ok=True) on its
own folder, which it may read but not write).  An audit's worker has a home
of its own (DIR/home, kaudit as root), and making a folder that exists
changes nothing: neither is a write outside its directories (docs/audit.md,
"Confinement").
"""
import os

import torch.nn as nn


def keep(name):
    folder = os.path.expanduser("~/.kernel_cache")
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, name), "wb") as f:
        f.write(b"cubin")


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        os.makedirs(os.path.dirname(os.path.abspath(__file__)), exist_ok=True)
        keep("built.bin")
        self.called = False

    def forward(self, x):
        if not self.called:
            keep("first-call.bin")
            self.called = True
        m = x.max(dim=-1, keepdim=True).values
        e = (x - m).exp()
        return e / e.sum(dim=-1, keepdim=True)
