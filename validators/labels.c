/*
 * labels.c - the estimators of labels.h: weighted point estimates and the
 * stratified Jeffreys-Dirichlet completion (paper Appendix H, "Interval
 * Method").  The random draws are variates.c's (gamma, Dirichlet,
 * multinomial) from kat_rng (xoshiro256** seeded by splitmix64); the
 * quantiles interpolate linearly between order statistics (Hyndman and Fan's
 * type 7, R's and NumPy's default).  No GSL: it is GPL-3.0, KernelAudit MIT.
 */
#include "labels.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "variates.h"

const char *const kvl_cell_names[KVL_CELLS] = { "PASS", "FAIL", "INCONCL" };
const char *const kvl_label_names[KVL_LABELS] = { "defect", "clean", "unknown" };
const char *const kvl_validity_names[KVL_VALIDITY] = { "sensitivity", "specificity", "ppv", "npv", "unknown",
                                                       "inconcl_defect" };
const char *const kvl_fa_names[KVL_FA] = { "decided", "all_accepted_lower", "all_accepted_upper" };

static int by_value(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

/* The f-quantile of sorted v[0..k), k > 0: Hyndman and Fan (1996) type 7,
 * v[i] + d (v[i+1] - v[i]) at (k - 1) f = i + d; written so that equal order
 * statistics give exactly their value (a census's degenerate interval). */
static double quantile_sorted(const double *v, size_t k, double f)
{
    double at = f * (double)(k - 1);
    size_t i = (size_t)floor(at);
    if (i + 1 >= k)
        return v[k - 1];
    return v[i] + (at - (double)i) * (v[i + 1] - v[i]);
}

static double ratio(double a, double b)
{
    return b > 0 ? a / b : NAN;
}

/* FAIL is audit-positive, defect reference-positive; the four classification
 * metrics use the human-known units with a PASS or FAIL certificate. */
static void validity_metrics(const double T[KVL_CELLS][KVL_LABELS], double *out)
{
    const double fd = T[KVL_FAIL][KVL_DEFECT], fc = T[KVL_FAIL][KVL_CLEAN];
    const double pd = T[KVL_PASS][KVL_DEFECT], pc = T[KVL_PASS][KVL_CLEAN];
    double all = 0, unknown = 0, inconcl = 0;
    for (int j = 0; j < KVL_CELLS; j++) {
        for (int l = 0; l < KVL_LABELS; l++)
            all += T[j][l];
        unknown += T[j][KVL_UNKNOWN];
    }
    for (int l = 0; l < KVL_LABELS; l++)
        inconcl += T[KVL_INCONCL][l];
    out[KVL_SENSITIVITY] = ratio(fd, fd + pd);
    out[KVL_SPECIFICITY] = ratio(pc, pc + fc);
    out[KVL_PPV] = ratio(fd, fd + fc);
    out[KVL_NPV] = ratio(pc, pc + pd);
    out[KVL_UNKNOWN_SHARE] = ratio(unknown, all);
    out[KVL_INCONCL_DEFECT] = ratio(T[KVL_INCONCL][KVL_DEFECT], inconcl);
}

/* T holds the accepted units only. */
static void false_accept_metrics(const double T[KVL_CELLS][KVL_LABELS], double *out)
{
    const double dd = T[KVL_PASS][KVL_DEFECT] + T[KVL_FAIL][KVL_DEFECT];
    const double dc = T[KVL_PASS][KVL_CLEAN] + T[KVL_FAIL][KVL_CLEAN];
    double all = 0, defect = 0, unknown = 0;
    for (int j = 0; j < KVL_CELLS; j++) {
        for (int l = 0; l < KVL_LABELS; l++)
            all += T[j][l];
        defect += T[j][KVL_DEFECT];
        unknown += T[j][KVL_UNKNOWN];
    }
    out[KVL_FA_DECIDED] = ratio(dd, dd + dc);
    out[KVL_FA_LOWER] = ratio(defect, all);
    out[KVL_FA_UPPER] = ratio(defect + unknown, all);
}

int kvl_complete(size_t H, const double *weight, const uint64_t (*N)[KVL_CELLS],
                 const uint64_t (*x)[KVL_CELLS][KVL_LABELS], kvl_metric_fn metric, size_t n_metrics, unsigned B,
                 unsigned long seed, struct kvl_estimate *out)
{
    double T[KVL_CELLS][KVL_LABELS] = { { 0 } };
    for (size_t h = 0; h < H; h++)
        for (int j = 0; j < KVL_CELLS; j++)
            for (int l = 0; l < KVL_LABELS; l++)
                T[j][l] += weight[h] * (double)x[h][j][l];
    double *point = calloc(n_metrics, sizeof *point);
    double *draws = calloc((size_t)(B ? B : 1) * n_metrics, sizeof *draws);
    if (!point || !draws) {
        free(point);
        free(draws);
        return -1;
    }
    metric(T, point);
    struct kat_rng rng;
    kat_rng_seed(&rng, (uint64_t)seed);
    double *value = point; /* reused below once the point estimates are copied out */
    for (size_t m = 0; m < n_metrics; m++) {
        memset(&out[m], 0, sizeof out[m]);
        out[m].estimate = value[m];
    }
    for (unsigned b = 0; b < B; b++) {
        memset(T, 0, sizeof T);
        for (size_t h = 0; h < H; h++) {
            double alpha[KVL_LABELS], p[KVL_LABELS];
            for (int l = 0; l < KVL_LABELS; l++) {
                alpha[l] = 0.5;
                for (int j = 0; j < KVL_CELLS; j++)
                    alpha[l] += (double)x[h][j][l];
            }
            kvl_dirichlet(&rng, KVL_LABELS, alpha, p);
            for (int j = 0; j < KVL_CELLS; j++) {
                uint64_t n = 0;
                for (int l = 0; l < KVL_LABELS; l++)
                    n += x[h][j][l];
                uint64_t y[KVL_LABELS] = { 0 };
                if (N[h][j] > n)
                    kvl_multinomial(&rng, KVL_LABELS, N[h][j] - n, p, y);
                for (int l = 0; l < KVL_LABELS; l++)
                    T[j][l] += (double)(x[h][j][l] + y[l]);
            }
        }
        metric(T, value);
        for (size_t m = 0; m < n_metrics; m++)
            draws[m * (size_t)B + b] = value[m];
    }
    for (size_t m = 0; m < n_metrics; m++) {
        double *v = draws + m * (size_t)B;
        size_t k = 0;
        for (unsigned b = 0; b < B; b++)
            if (!isnan(v[b]))
                v[k++] = v[b];
        out[m].defined = (unsigned)k;
        if (k == 0) {
            out[m].low = out[m].high = out[m].mean = out[m].sd = NAN;
            continue;
        }
        qsort(v, k, sizeof *v, by_value);
        out[m].low = quantile_sorted(v, k, 0.025);
        out[m].high = quantile_sorted(v, k, 0.975);
        /* Welford's running mean and sum of squares: equal draws give exactly
         * their value as the mean and 0 as the sd; sd with denominator k - 1. */
        double mean = 0, ss = 0;
        for (size_t i = 0; i < k; i++) {
            double delta = v[i] - mean;
            mean += delta / (double)(i + 1);
            ss += delta * (v[i] - mean);
        }
        out[m].mean = mean;
        out[m].sd = k > 1 ? sqrt(ss / (double)(k - 1)) : 0;
    }
    free(draws);
    free(point);
    return 0;
}

void kvl_sample_cells(const struct kvl_design *d, uint64_t counts[KVL_CELLS][KVL_LABELS])
{
    memset(counts, 0, sizeof(uint64_t) * KVL_CELLS * KVL_LABELS);
    for (size_t h = 0; h < d->n_strata; h++)
        for (int j = 0; j < KVL_CELLS; j++)
            for (int l = 0; l < KVL_LABELS; l++)
                counts[j][l] += d->strata[h].x[j][l];
}

/* The completion over the design's strata, of each stratum's cells and
 * labels: the selected certificates' (validator SIZE_MAX) or a validator's
 * accepted units'. */
static int complete_design(const struct kvl_design *d, size_t v, kvl_metric_fn metrics, size_t n_metrics,
                           unsigned B, unsigned long seed, struct kvl_estimate *out)
{
    size_t H = d->n_strata;
    double *w = calloc(H ? H : 1, sizeof *w);
    uint64_t(*N)[KVL_CELLS] = calloc(H ? H : 1, sizeof *N);
    uint64_t(*x)[KVL_CELLS][KVL_LABELS] = calloc(H ? H : 1, sizeof *x);
    int rc = -1;
    if (w && N && x) {
        for (size_t h = 0; h < H; h++) {
            w[h] = 1.0 / d->strata[h].pi;
            memcpy(N[h], v == SIZE_MAX ? d->strata[h].cell_N : d->strata[h].accepted[v], sizeof N[h]);
            memcpy(x[h], v == SIZE_MAX ? d->strata[h].x : d->strata[h].xa[v], sizeof x[h]);
        }
        rc = kvl_complete(H, w, (const uint64_t(*)[KVL_CELLS])N, (const uint64_t(*)[KVL_CELLS][KVL_LABELS])x,
                          metrics, n_metrics, B, seed, out);
    }
    free(w);
    free(N);
    free(x);
    return rc;
}

int kvl_validity_estimates(const struct kvl_design *d, unsigned B, unsigned long seed, struct kvl_estimate out[KVL_VALIDITY])
{
    return complete_design(d, SIZE_MAX, validity_metrics, KVL_VALIDITY, B, seed, out);
}

int kvl_false_accept_estimates(const struct kvl_design *d, size_t v, unsigned B, unsigned long seed,
                               struct kvl_estimate out[KVL_FA])
{
    return complete_design(d, v, false_accept_metrics, KVL_FA, B, seed, out);
}
