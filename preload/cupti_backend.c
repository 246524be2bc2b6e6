/*
 * cupti_backend.c - CUPTI: the complete record of what ran on the GPU.
 *
 * The CUDA driver loads this library through CUDA_INJECTION64_PATH and calls
 * InitializeInjection() while it initializes, before the program (or
 * torch.profiler) can subscribe.  We use the libcupti the process already
 * uses (PyTorch ships its own copy), never a second one, and call it only
 * through pointers from its own handle: this library also exports a few
 * cupti* names to notice a foreign subscriber, so a direct call would land on
 * our own wrapper.
 *
 * Activity records (kernels, API calls, copies, syncs, events, external
 * correlations) arrive in buffers on CUPTI's thread and are converted into
 * trace records there.  The callback API adds what activity records lack:
 * module images (for digests), and the arguments and results of timing calls
 * (which event, which stream, the elapsed milliseconds returned).
 */
#define _GNU_SOURCE
#include <cupti.h>
#include <dlfcn.h>
#include <execinfo.h>
#include <link.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "preload_internal.h"

#define ACTIVITY_BUFFER_BYTES (8u << 20)
#define FLUSH_PERIOD_MS 500u

/* The CUPTI functions we use, from the process's own libcupti. */
#define CUPTI_FUNCTIONS(X)                                                                 \
    X(cuptiGetVersion, CUptiResult, (uint32_t *))                                          \
    X(cuptiGetResultString, CUptiResult, (CUptiResult, const char **))                     \
    X(cuptiSubscribe, CUptiResult, (CUpti_SubscriberHandle *, CUpti_CallbackFunc, void *)) \
    X(cuptiEnableCallback, CUptiResult,                                                    \
      (uint32_t, CUpti_SubscriberHandle, CUpti_CallbackDomain, CUpti_CallbackId))          \
    X(cuptiGetCallbackName, CUptiResult, (CUpti_CallbackDomain, uint32_t, const char **)) \
    X(cuptiActivityEnable, CUptiResult, (CUpti_ActivityKind))                              \
    X(cuptiActivityRegisterCallbacks, CUptiResult,                                         \
      (CUpti_BuffersCallbackRequestFunc, CUpti_BuffersCallbackCompleteFunc))               \
    X(cuptiActivityGetNextRecord, CUptiResult, (uint8_t *, size_t, CUpti_Activity **))     \
    X(cuptiActivityGetNumDroppedRecords, CUptiResult, (CUcontext, uint32_t, size_t *))     \
    X(cuptiActivityFlushAll, CUptiResult, (uint32_t))                                      \
    X(cuptiActivityPushExternalCorrelationId, CUptiResult,                                 \
      (CUpti_ExternalCorrelationKind, uint64_t))                                           \
    X(cuptiActivityPopExternalCorrelationId, CUptiResult,                                  \
      (CUpti_ExternalCorrelationKind, uint64_t *))                                         \
    X(cuptiGetContextId, CUptiResult, (CUcontext, uint32_t *))

#define CUPTI_OPTIONAL_FUNCTIONS(X)                                                        \
    X(cuptiActivityFlushPeriod, CUptiResult, (uint32_t))                                   \
    X(cuptiActivityRegisterTimestampCallback, CUptiResult, (CUpti_TimestampCallbackFunc))  \
    X(cuptiSetThreadIdType, CUptiResult, (CUpti_ActivityThreadIdType))                     \
    X(cuptiGetTimestamp, CUptiResult, (uint64_t *))                                        \
    X(cuptiActivityEnableCudaEventDeviceTimestamps, CUptiResult, (uint8_t))                \
    X(cuptiActivitySetAttribute, CUptiResult, (CUpti_ActivityAttribute, size_t *, void *))  \
    X(cuptiActivityDisable, CUptiResult, (CUpti_ActivityKind))                             \
    X(cuptiGetStreamIdEx, CUptiResult, (CUcontext, CUstream, uint8_t, uint32_t *))

#define DECLARE_POINTER(name, ret, args) static ret(*real_##name) args;
CUPTI_FUNCTIONS(DECLARE_POINTER)
CUPTI_OPTIONAL_FUNCTIONS(DECLARE_POINTER)

static void *cupti_handle;
static atomic_int cupti_recording;
static atomic_int injection_done;
static atomic_llong buffers_lost;
static atomic_llong records_dropped;
static CUpti_SubscriberHandle subscriber;
static int api_by_callback;             /* API records made by callback (see api_callback) */
static int thread_id_type_system;       /* KAUDIT_CUPTI_THREAD_ID (apply_tuning) */
static int kernel_at_context;           /* KAUDIT_CUPTI_KERNEL_AT (apply_tuning) */

int kat_cupti_active(void)
{
    return atomic_load_explicit(&cupti_recording, memory_order_acquire);
}

void *kat_cupti_symbol(const char *name)
{
    return cupti_handle ? dlsym(cupti_handle, name) : NULL;
}

int kat_cupti_push_external(uint64_t id)
{
    /* With API records made by callback, the vendor window comes from our
     * own stack of open calls (api_callback), not from CUPTI's. */
    if (!kat_cupti_active() || api_by_callback)
        return -1;
    return real_cuptiActivityPushExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM2, id)
                   == CUPTI_SUCCESS ? 0 : -1;
}

