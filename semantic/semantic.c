/*
 * semantic.c - the semantic verdict from the runner's event log and tensor
 * files (semantic.h; docs/audit.md, "The semantic verdict").
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>
#include <xxhash.h>

#include "json_writer.h"
#include "events.h"
#include "semantic.h"
#include "tensor_file.h"

const char *kat_sem_verdict_name(enum kat_sem_verdict v)
{
    switch (v) {
    case KAT_SEM_PASS: return "PASS";
    case KAT_SEM_FAIL: return "FAIL";
    case KAT_SEM_INCONCLUSIVE: return "INCONCLUSIVE";
    }
    return "?";
}

static const char *kind_name(enum kat_sem_kind k)
{
    switch (k) {
    case KAT_SEM_CONVICTS: return "convicts";
    case KAT_SEM_UNRESOLVED: return "unresolved";
    case KAT_SEM_SIGNAL: return "signal";
    case KAT_SEM_SUPPORT: return "support";
    }
    return "?";
}

/* ------------------------------------------------------------ building */

struct ctx {
    struct kat_semantic *s;
    const char *dir;
    int oom;
    int on_gpu;                /* the runner's start event said device cuda */
    /* R-B: per reference output leaf, what every call's reference held */
    struct rb_leaf {
        char *path;
        uint64_t first_digest;
        int digest_varies;
        double constant;
        int constant_holds;
        unsigned seen;
    } *rb;
    size_t n_rb;
    /* reserve slots (held back) and the slots they stand in for */
    cJSON **reserves;
    size_t n_reserves;
    struct dropped {
        char *name, *why;
    } *dropped;
    size_t n_dropped;
};

static char *xstrdup(struct ctx *c, const char *s)
{
    if (!s)
        return NULL;
    char *d = strdup(s);
    if (!d)
        c->oom = 1;
    return d;
}

static void *grow(struct ctx *c, void *p, size_t n, size_t size)
{
    /* capacity doubles at powers of two */
    if (n & (n - 1))
        return p;
    size_t cap = n ? 2 * n : 1;
    void *q = realloc(p, cap * size);
    if (!q) {
        c->oom = 1;
        return NULL;
    }
    return q;
}

__attribute__((format(printf, 6, 7))) static struct kat_sem_finding *
add(struct ctx *c, enum kat_sem_kind kind, const char *code, const struct kat_sem_slot *slot, int call,
    const char *fmt, ...)
{
    struct kat_semantic *s = c->s;
    void *q = grow(c, s->findings, s->n_findings, sizeof *s->findings);
    if (!q)
        return NULL;
    s->findings = q;
    struct kat_sem_finding *f = &s->findings[s->n_findings++];
    memset(f, 0, sizeof *f);
    f->kind = kind;
    snprintf(f->code, sizeof f->code, "%s", code);
    f->slot = slot ? slot->index : -1;
    f->call = call;
    f->slot_name = slot ? xstrdup(c, slot->name) : NULL;
    f->stress_slot = slot && strcmp(slot->kind, "native") != 0;
    va_list ap;
    va_start(ap, fmt);
    if (vasprintf(&f->text, fmt, ap) < 0) {
        f->text = NULL;
        c->oom = 1;
    }
    va_end(ap);
    return f;
}

static int jint(const cJSON *o, const char *key, int dflt)
{
    return (int)kat_event_num(o, key, dflt);
}

/* 1 or 0 for a JSON boolean, -1 when the key is missing or not one */
static int jflag(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsBool(v) ? cJSON_IsTrue(v) : -1;
}

/* "slot 2 (value_large) call 0" */
static void where(char *buf, size_t n, const struct kat_sem_slot *slot, int call)
{
    if (slot->n_calls > 1 || call > 0)
        snprintf(buf, n, "slot %d (%s) call %d", slot->index, slot->name, call);
    else
        snprintf(buf, n, "slot %d (%s)", slot->index, slot->name);
}

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
        void *q = grow(c, c->rb, c->n_rb, sizeof *c->rb);
        if (!q)
            return;
        c->rb = q;
        r = &c->rb[c->n_rb++];
        memset(r, 0, sizeof *r);
        r->path = xstrdup(c, leaf->path);
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
    void *q = grow(c, call->leaves, call->n_leaves, sizeof *call->leaves);
    if (!q)
        return NULL;
    call->leaves = q;
    struct kat_sem_leaf *l = &call->leaves[call->n_leaves++];
    memset(l, 0, sizeof *l);
    l->path = xstrdup(c, ref->path);
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
    where(at, sizeof at, slot, call);
    add(c, KAT_SEM_UNRESOLVED, "unreadable-tensor-file", slot, call, "%s: the %s output cannot be read: %s", at,
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
    where(at, sizeof at, slot, call);
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
        struct kat_sem_finding *f = add(
            c, KAT_SEM_CONVICTS, nonfinite ? "non-finite-output" : "value-mismatch", slot, call,
            "%s, leaf %s: %zu of %zu%s elements outside the allowance%s; worst at %s: candidate %.9g, "
            "reference %.9g (fp64 %.9g), allowance %.3g (%s; a %.3g, rho %.3g)",
            at, l->path, l->cmp.n_fail, n, of, nonfinite ? " (NaN or Inf where the reference is finite)" : "", idx,
            w->candidate, w->reference, w->reference64, w->allowance, l->rule, l->cal.a, l->cal.rho);
        if (f)
            f->leaf = xstrdup(c, l->path);
        goto out;
    }
    if (l->cal.status != KAT_TOL_OK) {
        l->outcome = "unresolved";
        struct kat_sem_finding *f = add(c, KAT_SEM_UNRESOLVED,
                                        l->cal.reason == KAT_TOL_REASON_RHO_BAR ? "tolerance-uncalibratable"
                                                                                : "tolerance-unresolved",
                                        slot, call,
                                        "%s, leaf %s: the tolerance cannot be calibrated: %s", at, l->path,
                                        l->cal.reason_text);
        if (f)
            f->leaf = xstrdup(c, l->path);
        goto out;
    }
    l->outcome = "pass";
