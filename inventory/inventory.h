/*
 * inventory.h - the vendor kernel inventory: which kernel names the vendor
 * libraries (cuBLAS, cuBLASLt, cuDNN) can launch, pinned to the digests of
 * the library files they were read from.
 *
 * An inventory is built from the libraries themselves (kinv_build: fatbin
 * containers, cubin entry symbols, PTX .entry names, kernel-name format
 * strings), or extended with names observed inside vendor call windows
 * (kind "observed", see docs/inventory.md).  On disk it is a sealed text
 * file (kinv_write / kinv_load); the only way to load one is to verify it,
 * so every inventory the rest of the project sees has passed verification.
 *
 * Library functions never exit and never print: they return -1 and describe
 * the failure in a struct kinv_err ("cannot read 'f': ... at offset 0x..").
 */
#ifndef KAUDIT_INVENTORY_H
#define KAUDIT_INVENTORY_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define KINV_FORMAT_VERSION 1u
#define KINV_FILE_MAGIC "kaudit-inventory"

struct kinv_err {
    char msg[1024];
};

/* What an entry's name is, from strongest to weakest evidence of existence. */
enum kinv_kind {
    KINV_KIND_CUBIN = 1,    /* STO_ENTRY function symbol of a cubin in the library */
    KINV_KIND_PTX = 2,      /* .entry of a PTX module in the library (JIT compiled) */
    KINV_KIND_OBSERVED = 3, /* launched inside a vendor call window during calibration */
    KINV_KIND_PATTERN = 4,  /* anchored pattern from a format string in the library */
};
#define KINV_KIND_MAX 4

const char *kinv_kind_name(unsigned kind);
/* 0 when the text names no kind. */
unsigned kinv_kind_parse(const char *text);

/*
 * A build target, packed so that sorting the integers sorts the targets:
 * family (1 sm_, 2 compute_) << 24 | arch number << 8 | suffix ('a', 'f' or 0).
 */
#define KINV_TARGET_SM 1u
#define KINV_TARGET_COMPUTE 2u
static inline uint32_t kinv_target_pack(unsigned family, unsigned arch, unsigned suffix)
{
    return (uint32_t)family << 24 | (uint32_t)(arch & 0xffff) << 8 | (suffix & 0xff);
}
/* Writes "sm_90a" or "compute_120"; returns the length, or -1 when buf is too small. */
int kinv_target_format(uint32_t target, char *buf, size_t size);
/* 0 on success, -1 when text is not a target. */
int kinv_target_parse(const char *text, size_t len, uint32_t *target);

struct kinv_library {
    char *path;             /* canonical path when built (realpath) */
    char *soname;           /* DT_SONAME, or NULL */
    uint64_t size;          /* bytes */
    uint8_t digest[16];     /* XXH3-128 of the whole file, canonical (big-endian) bytes */
};

struct kinv_entry {
    const char *name;       /* not NUL-terminated in general: use name_len */
    uint32_t name_len;
    uint8_t kind;           /* enum kinv_kind */
    uint32_t n_libs;
    const uint32_t *libs;   /* ascending indices into kinv_inventory.libs */
    /*
     * Per library reference: 1 when the name is in that library only in a
     * container outside .nv_fatbin ("embedded", e.g. .cask_resource: loaded
     * by the library itself at run time, not registered when it loads, and
     * not listed by cuobjdump); 0 when it is in the library's .nv_fatbin, or
     * for observed and pattern entries.
     */
    const uint8_t *lib_embedded;
    uint32_t n_targets;
    const uint32_t *targets;/* ascending packed targets */
    uint64_t hash;          /* XXH3-64 of the name */
};

struct kinv_pattern;        /* compiled form of one pattern entry (patterns.c) */
struct kinv_slot;           /* one slot of the name table (inventory.c) */

struct kinv_meta {
    char *key;
    char *value;
};

/*
 * A module image a library holds: a cubin (the XXH3-128 of its decompressed
 * ELF image; target sm_XX) or a whole fatbin container (its bytes as stored;
 * target 0, written "fatbin").  A loaded module whose image hashes to one of
 * these came from that library (the "digest" origin evidence of the
 * attribution rule).
 */
struct kinv_module {
    uint8_t digest[16];
    uint32_t lib;
    uint32_t target;        /* packed sm_ target, or 0 for a whole container */
    uint8_t embedded;       /* found outside .nv_fatbin */
};

