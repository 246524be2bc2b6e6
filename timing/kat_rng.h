/*
 * kat_rng.h - the project's one pseudo-random generator: xoshiro256**
 * (D. Blackman and S. Vigna, "Scrambled linear pseudorandom number
 * generators", ACM TOMS 47(4), 2021; https://prng.di.unimi.it/), its state
 * filled by four outputs of splitmix64 (G. Steele, D. Lea and C. Flood,
 * "Fast splittable pseudorandom number generators", OOPSLA 2014), as the
 * generator's authors recommend.  The timing bootstrap (timing_stats.c) and
 * the human-label completion (validators/labels.c) both draw from it.
 *
 * Header-only (static inline) so that the timing bootstrap's inner loop keeps
 * its speed and nothing new has to be linked; libc only.
 */
#ifndef KAUDIT_KAT_RNG_H
#define KAUDIT_KAT_RNG_H

#include <stdint.h>

struct kat_rng {
    uint64_t s[4];
};

static inline uint64_t kat_splitmix64(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* Any seed, 0 included: splitmix64's four outputs are distinct (its output
 * function is a bijection of distinct counters), so the state is never all zero. */
static inline void kat_rng_seed(struct kat_rng *r, uint64_t seed)
{
    for (int i = 0; i < 4; i++)
        r->s[i] = kat_splitmix64(&seed);
}

static inline uint64_t kat_rng_rotl(uint64_t x, int k)
{
    return (x << k) | (x >> (64 - k));
}

static inline uint64_t kat_rng_next_u64(struct kat_rng *r)
{
    uint64_t *s = r->s;
    uint64_t result = kat_rng_rotl(s[1] * 5, 7) * 9, t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = kat_rng_rotl(s[3], 45);
    return result;
}

/* Uniform in [0, n), n > 0: draws at or above the largest multiple of n are
 * thrown back, so there is no modulo bias. */
static inline uint64_t kat_rng_below(struct kat_rng *r, uint64_t n)
{
    uint64_t limit = UINT64_MAX - UINT64_MAX % n, x;
    do
        x = kat_rng_next_u64(r);
    while (x >= limit);
    return x % n;
}

/* Uniform on the open interval (0, 1): the top 53 bits, centred in their
 * 2^-53 bin, so never 0 (log and u^(1/a) stay finite and positive) and never 1. */
static inline double kat_rng_next_double(struct kat_rng *r)
{
    return ((double)(kat_rng_next_u64(r) >> 11) + 0.5) * 0x1p-53;
}

#endif
