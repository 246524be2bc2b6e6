/*
 * run_helpers.h - what the `kaudit run` tests on the stand-in CUDA stack
 * share: running a program with and without `kaudit run`, loading the
 * session it recorded through the reader (session/trace_reader.h,
 * session/session.h), and the stand-ins' ground-truth log.
 *
 * Paths come from CMake (tests/standin.cmake): KAUDIT_BIN, STANDIN_DIR,
 * STANDIN_NOCUPTI_DIR, PROGRAMS_DIR, PYTHON_DIR, PYTHON3.
 *
 * Set KAUDIT_TEST_KEEP=1 to keep the temporary directories (their paths are
 * printed); otherwise a test removes its directory when it passes.
 */
#ifndef KAUDIT_RUN_HELPERS_H
#define KAUDIT_RUN_HELPERS_H

#include <stddef.h>
#include <stdint.h>

#include "session.h"
#include "trace_format.h"
#include "trace_index.h"
#include "trace_reader.h"

/* ---- running programs ------------------------------------------------------------- */

/* Below the tests' own timeouts, so a hang is reported with its output and
 * the process group is killed instead of being left behind. */
#define RH_PLAIN_TIMEOUT_S 60
#define RH_KAUDIT_TIMEOUT_S 90

struct rh_run {
    int status;                 /* raw wait status of the command */
    int exit_code;              /* WEXITSTATUS, -1 when killed */
    int signal;                 /* WTERMSIG, 0 when it exited */
    int timed_out;
    char *out, *err;            /* captured stdout / stderr, NUL terminated */
    size_t out_size, err_size;
};

/* Run argv (argv[0] a path) with exactly the environment env; capture its
 * output.  0, or -1 when it could not be started. */
int rh_exec(char *const argv[], char *const env[], int timeout_s, struct rh_run *r);
void rh_run_free(struct rh_run *r);

/* The environment the tests give programs: PATH, HOME, LANG=C,
 * LD_LIBRARY_PATH=libdir, STANDIN_LAUNCH_LOG=log (when log is not NULL), then
 * `extra` ("K=V" strings, NULL terminated, may be NULL). */
char **rh_env(const char *libdir, const char *log, const char *const extra[]);
void rh_env_free(char **env);

/* The program alone. */
int rh_run_plain(const char *libdir, const char *log, char *const argv[], const char *const extra[],
                 struct rh_run *r);
/* `kaudit run -d session -- argv...` (session must not exist yet). */
int rh_run_kaudit(const char *session, const char *libdir, const char *log, char *const argv[],
                  const char *const extra[], struct rh_run *r);

/* The child's stderr from a `kaudit run`: its own stderr minus kaudit's lines
 * (those start with "kaudit: "). Caller frees. */
char *rh_without_kaudit_lines(const char *err);

/* A new directory /tmp/kaudit-<tag>-XXXXXX (or under $TMPDIR).  Caller frees. */
char *rh_tmpdir(const char *tag);
/* Remove dir unless KAUDIT_TEST_KEEP is set; frees dir. */
void rh_cleanup(char *dir);
/* path = dir/name; caller frees. */
char *rh_path(const char *dir, const char *name);

/* ---- sessions ------------------------------------------------------------------------ */

struct rh_trace {
    char *path, *name;
    struct kat_trace *t;
    struct kat_file_header header;
    struct kat_record *recs;
    size_t nrecs;
    int read_result;            /* last kat_trace_next result: 0 end, -1 malformed */
    char error[512];
    int complete;               /* kat_trace_complete after the whole read */
    const struct kat_process_start_rec *start;
    const struct kat_process_end_rec *end; /* the last PROCESS_END, NULL if none */
    /* the KERNEL records' indices by correlation id, built on first lookup
       (a program of 100,000 launches is checked launch by launch) */
    size_t *kernels_by_correlation, nkernels_indexed;
};

struct rh_session {
    struct kat_session *s;
    char *dir;
    size_t ntraces;
    struct rh_trace *traces;    /* in the session's order (start time) */
};

/* Open the session and read every trace completely.  0, or -1 with err. */
int rh_session_load(const char *dir, struct rh_session *out, char *err, size_t n);
void rh_session_free(struct rh_session *s);

const char *rh_str(const struct rh_trace *t, uint32_t id);
/* The n-th NUL-separated element of a NUL-joined string ("" when absent). */
const char *rh_str_elem(const struct rh_trace *t, uint32_t id, int index);
/* Records of one type. */
size_t rh_count(const struct rh_trace *t, uint16_t type);
/* The trace of pid that was current at time at_ns (the latest one started
 * at or before it); NULL if none. */
