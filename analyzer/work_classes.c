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
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "analysis_internal.h"

struct word_class {
    const char *word;           /* contained in the name, any case */
    int cls;                    /* enum ka_class */
};

/* needle anywhere in hay, in any case (the tables' words). */
static int contains_any_case(const char *hay, const char *needle)
{
    return strcasestr(hay, needle) != NULL;
}

static int first_class(const struct word_class *rows, size_t n, const char *name, int none)
{
    for (size_t i = 0; i < n; i++)
        if (contains_any_case(name, rows[i].word))
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
    int generic;                    /* a launcher any operator uses: the name says little (ka_refine_class) */
};

#define WORDS(...) ((const char *const[]){ __VA_ARGS__, NULL })

/* First family wins: RNG before everything (a normal_ fill is initialization), the
   specific library families before the generic ones, glue before the generic
   elementwise launchers (index_elementwise_kernel, vectorized_elementwise_kernel<FillFunctor>). */
static const struct family kernel_families[] = {
    { "random-number initialization (glue)", KA_CLASS_GLUE,
      WORDS("distribution", "philox", "random", "curand", "normal_kernel", "uniform_kernel", "bernoulli"), NULL, 0 },
    { "convolution (cuDNN xmma fprop/dgrad/wgrad, implicit GEMM, Winograd, im2col)", KA_CLASS_CONV,
      WORDS("fprop", "dgrad", "wgrad", "winograd", "implicit_gemm", "im2col", "col2im", "vol2col", "col2vol",
            "depthwise", "conv", "convolution"),
      WORDS("conv_", "conv1d", "conv2d", "conv3d", "convolv", "convolution"), 0 },
    { "attention (flash, fused MHA, SDPA)", KA_CLASS_ATTENTION,
      WORDS("fmha", "sdpa", "mha"), WORDS("flash", "attention", "attn"), 0 },
    { "matrix products (cuBLAS xmma/nvjet/gemv, CUTLASS, dot)", KA_CLASS_GEMM,
      WORDS("nvjet", "xmma", "cutlass", "splitk", "split_k", "dot_kernel", "gemvx", "bmm", "addmm", "triton_tem"),
      WORDS("gemm", "sgemm", "dgemm", "hgemm", "gemv", "sgemv", "matmul", "gemmk", "gemmSN"), 0 },
    { "normalization (batch, layer, group, instance, RMS)", KA_CLASS_NORMALIZATION,
      WORDS("batch_norm", "layer_norm", "group_norm", "instance_norm", "rms_norm", "rmsnorm", "BatchNorm",
            "LayerNorm", "GroupNorm", "RowwiseMoments", "bn_fw", "bn_bw", "bn_fw_tr", "bn_fw_inf", "ln_fwd",
            "ln_bwd", "welford_norm"),
      WORDS("batchnorm", "layernorm", "groupnorm"), 0 },
    { "softmax (softmax, log-softmax, cunn_SoftMax)", KA_CLASS_SOFTMAX,
      WORDS("softmax", "log_softmax", "SoftMax", "cunn_SoftMaxForward", "LogSoftMax"),
      WORDS("softmax", "cunn_SoftMax"), 0 },
    { "pooling (max, average, adaptive; cuDNN pooling)", KA_CLASS_POOLING,
      WORDS("max_pool", "avg_pool", "MaxPool", "AvgPool", "AvePool", "maxpool", "avgpool", "average_pool",
            "adaptive_max", "adaptive_avg", "pooling_fw", "pooling_bw", "pool2d", "pool3d", "pool1d"),
      WORDS("max_pool", "avg_pool", "maxpool", "avgpool", "pooling"), 0 },
    { "reductions and scans (reduce_kernel, jiterator reductions, cub, argmax, cumsum)", KA_CLASS_REDUCTION,
      WORDS("reduce_kernel", "reduction", "argmax", "argmin", "cumsum", "cumprod", "scan", "logsumexp",
            "triton_red", "triton_per", "DeviceReduceKernel", "DeviceReduceSingleTileKernel",
            "DeviceScanKernel", "DeviceSegmentedReduceKernel", "ReduceOp", "reduce"),
      WORDS("reduce", "reduction", "scan_"), 0 },
    { "elementwise math (framework functors)", KA_CLASS_ELEMENTWISE,
      WORDS("MulFunctor", "AddFunctor", "DivFunctor", "SubFunctor", "CUDAFunctor_add", "CUDAFunctorOnSelf_add",
            "CUDAFunctorOnOther_add", "AbsFunctor", "BinaryFunctor", "AUnaryFunctor", "BUnaryFunctor",
            "div_true_kernel", "div_trunc_kernel", "div_floor_kernel",
            "sigmoid_kernel", "tanh_kernel", "exp_kernel", "log_kernel", "sqrt_kernel", "rsqrt_kernel",
            "pow_tensor_scalar_kernel", "pow_tensor_tensor_kernel", "gelu_kernel", "silu_kernel", "relu",
            "threshold_kernel", "clamp", "where_kernel", "hardtanh", "leaky_relu", "elu_kernel", "mish_kernel",
            "triton_poi"),
      WORDS("launch_clamp", "clamp_"), 0 },
    { "glue: copies, fills, concatenation, indexing, layout, casts", KA_CLASS_GLUE,
      WORDS("FillFunctor", "fill", "fill_kernel", "copy", "copy_kernel", "direct_copy_kernel_cuda",
            "CatArrayBatchedCopy", "cat", "index_elementwise_kernel", "index", "indexSelectLargeIndex",
            "indexSelectSmallIndex", "index_select", "index_put", "gather", "scatter", "take", "masked_fill",
            "transpose", "permute", "nchwToNhwc", "nhwcToNchw", "nchwToNhwcKernel", "nhwcToNchwKernel", "cast",
            "contiguous", "memcpy", "zero", "zeros", "arange", "linspace", "tril", "triu", "flip", "roll",
            "repeat", "pad", "constant_pad", "reflection_pad", "replication_pad"),
      WORDS("CatArray", "copy_", "fill_", "index_", "transpose", "permute"), 0 },
    { "elementwise (the framework's generic launchers, any other functor)", KA_CLASS_ELEMENTWISE,
      WORDS("elementwise_kernel", "vectorized_elementwise_kernel", "unrolled_elementwise_kernel",
            "elementwise", "vectorized", "pointwise", "Functor"),
      WORDS("elementwise", "vectorized", "pointwise"), 1 },
};

