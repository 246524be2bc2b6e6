/*
 * Reader for KernelAudit tensor files (docs/tensor-format.md): the outputs
 * of one (slot, call, party), flattened into leaves by runner/kaudit_tensors.py.
 *
 * The format is plain data on purpose: a candidate's outputs are untrusted,
 * and a pickle would let them run code in the auditor.  The reader maps the
 * file read-only and checks every length against the file's size before it
 * trusts it, so a truncated or hostile file is an error, never a crash.
 */
#ifndef KAT_TENSOR_FILE_H
#define KAT_TENSOR_FILE_H

#include <stddef.h>
#include <stdint.h>

#define KAT_TENSOR_MAGIC "KATENSR1"
/* 2 added KAT_LEAF_SAMPLED; version 1 files are read as before. */
#define KAT_TENSOR_FORMAT_VERSION 2u
#define KAT_TENSOR_MAX_NDIM 16u
/* A leaf path names a place in a Python structure; 4 KiB is far more than
 * any real one and keeps a corrupt length from asking for gigabytes. */
#define KAT_TENSOR_MAX_PATH 4096u

enum kat_leaf_kind {
  KAT_LEAF_TENSOR = 0,
  KAT_LEAF_INT = 1,    /* python int: 0-dim int64 */
  KAT_LEAF_FLOAT = 2,  /* python float: 0-dim float64 */
  KAT_LEAF_BOOL = 3,   /* python bool: 0-dim bool */
  KAT_LEAF_NONE = 4,   /* no data */
  KAT_LEAF_OTHER = 5,  /* opaque: data is the type name */
  /* Version 2: a tensor too large to write whole.  shape is the tensor's
   * own; the data is u64 m, then m int64 flat indices (strictly increasing,
   * each below numel), then the m values there, of dtype. */
  KAT_LEAF_SAMPLED = 6,
};

enum kat_dtype {
  KAT_DT_NONE = 0,
  KAT_DT_FLOAT16 = 1,
  KAT_DT_BFLOAT16 = 2,
  KAT_DT_FLOAT32 = 3,
  KAT_DT_FLOAT64 = 4,
  KAT_DT_INT8 = 5,
  KAT_DT_UINT8 = 6,
  KAT_DT_INT16 = 7,
  KAT_DT_INT32 = 8,
  KAT_DT_INT64 = 9,
  KAT_DT_BOOL = 10,
  KAT_DT_COMPLEX64 = 11,
  KAT_DT_COMPLEX128 = 12,
  KAT_DT_COUNT = 13,
};

struct kat_tensor_leaf {
  char *path;          /* NUL-terminated copy of the leaf's path */
  int kind;            /* enum kat_leaf_kind */
  int dtype;           /* enum kat_dtype */
  unsigned ndim;
  int64_t shape[KAT_TENSOR_MAX_NDIM];
  uint64_t numel;      /* product of shape; 1 for a 0-dim leaf, 0 for None/other */
  uint64_t nbytes;
  const void *data;    /* into the mapping: valid until close; not aligned */
  uint64_t offset;     /* file offset of the leaf's header, for messages */
  /* KAT_LEAF_SAMPLED: data and nbytes are the m values only; numel is the
   * whole tensor's.  0 and NULL for every other kind. */
  uint64_t sampled;           /* m */
  const void *sample_index;   /* m int64 flat indices, not aligned */
};

struct kat_tensor_file {
  char *path;
  unsigned version;
  uint32_t n_leaves;
  struct kat_tensor_leaf *leaves;
  const unsigned char *map;
  size_t map_len;
};

/* Opens and validates the whole file.  Returns 0 and *out, or -1 with a
 * message in err ("cannot read tensor file 'x': ...") naming the byte offset
 * and leaf index where the file went wrong. */
int kat_tensor_file_open(const char *path, struct kat_tensor_file **out, char *err, size_t errlen);

/* Same checks on a buffer already in memory; name is used in messages.  The
 * buffer must outlive the result (leaves point into it). */
int kat_tensor_file_parse(const void *buf, size_t len, const char *name,
                          struct kat_tensor_file **out, char *err, size_t errlen);

/* Frees the file and unmaps it; NULL is allowed. */
void kat_tensor_file_close(struct kat_tensor_file *f);

/* The leaf with exactly this path, or NULL. */
const struct kat_tensor_leaf *kat_tensor_file_find(const struct kat_tensor_file *f, const char *path);

/* "float32", "bfloat16", ...; "unknown" outside the enum. */
const char *kat_dtype_name(int dtype);
/* Bytes per element; 0 for KAT_DT_NONE and unknown values. */
size_t kat_dtype_itemsize(int dtype);
/* 1 for float16, bfloat16, float32, float64, complex64, complex128. */
int kat_dtype_is_floating(int dtype);
int kat_dtype_is_complex(int dtype);
/* "tensor", "int", "float", "bool", "None", "other", "sampled tensor". */
const char *kat_leaf_kind_name(int kind);

/* Number of doubles kat_leaf_to_double gives: numel (the sample's m for a
 * sampled leaf), or twice that for a complex leaf (real and imaginary parts
 * interleaved); 0 for None/other. */
uint64_t kat_leaf_double_count(const struct kat_tensor_leaf *leaf);

/* A malloc'd copy of the leaf's values as double (complex: re, im pairs).
 * int64 values beyond 2^53 are rounded; compare integer leaves exactly with
 * kat_exact_compare (tolerance.h) instead.  NULL with errno EINVAL for
 * None/other leaves, ENOMEM when out of memory.  A leaf of 0 elements gives
 * a non-NULL pointer that must still be freed. */
double *kat_leaf_to_double(const struct kat_tensor_leaf *leaf);

/* Conversions of one element, exposed for tests. */
double kat_half_to_double(uint16_t bits);
double kat_bfloat16_to_double(uint16_t bits);

#endif