void kat_cupti_pop_external(void)
{
    uint64_t last;
    if (kat_cupti_active())
        real_cuptiActivityPopExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM2, &last);
}

static const char *result_text(CUptiResult rc)
{
    const char *text = NULL;
    if (real_cuptiGetResultString && real_cuptiGetResultString(rc, &text) == CUPTI_SUCCESS && text)
        return text;
    return "unknown CUPTI error";
}

/* ---- finding the process's libcupti ---------------------------------------- */

struct sibling_search {
    const char *const *anchors;
    char found[1024];
};

/* A libcupti next to the CUDA library the program loaded is the one that
 * belongs to it (PyTorch: site-packages/nvidia/cu13/lib). */
static int find_sibling(struct dl_phdr_info *info, size_t size, void *data)
{
    struct sibling_search *search = data;
    const char *path = info->dlpi_name;
    if (!path || !path[0] || search->found[0])
        return 0;
    const char *base = strrchr(path, '/');
    if (!base)
        return 0;
    for (const char *const *anchor = search->anchors; *anchor; anchor++) {
        if (strncmp(base + 1, *anchor, strlen(*anchor)) == 0) {
            size_t dir_len = (size_t)(base - path);
            if (dir_len + sizeof("/libcupti.so.13") < sizeof(search->found)) {
                memcpy(search->found, path, dir_len);
                strcpy(search->found + dir_len, "/libcupti.so.13");
            }
            return 1;
        }
    }
    return 0;
}

static void *open_cupti(char *used, size_t used_size)
{
    void *handle = dlopen("libcupti.so.13", RTLD_LAZY | RTLD_NOLOAD);
    if (handle) {
        kat_strlcpy(used, "libcupti.so.13 (already loaded)", used_size);
        return handle;
    }
    const char *configured = getenv(KAT_ENV_CUPTI);
    if (configured && configured[0]) {
        handle = dlopen(configured, RTLD_LAZY | RTLD_LOCAL);
        if (handle) {
            kat_strlcpy(used, configured, used_size);
            return handle;
        }
    }
    static const char *const anchors[] = { "libcudart.so", "libcublas.so", "libcublasLt.so",
                                           "libcudnn.so", NULL };
    struct sibling_search search = { .anchors = anchors };
    dl_iterate_phdr(find_sibling, &search);
    if (search.found[0]) {
        handle = dlopen(search.found, RTLD_LAZY | RTLD_LOCAL);
        if (handle) {
            kat_strlcpy(used, search.found, used_size);
            return handle;
        }
    }
    handle = dlopen("libcupti.so.13", RTLD_LAZY | RTLD_LOCAL);
    if (handle) {
        kat_strlcpy(used, "libcupti.so.13 (library search path)", used_size);
        return handle;
    }
    /* Last, the toolkit's own copy: a plain nvcc program links cudart
     * statically and loads no CUDA library that CUPTI could sit beside. */
    const char *cuda_home = getenv("CUDA_HOME");
    char path[1024];
    const char *const toolkit[] = { "/extras/CUPTI/lib64/libcupti.so.13", "/lib64/libcupti.so.13" };
    const char *const roots[] = { cuda_home, "/usr/local/cuda" };
    for (size_t r = 0; r < 2; r++) {
        for (size_t t = 0; t < 2 && roots[r] && roots[r][0]; t++) {
            snprintf(path, sizeof(path), "%s%s", roots[r], toolkit[t]);
            handle = dlopen(path, RTLD_LAZY | RTLD_LOCAL);
            if (handle) {
                kat_strlcpy(used, path, used_size);
                return handle;
            }
        }
    }
    return NULL;
}

