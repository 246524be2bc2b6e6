/*
 * timing_stats.h - the statistics of the measurement tier's timing checks
 * (paper, Section 3.4 and Appendix A; docs/timing.md).
 *
 * Every check compares two arms, A and B, timed in paired batches: in batch
 * b each arm has `per_batch` latencies, in the order they were taken (the
 * first half of an arm's latencies is one block of the batch's ABBA or BAAB
 * order, the second half the other).  Latencies are milliseconds.
 *
 * - The A/A screen (two instances of the reference): both arms' coefficients
 *   of variation over all their latencies, the largest normalized order
 *   effect within an arm and batch, and a paired bootstrap interval of the
 *   ratio of the arms' medians.  Passing needs CV <= 0.05, order effect <=
 *   0.05, L <= 1 <= U and U - L <= 0.1 (timing PASS is the caller's).  It
 *   withholds speedups, never certificates.
 * - A speedup: the reference (A) against the candidate (B), the same
 *   bootstrap over batch medians of A/B.
 * - The stream differential: the candidate timed with a full-device
 *   synchronization guard (A) and without (B); R_b = median(A) / median(B).
 *   Its criterion: R_b >= 3, bootstrap lower bound >= 3 and an absolute gap
 *   >= 0.05 ms (the attributable evidence is the caller's).
 *
 * The bootstrap resamples batch indices with replacement, the same indices
 * for both arms; each replicate is the median of the resampled A batch
 * medians over the median of the resampled B batch medians.  Its generator
 * is xoshiro256** seeded through splitmix64 (kat_rng.h; seed 0 by default), indices
 * drawn without modulo bias; percentiles interpolate linearly between order
 * statistics (NumPy's default).  The paper does not name a generator, so a
 * replicate-for-replicate match with its implementation is not claimed; the
 * unit tests pin answers that do not depend on it.
 */
#ifndef KAUDIT_TIMING_STATS_H
#define KAUDIT_TIMING_STATS_H

#include <stddef.h>
#include <stdint.h>

/* The protocol of Section 3.4 / Appendix A. */
#define KAT_TIMING_WARMUPS 10
#define KAT_TIMING_BATCHES 3
#define KAT_TIMING_PER_BATCH 20
#define KAT_TIMING_RESAMPLES 2000
#define KAT_AA_MAX_CV 0.05
#define KAT_AA_MAX_ORDER_EFFECT 0.05
#define KAT_AA_MAX_WIDTH 0.1
#define KAT_STREAM_MIN_RATIO 3.0
#define KAT_STREAM_MIN_GAP_MS 0.05

/* Median of v[0..n) (v is not changed); NaN when n is 0. */
double kat_median(const double *v, size_t n);
/* Sample standard deviation (denominator n - 1) over the mean; NaN when n < 2
 * or the mean is 0. */
double kat_cv(const double *v, size_t n);
/* The percentile p (0..100) of v[0..n), linear between order statistics. */
double kat_percentile(const double *v, size_t n, double p);
/* For one arm in one batch, t[0..n) in the order taken: the larger of
 * |median(odd positions) - median(even positions)| and |median(first half)
 * - median(second half)|, over the median of all n.  NaN when n < 4. */
double kat_order_effect(const double *t, size_t n);

/* Paired bootstrap of median(A medians)/median(B medians) over n batches:
 * [*lo, *hi] the 2.5th and 97.5th percentiles of `resamples` replicates.
 * -1 when n is 0, resamples is 0 or out of memory. */
int kat_bootstrap_ratio(const double *med_a, const double *med_b, size_t n, unsigned resamples, uint64_t seed,
                        double *lo, double *hi);

/* Two arms' latencies: a[b * per_batch + i] is arm A's i-th latency of batch b. */
struct kat_timing_arms {
    const double *a, *b;
    size_t batches, per_batch;
};

struct kat_paired_result {
    double median_a, median_b;   /* over every latency of the arm */
    double cv_a, cv_b;
    double order_effect;         /* the largest, over both arms and every batch */
    double ratio;                /* median_a / median_b */
    double lo, hi;               /* the bootstrap interval of the batch-median ratio */
    int ok;                      /* 0: too few latencies, a latency not finite or not positive */
};

/* The statistics every check reads.  seed: the bootstrap's. */
void kat_timing_paired(const struct kat_timing_arms *arms, uint64_t seed, struct kat_paired_result *r);

/* The A/A screen's decision on r (both arms the reference): 1 passed, 0 not;
 * why (when not NULL) receives the first condition that failed. */
int kat_aa_passed(const struct kat_paired_result *r, char *why, size_t n);

/* The stream differential's criterion on r (A guarded, B unguarded), the
 * attributable evidence aside: 1 met. */
int kat_stream_criterion(const struct kat_paired_result *r);

#endif
