/*
 * harness_results.c - KernelBench's eval_results.json as weak decisions
 * (harness_results.h).
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

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
