/*
 * prog_recording.c - a program for the tests of how the preload records
 * (test_run_recording.c): many launches, and the benchmark control.
 *
 *   prog_recording launches N         N kernel launches on one stream
 *   prog_recording bench-control K    K launches, kaudit_bench_control("pause"),
 *                                     K launches, "resume", K launches
 *   prog_recording bench-split K      K launches, "callbacks", K launches,
 *                                     "wrappers", K launches, "resume", K launches
 *
 * stdout: a checksum line (identical with and without kaudit).  The
 * control's answers go to stderr as "control SETTING: RC" (RC is "absent"
 * when no preload defines the control), since they differ under kaudit.
 */
#define _GNU_SOURCE
#include <dlfcn.h>

#include "prog_common.h"

static void launch(float *d, int n, int count, cudaStream_t stream)
{
    for (int i = 0; i < count; i++)
        prog_launch_scale(d, n, i % 2 ? 0.5f : 2.0f, stream);
}

static void control(const char *setting)
{
    int (*fn)(const char *) = (int (*)(const char *))dlsym(RTLD_DEFAULT, "kaudit_bench_control");
    if (fn)
        fprintf(stderr, "control %s: %d\n", setting, fn(setting));
    else
        fprintf(stderr, "control %s: absent\n", setting);
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: %s launches N | bench-control K | bench-split K\n", argv[0]);
        return 2;
    }
    prog_register_kernels();
    int count = atoi(argv[2]);
    const int n = 64;
    float h[64], *d;
    prog_fill(h, (size_t)n, 7);
    cudaStream_t stream;
    CHECK_CUDA(cudaStreamCreate(&stream));
    CHECK_CUDA(cudaMalloc((void **)&d, sizeof h));
    CHECK_CUDA(cudaMemcpyAsync(d, h, sizeof h, cudaMemcpyHostToDevice, stream));
    if (!strcmp(argv[1], "launches")) {
        launch(d, n, count, stream);
    } else if (!strcmp(argv[1], "bench-control")) {
        launch(d, n, count, stream);
        CHECK_CUDA(cudaStreamSynchronize(stream));
        control("pause");
        launch(d, n, count, stream);
        CHECK_CUDA(cudaStreamSynchronize(stream));
        control("resume");
        launch(d, n, count, stream);
    } else if (!strcmp(argv[1], "bench-split")) {
        const char *settings[] = { "callbacks", "wrappers", "resume" };
        launch(d, n, count, stream);
        for (size_t i = 0; i < sizeof settings / sizeof settings[0]; i++) {
            CHECK_CUDA(cudaStreamSynchronize(stream));
            control(settings[i]);
            launch(d, n, count, stream);
        }
    } else {
        fprintf(stderr, "unknown mode %s\n", argv[1]);
        return 2;
    }
    CHECK_CUDA(cudaMemcpyAsync(h, d, sizeof h, cudaMemcpyDeviceToHost, stream));
    CHECK_CUDA(cudaStreamSynchronize(stream));
    prog_print("result", h, (size_t)n);
    cudaFree(d);
    cudaStreamDestroy(stream);
    return 0;
}
