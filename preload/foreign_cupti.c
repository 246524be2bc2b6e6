/*
 * foreign_cupti.c - noticing the program's own use of CUPTI.
 *
 * On CUDA 13 CUPTI takes one subscriber, and one set of activity buffer
 * callbacks.  When the program starts torch.profiler (libkineto calls CUPTI
 * through the dynamic linker), its calls land here first.  We forward every
 * call unchanged, so the program behaves as it would under any other
 * profiler, and record it: a second subscriber is refused by CUPTI, and a
 * program that registers its own buffer callbacks takes the activity records
 * away from us from that moment, which makes our evidence incomplete.
 */
#define _GNU_SOURCE
#include <cupti.h>
#include <dlfcn.h>

#include "preload_internal.h"

static void record_foreign(const char *function, int result, int64_t argument,
                           const void *caller)
{
    if (!kat_tracing_enabled())
        return;
    struct kat_foreign_cupti_rec rec = {
        .function_string = kat_intern(function),
        .caller_string = kat_object_string(caller),
        .result = result,
        .thread_id = kat_tid(),
        .argument = argument,
        .time_ns = kat_now_ns(),
    };
    kat_emit(KAT_REC_FOREIGN_CUPTI, &rec, sizeof(rec));
}

/* The program's libcupti: ours if we loaded one, else whatever it loaded. */
static void *real_cupti(const char *name)
{
    void *fn = kat_cupti_symbol(name);
    if (fn)
        return fn;
    void *handle = dlopen("libcupti.so.13", RTLD_LAZY | RTLD_NOLOAD);
    if (!handle)
        handle = dlopen("libcupti.so.12", RTLD_LAZY | RTLD_NOLOAD);
    return handle ? dlsym(handle, name) : NULL;
}

KAT_EXPORT CUptiResult cuptiSubscribe(CUpti_SubscriberHandle *subscriber,
                                      CUpti_CallbackFunc callback, void *userdata)
{
    CUptiResult (*real)(CUpti_SubscriberHandle *, CUpti_CallbackFunc, void *) =
        (CUptiResult(*)(CUpti_SubscriberHandle *, CUpti_CallbackFunc, void *))real_cupti("cuptiSubscribe");
    CUptiResult rc = real ? real(subscriber, callback, userdata) : CUPTI_ERROR_NOT_INITIALIZED;
    record_foreign("cuptiSubscribe", rc, 0, __builtin_return_address(0));
    if (kat_tracing_enabled())
        kat_health(KAT_HEALTH_FOREIGN_SUBSCRIBER, "cuptiSubscribe", rc);
    return rc;
}

KAT_EXPORT CUptiResult cuptiActivityRegisterCallbacks(CUpti_BuffersCallbackRequestFunc requested,
                                                      CUpti_BuffersCallbackCompleteFunc completed)
{
    CUptiResult (*real)(CUpti_BuffersCallbackRequestFunc, CUpti_BuffersCallbackCompleteFunc) =
        (CUptiResult(*)(CUpti_BuffersCallbackRequestFunc, CUpti_BuffersCallbackCompleteFunc))
            real_cupti("cuptiActivityRegisterCallbacks");
    /* Whatever we had buffered must reach our trace before the switch. */
    kat_cupti_flush("before a foreign cuptiActivityRegisterCallbacks");
    CUptiResult rc = real ? real(requested, completed) : CUPTI_ERROR_NOT_INITIALIZED;
    record_foreign("cuptiActivityRegisterCallbacks", rc, 0, __builtin_return_address(0));
    if (kat_tracing_enabled() && rc == CUPTI_SUCCESS && kat_cupti_active())
        kat_health(KAT_HEALTH_CALLBACK_OVERRIDDEN,
                   "the program registered its own activity buffers; later records are not ours", 1);
    return rc;
}

#define FORWARD_KIND(name)                                                                \
    KAT_EXPORT CUptiResult name(CUpti_ActivityKind kind)                                  \
    {                                                                                     \
        CUptiResult (*real)(CUpti_ActivityKind) =                                         \
            (CUptiResult(*)(CUpti_ActivityKind))real_cupti(#name);                        \
        CUptiResult rc = real ? real(kind) : CUPTI_ERROR_NOT_INITIALIZED;                 \
        record_foreign(#name, rc, kind, __builtin_return_address(0));                     \
        return rc;                                                                        \
    }

FORWARD_KIND(cuptiActivityEnable)
FORWARD_KIND(cuptiActivityDisable)

KAT_EXPORT CUptiResult cuptiFinalize(void)
{
    CUptiResult (*real)(void) = (CUptiResult(*)(void))real_cupti("cuptiFinalize");
    kat_cupti_flush("before a foreign cuptiFinalize");
    CUptiResult rc = real ? real() : CUPTI_ERROR_NOT_INITIALIZED;
    record_foreign("cuptiFinalize", rc, 0, __builtin_return_address(0));
    if (kat_tracing_enabled())
        kat_health(KAT_HEALTH_CALLBACK_OVERRIDDEN, "the program called cuptiFinalize", 1);
    return rc;
}
