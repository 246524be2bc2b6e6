/*
 * semantic_compare.c - one call of a slot compared: the candidate's outputs
 * against the reference's leaf by leaf (structure, dtype, shape, sample),
 * floating leaves within the calibrated tolerance (tolerance.h), the others
 * exactly, and the R-B notes on what the reference returned.  Apart from
 * semantic.c because it is the part that reads tensor files and does
 * numerics; the event log and the decision are not its business.
 */
#define _GNU_SOURCE
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>
#include <xxhash.h>

#include "events.h"
#include "semantic.h"
#include "semantic_internal.h"
#include "tensor_file.h"

/* The flat index as a multi-index of the leaf's shape: "[3, 17]". */
static void index_text(char *buf, size_t n, const struct kat_tensor_leaf *leaf, uint64_t flat)
{
    if (leaf->ndim == 0) {
        snprintf(buf, n, "[]");
        return;
    }
    uint64_t idx[16];
    for (int d = (int)leaf->ndim - 1; d >= 0; d--) {
        uint64_t extent = leaf->shape[d] > 0 ? (uint64_t)leaf->shape[d] : 1;
        idx[d] = flat % extent;
        flat /= extent;
    }
    size_t used = 0;
    used += snprintf(buf + used, n - used, "[");
    for (unsigned d = 0; d < leaf->ndim && used < n; d++)
        used += snprintf(buf + used, n - used, "%s%llu", d ? ", " : "", (unsigned long long)idx[d]);
    if (used < n)
        snprintf(buf + used, n - used, "]");
}

static void shape_text(char *buf, size_t n, const struct kat_tensor_leaf *leaf)
{
    size_t used = snprintf(buf, n, "[");
    for (unsigned d = 0; d < leaf->ndim && used < n; d++)
        used += snprintf(buf + used, n - used, "%s%lld", d ? ", " : "", (long long)leaf->shape[d]);
    if (used < n)
        snprintf(buf + used, n - used, "]");
}

static int same_shape(const struct kat_tensor_leaf *a, const struct kat_tensor_leaf *b)
{
    if (a->ndim != b->ndim)
        return 0;
    for (unsigned d = 0; d < a->ndim; d++)
        if (a->shape[d] != b->shape[d])
            return 0;
    return 1;
}

static void rb_note(struct ctx *c, const struct kat_tensor_leaf *leaf, const double *v, size_t n)
{
    struct rb_leaf *r = NULL;
    for (size_t i = 0; i < c->n_rb; i++)
        if (strcmp(c->rb[i].path, leaf->path) == 0)
            r = &c->rb[i];
    uint64_t digest = XXH3_64bits(leaf->data, leaf->nbytes);
    int constant = 1;
    for (size_t i = 1; i < n && constant; i++)
        constant = v[i] == v[0];
    if (!r) {
        void *q = sem_grow(c, c->rb, c->n_rb, sizeof *c->rb);
        if (!q)
            return;
        c->rb = q;
        r = &c->rb[c->n_rb++];
        memset(r, 0, sizeof *r);
        r->path = sem_strdup(c, leaf->path);
        r->first_digest = digest;
        r->constant = n ? v[0] : 0.0;
        r->constant_holds = constant && n > 0;
    } else {
        if (digest != r->first_digest)
            r->digest_varies = 1;
        if (!constant || n == 0 || v[0] != r->constant)
            r->constant_holds = 0;
    }
    r->seen++;
}

static struct kat_sem_leaf *new_leaf(struct ctx *c, struct kat_sem_call *call, const struct kat_tensor_leaf *ref)
{
    void *q = sem_grow(c, call->leaves, call->n_leaves, sizeof *call->leaves);
    if (!q)
        return NULL;
    call->leaves = q;
    struct kat_sem_leaf *l = &call->leaves[call->n_leaves++];
    memset(l, 0, sizeof *l);
    l->path = sem_strdup(c, ref->path);
    snprintf(l->dtype, sizeof l->dtype, "%s", kat_dtype_name(ref->dtype));
    shape_text(l->shape, sizeof l->shape, ref);
    return l;
}

