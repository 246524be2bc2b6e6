/*
 * kernels.c - pass 2: stream one trace's kernel records.
 *
 * Each kernel is joined to its launch call, its vendor call and its module
 * (index.c), given a party and an origin (origin.c) and a class
 * (work_classes.c), summed into the work tallies (struct ka_work_tally) and
 * checked against the timed window it belongs to (verdict_measurement.c).
 * Kernels are never kept: memory does not grow with them.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis_internal.h"
#include "inventory.h"

/*
 * What a kernel's name says, worked out once per name (name string id) and
 * cached: names repeat millions of times, and the classification reads the
 * whole name several times.
 */
struct name_info {
    int32_t module;             /* the module its launch loaded (index), -1 none known yet */
    int8_t cls;                 /* enum ka_class from the name */
    uint8_t framework;          /* PyTorch's own code by its name */
    uint8_t low_precision;
    uint8_t name_match;         /* enum kinv_strength: how the inventory knows the name */
    uint32_t name_len;          /* strlen: kinv_attribute wants it with every launch */
    uint8_t verdict;            /* its attribution verdict outside windows and modules, 0 until known */
    uint8_t module_looked;      /* its first launch was looked at for a module */
    uint8_t unattributed_reported;  /* a candidate launch of it was reported as not the candidate's own */
    int8_t strength;            /* how much the name says of its class (KA_NAME_*) */
    uint8_t op_reported;        /* its operator evidence was reported */
    uint32_t name_id;           /* trace string id of the name */
    /* Framework launches, by party: counted at the end of the trace, when all the
       operator ranges its launches were in are known (operators.c) */
    struct ka_operator_evidence ops;
    double pending_threads[KA_FW_BUCKETS];
    uint64_t pending_count[KA_FW_BUCKETS];
};

static int fw_bucket(enum ka_party party)
{
    return party == KA_PARTY_CANDIDATE ? KA_FW_CANDIDATE
         : party == KA_PARTY_UNKNOWN   ? KA_FW_UNKNOWN
         : party == KA_PARTY_REFERENCE ? KA_FW_REFERENCE
                                       : -1;
}

/* The element proxy of a framework kernel's work: threads launched (grid x block). */
static double threads_launched(const struct kat_kernel_rec *k)
{
    double threads = (double)k->grid[0] * k->grid[1] * k->grid[2] * (double)k->block[0] * k->block[1] * k->block[2];
    return threads > 0 ? threads : 0;
}

/* The first class in a bit set, -1 if none. */
static int first_class_in(unsigned mask)
{
    return mask ? __builtin_ctz(mask) : -1;
}

/*
 * One framework kernel name's launches of one party into the tallies: the
 * reference's into R in the class its operators agree on; the candidate's and
 * an unknown party's with every class their evidence allows, decided when the
 * forbidden classes are known (ka_tally_items).
 */
static void tally_name(struct ka_run *run, int bucket, const struct name_info *ni, double threads, uint64_t count,
                       const char *name, const char *file, const char *message)
{
    char label[512];
    if (message)
        ka_operator_label(message, label, sizeof label);
    int cls = ni ? ni->cls : ka_class_of_kernel_name(name);
    if (bucket == KA_FW_REFERENCE) {
        if (ni)
            cls = ka_operator_reference_class(&ni->ops, ni->cls, ni->strength);
        run->a->reference_work.amount[cls] += threads;
        run->a->reference_work.items[cls] += count;
        return;
    }
    int fallback = cls;
    unsigned mask = ni ? ka_operator_classes(&ni->ops, bucket, ni->cls, ni->strength, &fallback) : 1u << cls;
    ka_tally_pending(&run->work, bucket, mask, fallback, threads, count, name, file, message ? label : NULL);
}

/*
 * Once per name: what its operators say when it is not what its name says:
 * `operator-class` where they may set its class (the name says little),
 * `operator-class-disagrees` where they may not (a table to extend, or a
 * range the candidate wrote).
 */
