/*
 * cupti_internal.h - what the parts of the CUPTI backend share (cupti_*.c,
 * and cupti_backend.c, which starts them); not for the rest of the preload
 * library, which uses the kat_cupti_* functions of preload_internal.h.
 *
 * The backend was one file; these are its statics that more than one part
 * uses, under their old names, hidden like everything in the library
 * (preload_internal.h): the pragma makes the declarations say so too, so
 * that a reference from another part is as direct as it was.
 */
#ifndef KAUDIT_CUPTI_INTERNAL_H
#define KAUDIT_CUPTI_INTERNAL_H

#include <cupti.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "preload_internal.h"

/* The CUPTI functions we use, from the process's own libcupti. */
#define CUPTI_FUNCTIONS(X)                                                                 \
    X(cuptiGetVersion, CUptiResult, (uint32_t *))                                          \
    X(cuptiGetResultString, CUptiResult, (CUptiResult, const char **))                     \
    X(cuptiSubscribe, CUptiResult, (CUpti_SubscriberHandle *, CUpti_CallbackFunc, void *)) \
    X(cuptiEnableCallback, CUptiResult,                                                    \
      (uint32_t, CUpti_SubscriberHandle, CUpti_CallbackDomain, CUpti_CallbackId))          \
    X(cuptiGetCallbackName, CUptiResult, (CUpti_CallbackDomain, uint32_t, const char **)) \
    X(cuptiActivityEnable, CUptiResult, (CUpti_ActivityKind))                              \
    X(cuptiActivityRegisterCallbacks, CUptiResult,                                         \
      (CUpti_BuffersCallbackRequestFunc, CUpti_BuffersCallbackCompleteFunc))               \
    X(cuptiActivityGetNextRecord, CUptiResult, (uint8_t *, size_t, CUpti_Activity **))     \
    X(cuptiActivityGetNumDroppedRecords, CUptiResult, (CUcontext, uint32_t, size_t *))     \
    X(cuptiActivityFlushAll, CUptiResult, (uint32_t))                                      \
    X(cuptiActivityPushExternalCorrelationId, CUptiResult,                                 \
      (CUpti_ExternalCorrelationKind, uint64_t))                                           \
    X(cuptiActivityPopExternalCorrelationId, CUptiResult,                                  \
      (CUpti_ExternalCorrelationKind, uint64_t *))                                         \
    X(cuptiGetContextId, CUptiResult, (CUcontext, uint32_t *))

#define CUPTI_OPTIONAL_FUNCTIONS(X)                                                        \
    X(cuptiActivityFlushPeriod, CUptiResult, (uint32_t))                                   \
    X(cuptiActivityRegisterTimestampCallback, CUptiResult, (CUpti_TimestampCallbackFunc))  \
    X(cuptiSetThreadIdType, CUptiResult, (CUpti_ActivityThreadIdType))                     \
    X(cuptiGetTimestamp, CUptiResult, (uint64_t *))                                        \
    X(cuptiActivityEnableCudaEventDeviceTimestamps, CUptiResult, (uint8_t))                \
    X(cuptiActivitySetAttribute, CUptiResult, (CUpti_ActivityAttribute, size_t *, void *))  \
    X(cuptiActivityDisable, CUptiResult, (CUpti_ActivityKind))                             \
    X(cuptiGetStreamIdEx, CUptiResult, (CUcontext, CUstream, uint8_t, uint32_t *))

#define TABLE_SIZE(t) (sizeof(t) / sizeof((t)[0]))

#pragma GCC visibility push(hidden)

/* ---- cupti_backend.c: the state, finding libcupti, starting ---- */

#define DECLARE_POINTER(name, ret, args) extern ret(*real_##name) args;
CUPTI_FUNCTIONS(DECLARE_POINTER)
CUPTI_OPTIONAL_FUNCTIONS(DECLARE_POINTER)
#undef DECLARE_POINTER

extern void *cupti_handle;
extern atomic_llong buffers_lost;
extern CUpti_SubscriberHandle subscriber;
extern int api_by_callback;             /* API records made by callback (see api_callback) */
extern int kernel_at_context;           /* KAUDIT_CUPTI_KERNEL_AT (apply_tuning) */
const char *result_text(CUptiResult rc);

/* ---- cupti_activity.c: activity buffers and their records ---- */

extern size_t activity_buffer_bytes;
extern atomic_int bench_floor;
extern uint32_t convert_chunk_bytes;
void setup_buffer_pool(void);
void CUPTIAPI buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records);
void CUPTIAPI buffer_completed(CUcontext context, uint32_t stream_id, uint8_t *buffer,
                               size_t size, size_t valid_size);
void append_before_string(struct kat_chunk *chunk);

/* ---- cupti_modules.c: module loads ---- */

void record_module(const CUpti_ResourceData *resource);

/* ---- cupti_callbacks.c: timing calls, API records by callback, the benchmark's floor ---- */

void index_timing_tables(void);
int set_timing_callbacks(int on);
void record_apis_by_callback(void);
uint32_t activity_api_name(CUpti_CallbackDomain domain, uint32_t cbid, struct kat_chunk *chunk);
void CUPTIAPI on_callback(void *userdata, CUpti_CallbackDomain domain,
                          CUpti_CallbackId cbid, const void *cbdata);

/* ---- cupti_kinds.c: the activity kinds and the API record policy ---- */

/* KAUDIT_API_RECORDS (read at setup). */
enum api_policy { API_EVIDENCE, API_ALL, API_NONE };
enum api_policy api_policy(void);
int is_query(const char *name);
void enable_activity_kinds(void);
void enable_deferred_kernel_activity(void);

#pragma GCC visibility pop

#endif