static int open_file(struct ctx *c, const char *rel, struct kat_tensor_file **f, const struct kat_sem_slot *slot,
                     int call, const char *what)
{
    char path[4096], err[512];
    snprintf(path, sizeof path, "%s/%s", c->dir, rel);
    if (kat_tensor_file_open(path, f, err, sizeof err) == 0)
        return 0;
    char at[96];
    sem_where(at, sizeof at, slot, call);
    sem_add(c, KAT_SEM_UNRESOLVED, "unreadable-tensor-file", slot, call, "%s: the %s output cannot be read: %s", at,
        what, err);
    return -1;
}

/* The flat index of element i of a leaf (through its sample when sampled). */
static uint64_t sample_flat(const struct kat_tensor_leaf *leaf, uint64_t i)
{
    if (!leaf->sampled || i >= leaf->sampled)
        return i;
    int64_t v;
    memcpy(&v, (const unsigned char *)leaf->sample_index + 8 * i, 8);
    return (uint64_t)v;
}

/* Sampled leaves compare only when every party holds the same elements. */
static int same_sample(const struct kat_tensor_leaf *a, const struct kat_tensor_leaf *b)
{
    return a->sampled == b->sampled &&
           (!a->sampled || memcmp(a->sample_index, b->sample_index, 8 * a->sampled) == 0);
}

/* One floating leaf: calibrate on (ref, ref64), compare the candidate. */
static void compare_floating(struct ctx *c, const struct kat_sem_slot *slot, int call, struct kat_sem_leaf *l,
                             const struct kat_tensor_leaf *r, const struct kat_tensor_leaf *r64,
                             const struct kat_tensor_leaf *k, int note_rb)
{
    char at[96];
    sem_where(at, sizeof at, slot, call);
    double *vr = kat_leaf_to_double(r), *v64 = kat_leaf_to_double(r64), *vk = kat_leaf_to_double(k);
    size_t n = (size_t)kat_leaf_double_count(r);
    if (!vr || !v64 || !vk) {
        c->oom = 1;
        goto out;
    }
    if (note_rb)
        rb_note(c, r, vr, n);
    kat_tol_calibrate(vr, v64, n, &c->s->params, &l->cal);
    l->calibrated = 1;
    kat_tol_compare(vk, vr, v64, n, &c->s->params, &l->cal, &l->cmp);
    c->s->leaves_compared++;
    const struct kat_tol_worst *w = &l->cmp.worst;
    char idx[96], of[64] = "";
    index_text(idx, sizeof idx, r, sample_flat(r, w->index));
    if (r->sampled)
        snprintf(of, sizeof of, " sampled (of %llu)", (unsigned long long)r->numel);
    l->rule = kat_tol_rule_name(w->rule);
    /* A candidate NaN/Inf against a finite reference fails even when the
     * calibration is unresolved: no allowance makes it right. */
    int nonfinite = l->cmp.n_nonfinite_candidate > 0;
    if ((l->cal.status == KAT_TOL_OK && l->cmp.verdict == KAT_TOL_FAIL) || nonfinite) {
        l->outcome = "fail";
        struct kat_sem_finding *f = sem_add(
            c, KAT_SEM_CONVICTS, nonfinite ? "non-finite-output" : "value-mismatch", slot, call,
            "%s, leaf %s: %zu of %zu%s elements outside the allowance%s; worst at %s: candidate %.9g, "
            "reference %.9g (fp64 %.9g), allowance %.3g (%s; a %.3g, rho %.3g)",
            at, l->path, l->cmp.n_fail, n, of, nonfinite ? " (NaN or Inf where the reference is finite)" : "", idx,
            w->candidate, w->reference, w->reference64, w->allowance, l->rule, l->cal.a, l->cal.rho);
        if (f)
            f->leaf = sem_strdup(c, l->path);
        goto out;
    }
    if (l->cal.status != KAT_TOL_OK) {
        l->outcome = "unresolved";
        struct kat_sem_finding *f = sem_add(c, KAT_SEM_UNRESOLVED,
                                        l->cal.reason == KAT_TOL_REASON_RHO_BAR ? "tolerance-uncalibratable"
                                                                                : "tolerance-unresolved",
                                        slot, call,
                                        "%s, leaf %s: the tolerance cannot be calibrated: %s", at, l->path,
                                        l->cal.reason_text);
        if (f)
            f->leaf = sem_strdup(c, l->path);
        goto out;
    }
    l->outcome = "pass";
out:
    free(vr);
    free(v64);
    free(vk);
}

