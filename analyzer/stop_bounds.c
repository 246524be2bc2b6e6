/*
 * stop_bounds.c - when did a stop event complete on the GPU, when the trace
 * has no timestamp for it (struct ka_window end_lo_ns / end_hi_ns).
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "analysis_internal.h"

/*
 * Stop events without a GPU timestamp.  The default recording has no
 * CUDA_EVENT activity (it slowed every launch, preload/cupti_kinds.c), so
 * the GPU time at which a stop event completed is bounded from stream order
 * instead, with the stream ids the record calls carry:
 *   at least  the GPU end of the last operation launched on the stop
 *             event's stream before the record call (streams run in order),
 *             of the last one on a stream it was made to wait on inside the
 *             window, the record call itself (host clock, less a margin), and
 *             the start event's lower bound plus the elapsed time;
 *   at most   the GPU start of the next operation launched on that stream
 *             after the record returned, the start event's upper bound (the
 *             first operation after it) plus the elapsed time, and the
 *             return of a synchronization that waited for it (host clock,
 *             which CUPTI's timestamps share).
 * The measurement rule then convicts only past the upper bound and calls the
 * stretch between the bounds unresolved.
 */
/*
 * The bounds need, per window, a few facts of the form "the last operation
 * on stream S whose launch call returned by T" and "the first operation on
 * S launched at or after T".  They are asked as queries and answered in one
 * pass over the kernel, copy and memset records, in memory proportional to
 * the queries, not to the kernels: an operation is offered to the one query
 * nearest to it in time, and a sweep over each stream's queries then hands
 * the best answer on to the later (or earlier) ones.
 */
enum bound_kind { LAST_ENDED_BY, FIRST_LAUNCHED_FROM };

struct bound_query {
    uint32_t stream;
    enum bound_kind kind;
    uint64_t t;
    int found;
    uint64_t key;       /* the chosen operation's launch time */
    uint64_t value;     /* its GPU end (LAST_ENDED_BY) or start (FIRST_LAUNCHED_FROM) */
};

struct bound_queries {
    struct bound_query *q;
    size_t n, cap;
    size_t *sorted;     /* indices into q by (kind, stream, t) */
};

static size_t ask(struct bound_queries *b, enum bound_kind kind, uint32_t stream, uint64_t t)
{
    if (GROW(b->q, b->n, b->cap))
        return SIZE_MAX;
    b->q[b->n] = (struct bound_query){ .stream = stream, .kind = kind, .t = t };
    return b->n++;
}

static int query_cmp(const void *x, const void *y, void *arg)
{
    const struct bound_query *q = arg, *a = &q[*(const size_t *)x], *b = &q[*(const size_t *)y];
    if (a->kind != b->kind)
        return a->kind < b->kind ? -1 : 1;
    if (a->stream != b->stream)
        return a->stream < b->stream ? -1 : 1;
    return a->t < b->t ? -1 : a->t > b->t;
}

