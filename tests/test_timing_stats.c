/* The timing statistics (timing/timing_stats.h) on latencies whose answers are known by hand. */
#include <criterion/criterion.h>
#include <math.h>

#include "timing_stats.h"

#define N (KAT_TIMING_BATCHES * KAT_TIMING_PER_BATCH)

static void fill(double *v, size_t n, double base, double jitter)
{
    /* deterministic, small, zero-mean-ish jitter */
    for (size_t i = 0; i < n; i++)
        v[i] = base * (1 + jitter * sin((double)i * 1.7));
}

Test(stats, median_and_percentile)
{
    double odd[] = { 5, 1, 3 }, even[] = { 4, 1, 3, 2 };
    cr_expect_float_eq(kat_median(odd, 3), 3, 1e-12);
    cr_expect_float_eq(kat_median(even, 4), 2.5, 1e-12);
    cr_expect_float_eq(kat_percentile(even, 4, 50), 2.5, 1e-12);
    /* position 0.025 * 3 = 0.075 between 1 and 2 */
    cr_expect_float_eq(kat_percentile(even, 4, 2.5), 1.075, 1e-12);
    cr_expect_float_eq(kat_percentile(even, 4, 100), 4, 1e-12);
    cr_expect(isnan(kat_median(odd, 0)));
    cr_expect_float_eq(odd[0], 5, 0, "the input is not reordered");
}

Test(stats, cv_uses_n_minus_1)
{
    double v[] = { 1, 2, 3, 4, 5 };
    /* mean 3, squares 10, sd sqrt(10 / 4) */
    cr_expect_float_eq(kat_cv(v, 5), sqrt(2.5) / 3, 1e-12);
    cr_expect(isnan(kat_cv(v, 1)));
}

Test(stats, order_effect_parity_and_halves)
{
    double alternating[20], step[20];
    for (int i = 0; i < 20; i++) {
        alternating[i] = i % 2 ? 1.1 : 1.0;
        step[i] = i < 10 ? 1.0 : 1.2;
    }
    /* odd positions 1.0, even 1.1: 0.1 over the median 1.05; halves equal */
    cr_expect_float_eq(kat_order_effect(alternating, 20), 0.1 / 1.05, 1e-12);
    /* halves 1.0 and 1.2: 0.2 over the median 1.1; parity equal */
    cr_expect_float_eq(kat_order_effect(step, 20), 0.2 / 1.1, 1e-12);
}

Test(stats, bootstrap_of_exact_ratios)
{
    double a[] = { 1.0, 1.3, 0.8 }, b[] = { 1.0, 1.3, 0.8 }, half[] = { 2.0, 2.6, 1.6 };
    double lo, hi;
    cr_assert_eq(kat_bootstrap_ratio(a, b, 3, 2000, 0, &lo, &hi), 0);
    cr_expect_float_eq(lo, 1, 1e-12, "identical arms: every replicate is 1");
    cr_expect_float_eq(hi, 1, 1e-12);
    cr_assert_eq(kat_bootstrap_ratio(a, half, 3, 2000, 0, &lo, &hi), 0);
    cr_expect_float_eq(lo, 0.5, 1e-12, "B twice A in every batch: every replicate is 0.5");
    cr_expect_float_eq(hi, 0.5, 1e-12);
    cr_expect_eq(kat_bootstrap_ratio(a, b, 0, 2000, 0, &lo, &hi), -1);
}

Test(stats, bootstrap_bounds_and_seed)
{
    /* batch ratios 0.9, 1.0, 1.1: with three batches a replicate is a
     * median over a multiset of them, so lies within [0.9, 1.1]; drawing
     * all three the same (probability 3/27) gives the extremes, so the
     * 2.5th and 97.5th percentiles of 2,000 replicates are the extremes */
    double a[] = { 0.9, 1.0, 1.1 }, b[] = { 1.0, 1.0, 1.0 };
    double lo, hi, lo2, hi2;
    cr_assert_eq(kat_bootstrap_ratio(a, b, 3, 2000, 0, &lo, &hi), 0);
    cr_expect_float_eq(lo, 0.9, 1e-12);
    cr_expect_float_eq(hi, 1.1, 1e-12);
    cr_assert_eq(kat_bootstrap_ratio(a, b, 3, 2000, 0, &lo2, &hi2), 0);
    cr_expect(lo == lo2 && hi == hi2, "the same seed, the same interval");
}

