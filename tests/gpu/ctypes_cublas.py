"""ctypes_cublas.py - cuBLAS called through ctypes, bypassing every link-time binding.

ctypes resolves cublasSgemm_v2 with dlsym() on the handle of PyTorch's own
libcublas.so.13, loaded RTLD_LOCAL: the way a candidate could try to reach a
vendor library without meeting a preloaded wrapper.  kaudit must still see the
call (rtld-audit) and put its kernels in its vendor window.

stdout: the SHA-256 of the result and ok/MISMATCH against torch; stderr:
KAUDIT_TEST lines for the checker.
"""
import ctypes
import hashlib
import os
import sys

import torch

N = 256


def main():
    libdir = os.path.join(os.path.dirname(torch.__file__), "..", "nvidia", "cu13", "lib")
    cublas = ctypes.CDLL(os.path.join(os.path.realpath(libdir), "libcublas.so.13"))
    handle = ctypes.c_void_p()
    if cublas.cublasCreate_v2(ctypes.byref(handle)) != 0:
        print("cublasCreate_v2 failed")
        return 1
    torch.manual_seed(0)
    a = torch.randn(N, N, device="cuda")
    b = torch.randn(N, N, device="cuda")
    c = torch.empty(N, N, device="cuda")
    torch.cuda.synchronize()
    alpha, beta = ctypes.c_float(1.0), ctypes.c_float(0.0)
    vp = ctypes.c_void_p
    status = cublas.cublasSgemm_v2(handle, 0, 0, N, N, N, ctypes.byref(alpha), vp(a.data_ptr()), N,
                                   vp(b.data_ptr()), N, ctypes.byref(beta), vp(c.data_ptr()), N)
    torch.cuda.synchronize()
    # Column-major C = A*B of row-major a, b is (b @ a) read row-major.
    ref = b @ a
    ok = status == 0 and torch.allclose(c, ref, rtol=1e-3, atol=1e-3)
    print(f"ctypes_sgemm shape={N}x{N} sha256={hashlib.sha256(c.cpu().numpy().tobytes()).hexdigest()} "
          f"{'ok' if ok else 'MISMATCH'}")
    print(f"KAUDIT_TEST ctypes_sgemm m={N} n={N} k={N} status={status}", file=sys.stderr)
    cublas.cublasDestroy_v2(handle)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
