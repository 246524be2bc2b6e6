/*
 * contract.h - task contracts (docs/contracts.md) and the frozen manifest
 * that pins them.
 *
 * A contract says what a candidate must compute itself, which library use is
 * allowed, how much work the reference does, and what the timing must cover.
 * Loading is fail-closed: a contract is only handed out after its bytes hash
 * (XXH3-128) to the digest the manifest lists for it, and after every field
 * has been checked.  Errors name the file and the JSON path:
 *   contract 'contracts/x.json': implementation.forbidden[2]: unknown work class 'gem'
 */
#ifndef KAUDIT_CONTRACT_H
#define KAUDIT_CONTRACT_H

#include <stddef.h>
#include <stdint.h>

#define KA_CONTRACT_VERSION 1
#define KA_MANIFEST_VERSION 1

/* Work classes shared by contracts and the analysis (docs/analysis.md). */
enum ka_class {
    KA_CLASS_GEMM = 0,        /* matrix products, GEMV included; work in FLOPs */
    KA_CLASS_CONV,            /* convolutions; FLOPs */
    KA_CLASS_ATTENTION,       /* fused attention; FLOPs when known */
    KA_CLASS_REDUCTION,       /* reductions (sum, prod, max, argmax, vector norms) and scans; elements */
    KA_CLASS_ELEMENTWISE,     /* pointwise maps; elements */
    KA_CLASS_GLUE,            /* copies, fills, casts, layout changes; elements */
    KA_CLASS_POOLING,         /* max/avg pooling, adaptive too; elements */
    KA_CLASS_NORMALIZATION,   /* batch, layer, group, instance, RMS norm; elements */
    KA_CLASS_SOFTMAX,         /* softmax, log-softmax; elements */
    KA_CLASS_OTHER,           /* anything else */
    KA_CLASS_COUNT
};
/* The compute classes (not glue, not other): what a self-implemented task
 * forbids when its contract lists nothing, and what the causal probe targets
 * without a contract. */
#define KA_CORE_CLASSES                                                                                      \
    (1u << KA_CLASS_GEMM | 1u << KA_CLASS_CONV | 1u << KA_CLASS_ATTENTION | 1u << KA_CLASS_REDUCTION |       \
     1u << KA_CLASS_ELEMENTWISE | 1u << KA_CLASS_POOLING | 1u << KA_CLASS_NORMALIZATION | 1u << KA_CLASS_SOFTMAX)

const char *ka_class_name(enum ka_class c);
/* -1 when the text names no class. */
int ka_class_parse(const char *text);

struct ka_epilogue {
    enum ka_class cls;        /* the class the epilogue's work falls in */
    double max_share;         /* of the reference's total work */
    char *note;
};

struct ka_library_use {
    char *library;            /* "cublas", "cublaslt", "cudnn" or "*" */
    char *api;                /* fnmatch pattern on the API name */
    int cls;                  /* enum ka_class, or -1 for any */
};

struct ka_party_spec {
    char *path;               /* source file, informative */
    char *digest;             /* hex XXH3-128 of that file, or NULL */
    char **symbols;           /* class or function names (KernelBench: Model / ModelNew) */
    size_t n_symbols;
    char **objects;           /* fnmatch patterns on loaded object paths that are this party's */
    size_t n_objects;
    char **processes;         /* fnmatch patterns on a process's exe or argv[0]: the whole process is this party's */
    size_t n_processes;
};

struct ka_input_spec {
    char *name;
    int64_t *shape;
    size_t rank;
    char *dtype;
    double range_lo, range_hi;
    int has_range;
};

enum ka_timing_window {
    KA_TIMING_CUDA_EVENTS = 1, /* a pair of CUDA events later queried for elapsed time */
    KA_TIMING_NONE = 2,        /* the task makes no timing claim: the measurement axis is UNSUPPORTED */
};

struct ka_contract {
    char *file;               /* path as given */
    char *task_id;
    char *description;
    uint8_t digest[16];       /* of the file's bytes */

