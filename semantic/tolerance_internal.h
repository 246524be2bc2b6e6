/* Internal to semantic/: exposed for tests only, not part of the API. */
#ifndef KAT_TOLERANCE_INTERNAL_H
#define KAT_TOLERANCE_INTERNAL_H

#include <stddef.h>

/* Leaves v[k] where a sort of v[0..n) would put it.  depth is how many
 * partition rounds may run before the range left is heap-sorted; -1 picks
 * the introselect limit 2*log2(n).  A test passes 0 or 1 to reach the
 * heap-sort fallback, which no ordinary input gets to. */
void kat__select_kth(double *v, size_t n, size_t k, int depth);

#endif
