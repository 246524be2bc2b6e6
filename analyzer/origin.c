/*
 * origin.c - whose work it is (docs/analysis.md, "Parties and origins").
 *
 * A launch's party (candidate, reference, harness, unknown) comes from the
 * phases open on its thread, or on the thread that created its thread; a
 * loaded object's kind from its path; a kernel's origin from its module's
 * loader, its module's bytes, the vendor call around it and its name
 * (ka_kernel_origin, the one attribution rule the analysis applies).
 */
#define _GNU_SOURCE
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>

#include "analysis_internal.h"
#include "inventory.h"

/* ---- loaded objects and processes ----------------------------------------- */

int ka_path_matches(const char *path, char *const *patterns, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (fnmatch(patterns[i], path, 0) == 0)
            return 1;
    return 0;
}

/* Loaded objects that are the candidate's when the contract names none. */
static const char *const default_candidate_objects[] = {
    "*/torch_extensions/*", "*/.triton/cache/*", "*/triton/cache/*", "*/torchinductor_*/*",
};

const char *const *ka_default_candidate_objects(size_t *n)
{
    *n = sizeof default_candidate_objects / sizeof default_candidate_objects[0];
    return default_candidate_objects;
}

int ka_is_candidate_object(const struct ka_contract *c, const char *path)
{
    if (!path || !*path)
        return 0;
    if (c->candidate.n_objects)
        return ka_path_matches(path, c->candidate.objects, c->candidate.n_objects);
    return ka_path_matches(path, (char *const *)default_candidate_objects,
                           sizeof default_candidate_objects / sizeof default_candidate_objects[0]);
}

static int is_vendor_object(const char *path)
{
    const char *b = kat_base_name(path);
    return !strncmp(b, "libcublas", 9) || !strncmp(b, "libcudnn", 8);
}

int ka_is_framework_object(const char *path)
{
    const char *b = kat_base_name(path);
    return !strncmp(b, "libtorch", 8) || !strncmp(b, "libc10", 6) || !strncmp(b, "libcaffe2", 9) ||
           !strncmp(b, "_C.", 3) || strstr(path, "/torch/lib/") != NULL;
}

/* NVRTC and nvJitLink compile and link code at run time for whoever calls them: PyTorch's jiterator
   on the H200 (its module's loader is libtorch_cuda.so or libnvrtc).  Not candidate code by default. */
static int is_runtime_compiler_object(const char *path)
{
    const char *b = kat_base_name(path);
    return !strncmp(b, "libnvrtc", 8) || !strncmp(b, "libnvJitLink", 12) || !strncmp(b, "libnvjitlink", 12);
}

/* The interpreter and its foreign-function layer: the caller is Python code (ctypes). */
static int is_python_object(const char *path)
{
    const char *b = kat_base_name(path);
    return !strncmp(b, "libffi", 6) || !strncmp(b, "_ctypes", 7) || !strncmp(b, "libpython", 9) ||
           !strncmp(b, "python", 6);
}

int ka_loader_kind(const struct ka_contract *c, const char *loader)
{
    if (!loader || !*loader)
        return KA_LOADER_UNKNOWN;
    if (ka_is_candidate_object(c, loader))
        return KA_LOADER_CANDIDATE;
    if (is_vendor_object(loader))
        return KA_LOADER_VENDOR;
    if (ka_is_framework_object(loader) || is_runtime_compiler_object(loader))
        return KA_LOADER_FRAMEWORK;
    if (is_python_object(loader))
        return KA_LOADER_PYTHON;
    return KA_LOADER_OTHER;
}

static const char *const build_tools[] = {
    "nvcc", "ninja", "make", "cmake", "cicc", "ptxas", "fatbinary", "nvlink", "cudafe++", "gcc", "g++", "cc",
    "c++", "g++-real", "gcc-real", "clang", "clang++", "ld", "ld.bfd", "ld.gold", "collect2", "cc1", "cc1plus", "as",
};

int ka_is_build_tool(const char *argv0, const char *exe)
{
    const char *names[2] = { kat_base_name(argv0), kat_base_name(exe) };
    for (int k = 0; k < 2; k++) {
        if (!names[k][0])
            continue;
        for (size_t i = 0; i < sizeof build_tools / sizeof build_tools[0]; i++)
            if (!strcmp(names[k], build_tools[i]))
                return 1;
        /* x86_64-linux-gnu-g++-13 and the like */
        if (strstr(names[k], "-g++") || strstr(names[k], "-gcc"))
            return 1;
    }
    return 0;
}

