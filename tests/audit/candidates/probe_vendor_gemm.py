"""Probe control (task matmul): probe_vendor_gemm. Semantic PASS; the causal
probe's vendor channel convicts.

The product is computed by cublasSgemm_v2 in libprobe_ext.so, a shared object
of the candidate's that calls the stand-in cuBLAS of the build
(tests/programs/libprobe_ext.c; its path in KAUDIT_TEST_PROBE_EXT).  The
stand-ins compute on host memory, so the CPU tensors serve as device buffers.
No operator of a forbidden class is dispatched: the work is below the
framework, and only the vendor replay (the preload replacing the call's
output after it returned) can show the output depends on it.
"""
import ctypes
import os

import torch
import torch.nn as nn


def load_ext():
    lib = ctypes.CDLL(os.environ["KAUDIT_TEST_PROBE_EXT"])
    for name in ("probe_ext_sgemm", "probe_ext_lt_sgemm"):
        fn = getattr(lib, name)
        fn.argtypes = [ctypes.c_void_p] * 3 + [ctypes.c_int] * 3
        fn.restype = ctypes.c_int
    return lib


def ext_matmul(fn, a, b):
    a, b = a.contiguous(), b.contiguous()
    c = torch.empty(a.shape[0], b.shape[1], dtype=torch.float32)
    st = fn(a.data_ptr(), b.data_ptr(), c.data_ptr(), a.shape[0], b.shape[1], a.shape[1])
    if st:
        raise RuntimeError("the extension's GEMM failed: status %d" % st)
    return c


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.ext = load_ext()

    def forward(self, a, b):
        return ext_matmul(self.ext.probe_ext_sgemm, a, b)
