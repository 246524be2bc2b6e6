/*
 * cmd_dump.c - `kaudit dump`: print what a recorded session holds.
 *
 *   kaudit dump [--json | --kernels] DIR
 *
 * Human output (default): the session info, then one block per trace.
 * --kernels: one TSV line per kernel, for grep/awk/join.
 * --json: one JSON document (schema in docs/session-format.md, "kaudit dump").
 *
 * Traces can be large (millions of kernels), so nothing is collected across
 * processes except the few CHILD_EXIT records, and within a process only the
 * small indexes the joins need (correlation id -> vendor call id, counts per
 * name).  Each output section is a separate pass over the mapped file; the
 * reader's string table persists across passes, so every pass can resolve
 * every name.  JSON is written by hand (no cJSON: dump must build on the GPU
 * machine with libc only).
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "commands.h"
#include "session.h"
#include "trace_reader.h"

#define TOP_KERNEL_NAMES 10
#define TOP_API_NAMES 15
#define KERNELS_LISTED_PER_CALL 8

static const char dump_usage[] =
    "usage: kaudit dump [--json | --kernels] DIR\n"
    "\n"
    "Print what the recorded session in DIR holds.\n"
    "\n"
    "  --json     one JSON document (format \"kaudit-dump\", version 1)\n"
    "  --kernels  one TSV line per kernel: pid, correlation_id, vendor_call_id or -,\n"
    "             stream_id, start_ns, end_ns, name\n";

static void die_oom(void)
{
    fprintf(stderr, "kaudit: error: out of memory\n");
    exit(1);
}

static void *xcalloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size ? size : 1);
    if (!p)
        die_oom();
    return p;
}

static void *xrealloc(void *p, size_t size)
{
    p = realloc(p, size ? size : 1);
    if (!p)
        die_oom();
    return p;
}

/* ---- a uint64 -> uint64 hash map (open addressing) ---------------------------- */

struct u64map {
    uint64_t *keys;
    uint64_t *vals;
    uint8_t *used;
    size_t cap;                 /* power of two, or 0 */
    size_t count;
};

static size_t mix64(uint64_t k)
{
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdull;
    k ^= k >> 33;
    return (size_t)k;
}

static uint64_t *map_find(const struct u64map *m, uint64_t key)
{
    if (!m->cap)
        return NULL;
    for (size_t i = mix64(key) & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
        if (!m->used[i])
            return NULL;
        if (m->keys[i] == key)
            return &m->vals[i];
    }
}

static void map_grow(struct u64map *m)
{
    struct u64map g = { 0 };
    g.cap = m->cap ? m->cap * 2 : 64;
    g.keys = xcalloc(g.cap, sizeof(*g.keys));
    g.vals = xcalloc(g.cap, sizeof(*g.vals));
    g.used = xcalloc(g.cap, 1);
    for (size_t i = 0; i < m->cap; i++) {
        if (!m->used[i])
            continue;
        size_t j = mix64(m->keys[i]) & (g.cap - 1);
        while (g.used[j])
            j = (j + 1) & (g.cap - 1);
        g.used[j] = 1;
        g.keys[j] = m->keys[i];
        g.vals[j] = m->vals[i];
    }
    g.count = m->count;
    free(m->keys);
    free(m->vals);
    free(m->used);
    *m = g;
}

/* Value slot for key, inserted as 0 when absent; *fresh says whether it was. */
static uint64_t *map_get(struct u64map *m, uint64_t key, int *fresh)
{
    uint64_t *v = map_find(m, key);
    if (fresh)
        *fresh = v == NULL;
    if (v)
        return v;
    if ((m->count + 1) * 2 > m->cap)
        map_grow(m);
    size_t i = mix64(key) & (m->cap - 1);
    while (m->used[i])
        i = (i + 1) & (m->cap - 1);
    m->used[i] = 1;
    m->keys[i] = key;
    m->vals[i] = 0;
    m->count++;
    return &m->vals[i];
}

static void map_free(struct u64map *m)
{
    free(m->keys);
    free(m->vals);
    free(m->used);
    memset(m, 0, sizeof(*m));
}

/* ---- output: escaping --------------------------------------------------------- */

/* Length of the well-formed UTF-8 sequence at s (n bytes left), 0 if none. */
static size_t utf8_len(const unsigned char *s, size_t n)
{
    unsigned char c = s[0];
    if (c < 0x80)
        return 1;
    size_t len;
    unsigned char lo = 0x80, hi = 0xBF;  /* range of the second byte */
    if (c >= 0xC2 && c <= 0xDF)
        len = 2;
    else if (c >= 0xE0 && c <= 0xEF) {
        len = 3;
        if (c == 0xE0)
            lo = 0xA0;              /* overlong */
        if (c == 0xED)
            hi = 0x9F;              /* UTF-16 surrogates */
    } else if (c >= 0xF0 && c <= 0xF4) {
        len = 4;
        if (c == 0xF0)
            lo = 0x90;
        if (c == 0xF4)
            hi = 0x8F;              /* beyond U+10FFFF */
    } else
        return 0;
    if (n < len || s[1] < lo || s[1] > hi)
        return 0;
    for (size_t i = 2; i < len; i++)
        if ((s[i] & 0xC0) != 0x80)
            return 0;
    return len;
}

/*
 * A JSON string.  Control characters and bytes that are not well-formed
 * UTF-8 become \u00XX (the byte as a Latin-1 code point): names come from
 * arbitrary binaries and must never make the document invalid.
 */
static void json_string(FILE *f, const char *str, size_t n)
{
    const unsigned char *s = (const unsigned char *)str;
    putc('"', f);
    for (size_t i = 0; i < n;) {
        unsigned char c = s[i];
        if (c == '"' || c == '\\') {
            putc('\\', f);
            putc(c, f);
            i++;
        } else if (c == '\n') {
            fputs("\\n", f);
            i++;
        } else if (c == '\t') {
            fputs("\\t", f);
            i++;
        } else if (c == '\r') {
            fputs("\\r", f);
            i++;
        } else if (c < 0x20 || c == 0x7f) {
            fprintf(f, "\\u%04x", c);
            i++;
        } else {
            size_t len = utf8_len(s + i, n - i);
            if (len == 0) {
                fprintf(f, "\\u%04x", c);
                i++;
            } else {
                fwrite(s + i, 1, len, f);
                i += len;
            }
        }
    }
    putc('"', f);
}

/* Human text: control bytes escaped so a hostile name cannot garble a terminal. */
static void human_text(FILE *f, const char *str, size_t n)
{
    const unsigned char *s = (const unsigned char *)str;
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '\n')
            fputs("\\n", f);
        else if (s[i] == '\t')
            fputs("\\t", f);
        else if (s[i] < 0x20 || s[i] == 0x7f)
            fprintf(f, "\\x%02x", s[i]);
        else
            putc(s[i], f);
    }
}

/* TSV field: tab, newline and backslash escaped so every kernel stays one line. */
static void tsv_text(FILE *f, const char *str, size_t n)
{
    const unsigned char *s = (const unsigned char *)str;
    if (n == 0) {
        putc('?', f);
        return;
    }
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '\\')
            fputs("\\\\", f);
        else if (s[i] == '\t')
            fputs("\\t", f);
        else if (s[i] == '\n')
            fputs("\\n", f);
        else if (s[i] < 0x20 || s[i] == 0x7f)
            fprintf(f, "\\x%02x", s[i]);
        else
            putc(s[i], f);
    }
}

/* ---- output: a minimal JSON writer ---------------------------------------------- */

struct jw {
    FILE *f;
    int depth;
    unsigned char need_comma[64];
};

static struct jw J;

static void jw_sep(const char *key)
{
    if (J.depth > 0) {
        if (J.need_comma[J.depth])
            putc(',', J.f);
        J.need_comma[J.depth] = 1;
    }
    if (key) {
        json_string(J.f, key, strlen(key));
        putc(':', J.f);
    }
}

static void jw_push(char bracket)
{
    putc(bracket, J.f);
    if (J.depth + 1 < (int)sizeof(J.need_comma))
        J.depth++;
    J.need_comma[J.depth] = 0;
}

