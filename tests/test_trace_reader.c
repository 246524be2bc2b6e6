/*
 * test_trace_reader.c - the trace reader and the session directory.
 *
 * Every property of the on-disk contract a reader relies on gets a test that
 * builds the smallest trace showing it: what is accepted (every record type,
 * larger records from newer writers, unknown types), where reading stops (zero
 * header word, end of file), and what is rejected with which message (sizes,
 * magic, versions, strings).  A last group throws corrupted files at the
 * reader to check it never crashes.
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "session.h"
#include "trace_builder.h"
#include "trace_index.h"
#include "trace_reader.h"

static char *dir;
static char path[4096];

static void setup(void)
{
    dir = tb_tempdir();
    cr_assert(dir, "cannot make a temporary directory");
    snprintf(path, sizeof(path), "%s/p100-1000.kat", dir);
}

static void teardown(void)
{
    tb_remove_dir(dir);
    free(dir);
}

/* Write b to `path` and open it; fails the test when it does not open. */
static struct kat_trace *open_built(struct tb *b)
{
    char err[512] = "";
    cr_assert_eq(tb_write(b, path), 0);
    struct kat_trace *t = kat_trace_open(path, err, sizeof(err));
    cr_assert(t, "open failed: %s", err);
    return t;
}

/* Open must fail; returns its message. */
static const char *open_error(struct tb *b)
{
    static char err[512];
    err[0] = '\0';
    cr_assert_eq(tb_write(b, path), 0);
    struct kat_trace *t = kat_trace_open(path, err, sizeof(err));
    cr_assert_null(t, "open accepted a bad file");
    cr_assert(strstr(err, path), "message does not name the file: %s", err);
    return err;
}

/* Read until the end or an error; returns the last kat_trace_next result. */
static int read_all(struct kat_trace *t, int *records, char *err, size_t n)
{
    struct kat_record r;
    int rc;
    *records = 0;
    while ((rc = kat_trace_next(t, &r, err, n)) == 1)
        (*records)++;
    return rc;
}

TestSuite(trace_reader, .init = setup, .fini = teardown);

/* ---- accepted ---------------------------------------------------------------- */

Test(trace_reader, every_record_type_round_trips)
{
    struct tb b;
    tb_init(&b, 100, 1, KAT_ORIGIN_EXEC, 5000);
    uint8_t bodies[KAT_REC_TYPE_COUNT][512];
    size_t offsets[KAT_REC_TYPE_COUNT];
    /* PROCESS_END last, so the trace is complete. */
    for (uint16_t type = KAT_REC_PROCESS_START; type < KAT_REC_TYPE_COUNT; type++) {
        if (type == KAT_REC_PROCESS_END)
            continue;
        uint32_t size = kat_record_body_min(type);
        cr_assert(size > 0 && size <= sizeof(bodies[0]), "no size for type %u", type);
        for (uint32_t i = 0; i < size; i++)
            bodies[type][i] = (uint8_t)(type * 31 + i * 7 + 1);
        offsets[type] = tb_record(&b, type, bodies[type], size, NULL, 0);
    }
    struct kat_process_end_rec end = { .kind = KAT_END_EXIT, .status = 3,
                                       .flags = KAT_END_FLAG_STATUS_KNOWN, .time_ns = 9 };
    memcpy(bodies[KAT_REC_PROCESS_END], &end, sizeof(end));
    offsets[KAT_REC_PROCESS_END] = tb_record(&b, KAT_REC_PROCESS_END, &end, sizeof(end), NULL, 0);

    struct kat_trace *t = open_built(&b);
    cr_assert_eq(kat_trace_header(t)->pid, 100);
    cr_assert_eq(kat_trace_header(t)->start_realtime_ns, 5000);
    cr_assert_str_eq(kat_trace_path(t), path);

    struct kat_record r;
    char err[512];
    uint16_t expect = KAT_REC_PROCESS_START;
    int seen = 0;
    while (kat_trace_next(t, &r, err, sizeof(err)) == 1) {
        if (expect == KAT_REC_PROCESS_END)
            expect++;
        if (expect == KAT_REC_TYPE_COUNT)
            expect = KAT_REC_PROCESS_END;  /* the end record comes last */
        cr_assert_eq(r.type, expect, "got %s, expected %s", kat_record_type_name(r.type),
                     kat_record_type_name(expect));
        cr_assert_eq(r.offset, offsets[expect]);
        cr_assert_eq(r.body_size, kat_record_body_min(expect));
        cr_assert_eq(r.size, (8 + r.body_size + 7) / 8 * 8);
        cr_assert_eq(r.tail_size, r.size - 8 - r.body_size);
        cr_assert_eq((uintptr_t)r.body % 8, 0, "bodies are cast in place: must be aligned");
        cr_assert_eq(memcmp(r.body, bodies[expect], r.body_size), 0, "body of %s differs",
                     kat_record_type_name(expect));
        seen++;
        expect++;
    }
    cr_assert_eq(seen, KAT_REC_TYPE_COUNT - KAT_REC_PROCESS_START);
    cr_assert(kat_trace_complete(t));
    cr_assert_eq(kat_trace_next(t, &r, err, sizeof(err)), 0, "end is sticky");
    kat_trace_close(t);
    tb_free(&b);
}

