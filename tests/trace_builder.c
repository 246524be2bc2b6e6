/*
 * trace_builder.c - synthetic traces for tests; see trace_builder.h.
 */
#define _GNU_SOURCE
#include "trace_builder.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void reserve(struct tb *b, size_t more)
{
    if (b->len + more <= b->cap)
        return;
    size_t cap = b->cap ? b->cap : 4096;
    while (cap < b->len + more)
        cap *= 2;
    b->buf = realloc(b->buf, cap);
    if (!b->buf)
        abort();
    memset(b->buf + b->cap, 0, cap - b->cap);
    b->cap = cap;
}

void tb_init(struct tb *b, uint32_t pid, uint32_t ppid, uint32_t origin, uint64_t start_ns)
{
    memset(b, 0, sizeof(*b));
    b->next_string_id = 1;
    struct kat_file_header h = {
        .format_version = KAT_FORMAT_VERSION,
        .header_size = sizeof(struct kat_file_header),
        .pid = pid,
        .ppid = ppid,
        .start_realtime_ns = start_ns,
        .start_monotonic_ns = 1000,
        .origin = origin,
    };
    memcpy(h.magic, KAT_TRACE_MAGIC, sizeof(h.magic));
    tb_raw(b, &h, sizeof(h));
}

void tb_free(struct tb *b)
{
    free(b->buf);
    memset(b, 0, sizeof(*b));
}

struct kat_file_header *tb_header(struct tb *b) { return (struct kat_file_header *)b->buf; }

size_t tb_raw(struct tb *b, const void *bytes, size_t n)
{
    size_t at = b->len;
    reserve(b, n);
    memcpy(b->buf + b->len, bytes, n);
    b->len += n;
    return at;
}

void tb_zeros(struct tb *b, size_t n)
{
    reserve(b, n);
    memset(b->buf + b->len, 0, n);
    b->len += n;
}

size_t tb_record(struct tb *b, uint16_t type, const void *body, uint32_t body_size,
                 const void *tail, uint32_t tail_size)
{
    uint32_t size = (uint32_t)((8 + body_size + tail_size + 7) & ~7u);
    struct kat_record_header h = { .size = size, .type = type };
    size_t at = b->len;
    reserve(b, size);
    memset(b->buf + at, 0, size);
    memcpy(b->buf + at, &h, sizeof(h));
    if (body_size)
        memcpy(b->buf + at + 8, body, body_size);
    if (tail_size)
        memcpy(b->buf + at + 8 + body_size, tail, tail_size);
    b->len += size;
    return at;
}

size_t tb_string_id(struct tb *b, uint32_t id, const void *s, uint32_t n)
{
    struct kat_string_rec r = { .id = id, .length = n };
    return tb_record(b, KAT_REC_STRING, &r, sizeof(r), s, n);
}

uint32_t tb_string_n(struct tb *b, const void *s, uint32_t n)
{
    uint32_t id = b->next_string_id++;
    tb_string_id(b, id, s, n);
    return id;
}

uint32_t tb_string(struct tb *b, const char *s) { return tb_string_n(b, s, (uint32_t)strlen(s)); }

void tb_process_start(struct tb *b, const char *const *argv, const char *exe, const char *cwd)
{
    char joined[4096];
    size_t n = 0;
    for (size_t i = 0; argv && argv[i]; i++) {
        size_t len = strlen(argv[i]);
        if (n + len + 1 > sizeof(joined))
            break;
        if (i)
            joined[n++] = '\0';
        memcpy(joined + n, argv[i], len);
        n += len;
    }
    const struct kat_file_header *h = tb_header(b);
    struct kat_process_start_rec r = {
        .pid = h->pid,
        .ppid = h->ppid,
        .origin = h->origin,
        .argv_string = n ? tb_string_n(b, joined, (uint32_t)n) : 0,
        .exe_string = exe ? tb_string(b, exe) : 0,
        .cwd_string = cwd ? tb_string(b, cwd) : 0,
        .time_ns = h->start_realtime_ns,
    };
    tb_record(b, KAT_REC_PROCESS_START, &r, sizeof(r), NULL, 0);
}

void tb_process_end(struct tb *b, uint32_t kind, int32_t status, int status_known)
{
    struct kat_process_end_rec r = {
        .kind = kind,
        .status = status,
        .flags = status_known ? KAT_END_FLAG_STATUS_KNOWN : 0,
        .time_ns = tb_header(b)->start_realtime_ns + 1000000,
    };
    tb_record(b, KAT_REC_PROCESS_END, &r, sizeof(r), NULL, 0);
}

int tb_write(const struct tb *b, const char *path)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return -1;
    size_t n = b->len ? fwrite(b->buf, 1, b->len, f) : 0;
    int rc = fclose(f);
    return n == b->len && rc == 0 ? 0 : -1;
}

char *tb_tempdir(void)
{
    const char *base = getenv("TMPDIR");
    char *path = NULL;
    if (asprintf(&path, "%s/kaudit-test-XXXXXX", base && *base ? base : "/tmp") < 0)
        return NULL;
    if (!mkdtemp(path)) {
        free(path);
        return NULL;
    }
    return path;
}

int tb_write_text(const char *dir, const char *name, const char *text)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    fputs(text, f);
    return fclose(f);
}

void tb_remove_dir(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
            continue;
        char path[4096];
        snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
        unlink(path);
    }
    closedir(d);
    rmdir(dir);
}
