/*
 * dump_text.c - `kaudit dump` without options: the session info, then one
 * block per trace, for people.  Control bytes in names are escaped so that a
 * hostile name cannot garble a terminal.
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "dump.h"

#define TOP_KERNEL_NAMES 10
#define TOP_API_NAMES 15
#define KERNELS_LISTED_PER_CALL 8

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

static void put_id(const struct proc *p, uint32_t id)
{
    if (id == 0)
        fputs("-", stdout);
    else
        human_text(stdout, S(p, id), SL(p, id));
}

/* before, the string and after, only when the record has the string. */
static void put_optional_id(const struct proc *p, const char *before, uint32_t id, const char *after)
{
    if (id == 0)
        return;
    fputs(before, stdout);
    put_id(p, id);
    fputs(after, stdout);
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

static void human_kernel_names(const struct proc *p, const struct kat_u64map *m, const char *title,
                               uint64_t total)
{
    if (!total)
        return;
    printf("  %s: %" PRIu64 " (%zu names)\n", title, total, m->count);
    struct name_count *v = dump_sorted_names(m);
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
               c->direction >= 1 && c->direction <= 3 ? kat_conv_direction_name((uint32_t)c->direction) : "conv",
               c->n, c->c, c->k, c->in_spatial[0], c->in_spatial[1], c->filter_spatial[0],
               c->filter_spatial[1], c->out_spatial[0], c->out_spatial[1], c->groups);
    } else {
        const struct kat_gemm_summary *g = &v->op.gemm;
        printf(" m=%" PRId64 " n=%" PRId64 " k=%" PRId64, g->m, g->n, g->k);
        if (g->batch > 1)
            printf(" batch=%" PRId64, g->batch);
    }
}

/* ---- the process's identity, its end and its parent's view -------------- */

static void text_start(const struct proc *p)
{
    if (!p->has_start) {
        puts("  (no process start record)");
        return;
    }
    fputs("  argv: ", stdout);
    human_argv(S(p, p->start.argv_string), SL(p, p->start.argv_string));
    fputs("\n  exe: ", stdout);
    put_id(p, p->start.exe_string);
    fputs("\n  cwd: ", stdout);
    put_id(p, p->start.cwd_string);
    putchar('\n');
    if (p->start.reinjected)
        puts("  reinjected: the preload had been dropped from the environment and was restored");
    put_optional_id(p, "  forked from: ", p->start.fork_parent_trace, "\n");
}

static void text_end(const struct dump *d, const struct proc *p)
{
    if (!p->has_end) {
        puts("  end: TRUNCATED: no end record");
        if (p->resumed_after_end)
            puts("  (an exec end record was followed by more records: that exec failed)");
        return;
    }
    printf("  end: %s", kat_end_kind_name(p->end.kind));
    if (p->end.flags & KAT_END_FLAG_STATUS_KNOWN)
        printf(" %" PRId32, p->end.status);
    const char *next = p->end.kind == KAT_END_EXEC ? dump_next_image(d, p->index, proc_pid(p)) : NULL;
    if (next)
        printf(" (continues in %s)", next);
    if (p->end.records_lost)
        printf(" (%" PRIu64 " records lost)", p->end.records_lost);
    putchar('\n');
}

static void text_identity(const struct dump *d, const struct proc *p)
{
    const struct kat_file_header *h = kat_trace_header(p->t);
    printf("\nprocess %" PRIu32 " (%s)\n", proc_pid(p), p->file);
    if (p->read_failed)
        printf("  MALFORMED: %s\n  (everything below was read before that point)\n", p->error);
    printf("  ppid: %" PRIu32 "  origin: %s  started: %" PRIu64 " ns\n", proc_ppid(p),
           kat_origin_name(proc_origin(p)), h->start_realtime_ns);
    text_start(p);
    text_end(d, p);
    const struct child_exit *seen = dump_parent_saw(d, p->index, proc_pid(p), h->start_realtime_ns);
    if (seen) {
        char buf[64];
        dump_describe_wait_status(buf, sizeof(buf), seen->wait_status);
        printf("  parent saw: %s\n", buf);
    }
}

