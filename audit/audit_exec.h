/*
 * audit_exec.h - starting the runner of `kaudit audit` and getting it back,
 * whatever the candidate does (docs/audit.md, "The worker").
 *
 * The worker is `kaudit run -d SESSION -- PYTHON RUNNER PLAN` (so the stress
 * runs are recorded exactly as any harness is), started in a process group
 * of its own with its output in a log file, under a time limit.  kaudit is a
 * child subreaper: processes the candidate forks or detaches come back to
 * it, and every one of them is killed when the worker ends.  A candidate
 * that kills its parent (the recorder) or calls os._exit ends the worker
 * early; that is recorded, never waited on forever.
 */
#ifndef KAUDIT_AUDIT_EXEC_H
#define KAUDIT_AUDIT_EXEC_H

#include <limits.h>

#include "audit_limits.h"
#include "semantic.h"

/* Where a worker may write (docs/audit.md, "Confinement"). */
#define AUDIT_MAX_ROOTS 32
struct audit_roots {
    char path[AUDIT_MAX_ROOTS][PATH_MAX];
    unsigned char native_only[AUDIT_MAX_ROOTS]; /* for native code only (/proc): not the runner's audit hook */
    unsigned char create_only[AUDIT_MAX_ROOTS]; /* only making files there (the timing turns' lock files): native only */
    size_t n;
};

/* Each build cache's variable (XDG_CACHE_HOME, TORCH_EXTENSIONS_DIR,
 * TRITON_CACHE_DIR, CUDA_CACHE_PATH, ...) set beneath root in this process's
 * environment, which the worker inherits; the folders made when make.  0, or
 * -1 with err when one cannot be made. */
int audit_caches_beneath(const char *root, int make, char *err, size_t n);

/* Where variable's cache lies beneath such a root ("/triton" for
 * TRITON_CACHE_DIR), or NULL for a variable that is none of them. */
const char *audit_cache_beneath(const char *variable);

/* The same variables beneath root, as members of j's open object (the
 * environment of the candidate's process, in its party plan). */
struct kat_json;
void audit_caches_json(struct kat_json *j, const char *root);

/*
 * The roots of an audit that owns the n_own directories own: those, the build caches
 * a candidate's compiler writes (PyTorch's extensions, Triton's, CUDA's
 * compute cache, the XDG cache; made when missing), /dev, /proc (the CUDA
 * driver writes there), and extra (the user's --allow-write).  0, or -1 with err.
 */
int audit_roots_for(struct audit_roots *r, const char *const *own, size_t n_own, const char *const *extra,
                    size_t n_extra, char *err, size_t n);

/* Adds a directory where the worker may only make regular files (native
 * code: the runner's lock files, docs/timing.md "Concurrent audits").  0, or
 * -1 with err. */
int audit_roots_add_create_only(struct audit_roots *r, const char *path, char *err, size_t n);

/* The roots from index `from` on that the tasks' Python code may write
 * beneath too (the runner's audit hook, plan write_roots): at most max into
 * out; how many. */
size_t audit_python_roots(const struct audit_roots *r, size_t from, const char **out, size_t max);

/* What the worker ran under, for the record. */
struct audit_confinement {
    int confined;                /* 1: Landlock applied; -1: left to kaudit run (its session's info says) */
    int abi;                     /* the kernel's Landlock ABI, 0 without */
    char why[512];               /* why not confined */
};

/*
 * Whether the worker ran with every confinement mechanism in force: its
 * writes confined (Landlock), the session read-only for it, and no
 * privilege (privileges, from its session's info: "unprivileged: ...").  1, or 0 with
 * why ("confinement-incomplete: ...", naming the missing mechanism): a PASS
 * certificate is then withheld, never granted on a worker that could have
 * rewritten its own evidence.
 */
int audit_confinement_complete(const struct audit_confinement *c, const char *session_protection,
                               const char *privileges, char *why, size_t n);

struct audit_worker {
    const char *session_dir;     /* for kaudit run -d */
    const char *log_path;        /* the worker's stdout and stderr */
    const char *work_dir;        /* its working directory */
    const char *python, *runner, *plan;
    int record;                  /* 1: under kaudit run (the preload library); 0: python directly */
    long worker_uid;             /* > 0: kaudit run starts the runner as this uid, without capabilities */
    double timeout_s;
    const struct audit_roots *roots;  /* writing only beneath these (Landlock), or NULL: unconfined */
    const char *tmp_dir;         /* the worker's TMPDIR (beneath a root) */
    struct audit_confinement *confinement;  /* filled when not NULL */
    const struct audit_limits *limits;      /* stopped beyond these (audit_limits.h), or NULL: none */
    const char *usage_dir;       /* whose disk space counts against limits->disk_bytes */
    const char *bind_dir, *bind_at; /* non-NULL: the worker sees bind_dir at bind_at too (kaudit run --bind) */
};

/* Runs the worker to its end.  0 with *end filled, -1 with err when it
 * could not be started at all. */
int audit_exec(const struct audit_worker *w, struct kat_runner_end *end, char *err, size_t n);

#endif
