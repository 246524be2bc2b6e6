/*
 * semantic.h - the semantic axis of `kaudit audit`, decided in C from what
 * the runner wrote: its event log (events.jsonl) and the tensor files of
 * every call (docs/audit.md, "The semantic verdict").
 *
 * FAIL needs a comparable execution that differs: a value outside the
 * calibrated allowance (tolerance.h), NaN or Inf against a finite reference,
 * a structure, dtype or shape that differs, an exception on an input the
 * reference accepts, an input mutated that the reference leaves alone, an
 * earlier output overwritten by a later call.  INCONCLUSIVE is an unmet
 * precondition (build or import failure, no verified state mapping, a
 * calibration above rho_max, a non-finite reference, fp64 unsupported, a
 * runner that crashed, was killed or timed out); an unresolved part never
 * erases an independent FAIL.  R-B is measured here too: a reference output
 * that is constant, or the same whatever the inputs, withholds the
 * certificate.
 */
#ifndef KAT_SEMANTIC_H
#define KAT_SEMANTIC_H

#include <stddef.h>
#include <stdint.h>

#include "tolerance.h"

enum kat_sem_verdict { KAT_SEM_PASS = 0, KAT_SEM_FAIL, KAT_SEM_INCONCLUSIVE };
const char *kat_sem_verdict_name(enum kat_sem_verdict v);

enum kat_sem_kind { KAT_SEM_CONVICTS = 1, KAT_SEM_UNRESOLVED, KAT_SEM_SIGNAL, KAT_SEM_SUPPORT };

struct kat_sem_finding {
    enum kat_sem_kind kind;
    char code[40];
    char *text;
    int slot;                  /* -1 when not about a slot */
    int call;
    char *slot_name;           /* NULL when not about a slot */
    char *leaf;                /* NULL when not about a leaf */
    int stress_slot;           /* the slot is not a native seed: an input the provider does not draw */
};

/* One compared leaf of one call. */
struct kat_sem_leaf {
    char *path;
    char dtype[12];
    char shape[64];
    const char *outcome;       /* "pass", "fail", "unresolved", "exact" (integer/bool leaf equal) */
    const char *rule;          /* the rule that decided the worst element: "eq1", "reference-floor", "exact" */
    struct kat_tol_calibration cal;
    struct kat_tol_comparison cmp;
    int calibrated;            /* cal and cmp hold values */
};

struct kat_sem_call {
    int call;
    char status[24];           /* ok, candidate-raised, missing */
    char instance[4];
    struct kat_sem_leaf *leaves;
    size_t n_leaves;
};

struct kat_sem_slot {
    int index;
    char *name, *kind, *layout;
    char *replaces, *replaced_because;  /* NULL unless this slot stands in for another */
    int dropped;               /* not judged: no tolerance can be calibrated on it (a reserve stands in) */
    int reported;              /* a transformation the plan does not gate: its findings are signals */
    struct kat_sem_call *calls;
    size_t n_calls;
};

/* How the runner process ended, as kaudit saw it. */
struct kat_runner_end {
    int exited;                /* exit status valid */
    int status;
    int signal;                /* killed by this signal, or 0 */
    int timed_out;             /* kaudit killed it at the time limit */
    double timeout_s;
    int recorder_killed;       /* the process between kaudit and the runner died by a signal */
    int resource;              /* kaudit stopped it over a limit (enum audit_resource: 1 memory, 2 disk), or 0 */
    unsigned long long resource_used, resource_limit;   /* bytes, when resource */
    char resource_detail[160]; /* the largest process or "files beyond the count walked", when resource */
    unsigned long long memory_peak, disk_peak;   /* the most seen while it ran (bytes; 0: not measured) */
};

struct kat_semantic {
    enum kat_sem_verdict verdict;
    char *root_cause;          /* NULL for PASS */
    char *degenerate;          /* R-B measured: why the reference cannot certify, or NULL */
    int signature;             /* a FAIL on a stress slot (an executable input the provider does not draw) */
    struct kat_tol_params params;
    char *alignment;           /* "by-name", "positional", "by-similarity", "none", or NULL when not reached */
    unsigned alignment_unverified; /* mapped tensors a swap among equals would leave unnoticed but for the
                                      outputs (positional, by-similarity): then a mismatch convicts nothing */
    int symmetric_reload;      /* the state_reload slot's second state gave tensors of one shape and dtype
                                  one value (its event's state_symmetric): its call 0 convicts under any
                                  mapping among them */
    int symmetric_reload_slot; /* that slot's index */
    char *python, *torch;      /* versions the runner reported */
    /* PyTorch's TF32 switches while the candidate ran (the reference runs
     * with both off): 1 on, 0 off, -1 not reported */
    int candidate_cudnn_tf32, candidate_matmul_tf32;
    struct kat_sem_slot *slots;
    size_t n_slots;
    struct kat_sem_finding *findings;
    size_t n_findings;
    unsigned calls_compared, leaves_compared, replaced_slots, dropped_slots, reported_slots;
    unsigned extra_slots;      /* the state after the calls (kind "state"), the long run (kind "long"),
                                  train_mode (kind "mode") and state_reload (kind "reload"): judged and
                                  gating, not among the sixteen */
};

/*
 * Decides the semantic axis from runner_dir (events.jsonl, tensors/).
 * planned_slots is the number of slots of the plan.  0 with *out set
 * (whatever the verdict); -1 with err only when out of memory.  A malformed
 * log or tensor file is a finding (unresolved) naming the file and place,
 * not an error.
 */
int kat_semantic_evaluate(const char *runner_dir, unsigned planned_slots, const struct kat_tol_params *params,
                          const struct kat_runner_end *end, struct kat_semantic **out, char *err, size_t n);
void kat_semantic_free(struct kat_semantic *s);

struct kat_json;
/* The "semantic" member of the audit record (docs/audit.md, "The record"). */
void kat_semantic_write_json(struct kat_json *j, const char *key, const struct kat_semantic *s);

#endif