static int load_cupti_functions(char *missing, size_t missing_size)
{
#define LOAD_REQUIRED(name, ret, args)                                        \
    real_##name = (ret(*) args)dlsym(cupti_handle, #name);                    \
    if (!real_##name) {                                                       \
        kat_strlcpy(missing, #name, missing_size);                            \
        return -1;                                                            \
    }
#define LOAD_OPTIONAL(name, ret, args) real_##name = (ret(*) args)dlsym(cupti_handle, #name);
    CUPTI_FUNCTIONS(LOAD_REQUIRED)
    CUPTI_OPTIONAL_FUNCTIONS(LOAD_OPTIONAL)
    return 0;
}

/* ---- activity buffers ------------------------------------------------------ */

/* KAUDIT_CUPTI_BUFFER_MB overrides the size (for measuring its effect). */
static size_t activity_buffer_bytes = ACTIVITY_BUFFER_BYTES;

/* The benchmark's floor is on (kat_cupti_bench_floor): records only counted. */
static atomic_int bench_floor;
static _Atomic uint64_t bench_floor_records;

/*
 * Zeroed buffers, recycled.  CUPTI asks for a buffer on the thread that makes
 * the CUDA call (buffers are per thread), and unless told that the buffers
 * it gets are zeroed it clears each one there, before the launch that asked
 * returns: 8 MiB of memset and first-touch page faults on the program's own
 * launch path, after every periodic flush.  So we tell it
 * (CUPTI_ACTIVITY_ATTR_ZEROED_OUT_ACTIVITY_BUFFER) and keep that promise:
 * a new buffer comes from calloc (fresh pages, zero without a memset), and a
 * completed one is cleared on CUPTI's worker thread, where its records were
 * read, and kept for the next request.  Only the bytes CUPTI filled (plus a
 * margin) need clearing; the rest were never written.
 * KAUDIT_CUPTI_BUFFER_POOL=0 goes back to plain buffers that CUPTI clears.
 */
#define BUFFER_POOL_SLOTS 4
#define BUFFER_CLEAR_MARGIN (64u << 10)

static int buffer_pool_on;
static pthread_mutex_t buffer_pool_lock = PTHREAD_MUTEX_INITIALIZER;
static uint8_t *buffer_pool[BUFFER_POOL_SLOTS];
static int buffer_pool_count;

static uint8_t *take_pooled_buffer(void)
{
    uint8_t *buffer = NULL;
    pthread_mutex_lock(&buffer_pool_lock);
    if (buffer_pool_count > 0)
        buffer = buffer_pool[--buffer_pool_count];
    pthread_mutex_unlock(&buffer_pool_lock);
    return buffer;
}

/* Clears and keeps BUFFER; frees it when the pool is full. */
static void return_buffer(uint8_t *buffer, size_t valid_size)
{
    if (!buffer_pool_on) {
        free(buffer);
        return;
    }
    size_t dirty = valid_size + BUFFER_CLEAR_MARGIN;
    memset(buffer, 0, dirty < activity_buffer_bytes ? dirty : activity_buffer_bytes);
    pthread_mutex_lock(&buffer_pool_lock);
    if (buffer_pool_count < BUFFER_POOL_SLOTS) {
        buffer_pool[buffer_pool_count++] = buffer;
        buffer = NULL;
    }
    pthread_mutex_unlock(&buffer_pool_lock);
    free(buffer);
}

static void CUPTIAPI buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records)
{
    void *memory = NULL;
    if (buffer_pool_on) {
        memory = take_pooled_buffer();
        if (!memory)
            memory = calloc(1, activity_buffer_bytes);
    } else if (posix_memalign(&memory, 8, activity_buffer_bytes) != 0) {
        memory = NULL;
    }
    if (!memory)
        atomic_fetch_add(&buffers_lost, 1);
    *buffer = memory;
    *size = memory ? activity_buffer_bytes : 0;
    *max_records = 0;
}

/* Before the buffer callbacks are registered: CUPTI reads the attribute
 * when it takes a buffer. */
static void setup_buffer_pool(void)
{
    const char *pool = getenv("KAUDIT_CUPTI_BUFFER_POOL");
    if (pool && strcmp(pool, "0") == 0)
        return;
    uint8_t zeroed = 1;
    size_t value_size = sizeof zeroed;
    buffer_pool_on = real_cuptiActivitySetAttribute
                     && real_cuptiActivitySetAttribute(CUPTI_ACTIVITY_ATTR_ZEROED_OUT_ACTIVITY_BUFFER,
                                                       &value_size, &zeroed) == CUPTI_SUCCESS;
}

static uint32_t callback_name(CUpti_CallbackDomain domain, uint32_t cbid)
{
    const char *name = NULL;
    if (real_cuptiGetCallbackName(domain, cbid, &name) != CUPTI_SUCCESS || !name)
        return 0;
    return kat_intern(name);
}

/*
 * Converting a completed buffer.  Each record is built into a chunk of the
 * converting call's own, outside the writer lock, and the chunk goes into
 * the trace with one lock, a copy (kat_emit_chunk): the lock the launching
 * thread's vendor records take is held once per chunk (16 KiB: about 150
 * kernel records) instead of once per record, and only for the copy.  What needs the writer's string table (a kernel name not seen
 * before) still takes the lock, and the chunk so far is appended first
 * (append_before_string): the string's record then lands where one
 * kat_emit per record put it, after the records converted before it and
 * before the one that uses it.  So the records this thread writes, and
 * their order, are those of one kat_emit per record (tests/
 * test_run_recording.c chunked_conversion_*, tests/test_trace_chunks.c);
 * the last chunk is appended before the buffer callback returns, so a flush
 * (kat_cupti_flush) has every record written when it returns, as before.
 * Off by default (KAUDIT_CUPTI_CHUNK_KB=0, one record per lock): on the H200
 * 16 KiB chunks made the launch-bound loop slower, not faster (in process,
 * above the CUPTI floor with callbacks, the same build both ways;
 * bench/notes/overhead.md, "Ninth session"): fewer acquisitions, but each
 * holds the lock for a 16 KiB copy,
 * and a launching thread's vendor record that arrives then waits for all of
 * it.  KAUDIT_CUPTI_CHUNK_KB=N converts into chunks of N KiB.
 */
static uint32_t convert_chunk_bytes = 0;

static void append_chunk(struct kat_chunk *chunk)
{
    /* the next segment mapped ahead, outside the lock, before a copy that
     * may cross into it */
    kat_writer_prepare_spare();
    kat_emit_chunk(chunk);
}

/* One converted record: into the chunk, or, without one (or for a record
 * larger than a chunk), stored at once after whatever the chunk holds. */
