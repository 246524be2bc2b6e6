/* build_store.c - a candidate's builds kept for its next audit (build_store.h). */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <xxhash.h>

#include "build_store.h"
#include "run_protect.h"
#include "safe_file.h"

/* What of the private cache an entry holds: the trees whose builds are
 * worth keeping (PyTorch's extensions, Triton's kernels). */
static const char *const kept_trees[] = { "torch_extensions", "triton" };
#define CANDIDATE_MAX_BYTES (64u << 20)
#define WALK_MAX_DEPTH 32
#define WALK_MAX_ENTRIES 20000 /* files and folders, those left out too: a build has tens */
/* what an entry costs the store's filesystem: its bytes in 4 KiB blocks, and a block for its inode */
#define BLOCK 4096ULL
#define COST(bytes) ((((unsigned long long)(bytes) + BLOCK - 1) / BLOCK) * BLOCK + BLOCK)

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

const char *build_store_state_name(enum build_store_state state)
{
    switch (state) {
    case BUILD_STORE_OFF: return "off";
    case BUILD_STORE_UNAVAILABLE: return "unavailable";
    case BUILD_STORE_MISS: return "miss";
    case BUILD_STORE_HIT: return "hit";
    }
    return "unknown";
}

int build_store_bound(const struct build_store *s)
{
    return s->state == BUILD_STORE_MISS || s->state == BUILD_STORE_HIT;
}

static void unavailable(struct build_store *s, const char *why)
{
    s->state = BUILD_STORE_UNAVAILABLE;
    snprintf(s->note, sizeof s->note, "%s", why);
}

/* The whole regular file, at most max bytes, never through a link (safe_file.h);
 * NULL when it cannot be read or is larger. */
static char *slurp(const char *path, size_t max, size_t *len)
{
    char *data = NULL, err[PATH_MAX + 100];
    return kat_read_input(path, KAT_SAFE_NOFOLLOW, max, &data, len, err, sizeof err) == 0 ? data : NULL;
}

/* A directory only this user may enter, made when missing: 0, or -1 with why. */
static int private_dir(const char *path, mode_t mode, char *why, size_t n)
{
    char parent[PATH_MAX];
    snprintf(parent, sizeof parent, "%s", path);
    for (char *slash = parent + 1; (slash = strchr(slash, '/')); slash++) {
        *slash = '\0';
        if (mkdir(parent, 0755) != 0 && errno != EEXIST)
            return snprintf(why, n, "cannot make '%s': %s", parent, strerror(errno)), -1;
        *slash = '/';
    }
    if (mkdir(path, mode) != 0 && errno != EEXIST)
        return snprintf(why, n, "cannot make '%s': %s", path, strerror(errno)), -1;
    struct stat st;
    if (lstat(path, &st) != 0)
        return snprintf(why, n, "cannot read '%s': %s", path, strerror(errno)), -1;
    /* another user's folder, or one others may write to, could be swapped under us */
    if (!S_ISDIR(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 022))
        return snprintf(why, n, "'%s' is not a folder of this user's that only it may write to", path), -1;
    return 0;
}

