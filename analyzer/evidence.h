/*
 * evidence.h - what the analysis indexes from one process trace before it
 * streams the kernels (private to analyzer/: analysis.c and its tests).
 *
 * One struct ka_proc per trace file.  Everything here is small compared with
 * the kernels: API records (16 bytes each in a hash map), vendor calls,
 * phases, events, modules.  Strings are copied, so a ka_proc outlives its
 * trace.
 */
#ifndef KAUDIT_EVIDENCE_H
#define KAUDIT_EVIDENCE_H

#include <stddef.h>
#include <stdint.h>

#include "analysis.h"
#include "trace_format.h"
#include "trace_index.h"
#include "u64map.h"

struct ka_api {                 /* one recorded API call (the records kernels join) */
    uint32_t tid;
    uint32_t correlation_id;
    uint64_t start_ns, end_ns;
    /* a kernel or graph launch (its name has "Launch"), not a module load,
     * an allocation or a copy: origin.c asks which module a launch used */
    int launch;
};

struct ka_vcall {
    struct kat_vendor_call_rec rec;
    char *api;
    char *caller;
    enum ka_party party;
    int cls;                    /* enum ka_class */
    double work;                /* FLOPs (0: not estimable) */
    size_t outer;               /* index of the outermost call around it (itself at depth 1) */
    int caller_is_candidate, caller_is_framework;
    uint64_t kernels;           /* kernels in its window */
};

struct ka_phase {
    uint32_t tid;               /* 0: a process-wide range (NVTX start/end) */
    uint8_t party;              /* enum ka_party */
    uint8_t python;             /* from the Python side (domain kaudit.python) */
    int32_t parent;             /* the enclosing phase of the same thread, -1 if none */
    uint64_t start_ns, end_ns;  /* end UINT64_MAX: still open at the end of the trace */
};

/* An ATen operator's NVTX range (operators.c). */
struct ka_operator {
    uint32_t tid;
    int32_t parent;             /* the enclosing operator of the same thread, -1 if none */
    uint32_t message;           /* trace string id: "aten::NAME, ..., sizes = [...]" */
    int8_t cls;                 /* ka_class_of_operator, -1 for none */
    uint8_t party;              /* enum ka_party of the phase open on its thread when it opened */
    uint64_t start_ns, end_ns;  /* end UINT64_MAX: still open at the end of the trace */
};

struct ka_module {
    uint64_t time_ns;
    uint32_t tid;
    char *loader;
    uint64_t digest_lo, digest_hi;
    uint64_t size;
    int loader_kind;            /* enum ka_loader_kind */
};

/* KA_LOADER_PYTHON: the interpreter or ctypes/libffi, i.e. the Python code on the stack loaded it */
enum ka_loader_kind { KA_LOADER_UNKNOWN = 0, KA_LOADER_CANDIDATE, KA_LOADER_VENDOR, KA_LOADER_FRAMEWORK, KA_LOADER_OTHER,
                      KA_LOADER_PYTHON };

/* The candidate kernels launched inside one timed window, for
 * reported-time-shorter-than-work (verdict_measurement.c): the union of their
 * GPU intervals, kept merged and sorted, and the longest of them. */
struct ka_window_work {
    struct { uint64_t start, end; } *busy;
    size_t n_busy, cap_busy;
    uint64_t kernels;
    uint32_t first_stream;
    int several_streams;
    char *longest_name;
    uint32_t longest_stream, longest_correlation;
    uint64_t longest_start_ns, longest_end_ns, longest_launch_ns;
};

struct ka_window {
    unsigned index;             /* 1-based, in host order over the process */
    uint64_t host_start_ns, host_end_ns;    /* the two record calls (entry) */
    uint64_t start_exit_ns, end_exit_ns;    /* ... and their returns */
    uint64_t end_event;                     /* the stop event's handle */
    uint64_t gpu_start_ns, gpu_end_ns;      /* 0 when CUPTI gave no event timestamp */
    uint32_t start_stream, end_stream;      /* CUPTI stream ids, UINT32_MAX if unknown */
    /*
     * Without a timestamp (no CUDA_EVENT records: the default recording),
     * the stop event's GPU time is bounded from stream order
     * (bound_stop_events): end_lo_ns <= it <= end_hi_ns; 0 and UINT64_MAX
     * where nothing bounds it.  end_bounded says the bounds were computed.
     */
    int end_bounded;
    int end_contradictory;                  /* bounds computed, but lower above upper */
    uint64_t end_lo_ns, end_hi_ns;
    unsigned ambiguous_reported;            /* kernels found between the bounds */
    float elapsed_ms;
    struct ka_window_work *work;            /* NULL until a candidate kernel is launched inside it */
    uint64_t query_ns;                      /* the elapsed-time query (after the stop event completed) */
    unsigned reference_launches;            /* kernels launched inside it in the reference's phase */
    unsigned candidate_launches;            /* ... in the candidate's own phase (not from a thread) */
};

