/* The calibrated tolerance (semantic/tolerance.h) on leaves whose answer is
 * known by hand, and the float16/bfloat16 widening of known bit patterns. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tensor_file.h"
#include "tolerance.h"
#include "tolerance_internal.h"

static int cmp_double(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* A small deterministic generator: the tests must not depend on rand(). */
static uint64_t rng = 88172645463325252ull;
static uint64_t next(void)
{
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return rng;
}

Test(percentile, nearest_rank_by_hand)
{
  double v[100];
  /* 0..99 in a scrambled order: 37 is coprime with 100. */
  for (int i = 0; i < 100; i++)
    v[i] = (double)((i * 37) % 100);
  /* ceil(0.99 * 100) - 1 = 98: the 99th smallest. */
  cr_assert_eq(kat_percentile_select(v, 100, 99, 100), 98.0);
  double one = 5.0;
  cr_assert_eq(kat_percentile_select(&one, 1, 99, 100), 5.0);
  cr_assert_eq(kat_percentile_select(NULL, 0, 99, 100), 0.0);
  /* n = 150: ceil(148.5) = 149, index 148 of 0..149. */
  double w[150];
  for (int i = 0; i < 150; i++)
    w[149 - i] = i;
  cr_assert_eq(kat_percentile_select(w, 150, 99, 100), 148.0);
  /* n = 300: rank ceil(297) = 297, index 296; other fractions too. */
  double *x = malloc(300 * sizeof *x);
  for (int i = 0; i < 300; i++)
    x[i] = 299 - i;
  cr_assert_eq(kat_percentile_select(x, 300, 99, 100), 296.0);
  cr_assert_eq(kat_percentile_select(x, 300, 1, 2), 149.0);   /* median, lower */
  cr_assert_eq(kat_percentile_select(x, 300, 1, 1), 299.0);   /* maximum */
  cr_assert_eq(kat_percentile_select(x, 300, 0, 1), 0.0);     /* refused: 0 */
  free(x);
}

Test(percentile, agrees_with_a_sort)
{
  static const size_t sizes[] = {2, 3, 16, 17, 100, 1001, 4096, 100003};
  for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++) {
    size_t n = sizes[s];
    for (int dup = 0; dup < 3; dup++) {
      double *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b);
      for (size_t i = 0; i < n; i++) {
        uint64_t x = next();
        /* dup 1: few distinct values; dup 2: sorted descending. */
        a[i] = dup == 0 ? (double)(x >> 11) : dup == 1 ? (double)(x % 3) : (double)(n - i);
        b[i] = a[i];
      }
      qsort(b, n, sizeof *b, cmp_double);
      size_t rank = (99 * n + 99) / 100;
      cr_assert_eq(kat_percentile_select(a, n, 99, 100), b[rank - 1], "n %zu dup %d", n, dup);
      free(a);
      free(b);
    }
  }
}

/* The heap-sort fallback, forced by a depth limit of 0 and 1: no ordinary
 * input gets there, so it is checked here on its own. */
Test(percentile, heap_sort_fallback)
{
  size_t n = 5000;
  double *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b);
  for (int depth = 0; depth < 2; depth++)
    for (size_t k = 0; k < n; k += 997) {
      for (size_t i = 0; i < n; i++)
        a[i] = b[i] = (double)(next() % 1000);
      qsort(b, n, sizeof *b, cmp_double);
      kat__select_kth(a, n, k, depth);
      cr_assert_eq(a[k], b[k], "depth %d k %zu", depth, k);
    }
  free(a);
  free(b);
}

/* Tens of millions of mostly-zero errors: the usual shape of a good
 * kernel's error array, and the one a two-way partition is quadratic on. */
Test(percentile, large_mostly_zero_leaf)
{
  size_t n = 20u * 1000 * 1000;
  double *v = calloc(n, sizeof *v);
  cr_assert(v);
  /* 2% nonzero: the 99th percentile falls among them. */
  for (size_t i = 0; i < n; i += 50)
    v[i] = 1.0 + (double)(i % 7);
  double p = kat_percentile_select(v, n, 99, 100);
  cr_assert(p >= 1.0 && p <= 7.0, "p %g", p);
  free(v);
}

