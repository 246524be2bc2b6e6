/* session_seal.c - writing and checking a session's seal (session_seal.h). */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <xxhash.h>

#include "safe_file.h"
#include "session_seal.h"
#include "toolbox.h"

#define SEAL_MAGIC "kaudit-seal 1"

/* Files the seal covers: everything in the directory but the seal itself and
 * what readers write later (analysis.json from analyze --save, and its own seal). */
static int covered(const char *name)
{
    return name[0] != '.' && strcmp(name, KAUDIT_SEAL_FILE) != 0 && strcmp(name, "analysis.json") != 0 &&
           strcmp(name, KAUDIT_ANALYSIS_SEAL_FILE) != 0;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The covered names, sorted. */
static char **list(const char *dir, size_t *n, char *err, size_t en)
{
    DIR *d = opendir(dir);
    if (!d) {
        snprintf(err, en, "cannot read session directory '%s': %s", dir, strerror(errno));
        return NULL;
    }
    char **names = NULL;
    size_t count = 0, cap = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (!covered(e->d_name))
            continue;
        if (count == cap) {
            cap = cap ? 2 * cap : 16;
            char **q = realloc(names, cap * sizeof *q);
            if (!q)
                break;
            names = q;
        }
        names[count++] = strdup(e->d_name);
    }
    closedir(d);
    qsort(names, count, sizeof *names, by_name);
    *n = count;
    if (!names)
        names = calloc(1, sizeof *names);
    return names;
}

static void free_list(char **names, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
}

static void hex128(XXH128_hash_t h, char out[33])
{
    XXH128_canonical_t c;
    XXH128_canonicalFromHash(&c, h);
    kat_hex(c.digest, sizeof c.digest, out);
}

/* "NAME SIZE DIGEST" for one file, read as an input (regular files only, no links). */
static int file_line(const char *dir, const char *name, char *line, size_t ln, char *err, size_t en)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    off_t size = 0;
    int fd = kat_open_input(path, O_NOFOLLOW, &size, err, en);
    if (fd < 0)
        return -1;
    XXH3_state_t *st = XXH3_createState();
    XXH3_128bits_reset(st);
    char buf[1 << 16];
    ssize_t got;
    off_t total = 0;
    while ((got = read(fd, buf, sizeof buf)) > 0) {
        XXH3_128bits_update(st, buf, (size_t)got);
        total += got;
    }
    close(fd);
    char hex[33];
    hex128(XXH3_128bits_digest(st), hex);
    XXH3_freeState(st);
    if (got < 0) {
        snprintf(err, en, "cannot read '%s': %s", path, strerror(errno));
        return -1;
    }
    snprintf(line, ln, "%s %lld %s", name, (long long)total, hex);
    return 0;
}

/* The seal's text for the directory as it is now; chain set.  NULL with err. */
static char *seal_text(const char *dir, char chain[33], char *err, size_t en)
{
    size_t n = 0;
    char **names = list(dir, &n, err, en);
    if (!names)
        return NULL;
    size_t cap = 64 + n * 4200, used = 0;
    char *text = malloc(cap);
    if (!text) {
        free_list(names, n);
        snprintf(err, en, "out of memory");
        return NULL;
    }
    used += (size_t)snprintf(text, cap, "%s\n", SEAL_MAGIC);
    for (size_t i = 0; i < n; i++) {
        char line[4200];
        if (file_line(dir, names[i], line, sizeof line, err, en) != 0) {
            free(text);
            free_list(names, n);
            return NULL;
        }
        used += (size_t)snprintf(text + used, cap - used, "%s\n", line);
    }
    free_list(names, n);
    hex128(XXH3_128bits(text, used), chain);
    snprintf(text + used, cap - used, "chain %s\n", chain);
    return text;
}

/* DIR/NAME, a new file holding text (a planted one is replaced, never followed). */
static int write_seal_file(const char *dir, const char *name, const char *text, char *err, size_t n)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    int fd = kat_open_output(path, O_EXCL, err, n);
    if (fd < 0)
        return -1;
    int bad = kat_write_all(fd, text, strlen(text)) != 0;
    if (close(fd) != 0)
        bad = 1;
    if (bad) {
        snprintf(err, n, "cannot write '%s': %s", path, strerror(errno));
        return -1;
    }
    return 0;
}

int session_seal_write(const char *dir, char chain[33], char *err, size_t n)
{
    char *text = seal_text(dir, chain, err, n);
    if (!text)
        return -1;
    int rc = write_seal_file(dir, KAUDIT_SEAL_FILE, text, err, n);
    free(text);
    return rc;
}

