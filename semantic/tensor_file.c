/* Reader of KernelAudit tensor files; the format is docs/tensor-format.md. */
#include "tensor_file.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* Smallest possible leaf: path_len, a 1-byte path, kind/dtype/reserved,
 * ndim, nbytes.  Bounds n_leaves before anything is allocated for it. */
#define MIN_LEAF_BYTES (4u + 1u + 4u + 4u + 8u)

static const struct {
  const char *name;
  size_t size;
  int floating, complex;
} dtypes[KAT_DT_COUNT] = {
  [KAT_DT_NONE] = {"none", 0, 0, 0},
  [KAT_DT_FLOAT16] = {"float16", 2, 1, 0},
  [KAT_DT_BFLOAT16] = {"bfloat16", 2, 1, 0},
  [KAT_DT_FLOAT32] = {"float32", 4, 1, 0},
  [KAT_DT_FLOAT64] = {"float64", 8, 1, 0},
  [KAT_DT_INT8] = {"int8", 1, 0, 0},
  [KAT_DT_UINT8] = {"uint8", 1, 0, 0},
  [KAT_DT_INT16] = {"int16", 2, 0, 0},
  [KAT_DT_INT32] = {"int32", 4, 0, 0},
  [KAT_DT_INT64] = {"int64", 8, 0, 0},
  [KAT_DT_BOOL] = {"bool", 1, 0, 0},
  [KAT_DT_COMPLEX64] = {"complex64", 8, 1, 1},
  [KAT_DT_COMPLEX128] = {"complex128", 16, 1, 1},
};

const char *kat_dtype_name(int d) { return d >= 0 && d < KAT_DT_COUNT ? dtypes[d].name : "unknown"; }
size_t kat_dtype_itemsize(int d) { return d >= 0 && d < KAT_DT_COUNT ? dtypes[d].size : 0; }
int kat_dtype_is_floating(int d) { return d >= 0 && d < KAT_DT_COUNT && dtypes[d].floating; }
int kat_dtype_is_complex(int d) { return d >= 0 && d < KAT_DT_COUNT && dtypes[d].complex; }

const char *kat_leaf_kind_name(int kind)
{
  static const char *const names[] = {"tensor", "int", "float", "bool", "None", "other", "sampled tensor"};
  return kind >= 0 && kind <= KAT_LEAF_SAMPLED ? names[kind] : "unknown";
}

struct cursor {
  const unsigned char *p;
  size_t len, off;
  const char *name;
  char *err;
  size_t errlen;
  unsigned version;  /* the file's, once read */
};

