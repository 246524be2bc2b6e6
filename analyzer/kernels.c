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
};

/* The element proxy of a framework kernel's work: threads launched (grid x block). */
static double threads_launched(const struct kat_kernel_rec *k)
{
    double threads = (double)k->grid[0] * k->grid[1] * k->grid[2] * (double)k->block[0] * k->block[1] * k->block[2];
    return threads > 0 ? threads : 0;
}

void ka_stream_kernels(struct ka_run *run, struct kat_trace *t, struct ka_proc *p)
{
    struct ka_analysis *a = run->a;
    const struct ka_contract *c = run->c;
    const struct kinv_inventory *inv = run->opt->inventory;
    struct name_info *names = NULL;
    size_t n_names = 0, cap_names = 0;
    struct kat_u64map name_index = KAT_U64MAP_INIT;
    int fp32_task = c->timing_dtype && (!strcmp(c->timing_dtype, "float32") || !strcmp(c->timing_dtype, "fp32"));
    struct kat_record r;
    int rc;
    kat_trace_rewind(t);
    while ((rc = kat_trace_next(t, &r, NULL, 0)) == 1) {
        if (r.type != KAT_REC_KERNEL)
            continue;
        const struct kat_kernel_rec *k = r.body;
        const char *name = kat_trace_string(t, k->name_string);
        a->kernels++;
        p->kernels++;
        const struct ka_api *api = ka_api_of(p, k->correlation_id);
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
        /* Party */
        int via_thread = 0;
        uint64_t thread_created = 0;
        enum ka_party party;
        uint64_t launch_ns;
        if (vc) {
            party = vc->party;
            launch_ns = api ? api->start_ns : vc->rec.enter_ns;
        } else if (api) {
            party = ka_party_of_launch(p, api->tid, api->start_ns, &via_thread, &thread_created);
            launch_ns = api->start_ns;
        } else {
            party = p->candidate_process ? KA_PARTY_CANDIDATE : KA_PARTY_UNKNOWN;
            launch_ns = 0;
            run->facts.kernels_without_api++;
        }
        /* What the name says (cached per name) */
        /* (name 0, no name, is never cached: each such kernel is looked at anew) */
        const uint64_t *slot = k->name_string ? kat_u64map_find(&name_index, k->name_string) : NULL;
        struct name_info *ni = NULL;
        if (slot) {
            ni = &names[*slot];
        } else if (!GROW(names, n_names, cap_names)) {
            ni = &names[n_names];
            ni->module = -1;
            ni->cls = (int8_t)ka_class_of_kernel_name(name);
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
            uint64_t *fresh = k->name_string ? kat_u64map_get(&name_index, k->name_string, NULL) : NULL;
            if (fresh)
                *fresh = n_names;
            if (fresh || !k->name_string)
                n_names++;
            else
                ni = NULL;
        }
        /* Module of the kernel's function, when its (first) launch loaded it */
        const struct ka_module *mod = NULL;
        if (ni && ni->module >= 0)
            mod = &p->modules[ni->module];
        int framework_name = ni ? ni->framework : ka_is_framework_kernel_name(name);
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
        if (at.verdict == KINV_VERDICT_VENDOR_UNPINNED || at.verdict == KINV_VERDICT_CONFLICT) {
            struct ka_finding *x = ka_add_finding(
                &run->findings, KA_AXIS_IMPLEMENTATION, KA_FINDING_SIGNAL,
                at.verdict == KINV_VERDICT_CONFLICT ? "kernel-origin-conflict" : "kernel-origin-unpinned", p->file,
                k->start_ns, "kernel '%.160s': %s: counted neither as vendor work nor as the candidate's own", name,
                at.reason);
            ka_field_str(x, "kernel_name", name);
            ka_field_u64(x, "stream", k->stream_id);
            ka_field_u64(x, "correlation_id", k->correlation_id);
            ka_field_str(x, "reason", at.reason);
        }
        enum ka_origin origin = at.origin;
        int impersonation = at.impersonation, digest_vendor = at.digest_vendor;
        party = at.party;
        a->kernels_by[origin][party]++;
        uint64_t dur = k->end_ns > k->start_ns ? k->end_ns - k->start_ns : 0;
        a->gpu_ns_by[origin][party] += dur;
        if (k->graph_id)
            p->graph_kernels++;

        if (party == KA_PARTY_CANDIDATE) {
            run->work.candidate_kernels_any++;
            if (cls != KA_CLASS_GLUE)
                run->work.candidate_kernels_compute++;
            if (origin == KA_ORIGIN_CANDIDATE) {
                run->work.candidate_kernels_own++;
                if (cls != KA_CLASS_GLUE)
                    run->work.candidate_kernels_own_compute++;
            }
            if (origin == KA_ORIGIN_UNATTRIBUTED && at.verdict != KINV_VERDICT_VENDOR_UNPINNED &&
                at.verdict != KINV_VERDICT_CONFLICT && !(ni && ni->unattributed_reported)) {
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
            if (origin == KA_ORIGIN_FRAMEWORK) {
                double threads = threads_launched(k);
                run->work.fw_work[cls] += threads;
                run->work.fw_count[cls]++;
                if (!run->work.fw_example[cls]) {
                    run->work.fw_example[cls] = strdup(name);
                    run->work.fw_process[cls] = strdup(p->file);
                }
            } else if (origin == KA_ORIGIN_VENDOR && !vc) {
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
        } else if (party == KA_PARTY_UNKNOWN && origin == KA_ORIGIN_FRAMEWORK) {
            run->work.unk_fw_work[cls] += threads_launched(k);
            run->work.unk_fw_count[cls]++;
        } else if (party == KA_PARTY_REFERENCE && origin == KA_ORIGIN_FRAMEWORK) {
            a->reference_work.amount[cls] += threads_launched(k);
            a->reference_work.items[cls]++;
        }

        /*
         * Measurement: work of a timed iteration must finish before its stop
         * event.  Work launched from a thread created inside a window belongs
         * to that window, whenever the thread launched it.
         */
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
        if (w)
            ka_check_kernel_window(&run->findings, &run->timing, p, w,
                                   &(struct ka_kernel_timing){ .name = name, .k = k, .party = party,
                                                               .via_thread = via_thread });
        if (run->opt->on_kernel)
            run->opt->on_kernel(run->opt->sink_arg, p->pid, name, k->stream_id, k->start_ns, k->end_ns, origin, party,
                                (enum ka_class)cls, vc ? vc->rec.call_id : 0);
    }
    free(names);
    kat_u64map_free(&name_index);
}

