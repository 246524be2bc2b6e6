/*
 * vendor_api.h - the cuBLAS, cuBLASLt and cuDNN entry points that the vendor
 * wrappers define or call, declared without the vendor headers.
 *
 * The preload library must build where cublas_v2.h, cublasLt.h and cudnn.h
 * are absent, and their declarations would clash with our definitions anyway.
 * So every prototype here is written with stand-in types that have the same
 * C ABI on x86-64 / aarch64 Linux: opaque handles and descriptors are
 * `void *`, enums are `int`, complex and half-precision elements are `void`
 * behind a pointer.
 *
 * The prototypes are macros that take the function name, so that
 * tests/test_vendor_abi.c can include the real headers, define
 * KAT_VENDOR_API_REAL_TYPES (which maps every stand-in type to the real one)
 * and redeclare each entry point through the same macro: a prototype that
 * does not match the real one is then a compile error.  The numeric constants
 * are KAT_-prefixed enumerators generated from lists, and the same test
 * asserts each against the real enumerator of the same name.
 *
 * To wrap another entry point: add it to a list below (or write a
 * KAT_PROTO_<name> macro), define it in vendor_<library>.c, and the ABI test
 * checks it with no further change.
 */
#ifndef KAUDIT_VENDOR_API_H
#define KAUDIT_VENDOR_API_H

#include <stddef.h>
#include <stdint.h>

#include "preload_internal.h"

/* ---- stand-in types --------------------------------------------------------- */

#ifdef KAT_VENDOR_API_REAL_TYPES
/* The ABI test: the real types, from cublas_v2.h, cublasLt.h and cudnn.h. */
typedef cublasHandle_t kat_cublasHandle_t;
typedef cublasStatus_t kat_cublasStatus_t;
typedef cublasOperation_t kat_cublasOperation_t;
typedef cudaDataType kat_cudaDataType;
typedef cublasComputeType_t kat_cublasComputeType_t;
typedef cublasGemmAlgo_t kat_cublasGemmAlgo_t;
typedef cublasMath_t kat_cublasMath_t;
typedef cuComplex kat_cuComplex;
typedef cuDoubleComplex kat_cuDoubleComplex;
#ifdef __cplusplus
typedef __half kat_half;
typedef __nv_bfloat16 kat_bfloat16;
#else
/* cuda_fp16.h / cuda_bf16.h define no C types, and cublas_api.h declares the
 * half and bfloat16 routines for C++ only: the ABI test checks those as C++. */
typedef struct kat_half_c kat_half;
typedef struct kat_bfloat16_c kat_bfloat16;
#endif
typedef cublasLtHandle_t kat_cublasLtHandle_t;
typedef cublasLtMatmulDesc_t kat_cublasLtMatmulDesc_t;
typedef cublasLtMatrixLayout_t kat_cublasLtMatrixLayout_t;
typedef cublasLtMatmulAlgo_t kat_cublasLtMatmulAlgo_t;
typedef cublasLtMatmulDescAttributes_t kat_cublasLtMatmulDescAttributes_t;
typedef cublasLtMatrixLayoutAttribute_t kat_cublasLtMatrixLayoutAttribute_t;
typedef cudaStream_t kat_cudaStream_t;
typedef cudnnHandle_t kat_cudnnHandle_t;
typedef cudnnStatus_t kat_cudnnStatus_t;
typedef cudnnTensorDescriptor_t kat_cudnnTensorDescriptor_t;
typedef cudnnFilterDescriptor_t kat_cudnnFilterDescriptor_t;
typedef cudnnConvolutionDescriptor_t kat_cudnnConvolutionDescriptor_t;
typedef cudnnActivationDescriptor_t kat_cudnnActivationDescriptor_t;
typedef cudnnConvolutionFwdAlgo_t kat_cudnnConvolutionFwdAlgo_t;
typedef cudnnConvolutionBwdDataAlgo_t kat_cudnnConvolutionBwdDataAlgo_t;
typedef cudnnConvolutionBwdFilterAlgo_t kat_cudnnConvolutionBwdFilterAlgo_t;
typedef cudnnDataType_t kat_cudnnDataType_t;
typedef cudnnTensorFormat_t kat_cudnnTensorFormat_t;
typedef cudnnConvolutionMode_t kat_cudnnConvolutionMode_t;
typedef cudnnBackendDescriptor_t kat_cudnnBackendDescriptor_t;
typedef cudnnBackendAttributeName_t kat_cudnnBackendAttributeName_t;
typedef cudnnBackendAttributeType_t kat_cudnnBackendAttributeType_t;
typedef cudnnBackendDescriptorType_t kat_cudnnBackendDescriptorType_t;
#else
/* The preload library: same size, alignment and argument passing. */
typedef void *kat_cublasHandle_t;
typedef int kat_cublasStatus_t;
typedef int kat_cublasOperation_t;
typedef int kat_cudaDataType;
typedef int kat_cublasComputeType_t;
typedef int kat_cublasGemmAlgo_t;
typedef int kat_cublasMath_t;
typedef void kat_cuComplex;          /* only ever behind a pointer */
typedef void kat_cuDoubleComplex;
typedef void kat_half;
typedef void kat_bfloat16;
typedef void *kat_cublasLtHandle_t;
typedef void *kat_cublasLtMatmulDesc_t;
typedef void *kat_cublasLtMatrixLayout_t;
typedef void kat_cublasLtMatmulAlgo_t;  /* a struct, only behind a pointer */
typedef int kat_cublasLtMatmulDescAttributes_t;
typedef int kat_cublasLtMatrixLayoutAttribute_t;
typedef void *kat_cudaStream_t;
typedef void *kat_cudnnHandle_t;
typedef int kat_cudnnStatus_t;
typedef void *kat_cudnnTensorDescriptor_t;
typedef void *kat_cudnnFilterDescriptor_t;
typedef void *kat_cudnnConvolutionDescriptor_t;
typedef void *kat_cudnnActivationDescriptor_t;
typedef int kat_cudnnConvolutionFwdAlgo_t;
typedef int kat_cudnnConvolutionBwdDataAlgo_t;
typedef int kat_cudnnConvolutionBwdFilterAlgo_t;
typedef int kat_cudnnDataType_t;
typedef int kat_cudnnTensorFormat_t;
typedef int kat_cudnnConvolutionMode_t;
typedef void *kat_cudnnBackendDescriptor_t;
typedef int kat_cudnnBackendAttributeName_t;
typedef int kat_cudnnBackendAttributeType_t;
typedef int kat_cudnnBackendDescriptorType_t;
#endif

