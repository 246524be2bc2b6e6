/*
 * prog_mixed.c - a harness-like program on the stand-in CUDA stack: its own
 * kernels (one named like a cuBLAS kernel), cublasSgemm_v2, cublasGemmEx,
 * cublasSgemmStridedBatched, cublasSgemv_v2, cublasLtMatmul with a bias
 * epilogue, cudnnConvolutionForward and a cuDNN v9 backend convolution, a
 * region timed with events, a second stream ordered with an event.
 *
 * Its own kernels are launched through cudaLaunchKernel, __cudaLaunchKernel
 * and cudaLaunchKernelExC (the last two are PyTorch's).
 *
 * stdout: one checksum line per result (deterministic).  With
 * --print-elapsed it also prints the elapsed time the events gave, as
 * "elapsed_ms=<%.9g> bits=<hex of the float>".
 *
 * Problem sizes (the tests check the vendor call records against them):
 *   cublasSgemm_v2             m=64 n=32 k=16, NN
 *   cublasGemmEx               m=48 n=8 k=32, TN, bf16 x bf16 -> f32, COMPUTE_32F
 *   cublasSgemmStridedBatched  m=16 n=16 k=8, batch 3
 *   cublasSgemv_v2             m=40 n=24
 *   cublasLtMatmul             m=32 n=16 k=24, TN, bias epilogue
 *   cudnnConvolutionForward    N=2 C=3 H=W=8, K=4 R=S=3, pad 1, stride 1
 *   cudnnBackendExecute        N=1 C=2 H=W=6, K=3 R=S=3, pad 0, stride 1
 *   sm80_xmma_gemm_f32f32_like_custom (the program's own kernel) m=n=k=16
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cublasLt.h>
#include <cublas_v2.h>
#include <cudnn.h>

#include "prog_common.h"
#include "prog_cudnn_backend.h"

/* The program's own GEMM, named like a vendor kernel: C = A * B, column major.
 * args: const float *A, const float *B, float *C, int m, int n, int k */
static void custom_gemm_body(void **args)
{
    const float *a = *(float **)args[0], *b = *(float **)args[1];
    float *c = *(float **)args[2];
    int m = *(int *)args[3], n = *(int *)args[4], k = *(int *)args[5];
    for (int j = 0; j < n; j++)
        for (int i = 0; i < m; i++) {
            float s = 0.0f;
            for (int p = 0; p < k; p++)
                s += a[i + p * m] * b[p + j * k];
            c[i + j * m] = s;
        }
}

static char custom_gemm_stub;

static float *device_copy(const float *h, size_t n)
{
    void *d;
    CHECK_CUDA(cudaMalloc(&d, n * sizeof(float)));
    CHECK_CUDA(cudaMemcpy(d, h, n * sizeof(float), cudaMemcpyHostToDevice));
    return d;
}

static float *device_random(size_t n, unsigned seed)
{
    float *h = malloc(n * sizeof(float));
    prog_fill(h, n, seed);
    float *d = device_copy(h, n);
    free(h);
    return d;
}

static void print_device(const char *what, const void *d, size_t n)
{
    float *h = malloc(n * sizeof(float));
    CHECK_CUDA(cudaMemcpy(h, d, n * sizeof(float), cudaMemcpyDeviceToHost));
    prog_print(what, h, n);
    free(h);
}

static uint16_t to_bf16(float f)
{
    uint32_t x;
    memcpy(&x, &f, 4);
    return (uint16_t)(x >> 16);
}

