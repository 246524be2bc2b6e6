/*
 * test_nvtx_unit.c - nvtx_inject.c, libraries.c and threads.c against an
 * in-memory stand-in for the trace writer, without kaudit run.
 *
 * NVTX is attached the way an application without NVTX_INJECTION64_PATH would
 * be: through the header's static-injection hook (InitializeInjectionNvtx2_fnptr),
 * so the real nvtx3 header drives our InitializeInjectionNvtx2 exactly as a
 * dlopen'ed injection would.  This executable also defines pthread_create
 * (threads.c) and a fake cudaEventElapsedTime, exported, so the global scope
 * resolves both to it.
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <gnu/libc-version.h>
#include <limits.h>
#include <link.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <wchar.h>

#include <nvtx3/nvToolsExt.h>

#include "preload_internal.h"

int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t getExportTable);

/* ---- the writer stand-in ------------------------------------------------- */

#define STUB_MAX_RECORDS 8192
#define STUB_MAX_STRINGS 8192

struct stub_record {
    uint16_t type;
    uint32_t size;
    union {
        uint8_t bytes[256];
        uint64_t align;
    } body;
};

static pthread_mutex_t stub_lock = PTHREAD_MUTEX_INITIALIZER;
static struct stub_record stub_records[STUB_MAX_RECORDS];
static size_t stub_record_count;
static char *stub_strings[STUB_MAX_STRINGS + 1];
static uint32_t stub_string_count;
static atomic_int stub_enabled = 1;

int kat_tracing_enabled(void) { return atomic_load(&stub_enabled); }

uint32_t kat_intern_n(const char *s, size_t n)
{
    if (!s || !atomic_load(&stub_enabled))
        return 0;
    pthread_mutex_lock(&stub_lock);
    uint32_t id = 0;
    for (uint32_t i = 1; i <= stub_string_count; i++)
        if (strlen(stub_strings[i]) == n && memcmp(stub_strings[i], s, n) == 0)
            id = i;
    if (!id && stub_string_count < STUB_MAX_STRINGS) {
        id = ++stub_string_count;
        stub_strings[id] = strndup(s, n);
    }
    pthread_mutex_unlock(&stub_lock);
    return id;
}

uint32_t kat_intern(const char *s) { return s ? kat_intern_n(s, strlen(s)) : 0; }

void kat_emit_tail(uint16_t type, const void *body, uint32_t body_size, const void *tail,
                   uint32_t tail_size)
{
    (void)tail;
    (void)tail_size;
    if (!atomic_load(&stub_enabled) || body_size > sizeof stub_records[0].body)
        return;
    pthread_mutex_lock(&stub_lock);
    if (stub_record_count < STUB_MAX_RECORDS) {
        struct stub_record *r = &stub_records[stub_record_count++];
        r->type = type;
        r->size = body_size;
        memcpy(r->body.bytes, body, body_size);
    }
    pthread_mutex_unlock(&stub_lock);
}

void kat_emit(uint16_t type, const void *body, uint32_t body_size)
{
    kat_emit_tail(type, body, body_size, NULL, 0);
}

uint64_t kat_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

uint32_t kat_tid(void) { return (uint32_t)syscall(SYS_gettid); }

void kat_strlcpy(char *dst, const char *src, size_t n)
{
    if (!n)
        return;
    size_t len = src ? strnlen(src, n - 1) : 0;
    memcpy(dst, src, len);
    dst[len] = '\0';
}

void kat_health(uint32_t code, const char *detail, int64_t value)
{
    struct kat_health_rec rec = { code, kat_intern(detail), value, kat_now_ns() };
    kat_emit(KAT_REC_HEALTH, &rec, sizeof rec);
}

int kat_find_object(const void *address, uintptr_t *start, const char **path)
{
    Dl_info info;
    struct link_map *map = NULL;
    if (!address || !dladdr1(address, &info, (void **)&map, RTLD_DL_LINKMAP))
        return -1;
    *start = (uintptr_t)info.dli_fbase;
    *path = map && map->l_name ? map->l_name : "";
    return 0;
}

