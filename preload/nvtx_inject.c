/*
 * nvtx_inject.c - NVTX v3 injection: ranges and marks as KAT_REC_NVTX records.
 *
 * NVTX3 is header-only, so every library that uses it carries its own copy
 * (the program, libtorch, Triton...).  At its first NVTX call each copy reads
 * NVTX_INJECTION64_PATH, dlopens that library (this one, already preloaded, so
 * the same object comes back) and calls InitializeInjectionNvtx2 with its own
 * nvtxGetExportTable.  We then write our handlers into that copy's function
 * pointer slots; slots we leave empty become no-ops.
 *
 * The handlers run on the program's hot path (PyTorch pushes ranges per op),
 * so they take no lock of their own: nesting depth is thread-local, range ids
 * come from one atomic counter, and the only shared work is what kat_intern
 * and kat_emit do.  They follow NVTX semantics whatever the trace does:
 *   - push returns the 0-based level of the range it opens, pop the level of
 *     the range it closes, or a negative value when the thread's stack of that
 *     domain is empty.  Each domain has its own stack per thread, and the
 *     default domain is shared by every NVTX copy (the stacks live here).
 *   - start returns a range id unique in the process (never 0), end takes it.
 * The record's range_id field is the level for push/pop (a push and its pop
 * carry the same level) and the NVTX range id for start/end.  A pop on an
 * empty stack is recorded with range_id UINT64_MAX: the program's nesting is
 * broken, which is evidence too.
 *
 * Domain and registered-string handles are small records we allocate and
 * never free: a handle may be used by another thread while it is destroyed,
 * and a freed address could come back as a different domain whose nesting
 * the thread-local table would then confuse.  Creating the same name twice
 * returns the same handle, so a program that creates domains in a loop does
 * not grow memory.  A handle caches its name's string id: the writer keeps
 * one string table per process image, and a fork child's trace re-defines
 * every id the parent had, so an id stays valid for the handle's lifetime.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <wchar.h>

#define NVTX_NO_IMPL
#include <nvtx3/nvToolsExt.h>

#include "preload_internal.h"

/* ---- handles --------------------------------------------------------------- */

#define KAT_NVTX_DOMAIN_MAGIC 0x6b61444fu  /* "kaDO" */
#define KAT_NVTX_STRING_MAGIC 0x6b615354u  /* "kaST" */

struct nvtxDomainRegistration_st {
    uint32_t magic;
    _Atomic uint32_t string_id;         /* 0 until interned */
    struct nvtxDomainRegistration_st *next;
    char name[];                        /* UTF-8 */
};

struct nvtxStringRegistration_st {
    uint32_t magic;
    _Atomic uint32_t string_id;         /* 0 until interned */
    struct nvtxStringRegistration_st *next;
    struct nvtxDomainRegistration_st *domain;
    char text[];                        /* UTF-8 */
};

/* Lock-free lists: pushes race with CAS; a lost race just allocates twice. */
static _Atomic(struct nvtxDomainRegistration_st *) kat_domains;
static _Atomic(struct nvtxStringRegistration_st *) kat_strings;

/* ---- per-thread nesting ------------------------------------------------------ */

#define KAT_NVTX_DOMAIN_SLOTS 16

struct kat_nvtx_depth {
    const void *domain;                 /* slot 0: the default domain (NULL) */
    int32_t depth;
};

static KAT_TLS struct kat_nvtx_depth kat_nvtx_depths[KAT_NVTX_DOMAIN_SLOTS];

/* The depth counter of `domain` on this thread.  Beyond the slots, domains
 * share the last one: their levels are then approximate, never a crash. */
