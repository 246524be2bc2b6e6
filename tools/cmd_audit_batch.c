/*
 * audit_batch.c - `kaudit audit --batch TASKS.jsonl -o LEDGER.jsonl --jobs N`
 * (docs/audit.md, "Batches").
 *
 * Each pair is audited by a `kaudit audit` child of its own (a fresh worker,
 * as for one record), N at a time: their builds run in parallel and they
 * share the GPU.  The ledger gets one line per finished pair, written with
 * one append, so that a batch killed at any point and started again skips
 * the pairs the ledger holds and runs the rest: no completed record is lost
 * or written twice.  Records and audit directories go in LEDGER.d/ID/.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "audit.h"
#include "schedule.h"
#include "audit_phases.h"
#include "audit_exec.h"
#include "audit_shard.h"
#include "safe_file.h"
#include "cli.h"
#include "ledger.h"

/* A pair that ran out of GPU memory while other audits shared the GPU is
 * run again, alone, once the others are done: its first attempt says more
 * about its neighbours than about it. */
enum retry { RETRY_NONE, RETRY_PENDING, RETRY_RUNNING };

struct pair {
    char *id, *reference, *candidate, *contract, *weak, *corpus;
    char claimed[32];           /* "claimed_speedup", as --claimed-speedup takes it; "" when none */
    char *task;                 /* "task" and "slot": where the selection gates place it (kaudit gates) */
    long long slot;             /* -1 when none */
    int done;
    enum retry retry;
    const char *gpu;            /* --gpus: the CUDA_VISIBLE_DEVICES its worker got; NULL: left alone */
};

struct running {
    pid_t pid;
    size_t pair;
};

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* An id names a directory: letters, digits, and . _ - only. */
static int id_ok(const char *id)
{
    if (!*id || strlen(id) > 128 || id[0] == '.')
        return 0;
    for (const char *p = id; *p; p++)
        if (!(((*p | 32) >= 'a' && (*p | 32) <= 'z') || (*p >= '0' && *p <= '9') || *p == '.' || *p == '_' ||
              *p == '-'))
            return 0;
    return 1;
}

static char *member(const cJSON *o, const char *key, const char *file, unsigned line, int required, int *bad)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!v) {
        if (required) {
            cli_error("%s:%u: '%s' is missing", file, line, key);
            *bad = 1;
        }
        return NULL;
    }
    if (!cJSON_IsString(v)) {
        cli_error("%s:%u: '%s' must be a string", file, line, key);
        *bad = 1;
        return NULL;
    }
    return kat_xstrdup(v->valuestring);
}

static int read_pairs(const char *file, struct pair **out, size_t *n_out)
{
    FILE *f = fopen(file, "r");
    if (!f)
        return cli_error("cannot read the batch '%s': %s", file, strerror(errno));
    char *line = NULL;
    size_t cap = 0, n = 0, alloc = 0;
    ssize_t len;
    unsigned lineno = 0;
    int bad = 0;
    struct pair *pairs = NULL;
    while ((len = getline(&line, &cap, f)) > 0) {
        lineno++;
        char *s = line;
        while (*s == ' ' || *s == '\t')
            s++;
        if (*s == '\n' || *s == '#' || *s == '\0')
            continue;
        int trailing;
        cJSON *o = kvs_json_line(s, &trailing);
        if (trailing) {
            cli_error("%s:%u: more than one JSON value on the line (two tasks run together?)", file, lineno);
            bad = 1;
            continue;
        }
        if (!cJSON_IsObject(o)) {
            cli_error("%s:%u: not a JSON object", file, lineno);
            cJSON_Delete(o);
            bad = 1;
            continue;
        }
        if (n == alloc) {
            alloc = alloc ? 2 * alloc : 16;
            pairs = kat_xrealloc(pairs, alloc * sizeof *pairs);
        }
        struct pair *p = &pairs[n];
        memset(p, 0, sizeof *p);
        p->id = member(o, "id", file, lineno, 1, &bad);
        p->reference = member(o, "reference", file, lineno, 1, &bad);
        p->candidate = member(o, "candidate", file, lineno, 1, &bad);
        p->contract = member(o, "contract", file, lineno, 0, &bad);
        p->weak = member(o, "weak", file, lineno, 0, &bad);
        p->corpus = member(o, "corpus", file, lineno, 0, &bad);
        p->task = member(o, "task", file, lineno, 0, &bad);
        const cJSON *slot = cJSON_GetObjectItemCaseSensitive(o, "slot");
        p->slot = -1;
        if (slot && !(cJSON_IsNumber(slot) && slot->valuedouble >= 0 && slot->valuedouble <= 9007199254740992.0 &&
                      slot->valuedouble == floor(slot->valuedouble))) {
            cli_error("%s:%u: slot must be a non-negative integer", file, lineno);
            bad = 1;
        } else if (slot) {
            p->slot = (long long)slot->valuedouble;
        }
        if (!p->task != (p->slot < 0) && !bad) {
            cli_error("%s:%u: task and slot go together (the selection gates place a record by both)", file, lineno);
            bad = 1;
        }
        const cJSON *claimed = cJSON_GetObjectItemCaseSensitive(o, "claimed_speedup");
        if (claimed && !(cJSON_IsNumber(claimed) && claimed->valuedouble > 0 && isfinite(claimed->valuedouble))) {
            cli_error("%s:%u: claimed_speedup must be a positive number", file, lineno);
            bad = 1;
        } else if (claimed) {
            snprintf(p->claimed, sizeof p->claimed, "%.17g", claimed->valuedouble);
        }
        cJSON_Delete(o);
        if (p->id && !id_ok(p->id)) {
            cli_error("%s:%u: id '%s' must be letters, digits, '.', '_' or '-' (it names a directory)", file, lineno,
                      p->id);
            bad = 1;
        }
        if (p->weak && strcasecmp(p->weak, "ACCEPT") && strcasecmp(p->weak, "REJECT")) {
            cli_error("%s:%u: weak must be ACCEPT or REJECT, not '%s'", file, lineno, p->weak);
            bad = 1;
        }
        for (size_t i = 0; p->id && i < n; i++)
            if (pairs[i].id && !strcmp(pairs[i].id, p->id)) {
                cli_error("%s:%u: id '%s' is used twice", file, lineno, p->id);
                bad = 1;
            }
        n++;
    }
    free(line);
    fclose(f);
    *out = pairs;
    *n_out = n;
    return bad ? -1 : 0;
}

