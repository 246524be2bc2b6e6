/*
 * vendor_cudnn.c - wrappers for the cuDNN convolution entry points.
 *
 * Legacy API: cudnnConvolutionForward, cudnnConvolutionBackwardData,
 * cudnnConvolutionBackwardFilter and cudnnConvolutionBiasActivationForward
 * are described from their descriptors through cuDNN's own getters
 * (cudnnGetTensorNdDescriptor, cudnnGetFilterNdDescriptor,
 * cudnnGetConvolutionNdDescriptor, cudnnGetConvolutionGroupCount, and the
 * *SizeInBytes getters for the output extent).
 *
 * Backend API (what PyTorch and cudnn-frontend use): cudnnBackendExecute
 * receives only an execution plan.  Whether that plan computes a convolution
 * is found in two ways, the result cached per plan:
 *
 *  1. Construction tracking.  cuDNN 9.19 answers CUDNN_STATUS_NOT_SUPPORTED
 *     to cudnnBackendGetAttribute(CUDNN_ATTR_OPERATIONGRAPH_OPS) (measured on
 *     the CPU with libcudnn 9.19.0), so a plan's operations cannot be read
 *     back from the plan.  Instead the cudnnBackendSetAttribute wrapper reads
 *     the operations when the application hands them to an operation graph
 *     (the op descriptors do answer their CONVOLUTION_* attributes), and
 *     follows the graph to what is built from it: engine heuristics
 *     (ENGINEHEUR_OPERATION_GRAPH), the engine configs they return
 *     (ENGINEHEUR_RESULTS, seen in the cudnnBackendGetAttribute wrapper),
 *     engines (ENGINE_OPERATION_GRAPH), engine configs (ENGINECFG_ENGINE) and
 *     plans (EXECUTION_PLAN_ENGINE_CONFIG).  Each step copies the graph's
 *     description to the new descriptor in a table keyed by descriptor
 *     address; cudnnBackendCreateDescriptor and cudnnBackendDestroyDescriptor
 *     drop entries so a reused address never inherits a stale description.
 *  2. Read back, for a plan that tracking did not see (deserialized from
 *     JSON, built before tracing): EXECUTION_PLAN_ENGINE_CONFIG ->
 *     ENGINECFG_ENGINE -> ENGINE_OPERATION_GRAPH -> OPERATIONGRAPH_OPS, in
 *     case a cuDNN version answers it.
 *
 * When neither works the call is still recorded, work class unknown.
 *
 * The output of a backend convolution is the variant pack's pointer for the
 * op's y (dx, dw) tensor, paired by index in VARIANT_PACK_DATA_POINTERS with
 * the tensor's unique id in VARIANT_PACK_UNIQUE_IDS.  Measured with cuDNN 9.19
 * on the CPU: a variant pack answers neither attribute (NOT_INITIALIZED before
 * finalize, NOT_SUPPORTED after), and the y read back from an op carries
 * UNIQUE_ID -1 (and the 5-d group form), while the application's own tensor
 * answers UNIQUE_ID, DIMENSIONS, STRIDES and DATA_TYPE.  So this is tracked
 * at construction too: setting an op's y/dx/dw reads that tensor's unique id
 * and extent (element size x (1 + sum (dim - 1) x stride)) into the op's
 * entry, the graph takes its convolution op's output, and setting a variant
 * pack's UNIQUE_IDS / DATA_POINTERS copies them (the first KAT_PACK_MAX) to
 * the pack's entry.  A pack not seen being built is read back, in case a
 * cuDNN version answers.  Shape overrides (VARIANT_PACK_OVERRIDE_UNIQUE_IDS)
 * leave the extent unknown; the pointer is still recorded.  No output is
 * recorded for a plan known only by read back, nor when the convolution's
 * output is virtual (fused into a later op) and so not in the pack.
 *
 * The tensors of a convolution op as cuDNN returns them carry a group
 * dimension: x [N, G, C/G, spatial...], w [G, K/G, C/G, spatial...],
 * y [N, G, K/G, spatial...] (measured, G = 1 and G = 4); the plain forms
 * [N, C, spatial...] / [K, C/G, spatial...] are accepted too.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "preload_internal.h"
#include "vendor_api.h"

#define KAT_DIMS_MAX 8          /* CUDNN_DIM_MAX */
#define KAT_OPS_MAX 64          /* ops examined per operation graph */
#define KAT_READBACK_OPS_MAX 16
#define KAT_TABLE_BUCKETS 1024
#define KAT_TABLE_MAX 16384     /* descriptors remembered at most */
#define KAT_PACK_MAX 64         /* variant pack entries remembered */

/* ---- real entry points ------------------------------------------------------ */

