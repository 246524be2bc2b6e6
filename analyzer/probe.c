/*
 * probe.c - the causal probe (docs/analysis.md, "Causal probe"; paper 3.3,
 * Eq. 2): which operators `kaudit audit` perturbs, and what the evidence of
 * its replays does to the implementation axis.
 *
 * The runner (runner/kaudit_probe.py) replays the candidate's call with the
 * outputs of the ATen operators of the targeted classes replaced by seeded
 * noise; audit/audit_probe.c measures how far the output moved.  Here:
 *   - the targets: the contract's forbidden classes and the reference's
 *     dominant class, less its allowed epilogues, as operator names from the
 *     families of work_classes.c (the plan carries them: one table);
 *   - a selected item the dispatcher reaches (framework kernels, a library
 *     call made by the framework) of a perturbed class convicts only when the
 *     output moved by more than the threshold; when it did not, the item is
 *     forbidden work the output does not depend on (forbidden-work-unused):
 *     no conviction, and no PASS either (the probe runs in the candidate's
 *     process, which could forge it);
 *   - without trace axes (--device cpu) the probe alone can convict.
 */
#define _GNU_SOURCE
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis_internal.h"

unsigned ka_probe_classes(const struct ka_contract *c)
{
    unsigned classes;
    if (!c)
        classes = KA_CORE_CLASSES; /* what a generated contract forbids */
    else if (!c->self_implemented)
        return 0;
    else
        classes = c->forbidden | (c->dominant_class >= 0 ? 1u << c->dominant_class : 0u);
    if (c)
        for (size_t e = 0; e < c->n_epilogues; e++)
            classes &= ~(1u << c->epilogues[e].cls);   /* allowed within a share the trace measures */
    return classes & ~(1u << KA_CLASS_GLUE) & ~(1u << KA_CLASS_OTHER);
}

struct targets_build {
    unsigned classes;
    cJSON *names, *prefixes;
    cJSON *known_names, *known_prefixes;    /* the other classes' operators: not targeted */
};

static void add_target(void *arg, int cls, const char *name, int prefix)
{
    struct targets_build *b = arg;
    if (!(b->classes & (1u << cls))) {
        cJSON_AddItemToArray(prefix ? b->known_prefixes : b->known_names, cJSON_CreateString(name));
        return;
    }
    if (prefix) {
        cJSON *pair = cJSON_CreateArray();
        cJSON_AddItemToArray(pair, cJSON_CreateString(name));
        cJSON_AddItemToArray(pair, cJSON_CreateString(ka_class_name(cls)));
        cJSON_AddItemToArray(b->prefixes, pair);
    } else if (!cJSON_GetObjectItemCaseSensitive(b->names, name)) {
        cJSON_AddStringToObject(b->names, name, ka_class_name(cls));
    }
}

char *ka_probe_targets_json(const struct ka_contract *c)
{
    struct targets_build b = { .classes = ka_probe_classes(c) };
    if (!b.classes)
        return NULL;
    cJSON *root = cJSON_CreateObject();
    b.names = cJSON_AddObjectToObject(root, "names");
    b.prefixes = cJSON_AddArrayToObject(root, "prefixes");
    /* An ATen operator in no family (embedding_bag doing a GEMM's work) is targeted
       too, as class other: the families name work, they do not bound it.  The
       runner leaves out what is no work of its own (docs/audit.md, "Causal probe"):
       the other classes' operators (glue among them, listed here), views and
       in-place results, operators without a tensor input. */
    cJSON_AddStringToObject(root, "unclassified", ka_class_name(KA_CLASS_OTHER));
    cJSON *known = cJSON_AddObjectToObject(root, "untargeted");
    b.known_names = cJSON_AddArrayToObject(known, "names");
    b.known_prefixes = cJSON_AddArrayToObject(known, "prefixes");
    ka_operator_family_each(add_target, &b);
    char *text = cJSON_PrintUnformatted(root);
    cJSON_Delete(root);
    return text;
}

