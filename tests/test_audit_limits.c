/* tests/test_audit_limits.c - audit_limits.h: the sizes --memory-limit and
 * --disk-limit take, the process tree whose memory counts, and the disk space
 * a directory takes. */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "audit_limits.h"
#include "run_census.h"

static unsigned long long parsed(const char *text)
{
    unsigned long long v = 12345;
    char err[160];
    cr_assert_eq(audit_limit_parse(text, &v, err, sizeof err), 0, "'%s': %s", text, err);
    return v;
}

static void refused(const char *text)
{
    unsigned long long v = 7;
    char err[160] = "";
    cr_expect_eq(audit_limit_parse(text, &v, err, sizeof err), -1, "'%s' taken", text);
    cr_expect(err[0], "'%s': no message", text);
    cr_expect_eq(v, 7, "'%s': the value changed on an error", text);
}

Test(limits, sizes)
{
    cr_expect_eq(parsed("off"), 0);
    cr_expect_eq(parsed("auto"), AUDIT_LIMIT_AUTO);
    cr_expect_eq(parsed("512M"), 512ULL << 20);
    cr_expect_eq(parsed("1G"), 1ULL << 30);
    cr_expect_eq(parsed("3t"), 3ULL << 40);
    cr_expect_eq(parsed("2048K"), 2ULL << 20);
    cr_expect_eq(parsed("1048576"), 1ULL << 20);
    refused("");
    refused("12Q");
    refused("1GB");
    refused("-1G");
    refused("G");
    refused("100");            /* below 1M */
    refused("99999999999T");   /* beyond 64 bits */
}

Test(limits, auto_divided_among_jobs)
{
    struct audit_limits one = { AUDIT_LIMIT_AUTO, AUDIT_LIMIT_AUTO, 0 }, four = one, given = { 5ULL << 20, 0, 0 };
    char why[320];
    audit_limits_resolve(&one, "/tmp", 1, why, sizeof why);
    cr_expect_str_eq(why, "", "%s", why);
    cr_expect(one.memory_bytes > 0 && one.memory_bytes != AUDIT_LIMIT_AUTO);
    cr_expect(one.disk_bytes > 0 && one.disk_bytes != AUDIT_LIMIT_AUTO);
    audit_limits_resolve(&four, "/tmp", 4, why, sizeof why);
    /* read at two moments: a quarter within what the machine's use moved meanwhile */
    cr_expect(four.memory_bytes < one.memory_bytes / 3, "%llu of %llu", four.memory_bytes, one.memory_bytes);
    /* the disk's is each audit's own, with a floor of free space: not divided */
    cr_expect(four.disk_bytes > one.disk_bytes / 3 * 2, "%llu of %llu", four.disk_bytes, one.disk_bytes);
    cr_expect(one.disk_floor_bytes > 0 && one.disk_floor_bytes <= 1ULL << 30 &&
              one.disk_floor_bytes < one.disk_bytes, "floor %llu", one.disk_floor_bytes);
    audit_limits_resolve(&given, "/tmp", 4, why, sizeof why);
    cr_expect_eq(given.memory_bytes, 5ULL << 20, "a given limit is kept");
    cr_expect_eq(given.disk_bytes, 0, "off stays off");
    cr_expect_eq(given.disk_floor_bytes, 0, "no floor without the disk limit");
    struct audit_limits nowhere = { 0, AUDIT_LIMIT_AUTO, 0 };
    audit_limits_resolve(&nowhere, "/no/such/kaudit/dir", 1, why, sizeof why);
    cr_expect_eq(nowhere.disk_bytes, 0, "unreadable: no limit");
    cr_expect(strstr(why, "/no/such/kaudit/dir"), "said why: %s", why);
}

static int has(const pid_t *v, size_t n, pid_t p)
{
    for (size_t i = 0; i < n; i++)
        if (v[i] == p)
            return 1;
    return 0;
}

/* root -> child -> grandchild, and one process that is not of the tree; the
 * grandchild touches 64 MiB when told to */
