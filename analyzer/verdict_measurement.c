/*
 * verdict_measurement.c - the measurement axis (docs/analysis.md,
 * "Measurement"): does the reported time cover the candidate's work, and was
 * it measured by the CUDA runtime?
 *
 * Per kernel (ka_check_kernel_window, from kernels.c): work of a timed
 * window must end before its stop event.  Per process (ka_timing_integrity):
 * who defines the timing entry points, whether they changed, and whether
 * the reported times are values the runtime returned.  After all traces,
 * ka_measurement_verdict turns the findings into the verdict.
 */
#define _GNU_SOURCE
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis_internal.h"

/* Did work that ended at END end after T, by more than the 1 us the rule allows?
 * (Written so that no value of a hostile trace wraps around.) */
static int ended_after(uint64_t end, uint64_t t)
{
    return end > t && end - t > 1000;
}

/* The fields every kernel finding carries (docs/report-format.md, "fields"). */
static void kernel_fields(struct ka_finding *x, const char *name, const struct kat_kernel_rec *k)
{
    ka_field_str(x, "kernel_name", name);
    ka_field_u64(x, "stream", k->stream_id);
    ka_field_u64(x, "correlation_id", k->correlation_id);
    ka_field_u64(x, "start_ns", k->start_ns);
    ka_field_u64(x, "end_ns", k->end_ns);
}

static void window_fields(struct ka_finding *x, const struct ka_window *w)
{
    ka_field_u64(x, "window", w->index);
    ka_field_num(x, "reported_ms", (double)w->elapsed_ms);
    if (w->end_stream != UINT32_MAX)
        ka_field_u64(x, "stop_stream", w->end_stream);
    if (w->gpu_end_ns)
        ka_field_u64(x, "stop_ns", w->gpu_end_ns);
    if (w->end_bounded && !w->gpu_end_ns) {
        if (w->end_lo_ns)
            ka_field_u64(x, "stop_lo_ns", w->end_lo_ns);
        if (w->end_hi_ns != UINT64_MAX)
            ka_field_u64(x, "stop_hi_ns", w->end_hi_ns);
    }
}

/*
 * The candidate kernels launched inside window w, for ka_check_window_work:
 * their GPU intervals merged into w->work->busy (sorted, disjoint).  Kernels
 * arrive mostly in time order, so the insertion point is usually the end.
 */
static void note_window_work(const struct ka_proc *p, struct ka_window *w, const char *name,
                             const struct kat_kernel_rec *k)
{
    if (k->end_ns <= k->start_ns)
        return;
    struct ka_window_work *ww = w->work;
    if (!ww) {
        ww = w->work = calloc(1, sizeof *ww);
        if (!ww)
            return;
        ww->first_stream = k->stream_id;
    }
    ww->kernels++;
    if (k->stream_id != ww->first_stream)
        ww->several_streams = 1;
    if (!ww->longest_name || k->end_ns - k->start_ns > ww->longest_end_ns - ww->longest_start_ns) {
        char *copy = strdup(name);
        if (copy) {
            free(ww->longest_name);
            ww->longest_name = copy;
            const struct ka_api *api = ka_api_of(p, k->correlation_id);
            ww->longest_stream = k->stream_id;
            ww->longest_correlation = k->correlation_id;
            ww->longest_start_ns = k->start_ns;
            ww->longest_end_ns = k->end_ns;
            ww->longest_launch_ns = api ? api->start_ns : 0;
        }
    }
    /* the first span that ends at or after the kernel's start */
    size_t lo = 0, hi = ww->n_busy;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (ww->busy[mid].end < k->start_ns)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo < ww->n_busy && ww->busy[lo].start <= k->end_ns) {
        /* overlaps span lo: widen it and swallow the spans it now reaches */
        if (k->start_ns < ww->busy[lo].start)
            ww->busy[lo].start = k->start_ns;
        if (k->end_ns > ww->busy[lo].end)
            ww->busy[lo].end = k->end_ns;
        size_t last = lo;
        while (last + 1 < ww->n_busy && ww->busy[last + 1].start <= ww->busy[lo].end)
            last++;
        if (ww->busy[last].end > ww->busy[lo].end)
            ww->busy[lo].end = ww->busy[last].end;
        if (last > lo) {
            memmove(&ww->busy[lo + 1], &ww->busy[last + 1], (ww->n_busy - last - 1) * sizeof *ww->busy);
            ww->n_busy -= last - lo;
        }
        return;
    }
    if (GROW(ww->busy, ww->n_busy, ww->cap_busy))
        return;
    memmove(&ww->busy[lo + 1], &ww->busy[lo], (ww->n_busy - lo) * sizeof *ww->busy);
    ww->busy[lo].start = k->start_ns;
    ww->busy[lo].end = k->end_ns;
    ww->n_busy++;
}