/* A leaf of tens of millions of elements, as a large activation gives:
 * calibration and comparison are linear, so this takes well under a second
 * per pass outside a sanitizer. */
Test(calibrate, large_leaf)
{
  size_t n = 12u * 1000 * 1000;
  double *r = malloc(n * sizeof *r), *r64 = malloc(n * sizeof *r64);
  cr_assert(r && r64);
  for (size_t i = 0; i < n; i++) {
    r64[i] = 1.0 + (double)(i % 1000);
    /* 2% of elements off by 2^-20 (relative error under 2^-20). */
    r[i] = r64[i] + (i % 50 == 0 ? ldexp(1, -20) : 0.0);
  }
  struct kat_tol_params p = kat_tol_params_default();
  struct kat_tol_calibration cal;
  cr_assert_eq(kat_tol_calibrate(r, r64, n, &p, &cal), 0);
  cr_assert_eq(cal.status, KAT_TOL_OK, "%s", cal.reason_text);
  cr_assert_eq(cal.eps_abs, ldexp(1, -20));
  struct kat_tol_comparison cmp;
  cr_assert_eq(kat_tol_compare(r, r, r64, n, &p, &cal, &cmp), 0);
  cr_assert_eq(cmp.verdict, KAT_TOL_PASS, "%s", cmp.text);
  free(r);
  free(r64);
}

Test(calibrate, eps_by_hand)
{
  double r[100], r64[100];
  /* d_i = i * 2^-20, exact in binary, so the percentiles are exact too. */
  for (int i = 0; i < 100; i++) {
    r64[i] = 1.0;
    r[i] = 1.0 + ldexp(i, -20);
  }
  struct kat_tol_params p = kat_tol_params_default();
  struct kat_tol_calibration cal;
  cr_assert_eq(kat_tol_calibrate(r, r64, 100, &p, &cal), 0);
  cr_assert_eq(cal.status, KAT_TOL_OK, "%s", cal.reason_text);
  cr_assert_eq(cal.eps_abs, ldexp(98, -20));
  cr_assert_eq(cal.eps_rel, ldexp(98, -20));
  cr_assert_eq(cal.rho_bar, 4 * ldexp(98, -20));
  cr_assert_eq(cal.rho, cal.rho_bar);
  cr_assert_eq(cal.a, 4 * ldexp(98, -20));
  cr_assert_str_empty(cal.reason_text);

  /* The reference itself passes; a candidate just past a + rho*|r| fails. */
  struct kat_tol_comparison cmp;
  cr_assert_eq(kat_tol_compare(r, r, r64, 100, &p, &cal, &cmp), 0);
  cr_assert_eq(cmp.verdict, KAT_TOL_PASS, "%s", cmp.text);
  double k[100];
  memcpy(k, r, sizeof k);
  double allow = cal.a + cal.rho * fabs(r[40]);
  k[40] = r[40] + allow * 1.01;
  cr_assert_eq(kat_tol_compare(k, r, r64, 100, &p, &cal, &cmp), 0);
  cr_assert_eq(cmp.verdict, KAT_TOL_FAIL);
  cr_assert_eq(cmp.n_fail, 1);
  cr_assert_eq(cmp.worst.index, 40);
  cr_assert_eq(cmp.worst.rule, KAT_TOL_RULE_EQ1);
  cr_assert_float_eq(cmp.worst.ratio, 1.01, 1e-9);
  cr_assert_eq(cmp.worst.reference64, 1.0);
}

Test(calibrate, floors_apply_to_an_exact_reference)
{
  double r[4] = {1, 2, 3, 4};
  struct kat_tol_params p = kat_tol_params_default();
  struct kat_tol_calibration cal;
  cr_assert_eq(kat_tol_calibrate(r, r, 4, &p, &cal), 0);
  cr_assert_eq(cal.status, KAT_TOL_OK);
  cr_assert_eq(cal.eps_abs, 0.0);
  cr_assert_eq(cal.rho, 1e-5);
  cr_assert_eq(cal.a, 1e-8);
  /* n = 0: nothing to judge, nothing unresolved. */
  cr_assert_eq(kat_tol_calibrate(NULL, NULL, 0, &p, &cal), 0);
  cr_assert_eq(cal.status, KAT_TOL_OK);
  struct kat_tol_comparison cmp;
  cr_assert_eq(kat_tol_compare(NULL, NULL, NULL, 0, &p, &cal, &cmp), 0);
  cr_assert_eq(cmp.verdict, KAT_TOL_PASS);
  cr_assert_not(cmp.worst.valid);
}

