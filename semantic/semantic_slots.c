/*
 * semantic_slots.c - driving one slot: its "slot" event made into the
 * verdict's slot and calls, each call handed to semantic_compare.c, output
 * aliasing, and the dropping of a stress slot whose tolerance cannot be
 * calibrated, with the reserve native seeds that stand in for it.  Apart
 * from semantic.c (which reads the log) and semantic_compare.c (which
 * compares values): this is the slot bookkeeping between them.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "events.h"
#include "schedule.h"
#include "semantic.h"
#include "semantic_internal.h"

static int extra_slot(const struct kat_sem_slot *slot)
{
    static const char *const extra[] = { "state", "long", "mode", "reload", "shape_probe", "timed" };
    for (size_t i = 0; i < sizeof extra / sizeof extra[0]; i++)
        if (!strcmp(slot->kind, extra[i]))
            return 1;
    return 0;
}

static struct kat_sem_slot *new_slot(struct ctx *c, const cJSON *e)
{
    struct kat_semantic *s = c->s;
    void *q = sem_grow(c, s->slots, s->n_slots, sizeof *s->slots);
    if (!q)
        return NULL;
    s->slots = q;
    struct kat_sem_slot *slot = &s->slots[s->n_slots++];
    memset(slot, 0, sizeof *slot);
    slot->index = jint(e, "index", -1);
    slot->name = sem_strdup(c, kat_event_str(e, "name") ? kat_event_str(e, "name") : "?");
    slot->kind = sem_strdup(c, kat_event_str(e, "kind") ? kat_event_str(e, "kind") : "?");
    slot->layout = sem_strdup(c, kat_event_str(e, "layout"));
    slot->replaces = sem_strdup(c, kat_event_str(e, "replaces"));
    slot->replaced_because = sem_strdup(c, kat_event_str(e, "replaced_because"));
    if (slot->replaces)
        s->replaced_slots++;
    slot->reported = jflag(e, "gating") == 0;
    /* the state after the calls, the long run, train_mode, state_reload, the
       timed calls and a required shape probe are judged like slots, apart
       from the sixteen */
    if (slot->reported)
        s->reported_slots++;
    else if (extra_slot(slot))
        s->extra_slots++;
    if (!strcmp(slot->kind, "reload") && jflag(e, "state_symmetric") == 1) {
        s->symmetric_reload = 1;
        s->symmetric_reload_slot = slot->index;
    }
    return slot;
}

/* Whether the reference's own repeated calls overwrote the same call's same
 * output leaf (the slot's reference_aliasing, which the runner measures the
 * way the candidate's process does); logs without it: no. */
static int reference_aliases(const cJSON *slot_event, const cJSON *a)
{
    const char *leaf = kat_event_str(a, "leaf");
    int call = jint(a, "call", -1);
    const cJSON *r;
    cJSON_ArrayForEach(r, cJSON_GetObjectItemCaseSensitive(slot_event, "reference_aliasing"))
    {
        const char *rleaf = kat_event_str(r, "leaf");
        if (leaf && rleaf && !strcmp(leaf, rleaf) && jint(r, "call", -2) == call)
            return 1;
    }
    return 0;
}

/*
 * A reported slot (a transformation the contract does not declare valid)
 * never gates: what it found becomes signals, and a difference is summed up
 * in one finding whose code names the slot (layout_strided: layout-strided),
 * so the record, the report and the ledger say "right on the task's inputs,
 * wrong on a strided view" without convicting.
 */
