/*
 * analysis.c - from a recorded session and a contract to axis verdicts and a
 * certificate (analysis.h, docs/analysis.md).
 *
 * Per trace: pass 1 indexes everything but kernels (struct ka_proc), pass 2
 * streams the kernels and classifies each one.  After all traces, the
 * session-level rules (work thresholds, build failures, R-A) turn the sums and
 * findings into verdicts.
 */
#define _GNU_SOURCE
#include "analysis.h"

#include <ctype.h>
#include <fnmatch.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "evidence.h"
#include "inventory.h"
#include "session.h"
#include "trace_reader.h"

/* ---- names ------------------------------------------------------------ */

const char *ka_verdict_name(enum ka_verdict v)
{
    static const char *const names[] = { "PASS", "FAIL", "INCONCLUSIVE", "UNSUPPORTED" };
    return (unsigned)v < 4 ? names[v] : "?";
}

const char *ka_axis_name(enum ka_axis a)
{
    static const char *const names[] = { "semantic", "implementation", "measurement" };
    return (unsigned)a < KA_AXIS_COUNT ? names[a] : "?";
}

const char *ka_party_name(enum ka_party p)
{
    static const char *const names[] = { "unknown", "candidate", "reference", "harness" };
    return (unsigned)p < KA_PARTY_COUNT ? names[p] : "?";
}

const char *ka_origin_name(enum ka_origin o)
{
    static const char *const names[] = { "vendor", "framework", "candidate", "unattributed" };
    return (unsigned)o < KA_ORIGIN_COUNT ? names[o] : "?";
}

const char *ka_finding_kind_name(enum ka_finding_kind k)
{
    switch (k) {
    case KA_FINDING_CONVICTS: return "convicts";
    case KA_FINDING_UNRESOLVED: return "unresolved";
    case KA_FINDING_SIGNAL: return "signal";
    case KA_FINDING_SUPPORT: return "support";
    }
    return "?";
}

/* ---- small containers ------------------------------------------------- */

#define GROW(arr, n, cap)                                                                    \
    ((n) < (cap) ? 0                                                                         \
                 : ka_grow((void **)&(arr), &(cap), sizeof *(arr)))

static int ka_grow(void **arr, size_t *cap, size_t elem)
{
    size_t nc = *cap ? *cap * 2 : 16;
    void *p = realloc(*arr, nc * elem);
    if (!p)
        return -1;
    *arr = p;
    *cap = nc;
    return 0;
}

static uint32_t hash32(uint32_t x)
{
    x ^= x >> 16;
    x *= 0x7feb352dU;
    x ^= x >> 15;
    x *= 0x846ca68bU;
    x ^= x >> 16;
    return x;
}

int ka_u32map_put(struct ka_u32map *m, uint32_t key, uint32_t val)
{
    if (key == 0)
        return 0;
    if ((m->count + 1) * 2 > m->cap) {
        size_t nc = m->cap ? m->cap * 2 : 1024;
        uint32_t *k = calloc(nc, sizeof *k), *v = calloc(nc, sizeof *v);
        if (!k || !v) {
            free(k);
            free(v);
            return -1;
        }
        for (size_t i = 0; i < m->cap; i++) {
            if (!m->keys[i])
                continue;
            size_t j = hash32(m->keys[i]) & (nc - 1);
            while (k[j])
                j = (j + 1) & (nc - 1);
            k[j] = m->keys[i];
            v[j] = m->vals[i];
        }
        free(m->keys);
        free(m->vals);
        m->keys = k;
        m->vals = v;
        m->cap = nc;
    }
    size_t j = hash32(key) & (m->cap - 1);
    while (m->keys[j] && m->keys[j] != key)
        j = (j + 1) & (m->cap - 1);
    if (!m->keys[j])
        m->count++;
    m->keys[j] = key;
    m->vals[j] = val;
    return 0;
}

int ka_u32map_get(const struct ka_u32map *m, uint32_t key, uint32_t *val)
{
    if (!m->cap || key == 0)
        return 0;
    size_t j = hash32(key) & (m->cap - 1);
    while (m->keys[j]) {
        if (m->keys[j] == key) {
            *val = m->vals[j];
            return 1;
        }
        j = (j + 1) & (m->cap - 1);
    }
    return 0;
}

void ka_u32map_free(struct ka_u32map *m)
{
    free(m->keys);
    free(m->vals);
    memset(m, 0, sizeof *m);
}

static const char *base_name(const char *path)
{
    const char *s = path ? strrchr(path, '/') : NULL;
    return s ? s + 1 : (path ? path : "");
}

static int icontains(const char *hay, const char *needle)
{
    return strcasestr(hay, needle) != NULL;
}

/* ---- findings --------------------------------------------------------- */

#define KA_FINDINGS_PER_CODE 12

struct code_count {
    char code[48];
    unsigned seen;
};

struct analysis_state {
    struct ka_analysis *a;
    const struct ka_contract *c;
    const struct ka_options *opt;
    struct code_count *codes;
    size_t n_codes, cap_codes;
    /* session-level facts gathered across traces */
    struct { uint64_t start, end; } *cand_phases;
    size_t n_cand_phases, cap_cand_phases;
    struct proc_summary {
        uint32_t pid, ppid;
        char *argv0, *file;
        uint64_t start_ns;
        int build_tool, status_known;
        int32_t status;
        uint32_t end_kind;
    } *procs;
    size_t n_procs, cap_procs;
    struct { uint32_t pid; int32_t wait_status; } *child_exits;   /* from every trace */
    size_t n_child_exits, cap_child_exits;
    uint64_t candidate_modules;         /* modules loaded by candidate objects */
    uint64_t candidate_kernels_own;     /* candidate-party kernels of candidate origin */
    uint64_t candidate_kernels_any;
    int health_problem, truncated, read_error, no_api_for_kernels;
    unsigned python_off;                /* Python processes without Python-side provenance */
    uint64_t kernels_without_api;
    uint64_t escaped_unattributed;
    uint64_t stop_time_ambiguous;       /* kernels between a stop event's bounds */
    uint64_t guard_changes, reported_mismatch, reported_total, reported_checked;
    int tamper;
    /* work items the implementation axis weighs */
    struct work_item {
        int cls;
        double work;            /* 0: not estimable */
        int kind;               /* enum item_kind */
        char *what;             /* for the finding */
        char *process;
        uint64_t time_ns;
        int exempt;
        char *exempt_why;
        int unattributed;       /* party unknown: can never convict, can leave the axis unresolved */
    } *items;
    size_t n_items, cap_items;
    /* framework kernels of the candidate, summed per class (proxy: threads launched) */
    double fw_work[KA_CLASS_COUNT];
    uint64_t fw_count[KA_CLASS_COUNT];
    char *fw_example[KA_CLASS_COUNT];
    char *fw_process[KA_CLASS_COUNT];
    double unk_fw_work[KA_CLASS_COUNT];
    uint64_t unk_fw_count[KA_CLASS_COUNT];
    /* vendor kernels the candidate launched outside any library call, per class */
    uint64_t nm_count[KA_CLASS_COUNT];
    char *nm_example[KA_CLASS_COUNT];
    char *nm_process[KA_CLASS_COUNT];
    uint64_t nm_time[KA_CLASS_COUNT];
};

enum item_kind { ITEM_VENDOR_CALL = 1, ITEM_FRAMEWORK_KERNELS, ITEM_VENDOR_KERNEL };

static void add_finding(struct analysis_state *st, enum ka_axis axis, enum ka_finding_kind kind,
                        const char *code, const char *process, uint64_t time_ns, const char *fmt, ...)
    __attribute__((format(printf, 7, 8)));

static void add_finding(struct analysis_state *st, enum ka_axis axis, enum ka_finding_kind kind,
                        const char *code, const char *process, uint64_t time_ns, const char *fmt, ...)
{
    struct code_count *cc = NULL;
    for (size_t i = 0; i < st->n_codes; i++)
        if (!strcmp(st->codes[i].code, code))
            cc = &st->codes[i];
    if (!cc) {
        if (GROW(st->codes, st->n_codes, st->cap_codes))
            return;
        cc = &st->codes[st->n_codes++];
        memset(cc, 0, sizeof *cc);
        snprintf(cc->code, sizeof cc->code, "%s", code);
    }
    if (++cc->seen > KA_FINDINGS_PER_CODE)
        return;
    struct ka_analysis *a = st->a;
    struct ka_finding *grown = realloc(a->findings, (a->n_findings + 1) * sizeof *grown);
    if (!grown)
        return;
    a->findings = grown;
    struct ka_finding *f = &a->findings[a->n_findings++];
    memset(f, 0, sizeof *f);
    f->axis = axis;
    f->kind = kind;
    snprintf(f->code, sizeof f->code, "%s", code);
    f->process = process ? strdup(process) : NULL;
    f->time_ns = time_ns;
    va_list ap;
    va_start(ap, fmt);
    if (vasprintf(&f->text, fmt, ap) < 0)
        f->text = NULL;
    va_end(ap);
}

static unsigned code_seen(const struct analysis_state *st, const char *code)
{
    for (size_t i = 0; i < st->n_codes; i++)
        if (!strcmp(st->codes[i].code, code))
            return st->codes[i].seen;
    return 0;
}

/* Findings past the per-code limit are summarized in one line. */
static void summarize_dropped(struct analysis_state *st)
{
    size_t n = st->n_codes;
    for (size_t i = 0; i < n; i++) {
        if (st->codes[i].seen <= KA_FINDINGS_PER_CODE)
            continue;
        enum ka_axis axis = KA_AXIS_IMPLEMENTATION;
        enum ka_finding_kind kind = KA_FINDING_SIGNAL;
        for (size_t j = 0; j < st->a->n_findings; j++)
            if (!strcmp(st->a->findings[j].code, st->codes[i].code)) {
                axis = st->a->findings[j].axis;
                kind = st->a->findings[j].kind;
            }
        unsigned more = st->codes[i].seen - KA_FINDINGS_PER_CODE;
        st->codes[i].seen = 0; /* let the summary line through */
        add_finding(st, axis, kind, st->codes[i].code, NULL, 0, "... and %u more like the above", more);
    }
}

/* ---- classification helpers ------------------------------------------- */

/* The work class a kernel name suggests (framework and vendor kernels). */
static int class_of_kernel_name(const char *name)
{
    static const struct { const char *word; int cls; } words[] = {
        /* initialization (RNG fills) is glue, whatever else the name says */
        { "distribution", KA_CLASS_GLUE }, { "philox", KA_CLASS_GLUE }, { "random", KA_CLASS_GLUE },
        { "conv", KA_CLASS_CONV }, { "fprop", KA_CLASS_CONV }, { "dgrad", KA_CLASS_CONV },
        { "wgrad", KA_CLASS_CONV }, { "implicit_gemm", KA_CLASS_CONV }, { "winograd", KA_CLASS_CONV },
        { "flash", KA_CLASS_ATTENTION }, { "fmha", KA_CLASS_ATTENTION }, { "attention", KA_CLASS_ATTENTION },
        { "sdpa", KA_CLASS_ATTENTION },
        { "gemm", KA_CLASS_GEMM }, { "gemv", KA_CLASS_GEMM }, { "matmul", KA_CLASS_GEMM },
        { "nvjet", KA_CLASS_GEMM }, { "xmma", KA_CLASS_GEMM }, { "cutlass", KA_CLASS_GEMM },
        { "splitk", KA_CLASS_GEMM }, { "dot_kernel", KA_CLASS_GEMM },
        { "reduce", KA_CLASS_REDUCTION }, { "softmax", KA_CLASS_REDUCTION }, { "norm", KA_CLASS_REDUCTION },
        { "argmax", KA_CLASS_REDUCTION }, { "argmin", KA_CLASS_REDUCTION }, { "scan", KA_CLASS_REDUCTION },
        { "cumsum", KA_CLASS_REDUCTION },
        { "copy", KA_CLASS_GLUE }, { "fill", KA_CLASS_GLUE }, { "catarray", KA_CLASS_GLUE },
        { "index", KA_CLASS_GLUE }, { "transpose", KA_CLASS_GLUE }, { "permute", KA_CLASS_GLUE },
        { "gather", KA_CLASS_GLUE }, { "scatter", KA_CLASS_GLUE }, { "cast", KA_CLASS_GLUE },
        { "nchwtonhwc", KA_CLASS_GLUE }, { "nhwctonchw", KA_CLASS_GLUE },
        { "elementwise", KA_CLASS_ELEMENTWISE }, { "vectorized", KA_CLASS_ELEMENTWISE },
        { "pointwise", KA_CLASS_ELEMENTWISE }, { "functor", KA_CLASS_ELEMENTWISE },
    };
    for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
        if (icontains(name, words[i].word))
            return words[i].cls;
    return KA_CLASS_OTHER;
}

/* PyTorch's own kernels: at:: and c10:: code, mangled or not. */
static int is_framework_kernel_name(const char *name)
{
    return !strncmp(name, "_ZN2at", 6) || !strncmp(name, "_ZN3c10", 7) || strstr(name, "at::native::") ||
           strstr(name, "at::cuda::") || !strncmp(name, "void at::", 9) || strstr(name, "_ZN2at6native") ||
           strstr(name, "_ZN2at4cuda");
}

/* Names that say lower than fp32 precision (tensor-core half, bf16, tf32, fp8). */
static int is_low_precision_name(const char *name)
{
    static const char *const words[] = { "f16", "fp16", "bf16", "half", "hmma", "tf32", "e4m3", "e5m2", "h1688",
                                          "s1688", "h16816", "_h_", "bfloat" };
    for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
        if (icontains(name, words[i]))
            return 1;
    return 0;
}

static int path_matches(const char *path, char *const *patterns, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (fnmatch(patterns[i], path, 0) == 0)
            return 1;
    return 0;
}

/* Loaded objects that are the candidate's when the contract names none. */
static const char *const default_candidate_objects[] = {
    "*/torch_extensions/*", "*/.triton/cache/*", "*/triton/cache/*", "*/torchinductor_*/*",
};

static int is_candidate_object(const struct ka_contract *c, const char *path)
{
    if (!path || !*path)
        return 0;
    if (c->candidate.n_objects)
        return path_matches(path, c->candidate.objects, c->candidate.n_objects);
    return path_matches(path, (char *const *)default_candidate_objects,
                        sizeof default_candidate_objects / sizeof default_candidate_objects[0]);
}

static int is_vendor_object(const char *path)
{
    const char *b = base_name(path);
    return !strncmp(b, "libcublas", 9) || !strncmp(b, "libcudnn", 8);
}

static int is_framework_object(const char *path)
{
    const char *b = base_name(path);
    return !strncmp(b, "libtorch", 8) || !strncmp(b, "libc10", 6) || !strncmp(b, "libcaffe2", 9) ||
           !strncmp(b, "_C.", 3) || strstr(path, "/torch/lib/") != NULL;
}

