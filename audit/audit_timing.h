/*
 * audit_timing.h - the timing checks of one audit, from the runner's log
 * (docs/timing.md; paper 3.4 and Appendix A).
 *
 * The runner times and logs (event "timing": check, arms, clock, batches of
 * latencies); the statistics are timing/timing_stats.c's.  Three checks:
 *   aa       two instances of the reference: the A/A screen, which withholds
 *            speedups (never certificates) when the timing is unstable;
 *   speedup  the reference against the candidate, batches in random ABBA or
 *            BAAB order: reported only with A/A passage, measurement PASS
 *            and its interval;
 *   stream   the candidate with and without a full-device synchronize
 *            around it (GPU only): when the guarded time is >= 3x the
 *            unguarded one (interval too), >= 0.05 ms apart, and the trace
 *            shows the candidate's work beside the timing stream, the
 *            certificate is withheld (INCONCLUSIVE), never convicted.
 */
#ifndef KAUDIT_AUDIT_TIMING_H
#define KAUDIT_AUDIT_TIMING_H

#include <stdio.h>

#include "analysis.h"
#include "timing_stats.h"

struct audit_timing_check {
    int present;                 /* the runner logged it */
    int error;                   /* the runner's timing raised, or its latencies do not read: why */
    char clock[16];              /* cuda-event or perf-counter */
    char orders[KAT_TIMING_BATCHES][8];
    double seconds;              /* what the check cost the worker */
    struct kat_paired_result r;
    char why[256];
};

/* One timed phase's turn on its device (event "timing_turn"). */
struct audit_timing_turn {
    char phase[16];              /* reference or candidate */
    char device[80];             /* gpu-UUID or cpu */
    char status[16];             /* held, not-held (timed anyway past the wait), error */
    double waited_s;
};

#define AUDIT_TIMING_TURNS 2

struct audit_timing {
    int requested;               /* the plan asked for timing */
    int turns_planned;           /* the plan gave a lock directory: one reference and one candidate turn are due */
    struct audit_timing_turn turns[AUDIT_TIMING_TURNS];
    int n_turns;                 /* the reference and candidate turns logged (0 with KAUDIT_TIMING_LOCK_DIR=none) */
    int extra_turns;             /* a phase's turn logged twice: written by someone else too */
    struct audit_timing_check aa, speedup, stream;
    int aa_passed;
    int speedup_reportable;
    char speedup_why[600];       /* why it is withheld */
    int stream_criterion, stream_attributable, stream_withholds;
    char stream_why[512];
    int has_claimed;
    double claimed;              /* --claimed-speedup: the weak validator's figure */
};

/* Where concurrent audits' timed phases take turns (docs/timing.md,
 * "Concurrent audits"): $KAUDIT_TIMING_LOCK_DIR, else
 * /tmp/kaudit-timing-locks, made when missing (mode 1777: audits of every
 * user share a GPU's turns).  "none" or "": no turns.  0 with dir filled;
 * 1 with dir empty (no turns, why in why); never fails the audit. */
int audit_timing_lock_dir(char *dir, size_t n, char *why, size_t why_n);

/* How long a turn is waited for: min(120 s, timeout_s / 4), or
 * $KAUDIT_TIMING_LOCK_WAIT_S when that is shorter. */
double audit_timing_lock_wait(double timeout_s);

/* Reads runner_dir/events.jsonl.  Malformed timing events become a check's
 * error, never a failure of the audit. */
void audit_timing_read(const char *runner_dir, int requested, int turns_planned, struct audit_timing *t);

/* The decisions that need the analysis (measurement PASS, the trace's
 * evidence of work beside the timing stream). */
void audit_timing_decide(struct audit_timing *t, const struct ka_analysis *an);

struct kat_json;
void audit_timing_write_json(struct kat_json *j, const struct audit_timing *t);
void audit_timing_print(FILE *f, const struct audit_timing *t);

#endif
