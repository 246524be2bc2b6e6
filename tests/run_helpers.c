/*
 * run_helpers.c - see run_helpers.h.
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "run_helpers.h"

/* ---- running programs ------------------------------------------------------------- */

static void append(char **buf, size_t *size, size_t *cap, const char *data, size_t n)
{
    if (*size + n + 1 > *cap) {
        size_t c = *cap ? *cap : 4096;
        while (c < *size + n + 1)
            c *= 2;
        char *b = realloc(*buf, c);
        if (!b)
            return;
        *buf = b;
        *cap = c;
    }
    memcpy(*buf + *size, data, n);
    *size += n;
    (*buf)[*size] = '\0';
}

static uint64_t mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

int rh_exec(char *const argv[], char *const env[], int timeout_s, struct rh_run *r)
{
    memset(r, 0, sizeof *r);
    r->exit_code = -1;
    int out[2], err[2];
    if (pipe2(out, O_CLOEXEC) != 0 || pipe2(err, O_CLOEXEC) != 0)
        return -1;
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        setpgid(0, 0);
        dup2(out[1], 1);
        dup2(err[1], 2);
        int devnull = open("/dev/null", O_RDONLY);
        if (devnull >= 0)
            dup2(devnull, 0);
        execve(argv[0], argv, env);
        fprintf(stderr, "rh_exec: cannot run %s: %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    setpgid(pid, pid);
    close(out[1]);
    close(err[1]);
    size_t out_cap = 0, err_cap = 0;
    append(&r->out, &r->out_size, &out_cap, "", 0);
    append(&r->err, &r->err_size, &err_cap, "", 0);
    struct pollfd fds[2] = { { out[0], POLLIN, 0 }, { err[0], POLLIN, 0 } };
    int open_fds = 2, exited = 0;
    uint64_t deadline = mono_ms() + (uint64_t)timeout_s * 1000u, grace = 0;
    while (open_fds > 0) {
        if (!exited && waitpid(pid, &r->status, WNOHANG) == pid) {
            exited = 1;
            grace = mono_ms() + 3000; /* leftovers of the process group may hold the pipes */
        }
        uint64_t now = mono_ms();
        if (!exited && now > deadline) {
            r->timed_out = 1;
            kill(-pid, SIGKILL);
        }
        if (exited && now > grace)
            break;
        int n = poll(fds, 2, 100);
        if (n < 0 && errno != EINTR)
            break;
        for (int i = 0; i < 2; i++) {
            if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR)))
                continue;
            char buf[8192];
            ssize_t got = read(fds[i].fd, buf, sizeof buf);
            if (got > 0) {
                if (i == 0)
                    append(&r->out, &r->out_size, &out_cap, buf, (size_t)got);
                else
                    append(&r->err, &r->err_size, &err_cap, buf, (size_t)got);
            } else if (got == 0 || (got < 0 && errno != EINTR && errno != EAGAIN)) {
                close(fds[i].fd);
                fds[i].fd = -1;
                open_fds--;
            }
        }
    }
    for (int i = 0; i < 2; i++)
        if (fds[i].fd >= 0)
            close(fds[i].fd);
    if (!exited) {
        while (waitpid(pid, &r->status, 0) < 0 && errno == EINTR)
            ;
    }
    if (WIFEXITED(r->status))
        r->exit_code = WEXITSTATUS(r->status);
    else if (WIFSIGNALED(r->status))
        r->signal = WTERMSIG(r->status);
    return 0;
}

void rh_run_free(struct rh_run *r)
{
    free(r->out);
    free(r->err);
    memset(r, 0, sizeof *r);
}

char **rh_env(const char *libdir, const char *log, const char *const extra[])
{
    size_t n = 0;
    while (extra && extra[n])
        n++;
    char **env = calloc(n + 8, sizeof(char *));
    size_t k = 0;
    const char *path = getenv("PATH");
    const char *home = getenv("HOME");
    const char *tmp = getenv("TMPDIR");
    if (asprintf(&env[k], "PATH=%s", path && *path ? path : "/usr/local/bin:/usr/bin:/bin") > 0)
        k++;
    if (asprintf(&env[k], "HOME=%s", home && *home ? home : "/tmp") > 0)
        k++;
    env[k++] = strdup("LANG=C");
    if (tmp && *tmp && asprintf(&env[k], "TMPDIR=%s", tmp) > 0)
        k++;
    if (libdir && asprintf(&env[k], "LD_LIBRARY_PATH=%s", libdir) > 0)
        k++;
    if (log && asprintf(&env[k], "STANDIN_LAUNCH_LOG=%s", log) > 0)
        k++;
    for (size_t i = 0; i < n; i++)
        env[k++] = strdup(extra[i]);
    env[k] = NULL;
    return env;
}

