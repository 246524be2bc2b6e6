/*
 * test_run_mixed.c - `kaudit run` on a harness-like program (prog_mixed) on
 * the stand-in CUDA stack: its own kernels (one named like a cuBLAS kernel),
 * cuBLAS, cuBLASLt, cuDNN (legacy and v9 backend), events, two streams.
 *
 * The stand-ins log every launch, module and elapsed-time result they
 * produced (STANDIN_LAUNCH_LOG); the tests compare the recorded session with
 * that ground truth.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "run_helpers.h"

#define PROG PROGRAMS_DIR "/prog_mixed"

/* cudaDataType / cublasComputeType_t / cudnnDataType_t values (from the real
 * headers; repeated so these tests do not need them). */
#define CUDA_R_32F_ 0
#define CUDA_R_16BF_ 14
#define CUBLAS_COMPUTE_32F_ 68
#define CUBLASLT_EPILOGUE_BIAS_ 4
#define CUDNN_DATA_FLOAT_ 0

struct mixed {
    char *dir, *session, *log;
    struct rh_run run;
    struct rh_session s;
    struct rh_truth gt;
    const struct rh_trace *t;
};

static void mixed_run_env(struct mixed *m, int print_elapsed, const char *const extra[]);

static void mixed_run(struct mixed *m, int print_elapsed)
{
    mixed_run_env(m, print_elapsed, NULL);
}

static void mixed_run_env(struct mixed *m, int print_elapsed, const char *const extra[])
{
    memset(m, 0, sizeof *m);
    m->dir = rh_tmpdir("mixed");
    cr_assert_not_null(m->dir);
    m->session = rh_path(m->dir, "session");
    m->log = rh_path(m->dir, "truth.log");
    char *argv[] = { PROG, print_elapsed ? "--print-elapsed" : NULL, NULL };
    cr_assert_eq(rh_run_kaudit(m->session, STANDIN_DIR, m->log, argv, extra, &m->run), 0);
    cr_assert_eq(m->run.status, 0, "kaudit run -- prog_mixed: status %#x, stderr:\n%s", m->run.status,
                 m->run.err);
    char err[512];
    cr_assert_eq(rh_session_load(m->session, &m->s, err, sizeof err), 0, "%s", err);
    cr_assert_eq(rh_truth_load(m->log, &m->gt), 0);
    cr_assert_gt(m->gt.nkernels, 10, "the stand-ins logged %zu launches", m->gt.nkernels);
    cr_assert_eq(m->s.ntraces, 1, "%s", rh_describe(&m->s));
    m->t = &m->s.traces[0];
    cr_assert(rh_readable(m->t), "%s: %s", m->t->name, m->t->error);
}

static void mixed_free(struct mixed *m)
{
    rh_session_free(&m->s);
    rh_truth_free(&m->gt);
    rh_run_free(&m->run);
    free(m->session);
    free(m->log);
    rh_cleanup(m->dir);
}

static int ends_with(const char *s, const char *suffix)
{
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && strcmp(s + a - b, suffix) == 0;
}

Test(mixed, every_kernel_is_traced_with_stream_correlation_and_vendor_window, .timeout = 240)
{
    struct mixed m;
    mixed_run(&m, 0);
    cr_expect_eq(rh_check_kernels(&m.s, &m.gt, 0), 0, "%s", rh_describe(&m.s));

    /* The program's own GEMM is named like a cuBLAS kernel: it is traced,
     * and it is not in a vendor window (it ran between two cuBLAS calls). */
    size_t found = 0;
    for (size_t i = 0; i < m.gt.nkernels; i++) {
        const struct gt_kernel *g = &m.gt.kernels[i];
        if (strcmp(g->name, "sm80_xmma_gemm_f32f32_like_custom") != 0)
            continue;
        found++;
        cr_expect_str_eq(g->vendor, "-");
        cr_expect_not_null(rh_kernel(m.t, g->correlation_id, g->name));
        int windows = -1;
        cr_expect_eq(rh_vendor_window(m.t, g->correlation_id, &windows), 0);
        cr_expect_eq(windows, 0, "the custom vendor-named kernel sits in %d vendor window(s)", windows);
    }
    cr_expect_eq(found, 1);
    mixed_free(&m);
}

struct gemm_expect {
    const char *api;
    uint32_t library, work;
    int64_t m, n, k, batch;
    int32_t ta, tb, type_a, type_c, compute, epilogue;
    int64_t stride_a, stride_b, stride_c;
};

