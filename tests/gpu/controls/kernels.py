#!/usr/bin/env python3
"""kernels.py - the one load_inline extension that every control candidate shares.

  python3 tests/gpu/controls/kernels.py --build   build it (or find it built), print the .so path

Candidates call load(), which returns an object with these methods (fp32,
contiguous CUDA tensors; each launches on the caller's current torch stream
unless said otherwise):

  add(a, b)                      -> a + b through kaudit_ctrl_add_kernel
  add_on_stream(a, b, out, sleep_cycles=0, join=True, repeats=1)
                                 -> out; kaudit_ctrl_add_kernel (repeats times) on
                                    a side stream of the extension's own (created
                                    once, non-blocking), after a one-thread spin
                                    kernel kaudit_ctrl_spin_kernel(sleep_cycles)
                                    when sleep_cycles > 0.
                                    join=True, the correct pattern: fork (an event
                                    recorded on the current stream, the side
                                    stream waits on it), the work, join (an event
                                    recorded on the side stream, the current
                                    stream waits on it: cudaStreamWaitEvent).
                                    join=False, the hidden side stream: no event
                                    and no wait at all.
  matmul_tiled(a, b)             -> a @ b, 16x16 shared-memory tiles,
                                    kernel kaudit_ctrl_tiled_gemm_kernel
  matmul_vendor_named(a, b)      -> the same code, under a cuBLAS kernel's name:
                                    sm80_xmma_gemm_f32f32_f32f32_f32_nn_n_tilesize32x32x8_stage3_warpsize1x2x1_ffma_aligna4_alignc4_execute_kernel__5x_cublas
  sgemm_cublas(a, b)             -> a @ b by cublasSgemm called from the extension's
                                    own code (below PyTorch's dispatcher), on
                                    PyTorch's cuBLAS handle
                                    (torch.cuda.current_blas_handle(), which is
                                    at::cuda::getCurrentCUDABlasHandle())

The extension is built the light way that tests/gpu/torch_ops.py uses on the
H200: load_inline with no_implicit_headers=True (where torch has it) and
is_python_module=False, no torch header in its sources, extern "C" launchers
called through ctypes.  Its kernels still reach the GPU the way a candidate's
extension does: <<<>>> launches from a JIT-built shared object through the
process's libcudart.  It links PyTorch's own libcublas.so.13.

Environment: TORCH_EXTENSIONS_DIR (where it is built; one directory shared by
every run of tests/gpu/controls.sh), TORCH_CUDA_ARCH_LIST (set from the GPU,
else 9.0, when unset).
"""

import ctypes
import glob
import inspect
import os
import sys
import tempfile
import threading
import time

import torch

EXT_NAME = "kaudit_ctrl_kernels"
TILE = 16

