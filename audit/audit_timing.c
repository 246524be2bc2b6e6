/* audit_timing.c - the A/A screen, the speedup and the stream differential of one audit (audit_timing.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "audit_timing.h"
#include "events.h"
#include "json_writer.h"

#define LATENCIES (KAT_TIMING_BATCHES * KAT_TIMING_PER_BATCH)

/* One arm's latencies of a batch: exactly KAT_TIMING_PER_BATCH numbers. */
static int read_latencies(const cJSON *list, double *out)
{
    if (!cJSON_IsArray(list) || cJSON_GetArraySize(list) != KAT_TIMING_PER_BATCH)
        return -1;
    int i = 0;
    const cJSON *v;
    cJSON_ArrayForEach(v, list)
    {
        if (!cJSON_IsNumber(v))
            return -1;
        out[i++] = v->valuedouble;
    }
    return 0;
}

static void read_check(const cJSON *e, struct audit_timing_check *c, unsigned lineno)
{
    memset(c, 0, sizeof *c);
    c->present = 1;
    const cJSON *clock = cJSON_GetObjectItemCaseSensitive(e, "clock");
    snprintf(c->clock, sizeof c->clock, "%s", cJSON_IsString(clock) ? clock->valuestring : "?");
    const cJSON *secs = cJSON_GetObjectItemCaseSensitive(e, "seconds");
    c->seconds = cJSON_IsNumber(secs) ? secs->valuedouble : 0;
    const cJSON *status = cJSON_GetObjectItemCaseSensitive(e, "status");
    if (!cJSON_IsString(status) || strcmp(status->valuestring, "ok") != 0) {
        const cJSON *err = cJSON_GetObjectItemCaseSensitive(e, "error");
        c->error = 1;
        snprintf(c->why, sizeof c->why, "the timed calls raised: %s",
                 cJSON_IsString(err) ? err->valuestring : "(no error given)");
        return;
    }
    const cJSON *batches = cJSON_GetObjectItemCaseSensitive(e, "batches");
    static double a[LATENCIES], b[LATENCIES];
    int n = 0;
    const cJSON *batch;
    if (cJSON_IsArray(batches) && cJSON_GetArraySize(batches) == KAT_TIMING_BATCHES)
        cJSON_ArrayForEach(batch, batches)
        {
            const cJSON *order = cJSON_GetObjectItemCaseSensitive(batch, "order");
            if (!cJSON_IsString(order) ||
                read_latencies(cJSON_GetObjectItemCaseSensitive(batch, "a"), a + n * KAT_TIMING_PER_BATCH) ||
                read_latencies(cJSON_GetObjectItemCaseSensitive(batch, "b"), b + n * KAT_TIMING_PER_BATCH))
                break;
            snprintf(c->orders[n], sizeof c->orders[n], "%s", order->valuestring);
            n++;
        }
    if (n != KAT_TIMING_BATCHES) {
        c->error = 1;
        snprintf(c->why, sizeof c->why,
                 "events.jsonl line %u: the batches are not %d of %d latencies per arm", lineno, KAT_TIMING_BATCHES,
                 KAT_TIMING_PER_BATCH);
        return;
    }
    struct kat_timing_arms arms = { a, b, KAT_TIMING_BATCHES, KAT_TIMING_PER_BATCH };
    kat_timing_paired(&arms, 0, &c->r);
    if (!c->r.ok) {
        c->error = 1;
        snprintf(c->why, sizeof c->why, "events.jsonl line %u: a latency is not a positive finite number", lineno);
    }
}

static int on_timing_event(const cJSON *e, unsigned lineno, void *arg)
{
    struct audit_timing *t = arg;
    const cJSON *check = cJSON_GetObjectItemCaseSensitive(e, "check");
    if (!cJSON_IsString(check))
        return 0;
    struct audit_timing_check *c = !strcmp(check->valuestring, "aa")        ? &t->aa
                                   : !strcmp(check->valuestring, "speedup") ? &t->speedup
                                   : !strcmp(check->valuestring, "stream")  ? &t->stream
                                                                            : NULL;
    if (c && c->present) {
        /* the runner logs each check once: a second is someone else's */
        c->error = 1;
        snprintf(c->why, sizeof c->why,
                 "events.jsonl line %u: a second '%s' timing event (the runner writes one): the timing evidence was "
                 "written by someone else too",
                 lineno, check->valuestring);
    } else if (c) {
        read_check(e, c, lineno);
    }
    return 0;
}

static void copy_string(const cJSON *e, const char *key, char *out, size_t n)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(e, key);
    snprintf(out, n, "%s", cJSON_IsString(v) ? v->valuestring : "?");
}