void rh_env_free(char **env)
{
    for (size_t i = 0; env && env[i]; i++)
        free(env[i]);
    free(env);
}

int rh_run_plain(const char *libdir, const char *log, char *const argv[], const char *const extra[],
                 struct rh_run *r)
{
    char **env = rh_env(libdir, log, extra);
    int rc = rh_exec(argv, env, RH_PLAIN_TIMEOUT_S, r);
    rh_env_free(env);
    cr_expect(!r->timed_out, "%s timed out after %d s (killed); stderr:\n%s", argv[0], RH_PLAIN_TIMEOUT_S, r->err);
    return rc;
}

int rh_run_kaudit(const char *session, const char *libdir, const char *log, char *const argv[],
                  const char *const extra[], struct rh_run *r)
{
    size_t n = 0;
    while (argv[n])
        n++;
    char **full = calloc(n + 6, sizeof(char *));
    full[0] = (char *)KAUDIT_BIN;
    full[1] = "run";
    full[2] = "-d";
    full[3] = (char *)session;
    full[4] = "--";
    for (size_t i = 0; i < n; i++)
        full[5 + i] = argv[i];
    full[5 + n] = NULL;
    char **env = rh_env(libdir, log, extra);
    int rc = rh_exec(full, env, RH_KAUDIT_TIMEOUT_S, r);
    rh_env_free(env);
    free(full);
    cr_expect(!r->timed_out, "kaudit run -- %s timed out after %d s (killed: a hang under kaudit?); stderr:\n%s",
              argv[0], RH_KAUDIT_TIMEOUT_S, r->err);
    return rc;
}

char *rh_without_kaudit_lines(const char *err)
{
    size_t n = strlen(err);
    char *out = malloc(n + 1), *o = out;
    const char *p = err;
    while (*p) {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) + 1 : strlen(p);
        if (strncmp(p, "kaudit: ", 8) != 0) {
            memcpy(o, p, len);
            o += len;
        }
        p += len;
    }
    *o = '\0';
    return out;
}

char *rh_tmpdir(const char *tag)
{
    const char *base = getenv("TMPDIR");
    char *dir;
    if (asprintf(&dir, "%s/kaudit-%s-XXXXXX", base && *base ? base : "/tmp", tag) < 0)
        return NULL;
    if (!mkdtemp(dir)) {
        free(dir);
        return NULL;
    }
    return dir;
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    remove(path);
    return 0;
}

