/*
 * test_run_recording.c - how the preload records, on the stand-ins: API
 * records made by callback (the default) or by CUPTI activity
 * (KAUDIT_API_RECORDS=all), the zeroed activity buffers we promise CUPTI,
 * KAUDIT_CUPTI_KINDS, and the benchmark control.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "run_helpers.h"

#define MIXED PROGRAMS_DIR "/prog_mixed"
#define RECORDING PROGRAMS_DIR "/prog_recording"

static int starts_with(const char *s, const char *prefix)
{
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* The last health record of CODE in the trace (policies may be stated twice). */
static const struct kat_health_rec *last_health(const struct rh_trace *t, uint32_t code)
{
    const struct kat_health_rec *found = NULL;
    for (size_t i = 0; i < t->nrecs; i++)
        if (t->recs[i].type == KAT_REC_HEALTH && ((const struct kat_health_rec *)t->recs[i].body)->code == code)
            found = t->recs[i].body;
    return found;
}

static size_t count_health(const struct rh_trace *t, uint32_t code)
{
    size_t n = 0;
    for (size_t i = 0; i < t->nrecs; i++)
        n += t->recs[i].type == KAT_REC_HEALTH && ((const struct kat_health_rec *)t->recs[i].body)->code == code;
    return n;
}

/*
 * Every ground-truth kernel has an API record with its correlation id, made
 * on the thread that launched it: exactly one by default (the driver call
 * inside a runtime launch shares the runtime call's correlation id, and its
 * record is left out), or, with WITH_NESTED_DRIVER (KAUDIT_API_RECORDS=all),
 * the runtime call's and those of the driver calls made inside it.
 */
static void expect_api_records_per_kernel(const struct rh_trace *t, const struct rh_truth *gt,
                                          int with_nested_driver)
{
    cr_assert_gt(gt->nkernels, 0);
    size_t runtime_launches = 0;
    for (size_t k = 0; k < gt->nkernels; k++) {
        size_t found = 0, runtime = 0, driver = 0, other_thread = 0;
        for (size_t i = 0; i < t->nrecs; i++) {
            if (t->recs[i].type != KAT_REC_API)
                continue;
            const struct kat_api_rec *a = t->recs[i].body;
            if (a->correlation_id != gt->kernels[k].correlation_id)
                continue;
            found++;
            runtime += a->domain == KAT_API_RUNTIME;
            driver += a->domain == KAT_API_DRIVER;
            other_thread += a->thread_id != gt->kernels[k].tid;
        }
        runtime_launches += runtime == 1;
        /* one launching call; with the nested driver calls, a runtime
         * launch's driver calls (any number) too */
        int ok = runtime <= 1 && (with_nested_driver && runtime ? found >= 1 : found == 1);
        cr_expect(ok, "kernel %s (correlation %u): %zu API records (%zu runtime, %zu driver)",
                  gt->kernels[k].name, gt->kernels[k].correlation_id, found, runtime, driver);
        cr_expect_eq(other_thread, 0, "kernel %s: %zu API records on a thread other than the launching one",
                     gt->kernels[k].name, other_thread);
    }
    /* The program launches through the runtime too, so the nested case is met. */
    cr_expect_gt(runtime_launches, 0, "no kernel launched through the runtime API");
}

/* Each line of the stand-in's ground-truth log with this tag: its fields
 * after the pid, thread and time. */
static void each_log_line(const char *log, char tag, void (*fn)(const char *fields, void *ctx), void *ctx)
{
    FILE *f = fopen(log, "r");
    cr_assert_not_null(f, "no ground-truth log %s", log);
    char line[512];
    while (fgets(line, sizeof line, f)) {
        unsigned pid, tid;
        unsigned long long ns;
        int at = 0;
        if (line[0] == tag && sscanf(line + 1, "\t%u\t%u\t%llu\t%n", &pid, &tid, &ns, &at) == 3 && at)
            fn(line + 1 + at, ctx);
    }
    fclose(f);
}

