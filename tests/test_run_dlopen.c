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
    struct rh_case c;
    rh_case_init(&c, "dlopen");
    char *argv[] = { PROG, LIBEXT, NULL };
    rh_case_run(&c, argv, argv, NULL);
    cr_assert_eq(c.run.status, 0, "kaudit run -- prog_dlopen: status %#x\n%s", c.run.status, c.run.err);
    cr_expect_eq(c.plain.status, 0, "prog_dlopen alone: %#x\n%s", c.plain.status, c.plain.err);
    cr_expect_str_eq(c.run.out, c.plain.out);
    cr_expect_str_eq(c.run.err, c.plain.err, "stderr under kaudit:\n%s--- alone:\n%s", c.run.err, c.plain.err);

    cr_assert_eq(c.s.ntraces, 1, "%s", rh_describe(&c.s));
    const struct rh_trace *t = &c.s.traces[0];
    cr_assert(rh_readable(t), "%s", t->error);

    cr_expect_eq(c.gt.nvendor, 1, "the stand-in saw %zu vendor calls", c.gt.nvendor);
    cr_expect_eq(rh_check_kernels(&c.s, &c.gt, 0), 0, "%s", rh_describe(&c.s));

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

    rh_case_free(&c);
}

/*
 * The caller object is remembered by calling address until an object is
 * unloaded (preload/util.c, kat_object_string; the rtld-audit module counts
 * unloads).  libext.so calls cuBLAS, is unloaded, and a copy of it under
 * another name is loaded at the same base: its call comes from the very
 * address libext.so's did, and must still be recorded as libext_copy.so's.
 * (Were unloads not counted, the remembered answer would name libext.so.)
 */
Test(dlopen_local, a_copy_loaded_where_an_unloaded_object_was_is_its_own_caller, .timeout = 240)
{
    struct rh_case c;
    rh_case_init(&c, "dlopen-reload");
    char *argv[] = { PROG, LIBEXT, PROGRAMS_DIR "/libext_copy.so", NULL };
    rh_case_run(&c, argv, argv, NULL);
    cr_assert_eq(c.run.status, 0, "kaudit run -- prog_dlopen: status %#x\n%s", c.run.status, c.run.err);
    if (!strstr(c.run.out, "second object at the first one's base"))
        cr_skip_test("the loader put the copy elsewhere: the addresses differ anyway\n%s", c.run.out);

    cr_assert_eq(c.s.ntraces, 1, "%s", rh_describe(&c.s));
    const struct rh_trace *t = &c.s.traces[0];
    cr_assert(rh_readable(t), "%s", t->error);
    size_t cursor = 0;
    const struct kat_vendor_call_rec *first = rh_vendor_call_by_api(t, "cublasSgemm_v2", &cursor);
    const struct kat_vendor_call_rec *second = rh_vendor_call_by_api(t, "cublasSgemm_v2", &cursor);
    cr_assert(first && second, "two VENDOR_CALLs for cublasSgemm_v2 expected");
    const char *a = rh_str(t, first->caller_string), *b = rh_str(t, second->caller_string);
    cr_expect(ends_with(a, "/libext.so"), "first caller '%s', expected libext.so", a);
    cr_expect(ends_with(b, "/libext_copy.so"), "second caller '%s', expected libext_copy.so", b);
    rh_case_free(&c);
}
