/*
 * vendor_cublaslt.c - the cublasLtMatmul wrapper.
 *
 * cublasLtMatmul describes its operation in opaque descriptors, so the
 * summary is read through cuBLASLt's own getters (cublasLtMatmulDescGetAttribute,
 * cublasLtMatrixLayoutGetAttribute), resolved like the entry point itself.
 * Those getters only read host-side descriptor objects.  Note that cuBLAS
 * reaches cuBLASLt internally (cublasGemmEx on sm90): such calls never come
 * through here; the outer cuBLAS call's window covers their kernels.
 */
#include <stdint.h>

#include "preload_internal.h"
#include "vendor_api.h"

typedef KAT_PROTO_cublasLtMatmul(kat_fn_cublasLtMatmul);
typedef KAT_PROTO_cublasLtMatmulDescGetAttribute(kat_fn_desc_get);
typedef KAT_PROTO_cublasLtMatrixLayoutGetAttribute(kat_fn_layout_get);

/* One matrix layout, as cublasLtMatrixLayoutGetAttribute reports it. */
struct lt_layout {
    uint32_t type;              /* cudaDataType_t */
    int32_t order;              /* cublasLtOrder_t */
    uint64_t rows, cols;
    int64_t ld;
    int32_t batch_count;
    int64_t batch_stride;       /* elements */
    uint32_t batch_mode;        /* cublasLtBatchMode_t */
};

/* Each attribute must be read with its exact size, or the getter refuses. */
static int desc_get(kat_fn_desc_get *get, kat_cublasLtMatmulDesc_t desc, int attr, void *buf,
                    size_t size)
{
    size_t written = 0;
    return get(desc, attr, buf, size, &written) == KAT_CUBLAS_STATUS_SUCCESS;
}

static int layout_get(kat_fn_layout_get *get, kat_cublasLtMatrixLayout_t layout, int attr,
                      void *buf, size_t size)
{
    size_t written = 0;
    return get(layout, attr, buf, size, &written) == KAT_CUBLAS_STATUS_SUCCESS;
}

/* Type and shape are required; the rest keeps cuBLASLt's defaults if unreadable. */
static int layout_read(kat_fn_layout_get *get, kat_cublasLtMatrixLayout_t layout,
                       struct lt_layout *l)
{
    *l = (struct lt_layout){.order = KAT_CUBLASLT_ORDER_COL, .batch_count = 1};
    if (layout == NULL ||
        !layout_get(get, layout, KAT_CUBLASLT_MATRIX_LAYOUT_TYPE, &l->type, sizeof l->type) ||
        !layout_get(get, layout, KAT_CUBLASLT_MATRIX_LAYOUT_ROWS, &l->rows, sizeof l->rows) ||
        !layout_get(get, layout, KAT_CUBLASLT_MATRIX_LAYOUT_COLS, &l->cols, sizeof l->cols) ||
        !layout_get(get, layout, KAT_CUBLASLT_MATRIX_LAYOUT_LD, &l->ld, sizeof l->ld))
        return 0;
    if (!layout_get(get, layout, KAT_CUBLASLT_MATRIX_LAYOUT_ORDER, &l->order, sizeof l->order))
        l->order = KAT_CUBLASLT_ORDER_COL;
    if (!layout_get(get, layout, KAT_CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &l->batch_count,
                    sizeof l->batch_count) || l->batch_count < 1)
        l->batch_count = 1;
    if (!layout_get(get, layout, KAT_CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET,
                    &l->batch_stride, sizeof l->batch_stride))
        l->batch_stride = 0;
    /* BATCH_MODE is recent (cuBLASLt 13); older libraries refuse it: strided. */
    if (!layout_get(get, layout, KAT_CUBLASLT_MATRIX_LAYOUT_BATCH_MODE, &l->batch_mode,
                    sizeof l->batch_mode))
        l->batch_mode = KAT_CUBLASLT_BATCH_MODE_STRIDED;
    return 1;
}

