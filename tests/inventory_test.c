/*
 * inventory_test.c - the vendor kernel inventory on synthetic libraries:
 * what the reader finds, the sealed format and its verification, lookups,
 * patterns, the attribution rule, and bad input (an error naming the file
 * and the offset, never a crash).
 */
#define _GNU_SOURCE
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <criterion/criterion.h>
#include <xxhash.h>
#include <zstd.h>

#include "inventory.h"
#include "internal.h"
#include "synth.h"

#ifndef KINV_FIXTURES_DIR
#error KINV_FIXTURES_DIR must name tests/fixtures/inventory
#endif

/* ---- helpers --------------------------------------------------------------- */

static char tmpdir[64];

static void make_tmpdir(void)
{
    strcpy(tmpdir, "/tmp/kinv-test-XXXXXX");
    cr_assert_not_null(mkdtemp(tmpdir));
}

static void remove_tmpdir(void)
{
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
    cr_expect_eq(system(cmd), 0);
}

static char *write_tmp(const char *name, const void *data, size_t n)
{
    char *path;
    cr_assert_gt(asprintf(&path, "%s/%s", tmpdir, name), 0);
    FILE *f = fopen(path, "wb");
    cr_assert_not_null(f);
    cr_assert_eq(fwrite(data, 1, n, f), n);
    cr_assert_eq(fclose(f), 0);
    return path;
}

static struct kinv_inventory *build_one(const void *img, size_t n, struct kinv_err *err)
{
    struct kinv_inventory *inv = NULL;
    struct kinv_build_options opt = { .threads = 2 };
    if (kinv_build_image(img, n, "libsynth.so.1", &opt, &inv, err))
        return NULL;
    return inv;
}

static const struct kinv_entry *find(const struct kinv_inventory *inv, const char *name, unsigned kind)
{
    for (size_t i = 0; i < inv->n_entries; i++)
        if (inv->entries[i].kind == kind && inv->entries[i].name_len == strlen(name) &&
            !memcmp(inv->entries[i].name, name, strlen(name)))
            return &inv->entries[i];
    return NULL;
}

static void targets_str(const struct kinv_entry *e, char *buf, size_t size)
{
    buf[0] = 0;
    for (uint32_t k = 0; k < e->n_targets; k++) {
        char t[32];
        cr_assert_gt(kinv_target_format(e->targets[k], t, sizeof(t)), 0);
        if (k)
            strncat(buf, ",", size - strlen(buf) - 1);
        strncat(buf, t, size - strlen(buf) - 1);
    }
}

static size_t fatbin_offset(const struct kinv_buf *lib);

static struct kinv_buf reference(int variant)
{
    struct kinv_buf b = { 0 };
    cr_assert_eq(kinv_synth_reference("libsynth.so.1", variant, &b), 0);
    return b;
}

static char *serialize(struct kinv_inventory *inv, size_t *len)
{
    char *text;
    struct kinv_err err;
    cr_assert_eq(kinv_serialize(inv, &text, len, &err), 0, "%s", err.msg);
    return text;
}

/* Rewrites the digest line so that only the structural checks can object. */
static void reseal(char *text, size_t len)
{
    char *body = strchr(strchr(text, '\n') + 1, '\n') + 1;
    size_t hlen = (size_t)(strchr(text, '\n') + 1 - text);
    char *joined = malloc(len);
    memcpy(joined, text, hlen);
    memcpy(joined + hlen, body, len - (size_t)(body - text));
    uint8_t d[16];
    kinv_digest(joined, hlen + len - (size_t)(body - text), d);
    free(joined);
    char hex[33];
    kinv_digest_hex(d, hex);
    memcpy(strchr(text, '\n') + 1 + strlen("digest xxh3-128 "), hex, 32);
}

static int load_text(const char *text, size_t len, struct kinv_err *err)
{
    struct kinv_inventory *inv = NULL;
    int rc = kinv_load_buffer(text, len, "t.inv", &inv, err);
    kinv_free(inv);
    return rc;
}

/* Replaces the first occurrence of from by to (same length or shorter) and reseals. */
static char *mutate(const char *text, size_t len, const char *from, const char *to, size_t *out_len)
{
    const char *at = memmem(text, len, from, strlen(from));
    cr_assert_not_null(at, "'%s' not in the text", from);
    size_t flen = strlen(from), tlen = strlen(to);
    char *m = malloc(len - flen + tlen + 1);
    size_t pre = (size_t)(at - text);
    memcpy(m, text, pre);
    memcpy(m + pre, to, tlen);
    memcpy(m + pre + tlen, at + flen, len - pre - flen);
    *out_len = len - flen + tlen;
    m[*out_len] = 0;
    reseal(m, *out_len);
    return m;
}

/* ---- reading libraries ---------------------------------------------------------- */