static const struct gemm_expect gemms[] = {
    { "cublasSgemm_v2", KAT_LIB_CUBLAS, KAT_WORK_GEMM, 64, 32, 16, 1, 0, 0, CUDA_R_32F_, CUDA_R_32F_, -1, -1, 0, 0, 0 },
    { "cublasGemmEx", KAT_LIB_CUBLAS, KAT_WORK_GEMM, 48, 8, 32, 1, 1, 0, CUDA_R_16BF_, CUDA_R_32F_, CUBLAS_COMPUTE_32F_,
      -1, 0, 0, 0 },
    { "cublasSgemmStridedBatched", KAT_LIB_CUBLAS, KAT_WORK_GEMM, 16, 16, 8, 3, 0, 0, CUDA_R_32F_, CUDA_R_32F_, -1, -1,
      16 * 8, 8 * 16, 16 * 16 },
    { "cublasSgemv_v2", KAT_LIB_CUBLAS, KAT_WORK_GEMV, 40, 1, 24, 1, 0, 0, CUDA_R_32F_, CUDA_R_32F_, -1, -1, 0, 0, 0 },
    { "cublasLtMatmul", KAT_LIB_CUBLASLT, KAT_WORK_GEMM, 32, 16, 24, 1, 1, 0, CUDA_R_32F_, CUDA_R_32F_,
      CUBLAS_COMPUTE_32F_, CUBLASLT_EPILOGUE_BIAS_, 0, 0, 0 },
};

struct conv_expect {
    const char *api;
    int64_t n, c, k, in[2], filter[2], out[2];
    int32_t pad[2], stride[2], dilation[2], groups;
};

static const struct conv_expect convs[] = {
    { "cudnnConvolutionForward", 2, 3, 4, { 8, 8 }, { 3, 3 }, { 8, 8 }, { 1, 1 }, { 1, 1 }, { 1, 1 }, 1 },
    { "cudnnBackendExecute", 1, 2, 3, { 6, 6 }, { 3, 3 }, { 4, 4 }, { 0, 0 }, { 1, 1 }, { 1, 1 }, 1 },
};

/* The common fields: thread, caller, depth, status, times. */
static void expect_common(const struct mixed *m, const struct kat_vendor_call_rec *v, const char *api)
{
    const char *caller = rh_str(m->t, v->caller_string);
    cr_expect(ends_with(caller, "/prog_mixed"), "%s: caller object '%s', expected the program", api, caller);
    cr_expect_eq(v->depth, 1, "%s: depth %u", api, v->depth);
    cr_expect_eq(v->status, 0, "%s: status %d", api, v->status);
    cr_expect_leq(v->enter_ns, v->exit_ns, "%s: entered after it returned", api);
    cr_expect_neq(v->call_id, 0);
    cr_expect_eq(v->summary_known, 1, "%s: no operation summary", api);
    /* the thread that made the call, per the stand-in */
    int seen = 0;
    for (size_t i = 0; i < m->gt.nvendor; i++)
        if (!strcmp(m->gt.vendor[i].api, api)) {
            seen = 1;
            cr_expect_eq(v->thread_id, m->gt.vendor[i].tid, "%s: thread %u, called on %u", api, v->thread_id,
                         m->gt.vendor[i].tid);
            break;
        }
    cr_expect(seen, "the stand-in never saw %s", api);
}

