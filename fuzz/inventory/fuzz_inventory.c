/*
 * fuzz_inventory.c - the sealed inventory reader.  Each input is loaded as
 * it is, and once more with its digest line recomputed, so that mutations
 * get past the digest to the structural checks.  Anything the reader
 * accepts is canonical: written back, it is the same bytes, and lookups of
 * its names work.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static void check(const uint8_t *data, size_t size)
{
    struct kinv_inventory *inv;
    struct kinv_err err;
    if (kinv_load_buffer(data, size, "fuzz.inv", &inv, &err))
        return;
    char *text;
    size_t len;
    if (kinv_serialize(inv, &text, &len, &err))
        abort();
    int compressed = size >= 4 && data[0] == 0x28 && data[1] == 0xb5 && data[2] == 0x2f && data[3] == 0xfd;
    if (!compressed && (len != size || memcmp(text, data, size)))
        abort();        /* an accepted file must be canonical */
    struct kinv_match m;
    for (size_t i = 0; i < inv->n_entries; i++) {
        kinv_match(inv, inv->entries[i].name, inv->entries[i].name_len, &m);
        if (inv->entries[i].kind != KINV_KIND_PATTERN && m.strength == KINV_MATCH_NONE)
            abort();
    }
    kinv_match(inv, (const char *)data, size < 4096 ? size : 4096, &m);
    free(text);
    kinv_free(inv);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    check(data, size);
    /* reseal: "<line 1>\ndigest xxh3-128 <32 hex>\n<body>" */
    const uint8_t *nl = memchr(data, '\n', size);
    static const char dig[] = "digest xxh3-128 ";
    if (!nl)
        return 0;
    size_t h = (size_t)(nl - data) + 1, dl = sizeof(dig) - 1;
    if (size < h + dl + 33 || memcmp(data + h, dig, dl) || data[h + dl + 32] != '\n')
        return 0;
    uint8_t *copy = malloc(size);
    memcpy(copy, data, size);
    size_t body = h + dl + 33;
    uint8_t *joined = malloc(size);
    memcpy(joined, data, h);
    memcpy(joined + h, data + body, size - body);
    uint8_t d[16];
    kinv_digest(joined, h + size - body, d);
    char hex[33];
    kinv_digest_hex(d, hex);
    memcpy(copy + h + dl, hex, 32);
    check(copy, size);
    free(joined);
    free(copy);
    return 0;
}