const struct rh_trace *rh_trace_at(const struct rh_session *s, uint32_t pid, uint64_t at_ns);
/* The traces of pid, oldest first; returns how many (at most max). */
size_t rh_traces_of(const struct rh_session *s, uint32_t pid, const struct rh_trace **out, size_t max);
/* The first trace whose argv[1] is arg1 (NULL: any). */
const struct rh_trace *rh_trace_by_arg(const struct rh_session *s, int index, const char *arg);
/* The health record with this code (the first), NULL if none. */
const struct kat_health_rec *rh_health(const struct rh_trace *t, uint32_t code);
/* Any trace of the session has this health code. */
const struct kat_health_rec *rh_session_health(const struct rh_session *s, uint32_t code,
                                               const struct rh_trace **where);
/* The vendor call with this id, NULL if none. */
const struct kat_vendor_call_rec *rh_vendor_call(const struct rh_trace *t, uint64_t call_id);
/* The first vendor call whose API is `api`, counting from `*cursor` (may be NULL). */
const struct kat_vendor_call_rec *rh_vendor_call_by_api(const struct rh_trace *t, const char *api,
                                                        size_t *cursor);
/* The vendor call id a correlation id is tied to (an API record's tail, or an
 * EXTERNAL_CORRELATION record of KAT_VENDOR_CORRELATION_KIND); 0 when none.
 * *count gets how many distinct ids such records give (1 for a kernel in one
 * vendor window). */
uint64_t rh_vendor_window(const struct rh_trace *t, uint32_t correlation_id, int *count);
/* The kernel record with this correlation id and name, NULL if none. */
const struct kat_kernel_rec *rh_kernel(const struct rh_trace *t, uint32_t correlation_id, const char *name);
/* Every record readable, none malformed. */
int rh_readable(const struct rh_trace *t);
/* A one-line description of the session for assertion messages (static buffer). */
const char *rh_describe(const struct rh_session *s);
/* Why a trace is not complete: its end records, what follows the last one,
 * and how its reading ended (a static buffer, for assertion messages). */
const char *rh_describe_ending(const struct rh_trace *t);

/* ---- the stand-ins' ground truth ----------------------------------------------------- */

struct gt_kernel {
    uint32_t pid, tid;
    uint64_t host_ns;
    uint32_t correlation_id, stream_id, context_id;
    uint64_t start_ns, end_ns;
    char grid[32], block[32];
    char vendor[64];            /* vendor API open at the launch, "-" if none */
    char name[768];
};

struct gt_elapsed {
    uint32_t pid, tid;
    uint64_t host_ns;
    uint32_t correlation_id;
    int result;
    float ms;
    uint32_t bits;
};

struct gt_module {
    uint32_t pid, tid;
    uint64_t host_ns;
    uint32_t correlation_id, module_id;
    uint64_t size;
    char vendor[64];
};

struct gt_vendor {
    uint32_t pid, tid;
    uint64_t host_ns;
    char library[32], api[64];
    int depth;
};

struct gt_event {
    uint32_t pid, tid;
    uint64_t host_ns;
    uint32_t correlation_id, event_id, stream_id;
    uint64_t ts;
};

struct rh_truth {
    struct gt_kernel *kernels;
    size_t nkernels;
    struct gt_elapsed *elapsed;
    size_t nelapsed;
    struct gt_module *modules;
    size_t nmodules;
    struct gt_vendor *vendor;
    size_t nvendor;
    struct gt_event *events;
    size_t nevents;
    size_t injections;          /* 'I' lines */
};

/* Parse a STANDIN_LAUNCH_LOG file.  0, or -1 when unreadable. */
int rh_truth_load(const char *path, struct rh_truth *t);
void rh_truth_free(struct rh_truth *t);

/*
 * The central check: every kernel of the ground truth (of pid, or all when
 * pid is 0) is in the trace that was current for its process when it was
 * launched, with its name, stream, context and correlation id; no trace holds
 * a kernel the stand-in did not launch (no duplicates, no strays); a kernel
 * launched inside a vendor call is tied to that call's VENDOR_CALL record
 * (same API) through our EXTERNAL_CORRELATION kind, and no other kernel is.
 * Failures are reported with cr_expect; returns the number of problems.
 */
int rh_check_kernels(const struct rh_session *s, const struct rh_truth *gt, uint32_t pid);

/* ---- one case: a program under `kaudit run` and alone -------------------------------- */

struct rh_case {
    char *dir, *session, *log;  /* a new temporary directory, dir/session, dir/truth.log */
    struct rh_run run, plain;   /* under `kaudit run`, alone */
    struct rh_session s;
    struct rh_truth gt;
};

/* Zero c and make its directory (rh_tmpdir(tag)) and paths, so argv can name them. */
void rh_case_init(struct rh_case *c, const char *tag);
/* argv under `kaudit run` on the stand-ins with log c->log (extra: more
 * environment for it, may be NULL), which must not time out; plain_argv alone;
 * then load the session and the ground truth and expect every trace readable.
 * Exit statuses are left to the test. */
void rh_case_run(struct rh_case *c, char *const argv[], char *const plain_argv[], const char *const extra[]);
void rh_case_free(struct rh_case *c);

#endif