/*
 * The ids the ledger holds already.  A last line without its newline (the
 * batch was killed while appending it) is cut off, so that it is written
 * again whole; any other line that does not parse is an error.
 */
static int read_ledger(const char *ledger, struct pair *pairs, size_t n, size_t *done)
{
    *done = 0;
    FILE *f = fopen(ledger, "r+");
    if (!f)
        return errno == ENOENT ? 0 : cli_error("cannot read the ledger '%s': %s", ledger, strerror(errno));
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    long good_end = 0;
    unsigned lineno = 0;
    int rc = 0;
    while ((len = getline(&line, &cap, f)) > 0) {
        lineno++;
        if (line[len - 1] != '\n')
            break; /* torn last line */
        cJSON *o = cJSON_Parse(line);
        const cJSON *id = cJSON_GetObjectItemCaseSensitive(o, "id");
        if (!cJSON_IsString(id)) {
            cJSON_Delete(o);
            rc = cli_error("%s:%u: not a ledger line (a JSON object with an id)", ledger, lineno);
            break;
        }
        for (size_t i = 0; i < n; i++)
            if (!pairs[i].done && !strcmp(pairs[i].id, id->valuestring)) {
                pairs[i].done = 1;
                (*done)++;
            }
        cJSON_Delete(o);
        good_end = ftell(f);
    }
    free(line);
    if (rc == 0 && ftruncate(fileno(f), good_end) != 0)
        rc = cli_error("cannot repair the ledger '%s': %s", ledger, strerror(errno));
    fclose(f);
    return rc;
}

/* The pair's record when its audit ended with a verdict (exit 0, 10, 11). */
static cJSON *read_record(const char *dir, int status)
{
    if (status != 0 && status != 10 && status != 11)
        return NULL;
    char record[PATH_MAX + 300], err[PATH_MAX + 400];
    snprintf(record, sizeof record, "%s/record.json", dir);
    char *text = NULL;
    size_t len = 0;
    if (kat_read_input(record, 0, 1u << 30, &text, &len, err, sizeof err) != 0)
        return NULL;
    cJSON *rec = cJSON_ParseWithLength(text, len);
    free(text);
    return rec;
}

/* What the reported slots found (docs/audit.md, "What gates"): the codes of
 * the findings that name a reported slot (layout-strided, ...), so that a
 * ledger says "right on the task's inputs, NaN for a strided view". */
static void add_reported(cJSON *line, const cJSON *rec)
{
    const cJSON *sem = cJSON_GetObjectItemCaseSensitive(rec, "semantic");
    cJSON *codes = NULL;
    const cJSON *slot, *f;
    cJSON_ArrayForEach(slot, cJSON_GetObjectItemCaseSensitive(sem, "slots"))
    {
        const cJSON *name = cJSON_GetObjectItemCaseSensitive(slot, "name");
        if (!cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(slot, "gating")) || !cJSON_IsString(name))
            continue;
        char code[64];
        kat_reported_code(name->valuestring, code, sizeof code);
        cJSON_ArrayForEach(f, cJSON_GetObjectItemCaseSensitive(sem, "findings"))
        {
            const cJSON *fc = cJSON_GetObjectItemCaseSensitive(f, "code");
            if (cJSON_IsString(fc) && !strcmp(fc->valuestring, code)) {
                if (!codes)
                    codes = cJSON_AddArrayToObject(line, "reported_findings");
                cJSON_AddItemToArray(codes, cJSON_CreateString(code));
                break;
            }
        }
    }
}

/* Whether the record's semantic findings say the GPU's memory ran out, or
 * kaudit stopped the worker over its share of the machine's memory (a share
 * a pair run alone does not split). */
