/* audit_exec.c - the runner's process, its time limit and its leftovers (audit_exec.h). */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "audit_exec.h"
#include "json_writer.h"
#include "confine.h"
#include "run_census.h"
#include "toolbox.h"

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static void pause_ms(long ms)
{
    struct timespec t = { ms / 1000, (ms % 1000) * 1000000L };
    while (nanosleep(&t, &t) != 0 && errno == EINTR) {
    }
}

/* Every process whose parent is us (what the worker's group left, and what
 * detached from it and was reparented to us, the subreaper), with what
 * descends from it: killed and reaped, until none is left. */
static void kill_leftovers(pid_t group)
{
    if (group > 0)
        kill(-group, SIGKILL);
    for (int round = 0; round < 20; round++) {
        pid_t *pids;
        size_t n = proc_tree_pids(0, getpid(), &pids);
        for (size_t i = 0; i < n; i++)
            kill(pids[i], SIGKILL);
        free(pids);
        while (waitpid(-1, NULL, WNOHANG) > 0) {
        }
        if (!n)
            break;
        pause_ms(20);
    }
}

/* SIGKILL to every process of root's tree (proc_tree_pids: its descendants,
 * and what was reparented to us) but `spare`: the candidate's and the
 * runner's processes go at once, the recorder (spare) is left to close its
 * session. */
static void kill_tree_but(pid_t root, pid_t spare)
{
    pid_t *pids;
    size_t n = proc_tree_pids(root, getpid(), &pids);
    for (size_t i = 0; i < n; i++)
        if (pids[i] != spare)
            kill(pids[i], SIGKILL);
    free(pids);
}

/* Reaps the processes reparented to us that have ended, never `keep` (whose
 * status the caller waits for). */
static void reap_others(pid_t keep)
{
    for (;;) {
        siginfo_t info;
        memset(&info, 0, sizeof info);
        if (waitid(P_ALL, 0, &info, WEXITED | WNOHANG | WNOWAIT) != 0 || info.si_pid == 0)
            return;
        if (info.si_pid == keep)
            return; /* (others that ended stay until the next call, after keep is reaped) */
        waitpid(info.si_pid, NULL, WNOHANG);
    }
}

static int add_root(struct audit_roots *r, const char *path, int make, int native_only, char *err, size_t n)
{
    if (!path || !*path)
        return 0;
    if (r->n == AUDIT_MAX_ROOTS) {
        snprintf(err, n, "more than %d directories to allow writing in", AUDIT_MAX_ROOTS);
        return -1;
    }
    if (make) {
        /* mkdir -p: a cache a build makes on its first use must exist for its rule */
        char buf[PATH_MAX];
        snprintf(buf, sizeof buf, "%s", path);
        for (char *p = buf + 1; *p; p++)
            if (*p == '/') {
                *p = '\0';
                mkdir(buf, 0755);
                *p = '/';
            }
        if (mkdir(buf, 0755) != 0 && errno != EEXIST) {
            snprintf(err, n, "cannot create the cache directory '%s': %s", path, strerror(errno));
            return -1;
        }
    }
    char real[PATH_MAX];
    if (!realpath(path, real)) {
        if (errno == ENOENT)
            return 0; /* nothing there to write beneath */
        snprintf(err, n, "cannot resolve '%s': %s", path, strerror(errno));
        return -1;
    }
    for (size_t i = 0; i < r->n; i++)
        if (!strcmp(r->path[i], real))
            return 0;
    r->native_only[r->n] = native_only;
    r->create_only[r->n] = 0;
    snprintf(r->path[r->n++], PATH_MAX, "%s", real);
    return 0;
}

/* The build caches, each through its tool's variable and whatever the
 * machine's environment says, so that a compiler that honours it writes
 * within the audit (a TORCHINDUCTOR_CACHE_DIR of the machine's, say, was a
 * write outside and the audit INCONCLUSIVE).  PyTorch's jiterator keeps the
 * kernels it compiles at run time (torch.prod's) under the last. */
static const struct {
    const char *variable, *beneath;
} party_caches[] = {
    { "XDG_CACHE_HOME", "" },
    { "TORCH_EXTENSIONS_DIR", "/torch_extensions" },
    { "TRITON_CACHE_DIR", "/triton" },
    { "CUDA_CACHE_PATH", "/nv" },
    { "TORCHINDUCTOR_CACHE_DIR", "/torchinductor" },
    { "CUPY_CACHE_DIR", "/cupy" },
    { "NUMBA_CACHE_DIR", "/numba" },
    { "PYTORCH_KERNEL_CACHE_PATH", "/torch_kernels" },
};

