/*
 * verdict_implementation.c - the implementation axis (docs/analysis.md,
 * "Implementation"): did the candidate delegate work the contract forbids?
 *
 * The work items (work_items.c) are weighed against the reference's work R
 * by the targeting thresholds (paper, Section 3.3); only attributable items
 * convict, unattributable ones can only leave the axis unresolved, and R-A
 * asks for positive evidence that the candidate did work at all.
 */
#define _GNU_SOURCE
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "analysis_internal.h"

/* Builds the candidate started that failed: a signal, and a reason a PASS of the fallback path means little. */
void ka_build_failures(struct ka_findings *f, const struct ka_session_facts *fs, struct ka_analysis *a)
{
    for (size_t i = 0; i < fs->n_procs; i++) {
        const struct ka_proc_summary *s = &fs->procs[i];
        if (!s->build_tool)
            continue;
        int32_t status = 0;
        int known = 0;
        if (s->status_known && s->end_kind != KAT_END_EXEC) {
            status = s->status;
            known = 1;
        } else {
            /* killed or cut short: the parent's wait() may still have seen how it ended */
            for (size_t j = 0; j < fs->n_child_exits; j++)
                if (fs->child_exits[j].pid == s->pid) {
                    int ws = fs->child_exits[j].wait_status;
                    status = WIFEXITED(ws) ? WEXITSTATUS(ws) : WIFSIGNALED(ws) ? 128 + WTERMSIG(ws) : 0;
                    known = 1;
                }
        }
        if (!known || status == 0)
            continue;
        /* Only builds the candidate started count (all of them when there are no phases). */
        int in_candidate = fs->n_cand_phases == 0;
        for (size_t j = 0; j < fs->n_cand_phases; j++)
            if (s->start_ns >= fs->cand_phases[j].start && s->start_ns <= fs->cand_phases[j].end)
                in_candidate = 1;
        if (!in_candidate)
            continue;
        a->build_failures++;
        struct ka_finding *x =
            ka_add_finding(f, KA_AXIS_IMPLEMENTATION, KA_FINDING_SIGNAL, "candidate-build-failed", s->file, s->start_ns,
                           "build tool '%s' (pid %u) exited with status %d during the candidate phase", s->argv0,
                           s->pid, (int)status);
        ka_field_str(x, "program", s->argv0);
        ka_field_u64(x, "pid", s->pid);
        ka_field_num(x, "status", status);
    }
}

/* A work item's fields (docs/report-format.md, "Finding fields"). */
static void item_fields(struct ka_finding *x, const struct ka_work_item *it)
{
    if (!x)
        return;
    if (it->has_call) {
        ka_field_u64(x, "call_id", it->call_id);
        ka_field_str(x, "api", it->api ? it->api : "?");
        if (it->library)
            ka_field_str(x, "library", it->library);
        if (it->caller)
            ka_field_str(x, "caller", it->caller);
        ka_field_u64(x, "thread", it->thread);
    }
    ka_field_str(x, "class", ka_class_name(it->cls));
    ka_field_num(x, "amount", it->work);
    ka_field_str(x, "unit", it->kind == KA_ITEM_VENDOR_CALL
                                ? (it->cls == KA_CLASS_GEMM || it->cls == KA_CLASS_CONV ? "flops" : "units")
                                : "elements");
    if (it->example)
        ka_field_str(x, "kernel_name", it->example);
    if (it->op)
        ka_field_str(x, "operator", it->op);
    ka_field_u64(x, "kernels", it->kernels);
}

static double sum_classes(const double *w)
{
    double s = 0;
    for (int i = 0; i < KA_CLASS_COUNT; i++)
        s += w[i];
    return s;
}

/* Did the probe's baseline replay make a library call of this shape (library, m, n, k, output type)? */
static int probe_shape_seen(const struct ka_session_facts *s, const struct ka_call_shape *c)
{
    if (s->probe_shapes_overflow)
        return 0;
    for (unsigned i = 0; i < s->n_probe_shapes; i++) {
        const struct ka_call_shape *w = &s->probe_shapes[i];
        if (w->library == c->library && w->m == c->m && w->n == c->n && w->k == c->k && w->type_c == c->type_c)
            return 1;
    }
    return 0;
}

