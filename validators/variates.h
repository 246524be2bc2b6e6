/*
 * variates.h - the random variates of the human-label completion (labels.c),
 * drawn from the project's generator (timing/kat_rng.h: xoshiro256** seeded
 * by splitmix64).  Our own code, not GSL's: GSL is GPL-3.0 and KernelAudit is
 * MIT.  Exposed for the tests (tests/test_validators_labels.c).
 */
#ifndef KAUDIT_VALIDATOR_VARIATES_H
#define KAUDIT_VALIDATOR_VARIATES_H

#include <stddef.h>
#include <stdint.h>

#include "kat_rng.h"

/* Standard normal: Marsaglia's polar method (Marsaglia and Bray 1964). */
double kvl_normal(struct kat_rng *r);

/* Gamma(shape a, scale 1), a > 0: Marsaglia and Tsang (2000); a < 1 through
 * Gamma(a + 1) U^(1/a). */
double kvl_gamma(struct kat_rng *r, double a);

/* Beta(a, b) = G_a / (G_a + G_b). */
double kvl_beta(struct kat_rng *r, double a, double b);

/* Binomial(n, p), exactly (up to floating point), for any n: the order-statistic
 * halving of Knuth, TAOCP vol. 2, 3.4.1 F, down to 32 trials, then a count of
 * Bernoulli trials. */
uint64_t kvl_binomial(struct kat_rng *r, uint64_t n, double p);

/* p[0..K) ~ Dirichlet(alpha[0..K)), alpha[l] > 0: normalized gammas. */
void kvl_dirichlet(struct kat_rng *r, size_t K, const double *alpha, double *p);

/* y[0..K) ~ Multinomial(n, p[0..K)) (p sums to 1): conditional binomials,
 * y_l ~ Binomial(n - y_0 - ... - y_{l-1}, p_l / (p_l + ... + p_{K-1})). */
void kvl_multinomial(struct kat_rng *r, size_t K, uint64_t n, const double *p, uint64_t *y);

#endif
