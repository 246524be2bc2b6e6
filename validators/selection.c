/* selection.c - the pool of tasks x slots, the gates and their tallies (selection.h). */
#define _GNU_SOURCE
#include "selection.h"
#include "toolbox.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

static uint64_t str_hash(const char *s)
{
    return XXH3_64bits(s, strlen(s));
}

/* The index of the ledger's record of id (ledger.c's id map), or -1. */
static ssize_t record_of(const struct kvs_ledger *l, const char *id)
{
    const struct kvs_record *rec = kvs_record_find(l, id);
    return rec ? rec - l->records : -1;
}

struct pool_reader {
    struct kvs_pool *p;
    struct kat_u64map task_by_name;     /* XXH3 of a task's name -> its index (the first name of a hash) */
    size_t slots_alloc;
};

static ssize_t task_index(struct pool_reader *pr, const char *name)
{
    struct kvs_pool *p = pr->p;
    int fresh = 0;
    uint64_t *at = kat_u64map_get(&pr->task_by_name, str_hash(name), &fresh);
    if (!at)
        return -2;
    if (!fresh) {
        if (!strcmp(p->tasks[*at], name))
            return (ssize_t)*at;
        for (size_t t = 0; t < p->n_tasks; t++)
            if (!strcmp(p->tasks[t], name))
                return (ssize_t)t;
    }
    char **grown = realloc(p->tasks, (p->n_tasks + 1) * sizeof *grown);
    char *copy = strdup(name);
    if (!grown || !copy) {
        free(copy);
        if (grown)
            p->tasks = grown;
        return -2;
    }
    p->tasks = grown;
    grown[p->n_tasks] = copy;
    if (fresh)
        *at = p->n_tasks;
    return (ssize_t)p->n_tasks++;
}

/* The usable speedup of a ledger line: "speedup": {"ratio", "reportable": true}
 * with a positive, finite ratio (docs/timing.md); NaN when there is none. */
static int usable_speedup(const cJSON *o, const char *where, double *out, char *err, size_t errlen)
{
    *out = NAN;
    const cJSON *sp = cJSON_GetObjectItemCaseSensitive(o, "speedup");
    if (!sp || cJSON_IsNull(sp))
        return 0;
    if (!cJSON_IsObject(sp))
        return kat_fail(err, errlen, "%s: \"speedup\" must be an object {ratio, reportable, ...}", where);
    const cJSON *ratio = cJSON_GetObjectItemCaseSensitive(sp, "ratio"),
                *reportable = cJSON_GetObjectItemCaseSensitive(sp, "reportable");
    if (ratio && !cJSON_IsNull(ratio) && !cJSON_IsNumber(ratio))
        return kat_fail(err, errlen, "%s: speedup.ratio must be a number or null", where);
    if (reportable && !cJSON_IsBool(reportable))
        return kat_fail(err, errlen, "%s: speedup.reportable must be true or false", where);
    if (cJSON_IsTrue(reportable) && cJSON_IsNumber(ratio) && isfinite(ratio->valuedouble) && ratio->valuedouble > 0)
        *out = ratio->valuedouble;
    return 0;
}