static void jw_open(const char *key, char bracket)
{
    jw_sep(key);
    jw_push(bracket);
}

/* An array element on a line of its own: one process per line keeps the
 * document greppable and diffable. */
static void jw_open_line(char bracket)
{
    jw_sep(NULL);
    putc('\n', J.f);
    jw_push(bracket);
}

static void jw_close(char bracket)
{
    putc(bracket, J.f);
    if (J.depth > 0)
        J.depth--;
}

#define jw_obj(key) jw_open(key, '{')
#define jw_obj_end() jw_close('}')
#define jw_arr(key) jw_open(key, '[')
#define jw_arr_end() jw_close(']')

static void jw_u64(const char *key, uint64_t v) { jw_sep(key); fprintf(J.f, "%" PRIu64, v); }
static void jw_i64(const char *key, int64_t v) { jw_sep(key); fprintf(J.f, "%" PRId64, v); }
static void jw_bool(const char *key, int v) { jw_sep(key); fputs(v ? "true" : "false", J.f); }
static void jw_null(const char *key) { jw_sep(key); fputs("null", J.f); }
static void jw_strn(const char *key, const char *s, size_t n) { jw_sep(key); json_string(J.f, s, n); }
static void jw_str(const char *key, const char *s) { jw_strn(key, s, strlen(s)); }
static void jw_double(const char *key, double v)
{
    jw_sep(key);
    if (isfinite(v))
        fprintf(J.f, "%.9g", v);
    else
        fputs("null", J.f);     /* NaN and infinities have no JSON spelling */
}

static void jw_digest(const char *key, uint64_t lo, uint64_t hi)
{
    /* 0/0 is the writer's "digest unavailable", not a digest. */
    if (!lo && !hi) {
        jw_null(key);
        return;
    }
    char buf[33];
    snprintf(buf, sizeof(buf), "%016" PRIx64 "%016" PRIx64, hi, lo);
    jw_str(key, buf);
}

/* ---- enum names ------------------------------------------------------------------- */

static const char *name_of(const char *const *names, size_t count, uint32_t v)
{
    return v < count && names[v] ? names[v] : "unknown";
}
#define NAME_OF(table, v) name_of(table, sizeof(table) / sizeof(table[0]), (v))

static const char *const origin_names[] = { [KAT_ORIGIN_EXEC] = "exec", [KAT_ORIGIN_FORK] = "fork" };
static const char *const end_names[] = {
    [KAT_END_EXIT] = "exit", [KAT_END__EXIT] = "_exit", [KAT_END_EXEC] = "exec" };
static const char *const fork_names[] = {
    [KAT_FORK_FORK] = "fork", [KAT_FORK_POSIX_SPAWN] = "posix_spawn" };
static const char *const library_names[] = {
    [KAT_LIB_CUBLAS] = "cublas", [KAT_LIB_CUBLASLT] = "cublaslt", [KAT_LIB_CUDNN] = "cudnn" };
static const char *const work_names[] = {
    [KAT_WORK_UNKNOWN] = "unknown", [KAT_WORK_GEMM] = "gemm", [KAT_WORK_GEMV] = "gemv",
    [KAT_WORK_CONV] = "conv", [KAT_WORK_OTHER] = "other" };
static const char *const conv_names[] = {
    [KAT_CONV_FORWARD] = "forward", [KAT_CONV_BACKWARD_DATA] = "backward_data",
    [KAT_CONV_BACKWARD_FILTER] = "backward_filter" };
static const char *const image_names[] = {
    [KAT_IMAGE_UNKNOWN] = "unknown", [KAT_IMAGE_CUBIN] = "cubin", [KAT_IMAGE_FATBIN] = "fatbin",
    [KAT_IMAGE_PTX] = "ptx" };
static const char *const domain_names[] = {
    [KAT_API_RUNTIME] = "runtime", [KAT_API_DRIVER] = "driver" };
static const char *const timing_names[] = {
    [KAT_TIMING_EVENT_CREATE] = "event_create", [KAT_TIMING_EVENT_RECORD] = "event_record",
    [KAT_TIMING_EVENT_SYNCHRONIZE] = "event_synchronize",
    [KAT_TIMING_EVENT_ELAPSED] = "event_elapsed", [KAT_TIMING_EVENT_QUERY] = "event_query",
    [KAT_TIMING_EVENT_DESTROY] = "event_destroy", [KAT_TIMING_STREAM_CREATE] = "stream_create",
    [KAT_TIMING_STREAM_WAIT_EVENT] = "stream_wait_event",
    [KAT_TIMING_STREAM_SYNCHRONIZE] = "stream_synchronize",
    [KAT_TIMING_DEVICE_SYNCHRONIZE] = "device_synchronize",
    [KAT_TIMING_STREAM_DESTROY] = "stream_destroy" };
static const char *const phase_names[] = {
    [KAT_SYMBOL_AT_START] = "start", [KAT_SYMBOL_AT_CUDA_INIT] = "cuda_init",
    [KAT_SYMBOL_AT_END] = "end", [KAT_SYMBOL_DEFINED_BY_OBJECT] = "defined_by_object" };
/* CUpti_ActivitySynchronizationType */
static const char *const sync_names[] = {
    "unknown", "event_synchronize", "stream_wait_event", "stream_synchronize",
    "context_synchronize" };
static const char *const nvtx_names[] = {
    [KAT_NVTX_PUSH] = "push", [KAT_NVTX_POP] = "pop", [KAT_NVTX_START] = "start",
    [KAT_NVTX_END] = "end", [KAT_NVTX_MARK] = "mark" };
static const char *const thread_names[] = {
    [KAT_THREAD_CREATE] = "create", [KAT_THREAD_START] = "start" };

/* ---- the whole session: child exits, seen from the parents ------------------------- */

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
            if (d->exit_count == cap) {
                cap = cap ? cap * 2 : 16;
                d->exits = xrealloc(d->exits, cap * sizeof(*d->exits));
            }
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
static const struct child_exit *parent_saw(const struct dump *d, size_t index, uint32_t pid,
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
static const char *next_image(const struct dump *d, size_t index, uint32_t pid)
{
    for (size_t i = index + 1; i < kat_session_trace_count(d->session); i++)
        if (kat_session_trace_pid(d->session, i) == pid)
            return kat_session_trace_name(d->session, i);
    return NULL;
}

static void describe_wait_status(char *buf, size_t n, int status)
{
    if (WIFEXITED(status))
        snprintf(buf, n, "exited %d", WEXITSTATUS(status));
    else if (WIFSIGNALED(status))
        snprintf(buf, n, "killed by signal %d%s", WTERMSIG(status),
                 WCOREDUMP(status) ? " (core dumped)" : "");
    else
        snprintf(buf, n, "wait status 0x%x", (unsigned)status);
}

/* ---- one process ---------------------------------------------------------------------- */

struct window_kernel {
    uint64_t call_id;
    uint32_t correlation_id;
    uint32_t name_string;
    uint64_t order;             /* keeps qsort stable: kernels in trace order */
};

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

    struct u64map vendor_of;    /* correlation id -> vendor call id */
    uint64_t kernels_in_window;
    struct u64map names_in, names_other; /* name string -> kernel count */
    struct window_kernel *window;        /* in-window kernels, sorted by call id */
    size_t window_count;
    struct u64map api_index;             /* key -> index into apis */
    struct api_count *apis;
    size_t api_count;
};

static void proc_free(struct proc *p)
{
    map_free(&p->vendor_of);
    map_free(&p->names_in);
    map_free(&p->names_other);
    map_free(&p->api_index);
    free(p->window);
    free(p->apis);
}

static const char *S(const struct proc *p, uint32_t id) { return kat_trace_string(p->t, id); }
static uint32_t SL(const struct proc *p, uint32_t id) { return kat_trace_string_length(p->t, id); }

/* One pass over the records of one type (the type counts let absent types cost nothing). */
static void pass_begin(struct proc *p) { kat_trace_rewind(p->t); }
static int pass_next(struct proc *p, struct kat_record *r, uint16_t type)
{
    if (type < KAT_REC_TYPE_COUNT && !p->type_count[type])
        return 0;
    while (kat_trace_next(p->t, r, NULL, 0) == 1)
        if (r->type == type)
            return 1;
    return 0;                   /* the end, or the error already reported by scan_process */
}

