/*
 * test_run_module.c - modules loaded with the driver API (prog_module: a
 * cubin and a PTX text through cuModuleLoadData, as Triton and JIT compilers
 * do) are recorded with their size, kind, digest and loader, and the kernels
 * launched from them with cuLaunchKernel are tied to the driver calls.
 */
#include <criterion/criterion.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "run_helpers.h"

#define PROG PROGRAMS_DIR "/prog_module"

static unsigned char *slurp(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *buf = malloc((size_t)n + 1);
    if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
        free(buf);
        buf = NULL;
    }
    fclose(f);
    *size = (size_t)n;
    return buf;
}

/* XXH3-128 through libxxhash when it is installed; 0 when it is not. */
static int xxh3_128(const void *data, size_t n, uint64_t *lo, uint64_t *hi)
{
    void *h = dlopen("libxxhash.so.0", RTLD_NOW);
    if (!h)
        return 0;
    struct xxh128 { uint64_t low64, high64; };
    struct xxh128 (*fn)(const void *, size_t) = (struct xxh128 (*)(const void *, size_t))dlsym(h, "XXH3_128bits");
    if (!fn)
        return 0;
    struct xxh128 r = fn(data, n);
    *lo = r.low64;
    *hi = r.high64;
    return 1;
}

Test(module, driver_loaded_modules_and_their_kernels, .timeout = 240)
{
    struct rh_case c;
    rh_case_init(&c, "module");
    char *argv[] = { PROG, c.dir, NULL };
    rh_case_run(&c, argv, argv, NULL);
    cr_assert_eq(c.run.status, 0, "kaudit run -- prog_module: %#x\n%s", c.run.status, c.run.err);
    cr_expect_str_eq(c.run.out, c.plain.out);

    cr_assert_eq(c.s.ntraces, 1, "%s", rh_describe(&c.s));
    const struct rh_trace *t = &c.s.traces[0];
    cr_expect_eq(rh_check_kernels(&c.s, &c.gt, 0), 0, "%s", rh_describe(&c.s));
    cr_expect_eq(c.gt.nkernels, 2);

    /* launched through the driver: the kernel's correlation id is a DRIVER record's */
    for (size_t i = 0; i < c.gt.nkernels; i++) {
        int driver = 0;
        for (size_t j = 0; j < t->nrecs; j++) {
            if (t->recs[j].type != KAT_REC_API)
                continue;
            const struct kat_api_rec *a = t->recs[j].body;
            if (a->correlation_id == c.gt.kernels[i].correlation_id)
                driver = a->domain == KAT_API_DRIVER && !strcmp(rh_str(t, a->name_string), "cuLaunchKernel");
        }
        cr_expect(driver, "kernel %s: no cuLaunchKernel DRIVER record with its correlation id", c.gt.kernels[i].name);
    }

    const char *files[2] = { "module.cubin", "module.ptx" };
    const uint32_t kinds[2] = { KAT_IMAGE_CUBIN, KAT_IMAGE_PTX };
    cr_assert_eq(rh_count(t, KAT_REC_MODULE), 2, "%zu MODULE records for 2 loads", rh_count(t, KAT_REC_MODULE));
    const struct kat_health_rec *nodigest = rh_health(t, KAT_HEALTH_DIGEST_UNAVAILABLE);
    size_t m = 0;
    for (size_t j = 0; j < t->nrecs && m < 2; j++) {
        if (t->recs[j].type != KAT_REC_MODULE)
            continue;
        const struct kat_module_rec *rec = t->recs[j].body;
        char *path = rh_path(c.dir, files[m]);
        size_t size = 0;
        unsigned char *image = slurp(path, &size);
        cr_assert_not_null(image, "prog_module did not write %s", path);
        cr_expect_eq(rec->size, size, "%s: %llu bytes recorded, the image has %zu", files[m],
                     (unsigned long long)rec->size, size);
        cr_expect_eq(rec->image_kind, kinds[m], "%s: image kind %u", files[m], rec->image_kind);
        cr_expect_eq(rec->vendor_call_id, 0);
        const char *loader = rh_str(t, rec->loader_string);
        cr_expect(strlen(loader) >= strlen("/prog_module") &&
                      !strcmp(loader + strlen(loader) - strlen("/prog_module"), "/prog_module"),
                  "%s: loader '%s'", files[m], loader);
        uint64_t lo, hi;
        if (xxh3_128(image, size, &lo, &hi))
            cr_expect(rec->digest_lo == lo && rec->digest_hi == hi,
                      "%s: digest %016llx%016llx, XXH3-128 of the image is %016llx%016llx", files[m],
                      (unsigned long long)rec->digest_hi, (unsigned long long)rec->digest_lo,
                      (unsigned long long)hi, (unsigned long long)lo);
        else
            cr_expect(nodigest || (!rec->digest_lo && !rec->digest_hi),
                      "no libxxhash here, yet a digest and no DIGEST_UNAVAILABLE record");
        free(image);
        free(path);
        m++;
    }
    rh_case_free(&c);
}
