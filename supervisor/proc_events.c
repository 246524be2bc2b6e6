/* proc_events.c - the run's processes from the kernel's proc connector (proc_events.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/cn_proc.h>
#include <linux/connector.h>
#include <linux/netlink.h>
#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "proc_events.h"
#include "run_census.h"

/* As many processes as the census keeps: enough to tell. */
#define PROC_EVENTS_MAX 65536
/* The socket's buffer: events of the whole system queue there while the
 * thread is busy (about 100 bytes each). */
#define PROC_EVENTS_BUFFER (8 << 20)

static uint64_t clock_ns(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int fail(struct proc_events *e, const char *what)
{
    snprintf(e->why, sizeof e->why, "%s: %s", what, strerror(errno));
    if (e->fd >= 0)
        close(e->fd);
    e->fd = -1;
    return -1;
}

/* PROC_CN_MCAST_LISTEN (or _IGNORE) to the connector */
static int send_listen(int fd, enum proc_cn_mcast_op op)
{
    struct {
        struct nlmsghdr header;
        struct cn_msg message;
        enum proc_cn_mcast_op op;
    } __attribute__((packed)) request;
    memset(&request, 0, sizeof request);
    request.header.nlmsg_len = sizeof request;
    request.header.nlmsg_type = NLMSG_DONE;
    request.header.nlmsg_pid = 0; /* the kernel names our port */
    request.message.id.idx = CN_IDX_PROC;
    request.message.id.val = CN_VAL_PROC;
    request.message.len = sizeof request.op;
    request.op = op;
    return send(fd, &request, sizeof request, 0) == (ssize_t)sizeof request ? 0 : -1;
}

int proc_events_open(struct proc_events *e)
{
    memset(e, 0, sizeof *e);
    e->fd = -1;
    e->stop[0] = e->stop[1] = -1;
    pthread_mutex_init(&e->lock, NULL);
    e->supervisor = getpid();
    e->ticks_per_s = sysconf(_SC_CLK_TCK);
    if (e->ticks_per_s <= 0)
        e->ticks_per_s = 100;
    uint64_t mono = clock_ns(CLOCK_MONOTONIC), boot = clock_ns(CLOCK_BOOTTIME);
    e->boottime_offset_ns = boot > mono ? boot - mono : 0;
    /* CLOEXEC: the command's child holds it only until its exec */
    e->fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_CONNECTOR);
    if (e->fd < 0)
        return fail(e, "no proc connector (socket NETLINK_CONNECTOR)");
    int size = PROC_EVENTS_BUFFER;
    /* as root past rmem_max; else what the system allows */
    if (setsockopt(e->fd, SOL_SOCKET, SO_RCVBUFFORCE, &size, sizeof size) != 0)
        setsockopt(e->fd, SOL_SOCKET, SO_RCVBUF, &size, sizeof size);
    struct sockaddr_nl address = { .nl_family = AF_NETLINK, .nl_groups = CN_IDX_PROC };
    if (bind(e->fd, (struct sockaddr *)&address, sizeof address) != 0)
        return fail(e, "the proc connector refused (bind CN_IDX_PROC)");
    /* without CAP_NET_ADMIN in the initial namespaces the kernel ignores the
     * request or refuses it (EPERM); a test event tells the first case */
    if (send_listen(e->fd, PROC_CN_MCAST_LISTEN) != 0)
        return fail(e, "the proc connector refused (PROC_CN_MCAST_LISTEN)");
    if (pipe2(e->stop, O_CLOEXEC) != 0)
        return fail(e, "cannot create a pipe");
    return 0;
}

/* The kept process that has pid now (its pid not given to a later one). */
static struct proc_instance *current(struct proc_events *e, pid_t pid)
{
    for (size_t i = e->n; i-- > 0;)
        if (e->procs[i].pid == pid && !e->procs[i].superseded)
            return &e->procs[i];
    return NULL;
}

static unsigned long long ticks_at(const struct proc_events *e, uint64_t monotonic_ns)
{
    return (monotonic_ns + e->boottime_offset_ns) / (1000000000ull / (uint64_t)e->ticks_per_s);
}

static int same_start(unsigned long long a, unsigned long long b)
{
    return a == b || a + 1 == b || b + 1 == a;
}