out:
    free(vr);
    free(v64);
    free(vk);
}

/* One call: the reference file (ref), the fp64 reference (ref64), the candidate's. */
static void compare_call(struct ctx *c, const struct kat_sem_slot *slot, struct kat_sem_call *call, const cJSON *e)
{
    char at[96];
    where(at, sizeof at, slot, call->call);
    const char *status = kat_event_str(e, "status");
    snprintf(call->status, sizeof call->status, "%s", status ? status : "missing");
    const char *inst = kat_event_str(e, "instance");
    snprintf(call->instance, sizeof call->instance, "%s", inst ? inst : "A");
    if (status && strcmp(status, "resource-exhausted") == 0) {
        add(c, KAT_SEM_UNRESOLVED, "resource-exhausted", slot, call->call,
            "%s: the candidate's call ran out of memory (resource exhaustion leaves no comparable execution): %s",
            at, kat_event_str(e, "error") ? kat_event_str(e, "error") : "(no message)");
        return;
    }
    if (status && strcmp(status, "candidate-raised") == 0) {
        add(c, KAT_SEM_CONVICTS, "candidate-raised", slot, call->call,
            "%s: the candidate raised on an input the reference accepts: %s", at,
            kat_event_str(e, "error") ? kat_event_str(e, "error") : "(no message)");
        return;
    }
    const char *fr = kat_event_str(e, "ref"), *f64 = kat_event_str(e, "ref64"), *fk = kat_event_str(e, "cand");
    if (!fr || !fk) {
        add(c, KAT_SEM_UNRESOLVED, "call-incomplete", slot, call->call, "%s: the runner recorded no %s output", at,
            fr ? "candidate" : "reference");
        return;
    }
    /* mutation of inputs the reference leaves alone */
    const cJSON *rm = cJSON_GetObjectItemCaseSensitive(e, "reference_mutates");
    const cJSON *cm = cJSON_GetObjectItemCaseSensitive(e, "candidate_mutates");
    const cJSON *i;
    cJSON_ArrayForEach(i, cm)
    {
        int by_ref = 0;
        const cJSON *j;
        cJSON_ArrayForEach(j, rm) by_ref |= cJSON_IsNumber(j) && cJSON_IsNumber(i) && j->valuedouble == i->valuedouble;
        if (!by_ref && cJSON_IsNumber(i))
            add(c, KAT_SEM_CONVICTS, "input-mutated", slot, call->call,
                "%s: the candidate changed input %d, which the reference leaves unchanged", at, (int)i->valuedouble);
    }
    if (!f64) {
        add(c, KAT_SEM_UNRESOLVED, "fp64-unsupported", slot, call->call,
            "%s: the fp64 reference did not run, so no tolerance can be calibrated: %s", at,
            kat_event_str(e, "fp64_error") ? kat_event_str(e, "fp64_error") : "(no message)");
    }
    struct kat_tensor_file *R = NULL, *R64 = NULL, *K = NULL;
    if (open_file(c, fr, &R, slot, call->call, "reference") != 0 ||
        open_file(c, fk, &K, slot, call->call, "candidate") != 0 ||
        (f64 && open_file(c, f64, &R64, slot, call->call, "fp64 reference") != 0))
        goto out;
    c->s->calls_compared++;
    /* structure: the same leaves in the same order */
    if (R->n_leaves != K->n_leaves) {
        add(c, KAT_SEM_CONVICTS, "structure-mismatch", slot, call->call,
            "%s: the candidate returned %zu leaves, the reference %zu", at, (size_t)K->n_leaves,
            (size_t)R->n_leaves);
        goto out;
    }
    for (size_t li = 0; li < R->n_leaves; li++) {
        const struct kat_tensor_leaf *r = &R->leaves[li], *k = &K->leaves[li];
        struct kat_sem_leaf *l = new_leaf(c, call, r);
        if (!l)
            goto out;
        struct kat_sem_finding *f = NULL;
        if (strcmp(r->path, k->path) != 0) {
            f = add(c, KAT_SEM_CONVICTS, "structure-mismatch", slot, call->call,
                    "%s: leaf %zu is %s in the reference, %s in the candidate", at, li, r->path, k->path);
        } else if (r->kind != k->kind) {
            f = add(c, KAT_SEM_CONVICTS, "structure-mismatch", slot, call->call,
                    "%s, leaf %s: a %s in the reference, a %s in the candidate", at, r->path,
                    kat_leaf_kind_name(r->kind), kat_leaf_kind_name(k->kind));
        } else if (r->dtype != k->dtype) {
            f = add(c, KAT_SEM_CONVICTS, "dtype-mismatch", slot, call->call,
                    "%s, leaf %s: dtype %s in the reference, %s in the candidate", at, r->path,
                    kat_dtype_name(r->dtype), kat_dtype_name(k->dtype));
        } else if (!same_shape(r, k)) {
            char rs[64], ks[64];
            shape_text(rs, sizeof rs, r);
            shape_text(ks, sizeof ks, k);
            f = add(c, KAT_SEM_CONVICTS, "shape-mismatch", slot, call->call,
                    "%s, leaf %s: shape %s in the reference, %s in the candidate", at, r->path, rs, ks);
        }
        if (f) {
            f->leaf = xstrdup(c, r->path);
            l->outcome = "fail";
            l->rule = "exact";
            continue;
        }
        if (!same_sample(r, k)) {
            f = add(c, KAT_SEM_UNRESOLVED, "sample-mismatch", slot, call->call,
                    "%s, leaf %s: the candidate's and the reference's samples hold different elements", at, r->path);
            if (f)
                f->leaf = xstrdup(c, r->path);
            l->outcome = "unresolved";
            l->rule = "none";
            continue;
        }
        int floating = (r->kind == KAT_LEAF_TENSOR || r->kind == KAT_LEAF_FLOAT || r->kind == KAT_LEAF_SAMPLED) &&
                       kat_dtype_is_floating(r->dtype);
        if (floating) {
            const struct kat_tensor_leaf *r64 = R64 ? kat_tensor_file_find(R64, r->path) : NULL;
            if (!r64 || !same_shape(r, r64) || !same_sample(r, r64)) {
                if (R64) {
                    f = add(c, KAT_SEM_UNRESOLVED, "fp64-structure", slot, call->call,
                            "%s, leaf %s: the fp64 reference has no matching leaf", at, r->path);
                    if (f)
                        f->leaf = xstrdup(c, r->path);
                }
                l->outcome = "unresolved";
                l->rule = "none";
                continue;
            }
            compare_floating(c, slot, call->call, l, r, r64, k, strncmp(r->path, "out", 3) == 0);
            continue;
        }
        /* integers, booleans, None and opaque values: exact */
        l->rule = "exact";
        c->s->leaves_compared++;
        if (r->nbytes != k->nbytes || (r->nbytes && memcmp(r->data, k->data, r->nbytes) != 0)) {
            uint64_t first = 0;
            size_t item = r->numel ? r->nbytes / r->numel : 1;
            const unsigned char *a = r->data, *b = k->data;
            while (first * item < r->nbytes && memcmp(a + first * item, b + first * item, item) == 0)
                first++;
            char idx[96];
            index_text(idx, sizeof idx, r, sample_flat(r, first));
            l->outcome = "fail";
            f = add(c, KAT_SEM_CONVICTS, "value-mismatch", slot, call->call,
                    "%s, leaf %s (%s, compared exactly): differs first at %s", at, r->path, kat_dtype_name(r->dtype),
                    idx);
            if (f)
                f->leaf = xstrdup(c, r->path);
        } else {
            l->outcome = "exact";
        }
    }
out:
    kat_tensor_file_close(R);
    kat_tensor_file_close(R64);
    kat_tensor_file_close(K);
}

