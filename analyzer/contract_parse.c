/*
 * contract_parse.c - a contract's JSON into a struct ka_contract, checked
 * (contract.h, docs/contracts.md).  Unknown keys are errors: a misspelt
 * policy field must not silently fall back to a default.
 */
#define _GNU_SOURCE
#include "contract.h"

#include <cjson/cJSON.h>
#include <fnmatch.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "contract_internal.h"
#include "trace_names.h"


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
    if (p->digest && !ka_contract_is_hex_digest(p->digest))
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
        fail(c, path, "unknown work class '%s' (gemm, conv, attention, reduction, elementwise, glue, pooling, "
             "normalization, softmax, other)",
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
                /* Normalization and softmax were reductions before they were classes of their
                   own: a contract that forbids reductions keeps forbidding them. */
                if (cls == KA_CLASS_REDUCTION)
                    k->forbidden |= 1u << KA_CLASS_NORMALIZATION | 1u << KA_CLASS_SOFTMAX;
            }
        }
    } else if (k->self_implemented) {
        /* Core work must be the candidate's own: every compute class is forbidden. */
        k->forbidden = KA_CORE_CLASSES;
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
            if (u->library && !kat_vendor_library_of(u->library) && strcmp(u->library, "*"))
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

/* "stress": {"layouts": ["contiguous", "strided", "transposed"]}: the input
 * layouts the task declares valid (a stress slot of an undeclared layout is
 * reported, never gating). */
static void parse_layouts(struct ctx *c, const cJSON *v, struct ka_contract *k)
{
    if (!v)
        return;
    if (!cJSON_IsArray(v)) {
        fail(c, "stress.layouts", "expected an array of layout names, found %s", type_name(v));
        return;
    }
    static const struct {
        const char *name;
        unsigned bit;
    } layouts[] = { { "contiguous", KA_LAYOUT_CONTIGUOUS },
                    { "strided", KA_LAYOUT_STRIDED },
                    { "transposed", KA_LAYOUT_TRANSPOSED } };
    int i = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, v)
    {
        unsigned bit = 0;
        for (size_t l = 0; cJSON_IsString(e) && l < sizeof layouts / sizeof layouts[0]; l++)
            if (!strcmp(e->valuestring, layouts[l].name))
                bit = layouts[l].bit;
        if (!bit) {
            fail(c, "stress.layouts", "entry %d: unknown layout (contiguous, strided, transposed)", i);
            return;
        }
        if (k->stress_layouts & bit) {
            fail(c, "stress.layouts", "entry %d: '%s' given twice", i, e->valuestring);
            return;
        }
        k->stress_layouts |= bit;
        i++;
    }
}

/* "stress": {"alternative_shapes": [[64, 256], null, ...], "layouts": [...]}:
 * the shapes the contract allows besides get_inputs()'s, one per input, and
 * the layouts it declares valid. */
static void parse_stress(struct ctx *c, const cJSON *v, struct ka_contract *k)
{
    if (!v)
        return;
    if (!cJSON_IsObject(v)) {
        fail(c, "stress", "expected an object, found %s", type_name(v));
        return;
    }
    static const char *const keys[] = { "alternative_shapes", "layouts", NULL };
    only_keys(c, v, "stress", keys);
    parse_layouts(c, get(c, v, "layouts", "stress", 0), k);
    const cJSON *shapes = get(c, v, "alternative_shapes", "stress", 0);
    if (!shapes)
        return;
    if (!cJSON_IsArray(shapes)) {
        fail(c, "stress.alternative_shapes", "expected an array (one shape per input), found %s", type_name(shapes));
        return;
    }
    int i = 0;
    const cJSON *shape;
    cJSON_ArrayForEach(shape, shapes)
    {
        if (cJSON_IsNull(shape)) {
            i++;
            continue;
        }
        if (!cJSON_IsArray(shape) || cJSON_GetArraySize(shape) > 16) {
            fail(c, "stress.alternative_shapes", "entry %d: expected an array of at most 16 sizes or null", i);
            return;
        }
        const cJSON *d;
        cJSON_ArrayForEach(d, shape)
        {
            if (!cJSON_IsNumber(d) || d->valuedouble < 0 || d->valuedouble > 1e12 ||
                d->valuedouble != (double)(long long)d->valuedouble) {
                fail(c, "stress.alternative_shapes", "entry %d: sizes are non-negative integers", i);
                return;
            }
        }
        i++;
    }
    k->alternative_shapes = cJSON_PrintUnformatted(shapes);
    if (!k->alternative_shapes)
        fail(c, "stress", "out of memory");
}

/* "state": {"candidate_only": ["gamma", "beta"]}: state the candidate may
 * hold that the reference lacks; the paper abstains on such state unless it
 * is declared (docs/audit.md, "State alignment"). */
static void parse_state(struct ctx *c, const cJSON *v, struct ka_contract *k)
{
    if (!v)
        return;
    if (!cJSON_IsObject(v)) {
        fail(c, "state", "expected an object, found %s", type_name(v));
        return;
    }
    static const char *const keys[] = { "candidate_only", NULL };
    only_keys(c, v, "state", keys);
    const cJSON *names = get(c, v, "candidate_only", "state", 0);
    size_t n = 0;
    char **list = string_list(c, names, "state.candidate_only", &n);
    if (!c->failed && n > 64)
        fail(c, "state.candidate_only", "more than 64 state names");
    for (size_t i = 0; !c->failed && i < n; i++)
        if (!*list[i] || strlen(list[i]) > 256)
            fail(c, "state.candidate_only", "entry %zu: an empty state name or one over 256 bytes", i);
    for (size_t i = 0; list && list[i]; i++)
        free(list[i]);
    free(list);
    if (c->failed || !names)
        return;
    /* the runner reads the names from the plan, which carries them as JSON */
    k->candidate_only_state = cJSON_PrintUnformatted(names);
    if (!k->candidate_only_state)
        fail(c, "state", "out of memory");
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
    cJSON *root = ka_contract_parse_json(text, len, "contract", name, err, n);
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
        "implementation", "reference_work", "degenerate_reference", "timing", "inputs", "stress", "state", NULL,
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
    parse_stress(&c, get(&c, root, "stress", "(top)", 0), k);
    parse_state(&c, get(&c, root, "state", "(top)", 0), k);

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