int ka_probe_vendor_family(const struct ka_work_item *it)
{
    if (it->kind != KA_ITEM_VENDOR_CALL)
        return KA_PROBE_FAMILY_NONE;
    if ((it->shape.library == KAT_LIB_CUBLAS || it->shape.library == KAT_LIB_CUBLASLT) && it->cls == KA_CLASS_GEMM)
        return KA_PROBE_FAMILY_GEMM;
    if (it->shape.library == KAT_LIB_CUDNN && it->cls == KA_CLASS_CONV)
        return KA_PROBE_FAMILY_CONV;
    return KA_PROBE_FAMILY_NONE;
}

/*
 * What the vendor replays say of one library call item, from the narrowest
 * replay that covers it.  The localizing replays replace every call but one
 * (or but one family), and the change is measured against the replay of all:
 * what replacing that call too adds, with everything else already noise (a
 * call replaced alone can change nothing while the output depends on it: a
 * majority vote of three identical GEMMs).  So: the largest such change among
 * the calls of the item's own library and shape (a convolution's calls are
 * matched by library, their shapes not being in the call descriptions), else
 * its family's, else every library call replaced against none.
 */
static double vendor_change(const struct ka_probe_evidence *pr, const struct ka_work_item *it, int family,
                            const char **level)
{
    double worst = -1;
    for (unsigned i = 0; i < pr->n_vendor_localized && i < KA_PROBE_VENDOR_CALLS; i++) {
        const struct ka_probe_vendor_call *v = &pr->vendor_call[i];
        if (v->family != family || v->library != it->shape.library || v->delta < 0 ||
            (family == KA_PROBE_FAMILY_GEMM &&
             (v->m != it->shape.m || v->n != it->shape.n || v->k != it->shape.k)))
            continue;
        if (v->delta > worst)
            worst = v->delta;
    }
    if (worst >= 0) {
        *level = "call";
        return worst;
    }
    if (pr->vendor_family_delta[family] >= 0) {
        *level = "family";
        return pr->vendor_family_delta[family];
    }
    *level = "every-library-call";
    return pr->vendor_delta;
}

int ka_probe_reaches(const struct ka_probe_evidence *pr, const struct ka_work_item *it, double *change,
                     const char **vendor_level)
{
    *vendor_level = NULL;
    if (!pr || pr->state != KA_PROBE_DECIDED)
        return 0;
    /* the dispatcher sees framework work and the library calls the framework makes */
    if ((pr->classes & (1u << it->cls)) &&
        (it->kind == KA_ITEM_FRAMEWORK_KERNELS || (it->kind == KA_ITEM_VENDOR_CALL && !it->below_framework))) {
        *change = pr->class_delta[it->cls] >= 0 ? pr->class_delta[it->cls] : pr->joint_delta;
        return KA_PROBE_DISPATCHER;
    }
    /* a GEMM or a convolution an extension handed to cuBLAS, cuBLASLt or cuDNN itself,
       or that the framework made without dispatching an operator of its class (ATen's
       own BLAS wrappers called from C++): the vendor-boundary replays, which replaced
       those calls' outputs */
    int family = ka_probe_vendor_family(it);
    if (pr->vendor && family && (it->below_framework || !(pr->classes & (1u << it->cls)))) {
        *change = vendor_change(pr, it, family, vendor_level);
        return KA_PROBE_VENDOR;
    }
    /* anything else (a kernel launched without a library call, a library call of
       another kind) is left to launch provenance, the second channel */
    return 0;
}

void ka_probe_fields(struct ka_finding *x, const struct ka_probe_evidence *pr, int cls)
{
    if (pr->classes)
        ka_field_num(x, "output_change", pr->joint_delta);
    if (pr->vendor)
        ka_field_num(x, "vendor_output_change", pr->vendor_delta);
    if (cls >= 0 && pr->class_delta[cls] >= 0)
        ka_field_num(x, "class_output_change", pr->class_delta[cls]);
    ka_field_num(x, "noise_floor", pr->noise_floor);
    ka_field_num(x, "probe_threshold", pr->threshold);
    ka_field_u64(x, "probe_seed", pr->seed);
    if (pr->targets)
        ka_field_str(x, "probe_targets", pr->targets);
}

/* The largest change among one family's calls replayed alone, else the family's
 * own replay, else the joint vendor replay; and its work (2mnk per GEMM
 * described, 0 when unknown). */
