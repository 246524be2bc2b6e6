/*
 * cmd_inventory.c - `kaudit inventory`: build, verify and query vendor
 * kernel inventories.  Parses arguments and calls inventory.h.
 *
 * Exit status (cli.h): 0 success; 1 the answer is negative (verification
 * failed, a name has no match, the inventories differ), an inventory cannot
 * be loaded, or the build failed; 2 usage errors.
 */
#define _GNU_SOURCE
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "cli.h"
#include "commands.h"
#include "inventory.h"

static const char inventory_usage[] =
    "usage: kaudit inventory build [-o FILE] [-j N] [-v] [--no-patterns] [--no-scan]\n"
    "                              [--meta KEY=VALUE]... LIB|DIR...\n"
    "       kaudit inventory verify [--digest HEX] [--libraries] FILE\n"
    "       kaudit inventory lookup [--digest HEX] FILE NAME...   (NAME '-': names from stdin)\n"
    "       kaudit inventory diff A B\n"
    "       kaudit inventory stats FILE\n"
    "       kaudit inventory names [--kind KIND] [--library LIB] [--fatbin-only] FILE\n"
    "       kaudit inventory calibrate [-o OUT] [--allow-other-build] INVENTORY SESSION_DIR...\n"
    "\n"
    "build reads the fatbin containers of each library (a DIR stands for the ELF\n"
    "files in it) and writes a sealed inventory to FILE (default: standard output;\n"
    "a name ending in .zst is written compressed).  Every other command verifies\n"
    "the inventory first and fails when it does not verify.  --digest also pins\n"
    "the inventory's XXH3-128 digest; verify --libraries also checks that each\n"
    "library is at its path with the recorded size and digest.\n"
    "calibrate adds an observed entry for every kernel a recorded session ran\n"
    "inside a vendor call window, pinned to the digest of the session's library\n"
    "file, and writes the new inventory to OUT (default: standard output).\n"
    "KIND is cubin, ptx, observed or pattern.  --fatbin-only leaves out names\n"
    "found only in containers outside .nv_fatbin (cuobjdump lists the rest).\n"
    "\n"
    "exit status: 0 success; 1 verification failed, a name did not match, the\n"
    "inventories differ, an inventory cannot be loaded, or the build failed;\n"
    "2 usage errors.\n";

static void usage(FILE *out)
{
    fputs(inventory_usage, out);
}

static int load(const char *path, const char *digest, struct kinv_inventory **inv)
{
    struct kinv_err err;
    if (kinv_load(path, inv, &err)) {
        cli_error("%s", err.msg);
        return -1;
    }
    if (digest) {
        char hex[33];
        kinv_digest_hex((*inv)->digest, hex);
        if (strcasecmp(hex, digest)) {
            cli_error("inventory '%s' has digest %s, expected %s", path, hex,
                    digest);
            kinv_free(*inv);
            *inv = NULL;
            return -1;
        }
    }
    return 0;
}

static const char *lib_label(const struct kinv_library *l)
{
    if (l->soname)
        return l->soname;
    const char *base = strrchr(l->path, '/');
    return base ? base + 1 : l->path;
}

static void print_targets(FILE *out, const struct kinv_entry *e)
{
    for (uint32_t k = 0; k < e->n_targets; k++) {
        char t[32];
        if (kinv_target_format(e->targets[k], t, sizeof(t)) > 0)
            fprintf(out, "%s%s", k ? "," : "", t);
    }
}

static void print_libs(FILE *out, const struct kinv_inventory *inv, const struct kinv_entry *e)
{
    for (uint32_t k = 0; k < e->n_libs; k++) {
        const struct kinv_library *l = &inv->libs[e->libs[k]];
        char hex[33];
        kinv_digest_hex(l->digest, hex);
        fprintf(out, "%s%s%s (xxh3-128 %s)", k ? ", " : "", lib_label(l),
                e->lib_embedded[k] ? " [embedded]" : "", hex);
    }
}

/* ---- build ------------------------------------------------------------------- */

static int meta_cmp(const void *a, const void *b)
{
    return strcmp(((const struct kinv_meta *)a)->key, ((const struct kinv_meta *)b)->key);
}

