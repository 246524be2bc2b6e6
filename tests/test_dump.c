/*
 * test_dump.c - `kaudit dump` end to end on a synthetic session.
 *
 * The session has what the preload library writes for `sh -c 'child'`-like
 * runs: a parent that forks and reaps a child (exit 3), and the child's own
 * trace, cut short (no end record) after one vendor call that launched one
 * kernel plus one kernel outside any vendor window.  The built kaudit binary
 * is run through popen; CMake passes its path as KAUDIT_BIN.
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "trace_builder.h"

#ifndef KAUDIT_BIN
#error "KAUDIT_BIN must name the built kaudit binary"
#endif

static char *dir;

static void write_session(void)
{
    dir = tb_tempdir();
    cr_assert(dir);
    tb_write_text(dir, "info",
                  "kaudit-session\n"
                  "format_version: 1\n"
                  "tool_version: 0.1.0\n"
                  "command: sh -c \"run\\tme\"\n"
                  "host: testhost\n"
                  "status: exited 0\n"
                  "gpu: NVIDIA H200\n");
    char p[4200];

    /* parent: pid 100, forks 101, reaps it with exit status 3 */
    struct tb b;
    tb_init(&b, 100, 1, KAT_ORIGIN_EXEC, 1000);
    tb_process_start(&b, (const char *[]){ "sh", "-c", "run me", NULL }, "/bin/sh", "/w");
    struct kat_fork_rec f = { .child_pid = 101, .kind = KAT_FORK_FORK, .time_ns = 1100 };
    tb_record(&b, KAT_REC_FORK, &f, sizeof(f), NULL, 0);
    struct kat_child_exit_rec c = { .child_pid = 101, .wait_status = 3 << 8, .time_ns = 1900 };
    tb_record(&b, KAT_REC_CHILD_EXIT, &c, sizeof(c), NULL, 0);
    uint32_t detail = tb_string(&b, "/usr/local/cuda/lib64/libcupti.so.13");
    struct kat_health_rec h = { .code = KAT_HEALTH_CUPTI_LIBRARY, .detail_string = detail };
    tb_record(&b, KAT_REC_HEALTH, &h, sizeof(h), NULL, 0);
    tb_process_end(&b, KAT_END_EXIT, 0, 1);
    snprintf(p, sizeof(p), "%s/p100-1000.kat", dir);
    cr_assert_eq(tb_write(&b, p), 0);
    tb_free(&b);

    /* child: pid 101, one vendor call with one kernel inside, one kernel outside, truncated */
    tb_init(&b, 101, 100, KAT_ORIGIN_FORK, 1200);
    tb_process_start(&b, (const char *[]){ "sh", "-c", "run me", NULL }, "/bin/sh", "/w");
    uint32_t gemm = tb_string(&b, "sm90_xmma_gemm_f32f32");
    uint32_t mine = tb_string(&b, "my\tkernel\"\x01\xff");
    uint32_t api = tb_string(&b, "cublasSgemm_v2");
    uint32_t caller = tb_string(&b, "/w/candidate.so");
    struct kat_vendor_call_rec v = {
        .call_id = 7, .enter_ns = 1300, .exit_ns = 1400, .api_string = api,
        .library = KAT_LIB_CUBLAS, .caller_string = caller, .thread_id = 101, .depth = 1,
        .work_class = KAT_WORK_GEMM, .summary_known = 1,
        .op.gemm = { .m = 128, .n = 256, .k = 64, .batch = 1 },
    };
    tb_record(&b, KAT_REC_VENDOR_CALL, &v, sizeof(v), NULL, 0);
    struct kat_kernel_rec k1 = { .start_ns = 1310, .end_ns = 1390, .stream_id = 7,
                                 .correlation_id = 42, .name_string = gemm,
                                 .grid = { 2, 1, 1 }, .block = { 128, 1, 1 } };
    tb_record(&b, KAT_REC_KERNEL, &k1, sizeof(k1), NULL, 0);
    struct kat_kernel_rec k2 = { .start_ns = 1500, .end_ns = 1600, .stream_id = 7,
                                 .correlation_id = 43, .name_string = mine };
    tb_record(&b, KAT_REC_KERNEL, &k2, sizeof(k2), NULL, 0);
    /* CUPTI may deliver the external correlation after the kernel it labels */
    struct kat_external_correlation_rec x = { KAT_VENDOR_CORRELATION_KIND, 42, 7 };
    tb_record(&b, KAT_REC_EXTERNAL_CORRELATION, &x, sizeof(x), NULL, 0);
    struct kat_timing_call_rec t = { .api = KAT_TIMING_EVENT_ELAPSED, .elapsed_ms = 1.5f,
                                     .event = 1, .event2 = 2 };
    tb_record(&b, KAT_REC_TIMING_CALL, &t, sizeof(t), NULL, 0);
    tb_zeros(&b, 256);          /* the unwritten rest of the segment */
    snprintf(p, sizeof(p), "%s/p101-1200.kat", dir);
    cr_assert_eq(tb_write(&b, p), 0);
    tb_free(&b);
}

