/* Reads the file tests/python/write_tensor_sample.py wrote and checks every
 * leaf: the Python writer and the C reader agree on the format. */
#include "tensor_file.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures;

#define CHECK(cond, ...)                                        \
  do {                                                          \
    if (!(cond)) {                                              \
      fprintf(stderr, "%s:%d: %s: ", __FILE__, __LINE__, #cond); \
      fprintf(stderr, __VA_ARGS__);                             \
      fputc('\n', stderr);                                      \
      failures++;                                               \
    }                                                           \
  } while (0)

/* NaN equals NaN here: the file must carry it through. */
static int same(double a, double b) { return (isnan(a) && isnan(b)) || a == b; }

static void check_leaf(const struct kat_tensor_file *f, const char *path, int kind, int dtype,
                       unsigned ndim, const int64_t *shape, const double *want, size_t nwant)
{
  const struct kat_tensor_leaf *l = kat_tensor_file_find(f, path);
  CHECK(l, "no leaf '%s'", path);
  if (!l)
    return;
  CHECK(l->kind == kind, "'%s': kind %s", path, kat_leaf_kind_name(l->kind));
  CHECK(l->dtype == dtype, "'%s': dtype %s", path, kat_dtype_name(l->dtype));
  CHECK(l->ndim == ndim, "'%s': ndim %u", path, l->ndim);
  for (unsigned d = 0; d < ndim && d < l->ndim; d++)
    CHECK(l->shape[d] == shape[d], "'%s': shape[%u] %lld", path, d, (long long)l->shape[d]);
  if (!want)
    return;
  CHECK(kat_leaf_double_count(l) == nwant, "'%s': %llu values", path,
        (unsigned long long)kat_leaf_double_count(l));
  double *v = kat_leaf_to_double(l);
  CHECK(v, "'%s': no values", path);
  for (size_t i = 0; v && i < nwant && i < kat_leaf_double_count(l); i++)
    CHECK(same(v[i], want[i]), "'%s'[%zu]: %.17g, want %.17g", path, i, v[i], want[i]);
  free(v);
}

static void check_other(const struct kat_tensor_file *f, const char *path, const char *name)
{
  const struct kat_tensor_leaf *l = kat_tensor_file_find(f, path);
  CHECK(l && l->kind == KAT_LEAF_OTHER, "'%s' is not an opaque leaf", path);
  if (l)
    CHECK(l->nbytes == strlen(name) && memcmp(l->data, name, l->nbytes) == 0,
          "'%s': type name '%.*s', want '%s'", path, (int)l->nbytes, (const char *)l->data, name);
}

int main(int argc, char **argv)
{
  if (argc != 2) {
    fprintf(stderr, "usage: %s FILE\n", argv[0]);
    return 99;
  }
  char err[512];
  struct kat_tensor_file *f;
  if (kat_tensor_file_open(argv[1], &f, err, sizeof err)) {
    fprintf(stderr, "error: %s\n", err);
    return 1;
  }
  CHECK(f->n_leaves == 18, "%u leaves", f->n_leaves);

  static const char *const order[] = {
      "out[0]", "out[1]['a']", "out[1]['b'][0]", "out[1]['b'][1]", "out[1]['b'][2]",
      "out[1]['b'][3]", "out[2][0]", "out[2][1]", "out[3]", "out[4]", "out[5]", "out[6]",
      "out[7]", "out[8]", "out[9]", "out[10]", "input[0]", "input[1]"};
  for (size_t i = 0; i < sizeof order / sizeof *order && i < f->n_leaves; i++)
    CHECK(strcmp(f->leaves[i].path, order[i]) == 0, "leaf %zu is '%s', want '%s'", i,
          f->leaves[i].path, order[i]);

  check_leaf(f, "out[0]", KAT_LEAF_TENSOR, KAT_DT_FLOAT32, 2, (int64_t[]){2, 3},
             (double[]){0, 0.25, 0.5, 0.75, 1.0, 1.25}, 6);
  check_leaf(f, "out[1]['a']", KAT_LEAF_TENSOR, KAT_DT_FLOAT64, 1, (int64_t[]){3},
             (double[]){1.0 / 3, -2.5e-300, INFINITY}, 3);
  check_leaf(f, "out[1]['b'][0]", KAT_LEAF_INT, KAT_DT_INT64, 0, NULL, (double[]){3}, 1);
  check_leaf(f, "out[1]['b'][1]", KAT_LEAF_FLOAT, KAT_DT_FLOAT64, 0, NULL, (double[]){2.5}, 1);
  check_leaf(f, "out[1]['b'][2]", KAT_LEAF_BOOL, KAT_DT_BOOL, 0, NULL, (double[]){1}, 1);
  check_leaf(f, "out[1]['b'][3]", KAT_LEAF_NONE, KAT_DT_NONE, 0, NULL, NULL, 0);
  check_leaf(f, "out[2][0]", KAT_LEAF_TENSOR, KAT_DT_FLOAT16, 1, (int64_t[]){6},
             (double[]){1.0, -2.0, 65504.0, ldexp(1, -24), INFINITY, NAN}, 6);
  check_leaf(f, "out[2][1]", KAT_LEAF_TENSOR, KAT_DT_BFLOAT16, 1, (int64_t[]){4},
             (double[]){1.0, 3.0, -0.5, ldexp(1, 100)}, 4);
  /* The transpose of arange(12).reshape(3, 4): element [i][j] is 4j + i. */
  check_leaf(f, "out[3]", KAT_LEAF_TENSOR, KAT_DT_FLOAT32, 2, (int64_t[]){4, 3},
             (double[]){0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11}, 12);
  check_other(f, "out[4]", "str");
  check_leaf(f, "out[5]", KAT_LEAF_TENSOR, KAT_DT_INT64, 1, (int64_t[]){2},
             (double[]){-1099511627776.0, 7}, 2);
  check_leaf(f, "out[6]", KAT_LEAF_TENSOR, KAT_DT_BOOL, 1, (int64_t[]){3}, (double[]){1, 0, 1}, 3);
  check_other(f, "out[7]", "tuple");
  check_leaf(f, "out[8]", KAT_LEAF_TENSOR, KAT_DT_COMPLEX64, 1, (int64_t[]){2},
             (double[]){1, -2, 3, 4}, 4);
  check_leaf(f, "out[9]", KAT_LEAF_TENSOR, KAT_DT_FLOAT32, 4, (int64_t[]){1, 2, 2, 2},
             (double[]){0, 1, 2, 3, 4, 5, 6, 7}, 8);
  check_other(f, "out[10]", "int (outside int64)");
  check_leaf(f, "input[0]", KAT_LEAF_TENSOR, KAT_DT_FLOAT32, 2, (int64_t[]){0, 5}, (double[]){0}, 0);
  check_leaf(f, "input[1]", KAT_LEAF_TENSOR, KAT_DT_FLOAT32, 0, NULL, (double[]){2.0}, 1);
  CHECK(!kat_tensor_file_find(f, "out[11]"), "a leaf that was never written");

  kat_tensor_file_close(f);
  if (failures)
    fprintf(stderr, "%d checks failed\n", failures);
  return failures ? 1 : 0;
}
