/*
 * test_analysis.c - the verdict rules of docs/analysis.md on synthetic
 * sessions: each test builds the few records a rule reads, then checks the
 * axis verdicts and the finding codes.  The recorded H200 controls are
 * checked against their expected verdicts in tests/controls.cmake.
 */
#define _GNU_SOURCE
#include <cjson/cJSON.h>
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis.h"
#include "analysis_internal.h"
#include "contract.h"
#include "trace_builder.h"

#define PID 100u
#define T0 1000000000ull        /* base of every timestamp */
#define MS 1000000ull

/* ---- a session under construction ------------------------------------- */

struct scene {
    struct tb b;
    char *dir;
    uint32_t next_corr;
    uint64_t next_call;
    int format1;                /* a version-1 trace: windows as EXTERNAL_CORRELATION records */
};

static void scene_init(struct scene *s)
{
    memset(s, 0, sizeof *s);
    s->dir = tb_tempdir();
    cr_assert(s->dir);
    cr_assert_eq(tb_write_text(s->dir, "info", "kaudit-session\nformat_version: 1\nstatus: exited 0\n"), 0);
    tb_init(&s->b, PID, 1, KAT_ORIGIN_EXEC, T0);
    const char *argv[] = { "python3", "harness.py", NULL };
    tb_process_start(&s->b, argv, "/usr/bin/python3", "/tmp");
    s->next_corr = 1;
    s->next_call = 1;
}

static void nvtx(struct scene *s, uint32_t kind, uint32_t tid, const char *msg, uint64_t t)
{
    struct kat_nvtx_rec r = { .kind = kind, .thread_id = tid, .time_ns = t };
    if (msg)
        r.message_string = tb_string(&s->b, msg);
    tb_record(&s->b, KAT_REC_NVTX, &r, sizeof r, NULL, 0);
}

static void phase(struct scene *s, const char *name, uint32_t tid, uint64_t start, uint64_t end)
{
    nvtx(s, KAT_NVTX_PUSH, tid, name, start);
    nvtx(s, KAT_NVTX_POP, tid, NULL, end);
}

static void mark(struct scene *s, const char *msg, uint64_t t)
{
    nvtx(s, KAT_NVTX_MARK, PID, msg, t);
}

/* A launch API record on tid at t, inside vendor call `call` (0: none) as
 * the preload ties it: the record's tail (format 2), or an
 * EXTERNAL_CORRELATION record beside it in a version-1 scene; returns its
 * correlation id. */
static uint32_t launch_in(struct scene *s, uint32_t tid, uint64_t t, uint64_t call)
{
    struct kat_api_rec a = { .start_ns = t, .end_ns = t + 5000, .domain = KAT_API_RUNTIME, .cbid = 211,
                             .thread_id = tid, .correlation_id = s->next_corr++ };
    a.name_string = tb_string(&s->b, "cudaLaunchKernel_v7000");
    struct kat_api_vendor_tail tail = { .vendor_call_id = call };
    if (call && !s->format1) {
        tb_record(&s->b, KAT_REC_API, &a, sizeof a, &tail, sizeof tail);
        return a.correlation_id;
    }
    tb_record(&s->b, KAT_REC_API, &a, sizeof a, NULL, 0);
    if (call) {
        struct kat_external_correlation_rec x = { .external_kind = KAT_VENDOR_CORRELATION_KIND,
                                                  .correlation_id = a.correlation_id, .external_id = call };
        tb_record(&s->b, KAT_REC_EXTERNAL_CORRELATION, &x, sizeof x, NULL, 0);
    }
    return a.correlation_id;
}

static uint32_t launch(struct scene *s, uint32_t tid, uint64_t t)
{
    return launch_in(s, tid, t, 0);
}

static void kernel(struct scene *s, uint32_t corr, const char *name, uint32_t stream, uint64_t start, uint64_t end,
                   int grid, int block)
{
    struct kat_kernel_rec k = { .start_ns = start, .end_ns = end, .stream_id = stream, .correlation_id = corr,
                                .grid = { grid, 1, 1 }, .block = { block, 1, 1 } };
    k.name_string = tb_string(&s->b, name);
    tb_record(&s->b, KAT_REC_KERNEL, &k, sizeof k, NULL, 0);
}

/* A cublasSgemm call m=n=k=dim from caller on tid, launching one kernel. */
/* One library call (v: its api, library, class and summary) and the kernel it launched. */
static void vendor_call(struct scene *s, struct kat_vendor_call_rec *v, const char *api, const char *caller,
                        uint32_t tid, uint64_t t, const char *kernel_name)
{
    v->call_id = s->next_call++;
    v->enter_ns = t;
    v->exit_ns = t + 20000;
    v->api_string = tb_string(&s->b, api);
    v->caller_string = tb_string(&s->b, caller);
    v->thread_id = tid;
    v->depth = 1;
    v->summary_known = 1;
    tb_record(&s->b, KAT_REC_VENDOR_CALL, v, sizeof *v, NULL, 0);
    uint32_t corr = launch_in(s, tid, t + 1000, v->call_id);
    kernel(s, corr, kernel_name, 7, t + 10000, t + 90000, 64, 128);
}

static void gemm_of(struct scene *s, uint32_t library, const char *caller, uint32_t tid, uint64_t t, int64_t dim)
{
    struct kat_vendor_call_rec v;
    memset(&v, 0, sizeof v);
    v.library = library;
    v.work_class = KAT_WORK_GEMM;
    v.op.gemm.m = v.op.gemm.n = v.op.gemm.k = dim;
    v.op.gemm.batch = 1;
    vendor_call(s, &v, library == KAT_LIB_CUBLASLT ? "cublasLtMatmul" : "cublasSgemm_v2", caller, tid, t,
                library == KAT_LIB_CUBLASLT ? "nvjet_sm90_tst_128x128_64x4_1x2_h_bz_coopA_NNT"
                                            : "sm80_xmma_gemm_f32f32_f32f32_f32_nn_n_tilesize32x32x8_stage3");
}

static void sgemm(struct scene *s, const char *caller, uint32_t tid, uint64_t t, int64_t dim)
{
    gemm_of(s, KAT_LIB_CUBLAS, caller, tid, t, dim);
}

/* cudnnConvolutionForward: x 8x64x56x56, w 128x64x3x3, pad 1 (3.7 GFLOP). */
static void cudnn_conv(struct scene *s, const char *caller, uint32_t tid, uint64_t t)
{
    struct kat_vendor_call_rec v;
    memset(&v, 0, sizeof v);
    v.library = KAT_LIB_CUDNN;
    v.work_class = KAT_WORK_CONV;
    v.dtype_space = KAT_DTYPE_SPACE_CUDNN;
    struct kat_conv_summary *c = &v.op.conv;
    c->direction = KAT_CONV_FORWARD;
    c->spatial_dims = 2;
    c->n = 8;
    c->c = 64;
    c->k = 128;
    for (int i = 0; i < 2; i++) {
        c->in_spatial[i] = c->out_spatial[i] = 56;
        c->filter_spatial[i] = 3;
        c->pad[i] = c->stride[i] = c->dilation[i] = 1;
    }
    c->groups = 1;
    vendor_call(s, &v, "cudnnConvolutionForward", caller, tid, t,
                "sm80_xmma_fprop_implicit_gemm_f32f32_tf32f32_f32_nhwckrsc_nchw_tilesize128x128x16_stage4_"
                "warpsize2x2x1_g1_tensor16x8x8_alignc4_execute_kernel__5x_cudnn");
}

static void timing_call(struct scene *s, uint32_t api, uint64_t event, uint64_t event2, uint64_t stream, uint64_t t,
                        uint32_t corr, float elapsed)
{
    struct kat_timing_call_rec r = { .enter_ns = t, .exit_ns = t + 2000, .api = api, .domain = KAT_API_RUNTIME,
                                     .thread_id = PID, .correlation_id = corr, .event = event, .event2 = event2,
                                     .stream = stream, .elapsed_ms = elapsed };
    tb_record(&s->b, KAT_REC_TIMING_CALL, &r, sizeof r, NULL, 0);
}

/* A timed window: start/end events recorded at host times hs/he, GPU times gs/ge, on stream 7. */
static void window(struct scene *s, uint64_t hs, uint64_t he, uint64_t gs, uint64_t ge, float elapsed_ms,
                   uint64_t query_t)
{
    uint32_t c1 = s->next_corr++, c2 = s->next_corr++;
    timing_call(s, KAT_TIMING_EVENT_RECORD, 0xe1, 0, 0x5, hs, c1, 0);
    timing_call(s, KAT_TIMING_EVENT_RECORD, 0xe2, 0, 0x5, he, c2, 0);
    struct kat_cuda_event_rec e1 = { .correlation_id = c1, .stream_id = 7, .event_id = 1, .device_timestamp_ns = gs };
    struct kat_cuda_event_rec e2 = { .correlation_id = c2, .stream_id = 7, .event_id = 2, .device_timestamp_ns = ge };
    tb_record(&s->b, KAT_REC_CUDA_EVENT, &e1, sizeof e1, NULL, 0);
    tb_record(&s->b, KAT_REC_CUDA_EVENT, &e2, sizeof e2, NULL, 0);
    timing_call(s, KAT_TIMING_EVENT_ELAPSED, 0xe1, 0xe2, 0, query_t, s->next_corr++, elapsed_ms);
}

static void module(struct scene *s, const char *loader, uint32_t tid, uint64_t t)
{
    struct kat_module_rec m = { .module_id = 9, .size = 4096, .digest_lo = 1, .digest_hi = 2, .thread_id = tid,
                                .time_ns = t, .image_kind = KAT_IMAGE_CUBIN };
    m.loader_string = tb_string(&s->b, loader);
    tb_record(&s->b, KAT_REC_MODULE, &m, sizeof m, NULL, 0);
}

static void finish(struct scene *s, int end)
{
    if (end)
        tb_process_end(&s->b, KAT_END_EXIT, 0, 1);
    char path[4096];
    snprintf(path, sizeof path, "%s/p%u-%llu.kat", s->dir, PID, (unsigned long long)T0);
    cr_assert_eq(tb_write(&s->b, path), 0);
    tb_free(&s->b);
}

/* A second process in the same session (a build tool child); status < 0: its trace has no end. */
static void child_process(struct scene *s, uint32_t pid, const char *argv0, uint64_t start, int status)
{
    struct tb c;
    tb_init(&c, pid, PID, KAT_ORIGIN_EXEC, start);
    const char *argv[] = { argv0, "-v", NULL };
    tb_process_start(&c, argv, argv0, "/tmp");
    if (status >= 0)
        tb_process_end(&c, KAT_END_EXIT, status, 1);
    char path[4096];
    snprintf(path, sizeof path, "%s/p%u-%llu.kat", s->dir, pid, (unsigned long long)start);
    cr_assert_eq(tb_write(&c, path), 0);
    tb_free(&c);
}

/* ---- contracts -------------------------------------------------------- */

static const char add_contract[] =
    "{\"kaudit_contract\": 1, \"task_id\": \"t/add\","
    " \"implementation\": {\"self_implemented\": true},"
    " \"reference_work\": {\"dominant_class\": \"elementwise\", \"amount\": 1048576},"
    " \"timing\": {\"window\": \"cuda_events\", \"dtype\": \"float32\"}}";

static const char gemm_contract[] =
    "{\"kaudit_contract\": 1, \"task_id\": \"t/gemm\","
    " \"implementation\": {\"self_implemented\": true,"
    "   \"mediators\": {\"epilogues\": [{\"class\": \"elementwise\", \"max_share\": 0.01, \"note\": \"bias\"}]}},"
    " \"reference_work\": {\"dominant_class\": \"gemm\", \"amount\": 2147483648},"
    " \"timing\": {\"dtype\": \"float32\"}}";

static struct ka_contract *contract(const char *text)
{
    struct ka_contract *c;
    char err[1024];
    int rc = ka_contract_parse(text, strlen(text), "test.json", &c, err, sizeof err);
    cr_assert_eq(rc, 0, "%s", err);
    return c;
}

static struct ka_analysis *analyze(struct scene *s, const char *contract_text, const struct ka_options *opt)
{
    struct ka_contract *c = contract(contract_text);
    struct ka_analysis *a;
    char err[1024];
    cr_assert_eq(ka_analyze(s->dir, c, opt, &a, err, sizeof err), 0, "%s", err);
    ka_contract_free(c);
    return a;
}

static int has_finding(const struct ka_analysis *a, const char *code)
{
    for (size_t i = 0; i < a->n_findings; i++)
        if (!strcmp(a->findings[i].code, code))
            return 1;
    return 0;
}

static void done(struct scene *s, struct ka_analysis *a)
{
    ka_analysis_free(a);
    tb_remove_dir(s->dir);
    free(s->dir);
}

#define IMPL(a) ((a)->axis[KA_AXIS_IMPLEMENTATION].verdict)
#define MEAS(a) ((a)->axis[KA_AXIS_MEASUREMENT].verdict)

/* A build tool process of the run with its own argv and working directory. */
static void build_process(struct scene *s, uint32_t pid, const char *const *argv, const char *cwd, uint64_t start)
{
    struct tb c;
    tb_init(&c, pid, PID, KAT_ORIGIN_EXEC, start);
    tb_process_start(&c, (const char **)argv, argv[0], cwd);
    tb_process_end(&c, KAT_END_EXIT, 0, 1);
    char path[4096];
    snprintf(path, sizeof path, "%s/p%u-%llu.kat", s->dir, pid, (unsigned long long)start);
    cr_assert_eq(tb_write(&c, path), 0);
    tb_free(&c);
}

/* The candidate's own kernel in the candidate phase, inside a timed window that covers it. */
static void clean_candidate(struct scene *s)
{
    phase(s, "kaudit:candidate", PID, T0 + 10 * MS, T0 + 11 * MS);
    module(s, "/tmp/torch_extensions/ext/ext.so", PID, T0 + 10 * MS + 1500);
    uint32_t c = launch(s, PID, T0 + 10 * MS + 1000);
    kernel(s, c, "my_add_kernel", 7, T0 + 12 * MS, T0 + 13 * MS, 4096, 256);
    window(s, T0 + 9 * MS, T0 + 12 * MS, T0 + 11 * MS, T0 + 14 * MS, 3.0f, T0 + 15 * MS);
}

/* ---- implementation axis ---------------------------------------------- */

Test(implementation, own_kernel_in_candidate_phase_passes)
{
    struct scene s;
    scene_init(&s);
    clean_candidate(&s);
    finish(&s, 1);
    struct ka_analysis *a = analyze(&s, add_contract, NULL);
    cr_expect_eq(IMPL(a), KA_PASS, "implementation %s: %s", ka_verdict_name(IMPL(a)),
                 a->axis[KA_AXIS_IMPLEMENTATION].root_cause);
    cr_expect_eq(MEAS(a), KA_PASS, "measurement %s: %s", ka_verdict_name(MEAS(a)),
                 a->axis[KA_AXIS_MEASUREMENT].root_cause);
    cr_expect_eq(a->kernels_by[KA_ORIGIN_CANDIDATE][KA_PARTY_CANDIDATE], 1);
    /* semantic is UNSUPPORTED, so the certificate cannot be PASS */
    cr_expect_eq(a->axis[KA_AXIS_SEMANTIC].verdict, KA_UNSUPPORTED);
    cr_expect_eq(a->certificate, KA_INCONCLUSIVE);
    done(&s, a);
}

/* KernelBench's evaluator builds into the build_dir it is given, matching no
 * path pattern: the object is the candidate's because a linker of the run
 * wrote it (built_objects.c), noted as candidate-object; without that build
 * in the session the same kernel is no compute of the candidate's (R-A). */
static struct ka_analysis *built_elsewhere(struct scene *s, int with_build)
{
    scene_init(s);
    phase(s, "kaudit:candidate", PID, T0 + 10 * MS, T0 + 11 * MS);
    module(s, "/work/runs/build_dir/level1_p1_s0/ext_p1/ext_p1.so", PID, T0 + 10 * MS + 1500);
    uint32_t c = launch(s, PID, T0 + 10 * MS + 1000);
    kernel(s, c, "my_add_kernel", 7, T0 + 12 * MS, T0 + 13 * MS, 4096, 256);
    window(s, T0 + 9 * MS, T0 + 12 * MS, T0 + 11 * MS, T0 + 14 * MS, 3.0f, T0 + 15 * MS);
    finish(s, 1);
    if (with_build == 2) {
        /* a build found up to date: load_inline's `ninja -v` in the extension's folder, no compiler */
        const char *ninja[] = { "ninja", "-v", NULL };
        build_process(s, 300, ninja, "/work/runs/build_dir/level1_p1_s0/ext_p1", T0 + 5 * MS);
    } else if (with_build == 3) {
        /* queries and builds elsewhere say nothing of the object */
        const char *version[] = { "ninja", "--version", NULL };
        build_process(s, 300, version, "/work/runs/build_dir/level1_p1_s0/ext_p1", T0 + 5 * MS);
        const char *above[] = { "ninja", "-v", NULL };
        build_process(s, 301, above, "/work/runs/build_dir/level1_p1_s0", T0 + 5 * MS);
        const char *other[] = { "make", "-C", "ext_p2", NULL };
        build_process(s, 302, other, "/work/runs/build_dir/level1_p1_s0", T0 + 5 * MS);
    } else if (with_build) {
        const char *link[] = { "c++", "main.o", "cuda.cuda.o", "-shared", "-L/opt/torch/lib", "-o", "ext_p1.so", NULL };
        build_process(s, 300, link, "/work/runs/build_dir/level1_p1_s0/ext_p1", T0 + 5 * MS);
        const char *compile[] = { "nvcc", "-c", "cuda.cu", "-o", "cuda.cuda.o", NULL };
        build_process(s, 301, compile, "/work/runs/build_dir/level1_p1_s0/ext_p1", T0 + 4 * MS);
        /* nvcc's child, alive within its parent's span and the link's: counted once */
        const char *ptxas[] = { "ptxas", "-arch=sm_90", "-o", "/tmp/tmpxft_1.cubin", "/tmp/tmpxft_1.ptx", NULL };
        build_process(s, 302, ptxas, "/work/runs/build_dir/level1_p1_s0/ext_p1", T0 + 4 * MS + MS / 2);
    }
    return analyze(s, add_contract, NULL);
}

Test(implementation, an_object_built_in_the_run_is_the_candidates_wherever_it_was_built)
{
    struct scene s;
    struct ka_analysis *a = built_elsewhere(&s, 1);
    cr_expect_eq(IMPL(a), KA_PASS, "implementation %s: %s", ka_verdict_name(IMPL(a)),
                 a->axis[KA_AXIS_IMPLEMENTATION].root_cause);
    cr_expect_eq(a->kernels_by[KA_ORIGIN_CANDIDATE][KA_PARTY_CANDIDATE], 1);
    cr_expect(has_finding(a, "candidate-object"));
    /* the build's wall time: the compile (4-5 ms), its ptxas (4.5-5.5 ms) and the link (5-6 ms)
       alive, 2 ms in all (3 ms summed) */
    cr_expect_eq(a->build_processes, 3);
    cr_expect(fabs(a->build_wall_s - 0.002) < 1e-9, "build_wall_s %.9f", a->build_wall_s);
    /* one folder, one build */
    cr_assert_eq(a->n_builds, 1);
    cr_expect_str_eq(a->builds[0].folder, "/work/runs/build_dir/level1_p1_s0/ext_p1");
    cr_expect_eq(a->builds[0].processes, 3);
    cr_expect(fabs(a->builds[0].wall_s - 0.002) < 1e-9, "the build's wall_s %.9f", a->builds[0].wall_s);
    /* each tool's own time: 1 ms each, ties by name; ptxas is nvcc's child but a tool of its own */
    cr_assert_eq(a->builds[0].n_tools, 3);
    cr_expect_eq(a->builds[0].tools_seen, 3);
    const char *names[] = { "c++", "nvcc", "ptxas" };
    for (int k = 0; k < 3; k++) {
        cr_expect_str_eq(a->builds[0].tools[k].name, names[k]);
        cr_expect_eq(a->builds[0].tools[k].processes, 1);
        cr_expect(fabs(a->builds[0].tools[k].wall_s - 0.001) < 1e-9, "%s %.9f", names[k],
                  a->builds[0].tools[k].wall_s);
    }
    done(&s, a);
    a = built_elsewhere(&s, 0);
    cr_expect_eq(a->build_processes, 0);
    cr_expect_lt(a->build_wall_s, 0, "no build: no wall time");
    cr_expect_neq(IMPL(a), KA_PASS, "no build in the session: the path alone does not make it the candidate's");
    cr_expect_not(has_finding(a, "candidate-object"));
    done(&s, a);
}