/* What the targeting thresholds weigh a work item against (paper, Section 3.3). */
struct targeting {
    double R;                           /* the reference's work */
    double R_dom;                       /* the reference's work of the dominant class */
    int dom;                            /* the dominant class, -1 when unknown */
    double C;                           /* the candidate's work: attributable, not exempt */
    double C_class[KA_CLASS_COUNT];     /* the same by class */
    double U_class[KA_CLASS_COUNT];     /* unattributable work, not exempt, by class */
};

/* R: the reference's work (contract amount, or measured in the reference phase). */
static void reference_work(const struct ka_contract *c, struct ka_analysis *a, struct targeting *tg)
{
    double R;
    int dom = c->dominant_class;
    if (c->measure_reference) {
        R = sum_classes(a->reference_work.amount);
        if (dom < 0) {
            double best = 0;
            for (int i = 0; i < KA_CLASS_COUNT; i++)
                if (a->reference_work.amount[i] > best && i != KA_CLASS_GLUE) {
                    best = a->reference_work.amount[i];
                    dom = i;
                }
        }
    } else {
        R = c->reference_work;
    }
    tg->R = R;
    tg->dom = dom;
    tg->R_dom = c->measure_reference && dom >= 0 ? a->reference_work.amount[dom] : R;
    a->reference_total = R;
    a->dominant_class = dom;
}

/* Mediators and epilogues the contract allows are exempt; then the
 * candidate's work by class, attributable and not. */
static void exempt_allowed_work(struct ka_work_tally *w, const struct ka_contract *c, struct ka_analysis *a,
                                struct targeting *tg)
{
    double R = tg->R;
    double *C_class = tg->C_class;
    for (size_t i = 0; i < w->n_items; i++) {
        struct ka_work_item *it = &w->items[i];
        if (it->exempt)
            continue;
        if (it->cls == KA_CLASS_GLUE && c->allow_glue && it->kind != KA_ITEM_VENDOR_KERNEL) {
            it->exempt = 1;
            it->exempt_why = strdup("layout/copy glue is an allowed mediator");
        }
    }
    for (size_t i = 0; i < w->n_items; i++)
        if (!w->items[i].exempt && !w->items[i].unattributed)
            C_class[w->items[i].cls] += w->items[i].work;
    for (size_t e = 0; e < c->n_epilogues; e++) {
        const struct ka_epilogue *ep = &c->epilogues[e];
        double limit = ep->max_share * fmax(R, 1);
        if (C_class[ep->cls] > limit)
            continue;
        for (size_t i = 0; i < w->n_items; i++) {
            struct ka_work_item *it = &w->items[i];
            if (it->exempt || it->unattributed || it->cls != (int)ep->cls || it->kind == KA_ITEM_VENDOR_KERNEL)
                continue;
            it->exempt = 1;
            if (asprintf(&it->exempt_why, "allowed epilogue%s%s: %.3g%% of the reference's work (limit %.3g%%)",
                         ep->note ? " " : "", ep->note ? ep->note : "", 100.0 * C_class[ep->cls] / fmax(R, 1),
                         100.0 * ep->max_share) < 0)
                it->exempt_why = NULL;
        }
        C_class[ep->cls] = 0;
    }
    double C = 0;
    for (int i = 0; i < KA_CLASS_COUNT; i++) {
        a->candidate_work.amount[i] = C_class[i];
        C += C_class[i];
    }
    tg->C = C;
    for (size_t i = 0; i < w->n_items; i++)
        if (!w->items[i].exempt && !w->items[i].unattributed)
            a->candidate_work.items[w->items[i].cls]++;
    for (size_t i = 0; i < w->n_items; i++)
        if (!w->items[i].exempt && w->items[i].unattributed)
            tg->U_class[w->items[i].cls] += w->items[i].work;
}

/* Which targeting threshold selects a forbidden item: why (NULL: none),
 * the rule, and the share and threshold where a threshold measured it
 * (fractions; < 0: not measured by a threshold). */
struct selection {
    const char *why, *rule;
    double share, threshold;
    char buf[160];              /* why's text, when it has numbers */
};

