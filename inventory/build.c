/*
 * build.c - read vendor libraries and build an inventory.
 *
 * Two parallel phases over a shared task list (an atomic cursor, so the
 * threads balance themselves):
 *   1. per library: the file digest, and the structure (libelf section
 *      table, soname, every fatbin container and its entries, format
 *      strings);
 *   2. per fatbin entry, largest first: decompress, read the cubin's entry
 *      symbols or the PTX's .entry names.
 * Then one merge: sort the (name, kind, library, target) records and fold
 * them into de-duplicated entries.  The first error stops the build.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <gelf.h>
#include <libelf.h>

#include "internal.h"
#include "safe_file.h"

struct rec {
    const char *name;
    uint32_t len;
    uint8_t kind;
    uint8_t embedded;
    uint32_t lib;
    uint32_t target;
};

struct recs {
    struct rec *v;
    size_t n, cap;
    struct kinv_arena *arena;
    int oom;
};

static int recs_add(struct recs *r, const char *name, size_t len, unsigned kind, int embedded,
                    uint32_t lib, uint32_t target)
{
    if (len > UINT32_MAX || kinv_grow((void **)&r->v, &r->cap, r->n + 1, sizeof(struct rec))) {
        r->oom = 1;
        return -1;
    }
    char *copy = kinv_arena_strndup(r->arena, name, len);
    if (!copy) {
        r->oom = 1;
        return -1;
    }
    r->v[r->n++] = (struct rec){ copy, (uint32_t)len, (uint8_t)kind, (uint8_t)embedded, lib, target };
    return 0;
}

struct lib_job {
    char *path;
    uint8_t *image;
    size_t size;
    int mapped;
    char *soname;
    uint8_t digest[16];
    struct kinv_fatbin_entry *ents;
    size_t n_ents, cap_ents;
    struct recs pats;
    struct kinv_module *conts;   /* digests of whole containers (phase 1) */
    size_t n_conts, cap_conts;
    struct kinv_lib_stats st;
    uint64_t atomic_bytes;       /* decompressed bytes (phase 2, atomic) */
    uint32_t atomic_symbols;     /* cubin entry symbols (phase 2, atomic) */
};

enum { TASK_DIGEST, TASK_STRUCTURE, TASK_ENTRY };

struct task {
    uint8_t type;
    uint32_t lib;
    size_t idx;
    uint64_t cost;
};

struct builder {
    struct lib_job *libs;
    size_t n_libs;
    struct task *tasks;
    size_t n_tasks;
    atomic_size_t next;
    atomic_int failed;
    pthread_mutex_t lock;
    struct kinv_err first;
    const struct kinv_build_options *opt;
};

struct worker {
    struct builder *b;
    struct recs out;
    struct kinv_decoder *dec;
    struct kinv_module *mods;
    size_t n_mods, cap_mods;
    int oom;
};

static void fail(struct builder *b, const struct kinv_err *e)
{
    pthread_mutex_lock(&b->lock);
    if (!atomic_load(&b->failed)) {
        b->first = *e;
        atomic_store(&b->failed, 1);
    }
    pthread_mutex_unlock(&b->lock);
}

/* ---- phase 1: structure ---------------------------------------------------- */

struct entry_ctx {
    struct lib_job *job;
    uint32_t lib;
    int embedded;
    int oom;
};

/* A module image can be a whole fatbin container: keep its digest too. */
static int on_container(void *ctx, uint64_t start, uint64_t end)
{
    struct entry_ctx *c = ctx;
    struct lib_job *j = c->job;
    if (kinv_grow((void **)&j->conts, &j->cap_conts, j->n_conts + 1, sizeof(struct kinv_module))) {
        c->oom = 1;
        return -1;
    }
    struct kinv_module *m = &j->conts[j->n_conts++];
    kinv_digest(j->image + start, end - start, m->digest);
    m->lib = c->lib;
    m->target = 0;
    m->embedded = (uint8_t)c->embedded;
    return 0;
}

static int on_entry(void *ctx, const struct kinv_fatbin_entry *e)
{
    struct entry_ctx *c = ctx;
    struct lib_job *j = c->job;
    switch (e->compression) {
    case KINV_COMP_ZSTD: j->st.compressed_zstd++; break;
    case KINV_COMP_LZ4: case KINV_COMP_LZ4F: j->st.compressed_lz4++; break;
    default: j->st.uncompressed++; break;
    }
    if (e->kind == KINV_FATBIN_KIND_CUBIN)
        j->st.cubin_entries++;
    else if (e->kind == KINV_FATBIN_KIND_PTX)
        j->st.ptx_entries++;
    else {
        j->st.other_entries++;
        return 0;
    }
    if (kinv_grow((void **)&j->ents, &j->cap_ents, j->n_ents + 1, sizeof(*e))) {
        c->oom = 1;
        return -1;
    }
    j->ents[j->n_ents] = *e;
    j->ents[j->n_ents++].embedded = (uint8_t)c->embedded;
    return 0;
}

