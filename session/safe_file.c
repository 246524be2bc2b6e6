/*
 * safe_file.c - see safe_file.h.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "safe_file.h"

const char *kat_file_kind(mode_t mode)
{
    if (S_ISREG(mode)) return "a regular file";
    if (S_ISFIFO(mode)) return "a FIFO";
    if (S_ISDIR(mode)) return "a directory";
    if (S_ISLNK(mode)) return "a symbolic link";
    if (S_ISCHR(mode)) return "a character device";
    if (S_ISBLK(mode)) return "a block device";
    if (S_ISSOCK(mode)) return "a socket";
    return "of an unknown kind";
}

static void put(char *err, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void put(char *err, size_t n, const char *fmt, ...)
{
    if (!err || !n)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, n, fmt, ap);
    va_end(ap);
}

static int clear_nonblock(int fd)
{
    int fl = fcntl(fd, F_GETFL);
    return fl < 0 ? -1 : fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
}

int kat_open_input(const char *path, int flags, off_t *size, char *err, size_t err_size)
{
    int oflags = O_RDONLY | O_NONBLOCK | O_CLOEXEC | ((flags & KAT_SAFE_NOFOLLOW) ? O_NOFOLLOW : 0);
    int fd = open(path, oflags);
    if (fd < 0) {
        int e = errno;
        struct stat st;
        if (e == ELOOP && (flags & KAT_SAFE_NOFOLLOW) && lstat(path, &st) == 0 && S_ISLNK(st.st_mode)) {
            put(err, err_size, "'%s' is not a regular file (a symbolic link)", path);
            e = EINVAL;
        } else
            put(err, err_size, "cannot open '%s': %s", path, strerror(e));
        errno = e;
        return -1;
    }
    struct stat st;
    if (fstat(fd, &st) != 0) {
        int e = errno;
        put(err, err_size, "cannot open '%s': %s", path, strerror(e));
        close(fd);
        errno = e;
        return -1;
    }
    if (!S_ISREG(st.st_mode)) {
        put(err, err_size, "'%s' is not a regular file (%s)", path, kat_file_kind(st.st_mode));
        close(fd);
        errno = EINVAL;
        return -1;
    }
    clear_nonblock(fd);
    if (size)
        *size = st.st_size;
    return fd;
}

FILE *kat_fopen_input(const char *path, int flags, char *err, size_t err_size)
{
    int fd = kat_open_input(path, flags, NULL, err, err_size);
    if (fd < 0)
        return NULL;
    FILE *f = fdopen(fd, "r");
    if (!f) {
        put(err, err_size, "cannot open '%s': %s", path, strerror(errno));
        close(fd);
    }
    return f;
}

int kat_read_input(const char *path, int flags, size_t max, char **data, size_t *len, char *err,
                   size_t err_size)
{
    off_t size = 0;
    int fd = kat_open_input(path, flags, &size, err, err_size);
    if (fd < 0)
        return -1;
    if (size < 0 || (unsigned long long)size > max) {
        put(err, err_size, "cannot read '%s': %lld bytes is more than the %zu allowed", path,
            (long long)size, max);
        close(fd);
        return -1;
    }
    char *buf = malloc(max < (size_t)size + 4096 ? max + 1 : (size_t)size + 4096 + 1);
    size_t cap = max < (size_t)size + 4096 ? max : (size_t)size + 4096, got = 0;
    if (!buf) {
        put(err, err_size, "cannot read '%s': out of memory", path);
        close(fd);
        return -1;
    }
    for (;;) {
        if (got == cap)
            break;
        ssize_t r = read(fd, buf + got, cap - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            put(err, err_size, "cannot read '%s': %s", path, strerror(errno));
            close(fd);
            free(buf);
            return -1;
        }
        if (r == 0)
            break;
        got += (size_t)r;
    }
    close(fd);
    buf[got] = '\0';
    *data = buf;
    if (len)
        *len = got;
    return 0;
}

int kat_open_output(const char *path, int open_flags, char *err, size_t err_size)
{
    int mode = open_flags & (O_APPEND | O_TRUNC | O_EXCL);
    int oflags = O_WRONLY | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | mode;
    if (mode & O_EXCL) {
        /* A planted file of any kind (symlink, FIFO, hard link) is removed,
         * not followed; unlink() acts on the link itself. */
        if (unlink(path) != 0 && errno != ENOENT) {
            put(err, err_size, "cannot replace '%s': %s", path, strerror(errno));
            return -1;
        }
    } else if (mode & O_TRUNC) {
        /* O_TRUNC would cut a FIFO or a hard-linked file before fstat: look first. */
        struct stat st;
        if (lstat(path, &st) == 0 && (!S_ISREG(st.st_mode) || st.st_nlink > 1)) {
            put(err, err_size, "'%s' is not a regular file of its own (%s%s); not written", path,
                kat_file_kind(st.st_mode), S_ISREG(st.st_mode) ? " with other hard links" : "");
            errno = EEXIST;
            return -1;
        }
    }
    int fd = open(path, oflags, 0644);
    /* Planted again between the unlink and the open: remove it again (a few times). */
    for (int tries = 0; fd < 0 && errno == EEXIST && (mode & O_EXCL) && tries < 3; tries++) {
        if (unlink(path) != 0 && errno != ENOENT)
            break;
        fd = open(path, oflags, 0644);
    }
    if (fd < 0) {
        int e = errno;
        struct stat st;
        if (e == ELOOP && lstat(path, &st) == 0 && S_ISLNK(st.st_mode))
            put(err, err_size, "'%s' is a symbolic link; not followed", path);
        else if (e == ENXIO)
            put(err, err_size, "'%s' is not a regular file (a FIFO); not written", path);
        else
            put(err, err_size, "cannot write '%s': %s", path, strerror(e));
        errno = e;
        return -1;
    }
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_nlink > 1) {
        put(err, err_size, "'%s' is not a regular file of its own (%s%s); not written", path,
            kat_file_kind(st.st_mode), S_ISREG(st.st_mode) ? " with other hard links" : "");
        close(fd);
        errno = EEXIST;
        return -1;
    }
    clear_nonblock(fd);
    return fd;
}

