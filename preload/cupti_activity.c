/*
 * cupti_activity.c - CUPTI's activity records: the buffers CUPTI fills
 * (given zeroed and recycled, so that no launch clears one), and their
 * conversion into trace records on CUPTI's thread, with the kernel name
 * cache that keeps the writer lock off that path.  A part of the CUPTI
 * backend (cupti_backend.c has the whole picture, cupti_internal.h what the
 * parts share): the activity API's side, apart from the callbacks.
 */
#define _GNU_SOURCE
#include <cupti.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "cupti_internal.h"
#include "preload_internal.h"

#define ACTIVITY_BUFFER_BYTES (8u << 20)

/* ---- activity buffers ------------------------------------------------------ */

/* KAUDIT_CUPTI_BUFFER_MB overrides the size (for measuring its effect). */
size_t activity_buffer_bytes = ACTIVITY_BUFFER_BYTES;

/* The benchmark's floor is on (kat_cupti_bench_floor): records only counted. */
atomic_int bench_floor;
static _Atomic uint64_t bench_floor_records;
static atomic_llong records_dropped;

/*
 * Zeroed buffers, recycled.  CUPTI asks for a buffer on the thread that makes
 * the CUDA call (buffers are per thread), and unless told that the buffers
 * it gets are zeroed it clears each one there, before the launch that asked
 * returns: 8 MiB of memset and first-touch page faults on the program's own
 * launch path, after every periodic flush.  So we tell it
 * (CUPTI_ACTIVITY_ATTR_ZEROED_OUT_ACTIVITY_BUFFER) and keep that promise:
 * a new buffer comes from calloc (fresh pages, zero without a memset), and a
 * completed one is cleared on CUPTI's worker thread, where its records were
 * read, and kept for the next request.  Only the bytes CUPTI filled (plus a
 * margin) need clearing; the rest were never written.
 * KAUDIT_CUPTI_BUFFER_POOL=0 goes back to plain buffers that CUPTI clears.
 */
#define BUFFER_POOL_SLOTS 4
#define BUFFER_CLEAR_MARGIN (64u << 10)

static int buffer_pool_on;
static pthread_mutex_t buffer_pool_lock = PTHREAD_MUTEX_INITIALIZER;
static uint8_t *buffer_pool[BUFFER_POOL_SLOTS];
static int buffer_pool_count;

static uint8_t *take_pooled_buffer(void)
{
    uint8_t *buffer = NULL;
    pthread_mutex_lock(&buffer_pool_lock);
    if (buffer_pool_count > 0)
        buffer = buffer_pool[--buffer_pool_count];
    pthread_mutex_unlock(&buffer_pool_lock);
    return buffer;
}

/* Clears and keeps BUFFER; frees it when the pool is full. */
static void return_buffer(uint8_t *buffer, size_t valid_size)
{
    if (!buffer_pool_on) {
        free(buffer);
        return;
    }
    size_t dirty = valid_size + BUFFER_CLEAR_MARGIN;
    memset(buffer, 0, dirty < activity_buffer_bytes ? dirty : activity_buffer_bytes);
    pthread_mutex_lock(&buffer_pool_lock);
    if (buffer_pool_count < BUFFER_POOL_SLOTS) {
        buffer_pool[buffer_pool_count++] = buffer;
        buffer = NULL;
    }
    pthread_mutex_unlock(&buffer_pool_lock);
    free(buffer);
}

void CUPTIAPI buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records)
{
    void *memory = NULL;
    if (buffer_pool_on) {
        memory = take_pooled_buffer();
        if (!memory)
            memory = calloc(1, activity_buffer_bytes);
    } else if (posix_memalign(&memory, 8, activity_buffer_bytes) != 0) {
        memory = NULL;
    }
    if (!memory)
        atomic_fetch_add(&buffers_lost, 1);
    *buffer = memory;
    *size = memory ? activity_buffer_bytes : 0;
    *max_records = 0;
}

/* Before the buffer callbacks are registered: CUPTI reads the attribute
 * when it takes a buffer. */
