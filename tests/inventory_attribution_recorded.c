/*
 * inventory_attribution_recorded.c - the name-collision rule
 * (docs/inventory.md, "Name collisions"; kinv_attribute) on the sessions
 * recorded on the H200 (examples/), against the shipped H200-calibrated
 * inventory: a name match never makes a launch vendor work by itself; only
 * origin evidence does.
 *
 * The launch facts come from the traces alone:
 *   in_vendor_window       the kernel's correlation id has an
 *                          EXTERNAL_CORRELATION of kaudit's kind
 *                          (KAT_VENDOR_CORRELATION_KIND), or from format 2
 *                          an API record tail, whose external id is a
 *                          VENDOR_CALL of the same trace;
 *   window_library_digest  XXH3-128 of the LIBRARY record whose soname is
 *                          that vendor call's library (libcublas.so.13,
 *                          libcublasLt.so.13, libcudnn.so.9), converted from
 *                          digest_lo/digest_hi the way calibrate.c does
 *                          (kinv_digest_from_halves);
 *   module_origin          KINV_MODULE_UNKNOWN: CUPTI's kernel records carry
 *                          no module id, so a trace cannot tie a launched
 *                          kernel to the MODULE record (loader, image digest)
 *                          it came from.  module_digest and
 *                          module_library_digest stay NULL for that reason.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "inventory.h"
#include "session.h"
#include "trace_index.h"
#include "trace_reader.h"

#ifndef KAUDIT_SOURCE_DIR
#error KAUDIT_SOURCE_DIR must name the repository root
#endif

#define INVENTORY KAUDIT_SOURCE_DIR "/inventory/data/h200-torch2.11-calibrated.inventory.zst"
#define RAW_CUBLAS KAUDIT_SOURCE_DIR "/examples/h200-raw-cublas/session"
#define TORCH_OPS KAUDIT_SOURCE_DIR "/examples/h200-torch-ops/session"
#define CTYPES_CUBLAS KAUDIT_SOURCE_DIR "/examples/h200-ctypes-cublas/session"

/* One KAT_REC_KERNEL with the facts the trace gives and the rule's answer. */
struct launch {
    char *name;
    size_t len;
    uint32_t correlation;
    int in_window;
    uint64_t call_id;           /* the vendor call of the window, 0 outside */
    char api[64];               /* its entry point, "" outside */
    unsigned library;           /* its enum kat_vendor_library, 0 outside */
    uint8_t window_digest[16];
    struct kinv_attribution a;
};

struct recorded {
    struct launch *k;
    size_t n, cap;
    size_t traces;
};

static struct kinv_inventory *inv;

static void load_inventory(void)
{
    struct kinv_err err;
    /* kinv_load verifies (digest, header, every line) or fails */
    cr_assert_eq(kinv_load(INVENTORY, &inv, &err), 0, "shipped inventory does not verify: %s", err.msg);
    cr_assert_gt(inv->n_libs, 0);
}

static void free_inventory(void)
{
    kinv_free(inv);
    inv = NULL;
}

static const char *soname_of(unsigned library)
{
    switch (library) {
    case KAT_LIB_CUBLAS: return "libcublas.so.13";
    case KAT_LIB_CUBLASLT: return "libcublasLt.so.13";
    case KAT_LIB_CUDNN: return "libcudnn.so.9";
    }
    return NULL;
}

struct call { uint64_t id; unsigned library; uint32_t api; };
struct ext { uint32_t correlation; uint64_t call; };
struct kern { uint32_t correlation; uint32_t name; };

#define PUSH(arr, n, cap)                                                                 \
    do {                                                                                  \
        if ((n) == (cap)) {                                                               \
            (cap) = (cap) ? 2 * (cap) : 16;                                               \
            (arr) = realloc((arr), (cap) * sizeof(*(arr)));                               \
            cr_assert_not_null((arr));                                                    \
        }                                                                                 \
    } while (0)

