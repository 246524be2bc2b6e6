/*
 * run_census.h - every process of a run, seen from outside
 * (docs/threat-model.md).
 *
 * While the command runs, kaudit run lists the processes descending from it
 * (/proc, every 50 ms) with the program each runs.  At the end each one is
 * looked for among the traces: a dynamically linked process without a trace
 * ran without the preload (a raw clone and execve with an empty environment,
 * which no wrapper sees), and what it did is not known.  A statically linked
 * one (ldconfig, which Triton runs) cannot load the preload nor, without a
 * dynamic loader, the CUDA libraries: it is listed, not counted.
 *
 * The root is kaudit run itself, a child subreaper: a process that leaves
 * the command's tree (a double fork) is reparented to it and stays in the
 * tree, and its zombie is reaped only after a scan has seen it.  A process
 * that lives less than a scan inside the tree is not seen; one that used the
 * GPU cannot be that short (creating a CUDA context alone takes longer).
 */
#ifndef KAUDIT_RUN_CENSUS_H
#define KAUDIT_RUN_CENSUS_H

#include <stddef.h>
#include <sys/types.h>

struct census_process {
    pid_t pid;
    unsigned long long start;   /* /proc/PID/stat field 22: tells a reused pid apart */
    char comm[20];
    int is_static;              /* its executable has no program interpreter */
};

struct run_census {
    pid_t root;
    struct census_process *seen;
    size_t n, cap;
};

/* One process's /proc/PID/stat: what the census and kaudit audit's
 * leftover killer read (comm may hold spaces and parentheses). */
struct proc_stat {
    pid_t pid, ppid;
    char state;
    unsigned long long start;
    char comm[20];
};
int proc_stat_read(pid_t pid, struct proc_stat *out);
/* Whether the program pid runs has no PT_INTERP (a static executable): 1,
 * else 0 (also when /proc/PID/exe cannot be read: a zombie, or gone). */
int proc_static_executable(pid_t pid);
/* The same, -1 when /proc/PID/exe cannot be read. */
int proc_program_static(pid_t pid);

/* The pids of root's process tree, zombies not (but a process whose first
 * thread ended while others run on, which reads as one): root, its descendants, and
 * the processes whose parent is adopter (> 0: orphans reparented to a
 * subreaper) with theirs.  How many, into *out (malloc'd; free it). */
size_t proc_tree_pids(pid_t root, pid_t adopter, pid_t **out);

void run_census_init(struct run_census *c, pid_t root);
/* Adds the processes of root's tree (root itself not) that are alive now,
 * zombies included. */
void run_census_scan(struct run_census *c);
void run_census_free(struct run_census *c);

#endif
