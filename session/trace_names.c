/* trace_names.c - see trace_names.h. */
#include "trace_names.h"

#include <stddef.h>
#include <string.h>

#include "trace_format.h"

static const char *name_of(const char *const *names, size_t count, uint32_t v)
{
    return v < count && names[v] ? names[v] : "unknown";
}
#define NAME_OF(table, v) name_of(table, sizeof(table) / sizeof(table[0]), (v))

const char *kat_origin_name(uint32_t v)
{
    static const char *const names[] = { [KAT_ORIGIN_EXEC] = "exec", [KAT_ORIGIN_FORK] = "fork" };
    return NAME_OF(names, v);
}

const char *kat_end_kind_name(uint32_t v)
{
    static const char *const names[] = {
        [KAT_END_EXIT] = "exit", [KAT_END__EXIT] = "_exit", [KAT_END_EXEC] = "exec" };
    return NAME_OF(names, v);
}

const char *kat_fork_kind_name(uint32_t v)
{
    static const char *const names[] = {
        [KAT_FORK_FORK] = "fork", [KAT_FORK_POSIX_SPAWN] = "posix_spawn" };
    return NAME_OF(names, v);
}

const char *kat_vendor_library_name(uint32_t v)
{
    static const char *const names[] = {
        [KAT_LIB_CUBLAS] = "cublas", [KAT_LIB_CUBLASLT] = "cublaslt", [KAT_LIB_CUDNN] = "cudnn" };
    return NAME_OF(names, v);
}

uint32_t kat_vendor_library_of(const char *name)
{
    for (uint32_t v = KAT_LIB_CUBLAS; v <= KAT_LIB_CUDNN; v++)
        if (name && !strcmp(name, kat_vendor_library_name(v)))
            return v;
    return 0;
}

const char *kat_vendor_library_soname(uint32_t v)
{
    static const char *const names[] = {
        [KAT_LIB_CUBLAS] = "libcublas.so", [KAT_LIB_CUBLASLT] = "libcublasLt.so",
        [KAT_LIB_CUDNN] = "libcudnn.so" };
    return v < sizeof(names) / sizeof(names[0]) ? names[v] : NULL;
}

const char *kat_work_class_name(uint32_t v)
{
    static const char *const names[] = {
        [KAT_WORK_UNKNOWN] = "unknown", [KAT_WORK_GEMM] = "gemm", [KAT_WORK_GEMV] = "gemv",
        [KAT_WORK_CONV] = "conv", [KAT_WORK_OTHER] = "other" };
    return NAME_OF(names, v);
}

const char *kat_conv_direction_name(uint32_t v)
{
    static const char *const names[] = {
        [KAT_CONV_FORWARD] = "forward", [KAT_CONV_BACKWARD_DATA] = "backward_data",
        [KAT_CONV_BACKWARD_FILTER] = "backward_filter" };
    return NAME_OF(names, v);
}

const char *kat_image_kind_name(uint32_t v)
{
    static const char *const names[] = {
        [KAT_IMAGE_UNKNOWN] = "unknown", [KAT_IMAGE_CUBIN] = "cubin", [KAT_IMAGE_FATBIN] = "fatbin",
        [KAT_IMAGE_PTX] = "ptx" };
    return NAME_OF(names, v);
}

const char *kat_api_domain_name(uint32_t v)
{
    static const char *const names[] = { [KAT_API_RUNTIME] = "runtime", [KAT_API_DRIVER] = "driver" };
    return NAME_OF(names, v);
}

const char *kat_timing_api_name(uint32_t v)
{
    static const char *const names[] = {
        [KAT_TIMING_EVENT_CREATE] = "event_create", [KAT_TIMING_EVENT_RECORD] = "event_record",
        [KAT_TIMING_EVENT_SYNCHRONIZE] = "event_synchronize",
        [KAT_TIMING_EVENT_ELAPSED] = "event_elapsed", [KAT_TIMING_EVENT_QUERY] = "event_query",
        [KAT_TIMING_EVENT_DESTROY] = "event_destroy", [KAT_TIMING_STREAM_CREATE] = "stream_create",
        [KAT_TIMING_STREAM_WAIT_EVENT] = "stream_wait_event",
        [KAT_TIMING_STREAM_SYNCHRONIZE] = "stream_synchronize",
        [KAT_TIMING_DEVICE_SYNCHRONIZE] = "device_synchronize",
        [KAT_TIMING_STREAM_DESTROY] = "stream_destroy" };
    return NAME_OF(names, v);
}

