/*
 * audit_shard.c - which tasks of a batch one `kaudit audit --batch` runs,
 * and on which GPUs its workers run (docs/audit.md, "Shards, GPUs and Slurm
 * arrays").
 *
 * The split is by position: the k-th task line (0-based, blank and '#'
 * lines not counted) belongs to shard k mod N.  It needs nothing but the
 * file, balances shards to within one task, and is the same in every array
 * task that reads the same file; the file must not change between shards.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "audit_shard.h"
#include "toolbox.h"

/* A decimal number 0..max, the whole string. */
static int number(const char *s, unsigned long max, unsigned long *out)
{
    if (!s || !*s || strlen(s) > 12)
        return -1;
    unsigned long v = 0;
    for (const char *p = s; *p; p++) {
        if (*p < '0' || *p > '9')
            return -1;
        v = v * 10 + (unsigned long)(*p - '0');
    }
    if (v > max)
        return -1;
    *out = v;
    return 0;
}

#define SHARDS_MAX 1000000ul

int audit_shard_parse(const char *arg, struct audit_shard *sh, char *err, size_t errlen)
{
    memset(sh, 0, sizeof *sh);
    const char *slash = strchr(arg, '/');
    char head[16];
    unsigned long i, n;
    if (!slash || (size_t)(slash - arg) >= sizeof head)
        return kat_fail(err, errlen, "--shard takes i/N (shard i of N, from 1), not '%s'", arg);
    memcpy(head, arg, (size_t)(slash - arg));
    head[slash - arg] = '\0';
    if (number(head, SHARDS_MAX, &i) != 0 || number(slash + 1, SHARDS_MAX, &n) != 0 || n == 0)
        return kat_fail(err, errlen, "--shard takes i/N (shard i of N, from 1), not '%s'", arg);
    if (i < 1 || i > n)
        return kat_fail(err, errlen, "--shard %s: shards are numbered 1 to %lu", arg, n);
    sh->index = (unsigned)(i - 1);
    sh->count = (unsigned)n;
    snprintf(sh->source, sizeof sh->source, "--shard %lu/%lu", i, n);
    return 0;
}

int audit_shard_from_slurm(const char *(*env)(const char *), struct audit_shard *sh, char *err, size_t errlen)
{
    memset(sh, 0, sizeof *sh);
    const char *id_s = env("SLURM_ARRAY_TASK_ID");
    if (!id_s || !*id_s)
        return 0;
    const char *count_s = env("SLURM_ARRAY_TASK_COUNT"), *min_s = env("SLURM_ARRAY_TASK_MIN");
    const char *max_s = env("SLURM_ARRAY_TASK_MAX"), *step_s = env("SLURM_ARRAY_TASK_STEP");
    unsigned long id, count, min, max = 0, step = 1;
    const unsigned long big = 4294967295ul;
    if (number(id_s, big, &id) != 0)
        return kat_fail(err, errlen, "SLURM_ARRAY_TASK_ID='%s' is not an array index", id_s);
    if (!count_s || !min_s)
        return kat_fail(err, errlen,
                    "SLURM_ARRAY_TASK_ID is set but SLURM_ARRAY_TASK_%s is not: cannot tell which shard this is "
                    "(give --shard i/N)",
                    !count_s ? "COUNT" : "MIN");
    if (number(count_s, SHARDS_MAX, &count) != 0 || count == 0)
        return kat_fail(err, errlen, "SLURM_ARRAY_TASK_COUNT='%s' is not a number of tasks (1 to %lu)", count_s,
                    SHARDS_MAX);
    if (number(min_s, big, &min) != 0)
        return kat_fail(err, errlen, "SLURM_ARRAY_TASK_MIN='%s' is not an array index", min_s);
    if (step_s && *step_s && (number(step_s, big, &step) != 0 || step == 0))
        return kat_fail(err, errlen, "SLURM_ARRAY_TASK_STEP='%s' is not a step", step_s);
    if (max_s && number(max_s, big, &max) != 0)
        return kat_fail(err, errlen, "SLURM_ARRAY_TASK_MAX='%s' is not an array index", max_s);
    /* MIN, MIN+STEP, ..., MAX with COUNT members: otherwise the array has
     * gaps, and the shard of a missing id would be lost without a word */
    int regular = id >= min && (id - min) % step == 0 && (id - min) / step < count &&
                  (!max_s || min + (count - 1) * step == max);
    if (!regular)
        return kat_fail(err, errlen,
                    "SLURM_ARRAY_TASK_ID=%s is not one of %lu ids %lu, %lu, ... %s%s: a batch splits only over an "
                    "array of consecutive ids (--array=0-%lu, or with a step); give --shard i/N otherwise",
                    id_s, count, min, min + step, max_s ? "up to " : "", max_s ? max_s : "", count - 1);
    sh->index = (unsigned)((id - min) / step);
    sh->count = (unsigned)count;
    snprintf(sh->source, sizeof sh->source, "SLURM_ARRAY_TASK_ID=%lu of SLURM_ARRAY_TASK_COUNT=%lu (shard %u/%lu)",
             id, count, sh->index + 1, count);
    return 0;
}

