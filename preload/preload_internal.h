/*
 * preload_internal.h - what the parts of the preload library share.
 *
 * The preload library records evidence and nothing else: it knows no
 * contracts and no verdicts.  It must never crash, hang, print into, or change
 * the results of the program it is loaded into, so every function here fails
 * quietly (recording a KAT_REC_HEALTH record where it can) instead of
 * aborting.
 *
 * Only symbols marked KAT_EXPORT leave the library; everything else is hidden
 * (-fvisibility=hidden), so the program can never bind to our internals.
 */
#ifndef KAUDIT_PRELOAD_INTERNAL_H
#define KAUDIT_PRELOAD_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "kaudit_env.h"
#include "trace_format.h"

#define KAT_EXPORT __attribute__((visibility("default")))

/* A bench build (cmake -DKAUDIT_WRAPPER_PROFILE=ON, never shipped) counts TSC
 * cycles per stage of the cublasLtMatmul wrapper (bench/wrapper_profile.py);
 * otherwise these compile to nothing. */
#ifdef KAUDIT_WRAPPER_PROFILE
#include <x86intrin.h>
/* 0-6 the stages, 7 the calls, 8-10 stage 6 (the record's store) split
 * into taking the writer lock, storing, giving it back (when not staged) */
#define KAT_PROF_COUNTERS 11
extern __thread unsigned long long kat_wrapper_profile[KAT_PROF_COUNTERS];   /* the calling thread's */
#define KAT_PROF_START() unsigned long long kat_prof_t_ = __rdtsc()
#define KAT_PROF(stage)                                                            \
    do {                                                                           \
        unsigned long long kat_prof_now_ = __rdtsc();                              \
        kat_wrapper_profile[(stage)] += kat_prof_now_ - kat_prof_t_;               \
        kat_prof_t_ = kat_prof_now_;                                               \
    } while (0)
#else
#define KAT_PROF_START() do { } while (0)
#define KAT_PROF(stage) do { } while (0)
#endif
#define KAT_TLS __thread __attribute__((tls_model("initial-exec")))

/* ---- trace_writer.c: the per-process trace file ------------------------ */

/* Append one record; the writer opens this process's trace on first use.
 * Silently does nothing when tracing is off or the trace cannot be written. */
void kat_emit(uint16_t type, const void *body, uint32_t body_size);
/* Same, with variable-length bytes after the fixed body. */
void kat_emit_tail(uint16_t type, const void *body, uint32_t body_size,
                   const void *tail, uint32_t tail_size);
/* Id of a string in this trace, defining it on first use; 0 for NULL. */
uint32_t kat_intern(const char *s);
uint32_t kat_intern_n(const char *s, size_t n);
/* Tracing is on for this process (a session directory was given). */
int kat_tracing_enabled(void);
/* Records of the launch path, staged per thread (trace_stage.c). */
void kat_emit_staged(uint16_t type, const void *body, uint32_t size);
void kat_stage_flush_all(void);
void kat_stage_after_fork_child(void);
/* Many records under one writer lock: store only while kat_emit_lock() gave 0. */
int kat_emit_lock(void);
void kat_emit_locked(uint16_t type, const void *body, uint32_t size);
void kat_emit_unlock(void);
/* Whole records built outside the writer lock by one thread (CUPTI's, as it
 * converts a buffer) and appended with one lock: the trace gets the bytes
 * kat_emit would have written for them, in the same order.  BYTES is the
 * caller's, 8-aligned, CAPACITY long. */
struct kat_chunk {
    uint8_t *bytes;
    uint32_t capacity;
    uint32_t used;
    uint32_t records;
};
/* Add one record; -1 when it does not fit (append the chunk, then add it). */
int kat_chunk_add(struct kat_chunk *chunk, uint16_t type, const void *body, uint32_t body_size);
/* Append the chunk's records under one writer lock and empty it. */
void kat_emit_chunk(struct kat_chunk *chunk);
/* Benchmark control only (bench/bench_control.c): pause or resume all recording. */
void kat_tracing_pause(int paused);
/* Write the end record and close the file (exit paths); idempotent. */
void kat_writer_close(uint32_t end_kind, int32_t status, uint32_t flags);
/* Called in a fork child: forget the parent's file, open our own lazily. */
void kat_writer_after_fork_child(void);

/* ---- host_clock.c -------------------------------------------------------- */

/* CLOCK_REALTIME ns, every host timestamp kaudit records: from the TSC where
 * the kernel keeps time with it (within 0.5 us of clock_gettime, usually a
 * few ns; host_clock.c says how), else clock_gettime. */
uint64_t kat_now_ns(void);
uint64_t kat_realtime_ns(void);       /* clock_gettime(CLOCK_REALTIME) itself */
uint64_t kat_monotonic_ns(void);
const char *kat_host_clock_name(void); /* "tsc" or "realtime": what kat_now_ns reads */

/* ---- util.c -------------------------------------------------------------- */

uint32_t kat_tid(void);               /* gettid(), cached per thread */
pid_t kat_pid(void);                  /* getpid(), cached; not for vfork children */
void kat_note_fork_child(void);       /* invalidate the caches after fork */
void kat_health(uint32_t code, const char *detail, int64_t value);
/* The object holding `address`: its mapping start and path ("" for the main
 * program).  Fast (no symbol search); 0 on success. */
