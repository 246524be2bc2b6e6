/*
 * cupti_toggle.c - libcupti_toggle.so: switches CUPTI mechanisms on and off
 * inside one process, for measuring what each costs a launch
 * (bench/cupti_cost.cu for a bare launch loop, bench/cupti_cost.py for the
 * PyTorch loop of bench/overhead_loops.py).
 *
 * Why: on the GPU machine (a VM) the host's launch cost moves between
 * plateaus from one process to the next, by up to 1.7x, so comparing
 * processes needs many runs to resolve a microsecond.  Switching mechanisms
 * between short segments of one process puts every configuration on the same
 * machine state.  This is a CUPTI client of its own; kaudit is not involved.
 *
 * Configurations (ct_config_name):
 *   off                nothing
 *   kernel             CONCURRENT_KERNEL activity records
 *   api                RUNTIME + DRIVER activity records, every API
 *   kernel_api         both
 *   kernel_apilaunch   kernel records + API records for the launch APIs only
 *                      (cuptiActivityEnableRuntimeApi/DriverApi allowlist)
 *   callback           a callback on the launch APIs (entry only) that stores
 *                      the correlation id, a timestamp and the callback id
 *   cb_kernel          callback + kernel records
 *
 * The same library is also a CUDA injection library (CUDA_INJECTION64_PATH):
 * with CT_INJECT=<configuration> the driver calls InitializeInjection at
 * cuInit, which switches that configuration on for the whole process.  That
 * is the floor of a process-level comparison (bench/floor.sh): what CUPTI
 * alone costs with a client that does nothing but count, from process start
 * to end, the way kaudit's CUPTI client runs.
 */
#define _GNU_SOURCE
#include <cupti.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CT_EXPORT __attribute__((visibility("default")))

enum { OFF, KERNEL, API, KERNEL_API, KERNEL_APILAUNCH, CALLBACK, CB_KERNEL, N_CONFIGS };
static const char *const names[N_CONFIGS] = { "off", "kernel", "api", "kernel_api",
                                               "kernel_apilaunch", "callback", "cb_kernel" };

static atomic_llong kernel_records, api_records, callbacks;

static void CUPTIAPI buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records)
{
    *size = 8u << 20;
    *buffer = calloc(1, *size);
    *max_records = 0;
}

static void CUPTIAPI buffer_completed(CUcontext context, uint32_t stream, uint8_t *buffer,
                                      size_t size, size_t valid)
{
    (void)context, (void)stream, (void)size;
    CUpti_Activity *record = NULL;
    while (cuptiActivityGetNextRecord(buffer, valid, &record) == CUPTI_SUCCESS) {
        if (record->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL)
            atomic_fetch_add(&kernel_records, 1);
        else if (record->kind == CUPTI_ACTIVITY_KIND_RUNTIME
                 || record->kind == CUPTI_ACTIVITY_KIND_DRIVER)
            atomic_fetch_add(&api_records, 1);
    }
    free(buffer);
}

/* What a launch callback keeps: what a launch record needs from the host. */
struct launch_note {
    uint64_t time_ns;
    uint32_t correlation_id;
    uint32_t cbid;
};
#define MAX_NOTES (1u << 22)
static struct launch_note *notes;
static atomic_uint notes_used;

static void CUPTIAPI on_launch(void *userdata, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                               const void *data)
{
    (void)userdata, (void)domain;
    const CUpti_CallbackData *d = data;
    if (d->callbackSite != CUPTI_API_ENTER)
        return;
    unsigned i = atomic_fetch_add_explicit(&notes_used, 1, memory_order_relaxed);
    if (i < MAX_NOTES) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        notes[i] = (struct launch_note){ (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec,
                                         d->correlationId, cbid };
    }
    atomic_fetch_add_explicit(&callbacks, 1, memory_order_relaxed);
}

static CUpti_SubscriberHandle subscriber;
static struct { CUpti_CallbackDomain domain; CUpti_CallbackId cbid; } launch_apis[64];
static int n_launch_apis;

