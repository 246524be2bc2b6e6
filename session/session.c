/*
 * session.c - a recorded session directory; see session.h.
 */
#define _GNU_SOURCE
#include "session.h"
#include "safe_file.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "trace_format.h"
#include "toolbox.h"

#define SESSION_MAGIC_LINE "kaudit-session"
/* The info file is a few hundred bytes; refuse anything absurd rather than
 * read a hostile multi-gigabyte file into memory. */
#define INFO_MAX_BYTES (1u << 20)

struct info_entry {
    char *key;
    char *value;
};

struct trace_entry {
    char *path;
    char *name;
    uint32_t pid;
    uint64_t start_ns;
};

struct kat_session {
    char *dir;
    struct info_entry *info;
    size_t info_count;
    struct trace_entry *traces;
    size_t trace_count;
};

static void free_session(struct kat_session *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->info_count; i++) {
        free(s->info[i].key);
        free(s->info[i].value);
    }
    free(s->info);
    for (size_t i = 0; i < s->trace_count; i++) {
        free(s->traces[i].path);
        free(s->traces[i].name);
    }
    free(s->traces);
    free(s->dir);
    free(s);
}

void kat_session_close(struct kat_session *s) { free_session(s); }

/* ---- info ------------------------------------------------------------------ */

static char *trim(char *begin, char *end)
{
    while (begin < end && (*begin == ' ' || *begin == '\t'))
        begin++;
    while (end > begin && (end[-1] == ' ' || end[-1] == '\t' || end[-1] == '\r'))
        end--;
    *end = '\0';
    return begin;
}

static int set_info(struct kat_session *s, const char *key, const char *value)
{
    for (size_t i = 0; i < s->info_count; i++) {
        if (!strcmp(s->info[i].key, key)) {
            char *v = strdup(value);
            if (!v)
                return -1;
            free(s->info[i].value);
            s->info[i].value = v;
            return 0;
        }
    }
    struct info_entry *grown = realloc(s->info, (s->info_count + 1) * sizeof(*grown));
    if (!grown)
        return -1;
    s->info = grown;
    char *k = strdup(key), *v = strdup(value);
    if (!k || !v) {
        free(k);
        free(v);
        return -1;
    }
    s->info[s->info_count++] = (struct info_entry){ k, v };
    return 0;
}

