/*
 * build_store.h - a candidate's builds kept for its next audit
 * (docs/audit.md, "Builds kept across audits").
 *
 * Every audit builds in caches of its own (DIR/cache: torch_extensions,
 * triton), so no lock or output of another audit can block or feed it.  A
 * cold load_inline build costs about a minute; the store lets the next
 * audit of the same candidate start from what the last one built:
 *
 *  - an entry per candidate, named by a hash of its bytes and of what the
 *    build depends on beside them (the device, the runner's Python), and
 *    used only when the candidate's bytes and that text match the entry's
 *    exactly (a hash collision is a miss, never another candidate's build);
 *  - filled once, by the first audit of that candidate that ended cleanly,
 *    with the regular files and folders its workers made there (no links,
 *    no devices, nothing another uid owns, no build lock), and never
 *    updated by a later audit; not kept while a process of the worker's
 *    uid is still alive (it could change the files as they are copied);
 *  - copied into the next audit's private cache all or nothing, times kept,
 *    so PyTorch's ninja finds its outputs newer than its inputs;
 *  - and, because ninja's build file and log hold the build folder's
 *    absolute path, every audit's worker sees its cache at one fixed path
 *    (a bind mount in its own mount namespace, run_protect.h); without the
 *    namespace the store is not used and the record says why.
 *
 * Builds and compilers validate what they reuse (ninja its commands and
 * times, Triton its content hashes), so an entry only saves work: what the
 * candidate builds or runs is judged as in a cold audit.  What a candidate
 * could carry from one of its audits to the next through its own cache is
 * in docs/threat-model.md; `--build-store off` leaves it out.
 */
#ifndef KAUDIT_BUILD_STORE_H
#define KAUDIT_BUILD_STORE_H

#include <limits.h>
#include <sys/types.h>

#include "json_writer.h"

enum build_store_state {
    BUILD_STORE_OFF,          /* --build-store off */
    BUILD_STORE_UNAVAILABLE,  /* asked for, not possible here (note says why) */
    BUILD_STORE_MISS,         /* no entry for this candidate: built cold */
    BUILD_STORE_HIT,          /* its entry copied in */
};

/* The store's size by default (--build-store-max), past which the entries
 * used longest ago go; an entry larger than the second is not kept. */
#define BUILD_STORE_MAX_BYTES (8ULL << 30)
#define BUILD_STORE_ENTRY_MAX_BYTES (2ULL << 30)

struct build_store {
    enum build_store_state state;
    char dir[PATH_MAX];       /* the store */
    char at[PATH_MAX];        /* where every audit's worker sees its cache */
    char key[40];             /* the entry's name */
    char note[PATH_MAX + 200];/* off or unavailable: why; a miss: what was found */
    unsigned long long in_bytes, in_files;
    double in_s;
    int kept;                 /* this audit's builds were stored */
    char keep_note[PATH_MAX + 200]; /* why not, when not */
    unsigned long long kept_bytes, kept_files, skipped, evicted;
    double keep_s;
    unsigned long long max_bytes; /* the store's size: BUILD_STORE_MAX_BYTES unless set after open */
    /* internal */
    char candidate[PATH_MAX];
    char material[PATH_MAX + 160];
    int entry_there;          /* fill found an entry under the key */
    char *bytes;              /* the candidate's, read once at open */
    size_t len;
};

/*
 * option: NULL (the default store: $XDG_CACHE_HOME/kaudit/builds, else
 * $HOME/.cache/kaudit/builds), "off", or a directory.  Resolves the store,
 * the entry's name and the fixed path; reads the environment, so it runs
 * before the audit moves HOME and the caches.  State OFF, UNAVAILABLE, or
 * MISS until build_store_fill.
 */
void build_store_open(struct build_store *s, const char *option, const char *candidate, const char *device,
                      const char *python);

/* cache: the audit's own (made, still empty).  Tries the bind (else
 * UNAVAILABLE) and copies the entry in when there is one (HIT). */
void build_store_fill(struct build_store *s, const char *cache);

/* 1 when the worker is to see cache at s->at. */
int build_store_bound(const struct build_store *s);

/* After the worker: on a MISS whose worker ended cleanly, the builds it left
 * in cache become the entry (worker_uid > 0: only what that uid owns). */
void build_store_keep(struct build_store *s, const char *cache, uid_t worker_uid, int ended_cleanly);

/* The candidate's bytes let go (after the record). */
void build_store_free(struct build_store *s);

/* The record's "build_store" object. */
void build_store_write_json(struct kat_json *j, const struct build_store *s);
const char *build_store_state_name(enum build_store_state state);

#endif
