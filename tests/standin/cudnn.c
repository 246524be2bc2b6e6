/*
 * cudnn.c - the stand-in libcudnn.so.9.
 *
 * Legacy interface: handles, tensor / filter / convolution descriptors (the
 * real prototypes from cudnn_ops.h and cudnn_cnn.h) and
 * cudnnConvolutionForward, a direct convolution (1 to 3 spatial dimensions,
 * padding, strides, dilation, groups, either mode) on float data.  It launches
 * a layout transform and an `sm80_xmma_fprop_implicit_gemm_*__5x_cudnn`
 * kernel through its own hidden runtime.
 *
 * v9 backend (cudnn_graph.h): TENSOR, CONVOLUTION,
 * OPERATION_CONVOLUTION_FORWARD, OPERATIONGRAPH, ENGINEHEUR, ENGINE,
 * ENGINECFG, EXECUTION_PLAN and VARIANT_PACK descriptors with the real
 * attribute names and types.  As in the real library, a descriptor set as an
 * attribute must be finalized and is copied; reading a descriptor attribute
 * fills descriptors the caller created (so a plan can be walked: plan ->
 * ENGINE_CONFIG -> ENGINE -> OPERATION_GRAPH -> OPS -> X/W/Y -> DIMENSIONS).
 * cudnnBackendExecute runs the plan's convolution with the variant pack's
 * pointers.  Other descriptor types are CUDNN_STATUS_NOT_SUPPORTED.
 */
#define _GNU_SOURCE
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cudnn.h>

#include "vendor_common.h"

#define HANDLE_MAGIC 0x43444e48u
#define TENSOR_MAGIC 0x43444e54u
#define FILTER_MAGIC 0x43444e46u
#define CONV_MAGIC 0x43444e43u
#define BACKEND_MAGIC 0x43444e42u

#define FPROP_KERNEL \
    "sm80_xmma_fprop_implicit_gemm_f32f32_f32f32_f32_nchwkcrs_nchw_tilesize128x32x8_stage3_warpsize2x2x1_g1_ffma_aligna4_alignc4_execute_kernel__5x_cudnn"
#define NCHW_TO_NHWC_KERNEL \
    "_ZN5cudnn19engines_precompiled16nchwToNhwcKernelIfffLb0ELb1EL21cudnnKernelDataType_t2EEEvNS0_18nchw2nhwc_params_tIT1_EEPKT_PT0_"

struct cudnnContext {
    uint32_t magic;
    cudaStream_t stream;
};

struct cudnnTensorStruct {
    uint32_t magic;
    cudnnDataType_t dtype;
    int nb;
    int dims[CUDNN_DIM_MAX], strides[CUDNN_DIM_MAX];
};

struct cudnnFilterStruct {
    uint32_t magic;
    cudnnDataType_t dtype;
    cudnnTensorFormat_t format;
    int nb;
    int dims[CUDNN_DIM_MAX];
};

struct cudnnConvolutionStruct {
    uint32_t magic;
    int nsp;
    int pad[3], stride[3], dilation[3];
    cudnnConvolutionMode_t mode;
    cudnnDataType_t compute;
    int groups;
    cudnnMathType_t math;
};

size_t CUDNNWINAPI cudnnGetVersion(void)
{
    return CUDNN_VERSION;
}

size_t CUDNNWINAPI cudnnGetCudartVersion(void)
{
    return STANDIN_RUNTIME_VERSION;
}

const char *CUDNNWINAPI cudnnGetErrorString(cudnnStatus_t status)
{
    switch (status) {
    case CUDNN_STATUS_SUCCESS: return "CUDNN_STATUS_SUCCESS";
    case CUDNN_STATUS_NOT_INITIALIZED: return "CUDNN_STATUS_NOT_INITIALIZED";
    case CUDNN_STATUS_BAD_PARAM: return "CUDNN_STATUS_BAD_PARAM";
    case CUDNN_STATUS_BAD_PARAM_NULL_POINTER: return "CUDNN_STATUS_BAD_PARAM_NULL_POINTER";
    case CUDNN_STATUS_BAD_PARAM_NOT_FINALIZED: return "CUDNN_STATUS_BAD_PARAM_NOT_FINALIZED";
    case CUDNN_STATUS_BAD_PARAM_ATTRIBUTE_TYPE: return "CUDNN_STATUS_BAD_PARAM_ATTRIBUTE_TYPE";
    case CUDNN_STATUS_BAD_PARAM_DESCRIPTOR_TYPE: return "CUDNN_STATUS_BAD_PARAM_DESCRIPTOR_TYPE";
    case CUDNN_STATUS_NOT_SUPPORTED: return "CUDNN_STATUS_NOT_SUPPORTED";
    case CUDNN_STATUS_NOT_SUPPORTED_DATA_TYPE: return "CUDNN_STATUS_NOT_SUPPORTED_DATA_TYPE";
    case CUDNN_STATUS_INTERNAL_ERROR: return "CUDNN_STATUS_INTERNAL_ERROR";
    case CUDNN_STATUS_EXECUTION_FAILED: return "CUDNN_STATUS_EXECUTION_FAILED";
    default: return "CUDNN_STATUS_UNKNOWN";
    }
}

cudnnStatus_t CUDNNWINAPI cudnnGetProperty(libraryPropertyType type, int *value)
{
    if (!value)
        return CUDNN_STATUS_BAD_PARAM_NULL_POINTER;
    switch (type) {
    case MAJOR_VERSION: *value = CUDNN_MAJOR; break;
    case MINOR_VERSION: *value = CUDNN_MINOR; break;
    case PATCH_LEVEL: *value = CUDNN_PATCHLEVEL; break;
    default: return CUDNN_STATUS_BAD_PARAM;
    }
    return CUDNN_STATUS_SUCCESS;
}

/* ---- handles -------------------------------------------------------------------------- */

static int handle_ok(cudnnHandle_t h)
{
    return h && h->magic == HANDLE_MAGIC;
}