struct kind_query {
    const char *kind;
    int on;
};

static void note_kind_switch(const char *fields, void *ctx)
{
    struct kind_query *q = ctx;
    char name[64];
    int number, state;
    if (sscanf(fields, "%63s\t%d\t%d", name, &number, &state) == 3 && strcmp(name, q->kind) == 0 && state)
        q->on = 1;
}

/* Whether the stand-in's 'A' lines say KIND (its name there) was ever switched on. */
static int kind_switched_on(const char *log, const char *kind)
{
    struct kind_query q = { kind, 0 };
    each_log_line(log, 'A', note_kind_switch, &q);
    return q.on;
}

Test(recording, api_records_come_from_callbacks_by_default, .timeout = 240)
{
    struct rh_case c;
    rh_case_init(&c, "api-callback");
    char *argv[] = { MIXED, NULL };
    rh_case_run(&c, argv, argv, NULL);
    cr_assert_eq(c.run.status, 0, "%#x\n%s", c.run.status, c.run.err);
    cr_expect_str_eq(c.run.out, c.plain.out);
    cr_assert_eq(c.s.ntraces, 1, "%s", rh_describe(&c.s));
    const struct rh_trace *t = &c.s.traces[0];
    const struct kat_health_rec *policy = last_health(t, KAT_HEALTH_API_RECORD_POLICY);
    cr_assert_not_null(policy);
    cr_expect(starts_with(rh_str(t, policy->detail_string), "evidence by callback"), "policy '%s'",
              rh_str(t, policy->detail_string));
    /* Kernels, vendor windows (our stack of open calls), no strays. */
    cr_expect_eq(rh_check_kernels(&c.s, &c.gt, 0), 0, "%s", rh_describe(&c.s));
    expect_api_records_per_kernel(t, &c.gt, 0);
    /* No API activity, and no external correlation activity either: CUPTI
     * makes those records only beside API activity (cupti_kinds.c,
     * made_by_callbacks). */
    cr_expect(kind_switched_on(c.log, "concurrent_kernel"), "kernel activity never enabled");
    cr_expect(!kind_switched_on(c.log, "runtime"), "runtime API activity enabled");
    cr_expect(!kind_switched_on(c.log, "driver"), "driver API activity enabled");
    cr_expect(!kind_switched_on(c.log, "external_correlation"),
              "external correlation activity enabled beside API records made by callback");
    rh_case_free(&c);
}

Test(recording, api_records_come_from_activity_with_policy_all, .timeout = 240)
{
    struct rh_case c;
    rh_case_init(&c, "api-activity");
    char *argv[] = { MIXED, NULL };
    const char *extra[] = { "KAUDIT_API_RECORDS=all", NULL };
    rh_case_run(&c, argv, argv, extra);
    cr_assert_eq(c.run.status, 0, "%#x\n%s", c.run.status, c.run.err);
    cr_assert_eq(c.s.ntraces, 1, "%s", rh_describe(&c.s));
    const struct rh_trace *t = &c.s.traces[0];
    const struct kat_health_rec *policy = last_health(t, KAT_HEALTH_API_RECORD_POLICY);
    cr_assert_not_null(policy);
    cr_expect_str_eq(rh_str(t, policy->detail_string), "all");
    /* The same evidence, from CUPTI's records and its external correlation. */
    cr_expect_eq(rh_check_kernels(&c.s, &c.gt, 0), 0, "%s", rh_describe(&c.s));
    expect_api_records_per_kernel(t, &c.gt, 1);
    cr_expect(kind_switched_on(c.log, "external_correlation"),
              "no external correlation activity beside API activity: no vendor windows");
    rh_case_free(&c);
}

/* 'Z' lines of the stand-in: one per activity buffer it was given. */
struct buffer_line {
    int promised;
    size_t nonzero, size;
};

struct buffer_lines {
    struct buffer_line *out;
    size_t n, max;
};