Test(mixed, vendor_call_records_describe_each_call, .timeout = 240)
{
    struct mixed m;
    mixed_run(&m, 0);
    for (size_t i = 0; i < sizeof gemms / sizeof gemms[0]; i++) {
        const struct gemm_expect *e = &gemms[i];
        const struct kat_vendor_call_rec *v = rh_vendor_call_by_api(m.t, e->api, NULL);
        cr_expect_not_null(v, "no VENDOR_CALL record for %s", e->api);
        if (!v)
            continue;
        expect_common(&m, v, e->api);
        const struct kat_gemm_summary *g = &v->op.gemm;
        cr_expect_eq(v->library, e->library, "%s: library %u", e->api, v->library);
        cr_expect_eq(v->work_class, e->work, "%s: work class %u", e->api, v->work_class);
        cr_expect_eq(v->dtype_space, KAT_DTYPE_SPACE_CUDA, "%s: dtype space %u", e->api, v->dtype_space);
        cr_expect(g->m == e->m && g->n == e->n && g->k == e->k,
                  "%s: m=%lld n=%lld k=%lld recorded, the call had %lld %lld %lld", e->api, (long long)g->m,
                  (long long)g->n, (long long)g->k, (long long)e->m, (long long)e->n, (long long)e->k);
        cr_expect_eq(g->batch, e->batch, "%s: batch %lld", e->api, (long long)g->batch);
        cr_expect(g->trans_a == e->ta && g->trans_b == e->tb, "%s: transposes %d %d", e->api, g->trans_a,
                  g->trans_b);
        cr_expect(g->type_a == e->type_a && g->type_c == e->type_c, "%s: types A %d C %d", e->api, g->type_a,
                  g->type_c);
        if (e->compute >= 0)
            cr_expect_eq(g->compute_type, e->compute, "%s: compute type %d", e->api, g->compute_type);
        if (e->epilogue >= 0)
            cr_expect_eq(g->epilogue, e->epilogue, "%s: epilogue %d", e->api, g->epilogue);
        if (e->batch > 1)
            cr_expect(g->stride_a == e->stride_a && g->stride_b == e->stride_b && g->stride_c == e->stride_c,
                      "%s: strides %lld %lld %lld", e->api, (long long)g->stride_a, (long long)g->stride_b,
                      (long long)g->stride_c);
        uint64_t out_elements = (uint64_t)e->m * (uint64_t)e->n * (uint64_t)e->batch;
        cr_expect_neq(v->output_address, 0, "%s: no output address", e->api);
        cr_expect_geq(v->output_bytes, out_elements * 4, "%s: output extent %llu bytes", e->api,
                      (unsigned long long)v->output_bytes);
    }
    for (size_t i = 0; i < sizeof convs / sizeof convs[0]; i++) {
        const struct conv_expect *e = &convs[i];
        const struct kat_vendor_call_rec *v = rh_vendor_call_by_api(m.t, e->api, NULL);
        cr_expect_not_null(v, "no VENDOR_CALL record for %s", e->api);
        if (!v)
            continue;
        expect_common(&m, v, e->api);
        const struct kat_conv_summary *c = &v->op.conv;
        cr_expect_eq(v->library, KAT_LIB_CUDNN);
        cr_expect_eq(v->work_class, KAT_WORK_CONV, "%s: work class %u", e->api, v->work_class);
        cr_expect_eq(v->dtype_space, KAT_DTYPE_SPACE_CUDNN);
        cr_expect_eq(c->direction, KAT_CONV_FORWARD);
        cr_expect_eq(c->spatial_dims, 2, "%s: %d spatial dims", e->api, c->spatial_dims);
        cr_expect(c->n == e->n && c->c == e->c && c->k == e->k, "%s: n=%lld c=%lld k=%lld", e->api,
                  (long long)c->n, (long long)c->c, (long long)c->k);
        for (int d = 0; d < 2; d++) {
            cr_expect(c->in_spatial[d] == e->in[d] && c->filter_spatial[d] == e->filter[d] &&
                          c->out_spatial[d] == e->out[d],
                      "%s: dim %d in %lld filter %lld out %lld", e->api, d, (long long)c->in_spatial[d],
                      (long long)c->filter_spatial[d], (long long)c->out_spatial[d]);
            cr_expect(c->pad[d] == e->pad[d] && c->stride[d] == e->stride[d] && c->dilation[d] == e->dilation[d],
                      "%s: dim %d pad %d stride %d dilation %d", e->api, d, c->pad[d], c->stride[d], c->dilation[d]);
        }
        cr_expect_eq(c->groups, e->groups, "%s: groups %d", e->api, c->groups);
        cr_expect_eq(c->data_type, CUDNN_DATA_FLOAT_, "%s: data type %d", e->api, c->data_type);
        if (i == 0) { /* the backend's output: see backend_execute_records_its_output */
            uint64_t bytes = (uint64_t)e->n * e->k * e->out[0] * e->out[1] * 4;
            cr_expect_eq(v->output_bytes, bytes, "%s: output %llu bytes, y is %llu", e->api,
                         (unsigned long long)v->output_bytes, (unsigned long long)bytes);
            cr_expect_neq(v->output_address, 0);
        }
    }
    /* one record per call the stand-ins saw, in the same order */
    size_t cursor = 0;
    for (size_t i = 0; i < m.gt.nvendor; i++) {
        const struct kat_vendor_call_rec *v = rh_vendor_call_by_api(m.t, m.gt.vendor[i].api, &cursor);
        cr_expect_not_null(v, "vendor call %zu (%s) has no record after the previous one", i, m.gt.vendor[i].api);
    }
    mixed_free(&m);
}

