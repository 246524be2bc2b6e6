/*
 * cmd_ledger.c - `kaudit ledger merge A.jsonl B.jsonl ... -o OUT.jsonl
 * [--tasks TASKS.jsonl]`: the ledgers of a batch's shards (docs/audit.md,
 * "Shards, GPUs and Slurm arrays") made one, each line as it was written.
 *
 * A record id must appear once in all the inputs together.  A second line
 * with an id is refused, whether it repeats the first (the same ledger given
 * twice: a duplicate) or says something else (the same task audited in two
 * shards: a conflict, and which result would count?).  Every refusal names
 * the file and line of both.  Nothing is written unless the merge is whole.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <xxhash.h>

#include "cli.h"
#include "commands.h"
#include "harness_results.h"
#include "ledger.h"
#include "safe_file.h"
#include "u64map.h"

static const char ledger_usage[] =
    "usage: kaudit ledger merge LEDGER.jsonl... -o OUT.jsonl [--tasks TASKS.jsonl]\n"
    "       kaudit ledger weak LEDGER.jsonl (--kernelbench EVAL_RESULTS.json | --cudal1 LOG.json...\n"
    "                          | --kernelbot RESULT.txt...) -o OUT.jsonl [--name NAME]\n"
    "\n"
    "weak: the harness's own results as a weak validator's decisions: each line whose audited\n"
    "candidate is a KernelBench kernel (level_L_problem_P_sample_S_kernel.py) gets\n"
    "weak_decisions.NAME (KernelBench) ACCEPT when KernelBench's eval_results.json says sample S of\n"
    "problem P compiled and was correct, else REJECT; then `kaudit validators` scores it.\n"
    "\n"
    "Merges the ledgers of a batch's shards (kaudit audit --batch --shard i/N, or a Slurm array):\n"
    "every line of every input, in the order given, into OUT (written whole, or not at all).  An id\n"
    "on two lines is refused, a duplicate (the same line) or a conflict (another result); so is an\n"
    "incomplete last line (a shard still writing).  With --tasks, every task of the batch must be in\n"
    "the merged ledger and nothing else.\n"
    "\n"
    "  -o FILE            the merged ledger (may be one of the inputs: it is replaced at the end)\n"
    "  --tasks FILE       the batch's task file: check that the merge holds each of its ids once\n";

#define MAX_REFUSALS 20

struct entry {
    char *id, *text;            /* text: the line as read, with its newline */
    const char *file;
    unsigned line;
};

struct table {
    struct entry *e;
    size_t n, alloc;
    struct kat_u64map by_id;    /* XXH3 of an id -> index + 1 of its first entry */
};

/* The entry with this id, or NULL. */
static struct entry *find(struct table *t, const char *id)
{
    uint64_t *slot = kat_u64map_find(&t->by_id, XXH3_64bits(id, strlen(id)));
    if (!slot)
        return NULL;
    if (!strcmp(t->e[*slot - 1].id, id))
        return &t->e[*slot - 1];
    for (size_t i = 0; i < t->n; i++) /* another id of the same hash */
        if (!strcmp(t->e[i].id, id))
            return &t->e[i];
    return NULL;
}

static void add(struct table *t, char *id, char *text, const char *file, unsigned line)
{
    if (t->n == t->alloc) {
        t->alloc = t->alloc ? 2 * t->alloc : 64;
        t->e = kat_xrealloc(t->e, t->alloc * sizeof *t->e);
    }
    t->e[t->n] = (struct entry){ id, text, file, line };
    int fresh;
    uint64_t *slot = kat_u64map_get(&t->by_id, XXH3_64bits(id, strlen(id)), &fresh);
    if (!slot)
        kat_die("out of memory");
    if (fresh)
        *slot = t->n + 1;
    t->n++;
}

static void table_free(struct table *t)
{
    for (size_t i = 0; i < t->n; i++) {
        free(t->e[i].id);
        free(t->e[i].text);
    }
    free(t->e);
    kat_u64map_free(&t->by_id);
}

/* Whether two lines say the same thing (the same JSON, whatever the spacing). */
static int same_line(const char *a, const char *b)
{
    cJSON *x = cJSON_Parse(a), *y = cJSON_Parse(b);
    int same = x && y && cJSON_Compare(x, y, 1);
    cJSON_Delete(x);
    cJSON_Delete(y);
    return same;
}

/*
 * Reads one JSONL file of objects with a string "id" (a ledger, or with
 * tasks set a task file, whose lines only add their ids).  Blank and '#'
 * lines are skipped.  Returns the number of refusals it printed.
 */
