/*
 * The semantic verdict (semantic/semantic.h) on runner directories built by
 * hand: an event log and tensor files whose answer is known, including the
 * damaged ones a killed or hostile runner leaves.
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "semantic.h"
#include "tensor_file.h"

static char dir[64];

static void setup(void)
{
    snprintf(dir, sizeof dir, "/tmp/kat_semantic_XXXXXX");
    cr_assert_not_null(mkdtemp(dir));
    char t[96];
    snprintf(t, sizeof t, "%s/tensors", dir);
    cr_assert_eq(mkdir(t, 0755), 0);
}

static void teardown(void)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    cr_assert_eq(system(cmd), 0);
}

/* One leaf "out": a 1-D float32 (dtype 3) or float64 (dtype 4) tensor. */
static void write_leaf_file(const char *name, int dtype, const double *v, size_t n)
{
    char path[128];
    snprintf(path, sizeof path, "%s/tensors/%s", dir, name);
    FILE *f = fopen(path, "wb");
    cr_assert_not_null(f);
    uint32_t version = 2, leaves = 1, plen = 3, ndim = 1;
    fwrite("KATENSR1", 1, 8, f);
    fwrite(&version, 4, 1, f);
    fwrite(&leaves, 4, 1, f);
    fwrite(&plen, 4, 1, f);
    fwrite("out", 1, 3, f);
    unsigned char kind = 0, dt = (unsigned char)dtype;
    uint16_t reserved = 0;
    fwrite(&kind, 1, 1, f);
    fwrite(&dt, 1, 1, f);
    fwrite(&reserved, 2, 1, f);
    fwrite(&ndim, 4, 1, f);
    int64_t shape = (int64_t)n;
    fwrite(&shape, 8, 1, f);
    uint64_t nbytes = n * (dtype == 3 ? 4 : 8);
    fwrite(&nbytes, 8, 1, f);
    for (size_t i = 0; i < n; i++) {
        if (dtype == 3) {
            float x = (float)v[i];
            fwrite(&x, 4, 1, f);
        } else {
            fwrite(&v[i], 8, 1, f);
        }
    }
    cr_assert_eq(fclose(f), 0);
}

static FILE *events(void)
{
    char path[128];
    snprintf(path, sizeof path, "%s/events.jsonl", dir);
    FILE *f = fopen(path, "a");
    cr_assert_not_null(f);
    return f;
}

static const char *const names[16] = {
    "value_normal", "value_tiny", "value_large", "dist_uniform", "dist_heavy_tailed", "dist_sparse",
    "dist_constant", "dist_signed_extremes", "layout_strided", "layout_transposed", "native_seed_4",
    "repeated_calls", "native_seed_0", "native_seed_1", "native_seed_2", "native_seed_3",
};

/* Slot i with one call: reference r (fp32 and, exactly, fp64) and candidate k. */
static void slot(FILE *e, int i, const double *r, const double *k, size_t n, const char *extra)
{
    char fr[32], f64[32], fk[32];
    snprintf(fr, sizeof fr, "s%02dc0-ref.kt", i);
    snprintf(f64, sizeof f64, "s%02dc0-ref64.kt", i);
    snprintf(fk, sizeof fk, "s%02dc0-cand.kt", i);
    write_leaf_file(fr, 3, r, n);
    write_leaf_file(f64, 4, r, n);
    write_leaf_file(fk, 3, k, n);
    fprintf(e,
            "{\"event\": \"slot\", \"index\": %d, \"name\": \"%s\", \"kind\": \"%s\", \"layout\": \"contiguous\", "
            "\"replaces\": null, \"reserve\": false, \"calls\": [{\"call\": 0, \"ref\": \"tensors/%s\", \"ref64\": "
            "\"tensors/%s\", \"cand\": \"tensors/%s\", \"status\": \"ok\", \"reference_mutates\": [], "
            "\"candidate_mutates\": []%s}]}\n",
            i, names[i], i >= 12 || i == 10 ? "native" : "value", fr, f64, fk, extra ? extra : "");
}

static const struct kat_runner_end clean_end = { .exited = 1, .status = 0 };

