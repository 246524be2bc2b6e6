/* audit_party.c - the candidate's process in the plan and in the record (audit_party.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <glob.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "audit_exec.h"
#include "audit_party.h"
#include "json_writer.h"
#include "toolbox.h"

/* What any process reads: the system's programs, libraries and settings,
 * CUDA, /proc and /sys (the driver), /dev.  Not /tmp, /home, /root, /var,
 * /srv, /mnt or /media, where audits and other users' files live. */
static const char *const system_reads[] = { "/usr", "/lib", "/lib32", "/lib64", "/libx32", "/bin", "/sbin",
                                            "/etc", "/opt", "/proc", "/sys", "/dev", "/run/nvidia-persistenced" };

/* The device files it may open for writing (CUDA, the standard ones, shared memory). */
static const char *const device_writes[] = { "/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom",
                                             "/dev/shm", "/dev/nvidiactl", "/dev/nvidia-uvm",
                                             "/dev/nvidia-uvm-tools", "/dev/nvidia-modeset", "/dev/nvidia-caps" };

int audit_path_holds(const char *dir, const char *path)
{
    size_t n = strlen(dir);
    return strncmp(dir, path, n) == 0 && (path[n] == '/' || path[n] == '\0' || (n == 1 && dir[0] == '/'));
}

int audit_party_dirs(const struct audit_paths *p, char handoff[], char party[], size_t size, char *err, size_t n)
{
    snprintf(handoff, size, "%s/handoff", p->dir);
    snprintf(party, size, "%s/party", p->dir);
    const char *both[] = { handoff, party };
    for (size_t i = 0; i < 2; i++)
        if (mkdir(both[i], 0755) != 0 && errno != EEXIST)
            return kat_fail(err, n, "cannot create '%s': %s", both[i], strerror(errno));
    return 0;
}

/* A file's directory, or the file itself when that directory holds the audit's. */
static void file_or_dir(struct kat_json *j, const char *file, const char *audit_dir)
{
    char copy[PATH_MAX];
    snprintf(copy, sizeof copy, "%s", file);
    const char *dir = dirname(copy);
    kat_json_str(j, NULL, audit_path_holds(dir, audit_dir) ? file : dir);
}

