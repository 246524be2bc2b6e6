/*
 * prog_recording.c - a program for the tests of how the preload records
 * (test_run_recording.c): many launches, and the benchmark control.
 *
 *   prog_recording launches N         N kernel launches on one stream
 *   prog_recording bench-control K    K launches, kaudit_bench_control("pause"),
 *                                     K launches, "resume", K launches
 *   prog_recording bench-split K      K launches, "callbacks", K launches,
 *                                     "wrappers", K launches, "resume", K launches
 *   prog_recording spool-release N    N launches, then, once kaudit run has
 *                                     given the trace's first segment back,
 *                                     which 4 MiB segments of this process's
 *                                     trace memory file still hold bytes:
 *                                     "segments: " and a letter per segment
 *                                     on stderr, D (data) or Z (zeros)
 *
 * stdout: a checksum line (identical with and without kaudit).  The
 * control's answers go to stderr as "control SETTING: RC" (RC is "absent"
 * when no preload defines the control), since they differ under kaudit.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <time.h>
#include <unistd.h>

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

/* The preload's trace memory file (memfd "kaudit-trace"), or -1. */
static int trace_memfd(void)
{
    DIR *d = opendir("/proc/self/fd");
    int found = -1;
    struct dirent *e;
    while (d && found < 0 && (e = readdir(d)) != NULL) {
        char path[300], target[256];
        snprintf(path, sizeof path, "/proc/self/fd/%s", e->d_name);
        ssize_t n = readlink(path, target, sizeof target - 1);
        if (n > 0) {
            target[n] = '\0';
            if (strncmp(target, "/memfd:kaudit-trace", 19) == 0)
                found = atoi(e->d_name);
        }
    }
    if (d)
        closedir(d);
    return found;
}

static int segment_holds_data(int fd, off_t segment)
{
    unsigned char head[64] = { 0 };
    if (pread(fd, head, sizeof head, segment * (4 << 20)) <= 0)
        return 0;
    for (size_t i = 0; i < sizeof head; i++)
        if (head[i])
            return 1;
    return 0;
}

/* Waits (up to 20 s) until the first segment reads as zeros, then says
 * what every segment's first bytes hold. */
static void report_segments(void)
{
    int fd = trace_memfd();
    if (fd < 0) {
        fprintf(stderr, "segments: no trace memory file\n");
        return;
    }
    for (int i = 0; i < 2000 && segment_holds_data(fd, 0); i++)
        nanosleep(&(struct timespec){ .tv_nsec = 10 * 1000 * 1000 }, NULL);
    nanosleep(&(struct timespec){ .tv_nsec = 100 * 1000 * 1000 }, NULL);
    off_t size = lseek(fd, 0, SEEK_END);
    fprintf(stderr, "segments: ");
    for (off_t k = 0; k * (4 << 20) < size; k++)
        fputc(segment_holds_data(fd, k) ? 'D' : 'Z', stderr);
    fputc('\n', stderr);
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: %s launches N | bench-control K | bench-split K | spool-release N\n", argv[0]);
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
    } else if (!strcmp(argv[1], "spool-release")) {
        launch(d, n, count, stream);
        CHECK_CUDA(cudaStreamSynchronize(stream));
        report_segments();
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
