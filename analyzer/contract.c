/*
 * contract.c - task contracts (contract.h, docs/contracts.md): the work
 * classes, reading a contract's file and its JSON, freeing a contract.
 * The fields are checked in contract_parse.c, contracts are pinned by the
 * manifest in contract_manifest.c.
 */
#define _GNU_SOURCE
#include "contract.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <xxhash.h>

#include "contract_internal.h"
#include "safe_file.h"
#include "toolbox.h"

static const char *const class_names[KA_CLASS_COUNT] = {
    "gemm", "conv", "attention", "reduction", "elementwise", "glue", "pooling", "normalization", "softmax", "other",
};

const char *ka_class_name(enum ka_class c)
{
    return (unsigned)c < KA_CLASS_COUNT ? class_names[c] : "unknown";
}

int ka_class_parse(const char *text)
{
    for (int i = 0; i < KA_CLASS_COUNT; i++)
        if (!strcmp(text, class_names[i]))
            return i;
    return -1;
}

/* ---- reading files ---------------------------------------------------- */

#define KA_CONTRACT_MAX_BYTES (4u << 20)

char *ka_contract_read_file(const char *path, size_t *len, char *err, size_t n, const char *what)
{
    /* O_NONBLOCK + fstat (safe_file.h): a FIFO is refused, never waited on. */
    char detail[4096 + 128];
    FILE *f = kat_fopen_input(path, 0, detail, sizeof detail);
    if (!f && errno != EINVAL) {
        snprintf(err, n, "cannot read %s '%s': %s", what, path, strerror(errno));
        return NULL;
    }
    if (!f) {
        snprintf(err, n, "cannot read %s: %s", what, detail);
        return NULL;
    }
    struct stat st;
    if (fstat(fileno(f), &st) != 0) {
        snprintf(err, n, "cannot read %s '%s': %s", what, path, strerror(errno));
        fclose(f);
        return NULL;
    }
    if ((uint64_t)st.st_size > KA_CONTRACT_MAX_BYTES) {
        snprintf(err, n, "cannot read %s '%s': %lld bytes is more than the %u allowed", what, path,
                 (long long)st.st_size, KA_CONTRACT_MAX_BYTES);
        fclose(f);
        return NULL;
    }
    char *buf = malloc((size_t)st.st_size + 1);
    if (!buf) {
        snprintf(err, n, "cannot read %s '%s': out of memory", what, path);
        fclose(f);
        return NULL;
    }
    size_t got = fread(buf, 1, (size_t)st.st_size, f);
    int bad = ferror(f);
    fclose(f);
    if (bad || got != (size_t)st.st_size) {
        snprintf(err, n, "cannot read %s '%s': short read", what, path);
        free(buf);
        return NULL;
    }
    buf[got] = 0;
    *len = got;
    return buf;
}

void ka_contract_digest_hex(const void *data, size_t len, char hex[33])
{
    XXH128_hash_t h = XXH3_128bits(data, len);
    XXH128_canonical_t c;
    XXH128_canonicalFromHash(&c, h);
    kat_hex(c.digest, sizeof c.digest, hex);
}

int ka_file_digest(const char *path, char hex[33], char *err, size_t n)
{
    size_t len;
    char *buf = ka_contract_read_file(path, &len, err, n, "file");
    if (!buf)
        return -1;
    ka_contract_digest_hex(buf, len, hex);
    free(buf);
    return 0;
}