/* ---- numeric constants ---------------------------------------------------------
 * X(REAL_NAME, value) makes enumerator KAT_REAL_NAME = value.  Only the values
 * the wrappers use; aliases (CUDA_R_8F_UE4M3, CUBLAS_OP_HERMITAN) are left out.
 */

/* cudaDataType_t, library_types.h (CUDA 13.0) */
#define KAT_CUDA_DATATYPE_LIST(X) \
    X(CUDA_R_16F, 2) X(CUDA_C_16F, 6) X(CUDA_R_16BF, 14) X(CUDA_C_16BF, 15) \
    X(CUDA_R_32F, 0) X(CUDA_C_32F, 4) X(CUDA_R_64F, 1) X(CUDA_C_64F, 5) \
    X(CUDA_R_4I, 16) X(CUDA_C_4I, 17) X(CUDA_R_4U, 18) X(CUDA_C_4U, 19) \
    X(CUDA_R_8I, 3) X(CUDA_C_8I, 7) X(CUDA_R_8U, 8) X(CUDA_C_8U, 9) \
    X(CUDA_R_16I, 20) X(CUDA_C_16I, 21) X(CUDA_R_16U, 22) X(CUDA_C_16U, 23) \
    X(CUDA_R_32I, 10) X(CUDA_C_32I, 11) X(CUDA_R_32U, 12) X(CUDA_C_32U, 13) \
    X(CUDA_R_64I, 24) X(CUDA_C_64I, 25) X(CUDA_R_64U, 26) X(CUDA_C_64U, 27) \
    X(CUDA_R_8F_E4M3, 28) X(CUDA_R_8F_E5M2, 29) X(CUDA_R_8F_UE8M0, 30) \
    X(CUDA_R_6F_E2M3, 31) X(CUDA_R_6F_E3M2, 32) X(CUDA_R_4F_E2M1, 33)

/* cublasStatus_t, cublasOperation_t, cublasMath_t, cublasComputeType_t: cublas_api.h (13.1) */
#define KAT_CUBLAS_CONST_LIST(X) \
    X(CUBLAS_STATUS_SUCCESS, 0) X(CUBLAS_STATUS_NOT_INITIALIZED, 1) \
    X(CUBLAS_STATUS_INTERNAL_ERROR, 14) \
    X(CUBLAS_OP_N, 0) X(CUBLAS_OP_T, 1) X(CUBLAS_OP_C, 2) \
    X(CUBLAS_DEFAULT_MATH, 0) X(CUBLAS_TENSOR_OP_MATH, 1) X(CUBLAS_PEDANTIC_MATH, 2) \
    X(CUBLAS_TF32_TENSOR_OP_MATH, 3) X(CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION, 16) \
    X(CUBLAS_COMPUTE_16F, 64) X(CUBLAS_COMPUTE_16F_PEDANTIC, 65) \
    X(CUBLAS_COMPUTE_32F, 68) X(CUBLAS_COMPUTE_32F_PEDANTIC, 69) \
    X(CUBLAS_COMPUTE_32F_FAST_16F, 74) X(CUBLAS_COMPUTE_32F_FAST_16BF, 75) \
    X(CUBLAS_COMPUTE_32F_FAST_TF32, 77) \
    X(CUBLAS_COMPUTE_64F, 70) X(CUBLAS_COMPUTE_64F_PEDANTIC, 71) \
    X(CUBLAS_COMPUTE_32I, 72) X(CUBLAS_COMPUTE_32I_PEDANTIC, 73)

/* cublasLtMatmulDescAttributes_t, cublasLtMatrixLayoutAttribute_t, cublasLtOrder_t,
 * cublasLtBatchMode_t, cublasLtEpilogue_t: cublasLt.h (13.1) */
#define KAT_CUBLASLT_CONST_LIST(X) \
    X(CUBLASLT_MATMUL_DESC_COMPUTE_TYPE, 0) X(CUBLASLT_MATMUL_DESC_SCALE_TYPE, 1) \
    X(CUBLASLT_MATMUL_DESC_TRANSA, 3) X(CUBLASLT_MATMUL_DESC_TRANSB, 4) \
    X(CUBLASLT_MATMUL_DESC_EPILOGUE, 7) \
    X(CUBLASLT_MATRIX_LAYOUT_TYPE, 0) X(CUBLASLT_MATRIX_LAYOUT_ORDER, 1) \
    X(CUBLASLT_MATRIX_LAYOUT_ROWS, 2) X(CUBLASLT_MATRIX_LAYOUT_COLS, 3) \
    X(CUBLASLT_MATRIX_LAYOUT_LD, 4) X(CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, 5) \
    X(CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, 6) X(CUBLASLT_MATRIX_LAYOUT_BATCH_MODE, 8) \
    X(CUBLASLT_ORDER_COL, 0) X(CUBLASLT_ORDER_ROW, 1) \
    X(CUBLASLT_BATCH_MODE_STRIDED, 0) X(CUBLASLT_BATCH_MODE_POINTER_ARRAY, 1) \
    X(CUBLASLT_EPILOGUE_DEFAULT, 1) X(CUBLASLT_EPILOGUE_RELU, 2) X(CUBLASLT_EPILOGUE_BIAS, 4) \
    X(CUBLASLT_EPILOGUE_RELU_BIAS, 6) X(CUBLASLT_EPILOGUE_GELU, 32) X(CUBLASLT_EPILOGUE_GELU_BIAS, 36)

/* cudnnStatus_t, cudnnDataType_t, cudnnBackendAttributeName_t,
 * cudnnBackendAttributeType_t, cudnnBackendDescriptorType_t: cudnn_graph.h (9.19) */
