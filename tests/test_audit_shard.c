/*
 * test_audit_shard.c - the split of a batch (audit/audit_shard.c): --shard
 * i/N, the shard of a Slurm array task from the variables Slurm 22.05 sets
 * (observed with sbatch --array on tests/slurm_array.sh's cluster: a list
 * array 1,3,7 gets COUNT=3 MIN=1 MAX=7 STEP=1, a range 0-6:3 STEP=3), and
 * --gpus.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "audit_shard.h"

/* A stand-in environment: "NAME=value" pairs, NULL-terminated. */
static const char *const *fake;
static const char *fake_env(const char *name)
{
    size_t len = strlen(name);
    for (size_t i = 0; fake && fake[i]; i++)
        if (!strncmp(fake[i], name, len) && fake[i][len] == '=')
            return fake[i] + len + 1;
    return NULL;
}

static int slurm(struct audit_shard *sh, char *err, const char *const *env)
{
    fake = env;
    return audit_shard_from_slurm(fake_env, sh, err, 512);
}

Test(shard, parse_is_one_based_and_checked)
{
    struct audit_shard sh;
    char err[512];
    cr_assert_eq(audit_shard_parse("1/2", &sh, err, sizeof err), 0);
    cr_assert_eq(sh.index, 0);
    cr_assert_eq(sh.count, 2);
    cr_assert_eq(audit_shard_parse("3/3", &sh, err, sizeof err), 0);
    cr_assert_eq(sh.index, 2);
    static const char *const bad[] = { "0/2", "3/2", "1/0", "1", "/2", "1/", "a/2", "1/2x", "-1/2", "1//2",
                                       "99999999999999999999/2", NULL };
    for (int i = 0; bad[i]; i++)
        cr_assert_eq(audit_shard_parse(bad[i], &sh, err, sizeof err), -1, "'%s' was taken", bad[i]);
}

Test(shard, every_task_in_exactly_one_shard)
{
    for (unsigned n = 1; n <= 7; n++) {
        for (size_t k = 0; k < 50; k++) {
            int in = 0;
            for (unsigned i = 0; i < n; i++) {
                struct audit_shard sh = { .index = i, .count = n };
                in += audit_shard_has(&sh, k);
            }
            cr_assert_eq(in, 1, "task %zu is in %d of %u shards", k, in, n);
        }
    }
    struct audit_shard whole = { 0 };
    cr_assert(audit_shard_has(&whole, 12345));
}

Test(shard, slurm_range_from_zero_and_from_one)
{
    struct audit_shard sh;
    char err[512];
    cr_assert_eq(slurm(&sh, err, (const char *const[]){ NULL }), 0);
    cr_assert_eq(sh.count, 0, "no array: the whole batch");
    const char *const a1[] = { "SLURM_ARRAY_TASK_ID=1", "SLURM_ARRAY_TASK_COUNT=2", "SLURM_ARRAY_TASK_MIN=0",
                               "SLURM_ARRAY_TASK_MAX=1", "SLURM_ARRAY_TASK_STEP=1", NULL };
    cr_assert_eq(slurm(&sh, err, a1), 0, "%s", err);
    cr_assert_eq(sh.index, 1);
    cr_assert_eq(sh.count, 2);
    const char *const b[] = { "SLURM_ARRAY_TASK_ID=4", "SLURM_ARRAY_TASK_COUNT=4", "SLURM_ARRAY_TASK_MIN=1",
                              "SLURM_ARRAY_TASK_MAX=4", NULL };
    cr_assert_eq(slurm(&sh, err, b), 0, "%s", err);
    cr_assert_eq(sh.index, 3);
    cr_assert_eq(sh.count, 4);
}

Test(shard, slurm_range_with_a_step)
{
    struct audit_shard sh;
    char err[512];
    const char *const s[] = { "SLURM_ARRAY_TASK_ID=6", "SLURM_ARRAY_TASK_COUNT=3", "SLURM_ARRAY_TASK_MIN=0",
                              "SLURM_ARRAY_TASK_MAX=6", "SLURM_ARRAY_TASK_STEP=3", NULL };
    cr_assert_eq(slurm(&sh, err, s), 0, "%s", err);
    cr_assert_eq(sh.index, 2);
    cr_assert_eq(sh.count, 3);
}