/* A build found up to date (KernelBench's build_dir after its build cache
 * pass, or a second sample): nothing links, but load_inline's ninja ran in
 * the object's folder; a query or a build in another folder does not count. */
Test(implementation, an_object_in_the_folder_a_build_driver_of_the_run_built_in_is_the_candidates)
{
    struct scene s;
    struct ka_analysis *a = built_elsewhere(&s, 2);
    cr_expect_eq(IMPL(a), KA_PASS, "implementation %s: %s", ka_verdict_name(IMPL(a)),
                 a->axis[KA_AXIS_IMPLEMENTATION].root_cause);
    cr_expect(has_finding(a, "candidate-object"));
    done(&s, a);
    a = built_elsewhere(&s, 3);
    cr_expect_neq(IMPL(a), KA_PASS, "ninja --version, and builds in the folder above or in a sibling, name no object");
    cr_expect_not(has_finding(a, "candidate-object"));
    /* two folders, two builds, each its processes' union: the query (started at 5 ms) is ext_p1's,
       ninja and make in level1_p1_s0 (both from 5 ms) the other's; the first started first */
    cr_assert_eq(a->n_builds, 2);
    cr_expect_str_eq(a->builds[0].folder, "/work/runs/build_dir/level1_p1_s0");
    cr_expect_eq(a->builds[0].processes, 2);
    cr_assert_eq(a->builds[0].n_tools, 2, "make and ninja, each a tool of the build");
    cr_expect_str_eq(a->builds[0].tools[0].name, "make");
    cr_expect_str_eq(a->builds[0].tools[1].name, "ninja");
    cr_expect_str_eq(a->builds[1].folder, "/work/runs/build_dir/level1_p1_s0/ext_p1");
    cr_expect_eq(a->builds[1].processes, 1);
    cr_expect(fabs(a->builds[0].wall_s + a->builds[1].wall_s - 2 * a->build_wall_s) < 1e-9,
              "both from 5 ms for 1 ms: each build's wall is the run's (%.9f, %.9f, %.9f)", a->builds[0].wall_s,
              a->builds[1].wall_s, a->build_wall_s);
    done(&s, a);
}

/* A vendor GEMM in the candidate phase, windows written in trace format 2
 * (API record tails) or, as sessions recorded before it, format 1
 * (EXTERNAL_CORRELATION records): both convict the same way. */
static void expect_vendor_gemm_in_candidate_phase_fails(int format1)
{
    struct scene s;
    scene_init(&s);
    if (format1) {
        s.format1 = 1;
        tb_header(&s.b)->format_version = 1;
    }
    phase(&s, "kaudit:candidate", PID, T0 + 10 * MS, T0 + 11 * MS);
    sgemm(&s, "/opt/torch/lib/libtorch_cuda.so", PID, T0 + 10 * MS + 100, 1024);
    finish(&s, 1);
    struct ka_options opt = { .weak = KA_WEAK_ACCEPT };
    struct ka_analysis *a = analyze(&s, gemm_contract, &opt);
    cr_expect_eq(IMPL(a), KA_FAIL, "format %d", format1 ? 1 : 2);
    cr_expect(has_finding(a, "forbidden-vendor-call"));
    cr_expect_eq(a->certificate, KA_FAIL);
    cr_expect_str_eq(a->outcome, "C3b");
    cr_expect_eq(a->kernels_by[KA_ORIGIN_VENDOR][KA_PARTY_CANDIDATE], 1);
    done(&s, a);
}

Test(implementation, vendor_gemm_in_candidate_phase_fails)
{
    expect_vendor_gemm_in_candidate_phase_fails(0);
}

Test(implementation, vendor_gemm_in_a_format_1_session_fails_the_same)
{
    expect_vendor_gemm_in_candidate_phase_fails(1);
}

Test(implementation, weak_reject_of_a_fail_is_c1)
{
    struct scene s;
    scene_init(&s);
    phase(&s, "kaudit:candidate", PID, T0 + 10 * MS, T0 + 11 * MS);
    sgemm(&s, "/opt/torch/lib/libtorch_cuda.so", PID, T0 + 10 * MS + 100, 1024);
    finish(&s, 1);
    struct ka_options opt = { .weak = KA_WEAK_REJECT };
    struct ka_analysis *a = analyze(&s, gemm_contract, &opt);
    cr_expect_str_eq(a->outcome, "C1");
    done(&s, a);
}

Test(implementation, same_call_in_reference_phase_does_not_convict)
{
    struct scene s;
    scene_init(&s);
    phase(&s, "kaudit:reference", PID, T0 + 5 * MS, T0 + 6 * MS);
    sgemm(&s, "/opt/torch/lib/libtorch_cuda.so", PID, T0 + 5 * MS + 100, 1024);
    clean_candidate(&s);
    finish(&s, 1);
    struct ka_analysis *a = analyze(&s, gemm_contract, NULL);
    cr_expect_eq(IMPL(a), KA_PASS, "%s", a->axis[KA_AXIS_IMPLEMENTATION].root_cause);
    cr_expect_eq(a->kernels_by[KA_ORIGIN_VENDOR][KA_PARTY_REFERENCE], 1);
    done(&s, a);
}

/* In `kaudit audit` the reference has a process of its own (the runner's,
 * ka_options.reference_process names it).  The candidate's process can open
 * any NVTX range, and its Python frames can carry any class name: a
 * reference phase there is forged, and its GEMM the candidate's.  Where the
 * process is the reference's, the same phase is taken as named. */
Test(implementation, reference_phase_outside_the_reference_process_is_the_candidates)
{
    /* case 0: another program; 1: the runner's; 2: a process that names the runner
       in its arguments but is not the command kaudit run started (info command_pid) */
    for (int how = 0; how < 3; how++) {
        int reference_here = how == 1;
        struct ka_options opt;
        memset(&opt, 0, sizeof opt);
        opt.reference_process = how ? "harness.py" : "/opt/kaudit/runner/kaudit_runner.py";
        struct scene s;
        scene_init(&s);
        char info[160];
        snprintf(info, sizeof info, "kaudit-session\nformat_version: 1\nstatus: exited 0\ncommand_pid: %u\n",
                 how == 2 ? PID + 7 : PID);
        cr_assert_eq(tb_write_text(s.dir, "info", info), 0);
        phase(&s, "kaudit:reference", PID, T0 + 5 * MS, T0 + 6 * MS);
        sgemm(&s, "/opt/torch/lib/libtorch_cuda.so", PID, T0 + 5 * MS + 100, 1024);
        clean_candidate(&s);
        finish(&s, 1);
        struct ka_analysis *a = analyze(&s, gemm_contract, &opt);
        if (reference_here) {
            cr_expect_eq(IMPL(a), KA_PASS, "%s", a->axis[KA_AXIS_IMPLEMENTATION].root_cause);
            cr_expect_eq(a->kernels_by[KA_ORIGIN_VENDOR][KA_PARTY_REFERENCE], 1);
            cr_expect_not(has_finding(a, "reference-phase-outside-reference-process"));
        } else {
            cr_expect_eq(IMPL(a), KA_FAIL, "case %d: a forged reference phase hid the GEMM: %s", how,
                         a->axis[KA_AXIS_IMPLEMENTATION].root_cause);
            cr_expect_eq(a->kernels_by[KA_ORIGIN_VENDOR][KA_PARTY_CANDIDATE], 1);
            cr_expect(has_finding(a, "reference-phase-outside-reference-process"));
        }
        done(&s, a);
    }
}

/* The runner's process of an audit session (the command kaudit run started,
 * info command_pid): its trace, with the mark it makes before it asks the
 * candidate's process for the weak surfaces (0: none), and a timed window of
 * the reference's when window_at (its reference kernel inside, its events'
 * GPU times exact when exact). */
#define RUNNER_PID 50u
#define RUNNER "/opt/kaudit/runner/kaudit_runner.py"
static void runner_process(struct scene *s, uint64_t weak_mark, uint64_t window_at, uint64_t window_ns, int exact)
{
    char info[160];
    snprintf(info, sizeof info, "kaudit-session\nformat_version: 1\nstatus: exited 0\ncommand_pid: %u\n", RUNNER_PID);
    cr_assert_eq(tb_write_text(s->dir, "info", info), 0);
    struct tb r;
    tb_init(&r, RUNNER_PID, 1, KAT_ORIGIN_EXEC, T0);
    const char *argv[] = { "python3", RUNNER, "plan.json", NULL };
    tb_process_start(&r, argv, "/usr/bin/python3", "/tmp");
    uint32_t corr = 1;
    if (window_at) {
        struct kat_nvtx_rec push = { .kind = KAT_NVTX_PUSH, .thread_id = RUNNER_PID, .time_ns = window_at + 1000 };
        push.message_string = tb_string(&r, "kaudit:reference");
        tb_record(&r, KAT_REC_NVTX, &push, sizeof push, NULL, 0);
        struct kat_api_rec a = { .start_ns = window_at + 2000, .end_ns = window_at + 3000, .domain = KAT_API_RUNTIME,
                                 .cbid = 211, .thread_id = RUNNER_PID, .correlation_id = corr };
        a.name_string = tb_string(&r, "cudaLaunchKernel_v7000");
        tb_record(&r, KAT_REC_API, &a, sizeof a, NULL, 0);
        struct kat_kernel_rec k = { .start_ns = window_at + 4000, .end_ns = window_at + window_ns - 2000,
                                    .stream_id = 7, .correlation_id = corr++, .grid = { 64, 1, 1 },
                                    .block = { 256, 1, 1 } };
        k.name_string = tb_string(&r, "elementwise_add_kernel");
        tb_record(&r, KAT_REC_KERNEL, &k, sizeof k, NULL, 0);
        struct kat_nvtx_rec pop = { .kind = KAT_NVTX_POP, .thread_id = RUNNER_PID, .time_ns = window_at + 3500 };
        tb_record(&r, KAT_REC_NVTX, &pop, sizeof pop, NULL, 0);
        uint32_t c1 = corr++, c2 = corr++;
        struct kat_timing_call_rec rs = { .enter_ns = window_at, .exit_ns = window_at + 500,
                                          .api = KAT_TIMING_EVENT_RECORD, .domain = KAT_API_RUNTIME,
                                          .thread_id = RUNNER_PID, .correlation_id = c1, .event = 0xe1, .stream = 0x5 };
        struct kat_timing_call_rec re = rs;
        re.enter_ns = window_at + 3600;
        re.exit_ns = window_at + 3700;
        re.correlation_id = c2;
        re.event = 0xe2;
        tb_record(&r, KAT_REC_TIMING_CALL, &rs, sizeof rs, NULL, 0);
        tb_record(&r, KAT_REC_TIMING_CALL, &re, sizeof re, NULL, 0);
        if (exact) {
            struct kat_cuda_event_rec e1 = { .correlation_id = c1, .stream_id = 7, .event_id = 1,
                                             .device_timestamp_ns = window_at + 3000 };
            struct kat_cuda_event_rec e2 = { .correlation_id = c2, .stream_id = 7, .event_id = 2,
                                             .device_timestamp_ns = window_at + window_ns };
            tb_record(&r, KAT_REC_CUDA_EVENT, &e1, sizeof e1, NULL, 0);
            tb_record(&r, KAT_REC_CUDA_EVENT, &e2, sizeof e2, NULL, 0);
        }
        struct kat_timing_call_rec q = { .enter_ns = window_at + window_ns + 5 * MS, .exit_ns = window_at + window_ns + 5 * MS + 100,
                                         .api = KAT_TIMING_EVENT_ELAPSED, .domain = KAT_API_RUNTIME,
                                         .thread_id = RUNNER_PID, .correlation_id = corr++, .event = 0xe1,
                                         .event2 = 0xe2, .elapsed_ms = (float)window_ns / 1e6f };
        tb_record(&r, KAT_REC_TIMING_CALL, &q, sizeof q, NULL, 0);
    }
    if (weak_mark) {
        struct kat_nvtx_rec m = { .kind = KAT_NVTX_MARK, .thread_id = RUNNER_PID, .time_ns = weak_mark };
        m.message_string = tb_string(&r, "kaudit:weak requested");
        tb_record(&r, KAT_REC_NVTX, &m, sizeof m, NULL, 0);
    }
    tb_process_end(&r, KAT_END_EXIT, 0, 1);
    char path[4096];
    snprintf(path, sizeof path, "%s/p%u-%llu.kat", s->dir, RUNNER_PID, (unsigned long long)T0);
    cr_assert_eq(tb_write(&r, path), 0);
    tb_free(&r);
}

/* The weak surfaces run both parties in the candidate's process, after the audit's work
   (runner/kaudit_party.py, op_weak): there, from the runner's "kaudit:weak requested" mark
   on, the reference's phase is the reference's, and left out with the rest of the weak
   phase.  A "kaudit:weak" push of the candidate's process before that mark (or without
   one) is no weak phase: it would hide its later GEMM. */
Test(implementation, weak_phase_in_the_candidates_process_starts_only_when_the_runner_asks)
{
    for (int how = 0; how < 3; how++) { /* 0: asked before the push; 1: after it; 2: never */
        struct ka_options opt;
        memset(&opt, 0, sizeof opt);
        opt.weak_phase_expected = 1;
        opt.reference_process = RUNNER;
        struct scene s;
        scene_init(&s);
        runner_process(&s, how == 0 ? T0 + 19 * MS : how == 1 ? T0 + 30 * MS : 0, 0, 0, 0);
        clean_candidate(&s);
        nvtx(&s, KAT_NVTX_PUSH, PID, "kaudit:weak", T0 + 20 * MS);
        phase(&s, "kaudit:reference", PID, T0 + 21 * MS, T0 + 22 * MS);
        sgemm(&s, "/opt/torch/lib/libtorch_cuda.so", PID, T0 + 21 * MS + 100, 1024);
        nvtx(&s, KAT_NVTX_POP, PID, NULL, T0 + 25 * MS);
        finish(&s, 1);
        struct ka_analysis *a = analyze(&s, gemm_contract, &opt);
        if (how == 0) {
            cr_expect_eq(IMPL(a), KA_PASS, "implementation %s: %s", ka_verdict_name(IMPL(a)),
                         a->axis[KA_AXIS_IMPLEMENTATION].root_cause);
            cr_expect(has_finding(a, "weak-phase-excluded"));
            cr_expect_not(has_finding(a, "reference-phase-outside-reference-process"));
        } else {
            cr_expect_eq(IMPL(a), KA_FAIL, "case %d: a weak push of the candidate's own hid the GEMM", how);
            cr_expect_not(has_finding(a, "weak-phase-excluded"));
            cr_expect(has_finding(a, "reference-phase-outside-reference-process"));
        }
        done(&s, a);
    }
}

/* In an audit, all GPU work of the candidate's process counts against the reference's
 * windows (in the runner's process), whatever phase it claims: a kernel launched
 * outside every phase, a device-to-device copy; and a window shorter than the host
 * clock's margins is still checked when its events' GPU times are exact. */
Test(measurement, work_of_the_candidates_process_inside_the_runners_window_is_inconclusive)
{
    for (int how = 0; how < 4; how++) { /* 0: kernel, no phase; 1: copy; 2: 35 us window; 3: none */
        struct ka_options opt;
        memset(&opt, 0, sizeof opt);
        opt.reference_process = RUNNER;
        struct scene s;
        scene_init(&s);
        uint64_t at = T0 + 40 * MS, len = how == 2 ? 35000 : 3 * MS;
        runner_process(&s, 0, at, len, 1);
        clean_candidate(&s);
        if (how == 0 || how == 2) { /* from a thread with no phase and no traced creation: the harness's party */
            uint32_t c = launch(&s, 300, T0 + 30 * MS);
            kernel(&s, c, "vectorized_elementwise_kernel", 9, at + 4000, at + len - 4000, 4096, 256);
        } else if (how == 1) {
            struct kat_memcpy_rec m = { .start_ns = at + 1 * MS, .end_ns = at + 2 * MS, .bytes = 256u << 20,
                                        .stream_id = 9, .correlation_id = 77 };
            tb_record(&s.b, KAT_REC_MEMCPY, &m, sizeof m, NULL, 0);
        }
        finish(&s, 1);
        struct ka_analysis *a = analyze(&s, add_contract, &opt);
        if (how < 3) {
            cr_expect(has_finding(a, "candidate-work-in-reference-window"), "case %d", how);
            cr_expect_eq(MEAS(a), KA_INCONCLUSIVE, "case %d: measurement %s", how, ka_verdict_name(MEAS(a)));
        } else {
            cr_expect_not(has_finding(a, "candidate-work-in-reference-window"));
            cr_expect_eq(MEAS(a), KA_PASS, "measurement %s: %s", ka_verdict_name(MEAS(a)),
                         a->axis[KA_AXIS_MEASUREMENT].root_cause);
        }
        done(&s, a);
    }
}

/* In an audit, a GEMM launched outside every phase of the candidate's process (a thread
 * whose creation went untraced, a harness function it patched) is the candidate's: the
 * party's harness never multiplies.  Its copies and fills stay the harness's; and where
 * one process may hold both parties (kaudit analyze), outside every phase is the harness. */
Test(implementation, unphased_gemm_in_the_candidates_process_is_the_candidates)
{
    for (int how = 0; how < 3; how++) { /* 0: audit, GEMM; 1: audit, an elementwise kernel; 2: analyze, GEMM */
        struct ka_options opt;
        memset(&opt, 0, sizeof opt);
        opt.reference_process = how == 2 ? NULL : RUNNER;
        struct scene s;
        scene_init(&s);
        if (how != 2)
            runner_process(&s, 0, 0, 0, 0);
        clean_candidate(&s);
        if (how == 1) {
            uint32_t c = launch(&s, 300, T0 + 20 * MS);
            kernel(&s, c, "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>>", 9,
                   T0 + 20 * MS + 100000, T0 + 20 * MS + 200000, 4096, 256);
        } else {
            sgemm(&s, "/opt/torch/lib/libtorch_cuda.so", 300, T0 + 20 * MS, 1024);
        }
        finish(&s, 1);
        struct ka_analysis *a = analyze(&s, gemm_contract, &opt);
        if (how == 0) {
            cr_expect_eq(IMPL(a), KA_FAIL, "a GEMM outside every phase of the candidate's process: %s",
                         a->axis[KA_AXIS_IMPLEMENTATION].root_cause);
            cr_expect(has_finding(a, "unphased-compute-in-candidate-process"));
        } else {
            cr_expect_eq(IMPL(a), KA_PASS, "case %d: implementation %s: %s", how, ka_verdict_name(IMPL(a)),
                         a->axis[KA_AXIS_IMPLEMENTATION].root_cause);
            cr_expect_not(has_finding(a, "unphased-compute-in-candidate-process"), "case %d", how);
        }
        done(&s, a);
    }
}

/* The weak surfaces run after the audit's work inside "kaudit:weak" (runner/kaudit_weak.py):
   their calls, the candidate's included, are left out; the same call before it convicts. */
/* case 0: no weak range; 1: the runner's range in an audit with weak surfaces
 * (left out); 2: the same range where no weak phase is expected (`kaudit
 * analyze` of any session, an audit without surfaces): a program's range,
 * which must hide nothing. */