static void find_launch_apis(void)
{
    const struct { CUpti_CallbackDomain domain; uint32_t count; const char *prefix; } domains[] = {
        { CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_SIZE, "cudaLaunch" },
        { CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_SIZE, "cuLaunch" },
    };
    for (size_t d = 0; d < 2; d++)
        for (uint32_t cbid = 1; cbid < domains[d].count && n_launch_apis < 64; cbid++) {
            const char *name = NULL;
            if (cuptiGetCallbackName(domains[d].domain, cbid, &name) == CUPTI_SUCCESS && name
                && strncmp(name, domains[d].prefix, strlen(domains[d].prefix)) == 0) {
                launch_apis[n_launch_apis].domain = domains[d].domain;
                launch_apis[n_launch_apis].cbid = cbid;
                n_launch_apis++;
            }
        }
}

static int check(CUptiResult rc, const char *what)
{
    if (rc == CUPTI_SUCCESS)
        return 0;
    const char *msg = "?";
    cuptiGetResultString(rc, &msg);
    fprintf(stderr, "cupti_toggle: %s: %s\n", what, msg);
    return -1;
}

CT_EXPORT int ct_configs(void) { return N_CONFIGS; }

CT_EXPORT const char *ct_config_name(int config)
{
    return config >= 0 && config < N_CONFIGS ? names[config] : "?";
}

CT_EXPORT int ct_init(void)
{
    notes = calloc(MAX_NOTES, sizeof *notes);
    if (!notes)
        return -1;
    if (check(cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed), "register")
        || check(cuptiSubscribe(&subscriber, (CUpti_CallbackFunc)on_launch, NULL), "subscribe"))
        return -1;
    find_launch_apis();
    return n_launch_apis;
}

/* Switches CONFIG's mechanisms on (ON=1) or off. */
CT_EXPORT int ct_apply(int config, int on)
{
    int rc = 0;
#define ACT(kind) rc |= check(on ? cuptiActivityEnable(kind) : cuptiActivityDisable(kind), #kind)
    if (config == KERNEL || config == KERNEL_API || config == KERNEL_APILAUNCH || config == CB_KERNEL)
        ACT(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
    if (config == API || config == KERNEL_API) {
        ACT(CUPTI_ACTIVITY_KIND_RUNTIME);
        ACT(CUPTI_ACTIVITY_KIND_DRIVER);
    }
#undef ACT
    for (int i = 0; i < n_launch_apis; i++) {
        if (config == KERNEL_APILAUNCH)
            rc |= check(launch_apis[i].domain == CUPTI_CB_DOMAIN_RUNTIME_API
                            ? cuptiActivityEnableRuntimeApi(launch_apis[i].cbid, (uint8_t)on)
                            : cuptiActivityEnableDriverApi(launch_apis[i].cbid, (uint8_t)on),
                        "allowlist");
        if (config == CALLBACK || config == CB_KERNEL)
            rc |= check(cuptiEnableCallback((uint32_t)on, subscriber, launch_apis[i].domain,
                                            launch_apis[i].cbid), "callback");
    }
    return rc;
}

/* Flushes, then gives the running totals: kernel records, API records, callbacks. */
CT_EXPORT void ct_counts(long long out[3])
{
    cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    out[0] = atomic_load(&kernel_records);
    out[1] = atomic_load(&api_records);
    out[2] = atomic_load(&callbacks);
}

/* At exit: what CUPTI delivered, so a floor run shows it really recorded
 * (stderr: bench/overhead.sh keeps each run's stderr in its work directory). */
static void report_at_exit(void)
{
    long long counts[3];
    ct_counts(counts);
    fprintf(stderr, "cupti_toggle: %s: kernel records %lld, api records %lld, callbacks %lld\n",
            getenv("CT_INJECT"), counts[0], counts[1], counts[2]);
}

/* CUDA_INJECTION64_PATH entry point: called once by the driver at cuInit. */
CT_EXPORT int InitializeInjection(void)
{
    const char *wanted = getenv("CT_INJECT");
    if (!wanted)
        return 1;
    for (int config = 0; config < N_CONFIGS; config++)
        if (strcmp(wanted, names[config]) == 0) {
            if (ct_init() < 0 || ct_apply(config, 1) != 0)
                return 0;
            atexit(report_at_exit);
            return 1;
        }
    fprintf(stderr, "cupti_toggle: CT_INJECT=%s names no configuration\n", wanted);
    return 0;
}
