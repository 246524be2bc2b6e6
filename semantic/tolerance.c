/* The calibrated tolerance (docs/tolerance.md). */
#include "tolerance.h"
#include "tolerance_internal.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct kat_tol_params kat_tol_params_default(void)
{
  return (struct kat_tol_params){.c = 4.0, .rho_min = 1e-5, .rho_max = 1e-3, .a_min = 1e-8,
                                 .rel_den_min = 1e-12, .mode = KAT_TOL_REFERENCE_FLOOR};
}

const char *kat_tol_verdict_name(enum kat_tol_verdict v)
{
  switch (v) {
  case KAT_TOL_PASS: return "pass";
  case KAT_TOL_FAIL: return "fail";
  case KAT_TOL_VERDICT_UNRESOLVED: return "unresolved";
  }
  return "unknown";
}

const char *kat_tol_rule_name(enum kat_tol_rule r)
{
  switch (r) {
  case KAT_TOL_RULE_NONE: return "none";
  case KAT_TOL_RULE_EQ1: return "eq1";
  case KAT_TOL_RULE_REFERENCE_FLOOR: return "reference-floor";
  case KAT_TOL_RULE_NONFINITE_CANDIDATE: return "non-finite-candidate";
  }
  return "unknown";
}

const char *kat_tol_mode_name(enum kat_tol_mode m)
{
  return m == KAT_TOL_PAPER ? "paper" : m == KAT_TOL_REFERENCE_FLOOR ? "reference-floor" : "unknown";
}

/* ---- selection ---------------------------------------------------------
 * Introselect: quickselect with a three-way partition, which matters here
 * because error arrays are often mostly exact zeros and a two-way partition
 * degrades to quadratic time on repeated values; if the recursion goes
 * deeper than 2*log2(n) (adversarial input), the remaining range is
 * heap-sorted, so the worst case stays O(n log n). */

static void swapd(double *a, double *b) { double t = *a; *a = *b; *b = t; }

static void sift_down(double *v, size_t root, size_t n)
{
  for (;;) {
    size_t child = 2 * root + 1;
    if (child >= n)
      return;
    if (child + 1 < n && v[child + 1] > v[child])
      child++;
    if (!(v[child] > v[root]))
      return;
    swapd(&v[root], &v[child]);
    root = child;
  }
}

static void heap_sort(double *v, size_t n)
{
  for (size_t i = n / 2; i-- > 0;)
    sift_down(v, i, n);
  for (size_t end = n; end-- > 1;) {
    swapd(&v[0], &v[end]);
    sift_down(v, 0, end);
  }
}

static double median3(double a, double b, double c)
{
  if (a > b) { double t = a; a = b; b = t; }
  if (b > c) b = c;
  return a > b ? a : b;
}

void kat__select_kth(double *v, size_t n, size_t k, int depth)
{
  size_t lo = 0, hi = n; /* the range [lo, hi) holds index k */
  if (depth < 0) {
    depth = 0;
    for (size_t m = n; m > 1; m >>= 1)
      depth += 2;
  }
  while (hi - lo > 16) {
    if (depth-- == 0) {
      heap_sort(v + lo, hi - lo);
      return;
    }
    double pivot = median3(v[lo], v[lo + (hi - lo) / 2], v[hi - 1]);
    /* Dutch flag: [lo,lt) < pivot, [lt,i) == pivot, (gt,hi) > pivot. */
    size_t lt = lo, i = lo, gt = hi;
    while (i < gt) {
      if (v[i] < pivot)
        swapd(&v[lt++], &v[i++]);
      else if (v[i] > pivot)
        swapd(&v[i], &v[--gt]);
      else
        i++;
    }
    if (k < lt)
      hi = lt;
    else if (k >= gt)
      lo = gt;
    else
      return; /* v[k] == pivot, already in place */
  }
  /* Short ranges: insertion sort. */
  for (size_t i = lo + 1; i < hi; i++) {
    double x = v[i];
    size_t j = i;
    for (; j > lo && v[j - 1] > x; j--)
      v[j] = v[j - 1];
    v[j] = x;
  }
}

double kat_percentile_select(double *v, size_t n, unsigned num, unsigned den)
{
  if (n == 0 || num == 0 || num > den)
    return 0.0;
  /* Nearest rank: the smallest value with at least num/den of the elements
   * at or below it.  ceil(num*n/den), split so that num*n cannot overflow. */
  size_t q = n / den, rem = n % den;
  size_t rank = q * num + (size_t)(((uint64_t)rem * num + den - 1) / den);
  if (rank < 1)
    rank = 1;
  kat__select_kth(v, n, rank - 1, -1);
  return v[rank - 1];
}

/* ---- calibration ------------------------------------------------------- */

