/*
 * libraries.c - which shared objects are mapped, and who defines the timing
 * entry points.
 *
 * Loads are seen by polling dl_iterate_phdr, never by wrapping dlopen (a
 * wrapper breaks RUNPATH/$ORIGIN lookups: see shared/notes/interposition.md).
 * dlpi_adds/dlpi_subs count loads and unloads since start, so a poll that
 * finds both unchanged stops at the first object.  The dl_iterate_phdr
 * callback runs under the loader's lock: it only copies what it needs (path,
 * SONAME, base) and never calls into the loader; stat, hashing, interning and
 * emitting happen after it returns.
 *
 * Digests.  Hashing a file means reading all of it: libtorch_cuda.so is about
 * 1 GB (~0.1 s hot, more from disk), and a poll can run inside the traced
 * program.  So not every object is hashed.  We hash:
 *   - the CUDA and vendor stack by name (libcuda, libcudart, libcublas(Lt),
 *     libcudnn*, libcupti, libnvrtc, libnvJitLink, libnvidia-*, libtorch*,
 *     libc10_cuda, NCCL, cuFFT/cuRAND/cuSPARSE/cuSOLVER), wherever it lives;
 *   - every object outside the system library directories (/lib, /lib64,
 *     /usr/lib, /usr/lib64, ...), and inside them anything under a
 *     site-packages or dist-packages tree: the program, its extensions, a
 *     candidate's own libraries, a pip-installed PyTorch;
 *   - not libc, libstdc++ and the rest of the distribution, which the
 *     package manager already vouches for.
 * Each file is hashed once per process: a cache keyed by device, inode, size
 * and mtime serves reloads and fork children.  KAUDIT_LIBRARY_DIGEST=all or
 * =none overrides the choice (for audits that want everything, and for
 * overhead measurements).  Polls belong at start, CUDA initialization and
 * exit, not on hot paths: the first poll after a large library appears pays
 * for its digest.
 *
 * A duplicate is a second loaded object with the SONAME of an object already
 * loaded from another path (two copies of libcublas, say): the later one gets
 * duplicate=1 and a KAT_HEALTH_DUPLICATE_LIBRARY record names both.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "preload_internal.h"

/* ---- state (all under kat_lib_lock) ----------------------------------------- */

struct kat_lib {
    uintptr_t base;                     /* lowest mapped address of the object */
    char *path;                         /* as the loader names it ("" for the program) */
    char *soname;                       /* NULL when it has none */
    uint64_t mark;                      /* scan generation that last saw it */
};

struct kat_digest_entry {
    dev_t dev;
    ino_t ino;
    off_t size;
    struct timespec mtime;
    uint64_t lo, hi;
    int ok;
};

enum kat_digest_policy { KAT_DIGEST_STACK, KAT_DIGEST_ALL, KAT_DIGEST_NONE };

static pthread_mutex_t kat_lib_lock = PTHREAD_MUTEX_INITIALIZER;
static struct kat_lib *kat_libs;
static size_t kat_lib_count, kat_lib_cap;
static struct kat_digest_entry *kat_digests;
static size_t kat_digest_count, kat_digest_cap;
static unsigned long long kat_last_adds, kat_last_subs;
static int kat_scanned;                 /* a full scan has been recorded */
static uint64_t kat_generation;
static int kat_policy = -1;
static pthread_once_t kat_lib_once = PTHREAD_ONCE_INIT;

static int kat_lib_busy;                /* a poll holds kat_lib_lock */
static KAT_TLS int kat_in_poll;

/*
 * A fork child writes a new trace: it must list every library again.  Only
 * the forking thread survives, so the lock is re-created rather than waited
 * for.  When another thread was inside a poll at the fork, the digest cache
 * may be mid-update as well, so it is dropped (leaked) too.  No prepare
 * handler takes the lock: a poll can wait on the writer's lock, which another
 * fork handler may hold.
 */