static void text_counts(const struct proc *p)
{
    uint64_t kernels = p->type_count[KAT_REC_KERNEL];
    printf("  counts: %" PRIu64 " kernels (%" PRIu64 " in a vendor window, %" PRIu64 " other), %"
           PRIu64 " api calls, %" PRIu64 " vendor calls, %" PRIu64 " memcpy, %" PRIu64
           " memset, %" PRIu64 " sync, %" PRIu64 " modules\n",
           kernels, p->ix.n_window, kernels - p->ix.n_window,
           p->type_count[KAT_REC_API], p->type_count[KAT_REC_VENDOR_CALL],
           p->type_count[KAT_REC_MEMCPY], p->type_count[KAT_REC_MEMSET],
           p->type_count[KAT_REC_SYNC], p->type_count[KAT_REC_MODULE]);
    human_kernel_names(p, &p->names_in, "kernels in a vendor window", p->ix.n_window);
    human_kernel_names(p, &p->names_other, "other kernels", kernels - p->ix.n_window);
}

/* ---- one line (or two) per record ---------------------------------------- */

/* Prints one record (its body). */
typedef void (*text_line_fn)(const struct proc *p, const void *body);

/* Every record of `type`, in file order. */
static void text_records(struct proc *p, uint16_t type, text_line_fn line)
{
    struct kat_record r;
    pass_begin(p);
    while (pass_next(p, &r, type))
        line(p, r.body);
}

/* "  TITLE: COUNT" and the records of `type`, when there are any. */
static void text_counted(struct proc *p, const char *title, uint16_t type, text_line_fn line)
{
    if (!p->type_count[type])
        return;
    printf("  %s: %" PRIu64 "\n", title, p->type_count[type]);
    text_records(p, type, line);
}

static void text_vendor_call(const struct proc *p, const void *body)
{
    const struct kat_vendor_call_rec *v = body;
    printf("    #%" PRIu64 " ", v->call_id);
    put_id(p, v->api_string);
    printf(" [%s] %s", kat_vendor_library_name(v->library), kat_work_class_name(v->work_class));
    human_vendor_op(v);
    printf(" status %" PRId32 " depth %" PRIu32 " thread %" PRIu32 "\n", v->status,
           v->depth, v->thread_id);
    fputs("      caller: ", stdout);
    put_id(p, v->caller_string);
    const struct kat_index_kernel *first;
    size_t count = kat_trace_index_window(&p->ix, v->call_id, &first);
    printf("\n      kernels inside: %zu", count);
    for (size_t i = 0; i < count && i < KERNELS_LISTED_PER_CALL; i++) {
        fputs(i ? ", " : " (", stdout);
        put_id(p, first[i].name_string);
        printf(" #%" PRIu32, first[i].correlation_id);
    }
    if (count > KERNELS_LISTED_PER_CALL)
        fputs(", ...", stdout);
    puts(count ? ")" : "");
}

/* The API calls are counted while the trace is read, not kept as records. */
static void text_apis(struct proc *p)
{
    if (!p->api_count)
        return;
    dump_sort_apis(p);
    printf("  api calls: %" PRIu64 " (%zu distinct)\n", p->type_count[KAT_REC_API], p->api_count);
    for (size_t i = 0; i < p->api_count && i < TOP_API_NAMES; i++) {
        const struct api_count *a = &p->apis[i];
        printf("    %8" PRIu64 "  %-7s ", a->count, kat_api_domain_name(a->domain));
        if (a->name_string)
            put_id(p, a->name_string);
        else
            printf("cbid %" PRIu32, a->cbid);
        putchar('\n');
    }
    if (p->api_count > TOP_API_NAMES)
        printf("    ... %zu more\n", p->api_count - TOP_API_NAMES);
}

static void text_module(const struct proc *p, const void *body)
{
    const struct kat_module_rec *m = body;
    printf("    module %" PRIu32 ": %s, %" PRIu64 " bytes, ", m->module_id,
           kat_image_kind_name(m->image_kind), m->size);
    human_digest(m->digest_lo, m->digest_hi);
    fputs(", loader ", stdout);
    put_id(p, m->loader_string);
    if (m->vendor_call_id)
        printf(", inside vendor call #%" PRIu64, m->vendor_call_id);
    putchar('\n');
}