Test(implementation, weak_phase_work_is_left_out)
{
    for (int in_weak = 0; in_weak < 3; in_weak++) {
        struct ka_options opt;
        memset(&opt, 0, sizeof opt);
        opt.weak_phase_expected = in_weak == 1;
        struct scene s;
        scene_init(&s);
        clean_candidate(&s);
        nvtx(&s, KAT_NVTX_PUSH, PID, in_weak ? "kaudit:weak" : "kaudit:other", T0 + 20 * MS);
        nvtx(&s, KAT_NVTX_PUSH, PID, "kaudit:weak KernelBench", T0 + 20 * MS + 10);
        phase(&s, "kaudit:candidate", PID, T0 + 21 * MS, T0 + 22 * MS);
        sgemm(&s, "/opt/torch/lib/libtorch_cuda.so", PID, T0 + 21 * MS + 100, 1024);
        uint32_t c = launch(&s, PID, T0 + 21 * MS + 500000);
        kernel(&s, c, "my_add_kernel", 7, T0 + 23 * MS, T0 + 24 * MS, 4096, 256);
        nvtx(&s, KAT_NVTX_POP, PID, NULL, T0 + 25 * MS);
        nvtx(&s, KAT_NVTX_POP, PID, NULL, T0 + 25 * MS + 10);
        finish(&s, 1);
        struct ka_analysis *a = analyze(&s, gemm_contract, &opt);
        if (in_weak == 1) {
            cr_expect_eq(IMPL(a), KA_PASS, "implementation %s: %s", ka_verdict_name(IMPL(a)),
                         a->axis[KA_AXIS_IMPLEMENTATION].root_cause);
            cr_expect(has_finding(a, "weak-phase-excluded"));
            cr_expect_eq(a->kernels_by[KA_ORIGIN_VENDOR][KA_PARTY_CANDIDATE], 0);
            cr_expect_eq(a->kernels_by[KA_ORIGIN_CANDIDATE][KA_PARTY_CANDIDATE], 1);   /* the audit's own */
        } else {
            cr_expect_eq(IMPL(a), KA_FAIL, "without a weak phase (case %d) the GEMM is the candidate's evidence",
                         in_weak);
            cr_expect(!has_finding(a, "weak-phase-excluded"));
            cr_expect_eq(a->kernels_by[KA_ORIGIN_CANDIDATE][KA_PARTY_CANDIDATE], 2);
        }
        done(&s, a);
    }
}

/* "kaudit:weak" pushed by the candidate (inside its own call, or from a thread of its own, or
   between phases before the runner's push) must not leave its later GEMM out of the evidence. */
Test(implementation, weak_range_forged_by_the_candidate_is_not_the_weak_phase)
{
    for (int how = 0; how < 3; how++) {
        struct scene s;
        scene_init(&s);
        clean_candidate(&s);
        uint32_t tid = how == 1 ? PID + 1 : PID;
        if (how != 0) { /* from its thread, or on the runner's between phases (a finalizer) */
            nvtx(&s, KAT_NVTX_PUSH, tid, "kaudit:weak", T0 + 20 * MS);
            nvtx(&s, KAT_NVTX_POP, tid, NULL, T0 + 20 * MS + 5);
        }
        nvtx(&s, KAT_NVTX_PUSH, PID, "kaudit:candidate", T0 + 21 * MS);
        if (how == 0) { /* in its own call */
            nvtx(&s, KAT_NVTX_PUSH, PID, "kaudit:weak", T0 + 21 * MS + 10);
            nvtx(&s, KAT_NVTX_POP, PID, NULL, T0 + 21 * MS + 20);
        }
        sgemm(&s, "/opt/torch/lib/libtorch_cuda.so", PID, T0 + 21 * MS + 100, 1024);
        nvtx(&s, KAT_NVTX_POP, PID, NULL, T0 + 22 * MS);
        if (how == 2) { /* the runner's own, after the audit's work */
            nvtx(&s, KAT_NVTX_PUSH, PID, "kaudit:weak", T0 + 30 * MS);
            nvtx(&s, KAT_NVTX_POP, PID, NULL, T0 + 31 * MS);
        }
        finish(&s, 1);
        struct ka_options opt;   /* an audit with weak surfaces: the runner's range is expected */
        memset(&opt, 0, sizeof opt);
        opt.weak_phase_expected = 1;
        struct ka_analysis *a = analyze(&s, gemm_contract, &opt);
        cr_expect_eq(IMPL(a), KA_FAIL, "case %d: implementation %s: %s", how, ka_verdict_name(IMPL(a)),
                     a->axis[KA_AXIS_IMPLEMENTATION].root_cause);
        cr_expect_eq(!!has_finding(a, "weak-phase-excluded"), how == 2, "case %d", how);
        done(&s, a);
    }
}

Test(implementation, small_vendor_call_is_below_threshold)
{
    struct scene s;
    scene_init(&s);
    clean_candidate(&s);
    /* 2*64^3 = 524288 FLOP: 0.02% of the reference's GEMM */
    sgemm(&s, "/opt/torch/lib/libtorch_cuda.so", PID, T0 + 10 * MS + 200, 64);
    finish(&s, 1);
    struct ka_analysis *a = analyze(&s, gemm_contract, NULL);
    cr_expect_eq(IMPL(a), KA_PASS, "%s", a->axis[KA_AXIS_IMPLEMENTATION].root_cause);
    cr_expect(has_finding(a, "below-threshold"));
    done(&s, a);
}

Test(implementation, unmarked_vendor_work_is_inconclusive_not_fail)
{
    struct scene s;
    scene_init(&s);
    sgemm(&s, "/opt/torch/lib/libtorch_cuda.so", PID, T0 + 10 * MS, 1024);
    finish(&s, 1);
    struct ka_analysis *a = analyze(&s, gemm_contract, NULL);
    cr_expect_eq(IMPL(a), KA_INCONCLUSIVE);
    cr_expect(has_finding(a, "unattributed-forbidden-work"));
    done(&s, a);
}

Test(implementation, candidate_object_calling_cublas_convicts_without_phases)
{
    struct scene s;
    scene_init(&s);
    sgemm(&s, "/root/.cache/torch_extensions/py312/ext/ext.so", PID, T0 + 10 * MS, 1024);
    finish(&s, 1);
    struct ka_analysis *a = analyze(&s, gemm_contract, NULL);
    cr_expect_eq(IMPL(a), KA_FAIL);
    done(&s, a);
}

Test(implementation, framework_add_in_candidate_phase_fails_add_task)
{
    struct scene s;
    scene_init(&s);
    phase(&s, "kaudit:candidate", PID, T0 + 10 * MS, T0 + 11 * MS);
    uint32_t c = launch(&s, PID, T0 + 10 * MS + 100);
    /* 1024 blocks of 256 threads = 262144 threads: 25% of 1M elements */
    kernel(&s, c, "_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_15CUDAFunctor_addIfEE", 7, T0 + 12 * MS,
           T0 + 13 * MS, 1024, 256);
    finish(&s, 1);
    struct ka_analysis *a = analyze(&s, add_contract, NULL);
    cr_expect_eq(IMPL(a), KA_FAIL);
    cr_expect(has_finding(a, "forbidden-framework-work"));
    cr_expect_eq(a->kernels_by[KA_ORIGIN_FRAMEWORK][KA_PARTY_CANDIDATE], 1);
    done(&s, a);
}

/*
 * Issue 13: a candidate whose whole computation is PyTorch's broadcast multiply.
 * The word "cast" inside "gpu_kernel_impl_nocast" once made it glue, exempt
 * under any contract: it is elementwise math, the task's dominant class.
 */
Test(implementation, framework_multiply_is_not_glue)
{
    struct scene s;
    scene_init(&s);
    phase(&s, "kaudit:candidate", PID, T0 + 10 * MS, T0 + 11 * MS);
    uint32_t c = launch(&s, PID, T0 + 10 * MS + 100);
    kernel(&s, c,
           "_ZN2at6native18elementwise_kernelILi128ELi2EZNS0_22gpu_kernel_impl_nocastINS0_13BinaryFunctorIfffNS0_15"
           "binary_internal10MulFunctorIfEEEEEEvRNS_18TensorIteratorBaseERKT_EUliE_EEviT1_",
           7, T0 + 12 * MS, T0 + 13 * MS, 4096, 128);
    finish(&s, 1);
    struct ka_analysis *a = analyze(&s, add_contract, NULL);
    cr_expect_eq(IMPL(a), KA_FAIL, "implementation %s: %s", ka_verdict_name(IMPL(a)),
                 a->axis[KA_AXIS_IMPLEMENTATION].root_cause);
    cr_expect(has_finding(a, "forbidden-framework-work"));
    cr_expect(!has_finding(a, "exempt-mediator"));
    done(&s, a);
}

/*
 * Issue 13: F.max_pool3d for a max-pool task.  The contract's forbidden list
 * (the usual core classes) does not name pooling; the reference's dominant
 * class is forbidden to delegate all the same.
 */
static const char pool_contract[] =
    "{\"kaudit_contract\": 1, \"task_id\": \"t/maxpool3d\","
    " \"implementation\": {\"self_implemented\": true,"
    "   \"forbidden\": [\"gemm\", \"conv\", \"attention\", \"reduction\", \"elementwise\"]},"
    " \"reference_work\": {\"dominant_class\": \"pooling\", \"amount\": 1048576},"
    " \"timing\": {\"dtype\": \"float32\"}}";

Test(implementation, framework_pooling_of_the_dominant_class_fails)
{
    struct scene s;
    scene_init(&s);
    phase(&s, "kaudit:candidate", PID, T0 + 10 * MS, T0 + 11 * MS);
    uint32_t c = launch(&s, PID, T0 + 10 * MS + 100);
    kernel(&s, c,
           "_ZN2at6native12_GLOBAL__N_135max_pool3d_with_indices_single_out_frameIfEEvPKT_PS3_Pliiiiiiiiiiiiiiiiiiii",
           7, T0 + 12 * MS, T0 + 13 * MS, 4096, 128);
    finish(&s, 1);
    struct ka_analysis *a = analyze(&s, pool_contract, NULL);
    cr_expect_eq(IMPL(a), KA_FAIL, "implementation %s: %s", ka_verdict_name(IMPL(a)),
                 a->axis[KA_AXIS_IMPLEMENTATION].root_cause);
    cr_expect(has_finding(a, "forbidden-framework-work"));
    cr_expect(!has_finding(a, "allowed-work"));
    cr_expect_eq(a->dominant_class, KA_CLASS_POOLING);
    done(&s, a);
}

/*
 * Issue 13, item 1: the operator that launched a framework kernel names its
 * work where the name does not.  torch.topk for a top-k task: its sort kernel's
 * name is in no family (other) and gatherTopK reads as glue ("gather"); PyTorch's
 * NVTX mode says both are aten::topk's, a selection (class reduction), the
 * reference's dominant class.
 */
static const char topk_contract[] =
    "{\"kaudit_contract\": 1, \"task_id\": \"t/topk\","
    " \"implementation\": {\"self_implemented\": true},"
    " \"reference_work\": {\"dominant_class\": \"reduction\", \"amount\": 1048576},"
    " \"timing\": {\"dtype\": \"float32\"}}";

#define SORT_KERNEL "_ZN2at6native6bitonicSortKVInPlaceILi2ELin1ELi16ELi16EflNS0_4GTOpIfLb1EEEjEEvNS_4cuda6detail10TensorInfoIT3_T6_EES8_S8_S8_S8_NS6_IT4_S8_EES8_T5_"
#define GATHER_KERNEL "_ZN2at6native6sbtopk10gatherTopKIfjLi2ELb0EEEvNS_4cuda6detail10TensorInfoIKT_T0_EES8_S8_bS8_S8_NS5_IS6_S8_EES8_NS5_IlS8_EES8_PS6_"

/* A kernel record under a name string already defined (a trace defines each name once). */
static void kernel_named(struct scene *s, uint32_t corr, uint32_t name_id, uint64_t start, uint64_t end)
{
    struct kat_kernel_rec k = { .start_ns = start, .end_ns = end, .stream_id = 7, .correlation_id = corr,
                                .grid = { 4096, 1, 1 }, .block = { 1024, 1, 1 }, .name_string = name_id };
    tb_record(&s->b, KAT_REC_KERNEL, &k, sizeof k, NULL, 0);
}

/* The topk kernels' names, defined once per scene (a trace defines each name once). */
static uint32_t rsort_id, rgather_id;
static void topk_names(struct scene *s)
{
    rsort_id = tb_string(&s->b, SORT_KERNEL);
    rgather_id = tb_string(&s->b, GATHER_KERNEL);
}

/*
 * One torch.topk call of a party at t: two framework kernels, inside an
 * aten::topk range when sampled, and inside a range `wrap` of the party's own
 * when given (aten::add: the kernels are one block of 32 threads).
 */
static void call2(struct scene *s, const char *party, uint64_t t, int sampled, const char *wrap)
{
    nvtx(s, KAT_NVTX_PUSH, PID, party, t);
    if (wrap)
        nvtx(s, KAT_NVTX_PUSH, PID, wrap, t + 5);
    if (sampled)
        nvtx(s, KAT_NVTX_PUSH, PID, "aten::topk, seq = 3, op_id = 7, sizes = [[4096, 8192], [], [], [], []]", t + 10);
    uint32_t c1 = launch(s, PID, t + 100);
    uint32_t c2 = launch(s, PID, t + 200);
    if (sampled)
        nvtx(s, KAT_NVTX_POP, PID, NULL, t + 300);
    if (wrap)
        nvtx(s, KAT_NVTX_POP, PID, NULL, t + 350);
    nvtx(s, KAT_NVTX_POP, PID, NULL, t + 400);
    int g = wrap && !strcmp(wrap, "aten::add") ? 1 : 4096;
    struct kat_kernel_rec k = { .start_ns = t + 1000, .end_ns = t + 2000, .stream_id = 7, .correlation_id = c1,
                                .grid = { g, 1, 1 }, .block = { 32, 1, 1 }, .name_string = rsort_id };
    if (g == 1) {
        tb_record(&s->b, KAT_REC_KERNEL, &k, sizeof k, NULL, 0);
        k.correlation_id = c2;
        k.name_string = rgather_id;
        tb_record(&s->b, KAT_REC_KERNEL, &k, sizeof k, NULL, 0);
        return;
    }
    kernel_named(s, c1, rsort_id, t + 1000, t + 2000);
    kernel_named(s, c2, rgather_id, t + 2000, t + 3000);
}

/* One torch.topk call of the candidate at t. */
static void topk_call(struct scene *s, uint64_t t, int sampled)
{
    call2(s, "kaudit:candidate", t, sampled, NULL);
}

static const struct ka_finding *finding(const struct ka_analysis *a, const char *code)
{
    for (size_t i = 0; i < a->n_findings; i++)
        if (!strcmp(a->findings[i].code, code))
            return &a->findings[i];
    return NULL;
}

Test(implementation, operator_names_the_work_of_a_kernel_whose_name_does_not)
{
    struct scene s;
    scene_init(&s);
    topk_names(&s);
    topk_call(&s, T0 + 10 * MS, 1);
    topk_call(&s, T0 + 20 * MS, 0);     /* a call the Python side did not sample: the names' operator */
    finish(&s, 1);
    struct ka_analysis *a = analyze(&s, topk_contract, NULL);
    cr_expect_eq(IMPL(a), KA_FAIL, "implementation %s: %s", ka_verdict_name(IMPL(a)),
                 a->axis[KA_AXIS_IMPLEMENTATION].root_cause);
    const struct ka_finding *x = finding(a, "forbidden-framework-work");
    cr_assert(x);
    cr_expect(strstr(x->text, "4 framework kernels of class reduction"), "%s", x->text);
    cr_expect(strstr(x->text, "launched by aten::topk"), "%s", x->text);
    int has_operator = 0;
    for (size_t i = 0; i < x->n_fields; i++)
        has_operator |= !strcmp(x->fields[i].key, "operator");
    cr_expect(has_operator);
    cr_expect(has_finding(a, "operator-class"));
    done(&s, a);
}

/* The same calls without operator ranges: the names alone select nothing (other and glue). */
Test(implementation, without_operators_the_names_decide)
{
    struct scene s;
    scene_init(&s);
    topk_names(&s);
    topk_call(&s, T0 + 10 * MS, 0);
    topk_call(&s, T0 + 20 * MS, 0);
    finish(&s, 1);
    struct ka_analysis *a = analyze(&s, topk_contract, NULL);
    cr_expect(!has_finding(a, "forbidden-framework-work"));
    cr_expect(!has_finding(a, "operator-class"));
    done(&s, a);
}

/* A range the candidate writes cannot relabel work its name names: a sum under "aten::fill_" stays a reduction. */
Test(implementation, operator_range_cannot_hide_work_a_name_names)
{
    struct scene s;
    scene_init(&s);
    nvtx(&s, KAT_NVTX_PUSH, PID, "kaudit:candidate", T0 + 10 * MS);
    nvtx(&s, KAT_NVTX_PUSH, PID, "aten::fill_, op_id = 1, sizes = [[4096, 8192], []]", T0 + 10 * MS + 10);
    uint32_t c = launch(&s, PID, T0 + 10 * MS + 100);
    nvtx(&s, KAT_NVTX_POP, PID, NULL, T0 + 10 * MS + 300);
    nvtx(&s, KAT_NVTX_POP, PID, NULL, T0 + 10 * MS + 400);
    kernel(&s, c,
           "_ZN2at6native13reduce_kernelILi512ELi1ENS0_8ReduceOpIfNS0_7func_wrapper_tIfZNS0_11sum_functorIfffEclERNS_"
           "18TensorIteratorEEUlffE_EEjfLi4ELi4EEEEEvT1_",
           7, T0 + 11 * MS, T0 + 12 * MS, 4096, 1024);
    finish(&s, 1);
    struct ka_analysis *a = analyze(&s, topk_contract, NULL);
    cr_expect_eq(IMPL(a), KA_FAIL, "%s", a->axis[KA_AXIS_IMPLEMENTATION].root_cause);
    cr_expect(has_finding(a, "operator-class-disagrees"));
    done(&s, a);
}

/* The same kernel under a contract whose dominant class is another is not convicted for it. */
Test(implementation, pooling_outside_the_dominant_class_is_allowed_when_unlisted)
{
    struct scene s;
    scene_init(&s);
    clean_candidate(&s);
    uint32_t c = launch(&s, PID, T0 + 10 * MS + 8000);
    kernel(&s, c,
           "_ZN2at6native12_GLOBAL__N_135max_pool3d_with_indices_single_out_frameIfEEvPKT_PS3_Pliiiiiiiiiiiiiiiiiiii",
           7, T0 + 13 * MS, T0 + 13 * MS + 500, 4096, 128);
    finish(&s, 1);
    static const char listed_add[] =
        "{\"kaudit_contract\": 1, \"task_id\": \"t/add\","
        " \"implementation\": {\"self_implemented\": true, \"forbidden\": [\"elementwise\"]},"
        " \"reference_work\": {\"dominant_class\": \"elementwise\", \"amount\": 1048576},"
        " \"timing\": {\"dtype\": \"float32\"}}";
    struct ka_analysis *a = analyze(&s, listed_add, NULL);
    cr_expect_eq(IMPL(a), KA_PASS, "%s", a->axis[KA_AXIS_IMPLEMENTATION].root_cause);
    cr_expect(has_finding(a, "allowed-work"));
    done(&s, a);
}

Test(implementation, allowed_bias_epilogue_is_exempt)
{
    struct scene s;
    scene_init(&s);
    clean_candidate(&s);
    uint32_t c = launch(&s, PID, T0 + 10 * MS + 8000);
    kernel(&s, c, "_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_15CUDAFunctor_addIfEE", 7, T0 + 13 * MS,
           T0 + 13 * MS + 500, 1024, 256);
    finish(&s, 1);
    struct ka_analysis *a = analyze(&s, gemm_contract, NULL);
    cr_expect_eq(IMPL(a), KA_PASS, "%s", a->axis[KA_AXIS_IMPLEMENTATION].root_cause);
    cr_expect(has_finding(a, "exempt-mediator"));
    done(&s, a);
}

