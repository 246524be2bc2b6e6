/*
 * fatbin.c - fatbin containers and their entries.
 *
 * Layout (public descriptions: cubloaty fatbin.py, jiegec/fatbinary,
 * nvopen-tools FORMAT_SPECIFICATION.md), little-endian:
 *   container header, 16 bytes: u32 magic 0xBA55ED50, u16 version (1),
 *     u16 header size, u64 size of the entries that follow the header.
 *   entry header, header-size bytes (64, 80, 104, 112, 144... seen): u16 kind
 *     (1 PTX, 2 cubin), u16 version, u32 header size, u64 payload size padded
 *     to 8, u32 compressed size @0x10, u32 arch @0x1c, u64 flags @0x28,
 *     u64 decompressed size @0x38; the payload follows the header.
 *   flags: 0x2000 LZ4, 0x8000 ZSTD, 0x100000 "a" target, 0x200000 "f" target.
 * Every size is checked against the bytes that exist before it is used.
 */
#define _GNU_SOURCE
#include <stdlib.h>

#include <lz4.h>
#include <lz4frame.h>
#include <zstd.h>

#include "internal.h"

static const uint8_t lz4_frame_magic[4] = { 0x04, 0x22, 0x4d, 0x18 };

/* Reads the entry header at e; 0 when it is well-formed and fits in [e, end). */
static int read_entry(const uint8_t *image, uint64_t e, uint64_t end, int strict,
                      struct kinv_fatbin_entry *out, struct kinv_err *err)
{
    if (end - e < KINV_FATBIN_ENTRY_MIN)
        return strict ? kinv_error(err, "truncated fatbin entry header at offset 0x%llx "
                                   "(%llu bytes left in the container)",
                                   (unsigned long long)e, (unsigned long long)(end - e)) : 1;
    const uint8_t *p = image + e;
    struct kinv_fatbin_entry x = { 0 };
    x.offset = e;
    x.kind = kinv_rd16(p);
    uint16_t version = kinv_rd16(p + 2);
    x.header_size = kinv_rd32(p + 4);
    uint64_t padded = kinv_rd64(p + 8);
    uint32_t csize = kinv_rd32(p + 0x10);
    x.arch = kinv_rd32(p + 0x1c);
    x.flags = kinv_rd64(p + 0x28);
    uint64_t dsize = kinv_rd64(p + 0x38);

    if (!strict && (version != 0x0101 || x.kind == 0))
        return 1;
    if (x.header_size < KINV_FATBIN_ENTRY_MIN || x.header_size > end - e)
        return strict ? kinv_error(err, "fatbin entry at offset 0x%llx: header size %u does not fit "
                                   "(%llu bytes left in the container)", (unsigned long long)e,
                                   x.header_size, (unsigned long long)(end - e)) : 1;
    if (padded > end - e - x.header_size)
        return strict ? kinv_error(err, "fatbin entry at offset 0x%llx: payload of %llu bytes runs "
                                   "past the container end at offset 0x%llx", (unsigned long long)e,
                                   (unsigned long long)padded, (unsigned long long)end) : 1;
    if (x.arch == 0 || x.arch > 0xffff)
        return strict ? kinv_error(err, "fatbin entry at offset 0x%llx: implausible architecture %u",
                                   (unsigned long long)e, x.arch) : 1;
    x.payload_offset = e + x.header_size;
    x.padded_size = padded;
    if (x.flags & (KINV_FATBIN_FLAG_ZSTD | KINV_FATBIN_FLAG_LZ4)) {
        if (csize == 0 || csize > padded)
            return strict ? kinv_error(err, "fatbin entry at offset 0x%llx: compressed size %u does "
                                       "not fit its payload of %llu bytes", (unsigned long long)e,
                                       csize, (unsigned long long)padded) : 1;
        if (dsize == 0 || dsize > KINV_MAX_ENTRY_SIZE)
            return strict ? kinv_error(err, "fatbin entry at offset 0x%llx: implausible decompressed "
                                       "size %llu", (unsigned long long)e,
                                       (unsigned long long)dsize) : 1;
        x.stored_size = csize;
        x.size = dsize;
        if (x.flags & KINV_FATBIN_FLAG_ZSTD)
            x.compression = KINV_COMP_ZSTD;
        else if (csize >= 4 && !memcmp(image + x.payload_offset, lz4_frame_magic, 4))
            x.compression = KINV_COMP_LZ4F;
        else
            x.compression = KINV_COMP_LZ4;
    } else {
        x.stored_size = x.size = padded;
        x.compression = KINV_COMP_NONE;
    }
    *out = x;
    return 0;
}

