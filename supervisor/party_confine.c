/* party_confine.c - a candidate's process confined on its own (party_confine.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/landlock.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "json_writer.h"
#include "party_confine.h"
#include "syscall_filter.h"

#ifndef SYS_landlock_create_ruleset
#define SYS_landlock_create_ruleset 444
#define SYS_landlock_add_rule 445
#define SYS_landlock_restrict_self 446
#endif

/* The rights by ABI (man 7 landlock); the kernel's header here may be older than the kernel. */
#define FS_EXECUTE (1ULL << 0)
#define FS_WRITE_FILE (1ULL << 1)
#define FS_READ_FILE (1ULL << 2)
#define FS_READ_DIR (1ULL << 3)
#define FS_WRITE_V1 ((1ULL << 4) | (1ULL << 5) | (1ULL << 6) | (1ULL << 7) | (1ULL << 8) | (1ULL << 9) |          \
                     (1ULL << 10) | (1ULL << 11) | (1ULL << 12) | FS_WRITE_FILE)
#define FS_REFER (1ULL << 13)    /* ABI 2 */
#define FS_TRUNCATE (1ULL << 14) /* ABI 3 */
#define NET_BIND_TCP (1ULL << 0) /* ABI 4 */
#define NET_CONNECT_TCP (1ULL << 1)
#define SCOPE_ABSTRACT_UNIX (1ULL << 0) /* ABI 6 */
#define SCOPE_SIGNAL (1ULL << 1)

struct ruleset_attr_v6 {
    uint64_t handled_access_fs;
    uint64_t handled_access_net;
    uint64_t scoped;
};

struct report {
    int abi;
    char landlock[256]; /* "in force", or why not */
    const char *tcp, *signals, *abstract_unix;
    char seccomp[256];

    int no_new_privs;
};

static uint64_t read_rights(void)
{
    return FS_EXECUTE | FS_READ_FILE | FS_READ_DIR;
}

static uint64_t write_rights(int abi)
{
    return FS_WRITE_V1 | (abi >= 2 ? FS_REFER : 0) | (abi >= 3 ? FS_TRUNCATE : 0);
}

static int add_rule(int ruleset, const char *path, uint64_t rights, char *why, size_t n)
{
    int fd = open(path, O_PATH | O_CLOEXEC);
    if (fd < 0)
        return errno == ENOENT ? 0 : (snprintf(why, n, "cannot open '%s': %s", path, strerror(errno)), -1);
    struct stat st;
    if (fstat(fd, &st) == 0 && !S_ISDIR(st.st_mode)) /* a file takes only a file's rights */
        rights &= FS_EXECUTE | FS_WRITE_FILE | FS_READ_FILE | FS_TRUNCATE;
    struct landlock_path_beneath_attr rule = { .allowed_access = rights, .parent_fd = fd };
    long r = syscall(SYS_landlock_add_rule, ruleset, LANDLOCK_RULE_PATH_BENEATH, &rule, 0);
    int e = errno;
    close(fd);
    if (r != 0)
        return snprintf(why, n, "cannot add the rule for '%s': %s", path, strerror(e)), -1;
    return 0;
}