Test(mixed, output_and_status_identical_without_kaudit, .timeout = 240)
{
    struct mixed m;
    mixed_run(&m, 0);
    struct rh_run plain;
    char *argv[] = { PROG, NULL };
    cr_assert_eq(rh_run_plain(STANDIN_DIR, NULL, argv, NULL, &plain), 0);
    cr_assert_eq(plain.status, 0, "prog_mixed alone: status %#x\n%s", plain.status, plain.err);
    cr_expect_str_eq(m.run.out, plain.out, "stdout differs under kaudit:\n--- kaudit run\n%s--- alone\n%s",
                     m.run.out, plain.out);
    /* kaudit says nothing on a successful run, and the preload never writes:
     * stderr is byte for byte the program's */
    cr_expect_str_eq(m.run.err, plain.err, "stderr differs under kaudit:\n%s--- alone:\n%s", m.run.err, plain.err);
    cr_expect_eq(m.run.status, plain.status);
    /* nothing of kaudit's in the program's stdout */
    cr_expect_null(strstr(m.run.out, "kaudit"), "kaudit wrote into the program's stdout");
    rh_run_free(&plain);
    mixed_free(&m);
}

/* Issue 2 asks for the output buffer of every vendor call; for the v9 backend
 * it is the variant pack's pointer for the Y tensor of the plan's graph. */
Test(mixed, backend_execute_records_its_output, .timeout = 240)
{
    struct mixed m;
    mixed_run(&m, 0);
    const struct kat_vendor_call_rec *v = rh_vendor_call_by_api(m.t, "cudnnBackendExecute", NULL);
    cr_assert_not_null(v);
    cr_expect_neq(v->output_address, 0, "cudnnBackendExecute: no output address");
    cr_expect_eq(v->output_bytes, 1 * 3 * 4 * 4 * 4, "cudnnBackendExecute: output %llu bytes, y is 192",
                 (unsigned long long)v->output_bytes);
    mixed_free(&m);
}

static const struct kat_timing_call_rec *timing(const struct rh_trace *t, uint32_t api, size_t *count, size_t nth)
{
    const struct kat_timing_call_rec *found = NULL;
    size_t n = 0;
    for (size_t i = 0; i < t->nrecs; i++) {
        if (t->recs[i].type != KAT_REC_TIMING_CALL)
            continue;
        const struct kat_timing_call_rec *c = t->recs[i].body;
        if (c->api != api)
            continue;
        if (n == nth)
            found = c;
        n++;
    }
    if (count)
        *count = n;
    return found;
}

