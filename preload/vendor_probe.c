/*
 * vendor_probe.c - the causal probe's vendor-boundary channel (docs/audit.md,
 * "Causal probe"): work a candidate hands to cuBLAS below the framework (an
 * extension calling cublasSgemm itself) never passes the ATen dispatcher, so
 * the runner perturbs it here.  When `kaudit audit`'s runner asks for it
 * (kaudit_probe_vendor, through ctypes, around one replay of the candidate's
 * call), the output of every cuBLAS GEMM is replaced, after the real call
 * returned, by noise of its own mean and standard deviation, from a seeded
 * generator: the runner then compares the candidate's output with the
 * unperturbed one.
 *
 * Nothing here runs unless the runner switched it on: a harness under
 * `kaudit run` never calls kaudit_probe_vendor, and with the mode off each
 * wrapper pays one atomic load.  Every failure (a driver call, memory) is
 * counted, never raised: the runner sees fewer outputs perturbed than calls
 * made and the probe is unresolved.  The copies use the driver (cuMemcpyAsync on
 * the call's stream, waited for there), which every CUDA program has loaded.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <math.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "preload_internal.h"
#include "vendor_api.h"

enum { KAT_PROBE_OFF = 0, KAT_PROBE_COUNT = 1, KAT_PROBE_PERTURB = 2 };

static _Atomic int probe_mode;
static _Atomic uint64_t probe_seed, probe_calls, probe_perturbed, probe_failed;

/* Set the mode (0 off, 1 count the GEMM calls only, 2 perturb their outputs) and
 * the seed; the counters start again. */
KAT_EXPORT void kaudit_probe_vendor(int mode, uint64_t seed)
{
    atomic_store(&probe_seed, seed);
    atomic_store(&probe_calls, 0);
    atomic_store(&probe_perturbed, 0);
    atomic_store(&probe_failed, 0);
    atomic_store(&probe_mode, mode == KAT_PROBE_COUNT || mode == KAT_PROBE_PERTURB ? mode : KAT_PROBE_OFF);
}

/* What happened since the mode was set: calls seen, outputs replaced, failures. */
KAT_EXPORT void kaudit_probe_vendor_counts(uint64_t *calls, uint64_t *perturbed, uint64_t *failed)
{
    if (calls)
        *calls = atomic_load(&probe_calls);
    if (perturbed)
        *perturbed = atomic_load(&probe_perturbed);
    if (failed)
        *failed = atomic_load(&probe_failed);
}

int kat_probe_vendor_on(void)
{
    return atomic_load_explicit(&probe_mode, memory_order_relaxed) != KAT_PROBE_OFF;
}

/* ---- the driver ------------------------------------------------------------------ */

/* The copies are issued on the call's own stream and waited for there, so the
 * replaced values are in place before any later work of that stream (a
 * pageable copy on the legacy stream is ordered against no non-blocking stream). */
typedef int (*kat_fn_memcpy_async)(uint64_t dst, uint64_t src, size_t bytes, void *stream);
typedef int (*kat_fn_stream_sync)(void *stream);
typedef int (*kat_fn_stream_capturing)(void *stream, int *status);
typedef KAT_PROTO_cublasGetStream_v2(kat_fn_get_stream);

struct driver {
    kat_fn_memcpy_async copy;       /* cuMemcpyAsync: unified addressing tells host from device */
    kat_fn_stream_sync sync;
    kat_fn_stream_capturing capturing;
    void *stream;
};

static int driver_of(struct driver *d)
{
    void *lib = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
    if (!lib)
        return -1;
    d->copy = (kat_fn_memcpy_async)dlsym(lib, "cuMemcpyAsync");
    d->sync = (kat_fn_stream_sync)dlsym(lib, "cuStreamSynchronize");
    d->capturing = (kat_fn_stream_capturing)dlsym(lib, "cuStreamIsCapturing");
    dlclose(lib); /* NOLOAD: the program keeps it loaded */
    return d->copy && d->sync ? 0 : -1;
}

