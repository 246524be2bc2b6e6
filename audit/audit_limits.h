/*
 * audit_limits.h - what an audit's worker may use of the machine's memory and
 * disk (docs/audit.md, "Limits of the worker"; issue 33, "Bad input").
 *
 * A candidate that fills the memory would have the kernel's OOM killer pick
 * a victim, which may be kaudit, another audit of the batch or the process
 * writing the ledger; one that fills the disk leaves no room for the records.
 * So while the worker runs, kaudit measures it from outside: the resident
 * memory of every process of its tree (the worker and what descends from it,
 * and what was reparented to kaudit, the subreaper), and the disk space of
 * the audit's directory, where everything the worker may write lies.  Over a
 * limit the worker is stopped and the audit is INCONCLUSIVE with the figure
 * (`runner-resource-limit`); nothing is judged from what it left.
 *
 * Memory is each process's proportional set size where the kernel gives it
 * (a page shared by n processes counts 1/n in each, so the CUDA libraries
 * that the runner and the candidate's process both map count once), else its
 * resident set (a shared page counted in each: never less than the tree holds).
 */
#ifndef KAUDIT_AUDIT_LIMITS_H
#define KAUDIT_AUDIT_LIMITS_H

#include <stddef.h>
#include <sys/types.h>

enum audit_resource { AUDIT_RESOURCE_NONE, AUDIT_RESOURCE_MEMORY, AUDIT_RESOURCE_DISK };

/* 0: no limit.  AUDIT_LIMIT_AUTO: decided at the audit's start (audit_limits_resolve). */
#define AUDIT_LIMIT_AUTO (~0ULL)

struct audit_limits {
    unsigned long long memory_bytes;
    unsigned long long disk_bytes;
    /* the free space below which the worker is stopped whatever its own use
     * (a neighbour in the batch may be the one filling): set with an auto
     * disk limit, min(1 GiB, a tenth of what was free); 0: none */
    unsigned long long disk_floor_bytes;
};

/* "off" (0), "auto", or a size: digits with an optional K, M, G or T (powers
 * of 1024), at least 1M.  0, or -1 with err. */
int audit_limit_parse(const char *text, unsigned long long *out, char *err, size_t n);

/* Each AUDIT_LIMIT_AUTO made a figure for one of `jobs` audits side by side:
 * memory 90% of MemAvailable divided by jobs (a pair stopped over it is run
 * again alone); disk half the space free where dir lies, not divided (an
 * honest task's files are as large as its tensors, and a batch's audits
 * rarely all grow at once), with the floor above.  A figure that cannot be
 * read leaves that limit off (0), said in why ("" when both were read). */
void audit_limits_resolve(struct audit_limits *l, const char *dir, int jobs, char *why, size_t n);

/* The bytes root's process tree holds (above; run_census.h's proc_tree_pids:
 * root, its descendants, and the processes whose parent is `adopter`);
 * the largest one's pid, name and bytes into the pointers (any may be NULL). */
unsigned long long audit_tree_resident(pid_t root, pid_t adopter, pid_t *largest, char largest_comm[20],
                                       unsigned long long *largest_bytes);

/* The space free for an unprivileged user where dir lies, in bytes; 0 when
 * it cannot be read. */
unsigned long long audit_disk_free(const char *dir);

/* The disk space the files beneath dir take (st_blocks), links not followed;
 * at most max_entries entries are counted, *truncated then set. */
unsigned long long audit_dir_usage(const char *dir, size_t max_entries, int *truncated);

/* "2.0 GiB", "512.0 MiB": bytes for a message. */
void audit_size_text(unsigned long long bytes, char *out, size_t n);

#endif
