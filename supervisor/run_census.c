/* run_census.c - the processes of a run, from /proc (run_census.h). */
#define _GNU_SOURCE
#include <dirent.h>
#include <elf.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "run_census.h"

void run_census_init(struct run_census *c, pid_t root)
{
    memset(c, 0, sizeof *c);
    c->root = root;
}

void run_census_free(struct run_census *c)
{
    free(c->seen);
    memset(c, 0, sizeof *c);
}

int proc_stat_read(pid_t pid, struct proc_stat *r)
{
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t got = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (got <= 0)
        return -1;
    buf[got] = '\0';
    /* pid (comm) state ppid ... field 22 starttime */
    char *open_paren = strchr(buf, '('), *close_paren = strrchr(buf, ')');
    if (!open_paren || !close_paren || close_paren < open_paren || !close_paren[1])
        return -1;
    size_t clen = (size_t)(close_paren - open_paren - 1);
    if (clen >= sizeof r->comm)
        clen = sizeof r->comm - 1;
    memcpy(r->comm, open_paren + 1, clen);
    r->comm[clen] = '\0';
    int field = 3;
    long ppid = -1;
    unsigned long long start = 0;
    char state = '?';
    char *save = NULL;
    for (char *tok = strtok_r(close_paren + 2, " ", &save); tok; tok = strtok_r(NULL, " ", &save), field++) {
        if (field == 3)
            state = tok[0];
        else if (field == 4)
            ppid = strtol(tok, NULL, 10);
        else if (field == 22) {
            start = strtoull(tok, NULL, 10);
            break;
        }
    }
    if (ppid < 0)
        return -1;
    r->pid = pid;
    r->ppid = (pid_t)ppid;
    r->state = state;
    r->start = start;
    return 0;
}

int proc_program_static(pid_t pid)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/exe", (int)pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    Elf64_Ehdr eh;
    int result = 0;
    if (pread(fd, &eh, sizeof eh, 0) == (ssize_t)sizeof eh && !memcmp(eh.e_ident, ELFMAG, SELFMAG) &&
        eh.e_ident[EI_CLASS] == ELFCLASS64 && eh.e_phentsize == sizeof(Elf64_Phdr) && eh.e_phnum < 512) {
        result = 1;
        for (unsigned i = 0; i < eh.e_phnum; i++) {
            Elf64_Phdr ph;
            if (pread(fd, &ph, sizeof ph, (off_t)(eh.e_phoff + (uint64_t)i * sizeof ph)) != (ssize_t)sizeof ph) {
                result = 0;
                break;
            }
            if (ph.p_type == PT_INTERP) {
                result = 0;
                break;
            }
        }
    }
    close(fd);
    return result;
}

int proc_static_executable(pid_t pid)
{
    return proc_program_static(pid) == 1;
}

static int by_pid(const void *a, const void *b)
{
    pid_t x = ((const struct proc_stat *)a)->pid, y = ((const struct proc_stat *)b)->pid;
    return (x > y) - (x < y);
}

/* 1 when rows[i] descends from root (or is it), or from a process whose
 * parent is adopter (> 0: a subreaper's orphans), else 2; memoized in in[] */
static char in_tree(const struct proc_stat *rows, size_t n, char *in, size_t i, pid_t root, pid_t adopter, int depth)
{
    if (in[i])
        return in[i];
    if (rows[i].pid == root || (adopter > 0 && rows[i].ppid == adopter))
        return in[i] = 1;
    struct proc_stat key = { .pid = rows[i].ppid };
    const struct proc_stat *parent = depth < 4096 ? bsearch(&key, rows, n, sizeof *rows, by_pid) : NULL;
    return in[i] = parent ? in_tree(rows, n, in, (size_t)(parent - rows), root, adopter, depth + 1) : 2;
}

/* Every process's /proc/PID/stat, zombies included, sorted by pid; how many
 * into *out (malloc'd, NULL when none could be read). */
