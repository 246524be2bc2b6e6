/*
 * prog_probe.c - the causal probe's vendor-boundary channel on the stand-in
 * CUDA stack (preload/vendor_probe.c): a program that, like `kaudit audit`'s
 * runner, switches the channel on through the preload's exports
 * (kaudit_probe_vendor_set, kaudit_probe_vendor) and then makes four
 * library calls, each computing real results in host memory:
 *   0  cublasSgemm_v2               m=24 n=16 k=8, ldc=30
 *   1  cublasLtMatmul               m=24 n=16 k=8, D column-major, ld=30
 *   2  cudnnConvolutionForward      N=2 C=3 H=W=8, K=4 R=S=3, pad 1, y NHWC
 *   3  cudnnBackendExecute          N=1 C=2 H=W=6, K=3 R=S=3 (prog_cudnn_backend.h)
 * The rows between 24 and 30 of each GEMM column must be left as they were.
 *
 * Usage: prog_probe MODE SEED [CALL [FAMILIES [EXCEPT]]]
 *   MODE 0 off, 1 count, 2 perturb; CALL: replace only that call (-1: any);
 *   FAMILIES: bit set, 2 GEMMs, 4 convolutions (0: any); EXCEPT 1: replace
 *   every call but those (kaudit_probe_vendor_set).
 * stdout: the channel's counts in all and per family, the calls as it
 * describes them, and per call whether its result is exact, whether its
 * padding is untouched, its mean and standard deviation against the exact
 * ones, and a checksum.  Without the preload (no kaudit run) the channel is
 * absent: "no-channel".
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <math.h>

#include <cublasLt.h>
#include <cublas_v2.h>
#include <cudnn.h>

#include "prog_common.h"
#include "prog_cudnn_backend.h"

#define M 24
#define N 16
#define K 8
#define LDC 30

struct result {
    const char *name;
    float *got, *exact;
    size_t n;
    int ld, rows;               /* GEMMs: the padding rows are ld - rows of each column; else 0 */
};

static float *to_device(const float *h, size_t n)
{
    void *d;
    CHECK_CUDA(cudaMalloc(&d, n * sizeof(float)));
    CHECK_CUDA(cudaMemcpy(d, h, n * sizeof(float), cudaMemcpyHostToDevice));
    return d;
}

static float *from_device(const float *d, size_t n)
{
    float *h = malloc(n * sizeof(float));
    CHECK_CUDA(cudaMemcpy(h, d, n * sizeof(float), cudaMemcpyDeviceToHost));
    return h;
}

static float *filled(size_t n, unsigned seed)
{
    float *h = malloc(n * sizeof(float));
    prog_fill(h, n, seed);
    return h;
}

/* C (column-major, ldc) = A (m x k) B (k x n); the padding rows hold -7. */
static float *gemm_exact(const float *a, const float *b)
{
    float *c = malloc(LDC * N * sizeof(float));
    for (int i = 0; i < LDC * N; i++)
        c[i] = -7.0f;
    for (int j = 0; j < N; j++)
        for (int i = 0; i < M; i++) {
            float s = 0;
            for (int p = 0; p < K; p++)
                s += a[i + p * M] * b[p + j * K];
            c[i + j * LDC] = s;
        }
    return c;
}

/* Cross-correlation of x (n, c, h, w: strides xs) with w (k, c, r, s packed) into y (strides ys). */
static void conv_exact(const float *x, const float *w, float *y, int n, int c, int h, int wd, int k, int r, int pad,
                       const int xs[4], const int ys[4])
{
    int oh = h + 2 * pad - r + 1, ow = wd + 2 * pad - r + 1;
    for (int in = 0; in < n; in++)
        for (int ik = 0; ik < k; ik++)
            for (int p = 0; p < oh; p++)
                for (int q = 0; q < ow; q++) {
                    float s = 0;
                    for (int ic = 0; ic < c; ic++)
                        for (int u = 0; u < r; u++)
                            for (int v = 0; v < r; v++) {
                                int ih = p - pad + u, iw = q - pad + v;
                                if (ih < 0 || ih >= h || iw < 0 || iw >= wd)
                                    continue;
                                s += x[in * xs[0] + ic * xs[1] + ih * xs[2] + iw * xs[3]] *
                                     w[((ik * c + ic) * r + u) * r + v];
                            }
                    y[in * ys[0] + ik * ys[1] + p * ys[2] + q * ys[3]] = s;
                }
}