/* ---- phases ------------------------------------------------------------- */

static int listed(const char *name, size_t len, char *const *list, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (strlen(list[i]) == len && !memcmp(list[i], name, len))
            return 1;
    return 0;
}

/*
 * The party of a Python frame from its qualified name ("ModelNew.forward",
 * "build.<locals>.ModelNew.forward"): the first component the contract names
 * as a candidate or reference symbol (KernelBench's ModelNew and Model when it
 * names none).
 */
static int path_is(const char *file, size_t len, const char *path)
{
    /* the contract's path matches the frame's file by its trailing components */
    size_t n = path ? strlen(path) : 0;
    if (!n || n > len || memcmp(file + len - n, path, n))
        return 0;
    return n == len || file[len - n - 1] == '/' || path[0] == '/';
}
static enum ka_party python_party(const struct ka_contract *c, const char *message)
{
    /* message: "qualname (file)" */
    const char *open = strstr(message, " (");
    size_t qual_len = open ? (size_t)(open - message) : strlen(message);
    const char *file = open ? open + 2 : "";
    size_t file_len = strlen(file);
    if (file_len && file[file_len - 1] == ')')
        file_len--;
    static char *const default_candidate[] = { "ModelNew" };
    static char *const default_reference[] = { "Model" };
    char *const *cand = c->candidate.n_symbols ? c->candidate.symbols : default_candidate;
    size_t n_cand = c->candidate.n_symbols ? c->candidate.n_symbols : 1;
    char *const *ref = c->reference.n_symbols ? c->reference.symbols : default_reference;
    size_t n_ref = c->reference.n_symbols ? c->reference.n_symbols : 1;
    for (const char *p = message, *end = message + qual_len; p < end;) {
        size_t len = strcspn(p, ".");
        if (p + len > end)
            len = (size_t)(end - p);
        if (listed(p, len, cand, n_cand))
            return KA_PARTY_CANDIDATE;
        if (listed(p, len, ref, n_ref))
            return KA_PARTY_REFERENCE;
        p += len;
        if (p < end && *p == '.')
            p++;
    }
    if (path_is(file, file_len, c->candidate.path))
        return KA_PARTY_CANDIDATE;
    if (path_is(file, file_len, c->reference.path))
        return KA_PARTY_REFERENCE;
    return KA_PARTY_UNKNOWN;
}

enum ka_party ka_phase_party(const struct ka_contract *c, const char *message, int python)
{
    if (python)
        return python_party(c, message);
    if (!strcmp(message, c->phase_candidate))
        return KA_PARTY_CANDIDATE;
    if (!strcmp(message, c->phase_reference))
        return KA_PARTY_REFERENCE;
    return KA_PARTY_UNKNOWN;
}

/*
 * The party whose code was on tid's stack at t.  A candidate frame anywhere on
 * the stack makes the work the candidate's, whatever was called in between (a
 * candidate that routes its work through a reference method stays the
 * candidate); otherwise a reference frame makes it the reference's.
 * Ranges of one thread nest, so the phases containing t are the last one
 * started at or before t and its ancestors.
 */
static enum ka_party phase_at(const struct ka_proc *p, uint32_t tid, uint64_t t)
{
    int cand = 0, ref = 0;
    for (int pass = 0; pass < 2; pass++) {
        uint32_t want = pass == 0 ? tid : 0;
        size_t lo = 0, hi = p->n_phases;
        while (lo < hi) {
            size_t mid = (lo + hi) / 2;
            const struct ka_phase *ph = &p->phases[p->phase_order[mid]];
            if (ph->tid < want || (ph->tid == want && ph->start_ns <= t))
                lo = mid + 1;
            else
                hi = mid;
        }
        if (lo == 0 || p->phases[p->phase_order[lo - 1]].tid != want)
            continue;
        if (want == 0) {
            /* process-wide ranges need not nest: look at each */
            for (size_t i = lo; i-- > 0 && p->phases[p->phase_order[i]].tid == 0;) {
                const struct ka_phase *ph = &p->phases[p->phase_order[i]];
                if (ph->start_ns <= t && t <= ph->end_ns) {
                    cand |= ph->party == KA_PARTY_CANDIDATE;
                    ref |= ph->party == KA_PARTY_REFERENCE;
                }
            }
            continue;
        }
        for (int32_t j = (int32_t)p->phase_order[lo - 1], depth = 0; j >= 0 && depth < 4096;
             j = p->phases[j].parent, depth++) {
            const struct ka_phase *ph = &p->phases[j];
            if (ph->start_ns <= t && t <= ph->end_ns) {
                cand |= ph->party == KA_PARTY_CANDIDATE;
                ref |= ph->party == KA_PARTY_REFERENCE;
            }
        }
    }
    return cand ? KA_PARTY_CANDIDATE : ref ? KA_PARTY_REFERENCE : KA_PARTY_UNKNOWN;
}