static uint64_t vendor_call_of(const struct proc *p, uint32_t correlation_id)
{
    const uint64_t *v = map_find(&p->vendor_of, correlation_id);
    return v ? *v : 0;
}

static int compare_window(const void *a, const void *b)
{
    const struct window_kernel *x = a, *y = b;
    if (x->call_id != y->call_id)
        return x->call_id < y->call_id ? -1 : 1;
    return x->order < y->order ? -1 : x->order > y->order;
}

/*
 * First pass: everything the sections need before they can be printed.  The
 * vendor-window join needs every EXTERNAL_CORRELATION record of the process
 * (CUPTI may deliver them after the kernels they label), hence a second pass
 * over the kernels once the map is complete.
 */
static void scan_process(struct proc *p)
{
    struct kat_record r;
    int rc;
    while ((rc = kat_trace_next(p->t, &r, p->error, sizeof(p->error))) == 1) {
        p->type_count[r.type]++;
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
        case KAT_REC_EXTERNAL_CORRELATION: {
            const struct kat_external_correlation_rec *x = r.body;
            if (x->external_kind != KAT_VENDOR_CORRELATION_KIND)
                break;
            /* The first id CUPTI reported for a correlation wins: one API
             * call carries one id of our kind (the innermost open window). */
            int fresh;
            uint64_t *v = map_get(&p->vendor_of, x->correlation_id, &fresh);
            if (fresh)
                *v = x->external_id;
            break;
        }
        case KAT_REC_API: {
            const struct kat_api_rec *a = r.body;
            /* Named calls group by name; unnamed ones by callback id. */
            uint64_t key = a->name_string
                               ? ((uint64_t)(a->domain & 0xff) << 40) | a->name_string
                               : ((uint64_t)1 << 48) | ((uint64_t)(a->domain & 0xff) << 40) | a->cbid;
            int fresh;
            uint64_t *slot = map_get(&p->api_index, key, &fresh);
            if (fresh) {
                p->apis = xrealloc(p->apis, (p->api_count + 1) * sizeof(*p->apis));
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

    size_t cap = 0;
    uint64_t order = 0;
    pass_begin(p);
    while (pass_next(p, &r, KAT_REC_KERNEL)) {
        const struct kat_kernel_rec *k = r.body;
        uint64_t call = vendor_call_of(p, k->correlation_id);
        (*map_get(call ? &p->names_in : &p->names_other, k->name_string, NULL))++;
        if (!call)
            continue;
        p->kernels_in_window++;
        if (p->window_count == cap) {
            cap = cap ? cap * 2 : 64;
            p->window = xrealloc(p->window, cap * sizeof(*p->window));
        }
        p->window[p->window_count++] = (struct window_kernel){ call, k->correlation_id,
                                                               k->name_string, order++ };
    }
    if (p->window_count > 1)
        qsort(p->window, p->window_count, sizeof(*p->window), compare_window);
}

/* The in-window kernels of one vendor call: [*first, *first + count). */
static size_t window_of(const struct proc *p, uint64_t call_id, size_t *first)
{
    size_t lo = 0, hi = p->window_count;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (p->window[mid].call_id < call_id)
            lo = mid + 1;
        else
            hi = mid;
    }
    size_t end = lo;
    while (end < p->window_count && p->window[end].call_id == call_id)
        end++;
    *first = lo;
    return end - lo;
}

static int compare_name_count(const void *a, const void *b)
{
    const struct name_count *x = a, *y = b;
    if (x->count != y->count)
        return x->count > y->count ? -1 : 1;
    return x->name_string < y->name_string ? -1 : x->name_string > y->name_string;
}

static struct name_count *sorted_names(const struct u64map *m)
{
    struct name_count *v = xcalloc(m->count, sizeof(*v));
    size_t n = 0;
    for (size_t i = 0; i < m->cap; i++)
        if (m->used[i])
            v[n++] = (struct name_count){ (uint32_t)m->keys[i], m->vals[i] };
    if (n > 1)
        qsort(v, n, sizeof(*v), compare_name_count);
    return v;
}

static int compare_api(const void *a, const void *b)
{
    const struct api_count *x = a, *y = b;
    if (x->count != y->count)
        return x->count > y->count ? -1 : 1;
    if (x->domain != y->domain)
        return x->domain < y->domain ? -1 : 1;
    return x->cbid < y->cbid ? -1 : x->cbid > y->cbid;
}

/* pid/ppid/origin: the PROCESS_START record, else the file header. */
static uint32_t proc_pid(const struct proc *p) { return p->has_start ? p->start.pid : kat_trace_header(p->t)->pid; }
static uint32_t proc_ppid(const struct proc *p) { return p->has_start ? p->start.ppid : kat_trace_header(p->t)->ppid; }
static uint32_t proc_origin(const struct proc *p)
{
    return p->has_start ? p->start.origin : kat_trace_header(p->t)->origin;
}

/* argv is NUL-joined; a trailing NUL terminates the last argument. */
static size_t next_arg(const char *s, size_t n, size_t at, size_t *len)
{
    const char *nul = memchr(s + at, '\0', n - at);
    *len = nul ? (size_t)(nul - (s + at)) : n - at;
    return at + *len + 1;
}

/* ---- JSON sections ----------------------------------------------------------------------- */

static void json_argv(const char *key, const char *s, size_t n)
{
    jw_arr(key);
    for (size_t at = 0; at < n;) {
        size_t len, next = next_arg(s, n, at, &len);
        jw_strn(NULL, s + at, len);
        at = next;
    }
    jw_arr_end();
}

static void json_string_id(const struct proc *p, const char *key, uint32_t id)
{
    if (id == 0)
        jw_null(key);
    else
        jw_strn(key, S(p, id), SL(p, id));
}

static void json_vendor_op(const struct kat_vendor_call_rec *v)
{
    int conv = v->work_class == KAT_WORK_CONV ||
               (v->work_class != KAT_WORK_GEMM && v->work_class != KAT_WORK_GEMV &&
                v->library == KAT_LIB_CUDNN);
    jw_obj("op");
    jw_str("kind", conv ? "conv" : "gemm");
    jw_u64("dtype_space", v->dtype_space);
    if (!conv) {
        const struct kat_gemm_summary *g = &v->op.gemm;
        jw_i64("m", g->m); jw_i64("n", g->n); jw_i64("k", g->k); jw_i64("batch", g->batch);
        jw_i64("lda", g->lda); jw_i64("ldb", g->ldb); jw_i64("ldc", g->ldc);
        jw_i64("stride_a", g->stride_a); jw_i64("stride_b", g->stride_b);
        jw_i64("stride_c", g->stride_c);
        jw_i64("trans_a", g->trans_a); jw_i64("trans_b", g->trans_b);
        jw_i64("type_a", g->type_a); jw_i64("type_b", g->type_b); jw_i64("type_c", g->type_c);
        jw_i64("compute_type", g->compute_type); jw_i64("epilogue", g->epilogue);
    } else {
        const struct kat_conv_summary *c = &v->op.conv;
        int dims = c->spatial_dims >= 1 && c->spatial_dims <= 3 ? c->spatial_dims : 3;
        if (c->direction >= KAT_CONV_FORWARD && c->direction <= KAT_CONV_BACKWARD_FILTER)
            jw_str("direction", NAME_OF(conv_names, (uint32_t)c->direction));
        else
            jw_null("direction");
        jw_i64("spatial_dims", c->spatial_dims);
        jw_i64("n", c->n); jw_i64("c", c->c); jw_i64("k", c->k);
        const int64_t *arr64[] = { c->in_spatial, c->filter_spatial, c->out_spatial };
        const char *names64[] = { "in_spatial", "filter_spatial", "out_spatial" };
        for (int a = 0; a < 3; a++) {
            jw_arr(names64[a]);
            for (int i = 0; i < dims; i++)
                jw_i64(NULL, arr64[a][i]);
            jw_arr_end();
        }
        const int32_t *arr32[] = { c->pad, c->stride, c->dilation };
        const char *names32[] = { "pad", "stride", "dilation" };
        for (int a = 0; a < 3; a++) {
            jw_arr(names32[a]);
            for (int i = 0; i < dims; i++)
                jw_i64(NULL, arr32[a][i]);
            jw_arr_end();
        }
        jw_i64("groups", c->groups);
        jw_i64("data_type", c->data_type);
        jw_i64("compute_type", c->compute_type);
    }
    jw_obj_end();
}

static void json_process(struct dump *d, struct proc *p)
{
    const struct kat_file_header *h = kat_trace_header(p->t);
    struct kat_record r;

    jw_open_line('{');
    jw_str("file", p->file);
    jw_u64("pid", proc_pid(p));
    jw_u64("ppid", proc_ppid(p));
    uint32_t origin = proc_origin(p);
    jw_str("origin", NAME_OF(origin_names, origin));
    jw_u64("start_ns", h->start_realtime_ns);
    if (p->has_start) {
        json_argv("argv", S(p, p->start.argv_string), SL(p, p->start.argv_string));
        json_string_id(p, "exe", p->start.exe_string);
        json_string_id(p, "cwd", p->start.cwd_string);
        jw_bool("reinjected", p->start.reinjected != 0);
        json_string_id(p, "fork_parent_trace", p->start.fork_parent_trace);
    } else {
        jw_arr("argv");
        jw_arr_end();
        jw_null("exe");
        jw_null("cwd");
        jw_bool("reinjected", 0);
        jw_null("fork_parent_trace");
    }
    jw_bool("complete", kat_trace_complete(p->t));
    if (p->read_failed)
        jw_str("read_error", p->error);
    else
        jw_null("read_error");
    if (p->has_end) {
        jw_obj("end");
        jw_str("kind", NAME_OF(end_names, p->end.kind));
        if (p->end.flags & KAT_END_FLAG_STATUS_KNOWN)
            jw_i64("status", p->end.status);
        else
            jw_null("status");
        jw_u64("time_ns", p->end.time_ns);
        jw_u64("records_written", p->end.records_written);
        jw_u64("records_lost", p->end.records_lost);
        jw_obj_end();
    } else {
        jw_null("end");
    }
    const char *next = p->has_end && p->end.kind == KAT_END_EXEC ? next_image(d, p->index, proc_pid(p)) : NULL;
    if (next)
        jw_str("next_image", next);
    else
        jw_null("next_image");
    const struct child_exit *seen = parent_saw(d, p->index, proc_pid(p), h->start_realtime_ns);
    if (seen) {
        jw_obj("parent_saw");
        jw_i64("wait_status", seen->wait_status);
        jw_bool("exited", WIFEXITED(seen->wait_status));
        if (WIFEXITED(seen->wait_status))
            jw_i64("code", WEXITSTATUS(seen->wait_status));
        else
            jw_null("code");
        if (WIFSIGNALED(seen->wait_status))
            jw_i64("signal", WTERMSIG(seen->wait_status));
        else
            jw_null("signal");
        jw_obj_end();
    } else {
        jw_null("parent_saw");
    }

    jw_obj("counts");
    jw_u64("kernels", p->type_count[KAT_REC_KERNEL]);
    jw_u64("kernels_in_vendor_window", p->kernels_in_window);
    jw_u64("api_calls", p->type_count[KAT_REC_API]);
    jw_u64("vendor_calls", p->type_count[KAT_REC_VENDOR_CALL]);
    jw_u64("memcpy", p->type_count[KAT_REC_MEMCPY]);
    jw_u64("memset", p->type_count[KAT_REC_MEMSET]);
    jw_u64("sync", p->type_count[KAT_REC_SYNC]);
    jw_u64("modules", p->type_count[KAT_REC_MODULE]);
    jw_obj_end();

    jw_arr("kernels");
    pass_begin(p);
    while (pass_next(p, &r, KAT_REC_KERNEL)) {
        const struct kat_kernel_rec *k = r.body;
        uint64_t call = vendor_call_of(p, k->correlation_id);
        jw_obj(NULL);
        jw_strn("name", S(p, k->name_string), SL(p, k->name_string));
        jw_u64("correlation_id", k->correlation_id);
        if (call)
            jw_u64("vendor_call_id", call);
        else
            jw_null("vendor_call_id");
        jw_u64("device_id", k->device_id);
        jw_u64("context_id", k->context_id);
        jw_u64("stream_id", k->stream_id);
        jw_u64("start_ns", k->start_ns);
        jw_u64("end_ns", k->end_ns);
        jw_arr("grid");
        for (int i = 0; i < 3; i++)
            jw_i64(NULL, k->grid[i]);
        jw_arr_end();
        jw_arr("block");
        for (int i = 0; i < 3; i++)
            jw_i64(NULL, k->block[i]);
        jw_arr_end();
        jw_u64("registers", k->registers);
        jw_i64("static_shared", k->static_shared);
        jw_i64("dynamic_shared", k->dynamic_shared);
        jw_u64("graph_id", k->graph_id);
        jw_obj_end();
    }
    jw_arr_end();

    jw_arr("vendor_calls");
    pass_begin(p);
    while (pass_next(p, &r, KAT_REC_VENDOR_CALL)) {
        const struct kat_vendor_call_rec *v = r.body;
        jw_obj(NULL);
        jw_u64("call_id", v->call_id);
        jw_strn("api", S(p, v->api_string), SL(p, v->api_string));
        jw_str("library", NAME_OF(library_names, v->library));
        json_string_id(p, "caller", v->caller_string);
        jw_u64("thread_id", v->thread_id);
        jw_u64("enter_ns", v->enter_ns);
        jw_u64("exit_ns", v->exit_ns);
        jw_u64("depth", v->depth);
        jw_i64("status", v->status);
        jw_str("work_class", NAME_OF(work_names, v->work_class));
        jw_u64("output_address", v->output_address);
        jw_u64("output_bytes", v->output_bytes);
        jw_u64("handle", v->handle);
        if (v->summary_known)
            json_vendor_op(v);
        size_t first, count = window_of(p, v->call_id, &first);
        jw_arr("kernel_correlation_ids");
        for (size_t i = 0; i < count; i++)
            jw_u64(NULL, p->window[first + i].correlation_id);
        jw_arr_end();
        jw_obj_end();
    }
    jw_arr_end();

    if (p->api_count > 1)
        qsort(p->apis, p->api_count, sizeof(*p->apis), compare_api);
    jw_arr("apis");
    for (size_t i = 0; i < p->api_count; i++) {
        const struct api_count *a = &p->apis[i];
        jw_obj(NULL);
        if (a->name_string)
            jw_strn("name", S(p, a->name_string), SL(p, a->name_string));
        else
            jw_null("name");
        jw_str("domain", NAME_OF(domain_names, a->domain));
        jw_u64("cbid", a->cbid);
        jw_u64("count", a->count);
        jw_obj_end();
    }
    jw_arr_end();

    jw_arr("modules");
    pass_begin(p);
    while (pass_next(p, &r, KAT_REC_MODULE)) {
        const struct kat_module_rec *m = r.body;
        jw_obj(NULL);
        jw_u64("module_id", m->module_id);
        jw_u64("context_id", m->context_id);
        jw_u64("size", m->size);
        jw_digest("digest", m->digest_lo, m->digest_hi);
        json_string_id(p, "loader", m->loader_string);
        jw_u64("thread_id", m->thread_id);
        jw_u64("vendor_call_id", m->vendor_call_id);
        jw_str("kind", NAME_OF(image_names, m->image_kind));
        jw_u64("time_ns", m->time_ns);
        jw_obj_end();
    }
    jw_arr_end();

    jw_arr("libraries");
    pass_begin(p);
    while (pass_next(p, &r, KAT_REC_LIBRARY)) {
        const struct kat_library_rec *l = r.body;
        jw_obj(NULL);
        json_string_id(p, "path", l->path_string);
        json_string_id(p, "soname", l->soname_string);
        jw_u64("base_address", l->base_address);
        jw_u64("size", l->file_size);
        jw_digest("digest", l->digest_lo, l->digest_hi);
        jw_bool("duplicate", l->duplicate != 0);
        jw_u64("time_ns", l->time_ns);
        jw_obj_end();
    }
    jw_arr_end();

    jw_arr("timing_calls");
    pass_begin(p);
    while (pass_next(p, &r, KAT_REC_TIMING_CALL)) {
        const struct kat_timing_call_rec *c = r.body;
        jw_obj(NULL);
        jw_str("api", NAME_OF(timing_names, c->api));
        json_string_id(p, "name", c->name_string);
        jw_str("domain", NAME_OF(domain_names, c->domain));
        jw_u64("cbid", c->cbid);
        jw_u64("thread_id", c->thread_id);
        jw_u64("correlation_id", c->correlation_id);
        jw_u64("event", c->event);
        jw_u64("event2", c->event2);
        jw_u64("stream", c->stream);
        if (c->stream_id_plus_one)
            jw_u64("stream_id", c->stream_id_plus_one - 1);
        else
            jw_null("stream_id");
        jw_u64("flags", c->flags);
        if (c->api == KAT_TIMING_EVENT_ELAPSED)
            jw_double("elapsed_ms", c->elapsed_ms);
        else
            jw_null("elapsed_ms");
        jw_u64("enter_ns", c->enter_ns);
        jw_u64("exit_ns", c->exit_ns);
        jw_i64("status", c->status);
        jw_obj_end();
    }
    jw_arr_end();

    jw_arr("timing_symbols");
    pass_begin(p);
    while (pass_next(p, &r, KAT_REC_TIMING_SYMBOL)) {
        const struct kat_timing_symbol_rec *s = r.body;
        jw_obj(NULL);
        json_string_id(p, "symbol", s->symbol_string);
        json_string_id(p, "object", s->object_string);
        jw_u64("address", s->address);
        jw_str("phase", NAME_OF(phase_names, s->phase));
        jw_u64("time_ns", s->time_ns);
        jw_obj_end();
    }
    jw_arr_end();

    jw_arr("cuda_events");
    pass_begin(p);
    while (pass_next(p, &r, KAT_REC_CUDA_EVENT)) {
        const struct kat_cuda_event_rec *e = r.body;
        jw_obj(NULL);
        jw_u64("correlation_id", e->correlation_id);
        jw_u64("context_id", e->context_id);
        jw_u64("stream_id", e->stream_id);
        jw_u64("event_id", e->event_id);
        jw_u64("device_id", e->device_id);
        jw_u64("device_timestamp_ns", e->device_timestamp_ns);
        jw_obj_end();
    }
    jw_arr_end();

    jw_arr("sync");
    pass_begin(p);
    while (pass_next(p, &r, KAT_REC_SYNC)) {
        const struct kat_sync_rec *s = r.body;
        jw_obj(NULL);
        jw_str("type", NAME_OF(sync_names, s->type));
        jw_u64("correlation_id", s->correlation_id);
        jw_u64("context_id", s->context_id);
        jw_u64("stream_id", s->stream_id);
        jw_u64("cuda_event_id", s->cuda_event_id);
        jw_u64("start_ns", s->start_ns);
        jw_u64("end_ns", s->end_ns);
        jw_obj_end();
    }
    jw_arr_end();

    jw_arr("nvtx");
    pass_begin(p);
    while (pass_next(p, &r, KAT_REC_NVTX)) {
        const struct kat_nvtx_rec *n = r.body;
        jw_obj(NULL);
        jw_str("kind", NAME_OF(nvtx_names, n->kind));
        jw_u64("thread_id", n->thread_id);
        jw_u64("range_id", n->range_id);
        json_string_id(p, "message", n->message_string);
        json_string_id(p, "domain", n->domain_string);
        jw_u64("time_ns", n->time_ns);
        jw_obj_end();
    }
    jw_arr_end();

    jw_arr("threads");
    pass_begin(p);
    while (pass_next(p, &r, KAT_REC_THREAD)) {
        const struct kat_thread_rec *t = r.body;
        jw_obj(NULL);
        jw_str("event", NAME_OF(thread_names, t->event));
        jw_u64("thread_id", t->thread_id);
        jw_u64("token", t->token);
        jw_u64("start_routine", t->start_routine);
        json_string_id(p, "routine_object", t->routine_object_string);
        jw_u64("time_ns", t->time_ns);
        jw_obj_end();
    }
    jw_arr_end();

    jw_arr("children");
    pass_begin(p);
    while (pass_next(p, &r, KAT_REC_FORK)) {
        const struct kat_fork_rec *f = r.body;
        jw_obj(NULL);
        jw_u64("pid", f->child_pid);
        jw_str("kind", NAME_OF(fork_names, f->kind));
        json_string_id(p, "path", f->path_string);
        json_argv("argv", S(p, f->argv_string), SL(p, f->argv_string));
        jw_u64("time_ns", f->time_ns);
        jw_obj_end();
    }
    jw_arr_end();

    jw_arr("child_exits");
    pass_begin(p);
    while (pass_next(p, &r, KAT_REC_CHILD_EXIT)) {
        const struct kat_child_exit_rec *c = r.body;
        jw_obj(NULL);
        jw_u64("pid", c->child_pid);
        jw_i64("wait_status", c->wait_status);
        jw_u64("time_ns", c->time_ns);
        jw_obj_end();
    }
    jw_arr_end();

    jw_arr("execs");
    pass_begin(p);
    while (pass_next(p, &r, KAT_REC_EXEC)) {
        const struct kat_exec_rec *e = r.body;
        jw_obj(NULL);
        json_string_id(p, "path", e->path_string);
        json_argv("argv", S(p, e->argv_string), SL(p, e->argv_string));
        jw_bool("reinjected", e->reinjected != 0);
        jw_i64("error", e->error);
        jw_u64("time_ns", e->time_ns);
        jw_obj_end();
    }
    jw_arr_end();

    jw_arr("health");
    pass_begin(p);
    while (pass_next(p, &r, KAT_REC_HEALTH)) {
        const struct kat_health_rec *hr = r.body;
        const char *code = kat_health_code_name(hr->code);
        jw_obj(NULL);
        if (code) {
            jw_str("code", code);
        } else {
            char buf[32];
            snprintf(buf, sizeof(buf), "code_%u", hr->code);
            jw_str("code", buf);
        }
        json_string_id(p, "detail", hr->detail_string);
        jw_i64("value", hr->value);
        jw_u64("time_ns", hr->time_ns);
        jw_obj_end();
    }
    jw_arr_end();

    jw_arr("devices");
    pass_begin(p);
    while (pass_next(p, &r, KAT_REC_DEVICE)) {
        const struct kat_device_rec *dv = r.body;
        char uuid[33];
        for (int i = 0; i < 16; i++)
            snprintf(uuid + 2 * i, 3, "%02x", dv->uuid[i]);
        jw_obj(NULL);
        jw_u64("device_id", dv->device_id);
        json_string_id(p, "name", dv->name_string);
        jw_u64("cc_major", dv->cc_major);
        jw_u64("cc_minor", dv->cc_minor);
        jw_u64("multiprocessors", dv->multiprocessors);
        jw_u64("global_memory_bytes", dv->global_memory_bytes);
        jw_str("uuid", uuid);
        jw_obj_end();
    }
    jw_arr_end();

    if (p->has_versions) {
        jw_obj("versions");
        jw_i64("driver_version", p->versions.driver_version);
        jw_i64("runtime_version", p->versions.runtime_version);
        jw_u64("cupti_version", p->versions.cupti_version);
        jw_u64("cupti_header_version", p->versions.cupti_header_version);
        json_string_id(p, "tool_version", p->versions.tool_version_string);
        jw_obj_end();
    } else {
        jw_null("versions");
    }

    jw_arr("foreign_cupti");
    pass_begin(p);
    while (pass_next(p, &r, KAT_REC_FOREIGN_CUPTI)) {
        const struct kat_foreign_cupti_rec *fc = r.body;
        jw_obj(NULL);
        json_string_id(p, "function", fc->function_string);
        json_string_id(p, "caller", fc->caller_string);
        jw_i64("result", fc->result);
        jw_u64("thread_id", fc->thread_id);
        jw_i64("argument", fc->argument);
        jw_u64("time_ns", fc->time_ns);
        jw_obj_end();
    }
    jw_arr_end();

    jw_arr("clock_sync");
    pass_begin(p);
    while (pass_next(p, &r, KAT_REC_CLOCK_SYNC)) {
        const struct kat_clock_sync_rec *c = r.body;
        jw_obj(NULL);
        jw_u64("realtime_ns", c->realtime_ns);
        jw_u64("monotonic_ns", c->monotonic_ns);
        jw_u64("cupti_ns", c->cupti_ns);
        jw_obj_end();
    }
    jw_arr_end();

    jw_obj_end();
}

/* ---- human sections ------------------------------------------------------------------- */

static void put_id(const struct proc *p, uint32_t id)
{
    if (id == 0)
        fputs("-", stdout);
    else
        human_text(stdout, S(p, id), SL(p, id));
}

static int needs_quotes(const char *s, size_t n)
{
    if (n == 0)
        return 1;
    for (size_t i = 0; i < n; i++)
        if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./=:,+@%",
                    s[i]) || s[i] == '\0')
            return 1;
    return 0;
}

