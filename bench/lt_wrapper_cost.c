/*
 * lt_wrapper_cost.c - what kaudit's cublasLtMatmul wrapper costs per call,
 * host-only (no GPU: cuBLASLt's descriptors live on the host, and without a
 * device the real cublasLtMatmul refuses the NULL handle at once, after the
 * wrapper has done all its work).  Run under `kaudit run` with
 * KAUDIT_BENCH_CONTROL=1; alternates segments with the wrapper recording
 * ("wrappers") and passing through ("pause"), and prints the median ns per
 * call of each and their difference:
 *
 *   gcc -O2 bench/lt_wrapper_cost.c -I/usr/local/cuda/include \
 *       -L/usr/local/cuda/lib64 -Wl,-rpath,/usr/local/cuda/lib64 -lcublasLt -ldl -o /tmp/lt_wrapper_cost
 *   KAUDIT_BENCH_CONTROL=1 build/bin/kaudit run -d /tmp/s -- /tmp/lt_wrapper_cost [calls] [segments]
 *
 * Like PyTorch's addmm, each call can create and destroy its descriptors
 * (argument "fresh") or reuse one set ("reuse", the default).
 */
#define _GNU_SOURCE
#include <cublasLt.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e9 + t.tv_nsec;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

struct descs { cublasLtMatmulDesc_t d; cublasLtMatrixLayout_t a, b, c; };

static void make(struct descs *s)
{
    cublasLtMatmulDescCreate(&s->d, CUBLAS_COMPUTE_32F, CUDA_R_32F);
    cublasOperation_t t = CUBLAS_OP_T;
    cublasLtMatmulDescSetAttribute(s->d, CUBLASLT_MATMUL_DESC_TRANSA, &t, sizeof t);
    cublasLtEpilogue_t e = CUBLASLT_EPILOGUE_BIAS;
    cublasLtMatmulDescSetAttribute(s->d, CUBLASLT_MATMUL_DESC_EPILOGUE, &e, sizeof e);
    cublasLtMatrixLayoutCreate(&s->a, CUDA_R_32F, 512, 512, 512);
    cublasLtMatrixLayoutCreate(&s->b, CUDA_R_32F, 512, 64, 512);
    cublasLtMatrixLayoutCreate(&s->c, CUDA_R_32F, 512, 64, 512);
}

static void destroy(struct descs *s)
{
    cublasLtMatmulDescDestroy(s->d);
    cublasLtMatrixLayoutDestroy(s->a);
    cublasLtMatrixLayoutDestroy(s->b);
    cublasLtMatrixLayoutDestroy(s->c);
}

int main(int argc, char **argv)
{
    int calls = argc > 1 ? atoi(argv[1]) : 2000;
    int segments = argc > 2 ? atoi(argv[2]) : 60;
    int fresh = argc > 3 && strcmp(argv[3], "fresh") == 0;
    int (*control)(const char *) = (int (*)(const char *))dlsym(RTLD_DEFAULT, "kaudit_bench_control");
    /* Without a GPU, CUPTI is not active and the control says -1 for the
     * callbacks it could not switch; the wrappers' switch works all the same. */
    if (!control) {
        fprintf(stderr, "lt_wrapper_cost: run under kaudit run with KAUDIT_BENCH_CONTROL=1\n");
        return 2;
    }
    static float buf[4];
    float alpha = 1, beta = 0;
    struct descs s;
    make(&s);
    const char *settings[2] = { "pause", "wrappers" };
    double *t[2] = { calloc(segments, sizeof(double)), calloc(segments, sizeof(double)) };
    for (int seg = 0; seg < 2 * segments; seg++) {
        int which = (seg + seg / 2) % 2;    /* ABBA */
        control(settings[which]);
        double t0 = now_ns();
        for (int i = 0; i < calls; i++) {
            if (fresh)
                make(&s);
            cublasLtMatmul(NULL, s.d, &alpha, buf, s.a, buf, s.b, &beta, buf, s.c, buf, s.c, NULL, NULL,
                           0, NULL);
            if (fresh)
                destroy(&s);
        }
        t[which][seg / 2] = (now_ns() - t0) / calls;
    }
    control("pause");
    qsort(t[0], segments, sizeof(double), cmp);
    qsort(t[1], segments, sizeof(double), cmp);
    double p = t[0][segments / 2], w = t[1][segments / 2];
    printf("{\"descriptors\": \"%s\", \"pause_ns\": %.1f, \"wrappers_ns\": %.1f, \"wrapper_cost_ns\": %.1f}\n",
           fresh ? "fresh" : "reuse", p, w, w - p);
    return 0;
}
