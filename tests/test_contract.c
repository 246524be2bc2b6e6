/*
 * test_contract.c - contracts load fail-closed: every malformed field is an
 * error naming the file and the JSON path, and only a contract whose digest
 * its manifest pins is handed out.
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "contract.h"
#include "trace_builder.h"

static const char good[] =
    "{\"kaudit_contract\": 1, \"task_id\": \"t/add\",\n"
    " \"implementation\": {\"self_implemented\": true, \"forbidden\": [\"elementwise\", \"gemm\"],\n"
    "   \"mediators\": {\"epilogues\": [{\"class\": \"elementwise\", \"max_share\": 0.05}]},\n"
    "   \"library_uses\": [{\"library\": \"cublaslt\", \"api\": \"cublasLtMatmul\", \"class\": \"gemm\"}]},\n"
    " \"reference_work\": {\"dominant_class\": \"elementwise\", \"amount\": 1024, \"unit\": \"element\"},\n"
    " \"inputs\": [{\"name\": \"a\", \"shape\": [32, 32], \"dtype\": \"float32\", \"range\": [-1, 1]}]}\n";

static char *parse_error(const char *text)
{
    struct ka_contract *c = NULL;
    static char err[1024];
    int rc = ka_contract_parse(text, strlen(text), "x.json", &c, err, sizeof err);
    cr_assert_eq(rc, -1, "expected an error for: %s", text);
    cr_assert_null(c);
    return err;
}

Test(contract, good_contract_parses)
{
    struct ka_contract *c;
    char err[1024];
    cr_assert_eq(ka_contract_parse(good, strlen(good), "x.json", &c, err, sizeof err), 0, "%s", err);
    cr_expect_str_eq(c->task_id, "t/add");
    cr_expect_eq(c->forbidden, (1u << KA_CLASS_ELEMENTWISE) | (1u << KA_CLASS_GEMM));
    cr_expect_eq(c->n_epilogues, 1);
    cr_expect_eq(c->n_library_uses, 1);
    cr_expect_eq(c->library_uses[0].cls, KA_CLASS_GEMM);
    cr_expect_eq(c->dominant_class, KA_CLASS_ELEMENTWISE);
    cr_expect_eq(c->n_inputs, 1);
    cr_expect_eq(c->inputs[0].rank, 2);
    cr_expect_str_eq(c->phase_candidate, "kaudit:candidate");
    ka_contract_free(c);
}

Test(contract, errors_name_the_place)
{
    cr_expect(strstr(parse_error("{\"kaudit_contract\": 1,"), "line 1") != NULL);
    cr_expect(strstr(parse_error("[1]"), "expected an object") != NULL);
    char *e = parse_error("{\"kaudit_contract\": 1, \"task_id\": \"t\", \"implementation\": {\"self_implemented\": true,"
                          " \"forbidden\": [\"gemm\", \"gem\"]}, \"reference_work\": {\"dominant_class\": \"gemm\", \"amount\": 1}}");
    cr_expect(strstr(e, "implementation.forbidden[1]") && strstr(e, "'gem'"), "%s", e);
    e = parse_error("{\"kaudit_contract\": 1, \"task_id\": \"t\", \"implemntation\": {}}");
    cr_expect(strstr(e, "unknown key 'implemntation'"), "%s", e);
    e = parse_error("{\"kaudit_contract\": 2, \"task_id\": \"t\"}");
    cr_expect(strstr(e, "kaudit_contract"), "%s", e);
    e = parse_error("{\"kaudit_contract\": 1, \"task_id\": \"t\", \"implementation\": {\"self_implemented\": \"yes\"}}");
    cr_expect(strstr(e, "implementation.self_implemented") && strstr(e, "true or false"), "%s", e);
    e = parse_error("{\"kaudit_contract\": 1, \"task_id\": \"t\", \"implementation\": {\"self_implemented\": true},"
                    " \"reference_work\": {\"dominant_class\": \"gemm\", \"amount\": 10, \"unit\": \"element\"}}");
    cr_expect(strstr(e, "reference_work.unit"), "%s", e);
    e = parse_error("{\"kaudit_contract\": 1, \"task_id\": \"t\", \"implementation\": {\"self_implemented\": true,"
                    " \"mediators\": {\"epilogues\": [{\"class\": \"elementwise\", \"max_share\": 2}]}},"
                    " \"reference_work\": {\"dominant_class\": \"gemm\", \"amount\": 10}}");
    cr_expect(strstr(e, "epilogues[0].max_share"), "%s", e);
    e = parse_error("{\"kaudit_contract\": 1, \"task_id\": \"t\", \"task_id\": \"u\"}");
    cr_expect(strstr(e, "appears twice"), "%s", e);
    e = parse_error("{\"kaudit_contract\": 1, \"task_id\": \"t\", \"implementation\": {\"self_implemented\": true}}");
    cr_expect(strstr(e, "reference_work"), "%s", e);
    e = parse_error("{\"kaudit_contract\": 1, \"task_id\": \"t\", \"implementation\": {\"self_implemented\": true},"
                    " \"reference_work\": {\"dominant_class\": \"gemm\", \"amount\": 1}, \"inputs\": [{\"name\": \"a\","
                    " \"dtype\": \"float32\", \"shape\": [2, -1]}]}");
    cr_expect(strstr(e, "inputs[0].shape[1]"), "%s", e);
}

/* stress.layouts: the layouts a task declares valid (what gates), names checked */
Test(contract, stress_layouts_are_declared_and_checked)
{
    static const char head[] = "{\"kaudit_contract\": 1, \"task_id\": \"t\", \"implementation\": "
                               "{\"self_implemented\": false}, \"stress\": {\"layouts\": ";
    char text[512];
    struct ka_contract *c;
    char err[1024];
    snprintf(text, sizeof text, "%s[\"contiguous\", \"transposed\"]}}", head);
    cr_assert_eq(ka_contract_parse(text, strlen(text), "x.json", &c, err, sizeof err), 0, "%s", err);
    cr_expect_eq(c->stress_layouts, KA_LAYOUT_CONTIGUOUS | KA_LAYOUT_TRANSPOSED);
    ka_contract_free(c);
    snprintf(text, sizeof text, "{\"kaudit_contract\": 1, \"task_id\": \"t\", \"implementation\": "
                                "{\"self_implemented\": false}}");
    cr_assert_eq(ka_contract_parse(text, strlen(text), "x.json", &c, err, sizeof err), 0, "%s", err);
    cr_expect_eq(c->stress_layouts, 0u, "no layouts declared: only the task's own");
    ka_contract_free(c);
    snprintf(text, sizeof text, "%s[\"contiguous\", \"diagonal\"]}}", head);
    char *e = parse_error(text);
    cr_expect(strstr(e, "stress.layouts") && strstr(e, "entry 1") && strstr(e, "unknown layout"), "%s", e);
    snprintf(text, sizeof text, "%s[\"strided\", \"strided\"]}}", head);
    e = parse_error(text);
    cr_expect(strstr(e, "stress.layouts") && strstr(e, "twice"), "%s", e);
    snprintf(text, sizeof text, "%s\"strided\"}}", head);
    e = parse_error(text);
    cr_expect(strstr(e, "stress.layouts") && strstr(e, "expected an array"), "%s", e);
}