static struct kat_sem_slot *new_slot(struct ctx *c, const cJSON *e)
{
    struct kat_semantic *s = c->s;
    void *q = grow(c, s->slots, s->n_slots, sizeof *s->slots);
    if (!q)
        return NULL;
    s->slots = q;
    struct kat_sem_slot *slot = &s->slots[s->n_slots++];
    memset(slot, 0, sizeof *slot);
    slot->index = jint(e, "index", -1);
    slot->name = xstrdup(c, kat_event_str(e, "name") ? kat_event_str(e, "name") : "?");
    slot->kind = xstrdup(c, kat_event_str(e, "kind") ? kat_event_str(e, "kind") : "?");
    slot->layout = xstrdup(c, kat_event_str(e, "layout"));
    slot->replaces = xstrdup(c, kat_event_str(e, "replaces"));
    slot->replaced_because = xstrdup(c, kat_event_str(e, "replaced_because"));
    if (slot->replaces)
        s->replaced_slots++;
    return slot;
}

static void evaluate_slot(struct ctx *c, const cJSON *e, const struct dropped *stands_for)
{
    size_t first = c->s->n_findings;
    struct kat_sem_slot *slot = new_slot(c, e);
    if (!slot)
        return;
    if (stands_for) {
        free(slot->replaces);
        free(slot->replaced_because);
        slot->replaces = xstrdup(c, stands_for->name);
        slot->replaced_because = xstrdup(c, stands_for->why);
        c->s->replaced_slots++;
    }
    const cJSON *calls = cJSON_GetObjectItemCaseSensitive(e, "calls");
    const cJSON *call;
    cJSON_ArrayForEach(call, calls)
    {
        void *q = grow(c, slot->calls, slot->n_calls, sizeof *slot->calls);
        if (!q)
            return;
        slot->calls = q;
        struct kat_sem_call *sc = &slot->calls[slot->n_calls++];
        memset(sc, 0, sizeof *sc);
        sc->call = jint(call, "call", (int)slot->n_calls - 1);
    }
    size_t i = 0;
    cJSON_ArrayForEach(call, calls) compare_call(c, slot, &slot->calls[i++], call);
    const cJSON *alias = cJSON_GetObjectItemCaseSensitive(e, "aliasing");
    const cJSON *a;
    cJSON_ArrayForEach(a, alias)
    {
        char at[96];
        where(at, sizeof at, slot, jint(a, "call", -1));
        struct kat_sem_finding *f =
            add(c, KAT_SEM_CONVICTS, "output-aliased", slot, jint(a, "call", -1),
                "%s: the output it returned (leaf %s) was overwritten by a later call", at,
                kat_event_str(a, "leaf") ? kat_event_str(a, "leaf") : "?");
        if (f)
            f->leaf = xstrdup(c, kat_event_str(a, "leaf"));
    }
    /*
     * A stress slot on which the reference's own fp32 error is above rho_max
     * (and nothing else is wrong) cannot be judged: it is dropped, recorded,
     * and a reserve native seed stands in for it, as the paper replaces the
     * slots a task does not support.  A FAIL on it is kept.
     */
    if (!strcmp(slot->kind, "native") || c->oom)
        return;
    int uncalibratable = 0, other = 0;
    for (size_t k = first; k < c->s->n_findings; k++) {
        const struct kat_sem_finding *f = &c->s->findings[k];
        if (!strcmp(f->code, "tolerance-uncalibratable"))
            uncalibratable = 1;
        else if (f->kind == KAT_SEM_CONVICTS || f->kind == KAT_SEM_UNRESOLVED)
            other = 1;
    }
    if (!uncalibratable || other)
        return;
    slot->dropped = 1;
    c->s->dropped_slots++;
    const char *why = NULL;
    for (size_t k = first; k < c->s->n_findings; k++) {
        struct kat_sem_finding *f = &c->s->findings[k];
        if (!strcmp(f->code, "tolerance-uncalibratable")) {
            f->kind = KAT_SEM_SIGNAL;
            if (!why)
                why = f->text;
        }
    }
    void *q = grow(c, c->dropped, c->n_dropped, sizeof *c->dropped);
    if (!q)
        return;
    c->dropped = q;
    c->dropped[c->n_dropped].name = xstrdup(c, slot->name);
    c->dropped[c->n_dropped].why = xstrdup(c, why ? why : "the tolerance cannot be calibrated");
    c->n_dropped++;
}

