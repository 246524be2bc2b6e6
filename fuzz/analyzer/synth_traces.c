/*
 * synth_traces.c - small synthetic process traces that reach most of the
 * analysis (phases, vendor calls and their kernels, timed windows, modules,
 * threads, forks, harness marks, tool health, build tools, truncation, stop
 * events bounded from stream order).
 * Used as fuzz seeds (mkseeds.c) and as the fixed session fuzz_contract
 * analyzes with every contract it accepts.  See synth_traces.h.
 */
#define _GNU_SOURCE
#include "synth_traces.h"

#include <stdio.h>
#include <string.h>

#define T0 1700000000000000000ull

static void api(struct tb *b, uint32_t corr, uint32_t tid, uint64_t s, uint64_t e, uint32_t name)
{
    struct kat_api_rec a = { .start_ns = s, .end_ns = e, .domain = KAT_API_RUNTIME, .cbid = 211,
                             .thread_id = tid, .correlation_id = corr, .name_string = name };
    tb_record(b, KAT_REC_API, &a, sizeof a, NULL, 0);
}

/* An API record made inside vendor call `call`: the window in its tail (format 2). */
static void api_in(struct tb *b, uint32_t corr, uint32_t tid, uint64_t s, uint64_t e, uint32_t name, uint64_t call)
{
    struct kat_api_rec a = { .start_ns = s, .end_ns = e, .domain = KAT_API_RUNTIME, .cbid = 211,
                             .thread_id = tid, .correlation_id = corr, .name_string = name };
    struct kat_api_vendor_tail tail = { .vendor_call_id = call };
    tb_record(b, KAT_REC_API, &a, sizeof a, &tail, sizeof tail);
}

static void kernel(struct tb *b, uint32_t corr, uint32_t stream, uint64_t s, uint64_t e, uint32_t name,
                   uint32_t graph)
{
    struct kat_kernel_rec k = { .start_ns = s, .end_ns = e, .device_id = 0, .context_id = 1, .stream_id = stream,
                                .correlation_id = corr, .grid = { 64, 2, 1 }, .block = { 256, 1, 1 },
                                .registers = 32, .name_string = name, .graph_id = graph };
    tb_record(b, KAT_REC_KERNEL, &k, sizeof k, NULL, 0);
}

static void nvtx(struct tb *b, uint32_t kind, uint32_t tid, uint64_t range, uint32_t msg, uint64_t t)
{
    struct kat_nvtx_rec n = { .kind = kind, .thread_id = tid, .range_id = range, .message_string = msg, .time_ns = t };
    tb_record(b, KAT_REC_NVTX, &n, sizeof n, NULL, 0);
}

static void timing(struct tb *b, uint32_t api_kind, uint32_t tid, uint32_t corr, uint64_t t, uint64_t ev,
                   uint64_t ev2, float ms)
{
    struct kat_timing_call_rec r = { .enter_ns = t, .exit_ns = t + 500, .api = api_kind, .domain = KAT_API_RUNTIME,
                                     .thread_id = tid, .correlation_id = corr, .event = ev, .event2 = ev2,
                                     .elapsed_ms = ms };
    tb_record(b, KAT_REC_TIMING_CALL, &r, sizeof r, NULL, 0);
}

static void cuda_event(struct tb *b, uint32_t corr, uint32_t stream, uint64_t dev_ts)
{
    struct kat_cuda_event_rec e = { .correlation_id = corr, .context_id = 1, .stream_id = stream, .event_id = corr,
                                    .device_timestamp_ns = dev_ts };
    tb_record(b, KAT_REC_CUDA_EVENT, &e, sizeof e, NULL, 0);
}