int kat_find_object(const void *address, uintptr_t *start, const char **path);
/* Interned path of the object that contains `address` ("?" if none). */
uint32_t kat_object_string(const void *address);
/* Whether the variable `name` is set to exactly `value`, read now: the knobs
 * read once, at setup. */
int kat_env_equals(const char *name, const char *value);
/* The same, read once and kept in *cache (initialized to -1): the knobs read
 * on hot paths. */
int kat_env_is(int *cache, const char *name, const char *value);
/* Copy at most n-1 bytes into dst; always terminates. */
void kat_strlcpy(char *dst, const char *src, size_t n);
/* XXH3-128 over bytes, through libxxhash loaded at run time; 0 if unavailable. */
int kat_digest(const void *data, size_t size, uint64_t *lo, uint64_t *hi);

/* ---- threads.c ------------------------------------------------------------ */

/* Start a detached thread of ours (not recorded as the program's), every
 * signal blocked.  0, or -1 when it could not be started. */
int kat_start_helper_thread(void *(*routine)(void *), void *arg);

/* ---- vendor_resolve.c: real entry points of RTLD_LOCAL libraries -------- */

/*
 * Address of `name` inside the loaded vendor library `library`
 * (enum kat_vendor_library), found through that library's own handle
 * (dlopen RTLD_NOLOAD by soname, then dlvsym/dlsym), never RTLD_NEXT and
 * never RTLD_GLOBAL.  NULL (and one health record per symbol) when the
 * library is not loaded or lacks the symbol.
 */
void *kat_resolve_vendor(uint32_t library, const char *name);

/* ---- vendor_window.c: tying kernels to the vendor call that launched them */

struct kat_vendor_scope {
    uint64_t call_id;
    uint64_t enter_ns;
    uint32_t depth;
    uint32_t pushed;            /* an external correlation id was pushed */
};

/* Open a vendor window around one intercepted call on this thread. */
void kat_vendor_begin(struct kat_vendor_scope *scope);
/* Close it: fills call_id, times, thread, depth, caller into rec and emits it. */
void kat_vendor_end(struct kat_vendor_scope *scope, struct kat_vendor_call_rec *rec,
                    const void *return_address);
/* Innermost open vendor call on this thread, 0 if none. */
uint64_t kat_vendor_current_call(void);

/* ---- cupti_backend.c and its parts (cupti_internal.h) --------------------- */

/* CUPTI is subscribed and recording in this process. */
int kat_cupti_active(void);
/* Push / pop our external correlation id (no-ops when CUPTI is inactive). */
int kat_cupti_push_external(uint64_t id);
void kat_cupti_pop_external(void);
/* Deliver every buffered activity record to the trace now (exit paths). */
void kat_cupti_flush(const char *where);
/* The real libcupti function `name`, NULL if CUPTI is not loaded. */
void *kat_cupti_symbol(const char *name);
/* Benchmark control only: enable exactly the activity kinds named in the
 * comma-separated ONLY (NULL: every kind we normally enable), and switch our
 * API callbacks (timing calls, and the API records made by callback) on or off.  Return 0 when CUPTI accepted all. */
int kat_cupti_select_kinds(const char *only);
/* Maps the trace's next segment ahead of time, outside the writer lock
 * (trace_writer.c); called by CUPTI's thread while it converts records,
 * and by the spare thread. */
void kat_writer_prepare_spare(void);
/* Starts the thread that prepares the next segment as soon as a writer
 * crosses into the spare (once; KAUDIT_SPARE_THREAD=0: never).  Call from
 * an ordinary thread context (not a signal handler). */
void kat_writer_start_spare_thread(void);
/* Segment ends this process's writers crossed without a spare ready, so
 * that the crossing thread mapped the next segment itself (tests, bench). */
uint64_t kat_writer_segments_mapped_inline(void);
int kat_cupti_set_callbacks(int on);
/* The benchmark's floor (bench_control.c): count-only callbacks on the launch
 * APIs and kernel records counted, not kept. */
int kat_cupti_bench_floor(int on);
/* The benchmark's "noop": our API and timing callbacks enabled, returning at once. */
void kat_cupti_bench_noop(int on);

/* ---- process.c: lifetime, children, exits ------------------------------ */

void kat_process_init(void);          /* constructor */

/* ---- nvtx_inject.c ---------------------------------------------------------- */

/* NVTX injection entry point, exported; see nvtx_inject.c. */

/* ---- libraries.c ------------------------------------------------------------ */

/* Record libraries loaded since the last call (cheap when nothing changed). */
void kat_libraries_poll(void);
/* Record which objects define the timing entry points right now. */
void kat_timing_symbols_snapshot(uint32_t phase);

/* The session's token as the process had it when the library was loaded
 * (process.c), or NULL: written into the trace's header. */
const char *kat_injected_token(void);
const char *kat_injected_supervisor(void); /* kaudit run's socket, or NULL: traces are files */
/* trace_handover.c: 0 when kaudit run has the trace's descriptor */
int kat_handover_register(const char *socket_path, int fd, const char *name);
/* the registered trace's descriptor again (close-on-exec), or -1 */
int kat_handover_again(const char *socket_path, const char *name);

#endif /* KAUDIT_PRELOAD_INTERNAL_H */
