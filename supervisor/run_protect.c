/* run_protect.c - the session read-only for the recorded command (run_protect.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
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

/* A mount namespace of our own whose mounts propagate nowhere: 0 with how it
 * was had, -1 with why not. */
static int private_mount_namespace(const char **how, char *why, size_t n)
{
    *how = "mount namespace";
    if (unshare(CLONE_NEWNS) != 0) {
        int e = errno;
        if (enter_user_namespace() != 0) {
            snprintf(why, n, "no mount namespace (%s; as a user namespace: %s)", strerror(e), strerror(errno));
            return -1;
        }
        *how = "user and mount namespace";
    }
    /* our mounts stay ours: nothing propagates back to the host */
    if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0) {
        snprintf(why, n, "cannot make the mounts private (%s)", strerror(errno));
        return -1;
    }
    return 0;
}

int run_protect_session(const char *session, const char *spool, char *status, size_t n)
{
    const char *how;
    char why[200];
    if (private_mount_namespace(&how, why, sizeof why) != 0) {
        snprintf(status, n, "none: %s", why);
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

int run_protect_bind(const char *dir, const char *at, char *why, size_t n)
{
    if (mount(dir, at, NULL, MS_BIND, NULL) != 0) {
        snprintf(why, n, "cannot bind '%s' at '%s' (%s)", dir, at, strerror(errno));
        return -1;
    }
    return 0;
}

int run_protect_can_bind(const char *dir, const char *at, char *why, size_t n)
{
    int report[2];
    if (pipe2(report, O_CLOEXEC) != 0) {
        snprintf(why, n, "cannot try it (pipe: %s)", strerror(errno));
        return 0;
    }
    pid_t child = fork();
    if (child < 0) {
        snprintf(why, n, "cannot try it (fork: %s)", strerror(errno));
        close(report[0]);
        close(report[1]);
        return 0;
    }
    if (child == 0) {
        close(report[0]);
        const char *how;
        char failed[PATH_MAX + 300] = "";
        if (private_mount_namespace(&how, failed, sizeof failed) == 0)
            run_protect_bind(dir, at, failed, sizeof failed);
        if (failed[0] && write(report[1], failed, strlen(failed)) < 0) {
            /* the parent sees an empty pipe and a failed exit */
        }
        _exit(failed[0] ? 1 : 0);
    }
    close(report[1]);
    char got[PATH_MAX + 300];
    size_t len = 0;
    for (ssize_t r; len < sizeof got - 1 && ((r = read(report[0], got + len, sizeof got - 1 - len)) > 0 ||
                                            (r < 0 && errno == EINTR));)
        len += r > 0 ? (size_t)r : 0;
    got[len] = '\0';
    close(report[0]);
    int status = 0;
    while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
    }
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
        return 1;
    snprintf(why, n, "%s", len ? got : "the trial ended without saying why");
    return 0;
}