static int loader_kind(const struct ka_contract *c, const char *loader)
{
    if (!loader || !*loader)
        return KA_LOADER_UNKNOWN;
    if (is_candidate_object(c, loader))
        return KA_LOADER_CANDIDATE;
    if (is_vendor_object(loader))
        return KA_LOADER_VENDOR;
    if (is_framework_object(loader))
        return KA_LOADER_FRAMEWORK;
    return KA_LOADER_OTHER;
}

static const char *const build_tools[] = {
    "nvcc", "ninja", "make", "cmake", "cicc", "ptxas", "fatbinary", "nvlink", "cudafe++", "gcc", "g++", "cc",
    "c++", "g++-real", "gcc-real", "clang", "clang++", "ld", "ld.bfd", "ld.gold", "collect2", "cc1", "cc1plus", "as",
};

static int is_build_tool(const char *argv0, const char *exe)
{
    const char *names[2] = { base_name(argv0), base_name(exe) };
    for (int k = 0; k < 2; k++) {
        if (!names[k][0])
            continue;
        for (size_t i = 0; i < sizeof build_tools / sizeof build_tools[0]; i++)
            if (!strcmp(names[k], build_tools[i]))
                return 1;
        /* x86_64-linux-gnu-g++-13 and the like */
        if (strstr(names[k], "-g++") || strstr(names[k], "-gcc"))
            return 1;
    }
    return 0;
}

/* FLOPs of a vendor call from its argument summary; 0 when not estimable. */
static double vendor_call_work(const struct kat_vendor_call_rec *r, int *cls)
{
    *cls = KA_CLASS_OTHER;
    if (r->work_class == KAT_WORK_GEMM || r->work_class == KAT_WORK_GEMV)
        *cls = KA_CLASS_GEMM;
    else if (r->work_class == KAT_WORK_CONV)
        *cls = KA_CLASS_CONV;
    if (!r->summary_known)
        return 0;
    if (*cls == KA_CLASS_GEMM) {
        const struct kat_gemm_summary *g = &r->op.gemm;
        double batch = g->batch > 0 ? (double)g->batch : 1.0;
        if (g->m <= 0 || g->n <= 0)
            return 0;
        double k = r->work_class == KAT_WORK_GEMV ? 1.0 : (double)(g->k > 0 ? g->k : 0);
        return 2.0 * (double)g->m * (double)g->n * k * batch;
    }
    if (*cls == KA_CLASS_CONV) {
        const struct kat_conv_summary *v = &r->op.conv;
        int dims = v->spatial_dims > 0 && v->spatial_dims <= 3 ? v->spatial_dims : 0;
        if (!dims || v->n <= 0 || v->c <= 0 || v->k <= 0)
            return 0;
        double out = 1, filt = 1;
        for (int i = 0; i < dims; i++) {
            out *= (double)(v->out_spatial[i] > 0 ? v->out_spatial[i] : 0);
            filt *= (double)(v->filter_spatial[i] > 0 ? v->filter_spatial[i] : 0);
        }
        double groups = v->groups > 0 ? v->groups : 1;
        return 2.0 * (double)v->n * (double)v->k * ((double)v->c / groups) * out * filt;
    }
    return 0;
}

/* ---- pass 1: index one trace ------------------------------------------ */

static char *dup_trace_string(const struct kat_trace *t, uint32_t id)
{
    return strdup(kat_trace_string(t, id));
}

static int phase_cmp(const void *x, const void *y, void *base)
{
    const struct ka_phase *phases = base;
    const struct ka_phase *a = &phases[*(const uint32_t *)x], *b = &phases[*(const uint32_t *)y];
    if (a->tid != b->tid)
        return a->tid < b->tid ? -1 : 1;
    if (a->start_ns != b->start_ns)
        return a->start_ns < b->start_ns ? -1 : 1;
    /* same start: push order, so that a child sorts after its parent */
    return *(const uint32_t *)x < *(const uint32_t *)y ? -1 : 1;
}

static int module_cmp(const void *x, const void *y)
{
    const struct ka_module *a = x, *b = y;
    return a->time_ns < b->time_ns ? -1 : a->time_ns > b->time_ns;
}

static int window_cmp(const void *x, const void *y)
{
    const struct ka_window *a = x, *b = y;
    return a->host_start_ns < b->host_start_ns ? -1 : a->host_start_ns > b->host_start_ns;
}

struct nvtx_open {
    uint32_t tid;
    uint32_t message;
    uint32_t domain;
    int32_t phase;              /* index of the phase this range opened, -1 if it is no phase */
    uint64_t start_ns;
};

struct timing_rec {
    struct kat_timing_call_rec r;
};

struct event_rec {
    uint32_t correlation_id, stream_id;
    uint64_t device_ts;
};

static int listed(const char *name, size_t len, char *const *list, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (strlen(list[i]) == len && !memcmp(list[i], name, len))
            return 1;
    return 0;
}

/*
 * The party of a Python frame from its qualified name ("ModelNew.forward",
 * "build.<locals>.ModelNew.forward"): the first component the contract names
 * as a candidate or reference symbol (KernelBench's ModelNew and Model when it
 * names none).
 */
static int path_is(const char *file, size_t len, const char *path)
{
    /* the contract's path matches the frame's file by its trailing components */
    size_t n = path ? strlen(path) : 0;
    if (!n || n > len || memcmp(file + len - n, path, n))
        return 0;
    return n == len || file[len - n - 1] == '/' || path[0] == '/';
}

static enum ka_party python_party(const struct ka_contract *c, const char *message)
{
    /* message: "qualname (file)" */
    const char *open = strstr(message, " (");
    size_t qual_len = open ? (size_t)(open - message) : strlen(message);
    const char *file = open ? open + 2 : "";
    size_t file_len = strlen(file);
    if (file_len && file[file_len - 1] == ')')
        file_len--;
    static char *const default_candidate[] = { "ModelNew" };
    static char *const default_reference[] = { "Model" };
    char *const *cand = c->candidate.n_symbols ? c->candidate.symbols : default_candidate;
    size_t n_cand = c->candidate.n_symbols ? c->candidate.n_symbols : 1;
    char *const *ref = c->reference.n_symbols ? c->reference.symbols : default_reference;
    size_t n_ref = c->reference.n_symbols ? c->reference.n_symbols : 1;
    for (const char *p = message, *end = message + qual_len; p < end;) {
        size_t len = strcspn(p, ".");
        if (p + len > end)
            len = (size_t)(end - p);
        if (listed(p, len, cand, n_cand))
            return KA_PARTY_CANDIDATE;
        if (listed(p, len, ref, n_ref))
            return KA_PARTY_REFERENCE;
        p += len;
        if (p < end && *p == '.')
            p++;
    }
    if (path_is(file, file_len, c->candidate.path))
        return KA_PARTY_CANDIDATE;
    if (path_is(file, file_len, c->reference.path))
        return KA_PARTY_REFERENCE;
    return KA_PARTY_UNKNOWN;
}

static enum ka_party phase_party(const struct ka_contract *c, const char *message, int python)
{
    if (python)
        return python_party(c, message);
    if (!strcmp(message, c->phase_candidate))
        return KA_PARTY_CANDIDATE;
    if (!strcmp(message, c->phase_reference))
        return KA_PARTY_REFERENCE;
    return KA_PARTY_UNKNOWN;
}

/* Open a phase on tid (its end is set when the range closes); returns its index. */
static int32_t open_phase(struct ka_proc *p, uint32_t tid, enum ka_party party, int python, int32_t parent,
                          uint64_t s)
{
    if (GROW(p->phases, p->n_phases, p->cap_phases))
        return -1;
    p->phases[p->n_phases] = (struct ka_phase){ .tid = tid, .party = (uint8_t)party, .python = (uint8_t)python,
                                                .parent = parent, .start_ns = s, .end_ns = UINT64_MAX };
    p->phase_marks = 1;
    return (int32_t)p->n_phases++;
}

static void note_mark(struct ka_proc *p, const char *msg, int python)
{
    if (python) {
        free(p->python_status);
        p->python_status = strdup(msg);
        return;
    }
    static const char reported[] = "kaudit:reported_ms ";
    static const char guard[] = "kaudit:guard-changed ";
    if (!strncmp(msg, reported, sizeof reported - 1)) {
        char *end;
        double v = strtod(msg + sizeof reported - 1, &end);
        if (end != msg + sizeof reported - 1 && !GROW(p->reported_ms, p->n_reported, p->cap_reported))
            p->reported_ms[p->n_reported++] = v;
    } else if (!strncmp(msg, guard, sizeof guard - 1)) {
        if (!GROW(p->guard_changed, p->n_guard, p->cap_guard))
            p->guard_changed[p->n_guard++] = strdup(msg + sizeof guard - 1);
    }
}

/* Health records that limit what the trace can show. */
static void note_health(struct analysis_state *st, struct ka_proc *p, const struct kat_trace *t,
                        const struct kat_health_rec *h)
{
    const char *detail = kat_trace_string(t, h->detail_string);
    const char *name = kat_health_code_name(h->code);
    int problem = 0;
    switch (h->code) {
    case KAT_HEALTH_CUPTI_NOT_FOUND:
    case KAT_HEALTH_CUPTI_ENABLE_FAILED:
    case KAT_HEALTH_CUPTI_UNSUPPORTED:
    case KAT_HEALTH_FOREIGN_SUBSCRIBER:
    case KAT_HEALTH_CALLBACK_OVERRIDDEN:
        problem = 1;
        break;
    case KAT_HEALTH_CUPTI_SUBSCRIBE:
        problem = h->value != 0;
        break;
    case KAT_HEALTH_API_RECORD_POLICY:
        problem = h->value < 0;         /* no API records: no vendor windows */
        break;
    case KAT_HEALTH_ACTIVITY_KINDS:
    case KAT_HEALTH_BENCH_CONTROL:      /* recording may have been paused */
        problem = h->value > 0;
        break;
    case KAT_HEALTH_CUPTI_DROPPED:
    case KAT_HEALTH_BUFFER_LOST:
    case KAT_HEALTH_WRITER_FULL:
        problem = h->value > 0;
        break;
    case KAT_HEALTH_SYMBOL_UNRESOLVED:
        problem = 1;
        break;
    default:
        break;
    }
    if (!problem)
        return;
    st->health_problem = 1;
    add_finding(st, KA_AXIS_IMPLEMENTATION, KA_FINDING_UNRESOLVED, "tool-health", p->file, h->time_ns,
                "tool health: %s (value %lld%s%s): evidence in this process may be incomplete",
                name ? name : "unknown", (long long)h->value, detail[0] ? ", " : "", detail);
}

