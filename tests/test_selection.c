/*
 * test_selection.c - the selection gates (validators/selection.c; docs/validators.md,
 * "Selection gates").
 *
 * The external figures: the paper's Appendix G averages the gate and ordering
 * contrasts over six verifiers to 30.927 and 0.826 pp, per-verifier G from
 * 10.345 to 47.845 pp, from the oracle-visible unsafe counts Table 11 prints
 * (both audit-gated cells are zero); Section 8 bounds S1's human-unsafe
 * deliveries (60 clean, one unsafe, one unknown of 62 on 232 tasks) by
 * 1.6%-3.2% of shipments and 0.4%-0.9% of tasks.  Then every gate on
 * tests/validators/pool.jsonl, whose answers its header counts by hand, and
 * the readers' refusals, each naming the file and line.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ledger.h"
#include "selection.h"

/* Table 11, upper panel: S0 unsafe and S0-fast unsafe counts on 232 tasks, in its order. */
static const struct {
    const char *verifier;
    uint64_t s0, s0_fast;
} table_11[6] = {
    { "CUDA-Agent", 27, 21 }, { "KernelBench", 92, 90 },   { "KernelGYM", 113, 109 },
    { "robust-kbench", 95, 92 }, { "DeepReinforce", 66, 60 }, { "MusaCoder", 49, 47 },
};

static void printed(double x, const char *fmt, const char *expect, const char *what)
{
    char text[32];
    snprintf(text, sizeof text, fmt, x);
    cr_expect_str_eq(text, expect, "%s: %s, the paper prints %s", what, text, expect);
}

Test(contrasts, reproduce_appendix_g_from_table_11)
{
    uint64_t u[6][4];
    for (int v = 0; v < 6; v++) {
        u[v][KVS_U_WEAK_FIRST] = table_11[v].s0;
        u[v][KVS_U_WEAK_FASTEST] = table_11[v].s0_fast;
        /* "Both audit-gated cells have zero oracle-visible unsafe shipments by their eligibility definition" */
        u[v][KVS_U_AUDIT_FIRST] = u[v][KVS_U_AUDIT_FASTEST] = 0;
    }
    struct kvs_contrasts c;
    kvs_contrasts_average((const uint64_t(*)[4])u, 6, 232, &c);
    /* "We average G and R equally over the six verifiers, obtaining 30.927 and 0.826 pp.
       Per-verifier G ranges from 10.345 to 47.845 pp." */
    printed(c.g_mean, "%.3f", "30.927", "mean G");
    printed(c.r_mean, "%.3f", "0.826", "mean R");
    printed(c.g_min, "%.3f", "10.345", "smallest G");
    printed(c.g_max, "%.3f", "47.845", "largest G");
    /* Section 8: "30.9 pp for eligibility (range 10.3-47.8) and 0.8 pp for ordering" */
    printed(c.g_mean, "%.1f", "30.9", "mean G, Section 8");
    printed(c.r_mean, "%.1f", "0.8", "mean R, Section 8");
    /* "so R is half the weak-gate ordering contrast" */
    cr_expect_float_eq(kvs_contrast_order(u[0], 232), 50.0 * (27 - 21) / 232, 1e-12);
    /* the smallest G is CUDA-Agent's, the largest KernelGYM's */
    cr_expect_float_eq(kvs_contrast_gate(u[0], 232), c.g_min, 1e-12);
    cr_expect_float_eq(kvs_contrast_gate(u[2], 232), c.g_max, 1e-12);
    cr_expect(isnan(kvs_contrast_gate(u[0], 0)), "no tasks: undefined, never 0");
}

Test(human_bounds, reproduce_section_8_s1)
{
    /* "S1 ships 60 candidates labeled clean, one labeled unsafe, and one without a label ...
       human-unsafe deliveries lie between 1 and 2, or 1.6%-3.2% of shipments and 0.4%-0.9% of tasks" */
    struct kvs_gate_result r = { .tasks = 232, .shipped = 62, .human_clean = 60, .human_unsafe = 1, .human_unknown = 1 };
    double lo, hi;
    kvs_human_bounds(&r, r.shipped, &lo, &hi);
    printed(100 * lo, "%.1f", "1.6", "unsafe/shipped, low");
    printed(100 * hi, "%.1f", "3.2", "unsafe/shipped, high");
    kvs_human_bounds(&r, r.tasks, &lo, &hi);
    printed(100 * lo, "%.1f", "0.4", "unsafe/tasks, low");
    printed(100 * hi, "%.1f", "0.9", "unsafe/tasks, high");
    kvs_human_bounds(&r, 0, &lo, &hi);
    cr_expect(isnan(lo) && isnan(hi), "no deliveries: undefined, never 0");
}