static int ran_out_of_memory(const cJSON *rec)
{
    const cJSON *over = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(rec, "worker"),
                                                         "stopped_over_limit");
    const cJSON *resource = cJSON_GetObjectItemCaseSensitive(over, "resource");
    if (cJSON_IsString(resource) && !strcmp(resource->valuestring, "memory"))
        return 1;
    const cJSON *f;
    cJSON_ArrayForEach(f, cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(rec, "semantic"),
                                                           "findings"))
    {
        const cJSON *code = cJSON_GetObjectItemCaseSensitive(f, "code");
        if (cJSON_IsString(code) && !strcmp(code->valuestring, "resource-exhausted"))
            return 1;
    }
    return 0;
}

/* The record's weak surfaces as the ledger's weak_decisions {name: ACCEPT|REJECT}
 * (validators/ledger.c reads them: docs/validators.md). */
static void add_weak_decisions(cJSON *line, const cJSON *rec)
{
    const cJSON *ws = cJSON_GetObjectItemCaseSensitive(rec, "weak_surfaces"), *s;
    if (!cJSON_IsObject(ws) || !ws->child)
        return;
    cJSON *out = cJSON_AddObjectToObject(line, "weak_decisions");
    cJSON_ArrayForEach(s, ws)
    {
        const cJSON *d = cJSON_GetObjectItemCaseSensitive(s, "decision");
        if (cJSON_IsString(d))
            cJSON_AddStringToObject(out, s->string, d->valuestring);
    }
}

/* The record's builds summed by tool ({"nvcc": s, "cc1plus": s, ...}, each
 * tool's own wall time over the pair's builds) as the line's build_tools_s;
 * none when nothing was built. */
static void add_build_tools(cJSON *line, const cJSON *rec)
{
    cJSON *sum = NULL;
    const cJSON *b, *t;
    cJSON_ArrayForEach(b, cJSON_GetObjectItemCaseSensitive(rec, "builds"))
    {
        cJSON_ArrayForEach(t, cJSON_GetObjectItemCaseSensitive(b, "tools"))
        {
            if (!cJSON_IsNumber(t) || !t->string)
                continue;
            if (!sum)
                sum = cJSON_AddObjectToObject(line, "build_tools_s");
            cJSON *have = cJSON_GetObjectItemCaseSensitive(sum, t->string);
            if (have)
                cJSON_SetNumberValue(have, have->valuedouble + t->valuedouble);
            else
                cJSON_AddNumberToObject(sum, t->string, t->valuedouble);
        }
    }
}

