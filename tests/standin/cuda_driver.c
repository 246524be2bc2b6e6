/*
 * cuda_driver.c - the stand-in libcuda.so.1: a CUDA driver whose GPU is the
 * host.
 *
 * What it emulates:
 *   - cuInit reads CUDA_INJECTION64_PATH once, dlopen()s it and calls its
 *     InitializeInjection(), like the real driver;
 *   - one device, one primary context per process (re-created with a new id
 *     after it is destroyed); device memory is host memory, so programs
 *     compute real results;
 *   - streams with a fake GPU clock each: work on a stream is ordered, the
 *     legacy default stream synchronises with blocking streams, events take
 *     the stream's time, cuStreamWaitEvent orders streams, synchronisation
 *     really waits until the fake clock has passed;
 *   - modules from bytes (cubin ELF, fatbin or PTX text; the size is read from
 *     the image's header like the real driver does) and functions by name;
 *   - kernel launches run a host body (standin_function_set_body) at once;
 *   - after fork() in a process that had initialised CUDA, every call fails
 *     with CUDA_ERROR_NOT_INITIALIZED, like the real driver;
 *   - every API call opens a frame with a correlation id and is handed to the
 *     observer (the stand-in CUPTI), with the real generated params structs.
 * What it does not: multiple devices or contexts, graphs, unified memory,
 * texture/surface objects, cuLibrary*, real concurrency between streams (work
 * runs at launch; only the time stamps model the GPU).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cuda.h>
/* cupti.h only for the generated *_params structs and callback ids */
#include <cupti.h>

#include "standin_internal.h"

#define CTX_MAGIC 0x43545831u
#define STREAM_MAGIC 0x5354524du
#define EVENT_MAGIC 0x45564e54u
#define MODULE_MAGIC 0x4d4f4455u
#define FUNC_MAGIC 0x46554e43u

#define CBID(x) CUPTI_DRIVER_TRACE_CBID_##x

struct CUctx_st {
    uint32_t magic;
    uint32_t id;
    int refcount;
    int alive;
};

struct CUstream_st {
    uint32_t magic;
    uint32_t id;
    unsigned flags;
    int priority;
    uint64_t clock;             /* fake GPU time at which the stream's work ends */
    struct CUstream_st *next;
};

struct CUevent_st {
    uint32_t magic;
    uint32_t id;
    unsigned flags;
    int recorded;
    uint64_t ts;
    uint32_t stream_id;
};

struct CUfunc_st {
    uint32_t magic;
    char *name;
    struct CUmod_st *module;
    standin_body_fn body;
    uint16_t registers;
    int32_t static_shared;
    struct CUfunc_st *next;
};

struct CUmod_st {
    uint32_t magic;
    uint32_t id;
    void *image;
    size_t size;
    int loaded;
    struct CUfunc_st *functions;
};

struct allocation {
    uintptr_t base;
    size_t size;
};

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t g_init_lock;
static pthread_once_t g_init_lock_once = PTHREAD_ONCE_INIT;
static atomic_int g_initialized;
static atomic_int g_poisoned;           /* fork child of an initialised process */
static const struct standin_observer *_Atomic g_observer;
static atomic_uint g_next_correlation = 1;
static uint32_t g_next_context_id = 1;
static uint32_t g_next_stream_id = 13;
static uint32_t g_next_event_id = 1;
static uint32_t g_next_module_id = 1;
static int64_t g_next_grid_id = 1;

static struct CUctx_st g_primary = { CTX_MAGIC, 0, 0, 0 };
static struct CUstream_st g_legacy = { STREAM_MAGIC, STANDIN_LEGACY_STREAM_ID, 0, 0, 0, NULL };
static struct CUstream_st *g_streams;
static struct allocation *g_allocs;
static size_t g_nallocs, g_allocs_cap;

static __thread CUcontext t_current;
static __thread struct standin_api_frame *t_top;
static __thread const char *t_vendor[16];
static __thread int t_vendor_depth;

/* ---- time and the ground-truth log ---------------------------------------- */

STANDIN_EXPORT uint64_t standin_realtime_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void wait_until(uint64_t target)
{
    for (;;) {
        uint64_t now = standin_realtime_ns();
        if (now >= target)
            return;
        uint64_t left = target - now;
        if (left > 1000000000ull)
            left = 1000000000ull;
        struct timespec ts = { (time_t)(left / 1000000000ull), (long)(left % 1000000000ull) };
        nanosleep(&ts, NULL);
    }
}

static uint32_t sys_tid(void)
{
    return (uint32_t)syscall(SYS_gettid);
}

static pthread_mutex_t g_log_lock = PTHREAD_MUTEX_INITIALIZER;
static int g_log_fd = -1;
static int g_log_tried;

STANDIN_EXPORT void standin_log_line(char tag, const char *fields)
{
    pthread_mutex_lock(&g_log_lock);
    if (!g_log_tried) {
        g_log_tried = 1;
        const char *path = getenv(STANDIN_LOG_ENV);
        if (path && *path)
            g_log_fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    }
    int fd = g_log_fd;
    pthread_mutex_unlock(&g_log_lock);
    if (fd < 0)
        return;
    char line[2048];
    int n = snprintf(line, sizeof line, "%c\t%d\t%u\t%llu\t%s\n", tag, (int)getpid(), sys_tid(),
                     (unsigned long long)standin_realtime_ns(), fields);
    if (n <= 0)
        return;
    if ((size_t)n >= sizeof line) {
        n = (int)sizeof line;
        line[n - 1] = '\n';
    }
    ssize_t w;
    do {
        w = write(fd, line, (size_t)n);
    } while (w < 0 && errno == EINTR);
}

STANDIN_EXPORT void standin_vendor_enter(const char *library, const char *api)
{
    if (t_vendor_depth < 16)
        t_vendor[t_vendor_depth] = api;
    t_vendor_depth++;
    char fields[256];
    snprintf(fields, sizeof fields, "%s\t%s\t%d", library, api, t_vendor_depth);
    standin_log_line('V', fields);
}

STANDIN_EXPORT void standin_vendor_exit(void)
{
    if (t_vendor_depth > 0)
        t_vendor_depth--;
}

static const char *current_vendor(void)
{
    if (t_vendor_depth <= 0)
        return "-";
    int i = t_vendor_depth <= 16 ? t_vendor_depth - 1 : 15;
    return t_vendor[i];
}

/* ---- fork ------------------------------------------------------------------ */

static void atfork_prepare(void)
{
    pthread_mutex_lock(&g_log_lock);
    pthread_mutex_lock(&g_lock);
}

static void atfork_parent(void)
{
    pthread_mutex_unlock(&g_lock);
    pthread_mutex_unlock(&g_log_lock);
}

static void atfork_child(void)
{
    pthread_mutex_unlock(&g_lock);
    pthread_mutex_unlock(&g_log_lock);
    /* The real driver cannot be used in a fork child once the parent has
     * initialised it. */
    if (atomic_load(&g_initialized))
        atomic_store(&g_poisoned, 1);
}

static void init_lock_create(void)
{
    pthread_mutexattr_t a;
    pthread_mutexattr_init(&a);
    pthread_mutexattr_settype(&a, PTHREAD_MUTEX_RECURSIVE);
    pthread_mutex_init(&g_init_lock, &a);
    pthread_mutexattr_destroy(&a);
}

__attribute__((constructor)) static void driver_loaded(void)
{
    pthread_once(&g_init_lock_once, init_lock_create);
    pthread_atfork(atfork_prepare, atfork_parent, atfork_child);
}

/* ---- frames ------------------------------------------------------------------ */

static CUcontext current_context(void)
{
    CUcontext c = t_current;
    if (c && c->magic == CTX_MAGIC && c->alive)
        return c;
    return NULL;
}