static void kat_lib_atfork_child(void)
{
    pthread_mutex_t fresh = PTHREAD_MUTEX_INITIALIZER;
    kat_lib_lock = fresh;
    if (kat_lib_busy) {
        kat_libs = NULL;
        kat_lib_cap = 0;
        kat_digests = NULL;
        kat_digest_count = kat_digest_cap = 0;
    }
    kat_lib_busy = 0;
    kat_lib_count = 0;
    kat_scanned = 0;
    kat_last_adds = kat_last_subs = 0;
    kat_in_poll = 0;
}

static void kat_lib_init_once(void)
{
    pthread_atfork(NULL, NULL, kat_lib_atfork_child);
}

/* ---- reading the SONAME from memory ----------------------------------------- */

/* [addr, addr+len) lies in one readable PT_LOAD segment, which ends at *seg_end. */
static int kat_in_segment(const struct dl_phdr_info *info, uintptr_t addr, size_t len,
                          uintptr_t *seg_end)
{
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_R))
            continue;
        uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
        uintptr_t hi = lo + ph->p_memsz;
        if (addr >= lo && addr < hi && len <= hi - addr) {
            if (seg_end)
                *seg_end = hi;
            return 1;
        }
    }
    return 0;
}

/*
 * DT_SONAME is an offset into DT_STRTAB.  Whether the loader relocated the
 * DT_STRTAB entry in place depends on the object (glibc does for ordinary
 * objects on x86-64, not for the read-only dynamic section of the vDSO), so
 * both readings are tried and one is accepted only if the string lies inside
 * a readable segment of the same object and ends within DT_STRSZ.
 */
static const char *kat_read_soname(const struct dl_phdr_info *info)
{
    const ElfW(Phdr) *dynph = NULL;
    for (int i = 0; i < info->dlpi_phnum; i++)
        if (info->dlpi_phdr[i].p_type == PT_DYNAMIC)
            dynph = &info->dlpi_phdr[i];
    if (!dynph || dynph->p_memsz < sizeof(ElfW(Dyn)))
        return NULL;
    uintptr_t dynaddr = info->dlpi_addr + dynph->p_vaddr;
    if (!kat_in_segment(info, dynaddr, dynph->p_memsz, NULL))
        return NULL;

    const ElfW(Dyn) *dyn = (const ElfW(Dyn) *)dynaddr;
    size_t n = dynph->p_memsz / sizeof(ElfW(Dyn));
    uintptr_t strtab = 0;
    size_t strsz = 0, soname = (size_t)-1;
    for (size_t i = 0; i < n && dyn[i].d_tag != DT_NULL; i++) {
        switch (dyn[i].d_tag) {
        case DT_STRTAB: strtab = dyn[i].d_un.d_ptr; break;
        case DT_STRSZ: strsz = dyn[i].d_un.d_val; break;
        case DT_SONAME: soname = dyn[i].d_un.d_val; break;
        default: break;
        }
    }
    if (!strtab || !strsz || soname >= strsz)
        return NULL;

    uintptr_t candidates[2] = { strtab, info->dlpi_addr + strtab };
    for (int c = 0; c < 2; c++) {
        uintptr_t seg_end;
        if (c == 1 && info->dlpi_addr == 0)
            break;
        if (!kat_in_segment(info, candidates[c], strsz, &seg_end))
            continue;
        const char *s = (const char *)(candidates[c] + soname);
        size_t limit = strsz - soname;
        size_t len = strnlen(s, limit);
        if (len == limit || len == 0)
            continue;
        return s;
    }
    return NULL;
}

/* ---- the scan --------------------------------------------------------------- */

struct kat_new_lib {
    uintptr_t base;
    char *path;
    char *soname;
    int is_program;
};

