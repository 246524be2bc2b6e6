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

static void probe_run(struct rh_case *p, const char *mode, const char *seed)
{
    rh_case_init(p, "probe");
    char *argv[] = { PROG, (char *)mode, (char *)seed, NULL };
    rh_case_run(p, argv, argv, NULL);
    cr_assert_eq(p->run.status, 0, "%s", p->run.err);
}

static unsigned long long checksum(const char *out)
{
    const char *c = strstr(out, "checksum ");
    return c ? strtoull(c + 9, NULL, 16) : 0;
}

Test(probe_vendor, perturbs_the_gemm_output_and_nothing_else, .timeout = 120)
{
    struct rh_case p;
    probe_run(&p, "2", "5");
    cr_expect(strstr(p.run.out, "channel calls=1 perturbed=1 failed=0 exact=0 padding=1"), "%s", p.run.out);
    /* alone (no preload) the channel does not exist and the product is exact */
    cr_expect(strstr(p.plain.out, "no-channel calls=0 perturbed=0 failed=0 exact=1 padding=1"), "%s", p.plain.out);
    /* noise of the output's own mean and spread: within a few standard errors of the exact ones */
    double mean, emean, sd, esd;
    const char *l = strstr(p.run.out, "mean ");
    cr_assert(l && sscanf(l, "mean %lf (exact %lf) sd %lf (exact %lf)", &mean, &emean, &sd, &esd) == 4, "%s",
              p.run.out);
    cr_expect(fabs(mean - emean) < 0.1 && fabs(sd - esd) < 0.25 * esd, "mean %g (%g) sd %g (%g)", mean, emean, sd,
              esd);
    unsigned long long first = checksum(p.run.out);
    rh_case_free(&p);
    /* the same seed, the same noise; another seed, other noise */
    probe_run(&p, "2", "5");
    cr_expect_eq(checksum(p.run.out), first);
    rh_case_free(&p);
    probe_run(&p, "2", "6");
    cr_expect_neq(checksum(p.run.out), first);
    rh_case_free(&p);
}

Test(probe_vendor, counts_without_perturbing, .timeout = 120)
{
    struct rh_case p;
    probe_run(&p, "1", "5");
    cr_expect(strstr(p.run.out, "channel calls=1 perturbed=0 failed=0 exact=1 padding=1"), "%s", p.run.out);
    cr_expect_eq(checksum(p.run.out), checksum(p.plain.out), "counting changed the result");
    rh_case_free(&p);
}

Test(probe_vendor, off_changes_nothing, .timeout = 120)
{
    struct rh_case p;
    probe_run(&p, "0", "5");
    cr_expect(strstr(p.run.out, "channel calls=0 perturbed=0 failed=0 exact=1 padding=1"), "%s", p.run.out);
    cr_expect_eq(checksum(p.run.out), checksum(p.plain.out));
    rh_case_free(&p);
}