struct pattern_ctx {
    struct lib_job *job;
    uint32_t lib;
};

static int on_format_string(void *ctx, const char *s, size_t len)
{
    struct pattern_ctx *c = ctx;
    c->job->st.patterns++;
    return recs_add(&c->job->pats, s, len, KINV_KIND_PATTERN, 0, c->lib, 0);
}

struct section {
    const char *name;
    uint32_t type;
    uint64_t flags, offset, size;
};

static int read_structure(struct lib_job *j, uint32_t lib, const struct kinv_build_options *opt,
                          struct kinv_err *err)
{
    const uint8_t *img = j->image;
    if (j->size < EI_NIDENT || memcmp(img, ELFMAG, SELFMAG))
        return kinv_error(err, "not an ELF file (offset 0)");
    if (img[EI_DATA] != ELFDATA2LSB)
        return kinv_error(err, "unsupported ELF byte order at offset %d", EI_DATA);
    if (!kinv_elf_ready())
        return kinv_error(err, "libelf is unusable: %s", elf_errmsg(-1));
    if (kinv_elf_check_shdrs(img, j->size, "the", err))
        return -1;
    int is64 = img[EI_CLASS] == ELFCLASS64;
    uint64_t shoff = is64 ? kinv_rd64(img + 0x28) : kinv_rd32(img + 0x20);
    uint16_t shentsize = kinv_rd16(img + (is64 ? 0x3a : 0x2e));
    Elf *elf = elf_memory((char *)j->image, j->size);
    if (!elf)
        return kinv_error(err, "corrupt ELF file (header at offset 0): %s", elf_errmsg(-1));
    int rc = -1;
    struct section *secs = NULL;
    size_t n = 0, cap = 0, shstrndx;
    if (elf_kind(elf) != ELF_K_ELF) {
        kinv_error(err, "not an ELF object (header at offset 0)");
        goto out;
    }
    if (elf_getshdrstrndx(elf, &shstrndx)) {
        kinv_error(err, "corrupt ELF section header table at offset 0x%llx: %s",
                   (unsigned long long)shoff, elf_errmsg(-1));
        goto out;
    }
    for (Elf_Scn *scn = elf_nextscn(elf, NULL); scn; scn = elf_nextscn(elf, scn)) {
        GElf_Shdr sh;
        if (!gelf_getshdr(scn, &sh)) {
            kinv_error(err, "corrupt ELF section header %zu at offset 0x%llx: %s", elf_ndxscn(scn),
                       (unsigned long long)(shoff + elf_ndxscn(scn) * (uint64_t)shentsize), elf_errmsg(-1));
            goto out;
        }
        const char *name = elf_strptr(elf, shstrndx, sh.sh_name);
        if (!name)
            name = "";
        if (sh.sh_type != SHT_NOBITS && sh.sh_size &&
            (sh.sh_offset > j->size || sh.sh_size > j->size - sh.sh_offset)) {
            kinv_error(err, "section '%s' (offset 0x%llx, %llu bytes) runs past the end of the file "
                       "(%zu bytes)", name, (unsigned long long)sh.sh_offset,
                       (unsigned long long)sh.sh_size, j->size);
            goto out;
        }
        if (kinv_grow((void **)&secs, &cap, n + 1, sizeof(*secs))) {
            kinv_error(err, "out of memory");
            goto out;
        }
        secs[n++] = (struct section){ name, sh.sh_type, sh.sh_flags, sh.sh_offset, sh.sh_size };
        if (sh.sh_type == SHT_DYNAMIC && !j->soname) {
            Elf_Data *d = elf_getdata(scn, NULL);
            size_t dsize = gelf_fsize(elf, ELF_T_DYN, 1, EV_CURRENT);
            for (size_t i = 0; d && dsize && i < d->d_size / dsize; i++) {
                GElf_Dyn dyn;
                if (!gelf_getdyn(d, (int)i, &dyn) || dyn.d_tag == DT_NULL)
                    break;
                if (dyn.d_tag == DT_SONAME) {
                    const char *s = elf_strptr(elf, sh.sh_link, dyn.d_un.d_val);
                    if (s && *s)
                        j->soname = strdup(s);
                    break;
                }
            }
        }
    }

