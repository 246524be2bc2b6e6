/*
 * windows.c - the timed windows of one process (struct ka_window,
 * evidence.h): what the harness timed, from its event records and
 * elapsed-time queries.
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "analysis_internal.h"

static int window_cmp(const void *x, const void *y)
{
    const struct ka_window *a = x, *b = y;
    return a->host_start_ns < b->host_start_ns ? -1 : a->host_start_ns > b->host_start_ns;
}

/* Event records by (event, time). */
int ka_event_record_cmp(const void *x, const void *y)
{
    const struct ka_event_record *a = x, *b = y;
    if (a->event != b->event)
        return a->event < b->event ? -1 : 1;
    return a->enter_ns < b->enter_ns ? -1 : a->enter_ns > b->enter_ns;
}

/* The last successful record of event at or before t, in recs sorted by (event, time). */
const struct kat_timing_call_rec *ka_last_record_before(const struct ka_event_record *recs, size_t n,
                                                        uint64_t event, uint64_t t)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (recs[mid].event < event || (recs[mid].event == event && recs[mid].enter_ns <= t))
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo > 0 && recs[lo - 1].event == event ? recs[lo - 1].rec : NULL;
}

/*
 * Traces from before the timing records carried stream ids: take an event
 * record's stream id from its CUDA_EVENT record, and a wait's or a stream
 * synchronization's from an event record made on the same stream handle.
 */
struct stream_handle_id {
    uint64_t handle;
    uint32_t id_plus_one;
};

/* The event record of a correlation id (0 is CUPTI's "none": never one). */
static const uint64_t *event_of(const struct kat_u64map *event_by_corr, uint32_t correlation_id)
{
    return correlation_id ? kat_u64map_find(event_by_corr, correlation_id) : NULL;
}

static int stream_handle_cmp(const void *x, const void *y)
{
    const struct stream_handle_id *a = x, *b = y;
    return a->handle < b->handle ? -1 : a->handle > b->handle;
}

static void fill_stream_ids(struct ka_timing_rec *timing, size_t n_timing, const struct ka_event_rec *events,
                            const struct kat_u64map *event_by_corr)
{
    size_t n_known = 0;
    for (size_t i = 0; i < n_timing; i++) {
        struct kat_timing_call_rec *r = &timing[i].r;
        const uint64_t *k;
        if (r->api == KAT_TIMING_EVENT_RECORD && !r->stream_id_plus_one && (k = event_of(event_by_corr, r->correlation_id)))
            r->stream_id_plus_one = events[*k].stream_id + 1;
        n_known += r->api == KAT_TIMING_EVENT_RECORD && r->stream_id_plus_one;
    }
    struct stream_handle_id *known = n_known ? malloc(n_known * sizeof *known) : NULL;
    if (!known)
        return;
    size_t k = 0;
    for (size_t i = 0; i < n_timing && k < n_known; i++)
        if (timing[i].r.api == KAT_TIMING_EVENT_RECORD && timing[i].r.stream_id_plus_one)
            known[k++] = (struct stream_handle_id){ timing[i].r.stream, timing[i].r.stream_id_plus_one };
    qsort(known, n_known, sizeof *known, stream_handle_cmp);
    for (size_t i = 0; i < n_timing; i++) {
        struct kat_timing_call_rec *r = &timing[i].r;
        if ((r->api != KAT_TIMING_STREAM_WAIT_EVENT && r->api != KAT_TIMING_STREAM_SYNCHRONIZE) ||
            r->stream_id_plus_one)
            continue;
        struct stream_handle_id key = { r->stream, 0 };
        const struct stream_handle_id *hit = bsearch(&key, known, n_known, sizeof *known, stream_handle_cmp);
        if (hit)
            r->stream_id_plus_one = hit->id_plus_one;
    }
    free(known);
}

/* The timed windows of p, after the rest of the index (ka_finish_index). */
void ka_build_windows(struct ka_run *run, struct ka_proc *p, struct ka_timing_rec *timing, size_t n_timing,
                      struct ka_event_rec *events, size_t n_events)
{
    /*
     * Timed windows: every successful elapsed-time query names a start and an
     * end event; each was last recorded before the query.  The record calls
     * join their CUDA_EVENT activity records by correlation id, which give the
     * stream and the GPU timestamp.
     */
    /* Event records sorted by (event, time), CUDA_EVENT records by correlation id:
       a session that times every iteration has as many windows as iterations. */
    struct ka_event_record *recs = NULL;
    size_t n_recs = 0;
    for (size_t i = 0; i < n_timing; i++)
        if (timing[i].r.api == KAT_TIMING_EVENT_RECORD && timing[i].r.status == 0)
            n_recs++;
    recs = n_recs ? malloc(n_recs * sizeof *recs) : NULL;
    if (!recs)
        n_recs = 0;
    for (size_t i = 0, k = 0; i < n_timing && k < n_recs; i++)
        if (timing[i].r.api == KAT_TIMING_EVENT_RECORD && timing[i].r.status == 0)
            recs[k++] = (struct ka_event_record){ timing[i].r.event, timing[i].r.enter_ns, &timing[i].r };
    if (n_recs)
        qsort(recs, n_recs, sizeof *recs, ka_event_record_cmp);
    struct kat_u64map event_by_corr = KAT_U64MAP_INIT;
    for (size_t k = 0; k < n_events; k++) {
        uint64_t *slot = events[k].correlation_id ? kat_u64map_get(&event_by_corr, events[k].correlation_id, NULL) : NULL;
        if (slot)
            *slot = k;     /* the last event of an id wins */
    }
    fill_stream_ids(timing, n_timing, events, &event_by_corr);