char *audit_party_plan(const struct audit_paths *p, const struct audit_args *a, const char *runner,
                       const char *preload, char *err, size_t n)
{
    const char *const *extra = a->allow_write;
    size_t n_extra = (size_t)a->n_allow_write;
    char self[PATH_MAX];
    ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
    if (len <= 0)
        return kat_fail(err, n, "cannot find kaudit's own executable (/proc/self/exe): %s", strerror(errno)), NULL;
    self[len] = '\0';
    char handoff[PATH_MAX + 16], party[PATH_MAX + 16], cache[PATH_MAX + 16], home[PATH_MAX + 16];
    if (audit_party_dirs(p, handoff, party, sizeof handoff, err, n) != 0)
        return NULL;
    snprintf(cache, sizeof cache, "%s", p->cache_seen[0] ? p->cache_seen : p->cache); /* as the worker sees it */
    snprintf(home, sizeof home, "%s/home", p->dir);
    char *text = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&text, &size);
    if (!f)
        return kat_fail(err, n, "out of memory"), NULL;
    struct kat_json j;
    kat_json_init(&j, f);
    kat_json_open(&j, NULL, '{');
    kat_json_str(&j, "kaudit", self);
    kat_json_str(&j, "handoff_dir", handoff);
    kat_json_str(&j, "out_dir", party);
    kat_json_str(&j, "work_dir", p->work);
    kat_json_open(&j, "read_roots", '[');
    for (size_t i = 0; i < sizeof system_reads / sizeof system_reads[0]; i++)
        kat_json_str(&j, NULL, system_reads[i]);
    file_or_dir(&j, runner, p->dir);
    if (preload)
        file_or_dir(&j, preload, p->dir);
    file_or_dir(&j, p->candidate, p->dir);
    kat_json_str(&j, NULL, p->reference); /* the weak surfaces import it there; the file only */
    kat_json_str(&j, NULL, handoff);
    for (int i = 0; i < a->n_allow_read; i++)
        kat_json_str(&j, NULL, a->allow_read[i]);
    kat_json_close(&j, ']');
    const char *own[] = { p->work, p->tmp, cache, home, party };
    kat_json_open(&j, "write_roots", '[');
    for (size_t i = 0; i < sizeof own / sizeof own[0]; i++)
        kat_json_str(&j, NULL, own[i]);
    for (size_t i = 0; i < n_extra; i++)
        kat_json_str(&j, NULL, extra[i]);
    for (size_t i = 0; i < sizeof device_writes / sizeof device_writes[0]; i++)
        kat_json_str(&j, NULL, device_writes[i]);
    glob_t g;
    if (glob("/dev/nvidia[0-9]*", 0, NULL, &g) == 0) {
        for (size_t i = 0; i < g.gl_pathc; i++)
            kat_json_str(&j, NULL, g.gl_pathv[i]);
        globfree(&g);
    }
    kat_json_close(&j, ']');
    /* The Python guard refuses (and reports) what Landlock would refuse, no
     * more: an honest candidate's Python opens /dev/null for writing, as
     * every subprocess call with DEVNULL does (Triton's compiler on its
     * first launch), and is no less honest for it. */
    kat_json_open(&j, "python_write_roots", '[');
    for (size_t i = 0; i < sizeof own / sizeof own[0]; i++)
        kat_json_str(&j, NULL, own[i]);
    for (size_t i = 0; i < n_extra; i++)
        kat_json_str(&j, NULL, extra[i]);
    for (size_t i = 0; i < sizeof device_writes / sizeof device_writes[0]; i++)
        kat_json_str(&j, NULL, device_writes[i]);
    kat_json_close(&j, ']');
    /* its environment over the runner's: its own caches (the store's fixed
     * path when bound), home and temporary directory, where the runner's
     * name the reference's, which it can neither write nor read */
    kat_json_open(&j, "env", '{');
    audit_caches_json(&j, cache);
    if (p->home[0])
        kat_json_str(&j, "HOME", p->home);
    kat_json_str(&j, "TMPDIR", p->tmp); /* the runner's is DIR/reference-tmp */
    kat_json_close(&j, '}');
    /* what no read root may hold: the runner drops any that does */
    kat_json_open(&j, "evidence", '[');
    kat_json_str(&j, NULL, p->runner_dir);
    kat_json_str(&j, NULL, p->plan);
    kat_json_str(&j, NULL, p->session);
    kat_json_str(&j, NULL, p->record);
    kat_json_close(&j, ']');
    kat_json_close(&j, '}');
    if (fclose(f) != 0) {
        free(text);
        return kat_fail(err, n, "out of memory"), NULL;
    }
    return text;
}

static const char *field(const cJSON *e, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(e, key);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

void audit_party_read(const char *events_path, struct audit_party_confinement *c)
{
    memset(c, 0, sizeof *c);
    snprintf(c->summary, sizeof c->summary, "unknown: the runner logged no confinement of the candidate's process");
    FILE *f = fopen(events_path, "r");
    if (!f)
        return;
    char *line = NULL;
    size_t cap = 0;
    while (getline(&line, &cap, f) > 0) {
        if (!strstr(line, "\"party_confinement\""))
            continue;
        cJSON *e = cJSON_Parse(line);
        const char *ev = e ? field(e, "event") : NULL;
        if (!ev || strcmp(ev, "party_confinement") != 0) {
            cJSON_Delete(e);
            continue;
        }
        const char *ll = field(e, "landlock"), *sc = field(e, "seccomp"), *sig = field(e, "signals"),
                   *ab = field(e, "abstract_unix"), *tcp = field(e, "tcp");
        const cJSON *nnp = cJSON_GetObjectItemCaseSensitive(e, "no_new_privs");
        c->reported = 1;
        c->complete = ll && sc && sig && ab && tcp && !strcmp(ll, "in force") && !strcmp(sc, "in force") &&
                      !strcmp(sig, "scoped") && !strcmp(ab, "scoped") && !strcmp(tcp, "refused") && cJSON_IsTrue(nnp);
        snprintf(c->summary, sizeof c->summary,
                 "landlock %s; seccomp %s; signals %s; abstract sockets %s; tcp %s; no_new_privs %s",
                 ll ? ll : "?", sc ? sc : "?", sig ? sig : "?", ab ? ab : "?", tcp ? tcp : "?",
                 cJSON_IsTrue(nnp) ? "set" : "not set");
        cJSON_Delete(e);
        break; /* the first: the one the confinement itself wrote before the candidate ran */
    }
    free(line);
    fclose(f);
}