static int read_info(struct kat_session *s, char *err, size_t n)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/%s", s->dir, KAT_SESSION_INFO_FILE);
    char detail[4096 + 128];
    int fd = kat_open_input(path, KAT_SAFE_NOFOLLOW, NULL, detail, sizeof detail);
    if (fd < 0 && errno == EINVAL) {
        snprintf(err, n, "cannot open session '%s': %s", s->dir, detail);
        return -1;
    }
    if (fd < 0) {
        if (errno == ENOENT)
            snprintf(err, n, "cannot open session '%s': no '%s' file (not a kaudit session directory?)",
                     s->dir, KAT_SESSION_INFO_FILE);
        else
            snprintf(err, n, "cannot open session '%s': cannot read '%s': %s", s->dir, path,
                     strerror(errno));
        return -1;
    }
    char *buf = malloc(INFO_MAX_BYTES + 1);
    if (!buf) {
        close(fd);
        snprintf(err, n, "cannot open session '%s': out of memory", s->dir);
        return -1;
    }
    size_t len = 0;
    for (;;) {
        ssize_t got = read(fd, buf + len, INFO_MAX_BYTES + 1 - len);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0) {
            snprintf(err, n, "cannot open session '%s': cannot read '%s': %s", s->dir, path,
                     strerror(errno));
            close(fd);
            free(buf);
            return -1;
        }
        if (got == 0)
            break;
        len += (size_t)got;
        if (len > INFO_MAX_BYTES) {
            snprintf(err, n, "cannot open session '%s': '%s' is larger than %u bytes", s->dir, path,
                     INFO_MAX_BYTES);
            close(fd);
            free(buf);
            return -1;
        }
    }
    close(fd);
    buf[len] = '\0';

    int rc = 0;
    unsigned line_no = 0;
    char *p = buf, *end = buf + len;
    while (p < end && rc == 0) {
        char *nl = memchr(p, '\n', (size_t)(end - p));
        char *line_end = nl ? nl : end;
        line_no++;
        if (memchr(p, '\0', (size_t)(line_end - p))) {
            snprintf(err, n, "cannot open session '%s': '%s' line %u holds a NUL byte", s->dir,
                     path, line_no);
            rc = -1;
            break;
        }
        char *line = trim(p, line_end);
        if (line_no == 1) {
            if (strcmp(line, SESSION_MAGIC_LINE) != 0) {
                snprintf(err, n, "cannot open session '%s': '%s' does not start with '%s'", s->dir,
                         path, SESSION_MAGIC_LINE);
                rc = -1;
            }
        } else if (line[0] != '\0' && line[0] != '#') {
            char *colon = strchr(line, ':');
            if (!colon) {
                snprintf(err, n, "cannot open session '%s': '%s' line %u is not 'key: value'",
                         s->dir, path, line_no);
                rc = -1;
                break;
            }
            char *key = trim(line, colon);
            char *value = trim(colon + 1, colon + 1 + strlen(colon + 1));
            if (key[0] == '\0') {
                snprintf(err, n, "cannot open session '%s': '%s' line %u has an empty key", s->dir,
                         path, line_no);
                rc = -1;
            } else if (set_info(s, key, value) != 0) {
                snprintf(err, n, "cannot open session '%s': out of memory", s->dir);
                rc = -1;
            }
        }
        p = nl ? nl + 1 : end;
    }
    if (rc == 0 && line_no == 0) {
        snprintf(err, n, "cannot open session '%s': '%s' is empty (expected '%s')", s->dir, path,
                 SESSION_MAGIC_LINE);
        rc = -1;
    }
    free(buf);
    return rc;
}

const char *kat_session_info(const struct kat_session *s, const char *key)
{
    for (size_t i = 0; i < s->info_count; i++)
        if (!strcmp(s->info[i].key, key))
            return s->info[i].value;
    return NULL;
}

size_t kat_session_info_count(const struct kat_session *s) { return s->info_count; }
const char *kat_session_info_key(const struct kat_session *s, size_t i)
{
    return i < s->info_count ? s->info[i].key : NULL;
}
const char *kat_session_info_value(const struct kat_session *s, size_t i)
{
    return i < s->info_count ? s->info[i].value : NULL;
}

/* ---- traces -------------------------------------------------------------------- */

/* `p<pid>-<realtime_ns>.kat`: the writer's naming, used when the header is
 * unreadable so that a corrupt trace still sorts near its neighbours. */
static int parse_trace_name(const char *name, uint32_t *pid, uint64_t *start)
{
    unsigned long long p, t;
    int used = 0;
    if (sscanf(name, "p%llu-%llu%n", &p, &t, &used) != 2 || strcmp(name + used, KAT_TRACE_SUFFIX))
        return -1;
    if (p > UINT32_MAX)
        return -1;
    *pid = (uint32_t)p;
    *start = t;
    return 0;
}

static void trace_sort_key(struct trace_entry *e)
{
    e->pid = 0;
    e->start_ns = UINT64_MAX;
    int fd = open(e->path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd >= 0) {
        struct kat_file_header h;
        ssize_t got = pread(fd, &h, sizeof(h), 0);
        close(fd);
        if (got == (ssize_t)sizeof(h) && !memcmp(h.magic, KAT_TRACE_MAGIC, sizeof(h.magic))) {
            e->pid = h.pid;
            e->start_ns = h.start_realtime_ns;
            return;
        }
    }
    uint32_t pid;
    uint64_t start;
    if (parse_trace_name(e->name, &pid, &start) == 0) {
        e->pid = pid;
        e->start_ns = start;
    }
}