struct kinv_inventory {
    struct kinv_library *libs;
    size_t n_libs;
    struct kinv_entry *entries;     /* sorted by (name, kind), no duplicates */
    size_t n_entries;
    struct kinv_meta *meta;         /* sorted by key, unique keys */
    size_t n_meta;
    struct kinv_module *modules;    /* sorted by (digest, lib, target), unique */
    size_t n_modules;
    uint8_t digest[16];             /* of the serialized form; set by kinv_write/kinv_load */
    int have_digest;
    /* lookup structures (built by kinv_index) */
    struct kinv_slot *table;        /* open addressing over names; see inventory.c */
    uint64_t table_mask;
    void *lookup_mem;               /* one mapping: the table, then a copy of the names */
    size_t lookup_mem_size;
    struct kinv_pattern *patterns;
    size_t n_patterns;
    /* storage */
    struct kinv_arena *arena;
};

/* ---- building ---------------------------------------------------------- */

struct kinv_build_options {
    int threads;            /* 0: one per online CPU */
    int no_patterns;        /* do not derive patterns from format strings */
    int no_scan;            /* read .nv_fatbin only; do not scan other sections for containers */
    int verbose;            /* per-library statistics to the stats stream */
    FILE *stats;            /* where verbose statistics go (NULL: none) */
};

/*
 * Per-library statistics of one build (index = library index).  Filled by
 * kinv_build when stats is not NULL; free with free().
 */
struct kinv_lib_stats {
    uint32_t containers_fatbin_section;   /* containers in .nv_fatbin */
    uint32_t containers_elsewhere;        /* containers found by magic elsewhere */
    uint32_t rejected_candidates;         /* magic hits elsewhere that were no container */
    uint32_t cubin_entries, ptx_entries, other_entries;
    uint32_t compressed_zstd, compressed_lz4, uncompressed;
    uint64_t decompressed_bytes;
    uint32_t cubin_symbols;               /* entry symbols before de-duplication */
    uint32_t patterns;
};

/*
 * Reads every file named in paths (a directory stands for the ELF files
 * directly inside it; symbolic links there are skipped, so each library is
 * read once) and builds a new inventory.
 */
int kinv_build(const char *const *paths, size_t n_paths, const struct kinv_build_options *opt,
               struct kinv_inventory **out, struct kinv_lib_stats **stats, struct kinv_err *err);

/*
 * The same for one in-memory image of a host ELF file (used by fuzzing and
 * tests).  The image is copied; name appears in messages and as the path.
 */
int kinv_build_image(const void *image, size_t size, const char *name,
                     const struct kinv_build_options *opt, struct kinv_inventory **out,
                     struct kinv_err *err);

/* ---- the sealed file ------------------------------------------------------ */

/* Serializes (computing the digest); the caller frees *text. */
int kinv_serialize(struct kinv_inventory *inv, char **text, size_t *len, struct kinv_err *err);
/* Writes to path ("-": standard output); a path ending in ".zst" is written ZSTD-compressed. */
int kinv_write(struct kinv_inventory *inv, const char *path, struct kinv_err *err);

/*
 * Loads and verifies an inventory file (plain or ZSTD-compressed): the
 * digest, the header, every line, the order and uniqueness of entries,
 * library references, targets and patterns.  Any mismatch fails: there is
 * no way to load an inventory that does not verify.
 */
int kinv_load(const char *path, struct kinv_inventory **out, struct kinv_err *err);
int kinv_load_buffer(const void *data, size_t size, const char *name,
                     struct kinv_inventory **out, struct kinv_err *err);

void kinv_free(struct kinv_inventory *inv);

/*
 * Checks that every library the inventory lists is at its path with the
 * recorded size and XXH3-128 digest.  Fails on the first one that is
 * missing or different (the message names it).
 */
int kinv_check_libraries(const struct kinv_inventory *inv, struct kinv_err *err);

/* ---- queries -------------------------------------------------------------- */

enum kinv_strength {
    KINV_MATCH_NONE = 0,
    KINV_MATCH_PATTERN = 1,
    KINV_MATCH_OBSERVED = 2,
    KINV_MATCH_EXACT = 3,   /* cubin or ptx */
};