#define KAT_CUDNN_CONST_LIST(X) \
    X(CUDNN_STATUS_SUCCESS, 0) X(CUDNN_STATUS_NOT_INITIALIZED, 1001) \
    X(CUDNN_STATUS_BAD_PARAM, 2000) X(CUDNN_STATUS_BAD_PARAM_NOT_FINALIZED, 2004) \
    X(CUDNN_STATUS_NOT_SUPPORTED, 3000) \
    X(CUDNN_DATA_FLOAT, 0) X(CUDNN_DATA_DOUBLE, 1) X(CUDNN_DATA_HALF, 2) \
    X(CUDNN_DATA_INT8, 3) X(CUDNN_DATA_INT32, 4) X(CUDNN_DATA_UINT8, 6) \
    X(CUDNN_DATA_BFLOAT16, 9) X(CUDNN_DATA_INT64, 10) \
    X(CUDNN_DATA_FP8_E4M3, 12) X(CUDNN_DATA_FP8_E5M2, 13) \
    X(CUDNN_TYPE_DATA_TYPE, 1) X(CUDNN_TYPE_INT64, 3) X(CUDNN_TYPE_VOID_PTR, 6) \
    X(CUDNN_TYPE_BACKEND_DESCRIPTOR, 15) \
    X(CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR, 1) X(CUDNN_BACKEND_ENGINE_DESCRIPTOR, 2) \
    X(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR, 3) X(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR, 5) \
    X(CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR, 10) \
    X(CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_FILTER_DESCRIPTOR, 11) \
    X(CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_DATA_DESCRIPTOR, 12) \
    X(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR, 15) X(CUDNN_BACKEND_TENSOR_DESCRIPTOR, 17) \
    X(CUDNN_ATTR_CONVOLUTION_COMP_TYPE, 100) X(CUDNN_ATTR_CONVOLUTION_DILATIONS, 102) \
    X(CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES, 103) X(CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS, 105) \
    X(CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS, 106) \
    X(CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, 201) X(CUDNN_ATTR_ENGINEHEUR_RESULTS, 202) \
    X(CUDNN_ATTR_ENGINECFG_ENGINE, 300) \
    X(CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, 401) \
    X(CUDNN_ATTR_EXECUTION_PLAN_JSON_REPRESENTATION, 405) \
    X(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC, 702) \
    X(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W, 703) \
    X(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X, 704) \
    X(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y, 705) \
    X(CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_CONV_DESC, 708) \
    X(CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_W, 709) \
    X(CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DX, 710) \
    X(CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DY, 711) \
    X(CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_CONV_DESC, 714) \
    X(CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DW, 715) \
    X(CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_X, 716) \
    X(CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DY, 717) \
    X(CUDNN_ATTR_OPERATIONGRAPH_OPS, 801) \
    X(CUDNN_ATTR_TENSOR_DATA_TYPE, 901) X(CUDNN_ATTR_TENSOR_DIMENSIONS, 902) \
    X(CUDNN_ATTR_TENSOR_STRIDES, 903) X(CUDNN_ATTR_TENSOR_UNIQUE_ID, 906) \
    X(CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, 1000) X(CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, 1001) \
    X(CUDNN_ATTR_VARIANT_PACK_OVERRIDE_UNIQUE_IDS, 1010) \
    X(CUDNN_ATTR_ENGINE_OPERATION_GRAPH, 1300)

#define KAT_VENDOR_ENUMERATOR_(name, value) KAT_##name = (value),
enum { KAT_CUDA_DATATYPE_LIST(KAT_VENDOR_ENUMERATOR_) };
enum { KAT_CUBLAS_CONST_LIST(KAT_VENDOR_ENUMERATOR_) };
enum { KAT_CUBLASLT_CONST_LIST(KAT_VENDOR_ENUMERATOR_) };
enum { KAT_CUDNN_CONST_LIST(KAT_VENDOR_ENUMERATOR_) };

/* The sizes of cuBLASLt's semi-opaque descriptors, cublasLt.h (13.1):
 * cublasLtMatmulDescOpaque_t is uint64_t data[32], cublasLtMatrixLayoutOpaque_t
 * uint64_t data[8].  cuBLASLt keeps a descriptor's whole state in them
 * (vendor_cublaslt.c's summary cache relies on it). */
enum { KAT_CUBLASLT_MATMUL_DESC_OPAQUE_BYTES = 256, KAT_CUBLASLT_MATRIX_LAYOUT_OPAQUE_BYTES = 64,
       KAT_CUBLASLT_OPAQUE_MAJOR = 13 };   /* the cuBLASLt major version of those sizes */

/* ---- cuBLAS prototypes (cublas_api.h) ------------------------------------------
 * I is the index type (int, or int64_t for the _64 variants), T the element
 * type.  Strides are `long long int` in both variants, as in the header.
 */

#define KAT_PROTO_GEMM(name, I, T) \
    kat_cublasStatus_t name(kat_cublasHandle_t handle, kat_cublasOperation_t transa, \
        kat_cublasOperation_t transb, I m, I n, I k, const T *alpha, const T *A, I lda, \
        const T *B, I ldb, const T *beta, T *C, I ldc)

#define KAT_PROTO_GEMM_BATCHED(name, I, T) \
    kat_cublasStatus_t name(kat_cublasHandle_t handle, kat_cublasOperation_t transa, \
        kat_cublasOperation_t transb, I m, I n, I k, const T *alpha, \
        const T *const Aarray[], I lda, const T *const Barray[], I ldb, const T *beta, \
        T *const Carray[], I ldc, I batchCount)

#define KAT_PROTO_GEMM_STRIDED(name, I, T) \
    kat_cublasStatus_t name(kat_cublasHandle_t handle, kat_cublasOperation_t transa, \
        kat_cublasOperation_t transb, I m, I n, I k, const T *alpha, const T *A, I lda, \
        long long int strideA, const T *B, I ldb, long long int strideB, const T *beta, \
        T *C, I ldc, long long int strideC, I batchCount)

/* cublasSgemmEx / cublasCgemmEx (and Cgemm3mEx): typed scalars S, typed-by-enum matrices. */
#define KAT_PROTO_GEMM_TYPED_EX(name, I, S) \
    kat_cublasStatus_t name(kat_cublasHandle_t handle, kat_cublasOperation_t transa, \
        kat_cublasOperation_t transb, I m, I n, I k, const S *alpha, const void *A, \
        kat_cudaDataType Atype, I lda, const void *B, kat_cudaDataType Btype, I ldb, \
        const S *beta, void *C, kat_cudaDataType Ctype, I ldc)

#define KAT_PROTO_GEMM_EX(name, I) \
    kat_cublasStatus_t name(kat_cublasHandle_t handle, kat_cublasOperation_t transa, \
        kat_cublasOperation_t transb, I m, I n, I k, const void *alpha, const void *A, \
        kat_cudaDataType Atype, I lda, const void *B, kat_cudaDataType Btype, I ldb, \
        const void *beta, void *C, kat_cudaDataType Ctype, I ldc, \
        kat_cublasComputeType_t computeType, kat_cublasGemmAlgo_t algo)

#define KAT_PROTO_GEMM_BATCHED_EX(name, I) \
    kat_cublasStatus_t name(kat_cublasHandle_t handle, kat_cublasOperation_t transa, \
        kat_cublasOperation_t transb, I m, I n, I k, const void *alpha, \
        const void *const Aarray[], kat_cudaDataType Atype, I lda, \
        const void *const Barray[], kat_cudaDataType Btype, I ldb, const void *beta, \
        void *const Carray[], kat_cudaDataType Ctype, I ldc, I batchCount, \
        kat_cublasComputeType_t computeType, kat_cublasGemmAlgo_t algo)

