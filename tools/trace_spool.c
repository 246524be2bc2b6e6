/* trace_spool.c - copying complete records from the spool into the session (trace_spool.h). */
#define _GNU_SOURCE
#include <dirent.h>
#include <stddef.h>
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "safe_file.h"
#include "trace_format.h"
#include "trace_spool.h"

/* More traces than any harness makes; a candidate creating files without end
 * must not make the supervisor's memory grow without end. */
#define SPOOL_MAX_TRACES 4096

struct spool_file {
    char name[96];
    int in, out;                 /* the spool file; its copy in the session */
    uint64_t offset;             /* bytes copied so far (whole records) */
    int damaged;                 /* stopped at bytes that are no record: copied raw once */
};

int trace_spool_open(struct trace_spool *s, const char *session, char *err, size_t n)
{
    memset(s, 0, sizeof *s);
    snprintf(s->session, sizeof s->session, "%s", session);
    const char *tmp = getenv("TMPDIR");
    if (!tmp || tmp[0] != '/')
        tmp = "/tmp";
    if (getrandom(s->token, sizeof s->token, 0) != (ssize_t)sizeof s->token) {
        snprintf(err, n, "cannot draw the session's token: %s", strerror(errno));
        return -1;
    }
    for (int i = 0; i < 16; i++)
        snprintf(s->token_hex + 2 * i, 3, "%02x", s->token[i]);
    /* TMPDIR, and /tmp when TMPDIR cannot be written */
    const char *bases[] = { tmp, "/tmp" };
    for (int i = 0; i < 2; i++) {
        if (i == 1 && strcmp(tmp, "/tmp") == 0)
            break;
        snprintf(s->dir, sizeof s->dir, "%s/kaudit-spool-XXXXXX", bases[i]);
        if (mkdtemp(s->dir))
            return 0;
    }
    snprintf(err, n, "cannot create a spool directory beneath '%s' or /tmp: %s", tmp, strerror(errno));
    s->dir[0] = '\0';
    return -1;
}

/* p<pid>-<stamp>.kat, as the preload's writer names a trace */
static int trace_name(const char *name)
{
    if (name[0] != 'p' || strlen(name) >= sizeof(((struct spool_file *)0)->name))
        return 0;
    const char *p = name + 1;
    size_t digits = strspn(p, "0123456789");
    if (!digits || p[digits] != '-')
        return 0;
    p += digits + 1;
    digits = strspn(p, "0123456789");
    return digits && strcmp(p + digits, KAT_TRACE_SUFFIX) == 0;
}

static struct spool_file *file_for(struct trace_spool *s, const char *name)
{
    for (size_t i = 0; i < s->n_files; i++)
        if (!strcmp(s->files[i].name, name))
            return &s->files[i];
    if (s->n_files == SPOOL_MAX_TRACES) {
        if (!s->too_many)
            kat_session_log(s->session, "warning", "more than %d traces in the spool: the rest is not copied",
                            SPOOL_MAX_TRACES);
        s->too_many = 1;
        return NULL;
    }
    char path[PATH_MAX + 128], err[PATH_MAX + 256];
    snprintf(path, sizeof path, "%s/%s", s->dir, name);
    int in = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    struct stat st;
    if (in < 0 || fstat(in, &st) != 0 || !S_ISREG(st.st_mode)) {
        if (in >= 0)
            close(in);
        return NULL;
    }
    snprintf(path, sizeof path, "%s/%s", s->session, name);
    int out = kat_open_output(path, O_EXCL, err, sizeof err);
    if (out < 0) {
        kat_session_log(s->session, "warning", "%s", err);
        close(in);
        return NULL;
    }
    if (s->n_files == s->cap_files) {
        size_t cap = s->cap_files ? 2 * s->cap_files : 16;
        struct spool_file *f = realloc(s->files, cap * sizeof *f);
        if (!f) {
            close(in);
            close(out);
            return NULL;
        }
        s->files = f;
        s->cap_files = cap;
    }
    struct spool_file *f = &s->files[s->n_files++];
    memset(f, 0, sizeof *f);
    snprintf(f->name, sizeof f->name, "%s", name);
    f->in = in;
    f->out = out;
    return f;
}

/*
 * The spool file is read through a read-only mapping of its own, and each
 * record's header word with an atomic acquire load: the writer stores the
 * body first and the header word last (release), so a header seen means a
 * whole record.  A bulk read (pread) is no good here: its string copy may
 * load a header's bytes out of order and tear it, and lose the walk.  A
 * file cut short while mapped (the candidate truncates its spool file)
 * raises SIGBUS on the next load: caught, and the file is left as it is.
 */
static sigjmp_buf *bus_jump;

static void on_bus(int sig, siginfo_t *si, void *ctx)
{
    (void)si;
    (void)ctx;
    if (bus_jump)
        siglongjmp(*bus_jump, 1);
    signal(sig, SIG_DFL);
    raise(sig);
}

