/*
 * test_validators_labels.c - agreement with human labels (validators/labels.c;
 * docs/validators.md, "Human labels").
 *
 * The external ground truth: the paper's Table 8 and Appendix H.  Table H.1
 * prints the 18 strata (N_h, n_h, pi_h, labels); tests/validators/ov120.jsonl
 * carries them, with the units' selected certificates and the strata's
 * certificate cells reconstructed (the fixture's header says how).  From it
 * the six point estimates of Table 8 come out to the printed digits, and the
 * posterior intervals within Monte Carlo error of the printed ones where
 * they depend on Table H.1 alone (the unknown share; the INCONCL cell, which
 * Table 5 fixes), and within 0.01 where they depend on the reconstructed
 * cells.  Then properties with known answers: a census gives a degenerate
 * interval at the estimate, a seed gives the same output, the posterior mean
 * and spread of a completed count are the beta-binomial's, and the
 * design-weighted estimates are the hand-computed ratios.  Then every
 * refusal, naming the file and the line.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "labels.h"
#include "ledger.h"
#include "variates.h"

static void read_design(struct kvl_design *d, const char *path, const struct kvs_ledger *l)
{
    char err[1024];
    int rc = kvl_read(d, path, l, err, sizeof err);
    cr_assert_eq(rc, 0, "%s: %s", path, err);
}

static char *write_temp(const char *text)
{
    char *path = strdup("/tmp/kvl_test_XXXXXX");
    int fd = mkstemp(path);
    cr_assert(fd >= 0);
    FILE *f = fdopen(fd, "w");
    fputs(text, f);
    fclose(f);
    return path;
}

/* Table 8: estimate, interval, as printed (proportions; shares in percent). */
static const struct {
    const char *printed, *low, *high;
    double scale;
} table8[KVL_VALIDITY] = {
    [KVL_SENSITIVITY] = { "0.964", "0.917", "0.967", 1 },
    [KVL_SPECIFICITY] = { "0.626", "0.518", "0.673", 1 },
    [KVL_PPV] = { "0.763", "0.638", "0.810", 1 },
    [KVL_NPV] = { "0.934", "0.848", "0.943", 1 },
    [KVL_UNKNOWN_SHARE] = { "3.9", "3.9", "11.2", 100 },
    [KVL_INCONCL_DEFECT] = { "39.5", "29.3", "57.8", 100 },
};

static void printed(char *buf, size_t n, double v, double scale)
{
    snprintf(buf, n, scale == 1 ? "%.3f" : "%.1f", v * scale);
}

Test(ov120, sample_cells_are_appendix_h)
{
    struct kvl_design d;
    read_design(&d, VALIDATORS_DIR "/ov120.jsonl", NULL);
    cr_assert_eq(d.n_units, 120);
    cr_assert_eq(d.n_strata, 18);
    uint64_t c[KVL_CELLS][KVL_LABELS];
    kvl_sample_cells(&d, c);
    /* "PASS (44 clean, 3 defect), FAIL (40 defect, 13 clean, 1 unknown), and INCONCL (8 defect, 8 clean, 3 unknown)" */
    const uint64_t want[KVL_CELLS][KVL_LABELS] = { { 3, 44, 0 }, { 40, 13, 1 }, { 8, 8, 3 } };
    for (int j = 0; j < KVL_CELLS; j++)
        for (int l = 0; l < KVL_LABELS; l++)
            cr_expect_eq(c[j][l], want[j][l], "%s %s: %llu, Appendix H has %llu", kvl_cell_names[j],
                         kvl_label_names[l], (unsigned long long)c[j][l], (unsigned long long)want[j][l]);
    uint64_t population = 0;
    for (size_t h = 0; h < d.n_strata; h++)
        population += d.strata[h].N;
    cr_expect_eq(population, 716);
    kvl_free(&d);
}