#define KAT_PROTO_GEMM_STRIDED_EX(name, I) \
    kat_cublasStatus_t name(kat_cublasHandle_t handle, kat_cublasOperation_t transa, \
        kat_cublasOperation_t transb, I m, I n, I k, const void *alpha, const void *A, \
        kat_cudaDataType Atype, I lda, long long int strideA, const void *B, \
        kat_cudaDataType Btype, I ldb, long long int strideB, const void *beta, void *C, \
        kat_cudaDataType Ctype, I ldc, long long int strideC, I batchCount, \
        kat_cublasComputeType_t computeType, kat_cublasGemmAlgo_t algo)

/* cublas{S,D}gemmGroupedBatched: per-group host arrays of size group_count. */
#define KAT_PROTO_GEMM_GROUPED(name, I, T) \
    kat_cublasStatus_t name(kat_cublasHandle_t handle, \
        const kat_cublasOperation_t transa_array[], const kat_cublasOperation_t transb_array[], \
        const I m_array[], const I n_array[], const I k_array[], const T alpha_array[], \
        const T *const Aarray[], const I lda_array[], const T *const Barray[], \
        const I ldb_array[], const T beta_array[], T *const Carray[], const I ldc_array[], \
        I group_count, const I group_size[])

#define KAT_PROTO_GEMM_GROUPED_EX(name, I) \
    kat_cublasStatus_t name(kat_cublasHandle_t handle, \
        const kat_cublasOperation_t transa_array[], const kat_cublasOperation_t transb_array[], \
        const I m_array[], const I n_array[], const I k_array[], const void *alpha_array, \
        const void *const Aarray[], kat_cudaDataType Atype, const I lda_array[], \
        const void *const Barray[], kat_cudaDataType Btype, const I ldb_array[], \
        const void *beta_array, void *const Carray[], kat_cudaDataType Ctype, \
        const I ldc_array[], I group_count, const I group_size[], \
        kat_cublasComputeType_t computeType)

/* GEMV: TS scalar type, TA matrix and x type, TY y type (they differ for HSS, TSS...). */
#define KAT_PROTO_GEMV(name, I, TS, TA, TY) \
    kat_cublasStatus_t name(kat_cublasHandle_t handle, kat_cublasOperation_t trans, I m, I n, \
        const TS *alpha, const TA *A, I lda, const TA *x, I incx, const TS *beta, TY *y, \
        I incy)

#define KAT_PROTO_GEMV_BATCHED(name, I, TS, TA, TY) \
    kat_cublasStatus_t name(kat_cublasHandle_t handle, kat_cublasOperation_t trans, I m, I n, \
        const TS *alpha, const TA *const Aarray[], I lda, const TA *const xarray[], I incx, \
        const TS *beta, TY *const yarray[], I incy, I batchCount)

#define KAT_PROTO_GEMV_STRIDED(name, I, TS, TA, TY) \
    kat_cublasStatus_t name(kat_cublasHandle_t handle, kat_cublasOperation_t trans, I m, I n, \
        const TS *alpha, const TA *A, I lda, long long int strideA, const TA *x, I incx, \
        long long int stridex, const TS *beta, TY *y, I incy, long long int stridey, \
        I batchCount)

/* cuBLAS getters the wrappers call. */
#define KAT_PROTO_cublasGetMathMode(name) \
    kat_cublasStatus_t name(kat_cublasHandle_t handle, kat_cublasMath_t *mode)
#define KAT_PROTO_cublasGetStream_v2(name) \
    kat_cublasStatus_t name(kat_cublasHandle_t handle, kat_cudaStream_t *streamId)

/*
 * The wrapped cuBLAS entry points, one list per prototype.  Besides the name,
 * each row gives the index type, the element types, and how to describe the
 * operands: `prec` (enum kat_blas_prec) for typed routines, the
 * cudaDataType_t of the operands and the compute type for GEMV.
 */
enum kat_blas_prec { KAT_PREC_S = 1, KAT_PREC_D, KAT_PREC_C, KAT_PREC_Z, KAT_PREC_H };

#define KAT_CUBLAS_GEMM_LIST(X) \
    X(cublasSgemm_v2, int, float, KAT_PREC_S) \
    X(cublasSgemm_v2_64, int64_t, float, KAT_PREC_S) \
    X(cublasDgemm_v2, int, double, KAT_PREC_D) \
    X(cublasDgemm_v2_64, int64_t, double, KAT_PREC_D) \
    X(cublasCgemm_v2, int, kat_cuComplex, KAT_PREC_C) \
    X(cublasCgemm_v2_64, int64_t, kat_cuComplex, KAT_PREC_C) \
    X(cublasZgemm_v2, int, kat_cuDoubleComplex, KAT_PREC_Z) \
    X(cublasZgemm_v2_64, int64_t, kat_cuDoubleComplex, KAT_PREC_Z) \
    X(cublasHgemm, int, kat_half, KAT_PREC_H) \
    X(cublasHgemm_64, int64_t, kat_half, KAT_PREC_H) \
    X(cublasCgemm3m, int, kat_cuComplex, KAT_PREC_C) \
    X(cublasCgemm3m_64, int64_t, kat_cuComplex, KAT_PREC_C) \
    X(cublasZgemm3m, int, kat_cuDoubleComplex, KAT_PREC_Z) \
    X(cublasZgemm3m_64, int64_t, kat_cuDoubleComplex, KAT_PREC_Z)

#define KAT_CUBLAS_GEMM_BATCHED_LIST(X) \
    X(cublasSgemmBatched, int, float, KAT_PREC_S) \
    X(cublasSgemmBatched_64, int64_t, float, KAT_PREC_S) \
    X(cublasDgemmBatched, int, double, KAT_PREC_D) \
    X(cublasDgemmBatched_64, int64_t, double, KAT_PREC_D) \
    X(cublasCgemmBatched, int, kat_cuComplex, KAT_PREC_C) \
    X(cublasCgemmBatched_64, int64_t, kat_cuComplex, KAT_PREC_C) \
    X(cublasZgemmBatched, int, kat_cuDoubleComplex, KAT_PREC_Z) \
    X(cublasZgemmBatched_64, int64_t, kat_cuDoubleComplex, KAT_PREC_Z) \
    X(cublasHgemmBatched, int, kat_half, KAT_PREC_H) \
    X(cublasHgemmBatched_64, int64_t, kat_half, KAT_PREC_H) \
    X(cublasCgemm3mBatched, int, kat_cuComplex, KAT_PREC_C) \
    X(cublasCgemm3mBatched_64, int64_t, kat_cuComplex, KAT_PREC_C)

