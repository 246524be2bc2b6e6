/*
 * cupti_callbacks.c - CUPTI's callback API: the one callback CUPTI calls
 * (on_callback) and what it dispatches to: the timing calls' records (their
 * arguments and results), the API records made by callback, and the
 * benchmark's floor and "noop" settings.  A part of the CUPTI backend
 * (cupti_backend.c, cupti_internal.h); on every launch's path, so the
 * dispatch and what it calls stay in this one file.
 */
#define _GNU_SOURCE
#include <cupti.h>
#include <stdatomic.h>
#include <string.h>

#include "cupti_internal.h"
#include "preload_internal.h"

static uint32_t callback_name(CUpti_CallbackDomain domain, uint32_t cbid)
{
    const char *name = NULL;
    if (real_cuptiGetCallbackName(domain, cbid, &name) != CUPTI_SUCCESS || !name)
        return 0;
    return kat_intern(name);
}

/* ---- timing calls ------------------------------------------------------------ */

enum params_layout {
    P_NONE, P_EVENT, P_EVENT_STREAM, P_EVENT_STREAM_FLAGS, P_ELAPSED, P_EVENT_CREATE,
    P_EVENT_CREATE_FLAGS, P_STREAM, P_STREAM_EVENT_FLAGS, P_STREAM_CREATE, P_STREAM_CREATE_FLAGS,
};

struct timing_entry {
    uint32_t cbid;
    uint32_t api;       /* enum kat_timing_api */
    uint32_t layout;    /* enum params_layout: how functionParams is laid out */
};

/* Parameter layouts follow generated_cuda_runtime_api_meta.h and
 * generated_cuda_meta.h; each is a plain struct of the call's arguments. */
static const struct timing_entry runtime_timing[] = {
    { CUPTI_RUNTIME_TRACE_CBID_cudaEventCreate_v3020, KAT_TIMING_EVENT_CREATE, P_EVENT_CREATE },
    { CUPTI_RUNTIME_TRACE_CBID_cudaEventCreateWithFlags_v3020, KAT_TIMING_EVENT_CREATE, P_EVENT_CREATE_FLAGS },
    { CUPTI_RUNTIME_TRACE_CBID_cudaEventRecord_v3020, KAT_TIMING_EVENT_RECORD, P_EVENT_STREAM },
    { CUPTI_RUNTIME_TRACE_CBID_cudaEventRecord_ptsz_v7000, KAT_TIMING_EVENT_RECORD, P_EVENT_STREAM },
    { CUPTI_RUNTIME_TRACE_CBID_cudaEventRecordWithFlags_v11010, KAT_TIMING_EVENT_RECORD, P_EVENT_STREAM_FLAGS },
    { CUPTI_RUNTIME_TRACE_CBID_cudaEventRecordWithFlags_ptsz_v11010, KAT_TIMING_EVENT_RECORD, P_EVENT_STREAM_FLAGS },
    { CUPTI_RUNTIME_TRACE_CBID_cudaEventSynchronize_v3020, KAT_TIMING_EVENT_SYNCHRONIZE, P_EVENT },
    { CUPTI_RUNTIME_TRACE_CBID_cudaEventQuery_v3020, KAT_TIMING_EVENT_QUERY, P_EVENT },
    { CUPTI_RUNTIME_TRACE_CBID_cudaEventDestroy_v3020, KAT_TIMING_EVENT_DESTROY, P_EVENT },
    { CUPTI_RUNTIME_TRACE_CBID_cudaEventElapsedTime_v3020, KAT_TIMING_EVENT_ELAPSED, P_ELAPSED },
    { CUPTI_RUNTIME_TRACE_CBID_cudaEventElapsedTime_v12080, KAT_TIMING_EVENT_ELAPSED, P_ELAPSED },
    { CUPTI_RUNTIME_TRACE_CBID_cudaStreamCreate_v3020, KAT_TIMING_STREAM_CREATE, P_STREAM_CREATE },
    { CUPTI_RUNTIME_TRACE_CBID_cudaStreamCreateWithFlags_v5000, KAT_TIMING_STREAM_CREATE, P_STREAM_CREATE_FLAGS },
    { CUPTI_RUNTIME_TRACE_CBID_cudaStreamCreateWithPriority_v5050, KAT_TIMING_STREAM_CREATE, P_STREAM_CREATE_FLAGS },
    { CUPTI_RUNTIME_TRACE_CBID_cudaStreamDestroy_v5050, KAT_TIMING_STREAM_DESTROY, P_STREAM },
    { CUPTI_RUNTIME_TRACE_CBID_cudaStreamWaitEvent_v3020, KAT_TIMING_STREAM_WAIT_EVENT, P_STREAM_EVENT_FLAGS },
    { CUPTI_RUNTIME_TRACE_CBID_cudaStreamWaitEvent_ptsz_v7000, KAT_TIMING_STREAM_WAIT_EVENT, P_STREAM_EVENT_FLAGS },
    { CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_v3020, KAT_TIMING_STREAM_SYNCHRONIZE, P_STREAM },
    { CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_ptsz_v7000, KAT_TIMING_STREAM_SYNCHRONIZE, P_STREAM },
    { CUPTI_RUNTIME_TRACE_CBID_cudaDeviceSynchronize_v3020, KAT_TIMING_DEVICE_SYNCHRONIZE, P_NONE },
};

