/*
 * supervise.h - the recorded run behind `kaudit run` (docs/session-format.md,
 * docs/threat-model.md): makes the session directory, starts the command
 * with the preload library, copies each process's trace into the session as
 * the run goes, keeps a census of the run's processes, and seals what it
 * wrote once the command has ended.
 */
#ifndef KAUDIT_SUPERVISE_H
#define KAUDIT_SUPERVISE_H

#include <stddef.h>

struct supervise_options {
    const char *dir;            /* the session directory; NULL: numbered here (session_name.h) */
    int overwrite;              /* replace a session already in dir */
    const char *cupti;          /* libcupti to use when the program loads none; NULL: none */
    int verbose;                /* a summary of the session on stderr at the end */
    const char *const *write_roots; /* the command may write only beneath these (Landlock, confine.h) */
    const unsigned char *create_only; /* per root: only make files there */
    size_t n_write_roots;       /* 0: writes are not confined */
    int no_python;              /* no sitecustomize on PYTHONPATH */
    const char *python_watch;   /* the class or function names Python processes report */
    char **command;             /* CMD and its arguments, NULL-terminated */
    long worker_uid;            /* > 0: the command runs as this uid and gid, without capabilities
                                   (privilege.h); it is refused rather than run privileged */
    const char *bind_dir, *bind_at; /* non-NULL: the command sees bind_dir at bind_at too (its own mount
                                       namespace, run_protect.h); it is refused rather than run without */
};

/*
 * Runs o->command recorded.  Returns the command's exit status, 128+N when
 * signal N killed it, 126/127 when it could not be started, 1 on kaudit's own
 * failure (after a message on stderr).  claimed (claimed_size bytes) gets the
 * session directory numbered for the run when o->dir was NULL, else "".
 */
int supervise(const struct supervise_options *o, char *claimed, size_t claimed_size);

#endif
