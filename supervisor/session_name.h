/*
 * session_name.h - the session directory `kaudit run` writes without -d:
 * kaudit.session, or when that exists kaudit-2.session, kaudit-3.session, ...
 * (the Nth session in a directory is kaudit-N.session; the way nsys numbers
 * report1, report2, ...).  An existing name is never reused, so a run never
 * fails or overwrites because an earlier one left its session behind.
 */
#ifndef KAUDIT_SESSION_NAME_H
#define KAUDIT_SESSION_NAME_H

#include <stddef.h>

#define KAUDIT_SESSION_DEFAULT "kaudit.session"

/* Creates the first free name in the current directory with mkdir (two runs
 * started at once get two directories) and puts it in out.  0, or -1 with
 * errno set. */
int kaudit_new_session_dir(char *out, size_t size);

/* The same rule for other directories: STEM SUFFIX, then STEM-2 SUFFIX, ...
 * (`kaudit audit`: kaudit.audit, kaudit-2.audit). */
int kaudit_new_numbered_dir(const char *stem, const char *suffix, char *out, size_t size);

#endif /* KAUDIT_SESSION_NAME_H */
