/*
 * cupti.c - the stand-in libcupti.so.13: CUPTI's callback and activity
 * interfaces with the real CUPTI 13.0 prototypes and record layouts, fed by
 * the stand-in driver (standin_cuda_observer_set).
 *
 * What it emulates:
 *   - one subscriber (a second cuptiSubscribe gets
 *     CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED); callbacks per domain and
 *     id for DRIVER_API, RUNTIME_API (CUpti_CallbackData with the generated
 *     params structs, return value, correlation id equal to the activity
 *     record's), RESOURCE (context created / destroy starting, stream
 *     created / destroy starting, module loaded / unload starting with
 *     CUpti_ModuleResourceData, CU_INIT_FINISHED) and SYNCHRONIZE;
 *   - activity records: CONCURRENT_KERNEL/KERNEL (CUpti_ActivityKernel10),
 *     RUNTIME/DRIVER (CUpti_ActivityAPI), EXTERNAL_CORRELATION, MEMCPY
 *     (Memcpy6), MEMSET (Memset4), SYNCHRONIZATION (Synchronization2),
 *     CUDA_EVENT (CudaEvent2), DEVICE (Device5), CONTEXT (Context3), STREAM;
 *     other kinds are refused with CUPTI_ERROR_NOT_SUPPORTED;
 *   - external correlation: per-thread stacks per kind; every API record
 *     made while a stack is non-empty is preceded by one EXTERNAL_CORRELATION
 *     record per non-empty kind, but only when EXTERNAL_CORRELATION and the
 *     API's own kind (RUNTIME or DRIVER) are enabled (measured on the H200:
 *     kernel records alone produce none);
 *   - buffers: requested from the client when a record needs room, handed
 *     back full by a worker thread (periodic flushes return full buffers
 *     only, as documented) and, partial too, by cuptiActivityFlushAll from
 *     the calling thread; records that find no buffer are counted as dropped;
 *   - a timestamp callback, thread id types (SYSTEM = gettid()).
 * What it does not: profiling/metrics/PC sampling, NVTX or marker records,
 * graphs, per-context buffers, the deprecated enqueue/dequeue interface.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cupti.h>

#include "standin_internal.h"
#include "standin_names.h"

/* ---- the driver ------------------------------------------------------------- */

static struct {
    void (*observer_set)(const struct standin_observer *);
    uint32_t (*context_id)(CUcontext);
    uint32_t (*stream_id)(CUstream);
    int (*initialized)(void);
    uint64_t (*realtime)(void);
    void (*log_line)(char, const char *);
} D;
static int g_attached;
static pthread_once_t g_attach_once = PTHREAD_ONCE_INIT;
static __thread CUptiResult t_last_error;

static CUptiResult ret(CUptiResult r)
{
    if (r != CUPTI_SUCCESS)
        t_last_error = r;
    return r;
}

static uint64_t realtime_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static const struct standin_observer g_observer_table;

static void attach(void)
{
    void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    if (!h)
        h = dlopen("libcuda.so.1", RTLD_NOW);
    if (!h)
        return;
    D.observer_set = (void (*)(const struct standin_observer *))dlsym(h, "standin_cuda_observer_set");
    D.context_id = (uint32_t(*)(CUcontext))dlsym(h, "standin_context_id");
    D.stream_id = (uint32_t(*)(CUstream))dlsym(h, "standin_stream_id");
    D.initialized = (int (*)(void))dlsym(h, "standin_driver_initialized");
    D.realtime = (uint64_t(*)(void))dlsym(h, "standin_realtime_ns");
    D.log_line = (void (*)(char, const char *))dlsym(h, "standin_log_line");
    if (!D.observer_set || !D.context_id || !D.stream_id || !D.initialized)
        return;
    D.observer_set(&g_observer_table);
    g_attached = 1;
}

static int attached(void)
{
    pthread_once(&g_attach_once, attach);
    return g_attached;
}

/* ---- state -------------------------------------------------------------------- */

struct CUpti_Subscriber_st {
    CUpti_CallbackFunc callback;
    void *userdata;
    int active;
    uint8_t driver[CUPTI_DRIVER_TRACE_CBID_SIZE];
    uint8_t runtime[CUPTI_RUNTIME_TRACE_CBID_SIZE];
    uint8_t resource[CUPTI_CBID_RESOURCE_SIZE];
    uint8_t sync[CUPTI_CBID_SYNCHRONIZE_SIZE];
    uint8_t nvtx[CUPTI_CBID_NVTX_SIZE];
    uint8_t state[CUPTI_CBID_STATE_SIZE];
};

static pthread_mutex_t g_sub_lock = PTHREAD_MUTEX_INITIALIZER;
static struct CUpti_Subscriber_st g_sub;

static atomic_uchar g_kind[CUPTI_ACTIVITY_KIND_COUNT];
static uint8_t g_api_filter_driver[CUPTI_DRIVER_TRACE_CBID_SIZE];   /* 1 = excluded */
static uint8_t g_api_filter_runtime[CUPTI_RUNTIME_TRACE_CBID_SIZE];
static CUpti_TimestampCallbackFunc _Atomic g_timestamp_cb;
static atomic_int g_thread_id_type = CUPTI_ACTIVITY_THREAD_ID_TYPE_DEFAULT;
static atomic_int g_event_device_ts;
static atomic_int g_device_emitted;
static uint64_t g_attr[16];

/* external correlation: per thread, per kind */
#define EXT_KINDS CUPTI_EXTERNAL_CORRELATION_KIND_SIZE
#define EXT_DEPTH 64
static __thread struct {
    uint64_t ids[EXT_DEPTH];
    int depth;
} t_ext[EXT_KINDS];

static int kind_on(CUpti_ActivityKind k)
{
    return k > 0 && k < CUPTI_ACTIVITY_KIND_COUNT && atomic_load(&g_kind[k]);
}

static int64_t ts_offset(void)
{
    CUpti_TimestampCallbackFunc cb = atomic_load(&g_timestamp_cb);
    if (!cb)
        return 0;
    return (int64_t)cb() - (int64_t)realtime_ns();
}

static uint64_t conv(uint64_t t, int64_t off)
{
    return t ? (uint64_t)((int64_t)t + off) : 0;
}

static uint32_t thread_id(uint32_t sys_tid)
{
    if (atomic_load(&g_thread_id_type) == CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM)
        return sys_tid;
    return (uint32_t)(uintptr_t)pthread_self();
}

/* ---- buffers -------------------------------------------------------------------- */

struct buffer {
    uint8_t *data;
    size_t size, used, max_records, records;
    struct buffer *next;
};

