"""Negative (task softmax): wraps_refusal. Semantic not FAIL.

A JIT compiler whose kernel cache cannot be written reports that as an error
of its own, raised while it handles the kernel's PermissionError, as CuPy,
tilelang and others do: here the cache is a folder beside the candidate's
own file, which the audit lets it read but not write.  The confinement
refused the write; the candidate's results are not wrong for it: the calls
are unresolved (confinement-refused), never convicted (candidate-raised).
"""
import os

import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.built = False

    def forward(self, x):
        if not self.built:
            cache = os.path.join(os.path.dirname(os.path.abspath(__file__)), ".kernel_cache_beside")
            try:
                with open(cache, "wb") as f:
                    f.write(b"cubin")
            except OSError as e:
                raise RuntimeError("kernel cache unavailable: %s" % e)
            self.built = True
        m = x.max(dim=-1, keepdim=True).values
        e = (x - m).exp()
        return e / e.sum(dim=-1, keepdim=True)