/* The first line in which seal texts a and b differ, each as sa and sb (160 bytes). */
static void first_difference(const char *a, const char *b, char *sa, char *sb)
{
    while (*a && *b) {
        const char *ea = strchr(a, '\n'), *eb = strchr(b, '\n');
        size_t la = ea ? (size_t)(ea - a) : strlen(a), lb = eb ? (size_t)(eb - b) : strlen(b);
        if (la != lb || memcmp(a, b, la) != 0)
            break;
        a += la + (ea != NULL);
        b += lb + (eb != NULL);
    }
    /* past the last file, a side says "chain ...": there is no such file there */
    snprintf(sa, 160, "%.*s", (int)strcspn(a, "\n"), strncmp(a, "chain ", 6) ? a : "");
    snprintf(sb, 160, "%.*s", (int)strcspn(b, "\n"), strncmp(b, "chain ", 6) ? b : "");
    if (!sa[0])
        snprintf(sa, 160, "(no such file)");
    if (!sb[0])
        snprintf(sb, 160, "(no such file)");
}

/* ---- the supervisor's account ------------------------------------------------ */

struct account_file {
    char name[96];
    XXH3_state_t *state;
    unsigned long long size;
    int gone;                    /* removed by kaudit itself */
    int unknown;                 /* a write of kaudit's failed: what the disk holds is sealed */
};

struct seal_account {
    struct account_file *files;
    size_t n, cap;
};

struct seal_account *seal_account_new(void)
{
    return calloc(1, sizeof(struct seal_account));
}

static struct account_file *account_file(struct seal_account *a, const char *name)
{
    for (size_t i = 0; i < a->n; i++)
        if (!strcmp(a->files[i].name, name))
            return &a->files[i];
    if (a->n == a->cap) {
        size_t cap = a->cap ? 2 * a->cap : 16;
        struct account_file *f = realloc(a->files, cap * sizeof *f);
        if (!f)
            return NULL;
        a->files = f;
        a->cap = cap;
    }
    struct account_file *f = &a->files[a->n];
    memset(f, 0, sizeof *f);
    snprintf(f->name, sizeof f->name, "%s", name);
    if (!(f->state = XXH3_createState()))
        return NULL;
    XXH3_128bits_reset(f->state);
    a->n++;
    return f;
}

void seal_account_append(struct seal_account *a, const char *name, const void *bytes, size_t n)
{
    struct account_file *f = a ? account_file(a, name) : NULL;
    if (!f)
        return;
    f->gone = 0;
    if (bytes && n)
        XXH3_128bits_update(f->state, bytes, n);
    f->size += n;
}

void seal_account_replace(struct seal_account *a, const char *name, const void *bytes, size_t n)
{
    struct account_file *f = a ? account_file(a, name) : NULL;
    if (!f)
        return;
    XXH3_128bits_reset(f->state);
    f->size = 0;
    f->unknown = 0;
    seal_account_append(a, name, bytes, n);
}

void seal_account_lost(struct seal_account *a, const char *name)
{
    struct account_file *f = a ? account_file(a, name) : NULL;
    if (f)
        f->unknown = 1;
}

void seal_account_remove(struct seal_account *a, const char *name)
{
    struct account_file *f = a ? account_file(a, name) : NULL;
    if (f)
        f->gone = 1;
}

void seal_account_free(struct seal_account *a)
{
    if (!a)
        return;
    for (size_t i = 0; i < a->n; i++)
        XXH3_freeState(a->files[i].state);
    free(a->files);
    free(a);
}

static int by_account_name(const void *x, const void *y)
{
    return strcmp(((const struct account_file *)x)->name, ((const struct account_file *)y)->name);
}

/* The seal's text from the account (the disk's line for a file whose write failed). */
static char *account_text(const char *dir, struct seal_account *a, char chain[33], char *err, size_t en)
{
    qsort(a->files, a->n, sizeof *a->files, by_account_name);
    size_t cap = 64 + a->n * 4200, used = 0;
    char *text = malloc(cap);
    if (!text) {
        snprintf(err, en, "out of memory");
        return NULL;
    }
    used += (size_t)snprintf(text, cap, "%s\n", SEAL_MAGIC);
    for (size_t i = 0; i < a->n; i++) {
        const struct account_file *f = &a->files[i];
        if (f->gone || !covered(f->name))
            continue;
        char line[4200];
        if (f->unknown) {
            if (file_line(dir, f->name, line, sizeof line, err, en) != 0) {
                free(text);
                return NULL;
            }
        } else {
            char hex[33];
            hex128(XXH3_128bits_digest(f->state), hex);
            snprintf(line, sizeof line, "%s %llu %s", f->name, f->size, hex);
        }
        used += (size_t)snprintf(text + used, cap - used, "%s\n", line);
    }
    hex128(XXH3_128bits(text, used), chain);
    snprintf(text + used, cap - used, "chain %s\n", chain);
    return text;
}

int seal_account_compare(const char *dir, struct seal_account *a, char *changed, size_t cn, char *err, size_t n)
{
    char c1[33], c2[33];
    char *mine = account_text(dir, a, c1, err, n);
    if (!mine)
        return -1;
    char *disk = seal_text(dir, c2, err, n);
    if (!disk) {
        free(mine);
        return -1;
    }
    int rc = 0;
    if (strcmp(mine, disk) != 0) {
        char sa[160], sb[160];
        first_difference(mine, disk, sa, sb);
        snprintf(changed, cn, "kaudit wrote '%s', the directory holds '%s'", sa, sb);
        rc = 1;
    }
    free(mine);
    free(disk);
    return rc;
}

