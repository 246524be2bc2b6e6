/*
 * inventory_calibrate.c - `kaudit inventory calibrate` on the sessions
 * recorded on the H200 (examples/): kernels launched inside vendor call
 * windows become `observed` entries pinned to the digest of the session's
 * library file; kernels outside windows never do; names the inventory
 * already has exactly are not repeated; a different library build, or a
 * library without a digest, is refused unless asked for.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <criterion/criterion.h>
#include <xxhash.h>

#include "inventory.h"
#include "trace_builder.h"

#ifndef KINV_REPO_DIR
#error KINV_REPO_DIR must name the repository root
#endif

#define TORCH_SESSION KINV_REPO_DIR "/examples/h200-torch-ops/session"
#define CTYPES_SESSION KINV_REPO_DIR "/examples/h200-ctypes-cublas/session"
#define SHIPPED KINV_REPO_DIR "/inventory/data/cuda-13.0-lib64.inventory.zst"

/* What the sessions' LIBRARY records hold (kaudit dump): PyTorch's copies. */
#define CUBLAS_DIGEST "c33f252ffb52fbfa670cf274c768eb57"
#define CUBLASLT_DIGEST "4d32fc7d0cb4df05181358b6bb44562c"
#define CUDNN_DIGEST "9c0c877d0cab49fd7c8d8a96fe04e896"
#define TORCH_CUBLAS "/opt/torch/.venv/lib/python3.12/site-packages/nvidia/cu13/lib/libcublas.so.13"

#define NVJET "nvjet_sm90_tst_64x40_64x16_2x1_v_bz_NNT"
#define XMMA_GEMM "sm80_xmma_gemm_f32f32_f32f32_f32_nn_n_tilesize32x32x8_stage3_warpsize1x2x1_ffma_aligna4_alignc4_execute_kernel__5x_cublas"
#define XMMA_SPLITK "sm80_xmma_gemm_f32f32_f32f32_f32_nn_n_tilesize32x32x8_stage3_warpsize1x2x1_ffma_aligna4_alignc4_execute_split_k_kernel__5x_cublas"
#define XMMA_CONV "sm80_xmma_fprop_implicit_gemm_f32f32_f32f32_f32_nchwkcrs_nchw_tilesize32x32x8_stage3_warpsize1x2x1_g1_ffma_aligna4_alignc4_execute_kernel__5x_cudnn"
#define AT_ADD "_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_15CUDAFunctor_addIfEESt5arrayIPcLm3EEEEviT0_T1_"
#define INLINE_KERNEL "kaudit_inline_scale_kernel"
#define NVJET_PATTERN "nvjet_sm90_%s_%dx%d_%dx%d_%dx%d_%c_%s%s%s%s%s%s%s%s%s%s_%c%c%c"

static char *tmp;

static void setup(void) { tmp = tb_tempdir(); cr_assert_not_null(tmp); }
static void teardown(void) { tb_remove_dir(tmp); free(tmp); }

/* Seals an inventory body (the lines after the digest line) and loads it. */
static struct kinv_inventory *load_body(const char *body)
{
    const char *head = "kaudit-inventory 1\n";
    XXH3_state_t *st = XXH3_createState();
    XXH3_128bits_reset(st);
    XXH3_128bits_update(st, head, strlen(head));
    XXH3_128bits_update(st, body, strlen(body));
    XXH128_canonical_t c;
    XXH128_canonicalFromHash(&c, XXH3_128bits_digest(st));
    XXH3_freeState(st);
    char hex[33];
    kinv_digest_hex(c.digest, hex);
    char *text;
    cr_assert(asprintf(&text, "%sdigest xxh3-128 %s\n%s", head, hex, body) > 0);
    struct kinv_inventory *inv = NULL;
    struct kinv_err err;
    int rc = kinv_load_buffer(text, strlen(text), "synthetic", &inv, &err);
    cr_assert_eq(rc, 0, "synthetic inventory does not load: %s", err.msg);
    free(text);
    return inv;
}

/*
 * Libraries with the sessions' digests (but at CUDA's paths): the GEMM
 * kernel of the cuBLAS window is exact in libcublasLt, the nvjet name only
 * matches cuBLASLt's pattern.
 */
