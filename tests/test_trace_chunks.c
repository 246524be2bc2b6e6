/*
 * test_trace_chunks.c - records appended a chunk at a time (trace_writer.c,
 * kat_chunk_add and kat_emit_chunk, used by CUPTI's thread as it converts a
 * buffer) make the trace that one kat_emit per record makes: the same bytes
 * at the same offsets, PAD records and segment ends included; and, appended
 * while another thread stores records one by one, every record is there,
 * each thread's in its order, nothing lost.  A thread preparing spare
 * segments and touching their pages ahead leaves the trace as it was.
 *
 * The writer is linked alone (tests/writer.cmake).  It keeps one trace per
 * process, so each way of writing runs in a forked child with its own
 * session directory.
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <dirent.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "preload_internal.h"
#include "trace_reader.h"

#define SEGMENT_BYTES (4u << 20)
/* About 13 MiB of records: three segment ends crossed. */
#define RECORDS 200000u

/* ---- the records ------------------------------------------------------------ */

/* A kernel, copy or API record (three sizes) made from i alone, so both ways
 * of writing write the same; every 5,000th names a string not seen before. */
struct planned {
    uint16_t type;
    uint32_t size;
    union {
        struct kat_kernel_rec kernel;
        struct kat_memcpy_rec copy;
        struct kat_api_rec api;
    } body;
    const char *new_string;
};

static void plan(uint32_t i, struct planned *p, char *name, size_t name_size)
{
    uint64_t x = (uint64_t)i * 6364136223846793005ull + 1442695040888963407ull;
    memset(p, 0, sizeof *p);
    p->new_string = NULL;
    switch ((x >> 33) % 3) {
    case 0:
        p->type = KAT_REC_KERNEL;
        p->size = sizeof p->body.kernel;
        p->body.kernel = (struct kat_kernel_rec){ .start_ns = x, .end_ns = x + i, .correlation_id = i,
                                                  .grid = { (int32_t)i, 1, 1 }, .registers = (uint32_t)(x >> 50) };
        break;
    case 1:
        p->type = KAT_REC_MEMCPY;
        p->size = sizeof p->body.copy;
        p->body.copy = (struct kat_memcpy_rec){ .start_ns = x, .bytes = i, .correlation_id = i,
                                                .copy_kind = (uint8_t)(x >> 40) };
        break;
    default:
        p->type = KAT_REC_API;
        p->size = sizeof p->body.api;
        p->body.api = (struct kat_api_rec){ .start_ns = x, .correlation_id = i, .cbid = (uint32_t)(x >> 45) };
        break;
    }
    if (i % 5000 == 0) {
        snprintf(name, name_size, "kernel_%u_of_the_plan", i);
        p->new_string = name;
    }
}

/* ---- writing them, in a child ------------------------------------------------ */

static void use_session(const char *dir)
{
    cr_assert_eq(setenv(KAT_ENV_SESSION, dir, 1), 0);
}

/* after_each, when given, runs after record i is stored. */
static void write_one_by_one(void (*after_each)(uint32_t i))
{
    char name[64];
    struct planned p;
    for (uint32_t i = 0; i < RECORDS; i++) {
        plan(i, &p, name, sizeof name);
        if (p.new_string)
            kat_intern(p.new_string);
        kat_emit(p.type, &p.body, p.size);
        if (after_each)
            after_each(i);
    }
}

/* As cupti_activity.c converts: into the chunk, appended when full and before
 * a string is interned. */
static void write_chunked(uint32_t capacity)
{
    struct kat_chunk chunk = { .bytes = malloc(capacity), .capacity = capacity };
    if (!chunk.bytes)
        _exit(3);
    char name[64];
    struct planned p;
    for (uint32_t i = 0; i < RECORDS; i++) {
        plan(i, &p, name, sizeof name);
        if (p.new_string) {
            kat_emit_chunk(&chunk);
            kat_intern(p.new_string);
        }
        if (kat_chunk_add(&chunk, p.type, &p.body, p.size) != 0) {
            kat_emit_chunk(&chunk);
            if (kat_chunk_add(&chunk, p.type, &p.body, p.size) != 0)
                _exit(4);
        }
    }
    kat_emit_chunk(&chunk);
    free(chunk.bytes);
}