int kinv_fatbin_parse(const uint8_t *image, uint64_t off, uint64_t limit, int strict,
                      kinv_entry_fn fn, void *ctx, uint64_t *endp, struct kinv_err *err)
{
    if (off > limit || limit - off < KINV_FATBIN_HEADER_SIZE)
        return strict ? kinv_error(err, "truncated fatbin container header at offset 0x%llx",
                                   (unsigned long long)off) : 1;
    const uint8_t *p = image + off;
    if (kinv_rd32(p) != KINV_FATBIN_MAGIC)
        return strict ? kinv_error(err, "no fatbin container magic at offset 0x%llx",
                                   (unsigned long long)off) : 1;
    uint16_t version = kinv_rd16(p + 4);
    uint16_t hsize = kinv_rd16(p + 6);
    uint64_t fsize = kinv_rd64(p + 8);
    if (version != 1)
        return strict ? kinv_error(err, "fatbin container at offset 0x%llx: unsupported version %u",
                                   (unsigned long long)off, version) : 1;
    if (hsize < KINV_FATBIN_HEADER_SIZE || (!strict && hsize != KINV_FATBIN_HEADER_SIZE) ||
        hsize > limit - off)
        return strict ? kinv_error(err, "fatbin container at offset 0x%llx: bad header size %u",
                                   (unsigned long long)off, hsize) : 1;
    if (fsize > limit - off - hsize)
        return strict ? kinv_error(err, "truncated fatbin container at offset 0x%llx: it claims "
                                   "%llu bytes, %llu are left", (unsigned long long)off,
                                   (unsigned long long)fsize,
                                   (unsigned long long)(limit - off - hsize)) : 1;
    uint64_t start = off + hsize, end = start + fsize;

    /* Validate every entry before reporting any: a candidate found by magic
       is either a whole container or nothing. */
    size_t n = 0;
    for (uint64_t e = start; e < end; n++) {
        struct kinv_fatbin_entry x;
        int rc = read_entry(image, e, end, strict, &x, err);
        if (rc)
            return rc;
        e = x.payload_offset + x.padded_size;
    }
    if (!strict && n == 0)
        return 1;
    if (fn) {
        for (uint64_t e = start; e < end;) {
            struct kinv_fatbin_entry x;
            if (read_entry(image, e, end, 1, &x, err))
                return -1;
            if (fn(ctx, &x))
                return -1;
            e = x.payload_offset + x.padded_size;
        }
    }
    *endp = end;
    return 0;
}

int kinv_fatbin_parse_section(const uint8_t *image, uint64_t start, uint64_t end,
                              kinv_entry_fn fn, kinv_container_fn cfn, void *ctx,
                              uint32_t *containers, struct kinv_err *err)
{
    uint64_t off = start;
    while (off < end) {
        if (image[off] == 0) {          /* alignment padding between containers */
            off++;
            continue;
        }
        if (end - off < 4 || kinv_rd32(image + off) != KINV_FATBIN_MAGIC)
            return kinv_error(err, "unexpected bytes in .nv_fatbin at offset 0x%llx "
                              "(no container magic)", (unsigned long long)off);
        uint64_t next;
        if (kinv_fatbin_parse(image, off, end, 1, fn, ctx, &next, err))
            return -1;
        if (cfn && cfn(ctx, off, next))
            return -1;
        (*containers)++;
        off = next;
    }
    return 0;
}

int kinv_fatbin_scan(const uint8_t *image, uint64_t start, uint64_t end, kinv_entry_fn fn,
                     kinv_container_fn cfn, void *ctx, uint32_t *containers, uint32_t *rejected,
                     struct kinv_err *err)
{
    static const uint8_t magic[4] = { 0x50, 0xed, 0x55, 0xba };
    uint64_t off = start;
    while (off < end) {
        const uint8_t *hit = memmem(image + off, end - off, magic, 4);
        if (!hit)
            break;
        uint64_t at = (uint64_t)(hit - image), next;
        int rc = kinv_fatbin_parse(image, at, end, 0, fn, ctx, &next, err);
        if (rc < 0)
            return -1;
        if (rc == 0) {
            if (cfn && cfn(ctx, at, next))
                return -1;
            (*containers)++;
            off = next;
        } else {
            (*rejected)++;
            off = at + 1;
        }
    }
    return 0;
}