static struct kat_semantic *judge(const struct kat_runner_end *end)
{
    struct kat_semantic *s = NULL;
    struct kat_tol_params p = kat_tol_params_default();
    char err[256];
    cr_assert_eq(kat_semantic_evaluate(dir, 16, &p, end, &s, err, sizeof err), 0, "%s", err);
    return s;
}

static const struct kat_sem_finding *find(const struct kat_semantic *s, const char *code)
{
    for (size_t i = 0; i < s->n_findings; i++)
        if (!strcmp(s->findings[i].code, code))
            return &s->findings[i];
    return NULL;
}

/* Values that vary with the slot, so R-B does not withhold anything. */
static void values(double *v, size_t n, int i)
{
    for (size_t k = 0; k < n; k++)
        v[k] = 1.0 + (double)k * 0.25 + (double)i;
}

/* start_extra: more members of the start event; precision: a whole precision event line or NULL;
 * before_done: lines after the slots, before the done event (NULL: none); done: that event's status */
static void full_run_ending(const char *start_extra, const char *precision, int bad_slot, double bad_value,
                            const char *before_done, const char *done)
{
    FILE *e = events();
    fprintf(e, "{\"event\": \"start\", \"python\": \"3.11\", \"torch\": \"1.13\"%s}\n", start_extra);
    if (precision)
        fprintf(e, "%s\n", precision);
    fprintf(e, "{\"event\": \"stage\", \"stage\": \"align_state\", \"status\": \"ok\", \"mapping\": \"by-name\"}\n");
    for (int i = 0; i < 16; i++) {
        double r[4], k[4];
        values(r, 4, i);
        memcpy(k, r, sizeof k);
        if (i == bad_slot)
            k[1] = bad_value;
        slot(e, i, r, k, 4, NULL);
    }
    if (before_done)
        fputs(before_done, e);
    fprintf(e, "{\"event\": \"done\", \"status\": \"%s\"}\n", done);
    fclose(e);
}

static void full_run_on(const char *start_extra, const char *precision, int bad_slot, double bad_value)
{
    full_run_ending(start_extra, precision, bad_slot, bad_value, NULL, "ok");
}

static void full_run(int bad_slot, double bad_value)
{
    full_run_on("", NULL, bad_slot, bad_value);
}

TestSuite(semantic, .init = setup, .fini = teardown);

Test(semantic, sixteen_equal_slots_pass)
{
    full_run(-1, 0);
    struct kat_semantic *s = judge(&clean_end);
    cr_assert_eq(s->verdict, KAT_SEM_PASS, "%s", s->root_cause ? s->root_cause : "");
    cr_assert_eq(s->n_slots, 16);
    cr_assert_eq(s->calls_compared, 16);
    cr_assert_null(s->degenerate);
    cr_assert_str_eq(s->alignment, "by-name");
    cr_assert_not_null(find(s, "slots-passed"));
    kat_semantic_free(s);
}

Test(semantic, one_wrong_element_fails_naming_slot_leaf_and_element)
{
    full_run(2, 1.75 + 2 + 0.001); /* slot 2's element 1 is 3.25; 3.251 is far outside 1e-5 relative */
    struct kat_semantic *s = judge(&clean_end);
    cr_assert_eq(s->verdict, KAT_SEM_FAIL);
    const struct kat_sem_finding *f = find(s, "value-mismatch");
    cr_assert_not_null(f);
    cr_assert_eq(f->slot, 2);
    cr_assert_str_eq(f->leaf, "out");
    cr_assert(strstr(f->text, "slot 2 (value_large)"), "%s", f->text);
    cr_assert(strstr(f->text, "worst at [1]"), "%s", f->text);
    cr_assert(f->stress_slot);
    cr_assert(s->signature, "a FAIL on a stress slot is a signature (C3a)");
    kat_semantic_free(s);
}

/* A reported slot (a transformation the contract does not declare) that
 * differs: a signal named after the slot, never a conviction, and not one of
 * the sixteen that must run. */