void setup_buffer_pool(void)
{
    const char *pool = getenv("KAUDIT_CUPTI_BUFFER_POOL");
    if (pool && strcmp(pool, "0") == 0)
        return;
    uint8_t zeroed = 1;
    size_t value_size = sizeof zeroed;
    buffer_pool_on = real_cuptiActivitySetAttribute
                     && real_cuptiActivitySetAttribute(CUPTI_ACTIVITY_ATTR_ZEROED_OUT_ACTIVITY_BUFFER,
                                                       &value_size, &zeroed) == CUPTI_SUCCESS;
}


/*
 * Converting a completed buffer.  Each record is built into a chunk of the
 * converting call's own, outside the writer lock, and the chunk goes into
 * the trace with one lock, a copy (kat_emit_chunk): the lock the launching
 * thread's vendor records take is held once per chunk (16 KiB: about 150
 * kernel records) instead of once per record, and only for the copy.  What needs the writer's string table (a kernel name not seen
 * before) still takes the lock, and the chunk so far is appended first
 * (append_before_string): the string's record then lands where one
 * kat_emit per record put it, after the records converted before it and
 * before the one that uses it.  So the records this thread writes, and
 * their order, are those of one kat_emit per record (tests/
 * test_run_recording.c chunked_conversion_*, tests/test_trace_chunks.c);
 * the last chunk is appended before the buffer callback returns, so a flush
 * (kat_cupti_flush) has every record written when it returns, as before.
 * Off by default (KAUDIT_CUPTI_CHUNK_KB=0, one record per lock): on the H200
 * 16 KiB chunks made the launch-bound loop slower, not faster (in process,
 * above the CUPTI floor with callbacks, the same build both ways;
 * bench/notes/overhead.md, "Ninth session"): fewer acquisitions, but each
 * holds the lock for a 16 KiB copy,
 * and a launching thread's vendor record that arrives then waits for all of
 * it.  KAUDIT_CUPTI_CHUNK_KB=N converts into chunks of N KiB.
 */
uint32_t convert_chunk_bytes = 0;

static void append_chunk(struct kat_chunk *chunk)
{
    /* the next segment mapped ahead, outside the lock, before a copy that
     * may cross into it */
    kat_writer_prepare_spare();
    kat_emit_chunk(chunk);
}

/* One converted record: into the chunk, or, without one (or for a record
 * larger than a chunk), stored at once after whatever the chunk holds. */
static void put(struct kat_chunk *chunk, uint16_t type, const void *body, uint32_t size)
{
    if (!chunk) {
        kat_emit(type, body, size);
        return;
    }
    if (kat_chunk_add(chunk, type, body, size) == 0)
        return;
    append_chunk(chunk);
    if (kat_chunk_add(chunk, type, body, size) != 0)
        kat_emit(type, body, size);
}

/* A record about to be converted needs a string interned, which may store
 * its definition at once: the records converted before it go first. */
void append_before_string(struct kat_chunk *chunk)
{
    if (chunk && chunk->used)
        append_chunk(chunk);
}

static uint32_t intern_in_order(const char *s, struct kat_chunk *chunk)
{
    append_before_string(chunk);
    return kat_intern(s);
}

/*
 * A kernel record's interned name.  Conversion runs for every kernel record,
 * mostly on CUPTI's worker thread, and kat_intern takes the writer lock and
 * hashes the whole name (often a few hundred bytes, mangled) under it: the
 * lock the launching thread's vendor records wait on.  CUPTI shares one name
 * string among all the records of a kernel (CUpti_ActivityKernel10.name), so
 * ids are kept by that pointer, each beside a copy of the name it stood for
 * (a name freed and another put at its address is a miss): a hit costs one
 * comparison and no writer lock.  No writer-lock call is made under this
 * cache's own lock.
 */
#define KERNEL_NAME_SLOTS 256
struct kernel_name_slot {
    const char *at;
    char *copy;
    uint32_t id;
};
static struct kernel_name_slot kernel_names[KERNEL_NAME_SLOTS];
static pthread_mutex_t kernel_names_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t kernel_names_atfork_once = PTHREAD_ONCE_INIT;

static void kernel_names_lock_take(void) { pthread_mutex_lock(&kernel_names_lock); }
static void kernel_names_lock_give(void) { pthread_mutex_unlock(&kernel_names_lock); }