int ka_kernel_name_class(const char *name, int *strength)
{
    *strength = KA_NAME_UNKNOWN;
    if (!name)
        return KA_CLASS_OTHER;
    for (size_t f = 0; f < sizeof kernel_families / sizeof kernel_families[0]; f++) {
        const struct family *fam = &kernel_families[f];
        int hit = 0;
        for (const char *const *t = fam->tokens; !hit && t && *t; t++)
            hit = token_in(name, *t, 0);
        for (const char *const *t = fam->prefixes; !hit && t && *t; t++)
            hit = token_in(name, *t, 1);
        if (hit) {
            *strength = fam->generic ? KA_NAME_GENERIC : KA_NAME_SPECIFIC;
            return fam->cls;
        }
    }
    return KA_CLASS_OTHER;
}

int ka_class_of_kernel_name(const char *name)
{
    int strength;
    return ka_kernel_name_class(name, &strength);
}

/* ---- ATen operators: what the framework ran ---------------------------------- */

/*
 * The operator a framework kernel was launched by is better evidence of its
 * work than its name (PyTorch's NVTX mode names it: "aten::topk, seq = 3,
 * op_id = 7, sizes = [[4096, 8192], [], [], [], []]"; docs/analysis.md,
 * "Operators").  Operators are matched by their name without "aten::", an
 * overload (".Tensor") or an in-place '_' (add_ is add); exact names first
 * in every family, then prefixes, so "max" is a reduction and "max_pool3d"
 * pooling.
 */
struct operator_family {
    int cls;                        /* enum ka_class */
    const char *const *names;       /* exact operator names (NULL-ended) */
    const char *const *prefixes;    /* operator names starting so (NULL-ended) */
};

