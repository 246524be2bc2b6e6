/*
 * privilege.h - the recorded command without privilege (docs/threat-model.md,
 * "kaudit audit").  A candidate that runs native code as root writes
 * /proc/sys/kernel/core_pattern and has the kernel run its script as root
 * outside every confinement; it also opens block and kvm devices and signals
 * kaudit.  So when kaudit runs as root, the audit's worker is switched, just
 * before exec, to a uid and gid of its own that own no file, with no
 * supplementary groups and empty effective, permitted, inheritable, ambient
 * and bounding capability sets.  Run as another user, the worker has no
 * capabilities already; the bounding set, which it cannot drop, gives it none
 * under no_new_privs (confine.h), and the record says so.
 */
#ifndef KAUDIT_PRIVILEGE_H
#define KAUDIT_PRIVILEGE_H

#include <stddef.h>
#include <sys/types.h>

/*
 * A uid for one audit's worker: $KAUDIT_WORKER_UID when set (a number, not
 * 0), else a random one in [2^30, 2^30 + 2^24) with no passwd entry, so that
 * concurrent audits do not share one.  0, or -1 with err.
 */
int privilege_pick_uid(uid_t *uid, char *err, size_t n);

/*
 * In the child, before exec (and before Landlock, which needs no privilege):
 * drops the bounding set and the ambient set, the supplementary groups, then
 * sets the real, effective and saved gid and uid to uid, and checks that no
 * capability is left.  0, or -1 with errno and what failed in what (n bytes).
 * Async-signal-safe: no allocation, no stdio.
 */
int privilege_drop(uid_t uid, char *what, size_t n);

/*
 * The calling process's privilege, for the record, into out: "unprivileged:
 * uid U, no capabilities" or "privileged: ...".  1 when no effective,
 * permitted or ambient capability is held, 0 otherwise.
 */
int privilege_describe(char *out, size_t n);

/*
 * Whether uid (as its own gid, no groups) can read each of paths (n of
 * them): 1, or 0 with the first it cannot read in which (wn bytes), or -1
 * with err when that cannot be found out.  Checked in a child, so that the
 * caller keeps its identity.
 */
int privilege_can_read(uid_t uid, const char *const *paths, size_t n, char *which, size_t wn);

/* chown -R path to uid:uid, links themselves and not what they name.  0, or
 * -1 with err. */
int privilege_give_tree(const char *path, uid_t uid, char *err, size_t n);

#endif