Test(ov120, point_estimates_reproduce_table_8)
{
    struct kvl_design d;
    read_design(&d, VALIDATORS_DIR "/ov120.jsonl", NULL);
    struct kvl_estimate e[KVL_VALIDITY];
    /* Table H.1's printed pi_h (three decimals), then the exact n_h / N_h (the
     * paper computes with six decimals): both print Table 8's digits. */
    for (int exact = 0; exact < 2; exact++) {
        if (exact)
            for (size_t h = 0; h < d.n_strata; h++)
                d.strata[h].pi = (double)d.strata[h].n / (double)d.strata[h].N;
        cr_assert_eq(kvl_validity_estimates(&d, 1, 1, e), 0);
        for (int m = 0; m < KVL_VALIDITY; m++) {
            char text[32];
            printed(text, sizeof text, e[m].estimate, table8[m].scale);
            cr_expect_str_eq(text, table8[m].printed, "%s (%s pi): %s (%.6f), Table 8 prints %s", kvl_validity_names[m],
                             exact ? "exact" : "printed", text, e[m].estimate, table8[m].printed);
        }
    }
    kvl_free(&d);
}

Test(ov120, intervals_near_table_8, .timeout = 60)
{
    struct kvl_design d;
    read_design(&d, VALIDATORS_DIR "/ov120.jsonl", NULL);
    struct kvl_estimate e[KVL_VALIDITY];
    cr_assert_eq(kvl_validity_estimates(&d, 2000, 20260817, e), 0);
    for (int m = 0; m < KVL_VALIDITY; m++) {
        /* The unknown share's completion depends on N_h - n_h only (the cells of
         * a stratum share its draw) and the INCONCL cells are Table 5's.  With
         * kat_rng and variates.c, over 500 seeds at B = 2000 the endpoints'
         * Monte Carlo sd is at most 0.0047 (the INCONCL cell's; 0.16 points for
         * the unknown share's upper end, 11.28% on average), so 0.012 is 2.5 sds
         * with the printed rounding.  The other four depend on the
         * reconstructed cells: 0.01 (their sds 0.0005 to 0.0029).  27 of those
         * 500 seeds miss at least one of the twelve checks; 20260817 is the paper's
         * validity seed, not one picked to pass. */
        double tol = m >= KVL_UNKNOWN_SHARE ? 0.012 : 0.01;
        double low = atof(table8[m].low) / table8[m].scale, high = atof(table8[m].high) / table8[m].scale;
        cr_expect(fabs(e[m].low - low) <= tol, "%s: low %.4f, Table 8 prints %s", kvl_validity_names[m], e[m].low,
                  table8[m].low);
        cr_expect(fabs(e[m].high - high) <= tol, "%s: high %.4f, Table 8 prints %s", kvl_validity_names[m], e[m].high,
                  table8[m].high);
        cr_expect_eq(e[m].defined, 2000);
    }
    /* Observed unknowns stay fixed and completion can only add more: in every
     * replicate the share is at least the observed 4 of 716. */
    cr_expect_geq(e[KVL_UNKNOWN_SHARE].low, 4.0 / 716);
    kvl_free(&d);
}

Test(completion, a_seed_gives_the_same_output)
{
    struct kvl_design d;
    read_design(&d, VALIDATORS_DIR "/ov120.jsonl", NULL);
    struct kvl_estimate a[KVL_VALIDITY], b[KVL_VALIDITY], c[KVL_VALIDITY];
    cr_assert_eq(kvl_validity_estimates(&d, 300, 7, a), 0);
    cr_assert_eq(kvl_validity_estimates(&d, 300, 7, b), 0);
    cr_assert_eq(kvl_validity_estimates(&d, 300, 8, c), 0);
    cr_expect_eq(memcmp(a, b, sizeof a), 0, "the same seed gave different intervals");
    int differ = 0;
    for (int m = 0; m < KVL_VALIDITY; m++)
        differ |= a[m].low != c[m].low || a[m].high != c[m].high || a[m].mean != c[m].mean;
    cr_expect(differ, "seeds 7 and 8 gave identical draws");
    kvl_free(&d);
}