static const struct timing_entry driver_timing[] = {
    { CUPTI_DRIVER_TRACE_CBID_cuEventCreate, KAT_TIMING_EVENT_CREATE, P_EVENT_CREATE_FLAGS },
    { CUPTI_DRIVER_TRACE_CBID_cuEventRecord, KAT_TIMING_EVENT_RECORD, P_EVENT_STREAM },
    { CUPTI_DRIVER_TRACE_CBID_cuEventRecord_ptsz, KAT_TIMING_EVENT_RECORD, P_EVENT_STREAM },
    { CUPTI_DRIVER_TRACE_CBID_cuEventRecordWithFlags, KAT_TIMING_EVENT_RECORD, P_EVENT_STREAM_FLAGS },
    { CUPTI_DRIVER_TRACE_CBID_cuEventRecordWithFlags_ptsz, KAT_TIMING_EVENT_RECORD, P_EVENT_STREAM_FLAGS },
    { CUPTI_DRIVER_TRACE_CBID_cuEventSynchronize, KAT_TIMING_EVENT_SYNCHRONIZE, P_EVENT },
    { CUPTI_DRIVER_TRACE_CBID_cuEventQuery, KAT_TIMING_EVENT_QUERY, P_EVENT },
    { CUPTI_DRIVER_TRACE_CBID_cuEventDestroy_v2, KAT_TIMING_EVENT_DESTROY, P_EVENT },
    { CUPTI_DRIVER_TRACE_CBID_cuEventElapsedTime, KAT_TIMING_EVENT_ELAPSED, P_ELAPSED },
    { CUPTI_DRIVER_TRACE_CBID_cuEventElapsedTime_v2, KAT_TIMING_EVENT_ELAPSED, P_ELAPSED },
    { CUPTI_DRIVER_TRACE_CBID_cuStreamCreate, KAT_TIMING_STREAM_CREATE, P_STREAM_CREATE_FLAGS },
    { CUPTI_DRIVER_TRACE_CBID_cuStreamCreateWithPriority, KAT_TIMING_STREAM_CREATE, P_STREAM_CREATE_FLAGS },
    { CUPTI_DRIVER_TRACE_CBID_cuStreamDestroy_v2, KAT_TIMING_STREAM_DESTROY, P_STREAM },
    { CUPTI_DRIVER_TRACE_CBID_cuStreamWaitEvent, KAT_TIMING_STREAM_WAIT_EVENT, P_STREAM_EVENT_FLAGS },
    { CUPTI_DRIVER_TRACE_CBID_cuStreamWaitEvent_ptsz, KAT_TIMING_STREAM_WAIT_EVENT, P_STREAM_EVENT_FLAGS },
    { CUPTI_DRIVER_TRACE_CBID_cuStreamSynchronize, KAT_TIMING_STREAM_SYNCHRONIZE, P_STREAM },
    { CUPTI_DRIVER_TRACE_CBID_cuStreamSynchronize_ptsz, KAT_TIMING_STREAM_SYNCHRONIZE, P_STREAM },
    { CUPTI_DRIVER_TRACE_CBID_cuCtxSynchronize, KAT_TIMING_DEVICE_SYNCHRONIZE, P_NONE },
    { CUPTI_DRIVER_TRACE_CBID_cuCtxSynchronize_v2, KAT_TIMING_DEVICE_SYNCHRONIZE, P_NONE },
};

