/*
 * supervise.c - the recorded run (supervise.h): the session directory, the
 * child's environment, the spool that copies each process's trace out of its
 * reach, the census of the run's processes, the session's protection and the
 * seal.  The command's stdout and stderr are its own: kaudit writes its
 * messages, prefixed `kaudit:`, only to its own stderr and to DIR/kaudit.log.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "child_env.h"
#include "kaudit_env.h"
#include "trace_format.h"
#include "info_writer.h"
#include "resources.h"
#include "safe_file.h"
#include "session_name.h"
#ifdef KAUDIT_HAVE_SEAL
#include "session_seal.h"
#endif
#include "confine.h"
#include "run_census.h"
#include "privilege.h"
#include "proc_events.h"
#include "run_protect.h"
#include "supervise.h"
#include "toolbox.h"
#include "trace_spool.h"

/* The seal over info and every trace, once the command has ended
 * (session_seal.h); said in kaudit.log, and on stderr with -v. */
#ifdef KAUDIT_HAVE_SEAL
/* What this run wrote into its session, for the seal (session_seal.h). */
static struct {
    struct seal_account *seal;
    char session[PATH_MAX];
} account;

static void account_log(void *arg, const char *dir, const char *text, size_t n)
{
    (void)arg;
    if (account.seal && !strcmp(dir, account.session))
        seal_account_append(account.seal, "kaudit.log", text, n);
}

static void account_spool(void *arg, enum spool_event what, const char *name, const void *bytes, size_t n)
{
    (void)arg;
    if (what == SPOOL_APPENDED)
        seal_account_append(account.seal, name, bytes, n);
    else if (what == SPOOL_REMOVED)
        seal_account_remove(account.seal, name);
    else
        seal_account_lost(account.seal, name);
}

/* From here on every write of ours to the session is accounted; files that
 * were there before (-d a directory kaudit recorded into anyway) are sealed
 * as they are. */
static void account_open(const char *session)
{
    account.seal = seal_account_new();
    snprintf(account.session, sizeof account.session, "%s", session);
    kat_session_log_observe(account_log, NULL);
    DIR *d = opendir(session);
    struct dirent *e;
    while (d && (e = readdir(d)))
        if (e->d_name[0] != '.')
            seal_account_lost(account.seal, e->d_name);
    if (d)
        closedir(d);
}
#endif

static void seal_session(const char *session, const struct kat_session_info *info, int verbose)
{
#ifdef KAUDIT_HAVE_SEAL
    char chain[33], err[1024], changed[512];
    /* said before the seal is written: kaudit.log is one of the files it covers */
    kat_session_log(session, "note", "sealing the session (DIR/seal)");
    char *text = kat_session_info_render(info);
    if (text)
        seal_account_replace(account.seal, "info", text, strlen(text));
    else
        seal_account_lost(account.seal, "info");
    free(text);
    if (seal_account_compare(session, account.seal, changed, sizeof changed, err, sizeof err) == 1) {
        /* someone else wrote the session while the command ran (around the
         * read-only mount: docs/threat-model.md); the seal holds what kaudit
         * wrote, so the session no longer verifies */
        kat_session_log(session, "error", "the session was changed by another process during the run: %s", changed);
        kat_say("error", "the session was changed by another process during the run (%s): it will not verify", changed);
    }
    if (session_seal_write_account(session, account.seal, chain, err, sizeof err) == 0) {
        if (verbose)
            kat_say("note", "session sealed, chain %s", chain);
    } else {
        kat_session_log(session, "warning", "not sealed: %s", err);
        kat_say("warning", "the session could not be sealed: %s", err);
    }
    kat_session_log_observe(NULL, NULL);
    seal_account_free(account.seal);
    account.seal = NULL;
#else
    kat_session_log(session, "note", "not sealed: this kaudit was built without xxHash (core build)");
    (void)info;
    (void)verbose;
#endif
}

