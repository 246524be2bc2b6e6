/*
 * dump_json.c - `kaudit dump --json`: one JSON document (format "kaudit-dump",
 * version 1; schema in docs/session-format.md, "kaudit dump"), one process per
 * line.  Written with session/json_writer.h (libc only: dump builds on the
 * GPU machine).
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "dump.h"
#include "json_writer.h"
#include "toolbox.h"

/* Shorthands for the one writer of this document (session/json_writer.h). */
static struct kat_json J;
#define jw_obj(key) kat_json_open(&J, (key), '{')
#define jw_obj_end() kat_json_close(&J, '}')
#define jw_arr(key) kat_json_open(&J, (key), '[')
#define jw_arr_end() kat_json_close(&J, ']')
#define jw_open_line(bracket) kat_json_open_line(&J, (bracket))
#define jw_u64(key, v) kat_json_u64(&J, (key), (v))
#define jw_i64(key, v) kat_json_i64(&J, (key), (v))
#define jw_bool(key, v) kat_json_bool(&J, (key), (v))
#define jw_null(key) kat_json_null(&J, (key))
#define jw_strn(key, s, n) kat_json_strn(&J, (key), (s), (n))
#define jw_str(key, s) kat_json_str(&J, (key), (s))
#define jw_double(key, v) kat_json_double(&J, (key), (v))

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
            jw_str("direction", kat_conv_direction_name((uint32_t)c->direction));
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

/* ---- the process's identity, its end and its parent's view -------------- */

static void json_start(const struct proc *p)
{
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
}

static void json_end(const struct proc *p)
{
    if (!p->has_end) {
        jw_null("end");
        return;
    }
    jw_obj("end");
    jw_str("kind", kat_end_kind_name(p->end.kind));
    if (p->end.flags & KAT_END_FLAG_STATUS_KNOWN)
        jw_i64("status", p->end.status);
    else
        jw_null("status");
    jw_u64("time_ns", p->end.time_ns);
    jw_u64("records_written", p->end.records_written);
    jw_u64("records_lost", p->end.records_lost);
    jw_obj_end();
}

static void json_parent_saw(const struct child_exit *seen)
{
    if (!seen) {
        jw_null("parent_saw");
        return;
    }
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
}

/* file, pid, ..., parent_saw: what the trace and the session say of the process. */
static void json_identity(const struct dump *d, const struct proc *p)
{
    const struct kat_file_header *h = kat_trace_header(p->t);
    jw_str("file", p->file);
    jw_u64("pid", proc_pid(p));
    jw_u64("ppid", proc_ppid(p));
    jw_str("origin", kat_origin_name(proc_origin(p)));
    jw_u64("start_ns", h->start_realtime_ns);
    json_start(p);
    jw_bool("complete", kat_trace_complete(p->t));
    if (p->read_failed)
        jw_str("read_error", p->error);
    else
        jw_null("read_error");
    json_end(p);
    const char *next = p->has_end && p->end.kind == KAT_END_EXEC ? dump_next_image(d, p->index, proc_pid(p)) : NULL;
    if (next)
        jw_str("next_image", next);
    else
        jw_null("next_image");
    json_parent_saw(dump_parent_saw(d, p->index, proc_pid(p), h->start_realtime_ns));
}

static void json_counts(const struct proc *p)
{
    jw_obj("counts");
    jw_u64("kernels", p->type_count[KAT_REC_KERNEL]);
    jw_u64("kernels_in_vendor_window", p->ix.n_window);
    jw_u64("api_calls", p->type_count[KAT_REC_API]);
    jw_u64("vendor_calls", p->type_count[KAT_REC_VENDOR_CALL]);
    jw_u64("memcpy", p->type_count[KAT_REC_MEMCPY]);
    jw_u64("memset", p->type_count[KAT_REC_MEMSET]);
    jw_u64("sync", p->type_count[KAT_REC_SYNC]);
    jw_u64("modules", p->type_count[KAT_REC_MODULE]);
    jw_obj_end();
}

/* ---- one object per record ------------------------------------------------ */

/* The fields of one record (its body), inside the object json_records opens. */
typedef void (*json_fields_fn)(const struct proc *p, const void *body);