static pthread_mutex_t g_buf_lock;
static pthread_mutex_t g_deliver_lock;
static pthread_cond_t g_worker_cond = PTHREAD_COND_INITIALIZER;
static pthread_once_t g_locks_once = PTHREAD_ONCE_INIT;
static CUpti_BuffersCallbackRequestFunc g_request;
static CUpti_BuffersCallbackCompleteFunc g_complete;
static struct buffer g_cur;
static struct buffer *g_full_head, *g_full_tail;
static size_t g_dropped;
static int g_worker_running;
static uint32_t g_flush_period_ms;

static void locks_create(void)
{
    pthread_mutexattr_t a;
    pthread_mutexattr_init(&a);
    pthread_mutexattr_settype(&a, PTHREAD_MUTEX_RECURSIVE);
    pthread_mutex_init(&g_buf_lock, &a);
    pthread_mutex_init(&g_deliver_lock, &a);
    pthread_mutexattr_destroy(&a);
}

static void locks(void)
{
    pthread_once(&g_locks_once, locks_create);
}

/* Move the current buffer to the full list.  Caller holds g_buf_lock. */
static void retire_current_locked(void)
{
    if (!g_cur.data)
        return;
    struct buffer *b = malloc(sizeof *b);
    if (!b) {
        g_dropped += g_cur.records;
        g_cur.data = NULL;
        return;
    }
    *b = g_cur;
    b->next = NULL;
    if (g_full_tail)
        g_full_tail->next = b;
    else
        g_full_head = b;
    g_full_tail = b;
    memset(&g_cur, 0, sizeof g_cur);
}

static void *worker_main(void *arg);

static void start_worker_locked(void)
{
    if (g_worker_running || !g_complete)
        return;
    pthread_t t;
    pthread_attr_t a;
    pthread_attr_init(&a);
    pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
    if (pthread_create(&t, &a, worker_main, NULL) == 0)
        g_worker_running = 1;
    pthread_attr_destroy(&a);
}

static void emit(const void *record, size_t size)
{
    locks();
    pthread_mutex_lock(&g_buf_lock);
    if (g_cur.data && (g_cur.used + size > g_cur.size ||
                       (g_cur.max_records && g_cur.records >= g_cur.max_records))) {
        retire_current_locked();
        start_worker_locked();
        pthread_cond_signal(&g_worker_cond);
    }
    if (!g_cur.data) {
        if (!g_request) {
            g_dropped++;
            pthread_mutex_unlock(&g_buf_lock);
            return;
        }
        uint8_t *data = NULL;
        size_t bsize = 0, max = 0;
        g_request(&data, &bsize, &max);
        if (!data || bsize < size) {
            g_dropped++;
            pthread_mutex_unlock(&g_buf_lock);
            return;
        }
        /* A client that sets ZEROED_OUT_ACTIVITY_BUFFER promises zeroed
         * buffers (the real CUPTI then skips clearing them); otherwise CUPTI
         * clears them itself.  'Z' lines let tests check the promise. */
        int promised = g_attr[CUPTI_ACTIVITY_ATTR_ZEROED_OUT_ACTIVITY_BUFFER] != 0;
        size_t nonzero = 0;
        if (promised) {
            for (size_t i = 0; i < bsize; i++)
                nonzero += data[i] != 0;
        } else {
            memset(data, 0, bsize);
        }
        char fields[96];
        snprintf(fields, sizeof fields, "%d\t%zu\t%zu", promised, nonzero, bsize);
        if (D.log_line)
            D.log_line('Z', fields);
        g_cur.data = data;
        g_cur.size = bsize;
        g_cur.used = 0;
        g_cur.records = 0;
        g_cur.max_records = max;
    }
    memcpy(g_cur.data + g_cur.used, record, size);
    g_cur.used += (size + 7) & ~(size_t)7;
    g_cur.records++;
    pthread_mutex_unlock(&g_buf_lock);
}

static struct buffer *take_full_locked(void)
{
    struct buffer *b = g_full_head;
    g_full_head = g_full_tail = NULL;
    return b;
}

static void deliver(struct buffer *list)
{
    while (list) {
        struct buffer *next = list->next;
        CUpti_BuffersCallbackCompleteFunc done = g_complete;
        if (done)
            done(NULL, 0, list->data, list->size, list->used);
        free(list);
        list = next;
    }
}

static void *worker_main(void *arg)
{
    (void)arg;
    for (;;) {
        pthread_mutex_lock(&g_buf_lock);
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        uint64_t ms = g_flush_period_ms ? g_flush_period_ms : 100;
        until.tv_sec += (time_t)(ms / 1000);
        until.tv_nsec += (long)(ms % 1000) * 1000000L;
        if (until.tv_nsec >= 1000000000L) {
            until.tv_sec++;
            until.tv_nsec -= 1000000000L;
        }
        if (!g_full_head)
            pthread_cond_timedwait(&g_worker_cond, &g_buf_lock, &until);
        pthread_mutex_unlock(&g_buf_lock);
        /* Periodic flushes hand back full buffers only. */
        pthread_mutex_lock(&g_deliver_lock);
        pthread_mutex_lock(&g_buf_lock);
        struct buffer *list = take_full_locked();
        pthread_mutex_unlock(&g_buf_lock);
        deliver(list);
        pthread_mutex_unlock(&g_deliver_lock);
    }
    return NULL;
}

static void atfork_prepare(void)
{
    locks();
    pthread_mutex_lock(&g_deliver_lock);
    pthread_mutex_lock(&g_buf_lock);
    pthread_mutex_lock(&g_sub_lock);
}

static void atfork_parent(void)
{
    pthread_mutex_unlock(&g_sub_lock);
    pthread_mutex_unlock(&g_buf_lock);
    pthread_mutex_unlock(&g_deliver_lock);
}

static void atfork_child(void)
{
    /* The forking thread has a new thread id in the child, and a recursive
     * mutex cannot be unlocked by another id: make the locks afresh. */
    pthread_mutex_init(&g_sub_lock, NULL);
    locks_create();
    /* Threads do not survive fork: the worker starts again when needed.
     * Buffers (and the parent's records in them) are copied like any memory. */
    g_worker_running = 0;
    pthread_cond_init(&g_worker_cond, NULL);
}

__attribute__((constructor)) static void cupti_loaded(void)
{
    locks();
    pthread_atfork(atfork_prepare, atfork_parent, atfork_child);
}

/* ---- callbacks ---------------------------------------------------------------- */

