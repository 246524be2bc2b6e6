/*
 * test_vendor_abi.c - the vendor wrappers against the real vendor headers.
 *
 * 1. Compile time: every prototype of preload/vendor_api.h, instantiated with
 *    the real types, redeclares the real entry point; a mismatch does not
 *    compile.  cublas_api.h declares the half and bfloat16 routines for C++
 *    only, so vendor_abi.cmake also compiles this part as C++ when it can.
 * 2. Compile time: every KAT_ constant equals the real enumerator it names,
 *    and the stand-in types have the real types' sizes.
 * 3. Run time: the wrappers (preload/vendor_*.c, linked in here) against
 *    stand-ins for the preload core and fake vendor entry points: arguments
 *    forwarded, status returned, one record per call with the right summary.
 *    cuBLASLt and cuDNN descriptors are the real libraries' (no GPU needed);
 *    those parts are skipped when the libraries do not load.
 *
 * Exit 0: all checks passed; 1: a check failed.
 */
#ifdef __cplusplus
#define KAT_ABI_CHECK_ONLY 1
#endif

#include <cublas_v2.h>
#include <cublasLt.h>
#include <cudnn.h>

#define KAT_VENDOR_API_REAL_TYPES 1
#include "vendor_api.h"

#ifdef __cplusplus
#define KAT_STATIC_ASSERT(cond, what) static_assert(cond, what)
extern "C" {
#else
#define KAT_STATIC_ASSERT(cond, what) _Static_assert(cond, what)
#endif

/* ---- 1. prototypes ------------------------------------------------------------ */

/* the getters the wrappers call */
KAT_PROTO_cublasGetMathMode(cublasGetMathMode);
KAT_PROTO_cublasGetStream_v2(cublasGetStream_v2);

#define DECL_TYPED(proto) proto;
#define DECL_GEMM(name, I, T, prec) KAT_PROTO_GEMM(name, I, T);
#define DECL_GEMM_BATCHED(name, I, T, prec) KAT_PROTO_GEMM_BATCHED(name, I, T);
#define DECL_GEMM_STRIDED(name, I, T, prec) KAT_PROTO_GEMM_STRIDED(name, I, T);
#define DECL_GEMM_TYPED_EX(name, I, S, prec) KAT_PROTO_GEMM_TYPED_EX(name, I, S);
#define DECL_GEMM_EX(name, I) KAT_PROTO_GEMM_EX(name, I);
#define DECL_GEMM_BATCHED_EX(name, I) KAT_PROTO_GEMM_BATCHED_EX(name, I);
#define DECL_GEMM_STRIDED_EX(name, I) KAT_PROTO_GEMM_STRIDED_EX(name, I);
#define DECL_GEMM_GROUPED(name, I, T, prec) KAT_PROTO_GEMM_GROUPED(name, I, T);
#define DECL_GEMM_GROUPED_EX(name, I) KAT_PROTO_GEMM_GROUPED_EX(name, I);
#define DECL_GEMV(name, I, TS, TA, TY, ta, ty, ct) KAT_PROTO_GEMV(name, I, TS, TA, TY);
#define DECL_GEMV_BATCHED(name, I, TS, TA, TY, ta, ty, ct) \
    KAT_PROTO_GEMV_BATCHED(name, I, TS, TA, TY);
#define DECL_GEMV_STRIDED(name, I, TS, TA, TY, ta, ty, ct) \
    KAT_PROTO_GEMV_STRIDED(name, I, TS, TA, TY);
#define DECL_SINGLE(library, name, wrapped) KAT_PROTO_##name(name);

KAT_CUBLAS_GEMM_LIST(DECL_GEMM)
KAT_CUBLAS_GEMM_BATCHED_LIST(DECL_GEMM_BATCHED)
KAT_CUBLAS_GEMM_STRIDED_LIST(DECL_GEMM_STRIDED)
KAT_CUBLAS_GEMM_TYPED_EX_LIST(DECL_GEMM_TYPED_EX)
KAT_CUBLAS_GEMM_EX_LIST(DECL_GEMM_EX)
KAT_CUBLAS_GEMM_BATCHED_EX_LIST(DECL_GEMM_BATCHED_EX)
KAT_CUBLAS_GEMM_STRIDED_EX_LIST(DECL_GEMM_STRIDED_EX)
KAT_CUBLAS_GEMM_GROUPED_LIST(DECL_GEMM_GROUPED)
KAT_CUBLAS_GEMM_GROUPED_EX_LIST(DECL_GEMM_GROUPED_EX)
KAT_CUBLAS_GEMV_LIST(DECL_GEMV)
KAT_CUBLAS_GEMV_BATCHED_LIST(DECL_GEMV_BATCHED)
KAT_CUBLAS_GEMV_STRIDED_LIST(DECL_GEMV_STRIDED)
KAT_VENDOR_SINGLE_LIST(DECL_SINGLE)

#ifdef __cplusplus
}
#endif

/* ---- 2. constants and type sizes --------------------------------------------------- */

