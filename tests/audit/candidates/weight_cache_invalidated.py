"""Negative (task linear): weight_cache_invalidated. Must PASS.

Caches the transposed, contiguous weight (a typical "pre-pack the weight"
optimisation) and rebuilds it whenever the weight's data_ptr, _version,
device, dtype or shape change. load_state_dict() writes parameters with an
in-place copy_ (same data_ptr, bumped _version) and .to(device) makes new
storage, so the reference's injected weights are honoured. The cache is a
plain attribute, not a buffer, so the state_dict keys equal the reference's.
"""
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.fc = nn.Linear(in_features, out_features, bias=True)
        self._wt = None
        self._wt_key = None

    def _packed_weight(self):
        w = self.fc.weight
        key = (w.data_ptr(), w._version, w.device, w.dtype, tuple(w.shape))
        if self._wt is None or self._wt_key != key:
            with torch.no_grad():
                self._wt = w.detach().t().contiguous()
            self._wt_key = key
        return self._wt

    def forward(self, x):
        return torch.addmm(self.fc.bias, x, self._packed_weight())