Test(trace_reader, strings_round_trip_with_nul_bytes_and_exact_lengths)
{
    struct tb b;
    tb_init(&b, 100, 1, KAT_ORIGIN_EXEC, 5000);
    uint32_t plain = tb_string(&b, "cublasSgemm_v2");
    uint32_t exact = tb_string(&b, "12345678");     /* fills its record: no NUL after it */
    uint32_t empty = tb_string_n(&b, "", 0);
    uint32_t argv = tb_string_n(&b, "python\0-c\0x", 11);
    struct kat_health_rec h = { .code = KAT_HEALTH_CUPTI_LIBRARY, .detail_string = plain };
    tb_record(&b, KAT_REC_HEALTH, &h, sizeof(h), NULL, 0);

    struct kat_trace *t = open_built(&b);
    struct kat_record r;
    cr_assert_eq(kat_trace_next(t, &r, NULL, 0), 1);
    cr_assert_eq(r.type, KAT_REC_HEALTH, "string records are consumed, not returned");
    cr_assert_str_eq(kat_trace_string(t, plain), "cublasSgemm_v2");
    cr_assert_eq(kat_trace_string_length(t, plain), 14);
    cr_assert_str_eq(kat_trace_string(t, exact), "12345678");
    cr_assert_eq(kat_trace_string_length(t, exact), 8);
    cr_assert_str_eq(kat_trace_string(t, empty), "");
    cr_assert(kat_trace_string_known(t, empty));
    cr_assert_eq(kat_trace_string_length(t, argv), 11);
    cr_assert_eq(memcmp(kat_trace_string(t, argv), "python\0-c\0x", 12), 0);
    cr_assert_str_eq(kat_trace_string(t, 0), "");
    cr_assert_str_eq(kat_trace_string(t, 999), "");
    cr_assert_not(kat_trace_string_known(t, 999));
    cr_assert_eq(kat_trace_string_length(t, 999), 0);
    kat_trace_close(t);
    tb_free(&b);
}

Test(trace_reader, larger_record_from_a_newer_writer_is_accepted)
{
    struct tb b;
    tb_init(&b, 100, 1, KAT_ORIGIN_EXEC, 5000);
    struct kat_kernel_rec k = { .start_ns = 1, .end_ns = 2, .correlation_id = 77 };
    uint8_t extra[16] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16 };
    tb_record(&b, KAT_REC_KERNEL, &k, sizeof(k), extra, sizeof(extra));

    struct kat_trace *t = open_built(&b);
    struct kat_record r;
    cr_assert_eq(kat_trace_next(t, &r, NULL, 0), 1);
    cr_assert_eq(r.body_size, sizeof(struct kat_kernel_rec));
    cr_assert_eq(r.tail_size, 16);
    cr_assert_eq(memcmp(r.tail, extra, 16), 0);
    cr_assert_eq(((const struct kat_kernel_rec *)r.body)->correlation_id, 77);
    kat_trace_close(t);
    tb_free(&b);
}

Test(trace_reader, unknown_types_and_pads_are_skipped)
{
    struct tb b;
    tb_init(&b, 100, 1, KAT_ORIGIN_EXEC, 5000);
    struct kat_clock_sync_rec c = { 1, 2, 3 };
    tb_record(&b, KAT_REC_CLOCK_SYNC, &c, sizeof(c), NULL, 0);
    uint8_t future[40] = { 0xff };
    tb_record(&b, 999, future, sizeof(future), NULL, 0);
    tb_record(&b, KAT_REC_TYPE_COUNT, future, 8, NULL, 0);
    tb_record(&b, KAT_REC_PAD, NULL, 0, future, 24);
    size_t second = tb_record(&b, KAT_REC_CLOCK_SYNC, &c, sizeof(c), NULL, 0);

    struct kat_trace *t = open_built(&b);
    struct kat_record r;
    cr_assert_eq(kat_trace_next(t, &r, NULL, 0), 1);
    cr_assert_eq(r.type, KAT_REC_CLOCK_SYNC);
    cr_assert_eq(kat_trace_next(t, &r, NULL, 0), 1);
    cr_assert_eq(r.type, KAT_REC_CLOCK_SYNC);
    cr_assert_eq(r.offset, second);
    cr_assert_eq(kat_trace_next(t, &r, NULL, 0), 0);
    kat_trace_close(t);
    tb_free(&b);
}

Test(trace_reader, type_names)
{
    cr_assert_str_eq(kat_record_type_name(KAT_REC_KERNEL), "kernel");
    cr_assert_str_eq(kat_record_type_name(KAT_REC_VENDOR_CALL), "vendor_call");
    cr_assert_str_eq(kat_record_type_name(KAT_REC_EXTERNAL_CORRELATION), "external_correlation");
    cr_assert_str_eq(kat_record_type_name(0), "unknown");
    cr_assert_str_eq(kat_record_type_name(999), "unknown");
    cr_assert_str_eq(kat_health_code_name(KAT_HEALTH_CUPTI_VERSION), "cupti_version");
    cr_assert_null(kat_health_code_name(9999));
    for (uint16_t type = 1; type < KAT_REC_TYPE_COUNT; type++)
        cr_assert_str_neq(kat_record_type_name(type), "unknown", "type %u has no name", type);
}

