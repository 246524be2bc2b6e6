/*
 * work_classes.c - what kind of work a kernel or a vendor call is
 * (docs/analysis.md, "Work").
 *
 * The policy is data: the tables below are the whole of what a name says.
 * A kernel's class comes from operator families: each family is a list of
 * tokens (functor, kernel and library names: MulFunctor, FillFunctor,
 * reduce_kernel, max_pool, nvjet, fprop) and the class they mean.  A token
 * matches a name only at word boundaries (below), never inside another word
 * ("cast" is not in "nocast"), and the first family, in table order, with a
 * token in the name wins, so the order of the families is part of the
 * policy.  A vendor call's class comes from the operator the preload library
 * recorded (struct kat_vendor_call_rec.work_class), then from the API's name.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <string.h>
#include <strings.h>

#include "analysis_internal.h"

struct word_class {
    const char *word;           /* contained in the name, any case */
    int cls;                    /* enum ka_class */
};

static int first_class(const struct word_class *rows, size_t n, const char *name, int none)
{
    for (size_t i = 0; i < n; i++)
        if (ka_icontains(name, rows[i].word))
            return rows[i].cls;
    return none;
}

/* ---- kernel names: operator families ---------------------------------------- */

/*
 * Word boundaries.  Kernel names come mangled (_ZN2at6native13reduce_kernelILi512E...),
 * demangled (at::native::reduce_kernel<512, ...>) or plain C (nvjet_sm90_tst_...,
 * reduction_prod_kernel), so a word starts at the start of the name, after
 * anything that is not a letter (a digit of a mangled length, '_', ':', '<', ' ')
 * or where a lower-case letter meets an upper-case one (cunn_SoftMaxForward,
 * curandStatePhilox); it ends at the end of the name, before anything that is
 * not a lower-case letter (a mangled template's 'I', '_', '<', a digit) or, for a
 * prefix token, anywhere (gemmk1_kernel, convolve_sgemm).
 */
static int starts_word(const char *name, size_t at)
{
    if (at == 0)
        return 1;
    unsigned char prev = (unsigned char)name[at - 1], cur = (unsigned char)name[at];
    return !isalpha(prev) || (islower(prev) && isupper(cur));
}

static int token_in(const char *name, const char *token, int prefix)
{
    size_t n = strlen(token), len = strlen(name);
    for (size_t at = 0; at + n <= len; at++) {
        if (strncasecmp(name + at, token, n) || !starts_word(name, at))
            continue;
        unsigned char next = (unsigned char)name[at + n];
        if (prefix || !next || !islower(next))
            return 1;
    }
    return 0;
}

struct family {
    const char *what;               /* the family, for people */
    int cls;                        /* enum ka_class */
    const char *const *tokens;      /* whole words (NULL-ended) */
    const char *const *prefixes;    /* words that may go on (NULL-ended) */
};

#define WORDS(...) ((const char *const[]){ __VA_ARGS__, NULL })

/* First family wins: RNG before everything (a normal_ fill is initialization), the
   specific library families before the generic ones, glue before the generic
   elementwise launchers (index_elementwise_kernel, vectorized_elementwise_kernel<FillFunctor>). */
