/*
 * inventory_exact.c - exactness of the inventory against cuobjdump.
 *
 *   inventory_exact ORACLE.txt.gz LIBDIR
 *
 * ORACLE lists, per vendor library, "# <file> sha256=<hex>" and then the
 * kernel entry names `cuobjdump -symbols` printed with STO_ENTRY for it.
 * For every library of LIBDIR whose sha256 matches, the cubin names the
 * inventory finds in the library's .nv_fatbin must equal that list.  Names
 * found only in containers elsewhere (.cask_resource) are reported apart:
 * cuobjdump does not read those.
 *
 * Exit: 0 equal, 1 different, 77 skipped (no library present with the
 * oracle's digest; the reason is printed), 99 the test itself broke.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "inventory.h"

struct lib {
    char file[256];
    char sha[65];
    char **names;
    size_t n, cap;
    int present;
};

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void free_libs(struct lib *libs, size_t n, char **paths)
{
    for (size_t i = 0; i < n; i++) {
        for (size_t k = 0; k < libs[i].n; k++)
            free(libs[i].names[k]);
        free(libs[i].names);
        free(paths[i]);
    }
}

static int sha256_of(const char *path, char out[65])
{
    char cmd[4200];
    snprintf(cmd, sizeof(cmd), "sha256sum '%s' 2>/dev/null", path);
    FILE *p = popen(cmd, "r");
    if (!p)
        return -1;
    int ok = fscanf(p, "%64s", out) == 1;
    return pclose(p) == 0 && ok ? 0 : -1;
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: inventory_exact ORACLE.txt.gz LIBDIR\n");
        return 99;
    }
    char cmd[4200];
    snprintf(cmd, sizeof(cmd), "gzip -dc '%s'", argv[1]);
    FILE *p = popen(cmd, "r");
    if (!p) {
        perror("popen gzip");
        return 99;
    }
    struct lib libs[64];
    size_t n_libs = 0;
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    while ((len = getline(&line, &cap, p)) > 0) {
        while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r'))
            line[--len] = 0;
        if (line[0] == '#') {
            if (n_libs == 64)
                return 99;
            struct lib *l = &libs[n_libs++];
            memset(l, 0, sizeof(*l));
            if (sscanf(line, "# %255s sha256=%64s", l->file, l->sha) != 2) {
                fprintf(stderr, "inventory_exact: bad oracle header '%s'\n", line);
                return 99;
            }
            continue;
        }
        if (!n_libs || !len)
            continue;
        struct lib *l = &libs[n_libs - 1];
        if (l->n == l->cap) {
            l->cap = l->cap ? 2 * l->cap : 1024;
            l->names = realloc(l->names, l->cap * sizeof(char *));
        }
        l->names[l->n++] = strdup(line);
    }
    free(line);
    if (pclose(p) != 0 || n_libs == 0) {
        fprintf(stderr, "inventory_exact: cannot read the oracle '%s'\n", argv[1]);
        return 99;
    }

    /* which libraries are here, with the oracle's digest */
    const char *paths[64];
    size_t n_paths = 0;
    char *pathbuf[64] = { 0 };
    for (size_t i = 0; i < n_libs; i++) {
        struct lib *l = &libs[i];
        if (l->n)
            qsort(l->names, l->n, sizeof(char *), cmp_str);
        if (asprintf(&pathbuf[i], "%s/%s", argv[2], l->file) < 0)
            return 99;
        char sha[65];
        if (sha256_of(pathbuf[i], sha)) {
            printf("skip %s: not present in %s\n", l->file, argv[2]);
            continue;
        }
        if (strcmp(sha, l->sha)) {
            printf("skip %s: sha256 %s is not the oracle's %s\n", l->file, sha, l->sha);
            continue;
        }
        l->present = 1;
        paths[n_paths++] = pathbuf[i];
    }
    if (n_paths == 0) {
        printf("SKIPPED: no library of the oracle is present with its digest in %s\n", argv[2]);
        free_libs(libs, n_libs, pathbuf);
        return 77;
    }

    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    struct kinv_inventory *inv;
    struct kinv_err err;
    if (kinv_build(paths, n_paths, NULL, &inv, NULL, &err)) {
        fprintf(stderr, "inventory_exact: %s\n", err.msg);
        free_libs(libs, n_libs, pathbuf);
        return 1;
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    printf("built from %zu libraries in %.2f s\n", n_paths,
           (double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9);

    int failed = 0;
    size_t distinct = 0;
    printf("%-40s %8s %8s %10s %8s\n", "library", "oracle", "ours", "embedded", "differ");
    for (size_t i = 0; i < n_libs; i++) {
        struct lib *l = &libs[i];
        if (!l->present)
            continue;
        long li = kinv_find_library(inv, l->file);
        if (li < 0) {
            fprintf(stderr, "inventory_exact: %s missing from the inventory\n", l->file);
            return 99;
        }
        /* the inventory's cubin names of this library, in its .nv_fatbin (sorted, unique) */
        char **ours = malloc((inv->n_entries + 1) * sizeof(char *));
        size_t n_ours = 0, embedded = 0;
        for (size_t k = 0; k < inv->n_entries; k++) {
            const struct kinv_entry *e = &inv->entries[k];
            if (e->kind != KINV_KIND_CUBIN)
                continue;
            for (uint32_t r = 0; r < e->n_libs; r++)
                if (e->libs[r] == (uint32_t)li) {
                    if (e->lib_embedded[r])
                        embedded++;
                    else
                        ours[n_ours++] = strndup(e->name, e->name_len);
                }
        }
        size_t a = 0, b = 0, differ = 0;
        while (a < n_ours || b < l->n) {
            int c = a == n_ours ? 1 : b == l->n ? -1 : strcmp(ours[a], l->names[b]);
            if (c == 0) {
                a++;
                b++;
                continue;
            }
            if (differ++ < 5)
                fprintf(stderr, "  %s: %s %s\n", l->file, c < 0 ? "only ours:  " : "only oracle:",
                        c < 0 ? ours[a] : l->names[b]);
            if (c < 0)
                a++;
            else
                b++;
        }
        printf("%-40s %8zu %8zu %10zu %8zu\n", l->file, l->n, n_ours, embedded, differ);
        failed |= differ != 0;
        distinct += l->n;
        for (size_t k = 0; k < n_ours; k++)
            free(ours[k]);
        free(ours);
    }
    /* distinct names over the present libraries, both sides */
    size_t oracle_union = 0, ours_union = 0;
    {
        size_t total = 0;
        for (size_t i = 0; i < n_libs; i++)
            total += libs[i].present ? libs[i].n : 0;
        char **all = malloc((total + 1) * sizeof(char *));
        size_t k = 0;
        for (size_t i = 0; i < n_libs; i++)
            for (size_t j = 0; libs[i].present && j < libs[i].n; j++)
                all[k++] = libs[i].names[j];
        if (k)
            qsort(all, k, sizeof(char *), cmp_str);
        for (size_t j = 0; j < k; j++)
            oracle_union += j == 0 || strcmp(all[j], all[j - 1]);
        free(all);
        for (size_t j = 0; j < inv->n_entries; j++) {
            const struct kinv_entry *e = &inv->entries[j];
            int fat = 0;
            for (uint32_t r = 0; r < e->n_libs; r++)
                fat |= !e->lib_embedded[r];
            ours_union += e->kind == KINV_KIND_CUBIN && fat;
        }
    }
    printf("distinct names: oracle %zu, ours %zu (sum over libraries %zu)\n", oracle_union, ours_union,
           distinct);
    failed |= oracle_union != ours_union;
    kinv_free(inv);
    free_libs(libs, n_libs, pathbuf);
    if (n_paths < n_libs)
        printf("note: %zu of %zu oracle libraries were skipped (see above)\n", n_libs - n_paths, n_libs);
    printf("%s\n", failed ? "FAILED: the inventory differs from cuobjdump" : "exact: the inventory equals cuobjdump's entry list");
    return failed ? 1 : 0;
}
