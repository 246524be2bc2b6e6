/*
 * built_objects.c - the objects a run built for itself (docs/analysis.md,
 * "Parties and origins").
 *
 * A harness that compiles a candidate's extension (load_inline, cpp_extension,
 * nvcc) runs compilers and linkers as processes of the recorded run, each with
 * a trace whose PROCESS_START has its argv and working directory.  The object
 * a linker writes (`-o ext.so`) and the harness then loads is code built on
 * the run's behalf: the candidate's, wherever the build directory is (a
 * KernelBench build_dir, a cache moved by TORCH_EXTENSIONS_DIR), unless the
 * contract's reference.objects claims it.  A build found up to date links
 * nothing: PyTorch's load_inline still runs `ninja -v` in the extension's
 * folder (KernelBench's build_dir after a build cache pass or an earlier
 * sample), so an object directly in the folder a build driver of the run
 * built in is the build's too.  Path patterns stay the contract's declared
 * fallback (origin.c).  A pass over the traces' first records, before the
 * index, so that every process's modules can use it.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis_internal.h"
#include "session.h"
#include "trace_reader.h"

/* dir/path, with "./" steps and duplicate slashes folded; path as is when absolute. */
static char *joined(const char *cwd, const char *path)
{
    char *out = NULL;
    if (path[0] == '/' || !cwd || !*cwd)
        out = strdup(path);
    else if (asprintf(&out, "%s/%s", cwd, path) < 0)
        out = NULL;
    if (!out)
        return NULL;
    char *w = out;
    for (const char *r = out; *r;) {
        if (r[0] == '/' && r[1] == '/') {
            r++;
        } else if (r[0] == '/' && r[1] == '.' && r[2] == '/') {
            r += 2;
        } else {
            *w++ = *r++;
        }
    }
    *w = 0;
    return out;
}

static void add_output(struct ka_run *run, const char *path, uint32_t pid, const char *tool, int folder)
{
    if (GROW(run->built, run->n_built, run->cap_built))
        return;
    run->built[run->n_built++] =
        (struct ka_built){ .path = strdup(path), .pid = pid, .tool = strdup(tool), .folder = folder };
}

/* Build drivers: they decide what is out of date and run the compilers for it. */
static int is_build_driver(const char *name)
{
    return !strcmp(name, "ninja") || !strcmp(name, "make") || !strcmp(name, "gmake");
}

/*
 * The folder a build driver built in: its working directory, or its -C
 * folder.  A query (--version, -t TOOL, -n, --help) builds nothing and
 * names no folder.
 */
static void driver_folder(struct ka_run *run, const char *argv, const char *end, const char *cwd, uint32_t pid)
{
    const char *dir = NULL;
    for (const char *a = argv + strlen(argv) + 1; a < end; a += strlen(a) + 1) {
        if (!strcmp(a, "--version") || !strcmp(a, "--help") || !strcmp(a, "-t") || !strcmp(a, "-n") ||
            !strncmp(a, "--dry-run", 9) || !strcmp(a, "-q") || !strcmp(a, "--question"))
            return;
        if (!strcmp(a, "-C") && a + 3 <= end)
            dir = a + 3;
        else if (!strncmp(a, "-C", 2) && a[2])
            dir = a + 2;
    }
    char *path = joined(cwd, dir ? dir : ".");
    if (!path)
        return;
    size_t n = strlen(path);
    while (n > 1 && (path[n - 1] == '/' || (n > 2 && path[n - 1] == '.' && path[n - 2] == '/')))
        path[--n] = 0;   /* "dir/." and "dir/" name dir */
    if (path[0] == '/' && n > 1)
        add_output(run, path, pid, kat_base_name(argv), 1);
    free(path);
}

/* What a build tool process (the caller checked it is one) wrote: the outputs
 * named by -o (or -oFILE) in its NUL-joined argv; for a build driver, the
 * folder it built in. */
static void tool_outputs(struct ka_run *run, const struct kat_trace *t, const struct kat_process_start_rec *s,
                         uint32_t pid)
{
    const char *argv = kat_trace_string(t, s->argv_string);
    uint32_t len = kat_trace_string_length(t, s->argv_string);
    const char *cwd = kat_trace_string(t, s->cwd_string);
    const char *end = argv + len;
    if (is_build_driver(kat_base_name(argv)) && cwd && cwd[0] == '/') {
        driver_folder(run, argv, end, cwd, pid);
        return;
    }
    for (const char *a = argv; a < end; a += strlen(a) + 1) {
        const char *out = NULL;
        if (!strcmp(a, "-o") && a + 3 <= end)
            out = a + 3;
        else if (!strncmp(a, "-o", 2) && a[2] && a[2] != '-' && strcmp(kat_base_name(argv), "nvcc") != 0)
            out = a + 2;   /* gcc's -oFILE; nvcc has options of that spelling (-odir) */
        if (!out || out >= end || !*out)
            continue;
        char *path = joined(cwd, out);
        if (path)
            add_output(run, path, pid, kat_base_name(argv), 0);
        free(path);
    }
}