Test(inventory_read, finds_every_source_of_names)
{
    struct kinv_buf lib = reference(0);
    struct kinv_err err;
    struct kinv_inventory *inv = build_one(lib.p, lib.len, &err);
    cr_assert_not_null(inv, "%s", err.msg);
    char t[128];

    const struct kinv_entry *e = find(inv, "k_alpha", KINV_KIND_CUBIN);
    cr_assert_not_null(e, "k_alpha (plain cubin and ZSTD cubin) missing");
    targets_str(e, t, sizeof(t));
    cr_expect_str_eq(t, "sm_80,sm_90a", "k_alpha is in an sm_80 and an sm_90a cubin");
    cr_expect_eq(e->n_libs, 1);
    cr_expect_eq(e->lib_embedded[0], 0);

    cr_expect_not_null(find(inv, "k_beta", KINV_KIND_CUBIN));
    cr_expect_not_null(find(inv, "k_gamma", KINV_KIND_CUBIN), "the 112-byte entry header was not stepped over");
    e = find(inv, "k_family", KINV_KIND_CUBIN);
    cr_assert_not_null(e, "the LZ4-frame cubin in the second container was not read");
    targets_str(e, t, sizeof(t));
    cr_expect_str_eq(t, "sm_100f");

    e = find(inv, "k_delta", KINV_KIND_PTX);
    cr_assert_not_null(e, "the LZ4 PTX entry was not read");
    targets_str(e, t, sizeof(t));
    cr_expect_str_eq(t, "compute_90");
    cr_expect_not_null(find(inv, "k_epsilon", KINV_KIND_PTX), ".weak .entry NAME ( was missed");
    cr_expect_null(find(inv, "k_commented_out", KINV_KIND_PTX), "a .entry in a // comment counted");
    cr_expect_null(find(inv, "k_device_function", KINV_KIND_PTX), "a .func counted as a kernel");

    e = find(inv, "k_embedded", KINV_KIND_CUBIN);
    cr_assert_not_null(e, "the container outside .nv_fatbin was not found");
    cr_expect_eq(e->lib_embedded[0], 1, "a name only outside .nv_fatbin must be marked embedded");

    cr_expect_null(find(inv, "device_helper_not_a_kernel", KINV_KIND_CUBIN), "STT_FUNC without STO_ENTRY counted");
    cr_expect_null(find(inv, "variable_not_a_kernel", KINV_KIND_CUBIN), "STT_OBJECT counted");

    cr_expect_not_null(find(inv, "nvjet_sm%d_%s_%dx%d_%c", KINV_KIND_PATTERN), "format string not found");
    cr_expect_null(find(inv, "error %s at %d", KINV_KIND_PATTERN), "a message became a pattern");
    cr_expect_null(find(inv, "ab%dcdefgh", KINV_KIND_PATTERN), "a 2-character prefix became a pattern");
    cr_expect_eq(inv->n_entries, 8, "got %zu entries", inv->n_entries);

    /* module digests: one per distinct cubin (sm_80, sm_90a, sm_100f, the
       embedded sm_75) and one per container (two in .nv_fatbin, one embedded) */
    size_t cubins = 0, containers = 0, embedded_modules = 0;
    for (size_t i = 0; i < inv->n_modules; i++) {
        embedded_modules += inv->modules[i].embedded;
        cubins += inv->modules[i].target != 0;
        containers += inv->modules[i].target == 0;
        const struct kinv_module *m;
        cr_expect_eq(kinv_lookup_module(inv, inv->modules[i].digest, &m), 1);
    }
    cr_expect_eq(cubins, 4);
    cr_expect_eq(containers, 3);
    cr_expect_eq(embedded_modules, 2);
    /* a container's digest is that of its bytes as stored */
    size_t fb = fatbin_offset(&lib);
    uint64_t csize;
    memcpy(&csize, lib.p + fb + 8, 8);
    uint8_t cd[16];
    kinv_digest(lib.p + fb, 16 + csize, cd);
    const struct kinv_module *cm;
    cr_expect_eq(kinv_lookup_module(inv, cd, &cm), 1, "the first container's digest is missing");
    if (cm)
        cr_expect_eq(cm->target, 0);
    static const uint8_t zero[16];
    const struct kinv_module *none;
    cr_expect_eq(kinv_lookup_module(inv, zero, &none), 0);

    cr_assert_eq(inv->n_libs, 1);
    cr_expect_str_eq(inv->libs[0].soname, "libsynth.so.1");
    cr_expect_eq(inv->libs[0].size, lib.len);
    uint8_t d[16];
    kinv_digest(lib.p, lib.len, d);
    cr_expect_eq(memcmp(d, inv->libs[0].digest, 16), 0, "library digest is not XXH3-128 of the file");
    kinv_free(inv);
    kinv_buf_free(&lib);
}

Test(inventory_read, entries_sorted_unique_and_merged_across_libraries, .init = make_tmpdir,
     .fini = remove_tmpdir)
{
    struct kinv_buf a = reference(0), b = reference(1);
    char *pa = write_tmp("liba.so", a.p, a.len), *pb = write_tmp("libb.so", b.p, b.len);
    /* a symbolic link in the directory is skipped, so no library is read twice */
    char *link;
    cr_assert_gt(asprintf(&link, "%s/liblink.so", tmpdir), 0);
    cr_assert_eq(symlink(pa, link), 0);
    const char *paths[] = { tmpdir, pa };
    struct kinv_inventory *inv;
    struct kinv_lib_stats *st;
    struct kinv_err err;
    struct kinv_build_options opt = { .threads = 3 };
    cr_assert_eq(kinv_build(paths, 2, &opt, &inv, &st, &err), 0, "%s", err.msg);
    cr_assert_eq(inv->n_libs, 2, "directory + file named twice + symlink: %zu libraries", inv->n_libs);
    cr_expect(strstr(inv->libs[0].path, "liba.so") && strstr(inv->libs[1].path, "libb.so"));
    for (size_t i = 1; i < inv->n_entries; i++)
        cr_assert_lt(kinv_entry_cmp(&inv->entries[i - 1], &inv->entries[i]), 0, "entries not strictly sorted");
    const struct kinv_entry *e = find(inv, "k_alpha", KINV_KIND_CUBIN);
    cr_assert_not_null(e);
    cr_expect_eq(e->n_libs, 2);
    cr_expect_not_null(find(inv, "k_gamma", KINV_KIND_CUBIN));
    cr_expect_not_null(find(inv, "k_gamma_v2", KINV_KIND_CUBIN));
    cr_expect_eq(find(inv, "k_gamma", KINV_KIND_CUBIN)->n_libs, 1);
    cr_expect_eq(st[0].containers_fatbin_section, 2);
    cr_expect_eq(st[0].containers_elsewhere, 1);
    cr_expect_geq(st[0].rejected_candidates, 1);
    cr_expect_eq(st[0].other_entries, 1, "the kind-8 entry must be skipped and counted");
    cr_expect_eq(st[0].compressed_zstd, 2);
    cr_expect_eq(st[0].compressed_lz4, 2);
    free(st);
    kinv_free(inv);
    free(pa);
    free(pb);
    free(link);
    kinv_buf_free(&a);
    kinv_buf_free(&b);
}

Test(inventory_read, build_is_deterministic_whatever_the_thread_count)
{
    struct kinv_buf lib = reference(0);
    char *texts[3];
    size_t lens[3];
    int threads[3] = { 1, 2, 7 };
    for (int i = 0; i < 3; i++) {
        struct kinv_inventory *inv;
        struct kinv_err err;
        struct kinv_build_options opt = { .threads = threads[i] };
        cr_assert_eq(kinv_build_image(lib.p, lib.len, "libsynth.so.1", &opt, &inv, &err), 0, "%s", err.msg);
        texts[i] = serialize(inv, &lens[i]);
        kinv_free(inv);
    }
    for (int i = 1; i < 3; i++) {
        cr_assert_eq(lens[i], lens[0]);
        cr_assert_eq(memcmp(texts[i], texts[0], lens[0]), 0, "output depends on the thread count");
    }
    for (int i = 0; i < 3; i++)
        free(texts[i]);
    kinv_buf_free(&lib);
}

Test(inventory_read, no_scan_reads_only_nv_fatbin_and_no_patterns_skips_strings)
{
    struct kinv_buf lib = reference(0);
    struct kinv_inventory *inv;
    struct kinv_err err;
    struct kinv_build_options opt = { .threads = 1, .no_scan = 1, .no_patterns = 1 };
    cr_assert_eq(kinv_build_image(lib.p, lib.len, "libsynth.so.1", &opt, &inv, &err), 0, "%s", err.msg);
    cr_expect_null(find(inv, "k_embedded", KINV_KIND_CUBIN));
    cr_expect_null(find(inv, "nvjet_sm%d_%s_%dx%d_%c", KINV_KIND_PATTERN));
    cr_expect_not_null(find(inv, "k_alpha", KINV_KIND_CUBIN));
    kinv_free(inv);
    kinv_buf_free(&lib);
}

/* ---- the sealed format ---------------------------------------------------------- */

