/*
 * test_validators.c - the validator statistics (validators/; docs/validators.md).
 *
 * The external ground truth: the paper's Table B.2 (397 FAIL-certificate
 * records, the 15 pairs of six validators), whose b/c discordance counts,
 * exact two-sided p-values and Holm adjustments over the 15 pairs are
 * reproduced here to the printed digits.  Then the rates, bounds and outcome
 * codes on a ledger whose answers are counted by hand, and the reader's
 * refusals, each naming the file and line.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ledger.h"
#include "validator_stats.h"

/* Table B.2, in its order; p values as printed (three significant digits). */
static const struct {
    const char *pair;
    unsigned b, c;
    const char *p, *holm;
} table_b2[15] = {
    { "CUDA-Agent vs. KernelBench", 112, 17, "2.45e-18", "2.45e-17" },
    { "CUDA-Agent vs. KernelGYM", 127, 0, "1.18e-38", "1.65e-37" },
    { "CUDA-Agent vs. robust-kbench", 106, 44, "4.40e-07", "1.76e-06" },
    { "CUDA-Agent vs. DeepReinforce", 66, 0, "2.71e-20", "2.98e-19" },
    { "CUDA-Agent vs. MusaCoder", 37, 71, "1.38e-03", "4.14e-03" },
    { "KernelBench vs. KernelGYM", 32, 0, "4.66e-10", "2.79e-09" },
    { "KernelBench vs. robust-kbench", 2, 35, "1.02e-08", "5.12e-08" },
    { "KernelBench vs. DeepReinforce", 29, 58, "2.48e-03", "4.96e-03" },
    { "KernelBench vs. MusaCoder", 22, 151, "7.43e-25", "8.91e-24" },
    { "KernelGYM vs. robust-kbench", 2, 67, "8.19e-18", "7.37e-17" },
    { "KernelGYM vs. DeepReinforce", 2, 63, "1.16e-16", "9.31e-16" },
    { "KernelGYM vs. MusaCoder", 2, 163, "5.86e-46", "8.79e-45" },
    { "robust-kbench vs. DeepReinforce", 57, 53, "7.75e-01", "7.75e-01" },
    { "robust-kbench vs. MusaCoder", 31, 127, "5.38e-15", "3.77e-14" },
    { "DeepReinforce vs. MusaCoder", 0, 100, "1.58e-30", "2.05e-29" },
};

Test(mcnemar, reproduces_table_b2_to_the_printed_digits)
{
    double p[15], holm[15];
    for (int i = 0; i < 15; i++) {
        p[i] = kvs_mcnemar_exact(table_b2[i].b, table_b2[i].c);
        char text[32];
        snprintf(text, sizeof text, "%.2e", p[i]);
        cr_expect_str_eq(text, table_b2[i].p, "%s: exact p %s, the paper prints %s", table_b2[i].pair, text,
                         table_b2[i].p);
    }
    cr_assert_eq(kvs_holm(p, 15, holm), 0);
    int significant = 0;
    for (int i = 0; i < 15; i++) {
        char text[32];
        snprintf(text, sizeof text, "%.2e", holm[i]);
        cr_expect_str_eq(text, table_b2[i].holm, "%s: Holm p %s, the paper prints %s", table_b2[i].pair, text,
                         table_b2[i].holm);
        significant += holm[i] < 0.05;
    }
    /* "14 of 15 pairs have adjusted p < 0.05, with robust-kbench vs. DeepReinforce the exception" */
    cr_expect_eq(significant, 14);
}

Test(mcnemar, edge_cases)
{
    cr_expect_eq(kvs_mcnemar_exact(0, 0), 1.0);
    cr_expect_eq(kvs_mcnemar_exact(5, 5), 1.0);
    cr_expect_eq(kvs_mcnemar_exact(3, 9), kvs_mcnemar_exact(9, 3));
    /* b + c = 1: P(X <= 0) = 1/2, doubled */
    cr_expect_eq(kvs_mcnemar_exact(1, 0), 1.0);
    /* b + c = 5, all one way: 2 / 32 */
    cr_expect_float_eq(kvs_mcnemar_exact(0, 5), 0.0625, 1e-15);
    /* b = 1, c = 6: 2 (1 + 7) / 128 */
    cr_expect_float_eq(kvs_mcnemar_exact(1, 6), 0.125, 1e-15);
}