extern char **environ;

static int file_readable(const char *path)
{
    return path && access(path, R_OK) == 0;
}

/* The preload library: named by the user, else in the binary's layout
 * (supervisor/resources.h). */
static int find_preload(char *out, size_t size)
{
    char err[PATH_MAX + 256];
    if (kres_preload(out, size, err, sizeof(err)) == 0)
        return 0;
    kat_say("error", "%s", err);
    return -1;
}

/*
 * The rtld-audit module that sends vendor entry points found by dlsym() to
 * the preload's wrappers: named by KAUDIT_AUDIT_LIB ("none" to go without),
 * else libkaudit_audit.so beside the preload.  0 found, 1 turned off, -1 not
 * readable (out then holds the path tried).  The run goes on without it.
 */
static int find_audit(const char *preload, char *out)
{
    return kres_audit(preload, out, PATH_MAX);
}

/* Whether dir holds anything besides . and .. */
static int dir_has_entries(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    struct dirent *e;
    int found = 0;
    while (!found && (e = readdir(d)))
        found = strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
    closedir(d);
    return found;
}

/*
 * The session directory: created, or an existing one.  A symlink given as -d
 * is refused (the session would land wherever it points, docs/session-format.md);
 * an existing non-empty directory that holds no session is used with a
 * warning on stderr and in kaudit.log.
 */
static int make_session_dir(const char *dir, int overwrite, char *absolute, int *foreign)
{
    *foreign = 0;
    char bare[PATH_MAX];
    snprintf(bare, sizeof bare, "%s", dir);
    for (size_t len = strlen(bare); len > 1 && bare[len - 1] == '/'; len--)
        bare[len - 1] = '\0';
    struct stat st;
    if (lstat(bare, &st) == 0 && S_ISLNK(st.st_mode)) {
        kat_say("error", "session directory '%s' is a symbolic link; give the directory itself", dir);
        return -1;
    }
    int created = mkdir(dir, 0755) == 0;
    if (!created && errno != EEXIST) {
        kat_say("error", "cannot create session directory '%s': %s", dir, strerror(errno));
        return -1;
    }
    if (lstat(bare, &st) != 0 || !S_ISDIR(st.st_mode)) {
        kat_say("error", "session directory '%s' is not a directory", dir);
        return -1;
    }
    if (access(dir, W_OK | X_OK) != 0) {
        kat_say("error", "cannot write to session directory '%s': %s", dir, strerror(errno));
        return -1;
    }
    if (!realpath(dir, absolute)) {
        kat_say("error", "cannot resolve session directory '%s': %s", dir, strerror(errno));
        return -1;
    }
    char info[PATH_MAX + 16];
    snprintf(info, sizeof(info), "%s/%s", absolute, KAT_SESSION_INFO_FILE);
    if (lstat(info, &st) == 0) {
        if (!overwrite) {
            kat_say("error", "'%s' already holds a session (use --overwrite or another -d)", dir);
            return -1;
        }
        if (kat_session_clear(absolute) != 0) {
            kat_say("error", "cannot clear the old session in '%s': %s", dir, strerror(errno));
            return -1;
        }
    } else if (!created && dir_has_entries(absolute)) {
        kat_say("warning", "'%s' is not empty and holds no session; recording into it anyway", dir);
        *foreign = 1;
    }
    return 0;
}

/* The child's environment: ours plus the tool's variables (session/child_env.h). */
static char **child_environment(const char *session, const char *token, const char *supervisor, const char *preload,
                                const char *cupti, const char *audit, const char *python_dir,
                                const char *python_watch)
{
    const char *injection = getenv("CUDA_INJECTION64_PATH");
    if (injection && injection[0] && strcmp(injection, preload) != 0)
        kat_say("warning", "replacing CUDA_INJECTION64_PATH='%s': CUPTI takes one tool", injection);
    struct kat_injection inj = { .preload = preload, .session = session, .token = token, .supervisor = supervisor,
                                 .cupti = cupti,
                                 .audit = audit, .python_dir = python_dir, .python_watch = python_watch };
    size_t slots = kat_child_env_slots(environ), bytes = kat_child_env_bytes(&inj, environ);
    char **env = malloc(slots * sizeof(char *) + bytes);
    if (!env)
        return NULL;
    return kat_child_env(&inj, environ, 0, env, slots, (char *)(env + slots), bytes);
}