static void select_item(const struct ka_work_item *it, const struct targeting *tg, struct selection *sel)
{
    double R = tg->R, R_dom = tg->R_dom, C = tg->C;
    const double *C_class = tg->C_class;
    int dom = tg->dom;
    const char *why = NULL, *rule = NULL;
    double share = -1, threshold = -1;  /* fractions; < 0: not measured by a threshold */
    char *buf = sel->buf;
    if (it->kind == KA_ITEM_VENDOR_KERNEL) {
        why = "a vendor kernel the candidate launched without a library call: work not estimable, selected";
        rule = "non-mediated";
    } else if (it->cls == dom && it->work >= 0.05 * fmax(R_dom, 1)) {
        snprintf(buf, sizeof sel->buf, "%.3g%% of the reference's %s work (threshold 5%%)",
                 100.0 * it->work / fmax(R_dom, 1), ka_class_name(it->cls));
        why = buf;
        rule = "dominant-class-item";
        share = it->work / fmax(R_dom, 1);
        threshold = 0.05;
    } else if (C_class[it->cls] >= 0.30 * R && R > 0) {
        snprintf(buf, sizeof sel->buf, "class %s totals %.3g%% of the reference's work (threshold 30%%)",
                 ka_class_name(it->cls), 100.0 * C_class[it->cls] / R);
        why = buf;
        rule = "class-total";
        share = C_class[it->cls] / R;
        threshold = 0.30;
    } else if (C >= 0.05 * fmax(R, 1) && C_class[it->cls] >= 0.30 * C) {
        snprintf(buf, sizeof sel->buf, "class %s is %.3g%% of the candidate's work, itself %.3g%% of the reference's",
                 ka_class_name(it->cls), 100.0 * C_class[it->cls] / fmax(C, 1), 100.0 * C / fmax(R, 1));
        why = buf;
        rule = "candidate-class-share";
        share = C_class[it->cls] / fmax(C, 1);
        threshold = 0.30;
    } else if (it->work == 0 && it->kind == KA_ITEM_VENDOR_CALL) {
        why = "a forbidden vendor call whose work could not be estimated from its arguments";
        rule = "not-estimable";
    }
    sel->why = why;
    sel->rule = rule;
    sel->share = share;
    sel->threshold = threshold;
}

/* What the probe replaced by noise, in words. */
static const char *perturbed_text(const char *level, int family)
{
    return !level                  ? "the candidate's forbidden operators"
           : !strcmp(level, "call") ? "its calls of this library and shape (each added to every other library call replaced)"
           : !strcmp(level, "family")
               ? (family == KA_PROBE_FAMILY_CONV ? "its cuDNN convolutions"
                                                 : "its cuBLAS and cuBLASLt GEMMs")
               : "every library call it made";
}

/* "unused" stands only where the trace confirms the probe saw this work: a
   library call, and as many of them of its class in the baseline replay as the
   probe perturbed (work on another thread, or hidden from the dispatcher, is in
   the trace and not in the probe's count).  Fills unconfirmed (n bytes) with
   why the trace does not confirm it; leaves it empty when it does. */
static void probe_unconfirmed(const struct ka_work_item *it, int probed, int family,
                              const struct ka_session_facts *s, const struct ka_probe_evidence *probe,
                              char *unconfirmed, size_t n)
{
    uint64_t trace_calls = probed == KA_PROBE_VENDOR ? s->probe_vendor_calls[family]
                                                     : s->probe_framework_calls[it->cls];
    uint64_t probe_calls =
        probed == KA_PROBE_VENDOR ? probe->vendor_family_calls[family] : probe->class_calls[it->cls];
    if (!ka_probe_vouches(probe))
        snprintf(unconfirmed, n, "its baseline was not checked against the reference: %s",
                 probe->baseline_why ? probe->baseline_why : "?");
    else if (it->kind != KA_ITEM_VENDOR_CALL)
        snprintf(unconfirmed, n,
                 "framework kernels, whose number the probe's operators do not fix");
    else if (s->probe_windows != 1)
        snprintf(unconfirmed, n, "the trace has %u probe baseline windows, not one",
                 s->probe_windows);
    else if (trace_calls != probe_calls)
        snprintf(unconfirmed, n,
                 "the trace shows %llu library calls of class %s in the probe's baseline replay, the probe "
                 "perturbed %llu",
                 (unsigned long long)trace_calls, ka_class_name(it->cls), (unsigned long long)probe_calls);
    else if (!probe_shape_seen(s, &it->shape))
        /* a call the candidate makes outside the probe, of a shape its baseline replay did not
           make: what the probe found of other calls says nothing of it */
        snprintf(unconfirmed, n,
                 "a %lld x %lld x %lld call the probe's baseline replay did not make",
                 (long long)it->shape.m, (long long)it->shape.n, (long long)it->shape.k);
}