/* key: an array with one object per record of `type`, in file order. */
static void json_records(struct proc *p, const char *key, uint16_t type, json_fields_fn fields)
{
    struct kat_record r;
    jw_arr(key);
    pass_begin(p);
    while (pass_next(p, &r, type)) {
        jw_obj(NULL);
        fields(p, r.body);
        jw_obj_end();
    }
    jw_arr_end();
}

static void json_i64_triple(const char *key, const int32_t v[3])
{
    jw_arr(key);
    for (int i = 0; i < 3; i++)
        jw_i64(NULL, v[i]);
    jw_arr_end();
}

static void json_kernel(const struct proc *p, const void *body)
{
    const struct kat_kernel_rec *k = body;
    uint64_t call = kat_trace_index_vendor_call_of(&p->ix, k->correlation_id);
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
    json_i64_triple("grid", k->grid);
    json_i64_triple("block", k->block);
    jw_u64("registers", k->registers);
    jw_i64("static_shared", k->static_shared);
    jw_i64("dynamic_shared", k->dynamic_shared);
    jw_u64("graph_id", k->graph_id);
}

static void json_vendor_call(const struct proc *p, const void *body)
{
    const struct kat_vendor_call_rec *v = body;
    jw_u64("call_id", v->call_id);
    jw_strn("api", S(p, v->api_string), SL(p, v->api_string));
    jw_str("library", kat_vendor_library_name(v->library));
    json_string_id(p, "caller", v->caller_string);
    jw_u64("thread_id", v->thread_id);
    jw_u64("enter_ns", v->enter_ns);
    jw_u64("exit_ns", v->exit_ns);
    jw_u64("depth", v->depth);
    jw_i64("status", v->status);
    jw_str("work_class", kat_work_class_name(v->work_class));
    jw_u64("output_address", v->output_address);
    jw_u64("output_bytes", v->output_bytes);
    jw_u64("handle", v->handle);
    if (v->summary_known)
        json_vendor_op(v);
    const struct kat_index_kernel *first;
    size_t count = kat_trace_index_window(&p->ix, v->call_id, &first);
    jw_arr("kernel_correlation_ids");
    for (size_t i = 0; i < count; i++)
        jw_u64(NULL, first[i].correlation_id);
    jw_arr_end();
}

/* The API calls are counted while the trace is read, not kept as records. */
static void json_apis(struct proc *p)
{
    dump_sort_apis(p);
    jw_arr("apis");
    for (size_t i = 0; i < p->api_count; i++) {
        const struct api_count *a = &p->apis[i];
        jw_obj(NULL);
        if (a->name_string)
            jw_strn("name", S(p, a->name_string), SL(p, a->name_string));
        else
            jw_null("name");
        jw_str("domain", kat_api_domain_name(a->domain));
        jw_u64("cbid", a->cbid);
        jw_u64("count", a->count);
        jw_obj_end();
    }
    jw_arr_end();
}

static void json_module(const struct proc *p, const void *body)
{
    const struct kat_module_rec *m = body;
    jw_u64("module_id", m->module_id);
    jw_u64("context_id", m->context_id);
    jw_u64("size", m->size);
    jw_digest("digest", m->digest_lo, m->digest_hi);
    json_string_id(p, "loader", m->loader_string);
    jw_u64("thread_id", m->thread_id);
    jw_u64("vendor_call_id", m->vendor_call_id);
    jw_str("kind", kat_image_kind_name(m->image_kind));
    jw_u64("time_ns", m->time_ns);
}

static void json_library(const struct proc *p, const void *body)
{
    const struct kat_library_rec *l = body;
    json_string_id(p, "path", l->path_string);
    json_string_id(p, "soname", l->soname_string);
    jw_u64("base_address", l->base_address);
    jw_u64("size", l->file_size);
    jw_digest("digest", l->digest_lo, l->digest_hi);
    jw_bool("duplicate", l->duplicate != 0);
    jw_u64("time_ns", l->time_ns);
}