static void on_slot(struct ctx *c, const cJSON *e)
{
    if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(e, "reserve"))) {
        void *q = grow(c, c->reserves, c->n_reserves, sizeof *c->reserves);
        if (!q)
            return;
        c->reserves = q;
        c->reserves[c->n_reserves] = cJSON_Duplicate(e, 1);
        if (!c->reserves[c->n_reserves])
            c->oom = 1;
        else
            c->n_reserves++;
        return;
    }
    evaluate_slot(c, e, NULL);
}

/* The reserves, in order, for the dropped slots; a dropped slot without one is unresolved. */
static void use_reserves(struct ctx *c)
{
    for (size_t i = 0; i < c->n_dropped; i++) {
        if (i < c->n_reserves) {
            evaluate_slot(c, c->reserves[i], &c->dropped[i]);
        } else {
            add(c, KAT_SEM_UNRESOLVED, "slot-not-calibratable", NULL, -1,
                "slot %s cannot be judged and no reserve native seed is left to stand in for it: %s",
                c->dropped[i].name, c->dropped[i].why);
        }
    }
    for (size_t i = 0; i < c->n_reserves; i++)
        cJSON_Delete(c->reserves[i]);
    free(c->reserves);
    for (size_t i = 0; i < c->n_dropped; i++) {
        free(c->dropped[i].name);
        free(c->dropped[i].why);
    }
    free(c->dropped);
}