static int pool_line(void *ctx, const cJSON *o, const char *where, unsigned lineno, char *err, size_t errlen)
{
    struct pool_reader *pr = ctx;
    struct kvs_pool *p = pr->p;
    const cJSON *id = cJSON_GetObjectItemCaseSensitive(o, "id"), *task = cJSON_GetObjectItemCaseSensitive(o, "task"),
                *slot = cJSON_GetObjectItemCaseSensitive(o, "slot");
    ssize_t r = cJSON_IsString(id) ? record_of(p->ledger, id->valuestring) : -1;
    if (r < 0)
        return kat_fail(err, errlen, "%s: a record the ledger did not read (was the file changed?)", where);
    if (!cJSON_IsString(task) || !task->valuestring[0])
        return kat_fail(err, errlen, "%s: record '%s' has no \"task\" string: the gates place each record at a task and "
                                 "a slot (add \"task\" and \"slot\" to the batch's task lines)", where, id->valuestring);
    if (!cJSON_IsNumber(slot) || !(slot->valuedouble >= 0) || slot->valuedouble > 9007199254740992.0 ||
        slot->valuedouble != floor(slot->valuedouble))
        return kat_fail(err, errlen, "%s: record '%s': \"slot\" must be a non-negative integer (its place in the "
                                 "task's fixed order)", where, id->valuestring);
    struct kvs_slot s = { .record = (size_t)r, .slot = (long long)slot->valuedouble, .line = lineno };
    if (usable_speedup(o, where, &s.speedup, err, errlen) != 0)
        return -1;
    ssize_t t = task_index(pr, task->valuestring);
    if (t < 0)
        return kat_fail(err, errlen, "%s: out of memory", where);
    s.task = (size_t)t;
    if (p->n_slots == pr->slots_alloc) {
        size_t alloc = pr->slots_alloc ? 2 * pr->slots_alloc : 64;
        struct kvs_slot *grown = realloc(p->slots, alloc * sizeof *grown);
        if (!grown)
            return kat_fail(err, errlen, "%s: out of memory", where);
        p->slots = grown;
        pr->slots_alloc = alloc;
    }
    p->slots[p->n_slots++] = s;
    return 0;
}

static int by_task_then_slot(const void *a, const void *b)
{
    const struct kvs_slot *x = a, *y = b;
    if (x->task != y->task)
        return x->task < y->task ? -1 : 1;
    if (x->slot != y->slot)
        return x->slot < y->slot ? -1 : 1;
    return x->line < y->line ? -1 : x->line > y->line;
}

int kvs_pool_read(struct kvs_pool *p, const struct kvs_ledger *l, const char *path, char *err, size_t errlen)
{
    memset(p, 0, sizeof *p);
    p->ledger = l;
    struct pool_reader pr = { .p = p };
    int rc = kvs_jsonl_each(path, "", pool_line, &pr, err, errlen);
    kat_u64map_free(&pr.task_by_name);
    if (rc != 0)
        return -1;
    if (p->n_slots != l->n_records)
        return kat_fail(err, errlen, "%s: %zu records placed, the ledger read %zu (was the file changed?)", path,
                    p->n_slots, l->n_records);
    if (p->n_slots)
        qsort(p->slots, p->n_slots, sizeof *p->slots, by_task_then_slot);
    for (size_t i = 1; i < p->n_slots; i++)
        if (p->slots[i].task == p->slots[i - 1].task && p->slots[i].slot == p->slots[i - 1].slot)
            return kat_fail(err, errlen, "%s:%u: record '%s' at task '%s' slot %lld, where line %u put '%s' (refused: "
                                     "one candidate per slot)", path, p->slots[i].line,
                        l->records[p->slots[i].record].id, p->tasks[p->slots[i].task], p->slots[i].slot,
                        p->slots[i - 1].line, l->records[p->slots[i - 1].record].id);
    p->task_start = calloc(p->n_tasks + 1, sizeof *p->task_start);
    if (!p->task_start)
        return kat_fail(err, errlen, "%s: out of memory", path);
    for (size_t i = 0; i < p->n_slots; i++)
        p->task_start[p->slots[i].task + 1]++;
    for (size_t t = 0; t < p->n_tasks; t++)
        p->task_start[t + 1] += p->task_start[t];
    return 0;
}

struct label_reader {
    struct kvs_pool *p;
    size_t *slot_of;            /* record -> its slot */
    unsigned *labelled_at;      /* record -> the line that labelled it (0: none) */
};

