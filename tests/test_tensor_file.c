/* The tensor file reader (semantic/tensor_file.h) on hand-built files:
 * every malformed file is an error that names the file and where it broke,
 * never a crash or a read past the end. */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tensor_file.h"

struct buf {
  unsigned char b[4096];
  size_t n;
};

/* bytes may exceed 8 to append zero padding. */
static void put(struct buf *b, uint64_t v, unsigned bytes)
{
  for (unsigned i = 0; i < bytes; i++)
    b->b[b->n++] = i < 8 ? (unsigned char)(v >> (8 * i)) : 0;
}
static void put_bytes(struct buf *b, const void *p, size_t n)
{
  memcpy(b->b + b->n, p, n);
  b->n += n;
}
static void header(struct buf *b, uint32_t version, uint32_t n_leaves)
{
  put_bytes(b, "KATENSR1", 8);
  put(b, version, 4);
  put(b, n_leaves, 4);
}
static void leaf_head(struct buf *b, const char *path, int kind, int dtype, unsigned ndim,
                      const int64_t *shape, uint64_t nbytes)
{
  put(b, strlen(path), 4);
  put_bytes(b, path, strlen(path));
  put(b, (unsigned)kind, 1);
  put(b, (unsigned)dtype, 1);
  put(b, 0, 2);
  put(b, ndim, 4);
  for (unsigned i = 0; i < ndim; i++)
    put(b, (uint64_t)shape[i], 8);
  put(b, nbytes, 8);
}

/* out: a 2x2 float32; out[1]: python int 7; out[2]: None; out[3]: a str. */
static void valid_file(struct buf *b)
{
  b->n = 0;
  header(b, 1, 4);
  float v[4] = {1.0f, -2.5f, 0.0f, 1e30f};
  leaf_head(b, "out[0]", KAT_LEAF_TENSOR, KAT_DT_FLOAT32, 2, (int64_t[]){2, 2}, sizeof v);
  put_bytes(b, v, sizeof v);
  leaf_head(b, "out[1]", KAT_LEAF_INT, KAT_DT_INT64, 0, NULL, 8);
  put(b, 7, 8);
  leaf_head(b, "out[2]", KAT_LEAF_NONE, KAT_DT_NONE, 0, NULL, 0);
  leaf_head(b, "out[3]", KAT_LEAF_OTHER, KAT_DT_NONE, 0, NULL, 3);
  put_bytes(b, "str", 3);
}

/* Parses from an exact-size heap copy, so that a sanitizer build sees any
 * read past the end. */
static int parse(const struct buf *b, size_t len, char *err, size_t errlen)
{
  void *copy = malloc(len ? len : 1);
  memcpy(copy, b->b, len);
  struct kat_tensor_file *f = NULL;
  int rc = kat_tensor_file_parse(copy, len, "t.kat", &f, err, errlen);
  if (rc == 0)
    cr_assert_not_null(f);
  else
    cr_assert_null(f);
  kat_tensor_file_close(f);
  free(copy);
  return rc;
}

static void expect_error(const struct buf *b, const char *needle)
{
  char err[512] = "";
  cr_assert_eq(parse(b, b->n, err, sizeof err), -1, "parsed, wanted '%s'", needle);
  cr_assert(strncmp(err, "cannot read tensor file 't.kat': ", 33) == 0, "%s", err);
  cr_assert(strstr(err, needle), "'%s' not in: %s", needle, err);
}

static char *write_temp(const struct buf *b, size_t len)
{
  char *path = strdup("/tmp/kat_tensor_XXXXXX");
  int fd = mkstemp(path);
  cr_assert(fd >= 0);
  cr_assert_eq(write(fd, b->b, len), (ssize_t)len);
  close(fd);
  return path;
}

Test(tensor_file, valid_file_from_disk)
{
  struct buf b;
  valid_file(&b);
  char *path = write_temp(&b, b.n), err[512];
  struct kat_tensor_file *f;
  cr_assert_eq(kat_tensor_file_open(path, &f, err, sizeof err), 0, "%s", err);
  cr_assert_eq(f->version, 1);
  cr_assert_eq(f->n_leaves, 4);
  const struct kat_tensor_leaf *l = kat_tensor_file_find(f, "out[0]");
  cr_assert(l && l->kind == KAT_LEAF_TENSOR && l->dtype == KAT_DT_FLOAT32);
  cr_assert(l->ndim == 2 && l->shape[0] == 2 && l->shape[1] == 2 && l->numel == 4);
  cr_assert(kat_dtype_is_floating(l->dtype));
  cr_assert_str_eq(kat_dtype_name(l->dtype), "float32");
  double *v = kat_leaf_to_double(l);
  cr_assert(v && v[0] == 1.0 && v[1] == -2.5 && v[2] == 0.0 && v[3] == (double)1e30f);
  free(v);
  l = kat_tensor_file_find(f, "out[1]");
  cr_assert(l && l->kind == KAT_LEAF_INT && l->numel == 1);
  v = kat_leaf_to_double(l);
  cr_assert(v && v[0] == 7.0);
  free(v);
  l = kat_tensor_file_find(f, "out[2]");
  cr_assert(l && l->kind == KAT_LEAF_NONE && l->nbytes == 0);
  l = kat_tensor_file_find(f, "out[3]");
  cr_assert(l && l->kind == KAT_LEAF_OTHER && l->nbytes == 3 && memcmp(l->data, "str", 3) == 0);
  cr_assert_null(kat_tensor_file_find(f, "out"));
  cr_assert_not(kat_dtype_is_floating(KAT_DT_INT64));
  kat_tensor_file_close(f);
  unlink(path);
  free(path);
}

