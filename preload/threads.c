/*
 * threads.c - pthread_create, so that every thread's records can be traced
 * back to the thread (and the code) that started it.
 *
 * The wrapper records KAT_THREAD_CREATE on the creating thread and starts the
 * new thread in a trampoline that records KAT_THREAD_START before calling the
 * program's routine; one token pairs the two.  The create record is written
 * only when the real pthread_create succeeded (its time is taken before the
 * call, so it precedes the start record's time even when it is written
 * after it in the file).
 *
 * Whatever happens here, the program sees what the real pthread_create would
 * have given it: the same return value, the same errno, the same thread
 * arguments.  When tracing is off, or the trampoline's few bytes cannot be
 * allocated, the real function is called with the original arguments.
 *
 * libc is in the global scope, so RTLD_NEXT finds the real function.  It is
 * versioned: GLIBC_2.34 where libpthread was merged into libc, GLIBC_2.2.5 on
 * older x86-64 glibc; plain dlsym covers other architectures.
 *
 * Threads that tools create (CUPTI's, the CUDA driver's) come through here as
 * well; that is evidence like any other.  Code in this library that holds a
 * lock kat_emit takes must not call pthread_create.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "preload_internal.h"

typedef int (*kat_pthread_create_fn)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);

static _Atomic(kat_pthread_create_fn) kat_real_pthread_create;
static _Atomic uint64_t kat_next_thread_token = 1;

struct kat_thread_start {
    void *(*routine)(void *);
    void *arg;
    uint64_t token;
};

KAT_EXPORT int pthread_create(pthread_t *thread, const pthread_attr_t *attr,
                              void *(*start_routine)(void *), void *arg);

static kat_pthread_create_fn kat_resolve_pthread_create(void)
{
    kat_pthread_create_fn fn = atomic_load_explicit(&kat_real_pthread_create, memory_order_acquire);
    if (fn)
        return fn;
    void *p = dlvsym(RTLD_NEXT, "pthread_create", "GLIBC_2.34");
    if (!p)
        p = dlvsym(RTLD_NEXT, "pthread_create", "GLIBC_2.2.5");
    if (!p)
        p = dlsym(RTLD_NEXT, "pthread_create");
    if (!p || p == (void *)pthread_create) {
        (void)dlerror();
        return NULL;
    }
    fn = (kat_pthread_create_fn)p;
    atomic_store_explicit(&kat_real_pthread_create, fn, memory_order_release);
    return fn;
}

static void kat_thread_emit(uint32_t event, uint64_t token, void *(*routine)(void *), uint64_t time_ns)
{
    struct kat_thread_rec rec;
    memset(&rec, 0, sizeof rec);
    rec.event = event;
    rec.thread_id = kat_tid();
    rec.token = token;
    rec.start_routine = (uint64_t)(uintptr_t)routine;
    rec.routine_object_string = kat_object_string((const void *)(uintptr_t)routine);
    rec.time_ns = time_ns;
    kat_emit(KAT_REC_THREAD, &rec, sizeof rec);
}

static void *kat_thread_trampoline(void *p)
{
    struct kat_thread_start start = *(struct kat_thread_start *)p;
    free(p);
    int saved_errno = errno;
    if (kat_tracing_enabled())
        kat_thread_emit(KAT_THREAD_START, start.token, start.routine, kat_now_ns());
    errno = saved_errno;
    return start.routine(start.arg);
}

KAT_EXPORT int pthread_create(pthread_t *thread, const pthread_attr_t *attr,
                              void *(*start_routine)(void *), void *arg)
{
    int saved_errno = errno;
    kat_pthread_create_fn real = kat_resolve_pthread_create();
    if (!real) {
        static _Atomic int reported;
        if (!atomic_exchange(&reported, 1))
            kat_health(KAT_HEALTH_SYMBOL_UNRESOLVED, "pthread_create@libc", 0);
        errno = saved_errno;
        return EAGAIN;                  /* nothing else can start a thread */
    }
    if (!kat_tracing_enabled()) {
        errno = saved_errno;
        return real(thread, attr, start_routine, arg);
    }
    struct kat_thread_start *start = malloc(sizeof *start);
    if (!start) {
        errno = saved_errno;
        return real(thread, attr, start_routine, arg);
    }
    start->routine = start_routine;
    start->arg = arg;
    start->token = atomic_fetch_add_explicit(&kat_next_thread_token, 1, memory_order_relaxed);
    uint64_t token = start->token;      /* `start` belongs to the new thread once it runs */
    uint64_t t = kat_now_ns();

    errno = saved_errno;
    int rc = real(thread, attr, kat_thread_trampoline, start);
    int after_errno = errno;
    if (rc != 0)
        free(start);                    /* no thread: the trampoline never ran */
    else
        kat_thread_emit(KAT_THREAD_CREATE, token, start_routine, t);
    errno = after_errno;
    return rc;
}

/*
 * A thread of ours (kat_start_helper_thread): started through the real
 * pthread_create, so it is no evidence of the program's; detached; every
 * signal blocked, so that none meant for the program lands there.
 */
int kat_start_helper_thread(void *(*routine)(void *), void *arg)
{
    kat_pthread_create_fn real = kat_resolve_pthread_create();
    if (!real)
        return -1;
    int saved_errno = errno;
    pthread_attr_t attr;
    if (pthread_attr_init(&attr) != 0) {
        errno = saved_errno;
        return -1;
    }
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    pthread_attr_setstacksize(&attr, 64 << 10);
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    pthread_t thread;
    int rc = real(&thread, &attr, routine, arg);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    pthread_attr_destroy(&attr);
    errno = saved_errno;
    return rc == 0 ? 0 : -1;
}
