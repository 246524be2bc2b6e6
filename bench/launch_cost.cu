// bench/launch_cost.cu - what one kernel launch costs the host, in microseconds.
//
//   launch_cost [SEGMENTS [LAUNCHES_PER_SEGMENT]]     (defaults 60 and 200)
//
// The PyTorch loop of bench/overhead.sh mixes a tracer's per-launch cost with
// Python, the dispatcher and cuBLASLt, and single runs on the GPU machine
// spread by 1.5x.  This program isolates the launch path: an empty kernel is
// launched LAUNCHES_PER_SEGMENT times through the shared CUDA runtime, the
// host clock read before the first and after the last launch call (the issue
// time), then the stream synchronized.  Segments are short enough that the
// launch queue never fills, so the issue time is the host's own launch cost,
// the part a tracer adds to.  The median over segments drops the segments a
// preemption or a buffer flush happened to hit.
//
// Build: nvcc -O2 -cudart shared -o launch_cost bench/launch_cost.cu
// (shared cudart, like PyTorch's: the runtime and driver API records are the
// ones a PyTorch launch makes).
//
// Output: one JSON line on stdout, e.g.
//   {"issue_us_median": 2.31, "issue_us_min": 2.20, "total_us_median": 3.10, ...}
#include <cuda_runtime.h>

#include "launch_common.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <vector>

static int check(cudaError_t rc, const char *what)
{
    if (rc != cudaSuccess) {
        fprintf(stderr, "launch_cost: %s: %s\n", what, cudaGetErrorString(rc));
        return 1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    int segments = argc > 1 ? atoi(argv[1]) : 60;
    int per_segment = argc > 2 ? atoi(argv[2]) : 200;
    if (segments < 1 || per_segment < 1) {
        fprintf(stderr, "usage: launch_cost [SEGMENTS [LAUNCHES_PER_SEGMENT]]\n");
        return 2;
    }
    cudaStream_t stream;
    if (check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "stream"))
        return 1;
    // Warm-up: module load, first-launch setup, tracer buffers.
    for (int i = 0; i < 2000; i++)
        empty_kernel<<<1, 32, 0, stream>>>(nullptr);
    if (check(cudaStreamSynchronize(stream), "warm-up"))
        return 1;

    std::vector<double> issue, total;
    for (int s = 0; s < segments; s++) {
        double t0 = now_us();
        for (int i = 0; i < per_segment; i++)
            empty_kernel<<<1, 32, 0, stream>>>(nullptr);
        double t1 = now_us();
        if (check(cudaStreamSynchronize(stream), "segment"))
            return 1;
        double t2 = now_us();
        issue.push_back((t1 - t0) / per_segment);
        total.push_back((t2 - t0) / per_segment);
    }
    if (check(cudaGetLastError(), "launch"))
        return 1;
    printf("{\"issue_us_median\": %.4f, \"issue_us_min\": %.4f, \"total_us_median\": %.4f, "
           "\"segments\": %d, \"launches_per_segment\": %d}\n",
           median(issue), *std::min_element(issue.begin(), issue.end()), median(total), segments,
           per_segment);
    cudaStreamDestroy(stream);
    return 0;
}
