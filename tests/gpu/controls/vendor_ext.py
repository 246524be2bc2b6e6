#!/usr/bin/env python3
"""vendor_ext.py - the controls' extensions that hand work to a library the way a
candidate's own C++ or CUDA code does, below or beside PyTorch's dispatcher
(issue 16: the causal probe's vendor-boundary channel).

  python3 tests/gpu/controls/vendor_ext.py --build NAME   build one (or find it built)

  vendor  (no torch header; ctypes, like kernels.py):
    sgemm_cublaslt(a, b)   -> a @ b by cublasLtMatmul on the extension's own
                              cuBLASLt handle, on the current torch stream
    conv_cudnn(x, w, pad)  -> conv2d by the legacy cudnnConvolutionForward on
                              the extension's own cuDNN handle (NCHW, fp32)
  aten    (torch headers): matmul_aten(a, b) -> at::matmul from C++ (through
                              the dispatcher, whichever language calls it)

ATen's own cuBLAS wrapper, at::cuda::blas::gemm<float>, is not a way in for a
candidate on torch 2.11: an extension calling it built, and failed to load on
the H200 with "undefined symbol: _ZN2at4cuda4blas4gemmIffLPf0EEEv..." (the
specialization is not exported from libtorch_cuda).

The cuDNN prototypes are declared here (the few legacy entry points used),
so that no cuDNN header is needed; the library is the libcudnn.so.9 PyTorch
loads (nvidia/cudnn/lib), cuBLASLt the libcublasLt.so.13 beside its cuBLAS.
Environment: TORCH_EXTENSIONS_DIR, TORCH_CUDA_ARCH_LIST (as kernels.py).
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

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kernels  # noqa: E402  (the shared control extension: arch list, library folders)

VENDOR_SOURCE = r"""
#include <cuda_runtime.h>
#include <cublasLt.h>

#define KAUDIT_EXPORT extern "C" __attribute__((visibility("default")))

/* cuDNN's legacy convolution API (cudnn_graph.h, cudnn_cnn.h of cuDNN 9): opaque
   handles, enums passed as int. */
extern "C" {
typedef struct cudnnContext *cudnnHandle_t;
typedef struct cudnnTensorStruct *cudnnTensorDescriptor_t;
typedef struct cudnnFilterStruct *cudnnFilterDescriptor_t;
typedef struct cudnnConvolutionStruct *cudnnConvolutionDescriptor_t;
int cudnnCreate(cudnnHandle_t *handle);
int cudnnSetStream(cudnnHandle_t handle, cudaStream_t stream);
int cudnnCreateTensorDescriptor(cudnnTensorDescriptor_t *d);
int cudnnDestroyTensorDescriptor(cudnnTensorDescriptor_t d);
int cudnnSetTensor4dDescriptor(cudnnTensorDescriptor_t d, int format, int type, int n, int c, int h, int w);
int cudnnCreateFilterDescriptor(cudnnFilterDescriptor_t *d);
int cudnnDestroyFilterDescriptor(cudnnFilterDescriptor_t d);
int cudnnSetFilter4dDescriptor(cudnnFilterDescriptor_t d, int type, int format, int k, int c, int h, int w);
int cudnnCreateConvolutionDescriptor(cudnnConvolutionDescriptor_t *d);
int cudnnDestroyConvolutionDescriptor(cudnnConvolutionDescriptor_t d);
int cudnnSetConvolution2dDescriptor(cudnnConvolutionDescriptor_t d, int pad_h, int pad_w, int u, int v,
                                    int dilation_h, int dilation_w, int mode, int compute_type);
int cudnnGetConvolutionForwardWorkspaceSize(cudnnHandle_t h, cudnnTensorDescriptor_t x, cudnnFilterDescriptor_t w,
                                            cudnnConvolutionDescriptor_t conv, cudnnTensorDescriptor_t y, int algo,
                                            size_t *bytes);
int cudnnConvolutionForward(cudnnHandle_t h, const void *alpha, cudnnTensorDescriptor_t xd, const void *x,
                            cudnnFilterDescriptor_t wd, const void *w, cudnnConvolutionDescriptor_t conv, int algo,
                            void *workspace, size_t workspace_bytes, const void *beta, cudnnTensorDescriptor_t yd,
                            void *y);
}
enum { NCHW = 0, FLOAT = 0, CROSS_CORRELATION = 1, IMPLICIT_GEMM = 0 };

