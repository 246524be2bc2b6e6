/*
 * analyze_bench.c - how fast `kaudit analyze` reads a large session, and how
 * its memory grows with the number of kernels.
 *
 *   kaudit_analyze_bench --contract FILE [--kernels N] [--repeat R]
 *                        [--inventory FILE] [--window-every K] [--stream-order] [--no-scaling]
 *                        [--keep DIR]
 *
 * Writes a synthetic session (tests/trace_builder.c) of one process with N
 * kernel launches (default 2,000,000), laid out as the preload writes them:
 * host-side records (NVTX ranges, vendor calls, timing calls) as they
 * happen, and the CUPTI activity records (API, kernel, external correlation,
 * CUDA event) in flushes of 4096 launches.  The mix: NVTX push/pop ranges
 * "kaudit:reference" / "kaudit:candidate" alternating every 1000 kernels;
 * in reference ranges a cuBLAS GEMM (with a gemm summary) every 50 launches
 * that owns 5 of them through external correlation records (5% of all
 * kernels); a CUDA-event timed window around every K-th candidate range
 * (default every 4th: 250 windows for 2 M kernels); 200 distinct kernel
 * names (framework, vendor and candidate); three module loads.
 *
 * Then ka_analyze runs R times (default 3), each time in a forked child that
 * does nothing else, so that neither the generation nor an earlier run
 * counts in its memory.  Reported per run: wall and CPU seconds, peak RSS
 * (getrusage ru_maxrss, which includes the pages of the trace file the
 * reader maps), and the peak of the anonymous part (heap) as sampled from
 * /proc/self/statm every millisecond.  The whole is done at N/4, N/2 and N
 * (unless --no-scaling) to show how memory scales.  The last line:
 *
 *   analyze: 2000000 kernels in 0.84 s = 2.38 M kernel records/s, peak RSS 61.2 MiB, ...
 *
 * bench/analyze_bench.sh builds and runs it; docs/analyzer-bench.md has figures.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "analysis.h"
#include "contract.h"
#include "inventory.h"
#include "trace_builder.h"

#define T0 1700000000000000000ull
#define PID 4242u
#define TID 4242u
#define STREAM 7u
#define FLUSH 4096u          /* launches per CUPTI activity flush */
#define PHASE_LEN 1000u      /* kernels per NVTX range */
#define VENDOR_EVERY 50u     /* in reference ranges: one GEMM call per this many launches */
#define VENDOR_SPAN 5u       /* launches inside each call */
#define N_NAMES 200u

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + t.tv_nsec / 1e9;
}

/* CPU time of the calling thread (not the memory sampler's). */
static double thread_cpu(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec + t.tv_nsec / 1e9;
}

static void die(const char *fmt, const char *arg)
{
    fprintf(stderr, "kaudit_analyze_bench: ");
    fprintf(stderr, fmt, arg, arg ? strerror(errno) : "");
    fputc('\n', stderr);
    exit(1);
}

/* ---- the synthetic session -------------------------------------------- */

struct gen_stats {
    uint64_t kernels, apis, vendor_calls, ext, windows, phases, bytes;
};

/* Host time of launch i (its API record is [t, t + 1500]); GPU time lags 10 us. */
static uint64_t host_t(uint64_t i) { return T0 + 1000000ull + i * 2000ull; }
static uint64_t gpu_t(uint64_t i) { return host_t(i) + 10000ull; }

static void flush_to(FILE *f, struct tb *b, uint64_t *bytes)
{
    if (b->len && fwrite(b->buf, 1, b->len, f) != b->len)
        die("cannot write the trace%s: %s", "");
    *bytes += b->len;
    b->len = 0;
}