static void kernel_names_atfork(void)
{
    pthread_atfork(kernel_names_lock_take, kernel_names_lock_give, kernel_names_lock_give);
}

static uint32_t kernel_name_id(const char *name, struct kat_chunk *chunk)
{
    if (!name)
        return 0;
    pthread_once(&kernel_names_atfork_once, kernel_names_atfork);
    struct kernel_name_slot *slot = &kernel_names[((uintptr_t)name >> 3) % KERNEL_NAME_SLOTS];
    uint32_t id = 0;
    pthread_mutex_lock(&kernel_names_lock);
    if (slot->at == name && slot->copy && strcmp(slot->copy, name) == 0)
        id = slot->id;
    pthread_mutex_unlock(&kernel_names_lock);
    if (id)
        return id;
    id = intern_in_order(name, chunk);
    char *copy = id ? strdup(name) : NULL;
    if (copy) {
        pthread_mutex_lock(&kernel_names_lock);
        char *old = slot->copy;
        slot->at = name;
        slot->copy = copy;
        slot->id = id;
        pthread_mutex_unlock(&kernel_names_lock);
        free(old);
    }
    return id;
}

static void convert_record(const CUpti_Activity *record, struct kat_chunk *chunk)
{
    switch (record->kind) {
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
    case CUPTI_ACTIVITY_KIND_KERNEL: {
        const CUpti_ActivityKernel10 *k = (const void *)record;
        struct kat_kernel_rec out = {
            .start_ns = k->start, .end_ns = k->end,
            .device_id = k->deviceId, .context_id = k->contextId, .stream_id = k->streamId,
            .correlation_id = k->correlationId,
            .grid = { k->gridX, k->gridY, k->gridZ },
            .block = { k->blockX, k->blockY, k->blockZ },
            .static_shared = k->staticSharedMemory, .dynamic_shared = k->dynamicSharedMemory,
            .registers = k->registersPerThread,
            .name_string = kernel_name_id(k->name, chunk),
            .graph_id = k->graphId, .launch_type = k->launchType,
            .graph_node_id = k->graphNodeId, .device_launched = k->isDeviceLaunched,
        };
        put(chunk, KAT_REC_KERNEL, &out, sizeof(out));
        break;
    }
    case CUPTI_ACTIVITY_KIND_RUNTIME:
    case CUPTI_ACTIVITY_KIND_DRIVER: {
        const CUpti_ActivityAPI *a = (const void *)record;
        int runtime = record->kind == CUPTI_ACTIVITY_KIND_RUNTIME;
        struct kat_api_rec out = {
            .start_ns = a->start, .end_ns = a->end,
            .domain = runtime ? KAT_API_RUNTIME : KAT_API_DRIVER,
            .cbid = a->cbid, .thread_id = a->threadId, .correlation_id = a->correlationId,
            .return_value = a->returnValue,
            .name_string = activity_api_name(runtime ? CUPTI_CB_DOMAIN_RUNTIME_API
                                                     : CUPTI_CB_DOMAIN_DRIVER_API, a->cbid, chunk),
        };
        put(chunk, KAT_REC_API, &out, sizeof(out));
        break;
    }
    case CUPTI_ACTIVITY_KIND_MEMCPY: {
        const CUpti_ActivityMemcpy6 *m = (const void *)record;
        struct kat_memcpy_rec out = {
            .start_ns = m->start, .end_ns = m->end, .bytes = m->bytes,
            .device_id = m->deviceId, .context_id = m->contextId, .stream_id = m->streamId,
            .correlation_id = m->correlationId, .copy_kind = m->copyKind,
            .src_kind = m->srcKind, .dst_kind = m->dstKind, .flags = m->flags,
            .graph_id = m->graphId,
        };
        put(chunk, KAT_REC_MEMCPY, &out, sizeof(out));
        break;
    }
    case CUPTI_ACTIVITY_KIND_MEMSET: {
        const CUpti_ActivityMemset4 *m = (const void *)record;
        struct kat_memset_rec out = {
            .start_ns = m->start, .end_ns = m->end, .bytes = m->bytes,
            .device_id = m->deviceId, .context_id = m->contextId, .stream_id = m->streamId,
            .correlation_id = m->correlationId, .value = m->value, .graph_id = m->graphId,
        };
        put(chunk, KAT_REC_MEMSET, &out, sizeof(out));
        break;
    }
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION: {
        const CUpti_ActivitySynchronization2 *s = (const void *)record;
        struct kat_sync_rec out = {
            .start_ns = s->start, .end_ns = s->end, .type = s->type,
            .correlation_id = s->correlationId, .context_id = s->contextId,
            .stream_id = s->streamId, .cuda_event_id = s->cudaEventId,
        };
        put(chunk, KAT_REC_SYNC, &out, sizeof(out));
        break;
    }
    case CUPTI_ACTIVITY_KIND_CUDA_EVENT: {
        const CUpti_ActivityCudaEvent2 *e = (const void *)record;
        struct kat_cuda_event_rec out = {
            .correlation_id = e->correlationId, .context_id = e->contextId,
            .stream_id = e->streamId, .event_id = e->eventId, .device_id = e->deviceId,
            .device_timestamp_ns = e->deviceTimestamp,
        };
        put(chunk, KAT_REC_CUDA_EVENT, &out, sizeof(out));
        break;
    }
    case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION: {
        const CUpti_ActivityExternalCorrelation *x = (const void *)record;
        struct kat_external_correlation_rec out = {
            .external_kind = x->externalKind, .correlation_id = x->correlationId,
            .external_id = x->externalId,
        };
        put(chunk, KAT_REC_EXTERNAL_CORRELATION, &out, sizeof(out));
        break;
    }
    case CUPTI_ACTIVITY_KIND_DEVICE: {
        const CUpti_ActivityDevice5 *d = (const void *)record;
        struct kat_device_rec out = {
            .device_id = d->id, .name_string = intern_in_order(d->name, chunk),
            .cc_major = d->computeCapabilityMajor, .cc_minor = d->computeCapabilityMinor,
            .multiprocessors = d->numMultiprocessors,
            .global_memory_bytes = d->globalMemorySize,
        };
        memcpy(out.uuid, &d->uuid, sizeof(out.uuid));
        put(chunk, KAT_REC_DEVICE, &out, sizeof(out));
        break;
    }
    default:
        break;
    }
}

