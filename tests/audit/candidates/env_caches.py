"""Negative (task softmax): env_caches. Semantic PASS.

Writes where the cache variables of PyTorch's compiler (TORCHINDUCTOR_CACHE_DIR),
CuPy (CUPY_CACHE_DIR) and Numba (NUMBA_CACHE_DIR) say, as those libraries do
when they compile: a machine's environment may name folders outside the
audit for them (tests/audit_cli.sh sets each to one), and an audit's worker
has them beneath its own cache instead (docs/audit.md, "Confinement").
"""
import os

import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        for variable in ("TORCHINDUCTOR_CACHE_DIR", "CUPY_CACHE_DIR", "NUMBA_CACHE_DIR"):
            folder = os.environ.get(variable) or os.path.expanduser("~/.cache/" + variable.lower())
            os.makedirs(folder, exist_ok=True)
            with open(os.path.join(folder, "kernel.bin"), "wb") as f:
                f.write(b"compiled")

    def forward(self, x):
        m = x.max(dim=-1, keepdim=True).values
        e = (x - m).exp()
        return e / e.sum(dim=-1, keepdim=True)