/* A build tool process's lifetime, for the build's wall time, and its
 * working folder, which names its build. */
struct span {
    uint64_t start, end;
    char *folder;
    char tool[KA_BUILD_TOOL_NAME];   /* the process's program, by base name */
};

static int by_start(const void *a, const void *b)
{
    const struct span *x = a, *y = b;
    return x->start < y->start ? -1 : x->start > y->start;
}

/* The union of the spans' lengths, in seconds (sorts them). */
static double union_s(struct span *v, size_t n)
{
    qsort(v, n, sizeof *v, by_start);
    uint64_t total = 0, cur_start = 0, cur_end = 0;
    for (size_t i = 0; i < n; i++) {
        if (i == 0 || v[i].start > cur_end) {
            total += cur_end - cur_start;
            cur_start = v[i].start;
            cur_end = v[i].end;
        } else if (v[i].end > cur_end) {
            cur_end = v[i].end;
        }
    }
    total += cur_end - cur_start;
    return (double)total / 1e9;
}

/* When the process whose trace t is ended (its PROCESS_END), 0 when the trace holds none. */
static uint64_t end_of(struct kat_trace *t)
{
    struct kat_record r;
    char err[256];
    while (kat_trace_next(t, &r, err, sizeof err) == 1)
        if (r.type == KAT_REC_PROCESS_END)
            return ((const struct kat_process_end_rec *)r.body)->time_ns;
    return 0;
}

static int by_folder_then_start(const void *a, const void *b)
{
    const struct span *x = a, *y = b;
    int c = strcmp(x->folder, y->folder);
    return c ? c : by_start(a, b);
}

static int by_tool_then_start(const void *a, const void *b)
{
    const struct span *x = a, *y = b;
    int c = strcmp(x->tool, y->tool);
    return c ? c : by_start(a, b);
}

static int by_longer(const void *a, const void *b)
{
    const struct ka_build_tool *x = a, *y = b;
    if (x->wall_s != y->wall_s)
        return x->wall_s > y->wall_s ? -1 : 1;
    return strcmp(x->name, y->name);
}

/* One build's spans (v[0..n), reordered) split by tool: the longest
 * KA_BUILD_TOOLS into b->tools. */
static void tools_of(struct ka_build *b, struct span *v, size_t n)
{
    qsort(v, n, sizeof *v, by_tool_then_start);
    struct ka_build_tool *all = kat_xcalloc(n, sizeof *all);
    size_t n_all = 0;
    for (size_t i = 0; i < n;) {
        size_t j = i;
        while (j < n && !strcmp(v[j].tool, v[i].tool))
            j++;
        struct ka_build_tool *t = &all[n_all++];
        snprintf(t->name, sizeof t->name, "%s", v[i].tool);
        t->processes = (unsigned)(j - i);
        t->wall_s = union_s(v + i, j - i);
        i = j;
    }
    qsort(all, n_all, sizeof *all, by_longer);
    b->tools_seen = (unsigned)n_all;
    b->n_tools = n_all < KA_BUILD_TOOLS ? (unsigned)n_all : KA_BUILD_TOOLS;
    memcpy(b->tools, all, b->n_tools * sizeof *all);
    free(all);
}

/* A build and when its first process started, for ordering the builds. */
struct grouped {
    uint64_t first;
    struct ka_build build;
};

static int by_first_start(const void *a, const void *b)
{
    const struct grouped *x = a, *y = b;
    if (x->first != y->first)
        return x->first < y->first ? -1 : 1;
    return strcmp(x->build.folder, y->build.folder);
}

/* The spans grouped by folder: one ka_build each, in the order their first
 * process started (then by folder). */
static void builds_of(struct ka_analysis *a, struct span *v, size_t n)
{
    qsort(v, n, sizeof *v, by_folder_then_start);
    struct grouped *g = kat_xcalloc(n, sizeof *g);   /* at most one build per span */
    size_t n_g = 0;
    for (size_t i = 0; i < n;) {
        size_t j = i;
        while (j < n && !strcmp(v[j].folder, v[i].folder))
            j++;
        struct grouped *b = &g[n_g++];
        b->build.folder = kat_xstrdup(v[i].folder);
        b->build.processes = (unsigned)(j - i);
        b->build.wall_s = union_s(v + i, j - i);   /* sorts v[i..j) by start: v[i] is the first */
        b->first = v[i].start;
        tools_of(&b->build, v + i, j - i);
        i = j;
    }
    qsort(g, n_g, sizeof *g, by_first_start);
    a->builds = kat_xcalloc(n_g, sizeof *a->builds);
    for (size_t i = 0; i < n_g; i++)
        a->builds[i] = g[i].build;
    a->n_builds = n_g;
    free(g);
}