/* What /proc still says of p: its exact start time, name and program.
 * Only when the pid there is still p (its start within a tick). */
static void look(struct proc_instance *p, int program)
{
    struct proc_stat ps;
    if (proc_stat_read(p->pid, &ps) != 0 || !same_start(ps.start, p->start))
        return;
    p->start = ps.start;
    memcpy(p->comm, ps.comm, sizeof p->comm);
    if (program)
        p->is_static = proc_program_static(p->pid);
}

static void on_fork(struct proc_events *e, const struct proc_event *ev)
{
    pid_t child = ev->event_data.fork.child_tgid, parent = ev->event_data.fork.parent_tgid;
    if (ev->event_data.fork.child_pid != child)
        return; /* a thread, not a process */
    struct proc_instance *old = current(e, child);
    if (old)
        old->superseded = 1; /* the kernel gave its pid to a new process: it has ended */
    struct proc_instance *from = parent == e->supervisor ? NULL : current(e, parent);
    if (parent != e->supervisor && !from)
        return; /* not of the run */
    if (e->n == e->cap) {
        size_t cap = e->cap ? 2 * e->cap : 64;
        struct proc_instance *grown = cap <= PROC_EVENTS_MAX ? realloc(e->procs, cap * sizeof *grown) : NULL;
        if (!grown) {
            e->too_many = 1;
            return;
        }
        e->procs = grown;
        e->cap = cap;
    }
    struct proc_instance *p = &e->procs[e->n++];
    memset(p, 0, sizeof *p);
    p->pid = child;
    p->start = ticks_at(e, ev->timestamp_ns);
    p->is_static = from ? from->is_static : -1;
    if (from)
        memcpy(p->comm, from->comm, sizeof p->comm);
    look(p, 0);
}

static void on_exec(struct proc_events *e, const struct proc_event *ev)
{
    struct proc_instance *p = current(e, ev->event_data.exec.process_tgid);
    if (!p)
        return;
    p->execs++;
    if (!p->first_exec_ns)
        p->first_exec_ns = ev->timestamp_ns;
    p->last_exec_ns = ev->timestamp_ns;
    p->is_static = -1; /* a new program: unknown until looked at */
    look(p, 1);
}

/* exec names the process after its program (and prctl may rename it): the
 * name of a process already gone comes from here */
static void on_comm(struct proc_events *e, const struct proc_event *ev)
{
    if (ev->event_data.comm.process_pid != ev->event_data.comm.process_tgid)
        return; /* a thread's own name */
    struct proc_instance *p = current(e, ev->event_data.comm.process_tgid);
    if (!p)
        return;
    size_t n = sizeof ev->event_data.comm.comm < sizeof p->comm ? sizeof ev->event_data.comm.comm : sizeof p->comm - 1;
    memcpy(p->comm, ev->event_data.comm.comm, n);
    p->comm[n] = '\0';
}

static void on_event(struct proc_events *e, const struct proc_event *ev)
{
    switch (ev->what) {
    case PROC_EVENT_FORK:
        on_fork(e, ev);
        break;
    case PROC_EVENT_EXEC:
        on_exec(e, ev);
        break;
    case PROC_EVENT_COMM:
        on_comm(e, ev);
        break;
    default:
        break;
    }
}

/* Whether the message holds the whole of the event it names (the union's
 * members differ in size, and only these are read). */
static int event_whole(const struct cn_msg *m)
{
    const struct proc_event *ev = (const struct proc_event *)m->data;
    size_t head = offsetof(struct proc_event, event_data);
    if (m->len < head)
        return 0;
    switch (ev->what) {
    case PROC_EVENT_FORK:
        return m->len >= head + sizeof ev->event_data.fork;
    case PROC_EVENT_EXEC:
        return m->len >= head + sizeof ev->event_data.exec;
    case PROC_EVENT_COMM:
        return m->len >= head + sizeof ev->event_data.comm;
    default:
        return 0;
    }
}