/* The zombies of processes reparented to us (we are a subreaper), after the
 * census has seen them.  1 when the command itself was among them (its
 * status in *status). */
static int reap_orphans(pid_t command, int *status)
{
    int ended = 0, st;
    pid_t w;
    while ((w = waitpid(-1, &st, WNOHANG)) > 0)
        if (w == command) {
            *status = st;
            ended = 1;
        }
    return ended;
}

/* A list of processes for info: `PID COMM, ...`, as long as it fits. */
struct process_list {
    char text[1024];
    size_t len, count;
};

static void list_add(struct process_list *l, pid_t pid, const char *comm)
{
    if (l->len < sizeof l->text - 64)
        l->len += (size_t)snprintf(l->text + l->len, sizeof l->text - l->len, "%s%d %s", l->len ? ", " : "",
                                   (int)pid, comm);
    l->count++;
}

/* Whether every program p ran after an exec handed over a trace: one opened
 * (by its header) after its first exec for each exec, and one after its
 * last.  A traced parent's fork child that then execs an untraced program
 * has a trace of its own, from before: it does not count for the program. */
static int exec_images_traced(const struct trace_spool *spool, const struct proc_instance *p)
{
    return trace_spool_images_since(spool, p->pid, p->start, p->first_exec_ns) >= p->execs &&
           trace_spool_images_since(spool, p->pid, p->start, p->last_exec_ns) >= 1;
}

/* The processes that exec'd a program, from the kernel's events (every one,
 * however short): those whose programs left no trace. */
static void account_execs(const struct proc_events *events, const struct trace_spool *spool,
                          struct process_list *untraced, struct process_list *statics, const char *session)
{
    for (size_t i = 0; i < events->n; i++) {
        const struct proc_instance *p = &events->procs[i];
        if (!p->execs || exec_images_traced(spool, p))
            continue;
        if (p->is_static == 1) {
            list_add(statics, p->pid, p->comm);
            continue;
        }
        if (p->is_static >= 0) {
            list_add(untraced, p->pid, p->comm);
            continue;
        }
        /* gone before /proc could be read: the kernel's exec event names no
         * program, so the name is the one it had before its exec */
        char name[96];
        snprintf(name, sizeof name, "(exec'd from %s, ended before kaudit run read its program)", p->comm);
        kat_session_log(session, "note",
                        "process %d (%s) ended before kaudit run could read the program it exec'd: counted as "
                        "dynamically linked",
                        (int)p->pid, p->comm);
        list_add(untraced, p->pid, name);
    }
}

/* The processes the census saw (and the kernel's events, when kaudit run
 * had them) against the traces: info untraced_processes (dynamic programs
 * without a trace: they ran without the preload) and static_processes
 * (which cannot have one).  A process that exec'd is judged by its events;
 * the census decides for the others (a fork child that did not exec). */