static int32_t *kat_nvtx_depth_of(const void *domain)
{
    if (!domain)
        return &kat_nvtx_depths[0].depth;
    for (int i = 1; i < KAT_NVTX_DOMAIN_SLOTS; i++) {
        if (kat_nvtx_depths[i].domain == domain)
            return &kat_nvtx_depths[i].depth;
        if (!kat_nvtx_depths[i].domain) {
            kat_nvtx_depths[i].domain = domain;
            kat_nvtx_depths[i].depth = 0;
            return &kat_nvtx_depths[i].depth;
        }
    }
    return &kat_nvtx_depths[KAT_NVTX_DOMAIN_SLOTS - 1].depth;
}

static _Atomic uint64_t kat_nvtx_next_range = 1;

/* ---- strings ------------------------------------------------------------------ */

#define KAT_NVTX_WIDE_MAX 2048          /* UTF-8 bytes kept of a wide message */

/* wchar_t is UTF-32 on Linux; no locale is involved.  Invalid code points
 * become U+FFFD; the result is cut at a character boundary. */
static size_t kat_wide_to_utf8(const wchar_t *w, char *out, size_t cap)
{
    size_t n = 0;
    if (!w || cap == 0)
        return 0;
    for (; *w; w++) {
        uint32_t c = (uint32_t)*w;
        char b[4];
        size_t len;
        if (c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
            c = 0xfffd;
        if (c < 0x80) {
            b[0] = (char)c;
            len = 1;
        } else if (c < 0x800) {
            b[0] = (char)(0xc0 | (c >> 6));
            b[1] = (char)(0x80 | (c & 0x3f));
            len = 2;
        } else if (c < 0x10000) {
            b[0] = (char)(0xe0 | (c >> 12));
            b[1] = (char)(0x80 | ((c >> 6) & 0x3f));
            b[2] = (char)(0x80 | (c & 0x3f));
            len = 3;
        } else {
            b[0] = (char)(0xf0 | (c >> 18));
            b[1] = (char)(0x80 | ((c >> 12) & 0x3f));
            b[2] = (char)(0x80 | ((c >> 6) & 0x3f));
            b[3] = (char)(0x80 | (c & 0x3f));
            len = 4;
        }
        if (n + len > cap)
            break;
        memcpy(out + n, b, len);
        n += len;
    }
    return n;
}

static uint32_t kat_intern_wide(const wchar_t *w)
{
    char buf[KAT_NVTX_WIDE_MAX];
    if (!w)
        return 0;
    size_t n = kat_wide_to_utf8(w, buf, sizeof buf);
    return kat_intern_n(buf, n);
}

/* Intern once per handle; 0 (tracing off, no memory) is retried next time. */
static uint32_t kat_intern_cached(_Atomic uint32_t *cache, const char *text)
{
    uint32_t id = atomic_load_explicit(cache, memory_order_relaxed);
    if (!id) {
        id = kat_intern(text);
        atomic_store_explicit(cache, id, memory_order_relaxed);
    }
    return id;
}

static uint32_t kat_intern_domain(struct nvtxDomainRegistration_st *d)
{
    if (!d || d->magic != KAT_NVTX_DOMAIN_MAGIC)
        return 0;
    return kat_intern_cached(&d->string_id, d->name);
}

/* The message of an event-attributes structure: ASCII, wide or registered. */
static uint32_t kat_intern_attributes(const nvtxEventAttributes_t *a)
{
    if (!a || a->size < offsetof(nvtxEventAttributes_t, message) + sizeof a->message)
        return 0;
    switch (a->messageType) {
    case NVTX_MESSAGE_TYPE_ASCII:
        return kat_intern(a->message.ascii);
    case NVTX_MESSAGE_TYPE_UNICODE:
        return kat_intern_wide(a->message.unicode);
    case NVTX_MESSAGE_TYPE_REGISTERED: {
        struct nvtxStringRegistration_st *s = a->message.registered;
        if (!s || s->magic != KAT_NVTX_STRING_MAGIC)
            return 0;
        return kat_intern_cached(&s->string_id, s->text);
    }
    default:
        return 0;
    }
}

/* ---- records ------------------------------------------------------------------ */

enum kat_nvtx_msg { KAT_MSG_NONE, KAT_MSG_ASCII, KAT_MSG_WIDE, KAT_MSG_ATTR };

struct kat_nvtx_message {
    enum kat_nvtx_msg type;
    const void *ptr;
};

static void kat_nvtx_emit(uint32_t kind, uint64_t range_id, struct kat_nvtx_message msg,
                          struct nvtxDomainRegistration_st *domain, uint64_t time_ns)
{
    /* No kat_tracing_enabled() here: kat_intern and kat_emit do nothing when
     * tracing is off, and each check is one more lock on a hot path. */
    int saved_errno = errno;
    struct kat_nvtx_rec rec;
    memset(&rec, 0, sizeof rec);
    rec.kind = kind;
    rec.thread_id = kat_tid();
    rec.range_id = range_id;
    switch (msg.type) {
    case KAT_MSG_ASCII: rec.message_string = kat_intern((const char *)msg.ptr); break;
    case KAT_MSG_WIDE: rec.message_string = kat_intern_wide((const wchar_t *)msg.ptr); break;
    case KAT_MSG_ATTR:
        rec.message_string = kat_intern_attributes((const nvtxEventAttributes_t *)msg.ptr);
        break;
    case KAT_MSG_NONE: break;
    }
    rec.domain_string = kat_intern_domain(domain);
    rec.time_ns = time_ns;
    kat_emit(KAT_REC_NVTX, &rec, sizeof rec);
    errno = saved_errno;
}

#define MSG(t, p) ((struct kat_nvtx_message){ (t), (p) })

static int kat_nvtx_push(struct nvtxDomainRegistration_st *domain, struct kat_nvtx_message msg)
{
    uint64_t t = kat_now_ns();
    int32_t *depth = kat_nvtx_depth_of(domain);
    int level = (*depth)++;
    kat_nvtx_emit(KAT_NVTX_PUSH, (uint64_t)level, msg, domain, t);
    return level;
}

static int kat_nvtx_pop(struct nvtxDomainRegistration_st *domain)
{
    uint64_t t = kat_now_ns();
    int32_t *depth = kat_nvtx_depth_of(domain);
    if (*depth <= 0) {
        kat_nvtx_emit(KAT_NVTX_POP, UINT64_MAX, MSG(KAT_MSG_NONE, NULL), domain, t);
        return -1;
    }
    int level = --(*depth);
    kat_nvtx_emit(KAT_NVTX_POP, (uint64_t)level, MSG(KAT_MSG_NONE, NULL), domain, t);
    return level;
}

static nvtxRangeId_t kat_nvtx_start(struct nvtxDomainRegistration_st *domain,
                                    struct kat_nvtx_message msg)
{
    uint64_t t = kat_now_ns();
    nvtxRangeId_t id = atomic_fetch_add_explicit(&kat_nvtx_next_range, 1, memory_order_relaxed);
    kat_nvtx_emit(KAT_NVTX_START, id, msg, domain, t);
    return id;
}

static void kat_nvtx_end(struct nvtxDomainRegistration_st *domain, nvtxRangeId_t id)
{
    kat_nvtx_emit(KAT_NVTX_END, id, MSG(KAT_MSG_NONE, NULL), domain, kat_now_ns());
}

static void kat_nvtx_mark(struct nvtxDomainRegistration_st *domain, struct kat_nvtx_message msg)
{
    kat_nvtx_emit(KAT_NVTX_MARK, 0, msg, domain, kat_now_ns());
}

/* ---- CORE module handlers ------------------------------------------------------ */

static void NVTX_API kat_MarkEx(const nvtxEventAttributes_t *a) { kat_nvtx_mark(NULL, MSG(KAT_MSG_ATTR, a)); }
static void NVTX_API kat_MarkA(const char *m) { kat_nvtx_mark(NULL, MSG(KAT_MSG_ASCII, m)); }
static void NVTX_API kat_MarkW(const wchar_t *m) { kat_nvtx_mark(NULL, MSG(KAT_MSG_WIDE, m)); }

static nvtxRangeId_t NVTX_API kat_RangeStartEx(const nvtxEventAttributes_t *a)
{
    return kat_nvtx_start(NULL, MSG(KAT_MSG_ATTR, a));
}
static nvtxRangeId_t NVTX_API kat_RangeStartA(const char *m) { return kat_nvtx_start(NULL, MSG(KAT_MSG_ASCII, m)); }
static nvtxRangeId_t NVTX_API kat_RangeStartW(const wchar_t *m) { return kat_nvtx_start(NULL, MSG(KAT_MSG_WIDE, m)); }
static void NVTX_API kat_RangeEnd(nvtxRangeId_t id) { kat_nvtx_end(NULL, id); }

static int NVTX_API kat_RangePushEx(const nvtxEventAttributes_t *a) { return kat_nvtx_push(NULL, MSG(KAT_MSG_ATTR, a)); }
static int NVTX_API kat_RangePushA(const char *m) { return kat_nvtx_push(NULL, MSG(KAT_MSG_ASCII, m)); }
static int NVTX_API kat_RangePushW(const wchar_t *m) { return kat_nvtx_push(NULL, MSG(KAT_MSG_WIDE, m)); }
static int NVTX_API kat_RangePop(void) { return kat_nvtx_pop(NULL); }

/* ---- CORE2 module handlers (domains) -------------------------------------------- */

static void NVTX_API kat_DomainMarkEx(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a)
{
    kat_nvtx_mark(d, MSG(KAT_MSG_ATTR, a));
}
static nvtxRangeId_t NVTX_API kat_DomainRangeStartEx(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a)
{
    return kat_nvtx_start(d, MSG(KAT_MSG_ATTR, a));
}
static void NVTX_API kat_DomainRangeEnd(nvtxDomainHandle_t d, nvtxRangeId_t id) { kat_nvtx_end(d, id); }
static int NVTX_API kat_DomainRangePushEx(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a)
{
    return kat_nvtx_push(d, MSG(KAT_MSG_ATTR, a));
}
static int NVTX_API kat_DomainRangePop(nvtxDomainHandle_t d) { return kat_nvtx_pop(d); }

static nvtxDomainHandle_t kat_domain_create(const char *name, size_t len)
{
    for (struct nvtxDomainRegistration_st *d = atomic_load(&kat_domains); d; d = d->next)
        if (strlen(d->name) == len && memcmp(d->name, name, len) == 0)
            return d;
    struct nvtxDomainRegistration_st *d = malloc(sizeof *d + len + 1);
    if (!d)
        return NULL;                    /* NULL is the default domain: still usable */
    d->magic = KAT_NVTX_DOMAIN_MAGIC;
    atomic_init(&d->string_id, 0);
    memcpy(d->name, name, len);
    d->name[len] = '\0';
    d->next = atomic_load(&kat_domains);
    while (!atomic_compare_exchange_weak(&kat_domains, &d->next, d))
        ;
    return d;
}

static nvtxDomainHandle_t NVTX_API kat_DomainCreateA(const char *name)
{
    int saved_errno = errno;
    nvtxDomainHandle_t d = name ? kat_domain_create(name, strlen(name)) : NULL;
    errno = saved_errno;
    return d;
}

static nvtxDomainHandle_t NVTX_API kat_DomainCreateW(const wchar_t *name)
{
    char buf[KAT_NVTX_WIDE_MAX];
    int saved_errno = errno;
    nvtxDomainHandle_t d = name ? kat_domain_create(buf, kat_wide_to_utf8(name, buf, sizeof buf)) : NULL;
    errno = saved_errno;
    return d;
}

static nvtxStringHandle_t kat_string_register(nvtxDomainHandle_t domain, const char *text, size_t len)
{
    for (struct nvtxStringRegistration_st *s = atomic_load(&kat_strings); s; s = s->next)
        if (s->domain == domain && strlen(s->text) == len && memcmp(s->text, text, len) == 0)
            return s;
    struct nvtxStringRegistration_st *s = malloc(sizeof *s + len + 1);
    if (!s)
        return NULL;                    /* a NULL handle resolves to no message */
    s->magic = KAT_NVTX_STRING_MAGIC;
    atomic_init(&s->string_id, 0);
    s->domain = domain;
    memcpy(s->text, text, len);
    s->text[len] = '\0';
    s->next = atomic_load(&kat_strings);
    while (!atomic_compare_exchange_weak(&kat_strings, &s->next, s))
        ;
    return s;
}

static nvtxStringHandle_t NVTX_API kat_DomainRegisterStringA(nvtxDomainHandle_t d, const char *text)
{
    int saved_errno = errno;
    nvtxStringHandle_t s = text ? kat_string_register(d, text, strlen(text)) : NULL;
    errno = saved_errno;
    return s;
}

static nvtxStringHandle_t NVTX_API kat_DomainRegisterStringW(nvtxDomainHandle_t d, const wchar_t *text)
{
    char buf[KAT_NVTX_WIDE_MAX];
    int saved_errno = errno;
    nvtxStringHandle_t s = text ? kat_string_register(d, buf, kat_wide_to_utf8(text, buf, sizeof buf)) : NULL;
    errno = saved_errno;
    return s;
}

/* Handles stay valid after destroy (see the top of the file). */
static void NVTX_API kat_DomainDestroy(nvtxDomainHandle_t d) { (void)d; }
static void NVTX_API kat_Initialize(const void *reserved) { (void)reserved; }

/* ---- attaching to one NVTX copy ------------------------------------------------- */

struct kat_nvtx_slot {
    unsigned int cbid;
    NvtxFunctionPointer fn;
};

#define SLOT(id, f) { (id), (NvtxFunctionPointer)(f) }

static const struct kat_nvtx_slot kat_core_slots[] = {
    SLOT(NVTX_CBID_CORE_MarkEx, kat_MarkEx),
    SLOT(NVTX_CBID_CORE_MarkA, kat_MarkA),
    SLOT(NVTX_CBID_CORE_MarkW, kat_MarkW),
    SLOT(NVTX_CBID_CORE_RangeStartEx, kat_RangeStartEx),
    SLOT(NVTX_CBID_CORE_RangeStartA, kat_RangeStartA),
    SLOT(NVTX_CBID_CORE_RangeStartW, kat_RangeStartW),
    SLOT(NVTX_CBID_CORE_RangeEnd, kat_RangeEnd),
    SLOT(NVTX_CBID_CORE_RangePushEx, kat_RangePushEx),
    SLOT(NVTX_CBID_CORE_RangePushA, kat_RangePushA),
    SLOT(NVTX_CBID_CORE_RangePushW, kat_RangePushW),
    SLOT(NVTX_CBID_CORE_RangePop, kat_RangePop),
};

static const struct kat_nvtx_slot kat_core2_slots[] = {
    SLOT(NVTX_CBID_CORE2_DomainMarkEx, kat_DomainMarkEx),
    SLOT(NVTX_CBID_CORE2_DomainRangeStartEx, kat_DomainRangeStartEx),
    SLOT(NVTX_CBID_CORE2_DomainRangeEnd, kat_DomainRangeEnd),
    SLOT(NVTX_CBID_CORE2_DomainRangePushEx, kat_DomainRangePushEx),
    SLOT(NVTX_CBID_CORE2_DomainRangePop, kat_DomainRangePop),
    SLOT(NVTX_CBID_CORE2_DomainRegisterStringA, kat_DomainRegisterStringA),
    SLOT(NVTX_CBID_CORE2_DomainRegisterStringW, kat_DomainRegisterStringW),
    SLOT(NVTX_CBID_CORE2_DomainCreateA, kat_DomainCreateA),
    SLOT(NVTX_CBID_CORE2_DomainCreateW, kat_DomainCreateW),
    SLOT(NVTX_CBID_CORE2_DomainDestroy, kat_DomainDestroy),
    SLOT(NVTX_CBID_CORE2_Initialize, kat_Initialize),
};

/* Fill one module's slots; returns how many were written. */
static int kat_nvtx_attach(const NvtxExportTableCallbacks *cb, NvtxCallbackModule module,
                           const struct kat_nvtx_slot *slots, size_t count)
{
    NvtxFunctionTable table = NULL;
    unsigned int size = 0;
    int written = 0;
    if (!cb->GetModuleFunctionTable(module, &table, &size) || !table)
        return 0;
    for (size_t i = 0; i < count; i++) {
        /* size is the number of valid callback ids (index 0 is unused) */
        if (slots[i].cbid < size && table[slots[i].cbid]) {
            *table[slots[i].cbid] = slots[i].fn;
            written++;
        }
    }
    return written;
}

/* Path of the object holding `address`; the program by its real path (glibc's
 * dladdr names the program by argv[0]). */
static void kat_nvtx_object_path(const void *address, char *out, size_t size)
{
    Dl_info info;
    struct link_map *map = NULL;
    kat_strlcpy(out, "?", size);
    if (!address || !dladdr1(address, &info, (void **)&map, RTLD_DL_LINKMAP))
        return;
    if (map && map->l_name && map->l_name[0] == '\0') {
        ssize_t n = readlink("/proc/self/exe", out, size - 1);
        if (n > 0) {
            out[n] = '\0';
            return;
        }
    }
    if (info.dli_fname && info.dli_fname[0])
        kat_strlcpy(out, info.dli_fname, size);
}

/*
 * Called by each NVTX copy at its first NVTX call.  The NVTX loader treats
 * 0 as failure (it unloads the injection and makes every call a no-op) and
 * anything else as success.  The health record names the object holding the
 * NVTX copy; value is 1 when attached, 0 when not.
 */
KAT_EXPORT int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t getExportTable)
{
    int saved_errno = errno;
    const char *why = NULL;
    int core = 0, core2 = 0;
    char detail[512];

    if (!getExportTable) {
        why = "no export table function";
    } else {
        const NvtxExportTableCallbacks *cb = getExportTable(NVTX_ETID_CALLBACKS);
        if (!cb || cb->struct_size < offsetof(NvtxExportTableCallbacks, GetModuleFunctionTable) +
                                         sizeof cb->GetModuleFunctionTable ||
            !cb->GetModuleFunctionTable) {
            why = "no callbacks export table";
        } else {
            core = kat_nvtx_attach(cb, NVTX_CB_MODULE_CORE, kat_core_slots,
                                   sizeof kat_core_slots / sizeof kat_core_slots[0]);
            core2 = kat_nvtx_attach(cb, NVTX_CB_MODULE_CORE2, kat_core2_slots,
                                    sizeof kat_core2_slots / sizeof kat_core2_slots[0]);
            if (core + core2 == 0)
                why = "no CORE or CORE2 function table";
        }
        const NvtxExportTableVersionInfo *vi = getExportTable(NVTX_ETID_VERSIONINFO);
        if (vi && vi->struct_size >= offsetof(NvtxExportTableVersionInfo, SetInjectionNvtxVersion) +
                                         sizeof vi->SetInjectionNvtxVersion &&
            vi->SetInjectionNvtxVersion)
            vi->SetInjectionNvtxVersion(NVTX_VERSION);
    }

    char where[400];
    kat_nvtx_object_path((const void *)getExportTable, where, sizeof where);
    if (why)
        snprintf(detail, sizeof detail, "%s in %s", why, where);
    else
        kat_strlcpy(detail, where, sizeof detail);
    kat_health(KAT_HEALTH_NVTX_INJECTION, detail, why ? 0 : 1);
    errno = saved_errno;
    return why ? 0 : 1;
}
