/*
 * standin_internal.h - how the stand-in CUDA libraries talk to each other.
 *
 * The stand-ins replace the CUDA stack in CI, where there is no GPU:
 *   libcuda.so.1       the "driver" and the fake GPU (cuda_driver.c)
 *   libcupti.so.13     CUPTI's callback and activity interfaces (cupti.c)
 *   libcudart.so.13    the runtime (cudart.c, also linked statically and
 *                      hidden into the vendor libraries, like the real one)
 *   libcublas.so.13, libcublasLt.so.13, libcudnn.so.9  (vendor libraries)
 *
 * The real driver hands CUPTI its API enter/exit events, resources and
 * activity through private export tables; ours does the same through the
 * standin_* functions below, exported from libcuda.so.1 and looked up with
 * dlsym by the other stand-ins.  Nothing here is visible to a program that
 * uses only the public CUDA, CUPTI, cuBLAS and cuDNN interfaces.
 *
 * Every time stamp the driver hands over is CLOCK_REALTIME nanoseconds (the
 * clock the real CUPTI uses on Linux by default); the fake GPU's clock runs
 * in the same domain.  CUPTI converts them when a timestamp callback is set.
 *
 * Ground truth: when STANDIN_LAUNCH_LOG names a file, the stand-ins append one
 * line per event with a single write(2) (so it survives any death), fields
 * separated by tabs:
 *   K pid tid host_ns corr stream ctx start end grid block vendor name
 *       a kernel launch; vendor is the vendor API open on the thread or "-"
 *   E pid tid host_ns corr event_id stream ts       an event was recorded
 *   T pid tid host_ns corr result ms(%.9g) bits(hex) an elapsed-time query
 *   M pid tid host_ns corr module_id size vendor     a module was loaded
 *   V pid tid host_ns library api depth              a vendor call began
 *   I pid tid host_ns result path                    injection was attempted
 */
#ifndef STANDIN_INTERNAL_H
#define STANDIN_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include <cuda.h>

#define STANDIN_EXPORT __attribute__((visibility("default")))
#define STANDIN_HIDDEN __attribute__((visibility("hidden")))

#define STANDIN_LOG_ENV "STANDIN_LAUNCH_LOG"

/* The one fake device. */
#define STANDIN_DEVICE_NAME "NVIDIA H200 (KernelAudit stand-in)"
#define STANDIN_DEVICE_CC_MAJOR 9
#define STANDIN_DEVICE_CC_MINOR 0
#define STANDIN_DEVICE_SMS 132
#define STANDIN_DEVICE_MEMORY (141ull << 30)
#define STANDIN_DRIVER_VERSION 13000
#define STANDIN_RUNTIME_VERSION 13000
#define STANDIN_LEGACY_STREAM_ID 7u

/* CUpti_CallbackDomain values, repeated so the driver needs no CUPTI header. */
#define STANDIN_DOMAIN_DRIVER 1u
#define STANDIN_DOMAIN_RUNTIME 2u

/* One runtime or driver API call in progress on this thread. */
struct standin_api_frame {
    uint32_t domain;            /* STANDIN_DOMAIN_* */
    uint32_t cbid;              /* CUPTI callback id in that domain */
    const char *name;           /* function name as CUpti_CallbackData reports it */
    const void *params;         /* the generated <name>_params struct */
    void *retval;               /* CUresult * or cudaError_t * */
    const char *symbol;         /* kernel name for launches */
    uint32_t correlation_id;
    uint32_t observed;          /* the observer saw the enter */
    uint64_t start_ns, end_ns;
    uint64_t correlation_data;  /* CUpti_CallbackData.correlationData points here */
    uint32_t tid;               /* gettid() */
    uint32_t context_id;
    CUcontext context;
    struct standin_api_frame *outer;
};