static uint8_t *cb_slot(struct CUpti_Subscriber_st *s, CUpti_CallbackDomain d, uint32_t cbid)
{
    switch (d) {
    case CUPTI_CB_DOMAIN_DRIVER_API: return cbid < CUPTI_DRIVER_TRACE_CBID_SIZE ? &s->driver[cbid] : NULL;
    case CUPTI_CB_DOMAIN_RUNTIME_API: return cbid < CUPTI_RUNTIME_TRACE_CBID_SIZE ? &s->runtime[cbid] : NULL;
    case CUPTI_CB_DOMAIN_RESOURCE: return cbid < CUPTI_CBID_RESOURCE_SIZE ? &s->resource[cbid] : NULL;
    case CUPTI_CB_DOMAIN_SYNCHRONIZE: return cbid < CUPTI_CBID_SYNCHRONIZE_SIZE ? &s->sync[cbid] : NULL;
    case CUPTI_CB_DOMAIN_NVTX: return cbid < CUPTI_CBID_NVTX_SIZE ? &s->nvtx[cbid] : NULL;
    case CUPTI_CB_DOMAIN_STATE: return cbid < CUPTI_CBID_STATE_SIZE ? &s->state[cbid] : NULL;
    default: return NULL;
    }
}

static size_t domain_size(CUpti_CallbackDomain d)
{
    switch (d) {
    case CUPTI_CB_DOMAIN_DRIVER_API: return CUPTI_DRIVER_TRACE_CBID_SIZE;
    case CUPTI_CB_DOMAIN_RUNTIME_API: return CUPTI_RUNTIME_TRACE_CBID_SIZE;
    case CUPTI_CB_DOMAIN_RESOURCE: return CUPTI_CBID_RESOURCE_SIZE;
    case CUPTI_CB_DOMAIN_SYNCHRONIZE: return CUPTI_CBID_SYNCHRONIZE_SIZE;
    case CUPTI_CB_DOMAIN_NVTX: return CUPTI_CBID_NVTX_SIZE;
    case CUPTI_CB_DOMAIN_STATE: return CUPTI_CBID_STATE_SIZE;
    default: return 0;
    }
}

static void fire(CUpti_CallbackDomain d, uint32_t cbid, const void *data)
{
    struct CUpti_Subscriber_st *s = &g_sub;
    if (!s->active || !s->callback)
        return;
    uint8_t *slot = cb_slot(s, d, cbid);
    if (!slot || !*slot)
        return;
    s->callback(s->userdata, d, cbid, data);
}

static CUpti_CallbackData callback_data(struct standin_api_frame *f, CUpti_ApiCallbackSite site)
{
    CUpti_CallbackData d;
    memset(&d, 0, sizeof d);
    d.callbackSite = site;
    d.functionName = f->name;
    d.functionParams = f->params;
    d.functionReturnValue = f->retval;
    d.symbolName = f->symbol;
    d.context = f->context;
    d.contextUid = f->context_id;
    d.correlationData = &f->correlation_data;
    d.correlationId = f->correlation_id;
    return d;
}

/* API ENTER and EXIT callbacks carry the same frame data; only the site differs. */
static void fire_api(struct standin_api_frame *f, CUpti_ApiCallbackSite site)
{
    CUpti_CallbackData d = callback_data(f, site);
    fire(f->domain == STANDIN_DOMAIN_DRIVER ? CUPTI_CB_DOMAIN_DRIVER_API : CUPTI_CB_DOMAIN_RUNTIME_API,
         f->cbid, &d);
}

/*
 * Every RESOURCE callback gets a zeroed CUpti_ResourceData with the context
 * and, where the cbid has them, the stream handle and the descriptor
 * (NULL otherwise, as the real CUPTI leaves them).
 */
static void fire_resource(uint32_t cbid, CUcontext ctx, CUstream stream, void *descriptor)
{
    CUpti_ResourceData d;
    memset(&d, 0, sizeof d);
    d.context = ctx;
    d.resourceHandle.stream = stream;
    d.resourceDescriptor = descriptor;
    fire(CUPTI_CB_DOMAIN_RESOURCE, cbid, &d);
}

static int api_recorded(const struct standin_api_frame *f)
{
    if (f->domain == STANDIN_DOMAIN_DRIVER)
        return kind_on(CUPTI_ACTIVITY_KIND_DRIVER) &&
               !(f->cbid < CUPTI_DRIVER_TRACE_CBID_SIZE && g_api_filter_driver[f->cbid]);
    return kind_on(CUPTI_ACTIVITY_KIND_RUNTIME) &&
           !(f->cbid < CUPTI_RUNTIME_TRACE_CBID_SIZE && g_api_filter_runtime[f->cbid]);
}

static void on_api_enter(struct standin_api_frame *f)
{
    if (kind_on(CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION) && api_recorded(f)) {
        for (int k = 1; k < EXT_KINDS; k++) {
            int depth = t_ext[k].depth;
            if (depth <= 0)
                continue;
            CUpti_ActivityExternalCorrelation r;
            memset(&r, 0, sizeof r);
            r.kind = CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION;
            r.externalKind = (CUpti_ExternalCorrelationKind)k;
            r.externalId = t_ext[k].ids[(depth <= EXT_DEPTH ? depth : EXT_DEPTH) - 1];
            r.correlationId = f->correlation_id;
            emit(&r, sizeof r);
        }
    }
    fire_api(f, CUPTI_API_ENTER);
}

static void on_api_exit(struct standin_api_frame *f)
{
    fire_api(f, CUPTI_API_EXIT);
    if (api_recorded(f)) {
        int64_t off = ts_offset();
        CUpti_ActivityAPI r;
        memset(&r, 0, sizeof r);
        r.kind = f->domain == STANDIN_DOMAIN_DRIVER ? CUPTI_ACTIVITY_KIND_DRIVER : CUPTI_ACTIVITY_KIND_RUNTIME;
        r.cbid = f->cbid;
        r.start = conv(f->start_ns, off);
        r.end = conv(f->end_ns, off);
        r.processId = (uint32_t)getpid();
        r.threadId = thread_id(f->tid);
        r.correlationId = f->correlation_id;
        r.returnValue = f->retval ? *(const uint32_t *)f->retval : 0;
        emit(&r, sizeof r);
    }
}