static void vendor_call(struct tb *b, uint64_t id, uint32_t api_s, uint32_t caller, uint32_t tid, uint32_t depth,
                        uint64_t enter, uint64_t exit, int64_t m, int64_t n, int64_t k)
{
    struct kat_vendor_call_rec v;
    memset(&v, 0, sizeof v);
    v.call_id = id;
    v.enter_ns = enter;
    v.exit_ns = exit;
    v.api_string = api_s;
    v.library = KAT_LIB_CUBLAS;
    v.caller_string = caller;
    v.thread_id = tid;
    v.depth = depth;
    v.work_class = KAT_WORK_GEMM;
    v.dtype_space = KAT_DTYPE_SPACE_CUDA;
    v.summary_known = 1;
    v.op.gemm = (struct kat_gemm_summary){ .m = m, .n = n, .k = k, .batch = 1, .lda = m, .ldb = k, .ldc = m };
    tb_record(b, KAT_REC_VENDOR_CALL, &v, sizeof v, NULL, 0);
}

static void ext(struct tb *b, uint32_t corr, uint64_t id)
{
    struct kat_external_correlation_rec x = { .external_kind = KAT_VENDOR_CORRELATION_KIND, .correlation_id = corr,
                                              .external_id = id };
    tb_record(b, KAT_REC_EXTERNAL_CORRELATION, &x, sizeof x, NULL, 0);
}

static void module(struct tb *b, uint32_t id, uint32_t loader, uint32_t tid, uint64_t t, uint64_t lo, uint64_t hi)
{
    struct kat_module_rec m = { .module_id = id, .context_id = 1, .size = 4096, .digest_lo = lo, .digest_hi = hi,
                                .loader_string = loader, .thread_id = tid, .time_ns = t,
                                .image_kind = KAT_IMAGE_CUBIN };
    tb_record(b, KAT_REC_MODULE, &m, sizeof m, NULL, 0);
}

/* Everything at once: a harness with both phases, a vendor GEMM, candidate
   kernels in two timed windows (one escaping its stop event), a worker thread. */
