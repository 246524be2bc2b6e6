/*
 * cublaslt.c - the stand-in libcublasLt.so.13.
 *
 * Handles, matmul descriptors and matrix layouts with the real attribute
 * ids and sizes (a wrong size is CUBLAS_STATUS_INVALID_VALUE, as in the real
 * library), a heuristic that returns one algorithm, and cublasLtMatmul:
 * D = alpha * op(A) op(B) + beta * C with the BIAS and RELU epilogues,
 * column-major, optionally strided-batched, computed on host memory and
 * launched as a run-time named `nvjet_sm90_*` kernel through the driver
 * (loaded as PTX inside the call), like the real nvjet kernels.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cublasLt.h>

#include "vendor_common.h"

#define LT_MAGIC 0x4c544844u
#define DESC_MAGIC 0x4c544d44u
#define LAYOUT_MAGIC 0x4c544c59u
#define PREF_MAGIC 0x4c545046u

struct cublasLtContext {
    uint32_t magic;
};

struct lt_desc {
    uint32_t magic;
    int32_t compute_type, scale_type, pointer_mode;
    int32_t trans_a, trans_b, trans_c, fill_mode;
    uint32_t epilogue;
    int32_t bias_type;
    const void *bias;
    int64_t bias_batch_stride;
    void *aux;
    int64_t aux_ld, aux_batch_stride;
    int32_t sm_count_target;
    int8_t fast_accum;
};

struct lt_layout {
    uint32_t magic;
    uint32_t type;
    int32_t order;
    uint64_t rows, cols;
    int64_t ld;
    int32_t batch_count;
    int64_t batch_stride;
};

struct lt_pref {
    uint32_t magic;
    uint64_t max_workspace;
};

static struct lt_desc *desc_of(cublasLtMatmulDesc_t d)
{
    struct lt_desc *p = (struct lt_desc *)(void *)d;
    return p && p->magic == DESC_MAGIC ? p : NULL;
}

static struct lt_layout *layout_of(cublasLtMatrixLayout_t l)
{
    struct lt_layout *p = (struct lt_layout *)(void *)l;
    return p && p->magic == LAYOUT_MAGIC ? p : NULL;
}

size_t CUBLASWINAPI cublasLtGetVersion(void)
{
    return CUBLAS_VER_MAJOR * 10000 + CUBLAS_VER_MINOR * 100 + CUBLAS_VER_PATCH;
}

size_t CUBLASWINAPI cublasLtGetCudartVersion(void)
{
    return STANDIN_RUNTIME_VERSION;
}

cublasStatus_t CUBLASWINAPI cublasLtCreate(cublasLtHandle_t *lightHandle)
{
    if (!lightHandle)
        return CUBLAS_STATUS_INVALID_VALUE;
    struct cublasLtContext *h = calloc(1, sizeof *h);
    if (!h)
        return CUBLAS_STATUS_ALLOC_FAILED;
    h->magic = LT_MAGIC;
    *lightHandle = h;
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t CUBLASWINAPI cublasLtDestroy(cublasLtHandle_t lightHandle)
{
    if (!lightHandle || lightHandle->magic != LT_MAGIC)
        return CUBLAS_STATUS_NOT_INITIALIZED;
    lightHandle->magic = 0;
    free(lightHandle);
    return CUBLAS_STATUS_SUCCESS;
}

/* ---- attribute copies ------------------------------------------------------------------ */

/*
 * The real library checks matmul-descriptor and matrix-layout attributes the
 * same way, so both Set/Get pairs share these.  field/size come from
 * desc_field() or layout_field(); a NULL field is an unknown attribute (or a
 * bad object).  Set wants the exact size.
 */
static cublasStatus_t attr_set(void *field, size_t size, const void *buf, size_t sizeInBytes)
{
    if (!field || !buf || sizeInBytes != size)
        return CUBLAS_STATUS_INVALID_VALUE;
    memcpy(field, buf, size);
    return CUBLAS_STATUS_SUCCESS;
}

/* Get: a size query (sizeInBytes 0, no buf) only reports the size, as
 * documented; otherwise buf must hold at least the attribute. */
