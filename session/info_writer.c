/*
 * session_info.c - the `info` file of a session, and the closing summary
 * that `kaudit run` derives from the traces it recorded.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "info_writer.h"
#include "safe_file.h"
#include "trace_format.h"
#include "session.h"
#include "trace_reader.h"
#include "toolbox.h"

static void format_time(char *out, size_t size, struct timespec *ts)
{
    struct tm tm;
    gmtime_r(&ts->tv_sec, &tm);
    char base[32];
    strftime(base, sizeof(base), "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(out, size, "%s.%09ldZ", base, ts->tv_nsec);
}

void kat_session_info_set(struct kat_session_info *info, const char *key, const char *fmt, ...)
{
    char *value = NULL;
    va_list ap;
    va_start(ap, fmt);
    if (vasprintf(&value, fmt, ap) < 0)
        value = NULL;
    va_end(ap);
    if (!value)
        return;
    /* Values are one line each. */
    for (char *p = value; *p; p++)
        if (*p == '\n' || *p == '\r')
            *p = ' ';
    for (int i = 0; i < info->count; i++) {
        if (strcmp(info->keys[i], key) == 0) {
            free(info->values[i]);
            info->values[i] = value;
            return;
        }
    }
    if (info->count >= KAT_INFO_MAX_KEYS) {
        free(value);
        return;
    }
    info->keys[info->count] = strdup(key);
    info->values[info->count] = value;
    info->count++;
}

/* The command line as a shell would need it to run it again. */
static char *quoted_command(char **command)
{
    size_t size = 1;
    for (char **a = command; *a; a++)
        size += strlen(*a) * 4 + 3;
    char *out = malloc(size), *p = out;
    if (!out)
        return NULL;
    for (char **a = command; *a; a++) {
        if (a != command)
            *p++ = ' ';
        int plain = **a != '\0' && strspn(*a, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                                               "0123456789-_./=:,+@%") == strlen(*a);
        if (plain) {
            p = stpcpy(p, *a);
            continue;
        }
        *p++ = '\'';
        for (const char *c = *a; *c; c++) {
            if (*c == '\'')
                p = stpcpy(p, "'\\''");
            else if (*c == '\n')
                p = stpcpy(p, "'$'\\n''");
            else
                *p++ = *c;
        }
        *p++ = '\'';
    }
    *p = '\0';
    return out;
}

void kat_session_info_init(struct kat_session_info *info, const char *dir, char **command,
                           const char *preload, const char *cupti)
{
    memset(info, 0, sizeof(*info));
    snprintf(info->dir, sizeof(info->dir), "%s", dir);
    kat_session_info_set(info, "format_version", "%u", KAT_FORMAT_VERSION);
    kat_session_info_set(info, "tool_version", "%s", KAUDIT_VERSION);
    char *quoted = quoted_command(command);
    kat_session_info_set(info, "command", "%s", quoted ? quoted : command[0]);
    free(quoted);
    char cwd[PATH_MAX];
    kat_session_info_set(info, "cwd", "%s", getcwd(cwd, sizeof(cwd)) ? cwd : "?");
    struct utsname u;
    if (uname(&u) == 0)
        kat_session_info_set(info, "host", "%s %s %s", u.nodename, u.sysname, u.release);
    kat_session_info_set(info, "preload", "%s", preload);
    kat_session_info_set(info, "cupti_lib", "%s", cupti ? cupti : "(the program's own)");
    kat_session_info_set(info, "status", "preparing");
}

char *kat_session_info_render(const struct kat_session_info *info)
{
    char *text = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&text, &len);
    if (!m)
        return NULL;
    fprintf(m, "kaudit-session\n");
    for (int i = 0; i < info->count; i++)
        fprintf(m, "%s: %s\n", info->keys[i], info->values[i]);
    if (fclose(m) != 0) {
        free(text);
        return NULL;
    }
    return text;
}