/* One datagram of events.  0 read, 1 nothing there (EAGAIN), -1 the socket failed. */
static int read_events(struct proc_events *e, int flags)
{
    _Alignas(struct nlmsghdr) char buf[16384];
    ssize_t got = recv(e->fd, buf, sizeof buf, flags);
    if (got < 0) {
        if (errno == EAGAIN || errno == EWOULDBLOCK)
            return 1;
        if (errno == EINTR)
            return 0;
        if (errno == ENOBUFS) {
            /* the buffer overflowed: events were dropped, the list is not whole */
            pthread_mutex_lock(&e->lock);
            e->overflows++;
            pthread_mutex_unlock(&e->lock);
            return 0;
        }
        return -1;
    }
    pthread_mutex_lock(&e->lock);
    size_t left = (size_t)got;
    for (struct nlmsghdr *h = (struct nlmsghdr *)buf; NLMSG_OK(h, left); h = NLMSG_NEXT(h, left)) {
        if (h->nlmsg_type == NLMSG_NOOP || h->nlmsg_type == NLMSG_ERROR)
            continue;
        const struct cn_msg *m = NLMSG_DATA(h);
        if (m->id.idx != CN_IDX_PROC || m->id.val != CN_VAL_PROC || !event_whole(m))
            continue;
        on_event(e, (const struct proc_event *)m->data);
    }
    pthread_mutex_unlock(&e->lock);
    return 0;
}

static void *reader(void *arg)
{
    struct proc_events *e = arg;
    for (;;) {
        struct pollfd fds[2] = { { .fd = e->fd, .events = POLLIN }, { .fd = e->stop[0], .events = POLLIN } };
        if (poll(fds, 2, -1) < 0) {
            if (errno == EINTR)
                continue;
            break;
        }
        if (fds[0].revents & (POLLIN | POLLERR)) {
            if (read_events(e, MSG_DONTWAIT) < 0)
                break;
            continue; /* the events first: stop only once none is queued */
        }
        if (fds[1].revents)
            break;
    }
    /* everything queued until the stop, which came after the command ended */
    int r;
    while ((r = read_events(e, MSG_DONTWAIT)) == 0)
        ;
    return NULL;
}

int proc_events_start(struct proc_events *e)
{
    if (e->fd < 0)
        return -1;
    /* the thread takes no signal: kaudit run's handlers (forwarding to the
     * command) stay with the main thread, as before there was a thread */
    sigset_t all, before;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &before);
    int err = pthread_create(&e->thread, NULL, reader, e);
    pthread_sigmask(SIG_SETMASK, &before, NULL);
    if (err) {
        errno = err;
        snprintf(e->why, sizeof e->why, "cannot start the proc connector's reader: %s", strerror(err));
        return -1;
    }
    e->thread_running = 1;
    return 0;
}

void proc_events_stop(struct proc_events *e)
{
    if (e->thread_running) {
        char byte = 0;
        if (write(e->stop[1], &byte, 1) != 1) {
            /* the pipe is ours and empty: cannot fail; the join below would wait */
        }
        pthread_join(e->thread, NULL);
        e->thread_running = 0;
    } else if (e->fd >= 0) {
        while (read_events(e, MSG_DONTWAIT) == 0)
            ;
    }
    if (e->fd >= 0) {
        send_listen(e->fd, PROC_CN_MCAST_IGNORE);
        close(e->fd);
        e->fd = -1;
        if (!e->why[0])
            snprintf(e->why, sizeof e->why, "stopped");
    }
    for (int i = 0; i < 2; i++)
        if (e->stop[i] >= 0) {
            close(e->stop[i]);
            e->stop[i] = -1;
        }
}

int proc_events_complete(const struct proc_events *e, pid_t command)
{
    for (size_t i = 0; i < e->n; i++)
        if (e->procs[i].pid == command)
            return !strcmp(e->why, "stopped") && !e->overflows && !e->too_many;
    return 0;
}

const struct proc_instance *proc_events_find(const struct proc_events *e, pid_t pid, unsigned long long start)
{
    for (size_t i = e->n; i-- > 0;)
        if (e->procs[i].pid == pid && same_start(e->procs[i].start, start))
            return &e->procs[i];
    return NULL;
}

void proc_events_free(struct proc_events *e)
{
    if (e->fd >= 0 || e->thread_running)
        proc_events_stop(e);
    free(e->procs);
    e->procs = NULL;
    e->n = e->cap = 0;
    pthread_mutex_destroy(&e->lock);
}