static void account_processes(struct kat_session_info *info, const struct run_census *c,
                              const struct proc_events *events, const struct trace_spool *spool,
                              const char *session)
{
    struct process_list untraced = { .len = 0 }, statics = { .len = 0 };
    if (events)
        account_execs(events, spool, &untraced, &statics, session);
    for (size_t i = 0; i < c->n; i++) {
        const struct census_process *p = &c->seen[i];
        const struct proc_instance *known = events ? proc_events_find(events, p->pid, p->start) : NULL;
        if ((known && known->execs) || trace_spool_has_process(spool, p->pid, p->start))
            continue;
        list_add(p->is_static ? &statics : &untraced, p->pid, p->comm);
    }
    if (untraced.count) {
        kat_session_info_set(info, "untraced_processes", "%zu: %s", untraced.count, untraced.text);
        kat_session_log(session, "warning", "%zu process(es) of the run had no trace (they ran without the preload): %s",
                        untraced.count, untraced.text);
    }
    if (statics.count)
        kat_session_info_set(info, "static_processes", "%zu: %s", statics.count, statics.text);
}

/* info process_accounting: how the run's processes were seen.  Said before
 * the command runs and again at the end (docs/session-format.md). */
static void say_accounting(struct kat_session_info *info, const struct proc_events *events, const char *session)
{
    if (events->fd >= 0 || !strcmp(events->why, "stopped"))
        kat_session_info_set(info, "process_accounting", "proc-connector");
    else {
        kat_session_info_set(info, "process_accounting", "census: %s", events->why);
        kat_session_log(session, "warning",
                        "only the 50 ms census sees the run's processes (%s): a shorter process may run without "
                        "a trace unseen",
                        events->why);
    }
}

/* At the end: the kernel's events were whole, or the census alone counts. */
static void say_accounting_end(struct kat_session_info *info, struct proc_events *events, pid_t command,
                               const char *session)
{
    if (proc_events_complete(events, command))
        return;
    if (!strcmp(events->why, "stopped")) {
        if (events->overflows)
            snprintf(events->why, sizeof events->why, "the proc connector's events overflowed %lu time(s)",
                     events->overflows);
        else if (events->too_many)
            snprintf(events->why, sizeof events->why, "more processes than the proc connector's list holds");
        else
            snprintf(events->why, sizeof events->why, "the proc connector sent no event for the command");
    }
    say_accounting(info, events, session);
}

static volatile sig_atomic_t child_pid_for_signals;

static void forward_signal(int sig)
{
    if (child_pid_for_signals > 0)
        kill(child_pid_for_signals, sig);
}

/* SIGINT and SIGQUIT: from the terminal they reach CMD directly (same
 * process group) and are not sent again; sent to kaudit alone (kill), they
 * are passed on. */
static void forward_if_sent(int sig, siginfo_t *si, void *ctx)
{
    (void)ctx;
    if (si && si->si_code <= 0 && child_pid_for_signals > 0) /* SI_USER, SI_QUEUE, SI_TKILL */
        kill(child_pid_for_signals, sig);
}



/* The libraries the command runs with (supervisor/resources.h). */
struct run_libraries {
    char preload[PATH_MAX];
    char cupti_path[PATH_MAX];
    const char *cupti;          /* NULL: none */
    char audit_path[PATH_MAX];
    int audit_found;            /* find_audit's answer */
    const char *audit;          /* NULL: none */
    char python_dir[PATH_MAX + 32];
    const char *python;         /* kaudit's sitecustomize folder; NULL: none */
};

static int find_libraries(const struct supervise_options *o, struct run_libraries *lib)
{
    if (find_preload(lib->preload, sizeof lib->preload) != 0)
        return -1;
    lib->cupti = NULL;
    if (o->cupti && o->cupti[0]) {
        if (!realpath(o->cupti, lib->cupti_path) || !file_readable(lib->cupti_path)) {
            kat_say("error", "cannot read the CUPTI library '%s'", o->cupti);
            return -1;
        }
        lib->cupti = lib->cupti_path;
    }
    lib->audit_found = find_audit(lib->preload, lib->audit_path);
    lib->audit = lib->audit_found == 0 ? lib->audit_path : NULL;
    /* kaudit's sitecustomize, beside the preload library (preload/python/) */
    lib->python = NULL;
    if (!o->no_python && kres_python_dir(lib->preload, lib->python_dir, sizeof lib->python_dir) == 0)
        lib->python = lib->python_dir;
    return 0;
}