/* Every runtime and driver callback asks whether it is a timing call: by
 * callback id, one load (index + 1, 0 for none) instead of a scan of the
 * table, since every launch passes here four times.  Filled before the
 * first callback is enabled. */
static uint8_t runtime_timing_at[CUPTI_RUNTIME_TRACE_CBID_SIZE];
static uint8_t driver_timing_at[CUPTI_DRIVER_TRACE_CBID_SIZE];

void index_timing_tables(void)
{
    _Static_assert(TABLE_SIZE(runtime_timing) < 255 && TABLE_SIZE(driver_timing) < 255,
                   "timing tables indexed by uint8_t");
    for (size_t i = 0; i < TABLE_SIZE(runtime_timing); i++)
        if (runtime_timing[i].cbid < CUPTI_RUNTIME_TRACE_CBID_SIZE)
            runtime_timing_at[runtime_timing[i].cbid] = (uint8_t)(i + 1);
    for (size_t i = 0; i < TABLE_SIZE(driver_timing); i++)
        if (driver_timing[i].cbid < CUPTI_DRIVER_TRACE_CBID_SIZE)
            driver_timing_at[driver_timing[i].cbid] = (uint8_t)(i + 1);
}

static const struct timing_entry *find_timing(CUpti_CallbackDomain domain, uint32_t cbid)
{
    if (domain == CUPTI_CB_DOMAIN_RUNTIME_API)
        return cbid < CUPTI_RUNTIME_TRACE_CBID_SIZE && runtime_timing_at[cbid]
                   ? &runtime_timing[runtime_timing_at[cbid] - 1] : NULL;
    return cbid < CUPTI_DRIVER_TRACE_CBID_SIZE && driver_timing_at[cbid]
               ? &driver_timing[driver_timing_at[cbid] - 1] : NULL;
}

/* Driver timing calls made inside a runtime timing call are the same call. */
static KAT_TLS uint32_t runtime_timing_depth;

static void fill_timing_params(struct kat_timing_call_rec *out, uint32_t layout,
                               const void *params)
{
    if (!params)
        return;
    switch (layout) {
    case P_EVENT: {
        const struct { void *event; } *p = params;
        out->event = (uint64_t)(uintptr_t)p->event;
        break;
    }
    case P_EVENT_STREAM: {
        const struct { void *event; void *stream; } *p = params;
        out->event = (uint64_t)(uintptr_t)p->event;
        out->stream = (uint64_t)(uintptr_t)p->stream;
        break;
    }
    case P_EVENT_STREAM_FLAGS: {
        const struct { void *event; void *stream; unsigned flags; } *p = params;
        out->event = (uint64_t)(uintptr_t)p->event;
        out->stream = (uint64_t)(uintptr_t)p->stream;
        out->flags = p->flags;
        break;
    }
    case P_ELAPSED: {
        const struct { float *ms; void *start; void *end; } *p = params;
        out->event = (uint64_t)(uintptr_t)p->start;
        out->event2 = (uint64_t)(uintptr_t)p->end;
        if (p->ms && out->status == 0)
            out->elapsed_ms = *p->ms; /* the value the program received */
        break;
    }
    case P_EVENT_CREATE:
    case P_EVENT_CREATE_FLAGS: {
        const struct { void **event; unsigned flags; } *p = params;
        if (p->event && out->status == 0)
            out->event = (uint64_t)(uintptr_t)*p->event;
        if (layout == P_EVENT_CREATE_FLAGS)
            out->flags = p->flags;
        break;
    }
    case P_STREAM: {
        const struct { void *stream; } *p = params;
        out->stream = (uint64_t)(uintptr_t)p->stream;
        break;
    }
    case P_STREAM_EVENT_FLAGS: {
        const struct { void *stream; void *event; unsigned flags; } *p = params;
        out->stream = (uint64_t)(uintptr_t)p->stream;
        out->event = (uint64_t)(uintptr_t)p->event;
        out->flags = p->flags;
        break;
    }
    case P_STREAM_CREATE:
    case P_STREAM_CREATE_FLAGS: {
        const struct { void **stream; unsigned flags; } *p = params;
        if (p->stream && out->status == 0)
            out->stream = (uint64_t)(uintptr_t)*p->stream;
        if (layout == P_STREAM_CREATE_FLAGS)
            out->flags = p->flags;
        break;
    }
    default:
        break;
    }
}

