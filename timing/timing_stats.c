/* timing_stats.c - medians, CVs, order effects and the paired bootstrap (timing_stats.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kat_rng.h"
#include "timing_stats.h"

static int by_value(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

static double *sorted_copy(const double *v, size_t n)
{
    double *c = malloc((n ? n : 1) * sizeof *c);
    if (!c)
        return NULL;
    memcpy(c, v, n * sizeof *c);
    qsort(c, n, sizeof *c, by_value);
    return c;
}

double kat_median(const double *v, size_t n)
{
    if (!n)
        return NAN;
    double *c = sorted_copy(v, n);
    if (!c)
        return NAN;
    double m = n % 2 ? c[n / 2] : (c[n / 2 - 1] + c[n / 2]) / 2;
    free(c);
    return m;
}

double kat_percentile(const double *v, size_t n, double p)
{
    if (!n)
        return NAN;
    double *c = sorted_copy(v, n);
    if (!c)
        return NAN;
    double at = p / 100.0 * (double)(n - 1);
    size_t lo = (size_t)floor(at), hi = lo + 1 < n ? lo + 1 : lo;
    double r = c[lo] + (at - (double)lo) * (c[hi] - c[lo]);
    free(c);
    return r;
}

double kat_cv(const double *v, size_t n)
{
    if (n < 2)
        return NAN;
    double mean = 0;
    for (size_t i = 0; i < n; i++)
        mean += v[i];
    mean /= (double)n;
    double ss = 0;
    for (size_t i = 0; i < n; i++)
        ss += (v[i] - mean) * (v[i] - mean);
    return mean != 0 ? sqrt(ss / (double)(n - 1)) / mean : NAN;
}

double kat_order_effect(const double *t, size_t n)
{
    if (n < 4)
        return NAN;
    double *odd = malloc(n * sizeof *odd), *even = malloc(n * sizeof *even);
    if (!odd || !even) {
        free(odd);
        free(even);
        return NAN;
    }
    size_t no = 0, ne = 0;
    for (size_t i = 0; i < n; i++) {
        /* positions counted from 1: t[0] is the first, an odd position */
        if (i % 2 == 0)
            odd[no++] = t[i];
        else
            even[ne++] = t[i];
    }
    double m = kat_median(t, n);
    double parity = fabs(kat_median(odd, no) - kat_median(even, ne));
    double halves = fabs(kat_median(t, n / 2) - kat_median(t + n - n / 2, n / 2));
    free(odd);
    free(even);
    return (parity > halves ? parity : halves) / m;
}

int kat_bootstrap_ratio(const double *med_a, const double *med_b, size_t n, unsigned resamples, uint64_t seed,
                        double *lo, double *hi)
{
    if (!n || !resamples)
        return -1;
    double *ratios = malloc(resamples * sizeof *ratios), *ra = malloc(n * sizeof *ra), *rb = malloc(n * sizeof *rb);
    if (!ratios || !ra || !rb) {
        free(ratios);
        free(ra);
        free(rb);
        return -1;
    }
    struct kat_rng r; /* kat_rng.h: xoshiro256** seeded by splitmix64 */
    kat_rng_seed(&r, seed);
    for (unsigned k = 0; k < resamples; k++) {
        for (size_t i = 0; i < n; i++) {
            size_t j = (size_t)kat_rng_below(&r, n); /* the same batch for both arms */
            ra[i] = med_a[j];
            rb[i] = med_b[j];
        }
        ratios[k] = kat_median(ra, n) / kat_median(rb, n);
    }
    *lo = kat_percentile(ratios, resamples, 2.5);
    *hi = kat_percentile(ratios, resamples, 97.5);
    free(ratios);
    free(ra);
    free(rb);
    return 0;
}

void kat_timing_paired(const struct kat_timing_arms *arms, uint64_t seed, struct kat_paired_result *r)
{
    memset(r, 0, sizeof *r);
    r->median_a = r->median_b = r->cv_a = r->cv_b = r->order_effect = r->ratio = r->lo = r->hi = NAN;
    size_t nb = arms->batches, per = arms->per_batch, total = nb * per;
    if (!nb || per < 4)
        return;
    for (size_t i = 0; i < total; i++)
        if (!(isfinite(arms->a[i]) && arms->a[i] > 0 && isfinite(arms->b[i]) && arms->b[i] > 0))
            return;
    double *ma = malloc(nb * sizeof *ma), *mb = malloc(nb * sizeof *mb);
    if (!ma || !mb) {
        free(ma);
        free(mb);
        return;
    }
    r->median_a = kat_median(arms->a, total);
    r->median_b = kat_median(arms->b, total);
    r->cv_a = kat_cv(arms->a, total);
    r->cv_b = kat_cv(arms->b, total);
    r->ratio = r->median_a / r->median_b;
    r->order_effect = 0;
    for (size_t b = 0; b < nb; b++) {
        const double *ta = arms->a + b * per, *tb = arms->b + b * per;
        double oa = kat_order_effect(ta, per), ob = kat_order_effect(tb, per);
        if (oa > r->order_effect)
            r->order_effect = oa;
        if (ob > r->order_effect)
            r->order_effect = ob;
        ma[b] = kat_median(ta, per);
        mb[b] = kat_median(tb, per);
    }
    r->ok = kat_bootstrap_ratio(ma, mb, nb, KAT_TIMING_RESAMPLES, seed, &r->lo, &r->hi) == 0;
    free(ma);
    free(mb);
}

int kat_aa_passed(const struct kat_paired_result *r, char *why, size_t n)
{
    char scratch[8];
    if (!why) {
        why = scratch;
        n = sizeof scratch;
    }
    if (!r->ok)
        snprintf(why, n, "too few latencies, or one not finite and positive");
    else if (!(r->cv_a <= KAT_AA_MAX_CV) || !(r->cv_b <= KAT_AA_MAX_CV))
        snprintf(why, n, "the reference's own variation is too large: CV %.3f and %.3f (at most %.2f)", r->cv_a,
                 r->cv_b, KAT_AA_MAX_CV);
    else if (!(r->order_effect <= KAT_AA_MAX_ORDER_EFFECT))
        snprintf(why, n, "an order effect within a batch of %.3f (at most %.2f)", r->order_effect,
                 KAT_AA_MAX_ORDER_EFFECT);
    else if (!(r->lo <= 1 && 1 <= r->hi))
        snprintf(why, n, "two instances of the reference differ: ratio interval [%.4f, %.4f] excludes 1", r->lo,
                 r->hi);
    else if (!(r->hi - r->lo <= KAT_AA_MAX_WIDTH))
        snprintf(why, n, "the ratio interval [%.4f, %.4f] is wider than %.1f", r->lo, r->hi, KAT_AA_MAX_WIDTH);
    else
        return why[0] = '\0', 1;
    return 0;
}

int kat_stream_criterion(const struct kat_paired_result *r)
{
    return r->ok && r->ratio >= KAT_STREAM_MIN_RATIO && r->lo >= KAT_STREAM_MIN_RATIO &&
           r->median_a - r->median_b >= KAT_STREAM_MIN_GAP_MS;
}