void build_store_open(struct build_store *s, const char *option, const char *candidate, const char *device,
                      const char *python)
{
    memset(s, 0, sizeof *s);
    s->max_bytes = BUILD_STORE_MAX_BYTES;
    snprintf(s->candidate, sizeof s->candidate, "%s", candidate);
    if (option && !strcmp(option, "off")) {
        s->state = BUILD_STORE_OFF;
        snprintf(s->note, sizeof s->note, "--build-store off");
        return;
    }
    if (option && *option) {
        snprintf(s->dir, sizeof s->dir, "%s", option);
    } else {
        const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
        if (xdg && xdg[0] == '/')
            snprintf(s->dir, sizeof s->dir, "%s/kaudit/builds", xdg);
        else if (home && home[0] == '/')
            snprintf(s->dir, sizeof s->dir, "%s/.cache/kaudit/builds", home);
        else
            return unavailable(s, "no store: neither XDG_CACHE_HOME nor HOME is an absolute path");
    }
    char why[PATH_MAX + 100];
    if (private_dir(s->dir, 0700, why, sizeof why) != 0)
        return unavailable(s, why);
    /* the fixed path: one for every audit of this user on this machine */
    char tmp[PATH_MAX];
    if (!realpath("/tmp", tmp))
        return unavailable(s, "no /tmp to hold the fixed path of the build caches");
    snprintf(s->at, sizeof s->at, "%.4000s/kaudit-build-%u", tmp, (unsigned)geteuid());
    if (private_dir(s->at, 0755, why, sizeof why) != 0)
        return unavailable(s, why);
    /* what the build depends on beside the candidate's bytes (kaudit's version:
       its runner and its paths may change how a build is laid out) */
    snprintf(s->material, sizeof s->material, "kaudit build store 1\nkaudit %s\ndevice %s\npython %s\nat %s\n",
             KAUDIT_VERSION, device, python, s->at);
    /* read once: the entry's name, the match and the entry's copy are of the same bytes */
    size_t len;
    char *bytes = slurp(candidate, CANDIDATE_MAX_BYTES, &len);
    if (!bytes)
        return unavailable(s, "the candidate could not be read whole for its entry's name");
    XXH3_state_t *h = XXH3_createState();
    if (!h) {
        free(bytes);
        return unavailable(s, "out of memory");
    }
    XXH3_128bits_reset(h);
    XXH3_128bits_update(h, s->material, strlen(s->material));
    XXH3_128bits_update(h, bytes, len);
    XXH128_hash_t d = XXH3_128bits_digest(h);
    XXH3_freeState(h);
    s->bytes = bytes;
    s->len = len;
    snprintf(s->key, sizeof s->key, "%016llx%016llx", (unsigned long long)d.high64, (unsigned long long)d.low64);
    s->state = BUILD_STORE_MISS;
}

/* ---- copying a tree ------------------------------------------------------ */

struct walk {
    uid_t owner;              /* > 0: only what this uid owns */
    unsigned long long bytes, files, skipped, max_bytes;
    unsigned long long cost;  /* COST of each file and folder: what max_bytes bounds */
    char err[PATH_MAX + 100];
};

/* Exactly size bytes (the size looked at, not what a file growing meanwhile
 * has): 0, or -1 when the file ended sooner or could not be read or written. */
static int copy_bytes(int from, int to, unsigned long long size, unsigned long long *bytes)
{
    char buf[1 << 16];
    for (unsigned long long left = size; left;) {
        ssize_t r = read(from, buf, left < sizeof buf ? (size_t)left : sizeof buf);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return -1;
        left -= (unsigned long long)r;
        for (ssize_t w = 0; w < r;) {
            ssize_t k = write(to, buf + w, (size_t)(r - w));
            if (k < 0 && errno == EINTR)
                continue;
            if (k <= 0)
                return -1;
            w += k;
        }
        *bytes += (unsigned long long)r;
    }
    return 0;
}

/* Whether what st describes may be copied: regular files and folders of
 * the owner, a file with no other name, and never PyTorch's build lock. */
static int wanted(const struct walk *w, const char *name, const struct stat *st)
{
    if ((w->owner > 0 && st->st_uid != w->owner) || !strcmp(name, "lock"))
        return 0;
    if (S_ISDIR(st->st_mode))
        return 1;
    return S_ISREG(st->st_mode) && st->st_nlink == 1;
}

static int copy_tree(int from, int to, struct walk *w, int depth);

