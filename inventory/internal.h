/* internal.h - shared by the inventory sources; not part of the interface. */
#ifndef KAUDIT_INVENTORY_INTERNAL_H
#define KAUDIT_INVENTORY_INTERNAL_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "inventory.h"

#define KINV_FATBIN_MAGIC 0xBA55ED50u
#define KINV_EM_CUDA 190
#define KINV_STO_ENTRY 0x10

/* fatbin entry kinds and flags */
#define KINV_FATBIN_KIND_PTX 1
#define KINV_FATBIN_KIND_CUBIN 2
#define KINV_FATBIN_FLAG_LZ4 0x2000u
#define KINV_FATBIN_FLAG_ZSTD 0x8000u
#define KINV_FATBIN_FLAG_ARCH_SPECIFIC 0x100000u   /* sm_90a */
#define KINV_FATBIN_FLAG_FAMILY_SPECIFIC 0x200000u /* sm_100f */
#define KINV_FATBIN_HEADER_SIZE 16
#define KINV_FATBIN_ENTRY_MIN 64

/*
 * Upper bound on one decompressed entry.  The largest cubin in the CUDA 13
 * libraries is a few MB; a header that claims more is corrupt, and must not
 * make us allocate it.  Fuzz builds lower it to keep within the RSS limit.
 */
#ifndef KINV_MAX_ENTRY_SIZE
#define KINV_MAX_ENTRY_SIZE (1024ull * 1024 * 1024)
#endif
/*
 * Upper bound on an inventory's text, on disk and decompressed.  The shipped
 * ones are 10 MB of text (357 KB of zstd); 256 MiB leaves room for 25 times
 * that, while a zstd bomb (252 KB that inflate to 2.9 GB) stops at
 * the bound instead of taking gigabytes.
 */
#ifndef KINV_MAX_INVENTORY_SIZE
#define KINV_MAX_INVENTORY_SIZE (256ull * 1024 * 1024)
#endif

#if defined(__GNUC__)
#define KINV_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define KINV_PRINTF(a, b)
#endif

/* Fills err (when not NULL) and returns -1. */
int kinv_error(struct kinv_err *err, const char *fmt, ...) KINV_PRINTF(2, 3);

static inline uint16_t kinv_rd16(const uint8_t *p) { uint16_t v; memcpy(&v, p, 2); return v; }
static inline uint32_t kinv_rd32(const uint8_t *p) { uint32_t v; memcpy(&v, p, 4); return v; }
static inline uint64_t kinv_rd64(const uint8_t *p) { uint64_t v; memcpy(&v, p, 8); return v; }

/* ---- arena: bump allocation for names and small arrays ------------------ */

struct kinv_arena;
struct kinv_arena *kinv_arena_new(void);
void kinv_arena_free(struct kinv_arena *a);
void *kinv_arena_alloc(struct kinv_arena *a, size_t size, size_t align);
char *kinv_arena_strndup(struct kinv_arena *a, const char *s, size_t len);

/* ---- growable array -------------------------------------------------------- */

int kinv_grow(void **items, size_t *cap, size_t need, size_t item_size);

/* ---- fatbin containers (fatbin.c) ----------------------------------------- */

/* One entry of a container, located in the host image. */
struct kinv_fatbin_entry {
    uint64_t offset;          /* of the entry header, in the host image */
    uint16_t kind;
    uint32_t header_size;
    uint64_t payload_offset;  /* in the host image */
    uint64_t padded_size;     /* bytes of payload in the container (next entry follows) */
    uint64_t stored_size;     /* bytes of payload as stored (compressed size when compressed) */
    uint64_t size;            /* bytes after decompression (== stored_size when not compressed) */
    uint32_t arch;
    uint64_t flags;
    uint8_t compression;      /* KINV_COMP_* */
    uint8_t embedded;         /* found outside .nv_fatbin (set by the caller) */
};

enum { KINV_COMP_NONE = 0, KINV_COMP_ZSTD = 1, KINV_COMP_LZ4 = 2, KINV_COMP_LZ4F = 3 };

typedef int (*kinv_entry_fn)(void *ctx, const struct kinv_fatbin_entry *e);
/* One whole container, [start, end) of the image (after its entries were reported). */
typedef int (*kinv_container_fn)(void *ctx, uint64_t start, uint64_t end);