/* The LIBRARY record of this soname (the file name when the soname is empty). */
static void library_digest(struct kat_trace *t, const struct kat_library_rec *libs, size_t n,
                           unsigned library, uint8_t out[16])
{
    const char *want = soname_of(library);
    cr_assert_not_null(want, "vendor call of unknown library %u", library);
    const struct kat_library_rec *found = NULL;
    for (size_t i = 0; i < n; i++) {
        const char *so = kat_trace_string(t, libs[i].soname_string);
        if (!*so) {
            const char *path = kat_trace_string(t, libs[i].path_string);
            const char *base = strrchr(path, '/');
            so = base ? base + 1 : path;
        }
        if (strcmp(so, want))
            continue;
        cr_assert(!found || (found->digest_lo == libs[i].digest_lo && found->digest_hi == libs[i].digest_hi),
                  "%s: two different %s files are loaded", kat_trace_path(t), want);
        found = &libs[i];
    }
    cr_assert_not_null(found, "%s: vendor call of %s but no LIBRARY record for it", kat_trace_path(t), want);
    cr_assert(found->digest_lo || found->digest_hi, "%s: %s has no digest", kat_trace_path(t), want);
    kinv_digest_from_halves(found->digest_lo, found->digest_hi, out);
}

static void read_trace(struct kat_trace *t, struct recorded *rec)
{
    struct call *calls = NULL;
    struct ext *exts = NULL;
    struct kern *kerns = NULL;
    struct kat_library_rec *libs = NULL;
    size_t n_calls = 0, cap_calls = 0, n_exts = 0, cap_exts = 0, n_kerns = 0, cap_kerns = 0;
    size_t n_libs = 0, cap_libs = 0;
    struct kat_record r;
    char msg[512];
    int rc;
    while ((rc = kat_trace_next(t, &r, msg, sizeof(msg))) == 1) {
        switch (r.type) {
        case KAT_REC_VENDOR_CALL: {
            const struct kat_vendor_call_rec *v = r.body;
            PUSH(calls, n_calls, cap_calls);
            calls[n_calls++] = (struct call){ v->call_id, v->library, v->api_string };
            break;
        }
        case KAT_REC_EXTERNAL_CORRELATION:
        case KAT_REC_API: {
            /* the window: an EXTERNAL_CORRELATION of our kind, or (format 2) an API record's tail */
            struct ext e;
            if (kat_record_vendor_tie(&r, &e.correlation, &e.call)) {
                PUSH(exts, n_exts, cap_exts);
                exts[n_exts++] = e;
            }
            break;
        }
        case KAT_REC_KERNEL: {
            const struct kat_kernel_rec *k = r.body;
            PUSH(kerns, n_kerns, cap_kerns);
            kerns[n_kerns++] = (struct kern){ k->correlation_id, k->name_string };
            break;
        }
        case KAT_REC_LIBRARY:
            PUSH(libs, n_libs, cap_libs);
            memcpy(&libs[n_libs++], r.body, sizeof(*libs));
            break;
        default:
            break;
        }
    }
    cr_assert_eq(rc, 0, "%s", msg);

    for (size_t i = 0; i < n_kerns; i++) {
        PUSH(rec->k, rec->n, rec->cap);
        struct launch *l = &rec->k[rec->n++];
        memset(l, 0, sizeof(*l));
        l->correlation = kerns[i].correlation;
        l->len = kat_trace_string_length(t, kerns[i].name);
        cr_assert_gt(l->len, 0, "%s: kernel %u has no name", kat_trace_path(t), l->correlation);
        l->name = strndup(kat_trace_string(t, kerns[i].name), l->len);
        cr_assert_not_null(l->name);

        const struct call *c = NULL;
        for (size_t x = 0; x < n_exts && !c; x++)
            if (exts[x].correlation == l->correlation)
                for (size_t v = 0; v < n_calls; v++)
                    if (calls[v].id == exts[x].call) {
                        c = &calls[v];
                        break;
                    }
        struct kinv_launch_facts f = {
            .name = l->name,
            .name_len = l->len,
            /* see the top of the file: the trace cannot name the kernel's module */
            .module_origin = KINV_MODULE_UNKNOWN,
        };
        if (c) {
            l->in_window = 1;
            l->call_id = c->id;
            l->library = c->library;
            snprintf(l->api, sizeof(l->api), "%s", kat_trace_string(t, c->api));
            library_digest(t, libs, n_libs, c->library, l->window_digest);
            f.in_vendor_window = 1;
            f.window_library_digest = l->window_digest;
        }
        kinv_attribute(inv, &f, &l->a);
    }
    free(calls);
    free(exts);
    free(kerns);
    free(libs);
}