static struct kinv_inventory *matching_inventory(const char *cublas_digest)
{
    char *body;
    cr_assert(asprintf(&body,
        "M\tset\tsynthetic\n"
        "L\t0\t%s\t54177976\tlibcublas.so.13\t/usr/local/cuda/lib64/libcublas.so.13\n"
        "L\t1\t" CUBLASLT_DIGEST "\t541595600\tlibcublasLt.so.13\t/usr/local/cuda/lib64/libcublasLt.so.13\n"
        "L\t2\t" CUDNN_DIGEST "\t129240\tlibcudnn.so.9\t/usr/local/cuda/lib64/libcudnn.so.9\n"
        "E\t%s\tpattern\t1\t\n"
        "E\t" XMMA_GEMM "\tcubin\t1\tsm_90a\n", cublas_digest, NVJET_PATTERN) > 0);
    struct kinv_inventory *inv = load_body(body);
    free(body);
    return inv;
}

static const struct kinv_entry *entry(const struct kinv_inventory *inv, const char *name, unsigned kind)
{
    const struct kinv_entry *first;
    size_t n = kinv_lookup_name(inv, name, strlen(name), &first);
    for (size_t i = 0; i < n; i++)
        if (first[i].kind == kind)
            return &first[i];
    return NULL;
}

static const char *lib_digest(const struct kinv_inventory *inv, const struct kinv_entry *e, size_t k,
                              char hex[33])
{
    kinv_digest_hex(inv->libs[e->libs[k]].digest, hex);
    return hex;
}

/* Writes inv, loads it back (verification) and returns the loaded copy. */
static struct kinv_inventory *round_trip(struct kinv_inventory *inv, const char *name)
{
    char path[512];
    snprintf(path, sizeof(path), "%s/%s", tmp, name);
    struct kinv_err err;
    cr_assert_eq(kinv_write(inv, path, &err), 0, "%s", err.msg);
    struct kinv_inventory *back = NULL;
    cr_assert_eq(kinv_load(path, &back, &err), 0, "calibrated inventory does not verify: %s", err.msg);
    return back;
}

static const char *const both_sessions[] = { TORCH_SESSION, CTYPES_SESSION };

/* ---- the recorded H200 sessions ------------------------------------------------- */

