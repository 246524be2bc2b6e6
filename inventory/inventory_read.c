/*
 * inventory_read.c - loading an inventory's sealed text form (internal.h,
 * "the sealed text form"; zstd or plain) and verifying it: every field and
 * the order of the records checked, the digest compared, errors named by
 * line and offset; and kinv_check_libraries, which checks the libraries an
 * inventory lists against the files on disk.  Apart from inventory.c (the
 * inventory in memory) and inventory_write.c (the writer): the reader takes
 * untrusted input, and its fuzz target (fuzz/inventory) covers this file.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define XXH_INLINE_ALL     /* as in inventory.c */
#include <xxhash.h>
#include <zstd.h>

#include "internal.h"
#include "safe_file.h"

struct parser {
    const char *name;       /* for messages */
    const char *text;
    size_t size;
    size_t pos;             /* start of the current line */
    size_t line;            /* 1-based */
    int compressed;
    struct kinv_err *err;
};

KINV_PRINTF(3, 4)
static int perr(struct parser *p, size_t at, const char *fmt, ...)
{
    char detail[700];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(detail, sizeof(detail), fmt, ap);
    va_end(ap);
    return kinv_error(p->err, "invalid inventory '%s': line %zu, offset %zu%s: %s", p->name, p->line,
                      at, p->compressed ? " of the decompressed text" : "", detail);
}

/* Splits the line at p->pos into at most max tab-separated fields. */
static int fields(struct parser *p, const char **f, size_t *flen, size_t max, size_t *count, size_t *next)
{
    const char *s = p->text + p->pos;
    const char *nl = memchr(s, '\n', p->size - p->pos);
    if (!nl)
        return perr(p, p->size, "the last line has no newline (truncated file?)");
    size_t n = 0;
    const char *q = s;
    for (;;) {
        const char *tab = memchr(q, '\t', (size_t)(nl - q));
        const char *end = tab ? tab : nl;
        if (n == max)
            return perr(p, (size_t)(q - p->text), "too many fields");
        f[n] = q;
        flen[n] = (size_t)(end - q);
        n++;
        if (!tab)
            break;
        q = tab + 1;
    }
    *count = n;
    *next = (size_t)(nl - p->text) + 1;
    return 0;
}

static int unhex(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    return -1;
}

/* Decodes an escaped field into the arena; rejects non-canonical escapes. */
static int unescape(struct parser *p, struct kinv_arena *a, const char *s, size_t n, char **out,
                    size_t *out_len)
{
    char *d = kinv_arena_alloc(a, n + 1, 1);
    if (!d)
        return perr(p, (size_t)(s - p->text), "out of memory");
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '\\') {
            int hi, lo;
            if (n - i < 4 || s[i + 1] != 'x' || (hi = unhex(s[i + 2])) < 0 || (lo = unhex(s[i + 3])) < 0)
                return perr(p, (size_t)(s + i - p->text), "bad escape");
            unsigned char v = (unsigned char)(hi << 4 | lo);
            if (!kinv_needs_escape(v))
                return perr(p, (size_t)(s + i - p->text), "needless escape of '%c'", v);
            d[k++] = (char)v;
            i += 3;
        } else if (kinv_needs_escape(c)) {
            return perr(p, (size_t)(s + i - p->text), "byte 0x%02x must be escaped", c);
        } else {
            d[k++] = (char)c;
        }
    }
    d[k] = 0;
    *out = d;
    *out_len = k;
    return 0;
}

static int parse_u64(const char *s, size_t n, uint64_t max, uint64_t *v)
{
    if (n == 0 || n > 20 || (n > 1 && s[0] == '0'))
        return -1;
    uint64_t x = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return -1;
        unsigned d = (unsigned)(s[i] - '0');
        if (x > (UINT64_MAX - d) / 10)
            return -1;
        x = x * 10 + d;
    }
    if (x > max)
        return -1;
    *v = x;
    return 0;
}

static int parse_hex16(const char *s, size_t n, uint8_t out[16])
{
    if (n != 32)
        return -1;
    for (int i = 0; i < 16; i++) {
        int hi = unhex(s[2 * i]), lo = unhex(s[2 * i + 1]);
        if (hi < 0 || lo < 0)
            return -1;
        out[i] = (uint8_t)(hi << 4 | lo);
    }
    return 0;
}

