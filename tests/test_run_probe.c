/*
 * test_run_probe.c - the causal probe's vendor-boundary channel
 * (preload/vendor_probe.c; docs/audit.md, "Causal probe") on the stand-in
 * cuBLAS, whose GEMM computes real results in host memory: a program
 * switches the channel on through the preload's export, as `kaudit audit`'s
 * runner does, and calls cublasSgemm_v2 (tests/programs/prog_probe.c).
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "run_helpers.h"

#define PROG PROGRAMS_DIR "/prog_probe"

static void probe_run_except(struct rh_case *p, const char *mode, const char *seed, const char *call,
                             const char *families, const char *except)
{
    rh_case_init(p, "probe");
    char *argv[] = { PROG, (char *)mode, (char *)seed, (char *)call, (char *)families, (char *)except, NULL };
    rh_case_run(p, argv, argv, NULL);
    cr_assert_eq(p->run.status, 0, "%s", p->run.err);
}

static void probe_run(struct rh_case *p, const char *mode, const char *seed, const char *call, const char *families)
{
    probe_run_except(p, mode, seed, call, families, "0");
}

/* The line of one call's result ("sgemm", "lt", "conv", "backend"). */
static const char *result_of(const char *out, const char *name)
{
    char key[32];
    snprintf(key, sizeof key, "\n%s exact=", name);
    const char *l = strstr(out, key);
    return l ? l + 1 : "";
}

/* Whether that call's result is exact; the line must be there (a missing one fails, never reads as 0). */
static int exact(const char *out, const char *name)
{
    const char *l = result_of(out, name);
    cr_assert(!strncmp(l, name, strlen(name)) && (!strncmp(l + strlen(name), " exact=1", 8) ||
                                                 !strncmp(l + strlen(name), " exact=0", 8)),
              "no result line for %s in:\n%s", name, out);
    return !strncmp(l + strlen(name), " exact=1", 8);
}

static unsigned long long checksum(const char *out, const char *name)
{
    const char *l = result_of(out, name), *c = strstr(l, "checksum ");
    cr_assert(c, "no checksum for %s in:\n%s", name, out);
    return strtoull(c + 9, NULL, 16);
}

static const char *const calls[4] = { "sgemm", "lt", "conv", "backend" };

Test(probe_vendor, replaces_every_library_output_and_nothing_else, .timeout = 120)
{
    struct rh_case p;
    probe_run(&p, "2", "5", "-1", "0");
    cr_expect(strstr(p.run.out, "channel calls=4 perturbed=4 failed=0\n"), "%s", p.run.out);
    cr_expect(strstr(p.run.out, "gemm calls=2 perturbed=2 failed=0\n"), "%s", p.run.out);
    cr_expect(strstr(p.run.out, "conv calls=2 perturbed=2 failed=0\n"), "%s", p.run.out);
    /* each call described as its record has it: family, library, the GEMMs' m n k */
    cr_expect(strstr(p.run.out, "call 0: family=1 library=1 m=24 n=16 k=8\n"), "%s", p.run.out);
    cr_expect(strstr(p.run.out, "call 1: family=1 library=2 m=24 n=16 k=8\n"), "%s", p.run.out);
    cr_expect(strstr(p.run.out, "call 2: family=2 library=3 m=0 n=0 k=0\n"), "%s", p.run.out);
    cr_expect(strstr(p.run.out, "call 3: family=2 library=3 m=0 n=0 k=0\n"), "%s", p.run.out);
    /* alone (no preload) the channel does not exist and every result is exact */
    cr_expect(strstr(p.plain.out, "no-channel\n"), "%s", p.plain.out);
    for (int i = 0; i < 4; i++) {
        cr_expect(!exact(p.run.out, calls[i]), "%s was not replaced: %s", calls[i], p.run.out);
        cr_expect(exact(p.plain.out, calls[i]), "%s", p.plain.out);
        /* noise of the output's own mean and spread: within a few standard errors of the exact ones */
        double mean, emean, sd, esd;
        const char *l = strstr(result_of(p.run.out, calls[i]), "mean ");
        cr_assert(l && sscanf(l, "mean %lf (exact %lf) sd %lf (exact %lf)", &mean, &emean, &sd, &esd) == 4, "%s",
                  p.run.out);
        cr_expect(fabs(mean - emean) < 0.3 * esd && fabs(sd - esd) < 0.3 * esd, "%s: mean %g (%g) sd %g (%g)",
                  calls[i], mean, emean, sd, esd);
    }
    /* the GEMMs' padding rows (ldc 30 for 24 rows) are left as they were */
    cr_expect(strstr(p.run.out, "sgemm exact=0 padding=1") && strstr(p.run.out, "lt exact=0 padding=1"), "%s",
              p.run.out);
    unsigned long long first = checksum(p.run.out, "backend");
    rh_case_free(&p);
    /* the same seed, the same noise; another seed, other noise */
    probe_run(&p, "2", "5", "-1", "0");
    cr_expect_eq(checksum(p.run.out, "backend"), first);
    rh_case_free(&p);
    probe_run(&p, "2", "6", "-1", "0");
    cr_expect_neq(checksum(p.run.out, "backend"), first);
    rh_case_free(&p);
}

