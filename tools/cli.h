/*
 * cli.h - what every kaudit command shares: the exit statuses, error
 * messages in one format, and allocation that cannot fail.
 *
 * Messages go to stderr as "kaudit: error: ...", git-style.  A usage error
 * prints the message and the command's one-line synopsis with a pointer to
 * --help, not the whole help.
 */
#ifndef KAUDIT_CLI_H
#define KAUDIT_CLI_H

#include <stddef.h>

/* The exit status of every command (README.md, "Exit status"). */
enum kaudit_exit {
    KAUDIT_EXIT_OK = 0,            /* success; analyze/report: certificate PASS */
    KAUDIT_EXIT_ERROR = 1,         /* an input could not be read or loaded, or a runtime failure */
    KAUDIT_EXIT_USAGE = 2,         /* bad command line */
    KAUDIT_EXIT_FAIL = 10,         /* analyze/report: certificate FAIL */
    KAUDIT_EXIT_INCONCLUSIVE = 11, /* analyze/report: certificate INCONCLUSIVE */
    /* run: the recorded command's own status (128 + signal when killed). */
};

/* "kaudit: error: <fmt>\n" on stderr; returns -1. */
int cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/*
 * A usage error: "kaudit: error: <fmt>\n" then the first line of usage (the
 * synopsis, "usage: kaudit NAME ...") followed by " (kaudit NAME --help for
 * more)"; returns KAUDIT_EXIT_USAGE.
 */
int cli_usage_error(const char *usage, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* A getopt failure as a usage error: "unknown option 'ARG'", or with
 * missing_value "option 'ARG' needs a value" (optstring starting with ':'). */
int cli_bad_option(const char *usage, int missing_value, const char *arg);

/* "kaudit: error: <fmt>\n" and exit(KAUDIT_EXIT_ERROR). */
void cli_die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

void *cli_xcalloc(size_t n, size_t size);
void *cli_xrealloc(void *p, size_t size);
char *cli_xstrdup(const char *s);

#endif