struct kinv_match {
    enum kinv_strength strength;
    const struct kinv_entry *first;   /* the entries of this name (exact/observed), adjacent */
    size_t count;
    const struct kinv_entry *pattern; /* the first matching pattern, when strength is PATTERN */
};

/* Exact-name entries of one name (any kind but pattern); returns how many. */
size_t kinv_lookup_name(const struct kinv_inventory *inv, const char *name, size_t len,
                        const struct kinv_entry **first);
/*
 * Many names at once (what the analyzer does with a trace): the same answer
 * as kinv_lookup_name for each, with the memory accesses of up to 32 names
 * overlapped, which is several times faster on a large inventory.
 */
struct kinv_query {
    const char *name;
    size_t len;
    const struct kinv_entry *first;     /* out: NULL when count is 0 */
    size_t count;                       /* out */
};
void kinv_lookup_batch(const struct kinv_inventory *inv, struct kinv_query *q, size_t n);

/* The most specific pattern entry that matches the whole name, or NULL. */
const struct kinv_entry *kinv_lookup_pattern(const struct kinv_inventory *inv, const char *name,
                                             size_t len);
/* Both: exact and observed names first, patterns only when no name matches. */
void kinv_match(const struct kinv_inventory *inv, const char *name, size_t len,
                struct kinv_match *m);

/* The order of entries in an inventory: name bytes, then kind. */
int kinv_entry_cmp(const struct kinv_entry *a, const struct kinv_entry *b);

/* The cubin modules with this digest (adjacent); returns how many. */
size_t kinv_lookup_module(const struct kinv_inventory *inv, const uint8_t digest[16],
                          const struct kinv_module **first);

/* Index of the library with this soname, path or file name; -1 when none. */
long kinv_find_library(const struct kinv_inventory *inv, const char *which);

/*
 * The canonical digest (what inventories hold) from XXH3-128's two 64-bit
 * halves, as trace records store them (digest_lo, digest_hi).
 */
void kinv_digest_from_halves(uint64_t lo, uint64_t hi, uint8_t out[16]);

/* Lower-case hex of a 16-byte digest into buf (33 bytes). */
void kinv_digest_hex(const uint8_t digest[16], char buf[33]);

/* ---- patterns ------------------------------------------------------------- */

/*
 * A pattern is a printf format string from a vendor library, matched
 * against a whole kernel name: literal characters match themselves, %s any
 * run of [A-Za-z0-9_] (possibly empty), %c one such character, %d/%i an
 * optional '-' and digits, %u digits, %x/%X hex digits.  Flags, width and
 * length modifiers are accepted and ignored.  Returns 0 when text is a valid
 * pattern.
 */
int kinv_pattern_check(const char *text, size_t len);
int kinv_pattern_match_text(const char *pattern, size_t plen, const char *name, size_t len);

/* ---- calibration (docs/inventory.md, "Calibration") ---------------------- */

/*
 * The vendor library whose call window launched a kernel: the library of
 * the outermost vendor call open around it (a cuBLASLt kernel reached from
 * cublasGemmEx counts for cuBLAS).  Same numbering as the trace's
 * enum kat_vendor_library, minus one.
 */
enum kinv_window_library { KINV_WIN_CUBLAS = 0, KINV_WIN_CUBLASLT = 1, KINV_WIN_CUDNN = 2 };
#define KINV_WIN_COUNT 3
const char *kinv_window_library_name(unsigned lib);

struct kinv_calibrate_options {
    /* accept a session whose vendor library differs from the inventory's
       library of the same soname; its entries then name the session's file */
    int allow_other_build;
};

struct kinv_calibrate_counts {
    size_t launches;            /* kernels launched inside windows of this library */
    size_t names;               /* distinct names among them */
    size_t added;               /* names that got an observed reference to this library */
    size_t already_exact;       /* already cubin/ptx entries of the library (or one it calls) */
    size_t already_observed;    /* already observed for this very library file */
    size_t pattern_before;      /* of added: only a pattern matched the name before */
    size_t unknown_before;      /* of added: nothing matched the name before */
};

struct kinv_calibrate_report {
    size_t sessions, traces, truncated_traces;
    size_t kernels;             /* kernel records read */
    size_t outside;             /* of those: in no vendor window */
    size_t outer_call;          /* in a window whose outermost call is of another library */
    size_t libraries_added;     /* L records added (files not in the inventory before) */
    struct kinv_calibrate_counts lib[KINV_WIN_COUNT];
};

