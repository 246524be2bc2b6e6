/*
 * u32map.c - correlation id -> a value, open addressing (struct ka_u32map,
 * evidence.h).  Keys are never 0 (CUPTI's ids are not), so 0 marks an
 * empty slot.
 */
#include <stdlib.h>
#include <string.h>

#include "evidence.h"

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
