/*
 * index.c - pass 1: one trace into the per-process index (struct ka_proc,
 * evidence.h).
 *
 * Everything but the kernels is read and kept: API records, vendor calls,
 * NVTX phases, modules, threads, timing calls and symbols, libraries.  Pass 2
 * (kernels.c) joins each kernel to them, so nothing here grows with the
 * number of kernels.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis_internal.h"

static char *dup_trace_string(const struct kat_trace *t, uint32_t id)
{
    return strdup(kat_trace_string(t, id));
}

static int phase_cmp(const void *x, const void *y, void *base)
{
    const struct ka_phase *phases = base;
    const struct ka_phase *a = &phases[*(const uint32_t *)x], *b = &phases[*(const uint32_t *)y];
    if (a->tid != b->tid)
        return a->tid < b->tid ? -1 : 1;
    if (a->start_ns != b->start_ns)
        return a->start_ns < b->start_ns ? -1 : 1;
    /* same start: push order, so that a child sorts after its parent */
    return *(const uint32_t *)x < *(const uint32_t *)y ? -1 : 1;
}

static int module_cmp(const void *x, const void *y)
{
    const struct ka_module *a = x, *b = y;
    return a->time_ns < b->time_ns ? -1 : a->time_ns > b->time_ns;
}


struct nvtx_open {
    uint32_t tid;
    uint32_t message;
    uint32_t domain;
    int32_t phase;              /* index of the phase this range opened, -1 if it is no phase */
    int32_t op;                 /* index of the operator range it is (operators.c), -1 if none */
    int probe_baseline;         /* the runner's "kaudit:probe baseline" range (docs/audit.md, "Causal probe") */
    uint64_t start_ns;
};

/* Open a phase on tid (its end is set when the range closes); returns its index. */
static int32_t open_phase(struct ka_proc *p, uint32_t tid, enum ka_party party, int python, int32_t parent,
                          uint64_t s)
{
    if (GROW(p->phases, p->n_phases, p->cap_phases))
        return -1;
    p->phases[p->n_phases] = (struct ka_phase){ .tid = tid, .party = (uint8_t)party, .python = (uint8_t)python,
                                                .parent = parent, .start_ns = s, .end_ns = UINT64_MAX };
    p->phase_marks = 1;
    return (int32_t)p->n_phases++;
}

static void note_mark(struct ka_proc *p, const char *msg, int python)
{
    static const char operators[] = "operators ";
    if (python && !strncmp(msg, operators, sizeof operators - 1)) {
        /* the operator sampler's state (not the provenance status: python_status stays) */
        free(p->python_operators);
        p->python_operators = strdup(msg + sizeof operators - 1);
        return;
    }
    if (python) {
        free(p->python_status);
        p->python_status = strdup(msg);
        return;
    }
    static const char reported[] = "kaudit:reported_ms ";
    static const char guard[] = "kaudit:guard-changed ";
    if (!strncmp(msg, reported, sizeof reported - 1)) {
        char *end;
        double v = strtod(msg + sizeof reported - 1, &end);
        if (end != msg + sizeof reported - 1 && !GROW(p->reported_ms, p->n_reported, p->cap_reported))
            p->reported_ms[p->n_reported++] = v;
    } else if (!strncmp(msg, guard, sizeof guard - 1)) {
        if (!GROW(p->guard_changed, p->n_guard, p->cap_guard))
            p->guard_changed[p->n_guard++] = strdup(msg + sizeof guard - 1);
    }
}