static void report_operator(struct ka_run *run, const struct ka_proc *p, struct kat_trace *t, struct name_info *ni,
                            const char *name)
{
    unsigned seen = 0;
    uint32_t message = 0;
    for (int b = 0; b < KA_FW_BUCKETS; b++) {
        seen |= ni->ops.learned[b];
        if (!message)
            message = ni->ops.message[b];
    }
    seen &= ~(1u << ni->cls);
    int op_cls = first_class_in(seen);
    if (ni->op_reported || op_cls < 0 || !message)
        return;
    ni->op_reported = 1;
    const char *text = kat_trace_string(t, message);
    char op[512];
    ka_operator_label(text, op, sizeof op);
    int allowed = ka_refine_class(ni->cls, ni->strength, op_cls) != ni->cls;
    const char *unit;
    double work = ka_operator_work(text, op_cls, &unit);
    struct ka_finding *x;
    if (allowed)
        x = ka_add_finding(&run->findings, KA_AXIS_IMPLEMENTATION, KA_FINDING_SIGNAL, "operator-class", p->file, 0,
                           "framework kernel '%.160s' was launched by %.200s, an operator of class %s (its name says "
                           "%s): it can count as %s",
                           name, op, ka_class_name(op_cls), ka_class_name(ni->cls), ka_class_name(op_cls));
    else
        x = ka_add_finding(&run->findings, KA_AXIS_IMPLEMENTATION, KA_FINDING_SIGNAL, "operator-class-disagrees",
                           p->file, 0,
                           "framework kernel '%.160s' was launched by %.200s, an operator of class %s, but its name "
                           "says %s, which an operator range does not override",
                           name, op, ka_class_name(op_cls), ka_class_name(ni->cls));
    ka_field_str(x, "kernel_name", name);
    ka_field_str(x, "operator", op);
    ka_field_str(x, "name_class", ka_class_name(ni->cls));
    ka_field_str(x, "operator_class", ka_class_name(op_cls));
    if (work > 0) {
        ka_field_num(x, "operator_work", work);
        ka_field_str(x, "operator_unit", unit);
    }
}

/* The names seen in one trace (name string id -> struct name_info). */
struct name_cache {
    struct name_info *names;
    size_t n_names, cap_names;
    struct kat_u64map index;
};

/* The vendor call whose window a kernel was launched in (the outermost call),
 * NULL when none; counts the kernel into the innermost call. */
static const struct ka_vcall *vendor_call_of(struct ka_run *run, struct ka_proc *p, const struct kat_kernel_rec *k)
{
    uint64_t call_id = 0;
    const struct ka_vcall *vc = NULL;
    if (k->correlation_id <= p->max_ext_correlation
        && (call_id = kat_trace_index_vendor_call_of(&p->calls_index, k->correlation_id)) != 0) {
        long idx = ka_vcall_find(p, call_id);
        if (idx >= 0) {
            p->vcalls[idx].kernels++;
            vc = &p->vcalls[p->vcalls[idx].outer];
        } else if (p->complete) {
            /* the call's record is written when it returns, so a trace
             * that ended has it: unless someone took it out */
            if (!run->facts.windows_without_call++) {
                run->facts.missing_call_example = call_id;
                run->facts.missing_call_trace = strdup(p->file);
            }
        }
    }
    return vc;
}

/* Party: the vendor call's, else the launching thread's (via_thread and
 * thread_created when a thread created inside a phase launched it), else
 * the process's.  *launch_ns: when it was launched, 0 unknown. */
static enum ka_party launch_party(struct ka_run *run, struct ka_proc *p, const struct ka_vcall *vc,
                                  const struct ka_api *api, int *via_thread, uint64_t *thread_created,
                                  uint64_t *launch_ns)
{
    enum ka_party party;
    if (vc) {
        party = vc->party;
        *launch_ns = api ? api->start_ns : vc->rec.enter_ns;
    } else if (api) {
        party = ka_party_of_launch(p, api->tid, api->start_ns, via_thread, thread_created);
        *launch_ns = api->start_ns;
    } else {
        party = p->candidate_process ? KA_PARTY_CANDIDATE : KA_PARTY_UNKNOWN;
        *launch_ns = 0;
        run->facts.kernels_without_api++;
    }
    return party;
}