/* The first two lines: the magic and format version, and the digest, which
 * must be what the rest of the text hashes to.  *body_at: where the records
 * start. */
static int parse_header(struct parser *p, struct kinv_inventory *inv, size_t *body_at)
{
    char expect[64];
    int hlen = snprintf(expect, sizeof(expect), "%s %u\n", KINV_FILE_MAGIC, KINV_FORMAT_VERSION);
    size_t mlen = strlen(KINV_FILE_MAGIC);
    p->line = 1;
    if (p->size < mlen + 1 || memcmp(p->text, KINV_FILE_MAGIC " ", mlen + 1))
        return perr(p, 0, "not an inventory file (no '%s' header)", KINV_FILE_MAGIC);
    if (p->size < (size_t)hlen || memcmp(p->text, expect, (size_t)hlen))
        return perr(p, mlen + 1, "unsupported format version (this build reads version %u)",
                    KINV_FORMAT_VERSION);
    p->pos = (size_t)hlen;
    p->line = 2;
    static const char dig[] = "digest xxh3-128 ";
    size_t dlen = sizeof(dig) - 1;
    if (p->size - p->pos < dlen + 33 || memcmp(p->text + p->pos, dig, dlen) ||
        p->text[p->pos + dlen + 32] != '\n')
        return perr(p, p->pos, "expected 'digest xxh3-128 <32 hex digits>'");
    uint8_t want[16];
    if (parse_hex16(p->text + p->pos + dlen, 32, want))
        return perr(p, p->pos + dlen, "bad digest");
    size_t body = p->pos + dlen + 33;
    *body_at = body;

    XXH3_state_t *st = XXH3_createState();
    if (!st)
        return perr(p, 0, "out of memory");
    XXH3_128bits_reset(st);
    XXH3_128bits_update(st, p->text, (size_t)hlen);
    XXH3_128bits_update(st, p->text + body, p->size - body);
    XXH128_canonical_t c;
    XXH128_canonicalFromHash(&c, XXH3_128bits_digest(st));
    XXH3_freeState(st);
    if (memcmp(c.digest, want, 16)) {
        char h1[33], h2[33];
        kinv_digest_hex(want, h1);
        kinv_digest_hex(c.digest, h2);
        return perr(p, p->pos + dlen, "digest mismatch: the file says %s, its content hashes to %s", h1, h2);
    }
    memcpy(inv->digest, want, 16);
    inv->have_digest = 1;
    return 0;
}

/* What the records read so far leave: the arrays' capacities, and the
 * section reached (0 meta, 1 libraries, 2 modules, 3 entries; never back). */
struct records {
    size_t cap_meta, cap_libs, cap_entries, cap_mods;
    int section;
};

/* M <key> <value>: sorted by key, before every other record. */
static int parse_meta(struct parser *p, struct kinv_inventory *inv, struct records *r,
                      const char **f, const size_t *fl, size_t nf, size_t at)
{
    if (r->section > 0)
        return perr(p, at, "M record after L or E records");
    if (nf != 3)
        return perr(p, at, "an M record has 3 fields, this one %zu", nf);
    struct kinv_meta m;
    size_t kl, vl;
    if (unescape(p, inv->arena, f[1], fl[1], &m.key, &kl) ||
        unescape(p, inv->arena, f[2], fl[2], &m.value, &vl))
        return -1;
    if (kl == 0 || strlen(m.key) != kl || strlen(m.value) != vl)
        return perr(p, at, "empty key or NUL byte in an M record");
    if (inv->n_meta && strcmp(inv->meta[inv->n_meta - 1].key, m.key) >= 0)
        return perr(p, at, "M records not sorted by key, or a key repeats");
    if (kinv_grow((void **)&inv->meta, &r->cap_meta, inv->n_meta + 1, sizeof(m)))
        return perr(p, at, "out of memory");
    inv->meta[inv->n_meta++] = m;
    return 0;
}