/*
 * Parses one container at image[off]; the container must end at or before
 * limit.  strict: malformed input is an error (named by offset); otherwise a
 * malformed candidate returns 1 (no container here) and no error.  On
 * success returns 0, sets *end to the first byte after the container and
 * calls fn for every entry.
 */
int kinv_fatbin_parse(const uint8_t *image, uint64_t off, uint64_t limit, int strict,
                      kinv_entry_fn fn, void *ctx, uint64_t *end, struct kinv_err *err);

/* Every container of a .nv_fatbin section [start, end), back to back. */
int kinv_fatbin_parse_section(const uint8_t *image, uint64_t start, uint64_t end,
                              kinv_entry_fn fn, kinv_container_fn cfn, void *ctx,
                              uint32_t *containers, struct kinv_err *err);

/* Containers found by magic anywhere in [start, end); bad candidates skipped. */
int kinv_fatbin_scan(const uint8_t *image, uint64_t start, uint64_t end, kinv_entry_fn fn,
                     kinv_container_fn cfn, void *ctx, uint32_t *containers, uint32_t *rejected,
                     struct kinv_err *err);

/* Decompression context for one thread. */
struct kinv_decoder;
struct kinv_decoder *kinv_decoder_new(void);
void kinv_decoder_free(struct kinv_decoder *d);
/*
 * Returns the payload of e, decompressed when needed, in a buffer owned by
 * the decoder (valid until the next call) or pointing into image.
 */
int kinv_decode_entry(struct kinv_decoder *d, const uint8_t *image, const struct kinv_fatbin_entry *e,
                      const uint8_t **data, size_t *size, struct kinv_err *err);

/* ---- names found in one payload -------------------------------------- */

typedef int (*kinv_name_fn)(void *ctx, const char *name, size_t len);

/* elf_version, once; 0 when libelf cannot be used. */
int kinv_elf_ready(void);
/* The ELF header and section header table fit in size bytes (else an error
   naming the offset; what: "the", "cubin"). */
int kinv_elf_check_shdrs(const uint8_t *img, size_t size, const char *what, struct kinv_err *err);

/* Entry function symbols of a cubin (ELF, EM_CUDA). */
int kinv_cubin_entries(const uint8_t *data, size_t size, kinv_name_fn fn, void *ctx,
                       struct kinv_err *err);
/* .entry names of PTX text. */
int kinv_ptx_entries(const char *text, size_t size, kinv_name_fn fn, void *ctx);

/* Format strings that look like kernel-name templates, in [data, data+size). */
int kinv_scan_format_strings(const uint8_t *data, size_t size, kinv_name_fn fn, void *ctx);

/* ---- inventory assembly (inventory.c) ---------------------------------- */

struct kinv_inventory *kinv_new(void);
/* Builds the hash table and compiles the patterns. */
int kinv_index(struct kinv_inventory *inv, struct kinv_err *err);
uint64_t kinv_name_hash(const char *name, size_t len);
void kinv_digest(const void *data, size_t len, uint8_t out[16]);

/* ---- the sealed text form (inventory_write.c, inventory_read.c) -------- */

/*
 * The file (docs/inventory.md has the full description):
 *   kaudit-inventory 1
 *   digest xxh3-128 <32 hex digits>
 *   M <key> <value>                                   (sorted by key)
 *   L <index> <xxh3-128> <size> <soname> <path>        (sorted by path)
 *   C <xxh3-128> <library>[e] <target>                (sorted by digest, library, target)
 *   E <name> <kind> <library indices> <targets>       (sorted by name, kind)
 * Fields are separated by one tab; bytes outside 0x21..0x7e and '\' are
 * written as \xHH.  The digest covers the first line and everything after
 * the digest line.
 */
/* A byte written as \xHH. */
static inline int kinv_needs_escape(unsigned char c) { return c <= 0x20 || c >= 0x7f || c == '\\'; }

/* patterns.c */
int kinv_patterns_compile(struct kinv_inventory *inv, struct kinv_err *err);
void kinv_patterns_free(struct kinv_inventory *inv);

#endif