static const struct operator_family operator_families[] = {
    { KA_CLASS_GEMM,
      WORDS("mm", "bmm", "addmm", "addbmm", "baddbmm", "matmul", "linear", "addmv", "mv", "dot", "vdot", "einsum",
            "bilinear", "tensordot", "_addmm_activation", "_scaled_mm", "_int_mm", "chain_matmul", "linalg_matmul",
            "inner", "outer", "ger", "addr", "_mm_plus_mm"),
      NULL },
    { KA_CLASS_CONV,
      WORDS("convolution", "_convolution", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
            "conv_transpose3d", "convolution_overrideable", "_conv_depthwise2d", "thnn_conv2d", "conv_tbc"),
      WORDS("cudnn_convolution", "slow_conv", "_slow_conv", "miopen_convolution", "mkldnn_convolution",
            "conv_depthwise") },
    { KA_CLASS_ATTENTION,
      WORDS("scaled_dot_product_attention", "_native_multi_head_attention"),
      WORDS("_scaled_dot_product_", "_fused_sdp", "_flash_attention", "_efficient_attention", "_cudnn_attention") },
    { KA_CLASS_NORMALIZATION,
      WORDS("batch_norm", "layer_norm", "group_norm", "instance_norm", "rms_norm", "_fused_rms_norm",
            "local_response_norm", "native_layer_norm", "native_group_norm"),
      WORDS("native_batch_norm", "_batch_norm", "cudnn_batch_norm", "miopen_batch_norm", "_native_batch_norm") },
    { KA_CLASS_SOFTMAX,
      WORDS("softmax", "_softmax", "log_softmax", "_log_softmax", "_safe_softmax", "_masked_softmax"), NULL },
    { KA_CLASS_POOLING, NULL,
      WORDS("max_pool", "avg_pool", "adaptive_max_pool", "adaptive_avg_pool", "_adaptive_avg_pool",
            "fractional_max_pool", "lp_pool", "max_unpool", "_max_pool", "mkldnn_max_pool", "quantized_max_pool") },
    { KA_CLASS_REDUCTION,   /* reductions, scans and selections */
      WORDS("sum", "mean", "prod", "amax", "amin", "max", "min", "aminmax", "argmax", "argmin", "cumsum", "cumprod",
            "cummax", "cummin", "logcumsumexp", "logsumexp", "norm", "linalg_vector_norm", "linalg_norm",
            "frobenius_norm", "var", "std", "var_mean", "std_mean", "topk", "sort", "argsort", "msort", "kthvalue",
            "median", "nanmedian", "mode", "all", "any", "count_nonzero", "nansum", "nanmean", "trace", "dist",
            "_cdist_forward", "cdist", "histc", "bincount", "nll_loss", "nll_loss_forward", "nll_loss2d_forward",
            "mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss", "binary_cross_entropy", "kl_div",
            "cross_entropy_loss", "_unique2", "unique_dim"),
      NULL },
    { KA_CLASS_ELEMENTWISE,
      WORDS("add", "sub", "rsub", "mul", "div", "true_divide", "floor_divide", "remainder", "fmod", "pow", "exp",
            "exp2", "expm1", "log", "log2", "log10", "log1p", "sqrt", "rsqrt", "sigmoid", "tanh", "relu", "relu6",
            "gelu", "silu", "mish", "hardtanh", "hardswish", "hardsigmoid", "leaky_relu", "elu", "selu", "celu",
            "softplus", "softsign", "threshold", "clamp", "clamp_min", "clamp_max", "clip", "abs", "neg",
            "reciprocal", "sign", "sgn", "sin", "cos", "tan", "asin", "acos", "atan", "atan2", "sinh", "cosh",
            "erf", "erfc", "erfinv", "where", "maximum", "minimum", "fmax", "fmin", "addcmul", "addcdiv", "lerp",
            "square", "floor", "ceil", "round", "trunc", "frac", "eq", "ne", "lt", "le", "gt", "ge", "isnan",
            "isinf", "nan_to_num", "hypot", "logit", "xlogy", "glu", "prelu", "_prelu_kernel", "dropout",
            "native_dropout", "sigmoid_backward", "tanh_backward", "threshold_backward"),
      WORDS("_foreach_", "bitwise_", "logical_", "special_") },
    { KA_CLASS_GLUE,
      WORDS("copy", "_copy_from", "_copy_from_and_resize", "_to_copy", "to", "clone", "contiguous", "fill", "zero",
            "zeros", "zeros_like", "ones", "ones_like", "full", "full_like", "empty", "empty_like", "empty_strided",
            "new_empty", "new_empty_strided", "new_zeros", "new_ones", "new_full", "cat", "stack", "hstack",
            "vstack", "concat", "concatenate", "index", "index_select", "index_put", "_index_put_impl", "gather",
            "scatter", "scatter_add", "scatter_reduce", "take", "masked_fill", "masked_scatter", "masked_select",
            "nonzero", "view", "reshape", "_reshape_alias", "expand", "expand_as", "permute", "transpose", "t",
            "squeeze", "unsqueeze", "flatten", "unflatten", "slice", "select", "narrow", "split",
            "split_with_sizes", "chunk", "unbind", "as_strided", "alias", "detach", "pad", "constant_pad_nd",
            "flip", "roll", "repeat", "repeat_interleave", "tile", "tril", "triu", "arange", "linspace",
            "lift_fresh", "_unsafe_view", "resize", "set", "item", "_local_scalar_dense", "embedding", "one_hot",
            "normal", "uniform", "bernoulli", "random", "rand", "randn", "randint", "rand_like", "randn_like",
            "record_stream", "_has_compatible_shallow_copy_type", "result_type"),
      WORDS("reflection_pad", "replication_pad", "_unsafe_", "upsample_nearest") },
};

