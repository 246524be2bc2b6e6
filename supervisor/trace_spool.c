/* trace_spool.c - traces handed over by the recorded processes, copied into the session (trace_spool.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "run_census.h"
#include "safe_file.h"
#include "trace_format.h"
#include "trace_handover.h"
#include "trace_spool.h"
#include "toolbox.h"

/* More traces than any harness makes; a candidate registering without end
 * must not make the supervisor's memory grow without end. */
#define SPOOL_MAX_TRACES 4096
struct spool_file {
    char name[96];
    pid_t pid;                   /* the process that handed it over (SO_PEERCRED) */
    unsigned long long start;    /* its start time (/proc/PID/stat), 0 when it had ended: tells a reused pid apart */
    int in, out;                 /* the memory file; its copy in the session */
    uint64_t offset;             /* bytes copied so far (whole records) */
    uint64_t released;           /* bytes given back to the kernel (copied, page-aligned) */
    int damaged;                 /* stopped at bytes that are no record: copied raw once */
    uint32_t origin;             /* its header's, once checked (enum kat_process_origin; 0: not yet) */
    uint64_t opened_ns;          /* its header's start_monotonic_ns: when the trace was opened */
};

int trace_spool_open(struct trace_spool *s, const char *session, char *err, size_t n)
{
    memset(s, 0, sizeof *s);
    s->listen_fd = -1;
    snprintf(s->session, sizeof s->session, "%s", session);
    const char *tmp = getenv("TMPDIR");
    if (!tmp || tmp[0] != '/')
        tmp = "/tmp";
    if (getrandom(s->token, sizeof s->token, 0) != (ssize_t)sizeof s->token) {
        snprintf(err, n, "cannot draw the session's token: %s", strerror(errno));
        return -1;
    }
    kat_hex(s->token, sizeof s->token, s->token_hex);
    /* TMPDIR, and /tmp when TMPDIR cannot be written or is too deep for a
     * socket's name (108 bytes) */
    struct sockaddr_un addr = { .sun_family = AF_UNIX };
    const char *bases[] = { tmp, "/tmp" };
    for (int i = 0; i < 2 && !s->dir[0]; i++) {
        if (i == 1 && strcmp(tmp, "/tmp") == 0)
            break;
        if (strlen(bases[i]) + sizeof "/kaudit-spool-XXXXXX/supervisor" > sizeof addr.sun_path)
            continue;
        snprintf(s->dir, sizeof s->dir, "%s/kaudit-spool-XXXXXX", bases[i]);
        if (!mkdtemp(s->dir))
            s->dir[0] = '\0';
    }
    if (!s->dir[0]) {
        snprintf(err, n, "cannot create a spool directory beneath '%s' or /tmp: %s", tmp, strerror(errno));
        return -1;
    }
    /* fits: the base was measured above */
    size_t dir_len = strlen(s->dir);
    memcpy(s->socket_path, s->dir, dir_len);
    memcpy(s->socket_path + dir_len, "/supervisor", sizeof "/supervisor");
    memcpy(addr.sun_path, s->socket_path, strlen(s->socket_path) + 1);
    s->listen_fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (s->listen_fd < 0 || bind(s->listen_fd, (struct sockaddr *)&addr, sizeof addr) != 0 ||
        listen(s->listen_fd, SOMAXCONN) != 0) {
        snprintf(err, n, "cannot listen on '%s': %s", s->socket_path, strerror(errno));
        trace_spool_close(s);
        return -1;
    }
    for (size_t i = 0; i < SPOOL_MAX_PENDING_SLOTS; i++)
        s->pending[i] = -1;
    return 0;
}

/* p<pid>-<stamp>.kat, as the preload's writer names a trace; its pid */
static long trace_name_pid(const char *name)
{
    if (name[0] != 'p' || strlen(name) >= sizeof(((struct spool_file *)0)->name))
        return -1;
    const char *p = name + 1;
    size_t digits = strspn(p, "0123456789");
    if (!digits || digits > 9 || p[digits] != '-')
        return -1;
    long pid = strtol(p, NULL, 10);
    p += digits + 1;
    digits = strspn(p, "0123456789");
    return digits && strcmp(p + digits, KAT_TRACE_SUFFIX) == 0 ? pid : -1;
}

static struct spool_file *file_named(struct trace_spool *s, const char *name)
{
    for (size_t i = 0; i < s->n_files; i++)
        if (!strcmp(s->files[i].name, name))
            return &s->files[i];
    return NULL;
}

static void tell(const struct trace_spool *s, enum spool_event what, const char *name, const void *bytes, size_t n)
{
    if (s->observer)
        s->observer(s->observer_arg, what, name, bytes, n);
}

/* A registration refused: counted (info rejected_traces), and said in
 * kaudit.log for the first few only (a flood of them must not fill it). */
