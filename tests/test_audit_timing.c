/* The timing decisions of kaudit audit (audit/audit_timing.c) on runner logs written by hand. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "audit_timing.h"

static char dir[64];

static void setup(void)
{
    snprintf(dir, sizeof dir, "/tmp/kaudit-timing-XXXXXX");
    cr_assert(mkdtemp(dir));
}

static void teardown(void)
{
    char path[128];
    snprintf(path, sizeof path, "%s/events.jsonl", dir);
    unlink(path);
    rmdir(dir);
}

/* One batch's latencies: base * (1 + jitter * sin(k)), k running on. */
static void latencies(FILE *f, double base, double jitter, int *k)
{
    fputc('[', f);
    for (int i = 0; i < KAT_TIMING_PER_BATCH; i++, (*k)++)
        fprintf(f, "%s%.6f", i ? ", " : "", base * (1 + jitter * sin(*k * 1.7)));
    fputc(']', f);
}

static void check_line(FILE *f, const char *check, double base_a, double base_b, double jitter)
{
    int k = 0;
    fprintf(f, "{\"event\": \"timing\", \"check\": \"%s\", \"clock\": \"cuda-event\", \"status\": \"ok\", "
               "\"seconds\": 0.5, \"batches\": [",
            check);
    const char *orders[] = { "ABBA", "BAAB", "ABBA" };
    for (int batch = 0; batch < KAT_TIMING_BATCHES; batch++) {
        fprintf(f, "%s{\"order\": \"%s\", \"a\": ", batch ? ", " : "", orders[batch]);
        /* both arms the same jitter: two instances of one code are alike */
        int k_b = k;
        latencies(f, base_a, jitter, &k);
        fprintf(f, ", \"b\": ");
        latencies(f, base_b, jitter, &k_b);
        fputc('}', f);
    }
    fprintf(f, "]}\n");
}

static FILE *log_file(void)
{
    char path[128];
    snprintf(path, sizeof path, "%s/events.jsonl", dir);
    FILE *f = fopen(path, "w");
    cr_assert(f);
    fprintf(f, "{\"event\": \"start\"}\n");
    return f;
}

static struct ka_analysis *analysis(enum ka_verdict measurement, const char *finding)
{
    struct ka_analysis *an = calloc(1, sizeof *an);
    an->axis[KA_AXIS_MEASUREMENT].verdict = measurement;
    an->axis[KA_AXIS_MEASUREMENT].root_cause = measurement == KA_PASS ? NULL : "the reported time is short";
    if (finding) {
        an->findings = calloc(1, sizeof *an->findings);
        snprintf(an->findings[0].code, sizeof an->findings[0].code, "%s", finding);
        an->n_findings = 1;
    }
    return an;
}

static void analysis_free(struct ka_analysis *an)
{
    free(an->findings);
    free(an);
}

TestSuite(audit_timing, .init = setup, .fini = teardown);

Test(audit_timing, stable_and_twice_as_fast_is_reportable)
{
    FILE *f = log_file();
    check_line(f, "aa", 0.5, 0.5, 0.005);
    check_line(f, "speedup", 0.5, 0.25, 0.005);
    check_line(f, "stream", 0.26, 0.25, 0.005);
    fclose(f);
    struct audit_timing t;
    audit_timing_read(dir, 1, 0, &t);
    struct ka_analysis *an = analysis(KA_PASS, NULL);
    audit_timing_decide(&t, an);
    cr_expect(t.aa_passed, "%s", t.aa.why);
    cr_expect(t.speedup_reportable, "%s", t.speedup_why);
    cr_expect_float_eq(t.speedup.r.ratio, 2.0, 0.02);
    cr_expect_gt(t.speedup.r.lo, 1.0);
    cr_expect_not(t.stream_withholds);
    cr_expect_str_eq(t.speedup.orders[1], "BAAB");
    analysis_free(an);
}

Test(audit_timing, speedup_withheld_without_measurement_pass)
{
    FILE *f = log_file();
    check_line(f, "aa", 0.5, 0.5, 0.005);
    check_line(f, "speedup", 0.5, 0.25, 0.005);
    check_line(f, "stream", 0.26, 0.25, 0.005);
    fclose(f);
    struct audit_timing t;
    audit_timing_read(dir, 1, 0, &t);
    struct ka_analysis *an = analysis(KA_FAIL, NULL);
    audit_timing_decide(&t, an);
    cr_expect(t.aa_passed);
    cr_expect_not(t.speedup_reportable);
    cr_expect(strstr(t.speedup_why, "measurement axis is FAIL"), "%s", t.speedup_why);
    analysis_free(an);
}