/* The most one replaced matrix may span: a probe's outputs are far smaller, and a
 * call claiming more (sizes that overflow, or nonsense the library accepted with
 * nothing to compute) is counted as not replaced rather than allocated. */
#define KAT_PROBE_SPAN_MAX ((size_t)1 << 30)

/* ---- noise ------------------------------------------------------------------------- */

static uint64_t splitmix(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* A standard normal deviate (Box-Muller on two uniforms in (0, 1)). */
static double normal(uint64_t *s)
{
    double u = ((double)(splitmix(s) >> 11) + 0.5) / 9007199254740992.0;
    double v = ((double)(splitmix(s) >> 11) + 0.5) / 9007199254740992.0;
    return sqrt(-2.0 * log(u)) * cos(6.283185307179586 * v);
}

static double load(const unsigned char *p, int32_t type)
{
    switch (type) {
    case KAT_CUDA_R_32F: { float f; memcpy(&f, p, 4); return f; }
    case KAT_CUDA_R_64F: { double d; memcpy(&d, p, 8); return d; }
    case KAT_CUDA_R_16F: { _Float16 h; memcpy(&h, p, 2); return (double)h; }
    case KAT_CUDA_R_16BF: {
        uint16_t b;
        memcpy(&b, p, 2);
        uint32_t w = (uint32_t)b << 16;
        float f;
        memcpy(&f, &w, 4);
        return f;
    }
    default: return NAN;
    }
}

static void store(unsigned char *p, int32_t type, double v)
{
    switch (type) {
    case KAT_CUDA_R_32F: { float f = (float)v; memcpy(p, &f, 4); break; }
    case KAT_CUDA_R_64F: memcpy(p, &v, 8); break;
    case KAT_CUDA_R_16F: { _Float16 h = (_Float16)v; memcpy(p, &h, 2); break; }
    case KAT_CUDA_R_16BF: {
        float f = (float)v;
        uint32_t w;
        memcpy(&w, &f, 4);
        w += 0x7fff + ((w >> 16) & 1); /* round to nearest even (noise is finite) */
        uint16_t b = (uint16_t)(w >> 16);
        memcpy(p, &b, 2);
        break;
    }
    default: break;
    }
}

static size_t type_size(int32_t type)
{
    switch (type) {
    case KAT_CUDA_R_32F: return 4;
    case KAT_CUDA_R_64F: return 8;
    case KAT_CUDA_R_16F:
    case KAT_CUDA_R_16BF: return 2;
    default: return 0;
    }
}

/*
 * Replace one column-major m x n matrix at C (leading dimension ldc) of
 * `type`: read the span it covers, take the mean and standard deviation of
 * its m x n elements, write noise of those into them (what lies between the
 * columns is written back as it was read).
 */
static int perturb_matrix(const struct driver *d, void *C, int64_t m, int64_t n, int64_t ldc, int32_t type,
                          uint64_t *state)
{
    size_t es = type_size(type);
    if (m == 0 || n == 0)
        return 0; /* nothing to replace: nothing flows from it */
    if (!es || m < 0 || n < 0 || ldc < m || !C)
        return -1;
    size_t cols, elems, span;
    if (__builtin_mul_overflow((size_t)ldc, (size_t)(n - 1), &cols) ||
        __builtin_add_overflow(cols, (size_t)m, &elems) || __builtin_mul_overflow(elems, es, &span) ||
        span > KAT_PROBE_SPAN_MAX)
        return -1;
    unsigned char *h = malloc(span);
    if (!h)
        return -1;
    if (d->copy((uint64_t)(uintptr_t)h, (uint64_t)(uintptr_t)C, span, d->stream) != 0 || d->sync(d->stream) != 0) {
        free(h);
        return -1;
    }
    double sum = 0, sq = 0;
    uint64_t count = 0;
    for (int64_t j = 0; j < n; j++)
        for (int64_t i = 0; i < m; i++) {
            double v = load(h + ((size_t)j * (size_t)ldc + (size_t)i) * es, type);
            if (isfinite(v)) {
                sum += v;
                sq += v * v;
                count++;
            }
        }
    double mean = count ? sum / (double)count : 0;
    double var = count > 1 ? (sq - sum * mean) / (double)(count - 1) : 0;
    double sd = var > 0 ? sqrt(var) : 0;
    if (!(sd > 0))
        sd = fabs(mean) > 1 ? fabs(mean) : 1; /* a constant output: spread by its magnitude, or 1 */
    for (int64_t j = 0; j < n; j++)
        for (int64_t i = 0; i < m; i++)
            store(h + ((size_t)j * (size_t)ldc + (size_t)i) * es, type, mean + sd * normal(state));
    /* (the rows between m and ldc go back as read: the call's stream was idle since the read) */
    int rc = d->copy((uint64_t)(uintptr_t)C, (uint64_t)(uintptr_t)h, span, d->stream) != 0 || d->sync(d->stream) != 0
                 ? -1
                 : 0;
    free(h);
    return rc;
}

void kat_probe_vendor_gemm(kat_cublasHandle_t handle, int32_t ctype, void *C, int64_t m, int64_t n, int64_t ldc,
                           int64_t batch, int64_t stride_c, int status, uint32_t depth)
{
    int mode = atomic_load(&probe_mode);
    /* outermost calls only, successful or not, as the analyzer counts them in the trace */
    if (mode == KAT_PROBE_OFF || depth != 1)
        return;
    if (status != KAT_CUBLAS_STATUS_SUCCESS) {
        atomic_fetch_add(&probe_calls, 1);
        if (mode == KAT_PROBE_PERTURB)
            atomic_fetch_add(&probe_failed, 1);
        return;
    }
    uint64_t call = atomic_fetch_add(&probe_calls, 1);
    if (mode != KAT_PROBE_PERTURB)
        return;
    static void *_Atomic stream_slot;
    kat_fn_get_stream *get_stream = (kat_fn_get_stream *)kat_vendor_real(&stream_slot, KAT_LIB_CUBLAS,
                                                                         "cublasGetStream_v2");
    struct driver d;
    kat_cudaStream_t stream = NULL;
    int capture = 0;
    if (!C || !get_stream || get_stream(handle, &stream) != KAT_CUBLAS_STATUS_SUCCESS || driver_of(&d) != 0 ||
        (d.capturing && (d.capturing(stream, &capture) != 0 || capture != 0)) || d.sync(stream) != 0) {
        /* (a stream being captured into a graph is not synchronized: that would break the capture) */
        atomic_fetch_add(&probe_failed, 1);
        return;
    }
    d.stream = stream;
    uint64_t state = atomic_load(&probe_seed) * 1000003u + call * 131u;
    size_t es = type_size(ctype);
    int64_t batches = batch > 0 ? batch : 1;
    size_t step;
    if (stride_c < 0 || (batches > 1 && (__builtin_mul_overflow((size_t)stride_c, es, &step) ||
                                         (size_t)batches > KAT_PROBE_SPAN_MAX / (step ? step : 1)))) {
        atomic_fetch_add(&probe_failed, 1);
        return;
    }
    for (int64_t b = 0; b < batches; b++) {
        void *Cb = (unsigned char *)C + (size_t)b * (size_t)stride_c * es;
        if (perturb_matrix(&d, Cb, m, n, ldc, ctype, &state) != 0) {
            atomic_fetch_add(&probe_failed, 1);
            return;
        }
    }
    atomic_fetch_add(&probe_perturbed, 1);
}

void kat_probe_vendor_unsupported(int status, uint32_t depth)
{
    /* a call whose output this channel cannot replace (pointer arrays in device
     * memory, grouped, GEMV, complex types): counted, so that the replay is unresolved */
    int mode = atomic_load(&probe_mode);
    (void)status;
    if (mode == KAT_PROBE_OFF || depth != 1)
        return;
    atomic_fetch_add(&probe_calls, 1);
    if (mode == KAT_PROBE_PERTURB)
        atomic_fetch_add(&probe_failed, 1);
}
