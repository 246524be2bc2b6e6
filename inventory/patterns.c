/*
 * patterns.c - anchored name patterns from vendor format strings.
 *
 * A pattern is compiled into tokens and matched against a whole name by a
 * set-of-positions simulation: O(tokens x name length) whatever the input,
 * since the names come from the candidate's trace and may be adversarial.
 */
#include <ctype.h>
#include <stdlib.h>

#include "internal.h"

enum tok_type { T_LIT, T_STR, T_CHR, T_INT, T_UINT, T_HEX };

struct tok {
    uint8_t type;
    uint32_t len;           /* T_LIT */
    const char *lit;
};

struct kinv_pattern {
    const struct kinv_entry *entry;
    struct tok *toks;
    size_t n;
    const char *prefix;     /* literal text every match starts with */
    size_t prefix_len;
    size_t min_len;
    size_t literal;         /* literal characters: more is more specific */
};

static int idc(unsigned char c) { return isalnum(c) || c == '_'; }

/* Compiles text into toks (caller frees); -1 when text is no valid pattern. */
static int compile(const char *text, size_t len, struct tok **out, size_t *n_out)
{
    struct tok *t = malloc((len + 1) * sizeof(*t));
    size_t n = 0;
    if (!t)
        return -1;
    for (size_t i = 0; i < len;) {
        if (text[i] != '%') {
            size_t j = i;
            while (j < len && text[j] != '%')
                j++;
            t[n++] = (struct tok){ T_LIT, (uint32_t)(j - i), text + i };
            i = j;
            continue;
        }
        size_t j = i + 1;
        while (j < len && text[j] && strchr("-+ 0#", text[j]))
            j++;
        while (j < len && isdigit((unsigned char)text[j]))
            j++;
        if (j < len && text[j] == '.') {
            j++;
            while (j < len && isdigit((unsigned char)text[j]))
                j++;
        }
        while (j < len && text[j] && strchr("hlzjt", text[j]))
            j++;
        if (j >= len) {
            free(t);
            return -1;
        }
        uint8_t type;
        switch (text[j]) {
        case 's': type = T_STR; break;
        case 'c': type = T_CHR; break;
        case 'd': case 'i': type = T_INT; break;
        case 'u': type = T_UINT; break;
        case 'x': case 'X': type = T_HEX; break;
        default: free(t); return -1;
        }
        /* %s%s... matches what one %s matches */
        if (!(type == T_STR && n > 0 && t[n - 1].type == T_STR))
            t[n++] = (struct tok){ type, 0, NULL };
        i = j + 1;
    }
    *out = t;
    *n_out = n;
    return 0;
}

static int in_class(uint8_t type, unsigned char c)
{
    switch (type) {
    case T_STR: case T_CHR: return idc(c);
    case T_INT: case T_UINT: return isdigit(c);
    case T_HEX: return isxdigit(c);
    }
    return 0;
}

/* reach[p]: the tokens so far can match name[0..p). */
static int run(const struct tok *t, size_t nt, const char *name, size_t len, uint8_t *reach,
               uint8_t *next)
{
    memset(reach, 0, len + 1);
    reach[0] = 1;
    for (size_t k = 0; k < nt; k++) {
        memset(next, 0, len + 1);
        int any = 0;
        switch (t[k].type) {
        case T_LIT:
            for (size_t p = 0; p + t[k].len <= len; p++)
                if (reach[p] && !memcmp(name + p, t[k].lit, t[k].len))
                    any = next[p + t[k].len] = 1;
            break;
        case T_CHR:
            for (size_t p = 0; p < len; p++)
                if (reach[p] && idc((unsigned char)name[p]))
                    any = next[p + 1] = 1;
            break;
        case T_STR:
            next[0] = reach[0];
            for (size_t p = 1; p <= len; p++)
                next[p] = reach[p] || (next[p - 1] && idc((unsigned char)name[p - 1]));
            any = 1;
            break;
        default:
            /* an optional '-' (for %d/%i), then one or more class characters:
               next[p+1] when name[p] is in the class and a run starts or goes on at p */
            for (size_t p = 0; p < len; p++) {
                int start = reach[p] ||
                    (t[k].type == T_INT && p > 0 && reach[p - 1] && name[p - 1] == '-');
                if (in_class(t[k].type, (unsigned char)name[p]) && (start || next[p]))
                    any = next[p + 1] = 1;
            }
            break;
        }
        if (!any)
            return 0;
        memcpy(reach, next, len + 1);
    }
    return reach[len];
}

static int match_compiled(const struct tok *t, size_t nt, const char *name, size_t len)
{
    uint8_t stack[2 * 1024];
    uint8_t *buf = stack;
    if (2 * (len + 1) > sizeof(stack)) {
        if (len > (1u << 24))
            return 0;
        buf = malloc(2 * (len + 1));
        if (!buf)
            return 0;
    }
    int r = run(t, nt, name, len, buf, buf + len + 1);
    if (buf != stack)
        free(buf);
    return r;
}

int kinv_pattern_match_text(const char *pattern, size_t plen, const char *name, size_t len)
{
    struct tok *t;
    size_t nt;
    if (compile(pattern, plen, &t, &nt))
        return 0;
    int r = match_compiled(t, nt, name, len);
    free(t);
    return r;
}

int kinv_patterns_compile(struct kinv_inventory *inv, struct kinv_err *err)
{
    size_t n = 0;
    for (size_t i = 0; i < inv->n_entries; i++)
        n += inv->entries[i].kind == KINV_KIND_PATTERN;
    inv->patterns = calloc(n ? n : 1, sizeof(struct kinv_pattern));
    if (!inv->patterns)
        return kinv_error(err, "out of memory");
    inv->n_patterns = 0;
    for (size_t i = 0; i < inv->n_entries; i++) {
        const struct kinv_entry *e = &inv->entries[i];
        if (e->kind != KINV_KIND_PATTERN)
            continue;
        struct kinv_pattern *p = &inv->patterns[inv->n_patterns];
        if (compile(e->name, e->name_len, &p->toks, &p->n))
            return kinv_error(err, "invalid pattern '%.*s'", (int)e->name_len, e->name);
        inv->n_patterns++;
        p->entry = e;
        if (p->n && p->toks[0].type == T_LIT) {
            p->prefix = p->toks[0].lit;
            p->prefix_len = p->toks[0].len;
        }
        for (size_t k = 0; k < p->n; k++) {
            p->min_len += p->toks[k].type == T_LIT ? p->toks[k].len : p->toks[k].type == T_STR ? 0 : 1;
            p->literal += p->toks[k].type == T_LIT ? p->toks[k].len : 0;
        }
    }
    return 0;
}

void kinv_patterns_free(struct kinv_inventory *inv)
{
    for (size_t i = 0; i < inv->n_patterns; i++)
        free(inv->patterns[i].toks);
    free(inv->patterns);
    inv->patterns = NULL;
    inv->n_patterns = 0;
}

/* The most specific matching pattern (most literal characters; the first in
   inventory order among equals). */
const struct kinv_entry *kinv_lookup_pattern(const struct kinv_inventory *inv, const char *name,
                                             size_t len)
{
    const struct kinv_pattern *best = NULL;
    for (size_t i = 0; i < inv->n_patterns; i++) {
        const struct kinv_pattern *p = &inv->patterns[i];
        if (len < p->min_len || (p->prefix_len && memcmp(name, p->prefix, p->prefix_len)) ||
            (best && p->literal <= best->literal))
            continue;
        if (match_compiled(p->toks, p->n, name, len))
            best = p;
    }
    return best ? best->entry : NULL;
}