    struct ka_party_spec reference, candidate;
    char *phase_candidate;    /* NVTX range message marking candidate work */
    char *phase_reference;

    /* implementation policy */
    int self_implemented;     /* core work must be the candidate's own */
    unsigned forbidden;       /* bit set of enum ka_class */
    int allow_allocation, allow_memset, allow_copies, allow_glue;
    struct ka_epilogue *epilogues;
    size_t n_epilogues;
    struct ka_library_use *library_uses;
    size_t n_library_uses;

    /* the reference's work signature */
    int dominant_class;       /* enum ka_class, or -1: measure from the reference phase */
    double reference_work;    /* in the dominant class's unit; 0 with measure */
    int measure_reference;    /* 1: sum the reference phase's work in the trace */

    int degenerate_reference; /* R-B: a PASS certificate is withheld */

    enum ka_timing_window timing;
    char *timing_dtype;       /* the task's precision, e.g. "float32"; NULL if unstated */

    struct ka_input_spec *inputs;
    size_t n_inputs;

    /* kaudit audit's stress schedule: one alternative shape per input (JSON
     * array of arrays, or null for an input that keeps its shape), as
     * compact JSON text; NULL when the contract allows no other shape. */
    char *alternative_shapes;
    /* stress.layouts: the input layouts the task declares valid, as
     * KA_LAYOUT_* bits; 0 when the contract names none (then only the
     * layouts get_inputs() itself makes are the task's: docs/audit.md,
     * "What gates") */
    unsigned stress_layouts;
    /* state.candidate_only: names of state the candidate may hold that the
     * reference lacks (kept at the candidate's own values, never mapped), as
     * compact JSON text; NULL when none is declared (then such state makes
     * the semantic axis abstain, as the paper's rule says) */
    char *candidate_only_state;
};

#define KA_LAYOUT_CONTIGUOUS (1u << 0)
#define KA_LAYOUT_STRIDED (1u << 1)
#define KA_LAYOUT_TRANSPOSED (1u << 2)

/*
 * Parse and check a contract from memory.  name is used in messages.  0 on
 * success; -1 with a message in err.
 */
int ka_contract_parse(const char *text, size_t len, const char *name, struct ka_contract **out,
                      char *err, size_t n);

/*
 * Load a contract file after checking it against a manifest: manifest may be
 * NULL, in which case `manifest.json` is looked up in the contract's
 * directory and then in up to three parent directories.  A contract the
 * manifest does not list, or whose digest differs, is an error.
 */
int ka_contract_load(const char *path, const char *manifest, struct ka_contract **out,
                     char *err, size_t n);
void ka_contract_free(struct ka_contract *c);

/* Lower-case hex XXH3-128 of a file's bytes into hex (33 bytes).  -1 with err on failure. */
int ka_file_digest(const char *path, char hex[33], char *err, size_t n);

/*
 * The manifest: `{"kaudit_contract_manifest": 1, "contracts": [{"path": ..., "digest": ...}]}`,
 * paths relative to the manifest's directory.  ka_manifest_check verifies
 * every listed contract (exists, digest matches, parses); ka_manifest_pin
 * rewrites the manifest with the current digests of the given contract files
 * (added when new).  Both return 0 or -1 with err; check reports each problem
 * through the callback and returns -1 when there was any.
 */
int ka_manifest_check(const char *manifest, void (*problem)(const char *msg, void *arg), void *arg,
                      size_t *n_checked, char *err, size_t n);
int ka_manifest_pin(const char *manifest, const char *const *contracts, size_t n_contracts,
                    char *err, size_t n);

/* The patterns of the candidate's loaded objects when a contract names none
 * (PyTorch's extension builds, Triton's and Inductor's caches): n of them. */
const char *const *ka_default_candidate_objects(size_t *n);

/* 32 lowercase hex digits: the form digests are written in (contracts, manifests, inventories). */
int ka_contract_is_hex_digest(const char *s);

#endif
