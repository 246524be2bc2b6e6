/*
 * prog_common.h - small helpers shared by the stand-in test programs.
 *
 * The programs print only deterministic things to stdout (checksums of
 * results, statuses), so a run under `kaudit run` can be compared byte for
 * byte with a plain run.  A failing CUDA call prints to stderr and exits 2.
 */
#ifndef PROG_COMMON_H
#define PROG_COMMON_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "standin_cudart.h"

#define CHECK_CUDA(call)                                                                          \
    do {                                                                                          \
        cudaError_t e_ = (call);                                                                  \
        if (e_ != cudaSuccess) {                                                                  \
            fprintf(stderr, "%s:%d: %s failed: %s (%d)\n", __FILE__, __LINE__, #call,             \
                    cudaGetErrorString(e_), (int)e_);                                             \
            exit(2);                                                                              \
        }                                                                                         \
    } while (0)

#define CHECK_STATUS(call)                                                                        \
    do {                                                                                          \
        int s_ = (int)(call);                                                                     \
        if (s_ != 0) {                                                                            \
            fprintf(stderr, "%s:%d: %s failed: status %d\n", __FILE__, __LINE__, #call, s_);     \
            exit(2);                                                                              \
        }                                                                                         \
    } while (0)

/* FNV-1a over bytes: identical output means bitwise identical results. */
static inline uint64_t prog_fnv(const void *data, size_t n)
{
    const unsigned char *p = data;
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++) {
        h ^= p[i];
        h *= 1099511628211ull;
    }
    return h;
}

static inline double prog_sum(const float *v, size_t n)
{
    double s = 0.0;
    for (size_t i = 0; i < n; i++)
        s += v[i];
    return s;
}

static inline void prog_print(const char *what, const float *v, size_t n)
{
    printf("%s: sum=%.6f fnv=%016llx\n", what, prog_sum(v, n),
           (unsigned long long)prog_fnv(v, n * sizeof(float)));
}

/* Deterministic inputs. */
static inline void prog_fill(float *v, size_t n, unsigned seed)
{
    uint32_t x = seed * 2654435761u + 12345u;
    for (size_t i = 0; i < n; i++) {
        x = x * 1664525u + 1013904223u;
        v[i] = (float)((int)(x >> 20) % 17 - 8) / 8.0f;
    }
}

/* ---- a few kernels with host bodies ------------------------------------------ */

/* y[i] = a * x[i] + y[i];  args: float *x, float *y, int n, float a */
static void prog_saxpy_body(void **args)
{
    const float *x = *(float **)args[0];
    float *y = *(float **)args[1];
    int n = *(int *)args[2];
    float a = *(float *)args[3];
    for (int i = 0; i < n; i++)
        y[i] = a * x[i] + y[i];
}

/* v[i] = v[i] * s + i;  args: float *v, int n, float s */
static void prog_scale_body(void **args)
{
    float *v = *(float **)args[0];
    int n = *(int *)args[1];
    float s = *(float *)args[2];
    for (int i = 0; i < n; i++)
        v[i] = v[i] * s + (float)i;
}

/* Host stubs stand for the kernels' host functions, as nvcc makes them. */
static char prog_saxpy_stub, prog_scale_stub;

static inline void prog_register_kernels(void)
{
    standin_register_kernel(&prog_saxpy_stub, "_Z12saxpy_kernelPKfPfif", prog_saxpy_body);
    standin_register_kernel(&prog_scale_stub, "_Z12scale_kernelPfif", prog_scale_body);
}

static inline void prog_launch_scale(float *d_v, int n, float s, cudaStream_t stream)
{
    void *args[] = { &d_v, &n, &s };
    dim3 grid = { (unsigned)((n + 127) / 128), 1, 1 }, block = { 128, 1, 1 };
    CHECK_CUDA(cudaLaunchKernel(&prog_scale_stub, grid, block, args, 0, stream));
}

/* PyTorch's launch entry point in CUDA 13's libcudart (not in the headers). */
extern cudaError_t __cudaLaunchKernel(const void *func, dim3 gridDim, dim3 blockDim, void **args, size_t sharedMem,
                                      cudaStream_t stream);

static inline void prog_launch_scale_torch_style(float *d_v, int n, float s, cudaStream_t stream)
{
    void *args[] = { &d_v, &n, &s };
    dim3 grid = { (unsigned)((n + 127) / 128), 1, 1 }, block = { 128, 1, 1 };
    CHECK_CUDA(__cudaLaunchKernel(&prog_scale_stub, grid, block, args, 0, stream));
    cudaLaunchConfig_t config;
    memset(&config, 0, sizeof config);
    config.gridDim = grid;
    config.blockDim = block;
    config.stream = stream;
    CHECK_CUDA(cudaLaunchKernelExC(&config, &prog_scale_stub, args));
}

static inline void prog_launch_saxpy(const float *d_x, float *d_y, int n, float a, cudaStream_t stream)
{
    void *args[] = { &d_x, &d_y, &n, &a };
    dim3 grid = { (unsigned)((n + 255) / 256), 1, 1 }, block = { 256, 1, 1 };
    CHECK_CUDA(cudaLaunchKernel(&prog_saxpy_stub, grid, block, args, 0, stream));
}

#endif
