/*
 * vendor_cublas.c - wrappers for the cuBLAS GEMM and GEMV entry points.
 *
 * Each wrapper has the exact C ABI of the libcublas.so.13 function of the
 * same name (the prototypes are in vendor_api.h and checked against
 * cublas_api.h by tests/test_vendor_abi.c).  It resolves the real function
 * through libcublas's own handle, describes the operation from its scalar
 * arguments, and calls the real function inside a vendor window so that the
 * kernels it launches are attributed to it.
 *
 * A summary never reads device memory nor the pointer arrays of batched
 * calls (those live in device memory).  Grouped calls take their shapes from
 * host arrays, which are read only after the real call accepted them.
 */
#include <stdint.h>

#include "preload_internal.h"
#include "vendor_api.h"

/* Groups read at most from a grouped call's host arrays. */
#define KAT_GROUPS_MAX 65536

typedef KAT_PROTO_cublasGetMathMode(kat_fn_get_math_mode);

/* cudaDataType_t of every operand of a typed routine. */
static int32_t prec_dtype(int prec)
{
    switch (prec) {
    case KAT_PREC_S: return KAT_CUDA_R_32F;
    case KAT_PREC_D: return KAT_CUDA_R_64F;
    case KAT_PREC_C: return KAT_CUDA_C_32F;
    case KAT_PREC_Z: return KAT_CUDA_C_64F;
    case KAT_PREC_H: return KAT_CUDA_R_16F;
    default: return -1;
    }
}

/*
 * The compute type a typed routine runs with: its precision as modified by
 * the handle's math mode (cublasSetMathMode), read through the real
 * cublasGetMathMode.  TF32 and the deprecated TENSOR_OP mode only affect
 * single-precision routines.
 */
static int32_t prec_compute(kat_cublasHandle_t handle, int prec)
{
    static void *_Atomic real_slot;
    kat_fn_get_math_mode *get_mode =
        (kat_fn_get_math_mode *)kat_vendor_real(&real_slot, KAT_LIB_CUBLAS, "cublasGetMathMode");
    kat_cublasMath_t mode = KAT_CUBLAS_DEFAULT_MATH;
    if (handle == NULL || get_mode == NULL ||
        get_mode(handle, &mode) != KAT_CUBLAS_STATUS_SUCCESS)
        mode = KAT_CUBLAS_DEFAULT_MATH;
    int base = mode & 0xf;
    int pedantic = base == KAT_CUBLAS_PEDANTIC_MATH;

    switch (prec) {
    case KAT_PREC_S:
    case KAT_PREC_C:
        if (pedantic)
            return KAT_CUBLAS_COMPUTE_32F_PEDANTIC;
        if (base == KAT_CUBLAS_TF32_TENSOR_OP_MATH)
            return KAT_CUBLAS_COMPUTE_32F_FAST_TF32;
        if (base == KAT_CUBLAS_TENSOR_OP_MATH)
            return KAT_CUBLAS_COMPUTE_32F_FAST_16F;
        return KAT_CUBLAS_COMPUTE_32F;
    case KAT_PREC_D:
    case KAT_PREC_Z:
        return pedantic ? KAT_CUBLAS_COMPUTE_64F_PEDANTIC : KAT_CUBLAS_COMPUTE_64F;
    case KAT_PREC_H:
        return pedantic ? KAT_CUBLAS_COMPUTE_16F_PEDANTIC : KAT_CUBLAS_COMPUTE_16F;
    default:
        return 0;
    }
}

/*
 * A GEMM C = op(A) op(B) (+ C), C m x n, given by its scalar arguments.
 * batch 1 for a single GEMM; strides 0 unless strided.
 */