CUDA_SOURCE = r"""
#include <cuda_runtime.h>
#include <cublas_v2.h>

#define KAUDIT_EXPORT extern "C" __attribute__((visibility("default")))
#define TILE 16

extern "C" __global__ void kaudit_ctrl_add_kernel(const float *a, const float *b, float *out,
                                                  long long n)
{
    long long stride = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        out[i] = a[i] + b[i];
}

/* One thread busy-waits: holds back whatever is queued behind it on its stream. */
extern "C" __global__ void kaudit_ctrl_spin_kernel(long long cycles)
{
    long long start = clock64();
    while (clock64() - start < cycles)
        ;
}

/* C[M,N] = A[M,K] @ B[K,N], row-major, one output element per thread. */
static __device__ __forceinline__ void kaudit_ctrl_tiled_gemm(const float *A, const float *B,
                                                              float *C, int M, int N, int K,
                                                              float (*As)[TILE],
                                                              float (*Bs)[TILE])
{
    int tx = threadIdx.x, ty = threadIdx.y;
    int row = blockIdx.y * TILE + ty;
    int col = blockIdx.x * TILE + tx;
    float acc = 0.0f;
    for (int t = 0; t < K; t += TILE) {
        As[ty][tx] = (row < M && t + tx < K) ? A[(long long)row * K + t + tx] : 0.0f;
        Bs[ty][tx] = (t + ty < K && col < N) ? B[(long long)(t + ty) * N + col] : 0.0f;
        __syncthreads();
#pragma unroll
        for (int k = 0; k < TILE; ++k)
            acc += As[ty][k] * Bs[k][tx];
        __syncthreads();
    }
    if (row < M && col < N)
        C[(long long)row * N + col] = acc;
}

extern "C" __global__ void kaudit_ctrl_tiled_gemm_kernel(const float *A, const float *B,
                                                         float *C, int M, int N, int K)
{
    __shared__ float As[TILE][TILE];
    __shared__ float Bs[TILE][TILE];
    kaudit_ctrl_tiled_gemm(A, B, C, M, N, K, As, Bs);
}

/* The same kernel under the name of a real cuBLAS kernel. */
extern "C" __global__ void sm80_xmma_gemm_f32f32_f32f32_f32_nn_n_tilesize32x32x8_stage3_warpsize1x2x1_ffma_aligna4_alignc4_execute_kernel__5x_cublas(
    const float *A, const float *B, float *C, int M, int N, int K)
{
    __shared__ float As[TILE][TILE];
    __shared__ float Bs[TILE][TILE];
    kaudit_ctrl_tiled_gemm(A, B, C, M, N, K, As, Bs);
}

static unsigned kaudit_ctrl_add_blocks(long long n)
{
    long long blocks = (n + 255) / 256;
    if (blocks < 1)
        blocks = 1;
    if (blocks > 1048576)               /* the grid-stride loop covers the rest */
        blocks = 1048576;
    return (unsigned)blocks;
}

KAUDIT_EXPORT int kaudit_ctrl_add(const float *a, const float *b, float *out, long long n,
                                  void *stream)
{
    kaudit_ctrl_add_kernel<<<kaudit_ctrl_add_blocks(n), 256, 0, (cudaStream_t)stream>>>(a, b, out, n);
    return (int)cudaGetLastError();
}

/* The side stream and its two events, made once (C++ static: thread-safe). */
struct kaudit_ctrl_side {
    cudaStream_t stream;
    cudaEvent_t fork;
    cudaEvent_t join;
    int err;
};

static kaudit_ctrl_side kaudit_ctrl_make_side(void)
{
    kaudit_ctrl_side s;
    s.stream = 0;
    s.fork = 0;
    s.join = 0;
    /* Non-blocking: no implicit synchronisation with the legacy default stream,
       which is the stream PyTorch's timing events are recorded on. */
    s.err = (int)cudaStreamCreateWithFlags(&s.stream, cudaStreamNonBlocking);
    if (!s.err)
        s.err = (int)cudaEventCreateWithFlags(&s.fork, cudaEventDisableTiming);
    if (!s.err)
        s.err = (int)cudaEventCreateWithFlags(&s.join, cudaEventDisableTiming);
    return s;
}

static kaudit_ctrl_side &kaudit_ctrl_get_side(void)
{
    static kaudit_ctrl_side side = kaudit_ctrl_make_side();
    return side;
}

KAUDIT_EXPORT int kaudit_ctrl_add_on_stream(const float *a, const float *b, float *out,
                                            long long n, long long sleep_cycles, int join,
                                            int repeats, void *current)
{
    kaudit_ctrl_side &s = kaudit_ctrl_get_side();
    if (s.err)
        return s.err;
    cudaStream_t cur = (cudaStream_t)current;
    int err;
    /* The correct pattern forks (the side stream starts after what the current
       stream has queued) and joins; the hidden side stream does neither, as
       `with torch.cuda.stream(side):` without wait_stream would. */
    if (join) {
        if ((err = (int)cudaEventRecord(s.fork, cur)))
            return err;
        if ((err = (int)cudaStreamWaitEvent(s.stream, s.fork, 0)))
            return err;
    }
    if (sleep_cycles > 0)
        kaudit_ctrl_spin_kernel<<<1, 1, 0, s.stream>>>(sleep_cycles);
    if (repeats < 1)
        repeats = 1;
    for (int r = 0; r < repeats; ++r)
        kaudit_ctrl_add_kernel<<<kaudit_ctrl_add_blocks(n), 256, 0, s.stream>>>(a, b, out, n);
    if ((err = (int)cudaGetLastError()))
        return err;
    if (join) {
        if ((err = (int)cudaEventRecord(s.join, s.stream)))
            return err;
        if ((err = (int)cudaStreamWaitEvent(cur, s.join, 0)))
            return err;
    }
    return 0;
}

KAUDIT_EXPORT int kaudit_ctrl_matmul(const float *A, const float *B, float *C, int M, int N,
                                     int K, int vendor_named, void *stream)
{
    dim3 block(TILE, TILE);
    dim3 grid((N + TILE - 1) / TILE, (M + TILE - 1) / TILE);
    cudaStream_t s = (cudaStream_t)stream;
    if (vendor_named)
        sm80_xmma_gemm_f32f32_f32f32_f32_nn_n_tilesize32x32x8_stage3_warpsize1x2x1_ffma_aligna4_alignc4_execute_kernel__5x_cublas<<<grid, block, 0, s>>>(A, B, C, M, N, K);
    else
        kaudit_ctrl_tiled_gemm_kernel<<<grid, block, 0, s>>>(A, B, C, M, N, K);
    return (int)cudaGetLastError();
}

/*
 * Row-major C[M,N] = A[M,K] @ B[K,N] with column-major cuBLAS: C^T = B^T A^T,
 * where row-major B is column-major B^T (N x K, ld N), and likewise A.
 * Returns 0, or 1000 + the cuBLAS status.
 */
KAUDIT_EXPORT int kaudit_ctrl_sgemm_cublas(void *handle, void *stream, const float *A,
                                           const float *B, float *C, int M, int N, int K)
{
    static cublasHandle_t own = 0;      /* only when the caller has no handle */
    cublasHandle_t h = (cublasHandle_t)handle;
    cublasStatus_t st;
    if (!h) {
        if (!own && (st = cublasCreate(&own)) != CUBLAS_STATUS_SUCCESS)
            return 1000 + (int)st;
        h = own;
    }
    cudaStream_t cur = 0;
    st = cublasGetStream(h, &cur);
    if (st != CUBLAS_STATUS_SUCCESS || cur != (cudaStream_t)stream) {
        st = cublasSetStream(h, (cudaStream_t)stream);
        if (st != CUBLAS_STATUS_SUCCESS)
            return 1000 + (int)st;
    }
    const float alpha = 1.0f, beta = 0.0f;
    st = cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, N, M, K, &alpha, B, N, A, K, &beta, C, N);
    return st == CUBLAS_STATUS_SUCCESS ? 0 : 1000 + (int)st;
}
"""