int kat_session_info_write(const struct kat_session_info *info)
{
    char path[PATH_MAX + 32], tmp[PATH_MAX + 32];
    snprintf(path, sizeof(path), "%s/%s", info->dir, KAT_SESSION_INFO_FILE);
    snprintf(tmp, sizeof(tmp), "%s/.%s.tmp", info->dir, KAT_SESSION_INFO_FILE);
    /* The directory may hold a planted .info.tmp (a symlink to a file of the
     * user's, a FIFO): it is removed and a new file created (O_EXCL,
     * O_NOFOLLOW), never followed; said in kaudit.log. */
    struct stat st;
    if (lstat(tmp, &st) == 0 && !S_ISREG(st.st_mode))
        kat_session_log(info->dir, "warning", "'%s' was %s; removed, not followed", tmp,
                        kat_file_kind(st.st_mode));
    char err[PATH_MAX + 128];
    FILE *f = kat_fopen_output(tmp, O_EXCL, err, sizeof err);
    if (!f) {
        /* .info.tmp cannot be replaced (a planted directory, a race): a
         * temporary file of a new name instead (mkostemp: O_EXCL, never
         * through a symlink). */
        snprintf(tmp, sizeof(tmp), "%s/.%s.XXXXXX", info->dir, KAT_SESSION_INFO_FILE);
        int fd = mkostemp(tmp, O_CLOEXEC);
        if (fd >= 0 && fchmod(fd, 0644) == 0 && (f = fdopen(fd, "w")) != NULL) {
            kat_session_log(info->dir, "warning", "%s; wrote '%s' instead", err, tmp);
        } else {
            int e = errno;
            if (fd >= 0) {
                close(fd);
                unlink(tmp);
            }
            kat_session_log(info->dir, "error", "%s", err);
            errno = e;
            return -1;
        }
    }
    char *text = kat_session_info_render(info);
    if (!text || fputs(text, f) == EOF) {
        free(text);
        fclose(f);
        unlink(tmp);
        return -1;
    }
    free(text);
    int bad = ferror(f);
    if (fclose(f) != 0 || bad) {
        unlink(tmp);
        return -1;
    }
    return rename(tmp, path);
}

static void set_now(struct kat_session_info *info, const char *key)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    char text[64];
    format_time(text, sizeof(text), &ts);
    kat_session_info_set(info, key, "%s", text);
    char ns_key[64];
    snprintf(ns_key, sizeof(ns_key), "%s_ns", key);
    kat_session_info_set(info, ns_key, "%llu",
                         (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec);
}

void kat_session_info_started(struct kat_session_info *info)
{
    set_now(info, "started");
    kat_session_info_set(info, "status", "running");
    kat_session_info_write(info);
}

void kat_session_info_not_started(struct kat_session_info *info, const char *why)
{
    set_now(info, "ended");
    kat_session_info_set(info, "status", "not started: %s", why);
    kat_session_info_write(info);
}

void kat_session_info_finished(struct kat_session_info *info, int wait_status)
{
    set_now(info, "ended");
    if (WIFSIGNALED(wait_status))
        kat_session_info_set(info, "status", "signal %d", WTERMSIG(wait_status));
    else
        kat_session_info_set(info, "status", "exited %d", WEXITSTATUS(wait_status));
    kat_session_info_write(info);
}

static int is_trace_name(const char *name)
{
    size_t n = strlen(name), s = strlen(KAT_TRACE_SUFFIX);
    return n > s && strcmp(name + n - s, KAT_TRACE_SUFFIX) == 0;
}

int kat_session_clear(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return -1;
    struct dirent *e;
    int rc = 0;
    while ((e = readdir(d))) {
        if (is_trace_name(e->d_name) || strcmp(e->d_name, KAT_SESSION_INFO_FILE) == 0
            || strcmp(e->d_name, "kaudit.log") == 0) {
            char path[PATH_MAX + 256];
            snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
            if (unlink(path) != 0)
                rc = -1;
        }
    }
    closedir(d);
    return rc;
}

struct summary {
    unsigned processes, truncated, unreadable;
    unsigned long long kernels, api_calls, vendor_calls, modules, health_problems;
    char gpu[256];
    int driver_version, runtime_version;
    unsigned cupti_version;
};

static const char *health_problem(uint32_t code)
{
    switch (code) {
    case KAT_HEALTH_CUPTI_NOT_FOUND: return "CUPTI not found";
    case KAT_HEALTH_CUPTI_ENABLE_FAILED: return "a CUPTI activity kind could not be enabled";
    case KAT_HEALTH_CUPTI_DROPPED: return "CUPTI dropped records";
    case KAT_HEALTH_BUFFER_LOST: return "activity buffers lost";
    case KAT_HEALTH_SYMBOL_UNRESOLVED: return "a real symbol could not be resolved";
    case KAT_HEALTH_FOREIGN_SUBSCRIBER: return "the program subscribed to CUPTI itself";
    case KAT_HEALTH_CUPTI_UNSUPPORTED: return "unsupported CUPTI version";
    case KAT_HEALTH_WRITER_FULL: return "trace records lost";
    case KAT_HEALTH_CALLBACK_OVERRIDDEN: return "the program took over CUPTI's buffers";
    case KAT_HEALTH_DIGEST_UNAVAILABLE: return "digests unavailable";
    default: return NULL;
    }
}