    struct entry_ctx ec = { j, lib, 0, 0 };
    for (size_t i = 0; i < n; i++) {
        struct section *s = &secs[i];
        if (s->type == SHT_NOBITS || !s->size)
            continue;
        int fatbin = !strcmp(s->name, ".nv_fatbin");
        ec.embedded = !fatbin;
        if (fatbin) {
            if (kinv_fatbin_parse_section(img, s->offset, s->offset + s->size, on_entry, on_container,
                                          &ec, &j->st.containers_fatbin_section, err))
                goto entry_error;
        } else if (!opt->no_scan) {
            if (kinv_fatbin_scan(img, s->offset, s->offset + s->size, on_entry, on_container, &ec,
                                 &j->st.containers_elsewhere, &j->st.rejected_candidates, err))
                goto entry_error;
        }
        if (!opt->no_patterns && !fatbin && s->type == SHT_PROGBITS && (s->flags & SHF_ALLOC) &&
            !(s->flags & (SHF_WRITE | SHF_EXECINSTR))) {
            struct pattern_ctx pc = { j, lib };
            if (kinv_scan_format_strings(img + s->offset, s->size, on_format_string, &pc)) {
                kinv_error(err, "out of memory");
                goto out;
            }
        }
    }
    rc = 0;
    goto out;
entry_error:
    if (ec.oom)
        kinv_error(err, "out of memory");
out:
    free(secs);
    elf_end(elf);
    return rc;
}

/* ---- phase 2: entries -------------------------------------------------------- */

struct name_ctx {
    struct recs *out;
    unsigned kind;
    int embedded;
    uint32_t lib, target;
    uint32_t count;
};

static int on_name(void *ctx, const char *name, size_t len)
{
    struct name_ctx *c = ctx;
    c->count++;
    return recs_add(c->out, name, len, c->kind, c->embedded, c->lib, c->target);
}

static uint32_t entry_target(const struct kinv_fatbin_entry *e)
{
    unsigned suffix = (e->flags & KINV_FATBIN_FLAG_ARCH_SPECIFIC) ? 'a'
                    : (e->flags & KINV_FATBIN_FLAG_FAMILY_SPECIFIC) ? 'f' : 0;
    unsigned family = e->kind == KINV_FATBIN_KIND_PTX ? KINV_TARGET_COMPUTE : KINV_TARGET_SM;
    return kinv_target_pack(family, e->arch, suffix);
}

static int read_entry_names(struct worker *w, struct lib_job *j, uint32_t lib,
                            const struct kinv_fatbin_entry *e, struct kinv_err *err)
{
    const uint8_t *data;
    size_t size;
    if (kinv_decode_entry(w->dec, j->image, e, &data, &size, err))
        return -1;
    __atomic_fetch_add(&j->atomic_bytes, (uint64_t)size, __ATOMIC_RELAXED);
    struct name_ctx nc = { &w->out, 0, e->embedded, lib, entry_target(e), 0 };
    char tname[32];
    if (kinv_target_format(nc.target, tname, sizeof(tname)) < 0)
        snprintf(tname, sizeof(tname), "arch %u", e->arch);
    if (e->kind == KINV_FATBIN_KIND_CUBIN) {
        nc.kind = KINV_KIND_CUBIN;
        struct kinv_err inner;
        /* an uncompressed cubin sits in the image: libelf gets a private copy
           only when it is not aligned for it */
        uint8_t *copy = NULL;
        if (e->compression == KINV_COMP_NONE && ((uintptr_t)data & 7)) {
            copy = malloc(size ? size : 1);
            if (!copy)
                return kinv_error(err, "out of memory");
            memcpy(copy, data, size);
            data = copy;
        }
        int rc = kinv_cubin_entries(data, size, on_name, &nc, &inner);
        free(copy);
        if (rc) {
            if (w->out.oom)
                return kinv_error(err, "out of memory");
            return kinv_error(err, "fatbin entry at offset 0x%llx (cubin for %s, payload at offset "
                              "0x%llx): %s", (unsigned long long)e->offset, tname,
                              (unsigned long long)e->payload_offset, inner.msg);
        }
        __atomic_fetch_add(&j->atomic_symbols, nc.count, __ATOMIC_RELAXED);
        if (kinv_grow((void **)&w->mods, &w->cap_mods, w->n_mods + 1, sizeof(struct kinv_module)))
            return kinv_error(err, "out of memory");
        struct kinv_module *m = &w->mods[w->n_mods++];
        kinv_digest(data, size, m->digest);
        m->lib = lib;
        m->target = nc.target;
        m->embedded = e->embedded;
    } else {
        nc.kind = KINV_KIND_PTX;
        if (kinv_ptx_entries((const char *)data, size, on_name, &nc))
            return kinv_error(err, "out of memory");
    }
    return 0;
}