/*
 * CUPTI's id of the stream a call acts on, plus one (0: unknown).  With
 * CUDA_EVENT activity off (enable_activity_kinds says why) this is what
 * places an event record, a stream wait or a stream synchronization on the
 * stream ids the kernel records carry.
 */
static uint32_t timing_stream_id(uint32_t api, const CUpti_CallbackData *data, uint64_t stream)
{
    /* Not after a destroy: the handle is gone by the exit callback. */
    if (api != KAT_TIMING_EVENT_RECORD && api != KAT_TIMING_STREAM_WAIT_EVENT
        && api != KAT_TIMING_STREAM_SYNCHRONIZE)
        return 0;
    if (!real_cuptiGetStreamIdEx || !data->context)
        return 0;
    const char *name = data->functionName ? data->functionName : "";
    uint8_t per_thread = strstr(name, "_ptsz") || strstr(name, "_ptds");
    uint32_t id = 0;
    if (real_cuptiGetStreamIdEx(data->context, (CUstream)(uintptr_t)stream, per_thread, &id) != CUPTI_SUCCESS
        || id == UINT32_MAX)
        return 0;
    return id + 1;
}

static void timing_callback(CUpti_CallbackDomain domain, const struct timing_entry *entry,
                            const CUpti_CallbackData *data)
{
    int runtime = domain == CUPTI_CB_DOMAIN_RUNTIME_API;
    if (data->callbackSite == CUPTI_API_ENTER) {
        if (runtime)
            runtime_timing_depth++;
        if (data->correlationData)
            *data->correlationData = kat_now_ns();
        return;
    }
    if (runtime) {
        if (runtime_timing_depth)
            runtime_timing_depth--;
    } else if (runtime_timing_depth) {
        return;
    }
    struct kat_timing_call_rec out = {
        .enter_ns = data->correlationData ? *data->correlationData : 0,
        .exit_ns = kat_now_ns(),
        .api = entry->api,
        .domain = runtime ? KAT_API_RUNTIME : KAT_API_DRIVER,
        .cbid = entry->cbid,
        .thread_id = kat_tid(),
        .correlation_id = data->correlationId,
        .name_string = kat_intern(data->functionName),
    };
    if (data->functionReturnValue)
        out.status = *(const int *)data->functionReturnValue;
    fill_timing_params(&out, entry->layout, data->functionParams);
    if (out.status == 0)
        out.stream_id_plus_one = timing_stream_id(entry->api, data, out.stream);
    kat_emit(KAT_REC_TIMING_CALL, &out, sizeof(out));
}

/* ---- API records, made by callback ---------------------------------------------- */

/*
 * Every kernel launch needs its API record (the thread and host time that
 * attribute the kernel) and, inside a vendor call, the external correlation
 * record that puts the kernel in that call's window.  We make both from
 * CUPTI callbacks rather than from RUNTIME/DRIVER activity: measured on the
 * H200 inside one process (bench/kaudit_ab.py, bench/notes/overhead.md), having
 * API activity enabled cost a launch-bound PyTorch loop two to three times
 * what a callback on every recorded API costs, even with the launch APIs
 * filtered out of it.  The records are the same types: the API record from
 * the callback's enter and exit, and the external correlation from the
 * innermost vendor call open on this thread (the same stack CUPTI's external
 * correlation keeps; so no id is pushed into CUPTI then).
 *
 * The APIs recorded are those of the default policy: all but the pure
 * queries (is_query).  Only when our subscription holds and every callback
 * could be enabled; otherwise (a profiler subscribed first) API activity
 * records them, as before.
 */