struct fixture {
    struct kvs_ledger l;
    struct kvs_pool p;
};

static void read_pool(struct fixture *fx, int labels)
{
    char err[4096];
    memset(fx, 0, sizeof *fx);
    cr_assert_eq(kvs_ledger_read(&fx->l, VALIDATORS_DIR "/pool.jsonl", err, sizeof err), 0, "%s", err);
    cr_assert_eq(kvs_pool_read(&fx->p, &fx->l, VALIDATORS_DIR "/pool.jsonl", err, sizeof err), 0, "%s", err);
    if (labels)
        cr_assert_eq(kvs_pool_labels_read(&fx->p, VALIDATORS_DIR "/pool_human.jsonl", err, sizeof err), 0, "%s", err);
}

static size_t validator(const struct kvs_ledger *l, const char *name)
{
    for (size_t v = 0; v < l->n_validators; v++)
        if (!strcmp(l->validators[v], name))
            return v;
    cr_assert_fail("no validator %s", name);
    return 0;
}

/* What the gate shipped, task by task: "t1s2 t2s0 - ..." ("-": abstained). */
static void selections(const struct fixture *fx, const struct kvs_gate *g, struct kvs_gate_result *r, char *out,
                       size_t n)
{
    static const double k[2] = { 1, 2 };
    size_t chosen[16];
    cr_assert(fx->p.n_tasks <= 16);
    kvs_gate_run(&fx->p, g, k, 2, r, chosen);
    out[0] = '\0';
    for (size_t t = 0; t < fx->p.n_tasks; t++) {
        const char *id = chosen[t] == SIZE_MAX ? "-" : fx->l.records[fx->p.slots[chosen[t]].record].id;
        snprintf(out + strlen(out), n - strlen(out), "%s%s", t ? " " : "", id);
    }
}

struct expected {
    const char *picks;
    uint64_t eligible, undecided, shipped, by_speedup, by_fallback, unsafe, c3, unresolved, human_lo, human_hi,
        safefast1, safefast2;
};

static void expect_gate(const struct fixture *fx, const char *name, struct kvs_gate g, const struct expected *e)
{
    struct kvs_gate_result r;
    char picks[256];
    selections(fx, &g, &r, picks, sizeof picks);
    cr_expect_str_eq(picks, e->picks, "%s shipped %s, not %s", name, picks, e->picks);
    cr_expect_eq(r.tasks, 5, "%s", name);
    cr_expect_eq(r.slots, 12, "%s", name);
    cr_expect_eq(r.eligible, e->eligible, "%s: %llu eligible slots", name, (unsigned long long)r.eligible);
    cr_expect_eq(r.undecided, e->undecided, "%s: %llu undecided", name, (unsigned long long)r.undecided);
    cr_expect_eq(r.shipped, e->shipped, "%s: %llu shipped", name, (unsigned long long)r.shipped);
    cr_expect_eq(r.by_speedup, e->by_speedup, "%s: %llu by speedup", name, (unsigned long long)r.by_speedup);
    cr_expect_eq(r.by_fallback, e->by_fallback, "%s: %llu by fallback", name, (unsigned long long)r.by_fallback);
    cr_expect_eq(r.unsafe, e->unsafe, "%s: %llu unsafe", name, (unsigned long long)r.unsafe);
    cr_expect_eq(r.c3, e->c3, "%s: %llu C3*", name, (unsigned long long)r.c3);
    cr_expect_eq(r.unresolved, e->unresolved, "%s: %llu unresolved", name, (unsigned long long)r.unresolved);
    cr_expect_eq(r.human_unsafe, e->human_lo, "%s: %llu human unsafe", name, (unsigned long long)r.human_unsafe);
    cr_expect_eq(r.human_unsafe + r.human_unknown, e->human_hi, "%s: %llu unsafe or unknown", name,
                 (unsigned long long)(r.human_unsafe + r.human_unknown));
    cr_expect_eq(r.human_unsafe + r.human_unknown + r.human_clean, r.shipped, "%s: every delivery has one label", name);
    cr_expect_eq(r.safefast[0], e->safefast1, "%s: SafeFast@1 %llu", name, (unsigned long long)r.safefast[0]);
    cr_expect_eq(r.safefast[1], e->safefast2, "%s: SafeFast@2 %llu", name, (unsigned long long)r.safefast[1]);
}

