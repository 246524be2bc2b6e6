/*
 * dump_session.c - reads each trace of a session once for what every
 * rendering of `kaudit dump` needs (dump.h), and drives the renderer
 * chosen: text (dump_text.c), JSON (dump_json.c) or the kernel table
 * (dump_kernels.c).
 *
 * Traces can be large (millions of kernels), so nothing is collected across
 * processes except the few CHILD_EXIT records, and within a process only the
 * small indexes the joins need (trace_index.h: correlation id -> vendor call
 * id, the in-window kernels; counts per name).  Each output section is a
 * separate pass over the mapped file; the reader's string table persists
 * across passes, so every pass can resolve every name.  libc only: dump
 * must build on the GPU machine.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dump.h"
#include "toolbox.h"

/* ---- the whole session: child exits, seen from the parents ------------------------- */

/*
 * CHILD_EXIT records are the only thing joined across traces: how a process
 * ended as its parent saw it.  Read them all first (errors are reported
 * later, when the trace itself is dumped).
 */
static void collect_child_exits(struct dump *d)
{
    size_t cap = 0;
    for (size_t i = 0; i < kat_session_trace_count(d->session); i++) {
        struct kat_trace *t = kat_trace_open(kat_session_trace_path(d->session, i), NULL, 0);
        if (!t)
            continue;
        struct kat_record r;
        while (kat_trace_next(t, &r, NULL, 0) == 1) {
            if (r.type != KAT_REC_CHILD_EXIT)
                continue;
            const struct kat_child_exit_rec *c = r.body;
            if (kat_grow(&d->exits, &cap, d->exit_count + 1, sizeof *d->exits) != 0)
                kat_die("out of memory");
            d->exits[d->exit_count++] = (struct child_exit){ c->child_pid, c->wait_status,
                                                             c->time_ns, i };
        }
        kat_trace_close(t);
    }
}

/*
 * The parent's view of trace `index`: a CHILD_EXIT for its pid in another
 * trace, not earlier than this trace started (pids can be reused within a
 * long session; the earliest exit after the start is this process's).
 */
const struct child_exit *dump_parent_saw(const struct dump *d, size_t index, uint32_t pid,
                                         uint64_t start_ns)
{
    const struct child_exit *best = NULL;
    for (size_t i = 0; i < d->exit_count; i++) {
        const struct child_exit *e = &d->exits[i];
        if (e->pid != pid || e->reaper == index)
            continue;
        if (e->time_ns && start_ns && e->time_ns < start_ns)
            continue;
        if (!best || e->time_ns < best->time_ns)
            best = e;
    }
    return best;
}

/* The trace that continues this pid after an exec: the next one of that pid. */
const char *dump_next_image(const struct dump *d, size_t index, uint32_t pid)
{
    for (size_t i = index + 1; i < kat_session_trace_count(d->session); i++)
        if (kat_session_trace_pid(d->session, i) == pid)
            return kat_session_trace_name(d->session, i);
    return NULL;
}

/* ---- one process ---------------------------------------------------------------------- */

static uint64_t *map_get(struct kat_u64map *m, uint64_t key, int *fresh)
{
    uint64_t *v = kat_u64map_get(m, key, fresh);
    if (!v)
        kat_die("out of memory");
    return v;
}

static void proc_free(struct proc *p)
{
    kat_trace_index_free(&p->ix);
    kat_u64map_free(&p->names_in);
    kat_u64map_free(&p->names_other);
    kat_u64map_free(&p->api_index);
    free(p->apis);
}

/*
 * First pass: everything the sections need before they can be printed.  The
 * vendor-window join needs every EXTERNAL_CORRELATION record of the process
 * (CUPTI may deliver them after the kernels they label), hence a second pass
 * over the kernels once the index has them all (trace_index.h).
 */
