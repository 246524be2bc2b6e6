/*
 * test_run_dlopen.c - the PyTorch situation: cuBLAS reached only from a
 * shared object loaded with dlopen(RTLD_NOW | RTLD_LOCAL) (prog_dlopen loads
 * libext.so, which links libcublas.so.13 and libcudart.so.13).  There
 * dlsym(RTLD_NEXT, "cublasSgemm_v2") finds nothing; the preload must resolve
 * the real function through the library's own handle, not crash, and record
 * the call with libext.so as its caller.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "run_helpers.h"

#define PROG PROGRAMS_DIR "/prog_dlopen"
#define LIBEXT PROGRAMS_DIR "/libext.so"

static int ends_with(const char *s, const char *suffix)
{
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && strcmp(s + a - b, suffix) == 0;
}

Test(dlopen_local, sgemm_from_a_locally_loaded_object_is_recorded, .timeout = 240)
{
    char *dir = rh_tmpdir("dlopen");
    cr_assert_not_null(dir);
    char *session = rh_path(dir, "session"), *log = rh_path(dir, "truth.log");
    char *argv[] = { PROG, LIBEXT, NULL };
    struct rh_run run, plain;
    cr_assert_eq(rh_run_kaudit(session, STANDIN_DIR, log, argv, NULL, &run), 0);
    cr_assert_eq(run.status, 0, "kaudit run -- prog_dlopen: status %#x\n%s", run.status, run.err);
    cr_assert_eq(rh_run_plain(STANDIN_DIR, NULL, argv, NULL, &plain), 0);
    cr_expect_eq(plain.status, 0, "prog_dlopen alone: %#x\n%s", plain.status, plain.err);
    cr_expect_str_eq(run.out, plain.out);
    cr_expect_str_eq(run.err, plain.err, "stderr under kaudit:\n%s--- alone:\n%s", run.err, plain.err);

    struct rh_session s;
    struct rh_truth gt;
    char err[512];
    cr_assert_eq(rh_session_load(session, &s, err, sizeof err), 0, "%s", err);
    cr_assert_eq(rh_truth_load(log, &gt), 0);
    cr_assert_eq(s.ntraces, 1, "%s", rh_describe(&s));
    const struct rh_trace *t = &s.traces[0];
    cr_assert(rh_readable(t), "%s", t->error);

    cr_expect_eq(gt.nvendor, 1, "the stand-in saw %zu vendor calls", gt.nvendor);
    cr_expect_eq(rh_check_kernels(&s, &gt, 0), 0, "%s", rh_describe(&s));

    const struct kat_vendor_call_rec *v = rh_vendor_call_by_api(t, "cublasSgemm_v2", NULL);
    cr_assert_not_null(v, "no VENDOR_CALL for cublasSgemm_v2 made from libext.so");
    const char *caller = rh_str(t, v->caller_string);
    cr_expect(ends_with(caller, "/libext.so"), "caller object '%s', expected libext.so", caller);
    cr_expect_eq(v->status, 0);
    cr_expect(v->op.gemm.m == 33 && v->op.gemm.n == 17 && v->op.gemm.k == 9, "m=%lld n=%lld k=%lld",
              (long long)v->op.gemm.m, (long long)v->op.gemm.n, (long long)v->op.gemm.k);
    const struct kat_health_rec *h = rh_health(t, KAT_HEALTH_SYMBOL_UNRESOLVED);
    cr_expect_null(h, "unresolved symbol: %s", h ? rh_str(t, h->detail_string) : "");

    /* the program's own kernel-less life: the CUPTI found is the one beside libcudart */
    const struct kat_health_rec *lib = rh_health(t, KAT_HEALTH_CUPTI_LIBRARY);
    cr_assert_not_null(lib);
    cr_expect_str_eq(rh_str(t, lib->detail_string), STANDIN_DIR "/libcupti.so.13");

    rh_session_free(&s);
    rh_truth_free(&gt);
    rh_run_free(&run);
    rh_run_free(&plain);
    free(session);
    free(log);
    rh_cleanup(dir);
}
