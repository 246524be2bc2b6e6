// bench/cupti_cost.cu - what each CUPTI mechanism costs one kernel launch, inside
// one process (the mechanisms: bench/cupti_toggle.c).
//
//   cupti_cost [REPEATS [LAUNCHES_PER_SEGMENT]]     (defaults 40 and 400)
//
// Each repeat runs one segment per configuration, in rotating order: switch
// the configuration on, LAUNCHES_PER_SEGMENT empty-kernel launches through the
// shared CUDA runtime with the host clock around the launch calls only (the
// issue time), synchronize, switch it off, flush.  Output: one JSON line with,
// per configuration, the median and minimum issue time per launch (us) and
// what CUPTI delivered for it (kernel records, API records, callbacks).
//
// Build: nvcc -O2 -cudart shared -o cupti_cost bench/cupti_cost.cu bench/cupti_toggle.c -lcupti
#include <cuda_runtime.h>

#include "launch_common.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <vector>

extern "C" {
int ct_configs(void);
const char *ct_config_name(int config);
int ct_init(void);
int ct_apply(int config, int on);
void ct_counts(long long out[3]);
}

int main(int argc, char **argv)
{
    int repeats = argc > 1 ? atoi(argv[1]) : 40;
    int per_segment = argc > 2 ? atoi(argv[2]) : 400;
    if (repeats < 1 || per_segment < 1) {
        fprintf(stderr, "usage: cupti_cost [REPEATS [LAUNCHES_PER_SEGMENT]]\n");
        return 2;
    }
    if (ct_init() <= 0) {
        fprintf(stderr, "cupti_cost: CUPTI setup failed\n");
        return 1;
    }
    cudaStream_t stream;
    if (cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking) != cudaSuccess) {
        fprintf(stderr, "cupti_cost: no CUDA stream\n");
        return 1;
    }
    const int n = ct_configs();
    // Every mechanism once before timing: first-use setup stays out of the segments.
    for (int c = 0; c < n; c++) {
        ct_apply(c, 1);
        for (int i = 0; i < 1000; i++)
            empty_kernel<<<1, 32, 0, stream>>>(nullptr);
        cudaStreamSynchronize(stream);
        ct_apply(c, 0);
    }
    std::vector<std::vector<double>> issue(n);
    std::vector<long long> seen(3 * n, 0);
    long long before[3], after[3];
    ct_counts(before);
    for (int r = 0; r < repeats; r++) {
        for (int j = 0; j < n; j++) {
            int c = (r + j) % n;
            if (ct_apply(c, 1) != 0)
                return 1;
            double t0 = now_us();
            for (int i = 0; i < per_segment; i++)
                empty_kernel<<<1, 32, 0, stream>>>(nullptr);
            double t1 = now_us();
            cudaStreamSynchronize(stream);
            ct_apply(c, 0);
            ct_counts(after);
            for (int k = 0; k < 3; k++) {
                seen[3 * c + k] += after[k] - before[k];
                before[k] = after[k];
            }
            issue[c].push_back((t1 - t0) / per_segment);
        }
    }
    if (cudaGetLastError() != cudaSuccess) {
        fprintf(stderr, "cupti_cost: a launch failed\n");
        return 1;
    }
    printf("{\"workload\": \"c\", \"repeats\": %d, \"per_segment\": %d, \"configs\": {", repeats,
           per_segment);
    for (int c = 0; c < n; c++)
        printf("%s\"%s\": {\"median\": %.4f, \"min\": %.4f, \"kernel_records\": %lld, "
               "\"api_records\": %lld, \"callbacks\": %lld}",
               c ? ", " : "", ct_config_name(c), median(issue[c]),
               *std::min_element(issue[c].begin(), issue[c].end()), seen[3 * c], seen[3 * c + 1],
               seen[3 * c + 2]);
    printf("}, \"unit\": \"us per launch (issue)\"}\n");
    return 0;
}
