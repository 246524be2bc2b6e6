/*
 * libprobe_ext.c - libprobe_ext.so, a candidate's "extension" on the stand-in
 * cuBLAS and cuBLASLt (DT_NEEDED, called the ordinary way, so the preload's
 * wrappers see the calls).  The audit controls probe_vendor_gemm and
 * probe_vendor_mixed (tests/audit/candidates) load it with ctypes under
 * `kaudit audit --device cpu`: the stand-ins compute on host memory, so
 * PyTorch's CPU tensors serve as device buffers, and the causal probe's vendor
 * replays run end to end in CI (runner, preload, kaudit).
 *
 * Row-major C[M,N] = A[M,K] @ B[K,N] as column-major C^T = B^T A^T.
 * Each returns 0 or the library's status.
 */
#include <cublasLt.h>
#include <cublas_v2.h>

#define EXPORT __attribute__((visibility("default")))

EXPORT int probe_ext_sgemm(const float *A, const float *B, float *C, int M, int N, int K)
{
    static cublasHandle_t h;
    const float one = 1.0f, zero = 0.0f;
    int st = 0;
    if (!h && (st = (int)cublasCreate(&h)) != 0)
        return st;
    return (int)cublasSgemm_v2(h, CUBLAS_OP_N, CUBLAS_OP_N, N, M, K, &one, B, N, A, K, &zero, C, N);
}

EXPORT int probe_ext_lt_sgemm(const float *A, const float *B, float *C, int M, int N, int K)
{
    static cublasLtHandle_t lt;
    const float one = 1.0f, zero = 0.0f;
    cublasLtMatmulDesc_t op = NULL;
    cublasLtMatrixLayout_t la = NULL, lb = NULL, lc = NULL;
    cublasLtMatmulPreference_t pref = NULL;
    cublasLtMatmulHeuristicResult_t heur;
    int found = 0;
    cublasStatus_t st = lt ? CUBLAS_STATUS_SUCCESS : cublasLtCreate(&lt);
    if (st == CUBLAS_STATUS_SUCCESS) st = cublasLtMatmulDescCreate(&op, CUBLAS_COMPUTE_32F, CUDA_R_32F);
    if (st == CUBLAS_STATUS_SUCCESS) st = cublasLtMatrixLayoutCreate(&la, CUDA_R_32F, N, K, N);
    if (st == CUBLAS_STATUS_SUCCESS) st = cublasLtMatrixLayoutCreate(&lb, CUDA_R_32F, K, M, K);
    if (st == CUBLAS_STATUS_SUCCESS) st = cublasLtMatrixLayoutCreate(&lc, CUDA_R_32F, N, M, N);
    if (st == CUBLAS_STATUS_SUCCESS) st = cublasLtMatmulPreferenceCreate(&pref);
    if (st == CUBLAS_STATUS_SUCCESS)
        st = cublasLtMatmulAlgoGetHeuristic(lt, op, la, lb, lc, lc, pref, 1, &heur, &found);
    if (st == CUBLAS_STATUS_SUCCESS)
        st = cublasLtMatmul(lt, op, &one, B, la, A, lb, &zero, C, lc, C, lc, &heur.algo, NULL, 0, NULL);
    if (pref) cublasLtMatmulPreferenceDestroy(pref);
    if (lc) cublasLtMatrixLayoutDestroy(lc);
    if (lb) cublasLtMatrixLayoutDestroy(lb);
    if (la) cublasLtMatrixLayoutDestroy(la);
    if (op) cublasLtMatmulDescDestroy(op);
    return (int)st;
}