uint32_t kat_object_string(const void *address)
{
    Dl_info info;
    struct link_map *map = NULL;
    char exe[PATH_MAX];
    if (!address || !dladdr1(address, &info, (void **)&map, RTLD_DL_LINKMAP) || !info.dli_fname)
        return kat_intern("?");
    if (map && map->l_name[0] == '\0') {  /* the program: dladdr says argv[0] */
        ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
        exe[n > 0 ? n : 0] = '\0';
        return kat_intern(exe);
    }
    return kat_intern(info.dli_fname);
}

/* FNV-1a in lo, size in hi: enough to tell that the right bytes were read. */
static void stub_hash(const void *data, size_t size, uint64_t *lo, uint64_t *hi)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < size; i++) {
        h ^= ((const unsigned char *)data)[i];
        h *= 1099511628211ull;
    }
    *lo = h;
    *hi = size;
}

static atomic_int stub_digest_calls;

int kat_digest(const void *data, size_t size, uint64_t *lo, uint64_t *hi)
{
    atomic_fetch_add(&stub_digest_calls, 1);
    stub_hash(data, size, lo, hi);
    return 0;
}

static void stub_reset(void)
{
    pthread_mutex_lock(&stub_lock);
    stub_record_count = 0;
    pthread_mutex_unlock(&stub_lock);
    atomic_store(&stub_enabled, 1);
}

static const char *str(uint32_t id)
{
    return id && id <= stub_string_count ? stub_strings[id] : "";
}

/* Records of one type, copied out in order. */
static size_t records_of(uint16_t type, void *out, size_t elem, size_t max)
{
    size_t n = 0;
    pthread_mutex_lock(&stub_lock);
    for (size_t i = 0; i < stub_record_count && n < max; i++)
        if (stub_records[i].type == type)
            memcpy((char *)out + elem * n++, stub_records[i].body.bytes, elem);
    pthread_mutex_unlock(&stub_lock);
    return n;
}

/* ---- NVTX ---------------------------------------------------------------- */

static void attach_nvtx(void)
{
    unsetenv("NVTX_INJECTION64_PATH");
    InitializeInjectionNvtx2_fnptr = InitializeInjectionNvtx2;
    stub_reset();
}

TestSuite(nvtx, .init = attach_nvtx);

Test(nvtx, push_pop_return_levels_and_record_them)
{
    cr_assert_eq(nvtxRangePushA("outer"), 0);
    cr_assert_eq(nvtxRangePushW(L"inner"), 1);
    cr_assert_eq(nvtxRangePop(), 1);
    cr_assert_eq(nvtxRangePop(), 0);
    cr_assert_lt(nvtxRangePop(), 0, "a pop on an empty stack is an error");

    struct kat_nvtx_rec r[8];
    size_t n = records_of(KAT_REC_NVTX, r, sizeof r[0], 8);
    cr_assert_eq(n, 5);
    uint32_t tid = (uint32_t)syscall(SYS_gettid);
    static const uint32_t kinds[] = { KAT_NVTX_PUSH, KAT_NVTX_PUSH, KAT_NVTX_POP, KAT_NVTX_POP,
                                      KAT_NVTX_POP };
    static const uint64_t levels[] = { 0, 1, 1, 0, UINT64_MAX };
    for (size_t i = 0; i < n; i++) {
        cr_expect_eq(r[i].kind, kinds[i], "record %zu", i);
        cr_expect_eq(r[i].range_id, levels[i], "record %zu level", i);
        cr_expect_eq(r[i].thread_id, tid);
        cr_expect_eq(r[i].domain_string, 0);
        cr_expect_neq(r[i].time_ns, 0);
        if (i)
            cr_expect_geq(r[i].time_ns, r[i - 1].time_ns);
    }
    cr_expect_str_eq(str(r[0].message_string), "outer");
    cr_expect_str_eq(str(r[1].message_string), "inner");
    cr_expect_eq(r[2].message_string, 0);

    struct kat_health_rec h[4];
    cr_assert_eq(records_of(KAT_REC_HEALTH, h, sizeof h[0], 4), 1);
    cr_expect_eq(h[0].code, KAT_HEALTH_NVTX_INJECTION);
    cr_expect_eq(h[0].value, 1);
    char exe[PATH_MAX];
    ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
    exe[len > 0 ? len : 0] = '\0';
    cr_expect_str_eq(str(h[0].detail_string), exe, "the health record names the NVTX copy's object");
}