static int index_trace(struct analysis_state *st, struct kat_trace *t, struct ka_proc *p,
                       struct timing_rec **timing, size_t *n_timing, struct event_rec **events,
                       size_t *n_events)
{
    const struct ka_contract *c = st->c;
    struct nvtx_open *open = NULL;
    size_t n_open = 0, cap_open = 0;
    uint32_t python_domain = 0;
    size_t cap_timing = 0, cap_events = 0;
    struct { uint64_t token; uint32_t tid; uint64_t t; } *starts = NULL;
    size_t n_starts = 0, cap_starts = 0;
    struct kat_record r;
    char err[512];
    int rc;
    while ((rc = kat_trace_next(t, &r, err, sizeof err)) == 1) {
        switch (r.type) {
        case KAT_REC_PROCESS_START: {
            const struct kat_process_start_rec *s = r.body;
            free(p->exe);
            p->exe = dup_trace_string(t, s->exe_string);
            const char *argv = kat_trace_string(t, s->argv_string);
            uint32_t len = kat_trace_string_length(t, s->argv_string);
            free(p->argv0);
            p->argv0 = strdup(argv);
            free(p->argv);
            p->argv = malloc((size_t)len + 1);
            if (p->argv) {
                for (uint32_t i = 0; i < len; i++)
                    p->argv[i] = argv[i] ? argv[i] : ' ';
                p->argv[len] = 0;
            }
            p->start_ns = s->time_ns;
            break;
        }
        case KAT_REC_PROCESS_END: {
            const struct kat_process_end_rec *e = r.body;
            p->end_known = 1;
            p->end_kind = e->kind;
            p->status = e->status;
            p->status_known = (e->flags & KAT_END_FLAG_STATUS_KNOWN) != 0;
            if (e->records_lost) {
                st->health_problem = 1;
                add_finding(st, KA_AXIS_IMPLEMENTATION, KA_FINDING_UNRESOLVED, "records-lost", p->file, e->time_ns,
                            "the trace writer lost %llu records (no space)", (unsigned long long)e->records_lost);
            }
            break;
        }
        case KAT_REC_CHILD_EXIT: {
            /* what a parent's wait() saw: the status of a child whose own trace may lack it */
            const struct kat_child_exit_rec *x = r.body;
            if (!GROW(st->child_exits, st->n_child_exits, st->cap_child_exits)) {
                st->child_exits[st->n_child_exits].pid = x->child_pid;
                st->child_exits[st->n_child_exits++].wait_status = x->wait_status;
            }
            break;
        }
        case KAT_REC_HEALTH:
            note_health(st, p, t, r.body);
            break;
        case KAT_REC_LIBRARY: {
            const struct kat_library_rec *l = r.body;
            if (!GROW(p->libs, p->n_libs, p->cap_libs)) {
                const char *so = kat_trace_string(t, l->soname_string);
                p->libs[p->n_libs].soname = strdup(so[0] ? so : base_name(kat_trace_string(t, l->path_string)));
                p->libs[p->n_libs].lo = l->digest_lo;
                p->libs[p->n_libs++].hi = l->digest_hi;
            }
            break;
        }
        case KAT_REC_MODULE: {
            const struct kat_module_rec *m = r.body;
            if (GROW(p->modules, p->n_modules, p->cap_modules))
                break;
            struct ka_module *km = &p->modules[p->n_modules++];
            km->time_ns = m->time_ns;
            km->tid = m->thread_id;
            km->loader = dup_trace_string(t, m->loader_string);
            km->digest_lo = m->digest_lo;
            km->digest_hi = m->digest_hi;
            km->size = m->size;
            km->loader_kind = loader_kind(c, km->loader);
            if (km->loader_kind == KA_LOADER_CANDIDATE || p->candidate_process)
                st->candidate_modules++;
            break;
        }
        case KAT_REC_API: {
            const struct kat_api_rec *ap = r.body;
            if (GROW(p->apis, p->n_apis, p->cap_apis))
                break;
            if (!ap->correlation_id)
                break;
            p->apis[p->n_apis++] = (struct ka_api){ .tid = ap->thread_id, .correlation_id = ap->correlation_id,
                                                    .start_ns = ap->start_ns, .end_ns = ap->end_ns };
            st->a->api_records++;
            break;
        }
        case KAT_REC_EXTERNAL_CORRELATION: {
            const struct kat_external_correlation_rec *x = r.body;
            if (x->external_kind != KAT_VENDOR_CORRELATION_KIND || x->external_id > UINT32_MAX)
                break;
            /* Stored as the call id; resolved to an index after the pass. */
            if (ka_u32map_put(&p->ext, x->correlation_id, (uint32_t)x->external_id) == 0 &&
                x->correlation_id > p->max_ext_correlation)
                p->max_ext_correlation = x->correlation_id;
            break;
        }
        case KAT_REC_VENDOR_CALL: {
            const struct kat_vendor_call_rec *v = r.body;
            if (GROW(p->vcalls, p->n_vcalls, p->cap_vcalls))
                break;
            struct ka_vcall *vc = &p->vcalls[p->n_vcalls++];
            memset(vc, 0, sizeof *vc);
            vc->rec = *v;
            vc->api = dup_trace_string(t, v->api_string);
            vc->caller = dup_trace_string(t, v->caller_string);
            vc->work = vendor_call_work(v, &vc->cls);
            if (vc->cls == KA_CLASS_OTHER && vc->api) {
                if (icontains(vc->api, "matmul") || icontains(vc->api, "gemm"))
                    vc->cls = KA_CLASS_GEMM;
                else if (icontains(vc->api, "convolution"))
                    vc->cls = KA_CLASS_CONV;
            }
            vc->caller_is_candidate = is_candidate_object(c, vc->caller);
            vc->caller_is_framework = is_framework_object(vc->caller);
            st->a->vendor_calls++;
            break;
        }
        case KAT_REC_NVTX: {
            const struct kat_nvtx_rec *nv = r.body;
            int python = python_domain && nv->domain_string == python_domain;
            if (!python && !python_domain && nv->domain_string &&
                !strcmp(kat_trace_string(t, nv->domain_string), "kaudit.python")) {
                python_domain = nv->domain_string;
                python = 1;
            }
            if (nv->kind == KAT_NVTX_PUSH || nv->kind == KAT_NVTX_START) {
                if (GROW(open, n_open, cap_open))
                    break;
                /* start/end ranges are process-wide: tid 0 */
                uint32_t tid = nv->kind == KAT_NVTX_PUSH ? nv->thread_id : 0;
                enum ka_party party = phase_party(c, kat_trace_string(t, nv->message_string), python);
                int32_t parent = -1;
                for (size_t i = n_open; i-- > 0;)
                    if (open[i].tid == tid && open[i].phase >= 0) {
                        parent = open[i].phase;
                        break;
                    }
                int32_t phase = party != KA_PARTY_UNKNOWN ? open_phase(p, tid, party, python, parent, nv->time_ns) : -1;
                open[n_open++] = (struct nvtx_open){ .tid = tid, .message = nv->message_string,
                                                     .domain = nv->domain_string, .phase = phase,
                                                     .start_ns = nv->time_ns };
            } else if (nv->kind == KAT_NVTX_POP || nv->kind == KAT_NVTX_END) {
                /* pop: the innermost open push of this thread and domain; end: the oldest open range */
                uint32_t tid = nv->kind == KAT_NVTX_POP ? nv->thread_id : 0;
                size_t found = n_open;
                if (nv->kind == KAT_NVTX_POP) {
                    for (size_t i = n_open; i-- > 0;)
                        if (open[i].tid == tid && open[i].domain == nv->domain_string) {
                            found = i;
                            break;
                        }
                } else {
                    for (size_t i = 0; i < n_open; i++)
                        if (open[i].tid == 0) {
                            found = i;
                            break;
                        }
                }
                if (found == n_open)
                    break;
                if (open[found].phase >= 0)
                    p->phases[open[found].phase].end_ns = nv->time_ns;
                memmove(&open[found], &open[found + 1], (n_open - found - 1) * sizeof *open);
                n_open--;
            } else if (nv->kind == KAT_NVTX_MARK) {
                note_mark(p, kat_trace_string(t, nv->message_string), python);
            }
            break;
        }
        case KAT_REC_TIMING_CALL: {
            const struct kat_timing_call_rec *tc = r.body;
            if (GROW(*timing, *n_timing, cap_timing))
                break;
            (*timing)[(*n_timing)++].r = *tc;
            if (tc->api == KAT_TIMING_EVENT_ELAPSED && tc->status == 0 &&
                !GROW(p->elapsed_ms, p->n_elapsed, p->cap_elapsed))
                p->elapsed_ms[p->n_elapsed++] = tc->elapsed_ms;
            break;
        }
        case KAT_REC_CUDA_EVENT: {
            const struct kat_cuda_event_rec *e = r.body;
            if (GROW(*events, *n_events, cap_events))
                break;
            (*events)[(*n_events)++] = (struct event_rec){ e->correlation_id, e->stream_id, e->device_timestamp_ns };
            break;
        }
        case KAT_REC_TIMING_SYMBOL: {
            const struct kat_timing_symbol_rec *s = r.body;
            if (GROW(p->symbols, p->n_symbols, p->cap_symbols))
                break;
            struct ka_symbol *ks = &p->symbols[p->n_symbols++];
            ks->symbol = dup_trace_string(t, s->symbol_string);
            ks->object = dup_trace_string(t, s->object_string);
            ks->address = s->address;
            ks->phase = s->phase;
            ks->time_ns = s->time_ns;
            break;
        }
        case KAT_REC_THREAD: {
            const struct kat_thread_rec *th = r.body;
            if (th->event == KAT_THREAD_CREATE) {
                if (!GROW(p->threads, p->n_threads, p->cap_threads))
                    p->threads[p->n_threads++] = (struct ka_thread_origin){
                        .tid = 0, .creator_tid = th->thread_id, .create_ns = th->time_ns, .token = th->token };
            } else if (th->event == KAT_THREAD_START) {
                if (!GROW(starts, n_starts, cap_starts)) {
                    starts[n_starts].token = th->token;
                    starts[n_starts].tid = th->thread_id;
                    starts[n_starts++].t = th->time_ns;
                }
            }
            break;
        }
        default:
            break;
        }
    }
    if (rc < 0) {
        p->read_error = 1;
        st->read_error = 1;
        add_finding(st, KA_AXIS_IMPLEMENTATION, KA_FINDING_UNRESOLVED, "trace-unreadable", p->file, 0,
                    "the trace is malformed past a point and was read up to it: %s", err);
    }
    p->complete = kat_trace_complete(t);
    /* Ranges still open at the end of the trace keep end UINT64_MAX: they last until then. */
    free(open);
    /* Pair thread creations with their starts. */
    for (size_t i = 0; i < p->n_threads; i++)
        for (size_t j = 0; j < n_starts; j++)
            if (starts[j].token == p->threads[i].token) {
                p->threads[i].tid = starts[j].tid;
                break;
            }
    free(starts);
    return 0;
}

/*
 * The party whose code was on tid's stack at t.  A candidate frame anywhere on
 * the stack makes the work the candidate's, whatever was called in between (a
 * candidate that routes its work through a reference method stays the
 * candidate); otherwise a reference frame makes it the reference's.
 * Ranges of one thread nest, so the phases containing t are the last one
 * started at or before t and its ancestors.
 */
static enum ka_party phase_at(const struct ka_proc *p, uint32_t tid, uint64_t t)
{
    int cand = 0, ref = 0;
    for (int pass = 0; pass < 2; pass++) {
        uint32_t want = pass == 0 ? tid : 0;
        size_t lo = 0, hi = p->n_phases;
        while (lo < hi) {
            size_t mid = (lo + hi) / 2;
            const struct ka_phase *ph = &p->phases[p->phase_order[mid]];
            if (ph->tid < want || (ph->tid == want && ph->start_ns <= t))
                lo = mid + 1;
            else
                hi = mid;
        }
        if (lo == 0 || p->phases[p->phase_order[lo - 1]].tid != want)
            continue;
        if (want == 0) {
            /* process-wide ranges need not nest: look at each */
            for (size_t i = lo; i-- > 0 && p->phases[p->phase_order[i]].tid == 0;) {
                const struct ka_phase *ph = &p->phases[p->phase_order[i]];
                if (ph->start_ns <= t && t <= ph->end_ns) {
                    cand |= ph->party == KA_PARTY_CANDIDATE;
                    ref |= ph->party == KA_PARTY_REFERENCE;
                }
            }
            continue;
        }
        for (int32_t j = (int32_t)p->phase_order[lo - 1], depth = 0; j >= 0 && depth < 4096;
             j = p->phases[j].parent, depth++) {
            const struct ka_phase *ph = &p->phases[j];
            if (ph->start_ns <= t && t <= ph->end_ns) {
                cand |= ph->party == KA_PARTY_CANDIDATE;
                ref |= ph->party == KA_PARTY_REFERENCE;
            }
        }
    }
    return cand ? KA_PARTY_CANDIDATE : ref ? KA_PARTY_REFERENCE : KA_PARTY_UNKNOWN;
}

/* The creation record of thread tid, NULL when it was not created by a traced pthread_create. */
static const struct ka_thread_origin *thread_origin(const struct ka_proc *p, uint32_t tid)
{
    for (size_t i = 0; i < p->n_threads; i++)
        if (p->threads[i].tid == tid && tid != 0)
            return &p->threads[i];
    return NULL;
}

/*
 * The party of work launched by thread tid at time t: its phase, or else the
 * phase its creator was in when it created the thread (a worker thread the
 * candidate started is the candidate's).  *via_thread says which.
 */
static enum ka_party party_of_launch(const struct ka_proc *p, uint32_t tid, uint64_t t, int *via_thread,
                                     uint64_t *thread_created_ns)
{
    *via_thread = 0;
    if (p->candidate_process)
        return KA_PARTY_CANDIDATE;
    enum ka_party party = phase_at(p, tid, t);
    if (party != KA_PARTY_UNKNOWN)
        return party;
    uint32_t cur = tid;
    for (int depth = 0; depth < 8; depth++) {
        const struct ka_thread_origin *o = thread_origin(p, cur);
        if (!o)
            break;
        party = phase_at(p, o->creator_tid, o->create_ns);
        if (party != KA_PARTY_UNKNOWN) {
            *via_thread = 1;
            *thread_created_ns = o->create_ns;
            return party;
        }
        cur = o->creator_tid;
    }
    return p->phase_marks ? KA_PARTY_HARNESS : KA_PARTY_UNKNOWN;
}

static int vcall_cmp(const void *x, const void *y)
{
    const struct ka_vcall *a = x, *b = y;
    return a->rec.call_id < b->rec.call_id ? -1 : a->rec.call_id > b->rec.call_id;
}

static long vcall_find(const struct ka_proc *p, uint64_t id)
{
    size_t lo = 0, hi = p->n_vcalls;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (p->vcalls[mid].rec.call_id < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < p->n_vcalls && p->vcalls[lo].rec.call_id == id ? (long)lo : -1;
}

/* correlation id -> API record: a direct table when the ids are dense (they are, from CUPTI). */
static void index_apis(struct ka_proc *p)
{
    uint32_t max = 0;
    for (size_t i = 0; i < p->n_apis; i++)
        if (p->apis[i].correlation_id > max)
            max = p->apis[i].correlation_id;
    if (p->n_apis && (uint64_t)max <= 4 * (uint64_t)p->n_apis + (1u << 20) && max < UINT32_MAX - 1) {
        p->api_direct = calloc((size_t)max + 1, sizeof *p->api_direct);
        if (p->api_direct) {
            p->api_direct_size = max + 1;
            for (size_t i = 0; i < p->n_apis; i++)
                p->api_direct[p->apis[i].correlation_id] = (uint32_t)i + 1;
            return;
        }
    }
    for (size_t i = 0; i < p->n_apis; i++)
        ka_u32map_put(&p->api_index, p->apis[i].correlation_id, (uint32_t)i);
}

static const struct ka_api *api_of(const struct ka_proc *p, uint32_t correlation_id)
{
    if (p->api_direct) {
        if (correlation_id < p->api_direct_size && p->api_direct[correlation_id])
            return &p->apis[p->api_direct[correlation_id] - 1];
        return NULL;
    }
    uint32_t idx;
    return ka_u32map_get(&p->api_index, correlation_id, &idx) ? &p->apis[idx] : NULL;
}

/* A cudaEventRecord call, for finding the last record of an event before a query. */
struct event_record {
    uint64_t event, enter_ns;
    const struct kat_timing_call_rec *rec;
};

static int event_record_cmp(const void *x, const void *y)
{
    const struct event_record *a = x, *b = y;
    if (a->event != b->event)
        return a->event < b->event ? -1 : 1;
    return a->enter_ns < b->enter_ns ? -1 : a->enter_ns > b->enter_ns;
}

static struct ka_window *window_at(struct ka_proc *p, uint64_t t);

/* The last successful record of event at or before t, in recs sorted by (event, time). */
static const struct kat_timing_call_rec *last_record_before(const struct event_record *recs, size_t n,
                                                            uint64_t event, uint64_t t)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (recs[mid].event < event || (recs[mid].event == event && recs[mid].enter_ns <= t))
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo > 0 && recs[lo - 1].event == event ? recs[lo - 1].rec : NULL;
}

/*
 * Traces from before the timing records carried stream ids: take an event
 * record's stream id from its CUDA_EVENT record, and a wait's or a stream
 * synchronization's from an event record made on the same stream handle.
 */
struct stream_handle_id {
    uint64_t handle;
    uint32_t id_plus_one;
};

static int stream_handle_cmp(const void *x, const void *y)
{
    const struct stream_handle_id *a = x, *b = y;
    return a->handle < b->handle ? -1 : a->handle > b->handle;
}

static void fill_stream_ids(struct timing_rec *timing, size_t n_timing, const struct event_rec *events,
                            const struct ka_u32map *event_by_corr)
{
    size_t n_known = 0;
    for (size_t i = 0; i < n_timing; i++) {
        struct kat_timing_call_rec *r = &timing[i].r;
        uint32_t k;
        if (r->api == KAT_TIMING_EVENT_RECORD && !r->stream_id_plus_one &&
            ka_u32map_get(event_by_corr, r->correlation_id, &k))
            r->stream_id_plus_one = events[k].stream_id + 1;
        n_known += r->api == KAT_TIMING_EVENT_RECORD && r->stream_id_plus_one;
    }
    struct stream_handle_id *known = n_known ? malloc(n_known * sizeof *known) : NULL;
    if (!known)
        return;
    size_t k = 0;
    for (size_t i = 0; i < n_timing && k < n_known; i++)
        if (timing[i].r.api == KAT_TIMING_EVENT_RECORD && timing[i].r.stream_id_plus_one)
            known[k++] = (struct stream_handle_id){ timing[i].r.stream, timing[i].r.stream_id_plus_one };
    qsort(known, n_known, sizeof *known, stream_handle_cmp);
    for (size_t i = 0; i < n_timing; i++) {
        struct kat_timing_call_rec *r = &timing[i].r;
        if ((r->api != KAT_TIMING_STREAM_WAIT_EVENT && r->api != KAT_TIMING_STREAM_SYNCHRONIZE) ||
            r->stream_id_plus_one)
            continue;
        struct stream_handle_id key = { r->stream, 0 };
        const struct stream_handle_id *hit = bsearch(&key, known, n_known, sizeof *known, stream_handle_cmp);
        if (hit)
            r->stream_id_plus_one = hit->id_plus_one;
    }
    free(known);
}

