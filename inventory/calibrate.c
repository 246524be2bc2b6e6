/*
 * calibrate.c - `observed` entries from recorded sessions: every kernel that
 * ran inside a vendor call window, pinned to the digest of the library file
 * whose call launched it (docs/inventory.md, "Calibration").
 *
 * A window is kaudit's own evidence: the preload library pushes the vendor
 * call id as a CUPTI external correlation id of kind CUSTOM2, so a kernel
 * whose correlation id has such a record, naming a VENDOR_CALL of the same
 * trace, was launched by that call.  Nothing else (thread timing, names)
 * puts a kernel in a window here.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>

#include "internal.h"
#include "session.h"
#include "trace_index.h"
#include "trace_names.h"
#include "trace_reader.h"

/* Window library w is the trace's vendor library w + 1 (KAT_LIB_*); its name
 * and the soname prefix of its LIBRARY record come from session/trace_names.h. */
_Static_assert(KINV_WIN_CUBLAS + 1 == KAT_LIB_CUBLAS && KINV_WIN_CUBLASLT + 1 == KAT_LIB_CUBLASLT &&
               KINV_WIN_CUDNN + 1 == KAT_LIB_CUDNN, "window libraries are the trace's, less one");

const char *kinv_window_library_name(unsigned lib)
{
    return lib < KINV_WIN_COUNT ? kat_vendor_library_name(lib + 1) : "?";
}

/* soname (or file name) is prefix, or prefix followed by '.' and a version */
static int soname_is(const char *soname, const char *prefix)
{
    size_t n = strlen(prefix);
    return !strncmp(soname, prefix, n) && (soname[n] == 0 || soname[n] == '.');
}

static const char *lib_soname(const struct kinv_library *l)
{
    if (l->soname)
        return l->soname;
    const char *base = strrchr(l->path, '/');
    return base ? base + 1 : l->path;
}

/*
 * Whether an exact (cubin/ptx) entry in inventory library l already accounts
 * for a name launched in a window of library w: the library itself, or one
 * that w's calls reach internally (cuBLAS runs cuBLASLt's kernels; cuDNN's
 * kernels live in its libcudnn_*.so sub-libraries).
 */
static int exact_counts_for(const struct kinv_library *l, unsigned w)
{
    const char *so = lib_soname(l);
    switch (w) {
    case KINV_WIN_CUBLAS: return soname_is(so, "libcublas.so") || soname_is(so, "libcublasLt.so");
    case KINV_WIN_CUBLASLT: return soname_is(so, "libcublasLt.so");
    case KINV_WIN_CUDNN: return !strncmp(so, "libcudnn", 8);
    }
    return 0;
}

/* ---- one trace, read into arrays --------------------------------------------- */

struct kernel {
    uint32_t correlation, name, device;
};

struct device {
    uint32_t id, target;
};

/* The vendor calls and the kernel -> call join are session/trace_index.h's. */
struct trace_data {
    struct kat_trace_index ix;
    struct kernel *kernels;
    size_t n_kernels, cap_kernels;
    struct kat_library_rec *libs;
    size_t n_libs, cap_libs;
    struct device *devices;
    size_t n_devices, cap_devices;
};

static void trace_data_free(struct trace_data *d)
{
    kat_trace_index_free(&d->ix);
    free(d->kernels);
    free(d->libs);
    free(d->devices);
    memset(d, 0, sizeof(*d));
}

#define GROW(arr, n, cap)                                                                   \
    (kinv_grow((void **)&(arr), &(cap), (n) + 1, sizeof(*(arr))) ? -1 : 0)