Test(semantic, a_reported_slot_reports_and_never_gates)
{
    FILE *e = events();
    fprintf(e, "{\"event\": \"start\", \"python\": \"3.11\", \"torch\": \"1.13\"}\n");
    for (int i = 0; i < 16; i++) {
        double r[4];
        values(r, 4, i);
        slot(e, i, r, r, 4, NULL);
    }
    double r[4], k[4];
    values(r, 4, 20);
    memcpy(k, r, sizeof k);
    k[2] = NAN;
    write_leaf_file("s20c0-ref.kt", 3, r, 4);
    write_leaf_file("s20c0-ref64.kt", 4, r, 4);
    write_leaf_file("s20c0-cand.kt", 3, k, 4);
    fprintf(e, "{\"event\": \"slot\", \"index\": 20, \"name\": \"layout_strided\", \"kind\": \"layout\", "
               "\"layout\": \"strided\", \"replaces\": null, \"reserve\": false, \"gating\": false, \"calls\": "
               "[{\"call\": 0, \"ref\": \"tensors/s20c0-ref.kt\", \"ref64\": \"tensors/s20c0-ref64.kt\", \"cand\": "
               "\"tensors/s20c0-cand.kt\", \"status\": \"ok\", \"reference_mutates\": [], \"candidate_mutates\": []}]}\n");
    fprintf(e, "{\"event\": \"done\", \"status\": \"ok\"}\n");
    fclose(e);
    struct kat_semantic *s = judge(&clean_end);
    cr_assert_eq(s->verdict, KAT_SEM_PASS, "%s", s->root_cause ? s->root_cause : "");
    cr_assert_eq(s->reported_slots, 1);
    cr_assert_eq(s->n_slots, 17);
    cr_assert(s->slots[16].reported);
    cr_assert_not(s->signature, "a reported slot is no stress signature");
    const struct kat_sem_finding *f = find(s, "layout-strided");
    cr_assert_not_null(f);
    cr_assert_eq(f->kind, KAT_SEM_SIGNAL);
    cr_assert(strstr(f->text, "does not gate"), "%s", f->text);
    const struct kat_sem_finding *nan = find(s, "non-finite-output");
    cr_assert_not_null(nan);
    cr_assert_eq(nan->kind, KAT_SEM_SIGNAL, "what the reported slot found is a signal");
    kat_semantic_free(s);
}

/* Slot i (a native seed) whose reference's fp32 result is 1% off its fp64 one:
 * rho_bar above rho_max, no allowance can be calibrated there. */
static void uncalibratable_native(FILE *e, int i, int reserve)
{
    double r[4], r64[4];
    values(r, 4, i);
    for (int k = 0; k < 4; k++)
        r64[k] = r[k] * 1.01;
    char fr[32], f64[32], fk[32];
    snprintf(fr, sizeof fr, "s%02dc0-ref.kt", i);
    snprintf(f64, sizeof f64, "s%02dc0-ref64.kt", i);
    snprintf(fk, sizeof fk, "s%02dc0-cand.kt", i);
    write_leaf_file(fr, 3, r, 4);
    write_leaf_file(f64, 4, r64, 4);
    write_leaf_file(fk, 3, r, 4);
    fprintf(e,
            "{\"event\": \"slot\", \"index\": %d, \"name\": \"native_seed_%d\", \"kind\": \"native\", "
            "\"layout\": \"contiguous\", \"replaces\": null, \"reserve\": %s, \"calls\": [{\"call\": 0, \"ref\": "
            "\"tensors/%s\", \"ref64\": \"tensors/%s\", \"cand\": \"tensors/%s\", \"status\": \"ok\", "
            "\"reference_mutates\": [], \"candidate_mutates\": []}]}\n",
            i, i, reserve ? "true" : "false", fr, f64, fk);
}

/* Native seeds whose tolerance cannot be calibrated are dropped like stress
 * slots, a reserve standing in (a reserve that cannot be calibrated either is
 * dropped too, the next reserve standing in); INCONCLUSIVE only once the
 * reserves run out. */
