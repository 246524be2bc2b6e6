/*
 * judge.h - what `kaudit analyze` (cmd_analyze.c) and `kaudit report`
 * (cmd_report.c) share: their options, and loading the contract and the
 * inventory fail-closed, then running the analysis (the analyzer does the
 * work).
 */
#ifndef KAUDIT_JUDGE_H
#define KAUDIT_JUDGE_H

#include "analysis.h"
#include "contract.h"
#include "inventory.h"

#define SAVED_ANALYSIS "analysis.json"

enum judge_command { JUDGE_ANALYZE, JUDGE_REPORT };

struct judge_args {
    const char *dir, *contract, *manifest, *inventory, *out, *perfetto;
    const char *inventory_digest;   /* --inventory-digest: the inventory must have this digest */
    enum ka_weak weak;
    int json, save;
    int semantic_given;
    enum ka_verdict semantic;
};

/*
 * Parses the options of `which` (analyze takes --save and -o, report takes
 * --perfetto).  Returns 0 to go on, -1 after --help (exit 0), or the exit
 * status of a usage error.
 */
int judge_parse(int argc, char **argv, enum judge_command which, const char *usage,
                struct judge_args *a);

struct judge {
    struct ka_contract *contract;
    struct kinv_inventory *inv;
    struct ka_analysis *an;
    char *json;                 /* the JSON report (docs/report-format.md) */
};

/* Loads the contract and the inventory, analyzes a->dir (writing the
 * timeline when a->perfetto), renders the JSON report.  0, or
 * KAUDIT_EXIT_ERROR after a message. */
int judge_run(const struct judge_args *a, struct judge *j);
void judge_free(struct judge *j);

/* --weak's word (ACCEPT or REJECT, any case) into *weak: 0, or -1 for another word. */
int judge_parse_weak(const char *word, enum ka_weak *weak);

/* The exit status of a certificate: 0 PASS, 10 FAIL, 11 INCONCLUSIVE. */
int judge_exit_status(enum ka_verdict certificate);

/* text and a newline into path; 0 or -1. */
int judge_write_text(const char *path, const char *text);
/* The same for a file in a session directory (analysis.json): never through
 * a planted symlink or FIFO. */
int judge_write_session_text(const char *path, const char *text);

#endif