static cublasStatus_t attr_get(const void *field, size_t size, void *buf, size_t sizeInBytes,
                               size_t *sizeWritten)
{
    if (!field)
        return CUBLAS_STATUS_INVALID_VALUE;
    if (sizeInBytes == 0 && !buf && sizeWritten) {
        *sizeWritten = size;
        return CUBLAS_STATUS_SUCCESS;
    }
    if (!buf || sizeInBytes < size)
        return CUBLAS_STATUS_INVALID_VALUE;
    memcpy(buf, field, size);
    if (sizeWritten)
        *sizeWritten = size;
    return CUBLAS_STATUS_SUCCESS;
}

/* ---- matmul descriptors --------------------------------------------------------------- */

cublasStatus_t CUBLASWINAPI cublasLtMatmulDescCreate(cublasLtMatmulDesc_t *matmulDesc,
                                                     cublasComputeType_t computeType, cudaDataType_t scaleType)
{
    if (!matmulDesc)
        return CUBLAS_STATUS_INVALID_VALUE;
    /* As large as the real library's (cublasLt.h's opaque type): a descriptor's
     * bytes are what kaudit's summary cache compares. */
    _Static_assert(sizeof(struct lt_desc) <= sizeof(cublasLtMatmulDescOpaque_t), "lt_desc too large");
    struct lt_desc *d = calloc(1, sizeof(cublasLtMatmulDescOpaque_t));
    if (!d)
        return CUBLAS_STATUS_ALLOC_FAILED;
    d->magic = DESC_MAGIC;
    d->compute_type = computeType;
    d->scale_type = scaleType;
    d->epilogue = CUBLASLT_EPILOGUE_DEFAULT;
    d->bias_type = -1;
    *matmulDesc = (cublasLtMatmulDesc_t)(void *)d;
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t CUBLASWINAPI cublasLtMatmulDescDestroy(cublasLtMatmulDesc_t matmulDesc)
{
    struct lt_desc *d = desc_of(matmulDesc);
    if (!d)
        return CUBLAS_STATUS_INVALID_VALUE;
    d->magic = 0;
    free(d);
    return CUBLAS_STATUS_SUCCESS;
}

/* Where a descriptor attribute lives and how big it is. */
static void *desc_field(struct lt_desc *d, cublasLtMatmulDescAttributes_t attr, size_t *size)
{
#define F(field) (*size = sizeof d->field, (void *)&d->field)
    switch (attr) {
    case CUBLASLT_MATMUL_DESC_COMPUTE_TYPE: return F(compute_type);
    case CUBLASLT_MATMUL_DESC_SCALE_TYPE: return F(scale_type);
    case CUBLASLT_MATMUL_DESC_POINTER_MODE: return F(pointer_mode);
    case CUBLASLT_MATMUL_DESC_TRANSA: return F(trans_a);
    case CUBLASLT_MATMUL_DESC_TRANSB: return F(trans_b);
    case CUBLASLT_MATMUL_DESC_TRANSC: return F(trans_c);
    case CUBLASLT_MATMUL_DESC_FILL_MODE: return F(fill_mode);
    case CUBLASLT_MATMUL_DESC_EPILOGUE: return F(epilogue);
    case CUBLASLT_MATMUL_DESC_BIAS_POINTER: return F(bias);
    case CUBLASLT_MATMUL_DESC_BIAS_BATCH_STRIDE: return F(bias_batch_stride);
    case CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER: return F(aux);
    case CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD: return F(aux_ld);
    case CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_BATCH_STRIDE: return F(aux_batch_stride);
    case CUBLASLT_MATMUL_DESC_SM_COUNT_TARGET: return F(sm_count_target);
    case CUBLASLT_MATMUL_DESC_FAST_ACCUM: return F(fast_accum);
    case CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE: return F(bias_type);
    default: return NULL;
    }
#undef F
}

cublasStatus_t CUBLASWINAPI cublasLtMatmulDescSetAttribute(cublasLtMatmulDesc_t matmulDesc,
                                                           cublasLtMatmulDescAttributes_t attr, const void *buf,
                                                           size_t sizeInBytes)
{
    struct lt_desc *d = desc_of(matmulDesc);
    size_t size = 0;
    void *field = d ? desc_field(d, attr, &size) : NULL;
    return attr_set(field, size, buf, sizeInBytes);
}

cublasStatus_t CUBLASWINAPI cublasLtMatmulDescGetAttribute(cublasLtMatmulDesc_t matmulDesc,
                                                           cublasLtMatmulDescAttributes_t attr, void *buf,
                                                           size_t sizeInBytes, size_t *sizeWritten)
{
    struct lt_desc *d = desc_of(matmulDesc);
    size_t size = 0;
    const void *field = d ? desc_field(d, attr, &size) : NULL;
    return attr_get(field, size, buf, sizeInBytes, sizeWritten);
}

/* ---- matrix layouts ------------------------------------------------------------------ */

cublasStatus_t CUBLASWINAPI cublasLtMatrixLayoutCreate(cublasLtMatrixLayout_t *matLayout, cudaDataType type,
                                                       uint64_t rows, uint64_t cols, int64_t ld)
{
    if (!matLayout)
        return CUBLAS_STATUS_INVALID_VALUE;
    _Static_assert(sizeof(struct lt_layout) <= sizeof(cublasLtMatrixLayoutOpaque_t), "lt_layout too large");
    struct lt_layout *l = calloc(1, sizeof(cublasLtMatrixLayoutOpaque_t));
    if (!l)
        return CUBLAS_STATUS_ALLOC_FAILED;
    l->magic = LAYOUT_MAGIC;
    l->type = (uint32_t)type;
    l->order = CUBLASLT_ORDER_COL;
    l->rows = rows;
    l->cols = cols;
    l->ld = ld;
    l->batch_count = 1;
    *matLayout = (cublasLtMatrixLayout_t)(void *)l;
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t CUBLASWINAPI cublasLtMatrixLayoutDestroy(cublasLtMatrixLayout_t matLayout)
{
    struct lt_layout *l = layout_of(matLayout);
    if (!l)
        return CUBLAS_STATUS_INVALID_VALUE;
    l->magic = 0;
    free(l);
    return CUBLAS_STATUS_SUCCESS;
}

static void *layout_field(struct lt_layout *l, cublasLtMatrixLayoutAttribute_t attr, size_t *size)
{
#define F(field) (*size = sizeof l->field, (void *)&l->field)
    switch (attr) {
    case CUBLASLT_MATRIX_LAYOUT_TYPE: return F(type);
    case CUBLASLT_MATRIX_LAYOUT_ORDER: return F(order);
    case CUBLASLT_MATRIX_LAYOUT_ROWS: return F(rows);
    case CUBLASLT_MATRIX_LAYOUT_COLS: return F(cols);
    case CUBLASLT_MATRIX_LAYOUT_LD: return F(ld);
    case CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT: return F(batch_count);
    case CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET: return F(batch_stride);
    default: return NULL;
    }
#undef F
}

cublasStatus_t CUBLASWINAPI cublasLtMatrixLayoutSetAttribute(cublasLtMatrixLayout_t matLayout,
                                                             cublasLtMatrixLayoutAttribute_t attr, const void *buf,
                                                             size_t sizeInBytes)
{
    struct lt_layout *l = layout_of(matLayout);
    size_t size = 0;
    void *field = l ? layout_field(l, attr, &size) : NULL;
    return attr_set(field, size, buf, sizeInBytes);
}

cublasStatus_t CUBLASWINAPI cublasLtMatrixLayoutGetAttribute(cublasLtMatrixLayout_t matLayout,
                                                             cublasLtMatrixLayoutAttribute_t attr, void *buf,
                                                             size_t sizeInBytes, size_t *sizeWritten)
{
    struct lt_layout *l = layout_of(matLayout);
    size_t size = 0;
    const void *field = l ? layout_field(l, attr, &size) : NULL;
    return attr_get(field, size, buf, sizeInBytes, sizeWritten);
}

/* ---- preferences and heuristics ---------------------------------------------------------- */

cublasStatus_t CUBLASWINAPI cublasLtMatmulPreferenceCreate(cublasLtMatmulPreference_t *pref)
{
    if (!pref)
        return CUBLAS_STATUS_INVALID_VALUE;
    struct lt_pref *p = calloc(1, sizeof *p);
    if (!p)
        return CUBLAS_STATUS_ALLOC_FAILED;
    p->magic = PREF_MAGIC;
    *pref = (cublasLtMatmulPreference_t)(void *)p;
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t CUBLASWINAPI cublasLtMatmulPreferenceDestroy(cublasLtMatmulPreference_t pref)
{
    struct lt_pref *p = (struct lt_pref *)(void *)pref;
    if (!p || p->magic != PREF_MAGIC)
        return CUBLAS_STATUS_INVALID_VALUE;
    p->magic = 0;
    free(p);
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t CUBLASWINAPI cublasLtMatmulPreferenceSetAttribute(cublasLtMatmulPreference_t pref,
                                                                 cublasLtMatmulPreferenceAttributes_t attr,
                                                                 const void *buf, size_t sizeInBytes)
{
    struct lt_pref *p = (struct lt_pref *)(void *)pref;
    if (!p || p->magic != PREF_MAGIC || !buf)
        return CUBLAS_STATUS_INVALID_VALUE;
    if (attr == CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES) {
        if (sizeInBytes != sizeof(uint64_t))
            return CUBLAS_STATUS_INVALID_VALUE;
        memcpy(&p->max_workspace, buf, sizeof(uint64_t));
    }
    return CUBLAS_STATUS_SUCCESS;
}

static cublasStatus_t check_problem(struct lt_desc *d, struct lt_layout *a, struct lt_layout *b,
                                    struct lt_layout *c, struct lt_layout *dd, int64_t *m, int64_t *n, int64_t *k)
{
    if (!d || !a || !b || !c || !dd)
        return CUBLAS_STATUS_INVALID_VALUE;
    if (a->order != CUBLASLT_ORDER_COL || b->order != CUBLASLT_ORDER_COL || c->order != CUBLASLT_ORDER_COL ||
        dd->order != CUBLASLT_ORDER_COL)
        return CUBLAS_STATUS_NOT_SUPPORTED;
    if (!vc_type_supported((int)a->type) || !vc_type_supported((int)b->type) || !vc_type_supported((int)c->type) ||
        !vc_type_supported((int)dd->type))
        return CUBLAS_STATUS_NOT_SUPPORTED;
    int64_t am = d->trans_a ? (int64_t)a->cols : (int64_t)a->rows;
    int64_t ak = d->trans_a ? (int64_t)a->rows : (int64_t)a->cols;
    int64_t bk = d->trans_b ? (int64_t)b->cols : (int64_t)b->rows;
    int64_t bn = d->trans_b ? (int64_t)b->rows : (int64_t)b->cols;
    if (ak != bk || (int64_t)dd->rows != am || (int64_t)dd->cols != bn || c->rows != dd->rows ||
        c->cols != dd->cols)
        return CUBLAS_STATUS_INVALID_VALUE;
    if (a->ld < (int64_t)a->rows || b->ld < (int64_t)b->rows || c->ld < (int64_t)c->rows ||
        dd->ld < (int64_t)dd->rows)
        return CUBLAS_STATUS_INVALID_VALUE;
    uint32_t known = CUBLASLT_EPILOGUE_DEFAULT | CUBLASLT_EPILOGUE_RELU | CUBLASLT_EPILOGUE_BIAS;
    if (d->epilogue & ~known)
        return CUBLAS_STATUS_NOT_SUPPORTED;
    *m = am;
    *n = bn;
    *k = ak;
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t CUBLASWINAPI cublasLtMatmulAlgoGetHeuristic(
    cublasLtHandle_t lightHandle, cublasLtMatmulDesc_t operationDesc, cublasLtMatrixLayout_t Adesc,
    cublasLtMatrixLayout_t Bdesc, cublasLtMatrixLayout_t Cdesc, cublasLtMatrixLayout_t Ddesc,
    cublasLtMatmulPreference_t preference, int requestedAlgoCount,
    cublasLtMatmulHeuristicResult_t heuristicResultsArray[], int *returnAlgoCount)
{
    (void)preference;
    if (!lightHandle || lightHandle->magic != LT_MAGIC)
        return CUBLAS_STATUS_NOT_INITIALIZED;
    if (requestedAlgoCount <= 0 || !heuristicResultsArray || !returnAlgoCount)
        return CUBLAS_STATUS_INVALID_VALUE;
    int64_t m, n, k;
    cublasStatus_t s = check_problem(desc_of(operationDesc), layout_of(Adesc), layout_of(Bdesc),
                                     layout_of(Cdesc), layout_of(Ddesc), &m, &n, &k);
    if (s != CUBLAS_STATUS_SUCCESS)
        return s;
    memset(&heuristicResultsArray[0], 0, sizeof heuristicResultsArray[0]);
    heuristicResultsArray[0].algo.data[0] = 0x6e766a6574u; /* "nvjet" */
    heuristicResultsArray[0].state = CUBLAS_STATUS_SUCCESS;
    heuristicResultsArray[0].wavesCount = 1.0f;
    *returnAlgoCount = 1;
    return CUBLAS_STATUS_SUCCESS;
}

/* ---- matmul --------------------------------------------------------------------------------- */

cublasStatus_t CUBLASWINAPI cublasLtMatmul(cublasLtHandle_t lightHandle, cublasLtMatmulDesc_t computeDesc,
                                           const void *alpha, const void *A, cublasLtMatrixLayout_t Adesc,
                                           const void *B, cublasLtMatrixLayout_t Bdesc, const void *beta,
                                           const void *C, cublasLtMatrixLayout_t Cdesc, void *D,
                                           cublasLtMatrixLayout_t Ddesc, const cublasLtMatmulAlgo_t *algo,
                                           void *workspace, size_t workspaceSizeInBytes, cudaStream_t stream)
{
    (void)algo;
    (void)workspace;
    (void)workspaceSizeInBytes;
    if (!lightHandle || lightHandle->magic != LT_MAGIC)
        return CUBLAS_STATUS_NOT_INITIALIZED;
    struct lt_desc *d = desc_of(computeDesc);
    struct lt_layout *la = layout_of(Adesc), *lb = layout_of(Bdesc), *lc = layout_of(Cdesc),
                     *ld = layout_of(Ddesc);
    int64_t m, n, k;
    cublasStatus_t s = check_problem(d, la, lb, lc, ld, &m, &n, &k);
    if (s != CUBLAS_STATUS_SUCCESS)
        return s;
    if (!alpha || !beta || !A || !B || !D)
        return CUBLAS_STATUS_INVALID_VALUE;
    if ((d->epilogue & CUBLASLT_EPILOGUE_BIAS) && !d->bias)
        return CUBLAS_STATUS_INVALID_VALUE;
    vc_enter("cublasLt", "cublasLtMatmul");
    struct vc_gemm g;
    memset(&g, 0, sizeof g);
    g.trans_a = d->trans_a;
    g.trans_b = d->trans_b;
    g.m = m;
    g.n = n;
    g.k = k;
    g.batch = ld->batch_count > 0 ? ld->batch_count : 1;
    g.a = A;
    g.b = B;
    g.c = C;
    g.d = D;
    g.type_a = (int)la->type;
    g.type_b = (int)lb->type;
    g.type_c = (int)lc->type;
    g.type_d = (int)ld->type;
    g.lda = la->ld;
    g.ldb = lb->ld;
    g.ldc = lc->ld;
    g.ldd = ld->ld;
    g.stride_a = la->batch_stride;
    g.stride_b = lb->batch_stride;
    g.stride_c = lc->batch_stride;
    g.stride_d = ld->batch_stride;
    g.alpha = vc_load(alpha, d->scale_type, 0);
    g.beta = vc_load(beta, d->scale_type, 0);
    g.bias = (d->epilogue & CUBLASLT_EPILOGUE_BIAS) ? d->bias : NULL;
    g.relu = (d->epilogue & CUBLASLT_EPILOGUE_RELU) != 0;
    if (m > 0 && n > 0) {
        char name[160];
        const char *prec = la->type == CUDA_R_32F ? "tst" : la->type == CUDA_R_64F ? "dsd" : "hsh";
        snprintf(name, sizeof name, "nvjet_sm90_%s_%s_h_bz%s%s_%c%cT", prec,
                 n <= 16 ? "64x16_64x16_1x2" : "128x64_64x4_1x2", g.bias ? "_bias" : "", g.relu ? "_relu" : "",
                 d->trans_a ? 'T' : 'N', d->trans_b ? 'T' : 'N');
        dim3 grid = { vc_blocks(m, 64), vc_blocks(n, n <= 16 ? 16 : 64), (unsigned)g.batch };
        dim3 block = { 384, 1, 1 };
        void *args[] = { &g };
        cudaError_t e = vc_launch_driver(name, vc_gemm_body, grid, block, stream, args);
        s = e == cudaSuccess ? CUBLAS_STATUS_SUCCESS
            : e == cudaErrorInitializationError ? CUBLAS_STATUS_NOT_INITIALIZED
                                                : CUBLAS_STATUS_EXECUTION_FAILED;
    }
    vc_exit();
    return s;
}