static int label_line(void *ctx, const cJSON *o, const char *where, unsigned lineno, char *err, size_t errlen)
{
    struct label_reader *lr = ctx;
    const cJSON *id = cJSON_GetObjectItemCaseSensitive(o, "id"), *label = cJSON_GetObjectItemCaseSensitive(o, "label");
    if (!cJSON_IsString(id) || !cJSON_IsString(label))
        return kat_fail(err, errlen, "%s: a label line is {\"id\", \"label\": clean|unsafe|unknown}", where);
    unsigned char value;
    if (!strcmp(label->valuestring, "clean"))
        value = KVS_LABEL_CLEAN;
    else if (!strcmp(label->valuestring, "unsafe"))
        value = KVS_LABEL_UNSAFE;
    else if (!strcmp(label->valuestring, "unknown"))
        value = KVS_LABEL_UNKNOWN;
    else
        return kat_fail(err, errlen, "%s: label '%s' is not clean, unsafe or unknown", where, label->valuestring);
    ssize_t r = record_of(lr->p->ledger, id->valuestring);
    if (r < 0)
        return kat_fail(err, errlen, "%s: record '%s' is not in the ledger", where, id->valuestring);
    if (lr->labelled_at[r])
        return kat_fail(err, errlen, "%s: a second label of record '%s' (line %u labelled it; refused: which one counts?)",
                    where, id->valuestring, lr->labelled_at[r]);
    lr->labelled_at[r] = lineno;
    lr->p->slots[lr->slot_of[r]].label = value;
    return 0;
}

int kvs_pool_labels_read(struct kvs_pool *p, const char *path, char *err, size_t errlen)
{
    size_t n = p->ledger->n_records;
    struct label_reader lr = { p, malloc((n ? n : 1) * sizeof *lr.slot_of), calloc(n ? n : 1, sizeof *lr.labelled_at) };
    if (!lr.slot_of || !lr.labelled_at) {
        free(lr.slot_of);
        free(lr.labelled_at);
        return kat_fail(err, errlen, "%s: out of memory", path);
    }
    for (size_t i = 0; i < p->n_slots; i++)
        lr.slot_of[p->slots[i].record] = i;
    int rc = kvs_jsonl_each(path, "", label_line, &lr, err, errlen);
    free(lr.slot_of);
    free(lr.labelled_at);
    if (rc == 0)
        p->labelled = 1;
    return rc;
}

void kvs_pool_free(struct kvs_pool *p)
{
    for (size_t t = 0; t < p->n_tasks; t++)
        free(p->tasks[t]);
    free(p->tasks);
    free(p->slots);
    free(p->task_start);
    memset(p, 0, sizeof *p);
}

int kvs_gate_eligible(const struct kvs_pool *p, const struct kvs_gate *g, const struct kvs_slot *s)
{
    const struct kvs_record *r = &p->ledger->records[s->record];
    switch (g->eligibility) {
    case KVS_ELIGIBLE_WEAK:
        return g->validator < p->ledger->n_validators && r->decision[g->validator] == KVS_ACCEPT;
    case KVS_ELIGIBLE_AUDIT:
        return r->certificate == KA_PASS;
    case KVS_ELIGIBLE_AXES:
        for (int a = 0; a < KA_AXIS_COUNT; a++)
            if (r->axis[a] != KA_PASS)
                return 0;
        return 1;
    }
    return 0;
}

