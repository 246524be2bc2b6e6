/*
 * audit_one.c - one audit, one record (docs/audit.md): kaudit writes the
 * plan, runs the Python runner under the preload library (audit_exec.c),
 * decides the semantic axis from what the runner wrote (semantic/), judges
 * the recorded session for the implementation and measurement axes
 * (analyzer/), and writes the record.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "analysis.h"
#include "audit.h"
#include "audit_phases.h"
#include "audit_probe.h"
#include "audit_shard.h"
#include "audit_timing.h"
#include "audit_weak.h"
#include "audit_exec.h"
#include "safe_file.h"
#include "contract_new.h"
#include "inventory.h"
#include "judge.h"
#include "json_writer.h"
#include "resources.h"
#include "schedule.h"
#include "semantic.h"
#include "session_name.h"
#include "session.h"
#include "session_seal.h"
#include "privilege.h"
#include "toolbox.h"
#include "audit_party.h"

static int make_dir(const char *path)
{
    if (mkdir(path, 0755) != 0 && errno != EEXIST)
        return kat_error("cannot create '%s': %s", path, strerror(errno));
    return 0;
}

static int audit_dir(const char *given, char *out)
{
    char made[64];
    if (!given) {
        if (kaudit_new_numbered_dir("kaudit", ".audit", made, sizeof made) != 0)
            return kat_error("cannot create an audit directory here ('%s'): %s", made, strerror(errno));
        given = made;
    } else if (make_dir(given) != 0) {
        return -1;
    }
    if (!realpath(given, out))
        return kat_error("cannot resolve '%s': %s", given, strerror(errno));
    return 0;
}

static int file_digest(const char *path, char hex[33])
{
    char err[256];
    if (ka_file_digest(path, hex, err, sizeof err) != 0) {
        snprintf(hex, 33, "unreadable");
        return -1;
    }
    return 0;
}

/* The semantic findings as the analysis takes them. */
static struct ka_semantic_finding *semantic_findings(const struct kat_semantic *s)
{
    struct ka_semantic_finding *f = kat_xcalloc(s->n_findings ? s->n_findings : 1, sizeof *f);
    static const enum ka_finding_kind kinds[] = { 0, KA_FINDING_CONVICTS, KA_FINDING_UNRESOLVED, KA_FINDING_SIGNAL,
                                                  KA_FINDING_SUPPORT };
    for (size_t i = 0; i < s->n_findings; i++) {
        f[i].kind = kinds[s->findings[i].kind];
        f[i].code = s->findings[i].code;
        f[i].text = s->findings[i].text;
    }
    return f;
}

static enum ka_verdict to_ka(enum kat_sem_verdict v)
{
    return v == KAT_SEM_PASS ? KA_PASS : v == KAT_SEM_FAIL ? KA_FAIL : KA_INCONCLUSIVE;
}

/* The candidate's builds as the worker's session shows them (analysis.json's
 * read.builds): per working folder, its processes' wall time and each tool's. */
static void write_builds(struct kat_json *j, const struct ka_analysis *an)
{
    kat_json_open(j, "builds", '[');
    for (size_t i = 0; i < an->n_builds && i < KA_BUILDS_REPORTED; i++) {
        const struct ka_build *b = &an->builds[i];
        kat_json_open(j, NULL, '{');
        kat_json_str(j, "folder", b->folder);
        kat_json_u64(j, "processes", b->processes);
        kat_json_double(j, "wall_s", b->wall_s);
        kat_json_open(j, "tools", '{');
        for (unsigned k = 0; k < b->n_tools; k++)
            kat_json_double(j, b->tools[k].name, b->tools[k].wall_s);
        kat_json_close(j, '}');
        kat_json_close(j, '}');
    }
    kat_json_close(j, ']');
}

static void write_axis(struct kat_json *j, const char *key, const struct ka_axis_result *ax)
{
    kat_json_open(j, key, '{');
    kat_json_str(j, "verdict", ka_verdict_name(ax->verdict));
    if (ax->root_cause)
        kat_json_str(j, "root_cause", ax->root_cause);
    else
        kat_json_null(j, "root_cause");
    kat_json_close(j, '}');
}

/* How the worker ended when it did not finish, for the surfaces it left unreported; NULL when it finished. */
static const char *worker_stop_reason(const struct kat_runner_end *end, char *buf, size_t n)
{
    if (end->resource) {
        char used[32], limit[32];
        audit_size_text(end->resource_used, used, sizeof used);
        audit_size_text(end->resource_limit, limit, sizeof limit);
        snprintf(buf, n, "the worker was stopped: %s %s, beyond its limit of %s", used,
                 end->resource == AUDIT_RESOURCE_MEMORY ? "resident" : "in the audit's directory", limit);
    } else if (end->timed_out)
        snprintf(buf, n, "the worker was stopped at the time limit, %.0f s", end->timeout_s);
    else if (end->signal)
        snprintf(buf, n, "the worker was killed by signal %d", end->signal);
    else if (end->exited && end->status == 3)
        snprintf(buf, n, "the runner stopped at a failed stage before the candidate module was imported");
    else if (end->exited && end->status != 0)
        snprintf(buf, n, "the worker exited with status %d", end->status);
    else
        return NULL;
    return buf;
}