Test(calibrate, rho_bar_over_rho_max_is_unresolved)
{
  double r[100], r64[100];
  for (int i = 0; i < 100; i++) {
    r64[i] = 1.0;
    r[i] = 1.0 + ldexp(i, -15); /* rho_bar = 4 * 98 * 2^-15 = 0.01196 */
  }
  struct kat_tol_params p = kat_tol_params_default();
  struct kat_tol_calibration cal;
  cr_assert_eq(kat_tol_calibrate(r, r64, 100, &p, &cal), 0);
  cr_assert_eq(cal.status, KAT_TOL_UNRESOLVED);
  cr_assert_eq(cal.reason, KAT_TOL_REASON_RHO_BAR);
  cr_assert_str_eq(cal.reason_text, "rho_bar 1.2e-02 > rho_max 1e-03");
  struct kat_tol_comparison cmp;
  cr_assert_eq(kat_tol_compare(r, r, r64, 100, &p, &cal, &cmp), 0);
  cr_assert_eq(cmp.verdict, KAT_TOL_VERDICT_UNRESOLVED, "%s", cmp.text);
}

Test(calibrate, nonfinite_reference_is_unresolved)
{
  double r[5] = {1, 2, INFINITY, 4, 5}, r64[5] = {1, 2, 3, NAN, 5};
  struct kat_tol_params p = kat_tol_params_default();
  struct kat_tol_calibration cal;
  cr_assert_eq(kat_tol_calibrate(r, r64, 5, &p, &cal), 0);
  cr_assert_eq(cal.status, KAT_TOL_UNRESOLVED);
  cr_assert_eq(cal.reason, KAT_TOL_REASON_NONFINITE_REFERENCE);
  cr_assert_eq(cal.n_nonfinite_reference, 2);
  cr_assert_eq(cal.first_nonfinite_index, 2);
  struct kat_tol_comparison cmp;
  /* Even a candidate equal to the reference is not a pass. */
  cr_assert_eq(kat_tol_compare(r, r, r64, 5, &p, &cal, &cmp), 0);
  cr_assert_eq(cmp.verdict, KAT_TOL_VERDICT_UNRESOLVED);
  cr_assert(strstr(cmp.text, "not finite"), "%s", cmp.text);
}

Test(compare, nonfinite_candidate_fails)
{
  double r[4] = {1, 2, 3, 4}, k[4] = {1, 2, NAN, INFINITY};
  struct kat_tol_params p = kat_tol_params_default();
  struct kat_tol_calibration cal;
  cr_assert_eq(kat_tol_calibrate(r, r, 4, &p, &cal), 0);
  for (int mode = 0; mode < 2; mode++) {
    p.mode = mode ? KAT_TOL_PAPER : KAT_TOL_REFERENCE_FLOOR;
    struct kat_tol_comparison cmp;
    cr_assert_eq(kat_tol_compare(k, r, r, 4, &p, &cal, &cmp), 0);
    cr_assert_eq(cmp.verdict, KAT_TOL_FAIL);
    cr_assert_eq(cmp.n_fail, 2);
    cr_assert_eq(cmp.n_nonfinite_candidate, 2);
    cr_assert_eq(cmp.worst.index, 2);
    cr_assert_eq(cmp.worst.rule, KAT_TOL_RULE_NONFINITE_CANDIDATE);
    cr_assert(isnan(cmp.worst.candidate));
  }
}

/* The case the reference floor exists for: 1000 outputs, 995 of them
 * exact, so both 99th percentiles are 0 and Eq. 1 allows 1e-8 + 1e-5*|r|.
 * Five outputs sit near the function's sensitive region (|r| ~ 1e-3), where
 * fp32 loses 1e-7 in the reference, and an honest candidate loses as much
 * the other way. */