static void emit_device(void)
{
    if (!kind_on(CUPTI_ACTIVITY_KIND_DEVICE) || atomic_exchange(&g_device_emitted, 1))
        return;
    CUpti_ActivityDevice5 r;
    memset(&r, 0, sizeof r);
    r.kind = CUPTI_ACTIVITY_KIND_DEVICE;
    r.flags = CUPTI_ACTIVITY_FLAG_DEVICE_CONCURRENT_KERNELS;
    r.globalMemoryBandwidth = 4800000000ull;    /* KB/s */
    r.globalMemorySize = STANDIN_DEVICE_MEMORY;
    r.constantMemorySize = 65536;
    r.l2CacheSize = 50u << 20;
    r.numThreadsPerWarp = 32;
    r.coreClockRate = 1980000;
    r.numMemcpyEngines = 7;
    r.numMultiprocessors = STANDIN_DEVICE_SMS;
    r.maxIPC = 4;
    r.maxWarpsPerMultiprocessor = 64;
    r.maxBlocksPerMultiprocessor = 32;
    r.maxSharedMemoryPerMultiprocessor = 233472;
    r.maxRegistersPerMultiprocessor = 65536;
    r.maxRegistersPerBlock = 65536;
    r.maxSharedMemoryPerBlock = 49152;
    r.maxThreadsPerBlock = 1024;
    r.maxBlockDimX = 1024;
    r.maxBlockDimY = 1024;
    r.maxBlockDimZ = 64;
    r.maxGridDimX = 2147483647u;
    r.maxGridDimY = 65535;
    r.maxGridDimZ = 65535;
    r.computeCapabilityMajor = STANDIN_DEVICE_CC_MAJOR;
    r.computeCapabilityMinor = STANDIN_DEVICE_CC_MINOR;
    r.id = 0;
    r.eccEnabled = 1;
    memcpy(r.uuid.bytes, "KAUDIT-STANDIN00", 16);
    r.name = STANDIN_DEVICE_NAME;
    r.isCudaVisible = 1;
    emit(&r, sizeof r);
}

static void on_init_finished(void)
{
    fire_resource(CUPTI_CBID_RESOURCE_CU_INIT_FINISHED, NULL, NULL, NULL);
}

static void on_context_created(CUcontext ctx, uint32_t id)
{
    emit_device();
    if (kind_on(CUPTI_ACTIVITY_KIND_CONTEXT)) {
        CUpti_ActivityContext3 r;
        memset(&r, 0, sizeof r);
        r.kind = CUPTI_ACTIVITY_KIND_CONTEXT;
        r.contextId = id;
        r.deviceId = 0;
        r.computeApiKind = CUPTI_ACTIVITY_COMPUTE_API_CUDA;
        r.nullStreamId = STANDIN_LEGACY_STREAM_ID;
        r.numMultiprocessors = STANDIN_DEVICE_SMS;
        emit(&r, sizeof r);
    }
    fire_resource(CUPTI_CBID_RESOURCE_CONTEXT_CREATED, ctx, NULL, NULL);
}

static void on_context_destroying(CUcontext ctx, uint32_t id)
{
    (void)id;
    fire_resource(CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING, ctx, NULL, NULL);
}

static void on_module(uint32_t cbid, CUcontext ctx, uint32_t module_id, const void *image, size_t size)
{
    CUpti_ModuleResourceData m;
    memset(&m, 0, sizeof m);
    m.moduleId = module_id;
    m.cubinSize = size;
    m.pCubin = (const char *)image;
    fire_resource(cbid, ctx, NULL, &m);
}

static void on_module_loaded(CUcontext ctx, uint32_t module_id, const void *image, size_t size)
{
    on_module(CUPTI_CBID_RESOURCE_MODULE_LOADED, ctx, module_id, image, size);
}

static void on_module_unloading(CUcontext ctx, uint32_t module_id, const void *image, size_t size)
{
    on_module(CUPTI_CBID_RESOURCE_MODULE_UNLOAD_STARTING, ctx, module_id, image, size);
}

static void on_stream(uint32_t cbid, const struct standin_stream_info *info)
{
    if (cbid == CUPTI_CBID_RESOURCE_STREAM_CREATED && kind_on(CUPTI_ACTIVITY_KIND_STREAM)) {
        CUpti_ActivityStream r;
        memset(&r, 0, sizeof r);
        r.kind = CUPTI_ACTIVITY_KIND_STREAM;
        r.contextId = info->context_id;
        r.streamId = info->stream_id;
        r.priority = info->priority;
        r.flag = (info->flags & 1) ? CUPTI_ACTIVITY_STREAM_CREATE_FLAG_NON_BLOCKING
                                   : CUPTI_ACTIVITY_STREAM_CREATE_FLAG_DEFAULT;
        r.correlationId = info->correlation_id;
        emit(&r, sizeof r);
    }
    fire_resource(cbid, info->context, info->stream, NULL);
}

static void on_stream_created(const struct standin_stream_info *info)
{
    on_stream(CUPTI_CBID_RESOURCE_STREAM_CREATED, info);
}

static void on_stream_destroying(const struct standin_stream_info *info)
{
    on_stream(CUPTI_CBID_RESOURCE_STREAM_DESTROY_STARTING, info);
}

/* Kernel names are shared by all records of a kernel and never change. */
static pthread_mutex_t g_names_lock = PTHREAD_MUTEX_INITIALIZER;
static char **g_names;
static size_t g_nnames, g_names_cap;

static const char *intern_name(const char *name)
{
    if (!name)
        return NULL;
    pthread_mutex_lock(&g_names_lock);
    for (size_t i = 0; i < g_nnames; i++) {
        if (!strcmp(g_names[i], name)) {
            pthread_mutex_unlock(&g_names_lock);
            return g_names[i];
        }
    }
    const char *r = name;
    if (g_nnames == g_names_cap) {
        size_t cap = g_names_cap ? 2 * g_names_cap : 64;
        char **n = realloc(g_names, cap * sizeof *n);
        if (n) {
            g_names = n;
            g_names_cap = cap;
        }
    }
    if (g_nnames < g_names_cap) {
        char *copy = strdup(name);
        if (copy) {
            g_names[g_nnames++] = copy;
            r = copy;
        }
    }
    pthread_mutex_unlock(&g_names_lock);
    return r;
}

static void on_kernel(const struct standin_kernel_info *k)
{
    CUpti_ActivityKind kind;
    if (kind_on(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL))
        kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
    else if (kind_on(CUPTI_ACTIVITY_KIND_KERNEL))
        kind = CUPTI_ACTIVITY_KIND_KERNEL;
    else
        return;
    int64_t off = ts_offset();
    CUpti_ActivityKernel10 r;
    memset(&r, 0, sizeof r);
    r.kind = kind;
    r.registersPerThread = k->registers;
    r.start = conv(k->start_ns, off);
    r.end = conv(k->end_ns, off);
    r.completed = r.end;
    r.deviceId = k->device_id;
    r.contextId = k->context_id;
    r.streamId = k->stream_id;
    r.gridX = k->grid[0];
    r.gridY = k->grid[1];
    r.gridZ = k->grid[2];
    r.blockX = k->block[0];
    r.blockY = k->block[1];
    r.blockZ = k->block[2];
    r.staticSharedMemory = k->static_shared;
    r.dynamicSharedMemory = k->dynamic_shared;
    r.correlationId = k->correlation_id;
    r.gridId = k->grid_id;
    r.name = intern_name(k->name);
    r.queued = CUPTI_TIMESTAMP_UNKNOWN;
    r.submitted = CUPTI_TIMESTAMP_UNKNOWN;
    r.launchType = k->launch_type;
    r.sharedMemoryExecuted = (uint32_t)(k->static_shared + k->dynamic_shared);
    r.clusterX = r.clusterY = r.clusterZ = 1;
    emit(&r, sizeof r);
}