/* One ledger line from the pair's record rec (NULL: none; taken). */
static int append_ledger(int fd, const struct pair *p, const char *dir, int status, double wall, cJSON *rec)
{
    char record[PATH_MAX + 300], log[PATH_MAX + 300];
    snprintf(record, sizeof record, "%s/record.json", dir);
    snprintf(log, sizeof log, "%s/audit.log", dir);
    cJSON *line = cJSON_CreateObject();
    cJSON_AddStringToObject(line, "id", p->id);
    if (p->corpus)
        cJSON_AddStringToObject(line, "corpus", p->corpus);
    if (p->weak)
        cJSON_AddStringToObject(line, "weak", p->weak);
    if (p->task) {
        cJSON_AddStringToObject(line, "task", p->task);
        cJSON_AddNumberToObject(line, "slot", (double)p->slot);
    }
    cJSON_AddNumberToObject(line, "exit", status);
    cJSON_AddNumberToObject(line, "wall_s", wall);
    if (p->gpu)
        cJSON_AddStringToObject(line, "gpu", p->gpu);
    if (p->retry == RETRY_RUNNING)
        cJSON_AddStringToObject(line, "retried_alone",
                                "its first attempt ran out of memory while other audits ran beside it");
    if (rec) {
        static const char *const copied[] = { "certificate", "outcome", "certificate_reason", NULL };
        for (int i = 0; copied[i]; i++) {
            const cJSON *v = cJSON_GetObjectItemCaseSensitive(rec, copied[i]);
            if (v)
                cJSON_AddItemToObject(line, copied[i], cJSON_Duplicate(v, 1));
        }
        cJSON *axes = cJSON_AddObjectToObject(line, "axes");
        static const char *const names[] = { "semantic", "implementation", "measurement", NULL };
        const cJSON *ra = cJSON_GetObjectItemCaseSensitive(rec, "axes");
        for (int i = 0; names[i]; i++) {
            const cJSON *v = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(ra, names[i]), "verdict");
            if (cJSON_IsString(v))
                cJSON_AddStringToObject(axes, names[i], v->valuestring);
        }
        const cJSON *sig = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(rec, "semantic"),
                                                            "stress_signature");
        if (cJSON_IsBool(sig))
            cJSON_AddBoolToObject(line, "stress_signature", cJSON_IsTrue(sig));
        add_weak_decisions(line, rec);
        add_reported(line, rec);
        const cJSON *phases = cJSON_GetObjectItemCaseSensitive(rec, "phases_s");
        if (cJSON_IsObject(phases))
            cJSON_AddItemToObject(line, "phases_s", cJSON_Duplicate(phases, 1));
        add_build_tools(line, rec);
        /* whether it started from an earlier audit's builds (docs/audit.md, "Builds kept across audits") */
        const cJSON *store = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(rec, "build_store"),
                                                              "state");
        if (cJSON_IsString(store))
            cJSON_AddStringToObject(line, "build_store", store->valuestring);
        /* the speedup as the record has it, with whether it may be quoted */
        const cJSON *timing = cJSON_GetObjectItemCaseSensitive(rec, "timing");
        const cJSON *speedup = cJSON_GetObjectItemCaseSensitive(timing, "speedup");
        cJSON *out = cJSON_AddObjectToObject(line, "speedup");
        static const char *const timing_keys[] = { "ratio", "interval", "reportable", "why_not", NULL };
        for (int i = 0; cJSON_IsObject(speedup) && timing_keys[i]; i++) {
            const cJSON *v = cJSON_GetObjectItemCaseSensitive(speedup, timing_keys[i]);
            if (v)
                cJSON_AddItemToObject(out, timing_keys[i], cJSON_Duplicate(v, 1));
        }
        const cJSON *claimed = cJSON_GetObjectItemCaseSensitive(timing, "claimed_speedup");
        cJSON_AddItemToObject(out, "claimed", claimed ? cJSON_Duplicate(claimed, 1) : cJSON_CreateNull());
        cJSON_AddStringToObject(line, "record", record);
        cJSON_Delete(rec);
    } else {
        /* no record: the audit could not start (a missing file, a bad contract); its log says why */
        char why[512] = "kaudit audit wrote no record";
        FILE *lf = fopen(log, "r");
        if (lf) {
            char buf[512];
            while (fgets(buf, sizeof buf, lf))
                if (strstr(buf, "error:")) {
                    buf[strcspn(buf, "\n")] = '\0';
                    snprintf(why, sizeof why, "%s", buf);
                }
            fclose(lf);
        }
        cJSON_AddStringToObject(line, "certificate", "INCONCL");
        cJSON_AddStringToObject(line, "certificate_reason", why);
        cJSON_AddNullToObject(line, "record");
    }
    cJSON_AddStringToObject(line, "log", log);
    char *text = cJSON_PrintUnformatted(line);
    cJSON_Delete(line);
    if (!text)
        return cli_error("out of memory");
    size_t len = strlen(text);
    char *buf = kat_xrealloc(text, len + 2);
    buf[len] = '\n';
    /* one write with O_APPEND: the line is whole or absent */
    ssize_t w = write(fd, buf, len + 1);
    free(buf);
    if (w != (ssize_t)(len + 1))
        return cli_error("cannot append to the ledger: %s", w < 0 ? strerror(errno) : "short write");
    if (fsync(fd) != 0) {
    }
    return 0;
}

/* The --memory-limit a pair's audit gets: the batch's own when given ("off"
 * or a size), else its share of the memory available (audit_limits_resolve
 * over the jobs), read once, when the first pairs start, so that audits
 * already running do not shrink the later ones' shares; a pair run again
 * alone gets all of what is there then.  As bytes in buf; NULL when it
 * cannot be read (the audit then decides, and says why).  The disk limit is
 * each audit's own (not divided): only a given one is passed on. */
static const char *memory_limit(const struct audit_args *a, const struct pair *p, const char *dir, char *buf,
                                size_t n)
{
    static unsigned long long share;
    static int read_once;
    if (a->memory_limit && strcmp(a->memory_limit, "auto") != 0)
        return a->memory_limit;
    unsigned long long v = share;
    if (p->retry == RETRY_RUNNING || !read_once) {
        struct audit_limits l = { AUDIT_LIMIT_AUTO, 0, 0 };
        char why[320];
        audit_limits_resolve(&l, dir, p->retry == RETRY_RUNNING ? 1 : a->jobs, why, sizeof why);
        v = l.memory_bytes;
        if (p->retry != RETRY_RUNNING) {
            share = v;
            read_once = 1;
        }
    }
    if (!v)
        return NULL;
    snprintf(buf, n, "%llu", v < (1ULL << 20) ? (1ULL << 20) : v);
    return buf;
}