#define N_FLOOR 1000
static double fr[N_FLOOR], fr64[N_FLOOR], fk[N_FLOOR];
static void floor_leaf(void)
{
  for (int i = 0; i < N_FLOOR; i++) {
    fr64[i] = 1.0 + i / 1000.0;
    fr[i] = fr64[i];
    fk[i] = fr[i];
  }
  for (int i = 100; i <= 500; i += 100) {
    fr64[i] = 1e-3;
    fr[i] = 1e-3 + 1e-7;
    fk[i] = 1e-3 - 1e-7;
  }
}

Test(compare, reference_floor_passes_an_honest_candidate)
{
  floor_leaf();
  struct kat_tol_params p = kat_tol_params_default();
  struct kat_tol_calibration cal;
  cr_assert_eq(kat_tol_calibrate(fr, fr64, N_FLOOR, &p, &cal), 0);
  cr_assert_eq(cal.status, KAT_TOL_OK);
  cr_assert_eq(cal.eps_abs, 0.0);
  cr_assert_eq(cal.eps_rel, 0.0);
  cr_assert_eq(cal.a, 1e-8);
  cr_assert_eq(cal.rho, 1e-5);

  struct kat_tol_comparison cmp;
  p.mode = KAT_TOL_PAPER;
  cr_assert_eq(kat_tol_compare(fk, fr, fr64, N_FLOOR, &p, &cal, &cmp), 0);
  cr_assert_eq(cmp.verdict, KAT_TOL_FAIL, "%s", cmp.text);
  cr_assert_eq(cmp.n_fail, 5);
  cr_assert_eq(cmp.n_pass_by_floor, 0);
  cr_assert_eq(cmp.worst.rule, KAT_TOL_RULE_EQ1);

  p.mode = KAT_TOL_REFERENCE_FLOOR;
  cr_assert_eq(kat_tol_compare(fk, fr, fr64, N_FLOOR, &p, &cal, &cmp), 0);
  cr_assert_eq(cmp.verdict, KAT_TOL_PASS, "%s", cmp.text);
  cr_assert_eq(cmp.n_fail, 0);
  cr_assert_eq(cmp.n_pass_by_floor, 5);
  cr_assert(cmp.worst.valid);
  cr_assert_eq(cmp.worst.index, 100);
  cr_assert_eq(cmp.worst.rule, KAT_TOL_RULE_REFERENCE_FLOOR);
  cr_assert_float_eq(cmp.worst.allowance, 4e-7, 1e-12);
  cr_assert_float_eq(cmp.worst.ratio, 0.5, 1e-6);
  cr_assert_eq(cmp.worst.reference64, 1e-3);
}

Test(compare, off_by_1e3_fails_in_both_modes)
{
  for (int where = 0; where < 2; where++) {
    floor_leaf();
    int at = where ? 300 : 777; /* a sensitive output, then an ordinary one */
    fk[at] = fr[at] + 1e-3;
    struct kat_tol_params p = kat_tol_params_default();
    struct kat_tol_calibration cal;
    cr_assert_eq(kat_tol_calibrate(fr, fr64, N_FLOOR, &p, &cal), 0);
    for (int mode = 0; mode < 2; mode++) {
      p.mode = mode ? KAT_TOL_PAPER : KAT_TOL_REFERENCE_FLOOR;
      struct kat_tol_comparison cmp;
      cr_assert_eq(kat_tol_compare(fk, fr, fr64, N_FLOOR, &p, &cal, &cmp), 0);
      cr_assert_eq(cmp.verdict, KAT_TOL_FAIL, "%s", cmp.text);
      cr_assert_eq(cmp.worst.index, (size_t)at, "%s", cmp.text);
      cr_assert_float_eq(cmp.worst.candidate, fr[at] + 1e-3, 1e-15);
    }
  }
}

Test(convert, float16_bit_patterns)
{
  cr_assert_eq(kat_half_to_double(0x3c00), 1.0);
  cr_assert_eq(kat_half_to_double(0xc000), -2.0);
  cr_assert_eq(kat_half_to_double(0x7bff), 65504.0);
  cr_assert_eq(kat_half_to_double(0x3555), 0.333251953125);
  cr_assert_eq(kat_half_to_double(0x0400), ldexp(1, -14));        /* smallest normal */
  cr_assert_eq(kat_half_to_double(0x0001), ldexp(1, -24));        /* smallest subnormal */
  cr_assert_eq(kat_half_to_double(0x03ff), ldexp(1023, -24));     /* largest subnormal */
  cr_assert_eq(kat_half_to_double(0x8001), -ldexp(1, -24));
  cr_assert_eq(kat_half_to_double(0x7c00), INFINITY);
  cr_assert_eq(kat_half_to_double(0xfc00), -INFINITY);
  cr_assert(isnan(kat_half_to_double(0x7e00)));
  cr_assert(isnan(kat_half_to_double(0x7c01)));
  double nz = kat_half_to_double(0x8000);
  cr_assert(nz == 0.0 && signbit(nz));
}