/* Elements of one matrix in memory: ld times the number of columns (rows if row-major). */
static uint64_t layout_elements(const struct lt_layout *l)
{
    int64_t rows = (int64_t)(l->rows > INT64_MAX ? 0 : l->rows);
    int64_t cols = (int64_t)(l->cols > INT64_MAX ? 0 : l->cols);
    if (l->order == KAT_CUBLASLT_ORDER_COL)
        return kat_mul_pos(l->ld, cols);
    if (l->order == KAT_CUBLASLT_ORDER_ROW)
        return kat_mul_pos(l->ld, rows);
    return kat_mul_pos(rows, cols);     /* tiled orders (COL32, ...): the payload only */
}

/*
 * D = epilogue(op(A) op(B) + C): m x n from D's layout, k from A's (its
 * columns, or its rows when A is transposed).  type_c, ldc and stride_c
 * describe D, the output; C is not read.
 */
static void matmul_summary(struct kat_vendor_call_rec *rec, kat_cublasLtMatmulDesc_t desc,
                           kat_cublasLtMatrixLayout_t a_desc, kat_cublasLtMatrixLayout_t b_desc,
                           kat_cublasLtMatrixLayout_t d_desc, const void *d, struct lt_layout *d_layout)
{
    static void *_Atomic desc_slot, *_Atomic layout_slot;
    kat_fn_desc_get *get_desc = (kat_fn_desc_get *)kat_vendor_real(
        &desc_slot, KAT_LIB_CUBLASLT, "cublasLtMatmulDescGetAttribute");
    kat_fn_layout_get *get_layout = (kat_fn_layout_get *)kat_vendor_real(
        &layout_slot, KAT_LIB_CUBLASLT, "cublasLtMatrixLayoutGetAttribute");
    struct kat_gemm_summary *g = &rec->op.gemm;
    struct lt_layout a, b, dl;
    int32_t compute = 0, trans_a = KAT_CUBLAS_OP_N, trans_b = KAT_CUBLAS_OP_N;
    uint32_t epilogue = KAT_CUBLASLT_EPILOGUE_DEFAULT;

    rec->work_class = KAT_WORK_GEMM;
    rec->dtype_space = KAT_DTYPE_SPACE_CUDA;
    if (get_desc == NULL || get_layout == NULL || desc == NULL)
        return;
    if (!desc_get(get_desc, desc, KAT_CUBLASLT_MATMUL_DESC_COMPUTE_TYPE, &compute,
                  sizeof compute) ||
        !desc_get(get_desc, desc, KAT_CUBLASLT_MATMUL_DESC_TRANSA, &trans_a, sizeof trans_a) ||
        !desc_get(get_desc, desc, KAT_CUBLASLT_MATMUL_DESC_TRANSB, &trans_b, sizeof trans_b))
        return;
    if (!desc_get(get_desc, desc, KAT_CUBLASLT_MATMUL_DESC_EPILOGUE, &epilogue,
                  sizeof epilogue))
        epilogue = KAT_CUBLASLT_EPILOGUE_DEFAULT;
    if (!layout_read(get_layout, a_desc, &a) || !layout_read(get_layout, b_desc, &b) ||
        !layout_read(get_layout, d_desc, &dl))
        return;

    rec->summary_known = 1;
    *d_layout = dl;
    g->m = (int64_t)dl.rows;
    g->n = (int64_t)dl.cols;
    g->k = (int64_t)(trans_a == KAT_CUBLAS_OP_N ? a.cols : a.rows);
    g->batch = dl.batch_count;
    g->lda = a.ld;
    g->ldb = b.ld;
    g->ldc = dl.ld;
    g->stride_a = a.batch_stride;
    g->stride_b = b.batch_stride;
    g->stride_c = dl.batch_stride;
    g->trans_a = trans_a;
    g->trans_b = trans_b;
    g->type_a = (int32_t)a.type;
    g->type_b = (int32_t)b.type;
    g->type_c = (int32_t)dl.type;
    g->compute_type = compute;
    g->epilogue = (int32_t)epilogue;
    kat_set_output(rec, d, layout_elements(&dl), dl.batch_count, dl.batch_stride,
                   dl.batch_mode == KAT_CUBLASLT_BATCH_MODE_POINTER_ARRAY ? KAT_OUT_ARRAY
                                                                          : KAT_OUT_STRIDED,
                   kat_cuda_dtype_bits((int32_t)dl.type));
}