static void read_session(const char *dir, struct recorded *rec)
{
    memset(rec, 0, sizeof(*rec));
    struct kat_session *s;
    char msg[512];
    cr_assert_eq(kat_session_open(dir, &s, msg, sizeof(msg)), 0, "%s", msg);
    for (size_t i = 0; i < kat_session_trace_count(s); i++) {
        struct kat_trace *t = kat_trace_open(kat_session_trace_path(s, i), msg, sizeof(msg));
        cr_assert_not_null(t, "%s", msg);
        read_trace(t, rec);
        rec->traces++;
        kat_trace_close(t);
    }
    kat_session_close(s);
    cr_assert_gt(rec->n, 0, "%s: no kernel records", dir);
    for (size_t i = 0; i < rec->n; i++) {
        const struct launch *l = &rec->k[i];
        cr_log_info("%s #%u: %s, name match %s, vendor work %d, window %s: %.100s",
                    strstr(dir, "/examples/") ? strstr(dir, "/examples/") + 10 : dir, l->correlation,
                    kinv_verdict_name(l->a.verdict),
                    l->a.name_match == KINV_MATCH_EXACT ? "exact"
                    : l->a.name_match == KINV_MATCH_OBSERVED ? "observed"
                    : l->a.name_match == KINV_MATCH_PATTERN ? "pattern" : "none",
                    l->a.counts_as_vendor_work, l->in_window ? l->api : "-", l->name);
    }
}

static void free_recorded(struct recorded *rec)
{
    for (size_t i = 0; i < rec->n; i++)
        free(rec->k[i].name);
    free(rec->k);
    memset(rec, 0, sizeof(*rec));
}

static int starts(const struct launch *l, const char *prefix)
{
    return !strncmp(l->name, prefix, strlen(prefix));
}

static int ends(const struct launch *l, const char *suffix)
{
    size_t n = strlen(suffix);
    return l->len >= n && !memcmp(l->name + l->len - n, suffix, n);
}

static int is(const struct launch *l, const char *name)
{
    return l->len == strlen(name) && !memcmp(l->name, name, l->len);
}

/* The window's library is pinned by the inventory (the digest is one of its L records). */
static int window_pinned(const struct launch *l)
{
    for (size_t i = 0; i < inv->n_libs; i++)
        if (!memcmp(inv->libs[i].digest, l->window_digest, 16))
            return 1;
    return 0;
}

static void expect_vendor(const struct launch *l)
{
    cr_expect(l->in_window, "#%u %s: not in a vendor window", l->correlation, l->name);
    cr_expect(window_pinned(l), "#%u %s: window library not pinned", l->correlation, l->name);
    cr_expect_eq(l->a.verdict, KINV_VERDICT_VENDOR, "#%u %s: %s (%s), want vendor", l->correlation,
                 l->name, kinv_verdict_name(l->a.verdict), l->a.reason);
    cr_expect(l->a.counts_as_vendor_work, "#%u %s: not counted as vendor work", l->correlation, l->name);
}

static void expect_not_vendor(const struct launch *l, enum kinv_verdict want, enum kinv_strength match)
{
    cr_expect_eq(l->a.verdict, want, "#%u %s: %s (%s), want %s", l->correlation, l->name,
                 kinv_verdict_name(l->a.verdict), l->a.reason, kinv_verdict_name(want));
    cr_expect_eq(l->a.name_match, match, "#%u %s: name match %d, want %d", l->correlation, l->name,
                 l->a.name_match, match);
    cr_expect_not(l->a.counts_as_vendor_work, "#%u %s: counted as vendor work", l->correlation, l->name);
}

/* What holds for every launch of every session: vendor work exactly when a pinned window says so. */
static void expect_rule_everywhere(const struct recorded *rec)
{
    for (size_t i = 0; i < rec->n; i++) {
        const struct launch *l = &rec->k[i];
        cr_expect_eq(l->a.counts_as_vendor_work, l->in_window && window_pinned(l),
                     "#%u %s: vendor work %d but in window %d", l->correlation, l->name,
                     l->a.counts_as_vendor_work, l->in_window);
        if (!l->in_window)
            cr_expect_eq(l->a.verdict,
                         l->a.name_match == KINV_MATCH_NONE ? KINV_VERDICT_UNATTRIBUTED : KINV_VERDICT_NAME_ONLY,
                         "#%u %s: %s outside any window", l->correlation, l->name,
                         kinv_verdict_name(l->a.verdict));
    }
}

