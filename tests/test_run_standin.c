/*
 * test_run_standin.c - checks the stand-ins themselves, without kaudit: a
 * minimal CUPTI client (libstandin_probe.so, injected through
 * CUDA_INJECTION64_PATH like any tool) must see what the real CUPTI shows.
 * The other test_run_* tests trust these rules; if one breaks here, a pass
 * there means nothing.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "run_helpers.h"

/* CUPTI_ACTIVITY_KIND_RUNTIME, as the probe prints the kind of an API record. */
#define ACTIVITY_KIND_RUNTIME 5

#define PROG PROGRAMS_DIR "/prog_mixed"

struct line {
    char tag[8];
    long a, b, c, d;
    char name[512];
};

struct probe {
    char *dir, *out, *log;
    struct rh_run run;
    struct rh_truth gt;
    struct line *lines;
    size_t n;
};

static void probe_run(struct probe *p, const char *mode)
{
    memset(p, 0, sizeof *p);
    p->dir = rh_tmpdir("probe");
    p->out = rh_path(p->dir, "probe.txt");
    p->log = rh_path(p->dir, "truth.log");
    char inj[4200], out[4200], md[64];
    snprintf(inj, sizeof inj, "CUDA_INJECTION64_PATH=%s", STANDIN_PROBE);
    snprintf(out, sizeof out, "PROBE_OUT=%s", p->out);
    snprintf(md, sizeof md, "PROBE_MODE=%s", mode);
    const char *extra[] = { inj, out, md, NULL };
    char *argv[] = { PROG, NULL };
    cr_assert_eq(rh_run_plain(STANDIN_DIR, p->log, argv, extra, &p->run), 0);
    cr_assert_eq(p->run.status, 0, "prog_mixed with the probe (%s): %#x\n%s", mode, p->run.status, p->run.err);
    cr_assert_eq(rh_truth_load(p->log, &p->gt), 0);
    FILE *f = fopen(p->out, "r");
    cr_assert_not_null(f, "the probe wrote nothing: was it injected?");
    char buf[1024];
    size_t cap = 0;
    while (fgets(buf, sizeof buf, f)) {
        if (p->n == cap) {
            cap = cap ? 2 * cap : 256;
            p->lines = realloc(p->lines, cap * sizeof *p->lines);
        }
        struct line *l = &p->lines[p->n];
        memset(l, 0, sizeof *l);
        buf[strcspn(buf, "\n")] = '\0';
        if (!strncmp(buf, "CB ", 3))
            sscanf(buf, "%7s %ld %ld %ld %ld %511s", l->tag, &l->a, &l->b, &l->c, &l->d, l->name);
        else if (!strncmp(buf, "API ", 4))
            sscanf(buf, "%7s %ld %ld %ld %511s", l->tag, &l->a, &l->b, &l->c, l->name);
        else if (!strncmp(buf, "EXT ", 4))
            sscanf(buf, "%7s %ld %ld %ld", l->tag, &l->a, &l->b, &l->c);
        else if (!strncmp(buf, "KERNEL ", 7))
            sscanf(buf, "%7s %ld %ld %511s", l->tag, &l->a, &l->b, l->name);
        else
            sscanf(buf, "%7s %ld", l->tag, &l->a);
        p->n++;
    }
    fclose(f);
}

static void probe_free(struct probe *p)
{
    free(p->lines);
    rh_truth_free(&p->gt);
    rh_run_free(&p->run);
    free(p->out);
    free(p->log);
    rh_cleanup(p->dir);
}

static size_t count(const struct probe *p, const char *tag)
{
    size_t n = 0;
    for (size_t i = 0; i < p->n; i++)
        n += !strcmp(p->lines[i].tag, tag);
    return n;
}

static long value(const struct probe *p, const char *tag)
{
    for (size_t i = 0; i < p->n; i++)
        if (!strcmp(p->lines[i].tag, tag))
            return p->lines[i].a;
    return -1;
}