/*
 * The causal probe's vendor channel (vendor_probe.c): D as its layout says,
 * batch matrices batch_stride elements apart; row-major D is the transpose of
 * a column-major one.  Tiled orders, pointer arrays and epilogues with an
 * output besides D are not replaced (counted as failed, so the replay is
 * unresolved).
 */
static void probe_matmul(const struct kat_vendor_call_rec *rec, const struct lt_layout *dl, void *d,
                         kat_cudaStream_t stream, kat_cublasStatus_t status, uint32_t depth)
{
    struct kat_probe_output o = { .family = KAT_PROBE_GEMM, .library = KAT_LIB_CUBLASLT, .stream = stream,
                                  .have_stream = 1, .base = d, .type = (int32_t)dl->type };
    int col = dl->order == KAT_CUBLASLT_ORDER_COL, row = dl->order == KAT_CUBLASLT_ORDER_ROW;
    int64_t inner = (int64_t)(col ? dl->rows : dl->cols), outer = (int64_t)(col ? dl->cols : dl->rows);
    /* D is the only output only for these epilogues: the AUX ones also write the
       pre-activation product to a buffer of their own, the gradient ones a bias
       gradient, and a candidate could read those instead of D */
    uint32_t e = (uint32_t)rec->op.gemm.epilogue;
    int d_only = e == KAT_CUBLASLT_EPILOGUE_DEFAULT || e == KAT_CUBLASLT_EPILOGUE_RELU ||
                 e == KAT_CUBLASLT_EPILOGUE_BIAS || e == KAT_CUBLASLT_EPILOGUE_RELU_BIAS ||
                 e == KAT_CUBLASLT_EPILOGUE_GELU || e == KAT_CUBLASLT_EPILOGUE_GELU_BIAS;
    if (rec->summary_known && d_only) {
        o.m = rec->op.gemm.m;
        o.n = rec->op.gemm.n;
        o.k = rec->op.gemm.k;
        if ((col || row) && dl->batch_mode != KAT_CUBLASLT_BATCH_MODE_POINTER_ARRAY && inner >= 0 &&
            outer >= 0 && dl->ld >= inner && dl->batch_stride >= 0) {
            o.ndims = 3;
            o.dims[0] = dl->batch_count;
            o.strides[0] = dl->batch_stride;
            o.dims[1] = outer;
            o.strides[1] = dl->ld;
            o.dims[2] = inner;
            o.strides[2] = 1;
        }
    }
    kat_probe_vendor_call(&o, status == KAT_CUBLAS_STATUS_SUCCESS, depth);
}

KAT_EXPORT KAT_PROTO_cublasLtMatmul(cublasLtMatmul)
{
    static void *_Atomic real_slot;
    kat_fn_cublasLtMatmul *real =
        (kat_fn_cublasLtMatmul *)kat_vendor_real(&real_slot, KAT_LIB_CUBLASLT, "cublasLtMatmul");
    if (real == NULL)
        return KAT_CUBLAS_STATUS_NOT_INITIALIZED;

    if (!kat_tracing_enabled())
        return real(lightHandle, computeDesc, alpha, A, Adesc, B, Bdesc, beta, C, Cdesc, D, Ddesc,
                    algo, workspace, workspaceSizeInBytes, stream);
    struct kat_vendor_call_rec rec = {0};
    struct lt_layout d_layout = {0};
    matmul_summary(&rec, computeDesc, Adesc, Bdesc, Ddesc, D, &d_layout);

    struct kat_vendor_scope scope;
    kat_vendor_begin(&scope);
    kat_cublasStatus_t status = real(lightHandle, computeDesc, alpha, A, Adesc, B, Bdesc, beta,
                                     C, Cdesc, D, Ddesc, algo, workspace,
                                     workspaceSizeInBytes, stream);
    static _Atomic uint32_t api_id;
    kat_vendor_finish(&scope, &rec, KAT_LIB_CUBLASLT, "cublasLtMatmul", &api_id, status, lightHandle,
                      __builtin_return_address(0));
    if (kat_probe_vendor_on())
        probe_matmul(&rec, &d_layout, D, stream, status, scope.depth);
    return status;
}