/* The statuses that end a call's judgement before any output is read: the
 * code of the finding is the status itself. */
static const struct {
    const char *status;
    enum kat_sem_kind kind;
    const char *what;
} unjudged_statuses[] = {
    { "resource-exhausted", KAT_SEM_UNRESOLVED,
      "the candidate's call ran out of memory (resource exhaustion leaves no comparable execution)" },
    /* neither is a result: the call cannot be judged, whatever it would have given */
    { "candidate-process-ended", KAT_SEM_UNRESOLVED,
      "the candidate's process ended during the call (it exited, was killed or broke its channel)" },
    { "confinement-refused", KAT_SEM_UNRESOLVED,
      "the candidate's call did something its confinement refuses (a signal, ptrace, a write outside its "
      "directories)" },
    { "candidate-raised", KAT_SEM_CONVICTS, "the candidate raised on an input the reference accepts" },
};

/* 1 when the call's status says there is nothing to compare (its finding is
 * added), 0 when its outputs are to be compared. */
static int call_status_ends_it(struct ctx *c, const struct kat_sem_slot *slot, const struct kat_sem_call *call,
                               const cJSON *e, const char *at)
{
    const char *status = kat_event_str(e, "status");
    if (!status)
        return 0;
    for (size_t i = 0; i < sizeof unjudged_statuses / sizeof unjudged_statuses[0]; i++) {
        if (strcmp(status, unjudged_statuses[i].status) != 0)
            continue;
        const char *error = kat_event_str(e, "error");
        sem_add(c, unjudged_statuses[i].kind, unjudged_statuses[i].status, slot, call->call, "%s: %s: %s", at,
                unjudged_statuses[i].what, error ? error : "(no message)");
        return 1;
    }
    return 0;
}

/* The inputs the candidate changed that the reference leaves alone. */
static void note_mutated_inputs(struct ctx *c, const struct kat_sem_slot *slot, const struct kat_sem_call *call,
                                const cJSON *e, const char *at)
{
    const cJSON *rm = cJSON_GetObjectItemCaseSensitive(e, "reference_mutates");
    const cJSON *cm = cJSON_GetObjectItemCaseSensitive(e, "candidate_mutates");
    const cJSON *i;
    cJSON_ArrayForEach(i, cm)
    {
        int by_ref = 0;
        const cJSON *j;
        cJSON_ArrayForEach(j, rm) by_ref |= cJSON_IsNumber(j) && cJSON_IsNumber(i) && j->valuedouble == i->valuedouble;
        if (!by_ref && cJSON_IsNumber(i))
            sem_add(c, KAT_SEM_CONVICTS, "input-mutated", slot, call->call,
                "%s: the candidate changed input %d, which the reference leaves unchanged", at, (int)i->valuedouble);
    }
}

/* Leaf li's path, kind, dtype or shape differs between reference r and
 * candidate k: the finding, else NULL. */