static void text_library(const struct proc *p, const void *body)
{
    const struct kat_library_rec *l = body;
    fputs("    ", stdout);
    put_id(p, l->path_string);
    put_optional_id(p, " [", l->soname_string, "]");
    printf(" %" PRIu64 " bytes, ", l->file_size);
    human_digest(l->digest_lo, l->digest_hi);
    if (l->duplicate)
        fputs("  DUPLICATE soname", stdout);
    putchar('\n');
}

/* The arguments that say what a timing call timed: its events, its stream. */
static void text_timing_arguments(const struct kat_timing_call_rec *c)
{
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
}

static void text_timing_call(const struct proc *p, const void *body)
{
    const struct kat_timing_call_rec *c = body;
    (void)p;
    printf("    %-18s", kat_timing_api_name(c->api));
    text_timing_arguments(c);
    printf(" thread %" PRIu32 " status %" PRId32 " (%.3f us)\n", c->thread_id, c->status,
           c->exit_ns >= c->enter_ns ? (double)(c->exit_ns - c->enter_ns) / 1e3 : 0.0);
}

static void text_timing_symbol(const struct proc *p, const void *body)
{
    const struct kat_timing_symbol_rec *s = body;
    if (s->phase == KAT_SYMBOL_DEFINED_BY_OBJECT)
        fputs("    defined   ", stdout);
    else
        printf("    at %-9s ", kat_symbol_phase_name(s->phase));
    put_id(p, s->symbol_string);
    fputs(s->phase == KAT_SYMBOL_DEFINED_BY_OBJECT ? " by " : " -> ", stdout);
    if (s->object_string)
        put_id(p, s->object_string);
    else
        fputs("(unresolved)", stdout);
    putchar('\n');
}

static void text_sync(const struct proc *p, const void *body)
{
    const struct kat_sync_rec *s = body;
    (void)p;
    printf("    %-20s stream %" PRIu32 " event %" PRIu32 " (%.3f us)\n",
           kat_sync_type_name(s->type), s->stream_id, s->cuda_event_id,
           s->end_ns >= s->start_ns ? (double)(s->end_ns - s->start_ns) / 1e3 : 0.0);
}

/* The syncs one by one; the CUDA events only counted. */
static void text_syncs(struct proc *p)
{
    if (!p->type_count[KAT_REC_SYNC] && !p->type_count[KAT_REC_CUDA_EVENT])
        return;
    printf("  syncs: %" PRIu64 ", cuda events recorded: %" PRIu64 "\n",
           p->type_count[KAT_REC_SYNC], p->type_count[KAT_REC_CUDA_EVENT]);
    text_records(p, KAT_REC_SYNC, text_sync);
}

static void text_nvtx(const struct proc *p, const void *body)
{
    const struct kat_nvtx_rec *n = body;
    printf("    %-5s thread %" PRIu32 " id %" PRIu64 " ", kat_nvtx_kind_name(n->kind),
           n->thread_id, n->range_id);
    put_id(p, n->message_string);
    put_optional_id(p, " (domain ", n->domain_string, ")");
    putchar('\n');
}

static void text_thread(const struct proc *p, const void *body)
{
    const struct kat_thread_rec *t = body;
    printf("    %-6s thread %" PRIu32 " token %" PRIu64 " routine 0x%" PRIx64 " in ",
           kat_thread_event_name(t->event), t->thread_id, t->token, t->start_routine);
    put_id(p, t->routine_object_string);
    putchar('\n');
}

static void text_threads(struct proc *p)
{
    if (!p->type_count[KAT_REC_THREAD])
        return;
    printf("  threads: %" PRIu64 " events\n", p->type_count[KAT_REC_THREAD]);
    text_records(p, KAT_REC_THREAD, text_thread);
}

static void text_child(const struct proc *p, const void *body)
{
    const struct kat_fork_rec *f = body;
    printf("    %s %" PRIu32, kat_fork_kind_name(f->kind), f->child_pid);
    put_optional_id(p, " ", f->path_string, "");
    putchar('\n');
}

static void text_child_exit(const struct proc *p, const void *body)
{
    const struct kat_child_exit_rec *c = body;
    char buf[64];
    (void)p;
    dump_describe_wait_status(buf, sizeof(buf), c->wait_status);
    printf("    reaped %" PRIu32 ": %s\n", c->child_pid, buf);
}