void CUPTIAPI buffer_completed(CUcontext context, uint32_t stream_id, uint8_t *buffer,
                                      size_t size, size_t valid_size)
{
    CUpti_Activity *record = NULL;
    int floor = atomic_load_explicit(&bench_floor, memory_order_relaxed);
    if (buffer && valid_size) {
        /* The next trace segment is mapped here, off the launching threads'
         * path and outside the writer lock, before and while converting
         * (every 256 records: about 72 KiB of trace, a 4 MiB segment holds
         * 58 such steps). */
        unsigned converted = 0;
        kat_writer_prepare_spare();
        /* the chunk's memory: per call, since a flush converts on the
         * flushing thread while CUPTI's own may convert another buffer */
        struct kat_chunk chunk_on = { .capacity = convert_chunk_bytes };
        struct kat_chunk *chunk = NULL;
        if (convert_chunk_bytes && !floor && (chunk_on.bytes = malloc(convert_chunk_bytes)) != NULL)
            chunk = &chunk_on;
        while (real_cuptiActivityGetNextRecord(buffer, valid_size, &record) == CUPTI_SUCCESS) {
            if (floor) {
                atomic_fetch_add_explicit(&bench_floor_records, 1, memory_order_relaxed);
                continue;
            }
            convert_record(record, chunk);
            if (!chunk && ++converted % 256 == 0)
                kat_writer_prepare_spare();
        }
        if (chunk) {
            append_chunk(chunk);
            free(chunk->bytes);
        }
    }
    size_t dropped = 0;
    if (real_cuptiActivityGetNumDroppedRecords(context, stream_id, &dropped) == CUPTI_SUCCESS
        && dropped) {
        atomic_fetch_add(&records_dropped, (long long)dropped);
        kat_health(KAT_HEALTH_CUPTI_DROPPED, "activity buffer", (int64_t)dropped);
    }
    if (buffer)
        return_buffer(buffer, valid_size);
}