Test(completion, a_census_has_a_degenerate_interval)
{
    char *path = write_temp("{\"stratum\": \"a\", \"N\": 3}\n"
                            "{\"id\": \"1\", \"stratum\": \"a\", \"label\": \"defect\", \"certificate\": \"FAIL\"}\n"
                            "{\"id\": \"2\", \"stratum\": \"a\", \"label\": \"clean\", \"certificate\": \"FAIL\"}\n"
                            "{\"id\": \"3\", \"stratum\": \"a\", \"label\": \"unknown\", \"certificate\": \"FAIL\"}\n"
                            "{\"stratum\": \"b\", \"N\": 2, \"cells\": {\"PASS\": 1, \"INCONCL\": 1}}\n"
                            "{\"id\": \"4\", \"stratum\": \"b\", \"label\": \"defect\", \"certificate\": \"PASS\"}\n"
                            "{\"id\": \"5\", \"stratum\": \"b\", \"label\": \"defect\", \"certificate\": \"INCONCL\"}\n");
    struct kvl_design d;
    read_design(&d, path, NULL);
    struct kvl_estimate e[KVL_VALIDITY];
    cr_assert_eq(kvl_validity_estimates(&d, 200, 3, e), 0);
    /* Hand: FAIL 1 defect 1 clean 1 unknown, PASS 1 defect, INCONCL 1 defect. */
    const double want[KVL_VALIDITY] = { 0.5, 0.0, 0.5, 0.0, 1.0 / 5, 1.0 };
    for (int m = 0; m < KVL_VALIDITY; m++) {
        cr_expect_float_eq(e[m].estimate, want[m], 1e-12, "%s: %g, by hand %g", kvl_validity_names[m], e[m].estimate,
                           want[m]);
        cr_expect_eq(e[m].low, e[m].estimate, "%s: census low %g != %g", kvl_validity_names[m], e[m].low, e[m].estimate);
        cr_expect_eq(e[m].high, e[m].estimate, "%s: census high %g", kvl_validity_names[m], e[m].high);
    }
    kvl_free(&d);
    unlink(path);
    free(path);
}

/* The defect share of all units. */
static void defect_share(const double T[KVL_CELLS][KVL_LABELS], double *out)
{
    double all = 0;
    for (int j = 0; j < KVL_CELLS; j++)
        for (int l = 0; l < KVL_LABELS; l++)
            all += T[j][l];
    *out = (T[KVL_PASS][KVL_DEFECT] + T[KVL_FAIL][KVL_DEFECT] + T[KVL_INCONCL][KVL_DEFECT]) / all;
}

Test(completion, posterior_mean_and_sd_are_the_beta_binomials, .timeout = 60)
{
    /* One stratum, N = 200, n = 20 with 6 defect, 12 clean, 2 unknown spread
     * over two cells (one shared draw).  The m = 180 unlabelled units' defects
     * are beta-binomial(m, a, b) with a = 6.5, b = 20 + 1.5 - 6.5 = 15: mean
     * m a / (a + b), variance m a b (a + b + m) / ((a + b)^2 (a + b + 1)). */
    const uint64_t N[1][KVL_CELLS] = { { 120, 80, 0 } };
    const uint64_t x[1][KVL_CELLS][KVL_LABELS] = { { { 4, 6, 0 }, { 2, 6, 2 }, { 0, 0, 0 } } };
    const double w[1] = { 10 };
    const unsigned B = 40000;
    struct kvl_estimate e;
    cr_assert_eq(kvl_complete(1, w, N, x, defect_share, 1, B, 42, &e), 0);
    const double m = 180, a = 6.5, b = 15;
    const double mean = (6 + m * a / (a + b)) / 200;
    const double sd = sqrt(m * a * b * (a + b + m) / ((a + b) * (a + b) * (a + b + 1))) / 200;
    cr_expect_float_eq(e.estimate, 6.0 / 20, 1e-12, "weighted estimate %g", e.estimate);
    cr_expect(fabs(e.mean - mean) <= 4 * sd / sqrt(B), "posterior mean %.5f, beta-binomial %.5f (se %.5f)", e.mean,
              mean, sd / sqrt(B));
    cr_expect(fabs(e.sd / sd - 1) <= 0.03, "posterior sd %.5f, beta-binomial %.5f", e.sd, sd);
    cr_expect(e.low < mean && mean < e.high);
}

