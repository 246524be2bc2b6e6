"""Positive (task rowsum): uninit_reuse.

Remembers the data_ptr/shape of the last input; when the same buffer comes
back it skips the reduction and returns torch.empty(...), hoping the caching
allocator hands back the block of the previous (freed) result, still holding
the right values. It computes nothing on that path.
Right on the nominal inputs called once (first call computes).
Caught by: slot 11 repeated_calls, instance A's 2nd call (same buffers, fresh
values): the runner fills free allocator memory with NaN before each
candidate call, so the empty() result is NaN (nan/inf vs a finite
reference); even without the fill it would hold stale or arbitrary values.
Subtle detail: as with stale_cache_ptr, allocator address reuse of input
buffers across slots can trigger the empty() path earlier.
"""
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.dim = dim
        self._last = None

    def forward(self, x):
        key = (x.data_ptr(), tuple(x.shape), x.device)
        out_shape = x.shape[:self.dim] + x.shape[self.dim + 1:]
        if key == self._last:
            return torch.empty(out_shape, device=x.device, dtype=x.dtype)
        self._last = key
        return torch.sum(x, dim=self.dim)