static int copy_entry(int from, int to, const char *name, struct walk *w, int depth)
{
    struct stat st;
    if (fstatat(from, name, &st, AT_SYMLINK_NOFOLLOW) != 0)
        return snprintf(w->err, sizeof w->err, "cannot read '%s': %s", name, strerror(errno)), -1;
    if (w->files + w->skipped >= WALK_MAX_ENTRIES)
        return snprintf(w->err, sizeof w->err, "more than %d files and folders", WALK_MAX_ENTRIES), -1;
    if (!wanted(w, name, &st)) {
        w->skipped++;
        return 0;
    }
    w->files++;
    w->cost += COST(S_ISDIR(st.st_mode) ? 0 : st.st_size);
    if (w->cost > w->max_bytes)
        return snprintf(w->err, sizeof w->err, "more than %llu bytes", w->max_bytes), -1;
    int in = openat(from, name, (S_ISDIR(st.st_mode) ? O_DIRECTORY : O_NONBLOCK) | O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    struct stat again;
    /* the thing opened must be the thing looked at */
    if (in < 0 || fstat(in, &again) != 0 || again.st_ino != st.st_ino || again.st_dev != st.st_dev) {
        snprintf(w->err, sizeof w->err, "cannot open '%s': %s", name, in < 0 ? strerror(errno) : "it changed");
        if (in >= 0)
            close(in);
        return -1;
    }
    int rc = -1, out = -1;
    if (S_ISDIR(st.st_mode)) {
        if (depth >= WALK_MAX_DEPTH) {
            snprintf(w->err, sizeof w->err, "folders deeper than %d", WALK_MAX_DEPTH);
        } else if ((mkdirat(to, name, 0755) != 0 && errno != EEXIST) ||
                   (out = openat(to, name, O_DIRECTORY | O_RDONLY | O_NOFOLLOW | O_CLOEXEC)) < 0) {
            snprintf(w->err, sizeof w->err, "cannot make '%s': %s", name, strerror(errno));
        } else {
            rc = copy_tree(in, out, w, depth + 1);
        }
    } else if ((out = openat(to, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                             0644 | (st.st_mode & 0111))) < 0) {
        snprintf(w->err, sizeof w->err, "cannot make '%s': %s", name, strerror(errno));
    } else if ((errno = 0, copy_bytes(in, out, (unsigned long long)st.st_size, &w->bytes)) != 0) {
        snprintf(w->err, sizeof w->err, "cannot copy '%s': %s", name, errno ? strerror(errno) : "it shrank");
    } else if (fstat(in, &again) != 0 || again.st_size != st.st_size ||
               again.st_mtim.tv_sec != st.st_mtim.tv_sec || again.st_mtim.tv_nsec != st.st_mtim.tv_nsec) {
        /* written while copied: whatever did it, the copy is not the file */
        snprintf(w->err, sizeof w->err, "'%s' changed while it was copied", name);
    } else {
        rc = 0;
    }
    /* ninja and make compare times: the copy keeps the original's */
    struct timespec times[2] = { st.st_atim, st.st_mtim };
    if (rc == 0 && futimens(out, times) != 0) {
        snprintf(w->err, sizeof w->err, "cannot keep the times of '%s': %s", name, strerror(errno));
        rc = -1;
    }
    if (out >= 0)
        close(out);
    close(in);
    return rc;
}

static int copy_tree(int from, int to, struct walk *w, int depth)
{
    int fd = dup(from);
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
    if (!d) {
        if (fd >= 0)
            close(fd);
        return snprintf(w->err, sizeof w->err, "cannot list a folder: %s", strerror(errno)), -1;
    }
    int rc = 0;
    struct dirent *e;
    while (rc == 0 && (e = readdir(d)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
            rc = copy_entry(from, to, e->d_name, w, depth);
    closedir(d);
    return rc;
}

/* The kept trees of folder from, copied into folder to (made). */
static int copy_kept_trees(const char *from, const char *to, struct walk *w)
{
    int in = open(from, O_DIRECTORY | O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (in < 0)
        return snprintf(w->err, sizeof w->err, "cannot open '%s': %s", from, strerror(errno)), -1;
    int out = -1, rc = -1;
    if (mkdir(to, 0700) != 0 || (out = open(to, O_DIRECTORY | O_RDONLY | O_NOFOLLOW | O_CLOEXEC)) < 0) {
        snprintf(w->err, sizeof w->err, "cannot make '%s': %s", to, strerror(errno));
    } else {
        rc = 0;
        for (size_t i = 0; rc == 0 && i < sizeof kept_trees / sizeof kept_trees[0]; i++) {
            struct stat st;
            if (fstatat(in, kept_trees[i], &st, AT_SYMLINK_NOFOLLOW) == 0)
                rc = copy_entry(in, out, kept_trees[i], w, 0);
        }
    }
    if (out >= 0)
        close(out);
    close(in);
    return rc;
}

/* ---- the entry ------------------------------------------------------------- */

/* Whether the entry at path is this candidate's: its material and its copy of the candidate, byte for byte. */
static int entry_matches(const struct build_store *s, const char *path, char *why, size_t n)
{
    char file[PATH_MAX + 32];
    size_t len, clen;
    snprintf(file, sizeof file, "%s/material", path);
    char *material = slurp(file, 1 << 16, &len);
    snprintf(file, sizeof file, "%s/candidate", path);
    char *theirs = slurp(file, CANDIDATE_MAX_BYTES, &clen);
    int same = material && theirs && !strcmp(material, s->material) && clen == s->len &&
               !memcmp(theirs, s->bytes, s->len);
    if (!same)
        snprintf(why, n, "the entry %s is not this candidate's (a different candidate or build under the same "
                         "name, or one unreadable): built cold and not replaced", s->key);
    free(material);
    free(theirs);
    return same;
}

/* cache's kept trees replaced by those of staging (each renamed whole). */
static int adopt_trees(const char *staging, const char *cache, char *why, size_t n)
{
    for (size_t i = 0; i < sizeof kept_trees / sizeof kept_trees[0]; i++) {
        char from[PATH_MAX + 128], to[PATH_MAX + 128];
        snprintf(from, sizeof from, "%s/%s", staging, kept_trees[i]);
        snprintf(to, sizeof to, "%s/%s", cache, kept_trees[i]);
        struct stat st;
        if (lstat(from, &st) != 0)
            continue;
        if (rmdir(to) != 0 && errno != ENOENT)
            return snprintf(why, n, "cannot replace '%s': %s", to, strerror(errno)), -1;
        if (rename(from, to) != 0)
            return snprintf(why, n, "cannot move '%s' into place: %s", from, strerror(errno)), -1;
    }
    return 0;
}

void build_store_fill(struct build_store *s, const char *cache)
{
    if (s->state != BUILD_STORE_MISS)
        return;
    char why[PATH_MAX + 300];
    if (!run_protect_can_bind(cache, s->at, why, sizeof why)) {
        char said[sizeof s->note];
        snprintf(said, sizeof said, "the worker cannot see its cache at one fixed path: %.4000s", why);
        return unavailable(s, said);
    }
    char entry[PATH_MAX + 64], staging[PATH_MAX + 64];
    snprintf(entry, sizeof entry, "%s/%s", s->dir, s->key);
    struct stat st;
    if (lstat(entry, &st) != 0) {
        snprintf(s->note, sizeof s->note, "no entry for this candidate");
        return;
    }
    s->entry_there = 1; /* used or not (another candidate's, not whole), never replaced */
    if (!entry_matches(s, entry, s->note, sizeof s->note))
        return;
    double t0 = now_s();
    snprintf(staging, sizeof staging, "%s.store-in", cache);
    kat_remove_tree(staging);
    char trees[PATH_MAX + 80];
    snprintf(trees, sizeof trees, "%s/cache", entry);
    struct walk w = { .max_bytes = BUILD_STORE_ENTRY_MAX_BYTES };
    int rc = copy_kept_trees(trees, staging, &w);
    /* an entry is removed only after it is renamed away: still under its
       name after the copy, it was whole during it */
    struct stat after;
    if (rc == 0 && (lstat(entry, &after) != 0 || after.st_ino != st.st_ino || after.st_dev != st.st_dev)) {
        snprintf(w.err, sizeof w.err, "the entry went while it was copied");
        rc = -1;
    }
    if (rc != 0 || adopt_trees(staging, cache, w.err, sizeof w.err) != 0) {
        snprintf(s->note, sizeof s->note, "the entry %s could not be copied in (%s): built cold", s->key, w.err);
        kat_remove_tree(staging);
        return;
    }
    kat_remove_tree(staging);
    utimensat(AT_FDCWD, entry, NULL, 0); /* used now: the last to go */
    s->state = BUILD_STORE_HIT;
    s->in_bytes = w.bytes;
    s->in_files = w.files;
    s->in_s = now_s() - t0;
    s->note[0] = '\0';
}

/* ---- keeping, and making room ------------------------------------------------ */

static int write_text(const char *path, const char *text, size_t len)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0)
        return -1;
    int rc = kat_write_all(fd, text, len);
    return close(fd) != 0 ? -1 : rc;
}

struct kept_entry {
    char name[64];
    time_t used;
    unsigned long long bytes;
};

static int oldest_first(const void *a, const void *b)
{
    const struct kept_entry *x = a, *y = b;
    return (x->used > y->used) - (x->used < y->used);
}

/* What a kaudit killed while keeping or evicting left: an entry being
 * removed (.gone-*), or being made by a process that is gone (.new-PID). */
static void forget_abandoned(const struct build_store *s, const char *name)
{
    long pid;
    char *end;
    int gone = !strncmp(name, ".gone-", 6);
    if (!gone && !strncmp(name, ".new-", 5) && (pid = strtol(name + 5, &end, 10)) > 0 && !*end)
        gone = kill((pid_t)pid, 0) != 0 && errno == ESRCH;
    if (!gone)
        return;
    char path[PATH_MAX + 300];
    snprintf(path, sizeof path, "%s/%s", s->dir, name);
    kat_remove_tree(path);
}

/* The entries used longest ago removed until the store fits its size (never the one just kept). */
static void make_room(struct build_store *s)
{
    DIR *d = opendir(s->dir);
    if (!d)
        return;
    struct kept_entry *all = NULL;
    size_t n = 0, cap = 0;
    unsigned long long total = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.') {
            forget_abandoned(s, e->d_name);
            continue;
        }
        if (strlen(e->d_name) >= sizeof all->name)
            continue;
        char path[PATH_MAX + 300];
        snprintf(path, sizeof path, "%s/%s/size", s->dir, e->d_name);
        size_t len;
        char *text = slurp(path, 64, &len);
        struct stat st;
        snprintf(path, sizeof path, "%s/%s", s->dir, e->d_name);
        if (!text || lstat(path, &st) != 0) {
            free(text);
            continue;
        }
        if (n == cap) {
            struct kept_entry *more = realloc(all, (cap = cap ? 2 * cap : 64) * sizeof *all);
            if (!more) {
                free(text);
                break;
            }
            all = more;
        }
        snprintf(all[n].name, sizeof all[n].name, "%.63s", e->d_name);
        all[n].used = st.st_mtime;
        all[n].bytes = strtoull(text, NULL, 10);
        total += all[n++].bytes;
        free(text);
    }
    closedir(d);
    qsort(all, n, sizeof *all, oldest_first);
    for (size_t i = 0; i < n && total > s->max_bytes; i++) {
        if (!strcmp(all[i].name, s->key))
            continue;
        char path[PATH_MAX + 80], gone[PATH_MAX + 100];
        snprintf(path, sizeof path, "%s/%s", s->dir, all[i].name);
        /* renamed first: an audit copying it in sees it whole or not at all */
        snprintf(gone, sizeof gone, "%s/.gone-%ld-%zu", s->dir, (long)getpid(), i);
        if (rename(path, gone) == 0) {
            kat_remove_tree(gone);
            total -= all[i].bytes;
            s->evicted++;
        }
    }
    free(all);
}

