/* audit_probe.c - the causal probe's evidence from the runner's log and output files (audit_probe.h). */
#define _GNU_SOURCE
#include "audit_probe.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "contract.h"
#include "events.h"
#include "json_writer.h"
#include "tensor_file.h"

struct read_state {
    struct audit_probe *p;
    const char *dir;
    const struct kat_tol_params *params;
    int events;
};

static void unresolved(struct audit_probe *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void unresolved(struct audit_probe *p, const char *fmt, ...)
{
    if (p->ev.state == KA_PROBE_UNRESOLVED)
        return; /* the first reason stands */
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(p->why, sizeof p->why, fmt, ap);
    va_end(ap);
    p->ev.state = KA_PROBE_UNRESOLVED;
    p->ev.why = p->why;
}


/* A file the runner wrote, named in its log (relative to the runner's directory,
 * which it may not leave); who is "the baseline replay", "the reference", ... */
static struct kat_tensor_file *open_runner_file(struct audit_probe *p, const char *dir, const char *file,
                                                const char *who)
{
    if (!file || strstr(file, "..") || file[0] == '/') {
        unresolved(p, "%s names no output file of the runner's", who);
        return NULL;
    }
    char path[4096], err[512];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    struct kat_tensor_file *f;
    if (kat_tensor_file_open(path, &f, err, sizeof err) != 0) {
        unresolved(p, "%s's output does not read: %s", who, err);
        return NULL;
    }
    return f;
}

/* A replay's output file, opened. */
static struct kat_tensor_file *open_output(struct audit_probe *p, const char *dir, const cJSON *replay)
{
    const char *name = kat_event_str(replay, "name");
    char who[160];
    snprintf(who, sizeof who, "the %s replay", name ? name : "?");
    return open_runner_file(p, dir, kat_event_str(replay, "file"), who);
}

/* Two leaves of the same path, kind, dtype and shape. */
static int same_layout(const struct kat_tensor_leaf *a, const struct kat_tensor_leaf *b)
{
    return !strcmp(a->path, b->path) && a->kind == b->kind && a->dtype == b->dtype && a->ndim == b->ndim &&
           a->numel == b->numel && !memcmp(a->shape, b->shape, a->ndim * sizeof a->shape[0]);
}

/*
 * The relative change of out against base: the largest |out - base| of any
 * floating leaf over the largest |base| of that leaf; -1 with a reason when
 * the structure, shapes or dtypes differ.
 */
static double output_change(struct audit_probe *p, const char *name, const struct kat_tensor_file *base,
                            const struct kat_tensor_file *out)
{
    if (base->n_leaves != out->n_leaves) {
        unresolved(p, "the %s replay's output has %u leaves, the baseline's %u", name, out->n_leaves, base->n_leaves);
        return -1;
    }
    double worst = 0;
    for (uint32_t i = 0; i < base->n_leaves; i++) {
        const struct kat_tensor_leaf *b = &base->leaves[i], *o = &out->leaves[i];
        if (!same_layout(b, o)) {
            unresolved(p, "the %s replay's output leaf %s differs from the baseline's in structure, shape or dtype",
                       name, b->path);
            return -1;
        }
        if (!kat_dtype_is_floating(b->dtype) || kat_dtype_is_complex(b->dtype)) {
            /* integers, bools (argmax's indices), complex values and Python scalars: any
               difference is a change of the whole (1) */
            if (b->nbytes != o->nbytes || (b->nbytes && memcmp(b->data, o->data, b->nbytes)))
                worst = worst > 1 ? worst : 1;
            continue;
        }
        double *bv = kat_leaf_to_double(b), *ov = kat_leaf_to_double(o);
        uint64_t n = kat_leaf_double_count(b);
        if (!bv || !ov) {
            free(bv);
            free(ov);
            unresolved(p, "out of memory comparing the %s replay", name);
            return -1;
        }
        double scale = 0, diff = 0;
        for (uint64_t k = 0; k < n; k++) {
            if (isfinite(bv[k]) && fabs(bv[k]) > scale)
                scale = fabs(bv[k]);
            double d = ov[k] == bv[k] ? 0 : fabs(ov[k] - bv[k]);   /* equal infinities: no change */
            if (isnan(d))
                d = isnan(ov[k]) && isnan(bv[k]) ? 0 : INFINITY;  /* a NaN appearing is a change */
            if (d > diff)
                diff = d;
        }
        free(bv);
        free(ov);
        double rel = diff == 0 ? 0 : diff / (scale > 0 ? scale : 1e-30);
        if (rel > worst)
            worst = rel;
    }
    return worst;
}

static void read_targets(struct audit_probe *p, const cJSON *targets)
{
    size_t used = 0;
    const cJSON *t;
    cJSON_ArrayForEach(t, targets)
    {
        const char *op = kat_event_str(t, "op"), *cls_name = kat_event_str(t, "class");
        int cls = cls_name ? ka_class_parse(cls_name) : -1;
        if (!op || cls < 0)
            continue;
        double calls = kat_event_num(t, "calls", 0);
        p->ev.classes |= 1u << cls;
        p->ev.class_calls[cls] += calls > 0 ? (uint64_t)calls : 0;
        /* the work from the sizes of the calls logged, scaled to all calls */
        const cJSON *sizes = cJSON_GetObjectItemCaseSensitive(t, "sizes");
        double work = 0;
        int logged = 0;
        const cJSON *one;
        cJSON_ArrayForEach(one, sizes)
        {
            char *text = cJSON_PrintUnformatted(one);
            char *msg = NULL;
            if (text && asprintf(&msg, "aten::%s, sizes = %s", op, text) >= 0) {
                const char *unit;
                work += ka_operator_work(msg, cls, &unit);
                logged++;
            }
            free(msg);
            free(text);
        }
        if (logged && calls > logged)
            work *= calls / logged;
        p->ev.class_work[cls] += work;
        if (used < sizeof p->targets - 1) {
            int w = snprintf(p->targets + used, sizeof p->targets - used, "%s%s x%.0f (%s)", used ? ", " : "", op,
                             calls, cls_name);
            used += w > 0 ? (size_t)w : 0;
            if (used >= sizeof p->targets)
                used = sizeof p->targets - 1;
        }
    }
    p->ev.targets = p->targets;
}

static int family_parse(const char *name)
{
    return !name ? KA_PROBE_FAMILY_NONE
           : !strcmp(name, "gemm") ? KA_PROBE_FAMILY_GEMM
           : !strcmp(name, "conv") ? KA_PROBE_FAMILY_CONV
                                   : KA_PROBE_FAMILY_NONE;
}

static const char *family_name(int family)
{
    return family == KA_PROBE_FAMILY_GEMM ? "gemm" : family == KA_PROBE_FAMILY_CONV ? "conv" : "?";
}

/* The baseline's library calls: per family, and the first ones as the preload described them. */
static void read_vendor_calls(struct audit_probe *p, const cJSON *e)
{
    const cJSON *families = cJSON_GetObjectItemCaseSensitive(e, "vendor_families"), *f;
    if (!cJSON_IsObject(families)) {
        /* a probe event from before the families: its vendor channel counted cuBLAS GEMMs only */
        p->ev.vendor_family_calls[KA_PROBE_FAMILY_GEMM] = p->ev.vendor_calls;
    } else {
        uint64_t sum = 0;
        cJSON_ArrayForEach(f, families)
        {
            int family = family_parse(f->string);
            if (family && cJSON_IsNumber(f) && f->valuedouble >= 0) {
                p->ev.vendor_family_calls[family] = (uint64_t)f->valuedouble;
                sum += (uint64_t)f->valuedouble;
            }
        }
        if (sum != p->ev.vendor_calls)
            unresolved(p, "the probe's library calls by family add up to %llu, not to its %llu calls",
                       (unsigned long long)sum, (unsigned long long)p->ev.vendor_calls);
    }
    const cJSON *list = cJSON_GetObjectItemCaseSensitive(e, "vendor_call_list"), *c;
    cJSON_ArrayForEach(c, list)
    {
        if (p->vendor_listed >= KA_PROBE_VENDOR_CALLS)
            break;
        double library = kat_event_num(c, "library", -1);
        struct ka_probe_vendor_call *v = &p->ev.vendor_call[p->vendor_listed];
        *v = (struct ka_probe_vendor_call){ .family = family_parse(kat_event_str(c, "family")),
                                            .library = library >= 1 && library <= 3 ? (uint32_t)library : 0,
                                            .m = (int64_t)kat_event_num(c, "m", 0),
                                            .n = (int64_t)kat_event_num(c, "n", 0),
                                            .k = (int64_t)kat_event_num(c, "k", 0), .delta = -1 };
        p->vendor_listed++;
    }
}

static void baseline_verdict(struct audit_probe *p, enum ka_probe_baseline b, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void baseline_verdict(struct audit_probe *p, enum ka_probe_baseline b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(p->baseline_why, sizeof p->baseline_why, fmt, ap);
    va_end(ap);
    p->ev.baseline = b;
    p->ev.baseline_why = p->baseline_why;
}

/* One floating leaf of the baseline against the reference's, with the
 * tolerance calibrated on the reference's two precisions, as a slot's call
 * is judged (semantic_compare.c).  1 when it matches, 0 when it does not
 * (the verdict set), -1 out of memory. */
static int baseline_leaf(struct audit_probe *p, const struct kat_tol_params *params, const struct kat_tensor_leaf *r,
                         const struct kat_tensor_leaf *r64, const struct kat_tensor_leaf *k)
{
    double *vr = kat_leaf_to_double(r), *v64 = kat_leaf_to_double(r64), *vk = kat_leaf_to_double(k);
    size_t n = (size_t)kat_leaf_double_count(r);
    int ok = -1;
    struct kat_tol_calibration cal;
    struct kat_tol_comparison cmp;
    if (!vr || !v64 || !vk || kat_tol_calibrate(vr, v64, n, params, &cal) != 0 ||
        kat_tol_compare(vk, vr, v64, n, params, &cal, &cmp) != 0)
        goto out;
    ok = 0;
    if ((cal.status == KAT_TOL_OK && cmp.verdict == KAT_TOL_FAIL) || cmp.n_nonfinite_candidate)
        baseline_verdict(p, KA_PROBE_BASELINE_MISMATCH,
                         "leaf %s: %zu of %zu elements outside the allowance; worst at element %zu: baseline %.9g, "
                         "reference %.9g (fp64 %.9g), allowance %.3g",
                         r->path, cmp.n_fail, n, cmp.worst.index, cmp.worst.candidate, cmp.worst.reference,
                         cmp.worst.reference64, cmp.worst.allowance);
    else if (cal.status != KAT_TOL_OK)
        baseline_verdict(p, KA_PROBE_BASELINE_UNVERIFIED, "leaf %s: the tolerance cannot be calibrated: %s", r->path,
                         cal.reason_text);
    else
        ok = 1;
out:
    free(vr);
    free(v64);
    free(vk);
    return ok;
}

/* The same layout and, for sampled leaves, the same elements sampled. */
static int same_structure(const struct kat_tensor_leaf *a, const struct kat_tensor_leaf *b)
{
    return same_layout(a, b) && a->sampled == b->sampled &&
           (!a->sampled || !memcmp(a->sample_index, b->sample_index, 8 * a->sampled));
}

/*
 * The baseline replay's output against the reference's on the probe's inputs
 * (the runner's "reference": its files, written in the reference's process).
 * Every leaf must have the reference's structure; floating leaves must be
 * within the calibrated tolerance, the others equal.
 */
static void check_baseline(struct audit_probe *p, const char *dir, const cJSON *e, const struct kat_tensor_file *base,
                           const struct kat_tol_params *params)
{
    const cJSON *ref = cJSON_GetObjectItemCaseSensitive(e, "reference");
    if (!cJSON_IsObject(ref)) {
        baseline_verdict(p, KA_PROBE_BASELINE_UNCHECKED,
                         "the runner logged no reference output on the probe's inputs (a runner before the check)");
        return;
    }
    const char *error = kat_event_str(ref, "error");
    if (!kat_event_str(ref, "ref") || !kat_event_str(ref, "ref64")) {
        baseline_verdict(p, KA_PROBE_BASELINE_UNVERIFIED, "%s",
                         error ? error : "the runner logged no reference output file on the probe's inputs");
        return;
    }
    struct kat_tensor_file *r = open_runner_file(p, dir, kat_event_str(ref, "ref"), "the reference");
    struct kat_tensor_file *r64 = r ? open_runner_file(p, dir, kat_event_str(ref, "ref64"), "the fp64 reference")
                                    : NULL;
    if (!r || !r64)
        goto out;   /* the probe is unresolved, saying which file */
    if (r->n_leaves != base->n_leaves || r64->n_leaves != r->n_leaves) {
        baseline_verdict(p, KA_PROBE_BASELINE_MISMATCH, "the baseline's output has %u leaves, the reference's %u",
                         base->n_leaves, r->n_leaves);
        goto out;
    }
    baseline_verdict(p, KA_PROBE_BASELINE_MATCH, "every leaf within the calibrated tolerance");
    for (uint32_t i = 0; i < r->n_leaves; i++) {
        const struct kat_tensor_leaf *lr = &r->leaves[i], *l64 = &r64->leaves[i], *lk = &base->leaves[i];
        if (!same_structure(lr, lk)) {
            baseline_verdict(p, KA_PROBE_BASELINE_MISMATCH,
                             "leaf %s differs from the reference's in structure, shape or dtype", lr->path);
            goto out;
        }
        if (!kat_dtype_is_floating(lr->dtype) || kat_dtype_is_complex(lr->dtype)) {
            if (lr->nbytes != lk->nbytes || (lr->nbytes && memcmp(lr->data, lk->data, lr->nbytes))) {
                baseline_verdict(p, KA_PROBE_BASELINE_MISMATCH, "leaf %s differs from the reference's", lr->path);
                goto out;
            }
            continue;
        }
        int got = baseline_leaf(p, params, lr, l64, lk);
        if (got < 0)
            baseline_verdict(p, KA_PROBE_BASELINE_UNVERIFIED, "out of memory comparing leaf %s", lr->path);
        if (got <= 0 && p->ev.baseline == KA_PROBE_BASELINE_MISMATCH)
            goto out;
        /* an uncalibratable leaf leaves the baseline unverified, but a later one may still mismatch */
    }
out:
    kat_tensor_file_close(r);
    kat_tensor_file_close(r64);
}

/* Which replays the probe's log had, and how many library calls had one of
 * their own (all but that one replaced). */
struct replay_tally {
    int baseline, repeat, joint;
    unsigned localized;
};

/* A vendor-except replay against the vendor replay: how much replacing that
 * one call (or family) too moves the output.  -1: undecided (said). */
static int read_vendor_except(struct audit_probe *p, const cJSON *r, const char *name,
                              struct kat_tensor_file *vendor_out, struct kat_tensor_file *f,
                              struct replay_tally *tally)
{
    if (!vendor_out) {
        kat_tensor_file_close(f);
        unresolved(p, "the %s replay comes before the vendor replay it is compared with", name);
        return -1;
    }
    double marginal = output_change(p, name, vendor_out, f);
    kat_tensor_file_close(f);
    if (marginal < 0)
        return -1;
    double call = kat_event_num(r, "except_call", -1);
    int family = family_parse(kat_event_str(r, "except_family"));
    if (!strncmp(name, "vendor-except-call:", 19) && call >= 0 && call < p->vendor_listed &&
        p->ev.vendor_call[(unsigned)call].delta < 0) {
        p->ev.vendor_call[(unsigned)call].delta = marginal;
        tally->localized++;
    } else if (!strncmp(name, "vendor-except:", 14) && family) {
        p->ev.vendor_family_delta[family] = marginal;
    }
    return 0;
}

/* The replays, decided here from their files: the baseline (checked against
 * the reference), then the repeat, joint, class:C, vendor and vendor-except
 * replays against it.  Stops at the first that cannot be read (said). */
static void read_replays(struct read_state *st, const cJSON *e, struct replay_tally *tally)
{
    struct audit_probe *p = st->p;
    const cJSON *replays = cJSON_GetObjectItemCaseSensitive(e, "replays"), *r;
    struct kat_tensor_file *base = NULL, *vendor_out = NULL;
    cJSON_ArrayForEach(r, replays)
    {
        const char *name = kat_event_str(r, "name");
        if (!name) {
            /* what it is compared with is unknown: a malformed answer, never one to pass over */
            unresolved(p, "a replay of the probe's answer has no name");
            break;
        }
        p->replays++;
        if (kat_event_num(r, "perturbed", -1) != kat_event_num(r, "expected", -2)) {
            unresolved(p, "the %s replay perturbed %.0f of its %.0f targets", name, kat_event_num(r, "perturbed", -1),
                       kat_event_num(r, "expected", -1));
            break;
        }
        struct kat_tensor_file *f = open_output(p, st->dir, r);
        if (!f)
            break;
        if (!strcmp(name, "baseline")) {
            if (base) {
                kat_tensor_file_close(f);
                unresolved(p, "the probe's log has a second baseline replay");
                break;
            }
            base = f;
            tally->baseline = 1;
            check_baseline(p, st->dir, e, base, st->params);
            continue;
        }
        if (!base) {
            kat_tensor_file_close(f);
            unresolved(p, "the %s replay comes before any baseline", name);
            break;
        }
        if (!strncmp(name, "vendor-except", 13)) {
            if (read_vendor_except(p, r, name, vendor_out, f, tally) != 0)
                break;
            continue;
        }
        double change = output_change(p, name, base, f);
        /* the vendor replay's output stays open: the replays of all calls but one are compared with it */
        if (!strcmp(name, "vendor") && !vendor_out)
            vendor_out = f;
        else
            kat_tensor_file_close(f);
        if (change < 0)
            break;
        if (!strcmp(name, "repeat")) {
            p->ev.noise_floor = change;
            tally->repeat = 1;
        } else if (!strcmp(name, "joint")) {
            p->ev.joint_delta = change;
            tally->joint = 1;
        } else if (!strcmp(name, "vendor")) {
            p->ev.vendor_delta = change;
            p->ev.vendor = 1;
        } else if (!strncmp(name, "class:", 6)) {
            int cls = ka_class_parse(name + 6);
            if (cls >= 0)
                p->ev.class_delta[cls] = change;
        }
    }
    kat_tensor_file_close(base);
    kat_tensor_file_close(vendor_out);
}

/* The calls one at a time count only when every call had its replay; a
 * single call, or a single family, alone in the vendor replay is localized
 * by it. */
static void localize_vendor_calls(struct audit_probe *p, unsigned localized)
{
    if (localized && (localized != p->vendor_listed || p->vendor_listed != p->ev.vendor_calls)) {
        if (!p->localization_why[0])
            snprintf(p->localization_why, sizeof p->localization_why,
                     "%u of the %llu library calls had their replay", localized,
                     (unsigned long long)p->ev.vendor_calls);
        localized = 0;
    }
    if (!p->ev.vendor)
        return;
    if (!localized && p->ev.vendor_calls == 1 && p->vendor_listed == 1) {
        p->ev.vendor_call[0].delta = p->ev.vendor_delta;
        localized = 1;
    }
    for (int f = 1; f < KA_PROBE_FAMILIES; f++)
        if (p->ev.vendor_family_calls[f] && p->ev.vendor_family_calls[f] == p->ev.vendor_calls)
            p->ev.vendor_family_delta[f] = p->ev.vendor_delta;
    p->ev.n_vendor_localized = localized;
}

/* Whether the replays read decide the probe: DECIDED, or unresolved (said). */
static void decide_probe(struct audit_probe *p, const struct replay_tally *tally)
{
    if (!tally->baseline) {
        unresolved(p, "the probe's log lacks its baseline replay");
        return;
    }
    localize_vendor_calls(p, tally->localized);
    if (!tally->repeat || (!tally->joint && !p->ev.vendor && !p->vendor_why[0]) || (p->ev.classes && !tally->joint)) {
        unresolved(p, "the probe's log lacks its %s replay", tally->repeat ? "joint" : "repeat");
        return;
    }
    if (p->ev.vendor_calls && !p->ev.vendor && !p->vendor_why[0]) {
        unresolved(p, "the baseline made %llu library calls and the probe's log has no vendor replay",
                   (unsigned long long)p->ev.vendor_calls);
        return;
    }
    /* the output must be reproducible well below the threshold, or a change means nothing */
    if (p->ev.noise_floor > p->ev.threshold / 10) {
        unresolved(p, "two unperturbed calls differ by %.3g, above a tenth of the threshold %.3g: the candidate's "
                      "output is not reproducible enough for the counterfactual",
                   p->ev.noise_floor, p->ev.threshold);
        return;
    }
    if (!p->ev.classes && !p->ev.vendor) {
        unresolved(p, "vendor-not-perturbed: %s", p->vendor_why[0] ? p->vendor_why : "nothing was perturbed");
        return;
    }
    p->ev.state = KA_PROBE_DECIDED;
}

static int on_probe(const cJSON *e, unsigned lineno, void *arg)
{
    struct read_state *st = arg;
    struct audit_probe *p = st->p;
    if (st->events++) {
        unresolved(p, "events.jsonl line %u: a second probe event (the runner writes one): the probe's evidence was "
                      "written by someone else too",
                   lineno);
        return 1;
    }
    p->seconds = kat_event_num(e, "seconds", 0);
    p->ev.seed = (uint64_t)kat_event_num(e, "seed", 0);
    const char *status = kat_event_str(e, "status");
    if (!status || !strcmp(status, "unresolved")) {
        unresolved(p, "%s: %s", kat_event_str(e, "check") ? kat_event_str(e, "check") : "probe",
                   kat_event_str(e, "error") ? kat_event_str(e, "error") : "(no message)");
        return 0;
    }
    read_targets(p, cJSON_GetObjectItemCaseSensitive(e, "targets"));
    double vc = kat_event_num(e, "vendor_calls", 0);
    p->ev.vendor_calls = vc > 0 ? (uint64_t)vc : 0;
    read_vendor_calls(p, e);
    const char *vendor_why = kat_event_str(e, "vendor_unresolved");
    if (vendor_why) /* the vendor replay did not decide: its calls are left to launch provenance */
        snprintf(p->vendor_why, sizeof p->vendor_why, "%s", vendor_why);
    const char *localization_why = kat_event_str(e, "vendor_localization_unresolved");
    if (localization_why)
        snprintf(p->localization_why, sizeof p->localization_why, "%s", localization_why);
    struct replay_tally tally = { 0, 0, 0, 0 };
    read_replays(st, e, &tally);
    if (p->ev.state == KA_PROBE_UNRESOLVED)
        return 0;
    /* no targets: the baseline and the repeat still ran, and the baseline is still checked */
    if (!strcmp(status, "no-targets")) {
        if (!tally.baseline) {
            /* "no targets" is the candidate's process's word: without the replay that
               shows it, nothing backs it (a forged answer) */
            unresolved(p, "the probe says it found no targets, but its log has no baseline replay");
            return 0;
        }
        p->ev.state = KA_PROBE_NO_TARGETS;
        return 0;
    }
    decide_probe(p, &tally);
    return 0;
}

void audit_probe_read(const char *runner_dir, int planned, const struct kat_tol_params *params,
                      struct audit_probe *p)
{
    memset(p, 0, sizeof *p);
    p->planned = planned;
    p->ev.threshold = AUDIT_PROBE_THRESHOLD;
    for (int i = 0; i < KA_CLASS_COUNT; i++)
        p->ev.class_delta[i] = -1;
    for (int i = 0; i < KA_PROBE_FAMILIES; i++)
        p->ev.vendor_family_delta[i] = -1;
    if (!planned)
        return;
    struct read_state st = { .p = p, .dir = runner_dir, .params = params };
    kat_events_each(runner_dir, "probe", on_probe, &st);
    if (!st.events && p->ev.state == KA_PROBE_NOT_RUN)
        unresolved(p, "the runner logged no probe (it stopped before, or its log was cut)");
    /* the classes alone: when only one was perturbed, its change is the joint one */
    int n = __builtin_popcount(p->ev.classes);
    for (int i = 0; i < KA_CLASS_COUNT && n == 1 && p->ev.state == KA_PROBE_DECIDED; i++)
        if (p->ev.classes & (1u << i))
            p->ev.class_delta[i] = p->ev.joint_delta;
}

const char *audit_probe_baseline_name(enum ka_probe_baseline b)
{
    switch (b) {
    case KA_PROBE_BASELINE_MATCH: return "match";
    case KA_PROBE_BASELINE_MISMATCH: return "mismatch";
    case KA_PROBE_BASELINE_UNVERIFIED: return "unverified";
    default: return "unchecked";
    }
}

static const char *state_name(enum ka_probe_state s)
{
    switch (s) {
    case KA_PROBE_DECIDED: return "decided";
    case KA_PROBE_NO_TARGETS: return "no-targets";
    case KA_PROBE_UNRESOLVED: return "unresolved";
    default: return "not-run";
    }
}

void audit_probe_write_json(struct kat_json *j, const struct audit_probe *p)
{
    kat_json_open(j, "probe", '{');
    kat_json_bool(j, "planned", p->planned);
    kat_json_str(j, "state", state_name(p->ev.state));
    if (p->ev.why)
        kat_json_str(j, "why", p->ev.why);
    kat_json_double(j, "threshold", p->ev.threshold);
    kat_json_u64(j, "seed", p->ev.seed);
    if (p->planned) {
        kat_json_open(j, "baseline", '{');
        kat_json_str(j, "state", audit_probe_baseline_name(p->ev.baseline));
        if (p->ev.baseline_why)
            kat_json_str(j, "why", p->ev.baseline_why);
        kat_json_close(j, '}');
    }
    if (p->ev.state == KA_PROBE_DECIDED) {
        if (p->ev.classes)
            kat_json_double(j, "output_change", p->ev.joint_delta);
        else
            kat_json_null(j, "output_change");
        kat_json_double(j, "noise_floor", p->ev.noise_floor);
    }
    kat_json_u64(j, "vendor_calls", p->ev.vendor_calls);
    if (p->vendor_why[0])
        kat_json_str(j, "vendor_unresolved", p->vendor_why);
    if (p->ev.vendor)
        kat_json_double(j, "vendor_output_change", p->ev.vendor_delta);
    else
        kat_json_null(j, "vendor_output_change");
    if (p->ev.vendor_calls) {
        kat_json_open(j, "vendor_families", '[');
        for (int f = 1; f < KA_PROBE_FAMILIES; f++) {
            if (!p->ev.vendor_family_calls[f])
                continue;
            kat_json_open(j, NULL, '{');
            kat_json_str(j, "family", family_name(f));
            kat_json_u64(j, "calls", p->ev.vendor_family_calls[f]);
            if (p->ev.vendor_family_delta[f] >= 0)
                kat_json_double(j, "output_change", p->ev.vendor_family_delta[f]);
            kat_json_close(j, '}');
        }
        kat_json_close(j, ']');
        kat_json_open(j, "vendor_calls_localized", '[');
        for (unsigned i = 0; i < p->ev.n_vendor_localized; i++) {
            const struct ka_probe_vendor_call *v = &p->ev.vendor_call[i];
            kat_json_open(j, NULL, '{');
            kat_json_str(j, "family", family_name(v->family));
            kat_json_str(j, "library", v->library == 1 ? "cublas" : v->library == 2 ? "cublasLt" : v->library == 3 ? "cudnn" : "?");
            if (v->family == KA_PROBE_FAMILY_GEMM) {
                kat_json_i64(j, "m", v->m);
                kat_json_i64(j, "n", v->n);
                kat_json_i64(j, "k", v->k);
            }
            kat_json_double(j, "output_change", v->delta);
            kat_json_close(j, '}');
        }
        kat_json_close(j, ']');
        if (p->localization_why[0])
            kat_json_str(j, "vendor_localization_unresolved", p->localization_why);
    }
    if (p->ev.targets)
        kat_json_str(j, "targets", p->ev.targets);
    kat_json_open(j, "classes", '[');
    for (int c = 0; c < KA_CLASS_COUNT; c++) {
        if (!(p->ev.classes & (1u << c)))
            continue;
        kat_json_open(j, NULL, '{');
        kat_json_str(j, "class", ka_class_name(c));
        kat_json_u64(j, "calls", p->ev.class_calls[c]);
        kat_json_double(j, "work", p->ev.class_work[c]);
        if (p->ev.class_delta[c] >= 0)
            kat_json_double(j, "output_change", p->ev.class_delta[c]);
        kat_json_close(j, '}');
    }
    kat_json_close(j, ']');
    kat_json_u64(j, "replays", p->replays);
    kat_json_double(j, "seconds", p->seconds);
    kat_json_close(j, '}');
}

void audit_probe_print(FILE *f, const struct audit_probe *p)
{
    if (!p->planned)
        return;
    if (p->ev.baseline == KA_PROBE_BASELINE_MISMATCH)
        fprintf(f, "  causal probe    its unperturbed baseline differs from the reference on the probe's inputs: %s\n",
                p->ev.baseline_why ? p->ev.baseline_why : "?");
    switch (p->ev.state) {
    case KA_PROBE_DECIDED:
        if (p->ev.classes)
            fprintf(f, "  causal probe    output change %.3g with %s replaced by noise (threshold %.3g, noise floor "
                       "%.3g, seed %llu)\n",
                    p->ev.joint_delta, p->ev.targets ? p->ev.targets : "?", p->ev.threshold, p->ev.noise_floor,
                    (unsigned long long)p->ev.seed);
        if (p->ev.vendor)
            fprintf(f, "  causal probe    output change %.3g with the outputs of its %llu library call%s (cuBLAS, "
                       "cuBLASLt, cuDNN) replaced by noise (threshold %.3g, seed %llu)\n",
                    p->ev.vendor_delta, (unsigned long long)p->ev.vendor_calls, p->ev.vendor_calls == 1 ? "" : "s",
                    p->ev.threshold, (unsigned long long)p->ev.seed);
        break;
    case KA_PROBE_NO_TARGETS:
        fprintf(f, "  causal probe    the candidate's call dispatched no operator of a targeted class\n");
        break;
    case KA_PROBE_UNRESOLVED:
        fprintf(f, "  causal probe    unresolved: %s\n", p->ev.why ? p->ev.why : "?");
        break;
    default:
        break;
    }
}