Test(limits, the_tree_and_its_memory)
{
    int ready[2], go[2];
    cr_assert_eq(pipe(ready), 0);
    cr_assert_eq(pipe(go), 0);
    pid_t root = fork();
    cr_assert_geq(root, 0);
    if (root == 0) {
        /* each dies with its parent: an assertion that ends the test leaves none behind */
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (fork() == 0) {
            prctl(PR_SET_PDEATHSIG, SIGKILL);
            if (fork() == 0) {
                prctl(PR_SET_PDEATHSIG, SIGKILL);
                pid_t me = getpid();
                char c;
                if (write(ready[1], &me, sizeof me) < 0 || read(go[0], &c, 1) != 1)
                    _exit(1);
                size_t n = 64u << 20;
                char *p = malloc(n);
                for (size_t i = 0; p && i < n; i += 4096)
                    p[i] = 1;
                if (write(ready[1], &me, sizeof me) < 0)
                    _exit(1);
                pause();
                _exit(0);
            }
            pause();
            _exit(0);
        }
        pause();
        _exit(0);
    }
    pid_t stranger = fork();
    if (stranger == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        pause();
        _exit(0);
    }
    pid_t grandchild = 0;
    cr_assert_eq(read(ready[0], &grandchild, sizeof grandchild), (ssize_t)sizeof grandchild);
    cr_assert_gt(grandchild, 0);
    pid_t *pids;
    size_t n = proc_tree_pids(root, 0, &pids);
    cr_expect_eq(n, 3, "root, child, grandchild: %zu", n);
    cr_expect(has(pids, n, root) && has(pids, n, grandchild), "the root and its grandchild");
    cr_expect(!has(pids, n, stranger) && !has(pids, n, getpid()), "not a stranger, not the parent");
    free(pids);
    /* adopted: this process's children count when it is the adopter */
    n = proc_tree_pids(root, getpid(), &pids);
    cr_expect(has(pids, n, stranger), "a child of the adopter counts (an orphan reparented to it)");
    free(pids);
    unsigned long long before = audit_tree_resident(root, 0, NULL, NULL, NULL);
    cr_assert_eq(write(go[1], "x", 1), 1);
    pid_t again = 0;
    cr_assert_eq(read(ready[0], &again, sizeof again), (ssize_t)sizeof again);
    pid_t big = 0;
    char comm[20];
    unsigned long long big_bytes = 0;
    unsigned long long after = audit_tree_resident(root, 0, &big, comm, &big_bytes);
    cr_expect_geq(after - before, 60ULL << 20, "64 MiB touched in the tree: %llu then %llu", before, after);
    cr_expect(big > 0 && big_bytes > 0 && big_bytes <= after, "the largest named (%d, %llu)", (int)big, big_bytes);
    n = proc_tree_pids(root, 0, &pids);   /* the middle one too: it would outlive the test */
    for (size_t i = 0; i < n; i++)
        kill(pids[i], SIGKILL);
    free(pids);
    kill(stranger, SIGKILL);
    waitpid(stranger, NULL, 0);
    waitpid(root, NULL, 0);
}

Test(limits, a_directory_s_disk_space)
{
    char dir[] = "/tmp/kaudit-limits-XXXXXX";
    cr_assert(mkdtemp(dir));
    char path[256];
    snprintf(path, sizeof path, "%s/one", dir);
    int fd = open(path, O_WRONLY | O_CREAT, 0644);
    cr_assert_geq(fd, 0);
    static char block[1 << 20];
    memset(block, 1, sizeof block);
    for (int i = 0; i < 4; i++)
        cr_assert_eq(write(fd, block, sizeof block), (ssize_t)sizeof block);
    fsync(fd);
    close(fd);
    snprintf(path, sizeof path, "%s/link", dir);
    cr_assert_eq(symlink("/usr", path), 0);   /* not followed */
    int truncated = 1;
    unsigned long long used = audit_dir_usage(dir, 1000, &truncated);
    cr_expect_eq(truncated, 0);
    cr_expect_geq(used, 4ULL << 20, "%llu", used);
    cr_expect_lt(used, 8ULL << 20, "the link's target not counted: %llu", used);
    audit_dir_usage(dir, 1, &truncated);
    cr_expect_eq(truncated, 1, "more entries than allowed: said so");
    unlink(path);
    snprintf(path, sizeof path, "%s/one", dir);
    unlink(path);
    rmdir(dir);
}