Test(holm, step_down_is_monotone_and_capped)
{
    const double p[4] = { 0.04, 0.01, 0.03, 0.5 };
    double a[4];
    cr_assert_eq(kvs_holm(p, 4, a), 0);
    /* sorted 0.01 0.03 0.04 0.5: x4 0.04, x3 0.09, x2 0.08 -> 0.09, x1 0.5 */
    cr_expect_float_eq(a[1], 0.04, 1e-15);
    cr_expect_float_eq(a[2], 0.09, 1e-15);
    cr_expect_float_eq(a[0], 0.09, 1e-15);
    cr_expect_float_eq(a[3], 0.5, 1e-15);
    const double q[2] = { 0.8, 0.9 };
    cr_assert_eq(kvs_holm(q, 2, a), 0);
    cr_expect_eq(a[0], 1.0);
    cr_expect_eq(a[1], 1.0);
}

Test(rates, bounds_and_undefined_rates)
{
    double lo, hi;
    kvs_abstention_bounds(3, 10, 2, &lo, &hi);
    cr_expect_float_eq(lo, 3.0 / 12, 1e-15);
    cr_expect_float_eq(hi, 5.0 / 12, 1e-15);
    kvs_abstention_bounds(0, 0, 0, &lo, &hi);
    cr_expect(isnan(lo) && isnan(hi), "an empty denominator is undefined, never 0");
    cr_expect(isnan(kvs_rate(0, 0)));
}

static void read_ok(struct kvs_ledger *l, const char *name)
{
    char err[4096], path[1024];
    snprintf(path, sizeof path, "%s/%s", VALIDATORS_DIR, name);
    cr_assert_eq(kvs_ledger_read(l, path, err, sizeof err), 0, "%s", err);
}

static size_t index_of(char *const *names, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(names[i], name))
            return i;
    cr_assert_fail("no %s", name);
    return 0;
}

/* tests/validators/ledger.jsonl: 12 records in two corpora, three validators
   (its header comment lists what each should count). */
Test(ledger, rates_per_corpus_and_pooled)
{
    struct kvs_ledger l = { 0 };
    read_ok(&l, "ledger.jsonl");
    char err[4096];
    cr_assert_eq(kvs_decisions_read(&l, VALIDATORS_DIR "/decisions.jsonl", err, sizeof err), 0, "%s", err);
    cr_assert_eq(l.n_records, 12);
    cr_assert_eq(l.n_corpora, 2);
    cr_assert_eq(l.n_validators, 3);
    size_t strict = index_of(l.validators, l.n_validators, "strict"),
           lax = index_of(l.validators, l.n_validators, "lax"), weak = index_of(l.validators, l.n_validators, "weak");
    size_t alpha = index_of(l.corpora, l.n_corpora, "alpha");
    struct kvs_cell c;
    /* lax accepts everything: alpha has 4 FAIL, 2 PASS, 1 INCONCL */
    kvs_tally(&l, lax, alpha, &c);
    cr_expect_eq(c.records, 7);
    cr_expect_eq(c.decided, 6);
    cr_expect_eq(c.accepted_fail, 4);
    cr_expect_eq(c.accepted_decided, 6);
    cr_expect_eq(c.accepted_inconcl, 1);
    cr_expect_eq(c.fail, 4);
    cr_expect_eq(c.rejected_pass, 0);
    cr_expect_eq(c.outcome[KVS_C3B], 2);
    cr_expect_eq(c.outcome[KVS_C3C], 1);
    cr_expect_eq(c.outcome[KVS_C3A], 1);
    cr_expect_eq(c.outcome[KVS_C0], 2);
    cr_expect_eq(c.outcome[KVS_INCONCL], 1);
    /* pooled: beta adds 2 FAIL (one C2), 2 PASS, 1 INCONCL */
    kvs_tally(&l, lax, SIZE_MAX, &c);
    cr_expect_eq(c.accepted_fail, 6);
    cr_expect_eq(c.accepted_decided, 10);
    cr_expect_eq(c.accepted_inconcl, 2);
    cr_expect_eq(c.outcome[KVS_C2], 1);
    /* strict rejects every FAIL and one PASS; it decided 11 records (none on one INCONCL) */
    kvs_tally(&l, strict, SIZE_MAX, &c);
    cr_expect_eq(c.records, 11);
    cr_expect_eq(c.accepted_fail, 0);
    cr_expect_eq(c.accepted_decided, 3);
    cr_expect_eq(c.rejected_pass, 1);
    cr_expect_eq(c.pass, 4);
    cr_expect_eq(c.outcome[KVS_C1], 6);
    cr_expect_eq(c.outcome[KVS_C0], 3);
    /* the audit's own weak decision, on the alpha records only */
    kvs_tally(&l, weak, SIZE_MAX, &c);
    cr_expect_eq(c.records, 7);
    struct kvs_pair *pairs;
    size_t n;
    cr_assert_eq(kvs_pairs(&l, &pairs, &n), 0);
    cr_assert_eq(n, 3);
    for (size_t i = 0; i < n; i++) {
        const char *a = l.validators[pairs[i].first], *b = l.validators[pairs[i].second];
        if ((!strcmp(a, "strict") && !strcmp(b, "lax")) || (!strcmp(a, "lax") && !strcmp(b, "strict"))) {
            /* six FAIL records both decided: lax misses all six, strict none */
            cr_expect_eq(pairs[i].records, 6);
            cr_expect_eq(!strcmp(a, "lax") ? pairs[i].c : pairs[i].b, 6);
            cr_expect_eq(!strcmp(a, "lax") ? pairs[i].b : pairs[i].c, 0);
            cr_expect_float_eq(pairs[i].p, 2.0 / 64, 1e-15);
            cr_expect(pairs[i].p_holm >= pairs[i].p);
        }
    }
    free(pairs);
    kvs_ledger_free(&l);
}

