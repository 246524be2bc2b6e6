/*
 * cupti_kinds.c - which activity kinds CUPTI records (KAUDIT_CUPTI_KINDS,
 * KAUDIT_EXACT_EVENT_TIMES, a benchmark control's list, the kernel kind
 * deferred to context creation) and which runtime and driver calls get an
 * API record (KAUDIT_API_RECORDS: the query calls left out).  A part of the
 * CUPTI backend (cupti_backend.c, cupti_internal.h): the policy, apart
 * from the records it lets through.
 */
#define _GNU_SOURCE
#include <cupti.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cupti_internal.h"
#include "preload_internal.h"

/* Is NAME an element of the comma-separated LIST? */
static int list_has(const char *list, const char *name)
{
    size_t n = strlen(name);
    for (const char *p = list; *p;) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        if (len == n && strncmp(p, name, n) == 0)
            return 1;
        if (!end)
            break;
        p = end + 1;
    }
    return 0;
}

/*
 * The activity kinds we enable, by the names KAUDIT_CUPTI_KINDS uses.
 * KAUDIT_CUPTI_KINDS=kernel,runtime (say) enables only those: it exists to
 * measure what each kind costs the program (bench/launch_probe.sh).  A trace
 * made so lacks evidence; an ACTIVITY_KINDS health record says which kinds
 * were left out, and the analyzer will not PASS it.
 */
static const struct activity_kind_name {
    CUpti_ActivityKind kind;
    const char *name;
    int by_default;
} activity_kinds[] = {
    { CUPTI_ACTIVITY_KIND_DEVICE, "device", 1 },
    { CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, "kernel", 1 },
    /* These three only when API records cannot come from callbacks
     * (enable_activity_kinds, made_by_callbacks).  Without RUNTIME/DRIVER
     * records CUPTI emits no EXTERNAL_CORRELATION records (measured on the
     * H200); with them, those are our vendor windows. */
    { CUPTI_ACTIVITY_KIND_RUNTIME, "runtime", 1 },
    { CUPTI_ACTIVITY_KIND_DRIVER, "driver", 1 },
    { CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION, "external", 1 },
    { CUPTI_ACTIVITY_KIND_MEMCPY, "memcpy", 1 },
    { CUPTI_ACTIVITY_KIND_MEMSET, "memset", 1 },
    /*
     * Off unless KAUDIT_EXACT_EVENT_TIMES=1.  Either of these two kinds, once
     * on, slows every launch, not just the event and sync calls: on the H200
     * either alone was the largest single part of kaudit's cost on the
     * launch-bound loop (bench/notes/overhead.md, "Fourth session";
     * bench/results/2026-11-30-activity-kinds.json).  What they gave is
     * made otherwise: the synchronizing calls are timing-call records
     * (callbacks), and the stop event's GPU time is bounded from stream
     * order by the analyzer (event records carry CUPTI's stream id,
     * timing_stream_id).
     */
    { CUPTI_ACTIVITY_KIND_SYNCHRONIZATION, "sync", 0 },
    { CUPTI_ACTIVITY_KIND_CUDA_EVENT, "event", 0 },
};

/* KAUDIT_EXACT_EVENT_TIMES=1: the sync and event kinds too (exact GPU
 * timestamps of event records, at the launch-path cost above). */
static int exact_event_times(void)
{
    return kat_env_equals("KAUDIT_EXACT_EVENT_TIMES", "1");
}

/* Is kind K wanted?  ONLY (KAUDIT_CUPTI_KINDS or a benchmark control's list)
 * names exactly the kinds to enable; without it, the default set. */
static int kind_wanted(const struct activity_kind_name *k, const char *only)
{
    if (only)
        return list_has(only, k->name);
    return k->by_default || exact_event_times();
}

static int is_api_kind(CUpti_ActivityKind kind)
{
    return kind == CUPTI_ACTIVITY_KIND_RUNTIME || kind == CUPTI_ACTIVITY_KIND_DRIVER;
}

/*
 * Kinds left off while API records come from callbacks: the callbacks make
 * the runtime and driver records, and CUPTI makes EXTERNAL_CORRELATION
 * records only beside API activity (measured on the H200), so that kind then
 * gives nothing; enabled anyway it only slowed the launch-bound loop
 * (bench/notes/overhead.md, "Tenth session").
 */
static int made_by_callbacks(CUpti_ActivityKind kind)
{
    return is_api_kind(kind) || kind == CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION;
}