Test(audit_timing, unstable_reference_withholds_the_speedup)
{
    FILE *f = log_file();
    check_line(f, "aa", 0.04, 0.04, 0.2);
    check_line(f, "speedup", 0.04, 0.02, 0.2);
    fclose(f);
    struct audit_timing t;
    audit_timing_read(dir, 1, 0, &t);
    struct ka_analysis *an = analysis(KA_PASS, NULL);
    audit_timing_decide(&t, an);
    cr_expect_not(t.aa_passed);
    cr_expect_not(t.speedup_reportable);
    cr_expect(strstr(t.speedup_why, "A/A screen failed"), "%s", t.speedup_why);
    analysis_free(an);
}

Test(audit_timing, stream_withholds_only_with_evidence)
{
    FILE *f = log_file();
    check_line(f, "aa", 2.7, 2.7, 0.01);
    check_line(f, "speedup", 2.7, 0.2, 0.01);
    check_line(f, "stream", 2.9, 0.2, 0.01);
    fclose(f);
    struct audit_timing t;
    audit_timing_read(dir, 1, 0, &t);
    struct ka_analysis *plain = analysis(KA_PASS, NULL);
    audit_timing_decide(&t, plain);
    cr_expect(t.stream_criterion);
    cr_expect_not(t.stream_attributable);
    cr_expect_not(t.stream_withholds, "no trace evidence: the differential alone does not withhold");
    analysis_free(plain);
    audit_timing_read(dir, 1, 0, &t);
    struct ka_analysis *seen = analysis(KA_PASS, "side-stream-within-window");
    audit_timing_decide(&t, seen);
    cr_expect(t.stream_withholds);
    cr_expect(strstr(t.stream_why, "PASS is withheld"), "%s", t.stream_why);
    analysis_free(seen);
}

Test(audit_timing, malformed_events_are_check_errors)
{
    char path[128];
    snprintf(path, sizeof path, "%s/events.jsonl", dir);
    FILE *f = fopen(path, "w");
    fprintf(f, "{\"event\": \"timing\", \"check\": \"aa\", \"status\": \"ok\", \"batches\": [{\"order\": \"ABBA\", "
               "\"a\": [1, 2], \"b\": [1, 2]}]}\n");
    fprintf(f, "{\"event\": \"timing\", \"check\": \"speedup\", \"status\": \"error\", \"error\": \"CUDA OOM\"}\n");
    fprintf(f, "not json, \"timing\"\n");
    fclose(f);
    struct audit_timing t;
    audit_timing_read(dir, 1, 0, &t);
    cr_expect(t.aa.present && t.aa.error);
    cr_expect(strstr(t.aa.why, "events.jsonl line 1"), "%s", t.aa.why);
    cr_expect(t.speedup.present && t.speedup.error);
    cr_expect(strstr(t.speedup.why, "CUDA OOM"), "%s", t.speedup.why);
    struct ka_analysis *an = analysis(KA_PASS, NULL);
    audit_timing_decide(&t, an);
    cr_expect_not(t.speedup_reportable);
    cr_expect_not(t.aa_passed);
    analysis_free(an);
}

Test(audit_timing, a_negative_latency_is_an_error)
{
    FILE *f = log_file();
    check_line(f, "aa", -0.5, 0.5, 0.005);
    fclose(f);
    struct audit_timing t;
    audit_timing_read(dir, 1, 0, &t);
    cr_expect(t.aa.error);
    cr_expect(strstr(t.aa.why, "positive finite"), "%s", t.aa.why);
}

Test(audit_timing, a_withholding_differential_withholds_the_speedup_too)
{
    FILE *f = log_file();
    check_line(f, "aa", 2.7, 2.7, 0.01);
    check_line(f, "speedup", 2.7, 0.2, 0.01);
    check_line(f, "stream", 2.9, 0.2, 0.01);
    fclose(f);
    struct audit_timing t;
    audit_timing_read(dir, 1, 0, &t);
    struct ka_analysis *an = analysis(KA_PASS, "side-stream-within-window");
    audit_timing_decide(&t, an);
    cr_expect(t.stream_withholds);
    cr_expect_not(t.speedup_reportable, "the unguarded speedup is the gamed one");
    analysis_free(an);
}