static pid_t start_pair(const struct audit_args *a, const struct pair *p, const char *dir)
{
    char exe[PATH_MAX];
    ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (len <= 0)
        return -1;
    exe[len] = '\0';
    if (mkdir(dir, 0755) != 0 && errno != EEXIST)
        return -1;
    char log[PATH_MAX + 300], seed[32], timeout[32];
    snprintf(log, sizeof log, "%s/audit.log", dir);
    snprintf(seed, sizeof seed, "%llu", a->seed);
    snprintf(timeout, sizeof timeout, "%g", a->timeout_s);
    const char *argv[96]; /* the options below, each --allow-write and --allow-read (8 each) included */
    int k = 0;
    argv[k++] = exe;
    argv[k++] = "audit";
    argv[k++] = "--reference";
    argv[k++] = p->reference;
    argv[k++] = "--candidate";
    argv[k++] = p->candidate;
    argv[k++] = "-d";
    argv[k++] = dir;
    argv[k++] = "--device";
    argv[k++] = a->device;
    if (a->seed_given) { /* else each audit draws its own */
        argv[k++] = "--seed";
        argv[k++] = seed;
    }
    argv[k++] = "--timeout";
    argv[k++] = timeout;
    /* each audit's share of the memory, decided once for the batch (a pair run
       again alone gets all of it) */
    char memory[32];
    const char *share = memory_limit(a, p, dir, memory, sizeof memory);
    if (share) {
        argv[k++] = "--memory-limit";
        argv[k++] = share;
    }
    if (a->disk_limit) {
        argv[k++] = "--disk-limit";
        argv[k++] = a->disk_limit;
    }
    if (a->build_store) {
        argv[k++] = "--build-store";
        argv[k++] = a->build_store;
    }
    if (a->build_store_max) {
        argv[k++] = "--build-store-max";
        argv[k++] = a->build_store_max;
    }
    argv[k++] = "--id";
    argv[k++] = p->id;
    if (p->contract || a->contract) {
        argv[k++] = "--contract";
        argv[k++] = p->contract ? p->contract : a->contract;
    }
    if (p->weak) {
        argv[k++] = "--weak";
        argv[k++] = p->weak;
    }
    if (p->claimed[0]) {
        argv[k++] = "--claimed-speedup";
        argv[k++] = p->claimed;
    }
    for (int i = 0; i < a->n_allow_write; i++) {
        argv[k++] = "--allow-write";
        argv[k++] = a->allow_write[i];
    }
    for (int i = 0; i < a->n_allow_read; i++) {
        argv[k++] = "--allow-read";
        argv[k++] = a->allow_read[i];
    }
    if (a->python) {
        argv[k++] = "--python";
        argv[k++] = a->python;
    }
    if (a->inventory) {
        argv[k++] = "--inventory";
        argv[k++] = a->inventory;
    }
    if (a->paper_tolerance) {
        argv[k++] = "--tolerance";
        argv[k++] = "paper";
    }
    if (a->keep_tensors)
        argv[k++] = "--keep-tensors";
    if (a->timing >= 0) {
        argv[k++] = "--timing";
        argv[k++] = a->timing ? "on" : "off";
    }
    if (!a->probe) {
        argv[k++] = "--probe";
        argv[k++] = "off";
    }
    if (a->require) {
        argv[k++] = "--require";
        argv[k++] = a->require;
    }
    if (a->weak_surfaces) {
        argv[k++] = "--weak-surfaces";
        argv[k++] = a->weak_surfaces;
    }
    argv[k] = NULL;
    fflush(NULL);
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid == 0) {
        /* A batch killed (even by SIGKILL) takes its audits with it: each
         * gets SIGTERM and stops its worker (audit_exec.c).  Otherwise they
         * run on, orphaned, and the restarted batch audits the same pairs
         * again into the same directories at the same time. */
        prctl(PR_SET_PDEATHSIG, SIGTERM);
        if (getppid() != parent)
            _exit(128 + SIGTERM);
        /* --gpus: this worker's GPU (the batch's slots take the list in turn) */
        if (p->gpu)
            setenv("CUDA_VISIBLE_DEVICES", p->gpu, 1);
        int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd >= 0) {
            dup2(fd, 1);
            dup2(fd, 2);
        }
        execv(exe, (char **)argv);
        _exit(127);
    }
    return pid;
}

/* LEDGER.jsonl.d/ID: where a pair's audit directory and record go. */
static void pair_dir(char *out, size_t size, const char *records, const struct pair *p)
{
    snprintf(out, size, "%s/%s", records, p->id);
}

/*
 * Waits for one running audit and writes its ledger line.  1 when one was
 * reaped (*ledger_failed set if its line could not be written), 2 when one
 * was reaped and is to run again alone (no line), 0 when the wait was
 * interrupted, -1 when there is nothing left to wait for.
 */
static int reap_one(struct running *run, int jobs, struct pair *pairs, const double *started,
                    const char *records, int fd, int *ledger_failed)
{
    int status;
    pid_t pid = wait(&status);
    if (pid < 0)
        return errno == EINTR ? 0 : -1;
    for (int j = 0; j < jobs; j++) {
        if (run[j].pid != pid)
            continue;
        run[j].pid = 0;
        char dir[PATH_MAX + 256];
        pair_dir(dir, sizeof dir, records, &pairs[run[j].pair]);
        int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        struct pair *p = &pairs[run[j].pair];
        cJSON *rec = read_record(dir, code);
        if (jobs > 1 && p->retry == RETRY_NONE && rec && ran_out_of_memory(rec)) {
            cJSON_Delete(rec);
            /* no ledger line yet (a kill now reruns it, as any unfinished
             * pair); the first attempt is kept beside the second */
            char first[PATH_MAX + 300];
            snprintf(first, sizeof first, "%s.first-attempt", dir);
            kat_remove_tree(first);
            if (rename(dir, first) != 0)
                kat_remove_tree(dir);
            p->retry = RETRY_PENDING;
            return 2;
        }
        *ledger_failed = append_ledger(fd, p, dir, code, now_s() - started[run[j].pair], rec) != 0;
        return 1;
    }
    return 0; /* not one of ours (an orphan reparented to us): wait again */
}

