/*
 * process.c - the traced process's life: start, children, exec, exit.
 *
 * Every process of the session gets its own trace.  Children inherit the
 * preload through the environment; a harness that scrubs the environment
 * (subprocess.run(env={}), execve with a fresh envp) gets our variables put
 * back, and the child's trace says so.  The parent records the wait status of
 * every child it reaps, which is the only place a child killed by a signal
 * can have its end written down.
 *
 * Wrappers here run in awkward places: an exec wrapper may run in a vfork
 * child that shares the parent's memory, so it allocates only on the stack,
 * takes no lock, and writes no record unless this process owns the trace.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <execinfo.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "child_env.h"
#include "preload_internal.h"

extern char **environ;

void kat_writer_before_fork(void);
void kat_writer_after_fork_parent(void);
void kat_writer_resume(void);
int kat_writer_owned_by_this_process(void);
void kat_cupti_after_fork_child(void);

/* ---- the variables every traced process must have ------------------------ */

/* A value longer than this is not re-injected (it would not be ours). */
#define INJECTED_BYTES 4096
/* Environments whose composed entries need more than this (a huge
 * LD_PRELOAD or PYTHONPATH) are passed on as they are: the stack of the
 * thread that calls exec may be small. */
#define MAX_COMPOSED_BYTES 65536

/*
 * What children must carry (session/child_env.h), copied when the library
 * is loaded, before any code of the program runs, so that a program that
 * changes its own environment later cannot redirect what children get.
 */
static struct {
    char preload[INJECTED_BYTES], session[INJECTED_BYTES], token[INJECTED_BYTES], supervisor[INJECTED_BYTES];
    char cupti[INJECTED_BYTES];
    char audit[INJECTED_BYTES], python_dir[INJECTED_BYTES], python_watch[INJECTED_BYTES];
    struct kat_injection inj;
    int ready;
} injection;

/* Copies value into buf; NULL when unset, empty or too long. */
static const char *keep_value(char *buf, const char *value)
{
    if (!value || !value[0] || strlen(value) >= INJECTED_BYTES)
        return NULL;
    kat_strlcpy(buf, value, INJECTED_BYTES);
    return buf;
}

static void prepare_injection(void)
{
    const char *preload = getenv(KAT_ENV_PRELOAD);
    Dl_info self;
    if ((!preload || !preload[0]) && dladdr((void *)prepare_injection, &self) && self.dli_fname)
        preload = self.dli_fname;
    struct kat_injection *inj = &injection.inj;
    inj->preload = keep_value(injection.preload, preload);
    if (!inj->preload)
        return;
    inj->session = keep_value(injection.session, getenv(KAT_ENV_SESSION));
    inj->token = keep_value(injection.token, getenv(KAT_ENV_SESSION_TOKEN));
    inj->supervisor = keep_value(injection.supervisor, getenv(KAT_ENV_SUPERVISOR));
    inj->cupti = keep_value(injection.cupti, getenv(KAT_ENV_CUPTI));
    const char *audit = getenv(KAT_ENV_AUDIT);
    if (audit && audit[0] == '/')
        inj->audit = keep_value(injection.audit, audit);
    inj->python_dir = keep_value(injection.python_dir, getenv(KAT_ENV_PYTHON_DIR));
    if (inj->python_dir)
        inj->python_watch = keep_value(injection.python_watch, getenv(KAT_ENV_PYTHON_WATCH));
    injection.ready = 1;
}

const char *kat_injected_token(void)
{
    return injection.ready ? injection.inj.token : getenv(KAT_ENV_SESSION_TOKEN);
}

const char *kat_injected_supervisor(void)
{
    return injection.ready ? injection.inj.supervisor : getenv(KAT_ENV_SUPERVISOR);
}

static int needs_injection(char *const envp[])
{
    return injection.ready && !kat_child_env_complete(&injection.inj, envp);
}

/*
 * A macro, because the environment must live in the caller's stack frame.
 * `reinjected` ends up 0 when the environment is passed on unchanged.
 */