cudnnStatus_t CUDNNWINAPI cudnnCreate(cudnnHandle_t *handle)
{
    if (!handle)
        return CUDNN_STATUS_BAD_PARAM_NULL_POINTER;
    /* Initialise the runtime, as the real library does here. */
    if (cudaFree(NULL) != cudaSuccess)
        return CUDNN_STATUS_NOT_INITIALIZED;
    struct cudnnContext *h = calloc(1, sizeof *h);
    if (!h)
        return CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED;
    h->magic = HANDLE_MAGIC;
    *handle = h;
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t CUDNNWINAPI cudnnDestroy(cudnnHandle_t handle)
{
    if (!handle_ok(handle))
        return CUDNN_STATUS_BAD_PARAM;
    handle->magic = 0;
    free(handle);
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t CUDNNWINAPI cudnnSetStream(cudnnHandle_t handle, cudaStream_t streamId)
{
    if (!handle_ok(handle))
        return CUDNN_STATUS_BAD_PARAM;
    handle->stream = streamId;
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t CUDNNWINAPI cudnnGetStream(cudnnHandle_t handle, cudaStream_t *streamId)
{
    if (!handle_ok(handle) || !streamId)
        return CUDNN_STATUS_BAD_PARAM;
    *streamId = handle->stream;
    return CUDNN_STATUS_SUCCESS;
}

/* ---- tensor descriptors ------------------------------------------------------------------ */

/*
 * Tensor, filter and convolution descriptors are destroyed alike: NULL is a
 * successful no-op and anything that is not a live descriptor of that kind
 * is BAD_PARAM, as in cuDNN.  Each struct starts with its uint32_t magic, so
 * desc points at it; the magic is cleared before the free so that a stale
 * handle fails the magic check (while the memory is not reused).
 */
static cudnnStatus_t destroy_legacy_descriptor(void *desc, uint32_t magic)
{
    uint32_t *desc_magic = desc;
    if (!desc_magic)
        return CUDNN_STATUS_SUCCESS;
    if (*desc_magic != magic)
        return CUDNN_STATUS_BAD_PARAM;
    *desc_magic = 0;
    free(desc);
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t CUDNNWINAPI cudnnCreateTensorDescriptor(cudnnTensorDescriptor_t *tensorDesc)
{
    if (!tensorDesc)
        return CUDNN_STATUS_BAD_PARAM_NULL_POINTER;
    struct cudnnTensorStruct *t = calloc(1, sizeof *t);
    if (!t)
        return CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED;
    t->magic = TENSOR_MAGIC;
    *tensorDesc = t;
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t CUDNNWINAPI cudnnDestroyTensorDescriptor(cudnnTensorDescriptor_t tensorDesc)
{
    return destroy_legacy_descriptor(tensorDesc, TENSOR_MAGIC);
}

cudnnStatus_t CUDNNWINAPI cudnnSetTensor4dDescriptor(cudnnTensorDescriptor_t tensorDesc, cudnnTensorFormat_t format,
                                                     cudnnDataType_t dataType, int n, int c, int h, int w)
{
    if (!tensorDesc || tensorDesc->magic != TENSOR_MAGIC || n <= 0 || c <= 0 || h <= 0 || w <= 0)
        return CUDNN_STATUS_BAD_PARAM;
    tensorDesc->dtype = dataType;
    tensorDesc->nb = 4;
    int d[4] = { n, c, h, w };
    memcpy(tensorDesc->dims, d, sizeof d);
    if (format == CUDNN_TENSOR_NCHW) {
        int s[4] = { c * h * w, h * w, w, 1 };
        memcpy(tensorDesc->strides, s, sizeof s);
    } else if (format == CUDNN_TENSOR_NHWC) {
        int s[4] = { h * w * c, 1, w * c, c };
        memcpy(tensorDesc->strides, s, sizeof s);
    } else {
        return CUDNN_STATUS_NOT_SUPPORTED_LAYOUT;
    }
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t CUDNNWINAPI cudnnSetTensorNdDescriptor(cudnnTensorDescriptor_t tensorDesc, cudnnDataType_t dataType,
                                                     int nbDims, const int dimA[], const int strideA[])
{
    if (!tensorDesc || tensorDesc->magic != TENSOR_MAGIC || nbDims < 3 || nbDims > CUDNN_DIM_MAX || !dimA ||
        !strideA)
        return CUDNN_STATUS_BAD_PARAM;
    for (int i = 0; i < nbDims; i++)
        if (dimA[i] <= 0 || strideA[i] <= 0)
            return CUDNN_STATUS_BAD_PARAM;
    tensorDesc->dtype = dataType;
    tensorDesc->nb = nbDims;
    memcpy(tensorDesc->dims, dimA, sizeof(int) * (size_t)nbDims);
    memcpy(tensorDesc->strides, strideA, sizeof(int) * (size_t)nbDims);
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t CUDNNWINAPI cudnnGetTensorNdDescriptor(const cudnnTensorDescriptor_t tensorDesc, int nbDimsRequested,
                                                     cudnnDataType_t *dataType, int *nbDims, int dimA[],
                                                     int strideA[])
{
    if (!tensorDesc || tensorDesc->magic != TENSOR_MAGIC || !dataType || !nbDims)
        return CUDNN_STATUS_BAD_PARAM;
    *dataType = tensorDesc->dtype;
    *nbDims = tensorDesc->nb;
    for (int i = 0; i < nbDimsRequested && i < tensorDesc->nb; i++) {
        if (dimA)
            dimA[i] = tensorDesc->dims[i];
        if (strideA)
            strideA[i] = tensorDesc->strides[i];
    }
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t CUDNNWINAPI cudnnGetTensor4dDescriptor(const cudnnTensorDescriptor_t tensorDesc,
                                                     cudnnDataType_t *dataType, int *n, int *c, int *h, int *w,
                                                     int *nStride, int *cStride, int *hStride, int *wStride)
{
    if (!tensorDesc || tensorDesc->magic != TENSOR_MAGIC || tensorDesc->nb != 4)
        return CUDNN_STATUS_BAD_PARAM;
    const int *d = tensorDesc->dims, *s = tensorDesc->strides;
    if (dataType) *dataType = tensorDesc->dtype;
    if (n) *n = d[0];
    if (c) *c = d[1];
    if (h) *h = d[2];
    if (w) *w = d[3];
    if (nStride) *nStride = s[0];
    if (cStride) *cStride = s[1];
    if (hStride) *hStride = s[2];
    if (wStride) *wStride = s[3];
    return CUDNN_STATUS_SUCCESS;
}

static size_t dtype_bytes(cudnnDataType_t t)
{
    switch (t) {
    case CUDNN_DATA_DOUBLE:
    case CUDNN_DATA_INT64:
        return 8;
    case CUDNN_DATA_FLOAT:
    case CUDNN_DATA_INT32:
    case CUDNN_DATA_INT8x4:
    case CUDNN_DATA_UINT8x4:
        return 4;
    case CUDNN_DATA_HALF:
    case CUDNN_DATA_BFLOAT16:
        return 2;
    default:
        return 1;
    }
}

/* Bytes from the first element to one past the furthest, as the real one. */
cudnnStatus_t CUDNNWINAPI cudnnGetTensorSizeInBytes(const cudnnTensorDescriptor_t tensorDesc, size_t *size)
{
    if (!tensorDesc || tensorDesc->magic != TENSOR_MAGIC || !size)
        return CUDNN_STATUS_BAD_PARAM;
    size_t last = 0;
    for (int i = 0; i < tensorDesc->nb; i++)
        last += (size_t)(tensorDesc->dims[i] - 1) * (size_t)tensorDesc->strides[i];
    *size = (last + 1) * dtype_bytes(tensorDesc->dtype);
    return CUDNN_STATUS_SUCCESS;
}

/* ---- filter descriptors ----------------------------------------------------------------------- */

cudnnStatus_t CUDNNWINAPI cudnnCreateFilterDescriptor(cudnnFilterDescriptor_t *filterDesc)
{
    if (!filterDesc)
        return CUDNN_STATUS_BAD_PARAM_NULL_POINTER;
    struct cudnnFilterStruct *f = calloc(1, sizeof *f);
    if (!f)
        return CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED;
    f->magic = FILTER_MAGIC;
    *filterDesc = f;
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t CUDNNWINAPI cudnnDestroyFilterDescriptor(cudnnFilterDescriptor_t filterDesc)
{
    return destroy_legacy_descriptor(filterDesc, FILTER_MAGIC);
}

cudnnStatus_t CUDNNWINAPI cudnnSetFilter4dDescriptor(cudnnFilterDescriptor_t filterDesc, cudnnDataType_t dataType,
                                                     cudnnTensorFormat_t format, int k, int c, int h, int w)
{
    if (!filterDesc || filterDesc->magic != FILTER_MAGIC || k <= 0 || c <= 0 || h <= 0 || w <= 0)
        return CUDNN_STATUS_BAD_PARAM;
    filterDesc->dtype = dataType;
    filterDesc->format = format;
    filterDesc->nb = 4;
    int d[4] = { k, c, h, w };
    memcpy(filterDesc->dims, d, sizeof d);
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t CUDNNWINAPI cudnnSetFilterNdDescriptor(cudnnFilterDescriptor_t filterDesc, cudnnDataType_t dataType,
                                                     cudnnTensorFormat_t format, int nbDims, const int filterDimA[])
{
    if (!filterDesc || filterDesc->magic != FILTER_MAGIC || nbDims < 3 || nbDims > CUDNN_DIM_MAX || !filterDimA)
        return CUDNN_STATUS_BAD_PARAM;
    for (int i = 0; i < nbDims; i++)
        if (filterDimA[i] <= 0)
            return CUDNN_STATUS_BAD_PARAM;
    filterDesc->dtype = dataType;
    filterDesc->format = format;
    filterDesc->nb = nbDims;
    memcpy(filterDesc->dims, filterDimA, sizeof(int) * (size_t)nbDims);
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t CUDNNWINAPI cudnnGetFilterNdDescriptor(const cudnnFilterDescriptor_t filterDesc, int nbDimsRequested,
                                                     cudnnDataType_t *dataType, cudnnTensorFormat_t *format,
                                                     int *nbDims, int filterDimA[])
{
    if (!filterDesc || filterDesc->magic != FILTER_MAGIC || !dataType || !format || !nbDims)
        return CUDNN_STATUS_BAD_PARAM;
    *dataType = filterDesc->dtype;
    *format = filterDesc->format;
    *nbDims = filterDesc->nb;
    for (int i = 0; i < nbDimsRequested && i < filterDesc->nb; i++)
        if (filterDimA)
            filterDimA[i] = filterDesc->dims[i];
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t CUDNNWINAPI cudnnGetFilterSizeInBytes(const cudnnFilterDescriptor_t filterDesc, size_t *size)
{
    if (!filterDesc || filterDesc->magic != FILTER_MAGIC || !size)
        return CUDNN_STATUS_BAD_PARAM;
    size_t n = 1;
    for (int i = 0; i < filterDesc->nb; i++)
        n *= (size_t)filterDesc->dims[i];
    *size = n * dtype_bytes(filterDesc->dtype);
    return CUDNN_STATUS_SUCCESS;
}

/* ---- convolution descriptors ----------------------------------------------------------------- */

cudnnStatus_t CUDNNWINAPI cudnnCreateConvolutionDescriptor(cudnnConvolutionDescriptor_t *convDesc)
{
    if (!convDesc)
        return CUDNN_STATUS_BAD_PARAM_NULL_POINTER;
    struct cudnnConvolutionStruct *c = calloc(1, sizeof *c);
    if (!c)
        return CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED;
    c->magic = CONV_MAGIC;
    c->groups = 1;
    *convDesc = c;
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t CUDNNWINAPI cudnnDestroyConvolutionDescriptor(cudnnConvolutionDescriptor_t convDesc)
{
    return destroy_legacy_descriptor(convDesc, CONV_MAGIC);
}

cudnnStatus_t CUDNNWINAPI cudnnSetConvolution2dDescriptor(cudnnConvolutionDescriptor_t convDesc, int pad_h, int pad_w,
                                                          int u, int v, int dilation_h, int dilation_w,
                                                          cudnnConvolutionMode_t mode, cudnnDataType_t computeType)
{
    if (!convDesc || convDesc->magic != CONV_MAGIC || pad_h < 0 || pad_w < 0 || u <= 0 || v <= 0 ||
        dilation_h <= 0 || dilation_w <= 0)
        return CUDNN_STATUS_BAD_PARAM;
    convDesc->nsp = 2;
    convDesc->pad[0] = pad_h;
    convDesc->pad[1] = pad_w;
    convDesc->stride[0] = u;
    convDesc->stride[1] = v;
    convDesc->dilation[0] = dilation_h;
    convDesc->dilation[1] = dilation_w;
    convDesc->mode = mode;
    convDesc->compute = computeType;
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t CUDNNWINAPI cudnnSetConvolutionNdDescriptor(cudnnConvolutionDescriptor_t convDesc, int arrayLength,
                                                          const int padA[], const int filterStrideA[],
                                                          const int dilationA[], cudnnConvolutionMode_t mode,
                                                          cudnnDataType_t computeType)
{
    if (!convDesc || convDesc->magic != CONV_MAGIC || arrayLength < 1 || arrayLength > 3 || !padA ||
        !filterStrideA || !dilationA)
        return CUDNN_STATUS_BAD_PARAM;
    for (int i = 0; i < arrayLength; i++) {
        if (padA[i] < 0 || filterStrideA[i] <= 0 || dilationA[i] <= 0)
            return CUDNN_STATUS_BAD_PARAM;
        convDesc->pad[i] = padA[i];
        convDesc->stride[i] = filterStrideA[i];
        convDesc->dilation[i] = dilationA[i];
    }
    convDesc->nsp = arrayLength;
    convDesc->mode = mode;
    convDesc->compute = computeType;
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t CUDNNWINAPI cudnnGetConvolutionNdDescriptor(const cudnnConvolutionDescriptor_t convDesc,
                                                          int arrayLengthRequested, int *arrayLength, int padA[],
                                                          int strideA[], int dilationA[],
                                                          cudnnConvolutionMode_t *mode,
                                                          cudnnDataType_t *computeType)
{
    if (!convDesc || convDesc->magic != CONV_MAGIC || !arrayLength || !mode || !computeType)
        return CUDNN_STATUS_BAD_PARAM;
    *arrayLength = convDesc->nsp;
    for (int i = 0; i < arrayLengthRequested && i < convDesc->nsp; i++) {
        if (padA) padA[i] = convDesc->pad[i];
        if (strideA) strideA[i] = convDesc->stride[i];
        if (dilationA) dilationA[i] = convDesc->dilation[i];
    }
    *mode = convDesc->mode;
    *computeType = convDesc->compute;
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t CUDNNWINAPI cudnnSetConvolutionGroupCount(cudnnConvolutionDescriptor_t convDesc, int groupCount)
{
    if (!convDesc || convDesc->magic != CONV_MAGIC || groupCount <= 0)
        return CUDNN_STATUS_BAD_PARAM;
    convDesc->groups = groupCount;
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t CUDNNWINAPI cudnnGetConvolutionGroupCount(cudnnConvolutionDescriptor_t convDesc, int *groupCount)
{
    if (!convDesc || convDesc->magic != CONV_MAGIC || !groupCount)
        return CUDNN_STATUS_BAD_PARAM;
    *groupCount = convDesc->groups;
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t CUDNNWINAPI cudnnSetConvolutionMathType(cudnnConvolutionDescriptor_t convDesc, cudnnMathType_t mathType)
{
    if (!convDesc || convDesc->magic != CONV_MAGIC)
        return CUDNN_STATUS_BAD_PARAM;
    convDesc->math = mathType;
    return CUDNN_STATUS_SUCCESS;
}

/* ---- the convolution itself ---------------------------------------------------------------------- */

struct conv_problem {
    int nsp;
    int64_t n, c, k, groups;
    int64_t in[3], flt[3], out[3];
    int64_t pad[3], stride[3], dil[3];
    int flip;                   /* CUDNN_CONVOLUTION: true convolution */
    const float *x, *w;
    float *y;
    int64_t xs[5], ws[5], ys[5]; /* element strides: n, c, spatial... */
    double alpha, beta;
};

static void conv_body(void **args)
{
    const struct conv_problem *p = args[0];
    int64_t cg = p->c / p->groups, kg = p->k / p->groups;
    int64_t in[3] = { 1, 1, 1 }, flt[3] = { 1, 1, 1 }, out[3] = { 1, 1, 1 };
    int64_t pad[3] = { 0, 0, 0 }, st[3] = { 1, 1, 1 }, dil[3] = { 1, 1, 1 };
    int64_t xs[3] = { 0, 0, 0 }, ws[3] = { 0, 0, 0 }, ys[3] = { 0, 0, 0 };
    for (int i = 0; i < p->nsp; i++) {
        in[i] = p->in[i];
        flt[i] = p->flt[i];
        out[i] = p->out[i];
        pad[i] = p->pad[i];
        st[i] = p->stride[i];
        dil[i] = p->dil[i];
        xs[i] = p->xs[2 + i];
        ws[i] = p->ws[2 + i];
        ys[i] = p->ys[2 + i];
    }
    for (int64_t n = 0; n < p->n; n++)
    for (int64_t k = 0; k < p->k; k++) {
        int64_t g = k / kg;
        for (int64_t o0 = 0; o0 < out[0]; o0++)
        for (int64_t o1 = 0; o1 < out[1]; o1++)
        for (int64_t o2 = 0; o2 < out[2]; o2++) {
            double sum = 0.0;
            for (int64_t cc = 0; cc < cg; cc++) {
                int64_t c = g * cg + cc;
                for (int64_t f0 = 0; f0 < flt[0]; f0++)
                for (int64_t f1 = 0; f1 < flt[1]; f1++)
                for (int64_t f2 = 0; f2 < flt[2]; f2++) {
                    int64_t i0 = o0 * st[0] - pad[0] + f0 * dil[0];
                    int64_t i1 = o1 * st[1] - pad[1] + f1 * dil[1];
                    int64_t i2 = o2 * st[2] - pad[2] + f2 * dil[2];
                    if (i0 < 0 || i0 >= in[0] || i1 < 0 || i1 >= in[1] || i2 < 0 || i2 >= in[2])
                        continue;
                    int64_t g0 = p->flip ? flt[0] - 1 - f0 : f0;
                    int64_t g1 = p->flip ? flt[1] - 1 - f1 : f1;
                    int64_t g2 = p->flip ? flt[2] - 1 - f2 : f2;
                    double xv = p->x[n * p->xs[0] + c * p->xs[1] + i0 * xs[0] + i1 * xs[1] + i2 * xs[2]];
                    double wv = p->w[k * p->ws[0] + cc * p->ws[1] + g0 * ws[0] + g1 * ws[1] + g2 * ws[2]];
                    sum += xv * wv;
                }
            }
            float *y = &p->y[n * p->ys[0] + k * p->ys[1] + o0 * ys[0] + o1 * ys[1] + o2 * ys[2]];
            double v = p->alpha * sum;
            if (p->beta != 0.0)
                v += p->beta * *y;
            *y = (float)v;
        }
    }
}

static int64_t out_dim(int64_t in, int64_t f, int64_t pad, int64_t stride, int64_t dil)
{
    return (in + 2 * pad - (dil * (f - 1) + 1)) / stride + 1;
}

static cudnnStatus_t run_conv(cudnnHandle_t handle, struct conv_problem *p, int with_transform)
{
    if (p->nsp < 1 || p->nsp > 3 || p->groups <= 0 || p->c % p->groups || p->k % p->groups)
        return CUDNN_STATUS_BAD_PARAM;
    for (int i = 0; i < p->nsp; i++)
        if (p->out[i] != out_dim(p->in[i], p->flt[i], p->pad[i], p->stride[i], p->dil[i]) || p->out[i] <= 0)
            return CUDNN_STATUS_BAD_PARAM;
    dim3 block = { 256, 1, 1 };
    void *args[] = { p };
    if (with_transform) {
        dim3 tgrid = { vc_blocks(p->n * p->c * p->in[0], 256), 1, 1 };
        if (vc_launch_runtime(NCHW_TO_NHWC_KERNEL, NULL, tgrid, block, handle->stream, args) != cudaSuccess)
            return CUDNN_STATUS_EXECUTION_FAILED_CUDART;
    }
    int64_t pixels = p->n;
    for (int i = 0; i < p->nsp; i++)
        pixels *= p->out[i];
    dim3 grid = { vc_blocks(pixels, 128), vc_blocks(p->k, 32), (unsigned)p->groups };
    if (vc_launch_runtime(FPROP_KERNEL, conv_body, grid, block, handle->stream, args) != cudaSuccess)
        return CUDNN_STATUS_EXECUTION_FAILED_CUDART;
    return CUDNN_STATUS_SUCCESS;
}

/* Packed filter strides for KCRS (NCHW) or KRSC (NHWC). */
static void filter_strides(const struct cudnnFilterStruct *f, int64_t ws[5])
{
    int nb = f->nb;
    if (f->format == CUDNN_TENSOR_NHWC) {
        /* K, spatial..., C */
        int64_t s = 1;
        ws[1] = s;
        s *= f->dims[1];
        for (int i = nb - 1; i >= 2; i--) {
            ws[i] = s;
            s *= f->dims[i];
        }
        ws[0] = s;
    } else {
        int64_t s = 1;
        for (int i = nb - 1; i >= 0; i--) {
            ws[i] = s;
            s *= f->dims[i];
        }
    }
}

static cudnnStatus_t legacy_problem(const struct cudnnTensorStruct *x, const struct cudnnFilterStruct *w,
                                    const struct cudnnConvolutionStruct *cv, struct conv_problem *p)
{
    if (!x || x->magic != TENSOR_MAGIC || !w || w->magic != FILTER_MAGIC || !cv || cv->magic != CONV_MAGIC)
        return CUDNN_STATUS_BAD_PARAM;
    if (x->nb != w->nb || x->nb - 2 != cv->nsp)
        return CUDNN_STATUS_BAD_PARAM;
    memset(p, 0, sizeof *p);
    p->nsp = cv->nsp;
    p->n = x->dims[0];
    p->c = x->dims[1];
    p->k = w->dims[0];
    p->groups = cv->groups;
    if (w->dims[1] * cv->groups != x->dims[1])
        return CUDNN_STATUS_BAD_PARAM;
    for (int i = 0; i < cv->nsp; i++) {
        p->in[i] = x->dims[2 + i];
        p->flt[i] = w->dims[2 + i];
        p->pad[i] = cv->pad[i];
        p->stride[i] = cv->stride[i];
        p->dil[i] = cv->dilation[i];
        p->out[i] = out_dim(p->in[i], p->flt[i], p->pad[i], p->stride[i], p->dil[i]);
    }
    p->flip = cv->mode == CUDNN_CONVOLUTION;
    for (int i = 0; i < x->nb; i++)
        p->xs[i] = x->strides[i];
    filter_strides(w, p->ws);
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t CUDNNWINAPI cudnnGetConvolutionNdForwardOutputDim(const cudnnConvolutionDescriptor_t convDesc,
                                                                const cudnnTensorDescriptor_t inputTensorDesc,
                                                                const cudnnFilterDescriptor_t filterDesc, int nbDims,
                                                                int tensorOuputDimA[])
{
    struct conv_problem p;
    cudnnStatus_t s = legacy_problem(inputTensorDesc, filterDesc, convDesc, &p);
    if (s != CUDNN_STATUS_SUCCESS)
        return s;
    if (!tensorOuputDimA || nbDims != p.nsp + 2)
        return CUDNN_STATUS_BAD_PARAM;
    tensorOuputDimA[0] = (int)p.n;
    tensorOuputDimA[1] = (int)p.k;
    for (int i = 0; i < p.nsp; i++)
        tensorOuputDimA[2 + i] = (int)p.out[i];
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t CUDNNWINAPI cudnnGetConvolution2dForwardOutputDim(const cudnnConvolutionDescriptor_t convDesc,
                                                                const cudnnTensorDescriptor_t inputTensorDesc,
                                                                const cudnnFilterDescriptor_t filterDesc, int *n,
                                                                int *c, int *h, int *w)
{
    int d[4];
    cudnnStatus_t s = cudnnGetConvolutionNdForwardOutputDim(convDesc, inputTensorDesc, filterDesc, 4, d);
    if (s != CUDNN_STATUS_SUCCESS)
        return s;
    if (n) *n = d[0];
    if (c) *c = d[1];
    if (h) *h = d[2];
    if (w) *w = d[3];
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t CUDNNWINAPI cudnnGetConvolutionForwardWorkspaceSize(cudnnHandle_t handle,
                                                                  const cudnnTensorDescriptor_t xDesc,
                                                                  const cudnnFilterDescriptor_t wDesc,
                                                                  const cudnnConvolutionDescriptor_t convDesc,
                                                                  const cudnnTensorDescriptor_t yDesc,
                                                                  cudnnConvolutionFwdAlgo_t algo, size_t *sizeInBytes)
{
    (void)handle;
    (void)xDesc;
    (void)wDesc;
    (void)convDesc;
    (void)yDesc;
    (void)algo;
    if (!sizeInBytes)
        return CUDNN_STATUS_BAD_PARAM_NULL_POINTER;
    *sizeInBytes = 0;
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t CUDNNWINAPI cudnnConvolutionForward(cudnnHandle_t handle, const void *alpha,
                                                  const cudnnTensorDescriptor_t xDesc, const void *x,
                                                  const cudnnFilterDescriptor_t wDesc, const void *w,
                                                  const cudnnConvolutionDescriptor_t convDesc,
                                                  cudnnConvolutionFwdAlgo_t algo, void *workSpace,
                                                  size_t workSpaceSizeInBytes, const void *beta,
                                                  const cudnnTensorDescriptor_t yDesc, void *y)
{
    (void)algo;
    (void)workSpace;
    (void)workSpaceSizeInBytes;
    if (!handle_ok(handle))
        return CUDNN_STATUS_BAD_PARAM;
    if (!alpha || !beta || !x || !w || !y)
        return CUDNN_STATUS_BAD_PARAM_NULL_POINTER;
    struct conv_problem p;
    cudnnStatus_t s = legacy_problem(xDesc, wDesc, convDesc, &p);
    if (s != CUDNN_STATUS_SUCCESS)
        return s;
    if (!yDesc || yDesc->magic != TENSOR_MAGIC || yDesc->nb != xDesc->nb || yDesc->dims[0] != p.n ||
        yDesc->dims[1] != p.k)
        return CUDNN_STATUS_BAD_PARAM;
    for (int i = 0; i < p.nsp; i++)
        if (yDesc->dims[2 + i] != p.out[i])
            return CUDNN_STATUS_BAD_PARAM;
    if (xDesc->dtype != CUDNN_DATA_FLOAT || wDesc->dtype != CUDNN_DATA_FLOAT || yDesc->dtype != CUDNN_DATA_FLOAT)
        return CUDNN_STATUS_NOT_SUPPORTED_DATA_TYPE;
    for (int i = 0; i < yDesc->nb; i++)
        p.ys[i] = yDesc->strides[i];
    p.x = x;
    p.w = w;
    p.y = y;
    p.alpha = *(const float *)alpha;
    p.beta = *(const float *)beta;
    vc_enter("cudnn", "cudnnConvolutionForward");
    s = run_conv(handle, &p, 1);
    vc_exit();
    return s;
}

/* ---- the v9 backend ----------------------------------------------------------------------------- */

#define MAX_OPS 8
#define MAX_UIDS 16

struct bd {
    uint32_t magic;
    cudnnBackendDescriptorType_t type;
    int finalized;
    /* TENSOR */
    int dtype_set;
    cudnnDataType_t dtype;
    int ndims, nstrides;
    int64_t dims[CUDNN_DIM_MAX], strides[CUDNN_DIM_MAX];
    int uid_set;
    int64_t uid, alignment;
    int is_virtual, by_value;
    /* CONVOLUTION */
    cudnnDataType_t comp_type;
    cudnnConvolutionMode_t mode;
    int64_t spatial;
    int ndil, nfstride, npre, npost;
    int64_t dil[3], fstride[3], pre[3], post[3];
    /* OPERATION_CONVOLUTION_FORWARD */
    struct bd *x, *w, *y, *conv;
    double alpha, beta;
    /* OPERATIONGRAPH, EXECUTION_PLAN */
    cudnnHandle_t handle;
    struct bd *ops[MAX_OPS];
    int nops;
    /* ENGINE, ENGINEHEUR */
    struct bd *graph;
    int64_t global_index;
    int gidx_set;
    int heur_mode, heur_mode_set;
    /* ENGINECFG */
    struct bd *engine;
    /* EXECUTION_PLAN */
    struct bd *cfg;
    /* VARIANT_PACK */
    int nuids, nptrs;
    int64_t uids[MAX_UIDS];
    void *ptrs[MAX_UIDS];
    void *workspace;
};

static struct bd *bd_of(cudnnBackendDescriptor_t d)
{
    struct bd *p = d;
    return p && p->magic == BACKEND_MAGIC ? p : NULL;
}

static int type_supported(cudnnBackendDescriptorType_t t)
{
    switch (t) {
    case CUDNN_BACKEND_TENSOR_DESCRIPTOR:
    case CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR:
    case CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR:
    case CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR:
    case CUDNN_BACKEND_ENGINE_DESCRIPTOR:
    case CUDNN_BACKEND_ENGINECFG_DESCRIPTOR:
    case CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR:
    case CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR:
    case CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR:
        return 1;
    default:
        return 0;
    }
}

static void bd_free_children(struct bd *d);

static struct bd *bd_clone(const struct bd *src)
{
    if (!src)
        return NULL;
    struct bd *d = malloc(sizeof *d);
    if (!d)
        return NULL;
    *d = *src;
    d->x = bd_clone(src->x);
    d->w = bd_clone(src->w);
    d->y = bd_clone(src->y);
    d->conv = bd_clone(src->conv);
    for (int i = 0; i < src->nops; i++)
        d->ops[i] = bd_clone(src->ops[i]);
    d->graph = bd_clone(src->graph);
    d->engine = bd_clone(src->engine);
    d->cfg = bd_clone(src->cfg);
    return d;
}

static void bd_destroy(struct bd *d)
{
    if (!d)
        return;
    bd_free_children(d);
    d->magic = 0;
    free(d);
}

static void bd_free_children(struct bd *d)
{
    bd_destroy(d->x);
    bd_destroy(d->w);
    bd_destroy(d->y);
    bd_destroy(d->conv);
    for (int i = 0; i < d->nops; i++)
        bd_destroy(d->ops[i]);
    bd_destroy(d->graph);
    bd_destroy(d->engine);
    bd_destroy(d->cfg);
    d->x = d->w = d->y = d->conv = d->graph = d->engine = d->cfg = NULL;
    d->nops = 0;
}

/* Copy src into the caller's descriptor dst (same type), as GetAttribute does. */
static cudnnStatus_t bd_copy_into(struct bd *dst, const struct bd *src)
{
    if (!dst || !src)
        return CUDNN_STATUS_BAD_PARAM;
    if (dst->type != src->type)
        return CUDNN_STATUS_BAD_PARAM_DESCRIPTOR_TYPE;
    struct bd *c = bd_clone(src);
    if (!c)
        return CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED;
    bd_free_children(dst);
    *dst = *c;
    free(c);
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t CUDNNWINAPI cudnnBackendCreateDescriptor(cudnnBackendDescriptorType_t descriptorType,
                                                       cudnnBackendDescriptor_t *descriptor)
{
    if (!descriptor)
        return CUDNN_STATUS_BAD_PARAM_NULL_POINTER;
    if (!type_supported(descriptorType))
        return CUDNN_STATUS_NOT_SUPPORTED;
    struct bd *d = calloc(1, sizeof *d);
    if (!d)
        return CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED;
    d->magic = BACKEND_MAGIC;
    d->type = descriptorType;
    d->alpha = 1.0;
    d->alignment = 0;
    *descriptor = d;
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t CUDNNWINAPI cudnnBackendDestroyDescriptor(cudnnBackendDescriptor_t descriptor)
{
    struct bd *d = bd_of(descriptor);
    if (!d)
        return CUDNN_STATUS_BAD_PARAM;
    bd_destroy(d);
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t CUDNNWINAPI cudnnBackendInitialize(cudnnBackendDescriptor_t descriptor)
{
    struct bd *d = bd_of(descriptor);
    if (!d)
        return CUDNN_STATUS_BAD_PARAM;
    cudnnBackendDescriptorType_t t = d->type;
    bd_free_children(d);
    memset(d, 0, sizeof *d);
    d->magic = BACKEND_MAGIC;
    d->type = t;
    d->alpha = 1.0;
    return CUDNN_STATUS_SUCCESS;
}

/* Helpers for typed attribute values. */
#define WANT(t, n_min)                                                            \
    do {                                                                          \
        if (attributeType != (t))                                                 \
            return CUDNN_STATUS_BAD_PARAM_ATTRIBUTE_TYPE;                         \
        if (elementCount < (n_min) || !arrayOfElements)                           \
            return CUDNN_STATUS_BAD_PARAM;                                        \
    } while (0)

static cudnnStatus_t set_child(struct bd **slot, cudnnBackendDescriptorType_t want, const void *arrayOfElements)
{
    struct bd *src = bd_of(*(cudnnBackendDescriptor_t const *)arrayOfElements);
    if (!src)
        return CUDNN_STATUS_BAD_PARAM;
    if (src->type != want)
        return CUDNN_STATUS_BAD_PARAM_DESCRIPTOR_TYPE;
    if (!src->finalized)
        return CUDNN_STATUS_BAD_PARAM_NOT_FINALIZED;
    struct bd *c = bd_clone(src);
    if (!c)
        return CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED;
    bd_destroy(*slot);
    *slot = c;
    return CUDNN_STATUS_SUCCESS;
}

static cudnnStatus_t set_i64_array(int64_t *dst, int *count, int max, int64_t elementCount, const void *src)
{
    if (elementCount > max)
        return CUDNN_STATUS_BAD_PARAM;
    memcpy(dst, src, sizeof(int64_t) * (size_t)elementCount);
    *count = (int)elementCount;
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t CUDNNWINAPI cudnnBackendSetAttribute(cudnnBackendDescriptor_t descriptor,
                                                   cudnnBackendAttributeName_t attributeName,
                                                   cudnnBackendAttributeType_t attributeType, int64_t elementCount,
                                                   const void *arrayOfElements)
{
    struct bd *d = bd_of(descriptor);
    if (!d)
        return CUDNN_STATUS_BAD_PARAM;
    if (d->finalized)
        return CUDNN_STATUS_BAD_PARAM;
    switch (attributeName) {
    /* TENSOR */
    case CUDNN_ATTR_TENSOR_DATA_TYPE:
        WANT(CUDNN_TYPE_DATA_TYPE, 1);
        d->dtype = *(const cudnnDataType_t *)arrayOfElements;
        d->dtype_set = 1;
        return CUDNN_STATUS_SUCCESS;
    case CUDNN_ATTR_TENSOR_DIMENSIONS:
        WANT(CUDNN_TYPE_INT64, 1);
        return set_i64_array(d->dims, &d->ndims, CUDNN_DIM_MAX, elementCount, arrayOfElements);
    case CUDNN_ATTR_TENSOR_STRIDES:
        WANT(CUDNN_TYPE_INT64, 1);
        return set_i64_array(d->strides, &d->nstrides, CUDNN_DIM_MAX, elementCount, arrayOfElements);
    case CUDNN_ATTR_TENSOR_UNIQUE_ID:
        WANT(CUDNN_TYPE_INT64, 1);
        d->uid = *(const int64_t *)arrayOfElements;
        d->uid_set = 1;
        return CUDNN_STATUS_SUCCESS;
    case CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT:
        WANT(CUDNN_TYPE_INT64, 1);
        d->alignment = *(const int64_t *)arrayOfElements;
        return CUDNN_STATUS_SUCCESS;
    case CUDNN_ATTR_TENSOR_IS_VIRTUAL:
        WANT(CUDNN_TYPE_BOOLEAN, 1);
        d->is_virtual = *(const bool *)arrayOfElements;
        return CUDNN_STATUS_SUCCESS;
    case CUDNN_ATTR_TENSOR_IS_BY_VALUE:
        WANT(CUDNN_TYPE_BOOLEAN, 1);
        d->by_value = *(const bool *)arrayOfElements;
        return CUDNN_STATUS_SUCCESS;
    /* CONVOLUTION */
    case CUDNN_ATTR_CONVOLUTION_COMP_TYPE:
        WANT(CUDNN_TYPE_DATA_TYPE, 1);
        d->comp_type = *(const cudnnDataType_t *)arrayOfElements;
        return CUDNN_STATUS_SUCCESS;
    case CUDNN_ATTR_CONVOLUTION_CONV_MODE:
        WANT(CUDNN_TYPE_CONVOLUTION_MODE, 1);
        d->mode = *(const cudnnConvolutionMode_t *)arrayOfElements;
        return CUDNN_STATUS_SUCCESS;
    case CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS:
        WANT(CUDNN_TYPE_INT64, 1);
        d->spatial = *(const int64_t *)arrayOfElements;
        return CUDNN_STATUS_SUCCESS;
    case CUDNN_ATTR_CONVOLUTION_DILATIONS:
        WANT(CUDNN_TYPE_INT64, 1);
        return set_i64_array(d->dil, &d->ndil, 3, elementCount, arrayOfElements);
    case CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES:
        WANT(CUDNN_TYPE_INT64, 1);
        return set_i64_array(d->fstride, &d->nfstride, 3, elementCount, arrayOfElements);
    case CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS:
        WANT(CUDNN_TYPE_INT64, 1);
        return set_i64_array(d->pre, &d->npre, 3, elementCount, arrayOfElements);
    case CUDNN_ATTR_CONVOLUTION_POST_PADDINGS:
        WANT(CUDNN_TYPE_INT64, 1);
        return set_i64_array(d->post, &d->npost, 3, elementCount, arrayOfElements);
    /* OPERATION_CONVOLUTION_FORWARD */
    case CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA:
    case CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_BETA: {
        double v;
        if (attributeType == CUDNN_TYPE_FLOAT && elementCount >= 1 && arrayOfElements)
            v = *(const float *)arrayOfElements;
        else if (attributeType == CUDNN_TYPE_DOUBLE && elementCount >= 1 && arrayOfElements)
            v = *(const double *)arrayOfElements;
        else
            return CUDNN_STATUS_BAD_PARAM_ATTRIBUTE_TYPE;
        if (attributeName == CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA)
            d->alpha = v;
        else
            d->beta = v;
        return CUDNN_STATUS_SUCCESS;
    }
    case CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC:
        WANT(CUDNN_TYPE_BACKEND_DESCRIPTOR, 1);
        return set_child(&d->conv, CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR, arrayOfElements);
    case CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X:
        WANT(CUDNN_TYPE_BACKEND_DESCRIPTOR, 1);
        return set_child(&d->x, CUDNN_BACKEND_TENSOR_DESCRIPTOR, arrayOfElements);
    case CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W:
        WANT(CUDNN_TYPE_BACKEND_DESCRIPTOR, 1);
        return set_child(&d->w, CUDNN_BACKEND_TENSOR_DESCRIPTOR, arrayOfElements);
    case CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y:
        WANT(CUDNN_TYPE_BACKEND_DESCRIPTOR, 1);
        return set_child(&d->y, CUDNN_BACKEND_TENSOR_DESCRIPTOR, arrayOfElements);
    /* OPERATIONGRAPH */
    case CUDNN_ATTR_OPERATIONGRAPH_HANDLE:
    case CUDNN_ATTR_EXECUTION_PLAN_HANDLE:
        WANT(CUDNN_TYPE_HANDLE, 1);
        d->handle = *(cudnnHandle_t const *)arrayOfElements;
        return CUDNN_STATUS_SUCCESS;
    case CUDNN_ATTR_OPERATIONGRAPH_OPS: {
        WANT(CUDNN_TYPE_BACKEND_DESCRIPTOR, 1);
        if (elementCount > MAX_OPS)
            return CUDNN_STATUS_NOT_SUPPORTED;
        cudnnBackendDescriptor_t const *ops = arrayOfElements;
        for (int64_t i = 0; i < elementCount; i++) {
            struct bd *op = bd_of(ops[i]);
            if (!op)
                return CUDNN_STATUS_BAD_PARAM;
            if (op->type != CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR)
                return CUDNN_STATUS_NOT_SUPPORTED_GRAPH_PATTERN;
            if (!op->finalized)
                return CUDNN_STATUS_BAD_PARAM_NOT_FINALIZED;
        }
        for (int i = 0; i < d->nops; i++)
            bd_destroy(d->ops[i]);
        d->nops = 0;
        for (int64_t i = 0; i < elementCount; i++)
            d->ops[d->nops++] = bd_clone(bd_of(ops[i]));
        return CUDNN_STATUS_SUCCESS;
    }
    /* ENGINE, ENGINEHEUR */
    case CUDNN_ATTR_ENGINE_OPERATION_GRAPH:
    case CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH:
        WANT(CUDNN_TYPE_BACKEND_DESCRIPTOR, 1);
        return set_child(&d->graph, CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR, arrayOfElements);
    case CUDNN_ATTR_ENGINE_GLOBAL_INDEX:
        WANT(CUDNN_TYPE_INT64, 1);
        d->global_index = *(const int64_t *)arrayOfElements;
        d->gidx_set = 1;
        return CUDNN_STATUS_SUCCESS;
    case CUDNN_ATTR_ENGINEHEUR_MODE:
        WANT(CUDNN_TYPE_HEUR_MODE, 1);
        d->heur_mode = *(const int *)arrayOfElements;
        d->heur_mode_set = 1;
        return CUDNN_STATUS_SUCCESS;
    case CUDNN_ATTR_ENGINEHEUR_SM_COUNT_TARGET:
    case CUDNN_ATTR_ENGINE_SM_COUNT_TARGET:
        return CUDNN_STATUS_SUCCESS;
    /* ENGINECFG */
    case CUDNN_ATTR_ENGINECFG_ENGINE:
        WANT(CUDNN_TYPE_BACKEND_DESCRIPTOR, 1);
        return set_child(&d->engine, CUDNN_BACKEND_ENGINE_DESCRIPTOR, arrayOfElements);
    case CUDNN_ATTR_ENGINECFG_KNOB_CHOICES:
        return CUDNN_STATUS_SUCCESS;
    /* EXECUTION_PLAN */
    case CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG:
        WANT(CUDNN_TYPE_BACKEND_DESCRIPTOR, 1);
        return set_child(&d->cfg, CUDNN_BACKEND_ENGINECFG_DESCRIPTOR, arrayOfElements);
    /* VARIANT_PACK */
    case CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS:
        WANT(CUDNN_TYPE_INT64, 0);
        return set_i64_array(d->uids, &d->nuids, MAX_UIDS, elementCount, arrayOfElements);
    case CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS:
        WANT(CUDNN_TYPE_VOID_PTR, 0);
        if (elementCount > MAX_UIDS)
            return CUDNN_STATUS_BAD_PARAM;
        memcpy(d->ptrs, arrayOfElements, sizeof(void *) * (size_t)elementCount);
        d->nptrs = (int)elementCount;
        return CUDNN_STATUS_SUCCESS;
    case CUDNN_ATTR_VARIANT_PACK_WORKSPACE:
        WANT(CUDNN_TYPE_VOID_PTR, 1);
        d->workspace = *(void *const *)arrayOfElements;
        return CUDNN_STATUS_SUCCESS;
    case CUDNN_ATTR_VARIANT_PACK_INTERMEDIATES:
        return CUDNN_STATUS_SUCCESS;
    default:
        return CUDNN_STATUS_NOT_SUPPORTED;
    }
}

static cudnnStatus_t check_conv_graph(const struct bd *g)
{
    if (!g || !g->nops)
        return CUDNN_STATUS_BAD_PARAM;
    for (int i = 0; i < g->nops; i++) {
        const struct bd *op = g->ops[i];
        const struct bd *x = op->x, *w = op->w, *y = op->y, *c = op->conv;
        if (x->ndims != w->ndims || x->ndims != y->ndims || x->ndims - 2 != c->spatial)
            return CUDNN_STATUS_BAD_PARAM_SHAPE_MISMATCH;
        if (x->dtype != CUDNN_DATA_FLOAT || w->dtype != CUDNN_DATA_FLOAT || y->dtype != CUDNN_DATA_FLOAT)
            return CUDNN_STATUS_NOT_SUPPORTED_DATA_TYPE;
    }
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t CUDNNWINAPI cudnnBackendFinalize(cudnnBackendDescriptor_t descriptor)
{
    struct bd *d = bd_of(descriptor);
    if (!d)
        return CUDNN_STATUS_BAD_PARAM;
    if (d->finalized)
        return CUDNN_STATUS_BAD_PARAM;
    cudnnStatus_t s = CUDNN_STATUS_SUCCESS;
    switch (d->type) {
    case CUDNN_BACKEND_TENSOR_DESCRIPTOR:
        if (!d->dtype_set || !d->ndims || d->ndims != d->nstrides || !d->uid_set || d->alignment <= 0)
            s = CUDNN_STATUS_BAD_PARAM;
        break;
    case CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR:
        if (d->spatial < 1 || d->spatial > 3 || d->ndil != d->spatial || d->nfstride != d->spatial ||
            d->npre != d->spatial || d->npost != d->spatial)
            s = CUDNN_STATUS_BAD_PARAM;
        break;
    case CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR:
        if (!d->x || !d->w || !d->y || !d->conv)
            s = CUDNN_STATUS_BAD_PARAM;
        break;
    case CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR:
        if (!handle_ok(d->handle) || !d->nops)
            s = CUDNN_STATUS_BAD_PARAM;
        else
            s = check_conv_graph(d);
        break;
    case CUDNN_BACKEND_ENGINE_DESCRIPTOR:
        if (!d->graph || !d->gidx_set)
            s = CUDNN_STATUS_BAD_PARAM;
        else if (d->global_index < 0 || d->global_index > 1)
            s = CUDNN_STATUS_NOT_SUPPORTED;
        break;
    case CUDNN_BACKEND_ENGINECFG_DESCRIPTOR:
        if (!d->engine)
            s = CUDNN_STATUS_BAD_PARAM;
        break;
    case CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR:
        if (!d->graph || !d->heur_mode_set)
            s = CUDNN_STATUS_BAD_PARAM;
        break;
    case CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR:
        if (!handle_ok(d->handle) || !d->cfg)
            s = CUDNN_STATUS_BAD_PARAM;
        break;
    case CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR:
        if (d->nuids != d->nptrs)
            s = CUDNN_STATUS_BAD_PARAM;
        break;
    default:
        s = CUDNN_STATUS_NOT_SUPPORTED;
    }
    if (s == CUDNN_STATUS_SUCCESS)
        d->finalized = 1;
    return s;
}

static cudnnStatus_t get_i64(const int64_t *src, int n, int64_t requested, int64_t *elementCount, void *out)
{
    if (elementCount)
        *elementCount = n;
    if (out)
        for (int64_t i = 0; i < requested && i < n; i++)
            ((int64_t *)out)[i] = src[i];
    return CUDNN_STATUS_SUCCESS;
}

static cudnnStatus_t get_child(const struct bd *child, int64_t requested, int64_t *elementCount, void *out)
{
    if (!child)
        return CUDNN_STATUS_BAD_PARAM;
    if (elementCount)
        *elementCount = 1;
    if (requested >= 1 && out)
        return bd_copy_into(bd_of(((cudnnBackendDescriptor_t *)out)[0]), child);
    return CUDNN_STATUS_SUCCESS;
}

#define GET_WANT(t)                                                               \
    do {                                                                          \
        if (attributeType != (t))                                                 \
            return CUDNN_STATUS_BAD_PARAM_ATTRIBUTE_TYPE;                         \
    } while (0)

cudnnStatus_t CUDNNWINAPI cudnnBackendGetAttribute(cudnnBackendDescriptor_t const descriptor,
                                                   cudnnBackendAttributeName_t attributeName,
                                                   cudnnBackendAttributeType_t attributeType,
                                                   int64_t requestedElementCount, int64_t *elementCount,
                                                   void *arrayOfElements)
{
    struct bd *d = bd_of(descriptor);
    if (!d)
        return CUDNN_STATUS_BAD_PARAM;
    if (!elementCount && !arrayOfElements)
        return CUDNN_STATUS_BAD_PARAM_NULL_POINTER;
    int64_t one = 1;
    switch (attributeName) {
    case CUDNN_ATTR_TENSOR_DATA_TYPE:
        GET_WANT(CUDNN_TYPE_DATA_TYPE);
        if (elementCount)
            *elementCount = 1;
        if (arrayOfElements && requestedElementCount >= 1)
            *(cudnnDataType_t *)arrayOfElements = d->dtype;
        return CUDNN_STATUS_SUCCESS;
    case CUDNN_ATTR_TENSOR_DIMENSIONS:
        GET_WANT(CUDNN_TYPE_INT64);
        return get_i64(d->dims, d->ndims, requestedElementCount, elementCount, arrayOfElements);
    case CUDNN_ATTR_TENSOR_STRIDES:
        GET_WANT(CUDNN_TYPE_INT64);
        return get_i64(d->strides, d->nstrides, requestedElementCount, elementCount, arrayOfElements);
    case CUDNN_ATTR_TENSOR_UNIQUE_ID:
        GET_WANT(CUDNN_TYPE_INT64);
        return get_i64(&d->uid, 1, requestedElementCount, elementCount, arrayOfElements);
    case CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT:
        GET_WANT(CUDNN_TYPE_INT64);
        return get_i64(&d->alignment, 1, requestedElementCount, elementCount, arrayOfElements);
    case CUDNN_ATTR_TENSOR_IS_VIRTUAL:
        GET_WANT(CUDNN_TYPE_BOOLEAN);
        if (elementCount)
            *elementCount = 1;
        if (arrayOfElements && requestedElementCount >= 1)
            *(bool *)arrayOfElements = d->is_virtual != 0;
        return CUDNN_STATUS_SUCCESS;
    case CUDNN_ATTR_CONVOLUTION_COMP_TYPE:
        GET_WANT(CUDNN_TYPE_DATA_TYPE);
        if (elementCount)
            *elementCount = 1;
        if (arrayOfElements && requestedElementCount >= 1)
            *(cudnnDataType_t *)arrayOfElements = d->comp_type;
        return CUDNN_STATUS_SUCCESS;
    case CUDNN_ATTR_CONVOLUTION_CONV_MODE:
        GET_WANT(CUDNN_TYPE_CONVOLUTION_MODE);
        if (elementCount)
            *elementCount = 1;
        if (arrayOfElements && requestedElementCount >= 1)
            *(cudnnConvolutionMode_t *)arrayOfElements = d->mode;
        return CUDNN_STATUS_SUCCESS;
    case CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS:
        GET_WANT(CUDNN_TYPE_INT64);
        return get_i64(&d->spatial, 1, requestedElementCount, elementCount, arrayOfElements);
    case CUDNN_ATTR_CONVOLUTION_DILATIONS:
        GET_WANT(CUDNN_TYPE_INT64);
        return get_i64(d->dil, d->ndil, requestedElementCount, elementCount, arrayOfElements);
    case CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES:
        GET_WANT(CUDNN_TYPE_INT64);
        return get_i64(d->fstride, d->nfstride, requestedElementCount, elementCount, arrayOfElements);
    case CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS:
        GET_WANT(CUDNN_TYPE_INT64);
        return get_i64(d->pre, d->npre, requestedElementCount, elementCount, arrayOfElements);
    case CUDNN_ATTR_CONVOLUTION_POST_PADDINGS:
        GET_WANT(CUDNN_TYPE_INT64);
        return get_i64(d->post, d->npost, requestedElementCount, elementCount, arrayOfElements);
    case CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA:
    case CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_BETA: {
        double v = attributeName == CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA ? d->alpha : d->beta;
        if (elementCount)
            *elementCount = 1;
        if (!arrayOfElements || requestedElementCount < 1)
            return CUDNN_STATUS_SUCCESS;
        if (attributeType == CUDNN_TYPE_FLOAT)
            *(float *)arrayOfElements = (float)v;
        else if (attributeType == CUDNN_TYPE_DOUBLE)
            *(double *)arrayOfElements = v;
        else
            return CUDNN_STATUS_BAD_PARAM_ATTRIBUTE_TYPE;
        return CUDNN_STATUS_SUCCESS;
    }
    case CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC:
        GET_WANT(CUDNN_TYPE_BACKEND_DESCRIPTOR);
        return get_child(d->conv, requestedElementCount, elementCount, arrayOfElements);
    case CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X:
        GET_WANT(CUDNN_TYPE_BACKEND_DESCRIPTOR);
        return get_child(d->x, requestedElementCount, elementCount, arrayOfElements);
    case CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W:
        GET_WANT(CUDNN_TYPE_BACKEND_DESCRIPTOR);
        return get_child(d->w, requestedElementCount, elementCount, arrayOfElements);
    case CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y:
        GET_WANT(CUDNN_TYPE_BACKEND_DESCRIPTOR);
        return get_child(d->y, requestedElementCount, elementCount, arrayOfElements);
    case CUDNN_ATTR_OPERATIONGRAPH_HANDLE:
    case CUDNN_ATTR_EXECUTION_PLAN_HANDLE:
        GET_WANT(CUDNN_TYPE_HANDLE);
        if (elementCount)
            *elementCount = 1;
        if (arrayOfElements && requestedElementCount >= 1)
            *(cudnnHandle_t *)arrayOfElements = d->handle;
        return CUDNN_STATUS_SUCCESS;
    case CUDNN_ATTR_OPERATIONGRAPH_OPS: {
        GET_WANT(CUDNN_TYPE_BACKEND_DESCRIPTOR);
        if (elementCount)
            *elementCount = d->nops;
        if (arrayOfElements) {
            for (int64_t i = 0; i < requestedElementCount && i < d->nops; i++) {
                cudnnStatus_t s =
                    bd_copy_into(bd_of(((cudnnBackendDescriptor_t *)arrayOfElements)[i]), d->ops[i]);
                if (s != CUDNN_STATUS_SUCCESS)
                    return s;
            }
        }
        return CUDNN_STATUS_SUCCESS;
    }
    case CUDNN_ATTR_OPERATIONGRAPH_ENGINE_GLOBAL_COUNT: {
        GET_WANT(CUDNN_TYPE_INT64);
        int64_t n = 2;
        return get_i64(&n, 1, requestedElementCount, elementCount, arrayOfElements);
    }
    case CUDNN_ATTR_ENGINE_OPERATION_GRAPH:
    case CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH:
        GET_WANT(CUDNN_TYPE_BACKEND_DESCRIPTOR);
        return get_child(d->graph, requestedElementCount, elementCount, arrayOfElements);
    case CUDNN_ATTR_ENGINE_GLOBAL_INDEX:
        GET_WANT(CUDNN_TYPE_INT64);
        return get_i64(&d->global_index, 1, requestedElementCount, elementCount, arrayOfElements);
    case CUDNN_ATTR_ENGINEHEUR_RESULTS: {
        GET_WANT(CUDNN_TYPE_BACKEND_DESCRIPTOR);
        if (!d->finalized)
            return CUDNN_STATUS_BAD_PARAM_NOT_FINALIZED;
        /* One engine config per engine this stand-in has (two). */
        if (elementCount)
            *elementCount = 2;
        if (!arrayOfElements)
            return CUDNN_STATUS_SUCCESS;
        for (int64_t i = 0; i < requestedElementCount && i < 2; i++) {
            struct bd engine = { 0 }, cfg = { 0 };
            engine.magic = cfg.magic = BACKEND_MAGIC;
            engine.type = CUDNN_BACKEND_ENGINE_DESCRIPTOR;
            engine.graph = d->graph;
            engine.global_index = i;
            engine.gidx_set = 1;
            engine.finalized = 1;
            cfg.type = CUDNN_BACKEND_ENGINECFG_DESCRIPTOR;
            cfg.engine = &engine;
            cfg.finalized = 1;
            cudnnStatus_t s = bd_copy_into(bd_of(((cudnnBackendDescriptor_t *)arrayOfElements)[i]), &cfg);
            if (s != CUDNN_STATUS_SUCCESS)
                return s;
        }
        return CUDNN_STATUS_SUCCESS;
    }
    case CUDNN_ATTR_ENGINECFG_ENGINE:
        GET_WANT(CUDNN_TYPE_BACKEND_DESCRIPTOR);
        return get_child(d->engine, requestedElementCount, elementCount, arrayOfElements);
    case CUDNN_ATTR_ENGINECFG_WORKSPACE_SIZE:
    case CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE: {
        GET_WANT(CUDNN_TYPE_INT64);
        int64_t zero = 0;
        return get_i64(&zero, 1, requestedElementCount, elementCount, arrayOfElements);
    }
    case CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG:
        GET_WANT(CUDNN_TYPE_BACKEND_DESCRIPTOR);
        return get_child(d->cfg, requestedElementCount, elementCount, arrayOfElements);
    case CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS:
        GET_WANT(CUDNN_TYPE_INT64);
        return get_i64(d->uids, d->nuids, requestedElementCount, elementCount, arrayOfElements);
    case CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS:
        GET_WANT(CUDNN_TYPE_VOID_PTR);
        if (elementCount)
            *elementCount = d->nptrs;
        if (arrayOfElements)
            for (int64_t i = 0; i < requestedElementCount && i < d->nptrs; i++)
                ((void **)arrayOfElements)[i] = d->ptrs[i];
        return CUDNN_STATUS_SUCCESS;
    case CUDNN_ATTR_VARIANT_PACK_WORKSPACE:
        GET_WANT(CUDNN_TYPE_VOID_PTR);
        if (elementCount)
            *elementCount = one;
        if (arrayOfElements && requestedElementCount >= 1)
            *(void **)arrayOfElements = d->workspace;
        return CUDNN_STATUS_SUCCESS;
    default:
        return CUDNN_STATUS_NOT_SUPPORTED;
    }
}

static void *variant_pointer(const struct bd *vp, int64_t uid)
{
    for (int i = 0; i < vp->nuids && i < vp->nptrs; i++)
        if (vp->uids[i] == uid)
            return vp->ptrs[i];
    return NULL;
}

static cudnnStatus_t backend_problem(const struct bd *op, const struct bd *vp, struct conv_problem *p)
{
    const struct bd *x = op->x, *w = op->w, *y = op->y, *c = op->conv;
    memset(p, 0, sizeof *p);
    p->nsp = (int)c->spatial;
    p->n = x->dims[0];
    p->c = x->dims[1];
    p->k = w->dims[0];
    if (x->dims[1] % w->dims[1])
        return CUDNN_STATUS_BAD_PARAM_SHAPE_MISMATCH;
    p->groups = x->dims[1] / w->dims[1];
    for (int i = 0; i < p->nsp; i++) {
        p->in[i] = x->dims[2 + i];
        p->flt[i] = w->dims[2 + i];
        p->out[i] = y->dims[2 + i];
        p->pad[i] = c->pre[i];
        p->stride[i] = c->fstride[i];
        p->dil[i] = c->dil[i];
    }
    for (int i = 0; i < x->ndims; i++) {
        p->xs[i] = x->strides[i];
        p->ws[i] = w->strides[i];
        p->ys[i] = y->strides[i];
    }
    p->flip = c->mode == CUDNN_CONVOLUTION;
    p->alpha = op->alpha;
    p->beta = op->beta;
    p->x = variant_pointer(vp, x->uid);
    p->w = variant_pointer(vp, w->uid);
    p->y = variant_pointer(vp, y->uid);
    if (!p->x || !p->w || !p->y)
        return CUDNN_STATUS_BAD_PARAM;
    if (y->dims[0] != p->n || y->dims[1] != p->k)
        return CUDNN_STATUS_BAD_PARAM_SHAPE_MISMATCH;
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t CUDNNWINAPI cudnnBackendExecute(cudnnHandle_t handle, cudnnBackendDescriptor_t executionPlan,
                                              cudnnBackendDescriptor_t variantPack)
{
    struct bd *plan = bd_of(executionPlan), *vp = bd_of(variantPack);
    if (!handle_ok(handle) || !plan || !vp)
        return CUDNN_STATUS_BAD_PARAM;
    if (plan->type != CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR || vp->type != CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR)
        return CUDNN_STATUS_BAD_PARAM_DESCRIPTOR_TYPE;
    if (!plan->finalized || !vp->finalized)
        return CUDNN_STATUS_BAD_PARAM_NOT_FINALIZED;
    const struct bd *graph = plan->cfg && plan->cfg->engine ? plan->cfg->engine->graph : NULL;
    if (!graph)
        return CUDNN_STATUS_BAD_PARAM;
    vc_enter("cudnn", "cudnnBackendExecute");
    cudnnStatus_t s = CUDNN_STATUS_SUCCESS;
    for (int i = 0; i < graph->nops && s == CUDNN_STATUS_SUCCESS; i++) {
        struct conv_problem p;
        s = backend_problem(graph->ops[i], vp, &p);
        if (s == CUDNN_STATUS_SUCCESS)
            s = run_conv(handle, &p, 0);
    }
    vc_exit();
    return s;
}
