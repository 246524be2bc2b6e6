/* confine.c - writing only beneath the audit's directories, with Landlock (confine.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/landlock.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "confine.h"

/* glibc has no wrappers for these (man 7 landlock) */
#ifndef SYS_landlock_create_ruleset
#define SYS_landlock_create_ruleset 444
#define SYS_landlock_add_rule 445
#define SYS_landlock_restrict_self 446
#endif

/* What "writing" is: every right that changes the file system. */
#define WRITE_RIGHTS_V1                                                                                              \
    (LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_REMOVE_DIR | LANDLOCK_ACCESS_FS_REMOVE_FILE |                \
     LANDLOCK_ACCESS_FS_MAKE_CHAR | LANDLOCK_ACCESS_FS_MAKE_DIR | LANDLOCK_ACCESS_FS_MAKE_REG |                      \
     LANDLOCK_ACCESS_FS_MAKE_SOCK | LANDLOCK_ACCESS_FS_MAKE_FIFO | LANDLOCK_ACCESS_FS_MAKE_BLOCK |                   \
     LANDLOCK_ACCESS_FS_MAKE_SYM)
#define RIGHT_REFER (1ULL << 13)    /* ABI 2: renames and links across directories */
#define RIGHT_TRUNCATE (1ULL << 14) /* ABI 3 */

static uint64_t write_rights(int abi)
{
    uint64_t r = WRITE_RIGHTS_V1;
    if (abi >= 2)
        r |= RIGHT_REFER;
    if (abi >= 3)
        r |= RIGHT_TRUNCATE;
    return r;
}

int confine_prepare(struct confine *c, const char *const *roots, size_t n, const unsigned char *create_only)
{
    c->ruleset_fd = -1;
    c->why[0] = '\0';
    long abi = syscall(SYS_landlock_create_ruleset, NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);
    if (abi < 0) {
        c->abi = 0;
        snprintf(c->why, sizeof c->why, "this kernel has no Landlock (%s)",
                 errno == ENOSYS ? "not built in" : errno == EOPNOTSUPP ? "disabled at boot" : strerror(errno));
        return -1;
    }
    c->abi = (int)abi;
    uint64_t rights = write_rights(c->abi);
    struct landlock_ruleset_attr attr = { .handled_access_fs = rights };
    int fd = (int)syscall(SYS_landlock_create_ruleset, &attr, sizeof attr, 0);
    if (fd < 0) {
        snprintf(c->why, sizeof c->why, "cannot create a Landlock ruleset: %s", strerror(errno));
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        int root = open(roots[i], O_PATH | O_CLOEXEC);
        if (root < 0) {
            if (errno == ENOENT)
                continue;
            snprintf(c->why, sizeof c->why, "cannot open '%s' for the Landlock rule: %s", roots[i], strerror(errno));
            close(fd);
            return -1;
        }
        struct stat st;
        /* a file (/dev/null) takes only the rights a file has */
        uint64_t allowed = fstat(root, &st) == 0 && S_ISDIR(st.st_mode)
                               ? rights
                               : rights & (LANDLOCK_ACCESS_FS_WRITE_FILE | RIGHT_TRUNCATE);
        if (create_only && create_only[i])
            allowed &= LANDLOCK_ACCESS_FS_MAKE_REG;
        struct landlock_path_beneath_attr rule = { .allowed_access = allowed, .parent_fd = root };
        long r = syscall(SYS_landlock_add_rule, fd, LANDLOCK_RULE_PATH_BENEATH, &rule, 0);
        int e = errno;
        close(root);
        if (r != 0) {
            snprintf(c->why, sizeof c->why, "cannot add the Landlock rule for '%s': %s", roots[i], strerror(e));
            close(fd);
            return -1;
        }
    }
    c->ruleset_fd = fd;
    return 0;
}

int confine_apply(const struct confine *c)
{
    if (c->ruleset_fd < 0)
        return 0;
    /* required of an unprivileged process; setuid programs lose their power */
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
        return -1;
    if (syscall(SYS_landlock_restrict_self, c->ruleset_fd, 0) != 0)
        return -1;
    close(c->ruleset_fd);
    return 0;
}

void confine_release(struct confine *c)
{
    if (c->ruleset_fd >= 0)
        close(c->ruleset_fd);
    c->ruleset_fd = -1;
}