#define CHECK_CONST(name, value) \
    KAT_STATIC_ASSERT((long long)KAT_##name == (long long)(name), "KAT_" #name " != " #name);
KAT_CUDA_DATATYPE_LIST(CHECK_CONST)
KAT_CUBLAS_CONST_LIST(CHECK_CONST)
KAT_CUBLASLT_CONST_LIST(CHECK_CONST)
KAT_CUDNN_CONST_LIST(CHECK_CONST)
KAT_STATIC_ASSERT(KAT_CUBLASLT_MATMUL_DESC_OPAQUE_BYTES == sizeof(cublasLtMatmulDescOpaque_t),
                  "KAT_CUBLASLT_MATMUL_DESC_OPAQUE_BYTES != sizeof(cublasLtMatmulDescOpaque_t)");
KAT_STATIC_ASSERT(KAT_CUBLASLT_MATRIX_LAYOUT_OPAQUE_BYTES == sizeof(cublasLtMatrixLayoutOpaque_t),
                  "KAT_CUBLASLT_MATRIX_LAYOUT_OPAQUE_BYTES != sizeof(cublasLtMatrixLayoutOpaque_t)");
KAT_STATIC_ASSERT(KAT_CUBLASLT_OPAQUE_MAJOR == CUBLAS_VER_MAJOR, "the opaque sizes are not this cublasLt.h's");

/* The preload passes these as int and void *. */
#define CHECK_INT_SIZED(type) KAT_STATIC_ASSERT(sizeof(type) == sizeof(int), #type " is not int-sized");
#define CHECK_POINTER_SIZED(type) \
    KAT_STATIC_ASSERT(sizeof(type) == sizeof(void *), #type " is not pointer-sized");
CHECK_INT_SIZED(cublasStatus_t)
CHECK_INT_SIZED(cublasOperation_t)
CHECK_INT_SIZED(cudaDataType)
CHECK_INT_SIZED(cublasComputeType_t)
CHECK_INT_SIZED(cublasGemmAlgo_t)
CHECK_INT_SIZED(cublasMath_t)
CHECK_INT_SIZED(cublasLtMatmulDescAttributes_t)
CHECK_INT_SIZED(cublasLtMatrixLayoutAttribute_t)
CHECK_INT_SIZED(cudnnStatus_t)
CHECK_INT_SIZED(cudnnConvolutionFwdAlgo_t)
CHECK_INT_SIZED(cudnnConvolutionBwdDataAlgo_t)
CHECK_INT_SIZED(cudnnConvolutionBwdFilterAlgo_t)
CHECK_INT_SIZED(cudnnDataType_t)
CHECK_INT_SIZED(cudnnTensorFormat_t)
CHECK_INT_SIZED(cudnnConvolutionMode_t)
CHECK_INT_SIZED(cudnnBackendAttributeName_t)
CHECK_INT_SIZED(cudnnBackendAttributeType_t)
CHECK_INT_SIZED(cudnnBackendDescriptorType_t)
CHECK_POINTER_SIZED(cublasHandle_t)
CHECK_POINTER_SIZED(cublasLtHandle_t)
CHECK_POINTER_SIZED(cublasLtMatmulDesc_t)
CHECK_POINTER_SIZED(cublasLtMatrixLayout_t)
CHECK_POINTER_SIZED(cudaStream_t)
CHECK_POINTER_SIZED(cudnnHandle_t)
CHECK_POINTER_SIZED(cudnnTensorDescriptor_t)
CHECK_POINTER_SIZED(cudnnFilterDescriptor_t)
CHECK_POINTER_SIZED(cudnnConvolutionDescriptor_t)
CHECK_POINTER_SIZED(cudnnActivationDescriptor_t)
CHECK_POINTER_SIZED(cudnnBackendDescriptor_t)

#ifndef KAT_ABI_CHECK_ONLY
/* ---- 3. the wrappers at run time ----------------------------------------------------- */

#include <dlfcn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures, checks;
static const char *current = "";    /* the entry point being checked */

#define CHECK(cond, ...)                                                        \
    do {                                                                        \
        checks++;                                                               \
        if (!(cond)) {                                                          \
            failures++;                                                         \
            fprintf(stderr, "%s:%d: %s: ", __FILE__, __LINE__, current);        \
            fprintf(stderr, __VA_ARGS__);                                       \
            fputc('\n', stderr);                                                \
        }                                                                       \
    } while (0)

#define CHECK_EQ(got, want)                                                     \
    do {                                                                        \
        long long got_ = (long long)(got), want_ = (long long)(want);          \
        CHECK(got_ == want_, "%s is %lld, expected %lld (%s)", #got, got_, want_, #want); \
    } while (0)

#define CHECK_STR(got, want)                                                    \
    CHECK(strcmp((got), (want)) == 0, "%s is '%s', expected '%s'", #got, (got), (want))

/* ---- stand-ins for the preload core (preload_internal.h) ---- */

static int tracing = 1;             /* kat_tracing_enabled() */
static int resolving = 1;           /* kat_resolve_vendor() finds anything */
static int open_windows, records;
static struct kat_vendor_call_rec last;
static const void *last_return_address;
static const char *strings[256];
static uint32_t string_count;

int kat_tracing_enabled(void)
{
    return tracing;
}

/* The causal probe's vendor channel (preload/vendor_probe.c): what the wrappers hand it. */
static int probe_on;
static struct {
    void *C;
    int64_t m, n, k, ldc, batch, stride;
    int32_t ctype;
    int status, calls, unsupported, outputs;
    struct kat_probe_output output;    /* the last one handed over by cuBLASLt or cuDNN */
    int succeeded;
} probe_seen;

int kat_probe_vendor_on(void)
{
    return probe_on;
}

void kat_probe_vendor_gemm(kat_cublasHandle_t handle, int32_t ctype, void *C, int64_t m, int64_t n, int64_t k,
                           int64_t ldc, int64_t batch, int64_t stride_c, int status, uint32_t depth)
{
    (void)handle;
    (void)depth;
    probe_seen.C = C;
    probe_seen.k = k;
    probe_seen.ctype = ctype;
    probe_seen.m = m;
    probe_seen.n = n;
    probe_seen.ldc = ldc;
    probe_seen.batch = batch;
    probe_seen.stride = stride_c;
    probe_seen.status = status;
    probe_seen.calls++;
}

void kat_probe_vendor_unsupported(int status, uint32_t depth)
{
    (void)status;
    (void)depth;
    probe_seen.unsupported++;
}

void kat_probe_vendor_call(const struct kat_probe_output *o, int succeeded, uint32_t depth)
{
    (void)depth;
    probe_seen.output = *o;
    probe_seen.succeeded = succeeded;
    probe_seen.outputs++;
}

uint32_t kat_intern(const char *s)
{
    if (s == NULL)
        return 0;
    for (uint32_t i = 0; i < string_count; i++)
        if (strcmp(strings[i], s) == 0)
            return i + 1;
    if (string_count == sizeof strings / sizeof strings[0])
        return 0;
    strings[string_count++] = s;    /* the wrappers pass string literals */
    return string_count;
}

static const char *interned(uint32_t id)
{
    return id >= 1 && id <= string_count ? strings[id - 1] : "";
}

void kat_vendor_begin(struct kat_vendor_scope *scope)
{
    memset(scope, 0, sizeof *scope);
    scope->depth = (uint32_t)++open_windows;
    scope->call_id = (uint64_t)records + 1;
}

void kat_vendor_end(struct kat_vendor_scope *scope, struct kat_vendor_call_rec *rec,
                    const void *return_address)
{
    rec->call_id = scope->call_id;
    rec->depth = scope->depth;
    last = *rec;
    last_return_address = return_address;
    open_windows--;
    records++;
}

/* ---- fake vendor entry points ---- */

static int fake_status;             /* what every fake returns */
static const char *fake_called;     /* the last fake entered */
static const void *fake_output;     /* the output argument it received */
static int fake_math_mode;          /* what cublasGetMathMode reports */

#define FAKE_BODY(name, output)                \
    {                                          \
        fake_called = #name;                   \
        fake_output = (const void *)(output);  \
        return fake_status;                    \
    }

#define FAKE_GEMM(name, I, T, prec) static KAT_PROTO_GEMM(fake_##name, I, T) FAKE_BODY(name, C)
#define FAKE_GEMM_BATCHED(name, I, T, prec) \
    static KAT_PROTO_GEMM_BATCHED(fake_##name, I, T) FAKE_BODY(name, Carray)
#define FAKE_GEMM_STRIDED(name, I, T, prec) \
    static KAT_PROTO_GEMM_STRIDED(fake_##name, I, T) FAKE_BODY(name, C)
#define FAKE_GEMM_TYPED_EX(name, I, S, prec) \
    static KAT_PROTO_GEMM_TYPED_EX(fake_##name, I, S) FAKE_BODY(name, C)
#define FAKE_GEMM_EX(name, I) static KAT_PROTO_GEMM_EX(fake_##name, I) FAKE_BODY(name, C)
#define FAKE_GEMM_BATCHED_EX(name, I) \
    static KAT_PROTO_GEMM_BATCHED_EX(fake_##name, I) FAKE_BODY(name, Carray)
#define FAKE_GEMM_STRIDED_EX(name, I) \
    static KAT_PROTO_GEMM_STRIDED_EX(fake_##name, I) FAKE_BODY(name, C)
#define FAKE_GEMM_GROUPED(name, I, T, prec) \
    static KAT_PROTO_GEMM_GROUPED(fake_##name, I, T) FAKE_BODY(name, Carray)
#define FAKE_GEMM_GROUPED_EX(name, I) \
    static KAT_PROTO_GEMM_GROUPED_EX(fake_##name, I) FAKE_BODY(name, Carray)
#define FAKE_GEMV(name, I, TS, TA, TY, ta, ty, ct) \
    static KAT_PROTO_GEMV(fake_##name, I, TS, TA, TY) FAKE_BODY(name, y)
#define FAKE_GEMV_BATCHED(name, I, TS, TA, TY, ta, ty, ct) \
    static KAT_PROTO_GEMV_BATCHED(fake_##name, I, TS, TA, TY) FAKE_BODY(name, yarray)
#define FAKE_GEMV_STRIDED(name, I, TS, TA, TY, ta, ty, ct) \
    static KAT_PROTO_GEMV_STRIDED(fake_##name, I, TS, TA, TY) FAKE_BODY(name, y)

KAT_CUBLAS_GEMM_LIST(FAKE_GEMM)
KAT_CUBLAS_GEMM_BATCHED_LIST(FAKE_GEMM_BATCHED)
KAT_CUBLAS_GEMM_STRIDED_LIST(FAKE_GEMM_STRIDED)
KAT_CUBLAS_GEMM_TYPED_EX_LIST(FAKE_GEMM_TYPED_EX)
KAT_CUBLAS_GEMM_EX_LIST(FAKE_GEMM_EX)
KAT_CUBLAS_GEMM_BATCHED_EX_LIST(FAKE_GEMM_BATCHED_EX)
KAT_CUBLAS_GEMM_STRIDED_EX_LIST(FAKE_GEMM_STRIDED_EX)
KAT_CUBLAS_GEMM_GROUPED_LIST(FAKE_GEMM_GROUPED)
KAT_CUBLAS_GEMM_GROUPED_EX_LIST(FAKE_GEMM_GROUPED_EX)
KAT_CUBLAS_GEMV_LIST(FAKE_GEMV)
KAT_CUBLAS_GEMV_BATCHED_LIST(FAKE_GEMV_BATCHED)
KAT_CUBLAS_GEMV_STRIDED_LIST(FAKE_GEMV_STRIDED)

static KAT_PROTO_cublasGetMathMode(fake_cublasGetMathMode)
{
    *mode = (cublasMath_t)fake_math_mode;
    return handle ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_NOT_INITIALIZED;
}

static KAT_PROTO_cublasLtMatmul(fake_cublasLtMatmul) FAKE_BODY(cublasLtMatmul, D)
static KAT_PROTO_cudnnConvolutionForward(fake_cudnnConvolutionForward)
    FAKE_BODY(cudnnConvolutionForward, y)
static KAT_PROTO_cudnnConvolutionBackwardData(fake_cudnnConvolutionBackwardData)
    FAKE_BODY(cudnnConvolutionBackwardData, dx)
static KAT_PROTO_cudnnConvolutionBackwardFilter(fake_cudnnConvolutionBackwardFilter)
    FAKE_BODY(cudnnConvolutionBackwardFilter, dw)
static KAT_PROTO_cudnnConvolutionBiasActivationForward(fake_cudnnConvolutionBiasActivationForward)
    FAKE_BODY(cudnnConvolutionBiasActivationForward, y)
static KAT_PROTO_cudnnBackendExecute(fake_cudnnBackendExecute)
    FAKE_BODY(cudnnBackendExecute, executionPlan)

/* The handles here are not cuDNN's: the stream getter the probe calls is pretended. */
#define FAKE_STREAM ((void *)0x5151)
static KAT_PROTO_cudnnGetStream(fake_cudnnGetStream)
{
    *streamId = FAKE_STREAM;
    return handle ? CUDNN_STATUS_SUCCESS : CUDNN_STATUS_BAD_PARAM;
}

/*
 * Backend getters go to the real cuDNN, except what needs a GPU: heuristics
 * results need a handle, so this shim pretends them.
 */
static void *lt_lib, *cudnn_lib;
static int64_t pretend_heur_results;

static KAT_PROTO_cudnnBackendGetAttribute(shim_cudnnBackendGetAttribute)
{
    __typeof__(&cudnnBackendGetAttribute) real =
        (__typeof__(&cudnnBackendGetAttribute))dlsym(cudnn_lib, "cudnnBackendGetAttribute");
    if (attributeName == CUDNN_ATTR_ENGINEHEUR_RESULTS && pretend_heur_results) {
        /* The application's engine config descriptors would be filled in place. */
        *elementCount = pretend_heur_results < requestedElementCount ? pretend_heur_results
                                                                     : requestedElementCount;
        return CUDNN_STATUS_SUCCESS;
    }
    return real(descriptor, attributeName, attributeType, requestedElementCount, elementCount,
                arrayOfElements);
}

struct fake {
    uint32_t library;
    const char *name;
    void *fn;
};

#define FAKE_ENTRY(name, ...) {KAT_LIB_CUBLAS, #name, (void *)fake_##name},
static const struct fake fakes[] = {
    KAT_CUBLAS_GEMM_LIST(FAKE_ENTRY)
    KAT_CUBLAS_GEMM_BATCHED_LIST(FAKE_ENTRY)
    KAT_CUBLAS_GEMM_STRIDED_LIST(FAKE_ENTRY)
    KAT_CUBLAS_GEMM_TYPED_EX_LIST(FAKE_ENTRY)
    KAT_CUBLAS_GEMM_EX_LIST(FAKE_ENTRY)
    KAT_CUBLAS_GEMM_BATCHED_EX_LIST(FAKE_ENTRY)
    KAT_CUBLAS_GEMM_STRIDED_EX_LIST(FAKE_ENTRY)
    KAT_CUBLAS_GEMM_GROUPED_LIST(FAKE_ENTRY)
    KAT_CUBLAS_GEMM_GROUPED_EX_LIST(FAKE_ENTRY)
    KAT_CUBLAS_GEMV_LIST(FAKE_ENTRY)
    KAT_CUBLAS_GEMV_BATCHED_LIST(FAKE_ENTRY)
    KAT_CUBLAS_GEMV_STRIDED_LIST(FAKE_ENTRY)
    {KAT_LIB_CUBLAS, "cublasGetMathMode", (void *)fake_cublasGetMathMode},
    {KAT_LIB_CUBLASLT, "cublasLtMatmul", (void *)fake_cublasLtMatmul},
    {KAT_LIB_CUDNN, "cudnnConvolutionForward", (void *)fake_cudnnConvolutionForward},
    {KAT_LIB_CUDNN, "cudnnConvolutionBackwardData", (void *)fake_cudnnConvolutionBackwardData},
    {KAT_LIB_CUDNN, "cudnnConvolutionBackwardFilter", (void *)fake_cudnnConvolutionBackwardFilter},
    {KAT_LIB_CUDNN, "cudnnConvolutionBiasActivationForward",
     (void *)fake_cudnnConvolutionBiasActivationForward},
    {KAT_LIB_CUDNN, "cudnnBackendExecute", (void *)fake_cudnnBackendExecute},
    {KAT_LIB_CUDNN, "cudnnGetStream", (void *)fake_cudnnGetStream},
    {KAT_LIB_CUDNN, "cudnnBackendGetAttribute", (void *)shim_cudnnBackendGetAttribute},
};

void *kat_resolve_vendor(uint32_t library, const char *name)
{
    if (!resolving)
        return NULL;
    for (size_t i = 0; i < sizeof fakes / sizeof fakes[0]; i++) {
        if (strcmp(fakes[i].name, name) == 0) {
            CHECK(fakes[i].library == library, "%s resolved in library %u, expected %u", name,
                  library, fakes[i].library);
            return fakes[i].fn;
        }
    }
    /* Everything else is a getter of the real library. */
    if (library == KAT_LIB_CUBLASLT && lt_lib)
        return dlsym(lt_lib, name);
    if (library == KAT_LIB_CUDNN && cudnn_lib)
        return dlsym(cudnn_lib, name);
    return NULL;
}

/* ---- checking one record ---- */

#define HANDLE ((void *)0x4321)
#define OUT ((void *)0x100000)

static int records_before;

static void begin_call(const char *api)
{
    current = api;
    records_before = records;
    fake_called = NULL;
    fake_output = NULL;
}

static void expect_record(const char *api, uint32_t library, int status, const void *handle)
{
    CHECK_EQ(status, fake_status);
    CHECK_EQ(records, records_before + 1);
    CHECK_EQ(open_windows, 0);
    CHECK(fake_called != NULL && strcmp(fake_called, api) == 0, "the real function called was %s",
          fake_called ? fake_called : "none");
    CHECK_STR(interned(last.api_string), api);
    CHECK_EQ(last.library, library);
    CHECK_EQ(last.status, fake_status);
    CHECK_EQ(last.handle, (uintptr_t)handle);
    CHECK(last_return_address != NULL, "no return address");
}

static void expect_gemm(uint32_t work_class, const struct kat_gemm_summary *want,
                        const void *out, uint64_t bytes)
{
    const struct kat_gemm_summary *g = &last.op.gemm;
    CHECK_EQ(last.work_class, work_class);
    CHECK_EQ(last.dtype_space, KAT_DTYPE_SPACE_CUDA);
    CHECK_EQ(last.summary_known, 1);
    CHECK_EQ(last.output_address, (uintptr_t)out);
    CHECK_EQ(last.output_bytes, bytes);
    CHECK_EQ(g->m, want->m);
    CHECK_EQ(g->n, want->n);
    CHECK_EQ(g->k, want->k);
    CHECK_EQ(g->batch, want->batch);
    CHECK_EQ(g->lda, want->lda);
    CHECK_EQ(g->ldb, want->ldb);
    CHECK_EQ(g->ldc, want->ldc);
    CHECK_EQ(g->stride_a, want->stride_a);
    CHECK_EQ(g->stride_b, want->stride_b);
    CHECK_EQ(g->stride_c, want->stride_c);
    CHECK_EQ(g->trans_a, want->trans_a);
    CHECK_EQ(g->trans_b, want->trans_b);
    CHECK_EQ(g->type_a, want->type_a);
    CHECK_EQ(g->type_b, want->type_b);
    CHECK_EQ(g->type_c, want->type_c);
    CHECK_EQ(g->compute_type, want->compute_type);
    CHECK_EQ(g->epilogue, want->epilogue);
}

/* What an element type means, independently of vendor_api.h's lists. */
#define DTYPE_OF(T)                                                                   \
    _Generic((T *)0, float *: CUDA_R_32F, double *: CUDA_R_64F, cuComplex *: CUDA_C_32F, \
             cuDoubleComplex *: CUDA_C_64F, kat_half *: CUDA_R_16F,                    \
             kat_bfloat16 *: CUDA_R_16BF)
#define BITS_OF(T)                                                                    \
    _Generic((T *)0, float *: 32, double *: 64, cuComplex *: 64, cuDoubleComplex *: 128, \
             kat_half *: 16, kat_bfloat16 *: 16)
#define COMPUTE_OF(T)                                                                 \
    _Generic((T *)0, float *: CUBLAS_COMPUTE_32F, double *: CUBLAS_COMPUTE_64F,          \
             cuComplex *: CUBLAS_COMPUTE_32F, cuDoubleComplex *: CUBLAS_COMPUTE_64F,     \
             kat_half *: CUBLAS_COMPUTE_16F, kat_bfloat16 *: CUBLAS_COMPUTE_32F)

/* ---- every cuBLAS entry point once ---- */

#define RUN_GEMM(name, I, T, prec)                                                         \
    {                                                                                      \
        begin_call(#name);                                                                 \
        int st = name(HANDLE, CUBLAS_OP_N, CUBLAS_OP_T, 64, 32, 16, NULL, NULL, 64, NULL,  \
                      32, NULL, (T *)OUT, 80);                                             \
        expect_record(#name, KAT_LIB_CUBLAS, st, HANDLE);                                  \
        struct kat_gemm_summary want = {.m = 64, .n = 32, .k = 16, .batch = 1, .lda = 64,  \
            .ldb = 32, .ldc = 80, .trans_a = CUBLAS_OP_N, .trans_b = CUBLAS_OP_T,          \
            .type_a = DTYPE_OF(T), .type_b = DTYPE_OF(T), .type_c = DTYPE_OF(T),           \
            .compute_type = COMPUTE_OF(T)};                                                \
        expect_gemm(KAT_WORK_GEMM, &want, OUT, 80ull * 32 * BITS_OF(T) / 8);               \
        CHECK(fake_output == OUT, "output pointer not forwarded");                          \
    }

#define RUN_GEMM_BATCHED(name, I, T, prec)                                                 \
    {                                                                                      \
        begin_call(#name);                                                                 \
        int st = name(HANDLE, CUBLAS_OP_T, CUBLAS_OP_N, 64, 32, 16, NULL, NULL, 16, NULL,  \
                      16, NULL, (T *const *)OUT, 80, 3);                                   \
        expect_record(#name, KAT_LIB_CUBLAS, st, HANDLE);                                  \
        struct kat_gemm_summary want = {.m = 64, .n = 32, .k = 16, .batch = 3, .lda = 16,  \
            .ldb = 16, .ldc = 80, .trans_a = CUBLAS_OP_T, .trans_b = CUBLAS_OP_N,          \
            .type_a = DTYPE_OF(T), .type_b = DTYPE_OF(T), .type_c = DTYPE_OF(T),           \
            .compute_type = COMPUTE_OF(T)};                                                \
        expect_gemm(KAT_WORK_GEMM, &want, NULL, 3ull * 80 * 32 * BITS_OF(T) / 8);          \
    }

#define RUN_GEMM_STRIDED(name, I, T, prec)                                                 \
    {                                                                                      \
        begin_call(#name);                                                                 \
        int st = name(HANDLE, CUBLAS_OP_N, CUBLAS_OP_N, 64, 32, 16, NULL, NULL, 64, 1000,  \
                      NULL, 16, 2000, NULL, (T *)OUT, 80, 4000, 3);                        \
        expect_record(#name, KAT_LIB_CUBLAS, st, HANDLE);                                  \
        struct kat_gemm_summary want = {.m = 64, .n = 32, .k = 16, .batch = 3, .lda = 64,  \
            .ldb = 16, .ldc = 80, .stride_a = 1000, .stride_b = 2000, .stride_c = 4000,    \
            .type_a = DTYPE_OF(T), .type_b = DTYPE_OF(T), .type_c = DTYPE_OF(T),           \
            .compute_type = COMPUTE_OF(T)};                                                \
        expect_gemm(KAT_WORK_GEMM, &want, OUT, (2ull * 4000 + 80 * 32) * BITS_OF(T) / 8);  \
    }

#define RUN_GEMM_TYPED_EX(name, I, S, prec)                                                \
    {                                                                                      \
        begin_call(#name);                                                                 \
        int st = name(HANDLE, CUBLAS_OP_N, CUBLAS_OP_N, 64, 32, 16, NULL, NULL, CUDA_R_8I, \
                      64, NULL, CUDA_R_8I, 16, NULL, OUT, CUDA_R_32F, 80);                 \
        expect_record(#name, KAT_LIB_CUBLAS, st, HANDLE);                                  \
        struct kat_gemm_summary want = {.m = 64, .n = 32, .k = 16, .batch = 1, .lda = 64,  \
            .ldb = 16, .ldc = 80, .type_a = CUDA_R_8I, .type_b = CUDA_R_8I,                \
            .type_c = CUDA_R_32F, .compute_type = COMPUTE_OF(S)};                          \
        expect_gemm(KAT_WORK_GEMM, &want, OUT, 80ull * 32 * 4);                            \
    }

#define RUN_GEMM_EX(name, I)                                                               \
    {                                                                                      \
        begin_call(#name);                                                                 \
        int st = name(HANDLE, CUBLAS_OP_T, CUBLAS_OP_N, 64, 32, 16, NULL, NULL,            \
                      CUDA_R_16BF, 16, NULL, CUDA_R_16BF, 16, NULL, OUT, CUDA_R_32F, 80,   \
                      CUBLAS_COMPUTE_32F_FAST_16BF, CUBLAS_GEMM_DEFAULT);                  \
        expect_record(#name, KAT_LIB_CUBLAS, st, HANDLE);                                  \
        struct kat_gemm_summary want = {.m = 64, .n = 32, .k = 16, .batch = 1, .lda = 16,  \
            .ldb = 16, .ldc = 80, .trans_a = CUBLAS_OP_T, .type_a = CUDA_R_16BF,           \
            .type_b = CUDA_R_16BF, .type_c = CUDA_R_32F,                                   \
            .compute_type = CUBLAS_COMPUTE_32F_FAST_16BF};                                 \
        expect_gemm(KAT_WORK_GEMM, &want, OUT, 80ull * 32 * 4);                            \
    }

#define RUN_GEMM_BATCHED_EX(name, I)                                                       \
    {                                                                                      \
        begin_call(#name);                                                                 \
        int st = name(HANDLE, CUBLAS_OP_N, CUBLAS_OP_N, 64, 32, 16, NULL, NULL,            \
                      CUDA_R_16F, 64, NULL, CUDA_R_16F, 16, NULL, (void *const *)OUT,      \
                      CUDA_R_16F, 64, 5, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);         \
        expect_record(#name, KAT_LIB_CUBLAS, st, HANDLE);                                  \
        struct kat_gemm_summary want = {.m = 64, .n = 32, .k = 16, .batch = 5, .lda = 64,  \
            .ldb = 16, .ldc = 64, .type_a = CUDA_R_16F, .type_b = CUDA_R_16F,              \
            .type_c = CUDA_R_16F, .compute_type = CUBLAS_COMPUTE_32F};                     \
        expect_gemm(KAT_WORK_GEMM, &want, NULL, 5ull * 64 * 32 * 2);                       \
    }

#define RUN_GEMM_STRIDED_EX(name, I)                                                       \
    {                                                                                      \
        begin_call(#name);                                                                 \
        int st = name(HANDLE, CUBLAS_OP_N, CUBLAS_OP_N, 64, 32, 16, NULL, NULL,            \
                      CUDA_R_8F_E4M3, 64, 0, NULL, CUDA_R_8F_E4M3, 16, 512, NULL, OUT,     \
                      CUDA_R_16BF, 64, 2048, 4, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);  \
        expect_record(#name, KAT_LIB_CUBLAS, st, HANDLE);                                  \
        struct kat_gemm_summary want = {.m = 64, .n = 32, .k = 16, .batch = 4, .lda = 64,  \
            .ldb = 16, .ldc = 64, .stride_b = 512, .stride_c = 2048,                       \
            .type_a = CUDA_R_8F_E4M3, .type_b = CUDA_R_8F_E4M3, .type_c = CUDA_R_16BF,     \
            .compute_type = CUBLAS_COMPUTE_32F};                                           \
        expect_gemm(KAT_WORK_GEMM, &want, OUT, (3ull * 2048 + 64 * 32) * 2);               \
    }

/* Two groups of the same shape (2 and 3 GEMMs), then two different groups. */
#define RUN_GROUPED_ARRAYS(I)                                                              \
    cublasOperation_t ta[2] = {CUBLAS_OP_N, CUBLAS_OP_N}, tb[2] = {CUBLAS_OP_T, CUBLAS_OP_T}; \
    I m[2] = {64, 64}, n[2] = {32, 32}, k[2] = {16, 16}, lda[2] = {64, 64};                 \
    I ldb[2] = {32, 32}, ldc[2] = {64, 64}, size[2] = {2, 3};                               \
    I m2[2] = {64, 8}, n2[2] = {32, 8}, ldc2[2] = {64, 8}

#define EXPECT_GROUPED(type, compute, bits)                                                \
    {                                                                                      \
        struct kat_gemm_summary want = {.m = 64, .n = 32, .k = 16, .batch = 5, .lda = 64,  \
            .ldb = 32, .ldc = 64, .trans_b = CUBLAS_OP_T, .type_a = type, .type_b = type,  \
            .type_c = type, .compute_type = compute};                                      \
        expect_gemm(KAT_WORK_GEMM, &want, NULL, 5ull * 64 * 32 * (bits) / 8);              \
    }
#define EXPECT_GROUPED_MIXED(type, compute, bits)                                          \
    {                                                                                      \
        struct kat_gemm_summary want = {.batch = 5, .type_a = type, .type_b = type,        \
            .type_c = type, .compute_type = compute};                                      \
        expect_gemm(KAT_WORK_GEMM, &want, NULL, (2ull * 64 * 32 + 3ull * 8 * 8) * (bits) / 8); \
    }

#define RUN_GEMM_GROUPED(name, I, T, prec)                                                 \
    {                                                                                      \
        RUN_GROUPED_ARRAYS(I);                                                             \
        begin_call(#name);                                                                 \
        int st = name(HANDLE, ta, tb, m, n, k, NULL, NULL, lda, NULL, ldb, NULL,           \
                      (T *const *)OUT, ldc, 2, size);                                      \
        expect_record(#name, KAT_LIB_CUBLAS, st, HANDLE);                                  \
        EXPECT_GROUPED(DTYPE_OF(T), COMPUTE_OF(T), BITS_OF(T));                            \
        begin_call(#name);                                                                 \
        st = name(HANDLE, ta, tb, m2, n2, k, NULL, NULL, lda, NULL, ldb, NULL,             \
                  (T *const *)OUT, ldc2, 2, size);                                         \
        expect_record(#name, KAT_LIB_CUBLAS, st, HANDLE);                                  \
        EXPECT_GROUPED_MIXED(DTYPE_OF(T), COMPUTE_OF(T), BITS_OF(T));                      \
    }

#define RUN_GEMM_GROUPED_EX(name, I)                                                       \
    {                                                                                      \
        RUN_GROUPED_ARRAYS(I);                                                             \
        begin_call(#name);                                                                 \
        int st = name(HANDLE, ta, tb, m, n, k, NULL, NULL, CUDA_R_16F, lda, NULL,          \
                      CUDA_R_16F, ldb, NULL, (void *const *)OUT, CUDA_R_16F, ldc, 2, size, \
                      CUBLAS_COMPUTE_32F);                                                 \
        expect_record(#name, KAT_LIB_CUBLAS, st, HANDLE);                                  \
        EXPECT_GROUPED(CUDA_R_16F, CUBLAS_COMPUTE_32F, 16);                                \
        begin_call(#name);                                                                 \
        st = name(HANDLE, ta, tb, m2, n2, k, NULL, NULL, CUDA_R_16F, lda, NULL, CUDA_R_16F, \
                  ldb, NULL, (void *const *)OUT, CUDA_R_16F, ldc2, 2, size,                \
                  CUBLAS_COMPUTE_32F);                                                     \
        expect_record(#name, KAT_LIB_CUBLAS, st, HANDLE);                                  \
        EXPECT_GROUPED_MIXED(CUDA_R_16F, CUBLAS_COMPUTE_32F, 16);                          \
    }

/* y = op(A) x with A 100 x 50 transposed: y has 50 elements 2 apart, x 100. */
#define GEMV_WANT(TS, TA, TY, batch_, sa, sx, sy)                                              \
    struct kat_gemm_summary want = {.m = 50, .n = 1, .k = 100, .batch = batch_,            \
        .lda = 100, .ldb = 1, .ldc = 2, .stride_a = sa, .stride_b = sx, .stride_c = sy,    \
        .trans_a = CUBLAS_OP_T, .type_a = DTYPE_OF(TA), .type_b = DTYPE_OF(TA),            \
        .type_c = DTYPE_OF(TY), .compute_type = COMPUTE_OF(TS)}

#define RUN_GEMV(name, I, TS, TA, TY, ta_, ty_, ct_)                                       \
    {                                                                                      \
        begin_call(#name);                                                                 \
        int st = name(HANDLE, CUBLAS_OP_T, 100, 50, NULL, NULL, 100, NULL, 1, NULL,        \
                      (TY *)OUT, 2);                                                       \
        expect_record(#name, KAT_LIB_CUBLAS, st, HANDLE);                                  \
        GEMV_WANT(TS, TA, TY, 1, 0, 0, 0);                                                     \
        expect_gemm(KAT_WORK_GEMV, &want, OUT, 99ull * BITS_OF(TY) / 8);                   \
    }

#define RUN_GEMV_BATCHED(name, I, TS, TA, TY, ta_, ty_, ct_)                               \
    {                                                                                      \
        begin_call(#name);                                                                 \
        int st = name(HANDLE, CUBLAS_OP_T, 100, 50, NULL, NULL, 100, NULL, 1, NULL,        \
                      (TY *const *)OUT, 2, 3);                                             \
        expect_record(#name, KAT_LIB_CUBLAS, st, HANDLE);                                  \
        GEMV_WANT(TS, TA, TY, 3, 0, 0, 0);                                                     \
        expect_gemm(KAT_WORK_GEMV, &want, NULL, 3ull * 99 * BITS_OF(TY) / 8);              \
    }

#define RUN_GEMV_STRIDED(name, I, TS, TA, TY, ta_, ty_, ct_)                               \
    {                                                                                      \
        begin_call(#name);                                                                 \
        int st = name(HANDLE, CUBLAS_OP_T, 100, 50, NULL, NULL, 100, 5000, NULL, 1, 100,   \
                      NULL, (TY *)OUT, 2, 1000, 3);                                        \
        expect_record(#name, KAT_LIB_CUBLAS, st, HANDLE);                                  \
        GEMV_WANT(TS, TA, TY, 3, 5000, 100, 1000);                                             \
        expect_gemm(KAT_WORK_GEMV, &want, OUT, (2ull * 1000 + 99) * BITS_OF(TY) / 8);      \
    }

static int count_wrapped;
#define COUNT(...) count_wrapped++;
#define COUNT_SINGLE(library, name, wrapped) count_wrapped += wrapped;

static void test_cublas_every_entry_point(void)
{
    fake_status = CUBLAS_STATUS_SUCCESS;
    fake_math_mode = CUBLAS_DEFAULT_MATH;
    KAT_CUBLAS_GEMM_LIST(RUN_GEMM)
    KAT_CUBLAS_GEMM_BATCHED_LIST(RUN_GEMM_BATCHED)
    KAT_CUBLAS_GEMM_STRIDED_LIST(RUN_GEMM_STRIDED)
    KAT_CUBLAS_GEMM_TYPED_EX_LIST(RUN_GEMM_TYPED_EX)
    KAT_CUBLAS_GEMM_EX_LIST(RUN_GEMM_EX)
    KAT_CUBLAS_GEMM_BATCHED_EX_LIST(RUN_GEMM_BATCHED_EX)
    KAT_CUBLAS_GEMM_STRIDED_EX_LIST(RUN_GEMM_STRIDED_EX)
    KAT_CUBLAS_GEMM_GROUPED_LIST(RUN_GEMM_GROUPED)
    KAT_CUBLAS_GEMM_GROUPED_EX_LIST(RUN_GEMM_GROUPED_EX)
    KAT_CUBLAS_GEMV_LIST(RUN_GEMV)
    KAT_CUBLAS_GEMV_BATCHED_LIST(RUN_GEMV_BATCHED)
    KAT_CUBLAS_GEMV_STRIDED_LIST(RUN_GEMV_STRIDED)
}

/* Compute type of a typed routine under each math mode. */
static void test_cublas_math_mode(void)
{
    static const struct {
        int mode;
        int single, dbl, half;
    } cases[] = {
        {CUBLAS_DEFAULT_MATH, CUBLAS_COMPUTE_32F, CUBLAS_COMPUTE_64F, CUBLAS_COMPUTE_16F},
        {CUBLAS_TF32_TENSOR_OP_MATH, CUBLAS_COMPUTE_32F_FAST_TF32, CUBLAS_COMPUTE_64F,
         CUBLAS_COMPUTE_16F},
        {CUBLAS_TF32_TENSOR_OP_MATH | CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION,
         CUBLAS_COMPUTE_32F_FAST_TF32, CUBLAS_COMPUTE_64F, CUBLAS_COMPUTE_16F},
        {CUBLAS_PEDANTIC_MATH, CUBLAS_COMPUTE_32F_PEDANTIC, CUBLAS_COMPUTE_64F_PEDANTIC,
         CUBLAS_COMPUTE_16F_PEDANTIC},
        {CUBLAS_TENSOR_OP_MATH, CUBLAS_COMPUTE_32F_FAST_16F, CUBLAS_COMPUTE_64F,
         CUBLAS_COMPUTE_16F},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        fake_math_mode = cases[i].mode;
        current = "math mode";
        cublasSgemm_v2(HANDLE, CUBLAS_OP_N, CUBLAS_OP_N, 4, 4, 4, NULL, NULL, 4, NULL, 4, NULL,
                       OUT, 4);
        CHECK_EQ(last.op.gemm.compute_type, cases[i].single);
        cublasCgemmStridedBatched(HANDLE, CUBLAS_OP_N, CUBLAS_OP_N, 4, 4, 4, NULL, NULL, 4, 16,
                                  NULL, 4, 16, NULL, OUT, 4, 16, 2);
        CHECK_EQ(last.op.gemm.compute_type, cases[i].single);
        cublasDgemm_v2(HANDLE, CUBLAS_OP_N, CUBLAS_OP_N, 4, 4, 4, NULL, NULL, 4, NULL, 4, NULL,
                       OUT, 4);
        CHECK_EQ(last.op.gemm.compute_type, cases[i].dbl);
        cublasHgemm(HANDLE, CUBLAS_OP_N, CUBLAS_OP_N, 4, 4, 4, NULL, NULL, 4, NULL, 4, NULL,
                    OUT, 4);
        CHECK_EQ(last.op.gemm.compute_type, cases[i].half);
    }
    /* No handle: the getter is not asked, the default applies. */
    fake_math_mode = CUBLAS_TF32_TENSOR_OP_MATH;
    cublasSgemm_v2(NULL, CUBLAS_OP_N, CUBLAS_OP_N, 4, 4, 4, NULL, NULL, 4, NULL, 4, NULL, OUT, 4);
    CHECK_EQ(last.op.gemm.compute_type, CUBLAS_COMPUTE_32F);
    fake_math_mode = CUBLAS_DEFAULT_MATH;
}

static void test_cublas_edges(void)
{
    /* The real function's status is returned and recorded. */
    fake_status = CUBLAS_STATUS_EXECUTION_FAILED;
    begin_call("cublasSgemm_v2");
    int st = cublasSgemm_v2(HANDLE, CUBLAS_OP_N, CUBLAS_OP_N, 4, 4, 4, NULL, NULL, 4, NULL, 4,
                            NULL, OUT, 4);
    expect_record("cublasSgemm_v2", KAT_LIB_CUBLAS, st, HANDLE);
    fake_status = CUBLAS_STATUS_SUCCESS;

    /* A failed grouped call: its host arrays are not trusted, not read. */
    {
        RUN_GROUPED_ARRAYS(int);
        (void)m2, (void)n2, (void)ldc2;
        fake_status = CUBLAS_STATUS_INVALID_VALUE;
        begin_call("cublasGemmGroupedBatchedEx");
        st = cublasGemmGroupedBatchedEx(HANDLE, ta, tb, m, n, k, NULL, NULL, CUDA_R_32F, lda,
                                        NULL, CUDA_R_32F, ldb, NULL, NULL, CUDA_R_32F, ldc, 2,
                                        size, CUBLAS_COMPUTE_32F);
    }
    expect_record("cublasGemmGroupedBatchedEx", KAT_LIB_CUBLAS, st, HANDLE);
    CHECK_EQ(last.work_class, KAT_WORK_GEMM);
    CHECK_EQ(last.summary_known, 0);
    fake_status = CUBLAS_STATUS_SUCCESS;

    /* 64-bit sizes are not truncated. */
    begin_call("cublasSgemm_v2_64");
    cublasSgemm_v2_64(HANDLE, CUBLAS_OP_N, CUBLAS_OP_N, 5000000000ll, 2, 3, NULL, NULL,
                      5000000000ll, NULL, 3, NULL, OUT, 5000000000ll);
    CHECK_EQ(last.op.gemm.m, 5000000000ll);
    CHECK_EQ(last.output_bytes, 5000000000ull * 2 * 4);

    /* Nonsense sizes give an unknown extent, not a crash. */
    begin_call("cublasGemmStridedBatchedEx_64");
    cublasGemmStridedBatchedEx_64(HANDLE, CUBLAS_OP_N, CUBLAS_OP_N, -1, INT64_MAX, 1, NULL, NULL,
                                  CUDA_R_32F, 1, 0, NULL, CUDA_R_32F, 1, 0, NULL, OUT, CUDA_R_32F,
                                  INT64_MAX, INT64_MAX, INT64_MAX, CUBLAS_COMPUTE_32F,
                                  CUBLAS_GEMM_DEFAULT);
    CHECK_EQ(last.summary_known, 1);
    CHECK_EQ(last.output_bytes, 0);
    cublasSgemv_v2_64(HANDLE, CUBLAS_OP_N, 10, 10, NULL, NULL, 10, NULL, 1, NULL, OUT, INT64_MIN);
    CHECK_EQ(last.output_bytes, 0);
    cublasGemmEx(HANDLE, CUBLAS_OP_N, CUBLAS_OP_N, 4, 4, 4, NULL, NULL, (cudaDataType)999, 4,
                 NULL, (cudaDataType)999, 4, NULL, OUT, (cudaDataType)999, 4, CUBLAS_COMPUTE_32F,
                 CUBLAS_GEMM_DEFAULT);
    CHECK_EQ(last.output_bytes, 0);

    /* Not tracing (no session, or paused by the benchmark control): the call
     * goes straight through, with its status, and leaves no record and no
     * window. */
    tracing = 0;
    begin_call("cublasDgemm_v2");
    st = cublasDgemm_v2(HANDLE, CUBLAS_OP_N, CUBLAS_OP_N, 4, 4, 4, NULL, NULL, 4, NULL, 4, NULL,
                        OUT, 4);
    CHECK_EQ(st, fake_status);
    CHECK_EQ(records, records_before);
    CHECK_EQ(open_windows, 0);
    CHECK(fake_called != NULL && strcmp(fake_called, "cublasDgemm_v2") == 0,
          "the real function called was %s", fake_called ? fake_called : "none");
    tracing = 1;
}

/* With the probe's vendor channel on, each GEMM hands its output to it after the real call. */
static void test_cublas_probe_hook(void)
{
    probe_on = 0;
    memset(&probe_seen, 0, sizeof probe_seen);
    cublasSgemm_v2(HANDLE, CUBLAS_OP_N, CUBLAS_OP_N, 4, 5, 6, NULL, NULL, 4, NULL, 6, NULL, OUT, 7);
    CHECK_EQ(probe_seen.calls, 0);
    probe_on = 1;
    cublasSgemm_v2(HANDLE, CUBLAS_OP_N, CUBLAS_OP_N, 4, 5, 6, NULL, NULL, 4, NULL, 6, NULL, OUT, 7);
    CHECK_EQ(probe_seen.calls, 1);
    CHECK(probe_seen.C == OUT, "the output pointer was not handed over");
    CHECK_EQ(probe_seen.m, 4);
    CHECK_EQ(probe_seen.n, 5);
    CHECK_EQ(probe_seen.k, 6);
    CHECK_EQ(probe_seen.ldc, 7);
    CHECK_EQ(probe_seen.ctype, CUDA_R_32F);
    CHECK_EQ(probe_seen.batch, 1);
    cublasGemmStridedBatchedEx(HANDLE, CUBLAS_OP_N, CUBLAS_OP_N, 3, 2, 4, NULL, NULL, CUDA_R_16F, 3, 12, NULL,
                               CUDA_R_16F, 4, 8, NULL, OUT, CUDA_R_16BF, 3, 6, 5, CUBLAS_COMPUTE_32F,
                               CUBLAS_GEMM_DEFAULT);
    CHECK_EQ(probe_seen.calls, 2);
    CHECK_EQ(probe_seen.ctype, CUDA_R_16BF);
    CHECK_EQ(probe_seen.batch, 5);
    CHECK_EQ(probe_seen.stride, 6);
    cublasSgemv_v2(HANDLE, CUBLAS_OP_N, 10, 10, NULL, NULL, 10, NULL, 1, NULL, OUT, 1);
    CHECK_EQ(probe_seen.unsupported, 1);
    probe_on = 0;
}

/* Before anything resolves: the not-initialized status, no record, nothing called. */
static void test_unresolved(void)
{
    resolving = 0;
    current = "unresolved";
    fake_called = NULL;
    int before = records;
    CHECK_EQ(cublasZgemv_v2(HANDLE, CUBLAS_OP_N, 2, 2, NULL, NULL, 2, NULL, 1, NULL, OUT, 1),
             CUBLAS_STATUS_NOT_INITIALIZED);
    CHECK_EQ(cublasLtMatmul(HANDLE, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, OUT,
                            NULL, NULL, NULL, 0, NULL),
             CUBLAS_STATUS_NOT_INITIALIZED);
    CHECK_EQ(cudnnConvolutionBackwardFilter(HANDLE, NULL, NULL, NULL, NULL, NULL, NULL,
                                            CUDNN_CONVOLUTION_BWD_FILTER_ALGO_0, NULL, 0, NULL,
                                            NULL, OUT),
             CUDNN_STATUS_NOT_INITIALIZED);
    CHECK_EQ(cudnnBackendExecute(HANDLE, NULL, NULL), CUDNN_STATUS_NOT_INITIALIZED);
    CHECK_EQ(cudnnBackendDestroyDescriptor(NULL), CUDNN_STATUS_NOT_INITIALIZED);
    CHECK_EQ(records, before);
    CHECK(fake_called == NULL, "%s was called", fake_called);
    resolving = 1;
}

/* ---- cuBLASLt, with the real descriptors ---- */

#define LT(fn) ((__typeof__(&fn))dlsym(lt_lib, #fn))

static cublasLtMatrixLayout_t lt_layout(cudaDataType type, uint64_t rows, uint64_t cols,
                                        int64_t ld, int32_t batch, int64_t stride)
{
    cublasLtMatrixLayout_t l = NULL;
    CHECK_EQ(LT(cublasLtMatrixLayoutCreate)(&l, type, rows, cols, ld), CUBLAS_STATUS_SUCCESS);
    if (batch > 1) {
        LT(cublasLtMatrixLayoutSetAttribute)(l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &batch,
                                             sizeof batch);
        LT(cublasLtMatrixLayoutSetAttribute)(l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET,
                                             &stride, sizeof stride);
    }
    return l;
}

static void test_cublaslt(void)
{
    cublasLtMatmulDesc_t desc = NULL;
    int32_t trans = CUBLAS_OP_T;
    uint32_t epilogue = CUBLASLT_EPILOGUE_RELU_BIAS;

    current = "cublasLtMatmul";
    CHECK_EQ(LT(cublasLtMatmulDescCreate)(&desc, CUBLAS_COMPUTE_32F_FAST_TF32, CUDA_R_32F),
             CUBLAS_STATUS_SUCCESS);
    LT(cublasLtMatmulDescSetAttribute)(desc, CUBLASLT_MATMUL_DESC_TRANSA, &trans, sizeof trans);
    LT(cublasLtMatmulDescSetAttribute)(desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &epilogue,
                                       sizeof epilogue);
    /* D (64 x 32) = relu(A^T B + bias), A stored 16 x 64, four GEMMs. */
    cublasLtMatrixLayout_t a = lt_layout(CUDA_R_16F, 16, 64, 16, 4, 16 * 64);
    cublasLtMatrixLayout_t b = lt_layout(CUDA_R_16F, 16, 32, 16, 4, 16 * 32);
    cublasLtMatrixLayout_t d = lt_layout(CUDA_R_16BF, 64, 32, 64, 4, 64 * 32 + 8);

    begin_call("cublasLtMatmul");
    int st = cublasLtMatmul(HANDLE, desc, NULL, NULL, a, NULL, b, NULL, NULL, d, OUT, d, NULL,
                            NULL, 0, NULL);
    expect_record("cublasLtMatmul", KAT_LIB_CUBLASLT, st, HANDLE);
    struct kat_gemm_summary want = {.m = 64, .n = 32, .k = 16, .batch = 4, .lda = 16, .ldb = 16,
        .ldc = 64, .stride_a = 16 * 64, .stride_b = 16 * 32, .stride_c = 64 * 32 + 8,
        .trans_a = CUBLAS_OP_T, .type_a = CUDA_R_16F, .type_b = CUDA_R_16F,
        .type_c = CUDA_R_16BF, .compute_type = CUBLAS_COMPUTE_32F_FAST_TF32,
        .epilogue = CUBLASLT_EPILOGUE_RELU_BIAS};
    expect_gemm(KAT_WORK_GEMM, &want, OUT, (3ull * (64 * 32 + 8) + 64 * 32) * 2);

    /* Row-major D: ld counts columns, the extent is ld * rows. */
    int32_t row = CUBLASLT_ORDER_ROW;
    cublasLtMatrixLayout_t d_row = lt_layout(CUDA_R_32F, 64, 32, 40, 1, 0);
    LT(cublasLtMatrixLayoutSetAttribute)(d_row, CUBLASLT_MATRIX_LAYOUT_ORDER, &row, sizeof row);
    begin_call("cublasLtMatmul");
    cublasLtMatmul(HANDLE, desc, NULL, NULL, a, NULL, b, NULL, NULL, d_row, OUT, d_row, NULL,
                   NULL, 0, NULL);
    CHECK_EQ(last.output_bytes, 40ull * 64 * 4);
    CHECK_EQ(last.op.gemm.batch, 1);

    /* Pointer-array batches: D is an array of pointers. */
    uint32_t mode = CUBLASLT_BATCH_MODE_POINTER_ARRAY;
    cublasLtMatrixLayout_t d_array = lt_layout(CUDA_R_32F, 64, 32, 64, 3, 0);
    if (LT(cublasLtMatrixLayoutSetAttribute)(d_array, CUBLASLT_MATRIX_LAYOUT_BATCH_MODE, &mode,
                                             sizeof mode) == CUBLAS_STATUS_SUCCESS) {
        begin_call("cublasLtMatmul");
        cublasLtMatmul(HANDLE, desc, NULL, NULL, a, NULL, b, NULL, NULL, d_array, OUT, d_array,
                       NULL, NULL, 0, NULL);
        CHECK_EQ(last.output_address, 0);
        CHECK_EQ(last.output_bytes, 3ull * 64 * 32 * 4);
    }

    /* The probe's vendor channel: D handed over as batch x columns x rows (column
       major), rows x columns for row-major, nothing replaceable for pointer arrays. */
    probe_on = 1;
    probe_seen.outputs = 0;
    cublasLtMatmul(HANDLE, desc, NULL, NULL, a, NULL, b, NULL, NULL, d, OUT, d, NULL, NULL, 0, (void *)0x77);
    const struct kat_probe_output *po = &probe_seen.output;
    CHECK_EQ(probe_seen.outputs, 1);
    CHECK_EQ(po->family, KAT_PROBE_GEMM);
    CHECK_EQ(po->library, KAT_LIB_CUBLASLT);
    CHECK(po->base == OUT && po->stream == (void *)0x77 && po->have_stream, "D or the stream not handed over");
    CHECK_EQ(po->m, 64);
    CHECK_EQ(po->n, 32);
    CHECK_EQ(po->k, 16);
    CHECK_EQ(po->type, CUDA_R_16BF);
    CHECK_EQ(po->ndims, 3);
    CHECK(po->dims[0] == 4 && po->dims[1] == 32 && po->dims[2] == 64, "dims %lld %lld %lld",
          (long long)po->dims[0], (long long)po->dims[1], (long long)po->dims[2]);
    CHECK(po->strides[0] == 64 * 32 + 8 && po->strides[1] == 64 && po->strides[2] == 1, "strides %lld %lld %lld",
          (long long)po->strides[0], (long long)po->strides[1], (long long)po->strides[2]);
    cublasLtMatmul(HANDLE, desc, NULL, NULL, a, NULL, b, NULL, NULL, d_row, OUT, d_row, NULL, NULL, 0, NULL);
    CHECK(po->ndims == 3 && po->dims[1] == 64 && po->dims[2] == 32 && po->strides[1] == 40,
          "row-major D: %d dims, %lld x %lld, ld %lld", po->ndims, (long long)po->dims[1], (long long)po->dims[2],
          (long long)po->strides[1]);
    if (LT(cublasLtMatrixLayoutSetAttribute)(d_array, CUBLASLT_MATRIX_LAYOUT_BATCH_MODE, &mode, sizeof mode) ==
        CUBLAS_STATUS_SUCCESS) {
        cublasLtMatmul(HANDLE, desc, NULL, NULL, a, NULL, b, NULL, NULL, d_array, OUT, d_array, NULL, NULL, 0,
                       NULL);
        CHECK_EQ(po->ndims, 0);
    }
    CHECK_EQ(probe_seen.outputs, 3);
    probe_on = 0;

    /* Missing descriptors: still a GEMM, summary unknown. */
    begin_call("cublasLtMatmul");
    st = cublasLtMatmul(HANDLE, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, OUT, NULL,
                        NULL, NULL, 0, NULL);
    expect_record("cublasLtMatmul", KAT_LIB_CUBLASLT, st, HANDLE);
    CHECK_EQ(last.work_class, KAT_WORK_GEMM);
    CHECK_EQ(last.summary_known, 0);
    begin_call("cublasLtMatmul");
    cublasLtMatmul(HANDLE, desc, NULL, NULL, a, NULL, NULL, NULL, NULL, d, OUT, d, NULL, NULL, 0,
                   NULL);
    CHECK_EQ(last.summary_known, 0);

    LT(cublasLtMatrixLayoutDestroy)(a);
    LT(cublasLtMatrixLayoutDestroy)(b);
    LT(cublasLtMatrixLayoutDestroy)(d);
    LT(cublasLtMatrixLayoutDestroy)(d_row);
    LT(cublasLtMatrixLayoutDestroy)(d_array);
    LT(cublasLtMatmulDescDestroy)(desc);
}

/* ---- cuDNN, with the real descriptors ---- */

#define DNN(fn) ((__typeof__(&fn))dlsym(cudnn_lib, #fn))

static void expect_conv(int direction, int groups)
{
    const struct kat_conv_summary *c = &last.op.conv;
    CHECK_EQ(last.work_class, KAT_WORK_CONV);
    CHECK_EQ(last.dtype_space, KAT_DTYPE_SPACE_CUDNN);
    CHECK_EQ(last.summary_known, 1);
    CHECK_EQ(c->direction, direction);
    CHECK_EQ(c->spatial_dims, 2);
    CHECK_EQ(c->n, 8);
    CHECK_EQ(c->c, 64);
    CHECK_EQ(c->k, 128);
    CHECK_EQ(c->in_spatial[0], 56);
    CHECK_EQ(c->in_spatial[1], 56);
    CHECK_EQ(c->filter_spatial[0], 3);
    CHECK_EQ(c->filter_spatial[1], 3);
    CHECK_EQ(c->out_spatial[0], 56);
    CHECK_EQ(c->out_spatial[1], 56);
    CHECK_EQ(c->pad[0], 1);
    CHECK_EQ(c->pad[1], 1);
    CHECK_EQ(c->stride[0], 1);
    CHECK_EQ(c->stride[1], 1);
    CHECK_EQ(c->dilation[0], 1);
    CHECK_EQ(c->dilation[1], 1);
    CHECK_EQ(c->groups, groups);
    CHECK_EQ(c->data_type, CUDNN_DATA_FLOAT);
    CHECK_EQ(c->compute_type, CUDNN_DATA_FLOAT);
}

/* x 8x64x56x56, w 128x(64/2)x3x3 in two groups, y 8x128x56x56, all float. */
static void test_cudnn_legacy(void)
{
    cudnnTensorDescriptor_t x = NULL, y = NULL, bias = NULL;
    cudnnFilterDescriptor_t w = NULL;
    cudnnConvolutionDescriptor_t conv = NULL;
    const uint64_t y_bytes = 8ull * 128 * 56 * 56 * 4, x_bytes = 8ull * 64 * 56 * 56 * 4;
    const uint64_t w_bytes = 128ull * 32 * 3 * 3 * 4;

    current = "cudnn legacy setup";
    DNN(cudnnCreateTensorDescriptor)(&x);
    DNN(cudnnCreateTensorDescriptor)(&y);
    DNN(cudnnCreateTensorDescriptor)(&bias);
    DNN(cudnnCreateFilterDescriptor)(&w);
    DNN(cudnnCreateConvolutionDescriptor)(&conv);
    CHECK_EQ(DNN(cudnnSetTensor4dDescriptor)(x, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 8, 64, 56,
                                             56), CUDNN_STATUS_SUCCESS);
    CHECK_EQ(DNN(cudnnSetTensor4dDescriptor)(y, CUDNN_TENSOR_NHWC, CUDNN_DATA_FLOAT, 8, 128, 56,
                                             56), CUDNN_STATUS_SUCCESS);
    CHECK_EQ(DNN(cudnnSetTensor4dDescriptor)(bias, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 1, 128,
                                             1, 1), CUDNN_STATUS_SUCCESS);
    CHECK_EQ(DNN(cudnnSetFilter4dDescriptor)(w, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, 128, 32, 3,
                                             3), CUDNN_STATUS_SUCCESS);
    CHECK_EQ(DNN(cudnnSetConvolution2dDescriptor)(conv, 1, 1, 1, 1, 1, 1,
                                                  CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT),
             CUDNN_STATUS_SUCCESS);
    CHECK_EQ(DNN(cudnnSetConvolutionGroupCount)(conv, 2), CUDNN_STATUS_SUCCESS);
    fake_status = CUDNN_STATUS_SUCCESS;

    begin_call("cudnnConvolutionForward");
    int st = cudnnConvolutionForward(HANDLE, NULL, x, NULL, w, NULL, conv,
                                     CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM, NULL, 0, NULL, y,
                                     OUT);
    expect_record("cudnnConvolutionForward", KAT_LIB_CUDNN, st, HANDLE);
    expect_conv(KAT_CONV_FORWARD, 2);
    CHECK_EQ(last.output_address, (uintptr_t)OUT);
    CHECK_EQ(last.output_bytes, y_bytes);

    begin_call("cudnnConvolutionBiasActivationForward");
    st = cudnnConvolutionBiasActivationForward(HANDLE, NULL, x, NULL, w, NULL, conv,
                                               CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM,
                                               NULL, 0, NULL, y, NULL, bias, NULL, NULL, y, OUT);
    expect_record("cudnnConvolutionBiasActivationForward", KAT_LIB_CUDNN, st, HANDLE);
    expect_conv(KAT_CONV_FORWARD, 2);
    CHECK_EQ(last.output_bytes, y_bytes);

    begin_call("cudnnConvolutionBackwardData");
    st = cudnnConvolutionBackwardData(HANDLE, NULL, w, NULL, y, NULL, conv,
                                      CUDNN_CONVOLUTION_BWD_DATA_ALGO_1, NULL, 0, NULL, x, OUT);
    expect_record("cudnnConvolutionBackwardData", KAT_LIB_CUDNN, st, HANDLE);
    expect_conv(KAT_CONV_BACKWARD_DATA, 2);
    CHECK_EQ(last.output_bytes, x_bytes);

    fake_status = CUDNN_STATUS_BAD_PARAM;
    begin_call("cudnnConvolutionBackwardFilter");
    st = cudnnConvolutionBackwardFilter(HANDLE, NULL, x, NULL, y, NULL, conv,
                                        CUDNN_CONVOLUTION_BWD_FILTER_ALGO_1, NULL, 0, NULL, w,
                                        OUT);
    expect_record("cudnnConvolutionBackwardFilter", KAT_LIB_CUDNN, st, HANDLE);
    expect_conv(KAT_CONV_BACKWARD_FILTER, 2);
    CHECK_EQ(last.output_bytes, w_bytes);
    fake_status = CUDNN_STATUS_SUCCESS;

    /* The probe's vendor channel: y (NHWC) with its strides, on the handle's stream;
       dw of the backward filter as one packed run. */
    probe_on = 1;
    probe_seen.outputs = 0;
    cudnnConvolutionForward(HANDLE, NULL, x, NULL, w, NULL, conv, CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM, NULL, 0,
                            NULL, y, OUT);
    const struct kat_probe_output *po = &probe_seen.output;
    CHECK_EQ(probe_seen.outputs, 1);
    CHECK_EQ(po->family, KAT_PROBE_CONV);
    CHECK_EQ(po->library, KAT_LIB_CUDNN);
    CHECK(po->base == OUT && po->stream == FAKE_STREAM && po->have_stream, "y or the stream not handed over");
    CHECK_EQ(po->type, CUDA_R_32F);
    CHECK_EQ(po->ndims, 4);
    CHECK(po->dims[0] == 8 && po->dims[1] == 128 && po->dims[2] == 56 && po->dims[3] == 56, "y dims");
    CHECK(po->strides[0] == 128 * 56 * 56 && po->strides[1] == 1 && po->strides[2] == 56 * 128 &&
              po->strides[3] == 128,
          "y strides %lld %lld %lld %lld", (long long)po->strides[0], (long long)po->strides[1],
          (long long)po->strides[2], (long long)po->strides[3]);
    CHECK_EQ(probe_seen.succeeded, 1);
    cudnnConvolutionBackwardFilter(HANDLE, NULL, x, NULL, y, NULL, conv, CUDNN_CONVOLUTION_BWD_FILTER_ALGO_1, NULL,
                                   0, NULL, w, OUT);
    CHECK(po->ndims == 1 && po->dims[0] == 128 * 32 * 3 * 3 && po->strides[0] == 1, "dw: %d dims, %lld elements",
          po->ndims, (long long)po->dims[0]);
    CHECK_EQ(probe_seen.outputs, 2);
    probe_on = 0;

    /* No descriptors: a convolution of unknown shape, output pointer kept. */
    begin_call("cudnnConvolutionForward");
    st = cudnnConvolutionForward(HANDLE, NULL, NULL, NULL, NULL, NULL, NULL,
                                 CUDNN_CONVOLUTION_FWD_ALGO_GEMM, NULL, 0, NULL, NULL, OUT);
    expect_record("cudnnConvolutionForward", KAT_LIB_CUDNN, st, HANDLE);
    CHECK_EQ(last.work_class, KAT_WORK_CONV);
    CHECK_EQ(last.summary_known, 0);
    CHECK_EQ(last.output_address, (uintptr_t)OUT);
    CHECK_EQ(last.output_bytes, 0);

    DNN(cudnnDestroyTensorDescriptor)(x);
    DNN(cudnnDestroyTensorDescriptor)(y);
    DNN(cudnnDestroyTensorDescriptor)(bias);
    DNN(cudnnDestroyFilterDescriptor)(w);
    DNN(cudnnDestroyConvolutionDescriptor)(conv);
}

/* Backend descriptors are made through the wrappers, as an application would. */
static cudnnBackendDescriptor_t make(cudnnBackendDescriptorType_t type)
{
    cudnnBackendDescriptor_t d = NULL;
    CHECK_EQ(cudnnBackendCreateDescriptor(type, &d), CUDNN_STATUS_SUCCESS);
    return d;
}

static void set(cudnnBackendDescriptor_t d, cudnnBackendAttributeName_t name,
                cudnnBackendAttributeType_t type, int64_t count, const void *values)
{
    cudnnStatus_t st = cudnnBackendSetAttribute(d, name, type, count, values);
    CHECK(st == CUDNN_STATUS_SUCCESS, "setting attribute %d: status %d", (int)name, (int)st);
}

static void finalize(cudnnBackendDescriptor_t d)
{
    cudnnStatus_t st = DNN(cudnnBackendFinalize)(d);
    CHECK(st == CUDNN_STATUS_SUCCESS, "finalize: status %d", (int)st);
}

static cudnnBackendDescriptor_t tensor(int64_t uid, int64_t n, int64_t c, int64_t h, int64_t w,
                                       int is_virtual)
{
    cudnnBackendDescriptor_t t = make(CUDNN_BACKEND_TENSOR_DESCRIPTOR);
    int64_t dims[4] = {n, c, h, w}, strides[4] = {c * h * w, 1, w * c, c}, align = 16;
    cudnnDataType_t type = CUDNN_DATA_FLOAT;
    bool virt = is_virtual != 0;
    set(t, CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &type);
    set(t, CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, 4, dims);
    set(t, CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, 4, strides);
    set(t, CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, 1, &uid);
    set(t, CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, 1, &align);
    set(t, CUDNN_ATTR_TENSOR_IS_VIRTUAL, CUDNN_TYPE_BOOLEAN, 1, &virt);
    finalize(t);
    return t;
}

/* y = conv(x, w): x 8x64x56x56, w 128x(64/4)x3x3 (four groups), pad 1. */
static cudnnBackendDescriptor_t conv_forward_op(cudnnBackendDescriptor_t x,
                                                cudnnBackendDescriptor_t w,
                                                cudnnBackendDescriptor_t y,
                                                cudnnBackendDescriptor_t *conv)
{
    int64_t spatial = 2, pad[2] = {1, 1}, stride[2] = {1, 1}, dilation[2] = {1, 1};
    cudnnDataType_t compute = CUDNN_DATA_FLOAT;
    cudnnConvolutionMode_t mode = CUDNN_CROSS_CORRELATION;
    float alpha = 1, beta = 0;
    *conv = make(CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR);
    set(*conv, CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS, CUDNN_TYPE_INT64, 1, &spatial);
    set(*conv, CUDNN_ATTR_CONVOLUTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &compute);
    set(*conv, CUDNN_ATTR_CONVOLUTION_CONV_MODE, CUDNN_TYPE_CONVOLUTION_MODE, 1, &mode);
    set(*conv, CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS, CUDNN_TYPE_INT64, 2, pad);
    set(*conv, CUDNN_ATTR_CONVOLUTION_POST_PADDINGS, CUDNN_TYPE_INT64, 2, pad);
    set(*conv, CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES, CUDNN_TYPE_INT64, 2, stride);
    set(*conv, CUDNN_ATTR_CONVOLUTION_DILATIONS, CUDNN_TYPE_INT64, 2, dilation);
    finalize(*conv);
    cudnnBackendDescriptor_t op = make(CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR);
    set(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &x);
    set(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &w);
    set(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &y);
    set(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1,
        conv);
    set(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA, CUDNN_TYPE_FLOAT, 1, &alpha);
    set(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_BETA, CUDNN_TYPE_FLOAT, 1, &beta);
    finalize(op);
    return op;
}

/* out = relu(in) */
static cudnnBackendDescriptor_t relu_op(cudnnBackendDescriptor_t in, cudnnBackendDescriptor_t out,
                                        cudnnBackendDescriptor_t *pw)
{
    cudnnPointwiseMode_t mode = CUDNN_POINTWISE_RELU_FWD;
    cudnnDataType_t precision = CUDNN_DATA_FLOAT;
    *pw = make(CUDNN_BACKEND_POINTWISE_DESCRIPTOR);
    set(*pw, CUDNN_ATTR_POINTWISE_MODE, CUDNN_TYPE_POINTWISE_MODE, 1, &mode);
    set(*pw, CUDNN_ATTR_POINTWISE_MATH_PREC, CUDNN_TYPE_DATA_TYPE, 1, &precision);
    finalize(*pw);
    cudnnBackendDescriptor_t op = make(CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR);
    set(op, CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, pw);
    set(op, CUDNN_ATTR_OPERATION_POINTWISE_XDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &in);
    set(op, CUDNN_ATTR_OPERATION_POINTWISE_YDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &out);
    finalize(op);
    return op;
}

static cudnnBackendDescriptor_t graph_of(cudnnBackendDescriptor_t *ops, int64_t count)
{
    cudnnBackendDescriptor_t graph = make(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR);
    set(graph, CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR, count, ops);
    finalize(graph);    /* no handle is needed for this, nor for an engine */
    return graph;
}

/* graph -> engine 0 -> engine config -> plan: cuDNN 9.19 takes these without a GPU. */
static cudnnBackendDescriptor_t plan_of(cudnnBackendDescriptor_t graph,
                                        cudnnBackendDescriptor_t parts[2])
{
    int64_t index = 0;
    parts[0] = make(CUDNN_BACKEND_ENGINE_DESCRIPTOR);
    set(parts[0], CUDNN_ATTR_ENGINE_OPERATION_GRAPH, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &graph);
    set(parts[0], CUDNN_ATTR_ENGINE_GLOBAL_INDEX, CUDNN_TYPE_INT64, 1, &index);
    finalize(parts[0]);
    parts[1] = make(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR);
    set(parts[1], CUDNN_ATTR_ENGINECFG_ENGINE, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &parts[0]);
    cudnnBackendDescriptor_t plan = make(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR);
    set(plan, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1,
        &parts[1]);
    return plan;
}

static void execute(const char *what, cudnnBackendDescriptor_t plan)
{
    begin_call("cudnnBackendExecute");
    int st = cudnnBackendExecute(HANDLE, plan, NULL);
    current = what;
    expect_record("cudnnBackendExecute", KAT_LIB_CUDNN, st, plan);
    CHECK_EQ(last.dtype_space, KAT_DTYPE_SPACE_CUDNN);
    CHECK_EQ(last.output_address, 0);
}

static void test_cudnn_backend(void)
{
    cudnnBackendDescriptor_t conv, pw, parts[6];
    fake_status = CUDNN_STATUS_SUCCESS;

    current = "backend setup";
    cudnnBackendDescriptor_t x = tensor('x', 8, 64, 56, 56, 0);
    cudnnBackendDescriptor_t w = tensor('w', 128, 16, 3, 3, 0);
    cudnnBackendDescriptor_t y = tensor('y', 8, 128, 56, 56, 0);
    cudnnBackendDescriptor_t v = tensor('v', 8, 128, 56, 56, 1);
    cudnnBackendDescriptor_t z = tensor('z', 8, 128, 56, 56, 0);
    cudnnBackendDescriptor_t conv_op = conv_forward_op(x, w, y, &conv);
    cudnnBackendDescriptor_t relu = relu_op(y, z, &pw);

    /* conv alone, through engine -> engine config -> plan */
    cudnnBackendDescriptor_t g_conv = graph_of(&conv_op, 1);
    cudnnBackendDescriptor_t plan_conv = plan_of(g_conv, parts);
    execute("conv plan", plan_conv);
    expect_conv(KAT_CONV_FORWARD, 4);

    /* relu alone: known to hold no convolution */
    cudnnBackendDescriptor_t g_relu = graph_of(&relu, 1);
    cudnnBackendDescriptor_t plan_relu = plan_of(g_relu, parts + 2);
    execute("relu plan", plan_relu);
    CHECK_EQ(last.work_class, KAT_WORK_OTHER);
    CHECK_EQ(last.summary_known, 0);

    /* conv into a virtual tensor, then relu: ops listed relu first */
    cudnnBackendDescriptor_t conv_v_desc, conv_v = conv_forward_op(x, w, v, &conv_v_desc);
    cudnnBackendDescriptor_t pw2, relu_v = relu_op(v, z, &pw2);
    cudnnBackendDescriptor_t fused_ops[2] = {relu_v, conv_v};
    cudnnBackendDescriptor_t g_fused = make(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR);
    set(g_fused, CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR, 2, fused_ops);

    /* heuristics: the configs it returns come from the graph it was given */
    cudnnBackendDescriptor_t heur = make(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR);
    set(heur, CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &g_fused);
    cudnnBackendDescriptor_t configs[3] = {make(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR),
                                           make(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR),
                                           make(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR)};
    int64_t returned = 0;
    pretend_heur_results = 2;
    CHECK_EQ(cudnnBackendGetAttribute(heur, CUDNN_ATTR_ENGINEHEUR_RESULTS,
                                      CUDNN_TYPE_BACKEND_DESCRIPTOR, 3, &returned, configs),
             CUDNN_STATUS_SUCCESS);
    pretend_heur_results = 0;
    CHECK_EQ(returned, 2);
    cudnnBackendDescriptor_t plan_fused = make(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR);
    set(plan_fused, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1,
        &configs[1]);
    execute("fused plan from heuristics", plan_fused);
    expect_conv(KAT_CONV_FORWARD, 4);

    /* a config the heuristics did not fill says nothing */
    cudnnBackendDescriptor_t plan_other = make(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR);
    set(plan_other, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1,
        &configs[2]);
    execute("plan from an unfilled config", plan_other);
    CHECK_EQ(last.work_class, KAT_WORK_UNKNOWN);

    /* a plan nothing was seen of: read back fails on this cuDNN, class unknown */
    cudnnBackendDescriptor_t plan_unseen = make(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR);
    execute("unseen plan", plan_unseen);
    CHECK_EQ(last.work_class, KAT_WORK_UNKNOWN);
    CHECK_EQ(last.summary_known, 0);
    execute("unseen plan, again", plan_unseen);
    CHECK_EQ(last.work_class, KAT_WORK_UNKNOWN);

    /* status passes through; NULL plan is recorded, unknown */
    fake_status = CUDNN_STATUS_EXECUTION_FAILED;
    execute("failed execution", plan_conv);
    expect_conv(KAT_CONV_FORWARD, 4);
    fake_status = CUDNN_STATUS_SUCCESS;
    execute("NULL plan", NULL);
    CHECK_EQ(last.work_class, KAT_WORK_UNKNOWN);

    /* a destroyed plan's address, if reused, does not inherit its class */
    CHECK_EQ(cudnnBackendDestroyDescriptor(plan_conv), CUDNN_STATUS_SUCCESS);
    cudnnBackendDescriptor_t plan_new = make(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR);
    if (plan_new == plan_conv) {
        execute("plan at a reused address", plan_new);
        CHECK_EQ(last.work_class, KAT_WORK_UNKNOWN);
    }

    cudnnBackendDescriptor_t all[] = {x, w, y, v, z, conv_op, conv, relu, pw, g_conv, g_relu,
                                      conv_v, conv_v_desc, relu_v, pw2, g_fused, heur,
                                      configs[0], configs[1], configs[2], plan_fused, plan_other,
                                      plan_unseen, plan_relu, plan_new, parts[0], parts[1],
                                      parts[2], parts[3]};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        cudnnBackendDestroyDescriptor(all[i]);
}

int main(void)
{
    KAT_CUBLAS_GEMM_LIST(COUNT)
    KAT_CUBLAS_GEMM_BATCHED_LIST(COUNT)
    KAT_CUBLAS_GEMM_STRIDED_LIST(COUNT)
    KAT_CUBLAS_GEMM_TYPED_EX_LIST(COUNT)
    KAT_CUBLAS_GEMM_EX_LIST(COUNT)
    KAT_CUBLAS_GEMM_BATCHED_EX_LIST(COUNT)
    KAT_CUBLAS_GEMM_STRIDED_EX_LIST(COUNT)
    KAT_CUBLAS_GEMM_GROUPED_LIST(COUNT)
    KAT_CUBLAS_GEMM_GROUPED_EX_LIST(COUNT)
    KAT_CUBLAS_GEMV_LIST(COUNT)
    KAT_CUBLAS_GEMV_BATCHED_LIST(COUNT)
    KAT_CUBLAS_GEMV_STRIDED_LIST(COUNT)
    KAT_VENDOR_SINGLE_LIST(COUNT_SINGLE)

    test_unresolved();
    test_cublas_every_entry_point();
    test_cublas_math_mode();
    test_cublas_edges();
    test_cublas_probe_hook();

    lt_lib = dlopen("libcublasLt.so.13", RTLD_LAZY | RTLD_LOCAL);
    if (lt_lib) {
        test_cublaslt();
        printf("cuBLASLt: checked with %s\n", "libcublasLt.so.13");
    } else {
        printf("cuBLASLt: skipped (%s)\n", dlerror());
    }
    cudnn_lib = dlopen("libcudnn.so.9", RTLD_LAZY | RTLD_LOCAL);
    if (cudnn_lib) {
        test_cudnn_legacy();
        test_cudnn_backend();
        printf("cuDNN: checked with %s (version %zu)\n", "libcudnn.so.9",
               DNN(cudnnGetVersion)());
    } else {
        printf("cuDNN: skipped (%s)\n", dlerror());
    }

    printf("%d wrapped entry points, %d records, %d checks, %d failed\n", count_wrapped, records,
           checks, failures);
    return failures ? 1 : 0;
}
#endif /* !KAT_ABI_CHECK_ONLY */