static int write_record(const char *path, const struct audit_args *a, const struct audit_paths *p,
                        const struct kat_semantic *sem, const struct ka_analysis *an, const char *analysis_json,
                        const struct kat_runner_end *end, double wall_s, const double phase_s[3],
                        const struct audit_timing *timing,
                        const struct audit_probe *probe, const struct audit_weak *weak)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return kat_error("cannot write the record '%s': %s", path, strerror(errno));
    struct kat_json j;
    kat_json_init(&j, f);
    kat_json_open(&j, NULL, '{');
    kat_json_u64(&j, "kaudit_audit_record", AUDIT_RECORD_VERSION);
    kat_json_str(&j, "kaudit_version", KAUDIT_VERSION);
    if (a->id)
        kat_json_str(&j, "id", a->id);
    char hex[33];
    kat_json_open(&j, "reference", '{');
    kat_json_str(&j, "path", p->reference);
    file_digest(p->reference, hex);
    kat_json_str(&j, "digest", hex);
    kat_json_close(&j, '}');
    kat_json_open(&j, "candidate", '{');
    kat_json_str(&j, "path", p->candidate);
    file_digest(p->candidate, hex);
    kat_json_str(&j, "digest", hex);
    kat_json_close(&j, '}');
    kat_json_open(&j, "contract", '{');
    kat_json_str(&j, "path", p->contract);
    kat_json_str(&j, "digest", an->contract_digest);
    kat_json_bool(&j, "generated", p->contract_generated);
    kat_json_close(&j, '}');
    kat_json_str(&j, "device", a->device);
    kat_json_u64(&j, "seed", p->seed);
    kat_json_str(&j, "seed_source", p->seed_source ? p->seed_source : "given");
    /* which input transformations could convict (docs/audit.md, "What gates") */
    char gated[64];
    kat_json_open(&j, "stress_policy", '{');
    kat_json_str(&j, "policy", "contract-supported");
    kat_json_str(&j, "gating", kat_transforms_name(p->stress_gated, gated, sizeof gated));
    if (a->require)
        kat_json_str(&j, "required", a->require);
    else
        kat_json_null(&j, "required");
    kat_json_close(&j, '}');
    kat_json_str(&j, "audit_dir", p->dir);
    kat_json_str(&j, "session", p->session);
    if (p->seal_chain[0])
        kat_json_str(&j, "session_seal", p->seal_chain);
    else
        kat_json_null(&j, "session_seal");
    kat_json_double(&j, "wall_s", wall_s);
    kat_json_open(&j, "confinement", '{');
    kat_json_str(&j, "mechanism", p->confinement.confined ? "landlock" : "none");
    kat_json_u64(&j, "landlock_abi", (uint64_t)p->confinement.abi);
    if (p->confinement.confined)
        kat_json_null(&j, "why_not");
    else
        kat_json_str(&j, "why_not", p->confinement.why);
    kat_json_str(&j, "session_protection", p->session_protection[0] ? p->session_protection : "unknown");
    kat_json_str(&j, "privileges", p->privileges[0] ? p->privileges : "unknown");
    /* the candidate's own process, inside the worker (audit_party.h) */
    kat_json_open(&j, "candidate_process", '{');
    kat_json_bool(&j, "complete", p->party_complete);
    kat_json_str(&j, "mechanisms", p->party_confinement);
    kat_json_close(&j, '}');
    kat_json_open(&j, "write_roots", '[');
    for (size_t i = 0; p->roots && i < p->roots->n; i++)
        if (!p->roots->create_only[i])
            kat_json_str(&j, NULL, p->roots->path[i]);
    kat_json_close(&j, ']');
    kat_json_open(&j, "create_roots", '['); /* only making files there: the timing turns' lock files */
    for (size_t i = 0; p->roots && i < p->roots->n; i++)
        if (p->roots->create_only[i])
            kat_json_str(&j, NULL, p->roots->path[i]);
    kat_json_close(&j, ']');
    kat_json_close(&j, '}');
    /* where the wall time went: the worker (the runner under kaudit run),
     * the tolerance and comparison in C, the trace analysis */
    kat_json_open(&j, "phase_s", '{');
    kat_json_double(&j, "worker", phase_s[0]);
    kat_json_double(&j, "semantic", phase_s[1]);
    kat_json_double(&j, "analysis", phase_s[2]);
    kat_json_close(&j, '}');
    /* where the worker's time went, by the runner's own clock */
    double phases[AUDIT_PHASES];
    audit_phases_read(p->runner_dir, phases);
    phases[AUDIT_PHASE_BUILD_TOOLS] = an->build_wall_s;   /* from the worker's session, not the log */
    audit_phases_write(&j, phases);
    write_builds(&j, an);
    build_store_write_json(&j, &p->store);
    kat_json_str(&j, "certificate", ka_certificate_name(an->certificate));
    kat_json_str(&j, "certificate_reason", an->certificate_reason ? an->certificate_reason : "");
    if (an->outcome[0]) {
        kat_json_str(&j, "weak", an->weak == KA_WEAK_ACCEPT ? "ACCEPT" : "REJECT");
        kat_json_str(&j, "outcome", an->outcome);
        kat_json_str(&j, "outcome_reason", an->outcome_reason ? an->outcome_reason : "");
    } else {
        kat_json_null(&j, "weak");
        kat_json_null(&j, "outcome");
    }
    kat_json_open(&j, "axes", '{');
    write_axis(&j, "semantic", &an->axis[KA_AXIS_SEMANTIC]);
    write_axis(&j, "implementation", &an->axis[KA_AXIS_IMPLEMENTATION]);
    write_axis(&j, "measurement", &an->axis[KA_AXIS_MEASUREMENT]);
    kat_json_close(&j, '}');
    kat_json_open(&j, "worker", '{');
    kat_json_bool(&j, "timed_out", end->timed_out);
    kat_json_double(&j, "timeout_s", end->timeout_s);
    /* what it may use of the machine, and whether it was stopped for it */
    kat_json_open(&j, "limits", '{');
    kat_json_u64(&j, "memory_bytes", p->limits.memory_bytes);
    kat_json_u64(&j, "disk_bytes", p->limits.disk_bytes);
    kat_json_u64(&j, "disk_floor_bytes", p->limits.disk_floor_bytes);
    kat_json_str(&j, "note", p->limits_note);
    kat_json_close(&j, '}');
    /* the most it held, as measured against them (every 0.5 s and 1 s): how close it came */
    kat_json_u64(&j, "memory_peak_bytes", end->memory_peak);
    kat_json_u64(&j, "disk_peak_bytes", end->disk_peak);
    if (end->resource) {
        kat_json_open(&j, "stopped_over_limit", '{');
        kat_json_str(&j, "resource", end->resource == AUDIT_RESOURCE_MEMORY ? "memory" : "disk");
        kat_json_u64(&j, "used_bytes", end->resource_used);
        kat_json_u64(&j, "limit_bytes", end->resource_limit);
        kat_json_str(&j, "detail", end->resource_detail);
        kat_json_close(&j, '}');
    } else {
        kat_json_null(&j, "stopped_over_limit");
    }
    if (end->exited)
        kat_json_i64(&j, "exit_status", end->status);
    else
        kat_json_null(&j, "exit_status");
    kat_json_i64(&j, "signal", end->signal);
    kat_json_bool(&j, "recorder_killed", end->recorder_killed);
    kat_json_str(&j, "log", p->log);
    kat_json_close(&j, '}');
    kat_semantic_write_json(&j, "semantic", sem);
    audit_timing_write_json(&j, timing);
    audit_probe_write_json(&j, probe);
    audit_weak_write_json(&j, weak);
    if (analysis_json)
        kat_json_raw(&j, "analysis", analysis_json);
    kat_json_close(&j, '}');
    fputc('\n', f);
    int bad = ferror(f);
    if (fclose(f) != 0 || bad)
        return kat_error("cannot write the record '%s': %s", path, strerror(errno));
    return 0;
}