static int on_turn_event(const cJSON *e, unsigned lineno, void *arg)
{
    (void)lineno;
    struct audit_timing *t = arg;
    char phase[16];
    copy_string(e, "phase", phase, sizeof phase);
    if (strcmp(phase, "reference") != 0 && strcmp(phase, "candidate") != 0)
        return 0;
    for (int i = 0; i < t->n_turns; i++)
        if (!strcmp(t->turns[i].phase, phase)) {
            t->extra_turns++; /* the runner logs each phase's turn once */
            return 0;
        }
    struct audit_timing_turn *turn = &t->turns[t->n_turns++];
    snprintf(turn->phase, sizeof turn->phase, "%s", phase);
    copy_string(e, "device", turn->device, sizeof turn->device);
    copy_string(e, "status", turn->status, sizeof turn->status);
    const cJSON *w = cJSON_GetObjectItemCaseSensitive(e, "waited_s");
    turn->waited_s = cJSON_IsNumber(w) ? w->valuedouble : NAN;
    return 0;
}

void audit_timing_read(const char *runner_dir, int requested, int turns_planned, struct audit_timing *t)
{
    memset(t, 0, sizeof *t);
    t->requested = requested;
    t->turns_planned = turns_planned;
    kat_events_each(runner_dir, "timing", on_timing_event, t); /* no log: no checks */
    kat_events_each(runner_dir, "timing_turn", on_turn_event, t);
}

double audit_timing_lock_wait(double timeout_s)
{
    double bound = timeout_s / 4, wait = bound < 120 ? bound : 120;
    const char *given = getenv("KAUDIT_TIMING_LOCK_WAIT_S");
    if (given && *given) {
        char *end;
        errno = 0;
        double v = strtod(given, &end);
        if (!*end && !errno && v >= 0 && v < wait)
            wait = v; /* shorter only: a worker must not spend its time limit waiting */
    }
    return wait;
}

int audit_timing_lock_dir(char *dir, size_t n, char *why, size_t why_n)
{
    const char *given = getenv("KAUDIT_TIMING_LOCK_DIR");
    dir[0] = '\0';
    why[0] = '\0';
    if (given && (!*given || !strcmp(given, "none"))) {
        snprintf(why, why_n, "KAUDIT_TIMING_LOCK_DIR=%s", given);
        return 1;
    }
    const char *path = given ? given : "/tmp/kaudit-timing-locks";
    if (mkdir(path, 0777) == 0)
        chmod(path, 01777); /* every user's audits share a GPU's turns; the sticky bit keeps their files theirs */
    else if (errno != EEXIST) {
        snprintf(why, why_n, "cannot make '%s': %s", path, strerror(errno));
        return 1;
    }
    /* In a shared /tmp another user could have put a link there, or a
     * directory of theirs where they may replace the lock files: only a
     * real directory that is ours, root's, or sticky. */
    struct stat st;
    if (lstat(path, &st) != 0 || !S_ISDIR(st.st_mode) || access(path, W_OK | X_OK) != 0) {
        snprintf(why, why_n, "'%s' is not a directory this user may write in (a link is not followed)", path);
        return 1;
    }
    if (st.st_uid != geteuid() && st.st_uid != 0 && !(st.st_mode & S_ISVTX)) {
        snprintf(why, why_n, "'%s' belongs to user %u and is not sticky: its owner could replace the lock files",
                 path, (unsigned)st.st_uid);
        return 1;
    }
    /* absolute: the runner opens it from its own working directory */
    char real[PATH_MAX];
    if (!realpath(path, real)) {
        snprintf(why, why_n, "cannot resolve '%s': %s", path, strerror(errno));
        return 1;
    }
    snprintf(dir, n, "%s", real);
    return 0;
}

static int has_finding(const struct ka_analysis *an, const char *code)
{
    for (size_t i = 0; i < an->n_findings; i++)
        if (!strcmp(an->findings[i].code, code))
            return 1;
    return 0;
}