/* The variates themselves (variates.c, our own code in place of GSL's),
 * against closed forms: the draws' moments within 4 standard errors, and the
 * binomial's whole distribution by a chi-square test against its exact pmf. */
Test(variates, gamma_moments, .timeout = 60)
{
    /* Gamma(a): mean a, variance a.  a = 1/2 is the Jeffreys prior's empty
     * category (the U^(1/a) boost), 7.3 the Marsaglia-Tsang loop itself. */
    const double shapes[] = { 0.5, 7.3 };
    const int M = 200000;
    struct kat_rng r;
    kat_rng_seed(&r, 2026);
    for (int i = 0; i < 2; i++) {
        const double a = shapes[i];
        double s = 0, s2 = 0;
        for (int k = 0; k < M; k++) {
            double g = kvl_gamma(&r, a);
            cr_assert(g > 0 && isfinite(g), "gamma(%g) drew %g", a, g);
            s += g;
            s2 += g * g;
        }
        double mean = s / M, var = s2 / M - mean * mean;
        /* the variance's standard error: sqrt((mu4 - a^2) / M), mu4 = 3a^2 + 6a */
        cr_expect(fabs(mean - a) <= 4 * sqrt(a / M), "gamma(%g): mean %.5f", a, mean);
        cr_expect(fabs(var - a) <= 4 * sqrt((2 * a * a + 6 * a) / M), "gamma(%g): variance %.5f", a, var);
    }
}

static double binomial_log_pmf(uint64_t n, uint64_t k, double p)
{
    return lgamma(n + 1.0) - lgamma(k + 1.0) - lgamma((double)(n - k) + 1) + (double)k * log(p) +
           (double)(n - k) * log1p(-p);
}

Test(variates, binomial_is_exact, .timeout = 60)
{
    /* n = 180 goes through three of Knuth's beta splits (180, then 90 or 89,
     * then 45 or 44, down to 22) before the Bernoulli count; p = 0.05 and 0.7 take both branches.
     * Cells pooled until 20 expected, the remainder into the last; the bound is
     * chi-square's 0.999 quantile (Wilson-Hilferty).  Over 16 seeds with 10^6
     * draws, the statistic's z-score averaged 0.10 (n 180, p 0.05) and 0.01
     * (n 65, p 0.7), as Bernoulli counts' did (-0.09, 0.14). */
    const struct {
        uint64_t n;
        double p;
    } cases[] = { { 180, 0.05 }, { 180, 0.7 }, { 65, 0.3 } };
    const int M = 100000;
    struct kat_rng r;
    kat_rng_seed(&r, 18);
    for (int c = 0; c < 3; c++) {
        const uint64_t n = cases[c].n;
        const double p = cases[c].p;
        double *count = calloc(n + 1, sizeof *count);
        cr_assert(count);
        for (int k = 0; k < M; k++) {
            uint64_t y = kvl_binomial(&r, n, p);
            cr_assert(y <= n);
            count[y]++;
        }
        double E[200], O[200], e = 0, o = 0;
        int bins = 0;
        for (uint64_t k = 0; k <= n; k++) {
            e += M * exp(binomial_log_pmf(n, k, p));
            o += count[k];
            if (e >= 20) {
                E[bins] = e;
                O[bins++] = o;
                e = o = 0;
            }
        }
        E[bins - 1] += e;
        O[bins - 1] += o;
        double chi = 0;
        for (int b = 0; b < bins; b++)
            chi += (O[b] - E[b]) * (O[b] - E[b]) / E[b];
        const double df = bins - 1, h = 2 / (9 * df);
        const double bound = df * pow(1 - h + 3.09 * sqrt(h), 3);
        cr_expect(chi <= bound, "binomial(%llu, %g): chi-square %.1f on %g df, 0.999 quantile %.1f",
                  (unsigned long long)n, p, chi, df, bound);
        free(count);
    }
    /* N_h may be 10^9: the splits keep that to about 25 betas a draw. */
    const uint64_t n = 1000000000;
    const double p = 0.3;
    double s = 0, s2 = 0;
    const int K = 20000;
    for (int k = 0; k < K; k++) {
        double y = (double)kvl_binomial(&r, n, p);
        s += y;
        s2 += y * y;
    }
    double mean = s / K, var = s2 / K - mean * mean, want = (double)n * p * (1 - p);
    cr_expect(fabs(mean - (double)n * p) <= 4 * sqrt(want / K), "binomial(1e9, 0.3): mean %.1f", mean);
    cr_expect(fabs(var / want - 1) <= 4 * sqrt(2.0 / K), "binomial(1e9, 0.3): variance %.4g, want %.4g", var, want);
}