Test(inventory_format, round_trip_keeps_everything)
{
    struct kinv_buf lib = reference(0);
    struct kinv_err err;
    struct kinv_inventory *inv = build_one(lib.p, lib.len, &err);
    cr_assert_not_null(inv, "%s", err.msg);
    size_t len;
    char *text = serialize(inv, &len);
    cr_expect_eq(strncmp(text, "kaudit-inventory 1\ndigest xxh3-128 ", 35), 0);
    struct kinv_inventory *back;
    cr_assert_eq(kinv_load_buffer(text, len, "t.inv", &back, &err), 0, "%s", err.msg);
    cr_expect_eq(memcmp(back->digest, inv->digest, 16), 0);
    cr_assert_eq(back->n_entries, inv->n_entries);
    for (size_t i = 0; i < inv->n_entries; i++) {
        const struct kinv_entry *x = &inv->entries[i], *y = &back->entries[i];
        cr_assert_eq(kinv_entry_cmp(x, y), 0);
        cr_assert_eq(x->n_libs, y->n_libs);
        cr_assert_eq(memcmp(x->lib_embedded, y->lib_embedded, x->n_libs), 0);
        cr_assert_eq(x->n_targets, y->n_targets);
        cr_assert_eq(memcmp(x->targets, y->targets, 4 * x->n_targets), 0);
    }
    cr_expect_str_eq(back->libs[0].soname, "libsynth.so.1");
    cr_assert_eq(back->n_modules, inv->n_modules);
    for (size_t i = 0; i < inv->n_modules; i++) {
        const struct kinv_module *x = &inv->modules[i], *y = &back->modules[i];
        cr_expect(!memcmp(x->digest, y->digest, 16) && x->lib == y->lib && x->target == y->target &&
                  x->embedded == y->embedded, "module %zu changed", i);
    }
    size_t len2;
    char *text2 = serialize(back, &len2);
    cr_expect(len2 == len && !memcmp(text, text2, len), "load then write changed the file");
    free(text);
    free(text2);
    kinv_free(back);
    kinv_free(inv);
    kinv_buf_free(&lib);
}

Test(inventory_format, names_with_odd_bytes_are_escaped_and_read_back)
{
    struct kinv_inventory *inv = kinv_new();
    struct kinv_library lib = { .path = "/lib/with space\\and\ttab", .soname = NULL, .size = 1 };
    inv->libs = &lib;
    inv->n_libs = 1;
    uint32_t zero = 0, target = kinv_target_pack(KINV_TARGET_SM, 90, 0);
    uint8_t no = 0;
    struct kinv_entry e[] = {
        { .name = "a b", .name_len = 3, .kind = KINV_KIND_OBSERVED, .n_libs = 1, .libs = &zero,
          .lib_embedded = &no, .n_targets = 1, .targets = &target },
        { .name = "caf\xc3\xa9\\", .name_len = 6, .kind = KINV_KIND_CUBIN, .n_libs = 1, .libs = &zero,
          .lib_embedded = &no, .n_targets = 1, .targets = &target },
    };
    inv->entries = e;
    inv->n_entries = 2;
    size_t len;
    char *text = serialize(inv, &len);
    cr_expect_not_null(strstr(text, "E\ta\\x20b\tobserved\t0\tsm_90\n"));
    cr_expect_not_null(strstr(text, "E\tcaf\\xc3\\xa9\\x5c\tcubin"));
    cr_expect_not_null(strstr(text, "/lib/with\\x20space\\x5cand\\x09tab"));
    struct kinv_inventory *back;
    struct kinv_err err;
    cr_assert_eq(kinv_load_buffer(text, len, "t.inv", &back, &err), 0, "%s", err.msg);
    cr_expect_str_eq(back->libs[0].path, lib.path);
    cr_expect_null(back->libs[0].soname);
    const struct kinv_entry *first;
    cr_expect_eq(kinv_lookup_name(back, "caf\xc3\xa9\\", 6, &first), 1);
    kinv_free(back);
    free(text);
    inv->libs = NULL;
    inv->entries = NULL;
    kinv_free(inv);
}

Test(inventory_format, compressed_file_loads_like_plain, .init = make_tmpdir, .fini = remove_tmpdir)
{
    struct kinv_buf lib = reference(0);
    struct kinv_err err;
    struct kinv_inventory *inv = build_one(lib.p, lib.len, &err);
    cr_assert_not_null(inv, "%s", err.msg);
    char *plain, *z;
    cr_assert_gt(asprintf(&plain, "%s/a.inv", tmpdir), 0);
    cr_assert_gt(asprintf(&z, "%s/a.inv.zst", tmpdir), 0);
    cr_assert_eq(kinv_write(inv, plain, &err), 0, "%s", err.msg);
    cr_assert_eq(kinv_write(inv, z, &err), 0, "%s", err.msg);
    struct kinv_inventory *a, *b;
    cr_assert_eq(kinv_load(plain, &a, &err), 0, "%s", err.msg);
    cr_assert_eq(kinv_load(z, &b, &err), 0, "%s", err.msg);
    cr_expect_eq(memcmp(a->digest, b->digest, 16), 0);
    cr_expect_eq(memcmp(a->digest, inv->digest, 16), 0);
    kinv_free(a);
    kinv_free(b);
    kinv_free(inv);
    free(plain);
    free(z);
    kinv_buf_free(&lib);
}

Test(inventory_format, writing_to_a_fifo_never_replaces_it, .init = make_tmpdir, .fini = remove_tmpdir)
{
    /* regression: writing through a temporary file and rename() replaced
       /dev/null with a regular file once */
    struct kinv_buf lib = reference(0);
    struct kinv_err err;
    struct kinv_inventory *inv = build_one(lib.p, lib.len, &err);
    cr_assert_not_null(inv, "%s", err.msg);
    char *fifo;
    cr_assert_gt(asprintf(&fifo, "%s/fifo", tmpdir), 0);
    cr_assert_eq(mkfifo(fifo, 0600), 0);
    int rd = open(fifo, O_RDONLY | O_NONBLOCK);
    cr_assert_geq(rd, 0);
    cr_assert_eq(kinv_write(inv, fifo, &err), 0, "%s", err.msg);
    struct stat st;
    cr_assert_eq(stat(fifo, &st), 0);
    cr_expect(S_ISFIFO(st.st_mode), "the FIFO was replaced by a %o", st.st_mode & S_IFMT);
    close(rd);
    free(fifo);
    kinv_free(inv);
    kinv_buf_free(&lib);
}

/* ---- verification fails closed ------------------------------------------------ */

struct tamper {
    const char *from, *to, *expect;
};

