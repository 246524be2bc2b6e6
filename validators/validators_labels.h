/*
 * validators_labels.h - `kaudit validators ... --labels FILE`: the options,
 * and the printing of the agreement with human labels that validators/labels.c
 * computes (docs/validators.md, "Human labels").
 */
#ifndef KAUDIT_VALIDATORS_LABELS_H
#define KAUDIT_VALIDATORS_LABELS_H

#include <stdio.h>

#include "labels.h"

enum { VL_OPT_LABELS = 0x4c00, VL_OPT_SEED, VL_OPT_FA_SEED, VL_OPT_REPLICATES };
#define VALIDATORS_LABELS_LONGOPTS                                                                                 \
    { "labels", required_argument, 0, VL_OPT_LABELS }, { "seed", required_argument, 0, VL_OPT_SEED },              \
        { "fa-seed", required_argument, 0, VL_OPT_FA_SEED }, { "replicates", required_argument, 0, VL_OPT_REPLICATES }
#define VALIDATORS_LABELS_USAGE                                                                                    \
    "  --labels FILE      agreement with human labels on a stratified sample (Appendix H)\n"                       \
    "  --seed N           seed of its posterior completions (default 20260817)\n"                                  \
    "  --fa-seed N        seed of the human-referenced false accepts (default 20260826)\n"                         \
    "  --replicates B     completed populations per interval (default 2000)\n"

struct validators_labels {
    const char *path;
    unsigned replicates;
    unsigned long seed, fa_seed;
    const char *tuned;          /* the first of --seed, --fa-seed, --replicates given: they need --labels */
    struct kvl_design design;
    struct kvl_estimate validity[KVL_VALIDITY];
    struct kvl_estimate (*fa)[KVL_FA];  /* per validator of the design */
};
#define VALIDATORS_LABELS_INIT { .replicates = 2000, .seed = 20260817UL, .fa_seed = 20260826UL }

/* One of the options above; -1 (with a message in err) on a bad value. */
int validators_labels_option(struct validators_labels *o, int opt, const char *arg, char *err, size_t errlen);
/* Reads o->path (joined to the ledger by id) and computes; -1 with err. */
int validators_labels_run(struct validators_labels *o, const struct kvs_ledger *l, char *err, size_t errlen);
/* md and csv: a section after the others; json: a "labels" member and a comma. */
void validators_labels_print(FILE *f, const char *format, const struct validators_labels *o);
void validators_labels_free(struct validators_labels *o);

#endif