int audit_caches_beneath(const char *root, int make, char *err, size_t n)
{
    char sub[PATH_MAX + 48];
    for (size_t i = 0; i < sizeof party_caches / sizeof party_caches[0]; i++) {
        snprintf(sub, sizeof sub, "%s%s", root, party_caches[i].beneath);
        if (make && mkdir(sub, 0755) != 0 && errno != EEXIST)
            return kat_fail(err, n, "cannot make '%s': %s", sub, strerror(errno));
        setenv(party_caches[i].variable, sub, 1);
    }
    return 0;
}

const char *audit_cache_beneath(const char *variable)
{
    for (size_t i = 0; i < sizeof party_caches / sizeof party_caches[0]; i++)
        if (!strcmp(party_caches[i].variable, variable))
            return party_caches[i].beneath;
    return NULL;
}

void audit_caches_json(struct kat_json *j, const char *root)
{
    char sub[PATH_MAX + 48];
    for (size_t i = 0; i < sizeof party_caches / sizeof party_caches[0]; i++) {
        snprintf(sub, sizeof sub, "%s%s", root, party_caches[i].beneath);
        kat_json_str(j, party_caches[i].variable, sub);
    }
}

int audit_roots_for(struct audit_roots *r, const char *const *own, size_t n_own, const char *const *extra,
                    size_t n_extra, char *err, size_t n)
{
    r->n = 0;
    for (size_t i = 0; i < n_own; i++)
        if (add_root(r, own[i], 0, 0, err, n) != 0)
            return -1;
    /* the caches, where each tool looks for its own: its variable, else its
     * default beneath $HOME (none for TORCH_EXTENSIONS_DIR: ~/.cache holds it) */
    static const struct {
        const char *variable, *beneath_home;
    } caches[] = {
        { "XDG_CACHE_HOME", ".cache" }, /* torch_extensions, torch hub, pip */
        { "TORCH_EXTENSIONS_DIR", NULL },
        { "TRITON_CACHE_DIR", ".triton" },
        { "CUDA_CACHE_PATH", ".nv" }, /* the driver's compute cache */
    };
    const char *home = getenv("HOME");
    for (size_t i = 0; i < sizeof caches / sizeof caches[0]; i++) {
        const char *dir = getenv(caches[i].variable);
        char buf[PATH_MAX];
        if ((!dir || !*dir) && caches[i].beneath_home && home && *home) {
            snprintf(buf, sizeof buf, "%s/%s", home, caches[i].beneath_home);
            dir = buf;
        }
        if (add_root(r, dir, 1, 0, err, n) != 0)
            return -1;
    }
    if (add_root(r, "/dev", 0, 0, err, n) != 0) /* the GPU's device files, /dev/null, /dev/shm */
        return -1;
    /* The CUDA driver writes beneath /proc: without it cuInit fails with
     * CUDA_ERROR_OPERATING_SYSTEM (304), measured on the H200
     * (tests/gpu/landlock_probe.py).  A rule cannot name only the worker's
     * own /proc/PID (its processes have others).  Native code only. */
    if (add_root(r, "/proc", 0, 1, err, n) != 0)
        return -1;
    for (size_t i = 0; i < n_extra; i++)
        if (add_root(r, extra[i], 0, 0, err, n) != 0)
            return -1;
    return 0;
}

int audit_roots_add_create_only(struct audit_roots *r, const char *path, char *err, size_t n)
{
    size_t before = r->n;
    if (add_root(r, path, 0, 1, err, n) != 0) /* native only: the tasks' Python may not write there */
        return -1;
    if (r->n > before)
        r->create_only[before] = 1;
    return 0;
}

size_t audit_python_roots(const struct audit_roots *r, size_t from, const char **out, size_t max)
{
    size_t k = 0;
    for (size_t i = from; i < r->n && k < max; i++)
        if (!r->native_only[i])
            out[k++] = r->path[i];
    return k;
}

