/*
 * inventory_bench.c - how fast the inventory is built and queried.
 *
 *   kaudit_inventory_bench [-j N] [--repeat R] [--lookups N] LIB|DIR...
 *
 * Builds the inventory of the libraries R times (wall time of each run,
 * minimum and median, peak resident memory), then times lookups over the
 * inventory's own names (hits), the same names altered by one character
 * (misses, which also go through the pattern prefilter), a half-and-half
 * mix, and names made from the inventory's patterns (the runtime-named
 * kernels).  bench/inventory_bench.sh runs it beside cuobjdump.
 */
#define _GNU_SOURCE
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "inventory.h"

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + t.tv_nsec / 1e9;
}

static double cpu_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec + t.tv_nsec / 1e9;
}

/* CPU seconds of the last timed loop: on a shared machine the wall time
   also counts the time other processes held the CPU. */
static double last_cpu;

static long peak_rss_kib(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kib = -1;
    while (f && fgets(line, sizeof(line), f))
        if (!strncmp(line, "VmHWM:", 6))
            kib = strtol(line + 6, NULL, 10);
    if (f)
        fclose(f);
    return kib;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

struct name {
    const char *p;
    size_t len;
};

/* A name the pattern matches: every conversion replaced by a sample value. */
static char *instantiate(const char *pat, size_t len, unsigned salt)
{
    char *out = malloc(4 * len + 64);
    size_t o = 0;
    for (size_t i = 0; i < len; i++) {
        if (pat[i] != '%') {
            out[o++] = pat[i];
            continue;
        }
        while (i + 1 < len && strchr("-+ 0#0123456789.hlzjt", pat[i + 1]))
            i++;
        i++;
        if (i >= len)
            break;
        switch (pat[i]) {
        case 's': o += (size_t)sprintf(out + o, "s%u", salt % 7); break;
        case 'c': out[o++] = (char)('a' + salt % 26); break;
        case 'x': case 'X': o += (size_t)sprintf(out + o, "%x", 16 + salt % 200); break;
        default: o += (size_t)sprintf(out + o, "%u", 8 + salt % 250); break;
        }
    }
    out[o] = 0;
    return out;
}

static double rate(const struct kinv_inventory *inv, const struct name *names, size_t n, size_t lookups,
                   int full, size_t *found)
{
    size_t hits = 0;
    double t0 = now(), c0 = cpu_now();
    for (size_t i = 0, k = 0; i < lookups; i++, k = k + 1 == n ? 0 : k + 1) {
        if (full) {
            struct kinv_match m;
            kinv_match(inv, names[k].p, names[k].len, &m);
            hits += m.strength != KINV_MATCH_NONE;
        } else {
            const struct kinv_entry *e;
            hits += kinv_lookup_name(inv, names[k].p, names[k].len, &e) != 0;
        }
    }
    double dt = now() - t0;
    last_cpu = cpu_now() - c0;
    *found = hits;
    return (double)lookups / dt;
}

int main(int argc, char **argv)
{
    static const struct option longopts[] = {
        { "repeat", required_argument, NULL, 'r' },
        { "lookups", required_argument, NULL, 'n' },
        { "jobs", required_argument, NULL, 'j' },
        { NULL, 0, NULL, 0 },
    };
    int repeat = 3, c;
    size_t lookups = 20000000;
    struct kinv_build_options opt = { 0 };
    while ((c = getopt_long(argc, argv, "j:", longopts, NULL)) != -1) {
        switch (c) {
        case 'r': repeat = atoi(optarg); break;
        case 'n': lookups = strtoull(optarg, NULL, 10); break;
        case 'j': opt.threads = atoi(optarg); break;
        default:
            fprintf(stderr, "usage: kaudit_inventory_bench [-j N] [--repeat R] [--lookups N] LIB|DIR...\n");
            return 2;
        }
    }
    if (optind >= argc || repeat < 1 || lookups < 1) {
        fprintf(stderr, "usage: kaudit_inventory_bench [-j N] [--repeat R] [--lookups N] LIB|DIR...\n");
        return 2;
    }

    double *times = calloc((size_t)repeat, sizeof(double));
    struct kinv_inventory *inv = NULL;
    for (int r = 0; r < repeat; r++) {
        struct kinv_err err;
        kinv_free(inv);
        inv = NULL;
        double t0 = now();
        if (kinv_build((const char *const *)argv + optind, (size_t)(argc - optind), &opt, &inv, NULL, &err)) {
            fprintf(stderr, "kaudit_inventory_bench: %s\n", err.msg);
            return 1;
        }
        times[r] = now() - t0;
        printf("build: run %d: %.3f s\n", r + 1, times[r]);
    }
    long rss = peak_rss_kib();
    qsort(times, (size_t)repeat, sizeof(double), cmp_double);
    uint64_t bytes = 0;
    for (size_t i = 0; i < inv->n_libs; i++)
        bytes += inv->libs[i].size;
    int threads = opt.threads > 0 ? opt.threads : (int)sysconf(_SC_NPROCESSORS_ONLN);
    printf("build: min %.3f s, median %.3f s over %d runs; %zu libraries (%.1f MB), %zu entries, "
           "%zu module digests; %d threads; peak RSS %.1f MiB (includes the mapped library files)\n",
           times[0], times[repeat / 2], repeat, inv->n_libs, (double)bytes / 1e6, inv->n_entries,
           inv->n_modules, threads, rss / 1024.0);

    /* names to look up */
    size_t n = 0, n_pat = 0;
    for (size_t i = 0; i < inv->n_entries; i++)
        if (inv->entries[i].kind != KINV_KIND_PATTERN)
            n++;
        else
            n_pat++;
    if (n == 0) {
        printf("lookups: no names in the inventory\n");
        return 0;
    }
    struct name *hit = malloc(n * sizeof(*hit)), *miss = malloc(n * sizeof(*miss));
    struct name *mix = malloc(2 * n * sizeof(*mix));
    size_t k = 0;
    for (size_t i = 0; i < inv->n_entries; i++) {
        const struct kinv_entry *e = &inv->entries[i];
        if (e->kind == KINV_KIND_PATTERN)
            continue;
        hit[k] = (struct name){ e->name, e->name_len };
        char *m = malloc(e->name_len + 1);
        memcpy(m, e->name, e->name_len);
        m[e->name_len / 2] ^= 0x01;     /* one character off, in the middle */
        m[e->name_len] = 0;
        miss[k] = (struct name){ m, e->name_len };
        k++;
    }
    /* shuffle the hits so that the table is not walked in order */
    srand(12345);
    for (size_t i = n - 1; i > 0; i--) {
        size_t j = (size_t)rand() % (i + 1);
        struct name t = hit[i];
        hit[i] = hit[j];
        hit[j] = t;
        t = miss[i];
        miss[i] = miss[j];
        miss[j] = t;
    }
    /* the queries live in their own memory, in lookup order, as a caller's
       names (from a trace) would: not the inventory's own strings */
    size_t total = 0;
    for (size_t i = 0; i < n; i++)
        total += hit[i].len + 1;
    char *pool = malloc(total);
    for (size_t i = 0, at = 0; i < n; i++) {
        memcpy(pool + at, hit[i].p, hit[i].len);
        pool[at + hit[i].len] = 0;
        hit[i].p = pool + at;
        at += hit[i].len + 1;
    }
    total = 0;
    for (size_t i = 0; i < n; i++)
        total += miss[i].len + 1;
    char *mpool = malloc(total);
    for (size_t i = 0, at = 0; i < n; i++) {
        memcpy(mpool + at, miss[i].p, miss[i].len);
        mpool[at + miss[i].len] = 0;
        free((char *)miss[i].p);
        miss[i].p = mpool + at;
        at += miss[i].len + 1;
    }
    for (size_t i = 0; i < n; i++) {
        mix[2 * i] = hit[i];
        mix[2 * i + 1] = miss[i];
    }
    size_t found;
    double r1 = rate(inv, hit, n, lookups, 0, &found);
    double c1 = lookups / last_cpu;
    printf("lookups: exact name, hits: %.1f M names/s (%.1f M per CPU-second; %zu of %zu found)\n", r1 / 1e6,
           c1 / 1e6, found, lookups);
    /* batched, as the analyzer looks up a trace's names */
    {
        struct kinv_query *q = malloc(n * sizeof(*q));
        for (size_t i = 0; i < n; i++)
            q[i] = (struct kinv_query){ hit[i].p, hit[i].len, NULL, 0 };
        size_t done = 0, hits = 0;
        double t0 = now(), c0 = cpu_now();
        while (done < lookups) {
            size_t m = lookups - done < n ? lookups - done : n;
            kinv_lookup_batch(inv, q, m);
            for (size_t i = 0; i < m; i++)
                hits += q[i].count != 0;
            done += m;
        }
        double rb = (double)lookups / (now() - t0);
        last_cpu = cpu_now() - c0;
        printf("lookups: exact name, hits, batched (kinv_lookup_batch): %.1f M names/s (%.1f M per CPU-second; "
               "%zu of %zu found)\n", rb / 1e6, lookups / last_cpu / 1e6, hits, lookups);
        free(q);
    }
    double r2 = rate(inv, mix, 2 * n, lookups, 1, &found);
    printf("lookups: full match, half hits half misses: %.1f M names/s (%.1f M per CPU-second; %zu found)\n",
           r2 / 1e6, lookups / last_cpu / 1e6, found);
    double r3 = rate(inv, miss, n, lookups, 1, &found);
    printf("lookups: full match, names altered by one character (mostly misses: exact table, then "
           "patterns): %.1f M names/s (%zu found)\n",
           r3 / 1e6, found);
    if (n_pat) {
        size_t np = 256;
        struct name *pn = malloc(np * sizeof(*pn));
        size_t q = 0;
        for (size_t i = 0; i < np; i++) {
            while (inv->entries[q].kind != KINV_KIND_PATTERN)
                q = (q + 1) % inv->n_entries;
            char *s = instantiate(inv->entries[q].name, inv->entries[q].name_len, (unsigned)i);
            pn[i] = (struct name){ s, strlen(s) };
            q = (q + 1) % inv->n_entries;
        }
        double r4 = rate(inv, pn, np, lookups / 10 ? lookups / 10 : 1, 1, &found);
        printf("lookups: full match, pattern-named kernels: %.2f M names/s (%zu of %zu matched)\n",
               r4 / 1e6, found, lookups / 10 ? lookups / 10 : 1);
        for (size_t i = 0; i < np; i++)
            free((char *)pn[i].p);
        free(pn);
    }
    printf("lookups: %.1f M names/s on exact hits (%.1f M per CPU-second), %zu lookups per case\n", r1 / 1e6,
           c1 / 1e6, lookups);
    free(hit);
    free(miss);
    free(mix);
    free(pool);
    free(mpool);
    free(times);
    kinv_free(inv);
    return 0;
}