static void gemm_summary(struct kat_vendor_call_rec *rec, int32_t trans_a, int32_t trans_b,
                         int64_t m, int64_t n, int64_t k, int64_t lda, int64_t ldb, int64_t ldc,
                         int64_t batch, int64_t stride_a, int64_t stride_b, int64_t stride_c,
                         int32_t type_a, int32_t type_b, int32_t type_c, int32_t compute_type,
                         const void *c, enum kat_output_layout layout)
{
    struct kat_gemm_summary *g = &rec->op.gemm;

    rec->work_class = KAT_WORK_GEMM;
    rec->dtype_space = KAT_DTYPE_SPACE_CUDA;
    rec->summary_known = 1;
    g->m = m;
    g->n = n;
    g->k = k;
    g->batch = batch;
    g->lda = lda;
    g->ldb = ldb;
    g->ldc = ldc;
    g->stride_a = stride_a;
    g->stride_b = stride_b;
    g->stride_c = stride_c;
    g->trans_a = trans_a;
    g->trans_b = trans_b;
    g->type_a = type_a;
    g->type_b = type_b;
    g->type_c = type_c;
    g->compute_type = compute_type;
    kat_set_output(rec, c, kat_mul_pos(ldc, n), batch, stride_c, layout,
                   kat_cuda_dtype_bits(type_c));
}

/* A typed routine (Sgemm, Hgemm, ...): types from its precision. */
static void typed_summary(struct kat_vendor_call_rec *rec, kat_cublasHandle_t handle, int prec,
                          int32_t trans_a, int32_t trans_b, int64_t m, int64_t n, int64_t k,
                          int64_t lda, int64_t ldb, int64_t ldc, int64_t batch,
                          int64_t stride_a, int64_t stride_b, int64_t stride_c,
                          const void *c, enum kat_output_layout layout)
{
    int32_t t = prec_dtype(prec);
    gemm_summary(rec, trans_a, trans_b, m, n, k, lda, ldb, ldc, batch, stride_a, stride_b,
                 stride_c, t, t, t, prec_compute(handle, prec), c, layout);
}

/*
 * A GEMV y = op(A) x (+ y), recorded as a GEMM with n = 1: m is the length of
 * y, k the length of x, lda A's leading dimension, ldb = incx, ldc = incy,
 * stride_b / stride_c the strides between x and y vectors.
 */
static void gemv_summary(struct kat_vendor_call_rec *rec, int32_t trans, int64_t m, int64_t n,
                         int64_t lda, int64_t incx, int64_t incy, int64_t batch,
                         int64_t stride_a, int64_t stride_x, int64_t stride_y,
                         int32_t type_a, int32_t type_y, int32_t compute_type,
                         const void *y, enum kat_output_layout layout)
{
    struct kat_gemm_summary *g = &rec->op.gemm;
    int64_t y_len = trans == KAT_CUBLAS_OP_N ? m : n;
    int64_t x_len = trans == KAT_CUBLAS_OP_N ? n : m;

    rec->work_class = KAT_WORK_GEMV;
    rec->dtype_space = KAT_DTYPE_SPACE_CUDA;
    rec->summary_known = 1;
    g->m = y_len;
    g->n = 1;
    g->k = x_len;
    g->batch = batch;
    g->lda = lda;
    g->ldb = incx;
    g->ldc = incy;
    g->stride_a = stride_a;
    g->stride_b = stride_x;
    g->stride_c = stride_y;
    g->trans_a = trans;
    g->trans_b = KAT_CUBLAS_OP_N;
    g->type_a = type_a;
    g->type_b = type_a;
    g->type_c = type_y;
    g->compute_type = compute_type;

    /* y spans 1 + (len - 1) * |incy| elements. */
    uint64_t per = 0;
    if (y_len > 0 && incy != 0 && incy != INT64_MIN) {
        uint64_t step = incy < 0 ? (uint64_t)-incy : (uint64_t)incy;
        if (__builtin_mul_overflow((uint64_t)(y_len - 1), step, &per) ||
            __builtin_add_overflow(per, 1, &per))
            per = 0;
    }
    kat_set_output(rec, y, per, batch, stride_y, layout, kat_cuda_dtype_bits(type_y));
}

/*
 * A grouped batched GEMM, after the real call accepted its host arrays:
 * batch is the number of GEMMs over all groups, output_bytes the sum of their
 * C extents.  m, n, k, leading dimensions and transposes are filled only when
 * every group has the same ones, else left 0.
 */