static double vendor_family_change(const struct ka_probe_evidence *pr, int family, double *work)
{
    double worst = -1;
    uint64_t described = 0;
    *work = 0;
    for (unsigned i = 0; i < KA_PROBE_VENDOR_CALLS && i < pr->vendor_calls; i++) {
        const struct ka_probe_vendor_call *v = &pr->vendor_call[i];
        if (v->family != family)
            continue;
        described++;
        if (family == KA_PROBE_FAMILY_GEMM && v->m > 0 && v->n > 0 && v->k > 0)
            *work += 2.0 * (double)v->m * (double)v->n * (double)v->k;
        else
            *work = -INFINITY; /* a call of unknown work: the family's is unknown */
        if (i < pr->n_vendor_localized && v->delta > worst)
            worst = v->delta;
    }
    /* calls beyond the ones described (the first KA_PROBE_VENDOR_CALLS) have work of their
       own: unknown, never counted as none (512 small GEMMs are not below a threshold) */
    if (described < pr->vendor_family_calls[family] || !(*work > 0))
        *work = 0;
    if (worst >= 0)
        return worst;
    return pr->vendor_family_delta[family] >= 0 ? pr->vendor_family_delta[family] : pr->vendor_delta;
}

int ka_probe_vouches(const struct ka_probe_evidence *pr)
{
    return pr && pr->state == KA_PROBE_DECIDED && pr->baseline == KA_PROBE_BASELINE_MATCH;
}

int ka_probe_baseline_convicts(struct ka_findings *f, const struct ka_probe_evidence *pr,
                               const struct ka_semantic_evidence *sem, struct ka_analysis *a)
{
    if (!pr || pr->baseline != KA_PROBE_BASELINE_MISMATCH)
        return 0;
    const char *why = pr->baseline_why ? pr->baseline_why : "?";
    /* Only a candidate that matched the reference on every slot answered otherwise
       because the probe watched; one the semantic axis already judges wrong (or could
       not judge) is wrong on the probe's inputs too, which is no evidence about its
       implementation: the probe then clears nothing, and convicts nothing. */
    if (!sem || sem->verdict != KA_PASS) {
        ka_field_str(ka_add_finding(f, KA_AXIS_IMPLEMENTATION, KA_FINDING_SIGNAL, "probe-baseline-mismatch", NULL, 0,
                                    "the causal probe's unperturbed baseline differs from the reference on the "
                                    "probe's own inputs (%s), as the candidate's outputs differ on the semantic "
                                    "axis: the probe clears nothing",
                                    why),
                     "reason", why);
        return 0;
    }
    struct ka_finding *x = ka_add_finding(
        f, KA_AXIS_IMPLEMENTATION, KA_FINDING_CONVICTS, "probe-baseline-mismatch", NULL, 0,
        "the causal probe's unperturbed baseline differs from the reference on the probe's own inputs (%s), where "
        "every slot's output matched it: the candidate answers otherwise while the probe watches, and no replay of "
        "it can clear forbidden work",
        why);
    ka_field_str(x, "channel", "causal-probe");
    ka_field_str(x, "reason", why);
    ka_field_u64(x, "probe_seed", pr->seed);
    struct ka_axis_result *ax = &a->axis[KA_AXIS_IMPLEMENTATION];
    free(ax->root_cause);
    ax->verdict = KA_FAIL;
    if (asprintf(&ax->root_cause, "probe-baseline-mismatch: the causal probe's unperturbed baseline differs from the "
                                  "reference on the probe's inputs, where every slot matched (%s)",
                 why) < 0)
        ax->root_cause = NULL;
    return 1;
}

/* Without trace axes, the vendor replays: library calls of a targeted class whose
 * outputs the candidate's output depends on convict as the dispatcher's classes do. */
