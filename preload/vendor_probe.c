/*
 * vendor_probe.c - the causal probe's vendor-boundary channel (docs/audit.md,
 * "Causal probe"): work a candidate hands to cuBLAS below the framework (an
 * extension calling cublasSgemm, cublasLtMatmul or cudnnConvolutionForward
 * itself) never passes the ATen dispatcher, so the runner perturbs it here.
 * When `kaudit audit`'s runner asks for it (kaudit_probe_vendor, through
 * ctypes, around one replay of the candidate's call), the output of every
 * GEMM (cuBLAS, cuBLASLt) and convolution (cuDNN, legacy and backend) is
 * replaced, after the real call returned, by noise of its own mean and
 * standard deviation, from a seeded generator: the runner then compares the
 * candidate's output with the unperturbed one.  kaudit_probe_vendor_set
 * narrows the replacement to one family or one call, or to every call but
 * those (localization); every call is counted, and the first
 * KAT_PROBE_CALLS_KEPT are described (kaudit_probe_vendor_call_info) so the
 * runner can check that a localized replay made the same calls as the
 * baseline.
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
#include <pthread.h>
#include <math.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "preload_internal.h"
#include "vendor_api.h"

/* The families a call belongs to (the analyzer's classes of the same calls). */
enum { KAT_PROBE_ALL = 0, KAT_PROBE_FAMILIES = 3 };

enum { KAT_PROBE_OFF = 0, KAT_PROBE_COUNT = 1, KAT_PROBE_PERTURB = 2 };

static _Atomic int probe_mode;
static _Atomic uint64_t probe_seed;
/* per family (index 0: every family): calls seen, outputs replaced, failures */
static _Atomic uint64_t probe_calls[KAT_PROBE_FAMILIES], probe_perturbed[KAT_PROBE_FAMILIES],
    probe_failed[KAT_PROBE_FAMILIES];
/* the replacement narrowed to one call (its index among the calls seen) or to a
   set of families (bit 1 << family), -1 and 0: every call; or, with
   select_except, to every call but those */
static _Atomic int64_t select_call = -1;
static _Atomic unsigned select_families;
static _Atomic int select_except;

/* What the first calls were, so that a localized replay can be aligned with the baseline. */
struct call_info {
    _Atomic int64_t family, library, m, n, k;
};
static struct call_info calls_kept[KAT_PROBE_CALLS_KEPT];

/* Set the selection, then the mode (0 off, 1 count the calls only, 2 replace
 * their outputs) and the seed; the counters start again.  A call is selected
 * when it is number `call` (counting from 0 since the mode was set; -1: any)
 * of the families in `families` (bits 1 << KAT_PROBE_GEMM, 1 << KAT_PROBE_CONV;
 * 0: any), or, with `except`, when it is not: every call but one, or but one
 * family (the localizing replays compare those with the replay of all). */
KAT_EXPORT void kaudit_probe_vendor_set(int mode, uint64_t seed, int64_t call, unsigned families, int except)
{
    atomic_store(&probe_mode, KAT_PROBE_OFF);
    atomic_store(&probe_seed, seed);
    for (int f = 0; f < KAT_PROBE_FAMILIES; f++) {
        atomic_store(&probe_calls[f], 0);
        atomic_store(&probe_perturbed[f], 0);
        atomic_store(&probe_failed[f], 0);
    }
    /* the selection before the mode: no call of another thread sees a mode without it */
    atomic_store(&select_call, call < 0 ? -1 : call);
    atomic_store(&select_families, families);
    atomic_store(&select_except, except != 0);
    atomic_store(&probe_mode, mode == KAT_PROBE_COUNT || mode == KAT_PROBE_PERTURB ? mode : KAT_PROBE_OFF);
}

/* Every call selected. */
KAT_EXPORT void kaudit_probe_vendor(int mode, uint64_t seed)
{
    kaudit_probe_vendor_set(mode, seed, -1, 0u, 0);
}