static void apply_landlock(const struct party_confine *p, struct report *r)
{
    r->tcp = r->signals = r->abstract_unix = "not confined: no Landlock domain";
    long abi = syscall(SYS_landlock_create_ruleset, NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);
    if (abi < 0) {
        snprintf(r->landlock, sizeof r->landlock, "this kernel has no Landlock (%s)", strerror(errno));
        return;
    }
    r->abi = (int)abi;
    struct ruleset_attr_v6 attr = { .handled_access_fs = read_rights() | write_rights(r->abi) };
    size_t size = sizeof attr.handled_access_fs;
    if (abi >= 4) {
        attr.handled_access_net = NET_BIND_TCP | NET_CONNECT_TCP; /* no rule: no TCP at all */
        size = 2 * sizeof(uint64_t);
    }
    if (abi >= 6) {
        attr.scoped = SCOPE_ABSTRACT_UNIX | SCOPE_SIGNAL;
        size = sizeof attr;
    }
    int ruleset = (int)syscall(SYS_landlock_create_ruleset, &attr, size, 0);
    if (ruleset < 0) {
        snprintf(r->landlock, sizeof r->landlock, "cannot create the ruleset: %s", strerror(errno));
        return;
    }
    char why[sizeof r->landlock - 32];
    for (size_t i = 0; i < p->n_read; i++)
        if (add_rule(ruleset, p->read_roots[i], read_rights(), why, sizeof why) != 0)
            goto failed;
    for (size_t i = 0; i < p->n_write; i++)
        if (add_rule(ruleset, p->write_roots[i], read_rights() | write_rights(r->abi), why, sizeof why) != 0)
            goto failed;
    /* its own /proc/PID (the CUDA driver writes there; the same PID after exec), no other process's */
    char self[64];
    snprintf(self, sizeof self, "/proc/%ld", (long)getpid());
    if (add_rule(ruleset, self, read_rights() | write_rights(r->abi), why, sizeof why) != 0)
        goto failed;
    if (syscall(SYS_landlock_restrict_self, ruleset, 0) != 0) {
        snprintf(why, sizeof why, "cannot restrict itself: %s", strerror(errno));
        goto failed;
    }
    close(ruleset);
    snprintf(r->landlock, sizeof r->landlock, "in force");
    r->tcp = abi >= 4 ? "refused" : "not confined: Landlock ABI below 4";
    r->signals = abi >= 6 ? "scoped" : "not confined: Landlock ABI below 6";
    r->abstract_unix = abi >= 6 ? "scoped" : "not confined: Landlock ABI below 6";
    return;
failed:
    close(ruleset);
    snprintf(r->landlock, sizeof r->landlock, "not applied: %s", why);
}

static void write_report(const struct party_confine *p, const struct report *r)
{
    FILE *f = p->report_fd >= 0 ? fdopen(dup(p->report_fd), "w") : stderr;
    if (!f)
        return;
    struct kat_json j;
    kat_json_init(&j, f);
    kat_json_open(&j, NULL, '{');
    kat_json_str(&j, "op", "confinement");
    kat_json_i64(&j, "pid", (long long)getpid());
    kat_json_i64(&j, "uid", (long long)geteuid());
    kat_json_bool(&j, "no_new_privs", r->no_new_privs);
    kat_json_u64(&j, "landlock_abi", (uint64_t)r->abi);
    kat_json_str(&j, "landlock", r->landlock);
    kat_json_u64(&j, "read_roots", p->n_read);
    kat_json_u64(&j, "write_roots", p->n_write);
    kat_json_str(&j, "tcp", r->tcp);
    kat_json_str(&j, "signals", r->signals);
    kat_json_str(&j, "abstract_unix", r->abstract_unix);
    kat_json_str(&j, "seccomp", r->seccomp);
    kat_json_str(&j, "seccomp_refuses", syscall_filter_refused());
    kat_json_close(&j, '}');
    fputc('\n', f);
    if (f != stderr)
        fclose(f);
    else
        fflush(f);
}

int party_confine_exec(const struct party_confine *p, char *err, size_t n)
{
    struct report r;
    memset(&r, 0, sizeof r);
    r.no_new_privs = prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0;
    if (r.no_new_privs) {
        apply_landlock(p, &r);
        char why[200];
        if (syscall_filter_apply(why, sizeof why) == 0)
            snprintf(r.seccomp, sizeof r.seccomp, "in force");
        else
            snprintf(r.seccomp, sizeof r.seccomp, "not applied: %s", why);
    } else {
        snprintf(r.landlock, sizeof r.landlock, "not applied: no_new_privs refused (%s)", strerror(errno));
        snprintf(r.seccomp, sizeof r.seccomp, "not applied: no_new_privs refused");
        r.tcp = r.signals = r.abstract_unix = "not confined";
    }
    write_report(p, &r);
    execvp(p->argv[0], p->argv);
    snprintf(err, n, "cannot run '%s': %s", p->argv[0], strerror(errno));
    return -1;
}