Test(mixed, timing_calls_carry_what_the_program_saw, .timeout = 240)
{
    struct mixed m;
    mixed_run(&m, 1);
    const char *line = strstr(m.run.out, "elapsed_ms=");
    cr_assert_not_null(line, "prog_mixed printed no elapsed time:\n%s", m.run.out);
    unsigned bits = 0;
    double printed = 0;
    cr_assert_eq(sscanf(line, "elapsed_ms=%lf bits=%x", &printed, &bits), 2);

    size_t n = 0;
    const struct kat_timing_call_rec *el = timing(m.t, KAT_TIMING_EVENT_ELAPSED, &n, 0);
    cr_assert_eq(n, 1, "%zu EVENT_ELAPSED timing records for one cudaEventElapsedTime", n);
    uint32_t rec_bits;
    memcpy(&rec_bits, &el->elapsed_ms, 4);
    cr_expect_eq(rec_bits, bits, "elapsed %.9g (%08x) recorded, the program got %.9g (%08x)", (double)el->elapsed_ms,
                 rec_bits, printed, bits);
    cr_expect_eq(el->status, 0);
    cr_expect_eq(el->domain, KAT_API_RUNTIME);
    cr_assert_eq(m.gt.nelapsed, 1);
    cr_expect_eq(m.gt.elapsed[0].bits, bits, "the stand-in driver returned %08x", m.gt.elapsed[0].bits);
    cr_expect_eq(el->thread_id, m.gt.elapsed[0].tid);

    /* the three events: start and stop on s1 bracket the elapsed time, mid
     * (created without timing) orders s2 after s1 */
    size_t nrec = 0, ncreate = 0, nwait = 0;
    const struct kat_timing_call_rec *rec_start = timing(m.t, KAT_TIMING_EVENT_RECORD, &nrec, 0);
    const struct kat_timing_call_rec *rec_stop = timing(m.t, KAT_TIMING_EVENT_RECORD, NULL, 1);
    const struct kat_timing_call_rec *rec_mid = timing(m.t, KAT_TIMING_EVENT_RECORD, NULL, 2);
    cr_assert_eq(nrec, 3, "%zu EVENT_RECORD timing records, the program recorded 3 events", nrec);
    cr_expect_eq(el->event, rec_start->event, "elapsed start event %#llx, first recorded %#llx",
                 (unsigned long long)el->event, (unsigned long long)rec_start->event);
    cr_expect_eq(el->event2, rec_stop->event);
    cr_expect_neq(rec_start->stream, 0, "the events were recorded on a created stream");
    cr_expect_eq(rec_start->stream, rec_stop->stream);
    cr_expect_eq(rec_mid->stream, rec_start->stream);
    timing(m.t, KAT_TIMING_EVENT_CREATE, &ncreate, 0);
    cr_expect_eq(ncreate, 3, "%zu EVENT_CREATE records", ncreate);
    int disable_timing_seen = 0;
    for (size_t i = 0; i < ncreate; i++) {
        const struct kat_timing_call_rec *c = timing(m.t, KAT_TIMING_EVENT_CREATE, NULL, i);
        if (c->event == rec_mid->event)
            disable_timing_seen = c->flags == 2 /* cudaEventDisableTiming */;
    }
    cr_expect(disable_timing_seen, "the creation flags of the untimed event were not recorded");
    const struct kat_timing_call_rec *wait = timing(m.t, KAT_TIMING_STREAM_WAIT_EVENT, &nwait, 0);
    cr_assert_eq(nwait, 1, "%zu STREAM_WAIT_EVENT records", nwait);
    cr_expect_eq(wait->event, rec_mid->event);
    cr_expect_neq(wait->stream, rec_start->stream, "cudaStreamWaitEvent waited on the second stream");
    size_t nsync_stream = 0, nsync_event = 0, nsync_device = 0, ncreate_stream = 0;
    const struct kat_timing_call_rec *ss = timing(m.t, KAT_TIMING_STREAM_SYNCHRONIZE, &nsync_stream, 0);
    const struct kat_timing_call_rec *es = timing(m.t, KAT_TIMING_EVENT_SYNCHRONIZE, &nsync_event, 0);
    timing(m.t, KAT_TIMING_DEVICE_SYNCHRONIZE, &nsync_device, 0);
    timing(m.t, KAT_TIMING_STREAM_CREATE, &ncreate_stream, 0);
    cr_expect_eq(nsync_stream, 1);
    cr_expect_eq(nsync_event, 1);
    if (ss)
        cr_expect_eq(ss->stream, wait->stream);
    if (es)
        cr_expect_eq(es->event, rec_stop->event);
    /* the program's cudaDeviceSynchronize, and cublasDestroy's inside libcublas */
    cr_expect_geq(nsync_device, 1);
    cr_expect_eq(ncreate_stream, 2);
    int nonblocking = 0;
    for (size_t i = 0; i < ncreate_stream; i++) {
        const struct kat_timing_call_rec *c = timing(m.t, KAT_TIMING_STREAM_CREATE, NULL, i);
        if (c->stream == wait->stream)
            nonblocking = c->flags == 1 /* cudaStreamNonBlocking */;
    }
    cr_expect(nonblocking, "the second stream's creation flags were not recorded");

    /* By default no CUDA_EVENT or SYNCHRONIZATION activity (their cost on
     * every launch, preload/cupti_kinds.c): each event record, stream wait
     * and stream synchronization carries CUPTI's id of its stream instead,
     * the id the stand-in driver gave that stream. */
    cr_expect_eq(rh_count(m.t, KAT_REC_CUDA_EVENT), 0, "CUDA_EVENT records without KAUDIT_EXACT_EVENT_TIMES");
    cr_expect_eq(rh_count(m.t, KAT_REC_SYNC), 0, "SYNC records without KAUDIT_EXACT_EVENT_TIMES");
    cr_assert_eq(m.gt.nevents, 3, "the stand-in driver logged %zu event records", m.gt.nevents);
    for (size_t i = 0; i < m.gt.nevents; i++) {
        const struct kat_timing_call_rec *r = NULL;
        for (size_t k = 0; k < nrec; k++) {
            const struct kat_timing_call_rec *c = timing(m.t, KAT_TIMING_EVENT_RECORD, NULL, k);
            if (c->correlation_id == m.gt.events[i].correlation_id)
                r = c;
        }
        cr_expect_not_null(r, "no EVENT_RECORD timing record with correlation %u", m.gt.events[i].correlation_id);
        if (r)
            cr_expect_eq(r->stream_id_plus_one, m.gt.events[i].stream_id + 1,
                         "event record (correlation %u): stream id %u + 1 recorded, the driver used %u",
                         r->correlation_id, r->stream_id_plus_one - 1, m.gt.events[i].stream_id);
    }
    cr_expect_neq(wait->stream_id_plus_one, 0, "the stream wait carries no stream id");
    cr_expect_neq(wait->stream_id_plus_one, rec_start->stream_id_plus_one, "the wait is on the second stream");
    if (ss)
        cr_expect_eq(ss->stream_id_plus_one, wait->stream_id_plus_one);
    mixed_free(&m);
}

