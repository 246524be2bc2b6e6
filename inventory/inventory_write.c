/*
 * inventory_write.c - an inventory's sealed text form (internal.h, "the
 * sealed text form"): serialized, digested, and written to a file (zstd
 * when its name ends in .zst), a device or standard output.  Apart from
 * inventory.c, which holds and looks up an inventory, and from
 * inventory_read.c, its inverse.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#define XXH_INLINE_ALL     /* as in inventory.c */
#include <xxhash.h>
#include <zstd.h>

#include "internal.h"
#include "safe_file.h"

struct sbuf {
    char *p;
    size_t len, cap;
    int failed;
};

static void sb_reserve(struct sbuf *b, size_t more)
{
    if (b->failed || b->len + more + 1 <= b->cap)
        return;
    size_t cap = b->cap ? b->cap : 1 << 16;
    while (cap < b->len + more + 1)
        cap *= 2;
    char *p = realloc(b->p, cap);
    if (!p) {
        b->failed = 1;
        return;
    }
    b->p = p;
    b->cap = cap;
}

static void sb_put(struct sbuf *b, const char *s, size_t n)
{
    sb_reserve(b, n);
    if (b->failed)
        return;
    memcpy(b->p + b->len, s, n);
    b->len += n;
}

static void sb_str(struct sbuf *b, const char *s) { sb_put(b, s, strlen(s)); }

static void sb_fmt(struct sbuf *b, const char *fmt, ...) KINV_PRINTF(2, 3);
static void sb_fmt(struct sbuf *b, const char *fmt, ...)
{
    char tmp[128];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
    va_end(ap);
    if (n > 0)
        sb_put(b, tmp, (size_t)n < sizeof(tmp) ? (size_t)n : sizeof(tmp) - 1);
}

static void sb_escaped(struct sbuf *b, const char *s, size_t n)
{
    static const char hex[] = "0123456789abcdef";
    sb_reserve(b, 4 * n);
    if (b->failed)
        return;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (kinv_needs_escape(c)) {
            b->p[b->len++] = '\\';
            b->p[b->len++] = 'x';
            b->p[b->len++] = hex[c >> 4];
            b->p[b->len++] = hex[c & 15];
        } else {
            b->p[b->len++] = (char)c;
        }
    }
}

int kinv_serialize(struct kinv_inventory *inv, char **text, size_t *len, struct kinv_err *err)
{
    struct sbuf body = { 0 };
    for (size_t i = 0; i < inv->n_meta; i++) {
        sb_str(&body, "M\t");
        sb_escaped(&body, inv->meta[i].key, strlen(inv->meta[i].key));
        sb_str(&body, "\t");
        sb_escaped(&body, inv->meta[i].value, strlen(inv->meta[i].value));
        sb_str(&body, "\n");
    }
    for (size_t i = 0; i < inv->n_libs; i++) {
        const struct kinv_library *l = &inv->libs[i];
        char hex[33];
        kinv_digest_hex(l->digest, hex);
        sb_fmt(&body, "L\t%zu\t%s\t%llu\t", i, hex, (unsigned long long)l->size);
        if (l->soname)
            sb_escaped(&body, l->soname, strlen(l->soname));
        sb_str(&body, "\t");
        sb_escaped(&body, l->path, strlen(l->path));
        sb_str(&body, "\n");
    }
    for (size_t i = 0; i < inv->n_modules; i++) {
        const struct kinv_module *m = &inv->modules[i];
        char hex[33], t[32];
        kinv_digest_hex(m->digest, hex);
        if (m->target == 0)
            strcpy(t, "fatbin");
        else if (kinv_target_format(m->target, t, sizeof(t)) < 0) {
            free(body.p);
            return kinv_error(err, "module %s has an invalid target 0x%x", hex, m->target);
        }
        sb_fmt(&body, "C\t%s\t%u%s\t%s\n", hex, m->lib, m->embedded ? "e" : "", t);
    }
    for (size_t i = 0; i < inv->n_entries; i++) {
        const struct kinv_entry *e = &inv->entries[i];
        sb_str(&body, "E\t");
        sb_escaped(&body, e->name, e->name_len);
        sb_str(&body, "\t");
        sb_str(&body, kinv_kind_name(e->kind));
        sb_str(&body, "\t");
        for (uint32_t k = 0; k < e->n_libs; k++)
            sb_fmt(&body, "%s%u%s", k ? "," : "", e->libs[k], e->lib_embedded[k] ? "e" : "");
        sb_str(&body, "\t");
        for (uint32_t k = 0; k < e->n_targets; k++) {
            char t[32];
            if (kinv_target_format(e->targets[k], t, sizeof(t)) < 0) {
                free(body.p);
                return kinv_error(err, "entry '%.*s' has an invalid target 0x%x", (int)e->name_len,
                                  e->name, e->targets[k]);
            }
            if (k)
                sb_str(&body, ",");
            sb_str(&body, t);
        }
        sb_str(&body, "\n");
    }
    if (body.failed) {
        free(body.p);
        return kinv_error(err, "out of memory while writing the inventory");
    }
    char head[64];
    int hlen = snprintf(head, sizeof(head), "%s %u\n", KINV_FILE_MAGIC, KINV_FORMAT_VERSION);
    XXH3_state_t *st = XXH3_createState();
    if (!st) {
        free(body.p);
        return kinv_error(err, "out of memory");
    }
    XXH3_128bits_reset(st);
    XXH3_128bits_update(st, head, (size_t)hlen);
    XXH3_128bits_update(st, body.p ? body.p : "", body.len);
    XXH128_canonical_t c;
    XXH128_canonicalFromHash(&c, XXH3_128bits_digest(st));
    XXH3_freeState(st);
    memcpy(inv->digest, c.digest, 16);
    inv->have_digest = 1;
    char hex[33];
    kinv_digest_hex(inv->digest, hex);

    struct sbuf out = { 0 };
    sb_put(&out, head, (size_t)hlen);
    sb_fmt(&out, "digest xxh3-128 %s\n", hex);
    sb_put(&out, body.p ? body.p : "", body.len);
    free(body.p);
    if (out.failed) {
        free(out.p);
        return kinv_error(err, "out of memory while writing the inventory");
    }
    *text = out.p;
    *len = out.len;
    return 0;
}