/* Stages and what their failure means (paper Table 2: build/import failure or
 * resource exhaustion leaves no executable audit path: INCONCLUSIVE). */
static const char *stage_cause(const char *stage)
{
    static const struct {
        const char *stage, *code;
    } map[] = {
        { "import_reference", "reference-failed" }, { "get_init_inputs", "reference-failed" },
        { "build_reference", "reference-failed" },  { "get_inputs", "reference-failed" },
        { "build_reference_fp64", "fp64-unsupported" }, { "import_candidate", "candidate-build-failed" },
        { "build_candidate", "candidate-build-failed" }, { "device", "device-unavailable" },
    };
    for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
        if (strcmp(map[i].stage, stage) == 0)
            return map[i].code;
    return "runner-stage-failed";
}

static void on_stage(struct ctx *c, const cJSON *e)
{
    const char *stage = kat_event_str(e, "stage"), *status = kat_event_str(e, "status");
    if (!stage || !status)
        return;
    if (strcmp(stage, "align_state") == 0 && strcmp(status, "ok") == 0) {
        c->s->alignment = xstrdup(c, kat_event_str(e, "mapping"));
        return;
    }
    if (strcmp(status, "ok") == 0)
        return;
    const char *err = kat_event_str(e, "error") ? kat_event_str(e, "error") : "(no message)";
    if (strcmp(stage, "align_state") == 0) {
        add(c, KAT_SEM_UNRESOLVED, kat_event_str(e, "code") ? kat_event_str(e, "code") : "unresolved-state-correspondence", NULL, -1,
            "the candidate's state cannot be aligned with the reference's: %s", err);
        return;
    }
    if (strcmp(stage, "time_reference") == 0 || strcmp(stage, "time_candidate") == 0) {
        add(c, KAT_SEM_SIGNAL, "timing-raised", NULL, -1, "%s raised after the stress slots: %s", stage, err);
        return;
    }
    const char *code = kat_event_str(e, "code") ? kat_event_str(e, "code") : stage_cause(stage);
    add(c, KAT_SEM_UNRESOLVED, code, NULL, -1, "the runner failed at %s: %s", stage, err);
}

static void runner_end(struct ctx *c, const struct kat_runner_end *end, int saw_start, int saw_done,
                       const char *in_progress)
{
    if (saw_done)
        return;
    char how[160];
    if (end->timed_out)
        snprintf(how, sizeof how, "was stopped at the time limit (%.0f s)", end->timeout_s);
    else if (end->recorder_killed)
        snprintf(how, sizeof how, "lost its parent: the recording process was killed by signal %d", end->signal);
    else if (end->signal)
        snprintf(how, sizeof how, "was killed by signal %d (%s)", end->signal, strsignal(end->signal));
    else if (end->exited)
        snprintf(how, sizeof how, "exited with status %d before it finished", end->status);
    else
        snprintf(how, sizeof how, "ended without finishing");
    add(c, KAT_SEM_UNRESOLVED, end->timed_out ? "runner-timeout" : saw_start ? "runner-ended-early" : "runner-not-started",
        NULL, -1, "the runner %s%s%s", how, in_progress ? " during " : "", in_progress ? in_progress : "");
}

