/* trace_index.c - see trace_index.h. */
#include "trace_index.h"
#include "toolbox.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void kat_trace_index_init(struct kat_trace_index *ix)
{
    memset(ix, 0, sizeof(*ix));
}

void kat_trace_index_free(struct kat_trace_index *ix)
{
    kat_u64map_free(&ix->vendor_of);
    free(ix->calls);
    free(ix->window);
    memset(ix, 0, sizeof(*ix));
}

uint64_t kat_api_vendor_call(const struct kat_record *r)
{
    struct kat_api_vendor_tail tail;
    if (r->type != KAT_REC_API || r->tail_size < sizeof tail)
        return 0;
    memcpy(&tail, r->tail, sizeof tail);
    return tail.vendor_call_id;
}

int kat_record_vendor_tie(const struct kat_record *r, uint32_t *correlation_id, uint64_t *call_id)
{
    if (r->type == KAT_REC_EXTERNAL_CORRELATION) {
        const struct kat_external_correlation_rec *x = r->body;
        if (x->external_kind != KAT_VENDOR_CORRELATION_KIND)
            return 0;
        *correlation_id = x->correlation_id;
        *call_id = x->external_id;
        return 1;
    }
    uint64_t call = kat_api_vendor_call(r);
    if (call == 0)
        return 0;
    *correlation_id = ((const struct kat_api_rec *)r->body)->correlation_id;
    *call_id = call;
    return 1;
}

int kat_trace_index_add(struct kat_trace_index *ix, const struct kat_record *r)
{
    uint32_t correlation_id;
    uint64_t call_id;
    if (kat_record_vendor_tie(r, &correlation_id, &call_id)) {
        /* The first tie of a correlation id wins.  Correlation id 0 is
         * CUPTI's "none": it joins nothing. */
        if (correlation_id == 0 || call_id == 0)
            return 0;
        int fresh;
        uint64_t *v = kat_u64map_get(&ix->vendor_of, correlation_id, &fresh);
        if (!v)
            return -1;
        if (fresh)
            *v = call_id;
    } else if (r->type == KAT_REC_VENDOR_CALL) {
        const struct kat_vendor_call_rec *v = r->body;
        if (kat_grow((void **)&ix->calls, &ix->cap_calls, ix->n_calls + 1, sizeof(*ix->calls)))
            return -1;
        ix->calls[ix->n_calls++] = (struct kat_index_call){ v->call_id, v->enter_ns, v->exit_ns,
                                                            v->library, v->thread_id, v->depth };
    }
    return 0;
}

uint64_t kat_trace_index_vendor_call_of(const struct kat_trace_index *ix, uint32_t correlation_id)
{
    const uint64_t *v = correlation_id ? kat_u64map_find(&ix->vendor_of, correlation_id) : NULL;
    return v ? *v : 0;
}

int kat_trace_index_add_kernel(struct kat_trace_index *ix, const struct kat_kernel_rec *k,
                               uint64_t *call_id)
{
    uint64_t call = kat_trace_index_vendor_call_of(ix, k->correlation_id);
    if (call_id)
        *call_id = call;
    if (!call)
        return 0;
    if (kat_grow((void **)&ix->window, &ix->cap_window, ix->n_window + 1, sizeof(*ix->window)))
        return -1;
    ix->window[ix->n_window] = (struct kat_index_kernel){ call, k->correlation_id, k->name_string,
                                                          ix->n_window };
    ix->n_window++;
    return 0;
}

static int compare_call(const void *a, const void *b)
{
    const struct kat_index_call *x = a, *y = b;
    return x->call_id < y->call_id ? -1 : x->call_id > y->call_id;
}

static int compare_window(const void *a, const void *b)
{
    const struct kat_index_kernel *x = a, *y = b;
    if (x->call_id != y->call_id)
        return x->call_id < y->call_id ? -1 : 1;
    return x->order < y->order ? -1 : x->order > y->order;
}

void kat_trace_index_finish(struct kat_trace_index *ix)
{
    if (ix->n_calls > 1)
        qsort(ix->calls, ix->n_calls, sizeof(*ix->calls), compare_call);
    if (ix->n_window > 1)
        qsort(ix->window, ix->n_window, sizeof(*ix->window), compare_window);
}

static int fail(char *err, size_t n, const char *msg)
{
    if (err && n && msg != err)
        snprintf(err, n, "%s", msg);
    return -1;
}

int kat_trace_index_build(struct kat_trace_index *ix, struct kat_trace *t, int with_kernels,
                          char *err, size_t errlen)
{
    struct kat_record r;
    int rc;
    kat_trace_rewind(t);
    while ((rc = kat_trace_next(t, &r, err, errlen)) == 1)
        if (kat_trace_index_add(ix, &r) != 0)
            return fail(err, errlen, "out of memory");
    if (rc < 0) {
        kat_trace_index_finish(ix);
        kat_trace_rewind(t);
        return -1;
    }
    if (with_kernels) {
        kat_trace_rewind(t);
        while (kat_trace_next(t, &r, NULL, 0) == 1)
            if (r.type == KAT_REC_KERNEL && kat_trace_index_add_kernel(ix, r.body, NULL) != 0)
                return fail(err, errlen, "out of memory");
    }
    kat_trace_index_finish(ix);
    kat_trace_rewind(t);
    return 0;
}

/* The first element of arr[0 .. n) whose call_id is not below call_id (both arrays are sorted by it). */
#define FIRST_NOT_BELOW(arr, n, call_id, out)                  \
    do {                                                       \
        size_t lo_ = 0, hi_ = (n);                             \
        while (lo_ < hi_) {                                    \
            size_t mid_ = lo_ + (hi_ - lo_) / 2;               \
            if ((arr)[mid_].call_id < (call_id))               \
                lo_ = mid_ + 1;                                \
            else                                               \
                hi_ = mid_;                                    \
        }                                                      \
        (out) = lo_;                                           \
    } while (0)

const struct kat_index_call *kat_trace_index_call(const struct kat_trace_index *ix, uint64_t call_id)
{
    size_t lo;
    FIRST_NOT_BELOW(ix->calls, ix->n_calls, call_id, lo);
    return lo < ix->n_calls && ix->calls[lo].call_id == call_id ? &ix->calls[lo] : NULL;
}

const struct kat_index_call *kat_trace_index_outermost(const struct kat_trace_index *ix,
                                                       const struct kat_index_call *c)
{
    if (c->depth <= 1 || c < ix->calls || c >= ix->calls + ix->n_calls)
        return c;
    /* Call ids grow with entry, so the call open around c was entered before
     * it: the nearest earlier depth-1 call on c's thread whose span holds
     * c's entry.  Nested calls sit right after their outer one, so the scan
     * is short (a cuBLAS call's cuBLASLt calls). */
    for (const struct kat_index_call *o = c; o-- > ix->calls;)
        if (o->thread_id == c->thread_id && o->depth == 1 && o->enter_ns <= c->enter_ns && c->enter_ns <= o->exit_ns)
            return o;
    return c;
}

size_t kat_trace_index_window(const struct kat_trace_index *ix, uint64_t call_id,
                              const struct kat_index_kernel **first)
{
    size_t lo;
    FIRST_NOT_BELOW(ix->window, ix->n_window, call_id, lo);
    size_t end = lo;
    while (end < ix->n_window && ix->window[end].call_id == call_id)
        end++;
    *first = ix->window + lo;
    return end - lo;
}
