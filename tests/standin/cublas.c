/*
 * cublas.c - the stand-in libcublas.so.13.
 *
 * Real results on "device" memory (host memory), with the real prototypes
 * (cublas_api.h), status codes and version node `libcublas.so.13`.  Like the
 * real library it carries its own hidden copy of the runtime, so its kernels
 * never pass through libcudart.so:
 *   - cublasSgemm_v2 / _64, cublasSgemmStridedBatched, cublasSgemmBatched
 *     launch an `sm80_xmma_gemm_*__5x_cublas` kernel (the name follows the
 *     transposes and the tile size) through that runtime;
 *   - cublasSgemv_v2 launches `internal::gemvx::kernel<...>` (mangled);
 *   - cublasGemmEx / _64 reach the cuBLASLt path: a run-time named
 *     `nvjet_sm90_*` kernel loaded as PTX and launched through the driver.
 * The first GEMM on a handle does some setup inside the call (a memset of
 * the workspace), and the first launch of each kernel loads its module, both
 * inside the vendor call, as on the real stack.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cublas_api.h>

#include "standin_cudart.h"
#include "vendor_common.h"

#define HANDLE_MAGIC 0x43424c53u

struct cublasContext {
    uint32_t magic;
    cudaStream_t stream;
    cublasPointerMode_t pointer_mode;
    cublasMath_t math_mode;
    void *workspace;
    size_t workspace_size;
    int warmed_up;
};

static int handle_ok(cublasHandle_t h)
{
    return h && h->magic == HANDLE_MAGIC;
}

static cublasStatus_t from_rt(cudaError_t e)
{
    if (e == cudaSuccess)
        return CUBLAS_STATUS_SUCCESS;
    if (e == cudaErrorInitializationError || e == cudaErrorInsufficientDriver)
        return CUBLAS_STATUS_NOT_INITIALIZED;
    if (e == cudaErrorMemoryAllocation)
        return CUBLAS_STATUS_ALLOC_FAILED;
    return CUBLAS_STATUS_EXECUTION_FAILED;
}

/* ---- handles --------------------------------------------------------------------- */

