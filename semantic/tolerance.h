/*
 * The calibrated tolerance of the KernelAudit paper (Eq. 1), one floating
 * leaf at a time, and the exact comparison of integer and bool leaves.
 * docs/tolerance.md gives the rule, the percentile and both modes.
 *
 * Nothing is pooled: a calibration comes from one leaf of one input of one
 * run, so a loose leaf cannot lend its tolerance to a tight one.
 */
#ifndef KAT_TOLERANCE_H
#define KAT_TOLERANCE_H

#include <stddef.h>

enum kat_tol_mode {
  /* Default: Eq. 1, but never tighter at an element than c times the
   * reference's own native-precision error there. */
  KAT_TOL_REFERENCE_FLOOR = 0,
  /* Eq. 1 exactly. */
  KAT_TOL_PAPER = 1,
};

struct kat_tol_params {
  double c;        /* 4 */
  double rho_min;  /* 1e-5 */
  double rho_max;  /* 1e-3: above it the leaf is too noisy to judge */
  double a_min;    /* 1e-8 */
  double rel_den_min; /* 1e-12: denominator floor of the relative error */
  enum kat_tol_mode mode;
};

struct kat_tol_params kat_tol_params_default(void);

enum kat_tol_status { KAT_TOL_OK = 0, KAT_TOL_UNRESOLVED = 1 };

enum kat_tol_reason {
  KAT_TOL_REASON_NONE = 0,
  KAT_TOL_REASON_NONFINITE_REFERENCE = 1, /* r or r64 has NaN/Inf */
  KAT_TOL_REASON_RHO_BAR = 2,             /* rho_bar > rho_max */
};

struct kat_tol_calibration {
  size_t n;
  double eps_abs;   /* 99th percentile of |r - r64| */
  double eps_rel;   /* 99th percentile of |r - r64| / max(|r64|, rel_den_min) */
  double rho_bar;   /* c * eps_rel */
  double rho;       /* max(rho_min, rho_bar) */
  double a;         /* max(a_min, c * eps_abs) */
  enum kat_tol_status status;
  enum kat_tol_reason reason;
  size_t n_nonfinite_reference;  /* elements where r or r64 is not finite */
  size_t first_nonfinite_index;  /* valid when n_nonfinite_reference > 0 */
  char reason_text[160];         /* "" when OK */
};

enum kat_tol_verdict { KAT_TOL_PASS = 0, KAT_TOL_FAIL = 1, KAT_TOL_VERDICT_UNRESOLVED = 2 };

enum kat_tol_rule {
  KAT_TOL_RULE_NONE = 0,
  KAT_TOL_RULE_EQ1 = 1,                  /* a + rho*|r_i| decided */
  KAT_TOL_RULE_REFERENCE_FLOOR = 2,      /* c*|r_i - r64_i| decided */
  KAT_TOL_RULE_NONFINITE_CANDIDATE = 3,  /* k_i NaN/Inf where r_i is finite */
};

struct kat_tol_worst {
  int valid;          /* 0 when n == 0 or every reference element is non-finite */
  size_t index;       /* flat, C order */
  double candidate, reference, reference64;
  double diff;        /* |k - r| */
  double allowance;
  double ratio;       /* diff / allowance; inf for a non-finite candidate */
  enum kat_tol_rule rule;
};

struct kat_tol_comparison {
  enum kat_tol_verdict verdict;
  size_t n;
  size_t n_fail;                  /* elements over their allowance, non-finite ones included */
  size_t n_nonfinite_candidate;   /* k_i NaN/Inf where the reference is finite */
  size_t n_pass_by_floor;         /* over Eq. 1 but within the reference floor */
  struct kat_tol_worst worst;     /* largest diff/allowance; first one on ties */
  char text[256];                 /* one line for a report */
};

/* Nearest-rank quantile at the fraction num/den (0 < num <= den; 99/100
 * for the 99th percentile): the value at sorted index ceil(num*n/den) - 1,
 * found by selection in O(n) expected time.  The rank is computed in
 * integers, so it is exact by construction rather than by the luck of
 * floating-point rounding of 0.99*n.  Reorders v.  Returns 0 for n == 0 and for a
 * fraction outside (0, 1].  v must not hold NaN. */
double kat_percentile_select(double *v, size_t n, unsigned num, unsigned den);

/* Calibrates one leaf from its native-precision reference r and its fp64
 * reference r64 (same n).  Returns 0 (status in out) or -1 with errno
 * ENOMEM (a scratch copy of n doubles) or EINVAL (NULL arguments). */
int kat_tol_calibrate(const double *r, const double *r64, size_t n,
                      const struct kat_tol_params *p, struct kat_tol_calibration *out);

/* Judges candidate k against the calibrated reference.  An unresolved
 * calibration gives an UNRESOLVED verdict (the counts over the elements with
 * a finite reference are still filled in).  Returns 0 or -1 (EINVAL). */
int kat_tol_compare(const double *k, const double *r, const double *r64, size_t n,
                    const struct kat_tol_params *p, const struct kat_tol_calibration *cal,
                    struct kat_tol_comparison *out);

const char *kat_tol_verdict_name(enum kat_tol_verdict v);  /* "pass", "fail", "unresolved" */
const char *kat_tol_rule_name(enum kat_tol_rule r);        /* "eq1", "reference-floor", ... */
const char *kat_tol_mode_name(enum kat_tol_mode m);        /* "paper", "reference-floor" */

/* Exact comparison of integer/bool leaves: raw bytes, element by element. */
struct kat_exact_result {
  int equal;
  size_t n_differ;        /* elements that differ */
  size_t first_index;     /* first differing element; valid when !equal */
};

/* Compares n elements of itemsize bytes.  Returns 0 or -1 (EINVAL for
 * itemsize 0 or NULL buffers with n > 0). */
int kat_exact_compare(const void *a, const void *b, size_t n, size_t itemsize,
                      struct kat_exact_result *out);

#endif