/* After pass 1: sort, resolve outer calls, parties, timed windows. */
static void finish_index(struct analysis_state *st, struct ka_proc *p, struct timing_rec *timing, size_t n_timing,
                         struct event_rec *events, size_t n_events)
{
    p->phase_order = malloc((p->n_phases ? p->n_phases : 1) * sizeof *p->phase_order);
    if (!p->phase_order)
        p->n_phases = 0;
    for (size_t i = 0; i < p->n_phases; i++)
        p->phase_order[i] = (uint32_t)i;
    index_apis(p);
    /* (qsort with an empty, NULL array is undefined: sort only what is there) */
    if (p->n_phases)
        qsort_r(p->phase_order, p->n_phases, sizeof *p->phase_order, phase_cmp, p->phases);
    if (p->n_modules)
        qsort(p->modules, p->n_modules, sizeof *p->modules, module_cmp);
    if (p->n_vcalls)
        qsort(p->vcalls, p->n_vcalls, sizeof *p->vcalls, vcall_cmp);
    for (size_t i = 0; i < p->n_phases; i++)
        if (p->phases[i].party == KA_PARTY_CANDIDATE && !GROW(st->cand_phases, st->n_cand_phases, st->cap_cand_phases)) {
            st->cand_phases[st->n_cand_phases].start = p->phases[i].start_ns;
            st->cand_phases[st->n_cand_phases++].end = p->phases[i].end_ns;
        }
    if (p->phase_marks)
        st->a->phases_seen = 1;

    for (size_t i = 0; i < p->n_vcalls; i++) {
        struct ka_vcall *vc = &p->vcalls[i];
        vc->outer = i;
        if (vc->rec.depth > 1) {
            for (size_t j = i; j-- > 0;) {
                const struct ka_vcall *o = &p->vcalls[j];
                if (o->rec.thread_id == vc->rec.thread_id && o->rec.depth == 1 && o->rec.enter_ns <= vc->rec.enter_ns &&
                    vc->rec.enter_ns <= o->rec.exit_ns) {
                    vc->outer = j;
                    break;
                }
            }
        }
    }
    for (size_t i = 0; i < p->n_vcalls; i++) {
        struct ka_vcall *vc = &p->vcalls[i];
        const struct ka_vcall *outer = &p->vcalls[vc->outer];
        if (p->candidate_process || outer->caller_is_candidate) {
            vc->party = KA_PARTY_CANDIDATE;
        } else {
            int via;
            uint64_t created;
            vc->party = party_of_launch(p, outer->rec.thread_id, outer->rec.enter_ns, &via, &created);
        }
        if (st->opt->on_vendor_call)
            st->opt->on_vendor_call(st->opt->sink_arg, p->pid, vc->rec.thread_id, vc->api, vc->rec.call_id,
                                    vc->rec.enter_ns, vc->rec.exit_ns, vc->party);
    }
    if (st->opt->on_phase)
        for (size_t i = 0; i < p->n_phases; i++)
            st->opt->on_phase(st->opt->sink_arg, p->pid, p->phases[i].tid, ka_party_name(p->phases[i].party),
                              p->phases[i].start_ns, p->phases[i].end_ns);

    /*
     * Timed windows: every successful elapsed-time query names a start and an
     * end event; each was last recorded before the query.  The record calls
     * join their CUDA_EVENT activity records by correlation id, which give the
     * stream and the GPU timestamp.
     */
    /* Event records sorted by (event, time), CUDA_EVENT records by correlation id:
       a session that times every iteration has as many windows as iterations. */
    struct event_record *recs = NULL;
    size_t n_recs = 0;
    for (size_t i = 0; i < n_timing; i++)
        if (timing[i].r.api == KAT_TIMING_EVENT_RECORD && timing[i].r.status == 0)
            n_recs++;
    recs = n_recs ? malloc(n_recs * sizeof *recs) : NULL;
    if (!recs)
        n_recs = 0;
    for (size_t i = 0, k = 0; i < n_timing && k < n_recs; i++)
        if (timing[i].r.api == KAT_TIMING_EVENT_RECORD && timing[i].r.status == 0)
            recs[k++] = (struct event_record){ timing[i].r.event, timing[i].r.enter_ns, &timing[i].r };
    if (n_recs)
        qsort(recs, n_recs, sizeof *recs, event_record_cmp);
    struct ka_u32map event_by_corr = { 0 };
    for (size_t k = 0; k < n_events; k++)
        ka_u32map_put(&event_by_corr, events[k].correlation_id, (uint32_t)k);
    fill_stream_ids(timing, n_timing, events, &event_by_corr);

    for (size_t i = 0; i < n_timing; i++) {
        const struct kat_timing_call_rec *q = &timing[i].r;
        if (q->api != KAT_TIMING_EVENT_ELAPSED || q->status != 0)
            continue;
        const struct kat_timing_call_rec *rec_s = last_record_before(recs, n_recs, q->event, q->enter_ns);
        const struct kat_timing_call_rec *rec_e = last_record_before(recs, n_recs, q->event2, q->enter_ns);
        if (!rec_s || !rec_e || rec_e->enter_ns < rec_s->enter_ns)
            continue;
        if (GROW(p->windows, p->n_windows, p->cap_windows))
            continue;
        struct ka_window *w = &p->windows[p->n_windows++];
        memset(w, 0, sizeof *w);
        w->host_start_ns = rec_s->enter_ns;
        w->host_end_ns = rec_e->enter_ns;
        w->start_exit_ns = rec_s->exit_ns;
        w->end_exit_ns = rec_e->exit_ns;
        w->end_event = rec_e->event;
        w->elapsed_ms = q->elapsed_ms;
        /* The record calls' own stream ids, then CUPTI's event records (exact GPU times). */
        w->start_stream = rec_s->stream_id_plus_one ? rec_s->stream_id_plus_one - 1 : UINT32_MAX;
        w->end_stream = rec_e->stream_id_plus_one ? rec_e->stream_id_plus_one - 1 : UINT32_MAX;
        int timestamps = !st->opt->event_times_from_stream_order;
        uint32_t k;
        if (ka_u32map_get(&event_by_corr, rec_s->correlation_id, &k)) {
            w->gpu_start_ns = timestamps ? events[k].device_ts : 0;
            w->start_stream = events[k].stream_id;
        }
        if (ka_u32map_get(&event_by_corr, rec_e->correlation_id, &k)) {
            w->gpu_end_ns = timestamps ? events[k].device_ts : 0;
            w->end_stream = events[k].stream_id;
        }
    }
    free(recs);
    ka_u32map_free(&event_by_corr);
    if (p->n_windows)
        qsort(p->windows, p->n_windows, sizeof *p->windows, window_cmp);
    /* The same pair of records queried twice is one window. */
    size_t kept = 0;
    for (size_t w = 0; w < p->n_windows; w++) {
        int dup = 0;
        for (size_t v = kept; v-- > 0 && p->windows[v].host_start_ns == p->windows[w].host_start_ns;)
            if (p->windows[v].host_end_ns == p->windows[w].host_end_ns)
                dup = 1;
        if (!dup)
            p->windows[kept++] = p->windows[w];
    }
    p->n_windows = kept;
    for (size_t w = 0; w < p->n_windows; w++) {
        p->windows[w].index = (unsigned)w + 1;
        if (st->opt->on_window)
            st->opt->on_window(st->opt->sink_arg, p->pid, (unsigned)w + 1, p->windows[w].end_stream,
                               p->windows[w].gpu_start_ns, p->windows[w].gpu_end_ns, p->windows[w].elapsed_ms);
    }
    st->a->timed_windows += (unsigned)p->n_windows;
    /* Threads created inside a timed window: recorded, never gating. */
    for (size_t i = 0; i < p->n_threads; i++) {
        const struct ka_window *w = window_at(p, p->threads[i].create_ns);
        if (w)
            add_finding(st, KA_AXIS_MEASUREMENT, KA_FINDING_SIGNAL, "thread-in-timed-window", p->file,
                        p->threads[i].create_ns, "thread %u created by thread %u inside timed window #%u",
                        p->threads[i].tid, p->threads[i].creator_tid, w->index);
    }
}

/*
 * Stop events without a GPU timestamp.  The default recording has no
 * CUDA_EVENT activity (it slowed every launch, preload/cupti_backend.c), so
 * the GPU time at which a stop event completed is bounded from stream order
 * instead, with the stream ids the record calls carry:
 *   at least  the GPU end of the last operation launched on the stop
 *             event's stream before the record call (streams run in order),
 *             of the last one on a stream it was made to wait on inside the
 *             window, the record call itself (host clock, less a margin), and
 *             the start event's lower bound plus the elapsed time;
 *   at most   the GPU start of the next operation launched on that stream
 *             after the record returned, the start event's upper bound (the
 *             first operation after it) plus the elapsed time, and the
 *             return of a synchronization that waited for it (host clock,
 *             which CUPTI's timestamps share).
 * The measurement rule then convicts only past the upper bound and calls the
 * stretch between the bounds unresolved.
 */
/*
 * The bounds need, per window, a few facts of the form "the last operation
 * on stream S whose launch call returned by T" and "the first operation on
 * S launched at or after T".  They are asked as queries and answered in one
 * pass over the kernel, copy and memset records, in memory proportional to
 * the queries, not to the kernels: an operation is offered to the one query
 * nearest to it in time, and a sweep over each stream's queries then hands
 * the best answer on to the later (or earlier) ones.
 */
enum bound_kind { LAST_ENDED_BY, FIRST_LAUNCHED_FROM };

struct bound_query {
    uint32_t stream;
    enum bound_kind kind;
    uint64_t t;
    int found;
    uint64_t key;       /* the chosen operation's launch time */
    uint64_t value;     /* its GPU end (LAST_ENDED_BY) or start (FIRST_LAUNCHED_FROM) */
};

struct bound_queries {
    struct bound_query *q;
    size_t n, cap;
    size_t *sorted;     /* indices into q by (kind, stream, t) */
};

static size_t ask(struct bound_queries *b, enum bound_kind kind, uint32_t stream, uint64_t t)
{
    if (GROW(b->q, b->n, b->cap))
        return SIZE_MAX;
    b->q[b->n] = (struct bound_query){ .stream = stream, .kind = kind, .t = t };
    return b->n++;
}

static int query_cmp(const void *x, const void *y, void *arg)
{
    const struct bound_query *q = arg, *a = &q[*(const size_t *)x], *b = &q[*(const size_t *)y];
    if (a->kind != b->kind)
        return a->kind < b->kind ? -1 : 1;
    if (a->stream != b->stream)
        return a->stream < b->stream ? -1 : 1;
    return a->t < b->t ? -1 : a->t > b->t;
}

