/*
 * trace_format.h - the on-disk format of one process trace.
 *
 * This header is the contract between the preload library (the only writer)
 * and every reader (kaudit dump, the analyzer).  It depends on nothing but
 * <stdint.h> so that both sides build on the GPU machine too.  docs/trace-format.md
 * describes the same layout in prose; change both together and bump
 * KAT_FORMAT_VERSION whenever a record's layout changes.
 *
 * A trace file is a fixed header followed by records.  Every record starts
 * with an 8-byte kat_record_header whose size covers the whole record, is a
 * multiple of 8, and is written last (one aligned 64-bit store): a reader that
 * meets a zero header word has reached the end of what was ever committed.  A
 * trace without a KAT_REC_PROCESS_END record was cut short (killed, crashed,
 * or still running).
 *
 * Records refer to strings by id; a KAT_REC_STRING record defines an id before
 * its first use.  Id 0 means "no string".
 *
 * Host timestamps are CLOCK_REALTIME nanoseconds.  CUPTI timestamps are
 * converted to the same clock when the timestamp callback could be registered
 * (KAT_HEALTH_CUPTI_CLOCK says whether it was); KAT_REC_CLOCK_SYNC records
 * pair the two clocks so a reader can correct them when it was not.
 */
#ifndef KAUDIT_TRACE_FORMAT_H
#define KAUDIT_TRACE_FORMAT_H

#include <stdint.h>

#define KAT_TRACE_MAGIC "KATRACE\0"
/* 2: an API record made inside a vendor call carries that call's id in a
 * tail (struct kat_api_vendor_tail) instead of a separate
 * EXTERNAL_CORRELATION record; a version-1 reader would find no window. */
#define KAT_FORMAT_VERSION 2u
/* Oldest format this reader build can read. */
#define KAT_FORMAT_MIN_READABLE 1u

/* File names inside a session directory. */
#define KAT_SESSION_INFO_FILE "info"
#define KAT_TRACE_SUFFIX ".kat"

struct kat_file_header {
    char magic[8];              /* KAT_TRACE_MAGIC */
    uint32_t format_version;    /* KAT_FORMAT_VERSION of the writer */
    uint32_t header_size;       /* sizeof(struct kat_file_header) */
    uint32_t pid;
    uint32_t ppid;
    uint64_t start_realtime_ns;
    uint64_t start_monotonic_ns;
    uint32_t origin;            /* enum kat_process_origin */
    uint32_t reserved0;
    uint8_t session_token[16];  /* KAUDIT_SESSION_TOKEN of the run (zeros: none, or an older writer) */
};                              /* 64 bytes */

enum kat_process_origin {
    KAT_ORIGIN_EXEC = 1,        /* a new program image (the first, or after exec) */
    KAT_ORIGIN_FORK = 2,        /* a fork child that kept running the parent's image */
};

struct kat_record_header {
    uint32_t size;              /* whole record including this header; multiple of 8 */
    uint16_t type;              /* enum kat_record_type */
    uint16_t flags;             /* per type; 0 unless stated */
};

enum kat_record_type {
    KAT_REC_PAD = 1,            /* filler up to a segment boundary; skip it */
    KAT_REC_STRING = 2,
    KAT_REC_PROCESS_START = 3,
    KAT_REC_PROCESS_END = 4,
    KAT_REC_EXEC = 5,
    KAT_REC_FORK = 6,
    KAT_REC_CHILD_EXIT = 7,
    KAT_REC_HEALTH = 8,
    KAT_REC_LIBRARY = 9,
    KAT_REC_MODULE = 10,
    KAT_REC_KERNEL = 11,
    KAT_REC_API = 12,
    KAT_REC_MEMCPY = 13,
    KAT_REC_MEMSET = 14,
    KAT_REC_SYNC = 15,
    KAT_REC_CUDA_EVENT = 16,
    KAT_REC_EXTERNAL_CORRELATION = 17,
    KAT_REC_NVTX = 18,
    KAT_REC_VENDOR_CALL = 19,
    KAT_REC_TIMING_CALL = 20,
    KAT_REC_TIMING_SYMBOL = 21,
    KAT_REC_DEVICE = 22,
    KAT_REC_VERSIONS = 23,
    KAT_REC_THREAD = 24,
    KAT_REC_FOREIGN_CUPTI = 25,
    KAT_REC_CLOCK_SYNC = 26,
    KAT_REC_TYPE_COUNT
};