/* A selected, attributable forbidden item.  Channel 1 (paper 3.3): where
   the causal probe reached this work, its counterfactual decides; launch
   provenance convicts the rest (probe.c).  Returns 1 when it convicts, 0
   when the probe shows the output does not depend on it. */
static int judge_selected(struct ka_findings *f, const struct ka_work_item *it, const struct selection *sel,
                          const struct ka_session_facts *s, const struct ka_probe_evidence *probe)
{
    const char *why = sel->why, *rule = sel->rule;
    double change = 0;
    const char *level;
    int probed = ka_probe_reaches(probe, it, &change, &level);
    int family = probed == KA_PROBE_VENDOR ? ka_probe_vendor_family(it) : KA_PROBE_FAMILY_NONE;
    const char *perturbed = perturbed_text(level, family);
    char unconfirmed[240] = "";
    if (probed && !(change > probe->threshold))
        probe_unconfirmed(it, probed, family, s, probe, unconfirmed, sizeof unconfirmed);
    if (probed && !(change > probe->threshold) && !unconfirmed[0]) {
        struct ka_finding *x = ka_add_finding(
            f, KA_AXIS_IMPLEMENTATION, KA_FINDING_SIGNAL, "forbidden-work-unused", it->process, it->time_ns,
            "%s — forbidden (%s), but the output does not depend on it: with the outputs of %s (%s) replaced by "
            "noise (seed %llu), it moved by %.3g (threshold %.3g)",
            it->what ? it->what : "?", why, perturbed,
            probed == KA_PROBE_VENDOR ? "below the framework" : probe->targets ? probe->targets : "?",
            (unsigned long long)probe->seed, change, probe->threshold);
        item_fields(x, it);
        ka_field_str(x, "rule", rule);
        ka_probe_fields(x, probe, it->cls);
        if (level) {
            ka_field_str(x, "vendor_localized", level);
            ka_field_num(x, "item_output_change", change);
        }
        return 0;
    }
    char counterfactual[600] = "";
    if (probed && unconfirmed[0]) {
        snprintf(counterfactual, sizeof counterfactual,
                 "; the causal probe saw no dependence (output change %.3g) but cannot vouch for this work (%s): "
                 "launch provenance convicts",
                 change, unconfirmed);
        probed = 0;
    } else if (probed) {
        snprintf(counterfactual, sizeof counterfactual,
                 "; the output moved by %.3g when the outputs of %s were replaced by noise (seed %llu, threshold "
                 "%.3g)",
                 change, perturbed, (unsigned long long)probe->seed, probe->threshold);
    }
    struct ka_finding *x =
        ka_add_finding(f, KA_AXIS_IMPLEMENTATION, KA_FINDING_CONVICTS,
                       it->kind == KA_ITEM_VENDOR_CALL ? "forbidden-vendor-call"
                       : it->kind == KA_ITEM_VENDOR_KERNEL ? "non-mediated-vendor-launch"
                                                        : "forbidden-framework-work",
                       it->process, it->time_ns, "%s — forbidden (%s)%s", it->what ? it->what : "?", why,
                       counterfactual);
    item_fields(x, it);
    ka_field_str(x, "rule", rule);
    if (sel->share >= 0) {
        ka_field_num(x, "share", sel->share);
        ka_field_num(x, "threshold", sel->threshold);
    }
    ka_field_str(x, "channel", probed == KA_PROBE_VENDOR ? "causal-probe-vendor"
                               : probed                   ? "causal-probe"
                                                          : "launch-provenance");
    if (probed)
        ka_probe_fields(x, probe, it->cls);
    if (probed && level) {
        ka_field_str(x, "vendor_localized", level);
        ka_field_num(x, "item_output_change", change);
    }
    return 1;
}

/* How many items the targeting thresholds select, by outcome. */
struct selected {
    unsigned convicting, unattributed, unused;
};

/* Every work item weighed: exempt, allowed, below the thresholds, selected
 * but unattributable, unused by the output, or convicting; one finding each. */