Test(variates, multinomial_sums_and_means)
{
    const double p[3] = { 0.2, 0.5, 0.3 };
    const int M = 100000;
    struct kat_rng r;
    kat_rng_seed(&r, 3);
    double s[3] = { 0 };
    for (int k = 0; k < M; k++) {
        uint64_t y[3];
        kvl_multinomial(&r, 3, 57, p, y);
        cr_assert_eq(y[0] + y[1] + y[2], 57);
        for (int l = 0; l < 3; l++)
            s[l] += (double)y[l];
    }
    for (int l = 0; l < 3; l++)
        cr_expect(fabs(s[l] / M - 57 * p[l]) <= 4 * sqrt(57 * p[l] * (1 - p[l]) / M), "category %d: mean %.4f, want %.4f",
                  l, s[l] / M, 57 * p[l]);
}

Test(completion, weights_are_one_over_pi)
{
    /* Stratum a: 10 units, 2 drawn (weight 5): FAIL defect, PASS defect.
     * Stratum b: 9 units, 3 drawn (weight 3): FAIL defect, FAIL clean, PASS clean.
     * Sensitivity (5 + 3) / (5 + 5 + 3) = 8/13; specificity 3 / (3 + 3) = 1/2;
     * PPV 8 / (8 + 3) = 8/11; NPV 3 / (3 + 5) = 3/8. */
    char *path = write_temp("{\"stratum\": \"a\", \"N\": 10, \"n\": 2, \"cells\": {\"PASS\": 5, \"FAIL\": 5}}\n"
                            "{\"stratum\": \"b\", \"N\": 9, \"pi\": 0.3333, \"cells\": {\"PASS\": 4, \"FAIL\": 5}}\n"
                            "{\"id\": \"1\", \"stratum\": \"a\", \"label\": \"defect\", \"certificate\": \"FAIL\"}\n"
                            "{\"id\": \"2\", \"stratum\": \"a\", \"label\": \"defect\", \"certificate\": \"PASS\"}\n"
                            "{\"id\": \"3\", \"stratum\": \"b\", \"label\": \"defect\", \"certificate\": \"FAIL\"}\n"
                            "{\"id\": \"4\", \"stratum\": \"b\", \"label\": \"clean\", \"certificate\": \"FAIL\"}\n"
                            "{\"id\": \"5\", \"stratum\": \"b\", \"label\": \"clean\", \"certificate\": \"PASS\"}\n");
    struct kvl_design d;
    read_design(&d, path, NULL);
    d.strata[1].pi = 1.0 / 3; /* the file's 0.3333 is accepted (within 5e-4 of 3/9); compare exactly */
    struct kvl_estimate e[KVL_VALIDITY];
    cr_assert_eq(kvl_validity_estimates(&d, 10, 1, e), 0);
    cr_expect_float_eq(e[KVL_SENSITIVITY].estimate, 8.0 / 13, 1e-12);
    cr_expect_float_eq(e[KVL_SPECIFICITY].estimate, 0.5, 1e-12);
    cr_expect_float_eq(e[KVL_PPV].estimate, 8.0 / 11, 1e-12);
    cr_expect_float_eq(e[KVL_NPV].estimate, 3.0 / 8, 1e-12);
    cr_expect(isnan(e[KVL_INCONCL_DEFECT].estimate), "no INCONCL unit: undefined, not 0");
    cr_expect_eq(e[KVL_INCONCL_DEFECT].defined, 0);
    kvl_free(&d);
    unlink(path);
    free(path);
}