static void enable_activity(CUpti_ActivityKind kind, const char *name)
{
    CUptiResult rc = real_cuptiActivityEnable(kind);
    if (rc != CUPTI_SUCCESS) {
        char detail[256];
        snprintf(detail, sizeof(detail), "%s: %s", name, result_text(rc));
        kat_health(KAT_HEALTH_CUPTI_ENABLE_FAILED, detail, kind);
    }
}

/*
 * Which runtime and driver calls get an API record.  PyTorch makes several
 * pure queries per operator (cudaGetDevice, cuCtxGetCurrent, occupancy and
 * capture-state lookups, cuGetProcAddress at start-up); recording them costs
 * launch-path time and says nothing about who computed what.  The default
 * policy, "evidence", leaves out the calls whose names start with one of the
 * prefixes below; everything that launches, copies, allocates, synchronizes,
 * records events, loads modules or builds graphs keeps its record.
 * KAUDIT_API_RECORDS=all records every call; =none records none (for
 * measuring our own cost: vendor windows need API records).
 */
static const char *const query_prefixes[] = {
    "cudaGetDevice", "cudaGetLastError", "cudaPeekAtLastError", "cudaStreamIsCapturing",
    "cudaDeviceGetAttribute", "cudaStreamGetCaptureInfo", "cudaPointerGetAttributes",
    "cudaFuncGetAttributes", "cudaOccupancy", "cudaDriverGetVersion", "cudaRuntimeGetVersion",
    "cudaGetDriverEntryPoint", "cudaStreamGetPriority", "cudaStreamGetFlags", "cudaStreamGetId",
    "cudaDeviceGetStreamPriorityRange", "cudaThreadExchangeStreamCaptureMode",
    "cudaGetErrorString", "cudaGetErrorName", "cudaGetSymbolAddress", "cudaFuncGetName",
    "cuGetProcAddress", "cuCtxGetCurrent", "cuCtxGetDevice", "cuDeviceGet", "cuDevicePrimaryCtxGetState",
    "cuStreamGetCaptureInfo", "cuPointerGetAttribute", "cuOccupancy", "cuFuncGetAttribute",
    "cuDriverGetVersion", "cuCtxGetStreamPriorityRange", "cuStreamIsCapturing",
    "cuKernelGetAttribute", "cuGetExportTable", "cuCtxGetFlags", "cuCtxGetId", "cuStreamGetId",
    "cuStreamGetCtx", "cuGetErrorString", "cuGetErrorName", "cuThreadExchangeStreamCaptureMode",
    "cuFuncGetName", "cuKernelGetName", "cuLibraryGetKernel", "cuKernelGetFunction",
    "cuStreamGetPriority",
    "cuStreamGetFlags", "cuCtxGetApiVersion", "cuCtxGetLimit", "cuCtxGetCacheConfig",
    NULL,
};

int is_query(const char *name)
{
    for (const char *const *p = query_prefixes; *p; p++)
        if (strncmp(name, *p, strlen(*p)) == 0)
            return 1;
    return 0;
}

static int disable_queries(CUpti_CallbackDomain domain, uint32_t count,
                           CUptiResult (*enable)(CUpti_CallbackId, uint8_t))
{
    int disabled = 0;
    for (uint32_t cbid = 1; cbid < count; cbid++) {
        const char *name = NULL;
        if (real_cuptiGetCallbackName(domain, cbid, &name) == CUPTI_SUCCESS && name
            && is_query(name) && enable(cbid, 0) == CUPTI_SUCCESS)
            disabled++;
    }
    return disabled;
}

enum api_policy api_policy(void)
{
    const char *policy = getenv("KAUDIT_API_RECORDS");
    if (policy && strcmp(policy, "all") == 0)
        return API_ALL;
    if (policy && strcmp(policy, "none") == 0)
        return API_NONE;
    return API_EVIDENCE;
}

static CUptiResult (*enable_runtime_api)(CUpti_CallbackId, uint8_t);
static CUptiResult (*enable_driver_api)(CUpti_CallbackId, uint8_t);

static void resolve_api_filters(void)
{
    enable_runtime_api = (CUptiResult(*)(CUpti_CallbackId, uint8_t))dlsym(cupti_handle,
                                                                           "cuptiActivityEnableRuntimeApi");
    enable_driver_api = (CUptiResult(*)(CUpti_CallbackId, uint8_t))dlsym(cupti_handle,
                                                                          "cuptiActivityEnableDriverApi");
}

