/*
 * contract.c - parse, check and pin task contracts (contract.h,
 * docs/contracts.md).  Unknown keys are errors: a misspelt policy field must
 * not silently fall back to a default.
 */
#define _GNU_SOURCE
#include "contract.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <fnmatch.h>
#include <libgen.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

static const char *const class_names[KA_CLASS_COUNT] = {
    "gemm", "conv", "attention", "reduction", "elementwise", "glue", "other",
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

static char *read_file(const char *path, size_t *len, char *err, size_t n, const char *what)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(err, n, "cannot read %s '%s': %s", what, path, strerror(errno));
        return NULL;
    }
    struct stat st;
    if (fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode)) {
        snprintf(err, n, "cannot read %s '%s': not a regular file", what, path);
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

static void digest_hex(const void *data, size_t len, char hex[33])
{
    XXH128_hash_t h = XXH3_128bits(data, len);
    XXH128_canonical_t c;
    XXH128_canonicalFromHash(&c, h);
    for (int i = 0; i < 16; i++)
        sprintf(hex + 2 * i, "%02x", c.digest[i]);
}

int ka_file_digest(const char *path, char hex[33], char *err, size_t n)
{
    size_t len;
    char *buf = read_file(path, &len, err, n, "file");
    if (!buf)
        return -1;
    digest_hex(buf, len, hex);
    free(buf);
    return 0;
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

static cJSON *parse_json(const char *text, size_t len, const char *what, const char *name, char *err,
                         size_t n)
{
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

struct ctx {
    const char *name;
    char *err;
    size_t n;
    int failed;
};

static void fail(struct ctx *c, const char *path, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void fail(struct ctx *c, const char *path, const char *fmt, ...)
{
    if (c->failed)
        return;
    c->failed = 1;
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    snprintf(c->err, c->n, "contract '%s': %s: %s", c->name, path, msg);
}

static const char *type_name(const cJSON *v)
{
    if (cJSON_IsObject(v)) return "an object";
    if (cJSON_IsArray(v)) return "an array";
    if (cJSON_IsString(v)) return "a string";
    if (cJSON_IsNumber(v)) return "a number";
    if (cJSON_IsBool(v)) return "a boolean";
    if (cJSON_IsNull(v)) return "null";
    return "invalid";
}

/* Every key of obj must be in allowed (NULL-terminated). */
static void only_keys(struct ctx *c, const cJSON *obj, const char *path, const char *const *allowed)
{
    for (const cJSON *it = obj ? obj->child : NULL; it; it = it->next) {
        int ok = 0;
        for (const char *const *a = allowed; *a; a++)
            if (it->string && !strcmp(it->string, *a))
                ok = 1;
        if (!ok) {
            fail(c, path, "unknown key '%s'", it->string ? it->string : "");
            return;
        }
        /* cJSON keeps duplicate keys; the first would silently win. */
        for (const cJSON *jt = it->next; jt; jt = jt->next)
            if (jt->string && it->string && !strcmp(jt->string, it->string)) {
                fail(c, path, "key '%s' appears twice", it->string);
                return;
            }
    }
}

static const cJSON *get(struct ctx *c, const cJSON *obj, const char *key, const char *path, int required)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (!v && required)
        fail(c, path, "missing required key '%s'", key);
    return v;
}

static char *dup_string(struct ctx *c, const cJSON *v, const char *path, int allow_null)
{
    if (!v)
        return NULL;
    if (allow_null && cJSON_IsNull(v))
        return NULL;
    if (!cJSON_IsString(v) || !v->valuestring) {
        fail(c, path, "expected a string, found %s", type_name(v));
        return NULL;
    }
    if (strlen(v->valuestring) > 4096) {
        fail(c, path, "string longer than 4096 bytes");
        return NULL;
    }
    return strdup(v->valuestring);
}

static int get_bool(struct ctx *c, const cJSON *v, const char *path, int dflt)
{
    if (!v)
        return dflt;
    if (!cJSON_IsBool(v)) {
        fail(c, path, "expected true or false, found %s", type_name(v));
        return dflt;
    }
    return cJSON_IsTrue(v);
}

static double get_number(struct ctx *c, const cJSON *v, const char *path, double lo, double hi)
{
    if (!cJSON_IsNumber(v)) {
        fail(c, path, "expected a number, found %s", type_name(v));
        return 0;
    }
    double d = v->valuedouble;
    if (!(d >= lo && d <= hi)) {
        fail(c, path, "%g is outside [%g, %g]", d, lo, hi);
        return 0;
    }
    return d;
}

static char **string_list(struct ctx *c, const cJSON *v, const char *path, size_t *count)
{
    *count = 0;
    if (!v)
        return NULL;
    if (!cJSON_IsArray(v)) {
        fail(c, path, "expected an array of strings, found %s", type_name(v));
        return NULL;
    }
    int len = cJSON_GetArraySize(v);
    if (len > 256) {
        fail(c, path, "more than 256 entries");
        return NULL;
    }
    char **list = calloc((size_t)len + 1, sizeof *list);
    if (!list) {
        fail(c, path, "out of memory");
        return NULL;
    }
    int i = 0;
    for (const cJSON *it = v->child; it; it = it->next, i++) {
        char p[256];
        snprintf(p, sizeof p, "%s[%d]", path, i);
        list[i] = dup_string(c, it, p, 0);
        if (!list[i])
            break;
    }
    *count = (size_t)i;
    return list;
}

static int is_hex_digest(const char *s)
{
    if (strlen(s) != 32)
        return 0;
    for (const char *p = s; *p; p++)
        if (!((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f')))
            return 0;
    return 1;
}

static void parse_party(struct ctx *c, const cJSON *v, const char *path, struct ka_party_spec *p)
{
    if (!v)
        return;
    if (!cJSON_IsObject(v)) {
        fail(c, path, "expected an object, found %s", type_name(v));
        return;
    }
    static const char *const keys[] = { "path", "digest", "symbols", "objects", "processes", NULL };
    only_keys(c, v, path, keys);
    char sub[256];
    snprintf(sub, sizeof sub, "%s.path", path);
    p->path = dup_string(c, get(c, v, "path", path, 0), sub, 1);
    snprintf(sub, sizeof sub, "%s.digest", path);
    p->digest = dup_string(c, get(c, v, "digest", path, 0), sub, 1);
    if (p->digest && !is_hex_digest(p->digest))
        fail(c, sub, "expected 32 lower-case hex digits (XXH3-128)");
    snprintf(sub, sizeof sub, "%s.symbols", path);
    p->symbols = string_list(c, get(c, v, "symbols", path, 0), sub, &p->n_symbols);
    snprintf(sub, sizeof sub, "%s.objects", path);
    p->objects = string_list(c, get(c, v, "objects", path, 0), sub, &p->n_objects);
    snprintf(sub, sizeof sub, "%s.processes", path);
    p->processes = string_list(c, get(c, v, "processes", path, 0), sub, &p->n_processes);
}

static int parse_class(struct ctx *c, const cJSON *v, const char *path)
{
    char *s = dup_string(c, v, path, 0);
    if (!s)
        return -1;
    int cls = ka_class_parse(s);
    if (cls < 0)
        fail(c, path, "unknown work class '%s' (gemm, conv, attention, reduction, elementwise, glue, other)",
             s);
    free(s);
    return cls;
}

static void parse_implementation(struct ctx *c, const cJSON *v, struct ka_contract *k)
{
    const char *path = "implementation";
    if (!cJSON_IsObject(v)) {
        fail(c, path, "expected an object, found %s", type_name(v));
        return;
    }
    static const char *const keys[] = { "self_implemented", "forbidden", "mediators", "library_uses", NULL };
    only_keys(c, v, path, keys);
    k->self_implemented = get_bool(c, get(c, v, "self_implemented", path, 1),
                                   "implementation.self_implemented", 1);
    const cJSON *forb = get(c, v, "forbidden", path, 0);
    if (forb) {
        if (!cJSON_IsArray(forb)) {
            fail(c, "implementation.forbidden", "expected an array of work classes, found %s",
                 type_name(forb));
        } else {
            int i = 0;
            for (const cJSON *it = forb->child; it; it = it->next, i++) {
                char p[64];
                snprintf(p, sizeof p, "implementation.forbidden[%d]", i);
                int cls = parse_class(c, it, p);
                if (cls >= 0)
                    k->forbidden |= 1u << cls;
            }
        }
    } else if (k->self_implemented) {
        /* Core work must be the candidate's own: every compute class is forbidden. */
        k->forbidden = 1u << KA_CLASS_GEMM | 1u << KA_CLASS_CONV | 1u << KA_CLASS_ATTENTION |
                       1u << KA_CLASS_REDUCTION | 1u << KA_CLASS_ELEMENTWISE;
    }
    if (!k->self_implemented && k->forbidden)
        fail(c, "implementation.forbidden", "a task that does not require self-implementation forbids nothing");

    k->allow_allocation = k->allow_memset = k->allow_copies = k->allow_glue = 1;
    const cJSON *med = get(c, v, "mediators", path, 0);
    if (med) {
        if (!cJSON_IsObject(med)) {
            fail(c, "implementation.mediators", "expected an object, found %s", type_name(med));
            return;
        }
        static const char *const mkeys[] = { "allocation", "memset", "copies", "layout_glue", "epilogues", NULL };
        only_keys(c, med, "implementation.mediators", mkeys);
        k->allow_allocation = get_bool(c, get(c, med, "allocation", "", 0), "implementation.mediators.allocation", 1);
        k->allow_memset = get_bool(c, get(c, med, "memset", "", 0), "implementation.mediators.memset", 1);
        k->allow_copies = get_bool(c, get(c, med, "copies", "", 0), "implementation.mediators.copies", 1);
        k->allow_glue = get_bool(c, get(c, med, "layout_glue", "", 0), "implementation.mediators.layout_glue", 1);
        const cJSON *ep = get(c, med, "epilogues", "", 0);
        if (ep) {
            if (!cJSON_IsArray(ep)) {
                fail(c, "implementation.mediators.epilogues", "expected an array, found %s", type_name(ep));
                return;
            }
            int len = cJSON_GetArraySize(ep);
            k->epilogues = calloc((size_t)len + 1, sizeof *k->epilogues);
            int i = 0;
            for (const cJSON *it = ep->child; it && k->epilogues; it = it->next, i++) {
                char p[96];
                snprintf(p, sizeof p, "implementation.mediators.epilogues[%d]", i);
                if (!cJSON_IsObject(it)) {
                    fail(c, p, "expected an object, found %s", type_name(it));
                    break;
                }
                static const char *const ekeys[] = { "class", "max_share", "note", NULL };
                only_keys(c, it, p, ekeys);
                char q[128];
                snprintf(q, sizeof q, "%s.class", p);
                const cJSON *cv = get(c, it, "class", p, 1);
                int cls = cv ? parse_class(c, cv, q) : -1;
                snprintf(q, sizeof q, "%s.max_share", p);
                const cJSON *sv = get(c, it, "max_share", p, 1);
                double share = sv ? get_number(c, sv, q, 0, 1) : 0;
                snprintf(q, sizeof q, "%s.note", p);
                k->epilogues[i].note = dup_string(c, get(c, it, "note", p, 0), q, 1);
                k->epilogues[i].cls = cls < 0 ? KA_CLASS_OTHER : (enum ka_class)cls;
                k->epilogues[i].max_share = share;
                k->n_epilogues = (size_t)i + 1;
            }
        }
    }
    const cJSON *uses = get(c, v, "library_uses", path, 0);
    if (uses) {
        if (!cJSON_IsArray(uses)) {
            fail(c, "implementation.library_uses", "expected an array, found %s", type_name(uses));
            return;
        }
        int len = cJSON_GetArraySize(uses);
        k->library_uses = calloc((size_t)len + 1, sizeof *k->library_uses);
        int i = 0;
        for (const cJSON *it = uses->child; it && k->library_uses; it = it->next, i++) {
            char p[96], q[128];
            snprintf(p, sizeof p, "implementation.library_uses[%d]", i);
            if (!cJSON_IsObject(it)) {
                fail(c, p, "expected an object, found %s", type_name(it));
                break;
            }
            static const char *const ukeys[] = { "library", "api", "class", NULL };
            only_keys(c, it, p, ukeys);
            struct ka_library_use *u = &k->library_uses[i];
            k->n_library_uses = (size_t)i + 1;
            snprintf(q, sizeof q, "%s.library", p);
            u->library = dup_string(c, get(c, it, "library", p, 1), q, 0);
            if (u->library && strcmp(u->library, "cublas") && strcmp(u->library, "cublaslt") &&
                strcmp(u->library, "cudnn") && strcmp(u->library, "*"))
                fail(c, q, "unknown library '%s' (cublas, cublaslt, cudnn or *)", u->library);
            snprintf(q, sizeof q, "%s.api", p);
            u->api = dup_string(c, get(c, it, "api", p, 0), q, 1);
            if (!u->api)
                u->api = strdup("*");
            snprintf(q, sizeof q, "%s.class", p);
            const cJSON *cv = get(c, it, "class", p, 0);
            u->cls = cv ? parse_class(c, cv, q) : -1;
        }
    }
}

static void parse_reference_work(struct ctx *c, const cJSON *v, struct ka_contract *k)
{
    const char *path = "reference_work";
    if (!cJSON_IsObject(v)) {
        fail(c, path, "expected an object, found %s", type_name(v));
        return;
    }
    static const char *const keys[] = { "dominant_class", "amount", "unit", "measure", NULL };
    only_keys(c, v, path, keys);
    const cJSON *measure = get(c, v, "measure", path, 0);
    if (measure) {
        char *m = dup_string(c, measure, "reference_work.measure", 0);
        if (m && strcmp(m, "reference_phase"))
            fail(c, "reference_work.measure", "unknown method '%s' (reference_phase)", m);
        free(m);
        k->measure_reference = 1;
    }
    const cJSON *cls = get(c, v, "dominant_class", path, !k->measure_reference);
    k->dominant_class = cls ? parse_class(c, cls, "reference_work.dominant_class") : -1;
    const cJSON *amount = get(c, v, "amount", path, !k->measure_reference);
    if (amount)
        k->reference_work = get_number(c, amount, "reference_work.amount", 1, 1e30);
    if (k->measure_reference && amount)
        fail(c, "reference_work", "give either an amount or a measure method, not both");
    const cJSON *unit = get(c, v, "unit", path, 0);
    if (unit) {
        char *u = dup_string(c, unit, "reference_work.unit", 0);
        if (u && k->dominant_class >= 0) {
            int flops = k->dominant_class == KA_CLASS_GEMM || k->dominant_class == KA_CLASS_CONV ||
                        k->dominant_class == KA_CLASS_ATTENTION;
            if (strcmp(u, flops ? "flop" : "element"))
                fail(c, "reference_work.unit", "the unit of class '%s' is '%s', not '%s'",
                     ka_class_name(k->dominant_class), flops ? "flop" : "element", u);
        }
        free(u);
    }
}

static void parse_timing(struct ctx *c, const cJSON *v, struct ka_contract *k)
{
    const char *path = "timing";
    k->timing = KA_TIMING_CUDA_EVENTS;
    if (!v)
        return;
    if (!cJSON_IsObject(v)) {
        fail(c, path, "expected an object, found %s", type_name(v));
        return;
    }
    static const char *const keys[] = { "window", "dtype", NULL };
    only_keys(c, v, path, keys);
    const cJSON *w = get(c, v, "window", path, 0);
    if (w) {
        char *s = dup_string(c, w, "timing.window", 0);
        if (s && !strcmp(s, "cuda_events"))
            k->timing = KA_TIMING_CUDA_EVENTS;
        else if (s && !strcmp(s, "none"))
            k->timing = KA_TIMING_NONE;
        else if (s)
            fail(c, "timing.window", "unknown window '%s' (cuda_events or none)", s);
        free(s);
    }
    k->timing_dtype = dup_string(c, get(c, v, "dtype", path, 0), "timing.dtype", 1);
}

static void parse_inputs(struct ctx *c, const cJSON *v, struct ka_contract *k)
{
    if (!v)
        return;
    if (!cJSON_IsArray(v)) {
        fail(c, "inputs", "expected an array, found %s", type_name(v));
        return;
    }
    int len = cJSON_GetArraySize(v);
    k->inputs = calloc((size_t)len + 1, sizeof *k->inputs);
    int i = 0;
    for (const cJSON *it = v->child; it && k->inputs; it = it->next, i++) {
        char p[64], q[96];
        snprintf(p, sizeof p, "inputs[%d]", i);
        if (!cJSON_IsObject(it)) {
            fail(c, p, "expected an object, found %s", type_name(it));
            return;
        }
        static const char *const keys[] = { "name", "shape", "dtype", "range", NULL };
        only_keys(c, it, p, keys);
        struct ka_input_spec *in = &k->inputs[i];
        k->n_inputs = (size_t)i + 1;
        snprintf(q, sizeof q, "%s.name", p);
        in->name = dup_string(c, get(c, it, "name", p, 1), q, 0);
        snprintf(q, sizeof q, "%s.dtype", p);
        in->dtype = dup_string(c, get(c, it, "dtype", p, 1), q, 0);
        const cJSON *shape = get(c, it, "shape", p, 1);
        snprintf(q, sizeof q, "%s.shape", p);
        if (shape && !cJSON_IsArray(shape)) {
            fail(c, q, "expected an array of sizes, found %s", type_name(shape));
        } else if (shape) {
            int rank = cJSON_GetArraySize(shape);
            if (rank > 8) {
                fail(c, q, "rank %d is more than 8", rank);
                return;
            }
            in->shape = calloc((size_t)rank + 1, sizeof *in->shape);
            int d = 0;
            for (const cJSON *s = shape->child; s && in->shape; s = s->next, d++) {
                char r[128];
                snprintf(r, sizeof r, "%s[%d]", q, d);
                in->shape[d] = (int64_t)get_number(c, s, r, 0, 1e15);
            }
            in->rank = (size_t)d;
        }
        const cJSON *range = get(c, it, "range", p, 0);
        if (range) {
            snprintf(q, sizeof q, "%s.range", p);
            if (!cJSON_IsArray(range) || cJSON_GetArraySize(range) != 2) {
                fail(c, q, "expected [low, high]");
            } else {
                in->range_lo = get_number(c, range->child, q, -1e300, 1e300);
                in->range_hi = get_number(c, range->child->next, q, -1e300, 1e300);
                if (in->range_lo > in->range_hi)
                    fail(c, q, "low %g is above high %g", in->range_lo, in->range_hi);
                in->has_range = 1;
            }
        }
    }
}

int ka_contract_parse(const char *text, size_t len, const char *name, struct ka_contract **out,
                      char *err, size_t n)
{
    *out = NULL;
    cJSON *root = parse_json(text, len, "contract", name, err, n);
    if (!root)
        return -1;
    struct ctx c = { name, err, n, 0 };
    struct ka_contract *k = calloc(1, sizeof *k);
    if (!k) {
        snprintf(err, n, "contract '%s': out of memory", name);
        cJSON_Delete(root);
        return -1;
    }
    k->file = strdup(name);
    k->dominant_class = -1;
    XXH128_hash_t h = XXH3_128bits(text, len);
    XXH128_canonical_t canon;
    XXH128_canonicalFromHash(&canon, h);
    memcpy(k->digest, canon.digest, 16);

    if (!cJSON_IsObject(root)) {
        fail(&c, "(top)", "expected an object, found %s", type_name(root));
        goto done;
    }
    static const char *const keys[] = {
        "kaudit_contract", "task_id", "description", "reference", "candidate", "phases",
        "implementation", "reference_work", "degenerate_reference", "timing", "inputs", NULL,
    };
    only_keys(&c, root, "(top)", keys);
    const cJSON *ver = get(&c, root, "kaudit_contract", "(top)", 1);
    if (ver && (!cJSON_IsNumber(ver) || ver->valuedouble != KA_CONTRACT_VERSION))
        fail(&c, "kaudit_contract", "this kaudit reads contract version %d", KA_CONTRACT_VERSION);
    k->task_id = dup_string(&c, get(&c, root, "task_id", "(top)", 1), "task_id", 0);
    if (k->task_id && !*k->task_id)
        fail(&c, "task_id", "must not be empty");
    k->description = dup_string(&c, get(&c, root, "description", "(top)", 0), "description", 1);
    parse_party(&c, get(&c, root, "reference", "(top)", 0), "reference", &k->reference);
    parse_party(&c, get(&c, root, "candidate", "(top)", 0), "candidate", &k->candidate);

    const cJSON *phases = get(&c, root, "phases", "(top)", 0);
    if (phases) {
        if (!cJSON_IsObject(phases)) {
            fail(&c, "phases", "expected an object, found %s", type_name(phases));
        } else {
            static const char *const pkeys[] = { "candidate", "reference", NULL };
            only_keys(&c, phases, "phases", pkeys);
            k->phase_candidate = dup_string(&c, get(&c, phases, "candidate", "phases", 0), "phases.candidate", 1);
            k->phase_reference = dup_string(&c, get(&c, phases, "reference", "phases", 0), "phases.reference", 1);
        }
    }
    if (!k->phase_candidate)
        k->phase_candidate = strdup("kaudit:candidate");
    if (!k->phase_reference)
        k->phase_reference = strdup("kaudit:reference");
    if (!strcmp(k->phase_candidate, k->phase_reference))
        fail(&c, "phases", "candidate and reference phases have the same name");

    const cJSON *impl = get(&c, root, "implementation", "(top)", 1);
    if (impl)
        parse_implementation(&c, impl, k);
    const cJSON *rw = get(&c, root, "reference_work", "(top)", k->self_implemented);
    if (rw)
        parse_reference_work(&c, rw, k);
    k->degenerate_reference = get_bool(&c, get(&c, root, "degenerate_reference", "(top)", 0),
                                       "degenerate_reference", 0);
    parse_timing(&c, get(&c, root, "timing", "(top)", 0), k);
    parse_inputs(&c, get(&c, root, "inputs", "(top)", 0), k);

    /* Patterns are matched with fnmatch: reject the ones it cannot use. */
    for (size_t i = 0; !c.failed && i < k->candidate.n_objects; i++)
        if (!*k->candidate.objects[i])
            fail(&c, "candidate.objects", "empty pattern");
done:
    cJSON_Delete(root);
    if (c.failed) {
        ka_contract_free(k);
        return -1;
    }
    *out = k;
    return 0;
}

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
    for (size_t i = 0; i < k->n_inputs; i++) {
        free(k->inputs[i].name);
        free(k->inputs[i].shape);
        free(k->inputs[i].dtype);
    }
    free(k->inputs);
    free(k);
}

/* ---- the manifest ----------------------------------------------------- */

struct manifest_entry {
    char *path;     /* as listed, relative to the manifest's directory */
    char digest[33];
};

struct manifest {
    char *file;
    char *dir;
    struct manifest_entry *entries;
    size_t n;
};

static void manifest_free(struct manifest *m)
{
    for (size_t i = 0; i < m->n; i++)
        free(m->entries[i].path);
    free(m->entries);
    free(m->file);
    free(m->dir);
    memset(m, 0, sizeof *m);
}

static int manifest_read(const char *file, struct manifest *m, char *err, size_t n)
{
    memset(m, 0, sizeof *m);
    size_t len;
    char *text = read_file(file, &len, err, n, "contract manifest");
    if (!text)
        return -1;
    cJSON *root = parse_json(text, len, "contract manifest", file, err, n);
    free(text);
    if (!root)
        return -1;
    int rc = -1;
    const cJSON *ver = cJSON_GetObjectItemCaseSensitive(root, "kaudit_contract_manifest");
    const cJSON *list = cJSON_GetObjectItemCaseSensitive(root, "contracts");
    if (!cJSON_IsObject(root) || !cJSON_IsNumber(ver) || ver->valuedouble != KA_MANIFEST_VERSION) {
        snprintf(err, n, "contract manifest '%s': kaudit_contract_manifest: expected version %d", file,
                 KA_MANIFEST_VERSION);
        goto out;
    }
    if (!cJSON_IsArray(list)) {
        snprintf(err, n, "contract manifest '%s': contracts: expected an array", file);
        goto out;
    }
    m->entries = calloc((size_t)cJSON_GetArraySize(list) + 1, sizeof *m->entries);
    int i = 0;
    for (const cJSON *it = list->child; it; it = it->next, i++) {
        const cJSON *p = cJSON_GetObjectItemCaseSensitive(it, "path");
        const cJSON *d = cJSON_GetObjectItemCaseSensitive(it, "digest");
        if (!cJSON_IsString(p) || !cJSON_IsString(d) || !is_hex_digest(d->valuestring) ||
            !*p->valuestring || p->valuestring[0] == '/' || strstr(p->valuestring, "..")) {
            snprintf(err, n,
                     "contract manifest '%s': contracts[%d]: expected {\"path\": a relative path without "
                     "'..', \"digest\": 32 hex digits}",
                     file, i);
            goto out;
        }
        for (size_t j = 0; j < m->n; j++)
            if (!strcmp(m->entries[j].path, p->valuestring)) {
                snprintf(err, n, "contract manifest '%s': contracts[%d]: '%s' is listed twice", file, i,
                         p->valuestring);
                goto out;
            }
        m->entries[m->n].path = strdup(p->valuestring);
        memcpy(m->entries[m->n].digest, d->valuestring, 33);
        m->n++;
    }
    m->file = strdup(file);
    char *tmp = strdup(file);
    m->dir = strdup(dirname(tmp));
    free(tmp);
    rc = 0;
out:
    cJSON_Delete(root);
    if (rc)
        manifest_free(m);
    return rc;
}

/* Find manifest.json beside the contract or up to three directories above it. */
static char *find_manifest(const char *contract)
{
    char dir[PATH_MAX];
    if (!realpath(contract, dir))
        return NULL;
    char *slash = strrchr(dir, '/');
    if (!slash)
        return NULL;
    *slash = 0;
    for (int up = 0; up < 4; up++) {
        char cand[PATH_MAX + 32];
        snprintf(cand, sizeof cand, "%s/manifest.json", *dir ? dir : "");
        struct stat st;
        if (stat(cand, &st) == 0 && S_ISREG(st.st_mode))
            return strdup(cand);
        slash = strrchr(dir, '/');
        if (!slash)
            break;
        *slash = 0;
    }
    return NULL;
}

/* The manifest entry naming the same file as path (compared by realpath). */
static const struct manifest_entry *manifest_lookup(const struct manifest *m, const char *path)
{
    char want[PATH_MAX];
    if (!realpath(path, want))
        return NULL;
    for (size_t i = 0; i < m->n; i++) {
        char listed[PATH_MAX * 2], real[PATH_MAX];
        snprintf(listed, sizeof listed, "%s/%s", m->dir, m->entries[i].path);
        if (realpath(listed, real) && !strcmp(real, want))
            return &m->entries[i];
    }
    return NULL;
}

int ka_contract_load(const char *path, const char *manifest, struct ka_contract **out, char *err, size_t n)
{
    *out = NULL;
    size_t len;
    char *text = read_file(path, &len, err, n, "contract");
    if (!text)
        return -1;
    char *found = manifest ? strdup(manifest) : find_manifest(path);
    if (!found) {
        snprintf(err, n,
                 "contract '%s' is not pinned: no manifest.json beside it or in the directories above "
                 "(give --manifest, or pin it with 'kaudit contract pin')",
                 path);
        free(text);
        return -1;
    }
    struct manifest m;
    if (manifest_read(found, &m, err, n) != 0) {
        free(found);
        free(text);
        return -1;
    }
    int rc = -1;
    const struct manifest_entry *e = manifest_lookup(&m, path);
    char hex[33];
    digest_hex(text, len, hex);
    if (!e) {
        snprintf(err, n, "contract '%s' is not listed in the manifest '%s' (pin it with 'kaudit contract pin')",
                 path, found);
    } else if (strcmp(e->digest, hex)) {
        snprintf(err, n, "contract '%s' does not match its manifest '%s': digest %s, pinned %s", path, found,
                 hex, e->digest);
    } else {
        rc = ka_contract_parse(text, len, path, out, err, n);
    }
    manifest_free(&m);
    free(found);
    free(text);
    return rc;
}

int ka_manifest_check(const char *manifest, void (*problem)(const char *msg, void *arg), void *arg,
                      size_t *n_checked, char *err, size_t n)
{
    struct manifest m;
    *n_checked = 0;
    if (manifest_read(manifest, &m, err, n) != 0)
        return -1;
    int bad = 0;
    for (size_t i = 0; i < m.n; i++) {
        char path[PATH_MAX * 2], msg[2048];
        snprintf(path, sizeof path, "%s/%s", m.dir, m.entries[i].path);
        struct ka_contract *k;
        if (ka_contract_load(path, manifest, &k, msg, sizeof msg) != 0) {
            if (problem)
                problem(msg, arg);
            bad++;
        } else {
            ka_contract_free(k);
        }
        (*n_checked)++;
    }
    manifest_free(&m);
    if (bad) {
        snprintf(err, n, "contract manifest '%s': %d of %zu contracts do not verify", manifest, bad, *n_checked);
        return -1;
    }
    return 0;
}

static int cmp_entries(const void *a, const void *b)
{
    return strcmp(((const struct manifest_entry *)a)->path, ((const struct manifest_entry *)b)->path);
}

int ka_manifest_pin(const char *manifest, const char *const *contracts, size_t n_contracts, char *err, size_t n)
{
    struct manifest m;
    struct stat st;
    if (stat(manifest, &st) == 0) {
        if (manifest_read(manifest, &m, err, n) != 0)
            return -1;
    } else {
        memset(&m, 0, sizeof m);
        char *tmp = strdup(manifest);
        m.dir = strdup(dirname(tmp));
        free(tmp);
    }
    char mdir[PATH_MAX];
    if (!realpath(m.dir, mdir)) {
        snprintf(err, n, "contract manifest '%s': cannot resolve its directory", manifest);
        manifest_free(&m);
        return -1;
    }
    int rc = -1;
    for (size_t i = 0; i < n_contracts; i++) {
        size_t len;
        char *text = read_file(contracts[i], &len, err, n, "contract");
        if (!text)
            goto out;
        struct ka_contract *k;
        if (ka_contract_parse(text, len, contracts[i], &k, err, n) != 0) {
            free(text);
            goto out;
        }
        ka_contract_free(k);
        char hex[33], real[PATH_MAX];
        digest_hex(text, len, hex);
        free(text);
        if (!realpath(contracts[i], real) || strncmp(real, mdir, strlen(mdir)) || real[strlen(mdir)] != '/') {
            snprintf(err, n, "contract '%s' is not under the manifest's directory '%s'", contracts[i], mdir);
            goto out;
        }
        const char *rel = real + strlen(mdir) + 1;
        for (const char *q = rel; *q; q++)
            if (*q == '"' || *q == '\\' || (unsigned char)*q < 0x20) {
                snprintf(err, n, "contract '%s': its path has a character a manifest entry cannot hold", contracts[i]);
                goto out;
            }
        size_t j;
        for (j = 0; j < m.n; j++)
            if (!strcmp(m.entries[j].path, rel))
                break;
        if (j == m.n) {
            struct manifest_entry *grown = realloc(m.entries, (m.n + 1) * sizeof *grown);
            if (!grown) {
                snprintf(err, n, "out of memory");
                goto out;
            }
            m.entries = grown;
            m.entries[m.n].path = strdup(rel);
            m.n++;
        }
        memcpy(m.entries[j].digest, hex, 33);
    }
    qsort(m.entries, m.n, sizeof *m.entries, cmp_entries);
    char tmp[PATH_MAX + 16];
    snprintf(tmp, sizeof tmp, "%s.tmp", manifest);
    FILE *f = fopen(tmp, "w");
    if (!f) {
        snprintf(err, n, "cannot write contract manifest '%s': %s", tmp, strerror(errno));
        goto out;
    }
    fprintf(f, "{\n  \"kaudit_contract_manifest\": %d,\n  \"contracts\": [\n", KA_MANIFEST_VERSION);
    for (size_t j = 0; j < m.n; j++)
        fprintf(f, "    {\"path\": \"%s\", \"digest\": \"%s\"}%s\n", m.entries[j].path, m.entries[j].digest,
                j + 1 < m.n ? "," : "");
    fprintf(f, "  ]\n}\n");
    if (fclose(f) != 0 || rename(tmp, manifest) != 0) {
        snprintf(err, n, "cannot write contract manifest '%s': %s", manifest, strerror(errno));
        unlink(tmp);
        goto out;
    }
    rc = 0;
out:
    manifest_free(&m);
    return rc;
}