/* What happened since the mode was set, for one family (KAT_PROBE_GEMM,
 * KAT_PROBE_CONV; 0: all): calls seen, outputs replaced, failures. */
KAT_EXPORT void kaudit_probe_vendor_family_counts(int family, uint64_t *calls, uint64_t *perturbed,
                                                  uint64_t *failed)
{
    int f = family > 0 && family < KAT_PROBE_FAMILIES ? family : KAT_PROBE_ALL;
    if (calls)
        *calls = atomic_load(&probe_calls[f]);
    if (perturbed)
        *perturbed = atomic_load(&probe_perturbed[f]);
    if (failed)
        *failed = atomic_load(&probe_failed[f]);
}

/* Call number i as it was seen: family, library (KAT_LIB_*), m, n, k (0 for a
 * convolution).  0 when i is past the calls seen or kept. */
KAT_EXPORT int kaudit_probe_vendor_call_info(uint64_t i, int64_t out[5])
{
    if (!out || i >= KAT_PROBE_CALLS_KEPT || i >= atomic_load(&probe_calls[KAT_PROBE_ALL]))
        return 0;
    const struct call_info *c = &calls_kept[i];
    out[0] = atomic_load(&c->family);
    out[1] = atomic_load(&c->library);
    out[2] = atomic_load(&c->m);
    out[3] = atomic_load(&c->n);
    out[4] = atomic_load(&c->k);
    return 1;
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

struct driver {
    kat_fn_memcpy_async copy;       /* cuMemcpyAsync: unified addressing tells host from device */
    kat_fn_stream_sync sync;
    kat_fn_stream_capturing capturing;
};

static struct driver driver;
static pthread_once_t driver_once = PTHREAD_ONCE_INIT;

static void driver_resolve(void)
{
    void *lib = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
    if (!lib)
        return;
    driver.copy = (kat_fn_memcpy_async)dlsym(lib, "cuMemcpyAsync");
    driver.sync = (kat_fn_stream_sync)dlsym(lib, "cuStreamSynchronize");
    driver.capturing = (kat_fn_stream_capturing)dlsym(lib, "cuStreamIsCapturing");
    dlclose(lib); /* NOLOAD: the program keeps it loaded (a library call made it so) */
}

/* The driver's entry points, resolved once; NULL when the program has no driver. */
static const struct driver *driver_get(void)
{
    pthread_once(&driver_once, driver_resolve);
    return driver.copy && driver.sync ? &driver : NULL;
}

/* The most one replaced output may span: a probe's outputs are far smaller, and a
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

/* The element offsets of an output, dimension by dimension (an odometer). */
struct walk {
    int nd;
    const int64_t *dims, *strides;
    int64_t index[KAT_PROBE_DIMS];
    size_t offset;
};

static int walk_next(struct walk *w)
{
    for (int d = w->nd - 1; d >= 0; d--) {
        if (++w->index[d] < w->dims[d]) {
            w->offset += (size_t)w->strides[d];
            return 1;
        }
        w->offset -= (size_t)w->strides[d] * (size_t)(w->dims[d] - 1);
        w->index[d] = 0;
    }
    return 0;
}

/* The number of elements an output has (dims all positive: checked before);
 * SIZE_MAX when it overflows. */
static size_t count_elements(const struct kat_probe_output *o)
{
    size_t n = 1;
    for (int i = 0; i < o->ndims; i++)
        if (__builtin_mul_overflow(n, (size_t)o->dims[i], &n))
            return SIZE_MAX;
    return n;
}

/*
 * Replace the elements of one output (dims and strides in elements): read the
 * span they cover, take their mean and standard deviation, write noise of those
 * into them; what lies between them (padding, other tensors' data) is written
 * back as it was read.
 */
static int perturb_output(const struct driver *d, const struct kat_probe_output *o, uint64_t *state)
{
    size_t es = type_size(o->type), last = 0, span;
    if (!es || !o->base || o->ndims < 1 || o->ndims > KAT_PROBE_DIMS)
        return -1;
    for (int i = 0; i < o->ndims; i++) {
        size_t step;
        if (o->dims[i] == 0)
            return 0; /* nothing to replace: nothing flows from it */
        if (o->dims[i] < 0 || o->strides[i] < 0 ||
            __builtin_mul_overflow((size_t)(o->dims[i] - 1), (size_t)o->strides[i], &step) ||
            __builtin_add_overflow(last, step, &last))
            return -1;
    }
    if (__builtin_add_overflow(last, (size_t)1, &span) || __builtin_mul_overflow(span, es, &span) ||
        span > KAT_PROBE_SPAN_MAX)
        return -1;
    /* more elements than places: overlapping strides (a broadcast), not an output; and
       a walk over them could run for ever */
    if (count_elements(o) > span / es)
        return -1;
    /* the elements go back by runs of the innermost dimension, which must be contiguous
       unless the output is dense (cuDNN's NHWC y: its innermost listed dimension is w) */
    if (count_elements(o) != span / es && o->strides[o->ndims - 1] != 1)
        return -1;
    unsigned char *h = malloc(span);
    if (!h)
        return -1;
    if (d->copy((uint64_t)(uintptr_t)h, (uint64_t)(uintptr_t)o->base, span, o->stream) != 0 ||
        d->sync(o->stream) != 0) {
        free(h);
        return -1;
    }
    double sum = 0, sq = 0;
    uint64_t count = 0;
    struct walk w = { .nd = o->ndims, .dims = o->dims, .strides = o->strides };
    do {
        double v = load(h + w.offset * es, o->type);
        if (isfinite(v)) {
            sum += v;
            sq += v * v;
            count++;
        }
    } while (walk_next(&w));
    double mean = count ? sum / (double)count : 0;
    double var = count > 1 ? (sq - sum * mean) / (double)(count - 1) : 0;
    double sd = var > 0 ? sqrt(var) : 0;
    if (!(sd > 0))
        sd = fabs(mean) > 1 ? fabs(mean) : 1; /* a constant output: spread by its magnitude, or 1 */
    w = (struct walk){ .nd = o->ndims, .dims = o->dims, .strides = o->strides };
    do
        store(h + w.offset * es, o->type, mean + sd * normal(state));
    while (walk_next(&w));
    /* Only the elements are written back: what lies between them (padding rows,
       gaps between batches, another tensor's data) may be written meanwhile by
       another stream or thread.  Dense outputs in one copy, else one copy per
       run of the innermost dimension. */
    int rc = 0;
    if (count_elements(o) == span / es) {
        rc = d->copy((uint64_t)(uintptr_t)o->base, (uint64_t)(uintptr_t)h, span, o->stream);
    } else {
        int inner = o->ndims - 1;
        size_t run = (size_t)o->dims[inner] * es;
        struct walk outer = { .nd = inner, .dims = o->dims, .strides = o->strides };
        if (inner == 0) /* a single strided run: only reached with a stride above 1 (refused below) */
            rc = -1;
        while (rc == 0 && inner > 0) {
            size_t at = outer.offset * es;
            rc = d->copy((uint64_t)(uintptr_t)o->base + at, (uint64_t)(uintptr_t)(h + at), run, o->stream);
            if (!walk_next(&outer))
                break;
        }
    }
    if (rc == 0)
        rc = d->sync(o->stream);
    free(h);
    return rc != 0 ? -1 : 0;
}

/* ---- the calls ------------------------------------------------------------------------ */

void kat_probe_vendor_call(const struct kat_probe_output *o, int succeeded, uint32_t depth)
{
    int mode = atomic_load(&probe_mode);
    /* outermost calls only, successful or not, as the analyzer counts them in the trace */
    if (mode == KAT_PROBE_OFF || depth != 1 || o->family <= 0 || o->family >= KAT_PROBE_FAMILIES)
        return;
    uint64_t call = atomic_fetch_add(&probe_calls[KAT_PROBE_ALL], 1);
    atomic_fetch_add(&probe_calls[o->family], 1);
    if (call < KAT_PROBE_CALLS_KEPT) {
        struct call_info *c = &calls_kept[call];
        atomic_store(&c->family, o->family);
        atomic_store(&c->library, (int64_t)o->library);
        atomic_store(&c->m, o->m);
        atomic_store(&c->n, o->n);
        atomic_store(&c->k, o->k);
    }
    int64_t only = atomic_load(&select_call);
    unsigned families = atomic_load(&select_families);
    int match = (only < 0 || (uint64_t)only == call) && (!families || (families & (1u << o->family)));
    if (mode != KAT_PROBE_PERTURB || match == atomic_load(&select_except))
        return;
    const struct driver *d = driver_get();
    int capture = 0;
    uint64_t state = atomic_load(&probe_seed) * 1000003u + call * 131u;
    /* (a stream being captured into a graph is not synchronized: that would break the capture) */
    if (!succeeded || !o->have_stream || !d || (d->capturing && (d->capturing(o->stream, &capture) != 0 || capture)) ||
        d->sync(o->stream) != 0 || perturb_output(d, o, &state) != 0) {
        atomic_fetch_add(&probe_failed[KAT_PROBE_ALL], 1);
        atomic_fetch_add(&probe_failed[o->family], 1);
        return;
    }
    atomic_fetch_add(&probe_perturbed[KAT_PROBE_ALL], 1);
    atomic_fetch_add(&probe_perturbed[o->family], 1);
}

/* cuBLAS: the stream is the handle's. */
typedef KAT_PROTO_cublasGetStream_v2(kat_fn_cublas_get_stream);

void kat_probe_vendor_gemm(kat_cublasHandle_t handle, int32_t ctype, void *C, int64_t m, int64_t n, int64_t k,
                           int64_t ldc, int64_t batch, int64_t stride_c, int status, uint32_t depth)
{
    if (depth != 1)
        return;
    static void *_Atomic stream_slot;
    kat_fn_cublas_get_stream *get_stream =
        (kat_fn_cublas_get_stream *)kat_vendor_real(&stream_slot, KAT_LIB_CUBLAS, "cublasGetStream_v2");
    struct kat_probe_output o = { .family = KAT_PROBE_GEMM, .library = KAT_LIB_CUBLAS, .m = m, .n = n, .k = k,
                                  .base = C, .type = ctype };
    kat_cudaStream_t stream = NULL;
    if (get_stream && get_stream(handle, &stream) == KAT_CUBLAS_STATUS_SUCCESS) {
        o.stream = stream;
        o.have_stream = 1;
    }
    /* column-major m x n, leading dimension ldc, batch matrices stride_c apart */
    if (ldc >= m && stride_c >= 0) {
        o.ndims = 3;
        o.dims[0] = batch > 0 ? batch : 0; /* no batch: nothing written, nothing to replace */
        o.strides[0] = stride_c;
        o.dims[1] = n;
        o.strides[1] = ldc;
        o.dims[2] = m;
        o.strides[2] = 1;
    }
    kat_probe_vendor_call(&o, status == KAT_CUBLAS_STATUS_SUCCESS, depth);
}

void kat_probe_vendor_unsupported(int status, uint32_t depth)
{
    /* a call whose output this channel cannot replace (pointer arrays in device
     * memory, grouped, GEMV, complex types): counted, so that the replay is unresolved */
    struct kat_probe_output o = { .family = KAT_PROBE_GEMM, .library = KAT_LIB_CUBLAS };
    kat_probe_vendor_call(&o, status == KAT_CUBLAS_STATUS_SUCCESS, depth);
}