static void rich(struct tb *b)
{
    const uint32_t main_tid = 100, worker = 101;
    const char *const argv[] = { "python3", "harness.py", "--task", "matmul", NULL };
    tb_init(b, 100, 1, KAT_ORIGIN_EXEC, T0);
    tb_process_start(b, argv, "/usr/bin/python3.12", "/work");
    uint32_t s_launch = tb_string(b, "cudaLaunchKernel");
    uint32_t s_cand = tb_string(b, "kaudit:candidate"), s_ref = tb_string(b, "kaudit:reference");
    uint32_t s_other = tb_string(b, "warmup");
    uint32_t s_gemm_api = tb_string(b, "cublasSgemm_v2");
    uint32_t s_torch = tb_string(b, "/opt/torch/lib/libtorch_cuda.so");
    uint32_t s_ext = tb_string(b, "/root/.cache/torch_extensions/py312_cu130/matmul_ext/matmul_ext.so");
    uint32_t s_cublas = tb_string(b, "/usr/local/cuda/lib64/libcublas.so.13");
    uint32_t k_nvjet = tb_string(b, "nvjet_sm90_tst_64x40_64x16_2x1_v_bz_NNT");
    uint32_t k_cand = tb_string(b, "matmul_tiled_kernel(float const*, float const*, float*, int)");
    uint32_t k_fw = tb_string(b, "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>>");
    uint32_t k_red = tb_string(b, "_ZN2at6native13reduce_kernelILi512ELi1EEEvT1_");
    uint32_t k_half = tb_string(b, "ampere_fp16_s16816gemm_fp16_128x128_ldg8_f2f_tn");

    /* tool state */
    struct kat_versions_rec ver = { .driver_version = 13000, .runtime_version = 13000, .cupti_version = 130001 };
    tb_record(b, KAT_REC_VERSIONS, &ver, sizeof ver, NULL, 0);
    struct kat_device_rec dev = { .device_id = 0, .name_string = tb_string(b, "NVIDIA H200"), .cc_major = 9,
                                  .multiprocessors = 132, .global_memory_bytes = 150000000000ull };
    tb_record(b, KAT_REC_DEVICE, &dev, sizeof dev, NULL, 0);
    struct kat_health_rec h = { .code = KAT_HEALTH_CUPTI_CLOCK, .value = 1, .time_ns = T0 + 10 };
    tb_record(b, KAT_REC_HEALTH, &h, sizeof h, NULL, 0);
    struct kat_library_rec lib = { .path_string = s_cublas, .soname_string = tb_string(b, "libcublas.so.13"),
                                   .base_address = 0x7f0000000000ull, .file_size = 1 << 20, .digest_lo = 0x1234,
                                   .digest_hi = 0x5678, .time_ns = T0 + 20 };
    tb_record(b, KAT_REC_LIBRARY, &lib, sizeof lib, NULL, 0);
    struct kat_timing_symbol_rec sym = { .symbol_string = tb_string(b, "cudaEventElapsedTime"),
                                         .object_string = tb_string(b, "/usr/local/cuda/lib64/libcudart.so.13"),
                                         .address = 0x7f0000001000ull, .phase = KAT_SYMBOL_AT_CUDA_INIT,
                                         .time_ns = T0 + 30 };
    tb_record(b, KAT_REC_TIMING_SYMBOL, &sym, sizeof sym, NULL, 0);
    sym.phase = KAT_SYMBOL_AT_END;
    sym.time_ns = T0 + 9000000;
    tb_record(b, KAT_REC_TIMING_SYMBOL, &sym, sizeof sym, NULL, 0);

    /* a framework fill outside the phases (the harness) */
    uint32_t corr = 1;
    api(b, corr, main_tid, T0 + 1000, T0 + 1500, s_launch);
    kernel(b, corr++, 7, T0 + 2000, T0 + 3000, k_fw, 0);
    nvtx(b, KAT_NVTX_PUSH, main_tid, 1, s_other, T0 + 3500);
    nvtx(b, KAT_NVTX_POP, main_tid, 1, 0, T0 + 3600);

    /* reference phase: a vendor GEMM with a nested call and three kernels */
    nvtx(b, KAT_NVTX_PUSH, main_tid, 1, s_ref, T0 + 10000);
    vendor_call(b, 1, s_gemm_api, s_torch, main_tid, 1, T0 + 11000, T0 + 19000, 1024, 1024, 1024);
    vendor_call(b, 2, s_gemm_api, s_cublas, main_tid, 2, T0 + 11500, T0 + 18000, 1024, 1024, 1024);
    module(b, 1, s_cublas, main_tid, T0 + 12100, 0xabcdef, 0x123456);
    for (int i = 0; i < 3; i++) {
        api_in(b, corr, main_tid, T0 + 12000 + i * 1000, T0 + 12500 + i * 1000, s_launch, 2);
        kernel(b, corr++, 7, T0 + 20000 + i * 5000, T0 + 24000 + i * 5000, k_nvjet, 0);
    }
    api(b, corr, main_tid, T0 + 19500, T0 + 19800, s_launch);
    kernel(b, corr++, 7, T0 + 40000, T0 + 41000, k_red, 0);
    nvtx(b, KAT_NVTX_POP, main_tid, 1, 0, T0 + 50000);

    /* candidate phase: the extension loads, a worker thread, two timed windows */
    nvtx(b, KAT_NVTX_PUSH, main_tid, 1, s_cand, T0 + 100000);
    struct kat_thread_rec th = { .event = KAT_THREAD_CREATE, .thread_id = main_tid, .token = 77,
                                 .start_routine = 0x400000, .time_ns = T0 + 101000 };
    tb_record(b, KAT_REC_THREAD, &th, sizeof th, NULL, 0);
    th.event = KAT_THREAD_START;
    th.thread_id = worker;
    th.time_ns = T0 + 101500;
    tb_record(b, KAT_REC_THREAD, &th, sizeof th, NULL, 0);
    uint64_t ev_a = 0x5000, ev_b = 0x5008;
    for (int w = 0; w < 2; w++) {
        uint64_t base = T0 + 200000 + (uint64_t)w * 100000;
        uint32_t c_start = corr++;
        timing(b, KAT_TIMING_EVENT_RECORD, main_tid, c_start, base, ev_a, 0, 0);
        cuda_event(b, c_start, 7, base + 1000);
        if (w == 0)
            module(b, 2, s_ext, main_tid, base + 2100, 0x1111, 0x2222);
        api(b, corr, main_tid, base + 2000, base + 2500, s_launch);
        kernel(b, corr++, 7, base + 3000, base + 9000, k_cand, 0);
        /* the worker launches on a side stream */
        api(b, corr, worker, base + 3000, base + 3400, s_launch);
        kernel(b, corr++, 9, base + 4000, base + (w ? 90000 : 8000), k_cand, 0);
        api(b, corr, main_tid, base + 3500, base + 3900, s_launch);
        kernel(b, corr++, 7, base + 9000, base + 9500, k_half, 0);
        uint32_t c_end = corr++;
        timing(b, KAT_TIMING_EVENT_RECORD, main_tid, c_end, base + 10000, ev_b, 0, 0);
        cuda_event(b, c_end, 7, base + 10000);
        timing(b, KAT_TIMING_EVENT_SYNCHRONIZE, main_tid, corr++, base + 10500, ev_b, 0, 0);
        timing(b, KAT_TIMING_EVENT_ELAPSED, main_tid, corr++, base + 11000, ev_a, ev_b, 0.009f);
    }
    /* the candidate calls cuBLAS itself, from its extension */
    vendor_call(b, 3, s_gemm_api, s_ext, main_tid, 1, T0 + 450000, T0 + 452000, 512, 512, 512);
    api(b, corr, main_tid, T0 + 450500, T0 + 450900, s_launch);
    ext(b, corr, 3);
    kernel(b, corr++, 7, T0 + 460000, T0 + 470000, k_nvjet, 0);
    /* and a graph replay */
    api(b, corr, main_tid, T0 + 480000, T0 + 480500, s_launch);
    kernel(b, corr++, 7, T0 + 481000, T0 + 482000, k_cand, 5);
    nvtx(b, KAT_NVTX_POP, main_tid, 1, 0, T0 + 500000);

    /* harness marks */
    nvtx(b, KAT_NVTX_MARK, main_tid, 0, tb_string(b, "kaudit:reported_ms 0.009"), T0 + 600000);
    nvtx(b, KAT_NVTX_MARK, main_tid, 0, tb_string(b, "kaudit:reported_ms 0.5"), T0 + 600100);
    nvtx(b, KAT_NVTX_MARK, main_tid, 0, tb_string(b, "kaudit:guard-changed torch.cuda.Event.elapsed_time"),
         T0 + 600200);
    /* a kernel whose launch record is missing */
    kernel(b, 99999, 7, T0 + 700000, T0 + 700100, k_fw, 0);
    struct kat_fork_rec fk = { .child_pid = 200, .kind = KAT_FORK_FORK, .time_ns = T0 + 800000 };
    tb_record(b, KAT_REC_FORK, &fk, sizeof fk, NULL, 0);
    struct kat_child_exit_rec ce = { .child_pid = 200, .wait_status = 1 << 8, .time_ns = T0 + 900000 };
    tb_record(b, KAT_REC_CHILD_EXIT, &ce, sizeof ce, NULL, 0);
    struct kat_clock_sync_rec cs = { .realtime_ns = T0 + 950000, .monotonic_ns = 5000, .cupti_ns = 6000 };
    tb_record(b, KAT_REC_CLOCK_SYNC, &cs, sizeof cs, NULL, 0);
    tb_process_end(b, KAT_END_EXIT, 0, 1);
}

