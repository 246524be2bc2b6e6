/*
 * host_clock.c - what the primitives kaudit calls on every recorded API call
 * cost on this host: clock_gettime (CLOCK_REALTIME is every host timestamp in
 * a trace, kat_now_ns), the gettid system call (cached per thread by
 * kat_tid, so paid once), and the TSC read.  In a VM the clock may not be
 * readable from user space (no vDSO clocksource), and then every timestamp
 * is a system call or a VM exit: this tells which.  And kaudit's own clock
 * (preload/host_clock.c, kat_now_ns: the TSC scaled, where the kernel keeps
 * time with it), once calibrated.
 *
 *   cc -O2 -Ipreload -Isession -o host_clock bench/host_clock.c preload/host_clock.c && ./host_clock
 *   (bench/floor.sh runs it)
 *
 * Output: one JSON line, nanoseconds per call (median of 9 runs of 200,000).
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <x86intrin.h>

#include "preload_internal.h"

#define CALLS 200000
#define RUNS 9

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static volatile uint64_t sink;

static double per_call(int what)
{
    double runs[RUNS];
    for (int r = 0; r < RUNS; r++) {
        double t0 = now_ns();
        for (int i = 0; i < CALLS; i++) {
            struct timespec ts;
            switch (what) {
            case 0: clock_gettime(CLOCK_REALTIME, &ts); sink += (uint64_t)ts.tv_nsec; break;
            case 1: clock_gettime(CLOCK_MONOTONIC, &ts); sink += (uint64_t)ts.tv_nsec; break;
            case 2: sink += (uint64_t)syscall(SYS_gettid); break;
            case 4: sink += kat_now_ns(); break;
            default: sink += __rdtsc(); break;
            }
        }
        runs[r] = (now_ns() - t0) / CALLS;
    }
    qsort(runs, RUNS, sizeof runs[0], by_value);
    return runs[RUNS / 2];
}

static void read_line(const char *path, char *out, size_t size)
{
    out[0] = 0;
    FILE *f = fopen(path, "r");
    if (!f)
        return;
    if (fgets(out, (int)size, f))
        out[strcspn(out, "\n")] = 0;
    fclose(f);
}

int main(void)
{
    char current[128], available[256];
    read_line("/sys/devices/system/clocksource/clocksource0/current_clocksource", current, sizeof current);
    read_line("/sys/devices/system/clocksource/clocksource0/available_clocksource", available,
              sizeof available);
    /* kaudit's clock reads the system's until its rate is measured (20 ms) */
    for (double until = now_ns() + 50e6; now_ns() < until;)
        sink += kat_now_ns();
    printf("{\"clocksource\": \"%s\", \"available\": \"%s\", \"realtime_ns\": %.1f, "
           "\"monotonic_ns\": %.1f, \"gettid_syscall_ns\": %.1f, \"rdtsc_ns\": %.1f, "
           "\"kaudit_clock\": \"%s\", \"kaudit_clock_ns\": %.1f}\n",
           current, available, per_call(0), per_call(1), per_call(2), per_call(3), kat_host_clock_name(),
           per_call(4));
    return 0;
}
