"""standin_cuda.py - ctypes access to the stand-in CUDA libraries for the
Python tests (python3 3.11 here and in CI; no third-party modules).

The directory of the stand-in libraries is given explicitly (argv), so a
child started with a scrubbed environment still finds them; libcudart.so.13
finds libcuda.so.1 next to itself (RUNPATH $ORIGIN).
"""
import ctypes
import os
import struct

CUBLAS_OP_N = 0


class Dim3(ctypes.Structure):
    _fields_ = [("x", ctypes.c_uint), ("y", ctypes.c_uint), ("z", ctypes.c_uint)]


BODY = ctypes.CFUNCTYPE(None, ctypes.POINTER(ctypes.c_void_p))


def _scale_body(args):
    # args: float *v, int n, float s  ->  v[i] = v[i] * s + i
    ptr = ctypes.cast(args[0], ctypes.POINTER(ctypes.c_void_p))[0]
    n = ctypes.cast(args[1], ctypes.POINTER(ctypes.c_int))[0]
    s = ctypes.cast(args[2], ctypes.POINTER(ctypes.c_float))[0]
    v = (ctypes.c_float * n).from_address(ptr)
    for i in range(n):
        v[i] = v[i] * s + i


class Cuda:
    """The runtime and cuBLAS, with one registered kernel."""

    def __init__(self, libdir, log=None):
        if log and log != "-":
            os.environ["STANDIN_LAUNCH_LOG"] = log
        self.rt = ctypes.CDLL(os.path.join(libdir, "libcudart.so.13"))
        self.blas = ctypes.CDLL(os.path.join(libdir, "libcublas.so.13"))
        self.rt.cudaLaunchKernel.argtypes = [ctypes.c_void_p, Dim3, Dim3, ctypes.POINTER(ctypes.c_void_p),
                                             ctypes.c_size_t, ctypes.c_void_p]
        self.rt.cudaMalloc.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_size_t]
        self.rt.cudaMemcpy.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
        self.rt.cudaFree.argtypes = [ctypes.c_void_p]
        self.rt.standin_register_kernel.argtypes = [ctypes.c_void_p, ctypes.c_char_p, BODY]
        self.blas.cublasSgemm_v2.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_int, ctypes.c_int,
                                             ctypes.c_int, ctypes.c_int, ctypes.POINTER(ctypes.c_float),
                                             ctypes.c_void_p, ctypes.c_int, ctypes.c_void_p, ctypes.c_int,
                                             ctypes.POINTER(ctypes.c_float), ctypes.c_void_p, ctypes.c_int]
        self.blas.cublasCreate_v2.argtypes = [ctypes.POINTER(ctypes.c_void_p)]
        self.blas.cublasDestroy_v2.argtypes = [ctypes.c_void_p]
        self._body = BODY(_scale_body)
        self._stub = ctypes.create_string_buffer(1)
        self.rt.standin_register_kernel(ctypes.addressof(self._stub), b"_Z15py_scale_kernelPfif", self._body)

    def check(self, rc, what):
        if rc != 0:
            raise RuntimeError("%s failed: %d" % (what, rc))

    def to_device(self, values):
        n = len(values)
        host = (ctypes.c_float * n)(*values)
        dev = ctypes.c_void_p()
        self.check(self.rt.cudaMalloc(ctypes.byref(dev), 4 * n), "cudaMalloc")
        self.check(self.rt.cudaMemcpy(dev, host, 4 * n, 1), "cudaMemcpy")
        return dev

    def to_host(self, dev, n):
        host = (ctypes.c_float * n)()
        self.check(self.rt.cudaMemcpy(host, dev, 4 * n, 2), "cudaMemcpy")
        return list(host)

    def scale(self, dev, n, s, launches=1):
        pn, ps = ctypes.c_int(n), ctypes.c_float(s)
        pv = ctypes.c_void_p(dev.value)
        args = (ctypes.c_void_p * 3)(ctypes.cast(ctypes.byref(pv), ctypes.c_void_p),
                                     ctypes.cast(ctypes.byref(pn), ctypes.c_void_p),
                                     ctypes.cast(ctypes.byref(ps), ctypes.c_void_p))
        for _ in range(launches):
            self.check(self.rt.cudaLaunchKernel(ctypes.addressof(self._stub), Dim3((n + 127) // 128, 1, 1),
                                                Dim3(128, 1, 1), args, 0, None), "cudaLaunchKernel")

    def sync(self):
        self.check(self.rt.cudaDeviceSynchronize(), "cudaDeviceSynchronize")

    def sgemm(self, m, n, k):
        """C = A B with deterministic A, B; returns C."""
        a = self.to_device([((i * 7) % 11 - 5) / 4.0 for i in range(m * k)])
        b = self.to_device([((i * 5) % 13 - 6) / 4.0 for i in range(k * n)])
        c = self.to_device([0.0] * (m * n))
        h = ctypes.c_void_p()
        self.check(self.blas.cublasCreate_v2(ctypes.byref(h)), "cublasCreate_v2")
        one, zero = ctypes.c_float(1.0), ctypes.c_float(0.0)
        self.check(self.blas.cublasSgemm_v2(h, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, ctypes.byref(one), a, m, b, k,
                                            ctypes.byref(zero), c, m), "cublasSgemm_v2")
        out = self.to_host(c, m * n)
        self.check(self.blas.cublasDestroy_v2(h), "cublasDestroy_v2")
        return out


def checksum(values):
    """Sum and a digest of the exact float bits, stable across runs."""
    raw = struct.pack("<%df" % len(values), *values)
    h = 1469598103934665603
    for byte in raw:
        h ^= byte
        h = (h * 1099511628211) & 0xFFFFFFFFFFFFFFFF
    return "sum=%.6f fnv=%016x" % (sum(values), h)