static void name_strings(struct tb *b, uint32_t *fw, uint32_t *vendor, uint32_t *cand)
{
    char name[512];
    static const char *const functors[] = { "FillFunctor<float>", "AddFunctor<float>", "MulFunctor<float>",
                                            "CUDAFunctor_add<float>", "copy_kernel_impl<float>",
                                            "sigmoid_kernel_cuda<float>" };
    for (unsigned i = 0; i < 100; i++) {
        if (i % 2)
            snprintf(name, sizeof name,
                     "void at::native::vectorized_elementwise_kernel<%u, at::native::%s, "
                     "at::detail::Array<char*, %u> >(int, at::native::%s, at::detail::Array<char*, %u>)",
                     1u << (i % 4), functors[i % 6], 1 + i / 12, functors[i % 6], 1 + i / 12);
        else
            snprintf(name, sizeof name,
                     "void at::native::reduce_kernel<%u, %u, at::native::ReduceOp<float, "
                     "at::native::MeanOps<float, float, float, float>, unsigned int, float, 4> >("
                     "at::native::ReduceOp<float, at::native::MeanOps<float, float, float, float>, unsigned int, "
                     "float, 4>)",
                     128u << (i % 3), 1 + i / 6);
        fw[i] = tb_string(b, name);
    }
    static const char *const tiles[] = { "64x40_64x16", "128x128_64x6", "64x64_64x8", "256x128_64x4",
                                         "128x256_64x4" };
    for (unsigned i = 0; i < 50; i++) {
        snprintf(name, sizeof name, "nvjet_sm90_tst_%s_%ux1_v_bz_%s", tiles[i % 5], 1 + i / 10,
                 i % 2 ? "NNT" : "TNT");
        vendor[i] = tb_string(b, name);
    }
    for (unsigned i = 0; i < 50; i++) {
        snprintf(name, sizeof name, "_Z%uMatmulTiledV%uPKfS0_Pfiii", 13 + (i >= 10), i);
        cand[i] = tb_string(b, name);
    }
}

/* --stream-order: windows as the default recording makes them (the record calls
 * carry the stream id, no CUDA_EVENT records), so the analyzer bounds the
 * stop events from stream order. */
static int stream_order;