static int compare_traces(const void *a, const void *b)
{
    const struct trace_entry *x = a, *y = b;
    if (x->start_ns != y->start_ns)
        return x->start_ns < y->start_ns ? -1 : 1;
    if (x->pid != y->pid)
        return x->pid < y->pid ? -1 : 1;
    return strcmp(x->name, y->name);
}

static int list_traces(struct kat_session *s, char *err, size_t n)
{
    DIR *d = opendir(s->dir);
    if (!d) {
        snprintf(err, n, "cannot open session '%s': %s", s->dir, strerror(errno));
        return -1;
    }
    size_t cap = 0;
    size_t suffix_len = strlen(KAT_TRACE_SUFFIX);
    struct dirent *de;
    int rc = 0;
    while ((de = readdir(d)) != NULL) {
        size_t len = strlen(de->d_name);
        if (len <= suffix_len || strcmp(de->d_name + len - suffix_len, KAT_TRACE_SUFFIX))
            continue;
        char *path = NULL;
        if (asprintf(&path, "%s/%s", s->dir, de->d_name) < 0) {
            rc = -1;
            break;
        }
        struct stat st;
        if (stat(path, &st) != 0 || !S_ISREG(st.st_mode)) {
            free(path);
            continue;
        }
        if (kat_grow(&s->traces, &cap, s->trace_count + 1, sizeof *s->traces) != 0) {
            free(path);
            rc = -1;
            break;
        }
        struct trace_entry *e = &s->traces[s->trace_count];
        e->path = path;
        e->name = strdup(de->d_name);
        if (!e->name) {
            free(path);
            rc = -1;
            break;
        }
        s->trace_count++;
        trace_sort_key(e);
    }
    closedir(d);
    if (rc != 0) {
        snprintf(err, n, "cannot open session '%s': out of memory", s->dir);
        return -1;
    }
    if (s->trace_count > 1)
        qsort(s->traces, s->trace_count, sizeof(s->traces[0]), compare_traces);
    return 0;
}

int kat_session_open(const char *dir, struct kat_session **out, char *err, size_t n)
{
    *out = NULL;
    struct stat st;
    if (stat(dir, &st) != 0) {
        snprintf(err, n, "cannot open session '%s': %s", dir, strerror(errno));
        return -1;
    }
    if (!S_ISDIR(st.st_mode)) {
        snprintf(err, n, "cannot open session '%s': not a directory", dir);
        return -1;
    }
    struct kat_session *s = calloc(1, sizeof(*s));
    if (!s || !(s->dir = strdup(dir))) {
        free(s);
        snprintf(err, n, "cannot open session '%s': out of memory", dir);
        return -1;
    }
    /* "dir/" and "dir" name the same session; keep messages and paths tidy. */
    size_t len = strlen(s->dir);
    while (len > 1 && s->dir[len - 1] == '/')
        s->dir[--len] = '\0';
    if (read_info(s, err, n) != 0 || list_traces(s, err, n) != 0) {
        free_session(s);
        return -1;
    }
    *out = s;
    return 0;
}

const char *kat_session_dir(const struct kat_session *s) { return s->dir; }
size_t kat_session_trace_count(const struct kat_session *s) { return s->trace_count; }
const char *kat_session_trace_path(const struct kat_session *s, size_t i)
{
    return i < s->trace_count ? s->traces[i].path : NULL;
}
const char *kat_session_trace_name(const struct kat_session *s, size_t i)
{
    return i < s->trace_count ? s->traces[i].name : NULL;
}
uint32_t kat_session_trace_pid(const struct kat_session *s, size_t i)
{
    return i < s->trace_count ? s->traces[i].pid : 0;
}
uint64_t kat_session_trace_start_ns(const struct kat_session *s, size_t i)
{
    return i < s->trace_count ? s->traces[i].start_ns : UINT64_MAX;
}
