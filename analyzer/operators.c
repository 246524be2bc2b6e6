/*
 * operators.c - which ATen operator launched a kernel (docs/analysis.md,
 * "Operators").
 *
 * PyTorch's NVTX mode pushes one range per operator on the thread that runs
 * it ("aten::topk, seq = 3, op_id = 7, sizes = [[4096, 8192], [], ...]");
 * kaudit's sitecustomize switches it on in sampled calls of the watched
 * parties (docs/python-provenance.md, "Operators").  Pass 1 keeps each such
 * range (index.c); a launch then belongs to the innermost operator open on
 * its thread at its launch call, the one whose code launched it.
 */
#define _GNU_SOURCE
#include <stdlib.h>

#include "analysis_internal.h"

int32_t ka_operator_open(struct ka_proc *p, uint32_t tid, uint32_t message, int cls, enum ka_party party,
                         int32_t parent, uint64_t t)
{
    if (GROW(p->operators, p->n_operators, p->cap_operators))
        return -1;
    p->operators[p->n_operators] = (struct ka_operator){ .tid = tid, .parent = parent, .message = message,
                                                         .cls = (int8_t)cls, .party = (uint8_t)party,
                                                         .start_ns = t, .end_ns = UINT64_MAX };
    return (int32_t)p->n_operators++;
}

static int operator_cmp(const void *x, const void *y, void *base)
{
    const struct ka_operator *ops = base;
    const struct ka_operator *a = &ops[*(const uint32_t *)x], *b = &ops[*(const uint32_t *)y];
    if (a->tid != b->tid)
        return a->tid < b->tid ? -1 : 1;
    if (a->start_ns != b->start_ns)
        return a->start_ns < b->start_ns ? -1 : 1;
    return *(const uint32_t *)x < *(const uint32_t *)y ? -1 : 1;  /* a child after its parent */
}

void ka_operators_finish(struct ka_proc *p)
{
    if (!p->n_operators)
        return;
    p->operator_order = malloc(p->n_operators * sizeof *p->operator_order);
    if (!p->operator_order) {
        p->n_operators = 0;     /* no operators known: the names decide, as without them */
        return;
    }
    for (size_t i = 0; i < p->n_operators; i++)
        p->operator_order[i] = (uint32_t)i;
    qsort_r(p->operator_order, p->n_operators, sizeof *p->operator_order, operator_cmp, p->operators);
}

const struct ka_operator *ka_operator_at(const struct ka_proc *p, uint32_t tid, uint64_t t)
{
    if (!p->operator_order)
        return NULL;
    size_t lo = 0, hi = p->n_operators;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        const struct ka_operator *op = &p->operators[p->operator_order[mid]];
        if (op->tid < tid || (op->tid == tid && op->start_ns <= t))
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == 0)
        return NULL;
    const struct ka_operator *op = &p->operators[p->operator_order[lo - 1]];
    if (op->tid != tid)
        return NULL;
    /* ranges of a thread nest: the last one started, or the nearest ancestor still open */
    for (int depth = 0; op && depth < 4096; depth++) {
        if (op->end_ns >= t)
            return op;
        op = op->parent >= 0 ? &p->operators[op->parent] : NULL;
    }
    return NULL;
}

/* ---- what the operators say of one kernel name -------------------------------- */

/*
 * The candidate can write operator ranges of its own, so what they say is
 * weighed by whose phase wrote them (docs/analysis.md, "Operators"): a range
 * counts only for launches of the party whose phase it opened in, so a range
 * left open or pushed in the candidate's phase never relabels the reference's
 * work (R) or the harness's.  For the reference, a name takes its operators'
 * class when they all agree.  For the candidate (and an unknown party), every
 * class its evidence allows is kept, and the verdict counts the work in a
 * forbidden one if there is one (ka_choose_class): a range can add a class to
 * a kernel, never take one away.  The reference's operators speak for the
 * candidate's launches of the same name too, but only for names that say
 * little (other, a generic launcher): a glue name (a fill) that some compute
 * operator launched directly stays glue for a candidate that fills its output.
 */
void ka_operator_learn(struct ka_operator_evidence *e, int bucket, const struct ka_operator *op)
{
    if (op->cls < 0 || bucket < 0 || bucket >= KA_FW_BUCKETS)
        return;
    e->learned[bucket] |= (uint16_t)(1u << op->cls);
    if (!e->message[bucket])
        e->message[bucket] = op->message;
}

static int only_class(unsigned mask)
{
    return mask && !(mask & (mask - 1)) ? __builtin_ctz(mask) : -1;
}

int ka_operator_reference_class(const struct ka_operator_evidence *e, int name_cls, int strength)
{
    int one = only_class(e->learned[KA_FW_REFERENCE]);
    return one >= 0 ? ka_refine_class(name_cls, strength, one) : name_cls;
}

unsigned ka_operator_classes(const struct ka_operator_evidence *e, int bucket, int name_cls, int strength,
                             int *fallback)
{
    unsigned own = e->learned[bucket], others = 0, mask = 1u << name_cls;
    for (int b = 0; b < KA_FW_BUCKETS; b++)
        if (b != bucket)
            others |= e->learned[b];
    if (strength == KA_NAME_SPECIFIC)
        others = 0;
    for (int cls = 0; cls < KA_CLASS_COUNT; cls++)
        if ((own | others) & (1u << cls))
            mask |= 1u << ka_refine_class(name_cls, strength, cls);
    int one = only_class(own) >= 0 ? only_class(own) : only_class(others);
    *fallback = one >= 0 ? ka_refine_class(name_cls, strength, one) : name_cls;
    return mask;
}

int ka_choose_class(unsigned mask, int fallback, unsigned forbidden, int dominant)
{
    if (dominant >= 0 && (mask & (1u << dominant)))
        return dominant;
    if (mask & forbidden)
        return __builtin_ctz(mask & forbidden);
    return fallback;
}
