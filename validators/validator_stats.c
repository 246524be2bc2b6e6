/* validator_stats.c - McNemar, Holm, rates and bounds (validator_stats.h). */
#include "validator_stats.h"

#include <math.h>
#include <stdlib.h>

double kvs_mcnemar_exact(uint64_t b, uint64_t c)
{
    uint64_t n = b + c, k = b < c ? b : c;
    if (n == 0)
        return 1.0;
    /* log P(X <= k) by log-sum-exp over log C(n, i) - n log 2: exact to double
       precision far into the tail (5.86e-46 at n = 163) */
    double ln = lgamma((double)n + 1), base = -(double)n * log(2.0), top = -INFINITY;
    double *terms = malloc((size_t)(k + 1) * sizeof *terms);
    if (!terms)
        return NAN;
    for (uint64_t i = 0; i <= k; i++) {
        terms[i] = ln - lgamma((double)i + 1) - lgamma((double)(n - i) + 1) + base;
        if (terms[i] > top)
            top = terms[i];
    }
    double sum = 0;
    for (uint64_t i = 0; i <= k; i++)
        sum += exp(terms[i] - top);
    free(terms);
    double p = 2.0 * exp(top + log(sum));
    return p < 1.0 ? p : 1.0;
}

struct ranked {
    double p;
    size_t index;
};

static int by_p(const void *x, const void *y)
{
    const struct ranked *a = x, *b = y;
    if (a->p != b->p)
        return a->p < b->p ? -1 : 1;
    return a->index < b->index ? -1 : a->index > b->index;
}

int kvs_holm(const double *p, size_t n, double *adjusted)
{
    if (n == 0)
        return 0;
    struct ranked *r = malloc(n * sizeof *r);
    if (!r)
        return -1;
    for (size_t i = 0; i < n; i++)
        r[i] = (struct ranked){ p[i], i };
    qsort(r, n, sizeof *r, by_p);
    double running = 0;
    for (size_t i = 0; i < n; i++) {
        double a = (double)(n - i) * r[i].p;
        if (a > 1)
            a = 1;
        if (a > running)
            running = a;
        adjusted[r[i].index] = running;
    }
    free(r);
    return 0;
}

double kvs_rate(uint64_t a, uint64_t b)
{
    return b ? (double)a / (double)b : NAN;
}

void kvs_abstention_bounds(uint64_t a, uint64_t b, uint64_t u, double *low, double *high)
{
    *low = kvs_rate(a, b + u);
    *high = kvs_rate(a + u, b + u);
}