/* Health records that limit what the trace can show. */
static void note_health(struct ka_run *run, struct ka_proc *p, const struct kat_trace *t,
                        const struct kat_health_rec *h)
{
    const char *detail = kat_trace_string(t, h->detail_string);
    const char *name = kat_health_code_name(h->code);
    int problem = 0;
    switch (h->code) {
    case KAT_HEALTH_CUPTI_NOT_FOUND:
    case KAT_HEALTH_CUPTI_ENABLE_FAILED:
    case KAT_HEALTH_CUPTI_UNSUPPORTED:
    case KAT_HEALTH_FOREIGN_SUBSCRIBER:
    case KAT_HEALTH_CALLBACK_OVERRIDDEN:
        problem = 1;
        break;
    case KAT_HEALTH_CUPTI_SUBSCRIBE:
        problem = h->value != 0;
        break;
    case KAT_HEALTH_API_RECORD_POLICY:
        problem = h->value < 0;         /* no API records: no vendor windows */
        break;
    case KAT_HEALTH_ACTIVITY_KINDS:
    case KAT_HEALTH_BENCH_CONTROL:      /* recording may have been paused */
        problem = h->value > 0;
        break;
    case KAT_HEALTH_CUPTI_DROPPED:
    case KAT_HEALTH_BUFFER_LOST:
    case KAT_HEALTH_WRITER_FULL:
        problem = h->value > 0;
        break;
    case KAT_HEALTH_SYMBOL_UNRESOLVED:
        problem = 1;
        break;
    case KAT_HEALTH_CUPTI_CLOCK:
        /* GPU times left in CUPTI's own clock: no comparison with a host time holds */
        problem = h->value == 0;
        break;
    default:
        break;
    }
    if (!problem)
        return;
    run->facts.health_problem = 1;
    struct ka_finding *x =
        ka_add_finding(&run->findings, KA_AXIS_IMPLEMENTATION, KA_FINDING_UNRESOLVED, "tool-health", p->file,
                       h->time_ns, "tool health: %s (value %lld%s%s): evidence in this process may be incomplete",
                       name ? name : "unknown", (long long)h->value, detail[0] ? ", " : "", detail);
    ka_field_str(x, "health", name ? name : "unknown");
    ka_field_num(x, "value", (double)h->value);
    if (detail[0])
        ka_field_str(x, "detail", detail);
}

/* A record that ties a correlation id to a vendor call (trace_index.h): into
 * the process's window index, and the highest such id kept (kernels above it
 * need no lookup). */
static void note_vendor_tie(struct ka_proc *p, const struct kat_record *r)
{
    uint32_t correlation_id;
    uint64_t call_id;
    if (kat_record_vendor_tie(r, &correlation_id, &call_id) && correlation_id
        && kat_trace_index_add(&p->calls_index, r) == 0 && correlation_id > p->max_ext_correlation)
        p->max_ext_correlation = correlation_id;
}

/* One pass over a trace: what it keeps besides the process index (the NVTX
 * ranges still open, the thread starts to pair with their creations) and
 * the caller's arrays of timing calls and event records. */
struct index_pass {
    struct ka_run *run;
    const struct ka_contract *c;
    struct kat_trace *t;
    struct ka_proc *p;
    struct nvtx_open *open;
    size_t n_open, cap_open;
    uint32_t python_domain;
    struct ka_timing_rec **timing;
    size_t *n_timing, cap_timing;
    struct ka_event_rec **events;
    size_t *n_events, cap_events;
    struct { uint64_t token; uint32_t tid; uint64_t t; } *starts;
    size_t n_starts, cap_starts;
};

static void on_process_start(struct index_pass *x, const struct kat_process_start_rec *s)
{
    struct ka_proc *p = x->p;
    const struct kat_trace *t = x->t;
    free(p->exe);
    p->exe = dup_trace_string(t, s->exe_string);
    const char *argv = kat_trace_string(t, s->argv_string);
    uint32_t len = kat_trace_string_length(t, s->argv_string);
    free(p->argv0);
    p->argv0 = strdup(argv);
    free(p->argv);
    p->argv = malloc((size_t)len + 1);
    if (p->argv) {
        for (uint32_t i = 0; i < len; i++)
            p->argv[i] = argv[i] ? argv[i] : ' ';
        p->argv[len] = 0;
    }
    p->start_ns = s->time_ns;
    /* the reference's process is the command kaudit run started (a process the
       candidate starts could name the runner in its arguments, never be that pid) */
    const char *ref = x->run->opt->reference_process;
    long command = x->run->command_pid;
    p->reference_untrusted = ref && *ref && (!(p->argv && strstr(p->argv, ref)) || (command && command != (long)p->pid));
}

static void on_process_end(struct index_pass *x, const struct kat_process_end_rec *e)
{
    struct ka_run *run = x->run;
    struct ka_proc *p = x->p;
    p->end_known = 1;
    p->end_kind = e->kind;
    p->status = e->status;
    p->status_known = (e->flags & KAT_END_FLAG_STATUS_KNOWN) != 0;
    if (e->records_lost) {
        run->facts.health_problem = 1;
        ka_field_u64(ka_add_finding(&run->findings, KA_AXIS_IMPLEMENTATION, KA_FINDING_UNRESOLVED,
                                    "records-lost", p->file, e->time_ns,
                                    "the trace writer lost %llu records (no space)",
                                    (unsigned long long)e->records_lost),
                     "records_lost", e->records_lost);
    }
}