static void refused(const char *ledger_text, const char *decisions_text, const char *expect)
{
    char lp[] = "/tmp/kaudit-validators-XXXXXX", dp[] = "/tmp/kaudit-decisions-XXXXXX", err[4096] = "";
    int lf = mkstemp(lp), df = mkstemp(dp);
    cr_assert(lf >= 0 && df >= 0);
    cr_assert_eq(write(lf, ledger_text, strlen(ledger_text)), (ssize_t)strlen(ledger_text));
    if (decisions_text)
        cr_assert_eq(write(df, decisions_text, strlen(decisions_text)), (ssize_t)strlen(decisions_text));
    close(lf);
    close(df);
    struct kvs_ledger l = { 0 };
    int rc = kvs_ledger_read(&l, lp, err, sizeof err);
    if (rc == 0 && decisions_text)
        rc = kvs_decisions_read(&l, dp, err, sizeof err);
    cr_expect_neq(rc, 0, "accepted: %s", ledger_text);
    cr_expect(strstr(err, expect), "'%s' does not say '%s'", err, expect);
    cr_expect(strstr(err, decisions_text && strstr(expect, "decisions") ? dp : lp) || strstr(err, dp),
              "'%s' names no file", err);
    kvs_ledger_free(&l);
    unlink(lp);
    unlink(dp);
}

Test(ledger, bad_input_is_refused_with_file_and_line)
{
    refused("{\"id\": \"a\", \"certificate\": \"PASS\"}\n{\"id\": \"a\", \"certificate\": \"FAIL\"}\n", NULL,
            ":2: id 'a' again");
    refused("{\"id\": \"a\", \"certificate\": \"MAYBE\"}\n", NULL, ":1: \"certificate\" must be");
    refused("not json\n", NULL, ":1: not a JSON object");
    refused("{\"id\": \"a\", \"certificate\": \"PASS\"}", NULL, ":1: the last line is incomplete");
    refused("{\"id\": \"a\", \"certificate\": \"PASS\", \"weak\": \"MAYBE\"}\n", NULL, "\"weak\" must be");
    refused("{\"id\": \"a\", \"certificate\": \"PASS\", \"weak_decisions\": {\"v\": 1}}\n", NULL,
            "weak_decisions.v must be");
    refused("{\"id\": \"a\", \"certificate\": \"PASS\", \"weak_decisions\": {\"v\": \"ACCEPT\"}}\n",
            "{\"id\": \"a\", \"validator\": \"v\", \"decision\": \"REJECT\"}\n", "a second decision of validator 'v'");
    refused("{\"id\": \"a\", \"certificate\": \"PASS\"}\n", "{\"id\": \"b\", \"validator\": \"v\", \"decision\": \"ACCEPT\"}\n",
            ":1: record 'b' is not in the ledger");
    refused("{\"id\": \"a\", \"certificate\": \"PASS\", \"axes\": {\"semantic\": 3}}\n", NULL, "axes.semantic must be");
}