/* With KAUDIT_EXACT_EVENT_TIMES=1 the CUDA_EVENT and SYNCHRONIZATION activity
 * kinds are on: the exact GPU time of every event record. */
Test(mixed, exact_event_times_bring_cuda_event_and_sync_records, .timeout = 240)
{
    struct mixed m;
    const char *const extra[] = { "KAUDIT_EXACT_EVENT_TIMES=1", NULL };
    mixed_run_env(&m, 1, extra);

    /* CUPTI's CUDA_EVENT records match the events the driver recorded */
    size_t ncuda_events = rh_count(m.t, KAT_REC_CUDA_EVENT);
    cr_expect_eq(ncuda_events, m.gt.nevents, "%zu CUDA_EVENT records, %zu events recorded", ncuda_events,
                 m.gt.nevents);
    for (size_t i = 0; i < m.gt.nevents; i++) {
        int ok = 0;
        for (size_t j = 0; j < m.t->nrecs; j++) {
            if (m.t->recs[j].type != KAT_REC_CUDA_EVENT)
                continue;
            const struct kat_cuda_event_rec *e = m.t->recs[j].body;
            ok |= e->event_id == m.gt.events[i].event_id && e->stream_id == m.gt.events[i].stream_id &&
                  e->correlation_id == m.gt.events[i].correlation_id;
        }
        cr_expect(ok, "event %u recorded on stream %u (correlation %u) has no CUDA_EVENT record",
                  m.gt.events[i].event_id, m.gt.events[i].stream_id, m.gt.events[i].correlation_id);
    }
    /* SYNCHRONIZATION records: the event sync, the stream wait, the stream sync, context syncs */
    int sync_types[5] = { 0 };
    for (size_t j = 0; j < m.t->nrecs; j++) {
        if (m.t->recs[j].type != KAT_REC_SYNC)
            continue;
        const struct kat_sync_rec *s = m.t->recs[j].body;
        if (s->type < 5)
            sync_types[s->type]++;
    }
    cr_expect(sync_types[1] == 1 && sync_types[2] == 1 && sync_types[3] == 1 && sync_types[4] >= 1,
              "SYNC records by type: event %d, wait %d, stream %d, context %d", sync_types[1], sync_types[2],
              sync_types[3], sync_types[4]);
    mixed_free(&m);
}

Test(mixed, modules_are_recorded_with_their_loader_and_window, .timeout = 240)
{
    struct mixed m;
    mixed_run(&m, 0);
    size_t nmod = rh_count(m.t, KAT_REC_MODULE);
    cr_expect_eq(nmod, m.gt.nmodules, "%zu MODULE records, the driver loaded %zu modules", nmod, m.gt.nmodules);
    int digests = rh_health(m.t, KAT_HEALTH_DIGEST_UNAVAILABLE) == NULL;
    for (size_t i = 0; i < m.gt.nmodules; i++) {
        const struct gt_module *g = &m.gt.modules[i];
        const struct kat_module_rec *rec = NULL;
        for (size_t j = 0; j < m.t->nrecs; j++)
            if (m.t->recs[j].type == KAT_REC_MODULE &&
                ((const struct kat_module_rec *)m.t->recs[j].body)->module_id == g->module_id)
                rec = m.t->recs[j].body;
        cr_expect_not_null(rec, "module %u (%llu bytes) has no MODULE record", g->module_id,
                           (unsigned long long)g->size);
        if (!rec)
            continue;
        cr_expect_eq(rec->size, g->size, "module %u: %llu bytes recorded, %llu loaded", g->module_id,
                     (unsigned long long)rec->size, (unsigned long long)g->size);
        if (digests)
            cr_expect(rec->digest_lo || rec->digest_hi, "module %u has no digest", g->module_id);
        cr_expect_eq(rec->thread_id, g->tid);
        const char *loader = rh_str(m.t, rec->loader_string);
        if (strcmp(g->vendor, "-") == 0) {
            cr_expect_eq(rec->vendor_call_id, 0, "module %u loaded outside vendor calls has vendor call %llu",
                         g->module_id, (unsigned long long)rec->vendor_call_id);
            cr_expect(ends_with(loader, "/prog_mixed"), "module %u: loader '%s'", g->module_id, loader);
            cr_expect_eq(rec->image_kind, KAT_IMAGE_FATBIN, "module %u: image kind %u", g->module_id, rec->image_kind);
        } else {
            const struct kat_vendor_call_rec *v = rh_vendor_call(m.t, rec->vendor_call_id);
            cr_expect_not_null(v, "module %u loaded inside %s: vendor call id %llu", g->module_id, g->vendor,
                               (unsigned long long)rec->vendor_call_id);
            if (v)
                cr_expect_str_eq(rh_str(m.t, v->api_string), g->vendor);
            const char *lib = !strncmp(g->vendor, "cublasLt", 8) ? "/libcublasLt.so.13"
                              : !strncmp(g->vendor, "cublas", 6) ? "/libcublas.so.13"
                                                                 : "/libcudnn.so.9";
            cr_expect(ends_with(loader, lib), "module %u loaded inside %s: loader '%s'", g->module_id, g->vendor,
                      loader);
        }
    }
    mixed_free(&m);
}