/* KAT_REC_STRING: header, this struct, then `length` bytes, zero padded to 8. */
struct kat_string_rec {
    uint32_t id;
    uint32_t length;            /* bytes that follow, without padding or NUL */
};

/* KAT_REC_PROCESS_START: written once, right after the file header. */
struct kat_process_start_rec {
    uint32_t pid;
    uint32_t ppid;
    uint32_t origin;            /* enum kat_process_origin */
    uint32_t argv_string;       /* argv joined with NUL bytes */
    uint32_t exe_string;        /* readlink(/proc/self/exe) */
    uint32_t cwd_string;
    uint32_t reinjected;        /* 1: the environment had lost the preload and was restored */
    uint32_t fork_parent_trace; /* string: file name of the parent's trace (fork origin) */
    uint64_t time_ns;
};

enum kat_end_kind {
    KAT_END_EXIT = 1,           /* exit() or return from main; status known only with flag */
    KAT_END__EXIT = 2,          /* _exit()/_Exit() (os._exit in Python) */
    KAT_END_EXEC = 3,           /* the image was replaced; the next trace of this pid goes on */
};
#define KAT_END_FLAG_STATUS_KNOWN 1u
/* The program had closed the trace's descriptor or put its own file at its
 * number; the writer forgot the number and reopened the trace (fd_taken
 * says how often).  Old sessions: flag clear, fd_taken 0. */
#define KAT_END_FLAG_TRACE_FD_TAKEN 2u

/* KAT_REC_PROCESS_END: the last record of a trace that was closed properly. */
struct kat_process_end_rec {
    uint32_t kind;              /* enum kat_end_kind */
    int32_t status;             /* exit status when flags has KAT_END_FLAG_STATUS_KNOWN */
    uint32_t flags;
    uint32_t fd_taken;          /* was reserved (0): times the trace's descriptor was found taken */
    uint64_t time_ns;
    uint64_t records_written;   /* records in this file before this one */
    uint64_t records_lost;      /* records the writer could not store (no space) */
};

/* KAT_REC_EXEC: an exec attempt; `result` is 0 only if never returned (not stored). */
struct kat_exec_rec {
    uint32_t path_string;
    uint32_t argv_string;       /* NUL joined */
    uint32_t reinjected;        /* the preload variables had to be put back */
    int32_t error;              /* errno of a failed exec, 0 before the attempt */
    uint64_t time_ns;
};

enum kat_fork_kind { KAT_FORK_FORK = 1, KAT_FORK_POSIX_SPAWN = 2 };

/* KAT_REC_FORK: a child process started by this process. */
struct kat_fork_rec {
    uint32_t child_pid;
    uint32_t kind;              /* enum kat_fork_kind */
    uint32_t path_string;       /* posix_spawn: the program */
    uint32_t argv_string;       /* posix_spawn: its argv */
    uint64_t time_ns;
};

/* KAT_REC_CHILD_EXIT: a wait*() in this process reaped a child. */
struct kat_child_exit_rec {
    uint32_t child_pid;
    int32_t wait_status;        /* raw status as from waitpid(): WIFEXITED etc. apply */
    uint64_t time_ns;
};