const char *kat_symbol_phase_name(uint32_t v)
{
    static const char *const names[] = {
        [KAT_SYMBOL_AT_START] = "start", [KAT_SYMBOL_AT_CUDA_INIT] = "cuda_init",
        [KAT_SYMBOL_AT_END] = "end", [KAT_SYMBOL_DEFINED_BY_OBJECT] = "defined_by_object" };
    return NAME_OF(names, v);
}

const char *kat_sync_type_name(uint32_t v)
{
    /* CUpti_ActivitySynchronizationType */
    static const char *const names[] = {
        "unknown", "event_synchronize", "stream_wait_event", "stream_synchronize",
        "context_synchronize" };
    return NAME_OF(names, v);
}

const char *kat_nvtx_kind_name(uint32_t v)
{
    static const char *const names[] = {
        [KAT_NVTX_PUSH] = "push", [KAT_NVTX_POP] = "pop", [KAT_NVTX_START] = "start",
        [KAT_NVTX_END] = "end", [KAT_NVTX_MARK] = "mark" };
    return NAME_OF(names, v);
}

const char *kat_thread_event_name(uint32_t v)
{
    static const char *const names[] = { [KAT_THREAD_CREATE] = "create", [KAT_THREAD_START] = "start" };
    return NAME_OF(names, v);
}

const char *kat_health_code_name(uint32_t code)
{
    static const char *const names[] = {
        [KAT_HEALTH_PRELOAD_LOADED] = "preload_loaded",
        [KAT_HEALTH_INJECTION_CALLED] = "injection_called",
        [KAT_HEALTH_CUPTI_LIBRARY] = "cupti_library",
        [KAT_HEALTH_CUPTI_NOT_FOUND] = "cupti_not_found",
        [KAT_HEALTH_CUPTI_VERSION] = "cupti_version",
        [KAT_HEALTH_CUPTI_SUBSCRIBE] = "cupti_subscribe",
        [KAT_HEALTH_CUPTI_ENABLE_FAILED] = "cupti_enable_failed",
        [KAT_HEALTH_CUPTI_DROPPED] = "cupti_dropped",
        [KAT_HEALTH_BUFFER_LOST] = "buffer_lost",
        [KAT_HEALTH_SYMBOL_UNRESOLVED] = "symbol_unresolved",
        [KAT_HEALTH_FOREIGN_SUBSCRIBER] = "foreign_subscriber",
        [KAT_HEALTH_CUPTI_CLOCK] = "cupti_clock",
        [KAT_HEALTH_DIGEST_UNAVAILABLE] = "digest_unavailable",
        [KAT_HEALTH_DUPLICATE_LIBRARY] = "duplicate_library",
        [KAT_HEALTH_CUPTI_UNSUPPORTED] = "cupti_unsupported",
        [KAT_HEALTH_NVTX_INJECTION] = "nvtx_injection",
        [KAT_HEALTH_WRITER_FULL] = "writer_full",
        [KAT_HEALTH_CUPTI_FLUSHED] = "cupti_flushed",
        [KAT_HEALTH_CALLBACK_OVERRIDDEN] = "callback_overridden",
        [KAT_HEALTH_API_RECORD_POLICY] = "api_record_policy",
        [KAT_HEALTH_AUDIT_MODULE] = "audit_module",
        [KAT_HEALTH_ACTIVITY_KINDS] = "activity_kinds",
        [KAT_HEALTH_BENCH_CONTROL] = "bench_control",
        [KAT_HEALTH_CUPTI_TUNING] = "cupti_tuning",
        [KAT_HEALTH_HOST_CLOCK] = "host_clock",
    };
    if (code < sizeof(names) / sizeof(names[0]))
        return names[code];
    return NULL;
}