static struct kat_sem_finding *leaf_structure_differs(struct ctx *c, const struct kat_sem_slot *slot, int call,
                                                      const char *at, size_t li, const struct kat_tensor_leaf *r,
                                                      const struct kat_tensor_leaf *k)
{
    if (strcmp(r->path, k->path) != 0)
        return sem_add(c, KAT_SEM_CONVICTS, "structure-mismatch", slot, call,
                    "%s: leaf %zu is %s in the reference, %s in the candidate", at, li, r->path, k->path);
    if (r->kind != k->kind)
        return sem_add(c, KAT_SEM_CONVICTS, "structure-mismatch", slot, call,
                    "%s, leaf %s: a %s in the reference, a %s in the candidate", at, r->path,
                    kat_leaf_kind_name(r->kind), kat_leaf_kind_name(k->kind));
    if (r->dtype != k->dtype)
        return sem_add(c, KAT_SEM_CONVICTS, "dtype-mismatch", slot, call,
                    "%s, leaf %s: dtype %s in the reference, %s in the candidate", at, r->path,
                    kat_dtype_name(r->dtype), kat_dtype_name(k->dtype));
    if (!same_shape(r, k)) {
        char rs[64], ks[64];
        shape_text(rs, sizeof rs, r);
        shape_text(ks, sizeof ks, k);
        return sem_add(c, KAT_SEM_CONVICTS, "shape-mismatch", slot, call,
                    "%s, leaf %s: shape %s in the reference, %s in the candidate", at, r->path, rs, ks);
    }
    return NULL;
}

/* Integers, booleans, None and opaque values: compared exactly, the first
 * differing element named. */
static void compare_exact(struct ctx *c, const struct kat_sem_slot *slot, int call, const char *at,
                          struct kat_sem_leaf *l, const struct kat_tensor_leaf *r, const struct kat_tensor_leaf *k)
{
    l->rule = "exact";
    c->s->leaves_compared++;
    if (r->nbytes == k->nbytes && (!r->nbytes || memcmp(r->data, k->data, r->nbytes) == 0)) {
        l->outcome = "exact";
        return;
    }
    uint64_t first = 0;
    size_t item = r->numel ? r->nbytes / r->numel : 1;
    const unsigned char *a = r->data, *b = k->data;
    while (first * item < r->nbytes && memcmp(a + first * item, b + first * item, item) == 0)
        first++;
    char idx[96];
    index_text(idx, sizeof idx, r, sample_flat(r, first));
    l->outcome = "fail";
    struct kat_sem_finding *f = sem_add(c, KAT_SEM_CONVICTS, "value-mismatch", slot, call,
            "%s, leaf %s (%s, compared exactly): differs first at %s", at, r->path, kat_dtype_name(r->dtype),
            idx);
    if (f)
        f->leaf = sem_strdup(c, r->path);
}

/* The leaf judged without a comparison of its values: its outcome and rule,
 * and the finding f (when there is one) names it. */
static void leaf_judged(struct ctx *c, struct kat_sem_leaf *l, struct kat_sem_finding *f, const char *path,
                        const char *outcome, const char *rule)
{
    if (f)
        f->leaf = sem_strdup(c, path);
    l->outcome = outcome;
    l->rule = rule;
}

/* Leaf li of the reference (r) and the candidate (k); R64 the fp64
 * reference's file, or NULL.  -1 when out of memory. */