static void scan_process(struct proc *p)
{
    struct kat_record r;
    int rc;
    kat_trace_index_init(&p->ix);
    while ((rc = kat_trace_next(p->t, &r, p->error, sizeof(p->error))) == 1) {
        p->type_count[r.type]++;
        if (kat_trace_index_add(&p->ix, &r) != 0)
            kat_die("out of memory");
        switch (r.type) {
        case KAT_REC_PROCESS_START:
            if (!p->has_start)
                memcpy(&p->start, r.body, sizeof(p->start));
            p->has_start = 1;
            break;
        case KAT_REC_PROCESS_END:
            memcpy(&p->end, r.body, sizeof(p->end));
            p->has_end = 1;
            break;
        case KAT_REC_VERSIONS:
            memcpy(&p->versions, r.body, sizeof(p->versions));
            p->has_versions = 1;
            break;
        case KAT_REC_API: {
            const struct kat_api_rec *a = r.body;
            /* Named calls group by name; unnamed ones by callback id. */
            uint64_t key = a->name_string
                               ? ((uint64_t)(a->domain & 0xff) << 40) | a->name_string
                               : ((uint64_t)1 << 48) | ((uint64_t)(a->domain & 0xff) << 40) | a->cbid;
            int fresh;
            uint64_t *slot = map_get(&p->api_index, key, &fresh);
            if (fresh) {
                p->apis = kat_xrealloc(p->apis, (p->api_count + 1) * sizeof(*p->apis));
                p->apis[p->api_count] = (struct api_count){ a->domain, a->cbid, a->name_string, 0 };
                *slot = p->api_count++;
            }
            p->apis[*slot].count++;
            break;
        }
        default:
            break;
        }
    }
    if (rc < 0)
        p->read_failed = 1;
    if (!kat_trace_complete(p->t) && p->has_end) {
        /* An exec end record with more records after it: the exec failed and
         * the image went on, then stopped without a final end record. */
        p->has_end = 0;
        p->resumed_after_end = 1;
    }

    pass_begin(p);
    while (pass_next(p, &r, KAT_REC_KERNEL)) {
        const struct kat_kernel_rec *k = r.body;
        uint64_t call;
        if (kat_trace_index_add_kernel(&p->ix, k, &call) != 0)
            kat_die("out of memory");
        (*map_get(call ? &p->names_in : &p->names_other, k->name_string, NULL))++;
    }
    kat_trace_index_finish(&p->ix);
}

/* ---- one trace ----------------------------------------------------------------------------- */

static void note_unreadable(struct dump *d, const char *file, const char *error)
{
    d->unreadable = kat_xrealloc(d->unreadable, (d->unreadable_count + 2) * sizeof(char *));
    char *f = kat_xstrdup(file), *e = kat_xstrdup(error);
    d->unreadable[d->unreadable_count++] = f;
    d->unreadable[d->unreadable_count++] = e;
}

static void dump_trace(struct dump *d, size_t index)
{
    const char *path = kat_session_trace_path(d->session, index);
    const char *file = kat_session_trace_name(d->session, index);
    char err[640];
    struct kat_trace *t = kat_trace_open(path, err, sizeof(err));
    if (!t) {
        kat_error("%s", err);
        d->failed = 1;
        if (d->json)
            note_unreadable(d, file, err);
        else if (!d->kernels_only)
            printf("\ntrace %s: UNREADABLE: %s\n", file, err);
        return;
    }
    struct proc p = { .t = t, .index = index, .file = file };
    scan_process(&p);
    if (p.read_failed) {
        kat_error("%s", p.error);
        d->failed = 1;
    }
    if (d->kernels_only)
        dump_kernels_process(&p);
    else if (d->json)
        dump_json_process(d, &p);
    else
        dump_text_process(d, &p);
    /* Stream: what this process printed leaves before the next is read. */
    fflush(stdout);
    proc_free(&p);
    kat_trace_close(t);
}

/* ---- the whole session ---------------------------------------------------------------------- */

void dump_session(struct dump *d)
{
    collect_child_exits(d);
    if (d->json)
        dump_json_header(d);
    else if (!d->kernels_only)
        dump_text_header(d);
    for (size_t i = 0; i < kat_session_trace_count(d->session); i++)
        dump_trace(d, i);
    if (d->json)
        dump_json_trailer(d);
}
