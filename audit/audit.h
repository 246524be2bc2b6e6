/*
 * audit.h - what the parts of `kaudit audit` share (cmd_audit.c: one record;
 * audit_batch.c: many, in parallel, resumable).  docs/audit.md.
 */
#ifndef KAUDIT_AUDIT_H
#define KAUDIT_AUDIT_H

#include <limits.h>

#include "analysis.h"
#include "audit_exec.h"
#include "audit_limits.h"
#include "build_store.h"

/* The record's schema version (docs/audit.md, "The record"). */
#define AUDIT_RECORD_VERSION 1

/* The long run's calls (docs/audit.md, "Long run"): past the 64 calls after
 * which a candidate may change, with every slot's calls before them. */
#define AUDIT_LONG_RUN_CALLS 100

struct audit_args {
    const char *reference, *candidate, *contract, *manifest;
    const char *device;         /* "cuda" or "cpu" */
    unsigned long long seed;
    int seed_given;             /* --seed N; else each audit draws its seed from the kernel */
    const char *dir, *json, *python, *inventory;
    const char *id;             /* batch: the pair's id, written into the record */
    enum ka_weak weak;
    const char *weak_surfaces;  /* --weak-surfaces as given (all, none or a list), NULL: the default, none */
    unsigned weak_mask;         /* the surfaces it names (audit_weak.h) */
    int paper_tolerance, keep_tensors, quiet;
    int timing;                 /* --timing: 1 on, 0 off, -1 the default (on for cuda, off for cpu) */
    int probe;                  /* --probe: the causal probe, 1 on (the default), 0 off */
    const char *require;        /* --require as given: transformations that gate whatever the contract declares */
    unsigned require_transforms;        /* its KAT_TRANSFORM_* bits */
    int has_claimed;
    double claimed_speedup;     /* --claimed-speedup: the weak validator's figure, for the record */
    double timeout_s;
    const char *memory_limit, *disk_limit;  /* --memory-limit, --disk-limit as given (audit_limits.h), NULL: auto */
    const char *build_store;    /* --build-store DIR|off (build_store.h), NULL: the default store */
    const char *build_store_max; /* --build-store-max SIZE as given, NULL: BUILD_STORE_MAX_BYTES */
    const char *allow_write[8]; /* --allow-write: more directories the worker may write in */
    int n_allow_write;
    const char *allow_read[8];  /* --allow-read: more directories the candidate's process may read */
    int n_allow_read;
    /* batch */
    const char *batch, *ledger;
    int jobs;
    int jobs_auto;              /* --jobs auto: audit_jobs_auto() once the pairs are read */
    int jobs_given;             /* --jobs was given (with --gpus and without it: one worker per GPU) */
    const char *shard;          /* --shard i/N (audit_shard.h); NULL: SLURM_ARRAY_TASK_*, else all */
    const char *gpus;           /* --gpus auto|LIST: the workers' CUDA_VISIBLE_DEVICES, in turn */
};

struct audit_paths {
    char reference[PATH_MAX], candidate[PATH_MAX], contract[PATH_MAX + 32];
    int contract_generated;
    char dir[PATH_MAX];
    char session[PATH_MAX + 16], runner_dir[PATH_MAX + 16], work[PATH_MAX + 16];
    char log[PATH_MAX + 32], plan[PATH_MAX + 16], record[PATH_MAX + 16], tmp[PATH_MAX + 16];
    char seal_chain[33];        /* the session's seal, "" when none or broken */
    const struct audit_roots *roots;        /* where the worker could write */
    struct audit_confinement confinement;   /* and whether that was enforced */
    char session_protection[256];           /* the session read-only for the worker, or why not */
    char privileges[320];                   /* the worker's privileges (its session's worker_privileges) */
    long worker_uid;                        /* the uid the worker ran as when kaudit is root; 0: its own */
    unsigned long long seed;                /* the audit's seed: --seed, or drawn from the kernel */
    const char *seed_source;                /* "given" or "kernel" */
    unsigned stress_gated;                  /* KAT_TRANSFORM_* bits whose slots gate: the contract's and --require's */
    char party_confinement[768];            /* the candidate's process (audit_party.h) */
    int party_complete;                     /* every mechanism of it in force */
    struct audit_limits limits;             /* the worker's memory and disk, bytes (0: none) */
    char limits_note[320];                  /* why a limit is off, "" when both hold */
    char cache[PATH_MAX + 16];              /* the candidate's build caches (DIR/cache) */
    char cache_seen[PATH_MAX + 16];            /* where the worker sees them: the store's fixed path, else cache */
    char home[PATH_MAX + 16];               /* the candidate's HOME (DIR/home) when kaudit, as root, made one; else "" */
    /* the reference's, in the runner's process: out of the candidate's reach
     * (a cache both parties used let the candidate plant the reference's
     * run-time builds; docs/audit.md, "Confinement") */
    char reference_cache[PATH_MAX + 32];    /* DIR/reference-cache */
    char reference_home[PATH_MAX + 32];     /* DIR/reference-home with home; else "" */
    char reference_work[PATH_MAX + 32];     /* DIR/reference-work: the runner's working directory */
    char reference_tmp[PATH_MAX + 32];      /* DIR/reference-tmp: its TMPDIR (and kaudit run's) */
    struct build_store store;               /* builds kept across audits of the candidate */
};

struct audit_result {
    int exit_status;            /* 0, 10, 11, or 1 when no record was written */
    enum ka_verdict certificate;
    char outcome[8];
    char record[PATH_MAX + 16];
    double wall_s;
};

/* Parses the command line: 0 go on, -1 after --help, else a usage exit status. */
int audit_parse(int argc, char **argv, struct audit_args *a);
/* One audit, one record.  Returns the exit status (also in res). */
int audit_one(const struct audit_args *a, struct audit_result *res);
/* --batch: every pair of a->batch, a->jobs at a time, into the ledger a->ledger. */
int audit_batch(const struct audit_args *a);

#endif