/* A missing audit module: said in kaudit.log either way; on stderr only
 * when not asked for. */
static void say_audit_library(const struct run_libraries *lib, const char *session)
{
    if (lib->audit_found == 0)
        return;
    char message[PATH_MAX + 256];
    if (lib->audit_found < 0)
        snprintf(message, sizeof(message), "cannot read the audit library '%s': ", lib->audit_path);
    else
        snprintf(message, sizeof(message), "no audit library (%s=none): ", KAT_ENV_AUDIT);
    strcat(message, "vendor functions found with dlsym() run outside any vendor window");
    if (lib->audit_found < 0)
        kat_say("warning", "%s", message);
    kat_session_log(session, "warning", "%s", message);
}

/* The session directory (absolute path in session): -d, kaudit.session for
 * --overwrite alone (as before), else one numbered here (claimed). */
static int claim_session(const struct supervise_options *o, char *claimed, size_t claimed_size, char *session)
{
    const char *dir = o->dir;
    if (!dir && o->overwrite) {
        dir = KAUDIT_SESSION_DEFAULT;
    } else if (!dir) {
        if (kaudit_new_session_dir(claimed, claimed_size) != 0) {
            kat_say("error", "cannot create a session directory here ('%s'): %s", claimed, strerror(errno));
            claimed[0] = '\0';
            return -1;
        }
        dir = claimed;
    }
    int foreign = 0;
    if (make_session_dir(dir, o->overwrite, session, &foreign) != 0)
        return -1;
#ifdef KAUDIT_HAVE_SEAL
    account_open(session);
#endif
    if (foreign)
        kat_session_log(session, "warning", "'%s' was not empty and held no session; recorded into it anyway",
                        dir);
    return 0;
}

/* --write-root: the ruleset is built here, where a failure can be said, and
 * applied in the child after its mount namespace (Landlock forbids mounting
 * once applied). */
static void prepare_confinement(const struct supervise_options *o, struct confine *conf,
                                struct kat_session_info *info)
{
    conf->ruleset_fd = -1;
    if (!o->n_write_roots)
        return;
    confine_prepare(conf, o->write_roots, o->n_write_roots, o->create_only);
    if (conf->ruleset_fd >= 0)
        kat_session_info_set(info, "write_confinement", "landlock ABI %d", conf->abi);
    else
        kat_session_info_set(info, "write_confinement", "none: %s", conf->why);
}

/* What the child tells the parent before its exec: the session's protection,
 * a newline, its privileges (run_protect.h, privilege.h). */
enum { CHILD_REPORT_SIZE = 600, CHILD_PROTECTION_MAX = 256 };

/* The child: the session made read-only to it, privileges dropped and writes
 * confined as asked, then the command.  It never runs with a privilege or
 * without a confinement that was asked for and could not be had (exit 126);
 * a failed exec's errno goes through exec_report. */
static _Noreturn void run_child(const struct supervise_options *o, const char *session, const char *spool_dir,
                                struct confine *conf, const char *located, char **env, int exec_report,
                                int protect_report)
{
    char report[CHILD_REPORT_SIZE];
    int protected = run_protect_session(session, spool_dir, report, CHILD_PROTECTION_MAX) == 0;
    int refused = 0;
    char bind_why[PATH_MAX + 300] = "no mount namespace";
    if (o->bind_dir && (!protected || run_protect_bind(o->bind_dir, o->bind_at, bind_why, sizeof bind_why) != 0)) {
        snprintf(report, CHILD_PROTECTION_MAX, "none: --bind asked for and not had: %.200s", bind_why);
        refused = 1;
    }
    size_t plen = strlen(report);
    report[plen++] = '\n';
    report[plen] = '\0';
    if (!refused && o->worker_uid > 0) {
        char what[96];
        if (privilege_drop((uid_t)o->worker_uid, what, sizeof what) != 0) {
            snprintf(report + plen, sizeof report - plen, "kept: %s failed (%s)", what, strerror(errno));
            refused = 1;
        }
    }
    if (!refused)
        privilege_describe(report + plen, sizeof report - plen);
    if (!refused && confine_apply(conf) != 0) {
        snprintf(report, sizeof report, "none: cannot apply the write confinement (%s)\n", strerror(errno));
        refused = 1;
    }
    if (kat_write_all(protect_report, report, strlen(report)) != 0) {
        /* the parent then records the protection as unknown */
    }
    if (refused)
        _exit(126);
    close(protect_report);
    execve(located, o->command, env);
    int err = errno;
    if (write(exec_report, &err, sizeof(err)) < 0) {
        /* the parent will see an empty pipe and wait for our exit */
    }
    _exit(127);
}