/* 32 lowercase hex digits: the form digests are written in. */
int ka_contract_is_hex_digest(const char *s)
{
    if (strlen(s) != 32)
        return 0;
    for (const char *p = s; *p; p++)
        if (!((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f')))
            return 0;
    return 1;
}

/* Line and column of a byte offset, for parse errors. */
static void line_col(const char *text, size_t off, int *line, int *col)
{
    *line = 1;
    *col = 1;
    for (size_t i = 0; i < off && text[i]; i++) {
        if (text[i] == '\n') {
            (*line)++;
            *col = 1;
        } else {
            (*col)++;
        }
    }
}

/* The offset of the first byte that is not valid UTF-8 (RFC 3629: no
 * overlong forms, no surrogates, nothing above U+10FFFF), or len. */
static size_t utf8_invalid_at(const unsigned char *s, size_t len)
{
    size_t i = 0;
    while (i < len) {
        unsigned c = s[i];
        size_t k;
        unsigned min;
        if (c < 0x80) {
            i++;
            continue;
        } else if ((c & 0xE0) == 0xC0) {
            k = 1, min = 0x80, c &= 0x1F;
        } else if ((c & 0xF0) == 0xE0) {
            k = 2, min = 0x800, c &= 0x0F;
        } else if ((c & 0xF8) == 0xF0) {
            k = 3, min = 0x10000, c &= 0x07;
        } else {
            return i;
        }
        for (size_t j = 1; j <= k; j++) {
            if (i + j >= len || (s[i + j] & 0xC0) != 0x80)
                return i;
            c = (c << 6) | (s[i + j] & 0x3F);
        }
        if (c < min || c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF))
            return i;
        i += k + 1;
    }
    return len;
}

/* The offset of a \u0000 escape (a NUL inside a string, which C strings
 * would cut silently), or len. */
static size_t nul_escape_at(const char *s, size_t len)
{
    for (size_t i = 0; i + 5 < len; i++) {
        if (s[i] != '\\')
            continue;
        if (s[i + 1] == 'u' && s[i + 2] == '0' && s[i + 3] == '0' && s[i + 4] == '0' && s[i + 5] == '0')
            return i;
        i++; /* the escaped character is not the start of another escape */
    }
    return len;
}

cJSON *ka_contract_parse_json(const char *text, size_t len, const char *what, const char *name, char *err,
                         size_t n)
{
    /* Strings must be text: invalid UTF-8 would reach the JSON reports
     * unchanged (invalid JSON), a NUL would cut a value silently. */
    size_t bad = utf8_invalid_at((const unsigned char *)text, len);
    if (bad < len) {
        int line, col;
        line_col(text, bad, &line, &col);
        snprintf(err, n, "%s '%s': invalid UTF-8 at line %d, column %d (byte %zu)", what, name, line, col, bad);
        return NULL;
    }
    bad = nul_escape_at(text, len);
    if (bad < len) {
        int line, col;
        line_col(text, bad, &line, &col);
        snprintf(err, n, "%s '%s': a NUL character (\\u0000) in a string at line %d, column %d", what, name, line,
                 col);
        return NULL;
    }
    const char *end = NULL;
    cJSON *root = cJSON_ParseWithLengthOpts(text, len, &end, 0);
    if (!root) {
        size_t off = end && end >= text ? (size_t)(end - text) : 0;
        int line, col;
        line_col(text, off, &line, &col);
        snprintf(err, n, "%s '%s': not valid JSON at line %d, column %d", what, name, line, col);
        return NULL;
    }
    /* Only whitespace may follow the value. */
    for (const char *p = end; p && p < text + len; p++) {
        if (*p != ' ' && *p != '\n' && *p != '\r' && *p != '\t') {
            int line, col;
            line_col(text, (size_t)(p - text), &line, &col);
            snprintf(err, n, "%s '%s': unexpected text after the JSON value at line %d, column %d", what,
                     name, line, col);
            cJSON_Delete(root);
            return NULL;
        }
    }
    return root;
}

/* ---- checked accessors ------------------------------------------------ */

static void free_party(struct ka_party_spec *p)
{
    free(p->path);
    free(p->digest);
    for (size_t i = 0; i < p->n_symbols; i++)
        free(p->symbols[i]);
    free(p->symbols);
    for (size_t i = 0; i < p->n_objects; i++)
        free(p->objects[i]);
    free(p->objects);
    for (size_t i = 0; i < p->n_processes; i++)
        free(p->processes[i]);
    free(p->processes);
}

void ka_contract_free(struct ka_contract *k)
{
    if (!k)
        return;
    free(k->file);
    free(k->task_id);
    free(k->description);
    free_party(&k->reference);
    free_party(&k->candidate);
    free(k->phase_candidate);
    free(k->phase_reference);
    for (size_t i = 0; i < k->n_epilogues; i++)
        free(k->epilogues[i].note);
    free(k->epilogues);
    for (size_t i = 0; i < k->n_library_uses; i++) {
        free(k->library_uses[i].library);
        free(k->library_uses[i].api);
    }
    free(k->library_uses);
    free(k->timing_dtype);
    free(k->alternative_shapes);
    free(k->candidate_only_state);
    for (size_t i = 0; i < k->n_inputs; i++) {
        free(k->inputs[i].name);
        free(k->inputs[i].shape);
        free(k->inputs[i].dtype);
    }
    free(k->inputs);
    free(k);
}
