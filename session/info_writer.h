/*
 * info_writer.h - writing a session's `info` file and its closing summary.
 *
 * The info file is text: the line `kaudit-session`, then `key: value` lines
 * (docs/session-format.md lists the keys).  It is rewritten whole (temporary
 * file + rename) at each step, so a reader never sees half of it.
 */
#ifndef KAUDIT_SESSION_INFO_H
#define KAUDIT_SESSION_INFO_H

#include <limits.h>
#include <stdint.h>
#include <stdio.h>

#define KAT_INFO_MAX_KEYS 40

struct kat_session_info {
    char dir[PATH_MAX];
    int count;
    char *keys[KAT_INFO_MAX_KEYS];
    char *values[KAT_INFO_MAX_KEYS];
};

void kat_session_info_init(struct kat_session_info *info, const char *dir, char **command,
                           const char *preload, const char *cupti);
void kat_session_info_set(struct kat_session_info *info, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
int kat_session_info_write(const struct kat_session_info *info);
/* The text kat_session_info_write writes (malloc'd; NULL when out of memory):
 * what kaudit run seals as info. */
char *kat_session_info_render(const struct kat_session_info *info);
void kat_session_info_started(struct kat_session_info *info);
void kat_session_info_not_started(struct kat_session_info *info, const char *why);
void kat_session_info_finished(struct kat_session_info *info, int wait_status);
/* Read the traces back, add what they say (GPU, versions, counts) to info,
 * write DIR/kaudit.log, and print the summary to `out` if not NULL.
 * Returns -1 if a trace could not be read. */
int kat_session_info_summarize(struct kat_session_info *info, FILE *out);
/* Remove a previous session's files (info, *.kat, kaudit.log) from dir. */
int kat_session_clear(const char *dir);

#endif