/* Row-major C[M,N] = A[M,K] @ B[K,N] as column-major C^T = B^T A^T.  0, or 1000 + status. */
KAUDIT_EXPORT int kaudit_ctrl_sgemm_cublaslt(void *stream, const float *A, const float *B, float *C, int M, int N,
                                             int K)
{
    static cublasLtHandle_t lt = 0;
    static void *workspace = 0;
    const size_t workspace_bytes = 32u << 20;
    cublasStatus_t st;
    if (!lt && (st = cublasLtCreate(&lt)) != CUBLAS_STATUS_SUCCESS)
        return 1000 + (int)st;
    if (!workspace && cudaMalloc(&workspace, workspace_bytes) != cudaSuccess)
        return 999;
    cublasLtMatmulDesc_t op = 0;
    cublasLtMatrixLayout_t la = 0, lb = 0, lc = 0;
    cublasLtMatmulPreference_t pref = 0;
    cublasLtMatmulHeuristicResult_t heur;
    int found = 0;
    const float alpha = 1.0f, beta = 0.0f;
    st = cublasLtMatmulDescCreate(&op, CUBLAS_COMPUTE_32F, CUDA_R_32F);
    if (st == CUBLAS_STATUS_SUCCESS) st = cublasLtMatrixLayoutCreate(&la, CUDA_R_32F, N, K, N);
    if (st == CUBLAS_STATUS_SUCCESS) st = cublasLtMatrixLayoutCreate(&lb, CUDA_R_32F, K, M, K);
    if (st == CUBLAS_STATUS_SUCCESS) st = cublasLtMatrixLayoutCreate(&lc, CUDA_R_32F, N, M, N);
    if (st == CUBLAS_STATUS_SUCCESS) st = cublasLtMatmulPreferenceCreate(&pref);
    if (st == CUBLAS_STATUS_SUCCESS)
        st = cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &workspace_bytes,
                                                  sizeof workspace_bytes);
    if (st == CUBLAS_STATUS_SUCCESS)
        st = cublasLtMatmulAlgoGetHeuristic(lt, op, la, lb, lc, lc, pref, 1, &heur, &found);
    if (st == CUBLAS_STATUS_SUCCESS && found < 1)
        st = CUBLAS_STATUS_NOT_SUPPORTED;
    if (st == CUBLAS_STATUS_SUCCESS)
        st = cublasLtMatmul(lt, op, &alpha, B, la, A, lb, &beta, C, lc, C, lc, &heur.algo, workspace,
                            workspace_bytes, (cudaStream_t)stream);
    if (pref) cublasLtMatmulPreferenceDestroy(pref);
    if (lc) cublasLtMatrixLayoutDestroy(lc);
    if (lb) cublasLtMatrixLayoutDestroy(lb);
    if (la) cublasLtMatrixLayoutDestroy(la);
    if (op) cublasLtMatmulDescDestroy(op);
    return st == CUBLAS_STATUS_SUCCESS ? 0 : 1000 + (int)st;
}

/* y = conv2d(x [n,c,h,w], w [k,c,r,s], padding pad, stride 1).  0, or 2000 + status. */
KAUDIT_EXPORT int kaudit_ctrl_conv_cudnn(void *stream, const float *x, const float *w, float *y, int n, int c, int h,
                                         int wd, int k, int r, int s, int pad)
{
    static cudnnHandle_t dnn = 0;
    int st;
    if (!dnn && (st = cudnnCreate(&dnn)) != 0)
        return 2000 + st;
    if ((st = cudnnSetStream(dnn, (cudaStream_t)stream)) != 0)
        return 2000 + st;
    cudnnTensorDescriptor_t xd = 0, yd = 0;
    cudnnFilterDescriptor_t fd = 0;
    cudnnConvolutionDescriptor_t cd = 0;
    int oh = h + 2 * pad - r + 1, ow = wd + 2 * pad - s + 1;
    size_t bytes = 0;
    void *workspace = 0;
    const float alpha = 1.0f, beta = 0.0f;
    st = cudnnCreateTensorDescriptor(&xd);
    if (!st) st = cudnnCreateTensorDescriptor(&yd);
    if (!st) st = cudnnCreateFilterDescriptor(&fd);
    if (!st) st = cudnnCreateConvolutionDescriptor(&cd);
    if (!st) st = cudnnSetTensor4dDescriptor(xd, NCHW, FLOAT, n, c, h, wd);
    if (!st) st = cudnnSetTensor4dDescriptor(yd, NCHW, FLOAT, n, k, oh, ow);
    if (!st) st = cudnnSetFilter4dDescriptor(fd, FLOAT, NCHW, k, c, r, s);
    if (!st) st = cudnnSetConvolution2dDescriptor(cd, pad, pad, 1, 1, 1, 1, CROSS_CORRELATION, FLOAT);
    if (!st) st = cudnnGetConvolutionForwardWorkspaceSize(dnn, xd, fd, cd, yd, IMPLICIT_GEMM, &bytes);
    if (!st && bytes && cudaMalloc(&workspace, bytes) != cudaSuccess)
        st = 999;
    if (!st)
        st = cudnnConvolutionForward(dnn, &alpha, xd, x, fd, w, cd, IMPLICIT_GEMM, workspace, bytes, &beta, yd, y);
    if (workspace) {
        cudaStreamSynchronize((cudaStream_t)stream);
        cudaFree(workspace);
    }
    if (cd) cudnnDestroyConvolutionDescriptor(cd);
    if (fd) cudnnDestroyFilterDescriptor(fd);
    if (yd) cudnnDestroyTensorDescriptor(yd);
    if (xd) cudnnDestroyTensorDescriptor(xd);
    return st ? 2000 + st : 0;
}
"""

VENDOR_CPP = r"""
extern "C" __attribute__((visibility("default"))) int kaudit_ctrl_vendor_abi(void) { return 1; }
"""

ATEN_CPP = r"""
#include <torch/extension.h>

