/*
 * harness_results.c - KernelBench's eval_results.json as weak decisions
 * (harness_results.h).
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>
#include <xxhash.h>

#include "harness_results.h"
#include "safe_file.h"
#include "toolbox.h"

struct kav_kernelbench {
    cJSON *root;
};

/* The results file of a whole run stays small; far above any real one. */
#define RESULTS_MAX (256u << 20)

int kav_kernelbench_load(const char *path, struct kav_kernelbench **out, char *err, size_t n)
{
    *out = NULL;
    char *text = NULL;
    size_t len = 0;
    if (kat_read_input(path, 0, RESULTS_MAX, &text, &len, err, n) != 0)
        return -1;
    const char *end = NULL;
    cJSON *root = cJSON_ParseWithLengthOpts(text, len, &end, 0);
    if (!root) {
        size_t at = end ? (size_t)(end - text) : 0;
        free(text);
        return kat_fail(err, n, "'%s': not JSON (byte %zu)", path, at);
    }
    free(text);
    if (!cJSON_IsObject(root)) {
        cJSON_Delete(root);
        return kat_fail(err, n, "'%s': expected KernelBench's eval results, an object of problem ids", path);
    }
    const cJSON *p;
    cJSON_ArrayForEach(p, root)
    {
        if (!cJSON_IsArray(p) && !cJSON_IsObject(p)) {
            cJSON_Delete(root);
            return kat_fail(err, n, "'%s': problem \"%s\": expected a list of samples or one sample", path,
                            p->string ? p->string : "?");
        }
    }
    struct kav_kernelbench *k = kat_xcalloc(1, sizeof *k);
    k->root = root;
    *out = k;
    return 0;
}

void kav_kernelbench_free(struct kav_kernelbench *k)
{
    if (!k)
        return;
    cJSON_Delete(k->root);
    free(k);
}

int kav_kernelbench_ids(const char *path, long *problem, long *sample)
{
    const char *base = kat_base_name(path);
    int used = 0;
    long level;
    if (sscanf(base, "level_%ld_problem_%ld_sample_%ld_kernel.py%n", &level, problem, sample, &used) != 3 ||
        base[used] != '\0')
        return -1;
    return 0;
}

static const char *decision_of(const cJSON *s)
{
    int compiled = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(s, "compiled"));
    int correct = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(s, "correctness"));
    return compiled && correct ? "ACCEPT" : "REJECT";
}

const char *kav_kernelbench_decision(const struct kav_kernelbench *k, long problem, long sample)
{
    char key[32];
    snprintf(key, sizeof key, "%ld", problem);
    const cJSON *p = cJSON_GetObjectItemCaseSensitive(k->root, key);
    if (cJSON_IsObject(p)) /* the older layout: one sample per problem */
        return sample == 0 ? decision_of(p) : NULL;
    const cJSON *s;
    cJSON_ArrayForEach(s, p)
    {
        const cJSON *id = cJSON_GetObjectItemCaseSensitive(s, "sample_id");
        if (cJSON_IsNumber(id) && id->valuedouble == (double)sample)
            return decision_of(s);
    }
    return NULL;
}

/* ---- decisions keyed by the candidate's code: CUDA-L1, KernelBot ----------- */

struct code_entry {
    char digest[33];            /* of the candidate's code */
    const char *decision;       /* "ACCEPT" or "REJECT" */
    char *source;               /* the log or result file it came from */
};

struct kav_code_decisions {
    struct code_entry *e;
    size_t n, cap;
};

/* One log is one evaluation; far above any real one (its first line holds the code). */
#define CUDAL1_LOG_MAX (64u << 20)

/* As kaudit audit's record digests its candidate file (XXH3-128, canonical, hex). */
static void code_digest(const char *code, size_t len, char hex[33])
{
    XXH128_canonical_t c;
    XXH128_canonicalFromHash(&c, XXH3_128bits(code, len));
    kat_hex(c.digest, sizeof c.digest, hex);
}

struct kav_code_decisions *kav_code_decisions_new(void)
{
    return kat_xcalloc(1, sizeof(struct kav_code_decisions));
}

void kav_code_decisions_free(struct kav_code_decisions *k)
{
    if (!k)
        return;
    for (size_t i = 0; i < k->n; i++)
        free(k->e[i].source);
    free(k->e);
    free(k);
}

static int add_decision(struct kav_code_decisions *k, const char *digest, const char *decision, const char *path,
                        char *err, size_t n)
{
    if (k->n == k->cap && kat_grow(&k->e, &k->cap, k->n + 1, sizeof *k->e) != 0)
        return kat_fail(err, n, "'%s': out of memory", path);
    struct code_entry *e = &k->e[k->n++];
    memcpy(e->digest, digest, sizeof e->digest);
    e->decision = decision;
    e->source = kat_xstrdup(path);
    return 0;
}

/*
 * The decision a finished log records: REJECT at the first line with "error":
 * true (eval_pipeline writes one and stops: a build, lazy-output or
 * correctness failure); ACCEPT when its last line is "done": true with
 * "error": false and a "score".  Neither (a run cut short): NULL.
 */
static const char *cudal1_decision(const cJSON *line, const char *so_far)
{
    if (so_far && !strcmp(so_far, "REJECT"))
        return so_far;
    if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(line, "error")))
        return "REJECT";
    if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(line, "done")) &&
        cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(line, "score")))
        return "ACCEPT";
    return NULL;
}