int main(int argc, char **argv)
{
    int print_elapsed = argc > 1 && !strcmp(argv[1], "--print-elapsed");
    prog_register_kernels();
    standin_register_kernel(&custom_gemm_stub, "sm80_xmma_gemm_f32f32_like_custom", custom_gemm_body);

    /* own kernels on the legacy stream */
    const int n = 1000;
    float *x = device_random((size_t)n, 1), *y = device_random((size_t)n, 2);
    prog_launch_scale(x, n, 0.5f, 0);
    prog_launch_saxpy(x, y, n, 2.0f, 0);
    /* the entry points PyTorch launches through */
    prog_launch_scale_torch_style(y, n, 0.25f, 0);

    cudaStream_t s1, s2;
    cudaEvent_t start, stop, mid;
    CHECK_CUDA(cudaStreamCreate(&s1));
    CHECK_CUDA(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));
    CHECK_CUDA(cudaEventCreate(&start));
    CHECK_CUDA(cudaEventCreate(&stop));
    CHECK_CUDA(cudaEventCreateWithFlags(&mid, cudaEventDisableTiming));

    cublasHandle_t blas;
    CHECK_STATUS(cublasCreate(&blas));
    CHECK_STATUS(cublasSetStream(blas, s1));

    /* the timed region: a cuBLAS GEMM, the program's own GEMM, a GemmEx */
    float *a = device_random(64 * 16, 3), *b = device_random(16 * 32, 4), *c = device_random(64 * 32, 5);
    float alpha = 1.0f, beta = 0.5f, zero = 0.0f;
    CHECK_CUDA(cudaEventRecord(start, s1));
    CHECK_STATUS(cublasSgemm(blas, CUBLAS_OP_N, CUBLAS_OP_N, 64, 32, 16, &alpha, a, 64, b, 16, &beta, c, 64));

    float *ca = device_random(16 * 16, 6), *cb = device_random(16 * 16, 7), *cc = device_random(16 * 16, 8);
    {
        int m = 16, nn = 16, k = 16;
        void *args[] = { &ca, &cb, &cc, &m, &nn, &k };
        dim3 grid = { 1, 1, 1 }, block = { 128, 1, 1 };
        CHECK_CUDA(cudaLaunchKernel(&custom_gemm_stub, grid, block, args, 0, s1));
    }

    uint16_t *hx = malloc(32 * 48 * 2), *hy = malloc(32 * 8 * 2);
    float *tmp = malloc(32 * 48 * sizeof(float));
    prog_fill(tmp, 32 * 48, 9);
    for (int i = 0; i < 32 * 48; i++)
        hx[i] = to_bf16(tmp[i]);
    prog_fill(tmp, 32 * 8, 10);
    for (int i = 0; i < 32 * 8; i++)
        hy[i] = to_bf16(tmp[i]);
    void *ea, *eb;
    float *ec = device_random(48 * 8, 11);
    CHECK_CUDA(cudaMalloc(&ea, 32 * 48 * 2));
    CHECK_CUDA(cudaMalloc(&eb, 32 * 8 * 2));
    CHECK_CUDA(cudaMemcpy(ea, hx, 32 * 48 * 2, cudaMemcpyHostToDevice));
    CHECK_CUDA(cudaMemcpy(eb, hy, 32 * 8 * 2, cudaMemcpyHostToDevice));
    /* A is stored k x m (transposed), B k x n */
    CHECK_STATUS(cublasGemmEx(blas, CUBLAS_OP_T, CUBLAS_OP_N, 48, 8, 32, &alpha, ea, CUDA_R_16BF, 32, eb,
                              CUDA_R_16BF, 32, &zero, ec, CUDA_R_32F, 48, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
    CHECK_CUDA(cudaEventRecord(stop, s1));
    CHECK_CUDA(cudaEventSynchronize(stop));
    float ms = -1.0f;
    CHECK_CUDA(cudaEventElapsedTime(&ms, start, stop));

    /* strided batched and gemv on the same handle */
    float *ba = device_random(16 * 8 * 3, 12), *bb = device_random(8 * 16 * 3, 13), *bc = device_random(16 * 16 * 3, 14);
    CHECK_STATUS(cublasSgemmStridedBatched(blas, CUBLAS_OP_N, CUBLAS_OP_N, 16, 16, 8, &alpha, ba, 16, 16 * 8, bb, 8,
                                           8 * 16, &zero, bc, 16, 16 * 16, 3));
    float *va = device_random(40 * 24, 15), *vx = device_random(24, 16), *vy = device_random(40, 17);
    CHECK_STATUS(cublasSgemv(blas, CUBLAS_OP_N, 40, 24, &alpha, va, 40, vx, 1, &beta, vy, 1));

    /* cuBLASLt: D = A^T B + bias, m=32 n=16 k=24 */
    cublasLtHandle_t lt;
    CHECK_STATUS(cublasLtCreate(&lt));
    cublasLtMatmulDesc_t op;
    CHECK_STATUS(cublasLtMatmulDescCreate(&op, CUBLAS_COMPUTE_32F, CUDA_R_32F));
    cublasOperation_t ta = CUBLAS_OP_T;
    cublasLtEpilogue_t epi = CUBLASLT_EPILOGUE_BIAS;
    float *la = device_random(24 * 32, 18), *lb = device_random(24 * 16, 19), *ld = device_random(32 * 16, 20),
          *lbias = device_random(32, 21);
    CHECK_STATUS(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta));
    CHECK_STATUS(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_EPILOGUE, &epi, sizeof epi));
    CHECK_STATUS(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &lbias, sizeof lbias));
    cublasLtMatrixLayout_t la_l, lb_l, ld_l;
    CHECK_STATUS(cublasLtMatrixLayoutCreate(&la_l, CUDA_R_32F, 24, 32, 24));
    CHECK_STATUS(cublasLtMatrixLayoutCreate(&lb_l, CUDA_R_32F, 24, 16, 24));
    CHECK_STATUS(cublasLtMatrixLayoutCreate(&ld_l, CUDA_R_32F, 32, 16, 32));
    cublasLtMatmulPreference_t pref;
    CHECK_STATUS(cublasLtMatmulPreferenceCreate(&pref));
    cublasLtMatmulHeuristicResult_t heur;
    int found = 0;
    CHECK_STATUS(cublasLtMatmulAlgoGetHeuristic(lt, op, la_l, lb_l, ld_l, ld_l, pref, 1, &heur, &found));
    CHECK_STATUS(cublasLtMatmul(lt, op, &alpha, la, la_l, lb, lb_l, &zero, ld, ld_l, ld, ld_l, &heur.algo, NULL, 0,
                                s1));

    /* cuDNN: the legacy convolution and a backend plan */
    cudnnHandle_t dnn;
    CHECK_STATUS(cudnnCreate(&dnn));
    CHECK_STATUS(cudnnSetStream(dnn, s1));
    cudnnTensorDescriptor_t xd, yd;
    cudnnFilterDescriptor_t wd;
    cudnnConvolutionDescriptor_t cd;
    CHECK_STATUS(cudnnCreateTensorDescriptor(&xd));
    CHECK_STATUS(cudnnCreateTensorDescriptor(&yd));
    CHECK_STATUS(cudnnCreateFilterDescriptor(&wd));
    CHECK_STATUS(cudnnCreateConvolutionDescriptor(&cd));
    CHECK_STATUS(cudnnSetTensor4dDescriptor(xd, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 2, 3, 8, 8));
    CHECK_STATUS(cudnnSetFilter4dDescriptor(wd, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, 4, 3, 3, 3));
    CHECK_STATUS(cudnnSetConvolution2dDescriptor(cd, 1, 1, 1, 1, 1, 1, CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT));
    int on, oc, oh, ow;
    CHECK_STATUS(cudnnGetConvolution2dForwardOutputDim(cd, xd, wd, &on, &oc, &oh, &ow));
    CHECK_STATUS(cudnnSetTensor4dDescriptor(yd, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, on, oc, oh, ow));
    float *cx = device_random(2 * 3 * 8 * 8, 22), *cw = device_random(4 * 3 * 3 * 3, 23),
          *cy = device_random((size_t)(on * oc * oh * ow), 24);
    CHECK_STATUS(cudnnConvolutionForward(dnn, &alpha, xd, cx, wd, cw, cd, CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM,
                                         NULL, 0, &zero, yd, cy));
    float *bx = device_random(2 * 6 * 6, 25), *bw = device_random(3 * 2 * 3 * 3, 26), *by = device_random(3 * 4 * 4, 27);
    backend_conv(dnn, bx, bw, by);

    /* a second stream waits for s1 through an event, then scales the conv output */
    CHECK_CUDA(cudaEventRecord(mid, s1));
    CHECK_CUDA(cudaStreamWaitEvent(s2, mid, 0));
    prog_launch_scale(cy, on * oc * oh * ow, 2.0f, s2);
    CHECK_CUDA(cudaStreamSynchronize(s2));
    CHECK_CUDA(cudaDeviceSynchronize());

    print_device("saxpy", y, (size_t)n);
    print_device("sgemm", c, 64 * 32);
    print_device("custom_gemm", cc, 16 * 16);
    print_device("gemm_ex", ec, 48 * 8);
    print_device("strided_batched", bc, 16 * 16 * 3);
    print_device("sgemv", vy, 40);
    print_device("lt_matmul", ld, 32 * 16);
    print_device("conv_legacy", cy, (size_t)(on * oc * oh * ow));
    print_device("conv_backend", by, 3 * 4 * 4);
    if (print_elapsed) {
        uint32_t bits;
        memcpy(&bits, &ms, sizeof bits);
        printf("elapsed_ms=%.9g bits=%08x\n", (double)ms, bits);
    }

    CHECK_STATUS(cublasLtMatmulPreferenceDestroy(pref));
    CHECK_STATUS(cublasLtMatrixLayoutDestroy(la_l));
    CHECK_STATUS(cublasLtMatrixLayoutDestroy(lb_l));
    CHECK_STATUS(cublasLtMatrixLayoutDestroy(ld_l));
    CHECK_STATUS(cublasLtMatmulDescDestroy(op));
    CHECK_STATUS(cublasLtDestroy(lt));
    CHECK_STATUS(cudnnDestroyTensorDescriptor(xd));
    CHECK_STATUS(cudnnDestroyTensorDescriptor(yd));
    CHECK_STATUS(cudnnDestroyFilterDescriptor(wd));
    CHECK_STATUS(cudnnDestroyConvolutionDescriptor(cd));
    CHECK_STATUS(cudnnDestroy(dnn));
    CHECK_STATUS(cublasDestroy(blas));
    CHECK_CUDA(cudaEventDestroy(start));
    CHECK_CUDA(cudaEventDestroy(stop));
    CHECK_CUDA(cudaEventDestroy(mid));
    CHECK_CUDA(cudaStreamDestroy(s1));
    CHECK_CUDA(cudaStreamDestroy(s2));
    free(hx);
    free(hy);
    free(tmp);
    return 0;
}