enum kat_health_code {
    KAT_HEALTH_PRELOAD_LOADED = 1,        /* value: 1 */
    KAT_HEALTH_INJECTION_CALLED = 2,      /* CUDA driver called InitializeInjection */
    KAT_HEALTH_CUPTI_LIBRARY = 3,         /* detail: path of the libcupti used */
    KAT_HEALTH_CUPTI_NOT_FOUND = 4,       /* detail: what was tried */
    KAT_HEALTH_CUPTI_VERSION = 5,         /* value: cuptiGetVersion() */
    KAT_HEALTH_CUPTI_SUBSCRIBE = 6,       /* value: CUptiResult of cuptiSubscribe */
    KAT_HEALTH_CUPTI_ENABLE_FAILED = 7,   /* value: activity kind; detail: CUPTI error */
    KAT_HEALTH_CUPTI_DROPPED = 8,         /* value: records CUPTI dropped */
    KAT_HEALTH_BUFFER_LOST = 9,           /* value: buffers we could not allocate */
    KAT_HEALTH_SYMBOL_UNRESOLVED = 10,    /* detail: symbol@library */
    KAT_HEALTH_FOREIGN_SUBSCRIBER = 11,   /* detail: the CUPTI call the workload made */
    KAT_HEALTH_CUPTI_CLOCK = 12,          /* value: 1 timestamps converted to CLOCK_REALTIME */
    KAT_HEALTH_DIGEST_UNAVAILABLE = 13,   /* detail: why XXH3 could not be loaded */
    KAT_HEALTH_DUPLICATE_LIBRARY = 14,    /* detail: soname loaded from two paths */
    KAT_HEALTH_CUPTI_UNSUPPORTED = 15,    /* value: version; activity not collected */
    KAT_HEALTH_NVTX_INJECTION = 16,       /* value: NVTX init result */
    KAT_HEALTH_WRITER_FULL = 17,          /* value: records dropped by the writer */
    KAT_HEALTH_CUPTI_FLUSHED = 18,        /* value: 1 at exit flush, detail: where */
    KAT_HEALTH_CALLBACK_OVERRIDDEN = 19,  /* the workload replaced our activity callbacks */
    KAT_HEALTH_API_RECORD_POLICY = 20,    /* detail: policy; value: API kinds not recorded */
    KAT_HEALTH_AUDIT_MODULE = 21,         /* value 1: the rtld-audit module is loaded (detail: path) */
    KAT_HEALTH_ACTIVITY_KINDS = 22,       /* value: activity kinds left out (KAUDIT_CUPTI_KINDS); detail: which */
    KAT_HEALTH_BENCH_CONTROL = 23,        /* value 1: benchmark control on (detail: setting applied) */
    KAT_HEALTH_CUPTI_TUNING = 24,         /* detail: CUPTI settings from KAUDIT_CUPTI_* (overhead study) */
    KAT_HEALTH_HOST_CLOCK = 25,           /* value 1: host times from the TSC, 0: clock_gettime; detail: which */
};

/* KAT_REC_HEALTH: tool health, never evidence about the candidate. */
struct kat_health_rec {
    uint32_t code;              /* enum kat_health_code */
    uint32_t detail_string;
    int64_t value;
    uint64_t time_ns;
};

/* KAT_REC_LIBRARY: a shared object mapped in this process (dl_iterate_phdr). */
struct kat_library_rec {
    uint32_t path_string;
    uint32_t soname_string;
    uint64_t base_address;
    uint64_t file_size;
    uint64_t digest_lo;         /* XXH3-128 of the file; 0/0 when unavailable */
    uint64_t digest_hi;
    uint32_t duplicate;         /* 1: another path with the same soname is loaded */
    uint32_t reserved;
    uint64_t time_ns;           /* when it was first seen */
};

/* KAT_REC_MODULE: a CUDA module (cubin, PTX or fatbin image) loaded by the driver. */
struct kat_module_rec {
    uint32_t module_id;         /* CUPTI's module id */
    uint32_t context_id;
    uint64_t size;
    uint64_t digest_lo;         /* XXH3-128 of the image bytes */
    uint64_t digest_hi;
    uint32_t loader_string;     /* first object on the stack outside CUDA and kaudit */
    uint32_t thread_id;
    uint64_t vendor_call_id;    /* innermost vendor call open on that thread, 0 if none */
    uint64_t time_ns;
    uint32_t image_kind;        /* enum kat_image_kind */
    uint32_t reserved;
};

enum kat_image_kind { KAT_IMAGE_UNKNOWN = 0, KAT_IMAGE_CUBIN = 1, KAT_IMAGE_FATBIN = 2, KAT_IMAGE_PTX = 3 };

/* KAT_REC_KERNEL: one kernel execution (CUPTI CONCURRENT_KERNEL). */
struct kat_kernel_rec {
    uint64_t start_ns;
    uint64_t end_ns;
    uint32_t device_id;
    uint32_t context_id;
    uint32_t stream_id;
    uint32_t correlation_id;
    int32_t grid[3];
    int32_t block[3];
    int32_t static_shared;
    int32_t dynamic_shared;
    uint32_t registers;
    uint32_t name_string;
    uint32_t graph_id;
    uint32_t launch_type;
    uint64_t graph_node_id;
    uint32_t device_launched;
    uint32_t reserved;
};

