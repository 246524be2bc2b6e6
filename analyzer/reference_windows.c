/*
 * reference_windows.c - the reference's timed windows against the
 * candidate's GPU work, across the session's processes (docs/analysis.md,
 * "Measurement": candidate-work-in-reference-window).
 *
 * A speedup is the reference's time over the candidate's.  The candidate's
 * process (kaudit audit's second party, or a thread of the candidate's in a
 * harness that runs both in one process) can run GPU work of its own while
 * the reference is being timed: the reference's window then holds the
 * candidate's kernels too, and the reference looks slower than it is.  No
 * window of the candidate's shows it.  The GPU intervals do: a candidate
 * kernel (and, in kaudit audit, any kernel, copy or fill of a process not
 * the reference's: there the candidate can launch outside every phase of
 * its own) that ran inside a window that timed only the reference's work
 * makes the measurement INCONCLUSIVE.
 *
 * Each window's GPU span is held from outside: from its start event's GPU
 * time (else the start record call, which the event follows) to its stop
 * event's GPU time (else the upper bound stream order gives, else the
 * elapsed-time query, which the stop event preceded).  A kernel overlapping
 * that span by more than the host clock's margin counts.
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "analysis_internal.h"

void ka_note_candidate_span(struct ka_run *run, const struct ka_proc *p, uint64_t start_ns, uint64_t end_ns)
{
    if (end_ns <= start_ns)
        return;
    /* kernels arrive mostly in time order: one that touches the last span extends it */
    if (run->n_candidate_spans) {
        struct ka_gpu_span *last = &run->candidate_spans[run->n_candidate_spans - 1];
        if (last->pid == p->pid && start_ns >= last->start_ns && start_ns <= last->end_ns) {
            if (end_ns > last->end_ns)
                last->end_ns = end_ns;
            return;
        }
    }
    if (GROW(run->candidate_spans, run->n_candidate_spans, run->cap_candidate_spans))
        return;
    run->candidate_spans[run->n_candidate_spans++] = (struct ka_gpu_span){ start_ns, end_ns, p->pid };
}

void ka_note_reference_windows(struct ka_run *run, const struct ka_proc *p)
{
    for (size_t i = 0; i < p->n_windows; i++) {
        const struct ka_window *w = &p->windows[i];
        /* the reference's work timed there, and none of the candidate's own calls */
        if (!w->reference_launches || w->candidate_launches)
            continue;
        uint64_t lo = w->gpu_start_ns ? w->gpu_start_ns : w->host_start_ns;
        uint64_t hi = w->gpu_end_ns                                        ? w->gpu_end_ns
                      : w->end_bounded && w->end_hi_ns != UINT64_MAX ? w->end_hi_ns
                                                                     : w->query_ns;
        if (!hi || hi <= lo || GROW(run->reference_windows, run->n_reference_windows, run->cap_reference_windows))
            continue;
        run->reference_windows[run->n_reference_windows++] =
            (struct ka_reference_window){ .lo_ns = lo, .hi_ns = hi, .lo_exact = w->gpu_start_ns != 0,
                                          .hi_exact = w->gpu_end_ns != 0, .pid = p->pid, .index = w->index,
                                          .elapsed_ms = w->elapsed_ms, .file = strdup(p->file) };
    }
}

static int by_start(const void *x, const void *y)
{
    const struct ka_gpu_span *a = x, *b = y;
    return a->start_ns < b->start_ns ? -1 : a->start_ns > b->start_ns;
}

void ka_check_reference_windows(struct ka_run *run)
{
    size_t n = run->n_candidate_spans;
    if (!n || !run->n_reference_windows)
        return;
    qsort(run->candidate_spans, n, sizeof *run->candidate_spans, by_start);
    /* the longest span, so that a search by start finds every span that can reach a window */
    uint64_t longest = 0;
    for (size_t i = 0; i < n; i++)
        if (run->candidate_spans[i].end_ns - run->candidate_spans[i].start_ns > longest)
            longest = run->candidate_spans[i].end_ns - run->candidate_spans[i].start_ns;
    const struct ka_reference_window *first = NULL;
    uint64_t first_ns = 0, total_ns = 0;
    uint32_t first_pid = 0;
    for (size_t r = 0; r < run->n_reference_windows; r++) {
        const struct ka_reference_window *w = &run->reference_windows[r];
        /* a bound from a host time is held in by the host clock's margin; an event's GPU time is exact */
        uint64_t lo = w->lo_ns + (w->lo_exact ? 0 : KA_HOST_CLOCK_MARGIN_NS);
        uint64_t hi = w->hi_ns - (w->hi_exact ? 0 : KA_HOST_CLOCK_MARGIN_NS);
        if (hi <= lo || hi > w->hi_ns)
            continue;
        /* the first span that starts late enough to end after lo */
        uint64_t from = lo > longest ? lo - longest : 0;
        size_t a = 0, b = n;
        while (a < b) {
            size_t mid = (a + b) / 2;
            if (run->candidate_spans[mid].start_ns < from)
                a = mid + 1;
            else
                b = mid;
        }
        uint64_t inside = 0;
        uint32_t pid = 0;
        for (size_t i = a; i < n && run->candidate_spans[i].start_ns < hi; i++) {
            const struct ka_gpu_span *s = &run->candidate_spans[i];
            if (s->end_ns <= lo)
                continue;
            inside += (s->end_ns < hi ? s->end_ns : hi) - (s->start_ns > lo ? s->start_ns : lo);
            pid = s->pid;
        }
        if (!inside)
            continue;
        run->timing.reference_windows_contended++;
        total_ns += inside;
        if (!first) {
            first = w;
            first_ns = inside;
            first_pid = pid;
        }
    }
    if (!first)
        return;
    struct ka_finding *x = ka_add_finding(
        &run->findings, KA_AXIS_MEASUREMENT, KA_FINDING_UNRESOLVED, "candidate-work-in-reference-window", first->file,
        first->lo_ns,
        "the candidate's GPU work (kernels, copies) ran inside %llu of the reference's %zu timed windows (%.4f ms "
        "in all; the first: window #%u of pid %u, which reported %.4f ms, held %.4f ms of the work of pid %u): the "
        "reference was timed with the candidate's work beside it",
        (unsigned long long)run->timing.reference_windows_contended, run->n_reference_windows, (double)total_ns / 1e6,
        first->index, first->pid, (double)first->elapsed_ms, (double)first_ns / 1e6, first_pid);
    ka_field_u64(x, "windows", run->timing.reference_windows_contended);
    ka_field_u64(x, "reference_windows", run->n_reference_windows);
    ka_field_num(x, "candidate_gpu_ms", (double)total_ns / 1e6);
    ka_field_u64(x, "window", first->index);
    ka_field_u64(x, "reference_pid", first->pid);
    ka_field_u64(x, "candidate_pid", first_pid);
}

void ka_reference_windows_free(struct ka_run *run)
{
    for (size_t i = 0; i < run->n_reference_windows; i++)
        free(run->reference_windows[i].file);
    free(run->reference_windows);
    free(run->candidate_spans);
    run->reference_windows = NULL;
    run->candidate_spans = NULL;
    run->n_reference_windows = run->n_candidate_spans = 0;
}
