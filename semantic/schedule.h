/*
 * schedule.h - the stress schedule of `kaudit audit` and the plan that hands
 * it to the runner (docs/audit.md, "The schedule"; paper Section 3.2 and
 * Appendix B).
 *
 * Sixteen slots: twelve fixed (value scales, distributions, layouts, an
 * alternative shape, repeated calls) and four native seeds (the task's own
 * get_inputs() under seeds S..S+3).  A slot the task cannot take (no
 * floating input, a dtype that cannot hold the scale, no alternative shape
 * in the contract, a reference that raises or returns non-finite values on
 * it) is replaced by the next spare native seed, and the record says which
 * and why.  The runner executes the plan; this file only says what it is.
 */
#ifndef KAT_SCHEDULE_H
#define KAT_SCHEDULE_H

#include <stddef.h>
#include <stdint.h>

enum kat_slot_kind { KAT_SLOT_VALUE, KAT_SLOT_LAYOUT, KAT_SLOT_SHAPE, KAT_SLOT_REPEATED, KAT_SLOT_NATIVE,
                     KAT_SLOT_SHAPE_PROBE };

struct kat_slot {
    const char *name;
    enum kat_slot_kind kind;
    const char *dist;       /* KAT_SLOT_VALUE: normal, uniform, heavy_tailed, sparse, constant, signed_extremes */
    double scale;           /* KAT_SLOT_VALUE: multiplies the drawn values */
    const char *layout;     /* KAT_SLOT_LAYOUT: strided, transposed */
    unsigned seed_offset;   /* KAT_SLOT_NATIVE: get_inputs() under seed S + offset */
    const char *variant;    /* KAT_SLOT_SHAPE_PROBE: how the shapes are derived from the task's own */
};

#define KAT_SCHEDULE_SLOTS 16
#define KAT_SCHEDULE_SPARES 8
#define KAT_SCHEDULE_RESERVES 4
extern const struct kat_slot kat_schedule[KAT_SCHEDULE_SLOTS];
/* Spares: the runner's stand-ins for slots the task cannot take. */
extern const struct kat_slot kat_schedule_spares[KAT_SCHEDULE_SPARES];
/* Reserves: always run after the slots; semantic.c's stand-ins for slots
 * whose tolerance cannot be calibrated (the reference's own fp32 error on
 * that slot's inputs is above rho_max: no allowance can be derived). */
extern const struct kat_slot kat_schedule_reserves[KAT_SCHEDULE_RESERVES];
const char *kat_slot_kind_name(enum kat_slot_kind k);

/*
 * The optional transformations a fixed slot applies, as bits.  Which of them
 * gate is the plan's (docs/audit.md, "What gates"): under the paper's
 * contract-supported policy only those the task's contract declares valid.
 * A slot whose transformation does not gate is run as a reported slot (its
 * failure a finding that names it, never a conviction) and the next spare
 * native seed takes its place among the sixteen, as the paper's Appendix B
 * replaces unsupported optional transformations.
 */
#define KAT_TRANSFORM_STRIDED (1u << 0)
#define KAT_TRANSFORM_TRANSPOSED (1u << 1)
#define KAT_TRANSFORM_LAYOUTS (KAT_TRANSFORM_STRIDED | KAT_TRANSFORM_TRANSPOSED)
#define KAT_TRANSFORM_SHAPES (1u << 2)
/* Shape probes: other shapes derived from the task's own where the reference
 * runs on them (every size one larger: no multiple of a tile width; another
 * batch size); reported, gating only with --require shapes. */
#define KAT_SCHEDULE_SHAPE_PROBES 2
extern const struct kat_slot kat_schedule_shape_probes[KAT_SCHEDULE_SHAPE_PROBES];
/* The slot's transformation bit; 0 for a slot that always gates (values,
 * distributions, repeated calls, native seeds; the shape slot runs only with
 * the contract's alternative shapes, so it is declared whenever it runs). */
unsigned kat_slot_transform(const struct kat_slot *s);
/* The code of the finding that sums up a reported slot's difference: the
 * slot's name with dashes (layout_strided: layout-strided), into buf. */
const char *kat_reported_code(const char *slot_name, char *buf, size_t n);
/* A comma-separated list of transformations ("layouts", "strided",
 * "transposed", "shapes") as bits: 0, or -1 with the first unknown name in bad. */
int kat_transforms_parse(const char *list, unsigned *bits, char *bad, size_t n);
/* The bits as names ("strided,transposed"; "none" for 0) into buf. */
const char *kat_transforms_name(unsigned bits, char *buf, size_t n);

/* What the runner needs (all paths absolute). */
struct kat_plan {
    const char *reference, *candidate;
    const char *device;                 /* "cuda" or "cpu" */
    uint64_t seed;
    const char *out_dir;                /* events.jsonl and tensors/ go here */
    const char *work_dir;               /* the runner's working directory */
    const char *alternative_shapes;     /* JSON array text from the contract, or NULL */
    const char *candidate_only_state;   /* the contract's state.candidate_only, JSON array text, or NULL */
    unsigned timed_calls;
    int timing;                 /* the measurement tier's timing checks (A/A, speedup, stream differential) */
    const char *timing_lock_dir;        /* where concurrent audits' timing takes turns (docs/timing.md), NULL: no turns */
    int timing_turns;                   /* with a lock dir: the timed phases hold the device (timing on, or a GPU) */
    double timing_lock_wait_s;          /* how long a turn is waited for before timing anyway */
    int describe_only;                  /* stop after the reference's get_inputs() (kaudit contract new) */
    const char *probe;                  /* the causal probe's targets (JSON, ka_probe_targets_json), NULL: none */
    const char *weak_surfaces;          /* JSON array of the weak surfaces to run after the audit, NULL: none */
    const char *party;                  /* JSON object: the candidate's process (audit/audit_party.h), NULL: none */
    unsigned gated_transforms;          /* KAT_TRANSFORM_* bits whose slots gate; the others are reported */
    unsigned long_run_calls;            /* the long run's calls of instance A (docs/audit.md), 0: none */
    int modes;                          /* the train_mode slot where the reference's output depends on its mode */
    int state_reload;                   /* the state_reload slot: a second state loaded after the calls */
    const char *const *write_roots;     /* where the tasks' Python code may write (the runner's audit hook) */
    size_t n_write_roots;
};

/* Writes the plan (docs/audit.md, "The plan") to path.  0, or -1 with err. */
int kat_plan_write(const char *path, const struct kat_plan *p, char *err, size_t n);

#endif