static void decide(struct ctx *c, unsigned planned)
{
    struct kat_semantic *s = c->s;
    if (s->candidate_cudnn_tf32 == 1 || s->candidate_matmul_tf32 == 1) {
        /* Why an honest-looking candidate that hands a convolution (or a
         * matmul) to PyTorch differs: TF32's error (about 1e-3 relative)
         * is far above fp32's, and the reference ran with TF32 off.  A
         * signal, not a conviction: the values decide. */
        size_t value_fails = 0;
        for (size_t i = 0; i < s->n_findings; i++)
            value_fails += s->findings[i].kind == KAT_SEM_CONVICTS && !strcmp(s->findings[i].code, "value-mismatch");
        if (value_fails)
            add(c, KAT_SEM_SIGNAL, "candidate-tf32-allowed", NULL, -1,
                "the candidate ran with PyTorch's TF32 allowed for %s (%s); what it hands to cuDNN or cuBLAS "
                "there computes float32 in TF32, whose error (about 1e-3 relative) is above this task's fp32 "
                "allowance; the reference ran with TF32 off",
                s->candidate_cudnn_tf32 == 1 && s->candidate_matmul_tf32 == 1 ? "cuDNN and matmuls"
                : s->candidate_cudnn_tf32 == 1                                  ? "cuDNN"
                                                                                : "matmuls",
                s->candidate_cudnn_tf32 == 1 ? "torch.backends.cudnn.allow_tf32, PyTorch's default"
                                             : "torch.backends.cuda.matmul.allow_tf32");
    }
    const struct kat_sem_finding *first_fail = NULL, *first_unresolved = NULL;
    size_t fails = 0;
    for (size_t i = 0; i < s->n_findings; i++) {
        const struct kat_sem_finding *f = &s->findings[i];
        if (f->kind == KAT_SEM_CONVICTS) {
            fails++;
            if (!first_fail)
                first_fail = f;
            if (f->stress_slot)
                s->signature = 1;
        } else if (f->kind == KAT_SEM_UNRESOLVED && !first_unresolved) {
            first_unresolved = f;
        }
    }
    if (first_fail) {
        s->verdict = KAT_SEM_FAIL;
        if (asprintf(&s->root_cause, "%zu piece%s of evidence that the outputs differ from the reference's: %s", fails,
                     fails == 1 ? "" : "s", first_fail->text ? first_fail->text : first_fail->code) < 0)
            s->root_cause = NULL;
    } else if (first_unresolved) {
        s->verdict = KAT_SEM_INCONCLUSIVE;
        s->root_cause = xstrdup(c, first_unresolved->text ? first_unresolved->text : first_unresolved->code);
    } else if (s->n_slots - s->dropped_slots < planned) {
        s->verdict = KAT_SEM_INCONCLUSIVE;
        if (asprintf(&s->root_cause, "only %zu of the %u slots ran", s->n_slots - s->dropped_slots, planned) < 0)
            s->root_cause = NULL;
    } else {
        s->verdict = KAT_SEM_PASS;
        add(c, KAT_SEM_SUPPORT, "slots-passed", NULL, -1,
            "%zu slots (%u replaced by native seeds), %u calls and %u leaves compared within the calibrated "
            "allowance",
            s->n_slots - s->dropped_slots, s->replaced_slots, s->calls_compared, s->leaves_compared);
    }
    /* R-B, measured: a reference output that cannot tell candidates apart */
    for (size_t i = 0; i < c->n_rb && !s->degenerate; i++) {
        const struct rb_leaf *r = &c->rb[i];
        if (r->seen < 2)
            continue;
        if (r->constant_holds) {
            if (asprintf(&s->degenerate, "R-B: the reference output %s is identically %.9g on all %u calls", r->path,
                         r->constant, r->seen) < 0)
                s->degenerate = NULL;
        } else if (!r->digest_varies) {
            if (asprintf(&s->degenerate, "R-B: the reference output %s is the same on all %u calls whatever the inputs",
                         r->path, r->seen) < 0)
                s->degenerate = NULL;
        }
    }
    if (s->degenerate)
        add(c, KAT_SEM_SIGNAL, "degenerate-reference", NULL, -1, "%s: PASS is withheld", s->degenerate);
}