// at::matmul from C++: an operator call, through the dispatcher like any other.
torch::Tensor matmul_aten(torch::Tensor a, torch::Tensor b) { return at::matmul(a, b); }

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def("matmul_aten", &matmul_aten); }
"""

NAMES = ("vendor", "aten")
_lock = threading.Lock()
_loaded = {}


def lib_dir(soname):
    """The folder of the `soname` beside PyTorch's own (the nvidia-* wheels)."""
    bases = []
    try:
        import nvidia  # namespace package of the nvidia-* wheels
        bases += list(getattr(nvidia, "__path__", []))
    except ImportError:
        pass
    bases.append(os.path.join(os.path.dirname(torch.__file__), "..", "nvidia"))
    for base in bases:
        hits = sorted(glob.glob(os.path.join(base, "*", "lib", soname)))
        if hits:
            return os.path.dirname(os.path.realpath(hits[0]))
    raise RuntimeError(f"{soname} not found beside torch (nvidia/*/lib)")


def _root():
    return os.environ.get("TORCH_EXTENSIONS_DIR") or os.path.join(tempfile.gettempdir(),
                                                                   "kaudit-torch-extensions")


def build(name, verbose=False):
    """Build one extension (ninja does nothing when it is up to date)."""
    from torch.utils.cpp_extension import load_inline

    kernels.ensure_arch_list()
    ext = "kaudit_ctrl_" + name
    build_dir = os.path.join(_root(), ext)
    os.makedirs(build_dir, exist_ok=True)
    if name == "vendor":
        blas, dnn = kernels.cublas_lib_dir(), lib_dir("libcudnn.so.9")
        kwargs = dict(cpp_sources=[VENDOR_CPP], cuda_sources=[VENDOR_SOURCE], is_python_module=False,
                      extra_ldflags=[f"-L{blas}", "-l:libcublasLt.so.13", f"-Wl,-rpath,{blas}",
                                     f"-L{dnn}", "-l:libcudnn.so.9", f"-Wl,-rpath,{dnn}"])
        if "no_implicit_headers" in inspect.signature(load_inline).parameters:
            kwargs["no_implicit_headers"] = True
    else:
        kwargs = dict(cpp_sources=[ATEN_CPP], with_cuda=True)
    module = load_inline(name=ext, build_directory=build_dir, verbose=verbose, **kwargs)
    return module if name != "vendor" else os.path.join(build_dir, ext + ".so")


class Vendor:
    def __init__(self, path):
        self.lib = lib = ctypes.CDLL(path)
        vp, ci = ctypes.c_void_p, ctypes.c_int
        lib.kaudit_ctrl_sgemm_cublaslt.argtypes = [vp, vp, vp, vp, ci, ci, ci]
        lib.kaudit_ctrl_conv_cudnn.argtypes = [vp, vp, vp, vp] + [ci] * 8
        lib.kaudit_ctrl_sgemm_cublaslt.restype = lib.kaudit_ctrl_conv_cudnn.restype = ci

    @staticmethod
    def _ok(err, what):
        if err:
            raise RuntimeError(f"{what} failed: status {err}")

    def sgemm_cublaslt(self, a, b):
        a, b = kernels._check(a, "sgemm_cublaslt a"), kernels._check(b, "sgemm_cublaslt b")
        m, k = a.shape
        n = b.shape[1]
        c = torch.empty((m, n), device=a.device, dtype=torch.float32)
        self._ok(self.lib.kaudit_ctrl_sgemm_cublaslt(kernels._stream(), a.data_ptr(), b.data_ptr(), c.data_ptr(),
                                                     m, n, k), "kaudit_ctrl_sgemm_cublaslt")
        return c

    def conv_cudnn(self, x, w, pad):
        x, w = kernels._check(x, "conv_cudnn x"), kernels._check(w, "conv_cudnn w")
        n, c, h, wd = x.shape
        k, _, r, s = w.shape
        y = torch.empty((n, k, h + 2 * pad - r + 1, wd + 2 * pad - s + 1), device=x.device, dtype=torch.float32)
        self._ok(self.lib.kaudit_ctrl_conv_cudnn(kernels._stream(), x.data_ptr(), w.data_ptr(), y.data_ptr(), n, c,
                                                 h, wd, k, r, s, pad), "kaudit_ctrl_conv_cudnn")
        return y


def load(name):
    """Build (or find built) and load one extension once per process."""
    with _lock:
        if name not in _loaded:
            built = build(name)
            _loaded[name] = Vendor(built) if name == "vendor" else built
        return _loaded[name]


def main():
    if len(sys.argv) != 3 or sys.argv[1] != "--build" or sys.argv[2] not in NAMES:
        print(__doc__)
        return 2
    t0 = time.monotonic()
    load(sys.argv[2])
    print(f"vendor_ext: {sys.argv[2]} built and loaded in {time.monotonic() - t0:.1f}s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