#define KAT_CUDNN_REAL(name)                                                             \
    typedef KAT_PROTO_##name(kat_fn_##name);                                             \
    static kat_fn_##name *real_##name(void)                                              \
    {                                                                                    \
        static void *_Atomic slot;                                                       \
        return (kat_fn_##name *)kat_vendor_real(&slot, KAT_LIB_CUDNN, #name);            \
    }

KAT_CUDNN_REAL(cudnnConvolutionForward)
KAT_CUDNN_REAL(cudnnConvolutionBackwardData)
KAT_CUDNN_REAL(cudnnConvolutionBackwardFilter)
KAT_CUDNN_REAL(cudnnConvolutionBiasActivationForward)
KAT_CUDNN_REAL(cudnnGetTensorNdDescriptor)
KAT_CUDNN_REAL(cudnnGetFilterNdDescriptor)
KAT_CUDNN_REAL(cudnnGetConvolutionNdDescriptor)
KAT_CUDNN_REAL(cudnnGetConvolutionGroupCount)
KAT_CUDNN_REAL(cudnnGetTensorSizeInBytes)
KAT_CUDNN_REAL(cudnnGetFilterSizeInBytes)
KAT_CUDNN_REAL(cudnnGetStream)
KAT_CUDNN_REAL(cudnnBackendExecute)
KAT_CUDNN_REAL(cudnnBackendCreateDescriptor)
KAT_CUDNN_REAL(cudnnBackendDestroyDescriptor)
KAT_CUDNN_REAL(cudnnBackendSetAttribute)
KAT_CUDNN_REAL(cudnnBackendGetAttribute)

/* ---- a convolution's shape, from either API --------------------------------- */

struct conv_shape {
    int64_t in[KAT_DIMS_MAX];   /* x (dx): [N, C, sp...] or [N, G, C/G, sp...] */
    int64_t filter[KAT_DIMS_MAX]; /* w (dw): [K, C/G, sp...] or [G, K/G, C/G, sp...] */
    int64_t out[KAT_DIMS_MAX];  /* y (dy): [N, K, sp...] or [N, G, K/G, sp...] */
    int nin, nfilter, nout;
    int spatial;                /* from the convolution descriptor */
    int64_t pad[KAT_DIMS_MAX], stride[KAT_DIMS_MAX], dilation[KAT_DIMS_MAX];
    int64_t groups;             /* 0: derive from the shapes */
    int32_t data_type, compute_type;
};

static int32_t clamp32(int64_t v)
{
    return v > INT32_MAX ? INT32_MAX : v < INT32_MIN ? INT32_MIN : (int32_t)v;
}

/* Fill a conv summary from the shapes; 0 if they do not fit together. */
static int conv_fill(struct kat_conv_summary *cs, int direction, const struct conv_shape *s)
{
    int sd = s->spatial;
    const int64_t *in_sp, *filter_sp, *out_sp;
    int64_t n, c, k, per_group, groups = 0;

    if (sd < 1 || sd > KAT_DIMS_MAX - 3)
        return 0;
    if (s->nin == sd + 2) {
        n = s->in[0];
        c = s->in[1];
        in_sp = s->in + 2;
    } else if (s->nin == sd + 3) {
        n = s->in[0];
        groups = s->in[1];
        if (__builtin_mul_overflow(s->in[1], s->in[2], &c))
            return 0;
        in_sp = s->in + 3;
    } else {
        return 0;
    }
    if (s->nfilter == sd + 2) {
        k = s->filter[0];
        per_group = s->filter[1];
        filter_sp = s->filter + 2;
    } else if (s->nfilter == sd + 3) {
        groups = s->filter[0];
        if (__builtin_mul_overflow(s->filter[0], s->filter[1], &k))
            return 0;
        per_group = s->filter[2];
        filter_sp = s->filter + 3;
    } else {
        return 0;
    }
    if (s->nout == sd + 2)
        out_sp = s->out + 2;
    else if (s->nout == sd + 3)
        out_sp = s->out + 3;
    else
        return 0;
    if (s->groups > 0)
        groups = s->groups;
    else if (groups <= 0)
        groups = per_group > 0 && c % per_group == 0 ? c / per_group : 1;

    *cs = (struct kat_conv_summary){0};
    cs->direction = direction;
    cs->spatial_dims = sd;
    cs->n = n;
    cs->c = c;
    cs->k = k;
    for (int i = 0; i < sd && i < 3; i++) {
        cs->in_spatial[i] = in_sp[i];
        cs->filter_spatial[i] = filter_sp[i];
        cs->out_spatial[i] = out_sp[i];
        cs->pad[i] = clamp32(s->pad[i]);
        cs->stride[i] = clamp32(s->stride[i]);
        cs->dilation[i] = clamp32(s->dilation[i]);
    }
    cs->groups = clamp32(groups);
    cs->data_type = s->data_type;
    cs->compute_type = s->compute_type;
    return 1;
}

/* ---- legacy API ------------------------------------------------------------------- */

static int legacy_tensor(kat_cudnnTensorDescriptor_t desc, int64_t *dims, int *nb,
                         int32_t *data_type)
{
    kat_fn_cudnnGetTensorNdDescriptor *get = real_cudnnGetTensorNdDescriptor();
    int d[KAT_DIMS_MAX] = {0}, strides[KAT_DIMS_MAX];
    kat_cudnnDataType_t type = 0;
    if (desc == NULL || get == NULL ||
        get(desc, KAT_DIMS_MAX, &type, nb, d, strides) != KAT_CUDNN_STATUS_SUCCESS ||
        *nb < 3 || *nb > KAT_DIMS_MAX)
        return 0;
    for (int i = 0; i < *nb; i++)
        dims[i] = d[i];
    if (data_type)
        *data_type = type;
    return 1;
}

static int legacy_filter(kat_cudnnFilterDescriptor_t desc, int64_t *dims, int *nb)
{
    kat_fn_cudnnGetFilterNdDescriptor *get = real_cudnnGetFilterNdDescriptor();
    int d[KAT_DIMS_MAX] = {0};
    kat_cudnnDataType_t type = 0;
    kat_cudnnTensorFormat_t format = 0;
    if (desc == NULL || get == NULL ||
        get(desc, KAT_DIMS_MAX, &type, &format, nb, d) != KAT_CUDNN_STATUS_SUCCESS ||
        *nb < 3 || *nb > KAT_DIMS_MAX)
        return 0;
    for (int i = 0; i < *nb; i++)
        dims[i] = d[i];
    return 1;
}

static int legacy_conv(kat_cudnnConvolutionDescriptor_t desc, struct conv_shape *s)
{
    kat_fn_cudnnGetConvolutionNdDescriptor *get = real_cudnnGetConvolutionNdDescriptor();
    kat_fn_cudnnGetConvolutionGroupCount *get_groups = real_cudnnGetConvolutionGroupCount();
    int pad[KAT_DIMS_MAX] = {0}, stride[KAT_DIMS_MAX] = {0}, dilation[KAT_DIMS_MAX] = {0};
    int len = 0, groups = 0;
    kat_cudnnConvolutionMode_t mode = 0;
    kat_cudnnDataType_t compute = 0;
    if (desc == NULL || get == NULL ||
        get(desc, KAT_DIMS_MAX - 2, &len, pad, stride, dilation, &mode, &compute) !=
            KAT_CUDNN_STATUS_SUCCESS ||
        len < 1 || len > KAT_DIMS_MAX - 2)
        return 0;
    s->spatial = len;
    for (int i = 0; i < len; i++) {
        s->pad[i] = pad[i];
        s->stride[i] = stride[i];
        s->dilation[i] = dilation[i];
    }
    s->compute_type = compute;
    if (get_groups && get_groups(desc, &groups) == KAT_CUDNN_STATUS_SUCCESS && groups > 0)
        s->groups = groups;
    return 1;
}

/* `in` is x (dx for backward data), `out` is y (dy for the backward passes). */
static void legacy_summary(struct kat_vendor_call_rec *rec, int direction,
                           kat_cudnnTensorDescriptor_t in, kat_cudnnFilterDescriptor_t filter,
                           kat_cudnnTensorDescriptor_t out, kat_cudnnConvolutionDescriptor_t conv)
{
    struct conv_shape s = {0};
    rec->work_class = KAT_WORK_CONV;
    rec->dtype_space = KAT_DTYPE_SPACE_CUDNN;
    if (legacy_tensor(in, s.in, &s.nin, &s.data_type) &&
        legacy_filter(filter, s.filter, &s.nfilter) &&
        legacy_tensor(out, s.out, &s.nout, NULL) && legacy_conv(conv, &s) &&
        conv_fill(&rec->op.conv, direction, &s))
        rec->summary_known = 1;
}

static void tensor_output(struct kat_vendor_call_rec *rec, kat_cudnnTensorDescriptor_t desc,
                          const void *data)
{
    kat_fn_cudnnGetTensorSizeInBytes *size_of = real_cudnnGetTensorSizeInBytes();
    size_t bytes = 0;
    rec->output_address = (uint64_t)(uintptr_t)data;
    if (desc && size_of && size_of(desc, &bytes) == KAT_CUDNN_STATUS_SUCCESS)
        rec->output_bytes = bytes;
}

static void filter_output(struct kat_vendor_call_rec *rec, kat_cudnnFilterDescriptor_t desc,
                          const void *data)
{
    kat_fn_cudnnGetFilterSizeInBytes *size_of = real_cudnnGetFilterSizeInBytes();
    size_t bytes = 0;
    rec->output_address = (uint64_t)(uintptr_t)data;
    if (desc && size_of && size_of(desc, &bytes) == KAT_CUDNN_STATUS_SUCCESS)
        rec->output_bytes = bytes;
}

/* ---- the causal probe's vendor channel (vendor_probe.c) ---------------------------- */

static int32_t probe_type(int32_t cudnn_type)
{
    switch (cudnn_type) {
    case KAT_CUDNN_DATA_FLOAT: return KAT_CUDA_R_32F;
    case KAT_CUDNN_DATA_DOUBLE: return KAT_CUDA_R_64F;
    case KAT_CUDNN_DATA_HALF: return KAT_CUDA_R_16F;
    case KAT_CUDNN_DATA_BFLOAT16: return KAT_CUDA_R_16BF;
    default: return -1;         /* integer, fp8, vectorized: not replaced (counted as failed) */
    }
}

static void probe_layout(struct kat_probe_output *o, void *data, int32_t cudnn_type, int nd,
                         const int64_t *dims, const int64_t *strides)
{
    o->base = data;
    o->type = probe_type(cudnn_type);
    if (o->type < 0 || nd < 1 || nd > KAT_PROBE_DIMS)
        return;                 /* ndims stays 0: not replaceable */
    o->ndims = nd;
    memcpy(o->dims, dims, (size_t)nd * sizeof dims[0]);
    memcpy(o->strides, strides, (size_t)nd * sizeof strides[0]);
}

/* Hand a convolution's output to the channel, on the handle's stream. */
static void probe_conv(kat_cudnnHandle_t handle, struct kat_probe_output *o, kat_cudnnStatus_t status,
                       uint32_t depth)
{
    kat_fn_cudnnGetStream *get_stream = real_cudnnGetStream();
    kat_cudaStream_t stream = NULL;
    o->family = KAT_PROBE_CONV;
    o->library = KAT_LIB_CUDNN;
    if (get_stream && get_stream(handle, &stream) == KAT_CUDNN_STATUS_SUCCESS) {
        o->stream = stream;
        o->have_stream = 1;
    }
    kat_probe_vendor_call(o, status == KAT_CUDNN_STATUS_SUCCESS, depth);
}

static void probe_legacy_tensor(kat_cudnnHandle_t handle, kat_cudnnTensorDescriptor_t desc, void *data,
                                kat_cudnnStatus_t status, uint32_t depth)
{
    kat_fn_cudnnGetTensorNdDescriptor *get = real_cudnnGetTensorNdDescriptor();
    int d[KAT_DIMS_MAX] = {0}, st[KAT_DIMS_MAX] = {0}, nb = 0;
    int64_t dims[KAT_DIMS_MAX], strides[KAT_DIMS_MAX];
    kat_cudnnDataType_t type = 0;
    struct kat_probe_output o = {0};
    if (desc && get && get(desc, KAT_DIMS_MAX, &type, &nb, d, st) == KAT_CUDNN_STATUS_SUCCESS && nb >= 1 &&
        nb <= KAT_DIMS_MAX) {
        for (int i = 0; i < nb; i++) {
            dims[i] = d[i];
            strides[i] = st[i];
        }
        probe_layout(&o, data, type, nb, dims, strides);
    }
    probe_conv(handle, &o, status, depth);
}

/* A filter is packed (NCHW or NHWC): its elements are contiguous. */
static void probe_legacy_filter(kat_cudnnHandle_t handle, kat_cudnnFilterDescriptor_t desc, void *data,
                                kat_cudnnStatus_t status, uint32_t depth)
{
    kat_fn_cudnnGetFilterNdDescriptor *get = real_cudnnGetFilterNdDescriptor();
    int d[KAT_DIMS_MAX] = {0}, nb = 0;
    kat_cudnnDataType_t type = 0;
    kat_cudnnTensorFormat_t format = 0;
    struct kat_probe_output o = {0};
    if (desc && get && get(desc, KAT_DIMS_MAX, &type, &format, &nb, d) == KAT_CUDNN_STATUS_SUCCESS && nb >= 1 &&
        nb <= KAT_DIMS_MAX) {
        int64_t count = 1, one = 1;
        for (int i = 0; i < nb && count > 0; i++)
            count = d[i] > 0 ? kat_mul_pos(count, d[i]) : 0;
        if (count > 0)
            probe_layout(&o, data, type, 1, &count, &one);
    }
    probe_conv(handle, &o, status, depth);
}

/* `before` describes the call (rec_ is the record), `probe` hands its output to the
 * causal probe once it returned; untraced calls go straight through. */
#define KAT_CUDNN_BODY(name, record_handle, before, args, probe)                          \
    {                                                                                     \
        kat_fn_##name *real_ = real_##name();                                             \
        if (real_ == NULL)                                                                \
            return KAT_CUDNN_STATUS_NOT_INITIALIZED;                                      \
        if (!kat_tracing_enabled())                                                       \
            return real_ args;                                                            \
        struct kat_vendor_call_rec rec_ = {0};                                            \
        before;                                                                           \
        struct kat_vendor_scope scope_;                                                   \
        kat_vendor_begin(&scope_);                                                        \
        kat_cudnnStatus_t status_ = real_ args;                                           \
        static _Atomic uint32_t api_id_;                                                  \
        kat_vendor_finish(&scope_, &rec_, KAT_LIB_CUDNN, #name, &api_id_, status_,        \
                          record_handle,                                                  \
                          __builtin_return_address(0));                                   \
        if (kat_probe_vendor_on())                                                        \
            probe;                                                                        \
        return status_;                                                                   \
    }

KAT_EXPORT KAT_PROTO_cudnnConvolutionForward(cudnnConvolutionForward)
KAT_CUDNN_BODY(cudnnConvolutionForward, handle,
    (legacy_summary(&rec_, KAT_CONV_FORWARD, xDesc, wDesc, yDesc, convDesc),
     tensor_output(&rec_, yDesc, y)),
    (handle, alpha, xDesc, x, wDesc, w, convDesc, algo, workSpace, workSpaceSizeInBytes, beta,
     yDesc, y),
    probe_legacy_tensor(handle, yDesc, y, status_, scope_.depth))

KAT_EXPORT KAT_PROTO_cudnnConvolutionBiasActivationForward(cudnnConvolutionBiasActivationForward)
KAT_CUDNN_BODY(cudnnConvolutionBiasActivationForward, handle,
    (legacy_summary(&rec_, KAT_CONV_FORWARD, xDesc, wDesc, yDesc, convDesc),
     tensor_output(&rec_, yDesc, y)),
    (handle, alpha1, xDesc, x, wDesc, w, convDesc, algo, workSpace, workSpaceSizeInBytes,
     alpha2, zDesc, z, biasDesc, bias, activationDesc, yDesc, y),
    probe_legacy_tensor(handle, yDesc, y, status_, scope_.depth))

KAT_EXPORT KAT_PROTO_cudnnConvolutionBackwardData(cudnnConvolutionBackwardData)
KAT_CUDNN_BODY(cudnnConvolutionBackwardData, handle,
    (legacy_summary(&rec_, KAT_CONV_BACKWARD_DATA, dxDesc, wDesc, dyDesc, convDesc),
     tensor_output(&rec_, dxDesc, dx)),
    (handle, alpha, wDesc, w, dyDesc, dy, convDesc, algo, workSpace, workSpaceSizeInBytes,
     beta, dxDesc, dx),
    probe_legacy_tensor(handle, dxDesc, dx, status_, scope_.depth))

KAT_EXPORT KAT_PROTO_cudnnConvolutionBackwardFilter(cudnnConvolutionBackwardFilter)
KAT_CUDNN_BODY(cudnnConvolutionBackwardFilter, handle,
    (legacy_summary(&rec_, KAT_CONV_BACKWARD_FILTER, xDesc, dwDesc, dyDesc, convDesc),
     filter_output(&rec_, dwDesc, dw)),
    (handle, alpha, xDesc, x, dyDesc, dy, convDesc, algo, workSpace, workSpaceSizeInBytes,
     beta, dwDesc, dw),
    probe_legacy_filter(handle, dwDesc, dw, status_, scope_.depth))

/* ---- backend API: reading a convolution op ------------------------------------- */

/* The attributes of one convolution op kind. */
struct conv_op_kind {
    int32_t direction;          /* enum kat_conv_direction */
    int32_t op_type;            /* cudnnBackendDescriptorType_t */
    int32_t in, filter, out, conv; /* cudnnBackendAttributeName_t */
};

static const struct conv_op_kind conv_op_kinds[3] = {
    {KAT_CONV_FORWARD, KAT_CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR,
     KAT_CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X,
     KAT_CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W,
     KAT_CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y,
     KAT_CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC},
    {KAT_CONV_BACKWARD_DATA, KAT_CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_DATA_DESCRIPTOR,
     KAT_CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DX,
     KAT_CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_W,
     KAT_CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DY,
     KAT_CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_CONV_DESC},
    {KAT_CONV_BACKWARD_FILTER, KAT_CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_FILTER_DESCRIPTOR,
     KAT_CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_X,
     KAT_CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DW,
     KAT_CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DY,
     KAT_CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_CONV_DESC},
};

/*
 * The getter's answer when an op is not of the kind the attribute belongs to.
 * Measured with cuDNN 9.19: a convolution op of another direction answers
 * CUDNN_STATUS_BAD_PARAM, a pointwise op CUDNN_STATUS_NOT_SUPPORTED.  An op
 * that is not finalized (BAD_PARAM_NOT_FINALIZED, NOT_INITIALIZED) says
 * nothing about its kind.
 */
static int status_is_wrong_kind(kat_cudnnStatus_t status)
{
    if (status == KAT_CUDNN_STATUS_NOT_SUPPORTED)
        return 1;
    return status >= KAT_CUDNN_STATUS_BAD_PARAM && status < KAT_CUDNN_STATUS_NOT_SUPPORTED &&
           status != KAT_CUDNN_STATUS_BAD_PARAM_NOT_FINALIZED;
}

/* Read one descriptor-valued attribute into a descriptor we create. */
static kat_cudnnStatus_t get_descriptor(kat_cudnnBackendDescriptor_t from, int32_t attribute,
                                        int32_t type, kat_cudnnBackendDescriptor_t *out)
{
    kat_fn_cudnnBackendCreateDescriptor *create = real_cudnnBackendCreateDescriptor();
    kat_fn_cudnnBackendDestroyDescriptor *destroy = real_cudnnBackendDestroyDescriptor();
    kat_fn_cudnnBackendGetAttribute *get = real_cudnnBackendGetAttribute();
    kat_cudnnBackendDescriptor_t d = NULL;
    kat_cudnnStatus_t status;
    int64_t count = 0;

    *out = NULL;
    if (create == NULL || destroy == NULL || get == NULL)
        return KAT_CUDNN_STATUS_NOT_INITIALIZED;
    status = create(type, &d);
    if (status != KAT_CUDNN_STATUS_SUCCESS)
        return status;
    if (d == NULL)
        return KAT_CUDNN_STATUS_NOT_INITIALIZED;
    status = get(from, attribute, KAT_CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &count, &d);
    if (status == KAT_CUDNN_STATUS_SUCCESS && count < 1)
        status = KAT_CUDNN_STATUS_NOT_SUPPORTED;
    if (status != KAT_CUDNN_STATUS_SUCCESS) {
        destroy(d);
        return status;
    }
    *out = d;
    return status;
}

static void put_descriptor(kat_cudnnBackendDescriptor_t d)
{
    kat_fn_cudnnBackendDestroyDescriptor *destroy = real_cudnnBackendDestroyDescriptor();
    if (d != NULL && destroy != NULL)
        destroy(d);
}

static int get_int64s(kat_cudnnBackendDescriptor_t d, int32_t attribute, int64_t *values,
                      int max, int *count)
{
    kat_fn_cudnnBackendGetAttribute *get = real_cudnnBackendGetAttribute();
    int64_t n = 0;
    if (get == NULL ||
        get(d, attribute, KAT_CUDNN_TYPE_INT64, max, &n, values) != KAT_CUDNN_STATUS_SUCCESS ||
        n < 1 || n > max)
        return 0;
    *count = (int)n;
    return 1;
}

static int get_data_type(kat_cudnnBackendDescriptor_t d, int32_t attribute, int32_t *type)
{
    kat_fn_cudnnBackendGetAttribute *get = real_cudnnBackendGetAttribute();
    kat_cudnnDataType_t value = 0;
    int64_t n = 0;
    if (get == NULL ||
        get(d, attribute, KAT_CUDNN_TYPE_DATA_TYPE, 1, &n, &value) != KAT_CUDNN_STATUS_SUCCESS ||
        n != 1)
        return 0;
    *type = value;
    return 1;
}

static int backend_tensor(kat_cudnnBackendDescriptor_t t, int64_t *dims, int *nb,
                          int32_t *data_type)
{
    return get_int64s(t, KAT_CUDNN_ATTR_TENSOR_DIMENSIONS, dims, KAT_DIMS_MAX, nb) &&
           (data_type == NULL || get_data_type(t, KAT_CUDNN_ATTR_TENSOR_DATA_TYPE, data_type));
}

static uint64_t element_bytes(int32_t type)
{
    switch (type) {
    case KAT_CUDNN_DATA_DOUBLE:
    case KAT_CUDNN_DATA_INT64:
        return 8;
    case KAT_CUDNN_DATA_FLOAT:
    case KAT_CUDNN_DATA_INT32:
        return 4;
    case KAT_CUDNN_DATA_HALF:
    case KAT_CUDNN_DATA_BFLOAT16:
        return 2;
    case KAT_CUDNN_DATA_INT8:
    case KAT_CUDNN_DATA_UINT8:
    case KAT_CUDNN_DATA_FP8_E4M3:
    case KAT_CUDNN_DATA_FP8_E5M2:
        return 1;
    default:
        return 0;               /* sub-byte, vectorized or unknown */
    }
}

/* A tensor's elements as the causal probe replaces them (vendor_probe.c). */
struct tensor_layout {
    int32_t ndims, type;        /* cudnnDataType_t */
    int64_t dims[KAT_DIMS_MAX], strides[KAT_DIMS_MAX];
};

/* A tensor's unique id, extent in bytes (0 if unknown) and layout (ndims 0 if
 * unknown); 0 if the id is unreadable. */
static int tensor_extent(kat_cudnnBackendDescriptor_t t, int64_t *uid, uint64_t *bytes,
                         struct tensor_layout *layout)
{
    int64_t dims[KAT_DIMS_MAX], strides[KAT_DIMS_MAX], last = 0;
    int n = 0, ndims = 0, nstrides = 0;
    int32_t type = -1;

    *bytes = 0;
    layout->ndims = 0;
    if (t == NULL || !get_int64s(t, KAT_CUDNN_ATTR_TENSOR_UNIQUE_ID, uid, 1, &n))
        return 0;
    if (!get_int64s(t, KAT_CUDNN_ATTR_TENSOR_DIMENSIONS, dims, KAT_DIMS_MAX, &ndims) ||
        !get_int64s(t, KAT_CUDNN_ATTR_TENSOR_STRIDES, strides, KAT_DIMS_MAX, &nstrides) ||
        ndims != nstrides || !get_data_type(t, KAT_CUDNN_ATTR_TENSOR_DATA_TYPE, &type))
        return 1;
    for (int i = 0; i < ndims; i++) {
        int64_t step;
        if (dims[i] < 1 || strides[i] < 0 ||
            __builtin_mul_overflow(dims[i] - 1, strides[i], &step) ||
            __builtin_add_overflow(last, step, &last))
            return 1;
    }
    if (__builtin_mul_overflow((uint64_t)last + 1, element_bytes(type), bytes))
        *bytes = 0;
    layout->ndims = ndims;
    layout->type = type;
    memcpy(layout->dims, dims, (size_t)ndims * sizeof dims[0]);
    memcpy(layout->strides, strides, (size_t)ndims * sizeof strides[0]);
    return 1;
}

static int backend_conv(kat_cudnnBackendDescriptor_t cv, struct conv_shape *s)
{
    int64_t spatial = 0;
    int n = 0;
    if (!get_int64s(cv, KAT_CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS, &spatial, 1, &n) ||
        spatial < 1 || spatial > KAT_DIMS_MAX - 3)
        return 0;
    s->spatial = (int)spatial;
    if (!get_int64s(cv, KAT_CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS, s->pad, KAT_DIMS_MAX, &n) ||
        !get_int64s(cv, KAT_CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES, s->stride, KAT_DIMS_MAX, &n) ||
        !get_int64s(cv, KAT_CUDNN_ATTR_CONVOLUTION_DILATIONS, s->dilation, KAT_DIMS_MAX, &n))
        return 0;
    if (!get_data_type(cv, KAT_CUDNN_ATTR_CONVOLUTION_COMP_TYPE, &s->compute_type))
        s->compute_type = 0;
    return 1;
}

enum op_reading {
    OP_UNREADABLE = -1,         /* cannot tell what the op is */
    OP_NOT_THIS_KIND = 0,
    OP_CONV = 1,                /* a convolution of this kind, summary filled */
    OP_CONV_NO_SUMMARY = 2,     /* a convolution of this kind, shapes unreadable */
};

/* Is `op` a convolution of `kind`, and of which shapes? */
static enum op_reading conv_from_op(kat_cudnnBackendDescriptor_t op,
                                    const struct conv_op_kind *kind,
                                    struct kat_conv_summary *cs)
{
    kat_cudnnBackendDescriptor_t in = NULL, filter = NULL, out = NULL, conv = NULL;
    struct conv_shape s = {0};
    enum op_reading result = OP_CONV_NO_SUMMARY;
    kat_cudnnStatus_t status;

    if (op == NULL)
        return OP_UNREADABLE;
    status = get_descriptor(op, kind->in, KAT_CUDNN_BACKEND_TENSOR_DESCRIPTOR, &in);
    if (status != KAT_CUDNN_STATUS_SUCCESS)
        return status_is_wrong_kind(status) ? OP_NOT_THIS_KIND : OP_UNREADABLE;
    if (get_descriptor(op, kind->filter, KAT_CUDNN_BACKEND_TENSOR_DESCRIPTOR, &filter) ==
            KAT_CUDNN_STATUS_SUCCESS &&
        get_descriptor(op, kind->out, KAT_CUDNN_BACKEND_TENSOR_DESCRIPTOR, &out) ==
            KAT_CUDNN_STATUS_SUCCESS &&
        get_descriptor(op, kind->conv, KAT_CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR, &conv) ==
            KAT_CUDNN_STATUS_SUCCESS &&
        backend_tensor(in, s.in, &s.nin, &s.data_type) &&
        backend_tensor(filter, s.filter, &s.nfilter, NULL) &&
        backend_tensor(out, s.out, &s.nout, NULL) && backend_conv(conv, &s) &&
        conv_fill(cs, kind->direction, &s))
        result = OP_CONV;
    put_descriptor(in);
    put_descriptor(filter);
    put_descriptor(out);
    put_descriptor(conv);
    return result;
}

/* ---- backend API: what each descriptor is known to compute --------------------- */

enum graph_class {
    GRAPH_UNKNOWN = 0,
    GRAPH_CONV = 1,             /* holds a convolution; summary valid */
    GRAPH_CONV_NO_SUMMARY = 2,  /* holds a convolution of unreadable shapes */
    GRAPH_NO_CONV = 3,          /* every op was read, none is a convolution */
};

/*
 * A graph and what is built from it.  An op's entry holds only its output:
 * the tensor the application set as y (dx, dw), read when it was set.
 */
struct graph_info {
    uint32_t class;             /* enum graph_class */
    struct kat_conv_summary conv;
    uint32_t output_known;      /* output_uid is the output tensor's unique id */
    int64_t output_uid;
    uint64_t output_bytes;      /* its extent; 0 if unknown */
    struct tensor_layout output; /* for the causal probe; ndims 0 if unknown */
};

/* A variant pack's arrays as the application set them. */
struct pack_info {
    int32_t nuids, nptrs;       /* kept, at most KAT_PACK_MAX */
    uint32_t overridden;        /* shapes overridden: the extent may differ */
    int64_t uids[KAT_PACK_MAX];
    const void *ptrs[KAT_PACK_MAX];
};

/* The table's values: a struct graph_info or a struct pack_info per descriptor. */
enum entry_kind { ENTRY_GRAPH = 1, ENTRY_PACK = 2 };

struct table_node {
    struct table_node *next;
    const void *key;
    uint32_t kind;              /* enum entry_kind */
    size_t size;
    unsigned char value[];      /* only memcpy'd in and out */
};

static struct table_node *table_buckets[KAT_TABLE_BUCKETS];
static atomic_size_t table_size;
static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t table_once = PTHREAD_ONCE_INIT;

/* Never fork with the lock held by another thread: the child could not take it. */
static void table_prepare(void) { pthread_mutex_lock(&table_lock); }
static void table_release(void) { pthread_mutex_unlock(&table_lock); }
static void table_setup(void) { pthread_atfork(table_prepare, table_release, table_release); }

static void table_enter(void)
{
    pthread_once(&table_once, table_setup);
    pthread_mutex_lock(&table_lock);
}

static struct table_node **table_slot(const void *key)
{
    uint64_t h = (uint64_t)(uintptr_t)key;
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 33;
    struct table_node **p = &table_buckets[h % KAT_TABLE_BUCKETS];
    while (*p != NULL && (*p)->key != key)
        p = &(*p)->next;
    return p;
}

static int table_get(const void *key, uint32_t kind, void *value, size_t size)
{
    int found = 0;
    if (key == NULL || atomic_load_explicit(&table_size, memory_order_relaxed) == 0)
        return 0;
    table_enter();
    struct table_node *node = *table_slot(key);
    if (node != NULL && node->kind == kind && node->size == size) {
        memcpy(value, node->value, size);
        found = 1;
    }
    pthread_mutex_unlock(&table_lock);
    return found;
}

static void table_drop(const void *key)
{
    struct table_node *gone = NULL;
    if (key == NULL || atomic_load_explicit(&table_size, memory_order_relaxed) == 0)
        return;
    table_enter();
    struct table_node **slot = table_slot(key);
    if (*slot != NULL) {
        gone = *slot;
        *slot = gone->next;
        atomic_fetch_sub_explicit(&table_size, 1, memory_order_relaxed);
    }
    pthread_mutex_unlock(&table_lock);
    free(gone);
}

static void table_put(const void *key, uint32_t kind, const void *value, size_t size)
{
    struct table_node *fresh, *old = NULL;
    if (key == NULL)
        return;
    fresh = malloc(sizeof *fresh + size);
    if (fresh == NULL) {
        table_drop(key);        /* never leave the old value standing */
        return;
    }
    fresh->key = key;
    fresh->kind = kind;
    fresh->size = size;
    memcpy(fresh->value, value, size);
    table_enter();
    struct table_node **slot = table_slot(key);
    if (*slot != NULL) {
        old = *slot;
        fresh->next = old->next;
        *slot = fresh;
        fresh = NULL;
    } else if (atomic_load_explicit(&table_size, memory_order_relaxed) < KAT_TABLE_MAX) {
        fresh->next = NULL;
        *slot = fresh;
        fresh = NULL;
        atomic_fetch_add_explicit(&table_size, 1, memory_order_relaxed);
    }
    pthread_mutex_unlock(&table_lock);
    free(fresh);
    free(old);
}

static int graph_get(const void *key, struct graph_info *info)
{
    return table_get(key, ENTRY_GRAPH, info, sizeof *info);
}

static void graph_put(const void *key, const struct graph_info *info)
{
    table_put(key, ENTRY_GRAPH, info, sizeof *info);
}

/* Descriptors built from `parent` compute what it computes. */
static void table_inherit(const void *const *children, int64_t count, const void *parent)
{
    struct graph_info info;
    int known = graph_get(parent, &info);
    for (int64_t i = 0; i < count; i++) {
        if (known)
            graph_put(children[i], &info);
        else
            table_drop(children[i]);
    }
}

/*
 * Classify an operation graph from its ops (the application's descriptors);
 * its output is the convolution op's, as seen when the op was built.
 */
static void classify_ops(const void *const *ops, int64_t count, struct graph_info *info)
{
    int unreadable = count > KAT_OPS_MAX;
    info->class = GRAPH_NO_CONV;
    for (int64_t i = 0; i < count && i < KAT_OPS_MAX; i++) {
        for (int j = 0; j < 3; j++) {
            enum op_reading r = conv_from_op((kat_cudnnBackendDescriptor_t)ops[i],
                                             &conv_op_kinds[j], &info->conv);
            if (r == OP_CONV || r == OP_CONV_NO_SUMMARY) {
                struct graph_info op;
                info->class = r == OP_CONV ? GRAPH_CONV : GRAPH_CONV_NO_SUMMARY;
                /* the output is replaced after the whole plan ran: only when the
                   convolution is the plan's one op is that the plan's output (a fused
                   pointwise op after it has already read it; a second convolution
                   would not be replaced at all) */
                if (count == 1 && graph_get(ops[i], &op) && op.output_known) {
                    info->output_known = 1;
                    info->output_uid = op.output_uid;
                    info->output_bytes = op.output_bytes;
                    info->output = op.output;
                }
                return;
            }
            if (r == OP_UNREADABLE)
                unreadable = 1;
        }
    }
    if (unreadable)
        info->class = GRAPH_UNKNOWN;
}

/*
 * Read a plan's graph back through the getters (route 2 in the header).
 * OPERATIONGRAPH_OPS can only be read into descriptors of the ops' own type,
 * so each convolution kind is tried for the whole list.
 */
static void classify_plan_readback(kat_cudnnBackendDescriptor_t plan, struct graph_info *info)
{
    kat_fn_cudnnBackendCreateDescriptor *create = real_cudnnBackendCreateDescriptor();
    kat_fn_cudnnBackendGetAttribute *get = real_cudnnBackendGetAttribute();
    kat_cudnnBackendDescriptor_t config = NULL, engine = NULL, graph = NULL;
    int64_t count = 0;

    info->class = GRAPH_UNKNOWN;
    if (create == NULL || get == NULL ||
        get_descriptor(plan, KAT_CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG,
                       KAT_CUDNN_BACKEND_ENGINECFG_DESCRIPTOR, &config) != KAT_CUDNN_STATUS_SUCCESS ||
        get_descriptor(config, KAT_CUDNN_ATTR_ENGINECFG_ENGINE, KAT_CUDNN_BACKEND_ENGINE_DESCRIPTOR,
                       &engine) != KAT_CUDNN_STATUS_SUCCESS ||
        get_descriptor(engine, KAT_CUDNN_ATTR_ENGINE_OPERATION_GRAPH,
                       KAT_CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR, &graph) != KAT_CUDNN_STATUS_SUCCESS ||
        get(graph, KAT_CUDNN_ATTR_OPERATIONGRAPH_OPS, KAT_CUDNN_TYPE_BACKEND_DESCRIPTOR, 0, &count,
            NULL) != KAT_CUDNN_STATUS_SUCCESS ||
        count < 1 || count > KAT_READBACK_OPS_MAX)
        goto out;

    for (int j = 0; j < 3 && info->class == GRAPH_UNKNOWN; j++) {
        kat_cudnnBackendDescriptor_t ops[KAT_READBACK_OPS_MAX] = {0};
        int64_t made = 0, got = 0;
        while (made < count && create(conv_op_kinds[j].op_type, &ops[made]) ==
                                   KAT_CUDNN_STATUS_SUCCESS && ops[made] != NULL)
            made++;
        if (made == count &&
            get(graph, KAT_CUDNN_ATTR_OPERATIONGRAPH_OPS, KAT_CUDNN_TYPE_BACKEND_DESCRIPTOR,
                count, &got, ops) == KAT_CUDNN_STATUS_SUCCESS && got >= 1) {
            enum op_reading r = conv_from_op(ops[0], &conv_op_kinds[j], &info->conv);
            if (r == OP_CONV)
                info->class = GRAPH_CONV;
            else if (r == OP_CONV_NO_SUMMARY)
                info->class = GRAPH_CONV_NO_SUMMARY;
        }
        for (int64_t i = 0; i < made; i++)
            put_descriptor(ops[i]);
    }
out:
    put_descriptor(graph);
    put_descriptor(engine);
    put_descriptor(config);
}

/* A pack the wrappers did not see being built (cuDNN 9.19 answers neither attribute). */
static int pack_readback(kat_cudnnBackendDescriptor_t pack, struct pack_info *p)
{
    kat_fn_cudnnBackendGetAttribute *get = real_cudnnBackendGetAttribute();
    int64_t nuids = 0, nptrs = 0;
    *p = (struct pack_info){0};
    if (get == NULL ||
        get(pack, KAT_CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, KAT_CUDNN_TYPE_INT64, KAT_PACK_MAX,
            &nuids, p->uids) != KAT_CUDNN_STATUS_SUCCESS ||
        get(pack, KAT_CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, KAT_CUDNN_TYPE_VOID_PTR, KAT_PACK_MAX,
            &nptrs, (void *)p->ptrs) != KAT_CUDNN_STATUS_SUCCESS)
        return 0;
    p->nuids = nuids < 0 ? 0 : nuids > KAT_PACK_MAX ? KAT_PACK_MAX : (int32_t)nuids;
    p->nptrs = nptrs < 0 ? 0 : nptrs > KAT_PACK_MAX ? KAT_PACK_MAX : (int32_t)nptrs;
    return 1;
}

/* The output is the pack's pointer paired with the output tensor's unique id. */
static void plan_output(struct kat_vendor_call_rec *rec, const struct graph_info *info,
                        kat_cudnnBackendDescriptor_t pack)
{
    struct pack_info p;
    if (!info->output_known || pack == NULL ||
        (!table_get(pack, ENTRY_PACK, &p, sizeof p) && !pack_readback(pack, &p)))
        return;
    for (int32_t i = 0; i < p.nuids && i < p.nptrs; i++) {
        if (p.uids[i] == info->output_uid && p.ptrs[i] != NULL) {
            rec->output_address = (uint64_t)(uintptr_t)p.ptrs[i];
            rec->output_bytes = p.overridden ? 0 : info->output_bytes;
            return;
        }
    }
}

static void plan_summary(struct kat_vendor_call_rec *rec, kat_cudnnBackendDescriptor_t plan,
                         kat_cudnnBackendDescriptor_t pack)
{
    struct graph_info info = {0};
    rec->dtype_space = KAT_DTYPE_SPACE_CUDNN;
    if (plan == NULL)
        return;
    if (!graph_get(plan, &info)) {
        classify_plan_readback(plan, &info);
        graph_put(plan, &info);     /* also a failure: never read back twice */
    }
    switch (info.class) {
    case GRAPH_CONV:
        rec->work_class = KAT_WORK_CONV;
        rec->op.conv = info.conv;
        rec->summary_known = 1;
        break;
    case GRAPH_CONV_NO_SUMMARY:
        rec->work_class = KAT_WORK_CONV;
        break;
    case GRAPH_NO_CONV:
        rec->work_class = KAT_WORK_OTHER;
        break;
    default:
        rec->work_class = KAT_WORK_UNKNOWN;
        break;
    }
    plan_output(rec, &info, pack);
}

/* The application set a convolution op's output tensor: remember its id and extent. */
static void observe_op_output(const void *op, kat_cudnnBackendDescriptor_t tensor)
{
    struct graph_info info = {0};
    if (tensor_extent(tensor, &info.output_uid, &info.output_bytes, &info.output)) {
        info.output_known = 1;
        graph_put(op, &info);
    } else {
        table_drop(op);
    }
}

/* The application set one of a variant pack's arrays: keep a copy. */
static void observe_pack(const void *pack, int32_t name, int32_t type, int64_t count,
                         const void *elements)
{
    struct pack_info p;
    int32_t n = count > KAT_PACK_MAX ? KAT_PACK_MAX : (int32_t)count;
    if (count < 0 || (count > 0 && elements == NULL))
        return;
    if (!table_get(pack, ENTRY_PACK, &p, sizeof p))
        p = (struct pack_info){0};
    if (name == KAT_CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS && type == KAT_CUDNN_TYPE_INT64) {
        if (n > 0)
            memcpy(p.uids, elements, (size_t)n * sizeof p.uids[0]);
        p.nuids = n;
    } else if (name == KAT_CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS &&
               type == KAT_CUDNN_TYPE_VOID_PTR) {
        if (n > 0)
            memcpy(p.ptrs, elements, (size_t)n * sizeof p.ptrs[0]);
        p.nptrs = n;
    } else if (name == KAT_CUDNN_ATTR_VARIANT_PACK_OVERRIDE_UNIQUE_IDS) {
        p.overridden = count > 0;
    } else {
        return;
    }
    table_put(pack, ENTRY_PACK, &p, sizeof p);
}

/* What a successful cudnnBackendSetAttribute tells about the descriptor. */
static void observe_set(kat_cudnnBackendDescriptor_t descriptor, int32_t name, int32_t type,
                        int64_t count, const void *elements)
{
    const void *const *descriptors = elements;
    switch (name) {
    case KAT_CUDNN_ATTR_EXECUTION_PLAN_JSON_REPRESENTATION:
        table_drop(descriptor);     /* a deserialized plan: read back at execution */
        return;
    case KAT_CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS:
    case KAT_CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS:
    case KAT_CUDNN_ATTR_VARIANT_PACK_OVERRIDE_UNIQUE_IDS:
        observe_pack(descriptor, name, type, count, elements);
        return;
    default:
        break;
    }
    if (type != KAT_CUDNN_TYPE_BACKEND_DESCRIPTOR || elements == NULL || count < 1)
        return;
    switch (name) {
    case KAT_CUDNN_ATTR_OPERATIONGRAPH_OPS: {
        struct graph_info info = {0};
        classify_ops(descriptors, count, &info);
        graph_put(descriptor, &info);
        break;
    }
    case KAT_CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y:
    case KAT_CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DX:
    case KAT_CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DW:
        observe_op_output(descriptor, (kat_cudnnBackendDescriptor_t)descriptors[0]);
        break;
    case KAT_CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH:
    case KAT_CUDNN_ATTR_ENGINE_OPERATION_GRAPH:
    case KAT_CUDNN_ATTR_ENGINECFG_ENGINE:
    case KAT_CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG:
        table_inherit((const void *const *)&descriptor, 1, descriptors[0]);
        break;
    default:
        break;
    }
}

/* A backend plan's output for the causal probe: only convolutions are this
 * channel's (a plan of other work is neither counted nor replaced, as the
 * analyzer gives it another class); one whose output the wrappers did not see
 * built is counted and not replaceable. */
static void probe_backend(kat_cudnnHandle_t handle, kat_cudnnBackendDescriptor_t plan,
                          kat_cudnnBackendDescriptor_t pack, kat_cudnnStatus_t status, uint32_t depth)
{
    struct graph_info info;
    struct pack_info p;
    struct kat_probe_output o = {0};
    if (plan == NULL || !graph_get(plan, &info) || (info.class != GRAPH_CONV && info.class != GRAPH_CONV_NO_SUMMARY))
        return;
    if (info.output_known && info.output.ndims > 0 && pack != NULL &&
        (table_get(pack, ENTRY_PACK, &p, sizeof p) || pack_readback(pack, &p)) && !p.overridden)
        for (int32_t i = 0; i < p.nuids && i < p.nptrs; i++)
            if (p.uids[i] == info.output_uid && p.ptrs[i] != NULL) {
                probe_layout(&o, (void *)p.ptrs[i], info.output.type, info.output.ndims, info.output.dims,
                             info.output.strides);
                break;
            }
    probe_conv(handle, &o, status, depth);
}

/* ---- backend API: the wrappers ------------------------------------------------------ */

KAT_EXPORT KAT_PROTO_cudnnBackendExecute(cudnnBackendExecute)
KAT_CUDNN_BODY(cudnnBackendExecute, executionPlan,
    plan_summary(&rec_, executionPlan, variantPack),
    (handle, executionPlan, variantPack),
    probe_backend(handle, executionPlan, variantPack, status_, scope_.depth))

/* Bookkeeping only: these are not recorded as vendor calls. */

KAT_EXPORT KAT_PROTO_cudnnBackendSetAttribute(cudnnBackendSetAttribute)
{
    kat_fn_cudnnBackendSetAttribute *real = real_cudnnBackendSetAttribute();
    if (real == NULL)
        return KAT_CUDNN_STATUS_NOT_INITIALIZED;
    kat_cudnnStatus_t status =
        real(descriptor, attributeName, attributeType, elementCount, arrayOfElements);
    /* Only a few attributes matter; test them before asking whether we trace. */
    switch (status == KAT_CUDNN_STATUS_SUCCESS ? attributeName : -1) {
    case KAT_CUDNN_ATTR_EXECUTION_PLAN_JSON_REPRESENTATION:
    case KAT_CUDNN_ATTR_OPERATIONGRAPH_OPS:
    case KAT_CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH:
    case KAT_CUDNN_ATTR_ENGINE_OPERATION_GRAPH:
    case KAT_CUDNN_ATTR_ENGINECFG_ENGINE:
    case KAT_CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG:
    case KAT_CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y:
    case KAT_CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DX:
    case KAT_CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DW:
    case KAT_CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS:
    case KAT_CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS:
    case KAT_CUDNN_ATTR_VARIANT_PACK_OVERRIDE_UNIQUE_IDS:
        if (kat_tracing_enabled())
            observe_set(descriptor, attributeName, attributeType, elementCount, arrayOfElements);
        break;
    default:
        break;
    }
    return status;
}

KAT_EXPORT KAT_PROTO_cudnnBackendGetAttribute(cudnnBackendGetAttribute)
{
    kat_fn_cudnnBackendGetAttribute *real = real_cudnnBackendGetAttribute();
    if (real == NULL)
        return KAT_CUDNN_STATUS_NOT_INITIALIZED;
    kat_cudnnStatus_t status = real(descriptor, attributeName, attributeType,
                                    requestedElementCount, elementCount, arrayOfElements);
    /* The engine configs of a heuristics query compute what its graph computes. */
    if (status == KAT_CUDNN_STATUS_SUCCESS &&
        attributeName == KAT_CUDNN_ATTR_ENGINEHEUR_RESULTS &&
        attributeType == KAT_CUDNN_TYPE_BACKEND_DESCRIPTOR && arrayOfElements != NULL &&
        elementCount != NULL && requestedElementCount > 0 && kat_tracing_enabled()) {
        int64_t n = *elementCount < requestedElementCount ? *elementCount : requestedElementCount;
        if (n > 0)
            table_inherit((const void *const *)arrayOfElements, n, descriptor);
    }
    return status;
}

KAT_EXPORT KAT_PROTO_cudnnBackendCreateDescriptor(cudnnBackendCreateDescriptor)
{
    kat_fn_cudnnBackendCreateDescriptor *real = real_cudnnBackendCreateDescriptor();
    if (real == NULL)
        return KAT_CUDNN_STATUS_NOT_INITIALIZED;
    kat_cudnnStatus_t status = real(descriptorType, descriptor);
    if (status == KAT_CUDNN_STATUS_SUCCESS && descriptor != NULL)
        table_drop(*descriptor);
    return status;
}

KAT_EXPORT KAT_PROTO_cudnnBackendDestroyDescriptor(cudnnBackendDestroyDescriptor)
{
    kat_fn_cudnnBackendDestroyDescriptor *real = real_cudnnBackendDestroyDescriptor();
    if (real == NULL)
        return KAT_CUDNN_STATUS_NOT_INITIALIZED;
    table_drop(descriptor);
    return real(descriptor);
}