void ka_window_work_free(struct ka_window *w)
{
    if (!w->work)
        return;
    free(w->work->busy);
    free(w->work->longest_name);
    free(w->work);
    w->work = NULL;
}

/*
 * Measurement: the reported time of a window cannot be shorter than the GPU
 * time of the candidate work launched inside it.  The elapsed time is the GPU
 * time between the two events; every kernel launched between their record
 * calls ran after its launch, on whatever stream, and the union of their GPU
 * intervals (overlap merged) is a lower bound of the wall time they needed.
 * Reported shorter than that union, by more than the host-clock margin, some
 * of that work ran outside the measured interval: a FAIL that needs no exact
 * event time.  Only the candidate's kernels (party candidate, launched inside
 * the window, not via a thread created there) are counted.
 */
void ka_check_window_work(struct ka_findings *f, const struct ka_proc *p)
{
    for (size_t i = 0; i < p->n_windows; i++) {
        const struct ka_window *w = &p->windows[i];
        const struct ka_window_work *ww = w->work;
        if (!ww || !ww->n_busy || !isfinite(w->elapsed_ms) || w->elapsed_ms < 0)
            continue;
        uint64_t busy = 0;
        for (size_t j = 0; j < ww->n_busy; j++)
            busy += ww->busy[j].end - ww->busy[j].start;
        double reported_ns = (double)w->elapsed_ms * 1e6;
        if ((double)busy <= reported_ns + KA_HOST_CLOCK_MARGIN_NS)
            continue;
        uint64_t longest = ww->longest_end_ns - ww->longest_start_ns;
        struct ka_finding *x;
        char launched[96];
        if (ww->longest_launch_ns >= w->host_start_ns)
            snprintf(launched, sizeof launched, "launched %.3f ms after the start event was recorded",
                     (double)(ww->longest_launch_ns - w->host_start_ns) / 1e6);
        else
            snprintf(launched, sizeof launched, "launched inside the window");
        if (ww->kernels == 1 || (double)longest > reported_ns + KA_HOST_CLOCK_MARGIN_NS) {
            char more[160] = "";
            if (ww->kernels > 1)
                snprintf(more, sizeof more, "; the %llu candidate kernels launched inside it kept the GPU busy for "
                         "%.4f ms (the union of their GPU intervals)", (unsigned long long)ww->kernels,
                         (double)busy / 1e6);
            x = ka_add_finding(f, KA_AXIS_MEASUREMENT, KA_FINDING_CONVICTS, "reported-time-shorter-than-work",
                           p->file, ww->longest_start_ns,
                           "timed window #%u: cudaEventElapsedTime returned %.4f ms, but candidate kernel "
                           "'%.120s' (stream %u, %s) ran %.4f ms on the GPU%s: the reported time cannot cover "
                           "the work launched inside the window",
                           w->index, (double)w->elapsed_ms, ww->longest_name, ww->longest_stream, launched,
                           (double)longest / 1e6, more);
        }
        else
            x = ka_add_finding(f, KA_AXIS_MEASUREMENT, KA_FINDING_CONVICTS, "reported-time-shorter-than-work",
                           p->file, ww->longest_start_ns,
                           "timed window #%u: cudaEventElapsedTime returned %.4f ms, but the %llu candidate kernels "
                           "launched inside it kept the GPU busy for %.4f ms (the union of their GPU intervals, "
                           "%s; the longest: '%.120s', stream %u, %.4f ms, %s): the reported time cannot cover "
                           "the work launched inside the window",
                           w->index, (double)w->elapsed_ms, (unsigned long long)ww->kernels, (double)busy / 1e6,
                           ww->several_streams ? "on several streams" : "on one stream", ww->longest_name,
                           ww->longest_stream, (double)longest / 1e6, launched);
        window_fields(x, w);
        ka_field_num(x, "gpu_busy_ms", (double)busy / 1e6);
        ka_field_u64(x, "kernels", ww->kernels);
        ka_field_str(x, "kernel_name", ww->longest_name);
        ka_field_u64(x, "stream", ww->longest_stream);
        ka_field_u64(x, "correlation_id", ww->longest_correlation);
        ka_field_u64(x, "start_ns", ww->longest_start_ns);
        ka_field_u64(x, "end_ns", ww->longest_end_ns);
        ka_field_num(x, "kernel_gpu_ms", (double)longest / 1e6);
        if (ww->longest_launch_ns)
            ka_field_u64(x, "launch_ns", ww->longest_launch_ns);
    }
}