static void *worker_main(void *arg)
{
    struct worker *w = arg;
    struct builder *b = w->b;
    for (;;) {
        if (atomic_load(&b->failed))
            break;
        size_t i = atomic_fetch_add(&b->next, 1);
        if (i >= b->n_tasks)
            break;
        struct task *t = &b->tasks[i];
        struct lib_job *j = &b->libs[t->lib];
        struct kinv_err e;
        int rc = 0;
        switch (t->type) {
        case TASK_DIGEST:
            kinv_digest(j->image, j->size, j->digest);
            break;
        case TASK_STRUCTURE:
            rc = read_structure(j, t->lib, b->opt, &e);
            break;
        case TASK_ENTRY:
            rc = read_entry_names(w, j, t->lib, &j->ents[t->idx], &e);
            break;
        }
        if (rc) {
            struct kinv_err full;
            kinv_error(&full, "cannot read '%s': %s", j->path, e.msg);
            fail(b, &full);
            break;
        }
    }
    return NULL;
}

static int task_cmp(const void *a, const void *b)
{
    const struct task *x = a, *y = b;
    if (x->cost != y->cost)
        return x->cost < y->cost ? 1 : -1;
    if (x->lib != y->lib)
        return x->lib < y->lib ? -1 : 1;
    return x->idx < y->idx ? -1 : x->idx > y->idx;
}

static int run_phase(struct builder *b, struct worker *w, int threads)
{
    qsort(b->tasks, b->n_tasks, sizeof(struct task), task_cmp);
    atomic_store(&b->next, 0);
    if (threads > (int)b->n_tasks)
        threads = b->n_tasks ? (int)b->n_tasks : 1;
    pthread_t tid[256];
    int started = 0;
    for (int i = 1; i < threads; i++) {
        if (pthread_create(&tid[started], NULL, worker_main, &w[i]))
            break;
        started++;
    }
    worker_main(&w[0]);
    for (int i = 0; i < started; i++)
        pthread_join(tid[i], NULL);
    return atomic_load(&b->failed) ? -1 : 0;
}

/* ---- merge ------------------------------------------------------------------------ */

static int rec_cmp(const void *a, const void *b)
{
    const struct rec *x = a, *y = b;
    size_t n = x->len < y->len ? x->len : y->len;
    int c = memcmp(x->name, y->name, n);
    if (c)
        return c;
    if (x->len != y->len)
        return x->len < y->len ? -1 : 1;
    if (x->kind != y->kind)
        return (int)x->kind - (int)y->kind;
    if (x->lib != y->lib)
        return x->lib < y->lib ? -1 : 1;
    return x->target < y->target ? -1 : x->target > y->target;
}

static int merge(struct kinv_inventory *inv, struct rec *all, size_t n, struct kinv_err *err)
{
    qsort(all, n, sizeof(*all), rec_cmp);
    size_t groups = 0;
    for (size_t i = 0; i < n; i++)
        if (i == 0 || all[i].len != all[i - 1].len || all[i].kind != all[i - 1].kind ||
            memcmp(all[i].name, all[i - 1].name, all[i].len))
            groups++;
    inv->entries = calloc(groups ? groups : 1, sizeof(struct kinv_entry));
    if (!inv->entries)
        return kinv_error(err, "out of memory");
    uint32_t *libs = malloc((n ? n : 1) * sizeof(uint32_t));
    uint32_t *tgs = malloc((n ? n : 1) * sizeof(uint32_t));
    uint8_t *emb = malloc(n ? n : 1);
    if (!libs || !tgs || !emb) {
        free(libs);
        free(tgs);
        free(emb);
        return kinv_error(err, "out of memory");
    }
    for (size_t i = 0; i < n;) {
        size_t k = i;
        while (k < n && all[k].len == all[i].len && all[k].kind == all[i].kind &&
               !memcmp(all[k].name, all[i].name, all[i].len))
            k++;
        /* records [i, k) sort by library then target: collect both sets */
        size_t nl = 0, nt = 0;
        for (size_t r = i; r < k; r++) {
            if (!nl || libs[nl - 1] != all[r].lib) {
                libs[nl] = all[r].lib;
                emb[nl++] = all[r].embedded;
            } else if (!all[r].embedded) {
                emb[nl - 1] = 0;    /* also in the library's .nv_fatbin */
            }
            if (all[r].kind != KINV_KIND_PATTERN)
                tgs[nt++] = all[r].target;
        }
        /* targets: sort and unique (they repeat across libraries) */
        for (size_t a = 1; a < nt; a++)
            for (size_t b = a; b > 0 && tgs[b - 1] > tgs[b]; b--) {
                uint32_t t = tgs[b];
                tgs[b] = tgs[b - 1];
                tgs[b - 1] = t;
            }
        size_t u = 0;
        for (size_t a = 0; a < nt; a++)
            if (!u || tgs[u - 1] != tgs[a])
                tgs[u++] = tgs[a];
        struct kinv_entry *e = &inv->entries[inv->n_entries++];
        char *name = kinv_arena_strndup(inv->arena, all[i].name, all[i].len);
        uint32_t *el = kinv_arena_alloc(inv->arena, nl * sizeof(uint32_t), 4);
        uint32_t *et = kinv_arena_alloc(inv->arena, (u ? u : 1) * sizeof(uint32_t), 4);
        uint8_t *ee = kinv_arena_alloc(inv->arena, nl, 1);
        if (!name || !el || !et || !ee) {
            free(libs);
            free(tgs);
            free(emb);
            return kinv_error(err, "out of memory");
        }
        memcpy(el, libs, nl * sizeof(uint32_t));
        memcpy(et, tgs, u * sizeof(uint32_t));
        memcpy(ee, emb, nl);
        e->lib_embedded = ee;
        e->name = name;
        e->name_len = all[i].len;
        e->kind = all[i].kind;
        e->libs = el;
        e->n_libs = (uint32_t)nl;
        e->targets = et;
        e->n_targets = (uint32_t)u;
        i = k;
    }
    free(libs);
    free(tgs);
    free(emb);
    return 0;
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

/* Sorts and de-duplicates; embedded only when every copy is. */
static void merge_modules(struct kinv_module *m, size_t *n)
{
    qsort(m, *n, sizeof(*m), module_cmp);
    size_t u = 0;
    for (size_t i = 0; i < *n; i++) {
        if (u && !module_cmp(&m[u - 1], &m[i])) {
            m[u - 1].embedded &= m[i].embedded;
            continue;
        }
        m[u++] = m[i];
    }
    *n = u;
}

/* ---- driver ------------------------------------------------------------------------ */

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + t.tv_nsec / 1e9;
}