static void on_memcpy(const struct standin_memcpy_info *m)
{
    if (!kind_on(CUPTI_ACTIVITY_KIND_MEMCPY))
        return;
    int64_t off = ts_offset();
    CUpti_ActivityMemcpy6 r;
    memset(&r, 0, sizeof r);
    r.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
    r.copyKind = m->copy_kind;
    r.srcKind = m->src_kind;
    r.dstKind = m->dst_kind;
    r.flags = m->async ? CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC : 0;
    r.bytes = m->bytes;
    r.start = conv(m->start_ns, off);
    r.end = conv(m->end_ns, off);
    r.contextId = m->context_id;
    r.streamId = m->stream_id;
    r.correlationId = m->correlation_id;
    r.runtimeCorrelationId = m->correlation_id;
    r.copyCount = 1;
    emit(&r, sizeof r);
}

static void on_memset(const struct standin_memset_info *m)
{
    if (!kind_on(CUPTI_ACTIVITY_KIND_MEMSET))
        return;
    int64_t off = ts_offset();
    CUpti_ActivityMemset4 r;
    memset(&r, 0, sizeof r);
    r.kind = CUPTI_ACTIVITY_KIND_MEMSET;
    r.value = m->value;
    r.bytes = m->bytes;
    r.start = conv(m->start_ns, off);
    r.end = conv(m->end_ns, off);
    r.contextId = m->context_id;
    r.streamId = m->stream_id;
    r.correlationId = m->correlation_id;
    r.flags = m->async ? CUPTI_ACTIVITY_FLAG_MEMSET_ASYNC : 0;
    r.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
    emit(&r, sizeof r);
}

static void on_sync(const struct standin_sync_info *s)
{
    if (kind_on(CUPTI_ACTIVITY_KIND_SYNCHRONIZATION)) {
        int64_t off = ts_offset();
        CUpti_ActivitySynchronization2 r;
        memset(&r, 0, sizeof r);
        r.kind = CUPTI_ACTIVITY_KIND_SYNCHRONIZATION;
        r.type = (CUpti_ActivitySynchronizationType)s->type;
        r.start = conv(s->start_ns, off);
        r.end = conv(s->end_ns, off);
        r.correlationId = s->correlation_id;
        r.contextId = s->context_id;
        r.streamId = s->stream_id;
        r.cudaEventId = s->event_id;
        r.cudaEventSyncId = 0;
        r.returnValue = s->result;
        emit(&r, sizeof r);
    }
    if (s->type == CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE ||
        s->type == CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE) {
        CUpti_SynchronizeData d;
        memset(&d, 0, sizeof d);
        d.context = s->context;
        d.stream = s->stream;
        fire(CUPTI_CB_DOMAIN_SYNCHRONIZE,
             s->type == CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE
                 ? CUPTI_CBID_SYNCHRONIZE_STREAM_SYNCHRONIZED
                 : CUPTI_CBID_SYNCHRONIZE_CONTEXT_SYNCHRONIZED,
             &d);
    }
}

static void on_cuda_event(const struct standin_event_info *e)
{
    if (!kind_on(CUPTI_ACTIVITY_KIND_CUDA_EVENT))
        return;
    CUpti_ActivityCudaEvent2 r;
    memset(&r, 0, sizeof r);
    r.kind = CUPTI_ACTIVITY_KIND_CUDA_EVENT;
    r.correlationId = e->correlation_id;
    r.contextId = e->context_id;
    r.streamId = e->stream_id;
    r.eventId = e->event_id;
    r.deviceId = 0;
    r.deviceTimestamp = atomic_load(&g_event_device_ts) ? conv(e->device_ns, ts_offset()) : 0;
    emit(&r, sizeof r);
}

static const struct standin_observer g_observer_table = {
    .api_enter = on_api_enter,
    .api_exit = on_api_exit,
    .init_finished = on_init_finished,
    .context_created = on_context_created,
    .context_destroying = on_context_destroying,
    .module_loaded = on_module_loaded,
    .module_unloading = on_module_unloading,
    .stream_created = on_stream_created,
    .stream_destroying = on_stream_destroying,
    .kernel = on_kernel,
    .memcpy = on_memcpy,
    .memset = on_memset,
    .sync = on_sync,
    .cuda_event = on_cuda_event,
};

/* ---- public: versions, results, names ---------------------------------------- */