Test(implementation, copy_glue_is_exempt)
{
    struct scene s;
    scene_init(&s);
    clean_candidate(&s);
    uint32_t c = launch(&s, PID, T0 + 10 * MS + 8000);
    kernel(&s, c, "_ZN2at6native18elementwise_kernelILi128ELi4EZNS0_22gpu_kernel_impl_copy", 7, T0 + 13 * MS,
           T0 + 13 * MS + 500, 4096, 256);
    finish(&s, 1);
    struct ka_analysis *a = analyze(&s, add_contract, NULL);
    cr_expect_eq(IMPL(a), KA_PASS, "%s", a->axis[KA_AXIS_IMPLEMENTATION].root_cause);
    done(&s, a);
}

Test(implementation, vendor_module_without_library_call_is_non_mediated)
{
    struct scene s;
    scene_init(&s);
    clean_candidate(&s);
    /* a launch whose call loaded a module on behalf of libcublas, but no vendor call was intercepted */
    uint32_t c = launch(&s, PID, T0 + 10 * MS + 8000);
    module(&s, "/opt/nvidia/cu13/lib/libcublas.so.13", PID, T0 + 10 * MS + 8001);
    kernel(&s, c, "sm90_xmma_gemm_f32f32_tn_n", 7, T0 + 13 * MS, T0 + 13 * MS + 900, 128, 128);
    finish(&s, 1);
    struct ka_analysis *a = analyze(&s, gemm_contract, NULL);
    cr_expect_eq(IMPL(a), KA_FAIL);
    cr_expect(has_finding(a, "non-mediated-vendor-launch"));
    done(&s, a);
}

/*
 * The analyzer applies the inventory's attribution rule (kinv_attribute,
 * docs/inventory.md "Name collisions"; its cases are inventory_attribution's):
 * a vendor call window around a function of the candidate's own module does
 * not make that function vendor code.  The call itself is still a work item.
 */
Test(implementation, vendor_window_around_candidate_module_is_candidate_code)
{
    struct scene s;
    scene_init(&s);
    phase(&s, "kaudit:candidate", PID, T0 + 10 * MS, T0 + 20 * MS);
    struct kat_vendor_call_rec v;
    memset(&v, 0, sizeof v);
    v.call_id = s.next_call++;
    v.enter_ns = T0 + 15 * MS;
    v.exit_ns = v.enter_ns + 20000;
    v.api_string = tb_string(&s.b, "cublasSgemm_v2");
    v.library = KAT_LIB_CUBLAS;
    v.caller_string = tb_string(&s.b, "/tmp/torch_extensions/ext/ext.so");
    v.thread_id = PID;
    v.depth = 1;
    v.work_class = KAT_WORK_GEMM;
    tb_record(&s.b, KAT_REC_VENDOR_CALL, &v, sizeof v, NULL, 0);
    uint32_t corr = launch_in(&s, PID, v.enter_ns + 1000, v.call_id);
    module(&s, "/tmp/torch_extensions/ext/ext.so", PID, v.enter_ns + 1500);
    kernel(&s, corr, "my_gemm_kernel", 7, v.enter_ns + 10000, v.enter_ns + 90000, 64, 128);
    finish(&s, 1);
    struct ka_analysis *a = analyze(&s, add_contract, NULL);
    cr_expect_eq(a->kernels_by[KA_ORIGIN_CANDIDATE][KA_PARTY_CANDIDATE], 1);
    cr_expect_eq(a->kernels_by[KA_ORIGIN_VENDOR][KA_PARTY_CANDIDATE], 0);
    cr_expect_eq(a->vendor_calls, 1);
    done(&s, a);
}

Test(implementation, failed_build_without_violation_is_inconclusive)
{
    struct scene s;
    scene_init(&s);
    phase(&s, "kaudit:candidate", PID, T0 + 10 * MS, T0 + 20 * MS);
    finish(&s, 1);
    child_process(&s, 200, "ninja", T0 + 11 * MS, 1);
    struct ka_analysis *a = analyze(&s, add_contract, NULL);
    cr_expect_eq(IMPL(a), KA_INCONCLUSIVE);
    cr_expect(has_finding(a, "candidate-build-failed"));
    cr_expect(strstr(a->axis[KA_AXIS_IMPLEMENTATION].root_cause, "build failed") != NULL, "%s",
              a->axis[KA_AXIS_IMPLEMENTATION].root_cause);
    cr_expect_eq(a->build_failures, 1);
    done(&s, a);
}

Test(implementation, failed_build_then_fallback_delegation_fails)
{
    struct scene s;
    scene_init(&s);
    phase(&s, "kaudit:candidate", PID, T0 + 10 * MS, T0 + 20 * MS);
    sgemm(&s, "/opt/torch/lib/libtorch_cuda.so", PID, T0 + 15 * MS, 1024);
    finish(&s, 1);
    child_process(&s, 200, "ninja", T0 + 11 * MS, 1);
    struct ka_analysis *a = analyze(&s, gemm_contract, NULL);
    cr_expect_eq(IMPL(a), KA_FAIL);
    cr_expect(strstr(a->axis[KA_AXIS_IMPLEMENTATION].root_cause, "fallback") != NULL);
    done(&s, a);
}

Test(implementation, killed_build_tool_is_known_from_its_parent)
{
    struct scene s;
    scene_init(&s);
    phase(&s, "kaudit:candidate", PID, T0 + 10 * MS, T0 + 20 * MS);
    /* the parent's wait() saw ninja killed by SIGKILL; ninja's own trace has no end */
    struct kat_child_exit_rec x = { .child_pid = 200, .wait_status = 9, .time_ns = T0 + 12 * MS };
    tb_record(&s.b, KAT_REC_CHILD_EXIT, &x, sizeof x, NULL, 0);
    finish(&s, 1);
    child_process(&s, 200, "ninja", T0 + 11 * MS, -1);
    struct ka_analysis *a = analyze(&s, add_contract, NULL);
    cr_expect_eq(a->build_failures, 1);
    cr_expect(has_finding(a, "candidate-build-failed"));
    done(&s, a);
}

Test(implementation, successful_build_is_not_a_failure)
{
    struct scene s;
    scene_init(&s);
    clean_candidate(&s);
    finish(&s, 1);
    child_process(&s, 200, "ninja", T0 + 10 * MS + 10, 0);
    struct ka_analysis *a = analyze(&s, add_contract, NULL);
    cr_expect_eq(a->build_failures, 0);
    cr_expect_eq(IMPL(a), KA_PASS);
    done(&s, a);
}

Test(implementation, no_candidate_work_is_inconclusive_r_a)
{
    struct scene s;
    scene_init(&s);
    phase(&s, "kaudit:candidate", PID, T0 + 10 * MS, T0 + 11 * MS);
    finish(&s, 1);
    struct ka_analysis *a = analyze(&s, add_contract, NULL);
    cr_expect_eq(IMPL(a), KA_INCONCLUSIVE);
    cr_expect(strstr(a->axis[KA_AXIS_IMPLEMENTATION].root_cause, "R-A") != NULL);
    done(&s, a);
}

/* ---- issue 13: own code needs positive evidence; R-A counts compute only -- */

static const char prod_contract[] =
    "{\"kaudit_contract\": 1, \"task_id\": \"t/prod\","
    " \"implementation\": {\"self_implemented\": true},"
    " \"reference_work\": {\"dominant_class\": \"reduction\", \"amount\": 1048576},"
    " \"timing\": {\"dtype\": \"float32\"}}";

/* An explicitly loaded module (not inside a launch call), then the launch of its kernel. */
static void jiterator_prod(struct scene *s, const char *loader, uint64_t t)
{
    module(s, loader, PID, t);
    uint32_t c = launch(s, PID, t + 1000);
    kernel(s, c, "reduction_prod_kernel", 7, t + 10000, t + 90000, 4096, 128);
}

/* As recorded on the H200 (examples/real/kb_prod_torch): the jiterator's module is loaded inside
 * its own cuModuleLoadData call, which is an API record too, but no launch. */
Test(implementation, jiterator_module_loaded_inside_its_load_call_is_framework_work)
{
    struct scene s;
    scene_init(&s);
    phase(&s, "kaudit:candidate", PID, T0 + 10 * MS, T0 + 20 * MS);
    uint64_t t = T0 + 15 * MS;
    struct kat_api_rec load = { .start_ns = t - 2000, .end_ns = t + 2000, .domain = KAT_API_DRIVER, .cbid = 1,
                                .thread_id = PID, .correlation_id = s.next_corr++ };
    load.name_string = tb_string(&s.b, "cuModuleLoadData");
    tb_record(&s.b, KAT_REC_API, &load, sizeof load, NULL, 0);
    jiterator_prod(&s, "/opt/venv/lib/python3.12/site-packages/torch/lib/libtorch_cuda.so", t);
    finish(&s, 1);
    struct ka_analysis *a = analyze(&s, prod_contract, NULL);
    cr_expect_eq(IMPL(a), KA_FAIL, "implementation %s: %s", ka_verdict_name(IMPL(a)),
                 a->axis[KA_AXIS_IMPLEMENTATION].root_cause);
    cr_expect(has_finding(a, "forbidden-framework-work"));
    cr_expect(!has_finding(a, "unattributed-kernel"), "the module's load call taken for a launch");
    done(&s, a);
}

/* torch.prod on the H200: PyTorch compiles reduction_prod_kernel with NVRTC and loads it itself. */
Test(implementation, jiterator_kernel_is_framework_work_not_the_candidates)
{
    const char *loaders[] = { "/opt/venv/lib/python3.12/site-packages/torch/lib/libtorch_cuda.so",
                              "/opt/venv/lib/python3.12/site-packages/nvidia/cuda_nvrtc/lib/libnvrtc.so.13" };
    for (int i = 0; i < 2; i++) {
        struct scene s;
        scene_init(&s);
        phase(&s, "kaudit:candidate", PID, T0 + 10 * MS, T0 + 20 * MS);
        jiterator_prod(&s, loaders[i], T0 + 15 * MS);
        finish(&s, 1);
        struct ka_analysis *a = analyze(&s, prod_contract, NULL);
        cr_expect_eq(a->kernels_by[KA_ORIGIN_CANDIDATE][KA_PARTY_CANDIDATE], 0, "%s", loaders[i]);
        cr_expect_eq(a->kernels_by[KA_ORIGIN_FRAMEWORK][KA_PARTY_CANDIDATE], 1, "%s", loaders[i]);
        cr_expect_eq(IMPL(a), KA_FAIL, "%s: implementation %s: %s", loaders[i], ka_verdict_name(IMPL(a)),
                     a->axis[KA_AXIS_IMPLEMENTATION].root_cause);
        cr_expect(has_finding(a, "forbidden-framework-work"));
        done(&s, a);
    }
}

/* The candidate's build fails and it falls back to torch.prod: FAIL, not INCONCLUSIVE. */
Test(implementation, failed_build_then_jiterator_fallback_fails)
{
    struct scene s;
    scene_init(&s);
    phase(&s, "kaudit:candidate", PID, T0 + 10 * MS, T0 + 20 * MS);
    jiterator_prod(&s, "/opt/venv/lib/python3.12/site-packages/torch/lib/libtorch_cuda.so", T0 + 15 * MS);
    finish(&s, 1);
    child_process(&s, 200, "ninja", T0 + 11 * MS, 1);
    struct ka_analysis *a = analyze(&s, prod_contract, NULL);
    cr_expect_eq(a->build_failures, 1);
    cr_expect_eq(IMPL(a), KA_FAIL, "implementation %s: %s", ka_verdict_name(IMPL(a)),
                 a->axis[KA_AXIS_IMPLEMENTATION].root_cause);
    cr_expect(has_finding(a, "forbidden-framework-work"));
    cr_expect(strstr(a->axis[KA_AXIS_IMPLEMENTATION].root_cause, "fallback") != NULL);
    done(&s, a);
}

/* A kernel launched in the candidate phase whose module no candidate object loaded is not its own. */
Test(implementation, kernel_without_candidate_module_is_unattributed)
{
    struct scene s;
    scene_init(&s);
    phase(&s, "kaudit:candidate", PID, T0 + 10 * MS, T0 + 11 * MS);
    uint32_t c = launch(&s, PID, T0 + 10 * MS + 1000);
    kernel(&s, c, "my_add_kernel", 7, T0 + 12 * MS, T0 + 13 * MS, 4096, 256);
    finish(&s, 1);
    struct ka_analysis *a = analyze(&s, add_contract, NULL);
    cr_expect_eq(a->kernels_by[KA_ORIGIN_CANDIDATE][KA_PARTY_CANDIDATE], 0);
    cr_expect_eq(a->kernels_by[KA_ORIGIN_UNATTRIBUTED][KA_PARTY_CANDIDATE], 1);
    cr_expect(has_finding(a, "unattributed-kernel"));
    cr_expect_eq(IMPL(a), KA_INCONCLUSIVE, "implementation %s", ka_verdict_name(IMPL(a)));
    cr_expect(strstr(a->axis[KA_AXIS_IMPLEMENTATION].root_cause, "R-A") != NULL, "%s",
              a->axis[KA_AXIS_IMPLEMENTATION].root_cause);
    done(&s, a);
}

/* A module some other object loaded (no candidate object, no framework) does not make the kernel the candidate's. */
Test(implementation, module_of_another_object_is_not_the_candidates)
{
    struct scene s;
    scene_init(&s);
    phase(&s, "kaudit:candidate", PID, T0 + 10 * MS, T0 + 11 * MS);
    uint32_t c = launch(&s, PID, T0 + 10 * MS + 1000);
    module(&s, "/usr/lib/x86_64-linux-gnu/libsomething.so.1", PID, T0 + 10 * MS + 1500);
    kernel(&s, c, "my_add_kernel", 7, T0 + 12 * MS, T0 + 13 * MS, 4096, 256);
    finish(&s, 1);
    struct ka_analysis *a = analyze(&s, add_contract, NULL);
    cr_expect_eq(a->kernels_by[KA_ORIGIN_CANDIDATE][KA_PARTY_CANDIDATE], 0);
    cr_expect(has_finding(a, "unattributed-kernel"));
    cr_expect_eq(IMPL(a), KA_INCONCLUSIVE);
    done(&s, a);
}

/* The candidate's second kernel of a module loads nothing: the module its object loaded earlier holds it. */
Test(implementation, second_kernel_of_a_candidate_module_is_its_own)
{
    struct scene s;
    scene_init(&s);
    clean_candidate(&s);
    uint32_t c = launch(&s, PID, T0 + 10 * MS + 9000);
    kernel(&s, c, "my_other_kernel", 7, T0 + 13 * MS, T0 + 13 * MS + 500, 4096, 256);
    finish(&s, 1);
    struct ka_analysis *a = analyze(&s, add_contract, NULL);
    cr_expect_eq(a->kernels_by[KA_ORIGIN_CANDIDATE][KA_PARTY_CANDIDATE], 2);
    cr_expect(!has_finding(a, "unattributed-kernel"));
    cr_expect_eq(IMPL(a), KA_PASS, "%s", a->axis[KA_AXIS_IMPLEMENTATION].root_cause);
    done(&s, a);
}

/* A kernel the candidate's Python code loads and launches through ctypes (the loader is libffi) is its own. */
Test(implementation, module_loaded_by_the_candidates_python_code_is_its_own)
{
    struct scene s;
    scene_init(&s);
    phase(&s, "kaudit:candidate", PID, T0 + 10 * MS, T0 + 11 * MS);
    uint32_t c = launch(&s, PID, T0 + 10 * MS + 1000);
    module(&s, "/lib/x86_64-linux-gnu/libffi.so.8", PID, T0 + 10 * MS + 1500);
    kernel(&s, c, "py_scale_kernel", 7, T0 + 12 * MS, T0 + 13 * MS, 4096, 256);
    finish(&s, 1);
    struct ka_analysis *a = analyze(&s, add_contract, NULL);
    cr_expect_eq(a->kernels_by[KA_ORIGIN_CANDIDATE][KA_PARTY_CANDIDATE], 1);
    cr_expect_eq(IMPL(a), KA_PASS, "%s", a->axis[KA_AXIS_IMPLEMENTATION].root_cause);
    done(&s, a);
}

/* KernelBench's zero_out fixture: the candidate zeroes its inputs and returns zeros. */
Test(implementation, fills_alone_are_no_evidence_of_work)
{
    struct scene s;
    scene_init(&s);
    phase(&s, "kaudit:candidate", PID, T0 + 10 * MS, T0 + 11 * MS);
    for (int i = 0; i < 15; i++) {
        uint32_t c = launch(&s, PID, T0 + 10 * MS + 100 + 10000 * (uint64_t)i);
        kernel(&s, c, "_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_11FillFunctorIfEESt5arrayIPcLm1EEEEviT0_T1_",
               7, T0 + 12 * MS + 10000 * (uint64_t)i, T0 + 12 * MS + 10000 * (uint64_t)i + 5000, 1024, 128);
    }
    finish(&s, 1);
    struct ka_analysis *a = analyze(&s, add_contract, NULL);
    cr_expect_eq(IMPL(a), KA_INCONCLUSIVE, "implementation %s", ka_verdict_name(IMPL(a)));
    cr_expect(strstr(a->axis[KA_AXIS_IMPLEMENTATION].root_cause, "R-A") != NULL, "%s",
              a->axis[KA_AXIS_IMPLEMENTATION].root_cause);
    cr_expect(!has_finding(a, "forbidden-framework-work"));
    done(&s, a);
}

/* ... and the candidate's own fill kernel is no more evidence than PyTorch's. */
Test(implementation, own_glue_kernel_alone_is_no_evidence_of_work)
{
    struct scene s;
    scene_init(&s);
    phase(&s, "kaudit:candidate", PID, T0 + 10 * MS, T0 + 11 * MS);
    module(&s, "/tmp/torch_extensions/ext/ext.so", PID, T0 + 10 * MS + 1500);
    uint32_t c = launch(&s, PID, T0 + 10 * MS + 1000);
    kernel(&s, c, "zero_fill_kernel", 7, T0 + 12 * MS, T0 + 13 * MS, 4096, 256);
    finish(&s, 1);
    struct ka_analysis *a = analyze(&s, add_contract, NULL);
    cr_expect_eq(a->kernels_by[KA_ORIGIN_CANDIDATE][KA_PARTY_CANDIDATE], 1);
    cr_expect_eq(IMPL(a), KA_INCONCLUSIVE, "implementation %s", ka_verdict_name(IMPL(a)));
    cr_expect(strstr(a->axis[KA_AXIS_IMPLEMENTATION].root_cause, "R-A") != NULL);
    done(&s, a);
}

Test(implementation, truncated_trace_cannot_pass)
{
    struct scene s;
    scene_init(&s);
    clean_candidate(&s);
    finish(&s, 0);
    struct ka_analysis *a = analyze(&s, add_contract, NULL);
    cr_expect_eq(IMPL(a), KA_INCONCLUSIVE);
    cr_expect_eq(MEAS(a), KA_INCONCLUSIVE);
    cr_expect(has_finding(a, "trace-truncated"));
    done(&s, a);
}

Test(implementation, truncated_trace_does_not_erase_a_fail)
{
    struct scene s;
    scene_init(&s);
    phase(&s, "kaudit:candidate", PID, T0 + 10 * MS, T0 + 11 * MS);
    sgemm(&s, "/opt/torch/lib/libtorch_cuda.so", PID, T0 + 10 * MS + 100, 1024);
    finish(&s, 0);
    struct ka_analysis *a = analyze(&s, gemm_contract, NULL);
    cr_expect_eq(IMPL(a), KA_FAIL);
    done(&s, a);
}

Test(implementation, tool_health_problem_is_inconclusive)
{
    struct scene s;
    scene_init(&s);
    clean_candidate(&s);
    struct kat_health_rec h = { .code = KAT_HEALTH_CUPTI_DROPPED, .value = 12, .time_ns = T0 + 30 * MS };
    tb_record(&s.b, KAT_REC_HEALTH, &h, sizeof h, NULL, 0);
    finish(&s, 1);
    struct ka_analysis *a = analyze(&s, add_contract, NULL);
    cr_expect_eq(IMPL(a), KA_INCONCLUSIVE);
    cr_expect(has_finding(a, "tool-health"));
    done(&s, a);
}