static void json_timing_call(const struct proc *p, const void *body)
{
    const struct kat_timing_call_rec *c = body;
    jw_str("api", kat_timing_api_name(c->api));
    json_string_id(p, "name", c->name_string);
    jw_str("domain", kat_api_domain_name(c->domain));
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
}

static void json_timing_symbol(const struct proc *p, const void *body)
{
    const struct kat_timing_symbol_rec *s = body;
    json_string_id(p, "symbol", s->symbol_string);
    json_string_id(p, "object", s->object_string);
    jw_u64("address", s->address);
    jw_str("phase", kat_symbol_phase_name(s->phase));
    jw_u64("time_ns", s->time_ns);
}

static void json_cuda_event(const struct proc *p, const void *body)
{
    const struct kat_cuda_event_rec *e = body;
    (void)p;
    jw_u64("correlation_id", e->correlation_id);
    jw_u64("context_id", e->context_id);
    jw_u64("stream_id", e->stream_id);
    jw_u64("event_id", e->event_id);
    jw_u64("device_id", e->device_id);
    jw_u64("device_timestamp_ns", e->device_timestamp_ns);
}

static void json_sync(const struct proc *p, const void *body)
{
    const struct kat_sync_rec *s = body;
    (void)p;
    jw_str("type", kat_sync_type_name(s->type));
    jw_u64("correlation_id", s->correlation_id);
    jw_u64("context_id", s->context_id);
    jw_u64("stream_id", s->stream_id);
    jw_u64("cuda_event_id", s->cuda_event_id);
    jw_u64("start_ns", s->start_ns);
    jw_u64("end_ns", s->end_ns);
}

static void json_nvtx(const struct proc *p, const void *body)
{
    const struct kat_nvtx_rec *n = body;
    jw_str("kind", kat_nvtx_kind_name(n->kind));
    jw_u64("thread_id", n->thread_id);
    jw_u64("range_id", n->range_id);
    json_string_id(p, "message", n->message_string);
    json_string_id(p, "domain", n->domain_string);
    jw_u64("time_ns", n->time_ns);
}

static void json_thread(const struct proc *p, const void *body)
{
    const struct kat_thread_rec *t = body;
    jw_str("event", kat_thread_event_name(t->event));
    jw_u64("thread_id", t->thread_id);
    jw_u64("token", t->token);
    jw_u64("start_routine", t->start_routine);
    json_string_id(p, "routine_object", t->routine_object_string);
    jw_u64("time_ns", t->time_ns);
}

static void json_child(const struct proc *p, const void *body)
{
    const struct kat_fork_rec *f = body;
    jw_u64("pid", f->child_pid);
    jw_str("kind", kat_fork_kind_name(f->kind));
    json_string_id(p, "path", f->path_string);
    json_argv("argv", S(p, f->argv_string), SL(p, f->argv_string));
    jw_u64("time_ns", f->time_ns);
}

static void json_child_exit(const struct proc *p, const void *body)
{
    const struct kat_child_exit_rec *c = body;
    (void)p;
    jw_u64("pid", c->child_pid);
    jw_i64("wait_status", c->wait_status);
    jw_u64("time_ns", c->time_ns);
}

static void json_exec(const struct proc *p, const void *body)
{
    const struct kat_exec_rec *e = body;
    json_string_id(p, "path", e->path_string);
    json_argv("argv", S(p, e->argv_string), SL(p, e->argv_string));
    jw_bool("reinjected", e->reinjected != 0);
    jw_i64("error", e->error);
    jw_u64("time_ns", e->time_ns);
}

static void json_health(const struct proc *p, const void *body)
{
    const struct kat_health_rec *hr = body;
    const char *code = kat_health_code_name(hr->code);
    if (code) {
        jw_str("code", code);
    } else {
        /* a code newer than this reader: its number, still one string */
        char buf[32];
        snprintf(buf, sizeof(buf), "code_%u", hr->code);
        jw_str("code", buf);
    }
    json_string_id(p, "detail", hr->detail_string);
    jw_i64("value", hr->value);
    jw_u64("time_ns", hr->time_ns);
}