Test(aa, stable_reference_passes)
{
    double a[N], b[N];
    fill(a, N, 2.0, 0.005);
    fill(b, N, 2.0, 0.004);
    struct kat_timing_arms arms = { a, b, KAT_TIMING_BATCHES, KAT_TIMING_PER_BATCH };
    struct kat_paired_result r;
    kat_timing_paired(&arms, 0, &r);
    char why[256];
    cr_assert(r.ok);
    cr_expect(kat_aa_passed(&r, why, sizeof why), "%s", why);
    cr_expect_lt(r.cv_a, 0.01);
    cr_expect(r.lo <= 1 && 1 <= r.hi, "[%g, %g]", r.lo, r.hi);
}

Test(aa, unstable_reference_fails_on_cv)
{
    double a[N], b[N];
    for (int i = 0; i < N; i++)
        a[i] = b[i] = i % 3 ? 0.05 : 0.09; /* a sub-0.1 ms task on a noisy host */
    struct kat_timing_arms arms = { a, b, KAT_TIMING_BATCHES, KAT_TIMING_PER_BATCH };
    struct kat_paired_result r;
    kat_timing_paired(&arms, 0, &r);
    char why[256];
    cr_expect_not(kat_aa_passed(&r, why, sizeof why));
    cr_expect(strstr(why, "variation"), "%s", why);
}

Test(aa, order_effect_fails_within_cv)
{
    double a[N], b[N];
    for (int i = 0; i < N; i++)
        a[i] = b[i] = i % KAT_TIMING_PER_BATCH < 10 ? 1.0 : 1.08;
    struct kat_timing_arms arms = { a, b, KAT_TIMING_BATCHES, KAT_TIMING_PER_BATCH };
    struct kat_paired_result r;
    kat_timing_paired(&arms, 0, &r);
    char why[256];
    cr_expect_lt(r.cv_a, KAT_AA_MAX_CV, "CV %g passes", r.cv_a);
    cr_expect_not(kat_aa_passed(&r, why, sizeof why));
    cr_expect(strstr(why, "order effect"), "%s", why);
}

Test(aa, instances_that_differ_fail)
{
    double a[N], b[N];
    fill(a, N, 1.0, 0.002);
    fill(b, N, 1.2, 0.002);
    struct kat_timing_arms arms = { a, b, KAT_TIMING_BATCHES, KAT_TIMING_PER_BATCH };
    struct kat_paired_result r;
    kat_timing_paired(&arms, 0, &r);
    char why[256];
    cr_expect_not(kat_aa_passed(&r, why, sizeof why));
    cr_expect(strstr(why, "excludes 1"), "%s", why);
}

Test(aa, bad_latencies_are_not_ok)
{
    double a[N], b[N];
    fill(a, N, 1.0, 0.002);
    fill(b, N, 1.0, 0.002);
    b[7] = 0;
    struct kat_timing_arms arms = { a, b, KAT_TIMING_BATCHES, KAT_TIMING_PER_BATCH };
    struct kat_paired_result r;
    kat_timing_paired(&arms, 0, &r);
    cr_expect_not(r.ok);
    cr_expect_not(kat_aa_passed(&r, NULL, 0));
}

Test(speedup, twice_as_fast_excludes_1)
{
    double ref[N], cand[N];
    fill(ref, N, 2.0, 0.01);
    fill(cand, N, 1.0, 0.01);
    struct kat_timing_arms arms = { ref, cand, KAT_TIMING_BATCHES, KAT_TIMING_PER_BATCH };
    struct kat_paired_result r;
    kat_timing_paired(&arms, 0, &r);
    cr_assert(r.ok);
    cr_expect_float_eq(r.ratio, 2.0, 0.05);
    cr_expect_gt(r.lo, 1.0, "[%g, %g]", r.lo, r.hi);
}

Test(stream, hidden_work_meets_the_criterion)
{
    double guarded[N], unguarded[N];
    fill(guarded, N, 3.5, 0.01);
    fill(unguarded, N, 1.0, 0.01);
    struct kat_timing_arms arms = { guarded, unguarded, KAT_TIMING_BATCHES, KAT_TIMING_PER_BATCH };
    struct kat_paired_result r;
    kat_timing_paired(&arms, 0, &r);
    cr_expect(kat_stream_criterion(&r), "ratio %g [%g, %g]", r.ratio, r.lo, r.hi);
    /* 2x is below the ratio */
    fill(guarded, N, 2.0, 0.01);
    kat_timing_paired(&arms, 0, &r);
    cr_expect_not(kat_stream_criterion(&r));
    /* 4x but a gap of 0.03 ms */
    fill(guarded, N, 0.04, 0.01);
    fill(unguarded, N, 0.01, 0.01);
    kat_timing_paired(&arms, 0, &r);
    cr_expect_gt(r.ratio, 3.0);
    cr_expect_not(kat_stream_criterion(&r), "the absolute gap is below 0.05 ms");
}
