/*
 * nvtx_prog.c - a program that marks its phases with NVTX (header-only nvtx3,
 * as PyTorch and benchmark runners do) and starts three threads.
 *
 * It prints what each NVTX call returned, one `name=value` per line, so a
 * test can check that the injection kept NVTX's semantics (untraced, with no
 * tool attached, push and pop return a negative value).  Exit status 0.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <nvtx3/nvToolsExt.h>

#define WORKERS 3

static void *worker(void *arg)
{
    intptr_t i = (intptr_t)arg;
    char name[32];
    snprintf(name, sizeof name, "worker %d", (int)i);
    int level = nvtxRangePushA(name);
    nvtxMarkA("worker mark");
    int popped = nvtxRangePop();
    return (void *)(intptr_t)(level == 0 && popped == 0);
}

int main(void)
{
    printf("outer=%d\n", nvtxRangePushA("outer"));
    printf("inner=%d\n", nvtxRangePushW(L"inner \u00e9"));
    nvtxMarkA("mark A");
    printf("pop_inner=%d\n", nvtxRangePop());
    printf("pop_outer=%d\n", nvtxRangePop());

    nvtxRangeId_t id = nvtxRangeStartA("start-end A");
    printf("start_id_nonzero=%d\n", id != 0);
    nvtxRangeEnd(id);

    nvtxDomainHandle_t domain = nvtxDomainCreateA("kaudit.nvtx_prog");
    nvtxStringHandle_t registered = nvtxDomainRegisterStringA(domain, "registered message");
    nvtxEventAttributes_t attr;
    memset(&attr, 0, sizeof attr);
    attr.version = NVTX_VERSION;
    attr.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    attr.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
    attr.message.registered = registered;
    printf("domain_push=%d\n", nvtxDomainRangePushEx(domain, &attr));
    attr.messageType = NVTX_MESSAGE_TYPE_ASCII;
    attr.message.ascii = "domain mark";
    nvtxDomainMarkEx(domain, &attr);
    attr.messageType = NVTX_MESSAGE_TYPE_UNICODE;
    attr.message.unicode = L"domain range";
    nvtxRangeId_t did = nvtxDomainRangeStartEx(domain, &attr);
    nvtxDomainRangeEnd(domain, did);
    printf("domain_pop=%d\n", nvtxDomainRangePop(domain));

    pthread_t threads[WORKERS];
    int ok = 1;
    for (intptr_t i = 0; i < WORKERS; i++)
        if (pthread_create(&threads[i], NULL, worker, (void *)i) != 0)
            ok = 0;
    for (int i = 0; i < WORKERS; i++) {
        void *r = NULL;
        pthread_join(threads[i], &r);
        if (!r)
            ok = 0;
    }
    printf("workers_ok=%d\n", ok);
    return 0;
}