Test(nvtx, start_end_ids_are_unique_and_paired)
{
    nvtxRangeId_t a = nvtxRangeStartA("a");
    nvtxRangeId_t b = nvtxRangeStartW(L"b");
    cr_assert_neq(a, 0);
    cr_assert_neq(b, 0);
    cr_assert_neq(a, b);
    nvtxRangeEnd(a);
    nvtxRangeEnd(b);

    struct kat_nvtx_rec r[8];
    cr_assert_eq(records_of(KAT_REC_NVTX, r, sizeof r[0], 8), 4);
    cr_expect_eq(r[0].kind, KAT_NVTX_START);
    cr_expect_eq(r[0].range_id, a);
    cr_expect_str_eq(str(r[0].message_string), "a");
    cr_expect_eq(r[1].range_id, b);
    cr_expect_str_eq(str(r[1].message_string), "b");
    cr_expect_eq(r[2].kind, KAT_NVTX_END);
    cr_expect_eq(r[2].range_id, a);
    cr_expect_eq(r[3].range_id, b);
}

Test(nvtx, wide_messages_become_utf8)
{
    nvtxMarkW(L"caf\u00e9 \u20ac \U0001F600");
    wchar_t bad[] = { L'x', (wchar_t)0xD800, (wchar_t)0x110000, 0 };
    nvtxMarkW(bad);

    struct kat_nvtx_rec r[4];
    cr_assert_eq(records_of(KAT_REC_NVTX, r, sizeof r[0], 4), 2);
    cr_expect_eq(r[0].kind, KAT_NVTX_MARK);
    cr_expect_str_eq(str(r[0].message_string), "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80");
    cr_expect_str_eq(str(r[1].message_string), "x\xef\xbf\xbd\xef\xbf\xbd");
}

Test(nvtx, event_attributes_and_domains)
{
    nvtxDomainHandle_t d = nvtxDomainCreateA("kaudit.unit");
    cr_assert_not_null(d);
    cr_expect_eq(nvtxDomainCreateA("kaudit.unit"), d, "one handle per name");
    cr_expect_eq(nvtxDomainCreateW(L"kaudit.unit"), d);
    nvtxStringHandle_t s = nvtxDomainRegisterStringA(d, "registered");
    cr_assert_not_null(s);
    cr_expect_eq(nvtxDomainRegisterStringW(d, L"registered"), s);

    nvtxEventAttributes_t a;
    memset(&a, 0, sizeof a);
    a.version = NVTX_VERSION;
    a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    a.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
    a.message.registered = s;
    cr_expect_eq(nvtxDomainRangePushEx(d, &a), 0);
    cr_expect_eq(nvtxRangePushA("default"), 0, "each domain has its own stack");
    a.messageType = NVTX_MESSAGE_TYPE_UNICODE;
    a.message.unicode = L"wide ex";
    cr_expect_eq(nvtxDomainRangePushEx(d, &a), 1);
    a.messageType = NVTX_MESSAGE_TYPE_ASCII;
    a.message.ascii = "ascii ex";
    nvtxDomainMarkEx(d, &a);
    nvtxRangeId_t id = nvtxDomainRangeStartEx(d, &a);
    nvtxDomainRangeEnd(d, id);
    nvtxMarkEx(&a);
    cr_expect_eq(nvtxDomainRangePop(d), 1);
    cr_expect_eq(nvtxDomainRangePop(d), 0);
    cr_expect_eq(nvtxRangePop(), 0);
    a.size = 8;                         /* too short to hold a message */
    nvtxMarkEx(&a);

    struct kat_nvtx_rec r[16];
    size_t n = records_of(KAT_REC_NVTX, r, sizeof r[0], 16);
    cr_assert_eq(n, 11);
    const char *dom = "kaudit.unit";
    struct { uint32_t kind; uint64_t range; const char *msg; const char *domain; } want[] = {
        { KAT_NVTX_PUSH, 0, "registered", dom }, { KAT_NVTX_PUSH, 0, "default", "" },
        { KAT_NVTX_PUSH, 1, "wide ex", dom },    { KAT_NVTX_MARK, 0, "ascii ex", dom },
        { KAT_NVTX_START, id, "ascii ex", dom }, { KAT_NVTX_END, id, "", dom },
        { KAT_NVTX_MARK, 0, "ascii ex", "" },    { KAT_NVTX_POP, 1, "", dom },
        { KAT_NVTX_POP, 0, "", dom },            { KAT_NVTX_POP, 0, "", "" },
        { KAT_NVTX_MARK, 0, "", "" },
    };
    for (size_t i = 0; i < n; i++) {
        cr_expect_eq(r[i].kind, want[i].kind, "record %zu", i);
        cr_expect_eq(r[i].range_id, want[i].range, "record %zu", i);
        cr_expect_str_eq(str(r[i].message_string), want[i].msg, "record %zu", i);
        cr_expect_str_eq(str(r[i].domain_string), want[i].domain, "record %zu", i);
    }
}