/* Per API domain: which callback ids we record, and their interned names. */
struct api_domain {
    CUpti_CallbackDomain domain;
    uint32_t size;
    uint8_t *recorded;
    _Atomic uint32_t *name_id;
};
static uint8_t recorded_runtime[CUPTI_RUNTIME_TRACE_CBID_SIZE];
static uint8_t recorded_driver[CUPTI_DRIVER_TRACE_CBID_SIZE];
static _Atomic uint32_t api_name_runtime[CUPTI_RUNTIME_TRACE_CBID_SIZE];
static _Atomic uint32_t api_name_driver[CUPTI_DRIVER_TRACE_CBID_SIZE];
static const struct api_domain api_domains[] = {
    { CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_SIZE, recorded_runtime, api_name_runtime },
    { CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_SIZE, recorded_driver, api_name_driver },
};
static int n_recorded_apis, n_query_apis;

static void find_recorded_apis(void)
{
    n_recorded_apis = n_query_apis = 0;
    for (size_t d = 0; d < 2; d++) {
        const struct api_domain *dom = &api_domains[d];
        for (uint32_t cbid = 1; cbid < dom->size; cbid++) {
            const char *name = NULL;
            if (real_cuptiGetCallbackName(dom->domain, cbid, &name) != CUPTI_SUCCESS || !name)
                continue;
            dom->recorded[cbid] = !is_query(name);
            n_recorded_apis += dom->recorded[cbid];
            n_query_apis += !dom->recorded[cbid];
        }
    }
}

static const struct api_domain *api_domain_of(CUpti_CallbackDomain domain)
{
    return domain == CUPTI_CB_DOMAIN_RUNTIME_API ? &api_domains[0]
           : domain == CUPTI_CB_DOMAIN_DRIVER_API ? &api_domains[1]
                                                  : NULL;
}

static int is_recorded_api(CUpti_CallbackDomain domain, CUpti_CallbackId cbid)
{
    const struct api_domain *dom = api_domain_of(domain);
    return dom && cbid < dom->size && dom->recorded[cbid];
}

/* The interned name of an API, looked up once per callback id. */
static uint32_t api_name(CUpti_CallbackDomain domain, CUpti_CallbackId cbid)
{
    _Atomic uint32_t *slot = &api_domain_of(domain)->name_id[cbid];
    uint32_t id = atomic_load_explicit(slot, memory_order_relaxed);
    if (id == 0) {
        id = callback_name(domain, cbid);
        atomic_store_explicit(slot, id, memory_order_relaxed);
    }
    return id;
}

/* An API activity record's name (KAUDIT_API_RECORDS=all): through the
 * same per-id cache, so converting it takes no writer lock once its id is
 * known. */
uint32_t activity_api_name(CUpti_CallbackDomain domain, uint32_t cbid, struct kat_chunk *chunk)
{
    const struct api_domain *dom = api_domain_of(domain);
    int cached = dom && cbid < dom->size;
    if (!cached || atomic_load_explicit(&dom->name_id[cbid], memory_order_relaxed) == 0)
        append_before_string(chunk);
    return cached ? api_name(domain, cbid) : callback_name(domain, cbid);
}

/*
 * The correlation id of the recorded runtime call this thread is inside, 0
 * when none.  CUPTI gives the driver calls a runtime call makes the runtime
 * call's correlation id (seen on the H200 for every nested driver call of a
 * PyTorch session), so their records would repeat what the
 * runtime call's record says (thread, correlation id, a time inside its
 * span): one per kernel launched through the runtime, on the launch path and
 * in the trace.  They are left out; a driver call made directly (Triton,
 * cuLaunchKernel in a raw CUDA program) has an id of its own and is recorded.
 * Nested runtime calls would only clear this early, which records a
 * duplicate, never loses a record.
 */
static KAT_TLS uint32_t open_runtime_correlation;

