/*
 * test_run_provenance.c - Python-side provenance (docs/python-provenance.md)
 * end to end on the stand-ins: a harness that exec's the reference and the
 * candidate from strings in one process and marks nothing
 * (tests/python/py_exec_harness.py) runs under `kaudit run`, and the analyzer
 * must attribute each cuBLAS call and kernel to the party whose frame was on
 * the stack.  Python 3.12+ uses sys.monitoring, 3.10 and 3.11 class wrapping;
 * CI has 3.11.  Skipped without python3.
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "analysis.h"
#include "contract.h"
#include "run_helpers.h"

static const char contract_text[] =
    "{\"kaudit_contract\": 1, \"task_id\": \"t/exec\","
    " \"reference\": {\"symbols\": [\"Model\"]}, \"candidate\": {\"symbols\": [\"ModelNew\"]},"
    " \"implementation\": {\"self_implemented\": true},"
    " \"reference_work\": {\"dominant_class\": \"gemm\", \"amount\": 8192},"
    " \"timing\": {\"window\": \"none\"}}";

struct outcome {
    enum ka_verdict implementation;
    uint64_t vendor_candidate, vendor_reference, vendor_harness;
    uint64_t own_candidate;
    char python_status[256];
    int missing;
};

static void run_case_with(const char *which, const char *python_flag, const char *const extra[],
                          const char *contract, struct outcome *o);

static void run_case(const char *which, struct outcome *o)
{
    run_case_with(which, NULL, NULL, contract_text, o);
}

static void run_case_with(const char *which, const char *python_flag, const char *const extra[],
                          const char *contract, struct outcome *o)
{
    if (!PYTHON3[0])
        cr_skip_test("python3 was not found when the build was configured");
    struct rh_case p;
    rh_case_init(&p, which);
    char *argv[7], *plain[6];
    int k = 0, j = 0;
    argv[k++] = plain[j++] = PYTHON3;
    if (python_flag)
        argv[k++] = plain[j++] = (char *)python_flag;
    argv[k++] = plain[j++] = PYTHON_DIR "/py_exec_harness.py";
    argv[k++] = plain[j++] = STANDIN_DIR;
    argv[k++] = plain[j++] = (char *)which;
    argv[k++] = p.log;
    argv[k] = plain[j] = NULL;
    rh_case_run(&p, argv, plain, extra);
    cr_assert_eq(p.run.status, 0, "%#x\n%s", p.run.status, p.run.err);
    /* nothing the harness prints changes */
    cr_expect_str_eq(p.run.out, p.plain.out);
    cr_expect_str_eq(p.run.err, p.plain.err);

    struct ka_contract *c;
    char err[1024];
    cr_assert_eq(ka_contract_parse(contract, strlen(contract), "exec.json", &c, err, sizeof err), 0, "%s", err);
    struct ka_analysis *a;
    cr_assert_eq(ka_analyze(p.session, c, NULL, &a, err, sizeof err), 0, "%s", err);
    o->implementation = a->axis[KA_AXIS_IMPLEMENTATION].verdict;
    o->vendor_candidate = a->kernels_by[KA_ORIGIN_VENDOR][KA_PARTY_CANDIDATE];
    o->vendor_reference = a->kernels_by[KA_ORIGIN_VENDOR][KA_PARTY_REFERENCE];
    o->vendor_harness = a->kernels_by[KA_ORIGIN_VENDOR][KA_PARTY_HARNESS];
    o->own_candidate = a->kernels_by[KA_ORIGIN_CANDIDATE][KA_PARTY_CANDIDATE];
    o->python_status[0] = 0;
    o->missing = 0;
    for (size_t i = 0; i < a->n_findings; i++) {
        if (!strcmp(a->findings[i].code, "python-provenance"))
            snprintf(o->python_status, sizeof o->python_status, "%s", a->findings[i].text);
        if (!strcmp(a->findings[i].code, "python-provenance-missing"))
            o->missing++;
    }
    ka_analysis_free(a);
    ka_contract_free(c);
    rh_case_free(&p);
}

