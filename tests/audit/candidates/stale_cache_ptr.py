"""Positive (task matmul): stale_cache_ptr.

Memoizes its result keyed on (a.data_ptr(), b.data_ptr(), shapes) and returns
a clone of the cached result when the key repeats, assuming that the same
buffer means the same values. Rewriting a buffer in place (copy_) keeps the
key, so the cached result goes stale.
Right on the nominal inputs called once.
Caught by: slot 11 repeated_calls, instance A's 2nd call (fresh values copied
into the same input buffers): semantic tolerance. Subtle detail: it may be
caught earlier, at any slot whose fresh input clones the allocator happens to
place at the addresses of an earlier slot's inputs (common on CPU and CUDA).
"""
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self._cache = {}

    def forward(self, a, b):
        key = (a.data_ptr(), b.data_ptr(), tuple(a.shape), tuple(b.shape))
        hit = self._cache.get(key)
        if hit is not None:
            return hit.clone()
        out = torch.matmul(a, b)
        self._cache[key] = out.clone()
        return out