static void *nested_worker(void *arg)
{
    (void)arg;
    intptr_t ok = nvtxRangePushA("w0") == 0 && nvtxRangePushA("w1") == 1 && nvtxRangePop() == 1 &&
                  nvtxRangePop() == 0;
    return (void *)ok;
}

Test(nvtx, nesting_is_per_thread)
{
    cr_assert_eq(nvtxRangePushA("main"), 0);
    pthread_t t[4];
    for (int i = 0; i < 4; i++)
        cr_assert_eq(pthread_create(&t[i], NULL, nested_worker, NULL), 0);
    for (int i = 0; i < 4; i++) {
        void *ok;
        pthread_join(t[i], &ok);
        cr_expect_eq((intptr_t)ok, 1, "thread %d saw levels from 0", i);
    }
    cr_expect_eq(nvtxRangePop(), 0);
}

Test(nvtx, disabled_tracing_keeps_semantics)
{
    atomic_store(&stub_enabled, 0);
    cr_expect_eq(nvtxRangePushA("x"), 0);
    cr_expect_eq(nvtxRangePop(), 0);
    cr_expect_neq(nvtxRangeStartA("y"), 0);
    atomic_store(&stub_enabled, 1);
    struct kat_nvtx_rec r[4];
    cr_expect_eq(records_of(KAT_REC_NVTX, r, sizeof r[0], 4), 0);
}

/* A fake export table: the injection must fail cleanly, not crash. */
static const void *NVTX_API empty_export_table(uint32_t id)
{
    (void)id;
    return NULL;
}

Test(nvtx, init_without_callbacks_fails_cleanly, .init = stub_reset)
{
    cr_expect_eq(InitializeInjectionNvtx2(empty_export_table), 0);
    cr_expect_eq(InitializeInjectionNvtx2(NULL), 0);
    struct kat_health_rec h[4];
    cr_assert_eq(records_of(KAT_REC_HEALTH, h, sizeof h[0], 4), 2);
    cr_expect_eq(h[0].code, KAT_HEALTH_NVTX_INJECTION);
    cr_expect_eq(h[0].value, 0);
    cr_expect(strstr(str(h[0].detail_string), "no callbacks export table") != NULL);
}

/* ---- libraries ------------------------------------------------------------ */

static size_t library_records(struct kat_library_rec *r, size_t max)
{
    return records_of(KAT_REC_LIBRARY, r, sizeof r[0], max);
}