static void progress(size_t done, size_t total, size_t skipped, double t0)
{
    double el = now_s() - t0;
    size_t ran = done - skipped;
    double rate = el > 0 ? ran / el * 60.0 : 0;
    double eta = ran ? (double)(total - done) * el / (double)ran : 0;
    fprintf(stderr, "\r\033[K[%zu/%zu] %.1f/min", done, total, rate);
    if (ran && done < total)
        fprintf(stderr, " ETA %.0fm%02.0fs", (double)((long)eta / 60), (double)((long)eta % 60));
    fflush(stderr);
}

static const char *env_get(const char *name)
{
    return getenv(name);
}

static void pair_free(struct pair *p)
{
    free(p->id);
    free(p->reference);
    free(p->candidate);
    free(p->contract);
    free(p->weak);
    free(p->corpus);
    free(p->task);
}

/* The pairs of the shard (--shard, or the Slurm array task's), in place:
 * the others are freed.  The whole file was checked first, so every shard
 * refuses a bad batch file alike. */
static void keep_shard(const struct audit_shard *sh, struct pair *pairs, size_t *n)
{
    size_t kept = 0;
    for (size_t k = 0; k < *n; k++) {
        if (audit_shard_has(sh, k))
            pairs[kept++] = pairs[k];
        else
            pair_free(&pairs[k]);
    }
    *n = kept;
}

/* The ledger, opened for appending and locked: one batch per ledger at a
 * time, since two shards given one -o would cut each other's lines as torn
 * (read_ledger).  Its descriptor, or -1 (said). */
static int open_ledger(const char *ledger)
{
    int fd = open(ledger, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd < 0)
        return cli_error("cannot write the ledger '%s': %s", ledger, strerror(errno));
    if (flock(fd, LOCK_EX | LOCK_NB) == 0)
        return fd;
    int e = errno;
    close(fd);
    if (e == EWOULDBLOCK)
        return cli_error("the ledger '%s' is being written by another batch (each shard needs a ledger of its "
                         "own; merge them with kaudit ledger merge)",
                         ledger);
    return cli_error("cannot lock the ledger '%s': %s", ledger, strerror(e));
}

/* One batch under way: its pairs, its workers and the ledger they feed. */
struct batch {
    const struct audit_args *a;
    struct pair *pairs;
    size_t n;
    char **gpus;                /* --gpus, one per worker slot in turn; NULL: none */
    size_t n_gpus;
    int ledger_fd;
    char records[PATH_MAX];     /* LEDGER.d: a directory per pair */
    struct running *run;        /* a->jobs slots; pid 0: free */
    double *started;            /* per pair: when its worker started */
    size_t next;                /* the next pair in file order not yet started */
    int active;                 /* workers running */
    size_t done;                /* pairs in the ledger */
};

/* The pair to start next, or b->n for none now: the pairs in file order,
 * then, once every other worker has ended, the retries one at a time. */
static size_t next_pair(struct batch *b)
{
    while (b->next < b->n) {
        if (!b->pairs[b->next].done)
            return b->next++;
        b->next++;
    }
    if (b->active == 0)
        for (size_t i = 0; i < b->n; i++)
            if (b->pairs[i].retry == RETRY_PENDING)
                return i;
    return b->n;
}

/* Starts pair `pick` in a free worker slot: KAUDIT_EXIT_OK, or -1 (said). */
static int start_worker(struct batch *b, size_t pick)
{
    struct pair *p = &b->pairs[pick];
    if (p->retry == RETRY_PENDING)
        p->retry = RETRY_RUNNING;
    char dir[PATH_MAX + 256];
    pair_dir(dir, sizeof dir, b->records, p);
    int slot = 0;
    while (slot < b->a->jobs && b->run[slot].pid)
        slot++;
    /* slot j runs on GPU j mod n: at most ceil(jobs / n) workers share one */
    p->gpu = b->n_gpus ? b->gpus[(size_t)slot % b->n_gpus] : NULL;
    pid_t pid = start_pair(b->a, p, dir);
    if (pid < 0)
        return cli_error("cannot start the audit of '%s': %s", p->id, strerror(errno));
    b->run[slot].pid = pid;
    b->run[slot].pair = pick;
    b->started[pick] = now_s();
    b->active++;
    return KAUDIT_EXIT_OK;
}

/* Starts pairs until every slot is busy or none is left to start now. */
static int fill_slots(struct batch *b)
{
    while (b->active < b->a->jobs) {
        size_t pick = next_pair(b);
        if (pick == b->n)
            break;
        int rc = start_worker(b, pick);
        if (rc != KAUDIT_EXIT_OK)
            return rc;
    }
    return KAUDIT_EXIT_OK;
}