/*
 * Reads every trace of each session directory and adds to inv an observed
 * entry for every kernel name launched inside a vendor call window
 * (EXTERNAL_CORRELATION of kaudit's kind naming a VENDOR_CALL of the same
 * trace), pinned to the digest of the library file that the session's
 * LIBRARY records give for that call's library.  Names that are already
 * exact entries of that library are left alone.  Fails closed: a trace that
 * does not read, a library without a digest, or a library whose digest
 * differs from the inventory's library of the same soname (unless
 * allow_other_build) is an error naming the session and the trace, and
 * leaves inv unusable (free it).  On success inv is re-sorted, re-indexed,
 * carries "calibration.N.*" metadata for each session, and has been
 * serialized and verified once.
 */
int kinv_calibrate(struct kinv_inventory *inv, const char *const *sessions, size_t n_sessions,
                   const struct kinv_calibrate_options *opt, struct kinv_calibrate_report *report,
                   struct kinv_err *err);

/* ---- attribution rule (docs/inventory.md, "Name collisions") ------------- */

enum kinv_module_origin {
    KINV_MODULE_UNKNOWN = 0,     /* no record of where the launched function's module came from */
    KINV_MODULE_VENDOR = 1,      /* loaded by a vendor library / its cubin digest is in that library */
    KINV_MODULE_CANDIDATE = 2,   /* the candidate's own module (its extension, its JIT, its cubin) */
    KINV_MODULE_OTHER = 3,       /* another known library (PyTorch, Triton runtime...) */
};

struct kinv_launch_facts {
    const char *name;
    size_t name_len;
    /* launched inside a vendor call window (external correlation / thread window) */
    int in_vendor_window;
    const uint8_t *window_library_digest;   /* XXH3-128 of the library whose call it was */
    /* where the launched function's module came from (its loader) */
    enum kinv_module_origin module_origin;
    const uint8_t *module_library_digest;   /* for KINV_MODULE_VENDOR: the library's digest */
    /* XXH3-128 of the module's cubin image, when the trace recorded it */
    const uint8_t *module_digest;
    /* kinv_match of name when the caller has it already (the analyzer matches
       each distinct name once, not each launch); NULL: kinv_attribute matches */
    const struct kinv_match *name_match;
};

enum kinv_verdict {
    KINV_VERDICT_VENDOR = 1,            /* vendor code ran: origin evidence, pinned library */
    KINV_VERDICT_VENDOR_UNPINNED = 2,   /* origin evidence, but the library digest is not in the inventory */
    KINV_VERDICT_CANDIDATE = 3,         /* candidate work */
    KINV_VERDICT_IMPERSONATION = 4,     /* candidate work under a vendor name: flagged */
    KINV_VERDICT_NAME_ONLY = 5,         /* vendor-like name without origin evidence: not vendor work */
    KINV_VERDICT_UNATTRIBUTED = 6,      /* neither a vendor name nor origin evidence */
    KINV_VERDICT_CONFLICT = 7,          /* contradictory origin evidence (window vs module) */
};

struct kinv_attribution {
    enum kinv_verdict verdict;
    enum kinv_strength name_match;      /* how the name matched the inventory */
    int counts_as_vendor_work;          /* 1 only for KINV_VERDICT_VENDOR */
    const char *reason;                 /* one line, static */
};

const char *kinv_verdict_name(enum kinv_verdict v);
/*
 * The verdict for one launch.  This is the rule the analyzer applies
 * (analyzer/origin.c, ka_kernel_origin), not a second opinion beside it.
 * inv may be NULL (an analysis without an inventory): then no name and no
 * module digest matches, and there is nothing to pin against, so the origin
 * evidence stands as the trace shows it: a vendor window or a vendor loader
 * is `vendor` (docs/inventory.md, "Name collisions").
 */
void kinv_attribute(const struct kinv_inventory *inv, const struct kinv_launch_facts *facts,
                    struct kinv_attribution *out);
/* Does the inventory pin a library with this XXH3-128 (an `L` record)?  0 for a NULL digest. */
int kinv_library_pinned(const struct kinv_inventory *inv, const uint8_t *digest);

#endif