# The C++ side needs no torch header either: one marker function.
CPP_SOURCE = r"""
extern "C" __attribute__((visibility("default"))) int kaudit_ctrl_abi(void) { return 1; }
"""

_lock = threading.Lock()
_loaded = None


def ensure_arch_list():
    if not os.environ.get("TORCH_CUDA_ARCH_LIST"):
        try:
            major, minor = torch.cuda.get_device_capability()
            os.environ["TORCH_CUDA_ARCH_LIST"] = f"{major}.{minor}"
        except Exception:
            os.environ["TORCH_CUDA_ARCH_LIST"] = "9.0"


def cublas_lib_dir():
    """The folder of the libcublas.so.13 PyTorch itself loads (nvidia/cu13/lib)."""
    bases = []
    try:
        import nvidia  # namespace package of the nvidia-* wheels
        bases += list(getattr(nvidia, "__path__", []))
    except ImportError:
        pass
    bases.append(os.path.join(os.path.dirname(torch.__file__), "..", "nvidia"))
    patterns = []
    for base in bases:
        patterns += [os.path.join(base, "cu13", "lib", "libcublas.so.13"),
                     os.path.join(base, "*", "lib", "libcublas.so.13")]
    patterns += [os.path.join(os.path.dirname(torch.__file__), "lib", "libcublas.so.13"),
                 os.path.join(os.environ.get("CUDA_HOME", "/usr/local/cuda"), "lib64",
                              "libcublas.so.13")]
    for pat in patterns:
        hits = sorted(glob.glob(pat))
        if hits:
            return os.path.dirname(os.path.realpath(hits[0]))
    raise RuntimeError("libcublas.so.13 not found beside torch (nvidia/cu13/lib) "
                       "nor in $CUDA_HOME/lib64")


def build(verbose=False):
    """Build the extension (ninja does nothing when it is up to date); return the .so path."""
    from torch.utils.cpp_extension import load_inline

    ensure_arch_list()
    root = os.environ.get("TORCH_EXTENSIONS_DIR") or os.path.join(
        tempfile.gettempdir(), "kaudit-torch-extensions")
    build_dir = os.path.join(root, EXT_NAME)
    os.makedirs(build_dir, exist_ok=True)
    libdir = cublas_lib_dir()
    kwargs = dict(name=EXT_NAME, cpp_sources=[CPP_SOURCE], cuda_sources=[CUDA_SOURCE],
                  extra_cuda_cflags=["-O2"],
                  extra_ldflags=[f"-L{libdir}", "-l:libcublas.so.13", f"-Wl,-rpath,{libdir}"],
                  build_directory=build_dir, verbose=verbose, is_python_module=False)
    if "no_implicit_headers" in inspect.signature(load_inline).parameters:
        kwargs["no_implicit_headers"] = True
    load_inline(**kwargs)
    path = os.path.join(build_dir, EXT_NAME + ".so")
    if not os.path.exists(path):
        raise RuntimeError(f"load_inline returned but {path} does not exist")
    return path


def _check(t, what):
    if not isinstance(t, torch.Tensor) or not t.is_cuda or t.dtype != torch.float32:
        raise TypeError(f"{what}: expected a float32 CUDA tensor")
    return t.contiguous()