/* What a parent's wait() saw: the status of a child whose own trace may lack it. */
static void on_child_exit(struct index_pass *x, const struct kat_child_exit_rec *e)
{
    struct ka_run *run = x->run;
    if (!GROW(run->facts.child_exits, run->facts.n_child_exits, run->facts.cap_child_exits)) {
        struct ka_child_exit *ce = &run->facts.child_exits[run->facts.n_child_exits++];
        ce->pid = e->child_pid;
        ce->wait_status = e->wait_status;
        ce->parent = strdup(x->p->file);
    }
}

static void on_fork(struct index_pass *x, const struct kat_fork_rec *f)
{
    struct ka_run *run = x->run;
    if (!GROW(run->facts.child_starts, run->facts.n_child_starts, run->facts.cap_child_starts)) {
        struct ka_child_start *cs = &run->facts.child_starts[run->facts.n_child_starts++];
        cs->pid = f->child_pid;
        cs->kind = f->kind;
        cs->parent = strdup(x->p->file);
        cs->time_ns = f->time_ns;
    }
}

static void on_library(struct index_pass *x, const struct kat_library_rec *l)
{
    struct ka_proc *p = x->p;
    const struct kat_trace *t = x->t;
    if (!GROW(p->libs, p->n_libs, p->cap_libs)) {
        const char *so = kat_trace_string(t, l->soname_string);
        p->libs[p->n_libs].soname = strdup(so[0] ? so : kat_base_name(kat_trace_string(t, l->path_string)));
        p->libs[p->n_libs].lo = l->digest_lo;
        p->libs[p->n_libs++].hi = l->digest_hi;
    }
}

static void on_module(struct index_pass *x, const struct kat_module_rec *m)
{
    struct ka_proc *p = x->p;
    if (GROW(p->modules, p->n_modules, p->cap_modules))
        return;
    struct ka_module *km = &p->modules[p->n_modules++];
    km->time_ns = m->time_ns;
    km->tid = m->thread_id;
    km->loader = dup_trace_string(x->t, m->loader_string);
    km->digest_lo = m->digest_lo;
    km->digest_hi = m->digest_hi;
    km->size = m->size;
    km->loader_kind = ka_loader_kind(x->c, km->loader);
    /* built in this run (built_objects.c): the candidate's, wherever it was built */
    if (km->loader_kind == KA_LOADER_OTHER && ka_built_object(x->run, km->loader))
        km->loader_kind = KA_LOADER_CANDIDATE;
    if (km->loader_kind == KA_LOADER_CANDIDATE || p->candidate_process)
        x->run->facts.candidate_modules++;
}

static void on_api(struct index_pass *x, const struct kat_record *r)
{
    struct ka_proc *p = x->p;
    const struct kat_api_rec *ap = r->body;
    if (!ap->correlation_id)
        return;
    note_vendor_tie(p, r);     /* format 2: a call inside a vendor call names it */
    if (GROW(p->apis, p->n_apis, p->cap_apis))
        return;
    p->apis[p->n_apis++] = (struct ka_api){ .tid = ap->thread_id, .correlation_id = ap->correlation_id,
                                            .start_ns = ap->start_ns, .end_ns = ap->end_ns,
                                            .launch = strstr(kat_trace_string(x->t, ap->name_string), "Launch") != NULL };
    x->run->a->api_records++;
}

static void on_vendor_call(struct index_pass *x, const struct kat_record *r)
{
    struct ka_proc *p = x->p;
    const struct kat_vendor_call_rec *v = r->body;
    if (GROW(p->vcalls, p->n_vcalls, p->cap_vcalls))
        return;
    kat_trace_index_add(&p->calls_index, r);
    struct ka_vcall *vc = &p->vcalls[p->n_vcalls++];
    memset(vc, 0, sizeof *vc);
    vc->rec = *v;
    vc->api = dup_trace_string(x->t, v->api_string);
    vc->caller = dup_trace_string(x->t, v->caller_string);
    vc->work = ka_vendor_call_work(v, vc->api, &vc->cls);
    vc->caller_is_candidate = ka_is_candidate_object(x->c, vc->caller) || ka_built_object(x->run, vc->caller);
    vc->caller_is_framework = ka_is_framework_object(vc->caller);
    x->run->a->vendor_calls++;
}

/* An operator range pushed on tid (operators.c): its index, nested in the
 * innermost operator open on the thread, owned by the party whose phase is
 * open around it (a candidate phase anywhere on the stack wins, origin.c);
 * -1 when msg names no operator. */
