/*
 * audit.c - libkaudit_audit.so, the rtld-audit module (LD_AUDIT) that sends
 * vendor entry points found by dlsym() to the preload's wrappers.
 *
 * The preload library interposes cuBLAS, cuBLASLt and cuDNN by being first in
 * the global scope.  A lookup that does not start from the global scope never
 * meets it: dlsym(handle_of_libcublas, "cublasSgemm_v2") (Python ctypes does
 * exactly that), dlvsym on such a handle, dlsym(RTLD_NEXT) from an object
 * loaded after the preload, and the PLT of an object loaded RTLD_DEEPBIND.
 * The function found is then the real one, and its kernels run outside any
 * vendor window.  Wrapping dlsym is no answer: glibc resolves RTLD_NEXT from
 * the caller's address, so a wrapper breaks every other interposer.
 *
 * The dynamic linker tells an audit module about every such binding
 * (la_symbind64, with LA_SYMB_DLSYM for dlsym) and takes the address it
 * returns.  When the definition is in a vendor library, the caller is not the
 * preload, and the preload exports a wrapper of that very name, we return the
 * wrapper.  The wrapper forwards to the real function through the library's
 * own handle (preload/vendor_resolve.c); that lookup is made by the preload,
 * so it is never redirected and cannot recurse.
 *
 * An audit module lives in a link-map namespace of its own, with its own copy
 * of libc.  This one keeps no state but a few words, allocates nothing,
 * records nothing (the preload records), takes no lock, calls no libc
 * function that could take one, and does nothing at load time.  It defines no
 * la_pltenter/la_pltexit, so the dynamic linker keeps its ordinary PLT
 * trampoline and the program's calls cost what they cost without it.
 *
 * It also tells the preload when the dynamic linker unloads an object
 * (la_objclose), so that the preload may remember which object called a
 * vendor function from a given address until one is unloaded
 * (preload/util.c, kat_object_string).  It tells it by calling two functions
 * the preload exports for this; they only store to a word.
 *
 * The preload's wrappers are found in its dynamic symbol table, not with
 * dlsym(): a link_map that was preloaded and never dlopen()ed has an empty
 * search list, and dlsym() on it faults inside the dynamic linker (glibc
 * 2.36).  When the preload is not loaded in the base namespace, or its tables
 * cannot be read, nothing is redirected.
 */
#define _GNU_SOURCE
#include <elf.h>
#include <link.h>
#include <stdint.h>
#include <string.h>

#define KAT_AUDIT_EXPORT __attribute__((visibility("default")))

#define PRELOAD_NAME "libkaudit_preload.so"

/*
 * Cookies.  The dynamic linker initializes an object's cookie to the address
 * of its link_map, so small numbers cannot be mistaken for an object that
 * la_objopen never saw.
 */
enum object_kind {
    OBJ_OTHER = 1,              /* base namespace, not ours, not a vendor library */
    OBJ_PRELOAD = 2,            /* libkaudit_preload.so in the base namespace */
    OBJ_FOREIGN = 3,            /* any object of another namespace (dlmopen) */
    OBJ_CUBLAS = 4,             /* libcublas.so* */
    OBJ_CUBLASLT = 5,           /* libcublasLt.so* */
    OBJ_CUDNN = 6,              /* libcudnn.so* (not its sub-libraries) */
};

/* What lets us find a symbol in the preload: written once, in la_objopen,
 * under the dynamic linker's load lock; read by la_symbind64 on any thread. */
struct preload_symbols {
    ElfW(Addr) base;
    const ElfW(Sym) *symtab;
    const char *strtab;
    const ElfW(Half) *versym;   /* NULL when the preload has no version info */
    const uint32_t *gnu_hash;   /* DT_GNU_HASH, or NULL */
    const uint32_t *sysv_hash;  /* DT_HASH, or NULL */
};

static struct preload_symbols preload_tables;
static const struct preload_symbols *preload_ready; /* NULL: redirect nothing */