struct ka_thread_origin {       /* a thread and who created it */
    uint32_t tid, creator_tid;
    uint64_t create_ns;
    uint64_t token;
};

struct ka_symbol {
    char *symbol, *object;
    uint64_t address;
    uint32_t phase;
    uint64_t time_ns;
};

struct ka_proc {
    char *file;                 /* trace file name */
    uint32_t pid, ppid;
    char *exe, *argv0, *argv;   /* argv: space-joined, for messages */
    uint64_t start_ns;
    int complete;               /* a PROCESS_END was the last record */
    int read_error;             /* the trace stopped at a malformed record */
    int end_known;
    uint32_t end_kind;
    int32_t status;
    int status_known;
    int candidate_process;      /* the contract names this process as the candidate's */
    int build_tool;             /* nvcc, ninja, a compiler, a linker... */

    /*
     * correlation id -> index into apis + 1 (0: none).  CUPTI's ids are dense
     * small integers, so a direct table (4 bytes an id) is used when the
     * largest id is within a few times the number of records; a hostile or
     * odd trace falls back to the hash map.
     */
    uint32_t *api_direct;
    uint32_t api_direct_size;
    struct kat_u64map api_index;
    uint32_t max_ext_correlation;       /* no external correlation above this id */
    struct ka_api *apis;
    size_t n_apis, cap_apis;
    /* The kernel -> vendor call join that dump and calibration use too
     * (session/trace_index.h); vcalls below keeps what the analysis adds. */
    struct kat_trace_index calls_index;
    struct ka_vcall *vcalls;
    size_t n_vcalls, cap_vcalls;
    struct ka_phase *phases;            /* in push order; parents point into it */
    size_t n_phases, cap_phases;
    uint32_t *phase_order;              /* indices into phases, sorted by (tid, start) */
    struct ka_operator *operators;      /* in push order; parents point into it */
    size_t n_operators, cap_operators;
    uint32_t *operator_order;           /* indices into operators, sorted by (tid, start) */
    int phase_marks;                    /* phase ranges seen */
    /* not the reference's own process (ka_options.reference_process): its
       reference phases before the weak surfaces' range are the candidate's */
    int reference_untrusted;
    unsigned untrusted_reference_phases; /* reference phases opened there */
    uint64_t unphased_compute;          /* launches made the candidate's by ka_unphased_compute */
    char *python_status;                /* the Python side's last status mark, NULL if it never spoke */
    char *python_operators;             /* its operator sampler's last word ("on: ...", "off: ..."), or NULL */
    /* the runner's "kaudit:probe baseline" ranges: how many, and the first one's span */
    unsigned probe_windows;
    uint64_t probe_start_ns, probe_end_ns;
    /* the runner's "kaudit:weak" range: the weak surfaces, after the audit's work
       (runner/kaudit_weak.py); work launched from then on is no evidence.  Only a
       push outside every phase, on the thread that opened phases, counts (index.c) */
    uint64_t weak_start_ns;
    uint64_t weak_kernels, weak_vcalls;   /* left out for that */
    struct ka_module *modules;          /* sorted by time */
    size_t n_modules, cap_modules;
    struct ka_window *windows;          /* sorted by host_start */
    size_t n_windows, cap_windows;
    struct ka_thread_origin *threads;
    size_t n_threads, cap_threads;
    struct ka_symbol *symbols;
    size_t n_symbols, cap_symbols;
    double *reported_ms;
    size_t n_reported, cap_reported;
    float *elapsed_ms;                  /* every value cudaEventElapsedTime returned */
    size_t n_elapsed, cap_elapsed;
    char **guard_changed;
    size_t n_guard, cap_guard;
    /* The Python side's timing-primitive snapshot (docs/python-provenance.md,
     * "Timing primitives"): each "timing-replaced" status mark, after the
     * prefix, and whether a candidate phase was open on its thread then. */
    struct ka_py_timing {
        char *text;
        uint64_t time_ns;
        int candidate;              /* a candidate frame was open on the reporting thread */
        int beside_candidate;       /* the new object was defined beside the candidate's classes */
    } *py_timing;
    size_t n_py_timing, cap_py_timing;
    struct { char *soname; uint64_t lo, hi; } *libs;
    size_t n_libs, cap_libs;
    uint64_t kernels;
    uint64_t graph_kernels, low_precision_kernels;
    char *low_precision_example;
};

#endif