/* tests/validators/pool.jsonl's header, row by row. */
Test(gates, every_gate_on_the_hand_counted_pool)
{
    struct fixture fx;
    read_pool(&fx, 1);
    cr_assert_eq(fx.p.n_tasks, 5);
    cr_assert_eq(fx.p.n_slots, 12);
    /* the slots of a task in their fixed order, whatever the order of the lines (t2: 2, 0, 1) */
    cr_expect_str_eq(fx.p.tasks[1], "t2");
    cr_expect_eq(fx.p.slots[fx.p.task_start[1]].slot, 0);
    cr_expect_eq(fx.p.task_start[2] - fx.p.task_start[1], 3);
    size_t lax = validator(&fx.l, "lax"), picky = validator(&fx.l, "picky");
    /* lax accepts the FAIL first slots: three unsafe, all C3* (C3b, C3c, C3a); t2's first is INCONCL */
    expect_gate(&fx, "S0 lax", (struct kvs_gate){ KVS_ELIGIBLE_WEAK, lax, KVS_ORDER_FIRST },
                &(struct expected){ "t1s0 t2s0 t3s0 t4s0 t5s0", 11, 0, 5, 0, 0, 3, 3, 1, 3, 3, 0, 0 });
    /* fastest: t1's 2.5 over t1s0's 1.0, t2's C2 at 5.0 (t2s0's 4.0 is not reportable), t3's INCONCL at 2.0,
       t4 without a speedup falls back to its first slot */
    expect_gate(&fx, "S0-fast lax", (struct kvs_gate){ KVS_ELIGIBLE_WEAK, lax, KVS_ORDER_FASTEST },
                &(struct expected){ "t1s2 t2s2 t3s1 t4s0 t5s1", 11, 0, 5, 4, 1, 2, 1, 1, 3, 4, 2, 1 });
    /* picky did not decide t4s0: not eligible, so it abstains there */
    expect_gate(&fx, "S0 picky", (struct kvs_gate){ KVS_ELIGIBLE_WEAK, picky, KVS_ORDER_FIRST },
                &(struct expected){ "t1s1 t2s0 t3s0 - t5s0", 7, 1, 4, 0, 0, 1, 1, 1, 1, 1, 1, 0 });
    /* the tie t1s2 = t1s3 = 2.5 goes to the earlier slot; t2s0 has no usable speedup: fallback */
    expect_gate(&fx, "S0-fast picky", (struct kvs_gate){ KVS_ELIGIBLE_WEAK, picky, KVS_ORDER_FASTEST },
                &(struct expected){ "t1s2 t2s0 t3s0 - t5s1", 7, 1, 4, 3, 1, 1, 1, 1, 2, 2, 2, 1 });
    /* E1: no PASS certificate on t3 or t4; t2s1 has no label (unknown) */
    expect_gate(&fx, "S1-first", (struct kvs_gate){ KVS_ELIGIBLE_AUDIT, 0, KVS_ORDER_FIRST },
                &(struct expected){ "t1s1 t2s1 - - t5s0", 6, 0, 3, 0, 0, 0, 0, 0, 0, 1, 1, 0 });
    expect_gate(&fx, "S1", (struct kvs_gate){ KVS_ELIGIBLE_AUDIT, 0, KVS_ORDER_FASTEST },
                &(struct expected){ "t1s2 t2s1 - - t5s1", 6, 0, 3, 2, 1, 0, 0, 0, 1, 2, 2, 1 });
    /* E_axis adds t3s1: every axis PASS, the certificate INCONCL (unresolved, never SafeFast) */
    expect_gate(&fx, "S_axis-first", (struct kvs_gate){ KVS_ELIGIBLE_AXES, 0, KVS_ORDER_FIRST },
                &(struct expected){ "t1s1 t2s1 t3s1 - t5s0", 7, 0, 4, 0, 0, 0, 0, 1, 0, 2, 1, 0 });
    expect_gate(&fx, "S_axis", (struct kvs_gate){ KVS_ELIGIBLE_AXES, 0, KVS_ORDER_FASTEST },
                &(struct expected){ "t1s2 t2s1 t3s1 - t5s1", 7, 0, 4, 3, 1, 0, 0, 1, 1, 3, 2, 1 });
    kvs_pool_free(&fx.p);
    kvs_ledger_free(&fx.l);
}