Test(mixed, health_versions_and_process_records, .timeout = 240)
{
    struct mixed m;
    mixed_run(&m, 0);
    const struct rh_trace *t = m.t;
    cr_expect_not_null(rh_health(t, KAT_HEALTH_PRELOAD_LOADED));
    cr_expect_not_null(rh_health(t, KAT_HEALTH_INJECTION_CALLED), "the driver's injection call left no record");
    cr_expect_eq(m.gt.injections, 1, "the stand-in driver loaded the injection %zu times", m.gt.injections);
    const struct kat_health_rec *lib = rh_health(t, KAT_HEALTH_CUPTI_LIBRARY);
    cr_assert_not_null(lib);
    cr_expect_str_eq(rh_str(t, lib->detail_string), STANDIN_DIR "/libcupti.so.13");
    const struct kat_health_rec *ver = rh_health(t, KAT_HEALTH_CUPTI_VERSION);
    cr_assert_not_null(ver);
    cr_expect_eq(ver->value, 130001);
    const struct kat_health_rec *sub = rh_health(t, KAT_HEALTH_CUPTI_SUBSCRIBE);
    cr_assert_not_null(sub);
    cr_expect_eq(sub->value, 0, "cuptiSubscribe returned %lld", (long long)sub->value);
    cr_expect_null(rh_health(t, KAT_HEALTH_CUPTI_ENABLE_FAILED), "an activity kind could not be enabled: %s",
                   rh_health(t, KAT_HEALTH_CUPTI_ENABLE_FAILED)
                       ? rh_str(t, rh_health(t, KAT_HEALTH_CUPTI_ENABLE_FAILED)->detail_string) : "");
    cr_expect_null(rh_health(t, KAT_HEALTH_SYMBOL_UNRESOLVED), "unresolved: %s",
                   rh_health(t, KAT_HEALTH_SYMBOL_UNRESOLVED)
                       ? rh_str(t, rh_health(t, KAT_HEALTH_SYMBOL_UNRESOLVED)->detail_string) : "");
    cr_expect_null(rh_health(t, KAT_HEALTH_CUPTI_NOT_FOUND));
    cr_expect_null(rh_health(t, KAT_HEALTH_FOREIGN_SUBSCRIBER));
    const struct kat_health_rec *dropped = rh_health(t, KAT_HEALTH_CUPTI_DROPPED);
    cr_expect_null(dropped, "CUPTI dropped %lld records", dropped ? (long long)dropped->value : 0LL);

    const struct kat_versions_rec *versions = NULL;
    const struct kat_device_rec *device = NULL;
    for (size_t i = 0; i < t->nrecs; i++) {
        if (t->recs[i].type == KAT_REC_VERSIONS)
            versions = t->recs[i].body;
        if (t->recs[i].type == KAT_REC_DEVICE)
            device = t->recs[i].body;
    }
    cr_assert_not_null(versions);
    cr_expect_eq(versions->driver_version, 13000);
    cr_expect_eq(versions->runtime_version, 13000);
    cr_expect_eq(versions->cupti_version, 130001);
    cr_assert_not_null(device, "no DEVICE record");
    cr_expect_str_eq(rh_str(t, device->name_string), "NVIDIA H200 (KernelAudit stand-in)");
    cr_expect(device->cc_major == 9 && device->cc_minor == 0);

    /* API records: every kernel's correlation id belongs to the API call that launched it */
    for (size_t i = 0; i < m.gt.nkernels; i++) {
        int api = 0;
        for (size_t j = 0; j < t->nrecs; j++)
            if (t->recs[j].type == KAT_REC_API &&
                ((const struct kat_api_rec *)t->recs[j].body)->correlation_id == m.gt.kernels[i].correlation_id)
                api++;
        cr_expect_eq(api, 1, "kernel %s: %d API records with its correlation id %u", m.gt.kernels[i].name, api,
                     m.gt.kernels[i].correlation_id);
    }

    /* the process: start, the program's command line, a proper end */
    cr_assert_not_null(t->start);
    cr_expect_str_eq(rh_str_elem(t, t->start->argv_string, 0), PROG);
    cr_expect_eq(t->start->origin, KAT_ORIGIN_EXEC);
    cr_expect(t->complete, "the trace of a process that returned from main is not complete");
    cr_assert_not_null(t->end);
    cr_expect_eq(t->end->kind, KAT_END_EXIT);
    cr_expect(t->end->flags & KAT_END_FLAG_STATUS_KNOWN);
    cr_expect_eq(t->end->status, 0);
    cr_expect_eq(t->end->records_lost, 0);

    /* the libraries the program used, with their sonames */
    const char *sonames[] = { "libcudart.so.13", "libcublas.so.13", "libcublasLt.so.13", "libcudnn.so.9",
                              "libcuda.so.1", "libcupti.so.13" };
    for (size_t k = 0; k < sizeof sonames / sizeof sonames[0]; k++) {
        int found = 0;
        for (size_t j = 0; j < t->nrecs; j++) {
            if (t->recs[j].type != KAT_REC_LIBRARY)
                continue;
            const struct kat_library_rec *l = t->recs[j].body;
            if (!strcmp(rh_str(t, l->soname_string), sonames[k])) {
                found = 1;
                cr_expect(!strncmp(rh_str(t, l->path_string), STANDIN_DIR "/", strlen(STANDIN_DIR) + 1),
                          "%s from %s", sonames[k], rh_str(t, l->path_string));
            }
        }
        cr_expect(found, "no LIBRARY record for %s", sonames[k]);
    }
    mixed_free(&m);
}