/* The child's report, into info: session_protection and worker_privileges. */
static void record_child_report(int fd, struct kat_session_info *info, const char *session)
{
    char report[CHILD_REPORT_SIZE];
    size_t plen = 0;
    for (;;) {
        ssize_t r = read(fd, report + plen, sizeof report - 1 - plen);
        if (r > 0 && (plen += (size_t)r) < sizeof report - 1)
            continue;
        if (r < 0 && errno == EINTR)
            continue;
        break;
    }
    close(fd);
    report[plen] = '\0';
    char *privileges = strchr(report, '\n');
    if (privileges)
        *privileges++ = '\0';
    kat_session_info_set(info, "worker_privileges", "%s",
                         privileges && privileges[0] ? privileges : "unknown: the child said nothing");
    kat_session_info_set(info, "session_protection", "%s", plen ? report : "none: unknown (the child said nothing)");
    if (strncmp(report, "read-only", 9) != 0)
        kat_session_log(session, "warning", "the session directory is writable by the command (reduced assurance): %s",
                        plen ? report : "unknown");
}

/* The errno of a failed exec (0: it exec'd); the pipe closes on success. */
static int read_exec_error(int fd)
{
    int exec_error = 0;
    ssize_t got;
    do {
        got = read(fd, &exec_error, sizeof(exec_error));
    } while (got < 0 && errno == EINTR);
    close(fd);
    return got == (ssize_t)sizeof(exec_error) ? exec_error : 0;
}

/* Like a shell: terminal signals reach CMD directly (same process group);
 * we outlive them to record the end.  Others we pass on (a SIGINT or
 * SIGQUIT too, when a process sent it to kaudit). */
static void forward_signals_to(pid_t child)
{
    child_pid_for_signals = child;
    struct sigaction sent = { .sa_sigaction = forward_if_sent, .sa_flags = SA_SIGINFO | SA_RESTART };
    sigemptyset(&sent.sa_mask);
    sigaction(SIGINT, &sent, NULL);
    sigaction(SIGQUIT, &sent, NULL);
    signal(SIGTERM, forward_signal);
    signal(SIGHUP, forward_signal);
}

/* Every traced process hands us two descriptors' worth (its trace and the
 * copy): our own limit up to the hard one, the command's untouched. */
static void raise_file_limit(void)
{
    struct rlimit files;
    if (getrlimit(RLIMIT_NOFILE, &files) == 0 && files.rlim_cur < files.rlim_max) {
        files.rlim_cur = files.rlim_max;
        setrlimit(RLIMIT_NOFILE, &files);
    }
}

/* Until the command ends: what its processes committed is copied out of
 * their reach every few milliseconds, and every 50 ms the processes of the
 * run are seen from outside.  0 with the command's status, -1 when it cannot
 * be waited for (said). */
