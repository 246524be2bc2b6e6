/* u64map.c - see u64map.h. */
#include "u64map.h"

#include <stdlib.h>
#include <string.h>

static size_t mix64(uint64_t k)
{
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdull;
    k ^= k >> 33;
    return (size_t)k;
}

uint64_t *kat_u64map_find(const struct kat_u64map *m, uint64_t key)
{
    if (!m->cap)
        return NULL;
    for (size_t i = mix64(key) & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
        if (!m->used[i])
            return NULL;
        if (m->keys[i] == key)
            return &m->vals[i];
    }
}

static int grow(struct kat_u64map *m)
{
    struct kat_u64map g = { 0 };
    g.cap = m->cap ? m->cap * 2 : 64;
    g.keys = calloc(g.cap, sizeof(*g.keys));
    g.vals = calloc(g.cap, sizeof(*g.vals));
    g.used = calloc(g.cap, 1);
    if (!g.keys || !g.vals || !g.used) {
        free(g.keys);
        free(g.vals);
        free(g.used);
        return -1;
    }
    for (size_t i = 0; i < m->cap; i++) {
        if (!m->used[i])
            continue;
        size_t j = mix64(m->keys[i]) & (g.cap - 1);
        while (g.used[j])
            j = (j + 1) & (g.cap - 1);
        g.used[j] = 1;
        g.keys[j] = m->keys[i];
        g.vals[j] = m->vals[i];
    }
    g.count = m->count;
    free(m->keys);
    free(m->vals);
    free(m->used);
    *m = g;
    return 0;
}

uint64_t *kat_u64map_get(struct kat_u64map *m, uint64_t key, int *fresh)
{
    uint64_t *v = kat_u64map_find(m, key);
    if (fresh)
        *fresh = v == NULL;
    if (v)
        return v;
    if ((m->count + 1) * 2 > m->cap && grow(m) != 0)
        return NULL;
    size_t i = mix64(key) & (m->cap - 1);
    while (m->used[i])
        i = (i + 1) & (m->cap - 1);
    m->used[i] = 1;
    m->keys[i] = key;
    m->vals[i] = 0;
    m->count++;
    return &m->vals[i];
}

void kat_u64map_free(struct kat_u64map *m)
{
    free(m->keys);
    free(m->vals);
    free(m->used);
    memset(m, 0, sizeof(*m));
}
