/*
 * util.c - thread ids, object names and digests for the preload.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "preload_internal.h"

/*
 * getpid() and gettid() are system calls (about 130 ns each on the VMs we
 * measured), too slow for every record.  Both are cached; a fork child's one
 * thread inherits the forking thread's cache, so a fork bumps a generation
 * that invalidates it.  Code that may run in a vfork child (exec wrappers)
 * must call getpid() itself: a vfork child shares these variables.
 */
static atomic_uint process_generation = 1;
static atomic_int cached_pid;
static KAT_TLS uint32_t cached_tid;
static KAT_TLS unsigned cached_tid_generation;

void kat_note_fork_child(void)
{
    atomic_store(&cached_pid, (int)getpid());
    atomic_fetch_add(&process_generation, 1);
}

pid_t kat_pid(void)
{
    int pid = atomic_load_explicit(&cached_pid, memory_order_relaxed);
    if (!pid) {
        pid = (int)getpid();
        atomic_store(&cached_pid, pid);
    }
    return pid;
}

uint32_t kat_tid(void)
{
    unsigned generation = atomic_load_explicit(&process_generation, memory_order_relaxed);
    if (cached_tid == 0 || cached_tid_generation != generation) {
        cached_tid = (uint32_t)syscall(SYS_gettid);
        cached_tid_generation = generation;
    }
    return cached_tid;
}

int kat_env_equals(const char *name, const char *value)
{
    const char *env = getenv(name);
    return env && strcmp(env, value) == 0;
}

int kat_env_is(int *cache, const char *name, const char *value)
{
    int v = __atomic_load_n(cache, __ATOMIC_RELAXED); /* a builtin: the header is C++'s too */
    if (v < 0) {
        v = kat_env_equals(name, value);
        __atomic_store_n(cache, v, __ATOMIC_RELAXED);
    }
    return v;
}

void kat_strlcpy(char *dst, const char *src, size_t n)
{
    if (n == 0)
        return;
    size_t len = src ? strnlen(src, n - 1) : 0;
    if (len)
        memcpy(dst, src, len);
    dst[len] = '\0';
}

void kat_health(uint32_t code, const char *detail, int64_t value)
{
    struct kat_health_rec rec = {
        .code = code,
        .detail_string = kat_intern(detail),
        .value = value,
        .time_ns = kat_now_ns(),
    };
    kat_emit(KAT_REC_HEALTH, &rec, sizeof(rec));
}

/*
 * Which object holds an address.  dladdr() is far too slow for a hot path:
 * besides finding the object it searches the object's whole symbol table for
 * the nearest symbol, and libtorch_cuda.so exports so many symbols that one
 * dladdr per vendor call made a launch-bound loop on the H200 machine more
 * than ten times slower.  glibc 2.35's _dl_find_object finds the
 * object without a lock or a symbol search; older C libraries fall back to
 * dladdr1.
 */
typedef int (*find_object_fn)(void *, struct dl_find_object *);
static find_object_fn find_object;
static pthread_once_t find_object_once = PTHREAD_ONCE_INIT;

static void find_object_load(void)
{
    find_object = (find_object_fn)dlsym(RTLD_DEFAULT, "_dl_find_object");
}

int kat_find_object(const void *address, uintptr_t *start, const char **path)
{
    pthread_once(&find_object_once, find_object_load);
    struct link_map *map = NULL;
    if (find_object) {
        struct dl_find_object found;
        if (find_object((void *)address, &found) != 0)
            return -1;
        *start = (uintptr_t)found.dlfo_map_start;
        map = found.dlfo_link_map;
    } else {
        Dl_info info;
        if (!dladdr1(address, &info, (void **)&map, RTLD_DL_LINKMAP))
            return -1;
        *start = (uintptr_t)info.dli_fbase;
    }
    /* The main program's link map has the empty name. */
    *path = map && map->l_name ? map->l_name : "";
    return 0;
}

/*
 * Unloads, counted by the rtld-audit module (preload/audit/audit.c,
 * la_objclose) once it has told us it counts them (la_preinit).  While no
 * object has been unloaded since an address was looked up, the object that
 * holds it is the one found then: an object can only appear at an address
 * another one held after that one is unloaded.  Without the audit module
 * (a plain LD_PRELOAD) every call looks the address up.
 */
static atomic_int unloads_watched;
static _Atomic unsigned long unloads_counted;

KAT_EXPORT void kaudit_audit_watching_unloads(void)
{
    atomic_store_explicit(&unloads_watched, 1, memory_order_release);
}

KAT_EXPORT void kaudit_audit_object_closed(void)
{
    atomic_fetch_add_explicit(&unloads_counted, 1, memory_order_acq_rel);
}

/* The loader's own count of unloads (dlpi_subs), for a process without the
 * audit module: read at the first object, under the loader's lock. */
static int read_loader_unloads(struct dl_phdr_info *info, size_t size, void *arg)
{
    if (size >= offsetof(struct dl_phdr_info, dlpi_subs) + sizeof info->dlpi_subs)
        *(unsigned long long *)arg = info->dlpi_subs;
    return 1;
}

/* How many objects have been unloaded so far: the audit module's count when
 * it keeps one, else the loader's. */
static unsigned long unloads_so_far(void)
{
    if (atomic_load_explicit(&unloads_watched, memory_order_acquire))
        return atomic_load_explicit(&unloads_counted, memory_order_acquire);
    unsigned long long subs = 0;
    dl_iterate_phdr(read_loader_unloads, &subs);
    return (unsigned long)subs;
}