Test(inventory_verify, every_kind_of_damage_is_refused_with_line_and_offset)
{
    struct kinv_buf lib = reference(0);
    struct kinv_err err;
    struct kinv_inventory *inv = build_one(lib.p, lib.len, &err);
    cr_assert_not_null(inv, "%s", err.msg);
    size_t len;
    char *text = serialize(inv, &len);
    cr_assert_eq(load_text(text, len, &err), 0, "%s", err.msg);

    /* each mutation is resealed, so the structural check has to catch it */
    static const struct tamper cases[] = {
        { "E\tk_beta\t", "E\tk_zzzz\t", "not sorted" },
        { "E\tk_beta\tcubin", "E\tk_alpha\tcubin", "not sorted" },
        { "\tcubin\t0\tsm_80\n", "\tcubin\t1\tsm_80\n", "library index" },
        { "\tcubin\t0\tsm_80\n", "\tcubin\t00\tsm_80\n", "library index" },
        { "\tcubin\t0\tsm_80\n", "\tcubin\t\tsm_80\n", "no library" },
        { "\tcubin\t0\tsm_80\n", "\tkernel\t0\tsm_80\n", "unknown kind" },
        { "\tsm_80,sm_90a\n", "\tsm_90a,sm_80\n", "targets not ascending" },
        { "\tsm_80,sm_90a\n", "\tsm_80,sm_80\n", "targets not ascending" },
        { "\tsm_80,sm_90a\n", "\tsm_80,gfx90a\n", "bad target" },
        { "\tsm_80,sm_90a\n", "\tsm_80,sm_090\n", "bad target" },
        { "E\tk_beta\t", "E\tk_\\x62eta\t", "needless escape" },
        { "E\tk_beta\t", "E\tk_\\q62eta\t", "bad escape" },
        { "E\tk_beta\t", "X\tk_beta\t", "unknown record type" },
        { "E\tk_beta\tcubin\t0\tsm_80\n", "E\tk_beta\tcubin\t0\tsm_80\textra\n", "fields" },
        { "E\tk_embedded\tcubin\t0e", "E\tk_embedded\tpattern\t0e", "embedded" },
        { "\tpattern\t0\t\n", "\tpattern\t0\tsm_80\n", "pattern has no targets" },
        { "nvjet_sm%d_", "nvjet_sm%q_", "invalid pattern" },
        { "L\t0\t", "L\t1\t", "library index must be 0" },
        { "kaudit-inventory 1", "kaudit-inventory 9", "unsupported format version" },
        { "\tsm_75\nC\t", "\tsm_75\nX\t", "unknown record type" },
        { "0e\tsm_75\n", "7e\tsm_75\n", "library index" },
        { "0e\tsm_75\n", "0e\tcompute_75\n", "a module is an sm_ cubin" },
        { "0e\tfatbin\n", "0e\tfatbim\n", "a module is an sm_ cubin" },
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        size_t mlen;
        char *m = mutate(text, len, cases[i].from, cases[i].to, &mlen);
        err.msg[0] = 0;
        cr_expect_neq(load_text(m, mlen, &err), 0, "case %zu ('%s') loaded", i, cases[i].to);
        cr_expect_not_null(strstr(err.msg, cases[i].expect), "case %zu: '%s' lacks '%s'", i, err.msg,
                           cases[i].expect);
        cr_expect_not_null(strstr(err.msg, "t.inv"), "case %zu: '%s' does not name the file", i, err.msg);
        if (strcmp(cases[i].expect, "unsupported format version"))
            cr_expect_not_null(strstr(err.msg, "offset"), "case %zu: '%s' has no offset", i, err.msg);
        free(m);
    }

    /* without resealing: any changed byte breaks the digest */
    for (size_t at = 60; at < len; at += 97) {
        char *m = malloc(len);
        memcpy(m, text, len);
        m[at] = m[at] == 'a' ? 'b' : 'a';
        cr_expect_neq(load_text(m, len, &err), 0, "a byte changed at %zu went unnoticed", at);
        cr_expect(strstr(err.msg, "digest mismatch") || strstr(err.msg, "t.inv"), "%s", err.msg);
        free(m);
    }
    /* truncation, at every length */
    for (size_t cut = 0; cut < len; cut++) {
        cr_expect_neq(load_text(text, cut, &err), 0, "truncated at %zu and still loaded", cut);
        cr_expect_not_null(strstr(err.msg, "t.inv"));
    }
    /* trailing garbage */
    char *more = malloc(len + 8);
    memcpy(more, text, len);
    memcpy(more + len, "E\tzz\n", 5);
    cr_expect_neq(load_text(more, len + 5, &err), 0);
    free(more);
    /* corrupt ZSTD */
    size_t zb = ZSTD_compressBound(len);
    uint8_t *z = malloc(zb);
    size_t zl = ZSTD_compress(z, zb, text, len, 3);
    cr_assert(!ZSTD_isError(zl));
    struct kinv_inventory *ok;
    cr_expect_eq(kinv_load_buffer(z, zl, "t.inv.zst", &ok, &err), 0, "%s", err.msg);
    kinv_free(ok);
    z[zl / 2] ^= 0x55;
    cr_expect_neq(kinv_load_buffer(z, zl, "t.inv.zst", &ok, &err), 0);
    cr_expect_not_null(strstr(err.msg, "t.inv.zst"), "%s", err.msg);
    cr_expect_neq(kinv_load_buffer(z, zl / 3, "t.inv.zst", &ok, &err), 0, "truncated ZSTD loaded");
    cr_expect_not_null(strstr(err.msg, "offset"), "%s", err.msg);
    free(z);
    free(text);
    kinv_free(inv);
    kinv_buf_free(&lib);
}

/* A zstd bomb (issue 14): a few hundred KB that inflate past the bound stop
 * at the bound, with the file named, instead of taking gigabytes. */
Test(inventory_format, a_zstd_bomb_stops_at_the_bound)
{
    ZSTD_CCtx *cc = ZSTD_createCCtx();
    cr_assert_not_null(cc);
    size_t cap = 1 << 20, used = 0;
    uint8_t *z = malloc(cap);
    static char zeros[1 << 20];
    uint64_t total = KINV_MAX_INVENTORY_SIZE + (64u << 20);
    for (uint64_t done = 0; done < total; done += sizeof zeros) {
        ZSTD_inBuffer in = { zeros, sizeof zeros, 0 };
        ZSTD_EndDirective end = done + sizeof zeros >= total ? ZSTD_e_end : ZSTD_e_continue;
        size_t left;
        do {
            if (cap - used < (1 << 16))
                z = realloc(z, cap *= 2);
            ZSTD_outBuffer out = { z, cap, used };
            left = ZSTD_compressStream2(cc, &out, &in, end);
            cr_assert(!ZSTD_isError(left), "%s", ZSTD_getErrorName(left));
            used = out.pos;
        } while (in.pos < in.size || (end == ZSTD_e_end && left));
    }
    ZSTD_freeCCtx(cc);
    cr_assert_lt(used, 1u << 20, "the bomb is small: %zu bytes", used);
    struct kinv_inventory *inv = NULL;
    struct kinv_err err;
    cr_assert_neq(kinv_load_buffer(z, used, "bomb.inv.zst", &inv, &err), 0);
    cr_expect_not_null(strstr(err.msg, "bomb.inv.zst"), "%s", err.msg);
    cr_expect_not_null(strstr(err.msg, "exceeds"), "%s", err.msg);
    free(z);
}

Test(inventory_format, digest_from_trace_halves)
{
    /* trace records store XXH3-128 as two u64 halves; inventories the canonical bytes */
    static const char data[] = "some library bytes";
    XXH128_hash_t h = XXH3_128bits(data, sizeof(data));
    uint8_t a[16], b[16];
    kinv_digest(data, sizeof(data), a);
    kinv_digest_from_halves(h.low64, h.high64, b);
    cr_expect_eq(memcmp(a, b, 16), 0);
}