Test(false_accepts, decided_and_all_accepted_bounds)
{
    /* One stratum of 20 (weight 4): 5 drawn.  'v' accepts 4 PASS and 8 FAIL and
     * 4 INCONCL units of the population; of the drawn it accepts u1 (FAIL
     * defect), u2 (PASS clean), u3 (INCONCL defect), and rejects u4, u5.
     * Decided: 1 defect of 2 known PASS/FAIL = 1/2; all accepted: 2 of 3, with
     * no unknown among the drawn, so the lower and upper estimates coincide,
     * while the completion, which can draw unknowns, separates their intervals. */
    char *path = write_temp(
        "{\"stratum\": \"s\", \"N\": 20, \"cells\": {\"PASS\": 6, \"FAIL\": 10, \"INCONCL\": 4}, "
        "\"accepted\": {\"v\": {\"PASS\": 4, \"FAIL\": 8, \"INCONCL\": 4}}}\n"
        "{\"id\": \"u1\", \"stratum\": \"s\", \"label\": \"defect\", \"certificate\": \"FAIL\", \"weak_decisions\": {\"v\": \"ACCEPT\"}}\n"
        "{\"id\": \"u2\", \"stratum\": \"s\", \"label\": \"clean\", \"certificate\": \"PASS\", \"weak_decisions\": {\"v\": \"ACCEPT\"}}\n"
        "{\"id\": \"u3\", \"stratum\": \"s\", \"label\": \"defect\", \"certificate\": \"INCONCL\", \"weak_decisions\": {\"v\": \"ACCEPT\"}}\n"
        "{\"id\": \"u4\", \"stratum\": \"s\", \"label\": \"unknown\", \"certificate\": \"FAIL\", \"weak_decisions\": {\"v\": \"REJECT\"}}\n"
        "{\"id\": \"u5\", \"stratum\": \"s\", \"label\": \"clean\", \"certificate\": \"PASS\", \"weak_decisions\": {\"v\": \"REJECT\"}}\n");
    struct kvl_design d;
    read_design(&d, path, NULL);
    cr_assert_eq(d.n_validators, 1);
    struct kvl_estimate e[KVL_FA];
    cr_assert_eq(kvl_false_accept_estimates(&d, 0, 2000, 20260826, e), 0);
    cr_expect_float_eq(e[KVL_FA_DECIDED].estimate, 0.5, 1e-12);
    cr_expect_float_eq(e[KVL_FA_LOWER].estimate, 2.0 / 3, 1e-12);
    cr_expect_float_eq(e[KVL_FA_UPPER].estimate, 2.0 / 3, 1e-12);
    /* Each replicate's upper share is at least its lower one, so are the
     * quantiles; the unknowns the completion draws make the means differ. */
    cr_expect(e[KVL_FA_UPPER].low >= e[KVL_FA_LOWER].low && e[KVL_FA_UPPER].high >= e[KVL_FA_LOWER].high);
    cr_expect(e[KVL_FA_UPPER].mean > e[KVL_FA_LOWER].mean, "upper mean %.4f, lower %.4f: unknowns drawn should "
              "separate them", e[KVL_FA_UPPER].mean, e[KVL_FA_LOWER].mean);
    /* Accepted strata only: 16 accepted units, 3 drawn; the posterior of the
     * defect share of all accepted is (2 + E[Y_d]) / 16 with Y_d ~
     * beta-binomial(13, 2.5, 2) in expectation 13 * 2.5 / 4.5. */
    double mean = (2 + 13 * 2.5 / 4.5) / 16;
    double se = e[KVL_FA_LOWER].sd / sqrt(2000);
    cr_expect(fabs(e[KVL_FA_LOWER].mean - mean) <= 4 * se, "posterior mean %.4f, expected %.4f (se %.4f)",
              e[KVL_FA_LOWER].mean, mean, se);
    kvl_free(&d);
    unlink(path);
    free(path);
}