static int copy_file(const char *from, const char *to)
{
    FILE *in = fopen(from, "rb");
    if (!in)
        return kat_error("cannot read '%s': %s", from, strerror(errno));
    FILE *out = fopen(to, "wb");
    if (!out) {
        fclose(in);
        return kat_error("cannot write '%s': %s", to, strerror(errno));
    }
    char buf[65536];
    size_t got;
    while ((got = fread(buf, 1, sizeof buf, in)) > 0)
        fwrite(buf, 1, got, out);
    fclose(in);
    int bad = ferror(out);
    if (fclose(out) != 0 || bad)
        return kat_error("cannot write '%s': %s", to, strerror(errno));
    return 0;
}

static void print_semantic(const struct kat_semantic *s)
{
    printf("  stress: %zu slots judged", s->n_slots - s->dropped_slots);
    if (s->replaced_slots)
        printf(" (%u of them native seeds standing in for others)", s->replaced_slots);
    printf(", %u calls compared; tolerance %s%s%s\n", s->calls_compared,
           s->params.mode == KAT_TOL_PAPER ? "paper Eq. 1" : "Eq. 1 with the reference-error floor",
           s->alignment ? "; state aligned " : "", s->alignment ? s->alignment : "");
    for (size_t i = 0; i < s->n_slots; i++)
        if (s->slots[i].replaces)
            printf("    slot %d %s stands in for %s: %s\n", s->slots[i].index, s->slots[i].name, s->slots[i].replaces,
                   s->slots[i].replaced_because ? s->slots[i].replaced_because : "");
    unsigned shown = 0, total = 0;
    for (size_t i = 0; i < s->n_findings; i++) {
        const struct kat_sem_finding *f = &s->findings[i];
        if (f->kind != KAT_SEM_CONVICTS && f->kind != KAT_SEM_UNRESOLVED)
            continue;
        total++;
        if (shown < 6) {
            printf("    [%s] %s: %s\n", f->kind == KAT_SEM_CONVICTS ? "convicts" : "unresolved", f->code,
                   f->text ? f->text : "");
            shown++;
        }
    }
    if (total > shown)
        printf("    ... %u more (the record lists every one)\n", total - shown);
    /* what the reported slots found: they do not gate, but a user must see
       "right on the task's inputs; wrong for a strided view" */
    for (size_t i = 0; i < s->n_findings; i++) {
        const struct kat_sem_finding *f = &s->findings[i];
        char code[40];
        if (f->kind == KAT_SEM_SIGNAL && f->slot_name && !strcmp(f->code, kat_reported_code(f->slot_name, code, sizeof code)))
            printf("    [reported, not gating] %s: %s\n", f->code, f->text ? f->text : "");
    }
}

/* The worker's confinement, applied by kaudit run in its command's child:
 * what its session's info says. */
static void confinement_from_session(struct audit_paths *p)
{
    if (p->confinement.confined != -1)
        return;
    p->confinement.confined = 0;
    snprintf(p->confinement.why, sizeof p->confinement.why, "unknown: the session's info does not say");
    struct kat_session *s;
    char err[512];
    if (kat_session_open(p->session, &s, err, sizeof err) != 0) {
        snprintf(p->confinement.why, sizeof p->confinement.why, "unknown: %.480s", err);
        return;
    }
    const char *wc = kat_session_info(s, "write_confinement");
    int abi;
    if (wc && sscanf(wc, "landlock ABI %d", &abi) == 1) {
        p->confinement.confined = 1;
        p->confinement.abi = abi;
    } else if (wc) {
        snprintf(p->confinement.why, sizeof p->confinement.why, "%s", wc);
    }
    const char *sp = kat_session_info(s, "session_protection");
    snprintf(p->session_protection, sizeof p->session_protection, "%s", sp ? sp : "unknown");
    const char *wp = kat_session_info(s, "worker_privileges");
    if (!p->privileges[0]) /* a reason found before the run (the uid could not read the task) stays */
        snprintf(p->privileges, sizeof p->privileges, "%s", wp ? wp : "unknown: the session's info does not say");
    kat_session_close(s);
}

