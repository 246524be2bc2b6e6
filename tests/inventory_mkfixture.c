/*
 * inventory_mkfixture.c - writes the synthetic libraries the command-line
 * tests read: DIR/libsynth_a.so.1 and DIR/libsynth_b.so.1 (one kernel
 * differs), and broken ones under DIR/bad/.
 */
#include <elf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "synth.h"

static int write_file(const char *dir, const char *name, const void *p, size_t n)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(p, 1, n, f) != n || fclose(f)) {
        perror(path);
        return -1;
    }
    return 0;
}

/* Offset of the first entry of the first container in .nv_fatbin. */
static size_t first_entry(const struct kinv_buf *lib)
{
    const Elf64_Ehdr *eh = (const void *)lib->p;
    const Elf64_Shdr *sh = (const void *)(lib->p + eh->e_shoff);
    const char *names = (const char *)lib->p + sh[eh->e_shstrndx].sh_offset;
    for (int i = 0; i < eh->e_shnum; i++)
        if (!strcmp(names + sh[i].sh_name, ".nv_fatbin"))
            return sh[i].sh_offset + 16;
    return 0;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: inventory_mkfixture DIR\n");
        return 2;
    }
    char bad[4096];
    snprintf(bad, sizeof(bad), "%s/bad", argv[1]);
    mkdir(argv[1], 0755);
    mkdir(bad, 0755);
    struct kinv_buf a = { 0 }, b = { 0 };
    if (kinv_synth_reference("libsynth_a.so.1", 0, &a) || kinv_synth_reference("libsynth_b.so.1", 1, &b))
        return 1;
    if (write_file(argv[1], "libsynth_a.so.1", a.p, a.len) || write_file(argv[1], "libsynth_b.so.1", b.p, b.len))
        return 1;
    size_t e = first_entry(&a);
    if (!e)
        return 1;
    /* cut inside the first entry's payload */
    if (write_file(bad, "libtruncated.so", a.p, e + 100))
        return 1;
    /* the second entry is ZSTD: break its frame */
    uint32_t hs;
    uint64_t ps;
    memcpy(&hs, a.p + e + 4, 4);
    memcpy(&ps, a.p + e + 8, 8);
    size_t e2 = e + hs + ps;
    memcpy(&hs, a.p + e2 + 4, 4);
    a.p[e2 + hs + 6] ^= 0xa5;
    a.p[e2 + hs + 7] ^= 0x5a;
    if (write_file(bad, "libcorrupt_zstd.so", a.p, a.len))
        return 1;
    kinv_buf_free(&a);
    kinv_buf_free(&b);
    return 0;
}