/* ---- where reading stops ------------------------------------------------------- */

Test(trace_reader, missing_end_record_means_truncated)
{
    struct tb b;
    tb_init(&b, 100, 1, KAT_ORIGIN_EXEC, 5000);
    tb_process_start(&b, (const char *[]){ "a", NULL }, "/bin/a", "/");
    struct kat_kernel_rec k = { 0 };
    tb_record(&b, KAT_REC_KERNEL, &k, sizeof(k), NULL, 0);

    struct kat_trace *t = open_built(&b);
    int n;
    cr_assert_eq(read_all(t, &n, NULL, 0), 0);
    cr_assert_eq(n, 2);
    cr_assert_not(kat_trace_complete(t));
    kat_trace_close(t);
    tb_free(&b);
}

Test(trace_reader, records_after_an_exec_end_reopen_the_trace)
{
    /* A failed exec: the image writes on after its KAT_END_EXEC record. */
    struct tb b;
    tb_init(&b, 100, 1, KAT_ORIGIN_EXEC, 5000);
    tb_process_end(&b, KAT_END_EXEC, 0, 0);
    struct kat_kernel_rec k = { 0 };
    tb_record(&b, KAT_REC_KERNEL, &k, sizeof(k), NULL, 0);
    struct kat_trace *t = open_built(&b);
    int n;
    cr_assert_eq(read_all(t, &n, NULL, 0), 0);
    cr_assert_not(kat_trace_complete(t));
    kat_trace_close(t);

    tb_process_end(&b, KAT_END_EXIT, 0, 1);
    t = open_built(&b);
    cr_assert_eq(read_all(t, &n, NULL, 0), 0);
    cr_assert(kat_trace_complete(t));
    kat_trace_close(t);
    tb_free(&b);
}

Test(trace_reader, zero_header_word_ends_committed_data)
{
    struct tb b;
    tb_init(&b, 100, 1, KAT_ORIGIN_EXEC, 5000);
    struct kat_clock_sync_rec c = { 1, 2, 3 };
    tb_record(&b, KAT_REC_CLOCK_SYNC, &c, sizeof(c), NULL, 0);
    tb_zeros(&b, 64);
    /* Anything after the zero word was never committed, even if it looks valid. */
    tb_record(&b, KAT_REC_CLOCK_SYNC, &c, sizeof(c), NULL, 0);
    tb_raw(&b, "\x03\x00\x00\x00", 4);

    struct kat_trace *t = open_built(&b);
    int n;
    char err[512] = "";
    cr_assert_eq(read_all(t, &n, err, sizeof(err)), 0, "%s", err);
    cr_assert_eq(n, 1);
    cr_assert_eq(kat_trace_offset(t), 64 + 32);
    kat_trace_close(t);
    tb_free(&b);
}

Test(trace_reader, a_zero_short_tail_is_the_end_but_garbage_is_not)
{
    struct tb b;
    tb_init(&b, 100, 1, KAT_ORIGIN_EXEC, 5000);
    tb_zeros(&b, 4);
    struct kat_trace *t = open_built(&b);
    int n;
    cr_assert_eq(read_all(t, &n, NULL, 0), 0);
    kat_trace_close(t);
    tb_free(&b);

    tb_init(&b, 100, 1, KAT_ORIGIN_EXEC, 5000);
    tb_raw(&b, "\x01\x00\x00", 3);
    t = open_built(&b);
    char err[512];
    cr_assert_eq(read_all(t, &n, err, sizeof(err)), -1);
    cr_assert(strstr(err, "3 trailing bytes at offset 64"), "%s", err);
    kat_trace_close(t);
    tb_free(&b);
}

Test(trace_reader, rewind_reads_again_and_keeps_strings)
{
    struct tb b;
    tb_init(&b, 100, 1, KAT_ORIGIN_EXEC, 5000);
    tb_process_start(&b, (const char *[]){ "prog", "arg", NULL }, "/bin/prog", "/tmp");
    uint32_t name = tb_string(&b, "my_kernel");
    struct kat_kernel_rec k = { .name_string = name };
    tb_record(&b, KAT_REC_KERNEL, &k, sizeof(k), NULL, 0);
    tb_process_end(&b, KAT_END_EXIT, 0, 1);

    struct kat_trace *t = open_built(&b);
    int first, second;
    char err[512] = "";
    cr_assert_eq(read_all(t, &first, err, sizeof(err)), 0, "%s", err);
    kat_trace_rewind(t);
    cr_assert(kat_trace_complete(t), "a rewind does not forget the end record");
    cr_assert_str_eq(kat_trace_string(t, name), "my_kernel", "strings survive a rewind");
    cr_assert_eq(read_all(t, &second, err, sizeof(err)), 0, "second pass: %s", err);
    cr_assert_eq(first, 3);
    cr_assert_eq(second, first);
    cr_assert(kat_trace_complete(t));
    kat_trace_close(t);
    tb_free(&b);
}

/* ---- rejected -------------------------------------------------------------------- */