/* argv as a shell would need it typed, so it can be copied back into a shell. */
static void human_argv(const char *s, size_t n)
{
    for (size_t at = 0; at < n;) {
        size_t len, next = next_arg(s, n, at, &len);
        if (at)
            putchar(' ');
        if (!needs_quotes(s + at, len)) {
            human_text(stdout, s + at, len);
        } else {
            putchar('\'');
            for (size_t i = 0; i < len; i++) {
                if (s[at + i] == '\'')
                    fputs("'\\''", stdout);
                else
                    human_text(stdout, s + at + i, 1);
            }
            putchar('\'');
        }
        at = next;
    }
}

static void human_digest(uint64_t lo, uint64_t hi)
{
    if (!lo && !hi)
        fputs("no digest", stdout);
    else
        printf("digest %016" PRIx64 "%016" PRIx64, hi, lo);
}

static void human_kernel_names(const struct proc *p, const struct u64map *m, const char *title,
                               uint64_t total)
{
    if (!total)
        return;
    printf("  %s: %" PRIu64 " (%zu names)\n", title, total, m->count);
    struct name_count *v = sorted_names(m);
    for (size_t i = 0; i < m->count && i < TOP_KERNEL_NAMES; i++) {
        printf("    %8" PRIu64 "  ", v[i].count);
        if (v[i].name_string && kat_trace_string_known(p->t, v[i].name_string))
            human_text(stdout, S(p, v[i].name_string), SL(p, v[i].name_string));
        else
            fputs("(no name)", stdout);
        putchar('\n');
    }
    if (m->count > TOP_KERNEL_NAMES)
        printf("    ... %zu more names\n", m->count - TOP_KERNEL_NAMES);
    free(v);
}