cublasStatus_t CUBLASWINAPI cublasCreate_v2(cublasHandle_t *handle)
{
    if (!handle)
        return CUBLAS_STATUS_INVALID_VALUE;
    struct cublasContext *h = calloc(1, sizeof *h);
    if (!h)
        return CUBLAS_STATUS_ALLOC_FAILED;
    h->magic = HANDLE_MAGIC;
    h->workspace_size = 4u << 20;
    cudaError_t e = cudaMalloc(&h->workspace, h->workspace_size);
    if (e != cudaSuccess) {
        free(h);
        return from_rt(e);
    }
    *handle = h;
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t CUBLASWINAPI cublasDestroy_v2(cublasHandle_t handle)
{
    if (!handle_ok(handle))
        return CUBLAS_STATUS_NOT_INITIALIZED;
    cudaDeviceSynchronize();
    cudaFree(handle->workspace);
    handle->magic = 0;
    free(handle);
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t CUBLASWINAPI cublasGetVersion_v2(cublasHandle_t handle, int *version)
{
    if (!version)
        return CUBLAS_STATUS_INVALID_VALUE;
    (void)handle;
    *version = CUBLAS_VER_MAJOR * 10000 + CUBLAS_VER_MINOR * 100 + CUBLAS_VER_PATCH;
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t CUBLASWINAPI cublasGetProperty(libraryPropertyType type, int *value)
{
    if (!value)
        return CUBLAS_STATUS_INVALID_VALUE;
    switch (type) {
    case MAJOR_VERSION: *value = CUBLAS_VER_MAJOR; break;
    case MINOR_VERSION: *value = CUBLAS_VER_MINOR; break;
    case PATCH_LEVEL: *value = CUBLAS_VER_PATCH; break;
    default: return CUBLAS_STATUS_INVALID_VALUE;
    }
    return CUBLAS_STATUS_SUCCESS;
}

size_t CUBLASWINAPI cublasGetCudartVersion(void)
{
    return STANDIN_RUNTIME_VERSION;
}

/*
 * Every handle getter checks the same things in the same order as the real
 * library: a bad handle is NOT_INITIALIZED before a NULL out pointer is
 * INVALID_VALUE.  The caller stores the value only on success.
 */
static cublasStatus_t check_getter(cublasHandle_t handle, const void *out)
{
    if (!handle_ok(handle))
        return CUBLAS_STATUS_NOT_INITIALIZED;
    if (!out)
        return CUBLAS_STATUS_INVALID_VALUE;
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t CUBLASWINAPI cublasSetStream_v2(cublasHandle_t handle, cudaStream_t streamId)
{
    if (!handle_ok(handle))
        return CUBLAS_STATUS_NOT_INITIALIZED;
    handle->stream = streamId;
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t CUBLASWINAPI cublasGetStream_v2(cublasHandle_t handle, cudaStream_t *streamId)
{
    cublasStatus_t s = check_getter(handle, streamId);
    if (s == CUBLAS_STATUS_SUCCESS)
        *streamId = handle->stream;
    return s;
}

cublasStatus_t CUBLASWINAPI cublasSetWorkspace_v2(cublasHandle_t handle, void *workspace,
                                                  size_t workspaceSizeInBytes)
{
    if (!handle_ok(handle))
        return CUBLAS_STATUS_NOT_INITIALIZED;
    (void)workspace;
    (void)workspaceSizeInBytes;
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t CUBLASWINAPI cublasSetPointerMode_v2(cublasHandle_t handle, cublasPointerMode_t mode)
{
    if (!handle_ok(handle))
        return CUBLAS_STATUS_NOT_INITIALIZED;
    if (mode != CUBLAS_POINTER_MODE_HOST && mode != CUBLAS_POINTER_MODE_DEVICE)
        return CUBLAS_STATUS_INVALID_VALUE;
    handle->pointer_mode = mode;
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t CUBLASWINAPI cublasGetPointerMode_v2(cublasHandle_t handle, cublasPointerMode_t *mode)
{
    cublasStatus_t s = check_getter(handle, mode);
    if (s == CUBLAS_STATUS_SUCCESS)
        *mode = handle->pointer_mode;
    return s;
}

cublasStatus_t CUBLASWINAPI cublasSetMathMode(cublasHandle_t handle, cublasMath_t mode)
{
    if (!handle_ok(handle))
        return CUBLAS_STATUS_NOT_INITIALIZED;
    handle->math_mode = mode;
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t CUBLASWINAPI cublasGetMathMode(cublasHandle_t handle, cublasMath_t *mode)
{
    cublasStatus_t s = check_getter(handle, mode);
    if (s == CUBLAS_STATUS_SUCCESS)
        *mode = handle->math_mode;
    return s;
}

const char *CUBLASWINAPI cublasGetStatusName(cublasStatus_t status)
{
    switch (status) {
    case CUBLAS_STATUS_SUCCESS: return "CUBLAS_STATUS_SUCCESS";
    case CUBLAS_STATUS_NOT_INITIALIZED: return "CUBLAS_STATUS_NOT_INITIALIZED";
    case CUBLAS_STATUS_ALLOC_FAILED: return "CUBLAS_STATUS_ALLOC_FAILED";
    case CUBLAS_STATUS_INVALID_VALUE: return "CUBLAS_STATUS_INVALID_VALUE";
    case CUBLAS_STATUS_ARCH_MISMATCH: return "CUBLAS_STATUS_ARCH_MISMATCH";
    case CUBLAS_STATUS_MAPPING_ERROR: return "CUBLAS_STATUS_MAPPING_ERROR";
    case CUBLAS_STATUS_EXECUTION_FAILED: return "CUBLAS_STATUS_EXECUTION_FAILED";
    case CUBLAS_STATUS_INTERNAL_ERROR: return "CUBLAS_STATUS_INTERNAL_ERROR";
    case CUBLAS_STATUS_NOT_SUPPORTED: return "CUBLAS_STATUS_NOT_SUPPORTED";
    case CUBLAS_STATUS_LICENSE_ERROR: return "CUBLAS_STATUS_LICENSE_ERROR";
    default: return "<unknown>";
    }
}

const char *CUBLASWINAPI cublasGetStatusString(cublasStatus_t status)
{
    switch (status) {
    case CUBLAS_STATUS_SUCCESS: return "success";
    case CUBLAS_STATUS_NOT_INITIALIZED: return "the library was not initialized";
    case CUBLAS_STATUS_ALLOC_FAILED: return "the resource allocation failed";
    case CUBLAS_STATUS_INVALID_VALUE: return "an invalid numeric value was used as an argument";
    case CUBLAS_STATUS_NOT_SUPPORTED: return "the functionality requested is not supported";
    default: return "an internal operation failed";
    }
}

/* ---- GEMM ----------------------------------------------------------------------------- */

static double scalar(const void *p, int type)
{
    return p ? vc_load(p, type, 0) : 0.0;
}

/* Setup the real library does inside the first call on a handle. */
static void warm_up(cublasHandle_t h)
{
    if (h->warmed_up)
        return;
    h->warmed_up = 1;
    int device;
    cudaGetDevice(&device);
    cudaMemsetAsync(h->workspace, 0, 256, h->stream);
}

static char op_letter(int op, int upper)
{
    return op == CUBLAS_OP_N ? (upper ? 'N' : 'n') : (upper ? 'T' : 't');
}

static void xmma_name(char *out, size_t n, const struct vc_gemm *g)
{
    int small = g->m * g->n <= 32 * 32 * 4;
    snprintf(out, n,
             "sm80_xmma_gemm_f32f32_f32f32_f32_%c%c_n_tilesize%s_stage3_warpsize%s_ffma_aligna4_alignc4_execute_kernel__5x_cublas",
             op_letter(g->trans_a, 0), op_letter(g->trans_b, 0), small ? "32x32x8" : "64x64x8",
             small ? "1x2x1" : "1x4x1");
}

static int valid_op(int op)
{
    return op == CUBLAS_OP_N || op == CUBLAS_OP_T || op == CUBLAS_OP_C;
}

static cublasStatus_t check_gemm(const struct vc_gemm *g)
{
    if (!valid_op(g->trans_a) || !valid_op(g->trans_b))
        return CUBLAS_STATUS_INVALID_VALUE;
    if (g->m < 0 || g->n < 0 || g->k < 0 || g->batch < 0)
        return CUBLAS_STATUS_INVALID_VALUE;
    int64_t rows_a = g->trans_a == CUBLAS_OP_N ? g->m : g->k;
    int64_t rows_b = g->trans_b == CUBLAS_OP_N ? g->k : g->n;
    if (g->lda < (rows_a > 1 ? rows_a : 1) || g->ldb < (rows_b > 1 ? rows_b : 1) ||
        g->ldc < (g->m > 1 ? g->m : 1))
        return CUBLAS_STATUS_INVALID_VALUE;
    return CUBLAS_STATUS_SUCCESS;
}

static cublasStatus_t run_xmma(cublasHandle_t h, struct vc_gemm *g)
{
    cublasStatus_t s = check_gemm(g);
    if (s != CUBLAS_STATUS_SUCCESS)
        return s;
    if (g->m == 0 || g->n == 0 || g->batch == 0)
        return CUBLAS_STATUS_SUCCESS;
    warm_up(h);
    char name[256];
    xmma_name(name, sizeof name, g);
    int64_t tile = g->m * g->n <= 32 * 32 * 4 ? 32 : 64;
    dim3 grid = { vc_blocks(g->m, tile), vc_blocks(g->n, tile), (unsigned)g->batch };
    dim3 block = { 128, 1, 1 };
    void *args[] = { g };
    return from_rt(vc_launch_runtime(name, vc_gemm_body, grid, block, h->stream, args));
}

static void fill_sgemm(struct vc_gemm *g, int ta, int tb, int64_t m, int64_t n, int64_t k, const float *alpha,
                       const float *a, int64_t lda, const float *b, int64_t ldb, const float *beta, float *c,
                       int64_t ldc)
{
    memset(g, 0, sizeof *g);
    g->trans_a = ta;
    g->trans_b = tb;
    g->m = m;
    g->n = n;
    g->k = k;
    g->batch = 1;
    g->a = a;
    g->b = b;
    g->c = c;
    g->d = c;
    g->type_a = g->type_b = g->type_c = g->type_d = CUDA_R_32F;
    g->lda = lda;
    g->ldb = ldb;
    g->ldc = ldc;
    g->ldd = ldc;
    g->alpha = scalar(alpha, CUDA_R_32F);
    g->beta = scalar(beta, CUDA_R_32F);
}

static cublasStatus_t sgemm(const char *api, cublasHandle_t handle, int ta, int tb, int64_t m, int64_t n,
                            int64_t k, const float *alpha, const float *A, int64_t lda, const float *B,
                            int64_t ldb, const float *beta, float *C, int64_t ldc)
{
    if (!handle_ok(handle))
        return CUBLAS_STATUS_NOT_INITIALIZED;
    if (!alpha || !beta)
        return CUBLAS_STATUS_INVALID_VALUE;
    vc_enter("cublas", api);
    struct vc_gemm g;
    fill_sgemm(&g, ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
    cublasStatus_t s = run_xmma(handle, &g);
    vc_exit();
    return s;
}

cublasStatus_t CUBLASWINAPI cublasSgemm_v2(cublasHandle_t handle, cublasOperation_t transa,
                                           cublasOperation_t transb, int m, int n, int k, const float *alpha,
                                           const float *A, int lda, const float *B, int ldb, const float *beta,
                                           float *C, int ldc)
{
    return sgemm("cublasSgemm_v2", handle, transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
}

cublasStatus_t CUBLASWINAPI cublasSgemm_v2_64(cublasHandle_t handle, cublasOperation_t transa,
                                              cublasOperation_t transb, int64_t m, int64_t n, int64_t k,
                                              const float *alpha, const float *A, int64_t lda, const float *B,
                                              int64_t ldb, const float *beta, float *C, int64_t ldc)
{
    return sgemm("cublasSgemm_v2_64", handle, transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
}

cublasStatus_t CUBLASWINAPI cublasSgemmStridedBatched(cublasHandle_t handle, cublasOperation_t transa,
                                                      cublasOperation_t transb, int m, int n, int k,
                                                      const float *alpha, const float *A, int lda,
                                                      long long int strideA, const float *B, int ldb,
                                                      long long int strideB, const float *beta, float *C,
                                                      int ldc, long long int strideC, int batchCount)
{
    if (!handle_ok(handle))
        return CUBLAS_STATUS_NOT_INITIALIZED;
    if (!alpha || !beta)
        return CUBLAS_STATUS_INVALID_VALUE;
    vc_enter("cublas", "cublasSgemmStridedBatched");
    struct vc_gemm g;
    fill_sgemm(&g, transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
    g.batch = batchCount;
    g.stride_a = strideA;
    g.stride_b = strideB;
    g.stride_c = g.stride_d = strideC;
    cublasStatus_t s = run_xmma(handle, &g);
    vc_exit();
    return s;
}

cublasStatus_t CUBLASWINAPI cublasSgemmBatched(cublasHandle_t handle, cublasOperation_t transa,
                                               cublasOperation_t transb, int m, int n, int k, const float *alpha,
                                               const float *const Aarray[], int lda, const float *const Barray[],
                                               int ldb, const float *beta, float *const Carray[], int ldc,
                                               int batchCount)
{
    if (!handle_ok(handle))
        return CUBLAS_STATUS_NOT_INITIALIZED;
    if (!alpha || !beta || (batchCount > 0 && (!Aarray || !Barray || !Carray)))
        return CUBLAS_STATUS_INVALID_VALUE;
    vc_enter("cublas", "cublasSgemmBatched");
    struct vc_gemm g;
    fill_sgemm(&g, transa, transb, m, n, k, alpha, NULL, lda, NULL, ldb, beta, NULL, ldc);
    g.batch = batchCount;
    g.a_array = (const void *const *)Aarray;
    g.b_array = (const void *const *)Barray;
    g.c_array = (void *const *)Carray;
    cublasStatus_t s = run_xmma(handle, &g);
    vc_exit();
    return s;
}

cublasStatus_t CUBLASWINAPI cublasSgemv_v2(cublasHandle_t handle, cublasOperation_t trans, int m, int n,
                                           const float *alpha, const float *A, int lda, const float *x, int incx,
                                           const float *beta, float *y, int incy)
{
    if (!handle_ok(handle))
        return CUBLAS_STATUS_NOT_INITIALIZED;
    if (!valid_op(trans) || m < 0 || n < 0 || lda < (m > 1 ? m : 1) || incx == 0 || incy == 0 || !alpha ||
        !beta)
        return CUBLAS_STATUS_INVALID_VALUE;
    vc_enter("cublas", "cublasSgemv_v2");
    cublasStatus_t s = CUBLAS_STATUS_SUCCESS;
    if (m > 0 && n > 0) {
        warm_up(handle);
        struct vc_gemv g = { trans != CUBLAS_OP_N, m, n, lda, incx, incy, A, x, y, *alpha, *beta };
        void *args[] = { &g };
        dim3 grid = { vc_blocks(trans == CUBLAS_OP_N ? m : n, 128), 1, 1 };
        dim3 block = { 128, 1, 1 };
        s = from_rt(vc_launch_runtime(
            "_ZN8internal5gemvx6kernelIiiffffLb0ELb1ELb1ELb0ELi7ELb0E18cublasGemvParamsExIi30cublasGemvTensorStrided"
            "BatchedIKfES5_S3_IfEfEEENSt9enable_ifIXntT5_EvE4typeET11_",
            vc_gemv_body, grid, block, handle->stream, args));
    }
    vc_exit();
    return s;
}

/* ---- GemmEx: the cuBLASLt path ------------------------------------------------------------ */

static int scale_type_of(cublasComputeType_t ct, int type_c)
{
    switch ((int)ct) {
    case CUBLAS_COMPUTE_16F:
    case CUBLAS_COMPUTE_16F_PEDANTIC:
        return CUDA_R_16F;
    case CUBLAS_COMPUTE_64F:
    case CUBLAS_COMPUTE_64F_PEDANTIC:
        return CUDA_R_64F;
    case CUBLAS_COMPUTE_32F:
    case CUBLAS_COMPUTE_32F_PEDANTIC:
    case CUBLAS_COMPUTE_32F_FAST_16F:
    case CUBLAS_COMPUTE_32F_FAST_16BF:
    case CUBLAS_COMPUTE_32F_FAST_TF32:
        return CUDA_R_32F;
    default:
        /* the pre-11 interface passed a cudaDataType here */
        if ((int)ct == CUDA_R_32F || (int)ct == CUDA_R_16F || (int)ct == CUDA_R_64F)
            return (int)ct;
        return type_c == CUDA_R_64F ? -1 : -1;
    }
}

static cublasStatus_t gemm_ex(const char *api, cublasHandle_t handle, int ta, int tb, int64_t m, int64_t n,
                              int64_t k, const void *alpha, const void *A, int Atype, int64_t lda, const void *B,
                              int Btype, int64_t ldb, const void *beta, void *C, int Ctype, int64_t ldc,
                              cublasComputeType_t computeType)
{
    if (!handle_ok(handle))
        return CUBLAS_STATUS_NOT_INITIALIZED;
    int stype = scale_type_of(computeType, Ctype);
    if (stype < 0 || !vc_type_supported(Atype) || !vc_type_supported(Btype) || !vc_type_supported(Ctype))
        return CUBLAS_STATUS_NOT_SUPPORTED;
    if (!alpha || !beta)
        return CUBLAS_STATUS_INVALID_VALUE;
    vc_enter("cublas", api);
    struct vc_gemm g;
    memset(&g, 0, sizeof g);
    g.trans_a = ta;
    g.trans_b = tb;
    g.m = m;
    g.n = n;
    g.k = k;
    g.batch = 1;
    g.a = A;
    g.b = B;
    g.c = C;
    g.d = C;
    g.type_a = Atype;
    g.type_b = Btype;
    g.type_c = g.type_d = Ctype;
    g.lda = lda;
    g.ldb = ldb;
    g.ldc = g.ldd = ldc;
    g.alpha = scalar(alpha, stype);
    g.beta = scalar(beta, stype);
    cublasStatus_t s = check_gemm(&g);
    if (s == CUBLAS_STATUS_SUCCESS && m > 0 && n > 0) {
        warm_up(handle);
        char name[160];
        const char *prec = Atype == CUDA_R_32F ? "tst" : Atype == CUDA_R_64F ? "dsd" : "hsh";
        snprintf(name, sizeof name, "nvjet_sm90_%s_%s_h_bz_%c%cT", prec,
                 n <= 8 ? "64x8_64x16_1x2" : "64x48_64x15_2x4", op_letter(ta, 1), op_letter(tb, 1));
        dim3 grid = { vc_blocks(m, 64), vc_blocks(n, n <= 8 ? 8 : 48), 1 };
        dim3 block = { 384, 1, 1 };
        void *args[] = { &g };
        s = from_rt(vc_launch_driver(name, vc_gemm_body, grid, block, handle->stream, args));
    }
    vc_exit();
    return s;
}

cublasStatus_t CUBLASWINAPI cublasGemmEx(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb,
                                         int m, int n, int k, const void *alpha, const void *A, cudaDataType Atype,
                                         int lda, const void *B, cudaDataType Btype, int ldb, const void *beta,
                                         void *C, cudaDataType Ctype, int ldc, cublasComputeType_t computeType,
                                         cublasGemmAlgo_t algo)
{
    (void)algo;
    return gemm_ex("cublasGemmEx", handle, transa, transb, m, n, k, alpha, A, Atype, lda, B, Btype, ldb, beta, C,
                   Ctype, ldc, computeType);
}

cublasStatus_t CUBLASWINAPI cublasGemmEx_64(cublasHandle_t handle, cublasOperation_t transa,
                                            cublasOperation_t transb, int64_t m, int64_t n, int64_t k,
                                            const void *alpha, const void *A, cudaDataType Atype, int64_t lda,
                                            const void *B, cudaDataType Btype, int64_t ldb, const void *beta,
                                            void *C, cudaDataType Ctype, int64_t ldc,
                                            cublasComputeType_t computeType, cublasGemmAlgo_t algo)
{
    (void)algo;
    return gemm_ex("cublasGemmEx_64", handle, transa, transb, m, n, k, alpha, A, Atype, lda, B, Btype, ldb, beta,
                   C, Ctype, ldc, computeType);
}
