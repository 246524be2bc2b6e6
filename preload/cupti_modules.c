/*
 * cupti_modules.c - module loads (CUPTI's resource callback): each module's
 * image digested and recorded with the object that caused the load.  A part
 * of the CUPTI backend (cupti_backend.c, cupti_internal.h), apart because
 * it is the one that walks the stack and hashes images.
 */
#define _GNU_SOURCE
#include <cupti.h>
#include <execinfo.h>
#include <string.h>

#include "cupti_internal.h"
#include "preload_internal.h"

/* ---- module loads ------------------------------------------------------------ */

static int is_tool_or_cuda_object(const char *path)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    static const char *const prefixes[] = { "libcuda.so", "libcupti.so", "libkaudit_preload",
                                            "libcudart.so", "libnvidia-", "libc.so", NULL };
    for (const char *const *p = prefixes; *p; p++)
        if (strncmp(base, *p, strlen(*p)) == 0)
            return 1;
    return 0;
}

/* The first object on this thread's stack outside CUDA and kaudit: who
 * caused the load.  Module loads are rare (lazy loading: once per module), so
 * a backtrace here is affordable. */
static uint32_t module_loader(void)
{
    void *frames[48];
    int count = backtrace(frames, 48);
    for (int i = 1; i < count; i++) {
        uintptr_t start;
        const char *path;
        if (kat_find_object(frames[i], &start, &path) != 0)
            continue;
        if (!path[0] || !is_tool_or_cuda_object(path))
            return kat_object_string(frames[i]); /* a library, or the main program */
    }
    return kat_intern("?");
}

static uint32_t image_kind(const uint8_t *bytes, size_t size)
{
    if (!bytes || size < 4)
        return KAT_IMAGE_UNKNOWN;
    if (bytes[0] == 0x7f && bytes[1] == 'E' && bytes[2] == 'L' && bytes[3] == 'F')
        return KAT_IMAGE_CUBIN;
    uint32_t magic;
    memcpy(&magic, bytes, sizeof(magic));
    if (magic == 0xBA55ED50u)
        return KAT_IMAGE_FATBIN;
    return KAT_IMAGE_PTX;
}

void record_module(const CUpti_ResourceData *resource)
{
    const CUpti_ModuleResourceData *module = resource->resourceDescriptor;
    if (!module)
        return;
    struct kat_module_rec out = {
        .module_id = module->moduleId,
        .size = module->cubinSize,
        .thread_id = kat_tid(),
        .vendor_call_id = kat_vendor_current_call(),
        .time_ns = kat_now_ns(),
        .image_kind = image_kind((const uint8_t *)module->pCubin, module->cubinSize),
    };
    if (resource->context)
        real_cuptiGetContextId(resource->context, &out.context_id);
    if (module->pCubin && module->cubinSize)
        kat_digest(module->pCubin, module->cubinSize, &out.digest_lo, &out.digest_hi);
    out.loader_string = module_loader();
    kat_emit(KAT_REC_MODULE, &out, sizeof(out));
}
