/*
 * trace_handover.h - how a recorded process hands its trace to `kaudit run`
 * (docs/threat-model.md, "The handover"; docs/preload.md).
 *
 * Under `kaudit run` the preload keeps each process's trace in an anonymous
 * memory file (memfd_create), never in a directory: nothing another process
 * can open by name, list, delete or replace.  It connects to the supervisor's
 * socket (KAUDIT_SUPERVISOR_SOCKET, a SOCK_SEQPACKET socket that kaudit run
 * listens on) and sends one message with the descriptor attached
 * (SCM_RIGHTS).  The kernel names the sender (SO_PEERCRED): kaudit run
 * accepts a trace only under the pid of the process that handed it over,
 * and only when the trace's header names that pid.  It seals the file
 * against shrinking (F_SEAL_SHRINK), so no one can cut it while it is
 * copied, and copies what is complete into the session as the run goes.
 *
 * One message per connection; the supervisor closes it after answering.
 */
#ifndef KAUDIT_TRACE_HANDOVER_H
#define KAUDIT_TRACE_HANDOVER_H

enum {
    /* "here is my trace": the descriptor attached, name = its file name
     * in the session (p<pid>-<stamp>.kat) */
    KAT_HANDOVER_REGISTER = 'R',
    /* "give my trace back": the program closed the preload's descriptor;
     * the supervisor answers with the descriptor of the trace of that name,
     * when the asker is the process that registered it */
    KAT_HANDOVER_AGAIN = 'A',
};

/*
 * The writer maps its trace in segments of this size, at multiples of it
 * from the file's start, and keeps at most three mapped: the one it writes,
 * the one before (until its preparing thread unmaps it) and the spare after.
 * kaudit run gives copied bytes back to the kernel only in segments below
 * those (supervisor/trace_spool.c): punching a hole in pages the writer still
 * maps makes the kernel zap its page table entries and shoot down the TLB
 * of every CPU running the traced program, every 10 ms.
 */
#define KAT_TRACE_SEGMENT_BYTES (4u << 20)

struct kat_handover_msg {
    char kind;
    char name[95];  /* NUL-terminated */
};

#include <errno.h>
#include <string.h>
#include <sys/socket.h>

/* Sends n bytes with descriptor fd attached (SCM_RIGHTS; none when fd < 0),
 * again on EINTR: sendmsg's result.  Both sides of the handover send so:
 * the preload its trace, the supervisor a trace given back. */
static inline ssize_t kat_handover_send(int sock, const void *bytes, size_t n, int fd, int flags)
{
    struct iovec iov = { .iov_base = (void *)bytes, .iov_len = n };
    union {
        char buf[CMSG_SPACE(sizeof(int))];
        struct cmsghdr align;
    } control;
    struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
    if (fd >= 0) {
        memset(&control, 0, sizeof control);
        mh.msg_control = control.buf;
        mh.msg_controllen = sizeof control.buf;
        struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
        c->cmsg_level = SOL_SOCKET;
        c->cmsg_type = SCM_RIGHTS;
        c->cmsg_len = CMSG_LEN(sizeof(int));
        memcpy(CMSG_DATA(c), &fd, sizeof fd);
    }
    ssize_t sent;
    do
        sent = sendmsg(sock, &mh, flags | MSG_NOSIGNAL);
    while (sent < 0 && errno == EINTR);
    return sent;
}

#endif /* KAUDIT_TRACE_HANDOVER_H */