static int read_lines(struct table *t, const char *file, int is_tasks, int *refusals)
{
    FILE *f = fopen(file, "r");
    if (!f) {
        cli_error("cannot read '%s': %s", file, strerror(errno));
        return ++*refusals;
    }
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    unsigned lineno = 0;
    int bad = 0;
    while ((len = getline(&line, &cap, f)) > 0) {
        lineno++;
        if (*refusals >= MAX_REFUSALS)
            break;
        const char *s = line + strspn(line, " \t\r");
        if (*s == '\n' || *s == '#' || *s == '\0')
            continue;
        if (line[len - 1] != '\n') {
            cli_error("%s:%u: the last line is incomplete (no newline: a batch still writing, or killed mid-line)",
                      file, lineno);
            bad++, ++*refusals;
            break;
        }
        if (memchr(line, '\0', (size_t)len)) {
            cli_error("%s:%u: a NUL byte: not a JSON line", file, lineno);
            bad++, ++*refusals;
            continue;
        }
        int trailing;
        cJSON *o = kvs_json_line(line, &trailing);
        const cJSON *id = cJSON_GetObjectItemCaseSensitive(o, "id");
        if (trailing) {
            cli_error("%s:%u: more than one JSON value on the line (two records run together?)", file, lineno);
            bad++, ++*refusals;
            continue;
        }
        if (!cJSON_IsObject(o) || !cJSON_IsString(id) || !id->valuestring[0]) {
            cli_error("%s:%u: not a %s line (a JSON object with a string id)", file, lineno,
                      is_tasks ? "task" : "ledger");
            cJSON_Delete(o);
            bad++, ++*refusals;
            continue;
        }
        struct entry *first = find(t, id->valuestring);
        if (first) {
            if (is_tasks)
                cli_error("%s:%u: task id '%s' is also at line %u", file, lineno, id->valuestring, first->line);
            else if (!strcmp(first->file, file) && first->line == lineno)
                cli_error("%s:%u: id '%s' is a duplicate: the ledger '%s' is given twice", file, lineno,
                          id->valuestring, file);
            else if (same_line(first->text, line))
                cli_error("%s:%u: id '%s' is a duplicate of %s:%u (the same line twice: was a ledger given twice?)",
                          file, lineno, id->valuestring, first->file, first->line);
            else
                cli_error("%s:%u: id '%s' conflicts with %s:%u (the same record with another result: audited in "
                          "two shards?)",
                          file, lineno, id->valuestring, first->file, first->line);
            cJSON_Delete(o);
            bad++, ++*refusals;
            continue;
        }
        add(t, kat_xstrdup(id->valuestring), is_tasks ? NULL : kat_xstrdup(line), file, lineno);
        cJSON_Delete(o);
    }
    if (ferror(f)) {
        cli_error("cannot read '%s': %s", file, strerror(errno));
        bad++, ++*refusals;
    }
    free(line);
    fclose(f);
    return bad;
}

static int write_merged(const struct table *t, const char *out)
{
    char tmp[4096];
    if (snprintf(tmp, sizeof tmp, "%s.merging.%ld", out, (long)getpid()) >= (int)sizeof tmp)
        return cli_error("'%s': the name is too long", out);
    FILE *f = fopen(tmp, "w");
    if (!f)
        return cli_error("cannot write '%s': %s", tmp, strerror(errno));
    for (size_t i = 0; i < t->n; i++)
        fputs(t->e[i].text, f);
    int werr = fflush(f) != 0 || ferror(f) || fsync(fileno(f)) != 0;
    werr |= fclose(f) != 0;
    if (werr || rename(tmp, out) != 0) {
        int e = errno;
        unlink(tmp);
        return cli_error("cannot write '%s': %s", out, strerror(e));
    }
    return 0;
}