static int32_t open_operator(struct index_pass *x, const struct kat_nvtx_rec *nv, uint32_t tid)
{
    struct ka_proc *p = x->p;
    const char *msg = kat_trace_string(x->t, nv->message_string);
    if (!ka_is_operator_message(msg))
        return -1;
    int32_t outer = -1;
    for (size_t i = x->n_open; i-- > 0;)
        if (x->open[i].tid == tid && x->open[i].op >= 0) {
            outer = x->open[i].op;
            break;
        }
    /* whose phase it opened in: a candidate phase anywhere on the stack wins (origin.c) */
    int cand = 0, ref = 0;
    for (size_t i = 0; i < x->n_open; i++)
        if ((x->open[i].tid == tid || x->open[i].tid == 0) && x->open[i].phase >= 0) {
            cand |= p->phases[x->open[i].phase].party == KA_PARTY_CANDIDATE;
            ref |= p->phases[x->open[i].phase].party == KA_PARTY_REFERENCE;
        }
    enum ka_party owner = cand ? KA_PARTY_CANDIDATE : ref ? KA_PARTY_REFERENCE : KA_PARTY_UNKNOWN;
    owner = ka_trusted_party(p, owner, nv->time_ns);
    return ka_operator_open(p, tid, nv->message_string, ka_class_of_operator(msg), owner, outer, nv->time_ns);
}

/* The runner pushes "kaudit:weak" once, after the audit's work, on its own
   thread (the one that opens the parties' phases) with no phase open.  A
   push inside a phase, or on another thread, is the candidate's (in its
   call, at import, from a thread it started): it would leave the audit's
   own later work out of the evidence, so it is not the weak phase; of the
   pushes that qualify the last is the runner's (a finalizer of the
   candidate's running between phases comes before it).  And only where an
   audit ran weak surfaces (weak_phase_expected): elsewhere the range is a
   program's. */
static void note_weak_push(struct index_pass *x, const struct kat_nvtx_rec *nv, uint32_t tid)
{
    struct ka_proc *p = x->p;
    int in_phase = 0, runner_thread = 0;
    for (size_t i = 0; i < x->n_open; i++)
        in_phase |= x->open[i].phase >= 0 && !p->phases[x->open[i].phase].python;
    for (size_t i = 0; i < p->n_phases; i++)
        runner_thread |= p->phases[i].tid == tid && !p->phases[i].python;
    /* in a process not the reference's (the candidate's), not before the runner
       asked for the surfaces: a push of the candidate's own before it is no phase */
    uint64_t asked = x->run->weak_requested_ns;
    if (p->reference_untrusted && !(asked && nv->time_ns >= asked))
        return;
    if (!in_phase && runner_thread)
        p->weak_start_ns = nv->time_ns;
}

/* A push or a start: a range opens, a phase when it names a party, an
 * operator range when it names an operator. */
static void nvtx_open_range(struct index_pass *x, const struct kat_nvtx_rec *nv, int python)
{
    struct ka_proc *p = x->p;
    const struct kat_trace *t = x->t;
    if (GROW(x->open, x->n_open, x->cap_open))
        return;
    /* start/end ranges are process-wide: tid 0 */
    uint32_t tid = nv->kind == KAT_NVTX_PUSH ? nv->thread_id : 0;
    enum ka_party party = ka_phase_party(x->c, kat_trace_string(t, nv->message_string), python);
    int32_t parent = -1;
    for (size_t i = x->n_open; i-- > 0;)
        if (x->open[i].tid == tid && x->open[i].phase >= 0) {
            parent = x->open[i].phase;
            break;
        }
    int32_t phase = party != KA_PARTY_UNKNOWN ? open_phase(p, tid, party, python, parent, nv->time_ns) : -1;
    int32_t op = -1;
    if (!python && party == KA_PARTY_UNKNOWN && nv->kind == KAT_NVTX_PUSH)
        op = open_operator(x, nv, tid);
    if (x->run->opt->weak_phase_expected && !python && nv->kind == KAT_NVTX_PUSH &&
        !strcmp(kat_trace_string(t, nv->message_string), "kaudit:weak"))
        note_weak_push(x, nv, tid);
    int probe_baseline = !python && nv->kind == KAT_NVTX_PUSH &&
                         !strcmp(kat_trace_string(t, nv->message_string), "kaudit:probe baseline");
    if (probe_baseline && p->probe_windows++ == 0)
        p->probe_start_ns = nv->time_ns;
    x->open[x->n_open++] = (struct nvtx_open){ .tid = tid, .message = nv->message_string,
                                               .domain = nv->domain_string, .phase = phase, .op = op,
                                               .probe_baseline = probe_baseline, .start_ns = nv->time_ns };
}

/* A pop or an end: the range it closes ends its phase, operator range or
 * probe window. */
