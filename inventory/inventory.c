/*
 * inventory.c - the in-memory inventory: making and freeing one, the name
 * table built over its entries (kinv_index), and the lookups by name,
 * module digest and library.  Its sealed text form is written by
 * inventory_write.c and read back, verified, by inventory_read.c.
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <sys/mman.h>

#define XXH_INLINE_ALL     /* the name hash is on the lookup path: inline it */
#include <xxhash.h>

#include "internal.h"

static inline uint64_t name_hash(const char *name, size_t len)
{
    return XXH3_64bits(name, len);
}

struct kinv_inventory *kinv_new(void)
{
    struct kinv_inventory *inv = calloc(1, sizeof(*inv));
    if (!inv)
        return NULL;
    inv->arena = kinv_arena_new();
    if (!inv->arena) {
        free(inv);
        return NULL;
    }
    return inv;
}

void kinv_free(struct kinv_inventory *inv)
{
    if (!inv)
        return;
    kinv_patterns_free(inv);
    if (inv->lookup_mem)
        munmap(inv->lookup_mem, inv->lookup_mem_size);
    free(inv->libs);
    free(inv->entries);
    free(inv->meta);
    free(inv->modules);
    kinv_arena_free(inv->arena);
    free(inv);
}

int kinv_entry_cmp(const struct kinv_entry *a, const struct kinv_entry *b)
{
    size_t n = a->name_len < b->name_len ? a->name_len : b->name_len;
    int c = memcmp(a->name, b->name, n);
    if (c)
        return c;
    if (a->name_len != b->name_len)
        return a->name_len < b->name_len ? -1 : 1;
    return (int)a->kind - (int)b->kind;
}

static int same_name(const struct kinv_entry *a, const struct kinv_entry *b)
{
    return a->name_len == b->name_len && !memcmp(a->name, b->name, a->name_len);
}

/*
 * The name table: open addressing with linear probing, at most half full,
 * 16-byte slots (the table of 40,000 names fits in 2 MB).  A slot holds what
 * a probe needs, so that a lookup touches one slot and the name it compares,
 * never the entry array: the full 64-bit hash, where the name is in the
 * pool (a 4-byte length, then the bytes), and the first entry of the name
 * with how many entries (kinds) share it.  An empty slot has first == 0.
 */
struct kinv_slot {
    uint64_t hash;
    uint32_t pool;          /* offset of the name's length word in the pool */
    uint32_t first;         /* entry index << 3 | has a cubin or ptx entry << 2 | count (1..3) */
};

static inline const char *slot_name(const struct kinv_inventory *inv, const struct kinv_slot *s,
                                    uint32_t *len)
{
    const char *p = (const char *)(inv->table + inv->table_mask + 1) + s->pool;
    memcpy(len, p, 4);
    return p + 4;
}

int kinv_index(struct kinv_inventory *inv, struct kinv_err *err)
{
    size_t groups = 0;
    for (size_t i = 0; i < inv->n_entries; i++) {
        struct kinv_entry *e = &inv->entries[i];
        e->hash = name_hash(e->name, e->name_len);
        if (e->kind != KINV_KIND_PATTERN && (i == 0 || !same_name(e, e - 1)))
            groups++;
    }
    size_t size = 16;
    while (size < 2 * groups)
        size *= 2;
    if (inv->n_entries >= (1u << 29))
        return kinv_error(err, "too many entries for the lookup table");
    /* The table and a copy of the names it points to share one mapping,
       with transparent huge pages where the kernel gives them: a lookup is
       two random memory accesses, and TLB misses would double them. */
    size_t names = 0;
    for (size_t i = 0; i < inv->n_entries; i++) {
        struct kinv_entry *e = &inv->entries[i];
        if (e->kind != KINV_KIND_PATTERN && (i == 0 || !same_name(e, e - 1)))
            names += (4 + e->name_len + 1 + 3) & ~(size_t)3;
    }
    if (names > UINT32_MAX)
        return kinv_error(err, "names too large for the lookup table");
    if (inv->lookup_mem)
        munmap(inv->lookup_mem, inv->lookup_mem_size);
    inv->lookup_mem = NULL;
    inv->table = NULL;
    size_t bytes = size * sizeof(struct kinv_slot) + names;
    size_t huge = 2u << 20;
    bytes = (bytes + huge - 1) / huge * huge;
    void *mem = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (mem == MAP_FAILED)
        return kinv_error(err, "out of memory for the lookup table");
#ifdef MADV_HUGEPAGE
    madvise(mem, bytes, MADV_HUGEPAGE);
#endif
    inv->lookup_mem = mem;
    inv->lookup_mem_size = bytes;
    inv->table = mem;
    char *pool = (char *)mem + size * sizeof(struct kinv_slot);
    uint32_t at = 0;
    inv->table_mask = size - 1;
    for (size_t i = 0; i < inv->n_entries; i++) {
        struct kinv_entry *e = &inv->entries[i];
        if (e->kind == KINV_KIND_PATTERN || (i > 0 && same_name(e, e - 1)))
            continue;
        uint32_t count = 0, exact = 0;
        while (i + count < inv->n_entries && e[count].kind != KINV_KIND_PATTERN && same_name(e, e + count)) {
            exact |= e[count].kind == KINV_KIND_CUBIN || e[count].kind == KINV_KIND_PTX;
            count++;
        }
        uint64_t h = e->hash & inv->table_mask;
        while (inv->table[h].first)
            h = (h + 1) & inv->table_mask;
        memcpy(pool + at, &e->name_len, 4);
        memcpy(pool + at + 4, e->name, e->name_len);
        pool[at + 4 + e->name_len] = 0;
        inv->table[h] = (struct kinv_slot){ e->hash, at, (uint32_t)i << 3 | exact << 2 | count };
        at += (4 + e->name_len + 1 + 3) & ~(uint32_t)3;
    }
    kinv_patterns_free(inv);
    return kinv_patterns_compile(inv, err);
}