static void remove_session(void)
{
    tb_remove_dir(dir);
    free(dir);
}

/* Run kaudit with `args`; returns its exit status, output in a malloc'd string. */
static int run_kaudit(const char *args, char **out)
{
    char cmd[8192];
    snprintf(cmd, sizeof(cmd), "'%s' %s 2>&1", KAUDIT_BIN, args);
    FILE *f = popen(cmd, "r");
    cr_assert(f, "popen failed");
    size_t cap = 1 << 16, len = 0;
    char *buf = malloc(cap);
    size_t got;
    while ((got = fread(buf + len, 1, cap - len - 1, f)) > 0) {
        len += got;
        if (len + 1 == cap)
            buf = realloc(buf, cap *= 2);
    }
    buf[len] = '\0';
    int status = pclose(f);
    *out = buf;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static void expect_in(const char *out, const char *needle)
{
    cr_assert(strstr(out, needle), "missing %s\n--- output ---\n%s", needle, out);
}

TestSuite(dump, .init = write_session, .fini = remove_session);

Test(dump, json_joins_processes_and_vendor_windows)
{
    char args[4200], *out;
    snprintf(args, sizeof(args), "dump --json '%s'", dir);
    int rc = run_kaudit(args, &out);
    cr_assert_eq(rc, 0, "exit %d\n%s", rc, out);
    expect_in(out, "{\"format\":\"kaudit-dump\",\"version\":1,");
    expect_in(out, "\"session\":{\"format_version\":\"1\",\"tool_version\":\"0.1.0\","
                   "\"command\":\"sh -c \\\"run\\\\tme\\\"\"");
    expect_in(out, "\"gpu\":\"NVIDIA H200\"");
    /* parent */
    expect_in(out, "{\"file\":\"p100-1000.kat\",\"pid\":100,\"ppid\":1,\"origin\":\"exec\"");
    expect_in(out, "\"argv\":[\"sh\",\"-c\",\"run me\"]");
    expect_in(out, "\"complete\":true");
    expect_in(out, "\"end\":{\"kind\":\"exit\",\"status\":0,");
    expect_in(out, "\"children\":[{\"pid\":101,\"kind\":\"fork\"");
    expect_in(out, "\"child_exits\":[{\"pid\":101,\"wait_status\":768");
    expect_in(out, "\"health\":[{\"code\":\"cupti_library\",\"detail\":\"/usr/local/cuda/lib64/libcupti.so.13\"");
    /* child: truncated, with the parent's view of its exit */
    expect_in(out, "{\"file\":\"p101-1200.kat\",\"pid\":101,\"ppid\":100,\"origin\":\"fork\"");
    expect_in(out, "\"complete\":false,\"read_error\":null,\"end\":null");
    expect_in(out, "\"parent_saw\":{\"wait_status\":768,\"exited\":true,\"code\":3,\"signal\":null}");
    expect_in(out, "\"counts\":{\"kernels\":2,\"kernels_in_vendor_window\":1,\"api_calls\":0,"
                   "\"vendor_calls\":1,");
    expect_in(out, "{\"name\":\"sm90_xmma_gemm_f32f32\",\"correlation_id\":42,\"vendor_call_id\":7,");
    /* escaping: tab, quote, control byte, invalid UTF-8 */
    expect_in(out, "{\"name\":\"my\\tkernel\\\"\\u0001\\u00ff\",\"correlation_id\":43,"
                   "\"vendor_call_id\":null,");
    expect_in(out, "\"grid\":[2,1,1],\"block\":[128,1,1]");
    expect_in(out, "\"call_id\":7,\"api\":\"cublasSgemm_v2\",\"library\":\"cublas\","
                   "\"caller\":\"/w/candidate.so\"");
    expect_in(out, "\"work_class\":\"gemm\"");
    expect_in(out, "\"op\":{\"kind\":\"gemm\",\"dtype_space\":0,\"m\":128,\"n\":256,\"k\":64,");
    expect_in(out, "\"kernel_correlation_ids\":[42]");
    expect_in(out, "\"api\":\"event_elapsed\"");
    expect_in(out, "\"elapsed_ms\":1.5,");
    expect_in(out, "\"unreadable\":[]}");
    free(out);
}

Test(dump, human_output_marks_truncation_and_parent_view)
{
    char args[4200], *out;
    snprintf(args, sizeof(args), "dump '%s'", dir);
    int rc = run_kaudit(args, &out);
    cr_assert_eq(rc, 0, "exit %d\n%s", rc, out);
    expect_in(out, "  status: exited 0\n");
    expect_in(out, "process 101 (p101-1200.kat)");
    expect_in(out, "  argv: sh -c 'run me'\n");
    expect_in(out, "  end: TRUNCATED: no end record\n");
    expect_in(out, "  parent saw: exited 3\n");
    expect_in(out, "  counts: 2 kernels (1 in a vendor window, 1 other)");
    expect_in(out, "    reaped 101: exited 3\n");
    expect_in(out, "    cupti_library");
    expect_in(out, "-> 1.5 ms");
    free(out);
}

Test(dump, kernels_tsv)
{
    char args[4200], *out;
    snprintf(args, sizeof(args), "dump --kernels '%s'", dir);
    int rc = run_kaudit(args, &out);
    cr_assert_eq(rc, 0, "exit %d\n%s", rc, out);
    cr_assert_str_eq(out, "101\t42\t7\t7\t1310\t1390\tsm90_xmma_gemm_f32f32\n"
                          "101\t43\t-\t7\t1500\t1600\tmy\\tkernel\"\\x01\xff\n");
    free(out);
}

Test(dump, malformed_trace_reports_offset_and_exits_1)
{
    /* a third trace: one good record, then a record of size 12 */
    struct tb b;
    tb_init(&b, 102, 100, KAT_ORIGIN_FORK, 1300);
    struct kat_clock_sync_rec c = { 1, 2, 3 };
    tb_record(&b, KAT_REC_CLOCK_SYNC, &c, sizeof(c), NULL, 0);
    struct kat_record_header bad = { .size = 12, .type = KAT_REC_KERNEL };
    tb_raw(&b, &bad, sizeof(bad));
    tb_zeros(&b, 16);
    char p[4200], args[4200], *out;
    snprintf(p, sizeof(p), "%s/p102-1300.kat", dir);
    cr_assert_eq(tb_write(&b, p), 0);
    tb_free(&b);

    snprintf(args, sizeof(args), "dump --json '%s'", dir);
    int rc = run_kaudit(args, &out);
    cr_assert_eq(rc, 1, "exit %d\n%s", rc, out);
    char want[8400];
    snprintf(want, sizeof(want),
             "kaudit: error: cannot read trace '%s': record at offset 96 has size 12 (not a multiple of 8)\n", p);
    expect_in(out, want);
    expect_in(out, "\"file\":\"p102-1300.kat\"");
    expect_in(out, "\"read_error\":\"cannot read trace ");
    /* the other processes are still dumped */
    expect_in(out, "\"file\":\"p100-1000.kat\"");
    free(out);

    snprintf(args, sizeof(args), "dump '%s'", dir);
    rc = run_kaudit(args, &out);
    cr_assert_eq(rc, 1);
    expect_in(out, "  MALFORMED: cannot read trace ");
    free(out);
}

Test(dump, bad_arguments_and_directories)
{
    char *out;
    cr_assert_eq(run_kaudit("dump", &out), 2);
    expect_in(out, "kaudit: error: dump needs a session directory");
    /* a usage error: the message and the synopsis, not the whole help */
    cr_expect_str_eq(out, "kaudit: error: dump needs a session directory\n"
                          "usage: kaudit dump [--json | --kernels] DIR (kaudit dump --help for more)\n");
    free(out);
    cr_assert_eq(run_kaudit("dump --frobnicate x", &out), 2);
    expect_in(out, "unknown option '--frobnicate'");
    cr_expect_str_eq(out, "kaudit: error: unknown option '--frobnicate'\n"
                          "usage: kaudit dump [--json | --kernels] DIR (kaudit dump --help for more)\n");
    free(out);

    char args[4200];
    snprintf(args, sizeof(args), "dump '%s/info'", dir);
    cr_assert_eq(run_kaudit(args, &out), 1);
    expect_in(out, "not a directory");
    free(out);

    snprintf(args, sizeof(args), "dump '%s/..'", dir);
    cr_assert_eq(run_kaudit(args, &out), 1);
    expect_in(out, "no 'info' file");
    free(out);
}
