/*
 * libchain.c - libchain.so, another interposer in the program's own chain
 * (prog_audit_chain links it before libcublas.so.13): it defines malloc and
 * free, counting calls and forwarding to dlsym(RTLD_NEXT, ...), and it looks
 * cuBLAS up with dlsym(RTLD_NEXT) and dlsym(RTLD_DEFAULT), as a second
 * profiler or a candidate's shim would.  Under kaudit its RTLD_NEXT lookups
 * must still mean "the next object after me": malloc from libc, and no
 * lookup may come back to the caller (recursion).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#define CHAIN_EXPORT __attribute__((visibility("default")))

typedef void *(*malloc_fn)(size_t);
typedef void (*free_fn)(void *);

static _Atomic(malloc_fn) next_malloc;
static _Atomic(free_fn) next_free;
static atomic_ulong malloc_calls;
static atomic_int recursed;
/* initial-exec, as in every real allocator: a general-dynamic TLS access may
 * call malloc (always so under LD_AUDIT, which leaves the TLS of initially
 * loaded objects to be allocated on first use). */
static __thread __attribute__((tls_model("initial-exec"))) int resolving;
/* As much initial-exec TLS as jemalloc has (2.6 KB): under LD_AUDIT it comes
 * out of the static TLS surplus, which must be large enough for it. */
static __thread __attribute__((tls_model("initial-exec"))) char thread_cache[2688];

/* What malloc hands out while its own lookup is in progress (never, unless
 * dlsym recursed into malloc). */
static _Alignas(16) char early[1 << 16];
static atomic_size_t early_used;

static void *early_alloc(size_t n)
{
    size_t at = atomic_fetch_add(&early_used, (n + 15) & ~(size_t)15);
    return at + n <= sizeof early ? early + at : NULL;
}

static void *next(const char *name)
{
    resolving = 1;
    void *fn = dlsym(RTLD_NEXT, name);
    resolving = 0;
    return fn;
}

CHAIN_EXPORT void *malloc(size_t n)
{
    malloc_fn fn = atomic_load(&next_malloc);
    if (!fn) {
        if (resolving) {
            atomic_store(&recursed, 1);
            return early_alloc(n);
        }
        fn = (malloc_fn)next("malloc");
        if (!fn || fn == malloc) {
            atomic_store(&recursed, 1);
            return early_alloc(n);
        }
        atomic_store(&next_malloc, fn);
    }
    atomic_fetch_add(&malloc_calls, 1);
    thread_cache[n % sizeof thread_cache]++;
    return fn(n);
}

CHAIN_EXPORT void free(void *p)
{
    if ((char *)p >= early && (char *)p < early + sizeof early)
        return;
    free_fn fn = atomic_load(&next_free);
    if (!fn) {
        fn = (free_fn)next("free");
        if (!fn || fn == free) {
            atomic_store(&recursed, 1);
            return;
        }
        atomic_store(&next_free, fn);
    }
    fn(p);
}

CHAIN_EXPORT void *chain_next_malloc(void)
{
    return (void *)atomic_load(&next_malloc);
}

CHAIN_EXPORT unsigned long chain_malloc_calls(void)
{
    return atomic_load(&malloc_calls);
}

CHAIN_EXPORT int chain_recursed(void)
{
    return atomic_load(&recursed);
}

/* dlsym(RTLD_NEXT or RTLD_DEFAULT, name), asked from this library (not as a
 * tail call: RTLD_NEXT is relative to dlsym's return address). */
CHAIN_EXPORT void *chain_lookup(int use_next, const char *name)
{
    void *volatile found = dlsym(use_next ? RTLD_NEXT : RTLD_DEFAULT, name);
    return found;
}

typedef int (*sgemm_fn)(void *, int, int, int, int, int, const float *, const float *, int,
                        const float *, int, const float *, float *, int);

/* C = A B through the cublasSgemm_v2 that this library finds itself. */
CHAIN_EXPORT int chain_sgemm(int use_next, void *handle, int m, int n, int k, const float *a,
                             const float *b, float *c)
{
    sgemm_fn fn = (sgemm_fn)chain_lookup(use_next, "cublasSgemm_v2");
    if (!fn)
        return -1;
    float one = 1.0f, zero = 0.0f;
    return fn(handle, 0, 0, m, n, k, &one, a, m, b, k, &zero, c, m);
}