TestSuite(inventory_attribution_recorded, .init = load_inventory, .fini = free_inventory);

/*
 * raw_cublas: a C program calls cublasSgemm_v2 twice and launches its own
 * kernels, one of them named to look like a cuBLAS GEMM.
 */
Test(inventory_attribution_recorded, raw_cublas)
{
    struct recorded rec;
    read_session(RAW_CUBLAS, &rec);
    size_t cublas = 0, lookalike = 0, fill = 0, scale_add = 0, other = 0;
    for (size_t i = 0; i < rec.n; i++) {
        const struct launch *l = &rec.k[i];
        if (starts(l, "sm80_xmma_gemm_") && ends(l, "_cublas")) {
            /* real cuBLAS(Lt) kernels, exact cubin names, launched by cublasSgemm_v2 */
            expect_vendor(l);
            cr_expect_eq(l->library, KAT_LIB_CUBLAS);
            cr_expect_str_eq(l->api, "cublasSgemm_v2");
            cr_expect_eq(l->a.name_match, KINV_MATCH_EXACT, "#%u %s", l->correlation, l->name);
            cublas++;
        } else if (is(l, "sm80_xmma_gemm_f32f32_like_custom")) {
            /* resembles a vendor name but matches nothing (names and patterns are
               anchored) and has no origin evidence: unattributed, not vendor work */
            expect_not_vendor(l, KINV_VERDICT_UNATTRIBUTED, KINV_MATCH_NONE);
            cr_expect_not(l->in_window);
            lookalike++;
        } else if (is(l, "kaudit_fill") || is(l, "kaudit_scale_add")) {
            expect_not_vendor(l, KINV_VERDICT_UNATTRIBUTED, KINV_MATCH_NONE);
            cr_expect_not(l->in_window);
            if (is(l, "kaudit_fill"))
                fill++;
            else
                scale_add++;
        } else {
            other++;
        }
    }
    cr_expect_eq(cublas, 4, "cuBLAS kernels: %zu", cublas);
    cr_expect_eq(lookalike, 2, "look-alike kernels: %zu", lookalike);
    cr_expect_eq(fill, 3, "kaudit_fill: %zu", fill);
    cr_expect_eq(scale_add, 3, "kaudit_scale_add: %zu", scale_add);
    cr_expect_eq(other, 1, "other kernels (the checksum kernel): %zu", other);
    expect_rule_everywhere(&rec);
    free_recorded(&rec);
}

/*
 * torch_ops: PyTorch runs a SGEMM (cublasSgemm_v2), a bf16 GEMM
 * (cublasGemmEx: an nvjet kernel the inventory names only by a pattern, or
 * an observed entry), a cuDNN convolution (cudnnBackendExecute), its own
 * ATen kernels, and an inline-compiled extension kernel.
 */
Test(inventory_attribution_recorded, torch_ops)
{
    struct recorded rec;
    read_session(TORCH_OPS, &rec);
    size_t sgemm = 0, nvjet = 0, conv = 0, aten = 0, inline_k = 0, other = 0;
    for (size_t i = 0; i < rec.n; i++) {
        const struct launch *l = &rec.k[i];
        if (starts(l, "nvjet_")) {
            expect_vendor(l);
            cr_expect_str_eq(l->api, "cublasGemmEx");
            cr_expect_eq(l->library, KAT_LIB_CUBLAS);
            cr_expect(l->a.name_match == KINV_MATCH_PATTERN || l->a.name_match == KINV_MATCH_OBSERVED,
                      "%s: name match %d", l->name, l->a.name_match);
            nvjet++;
        } else if (starts(l, "sm80_xmma_fprop_implicit_gemm_") && ends(l, "_cudnn")) {
            expect_vendor(l);
            cr_expect_str_eq(l->api, "cudnnBackendExecute");
            cr_expect_eq(l->library, KAT_LIB_CUDNN);
            cr_expect_eq(l->a.name_match, KINV_MATCH_EXACT, "%s", l->name);
            conv++;
        } else if (starts(l, "sm80_xmma_gemm_") && ends(l, "_cublas")) {
            expect_vendor(l);
            cr_expect_str_eq(l->api, "cublasSgemm_v2");
            sgemm++;
        } else if (starts(l, "_ZN2at6native")) {
            /* PyTorch's own kernels: no vendor name, no window */
            expect_not_vendor(l, KINV_VERDICT_UNATTRIBUTED, KINV_MATCH_NONE);
            cr_expect_not(l->in_window);
            aten++;
        } else if (is(l, "kaudit_inline_scale_kernel")) {
            expect_not_vendor(l, KINV_VERDICT_UNATTRIBUTED, KINV_MATCH_NONE);
            cr_expect_not(l->in_window);
            inline_k++;
        } else {
            other++;
        }
    }
    cr_expect_eq(sgemm, 2, "SGEMM kernels: %zu", sgemm);
    cr_expect_eq(nvjet, 1, "nvjet kernels: %zu", nvjet);
    cr_expect_eq(conv, 1, "cuDNN conv kernels: %zu", conv);
    cr_expect_eq(aten, 8, "at::native kernels: %zu", aten);
    cr_expect_eq(inline_k, 2, "inline kernels: %zu", inline_k);
    cr_expect_eq(other, 0, "unexpected kernels: %zu", other);
    expect_rule_everywhere(&rec);
    free_recorded(&rec);
}