FILE *kat_fopen_output(const char *path, int open_flags, char *err, size_t err_size)
{
    int fd = kat_open_output(path, open_flags, err, err_size);
    if (fd < 0)
        return NULL;
    FILE *f = fdopen(fd, (open_flags & O_APPEND) ? "a" : "w");
    if (!f) {
        put(err, err_size, "cannot write '%s': %s", path, strerror(errno));
        close(fd);
    }
    return f;
}

static kat_session_log_observer log_observer;
static void *log_observer_arg;

void kat_session_log_observe(kat_session_log_observer fn, void *arg)
{
    log_observer = fn;
    log_observer_arg = arg;
}

int kat_session_log_text(const char *dir, const char *text, char *err, size_t err_size)
{
    char path[PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/kaudit.log", dir);
    FILE *f = kat_fopen_output(path, O_APPEND, err, err_size);
    int rc = -1;
    if (f) {
        rc = fputs(text, f) == EOF ? -1 : 0;
        if (fclose(f) != 0)
            rc = -1;
    }
    /* told also when the write failed: what kaudit meant to write is what
     * its seal holds, and a log it could not write is a changed session */
    if (log_observer)
        log_observer(log_observer_arg, dir, text, strlen(text));
    return rc;
}

void kat_session_log(const char *dir, const char *level, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *message = NULL, *line = NULL;
    int ok = vasprintf(&message, fmt, ap) >= 0;
    va_end(ap);
    if (ok && asprintf(&line, "kaudit: %s: %s\n", level, message) >= 0)
        kat_session_log_text(dir, line, NULL, 0);
    free(line);
    free(message);
}

int kat_write_all(int fd, const void *data, size_t n)
{
    const char *p = data;
    while (n) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

static int remove_entry(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
    (void)st;
    (void)type;
    (void)ftw;
    return remove(path) != 0 && errno != ENOENT;
}

void kat_remove_tree(const char *path)
{
    nftw(path, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}