static int fail(struct cursor *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(struct cursor *c, const char *fmt, ...)
{
  if (c->err && c->errlen) {
    int k = snprintf(c->err, c->errlen, "cannot read tensor file '%s': ", c->name);
    if (k >= 0 && (size_t)k < c->errlen) {
      va_list ap;
      va_start(ap, fmt);
      vsnprintf(c->err + k, c->errlen - (size_t)k, fmt, ap);
      va_end(ap);
    }
  }
  return -1;
}

/* Each read names what it was reading, so a truncated file says where and
 * in which field it ended. */
static int need(struct cursor *c, size_t n, const char *what, long leaf)
{
  if (c->len - c->off >= n)
    return 0;
  if (leaf >= 0)
    return fail(c, "truncated at byte %zu: leaf %ld: %s needs %zu bytes, %zu left",
                c->off, leaf, what, n, c->len - c->off);
  return fail(c, "truncated at byte %zu: %s needs %zu bytes, %zu left", c->off, what, n,
              c->len - c->off);
}

/* Little-endian by construction, whatever the host. */
static uint64_t rd_le(struct cursor *c, unsigned n)
{
  uint64_t v = 0;
  for (unsigned i = 0; i < n; i++)
    v |= (uint64_t)c->p[c->off + i] << (8 * i);
  c->off += n;
  return v;
}

static int cmp_leaf_path(const void *a, const void *b)
{
  const struct kat_tensor_leaf *x = *(const struct kat_tensor_leaf *const *)a;
  const struct kat_tensor_leaf *y = *(const struct kat_tensor_leaf *const *)b;
  return strcmp(x->path, y->path);
}

/* A repeated path would make kat_tensor_file_find answer one of two leaves
 * silently; the writer never produces one, so it means a broken file. */
static int check_unique_paths(struct cursor *c, struct kat_tensor_file *f)
{
  if (f->n_leaves < 2)
    return 0;
  const struct kat_tensor_leaf **v = malloc(f->n_leaves * sizeof *v);
  if (!v)
    return fail(c, "out of memory");
  for (uint32_t i = 0; i < f->n_leaves; i++)
    v[i] = &f->leaves[i];
  qsort(v, f->n_leaves, sizeof *v, cmp_leaf_path);
  for (uint32_t i = 1; i < f->n_leaves; i++)
    if (strcmp(v[i - 1]->path, v[i]->path) == 0) {
      int rc = fail(c, "leaf %ld at byte %llu repeats path '%s'", (long)(v[i] - f->leaves),
                    (unsigned long long)v[i]->offset, v[i]->path);
      free(v);
      return rc;
    }
  free(v);
  return 0;
}

static int parse_leaf(struct cursor *c, long i, struct kat_tensor_leaf *lf)
{
  lf->offset = c->off;
  if (need(c, 4, "path_len", i))
    return -1;
  uint32_t plen = (uint32_t)rd_le(c, 4);
  if (plen == 0 || plen > KAT_TENSOR_MAX_PATH)
    return fail(c, "byte %zu: leaf %ld: path_len %u outside 1..%u", c->off - 4, i, plen,
                KAT_TENSOR_MAX_PATH);
  if (need(c, plen, "path", i))
    return -1;
  if (memchr(c->p + c->off, 0, plen))
    return fail(c, "byte %zu: leaf %ld: path holds a NUL byte", c->off, i);
  lf->path = malloc(plen + 1u);
  if (!lf->path)
    return fail(c, "out of memory");
  memcpy(lf->path, c->p + c->off, plen);
  lf->path[plen] = '\0';
  c->off += plen;

  if (need(c, 4, "kind/dtype/reserved", i))
    return -1;
  size_t at = c->off;
  lf->kind = (int)rd_le(c, 1);
  lf->dtype = (int)rd_le(c, 1);
  unsigned reserved = (unsigned)rd_le(c, 2);
  if (lf->kind > KAT_LEAF_SAMPLED || (lf->kind == KAT_LEAF_SAMPLED && c->version < 2))
    return fail(c, "byte %zu: leaf %ld ('%s'): unknown kind %d", at, i, lf->path, lf->kind);
  if (lf->dtype >= KAT_DT_COUNT)
    return fail(c, "byte %zu: leaf %ld ('%s'): unknown dtype %d", at + 1, i, lf->path, lf->dtype);
  /* Version 1 gives the field no meaning; a later version that does must
   * bump the version, so a non-zero value here is corruption. */
  if (reserved)
    return fail(c, "byte %zu: leaf %ld ('%s'): reserved field is %u, not 0", at + 2, i, lf->path,
                reserved);

  if (need(c, 4, "ndim", i))
    return -1;
  lf->ndim = (unsigned)rd_le(c, 4);
  if (lf->ndim > KAT_TENSOR_MAX_NDIM)
    return fail(c, "byte %zu: leaf %ld ('%s'): ndim %u over the limit %u", c->off - 4, i,
                lf->path, lf->ndim, KAT_TENSOR_MAX_NDIM);
  if (need(c, (size_t)lf->ndim * 8, "shape", i))
    return -1;
  uint64_t numel = 1;
  for (unsigned d = 0; d < lf->ndim; d++) {
    int64_t s = (int64_t)rd_le(c, 8);
    if (s < 0)
      return fail(c, "byte %zu: leaf %ld ('%s'): shape[%u] is negative (%lld)", c->off - 8, i,
                  lf->path, d, (long long)s);
    lf->shape[d] = s;
    if (s != 0 && numel > UINT64_MAX / (uint64_t)s)
      return fail(c, "byte %zu: leaf %ld ('%s'): element count overflows at shape[%u]",
                  c->off - 8, i, lf->path, d);
    numel *= (uint64_t)s;
  }
  if (need(c, 8, "nbytes", i))
    return -1;
  at = c->off;
  lf->nbytes = rd_le(c, 8);

  /* What each kind may carry: scalars are exactly one 0-dim value of the
   * one dtype the writer uses for them. */
  static const int scalar_dtype[] = {[KAT_LEAF_INT] = KAT_DT_INT64, [KAT_LEAF_FLOAT] = KAT_DT_FLOAT64,
                                     [KAT_LEAF_BOOL] = KAT_DT_BOOL};
  switch (lf->kind) {
  case KAT_LEAF_TENSOR: {
    if (lf->dtype == KAT_DT_NONE)
      return fail(c, "byte %zu: leaf %ld ('%s'): tensor with dtype none", lf->offset, i, lf->path);
    uint64_t isz = dtypes[lf->dtype].size;
    if (numel > UINT64_MAX / isz)
      return fail(c, "byte %zu: leaf %ld ('%s'): byte size of %llu %s elements overflows", at, i,
                  lf->path, (unsigned long long)numel, dtypes[lf->dtype].name);
    if (lf->nbytes != numel * isz)
      return fail(c, "byte %zu: leaf %ld ('%s'): nbytes %llu, but %llu %s elements need %llu", at,
                  i, lf->path, (unsigned long long)lf->nbytes, (unsigned long long)numel,
                  dtypes[lf->dtype].name, (unsigned long long)(numel * isz));
    lf->numel = numel;
    break;
  }
  case KAT_LEAF_INT:
  case KAT_LEAF_FLOAT:
  case KAT_LEAF_BOOL: {
    int want = scalar_dtype[lf->kind];
    if (lf->dtype != want || lf->ndim != 0 || lf->nbytes != dtypes[want].size)
      return fail(c, "byte %zu: leaf %ld ('%s'): a python %s must be a 0-dim %s of %zu bytes "
                  "(dtype %s, ndim %u, nbytes %llu)", lf->offset, i, lf->path,
                  kat_leaf_kind_name(lf->kind), dtypes[want].name, dtypes[want].size,
                  kat_dtype_name(lf->dtype), lf->ndim, (unsigned long long)lf->nbytes);
    lf->numel = 1;
    break;
  }
  case KAT_LEAF_SAMPLED: {
    if (lf->dtype == KAT_DT_NONE)
      return fail(c, "byte %zu: leaf %ld ('%s'): sampled tensor with dtype none", lf->offset, i, lf->path);
    uint64_t isz = dtypes[lf->dtype].size;
    if (lf->nbytes < 8 || lf->nbytes > c->len - c->off)
      return fail(c, "truncated at byte %zu: leaf %ld ('%s'): a sampled tensor needs its count", c->off, i,
                  lf->path);
    uint64_t m;
    memcpy(&m, c->p + c->off, 8);
    if (m > numel || m > (lf->nbytes - 8) / (8 + isz) || lf->nbytes != 8 + m * (8 + isz))
      return fail(c, "byte %zu: leaf %ld ('%s'): nbytes %llu does not hold %llu sampled %s elements of %llu",
                  at, i, lf->path, (unsigned long long)lf->nbytes, (unsigned long long)m,
                  dtypes[lf->dtype].name, (unsigned long long)numel);
    const unsigned char *idx = c->p + c->off + 8;
    int64_t prev = -1;
    for (uint64_t k = 0; k < m; k++) {
      int64_t v;
      memcpy(&v, idx + 8 * k, 8);
      if (v <= prev || (uint64_t)v >= numel)
        return fail(c, "byte %zu: leaf %ld ('%s'): sample index %llu (%lld) is not increasing or not below %llu",
                    (size_t)(c->off + 8 + 8 * k), i, lf->path, (unsigned long long)k, (long long)v,
                    (unsigned long long)numel);
      prev = v;
    }
    lf->numel = numel;
    lf->sampled = m;
    lf->sample_index = idx;
    lf->data = idx + 8 * m;
    c->off += (size_t)lf->nbytes;
    lf->nbytes = m * isz;
    return 0;
  }
  case KAT_LEAF_NONE:
  case KAT_LEAF_OTHER:
    if (lf->dtype != KAT_DT_NONE || lf->ndim != 0 || (lf->kind == KAT_LEAF_NONE && lf->nbytes))
      return fail(c, "byte %zu: leaf %ld ('%s'): a %s leaf must have dtype none, ndim 0%s",
                  lf->offset, i, lf->path, kat_leaf_kind_name(lf->kind),
                  lf->kind == KAT_LEAF_NONE ? " and no data" : "");
    if (lf->kind == KAT_LEAF_OTHER && lf->nbytes > KAT_TENSOR_MAX_PATH)
      return fail(c, "byte %zu: leaf %ld ('%s'): type name of %llu bytes over the limit %u", at, i,
                  lf->path, (unsigned long long)lf->nbytes, KAT_TENSOR_MAX_PATH);
    lf->numel = 0;
    break;
  }
  if (lf->nbytes > c->len - c->off)
    return fail(c, "truncated at byte %zu: leaf %ld ('%s'): data needs %llu bytes, %zu left",
                c->off, i, lf->path, (unsigned long long)lf->nbytes, c->len - c->off);
  lf->data = c->p + c->off;
  c->off += (size_t)lf->nbytes;
  return 0;
}

int kat_tensor_file_parse(const void *buf, size_t len, const char *name,
                          struct kat_tensor_file **out, char *err, size_t errlen)
{
  struct cursor c = {.p = buf, .len = len, .name = name ? name : "(buffer)", .err = err, .errlen = errlen};
  *out = NULL;
  if (need(&c, 8, "magic", -1))
    return -1;
  if (memcmp(c.p, KAT_TENSOR_MAGIC, 8) != 0)
    return fail(&c, "bad magic at byte 0 (not a KernelAudit tensor file)");
  c.off = 8;
  if (need(&c, 8, "version and n_leaves", -1))
    return -1;
  uint32_t version = (uint32_t)rd_le(&c, 4);
  if (version == 0)
    return fail(&c, "byte 8: version 0 is not a valid version");
  if (version > KAT_TENSOR_FORMAT_VERSION)
    return fail(&c, "format version %u is newer than this reader (reads up to %u)", version,
                KAT_TENSOR_FORMAT_VERSION);
  c.version = version;
  uint32_t n = (uint32_t)rd_le(&c, 4);
  if (n > (len - c.off) / MIN_LEAF_BYTES)
    return fail(&c, "byte 12: n_leaves %u cannot fit in the %zu bytes that follow", n,
                len - c.off);

  struct kat_tensor_file *f = calloc(1, sizeof *f);
  if (!f || !(f->path = strdup(c.name)) || !(f->leaves = calloc(n ? n : 1, sizeof *f->leaves))) {
    kat_tensor_file_close(f);
    return fail(&c, "out of memory");
  }
  f->version = version;
  for (uint32_t i = 0; i < n; i++) {
    f->n_leaves = i + 1; /* so close frees the path of a half-read leaf */
    if (parse_leaf(&c, (long)i, &f->leaves[i])) {
      kat_tensor_file_close(f);
      return -1;
    }
  }
  f->n_leaves = n;
  if (c.off != len) {
    kat_tensor_file_close(f);
    return fail(&c, "%zu bytes of garbage after the last leaf, at byte %zu", len - c.off, c.off);
  }
  if (check_unique_paths(&c, f)) {
    kat_tensor_file_close(f);
    return -1;
  }
  *out = f;
  return 0;
}

int kat_tensor_file_open(const char *path, struct kat_tensor_file **out, char *err, size_t errlen)
{
  struct cursor c = {NULL, 0, 0, path, err, errlen};
  *out = NULL;
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return fail(&c, "%s", strerror(errno));
  struct stat st;
  if (fstat(fd, &st) < 0) {
    int e = errno;
    close(fd);
    return fail(&c, "%s", strerror(e));
  }
  if (!S_ISREG(st.st_mode)) {
    close(fd);
    return fail(&c, "not a regular file");
  }
  size_t len = (size_t)st.st_size;
  void *map = NULL;
  /* A file shortened while mapped would fault on access; the runner only
   * ever renames a complete file into place, so a mapped one never shrinks. */
  /* mmap refuses a length of 0; an empty file is reported as truncated. */
  if (len) {
    map = mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0);
    if (map == MAP_FAILED) {
      int e = errno;
      close(fd);
      return fail(&c, "mmap: %s", strerror(e));
    }
  }
  close(fd);
  if (kat_tensor_file_parse(map ? map : "", len, path, out, err, errlen)) {
    if (map)
      munmap(map, len);
    return -1;
  }
  (*out)->map = map;
  (*out)->map_len = len;
  return 0;
}

