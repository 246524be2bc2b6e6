/*
 * side_stream.cu - scenario (d) of the GPU suite: work on a second stream,
 * ordered by events, and timed with events the way a harness times a
 * candidate.
 *
 * The trace must show the side-stream kernels on a stream id different from
 * the default-stream kernels, and the timing calls (event create, record on
 * the right stream, stream wait, synchronize, elapsed time with the value
 * this program got back).
 *
 * stdout: SHA-256 of every output buffer.
 * stderr: "KAUDIT_TEST launches <kernel> <count>",
 *         "KAUDIT_TEST elapsed_ms <label> <%.9g> <%a> start=<ptr> stop=<ptr> stream=<ptr>",
 *         "KAUDIT_TEST stream side=<ptr>", "KAUDIT_TEST event joined=<ptr>".
 */
#include "gpu_test_common.h"

enum { N = 1 << 20, ITERS = 256 };

/* Enough dependent arithmetic per element that the elapsed times are not ~0. */
extern "C" __global__ void kaudit_main_work(float *x, int n, int iters, unsigned seed)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    float v = kt_hash_value((uint32_t)i, seed);
    for (int k = 0; k < iters; k++)
        v = fmaf(v, 0.999f, 0.001f * (float)(k & 7));
    x[i] = v;
}

extern "C" __global__ void kaudit_side_work(float *y, int n, int iters, unsigned seed)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    float v = y[i] + kt_hash_value((uint32_t)i, seed);
    for (int k = 0; k < iters; k++)
        v = fmaf(v, 0.998f, 0.002f);
    y[i] = v;
}

/* out = x - y: reads the side stream's result, so it must run after the wait. */
extern "C" __global__ void kaudit_combine(float *out, const float *x, const float *y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = x[i] - y[i];
}

static int launches_main, launches_side, launches_combine;

static void report_elapsed(const char *label, cudaEvent_t a, cudaEvent_t b, cudaStream_t s)
{
    float ms = 0.0f;
    CK(cudaEventElapsedTime(&ms, a, b));
    fprintf(stderr, "KAUDIT_TEST elapsed_ms %s %.9g %a start=%p stop=%p stream=%p\n", label, ms,
            (double)ms, (void *)a, (void *)b, (void *)s);
}

int main(void)
{
    kt_sha256_selftest();
    const size_t bytes = (size_t)N * sizeof(float);
    const int threads = 256, blocks = (N + threads - 1) / threads;
    float *x, *y, *out;
    CK(cudaMalloc(&x, bytes));
    CK(cudaMalloc(&y, bytes));
    CK(cudaMalloc(&out, bytes));
    CK(cudaMemset(y, 0, bytes));
    CK(cudaMemset(out, 0xff, bytes)); /* poison */
    CK(cudaDeviceSynchronize());

    cudaStream_t side;
    CK(cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking));
    fprintf(stderr, "KAUDIT_TEST stream side=%p\n", (void *)side);
    cudaEvent_t side_start, side_stop, main_start, main_stop, joined;
    CK(cudaEventCreate(&side_start));
    CK(cudaEventCreate(&side_stop));
    CK(cudaEventCreate(&main_start));
    CK(cudaEventCreate(&main_stop));
    CK(cudaEventCreateWithFlags(&joined, cudaEventDisableTiming));
    fprintf(stderr, "KAUDIT_TEST event joined=%p\n", (void *)joined);

    /* Default stream: two passes, timed. */
    CK(cudaEventRecord(main_start, 0));
    for (int r = 0; r < 2; r++) {
        kaudit_main_work<<<blocks, threads>>>(x, N, ITERS, 11u + r);
        CK_LAUNCH();
        launches_main++;
    }
    CK(cudaEventRecord(main_stop, 0));

    /* Side stream: four passes, timed, independent of the default stream. */
    CK(cudaEventRecord(side_start, side));
    for (int r = 0; r < 4; r++) {
        kaudit_side_work<<<blocks, threads, 0, side>>>(y, N, ITERS, 21u + r);
        CK_LAUNCH();
        launches_side++;
    }
    CK(cudaEventRecord(side_stop, side));
    CK(cudaEventRecord(joined, side));

    /* The default stream waits for the side stream, then combines. */
    CK(cudaStreamWaitEvent(0, joined, 0));
    kaudit_combine<<<blocks, threads>>>(out, x, y, N);
    CK_LAUNCH();
    launches_combine++;

    CK(cudaStreamSynchronize(side));
    CK(cudaEventSynchronize(main_stop));
    report_elapsed("side", side_start, side_stop, side);
    report_elapsed("main", main_start, main_stop, (cudaStream_t)0);
    CK(cudaDeviceSynchronize());

    kt_print_device_sha256("main_work x", x, bytes);
    kt_print_device_sha256("side_work y", y, bytes);
    kt_print_device_sha256("combine out", out, bytes);

    fprintf(stderr, "KAUDIT_TEST launches kaudit_main_work %d\n", launches_main);
    fprintf(stderr, "KAUDIT_TEST launches kaudit_side_work %d\n", launches_side);
    fprintf(stderr, "KAUDIT_TEST launches kaudit_combine %d\n", launches_combine);

    CK(cudaEventDestroy(side_start));
    CK(cudaEventDestroy(side_stop));
    CK(cudaEventDestroy(main_start));
    CK(cudaEventDestroy(main_stop));
    CK(cudaEventDestroy(joined));
    CK(cudaStreamDestroy(side));
    CK(cudaFree(x));
    CK(cudaFree(y));
    CK(cudaFree(out));
    return 0;
}
