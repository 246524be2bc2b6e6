/*
 * vendor_common.h - what the stand-in cuBLAS, cuBLASLt and cuDNN share.
 *
 * Linked (hidden) into each vendor library, next to its static copy of the
 * stand-in runtime.  Two ways to launch, like the real libraries:
 *   - through the static runtime (cudaLaunchKernel on a registered kernel):
 *     RUNTIME and DRIVER API records, the module loaded at first launch;
 *   - straight through the driver (cuModuleLoadData of a PTX image made for
 *     the kernel name, then cuLaunchKernelEx): DRIVER records only, the way
 *     cuBLASLt's run-time generated nvjet kernels are launched.
 */
#ifndef STANDIN_VENDOR_COMMON_H
#define STANDIN_VENDOR_COMMON_H

#include <stddef.h>
#include <stdint.h>

#include <cuda_runtime_api.h>

#include "standin_internal.h"

/* One GEMM (or a batch): D = alpha * op(A) op(B) + beta * C  [+ bias] [relu]. */
struct vc_gemm {
    int trans_a, trans_b;       /* cublasOperation_t: 0 N, 1 T, 2 C */
    int64_t m, n, k, batch;
    const void *a, *b, *c;
    void *d;
    const void *const *a_array; /* pointer-array batched, else NULL */
    const void *const *b_array;
    void *const *c_array;
    int type_a, type_b, type_c, type_d; /* cudaDataType */
    int64_t lda, ldb, ldc, ldd;
    int64_t stride_a, stride_b, stride_c, stride_d;
    double alpha, beta;
    const void *bias;           /* length m, type_d */
    int relu;
};

/* Kernel body: args[0] points at a struct vc_gemm. */
void vc_gemm_body(void **args);

/* y = alpha * op(A) x + beta * y, float. */
struct vc_gemv {
    int trans;
    int64_t m, n, lda, incx, incy;
    const float *a, *x;
    float *y;
    float alpha, beta;
};
void vc_gemv_body(void **args);

/* Scalars and element conversions. */
double vc_load(const void *p, int cuda_type, int64_t index);
void vc_store(void *p, int cuda_type, int64_t index, double v);
int vc_type_supported(int cuda_type);
size_t vc_type_size(int cuda_type);

/* Launch through the static runtime; the kernel is registered on first use. */
cudaError_t vc_launch_runtime(const char *name, standin_body_fn body, dim3 grid, dim3 block,
                              cudaStream_t stream, void **args);
/* Launch straight through the driver; the module is loaded on first use. */
cudaError_t vc_launch_driver(const char *name, standin_body_fn body, dim3 grid, dim3 block,
                             cudaStream_t stream, void **args);

/* Vendor call bracket for the ground-truth log. */
void vc_enter(const char *library, const char *api);
void vc_exit(void);

static inline unsigned vc_blocks(int64_t n, int64_t tile)
{
    int64_t b = (n + tile - 1) / tile;
    return b < 1 ? 1u : (unsigned)b;
}

#endif