/* What the name says (cached per name); NULL when the cache cannot grow.
 * (name 0, no name, is never cached: each such kernel is looked at anew) */
static struct name_info *name_info_of(struct name_cache *nc, const struct kinv_inventory *inv,
                                      const struct kat_kernel_rec *k, const char *name)
{
    const uint64_t *slot = k->name_string ? kat_u64map_find(&nc->index, k->name_string) : NULL;
    struct name_info *ni = NULL;
    if (slot) {
        ni = &nc->names[*slot];
    } else if (!GROW(nc->names, nc->n_names, nc->cap_names)) {
        ni = &nc->names[nc->n_names];
        ni->module = -1;
        int strength;
        ni->cls = (int8_t)ka_kernel_name_class(name, &strength);
        ni->strength = (int8_t)strength;
        ni->op_reported = 0;
        ni->name_id = k->name_string;
        memset(&ni->ops, 0, sizeof ni->ops);
        memset(ni->pending_threads, 0, sizeof ni->pending_threads);
        memset(ni->pending_count, 0, sizeof ni->pending_count);
        ni->framework = (uint8_t)ka_is_framework_kernel_name(name);
        ni->low_precision = (uint8_t)ka_is_low_precision_name(name);
        ni->name_match = KINV_MATCH_NONE;
        ni->name_len = (uint32_t)strlen(name);
        ni->verdict = 0;
        ni->module_looked = 0;
        ni->unattributed_reported = 0;
        if (inv) {
            struct kinv_match m;
            kinv_match(inv, name, ni->name_len, &m);
            ni->name_match = (uint8_t)m.strength;
        }
        uint64_t *fresh = k->name_string ? kat_u64map_get(&nc->index, k->name_string, NULL) : NULL;
        if (fresh)
            *fresh = nc->n_names;
        if (fresh || !k->name_string)
            nc->n_names++;
        else
            ni = NULL;
    }
    return ni;
}

/* Module of the kernel's function, when its (first) launch loaded it */
static const struct ka_module *kernel_module(struct ka_proc *p, struct name_info *ni, const struct ka_api *api,
                                             const struct ka_vcall *vc, int framework_name)
{
    const struct ka_module *mod = NULL;
    if (ni && ni->module >= 0)
        mod = &p->modules[ni->module];
    if (!mod && api && p->n_modules) {
        mod = ka_module_loaded_during(p, api->tid, api->start_ns, api->end_ns);
        /* at a name's first launch, a module loaded explicitly just before it (run-time
           compiled code); never for a framework name or inside a vendor window, whose
           origin is known otherwise */
        if (!mod && !vc && !framework_name && !(ni && ni->module_looked))
            mod = ka_module_loaded_before(p, api->tid, api->start_ns);
        if (ni) {
            ni->module_looked = 1;
            if (mod)
                ni->module = (int32_t)(mod - p->modules);
        }
    }
    return mod;
}

/* A vendor-named kernel whose origin the inventory cannot pin, or whose evidence conflicts. */
static void report_origin_doubt(struct ka_run *run, const struct ka_proc *p, const struct kat_kernel_rec *k,
                                const char *name, const struct ka_kernel_attribution *at)
{
    struct ka_finding *x = ka_add_finding(
        &run->findings, KA_AXIS_IMPLEMENTATION, KA_FINDING_SIGNAL,
        at->verdict == KINV_VERDICT_CONFLICT ? "kernel-origin-conflict" : "kernel-origin-unpinned", p->file,
        k->start_ns, "kernel '%.160s': %s: counted neither as vendor work nor as the candidate's own", name,
        at->reason);
    ka_field_str(x, "kernel_name", name);
    ka_field_u64(x, "stream", k->stream_id);
    ka_field_u64(x, "correlation_id", k->correlation_id);
    ka_field_str(x, "reason", at->reason);
}

