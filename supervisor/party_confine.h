/*
 * party_confine.h - the process of a candidate, confined on its own inside
 * the audit's worker (docs/audit.md, "Two parties, two processes").
 *
 * The runner (the reference's process) starts the candidate's process as
 * `kaudit confine --read R... --write W... --report-fd N -- PYTHON PARTY`.
 * Before exec, in that process: no_new_privs; a Landlock domain nested in
 * the worker's that lets it read only beneath the read roots (the Python
 * install, torch, CUDA, the system's libraries, its own files and build
 * caches: never the runner's event log, plan, or tensor files) and write
 * only beneath the write roots (its own directories, a narrowed /dev, its
 * own /proc/PID); on ABI 4 and later no TCP bind or connect; on ABI 6 and
 * later no signal to, and no abstract socket of, a process outside its
 * domain; a Landlock domain already keeps it from ptrace of any process
 * outside (ABI 1).  Then the seccomp filter (syscall_filter.h).  What was
 * put in force, and what was not and why, is one JSON line on the report
 * descriptor; a mechanism missing on this machine is named there (the audit
 * then withholds PASS), and the command runs anyway.
 */
#ifndef KAUDIT_PARTY_CONFINE_H
#define KAUDIT_PARTY_CONFINE_H

#include <stddef.h>

struct party_confine {
    const char *const *read_roots;  /* may read (and execute) beneath */
    size_t n_read;
    const char *const *write_roots; /* may read and write beneath */
    size_t n_write;
    int report_fd;                  /* the JSON line goes here; -1: stderr */
    char *const *argv;              /* the command */
};

/* Confines the calling process and execs the command: returns only when
 * exec failed (-1 with err). */
int party_confine_exec(const struct party_confine *p, char *err, size_t n);

#endif