enum kat_api_domain { KAT_API_RUNTIME = 1, KAT_API_DRIVER = 2 };

/* KAT_REC_API: one CUDA runtime or driver API call (CUPTI RUNTIME/DRIVER). */
struct kat_api_rec {
    uint64_t start_ns;
    uint64_t end_ns;
    uint32_t domain;            /* enum kat_api_domain */
    uint32_t cbid;              /* CUPTI callback id of that domain */
    uint32_t thread_id;         /* system thread id (gettid) */
    uint32_t correlation_id;
    uint32_t return_value;
    uint32_t name_string;       /* cuptiGetCallbackName, interned */
};

/*
 * From format 2, an API record made by callback while a vendor call is open
 * on its thread is followed, right after the fixed struct, by this tail: the
 * innermost open call's id (call_id of its VENDOR_CALL record).  It stands
 * for the EXTERNAL_CORRELATION record of KAT_VENDOR_CORRELATION_KIND that
 * format 1 wrote beside the API record (one record less per launch on the
 * launch path).  Records outside a vendor call have no tail.  Read it with
 * kat_api_vendor_call() (trace_index.h).
 */
struct kat_api_vendor_tail {
    uint64_t vendor_call_id;
};

/* KAT_REC_MEMCPY */
struct kat_memcpy_rec {
    uint64_t start_ns;
    uint64_t end_ns;
    uint64_t bytes;
    uint32_t device_id;
    uint32_t context_id;
    uint32_t stream_id;
    uint32_t correlation_id;
    uint8_t copy_kind;          /* CUpti_ActivityMemcpyKind */
    uint8_t src_kind;
    uint8_t dst_kind;
    uint8_t flags;
    uint32_t graph_id;
};

/* KAT_REC_MEMSET */
struct kat_memset_rec {
    uint64_t start_ns;
    uint64_t end_ns;
    uint64_t bytes;
    uint32_t device_id;
    uint32_t context_id;
    uint32_t stream_id;
    uint32_t correlation_id;
    uint32_t value;
    uint32_t graph_id;
};

/* KAT_REC_SYNC: host waited for the device (CUPTI SYNCHRONIZATION). */
struct kat_sync_rec {
    uint64_t start_ns;
    uint64_t end_ns;
    uint32_t type;              /* CUpti_ActivitySynchronizationType */
    uint32_t correlation_id;
    uint32_t context_id;
    uint32_t stream_id;
    uint32_t cuda_event_id;
    uint32_t reserved;
};

/* KAT_REC_CUDA_EVENT: an event was recorded on a stream (CUPTI CUDA_EVENT). */
struct kat_cuda_event_rec {
    uint32_t correlation_id;
    uint32_t context_id;
    uint32_t stream_id;
    uint32_t event_id;
    uint32_t device_id;
    uint32_t reserved;
    uint64_t device_timestamp_ns; /* 0 when CUPTI did not provide it */
};

/* KAT_REC_EXTERNAL_CORRELATION: CUPTI joined an API call to an external id. */
struct kat_external_correlation_rec {
    uint32_t external_kind;     /* CUpti_ExternalCorrelationKind; ours is CUSTOM2 */
    uint32_t correlation_id;
    uint64_t external_id;       /* for ours: the vendor call id */
};

#define KAT_VENDOR_CORRELATION_KIND 5u /* CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM2 */

enum kat_nvtx_kind {
    KAT_NVTX_PUSH = 1, KAT_NVTX_POP = 2, KAT_NVTX_START = 3, KAT_NVTX_END = 4, KAT_NVTX_MARK = 5,
};

/* KAT_REC_NVTX: one NVTX call (our own NVTX injection, not CUPTI markers). */
struct kat_nvtx_rec {
    uint32_t kind;              /* enum kat_nvtx_kind */
    uint32_t thread_id;
    uint64_t range_id;          /* start/end: NVTX range id; push/pop: nesting level */
    uint32_t message_string;
    uint32_t domain_string;     /* 0: the default domain */
    uint64_t time_ns;
};

