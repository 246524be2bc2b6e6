/*
 * u64map.h - a uint64 -> uint64 hash map (open addressing, linear probing),
 * for the readers' per-process joins (correlation id -> vendor call id, name
 * string -> count).  libc only.
 *
 * Memory: 17 bytes per slot, at most half the slots used, so at most about
 * 68 bytes per key after a growth.  Lookups and inserts are O(1) expected.
 * Keys are any uint64 (0 included).  The fields are public so that a caller
 * can walk the map: slot i holds keys[i] -> vals[i] when used[i] is set.
 */
#ifndef KAT_U64MAP_H
#define KAT_U64MAP_H

#include <stddef.h>
#include <stdint.h>

struct kat_u64map {
    uint64_t *keys;
    uint64_t *vals;
    uint8_t *used;
    size_t cap;                 /* power of two, or 0 */
    size_t count;
};

#define KAT_U64MAP_INIT { 0 }

/* The value slot of key, or NULL when absent. */
uint64_t *kat_u64map_find(const struct kat_u64map *m, uint64_t key);

/* The value slot of key, inserted as 0 when absent (*fresh, when given, says
 * whether it was); NULL when out of memory (the map is unchanged then). */
uint64_t *kat_u64map_get(struct kat_u64map *m, uint64_t key, int *fresh);

void kat_u64map_free(struct kat_u64map *m);

#endif