/* Position in sorted of the first query (kind, stream) with t >= time (or > time when strict). */
static size_t query_lower(const struct bound_queries *b, enum bound_kind kind, uint32_t stream, uint64_t time,
                          int strict)
{
    size_t lo = 0, hi = b->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const struct bound_query *m = &b->q[b->sorted[mid]];
        int before = m->kind != kind ? m->kind < kind
                   : m->stream != stream ? m->stream < stream
                   : strict ? m->t <= time : m->t < time;
        if (before)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static int query_at(const struct bound_queries *b, size_t pos, enum bound_kind kind, uint32_t stream)
{
    return pos < b->n && b->q[b->sorted[pos]].kind == kind && b->q[b->sorted[pos]].stream == stream;
}

static void offer(struct bound_queries *b, uint32_t stream, uint64_t api_start, uint64_t api_end, uint64_t gpu_start,
                  uint64_t gpu_end)
{
    /* The first LAST_ENDED_BY query its launch call returned by: the latest launch wins. */
    size_t pos = query_lower(b, LAST_ENDED_BY, stream, api_end, 0);
    if (query_at(b, pos, LAST_ENDED_BY, stream)) {
        struct bound_query *q = &b->q[b->sorted[pos]];
        if (!q->found || api_start > q->key)
            *q = (struct bound_query){ q->stream, q->kind, q->t, 1, api_start, gpu_end };
    }
    /* The last FIRST_LAUNCHED_FROM query at or before its launch: the earliest launch wins. */
    pos = query_lower(b, FIRST_LAUNCHED_FROM, stream, api_start, 1);
    if (pos > 0 && query_at(b, pos - 1, FIRST_LAUNCHED_FROM, stream)) {
        struct bound_query *q = &b->q[b->sorted[pos - 1]];
        if (!q->found || api_start < q->key)
            *q = (struct bound_query){ q->stream, q->kind, q->t, 1, api_start, gpu_start };
    }
}

/* Hand each answer on: a later LAST_ENDED_BY query may take an earlier one's, an
 * earlier FIRST_LAUNCHED_FROM query a later one's. */
static void sweep(struct bound_queries *b)
{
    for (size_t i = 1; i < b->n; i++) {
        struct bound_query *prev = &b->q[b->sorted[i - 1]], *q = &b->q[b->sorted[i]];
        if (q->kind == LAST_ENDED_BY && prev->kind == LAST_ENDED_BY && prev->stream == q->stream && prev->found &&
            (!q->found || prev->key > q->key))
            q->found = 1, q->key = prev->key, q->value = prev->value;
    }
    for (size_t i = b->n; i-- > 1;) {
        struct bound_query *q = &b->q[b->sorted[i - 1]], *next = &b->q[b->sorted[i]];
        if (q->kind == FIRST_LAUNCHED_FROM && next->kind == FIRST_LAUNCHED_FROM && next->stream == q->stream &&
            next->found && (!q->found || next->key < q->key))
            q->found = 1, q->key = next->key, q->value = next->value;
    }
}

/* How many timing calls after a stop record are searched for a synchronization,
 * and inside a window for joins: bounded, so that no trace makes this quadratic. */
#define SYNC_LOOKAHEAD 64
#define JOIN_LOOKAHEAD 4096
/* A synchronization's return is a host-clock time, kernel times are CUPTI's GPU
 * timestamps converted to that clock: the bound it gives is widened by
 * KA_HOST_CLOCK_MARGIN_NS (analysis_internal.h), so a conversion error never
 * turns into a conviction. */
#define HOST_CLOCK_MARGIN_NS KA_HOST_CLOCK_MARGIN_NS

static int timing_order_cmp(const void *x, const void *y, void *arg)
{
    const struct ka_timing_rec *timing = arg;
    uint64_t a = timing[*(const size_t *)x].r.enter_ns, b = timing[*(const size_t *)y].r.enter_ns;
    return a < b ? -1 : a > b;
}

/* First position in order (timing calls by enter time) at or after t. */
static size_t first_timing_from(const struct ka_timing_rec *timing, const size_t *order, size_t n, uint64_t t)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (timing[order[mid]].r.enter_ns < t)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* The queries of one window (SIZE_MAX: not asked). */
struct window_queries {
    size_t end_last, end_first, start_last, start_first;
    size_t joins_from, joins_to;        /* a range of join_queries */
};

static uint64_t answer(const struct bound_queries *b, size_t i, uint64_t none)
{
    return i != SIZE_MAX && b->q[i].found ? b->q[i].value : none;
}

void ka_bound_stop_events(struct kat_trace *t, struct ka_proc *p, const struct ka_timing_rec *timing,
                          size_t n_timing)
{
    size_t n_bounded = 0;
    for (size_t w = 0; w < p->n_windows; w++)
        n_bounded += !p->windows[w].gpu_end_ns && p->windows[w].end_stream != UINT32_MAX;
    if (!n_bounded)
        return;
    /* Timing calls by host time, and event records by (event, time). */
    size_t *order = malloc((n_timing ? n_timing : 1) * sizeof *order);
    struct ka_event_record *recs = malloc((n_timing ? n_timing : 1) * sizeof *recs);
    struct window_queries *wq = calloc(p->n_windows, sizeof *wq);
    size_t *joins = NULL, n_joins = 0, cap_joins = 0;
    struct bound_queries b = { 0 };
    size_t n_recs = 0;
    if (!order || !recs || !wq)
        goto out;
    for (size_t i = 0; i < n_timing; i++) {
        order[i] = i;
        if (timing[i].r.api == KAT_TIMING_EVENT_RECORD && timing[i].r.status == 0)
            recs[n_recs++] = (struct ka_event_record){ timing[i].r.event, timing[i].r.enter_ns, &timing[i].r };
    }
    qsort_r(order, n_timing, sizeof *order, timing_order_cmp, (void *)timing);
    if (n_recs)
        qsort(recs, n_recs, sizeof *recs, ka_event_record_cmp);

    for (size_t w = 0; w < p->n_windows; w++) {
        const struct ka_window *win = &p->windows[w];
        struct window_queries *q = &wq[w];
        *q = (struct window_queries){ SIZE_MAX, SIZE_MAX, SIZE_MAX, SIZE_MAX, n_joins, n_joins };
        if (win->gpu_end_ns || win->end_stream == UINT32_MAX)
            continue;
        q->end_last = ask(&b, LAST_ENDED_BY, win->end_stream, win->host_end_ns);
        q->end_first = ask(&b, FIRST_LAUNCHED_FROM, win->end_stream, win->end_exit_ns);
        if (win->start_stream != UINT32_MAX) {
            q->start_last = ask(&b, LAST_ENDED_BY, win->start_stream, win->host_start_ns);
            q->start_first = ask(&b, FIRST_LAUNCHED_FROM, win->start_stream, win->start_exit_ns);
        }
        /* Joins inside the window: what the waited event followed ends before the stop event.
         * (At most JOIN_LOOKAHEAD calls: a join left unseen only lowers the lower bound.) */
        size_t scanned = 0;
        for (size_t o = first_timing_from(timing, order, n_timing, win->host_start_ns);
             o < n_timing && scanned < JOIN_LOOKAHEAD && timing[order[o]].r.enter_ns < win->host_end_ns;
             o++, scanned++) {
            const struct kat_timing_call_rec *c = &timing[order[o]].r;
            if (c->status != 0 || c->api != KAT_TIMING_STREAM_WAIT_EVENT ||
                c->stream_id_plus_one != win->end_stream + 1)
                continue;
            const struct kat_timing_call_rec *rec = ka_last_record_before(recs, n_recs, c->event, c->enter_ns);
            if (rec && rec->stream_id_plus_one && !GROW(joins, n_joins, cap_joins))
                joins[n_joins++] = ask(&b, LAST_ENDED_BY, rec->stream_id_plus_one - 1, rec->enter_ns);
        }
        q->joins_to = n_joins;
    }
    b.sorted = malloc((b.n ? b.n : 1) * sizeof *b.sorted);
    if (!b.sorted)
        goto out;
    for (size_t i = 0; i < b.n; i++)
        b.sorted[i] = i;
    qsort_r(b.sorted, b.n, sizeof *b.sorted, query_cmp, b.q);

    struct kat_record r;
    kat_trace_rewind(t);
    while (kat_trace_next(t, &r, NULL, 0) == 1) {
        uint32_t stream, corr;
        uint64_t start, end;
        if (r.type == KAT_REC_KERNEL) {
            const struct kat_kernel_rec *k = r.body;
            stream = k->stream_id, corr = k->correlation_id, start = k->start_ns, end = k->end_ns;
        } else if (r.type == KAT_REC_MEMCPY) {
            const struct kat_memcpy_rec *m = r.body;
            stream = m->stream_id, corr = m->correlation_id, start = m->start_ns, end = m->end_ns;
        } else if (r.type == KAT_REC_MEMSET) {
            const struct kat_memset_rec *m = r.body;
            stream = m->stream_id, corr = m->correlation_id, start = m->start_ns, end = m->end_ns;
        } else {
            continue;
        }
        const struct ka_api *api = ka_api_of(p, corr);
        if (api)
            offer(&b, stream, api->start_ns, api->end_ns, start, end);
    }
    sweep(&b);

    for (size_t w = 0; w < p->n_windows; w++) {
        struct ka_window *win = &p->windows[w];
        const struct window_queries *q = &wq[w];
        if (win->gpu_end_ns || win->end_stream == UINT32_MAX)
            continue;
        /* A hostile trace may carry any float: beyond a day (or NaN) the elapsed time bounds nothing. */
        double elapsed_ns = (double)win->elapsed_ms * 1e6;
        int elapsed_ok = elapsed_ns >= 0 && elapsed_ns < 8.64e13;
        uint64_t elapsed = elapsed_ok ? (uint64_t)elapsed_ns : 0;
        uint64_t lo = answer(&b, q->end_last, 0);
        uint64_t hi = answer(&b, q->end_first, UINT64_MAX);
        uint64_t start_lo = answer(&b, q->start_last, 0), start_hi = answer(&b, q->start_first, UINT64_MAX);
        if (elapsed_ok && start_lo && start_lo <= UINT64_MAX - elapsed && start_lo + elapsed > lo)
            lo = start_lo + elapsed;
        if (elapsed_ok && start_hi <= UINT64_MAX - elapsed && start_hi + elapsed < hi)
            hi = start_hi + elapsed;
        /* No event completes before its record call was made (host clock, so with the margin). */
        uint64_t end_called = win->host_end_ns > HOST_CLOCK_MARGIN_NS ? win->host_end_ns - HOST_CLOCK_MARGIN_NS : 0;
        uint64_t start_called = win->host_start_ns > HOST_CLOCK_MARGIN_NS ? win->host_start_ns - HOST_CLOCK_MARGIN_NS : 0;
        if (end_called > lo)
            lo = end_called;
        if (elapsed_ok && start_called <= UINT64_MAX - elapsed && start_called + elapsed > lo)
            lo = start_called + elapsed;
        for (size_t j = q->joins_from; j < q->joins_to; j++) {
            uint64_t joined = answer(&b, joins[j], 0);
            if (joined > lo)
                lo = joined;
        }
        /* A synchronization that returned after waiting for the stop event.  Harnesses
         * synchronize right after recording it; the first few calls after it are looked at. */
        size_t looked = 0;
        for (size_t o = first_timing_from(timing, order, n_timing, win->end_exit_ns);
             o < n_timing && looked < SYNC_LOOKAHEAD && timing[order[o]].r.enter_ns < hi; o++, looked++) {
            const struct kat_timing_call_rec *c = &timing[order[o]].r;
            if (c->status == 0 && c->exit_ns <= UINT64_MAX - HOST_CLOCK_MARGIN_NS &&
                c->exit_ns + HOST_CLOCK_MARGIN_NS < hi &&
                (c->api == KAT_TIMING_DEVICE_SYNCHRONIZE ||
                 (c->api == KAT_TIMING_EVENT_SYNCHRONIZE && c->event == win->end_event) ||
                 (c->api == KAT_TIMING_STREAM_SYNCHRONIZE && c->stream_id_plus_one == win->end_stream + 1)))
                hi = c->exit_ns + HOST_CLOCK_MARGIN_NS;
        }
        /* Facts that contradict each other (clocks far apart, or a forged trace) bound nothing. */
        win->end_contradictory = hi != UINT64_MAX && lo > hi;
        win->end_bounded = !win->end_contradictory;
        win->end_lo_ns = lo;
        win->end_hi_ns = hi;
    }
out:
    free(b.q);
    free(b.sorted);
    free(joins);
    free(wq);
    free(recs);
    free(order);
}
