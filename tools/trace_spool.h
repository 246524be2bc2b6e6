/*
 * trace_spool.h - records leave the recorded processes (docs/threat-model.md,
 * "The spool").
 *
 * The preload library writes each process's trace into a spool directory,
 * not into the session: kaudit run, the supervisor, copies every record that
 * is complete (its header word stored, which the writer does last) from the
 * spool into the session as the run goes, every few milliseconds and once
 * more when the command has ended.  A record copied is out of the recorded
 * processes' reach: rewriting or deleting a spool file afterwards changes
 * nothing, and the session directory itself is read-only for them (a mount
 * namespace, cmd_run.c).  Files in the spool that are not traces are named
 * in kaudit.log and not copied; a trace whose bytes stop being valid records
 * (not zeros: damage) is copied to the damage, so the reader reports it.
 */
#ifndef KAUDIT_TRACE_SPOOL_H
#define KAUDIT_TRACE_SPOOL_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

struct spool_file;

struct trace_spool {
    char dir[PATH_MAX];          /* the spool */
    char session[PATH_MAX];      /* where the copies go */
    struct spool_file *files;
    size_t n_files, cap_files;
    unsigned foreign_traces;     /* traces whose header carries another session's token */
    unsigned char token[16];     /* this session's (KAUDIT_SESSION_TOKEN) */
    char token_hex[33];
    int too_many;                /* the limit on traces was reached (said once) */
};

/* Makes the spool (mkdtemp beneath TMPDIR, else /tmp) and draws the
 * session's token (getrandom): a trace whose header does not carry it (one
 * copied in from another run) is not copied, and counted.  0, or -1 with err. */
int trace_spool_open(struct trace_spool *s, const char *session, char *err, size_t n);

/* Copies what is new and complete.  final: the command has ended; what is
 * left after the last complete record is copied too when it is not zeros. */
void trace_spool_drain(struct trace_spool *s, int final);

/* Whether a trace of pid appeared in the spool (copied or not). */
int trace_spool_has_pid(const struct trace_spool *s, long pid);

/* Removes the spool and its files. */
void trace_spool_close(struct trace_spool *s);

#endif