static int write_session(const char *dir, uint64_t n, unsigned window_every, struct gen_stats *gs)
{
    memset(gs, 0, sizeof *gs);
    if (tb_write_text(dir, "info",
                      "kaudit-session\nformat_version: 1\ntool_version: 0.1.0\n"
                      "command: python3 harness.py --task matmul (synthetic: kaudit_analyze_bench)\n"
                      "status: exited 0\n"))
        die("cannot write %s/info: %s", dir);
    char path[4096];
    snprintf(path, sizeof path, "%s/p%u-%llu.kat", dir, PID, (unsigned long long)T0);
    FILE *f = fopen(path, "wb");
    if (!f)
        die("cannot create %s: %s", path);
    setvbuf(f, NULL, _IOFBF, 1 << 20);

    struct tb h;    /* host-side records, in time order */
    struct tb act;  /* the current CUPTI activity buffer */
    memset(&act, 0, sizeof act);
    tb_init(&h, PID, 1, KAT_ORIGIN_EXEC, T0);
    const char *const argv[] = { "python3", "harness.py", "--task", "matmul", NULL };
    tb_process_start(&h, argv, "/usr/bin/python3.12", "/work");
    uint32_t fw[100], vendor[50], cand[50];
    name_strings(&h, fw, vendor, cand);
    uint32_t s_launch = tb_string(&h, "cudaLaunchKernel");
    uint32_t s_launch_ex = tb_string(&h, "cuLaunchKernelEx");
    uint32_t s_ref = tb_string(&h, "kaudit:reference"), s_cand = tb_string(&h, "kaudit:candidate");
    uint32_t s_gemm = tb_string(&h, "cublasSgemm_v2");
    uint32_t s_torch = tb_string(&h, "/opt/torch/.venv/lib/python3.12/site-packages/torch/lib/libtorch_cuda.so");
    uint32_t s_cublas = tb_string(&h, "/opt/torch/.venv/lib/python3.12/site-packages/nvidia/cu13/lib/libcublas.so.13");
    uint32_t s_ext = tb_string(&h, "/root/.cache/torch_extensions/py312_cu130/matmul_ext/matmul_ext.so");
    {
        struct kat_versions_rec v = { .driver_version = 13000, .runtime_version = 13000, .cupti_version = 130001 };
        tb_record(&h, KAT_REC_VERSIONS, &v, sizeof v, NULL, 0);
        struct kat_health_rec hr = { .code = KAT_HEALTH_CUPTI_CLOCK, .value = 1, .time_ns = T0 + 100 };
        tb_record(&h, KAT_REC_HEALTH, &hr, sizeof hr, NULL, 0);
        struct kat_library_rec l = { .path_string = s_cublas, .soname_string = tb_string(&h, "libcublas.so.13"),
                                     .file_size = 700000000, .digest_lo = 1, .digest_hi = 2, .time_ns = T0 + 200 };
        tb_record(&h, KAT_REC_LIBRARY, &l, sizeof l, NULL, 0);
    }

    uint32_t corr = 1;
    uint64_t call_id = 1;
    uint64_t ev_start = 0x7f0000001000ull, ev_end = 0x7f0000001010ull;
    int window_open = 0;
    uint64_t window_first = 0;
    uint32_t corr_window_start = 0;
    int mod_cand = 0, mod_fw = 0, mod_vendor = 0;

    for (uint64_t i = 0; i < n; i++) {
        uint64_t block = i / PHASE_LEN, in_block = i % PHASE_LEN;
        int candidate = block % 2 == 1;
        uint64_t t = host_t(i);
        if (in_block == 0) {
            struct kat_nvtx_rec nv = { .kind = KAT_NVTX_PUSH, .thread_id = TID, .range_id = 1,
                                       .message_string = candidate ? s_cand : s_ref, .time_ns = t - 500 };
            tb_record(&h, KAT_REC_NVTX, &nv, sizeof nv, NULL, 0);
            gs->phases++;
            /* a timed window around every window_every-th candidate range */
            if (candidate && window_every && (block / 2) % window_every == 0) {
                window_open = 1;
                window_first = i;
                corr_window_start = corr++;
                struct kat_timing_call_rec r = { .enter_ns = t - 300, .exit_ns = t - 250,
                                                 .api = KAT_TIMING_EVENT_RECORD, .domain = KAT_API_RUNTIME,
                                                 .thread_id = TID, .correlation_id = corr_window_start,
                                                 .event = ev_start,
                                                 .stream_id_plus_one = stream_order ? STREAM + 1 : 0 };
                tb_record(&h, KAT_REC_TIMING_CALL, &r, sizeof r, NULL, 0);
            }
        }
        /* a vendor call owns launches [i, i + VENDOR_SPAN) */
        int in_vendor = !candidate && in_block % VENDOR_EVERY < VENDOR_SPAN;
        uint32_t name;
        if (candidate)
            name = cand[(i / 7) % 50];
        else if (in_vendor)
            name = vendor[(i / VENDOR_EVERY) % 50];
        else
            name = fw[(i * 7) % 100];
        struct kat_api_rec a = { .start_ns = t, .end_ns = t + 1500, .domain = in_vendor ? KAT_API_DRIVER : KAT_API_RUNTIME,
                                 .cbid = in_vendor ? 652 : 211, .thread_id = TID, .correlation_id = corr,
                                 .name_string = in_vendor ? s_launch_ex : s_launch };
        tb_record(&act, KAT_REC_API, &a, sizeof a, NULL, 0);
        gs->apis++;
        if (in_vendor) {
            struct kat_external_correlation_rec x = { .external_kind = KAT_VENDOR_CORRELATION_KIND,
                                                      .correlation_id = corr, .external_id = call_id };
            tb_record(&act, KAT_REC_EXTERNAL_CORRELATION, &x, sizeof x, NULL, 0);
            gs->ext++;
        }
        /* lazy module loads at the first launch of each kind */
        uint32_t loader = 0;
        if (candidate && !mod_cand)
            loader = s_ext, mod_cand = 1;
        else if (in_vendor && !mod_vendor)
            loader = s_cublas, mod_vendor = 1;
        else if (!candidate && !in_vendor && !mod_fw)
            loader = s_torch, mod_fw = 1;
        if (loader) {
            struct kat_module_rec m = { .module_id = loader, .context_id = 1, .size = 1 << 20,
                                        .digest_lo = 0x1000 + loader, .digest_hi = 0x2000 + loader,
                                        .loader_string = loader, .thread_id = TID, .time_ns = t + 700,
                                        .image_kind = KAT_IMAGE_CUBIN };
            tb_record(&h, KAT_REC_MODULE, &m, sizeof m, NULL, 0);
        }
        struct kat_kernel_rec k = { .start_ns = gpu_t(i), .end_ns = gpu_t(i) + 1500, .context_id = 1,
                                    .stream_id = STREAM, .correlation_id = corr, .grid = { 1024, 1, 1 },
                                    .block = { 256, 1, 1 }, .registers = 64, .name_string = name };
        tb_record(&act, KAT_REC_KERNEL, &k, sizeof k, NULL, 0);
        gs->kernels++;
        corr++;
        if (in_vendor && in_block % VENDOR_EVERY == VENDOR_SPAN - 1) {
            uint64_t first = i - (VENDOR_SPAN - 1);
            struct kat_vendor_call_rec v;
            memset(&v, 0, sizeof v);
            v.call_id = call_id++;
            v.enter_ns = host_t(first) - 200;
            v.exit_ns = t + 1600;
            v.api_string = s_gemm;
            v.library = KAT_LIB_CUBLAS;
            v.caller_string = s_torch;
            v.thread_id = TID;
            v.depth = 1;
            v.work_class = KAT_WORK_GEMM;
            v.dtype_space = KAT_DTYPE_SPACE_CUDA;
            v.summary_known = 1;
            v.op.gemm = (struct kat_gemm_summary){ .m = 1024, .n = 1024, .k = 1024, .batch = 1,
                                                   .lda = 1024, .ldb = 1024, .ldc = 1024 };
            tb_record(&h, KAT_REC_VENDOR_CALL, &v, sizeof v, NULL, 0);
            gs->vendor_calls++;
        }
        if (in_block == PHASE_LEN - 1 || i == n - 1) {
            if (window_open) {
                uint32_t ce = corr++, cq = corr++;
                struct kat_timing_call_rec r = { .enter_ns = t + 1700, .exit_ns = t + 1750,
                                                 .api = KAT_TIMING_EVENT_RECORD, .domain = KAT_API_RUNTIME,
                                                 .thread_id = TID, .correlation_id = ce, .event = ev_end,
                                                 .stream_id_plus_one = stream_order ? STREAM + 1 : 0 };
                tb_record(&h, KAT_REC_TIMING_CALL, &r, sizeof r, NULL, 0);
                uint64_t gpu_start = gpu_t(window_first) - 100, gpu_end = gpu_t(i) + 1600;
                struct kat_timing_call_rec q = { .enter_ns = t + 1900, .exit_ns = t + 1950,
                                                 .api = KAT_TIMING_EVENT_ELAPSED, .domain = KAT_API_RUNTIME,
                                                 .thread_id = TID, .correlation_id = cq, .event = ev_start,
                                                 .event2 = ev_end, .elapsed_ms = (float)(gpu_end - gpu_start) / 1e6f };
                tb_record(&h, KAT_REC_TIMING_CALL, &q, sizeof q, NULL, 0);
                struct kat_cuda_event_rec es = { .correlation_id = corr_window_start, .context_id = 1,
                                                 .stream_id = STREAM, .event_id = 1, .device_timestamp_ns = gpu_start };
                struct kat_cuda_event_rec ee = { .correlation_id = ce, .context_id = 1, .stream_id = STREAM,
                                                 .event_id = 2, .device_timestamp_ns = gpu_end };
                if (!stream_order) {
                    tb_record(&act, KAT_REC_CUDA_EVENT, &es, sizeof es, NULL, 0);
                    tb_record(&act, KAT_REC_CUDA_EVENT, &ee, sizeof ee, NULL, 0);
                }
                window_open = 0;
                gs->windows++;
            }
            struct kat_nvtx_rec nv = { .kind = KAT_NVTX_POP, .thread_id = TID, .range_id = 1, .time_ns = t + 1800 };
            tb_record(&h, KAT_REC_NVTX, &nv, sizeof nv, NULL, 0);
        }
        if ((i + 1) % FLUSH == 0 || i == n - 1) {
            /* what happened on the host so far, then CUPTI's buffer */
            flush_to(f, &h, &gs->bytes);
            flush_to(f, &act, &gs->bytes);
        }
    }
    struct kat_process_end_rec e = { .kind = KAT_END_EXIT, .status = 0, .flags = KAT_END_FLAG_STATUS_KNOWN,
                                     .time_ns = host_t(n) + 1000000, .records_written = 0 };
    tb_record(&h, KAT_REC_PROCESS_END, &e, sizeof e, NULL, 0);
    flush_to(f, &h, &gs->bytes);
    if (fclose(f) != 0)
        die("cannot write %s: %s", path);
    tb_free(&h);
    tb_free(&act);
    return 0;
}