static unsigned vendor_only_verdict(struct ka_findings *f, const struct ka_probe_evidence *pr,
                                    const struct ka_contract *c, double R)
{
    static const int family_class[KA_PROBE_FAMILIES] = { -1, KA_CLASS_GEMM, KA_CLASS_CONV };
    unsigned convicting = 0, targeted = ka_probe_classes(c);
    for (int family = 1; pr->vendor && family < KA_PROBE_FAMILIES; family++) {
        int cls = family_class[family];
        if (!pr->vendor_family_calls[family] || !(targeted & (1u << cls)))
            continue;
        double work, change = vendor_family_change(pr, family, &work);
        if (!(change > pr->threshold))
            continue;
        double share = R > 0 && work > 0 ? work / R : -1;
        int dom = c && cls == c->dominant_class;
        if (share >= 0 && share < (dom ? 0.05 : 0.30)) {
            struct ka_finding *x = ka_add_finding(
                f, KA_AXIS_IMPLEMENTATION, KA_FINDING_SIGNAL, "below-threshold", NULL, 0,
                "the candidate's output depends on its %s library calls (output change %.3g), whose work is %.3g%% "
                "of the reference's (threshold %d%%)",
                ka_class_name(cls), change, 100 * share, dom ? 5 : 30);
            ka_field_str(x, "class", ka_class_name(cls));
            ka_field_num(x, "share", share);
            ka_probe_fields(x, pr, cls);
            continue;
        }
        convicting++;
        /* the calls replayed alone whose outputs the candidate's does not depend on: reported */
        for (unsigned i = 0; i < pr->n_vendor_localized && i < KA_PROBE_VENDOR_CALLS; i++) {
            const struct ka_probe_vendor_call *v = &pr->vendor_call[i];
            if (v->family != family || v->delta > pr->threshold)
                continue;
            struct ka_finding *x = ka_add_finding(
                f, KA_AXIS_IMPLEMENTATION, KA_FINDING_SIGNAL, "forbidden-work-unused", NULL, 0,
                "library call %u of the candidate's (%s, %lld x %lld x %lld) is forbidden %s work its output does not "
                "depend on: with that call's output alone replaced by noise, it moved by %.3g (threshold %.3g)",
                i, kat_vendor_library_name(v->library) ? kat_vendor_library_name(v->library) : "?", (long long)v->m,
                (long long)v->n, (long long)v->k, ka_class_name(cls), v->delta, pr->threshold);
            ka_field_str(x, "class", ka_class_name(cls));
            ka_field_str(x, "vendor_localized", "call");
            ka_field_num(x, "item_output_change", v->delta);
        }
        struct ka_finding *x = ka_add_finding(
            f, KA_AXIS_IMPLEMENTATION, KA_FINDING_CONVICTS, "forbidden-work-used", NULL, 0,
            "the candidate's output depends on forbidden %s work it handed to a library: with the outputs of its %llu "
            "%s call%s replaced by noise after they returned (seed %llu; the largest change of a call replayed alone "
            "where there were several), the output moved by %.3g (threshold %.3g; two unperturbed calls differ by "
            "%.3g)",
            ka_class_name(cls), (unsigned long long)pr->vendor_family_calls[family],
            family == KA_PROBE_FAMILY_GEMM ? "cuBLAS/cuBLASLt" : "cuDNN", pr->vendor_family_calls[family] == 1 ? "" : "s",
            (unsigned long long)pr->seed, change, pr->threshold, pr->noise_floor);
        ka_field_str(x, "class", ka_class_name(cls));
        ka_field_str(x, "channel", "causal-probe-vendor");
        if (work > 0)
            ka_field_num(x, "amount", work);
        if (share >= 0)
            ka_field_num(x, "share", share);
        ka_probe_fields(x, pr, cls);
    }
    return convicting;
}

/*
 * Without trace axes: the probe's own selection.  A targeted class convicts
 * when the output moved past the threshold and its operators' work (from
 * their sizes) reaches 5% of the reference's for the dominant class or 30%
 * otherwise; with the reference's work measured from a phase no trace gives
 * here, any dependence convicts.
 */
