/*
 * vendor_resolve.c - the real entry points behind our vendor wrappers.
 *
 * PyTorch loads its CUDA libraries RTLD_LOCAL, so dlsym(RTLD_NEXT) finds
 * nothing there (and calling that NULL crashed a naive shim).  We ask the
 * library's own handle instead: dlopen(soname, RTLD_LAZY | RTLD_NOLOAD) only
 * finds an already loaded copy (and pins it against dlclose), and never adds
 * RTLD_GLOBAL, which would change the program's own symbol bindings.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "preload_internal.h"

struct vendor_library {
    const char *const sonames[4];
    _Atomic(void *) handle;
    _Atomic(const char *) soname_found;
};

static struct vendor_library libraries[] = {
    [KAT_LIB_CUBLAS] = { { "libcublas.so.13", "libcublas.so.12", "libcublas.so.11", NULL } },
    [KAT_LIB_CUBLASLT] = { { "libcublasLt.so.13", "libcublasLt.so.12", "libcublasLt.so.11", NULL } },
    [KAT_LIB_CUDNN] = { { "libcudnn.so.9", "libcudnn.so.8", NULL, NULL } },
};

static void *library_handle(struct vendor_library *lib, const char **soname)
{
    void *handle = atomic_load(&lib->handle);
    if (handle) {
        *soname = atomic_load(&lib->soname_found);
        return handle;
    }
    for (int i = 0; i < 4 && lib->sonames[i]; i++) {
        handle = dlopen(lib->sonames[i], RTLD_LAZY | RTLD_NOLOAD);
        if (handle) {
            void *expected = NULL;
            atomic_store(&lib->soname_found, lib->sonames[i]);
            if (!atomic_compare_exchange_strong(&lib->handle, &expected, handle))
                dlclose(handle); /* another thread pinned it first */
            *soname = lib->sonames[i];
            return atomic_load(&lib->handle);
        }
    }
    return NULL;
}

/*
 * Wrappers retry a missing symbol on every call (the library may be loaded
 * later), so each name is reported once.  Names are the wrappers' string
 * literals: the pointer identifies them.
 */
#define MAX_REPORTED 512
static _Atomic(const char *) reported[MAX_REPORTED];
static atomic_uint reported_count;

static int first_failure(const char *name)
{
    unsigned n = atomic_load(&reported_count);
    for (unsigned i = 0; i < n && i < MAX_REPORTED; i++)
        if (atomic_load(&reported[i]) == name)
            return 0;
    unsigned slot = atomic_fetch_add(&reported_count, 1);
    if (slot < MAX_REPORTED)
        atomic_store(&reported[slot], name);
    return 1;
}

static int inside_this_library(void *address)
{
    Dl_info mine, theirs;
    if (!dladdr((void *)inside_this_library, &mine) || !dladdr(address, &theirs))
        return 0;
    return mine.dli_fbase == theirs.dli_fbase;
}

void *kat_resolve_vendor(uint32_t library, const char *name)
{
    if (library >= sizeof(libraries) / sizeof(libraries[0]) || !libraries[library].sonames[0])
        return NULL;
    const char *soname = NULL;
    void *handle = library_handle(&libraries[library], &soname);
    void *fn = NULL;
    if (handle) {
        /* The real libraries version their symbols with the soname. */
        fn = dlvsym(handle, name, soname);
        if (!fn)
            fn = dlsym(handle, name);
        if (fn && inside_this_library(fn))
            fn = NULL;
    }
    if (!fn && first_failure(name)) {
        char detail[256];
        snprintf(detail, sizeof(detail), "%s@%s", name,
                 soname ? soname : libraries[library].sonames[0]);
        kat_health(KAT_HEALTH_SYMBOL_UNRESOLVED, detail, library);
    }
    return fn;
}
