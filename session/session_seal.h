/*
 * session_seal.h - the seal of a recorded session (docs/session-format.md,
 * "The seal").
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

/* Writes DIR/seal from the files as they are; chain receives the chain
 * digest (33 bytes).  0 or -1 with err. */
int session_seal_write(const char *dir, char chain[33], char *err, size_t n);

/*
 * What kaudit run wrote into the session, file by file, as it wrote it: the
 * seal it writes at the end holds this account, not what the directory
 * holds then.  A process of the run can reach the directory around the
 * read-only mount (through /proc/PID/root of any process of the user
 * outside the namespace: docs/threat-model.md); whatever it changed, added
 * or removed then breaks the seal, and verify and analyze refuse the session.
 */
struct seal_account;
struct seal_account *seal_account_new(void);
/* bytes appended to NAME (n may be 0: the file exists) */
void seal_account_append(struct seal_account *a, const char *name, const void *bytes, size_t n);
/* NAME's whole content now (info, which is rewritten) */
void seal_account_replace(struct seal_account *a, const char *name, const void *bytes, size_t n);
/* kaudit removed NAME */
void seal_account_remove(struct seal_account *a, const char *name);
/* a write of kaudit's to NAME failed: the seal takes what the disk holds */
void seal_account_lost(struct seal_account *a, const char *name);
void seal_account_free(struct seal_account *a);
/* 0 when the directory holds what the account says; 1 when not (changed
 * says where: the first line that differs); -1 with err. */
int seal_account_compare(const char *dir, struct seal_account *a, char *changed, size_t cn, char *err, size_t n);
/* Writes DIR/seal from the account.  0 or -1 with err. */
int session_seal_write_account(const char *dir, struct seal_account *a, char chain[33], char *err, size_t n);

/*
 * Checks DIR/seal against the files.  0: sealed and intact (chain set);
 * 1: no seal (an older session, or a core build); -1: broken, with err
 * naming the first file that differs, or lost (info says "seal: seal",
 * which a sealing kaudit run writes before the command runs).
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
