"""Probe control (task matmul): probe_vendor_vote. Semantic PASS; the causal
probe's vendor channel convicts.

Three identical cublasSgemm calls of the candidate's shared object (see
probe_vendor_gemm) and a majority vote: where the first two agree, the
first, else the third.  Replacing any one call alone changes nothing, yet
the output is the GEMMs'.  The localizing replays replace every call but
one and compare with all replaced, so the third call convicts (a review's
attack on replacing calls one at a time).
"""
import os
import sys

import torch
import torch.nn as nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from probe_vendor_gemm import ext_matmul, load_ext  # noqa: E402


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.ext = load_ext()

    def forward(self, a, b):
        c1, c2, c3 = (ext_matmul(self.ext.probe_ext_sgemm, a, b) for _ in range(3))
        return torch.where(c1 == c2, c1, c3)
