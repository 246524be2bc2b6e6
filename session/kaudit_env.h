/*
 * kaudit_env.h - the environment variables that `kaudit run` sets for the
 * command and that the preload library reads and re-injects into children.
 * Shared by tools/ and preload/ (docs/preload.md lists them).
 */
#ifndef KAUDIT_ENV_H
#define KAUDIT_ENV_H

/* Set by `kaudit run`, read by the preload, re-injected into children. */
#define KAT_ENV_SESSION "KAUDIT_SESSION_DIR"   /* session directory; unset = record nothing */
#define KAT_ENV_SESSION_TOKEN "KAUDIT_SESSION_TOKEN" /* 32 hex digits kaudit run drew: in every trace's header */
#define KAT_ENV_SUPERVISOR "KAUDIT_SUPERVISOR_SOCKET" /* kaudit run's socket (trace_handover.h); unset = traces are files */
#define KAT_ENV_PRELOAD "KAUDIT_PRELOAD_LIB"   /* absolute path of this library */
#define KAT_ENV_AUDIT "KAUDIT_AUDIT_LIB"       /* LD_AUDIT module (preload/audit/); unset = none */
#define KAT_ENV_CUPTI "KAUDIT_CUPTI_LIB"       /* optional: libcupti to use if none is loaded */
#define KAT_ENV_REINJECTED "KAUDIT_REINJECTED" /* set in a child whose env we restored */

/* Under LD_AUDIT glibc serves the initial-exec TLS of initially loaded
 * objects (libc, this library, a preloaded jemalloc) from the static TLS
 * surplus meant for dlopen(), and a program can then fail to start ("cannot
 * allocate memory in static TLS block", glibc BZ #31991): wherever LD_AUDIT
 * names our module, GLIBC_TUNABLES gets this unless it sets it itself. */
#define KAT_TLS_TUNABLE "glibc.rtld.optional_static_tls"
#define KAT_TLS_TUNABLE_SETTING KAT_TLS_TUNABLE "=8192"

#endif /* KAUDIT_ENV_H */