STANDIN_EXPORT CUcontext standin_current_context(void)
{
    return current_context();
}

STANDIN_EXPORT int standin_driver_initialized(void)
{
    return atomic_load(&g_initialized) && !atomic_load(&g_poisoned);
}

STANDIN_EXPORT void standin_cuda_observer_set(const struct standin_observer *observer)
{
    atomic_store(&g_observer, observer);
}

STANDIN_EXPORT void standin_api_enter(struct standin_api_frame *f, uint32_t domain, uint32_t cbid,
                                      const char *name, const void *params, void *retval,
                                      const char *symbol)
{
    memset(f, 0, sizeof *f);
    f->domain = domain;
    f->cbid = cbid;
    f->name = name;
    f->params = params;
    f->retval = retval;
    f->symbol = symbol;
    f->tid = sys_tid();
    /* As the real CUPTI does (measured on the H200: every driver call made
     * inside a runtime call carried the runtime call's correlation id), a
     * driver call nested in a runtime call shares its id. */
    if (domain == STANDIN_DOMAIN_DRIVER && t_top && t_top->domain == STANDIN_DOMAIN_RUNTIME)
        f->correlation_id = t_top->correlation_id;
    else
        f->correlation_id = atomic_fetch_add(&g_next_correlation, 1);
    f->context = current_context();
    f->context_id = f->context ? f->context->id : 0;
    f->outer = t_top;
    t_top = f;
    f->start_ns = standin_realtime_ns();
    const struct standin_observer *o = atomic_load(&g_observer);
    if (o && o->api_enter) {
        f->observed = 1;
        o->api_enter(f);
    }
}

STANDIN_EXPORT void standin_api_exit(struct standin_api_frame *f)
{
    f->end_ns = standin_realtime_ns();
    if (!f->context) {
        f->context = current_context();
        f->context_id = f->context ? f->context->id : 0;
    }
    const struct standin_observer *o = atomic_load(&g_observer);
    if (o && o->api_exit && f->observed)
        o->api_exit(f);
    t_top = f->outer;
}

/* The correlation id of the outermost API call on this thread: the one that
 * launched the work (a runtime call around its driver calls). */
static uint32_t launching_correlation(void)
{
    struct standin_api_frame *f = t_top;
    if (!f)
        return 0;
    while (f->outer)
        f = f->outer;
    return f->correlation_id;
}

typedef CUresult (*impl_fn)(const void *params);

/*
 * One driver call: its CUPTI API frame shows frame_params (the entry point's
 * own *_params struct), while impl runs on impl_params.  They differ where an
 * entry point is another one's implementation with other parameters
 * (cuStreamCreate is cuStreamCreateWithPriority at priority 0,
 * cuModuleLoadDataEx is cuModuleLoadData without JIT options).
 */
static CUresult drv_call_as(uint32_t cbid, const char *name, const void *frame_params, impl_fn impl,
                            const void *impl_params, int needs_init, int needs_context, const char *symbol)
{
    CUresult r = CUDA_SUCCESS;
    struct standin_api_frame f;
    standin_api_enter(&f, STANDIN_DOMAIN_DRIVER, cbid, name, frame_params, &r, symbol);
    if (atomic_load(&g_poisoned))
        r = CUDA_ERROR_NOT_INITIALIZED;
    else if (needs_init && !atomic_load(&g_initialized))
        r = CUDA_ERROR_NOT_INITIALIZED;
    else if (needs_context && !current_context())
        r = CUDA_ERROR_INVALID_CONTEXT;
    else
        r = impl(impl_params);
    standin_api_exit(&f);
    return r;
}

static CUresult drv_call(uint32_t cbid, const char *name, const void *params, impl_fn impl,
                         int needs_init, int needs_context, const char *symbol)
{
    return drv_call_as(cbid, name, params, impl, params, needs_init, needs_context, symbol);
}

#define CALL(cbid, params, impl) drv_call(CBID(cbid), #cbid, &(params), impl, 1, 1, NULL)
#define CALL_NOCTX(cbid, params, impl) drv_call(CBID(cbid), #cbid, &(params), impl, 1, 0, NULL)

static const struct standin_observer *observer(void)
{
    return atomic_load(&g_observer);
}

/* ---- init, versions, device ------------------------------------------------ */

static void load_injection(void)
{
    const char *path = getenv("CUDA_INJECTION64_PATH");
    if (!path || !*path)
        return;
    char fields[1200];
    void *h = dlopen(path, RTLD_NOW);
    if (!h) {
        snprintf(fields, sizeof fields, "dlopen-failed\t%s", path);
        standin_log_line('I', fields);
        return;
    }
    int (*init)(void) = (int (*)(void))dlsym(h, "InitializeInjection");
    if (!init) {
        snprintf(fields, sizeof fields, "no-symbol\t%s", path);
        standin_log_line('I', fields);
        return;
    }
    int rc = init();
    snprintf(fields, sizeof fields, "called:%d\t%s", rc, path);
    standin_log_line('I', fields);
}