/* A kernel of the candidate's party: into R-A's counts, the non-mediated
 * vendor launches and the low-precision kernels, with the findings its
 * origin calls for. */
static void count_candidate_kernel(struct ka_run *run, struct ka_proc *p, const struct kat_kernel_rec *k,
                                   const char *name, struct name_info *ni, const struct ka_module *mod, int cls,
                                   const struct ka_kernel_attribution *at, const struct ka_vcall *vc, int fp32_task)
{
    enum ka_origin origin = at->origin;
    int impersonation = at->impersonation, digest_vendor = at->digest_vendor;
    run->work.candidate_kernels_any++;
    if (cls != KA_CLASS_GLUE)
        run->work.candidate_kernels_compute++;
    if (origin == KA_ORIGIN_CANDIDATE) {
        run->work.candidate_kernels_own++;
        if (cls != KA_CLASS_GLUE)
            run->work.candidate_kernels_own_compute++;
    }
    if (origin == KA_ORIGIN_UNATTRIBUTED && at->verdict != KINV_VERDICT_VENDOR_UNPINNED &&
        at->verdict != KINV_VERDICT_CONFLICT && !(ni && ni->unattributed_reported)) {
        if (ni)
            ni->unattributed_reported = 1;
        struct ka_finding *x = ka_add_finding(
            &run->findings, KA_AXIS_IMPLEMENTATION, KA_FINDING_SIGNAL, "unattributed-kernel", p->file,
            k->start_ns,
            "kernel '%.160s' launched in the candidate's phase, but no candidate object loaded "
            "its module (%s%s): counted neither as the candidate's own code nor as framework or "
            "vendor work",
            name, mod ? "loaded by " : "", mod ? mod->loader : "its module is not known");
        ka_field_str(x, "kernel_name", name);
        if (mod && mod->loader)
            ka_field_str(x, "loader", mod->loader);
    }
    if (impersonation)
        ka_field_str(ka_add_finding(&run->findings, KA_AXIS_IMPLEMENTATION, KA_FINDING_SIGNAL,
                                    "vendor-named-candidate-kernel", p->file, k->start_ns,
                                    "candidate kernel '%.160s' carries a vendor kernel's name but its module "
                                    "is the candidate's: counted as candidate work, flagged",
                                    name),
                     "kernel_name", name);
    if (origin == KA_ORIGIN_VENDOR && !vc) {
        /* summed per class, like framework kernels: one finding, not one per launch */
        if (!run->work.nm_count[cls]++) {
            if (asprintf(&run->work.nm_example[cls], "'%.160s' (module %s)", name,
                         digest_vendor ? "digest is a vendor cubin" : "loaded by a vendor library") < 0)
                run->work.nm_example[cls] = NULL;
            run->work.nm_process[cls] = strdup(p->file);
            run->work.nm_time[cls] = k->start_ns;
        }
    }
    if (fp32_task && (ni ? ni->low_precision : ka_is_low_precision_name(name))) {
        p->low_precision_kernels++;
        if (!p->low_precision_example)
            p->low_precision_example = strdup(name);
    }
}

/*
 * Measurement: work of a timed iteration must finish before its stop
 * event.  Work launched from a thread created inside a window belongs
 * to that window, whenever the thread launched it.
 */
static void check_timed_window(struct ka_run *run, struct ka_proc *p, const struct kat_kernel_rec *k,
                               const char *name, const struct ka_api *api, enum ka_party party, int via_thread,
                               uint64_t thread_created, uint64_t launch_ns)
{
    struct ka_window *w = NULL;
    if (api && !via_thread) {
        const struct ka_thread_origin *o = ka_thread_origin(p, api->tid);
        if (o && ka_window_at(p, o->create_ns)) {
            via_thread = 1;
            thread_created = o->create_ns;
        }
    }
    uint64_t belongs_ns = via_thread ? thread_created : launch_ns;
    if (belongs_ns)
        w = ka_window_at(p, belongs_ns);
    /* the candidate's work, and in an audit all work of a process not the reference's */
    if (party == KA_PARTY_CANDIDATE || p->reference_untrusted)
        ka_note_candidate_span(run, p, k->start_ns, k->end_ns);
    if (w && party == KA_PARTY_REFERENCE)
        w->reference_launches++;
    else if (w && party == KA_PARTY_CANDIDATE && !via_thread)
        w->candidate_launches++;
    if (w)
        ka_check_kernel_window(&run->findings, &run->timing, p, w,
                               &(struct ka_kernel_timing){ .name = name, .k = k, .party = party,
                                                           .via_thread = via_thread });
}