int audit_confinement_complete(const struct audit_confinement *c, const char *session_protection,
                               const char *privileges, char *why, size_t n)
{
    if (c->confined != 1)
        return kat_fail(why, n, "confinement-incomplete: the worker's writes were not confined (Landlock: %s)",
                        c->why[0] ? c->why : "unknown"), 0;
    if (!session_protection || strncmp(session_protection, "read-only", 9) != 0)
        return kat_fail(why, n, "confinement-incomplete: the session was not read-only for the worker (%s)",
                        session_protection && session_protection[0] ? session_protection : "unknown"), 0;
    if (!privileges || strncmp(privileges, "unprivileged:", 13) != 0)
        return kat_fail(why, n, "confinement-incomplete: the worker was not without privilege (%s)",
                        privileges && privileges[0] ? privileges : "unknown"), 0;
    return 1;
}

/* Under kaudit run, it confines its command itself, after making the
 * session read-only for it (a Landlock domain may not mount); the roots go
 * on its command line.  Otherwise the ruleset is made here, for the child to
 * apply; without Landlock the worker is unconfined, and the record says why. */
static void prepare_worker_confinement(const struct audit_worker *w, struct confine *conf)
{
    int delegated = w->roots && w->record;
    conf->ruleset_fd = -1;
    if (w->roots && !delegated) {
        const char *roots[AUDIT_MAX_ROOTS];
        for (size_t i = 0; i < w->roots->n; i++)
            roots[i] = w->roots->path[i];
        confine_prepare(conf, roots, w->roots->n, w->roots->create_only);
    } else if (!w->roots) {
        snprintf(conf->why, sizeof conf->why, "not asked for");
    }
    if (w->confinement) {
        w->confinement->confined = delegated ? -1 : conf->ruleset_fd >= 0;
        w->confinement->abi = conf->abi;
        snprintf(w->confinement->why, sizeof w->confinement->why, "%s", conf->why);
    }
}

/* The worker: `kaudit run` over the runner when it is recorded, else the
 * runner itself. */
static void exec_worker(const struct audit_worker *w, char *exe)
{
    if (w->record) {
        char *argv[20 + 2 * AUDIT_MAX_ROOTS];
        char uid[24];
        int k = 0;
        argv[k++] = exe;
        argv[k++] = "run";
        argv[k++] = "-d";
        argv[k++] = (char *)w->session_dir;
        argv[k++] = "--overwrite";
        if (w->worker_uid > 0) {
            snprintf(uid, sizeof uid, "%ld", w->worker_uid);
            argv[k++] = "--worker-uid";
            argv[k++] = uid;
        }
        char bind[2 * PATH_MAX + 2];
        if (w->bind_dir) {
            snprintf(bind, sizeof bind, "%s=%s", w->bind_at, w->bind_dir);
            argv[k++] = "--bind";
            argv[k++] = bind;
        }
        for (size_t i = 0; w->roots && i < w->roots->n; i++) {
            argv[k++] = w->roots->create_only[i] ? "--create-root" : "--write-root";
            argv[k++] = (char *)w->roots->path[i];
        }
        argv[k++] = "--";
        argv[k++] = (char *)w->python;
        argv[k++] = (char *)w->runner;
        argv[k++] = (char *)w->plan;
        argv[k] = NULL;
        execv(exe, argv);
    } else {
        char *argv[] = { (char *)w->python, (char *)w->runner, (char *)w->plan, NULL };
        execvp(w->python, argv);
    }
}

/* The child: a group of its own, its output into the log, in its work
 * directory, confined; a confinement that fails is said through report. */
static _Noreturn void run_worker_child(const struct audit_worker *w, char *exe, int log, struct confine *conf,
                                       int report, const sigset_t *old_mask)
{
    sigprocmask(SIG_SETMASK, old_mask, NULL); /* the mask survives exec */
    setpgid(0, 0);
    int devnull = open("/dev/null", O_RDONLY);
    if (devnull >= 0)
        dup2(devnull, 0);
    dup2(log, 1);
    dup2(log, 2);
    if (chdir(w->work_dir) != 0)
        _exit(126);
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    if (w->tmp_dir)
        setenv("TMPDIR", w->tmp_dir, 1);
    /* no __pycache__ written beside the task files */
    setenv("PYTHONDONTWRITEBYTECODE", "1", 1);
    if (confine_apply(conf) != 0) {
        int e = errno;
        if (write(report, &e, sizeof e) < 0) {
        }
        _exit(127);
    }
    exec_worker(w, exe);
    dprintf(2, "kaudit audit: cannot start the worker: %s\n", strerror(errno));
    _exit(127);
}

/* Memory every half second, the audit directory's disk space every second: over
 * a limit, end says which and by how much (audit_limits.h).  1 when over. */