/* state.candidate_only: the candidate's own state a contract declares (the paper abstains on undeclared) */
Test(contract, candidate_only_state_is_declared_and_checked)
{
    static const char head[] = "{\"kaudit_contract\": 1, \"task_id\": \"t\", \"implementation\": "
                               "{\"self_implemented\": false}, \"state\": ";
    char text[512];
    struct ka_contract *c;
    char err[1024];
    snprintf(text, sizeof text, "%s{\"candidate_only\": [\"gamma\", \"beta\"]}}", head);
    cr_assert_eq(ka_contract_parse(text, strlen(text), "x.json", &c, err, sizeof err), 0, "%s", err);
    cr_expect_str_eq(c->candidate_only_state, "[\"gamma\",\"beta\"]");
    ka_contract_free(c);
    snprintf(text, sizeof text, "%s{\"candidate_only\": [\"gamma\", 3]}}", head);
    char *e = parse_error(text);
    cr_expect(strstr(e, "state.candidate_only[1]") && strstr(e, "expected a string"), "%s", e);
    snprintf(text, sizeof text, "%s{\"candidate_only\": [\"\"]}}", head);
    e = parse_error(text);
    cr_expect(strstr(e, "state.candidate_only") && strstr(e, "entry 0") && strstr(e, "empty"), "%s", e);
    snprintf(text, sizeof text, "%s{\"own\": []}}", head);
    e = parse_error(text);
    cr_expect(strstr(e, "own"), "an unknown key of state is refused: %s", e);
}