void ka_probe_only_verdict(struct ka_findings *f, const struct ka_probe_evidence *pr, const struct ka_contract *c,
                           const struct ka_semantic_evidence *sem, struct ka_analysis *a)
{
    if (pr && pr->state == KA_PROBE_UNRESOLVED)
        ka_field_str(ka_add_finding(f, KA_AXIS_IMPLEMENTATION, KA_FINDING_SIGNAL, "causal-probe-unresolved", NULL, 0,
                                    "the causal probe could not decide (%s)", pr->why ? pr->why : "?"),
                     "reason", pr->why ? pr->why : "?");
    if (ka_probe_baseline_convicts(f, pr, sem, a) || !pr || pr->state != KA_PROBE_DECIDED)
        return;
    if (!(pr->joint_delta > pr->threshold) && !(pr->vendor && pr->vendor_delta > pr->threshold)) {
        if (!ka_probe_vouches(pr)) {
            /* an output the probe did not see match the reference says nothing of dependence */
            ka_field_str(ka_add_finding(f, KA_AXIS_IMPLEMENTATION, KA_FINDING_SIGNAL, "probe-baseline-unverified",
                                        NULL, 0,
                                        "the causal probe saw no dependence on forbidden work, but its baseline "
                                        "could not be checked against the reference (%s): that clears nothing",
                                        pr->baseline_why ? pr->baseline_why : "?"),
                         "reason", pr->baseline_why ? pr->baseline_why : "?");
            return;
        }
        struct ka_finding *x = ka_add_finding(
            f, KA_AXIS_IMPLEMENTATION, KA_FINDING_SIGNAL, "forbidden-work-unused", NULL, 0,
            "the candidate handed forbidden work to the framework or a library (%s%s%llu library calls), but its output "
            "does not depend on it: with those outputs replaced by noise (seed %llu), it moved by %.3g (threshold %.3g)",
            pr->targets ? pr->targets : "", pr->targets ? "; " : "", (unsigned long long)pr->vendor_calls,
            (unsigned long long)pr->seed, pr->classes ? pr->joint_delta : pr->vendor_delta, pr->threshold);
        ka_probe_fields(x, pr, -1);
        return;
    }
    double R = c && !c->measure_reference ? c->reference_work : 0;
    unsigned convicting = 0;
    for (int cls = 0; cls < KA_CLASS_COUNT; cls++) {
        if (!(pr->classes & (1u << cls)))
            continue;
        /* each class by its own replay where there was one (localization) */
        double change = pr->class_delta[cls] >= 0 ? pr->class_delta[cls] : pr->joint_delta;
        if (!(change > pr->threshold))
            continue;
        double share = R > 0 ? pr->class_work[cls] / R : -1;
        int dom = c && cls == c->dominant_class;
        if (share >= 0 && pr->class_work[cls] > 0 && share < (dom ? 0.05 : 0.30)) {
            struct ka_finding *x = ka_add_finding(
                f, KA_AXIS_IMPLEMENTATION, KA_FINDING_SIGNAL, "below-threshold", NULL, 0,
                "the candidate's output depends on its %s operators (%s; output change %.3g), whose work is %.3g%% "
                "of the reference's (threshold %d%%)",
                ka_class_name(cls), pr->targets ? pr->targets : "?", change, 100 * share, dom ? 5 : 30);
            ka_field_str(x, "class", ka_class_name(cls));
            ka_field_num(x, "share", share);
            ka_probe_fields(x, pr, cls);
            continue;
        }
        convicting++;
        struct ka_finding *x = ka_add_finding(
            f, KA_AXIS_IMPLEMENTATION, KA_FINDING_CONVICTS, "forbidden-work-used", NULL, 0,
            "the candidate's output depends on forbidden %s work it handed to the framework: with the outputs of "
            "its %s operators (%s) replaced by noise (seed %llu), the output moved by %.3g (threshold %.3g; two "
            "unperturbed calls differ by %.3g)",
            ka_class_name(cls), ka_class_name(cls), pr->targets ? pr->targets : "?", (unsigned long long)pr->seed,
            change, pr->threshold, pr->noise_floor);
        ka_field_str(x, "class", ka_class_name(cls));
        ka_field_num(x, "amount", pr->class_work[cls]);
        if (share >= 0)
            ka_field_num(x, "share", share);
        ka_probe_fields(x, pr, cls);
    }
    convicting += vendor_only_verdict(f, pr, c, R);
    if (!convicting)
        return;
    struct ka_axis_result *ax = &a->axis[KA_AXIS_IMPLEMENTATION];
    free(ax->root_cause);
    ax->verdict = KA_FAIL;
    double moved = pr->classes && pr->joint_delta > pr->threshold ? pr->joint_delta : pr->vendor_delta;
    if (asprintf(&ax->root_cause, "the output depends on forbidden work handed to the %s (causal probe: output "
                                  "change %.3g)",
                 pr->classes && pr->joint_delta > pr->threshold ? "framework" : "vendor libraries", moved) < 0)
        ax->root_cause = NULL;
}
