/*
 * prog_probe.c - the causal probe's vendor-boundary channel on the stand-in
 * CUDA stack (preload/vendor_probe.c): a program that, like `kaudit audit`'s
 * runner, switches the channel on through the preload's exported
 * kaudit_probe_vendor and calls cublasSgemm_v2 (m=24 n=16 k=8, ldc=30: the
 * rows between 24 and 30 of each column must be left as they were).
 *
 * Usage: prog_probe MODE SEED   (MODE 0 off, 1 count, 2 perturb)
 * stdout: the counts, whether the product is exact, whether the padding is
 * untouched, the output's mean and standard deviation, a checksum.
 * Without the preload (no kaudit run) the channel is absent: "no-channel".
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <math.h>

#include <cublas_v2.h>

#include "prog_common.h"

#define M 24
#define N 16
#define K 8
#define LDC 30

int main(int argc, char **argv)
{
    int mode = argc > 1 ? atoi(argv[1]) : 0;
    uint64_t seed = argc > 2 ? strtoull(argv[2], NULL, 10) : 0;
    void (*set)(int, uint64_t) = (void (*)(int, uint64_t))dlsym(RTLD_DEFAULT, "kaudit_probe_vendor");
    void (*counts)(uint64_t *, uint64_t *, uint64_t *) =
        (void (*)(uint64_t *, uint64_t *, uint64_t *))dlsym(RTLD_DEFAULT, "kaudit_probe_vendor_counts");
    float a[M * K], b[K * N], c[LDC * N], exact[LDC * N];
    for (int i = 0; i < M * K; i++)
        a[i] = (float)((i * 7) % 13) / 13.0f - 0.4f;
    for (int i = 0; i < K * N; i++)
        b[i] = (float)((i * 5) % 11) / 11.0f - 0.3f;
    for (int i = 0; i < LDC * N; i++)
        c[i] = exact[i] = -7.0f; /* the padding rows keep this */
    for (int j = 0; j < N; j++)
        for (int i = 0; i < M; i++) {
            float s = 0;
            for (int p = 0; p < K; p++)
                s += a[i + p * M] * b[p + j * K];
            exact[i + j * LDC] = s;
        }
    float *da, *db, *dc;
    CHECK_CUDA(cudaMalloc((void **)&da, sizeof a));
    CHECK_CUDA(cudaMalloc((void **)&db, sizeof b));
    CHECK_CUDA(cudaMalloc((void **)&dc, sizeof c));
    CHECK_CUDA(cudaMemcpy(da, a, sizeof a, cudaMemcpyHostToDevice));
    CHECK_CUDA(cudaMemcpy(db, b, sizeof b, cudaMemcpyHostToDevice));
    CHECK_CUDA(cudaMemcpy(dc, c, sizeof c, cudaMemcpyHostToDevice));
    cublasHandle_t h;
    CHECK_STATUS(cublasCreate(&h));
    if (set)
        set(mode, seed);
    const float one = 1.0f, zero = 0.0f;
    CHECK_STATUS(cublasSgemm_v2(h, CUBLAS_OP_N, CUBLAS_OP_N, M, N, K, &one, da, M, db, K, &zero, dc, LDC));
    CHECK_CUDA(cudaMemcpy(c, dc, sizeof c, cudaMemcpyDeviceToHost));
    uint64_t calls = 0, perturbed = 0, failed = 0;
    if (counts)
        counts(&calls, &perturbed, &failed);
    if (set)
        set(0, 0);
    int exact_product = 1, padding = 1;
    double sum = 0, sq = 0, esum = 0, esq = 0;
    for (int j = 0; j < N; j++)
        for (int i = 0; i < LDC; i++) {
            float v = c[i + j * LDC];
            if (i >= M) {
                padding &= v == -7.0f;
                continue;
            }
            exact_product &= fabsf(v - exact[i + j * LDC]) <= 1e-6f;
            sum += v;
            sq += (double)v * v;
            esum += exact[i + j * LDC];
            esq += (double)exact[i + j * LDC] * exact[i + j * LDC];
        }
    double n = M * N, mean = sum / n, sd = sqrt((sq - sum * mean) / (n - 1));
    double emean = esum / n, esd = sqrt((esq - esum * emean) / (n - 1));
    printf("%s calls=%llu perturbed=%llu failed=%llu exact=%d padding=%d\n", set ? "channel" : "no-channel",
           (unsigned long long)calls, (unsigned long long)perturbed, (unsigned long long)failed, exact_product,
           padding);
    printf("mean %.4f (exact %.4f) sd %.4f (exact %.4f) checksum %016llx\n", mean, emean, sd, esd,
           (unsigned long long)prog_fnv(c, sizeof c));
    cublasDestroy(h);
    return 0;
}