static void json_device(const struct proc *p, const void *body)
{
    const struct kat_device_rec *dv = body;
    char uuid[33];
    kat_hex(dv->uuid, 16, uuid);
    jw_u64("device_id", dv->device_id);
    json_string_id(p, "name", dv->name_string);
    jw_u64("cc_major", dv->cc_major);
    jw_u64("cc_minor", dv->cc_minor);
    jw_u64("multiprocessors", dv->multiprocessors);
    jw_u64("global_memory_bytes", dv->global_memory_bytes);
    jw_str("uuid", uuid);
}

/* The last VERSIONS record, kept while the trace is read. */
static void json_versions(const struct proc *p)
{
    if (!p->has_versions) {
        jw_null("versions");
        return;
    }
    jw_obj("versions");
    jw_i64("driver_version", p->versions.driver_version);
    jw_i64("runtime_version", p->versions.runtime_version);
    jw_u64("cupti_version", p->versions.cupti_version);
    jw_u64("cupti_header_version", p->versions.cupti_header_version);
    json_string_id(p, "tool_version", p->versions.tool_version_string);
    jw_obj_end();
}

static void json_foreign_cupti(const struct proc *p, const void *body)
{
    const struct kat_foreign_cupti_rec *fc = body;
    json_string_id(p, "function", fc->function_string);
    json_string_id(p, "caller", fc->caller_string);
    jw_i64("result", fc->result);
    jw_u64("thread_id", fc->thread_id);
    jw_i64("argument", fc->argument);
    jw_u64("time_ns", fc->time_ns);
}

static void json_clock_sync(const struct proc *p, const void *body)
{
    const struct kat_clock_sync_rec *c = body;
    (void)p;
    jw_u64("realtime_ns", c->realtime_ns);
    jw_u64("monotonic_ns", c->monotonic_ns);
    jw_u64("cupti_ns", c->cupti_ns);
}

/* One line of the "processes" array; the keys in the order of the schema. */
void dump_json_process(struct dump *d, struct proc *p)
{
    jw_open_line('{');
    json_identity(d, p);
    json_counts(p);
    json_records(p, "kernels", KAT_REC_KERNEL, json_kernel);
    json_records(p, "vendor_calls", KAT_REC_VENDOR_CALL, json_vendor_call);
    json_apis(p);
    json_records(p, "modules", KAT_REC_MODULE, json_module);
    json_records(p, "libraries", KAT_REC_LIBRARY, json_library);
    json_records(p, "timing_calls", KAT_REC_TIMING_CALL, json_timing_call);
    json_records(p, "timing_symbols", KAT_REC_TIMING_SYMBOL, json_timing_symbol);
    json_records(p, "cuda_events", KAT_REC_CUDA_EVENT, json_cuda_event);
    json_records(p, "sync", KAT_REC_SYNC, json_sync);
    json_records(p, "nvtx", KAT_REC_NVTX, json_nvtx);
    json_records(p, "threads", KAT_REC_THREAD, json_thread);
    json_records(p, "children", KAT_REC_FORK, json_child);
    json_records(p, "child_exits", KAT_REC_CHILD_EXIT, json_child_exit);
    json_records(p, "execs", KAT_REC_EXEC, json_exec);
    json_records(p, "health", KAT_REC_HEALTH, json_health);
    json_records(p, "devices", KAT_REC_DEVICE, json_device);
    json_versions(p);
    json_records(p, "foreign_cupti", KAT_REC_FOREIGN_CUPTI, json_foreign_cupti);
    json_records(p, "clock_sync", KAT_REC_CLOCK_SYNC, json_clock_sync);
    jw_obj_end();
}


void dump_json_header(const struct dump *d)
{
    struct kat_session *s = d->session;
    kat_json_init(&J, stdout);
    jw_obj(NULL);
    jw_str("format", "kaudit-dump");
    jw_u64("version", 1);
    jw_str("dir", kat_session_dir(s));
    jw_obj("session");
    for (size_t i = 0; i < kat_session_info_count(s); i++)
        jw_str(kat_session_info_key(s, i), kat_session_info_value(s, i));
    jw_obj_end();
    jw_arr("processes");
}

void dump_json_trailer(const struct dump *d)
{
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