void kvs_gate_run(const struct kvs_pool *p, const struct kvs_gate *g, const double *k, size_t n_k,
                  struct kvs_gate_result *res, size_t *chosen)
{
    memset(res, 0, sizeof *res);
    res->tasks = p->n_tasks;
    res->slots = p->n_slots;
    if (n_k > KVS_MAX_K)
        n_k = KVS_MAX_K;
    for (size_t t = 0; t < p->n_tasks; t++) {
        size_t first = SIZE_MAX, fastest = SIZE_MAX;
        for (size_t i = p->task_start[t]; i < p->task_start[t + 1]; i++) {
            const struct kvs_slot *s = &p->slots[i];
            if (g->eligibility == KVS_ELIGIBLE_WEAK && g->validator < p->ledger->n_validators &&
                p->ledger->records[s->record].decision[g->validator] == KVS_NONE)
                res->undecided++;
            if (!kvs_gate_eligible(p, g, s))
                continue;
            res->eligible++;
            if (first == SIZE_MAX)
                first = i;
            /* strictly larger: an exact tie keeps the earlier slot */
            if (!isnan(s->speedup) && (fastest == SIZE_MAX || s->speedup > p->slots[fastest].speedup))
                fastest = i;
        }
        size_t pick = first;
        if (g->order == KVS_ORDER_FASTEST && first != SIZE_MAX) {
            if (fastest != SIZE_MAX) {
                pick = fastest;
                res->by_speedup++;
            } else {
                res->by_fallback++;
            }
        }
        if (chosen)
            chosen[t] = pick;
        if (pick == SIZE_MAX)
            continue; /* abstains: in every denominator over tasks, in no numerator */
        const struct kvs_slot *s = &p->slots[pick];
        const struct kvs_record *r = &p->ledger->records[s->record];
        res->shipped++;
        if (r->certificate == KA_FAIL) {
            res->unsafe++;
            /* the code it ships under: the gate accepted it */
            const char *code = ka_outcome_code(r->certificate, KA_WEAK_ACCEPT, r->axis[KA_AXIS_IMPLEMENTATION],
                                               r->axis[KA_AXIS_MEASUREMENT], r->stress_signature, NULL);
            res->c3 += !strncmp(code, "C3", 2);
        } else if (r->certificate != KA_PASS) {
            res->unresolved++;
        }
        res->human_unsafe += s->label == KVS_LABEL_UNSAFE;
        res->human_clean += s->label == KVS_LABEL_CLEAN;
        res->human_unknown += s->label == KVS_LABEL_UNKNOWN;
        for (size_t j = 0; j < n_k; j++)
            res->safefast[j] += r->certificate == KA_PASS && !isnan(s->speedup) && s->speedup > k[j];
    }
}

void kvs_human_bounds(const struct kvs_gate_result *r, uint64_t n, double *low, double *high)
{
    if (!n) {
        *low = *high = NAN;
        return;
    }
    *low = (double)r->human_unsafe / (double)n;
    *high = (double)(r->human_unsafe + r->human_unknown) / (double)n;
}

double kvs_contrast_gate(const uint64_t u[4], uint64_t tasks)
{
    if (!tasks)
        return NAN;
    double wf = (double)u[KVS_U_WEAK_FIRST], wv = (double)u[KVS_U_WEAK_FASTEST], cf = (double)u[KVS_U_AUDIT_FIRST],
           cv = (double)u[KVS_U_AUDIT_FASTEST];
    return 100.0 / 2 * ((wf - cf) + (wv - cv)) / (double)tasks;
}

double kvs_contrast_order(const uint64_t u[4], uint64_t tasks)
{
    if (!tasks)
        return NAN;
    double wf = (double)u[KVS_U_WEAK_FIRST], wv = (double)u[KVS_U_WEAK_FASTEST], cf = (double)u[KVS_U_AUDIT_FIRST],
           cv = (double)u[KVS_U_AUDIT_FASTEST];
    return 100.0 / 2 * ((wf - wv) + (cf - cv)) / (double)tasks;
}

void kvs_contrasts_average(const uint64_t (*u)[4], size_t n, uint64_t tasks, struct kvs_contrasts *c)
{
    c->g_mean = c->g_min = c->g_max = c->r_mean = c->r_min = c->r_max = NAN;
    if (!n || !tasks)
        return;
    double gs = 0, rs = 0;
    for (size_t v = 0; v < n; v++) {
        double g = kvs_contrast_gate(u[v], tasks), r = kvs_contrast_order(u[v], tasks);
        gs += g;
        rs += r;
        c->g_min = v ? fmin(c->g_min, g) : g;
        c->g_max = v ? fmax(c->g_max, g) : g;
        c->r_min = v ? fmin(c->r_min, r) : r;
        c->r_max = v ? fmax(c->r_max, r) : r;
    }
    c->g_mean = gs / (double)n;
    c->r_mean = rs / (double)n;
}