/* Runs the pairs the ledger does not hold, a->jobs at a time, until all have
 * ended or one cannot be started. */
static int run_pairs(struct batch *b, int tty, size_t skipped, double t0)
{
    int rc = KAUDIT_EXIT_OK;
    for (;;) {
        rc = fill_slots(b);
        if (rc != KAUDIT_EXIT_OK || !b->active)
            break;
        if (tty)
            progress(b->done, b->n, skipped, t0);
        int ledger_failed = 0;
        int got = reap_one(b->run, b->a->jobs, b->pairs, b->started, b->records, b->ledger_fd, &ledger_failed);
        if (got < 0)
            break;
        if (got) {
            b->active--;
            if (got == 1)
                b->done++;
            if (ledger_failed)
                rc = KAUDIT_EXIT_ERROR;
        }
    }
    if (tty) {
        progress(b->done, b->n, skipped, t0);
        fputc('\n', stderr);
    }
    return rc;
}

/* What is left running after an error: waited for, its line is written. */
static void wait_for_the_rest(struct batch *b)
{
    while (b->active > 0) {
        int ledger_failed = 0;
        int got = reap_one(b->run, b->a->jobs, b->pairs, b->started, b->records, b->ledger_fd, &ledger_failed);
        if (got < 0)
            break;
        b->active -= got > 0;
    }
}

/* The pairs of this shard, its GPUs and its jobs: 0, or -1 (said). */
static int batch_pairs(struct batch *b, struct audit_args *args)
{
    char err[512];
    struct audit_shard shard;
    if (args->shard ? audit_shard_parse(args->shard, &shard, err, sizeof err) != 0
                    : audit_shard_from_slurm(env_get, &shard, err, sizeof err) != 0)
        return cli_error("%s", err);
    if (args->gpus && audit_gpus_parse(args->gpus, env_get, "/dev", &b->gpus, &b->n_gpus, err, sizeof err) != 0)
        return cli_error("%s", err);
    if (args->gpus && !b->n_gpus && !args->quiet)
        cli_warn("--gpus %s: no GPU found; the workers' environment is left as it is", args->gpus);
    if (b->n_gpus && !args->jobs_given)
        args->jobs = b->n_gpus > 256 ? 256 : (int)b->n_gpus; /* one worker per GPU */
    if (read_pairs(args->batch, &b->pairs, &b->n) != 0)
        return -1;
    size_t in_file = b->n;
    keep_shard(&shard, b->pairs, &b->n);
    if (shard.count && !args->quiet)
        fprintf(stderr, "kaudit: %s: %zu of the %zu pairs of %s\n", shard.source, b->n, in_file, args->batch);
    if (args->jobs_auto) {
        long cpus = sysconf(_SC_NPROCESSORS_ONLN);
        unsigned long long mem = audit_mem_available_kib("/proc/meminfo");
        args->jobs = audit_jobs_auto(cpus, mem, b->n);
        if (!args->quiet)
            fprintf(stderr, "kaudit: --jobs auto: %d at once (%ld CPUs, %.1f GiB available, %zu pairs)\n", args->jobs,
                    cpus, (double)mem / (1 << 20), b->n);
    }
    return 0;
}

/* The ledger locked, the pairs it holds marked done, LEDGER.d made: 0, or -1 (said). */
static int batch_ledger(struct batch *b)
{
    b->ledger_fd = open_ledger(b->a->ledger);
    if (b->ledger_fd < 0)
        return -1;
    if (read_ledger(b->a->ledger, b->pairs, b->n, &b->done) != 0)
        return -1;
    snprintf(b->records, sizeof b->records, "%s.d", b->a->ledger);
    if (mkdir(b->records, 0755) != 0 && errno != EEXIST)
        return cli_error("cannot create '%s': %s", b->records, strerror(errno));
    return 0;
}

static void batch_free(struct batch *b)
{
    if (b->ledger_fd >= 0)
        close(b->ledger_fd);
    audit_gpus_free(b->gpus, b->n_gpus);
    for (size_t i = 0; i < b->n; i++)
        pair_free(&b->pairs[i]);
    free(b->pairs);
    free(b->run);
    free(b->started);
}

