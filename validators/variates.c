/* variates.c - normal, gamma, beta, binomial, Dirichlet and multinomial
 * variates from kat_rng (variates.h). */
#include "variates.h"

#include <math.h>

/*
 * G. Marsaglia and T. A. Bray, "A convenient method for generating normal
 * variables", SIAM Review 6(3):260-264, 1964: (u, v) uniform on the unit disc
 * (by rejection from the square), s = u^2 + v^2; then u sqrt(-2 ln s / s) is
 * standard normal.  The polar method yields a pair; the second deviate is
 * dropped so that the generator's state is the only state.
 */
double kvl_normal(struct kat_rng *r)
{
    double u, v, s;
    do {
        u = 2 * kat_rng_next_double(r) - 1;
        v = 2 * kat_rng_next_double(r) - 1;
        s = u * u + v * v;
    } while (s >= 1 || s == 0);
    return u * sqrt(-2 * log(s) / s);
}

/*
 * G. Marsaglia and W. W. Tsang, "A simple method for generating gamma
 * variables", ACM Trans. Math. Softw. 26(3):363-372, 2000.  For a >= 1:
 * d = a - 1/3, c = 1 / sqrt(9 d); x normal, v = (1 + c x)^3, accept d v when
 * v > 0 and u < 1 - 0.0331 x^4 (the squeeze) or ln u < x^2/2 + d (1 - v + ln v).
 * For a < 1 (the Jeffreys prior's 1/2 on an empty category), the paper's
 * boost: Gamma(a) = Gamma(a + 1) U^(1/a).
 */
double kvl_gamma(struct kat_rng *r, double a)
{
    if (a < 1)
        return kvl_gamma(r, a + 1) * pow(kat_rng_next_double(r), 1 / a);
    const double d = a - 1.0 / 3, c = 1 / sqrt(9 * d);
    for (;;) {
        double x, v;
        do {
            x = kvl_normal(r);
            v = 1 + c * x;
        } while (v <= 0);
        v = v * v * v;
        double u = kat_rng_next_double(r);
        if (u < 1 - 0.0331 * (x * x) * (x * x))
            return d * v;
        if (log(u) < 0.5 * x * x + d * (1 - v + log(v)))
            return d * v;
    }
}

double kvl_beta(struct kat_rng *r, double a, double b)
{
    double x = kvl_gamma(r, a), y = kvl_gamma(r, b);
    return x / (x + y);
}

/*
 * D. E. Knuth, The Art of Computer Programming, vol. 2, 3rd ed., 3.4.1 F
 * (after Relles 1972 and Ahrens and Dieter): Binomial(n, p) counts which of n
 * uniforms fall below p.  Their a-th smallest, a = 1 + floor(n/2), is X ~
 * Beta(a, n + 1 - a); given X, the a - 1 below it are uniform on (0, X) and
 * the n - a above it uniform on (X, 1).  So when X >= p the count is
 * Binomial(a - 1, p / X), otherwise a + Binomial(n - a, (p - X) / (1 - X)):
 * n halves at each step, O(log n) betas, exact in distribution.  From 32
 * trials down, the trials themselves are drawn (u < p for u uniform).  The
 * labels' cells are hundreds of units, but N_h may be up to 10^9.
 */
uint64_t kvl_binomial(struct kat_rng *r, uint64_t n, double p)
{
    uint64_t k = 0;
    for (;;) {
        if (n == 0 || !(p > 0))
            return k;
        if (p >= 1)
            return k + n;
        if (n <= 32)
            break;
        uint64_t a = 1 + n / 2, b = n + 1 - a;
        double x = kvl_beta(r, (double)a, (double)b);
        if (x >= p) {
            n = a - 1;
            p = p / x;
        } else {
            k += a;
            n = b - 1;
            p = (p - x) / (1 - x);
        }
    }
    for (uint64_t i = 0; i < n; i++)
        k += kat_rng_next_double(r) < p;
    return k;
}

/* A Dirichlet vector is independent gammas over their sum (L. Devroye,
 * Non-Uniform Random Variate Generation, Springer 1986, ch. XI).  Shapes of
 * 1/2 or more, as the completion's are, cannot all underflow to 0: U^(1/a)
 * with U >= 2^-54 (kat_rng_next_double) is at least 2^-108. */
void kvl_dirichlet(struct kat_rng *r, size_t K, const double *alpha, double *p)
{
    double sum = 0;
    for (size_t l = 0; l < K; l++)
        sum += p[l] = kvl_gamma(r, alpha[l]);
    for (size_t l = 0; l < K; l++)
        p[l] /= sum;
}

/* The multinomial as a chain of conditional binomials (Devroye, ch. XI); the
 * last category takes what is left. */
void kvl_multinomial(struct kat_rng *r, size_t K, uint64_t n, const double *p, uint64_t *y)
{
    for (size_t l = 0; l < K; l++) {
        if (l + 1 == K) {
            y[l] = n;
            break;
        }
        double rest = 0;
        for (size_t i = l; i < K; i++)
            rest += p[i];
        double q = rest > 0 ? p[l] / rest : 0;
        y[l] = kvl_binomial(r, n, q > 1 ? 1 : q);
        n -= y[l];
    }
}