#define KAT_DEFINE_GROUPED_SUMMARY(suffix, I)                                               \
    static void grouped_summary_##suffix(                                                  \
        struct kat_vendor_call_rec *rec, const kat_cublasOperation_t *ta,                  \
        const kat_cublasOperation_t *tb, const I *m, const I *n, const I *k, const I *lda, \
        const I *ldb, const I *ldc, int64_t groups, const I *group_size, int32_t type_a,   \
        int32_t type_b, int32_t type_c, int32_t compute_type)                              \
    {                                                                                      \
        struct kat_gemm_summary *g = &rec->op.gemm;                                        \
        uint64_t out_elements = 0;                                                         \
        int64_t total = 0;                                                                 \
        int uniform = 1;                                                                   \
        if (groups <= 0 || groups > KAT_GROUPS_MAX || group_size == NULL || m == NULL ||   \
            n == NULL || k == NULL || ldc == NULL)                                         \
            return;                                                                        \
        for (int64_t i = 0; i < groups; i++) {                                             \
            uint64_t one = kat_mul_pos(ldc[i], n[i]), all;                                 \
            if (group_size[i] < 0 || __builtin_add_overflow(total, group_size[i], &total)) \
                return;                                                                    \
            if (out_elements != UINT64_MAX &&                                              \
                (__builtin_mul_overflow(one, (uint64_t)group_size[i], &all) ||             \
                 __builtin_add_overflow(out_elements, all, &out_elements)))                \
                out_elements = UINT64_MAX;                                                 \
            if (m[i] != m[0] || n[i] != n[0] || k[i] != k[0] || ldc[i] != ldc[0] ||        \
                (lda && lda[i] != lda[0]) || (ldb && ldb[i] != ldb[0]) ||                  \
                (ta && ta[i] != ta[0]) || (tb && tb[i] != tb[0]))                          \
                uniform = 0;                                                               \
        }                                                                                  \
        rec->summary_known = 1;                                                            \
        g->batch = total;                                                                  \
        g->type_a = type_a;                                                                \
        g->type_b = type_b;                                                                \
        g->type_c = type_c;                                                                \
        g->compute_type = compute_type;                                                    \
        if (uniform) {                                                                     \
            g->m = m[0];                                                                   \
            g->n = n[0];                                                                   \
            g->k = k[0];                                                                   \
            g->lda = lda ? lda[0] : 0;                                                     \
            g->ldb = ldb ? ldb[0] : 0;                                                     \
            g->ldc = ldc[0];                                                               \
            g->trans_a = ta ? ta[0] : 0;                                                   \
            g->trans_b = tb ? tb[0] : 0;                                                   \
        }                                                                                  \
        rec->output_address = 0;                                                           \
        rec->output_bytes = out_elements == UINT64_MAX                                     \
            ? 0 : kat_elements_bytes(out_elements, kat_cuda_dtype_bits(type_c));           \
    }

KAT_DEFINE_GROUPED_SUMMARY(i32, int)
KAT_DEFINE_GROUPED_SUMMARY(i64, int64_t)

#define KAT_GROUPED_SUMMARY(I) \
    _Generic((I)0, int: grouped_summary_i32, default: grouped_summary_i64)

/* ---- the wrapper body ------------------------------------------------------- */

/*
 * `before` describes the call from its arguments (rec_ is the record), `after`
 * may complete it once the real function returned status_.  When nothing is
 * being recorded (no session, or paused by the benchmark control) the call
 * goes straight through.  No lock is held and nothing is allocated here.
 */