void audit_timing_decide(struct audit_timing *t, const struct ka_analysis *an)
{
    char why[256];
    if (t->aa.present && !t->aa.error) {
        t->aa_passed = kat_aa_passed(&t->aa.r, why, sizeof why);
        if (!t->aa_passed)
            snprintf(t->aa.why, sizeof t->aa.why, "%s", why);
    }
    /* a speedup is reported only when everything it rests on holds */
    const struct ka_axis_result *m = &an->axis[KA_AXIS_MEASUREMENT];
    /* a phase timed without its turn may have had another audit's work in
     * its windows: its A/A screen could pass by luck, so its speedup waits */
    const struct audit_timing_turn *missed = NULL;
    for (int i = 0; i < t->n_turns && !missed; i++)
        if (strcmp(t->turns[i].status, "held") != 0)
            missed = &t->turns[i];
    /* planned turns must all be there, once each: a missing one is not held */
    const char *turns_wrong = t->extra_turns ? "a phase's turn is logged twice (the runner logs each once): the timing "
                                               "evidence was written by someone else too"
                              : t->turns_planned && t->n_turns != AUDIT_TIMING_TURNS
                                  ? "a timed phase logged no turn: whether it had the device to itself is unknown"
                                  : NULL;
    if (!t->requested)
        snprintf(t->speedup_why, sizeof t->speedup_why, "not timed (--timing off)");
    else if (!t->speedup.present)
        snprintf(t->speedup_why, sizeof t->speedup_why, "the runner did not reach the timed comparison");
    else if (t->speedup.error)
        snprintf(t->speedup_why, sizeof t->speedup_why, "%s", t->speedup.why);
    else if (turns_wrong)
        snprintf(t->speedup_why, sizeof t->speedup_why, "%s", turns_wrong);
    else if (missed)
        snprintf(t->speedup_why, sizeof t->speedup_why,
                 "the %s phase was timed without its turn on %s (%s after %.0f s): other audits may have run in its "
                 "timed windows",
                 missed->phase, missed->device, missed->status, missed->waited_s);
    else if (!t->aa.present || t->aa.error)
        snprintf(t->speedup_why, sizeof t->speedup_why, "no A/A screen: %s",
                 t->aa.present ? t->aa.why : "the runner did not reach it");
    else if (!t->aa_passed)
        snprintf(t->speedup_why, sizeof t->speedup_why, "A/A screen failed: %s", t->aa.why);
    else if (m->verdict != KA_PASS)
        snprintf(t->speedup_why, sizeof t->speedup_why, "the measurement axis is %s: %s",
                 ka_verdict_name(m->verdict), m->root_cause ? m->root_cause : "unresolved");
    else
        t->speedup_reportable = 1;
    /* the stream differential: criterion, then the trace's evidence */
    int evidence = has_finding(an, "work-after-stop-event") || has_finding(an, "side-stream-within-window") ||
                   has_finding(an, "reported-time-shorter-than-work");
    int on_gpu = t->aa.present ? !strcmp(t->aa.clock, "cuda-event") : t->speedup.present && !strcmp(t->speedup.clock, "cuda-event");
    if (t->requested && on_gpu && t->speedup.present && (!t->stream.present || t->stream.error)) {
        /* the differential was due and did not run (a candidate that raises
         * only there, say): the speedup cannot be vouched for, and with
         * work beside the timing stream in the trace the certificate waits */
        if (t->speedup_reportable)
            snprintf(t->speedup_why, sizeof t->speedup_why, "the stream differential did not run: %s",
                     t->stream.present ? t->stream.why : "the runner did not reach it");
        t->speedup_reportable = 0;
        if (evidence) {
            t->stream_withholds = 1;
            snprintf(t->stream_why, sizeof t->stream_why,
                     "the stream differential did not run (%s) and the trace shows the candidate's work beside the "
                     "timing stream: PASS is withheld",
                     t->stream.present ? t->stream.why : "the runner did not reach it");
        }
    }
    if (t->stream.present && !t->stream.error) {
        t->stream_criterion = kat_stream_criterion(&t->stream.r);
        t->stream_attributable = evidence;
        t->stream_withholds = t->stream_criterion && t->stream_attributable;
        if (t->stream_withholds) {
            /* the unguarded time is the one a hidden stream games */
            if (t->speedup_reportable)
                snprintf(t->speedup_why, sizeof t->speedup_why,
                         "the stream differential withholds: the candidate's work is not all inside its timed window");
            t->speedup_reportable = 0;
        }
        if (t->stream_withholds)
            snprintf(t->stream_why, sizeof t->stream_why,
                     "stream differential: the candidate timed with a device synchronize takes %.2fx its time "
                     "without (interval [%.2f, %.2f], %.3f ms apart), and the trace shows its work beside the "
                     "timing stream: PASS is withheld",
                     t->stream.r.ratio, t->stream.r.lo, t->stream.r.hi, t->stream.r.median_a - t->stream.r.median_b);
        else if (t->stream_criterion)
            snprintf(t->stream_why, sizeof t->stream_why,
                     "the guarded time is %.2fx the unguarded one, but the trace shows no work of the candidate "
                     "beside the timing stream: not withheld",
                     t->stream.r.ratio);
    }
}

static void write_stats(struct kat_json *j, const struct audit_timing_check *c)
{
    kat_json_double(j, "median_a_ms", c->r.median_a);
    kat_json_double(j, "median_b_ms", c->r.median_b);
    kat_json_double(j, "cv_a", c->r.cv_a);
    kat_json_double(j, "cv_b", c->r.cv_b);
    kat_json_double(j, "order_effect", c->r.order_effect);
    kat_json_double(j, "ratio", c->r.ratio);
    kat_json_open(j, "interval", '[');
    kat_json_double(j, NULL, c->r.lo);
    kat_json_double(j, NULL, c->r.hi);
    kat_json_close(j, ']');
}