Test(inventory_calibrate, shipped_inventory_gains_the_nvjet_name_only, .init = setup, .fini = teardown)
{
    struct kinv_inventory *inv = NULL;
    struct kinv_err err;
    cr_assert_eq(kinv_load(SHIPPED, &inv, &err), 0, "%s", err.msg);
    size_t before = inv->n_entries;
    struct kinv_match m;
    kinv_match(inv, NVJET, strlen(NVJET), &m);
    cr_assert_eq(m.strength, KINV_MATCH_PATTERN);

    struct kinv_calibrate_report rep;
    int rc = kinv_calibrate(inv, both_sessions, 2, NULL, &rep, &err);
    cr_assert_eq(rc, 0, "%s", err.msg);

    /* the sessions' cuBLAS/cuDNN files are the very builds the shipped inventory pins */
    cr_expect_eq(rep.libraries_added, 0);
    cr_expect_eq(rep.sessions, 2);
    cr_expect_eq(rep.traces, 6);
    cr_expect_eq(rep.kernels, 34);
    cr_expect_eq(rep.outside, 26);
    /* 3 cuBLAS calls (2 Sgemm, 1 GemmEx) launched 7 kernels of 3 names */
    cr_expect_eq(rep.lib[KINV_WIN_CUBLAS].launches, 7);
    cr_expect_eq(rep.lib[KINV_WIN_CUBLAS].names, 3);
    cr_expect_eq(rep.lib[KINV_WIN_CUBLAS].added, 1);
    cr_expect_eq(rep.lib[KINV_WIN_CUBLAS].already_exact, 2, "the xmma GEMMs are cubins of libcublasLt");
    cr_expect_eq(rep.lib[KINV_WIN_CUBLAS].pattern_before, 1);
    cr_expect_eq(rep.lib[KINV_WIN_CUBLASLT].launches, 0);
    cr_expect_eq(rep.lib[KINV_WIN_CUDNN].launches, 1);
    cr_expect_eq(rep.lib[KINV_WIN_CUDNN].already_exact, 1);
    cr_expect_eq(inv->n_entries, before + 1);

    struct kinv_inventory *back = round_trip(inv, "calibrated.inv");
    const struct kinv_entry *e = entry(back, NVJET, KINV_KIND_OBSERVED);
    cr_assert_not_null(e, "the nvjet kernel of the cublasGemmEx window is not observed");
    cr_assert_eq(e->n_libs, 1);
    char hex[33];
    cr_expect_str_eq(back->libs[e->libs[0]].soname, "libcublas.so.13",
                     "outermost call (cublasGemmEx) decides the library");
    cr_expect_str_eq(lib_digest(back, e, 0, hex), CUBLAS_DIGEST);
    cr_assert_eq(e->n_targets, 1);
    char t[16];
    kinv_target_format(e->targets[0], t, sizeof(t));
    cr_expect_str_eq(t, "sm_90");
    kinv_match(back, NVJET, strlen(NVJET), &m);
    cr_expect_eq(m.strength, KINV_MATCH_OBSERVED);

    /* exact names are not repeated as observed; nothing outside windows is added */
    cr_expect_null(entry(back, XMMA_GEMM, KINV_KIND_OBSERVED));
    cr_expect_null(entry(back, XMMA_SPLITK, KINV_KIND_OBSERVED));
    cr_expect_null(entry(back, XMMA_CONV, KINV_KIND_OBSERVED));
    cr_expect_not_null(entry(back, XMMA_GEMM, KINV_KIND_CUBIN));
    const struct kinv_entry *first;
    cr_expect_eq(kinv_lookup_name(back, AT_ADD, strlen(AT_ADD), &first), 0);
    cr_expect_eq(kinv_lookup_name(back, INLINE_KERNEL, strlen(INLINE_KERNEL), &first), 0);

    /* provenance */
    int have_dir = 0, have_gpu = 0;
    for (size_t i = 0; i < back->n_meta; i++) {
        have_dir |= !strcmp(back->meta[i].key, "calibration.1.dir") &&
                    !strcmp(back->meta[i].value, TORCH_SESSION);
        have_gpu |= !strcmp(back->meta[i].key, "calibration.2.gpu") &&
                    !strcmp(back->meta[i].value, "NVIDIA H200 (sm_90)");
    }
    cr_expect(have_dir && have_gpu);
    kinv_free(back);
    kinv_free(inv);
}

Test(inventory_calibrate, calibrating_twice_adds_nothing_new, .init = setup, .fini = teardown)
{
    struct kinv_inventory *inv = matching_inventory(CUBLAS_DIGEST);
    struct kinv_calibrate_report rep;
    struct kinv_err err;
    cr_assert_eq(kinv_calibrate(inv, both_sessions, 2, NULL, &rep, &err), 0, "%s", err.msg);
    struct kinv_inventory *once = round_trip(inv, "once.inv");
    size_t n = once->n_entries;
    cr_assert_eq(kinv_calibrate(once, both_sessions, 1, NULL, &rep, &err), 0, "%s", err.msg);
    cr_expect_eq(rep.lib[KINV_WIN_CUBLAS].added, 0);
    cr_expect_eq(rep.lib[KINV_WIN_CUBLAS].already_observed, 2, "the nvjet and split-k names");
    cr_expect_eq(once->n_entries, n);
    struct kinv_inventory *twice = round_trip(once, "twice.inv");
    int third = 0;
    for (size_t i = 0; i < twice->n_meta; i++)
        third |= !strcmp(twice->meta[i].key, "calibration.3.dir");
    cr_expect(third, "a second calibration numbers its sessions after the first's");
    kinv_free(twice);
    kinv_free(once);
    kinv_free(inv);
}