void ka_operator_family_each(void (*fn)(void *arg, int cls, const char *name, int prefix), void *arg)
{
    for (size_t f = 0; f < sizeof operator_families / sizeof operator_families[0]; f++) {
        for (const char *const *w = operator_families[f].names; w && *w; w++)
            fn(arg, operator_families[f].cls, *w, 0);
        for (const char *const *w = operator_families[f].prefixes; w && *w; w++)
            fn(arg, operator_families[f].cls, *w, 1);
    }
}

/* The operator name of an NVTX operator range's message, without "aten::",
 * overload or in-place '_': its length, 0 when the message is no operator's. */
static size_t operator_base(const char *message, const char **base)
{
    static const char aten[] = "aten::";
    if (!message || strncmp(message, aten, sizeof aten - 1))
        return 0;
    const char *s = message + sizeof aten - 1;
    size_t n = strcspn(s, ",. ");
    if (n > 1 && s[n - 1] == '_' && s[n - 2] != '_')
        n--;            /* in place: add_ -> add, _index_put_impl_ -> _index_put_impl */
    *base = s;
    return n;
}

int ka_class_of_operator(const char *message)
{
    const char *base;
    size_t n = operator_base(message, &base);
    if (!n)
        return -1;
    for (size_t f = 0; f < sizeof operator_families / sizeof operator_families[0]; f++)
        for (const char *const *w = operator_families[f].names; w && *w; w++)
            if (strlen(*w) == n && !strncmp(base, *w, n))
                return operator_families[f].cls;
    for (size_t f = 0; f < sizeof operator_families / sizeof operator_families[0]; f++)
        for (const char *const *w = operator_families[f].prefixes; w && *w; w++)
            if (strlen(*w) <= n && !strncmp(base, *w, strlen(*w)))
                return operator_families[f].cls;
    return -1;
}

void ka_operator_label(const char *message, char *buf, size_t n)
{
    /* "aten::topk, seq = 3, op_id = 7, sizes = [[...]], input_op_ids = [...]" -> "aten::topk, sizes = [[...]]" */
    size_t name = strcspn(message, ",");
    const char *sizes = strstr(message, "sizes = [");
    size_t len = 0;
    if (sizes) {
        int depth = 0;
        for (const char *c = sizes + strlen("sizes = "); *c; c++) {
            depth += *c == '[' ? 1 : *c == ']' ? -1 : 0;
            if (depth == 0) {
                len = (size_t)(c + 1 - sizes);
                break;
            }
        }
    }
    snprintf(buf, n, "%.*s%s%.*s", (int)name, message, len ? ", " : "", (int)len, len ? sizes : "");
}

int ka_is_operator_message(const char *message)
{
    const char *base;
    return operator_base(message, &base) != 0;
}

/*
 * The class a framework kernel counts in, from its name and the operator that
 * launched it (op_cls, -1: none known).  The candidate can write NVTX ranges
 * but not the names CUPTI reports, so an operator never overrides a name of
 * a specific compute family, and never makes a kernel glue: it names the
 * work of a kernel whose name says nothing (other), only that it is one of
 * the generic launchers, or glue (gatherTopK is topk's).
 */
int ka_refine_class(int name_cls, int name_strength, int op_cls)
{
    if (op_cls < 0 || op_cls == KA_CLASS_GLUE || op_cls == name_cls)
        return name_cls;
    if (name_strength == KA_NAME_SPECIFIC && name_cls != KA_CLASS_GLUE)
        return name_cls;
    return op_cls;
}

