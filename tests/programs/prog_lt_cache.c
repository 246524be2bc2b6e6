/*
 * prog_lt_cache.c - cublasLtMatmul calls whose descriptors repeat, change and
 * come back, for the wrapper's summary cache (preload/vendor_cublaslt.c):
 *
 *   1  m=32 n=16 k=24, A transposed          the first call: the getters
 *   2  the same descriptors again            same bytes: the cache
 *   3  A's columns, D's rows and ld set to 40  m=40: setters changed the bytes
 *   4  D's leading dimension set to 48       m=40, ldc=48
 *   5  all destroyed, created anew as in 1   as in 1 (wherever they now live)
 *   6  A not transposed, stored 32 x 24      m=32 k=24 from A's columns, trans_a N
 *   7-14  three sets alive at once, in turn  6's, 1's, and 1's with ldc 48: a
 *         loop of GEMMs in a fixed order (the cache tries first the slot that
 *         followed the last answer), then out of that order
 *
 * Each call's expected m n k ldc trans_a is printed, one line each, for the
 * test to compare with the recorded summaries.
 */
#include <stdio.h>
#include <cublasLt.h>

#include "prog_common.h"

struct descs {
    cublasLtMatmulDesc_t op;
    cublasLtMatrixLayout_t a, b, d;
};

static void create(struct descs *s)
{
    cublasOperation_t ta = CUBLAS_OP_T;
    CHECK_STATUS(cublasLtMatmulDescCreate(&s->op, CUBLAS_COMPUTE_32F, CUDA_R_32F));
    CHECK_STATUS(cublasLtMatmulDescSetAttribute(s->op, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta));
    CHECK_STATUS(cublasLtMatrixLayoutCreate(&s->a, CUDA_R_32F, 24, 32, 24));
    CHECK_STATUS(cublasLtMatrixLayoutCreate(&s->b, CUDA_R_32F, 24, 16, 24));
    CHECK_STATUS(cublasLtMatrixLayoutCreate(&s->d, CUDA_R_32F, 32, 16, 32));
}

static void destroy(struct descs *s)
{
    CHECK_STATUS(cublasLtMatmulDescDestroy(s->op));
    CHECK_STATUS(cublasLtMatrixLayoutDestroy(s->a));
    CHECK_STATUS(cublasLtMatrixLayoutDestroy(s->b));
    CHECK_STATUS(cublasLtMatrixLayoutDestroy(s->d));
}

int main(void)
{
    cublasLtHandle_t lt;
    CHECK_STATUS(cublasLtCreate(&lt));
    float *a, *b, *d;
    CHECK_CUDA(cudaMalloc((void **)&a, 48 * 48 * sizeof(float)));
    CHECK_CUDA(cudaMalloc((void **)&b, 48 * 48 * sizeof(float)));
    CHECK_CUDA(cudaMalloc((void **)&d, 48 * 48 * sizeof(float)));
    CHECK_CUDA(cudaMemset(a, 0, 48 * 48 * sizeof(float)));
    CHECK_CUDA(cudaMemset(b, 0, 48 * 48 * sizeof(float)));
    float alpha = 1.0f, zero = 0.0f;
    struct descs s;
#define CALL_WITH(x, m, n, k, ldc, ta)                                                                         \
    do {                                                                                                       \
        CHECK_STATUS(cublasLtMatmul(lt, (x).op, &alpha, a, (x).a, b, (x).b, &zero, d, (x).d, d, (x).d, NULL,  \
                                    NULL, 0, NULL));                                                           \
        printf("lt %d %d %d %d %d\n", m, n, k, ldc, ta);                                                       \
    } while (0)
#define CALL(m, n, k, ldc, ta) CALL_WITH(s, m, n, k, ldc, ta)
    create(&s);
    CALL(32, 16, 24, 32, 1);
    CALL(32, 16, 24, 32, 1);
    uint64_t forty = 40;
    int64_t ld40 = 40, ld48 = 48, ld32 = 32;
    CHECK_STATUS(cublasLtMatrixLayoutSetAttribute(s.a, CUBLASLT_MATRIX_LAYOUT_COLS, &forty, sizeof forty));
    CHECK_STATUS(cublasLtMatrixLayoutSetAttribute(s.d, CUBLASLT_MATRIX_LAYOUT_ROWS, &forty, sizeof forty));
    CHECK_STATUS(cublasLtMatrixLayoutSetAttribute(s.d, CUBLASLT_MATRIX_LAYOUT_LD, &ld40, sizeof ld40));
    CALL(40, 16, 24, 40, 1);
    CHECK_STATUS(cublasLtMatrixLayoutSetAttribute(s.d, CUBLASLT_MATRIX_LAYOUT_LD, &ld48, sizeof ld48));
    CALL(40, 16, 24, 48, 1);
    destroy(&s);
    create(&s);
    CALL(32, 16, 24, 32, 1);
    cublasOperation_t tn = CUBLAS_OP_N;
    uint64_t rows32 = 32, cols24 = 24;
    CHECK_STATUS(cublasLtMatmulDescSetAttribute(s.op, CUBLASLT_MATMUL_DESC_TRANSA, &tn, sizeof tn));
    CHECK_STATUS(cublasLtMatrixLayoutSetAttribute(s.a, CUBLASLT_MATRIX_LAYOUT_ROWS, &rows32, sizeof rows32));
    CHECK_STATUS(cublasLtMatrixLayoutSetAttribute(s.a, CUBLASLT_MATRIX_LAYOUT_COLS, &cols24, sizeof cols24));
    CHECK_STATUS(cublasLtMatrixLayoutSetAttribute(s.a, CUBLASLT_MATRIX_LAYOUT_LD, &ld32, sizeof ld32));
    CALL(32, 16, 24, 32, 0);
    struct descs t, u;
    create(&t);
    create(&u);
    CHECK_STATUS(cublasLtMatrixLayoutSetAttribute(u.d, CUBLASLT_MATRIX_LAYOUT_LD, &ld48, sizeof ld48));
    for (int turn = 0; turn < 2; turn++) {
        CALL_WITH(s, 32, 16, 24, 32, 0);
        CALL_WITH(t, 32, 16, 24, 32, 1);
        CALL_WITH(u, 32, 16, 24, 48, 1);
    }
    CALL_WITH(t, 32, 16, 24, 32, 1);
    CALL_WITH(s, 32, 16, 24, 32, 0);
    destroy(&u);
    destroy(&t);
    destroy(&s);
    CHECK_STATUS(cublasLtDestroy(lt));
    return 0;
}