#define MEMORY_CHECK_S 0.5
#define DISK_CHECK_S 1.0
#define DISK_ENTRIES_WALKED 200000
static int over_limit(const struct audit_worker *w, pid_t child, double t, double *next_memory, double *next_disk,
                      struct kat_runner_end *end)
{
    const struct audit_limits *l = w->limits;
    if (!l)
        return 0;
    if (l->memory_bytes && t >= *next_memory) {
        *next_memory = t + MEMORY_CHECK_S;
        pid_t big = 0;
        char comm[20] = "";
        unsigned long long big_bytes = 0;
        unsigned long long used = audit_tree_resident(child, getpid(), &big, comm, &big_bytes);
        if (used > end->memory_peak)
            end->memory_peak = used;
        if (used > l->memory_bytes) {
            char size[32];
            audit_size_text(big_bytes, size, sizeof size);
            end->resource = AUDIT_RESOURCE_MEMORY;
            end->resource_used = used;
            end->resource_limit = l->memory_bytes;
            snprintf(end->resource_detail, sizeof end->resource_detail, "the largest process: pid %d (%s), %s",
                     (int)big, comm, size);
            return 1;
        }
    }
    if (l->disk_bytes && w->usage_dir && t >= *next_disk) {
        *next_disk = t + DISK_CHECK_S;
        int truncated = 0;
        unsigned long long used = audit_dir_usage(w->usage_dir, DISK_ENTRIES_WALKED, &truncated);
        if (used > end->disk_peak)
            end->disk_peak = used;
        unsigned long long free_bytes = l->disk_floor_bytes ? audit_disk_free(w->usage_dir) : 0;
        int floor = l->disk_floor_bytes && free_bytes < l->disk_floor_bytes;
        if (used > l->disk_bytes || truncated || floor) {
            end->resource = AUDIT_RESOURCE_DISK;
            end->resource_used = used;
            end->resource_limit = l->disk_bytes;
            if (truncated)
                snprintf(end->resource_detail, sizeof end->resource_detail,
                         "more than %d files and directories in the audit's directory", DISK_ENTRIES_WALKED);
            else if (floor)
                snprintf(end->resource_detail, sizeof end->resource_detail,
                         "its filesystem had %.1f MiB free, below the floor of %.1f MiB",
                         (double)free_bytes / 1048576.0, (double)l->disk_floor_bytes / 1048576.0);
            return 1;
        }
    }
    return 0;
}

/* Until the worker ends, or its time is up (SIGTERM first: kaudit run passes
 * it on to the runner and then records how the session ended; SIGKILL for
 * what stays after 5 s), or it goes over a limit of memory or disk (its
 * processes but the recorder killed at once, since the next half second may
 * be the one the machine runs out in, then the recorder as at the time
 * limit).  A SIGINT, SIGTERM or SIGHUP to us takes the worker's group with us.
 * 0 with its status, -1 when it cannot be waited for. */
static int wait_for_worker(const struct audit_worker *w, pid_t child, const sigset_t *signals,
                           const sigset_t *old_mask, struct kat_runner_end *end, int *status, char *err, size_t n)
{
    double deadline = now_s() + w->timeout_s;
    double next_memory = 0, next_disk = 0;
    int stopping = 0;
    double term_sent = 0;
    for (;;) {
        pid_t got = waitpid(child, status, WNOHANG);
        if (got == child)
            return 0;
        if (got < 0 && errno != EINTR) {
            snprintf(err, n, "cannot wait for the worker: %s", strerror(errno));
            kill_leftovers(child);
            sigprocmask(SIG_SETMASK, old_mask, NULL);
            return -1;
        }
        double t = now_s();
        if (!stopping && t >= deadline) {
            end->timed_out = 1;
            stopping = 1;
            term_sent = t;
            kill(-child, SIGTERM);
        } else if (!stopping && over_limit(w, child, t, &next_memory, &next_disk, end)) {
            stopping = 1;
            term_sent = t;
            kill_tree_but(child, w->record ? child : 0);
            kill(-child, SIGTERM);
        } else if (stopping && t - term_sent > 5.0) {
            kill(-child, SIGKILL);
        }
        reap_others(child);
        /* until a child of ours ends (the worker, or one reparented to us), at most 50 ms */
        struct timespec slice = { 0, 50 * 1000000L };
        int sig = sigtimedwait(signals, NULL, &slice);
        if (sig == SIGINT || sig == SIGTERM || sig == SIGHUP) {
            kill_leftovers(child);
            sigprocmask(SIG_SETMASK, old_mask, NULL);
            signal(sig, SIG_DFL);
            raise(sig);
            _exit(128 + sig);
        }
    }
}