/* The children started, then the children reaped. */
static void text_children(struct proc *p)
{
    if (!p->type_count[KAT_REC_FORK] && !p->type_count[KAT_REC_CHILD_EXIT])
        return;
    puts("  children:");
    text_records(p, KAT_REC_FORK, text_child);
    text_records(p, KAT_REC_CHILD_EXIT, text_child_exit);
}

static void text_exec(const struct proc *p, const void *body)
{
    const struct kat_exec_rec *e = body;
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

static void text_execs(struct proc *p)
{
    if (!p->type_count[KAT_REC_EXEC])
        return;
    puts("  execs:");
    text_records(p, KAT_REC_EXEC, text_exec);
}

static void text_health(const struct proc *p, const void *body)
{
    const struct kat_health_rec *hr = body;
    const char *code = kat_health_code_name(hr->code);
    if (code)
        printf("    %-20s", code);
    else
        printf("    code_%-15" PRIu32, hr->code);
    printf(" %" PRId64, hr->value);
    put_optional_id(p, "  ", hr->detail_string, "");
    putchar('\n');
}

static void text_device(const struct proc *p, const void *body)
{
    const struct kat_device_rec *dv = body;
    printf("  device %" PRIu32 ": ", dv->device_id);
    put_id(p, dv->name_string);
    printf(" (sm_%" PRIu32 "%" PRIu32 ", %" PRIu32 " SMs, %" PRIu64 " MiB)\n", dv->cc_major,
           dv->cc_minor, dv->multiprocessors, dv->global_memory_bytes >> 20);
}

/* The last VERSIONS record, kept while the trace is read. */
static void text_versions(const struct proc *p)
{
    if (!p->has_versions)
        return;
    printf("  versions: driver %" PRId32 ", runtime %" PRId32 ", cupti %" PRIu32
           " (built against %" PRIu32 "), tool ",
           p->versions.driver_version, p->versions.runtime_version,
           p->versions.cupti_version, p->versions.cupti_header_version);
    put_id(p, p->versions.tool_version_string);
    putchar('\n');
}

static void text_foreign_cupti_call(const struct proc *p, const void *body)
{
    const struct kat_foreign_cupti_rec *fc = body;
    fputs("    ", stdout);
    put_id(p, fc->function_string);
    printf("(%" PRId64 ") = %" PRId32 " from ", fc->argument, fc->result);
    put_id(p, fc->caller_string);
    putchar('\n');
}

static void text_foreign_cupti(struct proc *p)
{
    if (!p->type_count[KAT_REC_FOREIGN_CUPTI])
        return;
    printf("  the workload called CUPTI itself: %" PRIu64 " calls\n",
           p->type_count[KAT_REC_FOREIGN_CUPTI]);
    text_records(p, KAT_REC_FOREIGN_CUPTI, text_foreign_cupti_call);
}

/* One block per process; a section only for what the trace holds. */
void dump_text_process(struct dump *d, struct proc *p)
{
    text_identity(d, p);
    text_counts(p);
    text_counted(p, "vendor calls", KAT_REC_VENDOR_CALL, text_vendor_call);
    text_apis(p);
    text_counted(p, "modules", KAT_REC_MODULE, text_module);
    text_counted(p, "libraries", KAT_REC_LIBRARY, text_library);
    text_counted(p, "timing calls", KAT_REC_TIMING_CALL, text_timing_call);
    text_counted(p, "timing symbols", KAT_REC_TIMING_SYMBOL, text_timing_symbol);
    text_syncs(p);
    text_counted(p, "nvtx", KAT_REC_NVTX, text_nvtx);
    text_threads(p);
    text_children(p);
    text_execs(p);
    text_counted(p, "health", KAT_REC_HEALTH, text_health);
    text_records(p, KAT_REC_DEVICE, text_device);
    text_versions(p);
    text_foreign_cupti(p);
}

void dump_text_header(const struct dump *d)
{
    struct kat_session *s = d->session;
    printf("session %s\n", kat_session_dir(s));
    for (size_t i = 0; i < kat_session_info_count(s); i++) {
        const char *v = kat_session_info_value(s, i);
        printf("  %s: ", kat_session_info_key(s, i));
        human_text(stdout, v, strlen(v));
        putchar('\n');
    }
    printf("  traces: %zu\n", kat_session_trace_count(s));
}