/*
 * The build caches, private to this audit (a cache shared with other
 * audits could be locked or poisoned by them, and a killed build's lock
 * would cost every later audit its time limit), and private to each party:
 * the candidate's, DIR/cache, where an earlier audit's builds of this
 * candidate are copied in when the store has them (build_store.h), and the
 * reference's, DIR/reference-cache, which the candidate's process can
 * neither write nor read (a cache both used let the candidate lay out the
 * reference's own run-time builds: tests/audit_build_store.sh, 3c).  The
 * worker's environment names the reference's; the candidate's reaches its
 * process through the party plan (audit_party.c).
 */
static int private_caches(struct audit_paths *p, char *err, size_t n)
{
    snprintf(p->cache, sizeof p->cache, "%s/cache", p->dir);
    snprintf(p->reference_cache, sizeof p->reference_cache, "%s/reference-cache", p->dir);
    if (make_dir(p->cache) || make_dir(p->reference_cache))
        return kat_fail(err, n, "cannot make the parties' caches in '%s'", p->dir);
    if (audit_caches_beneath(p->cache, 1, err, n) != 0)
        return -1;
    build_store_fill(&p->store, p->cache);
    snprintf(p->cache_seen, sizeof p->cache_seen, "%s", build_store_bound(&p->store) ? p->store.at : p->cache);
    return audit_caches_beneath(p->reference_cache, 1, err, n);
}

/*
 * kaudit as root: the worker runs as a uid of its own without capabilities
 * (supervisor/privilege.h).  Its directories and build caches are given to
 * that uid, and its HOME is DIR/home.  When the uid cannot read what the
 * worker must (a task or kaudit's files beneath a directory only root may
 * enter), the worker keeps kaudit's privileges and the record says why: a
 * PASS certificate is then withheld (audit_confinement_complete).
 */
static int worker_identity(struct audit_paths *p, const char *runner, const char *python, char *err, size_t n)
{
    p->worker_uid = 0;
    p->home[0] = '\0';
    p->reference_home[0] = '\0';
    if (private_caches(p, err, n) != 0)
        return -1;
    if (geteuid() != 0)
        return 0;
    uid_t uid;
    if (privilege_pick_uid(&uid, err, n) != 0)
        return -1;
    char handoff[PATH_MAX + 16], party[PATH_MAX + 16];
    const char *cache = p->cache;
    /* a home for each party: the candidate's is DIR/home (its plan's), the
       runner's, which the reference runs in, DIR/reference-home */
    snprintf(p->home, sizeof p->home, "%s/home", p->dir);
    snprintf(p->reference_home, sizeof p->reference_home, "%s/reference-home", p->dir);
    if (make_dir(p->home) || make_dir(p->reference_home))
        return kat_fail(err, n, "cannot make the parties' homes in '%s'", p->dir);
    if (audit_party_dirs(p, handoff, party, sizeof handoff, err, n) != 0)
        return -1;
    setenv("HOME", p->reference_home, 1);
    /* the worker's uid has no passwd entry: a name for what asks for one
       (Python's getpass.getuser(), which torch._dynamo's import calls, raises
       KeyError from getpwuid() without it: measured on the H200, every probe
       replay that imported it failed) */
    char user[32];
    snprintf(user, sizeof user, "kaudit-%u", (unsigned)uid);
    setenv("USER", user, 1);
    setenv("LOGNAME", user, 1);
    char preload[PATH_MAX], perr[PATH_MAX + 256], cannot[PATH_MAX], interpreter[PATH_MAX];
    /* the Python that kaudit run will exec, found on PATH as kaudit finds it
       (a pyenv or conda Python beneath /root is root's alone: the worker's
       uid could not start it, and the audit would end with exit 126 and no
       verdict at all) */
    int located = kat_locate_command(python, interpreter, sizeof interpreter) == 0;
    const char *must_read[] = { p->reference,
                                p->candidate,
                                runner,
                                p->dir,
                                kres_preload(preload, sizeof preload, perr, sizeof perr) == 0 ? preload : NULL,
                                located ? interpreter : NULL };
    int readable = privilege_can_read(uid, must_read, sizeof must_read / sizeof must_read[0], cannot, sizeof cannot);
    if (readable != 1) {
        snprintf(p->privileges, sizeof p->privileges, "kept: the worker's uid %u cannot read %.260s", (unsigned)uid,
                 readable == 0 ? cannot : "what it must (the check failed)");
        return 0;
    }
    const char *give[] = { p->runner_dir,     p->work,           p->tmp,         cache,
                           p->home,           p->reference_work, p->reference_tmp, p->reference_cache,
                           p->reference_home, handoff,           party };
    for (size_t i = 0; i < sizeof give / sizeof give[0]; i++)
        if (privilege_give_tree(give[i], uid, err, n) != 0)
            return -1;
    p->worker_uid = (long)uid;
    return 0;
}

/* The tolerance of the semantic axis, which the probe's baseline check uses too. */
static struct kat_tol_params tolerance_params(const struct audit_args *a)
{
    struct kat_tol_params params = kat_tol_params_default();
    params.mode = a->paper_tolerance ? KAT_TOL_PAPER : KAT_TOL_REFERENCE_FLOOR;
    return params;
}

static double seconds_since(const struct timespec *t0)
{
    struct timespec t1;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    return (double)(t1.tv_sec - t0->tv_sec) + (double)(t1.tv_nsec - t0->tv_nsec) * 1e-9;
}

/* What one audit holds from its start to its record. */
struct audit_run {
    const struct audit_args *a;
    struct audit_paths p;
    struct ka_contract *contract;
    char runner[PATH_MAX];
    const char *python;
    char events[PATH_MAX + 32];
    struct kat_plan plan;
    int probe_planned;
    struct kat_runner_end end;
    struct kat_semantic *sem;
    char contract_missing[1024];
    struct kinv_inventory *inv;
    const char *inv_path;
    char inv_buf[PATH_MAX];
    struct ka_semantic_finding *sf;
    struct ka_semantic_evidence ev;
    struct audit_probe probe;
    struct ka_options opt;
    char seal_err[2048], broken[2100];
    struct ka_analysis *an;
    struct audit_timing timing;
    struct audit_weak weak;
    double phase_s[3];
    char err[4096];
};