Test(inventory_calibrate, synthetic_inventory_with_the_sessions_digests, .init = setup, .fini = teardown)
{
    struct kinv_inventory *inv = matching_inventory(CUBLAS_DIGEST);
    struct kinv_calibrate_report rep;
    struct kinv_err err;
    cr_assert_eq(kinv_calibrate(inv, both_sessions, 2, NULL, &rep, &err), 0, "%s", err.msg);
    struct kinv_inventory *back = round_trip(inv, "synthetic.inv");
    cr_expect_eq(back->n_libs, 3);
    cr_expect_null(entry(back, XMMA_GEMM, KINV_KIND_OBSERVED), "exact in libcublasLt: not duplicated");
    /* the split-k kernel and the cuDNN conv are in no library of this inventory: observed */
    const struct kinv_entry *s = entry(back, XMMA_SPLITK, KINV_KIND_OBSERVED);
    const struct kinv_entry *c = entry(back, XMMA_CONV, KINV_KIND_OBSERVED);
    cr_assert(s && c);
    cr_expect_str_eq(back->libs[s->libs[0]].soname, "libcublas.so.13");
    cr_expect_str_eq(back->libs[c->libs[0]].soname, "libcudnn.so.9");
    cr_expect_eq(rep.lib[KINV_WIN_CUBLAS].unknown_before, 1);
    cr_expect_eq(rep.lib[KINV_WIN_CUBLAS].pattern_before, 1);
    cr_expect_eq(rep.lib[KINV_WIN_CUDNN].added, 1);
    kinv_free(back);
    kinv_free(inv);
}

/* ---- refusals ---------------------------------------------------------------------- */

Test(inventory_calibrate, other_build_is_refused_unless_allowed, .init = setup, .fini = teardown)
{
    const char *other = "11111111111111111111111111111111";
    struct kinv_inventory *inv = matching_inventory(other);
    struct kinv_err err;
    cr_assert_eq(kinv_calibrate(inv, both_sessions, 2, NULL, NULL, &err), -1);
    cr_expect(strstr(err.msg, "different build") && strstr(err.msg, TORCH_CUBLAS) &&
              strstr(err.msg, "h200-torch-ops/session") && strstr(err.msg, ".kat"),
              "message: %s", err.msg);
    kinv_free(inv);

    inv = matching_inventory(other);
    struct kinv_calibrate_options opt = { .allow_other_build = 1 };
    struct kinv_calibrate_report rep;
    cr_assert_eq(kinv_calibrate(inv, both_sessions, 2, &opt, &rep, &err), 0, "%s", err.msg);
    cr_expect_eq(rep.libraries_added, 1);
    struct kinv_inventory *back = round_trip(inv, "other.inv");
    cr_expect_eq(back->n_libs, 4);
    const struct kinv_entry *e = entry(back, NVJET, KINV_KIND_OBSERVED);
    cr_assert_not_null(e);
    char hex[33];
    cr_expect_str_eq(lib_digest(back, e, 0, hex), CUBLAS_DIGEST, "the session's file, not the inventory's");
    cr_expect_str_eq(back->libs[e->libs[0]].path, TORCH_CUBLAS);
    /* the exact entry of libcublasLt survived the renumbering of the libraries */
    const struct kinv_entry *x = entry(back, XMMA_GEMM, KINV_KIND_CUBIN);
    cr_assert_not_null(x);
    cr_expect_str_eq(back->libs[x->libs[0]].soname, "libcublasLt.so.13");
    kinv_free(back);
    kinv_free(inv);
}

/* A one-trace session: one cublasLt call nested in a cublas call, one kernel in it. */
static char *synthetic_session(uint64_t digest_lo, uint64_t digest_hi)
{
    /* the temporary directory itself (tb_remove_dir removes one level) */
    char *dir = strdup(tmp);
    cr_assert_eq(tb_write_text(dir, "info", "kaudit-session\nformat_version: 1\ngpu: test\n"), 0);
    struct tb b;
    tb_init(&b, 100, 1, 0, 1000);
    const char *argv[] = { "prog", NULL };
    tb_process_start(&b, argv, "/bin/prog", "/");
    struct kat_library_rec lib = { 0 };
    lib.path_string = tb_string(&b, "/opt/lib/libcublas.so.13");
    lib.soname_string = tb_string(&b, "libcublas.so.13");
    lib.file_size = 1234;
    lib.digest_lo = digest_lo;
    lib.digest_hi = digest_hi;
    tb_record(&b, KAT_REC_LIBRARY, &lib, sizeof(lib), NULL, 0);
    struct kat_library_rec lt = lib;
    lt.path_string = tb_string(&b, "/opt/lib/libcublasLt.so.13");
    lt.soname_string = tb_string(&b, "libcublasLt.so.13");
    lt.digest_lo = 7;
    tb_record(&b, KAT_REC_LIBRARY, &lt, sizeof(lt), NULL, 0);
    struct kat_vendor_call_rec inner = { 0 }, outer = { 0 };
    inner.call_id = 2;
    inner.enter_ns = 20;
    inner.exit_ns = 30;
    inner.api_string = tb_string(&b, "cublasLtMatmul");
    inner.library = KAT_LIB_CUBLASLT;
    inner.thread_id = 100;
    inner.depth = 2;
    tb_record(&b, KAT_REC_VENDOR_CALL, &inner, sizeof(inner), NULL, 0);
    outer = inner;
    outer.call_id = 1;
    outer.enter_ns = 10;
    outer.exit_ns = 40;
    outer.api_string = tb_string(&b, "cublasGemmEx");
    outer.library = KAT_LIB_CUBLAS;
    outer.depth = 1;
    tb_record(&b, KAT_REC_VENDOR_CALL, &outer, sizeof(outer), NULL, 0);
    struct kat_external_correlation_rec x = { KAT_VENDOR_CORRELATION_KIND, 77, 2 };
    tb_record(&b, KAT_REC_EXTERNAL_CORRELATION, &x, sizeof(x), NULL, 0);
    struct kat_kernel_rec k = { 0 };
    k.correlation_id = 77;
    k.name_string = tb_string(&b, "nvjet_sm90_tst_8x8_8x8_1x1_v_bz_TNT");
    tb_record(&b, KAT_REC_KERNEL, &k, sizeof(k), NULL, 0);
    tb_process_end(&b, 1, 0, 1);
    char *path;
    cr_assert(asprintf(&path, "%s/p100-1000.kat", dir) > 0);
    cr_assert_eq(tb_write(&b, path), 0);
    free(path);
    tb_free(&b);
    return dir;
}