/* Position in sorted of the first query (kind, stream) with t >= time (or > time when strict). */
static size_t query_lower(const struct bound_queries *b, enum bound_kind kind, uint32_t stream, uint64_t time,
                          int strict)
{
    size_t lo = 0, hi = b->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const struct bound_query *m = &b->q[b->sorted[mid]];
        int before = m->kind != kind ? m->kind < kind
                   : m->stream != stream ? m->stream < stream
                   : strict ? m->t <= time : m->t < time;
        if (before)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static int query_at(const struct bound_queries *b, size_t pos, enum bound_kind kind, uint32_t stream)
{
    return pos < b->n && b->q[b->sorted[pos]].kind == kind && b->q[b->sorted[pos]].stream == stream;
}

static void offer(struct bound_queries *b, uint32_t stream, uint64_t api_start, uint64_t api_end, uint64_t gpu_start,
                  uint64_t gpu_end)
{
    /* The first LAST_ENDED_BY query its launch call returned by: the latest launch wins. */
    size_t pos = query_lower(b, LAST_ENDED_BY, stream, api_end, 0);
    if (query_at(b, pos, LAST_ENDED_BY, stream)) {
        struct bound_query *q = &b->q[b->sorted[pos]];
        if (!q->found || api_start > q->key)
            *q = (struct bound_query){ q->stream, q->kind, q->t, 1, api_start, gpu_end };
    }
    /* The last FIRST_LAUNCHED_FROM query at or before its launch: the earliest launch wins. */
    pos = query_lower(b, FIRST_LAUNCHED_FROM, stream, api_start, 1);
    if (pos > 0 && query_at(b, pos - 1, FIRST_LAUNCHED_FROM, stream)) {
        struct bound_query *q = &b->q[b->sorted[pos - 1]];
        if (!q->found || api_start < q->key)
            *q = (struct bound_query){ q->stream, q->kind, q->t, 1, api_start, gpu_start };
    }
}

/* Hand each answer on: a later LAST_ENDED_BY query may take an earlier one's, an
 * earlier FIRST_LAUNCHED_FROM query a later one's. */
static void sweep(struct bound_queries *b)
{
    for (size_t i = 1; i < b->n; i++) {
        struct bound_query *prev = &b->q[b->sorted[i - 1]], *q = &b->q[b->sorted[i]];
        if (q->kind == LAST_ENDED_BY && prev->kind == LAST_ENDED_BY && prev->stream == q->stream && prev->found &&
            (!q->found || prev->key > q->key))
            q->found = 1, q->key = prev->key, q->value = prev->value;
    }
    for (size_t i = b->n; i-- > 1;) {
        struct bound_query *q = &b->q[b->sorted[i - 1]], *next = &b->q[b->sorted[i]];
        if (q->kind == FIRST_LAUNCHED_FROM && next->kind == FIRST_LAUNCHED_FROM && next->stream == q->stream &&
            next->found && (!q->found || next->key < q->key))
            q->found = 1, q->key = next->key, q->value = next->value;
    }
}

/* How many timing calls after a stop record are searched for a synchronization,
 * and inside a window for joins: bounded, so that no trace makes this quadratic. */
#define SYNC_LOOKAHEAD 64
#define JOIN_LOOKAHEAD 4096
/* A synchronization's return is a host-clock time, kernel times are CUPTI's GPU
 * timestamps converted to that clock: the bound it gives is widened by this
 * much, so a conversion error never turns into a conviction. */
#define HOST_CLOCK_MARGIN_NS 20000u

static int timing_order_cmp(const void *x, const void *y, void *arg)
{
    const struct timing_rec *timing = arg;
    uint64_t a = timing[*(const size_t *)x].r.enter_ns, b = timing[*(const size_t *)y].r.enter_ns;
    return a < b ? -1 : a > b;
}

/* First position in order (timing calls by enter time) at or after t. */
static size_t first_timing_from(const struct timing_rec *timing, const size_t *order, size_t n, uint64_t t)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (timing[order[mid]].r.enter_ns < t)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* The queries of one window (SIZE_MAX: not asked). */
struct window_queries {
    size_t end_last, end_first, start_last, start_first;
    size_t joins_from, joins_to;        /* a range of join_queries */
};

static uint64_t answer(const struct bound_queries *b, size_t i, uint64_t none)
{
    return i != SIZE_MAX && b->q[i].found ? b->q[i].value : none;
}

static void bound_stop_events(struct kat_trace *t, struct ka_proc *p, const struct timing_rec *timing,
                              size_t n_timing)
{
    size_t n_bounded = 0;
    for (size_t w = 0; w < p->n_windows; w++)
        n_bounded += !p->windows[w].gpu_end_ns && p->windows[w].end_stream != UINT32_MAX;
    if (!n_bounded)
        return;
    /* Timing calls by host time, and event records by (event, time). */
    size_t *order = malloc((n_timing ? n_timing : 1) * sizeof *order);
    struct event_record *recs = malloc((n_timing ? n_timing : 1) * sizeof *recs);
    struct window_queries *wq = calloc(p->n_windows, sizeof *wq);
    size_t *joins = NULL, n_joins = 0, cap_joins = 0;
    struct bound_queries b = { 0 };
    size_t n_recs = 0;
    if (!order || !recs || !wq)
        goto out;
    for (size_t i = 0; i < n_timing; i++) {
        order[i] = i;
        if (timing[i].r.api == KAT_TIMING_EVENT_RECORD && timing[i].r.status == 0)
            recs[n_recs++] = (struct event_record){ timing[i].r.event, timing[i].r.enter_ns, &timing[i].r };
    }
    qsort_r(order, n_timing, sizeof *order, timing_order_cmp, (void *)timing);
    if (n_recs)
        qsort(recs, n_recs, sizeof *recs, event_record_cmp);

    for (size_t w = 0; w < p->n_windows; w++) {
        const struct ka_window *win = &p->windows[w];
        struct window_queries *q = &wq[w];
        *q = (struct window_queries){ SIZE_MAX, SIZE_MAX, SIZE_MAX, SIZE_MAX, n_joins, n_joins };
        if (win->gpu_end_ns || win->end_stream == UINT32_MAX)
            continue;
        q->end_last = ask(&b, LAST_ENDED_BY, win->end_stream, win->host_end_ns);
        q->end_first = ask(&b, FIRST_LAUNCHED_FROM, win->end_stream, win->end_exit_ns);
        if (win->start_stream != UINT32_MAX) {
            q->start_last = ask(&b, LAST_ENDED_BY, win->start_stream, win->host_start_ns);
            q->start_first = ask(&b, FIRST_LAUNCHED_FROM, win->start_stream, win->start_exit_ns);
        }
        /* Joins inside the window: what the waited event followed ends before the stop event.
         * (At most JOIN_LOOKAHEAD calls: a join left unseen only lowers the lower bound.) */
        size_t scanned = 0;
        for (size_t o = first_timing_from(timing, order, n_timing, win->host_start_ns);
             o < n_timing && scanned < JOIN_LOOKAHEAD && timing[order[o]].r.enter_ns < win->host_end_ns;
             o++, scanned++) {
            const struct kat_timing_call_rec *c = &timing[order[o]].r;
            if (c->status != 0 || c->api != KAT_TIMING_STREAM_WAIT_EVENT ||
                c->stream_id_plus_one != win->end_stream + 1)
                continue;
            const struct kat_timing_call_rec *rec = last_record_before(recs, n_recs, c->event, c->enter_ns);
            if (rec && rec->stream_id_plus_one && !GROW(joins, n_joins, cap_joins))
                joins[n_joins++] = ask(&b, LAST_ENDED_BY, rec->stream_id_plus_one - 1, rec->enter_ns);
        }
        q->joins_to = n_joins;
    }
    b.sorted = malloc((b.n ? b.n : 1) * sizeof *b.sorted);
    if (!b.sorted)
        goto out;
    for (size_t i = 0; i < b.n; i++)
        b.sorted[i] = i;
    qsort_r(b.sorted, b.n, sizeof *b.sorted, query_cmp, b.q);

    struct kat_record r;
    kat_trace_rewind(t);
    while (kat_trace_next(t, &r, NULL, 0) == 1) {
        uint32_t stream, corr;
        uint64_t start, end;
        if (r.type == KAT_REC_KERNEL) {
            const struct kat_kernel_rec *k = r.body;
            stream = k->stream_id, corr = k->correlation_id, start = k->start_ns, end = k->end_ns;
        } else if (r.type == KAT_REC_MEMCPY) {
            const struct kat_memcpy_rec *m = r.body;
            stream = m->stream_id, corr = m->correlation_id, start = m->start_ns, end = m->end_ns;
        } else if (r.type == KAT_REC_MEMSET) {
            const struct kat_memset_rec *m = r.body;
            stream = m->stream_id, corr = m->correlation_id, start = m->start_ns, end = m->end_ns;
        } else {
            continue;
        }
        const struct ka_api *api = api_of(p, corr);
        if (api)
            offer(&b, stream, api->start_ns, api->end_ns, start, end);
    }
    sweep(&b);

    for (size_t w = 0; w < p->n_windows; w++) {
        struct ka_window *win = &p->windows[w];
        const struct window_queries *q = &wq[w];
        if (win->gpu_end_ns || win->end_stream == UINT32_MAX)
            continue;
        /* A hostile trace may carry any float: beyond a day (or NaN) the elapsed time bounds nothing. */
        double elapsed_ns = (double)win->elapsed_ms * 1e6;
        int elapsed_ok = elapsed_ns >= 0 && elapsed_ns < 8.64e13;
        uint64_t elapsed = elapsed_ok ? (uint64_t)elapsed_ns : 0;
        uint64_t lo = answer(&b, q->end_last, 0);
        uint64_t hi = answer(&b, q->end_first, UINT64_MAX);
        uint64_t start_lo = answer(&b, q->start_last, 0), start_hi = answer(&b, q->start_first, UINT64_MAX);
        if (elapsed_ok && start_lo && start_lo <= UINT64_MAX - elapsed && start_lo + elapsed > lo)
            lo = start_lo + elapsed;
        if (elapsed_ok && start_hi <= UINT64_MAX - elapsed && start_hi + elapsed < hi)
            hi = start_hi + elapsed;
        /* No event completes before its record call was made (host clock, so with the margin). */
        uint64_t end_called = win->host_end_ns > HOST_CLOCK_MARGIN_NS ? win->host_end_ns - HOST_CLOCK_MARGIN_NS : 0;
        uint64_t start_called = win->host_start_ns > HOST_CLOCK_MARGIN_NS ? win->host_start_ns - HOST_CLOCK_MARGIN_NS : 0;
        if (end_called > lo)
            lo = end_called;
        if (elapsed_ok && start_called <= UINT64_MAX - elapsed && start_called + elapsed > lo)
            lo = start_called + elapsed;
        for (size_t j = q->joins_from; j < q->joins_to; j++) {
            uint64_t joined = answer(&b, joins[j], 0);
            if (joined > lo)
                lo = joined;
        }
        /* A synchronization that returned after waiting for the stop event.  Harnesses
         * synchronize right after recording it; the first few calls after it are looked at. */
        size_t looked = 0;
        for (size_t o = first_timing_from(timing, order, n_timing, win->end_exit_ns);
             o < n_timing && looked < SYNC_LOOKAHEAD && timing[order[o]].r.enter_ns < hi; o++, looked++) {
            const struct kat_timing_call_rec *c = &timing[order[o]].r;
            if (c->status == 0 && c->exit_ns <= UINT64_MAX - HOST_CLOCK_MARGIN_NS &&
                c->exit_ns + HOST_CLOCK_MARGIN_NS < hi &&
                (c->api == KAT_TIMING_DEVICE_SYNCHRONIZE ||
                 (c->api == KAT_TIMING_EVENT_SYNCHRONIZE && c->event == win->end_event) ||
                 (c->api == KAT_TIMING_STREAM_SYNCHRONIZE && c->stream_id_plus_one == win->end_stream + 1)))
                hi = c->exit_ns + HOST_CLOCK_MARGIN_NS;
        }
        /* Facts that contradict each other (clocks far apart, or a forged trace) bound nothing. */
        win->end_contradictory = hi != UINT64_MAX && lo > hi;
        win->end_bounded = !win->end_contradictory;
        win->end_lo_ns = lo;
        win->end_hi_ns = hi;
    }
out:
    free(b.q);
    free(b.sorted);
    free(joins);
    free(wq);
    free(recs);
    free(order);
}

/* Did work that ended at END end after T, by more than the 1 us the rule allows?
 * (Written so that no value of a hostile trace wraps around.) */
static int ended_after(uint64_t end, uint64_t t)
{
    return end > t && end - t > 1000;
}

/* The window a launch at host time t belongs to (its start record <= t < its end record). */
static struct ka_window *window_at(struct ka_proc *p, uint64_t t)
{
    size_t lo = 0, hi = p->n_windows;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (p->windows[mid].host_start_ns <= t)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (size_t i = lo, looked = 0; i-- > 0 && looked < 8; looked++)
        if (p->windows[i].host_start_ns <= t && t < p->windows[i].host_end_ns)
            return &p->windows[i];
    return NULL;
}

/* The module loaded on tid while the launch call [s, e] ran (lazy loading loads at first launch). */
static const struct ka_module *module_loaded_during(const struct ka_proc *p, uint32_t tid, uint64_t s, uint64_t e)
{
    size_t lo = 0, hi = p->n_modules;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (p->modules[mid].time_ns < s)
            lo = mid + 1;
        else
            hi = mid;
    }
    const struct ka_module *found = NULL;
    for (size_t i = lo; i < p->n_modules && p->modules[i].time_ns <= e; i++)
        if (p->modules[i].tid == tid)
            found = &p->modules[i]; /* the last one: the module of the function itself */
    return found;
}

/* ---- pass 2: stream the kernels --------------------------------------- */

/*
 * What a kernel's name says, worked out once per name (name string id) and
 * cached: names repeat millions of times, and the classification reads the
 * whole name several times.
 */
struct name_info {
    int32_t module;             /* the module its launch loaded (index), -1 none known yet */
    int8_t cls;                 /* enum ka_class from the name */
    uint8_t framework;          /* PyTorch's own code by its name */
    uint8_t low_precision;
    uint8_t name_match;         /* the inventory knows the name */
};

static int library_pinned(const struct analysis_state *st, const struct ka_proc *p, uint32_t library)
{
    const struct kinv_inventory *inv = st->opt->inventory;
    if (!inv)
        return -1;
    const char *prefix = library == KAT_LIB_CUBLAS ? "libcublas.so" : library == KAT_LIB_CUBLASLT ? "libcublasLt.so"
                                                                                                  : "libcudnn.so";
    for (size_t i = 0; i < p->n_libs; i++) {
        if (strncmp(p->libs[i].soname, prefix, strlen(prefix)))
            continue;
        uint8_t digest[16];
        kinv_digest_from_halves(p->libs[i].lo, p->libs[i].hi, digest);
        for (size_t j = 0; j < inv->n_libs; j++)
            if (!memcmp(inv->libs[j].digest, digest, 16))
                return 1;
        return 0;
    }
    return 0;
}

static void add_item(struct analysis_state *st, int cls, double work, int kind, const char *process, uint64_t t,
                     const char *fmt, ...) __attribute__((format(printf, 7, 8)));
static void add_item(struct analysis_state *st, int cls, double work, int kind, const char *process, uint64_t t,
                     const char *fmt, ...)
{
    if (GROW(st->items, st->n_items, st->cap_items))
        return;
    struct work_item *it = &st->items[st->n_items++];
    memset(it, 0, sizeof *it);
    it->cls = cls;
    it->work = work;
    it->kind = kind;
    it->process = process ? strdup(process) : NULL;
    it->time_ns = t;
    va_list ap;
    va_start(ap, fmt);
    if (vasprintf(&it->what, fmt, ap) < 0)
        it->what = NULL;
    va_end(ap);
}

/* The element proxy of a framework kernel's work: threads launched (grid x block). */
static double threads_launched(const struct kat_kernel_rec *k)
{
    double threads = (double)k->grid[0] * k->grid[1] * k->grid[2] * (double)k->block[0] * k->block[1] * k->block[2];
    return threads > 0 ? threads : 0;
}

