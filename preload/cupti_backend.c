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
 *
 * The backend's parts, one job each (cupti_internal.h): this file holds its
 * state, finds the process's libcupti, applies the settings and starts
 * everything; cupti_activity.c takes the activity buffers and converts their
 * records; cupti_callbacks.c is the callback API's side (timing calls, API
 * records made by callback, the benchmark's floor); cupti_modules.c records
 * module loads; cupti_kinds.c chooses the activity kinds and the API record
 * policy.
 */
#define _GNU_SOURCE
#include <cupti.h>
#include <dlfcn.h>
#include <link.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cupti_internal.h"
#include "preload_internal.h"

#define FLUSH_PERIOD_MS 500u

#define DEFINE_POINTER(name, ret, args) ret(*real_##name) args;
CUPTI_FUNCTIONS(DEFINE_POINTER)
CUPTI_OPTIONAL_FUNCTIONS(DEFINE_POINTER)

void *cupti_handle;
static atomic_int cupti_recording;
static atomic_int injection_done;
atomic_llong buffers_lost;
CUpti_SubscriberHandle subscriber;
int api_by_callback;                    /* API records made by callback (see api_callback) */
static int thread_id_type_system;       /* KAUDIT_CUPTI_THREAD_ID (apply_tuning) */
int kernel_at_context;                  /* KAUDIT_CUPTI_KERNEL_AT (apply_tuning) */

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

const char *result_text(CUptiResult rc)
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

/* ---- setup -------------------------------------------------------------------- */

static uint64_t CUPTIAPI realtime_clock(void)
{
    return kat_now_ns();
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

    thread_id_type_system = !kat_env_equals("KAUDIT_CUPTI_THREAD_ID", "default");
    kernel_at_context = kat_env_equals("KAUDIT_CUPTI_KERNEL_AT", "context");
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