/* CUPTI's timestamps left in its own clock (the timestamp callback could not be
 * registered): every comparison of a kernel's GPU time with a host time (a launch
 * inside a window, work beside the reference's windows) is then off by an unknown
 * amount, so the trace cannot pass; converted to CLOCK_REALTIME, as recorded on
 * the H200, it says nothing. */
Test(implementation, cupti_timestamps_in_their_own_clock_are_inconclusive)
{
    for (int converted = 0; converted < 2; converted++) {
        struct scene s;
        scene_init(&s);
        clean_candidate(&s);
        struct kat_health_rec h = { .code = KAT_HEALTH_CUPTI_CLOCK, .value = converted, .time_ns = T0 + 1000 };
        h.detail_string = tb_string(&s.b, converted ? "CLOCK_REALTIME" : "CUPTI default clock");
        tb_record(&s.b, KAT_REC_HEALTH, &h, sizeof h, NULL, 0);
        finish(&s, 1);
        struct ka_analysis *a = analyze(&s, add_contract, NULL);
        cr_expect_eq(IMPL(a), converted ? KA_PASS : KA_INCONCLUSIVE, "converted %d", converted);
        cr_expect_eq(MEAS(a), converted ? KA_PASS : KA_INCONCLUSIVE, "converted %d", converted);
        cr_expect_eq(!!has_finding(a, "tool-health"), !converted);
        done(&s, a);
    }
}

/* Recording that left evidence out on purpose (KAUDIT_API_RECORDS=none,
 * KAUDIT_CUPTI_KINDS, the benchmark control) never passes; the default
 * policy record does not count against a trace. */
Test(implementation, evidence_left_out_by_settings_is_inconclusive)
{
    const struct { uint32_t code; int64_t value; int problem; } cases[] = {
        { KAT_HEALTH_API_RECORD_POLICY, -1, 1 },
        { KAT_HEALTH_ACTIVITY_KINDS, 7, 1 },
        { KAT_HEALTH_BENCH_CONTROL, 1, 1 },
        { KAT_HEALTH_API_RECORD_POLICY, 113, 0 },
        { KAT_HEALTH_CUPTI_TUNING, 1, 0 },
        { KAT_HEALTH_HOST_CLOCK, 1, 0 },    /* host times from the TSC */
        { KAT_HEALTH_HOST_CLOCK, 0, 0 },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct scene s;
        scene_init(&s);
        clean_candidate(&s);
        struct kat_health_rec h = { .code = cases[i].code, .value = cases[i].value, .time_ns = T0 + 30 * MS };
        tb_record(&s.b, KAT_REC_HEALTH, &h, sizeof h, NULL, 0);
        finish(&s, 1);
        struct ka_analysis *a = analyze(&s, add_contract, NULL);
        if (cases[i].problem) {
            cr_expect_eq(IMPL(a), KA_INCONCLUSIVE, "health code %u value %lld", cases[i].code,
                         (long long)cases[i].value);
            cr_expect(has_finding(a, "tool-health"), "health code %u", cases[i].code);
        } else {
            cr_expect_eq(IMPL(a), KA_PASS, "health code %u value %lld", cases[i].code, (long long)cases[i].value);
        }
        done(&s, a);
    }
}

/* ---- measurement axis ------------------------------------------------- */

Test(measurement, side_stream_work_after_stop_event_fails)
{
    struct scene s;
    scene_init(&s);
    phase(&s, "kaudit:candidate", PID, T0 + 10 * MS, T0 + 11 * MS);
    uint32_t c = launch(&s, PID, T0 + 10 * MS + 100);
    /* the candidate's extension's module, loaded by the launch: its own code (issue 13) */
    module(&s, "/tmp/torch_extensions/ext/ext.so", PID, T0 + 10 * MS + 600);
    kernel(&s, c, "my_add_kernel", 9, T0 + 12 * MS, T0 + 25 * MS, 4096, 256);
    window(&s, T0 + 9 * MS, T0 + 12 * MS, T0 + 11 * MS, T0 + 13 * MS, 2.0f, T0 + 30 * MS);
    finish(&s, 1);
    struct ka_analysis *a = analyze(&s, add_contract, NULL);
    cr_expect_eq(MEAS(a), KA_FAIL);
    cr_expect(has_finding(a, "work-after-stop-event"));
    cr_expect_eq(IMPL(a), KA_PASS);
    done(&s, a);
}

Test(measurement, side_stream_work_that_finished_in_time_is_a_signal)
{
    struct scene s;
    scene_init(&s);
    phase(&s, "kaudit:candidate", PID, T0 + 10 * MS, T0 + 11 * MS);
    uint32_t c = launch(&s, PID, T0 + 10 * MS + 100);
    kernel(&s, c, "my_add_kernel", 9, T0 + 11 * MS, T0 + 12 * MS, 4096, 256);
    window(&s, T0 + 9 * MS, T0 + 12 * MS, T0 + 10 * MS, T0 + 13 * MS, 3.0f, T0 + 30 * MS);
    finish(&s, 1);
    struct ka_analysis *a = analyze(&s, add_contract, NULL);
    cr_expect_eq(MEAS(a), KA_PASS);
    cr_expect(has_finding(a, "side-stream-within-window"));
    done(&s, a);
}

/*
 * The reference timed while the candidate's work ran on the GPU: a
 * candidate kernel (launched from a thread of the candidate's, before the
 * reference's window opened) running inside a window that timed the
 * reference's kernel.  The reference looks slower than it is, and so the
 * candidate faster; no window of the candidate's shows it.
 */
static struct ka_analysis *reference_timed_beside(struct scene *s, uint64_t cand_start, uint64_t cand_end,
                                                  int exact_events)
{
    scene_init(s);
    clean_candidate(s);
    /* the candidate's thread, launching before the reference's window */
    phase(s, "kaudit:candidate", 200, T0 + 16 * MS, T0 + 17 * MS);
    uint32_t c = launch(s, 200, T0 + 16 * MS + 500);
    kernel(s, c, "my_add_kernel", 9, cand_start, cand_end, 4096, 256);
    /* the reference's timed call: window [20, 25] ms on the host, its kernel [21.5, 24.5] on the GPU */
    phase(s, "kaudit:reference", PID, T0 + 20 * MS + 100000, T0 + 24 * MS);
    uint32_t r = launch(s, PID, T0 + 21 * MS);
    kernel(s, r, "elementwise_add_kernel", 7, T0 + 21 * MS + MS / 2, T0 + 24 * MS + MS / 2, 4096, 256);
    if (exact_events)
        window(s, T0 + 20 * MS, T0 + 25 * MS, T0 + 21 * MS, T0 + 26 * MS, 5.0f, T0 + 27 * MS);
    else {
        /* no CUDA_EVENT records: the window held from its record call to its query */
        uint32_t c1 = s->next_corr++, c2 = s->next_corr++;
        timing_call(s, KAT_TIMING_EVENT_RECORD, 0xe1, 0, 0x5, T0 + 20 * MS, c1, 0);
        timing_call(s, KAT_TIMING_EVENT_RECORD, 0xe2, 0, 0x5, T0 + 25 * MS, c2, 0);
        timing_call(s, KAT_TIMING_EVENT_ELAPSED, 0xe1, 0xe2, 0, T0 + 27 * MS, s->next_corr++, 5.0f);
    }
    finish(s, 1);
    return analyze(s, add_contract, NULL);
}

Test(measurement, candidate_work_inside_the_references_window_is_inconclusive)
{
    struct scene s;
    struct ka_analysis *a = reference_timed_beside(&s, T0 + 22 * MS, T0 + 24 * MS, 1);
    cr_expect_eq(MEAS(a), KA_INCONCLUSIVE, "measurement %s: %s", ka_verdict_name(MEAS(a)),
                 a->axis[KA_AXIS_MEASUREMENT].root_cause);
    cr_expect(has_finding(a, "candidate-work-in-reference-window"));
    cr_expect(a->axis[KA_AXIS_MEASUREMENT].root_cause &&
              strstr(a->axis[KA_AXIS_MEASUREMENT].root_cause, "reference's timed windows") != NULL);
    done(&s, a);
}

Test(measurement, candidate_work_started_before_the_window_and_running_into_it_counts)
{
    struct scene s;
    struct ka_analysis *a = reference_timed_beside(&s, T0 + 18 * MS, T0 + 22 * MS, 1);
    cr_expect_eq(MEAS(a), KA_INCONCLUSIVE);
    cr_expect(has_finding(a, "candidate-work-in-reference-window"));
    done(&s, a);
}

Test(measurement, candidate_work_inside_a_window_without_event_times_counts)
{
    struct scene s;
    struct ka_analysis *a = reference_timed_beside(&s, T0 + 22 * MS, T0 + 24 * MS, 0);
    cr_expect(has_finding(a, "candidate-work-in-reference-window"));
    cr_expect_neq(MEAS(a), KA_PASS);
    done(&s, a);
}

Test(measurement, candidate_work_outside_the_references_window_passes)
{
    struct scene s;
    /* after the window's stop event, and before its start event: neither counts */
    struct ka_analysis *a = reference_timed_beside(&s, T0 + 26 * MS + MS / 2, T0 + 28 * MS, 1);
    cr_expect_eq(MEAS(a), KA_PASS, "measurement %s: %s", ka_verdict_name(MEAS(a)),
                 a->axis[KA_AXIS_MEASUREMENT].root_cause);
    cr_expect_not(has_finding(a, "candidate-work-in-reference-window"));
    done(&s, a);
    a = reference_timed_beside(&s, T0 + 17 * MS, T0 + 21 * MS - MS / 2, 1);
    cr_expect_eq(MEAS(a), KA_PASS);
    cr_expect_not(has_finding(a, "candidate-work-in-reference-window"));
    done(&s, a);
}

/*
 * Windows without CUDA_EVENT records (the default recording): the stop
 * event's GPU time is bounded from stream order.  Stream 7 is the timing
 * stream (handle 0x5), stream 9 a side stream (handle 0x9).
 */
static void stream_timing_call(struct scene *s, uint32_t api, uint64_t event, uint64_t stream, uint32_t stream_id,
                               uint64_t t)
{
    struct kat_timing_call_rec r = { .enter_ns = t, .exit_ns = t + 2000, .api = api, .domain = KAT_API_RUNTIME,
                                     .thread_id = PID, .correlation_id = s->next_corr++, .event = event,
                                     .stream = stream, .stream_id_plus_one = stream_id + 1 };
    tb_record(&s->b, KAT_REC_TIMING_CALL, &r, sizeof r, NULL, 0);
}

/* Window: start recorded at 9 ms, stop at 11.1 ms on stream 7, elapsed 1.0 ms.
 * On stream 7: a kernel before the start (ends 8 ms), the candidate's
 * kernel (GPU 10.5-11 ms), one after the stop (from 13.5 ms).  So the stop
 * event completed between 11.08 ms (its record call, less the 20 us
 * host-clock margin; the last kernel before it ended at 11 ms) and 11.5 ms
 * (the first kernel after the start, plus the elapsed time).  The side
 * kernel on stream 9 is launched at 10.2 ms and ends at side_end. */
static void bounded_window_with(struct scene *s, uint64_t side_end, int join, float elapsed_ms, uint64_t sync_at)
{
    phase(s, "kaudit:candidate", PID, T0 + 10 * MS, T0 + 11 * MS);
    module(s, "/tmp/torch_extensions/ext/ext.so", PID, T0 + 10 * MS + 1500);
    kernel(s, launch(s, PID, T0 + 7 * MS), "harness_fill_kernel", 7, T0 + 7 * MS + 500000, T0 + 8 * MS, 64, 256);
    stream_timing_call(s, KAT_TIMING_EVENT_RECORD, 0xe1, 0x5, 7, T0 + 9 * MS);
    kernel(s, launch(s, PID, T0 + 10 * MS), "my_add_kernel", 7, T0 + 10 * MS + 500000, T0 + 11 * MS, 4096, 256);
    kernel(s, launch(s, PID, T0 + 10 * MS + 200000), "my_side_kernel", 9, T0 + 10 * MS + 600000, side_end, 64, 256);
    if (join) {
        stream_timing_call(s, KAT_TIMING_EVENT_RECORD, 0xe9, 0x9, 9, T0 + 10 * MS + 400000);
        stream_timing_call(s, KAT_TIMING_STREAM_WAIT_EVENT, 0xe9, 0x5, 7, T0 + 10 * MS + 500000);
    }
    stream_timing_call(s, KAT_TIMING_EVENT_RECORD, 0xe2, 0x5, 7, T0 + 11 * MS + 100000);
    if (sync_at)
        stream_timing_call(s, KAT_TIMING_DEVICE_SYNCHRONIZE, 0, 0, UINT32_MAX, sync_at);
    kernel(s, launch(s, PID, T0 + 13 * MS), "harness_check_kernel", 7, T0 + 13 * MS + 500000, T0 + 14 * MS, 64, 256);
    timing_call(s, KAT_TIMING_EVENT_ELAPSED, 0xe1, 0xe2, 0, T0 + 15 * MS, s->next_corr++, elapsed_ms);
}

static void bounded_window(struct scene *s, uint64_t side_end, int join)
{
    bounded_window_with(s, side_end, join, 1.0f, 0);
}

/* The window above with the side kernel ending at SIDE_END: the measurement
 * verdict, and a finding that must be there and one that must not. */
static void check_bounded(uint64_t side_end, int join, enum ka_verdict measurement, const char *present,
                          const char *absent)
{
    struct scene s;
    scene_init(&s);
    bounded_window(&s, side_end, join);
    finish(&s, 1);
    struct ka_analysis *a = analyze(&s, add_contract, NULL);
    cr_expect_eq(MEAS(a), measurement, "measurement %s: %s", ka_verdict_name(MEAS(a)),
                 a->axis[KA_AXIS_MEASUREMENT].root_cause);
    if (present)
        cr_expect(has_finding(a, present), "no '%s' finding", present);
    cr_expect_not(has_finding(a, absent), "a '%s' finding", absent);
    done(&s, a);
}

Test(measurement, bounded_stop_event_convicts_past_its_upper_bound)
{
    check_bounded(T0 + 20 * MS, 0, KA_FAIL, "work-after-stop-event", "stop-event-time-bounded");
}

Test(measurement, bounded_stop_event_between_bounds_is_unresolved)
{
    check_bounded(T0 + 11 * MS + 300000, 0, KA_INCONCLUSIVE, "stop-event-time-bounded", "work-after-stop-event");
}

/* the same side kernel, but the timing stream waited for it inside the window */
Test(measurement, bounded_stop_event_after_a_join_passes)
{
    check_bounded(T0 + 11 * MS + 300000, 1, KA_PASS, "side-stream-within-window", "stop-event-time-bounded");
}

/* Elapsed 2.0 ms: the record call and stream order alone put the stop event
 * between 11.08 and 12.5 ms; a device synchronization called right after
 * the stop record returned at 11.107 ms, which (plus the host-clock margin)
 * caps it near 11.13 ms, so a side kernel ending at 12.3 ms is past it. */
Test(measurement, bounded_stop_event_capped_by_a_synchronization)
{
    struct scene s;
    scene_init(&s);
    bounded_window_with(&s, T0 + 12 * MS + 300000, 0, 2.0f, T0 + 11 * MS + 105000);
    finish(&s, 1);
    struct ka_analysis *a = analyze(&s, add_contract, NULL);
    cr_expect_eq(MEAS(a), KA_FAIL, "measurement %s: %s", ka_verdict_name(MEAS(a)),
                 a->axis[KA_AXIS_MEASUREMENT].root_cause);
    cr_expect(has_finding(a, "work-after-stop-event"));
    done(&s, a);
    /* without the synchronization the same kernel is between the bounds */
    scene_init(&s);
    bounded_window_with(&s, T0 + 12 * MS + 300000, 0, 2.0f, 0);
    finish(&s, 1);
    a = analyze(&s, add_contract, NULL);
    cr_expect_eq(MEAS(a), KA_INCONCLUSIVE, "measurement %s", ka_verdict_name(MEAS(a)));
    cr_expect(has_finding(a, "stop-event-time-bounded"));
    done(&s, a);
}

/* A window whose stop event cannot be placed: recorded at 12 ms (host) on
 * STREAM_ID (UINT32_MAX: none, since UINT32_MAX + 1 wraps to 0), no
 * CUDA_EVENT records, a side kernel ending at 20 ms.  Nothing may convict. */
static void check_unplaced_stop(uint32_t stream_id)
{
    struct scene s;
    scene_init(&s);
    phase(&s, "kaudit:candidate", PID, T0 + 10 * MS, T0 + 11 * MS);
    module(&s, "/tmp/torch_extensions/ext/ext.so", PID, T0 + 10 * MS + 1500);
    stream_timing_call(&s, KAT_TIMING_EVENT_RECORD, 0xe1, 0x5, stream_id, T0 + 9 * MS);
    kernel(&s, launch(&s, PID, T0 + 10 * MS), "my_add_kernel", 7, T0 + 10 * MS + 500000, T0 + 11 * MS, 4096, 256);
    /* short (0.4 ms: with the 0.5 ms kernel above, less than the 1.0 ms reported), so
     * that reported-time-shorter-than-work, which needs no stop time, stays out of it */
    kernel(&s, launch(&s, PID, T0 + 10 * MS + 200000), "my_side_kernel", 9, T0 + 19 * MS + 600000, T0 + 20 * MS, 64,
           256);
    stream_timing_call(&s, KAT_TIMING_EVENT_RECORD, 0xe2, 0x5, stream_id, T0 + 12 * MS);
    timing_call(&s, KAT_TIMING_EVENT_ELAPSED, 0xe1, 0xe2, 0, T0 + 15 * MS, s.next_corr++, 1.0f);
    finish(&s, 1);
    struct ka_analysis *a = analyze(&s, add_contract, NULL);
    cr_expect_eq(MEAS(a), KA_INCONCLUSIVE, "measurement %s: %s", ka_verdict_name(MEAS(a)),
                 a->axis[KA_AXIS_MEASUREMENT].root_cause);
    cr_expect(has_finding(a, "stop-event-time-unknown"));
    cr_expect_not(has_finding(a, "work-after-stop-event"));
    done(&s, a);
}

/* Record calls without stream ids and no CUDA_EVENT records: the candidate's
 * kernels cannot be checked against the stop event. */
Test(measurement, stop_event_without_time_or_stream_is_unresolved)
{
    check_unplaced_stop(UINT32_MAX);
}

/* 11.05 ms: after the last kernel on the stop stream (11 ms), but before the
 * stop record was even called (11.1 ms, less the margin): inside. */
Test(measurement, bounded_stop_event_not_before_its_record_call)
{
    check_bounded(T0 + 11 * MS + 50000, 0, KA_PASS, NULL, "stop-event-time-bounded");
}

/* On stream 7 the GPU facts say the stop event completed by 11.5 ms (the
 * first kernel after the start, 10.5 ms, plus the elapsed 1.0 ms), yet it was
 * recorded at 12 ms: the clocks disagree (or the trace is forged), so the
 * bounds decide nothing, not even the side kernel ending at 20 ms. */
Test(measurement, contradictory_bounds_are_unresolved)
{
    check_unplaced_stop(7);
}

/*
 * reported-time-shorter-than-work.  KernelBench's non_default_stream: the
 * harness records its events on the default stream (7, handle 0x5) at 9 and
 * 10 ms, nothing else runs on it until a harness kernel at 15.5 ms, so the
 * stop event completed somewhere in [9.98, 15.5] ms; the candidate's GEMM on
 * its own stream 9, launched at 9.5 ms, runs 9.6-12.3 ms (2.7 ms) and the
 * harness reports 1.18 ms.  Stream order alone leaves the GEMM between the
 * bounds; the reported time shorter than the GEMM convicts.  Each extra
 * kernel is {stream, launch, start, end} (0 end: none).
 */
