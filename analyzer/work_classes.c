/*
 * work_classes.c - what kind of work a kernel or a vendor call is
 * (docs/analysis.md, "Work classes").
 *
 * The policy is data: the tables below are the whole of what a name says.
 * A kernel's class comes from the first row whose word its name contains
 * (case-insensitive), so the order of the rows is part of the policy; a
 * vendor call's class comes from the operator the preload library recorded
 * (struct kat_vendor_call_rec.work_class), then from the API's name.
 */
#define _GNU_SOURCE
#include <string.h>

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

/* The work class a kernel name suggests (framework and vendor kernels); first row wins. */
static const struct word_class kernel_name_classes[] = {
    /* initialization (RNG fills) is glue, whatever else the name says */
    { "distribution", KA_CLASS_GLUE }, { "philox", KA_CLASS_GLUE }, { "random", KA_CLASS_GLUE },
    { "conv", KA_CLASS_CONV }, { "fprop", KA_CLASS_CONV }, { "dgrad", KA_CLASS_CONV },
    { "wgrad", KA_CLASS_CONV }, { "implicit_gemm", KA_CLASS_CONV }, { "winograd", KA_CLASS_CONV },
    { "flash", KA_CLASS_ATTENTION }, { "fmha", KA_CLASS_ATTENTION }, { "attention", KA_CLASS_ATTENTION },
    { "sdpa", KA_CLASS_ATTENTION },
    { "gemm", KA_CLASS_GEMM }, { "gemv", KA_CLASS_GEMM }, { "matmul", KA_CLASS_GEMM },
    { "nvjet", KA_CLASS_GEMM }, { "xmma", KA_CLASS_GEMM }, { "cutlass", KA_CLASS_GEMM },
    { "splitk", KA_CLASS_GEMM }, { "dot_kernel", KA_CLASS_GEMM },
    { "reduce", KA_CLASS_REDUCTION }, { "softmax", KA_CLASS_REDUCTION }, { "norm", KA_CLASS_REDUCTION },
    { "argmax", KA_CLASS_REDUCTION }, { "argmin", KA_CLASS_REDUCTION }, { "scan", KA_CLASS_REDUCTION },
    { "cumsum", KA_CLASS_REDUCTION },
    { "copy", KA_CLASS_GLUE }, { "fill", KA_CLASS_GLUE }, { "catarray", KA_CLASS_GLUE },
    { "index", KA_CLASS_GLUE }, { "transpose", KA_CLASS_GLUE }, { "permute", KA_CLASS_GLUE },
    { "gather", KA_CLASS_GLUE }, { "scatter", KA_CLASS_GLUE }, { "cast", KA_CLASS_GLUE },
    { "nchwtonhwc", KA_CLASS_GLUE }, { "nhwctonchw", KA_CLASS_GLUE },
    { "elementwise", KA_CLASS_ELEMENTWISE }, { "vectorized", KA_CLASS_ELEMENTWISE },
    { "pointwise", KA_CLASS_ELEMENTWISE }, { "functor", KA_CLASS_ELEMENTWISE },
};

int ka_class_of_kernel_name(const char *name)
{
    return first_class(kernel_name_classes, sizeof kernel_name_classes / sizeof kernel_name_classes[0], name,
                       KA_CLASS_OTHER);
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
