/*
 * synth.h - synthetic inputs for tests and fuzz seeds: minimal cubins,
 * fatbin containers and host ELF files, built from scratch so that the
 * repository carries no vendor bytes.  Not part of the kaudit binary.
 */
#ifndef KAUDIT_INVENTORY_SYNTH_H
#define KAUDIT_INVENTORY_SYNTH_H

#include <stddef.h>
#include <stdint.h>

struct kinv_buf {
    uint8_t *p;
    size_t len, cap;
};
void kinv_buf_free(struct kinv_buf *b);
int kinv_buf_put(struct kinv_buf *b, const void *data, size_t n);
int kinv_buf_zero(struct kinv_buf *b, size_t n);
int kinv_buf_align(struct kinv_buf *b, size_t align);

struct kinv_synth_sym {
    const char *name;
    int func;       /* STT_FUNC (else STT_OBJECT) */
    int entry;      /* st_other |= 0x10 */
};
/* A little-endian ELF64 with EM_CUDA (or machine when not 0) and a .symtab. */
int kinv_synth_cubin(const struct kinv_synth_sym *syms, size_t n, uint16_t machine, struct kinv_buf *out);

enum { KINV_SYNTH_PLAIN = 0, KINV_SYNTH_ZSTD = 1, KINV_SYNTH_LZ4 = 2, KINV_SYNTH_LZ4F = 3 };

struct kinv_synth_entry {
    uint16_t kind;          /* 1 PTX, 2 cubin, other: skipped by readers */
    uint32_t arch;          /* 90 */
    uint64_t flags;         /* extra flags (0x100000 for "a"); compression flags are added */
    int compression;        /* KINV_SYNTH_* */
    uint32_t header_size;   /* 0: 64 */
    const void *payload;
    size_t size;
};
/* One container (16-byte header, then the entries). */
int kinv_synth_container(const struct kinv_synth_entry *e, size_t n, struct kinv_buf *out);

struct kinv_synth_section {
    const char *name;
    uint32_t type;          /* SHT_PROGBITS... */
    uint64_t flags;         /* SHF_ALLOC... */
    const void *data;
    size_t size;
};
/* A little-endian x86-64 ET_DYN with these sections (and DT_SONAME when soname). */
int kinv_synth_host(const char *soname, const struct kinv_synth_section *s, size_t n,
                    struct kinv_buf *out);

/*
 * The reference synthetic library used by tests and fuzz seeds: every
 * source of names at once (see kinv_synth_reference_expect in synth.c for
 * what a reader must find in it).  variant 0 or 1 changes one kernel, so
 * that two builds differ.
 */
int kinv_synth_reference(const char *soname, int variant, struct kinv_buf *out);

#endif
