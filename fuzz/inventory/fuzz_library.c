/*
 * fuzz_library.c - a host library image, end to end: libelf section table,
 * containers in .nv_fatbin and elsewhere, decompression, cubins, PTX,
 * format strings.  Whatever builds must also serialize, verify and find its
 * own names.
 */
#include <stdlib.h>
#include <string.h>

#include "inventory.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct kinv_build_options opt = { .threads = 1 };
    struct kinv_inventory *inv;
    struct kinv_err err;
    if (kinv_build_image(data, size, "fuzz.so", &opt, &inv, &err))
        return 0;
    char *text;
    size_t len;
    if (kinv_serialize(inv, &text, &len, &err))
        abort();
    struct kinv_inventory *back;
    if (kinv_load_buffer(text, len, "fuzz.inv", &back, &err))
        abort();        /* a built inventory must verify */
    for (size_t i = 0; i < back->n_entries; i++) {
        const struct kinv_entry *e = &back->entries[i], *first;
        if (e->kind != KINV_KIND_PATTERN && !kinv_lookup_name(back, e->name, e->name_len, &first))
            abort();    /* and find every name it holds */
    }
    free(text);
    kinv_free(back);
    kinv_free(inv);
    return 0;
}