static void stream_kernels(struct analysis_state *st, struct kat_trace *t, struct ka_proc *p)
{
    struct ka_analysis *a = st->a;
    const struct ka_contract *c = st->c;
    const struct kinv_inventory *inv = st->opt->inventory;
    struct name_info *names = NULL;
    size_t n_names = 0, cap_names = 0;
    struct ka_u32map name_index = { 0 };
    int fp32_task = c->timing_dtype && (!strcmp(c->timing_dtype, "float32") || !strcmp(c->timing_dtype, "fp32"));
    struct kat_record r;
    int rc;
    kat_trace_rewind(t);
    while ((rc = kat_trace_next(t, &r, NULL, 0)) == 1) {
        if (r.type != KAT_REC_KERNEL)
            continue;
        const struct kat_kernel_rec *k = r.body;
        const char *name = kat_trace_string(t, k->name_string);
        a->kernels++;
        p->kernels++;
        const struct ka_api *api = api_of(p, k->correlation_id);
        uint32_t call_id = 0;
        const struct ka_vcall *vc = NULL;
        if (k->correlation_id <= p->max_ext_correlation && ka_u32map_get(&p->ext, k->correlation_id, &call_id)) {
            long idx = vcall_find(p, call_id);
            if (idx >= 0) {
                p->vcalls[idx].kernels++;
                vc = &p->vcalls[p->vcalls[idx].outer];
            }
        }
        /* Party */
        int via_thread = 0;
        uint64_t thread_created = 0;
        enum ka_party party;
        uint64_t launch_ns;
        if (vc) {
            party = vc->party;
            launch_ns = api ? api->start_ns : vc->rec.enter_ns;
        } else if (api) {
            party = party_of_launch(p, api->tid, api->start_ns, &via_thread, &thread_created);
            launch_ns = api->start_ns;
        } else {
            party = p->candidate_process ? KA_PARTY_CANDIDATE : KA_PARTY_UNKNOWN;
            launch_ns = 0;
            st->kernels_without_api++;
        }
        /* What the name says (cached per name) */
        uint32_t slot;
        struct name_info *ni = NULL;
        if (ka_u32map_get(&name_index, k->name_string, &slot)) {
            ni = &names[slot];
        } else if (!GROW(names, n_names, cap_names)) {
            ni = &names[n_names];
            ni->module = -1;
            ni->cls = (int8_t)class_of_kernel_name(name);
            ni->framework = (uint8_t)is_framework_kernel_name(name);
            ni->low_precision = (uint8_t)is_low_precision_name(name);
            ni->name_match = 0;
            if (inv) {
                struct kinv_match m;
                kinv_match(inv, name, strlen(name), &m);
                ni->name_match = m.strength != KINV_MATCH_NONE;
            }
            if (ka_u32map_put(&name_index, k->name_string, (uint32_t)n_names) == 0)
                n_names++;
            else
                ni = NULL;
        }
        /* Module of the kernel's function, when its (first) launch loaded it */
        const struct ka_module *mod = NULL;
        if (ni && ni->module >= 0)
            mod = &p->modules[ni->module];
        if (!mod && api && p->n_modules) {
            mod = module_loaded_during(p, api->tid, api->start_ns, api->end_ns);
            if (mod && ni)
                ni->module = (int32_t)(mod - p->modules);
        }
        /* Origin (docs/inventory.md, "Name collisions", extended to framework code) */
        enum ka_origin origin;
        int name_match = ni ? ni->name_match : 0, impersonation = 0, digest_vendor = 0;
        if (inv && mod) {
            uint8_t d[16];
            const struct kinv_module *first;
            kinv_digest_from_halves(mod->digest_lo, mod->digest_hi, d);
            digest_vendor = kinv_lookup_module(inv, d, &first) > 0;
        }
        int cls = vc ? vc->cls : ni ? ni->cls : class_of_kernel_name(name);
        if (vc) {
            origin = KA_ORIGIN_VENDOR;
        } else if (digest_vendor || (mod && mod->loader_kind == KA_LOADER_VENDOR)) {
            origin = KA_ORIGIN_VENDOR;
        } else if (mod && mod->loader_kind == KA_LOADER_CANDIDATE) {
            origin = KA_ORIGIN_CANDIDATE;
            impersonation = name_match;
            /* A function of a module the candidate's object loaded is the candidate's launch. */
            if (party == KA_PARTY_UNKNOWN || party == KA_PARTY_HARNESS)
                party = KA_PARTY_CANDIDATE;
        } else if ((mod && mod->loader_kind == KA_LOADER_FRAMEWORK) || (ni ? ni->framework : is_framework_kernel_name(name))) {
            origin = KA_ORIGIN_FRAMEWORK;
        } else if (party == KA_PARTY_CANDIDATE) {
            origin = KA_ORIGIN_CANDIDATE;
            impersonation = name_match;
        } else {
            origin = KA_ORIGIN_UNATTRIBUTED;
        }
        a->kernels_by[origin][party]++;
        uint64_t dur = k->end_ns > k->start_ns ? k->end_ns - k->start_ns : 0;
        a->gpu_ns_by[origin][party] += dur;
        if (k->graph_id)
            p->graph_kernels++;

        if (party == KA_PARTY_CANDIDATE) {
            st->candidate_kernels_any++;
            if (origin == KA_ORIGIN_CANDIDATE)
                st->candidate_kernels_own++;
            if (impersonation)
                add_finding(st, KA_AXIS_IMPLEMENTATION, KA_FINDING_SIGNAL, "vendor-named-candidate-kernel", p->file,
                            k->start_ns,
                            "candidate kernel '%.160s' carries a vendor kernel's name but its module is the "
                            "candidate's: counted as candidate work, flagged",
                            name);
            if (origin == KA_ORIGIN_FRAMEWORK) {
                double threads = threads_launched(k);
                st->fw_work[cls] += threads;
                st->fw_count[cls]++;
                if (!st->fw_example[cls]) {
                    st->fw_example[cls] = strdup(name);
                    st->fw_process[cls] = strdup(p->file);
                }
            } else if (origin == KA_ORIGIN_VENDOR && !vc) {
                /* summed per class, like framework kernels: one finding, not one per launch */
                if (!st->nm_count[cls]++) {
                    if (asprintf(&st->nm_example[cls], "'%.160s' (module %s)", name,
                                 digest_vendor ? "digest is a vendor cubin" : "loaded by a vendor library") < 0)
                        st->nm_example[cls] = NULL;
                    st->nm_process[cls] = strdup(p->file);
                    st->nm_time[cls] = k->start_ns;
                }
            }
            if (fp32_task && (ni ? ni->low_precision : is_low_precision_name(name))) {
                p->low_precision_kernels++;
                if (!p->low_precision_example)
                    p->low_precision_example = strdup(name);
            }
        } else if (party == KA_PARTY_UNKNOWN && origin == KA_ORIGIN_FRAMEWORK) {
            st->unk_fw_work[cls] += threads_launched(k);
            st->unk_fw_count[cls]++;
        } else if (party == KA_PARTY_REFERENCE && origin == KA_ORIGIN_FRAMEWORK) {
            a->reference_work.amount[cls] += threads_launched(k);
            a->reference_work.items[cls]++;
        }

        /*
         * Measurement: work of a timed iteration must finish before its stop
         * event.  Work launched from a thread created inside a window belongs
         * to that window, whenever the thread launched it.
         */
        struct ka_window *w = NULL;
        if (api && !via_thread) {
            const struct ka_thread_origin *o = thread_origin(p, api->tid);
            if (o && window_at(p, o->create_ns)) {
                via_thread = 1;
                thread_created = o->create_ns;
            }
        }
        uint64_t belongs_ns = via_thread ? thread_created : launch_ns;
        if (belongs_ns)
            w = window_at(p, belongs_ns);
        /* The stop event's GPU time: exact, or (no CUDA_EVENT record) its upper bound. */
        uint64_t stop_ns = w ? (w->gpu_end_ns ? w->gpu_end_ns
                                : w->end_bounded && w->end_hi_ns != UINT64_MAX ? w->end_hi_ns : 0)
                             : 0;
        if (w && (party == KA_PARTY_CANDIDATE || party == KA_PARTY_UNKNOWN) && !w->gpu_end_ns && !w->end_bounded) {
            /* Neither an event timestamp nor a stream id for the stop event: nothing to check against. */
            st->stop_time_ambiguous++;
            if (!w->ambiguous_reported++)
                add_finding(st, KA_AXIS_MEASUREMENT, KA_FINDING_UNRESOLVED, "stop-event-time-unknown", p->file,
                            k->start_ns,
                            "timed window #%u: the stop event's GPU time is unknown (%s), so whether kernel "
                            "'%.120s' finished inside the window cannot be checked",
                            w->index,
                            w->end_contradictory ? "its stream-order bounds contradict each other"
                                                 : "no CUDA_EVENT record, and its record call carries no stream id",
                            name);
        } else if (w && (party == KA_PARTY_CANDIDATE || party == KA_PARTY_UNKNOWN) && !w->gpu_end_ns &&
            w->end_bounded && !(stop_ns && ended_after(k->end_ns, stop_ns)) && ended_after(k->end_ns, w->end_lo_ns)) {
            /* Between the bounds: it may have ended after the stop event, or not. */
            st->stop_time_ambiguous++;
            if (!w->ambiguous_reported++)
                add_finding(st, KA_AXIS_MEASUREMENT, KA_FINDING_UNRESOLVED, "stop-event-time-bounded", p->file,
                            k->start_ns,
                            "kernel '%.120s' (stream %u) of timed window #%u ended %s; the stop event's GPU "
                            "time is known only from stream order (no CUDA_EVENT records), so whether the "
                            "kernel finished inside the timed window is unknown; rerun with "
                            "KAUDIT_EXACT_EVENT_TIMES=1 for exact event times",
                            name, k->stream_id, w->index,
                            w->end_lo_ns ? "after the earliest time the stop event can have completed"
                                         : "while nothing bounds the stop event's completion from below");
        } else if (w && (party == KA_PARTY_CANDIDATE || party == KA_PARTY_UNKNOWN)) {
            if (stop_ns && ended_after(k->end_ns, stop_ns)) {
                if (party == KA_PARTY_CANDIDATE) {
                    const char *how = via_thread ? "launched from a thread the candidate created in the window"
                                      : (w->end_stream != UINT32_MAX && k->stream_id != w->end_stream)
                                          ? "on a stream the stop event did not wait for"
                                          : "on the stop event's stream";
                    add_finding(st, KA_AXIS_MEASUREMENT, KA_FINDING_CONVICTS,
                                via_thread ? "work-in-injected-thread" : "work-after-stop-event", p->file, k->start_ns,
                                "candidate kernel '%.120s' (stream %u) of timed window #%u ended %s%.3f ms after the "
                                "stop event (%s); the harness reported %.4f ms",
                                name, k->stream_id, w->index, w->gpu_end_ns ? "" : "at least ",
                                (double)(k->end_ns - stop_ns) / 1e6, how,
                                (double)w->elapsed_ms);
                } else {
                    st->escaped_unattributed++;
                    add_finding(st, KA_AXIS_MEASUREMENT, KA_FINDING_UNRESOLVED, "unattributed-work-after-stop-event",
                                p->file, k->start_ns,
                                "kernel '%.120s' launched inside timed window #%u ended after its stop event, but "
                                "cannot be attributed (R-C)",
                                name, w->index);
                }
            } else if (party == KA_PARTY_CANDIDATE && w->end_stream != UINT32_MAX && k->stream_id != w->end_stream) {
                add_finding(st, KA_AXIS_MEASUREMENT, KA_FINDING_SIGNAL, "side-stream-within-window", p->file,
                            k->start_ns,
                            "candidate kernel '%.120s' ran on stream %u, not the timing stream %u, and finished "
                            "before the stop event of window #%u",
                            name, k->stream_id, w->end_stream, w->index);
            }
        }
        if (st->opt->on_kernel)
            st->opt->on_kernel(st->opt->sink_arg, p->pid, name, k->stream_id, k->start_ns, k->end_ns, origin, party,
                               (enum ka_class)cls, vc ? vc->rec.call_id : 0);
    }
    free(names);
    ka_u32map_free(&name_index);
}

/* Vendor calls become work items (outermost calls only: nested ones are the same work). */
static void vendor_call_items(struct analysis_state *st, struct ka_proc *p)
{
    struct ka_analysis *a = st->a;
    for (size_t i = 0; i < p->n_vcalls; i++) {
        struct ka_vcall *vc = &p->vcalls[i];
        if (vc->outer != i)
            continue;
        if (vc->party == KA_PARTY_REFERENCE) {
            a->reference_work.amount[vc->cls] += vc->work;
            a->reference_work.items[vc->cls]++;
            continue;
        }
        if (vc->party == KA_PARTY_UNKNOWN) {
            add_item(st, vc->cls, vc->work, ITEM_VENDOR_CALL, p->file, vc->rec.enter_ns,
                     "%s (call %llu) called from %s (thread %u) by an unknown party: %s %.4g FLOP", vc->api,
                     (unsigned long long)vc->rec.call_id, vc->caller && vc->caller[0] ? vc->caller : "(unknown object)",
                     vc->rec.thread_id, ka_class_name(vc->cls), vc->work);
            st->items[st->n_items - 1].unattributed = 1;
            continue;
        }
        if (vc->party != KA_PARTY_CANDIDATE)
            continue;
        int pinned = library_pinned(st, p, vc->rec.library);
        add_item(st, vc->cls, vc->work, ITEM_VENDOR_CALL, p->file, vc->rec.enter_ns,
                 "%s (call %llu) called from %s (thread %u)%s%s: %s %.4g %s, %llu kernels in its window", vc->api,
                 (unsigned long long)vc->rec.call_id, vc->caller && vc->caller[0] ? vc->caller : "(unknown object)", vc->rec.thread_id,
                 vc->caller_is_candidate ? ", the candidate's own object (below the framework)"
                 : vc->caller_is_framework ? ", reached through the framework in the candidate phase"
                                           : "",
                 pinned == 1 ? ", library pinned by the inventory" : pinned == 0 ? ", library NOT in the inventory" : "",
                 ka_class_name(vc->cls), vc->work,
                 vc->cls == KA_CLASS_GEMM || vc->cls == KA_CLASS_CONV ? "FLOP" : "units",
                 (unsigned long long)vc->kernels);
        /* Library uses the contract declares are exempt. */
        struct work_item *it = &st->items[st->n_items - 1];
        for (size_t u = 0; u < st->c->n_library_uses; u++) {
            const struct ka_library_use *use = &st->c->library_uses[u];
            const char *lib = vc->rec.library == KAT_LIB_CUBLAS ? "cublas" : vc->rec.library == KAT_LIB_CUBLASLT ? "cublaslt" : "cudnn";
            if ((strcmp(use->library, "*") && strcmp(use->library, lib)) || fnmatch(use->api, vc->api, 0) != 0 ||
                (use->cls >= 0 && use->cls != vc->cls))
                continue;
            it->exempt = 1;
            it->exempt_why = strdup("declared library use");
        }
    }
}

/* ---- session-level rules ---------------------------------------------- */

static void timing_integrity(struct analysis_state *st, struct ka_proc *p)
{
    /* Objects other than the runtime and driver that define timing entry points. */
    for (size_t i = 0; i < p->n_symbols; i++) {
        const struct ka_symbol *s = &p->symbols[i];
        if (s->phase != KAT_SYMBOL_DEFINED_BY_OBJECT || !s->object)
            continue;
        const char *b = base_name(s->object);
        if (!strncmp(b, "libcudart.so", 12) || !strncmp(b, "libcuda.so", 10) || !strncmp(b, "libkaudit", 9))
            continue;
        st->tamper = 1;
        add_finding(st, KA_AXIS_MEASUREMENT, KA_FINDING_CONVICTS, "foreign-timing-definition", p->file, s->time_ns,
                    "'%s' defines the timing entry point %s: an object other than the CUDA runtime or driver can "
                    "hand the harness a made-up time",
                    s->object, s->symbol);
    }
    /* A timing entry point that resolves differently at CUDA init and at the end. */
    for (size_t i = 0; i < p->n_symbols; i++) {
        const struct ka_symbol *s = &p->symbols[i];
        if (s->phase == KAT_SYMBOL_DEFINED_BY_OBJECT || !s->address)
            continue;
        for (size_t j = i + 1; j < p->n_symbols; j++) {
            const struct ka_symbol *u = &p->symbols[j];
            if (u->phase == KAT_SYMBOL_DEFINED_BY_OBJECT || !u->address || u->phase == s->phase ||
                strcmp(u->symbol, s->symbol) || u->address == s->address)
                continue;
            st->tamper = 1;
            add_finding(st, KA_AXIS_MEASUREMENT, KA_FINDING_CONVICTS, "timing-function-changed", p->file, u->time_ns,
                        "%s resolved to %s at one point and to %s later: the timing function changed during the run",
                        s->symbol, s->object && s->object[0] ? s->object : "?",
                        u->object && u->object[0] ? u->object : "?");
        }
    }
    /* The harness's own identity guard (docs/analysis.md, "Harness marks"). */
    for (size_t i = 0; i < p->n_guard; i++) {
        st->guard_changes++;
        add_finding(st, KA_AXIS_MEASUREMENT, KA_FINDING_CONVICTS, "timing-primitive-replaced", p->file, 0,
                    "the harness's guard saw %s replaced after the candidate was imported", p->guard_changed[i]);
    }
    /* Reported times must be values the CUDA runtime returned. */
    for (size_t i = 0; i < p->n_reported; i++) {
        double v = p->reported_ms[i];
        st->reported_total++;
        int ok = 0;
        double nearest = NAN;
        for (size_t j = 0; j < p->n_elapsed; j++) {
            double e = p->elapsed_ms[j];
            if (isnan(nearest) || fabs(e - v) < fabs(nearest - v))
                nearest = e;
            if (fabs(e - v) <= 1e-6 * fmax(fabs(e), 1e-9))
                ok = 1;
        }
        if (!ok) {
            st->reported_mismatch++;
            if (isnan(nearest))
                add_finding(st, KA_AXIS_MEASUREMENT, KA_FINDING_CONVICTS, "reported-time-not-measured", p->file, 0,
                            "the harness reported %.6g ms but the CUDA runtime returned no elapsed time at all", v);
            else
                add_finding(st, KA_AXIS_MEASUREMENT, KA_FINDING_CONVICTS, "reported-time-not-measured", p->file, 0,
                            "the harness reported %.6g ms, which the CUDA runtime never returned (nearest: %.6g ms)",
                            v, nearest);
        }
    }
}