void kat_tensor_file_close(struct kat_tensor_file *f)
{
  if (!f)
    return;
  if (f->leaves)
    for (uint32_t i = 0; i < f->n_leaves; i++)
      free(f->leaves[i].path);
  free(f->leaves);
  free(f->path);
  if (f->map)
    munmap((void *)f->map, f->map_len);
  free(f);
}

const struct kat_tensor_leaf *kat_tensor_file_find(const struct kat_tensor_file *f, const char *path)
{
  for (uint32_t i = 0; f && i < f->n_leaves; i++)
    if (strcmp(f->leaves[i].path, path) == 0)
      return &f->leaves[i];
  return NULL;
}

/* IEEE binary16: 1 sign, 5 exponent (bias 15), 10 fraction bits.  ldexp is
 * exact here, so subnormals come out exactly. */
double kat_half_to_double(uint16_t h)
{
  int sign = h >> 15, e = (h >> 10) & 0x1f, m = h & 0x3ff;
  double v;
  if (e == 0)
    v = ldexp((double)m, -24);
  else if (e == 31)
    v = m ? NAN : INFINITY;
  else
    v = ldexp((double)(m | 0x400), e - 25);
  return sign ? -v : v;
}

/* bfloat16 is the top half of a binary32, so widening is a shift. */
double kat_bfloat16_to_double(uint16_t b)
{
  uint32_t u = (uint32_t)b << 16;
  float f;
  memcpy(&f, &u, sizeof f);
  return (double)f;
}