static const struct family kernel_families[] = {
    { "random-number initialization (glue)", KA_CLASS_GLUE,
      WORDS("distribution", "philox", "random", "curand", "normal_kernel", "uniform_kernel", "bernoulli"), NULL },
    { "convolution (cuDNN xmma fprop/dgrad/wgrad, implicit GEMM, Winograd, im2col)", KA_CLASS_CONV,
      WORDS("fprop", "dgrad", "wgrad", "winograd", "implicit_gemm", "im2col", "col2im", "vol2col", "col2vol",
            "depthwise", "conv", "convolution"),
      WORDS("conv_", "conv1d", "conv2d", "conv3d", "convolv", "convolution") },
    { "attention (flash, fused MHA, SDPA)", KA_CLASS_ATTENTION,
      WORDS("fmha", "sdpa", "mha"), WORDS("flash", "attention", "attn") },
    { "matrix products (cuBLAS xmma/nvjet/gemv, CUTLASS, dot)", KA_CLASS_GEMM,
      WORDS("nvjet", "xmma", "cutlass", "splitk", "split_k", "dot_kernel", "gemvx", "bmm", "addmm", "triton_tem"),
      WORDS("gemm", "sgemm", "dgemm", "hgemm", "gemv", "sgemv", "matmul", "gemmk", "gemmSN") },
    { "normalization (batch, layer, group, instance, RMS)", KA_CLASS_NORMALIZATION,
      WORDS("batch_norm", "layer_norm", "group_norm", "instance_norm", "rms_norm", "rmsnorm", "BatchNorm",
            "LayerNorm", "GroupNorm", "RowwiseMoments", "bn_fw", "bn_bw", "bn_fw_tr", "bn_fw_inf", "ln_fwd",
            "ln_bwd", "welford_norm"),
      WORDS("batchnorm", "layernorm", "groupnorm") },
    { "softmax (softmax, log-softmax, cunn_SoftMax)", KA_CLASS_SOFTMAX,
      WORDS("softmax", "log_softmax", "SoftMax", "cunn_SoftMaxForward", "LogSoftMax"),
      WORDS("softmax", "cunn_SoftMax") },
    { "pooling (max, average, adaptive; cuDNN pooling)", KA_CLASS_POOLING,
      WORDS("max_pool", "avg_pool", "MaxPool", "AvgPool", "AvePool", "maxpool", "avgpool", "average_pool",
            "adaptive_max", "adaptive_avg", "pooling_fw", "pooling_bw", "pool2d", "pool3d", "pool1d"),
      WORDS("max_pool", "avg_pool", "maxpool", "avgpool", "pooling") },
    { "reductions and scans (reduce_kernel, jiterator reductions, cub, argmax, cumsum)", KA_CLASS_REDUCTION,
      WORDS("reduce_kernel", "reduction", "argmax", "argmin", "cumsum", "cumprod", "scan", "logsumexp",
            "triton_red", "triton_per", "DeviceReduceKernel", "DeviceReduceSingleTileKernel",
            "DeviceScanKernel", "DeviceSegmentedReduceKernel", "ReduceOp", "reduce"),
      WORDS("reduce", "reduction", "scan_") },
    { "elementwise math (framework functors)", KA_CLASS_ELEMENTWISE,
      WORDS("MulFunctor", "AddFunctor", "DivFunctor", "SubFunctor", "CUDAFunctor_add", "CUDAFunctorOnSelf_add",
            "CUDAFunctorOnOther_add", "AbsFunctor", "BinaryFunctor", "AUnaryFunctor", "BUnaryFunctor",
            "div_true_kernel", "div_trunc_kernel", "div_floor_kernel",
            "sigmoid_kernel", "tanh_kernel", "exp_kernel", "log_kernel", "sqrt_kernel", "rsqrt_kernel",
            "pow_tensor_scalar_kernel", "pow_tensor_tensor_kernel", "gelu_kernel", "silu_kernel", "relu",
            "threshold_kernel", "clamp", "where_kernel", "hardtanh", "leaky_relu", "elu_kernel", "mish_kernel",
            "triton_poi"),
      WORDS("launch_clamp", "clamp_") },
    { "glue: copies, fills, concatenation, indexing, layout, casts", KA_CLASS_GLUE,
      WORDS("FillFunctor", "fill", "fill_kernel", "copy", "copy_kernel", "direct_copy_kernel_cuda",
            "CatArrayBatchedCopy", "cat", "index_elementwise_kernel", "index", "indexSelectLargeIndex",
            "indexSelectSmallIndex", "index_select", "index_put", "gather", "scatter", "take", "masked_fill",
            "transpose", "permute", "nchwToNhwc", "nhwcToNchw", "nchwToNhwcKernel", "nhwcToNchwKernel", "cast",
            "contiguous", "memcpy", "zero", "zeros", "arange", "linspace", "tril", "triu", "flip", "roll",
            "repeat", "pad", "constant_pad", "reflection_pad", "replication_pad"),
      WORDS("CatArray", "copy_", "fill_", "index_", "transpose", "permute") },
    { "elementwise (the framework's generic launchers, any other functor)", KA_CLASS_ELEMENTWISE,
      WORDS("elementwise_kernel", "vectorized_elementwise_kernel", "unrolled_elementwise_kernel",
            "elementwise", "vectorized", "pointwise", "Functor"),
      WORDS("elementwise", "vectorized", "pointwise") },
};

int ka_class_of_kernel_name(const char *name)
{
    if (!name)
        return KA_CLASS_OTHER;
    for (size_t f = 0; f < sizeof kernel_families / sizeof kernel_families[0]; f++) {
        const struct family *fam = &kernel_families[f];
        for (const char *const *t = fam->tokens; t && *t; t++)
            if (token_in(name, *t, 0))
                return fam->cls;
        for (const char *const *t = fam->prefixes; t && *t; t++)
            if (token_in(name, *t, 1))
                return fam->cls;
    }
    return KA_CLASS_OTHER;
}

