/*
 * ledger.h - audited records and the weak validators' decisions on them, read
 * from a batch ledger (docs/audit.md, "Batches") and decision files, and
 * tallied per validator and corpus (docs/validators.md).
 */
#ifndef KAUDIT_VALIDATOR_LEDGER_H
#define KAUDIT_VALIDATOR_LEDGER_H

#include <stddef.h>
#include <stdint.h>

#include "analysis.h"
#include "u64map.h"

enum kvs_decision { KVS_NONE = 0, KVS_ACCEPT, KVS_REJECT };

/* Outcome codes (paper Table 1), in the order the tables print them. */
enum { KVS_C0, KVS_C1, KVS_C2, KVS_C3A, KVS_C3B, KVS_C3C, KVS_INCONCL, KVS_OUTCOMES };
extern const char *const kvs_outcome_names[KVS_OUTCOMES];

struct kvs_record {
    char *id, *corpus;
    enum ka_verdict certificate;            /* KA_PASS, KA_FAIL or KA_INCONCLUSIVE */
    enum ka_verdict axis[KA_AXIS_COUNT];    /* KA_UNSUPPORTED where the line has none */
    int stress_signature;
    size_t corpus_index;
    unsigned char *decision;                /* per validator: enum kvs_decision */
};

struct kvs_ledger {
    struct kvs_record *records;
    size_t n_records, records_alloc;
    char **validators;
    size_t n_validators;
    char **corpora;
    size_t n_corpora;
    struct kat_u64map by_id;    /* XXH3 of a record's id -> its index (the first id of a hash) */
};

/* Reads a ledger: one JSON object per line, {"id", "certificate": PASS|FAIL|INCONCL,
 * "corpus", "axes": {...}, "stress_signature", "weak": ACCEPT|REJECT (the
 * validator "weak"), "weak_decisions": {validator: ACCEPT|REJECT}}.  Blank and
 * '#' lines are skipped.  0, or -1 with a message naming the file and line in err. */
int kvs_ledger_read(struct kvs_ledger *l, const char *path, char *err, size_t errlen);
/* Adds decisions made elsewhere: lines {"id", "validator", "decision"}.  An id the
 * ledger lacks, or a second decision of a validator on a record, is an error. */
int kvs_decisions_read(struct kvs_ledger *l, const char *path, char *err, size_t errlen);
void kvs_ledger_free(struct kvs_ledger *l);
/* The record of id (through the id map), or NULL; l may be NULL. */
const struct kvs_record *kvs_record_find(const struct kvs_ledger *l, const char *id);

/* One JSONL line s parsed as one JSON value, or NULL.  Only whitespace may
 * follow the value (cJSON_Parse stops at its end and ignores the rest: two
 * records run together on one line would read as the first alone); when
 * something else does, NULL with *trailing set. */
struct cJSON *kvs_json_line(const char *s, int *trailing);

/* The object lines of a JSONL file (blank and '#' lines skipped), each given
 * to each(ctx, obj, "PATH:LINE", line, err, errlen), which may refuse it
 * (non-zero ends the read).  Refused with the file and line: a line that is
 * not one JSON object, and an incomplete last line (no newline; the message
 * then ends with incomplete_hint, "" for none).  0, or -1 with err. */
int kvs_jsonl_each(const char *path, const char *incomplete_hint,
                   int (*each)(void *ctx, const struct cJSON *o, const char *where, unsigned line, char *err,
                               size_t errlen),
                   void *ctx, char *err, size_t errlen);

/* One validator on the records of one corpus (or all: corpus SIZE_MAX). */
struct kvs_cell {
    uint64_t records;           /* with a decision of this validator */
    uint64_t decided;           /* of them with a PASS or FAIL certificate */
    uint64_t accepted_fail;     /* a: the false accepts */
    uint64_t accepted_decided;  /* b: the false-accept denominator */
    uint64_t accepted_inconcl;  /* u: accepted INCONCL records (the abstention bounds) */
    uint64_t fail, pass, rejected_pass;
    uint64_t outcome[KVS_OUTCOMES];   /* rejected PASS certificates have none: they are rejected_pass */
};
void kvs_tally(const struct kvs_ledger *l, size_t validator, size_t corpus, struct kvs_cell *c);

/* The paired misses of two validators over the FAIL certificates both decided:
 * b the misses (accepts) of the second alone, c of the first alone. */
struct kvs_pair {
    size_t first, second;
    uint64_t records, b, c;
    double p, p_holm;
};
/* Every pair of validators, with the exact p and Holm's adjustment over all of them. */
int kvs_pairs(const struct kvs_ledger *l, struct kvs_pair **pairs, size_t *n);

#endif