/* The creation record of thread tid, NULL when it was not created by a traced pthread_create. */
const struct ka_thread_origin *ka_thread_origin(const struct ka_proc *p, uint32_t tid)
{
    for (size_t i = 0; i < p->n_threads; i++)
        if (p->threads[i].tid == tid && tid != 0)
            return &p->threads[i];
    return NULL;
}

/*
 * The party of work launched by thread tid at time t: its phase, or else the
 * phase its creator was in when it created the thread (a worker thread the
 * candidate started is the candidate's).  *via_thread says which.
 */
enum ka_party ka_trusted_party(const struct ka_proc *p, enum ka_party party, uint64_t t)
{
    /* the weak surfaces run both parties in the candidate's process, after the
       audit's work: there a reference phase is the reference's (and left out) */
    int weak = p->weak_start_ns && t >= p->weak_start_ns;
    return party == KA_PARTY_REFERENCE && p->reference_untrusted && !weak ? KA_PARTY_CANDIDATE : party;
}

enum ka_party ka_unphased_compute(const struct ka_proc *p, enum ka_party party, int cls, uint64_t t)
{
    /* the heavy families: the party's harness copies, fills, samples and draws
       noise, but never multiplies, convolves or normalizes */
    static const unsigned never_harness = 1u << KA_CLASS_GEMM | 1u << KA_CLASS_CONV | 1u << KA_CLASS_ATTENTION |
                                          1u << KA_CLASS_NORMALIZATION | 1u << KA_CLASS_SOFTMAX |
                                          1u << KA_CLASS_POOLING;
    if (!p->reference_untrusted || (party != KA_PARTY_HARNESS && party != KA_PARTY_UNKNOWN) || cls < 0 ||
        cls >= KA_CLASS_COUNT || !(never_harness & 1u << cls) || (p->weak_start_ns && t >= p->weak_start_ns))
        return party;
    return KA_PARTY_CANDIDATE;
}

enum ka_party ka_party_of_launch(const struct ka_proc *p, uint32_t tid, uint64_t t, int *via_thread,
                                     uint64_t *thread_created_ns)
{
    *via_thread = 0;
    if (p->candidate_process)
        return KA_PARTY_CANDIDATE;
    enum ka_party party = ka_trusted_party(p, phase_at(p, tid, t), t);
    if (party != KA_PARTY_UNKNOWN)
        return party;
    uint32_t cur = tid;
    for (int depth = 0; depth < 8; depth++) {
        const struct ka_thread_origin *o = ka_thread_origin(p, cur);
        if (!o)
            break;
        party = ka_trusted_party(p, phase_at(p, o->creator_tid, o->create_ns), t);
        if (party != KA_PARTY_UNKNOWN) {
            *via_thread = 1;
            *thread_created_ns = o->create_ns;
            return party;
        }
        cur = o->creator_tid;
    }
    return p->phase_marks ? KA_PARTY_HARNESS : KA_PARTY_UNKNOWN;
}

/* ---- modules ------------------------------------------------------------ */

/* The module loaded on tid while the launch call [s, e] ran (lazy loading loads at first launch). */
const struct ka_module *ka_module_loaded_during(const struct ka_proc *p, uint32_t tid, uint64_t s, uint64_t e)
{
    size_t lo = 0, hi = p->n_modules;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (p->modules[mid].time_ns < s)
            lo = mid + 1;
        else
            hi = mid;
    }
    const struct ka_module *found = NULL;
    for (size_t i = lo; i < p->n_modules && p->modules[i].time_ns <= e; i++)
        if (p->modules[i].tid == tid)
            found = &p->modules[i]; /* the last one: the module of the function itself */
    return found;
}