/* One kernel record: joined, attributed, tallied, checked against its window. */
static void stream_kernel(struct ka_run *run, struct kat_trace *t, struct ka_proc *p, struct name_cache *nc,
                          const struct kat_kernel_rec *k, int fp32_task)
{
    struct ka_analysis *a = run->a;
    const struct kinv_inventory *inv = run->opt->inventory;
    const char *name = kat_trace_string(t, k->name_string);
    a->kernels++;
    p->kernels++;
    const struct ka_api *api = ka_api_of(p, k->correlation_id);
    const struct ka_vcall *vc = vendor_call_of(run, p, k);
    int via_thread = 0;
    uint64_t thread_created = 0;
    uint64_t launch_ns;
    enum ka_party party = launch_party(run, p, vc, api, &via_thread, &thread_created, &launch_ns);
    /* The weak surfaces' phase (after the audit's work): their calls of both
       parties are not the audit's evidence (docs/validators.md, "Weak surfaces") */
    if (p->weak_start_ns && launch_ns >= p->weak_start_ns) {
        p->weak_kernels++;
        return;
    }
    struct name_info *ni = name_info_of(nc, inv, k, name);
    int framework_name = ni ? ni->framework : ka_is_framework_kernel_name(name);
    const struct ka_module *mod = kernel_module(p, ni, api, vc, framework_name);
    /* Origin (docs/inventory.md, "Name collisions", extended to framework code: origin.c) */
    int cls = vc ? vc->cls : ni ? ni->cls : ka_class_of_kernel_name(name);
    struct ka_kernel_facts facts = {
        .name = name,
        .name_len = ni ? ni->name_len : strlen(name),
        .name_match = ni ? ni->name_match : KINV_MATCH_NONE,
        .vcall = vc,
        .module = mod,
        .framework_name = framework_name,
        .name_verdict = ni ? &ni->verdict : NULL,
    };
    struct ka_kernel_attribution at = { .party = party };
    ka_kernel_origin(inv, p, &facts, &at);
    if (at.verdict == KINV_VERDICT_VENDOR_UNPINNED || at.verdict == KINV_VERDICT_CONFLICT)
        report_origin_doubt(run, p, k, name, &at);
    enum ka_origin origin = at.origin;
    party = at.party;
    if (!vc) { /* a library call's party is decided with the call (index.c) */
        enum ka_party was = party;
        party = ka_unphased_compute(p, was, cls, launch_ns);
        p->unphased_compute += party != was;
    }
    /* A framework kernel's operator (operators.c), when a range of its own party's phase */
    const struct ka_operator *op = NULL;
    int bucket = fw_bucket(party);
    if (origin == KA_ORIGIN_FRAMEWORK && !vc && api && p->n_operators && bucket >= 0) {
        op = ka_operator_at(p, api->tid, api->start_ns);
        if (op && op->party != party)
            op = NULL;
    }
    if (op && ni)
        ka_operator_learn(&ni->ops, bucket, op);
    a->kernels_by[origin][party]++;
    uint64_t dur = k->end_ns > k->start_ns ? k->end_ns - k->start_ns : 0;
    a->gpu_ns_by[origin][party] += dur;
    if (k->graph_id)
        p->graph_kernels++;

    if (party == KA_PARTY_CANDIDATE)
        count_candidate_kernel(run, p, k, name, ni, mod, cls, &at, vc, fp32_task);
    if (origin == KA_ORIGIN_FRAMEWORK && bucket >= 0) {
        if (ni) {
            ni->pending_threads[bucket] += threads_launched(k);
            ni->pending_count[bucket]++;
        } else {
            tally_name(run, bucket, NULL, threads_launched(k), 1, name, p->file,
                       op ? kat_trace_string(t, op->message) : NULL);
        }
    }
    check_timed_window(run, p, k, name, api, party, via_thread, thread_created, launch_ns);
    if (run->opt->on_kernel)
        run->opt->on_kernel(run->opt->sink_arg, p->pid, name, k->stream_id, k->start_ns, k->end_ns, origin, party,
                            (enum ka_class)cls, vc ? vc->rec.call_id : 0);
}

