// bench/launch_common.h - what bench/launch_cost.cu and bench/cupti_cost.cu share:
// the empty kernel whose launches they time, a monotonic clock, a median.
#ifndef KAUDIT_BENCH_LAUNCH_COMMON_H
#define KAUDIT_BENCH_LAUNCH_COMMON_H

#include <algorithm>
#include <ctime>
#include <vector>

__global__ void empty_kernel(int *never_written)
{
    if (never_written)
        *never_written = 1;
}

static double now_us()
{
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static double median(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    size_t n = v.size();
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

#endif