#define KAT_CUBLAS_GEMM_STRIDED_LIST(X) \
    X(cublasSgemmStridedBatched, int, float, KAT_PREC_S) \
    X(cublasSgemmStridedBatched_64, int64_t, float, KAT_PREC_S) \
    X(cublasDgemmStridedBatched, int, double, KAT_PREC_D) \
    X(cublasDgemmStridedBatched_64, int64_t, double, KAT_PREC_D) \
    X(cublasCgemmStridedBatched, int, kat_cuComplex, KAT_PREC_C) \
    X(cublasCgemmStridedBatched_64, int64_t, kat_cuComplex, KAT_PREC_C) \
    X(cublasZgemmStridedBatched, int, kat_cuDoubleComplex, KAT_PREC_Z) \
    X(cublasZgemmStridedBatched_64, int64_t, kat_cuDoubleComplex, KAT_PREC_Z) \
    X(cublasHgemmStridedBatched, int, kat_half, KAT_PREC_H) \
    X(cublasHgemmStridedBatched_64, int64_t, kat_half, KAT_PREC_H) \
    X(cublasCgemm3mStridedBatched, int, kat_cuComplex, KAT_PREC_C) \
    X(cublasCgemm3mStridedBatched_64, int64_t, kat_cuComplex, KAT_PREC_C)

#define KAT_CUBLAS_GEMM_TYPED_EX_LIST(X) \
    X(cublasSgemmEx, int, float, KAT_PREC_S) \
    X(cublasSgemmEx_64, int64_t, float, KAT_PREC_S) \
    X(cublasCgemmEx, int, kat_cuComplex, KAT_PREC_C) \
    X(cublasCgemmEx_64, int64_t, kat_cuComplex, KAT_PREC_C) \
    X(cublasCgemm3mEx, int, kat_cuComplex, KAT_PREC_C) \
    X(cublasCgemm3mEx_64, int64_t, kat_cuComplex, KAT_PREC_C)

#define KAT_CUBLAS_GEMM_EX_LIST(X) \
    X(cublasGemmEx, int) X(cublasGemmEx_64, int64_t)
#define KAT_CUBLAS_GEMM_BATCHED_EX_LIST(X) \
    X(cublasGemmBatchedEx, int) X(cublasGemmBatchedEx_64, int64_t)
#define KAT_CUBLAS_GEMM_STRIDED_EX_LIST(X) \
    X(cublasGemmStridedBatchedEx, int) X(cublasGemmStridedBatchedEx_64, int64_t)

#define KAT_CUBLAS_GEMM_GROUPED_LIST(X) \
    X(cublasSgemmGroupedBatched, int, float, KAT_PREC_S) \
    X(cublasSgemmGroupedBatched_64, int64_t, float, KAT_PREC_S) \
    X(cublasDgemmGroupedBatched, int, double, KAT_PREC_D) \
    X(cublasDgemmGroupedBatched_64, int64_t, double, KAT_PREC_D)
#define KAT_CUBLAS_GEMM_GROUPED_EX_LIST(X) \
    X(cublasGemmGroupedBatchedEx, int) X(cublasGemmGroupedBatchedEx_64, int64_t)

/* X(name, I, TS, TA, TY, cudaDataType of A and x, of y, compute type) */
#define KAT_CUBLAS_GEMV_LIST(X) \
    X(cublasSgemv_v2, int, float, float, float, KAT_CUDA_R_32F, KAT_CUDA_R_32F, KAT_CUBLAS_COMPUTE_32F) \
    X(cublasSgemv_v2_64, int64_t, float, float, float, KAT_CUDA_R_32F, KAT_CUDA_R_32F, KAT_CUBLAS_COMPUTE_32F) \
    X(cublasDgemv_v2, int, double, double, double, KAT_CUDA_R_64F, KAT_CUDA_R_64F, KAT_CUBLAS_COMPUTE_64F) \
    X(cublasDgemv_v2_64, int64_t, double, double, double, KAT_CUDA_R_64F, KAT_CUDA_R_64F, KAT_CUBLAS_COMPUTE_64F) \
    X(cublasCgemv_v2, int, kat_cuComplex, kat_cuComplex, kat_cuComplex, KAT_CUDA_C_32F, KAT_CUDA_C_32F, KAT_CUBLAS_COMPUTE_32F) \
    X(cublasCgemv_v2_64, int64_t, kat_cuComplex, kat_cuComplex, kat_cuComplex, KAT_CUDA_C_32F, KAT_CUDA_C_32F, KAT_CUBLAS_COMPUTE_32F) \
    X(cublasZgemv_v2, int, kat_cuDoubleComplex, kat_cuDoubleComplex, kat_cuDoubleComplex, KAT_CUDA_C_64F, KAT_CUDA_C_64F, KAT_CUBLAS_COMPUTE_64F) \
    X(cublasZgemv_v2_64, int64_t, kat_cuDoubleComplex, kat_cuDoubleComplex, kat_cuDoubleComplex, KAT_CUDA_C_64F, KAT_CUDA_C_64F, KAT_CUBLAS_COMPUTE_64F)