void rh_cleanup(char *dir)
{
    if (!dir)
        return;
    const char *keep = getenv("KAUDIT_TEST_KEEP");
    if (keep && *keep && strcmp(keep, "0") != 0)
        fprintf(stderr, "kept %s\n", dir);
    else
        nftw(dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
    free(dir);
}

char *rh_path(const char *dir, const char *name)
{
    char *p;
    if (asprintf(&p, "%s/%s", dir, name) < 0)
        return NULL;
    return p;
}

/* ---- sessions ------------------------------------------------------------------------ */

static void load_trace(struct rh_trace *tr, const char *path, const char *name)
{
    memset(tr, 0, sizeof *tr);
    tr->path = strdup(path);
    tr->name = strdup(name);
    tr->t = kat_trace_open(path, tr->error, sizeof tr->error);
    if (!tr->t) {
        tr->read_result = -1;
        return;
    }
    tr->header = *kat_trace_header(tr->t);
    size_t cap = 0;
    struct kat_record rec;
    int rc;
    while ((rc = kat_trace_next(tr->t, &rec, tr->error, sizeof tr->error)) == 1) {
        if (tr->nrecs == cap) {
            cap = cap ? 2 * cap : 256;
            struct kat_record *n = realloc(tr->recs, cap * sizeof *n);
            if (!n)
                break;
            tr->recs = n;
        }
        tr->recs[tr->nrecs++] = rec;
        if (rec.type == KAT_REC_PROCESS_START && !tr->start)
            tr->start = rec.body;
        if (rec.type == KAT_REC_PROCESS_END)
            tr->end = rec.body;
    }
    tr->read_result = rc;
    tr->complete = kat_trace_complete(tr->t);
}

int rh_session_load(const char *dir, struct rh_session *out, char *err, size_t n)
{
    memset(out, 0, sizeof *out);
    if (kat_session_open(dir, &out->s, err, n) != 0)
        return -1;
    out->dir = strdup(dir);
    out->ntraces = kat_session_trace_count(out->s);
    out->traces = calloc(out->ntraces ? out->ntraces : 1, sizeof *out->traces);
    for (size_t i = 0; i < out->ntraces; i++)
        load_trace(&out->traces[i], kat_session_trace_path(out->s, i), kat_session_trace_name(out->s, i));
    return 0;
}

void rh_session_free(struct rh_session *s)
{
    for (size_t i = 0; i < s->ntraces; i++) {
        struct rh_trace *t = &s->traces[i];
        if (t->t)
            kat_trace_close(t->t);
        free(t->recs);
        free(t->kernels_by_correlation);
        free(t->path);
        free(t->name);
    }
    free(s->traces);
    if (s->s)
        kat_session_close(s->s);
    free(s->dir);
    memset(s, 0, sizeof *s);
}

const char *rh_str(const struct rh_trace *t, uint32_t id)
{
    return t->t ? kat_trace_string(t->t, id) : "";
}

const char *rh_str_elem(const struct rh_trace *t, uint32_t id, int index)
{
    if (!t->t)
        return "";
    const char *s = kat_trace_string(t->t, id);
    uint32_t len = kat_trace_string_length(t->t, id);
    const char *end = s + len;
    for (int i = 0; i < index && s < end; i++)
        s += strlen(s) + 1;
    return s < end ? s : "";
}

size_t rh_count(const struct rh_trace *t, uint16_t type)
{
    size_t n = 0;
    for (size_t i = 0; i < t->nrecs; i++)
        n += t->recs[i].type == type;
    return n;
}

const struct rh_trace *rh_trace_at(const struct rh_session *s, uint32_t pid, uint64_t at_ns)
{
    const struct rh_trace *best = NULL;
    for (size_t i = 0; i < s->ntraces; i++) {
        const struct rh_trace *t = &s->traces[i];
        if (!t->t || t->header.pid != pid || t->header.start_realtime_ns > at_ns)
            continue;
        if (!best || t->header.start_realtime_ns >= best->header.start_realtime_ns)
            best = t;
    }
    return best;
}

size_t rh_traces_of(const struct rh_session *s, uint32_t pid, const struct rh_trace **out, size_t max)
{
    size_t n = 0;
    for (size_t i = 0; i < s->ntraces; i++)
        if (s->traces[i].t && s->traces[i].header.pid == pid && n < max)
            out[n++] = &s->traces[i];
    /* oldest first */
    for (size_t i = 1; i < n; i++)
        for (size_t j = i; j > 0 && out[j]->header.start_realtime_ns < out[j - 1]->header.start_realtime_ns; j--) {
            const struct rh_trace *tmp = out[j];
            out[j] = out[j - 1];
            out[j - 1] = tmp;
        }
    return n;
}

const struct rh_trace *rh_trace_by_arg(const struct rh_session *s, int index, const char *arg)
{
    for (size_t i = 0; i < s->ntraces; i++) {
        const struct rh_trace *t = &s->traces[i];
        if (!t->start)
            continue;
        if (!arg || strcmp(rh_str_elem(t, t->start->argv_string, index), arg) == 0)
            return t;
    }
    return NULL;
}

const struct kat_health_rec *rh_health(const struct rh_trace *t, uint32_t code)
{
    for (size_t i = 0; i < t->nrecs; i++) {
        if (t->recs[i].type != KAT_REC_HEALTH)
            continue;
        const struct kat_health_rec *h = t->recs[i].body;
        if (h->code == code)
            return h;
    }
    return NULL;
}

const struct kat_health_rec *rh_session_health(const struct rh_session *s, uint32_t code,
                                               const struct rh_trace **where)
{
    for (size_t i = 0; i < s->ntraces; i++) {
        const struct kat_health_rec *h = rh_health(&s->traces[i], code);
        if (h) {
            if (where)
                *where = &s->traces[i];
            return h;
        }
    }
    return NULL;
}

const struct kat_vendor_call_rec *rh_vendor_call(const struct rh_trace *t, uint64_t call_id)
{
    for (size_t i = 0; i < t->nrecs; i++) {
        if (t->recs[i].type != KAT_REC_VENDOR_CALL)
            continue;
        const struct kat_vendor_call_rec *v = t->recs[i].body;
        if (v->call_id == call_id)
            return v;
    }
    return NULL;
}

const struct kat_vendor_call_rec *rh_vendor_call_by_api(const struct rh_trace *t, const char *api,
                                                        size_t *cursor)
{
    for (size_t i = cursor ? *cursor : 0; i < t->nrecs; i++) {
        if (t->recs[i].type != KAT_REC_VENDOR_CALL)
            continue;
        const struct kat_vendor_call_rec *v = t->recs[i].body;
        if (strcmp(rh_str(t, v->api_string), api) == 0) {
            if (cursor)
                *cursor = i + 1;
            return v;
        }
    }
    return NULL;
}

uint64_t rh_vendor_window(const struct rh_trace *t, uint32_t correlation_id, int *count)
{
    /* Counts distinct vendor call ids: with API records from CUPTI activity,
     * a runtime call and the driver call inside it share a correlation id
     * and each gets an EXTERNAL_CORRELATION record, the same id twice. */
    uint64_t ids[8];
    int n = 0, distinct = 0;
    for (size_t i = 0; i < t->nrecs; i++) {
        uint32_t tied;
        uint64_t id;
        if (!kat_record_vendor_tie(&t->recs[i], &tied, &id) || tied != correlation_id)
            continue;
        int seen = 0;
        for (int j = 0; j < n && !seen; j++)
            seen = ids[j] == id;
        if (!seen) {
            if (n < 8)
                ids[n++] = id;
            distinct++;
        }
    }
    if (count)
        *count = distinct;
    return n ? ids[0] : 0;
}

static const struct rh_trace *sorting_trace;

static uint32_t kernel_correlation(const struct rh_trace *t, size_t rec)
{
    return ((const struct kat_kernel_rec *)t->recs[rec].body)->correlation_id;
}

static int by_correlation(const void *x, const void *y)
{
    uint32_t a = kernel_correlation(sorting_trace, *(const size_t *)x),
             b = kernel_correlation(sorting_trace, *(const size_t *)y);
    if (a != b)
        return a < b ? -1 : 1;
    return *(const size_t *)x < *(const size_t *)y ? -1 : *(const size_t *)x > *(const size_t *)y;
}

const struct kat_kernel_rec *rh_kernel(const struct rh_trace *t, uint32_t correlation_id, const char *name)
{
    struct rh_trace *w = (struct rh_trace *)t; /* the index is a cache: the records are unchanged */
    if (!w->kernels_by_correlation) {
        w->kernels_by_correlation = malloc((t->nrecs ? t->nrecs : 1) * sizeof *w->kernels_by_correlation);
        if (!w->kernels_by_correlation)
            return NULL;
        for (size_t i = 0; i < t->nrecs; i++)
            if (t->recs[i].type == KAT_REC_KERNEL)
                w->kernels_by_correlation[w->nkernels_indexed++] = i;
        sorting_trace = t;
        qsort(w->kernels_by_correlation, w->nkernels_indexed, sizeof *w->kernels_by_correlation, by_correlation);
    }
    /* the first of this correlation id, then each of them in record order */
    size_t lo = 0, hi = w->nkernels_indexed;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (kernel_correlation(t, w->kernels_by_correlation[mid]) < correlation_id)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (; lo < w->nkernels_indexed && kernel_correlation(t, w->kernels_by_correlation[lo]) == correlation_id; lo++) {
        const struct kat_kernel_rec *k = t->recs[w->kernels_by_correlation[lo]].body;
        if (!name || strcmp(rh_str(t, k->name_string), name) == 0)
            return k;
    }
    return NULL;
}

int rh_readable(const struct rh_trace *t)
{
    return t->t && t->read_result == 0;
}

const char *rh_describe(const struct rh_session *s)
{
    static char buf[4096];
    size_t off = 0;
    off += (size_t)snprintf(buf + off, sizeof buf - off, "%zu trace(s) in %s:", s->ntraces, s->dir);
    for (size_t i = 0; i < s->ntraces && off < sizeof buf; i++) {
        const struct rh_trace *t = &s->traces[i];
        off += (size_t)snprintf(buf + off, sizeof buf - off, " [%s pid %u ppid %u origin %u recs %zu %s%s]",
                                t->name, t->header.pid, t->header.ppid, t->header.origin, t->nrecs,
                                t->complete ? "complete" : "truncated", t->read_result < 0 ? " MALFORMED" : "");
    }
    return buf;
}

const char *rh_describe_ending(const struct rh_trace *t)
{
    static char buf[2048];
    size_t off = 0, last_end = t->nrecs;
    for (size_t i = 0; i < t->nrecs; i++)
        if (t->recs[i].type == KAT_REC_PROCESS_END)
            last_end = i;
    off += (size_t)snprintf(buf, sizeof buf, "%s: %zu records, reading ended %d%s%s", t->name, t->nrecs,
                            t->read_result, t->error[0] ? ": " : "", t->error);
    if (last_end == t->nrecs)
        return buf;
    const struct kat_process_end_rec *e = t->recs[last_end].body;
    off += (size_t)snprintf(buf + off, sizeof buf - off, "; last end record #%zu at offset %llu (kind %u)", last_end,
                            (unsigned long long)t->recs[last_end].offset, e->kind);
    size_t after = t->nrecs - last_end - 1;
    off += (size_t)snprintf(buf + off, sizeof buf - off, ", then %zu records", after);
    for (size_t i = last_end + 1; i < t->nrecs && i <= last_end + 8 && off < sizeof buf; i++)
        off += (size_t)snprintf(buf + off, sizeof buf - off, "%s %s", i == last_end + 1 ? ":" : ",",
                                kat_record_type_name(t->recs[i].type));
    if (after > 8 && off < sizeof buf)
        snprintf(buf + off, sizeof buf - off, ", ...");
    return buf;
}

/* ---- ground truth ----------------------------------------------------------------------- */

#define GROW(arr, n, cap)                                                         \
    do {                                                                          \
        if ((n) == (cap)) {                                                       \
            (cap) = (cap) ? 2 * (cap) : 64;                                       \
            void *p_ = realloc((arr), (cap) * sizeof *(arr));                     \
            if (!p_)                                                              \
                goto fail;                                                        \
            (arr) = p_;                                                           \
        }                                                                         \
    } while (0)

static void copy_field(char *dst, size_t n, const char *src)
{
    snprintf(dst, n, "%s", src ? src : "");
}

int rh_truth_load(const char *path, struct rh_truth *t)
{
    memset(t, 0, sizeof *t);
    FILE *f = fopen(path, "r");
    if (!f)
        return errno == ENOENT ? 0 : -1;
    size_t ck = 0, ce = 0, cm = 0, cv = 0, cev = 0;
    char *line = NULL;
    size_t cap = 0;
    while (getline(&line, &cap, f) > 0) {
        line[strcspn(line, "\n")] = '\0';
        char *fields[16] = { 0 };
        int nf = 0;
        char *save = NULL;
        for (char *tok = strtok_r(line, "\t", &save); tok && nf < 16; tok = strtok_r(NULL, "\t", &save))
            fields[nf++] = tok;
        if (nf < 4)
            continue;
        uint32_t pid = (uint32_t)strtoul(fields[1], NULL, 10), tid = (uint32_t)strtoul(fields[2], NULL, 10);
        uint64_t host = strtoull(fields[3], NULL, 10);
        switch (fields[0][0]) {
        case 'K':
            if (nf < 13)
                break;
            GROW(t->kernels, t->nkernels, ck);
            {
                struct gt_kernel *k = &t->kernels[t->nkernels++];
                memset(k, 0, sizeof *k);
                k->pid = pid;
                k->tid = tid;
                k->host_ns = host;
                k->correlation_id = (uint32_t)strtoul(fields[4], NULL, 10);
                k->stream_id = (uint32_t)strtoul(fields[5], NULL, 10);
                k->context_id = (uint32_t)strtoul(fields[6], NULL, 10);
                k->start_ns = strtoull(fields[7], NULL, 10);
                k->end_ns = strtoull(fields[8], NULL, 10);
                copy_field(k->grid, sizeof k->grid, fields[9]);
                copy_field(k->block, sizeof k->block, fields[10]);
                copy_field(k->vendor, sizeof k->vendor, fields[11]);
                copy_field(k->name, sizeof k->name, fields[12]);
            }
            break;
        case 'T':
            if (nf < 8)
                break;
            GROW(t->elapsed, t->nelapsed, ce);
            {
                struct gt_elapsed *e = &t->elapsed[t->nelapsed++];
                e->pid = pid;
                e->tid = tid;
                e->host_ns = host;
                e->correlation_id = (uint32_t)strtoul(fields[4], NULL, 10);
                e->result = atoi(fields[5]);
                e->bits = (uint32_t)strtoul(fields[7], NULL, 16);
                memcpy(&e->ms, &e->bits, sizeof e->ms);
            }
            break;
        case 'M':
            if (nf < 8)
                break;
            GROW(t->modules, t->nmodules, cm);
            {
                struct gt_module *m = &t->modules[t->nmodules++];
                m->pid = pid;
                m->tid = tid;
                m->host_ns = host;
                m->correlation_id = (uint32_t)strtoul(fields[4], NULL, 10);
                m->module_id = (uint32_t)strtoul(fields[5], NULL, 10);
                m->size = strtoull(fields[6], NULL, 10);
                copy_field(m->vendor, sizeof m->vendor, fields[7]);
            }
            break;
        case 'V':
            if (nf < 7)
                break;
            GROW(t->vendor, t->nvendor, cv);
            {
                struct gt_vendor *v = &t->vendor[t->nvendor++];
                v->pid = pid;
                v->tid = tid;
                v->host_ns = host;
                copy_field(v->library, sizeof v->library, fields[4]);
                copy_field(v->api, sizeof v->api, fields[5]);
                v->depth = atoi(fields[6]);
            }
            break;
        case 'E':
            if (nf < 8)
                break;
            GROW(t->events, t->nevents, cev);
            {
                struct gt_event *e = &t->events[t->nevents++];
                e->pid = pid;
                e->tid = tid;
                e->host_ns = host;
                e->correlation_id = (uint32_t)strtoul(fields[4], NULL, 10);
                e->event_id = (uint32_t)strtoul(fields[5], NULL, 10);
                e->stream_id = (uint32_t)strtoul(fields[6], NULL, 10);
                e->ts = strtoull(fields[7], NULL, 10);
            }
            break;
        case 'I':
            t->injections++;
            break;
        default:
            break;
        }
    }
    free(line);
    fclose(f);
    return 0;
fail:
    free(line);
    fclose(f);
    return -1;
}

void rh_truth_free(struct rh_truth *t)
{
    free(t->kernels);
    free(t->elapsed);
    free(t->modules);
    free(t->vendor);
    free(t->events);
    memset(t, 0, sizeof *t);
}

int rh_check_kernels(const struct rh_session *s, const struct rh_truth *gt, uint32_t pid)
{
    int problems = 0;
    size_t *assigned = calloc(s->ntraces ? s->ntraces : 1, sizeof *assigned);
    for (size_t i = 0; i < gt->nkernels; i++) {
        const struct gt_kernel *g = &gt->kernels[i];
        if (pid && g->pid != pid)
            continue;
        const struct rh_trace *t = rh_trace_at(s, g->pid, g->host_ns);
        if (!t) {
            cr_expect(0, "kernel %s (pid %u, correlation %u): no trace of pid %u; %s", g->name, g->pid,
                      g->correlation_id, g->pid, rh_describe(s));
            problems++;
            continue;
        }
        const struct kat_kernel_rec *k = rh_kernel(t, g->correlation_id, g->name);
        if (!k) {
            cr_expect(0, "kernel %s (pid %u, correlation %u, stream %u) is missing from %s (%zu kernel records)",
                      g->name, g->pid, g->correlation_id, g->stream_id, t->name, rh_count(t, KAT_REC_KERNEL));
            problems++;
            continue;
        }
        assigned[t - s->traces]++;
        if (k->stream_id != g->stream_id || k->context_id != g->context_id) {
            cr_expect(0, "kernel %s (correlation %u): stream %u context %u in the trace, %u %u launched",
                      g->name, g->correlation_id, k->stream_id, k->context_id, g->stream_id, g->context_id);
            problems++;
        }
        int windows = 0;
        uint64_t call = rh_vendor_window(t, g->correlation_id, &windows);
        if (strcmp(g->vendor, "-") != 0) {
            const struct kat_vendor_call_rec *v = call ? rh_vendor_call(t, call) : NULL;
            if (!call || windows != 1) {
                cr_expect(0, "kernel %s (correlation %u) launched inside %s has %d vendor window records",
                          g->name, g->correlation_id, g->vendor, windows);
                problems++;
            } else if (!v) {
                cr_expect(0, "kernel %s is in vendor window %llu but no VENDOR_CALL has that id", g->name,
                          (unsigned long long)call);
                problems++;
            } else if (strcmp(rh_str(t, v->api_string), g->vendor) != 0) {
                cr_expect(0, "kernel %s launched inside %s is tied to vendor call %llu '%s'", g->name, g->vendor,
                          (unsigned long long)call, rh_str(t, v->api_string));
                problems++;
            }
        } else if (windows) {
            const struct kat_vendor_call_rec *v = rh_vendor_call(t, call);
            cr_expect(0, "kernel %s (correlation %u) ran outside any vendor call but sits in vendor window %llu (%s)",
                      g->name, g->correlation_id, (unsigned long long)call, v ? rh_str(t, v->api_string) : "?");
            problems++;
        }
    }
    for (size_t i = 0; i < s->ntraces; i++) {
        const struct rh_trace *t = &s->traces[i];
        if (pid && t->header.pid != pid)
            continue;
        size_t have = rh_count(t, KAT_REC_KERNEL);
        if (have != assigned[i]) {
            cr_expect(0, "%s holds %zu kernel records, the stand-in launched %zu in that process image",
                      t->name, have, assigned[i]);
            problems++;
        }
    }
    free(assigned);
    return problems;
}

/* ---- one case ------------------------------------------------------------------------ */

void rh_case_init(struct rh_case *c, const char *tag)
{
    memset(c, 0, sizeof *c);
    c->dir = rh_tmpdir(tag);
    cr_assert_not_null(c->dir);
    c->session = rh_path(c->dir, "session");
    c->log = rh_path(c->dir, "truth.log");
}

void rh_case_run(struct rh_case *c, char *const argv[], char *const plain_argv[], const char *const extra[])
{
    cr_assert_eq(rh_run_kaudit(c->session, STANDIN_DIR, c->log, argv, extra, &c->run), 0);
    cr_assert(!c->run.timed_out, "kaudit run -- %s %s timed out\n%s", argv[0], argv[1] ? argv[1] : "", c->run.err);
    cr_assert_eq(rh_run_plain(STANDIN_DIR, NULL, plain_argv, NULL, &c->plain), 0);
    char err[512];
    cr_assert_eq(rh_session_load(c->session, &c->s, err, sizeof err), 0, "%s\nkaudit stderr:\n%s", err, c->run.err);
    cr_assert_eq(rh_truth_load(c->log, &c->gt), 0);
    for (size_t i = 0; i < c->s.ntraces; i++)
        cr_expect(rh_readable(&c->s.traces[i]), "%s: %s", c->s.traces[i].name, c->s.traces[i].error);
}

void rh_case_free(struct rh_case *c)
{
    rh_session_free(&c->s);
    rh_truth_free(&c->gt);
    rh_run_free(&c->run);
    rh_run_free(&c->plain);
    free(c->session);
    free(c->log);
    rh_cleanup(c->dir);
}
