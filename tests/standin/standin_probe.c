/*
 * standin_probe.c - libstandin_probe.so, a minimal CUPTI client injected
 * with CUDA_INJECTION64_PATH, used only to check the stand-ins themselves
 * (test_run_standin.c): the tests of `kaudit run` are only as good as the
 * stand-in CUPTI's fidelity to the rules the real one follows.
 *
 * PROBE_OUT names the output file; PROBE_MODE is
 *   full         callbacks + RUNTIME, DRIVER, CONCURRENT_KERNEL and
 *                EXTERNAL_CORRELATION records, an external id (77) pushed for
 *                the whole run on the thread that initialised CUDA
 *   kernel-only  CONCURRENT_KERNEL and EXTERNAL_CORRELATION only (the real
 *                CUPTI then makes no EXTERNAL_CORRELATION records)
 *   no-buffer    the buffer request callback declines every buffer
 * Output lines:
 *   SUB rc / SUB2 rc          cuptiSubscribe, and a second subscription
 *   CB domain cbid site corr name
 *   API kind cbid corr name   (name from cuptiGetCallbackName)
 *   EXT kind id corr
 *   KERNEL corr stream name
 *   DROPPED n
 */
#define _GNU_SOURCE
#include <cupti.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static FILE *out;
static pthread_mutex_t out_lock = PTHREAD_MUTEX_INITIALIZER;
static int decline_buffers;

#define SAY(...)                                  \
    do {                                          \
        pthread_mutex_lock(&out_lock);            \
        fprintf(out, __VA_ARGS__);                \
        pthread_mutex_unlock(&out_lock);          \
    } while (0)

static void CUPTIAPI requested(uint8_t **buffer, size_t *size, size_t *max)
{
    *max = 0;
    if (decline_buffers) {
        *buffer = NULL;
        *size = 0;
        return;
    }
    *size = 1 << 14;
    *buffer = aligned_alloc(8, *size);
}

static void CUPTIAPI completed(CUcontext ctx, uint32_t stream, uint8_t *buffer, size_t size, size_t valid)
{
    (void)ctx;
    (void)stream;
    (void)size;
    CUpti_Activity *r = NULL;
    while (cuptiActivityGetNextRecord(buffer, valid, &r) == CUPTI_SUCCESS) {
        if (r->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) {
            const CUpti_ActivityKernel10 *k = (const void *)r;
            SAY("KERNEL %u %u %s\n", k->correlationId, k->streamId, k->name);
        } else if (r->kind == CUPTI_ACTIVITY_KIND_RUNTIME || r->kind == CUPTI_ACTIVITY_KIND_DRIVER) {
            const CUpti_ActivityAPI *a = (const void *)r;
            const char *name = NULL;
            cuptiGetCallbackName(r->kind == CUPTI_ACTIVITY_KIND_RUNTIME ? CUPTI_CB_DOMAIN_RUNTIME_API
                                                                         : CUPTI_CB_DOMAIN_DRIVER_API,
                                 a->cbid, &name);
            SAY("API %d %u %u %s\n", (int)r->kind, a->cbid, a->correlationId, name ? name : "?");
        } else if (r->kind == CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION) {
            const CUpti_ActivityExternalCorrelation *x = (const void *)r;
            SAY("EXT %d %llu %u\n", (int)x->externalKind, (unsigned long long)x->externalId, x->correlationId);
        }
    }
    free(buffer);
}

static void CUPTIAPI callback(void *ud, CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void *data)
{
    (void)ud;
    if (domain != CUPTI_CB_DOMAIN_RUNTIME_API && domain != CUPTI_CB_DOMAIN_DRIVER_API)
        return;
    const CUpti_CallbackData *d = data;
    SAY("CB %d %u %d %u %s\n", (int)domain, cbid, (int)d->callbackSite, d->correlationId, d->functionName);
}

static void finish(void)
{
    cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    size_t dropped = 0;
    cuptiActivityGetNumDroppedRecords(NULL, 0, &dropped);
    SAY("DROPPED %zu\n", dropped);
    fclose(out);
}

int InitializeInjection(void)
{
    const char *path = getenv("PROBE_OUT"), *mode = getenv("PROBE_MODE");
    out = fopen(path ? path : "/dev/null", "w");
    if (!out)
        return 0;
    mode = mode ? mode : "full";
    int full = !strcmp(mode, "full");
    decline_buffers = !strcmp(mode, "no-buffer");
    CUpti_SubscriberHandle sub, sub2;
    CUptiResult rc = cuptiSubscribe(&sub, callback, NULL);
    SAY("SUB %d\n", (int)rc);
    SAY("SUB2 %d\n", (int)cuptiSubscribe(&sub2, callback, NULL));
    if (full) {
        cuptiEnableDomain(1, sub, CUPTI_CB_DOMAIN_RUNTIME_API);
        cuptiEnableDomain(1, sub, CUPTI_CB_DOMAIN_DRIVER_API);
    }
    cuptiSetThreadIdType(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM);
    cuptiActivityRegisterCallbacks(requested, completed);
    cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
    cuptiActivityEnable(CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION);
    if (full || decline_buffers) {
        cuptiActivityEnable(CUPTI_ACTIVITY_KIND_RUNTIME);
        cuptiActivityEnable(CUPTI_ACTIVITY_KIND_DRIVER);
    }
    cuptiActivityPushExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM2, 77);
    atexit(finish);
    return 1;
}