Test(convert, bfloat16_bit_patterns)
{
  cr_assert_eq(kat_bfloat16_to_double(0x3f80), 1.0);
  cr_assert_eq(kat_bfloat16_to_double(0x4040), 3.0);
  cr_assert_eq(kat_bfloat16_to_double(0xbf00), -0.5);
  cr_assert_eq(kat_bfloat16_to_double(0x3eab), 0.333984375);
  cr_assert_eq(kat_bfloat16_to_double(0x0080), ldexp(1, -126));   /* smallest normal */
  cr_assert_eq(kat_bfloat16_to_double(0x0001), ldexp(1, -133));   /* smallest subnormal */
  cr_assert_eq(kat_bfloat16_to_double(0x7f7f), ldexp(255, 120));  /* largest finite */
  cr_assert_eq(kat_bfloat16_to_double(0x7f80), INFINITY);
  cr_assert_eq(kat_bfloat16_to_double(0xff80), -INFINITY);
  cr_assert(isnan(kat_bfloat16_to_double(0x7fc0)));
}

Test(convert, leaf_of_every_real_dtype)
{
  /* Data at an odd address: the file promises no alignment. */
  unsigned char buf[1 + 16];
  struct kat_tensor_leaf l = {.kind = KAT_LEAF_TENSOR, .ndim = 1, .shape = {2}, .numel = 2,
                              .data = buf + 1};
  uint16_t h[2] = {0x3c00, 0x0001};
  memcpy(buf + 1, h, sizeof h);
  l.dtype = KAT_DT_FLOAT16;
  double *v = kat_leaf_to_double(&l);
  cr_assert(v && v[0] == 1.0 && v[1] == ldexp(1, -24));
  free(v);
  int8_t i8[2] = {-128, 127};
  memcpy(buf + 1, i8, sizeof i8);
  l.dtype = KAT_DT_INT8;
  v = kat_leaf_to_double(&l);
  cr_assert(v && v[0] == -128 && v[1] == 127);
  free(v);
  int64_t i64[2] = {INT64_C(-9007199254740992), 3};
  memcpy(buf + 1, i64, sizeof i64);
  l.dtype = KAT_DT_INT64;
  v = kat_leaf_to_double(&l);
  cr_assert(v && v[0] == -9007199254740992.0 && v[1] == 3);
  free(v);
  float c64[2] = {1.5f, -2.0f};
  memcpy(buf + 1, c64, sizeof c64);
  l.dtype = KAT_DT_COMPLEX64;
  l.numel = 1;
  cr_assert_eq(kat_leaf_double_count(&l), 2);
  v = kat_leaf_to_double(&l);
  cr_assert(v && v[0] == 1.5 && v[1] == -2.0);
  free(v);
  l.kind = KAT_LEAF_NONE;
  cr_assert_null(kat_leaf_to_double(&l));
}

Test(exact, first_differing_element)
{
  int32_t a[6] = {1, 2, 3, 4, 5, 6}, b[6] = {1, 2, 3, 9, 5, 0};
  struct kat_exact_result e;
  cr_assert_eq(kat_exact_compare(a, a, 6, sizeof *a, &e), 0);
  cr_assert(e.equal);
  cr_assert_eq(kat_exact_compare(a, b, 6, sizeof *a, &e), 0);
  cr_assert_not(e.equal);
  cr_assert_eq(e.first_index, 3);
  cr_assert_eq(e.n_differ, 2);
  cr_assert_eq(kat_exact_compare(NULL, NULL, 0, 1, &e), 0);
  cr_assert(e.equal);
  cr_assert_eq(kat_exact_compare(a, b, 6, 0, &e), -1);
}