/*
 * Measurement: work of a timed iteration must finish before its stop event
 * (kernels.c finds the window w the kernel belongs to).
 */
void ka_check_kernel_window(struct ka_findings *f, struct ka_timing_facts *tf, const struct ka_proc *p,
                            struct ka_window *w, const struct ka_kernel_timing *kt)
{
    const char *name = kt->name;
    const struct kat_kernel_rec *k = kt->k;
    enum ka_party party = kt->party;
    int via_thread = kt->via_thread;
    /* The stop event's GPU time: exact, or (no CUDA_EVENT record) its upper bound. */
    uint64_t stop_ns = w->gpu_end_ns ? w->gpu_end_ns : w->end_bounded && w->end_hi_ns != UINT64_MAX ? w->end_hi_ns : 0;
    /* Only the candidate's work, and work nobody can be held to (R-C), is checked. */
    if (party != KA_PARTY_CANDIDATE && party != KA_PARTY_UNKNOWN)
        return;
    if (party == KA_PARTY_CANDIDATE && !via_thread)
        note_window_work(p, w, name, k);
    struct ka_finding *x = NULL;
    if (!w->gpu_end_ns && !w->end_bounded) {
        /* Neither an event timestamp nor a stream id for the stop event: nothing to check against. */
        tf->stop_time_ambiguous++;
        if (!w->ambiguous_reported++)
            x = ka_add_finding(f, KA_AXIS_MEASUREMENT, KA_FINDING_UNRESOLVED, "stop-event-time-unknown", p->file,
                           k->start_ns,
                           "timed window #%u: the stop event's GPU time is unknown (%s), so whether kernel "
                           "'%.120s' finished inside the window cannot be checked",
                           w->index,
                           w->end_contradictory ? "its stream-order bounds contradict each other"
                                                : "no CUDA_EVENT record, and its record call carries no stream id",
                           name);
    } else if (!w->gpu_end_ns && w->end_bounded && !(stop_ns && ended_after(k->end_ns, stop_ns)) &&
               ended_after(k->end_ns, w->end_lo_ns)) {
        /* Between the bounds: it may have ended after the stop event, or not. */
        tf->stop_time_ambiguous++;
        if (!w->ambiguous_reported++)
            x = ka_add_finding(f, KA_AXIS_MEASUREMENT, KA_FINDING_UNRESOLVED, "stop-event-time-bounded", p->file,
                           k->start_ns,
                           "kernel '%.120s' (stream %u) of timed window #%u ended %s; the stop event's GPU "
                           "time is known only from stream order (no CUDA_EVENT records), so whether the "
                           "kernel finished inside the timed window is unknown; rerun with "
                           "KAUDIT_EXACT_EVENT_TIMES=1 for exact event times",
                           name, k->stream_id, w->index,
                           w->end_lo_ns ? "after the earliest time the stop event can have completed"
                                        : "while nothing bounds the stop event's completion from below");
    } else if (stop_ns && ended_after(k->end_ns, stop_ns)) {
        if (party == KA_PARTY_CANDIDATE) {
            const char *how = via_thread ? "launched from a thread the candidate created in the window"
                              : (w->end_stream != UINT32_MAX && k->stream_id != w->end_stream)
                                  ? "on a stream the stop event did not wait for"
                                  : "on the stop event's stream";
            x = ka_add_finding(f, KA_AXIS_MEASUREMENT, KA_FINDING_CONVICTS,
                           via_thread ? "work-in-injected-thread" : "work-after-stop-event", p->file, k->start_ns,
                           "candidate kernel '%.120s' (stream %u) of timed window #%u ended %s%.3f ms after the "
                           "stop event (%s); the harness reported %.4f ms",
                           name, k->stream_id, w->index, w->gpu_end_ns ? "" : "at least ",
                           (double)(k->end_ns - stop_ns) / 1e6, how,
                           (double)w->elapsed_ms);
            ka_field_num(x, "late_ms", (double)(k->end_ns - stop_ns) / 1e6);
            ka_field_str(x, "stop_time", w->gpu_end_ns ? "exact" : "upper-bound");
        } else {
            tf->escaped_unattributed++;
            x = ka_add_finding(f, KA_AXIS_MEASUREMENT, KA_FINDING_UNRESOLVED, "unattributed-work-after-stop-event",
                           p->file, k->start_ns,
                           "kernel '%.120s' launched inside timed window #%u ended after its stop event, but "
                           "cannot be attributed (R-C)",
                           name, w->index);
        }
    } else if (party == KA_PARTY_CANDIDATE && w->end_stream != UINT32_MAX && k->stream_id != w->end_stream) {
        x = ka_add_finding(f, KA_AXIS_MEASUREMENT, KA_FINDING_SIGNAL, "side-stream-within-window", p->file,
                       k->start_ns,
                       "candidate kernel '%.120s' ran on stream %u, not the timing stream %u, and finished "
                       "before the stop event of window #%u",
                       name, k->stream_id, w->end_stream, w->index);
    }
    if (x) {
        kernel_fields(x, name, k);
        window_fields(x, w);
    }
}

