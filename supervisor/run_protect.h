/*
 * run_protect.h - the session directory is read-only for the recorded
 * command (docs/threat-model.md, "The session out of reach").
 *
 * In the command's child, before exec: a mount namespace of its own (with a
 * user namespace when kaudit is not root) in which the session directory is
 * bind-mounted onto itself read-only.  The command, and every process it
 * starts, daemons outliving the run included, can then neither write,
 * remove, rename nor plant anything there; kaudit run, outside that
 * namespace, writes the session.  Where namespaces are not available the
 * command runs as before and the session says so (info
 * "session_protection"; every report: reduced assurance).
 */
#ifndef KAUDIT_RUN_PROTECT_H
#define KAUDIT_RUN_PROTECT_H

#include <stddef.h>

/* In the child.  0 with status "read-only (mount namespace)"; -1 with
 * status "none: WHY".  Never fatal: the caller runs the command either way.
 * spool (the supervisor's socket's directory, trace_spool.h), unless NULL,
 * is made read-only too. */
int run_protect_session(const char *session, const char *spool, char *status, size_t n);

/* In the child, after run_protect_session succeeded: directory dir seen at
 * at too (a bind mount in the command's own namespace; kaudit audit's build
 * caches at one path for every audit, build_store.h).  -1 with why. */
int run_protect_bind(const char *dir, const char *at, char *why, size_t n);

/* Whether a child here can have the namespace and that bind: 1, or 0 with
 * why (the caller then does without, rather than start a command that
 * would be refused). */
int run_protect_can_bind(const char *dir, const char *at, char *why, size_t n);

#endif
