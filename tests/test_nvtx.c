/*
 * test_nvtx.c - `kaudit run` on a program that uses NVTX and threads: the
 * trace must hold its ranges and marks (messages, domains, nesting, paired
 * ids), its three threads (create paired with start), and its libraries.
 * The program's own output must show NVTX semantics were kept.
 *
 * KAUDIT_BIN and NVTX_PROG are absolute paths given by tests/nvtx.cmake.
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "session.h"
#include "trace_reader.h"

#define MAX_RECS 256

struct copy {
    uint16_t type;
    union {
        struct kat_nvtx_rec nvtx;
        struct kat_thread_rec thread;
        struct kat_library_rec library;
        struct kat_health_rec health;
        struct kat_process_start_rec start;
    } u;
};

static struct {
    char dir[PATH_MAX];
    char session[PATH_MAX + 16];
    char output[8192];
    int status;
    struct kat_trace *trace;
    struct copy recs[4096];
    size_t count;
    char prog[PATH_MAX];
} run;

static void run_prog(void)
{
    strcpy(run.dir, "/tmp/kaudit-nvtx-XXXXXX");
    cr_assert_not_null(mkdtemp(run.dir));
    snprintf(run.session, sizeof run.session, "%s/session", run.dir);
    cr_assert_not_null(realpath(NVTX_PROG, run.prog));

    char out_path[PATH_MAX + 16];
    snprintf(out_path, sizeof out_path, "%s/stdout", run.dir);
    pid_t pid = fork();
    cr_assert_neq(pid, -1);
    if (pid == 0) {
        int fd = open(out_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd < 0)
            _exit(98);
        dup2(fd, 1);
        unsetenv("NVTX_INJECTION64_PATH");
        /* Started by a relative path, as people do: argv[0] is then no path
         * to the program, and every record must still name it by its real one. */
        char dir[PATH_MAX], relative[PATH_MAX + 2];
        strcpy(dir, run.prog);
        char *slash = strrchr(dir, '/');
        *slash = '\0';
        snprintf(relative, sizeof relative, "./%s", slash + 1);
        if (chdir(dir) != 0)
            _exit(97);
        execl(KAUDIT_BIN, KAUDIT_BIN, "run", "-d", run.session, "--", relative, (char *)NULL);
        _exit(99);
    }
    cr_assert_eq(waitpid(pid, &run.status, 0), pid);
    FILE *f = fopen(out_path, "r");
    cr_assert_not_null(f);
    size_t n = fread(run.output, 1, sizeof run.output - 1, f);
    run.output[n] = '\0';
    fclose(f);

    struct kat_session *s;
    char err[512];
    cr_assert_eq(kat_session_open(run.session, &s, err, sizeof err), 0, "%s", err);
    cr_assert_eq(kat_session_trace_count(s), 1, "one traced process");
    run.trace = kat_trace_open(kat_session_trace_path(s, 0), err, sizeof err);
    kat_session_close(s);
    cr_assert_not_null(run.trace, "%s", err);

    struct kat_record r;
    int rc;
    run.count = 0;
    while ((rc = kat_trace_next(run.trace, &r, err, sizeof err)) == 1) {
        if (run.count == sizeof run.recs / sizeof run.recs[0])
            break;
        struct copy *c = &run.recs[run.count];
        size_t size = 0;
        switch (r.type) {
        case KAT_REC_NVTX: size = sizeof c->u.nvtx; break;
        case KAT_REC_THREAD: size = sizeof c->u.thread; break;
        case KAT_REC_LIBRARY: size = sizeof c->u.library; break;
        case KAT_REC_HEALTH: size = sizeof c->u.health; break;
        case KAT_REC_PROCESS_START: size = sizeof c->u.start; break;
        default: continue;
        }
        c->type = r.type;
        memcpy(&c->u, r.body, size);
        run.count++;
    }
    cr_assert_eq(rc, 0, "%s", err);
    cr_expect(kat_trace_complete(run.trace), "the trace ends with a PROCESS_END record");
}

