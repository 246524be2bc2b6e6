/*
 * audit_phases.h - where an audit's worker time went, from the runner's own
 * clock (its events' "t", seconds since the runner started, and the seconds
 * its events carry): the record's phases_s (docs/audit.md, "The record").
 */
#ifndef KAUDIT_AUDIT_PHASES_H
#define KAUDIT_AUDIT_PHASES_H

struct kat_json;

/* The phases, in order; each is -1 when the log does not show it. */
enum audit_phase {
    AUDIT_PHASE_RUNNER_START,   /* the interpreter and PyTorch's import, before the first event */
    AUDIT_PHASE_REFERENCE,      /* the reference built, its slots fp32 and fp64, its timed calls */
    AUDIT_PHASE_CANDIDATE_BUILD, /* the candidate imported, built (its extensions compiled) and aligned */
    AUDIT_PHASE_SLOTS,          /* the candidate's slots, the long run and the extra slots */
    AUDIT_PHASE_PROBE,          /* the causal probe's replays */
    AUDIT_PHASE_TIMING,         /* the candidate's timed calls and the paired timing checks */
    AUDIT_PHASE_RUNNER,         /* the runner's whole time, to its "done" */
    AUDIT_PHASE_REFERENCE_FP64, /* of the reference's slots, the fp64 twin's share */
    AUDIT_PHASE_PARTY_WAIT,     /* the runner waiting for the candidate's process to be ready */
    AUDIT_PHASE_BUILD_TOOLS,    /* compilers, linkers and build drivers alive (the trace's processes; not
                                   from the log: audit_one sets it from the analysis) */
    AUDIT_PHASE_BUILD_OVERLAPPED, /* of the candidate's build, the seconds that ran beside the reference's
                                     slots (requested before them); candidate_build is the wait beyond */
    AUDIT_PHASES
};

extern const char *const audit_phase_names[AUDIT_PHASES];

/* Reads runner_dir/events.jsonl into s[AUDIT_PHASES]. */
void audit_phases_read(const char *runner_dir, double s[AUDIT_PHASES]);
/* The record's "phases_s" object. */
void audit_phases_write(struct kat_json *j, const double s[AUDIT_PHASES]);

#endif
