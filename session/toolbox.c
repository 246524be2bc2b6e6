/* toolbox.c - see toolbox.h. */
#define _GNU_SOURCE
#include "toolbox.h"

#include <errno.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void kat_vsay(const char *level, const char *fmt, va_list ap)
{
    fprintf(stderr, "kaudit: %s: ", level);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
}

void kat_say(const char *level, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    kat_vsay(level, fmt, ap);
    va_end(ap);
}

int kat_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    kat_vsay("error", fmt, ap);
    va_end(ap);
    return -1;
}

int kat_fail(char *err, size_t n, const char *fmt, ...)
{
    if (err && n) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, n, fmt, ap);
        va_end(ap);
    }
    return -1;
}

void kat_die(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    kat_vsay("error", fmt, ap);
    va_end(ap);
    exit(1);
}

void *kat_xcalloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size ? size : 1);
    if (!p)
        kat_die("out of memory");
    return p;
}

void *kat_xrealloc(void *p, size_t size)
{
    p = realloc(p, size ? size : 1);
    if (!p)
        kat_die("out of memory");
    return p;
}

char *kat_xstrdup(const char *s)
{
    char *d = strdup(s);
    if (!d)
        kat_die("out of memory");
    return d;
}

int kat_grow(void *items, size_t *cap, size_t need, size_t size)
{
    if (need <= *cap)
        return 0;
    size_t c = *cap ? *cap : 16;
    while (c < need) {
        if (c > SIZE_MAX / 2) {
            errno = ENOMEM;
            return -1;
        }
        c *= 2;
    }
    if (size && c > SIZE_MAX / size) {
        errno = ENOMEM;
        return -1;
    }
    void **slot = items;
    void *p = realloc(*slot, c * size);
    if (!p)
        return -1;
    *slot = p;
    *cap = c;
    return 0;
}

const char *kat_base_name(const char *path)
{
    const char *s = path ? strrchr(path, '/') : NULL;
    return s ? s + 1 : (path ? path : "");
}

void kat_hex(const void *bytes, size_t n, char *out)
{
    static const char digits[] = "0123456789abcdef";
    const unsigned char *b = bytes;
    for (size_t i = 0; i < n; i++) {
        out[2 * i] = digits[b[i] >> 4];
        out[2 * i + 1] = digits[b[i] & 15];
    }
    out[2 * n] = '\0';
}

int kat_env_flag(const char *name, int dflt)
{
    const char *v = getenv(name);
    if (!v || !v[0])
        return dflt;
    return strcmp(v, "0") != 0;
}

int kat_random_bytes(void *out, size_t n)
{
    unsigned char *p = out;
    while (n > 0) {
        ssize_t got = getrandom(p, n, 0);
        if (got < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        p += got;
        n -= (size_t)got;
    }
    return 0;
}

int kat_locate_command(const char *cmd, char *found, size_t size)
{
    if (strchr(cmd, '/')) {
        snprintf(found, size, "%s", cmd);
        if (access(cmd, F_OK) != 0)
            return ENOENT;
        return access(cmd, X_OK) == 0 ? 0 : EACCES;
    }
    const char *path = getenv("PATH");
    if (!path || !*path)
        path = "/usr/local/bin:/usr/bin:/bin";
    int saw_unexecutable = 0;
    for (const char *p = path; *p;) {
        const char *end = strchrnul(p, ':');
        snprintf(found, size, "%.*s/%s", (int)(end - p), p, cmd);
        if (end == p)
            snprintf(found, size, "./%s", cmd);
        if (access(found, X_OK) == 0) {
            struct stat st;
            if (stat(found, &st) == 0 && S_ISREG(st.st_mode))
                return 0;
        } else if (access(found, F_OK) == 0) {
            saw_unexecutable = 1;
        }
        p = *end ? end + 1 : end;
    }
    return saw_unexecutable ? EACCES : ENOENT;
}
