/*
 * libext.c - libext.so, a shared object that uses cuBLAS the ordinary way
 * (DT_NEEDED libcublas.so.13 and libcudart.so.13).  prog_dlopen loads it with
 * dlopen(RTLD_NOW | RTLD_LOCAL), the way Python loads PyTorch's extension
 * modules: cuBLAS then sits outside the global scope and
 * dlsym(RTLD_NEXT, "cublasSgemm_v2") from a preloaded library finds nothing.
 */
#include <cublas_v2.h>

#include "prog_common.h"

/* Called by prog_dlopen: one SGEMM m=33 n=17 k=9 and its checksum. */
__attribute__((visibility("default"))) int ext_run(void)
{
    const int m = 33, n = 17, k = 9;
    float *ha = malloc(sizeof(float) * m * k), *hb = malloc(sizeof(float) * k * n),
          *hc = malloc(sizeof(float) * m * n);
    prog_fill(ha, (size_t)(m * k), 31);
    prog_fill(hb, (size_t)(k * n), 32);
    float *a, *b, *c;
    CHECK_CUDA(cudaMalloc((void **)&a, sizeof(float) * m * k));
    CHECK_CUDA(cudaMalloc((void **)&b, sizeof(float) * k * n));
    CHECK_CUDA(cudaMalloc((void **)&c, sizeof(float) * m * n));
    CHECK_CUDA(cudaMemcpy(a, ha, sizeof(float) * m * k, cudaMemcpyHostToDevice));
    CHECK_CUDA(cudaMemcpy(b, hb, sizeof(float) * k * n, cudaMemcpyHostToDevice));
    cublasHandle_t h;
    CHECK_STATUS(cublasCreate(&h));
    float alpha = 1.0f, beta = 0.0f;
    CHECK_STATUS(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &alpha, a, m, b, k, &beta, c, m));
    CHECK_CUDA(cudaMemcpy(hc, c, sizeof(float) * m * n, cudaMemcpyDeviceToHost));
    prog_print("ext_sgemm", hc, (size_t)(m * n));
    CHECK_STATUS(cublasDestroy(h));
    cudaFree(a);
    cudaFree(b);
    cudaFree(c);
    free(ha);
    free(hb);
    free(hc);
    return 0;
}