static int watch_command(pid_t child, const char *name, struct trace_spool *spool, struct run_census *census,
                         int *status)
{
    run_census_scan(census);
    for (unsigned pass = 1;; pass++) {
        pid_t w = waitpid(child, status, WNOHANG);
        if (w == child)
            break;
        if (w < 0 && errno != EINTR) {
            kat_say("error", "cannot wait for '%s': %s", name, strerror(errno));
            return -1;
        }
        trace_spool_drain(spool, 0);
        if (pass % 5 == 0) {
            run_census_scan(census);
            if (reap_orphans(child, status))
                break;
        }
        trace_spool_serve(spool, 10); /* the traces handed over meanwhile, at once */
    }
    /* the last of it; what the command's leftovers write after this is not part of the session */
    run_census_scan(census);
    reap_orphans(child, status);
    trace_spool_drain(spool, 1);
    return 0;
}

/* What the spool refused or could not copy, and how the processes were
 * accounted for, into info. */
static void record_run_end(struct kat_session_info *info, const struct trace_spool *spool,
                           const struct run_census *census, struct proc_events *events, pid_t child,
                           const char *session)
{
    if (spool->foreign_traces)
        kat_session_info_set(info, "foreign_traces", "%u", spool->foreign_traces);
    if (spool->rejected_traces)
        kat_session_info_set(info, "rejected_traces", "%u", spool->rejected_traces);
    if (spool->copy_failures)
        kat_session_info_set(info, "copy_failures", "%u", spool->copy_failures);
    proc_events_stop(events);
    say_accounting_end(info, events, child, session);
    account_processes(info, census, proc_events_complete(events, child) ? events : NULL, spool, session);
}

/* The command's exit status, 128+N when signal N killed it (said). */
static int command_exit_code(int status, const char *name)
{
    if (!WIFSIGNALED(status))
        return WEXITSTATUS(status);
    int sig = WTERMSIG(status);
    kat_say("note", "'%s' was killed by signal %d (%s)%s", name, sig, strsignal(sig),
            WCOREDUMP(status) ? ", core dumped" : "");
    return 128 + sig;
}

/* The command could not be started: said, and recorded as not started. */
static int not_started(struct kat_session_info *info, const char *why, int rc)
{
    kat_session_info_not_started(info, why);
    return rc;
}