Test(semantic, an_uncalibratable_native_seed_takes_a_reserve)
{
    for (int reserves = 2; reserves >= 0; reserves--) {
        FILE *e = events();
        fprintf(e, "{\"event\": \"start\", \"python\": \"3.11\", \"torch\": \"1.13\"}\n");
        for (int i = 0; i < 16; i++) {
            double r[4];
            values(r, 4, i);
            if (i == 13)
                uncalibratable_native(e, i, 0);
            else
                slot(e, i, r, r, 4, NULL);
        }
        /* the first reserve cannot be calibrated either; the second can */
        if (reserves >= 1)
            uncalibratable_native(e, 16, 1);
        if (reserves >= 2) {
            double r[4];
            values(r, 4, 17);
            char fr[32] = "s17c0-ref.kt", f64[32] = "s17c0-ref64.kt", fk[32] = "s17c0-cand.kt";
            write_leaf_file(fr, 3, r, 4);
            write_leaf_file(f64, 4, r, 4);
            write_leaf_file(fk, 3, r, 4);
            fprintf(e, "{\"event\": \"slot\", \"index\": 17, \"name\": \"native_seed_13\", \"kind\": \"native\", "
                       "\"layout\": \"contiguous\", \"replaces\": null, \"reserve\": true, \"calls\": [{\"call\": 0, "
                       "\"ref\": \"tensors/%s\", \"ref64\": \"tensors/%s\", \"cand\": \"tensors/%s\", \"status\": "
                       "\"ok\", \"reference_mutates\": [], \"candidate_mutates\": []}]}\n",
                    fr, f64, fk);
        }
        fprintf(e, "{\"event\": \"done\", \"status\": \"ok\"}\n");
        fclose(e);
        struct kat_semantic *s = judge(&clean_end);
        if (reserves == 2) {
            cr_assert_eq(s->verdict, KAT_SEM_PASS, "%s", s->root_cause ? s->root_cause : "");
            cr_assert_eq(s->dropped_slots, 2, "native_seed_1 and the first reserve dropped");
            cr_assert_str_eq(s->slots[s->n_slots - 1].replaces, "native_seed_16", "the second reserve stands in for the first");
        } else {
            cr_assert_eq(s->verdict, KAT_SEM_INCONCLUSIVE, "reserves %d", reserves);
            cr_assert_not_null(find(s, "slot-not-calibratable"), "reserves %d", reserves);
        }
        kat_semantic_free(s);
    }
}

Test(semantic, nan_against_a_finite_reference_fails)
{
    full_run(13, 0.0 / 0.0);
    struct kat_semantic *s = judge(&clean_end);
    cr_assert_eq(s->verdict, KAT_SEM_FAIL);
    const struct kat_sem_finding *f = find(s, "non-finite-output");
    cr_assert_not_null(f);
    cr_assert_eq(f->slot, 13);
    cr_assert(!s->signature, "a FAIL on native seeds only is no signature (C2)");
    kat_semantic_free(s);
}

Test(semantic, a_constant_reference_withholds_the_certificate)
{
    FILE *e = events();
    fprintf(e, "{\"event\": \"start\"}\n");
    double zero[4] = { 0, 0, 0, 0 };
    for (int i = 0; i < 16; i++)
        slot(e, i, zero, zero, 4, NULL);
    fprintf(e, "{\"event\": \"done\"}\n");
    fclose(e);
    struct kat_semantic *s = judge(&clean_end);
    cr_assert_eq(s->verdict, KAT_SEM_PASS);
    cr_assert_not_null(s->degenerate);
    cr_assert(strstr(s->degenerate, "identically 0"), "%s", s->degenerate);
    kat_semantic_free(s);
}

Test(semantic, a_killed_runner_is_inconclusive_and_its_torn_last_line_is_not_damage)
{
    FILE *e = events();
    fprintf(e, "{\"event\": \"start\"}\n");
    double r[4];
    values(r, 4, 0);
    slot(e, 0, r, r, 4, NULL);
    fprintf(e, "{\"event\": \"slot\", \"index\": 1, \"na"); /* cut by the kill */
    fclose(e);
    struct kat_runner_end end = { .timed_out = 1, .timeout_s = 30, .signal = 15 };
    struct kat_semantic *s = judge(&end);
    cr_assert_eq(s->verdict, KAT_SEM_INCONCLUSIVE);
    cr_assert_not_null(find(s, "runner-timeout"));
    cr_assert_null(find(s, "runner-log-malformed"));
    cr_assert(strstr(s->root_cause, "time limit (30 s)"), "%s", s->root_cause);
    kat_semantic_free(s);
}

