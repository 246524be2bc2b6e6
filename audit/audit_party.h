/*
 * audit_party.h - the candidate's process of an audit (docs/audit.md, "Two
 * parties, two processes"): what the plan tells the runner about it, and
 * what its confinement was, from the event the runner logged.
 *
 * The runner starts it with `kaudit confine` (supervisor/party_confine.h):
 * it reads only the system's directories, the Python install, kaudit's
 * runner, the candidate and the reference, and its own directories; it
 * writes only its own (work/, tmp/, cache/, home/, party/), the GPU's and
 * the standard device files and its own /proc/PID; the runner hands it
 * inputs in handoff/ (which it may only read) and copies what it writes in
 * party/ into the audit's tensors.
 */
#ifndef KAUDIT_AUDIT_PARTY_H
#define KAUDIT_AUDIT_PARTY_H

#include <stddef.h>

#include "audit.h"

/* The plan's "party" object (JSON text, malloc'd), or NULL with err.
 * runner: the runner script; preload: the preload library or NULL; the
 * user's --allow-write directories (the candidate writes there too) and
 * --allow-read directories (it may read there) come from a. */
char *audit_party_plan(const struct audit_paths *p, const struct audit_args *a, const char *runner,
                       const char *preload, char *err, size_t n);

/* The directories of the party beneath the audit's: made, and listed for the worker's write roots. */
int audit_party_dirs(const struct audit_paths *p, char handoff[], char party[], size_t size, char *err, size_t n);

/* What the candidate's process ran under, from the runner's event log. */
struct audit_party_confinement {
    int reported;            /* the event was there */
    int complete;            /* every mechanism in force */
    char summary[768];       /* "landlock in force, seccomp in force, ..." or why not */
};

void audit_party_read(const char *events_path, struct audit_party_confinement *c);

/* Whether path is dir or lies beneath it (by name). */
int audit_path_holds(const char *dir, const char *path);

#endif