struct gpu_work {
    uint32_t stream;
    uint64_t launch, start, end;
    const char *name;
};

static struct ka_analysis *private_stream_window(struct scene *s, float elapsed_ms, const struct gpu_work *work,
                                                 size_t n, const char *party_phase)
{
    scene_init(s);
    phase(s, party_phase, PID, T0 + 9 * MS + 100000, T0 + 9 * MS + 900000);
    module(s, "/tmp/torch_extensions/ext/ext.so", PID, T0 + 9 * MS + 100500);
    stream_timing_call(s, KAT_TIMING_EVENT_RECORD, 0xe1, 0x5, 7, T0 + 9 * MS);
    for (size_t i = 0; i < n; i++)
        kernel(s, launch(s, PID, work[i].launch), work[i].name ? work[i].name : "my_gemm_kernel", work[i].stream,
               work[i].start, work[i].end, 4096, 256);
    stream_timing_call(s, KAT_TIMING_EVENT_RECORD, 0xe2, 0x5, 7, T0 + 10 * MS);
    kernel(s, launch(s, PID, T0 + 15 * MS), "harness_check_kernel", 7, T0 + 15 * MS + 500000, T0 + 16 * MS, 64, 256);
    timing_call(s, KAT_TIMING_EVENT_ELAPSED, 0xe1, 0xe2, 0, T0 + 17 * MS, s->next_corr++, elapsed_ms);
    finish(s, 1);
    return analyze(s, add_contract, NULL);
}

Test(measurement, reported_time_shorter_than_one_kernel_fails)
{
    struct scene s;
    const struct gpu_work gemm[] = { { 9, T0 + 9 * MS + 500000, T0 + 9 * MS + 600000, T0 + 12 * MS + 300000,
                                       "sm90_xmma_gemm_f32f32_tf32f32_f32_nn_n" } };
    struct ka_analysis *a = private_stream_window(&s, 1.18f, gemm, 1, "kaudit:candidate");
    cr_expect_eq(MEAS(a), KA_FAIL, "measurement %s: %s", ka_verdict_name(MEAS(a)),
                 a->axis[KA_AXIS_MEASUREMENT].root_cause);
    cr_expect(has_finding(a, "reported-time-shorter-than-work"));
    cr_expect_not(has_finding(a, "work-after-stop-event"));
    for (size_t i = 0; i < a->n_findings; i++)
        if (!strcmp(a->findings[i].code, "reported-time-shorter-than-work")) {
            const char *t = a->findings[i].text;
            cr_expect(strstr(t, "1.1800 ms") && strstr(t, "2.7000 ms") && strstr(t, "stream 9") &&
                          strstr(t, "sm90_xmma_gemm") && strstr(t, "launched 0.500 ms after"),
                      "%s", t);
        }
    done(&s, a);
}

/* Two 0.8 ms kernels on two streams overlapping by 0.4 ms: 1.2 ms of GPU time
 * in union, against 1.0 ms reported; the same two overlapping by 0.7 ms are
 * 0.9 ms in union (1.6 ms summed): no contradiction, the union is what counts. */
Test(measurement, reported_time_shorter_than_the_union_of_kernels_fails)
{
    struct scene s;
    const struct gpu_work apart[] = {
        { 7, T0 + 9 * MS + 200000, T0 + 9 * MS + 300000, T0 + 10 * MS + 100000, NULL },
        { 9, T0 + 9 * MS + 300000, T0 + 9 * MS + 700000, T0 + 10 * MS + 500000, NULL },
    };
    struct ka_analysis *a = private_stream_window(&s, 1.0f, apart, 2, "kaudit:candidate");
    cr_expect_eq(MEAS(a), KA_FAIL, "measurement %s: %s", ka_verdict_name(MEAS(a)),
                 a->axis[KA_AXIS_MEASUREMENT].root_cause);
    cr_expect(has_finding(a, "reported-time-shorter-than-work"));
    for (size_t i = 0; i < a->n_findings; i++)
        if (!strcmp(a->findings[i].code, "reported-time-shorter-than-work"))
            cr_expect(strstr(a->findings[i].text, "1.2000 ms"), "%s", a->findings[i].text);
    done(&s, a);
    const struct gpu_work overlapping[] = {
        { 7, T0 + 9 * MS + 200000, T0 + 9 * MS + 300000, T0 + 10 * MS + 100000, NULL },
        { 9, T0 + 9 * MS + 300000, T0 + 9 * MS + 400000, T0 + 10 * MS + 200000, NULL },
    };
    a = private_stream_window(&s, 1.0f, overlapping, 2, "kaudit:candidate");
    cr_expect_not(has_finding(a, "reported-time-shorter-than-work"));
    cr_expect_neq(MEAS(a), KA_FAIL, "measurement %s: %s", ka_verdict_name(MEAS(a)),
                  a->axis[KA_AXIS_MEASUREMENT].root_cause);
    done(&s, a);
}

/* Within the 20 us host-clock margin (1.015 ms of work against 1.0 ms) nothing
 * convicts; the harness's own long kernel never does. */
Test(measurement, reported_time_shorter_than_work_needs_the_margin_and_the_candidate)
{
    struct scene s;
    const struct gpu_work close[] = { { 9, T0 + 9 * MS + 500000, T0 + 9 * MS + 600000, T0 + 10 * MS + 615000,
                                        NULL } };
    struct ka_analysis *a = private_stream_window(&s, 1.0f, close, 1, "kaudit:candidate");
    cr_expect_not(has_finding(a, "reported-time-shorter-than-work"));
    done(&s, a);
    const struct gpu_work gemm[] = { { 9, T0 + 9 * MS + 500000, T0 + 9 * MS + 600000, T0 + 12 * MS + 300000,
                                       NULL } };
    a = private_stream_window(&s, 1.18f, gemm, 1, "kaudit:reference");
    cr_expect_not(has_finding(a, "reported-time-shorter-than-work"));
    cr_expect_neq(MEAS(a), KA_FAIL, "measurement %s", ka_verdict_name(MEAS(a)));
    done(&s, a);
}

/* The rule needs no stop time at all: a stop event without stream id or
 * event record still convicts a 9.4 ms kernel against 1.0 ms reported. */
Test(measurement, reported_time_shorter_than_work_without_stop_time_fails)
{
    struct scene s;
    scene_init(&s);
    phase(&s, "kaudit:candidate", PID, T0 + 10 * MS, T0 + 11 * MS);
    module(&s, "/tmp/torch_extensions/ext/ext.so", PID, T0 + 10 * MS + 1500);
    stream_timing_call(&s, KAT_TIMING_EVENT_RECORD, 0xe1, 0x5, UINT32_MAX, T0 + 9 * MS);
    kernel(&s, launch(&s, PID, T0 + 10 * MS + 200000), "my_side_kernel", 9, T0 + 10 * MS + 600000, T0 + 20 * MS, 64,
           256);
    stream_timing_call(&s, KAT_TIMING_EVENT_RECORD, 0xe2, 0x5, UINT32_MAX, T0 + 12 * MS);
    timing_call(&s, KAT_TIMING_EVENT_ELAPSED, 0xe1, 0xe2, 0, T0 + 15 * MS, s.next_corr++, 1.0f);
    finish(&s, 1);
    struct ka_analysis *a = analyze(&s, add_contract, NULL);
    cr_expect_eq(MEAS(a), KA_FAIL, "measurement %s: %s", ka_verdict_name(MEAS(a)),
                 a->axis[KA_AXIS_MEASUREMENT].root_cause);
    cr_expect(has_finding(a, "reported-time-shorter-than-work"));
    cr_expect(has_finding(a, "stop-event-time-unknown"));
    done(&s, a);
}

/* Findings carry structured fields in the JSON report (format version 2),
 * and the JSON lists every finding: 15 windows, each with a candidate kernel
 * ending after its stop event, give 15 work-after-stop-event findings (the
 * text report shows 12 and counts the rest). */
static int count_code(const cJSON *findings, const char *code)
{
    int n = 0;
    const cJSON *x;
    cJSON_ArrayForEach(x, findings)
    {
        const cJSON *c = cJSON_GetObjectItemCaseSensitive(x, "code");
        if (cJSON_IsString(c) && !strcmp(c->valuestring, code))
            n++;
    }
    return n;
}

Test(report, json_findings_have_fields_and_are_not_capped)
{
    struct scene s;
    scene_init(&s);
    phase(&s, "kaudit:candidate", PID, T0, T0 + 100 * MS);
    module(&s, "/tmp/torch_extensions/ext/ext.so", PID, T0 + 500);
    for (unsigned i = 0; i < 15; i++) {
        uint64_t base = T0 + (uint64_t)(i + 1) * 4 * MS;
        uint32_t c1 = s.next_corr++, c2 = s.next_corr++;
        uint64_t e1 = 0x100 + 2 * i, e2 = 0x101 + 2 * i;
        timing_call(&s, KAT_TIMING_EVENT_RECORD, e1, 0, 0x5, base, c1, 0);
        uint32_t c = launch(&s, PID, base + 100000);
        kernel(&s, c, "my_add_kernel", 9, base + 200000, base + 2 * MS, 4096, 256);
        timing_call(&s, KAT_TIMING_EVENT_RECORD, e2, 0, 0x5, base + 300000, c2, 0);
        struct kat_cuda_event_rec r1 = { .correlation_id = c1, .stream_id = 7, .device_timestamp_ns = base + 10000 };
        struct kat_cuda_event_rec r2 = { .correlation_id = c2, .stream_id = 7,
                                         .device_timestamp_ns = base + 310000 };
        tb_record(&s.b, KAT_REC_CUDA_EVENT, &r1, sizeof r1, NULL, 0);
        tb_record(&s.b, KAT_REC_CUDA_EVENT, &r2, sizeof r2, NULL, 0);
        timing_call(&s, KAT_TIMING_EVENT_ELAPSED, e1, e2, 0, base + 3 * MS, s.next_corr++, 0.3f);
    }
    finish(&s, 1);
    struct ka_analysis *a = analyze(&s, add_contract, NULL);
    cr_expect_eq(MEAS(a), KA_FAIL);
    char *json = ka_report_json(a);
    cr_assert(json);
    cJSON *root = cJSON_Parse(json);
    cr_assert(root);
    cr_expect_eq(cJSON_GetObjectItemCaseSensitive(root, "version")->valueint, 2);
    const cJSON *findings = cJSON_GetObjectItemCaseSensitive(root, "findings");
    cr_expect_eq(count_code(findings, "work-after-stop-event"), 15);
    cr_expect_eq(count_code(findings, "reported-time-shorter-than-work"), 15);
    const cJSON *x;
    int checked = 0;
    cJSON_ArrayForEach(x, findings)
    {
        const char *code = cJSON_GetObjectItemCaseSensitive(x, "code")->valuestring;
        cr_expect(!strstr(cJSON_GetObjectItemCaseSensitive(x, "text")->valuestring, "more like the above"));
        if (strcmp(code, "work-after-stop-event") && strcmp(code, "reported-time-shorter-than-work"))
            continue;
        const cJSON *fields = cJSON_GetObjectItemCaseSensitive(x, "fields");
        cr_assert(cJSON_IsObject(fields), "%s has no fields", code);
        const cJSON *name = cJSON_GetObjectItemCaseSensitive(fields, "kernel_name");
        cr_expect(cJSON_IsString(name) && !strcmp(name->valuestring, "my_add_kernel"));
        cr_expect_eq(cJSON_GetObjectItemCaseSensitive(fields, "stream")->valueint, 9);
        const cJSON *window = cJSON_GetObjectItemCaseSensitive(fields, "window");
        cr_expect(cJSON_IsNumber(window) && window->valueint >= 1 && window->valueint <= 15);
        cr_expect(fabs(cJSON_GetObjectItemCaseSensitive(fields, "reported_ms")->valuedouble - 0.3) < 1e-6);
        cr_expect(cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(fields, "correlation_id")));
        cr_expect(cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(fields, "end_ns")));
        if (!strcmp(code, "work-after-stop-event")) {
            cr_expect(fabs(cJSON_GetObjectItemCaseSensitive(fields, "late_ms")->valuedouble - 1.69) < 1e-6);
            cr_expect_str_eq(cJSON_GetObjectItemCaseSensitive(fields, "stop_time")->valuestring, "exact");
        } else {
            cr_expect(fabs(cJSON_GetObjectItemCaseSensitive(fields, "gpu_busy_ms")->valuedouble - 1.8) < 1e-6);
            cr_expect(cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(fields, "launch_ns")));
        }
        checked++;
    }
    cr_expect_eq(checked, 30);
    /* exact integers: the end of the first kernel, T0 + 4 ms + 2 ms */
    cr_expect(strstr(json, "\"end_ns\":\t1006000000"), "no exact end_ns");
    cJSON_Delete(root);
    free(json);
    /* the text report still summarizes */
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    ka_report_text(f, a);
    fclose(f);
    cr_expect(strstr(text, "work-after-stop-event: ... and 3 more like the above"), "%s", text);
    free(text);
    done(&s, a);
}

Test(measurement, bounded_stop_event_within_its_lower_bound_passes)
{
    check_bounded(T0 + 10 * MS + 900000, 0, KA_PASS, NULL, "stop-event-time-bounded");
}

Test(measurement, injected_thread_work_after_stop_event_fails)
{
    struct scene s;
    scene_init(&s);
    phase(&s, "kaudit:candidate", PID, T0 + 10 * MS, T0 + 11 * MS);
    struct kat_thread_rec create = { .event = KAT_THREAD_CREATE, .thread_id = PID, .token = 77,
                                     .time_ns = T0 + 10 * MS + 500 };
    struct kat_thread_rec start = { .event = KAT_THREAD_START, .thread_id = 555, .token = 77,
                                    .time_ns = T0 + 10 * MS + 600 };
    tb_record(&s.b, KAT_REC_THREAD, &create, sizeof create, NULL, 0);
    tb_record(&s.b, KAT_REC_THREAD, &start, sizeof start, NULL, 0);
    /* the worker launches 20 ms later, long after the stop event was recorded */
    uint32_t c = launch(&s, 555, T0 + 30 * MS);
    module(&s, "/tmp/torch_extensions/ext/ext.so", 555, T0 + 30 * MS + 500);
    kernel(&s, c, "my_add_kernel", 7, T0 + 31 * MS, T0 + 32 * MS, 4096, 256);
    window(&s, T0 + 9 * MS, T0 + 12 * MS, T0 + 11 * MS, T0 + 13 * MS, 2.0f, T0 + 14 * MS);
    finish(&s, 1);
    struct ka_analysis *a = analyze(&s, add_contract, NULL);
    cr_expect_eq(MEAS(a), KA_FAIL);
    cr_expect(has_finding(a, "work-in-injected-thread"));
    cr_expect(has_finding(a, "thread-in-timed-window"));
    cr_expect_eq(a->kernels_by[KA_ORIGIN_CANDIDATE][KA_PARTY_CANDIDATE], 1);
    done(&s, a);
}

Test(measurement, reported_time_must_come_from_the_runtime)
{
    struct scene s;
    scene_init(&s);
    clean_candidate(&s);
    mark(&s, "kaudit:reported_ms 0.30000001192092896", T0 + 16 * MS);
    finish(&s, 1);
    struct ka_options opt = { .weak = KA_WEAK_ACCEPT };
    struct ka_analysis *a = analyze(&s, add_contract, &opt);
    cr_expect_eq(MEAS(a), KA_FAIL);
    cr_expect(has_finding(a, "reported-time-not-measured"));
    cr_expect_str_eq(a->outcome, "C3c");
    done(&s, a);
}

Test(measurement, reported_time_equal_to_the_runtime_passes)
{
    struct scene s;
    scene_init(&s);
    clean_candidate(&s);
    mark(&s, "kaudit:reported_ms 3.0", T0 + 16 * MS);
    finish(&s, 1);
    struct ka_analysis *a = analyze(&s, add_contract, NULL);
    cr_expect_eq(MEAS(a), KA_PASS, "%s", a->axis[KA_AXIS_MEASUREMENT].root_cause);
    done(&s, a);
}

Test(measurement, guard_mark_convicts)
{
    struct scene s;
    scene_init(&s);
    clean_candidate(&s);
    mark(&s, "kaudit:guard-changed torch.cuda.Event.elapsed_time", T0 + 16 * MS);
    finish(&s, 1);
    struct ka_analysis *a = analyze(&s, add_contract, NULL);
    cr_expect_eq(MEAS(a), KA_FAIL);
    cr_expect(has_finding(a, "timing-primitive-replaced"));
    done(&s, a);
}

Test(measurement, foreign_object_defining_elapsed_time_convicts)
{
    struct scene s;
    scene_init(&s);
    clean_candidate(&s);
    struct kat_timing_symbol_rec sym = { .address = 0x1000, .phase = KAT_SYMBOL_DEFINED_BY_OBJECT,
                                         .time_ns = T0 + 20 * MS };
    sym.symbol_string = tb_string(&s.b, "cudaEventElapsedTime");
    sym.object_string = tb_string(&s.b, "/tmp/x/libfasttime.so");
    tb_record(&s.b, KAT_REC_TIMING_SYMBOL, &sym, sizeof sym, NULL, 0);
    struct kat_timing_symbol_rec rt = sym;
    rt.object_string = tb_string(&s.b, "/opt/nvidia/cu13/lib/libcudart.so.13");
    tb_record(&s.b, KAT_REC_TIMING_SYMBOL, &rt, sizeof rt, NULL, 0);
    finish(&s, 1);
    struct ka_analysis *a = analyze(&s, add_contract, NULL);
    cr_expect_eq(MEAS(a), KA_FAIL);
    cr_expect(has_finding(a, "foreign-timing-definition"));
    done(&s, a);
}

Test(measurement, timing_function_changing_convicts)
{
    struct scene s;
    scene_init(&s);
    clean_candidate(&s);
    struct kat_timing_symbol_rec a1 = { .address = 0x1000, .phase = KAT_SYMBOL_AT_CUDA_INIT, .time_ns = T0 + 1 };
    a1.symbol_string = tb_string(&s.b, "cudaEventElapsedTime");
    a1.object_string = tb_string(&s.b, "/opt/nvidia/cu13/lib/libcudart.so.13");
    struct kat_timing_symbol_rec a2 = a1;
    a2.phase = KAT_SYMBOL_AT_END;
    a2.address = 0x2000;
    a2.object_string = tb_string(&s.b, "/tmp/libhook.so");
    tb_record(&s.b, KAT_REC_TIMING_SYMBOL, &a1, sizeof a1, NULL, 0);
    tb_record(&s.b, KAT_REC_TIMING_SYMBOL, &a2, sizeof a2, NULL, 0);
    finish(&s, 1);
    struct ka_analysis *a = analyze(&s, add_contract, NULL);
    cr_expect_eq(MEAS(a), KA_FAIL);
    cr_expect(has_finding(a, "timing-function-changed"));
    done(&s, a);
}

Test(measurement, every_iteration_timed_and_queried_twice)
{
    /* 5,000 timed iterations, each queried twice (as harnesses do when they
       log and then sum): 5,000 windows, each candidate kernel inside its own */
    struct scene s;
    scene_init(&s);
    for (int i = 0; i < 5000; i++) {
        uint64_t base = T0 + (uint64_t)i * 10 * MS;
        phase(&s, "kaudit:candidate", PID, base + 1 * MS, base + 2 * MS);
        uint32_t c = launch(&s, PID, base + 1 * MS + 100);
        kernel(&s, c, "my_add_kernel", 7, base + 3 * MS, base + 4 * MS, 4096, 256);
        window(&s, base, base + 2 * MS, base + 2 * MS, base + 5 * MS, 3.0f, base + 6 * MS);
        timing_call(&s, KAT_TIMING_EVENT_ELAPSED, 0xe1, 0xe2, 0, base + 7 * MS, s.next_corr++, 3.0f);
    }
    finish(&s, 1);
    struct ka_analysis *a = analyze(&s, add_contract, NULL);
    cr_expect_eq(a->timed_windows, 5000);
    cr_expect_eq(MEAS(a), KA_PASS, "%s", a->axis[KA_AXIS_MEASUREMENT].root_cause);
    done(&s, a);
}

