/*
 * prog_subscriber.c - a program that uses CUPTI itself, like torch.profiler
 * (Kineto) does: it links libcupti.so.13 and, once CUDA is initialised,
 *   prog_subscriber subscribe   calls cuptiSubscribe
 *   prog_subscriber kineto      also registers its own activity buffers,
 *                               enables kernel records and flushes them
 * then launches kernels.  Under `kaudit run` cuptiSubscribe fails with
 * CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED (the driver allows one); the
 * program carries on, as PyTorch does.  stdout: the checksum only (the CUPTI
 * results go to stderr, since they differ with and without kaudit).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cupti.h>

#include "prog_common.h"

static void CUPTIAPI on_callback(void *ud, CUpti_CallbackDomain d, CUpti_CallbackId id, const void *data)
{
    (void)ud;
    (void)d;
    (void)id;
    (void)data;
}

static size_t g_records;

static void CUPTIAPI on_request(uint8_t **buffer, size_t *size, size_t *max)
{
    *size = 1 << 16;
    *buffer = aligned_alloc(8, *size);
    *max = 0;
}

static void CUPTIAPI on_complete(CUcontext ctx, uint32_t stream, uint8_t *buffer, size_t size, size_t valid)
{
    (void)ctx;
    (void)stream;
    (void)size;
    CUpti_Activity *r = NULL;
    while (cuptiActivityGetNextRecord(buffer, valid, &r) == CUPTI_SUCCESS)
        g_records++;
    free(buffer);
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "subscribe";
    prog_register_kernels();
    CHECK_CUDA(cudaFree(NULL));

    CUpti_SubscriberHandle sub = NULL;
    CUptiResult r = cuptiSubscribe(&sub, on_callback, NULL);
    const char *name = NULL;
    cuptiGetResultString(r, &name);
    fprintf(stderr, "prog_subscriber: cuptiSubscribe: %s\n", name ? name : "?");
    if (!strcmp(mode, "kineto")) {
        CUptiResult a = cuptiActivityRegisterCallbacks(on_request, on_complete);
        CUptiResult b = cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
        fprintf(stderr, "prog_subscriber: register %d enable %d\n", (int)a, (int)b);
    }

    const int n = 512;
    float *h = malloc(n * sizeof(float)), *d;
    prog_fill(h, (size_t)n, 60);
    CHECK_CUDA(cudaMalloc((void **)&d, n * sizeof(float)));
    CHECK_CUDA(cudaMemcpy(d, h, n * sizeof(float), cudaMemcpyHostToDevice));
    for (int i = 0; i < 3; i++)
        prog_launch_scale(d, n, 1.5f, 0);
    CHECK_CUDA(cudaMemcpy(h, d, n * sizeof(float), cudaMemcpyDeviceToHost));
    CHECK_CUDA(cudaDeviceSynchronize());
    if (!strcmp(mode, "kineto")) {
        cuptiActivityFlushAll(1);
        fprintf(stderr, "prog_subscriber: %zu records of its own\n", g_records);
    }
    if (sub)
        cuptiUnsubscribe(sub);
    prog_print("subscriber", h, (size_t)n);
    free(h);
    cudaFree(d);
    return 0;
}
