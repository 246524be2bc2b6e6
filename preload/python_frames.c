/*
 * python_frames.c - what the Python side (preload/python/sitecustomize.py)
 * tells us: a thread entered or left code of a watched party, and whether
 * the Python-side provenance is on and how.
 *
 * Recorded as NVTX records of the domain "kaudit.python" (push/pop with the
 * code's qualified name, marks for status), so the readers handle them like
 * any other range.  The Python side calls these through ctypes with the GIL
 * held; they take no lock of their own beyond what kat_intern and kat_emit
 * take, and never call back into Python.
 */
#include <errno.h>
#include <stdatomic.h>
#include <string.h>

#include "preload_internal.h"

#define KAT_PYTHON_DOMAIN "kaudit.python"

static _Atomic uint32_t python_domain_id;

static void python_record(uint32_t kind, const char *text)
{
    int saved_errno = errno;
    struct kat_nvtx_rec rec;
    memset(&rec, 0, sizeof rec);
    rec.kind = kind;
    rec.thread_id = kat_tid();
    rec.time_ns = kat_now_ns();
    rec.message_string = text ? kat_intern(text) : 0;
    uint32_t domain = atomic_load_explicit(&python_domain_id, memory_order_relaxed);
    if (!domain) {
        /* interned once per process image; a fork child keeps the table */
        domain = kat_intern(KAT_PYTHON_DOMAIN);
        atomic_store_explicit(&python_domain_id, domain, memory_order_relaxed);
    }
    rec.domain_string = domain;
    kat_emit(KAT_REC_NVTX, &rec, sizeof rec);
    errno = saved_errno;
}

KAT_EXPORT void kaudit_python_push(const char *qualname)
{
    python_record(KAT_NVTX_PUSH, qualname);
}

KAT_EXPORT void kaudit_python_pop(const char *qualname)
{
    python_record(KAT_NVTX_POP, qualname);
}

KAT_EXPORT void kaudit_python_status(const char *text)
{
    python_record(KAT_NVTX_MARK, text);
}