/* A task run again alone (sbatch --array=3) is an array of one: the whole batch,
   which is why docs/audit.md has a rerun give its --shard, and --shard wins. */
Test(shard, slurm_rerun_of_one_task_is_an_array_of_one)
{
    struct audit_shard sh;
    char err[512];
    const char *const s[] = { "SLURM_ARRAY_TASK_ID=3", "SLURM_ARRAY_TASK_COUNT=1", "SLURM_ARRAY_TASK_MIN=3",
                              "SLURM_ARRAY_TASK_MAX=3", "SLURM_ARRAY_TASK_STEP=1", NULL };
    cr_assert_eq(slurm(&sh, err, s), 0, "%s", err);
    cr_assert_eq(sh.index, 0);
    cr_assert_eq(sh.count, 1);
    cr_assert(audit_shard_has(&sh, 0) && audit_shard_has(&sh, 3) && audit_shard_has(&sh, 7));
    cr_assert_eq(audit_shard_parse("4/8", &sh, err, sizeof err), 0, "%s", err);
    cr_assert(audit_shard_has(&sh, 3) && !audit_shard_has(&sh, 0) && audit_shard_has(&sh, 11));
}

Test(shard, slurm_arrays_with_gaps_are_refused)
{
    struct audit_shard sh;
    char err[512];
    /* --array=1,3,7: Slurm says STEP=1; shard 3/3 would never run */
    const char *const gap[] = { "SLURM_ARRAY_TASK_ID=3", "SLURM_ARRAY_TASK_COUNT=3", "SLURM_ARRAY_TASK_MIN=1",
                                "SLURM_ARRAY_TASK_MAX=7", "SLURM_ARRAY_TASK_STEP=1", NULL };
    cr_assert_eq(slurm(&sh, err, gap), -1);
    cr_assert(strstr(err, "consecutive"), "%s", err);
    const char *const off_step[] = { "SLURM_ARRAY_TASK_ID=4", "SLURM_ARRAY_TASK_COUNT=3", "SLURM_ARRAY_TASK_MIN=0",
                                     "SLURM_ARRAY_TASK_MAX=6", "SLURM_ARRAY_TASK_STEP=3", NULL };
    cr_assert_eq(slurm(&sh, err, off_step), -1);
    const char *const below[] = { "SLURM_ARRAY_TASK_ID=0", "SLURM_ARRAY_TASK_COUNT=2", "SLURM_ARRAY_TASK_MIN=1",
                                  NULL };
    cr_assert_eq(slurm(&sh, err, below), -1);
    const char *const no_count[] = { "SLURM_ARRAY_TASK_ID=0", "SLURM_ARRAY_TASK_MIN=0", NULL };
    cr_assert_eq(slurm(&sh, err, no_count), -1);
    cr_assert(strstr(err, "SLURM_ARRAY_TASK_COUNT"), "%s", err);
    const char *const junk[] = { "SLURM_ARRAY_TASK_ID=x", "SLURM_ARRAY_TASK_COUNT=2", "SLURM_ARRAY_TASK_MIN=0",
                                 NULL };
    cr_assert_eq(slurm(&sh, err, junk), -1);
    const char *const zero_step[] = { "SLURM_ARRAY_TASK_ID=0", "SLURM_ARRAY_TASK_COUNT=2", "SLURM_ARRAY_TASK_MIN=0",
                                      "SLURM_ARRAY_TASK_STEP=0", NULL };
    cr_assert_eq(slurm(&sh, err, zero_step), -1);
}

static void list_is(char **g, size_t n, const char *const *want)
{
    size_t i = 0;
    for (; want[i]; i++) {
        cr_assert_lt(i, n, "only %zu GPUs, expected %s too", n, want[i]);
        cr_assert_str_eq(g[i], want[i]);
    }
    cr_assert_eq(n, i, "%zu GPUs, expected %zu", n, i);
}