/* How the worker ended, into end. */
static void record_worker_end(const struct audit_worker *w, int status, struct kat_runner_end *end)
{
    if (WIFEXITED(status)) {
        end->exited = 1;
        end->status = WEXITSTATUS(status);
        /* kaudit run reports the runner's death by signal N as 128 + N */
        if (w->record && end->status > 128 && end->status < 128 + 65) {
            end->exited = 0;
            end->signal = end->status - 128;
        }
    } else if (WIFSIGNALED(status)) {
        end->signal = WTERMSIG(status);
        if (w->record && !end->timed_out && !end->resource)
            end->recorder_killed = 1;
    }
}

int audit_exec(const struct audit_worker *w, struct kat_runner_end *end, char *err, size_t n)
{
    memset(end, 0, sizeof *end);
    end->timeout_s = w->timeout_s;
    char exe[4096];
    ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (len <= 0) {
        snprintf(err, n, "cannot find the kaudit binary (/proc/self/exe): %s", strerror(errno));
        return -1;
    }
    exe[len] = '\0';
    struct confine conf;
    prepare_worker_confinement(w, &conf);
    /* the child says through this pipe when it could not confine itself */
    int report[2];
    if (pipe2(report, O_CLOEXEC) != 0) {
        snprintf(err, n, "cannot make a pipe: %s", strerror(errno));
        confine_release(&conf);
        return -1;
    }
    int log = open(w->log_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (log < 0) {
        snprintf(err, n, "cannot write '%s': %s", w->log_path, strerror(errno));
        confine_release(&conf);
        close(report[0]);
        close(report[1]);
        return -1;
    }
    /* Orphans of the worker come back to us, not to init. */
    prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
    /* SIGCHLD blocked and waited for (sigtimedwait), not polled: when the
     * recorder dies its runner is reparented to us, and a candidate that
     * killed its parent once kills its new parent (us) on its next call
     * unless the worker's group is killed at once. */
    /* SIGINT, SIGTERM and SIGHUP too: the worker runs in a group of its own
     * (no ^C reaches it) and a batch that is killed sends us SIGTERM (its
     * children's parent-death signal); the worker and its leftovers go
     * before we do, instead of running on, orphaned. */
    sigset_t chld, old_mask;
    sigemptyset(&chld);
    sigaddset(&chld, SIGCHLD);
    sigaddset(&chld, SIGINT);
    sigaddset(&chld, SIGTERM);
    sigaddset(&chld, SIGHUP);
    sigprocmask(SIG_BLOCK, &chld, &old_mask);
    fflush(NULL);
    pid_t child = fork();
    if (child < 0) {
        snprintf(err, n, "cannot fork: %s", strerror(errno));
        sigprocmask(SIG_SETMASK, &old_mask, NULL);
        close(log);
        confine_release(&conf);
        close(report[0]);
        close(report[1]);
        return -1;
    }
    if (child == 0)
        run_worker_child(w, exe, log, &conf, report[1], &old_mask);
    close(log);
    confine_release(&conf);
    setpgid(child, child); /* both sides, so the group exists before we signal it */
    close(report[1]);
    int child_errno = 0;
    ssize_t got_report;
    while ((got_report = read(report[0], &child_errno, sizeof child_errno)) < 0 && errno == EINTR) {
    }
    close(report[0]);
    if (got_report == (ssize_t)sizeof child_errno) {
        waitpid(child, NULL, 0);
        sigprocmask(SIG_SETMASK, &old_mask, NULL);
        snprintf(err, n, "cannot confine the worker (Landlock): %s", strerror(child_errno));
        return -1;
    }
    int status = 0;
    if (wait_for_worker(w, child, &chld, &old_mask, end, &status, err, n) != 0)
        return -1;
    /* the worker has ended: what is left of its group goes now, before anything else */
    kill(-child, SIGKILL);
    record_worker_end(w, status, end);
    kill_leftovers(child);
    struct timespec none = { 0, 0 };
    while (sigtimedwait(&chld, NULL, &none) > 0) {
    }
    sigprocmask(SIG_SETMASK, &old_mask, NULL);
    return 0;
}
