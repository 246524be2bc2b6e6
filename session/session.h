/*
 * session.h - one recorded session directory (docs/session-format.md).
 *
 * A session directory holds an `info` file (text: first line
 * `kaudit-session`, then `key: value` lines) and one `*.kat` trace per
 * traced process image.  Opening a session reads `info` and lists the traces;
 * it does not open them (use trace_reader.h for that), so a session with a
 * corrupt trace still opens.  Depends on libc only.
 */
#ifndef KAUDIT_SESSION_H
#define KAUDIT_SESSION_H

#include <stddef.h>
#include <stdint.h>

struct kat_session;

/*
 * Open the session in `dir`.  0 on success (*out set); -1 with a message in
 * err on failure: dir missing or not a directory, `info` missing or
 * unreadable, its first line not `kaudit-session`, or a line that is not
 * `key: value` (the message names the file and line).
 */
int kat_session_open(const char *dir, struct kat_session **out, char *err, size_t n);
void kat_session_close(struct kat_session *s);

const char *kat_session_dir(const struct kat_session *s);

/*
 * Value of an `info` key, NULL when the key is absent.  When a key appears
 * more than once the last line wins (a recorder may append `ended` and
 * `status` once the run is over).
 */
const char *kat_session_info(const struct kat_session *s, const char *key);
/* Every distinct key, in the order of first appearance. */
size_t kat_session_info_count(const struct kat_session *s);
const char *kat_session_info_key(const struct kat_session *s, size_t i);
const char *kat_session_info_value(const struct kat_session *s, size_t i);

/*
 * The traces (`*.kat` regular files), sorted by (start time, pid, file name).
 * Start time and pid come from the trace's file header when it is readable,
 * else from its name `p<pid>-<realtime_ns>.kat`; a trace with neither sorts
 * last.
 */
size_t kat_session_trace_count(const struct kat_session *s);
const char *kat_session_trace_path(const struct kat_session *s, size_t i);  /* dir/name */
const char *kat_session_trace_name(const struct kat_session *s, size_t i);  /* name only */
uint32_t kat_session_trace_pid(const struct kat_session *s, size_t i);      /* 0 if unknown */
uint64_t kat_session_trace_start_ns(const struct kat_session *s, size_t i); /* UINT64_MAX if unknown */

#endif /* KAUDIT_SESSION_H */