Test(measurement, no_window_is_inconclusive)
{
    struct scene s;
    scene_init(&s);
    phase(&s, "kaudit:candidate", PID, T0 + 10 * MS, T0 + 11 * MS);
    uint32_t c = launch(&s, PID, T0 + 10 * MS + 100);
    kernel(&s, c, "my_add_kernel", 7, T0 + 12 * MS, T0 + 13 * MS, 4096, 256);
    finish(&s, 1);
    struct ka_analysis *a = analyze(&s, add_contract, NULL);
    cr_expect_eq(MEAS(a), KA_INCONCLUSIVE);
    done(&s, a);
}

Test(measurement, unattributed_escape_is_r_c)
{
    struct scene s;
    scene_init(&s);
    uint32_t c = launch(&s, PID, T0 + 10 * MS + 100);
    kernel(&s, c, "some_kernel", 9, T0 + 12 * MS, T0 + 25 * MS, 4096, 256);
    window(&s, T0 + 9 * MS, T0 + 12 * MS, T0 + 11 * MS, T0 + 13 * MS, 2.0f, T0 + 30 * MS);
    finish(&s, 1);
    struct ka_analysis *a = analyze(&s, add_contract, NULL);
    cr_expect_eq(MEAS(a), KA_INCONCLUSIVE);
    cr_expect(strstr(a->axis[KA_AXIS_MEASUREMENT].root_cause, "R-C") != NULL);
    done(&s, a);
}

/* ---- certificate ------------------------------------------------------ */

Test(certificate, supplied_semantic_pass_certifies)
{
    struct scene s;
    scene_init(&s);
    clean_candidate(&s);
    finish(&s, 1);
    struct ka_options opt = { .weak = KA_WEAK_REJECT, .semantic_given = 1, .semantic = KA_PASS };
    struct ka_analysis *a = analyze(&s, add_contract, &opt);
    cr_expect_eq(a->certificate, KA_PASS);
    cr_expect_str_eq(a->outcome, "C0");
    done(&s, a);
}

Test(certificate, degenerate_reference_withholds_pass)
{
    static const char degenerate[] =
        "{\"kaudit_contract\": 1, \"task_id\": \"t/zero\", \"degenerate_reference\": true,"
        " \"implementation\": {\"self_implemented\": true},"
        " \"reference_work\": {\"dominant_class\": \"elementwise\", \"amount\": 1048576}}";
    struct scene s;
    scene_init(&s);
    clean_candidate(&s);
    finish(&s, 1);
    struct ka_options opt = { .semantic_given = 1, .semantic = KA_PASS };
    struct ka_analysis *a = analyze(&s, degenerate, &opt);
    cr_expect_eq(a->aggregate, KA_PASS);
    cr_expect_eq(a->certificate, KA_INCONCLUSIVE);
    cr_expect(strstr(a->certificate_reason, "R-B") != NULL);
    done(&s, a);
}

Test(certificate, semantic_fail_alone_is_c2)
{
    struct scene s;
    scene_init(&s);
    clean_candidate(&s);
    finish(&s, 1);
    struct ka_options opt = { .weak = KA_WEAK_ACCEPT, .semantic_given = 1, .semantic = KA_FAIL };
    struct ka_analysis *a = analyze(&s, add_contract, &opt);
    cr_expect_eq(a->certificate, KA_FAIL);
    cr_expect_str_eq(a->outcome, "C2");
    done(&s, a);
}

Test(certificate, implementation_over_measurement_priority)
{
    struct scene s;
    scene_init(&s);
    phase(&s, "kaudit:candidate", PID, T0 + 10 * MS, T0 + 11 * MS);
    sgemm(&s, "/opt/torch/lib/libtorch_cuda.so", PID, T0 + 10 * MS + 100, 1024);
    mark(&s, "kaudit:reported_ms 0.125", T0 + 16 * MS);
    finish(&s, 1);
    struct ka_options opt = { .weak = KA_WEAK_ACCEPT };
    struct ka_analysis *a = analyze(&s, gemm_contract, &opt);
    cr_expect_eq(IMPL(a), KA_FAIL);
    cr_expect_eq(MEAS(a), KA_FAIL);
    cr_expect_str_eq(a->outcome, "C3b");
    done(&s, a);
}

Test(report, json_is_parseable_and_names_the_verdicts)
{
    struct scene s;
    scene_init(&s);
    phase(&s, "kaudit:candidate", PID, T0 + 10 * MS, T0 + 11 * MS);
    sgemm(&s, "/opt/torch/lib/libtorch_cuda.so", PID, T0 + 10 * MS + 100, 1024);
    finish(&s, 1);
    struct ka_analysis *a = analyze(&s, gemm_contract, NULL);
    char *json = ka_report_json(a);
    cr_assert(json);
    cr_expect(strstr(json, "\"format\":\t\"kaudit-report\"") != NULL, "%s", json);
    cr_expect(strstr(json, "\"forbidden-vendor-call\"") != NULL);
    free(json);
    done(&s, a);
}

/* The safety bound (analyzer/findings.c): a hostile trace cannot make millions
   of findings in memory; past KA_FINDINGS_KEPT_PER_CODE of one code they are only
   counted, and one findings-not-kept finding says how many were dropped. */
Test(findings, bounded_per_code_with_a_summary)
{
    struct ka_analysis *a = calloc(1, sizeof *a);
    cr_assert(a);
    struct ka_findings fs = { .a = a };
    unsigned extra = 57, total = KA_FINDINGS_KEPT_PER_CODE + extra;
    for (unsigned i = 0; i < total; i++) {
        struct ka_finding *x = ka_add_finding(&fs, KA_AXIS_IMPLEMENTATION, KA_FINDING_SIGNAL, "unattributed-kernel",
                                              "t.kat", i, "kernel %u", i);
        ka_field_u64(x, "kernels", i);
        if (i % 1000 == 0)
            ka_add_finding(&fs, KA_AXIS_MEASUREMENT, KA_FINDING_SIGNAL, "graph-replays", NULL, 0, "other %u", i);
    }
    ka_findings_finish(&fs);
    cr_assert_eq(ka_code_seen(&fs, "unattributed-kernel"), total, "the verdicts still count every one");
    size_t kept = 0, summaries = 0, other = 0;
    for (size_t i = 0; i < a->n_findings; i++) {
        const struct ka_finding *x = &a->findings[i];
        if (!strcmp(x->code, "unattributed-kernel"))
            kept++;
        else if (!strcmp(x->code, "graph-replays"))
            other++;
        else if (!strcmp(x->code, "findings-not-kept")) {
            summaries++;
            cr_assert(x->text && strstr(x->text, "57 more 'unattributed-kernel'"), "%s", x->text ? x->text : "");
            cr_assert_eq(x->axis, KA_AXIS_IMPLEMENTATION);
            int saw = 0;
            for (size_t j = 0; j < x->n_fields; j++)
                if (!strcmp(x->fields[j].key, "not_kept")) {
                    cr_assert_eq(x->fields[j].u, extra);
                    saw = 1;
                }
            cr_assert(saw);
        }
    }
    cr_assert_eq(kept, KA_FINDINGS_KEPT_PER_CODE);
    cr_assert_eq(summaries, 1);
    cr_assert_eq(other, (total + 999) / 1000, "other codes are not affected");
    ka_findings_free(&fs);
    ka_analysis_free(a);
}

/*
 * Operator ranges the candidate writes (docs/analysis.md, "Operators"): a
 * range can add a class to a kernel, never take one away, and ranges of the
 * candidate's phase never relabel the reference's work.  The reference's
 * first call is sampled (aten::topk); the candidate's ten calls are not, and
 * are wrapped in ranges of its own.
 */
static void pymark(struct scene *s, const char *msg, uint64_t t)
{
    struct kat_nvtx_rec r = { .kind = KAT_NVTX_MARK, .thread_id = PID, .time_ns = t };
    r.message_string = tb_string(&s->b, msg);
    static struct tb *last; static uint32_t dom;
    if (last != &s->b || !dom) { dom = tb_string(&s->b, "kaudit.python"); last = &s->b; }
    r.domain_string = dom;
    tb_record(&s->b, KAT_REC_NVTX, &r, sizeof r, NULL, 0);
}

/* the sampler's word, then the provenance status: both kept (a use after free once) */
Test(operators_attack, sampler_word_then_status)
{
    struct scene s;
    scene_init(&s);
    pymark(&s, "operators off: KAUDIT_PYTHON_OPERATORS=off", T0 + 1 * MS);
    pymark(&s, "on: sys.monitoring tool 4, Python 3.12.0, watching Model,ModelNew", T0 + 2 * MS);
    clean_candidate(&s);
    finish(&s, 1);
    struct ka_analysis *a = analyze(&s, add_contract, NULL);
    const struct ka_finding *x = finding(a, "python-provenance");
    cr_assert(x);
    int operators = 0;
    for (size_t i = 0; i < x->n_fields; i++)
        operators |= !strcmp(x->fields[i].key, "operators") && strstr(x->fields[i].s, "KAUDIT_PYTHON_OPERATORS=off");
    cr_expect(operators);
    done(&s, a);
}

static int run_attack(const char *wrap_first, const char *wrap_rest, int cand_sampled)
{
    struct scene s;
    scene_init(&s);
    topk_names(&s);
    /* the reference, sampled in its first call: teaches aten::topk -> reduction for both names */
    call2(&s, "kaudit:reference", T0 + 1 * MS, 1, NULL);
    call2(&s, "kaudit:reference", T0 + 2 * MS, 0, NULL);
    for (int i = 0; i < 10; i++)
        call2(&s, "kaudit:candidate", T0 + (10 + i) * MS, cand_sampled, i == 0 ? wrap_first : wrap_rest);
    finish(&s, 1);
    struct ka_analysis *a = analyze(&s, topk_contract, NULL);
    int convicted = has_finding(a, "forbidden-framework-work");
    const struct ka_finding *x = finding(a, "forbidden-framework-work");
    cr_log_info("wrap_first=%s wrap_rest=%s sampled=%d -> impl %s, %s", wrap_first ? wrap_first : "-",
                wrap_rest ? wrap_rest : "-", cand_sampled, ka_verdict_name(IMPL(a)), x ? x->text : "(no conviction)");
    done(&s, a);
    return convicted;
}

/* the reference's operators name the candidate's unsampled launches */
Test(operators_attack, unsampled_candidate_launches_take_the_references_operator)
{
    cr_expect(run_attack(NULL, NULL, 0));
}
Test(operators_attack, a_range_of_no_family_hides_nothing)
{
    cr_expect(run_attack("aten::kaudit_nothing", "aten::kaudit_nothing", 0));
}
Test(operators_attack, a_glue_range_hides_nothing)
{
    cr_expect(run_attack("aten::fill_", "aten::fill_", 0));
}
Test(operators_attack, a_range_of_another_class_hides_nothing)
{
    cr_expect(run_attack("aten::add", NULL, 0));
}

static const char measure_contract[] =
    "{\"kaudit_contract\": 1, \"task_id\": \"t/topkm\","
    " \"implementation\": {\"self_implemented\": true},"
    " \"reference_work\": {\"dominant_class\": \"reduction\", \"measure\": \"reference_phase\"},"
    " \"timing\": {\"dtype\": \"float32\"}}";

static int run_r_inflation(int attack)
{
    struct scene s;
    scene_init(&s);
    topk_names(&s);
    uint32_t copy_id = tb_string(&s.b, "_ZN2at6native18elementwise_kernelILi128ELi4EZNS0_23direct_copy_kernel_cudaERNS_18TensorIteratorBaseEEUlvE_EEviT1_");
    call2(&s, "kaudit:reference", T0 + 1 * MS, 1, NULL);
    nvtx(&s, KAT_NVTX_PUSH, PID, "kaudit:reference", T0 + 3 * MS);
    for (int i = 0; i < 50; i++) {
        uint32_t c = launch(&s, PID, T0 + 3 * MS + 100 + i * 10);
        kernel_named(&s, c, copy_id, T0 + 4 * MS + i * 1000, T0 + 4 * MS + i * 1000 + 500);
    }
    nvtx(&s, KAT_NVTX_POP, PID, NULL, T0 + 5 * MS);
    call2(&s, "kaudit:candidate", T0 + 10 * MS, 1, NULL);
    if (attack) {
        nvtx(&s, KAT_NVTX_PUSH, PID, "kaudit:candidate", T0 + 20 * MS);
        nvtx(&s, KAT_NVTX_PUSH, PID, "aten::sum", T0 + 20 * MS + 10);
        uint32_t c = launch(&s, PID, T0 + 20 * MS + 100);
        nvtx(&s, KAT_NVTX_POP, PID, NULL, T0 + 20 * MS + 200);
        nvtx(&s, KAT_NVTX_POP, PID, NULL, T0 + 20 * MS + 300);
        struct kat_kernel_rec k = { .start_ns = T0 + 21 * MS, .end_ns = T0 + 21 * MS + 10, .stream_id = 7,
                                    .correlation_id = c, .grid = { 1, 1, 1 }, .block = { 32, 1, 1 }, .name_string = copy_id };
        tb_record(&s.b, KAT_REC_KERNEL, &k, sizeof k, NULL, 0);
    }
    finish(&s, 1);
    struct ka_analysis *a = analyze(&s, measure_contract, NULL);
    const struct ka_finding *x = finding(a, "forbidden-framework-work");
    cr_log_info("attack=%d R_red=%.4g -> impl %s: %s", attack, a->reference_work.amount[KA_CLASS_REDUCTION],
                ka_verdict_name(IMPL(a)), x ? x->text : "(no conviction)");
    /* the reference's sampled topk call only (two kernels of 4096 x 1024 threads): its copies stay glue */
    cr_expect_float_eq(a->reference_work.amount[KA_CLASS_REDUCTION], 2.0 * 4096 * 1024, 1e-6, "R of reduction %.6g",
                       a->reference_work.amount[KA_CLASS_REDUCTION]);
    int convicted = x != NULL;
    done(&s, a);
    return convicted;
}
Test(operators_attack, reference_work_baseline) { cr_expect(run_r_inflation(0)); }
/* a candidate range around a kernel name of the reference's does not relabel the reference's launches */
Test(operators_attack, candidate_range_does_not_change_reference_work) { cr_expect(run_r_inflation(1)); }

/*
 * The causal probe (issue 16; docs/analysis.md, "Causal probe"): forbidden
 * work the dispatcher reaches convicts only when the output depends on it;
 * work below the framework (an extension calling cuBLAS itself) keeps its
 * launch-provenance conviction.
 */
static struct ka_probe_evidence probe_of(enum ka_probe_state state, double change)
{
    struct ka_probe_evidence pr = { .state = state, .baseline = KA_PROBE_BASELINE_MATCH, .threshold = 1e-3,
                                    .joint_delta = change, .noise_floor = 0,
                                    .seed = 7, .classes = 1u << KA_CLASS_GEMM, .targets = "mm x1 (gemm)",
                                    .why = state == KA_PROBE_UNRESOLVED ? "sequence-differs: test" : NULL };
    for (int i = 0; i < KA_CLASS_COUNT; i++)
        pr.class_delta[i] = -1;
    for (int i = 0; i < KA_PROBE_FAMILIES; i++)
        pr.vendor_family_delta[i] = -1;
    pr.class_delta[KA_CLASS_GEMM] = change;
    pr.class_calls[KA_CLASS_GEMM] = 1;
    return pr;
}

/* The vendor replays as the reader leaves them: `n` library calls described, each
   replayed alone with its change (the joint change is the largest). */
static struct ka_probe_evidence vendor_probe_of(unsigned n, const struct ka_probe_vendor_call *calls)
{
    struct ka_probe_evidence pr = probe_of(KA_PROBE_DECIDED, 0.0);
    pr.classes = 0;
    pr.vendor = 1;
    pr.vendor_calls = n;
    pr.n_vendor_localized = n;
    for (unsigned i = 0; i < n; i++) {
        pr.vendor_call[i] = calls[i];
        pr.vendor_family_calls[calls[i].family]++;
        if (calls[i].delta > pr.vendor_delta)
            pr.vendor_delta = calls[i].delta;
    }
    return pr;
}

static const struct ka_field *field(const struct ka_finding *x, const char *key)
{
    for (size_t i = 0; x && i < x->n_fields; i++)
        if (!strcmp(x->fields[i].key, key))
            return &x->fields[i];
    return NULL;
}

/* The candidate's call in the probe's baseline replay: `calls` GEMMs (the probe below perturbed one). */
static struct ka_analysis *probed_gemms(struct scene *s, const char *caller, const struct ka_probe_evidence *pr,
                                        int calls)
{
    scene_init(s);
    phase(s, "kaudit:candidate", PID, T0 + 10 * MS, T0 + 11 * MS);
    nvtx(s, KAT_NVTX_PUSH, PID, "kaudit:probe baseline", T0 + 10 * MS + 50);
    for (int i = 0; i < calls; i++)
        sgemm(s, caller, PID, T0 + 10 * MS + 100 + (uint64_t)i * 100000, 1024);
    nvtx(s, KAT_NVTX_POP, PID, NULL, T0 + 10 * MS + 900000);
    finish(s, 1);
    struct ka_options opt = { .weak = KA_WEAK_ACCEPT, .probe = pr };
    return analyze(s, gemm_contract, &opt);
}

static struct ka_analysis *probed_gemm(struct scene *s, const char *caller, const struct ka_probe_evidence *pr)
{
    return probed_gemms(s, caller, pr, 1);
}

/* A second GEMM the dispatcher never saw (another thread, a mode popped) in the probe's
   baseline: its "unused" cannot stand, launch provenance convicts (the review's decoy attack). */
Test(probe, a_decoy_operator_does_not_vouch_for_work_the_probe_did_not_see)
{
    struct scene s;
    struct ka_probe_evidence pr = probe_of(KA_PROBE_DECIDED, 0.0);
    struct ka_analysis *a = probed_gemms(&s, "/opt/torch/lib/libtorch_cuda.so", &pr, 2);
    for (size_t i = 0; i < a->n_findings; i++)
        cr_log_info("%s: %s", a->findings[i].code, a->findings[i].text);
    cr_expect_eq(IMPL(a), KA_FAIL, "%s", a->axis[KA_AXIS_IMPLEMENTATION].root_cause);
    const struct ka_finding *x = finding(a, "forbidden-vendor-call");
    cr_assert(x);
    cr_expect(strstr(x->text, "cannot vouch") && strstr(x->text, "shows 2 library calls"), "%s", x->text);
    cr_expect_str_eq(field(x, "channel")->s, "launch-provenance");
    cr_expect(!has_finding(a, "forbidden-work-unused"));
    done(&s, a);
}

/* Without the runner's baseline range the trace confirms nothing: no "unused". */
Test(probe, no_baseline_window_no_unused)
{
    struct scene s;
    scene_init(&s);
    phase(&s, "kaudit:candidate", PID, T0 + 10 * MS, T0 + 11 * MS);
    sgemm(&s, "/opt/torch/lib/libtorch_cuda.so", PID, T0 + 10 * MS + 100, 1024);
    finish(&s, 1);
    struct ka_probe_evidence pr = probe_of(KA_PROBE_DECIDED, 0.0);
    struct ka_options opt = { .weak = KA_WEAK_ACCEPT, .probe = &pr };
    struct ka_analysis *a = analyze(&s, gemm_contract, &opt);
    cr_expect_eq(IMPL(a), KA_FAIL);
    cr_expect(strstr(finding(a, "forbidden-vendor-call")->text, "0 probe baseline windows"), "%s",
              finding(a, "forbidden-vendor-call")->text);
    done(&s, a);
}