/* L <index> <xxh3-128> <size> <soname> <path>: numbered in order, sorted by path. */
static int parse_library(struct parser *p, struct kinv_inventory *inv, struct records *r,
                         const char **f, const size_t *fl, size_t nf, size_t at)
{
    if (r->section > 1)
        return perr(p, at, "L record after C or E records");
    r->section = 1;
    if (nf != 6)
        return perr(p, at, "an L record has 6 fields, this one %zu", nf);
    uint64_t idx;
    struct kinv_library l = { 0 };
    if (parse_u64(f[1], fl[1], UINT32_MAX - 1, &idx) || idx != inv->n_libs)
        return perr(p, (size_t)(f[1] - p->text), "library index must be %zu", inv->n_libs);
    if (parse_hex16(f[2], fl[2], l.digest))
        return perr(p, (size_t)(f[2] - p->text), "bad library digest");
    if (parse_u64(f[3], fl[3], UINT64_MAX, &l.size))
        return perr(p, (size_t)(f[3] - p->text), "bad library size");
    size_t sl, pl;
    if (fl[4]) {
        if (unescape(p, inv->arena, f[4], fl[4], &l.soname, &sl))
            return -1;
        if (strlen(l.soname) != sl)
            return perr(p, (size_t)(f[4] - p->text), "NUL byte in a soname");
    }
    if (unescape(p, inv->arena, f[5], fl[5], &l.path, &pl))
        return -1;
    if (pl == 0 || strlen(l.path) != pl)
        return perr(p, (size_t)(f[5] - p->text), "empty path or NUL byte in a path");
    if (inv->n_libs && strcmp(inv->libs[inv->n_libs - 1].path, l.path) >= 0)
        return perr(p, at, "L records not sorted by path, or a path repeats");
    if (kinv_grow((void **)&inv->libs, &r->cap_libs, inv->n_libs + 1, sizeof(l)))
        return perr(p, at, "out of memory");
    inv->libs[inv->n_libs++] = l;
    return 0;
}

/* C <xxh3-128> <library>[e] <target>: sorted by (digest, library, target). */
static int parse_module(struct parser *p, struct kinv_inventory *inv, struct records *r,
                        const char **f, const size_t *fl, size_t nf, size_t at)
{
    if (r->section > 2)
        return perr(p, at, "C record after E records");
    r->section = 2;
    if (nf != 4)
        return perr(p, at, "a C record has 4 fields, this one %zu", nf);
    struct kinv_module m = { 0 };
    if (parse_hex16(f[1], fl[1], m.digest))
        return perr(p, (size_t)(f[1] - p->text), "bad module digest");
    size_t ll = fl[2];
    m.embedded = ll > 0 && f[2][ll - 1] == 'e';
    uint64_t v;
    if (parse_u64(f[2], ll - m.embedded, UINT32_MAX, &v) || v >= inv->n_libs)
        return perr(p, (size_t)(f[2] - p->text), "bad or undefined library index");
    m.lib = (uint32_t)v;
    if (fl[3] == 6 && !memcmp(f[3], "fatbin", 6))
        m.target = 0;
    else if (kinv_target_parse(f[3], fl[3], &m.target) || (m.target >> 24) != KINV_TARGET_SM)
        return perr(p, (size_t)(f[3] - p->text), "bad target (a module is an sm_ cubin or a fatbin)");
    if (inv->n_modules) {
        const struct kinv_module *q = &inv->modules[inv->n_modules - 1];
        int order = memcmp(q->digest, m.digest, 16);
        if (order > 0 || (order == 0 && (q->lib > m.lib || (q->lib == m.lib && q->target >= m.target))))
            return perr(p, at, "C records not sorted by (digest, library, target), or one repeats");
    }
    if (kinv_grow((void **)&inv->modules, &r->cap_mods, inv->n_modules + 1, sizeof(m)))
        return perr(p, at, "out of memory");
    inv->modules[inv->n_modules++] = m;
    return 0;
}

/* An E record's library indices (s, n bytes, nlibs of them): ascending,
 * defined, and marked embedded ('e') only on cubin and ptx entries. */