static int ledger_merge(int argc, char **argv)
{
    static const struct option longopts[] = { { "output", required_argument, 0, 'o' },
                                               { "tasks", required_argument, 0, 'T' },
                                               { "help", no_argument, 0, 'h' },
                                               { 0, 0, 0, 0 } };
    const char *out = NULL, *tasks = NULL;
    int c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":o:h", longopts, NULL)) != -1) {
        switch (c) {
        case 'o': out = optarg; break;
        case 'T': tasks = optarg; break;
        case 'h': fputs(ledger_usage, stdout); return KAUDIT_EXIT_OK;
        default: return cli_bad_option(ledger_usage, c == ':', argv[optind - 1]);
        }
    }
    if (!out)
        return cli_usage_error(ledger_usage, "merge needs -o OUT.jsonl");
    if (optind >= argc)
        return cli_usage_error(ledger_usage, "merge takes one or more ledgers");
    struct table t = { 0 };
    int refusals = 0;
    for (int i = optind; i < argc; i++)
        read_lines(&t, argv[i], 0, &refusals);
    if (!refusals && tasks) {
        struct table want = { 0 };
        read_lines(&want, tasks, 1, &refusals);
        size_t missing = 0, extra = 0;
        for (size_t i = 0; i < want.n; i++)
            if (!find(&t, want.e[i].id) && ++missing <= MAX_REFUSALS)
                cli_error("%s:%u: task '%s' is in no ledger (its shard did not run, or not to the end)", tasks,
                          want.e[i].line, want.e[i].id);
        for (size_t i = 0; i < t.n; i++)
            if (!find(&want, t.e[i].id) && ++extra <= MAX_REFUSALS)
                cli_error("%s:%u: id '%s' is not a task of '%s'", t.e[i].file, t.e[i].line, t.e[i].id, tasks);
        refusals += (int)(missing + extra);
        table_free(&want);
    }
    int rc = KAUDIT_EXIT_OK;
    if (refusals) {
        cli_error("nothing merged: %d refusal%s%s", refusals, refusals == 1 ? "" : "s",
                  refusals >= MAX_REFUSALS ? " (the first shown)" : "");
        rc = KAUDIT_EXIT_ERROR;
    } else if (write_merged(&t, out) != 0) {
        rc = KAUDIT_EXIT_ERROR;
    } else {
        fprintf(stderr, "kaudit: %zu records from %d ledger%s in %s\n", t.n, argc - optind,
                argc - optind == 1 ? "" : "s", out);
    }
    table_free(&t);
    return rc;
}

/* The candidate of a ledger line, as its audit record names it (candidate.path
 * and candidate.digest; NULL each when absent). */
static void candidate_of(const cJSON *line, char **path, char **digest)
{
    *path = *digest = NULL;
    const cJSON *record = cJSON_GetObjectItemCaseSensitive(line, "record");
    if (!cJSON_IsString(record))
        return;
    char *text = NULL, err[512];
    size_t len = 0;
    if (kat_read_input(record->valuestring, 0, 64u << 20, &text, &len, err, sizeof err) != 0)
        return;
    cJSON *r = cJSON_ParseWithLength(text, len);
    free(text);
    const cJSON *cand = cJSON_GetObjectItemCaseSensitive(r, "candidate");
    const cJSON *p = cJSON_GetObjectItemCaseSensitive(cand, "path");
    const cJSON *d = cJSON_GetObjectItemCaseSensitive(cand, "digest");
    *path = cJSON_IsString(p) ? strdup(p->valuestring) : NULL;
    *digest = cJSON_IsString(d) ? strdup(d->valuestring) : NULL;
    cJSON_Delete(r);
}

/* The harness results `ledger weak` joins: KernelBench's, or CUDA-L1's or KernelBot's (by code). */
struct weak_source {
    struct kav_kernelbench *kb;
    struct kav_code_decisions *by_code;
    const char *name;
    const char *what;           /* for the summary: the results file, or "N logs" */
};

static const char *weak_decision(const struct weak_source *w, const cJSON *line)
{
    char *path, *digest;
    candidate_of(line, &path, &digest);
    const char *d = NULL;
    long problem, sample;
    if (w->kb && path && kav_kernelbench_ids(path, &problem, &sample) == 0)
        d = kav_kernelbench_decision(w->kb, problem, sample);
    if (w->by_code && digest)
        d = kav_code_decision(w->by_code, digest, NULL);
    free(path);
    free(digest);
    return d;
}