static void report(const struct result *r)
{
    int exact = 1, padding = 1;
    double sum = 0, sq = 0, esum = 0, esq = 0, count = 0;
    for (size_t i = 0; i < r->n; i++) {
        float v = r->got[i], e = r->exact[i];
        if (r->ld && (int)(i % (size_t)r->ld) >= r->rows) {
            padding &= v == e;
            continue;
        }
        exact &= fabsf(v - e) <= 1e-5f * (1.0f + fabsf(e));
        sum += v;
        sq += (double)v * v;
        esum += e;
        esq += (double)e * e;
        count++;
    }
    double mean = sum / count, sd = sqrt((sq - sum * mean) / (count - 1));
    double emean = esum / count, esd = sqrt((esq - esum * emean) / (count - 1));
    printf("%s exact=%d padding=%d mean %.4f (exact %.4f) sd %.4f (exact %.4f) checksum %016llx\n", r->name, exact,
           padding, mean, emean, sd, esd, (unsigned long long)prog_fnv(r->got, r->n * sizeof(float)));
}

int main(int argc, char **argv)
{
    int mode = argc > 1 ? atoi(argv[1]) : 0;
    uint64_t seed = argc > 2 ? strtoull(argv[2], NULL, 10) : 0;
    int64_t only = argc > 3 ? strtoll(argv[3], NULL, 10) : -1;
    unsigned families = argc > 4 ? (unsigned)strtoul(argv[4], NULL, 10) : 0;
    int except = argc > 5 ? atoi(argv[5]) : 0;
    void (*set)(int, uint64_t) = (void (*)(int, uint64_t))dlsym(RTLD_DEFAULT, "kaudit_probe_vendor");
    void (*set_selected)(int, uint64_t, int64_t, unsigned, int) =
        (void (*)(int, uint64_t, int64_t, unsigned, int))dlsym(RTLD_DEFAULT, "kaudit_probe_vendor_set");
    void (*counts)(int, uint64_t *, uint64_t *, uint64_t *) = (void (*)(int, uint64_t *, uint64_t *, uint64_t *))dlsym(
        RTLD_DEFAULT, "kaudit_probe_vendor_family_counts");
    int (*call_info)(uint64_t, int64_t *) = (int (*)(uint64_t, int64_t *))dlsym(RTLD_DEFAULT,
                                                                                 "kaudit_probe_vendor_call_info");
    struct result res[4];

    /* the inputs and what each call must give */
    float *a = filled(M * K, 1), *b = filled(K * N, 2), *pad = malloc(LDC * N * sizeof(float));
    for (int i = 0; i < LDC * N; i++)
        pad[i] = -7.0f;
    float *gexact = gemm_exact(a, b);
    float *cx = filled(2 * 3 * 8 * 8, 3), *cw = filled(4 * 3 * 3 * 3, 4), *cyexact = calloc(2 * 4 * 8 * 8, 4);
    const int nchw[4] = { 3 * 8 * 8, 8 * 8, 8, 1 }, nhwc_y[4] = { 8 * 8 * 4, 1, 8 * 4, 4 };
    conv_exact(cx, cw, cyexact, 2, 3, 8, 8, 4, 3, 1, nchw, nhwc_y);
    float *bx = filled(2 * 6 * 6, 5), *bw = filled(3 * 2 * 3 * 3, 6), *byexact = calloc(3 * 4 * 4, 4);
    const int bxs[4] = { 2 * 6 * 6, 6 * 6, 6, 1 }, bys[4] = { 3 * 4 * 4, 4 * 4, 4, 1 };
    conv_exact(bx, bw, byexact, 1, 2, 6, 6, 3, 3, 0, bxs, bys);

    float *da = to_device(a, M * K), *db = to_device(b, K * N), *dc = to_device(pad, LDC * N),
          *dd = to_device(pad, LDC * N);
    float *dcx = to_device(cx, 2 * 3 * 8 * 8), *dcw = to_device(cw, 4 * 3 * 3 * 3),
          *dcy = to_device(cyexact, 2 * 4 * 8 * 8);
    float *dbx = to_device(bx, 2 * 6 * 6), *dbw = to_device(bw, 3 * 2 * 3 * 3), *dby = to_device(byexact, 3 * 4 * 4);
    CHECK_CUDA(cudaMemset(dcy, 0, 2 * 4 * 8 * 8 * sizeof(float)));
    CHECK_CUDA(cudaMemset(dby, 0, 3 * 4 * 4 * sizeof(float)));

    cublasHandle_t h;
    CHECK_STATUS(cublasCreate(&h));
    cublasLtHandle_t lt;
    CHECK_STATUS(cublasLtCreate(&lt));
    cublasLtMatmulDesc_t op;
    CHECK_STATUS(cublasLtMatmulDescCreate(&op, CUBLAS_COMPUTE_32F, CUDA_R_32F));
    cublasLtMatrixLayout_t la, lb, ld;
    CHECK_STATUS(cublasLtMatrixLayoutCreate(&la, CUDA_R_32F, M, K, M));
    CHECK_STATUS(cublasLtMatrixLayoutCreate(&lb, CUDA_R_32F, K, N, K));
    CHECK_STATUS(cublasLtMatrixLayoutCreate(&ld, CUDA_R_32F, M, N, LDC));
    cublasLtMatmulPreference_t pref;
    CHECK_STATUS(cublasLtMatmulPreferenceCreate(&pref));
    cublasLtMatmulHeuristicResult_t heur;
    int found = 0;
    CHECK_STATUS(cublasLtMatmulAlgoGetHeuristic(lt, op, la, lb, ld, ld, pref, 1, &heur, &found));
    cudnnHandle_t dnn;
    CHECK_STATUS(cudnnCreate(&dnn));
    cudnnTensorDescriptor_t xd, yd;
    cudnnFilterDescriptor_t wd;
    cudnnConvolutionDescriptor_t cd;
    CHECK_STATUS(cudnnCreateTensorDescriptor(&xd));
    CHECK_STATUS(cudnnCreateTensorDescriptor(&yd));
    CHECK_STATUS(cudnnCreateFilterDescriptor(&wd));
    CHECK_STATUS(cudnnCreateConvolutionDescriptor(&cd));
    CHECK_STATUS(cudnnSetTensor4dDescriptor(xd, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 2, 3, 8, 8));
    CHECK_STATUS(cudnnSetTensor4dDescriptor(yd, CUDNN_TENSOR_NHWC, CUDNN_DATA_FLOAT, 2, 4, 8, 8));
    CHECK_STATUS(cudnnSetFilter4dDescriptor(wd, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, 4, 3, 3, 3));
    CHECK_STATUS(cudnnSetConvolution2dDescriptor(cd, 1, 1, 1, 1, 1, 1, CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT));

    if (set_selected)
        set_selected(mode, seed, only, families, except);
    const float one = 1.0f, zero = 0.0f;
    CHECK_STATUS(cublasSgemm_v2(h, CUBLAS_OP_N, CUBLAS_OP_N, M, N, K, &one, da, M, db, K, &zero, dc, LDC));
    CHECK_STATUS(cublasLtMatmul(lt, op, &one, da, la, db, lb, &zero, dd, ld, dd, ld, &heur.algo, NULL, 0, NULL));
    CHECK_STATUS(cudnnConvolutionForward(dnn, &one, xd, dcx, wd, dcw, cd, CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM,
                                         NULL, 0, &zero, yd, dcy));
    backend_conv(dnn, dbx, dbw, dby);
    CHECK_CUDA(cudaDeviceSynchronize());

    if (counts) {
        static const char *const names[3] = { "channel", "gemm", "conv" };
        for (int f = 0; f < 3; f++) {
            uint64_t calls = 0, perturbed = 0, failed = 0;
            counts(f, &calls, &perturbed, &failed);
            printf("%s calls=%llu perturbed=%llu failed=%llu\n", names[f], (unsigned long long)calls,
                   (unsigned long long)perturbed, (unsigned long long)failed);
        }
    } else {
        printf("no-channel\n");
    }
    for (uint64_t i = 0; call_info && i < 5; i++) {
        int64_t info[5];
        if (call_info(i, info))
            printf("call %llu: family=%lld library=%lld m=%lld n=%lld k=%lld\n", (unsigned long long)i,
                   (long long)info[0], (long long)info[1], (long long)info[2], (long long)info[3],
                   (long long)info[4]);
    }
    if (set)
        set(0, 0);
    res[0] = (struct result){ "sgemm", from_device(dc, LDC * N), gexact, LDC * N, LDC, M };
    res[1] = (struct result){ "lt", from_device(dd, LDC * N), gexact, LDC * N, LDC, M };
    res[2] = (struct result){ "conv", from_device(dcy, 2 * 4 * 8 * 8), cyexact, 2 * 4 * 8 * 8, 0, 0 };
    res[3] = (struct result){ "backend", from_device(dby, 3 * 4 * 4), byexact, 3 * 4 * 4, 0, 0 };
    for (int i = 0; i < 4; i++)
        report(&res[i]);
    cublasDestroy(h);
    return 0;
}