static int parse_entry_libs(struct parser *p, const struct kinv_inventory *inv, uint8_t kind, const char *s,
                            size_t n, size_t nlibs, uint32_t *libs, uint8_t *emb)
{
    const char *end = s + n;
    for (size_t k = 0; k < nlibs; k++) {
        const char *comma = memchr(s, ',', (size_t)(end - s));
        const char *stop = comma ? comma : end;
        uint64_t v;
        emb[k] = stop > s && stop[-1] == 'e';
        if (emb[k] && kind != KINV_KIND_CUBIN && kind != KINV_KIND_PTX)
            return perr(p, (size_t)(s - p->text), "only cubin and ptx entries can be embedded");
        if (parse_u64(s, (size_t)(stop - s) - emb[k], UINT32_MAX, &v) || v >= inv->n_libs)
            return perr(p, (size_t)(s - p->text), "bad or undefined library index");
        if (k && v <= libs[k - 1])
            return perr(p, (size_t)(s - p->text), "library indices not ascending");
        libs[k] = (uint32_t)v;
        s = stop + 1;
    }
    return 0;
}

/* An E record's targets (s, n bytes, ntg of them): ascending. */
static int parse_entry_targets(struct parser *p, const char *s, size_t n, size_t ntg, uint32_t *tg)
{
    const char *end = s + n;
    for (size_t k = 0; k < ntg; k++) {
        const char *comma = memchr(s, ',', (size_t)(end - s));
        const char *stop = comma ? comma : end;
        uint32_t t;
        if (kinv_target_parse(s, (size_t)(stop - s), &t))
            return perr(p, (size_t)(s - p->text), "bad target");
        if (k && t <= tg[k - 1])
            return perr(p, (size_t)(s - p->text), "targets not ascending");
        tg[k] = t;
        s = stop + 1;
    }
    return 0;
}

/* E <name> <kind> <library indices> <targets>: sorted by (name, kind). */
static int parse_entry(struct parser *p, struct kinv_inventory *inv, struct records *r,
                       const char **f, const size_t *fl, size_t nf, size_t at)
{
    r->section = 3;
    if (nf != 5)
        return perr(p, at, "an E record has 5 fields, this one %zu", nf);
    struct kinv_entry e = { 0 };
    char *name;
    size_t nl;
    if (unescape(p, inv->arena, f[1], fl[1], &name, &nl))
        return -1;
    if (nl == 0 || nl > UINT32_MAX)
        return perr(p, (size_t)(f[1] - p->text), "empty name");
    e.name = name;
    e.name_len = (uint32_t)nl;
    char kind[16];
    if (fl[2] == 0 || fl[2] >= sizeof(kind) || memchr(f[2], 0, fl[2]))
        return perr(p, (size_t)(f[2] - p->text), "bad kind");
    memcpy(kind, f[2], fl[2]);
    kind[fl[2]] = 0;
    e.kind = (uint8_t)kinv_kind_parse(kind);
    if (!e.kind)
        return perr(p, (size_t)(f[2] - p->text), "unknown kind '%s'", kind);
    if (e.kind == KINV_KIND_PATTERN && kinv_pattern_check(e.name, e.name_len))
        return perr(p, (size_t)(f[1] - p->text), "invalid pattern");
    /* library indices: ascending, unique, defined, at least one */
    size_t nlibs = 1, ntg = fl[4] ? 1 : 0;
    for (size_t i = 0; i < fl[3]; i++)
        nlibs += f[3][i] == ',';
    for (size_t i = 0; i < fl[4]; i++)
        ntg += f[4][i] == ',';
    if (fl[3] == 0)
        return perr(p, (size_t)(f[3] - p->text), "an entry names no library");
    uint32_t *libs = kinv_arena_alloc(inv->arena, nlibs * sizeof(uint32_t), 4);
    uint32_t *tg = kinv_arena_alloc(inv->arena, (ntg ? ntg : 1) * sizeof(uint32_t), 4);
    uint8_t *emb = kinv_arena_alloc(inv->arena, nlibs, 1);
    if (!libs || !tg || !emb)
        return perr(p, at, "out of memory");
    if (parse_entry_libs(p, inv, e.kind, f[3], fl[3], nlibs, libs, emb) ||
        parse_entry_targets(p, f[4], fl[4], ntg, tg))
        return -1;
    if (e.kind == KINV_KIND_PATTERN && ntg)
        return perr(p, (size_t)(f[4] - p->text), "a pattern has no targets");
    e.libs = libs;
    e.lib_embedded = emb;
    e.n_libs = (uint32_t)nlibs;
    e.targets = tg;
    e.n_targets = (uint32_t)ntg;
    if (inv->n_entries && kinv_entry_cmp(&inv->entries[inv->n_entries - 1], &e) >= 0)
        return perr(p, at, "E records not sorted by (name, kind), or an entry repeats");
    if (inv->n_entries >= UINT32_MAX - 1)
        return perr(p, at, "too many entries");
    if (kinv_grow((void **)&inv->entries, &r->cap_entries, inv->n_entries + 1, sizeof(e)))
        return perr(p, at, "out of memory");
    inv->entries[inv->n_entries++] = e;
    return 0;
}