/* The audit's seed: --seed N, or 64 bits from the kernel (getrandom), so that no
 * candidate can know the inputs it will be asked before it is asked them. */
static int audit_seed(struct audit_run *r)
{
    if (r->a->seed_given) {
        r->p.seed = r->a->seed;
        r->p.seed_source = "given";
        return 0;
    }
    unsigned long long s;
    if (kat_random_bytes(&s, sizeof s) != 0)
        return kat_error("cannot draw the audit's seed from the kernel: %s", strerror(errno));
    r->p.seed = s & 0x7FFFFFFFFFFFFFFFULL; /* Python and JSON readers take it as a signed 64-bit number */
    r->p.seed_source = "kernel";
    return 0;
}

/* A directory audited in before: what the last audit's worker left (its
 * working folder, temporary files, build caches, HOME, the parties'
 * exchange folders, the runner's files) goes first, or a candidate audited
 * there would find it (another candidate's build in its cache, which the
 * build store would then keep as its own).  None of them may hold the
 * files audited (an error, before anything is removed). */
static int clear_leftovers(const struct audit_paths *p, const struct audit_args *a)
{
    static const char *const left[] = { "runner",         "work",          "tmp",           "cache",
                                        "cache.store-in", "home",          "handoff",       "party",
                                        "reference-work", "reference-tmp", "reference-cache", "reference-home" };
    char path[PATH_MAX + 32], contract[PATH_MAX];
    const char *given[] = { p->reference, p->candidate,
                            a->contract && realpath(a->contract, contract) ? contract : NULL };
    for (size_t i = 0; i < sizeof left / sizeof left[0]; i++) {
        snprintf(path, sizeof path, "%s/%s", p->dir, left[i]);
        for (size_t g = 0; g < sizeof given / sizeof given[0]; g++)
            if (given[g] && audit_path_holds(path, given[g]))
                return kat_error("'%s' lies in '%s', which an audit in '%s' empties: audit it from elsewhere",
                                 given[g], path, p->dir);
    }
    for (size_t i = 0; i < sizeof left / sizeof left[0]; i++) {
        snprintf(path, sizeof path, "%s/%s", p->dir, left[i]);
        kat_remove_tree(path);
    }
    return 0;
}

/* The audit's directories, its contract when given, the runner and the Python. */
static int audit_prepare(struct audit_run *r)
{
    const struct audit_args *a = r->a;
    struct audit_paths *p = &r->p;
    if (!realpath(a->reference, p->reference))
        return kat_error("cannot read the reference '%s': %s", a->reference, strerror(errno));
    if (!realpath(a->candidate, p->candidate))
        return kat_error("cannot read the candidate '%s': %s", a->candidate, strerror(errno));
    if (audit_dir(a->dir, p->dir) != 0)
        return -1;
    snprintf(p->session, sizeof p->session, "%s/session", p->dir);
    snprintf(p->runner_dir, sizeof p->runner_dir, "%s/runner", p->dir);
    snprintf(p->work, sizeof p->work, "%s/work", p->dir);
    snprintf(p->tmp, sizeof p->tmp, "%s/tmp", p->dir);
    /* the runner's, where the reference runs: not the candidate's work/ and
       tmp/, where it could lay out what the reference compiles or reads there
       (tests/audit_attacks.sh, poison_reference_tmp) */
    snprintf(p->reference_work, sizeof p->reference_work, "%s/reference-work", p->dir);
    snprintf(p->reference_tmp, sizeof p->reference_tmp, "%s/reference-tmp", p->dir);
    snprintf(p->log, sizeof p->log, "%s/runner/worker.log", p->dir);
    snprintf(p->plan, sizeof p->plan, "%s/plan.json", p->dir);
    snprintf(p->record, sizeof p->record, "%s/record.json", p->dir);
    if (clear_leftovers(p, a) != 0)
        return -1;
    if (make_dir(p->runner_dir) || make_dir(p->work) || make_dir(p->tmp) || make_dir(p->reference_work) ||
        make_dir(p->reference_tmp))
        return -1;
    /* a directory used before: its old log must not be read as this run's */
    snprintf(r->events, sizeof r->events, "%s/events.jsonl", p->runner_dir);
    if (unlink(r->events) != 0 && errno != ENOENT)
        return kat_error("cannot remove the old '%s': %s", r->events, strerror(errno));
    if (audit_seed(r) != 0)
        return -1;
    if (a->contract) {
        if (!realpath(a->contract, p->contract))
            return kat_error("cannot read contract '%s': %s", a->contract, strerror(errno));
        if (ka_contract_load(p->contract, a->manifest, &r->contract, r->err, sizeof r->err) != 0)
            return kat_error("%s", r->err);
    }
    if (kres_data_file("runner/kaudit_runner.py", r->runner, sizeof r->runner) != 0)
        return kat_error("cannot find the runner (runner/kaudit_runner.py under the data directory; set "
                         "KAUDIT_DATA_DIR)");
    r->python = a->python ? a->python : getenv("KAUDIT_PYTHON");
    if (!r->python || !*r->python)
        r->python = "python3";
    return 0;
}

/*
 * Where the worker may write, and the plan.  Landlock lets the worker write
 * beneath runner/, work/, tmp/, handoff/, party/ and the build caches only
 * (not the session, which kaudit run writes and its command may not); the
 * runner's audit hook lets the tasks' Python code write beneath work/, tmp/
 * and the caches only; the candidate's own process is confined further
 * (audit_party.h; docs/audit.md, "Confinement").
 */