/* ---- one analysis in a child ------------------------------------------ */

struct run_result {
    int ok;
    double wall, cpu;
    long base_rss_kib, peak_rss_kib, peak_anon_kib;
    uint64_t kernels, api_records, vendor_calls;
    unsigned windows;
    int implementation, measurement, certificate;
    char err[256];
};

static atomic_int sampler_stop;
static long sampled_anon_peak_kib;

/* Resident minus file-backed/shared pages (/proc/self/statm), every millisecond. */
static void *sampler(void *arg)
{
    (void)arg;
    long page_kib = sysconf(_SC_PAGESIZE) / 1024;
    int fd = open("/proc/self/statm", O_RDONLY);
    char buf[256];
    while (fd >= 0 && !atomic_load(&sampler_stop)) {
        ssize_t got = pread(fd, buf, sizeof buf - 1, 0);
        long size, resident, shared;
        if (got > 0) {
            buf[got] = 0;
            if (sscanf(buf, "%ld %ld %ld", &size, &resident, &shared) == 3 &&
                (resident - shared) * page_kib > sampled_anon_peak_kib)
                sampled_anon_peak_kib = (resident - shared) * page_kib;
        }
        usleep(1000);
    }
    if (fd >= 0)
        close(fd);
    return NULL;
}

static void analyze_child(int fd, const char *dir, const struct ka_contract *c, const struct kinv_inventory *inv,
                          const char *inv_path, int sample)
{
    struct run_result r;
    memset(&r, 0, sizeof r);
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    r.base_rss_kib = ru.ru_maxrss;
    pthread_t th;
    int sampling = sample && pthread_create(&th, NULL, sampler, NULL) == 0;
    struct ka_options opt;
    memset(&opt, 0, sizeof opt);
    opt.inventory = inv;
    opt.inventory_path = inv_path;
    struct ka_analysis *a = NULL;
    double t0 = now(), c0 = thread_cpu();
    int rc = ka_analyze(dir, c, &opt, &a, r.err, sizeof r.err);
    r.wall = now() - t0;
    r.cpu = thread_cpu() - c0;
    if (sampling) {
        atomic_store(&sampler_stop, 1);
        pthread_join(th, NULL);
        r.peak_anon_kib = sampled_anon_peak_kib;
    } else {
        r.peak_anon_kib = -1;
    }
    getrusage(RUSAGE_SELF, &ru);
    r.peak_rss_kib = ru.ru_maxrss;
    if (rc == 0) {
        r.ok = 1;
        r.kernels = a->kernels;
        r.api_records = a->api_records;
        r.vendor_calls = a->vendor_calls;
        r.windows = a->timed_windows;
        r.implementation = a->axis[KA_AXIS_IMPLEMENTATION].verdict;
        r.measurement = a->axis[KA_AXIS_MEASUREMENT].verdict;
        r.certificate = a->certificate;
        ka_analysis_free(a);
    }
    ssize_t w = write(fd, &r, sizeof r);
    _exit(w == (ssize_t)sizeof r ? 0 : 1);
}