#define SPOOL_REJECTIONS_LOGGED 20

static void reject(struct trace_spool *s, pid_t pid, const char *name, const char *why)
{
    if (s->rejected_traces++ < SPOOL_REJECTIONS_LOGGED)
        kat_session_log(s->session, "warning", "process %ld handed over a trace '%s' that is refused: %s%s", (long)pid,
                        name, why,
                        s->rejected_traces == SPOOL_REJECTIONS_LOGGED ? " (further refusals are only counted)" : "");
}

static int grow_files(struct trace_spool *s)
{
    size_t cap = s->cap_files ? 2 * s->cap_files : 16;
    struct spool_file *files = realloc(s->files, cap * sizeof *files);
    if (!files)
        return -1; /* the traces taken so far stay */
    s->files = files;
    s->cap_files = cap;
    return 0;
}

static void register_trace(struct trace_spool *s, pid_t pid, const char *name, int fd)
{
    long named = trace_name_pid(name);
    struct stat st;
    if (named < 0) {
        reject(s, pid, name, "not a trace's name");
    } else if (named != pid) {
        reject(s, pid, name, "it is named for another process");
    } else if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || fcntl(fd, F_GET_SEALS) < 0) {
        reject(s, pid, name, "not a memory file");
    } else if (fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK) != 0) {
        /* our preload never seals its trace; a candidate that did wants it cut */
        reject(s, pid, name, "it cannot be sealed against shrinking");
    } else if (file_named(s, name)) {
        reject(s, pid, name, "a trace of that name was handed over already");
    } else if (s->n_files == SPOOL_MAX_TRACES) {
        if (!s->too_many)
            kat_session_log(s->session, "warning", "more than %d traces handed over: the rest is not copied",
                            SPOOL_MAX_TRACES);
        s->too_many = 1;
    } else {
        char path[PATH_MAX + 128], err[PATH_MAX + 256];
        snprintf(path, sizeof path, "%s/%s", s->session, name);
        int out = kat_open_output(path, O_EXCL, err, sizeof err);
        if (out < 0) {
            kat_session_log(s->session, "warning", "%s", err);
        } else if (s->n_files == s->cap_files && grow_files(s) != 0) {
            close(out);
            reject(s, pid, name, "out of memory");
        } else {
            struct spool_file *f = &s->files[s->n_files++];
            memset(f, 0, sizeof *f);
            snprintf(f->name, sizeof f->name, "%s", name);
            f->pid = pid;
            struct proc_stat ps;
            f->start = proc_stat_read(pid, &ps) == 0 ? ps.start : 0;
            f->in = fd;
            f->out = out;
            tell(s, SPOOL_APPENDED, name, NULL, 0);
            return;
        }
    }
    close(fd);
}

/* The asker's own trace again, for a program that closed the preload's descriptor. */
static void hand_back(struct trace_spool *s, int conn, pid_t pid, const char *name)
{
    struct spool_file *f = file_named(s, name);
    if (!f || f->pid != pid)
        return; /* the connection closes unanswered: the preload counts its records lost */
    char byte = 0;
    if (kat_handover_send(conn, &byte, 1, f->in, MSG_DONTWAIT) != 1)
        kat_session_log(s->session, "warning", "cannot hand the trace %s back to process %ld: %s", name, (long)pid,
                        strerror(errno));
}

/* One message on an accepted connection: 1 when the connection is done. */
static int serve_connection(struct trace_spool *s, int conn)
{
    struct kat_handover_msg msg;
    struct iovec iov = { .iov_base = &msg, .iov_len = sizeof msg };
    union {
        char buf[CMSG_SPACE(4 * sizeof(int))];
        struct cmsghdr align;
    } control;
    struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = control.buf,
                         .msg_controllen = sizeof control.buf };
    ssize_t n = recvmsg(conn, &mh, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
    if (n < 0 && (errno == EAGAIN || errno == EINTR))
        return 0;
    /* every descriptor that came along is ours to close, whatever the message */
    int fds[4], n_fds = 0;
    for (struct cmsghdr *c = n > 0 ? CMSG_FIRSTHDR(&mh) : NULL; c; c = CMSG_NXTHDR(&mh, c))
        if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS)
            for (size_t i = 0; i < (c->cmsg_len - CMSG_LEN(0)) / sizeof(int) && n_fds < 4; i++)
                memcpy(&fds[n_fds++], CMSG_DATA(c) + i * sizeof(int), sizeof(int));
    struct ucred peer;
    socklen_t len = sizeof peer;
    if (n == (ssize_t)sizeof msg && getsockopt(conn, SOL_SOCKET, SO_PEERCRED, &peer, &len) == 0) {
        msg.name[sizeof msg.name - 1] = '\0';
        if (msg.kind == KAT_HANDOVER_REGISTER && n_fds == 1 && !(mh.msg_flags & MSG_CTRUNC)) {
            register_trace(s, peer.pid, msg.name, fds[0]);
            n_fds = 0;
        } else if (msg.kind == KAT_HANDOVER_AGAIN && n_fds == 0) {
            hand_back(s, conn, peer.pid, msg.name);
        } else {
            reject(s, peer.pid, msg.name, "not a message of the handover");
        }
    }
    for (int i = 0; i < n_fds; i++)
        close(fds[i]);
    return 1;
}