static void nvtx_close_range(struct index_pass *x, const struct kat_nvtx_rec *nv)
{
    struct ka_proc *p = x->p;
    struct nvtx_open *open = x->open;
    size_t n_open = x->n_open;
    /* pop: the innermost open push of this thread and domain; end: the oldest open range */
    uint32_t tid = nv->kind == KAT_NVTX_POP ? nv->thread_id : 0;
    size_t found = n_open;
    if (nv->kind == KAT_NVTX_POP) {
        for (size_t i = n_open; i-- > 0;)
            if (open[i].tid == tid && open[i].domain == nv->domain_string) {
                found = i;
                break;
            }
    } else {
        for (size_t i = 0; i < n_open; i++)
            if (open[i].tid == 0) {
                found = i;
                break;
            }
    }
    if (found == n_open)
        return;
    if (open[found].phase >= 0)
        p->phases[open[found].phase].end_ns = nv->time_ns;
    if (open[found].op >= 0)
        p->operators[open[found].op].end_ns = nv->time_ns;
    if (open[found].probe_baseline && !p->probe_end_ns)
        p->probe_end_ns = nv->time_ns;
    memmove(&open[found], &open[found + 1], (n_open - found - 1) * sizeof *open);
    x->n_open--;
}

/* The Python side saw a timing primitive change (text: what changed, after
 * "timing-replaced "): the candidate's when a candidate range is open on the
 * mark's thread, by record order. */
static void note_python_timing(struct index_pass *x, const struct kat_nvtx_rec *nv, const char *what)
{
    struct ka_proc *p = x->p;
    if (GROW(p->py_timing, p->n_py_timing, p->cap_py_timing))
        return;
    int cand = 0;
    for (size_t i = 0; i < x->n_open; i++)
        if ((x->open[i].tid == nv->thread_id || x->open[i].tid == 0) && x->open[i].phase >= 0 &&
            p->phases[x->open[i].phase].party == KA_PARTY_CANDIDATE)
            cand = 1;
    char *text = strdup(what);
    if (!text)
        return;
    /* " | beside CLASSES": the new object is a function defined beside these
     * watched classes (same namespace, same file): the candidate's when one
     * is a candidate symbol and none the reference's */
    int beside = 0;
    char *by = strstr(text, " | beside ");
    if (by) {
        *by = '\0';
        int cand_class = 0, ref_class = 0;
        for (char *name = by + strlen(" | beside "), *next; name && *name; name = next) {
            next = strchr(name, ',');
            if (next)
                *next++ = '\0';
            enum ka_party party = ka_phase_party(x->c, name, 1);
            cand_class |= party == KA_PARTY_CANDIDATE;
            ref_class |= party == KA_PARTY_REFERENCE;
        }
        beside = cand_class && !ref_class;
    }
    p->py_timing[p->n_py_timing++] = (struct ka_py_timing){
        .text = text, .time_ns = nv->time_ns, .candidate = cand, .beside_candidate = beside };
}

static void on_nvtx(struct index_pass *x, const struct kat_nvtx_rec *nv)
{
    const struct kat_trace *t = x->t;
    int python = x->python_domain && nv->domain_string == x->python_domain;
    if (!python && !x->python_domain && nv->domain_string &&
        !strcmp(kat_trace_string(t, nv->domain_string), "kaudit.python")) {
        x->python_domain = nv->domain_string;
        python = 1;
    }
    if (nv->kind == KAT_NVTX_PUSH || nv->kind == KAT_NVTX_START) {
        nvtx_open_range(x, nv, python);
    } else if (nv->kind == KAT_NVTX_POP || nv->kind == KAT_NVTX_END) {
        nvtx_close_range(x, nv);
    } else if (nv->kind == KAT_NVTX_MARK) {
        static const char replaced[] = "timing-replaced ";
        const char *msg = kat_trace_string(t, nv->message_string);
        if (python && !strncmp(msg, replaced, sizeof replaced - 1)) {
            /* not a status: python_status stays */
            note_python_timing(x, nv, msg + sizeof replaced - 1);
            return;
        }
        /* the runner's own mark (its process is analyzed first): the weak surfaces
           start in the candidate's process no earlier than this */
        if (!python && x->run->opt->reference_process && !x->p->reference_untrusted && !x->run->weak_requested_ns &&
            !strcmp(msg, "kaudit:weak requested"))
            x->run->weak_requested_ns = nv->time_ns;
        note_mark(x->p, msg, python);
    }
}

static void on_timing_call(struct index_pass *x, const struct kat_timing_call_rec *tc)
{
    struct ka_proc *p = x->p;
    if (GROW(*x->timing, *x->n_timing, x->cap_timing))
        return;
    (*x->timing)[(*x->n_timing)++].r = *tc;
    if (tc->api == KAT_TIMING_EVENT_ELAPSED && tc->status == 0 &&
        !GROW(p->elapsed_ms, p->n_elapsed, p->cap_elapsed))
        p->elapsed_ms[p->n_elapsed++] = tc->elapsed_ms;
}