int supervise(const struct supervise_options *o, char *claimed, size_t claimed_size)
{
    char **command = o->command;
    claimed[0] = '\0';
    struct run_libraries lib;
    char session[PATH_MAX];
    if (find_libraries(o, &lib) != 0 || claim_session(o, claimed, claimed_size, session) != 0)
        return 1;
    say_audit_library(&lib, session);

    struct kat_session_info info;
    kat_session_info_init(&info, session, command, lib.preload, lib.cupti);
    kat_session_info_set(&info, "audit_lib", "%s", lib.audit ? lib.audit : "(none)");
    kat_session_info_set(&info, "python_provenance", "%s",
                         lib.python ? lib.python : o->no_python ? "(off: --no-python)" : "(off: kaudit-python not found)");
    if (kat_session_info_write(&info) != 0) {
        kat_say("error", "cannot write '%s/%s': %s", session, KAT_SESSION_INFO_FILE, strerror(errno));
        return 1;
    }

    char located[PATH_MAX];
    int locate_error = kat_locate_command(command[0], located, sizeof(located));
    if (locate_error) {
        const char *why = locate_error == ENOENT ? "command not found" : strerror(locate_error);
        kat_say("error", "cannot run '%s': %s", command[0], why);
        return not_started(&info, why, locate_error == ENOENT ? 127 : 126);
    }

    /* Each traced process hands its trace to us over the spool's socket; we
     * copy what is complete into the session as the run goes (trace_spool.h). */
    struct trace_spool spool;
    char spool_err[PATH_MAX + 128];
    if (trace_spool_open(&spool, session, spool_err, sizeof spool_err) != 0) {
        kat_say("error", "%s", spool_err);
        return not_started(&info, spool_err, 1);
    }
    struct confine conf;
    prepare_confinement(o, &conf, &info);
#ifdef KAUDIT_HAVE_SEAL
    spool.observer = account_spool;
    /* said before the command runs: a session that says this and has no
     * seal lost it (analyze: seal-missing) */
    kat_session_info_set(&info, "seal", "%s", KAUDIT_SEAL_FILE);
#endif
    kat_session_info_set(&info, "session_token", "%s", spool.token_hex);
    if (o->worker_uid > 0) {
        /* the worker's uid must reach the spool's socket: through the
         * directory (search only) to the socket; the token says whose trace */
        if (chmod(spool.dir, 0711) != 0 || chmod(spool.socket_path, 0666) != 0)
            kat_session_log(session, "warning", "cannot open the spool to the worker's uid: %s", strerror(errno));
    }
    char **env = child_environment(spool.dir, spool.token_hex, spool.socket_path, lib.preload, lib.cupti, lib.audit,
                                   lib.python, o->python_watch);
    int report[2], protect[2];
    const char *setup_error = !env ? "out of memory" : NULL;
    if (!setup_error && (pipe2(report, O_CLOEXEC) != 0 || pipe2(protect, O_CLOEXEC) != 0))
        setup_error = strerror(errno);
    if (setup_error) {
        kat_say("error", "%s%s", env ? "cannot create a pipe: " : "", setup_error);
        trace_spool_close(&spool);
        return not_started(&info, setup_error, 1);
    }
    /* every fork and exec of the run from the kernel, however short
     * (proc_events.h); listening before the fork, so the first are queued */
    struct proc_events events;
    proc_events_open(&events);
    say_accounting(&info, &events, session);
    fflush(NULL);
    kat_session_info_started(&info);
    /* a process that leaves the command's tree (a double fork) becomes our
     * child, and the census keeps it in view (run_census.h) */
    prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
    pid_t child = fork();
    if (child < 0) {
        kat_say("error", "cannot fork: %s", strerror(errno));
        proc_events_free(&events);
        confine_release(&conf);
        trace_spool_close(&spool);
        return not_started(&info, strerror(errno), 1);
    }
    if (child == 0) {
        close(report[0]);
        close(protect[0]);
        run_child(o, session, spool.dir, &conf, located, env, report[1], protect[1]);
    }
    close(report[1]);
    close(protect[1]);
    confine_release(&conf);
    /* the thread after the fork: the child is forked from one thread only */
    if (events.fd >= 0 && proc_events_start(&events) != 0)
        kat_session_log(session, "warning", "%s: the events are read at the end", events.why);
    raise_file_limit();
    record_child_report(protect[0], &info, session);
    /* which process is the command itself: it alone can be told from what it starts
       (kaudit audit: the runner, the reference's process, docs/analysis.md "Party") */
    kat_session_info_set(&info, "command_pid", "%d", (int)child);
    int exec_error = read_exec_error(report[0]);
    forward_signals_to(child);

    int status = 0;
    struct run_census census;
    run_census_init(&census, getpid());
    int watched = watch_command(child, command[0], &spool, &census, &status);
    if (watched == 0)
        record_run_end(&info, &spool, &census, &events, child, session);
    else
        trace_spool_drain(&spool, 1);
    run_census_free(&census);
    proc_events_free(&events);
    trace_spool_close(&spool);
    if (watched != 0)
        return 1;
    if (exec_error) {
        kat_say("error", "cannot run '%s': %s", command[0], strerror(exec_error));
        return not_started(&info, strerror(exec_error), exec_error == ENOENT ? 127 : 126);
    }
    int rc = command_exit_code(status, command[0]);
    kat_session_info_finished(&info, status);
    if (kat_session_info_summarize(&info, o->verbose ? stderr : NULL) != 0)
        kat_say("warning", "the session in '%s' has unreadable traces (see kaudit.log)", session);
    seal_session(session, &info, o->verbose);
    return rc;
}
