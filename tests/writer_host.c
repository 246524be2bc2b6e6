/*
 * writer_host.c - what the preload's trace writer needs from the rest of the
 * library, for host programs that link the writer alone (tests/writer.cmake:
 * tests/test_trace_chunks.c, bench/writer_contention.c): no `kaudit run`
 * token and no supervisor, so the trace is a file in KAUDIT_SESSION_DIR.
 */
#include <pthread.h>

#include "preload_internal.h"

const char *kat_injected_token(void)
{
    return NULL;
}

const char *kat_injected_supervisor(void)
{
    return NULL;
}

/* The preload starts its threads past its own pthread_create wrapper
 * (threads.c); here there is no wrapper. */
int kat_start_helper_thread(void *(*routine)(void *), void *arg)
{
    pthread_t thread;
    if (pthread_create(&thread, NULL, routine, arg) != 0)
        return -1;
    pthread_detach(thread);
    return 0;
}