/* A process running as uid (its real, effective, saved or file-system uid),
 * or 0 when there is none. */
static pid_t process_of(uid_t uid)
{
    DIR *d = opendir("/proc");
    if (!d)
        return 0;
    pid_t found = 0;
    struct dirent *e;
    while (!found && (e = readdir(d))) {
        long pid = strtol(e->d_name, NULL, 10);
        if (pid <= 0)
            continue;
        char path[64], line[256];
        snprintf(path, sizeof path, "/proc/%ld/status", pid);
        FILE *f = fopen(path, "re");
        if (!f)
            continue;
        while (fgets(line, sizeof line, f)) {
            unsigned long ids[4];
            if (sscanf(line, "Uid: %lu %lu %lu %lu", &ids[0], &ids[1], &ids[2], &ids[3]) == 4) {
                for (int i = 0; i < 4; i++)
                    if (ids[i] == (unsigned long)uid)
                        found = (pid_t)pid;
                break;
            }
        }
        fclose(f);
    }
    closedir(d);
    return found;
}

void build_store_keep(struct build_store *s, const char *cache, uid_t worker_uid, int ended_cleanly)
{
    if (s->state != BUILD_STORE_MISS) {
        snprintf(s->keep_note, sizeof s->keep_note, "%s",
                 s->state == BUILD_STORE_HIT ? "an entry is filled once: this audit used it" : "no store");
        return;
    }
    if (!ended_cleanly) {
        snprintf(s->keep_note, sizeof s->keep_note, "the worker did not end cleanly: its builds may be partial");
        return;
    }
    pid_t left = worker_uid > 0 ? process_of(worker_uid) : 0;
    if (left > 0) {
        /* it could change the files while they are copied */
        snprintf(s->keep_note, sizeof s->keep_note, "a process of the worker's uid (pid %d) outlived it: not kept",
                 (int)left);
        return;
    }
    if (s->entry_there) {
        snprintf(s->keep_note, sizeof s->keep_note, "an entry of that name is there already");
        return;
    }
    double t0 = now_s();
    char staging[PATH_MAX + 80], entry[PATH_MAX + 64], path[PATH_MAX + 96];
    snprintf(staging, sizeof staging, "%s/.new-%ld", s->dir, (long)getpid());
    snprintf(entry, sizeof entry, "%s/%s", s->dir, s->key);
    kat_remove_tree(staging);
    if (mkdir(staging, 0700) != 0) {
        snprintf(s->keep_note, sizeof s->keep_note, "cannot make '%s': %s", staging, strerror(errno));
        return;
    }
    struct walk w = { .owner = worker_uid, .max_bytes = BUILD_STORE_ENTRY_MAX_BYTES };
    char size[32];
    snprintf(path, sizeof path, "%s/cache", staging);
    int rc = copy_kept_trees(cache, path, &w);
    if (rc == 0 && w.bytes == 0) {
        snprintf(s->keep_note, sizeof s->keep_note, "nothing built: no entry made");
        rc = 1;
    }
    if (rc == 0) {
        snprintf(path, sizeof path, "%s/candidate", staging);
        rc = write_text(path, s->bytes, s->len);
        snprintf(path, sizeof path, "%s/material", staging);
        rc |= write_text(path, s->material, strlen(s->material));
        snprintf(size, sizeof size, "%llu\n", w.cost + COST(s->len) + 3 * COST(0));
        snprintf(path, sizeof path, "%s/size", staging);
        rc |= write_text(path, size, strlen(size));
        if (rc != 0)
            snprintf(w.err, sizeof w.err, "cannot write the entry's files: %s", strerror(errno));
    }
    /* whole or not at all; the first audit to finish keeps its builds */
    if (rc == 0 && rename(staging, entry) != 0) {
        snprintf(s->keep_note, sizeof s->keep_note, "another audit of this candidate kept its builds first");
        rc = 1;
    }
    if (rc != 0) {
        if (rc < 0)
            snprintf(s->keep_note, sizeof s->keep_note, "not kept: %s", w.err);
        kat_remove_tree(staging);
        return;
    }
    s->kept = 1;
    s->kept_bytes = w.bytes;
    s->kept_files = w.files;
    s->skipped = w.skipped;
    make_room(s);
    s->keep_s = now_s() - t0;
}