static void put(struct kat_chunk *chunk, uint16_t type, const void *body, uint32_t size)
{
    if (!chunk) {
        kat_emit(type, body, size);
        return;
    }
    if (kat_chunk_add(chunk, type, body, size) == 0)
        return;
    append_chunk(chunk);
    if (kat_chunk_add(chunk, type, body, size) != 0)
        kat_emit(type, body, size);
}

/* A record about to be converted needs a string interned, which may store
 * its definition at once: the records converted before it go first. */
static void append_before_string(struct kat_chunk *chunk)
{
    if (chunk && chunk->used)
        append_chunk(chunk);
}

static uint32_t intern_in_order(const char *s, struct kat_chunk *chunk)
{
    append_before_string(chunk);
    return kat_intern(s);
}

/*
 * A kernel record's interned name.  Conversion runs for every kernel record,
 * mostly on CUPTI's worker thread, and kat_intern takes the writer lock and
 * hashes the whole name (often a few hundred bytes, mangled) under it: the
 * lock the launching thread's vendor records wait on.  CUPTI shares one name
 * string among all the records of a kernel (CUpti_ActivityKernel10.name), so
 * ids are kept by that pointer, each beside a copy of the name it stood for
 * (a name freed and another put at its address is a miss): a hit costs one
 * comparison and no writer lock.  No writer-lock call is made under this
 * cache's own lock.
 */
#define KERNEL_NAME_SLOTS 256
struct kernel_name_slot {
    const char *at;
    char *copy;
    uint32_t id;
};
static struct kernel_name_slot kernel_names[KERNEL_NAME_SLOTS];
static pthread_mutex_t kernel_names_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t kernel_names_atfork_once = PTHREAD_ONCE_INIT;

static void kernel_names_lock_take(void) { pthread_mutex_lock(&kernel_names_lock); }
static void kernel_names_lock_give(void) { pthread_mutex_unlock(&kernel_names_lock); }

static void kernel_names_atfork(void)
{
    pthread_atfork(kernel_names_lock_take, kernel_names_lock_give, kernel_names_lock_give);
}

static uint32_t kernel_name_id(const char *name, struct kat_chunk *chunk)
{
    if (!name)
        return 0;
    pthread_once(&kernel_names_atfork_once, kernel_names_atfork);
    struct kernel_name_slot *slot = &kernel_names[((uintptr_t)name >> 3) % KERNEL_NAME_SLOTS];
    uint32_t id = 0;
    pthread_mutex_lock(&kernel_names_lock);
    if (slot->at == name && slot->copy && strcmp(slot->copy, name) == 0)
        id = slot->id;
    pthread_mutex_unlock(&kernel_names_lock);
    if (id)
        return id;
    id = intern_in_order(name, chunk);
    char *copy = id ? strdup(name) : NULL;
    if (copy) {
        pthread_mutex_lock(&kernel_names_lock);
        char *old = slot->copy;
        slot->at = name;
        slot->copy = copy;
        slot->id = id;
        pthread_mutex_unlock(&kernel_names_lock);
        free(old);
    }
    return id;
}

static uint32_t activity_api_name(CUpti_CallbackDomain domain, uint32_t cbid, struct kat_chunk *chunk);