/* A compiler that failed (a build tool process). */
static void build_tool(struct tb *b)
{
    const char *const argv[] = { "nvcc", "-c", "kernel.cu", "-o", "kernel.o", NULL };
    tb_init(b, 200, 100, KAT_ORIGIN_EXEC, T0 + 150000);
    tb_process_start(b, argv, "/usr/local/cuda/bin/nvcc", "/tmp/build");
    tb_process_end(b, KAT_END_EXIT, 1, 1);
}

/* Start/end NVTX ranges, a foreign timing definition, tool-health problems,
   and no end record: the process was killed. */
static void truncated(struct tb *b)
{
    const char *const argv[] = { "./bench", NULL };
    tb_init(b, 300, 1, KAT_ORIGIN_EXEC, T0);
    tb_process_start(b, argv, "/work/bench", "/work");
    uint32_t s_launch = tb_string(b, "cuLaunchKernelEx");
    uint32_t s_cand = tb_string(b, "kaudit:candidate");
    uint32_t k = tb_string(b, "my_kernel");
    struct kat_health_rec h = { .code = KAT_HEALTH_CUPTI_DROPPED, .value = 12, .time_ns = T0 + 5,
                                .detail_string = tb_string(b, "activity buffer full") };
    tb_record(b, KAT_REC_HEALTH, &h, sizeof h, NULL, 0);
    struct kat_timing_symbol_rec sym = { .symbol_string = tb_string(b, "cudaEventElapsedTime"),
                                         .object_string = tb_string(b, "/work/libfasttime.so"),
                                         .address = 0x1000, .phase = KAT_SYMBOL_DEFINED_BY_OBJECT, .time_ns = T0 + 8 };
    tb_record(b, KAT_REC_TIMING_SYMBOL, &sym, sizeof sym, NULL, 0);
    nvtx(b, KAT_NVTX_START, 300, 42, s_cand, T0 + 100);
    for (uint32_t i = 1; i <= 4; i++) {
        api(b, i, 300 + i % 2, T0 + 100 * i + 200, T0 + 100 * i + 250, s_launch);
        kernel(b, i, i, T0 + 1000 * i, T0 + 1000 * i + 500, k, 0);
    }
    nvtx(b, KAT_NVTX_END, 300, 42, 0, T0 + 9000);
    /* an open push that never pops */
    nvtx(b, KAT_NVTX_PUSH, 300, 1, s_cand, T0 + 9500);
    api(b, 5, 300, T0 + 9600, T0 + 9700, s_launch);
    kernel(b, 5, 1, T0 + 9800, T0 + 9900, k, 0);
}

