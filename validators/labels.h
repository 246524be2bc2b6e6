/*
 * labels.h - agreement of certificates with human labels on a stratified
 * sample (paper Section 6.3, Table 8, Appendix H; docs/validators.md,
 * "Human labels"): design-weighted sensitivity, specificity, PPV and NPV,
 * the unknown-label and INCONCL-defect shares, and the human-referenced
 * false-accept rate of each weak validator, each with a 95% posterior
 * interval under the finite-population stratified Jeffreys-Dirichlet
 * completion.
 */
#ifndef KAUDIT_VALIDATOR_LABELS_H
#define KAUDIT_VALIDATOR_LABELS_H

#include <stddef.h>
#include <stdint.h>

#include "ledger.h"

enum kvl_cell { KVL_PASS, KVL_FAIL, KVL_INCONCL, KVL_CELLS };        /* the unit's (selected) certificate */
enum kvl_label { KVL_DEFECT, KVL_CLEAN, KVL_UNKNOWN, KVL_LABELS };   /* the human label */
extern const char *const kvl_cell_names[KVL_CELLS];
extern const char *const kvl_label_names[KVL_LABELS];

/* A design stratum h: N_h units, n_h of them labelled, drawn with probability
 * pi_h; N_hj of its units have certificate j; x[j][l] labelled units have
 * certificate j and label l.  accepted[v][j]: of the N_hj, how many validator v
 * accepts (the false-accept strata h x accepted); xa[v][j][l] the labelled ones. */
struct kvl_stratum {
    char *name;
    unsigned line;                      /* its declaration's line, for messages */
    uint64_t N, n, n_declared;          /* n_declared: "n" when given, else UINT64_MAX */
    double pi;
    int cells_given;
    uint64_t cell_N[KVL_CELLS];
    uint64_t x[KVL_CELLS][KVL_LABELS];
    uint64_t (*accepted)[KVL_CELLS];    /* [validator]; UINT64_MAX in [0] when not declared */
    uint64_t (*xa)[KVL_CELLS][KVL_LABELS];
};

struct kvl_unit {
    char *id;
    size_t stratum;
    enum kvl_cell cell;
    enum kvl_label label;
    unsigned line;
    unsigned char *decision;            /* per validator: enum kvs_decision */
};

struct kvl_design {
    const char *path;
    struct kvl_stratum *strata;
    size_t n_strata;
    struct kvl_unit *units;
    size_t n_units;
    char **validators;                  /* those the strata declare "accepted" counts for */
    size_t n_validators;
};

/* Reads a labels file (docs/validators.md, "Human labels"): stratum lines
 * {"stratum", "N", "n", "pi", "cells", "accepted"} and, after its stratum,
 * unit lines {"id", "stratum", "label", "certificate", "weak_decisions"}.  A
 * unit without a certificate or a decision takes it from the ledger record of
 * its id (ledger may be NULL).  Checks the design: n_h <= N_h, pi_h in (0, 1]
 * and within 5e-4 of n_h / N_h, cells summing to N_h, no cell with more
 * labelled units than units.  0, or -1 with a message naming the file and
 * line in err. */
int kvl_read(struct kvl_design *d, const char *path, const struct kvs_ledger *ledger, char *err, size_t errlen);
void kvl_free(struct kvl_design *d);

/* A design-weighted point estimate and its posterior summary over the
 * replicates where the metric is defined (a zero denominator leaves it
 * undefined: NaN, never 0). */
struct kvl_estimate {
    double estimate;        /* ratio of the counts weighted by 1/pi_h */
    double low, high;       /* 2.5% and 97.5% quantiles of the replicates (linear interpolation) */
    double mean, sd;        /* of the replicates */
    unsigned defined;       /* replicates with a non-zero denominator */
};

enum { KVL_SENSITIVITY, KVL_SPECIFICITY, KVL_PPV, KVL_NPV, KVL_UNKNOWN_SHARE, KVL_INCONCL_DEFECT, KVL_VALIDITY };
extern const char *const kvl_validity_names[KVL_VALIDITY];
enum { KVL_FA_DECIDED, KVL_FA_LOWER, KVL_FA_UPPER, KVL_FA };
extern const char *const kvl_fa_names[KVL_FA];

/* The labelled sample's unweighted cells: counts[j][l]. */
void kvl_sample_cells(const struct kvl_design *d, uint64_t counts[KVL_CELLS][KVL_LABELS]);

/* Agreement of certificates (FAIL positive) with human labels (defect positive):
 * sensitivity, specificity, PPV and NPV on the human-known, PASS or FAIL
 * units; the share of unknown labels among all; the defect share of the
 * INCONCL cell, its unknowns included.  B completed populations drawn from
 * kat_rng (xoshiro256** seeded by splitmix64 with seed; variates.h).  0, or
 * -1 when out of memory. */
int kvl_validity_estimates(const struct kvl_design *d, unsigned B, unsigned long seed, struct kvl_estimate out[KVL_VALIDITY]);

/* The human-referenced false-accept rate of validator v (an index into
 * d->validators) over its accepted units, the strata crossed with acceptance:
 * decided (defect among the human-known PASS or FAIL certificates), and over
 * all accepted units, unknowns counted clean (lower) then defective (upper). */
int kvl_false_accept_estimates(const struct kvl_design *d, size_t v, unsigned B, unsigned long seed,
                               struct kvl_estimate out[KVL_FA]);

/* The engine behind both, exposed for tests: per stratum h (H of them), the
 * weight 1/pi_h, the population N[h][j] of each cell and the labelled x[h][j][l].
 * Per replicate, p_h ~ Dirichlet(x_h + 1/2) with x_h the stratum's labels over
 * all its cells (one draw shared by the cells), then each cell's N_hj - n_hj
 * unlabelled units ~ Multinomial(N_hj - n_hj, p_h); metric(T, ctx, out) turns the
 * completed totals T[j][l] (summed over strata) into n_metrics values (NaN when
 * undefined).  The point estimate is metric() of the weighted sample totals. */
typedef void (*kvl_metric_fn)(const double T[KVL_CELLS][KVL_LABELS], double *out);
int kvl_complete(size_t H, const double *weight, const uint64_t (*N)[KVL_CELLS],
                 const uint64_t (*x)[KVL_CELLS][KVL_LABELS], kvl_metric_fn metric, size_t n_metrics, unsigned B,
                 unsigned long seed, struct kvl_estimate *out);

#endif