/*
 * The module of a function whose launch loaded none, from the modules its
 * thread loaded before the launch at s (NULL: unknown):
 *
 * - the last module tid loaded, when it was loaded explicitly (not inside a
 *   launch call: cuModuleLoadData and the like) and no launch call ran on
 *   tid between that load and this launch.  PyTorch's jiterator compiles a
 *   kernel with NVRTC at run time, loads it itself and launches it
 *   (torch.prod's reduction_prod_kernel); Triton and cuDNN runtime-compiled
 *   kernels go the same way;
 * - else the last module a candidate object loaded on tid: CUDA loads a
 *   module once, at the first launch of one of its functions, so the
 *   candidate's second kernel of a module loads nothing.
 *
 * Modules of vendor libraries are skipped: their functions are the vendor
 * kernels whose launches or call windows loaded them.
 */
/* (A module load is itself an API call, cuModuleLoadData: only launches count here.) */
static int loaded_inside_a_launch(const struct ka_proc *p, const struct ka_module *m)
{
    for (size_t i = 0; i < p->n_apis; i++)
        if (p->apis[i].launch && p->apis[i].tid == m->tid && p->apis[i].start_ns <= m->time_ns &&
            m->time_ns <= p->apis[i].end_ns)
            return 1;
    return 0;
}

static int launch_between(const struct ka_proc *p, uint32_t tid, uint64_t after, uint64_t before)
{
    for (size_t i = 0; i < p->n_apis; i++)
        if (p->apis[i].launch && p->apis[i].tid == tid && p->apis[i].start_ns > after && p->apis[i].start_ns < before)
            return 1;
    return 0;
}

const struct ka_module *ka_module_loaded_before(const struct ka_proc *p, uint32_t tid, uint64_t s)
{
    int first = 1;
    for (size_t i = p->n_modules; i-- > 0;) {
        const struct ka_module *m = &p->modules[i];
        if (m->tid != tid || m->time_ns >= s || m->loader_kind == KA_LOADER_VENDOR)
            continue;
        if (first && !loaded_inside_a_launch(p, m) && !launch_between(p, tid, m->time_ns, s))
            return m;
        first = 0;
        if (m->loader_kind == KA_LOADER_CANDIDATE)
            return m;
    }
    return NULL;
}

/* ---- vendor libraries ------------------------------------------------------ */

static const char *vendor_soname_prefix(uint32_t library)
{
    return library == KAT_LIB_CUBLAS ? "libcublas.so" : library == KAT_LIB_CUBLASLT ? "libcublasLt.so" : "libcudnn.so";
}

/* The XXH3-128 of the process's library whose soname starts with prefix (into d), NULL if it loaded none. */
static const uint8_t *library_digest(const struct ka_proc *p, const char *prefix, uint8_t d[16])
{
    for (size_t i = 0; i < p->n_libs; i++)
        if (!strncmp(p->libs[i].soname, prefix, strlen(prefix))) {
            kinv_digest_from_halves(p->libs[i].lo, p->libs[i].hi, d);
            return d;
        }
    return NULL;
}

/*
 * The library record of the vendor object that loaded a module: the loader
 * is a path (.../libcudnn_graph.so.9), the record has its soname
 * (libcudnn_graph.so.9).  The same name, else the same name up to ".so"
 * (a loader path with a longer version, libcublasLt.so.13.0.1).
 */
static const uint8_t *loader_library_digest(const struct ka_proc *p, const char *loader, uint8_t d[16])
{
    const char *b = kat_base_name(loader);
    const char *so = strstr(b, ".so");
    size_t stem = so ? (size_t)(so - b) + 3 : strlen(b);
    const char *found = NULL;
    size_t at = 0;
    for (size_t i = 0; i < p->n_libs && !(found && !strcmp(found, b)); i++) {
        const char *name = p->libs[i].soname;
        if (!strcmp(name, b) || (!found && !strncmp(name, b, stem) && (name[stem] == '.' || !name[stem]))) {
            found = name;
            at = i;
        }
    }
    if (!found)
        return NULL;
    kinv_digest_from_halves(p->libs[at].lo, p->libs[at].hi, d);
    return d;
}