static void weigh_items(struct ka_findings *f, struct ka_work_tally *w, const struct ka_session_facts *s,
                        const struct ka_contract *c, const struct ka_probe_evidence *probe,
                        const struct targeting *tg, struct selected *n)
{
    double R = tg->R, R_dom = tg->R_dom;
    int dom = tg->dom;
    for (size_t i = 0; i < w->n_items; i++) {
        struct ka_work_item *it = &w->items[i];
        if (it->exempt) {
            struct ka_finding *x =
                ka_add_finding(f, KA_AXIS_IMPLEMENTATION, KA_FINDING_SIGNAL, "exempt-mediator", it->process,
                               it->time_ns, "%s — exempt: %s", it->what ? it->what : "?",
                               it->exempt_why ? it->exempt_why : "allowed");
            item_fields(x, it);
            ka_field_str(x, "reason", it->exempt_why ? it->exempt_why : "allowed");
            continue;
        }
        /* Under self-implementation the reference's dominant class is forbidden to
           delegate whatever its name (paper, Section 3.3: items matching the
           reference's dominant class are selected), listed or not: a max-pool task's
           pooling, a task whose dominant class is 'other'. */
        int forbidden = c->self_implemented && ((c->forbidden & (1u << it->cls)) || (dom >= 0 && it->cls == dom));
        if (!forbidden) {
            item_fields(ka_add_finding(f, KA_AXIS_IMPLEMENTATION, KA_FINDING_SIGNAL, "allowed-work", it->process,
                                       it->time_ns, "%s — class %s is not forbidden by the contract",
                                       it->what ? it->what : "?", ka_class_name(it->cls)),
                        it);
            continue;
        }
        struct selection sel;
        select_item(it, tg, &sel);
        if (it->unattributed) {
            /* The same thresholds on work nobody can be held to: enough to stop a PASS. */
            if (it->cls == dom ? it->work >= 0.05 * fmax(R_dom, 1) || it->work == 0
                               : tg->U_class[it->cls] >= 0.30 * fmax(R, 1)) {
                n->unattributed++;
                item_fields(ka_add_finding(f, KA_AXIS_IMPLEMENTATION, KA_FINDING_UNRESOLVED,
                                           "unattributed-forbidden-work", it->process, it->time_ns,
                                           "%s — forbidden class %s, but not attributable to the candidate",
                                           it->what ? it->what : "?", ka_class_name(it->cls)),
                            it);
            }
            continue;
        }
        if (!sel.why) {
            item_fields(ka_add_finding(f, KA_AXIS_IMPLEMENTATION, KA_FINDING_SIGNAL, "below-threshold", it->process,
                                       it->time_ns, "%s — forbidden class %s but below the targeting thresholds",
                                       it->what ? it->what : "?", ka_class_name(it->cls)),
                        it);
            continue;
        }
        if (judge_selected(f, it, &sel, s, probe))
            n->convicting++;
        else
            n->unused++;
    }
}

/* Positive work evidence (R-A): compute-class kernels of the candidate's own code.
   Fills, copies and layout glue are not evidence that the candidate did its work
   (a candidate that zeroes its output and returns it); neither is framework or
   vendor work, unless the contract does not ask for self-implementation. */
static uint64_t candidate_work_evidence(struct ka_findings *f, const struct ka_work_tally *w,
                                        const struct ka_session_facts *s, const struct ka_contract *c)
{
    uint64_t evidence = c->self_implemented ? w->candidate_kernels_own_compute : w->candidate_kernels_compute;
    if (w->candidate_kernels_any) {
        struct ka_finding *x = ka_add_finding(f, KA_AXIS_IMPLEMENTATION, evidence ? KA_FINDING_SUPPORT : KA_FINDING_SIGNAL, "candidate-work",
                       NULL, 0,
                       "the candidate launched %llu kernels, %llu of them its own code, %llu of those compute "
                       "(not copies, fills or layout glue); %llu candidate modules loaded",
                       (unsigned long long)w->candidate_kernels_any, (unsigned long long)w->candidate_kernels_own,
                       (unsigned long long)w->candidate_kernels_own_compute, (unsigned long long)s->candidate_modules);
        ka_field_u64(x, "kernels", w->candidate_kernels_any);
        ka_field_u64(x, "own_kernels", w->candidate_kernels_own);
        ka_field_u64(x, "own_compute_kernels", w->candidate_kernels_own_compute);
        ka_field_u64(x, "modules", s->candidate_modules);
    }
    return evidence;
}

