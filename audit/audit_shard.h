/*
 * audit_shard.h - how a batch is split (docs/audit.md, "Shards, GPUs and
 * Slurm arrays"): which of its tasks one `kaudit audit --batch` runs
 * (--shard i/N, or a Slurm array task's SLURM_ARRAY_TASK_* variables), and
 * over which GPUs its workers are spread (--gpus).
 */
#ifndef KAUDIT_AUDIT_SHARD_H
#define KAUDIT_AUDIT_SHARD_H

#include <stddef.h>

/* One shard of a batch: the tasks k (0-based, counting task lines only, in
 * file order) with k mod count == index.  count 0: the whole batch. */
struct audit_shard {
    unsigned index, count;
    char source[160];           /* "--shard 2/4" or "SLURM_ARRAY_TASK_ID=7 ...": for messages */
};

/* --shard i/N, i from 1 to N (as GNU split's -n l/K/N).  0, or -1 with err. */
int audit_shard_parse(const char *arg, struct audit_shard *sh, char *err, size_t errlen);

/* Without --shard: the shard of a Slurm array task.  With
 * SLURM_ARRAY_TASK_ID unset, sh->count = 0 (the whole batch).  Otherwise
 * SLURM_ARRAY_TASK_COUNT and SLURM_ARRAY_TASK_MIN must be set, the ids must
 * form MIN, MIN+STEP, ..., MAX (SLURM_ARRAY_TASK_STEP, 1 when unset) with
 * COUNT members, and the shard is (ID - MIN) / STEP of COUNT: an array with
 * gaps (--array=1,3,7) is refused, since a missing id would lose its tasks
 * silently.  env: getenv, or a stand-in for tests.  0, or -1 with err. */
int audit_shard_from_slurm(const char *(*env)(const char *), struct audit_shard *sh, char *err, size_t errlen);

/* Whether the task k (0-based) is in the shard. */
int audit_shard_has(const struct audit_shard *sh, size_t k);

/* --gpus SPEC: "auto" or a list "0,1,3" (CUDA ordinals, GPU-/MIG- UUIDs).
 * auto: the entries of CUDA_VISIBLE_DEVICES when it is set (a scheduler's
 * allocation: none when it is empty or -1), else one ordinal per
 * /dev/nvidiaN device node (dev_dir: "/dev", or a stand-in for tests).
 * *n may be 0: no GPU, the workers' environment is left alone.  The list is
 * malloc'd (free with audit_gpus_free).  0, or -1 with err. */
int audit_gpus_parse(const char *spec, const char *(*env)(const char *), const char *dev_dir, char ***gpus, size_t *n,
                     char *err, size_t errlen);
void audit_gpus_free(char **gpus, size_t n);

/* --jobs auto: how many audits a batch runs at once.  A cold audit is a
 * build (load_inline's nvcc and host compiler, two cores busy for a minute)
 * and two PyTorch processes; the GPU phases take turns by themselves
 * (docs/timing.md, "Concurrent audits").  So one audit per two CPUs, at most
 * one per AUDIT_JOB_MEMORY_KIB of available memory (mem_kib 0: unknown, not
 * limited), at most the batch's pairs and 256, at least 1. */
#define AUDIT_JOB_MEMORY_KIB (6ULL << 20)
int audit_jobs_auto(long cpus, unsigned long long mem_kib, size_t pairs);
/* MemAvailable from a meminfo file (/proc/meminfo) in KiB; 0 when unread. */
unsigned long long audit_mem_available_kib(const char *meminfo);

#endif