static int parse_text(struct parser *p, struct kinv_inventory *inv)
{
    size_t body;
    if (parse_header(p, inv, &body))
        return -1;
    struct records r = { 0 };
    p->pos = body;
    p->line = 3;
    while (p->pos < p->size) {
        const char *f[8];
        size_t fl[8], nf = 0, next = 0;
        if (fields(p, f, fl, 8, &nf, &next))
            return -1;
        size_t at = p->pos;
        if (fl[0] != 1)
            return perr(p, at, "unknown record type '%.*s'", (int)(fl[0] > 20 ? 20 : fl[0]), f[0]);
        int rc;
        switch (f[0][0]) {
        case 'M': rc = parse_meta(p, inv, &r, f, fl, nf, at); break;
        case 'L': rc = parse_library(p, inv, &r, f, fl, nf, at); break;
        case 'C': rc = parse_module(p, inv, &r, f, fl, nf, at); break;
        case 'E': rc = parse_entry(p, inv, &r, f, fl, nf, at); break;
        default:
            return perr(p, at, "unknown record type '%c'", f[0][0]);
        }
        if (rc)
            return -1;
        p->pos = next;
        p->line++;
    }
    return 0;
}

static int zstd_decompress(const void *data, size_t size, const char *name, char **out,
                           size_t *out_len, struct kinv_err *err)
{
    ZSTD_DStream *ds = ZSTD_createDStream();
    if (!ds)
        return kinv_error(err, "out of memory");
    ZSTD_initDStream(ds);
    size_t cap = 1 << 20, len = 0;
    char *buf = malloc(cap);
    ZSTD_inBuffer in = { data, size, 0 };
    size_t r = 1;
    while (buf) {
        if (len == cap) {
            if (cap >= KINV_MAX_INVENTORY_SIZE) {
                free(buf);
                ZSTD_freeDStream(ds);
                return kinv_error(err, "cannot load inventory '%s': decompressed text exceeds %llu bytes",
                                  name, (unsigned long long)KINV_MAX_INVENTORY_SIZE);
            }
            char *nb = realloc(buf, cap * 2);
            if (!nb)
                break;
            buf = nb;
            cap *= 2;
        }
        ZSTD_outBuffer o = { buf, cap, len };
        r = ZSTD_decompressStream(ds, &o, &in);
        len = o.pos;
        if (ZSTD_isError(r)) {
            free(buf);
            ZSTD_freeDStream(ds);
            return kinv_error(err, "cannot load inventory '%s': corrupt ZSTD data at offset %zu: %s",
                              name, in.pos, ZSTD_getErrorName(r));
        }
        if (in.pos == in.size && len < cap)
            break;
    }
    ZSTD_freeDStream(ds);
    if (!buf)
        return kinv_error(err, "out of memory");
    if (r != 0) {
        free(buf);
        return kinv_error(err, "cannot load inventory '%s': truncated ZSTD data at offset %zu", name, size);
    }
    *out = buf;
    *out_len = len;
    return 0;
}

