/* audit_limits.c - the worker's memory and disk, measured from outside (audit_limits.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "audit_limits.h"
#include "audit_shard.h"
#include "run_census.h"

int audit_limit_parse(const char *text, unsigned long long *out, char *err, size_t n)
{
    if (!text || !*text) {
        snprintf(err, n, "an empty size");
        return -1;
    }
    if (!strcmp(text, "off")) {
        *out = 0;
        return 0;
    }
    if (!strcmp(text, "auto")) {
        *out = AUDIT_LIMIT_AUTO;
        return 0;
    }
    char *end;
    errno = 0;
    unsigned long long v = strtoull(text, &end, 10);
    if (errno || end == text || text[0] == '-') {
        snprintf(err, n, "'%s' is not a size (digits, then K, M, G or T; or auto, off)", text);
        return -1;
    }
    unsigned shift = 0;
    switch (*end) {
    case '\0': break;
    case 'K': case 'k': shift = 10; end++; break;
    case 'M': case 'm': shift = 20; end++; break;
    case 'G': case 'g': shift = 30; end++; break;
    case 'T': case 't': shift = 40; end++; break;
    default: end = NULL; break;
    }
    if (!end || *end || (shift && v > (~0ULL >> shift))) {
        snprintf(err, n, "'%s' is not a size (digits, then K, M, G or T; or auto, off)", text);
        return -1;
    }
    v <<= shift;
    if (v < (1ULL << 20)) {
        snprintf(err, n, "'%s' is below 1M", text);
        return -1;
    }
    *out = v;
    return 0;
}

void audit_limits_resolve(struct audit_limits *l, const char *dir, int jobs, char *why, size_t n)
{
    if (jobs < 1)
        jobs = 1;
    why[0] = '\0';
    if (l->memory_bytes == AUDIT_LIMIT_AUTO) {
        unsigned long long avail = audit_mem_available_kib("/proc/meminfo") * 1024ULL;
        l->memory_bytes = avail ? avail / 10 * 9 / (unsigned)jobs : 0;
        if (!avail)
            snprintf(why, n, "no memory limit: MemAvailable could not be read from /proc/meminfo");
    }
    if (l->disk_bytes == AUDIT_LIMIT_AUTO) {
        unsigned long long free_bytes = audit_disk_free(dir);
        l->disk_bytes = free_bytes / 2;
        l->disk_floor_bytes = free_bytes / 10 < (1ULL << 30) ? free_bytes / 10 : (1ULL << 30);
        if (!free_bytes) {
            size_t used = strlen(why);
            snprintf(why + used, n - used, "%sno disk limit: cannot read the free space of '%s'", used ? "; " : "",
                     dir);
        }
    }
}

unsigned long long audit_disk_free(const char *dir)
{
    struct statvfs fs;
    return statvfs(dir, &fs) == 0 ? (unsigned long long)fs.f_bavail * fs.f_frsize : 0;
}

/* What pid holds in memory, in bytes; 0 when gone: its proportional set
 * size (/proc/PID/smaps_rollup, Linux 4.14 and later: a page shared by n
 * processes counts 1/n in each, so the tree's sum is what it holds, the
 * CUDA and PyTorch libraries that the runner and the candidate's process
 * both map counted once), else its resident pages (/proc/PID/statm, a
 * shared page counted in each). */
static unsigned long long resident(pid_t pid)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/smaps_rollup", (int)pid);
    FILE *f = fopen(path, "r");
    if (f) {
        char line[256];
        unsigned long long kib = 0;
        int found = 0;
        while (!found && fgets(line, sizeof line, f))
            found = sscanf(line, "Pss: %llu kB", &kib) == 1;
        fclose(f);
        if (found)
            return kib * 1024ULL;
    }
    snprintf(path, sizeof path, "/proc/%d/statm", (int)pid);
    f = fopen(path, "r");
    if (!f)
        return 0;
    unsigned long long size = 0, pages = 0;
    int got = fscanf(f, "%llu %llu", &size, &pages);
    fclose(f);
    return got == 2 ? pages * (unsigned long long)sysconf(_SC_PAGESIZE) : 0;
}

unsigned long long audit_tree_resident(pid_t root, pid_t adopter, pid_t *largest, char largest_comm[20],
                                       unsigned long long *largest_bytes)
{
    pid_t *pids;
    size_t n = proc_tree_pids(root, adopter, &pids);
    unsigned long long total = 0, best = 0;
    pid_t best_pid = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned long long r = resident(pids[i]);
        total += r;
        if (r > best) {
            best = r;
            best_pid = pids[i];
        }
    }
    free(pids);
    struct proc_stat st;
    if (largest_comm) {
        largest_comm[0] = '\0';
        if (best_pid && proc_stat_read(best_pid, &st) == 0)
            memcpy(largest_comm, st.comm, 20);
    }
    if (largest)
        *largest = best_pid;
    if (largest_bytes)
        *largest_bytes = best;
    return total;
}

/* nftw keeps no user pointer: one walk at a time (the audit is one thread). */
static struct {
    unsigned long long bytes;
    size_t entries, max_entries;
    int truncated;
} walk;

static int count_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)path;
    (void)flag;
    (void)ftw;
    if (++walk.entries > walk.max_entries) {
        walk.truncated = 1;
        return FTW_STOP;
    }
    walk.bytes += (unsigned long long)st->st_blocks * 512ULL;
    return FTW_CONTINUE;
}

unsigned long long audit_dir_usage(const char *dir, size_t max_entries, int *truncated)
{
    walk.bytes = 0;
    walk.entries = 0;
    walk.max_entries = max_entries;
    walk.truncated = 0;
    nftw(dir, count_entry, 16, FTW_PHYS | FTW_MOUNT | FTW_ACTIONRETVAL);
    if (truncated)
        *truncated = walk.truncated;
    return walk.bytes;
}

void audit_size_text(unsigned long long bytes, char *out, size_t n)
{
    if (bytes >= (1ULL << 30))
        snprintf(out, n, "%.1f GiB", (double)bytes / (double)(1ULL << 30));
    else
        snprintf(out, n, "%.1f MiB", (double)bytes / (double)(1ULL << 20));
}