static int run_once(const char *dir, const struct ka_contract *c, const struct kinv_inventory *inv,
                    const char *inv_path, int sample, struct run_result *r)
{
    int p[2];
    if (pipe(p))
        die("pipe%s: %s", "");
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0)
        die("fork%s: %s", "");
    if (pid == 0) {
        close(p[0]);
        analyze_child(p[1], dir, c, inv, inv_path, sample);
    }
    close(p[1]);
    memset(r, 0, sizeof *r);
    ssize_t got = read(p[0], r, sizeof *r);
    close(p[0]);
    int status;
    waitpid(pid, &status, 0);
    if (got != (ssize_t)sizeof *r || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        fprintf(stderr, "kaudit_analyze_bench: the analysis child failed (status %d)\n", status);
        return -1;
    }
    if (!r->ok) {
        fprintf(stderr, "kaudit_analyze_bench: ka_analyze: %s\n", r->err);
        return -1;
    }
    return 0;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

struct scale_result {
    uint64_t kernels, bytes;
    double median_wall, median_cpu;
    long peak_rss_kib, peak_anon_kib, base_rss_kib;
};

static char *read_text(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    if (fseek(f, 0, SEEK_END) != 0) {
        fclose(f);
        return NULL;
    }
    long size = ftell(f);
    rewind(f);
    char *buf = size >= 0 ? malloc((size_t)size + 1) : NULL;
    if (buf && fread(buf, 1, (size_t)size, f) != (size_t)size) {
        free(buf);
        buf = NULL;
    }
    fclose(f);
    if (buf) {
        buf[size] = 0;
        *len = (size_t)size;
    }
    return buf;
}

