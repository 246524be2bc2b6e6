/*
 * child_env.c - the environment a traced process must carry (child_env.h).
 *
 * Async-signal-safe in practice: no allocation, no locale, no stdio; only
 * string copies into the caller's buffers, because the preload calls it in
 * exec wrappers, possibly in a vfork child.
 */
#include <string.h>

#include "child_env.h"
#include "kaudit_env.h"

/* The value of NAME in envp, NULL when absent. */
static const char *env_value(char *const envp[], const char *name)
{
    size_t n = strlen(name);
    if (envp)
        for (char *const *e = envp; *e; e++)
            if (strncmp(*e, name, n) == 0 && (*e)[n] == '=')
                return *e + n + 1;
    return NULL;
}

static int has_name(const char *entry, const char *name)
{
    size_t n = strlen(name);
    return strncmp(entry, name, n) == 0 && entry[n] == '=';
}

/* path is an entry of a list (':' between entries; LD_PRELOAD also allows ' '). */
static int listed(const char *list, const char *path)
{
    size_t n = strlen(path);
    for (const char *p = list; p && *p;) {
        const char *end = p + strcspn(p, ": ");
        if ((size_t)(end - p) == n && strncmp(p, path, n) == 0)
            return 1;
        p = *end ? end + 1 : end;
    }
    return 0;
}

static int listed_first(const char *list, const char *path)
{
    size_t n = strlen(path);
    return list && strncmp(list, path, n) == 0 && (list[n] == ':' || list[n] == '\0');
}

static int set(const char *s) { return s && s[0]; }

/* The variables this rule owns: an envp entry of one of them is replaced. */
static int owned(const struct kat_injection *inj, const char *entry)
{
    static const char *const always[] = {
        "LD_PRELOAD", "CUDA_INJECTION64_PATH", "NVTX_INJECTION64_PATH", KAT_ENV_SESSION, KAT_ENV_SESSION_TOKEN,
        KAT_ENV_SUPERVISOR,
        KAT_ENV_PRELOAD, KAT_ENV_CUPTI, KAT_ENV_AUDIT, KAT_ENV_REINJECTED, KAT_ENV_PYTHON_DIR,
        KAT_ENV_PYTHON_WATCH,
    };
    for (size_t i = 0; i < sizeof always / sizeof always[0]; i++)
        if (has_name(entry, always[i]))
            return 1;
    if (set(inj->audit) && (has_name(entry, "LD_AUDIT") || has_name(entry, "GLIBC_TUNABLES")))
        return 1;
    return set(inj->python_dir) && has_name(entry, "PYTHONPATH");
}

/* A bump writer into the caller's buffer; `failed` once anything did not fit. */
struct composer {
    char *buf;
    size_t size, used;
    int failed;
};

/* Appends NAME=part1[sep part2...] (NULL parts are skipped) and returns it. */
static char *compose(struct composer *c, const char *name, const char *a, const char *sep, const char *b)
{
    char *start = c->buf + c->used;
    const char *parts[] = { name, "=", a, b && b[0] && a && a[0] ? sep : NULL, b };
    for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++) {
        if (!parts[i])
            continue;
        size_t n = strlen(parts[i]);
        if (c->used + n + 1 > c->size) {
            c->failed = 1;
            return NULL;
        }
        memcpy(c->buf + c->used, parts[i], n);
        c->used += n;
    }
    c->buf[c->used++] = '\0';
    return start;
}

/* A list with `first` at its head: `old` kept as it is when `keep_old` says so. */
static char *compose_list(struct composer *c, const char *name, const char *first, const char *old, int keep_old)
{
    if (keep_old)
        return compose(c, name, old, NULL, NULL);
    return compose(c, name, first, ":", old);
}

/* The tunable is added unless the user's own setting of it stands. */
static char *compose_tunables(struct composer *c, const char *old)
{
    if (old && strstr(old, KAT_TLS_TUNABLE "="))
        return compose(c, "GLIBC_TUNABLES", old, NULL, NULL);
    return compose(c, "GLIBC_TUNABLES", old, ":", KAT_TLS_TUNABLE_SETTING);
}

size_t kat_child_env_slots(char *const envp[])
{
    size_t n = 0;
    if (envp)
        while (envp[n])
            n++;
    return n + 17;
}

static size_t len(const char *s) { return s ? strlen(s) : 0; }

size_t kat_child_env_bytes(const struct kat_injection *inj, char *const envp[])
{
    /* Each entry: its name (at most 32 bytes), '=', its parts, a separator and the NUL. */
    size_t total = 18 * 36 + 6 * len(inj->preload) + len(inj->session) + len(inj->token) + len(inj->supervisor)
                   + len(inj->cupti)
                   + 2 * len(inj->audit) + 2 * len(inj->python_dir) + len(inj->python_watch)
                   + sizeof KAT_TLS_TUNABLE_SETTING;
    total += len(env_value(envp, "LD_PRELOAD")) + len(env_value(envp, "LD_AUDIT"))
             + len(env_value(envp, "GLIBC_TUNABLES")) + len(env_value(envp, "PYTHONPATH"));
    return total;
}