static const struct kat_library_rec *find_soname(const struct kat_library_rec *r, size_t n,
                                                 const char *soname, size_t skip)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(str(r[i].soname_string), soname) == 0 && skip-- == 0)
            return &r[i];
    return NULL;
}

static int file_hash(const char *path, uint64_t *lo, uint64_t *hi, size_t *size)
{
    int fd = open(path, O_RDONLY);
    if (fd < 0)
        return -1;
    off_t len = lseek(fd, 0, SEEK_END);
    char *buf = malloc((size_t)len);
    ssize_t got = pread(fd, buf, (size_t)len, 0);
    close(fd);
    if (got != len) {
        free(buf);
        return -1;
    }
    stub_hash(buf, (size_t)len, lo, hi);
    *size = (size_t)len;
    free(buf);
    return 0;
}

TestSuite(libraries, .init = stub_reset);

Test(libraries, first_poll_lists_loaded_objects_with_sonames)
{
    kat_libraries_poll();
    struct kat_library_rec r[512];
    size_t n = library_records(r, 512);
    cr_assert_gt(n, 3);

    const struct kat_library_rec *libc = find_soname(r, n, "libc.so.6", 0);
    cr_assert_not_null(libc, "libc is loaded and its SONAME is read");
    cr_expect(strstr(str(libc->path_string), "libc.so.6") != NULL);
    cr_expect_neq(libc->base_address, 0);
    cr_expect_gt(libc->file_size, 0);
    cr_expect_eq(libc->digest_lo, 0, "system libraries are not hashed");
    cr_expect_eq(libc->duplicate, 0);
    Dl_info info;
    cr_assert(dladdr((void *)gnu_get_libc_version, &info));
    cr_expect_eq(libc->base_address, (uint64_t)(uintptr_t)info.dli_fbase);

    /* The program is outside the system directories: hashed, whole file. */
    char exe[PATH_MAX];
    ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
    exe[len > 0 ? len : 0] = '\0';
    cr_assert_str_eq(str(r[0].path_string), exe, "the program comes first, by its real path");
    uint64_t lo, hi;
    size_t size;
    cr_assert_eq(file_hash(exe, &lo, &hi, &size), 0);
    cr_expect_eq(r[0].file_size, size);
    cr_expect_eq(r[0].digest_lo, lo);
    cr_expect_eq(r[0].digest_hi, hi);

    const struct kat_library_rec *vdso = find_soname(r, n, "linux-vdso.so.1", 0);
    if (vdso)
        cr_expect_eq(vdso->file_size, 0, "the vDSO has no file");

    /* Nothing changed: nothing more is recorded. */
    kat_libraries_poll();
    cr_expect_eq(library_records(r, 512), n);
}