/* ---- lookups ---------------------------------------------------------------------- */

Test(inventory_lookup, exact_observed_pattern_and_none)
{
    struct kinv_buf lib = reference(0);
    struct kinv_err err;
    struct kinv_inventory *inv = build_one(lib.p, lib.len, &err);
    cr_assert_not_null(inv, "%s", err.msg);
    struct kinv_match m;
    kinv_match(inv, "k_alpha", 7, &m);
    cr_expect_eq(m.strength, KINV_MATCH_EXACT);
    cr_expect_eq(m.count, 1);
    kinv_match(inv, "k_delta", 7, &m);
    cr_expect_eq(m.strength, KINV_MATCH_EXACT, "a PTX .entry name is an exact name");
    kinv_match(inv, "nvjet_sm90_hsh_64x8_h", 21, &m);
    cr_expect_eq(m.strength, KINV_MATCH_PATTERN);
    cr_expect_not_null(m.pattern);
    kinv_match(inv, "nvjet_sm%d_%s_%dx%d_%c", 22, &m);
    cr_expect_neq(m.strength, KINV_MATCH_EXACT, "the pattern text itself is no exact name");
    kinv_match(inv, "k_alph", 6, &m);
    cr_expect_eq(m.strength, KINV_MATCH_NONE);
    kinv_match(inv, "k_alphaa", 8, &m);
    cr_expect_eq(m.strength, KINV_MATCH_NONE);
    kinv_match(inv, "", 0, &m);
    cr_expect_eq(m.strength, KINV_MATCH_NONE);
    kinv_free(inv);
    kinv_buf_free(&lib);
}

Test(inventory_lookup, one_name_in_several_kinds)
{
    struct kinv_inventory *inv = kinv_new();
    struct kinv_library lib = { .path = "/l", .size = 1 };
    uint32_t zero = 0, t = kinv_target_pack(KINV_TARGET_SM, 90, 0);
    uint8_t no = 0;
    struct kinv_entry e[] = {
        { .name = "n1", .name_len = 2, .kind = KINV_KIND_CUBIN, .n_libs = 1, .libs = &zero, .lib_embedded = &no, .n_targets = 1, .targets = &t },
        { .name = "n1", .name_len = 2, .kind = KINV_KIND_PTX, .n_libs = 1, .libs = &zero, .lib_embedded = &no, .n_targets = 1, .targets = &t },
        { .name = "n1", .name_len = 2, .kind = KINV_KIND_OBSERVED, .n_libs = 1, .libs = &zero, .lib_embedded = &no, .n_targets = 1, .targets = &t },
        { .name = "n1", .name_len = 2, .kind = KINV_KIND_PATTERN, .n_libs = 1, .libs = &zero, .lib_embedded = &no },
        { .name = "n2", .name_len = 2, .kind = KINV_KIND_OBSERVED, .n_libs = 1, .libs = &zero, .lib_embedded = &no, .n_targets = 1, .targets = &t },
        { .name = "n3%d", .name_len = 4, .kind = KINV_KIND_PATTERN, .n_libs = 1, .libs = &zero, .lib_embedded = &no },
    };
    inv->libs = &lib;
    inv->n_libs = 1;
    inv->entries = e;
    inv->n_entries = 6;
    struct kinv_err err;
    cr_assert_eq(kinv_index(inv, &err), 0, "%s", err.msg);
    struct kinv_match m;
    kinv_match(inv, "n1", 2, &m);
    cr_expect_eq(m.strength, KINV_MATCH_EXACT);
    cr_expect_eq(m.count, 3, "cubin, ptx and observed share the name; the pattern does not count");
    cr_expect_eq(m.first, &e[0]);
    kinv_match(inv, "n2", 2, &m);
    cr_expect_eq(m.strength, KINV_MATCH_OBSERVED);
    cr_expect_eq(m.count, 1);
    kinv_match(inv, "n37", 3, &m);
    cr_expect_eq(m.strength, KINV_MATCH_PATTERN);
    cr_expect_eq(m.pattern, &e[5]);
    inv->libs = NULL;
    inv->entries = NULL;
    kinv_free(inv);
}

Test(inventory_lookup, batch_agrees_with_single_lookups, .init = make_tmpdir, .fini = remove_tmpdir)
{
    /* two libraries, so that names repeat across kinds and libraries */
    struct kinv_buf a = reference(0), b = reference(1);
    char *pa = write_tmp("liba.so", a.p, a.len), *pb = write_tmp("libb.so", b.p, b.len);
    const char *paths[] = { pa, pb };
    struct kinv_inventory *inv;
    struct kinv_err err;
    cr_assert_eq(kinv_build(paths, 2, NULL, &inv, NULL, &err), 0, "%s", err.msg);
    size_t n = 2 * inv->n_entries + 3;
    struct kinv_query *q = calloc(n, sizeof(*q));
    char **owned = calloc(n, sizeof(char *));
    size_t k = 0;
    for (size_t i = 0; i < inv->n_entries; i++) {
        q[k++] = (struct kinv_query){ inv->entries[i].name, inv->entries[i].name_len, NULL, 0 };
        owned[k] = strndup(inv->entries[i].name, inv->entries[i].name_len);
        owned[k][0] ^= 0x20;    /* a miss (or another name) */
        q[k] = (struct kinv_query){ owned[k], inv->entries[i].name_len, NULL, 0 };
        k++;
    }
    q[k++] = (struct kinv_query){ "", 0, NULL, 0 };
    q[k++] = (struct kinv_query){ "k_alpha", 7, NULL, 0 };
    q[k++] = (struct kinv_query){ "k_alpha", 6, NULL, 0 };
    kinv_lookup_batch(inv, q, k);
    for (size_t i = 0; i < k; i++) {
        const struct kinv_entry *first = NULL;
        size_t count = kinv_lookup_name(inv, q[i].name, q[i].len, &first);
        cr_expect_eq(q[i].count, count, "query %zu '%.*s'", i, (int)q[i].len, q[i].name);
        if (count)
            cr_expect_eq(q[i].first, first, "query %zu", i);
        if (count)
            for (size_t c = 0; c < count; c++)
                cr_expect(first[c].name_len == q[i].len && !memcmp(first[c].name, q[i].name, q[i].len));
    }
    const struct kinv_entry *first;
    cr_expect_eq(kinv_lookup_name(inv, "k_delta", 7, &first), 1);
    for (size_t i = 0; i < n; i++)
        free(owned[i]);
    free(owned);
    free(q);
    free(pa);
    free(pb);
    kinv_free(inv);
    kinv_buf_free(&a);
    kinv_buf_free(&b);
}

/* ---- patterns ---------------------------------------------------------------------- */

#define NVJET90 "nvjet_sm90_%s_%dx%d_%dx%d_%dx%d_%c_%s%s%s%s%s%s%s%s%s%s_%c%c%c"
#define NVJETXX "nvjet_sm%d_%s_%dx%d_%dx%d_%dx%d%s_%c_%s%s%s%s%s%s%s%s_%c%c%c"