static void expect_bad_record(const void *header_word, const char *expected)
{
    struct tb b;
    tb_init(&b, 100, 1, KAT_ORIGIN_EXEC, 5000);
    struct kat_clock_sync_rec c = { 1, 2, 3 };
    tb_record(&b, KAT_REC_CLOCK_SYNC, &c, sizeof(c), NULL, 0);
    tb_raw(&b, header_word, 8);
    tb_zeros(&b, 40);

    struct kat_trace *t = open_built(&b);
    struct kat_record r;
    char err[512] = "", again[512] = "";
    cr_assert_eq(kat_trace_next(t, &r, err, sizeof(err)), 1);
    cr_assert_eq(kat_trace_next(t, &r, err, sizeof(err)), -1);
    char want[sizeof(path) + 512];
    snprintf(want, sizeof(want), "cannot read trace '%s': %s", path, expected);
    cr_assert_str_eq(err, want);
    cr_assert_eq(kat_trace_next(t, &r, again, sizeof(again)), -1, "errors are sticky");
    cr_assert_str_eq(again, err);
    cr_assert_str_eq(kat_trace_error(t), err);
    kat_trace_close(t);
    tb_free(&b);
}

Test(trace_reader, size_not_a_multiple_of_8)
{
    struct kat_record_header h = { .size = 12, .type = KAT_REC_KERNEL };
    expect_bad_record(&h, "record at offset 96 has size 12 (not a multiple of 8)");
}

Test(trace_reader, size_smaller_than_a_header)
{
    struct kat_record_header h = { .size = 0, .type = KAT_REC_KERNEL };
    expect_bad_record(&h, "record at offset 96 has size 0 (smaller than the 8-byte record header)");
}

Test(trace_reader, size_past_the_end_of_the_file)
{
    struct kat_record_header h = { .size = 4096, .type = KAT_REC_KERNEL };
    expect_bad_record(&h, "record at offset 96 has size 4096 (past the end of the 144-byte file)");
}

Test(trace_reader, known_type_smaller_than_its_struct)
{
    struct kat_record_header h = { .size = 16, .type = KAT_REC_KERNEL };
    char want[128];
    snprintf(want, sizeof(want), "record at offset 96 (kernel) has size 16 (its fixed part needs %zu)",
             8 + sizeof(struct kat_kernel_rec));
    expect_bad_record(&h, want);
}

Test(trace_reader, bad_magic)
{
    struct tb b;
    tb_init(&b, 100, 1, KAT_ORIGIN_EXEC, 5000);
    memcpy(tb_header(&b)->magic, "ELF\0\0\0\0\0", 8);
    cr_assert(strstr(open_error(&b), "not a kaudit trace (bad magic)"));
    tb_free(&b);
}

Test(trace_reader, future_version_names_both_versions)
{
    struct tb b;
    tb_init(&b, 100, 1, KAT_ORIGIN_EXEC, 5000);
    tb_header(&b)->format_version = KAT_FORMAT_VERSION + 1;
    const char *err = open_error(&b);
    char want[256];
    snprintf(want, sizeof(want), "format version %u is newer than this kaudit reads (versions %u to %u)",
             KAT_FORMAT_VERSION + 1, KAT_FORMAT_MIN_READABLE, KAT_FORMAT_VERSION);
    cr_assert(strstr(err, want), "%s", err);
    tb_free(&b);
}

Test(trace_reader, too_old_version)
{
    struct tb b;
    tb_init(&b, 100, 1, KAT_ORIGIN_EXEC, 5000);
    tb_header(&b)->format_version = KAT_FORMAT_MIN_READABLE - 1;
    cr_assert(strstr(open_error(&b), "is older than this kaudit reads"));
    tb_free(&b);
}

Test(trace_reader, bad_header_size)
{
    struct tb b;
    tb_init(&b, 100, 1, KAT_ORIGIN_EXEC, 5000);
    tb_header(&b)->header_size = 60;
    cr_assert(strstr(open_error(&b), "file header claims size 60"));
    tb_header(&b)->header_size = 1u << 30;
    cr_assert(strstr(open_error(&b), "file header claims size"));
    tb_free(&b);
}

Test(trace_reader, too_short_and_missing_files)
{
    struct tb b = { 0 };
    tb_raw(&b, "KATRACE", 8);
    cr_assert(strstr(open_error(&b), "file is 8 bytes, too short for the 64-byte trace header"));
    tb_free(&b);

    char err[512];
    char missing[4200];
    snprintf(missing, sizeof(missing), "%s/nope.kat", dir);
    cr_assert_null(kat_trace_open(missing, err, sizeof(err)));
    cr_assert(strstr(err, "cannot open trace '") && strstr(err, "nope.kat': No such file"), "%s", err);
    cr_assert_null(kat_trace_open(dir, err, sizeof(err)));
    cr_assert(strstr(err, "not a regular file"), "%s", err);
}

static const char *string_error(struct tb *b)
{
    static char err[512];
    struct kat_trace *t = open_built(b);
    int n;
    cr_assert_eq(read_all(t, &n, err, sizeof(err)), -1);
    kat_trace_close(t);
    return err;
}

