/*
 * test_json_writer.c - session/json_writer.h: strings are valid UTF-8 JSON
 * whatever their bytes (the documented escaping), and the Perfetto timeline,
 * which writes kernel names through it, stays valid with a hostile name.
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "json_writer.h"
#ifdef KAUDIT_TEST_PERFETTO
#include <cjson/cJSON.h>
#include "analysis.h"
#endif

/* An independent UTF-8 check (RFC 3629), not kat_utf8_len. */
static int valid_utf8(const unsigned char *s, size_t n)
{
    for (size_t i = 0; i < n;) {
        unsigned c = s[i];
        size_t len = c < 0x80 ? 1 : (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3 : (c & 0xF8) == 0xF0 ? 4 : 0;
        if (!len || i + len > n)
            return 0;
        unsigned cp = len == 1 ? c : len == 2 ? c & 0x1F : len == 3 ? c & 0x0F : c & 0x07;
        for (size_t k = 1; k < len; k++) {
            if ((s[i + k] & 0xC0) != 0x80)
                return 0;
            cp = cp << 6 | (s[i + k] & 0x3F);
        }
        static const unsigned min[] = { 0, 0, 0x80, 0x800, 0x10000 };
        if (cp < min[len] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
            return 0;
        i += len;
    }
    return 1;
}

static char *escaped(const char *s, size_t n)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    cr_assert_not_null(f);
    kat_json_string(f, s, n);
    fclose(f);
    return buf;
}

Test(json_writer, invalid_utf8_becomes_latin1_escapes)
{
    /* a lone continuation byte, 0xff, a truncated 3-byte sequence, an
     * overlong '/', a surrogate, and a valid "é" that must stay as is */
    static const char name[] = "k\x80\xff_\xe2\x82_\xc0\xaf_\xed\xa0\x80_\xc3\xa9";
    char *out = escaped(name, sizeof(name) - 1);
    cr_expect_str_eq(out, "\"k\\u0080\\u00ff_\\u00e2\\u0082_\\u00c0\\u00af_\\u00ed\\u00a0\\u0080_\xc3\xa9\"");
    cr_expect(valid_utf8((const unsigned char *)out, strlen(out)));
    free(out);
}

Test(json_writer, controls_quotes_and_nul)
{
    static const char name[] = "a\"b\\c\nd\te\rf\x01g\x7f" "h\0i";
    char *out = escaped(name, sizeof(name) - 1);
    cr_expect_str_eq(out, "\"a\\\"b\\\\c\\nd\\te\\rf\\u0001g\\u007fh\\u0000i\"");
    free(out);
}

Test(json_writer, repair_gives_the_characters_the_escapes_decode_to)
{
    static const char name[] = "k\x80\xff_\xc3\xa9_\xe2\x82";
    char *out = kat_utf8_repair(name, sizeof(name) - 1);
    cr_assert_not_null(out);
    /* 0x80 -> U+0080 (C2 80), 0xff -> U+00FF (C3 BF), valid é kept, E2 82 -> C3 A2 C2 82 */
    cr_expect_str_eq(out, "k\xc2\x80\xc3\xbf_\xc3\xa9_\xc3\xa2\xc2\x82");
    cr_expect(valid_utf8((const unsigned char *)out, strlen(out)));
    free(out);
}

Test(json_writer, structure)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    struct kat_json j;
    kat_json_init(&j, f);
    kat_json_open(&j, NULL, '{');
    kat_json_str(&j, "name", "x\xfe");
    kat_json_open(&j, "list", '[');
    kat_json_u64(&j, NULL, 1);
    kat_json_i64(&j, NULL, -2);
    kat_json_double(&j, NULL, 0.0 / 0.0);
    kat_json_bool(&j, NULL, 1);
    kat_json_null(&j, NULL);
    kat_json_close(&j, ']');
    kat_json_close(&j, '}');
    fclose(f);
    cr_expect_str_eq(buf, "{\"name\":\"x\\u00fe\",\"list\":[1,-2,null,true,null]}");
    free(buf);
}

#ifdef KAUDIT_TEST_PERFETTO
Test(json_writer, perfetto_timeline_with_invalid_utf8_kernel_name)
{
    char path[] = "/tmp/kaudit_perfetto_XXXXXX";
    int fd = mkstemp(path);
    cr_assert(fd >= 0);
    close(fd);
    char err[256];
    struct ka_timeline *t = ka_timeline_open(path, err, sizeof err);
    cr_assert_not_null(t, "%s", err);
    struct ka_options opt;
    memset(&opt, 0, sizeof opt);
    ka_timeline_sink(t, &opt);
    opt.on_process(opt.sink_arg, 7, "bench\xff");
    opt.on_kernel(opt.sink_arg, 7, "sgemm_\xc3(\x80\xff\"\n", 3, 1000, 3000, KA_ORIGIN_VENDOR, KA_PARTY_REFERENCE,
                  KA_CLASS_GEMM, 1);
    cr_assert_eq(ka_timeline_close(t, err, sizeof err), 0, "%s", err);

    FILE *f = fopen(path, "r");
    cr_assert_not_null(f);
    static char buf[1 << 16];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    unlink(path);
    buf[n] = 0;
    cr_expect(valid_utf8((const unsigned char *)buf, n), "the timeline is not valid UTF-8:\n%s", buf);
    cJSON *root = cJSON_Parse(buf);
    cr_assert_not_null(root, "the timeline is not valid JSON:\n%s", buf);
    const cJSON *events = cJSON_GetObjectItemCaseSensitive(root, "traceEvents");
    int found = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, events) {
        const cJSON *name = cJSON_GetObjectItemCaseSensitive(e, "name");
        /* \u00c3 \u0080 \u00ff decode to U+00C3 U+0080 U+00FF (UTF-8 C3 83, C2 80, C3 BF) */
        if (cJSON_IsString(name) && !strcmp(name->valuestring, "sgemm_\xc3\x83(\xc2\x80\xc3\xbf\"\n"))
            found = 1;
    }
    cr_expect(found, "the kernel's name is not in the timeline as documented:\n%s", buf);
    cJSON_Delete(root);
}
#endif