int session_seal_write_account(const char *dir, struct seal_account *a, char chain[33], char *err, size_t n)
{
    char *text = account_text(dir, a, chain, err, n);
    if (!text)
        return -1;
    int rc = write_seal_file(dir, KAUDIT_SEAL_FILE, text, err, n);
    free(text);
    return rc;
}

int session_seal_verify(const char *dir, char chain[33], char *err, size_t n)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, KAUDIT_SEAL_FILE);
    struct stat st;
    if (lstat(path, &st) != 0 && errno == ENOENT) {
        /* a kaudit that seals says so in info before the command runs
         * ("seal: seal"): such a session without its seal lost it */
        char info[4096], *text = NULL, ignored[256];
        size_t len = 0;
        snprintf(info, sizeof info, "%s/info", dir);
        /* ... once the command ended: a recording still "running" was
         * interrupted with kaudit, and one "not started" never sealed;
         * analyze reports both itself */
        int said = kat_read_input(info, O_NOFOLLOW, 1u << 20, &text, &len, ignored, sizeof ignored) == 0 &&
                   strstr(text, "\nseal: " KAUDIT_SEAL_FILE "\n") != NULL && !strstr(text, "\nstatus: running\n") &&
                   !strstr(text, "\nstatus: preparing\n") && !strstr(text, "\nstatus: not started");
        free(text);
        if (!said)
            return 1;
        snprintf(err, n,
                 "session '%s' has lost its seal: its info says kaudit run sealed it, and '%s' is not there (removed "
                 "after the run)",
                 dir, path);
        return -1;
    }
    char *stored = NULL;
    size_t len = 0;
    if (kat_read_input(path, O_NOFOLLOW, 64u << 20, &stored, &len, err, n) != 0)
        return -1;
    char now_chain[33];
    char *now = seal_text(dir, now_chain, err, n);
    if (!now) {
        free(stored);
        return -1;
    }
    int rc = 0;
    if (strncmp(stored, SEAL_MAGIC "\n", strlen(SEAL_MAGIC) + 1) != 0) {
        snprintf(err, n, "'%s' is not a seal this kaudit reads (its first line is not '%s')", path, SEAL_MAGIC);
        rc = -1;
    } else if (strcmp(stored, now) != 0) {
        char sa[160], sb[160];
        first_difference(stored, now, sa, sb);
        snprintf(err, n,
                 "session '%s' does not match its seal: sealed '%s', now '%s' (a file was changed, removed or added "
                 "after kaudit run wrote it)",
                 dir, sa, sb);
        rc = -1;
    } else {
        memcpy(chain, now_chain, 33);
    }
    free(stored);
    free(now);
    return rc;
}

/* "kaudit-analysis-seal 1", "session CHAIN|none", "NAME SIZE DIGEST" */
static int analysis_seal_text(const char *dir, const char *name, char *text, size_t tn, char *err, size_t n)
{
    char chain[33];
    int sealed = session_seal_verify(dir, chain, err, n);
    if (sealed < 0)
        return -1;
    char line[4200];
    if (file_line(dir, name, line, sizeof line, err, n) != 0)
        return -1;
    snprintf(text, tn, "kaudit-analysis-seal 1\nsession %s\n%s\n", sealed == 0 ? chain : "none", line);
    return 0;
}

int session_seal_analysis_write(const char *dir, const char *name, char *err, size_t n)
{
    char text[4400];
    if (analysis_seal_text(dir, name, text, sizeof text, err, n) != 0)
        return -1;
    return write_seal_file(dir, KAUDIT_ANALYSIS_SEAL_FILE, text, err, n);
}

int session_seal_analysis_verify(const char *dir, const char *name, char *err, size_t n)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, KAUDIT_ANALYSIS_SEAL_FILE);
    char *stored = NULL;
    size_t len = 0;
    if (kat_read_input(path, O_NOFOLLOW, 1u << 16, &stored, &len, err, n) != 0) {
        snprintf(err, n, "'%s' has no seal of its own ('%s' is missing or unreadable): it was not written by "
                         "'kaudit analyze --save' of this version, or was planted",
                 name, path);
        return -1;
    }
    char now[4400];
    int rc = analysis_seal_text(dir, name, now, sizeof now, err, n);
    if (rc == 0 && (len != strlen(now) || memcmp(stored, now, len) != 0)) {
        snprintf(err, n, "'%s/%s' does not match its seal (%s): changed or planted after 'kaudit analyze --save', or "
                         "the session changed since",
                 dir, name, KAUDIT_ANALYSIS_SEAL_FILE);
        rc = -1;
    }
    free(stored);
    return rc;
}
