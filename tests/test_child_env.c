/*
 * test_child_env.c - the one rule for a traced process's environment
 * (session/child_env.h), which both `kaudit run` and the preload's exec
 * re-injection use.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "child_env.h"

static const struct kat_injection full = {
    .preload = "/k/lib/libkaudit_preload.so",
    .session = "/s/kaudit.session",
    .cupti = "/c/libcupti.so",
    .audit = "/k/lib/libkaudit_audit.so",
    .python_dir = "/k/lib/kaudit-python",
    .python_watch = "ModelNew,Model",
};

static char **build(const struct kat_injection *inj, char **envp, int reinjected)
{
    size_t slots = kat_child_env_slots(envp), bytes = kat_child_env_bytes(inj, envp);
    char **env = malloc(slots * sizeof(char *) + bytes);
    cr_assert_not_null(env);
    char **out = kat_child_env(inj, envp, reinjected, env, slots, (char *)(env + slots), bytes);
    cr_assert_not_null(out, "a buffer sized by kat_child_env_bytes was too small");
    return out;
}

static const char *get(char **env, const char *name)
{
    const char *found = NULL;
    size_t n = strlen(name);
    for (char **e = env; *e; e++)
        if (!strncmp(*e, name, n) && (*e)[n] == '=') {
            cr_assert_null(found, "%s is in the environment twice", name);
            found = *e + n + 1;
        }
    return found;
}

Test(child_env, an_empty_environment_gets_every_variable)
{
    char *envp[] = { NULL };
    char **env = build(&full, envp, 0);
    cr_expect_str_eq(get(env, "LD_PRELOAD"), full.preload);
    cr_expect_str_eq(get(env, "CUDA_INJECTION64_PATH"), full.preload);
    cr_expect_str_eq(get(env, "NVTX_INJECTION64_PATH"), full.preload);
    cr_expect_str_eq(get(env, "KAUDIT_PRELOAD_LIB"), full.preload);
    cr_expect_str_eq(get(env, "KAUDIT_SESSION_DIR"), full.session);
    cr_expect_str_eq(get(env, "KAUDIT_CUPTI_LIB"), full.cupti);
    cr_expect_str_eq(get(env, "LD_AUDIT"), full.audit);
    cr_expect_str_eq(get(env, "KAUDIT_AUDIT_LIB"), full.audit);
    cr_expect_str_eq(get(env, "GLIBC_TUNABLES"), "glibc.rtld.optional_static_tls=8192");
    cr_expect_str_eq(get(env, "PYTHONPATH"), full.python_dir);
    cr_expect_str_eq(get(env, "KAUDIT_PYTHON_DIR"), full.python_dir);
    cr_expect_str_eq(get(env, "KAUDIT_PYTHON_WATCH"), full.python_watch);
    cr_expect_null(get(env, "KAUDIT_REINJECTED"), "kaudit run's own child is not re-injected");
    cr_expect(kat_child_env_complete(&full, env));
    free(env);
}

Test(child_env, existing_lists_follow_ours_and_other_variables_stay)
{
    char *envp[] = { "HOME=/root", "LD_PRELOAD=/usr/lib/libjemalloc.so", "LD_AUDIT=/other/audit.so",
                     "GLIBC_TUNABLES=glibc.malloc.check=3", "PYTHONPATH=/site", "TERM=xterm", NULL };
    char **env = build(&full, envp, 1);
    cr_expect_str_eq(get(env, "HOME"), "/root");
    cr_expect_str_eq(get(env, "TERM"), "xterm");
    cr_expect_str_eq(get(env, "LD_PRELOAD"), "/k/lib/libkaudit_preload.so:/usr/lib/libjemalloc.so");
    cr_expect_str_eq(get(env, "LD_AUDIT"), "/k/lib/libkaudit_audit.so:/other/audit.so");
    cr_expect_str_eq(get(env, "GLIBC_TUNABLES"), "glibc.malloc.check=3:glibc.rtld.optional_static_tls=8192");
    cr_expect_str_eq(get(env, "PYTHONPATH"), "/k/lib/kaudit-python:/site");
    cr_expect_str_eq(get(env, "KAUDIT_REINJECTED"), "1");
    free(env);
}

Test(child_env, lists_that_already_name_ours_are_kept_as_they_are)
{
    char *envp[] = { "LD_PRELOAD=/a.so /k/lib/libkaudit_preload.so", "LD_AUDIT=/x.so:/k/lib/libkaudit_audit.so",
                     "GLIBC_TUNABLES=glibc.rtld.optional_static_tls=65536", "PYTHONPATH=/k/lib/kaudit-python:/y",
                     NULL };
    char **env = build(&full, envp, 1);
    cr_expect_str_eq(get(env, "LD_PRELOAD"), "/a.so /k/lib/libkaudit_preload.so");
    cr_expect_str_eq(get(env, "LD_AUDIT"), "/x.so:/k/lib/libkaudit_audit.so", "a module listed twice loads twice");
    cr_expect_str_eq(get(env, "GLIBC_TUNABLES"), "glibc.rtld.optional_static_tls=65536",
                     "the user's own setting of the tunable stands");
    cr_expect_str_eq(get(env, "PYTHONPATH"), "/k/lib/kaudit-python:/y");
    free(env);
}

Test(child_env, our_directory_later_on_pythonpath_is_put_first)
{
    char *envp[] = { "PYTHONPATH=/y:/k/lib/kaudit-python", NULL };
    char **env = build(&full, envp, 1);
    cr_expect_str_eq(get(env, "PYTHONPATH"), "/k/lib/kaudit-python:/y:/k/lib/kaudit-python",
                     "another sitecustomize earlier on the path would shadow ours");
    free(env);
}

Test(child_env, stale_values_of_our_variables_are_replaced)
{
    char *envp[] = { "KAUDIT_SESSION_DIR=/elsewhere", "CUDA_INJECTION64_PATH=/other/tool.so",
                     "KAUDIT_REINJECTED=1", "KAUDIT_PYTHON_WATCH=Evil", NULL };
    char **env = build(&full, envp, 0);
    cr_expect_str_eq(get(env, "KAUDIT_SESSION_DIR"), full.session);
    cr_expect_str_eq(get(env, "CUDA_INJECTION64_PATH"), full.preload);
    cr_expect_null(get(env, "KAUDIT_REINJECTED"));
    cr_expect_str_eq(get(env, "KAUDIT_PYTHON_WATCH"), full.python_watch);
    free(env);
}

Test(child_env, without_audit_or_python_the_users_settings_are_kept)
{
    struct kat_injection bare = { .preload = full.preload, .session = full.session };
    char *envp[] = { "LD_AUDIT=/other/audit.so", "GLIBC_TUNABLES=glibc.malloc.check=3", "PYTHONPATH=/site",
                     "KAUDIT_PYTHON_WATCH=Model", NULL };
    char **env = build(&bare, envp, 0);
    cr_expect_str_eq(get(env, "LD_AUDIT"), "/other/audit.so");
    cr_expect_str_eq(get(env, "GLIBC_TUNABLES"), "glibc.malloc.check=3");
    cr_expect_str_eq(get(env, "PYTHONPATH"), "/site");
    cr_expect_null(get(env, "KAUDIT_AUDIT_LIB"));
    cr_expect_null(get(env, "KAUDIT_CUPTI_LIB"));
    cr_expect_null(get(env, "KAUDIT_PYTHON_WATCH"), "a stale watch list without provenance is not passed on");
    cr_expect(kat_child_env_complete(&bare, env));
    free(env);
}

Test(child_env, an_environment_missing_any_one_variable_is_incomplete)
{
    char *envp[] = { NULL };
    char **env = build(&full, envp, 0);
    size_t n = 0;
    while (env[n])
        n++;
    for (size_t drop = 0; drop < n; drop++) {
        char *without[32];
        size_t k = 0;
        for (size_t i = 0; i < n; i++)
            if (i != drop)
                without[k++] = env[i];
        without[k] = NULL;
        cr_expect(!kat_child_env_complete(&full, without), "complete without '%s'", env[drop]);
    }
    free(env);
}

Test(child_env, a_buffer_too_small_gives_null_not_a_cut_value)
{
    char *envp[] = { "LD_PRELOAD=/usr/lib/libjemalloc.so", NULL };
    size_t slots = kat_child_env_slots(envp);
    char *ptrs[64], buf[64];
    cr_assert_leq(slots, 64);
    cr_expect_null(kat_child_env(&full, envp, 0, ptrs, slots, buf, sizeof buf));
    cr_expect_null(kat_child_env(&full, envp, 0, ptrs, 2, buf, sizeof buf), "too few slots");
    struct kat_injection none = { 0 };
    cr_expect_null(kat_child_env(&none, envp, 0, ptrs, slots, buf, sizeof buf), "no preload, no environment");
}
