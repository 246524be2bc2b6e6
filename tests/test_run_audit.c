/*
 * test_run_audit.c - vendor entry points that a program finds with dlsym()
 * instead of through the global scope, where no preloaded definition is met:
 * dlsym()/dlvsym() on the handle of an RTLD_LOCAL libcublas (Python ctypes
 * does this; a candidate could do it to hide a call), the PLT of an object
 * loaded RTLD_DEEPBIND, and RTLD_NEXT from an interposer that itself wraps
 * malloc.  kaudit's rtld-audit module (libkaudit_audit.so, LD_AUDIT) must send
 * each of these to the preload's wrapper, so the call is a VENDOR_CALL and its
 * kernels sit in its window, while every other lookup (malloc through
 * RTLD_NEXT, a cuBLAS function kaudit does not wrap) lands where it would
 * without kaudit.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "run_helpers.h"

#define LOCAL PROGRAMS_DIR "/prog_audit_local"
#define CHAIN PROGRAMS_DIR "/prog_audit_chain"
#define LIBEXT PROGRAMS_DIR "/libext.so"

static void au_run(struct rh_case *a, const char *tag, char *const argv[], const char *const extra[])
{
    rh_case_init(a, tag);
    rh_case_run(a, argv, argv, extra);
    cr_assert_eq(a->run.status, 0, "kaudit run -- %s: status %#x\n%s", argv[0], a->run.status, a->run.err);
    cr_assert_eq(a->plain.status, 0, "%s alone: %#x\n%s", argv[0], a->plain.status, a->plain.err);
    cr_expect_str_eq(a->run.out, a->plain.out);
}

static int ends_with(const char *s, const char *suffix)
{
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && strcmp(s + a - b, suffix) == 0;
}

/* The whole of a session file, NUL terminated ("" if unreadable; caller frees). */
static char *session_file(const char *session, const char *name)
{
    char *path = rh_path(session, name);
    FILE *f = fopen(path, "r");
    free(path);
    char *text = calloc(1, 65536);
    if (f) {
        size_t n = fread(text, 1, 65535, f);
        text[n] = '\0';
        fclose(f);
    }
    return text;
}

/* Every VENDOR_CALL of the trace is one call the stand-in saw (no call lost,
 * none recorded twice by a wrapper that called itself), none failed. */
static void expect_vendor_calls(const struct rh_trace *t, const struct rh_truth *gt, uint32_t pid)
{
    size_t truth = 0;
    for (size_t i = 0; i < gt->nvendor; i++)
        truth += pid == 0 || gt->vendor[i].pid == pid;
    cr_expect_eq(rh_count(t, KAT_REC_VENDOR_CALL), truth, "%zu VENDOR_CALL records, the stand-in saw %zu calls",
                 rh_count(t, KAT_REC_VENDOR_CALL), truth);
    for (size_t i = 0; i < t->nrecs; i++)
        if (t->recs[i].type == KAT_REC_VENDOR_CALL) {
            const struct kat_vendor_call_rec *v = t->recs[i].body;
            cr_expect_eq(v->status, 0, "%s returned %d", rh_str(t, v->api_string), v->status);
            cr_expect_eq(v->depth, 1, "%s at depth %u", rh_str(t, v->api_string), v->depth);
        }
    const struct kat_health_rec *h = rh_health(t, KAT_HEALTH_SYMBOL_UNRESOLVED);
    cr_expect_null(h, "unresolved symbol: %s", h ? rh_str(t, h->detail_string) : "");
}

Test(audit, dlsym_on_a_local_handle_reaches_the_wrapper, .timeout = 240)
{
    struct rh_case a;
    char *argv[] = { LOCAL, "dlsym", STANDIN_DIR, NULL };
    au_run(&a, "audit-dlsym", argv, NULL);
    /* where the lookups landed: the wrapped names in the preload, the rest not */
    cr_expect_not_null(strstr(a.run.err, "bound dlsym cublasSgemm_v2 libkaudit_preload.so\n"), "%s", a.run.err);
    cr_expect_not_null(strstr(a.run.err, "bound dlvsym cublasSgemm_v2_64 libkaudit_preload.so\n"), "%s",
                       a.run.err);
    cr_expect_not_null(strstr(a.run.err, "bound dlsym cublasCreate_v2 libcublas.so.13\n"),
                       "an entry point kaudit does not wrap was redirected:\n%s", a.run.err);
    cr_expect_not_null(strstr(a.plain.err, "bound dlsym cublasSgemm_v2 libcublas.so.13\n"), "%s", a.plain.err);

    cr_assert_eq(a.s.ntraces, 1, "%s", rh_describe(&a.s));
    const struct rh_trace *t = &a.s.traces[0];
    cr_expect_eq(a.gt.nvendor, 2, "the stand-in saw %zu vendor calls", a.gt.nvendor);
    const char *apis[] = { "cublasSgemm_v2", "cublasSgemm_v2_64" };
    for (int i = 0; i < 2; i++) {
        const struct kat_vendor_call_rec *v = rh_vendor_call_by_api(t, apis[i], NULL);
        cr_expect_not_null(v, "%s found with dlsym left no VENDOR_CALL record", apis[i]);
        if (v) {
            const char *caller = rh_str(t, v->caller_string);
            cr_expect(ends_with(caller, "/prog_audit_local"), "%s: caller '%s'", apis[i], caller);
            cr_expect(v->op.gemm.m == 12 && v->op.gemm.n == 7 && v->op.gemm.k == 5, "%s: m=%lld n=%lld k=%lld",
                      apis[i], (long long)v->op.gemm.m, (long long)v->op.gemm.n, (long long)v->op.gemm.k);
        }
    }
    expect_vendor_calls(t, &a.gt, 0);
    cr_expect_eq(rh_check_kernels(&a.s, &a.gt, 0), 0, "%s", rh_describe(&a.s));

    char *info = session_file(a.session, "info");
    cr_expect_not_null(strstr(info, "audit_lib: " KAUDIT_AUDIT_LIB "\n"), "info:\n%s", info);
    free(info);
    rh_case_free(&a);
}