#define WITH_INJECTED_ENV(envp_in, envp_out, reinjected)                                          \
    int reinjected = needs_injection(envp_in);                                                     \
    char *const *envp_out = (envp_in);                                                             \
    if (reinjected) {                                                                             \
        size_t slots_##envp_out = kat_child_env_slots(envp_in);                                    \
        size_t bytes_##envp_out = kat_child_env_bytes(&injection.inj, envp_in);                    \
        char **built_##envp_out = NULL;                                                            \
        if (bytes_##envp_out <= MAX_COMPOSED_BYTES)                                                \
            built_##envp_out = kat_child_env(&injection.inj, envp_in, 1,                           \
                                             alloca(slots_##envp_out * sizeof(char *)),            \
                                             slots_##envp_out, alloca(bytes_##envp_out),           \
                                             bytes_##envp_out);                                    \
        if (built_##envp_out)                                                                      \
            envp_out = built_##envp_out;                                                           \
        else                                                                                       \
            reinjected = 0;                                                                        \
    }

/* ---- recording helpers ------------------------------------------------------ */

static uint32_t intern_argv(char *const argv[])
{
    char buf[8192];
    size_t used = 0;
    if (!argv)
        return 0;
    for (char *const *a = argv; *a && used < sizeof(buf); a++) {
        size_t len = strlen(*a);
        if (used + len + 1 > sizeof(buf))
            len = sizeof(buf) - used - 1;
        memcpy(buf + used, *a, len);
        used += len;
        buf[used++] = '\0';
    }
    return used ? kat_intern_n(buf, used - 1) : 0;
}

static void record_exec(const char *path, char *const argv[], int reinjected, int error)
{
    struct kat_exec_rec rec = {
        .path_string = kat_intern(path),
        .argv_string = intern_argv(argv),
        .reinjected = (uint32_t)reinjected,
        .error = error,
        .time_ns = kat_now_ns(),
    };
    kat_emit(KAT_REC_EXEC, &rec, sizeof(rec));
}

static void record_child_exit(pid_t pid, int status)
{
    if (pid <= 0 || WIFSTOPPED(status) || WIFCONTINUED(status))
        return;
    struct kat_child_exit_rec rec = { .child_pid = (uint32_t)pid, .wait_status = status,
                                      .time_ns = kat_now_ns() };
    kat_emit(KAT_REC_CHILD_EXIT, &rec, sizeof(rec));
}

#define REAL(name, type) ((type)dlsym(RTLD_NEXT, name))

/* ---- exec ------------------------------------------------------------------- */

typedef int (*execve_fn)(const char *, char *const[], char *const[]);

/* Everything an exec does around the real call, for one program image. */
/* Before an exec: the trace says where it goes, and is closed so that what
 * was recorded survives the image change.  Returns whether this process owns
 * the trace (false in a vfork child, which must not touch it). */
static int exec_starting(const char *path, char *const argv[], int reinjected)
{
    int owned = kat_writer_owned_by_this_process();
    if (owned) {
        record_exec(path, argv, reinjected, 0);
        kat_cupti_flush("exec");
        kat_writer_close(KAT_END_EXEC, 0, 0);
    }
    return owned;
}

/* After an exec that returned, i.e. failed: the same trace goes on. */
static void exec_failed(int owned, const char *path, char *const argv[], int reinjected, int error)
{
    if (owned) {
        kat_writer_resume();
        record_exec(path, argv, reinjected, error);
    }
    errno = error;
}

static int exec_with(int (*call)(const char *, char *const[], char *const[]), const char *path,
                     char *const argv[], char *const envp[])
{
    WITH_INJECTED_ENV(envp, env, reinjected);
    int owned = exec_starting(path, argv, reinjected);
    int rc = call(path, argv, env);
    exec_failed(owned, path, argv, reinjected, errno);
    return rc;
}

static execve_fn real_execve_fn(void)
{
    static execve_fn fn;
    if (!fn)
        fn = REAL("execve", execve_fn);
    return fn;
}

static int call_execve(const char *path, char *const argv[], char *const envp[])
{
    execve_fn fn = real_execve_fn();
    if (!fn) {
        errno = ENOSYS;
        return -1;
    }
    return fn(path, argv, envp);
}

static int call_execvpe(const char *file, char *const argv[], char *const envp[])
{
    static execve_fn fn;
    if (!fn)
        fn = REAL("execvpe", execve_fn);
    if (!fn) {
        errno = ENOSYS;
        return -1;
    }
    return fn(file, argv, envp);
}

KAT_EXPORT int execve(const char *path, char *const argv[], char *const envp[])
{
    return exec_with(call_execve, path, argv, envp);
}

KAT_EXPORT int execv(const char *path, char *const argv[])
{
    return exec_with(call_execve, path, argv, environ);
}

KAT_EXPORT int execvpe(const char *file, char *const argv[], char *const envp[])
{
    return exec_with(call_execvpe, file, argv, envp);
}

KAT_EXPORT int execvp(const char *file, char *const argv[])
{
    return exec_with(call_execvpe, file, argv, environ);
}

/* execl* collect their variadic arguments into an argv on the stack. */
#define COLLECT_ARGS(first, argv_out, ap)                                   \
    size_t argc_##argv_out = 1;                                              \
    va_start(ap, first);                                                     \
    while (va_arg(ap, char *))                                               \
        argc_##argv_out++;                                                   \
    va_end(ap);                                                              \
    char **argv_out = alloca((argc_##argv_out + 1) * sizeof(char *));       \
    argv_out[0] = (char *)(first);                                           \
    va_start(ap, first);                                                     \
    for (size_t i_ = 1; i_ <= argc_##argv_out; i_++)                         \
        argv_out[i_] = va_arg(ap, char *);

KAT_EXPORT int execl(const char *path, const char *arg, ...)
{
    va_list ap;
    COLLECT_ARGS(arg, argv, ap);
    va_end(ap);
    return exec_with(call_execve, path, argv, environ);
}

KAT_EXPORT int execlp(const char *file, const char *arg, ...)
{
    va_list ap;
    COLLECT_ARGS(arg, argv, ap);
    va_end(ap);
    return exec_with(call_execvpe, file, argv, environ);
}

KAT_EXPORT int execle(const char *path, const char *arg, ...)
{
    va_list ap;
    COLLECT_ARGS(arg, argv, ap);
    char *const *envp = va_arg(ap, char *const *); /* follows the NULL */
    va_end(ap);
    return exec_with(call_execve, path, argv, envp);
}

KAT_EXPORT int fexecve(int fd, char *const argv[], char *const envp[])
{
    typedef int (*fexecve_fn)(int, char *const[], char *const[]);
    static fexecve_fn fn;
    if (!fn)
        fn = REAL("fexecve", fexecve_fn);
    if (!fn) {
        errno = ENOSYS;
        return -1;
    }
    WITH_INJECTED_ENV(envp, env, reinjected);
    int owned = exec_starting("(fexecve)", argv, reinjected);
    int rc = fn(fd, argv, env);
    exec_failed(owned, "(fexecve)", argv, reinjected, errno);
    return rc;
}

/* ---- posix_spawn ---------------------------------------------------------- */

typedef int (*spawn_fn)(pid_t *, const char *, const posix_spawn_file_actions_t *,
                        const posix_spawnattr_t *, char *const[], char *const[]);

static int spawn_with(const char *which, const char *path, pid_t *pid,
                      const posix_spawn_file_actions_t *actions, const posix_spawnattr_t *attr,
                      char *const argv[], char *const envp[])
{
    spawn_fn fn = REAL(which, spawn_fn);
    if (!fn)
        return ENOSYS;
    WITH_INJECTED_ENV(envp, env, reinjected);
    (void)reinjected;
    pid_t child = 0;
    int rc = fn(&child, path, actions, attr, argv, env);
    if (pid)
        *pid = child;
    if (rc == 0 && kat_writer_owned_by_this_process()) {
        struct kat_fork_rec rec = {
            .child_pid = (uint32_t)child, .kind = KAT_FORK_POSIX_SPAWN,
            .path_string = kat_intern(path), .argv_string = intern_argv(argv),
            .time_ns = kat_now_ns(),
        };
        kat_emit(KAT_REC_FORK, &rec, sizeof(rec));
    }
    return rc;
}

KAT_EXPORT int posix_spawn(pid_t *pid, const char *path, const posix_spawn_file_actions_t *actions,
                           const posix_spawnattr_t *attr, char *const argv[], char *const envp[])
{
    return spawn_with("posix_spawn", path, pid, actions, attr, argv, envp);
}

KAT_EXPORT int posix_spawnp(pid_t *pid, const char *file, const posix_spawn_file_actions_t *actions,
                            const posix_spawnattr_t *attr, char *const argv[], char *const envp[])
{
    return spawn_with("posix_spawnp", file, pid, actions, attr, argv, envp);
}

/* ---- fork and wait ------------------------------------------------------- */

KAT_EXPORT pid_t fork(void)
{
    typedef pid_t (*fork_fn)(void);
    static fork_fn fn;
    if (!fn)
        fn = REAL("fork", fork_fn);
    if (!fn) {
        errno = ENOSYS;
        return -1;
    }
    pid_t child = fn();
    if (child > 0 && kat_writer_owned_by_this_process()) {
        int saved = errno;
        struct kat_fork_rec rec = { .child_pid = (uint32_t)child, .kind = KAT_FORK_FORK,
                                    .time_ns = kat_now_ns() };
        kat_emit(KAT_REC_FORK, &rec, sizeof(rec));
        errno = saved;
    }
    return child;
}

KAT_EXPORT pid_t waitpid(pid_t pid, int *status, int options)
{
    typedef pid_t (*waitpid_fn)(pid_t, int *, int);
    static waitpid_fn fn;
    if (!fn)
        fn = REAL("waitpid", waitpid_fn);
    int local = 0;
    pid_t rc = fn(pid, status ? status : &local, options);
    if (rc > 0) {
        int saved = errno;
        record_child_exit(rc, status ? *status : local);
        errno = saved;
    }
    return rc;
}

KAT_EXPORT pid_t wait(int *status)
{
    return waitpid(-1, status, 0);
}

KAT_EXPORT pid_t wait4(pid_t pid, int *status, int options, struct rusage *usage)
{
    typedef pid_t (*wait4_fn)(pid_t, int *, int, struct rusage *);
    static wait4_fn fn;
    if (!fn)
        fn = REAL("wait4", wait4_fn);
    int local = 0;
    pid_t rc = fn(pid, status ? status : &local, options, usage);
    if (rc > 0) {
        int saved = errno;
        record_child_exit(rc, status ? *status : local);
        errno = saved;
    }
    return rc;
}

KAT_EXPORT int waitid(idtype_t idtype, id_t id, siginfo_t *info, int options)
{
    typedef int (*waitid_fn)(idtype_t, id_t, siginfo_t *, int);
    static waitid_fn fn;
    if (!fn)
        fn = REAL("waitid", waitid_fn);
    int rc = fn(idtype, id, info, options);
    /* WNOWAIT leaves the child to be reaped again: record it then. */
    if (rc == 0 && info && info->si_pid > 0 && !(options & WNOWAIT)) {
        int saved = errno;
        int status = 0;
        if (info->si_code == CLD_EXITED)
            status = (info->si_status & 0xff) << 8;
        else if (info->si_code == CLD_KILLED || info->si_code == CLD_DUMPED)
            status = (info->si_status & 0x7f) | (info->si_code == CLD_DUMPED ? 0x80 : 0);
        if (info->si_code == CLD_EXITED || info->si_code == CLD_KILLED
            || info->si_code == CLD_DUMPED)
            record_child_exit(info->si_pid, status);
        errno = saved;
    }
    return rc;
}

/* ---- exit ------------------------------------------------------------------ */

static atomic_int exit_status_known;
static atomic_int exit_status;

KAT_EXPORT void exit(int status)
{
    typedef void (*exit_fn)(int) __attribute__((noreturn));
    exit_fn fn = REAL("exit", exit_fn);
    atomic_store(&exit_status, status);
    atomic_store(&exit_status_known, 1);
    if (fn)
        fn(status);
    _exit(status);
}

/*
 * A program that returns from main never calls exit() through the dynamic
 * linker (libc calls it internally), so its status would be unknown to its
 * own trace.  Wrapping main through __libc_start_main sees the return value.
 */
typedef int (*main_fn)(int, char **, char **);
static main_fn program_main;

static int main_returning_status(int argc, char **argv, char **envp)
{
    int rc = program_main(argc, argv, envp);
    atomic_store(&exit_status, rc);
    atomic_store(&exit_status_known, 1);
    return rc;
}

KAT_EXPORT int __libc_start_main(main_fn main, int argc, char **argv, void (*init)(void),
                                 void (*fini)(void), void (*rtld_fini)(void), void *stack_end)
{
    typedef int (*start_fn)(main_fn, int, char **, void (*)(void), void (*)(void),
                            void (*)(void), void *);
    start_fn real = (start_fn)dlvsym(RTLD_NEXT, "__libc_start_main", "GLIBC_2.34");
    if (!real)
        real = (start_fn)dlsym(RTLD_NEXT, "__libc_start_main");
    program_main = main;
    return real(main ? main_returning_status : main, argc, argv, init, fini, rtld_fini, stack_end);
}

static void end_now(int status)
{
    if (kat_writer_owned_by_this_process()) {
        kat_cupti_flush("_exit");
        kat_libraries_poll();
        kat_timing_symbols_snapshot(KAT_SYMBOL_AT_END);
        kat_writer_close(KAT_END__EXIT, status, KAT_END_FLAG_STATUS_KNOWN);
    }
}

KAT_EXPORT void _exit(int status)
{
    typedef void (*exit_fn)(int) __attribute__((noreturn));
    exit_fn fn = REAL("_exit", exit_fn);
    end_now(status);
    if (fn)
        fn(status);
    for (;;)
        raise(SIGKILL);
}

KAT_EXPORT void _Exit(int status)
{
    _exit(status);
}

/* ---- lifetime ---------------------------------------------------------------- */

static void before_fork(void)
{
    kat_writer_before_fork();
}

static void after_fork_parent(void)
{
    kat_writer_after_fork_parent();
}

static void after_fork_child(void)
{
    kat_note_fork_child();
    kat_writer_after_fork_child();
    kat_cupti_after_fork_child();
    atomic_store(&exit_status_known, 0);
    /* Every process gets its trace, also one that only forks and execs:
     * its origin and parent are evidence of who started what. */
    kat_health(KAT_HEALTH_PRELOAD_LOADED, "fork child", 1);
}

/*
 * Whether the dynamic linker loaded our rtld-audit module (LD_AUDIT): without
 * it, vendor entry points resolved with dlsym bypass the wrappers.  The
 * module lives in its own link-map namespace, which dl_iterate_phdr does not
 * show, so the mappings are read instead (once, at start).
 */
static void record_audit_module(void)
{
    char path[1024] = "";
    FILE *maps = fopen("/proc/self/maps", "re");
    if (maps) {
        char line[1400];
        while (!path[0] && fgets(line, sizeof(line), maps)) {
            char *file = strchr(line, '/');
            if (file && strstr(file, "/libkaudit_audit.so")) {
                file[strcspn(file, "\n")] = '\0';
                kat_strlcpy(path, file, sizeof(path));
            }
        }
        fclose(maps);
    }
    kat_health(KAT_HEALTH_AUDIT_MODULE, path[0] ? path : "not loaded (LD_AUDIT unset or ignored)",
               path[0] != '\0');
}

static pthread_once_t init_once = PTHREAD_ONCE_INIT;

static void init(void)
{
    const char *dir = getenv(KAT_ENV_SESSION);
    if (!dir || dir[0] != '/')
        return; /* not under kaudit: every wrapper passes straight through */
    prepare_injection();
    pthread_atfork(before_fork, after_fork_parent, after_fork_child);
    /* backtrace() loads libgcc_s on first use; do that now, not inside a
     * CUDA driver callback. */
    void *frames[2];
    backtrace(frames, 2);
    kat_health(KAT_HEALTH_PRELOAD_LOADED, KAUDIT_VERSION, 1);
    record_audit_module();
    /* which clock the host timestamps come from (host_clock.c) */
    const char *host_clock = kat_host_clock_name();
    kat_health(KAT_HEALTH_HOST_CLOCK, host_clock, strcmp(host_clock, "tsc") == 0);
    kat_libraries_poll();
    kat_timing_symbols_snapshot(KAT_SYMBOL_AT_START);
}

void kat_process_init(void)
{
    pthread_once(&init_once, init);
}

__attribute__((constructor)) static void preload_constructor(void)
{
    kat_process_init();
}

/* Preloaded first, so finalized last: after every exit handler and the other
 * libraries' destructors, while their objects are still mapped. */
__attribute__((destructor)) static void preload_destructor(void)
{
    if (kat_writer_owned_by_this_process()) {
        kat_libraries_poll();
        kat_timing_symbols_snapshot(KAT_SYMBOL_AT_END);
    }
    if (kat_writer_owned_by_this_process())
        kat_writer_close(KAT_END_EXIT, atomic_load(&exit_status),
                         atomic_load(&exit_status_known) ? KAT_END_FLAG_STATUS_KNOWN : 0);
}