/* A process the contract may name as the candidate's, with a side stream. */
static void candidate_process(struct tb *b)
{
    const char *const argv[] = { "./side_stream_candidate", "--iters", "2", NULL };
    tb_init(b, 400, 1, KAT_ORIGIN_FORK, T0);
    tb_process_start(b, argv, "/work/side_stream_candidate", "/work");
    uint32_t s_launch = tb_string(b, "cudaLaunchKernel");
    uint32_t k = tb_string(b, "scale_kernel");
    timing(b, KAT_TIMING_EVENT_RECORD, 400, 1, T0 + 100, 0xa, 0, 0);
    cuda_event(b, 1, 3, T0 + 200);
    api(b, 2, 400, T0 + 300, T0 + 400, s_launch);
    kernel(b, 2, 4, T0 + 500, T0 + 50000, k, 0);
    timing(b, KAT_TIMING_EVENT_RECORD, 400, 3, T0 + 600, 0xb, 0, 0);
    cuda_event(b, 3, 3, T0 + 1000);
    timing(b, KAT_TIMING_EVENT_ELAPSED, 400, 4, T0 + 700, 0xa, 0xb, 0.0008f);
    tb_process_end(b, KAT_END__EXIT, 0, 0);
}

/* A call on a stream: the CUPTI stream id rides along, as the default recording has it. */
static void timing_on(struct tb *b, uint32_t api_kind, uint32_t tid, uint32_t corr, uint64_t t, uint64_t ev,
                      uint64_t stream, uint32_t stream_id)
{
    struct kat_timing_call_rec r = { .enter_ns = t, .exit_ns = t + 500, .api = api_kind, .domain = KAT_API_RUNTIME,
                                     .thread_id = tid, .correlation_id = corr, .event = ev, .stream = stream,
                                     .stream_id_plus_one = stream_id + 1 };
    tb_record(b, KAT_REC_TIMING_CALL, &r, sizeof r, NULL, 0);
}