struct kat_scan {
    int unchanged;                      /* stopped at once: nothing loaded or unloaded */
    int incomplete;                     /* an object was skipped (no memory): rescan next time */
    int index;
    unsigned long long adds, subs;
    struct kat_new_lib *fresh;
    size_t fresh_count, fresh_cap;
};

static uintptr_t kat_object_base(const struct dl_phdr_info *info)
{
    uintptr_t lo = UINTPTR_MAX;
    for (int i = 0; i < info->dlpi_phnum; i++)
        if (info->dlpi_phdr[i].p_type == PT_LOAD && info->dlpi_phdr[i].p_vaddr < lo)
            lo = info->dlpi_phdr[i].p_vaddr;
    if (lo == UINTPTR_MAX)
        return info->dlpi_addr;
    return info->dlpi_addr + lo;        /* the load bias, except for a non-PIE program */
}

static struct kat_lib *kat_find_lib(uintptr_t base, const char *path)
{
    for (size_t i = 0; i < kat_lib_count; i++)
        if (kat_libs[i].base == base && strcmp(kat_libs[i].path, path) == 0)
            return &kat_libs[i];
    return NULL;
}

/* Runs with the loader's lock held: copy, never call into the loader. */
static int kat_scan_cb(struct dl_phdr_info *info, size_t size, void *data)
{
    struct kat_scan *scan = data;
    int index = scan->index++;
    if (index == 0 && size >= offsetof(struct dl_phdr_info, dlpi_subs) + sizeof info->dlpi_subs) {
        scan->adds = info->dlpi_adds;
        scan->subs = info->dlpi_subs;
        if (kat_scanned && scan->adds == kat_last_adds && scan->subs == kat_last_subs) {
            scan->unchanged = 1;
            return 1;
        }
    }
    const char *name = info->dlpi_name ? info->dlpi_name : "";
    uintptr_t base = kat_object_base(info);
    struct kat_lib *known = kat_find_lib(base, name);
    if (known) {
        known->mark = kat_generation;
        return 0;
    }
    if (scan->fresh_count == scan->fresh_cap) {
        size_t cap = scan->fresh_cap ? scan->fresh_cap * 2 : 64;
        struct kat_new_lib *p = realloc(scan->fresh, cap * sizeof *p);
        if (!p) {
            scan->incomplete = 1;       /* seen at the next poll */
            return 0;
        }
        scan->fresh = p;
        scan->fresh_cap = cap;
    }
    const char *soname = kat_read_soname(info);
    struct kat_new_lib *nl = &scan->fresh[scan->fresh_count];
    nl->base = base;
    nl->path = strdup(name);
    nl->soname = soname ? strdup(soname) : NULL;
    nl->is_program = index == 0 && name[0] == '\0';
    if (!nl->path) {
        free(nl->soname);
        scan->incomplete = 1;
        return 0;
    }
    scan->fresh_count++;
    return 0;
}

/* ---- digests ---------------------------------------------------------------- */