static const char usage[] =
    "usage: kaudit_analyze_bench --contract FILE [--kernels N] [--repeat R] [--inventory FILE]\n"
    "                            [--window-every K] [--stream-order] [--no-scaling] [--no-sample]\n"
    "                            [--keep DIR]\n";

int main(int argc, char **argv)
{
    static const struct option longopts[] = {
        { "contract", required_argument, NULL, 'c' }, { "kernels", required_argument, NULL, 'n' },
        { "repeat", required_argument, NULL, 'r' },   { "inventory", required_argument, NULL, 'i' },
        { "window-every", required_argument, NULL, 'w' }, { "no-scaling", no_argument, NULL, 's' },
        { "no-sample", no_argument, NULL, 'S' },      { "keep", required_argument, NULL, 'k' },
        { "stream-order", no_argument, NULL, 'o' },
        { "help", no_argument, NULL, 'h' },           { NULL, 0, NULL, 0 },
    };
    const char *contract_path = NULL, *inv_path = NULL, *keep = NULL;
    uint64_t n = 2000000;
    int repeat = 3, scaling = 1, sample = 1, c;
    unsigned window_every = 4;
    while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        switch (c) {
        case 'c': contract_path = optarg; break;
        case 'n': n = strtoull(optarg, NULL, 10); break;
        case 'r': repeat = atoi(optarg); break;
        case 'i': inv_path = optarg; break;
        case 'w': window_every = (unsigned)strtoul(optarg, NULL, 10); break;
        case 's': scaling = 0; break;
        case 'S': sample = 0; break;
        case 'k': keep = optarg; break;
        case 'o': stream_order = 1; break;
        case 'h': fputs(usage, stdout); return 0;
        default: fputs(usage, stderr); return 2;
        }
    }
    if (!contract_path || optind != argc || repeat < 1 || n < 4) {
        fputs(usage, stderr);
        return 2;
    }
    size_t len = 0;
    char *text = read_text(contract_path, &len);
    if (!text)
        die("cannot read the contract %s: %s", contract_path);
    struct ka_contract *contract;
    char err[1024];
    if (ka_contract_parse(text, len, contract_path, &contract, err, sizeof err)) {
        fprintf(stderr, "kaudit_analyze_bench: %s\n", err);
        return 1;
    }
    free(text);
    struct kinv_inventory *inv = NULL;
    if (inv_path) {
        struct kinv_err ierr;
        if (kinv_load(inv_path, &inv, &ierr)) {
            fprintf(stderr, "kaudit_analyze_bench: %s\n", ierr.msg);
            return 1;
        }
    }

    uint64_t sizes[3] = { n / 4, n / 2, n };
    int first = scaling ? 0 : 2;
    struct scale_result res[3];
    memset(res, 0, sizeof res);
    printf("contract: %s (%s); inventory: %s; %d runs per size, each in a fresh child process\n", contract_path,
           contract->task_id, inv_path ? inv_path : "none", repeat);
    for (int s = first; s < 3; s++) {
        char *dir;
        if (keep && s == 2) {
            dir = strdup(keep);
            if (mkdir(dir, 0777) && errno != EEXIST)
                die("cannot make %s: %s", dir);
        } else {
            dir = tb_tempdir();
            if (!dir)
                die("cannot make a temporary directory%s: %s", "");
        }
        struct gen_stats gs;
        double g0 = now();
        write_session(dir, sizes[s], window_every, &gs);
        double gen = now() - g0;
        printf("session: %llu kernels, %llu API records, %llu vendor calls owning %llu kernels (%.1f%%), "
               "%llu NVTX ranges, %llu timed windows; trace %.1f MB (%llu bytes, %.1f bytes/kernel); "
               "written in %.2f s to %s\n",
               (unsigned long long)gs.kernels, (unsigned long long)gs.apis, (unsigned long long)gs.vendor_calls,
               (unsigned long long)gs.ext, 100.0 * (double)gs.ext / (double)gs.kernels,
               (unsigned long long)gs.phases, (unsigned long long)gs.windows, gs.bytes / 1e6,
               (unsigned long long)gs.bytes, (double)gs.bytes / (double)gs.kernels, gen, dir);
        double *walls = calloc((size_t)repeat, sizeof *walls), *cpus = calloc((size_t)repeat, sizeof *cpus);
        struct run_result r;
        res[s].kernels = gs.kernels;
        res[s].bytes = gs.bytes;
        for (int k = 0; k < repeat; k++) {
            if (run_once(dir, contract, inv, inv_path, sample, &r))
                return 1;
            if (r.kernels != gs.kernels) {
                fprintf(stderr, "kaudit_analyze_bench: the analysis counted %llu kernels, %llu were written\n",
                        (unsigned long long)r.kernels, (unsigned long long)gs.kernels);
                return 1;
            }
            walls[k] = r.wall;
            cpus[k] = r.cpu;
            if (r.peak_rss_kib > res[s].peak_rss_kib)
                res[s].peak_rss_kib = r.peak_rss_kib;
            if (r.peak_anon_kib > res[s].peak_anon_kib)
                res[s].peak_anon_kib = r.peak_anon_kib;
            res[s].base_rss_kib = r.base_rss_kib;
            printf("analyze: %llu kernels, run %d: %.3f s wall, %.3f s CPU, peak RSS %.1f MiB (child at start "
                   "%.1f MiB), anonymous peak %.1f MiB (sampled)\n",
                   (unsigned long long)gs.kernels, k + 1, r.wall, r.cpu, r.peak_rss_kib / 1024.0,
                   r.base_rss_kib / 1024.0, r.peak_anon_kib / 1024.0);
        }
        printf("verdicts: implementation %s, measurement %s, certificate %s; %llu API records, %llu vendor calls, "
               "%u timed windows read\n",
               ka_verdict_name(r.implementation), ka_verdict_name(r.measurement), ka_verdict_name(r.certificate),
               (unsigned long long)r.api_records, (unsigned long long)r.vendor_calls, r.windows);
        qsort(walls, (size_t)repeat, sizeof *walls, cmp_double);
        qsort(cpus, (size_t)repeat, sizeof *cpus, cmp_double);
        res[s].median_wall = walls[repeat / 2];
        res[s].median_cpu = cpus[repeat / 2];
        free(walls);
        free(cpus);
        if (!(keep && s == 2))
            tb_remove_dir(dir);
        else
            printf("session kept in %s\n", dir);
        free(dir);
    }

    printf("scaling (median of %d runs; RSS = peak resident set of the analyzing process, which includes the "
           "mapped trace; anon = its sampled heap peak):\n",
           repeat);
    printf("  %10s %10s %10s %10s %12s %12s %12s %12s\n", "kernels", "trace MB", "wall s", "CPU s", "M kernels/s",
           "peak RSS MiB", "anon MiB", "RSS B/kernel");
    for (int s = first; s < 3; s++)
        printf("  %10llu %10.1f %10.3f %10.3f %12.2f %12.1f %12.1f %12.1f\n", (unsigned long long)res[s].kernels,
               res[s].bytes / 1e6, res[s].median_wall, res[s].median_cpu,
               (double)res[s].kernels / res[s].median_wall / 1e6, res[s].peak_rss_kib / 1024.0,
               res[s].peak_anon_kib / 1024.0, res[s].peak_rss_kib * 1024.0 / (double)res[s].kernels);
    if (scaling) {
        double d_rss = (double)(res[2].peak_rss_kib - res[0].peak_rss_kib) * 1024.0;
        double d_anon = (double)(res[2].peak_anon_kib - res[0].peak_anon_kib) * 1024.0;
        double d_k = (double)(res[2].kernels - res[0].kernels);
        printf("growth from N/4 to N: %.1f bytes of peak RSS and %.1f bytes of anonymous memory per added kernel\n",
               d_rss / d_k, d_anon / d_k);
    }
    const struct scale_result *m = &res[2];
    printf("analyze: %llu kernels in %.3f s = %.2f M kernel records/s (%.2f M per CPU-second), peak RSS %.1f MiB "
           "(%.1f bytes per kernel; anonymous %.1f MiB), trace %.1f MB\n",
           (unsigned long long)m->kernels, m->median_wall, (double)m->kernels / m->median_wall / 1e6,
           (double)m->kernels / m->median_cpu / 1e6, m->peak_rss_kib / 1024.0,
           m->peak_rss_kib * 1024.0 / (double)m->kernels, m->peak_anon_kib / 1024.0, m->bytes / 1e6);
    ka_contract_free(contract);
    if (inv)
        kinv_free(inv);
    return 0;
}