/* A timing-primitive change's fields: "NAME OLD -> NEW" (function, old, new) and when it was seen. */
static void primitive_fields(struct ka_finding *x, const char *name, int name_len, const char *change,
                             const char *when, int when_len)
{
    if (!x)
        return;
    char *fn = strndup(name, (size_t)name_len);
    ka_field_str(x, "function", fn ? fn : "?");
    free(fn);
    const char *arrow = strstr(change, " -> ");
    if (arrow) {
        char *old = strndup(change, (size_t)(arrow - change));
        ka_field_str(x, "old", old ? old : "");
        free(old);
        ka_field_str(x, "new", arrow + 4);
    }
    if (when && when_len > 0) {
        char *w = strndup(when, (size_t)when_len);
        ka_field_str(x, "when", w ? w : "");
        free(w);
    }
}

void ka_timing_integrity(struct ka_findings *f, struct ka_timing_facts *tf, const struct ka_proc *p)
{
    /* Objects other than the runtime and driver that define timing entry points. */
    for (size_t i = 0; i < p->n_symbols; i++) {
        const struct ka_symbol *s = &p->symbols[i];
        if (s->phase != KAT_SYMBOL_DEFINED_BY_OBJECT || !s->object)
            continue;
        const char *b = kat_base_name(s->object);
        if (!strncmp(b, "libcudart.so", 12) || !strncmp(b, "libcuda.so", 10) || !strncmp(b, "libkaudit", 9))
            continue;
        tf->tamper = 1;
        struct ka_finding *x =
            ka_add_finding(f, KA_AXIS_MEASUREMENT, KA_FINDING_CONVICTS, "foreign-timing-definition", p->file,
                           s->time_ns,
                           "'%s' defines the timing entry point %s: an object other than the CUDA runtime or driver "
                           "can hand the harness a made-up time",
                           s->object, s->symbol);
        ka_field_str(x, "object", s->object);
        ka_field_str(x, "function", s->symbol);
    }
    /* A timing entry point that resolves differently at CUDA init and at the end. */
    for (size_t i = 0; i < p->n_symbols; i++) {
        const struct ka_symbol *s = &p->symbols[i];
        if (s->phase == KAT_SYMBOL_DEFINED_BY_OBJECT || !s->address)
            continue;
        for (size_t j = i + 1; j < p->n_symbols; j++) {
            const struct ka_symbol *u = &p->symbols[j];
            if (u->phase == KAT_SYMBOL_DEFINED_BY_OBJECT || !u->address || u->phase == s->phase ||
                strcmp(u->symbol, s->symbol) || u->address == s->address)
                continue;
            tf->tamper = 1;
            ka_add_finding(f, KA_AXIS_MEASUREMENT, KA_FINDING_CONVICTS, "timing-function-changed", p->file, u->time_ns,
                           "%s resolved to %s at one point and to %s later: the timing function changed during the run",
                           s->symbol, s->object && s->object[0] ? s->object : "?",
                           u->object && u->object[0] ? u->object : "?");
        }
    }
    /* The harness's own identity guard (docs/analysis.md, "Harness marks"). */
    for (size_t i = 0; i < p->n_guard; i++) {
        tf->guard_changes++;
        struct ka_finding *x =
            ka_add_finding(f, KA_AXIS_MEASUREMENT, KA_FINDING_CONVICTS, "timing-primitive-replaced", p->file, 0,
                           "the harness's guard saw %s replaced after the candidate was imported", p->guard_changed[i]);
        ka_field_str(x, "function", p->guard_changed[i]);
        ka_field_str(x, "when", "after-import");
    }
    /* The Python side's snapshot of the timing primitives (docs/python-provenance.md, "Timing primitives"):
     * text "WHEN NAME OLD -> NEW".  Changed while a candidate frame was open on the reporting thread:
     * the candidate's doing; otherwise (the harness, a profiler, or seen only at exit) recorded, never gating. */
    for (size_t i = 0; i < p->n_py_timing; i++) {
        const struct ka_py_timing *pt = &p->py_timing[i];
        const char *what = strchr(pt->text, ' ');
        what = what ? what + 1 : pt->text;
        int n = (int)strcspn(what, " ");
        const char *change = what[n] ? what + n + 1 : "";
        int when_len = (int)(what - pt->text > 0 ? what - pt->text - 1 : 0);
        struct ka_finding *x;
        if (pt->candidate) {
            tf->guard_changes++;
            x = ka_add_finding(f, KA_AXIS_MEASUREMENT, KA_FINDING_CONVICTS, "timing-primitive-replaced", p->file,
                               pt->time_ns,
                               "%.*s was replaced while the candidate's code ran (%.600s): the harness's timer can "
                               "hand back a made-up time",
                               n, what, change);
        } else if (pt->beside_candidate) {
            tf->guard_changes++;
            x = ka_add_finding(f, KA_AXIS_MEASUREMENT, KA_FINDING_CONVICTS, "timing-primitive-replaced", p->file,
                               pt->time_ns,
                               "%.*s was replaced by a function of the candidate's module, defined beside its "
                               "classes (%.600s; seen at %.*s): the harness's timer can hand back a made-up time",
                               n, what, change, when_len, pt->text);
            ka_field_str(x, "by", "candidate-module");
        } else {
            x = ka_add_finding(f, KA_AXIS_MEASUREMENT, KA_FINDING_UNRESOLVED, "timing-primitive-replaced-unattributed",
                               p->file, pt->time_ns,
                               "%.*s changed (%.600s) while no candidate frame was open (seen at %.*s): not "
                               "attributable to the candidate",
                               n, what, change, when_len, pt->text);
        }
        primitive_fields(x, what, n, change, pt->text, when_len);
    }
    /* Reported times must be values the CUDA runtime returned. */
    for (size_t i = 0; i < p->n_reported; i++) {
        double v = p->reported_ms[i];
        tf->reported_total++;
        int ok = 0;
        double nearest = NAN;
        for (size_t j = 0; j < p->n_elapsed; j++) {
            double e = p->elapsed_ms[j];
            if (isnan(nearest) || fabs(e - v) < fabs(nearest - v))
                nearest = e;
            if (fabs(e - v) <= 1e-6 * fmax(fabs(e), 1e-9))
                ok = 1;
        }
        if (!ok) {
            tf->reported_mismatch++;
            struct ka_finding *x;
            if (isnan(nearest))
                x = ka_add_finding(f, KA_AXIS_MEASUREMENT, KA_FINDING_CONVICTS, "reported-time-not-measured", p->file,
                                   0, "the harness reported %.6g ms but the CUDA runtime returned no elapsed time at all",
                                   v);
            else
                x = ka_add_finding(f, KA_AXIS_MEASUREMENT, KA_FINDING_CONVICTS, "reported-time-not-measured", p->file,
                                   0,
                                   "the harness reported %.6g ms, which the CUDA runtime never returned (nearest: %.6g "
                                   "ms)",
                                   v, nearest);
            ka_field_num(x, "reported_ms", v);
            if (!isnan(nearest))
                ka_field_num(x, "nearest_elapsed_ms", nearest);
        }
    }
}