struct standin_kernel_info {
    const char *name;
    CUcontext context;
    uint32_t context_id, stream_id, correlation_id, device_id;
    int32_t grid[3], block[3];
    int32_t static_shared, dynamic_shared;
    uint16_t registers;
    uint8_t launch_type;
    uint64_t start_ns, end_ns, queued_ns, submitted_ns;
    int64_t grid_id;
};

struct standin_memcpy_info {
    uint64_t bytes, start_ns, end_ns;
    uint32_t context_id, stream_id, correlation_id;
    uint8_t copy_kind, src_kind, dst_kind, async;
};

struct standin_memset_info {
    uint64_t bytes, start_ns, end_ns;
    uint32_t context_id, stream_id, correlation_id, value;
    uint8_t async;
};

struct standin_sync_info {
    uint32_t type;              /* CUpti_ActivitySynchronizationType */
    uint64_t start_ns, end_ns;
    uint32_t correlation_id, context_id, stream_id, event_id;
    uint32_t result;
    CUcontext context;
    CUstream stream;
};

struct standin_event_info {
    uint32_t correlation_id, context_id, stream_id, event_id;
    uint64_t device_ns;
};

struct standin_stream_info {
    CUcontext context;
    CUstream stream;
    uint32_t context_id, stream_id, correlation_id, priority, flags;
};

/*
 * What the driver tells its observer (the stand-in CUPTI).  The driver calls
 * these without holding any of its locks, on the thread that made the call.
 */
struct standin_observer {
    void (*api_enter)(struct standin_api_frame *frame);
    void (*api_exit)(struct standin_api_frame *frame);
    void (*init_finished)(void);
    void (*context_created)(CUcontext context, uint32_t context_id);
    void (*context_destroying)(CUcontext context, uint32_t context_id);
    void (*module_loaded)(CUcontext context, uint32_t module_id, const void *image, size_t size);
    void (*module_unloading)(CUcontext context, uint32_t module_id, const void *image, size_t size);
    void (*stream_created)(const struct standin_stream_info *info);
    void (*stream_destroying)(const struct standin_stream_info *info);
    void (*kernel)(const struct standin_kernel_info *info);
    void (*memcpy)(const struct standin_memcpy_info *info);
    void (*memset)(const struct standin_memset_info *info);
    void (*sync)(const struct standin_sync_info *info);
    void (*cuda_event)(const struct standin_event_info *info);
};

/* ---- exported by libcuda.so.1 (looked up with dlsym) ------------------- */

typedef void (*standin_body_fn)(void **args);

/* Install (or, with NULL, remove) the observer. */
void standin_cuda_observer_set(const struct standin_observer *observer);
/* Open / close an API frame on this thread (the runtime copies use these for
 * the RUNTIME domain; the driver for its own calls). */
void standin_api_enter(struct standin_api_frame *frame, uint32_t domain, uint32_t cbid,
                       const char *name, const void *params, void *retval, const char *symbol);
void standin_api_exit(struct standin_api_frame *frame);
/* Give a function a host body, run at launch on the "device" memory. */
CUresult standin_function_set_body(CUfunction function, standin_body_fn body,
                                   uint16_t registers, int32_t static_shared);
uint32_t standin_context_id(CUcontext context);
uint32_t standin_stream_id(CUstream stream);
CUcontext standin_current_context(void);
int standin_driver_initialized(void);
/* Vendor call bookkeeping for the ground-truth log (cuBLAS/cuDNN stand-ins). */
void standin_vendor_enter(const char *library, const char *api);
void standin_vendor_exit(void);
/* Append a ground-truth line (already formatted, without pid/tid/time). */
void standin_log_line(char tag, const char *fields);
uint64_t standin_realtime_ns(void);

/* The same functions as pointer types, for dlsym. */
typedef void (*standin_api_enter_fn)(struct standin_api_frame *, uint32_t, uint32_t, const char *,
                                     const void *, void *, const char *);
typedef void (*standin_api_exit_fn)(struct standin_api_frame *);

#endif /* STANDIN_INTERNAL_H */