int kinv_load_buffer(const void *data, size_t size, const char *name, struct kinv_inventory **out,
                     struct kinv_err *err)
{
    static const uint8_t zmagic[4] = { 0x28, 0xb5, 0x2f, 0xfd };
    char *plain = NULL;
    size_t plen = size;
    const char *text = data;
    int compressed = size >= 4 && !memcmp(data, zmagic, 4);
    if (compressed) {
        if (zstd_decompress(data, size, name, &plain, &plen, err))
            return -1;
        text = plain;
    }
    struct kinv_inventory *inv = kinv_new();
    if (!inv) {
        free(plain);
        return kinv_error(err, "out of memory");
    }
    struct parser p = { name, text, plen, 0, 0, compressed, err };
    int rc = parse_text(&p, inv);
    free(plain);
    if (rc == 0)
        rc = kinv_index(inv, err);
    if (rc) {
        kinv_free(inv);
        return -1;
    }
    *out = inv;
    return 0;
}

int kinv_load(const char *path, struct kinv_inventory **out, struct kinv_err *err)
{
    /* O_NONBLOCK + fstat (safe_file.h): a FIFO is refused, never waited on. */
    char detail[4096 + 128];
    int fd = kat_open_input(path, 0, NULL, detail, sizeof detail);
    if (fd < 0 && errno == EINVAL) /* not a regular file: named by detail */
        return kinv_error(err, "cannot load inventory: %s", detail);
    if (fd < 0)
        return kinv_error(err, "cannot open inventory '%s': %s", path, strerror(errno));
    struct stat st;
    if (fstat(fd, &st)) {
        close(fd);
        return kinv_error(err, "cannot load inventory '%s': %s", path, strerror(errno));
    }
    if ((uint64_t)st.st_size > KINV_MAX_INVENTORY_SIZE) {
        close(fd);
        return kinv_error(err, "cannot load inventory '%s': %lld bytes is too large", path,
                          (long long)st.st_size);
    }
    size_t size = (size_t)st.st_size;
    char *buf = malloc(size ? size : 1);
    if (!buf) {
        close(fd);
        return kinv_error(err, "out of memory");
    }
    size_t got = 0;
    while (got < size) {
        ssize_t r = read(fd, buf + got, size - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0) {
            int e = r < 0 ? errno : EIO;
            free(buf);
            close(fd);
            return kinv_error(err, "cannot read inventory '%s' at offset %zu: %s", path, got, strerror(e));
        }
        got += (size_t)r;
    }
    close(fd);
    int rc = kinv_load_buffer(buf, size, path, out, err);
    free(buf);
    return rc;
}

int kinv_check_libraries(const struct kinv_inventory *inv, struct kinv_err *err)
{
    for (size_t i = 0; i < inv->n_libs; i++) {
        const struct kinv_library *l = &inv->libs[i];
        char detail[4096 + 128];
        int fd = kat_open_input(l->path, 0, NULL, detail, sizeof detail);
        struct stat st;
        if (fd < 0 || fstat(fd, &st)) {
            int e = errno;
            if (fd >= 0)
                close(fd);
            else if (e == EINVAL)
                return kinv_error(err, "library listed by the inventory cannot be read: %s", detail);
            return kinv_error(err, "library '%s' listed by the inventory cannot be read: %s", l->path,
                              strerror(e));
        }
        if ((uint64_t)st.st_size != l->size) {
            close(fd);
            return kinv_error(err, "library '%s' has %lld bytes, the inventory says %llu", l->path,
                              (long long)st.st_size, (unsigned long long)l->size);
        }
        uint8_t d[16];
        if (st.st_size == 0) {
            kinv_digest("", 0, d);
        } else {
            void *p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
            if (p == MAP_FAILED) {
                int e = errno;
                close(fd);
                return kinv_error(err, "cannot map '%s': %s", l->path, strerror(e));
            }
            kinv_digest(p, (size_t)st.st_size, d);
            munmap(p, (size_t)st.st_size);
        }
        close(fd);
        if (memcmp(d, l->digest, 16)) {
            char h1[33], h2[33];
            kinv_digest_hex(l->digest, h1);
            kinv_digest_hex(d, h2);
            return kinv_error(err, "library '%s' has xxh3-128 %s, the inventory says %s", l->path, h2, h1);
        }
    }
    return 0;
}
