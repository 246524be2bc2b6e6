/* util.c - errors, arenas, digests, kinds and targets. */
#include <stdio.h>
#include <stdlib.h>

#include <xxhash.h>

#include "internal.h"

int kinv_error(struct kinv_err *err, const char *fmt, ...)
{
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
        va_end(ap);
    }
    return -1;
}

/* ---- arena ------------------------------------------------------------------ */

struct kinv_arena_block {
    struct kinv_arena_block *next;
    size_t used, size;
    max_align_t data[];
};

struct kinv_arena {
    struct kinv_arena_block *head;
};

struct kinv_arena *kinv_arena_new(void)
{
    return calloc(1, sizeof(struct kinv_arena));
}

void kinv_arena_free(struct kinv_arena *a)
{
    if (!a)
        return;
    struct kinv_arena_block *b = a->head;
    while (b) {
        struct kinv_arena_block *next = b->next;
        free(b);
        b = next;
    }
    free(a);
}

void *kinv_arena_alloc(struct kinv_arena *a, size_t size, size_t align)
{
    struct kinv_arena_block *b = a->head;
    if (align == 0)
        align = 1;
    if (b) {
        size_t at = (b->used + align - 1) & ~(align - 1);
        if (at <= b->size && size <= b->size - at) {
            b->used = at + size;
            return (char *)b->data + at;
        }
    }
    size_t bsize = 1u << 20;
    if (size + align > bsize)
        bsize = size + align;
    b = malloc(sizeof(*b) + bsize);
    if (!b)
        return NULL;
    b->size = bsize;
    b->used = size;
    b->next = a->head;
    a->head = b;
    return b->data;
}

char *kinv_arena_strndup(struct kinv_arena *a, const char *s, size_t len)
{
    char *p = kinv_arena_alloc(a, len + 1, 1);
    if (!p)
        return NULL;
    memcpy(p, s, len);
    p[len] = 0;
    return p;
}

int kinv_grow(void **items, size_t *cap, size_t need, size_t item_size)
{
    if (need <= *cap)
        return 0;
    size_t ncap = *cap ? *cap : 16;
    while (ncap < need) {
        if (ncap > SIZE_MAX / 2 / item_size)
            return -1;
        ncap *= 2;
    }
    void *p = realloc(*items, ncap * item_size);
    if (!p)
        return -1;
    *items = p;
    *cap = ncap;
    return 0;
}

/* ---- digests -------------------------------------------------------------- */

void kinv_digest(const void *data, size_t len, uint8_t out[16])
{
    XXH128_hash_t h = XXH3_128bits(data, len);
    XXH128_canonical_t c;
    XXH128_canonicalFromHash(&c, h);
    memcpy(out, c.digest, 16);
}

void kinv_digest_from_halves(uint64_t lo, uint64_t hi, uint8_t out[16])
{
    XXH128_hash_t h = { .low64 = lo, .high64 = hi };
    XXH128_canonical_t c;
    XXH128_canonicalFromHash(&c, h);
    memcpy(out, c.digest, 16);
}

void kinv_digest_hex(const uint8_t digest[16], char buf[33])
{
    static const char hex[] = "0123456789abcdef";
    for (int i = 0; i < 16; i++) {
        buf[2 * i] = hex[digest[i] >> 4];
        buf[2 * i + 1] = hex[digest[i] & 15];
    }
    buf[32] = 0;
}

/* ---- kinds and targets ------------------------------------------------------ */

static const char *const kind_names[KINV_KIND_MAX + 1] = {
    NULL, "cubin", "ptx", "observed", "pattern",
};

const char *kinv_kind_name(unsigned kind)
{
    return kind >= 1 && kind <= KINV_KIND_MAX ? kind_names[kind] : "?";
}

unsigned kinv_kind_parse(const char *text)
{
    for (unsigned k = 1; k <= KINV_KIND_MAX; k++)
        if (!strcmp(text, kind_names[k]))
            return k;
    return 0;
}

int kinv_target_format(uint32_t target, char *buf, size_t size)
{
    unsigned family = target >> 24, arch = (target >> 8) & 0xffff, suffix = target & 0xff;
    const char *prefix = family == KINV_TARGET_SM ? "sm_" : family == KINV_TARGET_COMPUTE ? "compute_" : NULL;
    if (!prefix || (suffix && suffix != 'a' && suffix != 'f'))
        return -1;
    int n = snprintf(buf, size, "%s%u%s", prefix, arch, suffix == 'a' ? "a" : suffix == 'f' ? "f" : "");
    return n < 0 || (size_t)n >= size ? -1 : n;
}

int kinv_target_parse(const char *text, size_t len, uint32_t *target)
{
    unsigned family;
    size_t i;
    if (len > 3 && !memcmp(text, "sm_", 3)) {
        family = KINV_TARGET_SM;
        i = 3;
    } else if (len > 8 && !memcmp(text, "compute_", 8)) {
        family = KINV_TARGET_COMPUTE;
        i = 8;
    } else {
        return -1;
    }
    /* canonical decimal: no leading zero, at most 5 digits, below 65536 */
    if (text[i] < '1' || text[i] > '9')
        return -1;
    unsigned arch = 0;
    size_t digits = 0;
    while (i < len && text[i] >= '0' && text[i] <= '9') {
        arch = arch * 10 + (unsigned)(text[i] - '0');
        if (++digits > 5 || arch > 0xffff)
            return -1;
        i++;
    }
    unsigned suffix = 0;
    if (i < len && (text[i] == 'a' || text[i] == 'f'))
        suffix = (unsigned char)text[i++];
    if (i != len)
        return -1;
    *target = kinv_target_pack(family, arch, suffix);
    return 0;
}