Test(semantic, an_earlier_fail_survives_a_later_crash)
{
    FILE *e = events();
    fprintf(e, "{\"event\": \"start\"}\n");
    double r[4], k[4];
    values(r, 4, 0);
    memcpy(k, r, sizeof k);
    k[0] = 100;
    slot(e, 0, r, k, 4, NULL);
    fclose(e);
    struct kat_runner_end end = { .signal = 9 };
    struct kat_semantic *s = judge(&end);
    cr_assert_eq(s->verdict, KAT_SEM_FAIL);
    cr_assert_not_null(find(s, "runner-ended-early"));
    kat_semantic_free(s);
}

Test(semantic, a_damaged_log_line_and_a_missing_tensor_file_are_unresolved)
{
    FILE *e = events();
    fprintf(e, "{\"event\": \"start\"}\n");
    fprintf(e, "this is not json\n");
    fprintf(e, "{\"event\": \"done\"}\n");
    fclose(e);
    struct kat_semantic *s = judge(&clean_end);
    cr_assert_eq(s->verdict, KAT_SEM_INCONCLUSIVE);
    const struct kat_sem_finding *f = find(s, "runner-log-malformed");
    cr_assert_not_null(f);
    cr_assert(strstr(f->text, "line 2"), "%s", f->text);
    kat_semantic_free(s);

    teardown();
    setup();
    full_run(-1, 0);
    char path[128];
    snprintf(path, sizeof path, "%s/tensors/s05c0-cand.kt", dir);
    cr_assert_eq(unlink(path), 0);
    s = judge(&clean_end);
    cr_assert_eq(s->verdict, KAT_SEM_INCONCLUSIVE);
    f = find(s, "unreadable-tensor-file");
    cr_assert_not_null(f);
    cr_assert_eq(f->slot, 5);
    kat_semantic_free(s);
}

Test(semantic, mutation_aliasing_and_a_raise_convict)
{
    FILE *e = events();
    fprintf(e, "{\"event\": \"start\"}\n");
    for (int i = 0; i < 16; i++) {
        double r[4];
        values(r, 4, i);
        slot(e, i, r, r, 4, i == 0 ? ", \"candidate_mutates\": [0]" : NULL);
    }
    fprintf(e, "{\"event\": \"slot\", \"index\": 11, \"name\": \"repeated_calls\", \"kind\": \"repeated\", "
               "\"calls\": [{\"call\": 0, \"status\": \"candidate-raised\", \"error\": \"ValueError: boom\"}], "
               "\"aliasing\": [{\"call\": 0, \"leaf\": \"out\"}]}\n");
    fprintf(e, "{\"event\": \"done\"}\n");
    fclose(e);
    struct kat_semantic *s = judge(&clean_end);
    cr_assert_eq(s->verdict, KAT_SEM_FAIL);
    cr_assert_not_null(find(s, "output-aliased"));
    const struct kat_sem_finding *f = find(s, "candidate-raised");
    cr_assert_not_null(f);
    cr_assert(strstr(f->text, "boom"), "%s", f->text);
    /* the JSON key written twice: the duplicate is read as cJSON reads it (the first) */
    kat_semantic_free(s);
}

Test(semantic, stage_failures_are_inconclusive_with_their_cause)
{
    FILE *e = events();
    fprintf(e, "{\"event\": \"start\"}\n");
    fprintf(e, "{\"event\": \"stage\", \"stage\": \"import_candidate\", \"status\": \"error\", \"error\": "
               "\"SyntaxError: invalid syntax\"}\n");
    fprintf(e, "{\"event\": \"done\", \"status\": \"stage-failed\"}\n");
    fclose(e);
    struct kat_semantic *s = judge(&clean_end);
    cr_assert_eq(s->verdict, KAT_SEM_INCONCLUSIVE);
    const struct kat_sem_finding *f = find(s, "candidate-build-failed");
    cr_assert_not_null(f);
    cr_assert(strstr(s->root_cause, "SyntaxError"), "%s", s->root_cause);
    kat_semantic_free(s);
}

/* EvidenceLost (runner/kaudit_events.py): the runner's own file it could
 * not write, or the reference refused by the kernel; whatever the slots so
 * far said, no PASS. */