static void convert_record(const CUpti_Activity *record, struct kat_chunk *chunk)
{
    switch (record->kind) {
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
    case CUPTI_ACTIVITY_KIND_KERNEL: {
        const CUpti_ActivityKernel10 *k = (const void *)record;
        struct kat_kernel_rec out = {
            .start_ns = k->start, .end_ns = k->end,
            .device_id = k->deviceId, .context_id = k->contextId, .stream_id = k->streamId,
            .correlation_id = k->correlationId,
            .grid = { k->gridX, k->gridY, k->gridZ },
            .block = { k->blockX, k->blockY, k->blockZ },
            .static_shared = k->staticSharedMemory, .dynamic_shared = k->dynamicSharedMemory,
            .registers = k->registersPerThread,
            .name_string = kernel_name_id(k->name, chunk),
            .graph_id = k->graphId, .launch_type = k->launchType,
            .graph_node_id = k->graphNodeId, .device_launched = k->isDeviceLaunched,
        };
        put(chunk, KAT_REC_KERNEL, &out, sizeof(out));
        break;
    }
    case CUPTI_ACTIVITY_KIND_RUNTIME:
    case CUPTI_ACTIVITY_KIND_DRIVER: {
        const CUpti_ActivityAPI *a = (const void *)record;
        int runtime = record->kind == CUPTI_ACTIVITY_KIND_RUNTIME;
        struct kat_api_rec out = {
            .start_ns = a->start, .end_ns = a->end,
            .domain = runtime ? KAT_API_RUNTIME : KAT_API_DRIVER,
            .cbid = a->cbid, .thread_id = a->threadId, .correlation_id = a->correlationId,
            .return_value = a->returnValue,
            .name_string = activity_api_name(runtime ? CUPTI_CB_DOMAIN_RUNTIME_API
                                                     : CUPTI_CB_DOMAIN_DRIVER_API, a->cbid, chunk),
        };
        put(chunk, KAT_REC_API, &out, sizeof(out));
        break;
    }
    case CUPTI_ACTIVITY_KIND_MEMCPY: {
        const CUpti_ActivityMemcpy6 *m = (const void *)record;
        struct kat_memcpy_rec out = {
            .start_ns = m->start, .end_ns = m->end, .bytes = m->bytes,
            .device_id = m->deviceId, .context_id = m->contextId, .stream_id = m->streamId,
            .correlation_id = m->correlationId, .copy_kind = m->copyKind,
            .src_kind = m->srcKind, .dst_kind = m->dstKind, .flags = m->flags,
            .graph_id = m->graphId,
        };
        put(chunk, KAT_REC_MEMCPY, &out, sizeof(out));
        break;
    }
    case CUPTI_ACTIVITY_KIND_MEMSET: {
        const CUpti_ActivityMemset4 *m = (const void *)record;
        struct kat_memset_rec out = {
            .start_ns = m->start, .end_ns = m->end, .bytes = m->bytes,
            .device_id = m->deviceId, .context_id = m->contextId, .stream_id = m->streamId,
            .correlation_id = m->correlationId, .value = m->value, .graph_id = m->graphId,
        };
        put(chunk, KAT_REC_MEMSET, &out, sizeof(out));
        break;
    }
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION: {
        const CUpti_ActivitySynchronization2 *s = (const void *)record;
        struct kat_sync_rec out = {
            .start_ns = s->start, .end_ns = s->end, .type = s->type,
            .correlation_id = s->correlationId, .context_id = s->contextId,
            .stream_id = s->streamId, .cuda_event_id = s->cudaEventId,
        };
        put(chunk, KAT_REC_SYNC, &out, sizeof(out));
        break;
    }
    case CUPTI_ACTIVITY_KIND_CUDA_EVENT: {
        const CUpti_ActivityCudaEvent2 *e = (const void *)record;
        struct kat_cuda_event_rec out = {
            .correlation_id = e->correlationId, .context_id = e->contextId,
            .stream_id = e->streamId, .event_id = e->eventId, .device_id = e->deviceId,
            .device_timestamp_ns = e->deviceTimestamp,
        };
        put(chunk, KAT_REC_CUDA_EVENT, &out, sizeof(out));
        break;
    }
    case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION: {
        const CUpti_ActivityExternalCorrelation *x = (const void *)record;
        struct kat_external_correlation_rec out = {
            .external_kind = x->externalKind, .correlation_id = x->correlationId,
            .external_id = x->externalId,
        };
        put(chunk, KAT_REC_EXTERNAL_CORRELATION, &out, sizeof(out));
        break;
    }
    case CUPTI_ACTIVITY_KIND_DEVICE: {
        const CUpti_ActivityDevice5 *d = (const void *)record;
        struct kat_device_rec out = {
            .device_id = d->id, .name_string = intern_in_order(d->name, chunk),
            .cc_major = d->computeCapabilityMajor, .cc_minor = d->computeCapabilityMinor,
            .multiprocessors = d->numMultiprocessors,
            .global_memory_bytes = d->globalMemorySize,
        };
        memcpy(out.uuid, &d->uuid, sizeof(out.uuid));
        put(chunk, KAT_REC_DEVICE, &out, sizeof(out));
        break;
    }
    default:
        break;
    }
}

static void CUPTIAPI buffer_completed(CUcontext context, uint32_t stream_id, uint8_t *buffer,
                                      size_t size, size_t valid_size)
{
    CUpti_Activity *record = NULL;
    int floor = atomic_load_explicit(&bench_floor, memory_order_relaxed);
    if (buffer && valid_size) {
        /* The next trace segment is mapped here, off the launching threads'
         * path and outside the writer lock, before and while converting
         * (every 256 records: about 72 KiB of trace, a 4 MiB segment holds
         * 58 such steps). */
        unsigned converted = 0;
        kat_writer_prepare_spare();
        /* the chunk's memory: per call, since a flush converts on the
         * flushing thread while CUPTI's own may convert another buffer */
        struct kat_chunk chunk_on = { .capacity = convert_chunk_bytes };
        struct kat_chunk *chunk = NULL;
        if (convert_chunk_bytes && !floor && (chunk_on.bytes = malloc(convert_chunk_bytes)) != NULL)
            chunk = &chunk_on;
        while (real_cuptiActivityGetNextRecord(buffer, valid_size, &record) == CUPTI_SUCCESS) {
            if (floor) {
                atomic_fetch_add_explicit(&bench_floor_records, 1, memory_order_relaxed);
                continue;
            }
            convert_record(record, chunk);
            if (!chunk && ++converted % 256 == 0)
                kat_writer_prepare_spare();
        }
        if (chunk) {
            append_chunk(chunk);
            free(chunk->bytes);
        }
    }
    size_t dropped = 0;
    if (real_cuptiActivityGetNumDroppedRecords(context, stream_id, &dropped) == CUPTI_SUCCESS
        && dropped) {
        atomic_fetch_add(&records_dropped, (long long)dropped);
        kat_health(KAT_HEALTH_CUPTI_DROPPED, "activity buffer", (int64_t)dropped);
    }
    if (buffer)
        return_buffer(buffer, valid_size);
}

/* ---- module loads ------------------------------------------------------------ */

static int is_tool_or_cuda_object(const char *path)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    static const char *const prefixes[] = { "libcuda.so", "libcupti.so", "libkaudit_preload",
                                            "libcudart.so", "libnvidia-", "libc.so", NULL };
    for (const char *const *p = prefixes; *p; p++)
        if (strncmp(base, *p, strlen(*p)) == 0)
            return 1;
    return 0;
}