/* The last few answers are kept per thread.  By the object's start and name
 * pointer, while no object has been unloaded since: what a lookup found.
 * (After an unload, an object loaded at the same start can have its name
 * where the unloaded one's was: the loader's allocator hands the freed block
 * back, so neither start nor pointer tells them apart.)  By the calling
 * address, when unloads are watched: no lookup at all while none has
 * happened since. */
#define OBJECT_CACHE_SLOTS 4
struct object_cache_slot {
    uintptr_t start;
    const char *path;
    unsigned long unloads;      /* unloads_so_far() before the lookup */
    uint32_t string_id;
};
static KAT_TLS struct object_cache_slot object_cache[OBJECT_CACHE_SLOTS];
static KAT_TLS unsigned object_cache_next;

struct address_cache_slot {
    const void *address;
    unsigned long unloads;      /* unloads_counted before the lookup */
    uint32_t string_id;
};
static KAT_TLS struct address_cache_slot address_cache[OBJECT_CACHE_SLOTS];
static KAT_TLS unsigned address_cache_next;

/* *found: the address is in a loaded object (not "?").  unloads: how many
 * had been unloaded before the lookup. */
static uint32_t object_string_looked_up(const void *address, unsigned long unloads, int *found)
{
    uintptr_t start;
    const char *path;
    *found = 0;
    if (!address || kat_find_object(address, &start, &path) != 0)
        return kat_intern("?");
    *found = 1;
    for (unsigned i = 0; i < OBJECT_CACHE_SLOTS; i++) {
        if (object_cache[i].start == start && object_cache[i].path == path
            && object_cache[i].unloads == unloads && object_cache[i].string_id)
            return object_cache[i].string_id;
    }
    const char *name = path;
    char exe[4096];
    if (!path[0]) {
        /* glibc names the program by argv[0], maybe relative: use the real path. */
        ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
        exe[n > 0 ? n : 0] = '\0';
        name = n > 0 ? exe : "(main program)";
    }
    uint32_t id = kat_intern(name);
    struct object_cache_slot *slot = &object_cache[object_cache_next++ % OBJECT_CACHE_SLOTS];
    slot->start = start;
    slot->path = path;
    slot->unloads = unloads;
    slot->string_id = id;
    return id;
}

uint32_t kat_object_string(const void *address)
{
    int found;
    /* read before the lookup: an unload during it makes the answer stale */
    unsigned long unloads = unloads_so_far();
    if (!address || !atomic_load_explicit(&unloads_watched, memory_order_acquire))
        return object_string_looked_up(address, unloads, &found);
    for (unsigned i = 0; i < OBJECT_CACHE_SLOTS; i++) {
        const struct address_cache_slot *slot = &address_cache[i];
        if (slot->address == address && slot->unloads == unloads && slot->string_id)
            return slot->string_id;
    }
    uint32_t id = object_string_looked_up(address, unloads, &found);
    if (!found)
        return id;   /* no object there (code made at run time): asked again next time */
    struct address_cache_slot *slot = &address_cache[address_cache_next++ % OBJECT_CACHE_SLOTS];
    slot->address = address;
    slot->unloads = unloads;
    slot->string_id = id;
    return id;
}

/*
 * XXH3-128 through libxxhash, loaded at run time: the GPU machine has no
 * xxhash.h to build against, and we never want a hard dependency in a library
 * that is injected into arbitrary programs.  The struct matches
 * XXH128_hash_t { XXH64_hash_t low64; XXH64_hash_t high64; }.
 */
struct xxh128_value {
    uint64_t low64;
    uint64_t high64;
};
typedef struct xxh128_value (*xxh3_128_fn)(const void *, size_t);

static pthread_once_t digest_once = PTHREAD_ONCE_INIT;
static xxh3_128_fn digest_fn;
static char digest_problem[256];

static void digest_load(void)
{
    static const char *const candidates[] = { "libxxhash.so.0", "libxxhash.so" };
    void *handle = NULL;
    for (size_t i = 0; i < sizeof(candidates) / sizeof(candidates[0]) && !handle; i++)
        handle = dlopen(candidates[i], RTLD_LAZY | RTLD_LOCAL);
    if (!handle) {
        /* Next to this library: the GPU suite can place a copy there. */
        Dl_info self;
        if (dladdr((void *)digest_load, &self) && self.dli_fname) {
            char path[1024];
            kat_strlcpy(path, self.dli_fname, sizeof(path));
            char *slash = strrchr(path, '/');
            if (slash && (size_t)(slash - path) + sizeof("/libxxhash.so.0") < sizeof(path)) {
                strcpy(slash, "/libxxhash.so.0");
                handle = dlopen(path, RTLD_LAZY | RTLD_LOCAL);
            }
        }
    }
    if (!handle) {
        kat_strlcpy(digest_problem, "libxxhash.so.0 not found", sizeof(digest_problem));
        return;
    }
    digest_fn = (xxh3_128_fn)dlsym(handle, "XXH3_128bits");
    if (!digest_fn)
        kat_strlcpy(digest_problem, "libxxhash.so.0 lacks XXH3_128bits", sizeof(digest_problem));
}

int kat_digest(const void *data, size_t size, uint64_t *lo, uint64_t *hi)
{
    static atomic_int reported;
    pthread_once(&digest_once, digest_load);
    if (!digest_fn) {
        *lo = *hi = 0;
        if (!atomic_exchange(&reported, 1))
            kat_health(KAT_HEALTH_DIGEST_UNAVAILABLE, digest_problem, 0);
        return -1;
    }
    struct xxh128_value v = digest_fn(data, size);
    *lo = v.low64;
    *hi = v.high64;
    return 0;
}
