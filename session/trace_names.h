/*
 * trace_names.h - the names of the trace format's enum values (trace_format.h),
 * as every reader prints them: dump's text and JSON, the inventory's
 * calibration, reports.  One table per enum, here only, so that a new value
 * is named once.  libc only.
 *
 * Every function returns a static string and never NULL: "unknown" for a
 * value the table does not name, except kat_health_code_name (NULL, so a
 * caller can print the number) and kat_vendor_library_soname (NULL).
 * The record type names live with the record sizes in trace_reader.c
 * (kat_record_type_name, trace_reader.h).
 */
#ifndef KAT_TRACE_NAMES_H
#define KAT_TRACE_NAMES_H

#include <stdint.h>

const char *kat_origin_name(uint32_t origin);            /* KAT_ORIGIN_*: "exec", "fork" */
const char *kat_end_kind_name(uint32_t kind);            /* KAT_END_*: "exit", "_exit", "exec" */
const char *kat_fork_kind_name(uint32_t kind);           /* KAT_FORK_*: "fork", "posix_spawn" */
/* KAT_LIB_*: "cublas", "cublaslt", "cudnn" (the contract's spelling too). */
const char *kat_vendor_library_name(uint32_t library);
/* The KAT_LIB_* value that kat_vendor_library_name names so, 0 if none. */
uint32_t kat_vendor_library_of(const char *name);
/* KAT_LIB_*: the soname prefix of its LIBRARY record ("libcublasLt.so"); NULL if unknown. */
const char *kat_vendor_library_soname(uint32_t library);
const char *kat_work_class_name(uint32_t work_class);    /* KAT_WORK_*: "gemm", "conv", ... */
const char *kat_conv_direction_name(uint32_t direction); /* KAT_CONV_*: "forward", ... */
const char *kat_image_kind_name(uint32_t kind);          /* KAT_IMAGE_*: "cubin", "fatbin", "ptx" */
const char *kat_api_domain_name(uint32_t domain);        /* KAT_API_*: "runtime", "driver" */
const char *kat_timing_api_name(uint32_t api);           /* KAT_TIMING_*: "event_record", ... */
const char *kat_symbol_phase_name(uint32_t phase);       /* KAT_SYMBOL_*: "start", "cuda_init", ... */
const char *kat_sync_type_name(uint32_t type);           /* CUpti_ActivitySynchronizationType */
const char *kat_nvtx_kind_name(uint32_t kind);           /* KAT_NVTX_*: "push", "pop", ... */
const char *kat_thread_event_name(uint32_t event);       /* KAT_THREAD_*: "create", "start" */
/* snake_case of enum kat_health_code ("cupti_version"); NULL if unknown. */
const char *kat_health_code_name(uint32_t code);

#endif
