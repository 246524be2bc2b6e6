"""Positive (task linear): class_cache.

Result memo meant to skip recomputation in a benchmark loop. Each instance
tracks the (data_ptr, _version) of the input it last saw and recomputes when
either changes, which is right within one instance. But the memo itself lives
on the CLASS, keyed on the input shape, together with the data_ptr it was
computed for; a fresh instance (no history of its own) trusts any class entry
whose data_ptr matches its input, i.e. it returns what ANOTHER instance
computed for earlier values of that buffer.
Right on the nominal inputs called once (first instance computes).
Caught by: slot 11 repeated_calls, the fresh instance B's first call (fresh
values in the buffers instance A used): semantic tolerance; B's second call
too. Subtle detail: this needs B to be built after A in the same worker
process and to be fed A's buffers; a runner that builds a fresh candidate per
slot may also hit it wherever the allocator reuses an input address.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class ModelNew(nn.Module):
    _memo = {}  # shape -> (data_ptr, output); shared by every instance

    def __init__(self, in_features, out_features):
        super().__init__()
        self.fc = nn.Linear(in_features, out_features, bias=True)
        self._seen = None  # (data_ptr, _version) of the last input

    def forward(self, x):
        key = tuple(x.shape)
        mine = (x.data_ptr(), x._version)
        entry = ModelNew._memo.get(key)
        if entry is not None and entry[0] == x.data_ptr():
            if self._seen is None or self._seen == mine:
                self._seen = mine
                return entry[1].clone()
        out = F.linear(x, self.fc.weight, self.fc.bias)
        ModelNew._memo[key] = (x.data_ptr(), out.detach().clone())
        self._seen = mine
        return out
