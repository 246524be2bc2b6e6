/*
 * safe_file.h - opening kaudit's input and output files without being fooled
 * by what someone else put at the path (docs/threat-model.md).
 *
 * Readers: O_NONBLOCK so a FIFO cannot hang the open, O_CLOEXEC, O_NOFOLLOW
 * for files inside a session directory, then fstat(): anything that is not a
 * regular file is refused with "'X' is not a regular file (a FIFO)".
 * Writers of files in a session directory: O_NOFOLLOW (a planted symlink is
 * never followed), and a file that is not regular or has other hard links is
 * refused.  libc only: the GPU build uses session/ too.
 */
#ifndef KAUDIT_SAFE_FILE_H
#define KAUDIT_SAFE_FILE_H

#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

#define KAT_SAFE_NOFOLLOW 1 /* the path is inside a session directory */

/* "a FIFO", "a directory", "a symbolic link", ... for st_mode. */
const char *kat_file_kind(mode_t mode);

/* Open path for reading.  Returns an fd (blocking mode restored, O_CLOEXEC),
 * or -1 with errno set and err holding "'path' is not a regular file (a FIFO)"
 * or "cannot open 'path': <strerror>"; errno is EINVAL when the path is
 * there but not a regular file (or a symlink refused).   When size is not NULL it receives
 * the file's size. */
int kat_open_input(const char *path, int flags, off_t *size, char *err, size_t err_size);

/* The same as a stdio stream ("r"). */
FILE *kat_fopen_input(const char *path, int flags, char *err, size_t err_size);

/* Read a whole regular file of at most max bytes into a NUL-terminated
 * malloc'd buffer.  0 or -1 with err set. */
int kat_read_input(const char *path, int flags, size_t max, char **data, size_t *len, char *err,
                   size_t err_size);

/* Open a file in a session directory for writing, never through a symlink:
 * open_flags is O_APPEND (created if missing), O_TRUNC (created if missing)
 * or O_EXCL (a new file; an existing one of any kind is first removed, so a
 * planted symlink or FIFO is replaced, never followed).  A non-regular file
 * or one with other hard links is refused.  Returns an fd or -1 with err set. */
int kat_open_output(const char *path, int open_flags, char *err, size_t err_size);

/* The same as a stdio stream ("a" for O_APPEND, else "w"). */
FILE *kat_fopen_output(const char *path, int open_flags, char *err, size_t err_size);

/* Append one line "kaudit: LEVEL: MESSAGE\n" to DIR/kaudit.log (safely; a
 * refused log is silently skipped - the caller says it on stderr if it must). */
void kat_session_log(const char *dir, const char *level, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Appends text as it is: the one writer of kaudit.log, which every line goes
 * through.  0, or -1 with err (when not NULL) set. */
int kat_session_log_text(const char *dir, const char *text, char *err, size_t err_size);
/* fn sees every text appended to a kaudit.log (kaudit run seals what it
 * wrote, not what the directory holds: session/session_seal.h).  NULL: none. */
typedef void (*kat_session_log_observer)(void *arg, const char *dir, const char *text, size_t n);
void kat_session_log_observe(kat_session_log_observer fn, void *arg);

/* Writes all n bytes (a short write is retried, EINTR too).  0, or -1 with errno. */
int kat_write_all(int fd, const void *data, size_t n);

/* Removes a directory kaudit made and everything in it, not following links
 * (nftw, FTW_PHYS); what cannot be removed stays. */
void kat_remove_tree(const char *path);

#endif