Test(labels, joined_to_the_ledger_by_id)
{
    struct kvs_ledger l = { 0 };
    char err[1024];
    cr_assert_eq(kvs_ledger_read(&l, VALIDATORS_DIR "/ledger.jsonl", err, sizeof err), 0, "%s", err);
    /* a1 FAIL, a5 PASS, a7 INCONCL in the ledger; 'lax' accepts all three. */
    char *path = write_temp("{\"stratum\": \"s\", \"N\": 6, \"cells\": {\"PASS\": 2, \"FAIL\": 2, \"INCONCL\": 2}, "
                            "\"accepted\": {\"lax\": {\"PASS\": 2, \"FAIL\": 2, \"INCONCL\": 2}}}\n"
                            "{\"id\": \"a1\", \"stratum\": \"s\", \"label\": \"defect\"}\n"
                            "{\"id\": \"a5\", \"stratum\": \"s\", \"label\": \"clean\"}\n"
                            "{\"id\": \"a7\", \"stratum\": \"s\", \"label\": \"unknown\", \"certificate\": \"INCONCL\"}\n");
    struct kvl_design d;
    read_design(&d, path, &l);
    cr_expect_eq(d.units[0].cell, KVL_FAIL);
    cr_expect_eq(d.units[1].cell, KVL_PASS);
    cr_expect_eq(d.units[2].cell, KVL_INCONCL);
    for (int u = 0; u < 3; u++)
        cr_expect_eq(d.units[u].decision[0], KVS_ACCEPT, "unit %d: the ledger's 'lax' decision", u);
    kvl_free(&d);
    unlink(path);
    free(path);
    kvs_ledger_free(&l);
}

static void refused(const char *text, const char *expect, int with_ledger)
{
    struct kvs_ledger l = { 0 };
    char err[1024];
    if (with_ledger)
        cr_assert_eq(kvs_ledger_read(&l, VALIDATORS_DIR "/ledger.jsonl", err, sizeof err), 0, "%s", err);
    char *path = write_temp(text);
    struct kvl_design d;
    int rc = kvl_read(&d, path, with_ledger ? &l : NULL, err, sizeof err);
    cr_expect_eq(rc, -1, "accepted: %s", text);
    char want[1200];
    snprintf(want, sizeof want, "%s%s", path, expect);
    cr_expect(strstr(err, want) != NULL, "error '%s' lacks '%s'", err, want);
    kvl_free(&d);
    unlink(path);
    free(path);
    kvs_ledger_free(&l);
}

#define S "{\"stratum\": \"s\", \"N\": 4}\n"
#define U(id, label, cert) "{\"id\": \"" id "\", \"stratum\": \"s\", \"label\": \"" label "\", \"certificate\": \"" cert "\"}\n"

