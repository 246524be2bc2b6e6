/*
 * resources.c - finds kaudit's own files relative to the running binary
 * (resources.h gives the order).
 */
#define _GNU_SOURCE
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kaudit_env.h"
#include "resources.h"
#include "toolbox.h"

/* Relative to the binary's directory. */
#define INSTALL_LIB_DIR "/../lib/kaudit"
#define INSTALL_DATA_DIR "/../share/kaudit"
#define BUILD_LIB_DIR "/../lib"

const char *kres_exe_dir(void)
{
    static char dir[PATH_MAX];
    static int done;
    if (!done) {
        done = 1;
        ssize_t n = readlink("/proc/self/exe", dir, sizeof(dir) - 1);
        if (n <= 0) {
            dir[0] = '\0';
        } else {
            dir[n] = '\0';
            char *slash = strrchr(dir, '/');
            if (slash)
                *slash = '\0';
        }
    }
    return dir[0] ? dir : NULL;
}

static int readable(const char *path)
{
    return path && access(path, R_OK) == 0;
}

/* out = realpath(base + rel) when it exists and is readable. */
static int try_path(const char *base, const char *rel, char *out, size_t size)
{
    char candidate[PATH_MAX * 2];
    snprintf(candidate, sizeof(candidate), "%s%s", base ? base : "", rel ? rel : "");
    char resolved[PATH_MAX];
    if (!readable(candidate) || !realpath(candidate, resolved) || strlen(resolved) >= size)
        return -1;
    memcpy(out, resolved, strlen(resolved) + 1);
    return 0;
}

/* Whether the binary runs from the build directory it was built in: the
 * only case in which the source tree it was configured from is used. */
static int in_build_tree(void)
{
#ifdef KAUDIT_BUILD_DIR
    const char *exe = kres_exe_dir();
    if (!exe)
        return 0;
    char parent[PATH_MAX + 8];
    snprintf(parent, sizeof(parent), "%s/..", exe);
    struct stat a, b;
    return stat(parent, &a) == 0 && stat(KAUDIT_BUILD_DIR, &b) == 0 && a.st_dev == b.st_dev
           && a.st_ino == b.st_ino;
#else
    return 0;
#endif
}

int kres_preload(char *out, size_t size, char *err, size_t err_size)
{
    const char *configured = getenv(KAT_ENV_PRELOAD);
    if (configured && configured[0]) {
        if (try_path(configured, NULL, out, size) == 0)
            return 0;
        snprintf(err, err_size, "cannot read the preload library '%s' named by %s", configured,
                 KAT_ENV_PRELOAD);
        return -1;
    }
    const char *exe = kres_exe_dir();
    if (!exe) {
        snprintf(err, err_size, "cannot locate the kaudit binary to find the preload library");
        return -1;
    }
    static const char *const relative[] = { INSTALL_LIB_DIR "/libkaudit_preload.so",
                                            BUILD_LIB_DIR "/libkaudit_preload.so",
                                            "/libkaudit_preload.so" };
    for (size_t i = 0; i < sizeof(relative) / sizeof(relative[0]); i++)
        if (try_path(exe, relative[i], out, size) == 0)
            return 0;
    snprintf(err, err_size,
             "cannot find libkaudit_preload.so beside '%s' (looked in ..%s, ..%s and there; set %s)", exe,
             INSTALL_LIB_DIR + 3, BUILD_LIB_DIR + 3, KAT_ENV_PRELOAD);
    return -1;
}

int kres_audit(const char *preload, char *out, size_t size)
{
    const char *configured = getenv(KAT_ENV_AUDIT);
    if (configured && strcmp(configured, "none") == 0)
        return 1;
    char tried[PATH_MAX];
    if (configured && configured[0])
        snprintf(tried, sizeof(tried), "%s", configured);
    else /* preload is absolute */
        snprintf(tried, sizeof(tried), "%.*s/libkaudit_audit.so", (int)(strrchr(preload, '/') - preload),
                 preload);
    if (try_path(tried, NULL, out, size) == 0)
        return 0;
    snprintf(out, size, "%s", tried);
    return -1;
}

int kres_python_dir(const char *preload, char *out, size_t size)
{
    char beside[PATH_MAX];
    snprintf(beside, sizeof(beside), "%.*s/kaudit-python", (int)(strrchr(preload, '/') - preload), preload);
    char probe[PATH_MAX + 32];
    snprintf(probe, sizeof(probe), "%s/sitecustomize.py", beside);
    if (readable(probe) && try_path(beside, NULL, out, size) == 0)
        return 0;
    const char *exe = kres_exe_dir();
    static const char *const relative[] = { INSTALL_LIB_DIR "/kaudit-python", BUILD_LIB_DIR "/kaudit-python" };
    for (size_t i = 0; exe && i < sizeof(relative) / sizeof(relative[0]); i++) {
        snprintf(probe, sizeof(probe), "%s%s/sitecustomize.py", exe, relative[i]);
        if (readable(probe) && try_path(exe, relative[i], out, size) == 0)
            return 0;
    }
    return -1;
}

int kres_data_dir(char *out, size_t size)
{
    const char *configured = getenv(KAUDIT_ENV_DATA_DIR);
    if (configured && configured[0])
        return try_path(configured, NULL, out, size);
    const char *exe = kres_exe_dir();
    if (exe && try_path(exe, INSTALL_DATA_DIR, out, size) == 0)
        return 0;
#ifdef KAUDIT_SOURCE_DIR
    if (in_build_tree() && try_path(KAUDIT_SOURCE_DIR, NULL, out, size) == 0)
        return 0;
#endif
    return -1;
}

int kres_data_file(const char *relative, char *out, size_t size)
{
    char root[PATH_MAX];
    if (kres_data_dir(root, sizeof(root)) != 0)
        return -1;
    char candidate[PATH_MAX * 2];
    snprintf(candidate, sizeof(candidate), "%s/%s", root, relative);
    return try_path(candidate, NULL, out, size);
}

void kres_inventory(const char *given, const char **path, char *buf, size_t size)
{
    const char *chosen = given;
    if (!chosen) {
        const char *env = getenv(KAUDIT_ENV_INVENTORY);
        if (env && env[0])
            chosen = env;
    }
    if (chosen) {
        *path = strcmp(chosen, "none") == 0 ? NULL : chosen;
        return;
    }
    if (kres_data_file(KAUDIT_BUNDLED_INVENTORY, buf, size) == 0) {
        *path = buf;
        return;
    }
    kat_say("warning",
            "cannot find the bundled inventory (%s under share/kaudit beside the binary, or set %s): judging "
            "without an inventory",
            KAUDIT_BUNDLED_INVENTORY, KAUDIT_ENV_INVENTORY);
    *path = NULL;
}