static void note_buffer(const char *fields, void *ctx)
{
    struct buffer_lines *b = ctx;
    struct buffer_line l;
    if (b->n < b->max && sscanf(fields, "%d\t%zu\t%zu", &l.promised, &l.nonzero, &l.size) == 3)
        b->out[b->n++] = l;
}

static size_t read_buffer_lines(const char *log, struct buffer_line *out, size_t max)
{
    struct buffer_lines b = { out, 0, max };
    each_log_line(log, 'Z', note_buffer, &b);
    return b.n;
}

Test(recording, activity_buffers_are_handed_over_zeroed_and_reused, .timeout = 240)
{
    struct rh_case c;
    rh_case_init(&c, "buffer-pool");
    /* 1 MiB buffers and about 3 MiB of kernel records: several buffers, so
     * recycled ones are handed over too. */
    char *argv[] = { RECORDING, "launches", "12000", NULL };
    const char *extra[] = { "KAUDIT_CUPTI_BUFFER_MB=1", NULL };
    rh_case_run(&c, argv, argv, extra);
    cr_assert_eq(c.run.status, 0, "%#x\n%s", c.run.status, c.run.err);
    cr_expect_str_eq(c.run.out, c.plain.out);
    struct buffer_line lines[256];
    size_t n = read_buffer_lines(c.log, lines, 256);
    cr_expect_geq(n, 3, "only %zu activity buffers", n);
    for (size_t i = 0; i < n; i++) {
        cr_expect_eq(lines[i].promised, 1, "buffer %zu: no zeroed-buffer promise", i);
        cr_expect_eq(lines[i].nonzero, 0, "buffer %zu: %zu bytes not zero", i, lines[i].nonzero);
    }
    cr_expect_eq(rh_check_kernels(&c.s, &c.gt, 0), 0, "%s", rh_describe(&c.s));
    rh_case_free(&c);
}

Test(recording, buffer_pool_off_leaves_clearing_to_cupti, .timeout = 240)
{
    struct rh_case c;
    rh_case_init(&c, "buffer-nopool");
    char *argv[] = { RECORDING, "launches", "200", NULL };
    const char *extra[] = { "KAUDIT_CUPTI_BUFFER_POOL=0", NULL };
    rh_case_run(&c, argv, argv, extra);
    cr_assert_eq(c.run.status, 0, "%#x\n%s", c.run.status, c.run.err);
    struct buffer_line lines[64];
    size_t n = read_buffer_lines(c.log, lines, 64);
    cr_expect_geq(n, 1);
    for (size_t i = 0; i < n; i++)
        cr_expect_eq(lines[i].promised, 0, "buffer %zu: promised zeroed buffers with the pool off", i);
    cr_expect_eq(rh_check_kernels(&c.s, &c.gt, 0), 0, "%s", rh_describe(&c.s));
    rh_case_free(&c);
}

Test(recording, kinds_left_out_are_said, .timeout = 240)
{
    struct rh_case c;
    rh_case_init(&c, "kinds");
    char *argv[] = { RECORDING, "launches", "20", NULL };
    const char *extra[] = { "KAUDIT_CUPTI_KINDS=device,kernel", NULL };
    rh_case_run(&c, argv, argv, extra);
    cr_assert_eq(c.run.status, 0, "%#x\n%s", c.run.status, c.run.err);
    cr_assert_eq(c.s.ntraces, 1, "%s", rh_describe(&c.s));
    const struct rh_trace *t = &c.s.traces[0];
    const struct kat_health_rec *h = rh_health(t, KAT_HEALTH_ACTIVITY_KINDS);
    cr_assert_not_null(h, "no ACTIVITY_KINDS health record");
    /* runtime, driver, external, memcpy, memset: of the default set only (sync and
     * event are not in it, so leaving them out loses nothing) */
    cr_expect_eq(h->value, 5, "%lld kinds left out", (long long)h->value);
    cr_expect_not_null(strstr(rh_str(t, h->detail_string), "memcpy"), "detail '%s'", rh_str(t, h->detail_string));
    cr_expect_null(strstr(rh_str(t, h->detail_string), "event"), "detail '%s'", rh_str(t, h->detail_string));
    cr_expect_eq(rh_count(t, KAT_REC_MEMCPY), 0, "MEMCPY records although the kind was left out");
    cr_expect_eq(rh_check_kernels(&c.s, &c.gt, 0), 0, "%s", rh_describe(&c.s));
    rh_case_free(&c);
}