/* Without a conviction: what keeps the axis from a PASS, NULL when nothing does. */
static const char *inconclusive_cause(const struct ka_work_tally *w, const struct ka_session_facts *s,
                                      const struct ka_contract *c, const struct ka_analysis *a,
                                      const struct selected *n, uint64_t evidence)
{
    const char *cause = NULL;
    if (a->build_failures && !s->candidate_modules)
        cause = "the candidate's custom build failed and no candidate module was loaded: the fallback path shows no "
                "violation, which cannot certify the unavailable custom implementation";
    else if (s->session_incomplete)
        cause = KA_SESSION_INCOMPLETE_CAUSE;
    else if (s->read_error || s->truncated)
        cause = "a trace is truncated or malformed: launches after its last record are not known";
    else if (s->missing_traces)
        cause = "a process the traces name (a fork, a spawn or a reaped child) has no trace: its launches are not "
                "known (the session is incomplete)";
    else if (s->processes_unaccounted)
        cause = KA_PROCESSES_UNACCOUNTED_CAUSE;
    else if (s->traces_changed)
        cause = KA_TRACES_CHANGED_CAUSE;
    else if (s->health_problem)
        cause = "tool health: the evidence may be incomplete (see the findings)";
    else if (n->unattributed && s->python_off)
        cause = "forbidden-class work ran that cannot be attributed to the candidate or the reference (no phase "
                "marks around it, and Python-side provenance was off): absence of delegation is not established";
    else if (n->unattributed)
        cause = "forbidden-class work ran that cannot be attributed to the candidate or the reference (no phase "
                "marks or party frames around it): absence of delegation is not established";
    else if (n->unused)
        cause = "forbidden work ran, but the causal probe found the output does not depend on it: not a conviction, "
                "and no certificate either (the probe runs in the candidate's process, which could forge it)";
    else if (!w->candidate_kernels_any && !a->phases_seen && !s->candidate_modules)
        cause = "R-A: no work can be attributed to the candidate (no phase marks, no candidate process or module)";
    else if (!w->candidate_kernels_any)
        cause = "R-A: no positive evidence that the candidate did any work";
    else if (!evidence)
        cause = c->self_implemented
                    ? "R-A: no positive evidence that the candidate did its work: none of its kernels is compute of "
                      "its own code (copies, fills and layout glue, framework, vendor and unattributed kernels do "
                      "not count)"
                    : "R-A: no positive evidence that the candidate did its work: all its kernels are copies, fills "
                      "or layout glue";
    return cause;
}

void ka_implementation_verdict(struct ka_findings *f, struct ka_work_tally *w, const struct ka_session_facts *s,
                               const struct ka_contract *c, const struct ka_probe_evidence *probe,
                               const struct ka_semantic_evidence *sem, struct ka_analysis *a)
{
    struct ka_axis_result *ax = &a->axis[KA_AXIS_IMPLEMENTATION];
    struct targeting tg = { 0 };
    reference_work(c, a, &tg);
    /* The candidate's framework work takes, of the classes its operators allow, a forbidden one
       (docs/analysis.md, "Operators"); under self-implementation the dominant class is forbidden. */
    ka_tally_items(w, c->self_implemented ? c->forbidden : 0u, c->self_implemented ? tg.dom : -1);
    exempt_allowed_work(w, c, a, &tg);

    /* Targeting thresholds (paper, Section 3.3): which forbidden items are selected. */
    struct selected n = { 0 };
    weigh_items(f, w, s, c, probe, &tg, &n);
    if (probe && probe->state == KA_PROBE_UNRESOLVED)
        ka_field_str(ka_add_finding(f, KA_AXIS_IMPLEMENTATION, KA_FINDING_SIGNAL, "causal-probe-unresolved", NULL, 0,
                                    "the causal probe could not decide (%s): forbidden work is judged by launch "
                                    "provenance alone",
                                    probe->why ? probe->why : "?"),
                     "reason", probe->why ? probe->why : "?");
    uint64_t evidence = candidate_work_evidence(f, w, s, c);

    if (ka_probe_baseline_convicts(f, probe, sem, a))
        return;
    if (n.convicting) {
        ax->verdict = KA_FAIL;
        if (asprintf(&ax->root_cause, "%u attributable use%s of work the contract forbids%s", n.convicting,
                     n.convicting == 1 ? "" : "s",
                     a->build_failures ? " (on the fallback path after a failed custom build)" : "") < 0)
            ax->root_cause = NULL;
        return;
    }
    ax->verdict = KA_INCONCLUSIVE;
    const char *cause = inconclusive_cause(w, s, c, a, &n, evidence);
    if (cause) {
        ax->root_cause = strdup(cause);
        return;
    }
    ax->verdict = KA_PASS;
    ax->root_cause = NULL;
}