def _stream():
    return torch.cuda.current_stream().cuda_stream


class Kernels:
    """The extension's entry points, with the tensors' pointers handed over by ctypes."""

    def __init__(self, path):
        self.path = path
        self.lib = lib = ctypes.CDLL(path)
        vp, ll, ci = ctypes.c_void_p, ctypes.c_longlong, ctypes.c_int
        lib.kaudit_ctrl_add.argtypes = [vp, vp, vp, ll, vp]
        lib.kaudit_ctrl_add_on_stream.argtypes = [vp, vp, vp, ll, ll, ci, ci, vp]
        lib.kaudit_ctrl_matmul.argtypes = [vp, vp, vp, ci, ci, ci, ci, vp]
        lib.kaudit_ctrl_sgemm_cublas.argtypes = [vp, vp, vp, vp, vp, ci, ci, ci]
        for fn in (lib.kaudit_ctrl_add, lib.kaudit_ctrl_add_on_stream, lib.kaudit_ctrl_matmul,
                   lib.kaudit_ctrl_sgemm_cublas):
            fn.restype = ci

    @staticmethod
    def _ok(err, what):
        if err != 0:
            kind = f"cuBLAS status {err - 1000}" if err >= 1000 else f"cudaError {err}"
            raise RuntimeError(f"{what} failed: {kind}")

    def add(self, a, b):
        a, b = _check(a, "add a"), _check(b, "add b")
        if a.shape != b.shape:
            raise ValueError("add: shapes differ")
        out = torch.empty_like(a)
        self._ok(self.lib.kaudit_ctrl_add(a.data_ptr(), b.data_ptr(), out.data_ptr(),
                                          a.numel(), _stream()), "kaudit_ctrl_add")
        return out

    def add_on_stream(self, a, b, out, sleep_cycles=0, join=True, repeats=1):
        a, b = _check(a, "add_on_stream a"), _check(b, "add_on_stream b")
        if not (out.is_cuda and out.dtype == torch.float32 and out.is_contiguous()
                and out.shape == a.shape == b.shape):
            raise ValueError("add_on_stream: out must be a contiguous float32 CUDA tensor "
                             "of the inputs' shape")
        self._ok(self.lib.kaudit_ctrl_add_on_stream(
            a.data_ptr(), b.data_ptr(), out.data_ptr(), a.numel(), int(sleep_cycles),
            1 if join else 0, int(repeats), _stream()), "kaudit_ctrl_add_on_stream")
        return out

    def _mm_out(self, a, b, what):
        a, b = _check(a, what + " a"), _check(b, what + " b")
        if a.dim() != 2 or b.dim() != 2 or a.shape[1] != b.shape[0]:
            raise ValueError(f"{what}: expected [M,K] @ [K,N]")
        return a, b, torch.empty((a.shape[0], b.shape[1]), device=a.device, dtype=torch.float32)

    def _matmul(self, a, b, vendor_named, what):
        a, b, c = self._mm_out(a, b, what)
        m, k = a.shape
        n = b.shape[1]
        self._ok(self.lib.kaudit_ctrl_matmul(a.data_ptr(), b.data_ptr(), c.data_ptr(), m, n, k,
                                             vendor_named, _stream()), what)
        return c

    def matmul_tiled(self, a, b):
        return self._matmul(a, b, 0, "matmul_tiled")

    def matmul_vendor_named(self, a, b):
        return self._matmul(a, b, 1, "matmul_vendor_named")

    def sgemm_cublas(self, a, b):
        a, b, c = self._mm_out(a, b, "sgemm_cublas")
        m, k = a.shape
        n = b.shape[1]
        handle = torch.cuda.current_blas_handle()   # at::cuda::getCurrentCUDABlasHandle()
        self._ok(self.lib.kaudit_ctrl_sgemm_cublas(handle, _stream(), a.data_ptr(),
                                                   b.data_ptr(), c.data_ptr(), m, n, k),
                 "kaudit_ctrl_sgemm_cublas")
        return c


def load():
    """Build (or find built) and load the extension once per process."""
    global _loaded
    with _lock:
        if _loaded is None:
            _loaded = Kernels(build())
        return _loaded


def main():
    if "--build" not in sys.argv[1:]:
        print(__doc__)
        return 2
    t0 = time.monotonic()
    path = build(verbose=True)
    print(f"kernels: built {path} in {time.monotonic() - t0:.1f}s "
          f"(TORCH_CUDA_ARCH_LIST={os.environ.get('TORCH_CUDA_ARCH_LIST')})", flush=True)
    # Load it too: a missing symbol (libcublas) shows here, not in the first control.
    Kernels(path)
    print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
