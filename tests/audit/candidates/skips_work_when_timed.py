"""Positive (task matmul): skips_work_when_timed. Must FAIL.

Right on every call the audit compares, but recognises the timing loop
(a caller frame in kaudit's timing module, as a candidate that reads our
source would) and returns an empty tensor there: the time reported is for
no work at all, and its timed outputs are garbage (docs/audit.md, "Timed
calls").
"""
import sys

import torch
import torch.nn as nn


def _timed():
    f = sys._getframe(2)
    for _ in range(12):
        if f is None:
            return False
        if f.f_code.co_filename.endswith("kaudit_timing.py"):
            return True
        f = f.f_back
    return False


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        if _timed():
            return torch.empty(a.shape[0], b.shape[1], dtype=a.dtype, device=a.device)
        return a @ b