Test(recording, bench_control_is_absent_unless_asked_for_at_start, .timeout = 240)
{
    struct rh_case c;
    rh_case_init(&c, "control-off");
    char *argv[] = { RECORDING, "bench-control", "5", NULL };
    rh_case_run(&c, argv, argv, NULL);
    cr_assert_eq(c.run.status, 0, "%#x\n%s", c.run.status, c.run.err);
    cr_expect_not_null(strstr(c.run.err, "control pause: -1"), "%s", c.run.err);
    cr_expect_not_null(strstr(c.plain.err, "control pause: absent"), "%s", c.plain.err);
    cr_assert_eq(c.s.ntraces, 1, "%s", rh_describe(&c.s));
    cr_expect_null(rh_health(&c.s.traces[0], KAT_HEALTH_BENCH_CONTROL));
    /* Nothing was paused: all 15 kernels recorded. */
    cr_expect_eq(c.gt.nkernels, 15);
    cr_expect_eq(rh_check_kernels(&c.s, &c.gt, 0), 0, "%s", rh_describe(&c.s));
    rh_case_free(&c);
}

/* prog_recording MODE 5 under kaudit with the benchmark control on: the
 * run succeeds, prints what it prints bare, every setting in SETTINGS is
 * accepted, and there is one trace. */
static const struct rh_trace *run_with_control(struct rh_case *c, const char *name, char *mode,
                                               const char *const *settings)
{
    rh_case_init(c, name);
    char *argv[] = { RECORDING, mode, "5", NULL };
    const char *extra[] = { "KAUDIT_BENCH_CONTROL=1", NULL };
    rh_case_run(c, argv, argv, extra);
    cr_assert_eq(c->run.status, 0, "%#x\n%s", c->run.status, c->run.err);
    cr_expect_str_eq(c->run.out, c->plain.out);
    for (const char *const *s = settings; *s; s++) {
        char accepted[64];
        snprintf(accepted, sizeof accepted, "control %s: 0", *s);
        cr_expect_not_null(strstr(c->run.err, accepted), "%s", c->run.err);
    }
    cr_assert_eq(c->s.ntraces, 1, "%s", rh_describe(&c->s));
    return &c->s.traces[0];
}

Test(recording, bench_control_pauses_and_says_so, .timeout = 240)
{
    struct rh_case c;
    const char *settings[] = { "pause", "resume", NULL };
    const struct rh_trace *t = run_with_control(&c, "control-on", "bench-control", settings);
    /* Found on at start, then once per setting. */
    cr_expect_eq(count_health(t, KAT_HEALTH_BENCH_CONTROL), 3);
    /* The five kernels launched while paused are not in the trace. */
    cr_expect_eq(c.gt.nkernels, 15);
    cr_expect_eq(rh_count(t, KAT_REC_KERNEL), 10);
    rh_case_free(&c);
}

/*
 * The two halves of "kinds=": "callbacks" keeps our CUPTI callbacks (API
 * records) with the wrappers passing through, "wrappers" the reverse; neither
 * has activity, so their launches leave no kernel record.  Of the 10 kernels
 * launched under them, the 5 under "callbacks" have an API record, the 5
 * under "wrappers" none.
 */
