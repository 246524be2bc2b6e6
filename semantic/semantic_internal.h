/*
 * semantic_internal.h - what the parts of the semantic verdict share; not
 * part of the interface (semantic.h).  The verdict is built in one context
 * (struct ctx) by four files, one job each: semantic.c reads the runner's
 * event log and decides, semantic_slots.c drives one slot's calls (and the
 * reserves that stand in for dropped slots), semantic_compare.c compares one
 * call's outputs with the reference's, semantic_record.c writes the verdict
 * into the audit record.
 */
#ifndef KAUDIT_SEMANTIC_INTERNAL_H
#define KAUDIT_SEMANTIC_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "events.h"
#include "semantic.h"

/* The verdict as the log is read (kat_semantic_evaluate). */
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

/* ---- building (semantic.c) ---- */

/* strdup that notes running out of memory in c (NULL stays NULL). */
char *sem_strdup(struct ctx *c, const char *s);
/* Before storing element n of the array p: p, or p grown (its capacity
 * doubles at powers of two); NULL and c->oom when out of memory. */
void *sem_grow(struct ctx *c, void *p, size_t n, size_t size);
/* A new finding (NULL when out of memory); slot NULL and call -1 for one
 * about the whole run. */
__attribute__((format(printf, 6, 7))) struct kat_sem_finding *
sem_add(struct ctx *c, enum kat_sem_kind kind, const char *code, const struct kat_sem_slot *slot, int call,
        const char *fmt, ...);
void sem_where(char *buf, size_t n, const struct kat_sem_slot *slot, int call);

static inline int jint(const cJSON *o, const char *key, int dflt)
{
    return (int)kat_event_num(o, key, dflt);
}

/* 1 or 0 for a JSON boolean, -1 when the key is missing or not one */
static inline int jflag(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsBool(v) ? cJSON_IsTrue(v) : -1;
}

/* ---- one slot (semantic_slots.c) ---- */

/* A "slot" event: judged now, or kept when it is a reserve. */
void sem_on_slot(struct ctx *c, const cJSON *e);
/* The reserves, in order, for the dropped slots; frees both lists. */
void sem_use_reserves(struct ctx *c);

/* ---- one call (semantic_compare.c) ---- */

void sem_compare_call(struct ctx *c, const struct kat_sem_slot *slot, struct kat_sem_call *call, const cJSON *e);

#endif