static int cmd_build(int argc, char **argv)
{
    static const struct option longopts[] = {
        { "output", required_argument, NULL, 'o' },
        { "jobs", required_argument, NULL, 'j' },
        { "verbose", no_argument, NULL, 'v' },
        { "no-patterns", no_argument, NULL, 'P' },
        { "no-scan", no_argument, NULL, 'S' },
        { "meta", required_argument, NULL, 'm' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    struct kinv_build_options opt = { 0 };
    const char *output = "-";
    struct kinv_meta meta[32];
    size_t n_meta = 0;
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "+:o:j:vh", longopts, NULL)) != -1) {
        switch (c) {
        case 'o': output = optarg; break;
        case 'j': opt.threads = atoi(optarg); break;
        case 'v': opt.verbose = 1; break;
        case 'P': opt.no_patterns = 1; break;
        case 'S': opt.no_scan = 1; break;
        case 'm': {
            char *eq = strchr(optarg, '=');
            if (!eq || eq == optarg || n_meta == 32) {
                return cli_usage_error(inventory_usage, "--meta wants KEY=VALUE (at most 32)");
            }
            *eq = 0;
            for (size_t i = 0; i < n_meta; i++)
                if (!strcmp(meta[i].key, optarg)) {
                    return cli_usage_error(inventory_usage, "--meta key '%s' given twice", optarg);
                }
            meta[n_meta++] = (struct kinv_meta){ optarg, eq + 1 };
            break;
        }
        case 'h': usage(stdout); return 0;
        default: return cli_bad_option(inventory_usage, c == ':', argv[optind - 1]);
        }
    }
    if (optind >= argc) {
        return cli_usage_error(inventory_usage, "inventory build needs at least one library or directory");
    }
    opt.stats = stderr;
    qsort(meta, n_meta, sizeof(meta[0]), meta_cmp);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    struct kinv_inventory *inv;
    struct kinv_err err;
    if (kinv_build((const char *const *)argv + optind, (size_t)(argc - optind), &opt, &inv, NULL, &err)) {
        cli_error("%s", err.msg);
        return 1;
    }
    inv->meta = n_meta ? meta : NULL;
    inv->n_meta = n_meta;
    int rc = kinv_write(inv, output, &err);
    inv->meta = NULL;
    inv->n_meta = 0;
    if (rc) {
        cli_error("%s", err.msg);
        kinv_free(inv);
        return 1;
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    if (opt.verbose) {
        char hex[33];
        kinv_digest_hex(inv->digest, hex);
        fprintf(stderr, "%zu libraries, %zu entries, digest xxh3-128 %s, %.3f s\n", inv->n_libs,
                inv->n_entries, hex, (double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9);
    }
    kinv_free(inv);
    return 0;
}

/* ---- verify -------------------------------------------------------------------- */

static int check_libs;

static int parse_digest_opt(int argc, char **argv, const char **digest)
{
    static const struct option longopts[] = {
        { "digest", required_argument, NULL, 'd' },
        { "libraries", no_argument, NULL, 'L' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    int c;
    optind = 1;
    check_libs = 0;
    while ((c = getopt_long(argc, argv, "+:h", longopts, NULL)) != -1) {
        switch (c) {
        case 'd': *digest = optarg; break;
        case 'L': check_libs = 1; break;
        case 'h': usage(stdout); return 0;
        default: return cli_bad_option(inventory_usage, c == ':', argv[optind - 1]);
        }
    }
    return -1;
}

static int cmd_inventory_verify(int argc, char **argv)
{
    const char *digest = NULL;
    int rc = parse_digest_opt(argc, argv, &digest);
    if (rc >= 0)
        return rc;
    if (argc - optind != 1) {
        return cli_usage_error(inventory_usage, "inventory verify takes one file");
    }
    struct kinv_inventory *inv;
    if (load(argv[optind], digest, &inv))
        return 1;
    struct kinv_err err;
    if (check_libs && kinv_check_libraries(inv, &err)) {
        cli_error("%s", err.msg);
        kinv_free(inv);
        return 1;
    }
    size_t kinds[KINV_KIND_MAX + 1] = { 0 };
    for (size_t i = 0; i < inv->n_entries; i++)
        kinds[inv->entries[i].kind]++;
    char hex[33];
    kinv_digest_hex(inv->digest, hex);
    size_t containers = 0;
    for (size_t i = 0; i < inv->n_modules; i++)
        containers += inv->modules[i].target == 0;
    printf("%s: verified: xxh3-128 %s; %zu libraries%s; %zu entries (cubin %zu, ptx %zu, observed %zu, "
           "pattern %zu); %zu module digests (%zu cubins, %zu fatbin containers)\n", argv[optind], hex,
           inv->n_libs, check_libs ? " (files checked)" : "", inv->n_entries, kinds[KINV_KIND_CUBIN],
           kinds[KINV_KIND_PTX], kinds[KINV_KIND_OBSERVED], kinds[KINV_KIND_PATTERN], inv->n_modules,
           inv->n_modules - containers, containers);
    kinv_free(inv);
    return 0;
}

/* ---- lookup ---------------------------------------------------------------------- */

static int lookup_one(const struct kinv_inventory *inv, const char *name, size_t len)
{
    struct kinv_match m;
    kinv_match(inv, name, len, &m);
    if (m.strength == KINV_MATCH_NONE) {
        printf("%.*s: no match\n", (int)len, name);
        return 1;
    }
    if (m.strength == KINV_MATCH_PATTERN) {
        printf("%.*s: pattern '%.*s' from ", (int)len, name, (int)m.pattern->name_len, m.pattern->name);
        print_libs(stdout, inv, m.pattern);
        printf("\n");
        return 0;
    }
    for (size_t i = 0; i < m.count; i++) {
        const struct kinv_entry *e = &m.first[i];
        printf("%.*s: %s (%s) in ", (int)len, name, e->kind == KINV_KIND_OBSERVED ? "observed" : "exact",
               kinv_kind_name(e->kind));
        print_libs(stdout, inv, e);
        if (e->n_targets) {
            printf("; targets ");
            print_targets(stdout, e);
        }
        printf("\n");
    }
    return 0;
}

static int cmd_lookup(int argc, char **argv)
{
    const char *digest = NULL;
    int rc = parse_digest_opt(argc, argv, &digest);
    if (rc >= 0)
        return rc;
    if (argc - optind < 2) {
        return cli_usage_error(inventory_usage, "inventory lookup takes a file and at least one name");
    }
    struct kinv_inventory *inv;
    if (load(argv[optind], digest, &inv))
        return KAUDIT_EXIT_ERROR;
    int missing = 0;
    for (int i = optind + 1; i < argc; i++) {
        if (strcmp(argv[i], "-")) {
            missing |= lookup_one(inv, argv[i], strlen(argv[i]));
            continue;
        }
        char *line = NULL;
        size_t cap = 0;
        ssize_t n;
        while ((n = getline(&line, &cap, stdin)) > 0) {
            while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r'))
                n--;
            if (n)
                missing |= lookup_one(inv, line, (size_t)n);
        }
        free(line);
    }
    kinv_free(inv);
    return missing ? 1 : 0;
}

/* ---- diff ------------------------------------------------------------------------- */

/* Library of b that corresponds to library i of a (same soname or file name). */
static long counterpart(const struct kinv_inventory *a, size_t i, const struct kinv_inventory *b)
{
    const char *label = lib_label(&a->libs[i]);
    for (size_t k = 0; k < b->n_libs; k++)
        if (!strcmp(lib_label(&b->libs[k]), label))
            return (long)k;
    return -1;
}

static int same_libs(const struct kinv_inventory *a, const struct kinv_entry *x,
                     const struct kinv_inventory *b, const struct kinv_entry *y)
{
    if (x->n_libs != y->n_libs)
        return 0;
    for (uint32_t k = 0; k < x->n_libs; k++)
        if (strcmp(lib_label(&a->libs[x->libs[k]]), lib_label(&b->libs[y->libs[k]])) ||
            x->lib_embedded[k] != y->lib_embedded[k])
            return 0;
    return 1;
}

static void print_entry(char sign, const struct kinv_inventory *inv, const struct kinv_entry *e)
{
    printf("%c %s %.*s [", sign, kinv_kind_name(e->kind), (int)e->name_len, e->name);
    for (uint32_t k = 0; k < e->n_libs; k++)
        printf("%s%s%s", k ? "," : "", lib_label(&inv->libs[e->libs[k]]), e->lib_embedded[k] ? "[embedded]" : "");
    printf("]");
    if (e->n_targets) {
        printf(" ");
        print_targets(stdout, e);
    }
    printf("\n");
}

/* "digest library target[ embedded]" for every module, sorted. */
static char **module_lines(const struct kinv_inventory *inv)
{
    char **v = calloc(inv->n_modules + 1, sizeof(char *));
    for (size_t i = 0; v && i < inv->n_modules; i++) {
        const struct kinv_module *m = &inv->modules[i];
        char hex[33], t[32];
        kinv_digest_hex(m->digest, hex);
        if (kinv_target_format(m->target, t, sizeof(t)) < 0)
            strcpy(t, "?");
        if (asprintf(&v[i], "%s %s %s%s", hex, lib_label(&inv->libs[m->lib]), t,
                     m->embedded ? " [embedded]" : "") < 0)
            v[i] = NULL;
    }
    return v;
}

static int str_cmp(const void *a, const void *b)
{
    const char *x = *(char *const *)a, *y = *(char *const *)b;
    return strcmp(x ? x : "", y ? y : "");
}

static int cmd_diff(int argc, char **argv)
{
    if (argc != 3) {
        return cli_usage_error(inventory_usage, "inventory diff takes two files");
    }
    struct kinv_inventory *a, *b;
    if (load(argv[1], NULL, &a))
        return KAUDIT_EXIT_ERROR;
    if (load(argv[2], NULL, &b)) {
        kinv_free(a);
        return KAUDIT_EXIT_ERROR;
    }
    size_t added = 0, removed = 0, changed = 0, libs_changed = 0;
    for (size_t i = 0; i < a->n_libs; i++) {
        long k = counterpart(a, i, b);
        char h1[33], h2[33];
        kinv_digest_hex(a->libs[i].digest, h1);
        if (k < 0) {
            printf("library - %s (xxh3-128 %s) %s\n", lib_label(&a->libs[i]), h1, a->libs[i].path);
            libs_changed++;
            continue;
        }
        kinv_digest_hex(b->libs[k].digest, h2);
        if (strcmp(h1, h2)) {
            printf("library ~ %s: xxh3-128 %s -> %s\n", lib_label(&a->libs[i]), h1, h2);
            libs_changed++;
        }
    }
    for (size_t k = 0; k < b->n_libs; k++)
        if (counterpart(b, k, a) < 0) {
            char h[33];
            kinv_digest_hex(b->libs[k].digest, h);
            printf("library + %s (xxh3-128 %s) %s\n", lib_label(&b->libs[k]), h, b->libs[k].path);
            libs_changed++;
        }
    size_t i = 0, k = 0;
    while (i < a->n_entries || k < b->n_entries) {
        int c = i == a->n_entries ? 1 : k == b->n_entries ? -1
              : kinv_entry_cmp(&a->entries[i], &b->entries[k]);
        if (c < 0) {
            print_entry('-', a, &a->entries[i++]);
            removed++;
        } else if (c > 0) {
            print_entry('+', b, &b->entries[k++]);
            added++;
        } else {
            const struct kinv_entry *x = &a->entries[i++], *y = &b->entries[k++];
            if (!same_libs(a, x, b, y) || x->n_targets != y->n_targets ||
                memcmp(x->targets, y->targets, x->n_targets * sizeof(uint32_t))) {
                print_entry('<', a, x);
                print_entry('>', b, y);
                changed++;
            }
        }
    }
    /* cubin modules, compared by digest, library name and target */
    size_t mod_added = 0, mod_removed = 0;
    char **ma = module_lines(a), **mb = module_lines(b);
    if (!ma || !mb) {
        cli_error("out of memory");
        return KAUDIT_EXIT_ERROR;
    }
    qsort(ma, a->n_modules, sizeof(char *), str_cmp);
    qsort(mb, b->n_modules, sizeof(char *), str_cmp);
    for (size_t x = 0, y = 0; x < a->n_modules || y < b->n_modules;) {
        int c = x == a->n_modules ? 1 : y == b->n_modules ? -1 : str_cmp(&ma[x], &mb[y]);
        if (c < 0) {
            printf("module - %s\n", ma[x++]);
            mod_removed++;
        } else if (c > 0) {
            printf("module + %s\n", mb[y++]);
            mod_added++;
        } else {
            x++;
            y++;
        }
    }
    for (size_t x = 0; x < a->n_modules; x++)
        free(ma[x]);
    for (size_t y = 0; y < b->n_modules; y++)
        free(mb[y]);
    free(ma);
    free(mb);
    printf("%zu entries added, %zu removed, %zu changed; %zu modules added, %zu removed; "
           "%zu libraries changed\n", added, removed, changed, mod_added, mod_removed, libs_changed);
    kinv_free(a);
    kinv_free(b);
    return added || removed || changed || libs_changed || mod_added || mod_removed ? 1 : 0;
}

/* ---- stats and names ----------------------------------------------------------- */

static int cmd_stats(int argc, char **argv)
{
    if (argc != 2) {
        return cli_usage_error(inventory_usage, "inventory stats takes one file");
    }
    struct kinv_inventory *inv;
    if (load(argv[1], NULL, &inv))
        return KAUDIT_EXIT_ERROR;
    char hex[33];
    kinv_digest_hex(inv->digest, hex);
    printf("inventory %s (xxh3-128 %s)\n", argv[1], hex);
    printf("%-40s %12s %8s %8s %8s %8s  %s\n", "library", "bytes", "cubin", "ptx", "observed",
           "pattern", "xxh3-128");
    size_t *counts = calloc(inv->n_libs * (KINV_KIND_MAX + 1) + 1, sizeof(size_t));
    if (!counts) {
        kinv_free(inv);
        return KAUDIT_EXIT_ERROR;
    }
    for (size_t i = 0; i < inv->n_entries; i++)
        for (uint32_t k = 0; k < inv->entries[i].n_libs; k++)
            counts[inv->entries[i].libs[k] * (KINV_KIND_MAX + 1) + inv->entries[i].kind]++;
    for (size_t l = 0; l < inv->n_libs; l++) {
        size_t *c = &counts[l * (KINV_KIND_MAX + 1)];
        kinv_digest_hex(inv->libs[l].digest, hex);
        printf("%-40s %12llu %8zu %8zu %8zu %8zu  %s\n", lib_label(&inv->libs[l]),
               (unsigned long long)inv->libs[l].size, c[KINV_KIND_CUBIN], c[KINV_KIND_PTX],
               c[KINV_KIND_OBSERVED], c[KINV_KIND_PATTERN], hex);
    }
    size_t kinds[KINV_KIND_MAX + 1] = { 0 }, names = 0;
    for (size_t i = 0; i < inv->n_entries; i++) {
        const struct kinv_entry *e = &inv->entries[i];
        kinds[e->kind]++;
        if (e->kind != KINV_KIND_PATTERN && (i == 0 || e[-1].name_len != e->name_len ||
                                             memcmp(e[-1].name, e->name, e->name_len)))
            names++;
    }
    printf("%-40s %12s %8zu %8zu %8zu %8zu\n", "distinct (all libraries)", "", kinds[KINV_KIND_CUBIN],
           kinds[KINV_KIND_PTX], kinds[KINV_KIND_OBSERVED], kinds[KINV_KIND_PATTERN]);
    printf("distinct names (cubin, ptx, observed together): %zu\n", names);
    free(counts);
    kinv_free(inv);
    return 0;
}

static int cmd_names(int argc, char **argv)
{
    static const struct option longopts[] = {
        { "kind", required_argument, NULL, 'k' },
        { "library", required_argument, NULL, 'l' },
        { "fatbin-only", no_argument, NULL, 'f' },
        { NULL, 0, NULL, 0 },
    };
    unsigned kind = 0;
    int fatbin_only = 0;
    const char *library = NULL;
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "+:", longopts, NULL)) != -1) {
        switch (c) {
        case 'k':
            kind = kinv_kind_parse(optarg);
            if (!kind) {
                return cli_usage_error(inventory_usage, "unknown kind '%s'", optarg);
            }
            break;
        case 'l': library = optarg; break;
        case 'f': fatbin_only = 1; break;
        default: return cli_bad_option(inventory_usage, c == ':', argv[optind - 1]);
        }
    }
    if (argc - optind != 1) {
        return cli_usage_error(inventory_usage, "inventory names takes one file");
    }
    struct kinv_inventory *inv;
    if (load(argv[optind], NULL, &inv))
        return KAUDIT_EXIT_ERROR;
    long lib = -1;
    if (library && (lib = kinv_find_library(inv, library)) < 0) {
        cli_error("no library '%s' in '%s'", library, argv[optind]);
        kinv_free(inv);
        return KAUDIT_EXIT_USAGE;
    }
    const struct kinv_entry *prev = NULL;
    for (size_t i = 0; i < inv->n_entries; i++) {
        const struct kinv_entry *e = &inv->entries[i];
        if (kind && e->kind != kind)
            continue;
        if (lib >= 0 || fatbin_only) {
            int found = 0;
            for (uint32_t k = 0; k < e->n_libs; k++)
                found |= (lib < 0 || e->libs[k] == (uint32_t)lib) && !(fatbin_only && e->lib_embedded[k]);
            if (!found)
                continue;
        }
        if (prev && prev->name_len == e->name_len && !memcmp(prev->name, e->name, e->name_len))
            continue;       /* one line per name */
        fwrite(e->name, 1, e->name_len, stdout);
        putchar('\n');
        prev = e;
    }
    kinv_free(inv);
    return 0;
}