/* Resident memory of this process, split as /proc/self/status does (KiB; -1 unknown). */
static void resident(long *anon, long *file)
{
    *anon = *file = -1;
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    while (f && fgets(line, sizeof(line), f)) {
        if (!strncmp(line, "RssAnon:", 8))
            *anon = strtol(line + 8, NULL, 10);
        else if (!strncmp(line, "RssFile:", 8))
            *file = strtol(line + 8, NULL, 10);
    }
    if (f)
        fclose(f);
}

/* Each worker's output arena and decoder, each library's pattern arena. */
static int prepare_workers(struct builder *b, struct worker *w, int threads, struct kinv_err *err)
{
    for (int i = 0; i < threads; i++) {
        w[i].b = b;
        w[i].out.arena = kinv_arena_new();
        w[i].dec = kinv_decoder_new();
        if (!w[i].out.arena || !w[i].dec)
            return kinv_error(err, "out of memory");
    }
    for (size_t i = 0; i < b->n_libs; i++) {
        b->libs[i].pats.arena = kinv_arena_new();
        if (!b->libs[i].pats.arena)
            return kinv_error(err, "out of memory");
    }
    return 0;
}

/* Phase 1: every library's structure (its containers and entries) and its digest. */
static int run_library_phase(struct builder *b, struct worker *w, int threads, struct kinv_err *err)
{
    struct lib_job *jobs = b->libs;
    b->tasks = calloc(2 * b->n_libs + 1, sizeof(struct task));
    if (!b->tasks)
        return kinv_error(err, "out of memory");
    for (size_t i = 0; i < b->n_libs; i++) {
        b->tasks[b->n_tasks++] = (struct task){ TASK_STRUCTURE, (uint32_t)i, 0, jobs[i].size };
        b->tasks[b->n_tasks++] = (struct task){ TASK_DIGEST, (uint32_t)i, 0, jobs[i].size / 2 };
    }
    if (run_phase(b, w, threads)) {
        *err = b->first;
        return -1;
    }
    return 0;
}

/* Phase 2: every entry the first phase found, decoded and read for names. */
static int run_entry_phase(struct builder *b, struct worker *w, int threads, struct kinv_err *err)
{
    struct lib_job *jobs = b->libs;
    size_t n_ents = 0;
    for (size_t i = 0; i < b->n_libs; i++)
        n_ents += jobs[i].n_ents;
    free(b->tasks);
    b->n_tasks = 0;
    b->tasks = calloc(n_ents + 1, sizeof(struct task));
    if (!b->tasks)
        return kinv_error(err, "out of memory");
    for (size_t i = 0; i < b->n_libs; i++)
        for (size_t k = 0; k < jobs[i].n_ents; k++)
            b->tasks[b->n_tasks++] = (struct task){ TASK_ENTRY, (uint32_t)i, k,
                                                    jobs[i].ents[k].stored_size };
    if (run_phase(b, w, threads)) {
        *err = b->first;
        return -1;
    }
    return 0;
}

/* Every worker's records and every library's patterns, in one array (*all,
 * the caller's to free), merged into the inventory's entries. */