KAT_AUDIT_EXPORT unsigned int la_version(unsigned int version)
{
    /* LAV_CURRENT, or the dynamic linker's own version when that is older
     * (la_objopen and la_symbind64 are the same in every version). */
    if (version == 0)
        return 0;
    return version < LAV_CURRENT ? version : LAV_CURRENT;
}

static const char *base_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

static int starts_with(const char *s, const char *prefix)
{
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

/*
 * A dynamic-section pointer.  glibc relocates DT_* pointers in place where
 * the dynamic section is writable (x86-64, aarch64) and leaves them as
 * offsets where it is not (MIPS, RISC-V): accept both.
 */
static const void *dyn_ptr(ElfW(Addr) base, ElfW(Addr) value)
{
    return (const void *)(value < base ? base + value : value);
}

/* DT_SONAME, or NULL: auditwheel-repaired wheels rename the file
 * (libcublas-3b81d170.so.12) but keep the soname. */
static const char *soname_of(const struct link_map *map)
{
    ElfW(Addr) strtab = 0, soname = 0;
    int has_soname = 0;
    if (!map->l_ld)
        return NULL;
    for (const ElfW(Dyn) *d = map->l_ld; d->d_tag != DT_NULL; d++) {
        if (d->d_tag == DT_STRTAB)
            strtab = d->d_un.d_ptr;
        else if (d->d_tag == DT_SONAME) {
            soname = d->d_un.d_val;
            has_soname = 1;
        }
    }
    if (!has_soname || !strtab)
        return NULL;
    return (const char *)dyn_ptr(map->l_addr, strtab) + soname;
}

static enum object_kind vendor_kind(const char *name)
{
    if (!name)
        return OBJ_OTHER;
    if (starts_with(name, "libcublas.so"))
        return OBJ_CUBLAS;
    if (starts_with(name, "libcublasLt.so"))
        return OBJ_CUBLASLT;
    if (starts_with(name, "libcudnn.so"))
        return OBJ_CUDNN;
    return OBJ_OTHER;
}

static void read_preload_tables(const struct link_map *map)
{
    struct preload_symbols t = { .base = map->l_addr };
    if (!map->l_ld)
        return;
    for (const ElfW(Dyn) *d = map->l_ld; d->d_tag != DT_NULL; d++) {
        switch (d->d_tag) {
        case DT_SYMTAB: t.symtab = dyn_ptr(t.base, d->d_un.d_ptr); break;
        case DT_STRTAB: t.strtab = dyn_ptr(t.base, d->d_un.d_ptr); break;
        case DT_VERSYM: t.versym = dyn_ptr(t.base, d->d_un.d_ptr); break;
        case DT_GNU_HASH: t.gnu_hash = dyn_ptr(t.base, d->d_un.d_ptr); break;
        case DT_HASH: t.sysv_hash = dyn_ptr(t.base, d->d_un.d_ptr); break;
        default: break;
        }
    }
    if (!t.symtab || !t.strtab || (!t.gnu_hash && !t.sysv_hash))
        return;
    preload_tables = t;
    __atomic_store_n(&preload_ready, &preload_tables, __ATOMIC_RELEASE);
}

KAT_AUDIT_EXPORT unsigned int la_objopen(struct link_map *map, Lmid_t lmid, uintptr_t *cookie)
{
    if (lmid != LM_ID_BASE) {
        /* The preload is not in other namespaces, and its wrappers would
         * forward to the base namespace's libraries: leave them alone. */
        *cookie = OBJ_FOREIGN;
        return 0;
    }
    /* Vendor libraries by file name or soname; not the cuDNN sub-libraries
     * (libcudnn_ops.so.9, ...), whose entry points we do not wrap. */
    const char *name = base_name(map->l_name ? map->l_name : "");
    enum object_kind kind = vendor_kind(name);
    if (kind == OBJ_OTHER)
        kind = vendor_kind(soname_of(map));
    if (kind == OBJ_OTHER && strcmp(name, PRELOAD_NAME) == 0)
        kind = OBJ_PRELOAD;
    *cookie = kind;
    if (kind == OBJ_PRELOAD) {
        /* The first one is the wrappers' home; a second copy is still ours,
         * and its lookups are left alone as well. */
        if (!__atomic_load_n(&preload_ready, __ATOMIC_ACQUIRE))
            read_preload_tables(map);
        /* No flags: its own lookups of the real functions must reach them. */
        return 0;
    }
    /*
     * PLT bindings are reported only when the caller has BINDFROM and the
     * definition BINDTO; dlsym bindings when either has.  Every caller may
     * bind to a vendor library (RTLD_DEEPBIND, RTLD_NEXT, vendor to vendor),
     * so all get BINDFROM; only the vendor libraries get BINDTO, so a PLT
     * binding to anything else never calls us.
     */
    return kind >= OBJ_CUBLAS ? LA_FLG_BINDTO | LA_FLG_BINDFROM : LA_FLG_BINDFROM;
}

static uint32_t gnu_hash_of(const char *s)
{
    uint32_t h = 5381;
    for (; *s; s++)
        h = h * 33 + (unsigned char)*s;
    return h;
}

static uint32_t sysv_hash_of(const char *s)
{
    uint32_t h = 0;
    for (; *s; s++) {
        h = (h << 4) + (unsigned char)*s;
        uint32_t g = h & 0xf0000000u;
        if (g)
            h ^= g >> 24;
        h &= ~g;
    }
    return h;
}

/* Symbol i is `name`, an exported function the preload defines. */
static const ElfW(Sym) *defined_function(const struct preload_symbols *t, uint32_t i,
                                         const char *name)
{
    const ElfW(Sym) *s = &t->symtab[i];
    if (strcmp(t->strtab + s->st_name, name) != 0)
        return NULL;
    if (s->st_shndx == SHN_UNDEF || s->st_value == 0 || ELF64_ST_TYPE(s->st_info) != STT_FUNC)
        return NULL;
    if (ELF64_ST_BIND(s->st_info) != STB_GLOBAL && ELF64_ST_BIND(s->st_info) != STB_WEAK)
        return NULL;
    if (t->versym && (t->versym[i] & 0x8000)) /* a hidden version */
        return NULL;
    return s;
}

/* The preload's exported function `name`, or NULL: DT_GNU_HASH lookup. */
static const ElfW(Sym) *lookup_gnu(const struct preload_symbols *t, const char *name)
{
    const uint32_t *h = t->gnu_hash;
    uint32_t nbuckets = h[0], symoffset = h[1], bloom_words = h[2], bloom_shift = h[3];
    if (nbuckets == 0 || bloom_words == 0)
        return NULL;
    const ElfW(Addr) *bloom = (const ElfW(Addr) *)(h + 4);
    const uint32_t *buckets = (const uint32_t *)(bloom + bloom_words);
    const uint32_t *chain = buckets + nbuckets; /* entry i - symoffset */
    const uint32_t bits = sizeof(ElfW(Addr)) * 8;
    uint32_t hash = gnu_hash_of(name);
    ElfW(Addr) word = bloom[(hash / bits) % bloom_words];
    if (!((word >> (hash % bits)) & (word >> ((hash >> bloom_shift) % bits)) & 1))
        return NULL;
    uint32_t i = buckets[hash % nbuckets];
    if (i < symoffset)
        return NULL;
    for (;; i++) {
        uint32_t entry = chain[i - symoffset];
        if ((entry | 1) == (hash | 1)) {
            const ElfW(Sym) *s = defined_function(t, i, name);
            if (s)
                return s;
        }
        if (entry & 1)
            return NULL;
    }
}

/* The same through DT_HASH: nbucket, nchain, buckets, chains. */
static const ElfW(Sym) *lookup_sysv(const struct preload_symbols *t, const char *name)
{
    const uint32_t *h = t->sysv_hash;
    uint32_t nbucket = h[0], nchain = h[1];
    if (nbucket == 0)
        return NULL;
    const uint32_t *buckets = h + 2, *chains = h + 2 + nbucket;
    for (uint32_t i = buckets[sysv_hash_of(name) % nbucket], steps = 0;
         i != STN_UNDEF && i < nchain && steps < nchain; i = chains[i], steps++) {
        const ElfW(Sym) *s = defined_function(t, i, name);
        if (s)
            return s;
    }
    return NULL;
}

/* The preload's exported function `name`, or NULL: by DT_GNU_HASH when it
 * has one, else by DT_HASH. */
static const ElfW(Sym) *lookup_function(const struct preload_symbols *t, const char *name)
{
    return t->gnu_hash ? lookup_gnu(t, name) : lookup_sysv(t, name);
}

/* The name belongs to the library that defines it: a wrapper forwards to the
 * library its name says, so any other pairing is left as it was. */
static int name_matches_library(const char *name, uintptr_t library)
{
    switch (library) {
    case OBJ_CUBLASLT: return starts_with(name, "cublasLt");
    case OBJ_CUBLAS: return starts_with(name, "cublas") && !starts_with(name, "cublasLt");
    case OBJ_CUDNN: return starts_with(name, "cudnn");
    default: return 0;
    }
}

KAT_AUDIT_EXPORT uintptr_t la_symbind64(Elf64_Sym *sym, unsigned int ndx, uintptr_t *refcook,
                                        uintptr_t *defcook, unsigned int *flags,
                                        const char *symname)
{
    (void)ndx;
    uintptr_t real = sym->st_value;
    /* No la_pltenter/la_pltexit here; say so for every binding. */
    *flags |= LA_SYMB_NOPLTENTER | LA_SYMB_NOPLTEXIT;
    if (*defcook < OBJ_CUBLAS || *defcook > OBJ_CUDNN)
        return real; /* not a vendor definition: the common case, first */
    /* Only base-namespace callers we know, and never the preload itself: its
     * kat_resolve_vendor() asks for the real function. */
    if (*refcook != OBJ_OTHER && !(*refcook >= OBJ_CUBLAS && *refcook <= OBJ_CUDNN))
        return real;
    const struct preload_symbols *t = __atomic_load_n(&preload_ready, __ATOMIC_ACQUIRE);
    if (!t || !symname || !name_matches_library(symname, *defcook))
        return real;
    const ElfW(Sym) *wrapper = lookup_function(t, symname);
    if (!wrapper)
        return real;
    uintptr_t address = t->base + wrapper->st_value;
    return address == real ? real : address;
}

/*
 * Unloads.  The preload's two functions are looked up once its tables are
 * known; they are called only after la_preinit, when the preload is
 * relocated.  la_preinit tells it that unloads are being counted from now
 * on; la_objclose counts one (any namespace: an object of another namespace
 * may call a vendor function too).
 */
typedef void object_event_fn(void);
static object_event_fn *objects_watched_fn, *object_closed_fn;
static int preinit_done;

static object_event_fn *preload_function(const struct preload_symbols *t, const char *name)
{
    const ElfW(Sym) *s = lookup_function(t, name);
    return s ? (object_event_fn *)(t->base + s->st_value) : NULL;
}

KAT_AUDIT_EXPORT void la_preinit(uintptr_t *cookie)
{
    (void)cookie;
    const struct preload_symbols *t = __atomic_load_n(&preload_ready, __ATOMIC_ACQUIRE);
    if (!t)
        return;
    object_closed_fn = preload_function(t, "kaudit_audit_object_closed");
    objects_watched_fn = preload_function(t, "kaudit_audit_watching_unloads");
    if (object_closed_fn && objects_watched_fn) {
        __atomic_store_n(&preinit_done, 1, __ATOMIC_RELEASE);
        objects_watched_fn();
    }
}

KAT_AUDIT_EXPORT unsigned int la_objclose(uintptr_t *cookie)
{
    (void)cookie;
    if (__atomic_load_n(&preinit_done, __ATOMIC_ACQUIRE))
        object_closed_fn();
    return 0;
}