Test(tensor_file, empty_leaf_list)
{
  struct buf b = {.n = 0};
  header(&b, 1, 0);
  char err[256];
  cr_assert_eq(parse(&b, b.n, err, sizeof err), 0, "%s", err);
}

Test(tensor_file, truncated_at_every_byte)
{
  struct buf b;
  valid_file(&b);
  for (size_t len = 0; len < b.n; len++) {
    char err[512] = "";
    cr_assert_eq(parse(&b, len, err, sizeof err), -1, "parsed at length %zu", len);
    cr_assert(strncmp(err, "cannot read tensor file 't.kat': ", 33) == 0, "%s", err);
    /* Either a field ran out, or the header already shows the leaves cannot fit. */
    cr_assert(strstr(err, "truncated at byte") || strstr(err, "cannot fit"), "len %zu: %s", len,
              err);
  }
  /* Through the file path too, for a few lengths including the empty file. */
  for (size_t len = 0; len < b.n; len += 13) {
    char *path = write_temp(&b, len), err[512];
    struct kat_tensor_file *f;
    cr_assert_eq(kat_tensor_file_open(path, &f, err, sizeof err), -1);
    cr_assert(strstr(err, path), "%s", err);
    unlink(path);
    free(path);
  }
}

Test(tensor_file, missing_file)
{
  char err[512];
  struct kat_tensor_file *f;
  cr_assert_eq(kat_tensor_file_open("/nonexistent/x.kat", &f, err, sizeof err), -1);
  cr_assert_str_eq(err, "cannot read tensor file '/nonexistent/x.kat': No such file or directory");
}

Test(tensor_file, bad_magic)
{
  struct buf b;
  valid_file(&b);
  b.b[3] = 'X';
  expect_error(&b, "bad magic at byte 0");
}

Test(tensor_file, newer_version_is_refused_by_number)
{
  struct buf b = {.n = 0};
  header(&b, 3, 0);
  expect_error(&b, "format version 3 is newer than this reader (reads up to 2)");
}

Test(tensor_file, nbytes_mismatch)
{
  struct buf b = {.n = 0};
  header(&b, 1, 1);
  leaf_head(&b, "out", KAT_LEAF_TENSOR, KAT_DT_FLOAT32, 1, (int64_t[]){3}, 8);
  put(&b, 0, 8);
  expect_error(&b, "leaf 0 ('out'): nbytes 8, but 3 float32 elements need 12");
}

Test(tensor_file, ndim_over_the_limit)
{
  struct buf b = {.n = 0};
  int64_t shape[17];
  for (int i = 0; i < 17; i++)
    shape[i] = 1;
  header(&b, 1, 1);
  leaf_head(&b, "out", KAT_LEAF_TENSOR, KAT_DT_FLOAT32, 17, shape, 4);
  put(&b, 0, 4);
  expect_error(&b, "ndim 17 over the limit 16");
}

Test(tensor_file, huge_shapes_overflow)
{
  struct buf b = {.n = 0};
  header(&b, 1, 1);
  leaf_head(&b, "out", KAT_LEAF_TENSOR, KAT_DT_FLOAT32, 2, (int64_t[]){INT64_C(1) << 62, 8}, 0);
  expect_error(&b, "element count overflows at shape[1]");

  /* The count fits, its byte size does not. */
  b.n = 0;
  header(&b, 1, 1);
  leaf_head(&b, "out", KAT_LEAF_TENSOR, KAT_DT_FLOAT64, 1, (int64_t[]){INT64_C(1) << 62}, 0);
  expect_error(&b, "byte size of 4611686018427387904 float64 elements overflows");

  /* Consistent, but far more than the file holds. */
  b.n = 0;
  header(&b, 1, 1);
  leaf_head(&b, "out", KAT_LEAF_TENSOR, KAT_DT_UINT8, 1, (int64_t[]){INT64_C(1) << 40},
            UINT64_C(1) << 40);
  expect_error(&b, "data needs 1099511627776 bytes");

  b.n = 0;
  header(&b, 1, 1);
  leaf_head(&b, "out", KAT_LEAF_TENSOR, KAT_DT_UINT8, 1, (int64_t[]){-1}, 0);
  expect_error(&b, "shape[0] is negative");
}