/*
 * The shapes of an operator range's message ("sizes = [[64, 512], [512]]"),
 * at most KA_OP_TENSORS tensors of KA_OP_DIMS dimensions; a scalar argument is
 * [].  Returns the number of tensors, -1 when there are no sizes.
 */
#define KA_OP_TENSORS 8
#define KA_OP_DIMS 8
struct op_shape {
    int dims;
    double size[KA_OP_DIMS];
};

static int operator_shapes(const char *message, struct op_shape *out)
{
    const char *s = strstr(message, "sizes = [");
    if (!s)
        return -1;
    s += strlen("sizes = [");
    int n = 0;
    while (*s && *s != ']') {
        while (*s == ' ' || *s == ',')
            s++;
        if (*s != '[')
            break;
        s++;
        struct op_shape sh = { 0 };
        while (*s && *s != ']') {
            while (*s == ' ' || *s == ',')
                s++;
            if (*s == '[') {            /* a list of tensors: not one shape */
                sh.dims = -1;
                const char *close = strchr(s, ']');
                s = close ? close + 1 : s + strlen(s);
                continue;
            }
            char *end;
            double v = strtod(s, &end);
            if (end == s)
                break;
            if (sh.dims >= 0 && sh.dims < KA_OP_DIMS)
                sh.size[sh.dims++] = v;
            else
                sh.dims = -1;           /* more dimensions than kept: not used */
            s = end;
        }
        if (*s == ']')
            s++;
        if (n < KA_OP_TENSORS)
            out[n++] = sh;
    }
    return n;
}

static double numel(const struct op_shape *sh)
{
    if (sh->dims <= 0)
        return 0;
    double e = 1;
    for (int i = 0; i < sh->dims; i++)
        e *= sh->size[i] > 0 ? sh->size[i] : 0;
    return e;
}

double ka_operator_work(const char *message, int cls, const char **unit)
{
    struct op_shape sh[KA_OP_TENSORS];
    int n = message ? operator_shapes(message, sh) : -1;
    *unit = cls == KA_CLASS_GEMM ? "flop" : "element";
    if (n <= 0)
        return 0;
    if (cls == KA_CLASS_GEMM) {
        /* 2 * numel(a) * N for a = [..., M, K] times b = [..., K, N] (linear: b = [N, K]);
           addmm, addmv, baddbmm, addbmm: the operands follow the added tensor */
        const char *base = "";
        size_t len = operator_base(message, &base);
#define IS(word) (len == sizeof word - 1 && !strncmp(base, word, len))
        int first = (len > 3 && !strncmp(base, "add", 3)) || IS("baddbmm") || IS("_addmm_activation") ? 1 : 0;
        if (first + 1 >= n || sh[first].dims < 1 || sh[first + 1].dims < 1)
            return 0;
        const struct op_shape *a = &sh[first], *b = &sh[first + 1];
        double flops;
        if (IS("outer") || IS("ger") || IS("addr"))
            flops = numel(a) * numel(b);        /* one multiply per element of the n x m result */
        else {
            double cols = b->dims == 1 ? 1 : IS("linear") ? b->size[0] : b->size[b->dims - 1];
            flops = 2.0 * numel(a) * (cols > 0 ? cols : 0);
        }
#undef IS
        return isfinite(flops) ? flops : 0;
    }
    if (cls == KA_CLASS_CONV || cls == KA_CLASS_ATTENTION)
        return 0;       /* needs strides, padding, heads: not in the sizes */
    double most = 0;
    for (int i = 0; i < n; i++)
        if (numel(&sh[i]) > most)
            most = numel(&sh[i]);
    return isfinite(most) ? most : 0;
}

/* PyTorch's own kernels: at:: and c10:: code, mangled or not. */
static const struct {
    const char *text;
    int prefix;                 /* 1: the name starts with it, 0: contains it (case matters) */
} framework_kernel_names[] = {
    { "_ZN2at", 1 }, { "_ZN3c10", 1 }, { "void at::", 1 },
    { "at::native::", 0 }, { "at::cuda::", 0 }, { "_ZN2at6native", 0 }, { "_ZN2at4cuda", 0 },
    /* PyTorch's own copy of CUB and Thrust lives in namespace at_cuda_detail (sort, unique, scan by key) */
    { "_ZN14at_cuda_detail", 1 }, { "at_cuda_detail::", 0 },
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
        if (contains_any_case(name, low_precision_words[i]))
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