/* ---- decompression ------------------------------------------------------------ */

struct kinv_decoder {
    ZSTD_DCtx *zstd;
    LZ4F_dctx *lz4f;
    uint8_t *buf;
    size_t cap;
};

struct kinv_decoder *kinv_decoder_new(void)
{
    struct kinv_decoder *d = calloc(1, sizeof(*d));
    if (!d)
        return NULL;
    d->zstd = ZSTD_createDCtx();
    if (!d->zstd) {
        free(d);
        return NULL;
    }
    return d;
}

void kinv_decoder_free(struct kinv_decoder *d)
{
    if (!d)
        return;
    ZSTD_freeDCtx(d->zstd);
    if (d->lz4f)
        LZ4F_freeDecompressionContext(d->lz4f);
    free(d->buf);
    free(d);
}

static int reserve(struct kinv_decoder *d, size_t size)
{
    if (size <= d->cap)
        return 0;
    size_t ncap = d->cap ? d->cap : 1 << 20;
    while (ncap < size)
        ncap *= 2;
    free(d->buf);
    d->buf = malloc(ncap);
    d->cap = d->buf ? ncap : 0;
    return d->buf ? 0 : -1;
}

int kinv_decode_entry(struct kinv_decoder *d, const uint8_t *image, const struct kinv_fatbin_entry *e,
                      const uint8_t **data, size_t *size, struct kinv_err *err)
{
    const uint8_t *src = image + e->payload_offset;
    unsigned long long at = (unsigned long long)e->offset;
    if (e->compression == KINV_COMP_NONE) {
        *data = src;
        *size = e->size;
        return 0;
    }
    if (reserve(d, e->size))
        return kinv_error(err, "fatbin entry at offset 0x%llx: out of memory for %llu bytes", at,
                          (unsigned long long)e->size);
    size_t got = 0;
    switch (e->compression) {
    case KINV_COMP_ZSTD: {
        size_t r = ZSTD_decompressDCtx(d->zstd, d->buf, e->size, src, e->stored_size);
        if (ZSTD_isError(r))
            return kinv_error(err, "fatbin entry at offset 0x%llx: corrupt ZSTD payload at offset "
                              "0x%llx: %s", at, (unsigned long long)e->payload_offset,
                              ZSTD_getErrorName(r));
        got = r;
        break;
    }
    case KINV_COMP_LZ4: {
        if (e->stored_size > INT32_MAX || e->size > INT32_MAX)
            return kinv_error(err, "fatbin entry at offset 0x%llx: LZ4 payload too large", at);
        int r = LZ4_decompress_safe((const char *)src, (char *)d->buf, (int)e->stored_size, (int)e->size);
        if (r < 0)
            return kinv_error(err, "fatbin entry at offset 0x%llx: corrupt LZ4 payload at offset 0x%llx",
                              at, (unsigned long long)e->payload_offset);
        got = (size_t)r;
        break;
    }
    case KINV_COMP_LZ4F: {
        if (!d->lz4f && LZ4F_isError(LZ4F_createDecompressionContext(&d->lz4f, LZ4F_VERSION)))
            return kinv_error(err, "out of memory for an LZ4 decoder");
        LZ4F_resetDecompressionContext(d->lz4f);
        size_t in_done = 0;
        while (in_done < e->stored_size && got < e->size) {
            size_t in = e->stored_size - in_done, out = e->size - got;
            size_t r = LZ4F_decompress(d->lz4f, d->buf + got, &out, src + in_done, &in, NULL);
            if (LZ4F_isError(r))
                return kinv_error(err, "fatbin entry at offset 0x%llx: corrupt LZ4 frame at offset "
                                  "0x%llx: %s", at, (unsigned long long)(e->payload_offset + in_done),
                                  LZ4F_getErrorName(r));
            if (in == 0 && out == 0)
                break;
            in_done += in;
            got += out;
            if (r == 0)
                break;
        }
        break;
    }
    default:
        return kinv_error(err, "fatbin entry at offset 0x%llx: unknown compression", at);
    }
    if (got != e->size)
        return kinv_error(err, "fatbin entry at offset 0x%llx: payload decompressed to %zu bytes, "
                          "the header says %llu", at, got, (unsigned long long)e->size);
    *data = d->buf;
    *size = got;
    return 0;
}
