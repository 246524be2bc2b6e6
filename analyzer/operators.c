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

int32_t ka_operator_open(struct ka_proc *p, uint32_t tid, uint32_t message, int cls, int32_t parent, uint64_t t)
{
    if (GROW(p->operators, p->n_operators, p->cap_operators))
        return -1;
    p->operators[p->n_operators] = (struct ka_operator){ .tid = tid, .parent = parent, .message = message,
                                                         .cls = (int8_t)cls, .start_ns = t, .end_ns = UINT64_MAX };
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