/* A task_id with a NUL would be cut silently; invalid UTF-8 would reach
 * report --json as invalid JSON (issue 14): both refused with the place. */
Test(contract, nul_and_invalid_utf8_are_refused_with_the_place)
{
    char *e = parse_error("{\"kaudit_contract\": 1,\n \"task_id\": \"t\\u0000hidden\"}");
    cr_expect(strstr(e, "NUL") && strstr(e, "line 2"), "%s", e);
    e = parse_error("{\"kaudit_contract\": 1, \"task_id\": \"t\xff\"}");
    cr_expect(strstr(e, "invalid UTF-8") && strstr(e, "column 37"), "%s", e);
    e = parse_error("{\"kaudit_contract\": 1, \"task_id\": \"\xc0\xaf\"}"); /* overlong '/' */
    cr_expect(strstr(e, "invalid UTF-8"), "%s", e);
    e = parse_error("{\"kaudit_contract\": 1, \"task_id\": \"\xed\xa0\x80\"}"); /* a surrogate */
    cr_expect(strstr(e, "invalid UTF-8"), "%s", e);
    /* an escaped backslash before u0000 is text, and valid UTF-8 passes */
    struct ka_contract *c = NULL;
    char err[1024];
    static const char ok[] =
        "{\"kaudit_contract\": 1, \"task_id\": \"t\\\\u0000 \xc3\xa9\", \"implementation\": "
        "{\"self_implemented\": false}}";
    cr_expect_eq(ka_contract_parse(ok, strlen(ok), "x.json", &c, err, sizeof err), 0, "%s", err);
    ka_contract_free(c);
}

static void count_problem(const char *msg, void *arg)
{
    (void)msg;
    (*(size_t *)arg)++;
}

Test(contract, manifest_pins_the_digest)
{
    /* four levels down, so that the lookup (the contract's directory and three
       above it) never reaches a manifest.json outside the test's directory */
    char *top = tb_tempdir();
    char dir[2048], path[4096], manifest[4096], err[2048];
    snprintf(dir, sizeof dir, "%s/a/b/c/d", top);
    char mk[4200];
    snprintf(mk, sizeof mk, "mkdir -p '%s'", dir);
    cr_assert_eq(system(mk), 0);
    cr_assert_eq(tb_write_text(dir, "c.json", good), 0);
    snprintf(path, sizeof path, "%s/c.json", dir);
    snprintf(manifest, sizeof manifest, "%s/manifest.json", dir);
    struct ka_contract *c = NULL;
    /* not pinned at all */
    cr_expect_eq(ka_contract_load(path, NULL, &c, err, sizeof err), -1);
    cr_expect(strstr(err, "not pinned"), "%s", err);
    const char *list[] = { path };
    cr_assert_eq(ka_manifest_pin(manifest, list, 1, err, sizeof err), 0, "%s", err);
    cr_assert_eq(ka_contract_load(path, NULL, &c, err, sizeof err), 0, "%s", err);
    ka_contract_free(c);
    /* one changed byte: the manifest no longer matches */
    char *changed = strdup(good);
    *strstr(changed, "1024") = '2';
    cr_assert_eq(tb_write_text(dir, "c.json", changed), 0);
    free(changed);
    c = NULL;
    cr_expect_eq(ka_contract_load(path, NULL, &c, err, sizeof err), -1);
    cr_expect(strstr(err, "does not match its manifest"), "%s", err);
    cr_expect_null(c);
    size_t checked = 0, problems = 0;
    cr_expect_eq(ka_manifest_check(manifest, count_problem, &problems, &checked, err, sizeof err), -1);
    cr_expect_eq(checked, 1);
    cr_expect_eq(problems, 1);
    snprintf(mk, sizeof mk, "rm -rf '%s'", top);
    cr_expect_eq(system(mk), 0);
    free(top);
}