Test(provenance, delegation_from_exec_source_is_the_candidates, .timeout = 120)
{
    struct outcome o;
    run_case("delegates", &o);
    cr_expect(strstr(o.python_status, "on:") != NULL, "python side: '%s'", o.python_status);
    cr_expect_gt(o.vendor_candidate, 0, "the candidate's cublasSgemm kernels were not attributed to it");
    cr_expect_gt(o.vendor_reference, 0, "the reference's cublasSgemm kernels were not attributed to it");
    cr_expect_gt(o.vendor_harness, 0, "the harness's own cublasSgemm is not the harness's");
    cr_expect_eq(o.implementation, KA_FAIL);
}

Test(provenance, own_kernel_passes, .timeout = 120)
{
    struct outcome o;
    run_case("own_kernel", &o);
    cr_expect_gt(o.own_candidate, 0);
    cr_expect_eq(o.vendor_candidate, 0);
    cr_expect_eq(o.implementation, KA_PASS, "%s", ka_verdict_name(o.implementation));
}

Test(provenance, work_on_a_thread_the_candidate_started, .timeout = 120)
{
    struct outcome o;
    run_case("thread", &o);
    cr_expect_gt(o.vendor_candidate, 0, "the worker thread's cublasSgemm is not the candidate's");
    cr_expect_eq(o.implementation, KA_FAIL);
}

Test(provenance, candidate_frame_anywhere_on_the_stack_wins, .timeout = 120)
{
    struct outcome o;
    run_case("via_reference", &o);
    /* the candidate's call through Model.forward is the candidate's, the reference's own call the reference's */
    cr_expect_gt(o.vendor_candidate, 0);
    cr_expect_gt(o.vendor_reference, 0);
    cr_expect_eq(o.implementation, KA_FAIL);
}

Test(provenance, class_defined_in_a_function, .timeout = 120)
{
    struct outcome o;
    run_case("local_class", &o);
    cr_expect_gt(o.vendor_candidate, 0);
    cr_expect_eq(o.implementation, KA_FAIL);
}

Test(provenance, candidate_watched_by_file, .timeout = 120)
{
    static const char by_file[] =
        "{\"kaudit_contract\": 1, \"task_id\": \"t/file\","
        " \"candidate\": {\"path\": \"tests/python/cand_file.py\"},"
        " \"implementation\": {\"self_implemented\": true},"
        " \"reference_work\": {\"dominant_class\": \"gemm\", \"amount\": 8192},"
        " \"timing\": {\"window\": \"none\"}}";
    const char *extra[] = { "KAUDIT_PYTHON_WATCH=Model,cand_file.py", NULL };
    struct outcome o;
    run_case_with("file", NULL, extra, by_file, &o);
    cr_expect_gt(o.vendor_candidate, 0, "the file's frames were not attributed to the candidate");
    cr_expect_gt(o.vendor_reference, 0);
    cr_expect_eq(o.implementation, KA_FAIL);
}

Test(provenance, python_without_provenance_is_inconclusive, .timeout = 120)
{
    /* -E: Python ignores PYTHONPATH, so kaudit's sitecustomize never runs */
    struct outcome o;
    run_case_with("delegates", "-E", NULL, contract_text, &o);
    cr_expect_eq(o.missing, 1, "no python-provenance-missing finding");
    cr_expect_eq(o.vendor_candidate, 0);
    cr_expect_eq(o.implementation, KA_INCONCLUSIVE, "%s", ka_verdict_name(o.implementation));
}