static int inside_recorded_runtime_call(CUpti_CallbackDomain domain, const CUpti_CallbackData *data)
{
    return domain == CUPTI_CB_DOMAIN_DRIVER_API && data->correlationId != 0
           && data->correlationId == open_runtime_correlation;
}

static void api_callback(CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                         const CUpti_CallbackData *data)
{
    if (inside_recorded_runtime_call(domain, data))
        return;
    if (domain == CUPTI_CB_DOMAIN_RUNTIME_API)
        open_runtime_correlation = data->callbackSite == CUPTI_API_ENTER ? data->correlationId : 0;
    if (data->callbackSite == CUPTI_API_ENTER) {
        if (data->correlationData)
            *data->correlationData = kat_now_ns();
        return;
    }
    /* Inside a vendor call the record names the call in its tail (format
     * 2): one record per launch instead of an API record and a window
     * record, on the launch path. */
    struct {
        struct kat_api_rec api;
        struct kat_api_vendor_tail tail;
    } out = {
        .api = {
            .start_ns = data->correlationData ? *data->correlationData : 0,
            .end_ns = kat_now_ns(),
            .domain = domain == CUPTI_CB_DOMAIN_RUNTIME_API ? KAT_API_RUNTIME : KAT_API_DRIVER,
            .cbid = cbid,
            .thread_id = kat_tid(),
            .correlation_id = data->correlationId,
            .return_value = data->functionReturnValue ? *(const uint32_t *)data->functionReturnValue : 0,
            .name_string = api_name(domain, cbid),
        },
        .tail = { .vendor_call_id = kat_vendor_current_call() },
    };
    _Static_assert(sizeof out == sizeof out.api + sizeof out.tail, "the tail follows the record");
    kat_emit_staged(KAT_REC_API, &out, out.tail.vendor_call_id ? sizeof out : sizeof out.api);
}

static int set_api_callbacks(int on)
{
    int rc = 0;
    for (size_t d = 0; d < 2; d++)
        for (uint32_t cbid = 1; cbid < api_domains[d].size; cbid++)
            if (api_domains[d].recorded[cbid])
                rc |= real_cuptiEnableCallback((uint32_t)on, subscriber, api_domains[d].domain, cbid)
                      != CUPTI_SUCCESS;
    return rc ? -1 : 0;
}

/*
 * The benchmark's floor (bench/bench_control.c, setting "floor"): what a
 * CUPTI client that records nothing costs, as bench/cupti_toggle.c's
 * cb_kernel client does from process start (bench/notes/overhead.md, "the floor"):
 * kernel activity whose records are only counted, and a callback on every
 * launch API that notes the correlation id and a time at entry.  Alternated
 * with kaudit recording in one process, it measures what kaudit adds above
 * that floor on one machine state.  While it is on, no record is kept (the
 * trace says the control was used, so it is never evidence).
 */
static KAT_TLS uint64_t bench_floor_note[2];
/* The benchmark's "noop" setting: our callbacks stay enabled and return at once
 * (what CUPTI's dispatch of them costs without our work). */
static atomic_int bench_noop;

void kat_cupti_bench_noop(int on)
{
    atomic_store(&bench_noop, on);
}

static void bench_floor_callback(const CUpti_CallbackData *data)
{
    if (data->callbackSite != CUPTI_API_ENTER)
        return;
    bench_floor_note[0] = kat_realtime_ns();   /* the floor's clock as in every session before the TSC clock */
    bench_floor_note[1] = data->correlationId;
}

static int is_launch_api(CUpti_CallbackDomain domain, uint32_t cbid)
{
    const char *name = NULL;
    if (real_cuptiGetCallbackName(domain, cbid, &name) != CUPTI_SUCCESS || !name)
        return 0;
    const char *prefix = domain == CUPTI_CB_DOMAIN_RUNTIME_API ? "cudaLaunch" : "cuLaunch";
    return strncmp(name, prefix, strlen(prefix)) == 0;
}