static size_t proc_rows(struct proc_stat **out)
{
    *out = NULL;
    DIR *d = opendir("/proc");
    if (!d)
        return 0;
    struct proc_stat *rows = NULL;
    size_t n = 0, cap = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        char *end;
        long pid = strtol(e->d_name, &end, 10);
        if (*end || pid <= 0)
            continue;
        if (n == cap) {
            cap = cap ? 2 * cap : 256;
            struct proc_stat *r = realloc(rows, cap * sizeof *r);
            if (!r)
                break;
            rows = r;
        }
        if (proc_stat_read((pid_t)pid, &rows[n]) == 0)
            n++;
    }
    closedir(d);
    qsort(rows, n, sizeof *rows, by_pid);
    *out = rows;
    return n;
}

/* A process whose first thread has ended by itself (the exit system call,
 * not exit_group) shows that thread's state, 'Z', while its other threads
 * run on: 1 when pid is such a process. */
static int threads_outlive_leader(pid_t pid)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/task", (int)pid);
    DIR *d = opendir(path);
    if (!d)
        return 0;
    int alive = 0;
    struct dirent *e;
    while (!alive && (e = readdir(d))) {
        long tid = strtol(e->d_name, NULL, 10);
        if (tid <= 0 || tid == pid)
            continue;
        char stat_path[96], buf[512];
        snprintf(stat_path, sizeof stat_path, "/proc/%d/task/%ld/stat", (int)pid, tid);
        int fd = open(stat_path, O_RDONLY | O_CLOEXEC);
        ssize_t got = fd >= 0 ? read(fd, buf, sizeof buf - 1) : -1;
        if (fd >= 0)
            close(fd);
        if (got <= 0)
            continue;
        buf[got] = '\0';
        const char *after = strrchr(buf, ')'); /* pid (comm) state ... */
        alive = after && after[1] == ' ' && after[2] != 'Z' && after[2] != 'X';
    }
    closedir(d);
    return alive;
}

size_t proc_tree_pids(pid_t root, pid_t adopter, pid_t **out)
{
    struct proc_stat *rows;
    size_t n = proc_rows(&rows), k = 0;
    char *in = calloc(n ? n : 1, 1);
    *out = calloc(n ? n : 1, sizeof **out);
    for (size_t i = 0; in && *out && i < n; i++)
        if (in_tree(rows, n, in, i, root, adopter, 0) == 1 &&
            (rows[i].state != 'Z' || threads_outlive_leader(rows[i].pid)))
            (*out)[k++] = rows[i].pid;
    free(in);
    free(rows);
    return *out ? k : 0;
}

static struct census_process *known(struct run_census *c, pid_t pid, unsigned long long start)
{
    for (size_t i = 0; i < c->n; i++)
        if (c->seen[i].pid == pid && c->seen[i].start == start)
            return &c->seen[i];
    return NULL;
}

void run_census_scan(struct run_census *c)
{
    struct proc_stat *rows;
    size_t n = proc_rows(&rows);
    if (!rows)
        return;
    /* root's tree: each row's parent found by pid in the sorted rows */
    char *in = calloc(n ? n : 1, 1);
    for (size_t i = 0; in && i < n; i++)
        in_tree(rows, n, in, i, c->root, 0, 0);
    for (size_t i = 0; in && i < n; i++) {
        if (in[i] != 1 || rows[i].pid == c->root)
            continue;
        struct census_process *seen = known(c, rows[i].pid, rows[i].start);
        if (seen) {
            /* seen before it called execve (a raw clone caught between the
             * two): the program it runs now is the one to name */
            if (strcmp(seen->comm, rows[i].comm) != 0) {
                memcpy(seen->comm, rows[i].comm, sizeof seen->comm);
                seen->is_static = proc_static_executable(rows[i].pid);
            }
            continue;
        }
        if (c->n == c->cap) {
            size_t cap2 = c->cap ? 2 * c->cap : 32;
            if (cap2 > 65536)
                break; /* enough to tell */
            struct census_process *s = realloc(c->seen, cap2 * sizeof *s);
            if (!s)
                break;
            c->seen = s;
            c->cap = cap2;
        }
        struct census_process *p = &c->seen[c->n++];
        p->pid = rows[i].pid;
        p->start = rows[i].start;
        memcpy(p->comm, rows[i].comm, sizeof p->comm);
        p->is_static = proc_static_executable(rows[i].pid);
    }
    free(in);
    free(rows);
}