uint64_t kat_leaf_double_count(const struct kat_tensor_leaf *lf)
{
  if (lf->kind == KAT_LEAF_NONE || lf->kind == KAT_LEAF_OTHER)
    return 0;
  uint64_t n = lf->kind == KAT_LEAF_SAMPLED ? lf->sampled : lf->numel;
  return kat_dtype_is_complex(lf->dtype) ? 2 * n : n;
}

/* Element data is copied in host byte order: every machine we run on is
 * little-endian, like the format; a big-endian port would swap here. */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "kat_leaf_to_double assumes a little-endian host"
#endif

/* Element loads go through memcpy: the data sits at whatever offset the
 * file put it, with no alignment promised. */
#define LOAD(T, p, i) ({ T v_; memcpy(&v_, (const unsigned char *)(p) + (size_t)(i) * sizeof(T), sizeof v_); v_; })

double *kat_leaf_to_double(const struct kat_tensor_leaf *lf)
{
  if (!lf || lf->kind == KAT_LEAF_NONE || lf->kind == KAT_LEAF_OTHER) {
    errno = EINVAL;
    return NULL;
  }
  uint64_t n = kat_leaf_double_count(lf);
  if (n > SIZE_MAX / sizeof(double)) {
    errno = ENOMEM;
    return NULL;
  }
  double *o = malloc(n ? (size_t)n * sizeof *o : 1);
  if (!o)
    return NULL;
  const void *p = lf->data;
  for (size_t i = 0; i < n; i++) {
    switch (lf->dtype) {
    case KAT_DT_FLOAT16: o[i] = kat_half_to_double(LOAD(uint16_t, p, i)); break;
    case KAT_DT_BFLOAT16: o[i] = kat_bfloat16_to_double(LOAD(uint16_t, p, i)); break;
    case KAT_DT_FLOAT32: case KAT_DT_COMPLEX64: o[i] = LOAD(float, p, i); break;
    case KAT_DT_FLOAT64: case KAT_DT_COMPLEX128: o[i] = LOAD(double, p, i); break;
    case KAT_DT_INT8: o[i] = LOAD(int8_t, p, i); break;
    case KAT_DT_UINT8: o[i] = LOAD(uint8_t, p, i); break;
    case KAT_DT_INT16: o[i] = LOAD(int16_t, p, i); break;
    case KAT_DT_INT32: o[i] = LOAD(int32_t, p, i); break;
    case KAT_DT_INT64: o[i] = (double)LOAD(int64_t, p, i); break;
    case KAT_DT_BOOL: o[i] = LOAD(uint8_t, p, i) != 0; break;
    default: free(o); errno = EINVAL; return NULL;
    }
  }
  return o;
}
