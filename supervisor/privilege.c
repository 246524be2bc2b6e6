/* privilege.c - the recorded command without privilege (privilege.h). */
#define _GNU_SOURCE
#include "privilege.h"

#include <errno.h>
#include <grp.h>
#include <linux/capability.h>
#include <pwd.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <ftw.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "toolbox.h"

#define WORKER_UID_BASE (1u << 30)
#define WORKER_UID_SPAN (1u << 24)

int privilege_pick_uid(uid_t *uid, char *err, size_t n)
{
    const char *given = getenv("KAUDIT_WORKER_UID");
    if (given && given[0]) {
        char *end;
        errno = 0;
        unsigned long v = strtoul(given, &end, 10);
        if (errno || *end || v == 0 || v >= UINT32_MAX)
            return kat_fail(err, n, "KAUDIT_WORKER_UID takes a uid other than 0, not '%s'", given);
        *uid = (uid_t)v;
        return 0;
    }
    for (int tries = 0; tries < 64; tries++) {
        uint32_t r;
        if (getrandom(&r, sizeof r, 0) != (ssize_t)sizeof r)
            return kat_fail(err, n, "cannot draw a uid for the worker: %s", strerror(errno));
        uid_t u = WORKER_UID_BASE + r % WORKER_UID_SPAN;
        if (!getpwuid(u) && !getgrgid(u)) {
            *uid = u;
            return 0;
        }
    }
    return kat_fail(err, n, "cannot find a uid for the worker without a passwd or group entry");
}

static int capabilities(struct __user_cap_data_struct data[2])
{
    struct __user_cap_header_struct header = { .version = _LINUX_CAPABILITY_VERSION_3, .pid = 0 };
    return (int)syscall(SYS_capget, &header, data);
}

/* what and errno for privilege_drop's failures, without stdio */
static int failed(char *what, size_t n, const char *step)
{
    int e = errno;
    size_t len = strlen(step);
    if (what && n) {
        if (len >= n)
            len = n - 1;
        memcpy(what, step, len);
        what[len] = '\0';
    }
    errno = e ? e : EPERM;
    return -1;
}

int privilege_drop(uid_t uid, char *what, size_t n)
{
    /* the bounding set needs CAP_SETPCAP: before the uid changes */
    for (int cap = 0; cap <= 63; cap++) {
        if (prctl(PR_CAPBSET_READ, cap, 0, 0, 0) < 0)
            break; /* past the kernel's last capability */
        if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0)
            return failed(what, n, "dropping the capability bounding set");
    }
    if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) != 0 && errno != EINVAL)
        return failed(what, n, "clearing the ambient capabilities");
    if (setgroups(0, NULL) != 0)
        return failed(what, n, "dropping the supplementary groups");
    if (setresgid(uid, uid, uid) != 0)
        return failed(what, n, "setting the gid");
    /* from uid 0 to another, with no SECBIT_KEEP_CAPS: the kernel clears
     * the effective and permitted sets */
    if (setresuid(uid, uid, uid) != 0)
        return failed(what, n, "setting the uid");
    struct __user_cap_data_struct data[2];
    if (capabilities(data) != 0)
        return failed(what, n, "reading the capabilities back");
    for (int i = 0; i < 2; i++)
        if (data[i].effective || data[i].permitted || data[i].inheritable) {
            errno = EPERM;
            return failed(what, n, "capabilities left after the uid changed");
        }
    for (int cap = 0; cap <= 63; cap++) {
        int r = prctl(PR_CAPBSET_READ, cap, 0, 0, 0);
        if (r < 0)
            break;
        if (r > 0) {
            errno = EPERM;
            return failed(what, n, "a capability left in the bounding set");
        }
    }
    if (getuid() != uid || geteuid() != uid || getgid() != uid || getegid() != uid) {
        errno = EPERM;
        return failed(what, n, "the uid or gid did not change");
    }
    /* no setuid or file-capability program gives any of it back */
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
        return failed(what, n, "setting no_new_privs");
    return 0;
}

int privilege_describe(char *out, size_t n)
{
    struct __user_cap_data_struct data[2];
    if (capabilities(data) != 0) {
        snprintf(out, n, "unknown: cannot read the capabilities (%s)", strerror(errno));
        return 0;
    }
    int held = 0;
    for (int i = 0; i < 2; i++)
        held |= data[i].effective || data[i].permitted;
    int ambient = 0;
    for (int cap = 0; cap <= 63; cap++) {
        int r = prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_IS_SET, cap, 0, 0);
        if (r < 0)
            break;
        ambient |= r > 0;
    }
    if (held || ambient || geteuid() == 0) {
        snprintf(out, n, "privileged: uid %u, effective %08x%08x", (unsigned)geteuid(), data[1].effective,
                 data[0].effective);
        return 0;
    }
    int bounding = 0;
    for (int cap = 0; cap <= 63; cap++) {
        int r = prctl(PR_CAPBSET_READ, cap, 0, 0, 0);
        if (r < 0)
            break;
        bounding += r > 0;
    }
    snprintf(out, n, "unprivileged: uid %u gid %u, no effective, permitted or ambient capability%s",
             (unsigned)geteuid(), (unsigned)getegid(),
             bounding ? "; the bounding set kept (no CAP_SETPCAP to drop it; none can be gained under no_new_privs)"
                      : ", an empty bounding set");
    return 1;
}

int privilege_can_read(uid_t uid, const char *const *paths, size_t n, char *which, size_t wn)
{
    fflush(NULL);
    pid_t child = fork();
    if (child < 0)
        return -1;
    if (child == 0) {
        if (setgroups(0, NULL) != 0 || setresgid(uid, uid, uid) != 0 || setresuid(uid, uid, uid) != 0)
            _exit(255);
        for (size_t i = 0; i < n && i < 250; i++)
            if (paths[i] && access(paths[i], R_OK) != 0)
                _exit((int)i + 1);
        _exit(0);
    }
    int status;
    while (waitpid(child, &status, 0) < 0)
        if (errno != EINTR)
            return -1;
    if (!WIFEXITED(status) || WEXITSTATUS(status) == 255)
        return -1;
    int code = WEXITSTATUS(status);
    if (code == 0)
        return 1;
    snprintf(which, wn, "%s", paths[code - 1]);
    return 0;
}

static uid_t tree_uid;

static int give_one(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
    (void)st;
    (void)type;
    (void)ftw;
    return lchown(path, tree_uid, tree_uid) == 0 ? 0 : -1;
}

int privilege_give_tree(const char *path, uid_t uid, char *err, size_t n)
{
    tree_uid = uid;
    if (nftw(path, give_one, 32, FTW_PHYS) != 0)
        return kat_fail(err, n, "cannot give '%s' to the worker's uid %u: %s", path, (unsigned)uid, strerror(errno));
    return 0;
}