static int audit_plan(struct audit_run *r)
{
    const struct audit_args *a = r->a;
    struct audit_paths *p = &r->p;
    /* read before the worker's HOME and caches are set */
    build_store_open(&p->store, a->build_store, p->candidate, a->device, r->python);
    if (a->build_store_max)
        audit_limit_parse(a->build_store_max, &p->store.max_bytes, r->err, sizeof r->err); /* checked by audit_parse */
    if (worker_identity(p, r->runner, r->python, r->err, sizeof r->err) != 0)
        return kat_error("%s", r->err);
    static struct audit_roots roots_storage; /* large; one audit per process */
    struct audit_roots *roots = &roots_storage;
    p->roots = roots;
    int timed = a->timing < 0 ? !strcmp(a->device, "cuda") : a->timing;
    /* the timed phases take turns with other audits on the same device
     * (docs/timing.md, "Concurrent audits"): the runner makes its device's
     * lock file in the turns' directory, where it may only make files */
    static char lock_dir[PATH_MAX];
    char lock_why[PATH_MAX + 64];
    /* shared by every audit, timed or not: an untimed audit's work must stay out of others' timed windows */
    int turns = audit_timing_lock_dir(lock_dir, sizeof lock_dir, lock_why, sizeof lock_why) == 0;
    if (timed && !turns && !a->quiet)
        fprintf(stderr, "kaudit: the timing takes no turns with other audits: %s\n", lock_why);
    char handoff[PATH_MAX + 16], party[PATH_MAX + 16];
    if (audit_party_dirs(p, handoff, party, sizeof handoff, r->err, sizeof r->err) != 0)
        return kat_error("%s", r->err);
    /* the candidate's caches (their real folder: a Landlock rule is bound to
       what a path names out here, not in the worker's namespace, where the
       store's fixed path shows them), and the parties' homes, where kaudit as
       root made them (worker_identity): CuPy, tilelang, FlashInfer and
       DeepGEMM keep their kernel caches beneath ~ whatever the cache
       variables say.  The reference's caches are the environment's
       (audit_roots_for). */
    const char *own[10] = { p->runner_dir, p->work, p->tmp, handoff, party, p->cache, p->reference_work,
                             p->reference_tmp };
    size_t n_own = 8;
    if (p->home[0])
        own[n_own++] = p->home;
    if (p->reference_home[0])
        own[n_own++] = p->reference_home;
    /* the turns' lock files: made there, never removed or replaced (a
     * candidate that could would split the audits between two files) */
    if (audit_roots_for(roots, own, n_own, a->allow_write, (size_t)a->n_allow_write, r->err, sizeof r->err) != 0 ||
        (turns && audit_roots_add_create_only(roots, lock_dir, r->err, sizeof r->err) != 0))
        return kat_error("%s", r->err);
    /* where the runner's audit hook lets the reference's Python code write:
       the candidate's caches and home are not among them (its process has
       its own guard, from the party plan) */
    static const char *task_roots[AUDIT_MAX_ROOTS];
    size_t n_task_roots = 0;
    task_roots[n_task_roots++] = p->reference_work;
    task_roots[n_task_roots++] = p->reference_tmp;
    if (p->reference_home[0])
        task_roots[n_task_roots++] = p->reference_home;
    n_task_roots += audit_python_roots(roots, n_own, task_roots + n_task_roots, AUDIT_MAX_ROOTS - n_task_roots);
    char preload[PATH_MAX], perr[PATH_MAX + 256];
    char *party_json = audit_party_plan(p, a, r->runner,
                                        kres_preload(preload, sizeof preload, perr, sizeof perr) == 0 ? preload : NULL,
                                        r->err, sizeof r->err);
    if (!party_json)
        return kat_error("%s", r->err);
    struct ka_contract *contract = r->contract;
    /* the paper's contract-supported policy: a layout slot gates only where the
       contract declares that layout valid, or --require asks for it */
    p->stress_gated = a->require_transforms;
    if (contract && (contract->stress_layouts & KA_LAYOUT_STRIDED))
        p->stress_gated |= KAT_TRANSFORM_STRIDED;
    if (contract && (contract->stress_layouts & KA_LAYOUT_TRANSPOSED))
        p->stress_gated |= KAT_TRANSFORM_TRANSPOSED;
    r->plan = (struct kat_plan){ .reference = p->reference, .candidate = p->candidate, .device = a->device,
                                 .seed = p->seed, .out_dir = p->runner_dir, .work_dir = p->reference_work,
                                 .alternative_shapes = contract ? contract->alternative_shapes : NULL,
                                 .candidate_only_state = contract ? contract->candidate_only_state : NULL,
                                 .gated_transforms = p->stress_gated,
                                 .long_run_calls = AUDIT_LONG_RUN_CALLS, .modes = 1, .state_reload = 1,
                                 .timed_calls = 5, .write_roots = task_roots, .n_write_roots = n_task_roots,
                                 .timing = timed, .timing_lock_dir = turns ? lock_dir : NULL,
                                 /* what is timed holds the device: the timing checks, and on a GPU the
                                  * timed calls the measurement axis reads, which run always */
                                 .timing_turns = turns && (timed || !strcmp(a->device, "cuda")),
                                 /* past this the phase is timed anyway (and its speedup withheld): a
                                  * worker must not spend its time limit waiting */
                                 .timing_lock_wait_s = audit_timing_lock_wait(a->timeout_s),
                                 .weak_surfaces = a->weak_mask ? audit_weak_plan_json(a->weak_mask) : NULL,
                                 .party = party_json };
    /* the causal probe's targets: the contract's forbidden classes, or the core classes
       a generated contract forbids (docs/audit.md, "Causal probe") */
    char *probe_targets = a->probe ? ka_probe_targets_json(contract) : NULL;
    r->probe_planned = probe_targets != NULL;
    r->plan.probe = probe_targets;
    int plan_rc = kat_plan_write(p->plan, &r->plan, r->err, sizeof r->err);
    free(probe_targets);
    free(party_json);
    r->plan.probe = NULL;
    r->plan.party = NULL;
    if (plan_rc != 0)
        return kat_error("%s", r->err);
    return 0;
}

