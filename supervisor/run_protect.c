/* run_protect.c - the session read-only for the recorded command (run_protect.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "run_protect.h"

static int write_file(const char *path, const char *text)
{
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t n = write(fd, text, strlen(text));
    close(fd);
    return n == (ssize_t)strlen(text) ? 0 : -1;
}

/* An unprivileged user: a user namespace in which we keep our own ids. */
static int enter_user_namespace(void)
{
    uid_t uid = geteuid();
    gid_t gid = getegid();
    if (unshare(CLONE_NEWUSER | CLONE_NEWNS) != 0)
        return -1;
    char map[64];
    if (write_file("/proc/self/setgroups", "deny") != 0 && errno != ENOENT)
        return -1;
    snprintf(map, sizeof map, "%u %u 1", (unsigned)uid, (unsigned)uid);
    if (write_file("/proc/self/uid_map", map) != 0)
        return -1;
    snprintf(map, sizeof map, "%u %u 1", (unsigned)gid, (unsigned)gid);
    return write_file("/proc/self/gid_map", map);
}

/* path bind-mounted onto itself read-only; NULL, or what failed */
static const char *bind_read_only(const char *path)
{
    if (mount(path, path, NULL, MS_BIND, NULL) != 0)
        return "cannot bind-mount";
    /* a remount must keep the flags the mount had (a user namespace may not drop them) */
    static const struct {
        unsigned long st, ms;
    } kept[] = {
        { ST_NOSUID, MS_NOSUID },     { ST_NODEV, MS_NODEV },         { ST_NOEXEC, MS_NOEXEC },
        { ST_NOATIME, MS_NOATIME },   { ST_NODIRATIME, MS_NODIRATIME }, { ST_RELATIME, MS_RELATIME },
    };
    struct statvfs vfs;
    unsigned long keep = 0;
    if (statvfs(path, &vfs) == 0)
        for (size_t i = 0; i < sizeof kept / sizeof kept[0]; i++)
            if (vfs.f_flag & kept[i].st)
                keep |= kept[i].ms;
    if (mount(NULL, path, NULL, MS_REMOUNT | MS_BIND | MS_RDONLY | keep, NULL) != 0)
        return "cannot make read-only";
    return NULL;
}

int run_protect_session(const char *session, const char *spool, char *status, size_t n)
{
    const char *how = "mount namespace";
    if (unshare(CLONE_NEWNS) != 0) {
        int e = errno;
        if (enter_user_namespace() != 0) {
            snprintf(status, n, "none: no mount namespace (%s; as a user namespace: %s)", strerror(e),
                     strerror(errno));
            return -1;
        }
        how = "user and mount namespace";
    }
    /* our mounts stay ours: nothing propagates back to the host */
    if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0) {
        snprintf(status, n, "none: cannot make the mounts private (%s)", strerror(errno));
        return -1;
    }
    const char *failed = bind_read_only(session);
    if (failed) {
        snprintf(status, n, "none: %s the session (%s)", failed, strerror(errno));
        return -1;
    }
    /* the spool holds only the supervisor's socket: read-only, it cannot be
     * removed; where it stays writable a removed socket costs the traces of
     * processes started after, which then count as untraced (never PASS) */
    failed = spool ? bind_read_only(spool) : NULL;
    if (failed)
        snprintf(status, n, "read-only (%s; the spool: %s, %s)", how, failed, strerror(errno));
    else
        snprintf(status, n, "read-only (%s)", how);
    return 0;
}