Test(tensor_file, malformed_fields)
{
  struct buf b = {.n = 0};
  header(&b, 1, 1);
  put(&b, 0, 4); /* path_len 0 */
  put(&b, 0, 17);
  expect_error(&b, "path_len 0 outside 1..4096");

  b.n = 0;
  header(&b, 1, 1);
  put(&b, 0xffffffffu, 4);
  put(&b, 0, 17);
  expect_error(&b, "byte 16: leaf 0: path_len 4294967295");

  b.n = 0;
  header(&b, 1, 1);
  leaf_head(&b, "out", KAT_LEAF_TENSOR, 13, 0, NULL, 0);
  expect_error(&b, "unknown dtype 13");

  b.n = 0;
  header(&b, 1, 1);
  leaf_head(&b, "out", 6, KAT_DT_NONE, 0, NULL, 0);
  expect_error(&b, "unknown kind 6");

  b.n = 0;
  header(&b, 1, 1);
  leaf_head(&b, "out", KAT_LEAF_INT, KAT_DT_INT32, 0, NULL, 4);
  put(&b, 0, 4);
  expect_error(&b, "a python int must be a 0-dim int64 of 8 bytes");

  b.n = 0;
  header(&b, 1, 1);
  leaf_head(&b, "out", KAT_LEAF_NONE, KAT_DT_NONE, 0, NULL, 1);
  put(&b, 0, 1);
  expect_error(&b, "a None leaf must have dtype none, ndim 0 and no data");

  b.n = 0;
  header(&b, 1, 2);
  leaf_head(&b, "out", KAT_LEAF_NONE, KAT_DT_NONE, 0, NULL, 0);
  leaf_head(&b, "out", KAT_LEAF_NONE, KAT_DT_NONE, 0, NULL, 0);
  expect_error(&b, "repeats path 'out'");

  b.n = 0;
  header(&b, 1, 1);
  leaf_head(&b, "out", KAT_LEAF_NONE, KAT_DT_NONE, 0, NULL, 0);
  b.b[b.n - 14] = 1; /* the reserved u16 */
  expect_error(&b, "reserved field is 1, not 0");

  b.n = 0;
  header(&b, 1, 1);
  leaf_head(&b, "out", KAT_LEAF_NONE, KAT_DT_NONE, 0, NULL, 0);
  put(&b, 0, 2);
  expect_error(&b, "2 bytes of garbage after the last leaf, at byte");

  b.n = 0;
  header(&b, 1, 1000000);
  expect_error(&b, "n_leaves 1000000 cannot fit");
}

/* Version 2's sampled tensor: a [1000, 1000] float32 of which elements 3,
 * 70 and 999999 were written. */
static void sampled_file(struct buf *b, uint32_t version, int64_t third)
{
  b->n = 0;
  header(b, version, 1);
  leaf_head(b, "out", KAT_LEAF_SAMPLED, KAT_DT_FLOAT32, 2, (int64_t[]){1000, 1000}, 8 + 3 * 8 + 3 * 4);
  put(b, 3, 8);
  put(b, 3, 8);
  put(b, 70, 8);
  put(b, (uint64_t)third, 8);
  float v[3] = {1.5f, -2.0f, 4.25f};
  put_bytes(b, v, sizeof v);
}

Test(tensor_file, sampled_leaf_reads_its_indices_and_values)
{
  struct buf b;
  sampled_file(&b, 2, 999999);
  struct kat_tensor_file *f = NULL;
  char err[512];
  cr_assert_eq(kat_tensor_file_parse(b.b, b.n, "s.kat", &f, err, sizeof err), 0, "%s", err);
  const struct kat_tensor_leaf *lf = kat_tensor_file_find(f, "out");
  cr_assert_not_null(lf);
  cr_assert_eq(lf->numel, 1000000);
  cr_assert_eq(lf->sampled, 3);
  cr_assert_eq(lf->nbytes, 12);
  cr_assert_eq(kat_leaf_double_count(lf), 3);
  double *d = kat_leaf_to_double(lf);
  cr_assert_eq(d[0], 1.5);
  cr_assert_eq(d[2], 4.25);
  int64_t last;
  memcpy(&last, (const unsigned char *)lf->sample_index + 16, 8);
  cr_assert_eq(last, 999999);
  free(d);
  kat_tensor_file_close(f);
}

Test(tensor_file, sampled_leaf_is_refused_in_version_1_and_when_its_indices_are_bad)
{
  struct buf b;
  char err[512];
  sampled_file(&b, 1, 999999);
  cr_assert_eq(parse(&b, b.n, err, sizeof err), -1);
  cr_assert(strstr(err, "unknown kind 6"), "%s", err);
  sampled_file(&b, 2, 1000000); /* past the end of the tensor */
  cr_assert_eq(parse(&b, b.n, err, sizeof err), -1);
  cr_assert(strstr(err, "sample index"), "%s", err);
  sampled_file(&b, 2, 70); /* not increasing */
  cr_assert_eq(parse(&b, b.n, err, sizeof err), -1);
  cr_assert(strstr(err, "not increasing"), "%s", err);
  for (size_t cut = 0; cut < b.n; cut++) { /* every truncation is an error */
    sampled_file(&b, 2, 999999);
    cr_assert_eq(parse(&b, cut, err, sizeof err), -1);
  }
}