/* ---- calibrate ------------------------------------------------------------------- */

static int cmd_calibrate(int argc, char **argv)
{
    static const struct option longopts[] = {
        { "output", required_argument, NULL, 'o' },
        { "allow-other-build", no_argument, NULL, 'A' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    struct kinv_calibrate_options opt = { 0 };
    const char *output = "-";
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "+:o:h", longopts, NULL)) != -1) {
        switch (c) {
        case 'o': output = optarg; break;
        case 'A': opt.allow_other_build = 1; break;
        case 'h': usage(stdout); return 0;
        default: return cli_bad_option(inventory_usage, c == ':', argv[optind - 1]);
        }
    }
    if (argc - optind < 2) {
        return cli_usage_error(inventory_usage, "inventory calibrate takes an inventory and at least one session directory");
    }
    struct kinv_inventory *inv;
    if (load(argv[optind], NULL, &inv))
        return KAUDIT_EXIT_ERROR;
    struct kinv_calibrate_report rep;
    struct kinv_err err;
    if (kinv_calibrate(inv, (const char *const *)argv + optind + 1, (size_t)(argc - optind - 1), &opt,
                       &rep, &err) ||
        kinv_write(inv, output, &err)) {
        cli_error("%s", err.msg);
        kinv_free(inv);
        return 1;
    }
    /* the report goes where the inventory does not */
    FILE *out = strcmp(output, "-") ? stdout : stderr;
    char hex[33];
    kinv_digest_hex(inv->digest, hex);
    fprintf(out, "calibrated from %zu session%s (%zu traces%s): %zu kernels, %zu outside vendor windows, "
            "%zu attributed to an outer call of another library\n", rep.sessions,
            rep.sessions == 1 ? "" : "s", rep.traces,
            rep.truncated_traces ? ", some truncated" : "", rep.kernels, rep.outside, rep.outer_call);
    fprintf(out, "%-9s %8s %6s %6s %13s %16s %14s %14s\n", "library", "launches", "names", "added",
            "already-exact", "already-observed", "pattern-before", "unknown-before");
    for (unsigned w = 0; w < KINV_WIN_COUNT; w++) {
        const struct kinv_calibrate_counts *k = &rep.lib[w];
        fprintf(out, "%-9s %8zu %6zu %6zu %13zu %16zu %14zu %14zu\n", kinv_window_library_name(w),
                k->launches, k->names, k->added, k->already_exact, k->already_observed,
                k->pattern_before, k->unknown_before);
    }
    fprintf(out, "%zu libraries added; wrote %s: %zu entries, xxh3-128 %s\n", rep.libraries_added,
            strcmp(output, "-") ? output : "standard output", inv->n_entries, hex);
    kinv_free(inv);
    if (fflush(out)) {
        cli_error("cannot write the report");
        return 1;
    }
    return 0;
}

int cmd_inventory(int argc, char **argv)
{
    if (argc < 2)
        return cli_usage_error(inventory_usage, "inventory needs a command (build, verify, lookup, diff, "
                               "stats, names, calibrate)");
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
        usage(stdout);
        return KAUDIT_EXIT_OK;
    }
    const char *sub = argv[1];
    argc--;
    argv++;
    if (!strcmp(sub, "build"))
        return cmd_build(argc, argv);
    if (!strcmp(sub, "verify"))
        return cmd_inventory_verify(argc, argv);
    if (!strcmp(sub, "lookup"))
        return cmd_lookup(argc, argv);
    if (!strcmp(sub, "diff"))
        return cmd_diff(argc, argv);
    if (!strcmp(sub, "stats"))
        return cmd_stats(argc, argv);
    if (!strcmp(sub, "names"))
        return cmd_names(argc, argv);
    if (!strcmp(sub, "calibrate"))
        return cmd_calibrate(argc, argv);
    return cli_usage_error(inventory_usage, "unknown inventory command '%s'", sub);
}