static void human_vendor_op(const struct kat_vendor_call_rec *v)
{
    if (!v->summary_known)
        return;
    if (v->work_class == KAT_WORK_CONV ||
        (v->work_class != KAT_WORK_GEMM && v->work_class != KAT_WORK_GEMV && v->library == KAT_LIB_CUDNN)) {
        const struct kat_conv_summary *c = &v->op.conv;
        printf(" %s n=%" PRId64 " c=%" PRId64 " k=%" PRId64 " in=%" PRId64 "x%" PRId64
               " filter=%" PRId64 "x%" PRId64 " out=%" PRId64 "x%" PRId64 " groups=%d",
               c->direction >= 1 && c->direction <= 3 ? NAME_OF(conv_names, (uint32_t)c->direction) : "conv",
               c->n, c->c, c->k, c->in_spatial[0], c->in_spatial[1], c->filter_spatial[0],
               c->filter_spatial[1], c->out_spatial[0], c->out_spatial[1], c->groups);
    } else {
        const struct kat_gemm_summary *g = &v->op.gemm;
        printf(" m=%" PRId64 " n=%" PRId64 " k=%" PRId64, g->m, g->n, g->k);
        if (g->batch > 1)
            printf(" batch=%" PRId64, g->batch);
    }
}

static void human_process(struct dump *d, struct proc *p)
{
    const struct kat_file_header *h = kat_trace_header(p->t);
    struct kat_record r;

    printf("\nprocess %" PRIu32 " (%s)\n", proc_pid(p), p->file);
    if (p->read_failed)
        printf("  MALFORMED: %s\n  (everything below was read before that point)\n", p->error);
    printf("  ppid: %" PRIu32 "  origin: %s  started: %" PRIu64 " ns\n", proc_ppid(p),
           NAME_OF(origin_names, proc_origin(p)), h->start_realtime_ns);
    if (p->has_start) {
        fputs("  argv: ", stdout);
        human_argv(S(p, p->start.argv_string), SL(p, p->start.argv_string));
        fputs("\n  exe: ", stdout);
        put_id(p, p->start.exe_string);
        fputs("\n  cwd: ", stdout);
        put_id(p, p->start.cwd_string);
        putchar('\n');
        if (p->start.reinjected)
            puts("  reinjected: the preload had been dropped from the environment and was restored");
        if (p->start.fork_parent_trace) {
            fputs("  forked from: ", stdout);
            put_id(p, p->start.fork_parent_trace);
            putchar('\n');
        }
    } else {
        puts("  (no process start record)");
    }
    if (p->has_end) {
        printf("  end: %s", NAME_OF(end_names, p->end.kind));
        if (p->end.flags & KAT_END_FLAG_STATUS_KNOWN)
            printf(" %" PRId32, p->end.status);
        const char *next = p->end.kind == KAT_END_EXEC ? next_image(d, p->index, proc_pid(p)) : NULL;
        if (next)
            printf(" (continues in %s)", next);
        if (p->end.records_lost)
            printf(" (%" PRIu64 " records lost)", p->end.records_lost);
        putchar('\n');
    } else {
        puts("  end: TRUNCATED: no end record");
        if (p->resumed_after_end)
            puts("  (an exec end record was followed by more records: that exec failed)");
    }
    const struct child_exit *seen = parent_saw(d, p->index, proc_pid(p), h->start_realtime_ns);
    if (seen) {
        char buf[64];
        describe_wait_status(buf, sizeof(buf), seen->wait_status);
        printf("  parent saw: %s\n", buf);
    }

    uint64_t kernels = p->type_count[KAT_REC_KERNEL];
    printf("  counts: %" PRIu64 " kernels (%" PRIu64 " in a vendor window, %" PRIu64 " other), %"
           PRIu64 " api calls, %" PRIu64 " vendor calls, %" PRIu64 " memcpy, %" PRIu64
           " memset, %" PRIu64 " sync, %" PRIu64 " modules\n",
           kernels, p->kernels_in_window, kernels - p->kernels_in_window,
           p->type_count[KAT_REC_API], p->type_count[KAT_REC_VENDOR_CALL],
           p->type_count[KAT_REC_MEMCPY], p->type_count[KAT_REC_MEMSET],
           p->type_count[KAT_REC_SYNC], p->type_count[KAT_REC_MODULE]);
    human_kernel_names(p, &p->names_in, "kernels in a vendor window", p->kernels_in_window);
    human_kernel_names(p, &p->names_other, "other kernels", kernels - p->kernels_in_window);

    if (p->type_count[KAT_REC_VENDOR_CALL]) {
        printf("  vendor calls: %" PRIu64 "\n", p->type_count[KAT_REC_VENDOR_CALL]);
        pass_begin(p);
        while (pass_next(p, &r, KAT_REC_VENDOR_CALL)) {
            const struct kat_vendor_call_rec *v = r.body;
            printf("    #%" PRIu64 " ", v->call_id);
            put_id(p, v->api_string);
            printf(" [%s] %s", NAME_OF(library_names, v->library), NAME_OF(work_names, v->work_class));
            human_vendor_op(v);
            printf(" status %" PRId32 " depth %" PRIu32 " thread %" PRIu32 "\n", v->status,
                   v->depth, v->thread_id);
            fputs("      caller: ", stdout);
            put_id(p, v->caller_string);
            size_t first, count = window_of(p, v->call_id, &first);
            printf("\n      kernels inside: %zu", count);
            for (size_t i = 0; i < count && i < KERNELS_LISTED_PER_CALL; i++) {
                fputs(i ? ", " : " (", stdout);
                put_id(p, p->window[first + i].name_string);
                printf(" #%" PRIu32, p->window[first + i].correlation_id);
            }
            if (count > KERNELS_LISTED_PER_CALL)
                fputs(", ...", stdout);
            puts(count ? ")" : "");
        }
    }

    if (p->api_count) {
        if (p->api_count > 1)
            qsort(p->apis, p->api_count, sizeof(*p->apis), compare_api);
        printf("  api calls: %" PRIu64 " (%zu distinct)\n", p->type_count[KAT_REC_API], p->api_count);
        for (size_t i = 0; i < p->api_count && i < TOP_API_NAMES; i++) {
            const struct api_count *a = &p->apis[i];
            printf("    %8" PRIu64 "  %-7s ", a->count, NAME_OF(domain_names, a->domain));
            if (a->name_string)
                put_id(p, a->name_string);
            else
                printf("cbid %" PRIu32, a->cbid);
            putchar('\n');
        }
        if (p->api_count > TOP_API_NAMES)
            printf("    ... %zu more\n", p->api_count - TOP_API_NAMES);
    }

    if (p->type_count[KAT_REC_MODULE]) {
        printf("  modules: %" PRIu64 "\n", p->type_count[KAT_REC_MODULE]);
        pass_begin(p);
        while (pass_next(p, &r, KAT_REC_MODULE)) {
            const struct kat_module_rec *m = r.body;
            printf("    module %" PRIu32 ": %s, %" PRIu64 " bytes, ", m->module_id,
                   NAME_OF(image_names, m->image_kind), m->size);
            human_digest(m->digest_lo, m->digest_hi);
            fputs(", loader ", stdout);
            put_id(p, m->loader_string);
            if (m->vendor_call_id)
                printf(", inside vendor call #%" PRIu64, m->vendor_call_id);
            putchar('\n');
        }
    }

    if (p->type_count[KAT_REC_LIBRARY]) {
        printf("  libraries: %" PRIu64 "\n", p->type_count[KAT_REC_LIBRARY]);
        pass_begin(p);
        while (pass_next(p, &r, KAT_REC_LIBRARY)) {
            const struct kat_library_rec *l = r.body;
            fputs("    ", stdout);
            put_id(p, l->path_string);
            if (l->soname_string) {
                fputs(" [", stdout);
                put_id(p, l->soname_string);
                putchar(']');
            }
            printf(" %" PRIu64 " bytes, ", l->file_size);
            human_digest(l->digest_lo, l->digest_hi);
            if (l->duplicate)
                fputs("  DUPLICATE soname", stdout);
            putchar('\n');
        }
    }

    if (p->type_count[KAT_REC_TIMING_CALL]) {
        printf("  timing calls: %" PRIu64 "\n", p->type_count[KAT_REC_TIMING_CALL]);
        pass_begin(p);
        while (pass_next(p, &r, KAT_REC_TIMING_CALL)) {
            const struct kat_timing_call_rec *c = r.body;
            printf("    %-18s", NAME_OF(timing_names, c->api));
            switch (c->api) {
            case KAT_TIMING_EVENT_ELAPSED:
                printf(" start 0x%" PRIx64 " end 0x%" PRIx64 " -> %.6g ms", c->event, c->event2,
                       (double)c->elapsed_ms);
                break;
            case KAT_TIMING_EVENT_RECORD:
            case KAT_TIMING_STREAM_WAIT_EVENT:
                printf(" event 0x%" PRIx64 " stream 0x%" PRIx64, c->event, c->stream);
                break;
            case KAT_TIMING_EVENT_CREATE:
            case KAT_TIMING_EVENT_SYNCHRONIZE:
            case KAT_TIMING_EVENT_QUERY:
            case KAT_TIMING_EVENT_DESTROY:
                printf(" event 0x%" PRIx64, c->event);
                break;
            case KAT_TIMING_STREAM_CREATE:
            case KAT_TIMING_STREAM_SYNCHRONIZE:
            case KAT_TIMING_STREAM_DESTROY:
                printf(" stream 0x%" PRIx64, c->stream);
                break;
            default:
                break;
            }
            printf(" thread %" PRIu32 " status %" PRId32 " (%.3f us)\n", c->thread_id, c->status,
                   c->exit_ns >= c->enter_ns ? (double)(c->exit_ns - c->enter_ns) / 1e3 : 0.0);
        }
    }

    if (p->type_count[KAT_REC_TIMING_SYMBOL]) {
        printf("  timing symbols: %" PRIu64 "\n", p->type_count[KAT_REC_TIMING_SYMBOL]);
        pass_begin(p);
        while (pass_next(p, &r, KAT_REC_TIMING_SYMBOL)) {
            const struct kat_timing_symbol_rec *s = r.body;
            if (s->phase == KAT_SYMBOL_DEFINED_BY_OBJECT)
                fputs("    defined   ", stdout);
            else
                printf("    at %-9s ", NAME_OF(phase_names, s->phase));
            put_id(p, s->symbol_string);
            fputs(s->phase == KAT_SYMBOL_DEFINED_BY_OBJECT ? " by " : " -> ", stdout);
            if (s->object_string)
                put_id(p, s->object_string);
            else
                fputs("(unresolved)", stdout);
            putchar('\n');
        }
    }

    if (p->type_count[KAT_REC_SYNC] || p->type_count[KAT_REC_CUDA_EVENT]) {
        printf("  syncs: %" PRIu64 ", cuda events recorded: %" PRIu64 "\n",
               p->type_count[KAT_REC_SYNC], p->type_count[KAT_REC_CUDA_EVENT]);
        pass_begin(p);
        while (pass_next(p, &r, KAT_REC_SYNC)) {
            const struct kat_sync_rec *s = r.body;
            printf("    %-20s stream %" PRIu32 " event %" PRIu32 " (%.3f us)\n",
                   NAME_OF(sync_names, s->type), s->stream_id, s->cuda_event_id,
                   s->end_ns >= s->start_ns ? (double)(s->end_ns - s->start_ns) / 1e3 : 0.0);
        }
    }

    if (p->type_count[KAT_REC_NVTX]) {
        printf("  nvtx: %" PRIu64 "\n", p->type_count[KAT_REC_NVTX]);
        pass_begin(p);
        while (pass_next(p, &r, KAT_REC_NVTX)) {
            const struct kat_nvtx_rec *n = r.body;
            printf("    %-5s thread %" PRIu32 " id %" PRIu64 " ", NAME_OF(nvtx_names, n->kind),
                   n->thread_id, n->range_id);
            put_id(p, n->message_string);
            if (n->domain_string) {
                fputs(" (domain ", stdout);
                put_id(p, n->domain_string);
                putchar(')');
            }
            putchar('\n');
        }
    }

    if (p->type_count[KAT_REC_THREAD]) {
        printf("  threads: %" PRIu64 " events\n", p->type_count[KAT_REC_THREAD]);
        pass_begin(p);
        while (pass_next(p, &r, KAT_REC_THREAD)) {
            const struct kat_thread_rec *t = r.body;
            printf("    %-6s thread %" PRIu32 " token %" PRIu64 " routine 0x%" PRIx64 " in ",
                   NAME_OF(thread_names, t->event), t->thread_id, t->token, t->start_routine);
            put_id(p, t->routine_object_string);
            putchar('\n');
        }
    }

    if (p->type_count[KAT_REC_FORK] || p->type_count[KAT_REC_CHILD_EXIT]) {
        puts("  children:");
        pass_begin(p);
        while (pass_next(p, &r, KAT_REC_FORK)) {
            const struct kat_fork_rec *f = r.body;
            printf("    %s %" PRIu32, NAME_OF(fork_names, f->kind), f->child_pid);
            if (f->path_string) {
                fputs(" ", stdout);
                put_id(p, f->path_string);
            }
            putchar('\n');
        }
        pass_begin(p);
        while (pass_next(p, &r, KAT_REC_CHILD_EXIT)) {
            const struct kat_child_exit_rec *c = r.body;
            char buf[64];
            describe_wait_status(buf, sizeof(buf), c->wait_status);
            printf("    reaped %" PRIu32 ": %s\n", c->child_pid, buf);
        }
    }

    if (p->type_count[KAT_REC_EXEC]) {
        puts("  execs:");
        pass_begin(p);
        while (pass_next(p, &r, KAT_REC_EXEC)) {
            const struct kat_exec_rec *e = r.body;
            fputs("    ", stdout);
            put_id(p, e->path_string);
            fputs(": ", stdout);
            human_argv(S(p, e->argv_string), SL(p, e->argv_string));
            if (e->error)
                printf("  (failed: %s)", strerror(e->error));
            if (e->reinjected)
                fputs("  (preload reinjected)", stdout);
            putchar('\n');
        }
    }

    if (p->type_count[KAT_REC_HEALTH]) {
        printf("  health: %" PRIu64 "\n", p->type_count[KAT_REC_HEALTH]);
        pass_begin(p);
        while (pass_next(p, &r, KAT_REC_HEALTH)) {
            const struct kat_health_rec *hr = r.body;
            const char *code = kat_health_code_name(hr->code);
            if (code)
                printf("    %-20s", code);
            else
                printf("    code_%-15" PRIu32, hr->code);
            printf(" %" PRId64, hr->value);
            if (hr->detail_string) {
                fputs("  ", stdout);
                put_id(p, hr->detail_string);
            }
            putchar('\n');
        }
    }

    if (p->type_count[KAT_REC_DEVICE]) {
        pass_begin(p);
        while (pass_next(p, &r, KAT_REC_DEVICE)) {
            const struct kat_device_rec *dv = r.body;
            printf("  device %" PRIu32 ": ", dv->device_id);
            put_id(p, dv->name_string);
            printf(" (sm_%" PRIu32 "%" PRIu32 ", %" PRIu32 " SMs, %" PRIu64 " MiB)\n", dv->cc_major,
                   dv->cc_minor, dv->multiprocessors, dv->global_memory_bytes >> 20);
        }
    }
    if (p->has_versions) {
        printf("  versions: driver %" PRId32 ", runtime %" PRId32 ", cupti %" PRIu32
               " (built against %" PRIu32 "), tool ",
               p->versions.driver_version, p->versions.runtime_version,
               p->versions.cupti_version, p->versions.cupti_header_version);
        put_id(p, p->versions.tool_version_string);
        putchar('\n');
    }
    if (p->type_count[KAT_REC_FOREIGN_CUPTI]) {
        printf("  the workload called CUPTI itself: %" PRIu64 " calls\n",
               p->type_count[KAT_REC_FOREIGN_CUPTI]);
        pass_begin(p);
        while (pass_next(p, &r, KAT_REC_FOREIGN_CUPTI)) {
            const struct kat_foreign_cupti_rec *fc = r.body;
            fputs("    ", stdout);
            put_id(p, fc->function_string);
            printf("(%" PRId64 ") = %" PRId32 " from ", fc->argument, fc->result);
            put_id(p, fc->caller_string);
            putchar('\n');
        }
    }
}

