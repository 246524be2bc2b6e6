/*
 * fuzz_fatbin.c - fatbin containers without a host ELF around them: the
 * strict section parser, the magic scanner, every entry decompressed and
 * read as a cubin or PTX.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

struct ctx {
    const uint8_t *image;
    struct kinv_decoder *dec;
};

static int on_name(void *c, const char *name, size_t len)
{
    (void)c;
    (void)name;
    (void)len;
    return 0;
}

static int on_entry(void *c, const struct kinv_fatbin_entry *e)
{
    struct ctx *x = c;
    struct kinv_err err;
    const uint8_t *data;
    size_t size;
    if (kinv_decode_entry(x->dec, x->image, e, &data, &size, &err))
        return 0;
    if (e->kind == 2) {
        uint8_t *copy = malloc(size ? size : 1);     /* libelf wants an aligned, writable image */
        memcpy(copy, data, size);
        kinv_cubin_entries(copy, size, on_name, NULL, &err);
        free(copy);
    } else if (e->kind == 1) {
        kinv_ptx_entries((const char *)data, size, on_name, NULL);
    }
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    uint8_t *image = malloc(size ? size : 1);
    memcpy(image, data, size);
    struct ctx x = { image, kinv_decoder_new() };
    struct kinv_err err;
    uint32_t containers = 0, rejected = 0;
    kinv_fatbin_parse_section(image, 0, size, on_entry, NULL, &x, &containers, &err);
    containers = 0;
    kinv_fatbin_scan(image, 0, size, on_entry, NULL, &x, &containers, &rejected, &err);
    kinv_scan_format_strings(image, size, on_name, NULL);
    kinv_decoder_free(x.dec);
    free(image);
    return 0;
}