static int by_value(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

/* The build tools the summary names, by the ledger lines' build_tools_s: the
 * first this many names met. */
#define SUMMARY_TOOLS 12
struct tool_values {
    char name[32];
    double *v;
    size_t n, cap;
    double median;
};

static int by_longer_median(const void *a, const void *b)
{
    const struct tool_values *x = a, *y = b;
    return (x->median < y->median) - (x->median > y->median);
}

static void add_tool_values(struct tool_values *tools, size_t *n_tools, const cJSON *build_tools)
{
    const cJSON *t;
    cJSON_ArrayForEach(t, build_tools)
    {
        if (!cJSON_IsNumber(t) || !t->string)
            continue;
        size_t k = 0;
        while (k < *n_tools && strcmp(tools[k].name, t->string) != 0)
            k++;
        if (k == *n_tools) {
            if (*n_tools == SUMMARY_TOOLS)
                continue;
            snprintf(tools[k].name, sizeof tools[k].name, "%s", t->string);
            (*n_tools)++;
        }
        if (!kat_grow(&tools[k].v, &tools[k].cap, tools[k].n + 1, sizeof *tools[k].v))
            tools[k].v[tools[k].n++] = t->valuedouble;
    }
}

/* Where the batch's time went: each phase's median over the ledger's records
 * that show it (the record's phases_s, docs/audit.md), on stderr; then each build tool's
 * median over the lines that name it (build_tools_s). */
static void phase_summary(const char *ledger)
{
    FILE *f = fopen(ledger, "r");
    if (!f)
        return;
    double *v[AUDIT_PHASES] = { 0 };
    size_t n[AUDIT_PHASES] = { 0 }, cap[AUDIT_PHASES] = { 0 };
    struct tool_values tools[SUMMARY_TOOLS] = { 0 };
    size_t n_tools = 0, store_hits[2] = { 0, 0 }; /* [1]: started from kept builds */
    char *line = NULL;
    size_t len_cap = 0;
    ssize_t len;
    while ((len = getline(&line, &len_cap, f)) > 0) {
        cJSON *o = cJSON_ParseWithLength(line, (size_t)len);
        const cJSON *ph = cJSON_GetObjectItemCaseSensitive(o, "phases_s");
        for (int i = 0; i < AUDIT_PHASES && cJSON_IsObject(ph); i++) {
            const cJSON *x = cJSON_GetObjectItemCaseSensitive(ph, audit_phase_names[i]);
            if (cJSON_IsNumber(x) && !kat_grow(&v[i], &cap[i], n[i] + 1, sizeof *v[i]))
                v[i][n[i]++] = x->valuedouble;
        }
        add_tool_values(tools, &n_tools, cJSON_GetObjectItemCaseSensitive(o, "build_tools_s"));
        const cJSON *store = cJSON_GetObjectItemCaseSensitive(o, "build_store");
        if (cJSON_IsString(store))
            store_hits[!strcmp(store->valuestring, "hit")]++;
        cJSON_Delete(o);
    }
    free(line);
    fclose(f);
    if (n[AUDIT_PHASE_RUNNER]) {
        fprintf(stderr, "kaudit: worker time by phase, median seconds over %zu audits:", n[AUDIT_PHASE_RUNNER]);
        for (int i = 0; i < AUDIT_PHASES; i++) {
            if (!n[i])
                continue;
            qsort(v[i], n[i], sizeof *v[i], by_value);
            fprintf(stderr, " %s %.1f", audit_phase_names[i], v[i][n[i] / 2]);
        }
        fputc('\n', stderr);
    }
    if (n_tools) {
        /* each tool's median, the longest first */
        for (size_t k = 0; k < n_tools; k++) {
            qsort(tools[k].v, tools[k].n, sizeof *tools[k].v, by_value);
            tools[k].median = tools[k].n ? tools[k].v[tools[k].n / 2] : 0;
        }
        qsort(tools, n_tools, sizeof *tools, by_longer_median);
        fprintf(stderr, "kaudit: build tools, median seconds over the audits that ran each:");
        for (size_t k = 0; k < n_tools; k++) {
            fprintf(stderr, " %s %.1f (%zu)", tools[k].name, tools[k].median, tools[k].n);
            free(tools[k].v);
        }
        fputc('\n', stderr);
    }
    if (store_hits[1])
        fprintf(stderr, "kaudit: %zu of %zu audits started from builds kept by an earlier audit (build store)\n",
                store_hits[1], store_hits[0] + store_hits[1]);
    for (int i = 0; i < AUDIT_PHASES; i++)
        free(v[i]);
}

int audit_batch(const struct audit_args *given)
{
    struct audit_args args = *given;
    const struct audit_args *a = &args;
    struct batch b = { .a = a, .ledger_fd = -1 };
    if (batch_pairs(&b, &args) != 0 || batch_ledger(&b) != 0) {
        batch_free(&b);
        return KAUDIT_EXIT_ERROR;
    }
    int tty = isatty(2) && !a->quiet;
    size_t skipped = b.done;
    double t0 = now_s();
    if (!a->quiet && skipped)
        fprintf(stderr, "kaudit: %zu of %zu pairs are in the ledger already; running the rest\n", skipped, b.n);
    b.run = kat_xcalloc((size_t)a->jobs, sizeof *b.run);
    b.started = kat_xcalloc(b.n ? b.n : 1, sizeof *b.started);
    int rc = run_pairs(&b, tty, skipped, t0);
    wait_for_the_rest(&b);
    close(b.ledger_fd);
    b.ledger_fd = -1;
    if (!a->quiet) {
        fprintf(stderr, "kaudit: %zu of %zu pairs in the ledger %s\n", b.done, b.n, a->ledger);
        phase_summary(a->ledger);
    }
    batch_free(&b);
    return rc;
}