static void cleanup(void)
{
    if (run.trace)
        kat_trace_close(run.trace);
    run.trace = NULL;
    if (run.dir[0]) {
        char cmd[PATH_MAX + 32];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", run.dir);
        if (system(cmd) != 0) {
            /* a leftover temporary directory is not a failure */
        }
    }
}

static const char *s(uint32_t id)
{
    return kat_trace_string(run.trace, id);
}

static uint32_t traced_pid(void)
{
    for (size_t i = 0; i < run.count; i++)
        if (run.recs[i].type == KAT_REC_PROCESS_START)
            return run.recs[i].u.start.pid;
    return 0;
}

/* The NVTX records of one thread, in order. */
static size_t nvtx_of(uint32_t tid, const struct kat_nvtx_rec **out, size_t max)
{
    size_t n = 0;
    for (size_t i = 0; i < run.count && n < max; i++)
        if (run.recs[i].type == KAT_REC_NVTX && run.recs[i].u.nvtx.thread_id == tid)
            out[n++] = &run.recs[i].u.nvtx;
    return n;
}

TestSuite(nvtx_run, .init = run_prog, .fini = cleanup, .timeout = 60);

Test(nvtx_run, program_runs_unchanged_with_nvtx_semantics)
{
    cr_assert(WIFEXITED(run.status) && WEXITSTATUS(run.status) == 0, "status %d", run.status);
    cr_expect_str_eq(run.output, "outer=0\ninner=1\npop_inner=1\npop_outer=0\nstart_id_nonzero=1\n"
                                 "domain_push=0\ndomain_pop=0\nworkers_ok=1\n");
}

Test(nvtx_run, injection_health_names_the_nvtx_copy)
{
    int found = 0;
    for (size_t i = 0; i < run.count; i++) {
        const struct copy *c = &run.recs[i];
        if (c->type == KAT_REC_HEALTH && c->u.health.code == KAT_HEALTH_NVTX_INJECTION) {
            found++;
            cr_expect_eq(c->u.health.value, 1);
            cr_expect_str_eq(s(c->u.health.detail_string), run.prog);
        }
    }
    cr_expect_eq(found, 1, "one NVTX copy (the program's) attached once");
}

Test(nvtx_run, main_thread_ranges_marks_and_domains)
{
    uint32_t pid = traced_pid();
    cr_assert_neq(pid, 0);
    const struct kat_nvtx_rec *r[32];
    size_t n = nvtx_of(pid, r, 32);
    cr_assert_eq(n, 12);
    const char *dom = "kaudit.nvtx_prog";
    struct { uint32_t kind; uint64_t level; const char *msg; const char *domain; } want[] = {
        { KAT_NVTX_PUSH, 0, "outer", "" },
        { KAT_NVTX_PUSH, 1, "inner \xc3\xa9", "" },
        { KAT_NVTX_MARK, 0, "mark A", "" },
        { KAT_NVTX_POP, 1, "", "" },
        { KAT_NVTX_POP, 0, "", "" },
        { KAT_NVTX_START, ~0ull, "start-end A", "" },
        { KAT_NVTX_END, ~0ull, "", "" },
        { KAT_NVTX_PUSH, 0, "registered message", dom },
        { KAT_NVTX_MARK, 0, "domain mark", dom },
        { KAT_NVTX_START, ~0ull, "domain range", dom },
        { KAT_NVTX_END, ~0ull, "", dom },
        { KAT_NVTX_POP, 0, "", dom },
    };
    for (size_t i = 0; i < n; i++) {
        cr_expect_eq(r[i]->kind, want[i].kind, "record %zu", i);
        if (want[i].level != ~0ull)
            cr_expect_eq(r[i]->range_id, want[i].level, "record %zu level", i);
        cr_expect_str_eq(s(r[i]->message_string), want[i].msg, "record %zu", i);
        cr_expect_str_eq(s(r[i]->domain_string), want[i].domain, "record %zu", i);
        if (i)
            cr_expect_geq(r[i]->time_ns, r[i - 1]->time_ns, "record %zu in time order", i);
    }
    cr_expect_neq(r[5]->range_id, 0);
    cr_expect_eq(r[6]->range_id, r[5]->range_id, "end carries its start's id");
    cr_expect_eq(r[10]->range_id, r[9]->range_id);
    cr_expect_neq(r[9]->range_id, r[5]->range_id, "range ids are unique");
}

