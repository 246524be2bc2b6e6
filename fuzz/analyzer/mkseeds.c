/*
 * mkseeds.c - synthetic seed traces for fuzz_trace (synth_traces.c), one
 * file per variant, plus a few cut and damaged copies of the rich one.
 *
 *   ka_fuzz_mkseeds DIR
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "synth_traces.h"

static int put(const char *dir, const char *name, const uint8_t *bytes, size_t n)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(bytes, 1, n, f) != n || fclose(f) != 0) {
        fprintf(stderr, "ka_fuzz_mkseeds: cannot write '%s': %s\n", path, strerror(errno));
        return -1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: ka_fuzz_mkseeds DIR\n");
        return 2;
    }
    const char *dir = argv[1];
    if (mkdir(dir, 0777) && errno != EEXIST) {
        fprintf(stderr, "ka_fuzz_mkseeds: cannot make '%s': %s\n", dir, strerror(errno));
        return 1;
    }
    for (int v = 0; v < FZ_SYNTH_COUNT; v++) {
        struct tb b;
        fz_synth_trace(&b, v);
        char name[64];
        snprintf(name, sizeof name, "synth-%s.kat", fz_synth_name(v));
        if (put(dir, name, b.buf, b.len))
            return 1;
        if (v == 0) {
            /* cut in the middle of a record, and with a bad record size */
            if (put(dir, "synth-rich-cut.kat", b.buf, b.len / 2 + 3))
                return 1;
            uint8_t copy[1 << 16];
            if (b.len <= sizeof copy) {
                memcpy(copy, b.buf, b.len);
                size_t at = sizeof(struct kat_file_header);
                copy[at + 64] ^= 0x5;   /* somewhere in an early record */
                if (put(dir, "synth-rich-damaged.kat", copy, b.len))
                    return 1;
            }
        }
        tb_free(&b);
    }
    return 0;
}