Test(inventory_calibrate, library_without_digest_is_refused, .init = setup, .fini = teardown)
{
    char *dir = synthetic_session(0, 0);
    struct kinv_inventory *inv = matching_inventory(CUBLAS_DIGEST);
    struct kinv_err err;
    const char *dirs[] = { dir };
    cr_assert_eq(kinv_calibrate(inv, dirs, 1, NULL, NULL, &err), -1);
    cr_expect(strstr(err.msg, "unavailable") && strstr(err.msg, "/opt/lib/libcublas.so.13") &&
              strstr(err.msg, "p100-1000.kat"), "message: %s", err.msg);
    kinv_free(inv);
    free(dir);
}

Test(inventory_calibrate, nested_call_counts_for_the_outermost_library, .init = setup, .fini = teardown)
{
    char *dir = synthetic_session(42, 43);
    /* an inventory without libcublas.so.13: the session's file is added */
    struct kinv_inventory *inv = load_body(
        "L\t0\t" CUBLASLT_DIGEST "\t541595600\tlibcublasLt.so.13\t/usr/local/cuda/lib64/libcublasLt.so.13\n"
        "E\t" NVJET_PATTERN "\tpattern\t0\t\n");
    struct kinv_calibrate_report rep;
    struct kinv_err err;
    const char *dirs[] = { dir };
    cr_assert_eq(kinv_calibrate(inv, dirs, 1, NULL, &rep, &err), 0, "%s", err.msg);
    cr_expect_eq(rep.outer_call, 1);
    cr_expect_eq(rep.lib[KINV_WIN_CUBLAS].added, 1);
    cr_expect_eq(rep.lib[KINV_WIN_CUBLASLT].launches, 0);
    struct kinv_inventory *back = round_trip(inv, "nested.inv");
    const struct kinv_entry *e = entry(back, "nvjet_sm90_tst_8x8_8x8_1x1_v_bz_TNT", KINV_KIND_OBSERVED);
    cr_assert_not_null(e);
    cr_expect_str_eq(back->libs[e->libs[0]].path, "/opt/lib/libcublas.so.13");
    cr_expect_eq(e->n_targets, 0, "no DEVICE record: no target");
    kinv_free(back);
    kinv_free(inv);
    free(dir);
}

Test(inventory_calibrate, unreadable_session_names_the_directory)
{
    struct kinv_inventory *inv = matching_inventory(CUBLAS_DIGEST);
    struct kinv_err err;
    const char *dirs[] = { "/nonexistent/kaudit-session" };
    cr_assert_eq(kinv_calibrate(inv, dirs, 1, NULL, NULL, &err), -1);
    cr_expect(strstr(err.msg, "/nonexistent/kaudit-session") != NULL, "message: %s", err.msg);
    kinv_free(inv);
}