Test(recording, bench_control_splits_callbacks_from_wrappers, .timeout = 240)
{
    struct rh_case c;
    const char *settings[] = { "callbacks", "wrappers", "resume", NULL };
    const struct rh_trace *t = run_with_control(&c, "control-split", "bench-split", settings);
    cr_expect_eq(count_health(t, KAT_HEALTH_BENCH_CONTROL), 4);
    cr_assert_eq(c.gt.nkernels, 20);
    cr_expect_eq(rh_count(t, KAT_REC_KERNEL), 10);
    size_t unrecorded = 0, with_api = 0;
    for (size_t k = 0; k < c.gt.nkernels; k++) {
        if (rh_kernel(t, c.gt.kernels[k].correlation_id, c.gt.kernels[k].name))
            continue;
        unrecorded++;
        for (size_t i = 0; i < t->nrecs; i++)
            if (t->recs[i].type == KAT_REC_API &&
                ((const struct kat_api_rec *)t->recs[i].body)->correlation_id == c.gt.kernels[k].correlation_id) {
                with_api++;
                break;
            }
    }
    cr_expect_eq(unrecorded, 10);
    cr_expect_eq(with_api, 5, "%zu of the kernels launched without activity have an API record", with_api);
    rh_case_free(&c);
}

/*
 * A trace of many segments, with CUPTI's thread mapping each next segment
 * ahead of time outside the writer lock (trace_writer.c,
 * kat_writer_prepare_spare) while the launching thread's records cross
 * segment ends too: every kernel of the ground truth is in the trace with
 * its API record, nothing is lost, and the records read back in order.
 * 60,000 launches make about 9 MB of trace on the stand-ins: three segments.
 */
Test(recording, segments_mapped_ahead_lose_nothing, .timeout = 240)
{
    struct rh_case c;
    rh_case_init(&c, "spare-segments");
    char *argv[] = { RECORDING, "launches", "60000", NULL };
    rh_case_run(&c, argv, argv, NULL);
    cr_assert_eq(c.run.status, 0, "%#x\n%s", c.run.status, c.run.err);
    cr_assert_eq(c.s.ntraces, 1, "%s", rh_describe(&c.s));
    const struct rh_trace *t = &c.s.traces[0];
    cr_assert(rh_readable(t), "%s: %s", t->name, t->error);
    cr_expect_geq(c.gt.nkernels, 60000, "the stand-ins logged %zu launches", c.gt.nkernels);
    cr_expect_eq(rh_check_kernels(&c.s, &c.gt, 0), 0, "%s", rh_describe(&c.s));
    cr_expect_null(last_health(t, KAT_HEALTH_WRITER_FULL), "records were lost");
    cr_expect(t->end != NULL && t->end->records_lost == 0, "records were lost");
    struct stat st;
    cr_assert_eq(stat(t->path, &st), 0, "%s", t->path);
    cr_expect_gt(st.st_size, 2 * (4 << 20), "the trace is %lld bytes: fewer than three segments",
                 (long long)st.st_size);
    rh_case_free(&c);
}

/*
 * CUPTI's thread converts a completed buffer into chunks outside the writer
 * lock and appends each with one lock (cupti_activity.c, put and
 * append_chunk; trace_writer.c, kat_emit_chunk).  The kernel records must be
 * those one kat_emit per record wrote (KAUDIT_CUPTI_CHUNK_KB=0), in the same
 * order: CUPTI's order, which on the stand-ins' one stream is the order of
 * the launches.  60,000 launches cross two segment ends; 1 KiB chunks (nine
 * kernel records) make hundreds of appends per buffer.
 */
struct kernel_seen {
    uint32_t correlation_id, stream_id, context_id;
    int32_t grid[3], block[3];
    const char *name;
};

/* The trace's kernel records in trace order. */
static struct kernel_seen *kernels_in_order(const struct rh_trace *t, size_t *n)
{
    struct kernel_seen *seen = calloc(t->nrecs + 1, sizeof *seen);
    cr_assert_not_null(seen);
    *n = 0;
    for (size_t i = 0; i < t->nrecs; i++) {
        if (t->recs[i].type != KAT_REC_KERNEL)
            continue;
        const struct kat_kernel_rec *k = t->recs[i].body;
        struct kernel_seen *s = &seen[(*n)++];
        s->correlation_id = k->correlation_id;
        s->stream_id = k->stream_id;
        s->context_id = k->context_id;
        memcpy(s->grid, k->grid, sizeof s->grid);
        memcpy(s->block, k->block, sizeof s->block);
        s->name = rh_str(t, k->name_string);
    }
    return seen;
}