/* Timed windows without CUDA_EVENT records (the default recording): the stop
 * events are bounded from stream order, with a join and a synchronization. */
static void stream_order(struct tb *b)
{
    const uint32_t tid = 500;
    const char *const argv[] = { "python3", "harness.py", NULL };
    tb_init(b, 500, 1, KAT_ORIGIN_EXEC, T0);
    tb_process_start(b, argv, "/usr/bin/python3.12", "/work");
    uint32_t s_launch = tb_string(b, "cudaLaunchKernel");
    uint32_t s_cand = tb_string(b, "kaudit:candidate");
    uint32_t k = tb_string(b, "my_kernel");
    uint32_t corr = 1;
    nvtx(b, KAT_NVTX_PUSH, tid, 1, s_cand, T0);
    for (int w = 0; w < 3; w++) {
        uint64_t base = T0 + 1000 + (uint64_t)w * 100000;
        api(b, corr, tid, base, base + 300, s_launch);
        kernel(b, corr++, 7, base + 400, base + 900, k, 0);
        timing_on(b, KAT_TIMING_EVENT_RECORD, tid, corr++, base + 1000, 0xa, 0x5, 7);
        api(b, corr, tid, base + 2000, base + 2300, s_launch);
        kernel(b, corr++, 7, base + 2400, base + 6000, k, 0);
        api(b, corr, tid, base + 2500, base + 2800, s_launch);
        kernel(b, corr++, 9, base + 2900, base + (w == 1 ? 90000 : 5000), k, 0);
        if (w == 2) {
            timing_on(b, KAT_TIMING_EVENT_RECORD, tid, corr++, base + 3000, 0xc, 0x9, 9);
            timing_on(b, KAT_TIMING_STREAM_WAIT_EVENT, tid, corr++, base + 3500, 0xc, 0x5, 7);
        }
        timing_on(b, KAT_TIMING_EVENT_RECORD, tid, corr++, base + 7000, 0xb, 0x5, 7);
        timing_on(b, KAT_TIMING_DEVICE_SYNCHRONIZE, tid, corr++, base + 8000, 0, 0, UINT32_MAX);
        timing(b, KAT_TIMING_EVENT_ELAPSED, tid, corr++, base + 9000, 0xa, 0xb, 0.005f);
    }
    nvtx(b, KAT_NVTX_POP, tid, 1, 0, T0 + 400000);
    tb_process_end(b, KAT_END_EXIT, 0, 1);
}

const char *fz_synth_name(int variant)
{
    static const char *const names[FZ_SYNTH_COUNT] = { "rich", "build-tool", "truncated", "candidate-process",
                                                       "stream-order" };
    return variant >= 0 && variant < FZ_SYNTH_COUNT ? names[variant] : "?";
}

void fz_synth_trace(struct tb *b, int variant)
{
    switch (variant) {
    case 0: rich(b); break;
    case 1: build_tool(b); break;
    case 2: truncated(b); break;
    case 3: candidate_process(b); break;
    default: stream_order(b); break;
    }
}

int fz_synth_session(const char *dir)
{
    static const char info[] = "kaudit-session\nformat_version: 1\ntool_version: 0.1.0\ncommand: fuzz\n"
                               "status: exited 0\n";
    if (tb_write_text(dir, "info", info))
        return -1;
    for (int v = 0; v < FZ_SYNTH_COUNT; v++) {
        struct tb b;
        fz_synth_trace(&b, v);
        const struct kat_file_header *h = tb_header(&b);
        char path[4096];
        snprintf(path, sizeof path, "%s/p%u-%llu.kat", dir, h->pid, (unsigned long long)h->start_realtime_ns);
        int rc = tb_write(&b, path);
        tb_free(&b);
        if (rc)
            return -1;
    }
    return 0;
}