static void on_cuda_event(struct index_pass *x, const struct kat_cuda_event_rec *e)
{
    if (GROW(*x->events, *x->n_events, x->cap_events))
        return;
    (*x->events)[(*x->n_events)++] = (struct ka_event_rec){ e->correlation_id, e->stream_id, e->device_timestamp_ns };
}

static void on_timing_symbol(struct index_pass *x, const struct kat_timing_symbol_rec *s)
{
    struct ka_proc *p = x->p;
    if (GROW(p->symbols, p->n_symbols, p->cap_symbols))
        return;
    struct ka_symbol *ks = &p->symbols[p->n_symbols++];
    ks->symbol = dup_trace_string(x->t, s->symbol_string);
    ks->object = dup_trace_string(x->t, s->object_string);
    ks->address = s->address;
    ks->phase = s->phase;
    ks->time_ns = s->time_ns;
}

static void on_thread(struct index_pass *x, const struct kat_thread_rec *th)
{
    struct ka_proc *p = x->p;
    if (th->event == KAT_THREAD_CREATE) {
        if (!GROW(p->threads, p->n_threads, p->cap_threads))
            p->threads[p->n_threads++] = (struct ka_thread_origin){
                .tid = 0, .creator_tid = th->thread_id, .create_ns = th->time_ns, .token = th->token };
    } else if (th->event == KAT_THREAD_START) {
        if (!GROW(x->starts, x->n_starts, x->cap_starts)) {
            x->starts[x->n_starts].token = th->token;
            x->starts[x->n_starts].tid = th->thread_id;
            x->starts[x->n_starts++].t = th->time_ns;
        }
    }
}

void ka_index_trace(struct ka_run *run, struct kat_trace *t, struct ka_proc *p, struct ka_timing_rec **timing,
                    size_t *n_timing, struct ka_event_rec **events, size_t *n_events)
{
    struct index_pass x = { .run = run, .c = run->c, .t = t, .p = p,
                            .timing = timing, .n_timing = n_timing, .events = events, .n_events = n_events };
    struct kat_record r;
    char err[512];
    int rc;
    while ((rc = kat_trace_next(t, &r, err, sizeof err)) == 1) {
        switch (r.type) {
        case KAT_REC_PROCESS_START: on_process_start(&x, r.body); break;
        case KAT_REC_PROCESS_END: on_process_end(&x, r.body); break;
        case KAT_REC_CHILD_EXIT: on_child_exit(&x, r.body); break;
        case KAT_REC_FORK: on_fork(&x, r.body); break;
        case KAT_REC_HEALTH: note_health(run, p, t, r.body); break;
        case KAT_REC_LIBRARY: on_library(&x, r.body); break;
        case KAT_REC_MODULE: on_module(&x, r.body); break;
        case KAT_REC_API: on_api(&x, &r); break;
        case KAT_REC_EXTERNAL_CORRELATION: note_vendor_tie(p, &r); break;
        case KAT_REC_VENDOR_CALL: on_vendor_call(&x, &r); break;
        case KAT_REC_NVTX: on_nvtx(&x, r.body); break;
        case KAT_REC_TIMING_CALL: on_timing_call(&x, r.body); break;
        case KAT_REC_CUDA_EVENT: on_cuda_event(&x, r.body); break;
        case KAT_REC_TIMING_SYMBOL: on_timing_symbol(&x, r.body); break;
        case KAT_REC_THREAD: on_thread(&x, r.body); break;
        default: break;
        }
    }
    if (rc < 0) {
        p->read_error = 1;
        run->facts.read_error = 1;
        ka_add_finding(&run->findings, KA_AXIS_IMPLEMENTATION, KA_FINDING_UNRESOLVED, "trace-unreadable", p->file, 0,
                       "the trace is malformed past a point and was read up to it: %s", err);
    }
    p->complete = kat_trace_complete(t);
    /* Ranges still open at the end of the trace keep end UINT64_MAX: they last until then. */
    free(x.open);
    /* Pair thread creations with their starts. */
    for (size_t i = 0; i < p->n_threads; i++)
        for (size_t j = 0; j < x.n_starts; j++)
            if (x.starts[j].token == p->threads[i].token) {
                p->threads[i].tid = x.starts[j].tid;
                break;
            }
    free(x.starts);
}