/* ---- --kernels ----------------------------------------------------------------------------- */

static void tsv_kernels(struct proc *p)
{
    struct kat_record r;
    uint32_t pid = proc_pid(p);
    pass_begin(p);
    while (pass_next(p, &r, KAT_REC_KERNEL)) {
        const struct kat_kernel_rec *k = r.body;
        uint64_t call = vendor_call_of(p, k->correlation_id);
        printf("%" PRIu32 "\t%" PRIu32 "\t", pid, k->correlation_id);
        if (call)
            printf("%" PRIu64, call);
        else
            putchar('-');
        printf("\t%" PRIu32 "\t%" PRIu64 "\t%" PRIu64 "\t", k->stream_id, k->start_ns, k->end_ns);
        tsv_text(stdout, S(p, k->name_string), SL(p, k->name_string));
        putchar('\n');
    }
}

/* ---- the command ----------------------------------------------------------------------------- */

static void note_unreadable(struct dump *d, const char *file, const char *error)
{
    d->unreadable = xrealloc(d->unreadable, (d->unreadable_count + 2) * sizeof(char *));
    char *f = strdup(file), *e = strdup(error);
    if (!f || !e)
        die_oom();
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
        fprintf(stderr, "kaudit: error: %s\n", err);
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
        fprintf(stderr, "kaudit: error: %s\n", p.error);
        d->failed = 1;
    }
    if (d->kernels_only)
        tsv_kernels(&p);
    else if (d->json)
        json_process(d, &p);
    else
        human_process(d, &p);
    /* Stream: what this process printed leaves before the next is read. */
    fflush(stdout);
    proc_free(&p);
    kat_trace_close(t);
}