static int merge_entries(struct kinv_inventory *inv, struct lib_job *jobs, size_t n_jobs, struct worker *w,
                         int threads, struct rec **all_out, struct kinv_err *err)
{
    size_t total = 0;
    for (int i = 0; i < threads; i++)
        total += w[i].out.n;
    for (size_t i = 0; i < n_jobs; i++)
        total += jobs[i].pats.n;
    struct rec *all = *all_out = malloc((total ? total : 1) * sizeof(*all));
    if (!all)
        return kinv_error(err, "out of memory");
    size_t at = 0;
    for (int i = 0; i < threads; i++) {
        if (w[i].out.n)
            memcpy(all + at, w[i].out.v, w[i].out.n * sizeof(*all));
        at += w[i].out.n;
    }
    for (size_t i = 0; i < n_jobs; i++) {
        if (jobs[i].pats.oom)
            return kinv_error(err, "out of memory");
        if (jobs[i].pats.n)
            memcpy(all + at, jobs[i].pats.v, jobs[i].pats.n * sizeof(*all));
        at += jobs[i].pats.n;
    }
    return merge(inv, all, total, err);
}

/* The workers' cubin modules and the libraries' containers, sorted and de-duplicated. */
static int merge_all_modules(struct kinv_inventory *inv, struct lib_job *jobs, size_t n_jobs, struct worker *w,
                             int threads, struct kinv_err *err)
{
    size_t n_mods = 0;
    for (int i = 0; i < threads; i++)
        n_mods += w[i].n_mods;
    for (size_t i = 0; i < n_jobs; i++)
        n_mods += jobs[i].n_conts;
    inv->modules = malloc((n_mods ? n_mods : 1) * sizeof(struct kinv_module));
    if (!inv->modules)
        return kinv_error(err, "out of memory");
    for (int i = 0; i < threads; i++) {
        if (w[i].n_mods)
            memcpy(inv->modules + inv->n_modules, w[i].mods, w[i].n_mods * sizeof(struct kinv_module));
        inv->n_modules += w[i].n_mods;
    }
    for (size_t i = 0; i < n_jobs; i++) {
        if (jobs[i].n_conts)
            memcpy(inv->modules + inv->n_modules, jobs[i].conts, jobs[i].n_conts * sizeof(struct kinv_module));
        inv->n_modules += jobs[i].n_conts;
    }
    merge_modules(inv->modules, &inv->n_modules);
    return 0;
}

/* The inventory's libraries (path, soname, size, digest), and each job's
 * final counts. */
static int fill_libraries(struct kinv_inventory *inv, struct lib_job *jobs, size_t n_jobs, struct kinv_err *err)
{
    inv->libs = calloc(n_jobs ? n_jobs : 1, sizeof(struct kinv_library));
    if (!inv->libs)
        return kinv_error(err, "out of memory");
    inv->n_libs = n_jobs;
    for (size_t i = 0; i < n_jobs; i++) {
        struct kinv_library *l = &inv->libs[i];
        l->path = kinv_arena_strndup(inv->arena, jobs[i].path, strlen(jobs[i].path));
        l->soname = jobs[i].soname ? kinv_arena_strndup(inv->arena, jobs[i].soname,
                                                        strlen(jobs[i].soname)) : NULL;
        if (!l->path || (jobs[i].soname && !l->soname))
            return kinv_error(err, "out of memory");
        l->size = jobs[i].size;
        memcpy(l->digest, jobs[i].digest, 16);
        jobs[i].st.decompressed_bytes = jobs[i].atomic_bytes;
        jobs[i].st.cubin_symbols = jobs[i].atomic_symbols;
    }
    return 0;
}

/* --verbose: what each library held. */
static void print_library_stats(FILE *f, const struct lib_job *jobs, size_t n_jobs)
{
    for (size_t i = 0; i < n_jobs; i++) {
        const struct kinv_lib_stats *s = &jobs[i].st;
        fprintf(f, "%s: %u containers in .nv_fatbin, %u elsewhere (%u rejected magic hits); "
                "%u cubin, %u ptx, %u other entries (zstd %u, lz4 %u, plain %u); %llu bytes "
                "decompressed; %u entry symbols; %u format strings\n",
                jobs[i].path, s->containers_fatbin_section, s->containers_elsewhere,
                s->rejected_candidates, s->cubin_entries, s->ptx_entries, s->other_entries,
                s->compressed_zstd, s->compressed_lz4, s->uncompressed,
                (unsigned long long)s->decompressed_bytes, s->cubin_symbols, s->patterns);
    }
}