/* A wheel's renamed copy (libcublas-3b81d170.so.13) is known by its soname. */
Test(audit, renamed_library_is_known_by_its_soname, .timeout = 240)
{
    struct rh_case a;
    char *argv[] = { LOCAL, "dlsym", STANDIN_DIR, "-", PROGRAMS_DIR "/libcublas-3b81d170.so.13", NULL };
    au_run(&a, "audit-soname", argv, NULL);
    cr_expect_not_null(strstr(a.run.err, "bound dlsym cublasSgemm_v2 libkaudit_preload.so\n"), "%s", a.run.err);
    cr_expect_not_null(strstr(a.plain.err, "bound dlsym cublasSgemm_v2 libcublas-3b81d170.so.13\n"), "%s",
                       a.plain.err);
    cr_assert_eq(a.s.ntraces, 1, "%s", rh_describe(&a.s));
    cr_expect_not_null(rh_vendor_call_by_api(&a.s.traces[0], "cublasSgemm_v2", NULL));
    expect_vendor_calls(&a.s.traces[0], &a.gt, 0);
    cr_expect_eq(rh_check_kernels(&a.s, &a.gt, 0), 0, "%s", rh_describe(&a.s));
    rh_case_free(&a);
}

/* The PLT of an RTLD_DEEPBIND object binds to libcublas before the global
 * scope: la_symbind redirects that binding, not a dlsym. */
Test(audit, deepbind_object_calls_reach_the_wrapper, .timeout = 240)
{
    struct rh_case a;
    char *argv[] = { LOCAL, "deepbind", LIBEXT, NULL };
    au_run(&a, "audit-deepbind", argv, NULL);
    cr_assert_eq(a.s.ntraces, 1, "%s", rh_describe(&a.s));
    const struct rh_trace *t = &a.s.traces[0];
    cr_expect_eq(a.gt.nvendor, 1, "the stand-in saw %zu vendor calls", a.gt.nvendor);
    const struct kat_vendor_call_rec *v = rh_vendor_call_by_api(t, "cublasSgemm_v2", NULL);
    cr_assert_not_null(v, "cublasSgemm_v2 from an RTLD_DEEPBIND object left no VENDOR_CALL record");
    const char *caller = rh_str(t, v->caller_string);
    cr_expect(ends_with(caller, "/libext.so"), "caller object '%s', expected libext.so", caller);
    expect_vendor_calls(t, &a.gt, 0);
    cr_expect_eq(rh_check_kernels(&a.s, &a.gt, 0), 0, "%s", rh_describe(&a.s));
    rh_case_free(&a);
}

/* RTLD_NEXT keeps meaning "after me" inside an interposer chain; only vendor
 * definitions are replaced, by the wrapper, and nothing recurses. */