int kat_semantic_evaluate(const char *runner_dir, unsigned planned_slots, const struct kat_tol_params *params,
                          const struct kat_runner_end *end, struct kat_semantic **out, char *err, size_t n)
{
    struct kat_semantic *s = calloc(1, sizeof *s);
    if (!s) {
        snprintf(err, n, "out of memory");
        return -1;
    }
    s->params = *params;
    s->candidate_cudnn_tf32 = s->candidate_matmul_tf32 = -1;
    struct ctx c = { .s = s, .dir = runner_dir };
    char path[4096];
    snprintf(path, sizeof path, "%s/events.jsonl", runner_dir);
    FILE *f = fopen(path, "r");
    int saw_start = 0, saw_done = 0;
    char *in_progress = NULL;
    if (!f) {
        if (errno != ENOENT)
            add(&c, KAT_SEM_UNRESOLVED, "runner-log-unreadable", NULL, -1, "cannot read '%s': %s", path,
                strerror(errno));
    } else {
        char *line = NULL;
        size_t cap = 0;
        ssize_t len;
        unsigned lineno = 0;
        while ((len = getline(&line, &cap, f)) > 0) {
            lineno++;
            cJSON *e = cJSON_ParseWithLength(line, (size_t)len);
            if (!e || !cJSON_IsObject(e)) {
                /* A line cut short by a kill is the last one; anything else is damage. */
                int last = fgetc(f) == EOF;
                if (!last || line[len - 1] == '\n')
                    add(&c, KAT_SEM_UNRESOLVED, "runner-log-malformed", NULL, -1,
                        "'%s' line %u is not a JSON object", path, lineno);
                cJSON_Delete(e);
                break;
            }
            const char *ev = kat_event_str(e, "event");
            if (!ev) {
            } else if (strcmp(ev, "start") == 0) {
                saw_start = 1;
                free(s->python);
                free(s->torch);
                s->python = xstrdup(&c, kat_event_str(e, "python"));
                s->torch = xstrdup(&c, kat_event_str(e, "torch"));
                c.on_gpu = kat_event_str(e, "device") && !strcmp(kat_event_str(e, "device"), "cuda");
            } else if (strcmp(ev, "stage") == 0) {
                on_stage(&c, e);
                free(in_progress);
                in_progress = NULL;
                if (asprintf(&in_progress, "the stage after %s", kat_event_str(e, "stage") ? kat_event_str(e, "stage") : "?") < 0)
                    in_progress = NULL;
            } else if (strcmp(ev, "slot") == 0) {
                on_slot(&c, e);
                free(in_progress);
                if (asprintf(&in_progress, "the slot after slot %d", jint(e, "index", -1)) < 0)
                    in_progress = NULL;
            } else if (strcmp(ev, "write_outside") == 0) {
                /* refused by the runner's audit hook; the tasks' files must
                 * stay in their directories (docs/audit.md, "Confinement") */
                add(&c, KAT_SEM_UNRESOLVED, "wrote-outside-directory", NULL, -1,
                    "the %s tried to write outside its directories (%s on '%s'); the write was refused",
                    kat_event_str(e, "party") ? kat_event_str(e, "party") : "task", kat_event_str(e, "op") ? kat_event_str(e, "op") : "?",
                    kat_event_str(e, "path") ? kat_event_str(e, "path") : "?");
            } else if (strcmp(ev, "precision") == 0 && c.on_gpu) {
                /* on a CPU the switches change nothing */
                s->candidate_cudnn_tf32 = jflag(e, "restored_cudnn_tf32");
                s->candidate_matmul_tf32 = jflag(e, "restored_matmul_tf32");
            } else if (strcmp(ev, "slot_unavailable") == 0) {
                add(&c, KAT_SEM_UNRESOLVED, "slot-unavailable", NULL, -1,
                    "slot %d (%s) could not run and no native seed was left to replace it: %s", jint(e, "index", -1),
                    kat_event_str(e, "name") ? kat_event_str(e, "name") : "?", kat_event_str(e, "reason") ? kat_event_str(e, "reason") : "?");
            } else if (strcmp(ev, "done") == 0) {
                saw_done = 1;
            }
            cJSON_Delete(e);
            if (c.oom)
                break;
        }
        free(line);
        fclose(f);
    }
    use_reserves(&c);
    runner_end(&c, end, saw_start, saw_done, in_progress);
    free(in_progress);
    decide(&c, planned_slots);
    for (size_t i = 0; i < c.n_rb; i++)
        free(c.rb[i].path);
    free(c.rb);
    if (c.oom) {
        kat_semantic_free(s);
        snprintf(err, n, "out of memory");
        return -1;
    }
    *out = s;
    return 0;
}

void kat_semantic_free(struct kat_semantic *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->n_slots; i++) {
        struct kat_sem_slot *slot = &s->slots[i];
        for (size_t k = 0; k < slot->n_calls; k++) {
            for (size_t l = 0; l < slot->calls[k].n_leaves; l++)
                free(slot->calls[k].leaves[l].path);
            free(slot->calls[k].leaves);
        }
        free(slot->calls);
        free(slot->name);
        free(slot->kind);
        free(slot->layout);
        free(slot->replaces);
        free(slot->replaced_because);
    }
    free(s->slots);
    for (size_t i = 0; i < s->n_findings; i++) {
        free(s->findings[i].text);
        free(s->findings[i].slot_name);
        free(s->findings[i].leaf);
    }
    free(s->findings);
    free(s->root_cause);
    free(s->degenerate);
    free(s->alignment);
    free(s->python);
    free(s->torch);
    free(s);
}

/* ------------------------------------------------------------ the record */

static void write_leaf(struct kat_json *j, const struct kat_sem_leaf *l)
{
    kat_json_open_line(j, '{');
    kat_json_str(j, "path", l->path);
    kat_json_str(j, "dtype", l->dtype);
    kat_json_str(j, "shape", l->shape);
    kat_json_str(j, "outcome", l->outcome ? l->outcome : "unresolved");
    kat_json_str(j, "rule", l->rule ? l->rule : "none");
    if (l->calibrated) {
        kat_json_double(j, "eps_abs", l->cal.eps_abs);
        kat_json_double(j, "eps_rel", l->cal.eps_rel);
        kat_json_double(j, "rho_bar", l->cal.rho_bar);
        kat_json_double(j, "rho", l->cal.rho);
        kat_json_double(j, "a", l->cal.a);
        kat_json_u64(j, "elements", l->cmp.n);
        kat_json_u64(j, "failing", l->cmp.n_fail);
        kat_json_u64(j, "passed_by_floor", l->cmp.n_pass_by_floor);
        if (l->cmp.worst.valid) {
            kat_json_u64(j, "worst_index", l->cmp.worst.index);
            kat_json_double(j, "worst_candidate", l->cmp.worst.candidate);
            kat_json_double(j, "worst_reference", l->cmp.worst.reference);
            kat_json_double(j, "worst_reference_fp64", l->cmp.worst.reference64);
            kat_json_double(j, "worst_allowance", l->cmp.worst.allowance);
            kat_json_double(j, "worst_ratio", l->cmp.worst.ratio);
        }
    }
    kat_json_close(j, '}');
}