int ka_library_pinned(const struct kinv_inventory *inv, const struct ka_proc *p, uint32_t library)
{
    if (!inv)
        return -1;
    uint8_t d[16];
    return kinv_library_pinned(inv, library_digest(p, vendor_soname_prefix(library), d));
}

/* ---- kernels -------------------------------------------------------------- */

/*
 * A kernel's origin.  Vendor or not is the inventory's attribution rule,
 * kinv_attribute (inventory/attribution.c, docs/inventory.md "Name
 * collisions"): the analyzer hands it the launch's facts and applies its
 * verdict, so the rule that runs is the rule inventory_attribution tests.
 * (Until this was one rule the analyzer had its own copy: a vendor call
 * window made a kernel vendor work even when its module was the
 * candidate's, and it never asked whether the library was pinned.  On every
 * recorded session in examples/ both gave the same origins, which
 * tests/golden checks; they differ only for a window around the candidate's
 * own module and for libraries the inventory does not pin.)  What the rule
 * does not decide, the analyzer does: framework code by its module or name,
 * and the candidate's work by its phase.
 */

/* The launch's facts as kinv_attribute takes them, and its verdict. */
static void attribute(const struct kinv_inventory *inv, const struct ka_proc *p, const struct ka_kernel_facts *f,
                      struct kinv_attribution *v)
{
    const struct ka_module *mod = f->module;
    uint8_t window_lib[16], module_lib[16], module_digest[16];
    struct kinv_match match = { .strength = (enum kinv_strength)f->name_match };
    struct kinv_launch_facts facts = {
        .name = f->name,
        .name_len = f->name_len,
        .in_vendor_window = f->vcall != NULL,
        .name_match = &match,
    };
    if (f->vcall)
        facts.window_library_digest = library_digest(p, vendor_soname_prefix(f->vcall->rec.library), window_lib);
    if (mod) {
        switch (mod->loader_kind) {
        case KA_LOADER_CANDIDATE: facts.module_origin = KINV_MODULE_CANDIDATE; break;
        case KA_LOADER_VENDOR: facts.module_origin = KINV_MODULE_VENDOR; break;
        case KA_LOADER_UNKNOWN: facts.module_origin = KINV_MODULE_UNKNOWN; break;
        default: facts.module_origin = KINV_MODULE_OTHER; break;
        }
        if (facts.module_origin == KINV_MODULE_VENDOR)
            facts.module_library_digest = loader_library_digest(p, mod->loader, module_lib);
        kinv_digest_from_halves(mod->digest_lo, mod->digest_hi, module_digest);
        facts.module_digest = module_digest;
    }
    kinv_attribute(inv, &facts, v);
}

