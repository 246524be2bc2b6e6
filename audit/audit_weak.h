/*
 * audit_weak.h - the weak surfaces of one audit (docs/validators.md, "Weak
 * surfaces"): which ones the plan asks for (`--weak-surfaces`), and their
 * decisions as the runner logged them (runner/kaudit_weak.py, events "weak").
 * A planned surface that did not report (the worker stopped before or during
 * it) is a REJECT: the paper counts inability to evaluate as one (Section 4).
 */
#ifndef KAUDIT_AUDIT_WEAK_H
#define KAUDIT_AUDIT_WEAK_H

#include <stddef.h>
#include <stdio.h>

/* The surfaces, in the order they run (the runner's names, the record's keys). */
#define AUDIT_WEAK_N 7
extern const char *const audit_weak_names[AUDIT_WEAK_N];

struct audit_weak_decision {
    int reported;               /* the runner logged it */
    int accept;                 /* 1 ACCEPT, 0 REJECT */
    char reason[512];
    double seconds;
};

struct audit_weak {
    unsigned planned;           /* bit i: audit_weak_names[i] */
    struct audit_weak_decision d[AUDIT_WEAK_N];
    double seconds;             /* the whole weak phase, when it ended */
};

/* Parses "all", "none" or a comma-separated list of names (case-insensitive)
 * into *mask.  0, or -1 with err naming what is wrong. */
int audit_weak_parse(const char *spec, unsigned *mask, char *err, size_t n);
/* The plan's "weak_surfaces" array for mask (static storage). */
const char *audit_weak_plan_json(unsigned mask);
/* Reads the runner's log; why_stopped says how the worker ended when it did
 * not finish (NULL when it did). */
void audit_weak_read(const char *runner_dir, unsigned planned, const char *why_stopped, struct audit_weak *w);

struct kat_json;
/* "weak_surfaces": {name: {decision, reason, seconds}}, or null when none was planned. */
void audit_weak_write_json(struct kat_json *j, const struct audit_weak *w);
void audit_weak_print(FILE *f, const struct audit_weak *w);

#endif