static void free_workers(struct worker *w, int threads, struct lib_job *jobs, size_t n_jobs)
{
    if (w) {
        for (int i = 0; i < threads; i++) {
            free(w[i].out.v);
            free(w[i].mods);
            kinv_arena_free(w[i].out.arena);
            kinv_decoder_free(w[i].dec);
        }
        free(w);
    }
    for (size_t i = 0; i < n_jobs; i++) {
        free(jobs[i].pats.v);
        kinv_arena_free(jobs[i].pats.arena);
        jobs[i].pats.v = NULL;
        jobs[i].pats.arena = NULL;
    }
}

static int build_jobs(struct lib_job *jobs, size_t n_jobs, const struct kinv_build_options *opt,
                      struct kinv_inventory **out, struct kinv_lib_stats **stats_out,
                      struct kinv_err *err)
{
    int threads = opt->threads > 0 ? opt->threads : (int)sysconf(_SC_NPROCESSORS_ONLN);
    if (threads < 1)
        threads = 1;
    if (threads > 256)
        threads = 256;
    struct builder b = { .libs = jobs, .n_libs = n_jobs, .opt = opt };
    pthread_mutex_init(&b.lock, NULL);
    atomic_init(&b.failed, 0);
    atomic_init(&b.next, 0);
    struct worker *w = calloc((size_t)threads, sizeof(*w));
    struct kinv_inventory *inv = kinv_new();
    struct rec *all = NULL;
    int rc = -1;
    if (!w || !inv) {
        kinv_error(err, "out of memory");
        goto out;
    }
    if (prepare_workers(&b, w, threads, err))
        goto out;

    double t_start = now(), t_p1 = 0, t_p2 = 0, t_merge = 0;
    if (run_library_phase(&b, w, threads, err))
        goto out;
    t_p1 = now();
    if (run_entry_phase(&b, w, threads, err))
        goto out;
    t_p2 = now();
    long anon_kib = -1, file_kib = -1;
    if (opt->verbose)
        resident(&anon_kib, &file_kib);     /* the high point: every record, every page touched */
    if (merge_entries(inv, jobs, n_jobs, w, threads, &all, err) ||
        merge_all_modules(inv, jobs, n_jobs, w, threads, err) ||
        fill_libraries(inv, jobs, n_jobs, err) ||
        kinv_index(inv, err))
        goto out;
    t_merge = now();
    if (opt->verbose && opt->stats)
        fprintf(opt->stats, "timing: libraries %.3f s, entries %.3f s, merge %.3f s (%d threads); "
                "resident before the merge: %.1f MiB anonymous, %.1f MiB of mapped files\n",
                t_p1 - t_start, t_p2 - t_p1, t_merge - t_p2, threads, anon_kib / 1024.0, file_kib / 1024.0);
    if (stats_out) {
        *stats_out = calloc(n_jobs ? n_jobs : 1, sizeof(struct kinv_lib_stats));
        if (!*stats_out) {
            kinv_error(err, "out of memory");
            goto out;
        }
        for (size_t i = 0; i < n_jobs; i++)
            (*stats_out)[i] = jobs[i].st;
    }
    if (opt->verbose && opt->stats)
        print_library_stats(opt->stats, jobs, n_jobs);
    *out = inv;
    inv = NULL;
    rc = 0;
out:
    free(all);
    free(b.tasks);
    free_workers(w, threads, jobs, n_jobs);
    kinv_free(inv);
    pthread_mutex_destroy(&b.lock);
    return rc;
}

static void release_jobs(struct lib_job *jobs, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (jobs[i].mapped)
            munmap(jobs[i].image, jobs[i].size);
        else
            free(jobs[i].image);
        free(jobs[i].path);
        free(jobs[i].soname);
        free(jobs[i].ents);
        free(jobs[i].conts);
    }
    free(jobs);
}

static int str_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int has_elf_magic(const char *path)
{
    int fd = kat_open_input(path, 0, NULL, NULL, 0); /* a FIFO is no library, and no hang */
    if (fd < 0)
        return 0;
    char m[4];
    ssize_t r = read(fd, m, 4);
    close(fd);
    return r == 4 && !memcmp(m, ELFMAG, 4);
}

static int add_path(char ***list, size_t *n, size_t *cap, const char *path, struct kinv_err *err)
{
    char *real = realpath(path, NULL);
    if (!real)
        return kinv_error(err, "cannot read '%s': %s", path, strerror(errno));
    if (kinv_grow((void **)list, cap, *n + 1, sizeof(char *))) {
        free(real);
        return kinv_error(err, "out of memory");
    }
    (*list)[(*n)++] = real;
    return 0;
}