/* The first object on this thread's stack outside CUDA and kaudit: who
 * caused the load.  Module loads are rare (lazy loading: once per module), so
 * a backtrace here is affordable. */
static uint32_t module_loader(void)
{
    void *frames[48];
    int count = backtrace(frames, 48);
    for (int i = 1; i < count; i++) {
        uintptr_t start;
        const char *path;
        if (kat_find_object(frames[i], &start, &path) != 0)
            continue;
        if (!path[0] || !is_tool_or_cuda_object(path))
            return kat_object_string(frames[i]); /* a library, or the main program */
    }
    return kat_intern("?");
}

static uint32_t image_kind(const uint8_t *bytes, size_t size)
{
    if (!bytes || size < 4)
        return KAT_IMAGE_UNKNOWN;
    if (bytes[0] == 0x7f && bytes[1] == 'E' && bytes[2] == 'L' && bytes[3] == 'F')
        return KAT_IMAGE_CUBIN;
    uint32_t magic;
    memcpy(&magic, bytes, sizeof(magic));
    if (magic == 0xBA55ED50u)
        return KAT_IMAGE_FATBIN;
    return KAT_IMAGE_PTX;
}

static void record_module(const CUpti_ResourceData *resource)
{
    const CUpti_ModuleResourceData *module = resource->resourceDescriptor;
    if (!module)
        return;
    struct kat_module_rec out = {
        .module_id = module->moduleId,
        .size = module->cubinSize,
        .thread_id = kat_tid(),
        .vendor_call_id = kat_vendor_current_call(),
        .time_ns = kat_now_ns(),
        .image_kind = image_kind((const uint8_t *)module->pCubin, module->cubinSize),
    };
    if (resource->context)
        real_cuptiGetContextId(resource->context, &out.context_id);
    if (module->pCubin && module->cubinSize)
        kat_digest(module->pCubin, module->cubinSize, &out.digest_lo, &out.digest_hi);
    out.loader_string = module_loader();
    kat_emit(KAT_REC_MODULE, &out, sizeof(out));
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

#define TABLE_SIZE(t) (sizeof(t) / sizeof((t)[0]))

/* Every runtime and driver callback asks whether it is a timing call: by
 * callback id, one load (index + 1, 0 for none) instead of a scan of the
 * table, since every launch passes here four times.  Filled before the
 * first callback is enabled. */
static uint8_t runtime_timing_at[CUPTI_RUNTIME_TRACE_CBID_SIZE];
static uint8_t driver_timing_at[CUPTI_DRIVER_TRACE_CBID_SIZE];

static void index_timing_tables(void)
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

static int is_query(const char *name);

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
static uint32_t activity_api_name(CUpti_CallbackDomain domain, uint32_t cbid, struct kat_chunk *chunk)
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

static void enable_deferred_kernel_activity(void);

static void CUPTIAPI on_callback(void *userdata, CUpti_CallbackDomain domain,
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

/* ---- setup -------------------------------------------------------------------- */

static int set_timing_callbacks(int on)
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

static uint64_t CUPTIAPI realtime_clock(void)
{
    return kat_now_ns();
}

static int env_is(const char *name, const char *value)
{
    const char *v = getenv(name);
    return v && strcmp(v, value) == 0;
}

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
    return env_is("KAUDIT_EXACT_EVENT_TIMES", "1");
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

static int is_query(const char *name)
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

/* KAUDIT_API_RECORDS (read at setup). */
enum api_policy { API_EVIDENCE, API_ALL, API_NONE };

static enum api_policy api_policy(void)
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

static void enable_activity_kinds(void)
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
static void enable_deferred_kernel_activity(void)
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

static void record_versions(uint32_t cupti_version)
{
    struct kat_versions_rec out = {
        .cupti_version = cupti_version,
        .cupti_header_version = CUPTI_API_VERSION,
        .tool_version_string = kat_intern(KAUDIT_VERSION),
    };
    void *driver = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
    if (driver) {
        int (*get)(int *) = (int (*)(int *))dlsym(driver, "cuDriverGetVersion");
        if (get)
            get(&out.driver_version);
        dlclose(driver);
    }
    void *runtime = dlopen("libcudart.so.13", RTLD_LAZY | RTLD_NOLOAD);
    if (runtime) {
        int (*get)(int *) = (int (*)(int *))dlsym(runtime, "cudaRuntimeGetVersion");
        if (get)
            get(&out.runtime_version);
        dlclose(runtime);
    }
    kat_emit(KAT_REC_VERSIONS, &out, sizeof(out));
}

static void record_clock_sync(void)
{
    struct kat_clock_sync_rec out = { .realtime_ns = kat_realtime_ns(), .monotonic_ns = kat_monotonic_ns() };
    if (real_cuptiGetTimestamp)
        real_cuptiGetTimestamp(&out.cupti_ns);
    kat_emit(KAT_REC_CLOCK_SYNC, &out, sizeof(out));
}

static void flush_at_exit(void)
{
    kat_cupti_flush("atexit");
}

void kat_cupti_flush(const char *where)
{
    if (!kat_cupti_active())
        return;
    real_cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    kat_stage_flush_all();
    long long lost = atomic_exchange(&buffers_lost, 0);
    if (lost)
        kat_health(KAT_HEALTH_BUFFER_LOST, "activity buffer allocation failed", lost);
    kat_health(KAT_HEALTH_CUPTI_FLUSHED, where, 1);
}

/*
 * After our subscription holds, under the default policy: every recorded API
 * gets a callback, and RUNTIME/DRIVER activity stays off (enable_activity_kinds).
 * All or nothing: if any callback cannot be enabled, API activity records
 * the calls instead.
 */
static void record_apis_by_callback(void)
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

/*
 * Settings for finding where CUPTI's own cost goes (bench/notes/overhead.md:
 * kernel activity is what slows a launch-bound loop); none changes what is
 * recorded.  Each is recorded in a
 * CUPTI_TUNING health record when set.
 *   KAUDIT_CUPTI_PINNED=1            kernel timestamps in pinned host memory
 *                                    (CUPTI_ACTIVITY_ATTR_MEM_ALLOCATION_TYPE_HOST_PINNED)
 *   KAUDIT_CUPTI_DEVICE_BUFFER_MB=N  CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_SIZE
 *   KAUDIT_CUPTI_DEVICE_BUFFERS=N    device buffers allocated at context creation, and the
 *                                    pool limit (..._PRE_ALLOCATE_VALUE, ..._POOL_LIMIT)
 *   KAUDIT_CUPTI_FLUSH_MS=N          periodic flush (0: only when buffers fill)
 *   KAUDIT_CUPTI_THREAD_ID=default   CUPTI's own thread ids (no cuptiSetThreadIdType)
 *   KAUDIT_CUPTI_KERNEL_AT=context   kernel activity enabled when a context is created,
 *                                    not at injection
 */
static long env_number(const char *name, long min, long max)
{
    const char *v = getenv(name);
    if (!v || !*v)
        return -1;
    char *end = NULL;
    long n = strtol(v, &end, 10);
    return end && *end == '\0' && n >= min && n <= max ? n : -1;
}

static unsigned flush_period_ms(void)
{
    long ms = env_number("KAUDIT_CUPTI_FLUSH_MS", 0, 600000);
    return ms >= 0 ? (unsigned)ms : FLUSH_PERIOD_MS;
}

static void apply_tuning(void)
{
    char applied[160] = "";
    if (!real_cuptiActivitySetAttribute)
        return;
    if (env_number("KAUDIT_CUPTI_PINNED", 0, 1) == 1) {
        uint8_t pinned = 1;
        size_t size = sizeof pinned;
        int ok = real_cuptiActivitySetAttribute(CUPTI_ACTIVITY_ATTR_MEM_ALLOCATION_TYPE_HOST_PINNED,
                                                &size, &pinned) == CUPTI_SUCCESS;
        snprintf(applied + strlen(applied), sizeof applied - strlen(applied), "pinned=%s ",
                 ok ? "1" : "refused");
    }
    long mb = env_number("KAUDIT_CUPTI_DEVICE_BUFFER_MB", 1, 1024);
    if (mb > 0) {
        size_t bytes = (size_t)mb << 20, size = sizeof bytes;
        int ok = real_cuptiActivitySetAttribute(CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_SIZE, &size, &bytes)
                 == CUPTI_SUCCESS;
        snprintf(applied + strlen(applied), sizeof applied - strlen(applied),
                 "device_buffer_mb=%ld%s ", mb, ok ? "" : "(refused)");
    }
    long buffers = env_number("KAUDIT_CUPTI_DEVICE_BUFFERS", 1, 4096);
    if (buffers > 0) {
        size_t n = (size_t)buffers, size = sizeof n;
        int ok = real_cuptiActivitySetAttribute(CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_POOL_LIMIT, &size, &n)
                     == CUPTI_SUCCESS
                 && real_cuptiActivitySetAttribute(CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_PRE_ALLOCATE_VALUE,
                                                   &size, &n) == CUPTI_SUCCESS;
        snprintf(applied + strlen(applied), sizeof applied - strlen(applied),
                 "device_buffers=%ld%s ", buffers, ok ? "" : "(refused)");
    }
    if (!thread_id_type_system)
        snprintf(applied + strlen(applied), sizeof applied - strlen(applied), "thread_id=default ");
    if (kernel_at_context)
        snprintf(applied + strlen(applied), sizeof applied - strlen(applied), "kernel_at=context ");
    if (env_number("KAUDIT_CUPTI_FLUSH_MS", 0, 600000) >= 0)
        snprintf(applied + strlen(applied), sizeof applied - strlen(applied), "flush_ms=%u",
                 flush_period_ms());
    if (applied[0])
        kat_health(KAT_HEALTH_CUPTI_TUNING, applied, 1);
}

static int start_cupti(void)
{
    char used[1024] = "", missing[128] = "";
    cupti_handle = open_cupti(used, sizeof(used));
    if (!cupti_handle) {
        char detail[1200];
        snprintf(detail, sizeof(detail),
                 "libcupti.so.13 not loaded, %s=%s, none beside libcudart/libcublas, not on the "
                 "library search path", KAT_ENV_CUPTI,
                 getenv(KAT_ENV_CUPTI) ? getenv(KAT_ENV_CUPTI) : "(unset)");
        kat_health(KAT_HEALTH_CUPTI_NOT_FOUND, detail, 0);
        return -1;
    }
    Dl_info info;
    void *probe = dlsym(cupti_handle, "cuptiGetVersion");
    if (probe && dladdr(probe, &info) && info.dli_fname)
        kat_strlcpy(used, info.dli_fname, sizeof(used));
    kat_health(KAT_HEALTH_CUPTI_LIBRARY, used, 0);
    if (load_cupti_functions(missing, sizeof(missing)) != 0) {
        kat_health(KAT_HEALTH_SYMBOL_UNRESOLVED, missing, 0);
        return -1;
    }

    uint32_t version = 0;
    real_cuptiGetVersion(&version);
    kat_health(KAT_HEALTH_CUPTI_VERSION, NULL, version);
    record_versions(version);
    /* Activity record layouts (CUpti_ActivityKernel10, ...) are those of the
     * CUPTI 13 headers we build with; an older CUPTI lays them out
     * differently, and misreading them would be worse than not reading. */
    if (version < 130000) {
        kat_health(KAT_HEALTH_CUPTI_UNSUPPORTED, "CUPTI older than the 13.x record layouts", version);
        return -1;
    }

    thread_id_type_system = !env_is("KAUDIT_CUPTI_THREAD_ID", "default");
    kernel_at_context = env_is("KAUDIT_CUPTI_KERNEL_AT", "context");
    if (real_cuptiSetThreadIdType && thread_id_type_system)
        real_cuptiSetThreadIdType(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM);
    long chunk_kb = env_number("KAUDIT_CUPTI_CHUNK_KB", 0, 1024);
    if (chunk_kb >= 0)
        convert_chunk_bytes = (uint32_t)chunk_kb << 10;
    const char *buffer_mb = getenv("KAUDIT_CUPTI_BUFFER_MB");
    if (buffer_mb && atoi(buffer_mb) > 0 && atoi(buffer_mb) <= 1024)
        activity_buffer_bytes = (size_t)atoi(buffer_mb) << 20;
    /* KAUDIT_CUPTI_CLOCK=default keeps CUPTI's own clock (for measuring the
     * callback's cost; the CLOCK_SYNC records then relate the two clocks). */
    const char *clock = getenv("KAUDIT_CUPTI_CLOCK");
    int want_callback = !(clock && strcmp(clock, "default") == 0);
    int clock_ok = want_callback && real_cuptiActivityRegisterTimestampCallback
                   && real_cuptiActivityRegisterTimestampCallback(realtime_clock) == CUPTI_SUCCESS;
    kat_health(KAT_HEALTH_CUPTI_CLOCK, clock_ok ? "CLOCK_REALTIME" : "CUPTI default clock", clock_ok);
    record_clock_sync();

    setup_buffer_pool();
    apply_tuning();
    index_timing_tables();
    CUptiResult rc = real_cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed);
    if (rc != CUPTI_SUCCESS) {
        kat_health(KAT_HEALTH_CUPTI_ENABLE_FAILED, result_text(rc), 0);
        return -1;
    }
    /* Subscribe first: whether launches can be recorded by callback decides
     * which API activity records the policy leaves out. */
    rc = real_cuptiSubscribe(&subscriber, (CUpti_CallbackFunc)on_callback, NULL);
    kat_health(KAT_HEALTH_CUPTI_SUBSCRIBE, rc == CUPTI_SUCCESS ? "subscribed" : result_text(rc), rc);
    if (rc == CUPTI_SUCCESS) {
        real_cuptiEnableCallback(1, subscriber, CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_MODULE_LOADED);
        real_cuptiEnableCallback(1, subscriber, CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_CONTEXT_CREATED);
        real_cuptiEnableCallback(1, subscriber, CUPTI_CB_DOMAIN_RESOURCE,
                                 CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING);
        set_timing_callbacks(1);
        record_apis_by_callback();
    }
    enable_activity_kinds();
    if (real_cuptiActivityEnableCudaEventDeviceTimestamps)
        real_cuptiActivityEnableCudaEventDeviceTimestamps(1);
    if (real_cuptiActivityFlushPeriod)
        real_cuptiActivityFlushPeriod(flush_period_ms());
    atomic_store_explicit(&cupti_recording, 1, memory_order_release);
    atexit(flush_at_exit);
    return 0;
}

/*
 * Called by the CUDA driver during cuInit when CUDA_INJECTION64_PATH names
 * this library.  Returning 1 tells the driver the injection succeeded; we
 * return 1 even when CUPTI is unusable, since failing would not help the
 * program, and the health records say what went wrong.
 */
KAT_EXPORT int InitializeInjection(void)
{
    if (atomic_exchange(&injection_done, 1))
        return 1;
    if (!kat_tracing_enabled())
        return 1;
    kat_health(KAT_HEALTH_INJECTION_CALLED, NULL, 1);
    kat_libraries_poll();
    kat_timing_symbols_snapshot(KAT_SYMBOL_AT_CUDA_INIT);
    start_cupti();
    return 1;
}

/* After fork the child has no CUPTI thread and cannot use the parent's CUDA
 * context; a child that uses CUDA runs cuInit again, which calls us. */
void kat_cupti_after_fork_child(void)
{
    atomic_store(&cupti_recording, 0);
    atomic_store(&injection_done, 0);
}