Test(semantic, evidence_lost_is_inconclusive_with_its_code)
{
    full_run_ending("", NULL, -1, 0,
                    "{\"event\": \"stage\", \"stage\": \"evidence\", \"status\": \"error\", \"code\": "
                    "\"evidence-unwritable\", \"error\": \"cannot write tensors/s41c4-ref64.kt: [Errno 13]\"}\n",
                    "stage-failed");
    struct kat_semantic *s = judge(&clean_end);
    cr_assert_eq(s->verdict, KAT_SEM_INCONCLUSIVE);
    const struct kat_sem_finding *f = find(s, "evidence-unwritable");
    cr_assert_not_null(f);
    cr_assert(strstr(f->text, "its evidence incomplete") && strstr(f->text, "s41c4-ref64.kt"), "%s", f->text);
    kat_semantic_free(s);
}

/* A check the reference could not run is left out of the verdict, and said:
 * the record names what was not tested and why. */
Test(semantic, a_skipped_check_is_a_signal_naming_it)
{
    full_run_ending("", NULL, -1, 0,
                    "{\"event\": \"long_run_skipped\", \"reason\": \"the reference raised on this slot's "
                    "inputs: ValueError: x\"}\n{\"event\": \"state_reload_skipped\", \"reason\": \"no state\"}\n",
                    "ok");
    struct kat_semantic *s = judge(&clean_end);
    cr_assert_eq(s->verdict, KAT_SEM_PASS, "%s", s->root_cause ? s->root_cause : "");
    int long_run = 0, reload = 0;
    for (size_t i = 0; i < s->n_findings; i++) {
        const struct kat_sem_finding *f = &s->findings[i];
        if (strcmp(f->code, "check-skipped") != 0)
            continue;
        cr_assert_eq(f->kind, KAT_SEM_SIGNAL);
        long_run += strstr(f->text, "the long run was not run") && strstr(f->text, "ValueError: x");
        reload += strstr(f->text, "the state reload was not run: no state") != NULL;
    }
    cr_assert(long_run == 1 && reload == 1, "long run %d, state reload %d", long_run, reload);
    kat_semantic_free(s);
}

static const char tf32_on[] = "{\"event\": \"precision\", \"reference_tf32\": false, \"restored_cudnn_tf32\": true, "
                              "\"restored_matmul_tf32\": false}";

Test(semantic, a_value_mismatch_with_tf32_allowed_on_the_gpu_says_so)
{
    full_run_on(", \"device\": \"cuda\"", tf32_on, 2, 3.251);
    struct kat_semantic *s = judge(&clean_end);
    cr_assert_eq(s->verdict, KAT_SEM_FAIL, "a signal convicts nothing and acquits nothing");
    const struct kat_sem_finding *f = find(s, "candidate-tf32-allowed");
    cr_assert_not_null(f);
    cr_assert_eq(f->kind, KAT_SEM_SIGNAL);
    cr_assert(strstr(f->text, "cuDNN (torch.backends.cudnn.allow_tf32"), "%s", f->text);
    cr_assert_eq(s->candidate_cudnn_tf32, 1);
    cr_assert_eq(s->candidate_matmul_tf32, 0);
    cr_assert(strstr(s->root_cause, "value_large"), "the root cause stays the first conviction: %s", s->root_cause);
    kat_semantic_free(s);
}

Test(semantic, tf32_switches_are_no_signal_on_a_cpu_or_without_a_mismatch)
{
    full_run_on(", \"device\": \"cpu\"", tf32_on, 2, 3.251);
    struct kat_semantic *s = judge(&clean_end);
    cr_assert_eq(s->verdict, KAT_SEM_FAIL);
    cr_assert_null(find(s, "candidate-tf32-allowed"), "on a CPU the switches change nothing");
    cr_assert_eq(s->candidate_cudnn_tf32, -1);
    kat_semantic_free(s);
    teardown();
    setup();
    full_run_on(", \"device\": \"cuda\"", tf32_on, -1, 0);
    s = judge(&clean_end);
    cr_assert_eq(s->verdict, KAT_SEM_PASS);
    cr_assert_null(find(s, "candidate-tf32-allowed"));
    kat_semantic_free(s);
}