Test(labels, refusals_name_the_file_and_line)
{
    refused(S "{\"id\": \"1\",\n", ":2: not a JSON object", 0);
    refused(S U("1", "defect", "FAIL") "{\"id\": \"2\"}", ":3: the last line is incomplete", 0);
    refused("{\"stratum\": \"s\"}\n", ":1: stratum 's' has no \"N\"", 0);
    refused("{\"stratum\": \"s\", \"N\": 2, \"n\": 3}\n", ":1: stratum 's': n_h 3 > N_h 2", 0);
    refused("{\"stratum\": \"s\", \"N\": 2.5}\n", ":1: stratum 's': \"N\" must be a positive integer", 0);
    refused("{\"stratum\": \"s\", \"N\": 2000000000}\n", ":1: stratum 's': \"N\" must be a positive integer", 0);
    refused("{\"stratum\": \"s\", \"N\": 2}\n" U("1", "defect", "FAIL") U("2", "defect", "FAIL") U("3", "clean", "FAIL"),
            ":1: stratum 's': n_h 3 > N_h 2", 0);
    refused("{\"stratum\": \"s\", \"N\": 4, \"pi\": 0}\n", ":1: stratum 's': \"pi\" must be a number in (0, 1]", 0);
    refused("{\"stratum\": \"s\", \"N\": 4, \"pi\": 1.5}\n", ":1: stratum 's': \"pi\" must be a number in (0, 1]", 0);
    refused("{\"stratum\": \"s\", \"N\": 4, \"pi\": 0.5}\n" U("1", "defect", "FAIL"),
            ":1: stratum 's': pi 0.5 disagrees with n_h/N_h = 1/4", 0);
    refused("{\"stratum\": \"s\", \"N\": 4, \"n\": 2}\n" U("1", "defect", "FAIL"),
            ":1: stratum 's' declares n 2 but 1 units name it", 0);
    refused("{\"stratum\": \"s\", \"N\": 4}\n", ":1: stratum 's' has no labelled units", 0);
    refused("{\"stratum\": \"s\", \"N\": 4, \"cells\": {\"PASS\": 1, \"FAIL\": 2}}\n",
            ":1: stratum 's': its cells sum to 3, not N_h 4", 0);
    refused("{\"stratum\": \"s\", \"N\": 4, \"cells\": {\"PASS\": 1, \"FAIL\": 3}}\n" U("1", "defect", "PASS")
                U("2", "defect", "PASS"),
            ":1: stratum 's': 2 labelled units are PASS but its cells have 1", 0);
    refused(S U("1", "defect", "FAIL") U("2", "clean", "PASS"), ":1: stratum 's': its units have several certificates", 0);
    refused(U("1", "defect", "FAIL") S, ":1: unit '1': stratum 's' is not declared", 0);
    refused(S U("1", "bad", "FAIL"), ":2: unit '1': \"label\" must be defect, clean or unknown", 0);
    refused(S U("1", "defect", "MAYBE"), ":2: unit '1': \"certificate\" must be PASS, FAIL or INCONCL", 0);
    refused(S U("1", "defect", "FAIL") U("1", "clean", "FAIL"), ":3: unit '1' again (line 2 has it)", 0);
    refused(S "{\"id\": \"zz\", \"stratum\": \"s\", \"label\": \"defect\"}\n",
            ":2: unit 'zz' has no \"certificate\" and no ledger record", 1);
    refused(S U("a1", "defect", "PASS"), ":2: unit 'a1': certificate PASS, but the ledger's record has FAIL", 1);
    refused("{\"stratum\": \"s\", \"N\": 4, \"accepted\": {\"v\": {\"FAIL\": 1}}}\n" U("1", "defect", "FAIL"),
            ":2: unit '1' has no decision of validator 'v'", 0);
    refused("{\"stratum\": \"s\", \"N\": 4, \"accepted\": {\"v\": {\"FAIL\": 5}}}\n"
            "{\"id\": \"1\", \"stratum\": \"s\", \"label\": \"defect\", \"certificate\": \"FAIL\", "
            "\"weak_decisions\": {\"v\": \"ACCEPT\"}}\n",
            ":1: stratum 's': validator 'v' accepts 5 FAIL units of 4", 0);
    refused("{\"stratum\": \"s\", \"N\": 4, \"accepted\": {\"v\": {\"FAIL\": 1}}}\n"
            "{\"stratum\": \"t\", \"N\": 4}\n",
            ":2: stratum 't' gives no accepted counts of validator 'v'", 0);
    refused("{\"N\": 3}\n", ":1: no \"stratum\" string", 0);
    refused("{\"x\": 3}\n", ":1: neither a unit", 0);
}