static void record_launches(struct rh_case *c, const char *tag, const char *chunk_kb)
{
    char setting[64];
    snprintf(setting, sizeof setting, "KAUDIT_CUPTI_CHUNK_KB=%s", chunk_kb);
    const char *extra[] = { setting, NULL };
    char *argv[] = { RECORDING, "launches", "60000", NULL };
    rh_case_init(c, tag);
    rh_case_run(c, argv, argv, extra);
    cr_assert_eq(c->run.status, 0, "%#x\n%s", c->run.status, c->run.err);
    cr_assert_eq(c->s.ntraces, 1, "%s", rh_describe(&c->s));
    const struct rh_trace *t = &c->s.traces[0];
    cr_assert(rh_readable(t) && t->complete, "%s: %s", t->name, t->error);
    cr_expect(t->end != NULL && t->end->records_lost == 0, "records were lost");
    cr_expect_eq(rh_check_kernels(&c->s, &c->gt, 0), 0, "%s", rh_describe(&c->s));
    struct stat st;
    cr_assert_eq(stat(t->path, &st), 0, "%s", t->path);
    cr_expect_gt(st.st_size, 2 * (4 << 20), "%s: %lld bytes, fewer than three segments", tag,
                 (long long)st.st_size);
}

/* The kernels of the trace in the ground truth's launch order. */
static void expect_launch_order(const struct rh_case *c, const struct kernel_seen *seen, size_t n)
{
    cr_assert_eq(n, c->gt.nkernels, "%zu kernel records for %zu launches", n, c->gt.nkernels);
    for (size_t i = 0; i < n; i++)
        cr_assert_eq(seen[i].correlation_id, c->gt.kernels[i].correlation_id,
                     "kernel record %zu has correlation %u, launch %zu had %u", i, seen[i].correlation_id, i,
                     c->gt.kernels[i].correlation_id);
}

Test(recording, chunked_conversion_writes_the_records_of_one_lock_per_record, .timeout = 240)
{
    struct rh_case per_record, chunked, small;
    record_launches(&per_record, "chunk-off", "0");
    record_launches(&chunked, "chunk-default", "16");
    record_launches(&small, "chunk-small", "1");
    size_t n_per_record, n_chunked, n_small;
    struct kernel_seen *a = kernels_in_order(&per_record.s.traces[0], &n_per_record);
    struct kernel_seen *b = kernels_in_order(&chunked.s.traces[0], &n_chunked);
    struct kernel_seen *s = kernels_in_order(&small.s.traces[0], &n_small);
    expect_launch_order(&per_record, a, n_per_record);
    expect_launch_order(&chunked, b, n_chunked);
    expect_launch_order(&small, s, n_small);
    /* The stand-ins number launches the same way in every run: the records
     * of the three runs are the same, field for field (times aside). */
    cr_assert_eq(n_chunked, n_per_record);
    cr_assert_eq(n_small, n_per_record);
    for (size_t i = 0; i < n_per_record; i++) {
        const struct kernel_seen *x = &a[i];
        for (int v = 0; v < 2; v++) {
            const struct kernel_seen *y = v ? &s[i] : &b[i];
            cr_assert(x->correlation_id == y->correlation_id && x->stream_id == y->stream_id
                          && x->context_id == y->context_id && !memcmp(x->grid, y->grid, sizeof x->grid)
                          && !memcmp(x->block, y->block, sizeof x->block) && !strcmp(x->name, y->name),
                      "kernel record %zu differs (%s chunks): correlation %u/%u, name '%s'/'%s'", i,
                      v ? "1 KiB" : "16 KiB", x->correlation_id, y->correlation_id, x->name, y->name);
        }
    }
    free(a);
    free(b);
    free(s);
    rh_case_free(&per_record);
    rh_case_free(&chunked);
    rh_case_free(&small);
}