Test(inventory_patterns, every_recorded_nvjet_name_matches_the_format_string)
{
    /* names PyTorch launched on the H200 (../shared/notes/h200-torch-kernel-names.txt) */
    FILE *f = fopen(KINV_FIXTURES_DIR "/h200-nvjet-names.txt", "r");
    cr_assert_not_null(f);
    char line[512];
    int n = 0;
    while (fgets(line, sizeof(line), f)) {
        size_t len = strcspn(line, "\r\n");
        if (!len)
            continue;
        n++;
        cr_expect(kinv_pattern_match_text(NVJET90, strlen(NVJET90), line, len), "%.*s", (int)len, line);
        cr_expect(kinv_pattern_match_text(NVJETXX, strlen(NVJETXX), line, len), "%.*s", (int)len, line);
    }
    fclose(f);
    cr_expect_eq(n, 12);
}

Test(inventory_patterns, anchored_and_typed)
{
    struct { const char *pattern, *name; int match; } cases[] = {
        { NVJET90, "nvjet_sm90_hsh_64x8_64x16_1x2_h_bz_NNT", 1 },
        { NVJET90, "nvjet_sm90_hsh_64x8_64x16_1x2_h_bz_NNT_", 0 },       /* anchored at the end */
        { NVJET90, "xnvjet_sm90_hsh_64x8_64x16_1x2_h_bz_NNT", 0 },       /* and at the start */
        { NVJET90, "nvjet_sm90_hsh_64x8_64x16_1x2_h_bz_NN", 0 },         /* %c%c%c needs three */
        { NVJET90, "nvjet_sm90_hsh_64xA_64x16_1x2_h_bz_NNT", 0 },        /* %d needs digits */
        { NVJET90, "nvjet_sm90_hsh_64x_64x16_1x2_h_bz_NNT", 0 },         /* at least one */
        { NVJET90, "nvjet_sm90_hsh_64x8_64x16_1x2_hh_bz_NNT", 0 },       /* %c is one character */
        { NVJET90, "nvjet_sm90_h.sh_64x8_64x16_1x2_h_bz_NNT", 0 },       /* %s is [A-Za-z0-9_]* */
        { "k_%d", "k_-12", 1 },
        { "k_%d", "k_-", 0 },
        { "k_%u", "k_-12", 0 },
        { "k_%x", "k_dEadBeef", 1 },
        { "k_%x", "k_g", 0 },
        { "k_%02d_%ld", "k_07_123", 1 },
        { "k_%s", "k_", 1 },
        { "k_%c", "k_", 0 },
        { "a%sb%sc", "aXbYbZc", 1 },
        { "a%sb%sc", "abc", 1 },
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        cr_expect_eq(kinv_pattern_match_text(cases[i].pattern, strlen(cases[i].pattern), cases[i].name,
                                             strlen(cases[i].name)), cases[i].match,
                     "'%s' vs '%s'", cases[i].pattern, cases[i].name);
    cr_expect_eq(kinv_pattern_check("k_%q", 4), -1);
    cr_expect_eq(kinv_pattern_check("k_%", 3), -1);
    cr_expect_eq(kinv_pattern_check("k_%%", 4), -1);
    cr_expect_eq(kinv_pattern_check(NVJET90, strlen(NVJET90)), 0);
}

Test(inventory_patterns, adversarial_names_match_in_linear_time)
{
    /* a candidate controls its kernel names: matching must not backtrack */
    size_t n = 100000;
    char *name = malloc(n + 1);
    memset(name, 'a', n);
    name[n] = 0;
    const char *p = "%s%sa%sa%sa%sa%sa%sb";
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    cr_expect_eq(kinv_pattern_match_text(p, strlen(p), name, n), 0);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double s = (double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9;
    cr_expect_lt(s, 0.5, "took %.3f s", s);
    free(name);
}

static struct {
    char found[8][80];
    int n;
} scanned;

static int collect(void *ctx, const char *s, size_t len)
{
    (void)ctx;
    if (scanned.n < 8)
        snprintf(scanned.found[scanned.n++], 80, "%.*s", (int)len, s);
    return 0;
}

Test(inventory_patterns, format_string_scan_keeps_kernel_templates_only)
{
    static const char data[] =
        "\0nvjet_sm90_%s_%dx%d_%dx%d_%dx%d_%c_%s%s%s%s%s%s%s%s%s%s_%c%c%c"
        "\0RNN_persist_fp_%d%d%d%d%d%d"
        "\0cannot open %s"          /* a space: a message, not a name */
        "\0array_%d_%d"             /* 7 literal characters: too generic */
        "\0abc%dxxxxxxxx"           /* 3-character prefix */
        "\0%s_kernel_name"          /* starts with a conversion */
        "\0100%% done"              /* %% */
        "\0kernel_%f_value"         /* %f */
        "\0tail_without_nul_%d";
    scanned.n = 0;
    cr_assert_eq(kinv_scan_format_strings((const uint8_t *)data, sizeof(data) - 1, collect, NULL), 0);
    cr_assert_eq(scanned.n, 2, "found %d", scanned.n);
    cr_expect_str_eq(scanned.found[0], NVJET90);
    cr_expect_str_eq(scanned.found[1], "RNN_persist_fp_%d%d%d%d%d%d");
}

/* ---- bad input ----------------------------------------------------------------------- */

static void expect_build_error(const void *img, size_t n, const char *what, const char *needle)
{
    struct kinv_err err;
    err.msg[0] = 0;
    struct kinv_inventory *inv = build_one(img, n, &err);
    cr_expect_null(inv, "%s: built anyway", what);
    kinv_free(inv);
    cr_expect_not_null(strstr(err.msg, "libsynth.so.1"), "%s: '%s' does not name the file", what, err.msg);
    cr_expect_not_null(strstr(err.msg, "offset"), "%s: '%s' has no offset", what, err.msg);
    if (needle)
        cr_expect_not_null(strstr(err.msg, needle), "%s: '%s' lacks '%s'", what, err.msg, needle);
}

/* Offset of the .nv_fatbin section in a reference library. */
static size_t fatbin_offset(const struct kinv_buf *lib)
{
    const Elf64_Ehdr *eh = (const void *)lib->p;
    const Elf64_Shdr *sh = (const void *)(lib->p + eh->e_shoff);
    const char *names = (const char *)lib->p + sh[eh->e_shstrndx].sh_offset;
    for (int i = 0; i < eh->e_shnum; i++)
        if (!strcmp(names + sh[i].sh_name, ".nv_fatbin"))
            return sh[i].sh_offset;
    cr_assert_fail("no .nv_fatbin");
    return 0;
}

Test(inventory_bad_input, truncated_library_at_every_length_is_an_error_not_a_crash)
{
    struct kinv_buf lib = reference(0);
    for (size_t cut = 0; cut < lib.len; cut += (cut < 128 ? 1 : 7)) {
        struct kinv_err err;
        struct kinv_inventory *inv = build_one(lib.p, cut, &err);
        if (inv) {      /* a cut that leaves a valid ELF (past the section table) is fine */
            kinv_free(inv);
            continue;
        }
        cr_expect_not_null(strstr(err.msg, "libsynth.so.1"), "cut %zu: %s", cut, err.msg);
    }
    kinv_buf_free(&lib);
}

Test(inventory_bad_input, corrupt_container_fields)
{
    struct kinv_buf lib = reference(0);
    size_t fb = fatbin_offset(&lib);
    uint8_t *m = malloc(lib.len);
    struct { size_t at; uint64_t value; int width; const char *what, *needle; } cases[] = {
        { 8, 1ull << 40, 8, "container size past the section", "truncated fatbin container" },
        { 4, 7, 2, "container version", "unsupported version" },
        { 6, 4, 2, "container header size", "bad header size" },
        { 16 + 4, 8, 4, "entry header size below 64", "header size" },
        { 16 + 4, 1u << 30, 4, "entry header size past the end", "header size" },
        { 16 + 8, 1ull << 33, 8, "entry payload past the end", "runs past" },
        { 0, 0x12345678, 4, "no magic in .nv_fatbin", "unexpected bytes in .nv_fatbin" },
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        memcpy(m, lib.p, lib.len);
        memcpy(m + fb + cases[i].at, &cases[i].value, (size_t)cases[i].width);
        expect_build_error(m, lib.len, cases[i].what, cases[i].needle);
    }
    free(m);
    kinv_buf_free(&lib);
}

/* Finds the first entry of this kind and compression in the first container. */
static size_t entry_offset(const struct kinv_buf *lib, int index)
{
    size_t e = fatbin_offset(lib) + 16;
    for (int i = 0; i < index; i++) {
        uint32_t hs;
        uint64_t ps;
        memcpy(&hs, lib->p + e + 4, 4);
        memcpy(&ps, lib->p + e + 8, 8);
        e += hs + ps;
    }
    return e;
}

Test(inventory_bad_input, corrupt_compressed_payloads_and_cubins)
{
    struct kinv_buf lib = reference(0);
    uint8_t *m = malloc(lib.len);
    /* entry 1 is the ZSTD cubin, entry 2 the LZ4 PTX, entry 0 the plain cubin */
    size_t zstd_e = entry_offset(&lib, 1), lz4_e = entry_offset(&lib, 2), plain_e = entry_offset(&lib, 0);
    uint32_t hs;

    memcpy(m, lib.p, lib.len);
    memcpy(&hs, m + zstd_e + 4, 4);
    m[zstd_e + hs + 1] ^= 0xff;         /* inside the ZSTD frame header */
    expect_build_error(m, lib.len, "corrupt ZSTD", "ZSTD");

    memcpy(m, lib.p, lib.len);
    uint64_t big = 1ull << 20;
    memcpy(m + zstd_e + 0x38, &big, 8);  /* decompressed size disagrees */
    expect_build_error(m, lib.len, "ZSTD size mismatch", "fatbin entry at offset");

    memcpy(m, lib.p, lib.len);
    memcpy(&hs, m + lz4_e + 4, 4);
    memset(m + lz4_e + hs, 0xff, 8);     /* LZ4 token with absurd lengths */
    expect_build_error(m, lib.len, "corrupt LZ4", "LZ4");

    memcpy(m, lib.p, lib.len);
    memcpy(&hs, m + plain_e + 4, 4);
    m[plain_e + hs] = 'X';               /* the plain cubin loses its ELF magic */
    expect_build_error(m, lib.len, "cubin without ELF magic", "not an ELF image");

    memcpy(m, lib.p, lib.len);
    uint16_t machine = 62;
    memcpy(m + plain_e + hs + 18, &machine, 2);
    expect_build_error(m, lib.len, "cubin for x86-64", "not a CUDA ELF");

    memcpy(m, lib.p, lib.len);
    uint64_t shoff = 1ull << 40;         /* cubin section table out of range */
    memcpy(m + plain_e + hs + 0x28, &shoff, 8);
    expect_build_error(m, lib.len, "cubin section table", "cubin");

    free(m);
    kinv_buf_free(&lib);
}

Test(inventory_bad_input, host_file_problems, .init = make_tmpdir, .fini = remove_tmpdir)
{
    struct kinv_err err;
    expect_build_error("", 0, "empty", "not an ELF");
    expect_build_error("not an elf file at all", 22, "text", "not an ELF");
    struct kinv_buf lib = reference(0);
    uint8_t *m = malloc(lib.len);
    memcpy(m, lib.p, lib.len);
    Elf64_Ehdr *eh = (void *)m;
    Elf64_Shdr *sh = (void *)(m + eh->e_shoff);
    sh[2].sh_size = 1ull << 40;         /* .rodata claims more bytes than the file has */
    expect_build_error(m, lib.len, "section past the end", "runs past the end of the file");
    free(m);

    const char *missing[] = { "/nonexistent/libnothing.so" };
    struct kinv_inventory *inv;
    cr_expect_neq(kinv_build(missing, 1, NULL, &inv, NULL, &err), 0);
    cr_expect_not_null(strstr(err.msg, "/nonexistent/libnothing.so"), "%s", err.msg);
    const char *empty_dir[] = { tmpdir };
    cr_expect_neq(kinv_build(empty_dir, 1, NULL, &inv, NULL, &err), 0);
    cr_expect_not_null(strstr(err.msg, "no libraries"), "%s", err.msg);
    kinv_buf_free(&lib);
}

/* ---- the attribution rule ---------------------------------------------------------- */

Test(inventory_attribution, name_match_alone_never_counts_as_vendor_work)
{
    struct kinv_buf lib = reference(0);
    struct kinv_err err;
    struct kinv_inventory *inv = build_one(lib.p, lib.len, &err);
    cr_assert_not_null(inv, "%s", err.msg);
    const uint8_t *pinned = inv->libs[0].digest;
    static const uint8_t unknown[16] = { 1, 2, 3 };
    cr_assert_gt(inv->n_modules, 0);
    const uint8_t *vendor_cubin = inv->modules[0].digest;
    struct {
        const char *name;
        int window;
        const uint8_t *window_digest;
        enum kinv_module_origin origin;
        const uint8_t *module_digest;
        enum kinv_verdict verdict;
        const uint8_t *cubin_digest;
    } cases[] = {
        /* vendor name, vendor window of a pinned library: vendor work */
        { "k_alpha", 1, pinned, KINV_MODULE_UNKNOWN, NULL, KINV_VERDICT_VENDOR, NULL },
        /* runtime-named kernel (pattern) or no name at all: the window decides */
        { "nvjet_sm90_tst_64x8_h", 1, pinned, KINV_MODULE_UNKNOWN, NULL, KINV_VERDICT_VENDOR, NULL },
        { "cudnn_generated_fort_native_sdpa", 1, pinned, KINV_MODULE_UNKNOWN, NULL, KINV_VERDICT_VENDOR, NULL },
        /* module loaded from a pinned vendor library */
        { "k_alpha", 0, NULL, KINV_MODULE_VENDOR, pinned, KINV_VERDICT_VENDOR, NULL },
        /* the library behind the evidence is not the inventoried one */
        { "k_alpha", 1, unknown, KINV_MODULE_UNKNOWN, NULL, KINV_VERDICT_VENDOR_UNPINNED, NULL },
        { "k_alpha", 0, NULL, KINV_MODULE_VENDOR, unknown, KINV_VERDICT_VENDOR_UNPINNED, NULL },
        /* an exact vendor name compiled into the candidate's own module */
        { "k_alpha", 0, NULL, KINV_MODULE_CANDIDATE, NULL, KINV_VERDICT_IMPERSONATION, NULL },
        /* ... even when the candidate wraps it in a vendor-looking window */
        { "k_alpha", 1, pinned, KINV_MODULE_CANDIDATE, NULL, KINV_VERDICT_IMPERSONATION, NULL },
        { "nvjet_sm90_tst_64x8_h", 0, NULL, KINV_MODULE_CANDIDATE, NULL, KINV_VERDICT_IMPERSONATION, NULL },
        /* a name that merely resembles a vendor name */
        { "ampere_sgemm_128x64_tn_like_custom", 0, NULL, KINV_MODULE_CANDIDATE, NULL, KINV_VERDICT_CANDIDATE, NULL },
        { "k_alpha_like_custom", 0, NULL, KINV_MODULE_UNKNOWN, NULL, KINV_VERDICT_UNATTRIBUTED, NULL },
        /* vendor name, no origin evidence */
        { "k_alpha", 0, NULL, KINV_MODULE_UNKNOWN, NULL, KINV_VERDICT_NAME_ONLY, NULL },
        { "k_alpha", 0, NULL, KINV_MODULE_OTHER, NULL, KINV_VERDICT_NAME_ONLY, NULL },
        /* contradictory evidence */
        { "k_alpha", 1, pinned, KINV_MODULE_OTHER, NULL, KINV_VERDICT_CONFLICT, NULL },
        /* the candidate loads a vendor cubin itself: vendor code (delegation), not impersonation */
        { "k_alpha", 0, NULL, KINV_MODULE_CANDIDATE, NULL, KINV_VERDICT_VENDOR, vendor_cubin },
        { "renamed_anything", 0, NULL, KINV_MODULE_UNKNOWN, NULL, KINV_VERDICT_VENDOR, vendor_cubin },
        /* a module digest the inventory does not know changes nothing */
        { "k_alpha", 0, NULL, KINV_MODULE_CANDIDATE, NULL, KINV_VERDICT_IMPERSONATION, unknown },
        { "k_alpha", 0, NULL, KINV_MODULE_UNKNOWN, NULL, KINV_VERDICT_NAME_ONLY, unknown },
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct kinv_launch_facts f = {
            .name = cases[i].name, .name_len = strlen(cases[i].name),
            .in_vendor_window = cases[i].window, .window_library_digest = cases[i].window_digest,
            .module_origin = cases[i].origin, .module_library_digest = cases[i].module_digest,
            .module_digest = cases[i].cubin_digest,
        };
        struct kinv_attribution a;
        kinv_attribute(inv, &f, &a);
        cr_expect_eq(a.verdict, cases[i].verdict, "case %zu (%s): got %s, want %s (%s)", i, cases[i].name,
                     kinv_verdict_name(a.verdict), kinv_verdict_name(cases[i].verdict), a.reason);
        cr_expect_eq(a.counts_as_vendor_work, cases[i].verdict == KINV_VERDICT_VENDOR, "case %zu", i);
        int origin_evidence = (cases[i].window && cases[i].origin != KINV_MODULE_CANDIDATE) ||
                              cases[i].origin == KINV_MODULE_VENDOR || cases[i].cubin_digest == vendor_cubin;
        if (!origin_evidence)
            cr_expect_eq(a.counts_as_vendor_work, 0, "case %zu: vendor work without origin evidence", i);
    }
    kinv_free(inv);
    kinv_buf_free(&lib);
}

/* The analyzer runs without an inventory too (kaudit analyze without --inventory) and
 * applies the same rule: nothing matches, nothing is pinned against, origin evidence stands. */
Test(inventory_attribution, without_an_inventory_origin_evidence_stands)
{
    static const uint8_t digest[16] = { 1, 2, 3 };
    struct {
        int window;
        enum kinv_module_origin origin;
        enum kinv_verdict verdict;
    } cases[] = {
        { 1, KINV_MODULE_UNKNOWN, KINV_VERDICT_VENDOR },
        { 0, KINV_MODULE_VENDOR, KINV_VERDICT_VENDOR },
        { 1, KINV_MODULE_CANDIDATE, KINV_VERDICT_CANDIDATE },
        { 0, KINV_MODULE_CANDIDATE, KINV_VERDICT_CANDIDATE },
        { 1, KINV_MODULE_OTHER, KINV_VERDICT_CONFLICT },
        { 0, KINV_MODULE_OTHER, KINV_VERDICT_UNATTRIBUTED },
        { 0, KINV_MODULE_UNKNOWN, KINV_VERDICT_UNATTRIBUTED },
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct kinv_launch_facts f = {
            .name = "k_alpha", .name_len = 7,
            .in_vendor_window = cases[i].window, .window_library_digest = digest,
            .module_origin = cases[i].origin, .module_library_digest = digest, .module_digest = digest,
        };
        struct kinv_attribution a;
        kinv_attribute(NULL, &f, &a);
        cr_expect_eq(a.verdict, cases[i].verdict, "case %zu: got %s, want %s (%s)", i,
                     kinv_verdict_name(a.verdict), kinv_verdict_name(cases[i].verdict), a.reason);
        cr_expect_eq(a.name_match, KINV_MATCH_NONE, "case %zu", i);
    }
    cr_expect_eq(kinv_library_pinned(NULL, digest), 0);
}

/* The analyzer matches each distinct name once and hands the match in: it is used as given. */
Test(inventory_attribution, a_given_name_match_is_used)
{
    struct kinv_buf lib = reference(0);
    struct kinv_err err;
    struct kinv_inventory *inv = build_one(lib.p, lib.len, &err);
    cr_assert_not_null(inv, "%s", err.msg);
    struct kinv_match none = { .strength = KINV_MATCH_NONE }, exact = { .strength = KINV_MATCH_EXACT };
    struct kinv_launch_facts f = { .name = "k_alpha", .name_len = 7, .module_origin = KINV_MODULE_CANDIDATE };
    struct kinv_attribution a;
    kinv_attribute(inv, &f, &a);
    cr_expect_eq(a.verdict, KINV_VERDICT_IMPERSONATION, "%s", kinv_verdict_name(a.verdict));
    f.name_match = &none;
    kinv_attribute(inv, &f, &a);
    cr_expect_eq(a.verdict, KINV_VERDICT_CANDIDATE, "%s", kinv_verdict_name(a.verdict));
    f.name = "no_such_kernel";
    f.name_len = strlen(f.name);
    f.name_match = &exact;
    kinv_attribute(inv, &f, &a);
    cr_expect_eq(a.verdict, KINV_VERDICT_IMPERSONATION, "%s", kinv_verdict_name(a.verdict));
    cr_expect_eq(a.name_match, KINV_MATCH_EXACT);
    cr_expect_eq(kinv_library_pinned(inv, inv->libs[0].digest), 1);
    kinv_free(inv);
    kinv_buf_free(&lib);
}