static void apply_api_record_policy(void)
{
    enum api_policy policy = api_policy();
    if (policy == API_ALL) {
        kat_health(KAT_HEALTH_API_RECORD_POLICY, "all", 0);
        return;
    }
    if (policy == API_NONE) {
        if (real_cuptiActivityDisable) {
            real_cuptiActivityDisable(CUPTI_ACTIVITY_KIND_RUNTIME);
            real_cuptiActivityDisable(CUPTI_ACTIVITY_KIND_DRIVER);
        }
        kat_health(KAT_HEALTH_API_RECORD_POLICY, "none: no API records, no vendor windows", -1);
        return;
    }
    resolve_api_filters();
    if (!enable_runtime_api || !enable_driver_api) {
        kat_health(KAT_HEALTH_API_RECORD_POLICY, "all (this CUPTI cannot filter API records)", 0);
        return;
    }
    int left_out = disable_queries(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_SIZE, enable_runtime_api)
                   + disable_queries(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_SIZE, enable_driver_api);
    kat_health(KAT_HEALTH_API_RECORD_POLICY, "evidence: query APIs not recorded", left_out);
}

/* Which of activity_kinds[] are enabled now. */
static uint8_t kind_enabled[TABLE_SIZE(activity_kinds)];

void enable_activity_kinds(void)
{
    const char *only = getenv("KAUDIT_CUPTI_KINDS");
    char left_out[160] = "";
    int n_left_out = 0, api_kinds = 0;
    for (size_t i = 0; i < TABLE_SIZE(activity_kinds); i++) {
        const struct activity_kind_name *k = &activity_kinds[i];
        if (!kind_wanted(k, only)) {
            if (!only || !k->by_default)
                continue;   /* not wanted, and no evidence the default set has is missing */
            size_t used = strlen(left_out);
            snprintf(left_out + used, sizeof left_out - used, "%s%s", used ? "," : "", k->name);
            n_left_out++;
            continue;
        }
        int api_kind = is_api_kind(k->kind);
        if (api_by_callback && made_by_callbacks(k->kind))
            continue;           /* the callbacks make these records, or none are made */
        if (kernel_at_context && k->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL)
            continue;           /* enable_deferred_kernel_activity, at context creation */
        enable_activity(k->kind, k->name);
        kind_enabled[i] = 1;
        api_kinds += api_kind;
    }
    /* The per-call filter only applies on top of an enabled API kind. */
    if (api_kinds)
        apply_api_record_policy();
    if (n_left_out)
        kat_health(KAT_HEALTH_ACTIVITY_KINDS, left_out, n_left_out);
}

int kat_cupti_select_kinds(const char *only)
{
    if (!kat_cupti_active() || !real_cuptiActivityDisable)
        return -1;
    int rc = 0, api_switched_on = 0;
    for (size_t i = 0; i < TABLE_SIZE(activity_kinds); i++) {
        const struct activity_kind_name *k = &activity_kinds[i];
        uint8_t want = (uint8_t)kind_wanted(k, only);
        /* With API records made by callback, API activity would record them
         * twice, and external correlation records none. */
        if (api_by_callback && made_by_callbacks(k->kind))
            want = 0;
        if (want == kind_enabled[i])
            continue;
        CUptiResult r = want ? real_cuptiActivityEnable(k->kind) : real_cuptiActivityDisable(k->kind);
        if (r != CUPTI_SUCCESS) {
            rc = -1;
            continue;
        }
        kind_enabled[i] = want;
        if (want && is_api_kind(k->kind))
            api_switched_on = 1;
    }
    /* Enabling an API kind undoes the per-call filter: apply it again. */
    if (api_switched_on)
        apply_api_record_policy();
    return rc;
}

/* KAUDIT_CUPTI_KERNEL_AT=context: the kernel kind, enabled when the first
 * context is created (before any kernel can run in it). */
void enable_deferred_kernel_activity(void)
{
    if (!kernel_at_context)
        return;
    for (size_t i = 0; i < TABLE_SIZE(activity_kinds); i++) {
        const struct activity_kind_name *k = &activity_kinds[i];
        if (k->kind != CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL || kind_enabled[i])
            continue;
        if (!kind_wanted(k, getenv("KAUDIT_CUPTI_KINDS")))
            continue;
        enable_activity(k->kind, k->name);
        kind_enabled[i] = 1;
    }
}