/*
 * kaudit run gives copied trace bytes back to the kernel only in segments
 * the writer no longer maps (supervisor/trace_spool.c releasable): a hole in a
 * page the writer maps would zap its page table entry and flush the TLB of
 * the traced program's CPUs.  The program reads its own trace memory file
 * after the copier has given the first segment back: every segment before
 * the last two with data reads as zeros, and those two are intact (giving
 * back every copied page, as before, zeroes them too: "pages" fails here).
 */
static void expect_released_segments(const char *release, int expect_kept)
{
    struct rh_case c;
    char setting[64];
    snprintf(setting, sizeof setting, "KAUDIT_SPOOL_RELEASE=%s", release);
    const char *extra[] = { setting, NULL };
    char *argv[] = { RECORDING, "spool-release", "80000", NULL };
    rh_case_init(&c, release);
    rh_case_run(&c, argv, argv, extra);
    cr_assert_eq(c.run.status, 0, "%#x\n%s", c.run.status, c.run.err);
    cr_expect_str_eq(c.run.out, c.plain.out);
    const char *line = strstr(c.run.err, "segments: ");
    cr_assert(line != NULL, "the program said nothing of its segments:\n%s", c.run.err);
    char pattern[64] = "";
    sscanf(line + 10, "%63[DZ]", pattern);
    size_t n = strlen(pattern);
    while (n > 0 && pattern[n - 1] == 'Z')    /* the spare, not written yet */
        n--;
    size_t data = 0;
    while (data < n && pattern[n - 1 - data] == 'D')
        data++;
    cr_assert_geq(strlen(pattern), 3, "segments %s: fewer than three in the file", pattern);
    cr_assert(strspn(pattern, "Z") >= n - data, "segments %s: data before the last ones", pattern);
    if (expect_kept)
        cr_assert_eq(data, 2, "segments %s: not the last two kept", pattern);
    else
        cr_assert_eq(data, 0, "segments %s: copied pages kept", pattern);
    cr_assert_eq(c.s.ntraces, 1, "%s", rh_describe(&c.s));
    cr_expect_eq(rh_check_kernels(&c.s, &c.gt, 0), 0, "%s", rh_describe(&c.s));
    rh_case_free(&c);
}

Test(recording, copied_segments_are_given_back_only_when_unmapped, .timeout = 240)
{
    expect_released_segments("segments", 1);
}

/* The comparison's setting does what it says, so the test above can fail. */
Test(recording, copied_pages_given_back_as_before_when_asked, .timeout = 240)
{
    expect_released_segments("pages", 0);
}

/*
 * KAUDIT_VENDOR_STAGING=1: vendor call records go through the calling
 * thread's stage like the API records (vendor_window.c).  A process that
 * ends normally flushes the stages, so the evidence is the same: every
 * kernel tied to its vendor call's record.
 */
Test(recording, staged_vendor_records_reach_the_trace, .timeout = 240)
{
    struct rh_case c;
    rh_case_init(&c, "vendor-staging");
    char *argv[] = { MIXED, NULL };
    const char *extra[] = { "KAUDIT_VENDOR_STAGING=1", NULL };
    rh_case_run(&c, argv, argv, extra);
    cr_assert_eq(c.run.status, 0, "%#x\n%s", c.run.status, c.run.err);
    cr_expect_str_eq(c.run.out, c.plain.out);
    cr_assert_eq(c.s.ntraces, 1, "%s", rh_describe(&c.s));
    const struct rh_trace *t = &c.s.traces[0];
    cr_expect(rh_readable(t) && t->complete, "%s", t->error);
    cr_expect_geq(rh_count(t, KAT_REC_VENDOR_CALL), 7, "%zu VENDOR_CALL records", rh_count(t, KAT_REC_VENDOR_CALL));
    cr_expect_eq(rh_check_kernels(&c.s, &c.gt, 0), 0, "%s", rh_describe(&c.s));
    rh_case_free(&c);
}
