/*
 * work_items.c - the work the implementation axis weighs (struct
 * ka_work_item): one item per outermost vendor call, one per class for the
 * candidate's framework kernels, for the vendor kernels it launched outside
 * any library call, and for framework kernels of an unknown party.
 */
#define _GNU_SOURCE
#include <fnmatch.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis_internal.h"
#include "trace_names.h"

static struct ka_work_item *add_item(struct ka_work_tally *w, int cls, double work, int kind, const char *process,
                                     uint64_t t, const char *fmt, ...)
    __attribute__((format(printf, 7, 8)));

static struct ka_work_item *add_item(struct ka_work_tally *w, int cls, double work, int kind, const char *process,
                                     uint64_t t, const char *fmt, ...)
{
    if (GROW(w->items, w->n_items, w->cap_items))
        return NULL;
    struct ka_work_item *it = &w->items[w->n_items++];
    memset(it, 0, sizeof *it);
    it->cls = cls;
    it->work = work;
    it->kind = kind;
    it->process = process ? strdup(process) : NULL;
    it->time_ns = t;
    va_list ap;
    va_start(ap, fmt);
    if (vasprintf(&it->what, fmt, ap) < 0)
        it->what = NULL;
    va_end(ap);
    return it;
}

static void call_fields(struct ka_work_item *it, const struct ka_vcall *vc)
{
    if (!it)
        return;
    it->has_call = 1;
    it->call_id = vc->rec.call_id;
    it->api = vc->api ? strdup(vc->api) : NULL;
    it->library = kat_vendor_library_name(vc->rec.library);
    it->caller = vc->caller && vc->caller[0] ? strdup(vc->caller) : NULL;
    it->below_framework = vc->caller_is_candidate;
    it->shape = (struct ka_call_shape){ .m = vc->rec.op.gemm.m, .n = vc->rec.op.gemm.n, .k = vc->rec.op.gemm.k,
                                        .type_c = vc->rec.op.gemm.type_c, .library = vc->rec.library };
    it->thread = vc->rec.thread_id;
    it->kernels = vc->kernels;
}

static void kernel_fields(struct ka_work_item *it, uint64_t count, const char *example)
{
    if (!it)
        return;
    it->kernels = count;
    it->example = example ? strdup(example) : NULL;
}

/* Vendor calls become work items (outermost calls only: nested ones are the same work). */
void ka_vendor_call_items(struct ka_work_tally *w, struct ka_analysis *a, const struct ka_contract *c,
                          const struct kinv_inventory *inv, const struct ka_proc *p)
{
    for (size_t i = 0; i < p->n_vcalls; i++) {
        const struct ka_vcall *vc = &p->vcalls[i];
        if (vc->outer != i)
            continue;
        if (p->weak_start_ns && vc->rec.enter_ns >= p->weak_start_ns)
            continue;   /* the weak surfaces' phase (kernels.c) */
        if (vc->party == KA_PARTY_REFERENCE) {
            a->reference_work.amount[vc->cls] += vc->work;
            a->reference_work.items[vc->cls]++;
            continue;
        }
        if (vc->party == KA_PARTY_UNKNOWN) {
            /* (out of memory: the item is not there; never write to the one before it) */
            struct ka_work_item *unknown = add_item(w, vc->cls, vc->work, KA_ITEM_VENDOR_CALL, p->file, vc->rec.enter_ns,
                     "%s (call %llu) called from %s (thread %u) by an unknown party: %s %.4g FLOP", vc->api,
                     (unsigned long long)vc->rec.call_id, vc->caller && vc->caller[0] ? vc->caller : "(unknown object)",
                     vc->rec.thread_id, ka_class_name(vc->cls), vc->work);
            if (unknown) {
                call_fields(unknown, vc);
                unknown->unattributed = 1;
            }
            continue;
        }
        if (vc->party != KA_PARTY_CANDIDATE)
            continue;
        int pinned = ka_library_pinned(inv, p, vc->rec.library);
        struct ka_work_item *it = add_item(w, vc->cls, vc->work, KA_ITEM_VENDOR_CALL, p->file, vc->rec.enter_ns,
                 "%s (call %llu) called from %s (thread %u)%s%s: %s %.4g %s, %llu kernels in its window", vc->api,
                 (unsigned long long)vc->rec.call_id, vc->caller && vc->caller[0] ? vc->caller : "(unknown object)", vc->rec.thread_id,
                 vc->caller_is_candidate ? ", the candidate's own object (below the framework)"
                 : vc->caller_is_framework ? ", reached through the framework in the candidate phase"
                                           : "",
                 pinned == 1 ? ", library pinned by the inventory" : pinned == 0 ? ", library NOT in the inventory" : "",
                 ka_class_name(vc->cls), vc->work,
                 vc->cls == KA_CLASS_GEMM || vc->cls == KA_CLASS_CONV ? "FLOP" : "units",
                 (unsigned long long)vc->kernels);
        if (!it)
            continue;
        /* Library uses the contract declares are exempt. */
        call_fields(it, vc);
        for (size_t u = 0; u < c->n_library_uses; u++) {
            const struct ka_library_use *use = &c->library_uses[u];
            if ((strcmp(use->library, "*") && kat_vendor_library_of(use->library) != vc->rec.library) || fnmatch(use->api, vc->api, 0) != 0 ||
                (use->cls >= 0 && use->cls != vc->cls))
                continue;
            it->exempt = 1;
            it->exempt_why = strdup("declared library use");
        }
    }
}