Test(trace_reader, duplicate_string_id)
{
    struct tb b;
    tb_init(&b, 100, 1, KAT_ORIGIN_EXEC, 5000);
    tb_string_id(&b, 5, "one", 3);
    size_t second = tb_string_id(&b, 5, "two", 3);
    const char *err = string_error(&b);
    char want[128];
    snprintf(want, sizeof(want), "string record at offset %zu redefines string id 5 (defined at offset 64)",
             second);
    cr_assert(strstr(err, want), "%s", err);
    tb_free(&b);
}

Test(trace_reader, string_longer_than_its_record)
{
    struct tb b;
    tb_init(&b, 100, 1, KAT_ORIGIN_EXEC, 5000);
    struct kat_string_rec s = { .id = 1, .length = 100 };
    tb_record(&b, KAT_REC_STRING, &s, sizeof(s), "abcdefgh", 8);
    cr_assert(strstr(string_error(&b),
                     "string record at offset 64 has length 100 (more than the 8 bytes it holds)"));
    tb_free(&b);
}

Test(trace_reader, string_id_zero_is_reserved)
{
    struct tb b;
    tb_init(&b, 100, 1, KAT_ORIGIN_EXEC, 5000);
    tb_string_id(&b, 0, "x", 1);
    cr_assert(strstr(string_error(&b), "defines id 0"));
    tb_free(&b);
}

Test(trace_reader, hostile_string_ids_cost_nothing)
{
    struct tb b;
    tb_init(&b, 100, 1, KAT_ORIGIN_EXEC, 5000);
    tb_string_id(&b, 0xFFFFFFFFu, "max", 3);
    tb_string_id(&b, 0x80000000u, "half", 4);
    struct kat_clock_sync_rec c = { 0 };
    tb_record(&b, KAT_REC_CLOCK_SYNC, &c, sizeof(c), NULL, 0);
    struct kat_trace *t = open_built(&b);
    int n;
    cr_assert_eq(read_all(t, &n, NULL, 0), 0);
    cr_assert_str_eq(kat_trace_string(t, 0xFFFFFFFFu), "max");
    cr_assert_str_eq(kat_trace_string(t, 0x80000000u), "half");
    cr_assert_str_eq(kat_trace_string(t, 0xFFFFFFFEu), "");
    kat_trace_close(t);
    tb_free(&b);
}

Test(trace_reader, many_strings_grow_the_table)
{
    struct tb b;
    tb_init(&b, 100, 1, KAT_ORIGIN_EXEC, 5000);
    char s[32];
    for (int i = 0; i < 20000; i++) {
        snprintf(s, sizeof(s), "kernel_%d", i);
        /* sparse ids: every 7919th prime step, to defeat any dense-array shortcut */
        tb_string_id(&b, (uint32_t)(i * 7919u + 1), s, (uint32_t)strlen(s));
    }
    struct kat_trace *t = open_built(&b);
    int n;
    cr_assert_eq(read_all(t, &n, NULL, 0), 0);
    for (int i = 0; i < 20000; i += 997) {
        snprintf(s, sizeof(s), "kernel_%d", i);
        cr_assert_str_eq(kat_trace_string(t, (uint32_t)(i * 7919u + 1)), s);
    }
    kat_trace_close(t);
    tb_free(&b);
}

/* ---- no crash on corrupted input ------------------------------------------------- */

static void build_realistic(struct tb *b)
{
    tb_init(b, 100, 1, KAT_ORIGIN_EXEC, 5000);
    tb_process_start(b, (const char *[]){ "python3", "bench.py", NULL }, "/usr/bin/python3", "/w");
    uint32_t name = tb_string(b, "sm90_xmma_gemm_f32f32_tf32f32_f32_nn_n_tilesize128x128x32");
    uint32_t api = tb_string(b, "cublasSgemm_v2");
    for (uint32_t i = 1; i <= 20; i++) {
        struct kat_external_correlation_rec x = { KAT_VENDOR_CORRELATION_KIND, i, i };
        tb_record(b, KAT_REC_EXTERNAL_CORRELATION, &x, sizeof(x), NULL, 0);
        struct kat_kernel_rec k = { .start_ns = i, .end_ns = i + 1, .correlation_id = i,
                                    .name_string = name };
        tb_record(b, KAT_REC_KERNEL, &k, sizeof(k), NULL, 0);
        struct kat_vendor_call_rec v = { .call_id = i, .api_string = api, .library = KAT_LIB_CUBLAS };
        tb_record(b, KAT_REC_VENDOR_CALL, &v, sizeof(v), NULL, 0);
    }
    tb_process_end(b, KAT_END_EXIT, 0, 1);
}

/* Where read_everything sums the bytes, so the reads cannot be optimised away. */
static volatile uint8_t byte_sink;

static void read_everything(const char *p)
{
    char err[512];
    struct kat_trace *t = kat_trace_open(p, err, sizeof(err));
    if (!t)
        return;
    struct kat_record r;
    for (int pass = 0; pass < 2; pass++) {
        while (kat_trace_next(t, &r, err, sizeof(err)) == 1) {
            /* touch every byte the reader vouched for */
            uint8_t sum = 0;
            for (uint32_t i = 0; i < r.body_size; i++)
                sum += ((const uint8_t *)r.body)[i];
            for (uint32_t i = 0; i < r.tail_size; i++)
                sum += ((const uint8_t *)r.tail)[i];
            byte_sink = sum;
            const uint32_t *words = r.body;
            for (uint32_t i = 0; i < r.body_size / 4; i++)
                (void)strlen(kat_trace_string(t, words[i]));
        }
        kat_trace_rewind(t);
    }
    kat_trace_close(t);
}