static int collect(const char *const *paths, size_t n_paths, char ***out, size_t *n_out,
                   struct kinv_err *err)
{
    char **list = NULL;
    size_t n = 0, cap = 0;
    for (size_t i = 0; i < n_paths; i++) {
        struct stat st;
        if (stat(paths[i], &st)) {
            kinv_error(err, "cannot read '%s': %s", paths[i], strerror(errno));
            goto fail;
        }
        if (S_ISREG(st.st_mode)) {
            if (add_path(&list, &n, &cap, paths[i], err))
                goto fail;
            continue;
        }
        if (!S_ISDIR(st.st_mode)) {
            kinv_error(err, "cannot read '%s': neither a file nor a directory", paths[i]);
            goto fail;
        }
        DIR *d = opendir(paths[i]);
        if (!d) {
            kinv_error(err, "cannot read directory '%s': %s", paths[i], strerror(errno));
            goto fail;
        }
        struct dirent *de;
        while ((de = readdir(d))) {
            if (de->d_name[0] == '.')
                continue;
            size_t len = strlen(paths[i]) + strlen(de->d_name) + 2;
            char *full = malloc(len);
            if (!full) {
                closedir(d);
                kinv_error(err, "out of memory");
                goto fail;
            }
            snprintf(full, len, "%s/%s", paths[i], de->d_name);
            struct stat ls;
            int ok = !lstat(full, &ls) && S_ISREG(ls.st_mode) && has_elf_magic(full);
            int rc = ok ? add_path(&list, &n, &cap, full, err) : 0;
            free(full);
            if (rc) {
                closedir(d);
                goto fail;
            }
        }
        closedir(d);
    }
    qsort(list, n, sizeof(char *), str_cmp);
    size_t u = 0;
    for (size_t i = 0; i < n; i++) {
        if (u && !strcmp(list[u - 1], list[i]))
            free(list[i]);
        else
            list[u++] = list[i];
    }
    *out = list;
    *n_out = u;
    return 0;
fail:
    for (size_t i = 0; i < n; i++)
        free(list[i]);
    free(list);
    return -1;
}

int kinv_build(const char *const *paths, size_t n_paths, const struct kinv_build_options *opt,
               struct kinv_inventory **out, struct kinv_lib_stats **stats, struct kinv_err *err)
{
    struct kinv_build_options defaults = { 0 };
    if (!opt)
        opt = &defaults;
    char **files;
    size_t n;
    if (collect(paths, n_paths, &files, &n, err))
        return -1;
    if (n == 0) {
        free(files);
        return kinv_error(err, "no libraries to read");
    }
    struct lib_job *jobs = calloc(n, sizeof(*jobs));
    if (!jobs) {
        for (size_t i = 0; i < n; i++)
            free(files[i]);
        free(files);
        return kinv_error(err, "out of memory");
    }
    int rc = 0;
    for (size_t i = 0; i < n; i++)
        jobs[i].path = files[i];
    free(files);
    for (size_t i = 0; i < n && !rc; i++) {
        char detail[4096 + 128];
        int fd = kat_open_input(jobs[i].path, 0, NULL, detail, sizeof detail);
        struct stat st;
        if (fd < 0 && errno == EINVAL) {
            rc = kinv_error(err, "%s", detail);
        } else if (fd < 0) {
            rc = kinv_error(err, "cannot read '%s': %s", jobs[i].path, strerror(errno));
        } else if (fstat(fd, &st)) {
            rc = kinv_error(err, "cannot read '%s': %s", jobs[i].path, strerror(errno));
        } else if (st.st_size == 0) {
            rc = kinv_error(err, "cannot read '%s': empty file (offset 0)", jobs[i].path);
        } else {
            /* private and writable: libelf may write into its image, never into the file */
            void *p = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE,
                           MAP_PRIVATE | MAP_NORESERVE, fd, 0);
            if (p == MAP_FAILED) {
                rc = kinv_error(err, "cannot map '%s': %s", jobs[i].path, strerror(errno));
            } else {
                jobs[i].image = p;
                jobs[i].size = (size_t)st.st_size;
                jobs[i].mapped = 1;
            }
        }
        if (fd >= 0)
            close(fd);
    }
    if (!rc)
        rc = build_jobs(jobs, n, opt, out, stats, err);
    release_jobs(jobs, n);
    return rc;
}

int kinv_build_image(const void *image, size_t size, const char *name,
                     const struct kinv_build_options *opt, struct kinv_inventory **out,
                     struct kinv_err *err)
{
    struct kinv_build_options defaults = { .threads = 1 };
    if (!opt)
        opt = &defaults;
    struct lib_job *job = calloc(1, sizeof(*job));
    if (!job)
        return kinv_error(err, "out of memory");
    job->path = strdup(name);
    job->image = malloc(size ? size : 1);
    if (!job->path || !job->image) {
        release_jobs(job, 1);
        return kinv_error(err, "out of memory");
    }
    memcpy(job->image, image, size);
    job->size = size;
    int rc = build_jobs(job, 1, opt, out, NULL, err);
    release_jobs(job, 1);
    return rc;
}