Test(gpus, explicit_list)
{
    char **g;
    size_t n;
    char err[512];
    fake = NULL;
    cr_assert_eq(audit_gpus_parse("0,1,3", fake_env, "/nonexistent", &g, &n, err, sizeof err), 0, "%s", err);
    list_is(g, n, (const char *const[]){ "0", "1", "3", NULL });
    audit_gpus_free(g, n);
    cr_assert_eq(audit_gpus_parse("GPU-8a1b2c3d-0000-1111-2222-333344445555", fake_env, "/x", &g, &n, err, 512), 0);
    cr_assert_eq(n, 1);
    audit_gpus_free(g, n);
    static const char *const bad[] = { "", "0,", ",0", "0,,1", "0 1", "0;1", NULL };
    for (int i = 0; bad[i]; i++)
        cr_assert_eq(audit_gpus_parse(bad[i], fake_env, "/x", &g, &n, err, sizeof err), -1, "'%s' was taken",
                     bad[i]);
}

Test(gpus, auto_takes_the_inherited_visible_devices)
{
    char **g;
    size_t n;
    char err[512];
    fake = (const char *const[]){ "CUDA_VISIBLE_DEVICES=2,5", NULL };
    cr_assert_eq(audit_gpus_parse("auto", fake_env, "/nonexistent", &g, &n, err, sizeof err), 0);
    list_is(g, n, (const char *const[]){ "2", "5", NULL });
    audit_gpus_free(g, n);
    static const char *const none[] = { "CUDA_VISIBLE_DEVICES=", "CUDA_VISIBLE_DEVICES=-1", NULL };
    for (int i = 0; none[i]; i++) {
        fake = (const char *const[]){ none[i], NULL };
        cr_assert_eq(audit_gpus_parse("auto", fake_env, "/nonexistent", &g, &n, err, sizeof err), 0);
        cr_assert_eq(n, 0, "%s: %zu GPUs", none[i], n);
    }
}

Test(gpus, auto_counts_the_device_nodes)
{
    char dir[] = "/tmp/kaudit-gpus.XXXXXX";
    cr_assert(mkdtemp(dir));
    static const char *const nodes[] = { "nvidia0", "nvidia3", "nvidiactl", "nvidia-uvm", "nvidia-modeset",
                                         "nvidia-caps", NULL };
    char path[256];
    for (int i = 0; nodes[i]; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, nodes[i]);
        FILE *f = fopen(path, "w");
        cr_assert(f);
        fclose(f);
    }
    char **g;
    size_t n;
    char err[512];
    fake = NULL;
    cr_assert_eq(audit_gpus_parse("auto", fake_env, dir, &g, &n, err, sizeof err), 0);
    /* two GPUs the container can open: CUDA calls them 0 and 1 */
    list_is(g, n, (const char *const[]){ "0", "1", NULL });
    audit_gpus_free(g, n);
    for (int i = 0; nodes[i]; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, nodes[i]);
        unlink(path);
    }
    cr_assert_eq(audit_gpus_parse("auto", fake_env, dir, &g, &n, err, sizeof err), 0);
    cr_assert_eq(n, 0, "no device node, no GPU");
    rmdir(dir);
}

Test(jobs, auto_is_two_cpus_and_six_gib_each_bounded_by_the_pairs)
{
    /* the H100 machine: 16 CPUs, 128 GiB: eight at once (the corpus's eight lanes) */
    cr_assert_eq(audit_jobs_auto(16, 120ULL << 20, 24), 8);
    cr_assert_eq(audit_jobs_auto(16, 120ULL << 20, 3), 3, "no more than the pairs");
    cr_assert_eq(audit_jobs_auto(16, 13ULL << 20, 24), 2, "13 GiB: two of 6 GiB");
    cr_assert_eq(audit_jobs_auto(16, 0, 24), 8, "memory unknown: the CPUs decide");
    cr_assert_eq(audit_jobs_auto(1, 1ULL << 20, 24), 1, "never none");
    cr_assert_eq(audit_jobs_auto(1024, 0, 10000), 256, "at most 256");
}

Test(jobs, mem_available_read_from_meminfo)
{
    char path[] = "/tmp/kaudit-meminfo.XXXXXX";
    int fd = mkstemp(path);
    cr_assert(fd >= 0);
    FILE *f = fdopen(fd, "w");
    fputs("MemTotal:       131072000 kB\nMemFree:         1000 kB\nMemAvailable:   125829120 kB\n", f);
    fclose(f);
    cr_assert_eq(audit_mem_available_kib(path), 125829120ULL);
    unlink(path);
    cr_assert_eq(audit_mem_available_kib(path), 0, "unread: 0");
}