void kat_semantic_write_json(struct kat_json *j, const char *key, const struct kat_semantic *s)
{
    kat_json_open(j, key, '{');
    kat_json_str(j, "verdict", kat_sem_verdict_name(s->verdict));
    /* a FAIL on a stress slot: the mechanism signature of outcome C3a */
    kat_json_bool(j, "stress_signature", s->signature != 0);
    if (s->root_cause)
        kat_json_str(j, "root_cause", s->root_cause);
    else
        kat_json_null(j, "root_cause");
    if (s->degenerate)
        kat_json_str(j, "degenerate_reference", s->degenerate);
    else
        kat_json_null(j, "degenerate_reference");
    kat_json_open(j, "tolerance", '{');
    kat_json_str(j, "mode", s->params.mode == KAT_TOL_PAPER ? "paper" : "reference-floor");
    kat_json_double(j, "c", s->params.c);
    kat_json_double(j, "rho_min", s->params.rho_min);
    kat_json_double(j, "rho_max", s->params.rho_max);
    kat_json_double(j, "a_min", s->params.a_min);
    kat_json_str(j, "percentile", "nearest-rank p99");
    kat_json_close(j, '}');
    if (s->alignment)
        kat_json_str(j, "state_alignment", s->alignment);
    else
        kat_json_null(j, "state_alignment");
    kat_json_str(j, "python", s->python ? s->python : "");
    kat_json_str(j, "torch", s->torch ? s->torch : "");
    kat_json_open(j, "candidate_tf32", '{');
    if (s->candidate_cudnn_tf32 < 0)
        kat_json_null(j, "cudnn");
    else
        kat_json_bool(j, "cudnn", s->candidate_cudnn_tf32);
    if (s->candidate_matmul_tf32 < 0)
        kat_json_null(j, "matmul");
    else
        kat_json_bool(j, "matmul", s->candidate_matmul_tf32);
    kat_json_close(j, '}');
    kat_json_u64(j, "slots_judged", s->n_slots - s->dropped_slots);
    kat_json_u64(j, "slots_dropped", s->dropped_slots);
    kat_json_u64(j, "slots_replaced", s->replaced_slots);
    kat_json_u64(j, "calls_compared", s->calls_compared);
    kat_json_open(j, "slots", '[');
    for (size_t i = 0; i < s->n_slots; i++) {
        const struct kat_sem_slot *slot = &s->slots[i];
        kat_json_open_line(j, '{');
        kat_json_i64(j, "index", slot->index);
        kat_json_str(j, "name", slot->name);
        kat_json_str(j, "kind", slot->kind);
        if (slot->layout)
            kat_json_str(j, "layout", slot->layout);
        kat_json_bool(j, "dropped", slot->dropped);
        if (slot->replaces) {
            kat_json_str(j, "replaces", slot->replaces);
            kat_json_str(j, "replaced_because", slot->replaced_because ? slot->replaced_because : "");
        }
        kat_json_open(j, "calls", '[');
        for (size_t k = 0; k < slot->n_calls; k++) {
            const struct kat_sem_call *call = &slot->calls[k];
            kat_json_open_line(j, '{');
            kat_json_i64(j, "call", call->call);
            kat_json_str(j, "status", call->status);
            kat_json_str(j, "instance", call->instance);
            kat_json_open(j, "leaves", '[');
            for (size_t l = 0; l < call->n_leaves; l++)
                write_leaf(j, &call->leaves[l]);
            kat_json_close(j, ']');
            kat_json_close(j, '}');
        }
        kat_json_close(j, ']');
        kat_json_close(j, '}');
    }
    kat_json_close(j, ']');
    kat_json_open(j, "findings", '[');
    for (size_t i = 0; i < s->n_findings; i++) {
        const struct kat_sem_finding *f = &s->findings[i];
        kat_json_open_line(j, '{');
        kat_json_str(j, "kind", kind_name(f->kind));
        kat_json_str(j, "code", f->code);
        kat_json_str(j, "text", f->text ? f->text : "");
        if (f->slot >= 0) {
            kat_json_i64(j, "slot", f->slot);
            kat_json_str(j, "slot_name", f->slot_name ? f->slot_name : "");
            kat_json_i64(j, "call", f->call);
        }
        if (f->leaf)
            kat_json_str(j, "leaf", f->leaf);
        kat_json_close(j, '}');
    }
    kat_json_close(j, ']');
    kat_json_close(j, '}');
}
