/*
 * bench/cuda_start_probe.c - how soon after exec a process can do GPU work
 * (docs/threat-model.md, "Why no PID namespace").
 *
 * kaudit run's census sees the processes of a run every 50 ms; a process
 * shorter than that may go unseen.  This probe measures the shortest life of
 * a process that does work on the GPU: from its exec (the wall-clock time
 * its caller passes as argv[1], in ns) to cuInit, to a current primary
 * context, to a memset on the device finished, and to a cuBLAS SGEMM
 * finished.  Only the driver and cuBLAS, found with dlopen, so it builds
 * with gcc and no CUDA headers:
 *
 *   gcc -O2 -o probe bench/cuda_start_probe.c -ldl
 *   ./probe "$(date +%s%N)" [libcublas.so.13]
 *
 * Prints one line: the milliseconds since exec of each milestone.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <time.h>

typedef int CUresult;
typedef int CUdevice;
typedef void *CUcontext;
typedef unsigned long long CUdeviceptr;

static double ms_since(long long start_ns)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return ((long long)ts.tv_sec * 1000000000ll + ts.tv_nsec - start_ns) / 1e6;
}

#define NEED(sym, lib, name)                                                                   \
    do {                                                                                       \
        *(void **)&sym = dlsym(lib, name);                                                     \
        if (!sym) {                                                                            \
            fprintf(stderr, "cuda_start_probe: %s not found\n", name);                         \
            return 2;                                                                          \
        }                                                                                      \
    } while (0)

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: cuda_start_probe EXEC_TIME_NS [LIBCUBLAS]\n");
        return 2;
    }
    long long exec_ns = atoll(argv[1]);
    double t_main = ms_since(exec_ns);
    void *cuda = dlopen("libcuda.so.1", RTLD_NOW);
    if (!cuda) {
        fprintf(stderr, "cuda_start_probe: %s\n", dlerror());
        return 2;
    }
    CUresult (*cuInit)(unsigned), (*cuDeviceGet)(CUdevice *, int), (*cuCtxSetCurrent)(CUcontext);
    CUresult (*cuDevicePrimaryCtxRetain)(CUcontext *, CUdevice), (*cuMemAlloc)(CUdeviceptr *, size_t);
    CUresult (*cuMemsetD32)(CUdeviceptr, unsigned, size_t), (*cuCtxSynchronize)(void);
    NEED(cuInit, cuda, "cuInit");
    NEED(cuDeviceGet, cuda, "cuDeviceGet");
    NEED(cuDevicePrimaryCtxRetain, cuda, "cuDevicePrimaryCtxRetain");
    NEED(cuCtxSetCurrent, cuda, "cuCtxSetCurrent");
    NEED(cuMemAlloc, cuda, "cuMemAlloc_v2");
    NEED(cuMemsetD32, cuda, "cuMemsetD32_v2");
    NEED(cuCtxSynchronize, cuda, "cuCtxSynchronize");

    CUdevice dev;
    CUcontext ctx;
    CUdeviceptr buf;
    if (cuInit(0) != 0)
        return 3;
    double t_init = ms_since(exec_ns);
    if (cuDeviceGet(&dev, 0) != 0 || cuDevicePrimaryCtxRetain(&ctx, dev) != 0 || cuCtxSetCurrent(ctx) != 0)
        return 3;
    double t_ctx = ms_since(exec_ns);
    const int n = 256;
    if (cuMemAlloc(&buf, 3 * (size_t)n * n * sizeof(float)) != 0 || cuMemsetD32(buf, 0, 3 * (size_t)n * n) != 0 ||
        cuCtxSynchronize() != 0)
        return 3;
    double t_memset = ms_since(exec_ns);

    double t_gemm = -1;
    void *cublas = dlopen(argc > 2 ? argv[2] : "libcublas.so.13", RTLD_NOW);
    if (cublas) {
        int (*create)(void **), (*sgemm)(void *, int, int, int, int, int, const float *, const float *, int,
                                         const float *, int, const float *, float *, int);
        NEED(create, cublas, "cublasCreate_v2");
        NEED(sgemm, cublas, "cublasSgemm_v2");
        void *handle;
        float one = 1, zero = 0;
        float *a = (float *)(uintptr_t)buf, *b = a + n * n, *c = b + n * n;
        if (create(&handle) == 0 && sgemm(handle, 0, 0, n, n, n, &one, a, n, b, n, &zero, c, n) == 0 &&
            cuCtxSynchronize() == 0)
            t_gemm = ms_since(exec_ns);
    }
    printf("main %.1f cuInit %.1f context %.1f memset %.1f sgemm %.1f (ms after exec)\n", t_main, t_init, t_ctx,
           t_memset, t_gemm);
    return 0;
}