    for (size_t i = 0; i < n_timing; i++) {
        const struct kat_timing_call_rec *q = &timing[i].r;
        if (q->api != KAT_TIMING_EVENT_ELAPSED || q->status != 0)
            continue;
        const struct kat_timing_call_rec *rec_s = ka_last_record_before(recs, n_recs, q->event, q->enter_ns);
        const struct kat_timing_call_rec *rec_e = ka_last_record_before(recs, n_recs, q->event2, q->enter_ns);
        if (!rec_s || !rec_e || rec_e->enter_ns < rec_s->enter_ns)
            continue;
        if (GROW(p->windows, p->n_windows, p->cap_windows))
            continue;
        struct ka_window *w = &p->windows[p->n_windows++];
        memset(w, 0, sizeof *w);
        w->host_start_ns = rec_s->enter_ns;
        w->host_end_ns = rec_e->enter_ns;
        w->start_exit_ns = rec_s->exit_ns;
        w->end_exit_ns = rec_e->exit_ns;
        w->end_event = rec_e->event;
        w->elapsed_ms = q->elapsed_ms;
        w->query_ns = q->enter_ns;
        /* The record calls' own stream ids, then CUPTI's event records (exact GPU times). */
        w->start_stream = rec_s->stream_id_plus_one ? rec_s->stream_id_plus_one - 1 : UINT32_MAX;
        w->end_stream = rec_e->stream_id_plus_one ? rec_e->stream_id_plus_one - 1 : UINT32_MAX;
        int timestamps = !run->opt->event_times_from_stream_order;
        const uint64_t *k;
        if ((k = event_of(&event_by_corr, rec_s->correlation_id))) {
            w->gpu_start_ns = timestamps ? events[*k].device_ts : 0;
            w->start_stream = events[*k].stream_id;
        }
        if ((k = event_of(&event_by_corr, rec_e->correlation_id))) {
            w->gpu_end_ns = timestamps ? events[*k].device_ts : 0;
            w->end_stream = events[*k].stream_id;
        }
    }
    free(recs);
    kat_u64map_free(&event_by_corr);
    if (p->n_windows)
        qsort(p->windows, p->n_windows, sizeof *p->windows, window_cmp);
    /* The same pair of records queried twice is one window. */
    size_t kept = 0;
    for (size_t w = 0; w < p->n_windows; w++) {
        int dup = 0;
        for (size_t v = kept; v-- > 0 && p->windows[v].host_start_ns == p->windows[w].host_start_ns;)
            if (p->windows[v].host_end_ns == p->windows[w].host_end_ns)
                dup = 1;
        if (!dup)
            p->windows[kept++] = p->windows[w];
    }
    p->n_windows = kept;
    for (size_t w = 0; w < p->n_windows; w++) {
        p->windows[w].index = (unsigned)w + 1;
        if (run->opt->on_window)
            run->opt->on_window(run->opt->sink_arg, p->pid, (unsigned)w + 1, p->windows[w].end_stream,
                                p->windows[w].gpu_start_ns, p->windows[w].gpu_end_ns, p->windows[w].elapsed_ms);
    }
    run->a->timed_windows += (unsigned)p->n_windows;
    /* Threads created inside a timed window: recorded, never gating. */
    for (size_t i = 0; i < p->n_threads; i++) {
        const struct ka_window *w = ka_window_at(p, p->threads[i].create_ns);
        if (!w)
            continue;
        struct ka_finding *x =
            ka_add_finding(&run->findings, KA_AXIS_MEASUREMENT, KA_FINDING_SIGNAL, "thread-in-timed-window", p->file,
                           p->threads[i].create_ns, "thread %u created by thread %u inside timed window #%u",
                           p->threads[i].tid, p->threads[i].creator_tid, w->index);
        ka_field_u64(x, "window", w->index);
        ka_field_u64(x, "thread", p->threads[i].tid);
        ka_field_u64(x, "creator_thread", p->threads[i].creator_tid);
        ka_field_u64(x, "created_ns", p->threads[i].create_ns);
    }
}

/* The window a launch at host time t belongs to (its start record <= t < its end record). */
struct ka_window *ka_window_at(struct ka_proc *p, uint64_t t)
{
    size_t lo = 0, hi = p->n_windows;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (p->windows[mid].host_start_ns <= t)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (size_t i = lo, looked = 0; i-- > 0 && looked < 8; looked++)
        if (p->windows[i].host_start_ns <= t && t < p->windows[i].host_end_ns)
            return &p->windows[i];
    return NULL;
}