Test(libraries, loads_duplicates_and_reloads)
{
    kat_libraries_poll();
    struct kat_library_rec r[512];
    size_t before = library_records(r, 512);

    void *h1 = dlopen(KAT_DUP_LIB, RTLD_NOW | RTLD_LOCAL);
    cr_assert_not_null(h1, "%s", dlerror());
    kat_libraries_poll();
    size_t n = library_records(r, 512);
    cr_assert_eq(n, before + 1);
    cr_expect_str_eq(str(r[n - 1].soname_string), "libkat_nvtx_dup.so");
    cr_expect_str_eq(str(r[n - 1].path_string), KAT_DUP_LIB);
    cr_expect_eq(r[n - 1].duplicate, 0);
    cr_expect_neq(r[n - 1].digest_lo, 0, "a library outside the system directories is hashed");

    void *h2 = dlopen(KAT_DUP_COPY, RTLD_NOW | RTLD_LOCAL);
    cr_assert_not_null(h2, "%s", dlerror());
    cr_assert_neq(h1, h2);
    kat_libraries_poll();
    n = library_records(r, 512);
    cr_assert_eq(n, before + 2);
    cr_expect_str_eq(str(r[n - 1].path_string), KAT_DUP_COPY);
    cr_expect_eq(r[n - 1].duplicate, 1, "same SONAME from a second path");
    cr_expect_eq(r[n - 1].digest_lo, r[n - 2].digest_lo, "identical bytes");
    struct kat_health_rec h[8];
    size_t nh = records_of(KAT_REC_HEALTH, h, sizeof h[0], 8);
    cr_assert_eq(nh, 1);
    cr_expect_eq(h[0].code, KAT_HEALTH_DUPLICATE_LIBRARY);
    cr_expect_eq(h[0].value, 2, "two copies loaded");
    cr_expect(strstr(str(h[0].detail_string), "libkat_nvtx_dup.so: ") == str(h[0].detail_string));

    /* Unloaded and loaded again: a new fact, recorded again; the digest is cached. */
    dlclose(h2);
    kat_libraries_poll();
    cr_expect_eq(library_records(r, 512), n);
    int hashed = atomic_load(&stub_digest_calls);
    h2 = dlopen(KAT_DUP_COPY, RTLD_NOW | RTLD_LOCAL);
    cr_assert_not_null(h2);
    kat_libraries_poll();
    cr_expect_eq(library_records(r, 512), n + 1);
    cr_expect_eq(atomic_load(&stub_digest_calls), hashed, "the same file is hashed once");
    dlclose(h2);
    dlclose(h1);
}

Test(libraries, digest_policy_none, .init = stub_reset)
{
    setenv("KAUDIT_LIBRARY_DIGEST", "none", 1);
    kat_libraries_poll();
    struct kat_library_rec r[512];
    size_t n = library_records(r, 512);
    cr_assert_gt(n, 0);
    for (size_t i = 0; i < n; i++)
        cr_expect_eq(r[i].digest_lo | r[i].digest_hi, 0, "%s", str(r[i].path_string));
}

Test(libraries, disabled_tracing_records_nothing)
{
    atomic_store(&stub_enabled, 0);
    kat_libraries_poll();
    kat_timing_symbols_snapshot(KAT_SYMBOL_AT_START);
    atomic_store(&stub_enabled, 1);
    struct kat_library_rec r[4];
    cr_expect_eq(library_records(r, 4), 0);
}

/* Defined here, in the object that also holds libraries.c, as a wrapper in
 * the preload would be: the snapshot must look past it (RTLD_NEXT). */
__attribute__((visibility("default"), noinline)) int cuEventRecord(void *event, void *stream)
{
    (void)event;
    (void)stream;
    return 0;
}

Test(libraries, timing_symbols_name_their_defining_object)
{
    /* A library loaded RTLD_GLOBAL that defines the runtime's timer: the
     * tampering case. */
    void *h = dlopen(KAT_DUP_LIB, RTLD_NOW | RTLD_GLOBAL);
    cr_assert_not_null(h, "%s", dlerror());
    void *fake = dlsym(h, "cudaEventElapsedTime");
    cr_assert_not_null(fake);

    kat_timing_symbols_snapshot(KAT_SYMBOL_AT_CUDA_INIT);
    struct kat_timing_symbol_rec r[64];
    size_t n = records_of(KAT_REC_TIMING_SYMBOL, r, sizeof r[0], 64);
    cr_assert_geq(n, 17);
    int seen = 0;
    for (size_t i = 0; i < n; i++) {
        cr_expect_eq(r[i].phase, KAT_SYMBOL_AT_CUDA_INIT);
        cr_expect_neq(r[i].time_ns, 0);
        const char *name = str(r[i].symbol_string);
        if (strcmp(name, "cudaEventElapsedTime") == 0) {
            seen++;
            cr_expect_eq(r[i].address, (uint64_t)(uintptr_t)fake);
            cr_expect_str_eq(str(r[i].object_string), KAT_DUP_LIB);
        } else if (strcmp(name, "cuEventRecord") == 0) {
            seen++;
            cr_expect_eq(r[i].address, 0, "our own definition is skipped; no libcuda here");
            cr_expect_eq(r[i].object_string, 0);
        } else if (strcmp(name, "cuEventElapsedTime") == 0) {
            seen++;
            cr_expect_eq(r[i].address, 0);
        }
    }
    cr_expect_eq(seen, 3);
    cr_expect_null(dlerror(), "no dlerror left behind");
}