/* Unsupported interpreters: provenance is off, the trace says why, nothing breaks. */
static void degrade(const char *mode, const char *expect)
{
    if (!PYTHON3[0])
        cr_skip_test("python3 was not found when the build was configured");
    char site[4096];
    snprintf(site, sizeof site, "%s", KAUDIT_PRELOAD_LIB);
    *strrchr(site, '/') = 0;
    strcat(site, "/kaudit-python/sitecustomize.py");
    struct rh_case p;
    rh_case_init(&p, mode);
    char *argv[] = { PYTHON3, PYTHON_DIR "/py_degrade.py", site, (char *)mode, NULL };
    const char *extra[] = { "KAUDIT_NO_PYTHON=1", NULL };
    rh_case_run(&p, argv, argv, extra);
    cr_assert_eq(p.run.status, 0, "%#x\n%s", p.run.status, p.run.err);
    cr_expect_str_eq(p.run.out, p.plain.out);
    cr_expect_str_eq(p.run.err, "");
    struct ka_contract *c;
    char err[1024];
    cr_assert_eq(ka_contract_parse(contract_text, strlen(contract_text), "exec.json", &c, err, sizeof err), 0, "%s", err);
    struct ka_analysis *a;
    cr_assert_eq(ka_analyze(p.session, c, NULL, &a, err, sizeof err), 0, "%s", err);
    int found = 0;
    for (size_t i = 0; i < a->n_findings; i++)
        if (!strcmp(a->findings[i].code, "python-provenance-off") && strstr(a->findings[i].text, expect))
            found = 1;
    cr_expect(found, "no python-provenance-off finding saying '%s'", expect);
    ka_analysis_free(a);
    ka_contract_free(c);
    rh_case_free(&p);
}

Test(provenance, free_threaded_build_is_off, .timeout = 120)
{
    degrade("free_threaded", "free-threaded");
}

Test(provenance, old_python_is_off, .timeout = 120)
{
    degrade("old_python", "older than 3.10");
}

/*
 * Timing primitives (docs/python-provenance.md, "Timing primitives"): an
 * unmodified harness times the candidate with time.perf_counter and marks
 * nothing (tests/python/py_timing_harness.py).  The Python side compares the
 * primitives' identities at every watched frame's entry and exit and at exit.
 */
struct timing_outcome {
    enum ka_verdict measurement;
    unsigned replaced, unattributed;
    char text[512];
    char python_status[256];
};

static void run_timing_case(const char *which, struct timing_outcome *o)
{
    if (!PYTHON3[0])
        cr_skip_test("python3 was not found when the build was configured");
    struct rh_case p;
    rh_case_init(&p, which);
    char *argv[] = { PYTHON3, PYTHON_DIR "/py_timing_harness.py", STANDIN_DIR, (char *)which, p.log, NULL };
    char *plain[] = { PYTHON3, PYTHON_DIR "/py_timing_harness.py", STANDIN_DIR, (char *)which, NULL };
    rh_case_run(&p, argv, plain, NULL);
    cr_assert_eq(p.run.status, 0, "%#x\n%s", p.run.status, p.run.err);
    /* nothing the harness prints changes, the fake time included */
    cr_expect_str_eq(p.run.out, p.plain.out);
    cr_expect_str_eq(p.run.err, p.plain.err);

    struct ka_contract *c;
    char err[1024];
    cr_assert_eq(ka_contract_parse(contract_text, strlen(contract_text), "exec.json", &c, err, sizeof err), 0, "%s", err);
    struct ka_analysis *a;
    cr_assert_eq(ka_analyze(p.session, c, NULL, &a, err, sizeof err), 0, "%s", err);
    o->measurement = a->axis[KA_AXIS_MEASUREMENT].verdict;
    o->replaced = o->unattributed = 0;
    o->text[0] = o->python_status[0] = 0;
    for (size_t i = 0; i < a->n_findings; i++) {
        if (!strcmp(a->findings[i].code, "timing-primitive-replaced")) {
            o->replaced++;
            snprintf(o->text, sizeof o->text, "%s", a->findings[i].text);
            cr_expect_eq(a->findings[i].kind, KA_FINDING_CONVICTS);
        }
        if (!strcmp(a->findings[i].code, "python-provenance"))
            snprintf(o->python_status, sizeof o->python_status, "%s", a->findings[i].text);
        if (!strcmp(a->findings[i].code, "timing-primitive-replaced-unattributed")) {
            o->unattributed++;
            snprintf(o->text, sizeof o->text, "%s", a->findings[i].text);
            cr_expect_eq(a->findings[i].kind, KA_FINDING_UNRESOLVED);
        }
    }
    ka_analysis_free(a);
    ka_contract_free(c);
    rh_case_free(&p);
}