static void build_failures(struct analysis_state *st)
{
    for (size_t i = 0; i < st->n_procs; i++) {
        const struct proc_summary *s = &st->procs[i];
        if (!s->build_tool)
            continue;
        int32_t status = 0;
        int known = 0;
        if (s->status_known && s->end_kind != KAT_END_EXEC) {
            status = s->status;
            known = 1;
        } else {
            /* killed or cut short: the parent's wait() may still have seen how it ended */
            for (size_t j = 0; j < st->n_child_exits; j++)
                if (st->child_exits[j].pid == s->pid) {
                    int ws = st->child_exits[j].wait_status;
                    status = WIFEXITED(ws) ? WEXITSTATUS(ws) : WIFSIGNALED(ws) ? 128 + WTERMSIG(ws) : 0;
                    known = 1;
                }
        }
        if (!known || status == 0)
            continue;
        /* Only builds the candidate started count (all of them when there are no phases). */
        int in_candidate = st->n_cand_phases == 0;
        for (size_t j = 0; j < st->n_cand_phases; j++)
            if (s->start_ns >= st->cand_phases[j].start && s->start_ns <= st->cand_phases[j].end)
                in_candidate = 1;
        if (!in_candidate)
            continue;
        st->a->build_failures++;
        add_finding(st, KA_AXIS_IMPLEMENTATION, KA_FINDING_SIGNAL, "candidate-build-failed", s->file, s->start_ns,
                    "build tool '%s' (pid %u) exited with status %d during the candidate phase", s->argv0, s->pid,
                    (int)status);
    }
}

static double sum_classes(const double *w)
{
    double s = 0;
    for (int i = 0; i < KA_CLASS_COUNT; i++)
        s += w[i];
    return s;
}

static void implementation_verdict(struct analysis_state *st)
{
    struct ka_analysis *a = st->a;
    const struct ka_contract *c = st->c;
    struct ka_axis_result *ax = &a->axis[KA_AXIS_IMPLEMENTATION];

    /* The framework kernels of the candidate become one item per class. */
    for (int cls = 0; cls < KA_CLASS_COUNT; cls++)
        if (st->fw_count[cls])
            add_item(st, cls, st->fw_work[cls], ITEM_FRAMEWORK_KERNELS, st->fw_process[cls], 0,
                     "%llu framework kernel%s of class %s in the candidate phase (e.g. '%.120s'): %.4g elements by "
                     "the threads-launched proxy",
                     (unsigned long long)st->fw_count[cls], st->fw_count[cls] == 1 ? "" : "s", ka_class_name(cls),
                     st->fw_example[cls], st->fw_work[cls]);

    for (int cls = 0; cls < KA_CLASS_COUNT; cls++)
        if (st->nm_count[cls])
            add_item(st, cls, 0, ITEM_VENDOR_KERNEL, st->nm_process[cls], st->nm_time[cls],
                     "%llu vendor kernel%s of class %s launched by the candidate outside any intercepted library "
                     "call, e.g. %s",
                     (unsigned long long)st->nm_count[cls], st->nm_count[cls] == 1 ? "" : "s", ka_class_name(cls),
                     st->nm_example[cls] ? st->nm_example[cls] : "?");
    for (int cls = 0; cls < KA_CLASS_COUNT; cls++)
        if (st->unk_fw_count[cls]) {
            add_item(st, cls, st->unk_fw_work[cls], ITEM_FRAMEWORK_KERNELS, NULL, 0,
                     "%llu framework kernel%s of class %s launched by an unknown party: %.4g elements by the "
                     "threads-launched proxy",
                     (unsigned long long)st->unk_fw_count[cls], st->unk_fw_count[cls] == 1 ? "" : "s",
                     ka_class_name(cls), st->unk_fw_work[cls]);
            st->items[st->n_items - 1].unattributed = 1;
        }

    /* R: the reference's work (contract amount, or measured in the reference phase). */
    double R;
    int dom = c->dominant_class;
    if (c->measure_reference) {
        R = sum_classes(a->reference_work.amount);
        if (dom < 0) {
            double best = 0;
            for (int i = 0; i < KA_CLASS_COUNT; i++)
                if (a->reference_work.amount[i] > best && i != KA_CLASS_GLUE) {
                    best = a->reference_work.amount[i];
                    dom = i;
                }
        }
    } else {
        R = c->reference_work;
    }
    double R_dom = c->measure_reference && dom >= 0 ? a->reference_work.amount[dom] : R;
    a->reference_total = R;
    a->dominant_class = dom;

    /* Mediators and epilogues the contract allows. */
    double C_class[KA_CLASS_COUNT] = { 0 };
    for (size_t i = 0; i < st->n_items; i++) {
        struct work_item *it = &st->items[i];
        if (it->exempt)
            continue;
        if (it->cls == KA_CLASS_GLUE && c->allow_glue && it->kind != ITEM_VENDOR_KERNEL) {
            it->exempt = 1;
            it->exempt_why = strdup("layout/copy glue is an allowed mediator");
        }
    }
    for (size_t i = 0; i < st->n_items; i++)
        if (!st->items[i].exempt && !st->items[i].unattributed)
            C_class[st->items[i].cls] += st->items[i].work;
    for (size_t e = 0; e < c->n_epilogues; e++) {
        const struct ka_epilogue *ep = &c->epilogues[e];
        double limit = ep->max_share * fmax(R, 1);
        if (C_class[ep->cls] > limit)
            continue;
        for (size_t i = 0; i < st->n_items; i++) {
            struct work_item *it = &st->items[i];
            if (it->exempt || it->unattributed || it->cls != (int)ep->cls || it->kind == ITEM_VENDOR_KERNEL)
                continue;
            it->exempt = 1;
            if (asprintf(&it->exempt_why, "allowed epilogue%s%s: %.3g%% of the reference's work (limit %.3g%%)",
                         ep->note ? " " : "", ep->note ? ep->note : "", 100.0 * C_class[ep->cls] / fmax(R, 1),
                         100.0 * ep->max_share) < 0)
                it->exempt_why = NULL;
        }
        C_class[ep->cls] = 0;
    }
    double C = 0;
    for (int i = 0; i < KA_CLASS_COUNT; i++) {
        a->candidate_work.amount[i] = C_class[i];
        C += C_class[i];
    }
    for (size_t i = 0; i < st->n_items; i++)
        if (!st->items[i].exempt && !st->items[i].unattributed)
            a->candidate_work.items[st->items[i].cls]++;
    double U_class[KA_CLASS_COUNT] = { 0 };
    for (size_t i = 0; i < st->n_items; i++)
        if (!st->items[i].exempt && st->items[i].unattributed)
            U_class[st->items[i].cls] += st->items[i].work;

    /* Targeting thresholds (paper, Section 3.3): which forbidden items are selected. */
    unsigned convicting = 0, unattributed_selected = 0;
    for (size_t i = 0; i < st->n_items; i++) {
        struct work_item *it = &st->items[i];
        if (it->exempt) {
            add_finding(st, KA_AXIS_IMPLEMENTATION, KA_FINDING_SIGNAL, "exempt-mediator", it->process, it->time_ns,
                        "%s — exempt: %s", it->what ? it->what : "?", it->exempt_why ? it->exempt_why : "allowed");
            continue;
        }
        int forbidden = c->self_implemented && (c->forbidden & (1u << it->cls));
        if (!forbidden) {
            add_finding(st, KA_AXIS_IMPLEMENTATION, KA_FINDING_SIGNAL, "allowed-work", it->process, it->time_ns,
                        "%s — class %s is not forbidden by the contract", it->what ? it->what : "?",
                        ka_class_name(it->cls));
            continue;
        }
        const char *why = NULL;
        char buf[160];
        if (it->kind == ITEM_VENDOR_KERNEL) {
            why = "a vendor kernel the candidate launched without a library call: work not estimable, selected";
        } else if (it->cls == dom && it->work >= 0.05 * fmax(R_dom, 1)) {
            snprintf(buf, sizeof buf, "%.3g%% of the reference's %s work (threshold 5%%)",
                     100.0 * it->work / fmax(R_dom, 1), ka_class_name(it->cls));
            why = buf;
        } else if (C_class[it->cls] >= 0.30 * R && R > 0) {
            snprintf(buf, sizeof buf, "class %s totals %.3g%% of the reference's work (threshold 30%%)",
                     ka_class_name(it->cls), 100.0 * C_class[it->cls] / R);
            why = buf;
        } else if (C >= 0.05 * fmax(R, 1) && C_class[it->cls] >= 0.30 * C) {
            snprintf(buf, sizeof buf, "class %s is %.3g%% of the candidate's work, itself %.3g%% of the reference's",
                     ka_class_name(it->cls), 100.0 * C_class[it->cls] / fmax(C, 1), 100.0 * C / fmax(R, 1));
            why = buf;
        } else if (it->work == 0 && it->kind == ITEM_VENDOR_CALL) {
            why = "a forbidden vendor call whose work could not be estimated from its arguments";
        }
        if (it->unattributed) {
            /* The same thresholds on work nobody can be held to: enough to stop a PASS. */
            if (it->cls == dom ? it->work >= 0.05 * fmax(R_dom, 1) || it->work == 0
                               : U_class[it->cls] >= 0.30 * fmax(R, 1)) {
                unattributed_selected++;
                add_finding(st, KA_AXIS_IMPLEMENTATION, KA_FINDING_UNRESOLVED, "unattributed-forbidden-work",
                            it->process, it->time_ns, "%s — forbidden class %s, but not attributable to the candidate",
                            it->what ? it->what : "?", ka_class_name(it->cls));
            }
            continue;
        }
        if (!why) {
            add_finding(st, KA_AXIS_IMPLEMENTATION, KA_FINDING_SIGNAL, "below-threshold", it->process, it->time_ns,
                        "%s — forbidden class %s but below the targeting thresholds", it->what ? it->what : "?",
                        ka_class_name(it->cls));
            continue;
        }
        convicting++;
        add_finding(st, KA_AXIS_IMPLEMENTATION, KA_FINDING_CONVICTS,
                    it->kind == ITEM_VENDOR_CALL ? "forbidden-vendor-call"
                    : it->kind == ITEM_VENDOR_KERNEL ? "non-mediated-vendor-launch"
                                                     : "forbidden-framework-work",
                    it->process, it->time_ns, "%s — forbidden (%s)", it->what ? it->what : "?", why);
    }

    /* Positive work evidence (R-A). */
    if (st->candidate_kernels_any)
        add_finding(st, KA_AXIS_IMPLEMENTATION, KA_FINDING_SUPPORT, "candidate-work", NULL, 0,
                    "the candidate launched %llu kernels, %llu of them its own code; %llu candidate modules loaded",
                    (unsigned long long)st->candidate_kernels_any, (unsigned long long)st->candidate_kernels_own,
                    (unsigned long long)st->candidate_modules);

    if (convicting) {
        ax->verdict = KA_FAIL;
        if (asprintf(&ax->root_cause, "%u attributable use%s of work the contract forbids%s", convicting,
                     convicting == 1 ? "" : "s",
                     a->build_failures ? " (on the fallback path after a failed custom build)" : "") < 0)
            ax->root_cause = NULL;
        return;
    }
    ax->verdict = KA_INCONCLUSIVE;
    const char *cause = NULL;
    if (a->build_failures && !st->candidate_modules)
        cause = "the candidate's custom build failed and no candidate module was loaded: the fallback path shows no "
                "violation, which cannot certify the unavailable custom implementation";
    else if (st->read_error || st->truncated)
        cause = "a trace is truncated or malformed: launches after its last record are not known";
    else if (st->health_problem)
        cause = "tool health: the evidence may be incomplete (see the findings)";
    else if (unattributed_selected && st->python_off)
        cause = "forbidden-class work ran that cannot be attributed to the candidate or the reference (no phase "
                "marks around it, and Python-side provenance was off): absence of delegation is not established";
    else if (unattributed_selected)
        cause = "forbidden-class work ran that cannot be attributed to the candidate or the reference (no phase "
                "marks or party frames around it): absence of delegation is not established";
    else if (!st->candidate_kernels_any && !a->phases_seen && !st->candidate_modules)
        cause = "R-A: no work can be attributed to the candidate (no phase marks, no candidate process or module)";
    else if (!st->candidate_kernels_any)
        cause = "R-A: no positive evidence that the candidate did any work";
    if (cause) {
        ax->root_cause = strdup(cause);
        return;
    }
    ax->verdict = KA_PASS;
    ax->root_cause = NULL;
}

static void measurement_verdict(struct analysis_state *st)
{
    struct ka_analysis *a = st->a;
    struct ka_axis_result *ax = &a->axis[KA_AXIS_MEASUREMENT];
    unsigned convicting = code_seen(st, "work-after-stop-event") + code_seen(st, "work-in-injected-thread") +
                          code_seen(st, "foreign-timing-definition") + code_seen(st, "timing-function-changed") +
                          code_seen(st, "timing-primitive-replaced") + code_seen(st, "reported-time-not-measured");
    if (st->c->timing == KA_TIMING_NONE && !convicting) {
        ax->verdict = KA_UNSUPPORTED;
        ax->root_cause = strdup("the contract makes no timing claim (timing.window is none)");
        return;
    }
    if (convicting) {
        ax->verdict = KA_FAIL;
        if (asprintf(&ax->root_cause, "%u piece%s of evidence that the reported time does not cover the candidate's "
                                      "work or was not measured by the CUDA runtime",
                     convicting, convicting == 1 ? "" : "s") < 0)
            ax->root_cause = NULL;
        return;
    }
    ax->verdict = KA_INCONCLUSIVE;
    if (!a->timed_windows) {
        ax->root_cause = strdup("no timed window could be reconstructed (no cudaEventElapsedTime on recorded events)");
        return;
    }
    if (st->escaped_unattributed) {
        ax->root_cause = strdup("R-C: work escaped a timed window but is not attributable to the candidate");
        return;
    }
    if (st->stop_time_ambiguous) {
        ax->root_cause = strdup("work may have ended after a stop event whose GPU time is unknown or known only "
                                "from stream order (no CUDA_EVENT records; KAUDIT_EXACT_EVENT_TIMES=1 records "
                                "them)");
        return;
    }
    if (st->read_error || st->truncated) {
        ax->root_cause = strdup("a trace is truncated or malformed: kernels after its last record are not known");
        return;
    }
    if (st->health_problem) {
        ax->root_cause = strdup("tool health: the evidence may be incomplete (see the findings)");
        return;
    }
    if (!st->candidate_kernels_any) {
        ax->root_cause = strdup("no candidate kernel was attributed to any timed window");
        return;
    }
    ax->verdict = KA_PASS;
}