Test(trace_reader, every_truncation_point_is_safe)
{
    struct tb b;
    build_realistic(&b);
    for (size_t len = 0; len <= b.len; len += (len < 256 ? 1 : 3)) {
        struct tb cut = b;
        cut.len = len;
        cr_assert_eq(tb_write(&cut, path), 0);
        read_everything(path);
    }
    tb_free(&b);
}

Test(trace_reader, random_corruption_is_safe)
{
    struct tb b;
    build_realistic(&b);
    uint8_t *orig = malloc(b.len);
    memcpy(orig, b.buf, b.len);
    srand(12345);
    for (int iter = 0; iter < 3000; iter++) {
        memcpy(b.buf, orig, b.len);
        int flips = 1 + rand() % 8;
        for (int f = 0; f < flips; f++) {
            size_t at = 64 + (size_t)rand() % (b.len - 64);
            /* bias towards header words, where the interesting damage is */
            if (rand() % 2)
                at &= ~(size_t)7;
            b.buf[at] = (uint8_t)(rand() % 3 == 0 ? 0xff : rand());
        }
        cr_assert_eq(tb_write(&b, path), 0);
        read_everything(path);
    }
    free(orig);
    tb_free(&b);
}

/* ---- session directories ------------------------------------------------------------ */

/* session/trace_index.h: the kernel -> vendor call join, nesting, the windows. */
Test(trace_reader, trace_index_joins_kernels_to_vendor_calls)
{
    struct tb b;
    tb_init(&b, 100, 1, KAT_ORIGIN_EXEC, 5000);
    struct kat_vendor_call_rec outer = { .call_id = 5, .enter_ns = 100, .exit_ns = 900, .library = KAT_LIB_CUBLAS,
                                         .thread_id = 1, .depth = 1 };
    struct kat_vendor_call_rec inner = { .call_id = 6, .enter_ns = 200, .exit_ns = 800, .library = KAT_LIB_CUBLASLT,
                                         .thread_id = 1, .depth = 2 };
    tb_record(&b, KAT_REC_VENDOR_CALL, &inner, sizeof(inner), NULL, 0);
    tb_record(&b, KAT_REC_VENDOR_CALL, &outer, sizeof(outer), NULL, 0);
    /* kernels before the records that label them (CUPTI's order) */
    uint32_t corr[] = { 10, 11, 12, 13, 14 };
    for (int i = 0; i < 5; i++) {
        struct kat_kernel_rec k = { .correlation_id = corr[i], .name_string = 0 };
        tb_record(&b, KAT_REC_KERNEL, &k, sizeof(k), NULL, 0);
    }
    struct kat_external_correlation_rec x[] = {
        { KAT_VENDOR_CORRELATION_KIND, 10, 6 },
        { KAT_VENDOR_CORRELATION_KIND, 10, 5 },   /* a second id for 10: the first wins */
        { KAT_VENDOR_CORRELATION_KIND, 11, 5 },
        { 1, 13, 5 },                             /* not our kind */
        { KAT_VENDOR_CORRELATION_KIND, 14, 6 },
    };
    for (int i = 0; i < 5; i++)
        tb_record(&b, KAT_REC_EXTERNAL_CORRELATION, &x[i], sizeof(x[i]), NULL, 0);

    struct kat_trace *t = open_built(&b);
    struct kat_trace_index ix;
    kat_trace_index_init(&ix);
    char err[256];
    cr_assert_eq(kat_trace_index_build(&ix, t, 1, err, sizeof err), 0, "%s", err);
    cr_expect_eq(kat_trace_index_vendor_call_of(&ix, 10), 6);
    cr_expect_eq(kat_trace_index_vendor_call_of(&ix, 11), 5);
    cr_expect_eq(kat_trace_index_vendor_call_of(&ix, 12), 0);
    cr_expect_eq(kat_trace_index_vendor_call_of(&ix, 13), 0);
    const struct kat_index_call *c = kat_trace_index_call(&ix, 6);
    cr_assert_not_null(c);
    cr_expect_eq(c->library, KAT_LIB_CUBLASLT);
    const struct kat_index_call *top = kat_trace_index_outermost(&ix, c);
    cr_expect_eq(top->call_id, 5);
    cr_expect_eq(kat_trace_index_outermost(&ix, top), top);
    cr_expect_null(kat_trace_index_call(&ix, 7));
    const struct kat_index_kernel *first;
    cr_assert_eq(kat_trace_index_window(&ix, 6, &first), 2);
    cr_expect_eq(first[0].correlation_id, 10, "trace order within a call");
    cr_expect_eq(first[1].correlation_id, 14);
    cr_assert_eq(kat_trace_index_window(&ix, 5, &first), 1);
    cr_expect_eq(first[0].correlation_id, 11);
    cr_expect_eq(kat_trace_index_window(&ix, 9, &first), 0);
    kat_trace_index_free(&ix);
    kat_trace_close(t);
    tb_free(&b);
}