enum kat_vendor_library {
    KAT_LIB_CUBLAS = 1, KAT_LIB_CUBLASLT = 2, KAT_LIB_CUDNN = 3,
};

enum kat_work_class {
    KAT_WORK_UNKNOWN = 0, KAT_WORK_GEMM = 1, KAT_WORK_GEMV = 2, KAT_WORK_CONV = 3, KAT_WORK_OTHER = 4,
};

enum kat_conv_direction { KAT_CONV_FORWARD = 1, KAT_CONV_BACKWARD_DATA = 2, KAT_CONV_BACKWARD_FILTER = 3 };

/*
 * The operation summary of a vendor call: enough to estimate its work.
 * Unknown fields are 0; dtypes use the library's own enum values
 * (cudaDataType_t for cuBLAS/cuBLASLt, cudnnDataType_t for cuDNN) and
 * dtype_space says which.
 */
struct kat_gemm_summary {
    int64_t m, n, k;
    int64_t batch;              /* 1 for a single GEMM */
    int64_t lda, ldb, ldc;
    int64_t stride_a, stride_b, stride_c;
    int32_t trans_a, trans_b;   /* cublasOperation_t */
    int32_t type_a, type_b, type_c;
    int32_t compute_type;       /* cublasComputeType_t, or the legacy cudaDataType_t */
    int32_t epilogue;           /* cublasLtEpilogue_t (cuBLASLt only) */
    int32_t reserved;
};

struct kat_conv_summary {
    int32_t direction;          /* enum kat_conv_direction */
    int32_t spatial_dims;       /* 2 for conv2d */
    int64_t n, c, k;            /* batch, input channels, output channels */
    int64_t in_spatial[3];      /* H, W, D as the library lists them */
    int64_t filter_spatial[3];
    int64_t out_spatial[3];
    int32_t pad[3], stride[3], dilation[3];
    int32_t groups;
    int32_t data_type;          /* cudnnDataType_t */
    int32_t compute_type;
    int32_t reserved;
};

#define KAT_DTYPE_SPACE_CUDA 1u   /* cudaDataType_t */
#define KAT_DTYPE_SPACE_CUDNN 2u  /* cudnnDataType_t */

/* KAT_REC_VENDOR_CALL: one intercepted cuBLAS / cuBLASLt / cuDNN call. */
struct kat_vendor_call_rec {
    uint64_t call_id;           /* pushed as the CUPTI external correlation id */
    uint64_t enter_ns;
    uint64_t exit_ns;
    uint32_t api_string;        /* e.g. "cublasSgemm_v2" */
    uint32_t library;           /* enum kat_vendor_library */
    uint32_t caller_string;     /* path of the object that called the entry point */
    uint32_t thread_id;
    uint32_t depth;             /* 1 outermost; >1 nested inside another vendor call */
    int32_t status;             /* the call's return value */
    uint32_t work_class;        /* enum kat_work_class */
    uint32_t dtype_space;
    uint64_t output_address;    /* device pointer of the main output, 0 if unknown */
    uint64_t output_bytes;      /* its extent as the arguments describe it */
    uint64_t handle;            /* cublasHandle_t / cudnnHandle_t / plan, as an address */
    uint32_t summary_known;     /* 1 when the union below is filled */
    uint32_t reserved;
    union {
        struct kat_gemm_summary gemm;
        struct kat_conv_summary conv;
        uint8_t raw[176];
    } op;
};

enum kat_timing_api {
    KAT_TIMING_EVENT_CREATE = 1, KAT_TIMING_EVENT_RECORD = 2, KAT_TIMING_EVENT_SYNCHRONIZE = 3,
    KAT_TIMING_EVENT_ELAPSED = 4, KAT_TIMING_EVENT_QUERY = 5, KAT_TIMING_EVENT_DESTROY = 6,
    KAT_TIMING_STREAM_CREATE = 7, KAT_TIMING_STREAM_WAIT_EVENT = 8,
    KAT_TIMING_STREAM_SYNCHRONIZE = 9, KAT_TIMING_DEVICE_SYNCHRONIZE = 10,
    KAT_TIMING_STREAM_DESTROY = 11,
};