int audit_shard_has(const struct audit_shard *sh, size_t k)
{
    return sh->count == 0 || k % sh->count == sh->index;
}

void audit_gpus_free(char **gpus, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(gpus[i]);
    free(gpus);
}

/* One entry of a list: an ordinal or a GPU-/MIG- UUID; no spaces, no commas. */
static int gpu_entry_ok(const char *s, size_t len)
{
    if (len == 0 || len > 96)
        return 0;
    for (size_t i = 0; i < len; i++)
        if (!((s[i] >= '0' && s[i] <= '9') || ((s[i] | 32) >= 'a' && (s[i] | 32) <= 'z') || s[i] == '-' ||
              s[i] == '/' || s[i] == ':' || s[i] == '.'))
            return 0;
    return 1;
}

static int split_list(const char *list, const char *what, char ***gpus, size_t *n, char *err, size_t errlen)
{
    size_t cap = 0;
    *gpus = NULL;
    *n = 0;
    for (const char *p = list;;) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        if (!gpu_entry_ok(p, len)) {
            audit_gpus_free(*gpus, *n);
            *gpus = NULL;
            *n = 0;
            return kat_fail(err, errlen, "%s '%s': '%.*s' is not a GPU (an ordinal such as 0, or a GPU-/MIG- UUID)",
                        what, list, (int)(len > 96 ? 96 : len), p);
        }
        if (*n == cap) {
            cap = cap ? 2 * cap : 8;
            char **grown = realloc(*gpus, cap * sizeof **gpus);
            if (!grown) {
                audit_gpus_free(*gpus, *n);
                return kat_fail(err, errlen, "out of memory");
            }
            *gpus = grown;
        }
        (*gpus)[(*n)++] = strndup(p, len);
        if (!comma)
            break;
        p = comma + 1;
    }
    return 0;
}

int audit_gpus_parse(const char *spec, const char *(*env)(const char *), const char *dev_dir, char ***gpus, size_t *n,
                     char *err, size_t errlen)
{
    *gpus = NULL;
    *n = 0;
    if (strcmp(spec, "auto") != 0)
        return split_list(spec, "--gpus", gpus, n, err, errlen);
    const char *visible = env("CUDA_VISIBLE_DEVICES");
    if (visible) {
        /* what a scheduler (Slurm's --gres) or the user allowed: its entries,
         * as given; empty or -1 hides every GPU (CUDA's own reading) */
        if (!*visible || !strcmp(visible, "-1") || !strcmp(visible, "NoDevFiles"))
            return 0;
        return split_list(visible, "CUDA_VISIBLE_DEVICES", gpus, n, err, errlen);
    }
    /* /dev/nvidia0, /dev/nvidia1, ...: one per GPU the container can open
     * (nvidiactl, nvidia-uvm and the like are not GPUs).  CUDA numbers the
     * ones it can open from 0, whatever their node numbers. */
    DIR *d = opendir(dev_dir);
    if (!d)
        return 0;
    size_t count = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        if (!strncmp(e->d_name, "nvidia", 6) && e->d_name[6]) {
            unsigned long v;
            if (number(e->d_name + 6, 4096, &v) == 0)
                count++;
        }
    closedir(d);
    if (!count)
        return 0;
    *gpus = calloc(count, sizeof **gpus);
    if (!*gpus)
        return kat_fail(err, errlen, "out of memory");
    for (size_t i = 0; i < count; i++) {
        char buf[24];
        snprintf(buf, sizeof buf, "%zu", i);
        (*gpus)[i] = strdup(buf);
    }
    *n = count;
    return 0;
}

int audit_jobs_auto(long cpus, unsigned long long mem_kib, size_t pairs)
{
    long jobs = cpus / 2;
    if (mem_kib && (unsigned long long)jobs > mem_kib / AUDIT_JOB_MEMORY_KIB)
        jobs = (long)(mem_kib / AUDIT_JOB_MEMORY_KIB);
    if ((size_t)jobs > pairs)
        jobs = (long)pairs;
    if (jobs > 256)
        jobs = 256;
    return jobs < 1 ? 1 : (int)jobs;
}

unsigned long long audit_mem_available_kib(const char *meminfo)
{
    FILE *f = fopen(meminfo, "r");
    if (!f)
        return 0;
    char line[256];
    unsigned long long kib = 0;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "MemAvailable: %llu kB", &kib) == 1)
            break;
    fclose(f);
    return kib;
}