/* ctypes_cublas: Python calls cublasSgemm_v2 through ctypes, beside PyTorch's own kernels. */
Test(inventory_attribution_recorded, ctypes_cublas)
{
    struct recorded rec;
    read_session(CTYPES_CUBLAS, &rec);
    size_t in_window = 0, outside = 0;
    for (size_t i = 0; i < rec.n; i++) {
        const struct launch *l = &rec.k[i];
        if (l->in_window) {
            expect_vendor(l);
            cr_expect_str_eq(l->api, "cublasSgemm_v2");
            cr_expect_eq(l->library, KAT_LIB_CUBLAS);
            in_window++;
        } else {
            cr_expect(starts(l, "_ZN2at6native"), "#%u %s outside the window", l->correlation, l->name);
            expect_not_vendor(l, KINV_VERDICT_UNATTRIBUTED, KINV_MATCH_NONE);
            outside++;
        }
    }
    cr_expect_eq(in_window, 4, "kernels in the ctypes call windows: %zu", in_window);
    cr_expect_eq(outside, 16, "kernels outside: %zu", outside);
    expect_rule_everywhere(&rec);
    free_recorded(&rec);
}

/*
 * Negative controls from the same recorded data: a real cuBLAS kernel name
 * from raw_cublas (an exact cubin entry) without the window.  In the
 * candidate's own module it is impersonation; with no origin evidence at
 * all it is a bare name match.  Neither is vendor work.
 */
Test(inventory_attribution_recorded, recorded_vendor_name_without_origin_is_not_vendor_work)
{
    struct recorded rec;
    read_session(RAW_CUBLAS, &rec);
    const struct launch *real = NULL;
    for (size_t i = 0; i < rec.n && !real; i++)
        if (rec.k[i].in_window && rec.k[i].a.counts_as_vendor_work && ends(&rec.k[i], "_cublas"))
            real = &rec.k[i];
    cr_assert_not_null(real, "no vendor-work cuBLAS kernel in raw_cublas");

    struct kinv_launch_facts f = {
        .name = real->name,
        .name_len = real->len,
        .in_vendor_window = 0,
        .module_origin = KINV_MODULE_CANDIDATE,
    };
    struct kinv_attribution a;
    kinv_attribute(inv, &f, &a);
    cr_expect_eq(a.verdict, KINV_VERDICT_IMPERSONATION, "%s in the candidate's module: %s (%s)", real->name,
                 kinv_verdict_name(a.verdict), a.reason);
    cr_expect_eq(a.name_match, KINV_MATCH_EXACT);
    cr_expect_not(a.counts_as_vendor_work);

    f.module_origin = KINV_MODULE_UNKNOWN;
    kinv_attribute(inv, &f, &a);
    cr_expect_eq(a.verdict, KINV_VERDICT_NAME_ONLY, "%s, no origin evidence: %s (%s)", real->name,
                 kinv_verdict_name(a.verdict), a.reason);
    cr_expect_eq(a.name_match, KINV_MATCH_EXACT);
    cr_expect_not(a.counts_as_vendor_work);
    free_recorded(&rec);
}