void ka_measurement_verdict(const struct ka_findings *f, const struct ka_timing_facts *tf,
                            const struct ka_session_facts *s, const struct ka_work_tally *w,
                            const struct ka_contract *c, struct ka_analysis *a)
{
    struct ka_axis_result *ax = &a->axis[KA_AXIS_MEASUREMENT];
    unsigned convicting = ka_code_seen(f, "work-after-stop-event") + ka_code_seen(f, "work-in-injected-thread") +
                          ka_code_seen(f, "foreign-timing-definition") + ka_code_seen(f, "timing-function-changed") +
                          ka_code_seen(f, "timing-primitive-replaced") + ka_code_seen(f, "reported-time-not-measured") +
                          ka_code_seen(f, "reported-time-shorter-than-work");
    if (c->timing == KA_TIMING_NONE && !convicting) {
        ax->verdict = KA_UNSUPPORTED;
        ax->root_cause = strdup("the contract makes no timing claim (timing.window is none)");
        return;
    }
    if (convicting) {
        ax->verdict = KA_FAIL;
        if (asprintf(&ax->root_cause, "%u piece%s of evidence that the reported time does not cover the candidate's "
                                      "work or was not measured by the CUDA runtime",
                     convicting, convicting == 1 ? "" : "s") < 0)
            ax->root_cause = NULL;
        return;
    }
    ax->verdict = KA_INCONCLUSIVE;
    if (!a->timed_windows) {
        ax->root_cause = strdup("no timed window could be reconstructed (no cudaEventElapsedTime on recorded events)");
        return;
    }
    if (tf->reference_windows_contended) {
        if (asprintf(&ax->root_cause, "the candidate's kernels ran on the GPU inside %llu of the reference's timed "
                                      "windows: the reference's time, and any speedup against it, is not its own",
                     (unsigned long long)tf->reference_windows_contended) < 0)
            ax->root_cause = NULL;
        return;
    }
    if (tf->escaped_unattributed) {
        ax->root_cause = strdup("R-C: work escaped a timed window but is not attributable to the candidate");
        return;
    }
    if (tf->stop_time_ambiguous) {
        ax->root_cause = strdup("work may have ended after a stop event whose GPU time is unknown or known only "
                                "from stream order (no CUDA_EVENT records; KAUDIT_EXACT_EVENT_TIMES=1 records "
                                "them)");
        return;
    }
    if (s->session_incomplete) {
        ax->root_cause = strdup(KA_SESSION_INCOMPLETE_CAUSE);
        return;
    }
    if (s->read_error || s->truncated) {
        ax->root_cause = strdup("a trace is truncated or malformed: kernels after its last record are not known");
        return;
    }
    if (s->missing_traces) {
        ax->root_cause = strdup("a process the traces name has no trace: its kernels are not known (the session "
                                "is incomplete)");
        return;
    }
    if (s->processes_unaccounted) {
        ax->root_cause = strdup(KA_PROCESSES_UNACCOUNTED_CAUSE);
        return;
    }
    if (s->traces_changed) {
        ax->root_cause = strdup(KA_TRACES_CHANGED_CAUSE);
        return;
    }
    if (s->health_problem) {
        ax->root_cause = strdup("tool health: the evidence may be incomplete (see the findings)");
        return;
    }
    if (!w->candidate_kernels_any) {
        ax->root_cause = strdup("no candidate kernel was attributed to any timed window");
        return;
    }
    ax->verdict = KA_PASS;
}

/* Recorded, never gating. */
void ka_measurement_signals(struct ka_findings *f, const struct ka_contract *c, const struct ka_proc *p)
{
    if (p->low_precision_kernels) {
        struct ka_finding *x =
            ka_add_finding(f, KA_AXIS_MEASUREMENT, KA_FINDING_SIGNAL, "lower-precision-kernels", p->file, 0,
                           "%llu candidate kernels have lower-precision names (e.g. '%.120s') in a %s task",
                           (unsigned long long)p->low_precision_kernels, p->low_precision_example, c->timing_dtype);
        ka_field_u64(x, "kernels", p->low_precision_kernels);
        ka_field_str(x, "kernel_name", p->low_precision_example);
        ka_field_str(x, "dtype", c->timing_dtype);
    }
    if (p->graph_kernels) {
        struct ka_finding *x = ka_add_finding(f, KA_AXIS_MEASUREMENT, KA_FINDING_SIGNAL, "graph-replays", p->file,
                                              0, "%llu kernels ran from CUDA graphs",
                                              (unsigned long long)p->graph_kernels);
        ka_field_u64(x, "kernels", p->graph_kernels);
    }
}