/* Localization: one call, or one family, replaced; the others counted and exact. */
Test(probe_vendor, replaces_only_the_selected_call_or_family, .timeout = 120)
{
    struct rh_case p;
    probe_run(&p, "2", "5", "1", "0");
    cr_expect(strstr(p.run.out, "channel calls=4 perturbed=1 failed=0\n"), "%s", p.run.out);
    cr_expect(exact(p.run.out, "sgemm") && !exact(p.run.out, "lt") && exact(p.run.out, "conv") &&
                  exact(p.run.out, "backend"),
              "%s", p.run.out);
    rh_case_free(&p);
    probe_run(&p, "2", "5", "-1", "4");
    cr_expect(strstr(p.run.out, "gemm calls=2 perturbed=0 failed=0\n"), "%s", p.run.out);
    cr_expect(strstr(p.run.out, "conv calls=2 perturbed=2 failed=0\n"), "%s", p.run.out);
    cr_expect(exact(p.run.out, "sgemm") && exact(p.run.out, "lt") && !exact(p.run.out, "conv") &&
                  !exact(p.run.out, "backend"),
              "%s", p.run.out);
    rh_case_free(&p);
}

/* Every call but one, or but one family: what the localizing replays do. */
Test(probe_vendor, replaces_every_call_but_the_excepted_one_or_family, .timeout = 120)
{
    struct rh_case p;
    probe_run_except(&p, "2", "5", "1", "0", "1");
    cr_expect(strstr(p.run.out, "channel calls=4 perturbed=3 failed=0\n"), "%s", p.run.out);
    cr_expect(!exact(p.run.out, "sgemm") && exact(p.run.out, "lt") && !exact(p.run.out, "conv") &&
                  !exact(p.run.out, "backend"),
              "%s", p.run.out);
    rh_case_free(&p);
    probe_run_except(&p, "2", "5", "-1", "2", "1");
    cr_expect(strstr(p.run.out, "gemm calls=2 perturbed=0 failed=0\n"), "%s", p.run.out);
    cr_expect(strstr(p.run.out, "conv calls=2 perturbed=2 failed=0\n"), "%s", p.run.out);
    cr_expect(exact(p.run.out, "sgemm") && exact(p.run.out, "lt") && !exact(p.run.out, "conv"), "%s", p.run.out);
    rh_case_free(&p);
}

Test(probe_vendor, counts_without_perturbing, .timeout = 120)
{
    struct rh_case p;
    probe_run(&p, "1", "5", "-1", "0");
    cr_expect(strstr(p.run.out, "channel calls=4 perturbed=0 failed=0\n"), "%s", p.run.out);
    for (int i = 0; i < 4; i++)
        cr_expect_eq(checksum(p.run.out, calls[i]), checksum(p.plain.out, calls[i]), "counting changed %s", calls[i]);
    rh_case_free(&p);
}

Test(probe_vendor, off_changes_nothing, .timeout = 120)
{
    struct rh_case p;
    probe_run(&p, "0", "5", "-1", "0");
    cr_expect(strstr(p.run.out, "channel calls=0 perturbed=0 failed=0\n"), "%s", p.run.out);
    for (int i = 0; i < 4; i++)
        cr_expect_eq(checksum(p.run.out, calls[i]), checksum(p.plain.out, calls[i]));
    rh_case_free(&p);
}
