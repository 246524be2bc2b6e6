/*
 * child_env.h - the one rule for what a traced process's environment must
 * carry, used by `kaudit run` (the command's environment) and by the preload
 * library (a child that a harness started with a scrubbed environment gets
 * the same variables back).  docs/preload.md lists the variables.
 *
 * The builder allocates nothing: the caller hands it the slots and the bytes
 * (sized by kat_child_env_slots and kat_child_env_bytes), so the preload can
 * call it in an exec wrapper, possibly in a vfork child, with stack memory.
 * It reads no environment of its own: everything comes from `inj` and
 * `envp`, so the preload can use values it copied before the program ran.
 *
 * What the result holds: every entry of envp except the variables this rule
 * owns, then
 *   LD_PRELOAD            the preload first (an existing list is kept after it;
 *                         a list that already names it is kept as it is)
 *   CUDA_INJECTION64_PATH, NVTX_INJECTION64_PATH, KAUDIT_PRELOAD_LIB   the preload
 *   KAUDIT_SESSION_DIR, KAUDIT_CUPTI_LIB                               when set in inj
 *   LD_AUDIT, KAUDIT_AUDIT_LIB, GLIBC_TUNABLES   when inj->audit: the module first,
 *                         and the static-TLS tunable unless the list sets it
 *   PYTHONPATH, KAUDIT_PYTHON_DIR, KAUDIT_PYTHON_WATCH   when inj->python_dir:
 *                         the directory first on PYTHONPATH
 *   KAUDIT_REINJECTED=1   when `reinjected` (the preload restored the variables)
 * Without inj->audit an LD_AUDIT and GLIBC_TUNABLES of envp are kept; without
 * inj->python_dir a PYTHONPATH of envp is kept.
 */
#ifndef KAUDIT_CHILD_ENV_H
#define KAUDIT_CHILD_ENV_H

#include <stddef.h>

#define KAT_ENV_PYTHON_DIR "KAUDIT_PYTHON_DIR"     /* sitecustomize directory (first on PYTHONPATH) */
#define KAT_ENV_PYTHON_WATCH "KAUDIT_PYTHON_WATCH" /* parties whose frames are reported */

struct kat_injection {
    const char *preload;        /* required: absolute path of libkaudit_preload.so */
    const char *session;        /* session directory, or NULL */
    const char *token;          /* the session's token (KAUDIT_SESSION_TOKEN), or NULL */
    const char *supervisor;     /* kaudit run's socket (KAUDIT_SUPERVISOR_SOCKET), or NULL */
    const char *cupti;          /* libcupti to use, or NULL */
    const char *audit;          /* LD_AUDIT module, or NULL for none */
    const char *python_dir;     /* sitecustomize directory, or NULL for no Python provenance */
    const char *python_watch;   /* with python_dir */
};

/* Pointers the result needs, its terminating NULL included. */
size_t kat_child_env_slots(char *const envp[]);
/* Bytes the entries the builder composes need. */
size_t kat_child_env_bytes(const struct kat_injection *inj, char *const envp[]);

/*
 * Build the environment into slots (n_slots pointers) and buf (size bytes);
 * the result points into envp, slots and buf.  NULL when a buffer is too
 * small or inj->preload is unset.
 */
char **kat_child_env(const struct kat_injection *inj, char *const envp[], int reinjected, char **slots,
                     size_t n_slots, char *buf, size_t size);

/*
 * 1 when envp already carries everything the rule adds (so a child's
 * environment needs no restoring), 0 otherwise.  KAUDIT_REINJECTED is not
 * required.
 */
int kat_child_env_complete(const struct kat_injection *inj, char *const envp[]);

#endif /* KAUDIT_CHILD_ENV_H */