Test(audit_timing, a_differential_that_did_not_run_is_no_pass)
{
    FILE *f = log_file();
    check_line(f, "aa", 0.5, 0.5, 0.005);
    check_line(f, "speedup", 0.5, 0.25, 0.005);
    fprintf(f, "{\"event\": \"timing\", \"check\": \"stream\", \"clock\": \"cuda-event\", \"status\": "
               "\"error\", \"error\": \"RuntimeError: raised only here\"}\n");
    fclose(f);
    struct audit_timing t;
    audit_timing_read(dir, 1, 0, &t);
    struct ka_analysis *plain = analysis(KA_PASS, NULL);
    audit_timing_decide(&t, plain);
    cr_expect_not(t.speedup_reportable);
    cr_expect(strstr(t.speedup_why, "did not run"), "%s", t.speedup_why);
    cr_expect_not(t.stream_withholds, "no trace evidence");
    analysis_free(plain);
    audit_timing_read(dir, 1, 0, &t);
    struct ka_analysis *seen = analysis(KA_PASS, "work-after-stop-event");
    audit_timing_decide(&t, seen);
    cr_expect(t.stream_withholds, "did not run, and the trace shows work beside the timing stream");
    analysis_free(seen);
}

Test(audit_timing, a_second_event_of_a_check_is_an_error)
{
    FILE *f = log_file();
    check_line(f, "aa", 0.5, 0.5, 0.005);
    check_line(f, "aa", 0.5, 0.5, 0.005);
    fclose(f);
    struct audit_timing t;
    audit_timing_read(dir, 1, 0, &t);
    cr_expect(t.aa.error);
    cr_expect(strstr(t.aa.why, "a second 'aa'"), "%s", t.aa.why);
}

/* The turns of concurrent audits (docs/timing.md, "Concurrent audits"). */
static void turn_line(FILE *f, const char *phase, const char *status)
{
    fprintf(f, "{\"event\": \"timing_turn\", \"phase\": \"%s\", \"device\": \"gpu-x\", \"status\": \"%s\", "
               "\"waited_s\": 0.5}\n",
            phase, status);
}

/* A stable, twice-as-fast log with the given turns; the decision. */
static void decide_with_turns(struct audit_timing *t, int planned, const char *ref_status, const char *cand_status,
                              int duplicate_reference)
{
    FILE *f = log_file();
    check_line(f, "aa", 0.5, 0.5, 0.005);
    if (ref_status)
        turn_line(f, "reference", ref_status);
    if (duplicate_reference)
        turn_line(f, "reference", "held");
    turn_line(f, "weak", "not-held"); /* other phases do not decide */
    check_line(f, "speedup", 0.5, 0.25, 0.005);
    check_line(f, "stream", 0.26, 0.25, 0.005);
    if (cand_status)
        turn_line(f, "candidate", cand_status);
    fclose(f);
    audit_timing_read(dir, 1, planned, t);
    struct ka_analysis *an = analysis(KA_PASS, NULL);
    audit_timing_decide(t, an);
    analysis_free(an);
}

Test(audit_timing, both_turns_held_leave_the_speedup_reportable)
{
    struct audit_timing t;
    decide_with_turns(&t, 1, "held", "held", 0);
    cr_expect_eq(t.n_turns, 2);
    cr_expect(t.speedup_reportable, "%s", t.speedup_why);
}

Test(audit_timing, a_turn_not_held_withholds_the_speedup)
{
    struct audit_timing t;
    decide_with_turns(&t, 1, "held", "not-held", 0);
    cr_expect_not(t.speedup_reportable);
    cr_expect(strstr(t.speedup_why, "candidate phase was timed without its turn on gpu-x"), "%s", t.speedup_why);
}

Test(audit_timing, a_planned_turn_missing_withholds_the_speedup)
{
    struct audit_timing t;
    decide_with_turns(&t, 1, "held", NULL, 0);
    cr_expect_not(t.speedup_reportable);
    cr_expect(strstr(t.speedup_why, "logged no turn"), "%s", t.speedup_why);
    /* unplanned (KAUDIT_TIMING_LOCK_DIR=none): nothing is due */
    decide_with_turns(&t, 0, NULL, NULL, 0);
    cr_expect(t.speedup_reportable, "%s", t.speedup_why);
}

Test(audit_timing, a_turn_logged_twice_withholds_the_speedup)
{
    struct audit_timing t;
    decide_with_turns(&t, 1, "held", "held", 1);
    cr_expect_eq(t.extra_turns, 1);
    cr_expect_not(t.speedup_reportable);
    cr_expect(strstr(t.speedup_why, "logged twice"), "%s", t.speedup_why);
}