static void write_check(struct kat_json *j, const char *key, const struct audit_timing_check *c)
{
    if (!c->present) {
        kat_json_null(j, key);
        return;
    }
    kat_json_open(j, key, '{');
    kat_json_str(j, "clock", c->clock);
    kat_json_double(j, "seconds", c->seconds);
    if (c->error) {
        kat_json_str(j, "error", c->why);
    } else {
        kat_json_open(j, "orders", '[');
        for (int i = 0; i < KAT_TIMING_BATCHES; i++)
            kat_json_str(j, NULL, c->orders[i]);
        kat_json_close(j, ']');
        write_stats(j, c);
    }
}

void audit_timing_write_json(struct kat_json *j, const struct audit_timing *t)
{
    kat_json_open(j, "timing", '{');
    kat_json_bool(j, "requested", t->requested);
    kat_json_u64(j, "seed", 0);
    kat_json_open(j, "turns", '[');
    for (int i = 0; i < t->n_turns; i++) {
        kat_json_open(j, NULL, '{');
        kat_json_str(j, "phase", t->turns[i].phase);
        kat_json_str(j, "device", t->turns[i].device);
        kat_json_str(j, "status", t->turns[i].status);
        kat_json_double(j, "waited_s", t->turns[i].waited_s);
        kat_json_close(j, '}');
    }
    kat_json_close(j, ']');
    write_check(j, "aa", &t->aa);
    if (t->aa.present) {
        kat_json_bool(j, "passed", t->aa_passed);
        if (t->aa_passed || t->aa.error)
            kat_json_null(j, "why_not");
        else
            kat_json_str(j, "why_not", t->aa.why);
        kat_json_close(j, '}');
    }
    write_check(j, "speedup", &t->speedup);
    if (t->speedup.present) {
        /* the measured figure always; "reportable" says whether it may be quoted */
        kat_json_bool(j, "reportable", t->speedup_reportable);
        if (t->speedup_reportable)
            kat_json_null(j, "why_not");
        else
            kat_json_str(j, "why_not", t->speedup_why);
        kat_json_close(j, '}');
    }
    if (t->has_claimed)
        kat_json_double(j, "claimed_speedup", t->claimed);
    else
        kat_json_null(j, "claimed_speedup");
    write_check(j, "stream", &t->stream);
    if (t->stream.present) {
        kat_json_bool(j, "criterion", t->stream_criterion);
        kat_json_bool(j, "attributable", t->stream_attributable);
        kat_json_bool(j, "withholds", t->stream_withholds);
        kat_json_close(j, '}');
    }
    kat_json_close(j, '}');
}

void audit_timing_print(FILE *f, const struct audit_timing *t)
{
    if (!t->requested)
        return;
    if (t->aa.present && !t->aa.error)
        fprintf(f, "  timing: A/A %s (CV %.3f / %.3f, order effect %.3f, ratio [%.3f, %.3f])%s%s\n",
                t->aa_passed ? "passed" : "failed", t->aa.r.cv_a, t->aa.r.cv_b, t->aa.r.order_effect, t->aa.r.lo,
                t->aa.r.hi, t->aa_passed ? "" : ": ", t->aa_passed ? "" : t->aa.why);
    else if (t->aa.present)
        fprintf(f, "  timing: A/A not measured: %s\n", t->aa.why);
    if (t->speedup.present && !t->speedup.error)
        fprintf(f, "  speedup %.3fx [%.3f, %.3f] (reference %.4f ms, candidate %.4f ms, %s)%s%s\n",
                t->speedup.r.ratio, t->speedup.r.lo, t->speedup.r.hi, t->speedup.r.median_a, t->speedup.r.median_b,
                t->speedup.clock, t->speedup_reportable ? ": reportable" : ", withheld: ",
                t->speedup_reportable ? "" : t->speedup_why);
    else
        fprintf(f, "  speedup: not measured: %s\n", t->speedup_why);
    for (int i = 0; i < t->n_turns; i++)
        if (strcmp(t->turns[i].status, "held") != 0 || t->turns[i].waited_s >= 1)
            fprintf(f, "  timing turn (%s phase on %s): %s after waiting %.1f s for other audits\n", t->turns[i].phase,
                    t->turns[i].device, t->turns[i].status, t->turns[i].waited_s);
    if (t->stream.present && !t->stream.error)
        fprintf(f, "  stream differential: guarded/unguarded %.2fx [%.2f, %.2f]%s%s\n", t->stream.r.ratio,
                t->stream.r.lo, t->stream.r.hi, t->stream_why[0] ? ": " : "", t->stream_why);
}
