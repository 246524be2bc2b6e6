/*
 * trace_handover.c - the preload's side of handing a trace to kaudit run
 * (session/trace_handover.h).
 *
 * A connection lives for one message and is closed before we return, so the
 * program never finds a descriptor of ours at a low number for longer than
 * a system call or two.  Send and receive are bounded (two seconds): a
 * supervisor that does not answer costs the trace, never a hang.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stddef.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include "preload_internal.h"
#include "trace_handover.h"

static int supervisor_connect(const char *socket_path)
{
    struct sockaddr_un addr = { .sun_family = AF_UNIX };
    if (!socket_path || strlen(socket_path) >= sizeof addr.sun_path)
        return -1;
    memcpy(addr.sun_path, socket_path, strlen(socket_path) + 1);
    int s = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    if (s < 0)
        return -1;
    struct timeval bound = { .tv_sec = 2 };
    setsockopt(s, SOL_SOCKET, SO_SNDTIMEO, &bound, sizeof bound);
    setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &bound, sizeof bound);
    int rc;
    do
        rc = connect(s, (struct sockaddr *)&addr, sizeof addr);
    while (rc != 0 && errno == EINTR);
    if (rc != 0) {
        close(s);
        return -1;
    }
    return s;
}

static int send_message(int s, char kind, const char *name, int fd)
{
    struct kat_handover_msg msg = { .kind = kind };
    kat_strlcpy(msg.name, name, sizeof msg.name);
    return kat_handover_send(s, &msg, sizeof msg, fd, 0) == (ssize_t)sizeof msg ? 0 : -1;
}

int kat_handover_register(const char *socket_path, int fd, const char *name)
{
    int s = supervisor_connect(socket_path);
    if (s < 0)
        return -1;
    int rc = send_message(s, KAT_HANDOVER_REGISTER, name, fd);
    close(s);
    return rc;
}

int kat_handover_again(const char *socket_path, const char *name)
{
    int s = supervisor_connect(socket_path);
    if (s < 0)
        return -1;
    int fd = -1;
    if (send_message(s, KAT_HANDOVER_AGAIN, name, -1) == 0) {
        char byte;
        struct iovec iov = { .iov_base = &byte, .iov_len = 1 };
        union {
            char buf[CMSG_SPACE(sizeof(int))];
            struct cmsghdr align;
        } control;
        struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = control.buf,
                             .msg_controllen = sizeof control.buf };
        ssize_t n;
        do
            n = recvmsg(s, &mh, MSG_CMSG_CLOEXEC);
        while (n < 0 && errno == EINTR);
        struct cmsghdr *c = n > 0 ? CMSG_FIRSTHDR(&mh) : NULL;
        if (c && c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS && c->cmsg_len == CMSG_LEN(sizeof(int)))
            memcpy(&fd, CMSG_DATA(c), sizeof fd);
    }
    close(s);
    return fd;
}
