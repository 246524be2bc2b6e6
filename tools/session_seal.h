/*
 * session_seal.h - the seal of a recorded session (docs/session-format.md,
 * "The seal"; issue 14 item 5).
 *
 * When the recorded command and every process it left have ended, `kaudit
 * run` writes DIR/seal: one line per file of the session (info, the traces,
 * kaudit.log) with its size and XXH3-128 digest, and a last line chaining
 * them.  `kaudit verify DIR`, analyze and report check it: a file changed,
 * removed or added after the run breaks it.  What a seal does not do: keep a
 * candidate from rewriting the session and the seal together while it can
 * still write the directory (a daemon after the run); the chain digest kept
 * elsewhere (a `kaudit audit` record, the run's stderr with -v) is what
 * proves that.  Built with xxHash only (the full build); a core build writes
 * no seal and says so in kaudit.log.
 */
#ifndef KAUDIT_SESSION_SEAL_H
#define KAUDIT_SESSION_SEAL_H

#include <stddef.h>

#define KAUDIT_SEAL_FILE "seal"
#define KAUDIT_ANALYSIS_SEAL_FILE "analysis.seal"

/* Writes DIR/seal; chain receives the chain digest (33 bytes).  0 or -1 with err. */
int session_seal_write(const char *dir, char chain[33], char *err, size_t n);

/*
 * Checks DIR/seal against the files.  0: sealed and intact (chain set);
 * 1: no seal (an older session, or a core build); -1: broken, with err
 * naming the first file that differs.
 */
int session_seal_verify(const char *dir, char chain[33], char *err, size_t n);

/*
 * A saved analysis (DIR/NAME, analyze --save) gets a seal of its own,
 * DIR/analysis.seal: the session's chain when it was saved (or none) and the
 * analysis file's size and digest.  `kaudit report DIR` reads a saved
 * analysis only when this matches (the session unchanged too).  0, or -1
 * with err.
 */
int session_seal_analysis_write(const char *dir, const char *name, char *err, size_t n);
int session_seal_analysis_verify(const char *dir, const char *name, char *err, size_t n);

#endif
