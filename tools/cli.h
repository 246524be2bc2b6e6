/*
 * cli.h - what every kaudit command shares: the exit statuses, and error,
 * warning and note messages in one format (session/toolbox.h's kat_say).
 *
 * Messages go to stderr as "kaudit: error: ...", git-style.  A usage error
 * prints the message and the command's one-line synopsis with a pointer to
 * --help, not the whole help.
 */
#ifndef KAUDIT_CLI_H
#define KAUDIT_CLI_H

#include <stddef.h>

/* The exit statuses, dying on errors and allocation that cannot fail:
 * session/toolbox.h (kat_die, kat_xcalloc, ...), shared with the libraries. */
#include "toolbox.h"

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

/* "kaudit: warning: <fmt>\n" and "kaudit: note: <fmt>\n" on stderr. */
void cli_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void cli_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));


#endif