/*
 * Reads path (at most max bytes) and calls on_line for each line (without its
 * newline), stopping at the first that returns -1: the number of lines read,
 * or -1 with err set (naming the file and the line).
 */
typedef int (*line_fn)(const char *line, size_t len, unsigned lineno, void *arg, char *err, size_t n);

static long each_line(const char *path, size_t max, line_fn on_line, void *arg, char *err, size_t n)
{
    char *text = NULL;
    size_t len = 0;
    if (kat_read_input(path, 0, max, &text, &len, err, n) != 0)
        return -1;
    unsigned lineno = 0;
    int rc = 0;
    for (char *p = text, *end = text + len; p < end && rc == 0;) {
        char *nl = memchr(p, '\n', (size_t)(end - p));
        rc = on_line(p, nl ? (size_t)(nl - p) : (size_t)(end - p), ++lineno, arg, err, n);
        p = nl ? nl + 1 : end;
    }
    free(text);
    return rc != 0 ? -1 : (long)lineno;
}

/* What one run's file says: the digest of its code and its decision. */
struct run_reading {
    const char *path;
    char digest[33];
    const char *decision;
};

static int cudal1_line(const char *line, size_t len, unsigned lineno, void *arg, char *err, size_t n)
{
    struct run_reading *r = arg;
    cJSON *o = len ? cJSON_ParseWithLength(line, len) : NULL;
    int rc = 0;
    if (!cJSON_IsObject(o)) {
        rc = kat_fail(err, n, "'%s':%u: not a JSON object (CUDA-L1's eval_pipeline log has one per line)", r->path,
                      lineno);
    } else if (lineno == 1) {
        const cJSON *code = cJSON_GetObjectItemCaseSensitive(o, "code");
        if (!cJSON_IsString(code))
            rc = kat_fail(err, n, "'%s':1: no \"code\": not CUDA-L1's eval_pipeline log (its first line "
                          "holds the candidate's code)", r->path);
        else
            code_digest(code->valuestring, strlen(code->valuestring), r->digest);
    } else {
        r->decision = cudal1_decision(o, r->decision);
    }
    cJSON_Delete(o);
    return rc;
}

int kav_cudal1_add(struct kav_code_decisions *k, const char *path, char *err, size_t n)
{
    struct run_reading r = { .path = path };
    long lines = each_line(path, CUDAL1_LOG_MAX, cudal1_line, &r, err, n);
    if (lines < 0)
        return -1;
    if (lines == 0)
        return kat_fail(err, n, "'%s': empty: not CUDA-L1's eval_pipeline log", path);
    if (!r.decision)
        return 1;   /* the run did not finish: no decision to join */
    return add_decision(k, r.digest, r.decision, path, err, n);
}

/* One KernelBot result file: far above any real one. */
#define KERNELBOT_LINES_MAX (16u << 20)

/* The submission beside a result file: DIR/submission.py, as KernelBot's runner lays out its work folder. */
static int submission_digest(const char *path, char hex[33], char *err, size_t n)
{
    const char *slash = strrchr(path, '/');
    char *sub = NULL;
    if (asprintf(&sub, "%.*ssubmission.py", slash ? (int)(slash - path + 1) : 0, path) < 0)
        return kat_fail(err, n, "'%s': out of memory", path);
    char *text = NULL;
    size_t len = 0;
    char why[512];
    int rc = kat_read_input(sub, 0, KERNELBOT_LINES_MAX, &text, &len, why, sizeof why);
    if (rc != 0)
        kat_fail(err, n, "'%s': no submission.py beside it to join on (%s)", path, why);
    else
        code_digest(text, len, hex);
    free(text);
    free(sub);
    return rc;
}

static int kernelbot_line(const char *line, size_t len, unsigned lineno, void *arg, char *err, size_t n)
{
    struct run_reading *r = arg;
    const char *colon = len ? memchr(line, ':', len) : NULL;
    if (len && (!colon || colon + 1 >= line + len || colon[1] != ' '))
        return kat_fail(err, n, "'%s':%u: not a \"key: value\" line (KernelBot's eval writes those to POPCORN_FD)",
                        r->path, lineno);
    if (len && colon - line == 5 && !memcmp(line, "check", 5)) {
        /* the last check line decides: pass, or anything else (fail) */
        size_t vl = len - 7;
        r->decision = vl == 4 && !memcmp(colon + 2, "pass", 4) ? "ACCEPT" : "REJECT";
    }
    return 0;
}

int kav_kernelbot_add(struct kav_code_decisions *k, const char *path, char *err, size_t n)
{
    struct run_reading r = { .path = path };
    if (each_line(path, KERNELBOT_LINES_MAX, kernelbot_line, &r, err, n) < 0)
        return -1;
    if (!r.decision)
        return 1;   /* no check line: the run did not finish */
    if (submission_digest(path, r.digest, err, n) != 0)
        return -1;
    return add_decision(k, r.digest, r.decision, path, err, n);
}

const char *kav_code_decision(const struct kav_code_decisions *k, const char *digest, const char **source)
{
    const char *found = NULL;
    for (size_t i = 0; digest && i < k->n; i++) {
        if (strcmp(k->e[i].digest, digest) != 0)
            continue;
        /* the same code evaluated twice: ACCEPT only when every run says so */
        if (!found || !strcmp(k->e[i].decision, "REJECT")) {
            found = k->e[i].decision;
            if (source)
                *source = k->e[i].source;
        }
    }
    return found;
}
