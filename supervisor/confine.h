/*
 * confine.h - the audit worker may write only beneath a few directories
 * (docs/audit.md, "Confinement").
 *
 * Linux's Landlock (no privilege needed): the ruleset is built in kaudit,
 * where every failure can still be reported, and applied in the worker's
 * child just before exec, so that the runner, the reference, the candidate
 * and everything they start inherit it.  Reading is not restricted; writing,
 * creating, removing, renaming and truncating are, except beneath the roots.
 * Without Landlock (an old kernel, a kernel built without it) the worker runs
 * unconfined and the record says why.
 */
#ifndef KAUDIT_CONFINE_H
#define KAUDIT_CONFINE_H

#include <stddef.h>

struct confine {
    int ruleset_fd;   /* -1: not confined */
    int abi;          /* the kernel's Landlock ABI version, 0 when it has none */
    char why[512];    /* why not confined, when ruleset_fd is -1 */
};

/* Prepares a ruleset that allows writing beneath each of roots (n of them;
 * a root that does not exist is skipped); where create_only (NULL: none) is
 * set for a root, only making regular files there: nothing is removed,
 * renamed, linked or written (the shared lock files of docs/timing.md).  0
 * with c->ruleset_fd set, or -1 with c->why (then ruleset_fd is -1). */
int confine_prepare(struct confine *c, const char *const *roots, size_t n, const unsigned char *create_only);

/* In the child, before exec: no new privileges, then the ruleset.  0, or
 * -1 with errno. */
int confine_apply(const struct confine *c);

void confine_release(struct confine *c);

#endif