/* Connections taken per pass: a process that connects without end (a flood)
 * must not keep the supervisor from its copying, census and wait. */
#define SPOOL_ACCEPTS_PER_PASS 64

static void accept_pending(struct trace_spool *s)
{
    for (int taken = 0; taken < SPOOL_ACCEPTS_PER_PASS; taken++) {
        int conn = accept4(s->listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (conn < 0)
            return;
        if (serve_connection(s, conn)) {
            close(conn);
            continue;
        }
        /* connected, message not there yet: kept, the oldest dropped when full */
        size_t slot = s->next_pending++ % SPOOL_MAX_PENDING_SLOTS;
        if (s->pending[slot] >= 0)
            close(s->pending[slot]);
        s->pending[slot] = conn;
    }
}

void trace_spool_serve(struct trace_spool *s, int wait_ms)
{
    if (s->listen_fd < 0)
        return;
    struct timespec start;
    clock_gettime(CLOCK_MONOTONIC, &start);
    for (;;) {
        struct pollfd p[1 + SPOOL_MAX_PENDING_SLOTS];
        size_t slot_of[1 + SPOOL_MAX_PENDING_SLOTS], n = 0;
        p[n++] = (struct pollfd){ .fd = s->listen_fd, .events = POLLIN };
        for (size_t i = 0; i < SPOOL_MAX_PENDING_SLOTS; i++)
            if (s->pending[i] >= 0) {
                slot_of[n] = i;
                p[n++] = (struct pollfd){ .fd = s->pending[i], .events = POLLIN };
            }
        struct timespec now;
        clock_gettime(CLOCK_MONOTONIC, &now);
        long spent = (now.tv_sec - start.tv_sec) * 1000 + (now.tv_nsec - start.tv_nsec) / 1000000;
        int left = wait_ms > spent ? (int)(wait_ms - spent) : 0;
        int ready = poll(p, n, left);
        if (ready < 0 && errno != EINTR)
            return;
        if (ready > 0) {
            for (size_t i = 1; i < n; i++)
                if (p[i].revents && serve_connection(s, p[i].fd)) {
                    close(p[i].fd);
                    s->pending[slot_of[i]] = -1;
                }
            if (p[0].revents)
                accept_pending(s);
        }
        /* the deadline holds whatever arrives: the caller's loop (copying,
         * census, wait) runs on its clock, not on the candidate's traffic */
        if (left == 0)
            return;
    }
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

/* n bytes of the memory file appended to the session's copy, through a
 * buffer of our own: what is written and what the seal's account hashes are
 * the same bytes, whatever the writer does to its mapping meanwhile.  0, or
 * -1 with errno (the account is told). */
static int copy_out(struct trace_spool *s, struct spool_file *f, const unsigned char *src, size_t n,
                    const struct kat_file_header *checked)
{
    static unsigned char buf[1u << 20];
    while (n) {
        size_t chunk = n < sizeof buf ? n : sizeof buf;
        memcpy(buf, src, chunk);
        /* the file header as it was checked, not as the mapping holds it now */
        if (checked && chunk >= sizeof *checked) {
            memcpy(buf, checked, sizeof *checked);
            checked = NULL;
        }
        if (kat_write_all(f->out, buf, chunk) != 0) {
            int e = errno;
            s->copy_failures++;
            tell(s, SPOOL_WRITE_FAILED, f->name, NULL, 0);
            errno = e;
            return -1;
        }
        tell(s, SPOOL_APPENDED, f->name, buf, chunk);
        src += chunk;
        n -= chunk;
    }
    return 0;
}

/* A trace that is not this session's evidence: its copy goes, nothing more is read. */
static void drop_copy(struct trace_spool *s, struct spool_file *f)
{
    char path[PATH_MAX + 128];
    snprintf(path, sizeof path, "%s/%s", s->session, f->name);
    unlink(path);
    tell(s, SPOOL_REMOVED, f->name, NULL, 0);
    f->damaged = 1;
}

/*
 * How much of a trace copied up to `copied` goes back to the kernel: only
 * whole segments the writer no longer maps (trace_handover.h).  A hole
 * punched in pages it still maps would zap its page table entries, and the
 * kernel would then flush the TLB of every CPU the traced program runs on,
 * every 10 ms: the copier would reach into the program it must leave alone.
 * The writer maps at most the segment before the one it writes, which is
 * not below the one holding `copied`, so a process's memory file keeps
 * about four segments in memory.  On the H200 the launch-bound loop did not
 * tell the two apart (bench/notes/overhead.md, "Eleventh session").
 * KAUDIT_SPOOL_RELEASE (benchmarks): "pages" gives back every copied page
 * (the way before), "off" nothing (the whole trace stays in memory).
 */
static uint64_t releasable(uint64_t copied, uint64_t released)
{
    static int mode = -1;   /* 0 segments, 1 pages, 2 off */
    if (mode < 0) {
        const char *env = getenv("KAUDIT_SPOOL_RELEASE");
        mode = env && strcmp(env, "pages") == 0 ? 1 : env && strcmp(env, "off") == 0 ? 2 : 0;
    }
    if (mode == 1)
        return copied & ~(uint64_t)4095;
    if (mode == 2)
        return released;
    uint64_t segment = copied / KAT_TRACE_SEGMENT_BYTES;
    return segment >= 2 ? (segment - 1) * KAT_TRACE_SEGMENT_BYTES : released;
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
    /* the header is checked on a copy of ours, and that copy is what goes
     * into the session: the writer cannot change it in between */
    struct kat_file_header header;
    int first = f->offset == 0 && whole;
    if (first)
        memcpy(&header, map, sizeof header);
    if (first && header.pid != (uint32_t)f->pid) {
        /* a process's trace that says it is another's: not this process's evidence */
        reject(s, f->pid, f->name, "its header names another process");
        drop_copy(s, f);
    } else if (first && memcmp(header.session_token, s->token, sizeof s->token) != 0) {
        /* another run's trace (copied into the spool): not this session's evidence */
        s->foreign_traces++;
        kat_session_log(s->session, "warning",
                        "the trace %s handed over does not carry this session's token (copied in from "
                        "another run?): not copied",
                        f->name);
        drop_copy(s, f);
    } else if (whole && copy_out(s, f, from, whole, first ? &header : NULL) != 0) {
        kat_session_log(s->session, "error", "cannot copy the trace %s into the session: %s", f->name,
                        strerror(errno));
        f->damaged = 1;
    } else {
        if (first) { /* what the header says of the process, for the accounting of its programs */
            f->origin = header.origin;
            f->opened_ns = header.start_monotonic_ns;
        }
        f->offset += whole;
        /* what is copied need not stay in memory (the writer only appends) */
        uint64_t release_to = releasable(f->offset, f->released);
        if (release_to > f->released &&
            fallocate(f->in, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)f->released,
                      (off_t)(release_to - f->released)) == 0)
            f->released = release_to;
        if (bad && final) {
            /* damage, not an unfinished record: copied as it is (without the
             * zeros of the unused space after it), for the reader to report */
            size_t rest = len - (size_t)f->offset;
            while (rest && map[f->offset + rest - 1] == 0)
                rest--;
            if (rest && copy_out(s, f, map + f->offset, rest, NULL) == 0)
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
    static int bus_handler;
    if (!bus_handler) {
        struct sigaction sa = { .sa_sigaction = on_bus, .sa_flags = SA_SIGINFO };
        sigemptyset(&sa.sa_mask);
        sigaction(SIGBUS, &sa, NULL);
        bus_handler = 1;
    }
    /* what was handed over and not yet taken (a process that registered and
     * ended a moment ago) first */
    if (final)
        trace_spool_serve(s, 0);
    for (size_t i = 0; i < s->n_files; i++)
        drain_file(s, &s->files[i], final);
}

int trace_spool_has_process(const struct trace_spool *s, long pid, unsigned long long start)
{
    for (size_t i = 0; i < s->n_files; i++)
        if (s->files[i].pid == pid && (!s->files[i].start || !start || s->files[i].start == start))
            return 1;
    return 0;
}

unsigned trace_spool_images_since(const struct trace_spool *s, long pid, unsigned long long start, uint64_t since_ns)
{
    unsigned n = 0;
    for (size_t i = 0; i < s->n_files; i++) {
        const struct spool_file *f = &s->files[i];
        int same_start = !f->start || f->start == start || f->start + 1 == start || start + 1 == f->start;
        if (f->pid == pid && same_start && f->origin == KAT_ORIGIN_EXEC && f->opened_ns >= since_ns)
            n++;
    }
    return n;
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
    for (size_t i = 0; i < SPOOL_MAX_PENDING_SLOTS; i++)
        if (s->pending[i] >= 0) {
            close(s->pending[i]);
            s->pending[i] = -1;
        }
    if (s->listen_fd >= 0)
        close(s->listen_fd);
    s->listen_fd = -1;
    if (s->dir[0])
        kat_remove_tree(s->dir);
    s->dir[0] = '\0';
}