/* The length of the complete records in map[from, len).  *bad: stopped at
 * bytes that are no record. */
static size_t committed_prefix(const unsigned char *map, size_t from, size_t len, int *bad)
{
    size_t at = from;
    *bad = 0;
    if (from == 0) {
        /* the file header is stored before the first record's word */
        if (len < sizeof(struct kat_file_header) + 8 ||
            __atomic_load_n((const uint64_t *)(map + sizeof(struct kat_file_header)), __ATOMIC_ACQUIRE) == 0)
            return 0;
        if (memcmp(map, KAT_TRACE_MAGIC, 8) != 0) {
            *bad = 1;
            return 0;
        }
        at = sizeof(struct kat_file_header);
    }
    while (at + 8 <= len) {
        uint64_t word = __atomic_load_n((const uint64_t *)(map + at), __ATOMIC_ACQUIRE);
        if (word == 0)
            break; /* not committed yet */
        struct kat_record_header h;
        memcpy(&h, &word, sizeof h);
        if (h.size < 8 || h.size % 8) {
            *bad = 1;
            break;
        }
        if (h.size > len - at)
            break; /* beyond the file as it was mapped: the next pass */
        at += h.size;
    }
    return at - from;
}

static void drain_file(struct trace_spool *s, struct spool_file *f, int final)
{
    if (f->damaged)
        return;
    struct stat st;
    if (fstat(f->in, &st) != 0)
        return;
    size_t len = (size_t)st.st_size & ~(size_t)7; /* records are 8-byte aligned */
    if (len <= f->offset)
        return;
    unsigned char *map = mmap(NULL, len, PROT_READ, MAP_SHARED, f->in, 0);
    if (map == MAP_FAILED)
        return;
    sigjmp_buf jump;
    if (sigsetjmp(jump, 1) != 0) {
        bus_jump = NULL; /* the file was cut while mapped */
        munmap(map, len);
        return;
    }
    bus_jump = &jump;
    int bad;
    size_t whole = committed_prefix(map, (size_t)f->offset, len, &bad);
    const unsigned char *from = map + f->offset;
    if (f->offset == 0 && whole &&
        memcmp(map + offsetof(struct kat_file_header, session_token), s->token, sizeof s->token) != 0) {
        /* another run's trace (copied into the spool): not this session's evidence */
        s->foreign_traces++;
        kat_session_log(s->session, "warning",
                        "the trace %s in the spool does not carry this session's token (copied in from "
                        "another run?): not copied",
                        f->name);
        char path[PATH_MAX + 128];
        snprintf(path, sizeof path, "%s/%s", s->session, f->name);
        unlink(path);
        f->damaged = 1;
    } else if (whole && kat_write_all(f->out, from, whole) != 0) {
        kat_session_log(s->session, "error", "cannot copy the trace %s into the session: %s", f->name,
                        strerror(errno));
        f->damaged = 1;
    } else {
        f->offset += whole;
        if (bad && final) {
            /* damage, not an unfinished record: copied as it is (without the
             * zeros of the unused space after it), for the reader to report */
            size_t rest = len - (size_t)f->offset;
            while (rest && map[f->offset + rest - 1] == 0)
                rest--;
            if (rest && kat_write_all(f->out, map + f->offset, rest) == 0)
                kat_session_log(s->session, "warning", "the trace %s holds %zu bytes that are no record", f->name,
                                rest);
            f->damaged = 1;
        }
    }
    bus_jump = NULL;
    munmap(map, len);
}

void trace_spool_drain(struct trace_spool *s, int final)
{
    if (!s->dir[0])
        return;
    DIR *d = opendir(s->dir);
    if (!d)
        return;
    static int bus_handler;
    if (!bus_handler) {
        struct sigaction sa = { .sa_sigaction = on_bus, .sa_flags = SA_SIGINFO };
        sigemptyset(&sa.sa_mask);
        sigaction(SIGBUS, &sa, NULL);
        bus_handler = 1;
    }
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        if (!trace_name(e->d_name)) {
            if (final)
                kat_session_log(s->session, "warning", "'%s' in the spool is no trace: not copied", e->d_name);
            continue;
        }
        struct spool_file *f = file_for(s, e->d_name);
        if (f)
            drain_file(s, f, final);
    }
    closedir(d);
}

int trace_spool_has_pid(const struct trace_spool *s, long pid)
{
    for (size_t i = 0; i < s->n_files; i++)
        if (strtol(s->files[i].name + 1, NULL, 10) == pid)
            return 1;
    return 0;
}

void trace_spool_close(struct trace_spool *s)
{
    for (size_t i = 0; i < s->n_files; i++) {
        close(s->files[i].in);
        close(s->files[i].out);
    }
    free(s->files);
    s->files = NULL;
    s->n_files = s->cap_files = 0;
    if (s->dir[0])
        kat_remove_tree(s->dir);
    s->dir[0] = '\0';
}