/* ---- threads ---------------------------------------------------------------- */

static void *thread_routine(void *arg)
{
    return (void *)((intptr_t)arg * 2);
}

TestSuite(threads, .init = stub_reset);

Test(threads, create_and_start_are_paired)
{
    pthread_t t[3];
    for (intptr_t i = 0; i < 3; i++)
        cr_assert_eq(pthread_create(&t[i], NULL, thread_routine, (void *)(i + 1)), 0);
    for (intptr_t i = 0; i < 3; i++) {
        void *ret;
        cr_assert_eq(pthread_join(t[i], &ret), 0);
        cr_expect_eq((intptr_t)ret, 2 * (i + 1), "the routine's argument and result pass through");
    }

    struct kat_thread_rec r[16];
    size_t n = records_of(KAT_REC_THREAD, r, sizeof r[0], 16);
    cr_assert_eq(n, 6);
    uint32_t me = (uint32_t)syscall(SYS_gettid);
    char exe[PATH_MAX];
    ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
    exe[len > 0 ? len : 0] = '\0';
    size_t creates = 0;
    for (size_t i = 0; i < n; i++) {
        cr_expect_eq(r[i].start_routine, (uint64_t)(uintptr_t)thread_routine);
        cr_expect_str_eq(str(r[i].routine_object_string), exe);
        if (r[i].event != KAT_THREAD_CREATE)
            continue;
        creates++;
        cr_expect_eq(r[i].thread_id, me);
        size_t starts = 0;
        for (size_t j = 0; j < n; j++) {
            if (r[j].event == KAT_THREAD_START && r[j].token == r[i].token) {
                starts++;
                cr_expect_neq(r[j].thread_id, me);
                cr_expect_leq(r[i].time_ns, r[j].time_ns);
            }
        }
        cr_expect_eq(starts, 1, "token %llu", (unsigned long long)r[i].token);
    }
    cr_expect_eq(creates, 3);
}

Test(threads, failure_is_passed_through_unrecorded)
{
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    cr_assert_eq(pthread_attr_setstacksize(&attr, (size_t)1 << 62), 0);
    pthread_t t;
    errno = 4321;
    int rc = pthread_create(&t, &attr, thread_routine, NULL);
    cr_expect_eq(rc, EAGAIN, "an impossible stack cannot be mapped");
    pthread_attr_destroy(&attr);
    struct kat_thread_rec r[4];
    cr_expect_eq(records_of(KAT_REC_THREAD, r, sizeof r[0], 4), 0);
}

Test(threads, disabled_tracing_records_nothing)
{
    atomic_store(&stub_enabled, 0);
    pthread_t t;
    cr_assert_eq(pthread_create(&t, NULL, thread_routine, (void *)5), 0);
    void *ret;
    pthread_join(t, &ret);
    cr_expect_eq((intptr_t)ret, 10);
    atomic_store(&stub_enabled, 1);
    struct kat_thread_rec r[4];
    cr_expect_eq(records_of(KAT_REC_THREAD, r, sizeof r[0], 4), 0);
}

static void *errno_routine(void *arg)
{
    (void)arg;
    return (void *)(intptr_t)errno;
}

Test(threads, errno_is_untouched)
{
    errno = 77;
    pthread_t t;
    cr_assert_eq(pthread_create(&t, NULL, errno_routine, NULL), 0);
    int after = errno;
    void *ret;
    pthread_join(t, &ret);
    cr_expect_eq((intptr_t)ret, 0, "a new thread starts with errno 0");
    /* glibc's pthread_create leaves errno alone on success; so must we. */
    cr_expect_eq(after, 77);
}