/* What CUPTI's thread does between buffers, as often as it can: map the
 * next segment ahead and read the pages the writers will store into
 * (trace_writer.c, touch_pages). */
static atomic_int writing_done;

static void *prepare_spares(void *unused)
{
    (void)unused;
    while (!atomic_load(&writing_done))
        kat_writer_prepare_spare();
    return NULL;
}

/* capacity 0: one kat_emit per record; with_preparer: while another thread
 * prepares spares and touches pages ahead. */
static void write_in_child(const char *dir, uint32_t capacity, int with_preparer)
{
    pid_t pid = fork();
    cr_assert_neq(pid, -1);
    if (pid == 0) {
        use_session(dir);
        pthread_t preparer;
        if (with_preparer && pthread_create(&preparer, NULL, prepare_spares, NULL) != 0)
            _exit(5);
        if (capacity)
            write_chunked(capacity);
        else
            write_one_by_one(NULL);
        atomic_store(&writing_done, 1);
        if (with_preparer)
            pthread_join(preparer, NULL);
        kat_writer_close(KAT_END_EXIT, 0, 0);
        _exit(0);
    }
    int status = 0;
    cr_assert_eq(waitpid(pid, &status, 0), pid);
    cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "writer child: status %#x", status);
}

/* ---- reading them back --------------------------------------------------------- */

static char *new_dir(const char *tag)
{
    char *dir = NULL;
    const char *tmp = getenv("TMPDIR");
    cr_assert_neq(asprintf(&dir, "%s/kaudit-%s-XXXXXX", tmp && *tmp ? tmp : "/tmp", tag), -1);
    cr_assert_not_null(mkdtemp(dir));
    return dir;
}