uint64_t kinv_name_hash(const char *name, size_t len)
{
    return name_hash(name, len);
}

void kinv_lookup_batch(const struct kinv_inventory *inv, struct kinv_query *q, size_t n)
{
    enum { B = 32 };
    for (size_t b = 0; b < n; b += B) {
        size_t m = n - b < B ? n - b : B;
        uint64_t hash[B];
        const struct kinv_slot *slot[B];
        for (size_t i = 0; i < m; i++) {
            hash[i] = name_hash(q[b + i].name, q[b + i].len);
            slot[i] = inv->table ? &inv->table[hash[i] & inv->table_mask] : NULL;
            if (slot[i])
                __builtin_prefetch(slot[i]);
        }
        const char *pool = inv->table ? (const char *)(inv->table + inv->table_mask + 1) : NULL;
        for (size_t i = 0; i < m; i++)
            if (slot[i] && slot[i]->first && slot[i]->hash == hash[i]) {
                /* the whole name: it is compared in full on a hit */
                const char *p = pool + slot[i]->pool;
                size_t span = 4 + q[b + i].len;
                for (size_t o = 0; o < span; o += 64)
                    __builtin_prefetch(p + o);
            }
        for (size_t i = 0; i < m; i++) {
            struct kinv_query *x = &q[b + i];
            x->first = NULL;
            x->count = 0;
            if (!slot[i])
                continue;
            for (uint64_t h = hash[i] & inv->table_mask;; h = (h + 1) & inv->table_mask) {
                const struct kinv_slot *s = &inv->table[h];
                if (!s->first)
                    break;
                uint32_t len;
                const char *name;
                if (s->hash == hash[i] && (name = slot_name(inv, s, &len), len == x->len) &&
                    !memcmp(name, x->name, len)) {
                    x->first = &inv->entries[s->first >> 3];
                    x->count = s->first & 3;
                    break;
                }
            }
        }
    }
}

static const struct kinv_slot *find_slot(const struct kinv_inventory *inv, const char *name, size_t len)
{
    if (!inv->table)
        return NULL;
    uint64_t hash = name_hash(name, len);
    for (uint64_t h = hash & inv->table_mask;; h = (h + 1) & inv->table_mask) {
        const struct kinv_slot *s = &inv->table[h];
        if (!s->first)
            return NULL;
        uint32_t slen;
        const char *sname;
        if (s->hash == hash && (sname = slot_name(inv, s, &slen), slen == len) && !memcmp(sname, name, len))
            return s;
    }
}

size_t kinv_lookup_name(const struct kinv_inventory *inv, const char *name, size_t len,
                        const struct kinv_entry **first)
{
    const struct kinv_slot *s = find_slot(inv, name, len);
    if (!s)
        return 0;
    *first = &inv->entries[s->first >> 3];
    return s->first & 3;
}

void kinv_match(const struct kinv_inventory *inv, const char *name, size_t len, struct kinv_match *m)
{
    memset(m, 0, sizeof(*m));
    const struct kinv_slot *s = find_slot(inv, name, len);
    if (s) {
        m->first = &inv->entries[s->first >> 3];
        m->count = s->first & 3;
        m->strength = (s->first & 4) ? KINV_MATCH_EXACT : KINV_MATCH_OBSERVED;
        return;
    }
    m->pattern = kinv_lookup_pattern(inv, name, len);
    if (m->pattern)
        m->strength = KINV_MATCH_PATTERN;
}

size_t kinv_lookup_module(const struct kinv_inventory *inv, const uint8_t digest[16],
                          const struct kinv_module **first)
{
    size_t lo = 0, hi = inv->n_modules;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (memcmp(inv->modules[mid].digest, digest, 16) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    size_t n = 0;
    while (lo + n < inv->n_modules && !memcmp(inv->modules[lo + n].digest, digest, 16))
        n++;
    *first = n ? &inv->modules[lo] : NULL;
    return n;
}

long kinv_find_library(const struct kinv_inventory *inv, const char *which)
{
    for (size_t i = 0; i < inv->n_libs; i++) {
        const struct kinv_library *l = &inv->libs[i];
        const char *base = strrchr(l->path, '/');
        base = base ? base + 1 : l->path;
        if ((l->soname && !strcmp(l->soname, which)) || !strcmp(l->path, which) || !strcmp(base, which))
            return (long)i;
    }
    return -1;
}
