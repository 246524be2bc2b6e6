"""Probe control (task matmul): probe_vendor_mixed. Semantic PASS; the causal
probe's vendor channel convicts one call and finds the other unused.

Two library calls of the candidate's shared object (see probe_vendor_gemm):
cublasLtMatmul gives the product, a cublasSgemm_v2 of the first 64 rows is
computed and thrown away.  The vendor replays one call at a time tell them
apart: the record's probe lists the cuBLASLt call with a change far above the
threshold and the cuBLAS call with none.
"""
import os
import sys

import torch.nn as nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from probe_vendor_gemm import ext_matmul, load_ext  # noqa: E402


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.ext = load_ext()

    def forward(self, a, b):
        discarded = ext_matmul(self.ext.probe_ext_sgemm, a[:64], b)
        del discarded
        return ext_matmul(self.ext.probe_ext_lt_sgemm, a, b)
