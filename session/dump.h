/*
 * dump.h - `kaudit dump`'s reading of a session (dump_session.c: the
 * session-wide joins, one pass per trace, the driver), its three
 * renderings (dump_text.c, dump_json.c, dump_kernels.c) and what they
 * share (dump_shared.c); the command's options are tools/cmd_dump.c.  The
 * kernel-to-vendor-call join is session/trace_index.h.
 */
#ifndef KAUDIT_DUMP_H
#define KAUDIT_DUMP_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "session.h"
#include "trace_index.h"
#include "trace_names.h"
#include "trace_reader.h"
#include "u64map.h"

/* ---- the whole session: child exits, seen from the parents ---- */

struct child_exit {
    uint32_t pid;
    int32_t wait_status;
    uint64_t time_ns;
    size_t reaper;              /* index of the trace that reaped it */
};

struct dump {
    int json, kernels_only;
    struct kat_session *session;
    struct child_exit *exits;
    size_t exit_count;
    int failed;                 /* some trace was unreadable or malformed */
    char **unreadable;          /* "file\0error" pairs for the JSON trailer */
    size_t unreadable_count;
};

/* The parent's view of trace `index` (a CHILD_EXIT in another trace), or NULL. */
const struct child_exit *dump_parent_saw(const struct dump *d, size_t index, uint32_t pid,
                                         uint64_t start_ns);
/* The trace that continues this pid after an exec, or NULL. */
const char *dump_next_image(const struct dump *d, size_t index, uint32_t pid);

/* ---- one process ---- */

struct api_count {
    uint32_t domain, cbid, name_string;
    uint64_t count;
};

struct name_count {
    uint32_t name_string;
    uint64_t count;
};

struct proc {
    struct kat_trace *t;
    size_t index;
    const char *file;
    int has_start, has_end;
    struct kat_process_start_rec start;
    struct kat_process_end_rec end;
    int resumed_after_end;
    int has_versions;
    struct kat_versions_rec versions;
    uint64_t type_count[KAT_REC_TYPE_COUNT];
    int read_failed;
    char error[640];

    struct kat_trace_index ix;           /* kernel -> vendor call, the in-window kernels */
    struct kat_u64map names_in, names_other; /* name string -> kernel count */
    struct kat_u64map api_index;         /* key -> index into apis */
    struct api_count *apis;
    size_t api_count;
};

static inline const char *S(const struct proc *p, uint32_t id) { return kat_trace_string(p->t, id); }
static inline uint32_t SL(const struct proc *p, uint32_t id) { return kat_trace_string_length(p->t, id); }

/* One pass over the records of one type (the type counts let absent types cost nothing). */
static inline void pass_begin(struct proc *p) { kat_trace_rewind(p->t); }
static inline int pass_next(struct proc *p, struct kat_record *r, uint16_t type)
{
    if (type < KAT_REC_TYPE_COUNT && !p->type_count[type])
        return 0;
    while (kat_trace_next(p->t, r, NULL, 0) == 1)
        if (r->type == type)
            return 1;
    return 0;                   /* the end, or the error already reported by the scan */
}

/* pid/ppid/origin: the PROCESS_START record, else the file header. */
static inline uint32_t proc_pid(const struct proc *p) { return p->has_start ? p->start.pid : kat_trace_header(p->t)->pid; }
static inline uint32_t proc_ppid(const struct proc *p) { return p->has_start ? p->start.ppid : kat_trace_header(p->t)->ppid; }
static inline uint32_t proc_origin(const struct proc *p)
{
    return p->has_start ? p->start.origin : kat_trace_header(p->t)->origin;
}

/* argv is NUL-joined; a trailing NUL terminates the last argument. */
static inline size_t next_arg(const char *s, size_t n, size_t at, size_t *len)
{
    const char *nul = memchr(s + at, '\0', n - at);
    *len = nul ? (size_t)(nul - (s + at)) : n - at;
    return at + *len + 1;
}

/* The per-name kernel counts of m, most frequent first (free() the result;
 * dump_shared.c, like the two below). */
struct name_count *dump_sorted_names(const struct kat_u64map *m);
/* Sorts p->apis, most called first. */
void dump_sort_apis(struct proc *p);
/* "exited 3", "killed by signal 9 (core dumped)", "wait status 0x..." */
void dump_describe_wait_status(char *buf, size_t n, int status);

/* ---- the renderings ---- */

/* Reads every trace of d->session and prints it in the rendering d asks
 * for; d->failed is set when a trace could not be read. */
void dump_session(struct dump *d);

void dump_text_header(const struct dump *d);
void dump_text_process(struct dump *d, struct proc *p);
void dump_json_header(const struct dump *d);
void dump_json_process(struct dump *d, struct proc *p);
void dump_json_trailer(const struct dump *d);
void dump_kernels_process(struct proc *p);

#endif