int kat_tol_calibrate(const double *r, const double *r64, size_t n,
                      const struct kat_tol_params *p, struct kat_tol_calibration *out)
{
  if (!out || !p || (n && (!r || !r64))) {
    errno = EINVAL;
    return -1;
  }
  memset(out, 0, sizeof *out);
  out->n = n;
  for (size_t i = 0; i < n; i++)
    if (!isfinite(r[i]) || !isfinite(r64[i])) {
      if (out->n_nonfinite_reference++ == 0)
        out->first_nonfinite_index = i;
    }
  if (out->n_nonfinite_reference) {
    /* No tolerance can be calibrated from an undefined error. */
    out->eps_abs = out->eps_rel = out->rho_bar = out->rho = out->a = NAN;
    out->status = KAT_TOL_UNRESOLVED;
    out->reason = KAT_TOL_REASON_NONFINITE_REFERENCE;
    size_t j = out->first_nonfinite_index;
    snprintf(out->reason_text, sizeof out->reason_text,
             "reference not finite at %zu of %zu elements (first at %zu: r %g, r64 %g)",
             out->n_nonfinite_reference, n, j, r[j], r64[j]);
    return 0;
  }

  double *d = malloc(n ? n * sizeof *d : 1);
  if (!d) {
    errno = ENOMEM;
    return -1;
  }
  for (size_t i = 0; i < n; i++)
    d[i] = fabs(r[i] - r64[i]);
  out->eps_abs = kat_percentile_select(d, n, 99, 100);
  /* Recomputed, not divided in place: the selection reordered d. */
  for (size_t i = 0; i < n; i++)
    d[i] = fabs(r[i] - r64[i]) / fmax(fabs(r64[i]), p->rel_den_min);
  out->eps_rel = kat_percentile_select(d, n, 99, 100);
  free(d);

  out->rho_bar = p->c * out->eps_rel;
  out->rho = fmax(p->rho_min, out->rho_bar);
  out->a = fmax(p->a_min, p->c * out->eps_abs);
  if (out->rho_bar > p->rho_max) {
    out->status = KAT_TOL_UNRESOLVED;
    out->reason = KAT_TOL_REASON_RHO_BAR;
    snprintf(out->reason_text, sizeof out->reason_text, "rho_bar %.1e > rho_max %.0e",
             out->rho_bar, p->rho_max);
  }
  return 0;
}

/* ---- comparison -------------------------------------------------------- */

int kat_tol_compare(const double *k, const double *r, const double *r64, size_t n,
                    const struct kat_tol_params *p, const struct kat_tol_calibration *cal,
                    struct kat_tol_comparison *out)
{
  if (!out || !p || !cal || (n && (!k || !r || !r64)) || cal->n != n) {
    errno = EINVAL;
    return -1;
  }
  memset(out, 0, sizeof *out);
  out->n = n;
  struct kat_tol_worst *w = &out->worst;
  int floor_mode = p->mode == KAT_TOL_REFERENCE_FLOOR;
  for (size_t i = 0; i < n; i++) {
    if (!isfinite(r[i]) || !isfinite(r64[i]))
      continue; /* the calibration is unresolved already */
    double eq1 = cal->a + cal->rho * fabs(r[i]);
    double floor_ = p->c * fabs(r[i] - r64[i]);
    double allow = floor_mode && floor_ > eq1 ? floor_ : eq1;
    enum kat_tol_rule rule = allow > eq1 ? KAT_TOL_RULE_REFERENCE_FLOOR : KAT_TOL_RULE_EQ1;
    double diff = fabs(k[i] - r[i]), ratio;
    if (!isfinite(k[i])) {
      out->n_nonfinite_candidate++;
      out->n_fail++;
      rule = KAT_TOL_RULE_NONFINITE_CANDIDATE;
      diff = ratio = INFINITY;
    } else {
      /* diff may overflow to inf for huge finite values; that is a fail. */
      ratio = allow > 0 ? diff / allow : diff > 0 ? INFINITY : 0.0;
      if (!(diff <= allow))
        out->n_fail++;
      else if (diff > eq1)
        out->n_pass_by_floor++;
    }
    if (!w->valid || ratio > w->ratio) {
      *w = (struct kat_tol_worst){.valid = 1, .index = i, .candidate = k[i], .reference = r[i],
                                  .reference64 = r64[i], .diff = diff, .allowance = allow,
                                  .ratio = ratio, .rule = rule};
    }
  }

  if (cal->status != KAT_TOL_OK)
    out->verdict = KAT_TOL_VERDICT_UNRESOLVED;
  else
    out->verdict = out->n_fail ? KAT_TOL_FAIL : KAT_TOL_PASS;

  if (out->verdict == KAT_TOL_VERDICT_UNRESOLVED)
    snprintf(out->text, sizeof out->text, "unresolved: %s", cal->reason_text);
  else if (!w->valid)
    snprintf(out->text, sizeof out->text, "pass: no elements");
  else
    snprintf(out->text, sizeof out->text,
             "%s: %zu of %zu elements over tolerance (%zu pass by the reference floor); worst at "
             "%zu: candidate %.9g, reference %.9g, fp64 %.9g, |diff| %.3g, allowance %.3g (%s)",
             kat_tol_verdict_name(out->verdict), out->n_fail, n, out->n_pass_by_floor, w->index,
             w->candidate, w->reference, w->reference64, w->diff, w->allowance,
             kat_tol_rule_name(w->rule));
  return 0;
}

int kat_exact_compare(const void *a, const void *b, size_t n, size_t itemsize,
                      struct kat_exact_result *out)
{
  if (!out || itemsize == 0 || (n && (!a || !b))) {
    errno = EINVAL;
    return -1;
  }
  memset(out, 0, sizeof *out);
  out->equal = 1;
  if (n == 0)
    return 0;
  const unsigned char *x = a, *y = b;
  /* One memcmp for the common equal case; element by element only after. */
  if (memcmp(x, y, n * itemsize) == 0)
    return 0;
  for (size_t i = 0; i < n; i++)
    if (memcmp(x + i * itemsize, y + i * itemsize, itemsize) != 0) {
      if (out->n_differ++ == 0)
        out->first_index = i;
    }
  out->equal = 0;
  return 0;
}