int kat_cupti_bench_floor(int on)
{
    if (!kat_cupti_active())
        return -1;
    int was = atomic_exchange(&bench_floor, on);
    if (!on && !was)
        return 0;
    /* on: the launch APIs' callbacks on; off after on: off again (the next
     * setting enables what it records) */
    int rc = 0;
    static const struct { CUpti_CallbackDomain domain; uint32_t size; } domains[] = {
        { CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_SIZE },
        { CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_SIZE },
    };
    for (size_t d = 0; d < 2; d++)
        for (uint32_t cbid = 1; cbid < domains[d].size; cbid++)
            if (is_launch_api(domains[d].domain, cbid))
                rc |= real_cuptiEnableCallback((uint32_t)on, subscriber, domains[d].domain, cbid) != CUPTI_SUCCESS;
    return rc ? -1 : 0;
}

void CUPTIAPI on_callback(void *userdata, CUpti_CallbackDomain domain,
                                 CUpti_CallbackId cbid, const void *cbdata)
{
    if (atomic_load_explicit(&bench_floor, memory_order_relaxed)
        && (domain == CUPTI_CB_DOMAIN_RUNTIME_API || domain == CUPTI_CB_DOMAIN_DRIVER_API)) {
        bench_floor_callback(cbdata);
        return;
    }
    if (atomic_load_explicit(&bench_noop, memory_order_relaxed)
        && (domain == CUPTI_CB_DOMAIN_RUNTIME_API || domain == CUPTI_CB_DOMAIN_DRIVER_API))
        return;
    if (api_by_callback && is_recorded_api(domain, cbid))
        api_callback(domain, cbid, cbdata);
    switch (domain) {
    case CUPTI_CB_DOMAIN_RESOURCE:
        if (cbid == CUPTI_CBID_RESOURCE_MODULE_LOADED) {
            record_module(cbdata);
        } else if (cbid == CUPTI_CBID_RESOURCE_CONTEXT_CREATED) {
            kat_libraries_poll();
            enable_deferred_kernel_activity();
            kat_writer_start_spare_thread();
        } else if (cbid == CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING) {
            /* The context's records must be out before it goes. */
            real_cuptiActivityFlushAll(0);
        }
        break;
    case CUPTI_CB_DOMAIN_RUNTIME_API:
    case CUPTI_CB_DOMAIN_DRIVER_API: {
        const struct timing_entry *e = find_timing(domain, cbid);
        if (e)
            timing_callback(domain, e, cbdata);
        break;
    }
    default:
        break;
    }
}

int set_timing_callbacks(int on)
{
    int rc = 0;
    for (size_t i = 0; i < TABLE_SIZE(runtime_timing); i++)
        rc |= real_cuptiEnableCallback((uint32_t)on, subscriber, CUPTI_CB_DOMAIN_RUNTIME_API,
                                       runtime_timing[i].cbid) != CUPTI_SUCCESS;
    for (size_t i = 0; i < TABLE_SIZE(driver_timing); i++)
        rc |= real_cuptiEnableCallback((uint32_t)on, subscriber, CUPTI_CB_DOMAIN_DRIVER_API,
                                       driver_timing[i].cbid) != CUPTI_SUCCESS;
    return rc ? -1 : 0;
}

int kat_cupti_set_callbacks(int on)
{
    if (!kat_cupti_active())
        return -1;
    int rc = set_timing_callbacks(on);
    if (api_by_callback)
        rc |= set_api_callbacks(on);
    return rc;
}

/*
 * After our subscription holds, under the default policy: every recorded API
 * gets a callback, and RUNTIME/DRIVER activity stays off (enable_activity_kinds).
 * All or nothing: if any callback cannot be enabled, API activity records
 * the calls instead.
 */
void record_apis_by_callback(void)
{
    if (api_policy() != API_EVIDENCE)
        return;
    find_recorded_apis();
    if (n_recorded_apis == 0 || set_api_callbacks(1) != 0) {
        set_api_callbacks(0);
        return;
    }
    api_by_callback = 1;
    kat_health(KAT_HEALTH_API_RECORD_POLICY,
               "evidence by callback: query APIs not recorded, nor driver calls inside a recorded "
               "runtime call (its correlation id), the others recorded by callback, no API activity",
               n_query_apis);
}
