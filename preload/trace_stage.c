/*
 * trace_stage.c - per-thread staging of the API records made by callback.
 *
 * An API callback's record (inside a vendor call with the call's id in its
 * tail, trace format 2) is appended to a buffer of the calling thread and
 * records reach the trace in batches, one writer lock per batch, instead of
 * a writer-lock acquisition per launch on the launching thread (the
 * lock CUPTI's worker thread takes for every record it converts).  On the
 * H200 the difference in the launch-bound loop was within the noise of the
 * in-process measurement (KAUDIT_LAUNCH_STAGING=0 against the default;
 * bench/notes/overhead.md); the batches are kept because the launch path is
 * then never the one that waits for the worker.
 *
 * Staged records are as durable as the kernel records they explain: those
 * wait in CUPTI's buffers until a flush, and every flush point flushes the
 * stages too (kat_cupti_flush: exit, _exit, exec, a foreign CUPTI client;
 * before fork; at writer close; at thread exit).  Vendor call records are not
 * staged by default: they are evidence on their own and are written at once.
 * KAUDIT_VENDOR_STAGING=1 stages them too (vendor_window.c says what a
 * killed process then loses).
 *
 * Each stage has an owner thread; a flusher from another thread takes the
 * stage's own lock (a flag the owner takes for every append, uncontended
 * but for a flush).
 */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "preload_internal.h"

#define STAGE_BYTES (32u << 10)
#define MAX_STAGES 512

struct stage {
    atomic_int busy;            /* held by the owner appending, or by a flusher */
    atomic_int owned;           /* a live thread owns it */
    uint32_t used;
    uint8_t data[STAGE_BYTES];
};

/* One staged record: this header, then the body, padded to 8 bytes. */
struct staged_header {
    uint32_t size;
    uint16_t type;
    uint16_t pad;
};

static struct stage *stages[MAX_STAGES];
static atomic_int n_stages;
static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_key_t stage_key;
static pthread_once_t stage_key_once = PTHREAD_ONCE_INIT;
static int stage_key_ok;
static KAT_TLS struct stage *my_stage;
static KAT_TLS int my_stage_unavailable;

static void take(struct stage *s)
{
    while (atomic_exchange_explicit(&s->busy, 1, memory_order_acquire))
        sched_yield();
}

static void give(struct stage *s)
{
    atomic_store_explicit(&s->busy, 0, memory_order_release);
}

/* Stage held.  What cannot be written now stays staged: a vfork child
 * shares the parent's memory but may not write the parent's trace, and must
 * not discard what the parent staged either. */
static void drain(struct stage *s)
{
    if (s->used == 0)
        return;
    int writable = kat_emit_lock() == 0;
    for (uint32_t at = 0; writable && at < s->used;) {
        struct staged_header h;
        memcpy(&h, s->data + at, sizeof h);
        kat_emit_locked(h.type, s->data + at + sizeof h, h.size);
        at += (uint32_t)sizeof h + ((h.size + 7) & ~7u);
    }
    kat_emit_unlock();
    if (writable)
        s->used = 0;
}

static void stage_thread_exit(void *arg)
{
    struct stage *s = arg;
    take(s);
    drain(s);
    give(s);
    my_stage = NULL;
    atomic_store(&s->owned, 0);
}

static void make_key(void)
{
    stage_key_ok = pthread_key_create(&stage_key, stage_thread_exit) == 0;
}

static struct stage *attach(void)
{
    pthread_once(&stage_key_once, make_key);
    if (!stage_key_ok)
        return NULL;
    struct stage *s = NULL;
    pthread_mutex_lock(&registry_lock);
    int n = atomic_load(&n_stages);
    for (int i = 0; i < n && !s; i++) {
        int free_one = 0;
        if (atomic_compare_exchange_strong(&stages[i]->owned, &free_one, 1))
            s = stages[i];
    }
    if (!s && n < MAX_STAGES && (s = calloc(1, sizeof *s)) != NULL) {
        atomic_store(&s->owned, 1);
        stages[n] = s;
        atomic_store(&n_stages, n + 1);
    }
    pthread_mutex_unlock(&registry_lock);
    if (s && pthread_setspecific(stage_key, s) != 0) {
        atomic_store(&s->owned, 0);
        s = NULL;
    }
    return s;
}

/* KAUDIT_LAUNCH_STAGING=0 stores staged records at once (to measure the difference). */
static int staging_off(void)
{
    static int off = -1;
    return kat_env_is(&off, "KAUDIT_LAUNCH_STAGING", "0");
}

void kat_emit_staged(uint16_t type, const void *body, uint32_t size)
{
    struct stage *s = my_stage;
    if (!s && !my_stage_unavailable && !staging_off()) {
        s = my_stage = attach();
        my_stage_unavailable = s == NULL;
    }
    uint32_t need = (uint32_t)sizeof(struct staged_header) + ((size + 7) & ~7u);
    if (!s || need > STAGE_BYTES) {
        kat_emit(type, body, size);
        return;
    }
    take(s);
    if (s->used + need > STAGE_BYTES)
        drain(s);
    if (s->used + need > STAGE_BYTES) {
        /* Not writable now (and full): the record takes the ordinary path,
         * which writes it if it can. */
        give(s);
        kat_emit(type, body, size);
        return;
    }
    struct staged_header h = { .size = size, .type = type };
    memcpy(s->data + s->used, &h, sizeof h);
    memcpy(s->data + s->used + sizeof h, body, size);
    s->used += need;
    give(s);
}

void kat_stage_flush_all(void)
{
    int n = atomic_load(&n_stages);
    for (int i = 0; i < n; i++) {
        struct stage *s = stages[i];
        take(s);
        drain(s);
        give(s);
    }
}

/* In a fork child: the other threads are gone, and what they staged after
 * the parent's flush is the parent's. */
void kat_stage_after_fork_child(void)
{
    int n = atomic_load(&n_stages);
    for (int i = 0; i < n; i++) {
        struct stage *s = stages[i];
        s->used = 0;
        atomic_store(&s->busy, 0);
        if (s != my_stage)
            atomic_store(&s->owned, 0);
    }
}