/* The contract written from what the reference's get_inputs() returned in
 * this run; when it cannot be, the trace axes fail closed. */
static int audit_generated_contract(struct audit_run *r)
{
    struct audit_paths *p = &r->p;
    snprintf(p->contract, sizeof p->contract, "%s/contract.json", p->dir);
    char manifest[PATH_MAX + 32];
    snprintf(manifest, sizeof manifest, "%s/manifest.json", p->dir);
    p->contract_generated = 1;
    if (contract_new_write(p->contract, manifest, p->reference, r->events, p->cache_seen, &r->contract, r->err,
                           sizeof r->err) == 0) {
        if (!r->a->quiet)
            fprintf(stderr, "kaudit: no --contract: wrote %s from the reference (core self-implementation, "
                            "reference work measured from its phase)\n",
                    p->contract);
        return 0;
    }
    /* no input specs (the reference never ran, or the event that holds
     * them is gone): fail closed.  The analysis runs against a minimal
     * contract only so that the record says why; the trace axes are
     * INCONCLUSIVE, never judged against a contract that forbids nothing. */
    if (!r->a->quiet)
        kat_say("note", "no contract could be written from the reference: %s", r->err);
    snprintf(r->contract_missing, sizeof r->contract_missing,
             "contract-ungenerated: no contract could be written from the runner's evidence (%.900s)", r->err);
    static const char minimal[] = "{\"kaudit_contract\": 1, \"task_id\": \"generated/unrunnable\", "
                                  "\"implementation\": {\"self_implemented\": false}}";
    if (ka_contract_parse(minimal, sizeof minimal - 1, "(generated)", &r->contract, r->err, sizeof r->err) != 0)
        return kat_error("%s", r->err);
    return 0;
}

/* The analysis's options: the inventory, the semantic evidence, the probe,
 * and what leaves the trace axes INCONCLUSIVE (a broken seal, no contract). */
static int audit_judge_options(struct audit_run *r)
{
    const struct audit_args *a = r->a;
    struct audit_paths *p = &r->p;
    kres_inventory(a->inventory, &r->inv_path, r->inv_buf, sizeof r->inv_buf);
    struct kinv_err ierr;
    if (r->inv_path && kinv_load(r->inv_path, &r->inv, &ierr) != 0)
        return kat_error("%s", ierr.msg);
    struct kat_semantic *sem = r->sem;
    r->sf = semantic_findings(sem);
    r->ev = (struct ka_semantic_evidence){ .verdict = to_ka(sem->verdict), .root_cause = sem->root_cause,
                                           .degenerate = sem->degenerate, .signature = sem->signature,
                                           .findings = r->sf, .n_findings = sem->n_findings };
    struct ka_options *opt = &r->opt;
    memset(opt, 0, sizeof *opt);
    opt->inventory = r->inv;
    opt->inventory_path = r->inv_path;
    opt->weak = a->weak;
    opt->semantic_evidence = &r->ev;
    struct kat_tol_params params = tolerance_params(a);
    audit_probe_read(p->runner_dir, r->probe_planned, &params, &r->probe);
    opt->probe = r->probe.planned ? &r->probe.ev : NULL;
    opt->weak_phase_expected = a->weak_mask != 0;
    /* the runner's process is the reference's: a phase claiming the reference
       anywhere else is the candidate's own making (but in the weak surfaces,
       which run both parties in its process after the audit's work) */
    opt->reference_process = r->runner;
    if (strcmp(a->device, "cpu") == 0)
        opt->trace_axes_unsupported = "audited with --device cpu: there is no GPU work to attribute or to time";
    /* The worker and all it left have ended: the session must match the seal
     * kaudit run wrote; the chain goes into the record. */
    int sealed = session_seal_verify(p->session, p->seal_chain, r->seal_err, sizeof r->seal_err);
    if (sealed < 0) {
        snprintf(r->broken, sizeof r->broken, "%s", r->seal_err);
        opt->trace_axes_unsupported = r->broken;
        opt->trace_axes_inconclusive = 1;
        p->seal_chain[0] = '\0';
    } else if (sealed == 1) {
        p->seal_chain[0] = '\0';
    }
    if (r->contract_missing[0] && sealed >= 0) {
        opt->trace_axes_unsupported = r->contract_missing;
        opt->trace_axes_inconclusive = 1;
    }
    return 0;
}

/* The analysis, the timing decisions, and what withholds the certificate. */
static int audit_judge(struct audit_run *r)
{
    const struct audit_args *a = r->a;
    struct audit_paths *p = &r->p;
    if (ka_analyze(p->session, r->contract, &r->opt, &r->an, r->err, sizeof r->err) != 0)
        return kat_error("%s", r->err);
    /* the timing checks: speedups need the measurement axis; the stream
     * differential may withhold the certificate (audit_timing.h) */
    audit_timing_read(p->runner_dir, r->plan.timing, r->plan.timing_turns, &r->timing);
    r->timing.has_claimed = a->has_claimed;
    r->timing.claimed = a->claimed_speedup;
    audit_timing_decide(&r->timing, r->an);
    char stopped[160];
    audit_weak_read(p->runner_dir, a->weak_mask, worker_stop_reason(&r->end, stopped, sizeof stopped), &r->weak);
    if (r->timing.stream_withholds)
        ka_withhold_certificate(r->an, r->timing.stream_why);
    char gap[900];
    if (!audit_confinement_complete(&p->confinement, p->session_protection, p->privileges, gap, sizeof gap))
        ka_withhold_certificate(r->an, gap);
    else if (!p->party_complete) {
        snprintf(gap, sizeof gap, "confinement-incomplete: the candidate's process was not confined on its own (%s)",
                 p->party_confinement);
        ka_withhold_certificate(r->an, gap);
    }
    return 0;
}