void build_store_write_json(struct kat_json *j, const struct build_store *s)
{
    kat_json_open(j, "build_store", '{');
    kat_json_str(j, "state", build_store_state_name(s->state));
    if (s->note[0])
        kat_json_str(j, "note", s->note);
    else
        kat_json_null(j, "note");
    if (s->state != BUILD_STORE_OFF && s->dir[0])
        kat_json_str(j, "dir", s->dir);
    else
        kat_json_null(j, "dir");
    if (build_store_bound(s)) {
        kat_json_str(j, "entry", s->key);
        kat_json_str(j, "worker_sees_cache_at", s->at);
    } else {
        kat_json_null(j, "entry");
        kat_json_null(j, "worker_sees_cache_at");
    }
    kat_json_u64(j, "copied_in_bytes", s->in_bytes);
    kat_json_u64(j, "copied_in_files", s->in_files);
    kat_json_double(j, "copy_in_s", s->in_s);
    kat_json_bool(j, "kept", s->kept);
    if (s->kept) {
        kat_json_null(j, "keep_note");
        kat_json_u64(j, "kept_bytes", s->kept_bytes);
        kat_json_u64(j, "kept_files", s->kept_files);
        kat_json_u64(j, "left_out", s->skipped);
        kat_json_u64(j, "evicted_entries", s->evicted);
        kat_json_double(j, "keep_s", s->keep_s);
    } else {
        kat_json_str(j, "keep_note", s->keep_note[0] ? s->keep_note : "not kept");
    }
    kat_json_close(j, '}');
}

void build_store_free(struct build_store *s)
{
    free(s->bytes);
    s->bytes = NULL;
    s->len = 0;
}