static int kat_has_prefix(const char *s, const char *prefix)
{
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

static const char *kat_basename(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

static int kat_stack_name(const char *name)
{
    static const char *const prefixes[] = {
        "libcuda.", "libcudart", "libcublas", "libcudnn", "libcupti", "libnvrtc",
        "libnvJitLink", "libnvjitlink", "libnvidia-", "libtorch", "libc10_cuda", "libnccl",
        "libcufft", "libcurand", "libcusparse", "libcusolver", "libnvToolsExt",
    };
    if (!name)
        return 0;
    name = kat_basename(name);
    for (size_t i = 0; i < sizeof prefixes / sizeof prefixes[0]; i++)
        if (kat_has_prefix(name, prefixes[i]))
            return 1;
    return 0;
}

static int kat_system_path(const char *path)
{
    static const char *const dirs[] = {
        "/lib/", "/lib32/", "/lib64/", "/libx32/", "/usr/lib/", "/usr/lib32/", "/usr/lib64/",
        "/usr/libx32/",
    };
    if (strstr(path, "-packages/"))
        return 0;
    for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; i++)
        if (kat_has_prefix(path, dirs[i]))
            return 1;
    return 0;
}

static int kat_should_hash(const char *path, const char *soname)
{
    if (kat_policy == KAT_DIGEST_NONE)
        return 0;
    if (kat_policy == KAT_DIGEST_ALL)
        return 1;
    return kat_stack_name(soname) || kat_stack_name(path) || !kat_system_path(path);
}

static void kat_hash_file(int fd, const struct stat *st, uint64_t *lo, uint64_t *hi)
{
    for (size_t i = 0; i < kat_digest_count; i++) {
        struct kat_digest_entry *e = &kat_digests[i];
        if (e->dev == st->st_dev && e->ino == st->st_ino && e->size == st->st_size &&
            e->mtime.tv_sec == st->st_mtim.tv_sec && e->mtime.tv_nsec == st->st_mtim.tv_nsec) {
            if (e->ok) {
                *lo = e->lo;
                *hi = e->hi;
            }
            return;
        }
    }
    struct kat_digest_entry e = { st->st_dev, st->st_ino, st->st_size, st->st_mtim, 0, 0, 0 };
    if (st->st_size > 0) {
        void *map = mmap(NULL, (size_t)st->st_size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (map != MAP_FAILED) {
            madvise(map, (size_t)st->st_size, MADV_SEQUENTIAL);
            e.ok = kat_digest(map, (size_t)st->st_size, &e.lo, &e.hi) == 0;
            munmap(map, (size_t)st->st_size);
        }
    }
    if (e.ok) {
        *lo = e.lo;
        *hi = e.hi;
    }
    if (kat_digest_count == kat_digest_cap) {
        size_t cap = kat_digest_cap ? kat_digest_cap * 2 : 64;
        struct kat_digest_entry *p = realloc(kat_digests, cap * sizeof *p);
        if (!p)
            return;
        kat_digests = p;
        kat_digest_cap = cap;
    }
    kat_digests[kat_digest_count] = e;
    kat_digest_count++;
}

/* ---- recording ---------------------------------------------------------------- */

static void kat_record_timing_definitions(const char *path, uintptr_t base, int is_program);

static void kat_record_lib(struct kat_new_lib *nl, uint64_t now)
{
    char exe[PATH_MAX];
    char resolved[PATH_MAX];
    const char *path = nl->path;
    struct kat_library_rec rec;
    memset(&rec, 0, sizeof rec);

    if (nl->is_program) {
        ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
        if (n > 0) {
            exe[n] = '\0';
            path = exe;
        }
    } else if (path[0] && path[0] != '/' && strchr(path, '/') && realpath(path, resolved)) {
        path = resolved;            /* dlopen("./x.so"): relative to the cwd of then */
    }

    struct stat st;
    int fd = path[0] == '/' ? open(path, O_RDONLY | O_CLOEXEC) : -1;
    if (fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
        rec.file_size = (uint64_t)st.st_size;
        if (kat_should_hash(path, nl->soname))
            kat_hash_file(fd, &st, &rec.digest_lo, &rec.digest_hi);
    }
    if (fd >= 0)
        close(fd);

    if (nl->soname) {
        /* value: copies of this SONAME now loaded; detail: the first and this one */
        const struct kat_lib *first = NULL;
        int64_t copies = 1;
        for (size_t i = 0; i < kat_lib_count; i++) {
            const struct kat_lib *other = &kat_libs[i];
            if (other->soname && strcmp(other->soname, nl->soname) == 0 &&
                (strcmp(other->path, nl->path) != 0 || other->base != nl->base)) {
                if (!first)
                    first = other;
                copies++;
            }
        }
        if (first) {
            char detail[1024];
            snprintf(detail, sizeof detail, "%.200s: %.400s and %.400s", nl->soname, first->path,
                     path);
            kat_health(KAT_HEALTH_DUPLICATE_LIBRARY, detail, copies);
            rec.duplicate = 1;
        }
    }

    rec.path_string = kat_intern(path);
    rec.soname_string = nl->soname ? kat_intern(nl->soname) : 0;
    rec.base_address = nl->base;
    rec.time_ns = now;
    kat_emit(KAT_REC_LIBRARY, &rec, sizeof rec);
    kat_record_timing_definitions(nl->path, nl->base, nl->is_program);
}

static void kat_remember(struct kat_new_lib *nl)
{
    if (kat_lib_count == kat_lib_cap) {
        size_t cap = kat_lib_cap ? kat_lib_cap * 2 : 128;
        struct kat_lib *p = realloc(kat_libs, cap * sizeof *p);
        if (!p) {
            free(nl->path);
            free(nl->soname);
            return;
        }
        kat_libs = p;
        kat_lib_cap = cap;
    }
    kat_libs[kat_lib_count] = (struct kat_lib){ nl->base, nl->path, nl->soname, kat_generation };
    kat_lib_count++;
}

void kat_libraries_poll(void)
{
    if (kat_in_poll || !kat_tracing_enabled())
        return;
    int saved_errno = errno;
    kat_in_poll = 1;
    pthread_once(&kat_lib_once, kat_lib_init_once);
    pthread_mutex_lock(&kat_lib_lock);
    kat_lib_busy = 1;

    if (kat_policy < 0) {
        const char *p = getenv("KAUDIT_LIBRARY_DIGEST");
        kat_policy = p && strcmp(p, "all") == 0    ? KAT_DIGEST_ALL
                     : p && strcmp(p, "none") == 0 ? KAT_DIGEST_NONE
                                                   : KAT_DIGEST_STACK;
    }

    struct kat_scan scan;
    memset(&scan, 0, sizeof scan);
    kat_generation++;
    dl_iterate_phdr(kat_scan_cb, &scan);

    if (!scan.unchanged) {
        /* Forget objects that were unloaded: a later load is a new fact. */
        size_t kept = 0;
        for (size_t i = 0; i < kat_lib_count; i++) {
            if (kat_libs[i].mark == kat_generation) {
                kat_libs[kept++] = kat_libs[i];
            } else {
                free(kat_libs[i].path);
                free(kat_libs[i].soname);
            }
        }
        kat_lib_count = kept;

        uint64_t now = kat_now_ns();
        for (size_t i = 0; i < scan.fresh_count; i++) {
            kat_record_lib(&scan.fresh[i], now);
            kat_remember(&scan.fresh[i]);
        }
        kat_last_adds = scan.adds;
        kat_last_subs = scan.subs;
        kat_scanned = !scan.incomplete;
    }
    free(scan.fresh);

    kat_lib_busy = 0;
    pthread_mutex_unlock(&kat_lib_lock);
    kat_in_poll = 0;
    errno = saved_errno;
}

/* ---- timing entry points ------------------------------------------------------ */

/*
 * What the global scope gives a program that looks these up by name.  An
 * object other than libcudart/libcuda here (a candidate's extension loaded
 * RTLD_GLOBAL, an LD_PRELOAD) can return any elapsed time it likes.  An
 * unresolved name is recorded too (object 0): cudart loaded RTLD_LOCAL, as
 * PyTorch does, is not in the global scope.
 */
static const char *const kat_timing_symbols[] = {
    "cudaEventCreate", "cudaEventCreateWithFlags",
    "cudaEventRecord", "cudaEventRecord_ptsz", "cudaEventRecordWithFlags",
    "cudaEventRecordWithFlags_ptsz", "cudaEventElapsedTime", "cudaEventElapsedTime_v2",
    "cudaEventSynchronize", "cudaEventQuery", "cudaStreamWaitEvent", "cudaStreamWaitEvent_ptsz",
    "cudaStreamSynchronize", "cudaStreamSynchronize_ptsz", "cudaDeviceSynchronize",
    "cuEventCreate", "cuEventRecord", "cuEventRecord_ptsz", "cuEventRecordWithFlags",
    "cuEventRecordWithFlags_ptsz", "cuEventElapsedTime", "cuEventElapsedTime_v2",
    "cuEventSynchronize", "cuEventQuery", "cuStreamWaitEvent", "cuStreamWaitEvent_ptsz",
    "cuStreamSynchronize", "cuStreamSynchronize_ptsz", "cuCtxSynchronize", "cuCtxSynchronize_v2",
};

void kat_timing_symbols_snapshot(uint32_t phase)
{
    if (!kat_tracing_enabled())
        return;
    int saved_errno = errno;
    uintptr_t self_start = 0, start;
    const char *ignored;
    int failed = 0;
    kat_find_object((const void *)kat_timing_symbols_snapshot, &self_start, &ignored);

    for (size_t i = 0; i < sizeof kat_timing_symbols / sizeof kat_timing_symbols[0]; i++) {
        const char *name = kat_timing_symbols[i];
        void *addr = dlsym(RTLD_DEFAULT, name);
        if (addr && self_start && kat_find_object(addr, &start, &ignored) == 0
            && start == self_start) {
            /* One of our own wrappers: report what the program would get without us. */
            addr = dlsym(RTLD_NEXT, name);
        }
        if (!addr)
            failed = 1;
        struct kat_timing_symbol_rec rec;
        memset(&rec, 0, sizeof rec);
        rec.symbol_string = kat_intern(name);
        rec.object_string = addr ? kat_object_string(addr) : 0;
        rec.address = (uint64_t)(uintptr_t)addr;
        rec.phase = phase;
        rec.time_ns = kat_now_ns();
        kat_emit(KAT_REC_TIMING_SYMBOL, &rec, sizeof rec);
    }
    if (failed)
        (void)dlerror();                /* leave no error of ours for the program */
    errno = saved_errno;
}

/*
 * Which objects themselves define (export) a timing entry point.  The CUDA
 * runtime and driver do; any other object that does (a candidate's extension
 * that brings its own cudaEventElapsedTime) can hand the harness a made-up
 * time, whether or not it is first in the global scope today.  The handle
 * comes from dlopen(RTLD_NOLOAD), which never loads anything; a symbol found
 * through it may live in a dependency, so only addresses inside this object
 * count.
 */
static void kat_record_timing_definitions(const char *path, uintptr_t base, int is_program)
{
    if (!is_program && (!path || !path[0]))
        return;
    void *handle = dlopen(is_program ? NULL : path, RTLD_LAZY | RTLD_NOLOAD);
    if (!handle) {
        (void)dlerror();
        return;
    }
    uintptr_t self_start = 0, start;
    const char *ignored;
    kat_find_object((const void *)kat_record_timing_definitions, &self_start, &ignored);
    for (size_t i = 0; i < sizeof kat_timing_symbols / sizeof kat_timing_symbols[0]; i++) {
        void *addr = dlsym(handle, kat_timing_symbols[i]);
        /* dladdr would search the object's symbols: slow for big libraries. */
        if (!addr || kat_find_object(addr, &start, &ignored) != 0 || start != base
            || start == self_start)
            continue;
        struct kat_timing_symbol_rec rec;
        memset(&rec, 0, sizeof rec);
        rec.symbol_string = kat_intern(kat_timing_symbols[i]);
        rec.object_string = kat_object_string(addr);
        rec.address = (uint64_t)(uintptr_t)addr;
        rec.phase = KAT_SYMBOL_DEFINED_BY_OBJECT;
        rec.time_ns = kat_now_ns();
        kat_emit(KAT_REC_TIMING_SYMBOL, &rec, sizeof rec);
    }
    (void)dlerror();
    dlclose(handle);
}
