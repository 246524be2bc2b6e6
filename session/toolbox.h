/*
 * toolbox.h - the small helpers every part of kaudit shares, so that each is
 * written once: messages in kaudit's one format, errors into a caller's
 * buffer, allocation that cannot fail, array growth, a path's base name,
 * hex digests and environment flags.  libc only: the core build (the GPU
 * machine) has it.
 *
 * Messages go to stderr as "kaudit: LEVEL: TEXT\n" (LEVEL error, warning or
 * note), git-style; the CLI's cli_error/cli_warn/cli_note are these.
 */
#ifndef KAUDIT_TOOLBOX_H
#define KAUDIT_TOOLBOX_H

#include <stdarg.h>
#include <stddef.h>

/* The exit status of every command (README.md, "Exit status"); the
 * libraries that run a whole command (audit/, supervisor/) return them too. */
enum kaudit_exit {
    KAUDIT_EXIT_OK = 0,            /* success; analyze/report: certificate PASS */
    KAUDIT_EXIT_ERROR = 1,         /* an input could not be read or loaded, or a runtime failure */
    KAUDIT_EXIT_USAGE = 2,         /* bad command line */
    KAUDIT_EXIT_FAIL = 10,         /* analyze/report: certificate FAIL */
    KAUDIT_EXIT_INCONCLUSIVE = 11, /* analyze/report: certificate INCONCLUSIVE */
    /* run: the recorded command's own status (128 + signal when killed). */
};


/* "kaudit: LEVEL: <fmt>\n" on stderr. */
void kat_say(const char *level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void kat_vsay(const char *level, const char *fmt, va_list ap);

/* kat_say("error", ...); returns -1. */
int kat_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/*
 * The libraries' error signature: formats the message into err (n bytes,
 * NULL or 0 for none) and returns -1, so that `return kat_fail(err, n, ...)`
 * both says why and fails.
 */
int kat_fail(char *err, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* "kaudit: error: <fmt>\n" and exit(1) (KAUDIT_EXIT_ERROR). */
void kat_die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

/* Allocation that dies with "out of memory" rather than return NULL; zero
 * sizes are taken as one. */
void *kat_xcalloc(size_t n, size_t size);
void *kat_xrealloc(void *p, size_t size);
char *kat_xstrdup(const char *s);

/*
 * Makes room for `need` items of `size` bytes in *items (capacity *cap),
 * doubling from 16; new room is not cleared.  0, or -1 (errno ENOMEM) with
 * *items and *cap unchanged.
 */
int kat_grow(void *items, size_t *cap, size_t need, size_t size);

/* The last component of a path (after its last '/'); "" for NULL. */
const char *kat_base_name(const char *path);

/* n bytes as 2n lowercase hex digits and a NUL into out (2n+1 bytes). */
void kat_hex(const void *bytes, size_t n, char *out);

/*
 * An environment flag: unset or empty gives dflt, "0" gives 0, anything
 * else 1.
 */
int kat_env_flag(const char *name, int dflt);

/* n bytes from the kernel's random source (getrandom, blocking until it is
 * seeded).  0, or -1 with errno. */
int kat_random_bytes(void *out, size_t n);

/* Where execvp would find CMD (a path as it is, else the first regular,
 * executable file of that name on PATH) into found: 0, else the errno to
 * report (ENOENT, or EACCES when only unexecutable ones were there). */
int kat_locate_command(const char *cmd, char *found, size_t size);

#endif