/* `kaudit ledger weak`: a harness's own results joined into the ledger's weak_decisions. */
static int ledger_weak(int argc, char **argv)
{
    static const struct option longopts[] = { { "output", required_argument, 0, 'o' },
                                               { "kernelbench", required_argument, 0, 'K' },
                                               { "cudal1", required_argument, 0, 'C' },
                                               { "kernelbot", required_argument, 0, 'B' },
                                               { "name", required_argument, 0, 'N' },
                                               { "help", no_argument, 0, 'h' },
                                               { 0, 0, 0, 0 } };
    const char *out = NULL, *results = NULL, *name = NULL;
    const char **logs = kat_xcalloc((size_t)argc + 1, sizeof *logs);
    size_t n_logs = 0;
    int cudal1 = 0, kernelbot = 0;
    int c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":o:h", longopts, NULL)) != -1) {
        switch (c) {
        case 'o': out = optarg; break;
        case 'K': results = optarg; break;
        case 'C': logs[n_logs++] = optarg; cudal1 = 1; break;
        case 'B': logs[n_logs++] = optarg; kernelbot = 1; break;
        case 'N': name = optarg; break;
        case 'h': free(logs); fputs(ledger_usage, stdout); return KAUDIT_EXIT_OK;
        default: free(logs); return cli_bad_option(ledger_usage, c == ':', argv[optind - 1]);
        }
    }
    if (!out || (!!results + cudal1 + kernelbot) != 1 || optind + 1 != argc) {
        free(logs);
        return cli_usage_error(ledger_usage, "weak takes one LEDGER.jsonl, -o OUT and one harness's results: "
                               "--kernelbench EVAL_RESULTS.json, or --cudal1 LOG.json..., or --kernelbot RESULT.txt...");
    }
    char err[1024];
    const char *harness = results ? "KernelBench" : cudal1 ? "CUDA-L1" : "KernelBot";
    struct weak_source w = { .name = name ? name : harness, .what = results };
    char what[64];
    if (results && kav_kernelbench_load(results, &w.kb, err, sizeof err) != 0) {
        free(logs);
        return cli_error("%s", err);
    }
    unsigned unfinished = 0;
    if (n_logs) {
        w.by_code = kav_code_decisions_new();
        for (size_t i = 0; i < n_logs; i++) {
            int got = cudal1 ? kav_cudal1_add(w.by_code, logs[i], err, sizeof err)
                             : kav_kernelbot_add(w.by_code, logs[i], err, sizeof err);
            if (got < 0) {
                kav_code_decisions_free(w.by_code);
                free(logs);
                return cli_error("%s", err);
            }
            unfinished += got == 1;
        }
        snprintf(what, sizeof what, "%zu %s%s", n_logs, cudal1 ? "log" : "result file", n_logs == 1 ? "" : "s");
        w.what = what;
    }
    free(logs);
    const char *ledger = argv[optind];
    FILE *f = kat_fopen_input(ledger, 0, err, sizeof err);
    if (!f) {
        kav_kernelbench_free(w.kb);
        kav_code_decisions_free(w.by_code);
        return cli_error("%s", err);
    }
    struct table t = { 0 };
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    unsigned lineno = 0, joined = 0, unjoined = 0;
    int bad = 0;
    while ((len = getline(&line, &cap, f)) > 0) {
        lineno++;
        cJSON *o = cJSON_ParseWithLength(line, (size_t)len);
        if (!cJSON_IsObject(o)) {
            cli_error("%s:%u: not a JSON object", ledger, lineno);
            cJSON_Delete(o);
            bad = 1;
            break;
        }
        const char *d = weak_decision(&w, o);
        if (d) {
            cJSON *decisions = cJSON_GetObjectItemCaseSensitive(o, "weak_decisions");
            if (!cJSON_IsObject(decisions)) {
                cJSON_DeleteItemFromObjectCaseSensitive(o, "weak_decisions");
                decisions = cJSON_AddObjectToObject(o, "weak_decisions");
            }
            cJSON_DeleteItemFromObjectCaseSensitive(decisions, w.name);
            cJSON_AddStringToObject(decisions, w.name, d);
            joined++;
        } else {
            unjoined++;
        }
        char *text = cJSON_PrintUnformatted(o);
        char *with_nl = NULL;
        if (!text || asprintf(&with_nl, "%s\n", text) < 0)
            with_nl = NULL;
        free(text);
        const cJSON *id = cJSON_GetObjectItemCaseSensitive(o, "id");
        add(&t, kat_xstrdup(cJSON_IsString(id) ? id->valuestring : ""), with_nl ? with_nl : kat_xstrdup("{}\n"),
            ledger, lineno);
        cJSON_Delete(o);
    }
    free(line);
    fclose(f);
    kav_kernelbench_free(w.kb);
    kav_code_decisions_free(w.by_code);
    int rc = KAUDIT_EXIT_OK;
    if (bad || write_merged(&t, out) != 0) {
        rc = KAUDIT_EXIT_ERROR;
    } else {
        fprintf(stderr, "kaudit: %u of %u records given %s's decision from %s%s%s%s in %s\n", joined,
                joined + unjoined, w.name, results ? "'" : "", w.what, results ? "'" : "",
                !unjoined ? ""
                : results ? " (the others name no KernelBench kernel it evaluated)"
                          : " (the others' candidate code is in no finished run)",
                out);
        if (unfinished)
            fprintf(stderr, "kaudit: %u %s %s%s did not finish (no %s line): no decision taken from %s\n", unfinished,
                    harness, cudal1 ? "log" : "result file", unfinished == 1 ? "" : "s",
                    cudal1 ? "\"done\"" : "\"check\"", unfinished == 1 ? "it" : "them");
    }
    table_free(&t);
    return rc;
}

int cmd_ledger(int argc, char **argv)
{
    if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        if (argc < 2)
            return cli_usage_error(ledger_usage, "ledger needs a subcommand (merge)");
        fputs(ledger_usage, stdout);
        return KAUDIT_EXIT_OK;
    }
    if (!strcmp(argv[1], "weak"))
        return ledger_weak(argc - 1, argv + 1);
    if (!strcmp(argv[1], "merge"))
        return ledger_merge(argc - 1, argv + 1);
    return cli_usage_error(ledger_usage, "unknown ledger subcommand '%s' (merge, weak)", argv[1]);
}
