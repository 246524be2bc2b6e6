/*
 * json_writer.h - a small streaming JSON writer, libc only (dump must build
 * on the GPU machine, without cJSON).  Used by `kaudit dump --json` and the
 * analyzer's Perfetto timeline (analyzer/perfetto.c).
 *
 * Strings are always valid UTF-8 JSON, whatever the input bytes: names come
 * from arbitrary binaries.  The escaping rule (kat_json_string):
 *   - '"' and '\\' are backslash-escaped; \n, \t, \r use their short forms;
 *   - other control characters (< 0x20) and DEL (0x7f) become \u00XX;
 *   - a well-formed UTF-8 sequence (no overlongs, no surrogates, at most
 *     U+10FFFF) is copied as is;
 *   - every other byte becomes \u00XX, the byte read as a Latin-1 code
 *     point (so 0xff is written as \u00ff, i.e. "ÿ"): invalid input is never
 *     dropped and the output stays valid.
 *   - NUL bytes inside the given length become \u0000.
 *
 * The structured writer tracks commas for nesting up to 63 levels; deeper
 * levels are written but share the comma state of level 63.  Errors are
 * the stream's (check ferror on the FILE).
 */
#ifndef KAT_JSON_WRITER_H
#define KAT_JSON_WRITER_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Length of the well-formed UTF-8 sequence at s (n > 0 bytes left), 0 if none. */
size_t kat_utf8_len(const unsigned char *s, size_t n);

/* str[0..n) as a JSON string, quotes included (escaping as above). */
void kat_json_string(FILE *f, const char *str, size_t n);
/* A NUL-terminated string; NULL is written as "". */
void kat_json_cstring(FILE *f, const char *str);

/*
 * For writers that are not this one (the analyzer's report goes through
 * cJSON, which copies bytes >= 0x80 as they are): a malloc'd, NUL-terminated
 * copy of s[0..n) in which each byte that is not part of a well-formed
 * UTF-8 sequence is replaced by the UTF-8 encoding of U+00XX (the byte read
 * as Latin-1), the very character kat_json_string's \u00XX escape decodes
 * to.  Valid UTF-8 is copied unchanged.  NULL when out of memory.
 */
char *kat_utf8_repair(const char *s, size_t n);

struct kat_json {
    FILE *f;
    int depth;
    unsigned char need_comma[64];
};

void kat_json_init(struct kat_json *j, FILE *f);

/* Members take a key inside an object, NULL inside an array or at the top. */
void kat_json_open(struct kat_json *j, const char *key, char bracket);   /* '{' or '[' */
/* An array element that starts on a line of its own. */
void kat_json_open_line(struct kat_json *j, char bracket);
void kat_json_close(struct kat_json *j, char bracket);                   /* '}' or ']' */

void kat_json_u64(struct kat_json *j, const char *key, uint64_t v);
void kat_json_i64(struct kat_json *j, const char *key, int64_t v);
void kat_json_bool(struct kat_json *j, const char *key, int v);
void kat_json_null(struct kat_json *j, const char *key);
void kat_json_strn(struct kat_json *j, const char *key, const char *s, size_t n);
void kat_json_str(struct kat_json *j, const char *key, const char *s);
/* A value that is JSON text already (a document another writer made, a
 * member of a parsed file): written as given, the caller vouches for it. */
void kat_json_raw(struct kat_json *j, const char *key, const char *json);
/* %.9g; NaN and infinities (no JSON spelling) are written as null. */
void kat_json_double(struct kat_json *j, const char *key, double v);

#endif
