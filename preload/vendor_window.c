/*
 * vendor_window.c - the window of one vendor call.
 *
 * While a cuBLAS/cuBLASLt/cuDNN call runs, we push its call id as a CUPTI
 * external correlation id; CUPTI then ties every runtime/driver API call made
 * inside (and so every kernel those launch, through the correlation id) to
 * that call.  This is how kernels that exist in no file (cuBLASLt's nvjet_*,
 * cuDNN's runtime-compiled engines) are still attributed to the library.
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "preload_internal.h"

#define MAX_NESTING 32

/*
 * Call ids are unique in the process, not dense and not in time order
 * across threads (the analyzer sorts and searches them, nothing more): a
 * thread takes a block of CALL_ID_BLOCK at a time, so that a call takes no
 * locked instruction for its id (in the H200 profile the window's opening
 * got cheaper with it; bench/notes/overhead.md, "Thirteenth session").
 */
#define CALL_ID_BLOCK 256
static atomic_uint_fast64_t next_call_id_block = 1;
static KAT_TLS uint64_t thread_next_call_id, thread_call_id_end;
static KAT_TLS uint32_t depth;
static KAT_TLS uint64_t open_calls[MAX_NESTING];

/*
 * KAUDIT_VENDOR_STAGING=1 (default off): the call's record goes through this
 * thread's stage (trace_stage.c) like the API records made by callback,
 * instead of taking the writer lock on the calling thread; it reaches the
 * trace with the stage's next batch or flush.  The trade: a process killed
 * without a flush (SIGKILL, a crash) loses what was staged, so the trace
 * then lacks calls that did run.  The analyzer already makes such a session
 * INCONCLUSIVE (no end record), but a trace read while the process lives
 * (kaudit run's copier) may miss recent calls.  Off by default: vendor
 * records are evidence on their own.
 */
static int vendor_staging_on(void)
{
    static int on = -1;
    return kat_env_is(&on, "KAUDIT_VENDOR_STAGING", "1");
}

static uint64_t take_call_id(void)
{
    if (thread_next_call_id == thread_call_id_end) {
        thread_next_call_id = atomic_fetch_add(&next_call_id_block, CALL_ID_BLOCK);
        thread_call_id_end = thread_next_call_id + CALL_ID_BLOCK;
    }
    return thread_next_call_id++;
}

void kat_vendor_begin(struct kat_vendor_scope *scope)
{
    scope->call_id = take_call_id();
    scope->depth = ++depth;
    if (scope->depth <= MAX_NESTING)
        open_calls[scope->depth - 1] = scope->call_id;
    scope->pushed = kat_cupti_push_external(scope->call_id) == 0;
#ifndef KAUDIT_SKIP_CLOCK
    scope->enter_ns = kat_now_ns();
#else
    scope->enter_ns = 0;
#endif
}

void kat_vendor_end(struct kat_vendor_scope *scope, struct kat_vendor_call_rec *rec,
                    const void *return_address)
{
    KAT_PROF_START();
#ifndef KAUDIT_SKIP_CLOCK
    uint64_t exit_ns = kat_now_ns();
#else
    uint64_t exit_ns = 0;
#endif
    if (scope->pushed)
        kat_cupti_pop_external();
    if (depth > 0)
        depth--;
    rec->call_id = scope->call_id;
    rec->enter_ns = scope->enter_ns;
    rec->exit_ns = exit_ns;
    rec->depth = scope->depth;
    rec->thread_id = kat_tid();
    KAT_PROF(4);
#ifndef KAUDIT_SKIP_CALLER
    rec->caller_string = kat_object_string(return_address);
#else
    (void)return_address;
#endif
    KAT_PROF(5);
#ifndef KAUDIT_SKIP_EMIT
    if (vendor_staging_on()) {
        kat_emit_staged(KAT_REC_VENDOR_CALL, rec, sizeof(*rec));
    } else {
#ifdef KAUDIT_WRAPPER_PROFILE
        /* the same as kat_emit, in three timed parts */
        unsigned long long split = __rdtsc(), now;
        int writable = kat_emit_lock() == 0;
        now = __rdtsc();
        kat_wrapper_profile[8] += now - split;
        split = now;
        if (writable)
            kat_emit_locked(KAT_REC_VENDOR_CALL, rec, sizeof(*rec));
        now = __rdtsc();
        kat_wrapper_profile[9] += now - split;
        split = now;
        kat_emit_unlock();
        kat_wrapper_profile[10] += __rdtsc() - split;
#else
        kat_emit(KAT_REC_VENDOR_CALL, rec, sizeof(*rec));
#endif
    }
#else
    (void)vendor_staging_on;
#endif
    KAT_PROF(6);
}

uint64_t kat_vendor_current_call(void)
{
    if (depth == 0 || depth > MAX_NESTING)
        return 0;
    return open_calls[depth - 1];
}