Test(standin, cupti_callbacks_activity_and_external_correlation, .timeout = 240)
{
    struct probe p;
    probe_run(&p, "full");
    cr_expect_eq(value(&p, "SUB"), 0);
    cr_expect_eq(value(&p, "SUB2"), 39, "a second subscriber must get MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED");
    cr_expect_eq(value(&p, "DROPPED"), 0);
    cr_expect_eq(count(&p, "KERNEL"), p.gt.nkernels, "%zu kernel records, %zu launches", count(&p, "KERNEL"),
                 p.gt.nkernels);
    /* Per kernel: its kernel record, and an API record and a callback pair
     * for each API domain its launch went through.  A driver call made
     * inside a runtime call shares the runtime call's correlation id, as on
     * the H200, so a runtime launch has one for the runtime call and one for
     * each driver call inside it, a driver launch one. */
    for (size_t k = 0; k < p.gt.nkernels; k++) {
        const struct gt_kernel *g = &p.gt.kernels[k];
        int kernel = 0, api = 0, runtime_api = 0, enter = 0, exit_cb = 0;
        for (size_t i = 0; i < p.n; i++) {
            const struct line *l = &p.lines[i];
            if (!strcmp(l->tag, "KERNEL") && l->a == g->correlation_id && l->b == g->stream_id &&
                !strcmp(l->name, g->name))
                kernel++;
            if (!strcmp(l->tag, "API") && l->c == g->correlation_id) {
                api++;
                runtime_api += l->a == ACTIVITY_KIND_RUNTIME;
            }
            if (!strcmp(l->tag, "CB") && l->d == g->correlation_id)
                *(l->c == 0 ? &enter : &exit_cb) += 1;
        }
        cr_expect(kernel == 1 && runtime_api <= 1 && (runtime_api ? api >= 1 : api == 1) && enter == api
                      && exit_cb == api,
                  "kernel %s correlation %u: %d kernel, %d API records (%d runtime), %d/%d callbacks", g->name,
                  g->correlation_id, kernel, api, runtime_api, enter, exit_cb);
    }
    /* every API record has an EXTERNAL_CORRELATION record with the pushed id
     * before it (one per API record of its correlation id), and no
     * EXTERNAL_CORRELATION record stands alone */
    for (size_t i = 0; i < p.n; i++) {
        const struct line *l = &p.lines[i];
        if (!strcmp(l->tag, "API")) {
            int before = 0, after = 0, apis = 0;
            for (size_t j = 0; j < p.n; j++) {
                apis += !strcmp(p.lines[j].tag, "API") && p.lines[j].c == l->c;
                if (!strcmp(p.lines[j].tag, "EXT") && p.lines[j].c == l->c) {
                    cr_expect(p.lines[j].a == 5 && p.lines[j].b == 77, "EXT kind %ld id %ld", p.lines[j].a,
                              p.lines[j].b);
                    *(j < i ? &before : &after) += 1;
                }
            }
            cr_expect(before >= 1 && before + after == apis,
                      "API record %s (correlation %ld): %d EXT before, %d after, %d API records", l->name, l->c,
                      before, after, apis);
        } else if (!strcmp(l->tag, "EXT")) {
            int api = 0;
            for (size_t j = 0; j < p.n; j++)
                api += !strcmp(p.lines[j].tag, "API") && p.lines[j].c == l->c;
            cr_expect_geq(api, 1, "EXT record for correlation %ld has no API record", l->c);
        }
    }
    /* callback names and CUPTI's names */
    int named = 0;
    for (size_t i = 0; i < p.n; i++)
        named |= !strcmp(p.lines[i].tag, "API") && !strcmp(p.lines[i].name, "cudaLaunchKernel_v7000");
    cr_expect(named, "no API record named cudaLaunchKernel_v7000");
    probe_free(&p);
}

Test(standin, no_external_correlation_without_api_records, .timeout = 240)
{
    struct probe p;
    probe_run(&p, "kernel-only");
    cr_expect_eq(count(&p, "KERNEL"), p.gt.nkernels);
    cr_expect_eq(count(&p, "EXT"), 0, "EXTERNAL_CORRELATION records without RUNTIME/DRIVER activity");
    cr_expect_eq(count(&p, "API"), 0);
    probe_free(&p);
}

Test(standin, declined_buffers_are_counted_as_dropped, .timeout = 240)
{
    struct probe p;
    probe_run(&p, "no-buffer");
    cr_expect_gt(value(&p, "DROPPED"), 0);
    cr_expect_eq(count(&p, "KERNEL"), 0);
    struct rh_run plain;
    char *argv[] = { PROG, NULL };
    cr_assert_eq(rh_run_plain(STANDIN_DIR, NULL, argv, NULL, &plain), 0);
    cr_expect_str_eq(p.run.out, plain.out);
    rh_run_free(&plain);
    probe_free(&p);
}