/* SafeFast's threshold is strict: t5s1's 2.0 counts at k = 1.999, not at k = 2. */
Test(gates, safefast_threshold_is_strict)
{
    struct fixture fx;
    read_pool(&fx, 0);
    const double k[3] = { 1.999, 2, 2.5 };
    struct kvs_gate_result r;
    kvs_gate_run(&fx.p, &(struct kvs_gate){ KVS_ELIGIBLE_AUDIT, 0, KVS_ORDER_FASTEST }, k, 3, &r, NULL);
    cr_expect_eq(r.safefast[0], 2); /* t1s2 2.5, t5s1 2.0 */
    cr_expect_eq(r.safefast[1], 1); /* t1s2 */
    cr_expect_eq(r.safefast[2], 0);
    /* without labels every delivery is unknown: the bounds span [0, shipped] */
    cr_expect_eq(r.human_unknown, r.shipped);
    cr_expect_eq(fx.p.labelled, 0);
    kvs_pool_free(&fx.p);
    kvs_ledger_free(&fx.l);
}

/* The contrasts of the fixture: lax 50 and 10 pp, picky 20 and 0 pp (its header). */
Test(contrasts, fixture_by_hand)
{
    const uint64_t u[2][4] = { { 3, 2, 0, 0 }, { 1, 1, 0, 0 } };
    cr_expect_float_eq(kvs_contrast_gate(u[0], 5), 50.0, 1e-12);
    cr_expect_float_eq(kvs_contrast_order(u[0], 5), 10.0, 1e-12);
    cr_expect_float_eq(kvs_contrast_gate(u[1], 5), 20.0, 1e-12);
    cr_expect_float_eq(kvs_contrast_order(u[1], 5), 0.0, 1e-12);
    /* an audit gate that ships unsafe candidates reduces G and enters R */
    const uint64_t w[4] = { 3, 2, 1, 0 };
    cr_expect_float_eq(kvs_contrast_gate(w, 5), 40.0, 1e-12);
    cr_expect_float_eq(kvs_contrast_order(w, 5), 20.0, 1e-12);
    struct kvs_contrasts c;
    kvs_contrasts_average(u, 2, 5, &c);
    cr_expect_float_eq(c.g_mean, 35.0, 1e-12);
    cr_expect_float_eq(c.r_mean, 5.0, 1e-12);
    cr_expect_float_eq(c.g_min, 20.0, 1e-12);
    cr_expect_float_eq(c.g_max, 50.0, 1e-12);
}

static char *temp_file(const char *text, const char *name)
{
    char *path = malloc(64);
    snprintf(path, 64, "/tmp/kaudit-%s-XXXXXX", name);
    int fd = mkstemp(path);
    cr_assert(fd >= 0);
    cr_assert_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    close(fd);
    return path;
}

/* A pool (and labels) that must be refused, with expect and "FILE:LINE" in the message. */
static void refused(const char *pool, const char *labels, const char *expect, unsigned line)
{
    char *lp = temp_file(pool, "pool"), *hp = labels ? temp_file(labels, "labels") : NULL, err[4096] = "";
    struct kvs_ledger l = { 0 };
    struct kvs_pool p = { 0 };
    int rc = kvs_ledger_read(&l, lp, err, sizeof err);
    cr_assert_eq(rc, 0, "the ledger reader refused %s: %s", pool, err);
    rc = kvs_pool_read(&p, &l, lp, err, sizeof err);
    if (rc == 0 && hp)
        rc = kvs_pool_labels_read(&p, hp, err, sizeof err);
    cr_expect_neq(rc, 0, "accepted: %s / %s", pool, labels ? labels : "");
    cr_expect(strstr(err, expect), "'%s' does not say '%s'", err, expect);
    char where[128];
    snprintf(where, sizeof where, "%s:%u:", hp ? hp : lp, line);
    cr_expect(strstr(err, where), "'%s' does not name %s", err, where);
    kvs_pool_free(&p);
    kvs_ledger_free(&l);
    unlink(lp);
    free(lp);
    if (hp) {
        unlink(hp);
        free(hp);
    }
}

#define LINE(id, rest) "{\"id\": \"" id "\", \"certificate\": \"PASS\"" rest "}\n"