static int read_trace(struct kat_trace *t, struct trace_data *d, struct kinv_err *err)
{
    struct kat_record r;
    char msg[512];
    int rc;
    kat_trace_index_init(&d->ix);
    while ((rc = kat_trace_next(t, &r, msg, sizeof(msg))) == 1) {
        if (kat_trace_index_add(&d->ix, &r) != 0)
            return kinv_error(err, "out of memory");
        switch (r.type) {
        case KAT_REC_KERNEL: {
            const struct kat_kernel_rec *k = r.body;
            if (GROW(d->kernels, d->n_kernels, d->cap_kernels))
                return kinv_error(err, "out of memory");
            d->kernels[d->n_kernels++] = (struct kernel){ k->correlation_id, k->name_string, k->device_id };
            break;
        }
        case KAT_REC_LIBRARY: {
            if (GROW(d->libs, d->n_libs, d->cap_libs))
                return kinv_error(err, "out of memory");
            memcpy(&d->libs[d->n_libs++], r.body, sizeof(struct kat_library_rec));
            break;
        }
        case KAT_REC_DEVICE: {
            const struct kat_device_rec *v = r.body;
            if (GROW(d->devices, d->n_devices, d->cap_devices))
                return kinv_error(err, "out of memory");
            uint32_t arch = v->cc_major * 10 + v->cc_minor;
            d->devices[d->n_devices++] = (struct device){
                v->device_id, arch ? kinv_target_pack(KINV_TARGET_SM, arch, 0) : 0 };
            break;
        }
        default:
            break;
        }
    }
    if (rc < 0)
        return kinv_error(err, "%s", msg);
    kat_trace_index_finish(&d->ix);
    return 0;
}

/* ---- the run: observations and the libraries they pin ------------------------ */

struct observation {
    const char *name;           /* in inv's arena */
    uint32_t len;
    uint32_t win;               /* enum kinv_window_library */
    uint32_t lib;               /* index into libs (the inventory's, then added ones) */
    uint32_t target;            /* 0: unknown device */
};

struct run {
    struct kinv_inventory *inv;
    size_t n_libs_before;
    struct kinv_library *added;     /* libraries not in the inventory, indices n_libs_before + i */
    size_t n_added, cap_added;
    struct observation *obs;
    size_t n_obs, cap_obs;
    const struct kinv_calibrate_options *opt;
};

/* Index of the library file behind window library w in this trace, adding it when new. */
static int resolve_library(struct run *run, const struct trace_data *d, struct kat_trace *t,
                           unsigned w, uint32_t *index, struct kinv_err *err)
{
    const char *prefix = kat_vendor_library_soname(w + 1);
    const struct kat_library_rec *found = NULL;
    for (size_t i = 0; i < d->n_libs; i++) {
        const struct kat_library_rec *l = &d->libs[i];
        const char *so = kat_trace_string(t, l->soname_string);
        if (!*so) {
            so = kat_trace_string(t, l->path_string);
            const char *base = strrchr(so, '/');
            so = base ? base + 1 : so;
        }
        if (!soname_is(so, prefix))
            continue;
        if (found && (found->digest_lo != l->digest_lo || found->digest_hi != l->digest_hi))
            return kinv_error(err, "two different %s files are loaded ('%s' and '%s'): cannot tell which "
                              "one the %s calls ran", prefix, kat_trace_string(t, found->path_string),
                              kat_trace_string(t, l->path_string), kinv_window_library_name(w));
        if (!found)
            found = l;
    }
    if (!found)
        return kinv_error(err, "%s calls but no LIBRARY record for %s", kinv_window_library_name(w), prefix);
    const char *path = kat_trace_string(t, found->path_string);
    const char *soname = kat_trace_string(t, found->soname_string);
    if (!*soname) {
        const char *base = strrchr(path, '/');
        soname = base ? base + 1 : path;
    }
    if (found->digest_lo == 0 && found->digest_hi == 0)
        return kinv_error(err, "the digest of '%s' is unavailable (0/0): its kernels cannot be pinned",
                          path);
    uint8_t digest[16];
    kinv_digest_from_halves(found->digest_lo, found->digest_hi, digest);
    char hex[33];
    kinv_digest_hex(digest, hex);

    struct kinv_inventory *inv = run->inv;
    long other = -1;
    for (size_t i = 0; i < run->n_libs_before; i++) {
        const struct kinv_library *l = &inv->libs[i];
        if (strcmp(lib_soname(l), soname))
            continue;
        if (!memcmp(l->digest, digest, 16)) {
            *index = (uint32_t)i;
            return 0;
        }
        other = (long)i;
    }
    if (other >= 0 && !run->opt->allow_other_build) {
        char want[33];
        kinv_digest_hex(inv->libs[other].digest, want);
        return kinv_error(err, "'%s' has xxh3-128 %s, the inventory's %s ('%s') has %s: calibrated "
                          "against a different build (--allow-other-build records the session's file)",
                          path, hex, soname, inv->libs[other].path, want);
    }
    for (size_t i = 0; i < run->n_added; i++)
        if (!memcmp(run->added[i].digest, digest, 16) && !strcmp(run->added[i].path, path)) {
            *index = (uint32_t)(run->n_libs_before + i);
            return 0;
        }
    for (size_t i = 0; i < run->n_libs_before + run->n_added; i++) {
        const struct kinv_library *l = i < run->n_libs_before ? &inv->libs[i]
                                                              : &run->added[i - run->n_libs_before];
        if (!strcmp(l->path, path))
            return kinv_error(err, "'%s' has xxh3-128 %s, but the inventory already lists a different "
                              "file at that path", path, hex);
    }
    if (GROW(run->added, run->n_added, run->cap_added))
        return kinv_error(err, "out of memory");
    struct kinv_library *l = &run->added[run->n_added];
    memset(l, 0, sizeof(*l));
    l->path = kinv_arena_strndup(inv->arena, path, strlen(path));
    l->soname = kinv_arena_strndup(inv->arena, soname, strlen(soname));
    if (!l->path || !l->soname)
        return kinv_error(err, "out of memory");
    l->size = found->file_size;
    memcpy(l->digest, digest, 16);
    *index = (uint32_t)(run->n_libs_before + run->n_added++);
    return 0;
}