/* Format 2: an API record's tail ties its correlation id (and the kernels
 * it launched) to the vendor call; an API record without one ties nothing. */
Test(trace_reader, trace_index_joins_through_api_record_tails)
{
    struct tb b;
    tb_init(&b, 100, 1, KAT_ORIGIN_EXEC, 5000);
    struct kat_vendor_call_rec call = { .call_id = 8, .enter_ns = 100, .exit_ns = 900, .library = KAT_LIB_CUBLASLT,
                                        .thread_id = 1, .depth = 1 };
    tb_record(&b, KAT_REC_VENDOR_CALL, &call, sizeof(call), NULL, 0);
    struct kat_kernel_rec k = { .correlation_id = 20 };
    tb_record(&b, KAT_REC_KERNEL, &k, sizeof(k), NULL, 0);
    k.correlation_id = 21;
    tb_record(&b, KAT_REC_KERNEL, &k, sizeof(k), NULL, 0);
    struct kat_api_rec inside = { .start_ns = 200, .end_ns = 300, .domain = KAT_API_DRIVER, .thread_id = 1,
                                  .correlation_id = 20 };
    struct kat_api_vendor_tail tail = { .vendor_call_id = 8 };
    tb_record(&b, KAT_REC_API, &inside, sizeof(inside), &tail, sizeof(tail));
    struct kat_api_rec outside = inside;
    outside.correlation_id = 21;
    tb_record(&b, KAT_REC_API, &outside, sizeof(outside), NULL, 0);
    /* a later tie of the same correlation id does not win */
    struct kat_external_correlation_rec x = { KAT_VENDOR_CORRELATION_KIND, 20, 9 };
    tb_record(&b, KAT_REC_EXTERNAL_CORRELATION, &x, sizeof(x), NULL, 0);

    struct kat_trace *t = open_built(&b);
    struct kat_record r;
    char err[256];
    int tailed = 0, plain = 0;
    while (kat_trace_next(t, &r, err, sizeof err) == 1)
        if (r.type == KAT_REC_API) {
            cr_expect_eq(r.body_size, sizeof(struct kat_api_rec), "the fixed struct is the body");
            if (kat_api_vendor_call(&r) == 8)
                tailed++;
            else if (kat_api_vendor_call(&r) == 0)
                plain++;
        } else {
            cr_expect_eq(kat_api_vendor_call(&r), 0, "only API records have the tail");
        }
    cr_expect_eq(tailed, 1);
    cr_expect_eq(plain, 1);
    struct kat_trace_index ix;
    kat_trace_index_init(&ix);
    cr_assert_eq(kat_trace_index_build(&ix, t, 1, err, sizeof err), 0, "%s", err);
    cr_expect_eq(kat_trace_index_vendor_call_of(&ix, 20), 8);
    cr_expect_eq(kat_trace_index_vendor_call_of(&ix, 21), 0);
    const struct kat_index_kernel *first;
    cr_assert_eq(kat_trace_index_window(&ix, 8, &first), 1);
    cr_expect_eq(first[0].correlation_id, 20);
    kat_trace_index_free(&ix);
    kat_trace_close(t);
    tb_free(&b);
}

/* The outer call is the nearest earlier depth-1 call of the same thread that
 * was open at the nested call's entry; correlation id 0 (CUPTI's "none")
 * joins nothing. */
Test(trace_reader, trace_index_outer_call_is_on_the_same_thread_and_open)
{
    struct tb b;
    tb_init(&b, 100, 1, KAT_ORIGIN_EXEC, 5000);
    struct kat_vendor_call_rec calls[] = {
        { .call_id = 1, .enter_ns = 100, .exit_ns = 150, .library = KAT_LIB_CUDNN, .thread_id = 1, .depth = 1 },
        { .call_id = 2, .enter_ns = 200, .exit_ns = 900, .library = KAT_LIB_CUBLAS, .thread_id = 1, .depth = 1 },
        { .call_id = 3, .enter_ns = 250, .exit_ns = 950, .library = KAT_LIB_CUBLAS, .thread_id = 2, .depth = 1 },
        { .call_id = 4, .enter_ns = 300, .exit_ns = 400, .library = KAT_LIB_CUBLASLT, .thread_id = 2, .depth = 2 },
        { .call_id = 5, .enter_ns = 500, .exit_ns = 600, .library = KAT_LIB_CUBLASLT, .thread_id = 1, .depth = 2 },
        /* nested, but no depth-1 call of its thread is open at its entry */
        { .call_id = 6, .enter_ns = 1000, .exit_ns = 1100, .library = KAT_LIB_CUBLASLT, .thread_id = 1, .depth = 2 },
    };
    for (int i = 0; i < 6; i++)
        tb_record(&b, KAT_REC_VENDOR_CALL, &calls[i], sizeof(calls[i]), NULL, 0);
    struct kat_external_correlation_rec x = { KAT_VENDOR_CORRELATION_KIND, 0, 2 };
    tb_record(&b, KAT_REC_EXTERNAL_CORRELATION, &x, sizeof(x), NULL, 0);
    struct kat_trace *t = open_built(&b);
    struct kat_trace_index ix;
    kat_trace_index_init(&ix);
    char err[256];
    cr_assert_eq(kat_trace_index_build(&ix, t, 0, err, sizeof err), 0, "%s", err);
    cr_expect_eq(kat_trace_index_outermost(&ix, kat_trace_index_call(&ix, 4))->call_id, 3);
    cr_expect_eq(kat_trace_index_outermost(&ix, kat_trace_index_call(&ix, 5))->call_id, 2,
                 "thread 2's open call does not hold thread 1's");
    cr_expect_eq(kat_trace_index_outermost(&ix, kat_trace_index_call(&ix, 6))->call_id, 6);
    cr_expect_eq(kat_trace_index_vendor_call_of(&ix, 0), 0, "correlation id 0 joins a window");
    kat_trace_index_free(&ix);
    kat_trace_close(t);
    tb_free(&b);
}

