/*
 * test_run_cupti.c - CUPTI outside the happy path: a program that is itself
 * a CUPTI client (torch.profiler style) and a machine without libcupti.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "run_helpers.h"

#define SUBSCRIBER PROGRAMS_DIR "/prog_subscriber"
#define MIXED PROGRAMS_DIR "/prog_mixed"

static int ends_with(const char *s, const char *suffix)
{
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && strcmp(s + a - b, suffix) == 0;
}

static const struct kat_foreign_cupti_rec *foreign(const struct rh_trace *t, const char *function)
{
    for (size_t i = 0; i < t->nrecs; i++) {
        if (t->recs[i].type != KAT_REC_FOREIGN_CUPTI)
            continue;
        const struct kat_foreign_cupti_rec *f = t->recs[i].body;
        if (!strcmp(rh_str(t, f->function_string), function))
            return f;
    }
    return NULL;
}

Test(cupti, second_subscriber_is_recorded_and_the_program_carries_on, .timeout = 240)
{
    struct rh_case c;
    rh_case_init(&c, "subscriber");
    char *argv[] = { SUBSCRIBER, "subscribe", NULL };
    rh_case_run(&c, argv, argv, NULL);
    cr_assert_eq(c.run.status, 0, "%#x\n%s", c.run.status, c.run.err);
    cr_expect_str_eq(c.run.out, c.plain.out);
    cr_expect_not_null(strstr(c.plain.err, "cuptiSubscribe: CUPTI_SUCCESS"), "alone: %s", c.plain.err);
    cr_expect_not_null(strstr(c.run.err, "cuptiSubscribe: CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED"),
                       "under kaudit the program should meet the one-subscriber limit: %s", c.run.err);

    cr_assert_eq(c.s.ntraces, 1, "%s", rh_describe(&c.s));
    const struct rh_trace *t = &c.s.traces[0];
    const struct kat_foreign_cupti_rec *f = foreign(t, "cuptiSubscribe");
    cr_assert_not_null(f, "the program's cuptiSubscribe left no FOREIGN_CUPTI record");
    cr_expect_eq(f->result, 39 /* CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED */, "result %d", f->result);
    cr_expect(ends_with(rh_str(t, f->caller_string), "/prog_subscriber"), "caller '%s'", rh_str(t, f->caller_string));
    const struct kat_health_rec *h = rh_health(t, KAT_HEALTH_FOREIGN_SUBSCRIBER);
    cr_assert_not_null(h, "no FOREIGN_SUBSCRIBER health record");
    cr_expect_eq(h->value, 39);
    /* we stay the subscriber: the program's kernels are all recorded */
    cr_expect_eq(rh_check_kernels(&c.s, &c.gt, 0), 0, "%s", rh_describe(&c.s));
    cr_expect_gt(c.gt.nkernels, 0);

    rh_case_free(&c);
}

Test(cupti, program_replacing_the_activity_buffers_is_recorded, .timeout = 240)
{
    char *dir = rh_tmpdir("kineto");
    char *session = rh_path(dir, "session"), *log = rh_path(dir, "truth.log");
    char *argv[] = { SUBSCRIBER, "kineto", NULL };
    struct rh_run run, plain;
    cr_assert_eq(rh_run_kaudit(session, STANDIN_DIR, log, argv, NULL, &run), 0);
    cr_assert_eq(run.status, 0, "%#x\n%s", run.status, run.err);
    cr_assert_eq(rh_run_plain(STANDIN_DIR, NULL, argv, NULL, &plain), 0);
    cr_expect_str_eq(run.out, plain.out);
    /* the program still gets its own activity records */
    const char *own = strstr(run.err, "records of its own");
    cr_expect(own && strstr(run.err, "prog_subscriber: 0 records") == NULL,
              "the program's own CUPTI buffers stayed empty under kaudit:\n%s", run.err);

    struct rh_session s;
    char err[512];
    cr_assert_eq(rh_session_load(session, &s, err, sizeof err), 0, "%s", err);
    cr_assert_eq(s.ntraces, 1, "%s", rh_describe(&s));
    const struct rh_trace *t = &s.traces[0];
    const struct kat_foreign_cupti_rec *r = foreign(t, "cuptiActivityRegisterCallbacks");
    cr_expect_not_null(r, "no FOREIGN_CUPTI record for cuptiActivityRegisterCallbacks");
    const struct kat_foreign_cupti_rec *e = foreign(t, "cuptiActivityEnable");
    cr_expect_not_null(e, "no FOREIGN_CUPTI record for cuptiActivityEnable");
    if (e)
        cr_expect_eq(e->argument, 10 /* CONCURRENT_KERNEL */);
    cr_expect_not_null(rh_health(t, KAT_HEALTH_CALLBACK_OVERRIDDEN), "no CALLBACK_OVERRIDDEN health record");
    cr_expect_not_null(rh_health(t, KAT_HEALTH_FOREIGN_SUBSCRIBER));
    rh_session_free(&s);
    rh_run_free(&run);
    rh_run_free(&plain);
    free(session);
    free(log);
    rh_cleanup(dir);
}

/* ---- no libcupti ------------------------------------------------------------------- */

/* Directories outside the stand-ins where the preload would find a real
 * libcupti.so.13: the dynamic loader's cache and the toolkit paths it tries. */