static void dump_header(struct dump *d)
{
    struct kat_session *s = d->session;
    if (d->json) {
        J.f = stdout;
        J.depth = 0;
        jw_obj(NULL);
        jw_str("format", "kaudit-dump");
        jw_u64("version", 1);
        jw_str("dir", kat_session_dir(s));
        jw_obj("session");
        for (size_t i = 0; i < kat_session_info_count(s); i++)
            jw_str(kat_session_info_key(s, i), kat_session_info_value(s, i));
        jw_obj_end();
        jw_arr("processes");
        return;
    }
    printf("session %s\n", kat_session_dir(s));
    for (size_t i = 0; i < kat_session_info_count(s); i++) {
        const char *v = kat_session_info_value(s, i);
        printf("  %s: ", kat_session_info_key(s, i));
        human_text(stdout, v, strlen(v));
        putchar('\n');
    }
    printf("  traces: %zu\n", kat_session_trace_count(s));
}

static void dump_trailer(struct dump *d)
{
    if (!d->json)
        return;
    putc('\n', J.f);
    jw_arr_end();
    jw_arr("unreadable");
    for (size_t i = 0; i + 1 < d->unreadable_count; i += 2) {
        jw_obj(NULL);
        jw_str("file", d->unreadable[i]);
        jw_str("error", d->unreadable[i + 1]);
        jw_obj_end();
    }
    jw_arr_end();
    jw_obj_end();
    putc('\n', stdout);
}