static int compare_leaf(struct ctx *c, const struct kat_sem_slot *slot, struct kat_sem_call *call, const char *at,
                        const struct kat_tensor_file *R64, size_t li, const struct kat_tensor_leaf *r,
                        const struct kat_tensor_leaf *k)
{
    struct kat_sem_leaf *l = new_leaf(c, call, r);
    if (!l)
        return -1;
    struct kat_sem_finding *f = leaf_structure_differs(c, slot, call->call, at, li, r, k);
    if (f) {
        leaf_judged(c, l, f, r->path, "fail", "exact");
        return 0;
    }
    if (!same_sample(r, k)) {
        f = sem_add(c, KAT_SEM_UNRESOLVED, "sample-mismatch", slot, call->call,
                "%s, leaf %s: the candidate's and the reference's samples hold different elements", at, r->path);
        leaf_judged(c, l, f, r->path, "unresolved", "none");
        return 0;
    }
    int floating = (r->kind == KAT_LEAF_TENSOR || r->kind == KAT_LEAF_FLOAT || r->kind == KAT_LEAF_SAMPLED) &&
                   kat_dtype_is_floating(r->dtype);
    if (!floating) {
        compare_exact(c, slot, call->call, at, l, r, k);
        return 0;
    }
    const struct kat_tensor_leaf *r64 = R64 ? kat_tensor_file_find(R64, r->path) : NULL;
    if (!r64 || !same_shape(r, r64) || !same_sample(r, r64)) {
        if (R64)
            f = sem_add(c, KAT_SEM_UNRESOLVED, "fp64-structure", slot, call->call,
                    "%s, leaf %s: the fp64 reference has no matching leaf", at, r->path);
        leaf_judged(c, l, f, r->path, "unresolved", "none");
        return 0;
    }
    compare_floating(c, slot, call->call, l, r, r64, k, strncmp(r->path, "out", 3) == 0);
    return 0;
}

/* The outputs of one call, leaf by leaf, once the files are open. */
static void compare_outputs(struct ctx *c, const struct kat_sem_slot *slot, struct kat_sem_call *call, const char *at,
                            const struct kat_tensor_file *R, const struct kat_tensor_file *R64,
                            const struct kat_tensor_file *K)
{
    c->s->calls_compared++;
    /* structure: the same leaves in the same order */
    if (R->n_leaves != K->n_leaves) {
        sem_add(c, KAT_SEM_CONVICTS, "structure-mismatch", slot, call->call,
            "%s: the candidate returned %zu leaves, the reference %zu", at, (size_t)K->n_leaves,
            (size_t)R->n_leaves);
        return;
    }
    for (size_t li = 0; li < R->n_leaves; li++)
        if (compare_leaf(c, slot, call, at, R64, li, &R->leaves[li], &K->leaves[li]) != 0)
            return;
}

/* One call: the reference file (ref), the fp64 reference (ref64), the candidate's. */
void sem_compare_call(struct ctx *c, const struct kat_sem_slot *slot, struct kat_sem_call *call, const cJSON *e)
{
    char at[96];
    sem_where(at, sizeof at, slot, call->call);
    const char *status = kat_event_str(e, "status");
    snprintf(call->status, sizeof call->status, "%s", status ? status : "missing");
    const char *inst = kat_event_str(e, "instance");
    snprintf(call->instance, sizeof call->instance, "%s", inst ? inst : "A");
    if (call_status_ends_it(c, slot, call, e, at))
        return;
    const char *fr = kat_event_str(e, "ref"), *f64 = kat_event_str(e, "ref64"), *fk = kat_event_str(e, "cand");
    if (!fr || !fk) {
        sem_add(c, KAT_SEM_UNRESOLVED, "call-incomplete", slot, call->call, "%s: the runner recorded no %s output", at,
            fr ? "candidate" : "reference");
        return;
    }
    note_mutated_inputs(c, slot, call, e, at);
    if (!f64) {
        sem_add(c, KAT_SEM_UNRESOLVED, "fp64-unsupported", slot, call->call,
            "%s: the fp64 reference did not run, so no tolerance can be calibrated: %s", at,
            kat_event_str(e, "fp64_error") ? kat_event_str(e, "fp64_error") : "(no message)");
    }
    struct kat_tensor_file *R = NULL, *R64 = NULL, *K = NULL;
    if (open_file(c, fr, &R, slot, call->call, "reference") == 0 &&
        open_file(c, fk, &K, slot, call->call, "candidate") == 0 &&
        (!f64 || open_file(c, f64, &R64, slot, call->call, "fp64 reference") == 0))
        compare_outputs(c, slot, call, at, R, R64, K);
    kat_tensor_file_close(R);
    kat_tensor_file_close(R64);
    kat_tensor_file_close(K);
}