TestSuite(session, .init = setup, .fini = teardown);

static void write_trace(const char *name, uint32_t pid, uint64_t start)
{
    struct tb b;
    tb_init(&b, pid, 1, KAT_ORIGIN_EXEC, start);
    char p[4200];
    snprintf(p, sizeof(p), "%s/%s", dir, name);
    cr_assert_eq(tb_write(&b, p), 0);
    tb_free(&b);
}

Test(session, info_and_traces_sorted_by_start_then_pid)
{
    tb_write_text(dir, "info",
                  "kaudit-session\n"
                  "format_version: 1\n"
                  "command: python3 -c 'print(1)'\n"
                  "status: running\n"
                  "\n"
                  "gpu: NVIDIA H200\n"
                  "status: exited 0\n");
    tb_write_text(dir, "kaudit.log", "not a trace\n");
    write_trace("p300-100.kat", 300, 100);
    write_trace("p200-300.kat", 200, 300);
    write_trace("p100-300.kat", 100, 300);
    /* unreadable header: sorted by its name instead */
    tb_write_text(dir, "p50-200.kat", "garbage");

    struct kat_session *s;
    char err[512];
    cr_assert_eq(kat_session_open(dir, &s, err, sizeof(err)), 0, "%s", err);
    cr_assert_str_eq(kat_session_info(s, "format_version"), "1");
    cr_assert_str_eq(kat_session_info(s, "command"), "python3 -c 'print(1)'");
    cr_assert_str_eq(kat_session_info(s, "status"), "exited 0", "the last value wins");
    cr_assert_str_eq(kat_session_info(s, "gpu"), "NVIDIA H200");
    cr_assert_null(kat_session_info(s, "driver_version"));
    cr_assert_eq(kat_session_info_count(s), 4);
    cr_assert_str_eq(kat_session_info_key(s, 0), "format_version");

    cr_assert_eq(kat_session_trace_count(s), 4);
    cr_assert_str_eq(kat_session_trace_name(s, 0), "p300-100.kat");
    cr_assert_str_eq(kat_session_trace_name(s, 1), "p50-200.kat");
    cr_assert_str_eq(kat_session_trace_name(s, 2), "p100-300.kat");
    cr_assert_str_eq(kat_session_trace_name(s, 3), "p200-300.kat");
    cr_assert_eq(kat_session_trace_pid(s, 2), 100);
    cr_assert_eq(kat_session_trace_start_ns(s, 2), 300);
    char want[4200];
    snprintf(want, sizeof(want), "%s/p300-100.kat", dir);
    cr_assert_str_eq(kat_session_trace_path(s, 0), want);
    kat_session_close(s);
}

Test(session, missing_info_is_an_error_naming_the_dir)
{
    struct kat_session *s = (void *)1;
    char err[512];
    cr_assert_eq(kat_session_open(dir, &s, err, sizeof(err)), -1);
    cr_assert_null(s);
    cr_assert(strstr(err, dir) && strstr(err, "no 'info' file"), "%s", err);
}

Test(session, info_must_start_with_the_magic_line)
{
    tb_write_text(dir, "info", "format_version: 1\n");
    struct kat_session *s;
    char err[512];
    cr_assert_eq(kat_session_open(dir, &s, err, sizeof(err)), -1);
    cr_assert(strstr(err, "does not start with 'kaudit-session'"), "%s", err);
}

Test(session, info_lines_must_be_key_value)
{
    tb_write_text(dir, "info", "kaudit-session\nformat_version: 1\njust words\n");
    struct kat_session *s;
    char err[512];
    cr_assert_eq(kat_session_open(dir, &s, err, sizeof(err)), -1);
    cr_assert(strstr(err, "line 3 is not 'key: value'"), "%s", err);
}

Test(session, not_a_directory)
{
    tb_write_text(dir, "file", "x");
    char p[4200];
    snprintf(p, sizeof(p), "%s/file", dir);
    struct kat_session *s;
    char err[512];
    cr_assert_eq(kat_session_open(p, &s, err, sizeof(err)), -1);
    cr_assert(strstr(err, "not a directory"), "%s", err);
    snprintf(p, sizeof(p), "%s/absent", dir);
    cr_assert_eq(kat_session_open(p, &s, err, sizeof(err)), -1);
    cr_assert(strstr(err, "No such file or directory"), "%s", err);
}