Test(nvtx_run, three_threads_created_started_and_marked)
{
    uint32_t pid = traced_pid();
    const struct kat_thread_rec *create[8], *start[8];
    size_t nc = 0, ns = 0;
    for (size_t i = 0; i < run.count; i++) {
        if (run.recs[i].type != KAT_REC_THREAD)
            continue;
        const struct kat_thread_rec *t = &run.recs[i].u.thread;
        if (t->event == KAT_THREAD_CREATE && nc < 8)
            create[nc++] = t;
        else if (t->event == KAT_THREAD_START && ns < 8)
            start[ns++] = t;
    }
    cr_assert_eq(nc, 3);
    cr_assert_eq(ns, 3);
    int seen_worker[3] = { 0, 0, 0 };
    for (size_t i = 0; i < nc; i++) {
        cr_expect_eq(create[i]->thread_id, pid, "created by the main thread");
        cr_expect_str_eq(s(create[i]->routine_object_string), run.prog);
        size_t paired = 0;
        for (size_t j = 0; j < ns; j++) {
            if (start[j]->token != create[i]->token)
                continue;
            paired++;
            cr_expect_neq(start[j]->thread_id, pid);
            cr_expect_eq(start[j]->start_routine, create[i]->start_routine);
            cr_expect_leq(create[i]->time_ns, start[j]->time_ns);
            /* The new thread's NVTX records carry its id. */
            const struct kat_nvtx_rec *r[8];
            size_t n = nvtx_of(start[j]->thread_id, r, 8);
            cr_assert_eq(n, 3, "worker thread %u", start[j]->thread_id);
            int w = -1;
            cr_expect_eq(sscanf(s(r[0]->message_string), "worker %d", &w), 1);
            if (w >= 0 && w < 3)
                seen_worker[w]++;
            cr_expect_eq(r[0]->kind, KAT_NVTX_PUSH);
            cr_expect_eq(r[0]->range_id, 0, "each thread nests from 0");
            cr_expect_eq(r[1]->kind, KAT_NVTX_MARK);
            cr_expect_str_eq(s(r[1]->message_string), "worker mark");
            cr_expect_eq(r[2]->kind, KAT_NVTX_POP);
            cr_expect_eq(r[2]->range_id, 0);
        }
        cr_expect_eq(paired, 1, "token %llu", (unsigned long long)create[i]->token);
    }
    cr_expect(seen_worker[0] == 1 && seen_worker[1] == 1 && seen_worker[2] == 1);
}

Test(nvtx_run, libraries_with_sonames_and_digests)
{
    const struct kat_library_rec *libc = NULL, *prog = NULL, *preload = NULL;
    int digest_unavailable = 0;
    for (size_t i = 0; i < run.count; i++) {
        const struct copy *c = &run.recs[i];
        if (c->type == KAT_REC_HEALTH && c->u.health.code == KAT_HEALTH_DIGEST_UNAVAILABLE)
            digest_unavailable = 1;
        if (c->type != KAT_REC_LIBRARY)
            continue;
        const struct kat_library_rec *l = &c->u.library;
        cr_expect_eq(l->duplicate, 0, "%s", s(l->path_string));
        if (strcmp(s(l->soname_string), "libc.so.6") == 0)
            libc = l;
        if (strcmp(s(l->path_string), run.prog) == 0)
            prog = l;
        if (strstr(s(l->path_string), "libkaudit_preload.so"))
            preload = l;
    }
    cr_assert_not_null(libc, "libc is listed with its SONAME");
    cr_expect(strstr(s(libc->path_string), "libc.so.6") != NULL);
    cr_expect_gt(libc->file_size, 0);
    cr_expect_neq(libc->base_address, 0);
    cr_assert_not_null(prog, "the program is listed by its real path");
    cr_expect_gt(prog->file_size, 0);
    cr_assert_not_null(preload);
    if (!digest_unavailable)
        cr_expect_neq(prog->digest_lo | prog->digest_hi, 0, "the program is hashed");
}