char **kat_child_env(const struct kat_injection *inj, char *const envp[], int reinjected, char **slots,
                     size_t n_slots, char *buf, size_t size)
{
    if (!set(inj->preload) || n_slots < kat_child_env_slots(envp))
        return NULL;
    struct composer c = { buf, size, 0, 0 };
    size_t n = 0;
    if (envp)
        for (char *const *e = envp; *e; e++)
            if (!owned(inj, *e))
                slots[n++] = *e;
    const char *old_preload = env_value(envp, "LD_PRELOAD");
    slots[n++] = compose_list(&c, "LD_PRELOAD", inj->preload, old_preload, listed(old_preload, inj->preload));
    slots[n++] = compose(&c, "CUDA_INJECTION64_PATH", inj->preload, NULL, NULL);
    slots[n++] = compose(&c, "NVTX_INJECTION64_PATH", inj->preload, NULL, NULL);
    slots[n++] = compose(&c, KAT_ENV_PRELOAD, inj->preload, NULL, NULL);
    if (set(inj->session))
        slots[n++] = compose(&c, KAT_ENV_SESSION, inj->session, NULL, NULL);
    if (set(inj->token))
        slots[n++] = compose(&c, KAT_ENV_SESSION_TOKEN, inj->token, NULL, NULL);
    if (set(inj->supervisor))
        slots[n++] = compose(&c, KAT_ENV_SUPERVISOR, inj->supervisor, NULL, NULL);
    if (set(inj->cupti))
        slots[n++] = compose(&c, KAT_ENV_CUPTI, inj->cupti, NULL, NULL);
    if (set(inj->audit)) {
        /* Ours first; a module listed twice would be loaded twice. */
        const char *old_audit = env_value(envp, "LD_AUDIT");
        slots[n++] = compose_list(&c, "LD_AUDIT", inj->audit, old_audit, listed(old_audit, inj->audit));
        slots[n++] = compose(&c, KAT_ENV_AUDIT, inj->audit, NULL, NULL);
        slots[n++] = compose_tunables(&c, env_value(envp, "GLIBC_TUNABLES"));
    }
    if (set(inj->python_dir)) {
        /* First, so that our sitecustomize runs (it then runs the one it shadows). */
        const char *old_path = env_value(envp, "PYTHONPATH");
        slots[n++] = compose_list(&c, "PYTHONPATH", inj->python_dir, old_path, listed_first(old_path, inj->python_dir));
        slots[n++] = compose(&c, KAT_ENV_PYTHON_DIR, inj->python_dir, NULL, NULL);
        slots[n++] = compose(&c, KAT_ENV_PYTHON_WATCH, inj->python_watch ? inj->python_watch : "", NULL, NULL);
    }
    if (reinjected)
        slots[n++] = KAT_ENV_REINJECTED "=1";
    slots[n] = NULL;
    return c.failed ? NULL : slots;
}

static int value_is(char *const envp[], const char *name, const char *want)
{
    const char *have = env_value(envp, name);
    return have && strcmp(have, want) == 0;
}

int kat_child_env_complete(const struct kat_injection *inj, char *const envp[])
{
    if (!set(inj->preload) || !listed(env_value(envp, "LD_PRELOAD"), inj->preload)
        || !value_is(envp, "CUDA_INJECTION64_PATH", inj->preload)
        || !value_is(envp, "NVTX_INJECTION64_PATH", inj->preload) || !value_is(envp, KAT_ENV_PRELOAD, inj->preload))
        return 0;
    if (set(inj->session) && !value_is(envp, KAT_ENV_SESSION, inj->session))
        return 0;
    if (set(inj->token) && !value_is(envp, KAT_ENV_SESSION_TOKEN, inj->token))
        return 0;
    if (set(inj->supervisor) && !value_is(envp, KAT_ENV_SUPERVISOR, inj->supervisor))
        return 0;
    if (set(inj->cupti) && !value_is(envp, KAT_ENV_CUPTI, inj->cupti))
        return 0;
    if (set(inj->audit)) {
        const char *tunables = env_value(envp, "GLIBC_TUNABLES");
        if (!listed(env_value(envp, "LD_AUDIT"), inj->audit) || !value_is(envp, KAT_ENV_AUDIT, inj->audit)
            || !tunables || !strstr(tunables, KAT_TLS_TUNABLE "="))
            return 0;
    }
    if (set(inj->python_dir)
        && (!listed_first(env_value(envp, "PYTHONPATH"), inj->python_dir)
            || !value_is(envp, KAT_ENV_PYTHON_DIR, inj->python_dir)
            || !value_is(envp, KAT_ENV_PYTHON_WATCH, inj->python_watch ? inj->python_watch : "")))
        return 0;
    return 1;
}