CUptiResult CUPTIAPI cuptiGetVersion(uint32_t *version)
{
    if (!version)
        return ret(CUPTI_ERROR_INVALID_PARAMETER);
    *version = CUPTI_API_VERSION;
    return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiGetResultString(CUptiResult result, const char **str)
{
    if (!str)
        return ret(CUPTI_ERROR_INVALID_PARAMETER);
    for (const struct standin_name *n = standin_cupti_result_names; n->name; n++) {
        if (n->value == (uint32_t)result) {
            *str = n->name;
            return CUPTI_SUCCESS;
        }
    }
    *str = NULL;
    return ret(CUPTI_ERROR_INVALID_PARAMETER);
}

CUptiResult CUPTIAPI cuptiGetErrorMessage(CUptiResult result, const char **str)
{
    return cuptiGetResultString(result, str);
}

CUptiResult CUPTIAPI cuptiGetLastError(void)
{
    CUptiResult r = t_last_error;
    t_last_error = CUPTI_SUCCESS;
    return r;
}

CUptiResult CUPTIAPI cuptiGetCallbackName(CUpti_CallbackDomain domain, uint32_t cbid, const char **name)
{
    if (!name)
        return ret(CUPTI_ERROR_INVALID_PARAMETER);
    const struct standin_name *table = domain == CUPTI_CB_DOMAIN_RUNTIME_API ? standin_runtime_cbid_names
                                       : domain == CUPTI_CB_DOMAIN_DRIVER_API ? standin_driver_cbid_names
                                                                              : NULL;
    *name = NULL;
    if (!table)
        return ret(CUPTI_ERROR_INVALID_PARAMETER);
    for (const struct standin_name *n = table; n->name; n++) {
        if (n->value == cbid) {
            *name = n->name;
            return CUPTI_SUCCESS;
        }
    }
    return ret(CUPTI_ERROR_INVALID_PARAMETER);
}

CUptiResult CUPTIAPI cuptiSupportedDomains(size_t *domainCount, CUpti_DomainTable *domainTable)
{
    static CUpti_CallbackDomain domains[] = {
        CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_CB_DOMAIN_RESOURCE,
        CUPTI_CB_DOMAIN_SYNCHRONIZE, CUPTI_CB_DOMAIN_NVTX, CUPTI_CB_DOMAIN_STATE,
    };
    if (!domainCount || !domainTable)
        return ret(CUPTI_ERROR_INVALID_PARAMETER);
    *domainCount = sizeof domains / sizeof domains[0];
    *domainTable = domains;
    return CUPTI_SUCCESS;
}

/* ---- public: subscription and callbacks ---------------------------------------- */

static CUptiResult subscribe(CUpti_SubscriberHandle *subscriber, CUpti_CallbackFunc callback, void *userdata)
{
    if (!subscriber)
        return ret(CUPTI_ERROR_INVALID_PARAMETER);
    if (!attached())
        return ret(CUPTI_ERROR_NOT_INITIALIZED);
    pthread_mutex_lock(&g_sub_lock);
    if (g_sub.active) {
        pthread_mutex_unlock(&g_sub_lock);
        *subscriber = NULL;
        return ret(CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED);
    }
    memset(&g_sub, 0, sizeof g_sub);
    g_sub.callback = callback;
    g_sub.userdata = userdata;
    g_sub.active = 1;
    pthread_mutex_unlock(&g_sub_lock);
    *subscriber = &g_sub;
    return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiSubscribe(CUpti_SubscriberHandle *subscriber, CUpti_CallbackFunc callback,
                                    void *userdata)
{
    return subscribe(subscriber, callback, userdata);
}

CUptiResult CUPTIAPI cuptiSubscribe_v2(CUpti_SubscriberHandle *subscriber, CUpti_CallbackFunc callback,
                                       void *userdata, CUpti_SubscriberParams *pParams)
{
    CUptiResult r = subscribe(subscriber, callback, userdata);
    if (r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED && pParams && pParams->oldSubscriberName &&
        pParams->oldSubscriberSize > 0)
        pParams->oldSubscriberName[0] = '\0';
    return r;
}

static int valid_subscriber(CUpti_SubscriberHandle s)
{
    return s == &g_sub && g_sub.active;
}

CUptiResult CUPTIAPI cuptiUnsubscribe(CUpti_SubscriberHandle subscriber)
{
    pthread_mutex_lock(&g_sub_lock);
    if (!valid_subscriber(subscriber)) {
        pthread_mutex_unlock(&g_sub_lock);
        return ret(CUPTI_ERROR_INVALID_PARAMETER);
    }
    g_sub.active = 0;
    pthread_mutex_unlock(&g_sub_lock);
    return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiEnableCallback(uint32_t enable, CUpti_SubscriberHandle subscriber,
                                         CUpti_CallbackDomain domain, CUpti_CallbackId cbid)
{
    if (!valid_subscriber(subscriber))
        return ret(CUPTI_ERROR_INVALID_PARAMETER);
    uint8_t *slot = cb_slot(subscriber, domain, cbid);
    if (!slot)
        return ret(CUPTI_ERROR_INVALID_PARAMETER);
    *slot = enable ? 1 : 0;
    return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiGetCallbackState(uint32_t *enable, CUpti_SubscriberHandle subscriber,
                                           CUpti_CallbackDomain domain, CUpti_CallbackId cbid)
{
    if (!enable || !valid_subscriber(subscriber))
        return ret(CUPTI_ERROR_INVALID_PARAMETER);
    uint8_t *slot = cb_slot(subscriber, domain, cbid);
    if (!slot)
        return ret(CUPTI_ERROR_INVALID_PARAMETER);
    *enable = *slot;
    return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiEnableDomain(uint32_t enable, CUpti_SubscriberHandle subscriber,
                                       CUpti_CallbackDomain domain)
{
    if (!valid_subscriber(subscriber))
        return ret(CUPTI_ERROR_INVALID_PARAMETER);
    size_t n = domain_size(domain);
    if (!n)
        return ret(CUPTI_ERROR_INVALID_PARAMETER);
    for (size_t i = 1; i < n; i++)
        *cb_slot(subscriber, domain, (uint32_t)i) = enable ? 1 : 0;
    return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiEnableAllDomains(uint32_t enable, CUpti_SubscriberHandle subscriber)
{
    if (!valid_subscriber(subscriber))
        return ret(CUPTI_ERROR_INVALID_PARAMETER);
    for (int d = CUPTI_CB_DOMAIN_DRIVER_API; d < CUPTI_CB_DOMAIN_SIZE; d++)
        cuptiEnableDomain(enable, subscriber, (CUpti_CallbackDomain)d);
    return CUPTI_SUCCESS;
}

/* ---- public: activity ------------------------------------------------------------ */

static int kind_supported(CUpti_ActivityKind k)
{
    switch (k) {
    case CUPTI_ACTIVITY_KIND_MEMCPY:
    case CUPTI_ACTIVITY_KIND_MEMSET:
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
    case CUPTI_ACTIVITY_KIND_DRIVER:
    case CUPTI_ACTIVITY_KIND_RUNTIME:
    case CUPTI_ACTIVITY_KIND_DEVICE:
    case CUPTI_ACTIVITY_KIND_CONTEXT:
    case CUPTI_ACTIVITY_KIND_CUDA_EVENT:
    case CUPTI_ACTIVITY_KIND_STREAM:
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION:
    case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION:
        return 1;
    default:
        return 0;
    }
}

static size_t record_size(CUpti_ActivityKind k)
{
    switch (k) {
    case CUPTI_ACTIVITY_KIND_MEMCPY: return sizeof(CUpti_ActivityMemcpy6);
    case CUPTI_ACTIVITY_KIND_MEMSET: return sizeof(CUpti_ActivityMemset4);
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: return sizeof(CUpti_ActivityKernel10);
    case CUPTI_ACTIVITY_KIND_DRIVER:
    case CUPTI_ACTIVITY_KIND_RUNTIME: return sizeof(CUpti_ActivityAPI);
    case CUPTI_ACTIVITY_KIND_DEVICE: return sizeof(CUpti_ActivityDevice5);
    case CUPTI_ACTIVITY_KIND_CONTEXT: return sizeof(CUpti_ActivityContext3);
    case CUPTI_ACTIVITY_KIND_CUDA_EVENT: return sizeof(CUpti_ActivityCudaEvent2);
    case CUPTI_ACTIVITY_KIND_STREAM: return sizeof(CUpti_ActivityStream);
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION: return sizeof(CUpti_ActivitySynchronization2);
    case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION: return sizeof(CUpti_ActivityExternalCorrelation);
    default: return 0;
    }
}

static CUptiResult set_kind(CUpti_ActivityKind kind, int on)
{
    if (kind <= CUPTI_ACTIVITY_KIND_INVALID || kind >= CUPTI_ACTIVITY_KIND_COUNT)
        return ret(CUPTI_ERROR_INVALID_KIND);
    if (!kind_supported(kind))
        return ret(CUPTI_ERROR_NOT_SUPPORTED);
    if (!attached())
        return ret(CUPTI_ERROR_NOT_INITIALIZED);
    atomic_store(&g_kind[kind], (unsigned char)(on ? 1 : 0));
    if (on && kind == CUPTI_ACTIVITY_KIND_DEVICE && D.initialized())
        emit_device();
    /* 'A' lines: which kinds the client switched, for tests of its choice */
    const char *name = kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL ? "concurrent_kernel"
                       : kind == CUPTI_ACTIVITY_KIND_RUNTIME ? "runtime"
                       : kind == CUPTI_ACTIVITY_KIND_DRIVER ? "driver"
                       : kind == CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION ? "external_correlation"
                                                                          : "other";
    char fields[64];
    snprintf(fields, sizeof fields, "%s\t%d\t%d", name, (int)kind, on ? 1 : 0);
    if (D.log_line)
        D.log_line('A', fields);
    return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivityEnable(CUpti_ActivityKind kind)
{
    return set_kind(kind, 1);
}

CUptiResult CUPTIAPI cuptiActivityEnableAndDump(CUpti_ActivityKind kind)
{
    return set_kind(kind, 1);
}

CUptiResult CUPTIAPI cuptiActivityDisable(CUpti_ActivityKind kind)
{
    return set_kind(kind, 0);
}

CUptiResult CUPTIAPI cuptiActivityEnableContext(CUcontext context, CUpti_ActivityKind kind)
{
    (void)context;
    return set_kind(kind, 1);
}

CUptiResult CUPTIAPI cuptiActivityDisableContext(CUcontext context, CUpti_ActivityKind kind)
{
    (void)context;
    return set_kind(kind, 0);
}

CUptiResult CUPTIAPI cuptiActivityEnableDriverApi(CUpti_CallbackId cbid, uint8_t enable)
{
    if (cbid >= CUPTI_DRIVER_TRACE_CBID_SIZE)
        return ret(CUPTI_ERROR_INVALID_PARAMETER);
    g_api_filter_driver[cbid] = enable ? 0 : 1;
    return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivityEnableRuntimeApi(CUpti_CallbackId cbid, uint8_t enable)
{
    if (cbid >= CUPTI_RUNTIME_TRACE_CBID_SIZE)
        return ret(CUPTI_ERROR_INVALID_PARAMETER);
    g_api_filter_runtime[cbid] = enable ? 0 : 1;
    return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivityRegisterCallbacks(CUpti_BuffersCallbackRequestFunc funcBufferRequested,
                                                    CUpti_BuffersCallbackCompleteFunc funcBufferCompleted)
{
    if (!funcBufferRequested || !funcBufferCompleted)
        return ret(CUPTI_ERROR_INVALID_PARAMETER);
    if (!attached())
        return ret(CUPTI_ERROR_NOT_INITIALIZED);
    locks();
    pthread_mutex_lock(&g_buf_lock);
    g_request = funcBufferRequested;
    g_complete = funcBufferCompleted;
    start_worker_locked();
    pthread_mutex_unlock(&g_buf_lock);
    return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivityGetNextRecord(uint8_t *buffer, size_t validBufferSizeBytes,
                                                CUpti_Activity **record)
{
    if (!buffer || !record)
        return ret(CUPTI_ERROR_INVALID_PARAMETER);
    size_t offset;
    if (!*record) {
        offset = 0;
    } else {
        uint8_t *prev = (uint8_t *)*record;
        if (prev < buffer || prev >= buffer + validBufferSizeBytes)
            return ret(CUPTI_ERROR_INVALID_PARAMETER);
        size_t size = record_size((*record)->kind);
        if (!size)
            return ret(CUPTI_ERROR_INVALID_KIND);
        offset = (size_t)(prev - buffer) + ((size + 7) & ~(size_t)7);
    }
    if (offset + sizeof(CUpti_Activity) > validBufferSizeBytes) {
        *record = NULL;
        return CUPTI_ERROR_MAX_LIMIT_REACHED;
    }
    CUpti_Activity *r = (CUpti_Activity *)(buffer + offset);
    size_t size = record_size(r->kind);
    if (!size || offset + size > validBufferSizeBytes) {
        *record = NULL;
        return ret(CUPTI_ERROR_INVALID_KIND);
    }
    *record = r;
    return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivityGetNumDroppedRecords(CUcontext context, uint32_t streamId, size_t *dropped)
{
    (void)context;
    (void)streamId;
    if (!dropped)
        return ret(CUPTI_ERROR_INVALID_PARAMETER);
    locks();
    pthread_mutex_lock(&g_buf_lock);
    *dropped = g_dropped;
    g_dropped = 0;
    pthread_mutex_unlock(&g_buf_lock);
    return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivityFlushAll(uint32_t flag)
{
    (void)flag;
    locks();
    pthread_mutex_lock(&g_deliver_lock);
    pthread_mutex_lock(&g_buf_lock);
    if (!g_complete) {
        pthread_mutex_unlock(&g_buf_lock);
        pthread_mutex_unlock(&g_deliver_lock);
        return ret(CUPTI_ERROR_INVALID_OPERATION);
    }
    if (g_cur.data && g_cur.used > 0)
        retire_current_locked();
    struct buffer *list = take_full_locked();
    pthread_mutex_unlock(&g_buf_lock);
    deliver(list);
    pthread_mutex_unlock(&g_deliver_lock);
    return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivityFlush(CUcontext context, uint32_t streamId, uint32_t flag)
{
    (void)context;
    (void)streamId;
    return cuptiActivityFlushAll(flag);
}

CUptiResult CUPTIAPI cuptiActivityFlushPeriod(uint32_t time)
{
    locks();
    pthread_mutex_lock(&g_buf_lock);
    g_flush_period_ms = time;
    pthread_cond_signal(&g_worker_cond);
    pthread_mutex_unlock(&g_buf_lock);
    return CUPTI_SUCCESS;
}

static size_t attr_size(CUpti_ActivityAttribute a)
{
    switch (a) {
    case CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_SIZE:
    case CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_SIZE_CDP:
    case CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_POOL_LIMIT:
    case CUPTI_ACTIVITY_ATTR_PROFILING_SEMAPHORE_POOL_SIZE:
    case CUPTI_ACTIVITY_ATTR_PROFILING_SEMAPHORE_POOL_LIMIT:
    case CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_PRE_ALLOCATE_VALUE:
    case CUPTI_ACTIVITY_ATTR_PROFILING_SEMAPHORE_PRE_ALLOCATE_VALUE:
    case CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_SIZE_DEVICE_GRAPHS:
        return sizeof(size_t);
    case CUPTI_ACTIVITY_ATTR_ZEROED_OUT_ACTIVITY_BUFFER:
    case CUPTI_ACTIVITY_ATTR_MEM_ALLOCATION_TYPE_HOST_PINNED:
    case CUPTI_ACTIVITY_ATTR_PER_THREAD_ACTIVITY_BUFFER:
        return sizeof(uint8_t);
    default:
        return 0;
    }
}

CUptiResult CUPTIAPI cuptiActivitySetAttribute(CUpti_ActivityAttribute attr, size_t *valueSize, void *value)
{
    size_t need = attr_size(attr);
    if (!valueSize || !value || !need || (unsigned)attr >= 16)
        return ret(CUPTI_ERROR_INVALID_PARAMETER);
    if (*valueSize < need)
        return ret(CUPTI_ERROR_PARAMETER_SIZE_NOT_SUFFICIENT);
    uint64_t v = 0;
    memcpy(&v, value, need);
    g_attr[attr] = v;
    return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivityGetAttribute(CUpti_ActivityAttribute attr, size_t *valueSize, void *value)
{
    size_t need = attr_size(attr);
    if (!valueSize || !value || !need || (unsigned)attr >= 16)
        return ret(CUPTI_ERROR_INVALID_PARAMETER);
    if (*valueSize < need)
        return ret(CUPTI_ERROR_PARAMETER_SIZE_NOT_SUFFICIENT);
    uint64_t v = g_attr[attr];
    if (!v && attr == CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_SIZE)
        v = 3u << 20;
    memcpy(value, &v, need);
    *valueSize = need;
    return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivityPushExternalCorrelationId(CUpti_ExternalCorrelationKind kind, uint64_t id)
{
    if (kind <= CUPTI_EXTERNAL_CORRELATION_KIND_INVALID || kind >= EXT_KINDS)
        return ret(CUPTI_ERROR_INVALID_PARAMETER);
    int d = t_ext[kind].depth;
    if (d < EXT_DEPTH)
        t_ext[kind].ids[d] = id;
    t_ext[kind].depth = d + 1;
    return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivityPopExternalCorrelationId(CUpti_ExternalCorrelationKind kind, uint64_t *lastId)
{
    if (kind <= CUPTI_EXTERNAL_CORRELATION_KIND_INVALID || kind >= EXT_KINDS)
        return ret(CUPTI_ERROR_INVALID_PARAMETER);
    int d = t_ext[kind].depth;
    if (d <= 0)
        return ret(CUPTI_ERROR_QUEUE_EMPTY);
    d--;
    if (lastId)
        *lastId = d < EXT_DEPTH ? t_ext[kind].ids[d] : 0;
    t_ext[kind].depth = d;
    return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivityRegisterTimestampCallback(CUpti_TimestampCallbackFunc funcTimestamp)
{
    if (!funcTimestamp)
        return ret(CUPTI_ERROR_INVALID_PARAMETER);
    atomic_store(&g_timestamp_cb, funcTimestamp);
    return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiGetTimestamp(uint64_t *timestamp)
{
    if (!timestamp)
        return ret(CUPTI_ERROR_INVALID_PARAMETER);
    CUpti_TimestampCallbackFunc cb = atomic_load(&g_timestamp_cb);
    *timestamp = cb ? cb() : realtime_ns();
    return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiSetThreadIdType(CUpti_ActivityThreadIdType type)
{
    if (type != CUPTI_ACTIVITY_THREAD_ID_TYPE_DEFAULT && type != CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM)
        return ret(CUPTI_ERROR_INVALID_PARAMETER);
    atomic_store(&g_thread_id_type, (int)type);
    return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiGetThreadIdType(CUpti_ActivityThreadIdType *type)
{
    if (!type)
        return ret(CUPTI_ERROR_INVALID_PARAMETER);
    *type = (CUpti_ActivityThreadIdType)atomic_load(&g_thread_id_type);
    return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivityEnableCudaEventDeviceTimestamps(uint8_t enable)
{
    atomic_store(&g_event_device_ts, enable ? 1 : 0);
    return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivityEnableLatencyTimestamps(uint8_t enable)
{
    (void)enable;
    return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivityEnableLaunchAttributes(uint8_t enable)
{
    (void)enable;
    return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivityEnableDeviceGraph(uint8_t enable)
{
    (void)enable;
    return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivityEnableAllSyncRecords(uint8_t enable)
{
    (void)enable;
    return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiGetContextId(CUcontext context, uint32_t *contextId)
{
    if (!contextId)
        return ret(CUPTI_ERROR_INVALID_PARAMETER);
    if (!attached())
        return ret(CUPTI_ERROR_NOT_INITIALIZED);
    uint32_t id = D.context_id(context);
    if (!id)
        return ret(CUPTI_ERROR_INVALID_CONTEXT);
    *contextId = id;
    return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiGetStreamId(CUcontext context, CUstream stream, uint32_t *streamId)
{
    if (!streamId)
        return ret(CUPTI_ERROR_INVALID_PARAMETER);
    if (!attached())
        return ret(CUPTI_ERROR_NOT_INITIALIZED);
    (void)context;
    uint32_t id = D.stream_id(stream);
    if (!id)
        return ret(CUPTI_ERROR_INVALID_STREAM);
    *streamId = id;
    return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiGetStreamIdEx(CUcontext context, CUstream stream, uint8_t perThreadStream,
                                        uint32_t *streamId)
{
    (void)perThreadStream;
    return cuptiGetStreamId(context, stream, streamId);
}

CUptiResult CUPTIAPI cuptiGetDeviceId(CUcontext context, uint32_t *deviceId)
{
    (void)context;
    if (!deviceId)
        return ret(CUPTI_ERROR_INVALID_PARAMETER);
    *deviceId = 0;
    return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiDeviceSupported(CUdevice dev, int *support)
{
    if (!support)
        return ret(CUPTI_ERROR_INVALID_PARAMETER);
    *support = dev == 0;
    return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiComputeCapabilitySupported(int major, int minor, int *support)
{
    (void)minor;
    if (!support)
        return ret(CUPTI_ERROR_INVALID_PARAMETER);
    *support = major >= 7;
    return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiFinalize(void)
{
    if (g_complete)
        cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    for (int k = 0; k < CUPTI_ACTIVITY_KIND_COUNT; k++)
        atomic_store(&g_kind[k], 0);
    pthread_mutex_lock(&g_sub_lock);
    g_sub.active = 0;
    pthread_mutex_unlock(&g_sub_lock);
    return CUPTI_SUCCESS;
}
