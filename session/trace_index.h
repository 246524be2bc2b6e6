/*
 * trace_index.h - which vendor call launched which kernel, for one trace.
 *
 * Every API call made inside a vendor call (cuBLAS, cuBLASLt, cuDNN; a
 * VENDOR_CALL record) is tied to that call's id: since format 2 by the API
 * record's tail (struct kat_api_vendor_tail), in format 1 and under CUPTI's
 * API activity by an EXTERNAL_CORRELATION record of kind
 * KAT_VENDOR_CORRELATION_KIND.  A kernel whose correlation id is so tied
 * was launched inside that call's window.  Nothing else (timing, names,
 * threads) puts a kernel in a window.  This index is that join, the one that `kaudit dump`, the
 * inventory's calibration and the analyzer (analyzer/index.c) all use.
 *
 * What it indexes:
 *   - correlation id -> vendor call id: the first tie (an API record's
 *     tail or an EXTERNAL_CORRELATION of our kind) for a correlation id
 *     wins (one API call carries one id of our kind: the innermost open
 *     window); id 0 (CUPTI's "none") joins nothing;
 *   - the vendor calls, sorted by call id (id, enter/exit, library, thread,
 *     depth), and for a nested call the outermost call open around it;
 *   - optionally the in-window kernels, grouped by call id and in trace
 *     order within a call.
 *
 * Two phases, because CUPTI may deliver the EXTERNAL_CORRELATION records
 * after the kernels they label:
 *   1. kat_trace_index_add() for every record of the trace (it keeps only
 *      VENDOR_CALL, EXTERNAL_CORRELATION and tailed API records, ignores
 *      the others);
 *   2. kat_trace_index_add_kernel() for every KERNEL record (a second pass),
 *      when the per-call kernel lists are wanted;
 *   then kat_trace_index_finish().  kat_trace_index_build() does all three
 *   over a trace.  A caller that already reads every record (dump) feeds its
 *   own loop, so the index costs no extra pass.
 *
 * Memory: about 70 bytes per external correlation of our kind (hash map),
 * 40 bytes per vendor call, 24 bytes per in-window kernel; nothing per
 * kernel outside a window, nothing per other record.  Strings stay in the
 * trace (name_string ids).
 *
 * Complexity: add O(1) amortized; finish O(c log c + w log w) for c calls
 * and w in-window kernels; vendor_call_of O(1) expected; call and window
 * O(log); outermost O(1) at depth 1, else the calls between it and its
 * outer call (a backward scan).
 *
 * libc only.  Not thread-safe; one index per trace.
 */
#ifndef KAT_TRACE_INDEX_H
#define KAT_TRACE_INDEX_H

#include <stddef.h>
#include <stdint.h>

#include "trace_reader.h"
#include "u64map.h"

struct kat_index_call {
    uint64_t call_id;
    uint64_t enter_ns, exit_ns;
    uint32_t library;           /* enum kat_vendor_library */
    uint32_t thread_id;
    uint32_t depth;             /* 1: outermost on its thread */
};

struct kat_index_kernel {
    uint64_t call_id;
    uint32_t correlation_id;
    uint32_t name_string;
    uint64_t order;             /* trace order among the in-window kernels */
};

struct kat_trace_index {
    struct kat_u64map vendor_of;        /* correlation id -> vendor call id */
    struct kat_index_call *calls;       /* sorted by call_id after finish */
    size_t n_calls, cap_calls;
    struct kat_index_kernel *window;    /* sorted by (call_id, order) after finish */
    size_t n_window, cap_window;
};

void kat_trace_index_init(struct kat_trace_index *ix);
void kat_trace_index_free(struct kat_trace_index *ix);

/* Phase 1: one record of the trace.  0, or -1 when out of memory. */
int kat_trace_index_add(struct kat_trace_index *ix, const struct kat_record *r);
/* Phase 2: one kernel, after every phase-1 record.  *call_id (when given) is
 * its vendor call id or 0.  0, or -1 when out of memory. */
int kat_trace_index_add_kernel(struct kat_trace_index *ix, const struct kat_kernel_rec *k,
                               uint64_t *call_id);
/* Sorts; call once, after the last add. */
void kat_trace_index_finish(struct kat_trace_index *ix);

/* Both phases over t (rewound before each), kernels included when
 * with_kernels; leaves t rewound.  0, or -1 with a message in err (a
 * malformed trace: the index then holds what was read before the error). */
int kat_trace_index_build(struct kat_trace_index *ix, struct kat_trace *t, int with_kernels,
                          char *err, size_t errlen);

/* The vendor call id an API record's tail carries (format 2), 0 when it has
 * none or r is not an API record. */
uint64_t kat_api_vendor_call(const struct kat_record *r);
/* 1 when r ties a correlation id to a vendor call (an EXTERNAL_CORRELATION
 * record of KAT_VENDOR_CORRELATION_KIND, or an API record with a tail), with
 * both ids in *correlation_id and *call_id (as recorded, zeros included);
 * 0 for any other record. */
int kat_record_vendor_tie(const struct kat_record *r, uint32_t *correlation_id, uint64_t *call_id);

/* The vendor call whose window launched correlation_id, 0 if none. */
uint64_t kat_trace_index_vendor_call_of(const struct kat_trace_index *ix, uint32_t correlation_id);
/* The VENDOR_CALL record of call_id, NULL if the trace has none (after finish). */
const struct kat_index_call *kat_trace_index_call(const struct kat_trace_index *ix, uint64_t call_id);
/* The outermost call open around c on its thread: the nearest earlier
 * depth-1 call of that thread whose span holds c's entry; c itself at depth
 * <= 1 or when there is none.  c must point into ix->calls. */
const struct kat_index_call *kat_trace_index_outermost(const struct kat_trace_index *ix,
                                                       const struct kat_index_call *c);
/* The in-window kernels of call_id: *first[0 .. return value), in trace order. */
size_t kat_trace_index_window(const struct kat_trace_index *ix, uint64_t call_id,
                              const struct kat_index_kernel **first);

#endif
