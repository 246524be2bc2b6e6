/* mkseeds.c - seed corpora for the inventory fuzzers, from synthetic inputs. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "inventory.h"
#include "synth.h"

static void put(const char *dir, const char *sub, const char *name, const void *p, size_t n)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/%s", dir, sub);
    mkdir(path, 0755);
    snprintf(path, sizeof(path), "%s/%s/%s", dir, sub, name);
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(p, 1, n, f) != n || fclose(f)) {
        perror(path);
        exit(1);
    }
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: kinv_mkseeds DIR\n");
        return 2;
    }
    mkdir(argv[1], 0755);
    struct kinv_buf lib[2] = { { 0 }, { 0 } };
    for (int v = 0; v < 2; v++) {
        if (kinv_synth_reference("libseed.so.1", v, &lib[v]))
            return 1;
        char name[32];
        snprintf(name, sizeof(name), "reference%d.so", v);
        put(argv[1], "fuzz_library", name, lib[v].p, lib[v].len);
    }
    /* containers: one per compression, and a cubin alone */
    struct kinv_synth_sym syms[] = { { "k_one", 1, 1 }, { "helper", 1, 0 } };
    struct kinv_buf cubin = { 0 }, cont = { 0 };
    if (kinv_synth_cubin(syms, 2, 0, &cubin))
        return 1;
    static const char ptx[] = ".version 8.0\n.visible .entry k_ptx(\n)\n{\n}\n";
    for (int comp = 0; comp < 4; comp++) {
        struct kinv_synth_entry e[] = {
            { 2, 90, 0, comp, comp == 1 ? 112 : 64, cubin.p, cubin.len },
            { 1, 90, 0, comp, 80, ptx, sizeof(ptx) },
        };
        if (kinv_synth_container(e, 2, &cont))
            return 1;
        char name[32];
        snprintf(name, sizeof(name), "container-comp%d", comp);
        put(argv[1], "fuzz_fatbin", name, cont.p, cont.len);
    }
    /* inventories, plain and compressed */
    struct kinv_inventory *inv;
    struct kinv_err err;
    if (kinv_build_image(lib[0].p, lib[0].len, "libseed.so.1", NULL, &inv, &err)) {
        fprintf(stderr, "%s\n", err.msg);
        return 1;
    }
    char *text;
    size_t len;
    if (kinv_serialize(inv, &text, &len, &err))
        return 1;
    put(argv[1], "fuzz_inventory", "reference.inv", text, len);
    char path[4096];
    snprintf(path, sizeof(path), "%s/fuzz_inventory/reference.inv.zst", argv[1]);
    if (kinv_write(inv, path, &err)) {
        fprintf(stderr, "%s\n", err.msg);
        return 1;
    }
    free(text);
    kinv_free(inv);
    kinv_buf_free(&lib[0]);
    kinv_buf_free(&lib[1]);
    kinv_buf_free(&cubin);
    kinv_buf_free(&cont);
    return 0;
}
