/* json_writer.c - see json_writer.h. */
#define _GNU_SOURCE
#include "json_writer.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

size_t kat_utf8_len(const unsigned char *s, size_t n)
{
    unsigned char c = s[0];
    if (c < 0x80)
        return 1;
    size_t len;
    unsigned char lo = 0x80, hi = 0xBF;  /* range of the second byte */
    if (c >= 0xC2 && c <= 0xDF)
        len = 2;
    else if (c >= 0xE0 && c <= 0xEF) {
        len = 3;
        if (c == 0xE0)
            lo = 0xA0;              /* overlong */
        if (c == 0xED)
            hi = 0x9F;              /* UTF-16 surrogates */
    } else if (c >= 0xF0 && c <= 0xF4) {
        len = 4;
        if (c == 0xF0)
            lo = 0x90;
        if (c == 0xF4)
            hi = 0x8F;              /* beyond U+10FFFF */
    } else
        return 0;
    if (n < len || s[1] < lo || s[1] > hi)
        return 0;
    for (size_t i = 2; i < len; i++)
        if ((s[i] & 0xC0) != 0x80)
            return 0;
    return len;
}

char *kat_utf8_repair(const char *str, size_t n)
{
    const unsigned char *s = (const unsigned char *)str;
    char *out = malloc(2 * n + 1);     /* each byte becomes at most two */
    if (!out)
        return NULL;
    size_t o = 0;
    for (size_t i = 0; i < n;) {
        size_t len = kat_utf8_len(s + i, n - i);
        if (len) {
            memcpy(out + o, s + i, len);
            o += len;
            i += len;
        } else {
            out[o++] = (char)(0xC0 | s[i] >> 6);
            out[o++] = (char)(0x80 | (s[i] & 0x3F));
            i++;
        }
    }
    out[o] = '\0';
    return out;
}

void kat_json_string(FILE *f, const char *str, size_t n)
{
    const unsigned char *s = (const unsigned char *)str;
    putc('"', f);
    for (size_t i = 0; i < n;) {
        unsigned char c = s[i];
        if (c == '"' || c == '\\') {
            putc('\\', f);
            putc(c, f);
            i++;
        } else if (c == '\n') {
            fputs("\\n", f);
            i++;
        } else if (c == '\t') {
            fputs("\\t", f);
            i++;
        } else if (c == '\r') {
            fputs("\\r", f);
            i++;
        } else if (c < 0x20 || c == 0x7f) {
            fprintf(f, "\\u%04x", c);
            i++;
        } else {
            size_t len = kat_utf8_len(s + i, n - i);
            if (len == 0) {
                fprintf(f, "\\u%04x", c);
                i++;
            } else {
                fwrite(s + i, 1, len, f);
                i += len;
            }
        }
    }
    putc('"', f);
}

void kat_json_cstring(FILE *f, const char *str)
{
    kat_json_string(f, str ? str : "", str ? strlen(str) : 0);
}

void kat_json_init(struct kat_json *j, FILE *f)
{
    memset(j, 0, sizeof(*j));
    j->f = f;
}

static void sep(struct kat_json *j, const char *key)
{
    if (j->depth > 0) {
        if (j->need_comma[j->depth])
            putc(',', j->f);
        j->need_comma[j->depth] = 1;
    }
    if (key) {
        kat_json_string(j->f, key, strlen(key));
        putc(':', j->f);
    }
}

static void push(struct kat_json *j, char bracket)
{
    putc(bracket, j->f);
    if (j->depth + 1 < (int)sizeof(j->need_comma))
        j->depth++;
    j->need_comma[j->depth] = 0;
}

void kat_json_open(struct kat_json *j, const char *key, char bracket)
{
    sep(j, key);
    push(j, bracket);
}

void kat_json_open_line(struct kat_json *j, char bracket)
{
    sep(j, NULL);
    putc('\n', j->f);
    push(j, bracket);
}

void kat_json_close(struct kat_json *j, char bracket)
{
    putc(bracket, j->f);
    if (j->depth > 0)
        j->depth--;
}

void kat_json_u64(struct kat_json *j, const char *key, uint64_t v)
{
    sep(j, key);
    fprintf(j->f, "%" PRIu64, v);
}

void kat_json_i64(struct kat_json *j, const char *key, int64_t v)
{
    sep(j, key);
    fprintf(j->f, "%" PRId64, v);
}

void kat_json_bool(struct kat_json *j, const char *key, int v)
{
    sep(j, key);
    fputs(v ? "true" : "false", j->f);
}

void kat_json_null(struct kat_json *j, const char *key)
{
    sep(j, key);
    fputs("null", j->f);
}

void kat_json_raw(struct kat_json *j, const char *key, const char *json)
{
    sep(j, key);
    fputs(json, j->f);
}

void kat_json_strn(struct kat_json *j, const char *key, const char *s, size_t n)
{
    sep(j, key);
    kat_json_string(j->f, s, n);
}

void kat_json_str(struct kat_json *j, const char *key, const char *s)
{
    kat_json_strn(j, key, s, strlen(s));
}

void kat_json_double(struct kat_json *j, const char *key, double v)
{
    sep(j, key);
    if (isfinite(v))
        fprintf(j->f, "%.9g", v);
    else
        fputs("null", j->f);
}