static int calibrate_trace(struct run *run, struct kat_trace *t, struct kinv_calibrate_report *rep,
                           struct kinv_err *err)
{
    struct trace_data d = { 0 };
    int rc = read_trace(t, &d, err);
    if (!kat_trace_complete(t))
        rep->truncated_traces++;
    uint32_t lib_of[KINV_WIN_COUNT];
    int lib_known[KINV_WIN_COUNT] = { 0 };
    for (size_t i = 0; rc == 0 && i < d.n_kernels; i++) {
        const struct kernel *k = &d.kernels[i];
        rep->kernels++;
        uint64_t call = kat_trace_index_vendor_call_of(&d.ix, k->correlation);
        const struct kat_index_call *c = call ? kat_trace_index_call(&d.ix, call) : NULL;
        if (!c) {
            rep->outside++;
            continue;
        }
        const struct kat_index_call *top = kat_trace_index_outermost(&d.ix, c);
        if (top->library < 1 || top->library > KINV_WIN_COUNT) {
            rc = kinv_error(err, "vendor call %llu has an unknown library %u",
                            (unsigned long long)top->call_id, top->library);
            break;
        }
        unsigned w = top->library - 1;
        if (top != c && top->library != c->library)
            rep->outer_call++;
        if (!lib_known[w]) {
            if (resolve_library(run, &d, t, w, &lib_of[w], err)) {
                rc = -1;
                break;
            }
            lib_known[w] = 1;
        }
        const char *name = kat_trace_string(t, k->name);
        uint32_t len = kat_trace_string_length(t, k->name);
        if (!len) {
            rc = kinv_error(err, "kernel record with correlation id %u has no name", k->correlation);
            break;
        }
        uint32_t target = 0;
        for (size_t v = 0; v < d.n_devices; v++)
            if (d.devices[v].id == k->device)
                target = d.devices[v].target;
        if (GROW(run->obs, run->n_obs, run->cap_obs)) {
            rc = kinv_error(err, "out of memory");
            break;
        }
        struct observation *o = &run->obs[run->n_obs++];
        o->name = kinv_arena_strndup(run->inv->arena, name, len);
        if (!o->name) {
            rc = kinv_error(err, "out of memory");
            break;
        }
        o->len = len;
        o->win = w;
        o->lib = lib_of[w];
        o->target = target;
        rep->lib[w].launches++;
    }
    trace_data_free(&d);
    return rc;
}

/* ---- merging into the inventory ---------------------------------------------- */

static int obs_cmp(const void *a, const void *b)
{
    const struct observation *x = a, *y = b;
    struct kinv_entry ex = { .name = x->name, .name_len = x->len };
    struct kinv_entry ey = { .name = y->name, .name_len = y->len };
    int c = kinv_entry_cmp(&ex, &ey);
    if (c)
        return c;
    if (x->win != y->win)
        return x->win < y->win ? -1 : 1;
    if (x->lib != y->lib)
        return x->lib < y->lib ? -1 : 1;
    return x->target < y->target ? -1 : x->target > y->target;
}