static void remove_dir(char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    while (d && (e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        char *path = NULL;
        if (asprintf(&path, "%s/%s", dir, e->d_name) != -1)
            unlink(path);
        free(path);
    }
    if (d)
        closedir(d);
    rmdir(dir);
    free(dir);
}

/* The one trace file in dir, read whole. */
static uint8_t *read_trace(const char *dir, size_t *size, char **path_out)
{
    DIR *d = opendir(dir);
    cr_assert_not_null(d, "%s", dir);
    struct dirent *e;
    char *path = NULL;
    while ((e = readdir(d)) != NULL) {
        size_t n = strlen(e->d_name);
        if (n > 4 && strcmp(e->d_name + n - 4, KAT_TRACE_SUFFIX) == 0) {
            cr_assert_null(path, "two traces in %s", dir);
            cr_assert_neq(asprintf(&path, "%s/%s", dir, e->d_name), -1);
        }
    }
    closedir(d);
    cr_assert_not_null(path, "no trace in %s", dir);
    FILE *f = fopen(path, "rb");
    cr_assert_not_null(f, "%s", path);
    fseek(f, 0, SEEK_END);
    *size = (size_t)ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *bytes = malloc(*size ? *size : 1);
    cr_assert_eq(fread(bytes, 1, *size, f), *size);
    fclose(f);
    *path_out = path;
    return bytes;
}

struct raw_record {
    uint64_t offset;
    uint32_t size;
    uint16_t type;
};

/* Every record as laid out in the file, PAD records included. */
static struct raw_record *walk(const uint8_t *bytes, size_t size, size_t *n)
{
    const struct kat_file_header *h = (const void *)bytes;
    cr_assert_geq(size, sizeof *h);
    size_t cap = 1024;
    struct raw_record *recs = malloc(cap * sizeof *recs);
    *n = 0;
    for (uint64_t at = h->header_size; at + 8 <= size;) {
        struct kat_record_header rh;
        memcpy(&rh, bytes + at, sizeof rh);
        if (rh.size == 0)
            break;
        cr_assert(rh.size % 8 == 0 && at + rh.size <= size, "bad record at %llu", (unsigned long long)at);
        if (*n == cap)
            recs = realloc(recs, (cap *= 2) * sizeof *recs);
        recs[(*n)++] = (struct raw_record){ .offset = at, .size = rh.size, .type = rh.type };
        at += rh.size;
    }
    return recs;
}

/* The reader's view: complete, nothing lost, `records` records of the plan. */
static void expect_readable(const char *path, size_t planned_records)
{
    char err[512];
    struct kat_trace *t = kat_trace_open(path, err, sizeof err);
    cr_assert_not_null(t, "%s", err);
    struct kat_record rec;
    size_t planned = 0;
    const struct kat_process_end_rec *end = NULL;
    int rc;
    while ((rc = kat_trace_next(t, &rec, err, sizeof err)) == 1) {
        planned += rec.type == KAT_REC_KERNEL || rec.type == KAT_REC_MEMCPY || rec.type == KAT_REC_API;
        if (rec.type == KAT_REC_PROCESS_END)
            end = rec.body;
    }
    cr_assert_eq(rc, 0, "%s", err);
    cr_expect(kat_trace_complete(t), "%s: no end record", path);
    cr_expect_eq(planned, planned_records);
    cr_assert_not_null(end);
    cr_expect_eq(end->records_lost, 0);
    kat_trace_close(t);
}

/* ---- the tests ------------------------------------------------------------------ */

/* The records of trace `other` (written another way) are those of `one`,
 * byte for byte at the same offsets.  Returns the PAD records counted. */
static size_t expect_same_records(const uint8_t *one, const struct raw_record *a, size_t n_one,
                                  const uint8_t *other, const struct raw_record *b, size_t n_other,
                                  const char *how)
{
    cr_assert_eq(n_other, n_one, "%zu records %s, %zu one by one", n_other, how, n_one);
    size_t pads = 0;
    for (size_t i = 0; i < n_one; i++) {
        cr_assert(a[i].offset == b[i].offset && a[i].size == b[i].size && a[i].type == b[i].type,
                  "record %zu: type %u, %u bytes at %llu one by one; type %u, %u bytes at %llu %s", i,
                  a[i].type, a[i].size, (unsigned long long)a[i].offset, b[i].type, b[i].size,
                  (unsigned long long)b[i].offset, how);
        pads += a[i].type == KAT_REC_PAD;
        /* start and end say when and for which pid: not the same twice */
        if (a[i].type == KAT_REC_PROCESS_START || a[i].type == KAT_REC_PROCESS_END)
            continue;
        cr_assert(memcmp(one + a[i].offset, other + b[i].offset, a[i].size) == 0,
                  "record %zu (type %u at %llu) differs %s", i, a[i].type, (unsigned long long)a[i].offset, how);
    }
    return pads;
}

static void expect_same_trace_as_one_by_one(uint32_t capacity, int with_preparer)
{
    char *one_dir = new_dir("one-by-one"), *chunk_dir = new_dir("chunked");
    write_in_child(one_dir, 0, 0);
    write_in_child(chunk_dir, capacity, with_preparer);
    size_t one_size, chunk_size, n_one, n_chunk;
    char *one_path, *chunk_path;
    uint8_t *one = read_trace(one_dir, &one_size, &one_path);
    uint8_t *chunked = read_trace(chunk_dir, &chunk_size, &chunk_path);
    struct raw_record *a = walk(one, one_size, &n_one);
    struct raw_record *b = walk(chunked, chunk_size, &n_chunk);
    size_t pads = expect_same_records(one, a, n_one, chunked, b, n_chunk, "chunked");
    /* three segment ends: records may fill a segment exactly (no PAD) */
    cr_expect_geq(pads, 1, "no record was moved to the next segment");
    cr_expect_gt(a[n_one - 1].offset, 3ull * SEGMENT_BYTES, "fewer than four segments");
    expect_readable(chunk_path, RECORDS);
    free(a);
    free(b);
    free(one);
    free(chunked);
    free(one_path);
    free(chunk_path);
    remove_dir(one_dir);
    remove_dir(chunk_dir);
}

Test(chunks, conversion_sized_chunks_make_the_trace_of_one_record_per_lock, .timeout = 120)
{
    expect_same_trace_as_one_by_one(16u << 10, 0);
}

/* 1000 bytes: no whole number of records, a few per chunk, so chunks end
 * at every offset near a segment's end. */
Test(chunks, small_odd_chunks_make_the_trace_of_one_record_per_lock, .timeout = 120)
{
    expect_same_trace_as_one_by_one(1000, 0);
}

/* A chunk larger than what is left of a segment, larger than a segment. */
Test(chunks, chunks_larger_than_a_segment_are_split_at_record_ends, .timeout = 120)
{
    expect_same_trace_as_one_by_one(6u << 20, 0);
}

/*
 * Pages touched ahead (trace_writer.c, touch_pages): a thread preparing
 * spares and reading the current segment's pages while records are stored
 * and segment ends crossed changes no byte of the trace.  On the
 * development VM a segment's touch takes about 6 ms, so the writer crosses
 * ends while one is under way.
 */
Test(chunks, pages_touched_ahead_leave_the_trace_as_it_was, .timeout = 120)
{
    cr_assert_eq(unsetenv("KAUDIT_TRACE_TOUCH"), 0);
    expect_same_trace_as_one_by_one(0, 1);
}

/*
 * The spare thread (trace_writer.c): started, it prepares the next segment
 * after each crossing, so a writer that gives it a moment (here 2 ms every
 * 2,000 records, about 80 KiB) never maps a segment itself; without it
 * (KAUDIT_SPARE_THREAD=0, and no CUPTI thread here) every crossing does.
 * The trace is byte for byte the one written without it.  The child's exit
 * status is its count of segments mapped inline (at most 100).
 */
static void start_spare_thread_and_pause(uint32_t i)
{
    if (i == 0)
        kat_writer_start_spare_thread();    /* as at CUDA's first context */
    if (i % 2000 == 1999)
        nanosleep(&(struct timespec){ .tv_nsec = 2 * 1000 * 1000 }, NULL);
}

static int write_with_spare_thread(const char *dir, int thread_on)
{
    pid_t pid = fork();
    cr_assert_neq(pid, -1);
    if (pid == 0) {
        use_session(dir);
        if (!thread_on)
            setenv("KAUDIT_SPARE_THREAD", "0", 1);
        write_one_by_one(start_spare_thread_and_pause);
        uint64_t inline_maps = kat_writer_segments_mapped_inline();
        kat_writer_close(KAT_END_EXIT, 0, 0);
        _exit(inline_maps > 100 ? 100 : (int)inline_maps);
    }
    int status = 0;
    cr_assert_eq(waitpid(pid, &status, 0), pid);
    cr_assert(WIFEXITED(status), "writer child: status %#x", status);
    return WEXITSTATUS(status);
}

Test(chunks, spare_thread_prepares_every_next_segment, .timeout = 120)
{
    char *one_dir = new_dir("one-by-one"), *with_dir = new_dir("spare-thread"), *without_dir = new_dir("no-thread");
    write_in_child(one_dir, 0, 0);
    int with = write_with_spare_thread(with_dir, 1);
    int without = write_with_spare_thread(without_dir, 0);
    cr_expect_eq(with, 0, "%d segments mapped by the writer with the spare thread", with);
    cr_expect_geq(without, 3, "only %d segments mapped by the writer without it: the test cannot fail", without);
    size_t one_size, with_size, n_one, n_with;
    char *one_path, *with_path;
    uint8_t *one = read_trace(one_dir, &one_size, &one_path);
    uint8_t *mine = read_trace(with_dir, &with_size, &with_path);
    struct raw_record *a = walk(one, one_size, &n_one);
    struct raw_record *b = walk(mine, with_size, &n_with);
    expect_same_records(one, a, n_one, mine, b, n_with, "with the spare thread");
    expect_readable(with_path, RECORDS);
    free(a);
    free(b);
    free(one);
    free(mine);
    free(one_path);
    free(with_path);
    remove_dir(one_dir);
    remove_dir(with_dir);
    remove_dir(without_dir);
}

/* ---- chunks against a thread storing records one by one ------------------------ */

#define EACH 100000u

static void *store_vendor_like(void *arg)
{
    (void)arg;
    for (uint32_t i = 0; i < EACH; i++) {
        struct kat_vendor_call_rec rec = { .call_id = i + 1, .depth = 1 };
        kat_emit(KAT_REC_VENDOR_CALL, &rec, sizeof rec);
    }
    return NULL;
}

static void append_kernel_like(void)
{
    static uint8_t bytes[16u << 10];
    struct kat_chunk chunk = { .bytes = bytes, .capacity = sizeof bytes };
    for (uint32_t i = 0; i < EACH; i++) {
        struct kat_kernel_rec rec = { .correlation_id = i + 1 };
        if (kat_chunk_add(&chunk, KAT_REC_KERNEL, &rec, sizeof rec) != 0) {
            kat_emit_chunk(&chunk);
            kat_chunk_add(&chunk, KAT_REC_KERNEL, &rec, sizeof rec);
        }
    }
    kat_emit_chunk(&chunk);
}

Test(chunks, appended_while_another_thread_stores_nothing_is_lost_or_reordered, .timeout = 120)
{
    char *dir = new_dir("contended");
    pid_t pid = fork();
    cr_assert_neq(pid, -1);
    if (pid == 0) {
        use_session(dir);
        pthread_t other;
        if (pthread_create(&other, NULL, store_vendor_like, NULL) != 0)
            _exit(3);
        append_kernel_like();
        pthread_join(other, NULL);
        kat_writer_close(KAT_END_EXIT, 0, 0);
        _exit(0);
    }
    int status = 0;
    cr_assert_eq(waitpid(pid, &status, 0), pid);
    cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "writer child: status %#x", status);

    size_t size;
    char *path;
    free(read_trace(dir, &size, &path));
    char err[512];
    struct kat_trace *t = kat_trace_open(path, err, sizeof err);
    cr_assert_not_null(t, "%s", err);
    struct kat_record rec;
    uint64_t last_kernel = 0, last_call = 0, kernels = 0, calls = 0;
    int rc;
    while ((rc = kat_trace_next(t, &rec, err, sizeof err)) == 1) {
        if (rec.type == KAT_REC_KERNEL) {
            const struct kat_kernel_rec *k = rec.body;
            cr_assert_eq(k->correlation_id, last_kernel + 1, "kernel %u after %llu", k->correlation_id,
                         (unsigned long long)last_kernel);
            last_kernel = k->correlation_id;
            kernels++;
        } else if (rec.type == KAT_REC_VENDOR_CALL) {
            const struct kat_vendor_call_rec *v = rec.body;
            cr_assert_eq(v->call_id, last_call + 1);
            last_call = v->call_id;
            calls++;
        }
    }
    cr_assert_eq(rc, 0, "%s", err);
    cr_expect(kat_trace_complete(t));
    cr_expect_eq(kernels, EACH);
    cr_expect_eq(calls, EACH);
    cr_expect_gt(kat_trace_file_size(t), 4ull << 20, "one segment only");
    kat_trace_close(t);
    free(path);
    remove_dir(dir);
}