void ka_kernel_origin(const struct kinv_inventory *inv, const struct ka_proc *p, const struct ka_kernel_facts *f,
                      struct ka_kernel_attribution *out)
{
    const struct ka_module *mod = f->module;
    struct kinv_attribution v;
    /* Without a window and a module the verdict depends on the name alone: the
       caller keeps it per name, which spares most launches the rule's cost. */
    int name_alone = !f->vcall && !mod;
    if (name_alone && f->name_verdict && *f->name_verdict) {
        v = (struct kinv_attribution){ .verdict = (enum kinv_verdict)*f->name_verdict,
                                       .name_match = (enum kinv_strength)f->name_match };
    } else {
        attribute(inv, p, f, &v);
        if (name_alone && f->name_verdict)
            *f->name_verdict = (uint8_t)v.verdict;
    }
    out->verdict = v.verdict;
    out->reason = v.reason;
    out->impersonation = 0;
    out->digest_vendor = 0;
    switch (v.verdict) {
    case KINV_VERDICT_VENDOR:
        out->origin = KA_ORIGIN_VENDOR;
        if (inv && mod) {
            uint8_t d[16];
            const struct kinv_module *first;
            kinv_digest_from_halves(mod->digest_lo, mod->digest_hi, d);
            out->digest_vendor = kinv_lookup_module(inv, d, &first) > 0;
        }
        return;
    case KINV_VERDICT_CANDIDATE:
    case KINV_VERDICT_IMPERSONATION:
        out->origin = KA_ORIGIN_CANDIDATE;
        out->impersonation = v.verdict == KINV_VERDICT_IMPERSONATION;
        /* A function of a module the candidate's object loaded is the candidate's launch. */
        if (out->party == KA_PARTY_UNKNOWN || out->party == KA_PARTY_HARNESS)
            out->party = KA_PARTY_CANDIDATE;
        return;
    case KINV_VERDICT_VENDOR_UNPINNED:
    case KINV_VERDICT_CONFLICT:
        /* Reported (kernels.c), never vendor work, and not the candidate's own either. */
        out->origin = KA_ORIGIN_UNATTRIBUTED;
        return;
    case KINV_VERDICT_NAME_ONLY:
    case KINV_VERDICT_UNATTRIBUTED:
    default:
        break;
    }
    if ((mod && mod->loader_kind == KA_LOADER_FRAMEWORK) || f->framework_name) {
        out->origin = KA_ORIGIN_FRAMEWORK;
    } else if (mod && mod->loader_kind == KA_LOADER_PYTHON && out->party == KA_PARTY_CANDIDATE) {
        /* the candidate's own Python code loaded it, through ctypes, at its launch */
        out->origin = KA_ORIGIN_CANDIDATE;
        out->impersonation = v.name_match != KINV_MATCH_NONE;
    } else if (p->candidate_process && (!mod || mod->loader_kind != KA_LOADER_VENDOR)) {
        /* a process the contract names as the candidate's: its code is the candidate's */
        out->origin = KA_ORIGIN_CANDIDATE;
        out->impersonation = v.name_match != KINV_MATCH_NONE;
    } else {
        /* The candidate's phase launching it is no evidence that its code is the
           candidate's (a jiterator kernel PyTorch compiled and loaded, a kernel
           whose module's loader is not known): own code needs a candidate object
           behind its module.  Reported (kernels.c), never the
           candidate's own, never framework or vendor work. */
        out->origin = KA_ORIGIN_UNATTRIBUTED;
    }
}

/* ---- Python --------------------------------------------------------------- */

/* What the Python side said, for a process that runs Python. */
void ka_python_provenance_finding(struct ka_findings *f, struct ka_session_facts *s, struct ka_proc *p,
                                  const char *argv0, const char *exe)
{
    const char *b1 = kat_base_name(argv0), *b2 = kat_base_name(exe);
    int python = !strncmp(b1, "python", 6) || !strncmp(b2, "python", 6) || p->python_status;
    if (!python)
        return;
    if (!p->python_status) {
        s->python_off++;
        ka_field_u64(ka_add_finding(f, KA_AXIS_IMPLEMENTATION, KA_FINDING_SIGNAL, "python-provenance-missing",
                                    p->file, 0,
                                    "Python process %u never reported Python-side provenance (kaudit run --no-python, "
                                    "python -S or -I, or a PYTHONPATH the program replaced): its framework work can "
                                    "only be attributed by phase marks",
                                    p->pid),
                     "pid", p->pid);
        return;
    }
    int on = !strncmp(p->python_status, "on", 2);
    if (!on)
        s->python_off++;
    struct ka_finding *x =
        on ? ka_add_finding(f, KA_AXIS_IMPLEMENTATION, KA_FINDING_SIGNAL, "python-provenance", p->file, 0, "%s",
                            p->python_status)
           : ka_add_finding(f, KA_AXIS_IMPLEMENTATION, KA_FINDING_SIGNAL, "python-provenance-off", p->file, 0,
                            "Python-side provenance in process %u: %s", p->pid, p->python_status);
    ka_field_u64(x, "pid", p->pid);
    ka_field_str(x, "status", p->python_status);
    if (p->python_operators)
        ka_field_str(x, "operators", p->python_operators);
    if (p->python_operators && !strncmp(p->python_operators, "lost", 4))
        /* switching the ranges off failed: the program turned the profiler off or on itself
           while a sampled call ran; the names and the other calls' ranges still decide */
        ka_field_str(ka_add_finding(f, KA_AXIS_IMPLEMENTATION, KA_FINDING_SIGNAL, "operator-ranges-lost", p->file, 0,
                                    "process %u: PyTorch's operator ranges were switched off or on by the program "
                                    "itself during a sampled call (%s)",
                                    p->pid, p->python_operators),
                     "operators", p->python_operators);
}