/*
 * KAT_REC_TIMING_CALL: a timing-relevant runtime or driver call, seen
 * through the CUPTI callback API (so static cudart is covered too).
 */
struct kat_timing_call_rec {
    uint64_t enter_ns;
    uint64_t exit_ns;
    uint32_t api;               /* enum kat_timing_api */
    uint32_t domain;            /* enum kat_api_domain */
    uint32_t cbid;
    uint32_t thread_id;
    uint32_t correlation_id;
    int32_t status;
    uint64_t event;             /* cudaEvent_t (the start event for elapsed time) */
    uint64_t event2;            /* elapsed time: the end event */
    uint64_t stream;            /* cudaStream_t (0: legacy default stream) */
    uint32_t flags;             /* creation or record flags */
    float elapsed_ms;           /* elapsed time: the value returned to the caller */
    uint32_t name_string;
    /* CUPTI's id of `stream` plus one (the ids kernel records carry), for
     * event records, stream waits and stream synchronizations; 0 when
     * unknown (traces from before it was recorded, or CUPTI could not say). */
    uint32_t stream_id_plus_one;
};

enum kat_timing_symbol_phase {
    KAT_SYMBOL_AT_START = 1, KAT_SYMBOL_AT_CUDA_INIT = 2, KAT_SYMBOL_AT_END = 3,
    KAT_SYMBOL_DEFINED_BY_OBJECT = 4, /* the object exports this name itself */
};

/* KAT_REC_TIMING_SYMBOL: which object a timing entry point resolves to
 * (phases 1-3, global scope), or which object defines one (phase 4). */
struct kat_timing_symbol_rec {
    uint32_t symbol_string;     /* e.g. "cudaEventElapsedTime" */
    uint32_t object_string;     /* path of the defining object, 0 if unresolved */
    uint64_t address;
    uint32_t phase;             /* enum kat_timing_symbol_phase */
    uint32_t reserved;
    uint64_t time_ns;
};

/* KAT_REC_DEVICE: a GPU as CUPTI describes it. */
struct kat_device_rec {
    uint32_t device_id;
    uint32_t name_string;
    uint32_t cc_major, cc_minor;
    uint32_t multiprocessors;
    uint32_t reserved;
    uint64_t global_memory_bytes;
    uint8_t uuid[16];
};

/* KAT_REC_VERSIONS */
struct kat_versions_rec {
    int32_t driver_version;     /* cuDriverGetVersion, 0 if unknown */
    int32_t runtime_version;    /* cudaRuntimeGetVersion of the loaded libcudart, 0 if none */
    uint32_t cupti_version;     /* cuptiGetVersion */
    uint32_t cupti_header_version; /* CUPTI_API_VERSION we were built with */
    uint32_t tool_version_string;
    uint32_t reserved;
};

enum kat_thread_event { KAT_THREAD_CREATE = 1, KAT_THREAD_START = 2 };

/* KAT_REC_THREAD: pthread_create in this process, and the new thread's first moment. */
struct kat_thread_rec {
    uint32_t event;             /* enum kat_thread_event */
    uint32_t thread_id;         /* create: the creator; start: the new thread */
    uint64_t token;             /* pairs a create with its start */
    uint64_t start_routine;     /* address */
    uint32_t routine_object_string; /* object defining start_routine */
    uint32_t reserved;
    uint64_t time_ns;
};

/* KAT_REC_FOREIGN_CUPTI: the workload itself called CUPTI (e.g. torch.profiler). */
struct kat_foreign_cupti_rec {
    uint32_t function_string;
    uint32_t caller_string;
    int32_t result;
    uint32_t thread_id;
    int64_t argument;           /* activity kind, or 0 */
    uint64_t time_ns;
};

/* KAT_REC_CLOCK_SYNC: one reading of each clock at (nearly) the same moment. */
struct kat_clock_sync_rec {
    uint64_t realtime_ns;
    uint64_t monotonic_ns;
    uint64_t cupti_ns;          /* cuptiGetTimestamp(), 0 if CUPTI is not loaded */
};

#endif /* KAUDIT_TRACE_FORMAT_H */