Test(probe, forbidden_work_the_output_depends_on_convicts_with_its_counterfactual)
{
    struct scene s;
    struct ka_probe_evidence pr = probe_of(KA_PROBE_DECIDED, 0.8);
    struct ka_analysis *a = probed_gemm(&s, "/opt/torch/lib/libtorch_cuda.so", &pr);
    cr_expect_eq(IMPL(a), KA_FAIL);
    const struct ka_finding *x = finding(a, "forbidden-vendor-call");
    cr_assert(x);
    cr_expect(strstr(x->text, "the output moved by 0.8"), "%s", x->text);
    cr_expect_str_eq(field(x, "channel")->s, "causal-probe");
    cr_expect_float_eq(field(x, "output_change")->d, 0.8, 1e-12);
    cr_expect_eq(field(x, "probe_seed")->u, 7);
    done(&s, a);
}

Test(probe, forbidden_work_the_output_ignores_is_not_a_conviction_nor_a_pass)
{
    struct scene s;
    struct ka_probe_evidence pr = probe_of(KA_PROBE_DECIDED, 0.0);
    struct ka_analysis *a = probed_gemm(&s, "/opt/torch/lib/libtorch_cuda.so", &pr);
    cr_expect_eq(IMPL(a), KA_INCONCLUSIVE, "%s", ka_verdict_name(IMPL(a)));
    cr_expect(!has_finding(a, "forbidden-vendor-call"));
    cr_expect(has_finding(a, "forbidden-work-unused"));
    cr_expect(strstr(a->axis[KA_AXIS_IMPLEMENTATION].root_cause, "does not depend on it"), "%s",
              a->axis[KA_AXIS_IMPLEMENTATION].root_cause);
    done(&s, a);
}

/* The probe's GEMM with the semantic axis decided first, as `kaudit audit` gives it. */
static struct ka_analysis *probed_gemm_after(struct scene *s, const struct ka_probe_evidence *pr, enum ka_verdict sem)
{
    static struct ka_semantic_evidence ev;
    ev = (struct ka_semantic_evidence){ .verdict = sem, .root_cause = sem == KA_PASS ? NULL : "slot 0: test" };
    scene_init(s);
    phase(s, "kaudit:candidate", PID, T0 + 10 * MS, T0 + 11 * MS);
    nvtx(s, KAT_NVTX_PUSH, PID, "kaudit:probe baseline", T0 + 10 * MS + 50);
    sgemm(s, "/opt/torch/lib/libtorch_cuda.so", PID, T0 + 10 * MS + 100, 1024);
    nvtx(s, KAT_NVTX_POP, PID, NULL, T0 + 10 * MS + 900000);
    finish(s, 1);
    struct ka_options opt = { .weak = KA_WEAK_ACCEPT, .probe = pr, .semantic_evidence = &ev };
    return analyze(s, gemm_contract, &opt);
}

/* A candidate that answers zeros while the probe watches: every slot matched, the
   baseline did not; the replays' "no dependence" clears nothing and the axis FAILs. */
Test(probe, a_baseline_unlike_the_reference_convicts_where_every_slot_matched)
{
    struct scene s;
    struct ka_probe_evidence pr = probe_of(KA_PROBE_DECIDED, 0.0);
    pr.baseline = KA_PROBE_BASELINE_MISMATCH;
    pr.baseline_why = "leaf out: 12288 of 12288 elements outside the allowance";
    struct ka_analysis *a = probed_gemm_after(&s, &pr, KA_PASS);
    cr_expect_eq(IMPL(a), KA_FAIL, "%s", ka_verdict_name(IMPL(a)));
    cr_expect(strstr(a->axis[KA_AXIS_IMPLEMENTATION].root_cause, "probe-baseline-mismatch"), "%s",
              a->axis[KA_AXIS_IMPLEMENTATION].root_cause);
    const struct ka_finding *x = finding(a, "probe-baseline-mismatch");
    cr_assert(x);
    cr_expect_eq(x->kind, KA_FINDING_CONVICTS);
    cr_expect(!has_finding(a, "forbidden-work-unused"));
    done(&s, a);
}

/* A candidate wrong on the slots is wrong on the probe's inputs too: no evidence about
   its implementation, but no clearing either (launch provenance convicts the GEMM). */
Test(probe, a_baseline_mismatch_of_a_wrong_candidate_is_a_signal_and_clears_nothing)
{
    struct scene s;
    struct ka_probe_evidence pr = probe_of(KA_PROBE_DECIDED, 0.0);
    pr.baseline = KA_PROBE_BASELINE_MISMATCH;
    pr.baseline_why = "leaf out: 1 of 12288 elements outside the allowance";
    struct ka_analysis *a = probed_gemm_after(&s, &pr, KA_FAIL);
    const struct ka_finding *x = finding(a, "probe-baseline-mismatch");
    cr_assert(x);
    cr_expect_eq(x->kind, KA_FINDING_SIGNAL);
    cr_expect(!has_finding(a, "forbidden-work-unused"));
    cr_expect_eq(IMPL(a), KA_FAIL);
    const struct ka_finding *v = finding(a, "forbidden-vendor-call");
    cr_assert(v);
    cr_expect_str_eq(field(v, "channel")->s, "launch-provenance");
    done(&s, a);
}

/* No tolerance on the probe's inputs (or a runner before the check): the same. */
Test(probe, an_unverified_baseline_clears_nothing)
{
    for (int b = 0; b < 2; b++) {
        struct scene s;
        struct ka_probe_evidence pr = probe_of(KA_PROBE_DECIDED, 0.0);
        pr.baseline = b ? KA_PROBE_BASELINE_UNVERIFIED : KA_PROBE_BASELINE_UNCHECKED;
        pr.baseline_why = "leaf out: the tolerance cannot be calibrated";
        struct ka_analysis *a = probed_gemm_after(&s, &pr, KA_PASS);
        cr_expect_eq(IMPL(a), KA_FAIL, "%s", ka_verdict_name(IMPL(a)));
        const struct ka_finding *x = finding(a, "forbidden-vendor-call");
        cr_assert(x);
        cr_expect(strstr(x->text, "baseline was not checked against the reference"), "%s", x->text);
        cr_expect(!has_finding(a, "forbidden-work-unused"));
        done(&s, a);
    }
}

Test(probe, below_the_framework_launch_provenance_still_convicts)
{
    struct scene s;
    struct ka_probe_evidence pr = probe_of(KA_PROBE_DECIDED, 0.0);
    struct ka_analysis *a = probed_gemm(&s, "/root/.cache/torch_extensions/py312/ext/ext.so", &pr);
    cr_expect_eq(IMPL(a), KA_FAIL);
    const struct ka_finding *x = finding(a, "forbidden-vendor-call");
    cr_assert(x);
    cr_expect_str_eq(field(x, "channel")->s, "launch-provenance");
    cr_expect(!has_finding(a, "forbidden-work-unused"));
    done(&s, a);
}

Test(probe, an_unresolved_probe_leaves_launch_provenance_to_decide)
{
    struct scene s;
    struct ka_probe_evidence pr = probe_of(KA_PROBE_UNRESOLVED, 0.0);
    struct ka_analysis *a = probed_gemm(&s, "/opt/torch/lib/libtorch_cuda.so", &pr);
    cr_expect_eq(IMPL(a), KA_FAIL);
    cr_expect(has_finding(a, "causal-probe-unresolved"));
    cr_expect_str_eq(field(finding(a, "forbidden-vendor-call"), "channel")->s, "launch-provenance");
    done(&s, a);
}

Test(probe, a_class_the_probe_did_not_perturb_keeps_launch_provenance)
{
    struct scene s;
    struct ka_probe_evidence pr = probe_of(KA_PROBE_DECIDED, 0.0);
    pr.classes = 1u << KA_CLASS_REDUCTION; /* the dispatcher saw no gemm operator */
    struct ka_analysis *a = probed_gemm(&s, "/opt/torch/lib/libtorch_cuda.so", &pr);
    cr_expect_eq(IMPL(a), KA_FAIL);
    const struct ka_finding *v = finding(a, "forbidden-vendor-call");
    cr_assert(v);
    cr_expect_str_eq(field(v, "channel")->s, "launch-provenance");
    done(&s, a);
}

/* Without trace axes (kaudit audit --device cpu) the probe alone convicts, or reports unused work. */
Test(probe, without_traces_the_probe_alone_decides)
{
    struct scene s;
    scene_init(&s);
    finish(&s, 1);
    struct ka_probe_evidence pr = probe_of(KA_PROBE_DECIDED, 0.5);
    pr.class_work[KA_CLASS_GEMM] = 2.0 * 1024 * 1024 * 1024; /* the reference's whole work */
    struct ka_options opt = { .probe = &pr, .trace_axes_unsupported = "audited with --device cpu" };
    struct ka_analysis *a = analyze(&s, gemm_contract, &opt);
    cr_expect_eq(IMPL(a), KA_FAIL);
    cr_expect(has_finding(a, "forbidden-work-used"));
    ka_analysis_free(a);
    struct ka_probe_evidence small = probe_of(KA_PROBE_DECIDED, 0.5);
    small.class_work[KA_CLASS_GEMM] = 1024; /* below 5% of the dominant class's work */
    opt.probe = &small;
    a = analyze(&s, gemm_contract, &opt);
    cr_expect_eq(IMPL(a), KA_UNSUPPORTED, "%s", ka_verdict_name(IMPL(a)));
    ka_analysis_free(a);
    struct ka_probe_evidence unused = probe_of(KA_PROBE_DECIDED, 0.0);
    opt.probe = &unused;
    a = analyze(&s, gemm_contract, &opt);
    cr_expect_eq(IMPL(a), KA_UNSUPPORTED);
    cr_expect(has_finding(a, "forbidden-work-unused"));
    done(&s, a);
}

Test(probe, targets_are_the_forbidden_classes_less_the_allowed_epilogues)
{
    struct ka_contract *c = contract(gemm_contract);
    unsigned classes = ka_probe_classes(c);
    cr_expect(classes & (1u << KA_CLASS_GEMM));
    cr_expect(!(classes & (1u << KA_CLASS_ELEMENTWISE)), "the bias epilogue is allowed within its share");
    cr_expect(!(classes & (1u << KA_CLASS_GLUE)));
    char *json = ka_probe_targets_json(c);
    cr_assert(json);
    cr_expect(strstr(json, "\"mm\":\"gemm\"") && strstr(json, "\"addmm\":\"gemm\""), "%s", json);
    cr_expect(strstr(json, "\"cudnn_convolution\"") && strstr(json, "\"conv\"]"), "%s", json);
    cr_expect(!strstr(json, "\"add\":"), "%s", json);
    free(json);
    ka_contract_free(c);
    struct ka_contract *none = contract("{\"kaudit_contract\": 1, \"task_id\": \"t/free\", \"implementation\": "
                                        "{\"self_implemented\": false}}");
    cr_expect_eq(ka_probe_classes(none), 0u);
    cr_expect_null(ka_probe_targets_json(none));
    ka_contract_free(none);
}

/* The vendor-boundary channel: an extension's own cublasSgemm, its output replaced after the call. */
Test(probe, an_extensions_gemm_the_output_depends_on_convicts_by_the_vendor_channel)
{
    struct scene s;
    struct ka_probe_vendor_call call = { KA_PROBE_FAMILY_GEMM, KAT_LIB_CUBLAS, 1024, 1024, 1024, 0.9 };
    struct ka_probe_evidence pr = vendor_probe_of(1, &call);
    struct ka_analysis *a = probed_gemm(&s, "/root/.cache/torch_extensions/py312/ext/ext.so", &pr);
    cr_expect_eq(IMPL(a), KA_FAIL);
    const struct ka_finding *x = finding(a, "forbidden-vendor-call");
    cr_assert(x);
    cr_expect_str_eq(field(x, "channel")->s, "causal-probe-vendor");
    cr_expect_float_eq(field(x, "vendor_output_change")->d, 0.9, 1e-12);
    cr_expect(strstr(x->text, "its calls of this library and shape"), "%s", x->text);
    cr_expect_str_eq(field(x, "vendor_localized")->s, "call");
    done(&s, a);
}

Test(probe, an_extensions_gemm_the_output_ignores_is_not_a_conviction)
{
    struct scene s;
    struct ka_probe_vendor_call call = { KA_PROBE_FAMILY_GEMM, KAT_LIB_CUBLAS, 1024, 1024, 1024, 0.0 };
    struct ka_probe_evidence pr = vendor_probe_of(1, &call);
    struct ka_analysis *a = probed_gemm(&s, "/root/.cache/torch_extensions/py312/ext/ext.so", &pr);
    cr_expect_eq(IMPL(a), KA_INCONCLUSIVE);
    cr_expect(has_finding(a, "forbidden-work-unused"));
    cr_expect(!has_finding(a, "forbidden-vendor-call"));
    done(&s, a);
}

/* An extension's own cuDNN convolution and cuBLASLt GEMM in one call, each replayed alone:
   the convolution the output depends on convicts through the vendor channel, the
   GEMM it throws away is unused (reported, and no certificate). */
static struct ka_analysis *probed_ext_conv_and_lt(struct scene *s, const struct ka_probe_evidence *pr)
{
    const char *ext = "/root/.cache/torch_extensions/py312/ext/ext.so";
    scene_init(s);
    phase(s, "kaudit:candidate", PID, T0 + 10 * MS, T0 + 11 * MS);
    nvtx(s, KAT_NVTX_PUSH, PID, "kaudit:probe baseline", T0 + 10 * MS + 50);
    cudnn_conv(s, ext, PID, T0 + 10 * MS + 100);
    gemm_of(s, KAT_LIB_CUBLASLT, ext, PID, T0 + 10 * MS + 200000, 1536);
    nvtx(s, KAT_NVTX_POP, PID, NULL, T0 + 10 * MS + 900000);
    finish(s, 1);
    struct ka_options opt = { .weak = KA_WEAK_ACCEPT, .probe = pr };
    return analyze(s, gemm_contract, &opt);
}

Test(probe, each_library_call_is_decided_by_its_own_replay)
{
    struct scene s;
    struct ka_probe_vendor_call calls[2] = { { KA_PROBE_FAMILY_CONV, KAT_LIB_CUDNN, 0, 0, 0, 0.7 },
                                             { KA_PROBE_FAMILY_GEMM, KAT_LIB_CUBLASLT, 1536, 1536, 1536, 0.0 } };
    struct ka_probe_evidence pr = vendor_probe_of(2, calls);
    struct ka_analysis *a = probed_ext_conv_and_lt(&s, &pr);
    for (size_t i = 0; i < a->n_findings; i++)
        cr_log_info("%s: %s", a->findings[i].code, a->findings[i].text);
    cr_expect_eq(IMPL(a), KA_FAIL);
    const struct ka_finding *x = finding(a, "forbidden-vendor-call");
    cr_assert(x);
    cr_expect_str_eq(field(x, "channel")->s, "causal-probe-vendor");
    cr_expect_str_eq(field(x, "class")->s, "conv");
    cr_expect_float_eq(field(x, "item_output_change")->d, 0.7, 1e-12);
    const struct ka_finding *u = finding(a, "forbidden-work-unused");
    cr_assert(u, "the discarded cuBLASLt GEMM is unused");
    cr_expect_str_eq(field(u, "vendor_localized")->s, "call");
    done(&s, a);
}

/* Without the one-call replays both calls take the joint change: both convict. */
Test(probe, without_localization_every_library_call_takes_the_joint_change)
{
    struct scene s;
    struct ka_probe_vendor_call calls[2] = { { KA_PROBE_FAMILY_CONV, KAT_LIB_CUDNN, 0, 0, 0, 0.7 },
                                             { KA_PROBE_FAMILY_GEMM, KAT_LIB_CUBLASLT, 1536, 1536, 1536, 0.0 } };
    struct ka_probe_evidence pr = vendor_probe_of(2, calls);
    pr.n_vendor_localized = 0;
    struct ka_analysis *a = probed_ext_conv_and_lt(&s, &pr);
    cr_expect_eq(IMPL(a), KA_FAIL);
    cr_expect(!has_finding(a, "forbidden-work-unused"));
    size_t convicting = 0;
    for (size_t i = 0; i < a->n_findings; i++)
        if (!strcmp(a->findings[i].code, "forbidden-vendor-call")) {
            convicting++;
            cr_expect_str_eq(field(&a->findings[i], "vendor_localized")->s, "every-library-call");
        }
    cr_expect_eq(convicting, 2);
    done(&s, a);
}

/* ATen's own BLAS wrapper called from C++: a framework library call with no operator
   of its class dispatched is the vendor replay's to decide. */
Test(probe, a_framework_library_call_no_operator_dispatched_is_the_vendor_channels)
{
    struct scene s;
    struct ka_probe_vendor_call call = { KA_PROBE_FAMILY_GEMM, KAT_LIB_CUBLAS, 1024, 1024, 1024, 1.2 };
    struct ka_probe_evidence pr = vendor_probe_of(1, &call);
    struct ka_analysis *a = probed_gemm(&s, "/opt/torch/lib/libtorch_cuda.so", &pr);
    cr_expect_eq(IMPL(a), KA_FAIL);
    const struct ka_finding *x = finding(a, "forbidden-vendor-call");
    cr_assert(x);
    cr_expect_str_eq(field(x, "channel")->s, "causal-probe-vendor");
    done(&s, a);
}

/* The trace shows a cuDNN call in the baseline the probe did not count: no "unused". */
Test(probe, a_library_call_the_probe_did_not_count_keeps_launch_provenance)
{
    struct scene s;
    struct ka_probe_vendor_call calls[2] = { { KA_PROBE_FAMILY_CONV, KAT_LIB_CUDNN, 0, 0, 0, 0.7 },
                                             { KA_PROBE_FAMILY_GEMM, KAT_LIB_CUBLASLT, 1536, 1536, 1536, 0.0 } };
    struct ka_probe_evidence pr = vendor_probe_of(2, calls);
    pr.vendor_family_calls[KA_PROBE_FAMILY_GEMM] = 0; /* as if the GEMM was made out of the channel's sight */
    struct ka_analysis *a = probed_ext_conv_and_lt(&s, &pr);
    cr_expect_eq(IMPL(a), KA_FAIL);
    cr_expect(!has_finding(a, "forbidden-work-unused"));
    done(&s, a);
}

/* "Unused" in the probe's replay does not speak for calls of other shapes elsewhere in the
   trace (a candidate that makes a small discarded call while probed, the real one otherwise). */
Test(probe, unused_in_the_replay_does_not_cover_calls_of_other_shapes)
{
    struct scene s;
    scene_init(&s);
    nvtx(&s, KAT_NVTX_PUSH, PID, "kaudit:candidate", T0 + 10 * MS);
    nvtx(&s, KAT_NVTX_PUSH, PID, "kaudit:probe baseline", T0 + 10 * MS + 50);
    sgemm(&s, "/opt/torch/lib/libtorch_cuda.so", PID, T0 + 10 * MS + 100, 1024);
    nvtx(&s, KAT_NVTX_POP, PID, NULL, T0 + 10 * MS + 900000);
    nvtx(&s, KAT_NVTX_POP, PID, NULL, T0 + 11 * MS);
    phase(&s, "kaudit:candidate", PID, T0 + 20 * MS, T0 + 21 * MS);
    sgemm(&s, "/opt/torch/lib/libtorch_cuda.so", PID, T0 + 20 * MS + 100, 2048);
    finish(&s, 1);
    struct ka_probe_evidence pr = probe_of(KA_PROBE_DECIDED, 0.0);
    struct ka_options opt = { .weak = KA_WEAK_ACCEPT, .probe = &pr };
    struct ka_analysis *a = analyze(&s, gemm_contract, &opt);
    cr_expect_eq(IMPL(a), KA_FAIL);
    const struct ka_finding *x = finding(a, "forbidden-vendor-call");
    cr_assert(x);
    cr_expect(strstr(x->text, "2048 x 2048 x 2048 call the probe's baseline replay did not make"), "%s", x->text);
    cr_expect(has_finding(a, "forbidden-work-unused"), "the replay's own call is still unused");
    done(&s, a);
}
