/*
 * bench/timing_ratio.c - the timing statistics of kaudit audit
 * (timing/timing_stats.c) on latencies read from stdin, for
 * bench/timing_tracing.sh: 60 numbers of arm A then 60 of arm B (three
 * batches of 20, in the order taken).  Prints "ratio L U cv_a cv_b".
 *
 *   gcc -O2 -Itiming -o timing_ratio bench/timing_ratio.c timing/timing_stats.c -lm
 */
#include <stdio.h>

#include "timing_stats.h"

int main(void)
{
    enum { N = KAT_TIMING_BATCHES * KAT_TIMING_PER_BATCH };
    double a[N], b[N];
    for (int i = 0; i < 2 * N; i++)
        if (scanf("%lf", i < N ? &a[i] : &b[i - N]) != 1) {
            fprintf(stderr, "timing_ratio: expected %d latencies, got %d\n", 2 * N, i);
            return 2;
        }
    struct kat_timing_arms arms = { a, b, KAT_TIMING_BATCHES, KAT_TIMING_PER_BATCH };
    struct kat_paired_result r;
    kat_timing_paired(&arms, 0, &r);
    if (!r.ok) {
        fprintf(stderr, "timing_ratio: a latency is not positive and finite\n");
        return 1;
    }
    printf("%.5f %.5f %.5f %.4f %.4f\n", r.ratio, r.lo, r.hi, r.cv_a, r.cv_b);
    return 0;
}