/* PyTorch's own kernels: at:: and c10:: code, mangled or not. */
static const struct {
    const char *text;
    int prefix;                 /* 1: the name starts with it, 0: contains it (case matters) */
} framework_kernel_names[] = {
    { "_ZN2at", 1 }, { "_ZN3c10", 1 }, { "void at::", 1 },
    { "at::native::", 0 }, { "at::cuda::", 0 }, { "_ZN2at6native", 0 }, { "_ZN2at4cuda", 0 },
};

int ka_is_framework_kernel_name(const char *name)
{
    for (size_t i = 0; i < sizeof framework_kernel_names / sizeof framework_kernel_names[0]; i++) {
        const char *text = framework_kernel_names[i].text;
        if (framework_kernel_names[i].prefix ? !strncmp(name, text, strlen(text)) : strstr(name, text) != NULL)
            return 1;
    }
    return 0;
}

/* Names that say lower than fp32 precision (tensor-core half, bf16, tf32, fp8), any case. */
static const char *const low_precision_words[] = {
    "f16", "fp16", "bf16", "half", "hmma", "tf32", "e4m3", "e5m2", "h1688", "s1688", "h16816", "_h_", "bfloat",
};

int ka_is_low_precision_name(const char *name)
{
    for (size_t i = 0; i < sizeof low_precision_words / sizeof low_precision_words[0]; i++)
        if (ka_icontains(name, low_precision_words[i]))
            return 1;
    return 0;
}

/* A vendor call's class from its operator, as the preload library summarized it. */
static const struct {
    uint32_t work_class;        /* KAT_WORK_* */
    int cls;
} vendor_operator_classes[] = {
    { KAT_WORK_GEMM, KA_CLASS_GEMM }, { KAT_WORK_GEMV, KA_CLASS_GEMM }, { KAT_WORK_CONV, KA_CLASS_CONV },
};

/* ... and, for an operator it did not summarize, from the API's name (first row wins). */
static const struct word_class vendor_api_classes[] = {
    { "matmul", KA_CLASS_GEMM }, { "gemm", KA_CLASS_GEMM }, { "convolution", KA_CLASS_CONV },
};

/* FLOPs of a vendor call from its argument summary; 0 when not estimable. */
double ka_vendor_call_work(const struct kat_vendor_call_rec *r, const char *api, int *cls)
{
    *cls = KA_CLASS_OTHER;
    for (size_t i = 0; i < sizeof vendor_operator_classes / sizeof vendor_operator_classes[0]; i++)
        if (r->work_class == vendor_operator_classes[i].work_class)
            *cls = vendor_operator_classes[i].cls;
    double work = 0;
    if (!r->summary_known) {
        work = 0;
    } else if (*cls == KA_CLASS_GEMM) {
        const struct kat_gemm_summary *g = &r->op.gemm;
        double batch = g->batch > 0 ? (double)g->batch : 1.0;
        if (g->m > 0 && g->n > 0) {
            double k = r->work_class == KAT_WORK_GEMV ? 1.0 : (double)(g->k > 0 ? g->k : 0);
            work = 2.0 * (double)g->m * (double)g->n * k * batch;
        }
    } else if (*cls == KA_CLASS_CONV) {
        const struct kat_conv_summary *v = &r->op.conv;
        int dims = v->spatial_dims > 0 && v->spatial_dims <= 3 ? v->spatial_dims : 0;
        if (dims && v->n > 0 && v->c > 0 && v->k > 0) {
            double out = 1, filt = 1;
            for (int i = 0; i < dims; i++) {
                out *= (double)(v->out_spatial[i] > 0 ? v->out_spatial[i] : 0);
                filt *= (double)(v->filter_spatial[i] > 0 ? v->filter_spatial[i] : 0);
            }
            double groups = v->groups > 0 ? v->groups : 1;
            work = 2.0 * (double)v->n * (double)v->k * ((double)v->c / groups) * out * filt;
        }
    }
    /* An operator without a summary class is still known by its name; its work is not. */
    if (*cls == KA_CLASS_OTHER && api)
        *cls = first_class(vendor_api_classes, sizeof vendor_api_classes / sizeof vendor_api_classes[0], api,
                           KA_CLASS_OTHER);
    return work;
}
