/*
 * trace_spool.h - records leave the recorded processes (docs/threat-model.md,
 * "The handover").
 *
 * Each traced process keeps its trace in a memory file and hands the
 * descriptor to kaudit run, the supervisor, over a socket
 * (session/trace_handover.h).  The kernel names the process at the other
 * end: a trace is taken only under the pid of the process that handed it
 * over, and only when its header names that pid and carries this session's
 * token; anything else is refused, said in kaudit.log and counted (info
 * rejected_traces, foreign_traces).  The supervisor seals each one against
 * shrinking and copies every record that is complete (its header word
 * stored, which the writer does last) into the session as the run goes,
 * every few milliseconds and once more when the command has ended.  A
 * record copied is out of the recorded processes' reach: the session
 * directory is read-only for them (a mount namespace, run_protect.h), and
 * no other process can open the memory file by a name.
 */
#ifndef KAUDIT_TRACE_SPOOL_H
#define KAUDIT_TRACE_SPOOL_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

/* Connections accepted and not yet answered: a candidate that connects and
 * sends nothing holds one slot, and the oldest goes when they are full. */
#define SPOOL_MAX_PENDING_SLOTS 64

struct spool_file;

/* What the spool does to the session's files, for the seal's account
 * (session/session_seal.h): bytes appended (n may be 0: a new, empty copy), a
 * copy removed, a write that failed. */
enum spool_event { SPOOL_APPENDED, SPOOL_REMOVED, SPOOL_WRITE_FAILED };
typedef void (*spool_observer)(void *arg, enum spool_event what, const char *name, const void *bytes, size_t n);

struct trace_spool {
    char dir[PATH_MAX];          /* private to kaudit run: holds the socket */
    char socket_path[108];       /* KAUDIT_SUPERVISOR_SOCKET */
    int listen_fd;
    int pending[SPOOL_MAX_PENDING_SLOTS];
    size_t next_pending;
    char session[PATH_MAX];      /* where the copies go */
    struct spool_file *files;
    size_t n_files, cap_files;
    unsigned foreign_traces;     /* traces whose header carries another session's token */
    unsigned rejected_traces;    /* handed over under another pid, or not a trace at all */
    unsigned copy_failures;      /* writes into the session that failed (a full disk): info copy_failures */
    unsigned char token[16];     /* this session's (KAUDIT_SESSION_TOKEN) */
    char token_hex[33];
    int too_many;                /* the limit on traces was reached (said once) */
    spool_observer observer;     /* or NULL */
    void *observer_arg;
};

/* Makes the spool directory (mkdtemp beneath TMPDIR, else /tmp), listens on
 * its socket and draws the session's token (getrandom).  0, or -1 with err. */
int trace_spool_open(struct trace_spool *s, const char *session, char *err, size_t n);

/* Takes the traces handed over, and answers, for wait_ms milliseconds
 * (0: what is there now). */
void trace_spool_serve(struct trace_spool *s, int wait_ms);

/* Copies what is new and complete.  final: the command has ended; what is
 * left after the last complete record is copied too when it is not zeros. */
void trace_spool_drain(struct trace_spool *s, int final);

/* Whether the process pid that started at start (/proc/PID/stat field 22;
 * 0: unknown) handed over a trace, copied or not.  A trace of an earlier
 * process that had the same pid does not count. */
int trace_spool_has_process(const struct trace_spool *s, long pid, unsigned long long start);

/* How many traces the process pid that started at start (clock ticks,
 * within one) handed over that a new program image opened (their header's
 * origin: exec) at or after since_ns (CLOCK_MONOTONIC): whether each exec
 * of the process was followed by a trace (supervise.c).  Only traces whose
 * header was checked (a first whole record) count.  The header is the
 * process's own word: docs/threat-model.md says what that leaves open. */
unsigned trace_spool_images_since(const struct trace_spool *s, long pid, unsigned long long start, uint64_t since_ns);

/* Closes the traces and removes the spool directory. */
void trace_spool_close(struct trace_spool *s);

#endif