static size_t real_cupti_dirs(char dirs[][PATH_MAX], size_t max)
{
    size_t n = 0;
    const char *candidates[8];
    size_t nc = 0;
    candidates[nc++] = "/usr/local/cuda/extras/CUPTI/lib64/libcupti.so.13";
    candidates[nc++] = "/usr/local/cuda/lib64/libcupti.so.13";
    char cached[PATH_MAX] = "";
    FILE *p = popen("/sbin/ldconfig -p 2>/dev/null || ldconfig -p 2>/dev/null", "r");
    if (p) {
        char line[PATH_MAX + 128];
        while (fgets(line, sizeof line, p)) {
            char *arrow = strstr(line, "=> ");
            if (strstr(line, "libcupti.so.13 ") && arrow) {
                snprintf(cached, sizeof cached, "%s", arrow + 3);
                cached[strcspn(cached, "\n")] = '\0';
                candidates[nc++] = cached;
                break;
            }
        }
        pclose(p);
    }
    for (size_t i = 0; i < nc && n < max; i++) {
        char real[PATH_MAX];
        if (!realpath(candidates[i], real))
            continue;
        char *slash = strrchr(real, '/');
        *slash = '\0';
        int dup = 0;
        for (size_t j = 0; j < n; j++)
            dup |= !strcmp(dirs[j], real);
        if (!dup)
            snprintf(dirs[n++], PATH_MAX, "%s", real);
    }
    return n;
}

Test(cupti, without_libcupti_the_run_goes_on_and_says_so, .timeout = 240)
{
    char dirs[4][PATH_MAX];
    size_t ndirs = real_cupti_dirs(dirs, 4);
    char *dir = rh_tmpdir("nocupti");
    char *session = rh_path(dir, "session");
    char *plain_argv[] = { MIXED, NULL };
    struct rh_run run, plain;
    cr_assert_eq(rh_run_plain(STANDIN_NOCUPTI_DIR, NULL, plain_argv, NULL, &plain), 0);
    cr_assert_eq(plain.status, 0, "%#x\n%s", plain.status, plain.err);

    /* A real CUDA toolkit on this machine would be found: hide it in a
     * private mount namespace. */
    char script[4096] = "";
    size_t off = 0;
    for (size_t i = 0; i < ndirs; i++)
        off += (size_t)snprintf(script + off, sizeof script - off, "mount -t tmpfs kaudit-test '%s' && ", dirs[i]);
    snprintf(script + off, sizeof script - off, "exec \"$@\"");
    char *argv_ns[] = { "/usr/bin/unshare", "-rm", "/bin/sh", "-c", script, "sh", (char *)KAUDIT_BIN, "run", "-d",
                        session, "--", MIXED, NULL };
    char *argv_direct[] = { (char *)KAUDIT_BIN, "run", "-d", session, "--", MIXED, NULL };
    char **env = rh_env(STANDIN_NOCUPTI_DIR, NULL, NULL);
    if (ndirs) {
        struct rh_run probe;
        char *probe_argv[] = { "/usr/bin/unshare", "-rm", "/bin/sh", "-c", script, "sh", "/bin/true", NULL };
        if (access("/usr/bin/unshare", X_OK) != 0 || rh_exec(probe_argv, env, 30, &probe) != 0 || probe.status != 0) {
            rh_env_free(env);
            cr_skip_test("a real libcupti.so.13 is installed (%s) and cannot be hidden here (unshare -rm with a "
                         "tmpfs mount failed)", dirs[0]);
        }
        rh_run_free(&probe);
    }
    cr_assert_eq(rh_exec(ndirs ? argv_ns : argv_direct, env, RH_KAUDIT_TIMEOUT_S, &run), 0);
    cr_expect(!run.timed_out, "kaudit run without libcupti timed out");
    rh_env_free(env);
    cr_assert_eq(run.status, 0, "kaudit run without libcupti: %#x\n%s", run.status, run.err);
    cr_expect_str_eq(run.out, plain.out, "stdout without libcupti under kaudit:\n%s--- alone:\n%s", run.out, plain.out);
    cr_expect_str_eq(run.err, plain.err, "stderr under kaudit:\n%s--- alone:\n%s", run.err, plain.err);

    struct rh_session s;
    char err[512];
    cr_assert_eq(rh_session_load(session, &s, err, sizeof err), 0, "%s", err);
    cr_assert_eq(s.ntraces, 1, "%s", rh_describe(&s));
    const struct rh_trace *t = &s.traces[0];
    cr_expect(rh_readable(t) && t->complete, "%s", t->error);
    const struct kat_health_rec *h = rh_health(t, KAT_HEALTH_CUPTI_NOT_FOUND);
    const struct kat_health_rec *used = rh_health(t, KAT_HEALTH_CUPTI_LIBRARY);
    cr_expect_not_null(h, "no CUPTI_NOT_FOUND health record (CUPTI used: %s)", used ? rh_str(t, used->detail_string) : "none");
    cr_expect_null(used, "a libcupti was used: %s", used ? rh_str(t, used->detail_string) : "");
    cr_expect_not_null(rh_health(t, KAT_HEALTH_INJECTION_CALLED));
    cr_expect_eq(rh_count(t, KAT_REC_KERNEL), 0);
    /* the vendor wrappers do not need CUPTI: the calls are still recorded */
    cr_expect_geq(rh_count(t, KAT_REC_VENDOR_CALL), 7, "%zu VENDOR_CALL records without CUPTI",
                  rh_count(t, KAT_REC_VENDOR_CALL));

    rh_session_free(&s);
    rh_run_free(&run);
    rh_run_free(&plain);
    free(session);
    rh_cleanup(dir);
}