static CUresult impl_init(const void *vp)
{
    const cuInit_params *p = vp;
    if (p->Flags != 0)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_once(&g_init_lock_once, init_lock_create);
    pthread_mutex_lock(&g_init_lock);
    if (!atomic_load(&g_initialized)) {
        atomic_store(&g_initialized, 1);
        load_injection();
        const struct standin_observer *o = observer();
        if (o && o->init_finished)
            o->init_finished();
    }
    pthread_mutex_unlock(&g_init_lock);
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuInit(unsigned int Flags)
{
    cuInit_params p = { Flags };
    return drv_call(CBID(cuInit), "cuInit", &p, impl_init, 0, 0, NULL);
}

static CUresult impl_driver_version(const void *vp)
{
    const cuDriverGetVersion_params *p = vp;
    if (!p->driverVersion)
        return CUDA_ERROR_INVALID_VALUE;
    *p->driverVersion = STANDIN_DRIVER_VERSION;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDriverGetVersion(int *driverVersion)
{
    cuDriverGetVersion_params p = { driverVersion };
    return drv_call(CBID(cuDriverGetVersion), "cuDriverGetVersion", &p, impl_driver_version, 0, 0,
                    NULL);
}

static CUresult impl_device_get(const void *vp)
{
    const cuDeviceGet_params *p = vp;
    if (!p->device)
        return CUDA_ERROR_INVALID_VALUE;
    if (p->ordinal != 0)
        return CUDA_ERROR_INVALID_DEVICE;
    *p->device = 0;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDeviceGet(CUdevice *device, int ordinal)
{
    cuDeviceGet_params p = { device, ordinal };
    return CALL_NOCTX(cuDeviceGet, p, impl_device_get);
}

static CUresult impl_device_count(const void *vp)
{
    const cuDeviceGetCount_params *p = vp;
    if (!p->count)
        return CUDA_ERROR_INVALID_VALUE;
    *p->count = 1;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDeviceGetCount(int *count)
{
    cuDeviceGetCount_params p = { count };
    return CALL_NOCTX(cuDeviceGetCount, p, impl_device_count);
}

static CUresult impl_device_name(const void *vp)
{
    const cuDeviceGetName_params *p = vp;
    if (!p->name || p->len <= 0)
        return CUDA_ERROR_INVALID_VALUE;
    if (p->dev != 0)
        return CUDA_ERROR_INVALID_DEVICE;
    snprintf(p->name, (size_t)p->len, "%s", STANDIN_DEVICE_NAME);
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDeviceGetName(char *name, int len, CUdevice dev)
{
    cuDeviceGetName_params p = { name, len, dev };
    return CALL_NOCTX(cuDeviceGetName, p, impl_device_name);
}

static CUresult impl_total_mem(const void *vp)
{
    const cuDeviceTotalMem_v2_params *p = vp;
    if (!p->bytes)
        return CUDA_ERROR_INVALID_VALUE;
    if (p->dev != 0)
        return CUDA_ERROR_INVALID_DEVICE;
    *p->bytes = (size_t)STANDIN_DEVICE_MEMORY;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDeviceTotalMem(size_t *bytes, CUdevice dev)
{
    cuDeviceTotalMem_v2_params p = { bytes, dev };
    return CALL_NOCTX(cuDeviceTotalMem_v2, p, impl_total_mem);
}

static CUresult impl_device_attribute(const void *vp)
{
    const cuDeviceGetAttribute_params *p = vp;
    if (!p->pi)
        return CUDA_ERROR_INVALID_VALUE;
    if (p->dev != 0)
        return CUDA_ERROR_INVALID_DEVICE;
    int v = 0;
    switch (p->attrib) {
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: v = STANDIN_DEVICE_CC_MAJOR; break;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: v = STANDIN_DEVICE_CC_MINOR; break;
    case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: v = STANDIN_DEVICE_SMS; break;
    case CU_DEVICE_ATTRIBUTE_WARP_SIZE: v = 32; break;
    case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK: v = 1024; break;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK: v = 49152; break;
    case CU_DEVICE_ATTRIBUTE_CLOCK_RATE: v = 1980000; break;
    case CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING: v = 1; break;
    case CU_DEVICE_ATTRIBUTE_CONCURRENT_KERNELS: v = 1; break;
    default: v = 0; break;
    }
    *p->pi = v;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDeviceGetAttribute(int *pi, CUdevice_attribute attrib, CUdevice dev)
{
    cuDeviceGetAttribute_params p = { pi, attrib, dev };
    return CALL_NOCTX(cuDeviceGetAttribute, p, impl_device_attribute);
}

/* ---- contexts ------------------------------------------------------------------ */

static CUresult impl_primary_retain(const void *vp)
{
    const cuDevicePrimaryCtxRetain_params *p = vp;
    if (!p->pctx)
        return CUDA_ERROR_INVALID_VALUE;
    if (p->dev != 0)
        return CUDA_ERROR_INVALID_DEVICE;
    int created = 0;
    pthread_mutex_lock(&g_lock);
    if (!g_primary.alive) {
        g_primary.alive = 1;
        g_primary.id = g_next_context_id++;
        g_primary.refcount = 0;
        g_legacy.clock = 0;
        created = 1;
    }
    g_primary.refcount++;
    pthread_mutex_unlock(&g_lock);
    *p->pctx = &g_primary;
    if (created) {
        const struct standin_observer *o = observer();
        if (o && o->context_created)
            o->context_created(&g_primary, g_primary.id);
    }
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDevicePrimaryCtxRetain(CUcontext *pctx, CUdevice dev)
{
    cuDevicePrimaryCtxRetain_params p = { pctx, dev };
    return CALL_NOCTX(cuDevicePrimaryCtxRetain, p, impl_primary_retain);
}

/*
 * The fake-GPU time at which every stream (the legacy one and all created
 * ones) has finished its work: what a context synchronisation, and the
 * teardown of the primary context, wait for.
 */
static uint64_t device_idle_time(void)
{
    pthread_mutex_lock(&g_lock);
    uint64_t until = g_legacy.clock;
    for (struct CUstream_st *s = g_streams; s; s = s->next)
        if (s->clock > until)
            until = s->clock;
    pthread_mutex_unlock(&g_lock);
    return until;
}

static CUresult impl_primary_release(const void *vp)
{
    const cuDevicePrimaryCtxRelease_v2_params *p = vp;
    if (p->dev != 0)
        return CUDA_ERROR_INVALID_DEVICE;
    pthread_mutex_lock(&g_lock);
    if (!g_primary.alive || g_primary.refcount <= 0) {
        pthread_mutex_unlock(&g_lock);
        return CUDA_ERROR_INVALID_CONTEXT;
    }
    int destroy = --g_primary.refcount == 0;
    pthread_mutex_unlock(&g_lock);
    if (destroy) {
        /* Wait for the device, tell CUPTI, then tear down. */
        wait_until(device_idle_time());
        const struct standin_observer *o = observer();
        if (o && o->context_destroying)
            o->context_destroying(&g_primary, g_primary.id);
        pthread_mutex_lock(&g_lock);
        g_primary.alive = 0;
        pthread_mutex_unlock(&g_lock);
    }
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDevicePrimaryCtxRelease(CUdevice dev)
{
    cuDevicePrimaryCtxRelease_v2_params p = { dev };
    return CALL_NOCTX(cuDevicePrimaryCtxRelease_v2, p, impl_primary_release);
}

static CUresult impl_ctx_set_current(const void *vp)
{
    const cuCtxSetCurrent_params *p = vp;
    if (p->ctx && (p->ctx->magic != CTX_MAGIC || !p->ctx->alive))
        return CUDA_ERROR_INVALID_CONTEXT;
    t_current = p->ctx;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxSetCurrent(CUcontext ctx)
{
    cuCtxSetCurrent_params p = { ctx };
    return CALL_NOCTX(cuCtxSetCurrent, p, impl_ctx_set_current);
}

static CUresult impl_ctx_get_current(const void *vp)
{
    const cuCtxGetCurrent_params *p = vp;
    if (!p->pctx)
        return CUDA_ERROR_INVALID_VALUE;
    *p->pctx = current_context();
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxGetCurrent(CUcontext *pctx)
{
    cuCtxGetCurrent_params p = { pctx };
    return CALL_NOCTX(cuCtxGetCurrent, p, impl_ctx_get_current);
}

static CUresult impl_ctx_get_device(const void *vp)
{
    const cuCtxGetDevice_params *p = vp;
    if (!p->device)
        return CUDA_ERROR_INVALID_VALUE;
    *p->device = 0;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxGetDevice(CUdevice *device)
{
    cuCtxGetDevice_params p = { device };
    return CALL(cuCtxGetDevice, p, impl_ctx_get_device);
}

STANDIN_EXPORT uint32_t standin_context_id(CUcontext ctx)
{
    if (!ctx || ctx->magic != CTX_MAGIC)
        return 0;
    return ctx->id;
}

/* ---- streams and the fake GPU clock --------------------------------------------- */

static struct CUstream_st *stream_resolve(CUstream s)
{
    if (s == NULL || s == CU_STREAM_LEGACY || s == CU_STREAM_PER_THREAD)
        return &g_legacy;
    if (s->magic != STREAM_MAGIC)
        return NULL;
    return s;
}

STANDIN_EXPORT uint32_t standin_stream_id(CUstream s)
{
    struct CUstream_st *st = stream_resolve(s);
    return st ? st->id : 0;
}

/* Earliest fake-GPU time at which new work on s may start.  Caller holds g_lock. */
static uint64_t stream_ready_locked(struct CUstream_st *s)
{
    uint64_t t = s->clock;
    if (s == &g_legacy) {
        for (struct CUstream_st *o = g_streams; o; o = o->next)
            if (!(o->flags & CU_STREAM_NON_BLOCKING) && o->clock > t)
                t = o->clock;
    } else if (!(s->flags & CU_STREAM_NON_BLOCKING) && g_legacy.clock > t) {
        t = g_legacy.clock;
    }
    return t;
}

static uint64_t max_u64(uint64_t a, uint64_t b)
{
    return a > b ? a : b;
}

/*
 * Stream creation and destruction tell the observer (CUPTI) the same facts
 * about the stream; only the callback differs.  callback may be NULL (the
 * observer does not want this event).
 */
static void notify_stream(void (*callback)(const struct standin_stream_info *), struct CUstream_st *s)
{
    if (!callback)
        return;
    struct standin_stream_info info = { current_context(), s, standin_context_id(current_context()), s->id,
                                        launching_correlation(), (uint32_t)s->priority, s->flags };
    callback(&info);
}

/*
 * Copies, memsets and kernels all occupy a stream the same way: the work
 * starts at `earliest` (the host call plus a launch latency) or when the
 * stream's earlier work allows, whichever is later, runs for duration_ns,
 * and the stream's clock moves to its end.  Caller holds g_lock (a kernel
 * also takes its grid id in the same critical section).
 */
static uint64_t occupy_stream_locked(struct CUstream_st *s, uint64_t earliest, uint64_t duration_ns,
                                     uint64_t *end)
{
    uint64_t start = max_u64(earliest, stream_ready_locked(s));
    *end = start + duration_ns;
    s->clock = *end;
    return start;
}

static CUresult impl_stream_create(const void *vp)
{
    const cuStreamCreateWithPriority_params *p = vp;
    if (!p->phStream)
        return CUDA_ERROR_INVALID_VALUE;
    if (p->flags & ~(unsigned)CU_STREAM_NON_BLOCKING)
        return CUDA_ERROR_INVALID_VALUE;
    struct CUstream_st *s = calloc(1, sizeof *s);
    if (!s)
        return CUDA_ERROR_OUT_OF_MEMORY;
    s->magic = STREAM_MAGIC;
    s->flags = p->flags;
    s->priority = p->priority;
    pthread_mutex_lock(&g_lock);
    s->id = g_next_stream_id++;
    s->next = g_streams;
    g_streams = s;
    pthread_mutex_unlock(&g_lock);
    *p->phStream = s;
    const struct standin_observer *o = observer();
    if (o)
        notify_stream(o->stream_created, s);
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuStreamCreate(CUstream *phStream, unsigned int Flags)
{
    cuStreamCreate_params p = { phStream, Flags };
    cuStreamCreateWithPriority_params q = { phStream, Flags, 0 };
    return drv_call_as(CBID(cuStreamCreate), "cuStreamCreate", &p, impl_stream_create, &q, 1, 1, NULL);
}

CUresult CUDAAPI cuStreamCreateWithPriority(CUstream *phStream, unsigned int flags, int priority)
{
    cuStreamCreateWithPriority_params p = { phStream, flags, priority };
    return CALL(cuStreamCreateWithPriority, p, impl_stream_create);
}

static CUresult impl_stream_destroy(const void *vp)
{
    const cuStreamDestroy_v2_params *p = vp;
    struct CUstream_st *s = p->hStream;
    if (!s || s == CU_STREAM_LEGACY || s == CU_STREAM_PER_THREAD || s->magic != STREAM_MAGIC)
        return CUDA_ERROR_INVALID_HANDLE;
    const struct standin_observer *o = observer();
    if (o)
        notify_stream(o->stream_destroying, s);
    /* The stream's pending work still completes; keep its clock in the
     * legacy stream so a later device synchronisation waits for it. */
    pthread_mutex_lock(&g_lock);
    for (struct CUstream_st **pp = &g_streams; *pp; pp = &(*pp)->next) {
        if (*pp == s) {
            *pp = s->next;
            break;
        }
    }
    if (!(s->flags & CU_STREAM_NON_BLOCKING))
        g_legacy.clock = max_u64(g_legacy.clock, s->clock);
    s->magic = 0;
    pthread_mutex_unlock(&g_lock);
    free(s);
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuStreamDestroy(CUstream hStream)
{
    cuStreamDestroy_v2_params p = { hStream };
    return CALL(cuStreamDestroy_v2, p, impl_stream_destroy);
}

static void report_sync(uint32_t type, uint64_t start, uint64_t end, struct CUstream_st *s,
                        struct CUevent_st *e, CUstream handle)
{
    const struct standin_observer *o = observer();
    if (!o || !o->sync)
        return;
    struct standin_sync_info info = {
        .type = type, .start_ns = start, .end_ns = end,
        .correlation_id = launching_correlation(),
        .context_id = standin_context_id(current_context()),
        .stream_id = s ? s->id : 0xFFFFFFFFu,
        .event_id = e ? e->id : 0xFFFFFFFFu,
        .result = 0,
        .context = current_context(),
        .stream = handle,
    };
    o->sync(&info);
}

static CUresult impl_stream_sync(const void *vp)
{
    const cuStreamSynchronize_params *p = vp;
    struct CUstream_st *s = stream_resolve(p->hStream);
    if (!s)
        return CUDA_ERROR_INVALID_HANDLE;
    uint64_t start = standin_realtime_ns();
    pthread_mutex_lock(&g_lock);
    uint64_t until = stream_ready_locked(s);
    pthread_mutex_unlock(&g_lock);
    wait_until(until);
    report_sync(3 /* STREAM_SYNCHRONIZE */, start, standin_realtime_ns(), s, NULL, p->hStream);
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuStreamSynchronize(CUstream hStream)
{
    cuStreamSynchronize_params p = { hStream };
    return CALL(cuStreamSynchronize, p, impl_stream_sync);
}

static CUresult impl_stream_query(const void *vp)
{
    const cuStreamQuery_params *p = vp;
    struct CUstream_st *s = stream_resolve(p->hStream);
    if (!s)
        return CUDA_ERROR_INVALID_HANDLE;
    pthread_mutex_lock(&g_lock);
    uint64_t until = stream_ready_locked(s);
    pthread_mutex_unlock(&g_lock);
    return standin_realtime_ns() >= until ? CUDA_SUCCESS : CUDA_ERROR_NOT_READY;
}

CUresult CUDAAPI cuStreamQuery(CUstream hStream)
{
    cuStreamQuery_params p = { hStream };
    return CALL(cuStreamQuery, p, impl_stream_query);
}

static CUresult impl_ctx_sync(const void *vp)
{
    (void)vp;
    uint64_t start = standin_realtime_ns();
    wait_until(device_idle_time());
    report_sync(4 /* CONTEXT_SYNCHRONIZE */, start, standin_realtime_ns(), NULL, NULL, NULL);
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxSynchronize(void)
{
    cuCtxSynchronize_v2_params p = { NULL };
    return drv_call(CBID(cuCtxSynchronize), "cuCtxSynchronize", &p, impl_ctx_sync, 1, 1, NULL);
}

/* ---- events --------------------------------------------------------------------- */

static struct CUevent_st *event_ok(CUevent e)
{
    return e && e->magic == EVENT_MAGIC ? e : NULL;
}

static CUresult impl_event_create(const void *vp)
{
    const cuEventCreate_params *p = vp;
    if (!p->phEvent)
        return CUDA_ERROR_INVALID_VALUE;
    if (p->Flags & ~(unsigned)(CU_EVENT_BLOCKING_SYNC | CU_EVENT_DISABLE_TIMING | CU_EVENT_INTERPROCESS))
        return CUDA_ERROR_INVALID_VALUE;
    struct CUevent_st *e = calloc(1, sizeof *e);
    if (!e)
        return CUDA_ERROR_OUT_OF_MEMORY;
    e->magic = EVENT_MAGIC;
    e->flags = p->Flags;
    pthread_mutex_lock(&g_lock);
    e->id = g_next_event_id++;
    pthread_mutex_unlock(&g_lock);
    *p->phEvent = e;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuEventCreate(CUevent *phEvent, unsigned int Flags)
{
    cuEventCreate_params p = { phEvent, Flags };
    return CALL(cuEventCreate, p, impl_event_create);
}

static CUresult event_record(CUevent hEvent, CUstream hStream)
{
    struct CUevent_st *e = event_ok(hEvent);
    struct CUstream_st *s = stream_resolve(hStream);
    if (!e || !s)
        return CUDA_ERROR_INVALID_HANDLE;
    uint64_t now = standin_realtime_ns();
    pthread_mutex_lock(&g_lock);
    uint64_t ts = max_u64(now, stream_ready_locked(s));
    s->clock = ts;
    e->ts = ts;
    e->recorded = 1;
    e->stream_id = s->id;
    pthread_mutex_unlock(&g_lock);
    uint32_t corr = launching_correlation();
    const struct standin_observer *o = observer();
    if (o && o->cuda_event) {
        struct standin_event_info info = { corr, standin_context_id(current_context()), s->id, e->id,
                                           ts };
        o->cuda_event(&info);
    }
    char fields[256];
    snprintf(fields, sizeof fields, "%u\t%u\t%u\t%llu", corr, e->id, s->id, (unsigned long long)ts);
    standin_log_line('E', fields);
    return CUDA_SUCCESS;
}

static CUresult impl_event_record(const void *vp)
{
    const cuEventRecord_params *p = vp;
    return event_record(p->hEvent, p->hStream);
}

CUresult CUDAAPI cuEventRecord(CUevent hEvent, CUstream hStream)
{
    cuEventRecord_params p = { hEvent, hStream };
    return CALL(cuEventRecord, p, impl_event_record);
}

static CUresult impl_event_record_flags(const void *vp)
{
    const cuEventRecordWithFlags_params *p = vp;
    return event_record(p->hEvent, p->hStream);
}

CUresult CUDAAPI cuEventRecordWithFlags(CUevent hEvent, CUstream hStream, unsigned int flags)
{
    cuEventRecordWithFlags_params p = { hEvent, hStream, flags };
    return CALL(cuEventRecordWithFlags, p, impl_event_record_flags);
}

static CUresult impl_event_sync(const void *vp)
{
    const cuEventSynchronize_params *p = vp;
    struct CUevent_st *e = event_ok(p->hEvent);
    if (!e)
        return CUDA_ERROR_INVALID_HANDLE;
    uint64_t start = standin_realtime_ns();
    if (e->recorded)
        wait_until(e->ts);
    report_sync(1 /* EVENT_SYNCHRONIZE */, start, standin_realtime_ns(), NULL, e, NULL);
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuEventSynchronize(CUevent hEvent)
{
    cuEventSynchronize_params p = { hEvent };
    return CALL(cuEventSynchronize, p, impl_event_sync);
}

static CUresult impl_event_query(const void *vp)
{
    const cuEventQuery_params *p = vp;
    struct CUevent_st *e = event_ok(p->hEvent);
    if (!e)
        return CUDA_ERROR_INVALID_HANDLE;
    if (!e->recorded)
        return CUDA_SUCCESS;
    return standin_realtime_ns() >= e->ts ? CUDA_SUCCESS : CUDA_ERROR_NOT_READY;
}

CUresult CUDAAPI cuEventQuery(CUevent hEvent)
{
    cuEventQuery_params p = { hEvent };
    return CALL(cuEventQuery, p, impl_event_query);
}

static CUresult impl_event_elapsed(const void *vp)
{
    const cuEventElapsedTime_v2_params *p = vp;
    struct CUevent_st *a = event_ok(p->hStart), *b = event_ok(p->hEnd);
    CUresult r = CUDA_SUCCESS;
    float ms = 0.0f;
    if (!p->pMilliseconds)
        r = CUDA_ERROR_INVALID_VALUE;
    else if (!a || !b)
        r = CUDA_ERROR_INVALID_HANDLE;
    else if ((a->flags | b->flags) & CU_EVENT_DISABLE_TIMING)
        r = CUDA_ERROR_INVALID_HANDLE;
    else if (!a->recorded || !b->recorded)
        r = CUDA_ERROR_INVALID_HANDLE;
    else {
        uint64_t now = standin_realtime_ns();
        if (a->ts > now || b->ts > now)
            r = CUDA_ERROR_NOT_READY;
        else {
            ms = (float)(((double)b->ts - (double)a->ts) / 1e6);
            *p->pMilliseconds = ms;
        }
    }
    uint32_t bits;
    memcpy(&bits, &ms, sizeof bits);
    char fields[256];
    snprintf(fields, sizeof fields, "%u\t%d\t%.9g\t%08x", launching_correlation(), (int)r, (double)ms,
             bits);
    standin_log_line('T', fields);
    return r;
}

CUresult CUDAAPI cuEventElapsedTime(float *pMilliseconds, CUevent hStart, CUevent hEnd)
{
    cuEventElapsedTime_v2_params p = { pMilliseconds, hStart, hEnd };
    return CALL(cuEventElapsedTime_v2, p, impl_event_elapsed);
}

static CUresult impl_event_destroy(const void *vp)
{
    const cuEventDestroy_v2_params *p = vp;
    struct CUevent_st *e = event_ok(p->hEvent);
    if (!e)
        return CUDA_ERROR_INVALID_HANDLE;
    e->magic = 0;
    free(e);
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuEventDestroy(CUevent hEvent)
{
    cuEventDestroy_v2_params p = { hEvent };
    return CALL(cuEventDestroy_v2, p, impl_event_destroy);
}

static CUresult impl_stream_wait_event(const void *vp)
{
    const cuStreamWaitEvent_params *p = vp;
    struct CUstream_st *s = stream_resolve(p->hStream);
    struct CUevent_st *e = event_ok(p->hEvent);
    if (!s || !e)
        return CUDA_ERROR_INVALID_HANDLE;
    uint64_t now = standin_realtime_ns();
    pthread_mutex_lock(&g_lock);
    if (e->recorded)
        s->clock = max_u64(s->clock, e->ts);
    pthread_mutex_unlock(&g_lock);
    report_sync(2 /* STREAM_WAIT_EVENT */, now, standin_realtime_ns(), s, e, p->hStream);
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuStreamWaitEvent(CUstream hStream, CUevent hEvent, unsigned int Flags)
{
    cuStreamWaitEvent_params p = { hStream, hEvent, Flags };
    return CALL(cuStreamWaitEvent, p, impl_stream_wait_event);
}

/* ---- memory ------------------------------------------------------------------------ */

static int alloc_find_locked(uintptr_t p, size_t *index)
{
    for (size_t i = 0; i < g_nallocs; i++) {
        if (p >= g_allocs[i].base && p < g_allocs[i].base + g_allocs[i].size) {
            if (index)
                *index = i;
            return 1;
        }
    }
    return 0;
}

static int is_device_pointer(const void *p)
{
    pthread_mutex_lock(&g_lock);
    int r = alloc_find_locked((uintptr_t)p, NULL);
    pthread_mutex_unlock(&g_lock);
    return r;
}

static CUresult impl_mem_alloc(const void *vp)
{
    const cuMemAlloc_v2_params *p = vp;
    if (!p->dptr)
        return CUDA_ERROR_INVALID_VALUE;
    if (p->bytesize == 0)
        return CUDA_ERROR_INVALID_VALUE;
    size_t size = (p->bytesize + 255) & ~(size_t)255;
    void *mem = aligned_alloc(256, size);
    if (!mem)
        return CUDA_ERROR_OUT_OF_MEMORY;
    memset(mem, 0, size);
    pthread_mutex_lock(&g_lock);
    if (g_nallocs == g_allocs_cap) {
        size_t cap = g_allocs_cap ? 2 * g_allocs_cap : 64;
        struct allocation *n = realloc(g_allocs, cap * sizeof *n);
        if (!n) {
            pthread_mutex_unlock(&g_lock);
            free(mem);
            return CUDA_ERROR_OUT_OF_MEMORY;
        }
        g_allocs = n;
        g_allocs_cap = cap;
    }
    g_allocs[g_nallocs].base = (uintptr_t)mem;
    g_allocs[g_nallocs].size = p->bytesize;
    g_nallocs++;
    pthread_mutex_unlock(&g_lock);
    *p->dptr = (CUdeviceptr)(uintptr_t)mem;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemAlloc(CUdeviceptr *dptr, size_t bytesize)
{
    cuMemAlloc_v2_params p = { dptr, bytesize };
    return CALL(cuMemAlloc_v2, p, impl_mem_alloc);
}

static CUresult impl_mem_free(const void *vp)
{
    const cuMemFree_v2_params *p = vp;
    if (p->dptr == 0)
        return CUDA_SUCCESS;
    size_t i;
    pthread_mutex_lock(&g_lock);
    if (!alloc_find_locked((uintptr_t)p->dptr, &i) || g_allocs[i].base != (uintptr_t)p->dptr) {
        pthread_mutex_unlock(&g_lock);
        return CUDA_ERROR_INVALID_VALUE;
    }
    g_allocs[i] = g_allocs[--g_nallocs];
    pthread_mutex_unlock(&g_lock);
    free((void *)(uintptr_t)p->dptr);
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemFree(CUdeviceptr dptr)
{
    cuMemFree_v2_params p = { dptr };
    return CALL(cuMemFree_v2, p, impl_mem_free);
}

/* A copy of `bytes` on stream s; the host waits for it unless async. */
static void do_copy(void *dst, const void *src, size_t bytes, CUstream handle, int async)
{
    struct CUstream_st *s = stream_resolve(handle);
    int dd = is_device_pointer(dst), sd = is_device_pointer(src);
    uint64_t now = standin_realtime_ns();
    uint64_t end;
    pthread_mutex_lock(&g_lock);
    uint64_t start = occupy_stream_locked(s, now + 1000, 1500 + bytes / 20, &end);
    pthread_mutex_unlock(&g_lock);
    if (bytes)
        memmove(dst, src, bytes);
    const struct standin_observer *o = observer();
    if (o && o->memcpy) {
        uint8_t kind = sd ? (dd ? 8 /* DTOD */ : 2 /* DTOH */) : (dd ? 1 /* HTOD */ : 9 /* HTOH */);
        struct standin_memcpy_info info = {
            .bytes = bytes, .start_ns = start, .end_ns = end,
            .context_id = standin_context_id(current_context()), .stream_id = s->id,
            .correlation_id = launching_correlation(), .copy_kind = kind,
            .src_kind = sd ? 3 : 1, .dst_kind = dd ? 3 : 1, .async = (uint8_t)async,
        };
        o->memcpy(&info);
    }
    if (!async)
        wait_until(end);
}

static CUresult impl_memcpy(const void *vp)
{
    const cuMemcpy_params *p = vp;
    if (p->ByteCount && (!p->dst || !p->src))
        return CUDA_ERROR_INVALID_VALUE;
    do_copy((void *)(uintptr_t)p->dst, (const void *)(uintptr_t)p->src, p->ByteCount, NULL, 0);
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemcpy(CUdeviceptr dst, CUdeviceptr src, size_t ByteCount)
{
    cuMemcpy_params p = { dst, src, ByteCount };
    return CALL(cuMemcpy, p, impl_memcpy);
}

static CUresult impl_memcpy_async(const void *vp)
{
    const cuMemcpyAsync_params *p = vp;
    if (p->ByteCount && (!p->dst || !p->src))
        return CUDA_ERROR_INVALID_VALUE;
    if (!stream_resolve(p->hStream))
        return CUDA_ERROR_INVALID_HANDLE;
    do_copy((void *)(uintptr_t)p->dst, (const void *)(uintptr_t)p->src, p->ByteCount, p->hStream, 1);
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemcpyAsync(CUdeviceptr dst, CUdeviceptr src, size_t ByteCount, CUstream hStream)
{
    cuMemcpyAsync_params p = { dst, src, ByteCount, hStream };
    return CALL(cuMemcpyAsync, p, impl_memcpy_async);
}

static CUresult impl_memcpy_htod(const void *vp)
{
    const cuMemcpyHtoD_v2_params *p = vp;
    if (p->ByteCount && (!p->dstDevice || !p->srcHost))
        return CUDA_ERROR_INVALID_VALUE;
    do_copy((void *)(uintptr_t)p->dstDevice, p->srcHost, p->ByteCount, NULL, 0);
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemcpyHtoD(CUdeviceptr dstDevice, const void *srcHost, size_t ByteCount)
{
    cuMemcpyHtoD_v2_params p = { dstDevice, srcHost, ByteCount };
    return CALL(cuMemcpyHtoD_v2, p, impl_memcpy_htod);
}

static CUresult impl_memcpy_dtoh(const void *vp)
{
    const cuMemcpyDtoH_v2_params *p = vp;
    if (p->ByteCount && (!p->dstHost || !p->srcDevice))
        return CUDA_ERROR_INVALID_VALUE;
    do_copy(p->dstHost, (const void *)(uintptr_t)p->srcDevice, p->ByteCount, NULL, 0);
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemcpyDtoH(void *dstHost, CUdeviceptr srcDevice, size_t ByteCount)
{
    cuMemcpyDtoH_v2_params p = { dstHost, srcDevice, ByteCount };
    return CALL(cuMemcpyDtoH_v2, p, impl_memcpy_dtoh);
}

static void do_memset(void *dst, unsigned char value, size_t n, CUstream handle, int async)
{
    struct CUstream_st *s = stream_resolve(handle);
    uint64_t now = standin_realtime_ns();
    uint64_t end;
    pthread_mutex_lock(&g_lock);
    uint64_t start = occupy_stream_locked(s, now + 1000, 1000 + n / 100, &end);
    pthread_mutex_unlock(&g_lock);
    memset(dst, value, n);
    const struct standin_observer *o = observer();
    if (o && o->memset) {
        struct standin_memset_info info = {
            .bytes = n, .start_ns = start, .end_ns = end,
            .context_id = standin_context_id(current_context()), .stream_id = s->id,
            .correlation_id = launching_correlation(), .value = value, .async = (uint8_t)async,
        };
        o->memset(&info);
    }
}

static CUresult impl_memset(const void *vp)
{
    const cuMemsetD8_v2_params *p = vp;
    if (!p->dstDevice || !is_device_pointer((void *)(uintptr_t)p->dstDevice))
        return CUDA_ERROR_INVALID_VALUE;
    do_memset((void *)(uintptr_t)p->dstDevice, p->uc, p->N, NULL, 0);
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemsetD8(CUdeviceptr dstDevice, unsigned char uc, size_t N)
{
    cuMemsetD8_v2_params p = { dstDevice, uc, N };
    return CALL(cuMemsetD8_v2, p, impl_memset);
}

static CUresult impl_memset_async(const void *vp)
{
    const cuMemsetD8Async_params *p = vp;
    if (!p->dstDevice || !is_device_pointer((void *)(uintptr_t)p->dstDevice))
        return CUDA_ERROR_INVALID_VALUE;
    if (!stream_resolve(p->hStream))
        return CUDA_ERROR_INVALID_HANDLE;
    do_memset((void *)(uintptr_t)p->dstDevice, p->uc, p->N, p->hStream, 1);
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemsetD8Async(CUdeviceptr dstDevice, unsigned char uc, size_t N, CUstream hStream)
{
    cuMemsetD8Async_params p = { dstDevice, uc, N, hStream };
    return CALL(cuMemsetD8Async, p, impl_memset_async);
}

/* ---- modules and functions ------------------------------------------------------------ */

/* The size of a module image, read from its header like the driver does. */
static size_t image_size(const void *image)
{
    const unsigned char *b = image;
    if (!b)
        return 0;
    if (b[0] == 0x7f && b[1] == 'E' && b[2] == 'L' && b[3] == 'F' && b[4] == 2 /* ELFCLASS64 */) {
        uint64_t phoff, shoff;
        uint16_t phentsize, phnum, shentsize, shnum;
        memcpy(&phoff, b + 0x20, 8);
        memcpy(&shoff, b + 0x28, 8);
        memcpy(&phentsize, b + 0x36, 2);
        memcpy(&phnum, b + 0x38, 2);
        memcpy(&shentsize, b + 0x3a, 2);
        memcpy(&shnum, b + 0x3c, 2);
        uint64_t end = 64;
        end = max_u64(end, phoff + (uint64_t)phentsize * phnum);
        end = max_u64(end, shoff + (uint64_t)shentsize * shnum);
        return (size_t)end;
    }
    uint32_t magic;
    memcpy(&magic, b, 4);
    if (magic == 0xBA55ED50u) {
        uint16_t header_size;
        uint64_t fat_size;
        memcpy(&header_size, b + 6, 2);
        memcpy(&fat_size, b + 8, 8);
        return (size_t)header_size + (size_t)fat_size;
    }
    /* PTX text, NUL terminated */
    return strlen((const char *)b) + 1;
}

static CUresult impl_module_load(const void *vp)
{
    const cuModuleLoadData_params *p = vp;
    if (!p->module || !p->image)
        return CUDA_ERROR_INVALID_VALUE;
    size_t size = image_size(p->image);
    if (size == 0 || size > (1u << 30))
        return CUDA_ERROR_INVALID_IMAGE;
    struct CUmod_st *m = calloc(1, sizeof *m);
    void *copy = malloc(size);
    if (!m || !copy) {
        free(m);
        free(copy);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    memcpy(copy, p->image, size);
    m->magic = MODULE_MAGIC;
    m->image = copy;
    m->size = size;
    m->loaded = 1;
    pthread_mutex_lock(&g_lock);
    m->id = g_next_module_id++;
    pthread_mutex_unlock(&g_lock);
    *p->module = m;
    const struct standin_observer *o = observer();
    if (o && o->module_loaded)
        o->module_loaded(current_context(), m->id, m->image, m->size);
    char fields[256];
    snprintf(fields, sizeof fields, "%u\t%u\t%zu\t%s", launching_correlation(), m->id, size,
             current_vendor());
    standin_log_line('M', fields);
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuModuleLoadData(CUmodule *module, const void *image)
{
    cuModuleLoadData_params p = { module, image };
    return CALL(cuModuleLoadData, p, impl_module_load);
}

CUresult CUDAAPI cuModuleLoadDataEx(CUmodule *module, const void *image, unsigned int numOptions,
                                    CUjit_option *options, void **optionValues)
{
    cuModuleLoadDataEx_params p = { module, image, numOptions, options, optionValues };
    cuModuleLoadData_params q = { module, image };
    return drv_call_as(CBID(cuModuleLoadDataEx), "cuModuleLoadDataEx", &p, impl_module_load, &q, 1, 1, NULL);
}

static CUresult impl_module_unload(const void *vp)
{
    const cuModuleUnload_params *p = vp;
    struct CUmod_st *m = p->hmod;
    if (!m || m->magic != MODULE_MAGIC || !m->loaded)
        return CUDA_ERROR_INVALID_HANDLE;
    const struct standin_observer *o = observer();
    if (o && o->module_unloading)
        o->module_unloading(current_context(), m->id, m->image, m->size);
    /* Functions stay readable: a stale CUfunction must not crash us. */
    m->loaded = 0;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuModuleUnload(CUmodule hmod)
{
    cuModuleUnload_params p = { hmod };
    return CALL(cuModuleUnload, p, impl_module_unload);
}

/* The image defines `name`: a whole word in its string table (cubin,
 * fatbin) or an entry in its text (PTX). */
static int image_has_name(const struct CUmod_st *m, const char *name)
{
    size_t n = strlen(name);
    const char *base = m->image, *end = base + m->size, *p = base;
    while (p < end && (p = memmem(p, (size_t)(end - p), name, n)) != NULL) {
        char before = p > base ? p[-1] : '\0';
        char after = p + n < end ? p[n] : '\0';
        int word_start = before == '\0' || before == ' ' || before == '\t' || before == '\n';
        int word_end = after == '\0' || after == '(' || after == ' ' || after == '\t' || after == '\n';
        if (word_start && word_end)
            return 1;
        p++;
    }
    return 0;
}

static CUresult impl_module_get_function(const void *vp)
{
    const cuModuleGetFunction_params *p = vp;
    struct CUmod_st *m = p->hmod;
    if (!p->hfunc || !p->name)
        return CUDA_ERROR_INVALID_VALUE;
    if (!m || m->magic != MODULE_MAGIC || !m->loaded)
        return CUDA_ERROR_INVALID_HANDLE;
    if (!image_has_name(m, p->name))
        return CUDA_ERROR_NOT_FOUND;
    pthread_mutex_lock(&g_lock);
    struct CUfunc_st *fn;
    for (fn = m->functions; fn; fn = fn->next)
        if (!strcmp(fn->name, p->name))
            break;
    if (!fn) {
        fn = calloc(1, sizeof *fn);
        if (fn) {
            fn->magic = FUNC_MAGIC;
            fn->name = strdup(p->name);
            fn->module = m;
            fn->registers = 32;
            fn->next = m->functions;
            m->functions = fn;
        }
    }
    pthread_mutex_unlock(&g_lock);
    if (!fn || !fn->name)
        return CUDA_ERROR_OUT_OF_MEMORY;
    *p->hfunc = fn;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuModuleGetFunction(CUfunction *hfunc, CUmodule hmod, const char *name)
{
    cuModuleGetFunction_params p = { hfunc, hmod, name };
    return CALL(cuModuleGetFunction, p, impl_module_get_function);
}

STANDIN_EXPORT CUresult standin_function_set_body(CUfunction fn, standin_body_fn body, uint16_t registers,
                                                  int32_t static_shared)
{
    if (!fn || fn->magic != FUNC_MAGIC)
        return CUDA_ERROR_INVALID_HANDLE;
    fn->body = body;
    if (registers)
        fn->registers = registers;
    fn->static_shared = static_shared;
    return CUDA_SUCCESS;
}

/* ---- launches ----------------------------------------------------------------------- */

static CUresult launch(CUfunction fn, const unsigned grid[3], const unsigned block[3], unsigned shmem,
                       CUstream hStream, void **params, void **extra)
{
    if (!fn || fn->magic != FUNC_MAGIC)
        return CUDA_ERROR_INVALID_HANDLE;
    if (!fn->module || !fn->module->loaded)
        return CUDA_ERROR_INVALID_HANDLE;
    struct CUstream_st *s = stream_resolve(hStream);
    if (!s)
        return CUDA_ERROR_INVALID_HANDLE;
    for (int i = 0; i < 3; i++)
        if (grid[i] == 0 || block[i] == 0)
            return CUDA_ERROR_INVALID_VALUE;
    if ((uint64_t)block[0] * block[1] * block[2] > 1024)
        return CUDA_ERROR_INVALID_VALUE;
    if (extra && !params)
        return CUDA_ERROR_NOT_SUPPORTED;
    uint64_t threads = (uint64_t)grid[0] * grid[1] * grid[2] * block[0] * block[1] * block[2];
    uint64_t duration = 4000 + threads / 8;
    if (duration > 500000)
        duration = 500000;
    uint64_t now = standin_realtime_ns();
    uint64_t end;
    pthread_mutex_lock(&g_lock);
    uint64_t start = occupy_stream_locked(s, now + 1500, duration, &end);
    int64_t grid_id = g_next_grid_id++;
    pthread_mutex_unlock(&g_lock);

    if (fn->body)
        fn->body(params);

    uint32_t corr = launching_correlation();
    const struct standin_observer *o = observer();
    if (o && o->kernel) {
        struct standin_kernel_info info = {
            .name = fn->name, .context = current_context(),
            .context_id = standin_context_id(current_context()), .stream_id = s->id,
            .correlation_id = corr, .device_id = 0,
            .grid = { (int32_t)grid[0], (int32_t)grid[1], (int32_t)grid[2] },
            .block = { (int32_t)block[0], (int32_t)block[1], (int32_t)block[2] },
            .static_shared = fn->static_shared, .dynamic_shared = (int32_t)shmem,
            .registers = fn->registers, .launch_type = 0,
            .start_ns = start, .end_ns = end, .queued_ns = now, .submitted_ns = now + 500,
            .grid_id = grid_id,
        };
        o->kernel(&info);
    }
    char fields[1536];
    snprintf(fields, sizeof fields, "%u\t%u\t%u\t%llu\t%llu\t%ux%ux%u\t%ux%ux%u\t%s\t%s", corr, s->id,
             standin_context_id(current_context()), (unsigned long long)start, (unsigned long long)end,
             grid[0], grid[1], grid[2], block[0], block[1], block[2], current_vendor(), fn->name);
    standin_log_line('K', fields);
    return CUDA_SUCCESS;
}

static CUresult impl_launch_kernel(const void *vp)
{
    const cuLaunchKernel_params *p = vp;
    unsigned grid[3] = { p->gridDimX, p->gridDimY, p->gridDimZ };
    unsigned block[3] = { p->blockDimX, p->blockDimY, p->blockDimZ };
    return launch(p->f, grid, block, p->sharedMemBytes, p->hStream, p->kernelParams, p->extra);
}

static const char *function_name(CUfunction f)
{
    return f && f->magic == FUNC_MAGIC ? f->name : NULL;
}

CUresult CUDAAPI cuLaunchKernel(CUfunction f, unsigned int gridDimX, unsigned int gridDimY,
                                unsigned int gridDimZ, unsigned int blockDimX, unsigned int blockDimY,
                                unsigned int blockDimZ, unsigned int sharedMemBytes, CUstream hStream,
                                void **kernelParams, void **extra)
{
    cuLaunchKernel_params p = { f, gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ,
                                sharedMemBytes, hStream, kernelParams, extra };
    return drv_call(CBID(cuLaunchKernel), "cuLaunchKernel", &p, impl_launch_kernel, 1, 1,
                    function_name(f));
}

static CUresult impl_launch_kernel_ex(const void *vp)
{
    const cuLaunchKernelEx_params *p = vp;
    const CUlaunchConfig *c = p->config;
    if (!c)
        return CUDA_ERROR_INVALID_VALUE;
    unsigned grid[3] = { c->gridDimX, c->gridDimY, c->gridDimZ };
    unsigned block[3] = { c->blockDimX, c->blockDimY, c->blockDimZ };
    return launch(p->f, grid, block, c->sharedMemBytes, c->hStream, p->kernelParams, p->extra);
}

CUresult CUDAAPI cuLaunchKernelEx(const CUlaunchConfig *config, CUfunction f, void **kernelParams,
                                  void **extra)
{
    cuLaunchKernelEx_params p = { config, f, kernelParams, extra };
    return drv_call(CBID(cuLaunchKernelEx), "cuLaunchKernelEx", &p, impl_launch_kernel_ex, 1, 1,
                    function_name(f));
}

/* ---- errors and entry points ------------------------------------------------------------ */

static const struct {
    CUresult code;
    const char *name, *text;
} g_errors[] = {
    { CUDA_SUCCESS, "CUDA_SUCCESS", "no error" },
    { CUDA_ERROR_INVALID_VALUE, "CUDA_ERROR_INVALID_VALUE", "invalid argument" },
    { CUDA_ERROR_OUT_OF_MEMORY, "CUDA_ERROR_OUT_OF_MEMORY", "out of memory" },
    { CUDA_ERROR_NOT_INITIALIZED, "CUDA_ERROR_NOT_INITIALIZED", "initialization error" },
    { CUDA_ERROR_INVALID_DEVICE, "CUDA_ERROR_INVALID_DEVICE", "invalid device ordinal" },
    { CUDA_ERROR_INVALID_IMAGE, "CUDA_ERROR_INVALID_IMAGE", "device kernel image is invalid" },
    { CUDA_ERROR_INVALID_CONTEXT, "CUDA_ERROR_INVALID_CONTEXT", "invalid device context" },
    { CUDA_ERROR_INVALID_HANDLE, "CUDA_ERROR_INVALID_HANDLE", "invalid resource handle" },
    { CUDA_ERROR_NOT_FOUND, "CUDA_ERROR_NOT_FOUND", "named symbol not found" },
    { CUDA_ERROR_NOT_READY, "CUDA_ERROR_NOT_READY", "device not ready" },
    { CUDA_ERROR_NOT_SUPPORTED, "CUDA_ERROR_NOT_SUPPORTED", "operation not supported" },
};

CUresult CUDAAPI cuGetErrorString(CUresult error, const char **pStr)
{
    if (!pStr)
        return CUDA_ERROR_INVALID_VALUE;
    for (size_t i = 0; i < sizeof g_errors / sizeof g_errors[0]; i++) {
        if (g_errors[i].code == error) {
            *pStr = g_errors[i].text;
            return CUDA_SUCCESS;
        }
    }
    *pStr = NULL;
    return CUDA_ERROR_INVALID_VALUE;
}

CUresult CUDAAPI cuGetErrorName(CUresult error, const char **pStr)
{
    if (!pStr)
        return CUDA_ERROR_INVALID_VALUE;
    for (size_t i = 0; i < sizeof g_errors / sizeof g_errors[0]; i++) {
        if (g_errors[i].code == error) {
            *pStr = g_errors[i].name;
            return CUDA_SUCCESS;
        }
    }
    *pStr = NULL;
    return CUDA_ERROR_INVALID_VALUE;
}

struct proc_lookup {
    const char *symbol;
    void **pfn;
};

static CUresult impl_get_proc_address(const void *vp)
{
    const cuGetProcAddress_v2_params *p = vp;
    if (!p->symbol || !p->pfn)
        return CUDA_ERROR_INVALID_VALUE;
    Dl_info info;
    void *self = NULL;
    if (dladdr((void *)&impl_get_proc_address, &info) && info.dli_fname)
        self = dlopen(info.dli_fname, RTLD_LAZY | RTLD_NOLOAD);
    void *fn = NULL;
    if (self) {
        char name[256];
        snprintf(name, sizeof name, "%s_v2", p->symbol);
        fn = dlsym(self, name);
        if (!fn)
            fn = dlsym(self, p->symbol);
        dlclose(self);
    }
    *p->pfn = fn;
    if (p->symbolStatus)
        *p->symbolStatus = fn ? CU_GET_PROC_ADDRESS_SUCCESS : CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
    return fn ? CUDA_SUCCESS : CUDA_ERROR_NOT_FOUND;
}

CUresult CUDAAPI cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags,
                                  CUdriverProcAddressQueryResult *symbolStatus)
{
    cuGetProcAddress_v2_params p = { symbol, pfn, cudaVersion, flags, symbolStatus };
    return drv_call(CBID(cuGetProcAddress_v2), "cuGetProcAddress_v2", &p, impl_get_proc_address, 0, 0,
                    NULL);
}