/* The record, its --json copy, the summary, and the tensor files let go. */
static int audit_report(struct audit_run *r, double wall, struct audit_result *res)
{
    const struct audit_args *a = r->a;
    struct audit_paths *p = &r->p;
    char *json = ka_report_json(r->an);
    int rc = write_record(p->record, a, p, r->sem, r->an, json, &r->end, wall, r->phase_s, &r->timing, &r->probe,
                          &r->weak);
    free(json);
    if (rc != 0 || (a->json && copy_file(p->record, a->json) != 0))
        return -1;
    if (!a->quiet) {
        print_semantic(r->sem);
        ka_report_summary(stdout, r->an);
        audit_probe_print(stdout, &r->probe);
        audit_timing_print(stdout, &r->timing);
        audit_weak_print(stdout, &r->weak);
        printf("  record: %s\n", p->record);
    }
    if (!a->keep_tensors) {
        char tensors[PATH_MAX + 32];
        snprintf(tensors, sizeof tensors, "%s/tensors", p->runner_dir);
        kat_remove_tree(tensors); /* the tensor files once judged (they can be large) */
    }
    res->certificate = r->an->certificate;
    snprintf(res->outcome, sizeof res->outcome, "%s", r->an->outcome);
    snprintf(res->record, sizeof res->record, "%s", p->record);
    res->wall_s = wall;
    return 0;
}

/* --memory-limit and --disk-limit (already checked by audit_parse; NULL: auto)
 * as bytes, auto read from the machine now, for one audit alone. */
static void resolve_limits(const struct audit_args *a, struct audit_paths *p)
{
    const char *given[2] = { a->memory_limit ? a->memory_limit : "auto", a->disk_limit ? a->disk_limit : "auto" };
    unsigned long long *to[2] = { &p->limits.memory_bytes, &p->limits.disk_bytes };
    char err[160];
    for (int i = 0; i < 2; i++)
        if (audit_limit_parse(given[i], to[i], err, sizeof err) != 0)
            *to[i] = AUDIT_LIMIT_AUTO;
    audit_limits_resolve(&p->limits, p->dir, 1, p->limits_note, sizeof p->limits_note);
}

static void audit_run_free(struct audit_run *r)
{
    build_store_free(&r->p.store);
    ka_analysis_free(r->an);
    free(r->sf);
    kinv_free(r->inv);
    ka_contract_free(r->contract);
    kat_semantic_free(r->sem);
}

int audit_one(const struct audit_args *a, struct audit_result *res)
{
    memset(res, 0, sizeof *res);
    res->exit_status = KAUDIT_EXIT_ERROR;
    struct timespec t0, tp;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    static struct audit_run run; /* large; one audit per process */
    struct audit_run *r = &run;
    memset(r, 0, sizeof *r);
    r->a = a;
    int rc = KAUDIT_EXIT_ERROR;
    if (audit_prepare(r) != 0 || audit_plan(r) != 0)
        goto out;
    struct audit_paths *p = &r->p;
    if (!a->quiet)
        fprintf(stderr, "kaudit: auditing %s against %s on %s (seed %llu%s) in %s\n", p->candidate, p->reference,
                a->device, p->seed, a->seed_given ? "" : ", drawn", p->dir);
    resolve_limits(a, p);
    struct audit_worker w = { .session_dir = p->session, .log_path = p->log, .work_dir = p->reference_work,
                              .python = r->python, .runner = r->runner, .plan = p->plan, .record = 1,
                              .timeout_s = a->timeout_s, .roots = p->roots, .tmp_dir = p->reference_tmp,
                              .confinement = &p->confinement, .worker_uid = p->worker_uid,
                              .limits = &p->limits, .usage_dir = p->dir,
                              .bind_dir = build_store_bound(&p->store) ? p->cache : NULL,
                              .bind_at = p->store.at };
    clock_gettime(CLOCK_MONOTONIC, &tp);
    if (audit_exec(&w, &r->end, r->err, sizeof r->err) != 0) {
        kat_error("%s", r->err);
        goto out;
    }
    r->phase_s[0] = seconds_since(&tp);
    /* its builds kept for the candidate's next audit, when it ended cleanly */
    build_store_keep(&p->store, p->cache, (uid_t)p->worker_uid,
                     r->end.exited && !r->end.timed_out && !r->end.resource);
    confinement_from_session(p);
    struct audit_party_confinement party;
    audit_party_read(r->events, &party);
    snprintf(p->party_confinement, sizeof p->party_confinement, "%s", party.summary);
    p->party_complete = party.complete;

    clock_gettime(CLOCK_MONOTONIC, &tp);
    struct kat_tol_params params = tolerance_params(a);
    if (kat_semantic_evaluate(p->runner_dir, KAT_SCHEDULE_SLOTS, &params, &r->end, &r->sem, r->err,
                              sizeof r->err) != 0) {
        kat_error("%s", r->err);
        goto out;
    }
    r->phase_s[1] = seconds_since(&tp);
    clock_gettime(CLOCK_MONOTONIC, &tp);
    if ((!r->contract && audit_generated_contract(r) != 0) || audit_judge_options(r) != 0 || audit_judge(r) != 0)
        goto out;
    r->phase_s[2] = seconds_since(&tp);
    if (audit_report(r, seconds_since(&t0), res) != 0)
        goto out;
    rc = judge_exit_status(r->an->certificate);
out:
    res->exit_status = rc;
    audit_run_free(r);
    return rc;
}