int cmd_dump(int argc, char **argv)
{
    struct dump d = { 0 };
    const char *dir = NULL;
    int options_done = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!options_done && !strcmp(a, "--")) {
            options_done = 1;
        } else if (!options_done && !strcmp(a, "--json")) {
            d.json = 1;
        } else if (!options_done && !strcmp(a, "--kernels")) {
            d.kernels_only = 1;
        } else if (!options_done && (!strcmp(a, "--help") || !strcmp(a, "-h"))) {
            fputs(dump_usage, stdout);
            return 0;
        } else if (!options_done && a[0] == '-' && a[1] != '\0') {
            fprintf(stderr, "kaudit: error: unknown option '%s'\n%s", a, dump_usage);
            return 2;
        } else if (dir) {
            fprintf(stderr, "kaudit: error: dump takes one session directory, got '%s' and '%s'\n%s",
                    dir, a, dump_usage);
            return 2;
        } else {
            dir = a;
        }
    }
    if (!dir) {
        fprintf(stderr, "kaudit: error: dump needs a session directory\n%s", dump_usage);
        return 2;
    }
    if (d.json && d.kernels_only) {
        fprintf(stderr, "kaudit: error: --json and --kernels cannot be used together\n%s", dump_usage);
        return 2;
    }

    char err[1024];
    if (kat_session_open(dir, &d.session, err, sizeof(err)) != 0) {
        fprintf(stderr, "kaudit: error: %s\n", err);
        return 1;
    }
    collect_child_exits(&d);
    if (!d.kernels_only)
        dump_header(&d);
    for (size_t i = 0; i < kat_session_trace_count(d.session); i++)
        dump_trace(&d, i);
    dump_trailer(&d);

    for (size_t i = 0; i < d.unreadable_count; i++)
        free(d.unreadable[i]);
    free(d.unreadable);
    free(d.exits);
    kat_session_close(d.session);
    return d.failed ? 1 : 0;
}
