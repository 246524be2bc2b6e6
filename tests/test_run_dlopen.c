/*
 * test_run_dlopen.c - the PyTorch situation: cuBLAS reached only from a
 * shared object loaded with dlopen(RTLD_NOW | RTLD_LOCAL) (prog_dlopen loads
 * libext.so, which links libcublas.so.13 and libcudart.so.13).  There
 * dlsym(RTLD_NEXT, "cublasSgemm_v2") finds nothing; the preload must resolve
 * the real function through the library's own handle, not crash, and record
 * the call with libext.so as its caller.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

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
 * unloads), and by the object's start and name pointer.  libext.so calls
 * cuBLAS, is unloaded, and a copy of it under another name is loaded at the
 * same base: its call comes from the very address libext.so's did, and must
 * still be recorded as libext_copy.so's.  (Were unloads not counted, the
 * remembered answer would name libext.so.)
 */
struct reload_result {
    int ran, same_base, same_name;
    char first[512], second[512];
};

static void run_copy_after_unload(const char *dir, const char *const extra[], struct reload_result *r)
{
    struct rh_case c;
    rh_case_init(&c, "dlopen-reload");
    char first[600], second[600];
    snprintf(first, sizeof first, "%s/libext.so", dir);
    snprintf(second, sizeof second, "%s/libext_copy.so", dir);
    char *argv[] = { PROG, first, second, NULL };
    rh_case_run(&c, argv, argv, extra);
    cr_assert_eq(c.run.status, 0, "kaudit run -- prog_dlopen: status %#x\n%s", c.run.status, c.run.err);
    memset(r, 0, sizeof *r);
    r->ran = 1;
    r->same_base = strstr(c.run.out, "second object at the first one's base") != NULL;
    r->same_name = strstr(c.run.out, "second name at the first one's address") != NULL;
    cr_assert_eq(c.s.ntraces, 1, "%s", rh_describe(&c.s));
    const struct rh_trace *t = &c.s.traces[0];
    cr_assert(rh_readable(t), "%s", t->error);
    size_t cursor = 0;
    const struct kat_vendor_call_rec *a = rh_vendor_call_by_api(t, "cublasSgemm_v2", &cursor);
    const struct kat_vendor_call_rec *b = rh_vendor_call_by_api(t, "cublasSgemm_v2", &cursor);
    cr_assert(a && b, "two VENDOR_CALLs for cublasSgemm_v2 expected");
    snprintf(r->first, sizeof r->first, "%s", rh_str(t, a->caller_string));
    snprintf(r->second, sizeof r->second, "%s", rh_str(t, b->caller_string));
    rh_case_free(&c);
}

Test(dlopen_local, a_copy_loaded_where_an_unloaded_object_was_is_its_own_caller, .timeout = 240)
{
    struct reload_result r;
    run_copy_after_unload(PROGRAMS_DIR, NULL, &r);
    if (!r.same_base)
        cr_skip_test("the loader put the copy elsewhere: the addresses differ anyway");
    cr_expect(ends_with(r.first, "/libext.so"), "first caller '%s', expected libext.so", r.first);
    cr_expect(ends_with(r.second, "/libext_copy.so"), "second caller '%s', expected libext_copy.so", r.second);
}

static void copy_file(const char *from, const char *to)
{
    FILE *in = fopen(from, "rb"), *out = fopen(to, "wb");
    cr_assert(in && out, "cannot copy '%s' to '%s'", from, to);
    char buf[65536];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, in)) > 0)
        cr_assert_eq(fwrite(buf, 1, n, out), n, "cannot write '%s'", to);
    fclose(in);
    cr_assert_eq(fclose(out), 0, "cannot write '%s'", to);
    chmod(to, 0755);
}

/*
 * Where the loader's record of the copy's name (link_map l_name) takes the
 * block libext.so's name had, the start and the name pointer are both the
 * same: whether the allocator hands that block back depends on the length of
 * the objects' path, so the copies are placed in folders of 40 lengths (the
 * clone's own path then does not decide whether the case is met), with the
 * rtld-audit module (which counts unloads) and without it (the loader's own
 * count then serves).  The answer remembered by start and name must not
 * outlive the unload.
 */
Test(dlopen_local, a_copy_whose_name_takes_the_unloaded_ones_memory_is_its_own_caller, .timeout = 600)
{
    char *root = rh_tmpdir("dlopen-names");
    cr_assert_not_null(root);
    int forced = 0;
    for (int pad = 1; pad <= 40; pad++) {
        char dir[600];
        snprintf(dir, sizeof dir, "%s/%.*s", root, pad, "pppppppppppppppppppppppppppppppppppppppp");
        cr_assert_eq(mkdir(dir, 0755), 0, "mkdir '%s'", dir);
        char from[600], to[700];
        snprintf(to, sizeof to, "%s/libext.so", dir);
        copy_file(LIBEXT, to);
        snprintf(from, sizeof from, "%s/libext_copy.so", PROGRAMS_DIR);
        snprintf(to, sizeof to, "%s/libext_copy.so", dir);
        copy_file(from, to);
        for (int audit = 0; audit < 2; audit++) {
            static const char *const no_audit[] = { "KAUDIT_AUDIT_LIB=none", NULL };
            struct reload_result r;
            run_copy_after_unload(dir, audit ? NULL : no_audit, &r);
            if (!r.same_base || !r.same_name)
                continue;
            forced++;
            cr_expect(ends_with(r.first, "/libext.so"), "path length %zu%s: first caller '%s'", strlen(dir),
                      audit ? "" : " (no audit module)", r.first);
            cr_expect(ends_with(r.second, "/libext_copy.so"),
                      "path length %zu%s: second caller '%s', expected libext_copy.so (its name took libext.so's "
                      "memory)", strlen(dir), audit ? "" : " (no audit module)", r.second);
        }
    }
    rh_cleanup(root);
    if (!forced)
        cr_skip_test("in no folder length did the loader reuse the name's memory: the case was not met");
    cr_log_info("the name's memory was reused in %d of 80 runs", forced);
}