int kinv_write(struct kinv_inventory *inv, const char *path, struct kinv_err *err)
{
    char *text;
    size_t len;
    if (kinv_serialize(inv, &text, &len, err))
        return -1;
    const void *data = text;
    size_t size = len;
    void *z = NULL;
    size_t plen = strlen(path);
    if (plen > 4 && !strcmp(path + plen - 4, ".zst")) {
        size_t bound = ZSTD_compressBound(len);
        z = malloc(bound);
        if (!z) {
            free(text);
            return kinv_error(err, "out of memory while compressing '%s'", path);
        }
        size_t r = ZSTD_compress(z, bound, text, len, 15);
        if (ZSTD_isError(r)) {
            free(text);
            free(z);
            return kinv_error(err, "cannot compress '%s': %s", path, ZSTD_getErrorName(r));
        }
        data = z;
        size = r;
    }
    int rc = 0;
    struct stat st;
    int special = !strcmp(path, "-") || (!stat(path, &st) && !S_ISREG(st.st_mode));
    if (special) {
        /* standard output, a device or a pipe: write in place, never rename
           over it (a rename onto /dev/null would replace the device) */
        int fd = strcmp(path, "-") ? open(path, O_WRONLY | O_CLOEXEC) : STDOUT_FILENO;
        if (fd < 0)
            rc = kinv_error(err, "cannot open '%s': %s", path, strerror(errno));
        else if (kat_write_all(fd, data, size))
            rc = kinv_error(err, "cannot write the inventory to '%s': %s", path, strerror(errno));
        if (fd >= 0 && fd != STDOUT_FILENO)
            close(fd);
    } else {
        /* a regular file: write beside it, then rename, so that a reader
           never sees half a file */
        char *tmp = malloc(plen + 32);
        if (!tmp) {
            rc = kinv_error(err, "out of memory");
        } else {
            snprintf(tmp, plen + 32, "%s.tmp%ld", path, (long)getpid());
            int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
            if (fd < 0) {
                rc = kinv_error(err, "cannot create '%s': %s", tmp, strerror(errno));
            } else {
                if (kat_write_all(fd, data, size) || fsync(fd))
                    rc = kinv_error(err, "cannot write '%s': %s", tmp, strerror(errno));
                if (close(fd) && !rc)
                    rc = kinv_error(err, "cannot write '%s': %s", tmp, strerror(errno));
                if (!rc && rename(tmp, path))
                    rc = kinv_error(err, "cannot rename '%s' to '%s': %s", tmp, path, strerror(errno));
                if (rc)
                    unlink(tmp);
            }
            free(tmp);
        }
    }
    free(text);
    free(z);
    return rc;
}