Test(pool, bad_input_is_refused_with_file_and_line)
{
    refused(LINE("a", ", \"task\": \"t\", \"slot\": 0") LINE("b", ", \"slot\": 1"), NULL, "record 'b' has no \"task\"",
            2);
    refused(LINE("a", ", \"task\": \"\", \"slot\": 0"), NULL, "no \"task\" string", 1);
    refused(LINE("a", ", \"task\": \"t\""), NULL, "\"slot\" must be a non-negative integer", 1);
    refused(LINE("a", ", \"task\": \"t\", \"slot\": -1"), NULL, "\"slot\" must be", 1);
    refused(LINE("a", ", \"task\": \"t\", \"slot\": 1.5"), NULL, "\"slot\" must be", 1);
    refused(LINE("a", ", \"task\": \"t\", \"slot\": \"0\""), NULL, "\"slot\" must be", 1);
    /* one candidate per (task, slot): the later line is named, with the earlier */
    refused("# a comment\n" LINE("a", ", \"task\": \"t\", \"slot\": 0") LINE("b", ", \"task\": \"u\", \"slot\": 0")
                LINE("c", ", \"task\": \"t\", \"slot\": 0"),
            NULL, "record 'c' at task 't' slot 0, where line 2 put 'a'", 4);
    refused(LINE("a", ", \"task\": \"t\", \"slot\": 0, \"speedup\": 2.0"), NULL, "\"speedup\" must be an object", 1);
    refused(LINE("a", ", \"task\": \"t\", \"slot\": 0, \"speedup\": {\"ratio\": \"fast\"}"), NULL,
            "speedup.ratio must be", 1);
    refused(LINE("a", ", \"task\": \"t\", \"slot\": 0, \"speedup\": {\"ratio\": 2, \"reportable\": 1}"), NULL,
            "speedup.reportable must be", 1);
    const char *ok = LINE("a", ", \"task\": \"t\", \"slot\": 0") LINE("b", ", \"task\": \"t\", \"slot\": 1");
    refused(ok, "{\"id\": \"a\", \"label\": \"clean\"}\n{\"id\": \"zz\", \"label\": \"clean\"}\n",
            "record 'zz' is not in the ledger", 2);
    refused(ok, "{\"id\": \"a\", \"label\": \"clean\"}\n\n{\"id\": \"a\", \"label\": \"unsafe\"}\n",
            "a second label of record 'a' (line 1 labelled it", 3);
    refused(ok, "{\"id\": \"a\", \"label\": \"defect\"}\n", "label 'defect' is not clean, unsafe or unknown", 1);
    refused(ok, "{\"id\": \"a\"}\n", "a label line is", 1);
    refused(ok, "[1]\n", "not a JSON object", 1);
    refused(ok, "{\"id\": \"a\", \"label\": \"clean\"}", "the last line is incomplete", 1);
}

/* A pool without the optional fields: no speedup anywhere, so fastest is first. */
Test(gates, without_speedups_fastest_is_first)
{
    char *lp = temp_file(LINE("a", ", \"task\": \"t\", \"slot\": 3") LINE("b", ", \"task\": \"t\", \"slot\": 1")
                             "{\"id\": \"c\", \"certificate\": \"FAIL\", \"task\": \"u\", \"slot\": 0}\n",
                         "pool");
    char err[4096];
    struct kvs_ledger l = { 0 };
    struct kvs_pool p = { 0 };
    cr_assert_eq(kvs_ledger_read(&l, lp, err, sizeof err), 0, "%s", err);
    cr_assert_eq(kvs_pool_read(&p, &l, lp, err, sizeof err), 0, "%s", err);
    size_t first[2], fastest[2];
    struct kvs_gate_result rf, rv;
    kvs_gate_run(&p, &(struct kvs_gate){ KVS_ELIGIBLE_AUDIT, 0, KVS_ORDER_FIRST }, NULL, 0, &rf, first);
    kvs_gate_run(&p, &(struct kvs_gate){ KVS_ELIGIBLE_AUDIT, 0, KVS_ORDER_FASTEST }, NULL, 0, &rv, fastest);
    cr_expect_str_eq(l.records[p.slots[first[0]].record].id, "b", "slot 1 comes before slot 3");
    cr_expect_eq(first[0], fastest[0]);
    cr_expect_eq(first[1], SIZE_MAX, "task u has no PASS certificate: the gate abstains");
    cr_expect_eq(rv.by_fallback, 1);
    cr_expect_eq(rv.by_speedup, 0);
    cr_expect_eq(rf.shipped, 1);
    kvs_pool_free(&p);
    kvs_ledger_free(&l);
    unlink(lp);
    free(lp);
}