/* The weak surfaces' phase: what was left out of the evidence, in one finding. */
static void report_weak_phase(struct ka_run *run, struct ka_proc *p)
{
    for (size_t i = 0; i < p->n_vcalls; i++)
        p->weak_vcalls += p->vcalls[i].outer == i && p->vcalls[i].rec.enter_ns >= p->weak_start_ns;
    struct ka_finding *x = ka_add_finding(
        &run->findings, KA_AXIS_IMPLEMENTATION, KA_FINDING_SIGNAL, "weak-phase-excluded", p->file,
        p->weak_start_ns,
        "%llu kernels and %llu library calls launched in the weak surfaces' phase (after the audit's work) "
        "are not the audit's evidence and were left out",
        (unsigned long long)p->weak_kernels, (unsigned long long)p->weak_vcalls);
    ka_field_u64(x, "kernels", p->weak_kernels);
    ka_field_u64(x, "library_calls", p->weak_vcalls);
}

/* A copy or fill of a process not the reference's, outside the weak surfaces: the
 * copy engines and memory bandwidth it takes slow a reference timed meanwhile. */
static void note_copy_span(struct ka_run *run, struct ka_proc *p, const struct kat_record *r)
{
    uint64_t start, end;
    if (r->type == KAT_REC_MEMCPY) {
        const struct kat_memcpy_rec *m = r->body;
        start = m->start_ns;
        end = m->end_ns;
    } else {
        const struct kat_memset_rec *m = r->body;
        start = m->start_ns;
        end = m->end_ns;
    }
    if (!(p->weak_start_ns && start >= p->weak_start_ns))
        ka_note_candidate_span(run, p, start, end);
}

void ka_stream_kernels(struct ka_run *run, struct kat_trace *t, struct ka_proc *p)
{
    const struct ka_contract *c = run->c;
    struct name_cache nc = { .index = KAT_U64MAP_INIT };
    int fp32_task = c->timing_dtype && (!strcmp(c->timing_dtype, "float32") || !strcmp(c->timing_dtype, "fp32"));
    struct kat_record r;
    int rc;
    kat_trace_rewind(t);
    while ((rc = kat_trace_next(t, &r, NULL, 0)) == 1) {
        if (r.type == KAT_REC_KERNEL)
            stream_kernel(run, t, p, &nc, r.body, fp32_task);
        else if ((r.type == KAT_REC_MEMCPY || r.type == KAT_REC_MEMSET) && p->reference_untrusted)
            note_copy_span(run, p, &r);
    }
    /* Framework launches, sampled by the Python side or not: counted with what the
       operator ranges of this trace say of their name */
    for (size_t i = 0; i < nc.n_names; i++) {
        struct name_info *ni = &nc.names[i];
        const char *name = kat_trace_string(t, ni->name_id);
        report_operator(run, p, t, ni, name);
        for (int b = 0; b < KA_FW_BUCKETS; b++) {
            if (!ni->pending_count[b])
                continue;
            uint32_t message = ni->ops.message[b];     /* a range of its own party's, to name */
            tally_name(run, b, ni, ni->pending_threads[b], ni->pending_count[b], name, p->file,
                       message ? kat_trace_string(t, message) : NULL);
        }
    }
    free(nc.names);
    kat_u64map_free(&nc.index);
    if (p->weak_start_ns)
        report_weak_phase(run, p);
}