Test(provenance, candidate_replacing_perf_counter_fails_measurement, .timeout = 120)
{
    struct timing_outcome o;
    run_timing_case("candidate", &o);
    cr_expect_eq(o.replaced, 1, "%u timing-primitive-replaced findings", o.replaced);
    cr_expect_eq(o.unattributed, 0);
    cr_expect(strstr(o.text, "time.perf_counter") && strstr(o.text, "_fake_perf_counter"), "text: '%s'", o.text);
    cr_expect_eq(o.measurement, KA_FAIL, "%s", ka_verdict_name(o.measurement));
}

Test(provenance, harness_wrapping_perf_counter_is_not_the_candidates, .timeout = 120)
{
    struct timing_outcome o;
    run_timing_case("harness", &o);
    cr_expect_eq(o.replaced, 0, "the harness's own wrapper convicted the candidate: '%s'", o.text);
    cr_expect_eq(o.unattributed, 1, "%u unattributed findings", o.unattributed);
    cr_expect(strstr(o.text, "harness_perf_counter") != NULL, "text: '%s'", o.text);
    cr_expect_neq(o.measurement, KA_FAIL);
}

Test(provenance, no_replacement_no_timing_finding, .timeout = 120)
{
    struct timing_outcome o;
    run_timing_case("none", &o);
    cr_expect(strstr(o.python_status, "timing primitives watched") != NULL, "python side: '%s'", o.python_status);
    cr_expect_eq(o.replaced + o.unattributed, 0, "'%s'", o.text);
    cr_expect_neq(o.measurement, KA_FAIL);
}

Test(provenance, candidate_replacing_event_elapsed_time_fails_measurement, .timeout = 120)
{
    /* torch (a stand-in, tests/python/timing_stub) is imported after the sitecustomize ran */
    struct timing_outcome o;
    run_timing_case("event", &o);
    cr_expect_geq(o.replaced, 1, "no timing-primitive-replaced finding");
    cr_expect_eq(o.unattributed, 0, "'%s'", o.text);
    cr_expect(strstr(o.text, "torch.cuda.Event.elapsed_time") != NULL, "text: '%s'", o.text);
    cr_expect_eq(o.measurement, KA_FAIL, "%s", ka_verdict_name(o.measurement));
}

/*
 * Issue 13, item 5: a replacement made by the candidate module's top-level
 * code runs in no watched frame (the harness exec's the source), but the new
 * function's code comes from the source that defined ModelNew: convicted.
 * The same replacement from the reference's source is not the candidate's.
 */
Test(provenance, candidate_module_top_level_replacement_fails_measurement, .timeout = 120)
{
    struct timing_outcome o;
    run_timing_case("toplevel", &o);
    cr_expect_eq(o.replaced, 1, "%u timing-primitive-replaced findings ('%s')", o.replaced, o.text);
    cr_expect_eq(o.unattributed, 0, "'%s'", o.text);
    cr_expect(strstr(o.text, "a function of the candidate's module") && strstr(o.text, "_fake_perf_counter"),
              "text: '%s'", o.text);
    cr_expect_eq(o.measurement, KA_FAIL, "%s", ka_verdict_name(o.measurement));
}

Test(provenance, reference_module_top_level_replacement_is_not_the_candidates, .timeout = 120)
{
    struct timing_outcome o;
    run_timing_case("reftoplevel", &o);
    cr_expect_eq(o.replaced, 0, "the reference's replacement convicted the candidate: '%s'", o.text);
    cr_expect_eq(o.unattributed, 1, "%u unattributed findings", o.unattributed);
    cr_expect_neq(o.measurement, KA_FAIL);
}