void ka_collect_built_objects(struct ka_run *run, const struct kat_session *s)
{
    struct span *spans = NULL;
    size_t n_spans = 0, cap_spans = 0;
    run->a->build_wall_s = -1;
    for (size_t i = 0; i < kat_session_trace_count(s); i++) {
        char err[256];
        struct kat_trace *t = kat_trace_open(kat_session_trace_path(s, i), err, sizeof err);
        if (!t)
            continue;   /* the index says why */
        struct kat_record r;
        /* PROCESS_START comes first (the reader consumes the strings before it) */
        if (kat_trace_next(t, &r, err, sizeof err) == 1 && r.type == KAT_REC_PROCESS_START) {
            const struct kat_process_start_rec *st = r.body;
            if (ka_is_build_tool(kat_trace_string(t, st->argv_string), kat_trace_string(t, st->exe_string))) {
                run->a->build_processes++;
                uint64_t start = st->time_ns, end = 0;
                tool_outputs(run, t, st, kat_trace_header(t)->pid);
                const char *cwd = kat_trace_string(t, st->cwd_string);
                end = end_of(t);
                if (end > start && !GROW(spans, n_spans, cap_spans)) {
                    struct span *sp = &spans[n_spans++];
                    *sp = (struct span){ start, end, kat_xstrdup(cwd ? cwd : ""), "" };
                    const char *argv0 = kat_base_name(kat_trace_string(t, st->argv_string));
                    snprintf(sp->tool, sizeof sp->tool, "%s",
                             argv0[0] ? argv0 : kat_base_name(kat_trace_string(t, st->exe_string)));
                }
            }
        }
        kat_trace_close(t);
    }
    if (n_spans) {
        run->a->build_wall_s = union_s(spans, n_spans);
        builds_of(run->a, spans, n_spans);
    }
    for (size_t i = 0; i < n_spans; i++)
        free(spans[i].folder);
    free(spans);
}

/* path lies directly in folder (not in a folder below it). */
static int in_folder(const char *path, const char *folder)
{
    size_t n = strlen(folder);
    return !strncmp(path, folder, n) && path[n] == '/' && path[n + 1] && !strchr(path + n + 1, '/');
}

const struct ka_built *ka_built_object(struct ka_run *run, const char *path)
{
    if (!path || !*path || !run->n_built)
        return NULL;
    const struct ka_party_spec *ref = &run->c->reference;
    if (ref->n_objects && ka_path_matches(path, ref->objects, ref->n_objects))
        return NULL;
    /* an object a tool wrote wins over the folder it lies in */
    for (int folder = 0; folder < 2; folder++)
        for (size_t i = 0; i < run->n_built; i++) {
            struct ka_built *b = &run->built[i];
            if (b->folder != folder || !(folder ? in_folder(path, b->path) : !strcmp(b->path, path)))
                continue;
            if (!b->noted) {
                b->noted = 1;
                struct ka_finding *x;
                if (folder)
                    x = ka_add_finding(&run->findings, KA_AXIS_IMPLEMENTATION, KA_FINDING_SUPPORT,
                                       "candidate-object", NULL, 0,
                                       "%s is the candidate's code: it lies in the folder that pid %u (%s) "
                                       "built in during this run (found up to date), whatever the folder",
                                       path, b->pid, b->tool);
                else
                    x = ka_add_finding(&run->findings, KA_AXIS_IMPLEMENTATION, KA_FINDING_SUPPORT,
                                       "candidate-object", NULL, 0,
                                       "%s is the candidate's code: built in this run by pid %u (%s -o %s), "
                                       "whatever its directory",
                                       path, b->pid, b->tool, path);
                ka_field_str(x, "object", path);
                ka_field_u64(x, "built_by_pid", b->pid);
                ka_field_str(x, "reason", folder ? "build-folder" : "build-output");
            }
            return b;
        }
    return NULL;
}

void ka_built_objects_free(struct ka_run *run)
{
    for (size_t i = 0; i < run->n_built; i++) {
        free(run->built[i].path);
        free(run->built[i].tool);
    }
    free(run->built);
}