void ka_tally_pending(struct ka_work_tally *w, int bucket, unsigned mask, int fallback, double work, uint64_t count,
                      const char *example, const char *process, const char *op)
{
    for (size_t i = 0; i < w->n_pending; i++) {
        struct ka_fw_pending *e = &w->pending[i];
        if (e->bucket == bucket && e->mask == mask && e->fallback == fallback) {
            e->work += work;
            e->count += count;
            if (!e->op && op)
                e->op = strdup(op);
            return;
        }
    }
    if (GROW(w->pending, w->n_pending, w->cap_pending))
        return;
    w->pending[w->n_pending++] = (struct ka_fw_pending){
        .bucket = bucket, .mask = mask, .fallback = fallback, .work = work, .count = count,
        .example = example ? strdup(example) : NULL, .process = process ? strdup(process) : NULL,
        .op = op ? strdup(op) : NULL };
}

/* The pending framework work, in the class its evidence allows that the verdict weighs most (operators.c). */
static void resolve_pending(struct ka_work_tally *w, unsigned forbidden, int dominant)
{
    for (size_t i = 0; i < w->n_pending; i++) {
        struct ka_fw_pending *e = &w->pending[i];
        int cls = ka_choose_class(e->mask, e->fallback, forbidden, dominant);
        if (e->bucket == KA_FW_UNKNOWN) {
            w->unk_fw_work[cls] += e->work;
            w->unk_fw_count[cls] += e->count;
            continue;
        }
        w->fw_work[cls] += e->work;
        w->fw_count[cls] += e->count;
        if (!w->fw_example[cls] && e->example) {
            w->fw_example[cls] = strdup(e->example);
            w->fw_process[cls] = e->process ? strdup(e->process) : NULL;
        }
        if (!w->fw_operator[cls] && e->op)
            w->fw_operator[cls] = strdup(e->op);
    }
}

/* After all traces: the per-class sums of kernels become one item per class. */
void ka_tally_items(struct ka_work_tally *w, unsigned forbidden, int dominant)
{
    resolve_pending(w, forbidden, dominant);
    /* The framework kernels of the candidate become one item per class. */
    for (int cls = 0; cls < KA_CLASS_COUNT; cls++)
        if (w->fw_count[cls]) {
            struct ka_work_item *it = add_item(w, cls, w->fw_work[cls], KA_ITEM_FRAMEWORK_KERNELS, w->fw_process[cls], 0,
                     "%llu framework kernel%s of class %s in the candidate phase (e.g. '%.120s'%s%.160s): %.4g "
                     "elements by the threads-launched proxy",
                     (unsigned long long)w->fw_count[cls], w->fw_count[cls] == 1 ? "" : "s", ka_class_name(cls),
                     w->fw_example[cls], w->fw_operator[cls] ? ", launched by " : "",
                     w->fw_operator[cls] ? w->fw_operator[cls] : "", w->fw_work[cls]);
            kernel_fields(it, w->fw_count[cls], w->fw_example[cls]);
            if (it && w->fw_operator[cls])
                it->op = strdup(w->fw_operator[cls]);
        }

    for (int cls = 0; cls < KA_CLASS_COUNT; cls++)
        if (w->nm_count[cls]) {
            struct ka_work_item *it = add_item(w, cls, 0, KA_ITEM_VENDOR_KERNEL, w->nm_process[cls], w->nm_time[cls],
                     "%llu vendor kernel%s of class %s launched by the candidate outside any intercepted library "
                     "call, e.g. %s",
                     (unsigned long long)w->nm_count[cls], w->nm_count[cls] == 1 ? "" : "s", ka_class_name(cls),
                     w->nm_example[cls] ? w->nm_example[cls] : "?");
            kernel_fields(it, w->nm_count[cls], w->nm_example[cls]);
        }
    for (int cls = 0; cls < KA_CLASS_COUNT; cls++)
        if (w->unk_fw_count[cls]) {
            struct ka_work_item *it = add_item(w, cls, w->unk_fw_work[cls], KA_ITEM_FRAMEWORK_KERNELS, NULL, 0,
                     "%llu framework kernel%s of class %s launched by an unknown party: %.4g elements by the "
                     "threads-launched proxy",
                     (unsigned long long)w->unk_fw_count[cls], w->unk_fw_count[cls] == 1 ? "" : "s",
                     ka_class_name(cls), w->unk_fw_work[cls]);
            kernel_fields(it, w->unk_fw_count[cls], NULL);
            if (it)
                it->unattributed = 1;
        }
}

void ka_work_tally_free(struct ka_work_tally *w)
{
    for (size_t i = 0; i < w->n_items; i++) {
        free(w->items[i].what);
        free(w->items[i].process);
        free(w->items[i].exempt_why);
        free(w->items[i].api);
        free(w->items[i].caller);
        free(w->items[i].example);
        free(w->items[i].op);
    }
    free(w->items);
    for (size_t i = 0; i < w->n_pending; i++) {
        free(w->pending[i].example);
        free(w->pending[i].process);
        free(w->pending[i].op);
    }
    free(w->pending);
    for (int i = 0; i < KA_CLASS_COUNT; i++) {
        free(w->fw_example[i]);
        free(w->fw_process[i]);
        free(w->fw_operator[i]);
        free(w->nm_example[i]);
        free(w->nm_process[i]);
    }
    memset(w, 0, sizeof *w);
}
