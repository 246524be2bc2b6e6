/*
 * validator_stats.h - the statistics of validator comparisons (paper
 * Appendix B): McNemar's exact test on paired misses, Holm's step-down
 * correction, rates with abstention bounds.  Pure functions, libm only.
 */
#ifndef KAUDIT_VALIDATOR_STATS_H
#define KAUDIT_VALIDATOR_STATS_H

#include <stddef.h>
#include <stdint.h>

/* Two-sided exact p of McNemar's test: under the null each of the b + c
 * discordant records goes either way with probability 1/2, so
 * p = min(1, 2 P(X <= min(b, c))) with X ~ Binomial(b + c, 1/2); 1 when b + c = 0. */
double kvs_mcnemar_exact(uint64_t b, uint64_t c);

/* Holm's step-down adjustment of n p-values: sorted ascending, the i-th
 * (from 0) becomes max over j <= i of min(1, (n - j) p_(j)); adjusted[k] is
 * p[k]'s.  Ties keep their input order.  Returns -1 when out of memory. */
int kvs_holm(const double *p, size_t n, double *adjusted);

/* a / b, or NaN when b = 0 (undefined, never 0). */
double kvs_rate(uint64_t a, uint64_t b);

/* The abstention bounds of a false-accept rate (Appendix B): the u accepted
 * INCONCL records assigned all to PASS, then all to FAIL:
 * [a / (b + u), (a + u) / (b + u)]; NaN both when b + u = 0. */
void kvs_abstention_bounds(uint64_t a, uint64_t b, uint64_t u, double *low, double *high);

#endif