#define KAT_CUBLAS_BODY(name, before, after, args, probe)                               \
    {                                                                                   \
        static void *_Atomic real_slot_;                                                \
        kat_fn_##name *real_ =                                                          \
            (kat_fn_##name *)kat_vendor_real(&real_slot_, KAT_LIB_CUBLAS, #name);       \
        if (real_ == NULL)                                                              \
            return KAT_CUBLAS_STATUS_NOT_INITIALIZED;                                   \
        if (!kat_tracing_enabled())                                                     \
            return real_ args;                                                          \
        struct kat_vendor_call_rec rec_ = {0};                                          \
        before;                                                                         \
        struct kat_vendor_scope scope_;                                                 \
        kat_vendor_begin(&scope_);                                                      \
        kat_cublasStatus_t status_ = real_ args;                                        \
        after;                                                                          \
        static _Atomic uint32_t api_id_;                                                \
        kat_vendor_finish(&scope_, &rec_, KAT_LIB_CUBLAS, #name, &api_id_, status_, handle, \
                          __builtin_return_address(0));                                 \
        if (kat_probe_vendor_on())                                                      \
            probe;                                                                      \
        return status_;                                                                 \
    }

/* ---- GEMM ------------------------------------------------------------------------ */

#define KAT_DEFINE_GEMM(name, I, T, prec)                                                  \
    typedef KAT_PROTO_GEMM(kat_fn_##name, I, T);                                           \
    KAT_EXPORT KAT_PROTO_GEMM(name, I, T)                                                  \
    KAT_CUBLAS_BODY(name,                                                                  \
        typed_summary(&rec_, handle, prec, transa, transb, m, n, k, lda, ldb, ldc, 1, 0,   \
                      0, 0, C, KAT_OUT_SINGLE),                                            \
        (void)0,                                                                           \
        (handle, transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc),                                                             \
        kat_probe_vendor_gemm(handle, prec_dtype(prec), C, m, n, k, ldc, 1, 0, status_, scope_.depth))
KAT_CUBLAS_GEMM_LIST(KAT_DEFINE_GEMM)

#define KAT_DEFINE_GEMM_BATCHED(name, I, T, prec)                                          \
    typedef KAT_PROTO_GEMM_BATCHED(kat_fn_##name, I, T);                                   \
    KAT_EXPORT KAT_PROTO_GEMM_BATCHED(name, I, T)                                          \
    KAT_CUBLAS_BODY(name,                                                                  \
        typed_summary(&rec_, handle, prec, transa, transb, m, n, k, lda, ldb, ldc,         \
                      batchCount, 0, 0, 0, Carray, KAT_OUT_ARRAY),                         \
        (void)0,                                                                           \
        (handle, transa, transb, m, n, k, alpha, Aarray, lda, Barray, ldb, beta, Carray,   \
         ldc, batchCount),                                                             \
        kat_probe_vendor_unsupported(status_, scope_.depth))
KAT_CUBLAS_GEMM_BATCHED_LIST(KAT_DEFINE_GEMM_BATCHED)

#define KAT_DEFINE_GEMM_STRIDED(name, I, T, prec)                                          \
    typedef KAT_PROTO_GEMM_STRIDED(kat_fn_##name, I, T);                                   \
    KAT_EXPORT KAT_PROTO_GEMM_STRIDED(name, I, T)                                          \
    KAT_CUBLAS_BODY(name,                                                                  \
        typed_summary(&rec_, handle, prec, transa, transb, m, n, k, lda, ldb, ldc,         \
                      batchCount, strideA, strideB, strideC, C, KAT_OUT_STRIDED),          \
        (void)0,                                                                           \
        (handle, transa, transb, m, n, k, alpha, A, lda, strideA, B, ldb, strideB, beta,   \
         C, ldc, strideC, batchCount),                                                             \
        kat_probe_vendor_gemm(handle, prec_dtype(prec), C, m, n, k, ldc, batchCount, strideC, status_, scope_.depth))
KAT_CUBLAS_GEMM_STRIDED_LIST(KAT_DEFINE_GEMM_STRIDED)

/* SgemmEx / CgemmEx: operand types given, compute type from the precision. */
#define KAT_DEFINE_GEMM_TYPED_EX(name, I, S, prec)                                         \
    typedef KAT_PROTO_GEMM_TYPED_EX(kat_fn_##name, I, S);                                  \
    KAT_EXPORT KAT_PROTO_GEMM_TYPED_EX(name, I, S)                                         \
    KAT_CUBLAS_BODY(name,                                                                  \
        gemm_summary(&rec_, transa, transb, m, n, k, lda, ldb, ldc, 1, 0, 0, 0, Atype,     \
                     Btype, Ctype, prec_compute(handle, prec), C, KAT_OUT_SINGLE),         \
        (void)0,                                                                           \
        (handle, transa, transb, m, n, k, alpha, A, Atype, lda, B, Btype, ldb, beta, C,    \
         Ctype, ldc),                                                             \
        kat_probe_vendor_gemm(handle, Ctype, C, m, n, k, ldc, 1, 0, status_, scope_.depth))
KAT_CUBLAS_GEMM_TYPED_EX_LIST(KAT_DEFINE_GEMM_TYPED_EX)

/* GemmEx family: computeType is recorded as passed (cublasComputeType_t). */
#define KAT_DEFINE_GEMM_EX(name, I)                                                        \
    typedef KAT_PROTO_GEMM_EX(kat_fn_##name, I);                                           \
    KAT_EXPORT KAT_PROTO_GEMM_EX(name, I)                                                  \
    KAT_CUBLAS_BODY(name,                                                                  \
        gemm_summary(&rec_, transa, transb, m, n, k, lda, ldb, ldc, 1, 0, 0, 0, Atype,     \
                     Btype, Ctype, computeType, C, KAT_OUT_SINGLE),                        \
        (void)0,                                                                           \
        (handle, transa, transb, m, n, k, alpha, A, Atype, lda, B, Btype, ldb, beta, C,    \
         Ctype, ldc, computeType, algo),                                                             \
        kat_probe_vendor_gemm(handle, Ctype, C, m, n, k, ldc, 1, 0, status_, scope_.depth))
KAT_CUBLAS_GEMM_EX_LIST(KAT_DEFINE_GEMM_EX)

#define KAT_DEFINE_GEMM_BATCHED_EX(name, I)                                                \
    typedef KAT_PROTO_GEMM_BATCHED_EX(kat_fn_##name, I);                                   \
    KAT_EXPORT KAT_PROTO_GEMM_BATCHED_EX(name, I)                                          \
    KAT_CUBLAS_BODY(name,                                                                  \
        gemm_summary(&rec_, transa, transb, m, n, k, lda, ldb, ldc, batchCount, 0, 0, 0,   \
                     Atype, Btype, Ctype, computeType, Carray, KAT_OUT_ARRAY),             \
        (void)0,                                                                           \
        (handle, transa, transb, m, n, k, alpha, Aarray, Atype, lda, Barray, Btype, ldb,   \
         beta, Carray, Ctype, ldc, batchCount, computeType, algo),                                                             \
        kat_probe_vendor_unsupported(status_, scope_.depth))
KAT_CUBLAS_GEMM_BATCHED_EX_LIST(KAT_DEFINE_GEMM_BATCHED_EX)

#define KAT_DEFINE_GEMM_STRIDED_EX(name, I)                                                \
    typedef KAT_PROTO_GEMM_STRIDED_EX(kat_fn_##name, I);                                   \
    KAT_EXPORT KAT_PROTO_GEMM_STRIDED_EX(name, I)                                          \
    KAT_CUBLAS_BODY(name,                                                                  \
        gemm_summary(&rec_, transa, transb, m, n, k, lda, ldb, ldc, batchCount, strideA,   \
                     strideB, strideC, Atype, Btype, Ctype, computeType, C,                \
                     KAT_OUT_STRIDED),                                                     \
        (void)0,                                                                           \
        (handle, transa, transb, m, n, k, alpha, A, Atype, lda, strideA, B, Btype, ldb,    \
         strideB, beta, C, Ctype, ldc, strideC, batchCount, computeType, algo),                                                             \
        kat_probe_vendor_gemm(handle, Ctype, C, m, n, k, ldc, batchCount, strideC, status_, scope_.depth))
KAT_CUBLAS_GEMM_STRIDED_EX_LIST(KAT_DEFINE_GEMM_STRIDED_EX)

/* Grouped: the class before the call, the shapes after it succeeded. */
#define KAT_GROUPED_BEFORE \
    (rec_.work_class = KAT_WORK_GEMM, rec_.dtype_space = KAT_DTYPE_SPACE_CUDA)

#define KAT_DEFINE_GEMM_GROUPED(name, I, T, prec)                                          \
    typedef KAT_PROTO_GEMM_GROUPED(kat_fn_##name, I, T);                                   \
    KAT_EXPORT KAT_PROTO_GEMM_GROUPED(name, I, T)                                          \
    KAT_CUBLAS_BODY(name, KAT_GROUPED_BEFORE,                                              \
        if (status_ == KAT_CUBLAS_STATUS_SUCCESS)                                          \
            KAT_GROUPED_SUMMARY(I)(&rec_, transa_array, transb_array, m_array, n_array,    \
                                   k_array, lda_array, ldb_array, ldc_array, group_count,  \
                                   group_size, prec_dtype(prec), prec_dtype(prec),         \
                                   prec_dtype(prec), prec_compute(handle, prec)),          \
        (handle, transa_array, transb_array, m_array, n_array, k_array, alpha_array,       \
         Aarray, lda_array, Barray, ldb_array, beta_array, Carray, ldc_array, group_count,  \
         group_size),                                                             \
        kat_probe_vendor_unsupported(status_, scope_.depth))
KAT_CUBLAS_GEMM_GROUPED_LIST(KAT_DEFINE_GEMM_GROUPED)

#define KAT_DEFINE_GEMM_GROUPED_EX(name, I)                                                \
    typedef KAT_PROTO_GEMM_GROUPED_EX(kat_fn_##name, I);                                   \
    KAT_EXPORT KAT_PROTO_GEMM_GROUPED_EX(name, I)                                          \
    KAT_CUBLAS_BODY(name, KAT_GROUPED_BEFORE,                                              \
        if (status_ == KAT_CUBLAS_STATUS_SUCCESS)                                          \
            KAT_GROUPED_SUMMARY(I)(&rec_, transa_array, transb_array, m_array, n_array,    \
                                   k_array, lda_array, ldb_array, ldc_array, group_count,  \
                                   group_size, Atype, Btype, Ctype, computeType),          \
        (handle, transa_array, transb_array, m_array, n_array, k_array, alpha_array,       \
         Aarray, Atype, lda_array, Barray, Btype, ldb_array, beta_array, Carray, Ctype,    \
         ldc_array, group_count, group_size, computeType),                                                             \
        kat_probe_vendor_unsupported(status_, scope_.depth))
KAT_CUBLAS_GEMM_GROUPED_EX_LIST(KAT_DEFINE_GEMM_GROUPED_EX)

/* ---- GEMV ------------------------------------------------------------------------ */

#define KAT_DEFINE_GEMV(name, I, TS, TA, TY, type_a, type_y, compute)                      \
    typedef KAT_PROTO_GEMV(kat_fn_##name, I, TS, TA, TY);                                  \
    KAT_EXPORT KAT_PROTO_GEMV(name, I, TS, TA, TY)                                         \
    KAT_CUBLAS_BODY(name,                                                                  \
        gemv_summary(&rec_, trans, m, n, lda, incx, incy, 1, 0, 0, 0, type_a, type_y,      \
                     compute, y, KAT_OUT_SINGLE),                                          \
        (void)0,                                                                           \
        (handle, trans, m, n, alpha, A, lda, x, incx, beta, y, incy),                                                             \
        kat_probe_vendor_unsupported(status_, scope_.depth))
KAT_CUBLAS_GEMV_LIST(KAT_DEFINE_GEMV)

#define KAT_DEFINE_GEMV_BATCHED(name, I, TS, TA, TY, type_a, type_y, compute)              \
    typedef KAT_PROTO_GEMV_BATCHED(kat_fn_##name, I, TS, TA, TY);                          \
    KAT_EXPORT KAT_PROTO_GEMV_BATCHED(name, I, TS, TA, TY)                                 \
    KAT_CUBLAS_BODY(name,                                                                  \
        gemv_summary(&rec_, trans, m, n, lda, incx, incy, batchCount, 0, 0, 0, type_a,     \
                     type_y, compute, yarray, KAT_OUT_ARRAY),                              \
        (void)0,                                                                           \
        (handle, trans, m, n, alpha, Aarray, lda, xarray, incx, beta, yarray, incy,        \
         batchCount),                                                             \
        kat_probe_vendor_unsupported(status_, scope_.depth))
KAT_CUBLAS_GEMV_BATCHED_LIST(KAT_DEFINE_GEMV_BATCHED)

#define KAT_DEFINE_GEMV_STRIDED(name, I, TS, TA, TY, type_a, type_y, compute)              \
    typedef KAT_PROTO_GEMV_STRIDED(kat_fn_##name, I, TS, TA, TY);                          \
    KAT_EXPORT KAT_PROTO_GEMV_STRIDED(name, I, TS, TA, TY)                                 \
    KAT_CUBLAS_BODY(name,                                                                  \
        gemv_summary(&rec_, trans, m, n, lda, incx, incy, batchCount, strideA, stridex,    \
                     stridey, type_a, type_y, compute, y, KAT_OUT_STRIDED),                \
        (void)0,                                                                           \
        (handle, trans, m, n, alpha, A, lda, strideA, x, incx, stridex, beta, y, incy,     \
         stridey, batchCount),                                                             \
        kat_probe_vendor_unsupported(status_, scope_.depth))
KAT_CUBLAS_GEMV_STRIDED_LIST(KAT_DEFINE_GEMV_STRIDED)