static void summarize_trace(const char *path, struct summary *s, FILE *log)
{
    char err[512];
    struct kat_trace *t = kat_trace_open(path, err, sizeof(err));
    if (!t) {
        s->unreadable++;
        fprintf(log, "kaudit: error: %s\n", err);
        return;
    }
    s->processes++;
    struct kat_record rec;
    int rc;
    while ((rc = kat_trace_next(t, &rec, err, sizeof(err))) == 1) {
        switch (rec.type) {
        case KAT_REC_KERNEL: s->kernels++; break;
        case KAT_REC_API: s->api_calls++; break;
        case KAT_REC_VENDOR_CALL: s->vendor_calls++; break;
        case KAT_REC_MODULE: s->modules++; break;
        case KAT_REC_DEVICE: {
            const struct kat_device_rec *d = rec.body;
            if (!s->gpu[0])
                snprintf(s->gpu, sizeof(s->gpu), "%s (sm_%u%u)", kat_trace_string(t, d->name_string),
                         d->cc_major, d->cc_minor);
            break;
        }
        case KAT_REC_VERSIONS: {
            const struct kat_versions_rec *v = rec.body;
            if (v->driver_version)
                s->driver_version = v->driver_version;
            if (v->runtime_version)
                s->runtime_version = v->runtime_version;
            if (v->cupti_version)
                s->cupti_version = v->cupti_version;
            break;
        }
        case KAT_REC_HEALTH: {
            const struct kat_health_rec *h = rec.body;
            const char *problem = health_problem(h->code);
            if (problem) {
                s->health_problems++;
                fprintf(log, "kaudit: warning: %s: %s (%s, value %lld)\n", path, problem,
                        kat_trace_string(t, h->detail_string), (long long)h->value);
            }
            break;
        }
        default:
            break;
        }
    }
    if (rc < 0) {
        s->unreadable++;
        fprintf(log, "kaudit: error: %s\n", err);
    }
    if (!kat_trace_complete(t)) {
        s->truncated++;
        fprintf(log, "kaudit: note: %s has no end record (the process was killed or crashed)\n", path);
    }
    kat_trace_close(t);
}

int kat_session_info_summarize(struct kat_session_info *info, FILE *out)
{
    /* what goes into kaudit.log, gathered and appended in one piece by the
     * one writer of the log (kat_session_log_text) */
    char *log_text = NULL;
    size_t log_len = 0;
    FILE *log = open_memstream(&log_text, &log_len);
    if (!log)
        log = fopen("/dev/null", "w");
    struct summary s = { 0 };
    /* The session reader lists the traces (its info file is written by now). */
    struct kat_session *session = NULL;
    char err[512];
    if (kat_session_open(info->dir, &session, err, sizeof(err)) != 0) {
        s.unreadable++;
        fprintf(log, "kaudit: error: %s\n", err);
    } else {
        for (size_t i = 0; i < kat_session_trace_count(session); i++)
            summarize_trace(kat_session_trace_path(session, i), &s, log);
        kat_session_close(session);
    }

    kat_session_info_set(info, "processes", "%u", s.processes);
    kat_session_info_set(info, "truncated_traces", "%u", s.truncated);
    kat_session_info_set(info, "kernels", "%llu", s.kernels);
    kat_session_info_set(info, "vendor_calls", "%llu", s.vendor_calls);
    kat_session_info_set(info, "gpu", "%s", s.gpu[0] ? s.gpu : "(none seen)");
    kat_session_info_set(info, "driver_version", "%d", s.driver_version);
    kat_session_info_set(info, "cuda_version", "%d", s.runtime_version);
    kat_session_info_set(info, "cupti_version", "%u", s.cupti_version);
    kat_session_info_set(info, "health_problems", "%llu", s.health_problems);
    kat_session_info_write(info);

    char line[PATH_MAX + 512];
    snprintf(line, sizeof(line),
             "kaudit: session '%s': %u processes (%u truncated), %llu kernels, %llu vendor calls, "
             "%llu modules, %llu health problems\n",
             info->dir, s.processes, s.truncated, s.kernels, s.vendor_calls, s.modules,
             s.health_problems);
    fputs(line, log);
    fclose(log);
    char log_err[PATH_MAX + 128];
    /* A planted kaudit.log (a symlink, a FIFO) is never followed: said here */
    if (log_text && kat_session_log_text(info->dir, log_text, log_err, sizeof log_err) != 0)
        kat_say("warning", "%s", log_err);
    free(log_text);
    if (out)
        fputs(line, out);
    return s.unreadable ? -1 : 0;
}