static void report_only(struct ctx *c, const struct kat_sem_slot *slot, size_t first)
{
    const char *differs = NULL;
    size_t end = c->s->n_findings;
    for (size_t k = first; k < end; k++) {
        struct kat_sem_finding *f = &c->s->findings[k];
        if (f->kind == KAT_SEM_CONVICTS && !differs)
            differs = f->text ? f->text : f->code;
        if (f->kind == KAT_SEM_CONVICTS || f->kind == KAT_SEM_UNRESOLVED)
            f->kind = KAT_SEM_SIGNAL;
    }
    if (!differs)
        return;
    char code[40];
    kat_reported_code(slot->name, code, sizeof code);
    /* the text is copied before sem_add may move the findings */
    char *why = sem_strdup(c, differs);
    /* what the slot tried: the rerun under the candidate's switches, or an input transformation */
    const char *what = !strcmp(slot->kind, "flags")
                           ? "the reference run again under the switches the candidate flipped"
                       : !strcmp(slot->kind, "shape_probe")
                           ? "another shape derived from the task's own, which the contract does not declare"
                           : "an input transformation the contract does not declare valid";
    sem_add(c, KAT_SEM_SIGNAL, code, slot, -1, "reported slot %s (%s; it does not gate) differs: %s", slot->name,
        what, why ? why : "?");
    free(why);
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
        slot->replaces = sem_strdup(c, stands_for->name);
        slot->replaced_because = sem_strdup(c, stands_for->why);
        c->s->replaced_slots++;
    }
    const cJSON *calls = cJSON_GetObjectItemCaseSensitive(e, "calls");
    const cJSON *call;
    cJSON_ArrayForEach(call, calls)
    {
        void *q = sem_grow(c, slot->calls, slot->n_calls, sizeof *slot->calls);
        if (!q)
            return;
        slot->calls = q;
        struct kat_sem_call *sc = &slot->calls[slot->n_calls++];
        memset(sc, 0, sizeof *sc);
        sc->call = jint(call, "call", (int)slot->n_calls - 1);
    }
    size_t i = 0;
    cJSON_ArrayForEach(call, calls) sem_compare_call(c, slot, &slot->calls[i++], call);
    const cJSON *alias = cJSON_GetObjectItemCaseSensitive(e, "aliasing");
    const cJSON *a;
    cJSON_ArrayForEach(a, alias)
    {
        char at[96];
        sem_where(at, sizeof at, slot, jint(a, "call", -1));
        if (reference_aliases(e, a)) {
            sem_add(c, KAT_SEM_SIGNAL, "output-aliased-as-reference", slot, jint(a, "call", -1),
                "%s: the output it returned (leaf %s) was overwritten by a later call, as the reference's was "
                "(it returns a buffer the next call reuses): not convicted",
                at, kat_event_str(a, "leaf") ? kat_event_str(a, "leaf") : "?");
            continue;
        }
        struct kat_sem_finding *f =
            sem_add(c, KAT_SEM_CONVICTS, "output-aliased", slot, jint(a, "call", -1),
                "%s: the output it returned (leaf %s) was overwritten by a later call", at,
                kat_event_str(a, "leaf") ? kat_event_str(a, "leaf") : "?");
        if (f)
            f->leaf = sem_strdup(c, kat_event_str(a, "leaf"));
    }
    /*
     * A slot of any kind (a native seed or a reserve too) on which the
     * reference's own fp32 error is above rho_max (and nothing else is wrong)
     * cannot be judged: it is dropped, recorded, and the next reserve native
     * seed stands in for it, as the paper replaces the slots a task does not
     * support; the task is INCONCLUSIVE only once the reserves run out.  A
     * FAIL on it is kept.
     */
    if (slot->reported) {
        report_only(c, slot, first);
        return;
    }
    if (c->oom)
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
    /* a slot apart from the sixteen has no reserve: what it could not judge is a signal */
    if (!extra_slot(slot))
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
    if (extra_slot(slot))
        return;
    void *q = sem_grow(c, c->dropped, c->n_dropped, sizeof *c->dropped);
    if (!q)
        return;
    c->dropped = q;
    c->dropped[c->n_dropped].name = sem_strdup(c, slot->name);
    c->dropped[c->n_dropped].why = sem_strdup(c, why ? why : "the tolerance cannot be calibrated");
    c->n_dropped++;
}

void sem_on_slot(struct ctx *c, const cJSON *e)
{
    if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(e, "reserve"))) {
        void *q = sem_grow(c, c->reserves, c->n_reserves, sizeof *c->reserves);
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
void sem_use_reserves(struct ctx *c)
{
    for (size_t i = 0; i < c->n_dropped; i++) {
        if (i < c->n_reserves) {
            evaluate_slot(c, c->reserves[i], &c->dropped[i]);
        } else {
            sem_add(c, KAT_SEM_UNRESOLVED, "slot-not-calibratable", NULL, -1,
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