/* X(name, I, TS, TA, TY, type of A and x, type of y, compute type) */
#define KAT_GEMV_BATCHED_ROWS_(X, pfx, TS, TA, TY, ta, ty, ct) \
    X(pfx##Batched, int, TS, TA, TY, ta, ty, ct) X(pfx##Batched_64, int64_t, TS, TA, TY, ta, ty, ct)
#define KAT_GEMV_STRIDED_ROWS_(X, pfx, TS, TA, TY, ta, ty, ct) \
    X(pfx##StridedBatched, int, TS, TA, TY, ta, ty, ct) \
    X(pfx##StridedBatched_64, int64_t, TS, TA, TY, ta, ty, ct)

#define KAT_CUBLAS_GEMV_BATCHED_LIST(X) \
    KAT_GEMV_BATCHED_ROWS_(X, cublasSgemv, float, float, float, KAT_CUDA_R_32F, KAT_CUDA_R_32F, KAT_CUBLAS_COMPUTE_32F) \
    KAT_GEMV_BATCHED_ROWS_(X, cublasDgemv, double, double, double, KAT_CUDA_R_64F, KAT_CUDA_R_64F, KAT_CUBLAS_COMPUTE_64F) \
    KAT_GEMV_BATCHED_ROWS_(X, cublasCgemv, kat_cuComplex, kat_cuComplex, kat_cuComplex, KAT_CUDA_C_32F, KAT_CUDA_C_32F, KAT_CUBLAS_COMPUTE_32F) \
    KAT_GEMV_BATCHED_ROWS_(X, cublasZgemv, kat_cuDoubleComplex, kat_cuDoubleComplex, kat_cuDoubleComplex, KAT_CUDA_C_64F, KAT_CUDA_C_64F, KAT_CUBLAS_COMPUTE_64F) \
    KAT_GEMV_BATCHED_ROWS_(X, cublasHSHgemv, float, kat_half, kat_half, KAT_CUDA_R_16F, KAT_CUDA_R_16F, KAT_CUBLAS_COMPUTE_32F) \
    KAT_GEMV_BATCHED_ROWS_(X, cublasHSSgemv, float, kat_half, float, KAT_CUDA_R_16F, KAT_CUDA_R_32F, KAT_CUBLAS_COMPUTE_32F) \
    KAT_GEMV_BATCHED_ROWS_(X, cublasTSTgemv, float, kat_bfloat16, kat_bfloat16, KAT_CUDA_R_16BF, KAT_CUDA_R_16BF, KAT_CUBLAS_COMPUTE_32F) \
    KAT_GEMV_BATCHED_ROWS_(X, cublasTSSgemv, float, kat_bfloat16, float, KAT_CUDA_R_16BF, KAT_CUDA_R_32F, KAT_CUBLAS_COMPUTE_32F)

#define KAT_CUBLAS_GEMV_STRIDED_LIST(X) \
    KAT_GEMV_STRIDED_ROWS_(X, cublasSgemv, float, float, float, KAT_CUDA_R_32F, KAT_CUDA_R_32F, KAT_CUBLAS_COMPUTE_32F) \
    KAT_GEMV_STRIDED_ROWS_(X, cublasDgemv, double, double, double, KAT_CUDA_R_64F, KAT_CUDA_R_64F, KAT_CUBLAS_COMPUTE_64F) \
    KAT_GEMV_STRIDED_ROWS_(X, cublasCgemv, kat_cuComplex, kat_cuComplex, kat_cuComplex, KAT_CUDA_C_32F, KAT_CUDA_C_32F, KAT_CUBLAS_COMPUTE_32F) \
    KAT_GEMV_STRIDED_ROWS_(X, cublasZgemv, kat_cuDoubleComplex, kat_cuDoubleComplex, kat_cuDoubleComplex, KAT_CUDA_C_64F, KAT_CUDA_C_64F, KAT_CUBLAS_COMPUTE_64F) \
    KAT_GEMV_STRIDED_ROWS_(X, cublasHSHgemv, float, kat_half, kat_half, KAT_CUDA_R_16F, KAT_CUDA_R_16F, KAT_CUBLAS_COMPUTE_32F) \
    KAT_GEMV_STRIDED_ROWS_(X, cublasHSSgemv, float, kat_half, float, KAT_CUDA_R_16F, KAT_CUDA_R_32F, KAT_CUBLAS_COMPUTE_32F) \
    KAT_GEMV_STRIDED_ROWS_(X, cublasTSTgemv, float, kat_bfloat16, kat_bfloat16, KAT_CUDA_R_16BF, KAT_CUDA_R_16BF, KAT_CUBLAS_COMPUTE_32F) \
    KAT_GEMV_STRIDED_ROWS_(X, cublasTSSgemv, float, kat_bfloat16, float, KAT_CUDA_R_16BF, KAT_CUDA_R_32F, KAT_CUBLAS_COMPUTE_32F)

/* ---- cuBLASLt prototypes (cublasLt.h) -------------------------------------------- */

#define KAT_PROTO_cublasLtMatmul(name) \
    kat_cublasStatus_t name(kat_cublasLtHandle_t lightHandle, \
        kat_cublasLtMatmulDesc_t computeDesc, const void *alpha, const void *A, \
        kat_cublasLtMatrixLayout_t Adesc, const void *B, kat_cublasLtMatrixLayout_t Bdesc, \
        const void *beta, const void *C, kat_cublasLtMatrixLayout_t Cdesc, void *D, \
        kat_cublasLtMatrixLayout_t Ddesc, const kat_cublasLtMatmulAlgo_t *algo, \
        void *workspace, size_t workspaceSizeInBytes, kat_cudaStream_t stream)

#define KAT_PROTO_cublasLtMatmulDescGetAttribute(name) \
    kat_cublasStatus_t name(kat_cublasLtMatmulDesc_t matmulDesc, \
        kat_cublasLtMatmulDescAttributes_t attr, void *buf, size_t sizeInBytes, \
        size_t *sizeWritten)

#define KAT_PROTO_cublasLtMatrixLayoutGetAttribute(name) \
    kat_cublasStatus_t name(kat_cublasLtMatrixLayout_t matLayout, \
        kat_cublasLtMatrixLayoutAttribute_t attr, void *buf, size_t sizeInBytes, \
        size_t *sizeWritten)

/* ---- cuDNN prototypes (cudnn_cnn.h, cudnn_ops.h, cudnn_graph.h) ------------------ */

#define KAT_PROTO_cudnnConvolutionForward(name) \
    kat_cudnnStatus_t name(kat_cudnnHandle_t handle, const void *alpha, \
        const kat_cudnnTensorDescriptor_t xDesc, const void *x, \
        const kat_cudnnFilterDescriptor_t wDesc, const void *w, \
        const kat_cudnnConvolutionDescriptor_t convDesc, kat_cudnnConvolutionFwdAlgo_t algo, \
        void *workSpace, size_t workSpaceSizeInBytes, const void *beta, \
        const kat_cudnnTensorDescriptor_t yDesc, void *y)

#define KAT_PROTO_cudnnConvolutionBackwardData(name) \
    kat_cudnnStatus_t name(kat_cudnnHandle_t handle, const void *alpha, \
        const kat_cudnnFilterDescriptor_t wDesc, const void *w, \
        const kat_cudnnTensorDescriptor_t dyDesc, const void *dy, \
        const kat_cudnnConvolutionDescriptor_t convDesc, \
        kat_cudnnConvolutionBwdDataAlgo_t algo, void *workSpace, \
        size_t workSpaceSizeInBytes, const void *beta, \
        const kat_cudnnTensorDescriptor_t dxDesc, void *dx)

#define KAT_PROTO_cudnnConvolutionBackwardFilter(name) \
    kat_cudnnStatus_t name(kat_cudnnHandle_t handle, const void *alpha, \
        const kat_cudnnTensorDescriptor_t xDesc, const void *x, \
        const kat_cudnnTensorDescriptor_t dyDesc, const void *dy, \
        const kat_cudnnConvolutionDescriptor_t convDesc, \
        kat_cudnnConvolutionBwdFilterAlgo_t algo, void *workSpace, \
        size_t workSpaceSizeInBytes, const void *beta, \
        const kat_cudnnFilterDescriptor_t dwDesc, void *dw)

#define KAT_PROTO_cudnnConvolutionBiasActivationForward(name) \
    kat_cudnnStatus_t name(kat_cudnnHandle_t handle, const void *alpha1, \
        const kat_cudnnTensorDescriptor_t xDesc, const void *x, \
        const kat_cudnnFilterDescriptor_t wDesc, const void *w, \
        const kat_cudnnConvolutionDescriptor_t convDesc, kat_cudnnConvolutionFwdAlgo_t algo, \
        void *workSpace, size_t workSpaceSizeInBytes, const void *alpha2, \
        const kat_cudnnTensorDescriptor_t zDesc, const void *z, \
        const kat_cudnnTensorDescriptor_t biasDesc, const void *bias, \
        const kat_cudnnActivationDescriptor_t activationDesc, \
        const kat_cudnnTensorDescriptor_t yDesc, void *y)

#define KAT_PROTO_cudnnGetTensorNdDescriptor(name) \
    kat_cudnnStatus_t name(const kat_cudnnTensorDescriptor_t tensorDesc, int nbDimsRequested, \
        kat_cudnnDataType_t *dataType, int *nbDims, int dimA[], int strideA[])

#define KAT_PROTO_cudnnGetFilterNdDescriptor(name) \
    kat_cudnnStatus_t name(const kat_cudnnFilterDescriptor_t filterDesc, int nbDimsRequested, \
        kat_cudnnDataType_t *dataType, kat_cudnnTensorFormat_t *format, int *nbDims, \
        int filterDimA[])

#define KAT_PROTO_cudnnGetConvolutionNdDescriptor(name) \
    kat_cudnnStatus_t name(const kat_cudnnConvolutionDescriptor_t convDesc, \
        int arrayLengthRequested, int *arrayLength, int padA[], int strideA[], \
        int dilationA[], kat_cudnnConvolutionMode_t *mode, kat_cudnnDataType_t *computeType)

#define KAT_PROTO_cudnnGetConvolutionGroupCount(name) \
    kat_cudnnStatus_t name(kat_cudnnConvolutionDescriptor_t convDesc, int *groupCount)

#define KAT_PROTO_cudnnGetTensorSizeInBytes(name) \
    kat_cudnnStatus_t name(const kat_cudnnTensorDescriptor_t tensorDesc, size_t *size)

#define KAT_PROTO_cudnnGetStream(name) \
    kat_cudnnStatus_t name(kat_cudnnHandle_t handle, kat_cudaStream_t *streamId)

#define KAT_PROTO_cudnnGetFilterSizeInBytes(name) \
    kat_cudnnStatus_t name(const kat_cudnnFilterDescriptor_t filterDesc, size_t *size)

#define KAT_PROTO_cudnnBackendExecute(name) \
    kat_cudnnStatus_t name(kat_cudnnHandle_t handle, \
        kat_cudnnBackendDescriptor_t executionPlan, kat_cudnnBackendDescriptor_t variantPack)

#define KAT_PROTO_cudnnBackendCreateDescriptor(name) \
    kat_cudnnStatus_t name(kat_cudnnBackendDescriptorType_t descriptorType, \
        kat_cudnnBackendDescriptor_t *descriptor)

#define KAT_PROTO_cudnnBackendDestroyDescriptor(name) \
    kat_cudnnStatus_t name(kat_cudnnBackendDescriptor_t descriptor)

#define KAT_PROTO_cudnnBackendSetAttribute(name) \
    kat_cudnnStatus_t name(kat_cudnnBackendDescriptor_t descriptor, \
        kat_cudnnBackendAttributeName_t attributeName, \
        kat_cudnnBackendAttributeType_t attributeType, int64_t elementCount, \
        const void *arrayOfElements)

#define KAT_PROTO_cudnnBackendGetAttribute(name) \
    kat_cudnnStatus_t name(kat_cudnnBackendDescriptor_t const descriptor, \
        kat_cudnnBackendAttributeName_t attributeName, \
        kat_cudnnBackendAttributeType_t attributeType, int64_t requestedElementCount, \
        int64_t *elementCount, void *arrayOfElements)

/*
 * Every entry point with a KAT_PROTO_<name> macro, by library:
 * X(library, name, wrapped) where wrapped is 1 when we define it.
 */
#define KAT_VENDOR_SINGLE_LIST(X) \
    X(KAT_LIB_CUBLAS, cublasGetMathMode, 0) \
    X(KAT_LIB_CUBLASLT, cublasLtMatmul, 1) \
    X(KAT_LIB_CUBLASLT, cublasLtMatmulDescGetAttribute, 0) \
    X(KAT_LIB_CUBLASLT, cublasLtMatrixLayoutGetAttribute, 0) \
    X(KAT_LIB_CUDNN, cudnnConvolutionForward, 1) \
    X(KAT_LIB_CUDNN, cudnnConvolutionBackwardData, 1) \
    X(KAT_LIB_CUDNN, cudnnConvolutionBackwardFilter, 1) \
    X(KAT_LIB_CUDNN, cudnnConvolutionBiasActivationForward, 1) \
    X(KAT_LIB_CUDNN, cudnnGetTensorNdDescriptor, 0) \
    X(KAT_LIB_CUDNN, cudnnGetFilterNdDescriptor, 0) \
    X(KAT_LIB_CUDNN, cudnnGetConvolutionNdDescriptor, 0) \
    X(KAT_LIB_CUDNN, cudnnGetConvolutionGroupCount, 0) \
    X(KAT_LIB_CUDNN, cudnnGetTensorSizeInBytes, 0) \
    X(KAT_LIB_CUDNN, cudnnGetFilterSizeInBytes, 0) \
    X(KAT_LIB_CUDNN, cudnnGetStream, 0) \
    X(KAT_LIB_CUDNN, cudnnBackendExecute, 1) \
    X(KAT_LIB_CUDNN, cudnnBackendCreateDescriptor, 1) \
    X(KAT_LIB_CUDNN, cudnnBackendDestroyDescriptor, 1) \
    X(KAT_LIB_CUDNN, cudnnBackendSetAttribute, 1) \
    X(KAT_LIB_CUDNN, cudnnBackendGetAttribute, 1)

/*
 * The causal probe's vendor-boundary channel (vendor_probe.c).  After a
 * library call returned, a wrapper describes its output and hands it over;
 * the channel counts the call and, when it is selected, replaces the output
 * with noise on the call's stream.  ndims 0: an output the channel cannot
 * replace (pointer arrays in device memory, tiled orders, unknown types),
 * counted as a failure so the replay is unresolved.
 */
enum { KAT_PROBE_GEMM = 1, KAT_PROBE_CONV = 2 };   /* families: the analyzer's gemm and conv classes */
#define KAT_PROBE_DIMS 8
#define KAT_PROBE_CALLS_KEPT 16                     /* calls described for localization */
struct kat_probe_output {
    int family;
    uint32_t library;                               /* KAT_LIB_* */
    int64_t m, n, k;                                /* a GEMM's shape as its call record has it; 0 else */
    void *stream;
    int have_stream;                                /* the stream could be read */
    void *base;
    int32_t type;                                   /* cudaDataType_t of the elements */
    int ndims;
    int64_t dims[KAT_PROBE_DIMS], strides[KAT_PROBE_DIMS]; /* in elements, outermost first */
};
int kat_probe_vendor_on(void);
void kat_probe_vendor_call(const struct kat_probe_output *o, int succeeded, uint32_t depth);
/* cuBLAS: column-major m x n at C (leading dimension ldc, batch matrices stride_c
 * elements apart, cudaDataType ctype), the stream read from the handle. */
void kat_probe_vendor_gemm(kat_cublasHandle_t handle, int32_t ctype, void *C, int64_t m, int64_t n, int64_t k,
                           int64_t ldc, int64_t batch, int64_t stride_c, int status, uint32_t depth);
void kat_probe_vendor_unsupported(int status, uint32_t depth);

/* ---- helpers shared by vendor_cublas.c, vendor_cublaslt.c, vendor_cudnn.c ---------- */

#ifndef KAT_VENDOR_API_REAL_TYPES

#include <stdatomic.h>

/*
 * The real entry point `name` of `library`, resolved once into *slot.  A
 * failed resolution is not cached: the library may be loaded later (the
 * resolver records the failure once).
 */
static inline void *kat_vendor_real(void *_Atomic *slot, uint32_t library, const char *name)
{
    void *fn = atomic_load_explicit(slot, memory_order_acquire);
    if (fn == NULL) {
        fn = kat_resolve_vendor(library, name);
        if (fn != NULL)
            atomic_store_explicit(slot, fn, memory_order_release);
    }
    return fn;
}


/* Fill what every vendor record has and close the window.  API_ID caches
 * the interned name per call site (interning takes the writer lock; ids
 * survive fork, and exec starts afresh). */
static inline void kat_vendor_finish(struct kat_vendor_scope *scope,
                                     struct kat_vendor_call_rec *rec, uint32_t library,
                                     const char *api, _Atomic uint32_t *api_id, int32_t status,
                                     const void *handle, const void *return_address)
{
    uint32_t id = atomic_load_explicit(api_id, memory_order_relaxed);
    if (id == 0) {
        id = kat_intern(api);
        atomic_store_explicit(api_id, id, memory_order_relaxed);
    }
    rec->api_string = id;
    rec->library = library;
    rec->status = status;
    rec->handle = (uint64_t)(uintptr_t)handle;
    kat_vendor_end(scope, rec, return_address);
}

/* Bits per element of a cudaDataType_t; 0 when unknown. */
static inline uint32_t kat_cuda_dtype_bits(int32_t dtype)
{
    switch (dtype) {
    case KAT_CUDA_R_4I: case KAT_CUDA_R_4U: case KAT_CUDA_R_4F_E2M1:
        return 4;
    case KAT_CUDA_R_6F_E2M3: case KAT_CUDA_R_6F_E3M2:
        return 6;
    case KAT_CUDA_C_4I: case KAT_CUDA_C_4U:
    case KAT_CUDA_R_8I: case KAT_CUDA_R_8U: case KAT_CUDA_R_8F_E4M3: case KAT_CUDA_R_8F_E5M2:
    case KAT_CUDA_R_8F_UE8M0:
        return 8;
    case KAT_CUDA_C_8I: case KAT_CUDA_C_8U:
    case KAT_CUDA_R_16F: case KAT_CUDA_R_16BF: case KAT_CUDA_R_16I: case KAT_CUDA_R_16U:
        return 16;
    case KAT_CUDA_C_16F: case KAT_CUDA_C_16BF: case KAT_CUDA_C_16I: case KAT_CUDA_C_16U:
    case KAT_CUDA_R_32F: case KAT_CUDA_R_32I: case KAT_CUDA_R_32U:
        return 32;
    case KAT_CUDA_C_32F: case KAT_CUDA_C_32I: case KAT_CUDA_C_32U:
    case KAT_CUDA_R_64F: case KAT_CUDA_R_64I: case KAT_CUDA_R_64U:
        return 64;
    case KAT_CUDA_C_64F: case KAT_CUDA_C_64I: case KAT_CUDA_C_64U:
        return 128;
    default:
        return 0;
    }
}

/* a * b, or 0 when either is not positive or the product overflows. */
static inline uint64_t kat_mul_pos(int64_t a, int64_t b)
{
    int64_t r;
    if (a <= 0 || b <= 0 || __builtin_mul_overflow(a, b, &r))
        return 0;
    return (uint64_t)r;
}

/* Bytes of `elements` elements of `bits` bits each, rounded up; 0 if unknown. */
static inline uint64_t kat_elements_bytes(uint64_t elements, uint32_t bits)
{
    uint64_t b;
    if (elements == 0 || bits == 0 || __builtin_mul_overflow(elements, (uint64_t)bits, &b))
        return 0;
    return (b + 7) / 8;
}

/* How a BLAS call's output is laid out across its batch. */
enum kat_output_layout {
    KAT_OUT_SINGLE = 0,         /* one matrix or vector at the output pointer */
    KAT_OUT_STRIDED = 1,        /* `batch` of them, `stride` elements apart */
    KAT_OUT_ARRAY = 2,          /* the pointer is an array of pointers: address unknown */
};

/*
 * Set output_address/output_bytes: `per` elements per batch entry of `bits`
 * bits each.  Strided: the extent from the first to the end of the last
 * entry.  Pointer array: the address is not ours to read (0) and the bytes
 * are the sum over the batch.
 */
static inline void kat_set_output(struct kat_vendor_call_rec *rec, const void *out,
                                  uint64_t per, int64_t batch, int64_t stride,
                                  enum kat_output_layout layout, uint32_t bits)
{
    uint64_t elements = per;
    if (per != 0 && batch > 1 && layout == KAT_OUT_STRIDED) {
        uint64_t step = stride < 0 ? 0 - (uint64_t)stride : (uint64_t)stride;
        uint64_t span;
        if (__builtin_mul_overflow(step, (uint64_t)(batch - 1), &span) ||
            __builtin_add_overflow(span, per, &elements))
            elements = 0;
    } else if (per != 0 && batch > 1 && layout == KAT_OUT_ARRAY) {
        if (__builtin_mul_overflow(per, (uint64_t)batch, &elements))
            elements = 0;
    }
    rec->output_address = layout == KAT_OUT_ARRAY ? 0 : (uint64_t)(uintptr_t)out;
    rec->output_bytes = kat_elements_bytes(elements, bits);
}

#endif /* !KAT_VENDOR_API_REAL_TYPES */

#endif /* KAUDIT_VENDOR_API_H */