static void signals(struct analysis_state *st, struct ka_proc *p)
{
    if (p->low_precision_kernels)
        add_finding(st, KA_AXIS_MEASUREMENT, KA_FINDING_SIGNAL, "lower-precision-kernels", p->file, 0,
                    "%llu candidate kernels have lower-precision names (e.g. '%.120s') in a %s task",
                    (unsigned long long)p->low_precision_kernels, p->low_precision_example, st->c->timing_dtype);
    if (p->graph_kernels)
        add_finding(st, KA_AXIS_MEASUREMENT, KA_FINDING_SIGNAL, "graph-replays", p->file, 0,
                    "%llu kernels ran from CUDA graphs", (unsigned long long)p->graph_kernels);
}

static void aggregate(struct analysis_state *st)
{
    struct ka_analysis *a = st->a;
    if (st->opt->semantic_given) {
        a->axis[KA_AXIS_SEMANTIC].verdict = st->opt->semantic;
        a->axis[KA_AXIS_SEMANTIC].root_cause =
            st->opt->semantic == KA_PASS ? NULL : strdup("as supplied by a separate semantic run (--semantic)");
        add_finding(st, KA_AXIS_SEMANTIC, st->opt->semantic == KA_FAIL ? KA_FINDING_CONVICTS : KA_FINDING_SIGNAL,
                    "semantic-supplied", NULL, 0, "the semantic verdict %s was supplied, not decided from the traces",
                    ka_verdict_name(st->opt->semantic));
    } else {
        a->axis[KA_AXIS_SEMANTIC].verdict = KA_UNSUPPORTED;
        a->axis[KA_AXIS_SEMANTIC].root_cause =
            strdup("semantic stress runs are not part of this analysis (traces cannot decide output correctness)");
    }
    int any_fail = 0, any_unresolved = 0;
    for (int i = 0; i < KA_AXIS_COUNT; i++) {
        if (a->axis[i].verdict == KA_FAIL)
            any_fail = 1;
        else if (a->axis[i].verdict != KA_PASS)
            any_unresolved = 1;
    }
    a->aggregate = any_fail ? KA_FAIL : any_unresolved ? KA_INCONCLUSIVE : KA_PASS;
    a->certificate = a->aggregate;
    if (a->aggregate == KA_FAIL) {
        a->certificate_reason = strdup("an axis FAILs on candidate-attributable evidence");
    } else if (a->aggregate == KA_INCONCLUSIVE) {
        for (int i = 0; i < KA_AXIS_COUNT; i++)
            if (a->axis[i].verdict != KA_PASS) {
                if (asprintf(&a->certificate_reason, "the %s axis is %s: %s", ka_axis_name(i),
                             ka_verdict_name(a->axis[i].verdict),
                             a->axis[i].root_cause ? a->axis[i].root_cause : "unresolved") < 0)
                    a->certificate_reason = NULL;
                break;
            }
    } else if (st->c->degenerate_reference) {
        a->certificate = KA_INCONCLUSIVE;
        a->certificate_reason = strdup("R-B: the contract lists the reference as degenerate: PASS is withheld");
    } else {
        a->certificate_reason = strdup("no violation detected on the audited surfaces");
    }
    /* Outcome codes (Table 1) against the weak verifier's decision. */
    a->weak = st->opt->weak;
    if (a->weak == KA_WEAK_NONE)
        return;
    const char *code, *why;
    if (a->certificate == KA_PASS) {
        code = "C0";
        why = a->weak == KA_WEAK_ACCEPT ? "certified, and the weak verifier accepts"
                                        : "certified; the weak verifier's rejection is a false reject";
    } else if (a->certificate == KA_FAIL && a->weak == KA_WEAK_REJECT) {
        code = "C1";
        why = "the weak verifier rejects and the certificate is FAIL (public failure)";
    } else if (a->certificate == KA_FAIL) {
        /* priority C3b over C3c over C3a over C2 */
        if (a->axis[KA_AXIS_IMPLEMENTATION].verdict == KA_FAIL) {
            code = "C3b";
            why = "false accept: the implementation axis FAILs";
        } else if (a->axis[KA_AXIS_MEASUREMENT].verdict == KA_FAIL) {
            code = "C3c";
            why = "false accept: the measurement axis FAILs";
        } else {
            code = "C2";
            why = "false accept: the semantic axis FAILs without a mechanism signature";
        }
    } else {
        code = "INCONCL";
        why = a->certificate_reason ? a->certificate_reason : "unresolved";
    }
    snprintf(a->outcome, sizeof a->outcome, "%s", code);
    a->outcome_reason = strdup(why);
}

static void proc_free(struct ka_proc *p)
{
    free(p->file);
    free(p->exe);
    free(p->argv0);
    free(p->argv);
    ka_u32map_free(&p->api_index);
    free(p->api_direct);
    ka_u32map_free(&p->ext);
    free(p->apis);
    for (size_t i = 0; i < p->n_vcalls; i++) {
        free(p->vcalls[i].api);
        free(p->vcalls[i].caller);
    }
    free(p->vcalls);
    free(p->phases);
    free(p->phase_order);
    free(p->python_status);
    for (size_t i = 0; i < p->n_modules; i++)
        free(p->modules[i].loader);
    free(p->modules);
    free(p->windows);
    free(p->threads);
    for (size_t i = 0; i < p->n_symbols; i++) {
        free(p->symbols[i].symbol);
        free(p->symbols[i].object);
    }
    free(p->symbols);
    free(p->reported_ms);
    free(p->elapsed_ms);
    for (size_t i = 0; i < p->n_guard; i++)
        free(p->guard_changed[i]);
    free(p->guard_changed);
    for (size_t i = 0; i < p->n_libs; i++)
        free(p->libs[i].soname);
    free(p->libs);
    free(p->low_precision_example);
}

/* What the Python side said, for a process that runs Python. */
static void python_provenance_finding(struct analysis_state *st, struct ka_proc *p, const char *argv0, const char *exe)
{
    const char *b1 = base_name(argv0), *b2 = base_name(exe);
    int python = !strncmp(b1, "python", 6) || !strncmp(b2, "python", 6) || p->python_status;
    if (!python)
        return;
    if (!p->python_status) {
        st->python_off++;
        add_finding(st, KA_AXIS_IMPLEMENTATION, KA_FINDING_SIGNAL, "python-provenance-missing", p->file, 0,
                    "Python process %u never reported Python-side provenance (kaudit run --no-python, python -S "
                    "or -I, or a PYTHONPATH the program replaced): its framework work can only be attributed by "
                    "phase marks",
                    p->pid);
    } else if (!strncmp(p->python_status, "on", 2)) {
        add_finding(st, KA_AXIS_IMPLEMENTATION, KA_FINDING_SIGNAL, "python-provenance", p->file, 0, "%s",
                    p->python_status);
    } else {
        st->python_off++;
        add_finding(st, KA_AXIS_IMPLEMENTATION, KA_FINDING_SIGNAL, "python-provenance-off", p->file, 0,
                    "Python-side provenance in process %u: %s", p->pid, p->python_status);
    }
}

static void analyze_trace(struct analysis_state *st, const char *path, const char *file)
{
    struct ka_analysis *a = st->a;
    char err[1024];
    struct kat_trace *t = kat_trace_open(path, err, sizeof err);
    a->traces++;
    if (!t) {
        a->unreadable_traces++;
        st->read_error = 1;
        add_finding(st, KA_AXIS_IMPLEMENTATION, KA_FINDING_UNRESOLVED, "trace-unreadable", file, 0, "%s", err);
        return;
    }
    struct ka_proc p;
    memset(&p, 0, sizeof p);
    p.file = strdup(file);
    const struct kat_file_header *h = kat_trace_header(t);
    p.pid = h->pid;
    p.ppid = h->ppid;
    struct timing_rec *timing = NULL;
    size_t n_timing = 0;
    struct event_rec *events = NULL;
    size_t n_events = 0;
    /* The process is the candidate's when the contract names its program. */
    index_trace(st, t, &p, &timing, &n_timing, &events, &n_events);
    const char *exe = p.exe ? p.exe : "", *argv0 = p.argv0 ? p.argv0 : "";
    if (st->c->candidate.n_processes &&
        (path_matches(exe, st->c->candidate.processes, st->c->candidate.n_processes) ||
         path_matches(argv0, st->c->candidate.processes, st->c->candidate.n_processes))) {
        p.candidate_process = 1;
        for (size_t i = 0; i < p.n_modules; i++)
            st->candidate_modules++;
    }
    p.build_tool = is_build_tool(argv0, exe);
    python_provenance_finding(st, &p, argv0, exe);
    if (st->opt->on_process)
        st->opt->on_process(st->opt->sink_arg, p.pid, p.argv ? p.argv : file);
    finish_index(st, &p, timing, n_timing, events, n_events);
    bound_stop_events(t, &p, timing, n_timing);
    if (st->opt->on_stop_bounds)
        for (size_t w = 0; w < p.n_windows; w++)
            if (p.windows[w].end_bounded)
                st->opt->on_stop_bounds(st->opt->sink_arg, p.pid, p.windows[w].index, p.windows[w].end_stream,
                                        p.windows[w].end_lo_ns, p.windows[w].end_hi_ns, p.windows[w].elapsed_ms);
    free(timing);
    free(events);
    if (!p.complete) {
        a->truncated_traces++;
        /* A build tool or a helper that exec'd away is not evidence of lost kernels. */
        if (p.end_kind != KAT_END_EXEC) {
            st->truncated = 1;
            add_finding(st, KA_AXIS_IMPLEMENTATION, KA_FINDING_UNRESOLVED, "trace-truncated", file, 0,
                        "the trace of pid %u (%s) has no end record: the process was killed or crashed, and kernels "
                        "still in CUPTI's buffers were lost",
                        p.pid, argv0);
        }
    }
    stream_kernels(st, t, &p);
    vendor_call_items(st, &p);
    timing_integrity(st, &p);
    signals(st, &p);
    uint64_t header_start_ns = h->start_realtime_ns;
    kat_trace_close(t); /* h pointed into the mapping: not used from here on */

    if (!GROW(st->procs, st->n_procs, st->cap_procs)) {
        struct proc_summary *s = &st->procs[st->n_procs++];
        memset(s, 0, sizeof *s);
        s->pid = p.pid;
        s->ppid = p.ppid;
        s->argv0 = strdup(argv0);
        s->file = strdup(file);
        s->start_ns = p.start_ns ? p.start_ns : header_start_ns;
        s->build_tool = p.build_tool;
        s->status_known = p.end_known && p.status_known;
        s->status = p.status;
        s->end_kind = p.end_kind;
    }
    proc_free(&p);
}

int ka_analyze(const char *dir, const struct ka_contract *c, const struct ka_options *opt, struct ka_analysis **out,
               char *err, size_t n)
{
    *out = NULL;
    struct kat_session *s;
    if (kat_session_open(dir, &s, err, n) != 0)
        return -1;
    struct ka_options none;
    if (!opt) {
        memset(&none, 0, sizeof none);
        opt = &none;
    }
    struct ka_analysis *a = calloc(1, sizeof *a);
    if (!a) {
        kat_session_close(s);
        snprintf(err, n, "out of memory");
        return -1;
    }
    a->session_dir = strdup(dir);
    a->contract_file = strdup(c->file);
    a->task_id = strdup(c->task_id);
    kinv_digest_hex(c->digest, a->contract_digest);
    a->dominant_class = -1;
    if (opt->inventory) {
        a->inventory_file = strdup(opt->inventory_path ? opt->inventory_path : "");
        kinv_digest_hex(opt->inventory->digest, a->inventory_digest);
    }
    struct analysis_state st;
    memset(&st, 0, sizeof st);
    st.a = a;
    st.c = c;
    st.opt = opt;

    const char *status = kat_session_info(s, "status");
    if (status && !strncmp(status, "not started", 11))
        add_finding(&st, KA_AXIS_IMPLEMENTATION, KA_FINDING_UNRESOLVED, "run-not-started", NULL, 0,
                    "the recorded run did not start: %s", status);
    size_t count = kat_session_trace_count(s);
    if (!count) {
        st.read_error = 1;
        add_finding(&st, KA_AXIS_IMPLEMENTATION, KA_FINDING_UNRESOLVED, "no-traces", NULL, 0,
                    "the session holds no trace: nothing was recorded");
    }
    for (size_t i = 0; i < count; i++)
        analyze_trace(&st, kat_session_trace_path(s, i), kat_session_trace_name(s, i));
    kat_session_close(s);

    if (st.kernels_without_api)
        add_finding(&st, KA_AXIS_IMPLEMENTATION, KA_FINDING_SIGNAL, "kernels-without-launch-record", NULL, 0,
                    "%llu kernels have no launch API record: their thread and phase are unknown",
                    (unsigned long long)st.kernels_without_api);
    build_failures(&st);
    implementation_verdict(&st);
    measurement_verdict(&st);
    aggregate(&st);
    summarize_dropped(&st);

    for (size_t i = 0; i < st.n_items; i++) {
        free(st.items[i].what);
        free(st.items[i].process);
        free(st.items[i].exempt_why);
    }
    free(st.items);
    for (int i = 0; i < KA_CLASS_COUNT; i++) {
        free(st.fw_example[i]);
        free(st.fw_process[i]);
        free(st.nm_example[i]);
        free(st.nm_process[i]);
    }
    for (size_t i = 0; i < st.n_procs; i++) {
        free(st.procs[i].argv0);
        free(st.procs[i].file);
    }
    free(st.procs);
    free(st.child_exits);
    free(st.cand_phases);
    free(st.codes);
    *out = a;
    return 0;
}

void ka_analysis_free(struct ka_analysis *a)
{
    if (!a)
        return;
    free(a->session_dir);
    free(a->contract_file);
    free(a->task_id);
    free(a->inventory_file);
    for (int i = 0; i < KA_AXIS_COUNT; i++)
        free(a->axis[i].root_cause);
    free(a->certificate_reason);
    free(a->outcome_reason);
    for (size_t i = 0; i < a->n_findings; i++) {
        free(a->findings[i].text);
        free(a->findings[i].process);
    }
    free(a->findings);
    free(a);
}