/*
 * The cublasLtMatmul wrapper keeps what the descriptor getters said under a
 * copy of the descriptors' bytes (preload/vendor_cublaslt.c).  prog_lt_cache
 * repeats, changes (through setters) and recreates its descriptors; every
 * record must describe the call as it was made, with the cache and without.
 */
static void lt_summaries_follow_descriptors(const char *const extra[])
{
    char *dir = rh_tmpdir("ltcache");
    cr_assert_not_null(dir);
    char *session = rh_path(dir, "session"), *log = rh_path(dir, "truth.log");
    char *argv[] = { PROGRAMS_DIR "/prog_lt_cache", NULL };
    struct rh_run run;
    cr_assert_eq(rh_run_kaudit(session, STANDIN_DIR, log, argv, extra, &run), 0);
    cr_assert_eq(run.status, 0, "kaudit run -- prog_lt_cache: status %#x, stderr:\n%s", run.status, run.err);
    struct rh_session s;
    char err[512];
    cr_assert_eq(rh_session_load(session, &s, err, sizeof err), 0, "%s", err);
    cr_assert_eq(s.ntraces, 1, "%s", rh_describe(&s));
    const struct rh_trace *t = &s.traces[0];
    size_t cursor = 0, calls = 0;
    const char *line = run.out;
    int m, n, k, ldc, ta, used;
    while (sscanf(line, "lt %d %d %d %d %d\n%n", &m, &n, &k, &ldc, &ta, &used) == 5) {
        line += used;
        const struct kat_vendor_call_rec *v = rh_vendor_call_by_api(t, "cublasLtMatmul", &cursor);
        cr_assert_not_null(v, "call %zu has no record", calls);
        const struct kat_gemm_summary *g = &v->op.gemm;
        cr_expect(v->summary_known, "call %zu: no summary", calls);
        cr_expect(g->m == m && g->n == n && g->k == k && g->ldc == ldc && g->trans_a == ta,
                  "call %zu: recorded m=%lld n=%lld k=%lld ldc=%lld trans_a=%d, the call had %d %d %d %d %d", calls,
                  (long long)g->m, (long long)g->n, (long long)g->k, (long long)g->ldc, g->trans_a, m, n, k, ldc,
                  ta);
        calls++;
    }
    cr_expect_eq(calls, 14, "the program printed %zu calls:\n%s", calls, run.out);
    cr_expect_null(rh_vendor_call_by_api(t, "cublasLtMatmul", &cursor), "more records than calls");
    rh_session_free(&s);
    rh_run_free(&run);
    free(session);
    free(log);
    rh_cleanup(dir);
}

Test(mixed, lt_summaries_follow_descriptor_bytes, .timeout = 240)
{
    lt_summaries_follow_descriptors(NULL);
}

Test(mixed, lt_summaries_without_the_cache, .timeout = 240)
{
    const char *const extra[] = { "KAUDIT_LT_SUMMARY_CACHE=0", NULL };
    lt_summaries_follow_descriptors(extra);
}
