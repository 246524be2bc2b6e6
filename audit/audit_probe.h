/*
 * audit_probe.h - the causal probe of one audit, from the runner's log
 * (docs/audit.md, "Causal probe"; docs/analysis.md, "Causal probe").
 *
 * The runner (runner/kaudit_probe.py) replays the candidate's call on the
 * task's inputs with the outputs of its targeted ATen operators replaced by
 * seeded noise and logs one event "probe" (its replays and their output
 * files); here the outputs are compared (the numerics are kaudit's, in C),
 * the replays' checks are made, and the evidence goes to the analyzer
 * (struct ka_probe_evidence).
 */
#ifndef KAUDIT_AUDIT_PROBE_H
#define KAUDIT_AUDIT_PROBE_H

#include <stdio.h>

#include "analysis.h"
#include "tolerance.h"

/* The relative output change above which the output depends on the perturbed work (paper, Eq. 2). */
#define AUDIT_PROBE_THRESHOLD 1e-3

struct audit_probe {
    int planned;                    /* the plan asked for it */
    struct ka_probe_evidence ev;
    char why[512];                  /* ev.why points here */
    char targets[512];              /* ev.targets points here */
    char vendor_why[400];           /* the vendor replay did not decide: why (its calls keep launch provenance) */
    char localization_why[400];     /* the vendor replays one call or family at a time did not count: why */
    char baseline_why[400];         /* ev.baseline_why points here */
    unsigned vendor_listed;         /* calls the runner described (ev.vendor_call) */
    unsigned replays;
    double seconds;
};

/* Reads runner_dir/events.jsonl and the probe's output files; params are the
 * semantic axis's, with which the baseline is compared with the reference. */
void audit_probe_read(const char *runner_dir, int planned, const struct kat_tol_params *params,
                      struct audit_probe *p);

/* "match", "mismatch", "unverified", "unchecked" (the record's probe.baseline.state). */
const char *audit_probe_baseline_name(enum ka_probe_baseline b);

struct kat_json;
void audit_probe_write_json(struct kat_json *j, const struct audit_probe *p);
void audit_probe_print(FILE *f, const struct audit_probe *p);

#endif
