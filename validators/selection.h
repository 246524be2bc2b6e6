/*
 * selection.h - selection gates over a fixed pool of tasks x slots (paper
 * Section 8 and Appendix G, RQ4; docs/validators.md, "Selection gates").
 *
 * A gate ships at most one candidate per task: an eligibility set (a weak
 * validator's ACCEPT, the audit's PASS certificate E1, or the three axes'
 * PASS E_axis) and an order (the first eligible slot, or the eligible slot
 * with the largest usable speedup, ties to the earlier slot, the first
 * eligible slot when none has one).  What it ships is scored against the
 * certificates (oracle-visible unsafe: a FAIL certificate, C2 or C3*), against
 * human labels where given (identification bounds over the unknown ones), and
 * by SafeFast@k.  Every rate divides by the number of tasks, abstentions
 * included; unsafe/shipped divides by the deliveries.
 */
#ifndef KAUDIT_VALIDATOR_SELECTION_H
#define KAUDIT_VALIDATOR_SELECTION_H

#include <stddef.h>
#include <stdint.h>

#include "ledger.h"

enum kvs_label { KVS_LABEL_UNKNOWN = 0, KVS_LABEL_CLEAN, KVS_LABEL_UNSAFE };

/* One candidate of the pool: a ledger record placed at (task, slot). */
struct kvs_slot {
    size_t record;          /* its index in the ledger */
    size_t task;            /* its index in kvs_pool.tasks */
    long long slot;         /* its place in the task's fixed order (smaller is earlier) */
    double speedup;         /* the usable speedup (reportable, positive, finite ratio); NaN when none */
    unsigned line;          /* the ledger line it came from (messages) */
    unsigned char label;    /* enum kvs_label: the human label; unknown without one */
};

struct kvs_pool {
    const struct kvs_ledger *ledger;
    struct kvs_slot *slots;     /* grouped by task (in order of first appearance), then by slot */
    size_t n_slots;
    char **tasks;
    size_t n_tasks;
    size_t *task_start;         /* task t's slots are slots[task_start[t] .. task_start[t + 1]) */
    int labelled;               /* whether human labels were read (kvs_pool_labels_read) */
};

/* Places every record of l, read from the ledger file path (the same one),
 * at its "task" (a non-empty string) and "slot" (a non-negative integer),
 * with its usable speedup from "speedup": {"ratio", "reportable"}.  A record
 * without a task or slot, or a second record at one (task, slot), is an
 * error.  0, or -1 with a message naming the file and line in err. */
int kvs_pool_read(struct kvs_pool *p, const struct kvs_ledger *l, const char *path, char *err, size_t errlen);
/* Human labels: lines {"id", "label": clean|unsafe|unknown}.  An id the pool
 * lacks, or a second label of one id, is an error; a slot without a line is
 * unknown. */
int kvs_pool_labels_read(struct kvs_pool *p, const char *path, char *err, size_t errlen);
void kvs_pool_free(struct kvs_pool *p);

enum kvs_eligibility {
    KVS_ELIGIBLE_WEAK,      /* E_W: the validator accepted the slot (no decision: not eligible) */
    KVS_ELIGIBLE_AUDIT,     /* E1: the certificate is PASS */
    KVS_ELIGIBLE_AXES       /* E_axis: semantic, implementation and measurement all PASS */
};
enum kvs_order { KVS_ORDER_FIRST, KVS_ORDER_FASTEST };

struct kvs_gate {
    enum kvs_eligibility eligibility;
    size_t validator;       /* KVS_ELIGIBLE_WEAK: the ledger's validator */
    enum kvs_order order;
};

/* At most this many SafeFast thresholds. */
#define KVS_MAX_K 8

struct kvs_gate_result {
    uint64_t tasks, slots;
    uint64_t eligible;      /* eligible slots */
    uint64_t undecided;     /* KVS_ELIGIBLE_WEAK: slots the validator did not decide */
    uint64_t shipped;       /* tasks with a delivery: coverage = shipped / tasks */
    uint64_t by_speedup;    /* fastest: deliveries chosen by their speedup */
    uint64_t by_fallback;   /* fastest: deliveries of the first eligible slot, none having a speedup */
    uint64_t unsafe;        /* oracle-visible unsafe deliveries: FAIL certificates (C2 and C3*) */
    uint64_t c3;            /* of them C3a, C3b or C3c */
    uint64_t unresolved;    /* deliveries with an INCONCL certificate: in no numerator */
    uint64_t human_unsafe, human_clean, human_unknown;   /* deliveries by human label */
    uint64_t safefast[KVS_MAX_K];   /* deliveries in E1 with a usable speedup > k[i] */
};

/* Runs gate g over the pool: chosen (when not NULL, n_tasks entries) gets
 * each task's delivery as an index into p->slots, SIZE_MAX when the gate
 * abstains; r the tallies, with SafeFast at the n_k thresholds k (n_k <= KVS_MAX_K). */
void kvs_gate_run(const struct kvs_pool *p, const struct kvs_gate *g, const double *k, size_t n_k,
                  struct kvs_gate_result *r, size_t *chosen);

/* Whether slot s is eligible under g. */
int kvs_gate_eligible(const struct kvs_pool *p, const struct kvs_gate *g, const struct kvs_slot *s);

/* Identification bounds of the human unsafe rate over n (the tasks, or the
 * deliveries): the unknown deliveries all clean, then all unsafe:
 * [unsafe / n, (unsafe + unknown) / n]; NaN both when n = 0. */
void kvs_human_bounds(const struct kvs_gate_result *r, uint64_t n, double *low, double *high);

/* The gate and ordering contrasts of Appendix G, in percentage points, for
 * one weak validator: u the oracle-visible unsafe deliveries of S0 (weak,
 * first), S0-fast (weak, fastest), S1-first (audit, first) and S1 (audit,
 * fastest), over tasks.  G = 100/2 ((u_wf - u_cf) + (u_wv - u_cv)),
 * R = 100/2 ((u_wf - u_wv) + (u_cf - u_cv)), each u a count over tasks; NaN
 * when tasks = 0. */
enum { KVS_U_WEAK_FIRST, KVS_U_WEAK_FASTEST, KVS_U_AUDIT_FIRST, KVS_U_AUDIT_FASTEST };
double kvs_contrast_gate(const uint64_t u[4], uint64_t tasks);
double kvs_contrast_order(const uint64_t u[4], uint64_t tasks);

/* G and R averaged equally over n validators, with their ranges. */
struct kvs_contrasts {
    double g_mean, g_min, g_max, r_mean, r_min, r_max;
};
void kvs_contrasts_average(const uint64_t (*u)[4], size_t n, uint64_t tasks, struct kvs_contrasts *c);

#endif