static int entry_sort_cmp(const void *a, const void *b)
{
    return kinv_entry_cmp(a, b);
}

static int u32_cmp(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

/* Sorted union of two ascending arrays into arena memory. */
static uint32_t *merge_u32(struct kinv_arena *a, const uint32_t *x, uint32_t nx, const uint32_t *y,
                           uint32_t ny, uint32_t *n)
{
    uint32_t *out = kinv_arena_alloc(a, ((size_t)nx + ny + 1) * sizeof(uint32_t), 4);
    if (!out)
        return NULL;
    uint32_t i = 0, k = 0, m = 0;
    while (i < nx || k < ny) {
        uint32_t v = k == ny || (i < nx && x[i] <= y[k]) ? x[i] : y[k];
        while (i < nx && x[i] == v)
            i++;
        while (k < ny && y[k] == v)
            k++;
        out[m++] = v;
    }
    *n = m;
    return out;
}

/* Classifies the observations against inv as it was, and lists what to add. */
static int plan_additions(struct run *run, struct kinv_calibrate_report *rep, struct observation **add,
                          size_t *n_add, struct kinv_err *err)
{
    struct kinv_inventory *inv = run->inv;
    qsort(run->obs, run->n_obs, sizeof(*run->obs), obs_cmp);
    struct observation *out = calloc(run->n_obs + 1, sizeof(*out));
    if (!out)
        return kinv_error(err, "out of memory");
    size_t n = 0;
    for (size_t i = 0; i < run->n_obs;) {
        /* one (name, window library) group */
        const struct observation *o = &run->obs[i];
        size_t j = i;
        while (j < run->n_obs && run->obs[j].win == o->win && run->obs[j].len == o->len &&
               !memcmp(run->obs[j].name, o->name, o->len))
            j++;
        struct kinv_calibrate_counts *c = &rep->lib[o->win];
        c->names++;
        const struct kinv_entry *first;
        size_t count = kinv_lookup_name(inv, o->name, o->len, &first);
        int exact = 0;
        const struct kinv_entry *observed = NULL;
        for (size_t e = 0; e < count; e++) {
            if (first[e].kind == KINV_KIND_OBSERVED)
                observed = &first[e];
            else
                for (uint32_t k = 0; k < first[e].n_libs; k++)
                    exact |= first[e].libs[k] < run->n_libs_before &&
                             exact_counts_for(&inv->libs[first[e].libs[k]], o->win);
        }
        if (exact) {
            c->already_exact++;
            i = j;
            continue;
        }
        int new_here = 0;
        for (size_t k = i; k < j; k++) {
            const struct observation *q = &run->obs[k];
            int have = 0;
            if (observed)
                for (uint32_t l = 0; l < observed->n_libs; l++)
                    have |= observed->libs[l] == q->lib;
            if (have)
                continue;
            if (k > i && n > 0 && q->lib == out[n - 1].lib && q->target == out[n - 1].target &&
                out[n - 1].len == q->len && !memcmp(out[n - 1].name, q->name, q->len))
                continue;
            out[n++] = *q;
            new_here = 1;
        }
        if (!new_here) {
            c->already_observed++;
        } else {
            c->added++;
            struct kinv_match m;
            kinv_match(inv, o->name, o->len, &m);
            if (m.strength == KINV_MATCH_PATTERN)
                c->pattern_before++;
            else if (m.strength == KINV_MATCH_NONE)
                c->unknown_before++;
        }
        i = j;
    }
    *add = out;
    *n_add = n;
    return 0;
}

static int lib_path_cmp(const void *a, const void *b, void *ctx)
{
    const struct kinv_library *libs = ctx;
    return strcmp(libs[*(const uint32_t *)a].path, libs[*(const uint32_t *)b].path);
}

static int module_cmp(const void *a, const void *b)
{
    const struct kinv_module *x = a, *y = b;
    int c = memcmp(x->digest, y->digest, 16);
    if (c)
        return c;
    if (x->lib != y->lib)
        return x->lib < y->lib ? -1 : 1;
    return x->target < y->target ? -1 : x->target > y->target;
}

/* Appends the added libraries and renumbers everything so that L stays sorted by path. */
static int renumber_libraries(struct run *run, struct kinv_err *err)
{
    struct kinv_inventory *inv = run->inv;
    size_t total = inv->n_libs + run->n_added;
    if (run->n_added == 0)
        return 0;
    struct kinv_library *libs = realloc(inv->libs, total * sizeof(*libs));
    if (!libs)
        return kinv_error(err, "out of memory");
    memcpy(libs + inv->n_libs, run->added, run->n_added * sizeof(*libs));
    inv->libs = libs;
    inv->n_libs = total;
    uint32_t *order = malloc(total * sizeof(uint32_t)), *new_index = malloc(total * sizeof(uint32_t));
    struct kinv_library *sorted = malloc(total * sizeof(*sorted));
    if (!order || !new_index || !sorted) {
        free(order);
        free(new_index);
        free(sorted);
        return kinv_error(err, "out of memory");
    }
    for (uint32_t i = 0; i < total; i++)
        order[i] = i;
    qsort_r(order, total, sizeof(uint32_t), lib_path_cmp, libs);
    for (uint32_t i = 0; i < total; i++) {
        new_index[order[i]] = i;
        sorted[i] = libs[order[i]];
    }
    memcpy(libs, sorted, total * sizeof(*libs));
    free(sorted);
    free(order);
    for (size_t i = 0; i < inv->n_modules; i++)
        inv->modules[i].lib = new_index[inv->modules[i].lib];
    qsort(inv->modules, inv->n_modules, sizeof(*inv->modules), module_cmp);
    int rc = 0;
    for (size_t i = 0; i < inv->n_entries && !rc; i++) {
        struct kinv_entry *e = &inv->entries[i];
        uint32_t *l = kinv_arena_alloc(inv->arena, e->n_libs * sizeof(uint32_t), 4);
        uint8_t *emb = kinv_arena_alloc(inv->arena, e->n_libs, 1);
        if (!l || !emb) {
            rc = kinv_error(err, "out of memory");
            break;
        }
        /* insertion sort of (index, embedded) pairs: entries name few libraries */
        for (uint32_t k = 0; k < e->n_libs; k++) {
            uint32_t v = new_index[e->libs[k]];
            uint8_t b = e->lib_embedded[k];
            uint32_t at = k;
            while (at > 0 && l[at - 1] > v) {
                l[at] = l[at - 1];
                emb[at] = emb[at - 1];
                at--;
            }
            l[at] = v;
            emb[at] = b;
        }
        e->libs = l;
        e->lib_embedded = emb;
    }
    free(new_index);
    return rc;
}

static int apply_additions(struct run *run, const struct observation *add, size_t n_add,
                           struct kinv_err *err)
{
    struct kinv_inventory *inv = run->inv;
    size_t cap = inv->n_entries;
    for (size_t i = 0; i < n_add;) {
        size_t j = i;
        while (j < n_add && add[j].len == add[i].len && !memcmp(add[j].name, add[i].name, add[i].len))
            j++;
        uint32_t *libs = kinv_arena_alloc(inv->arena, (j - i) * sizeof(uint32_t), 4);
        uint32_t *tg = kinv_arena_alloc(inv->arena, (j - i) * sizeof(uint32_t), 4);
        if (!libs || !tg)
            return kinv_error(err, "out of memory");
        uint32_t nl = 0, nt = 0;
        for (size_t k = i; k < j; k++) {
            libs[nl++] = add[k].lib;
            if (add[k].target)
                tg[nt++] = add[k].target;
        }
        qsort(libs, nl, sizeof(uint32_t), u32_cmp);
        qsort(tg, nt, sizeof(uint32_t), u32_cmp);
        uint32_t ul, ut;
        const uint32_t *no = NULL;
        uint32_t *l2 = merge_u32(inv->arena, libs, nl, no, 0, &ul);   /* de-duplicates */
        uint32_t *t2 = merge_u32(inv->arena, tg, nt, no, 0, &ut);
        if (!l2 || !t2)
            return kinv_error(err, "out of memory");
        const struct kinv_entry *first;
        size_t count = kinv_lookup_name(inv, add[i].name, add[i].len, &first);
        struct kinv_entry *observed = NULL;
        for (size_t e = 0; e < count; e++)
            if (first[e].kind == KINV_KIND_OBSERVED)
                observed = (struct kinv_entry *)&first[e];
        if (observed) {
            uint32_t n1, n2;
            uint32_t *ml = merge_u32(inv->arena, observed->libs, observed->n_libs, l2, ul, &n1);
            uint32_t *mt = merge_u32(inv->arena, observed->targets, observed->n_targets, t2, ut, &n2);
            uint8_t *emb = kinv_arena_alloc(inv->arena, n1, 1);
            if (!ml || !mt || !emb)
                return kinv_error(err, "out of memory");
            memset(emb, 0, n1);
            observed->libs = ml;
            observed->n_libs = n1;
            observed->targets = mt;
            observed->n_targets = n2;
            observed->lib_embedded = emb;
        } else {
            if (kinv_grow((void **)&inv->entries, &cap, inv->n_entries + 1, sizeof(struct kinv_entry)))
                return kinv_error(err, "out of memory");
            uint8_t *emb = kinv_arena_alloc(inv->arena, ul, 1);
            if (!emb)
                return kinv_error(err, "out of memory");
            memset(emb, 0, ul);
            inv->entries[inv->n_entries++] = (struct kinv_entry){
                .name = add[i].name, .name_len = add[i].len, .kind = KINV_KIND_OBSERVED,
                .n_libs = ul, .libs = l2, .lib_embedded = emb, .n_targets = ut, .targets = t2 };
        }
        i = j;
    }
    return 0;
}

static int meta_cmp(const void *a, const void *b)
{
    return strcmp(((const struct kinv_meta *)a)->key, ((const struct kinv_meta *)b)->key);
}

/* "calibration.N.*" for each session, N after those already in the inventory. */
static int add_metadata(struct run *run, struct kat_session *const *sessions, const char *const *dirs,
                        size_t n_sessions, struct kinv_err *err)
{
    struct kinv_inventory *inv = run->inv;
    static const char *const keys[] = { "gpu", "driver_version", "cuda_version", "command" };
    size_t nk = sizeof(keys) / sizeof(keys[0]);
    unsigned long base = 0;
    for (size_t i = 0; i < inv->n_meta; i++) {
        unsigned long v;
        if (sscanf(inv->meta[i].key, "calibration.%lu.", &v) == 1 && v > base)
            base = v;
    }
    size_t total = inv->n_meta + n_sessions * (nk + 2);
    struct kinv_meta *meta = calloc(total, sizeof(*meta));
    if (!meta)
        return kinv_error(err, "out of memory");
    memcpy(meta, inv->meta, inv->n_meta * sizeof(*meta));
    size_t n = inv->n_meta;
    for (size_t s = 0; s < n_sessions; s++) {
        char key[96];
        const char *values[8];
        const char *names[8];
        size_t nv = 0;
        names[nv] = "dir";
        values[nv++] = dirs[s];
        for (size_t k = 0; k < nk; k++) {
            const char *v = kat_session_info(sessions[s], keys[k]);
            if (v && *v) {
                names[nv] = keys[k];
                values[nv++] = v;
            }
        }
        if (run->opt->allow_other_build) {
            names[nv] = "allow_other_build";
            values[nv++] = "yes";
        }
        for (size_t k = 0; k < nv; k++) {
            snprintf(key, sizeof(key), "calibration.%lu.%s", base + 1 + s, names[k]);
            meta[n].key = kinv_arena_strndup(inv->arena, key, strlen(key));
            meta[n].value = kinv_arena_strndup(inv->arena, values[k], strlen(values[k]));
            if (!meta[n].key || !meta[n].value) {
                free(meta);
                return kinv_error(err, "out of memory");
            }
            n++;
        }
    }
    qsort(meta, n, sizeof(*meta), meta_cmp);
    for (size_t i = 1; i < n; i++)
        if (!strcmp(meta[i - 1].key, meta[i].key)) {
            const char *repeated = meta[i].key; /* in the arena: outlives meta */
            free(meta);
            return kinv_error(err, "metadata key '%s' would repeat", repeated);
        }
    free(inv->meta);
    inv->meta = meta;
    inv->n_meta = n;
    return 0;
}

int kinv_calibrate(struct kinv_inventory *inv, const char *const *dirs, size_t n_sessions,
                   const struct kinv_calibrate_options *opt, struct kinv_calibrate_report *rep,
                   struct kinv_err *err)
{
    static const struct kinv_calibrate_options no_options = { 0 };
    struct kinv_calibrate_report scratch;
    if (!rep)
        rep = &scratch;
    memset(rep, 0, sizeof(*rep));
    struct run run = { .inv = inv, .n_libs_before = inv->n_libs, .opt = opt ? opt : &no_options };
    struct kat_session **sessions = calloc(n_sessions + 1, sizeof(*sessions));
    struct observation *add = NULL;
    size_t n_add = 0;
    int rc = sessions ? 0 : kinv_error(err, "out of memory");
    for (size_t s = 0; rc == 0 && s < n_sessions; s++) {
        char msg[512];
        if (kat_session_open(dirs[s], &sessions[s], msg, sizeof(msg))) {
            rc = kinv_error(err, "cannot calibrate from session '%s': %s", dirs[s], msg);
            break;
        }
        rep->sessions++;
        for (size_t i = 0; rc == 0 && i < kat_session_trace_count(sessions[s]); i++) {
            const char *path = kat_session_trace_path(sessions[s], i);
            struct kat_trace *t = kat_trace_open(path, msg, sizeof(msg));
            if (!t) {
                rc = kinv_error(err, "cannot calibrate from session '%s': %s", dirs[s], msg);
                break;
            }
            rep->traces++;
            struct kinv_err e;
            if (calibrate_trace(&run, t, rep, &e))
                rc = kinv_error(err, "cannot calibrate from session '%s': trace '%s': %s", dirs[s],
                                kat_session_trace_name(sessions[s], i), e.msg);
            kat_trace_close(t);
        }
    }
    if (rc == 0)
        rc = plan_additions(&run, rep, &add, &n_add, err);
    if (rc == 0) {
        rep->libraries_added = run.n_added;
        /* drop added libraries no addition refers to (their names were all exact) */
        uint32_t *used = calloc(run.n_added + 1, sizeof(uint32_t));
        if (!used)
            rc = kinv_error(err, "out of memory");
        for (size_t i = 0; rc == 0 && i < n_add; i++)
            if (add[i].lib >= run.n_libs_before)
                used[add[i].lib - run.n_libs_before] = 1;
        size_t kept = 0;
        for (size_t i = 0; rc == 0 && i < run.n_added; i++) {
            if (used[i]) {
                run.added[kept] = run.added[i];
                used[i] = (uint32_t)(run.n_libs_before + kept++);
            }
        }
        for (size_t i = 0; rc == 0 && i < n_add; i++)
            if (add[i].lib >= run.n_libs_before)
                add[i].lib = used[add[i].lib - run.n_libs_before];
        run.n_added = kept;
        rep->libraries_added = kept;
        free(used);
    }
    if (rc == 0)
        rc = apply_additions(&run, add, n_add, err);
    if (rc == 0)
        rc = renumber_libraries(&run, err);
    if (rc == 0) {
        qsort(inv->entries, inv->n_entries, sizeof(*inv->entries), entry_sort_cmp);
        rc = add_metadata(&run, sessions, dirs, n_sessions, err);
    }
    if (rc == 0)
        rc = kinv_index(inv, err);
    if (rc == 0) {
        /* what we write must load: serialize and verify it once here */
        char *text;
        size_t len;
        struct kinv_inventory *check = NULL;
        struct kinv_err e;
        rc = kinv_serialize(inv, &text, &len, err);
        if (rc == 0) {
            if (kinv_load_buffer(text, len, "calibrated inventory", &check, &e))
                rc = kinv_error(err, "the calibrated inventory does not verify: %s", e.msg);
            kinv_free(check);
            free(text);
        }
    }
    for (size_t s = 0; sessions && s < n_sessions; s++)
        if (sessions[s])
            kat_session_close(sessions[s]);
    free(sessions);
    free(run.added);
    free(run.obs);
    free(add);
    return rc;
}