static int vcall_cmp(const void *x, const void *y)
{
    const struct ka_vcall *a = x, *b = y;
    return a->rec.call_id < b->rec.call_id ? -1 : a->rec.call_id > b->rec.call_id;
}

long ka_vcall_find(const struct ka_proc *p, uint64_t id)
{
    size_t lo = 0, hi = p->n_vcalls;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (p->vcalls[mid].rec.call_id < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < p->n_vcalls && p->vcalls[lo].rec.call_id == id ? (long)lo : -1;
}

/* correlation id -> API record: a direct table when the ids are dense (they are, from CUPTI). */
static void index_apis(struct ka_proc *p)
{
    uint32_t max = 0;
    for (size_t i = 0; i < p->n_apis; i++)
        if (p->apis[i].correlation_id > max)
            max = p->apis[i].correlation_id;
    if (p->n_apis && (uint64_t)max <= 4 * (uint64_t)p->n_apis + (1u << 20) && max < UINT32_MAX - 1) {
        p->api_direct = calloc((size_t)max + 1, sizeof *p->api_direct);
        if (p->api_direct) {
            p->api_direct_size = max + 1;
            for (size_t i = 0; i < p->n_apis; i++)
                p->api_direct[p->apis[i].correlation_id] = (uint32_t)i + 1;
            return;
        }
    }
    for (size_t i = 0; i < p->n_apis; i++)
        if (p->apis[i].correlation_id) {
            uint64_t *slot = kat_u64map_get(&p->api_index, p->apis[i].correlation_id, NULL);
            if (slot)
                *slot = i;
        }
}

const struct ka_api *ka_api_of(const struct ka_proc *p, uint32_t correlation_id)
{
    if (p->api_direct) {
        if (correlation_id < p->api_direct_size && p->api_direct[correlation_id])
            return &p->apis[p->api_direct[correlation_id] - 1];
        return NULL;
    }
    const uint64_t *idx = correlation_id ? kat_u64map_find(&p->api_index, correlation_id) : NULL;
    return idx ? &p->apis[*idx] : NULL;
}


/* After pass 1: sort, resolve outer calls, parties, timed windows. */
void ka_finish_index(struct ka_run *run, struct ka_proc *p, struct ka_timing_rec *timing, size_t n_timing,
                     struct ka_event_rec *events, size_t n_events)
{
    p->phase_order = malloc((p->n_phases ? p->n_phases : 1) * sizeof *p->phase_order);
    if (!p->phase_order)
        p->n_phases = 0;
    for (size_t i = 0; i < p->n_phases; i++)
        p->phase_order[i] = (uint32_t)i;
    index_apis(p);
    ka_operators_finish(p);
    /* (qsort with an empty, NULL array is undefined: sort only what is there) */
    if (p->n_phases)
        qsort_r(p->phase_order, p->n_phases, sizeof *p->phase_order, phase_cmp, p->phases);
    if (p->n_modules)
        qsort(p->modules, p->n_modules, sizeof *p->modules, module_cmp);
    if (p->n_vcalls)
        qsort(p->vcalls, p->n_vcalls, sizeof *p->vcalls, vcall_cmp);
    struct ka_session_facts *facts = &run->facts;
    /* reference phases where the reference never runs (ka_trusted_party) */
    for (size_t i = 0; i < p->n_phases; i++)
        if (p->phases[i].party == KA_PARTY_REFERENCE && !p->phases[i].python &&
            ka_trusted_party(p, KA_PARTY_REFERENCE, p->phases[i].start_ns) != KA_PARTY_REFERENCE)
            p->untrusted_reference_phases++;
    for (size_t i = 0; i < p->n_phases; i++)
        if (p->phases[i].party == KA_PARTY_CANDIDATE && !GROW(facts->cand_phases, facts->n_cand_phases, facts->cap_cand_phases))
            facts->cand_phases[facts->n_cand_phases++] = (struct ka_span){ p->phases[i].start_ns, p->phases[i].end_ns };
    if (p->phase_marks)
        run->a->phases_seen = 1;

    /* The outer call of each vendor call, from the shared index (both arrays
     * hold the trace's VENDOR_CALL records sorted by call id). */
    kat_trace_index_finish(&p->calls_index);
    for (size_t i = 0; i < p->n_vcalls; i++) {
        struct ka_vcall *vc = &p->vcalls[i];
        const struct kat_index_call *c = kat_trace_index_call(&p->calls_index, vc->rec.call_id);
        long outer = c ? ka_vcall_find(p, kat_trace_index_outermost(&p->calls_index, c)->call_id) : -1;
        vc->outer = outer >= 0 ? (size_t)outer : i;
    }
    for (size_t i = 0; i < p->n_vcalls; i++) {
        struct ka_vcall *vc = &p->vcalls[i];
        const struct ka_vcall *outer = &p->vcalls[vc->outer];
        if (p->candidate_process || outer->caller_is_candidate) {
            vc->party = KA_PARTY_CANDIDATE;
        } else {
            int via;
            uint64_t created;
            vc->party = ka_party_of_launch(p, outer->rec.thread_id, outer->rec.enter_ns, &via, &created);
            enum ka_party was = vc->party;
            vc->party = ka_unphased_compute(p, was, outer->cls, outer->rec.enter_ns);
            p->unphased_compute += vc->party != was && vc->outer == i;
        }
        if (run->opt->on_vendor_call)
            run->opt->on_vendor_call(run->opt->sink_arg, p->pid, vc->rec.thread_id, vc->api, vc->rec.call_id,
                                     vc->rec.enter_ns, vc->rec.exit_ns, vc->party);
    }
    if (run->opt->on_phase)
        for (size_t i = 0; i < p->n_phases; i++)
            run->opt->on_phase(run->opt->sink_arg, p->pid, p->phases[i].tid, ka_party_name(p->phases[i].party),
                               p->phases[i].start_ns, p->phases[i].end_ns);
    /* The library calls the trace shows inside the causal probe's baseline replay:
       what the probe must have seen for its "unused" to stand (verdict_implementation.c) */
    if (p->probe_windows) {
        facts->probe_windows += p->probe_windows;
        for (size_t i = 0; i < p->n_vcalls && p->probe_end_ns; i++) {
            const struct ka_vcall *vc = &p->vcalls[i];
            if (vc->outer != i || vc->rec.enter_ns < p->probe_start_ns || vc->rec.enter_ns > p->probe_end_ns)
                continue;
            if (!vc->caller_is_candidate && vc->cls >= 0 && vc->cls < KA_CLASS_COUNT)
                facts->probe_framework_calls[vc->cls]++;
            if ((vc->rec.library == KAT_LIB_CUBLAS || vc->rec.library == KAT_LIB_CUBLASLT) &&
                vc->cls == KA_CLASS_GEMM)
                facts->probe_vendor_calls[KA_PROBE_FAMILY_GEMM]++;
            else if (vc->rec.library == KAT_LIB_CUDNN && vc->cls == KA_CLASS_CONV)
                facts->probe_vendor_calls[KA_PROBE_FAMILY_CONV]++;
            if (facts->n_probe_shapes < KA_PROBE_SHAPES)
                facts->probe_shapes[facts->n_probe_shapes++] = (struct ka_call_shape){
                    .m = vc->rec.op.gemm.m, .n = vc->rec.op.gemm.n, .k = vc->rec.op.gemm.k,
                    .type_c = vc->rec.op.gemm.type_c, .library = vc->rec.library };
            else
                facts->probe_shapes_overflow = 1;
        }
        if (!p->probe_end_ns)
            facts->probe_windows++; /* an open window cannot confirm anything */
    }
    ka_build_windows(run, p, timing, n_timing, events, n_events);
}

void ka_proc_free(struct ka_proc *p)
{
    free(p->file);
    free(p->exe);
    free(p->argv0);
    free(p->argv);
    kat_u64map_free(&p->api_index);
    free(p->api_direct);
    kat_trace_index_free(&p->calls_index);
    free(p->apis);
    for (size_t i = 0; i < p->n_vcalls; i++) {
        free(p->vcalls[i].api);
        free(p->vcalls[i].caller);
    }
    free(p->vcalls);
    free(p->phases);
    free(p->phase_order);
    free(p->operators);
    free(p->operator_order);
    free(p->python_status);
    free(p->python_operators);
    for (size_t i = 0; i < p->n_modules; i++)
        free(p->modules[i].loader);
    free(p->modules);
    for (size_t i = 0; i < p->n_windows; i++)
        ka_window_work_free(&p->windows[i]);
    free(p->windows);
    free(p->threads);
    for (size_t i = 0; i < p->n_symbols; i++) {
        free(p->symbols[i].symbol);
        free(p->symbols[i].object);
    }
    free(p->symbols);
    free(p->reported_ms);
    free(p->elapsed_ms);
    for (size_t i = 0; i < p->n_guard; i++)
        free(p->guard_changed[i]);
    free(p->guard_changed);
    for (size_t i = 0; i < p->n_py_timing; i++)
        free(p->py_timing[i].text);
    free(p->py_timing);
    for (size_t i = 0; i < p->n_libs; i++)
        free(p->libs[i].soname);
    free(p->libs);
    free(p->low_precision_example);
}