Test(audit, interposer_chain_keeps_rtld_next, .timeout = 240)
{
    struct rh_case a;
    char *argv[] = { CHAIN, NULL };
    au_run(&a, "audit-chain", argv, NULL);
    /* run.out == plain.out is checked by au_run: the same objects with and without kaudit */
    const char *expected[] = {
        "main RTLD_DEFAULT malloc: libchain.so\n",
        "main RTLD_NEXT malloc: libchain.so\n",
        "chain RTLD_DEFAULT malloc: libchain.so\n",
        "chain RTLD_NEXT malloc: libc.so.6\n",
        "chain next malloc in use: libc.so.6\n",
        "chain RTLD_NEXT free: libc.so.6\n",
        "chain RTLD_NEXT cublasCreate_v2: libcublas.so.13\n",
        "chain malloc used: yes\n",
        "chain malloc recursed: no\n",
    };
    for (size_t i = 0; i < sizeof expected / sizeof expected[0]; i++)
        cr_expect_not_null(strstr(a.run.out, expected[i]), "missing '%.*s' in:\n%s",
                           (int)strlen(expected[i]) - 1, expected[i], a.run.out);
    cr_expect_not_null(strstr(a.run.err, "bound chain-RTLD_NEXT cublasSgemm_v2 libkaudit_preload.so\n"), "%s",
                       a.run.err);
    cr_expect_not_null(strstr(a.run.err, "bound chain-RTLD_DEFAULT cublasSgemm_v2 libkaudit_preload.so\n"), "%s",
                       a.run.err);
    cr_expect_not_null(strstr(a.plain.err, "bound chain-RTLD_NEXT cublasSgemm_v2 libcublas.so.13\n"), "%s",
                       a.plain.err);

    cr_assert_eq(a.s.ntraces, 1, "%s", rh_describe(&a.s));
    const struct rh_trace *t = &a.s.traces[0];
    cr_expect_eq(a.gt.nvendor, 2, "the stand-in saw %zu vendor calls", a.gt.nvendor);
    size_t cursor = 0, found = 0;
    const struct kat_vendor_call_rec *v;
    while ((v = rh_vendor_call_by_api(t, "cublasSgemm_v2", &cursor))) {
        found++;
        const char *caller = rh_str(t, v->caller_string);
        cr_expect(ends_with(caller, "/libchain.so"), "caller object '%s', expected libchain.so", caller);
    }
    cr_expect_eq(found, 2, "%zu cublasSgemm_v2 records for the RTLD_NEXT and RTLD_DEFAULT calls", found);
    expect_vendor_calls(t, &a.gt, 0);
    cr_expect_eq(rh_check_kernels(&a.s, &a.gt, 0), 0, "%s", rh_describe(&a.s));
    rh_case_free(&a);
}

/* A child started with an empty environment gets LD_AUDIT back with the
 * preload's other variables. */
Test(audit, scrubbed_child_gets_the_audit_library_back, .timeout = 240)
{
    struct rh_case a;
    rh_case_init(&a, "audit-exec");
    char *argv[] = { LOCAL, "exec-scrubbed", STANDIN_DIR, a.log, NULL };
    char *plain_argv[] = { LOCAL, "exec-scrubbed", STANDIN_DIR, "-", NULL };
    cr_assert_eq(rh_run_kaudit(a.session, STANDIN_DIR, NULL, argv, NULL, &a.run), 0);
    cr_assert_eq(a.run.status, 0, "%#x\n%s", a.run.status, a.run.err);
    cr_assert_eq(rh_run_plain(STANDIN_DIR, NULL, plain_argv, NULL, &a.plain), 0);
    cr_expect_str_eq(a.run.out, a.plain.out);
    char err[512];
    cr_assert_eq(rh_session_load(a.session, &a.s, err, sizeof err), 0, "%s", err);
    cr_assert_eq(rh_truth_load(a.log, &a.gt), 0);
    const struct rh_trace *child = NULL;
    for (size_t i = 0; i < a.s.ntraces; i++) {
        const struct rh_trace *t = &a.s.traces[i];
        if (t->start && strcmp(rh_str_elem(t, t->start->argv_string, 1), "dlsym") == 0)
            child = t;
    }
    cr_assert_not_null(child, "the scrubbed child has no trace: %s", rh_describe(&a.s));
    cr_expect_eq(child->start->reinjected, 1, "the scrubbed child is not marked reinjected");
    cr_expect_not_null(strstr(a.run.err, "bound dlsym cublasSgemm_v2 libkaudit_preload.so\n"),
                       "the scrubbed child ran without the audit library:\n%s", a.run.err);
    cr_expect_not_null(rh_vendor_call_by_api(child, "cublasSgemm_v2", NULL),
                       "no VENDOR_CALL for cublasSgemm_v2 in the scrubbed child");
    expect_vendor_calls(child, &a.gt, 0);
    cr_expect_eq(rh_check_kernels(&a.s, &a.gt, 0), 0, "%s", rh_describe(&a.s));
    rh_case_free(&a);
}

/* KAUDIT_AUDIT_LIB=none runs without the module and says so in kaudit.log:
 * the dlsym call is then the real function, outside any vendor window. */
Test(audit, running_without_the_audit_library_is_logged, .timeout = 240)
{
    struct rh_case a;
    char *argv[] = { LOCAL, "dlsym", STANDIN_DIR, NULL };
    const char *extra[] = { "KAUDIT_AUDIT_LIB=none", NULL };
    au_run(&a, "audit-none", argv, extra);
    cr_expect_not_null(strstr(a.run.err, "bound dlsym cublasSgemm_v2 libcublas.so.13\n"), "%s", a.run.err);
    cr_assert_eq(a.s.ntraces, 1, "%s", rh_describe(&a.s));
    cr_expect_null(rh_vendor_call_by_api(&a.s.traces[0], "cublasSgemm_v2", NULL),
                   "a VENDOR_CALL without the audit library: is something else redirecting dlsym?");
    char *log = session_file(a.session, "kaudit.log");
    cr_expect_not_null(strstr(log, "kaudit: warning: no audit library (KAUDIT_AUDIT_LIB=none)"), "kaudit.log:\n%s",
                       log);
    free(log);
    char *info = session_file(a.session, "info");
    cr_expect_not_null(strstr(info, "audit_lib: (none)\n"), "info:\n%s", info);
    free(info);
    rh_case_free(&a);
}
