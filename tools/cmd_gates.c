/*
 * cmd_gates.c - `kaudit gates LEDGER.jsonl [--decisions FILE]... [--human FILE]
 * [--k LIST] [--format md|csv|json] [-o FILE]`: the selection gates of the
 * paper's RQ4 (Section 8, Appendix G) over a pool of tasks x slots: S0 and
 * S0-fast per weak validator, S1-first, S1, S_axis-first and S_axis; their
 * coverage, oracle-visible and human unsafe deliveries (identification
 * bounds over unknown labels), the gate and ordering contrasts, SafeFast@k
 * (docs/validators.md, "Selection gates").  The numbers are the validators
 * library's (validators/selection.c); this file parses and prints.
 */
#include <getopt.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "commands.h"
#include "ledger.h"
#include "report_text.h"
#include "selection.h"
#include "validator_stats.h"

static const char gates_usage[] =
    "usage: kaudit gates LEDGER.jsonl [--decisions FILE]... [--human FILE] [--k LIST] [--format md|csv|json] [-o FILE]\n"
    "\n"
    "Selection gates over a fixed pool: every ledger record is one candidate at its \"task\"\n"
    "and \"slot\" (its place in the task's fixed order).  Each gate ships at most one\n"
    "candidate per task: S0 the first slot a weak validator accepts, S0-fast the accepted\n"
    "slot with the largest usable speedup (reportable, positive; ties to the earlier slot;\n"
    "the first accepted slot when none has one); S1-first and S1 the same over PASS\n"
    "certificates (E1); S_axis-first and S_axis over slots whose three axes PASS.  A gate\n"
    "with no eligible slot abstains.  Per gate: coverage (tasks shipped / tasks), oracle-\n"
    "visible unsafe deliveries (FAIL certificates: C2 and C3*) over tasks and over\n"
    "deliveries, INCONCL deliveries apart, human unsafe deliveries with identification\n"
    "bounds over unknown labels, and SafeFast@k (tasks shipping a PASS certificate with a\n"
    "usable speedup > k); then the gate and ordering contrasts G and R (Appendix G).\n"
    "\n"
    "  --decisions FILE   more weak decisions, lines {id, validator, decision} (repeatable)\n"
    "  --human FILE       human labels, lines {id, label: clean|unsafe|unknown}\n"
    "  --k LIST           SafeFast thresholds, comma-separated (default 1,2; at most 8)\n"
    "  --format F         md (default), csv or json\n"
    "  -o FILE            write there instead of standard output\n";

struct gate_row {
    char name[16];
    struct kvs_gate gate;
    struct kvs_gate_result r;
    size_t *chosen;
};

static void json_rate(FILE *f, const char *key, uint64_t a, uint64_t b)
{
    fprintf(f, "\"%s\": {\"count\": %llu, \"of\": %llu, \"rate\": ", key, (unsigned long long)a, (unsigned long long)b);
    report_json_number(f, kvs_rate(a, b));
    fputc('}', f);
}

/* "11.6% (27)": the paper's unsafe cells, a share of the tasks with its count. */
static void md_share(FILE *f, uint64_t a, uint64_t n)
{
    if (n)
        fprintf(f, "%.1f%% (%llu)", 100.0 * (double)a / (double)n, (unsigned long long)a);
    else
        fprintf(f, "- (%llu)", (unsigned long long)a);
}

static void md_percent_range(FILE *f, double lo, double hi)
{
    if (isnan(lo))
        fputs("-", f);
    else if (lo == hi)
        fprintf(f, "%.1f%%", 100 * lo);
    else
        fprintf(f, "%.1f–%.1f%%", 100 * lo, 100 * hi);
}

/* "6.0% (15.1%)": human unsafe over tasks (over deliveries), ranges where labels are unknown. */
static void md_human_short(FILE *f, const struct kvs_pool *p, const struct kvs_gate_result *r)
{
    if (!p->labelled) {
        fputs("-", f);
        return;
    }
    double lo, hi;
    kvs_human_bounds(r, r->tasks, &lo, &hi);
    md_percent_range(f, lo, hi);
    fputs(" (", f);
    kvs_human_bounds(r, r->shipped, &lo, &hi);
    md_percent_range(f, lo, hi);
    fputc(')', f);
}

/* "[1,2]/62 (1.6–3.2%)": the lower panel's cells. */
static void md_human_counts(FILE *f, const struct kvs_pool *p, const struct kvs_gate_result *r, uint64_t n)
{
    if (!p->labelled) {
        fputs("-", f);
        return;
    }
    if (r->human_unknown)
        fprintf(f, "[%llu,%llu]/%llu", (unsigned long long)r->human_unsafe,
                (unsigned long long)(r->human_unsafe + r->human_unknown), (unsigned long long)n);
    else
        fprintf(f, "%llu/%llu", (unsigned long long)r->human_unsafe, (unsigned long long)n);
    double lo, hi;
    kvs_human_bounds(r, n, &lo, &hi);
    fputs(" (", f);
    md_percent_range(f, lo, hi);
    fputc(')', f);
}

static void md_safefast(FILE *f, const struct kvs_gate_result *r, size_t n_k)
{
    fputc('(', f);
    for (size_t j = 0; j < n_k; j++)
        fprintf(f, "%s%llu", j ? ", " : "", (unsigned long long)r->safefast[j]);
    fputc(')', f);
}

static void md_k_list(FILE *f, const double *k, size_t n_k)
{
    for (size_t j = 0; j < n_k; j++)
        fprintf(f, "%s%g", j ? ", " : "", k[j]);
}

static void print_md(FILE *f, const struct kvs_pool *p, const struct gate_row *g, size_t n_gates, const double *k,
                     size_t n_k, const struct kvs_contrasts *c, const double (*gr)[2], const char *human)
{
    const struct kvs_ledger *l = p->ledger;
    size_t nv = l->n_validators, T = p->n_tasks;
    fprintf(f, "## Selection gates\n\n%zu tasks, %zu slots, %zu weak validators. Oracle-visible unsafe: deliveries "
               "with a FAIL certificate (C2 and C3*); unresolved: deliveries with an INCONCL certificate, in no "
               "numerator. Shares divide by the %zu tasks, abstentions included; parenthesized ones by the "
               "deliveries. Human unsafe: ",
            T, p->n_slots, nv, T);
    if (human) {
        fputs("labels of ", f);
        report_md_string(f, human);
        fputs(", a range where shipped candidates have no label (identification bounds: the unknown ones all "
              "clean, then all unsafe; not confidence intervals).\n\n",
              f);
    } else {
        fputs("no labels given (--human).\n\n", f);
    }
    if (nv) {
        fputs("| weak validator | S0 unsafe | S0 C3* | S0/S0-fast cov. | S0-fast unsafe | S0-fast C3* | unresolved "
              "(S0, S0-fast) | human S0 unsafe | human S0-fast unsafe | undecided slots |\n"
              "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n",
              f);
        for (size_t v = 0; v < nv; v++) {
            const struct kvs_gate_result *first = &g[2 * v].r, *fast = &g[2 * v + 1].r;
            fputs("| ", f);
            report_md_string(f, l->validators[v]);
            fputs(" | ", f);
            md_share(f, first->unsafe, T);
            fputs(" | ", f);
            md_share(f, first->c3, T);
            fprintf(f, " | %llu/%zu | ", (unsigned long long)first->shipped, T);
            md_share(f, fast->unsafe, T);
            fputs(" | ", f);
            md_share(f, fast->c3, T);
            fprintf(f, " | %llu, %llu | ", (unsigned long long)first->unresolved, (unsigned long long)fast->unresolved);
            md_human_short(f, p, first);
            fputs(" | ", f);
            md_human_short(f, p, fast);
            fprintf(f, " | %llu |\n", (unsigned long long)first->undecided);
        }
        fputc('\n', f);
    }
    fputs("| audit selector | eligible slots | coverage | by speedup, fallback | oracle unsafe | unresolved | human "
          "unsafe/tasks | human unsafe/shipped |\n| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n",
          f);
    for (size_t i = 2 * nv; i < n_gates; i++) {
        const struct kvs_gate_result *r = &g[i].r;
        fprintf(f, "| %s | %llu/%llu | %llu/%zu (%.1f%%) | ", g[i].name, (unsigned long long)r->eligible,
                (unsigned long long)r->slots, (unsigned long long)r->shipped, T, 100.0 * (double)r->shipped / (double)T);
        if (g[i].gate.order == KVS_ORDER_FASTEST)
            fprintf(f, "%llu, %llu", (unsigned long long)r->by_speedup, (unsigned long long)r->by_fallback);
        else
            fputs("-", f);
        fprintf(f, " | %llu | %llu | ", (unsigned long long)r->unsafe, (unsigned long long)r->unresolved);
        md_human_counts(f, p, r, T);
        fputs(" | ", f);
        md_human_counts(f, p, r, r->shipped);
        fputs(" |\n", f);
    }
    if (nv) {
        fputs("\n## Gate and ordering contrasts\n\nPer weak validator, in percentage points of the tasks (Appendix "
              "G): G = 100/2 ((u_wf - u_cf) + (u_wv - u_cv)), R = 100/2 ((u_wf - u_wv) + (u_cf - u_cv)), u the "
              "oracle-visible unsafe deliveries over tasks of S0 (w,f), S0-fast (w,v), S1-first (c,f) and S1 (c,v). "
              "The validators share tasks: the average describes, it does not sample.\n\n"
              "| weak validator | G (pp) | R (pp) |\n| --- | ---: | ---: |\n",
              f);
        for (size_t v = 0; v < nv; v++) {
            fputs("| ", f);
            report_md_string(f, l->validators[v]);
            fprintf(f, " | %.3f | %.3f |\n", gr[v][0], gr[v][1]);
        }
        fprintf(f, "| mean over %zu | %.3f (range %.3f to %.3f) | %.3f (range %.3f to %.3f) |\n", nv, c->g_mean,
                c->g_min, c->g_max, c->r_mean, c->r_min, c->r_max);
    }
    fputs("\n## SafeFast\n\nTasks (of ", f);
    fprintf(f, "%zu) shipping a PASS certificate (E1) with a usable speedup greater than k, at k = ", T);
    md_k_list(f, k, n_k);
    fputs(" (Table G.2); a missing speedup counts zero.\n\n", f);
    if (nv) {
        fputs("| weak validator | S0 SafeFast | S0-fast SafeFast |\n| --- | ---: | ---: |\n", f);
        for (size_t v = 0; v < nv; v++) {
            fputs("| ", f);
            report_md_string(f, l->validators[v]);
            fputs(" | ", f);
            md_safefast(f, &g[2 * v].r, n_k);
            fputs(" | ", f);
            md_safefast(f, &g[2 * v + 1].r, n_k);
            fputs(" |\n", f);
        }
        fputc('\n', f);
    }
    fputs("| audit selector | SafeFast |\n| --- | ---: |\n", f);
    for (size_t i = 2 * nv; i < n_gates; i++) {
        fprintf(f, "| %s | ", g[i].name);
        md_safefast(f, &g[i].r, n_k);
        fputs(" |\n", f);
    }
    if (!human)
        return;
    int any = 0;
    for (size_t i = 0; i < n_gates; i++)
        for (size_t t = 0; t < T; t++) {
            size_t s = g[i].chosen[t];
            if (s == SIZE_MAX || p->slots[s].label != KVS_LABEL_UNKNOWN)
                continue;
            if (!any)
                fputs("\n## Deliveries without a human label\n\n| gate | weak validator | task | slot | id |\n"
                      "| --- | --- | --- | ---: | --- |\n",
                      f);
            any = 1;
            fprintf(f, "| %s | ", g[i].name);
            if (g[i].gate.eligibility == KVS_ELIGIBLE_WEAK)
                report_md_string(f, l->validators[g[i].gate.validator]);
            fputs(" | ", f);
            report_md_string(f, p->tasks[t]);
            fprintf(f, " | %lld | ", p->slots[s].slot);
            report_md_string(f, l->records[p->slots[s].record].id);
            fputs(" |\n", f);
        }
}

static void print_csv(FILE *f, const struct kvs_pool *p, const struct gate_row *g, size_t n_gates, const double *k,
                      size_t n_k, const struct kvs_contrasts *c, const double (*gr)[2])
{
    const struct kvs_ledger *l = p->ledger;
    fputs("gate,validator,tasks,slots,eligible,undecided,shipped,by_speedup,by_fallback,unsafe,c3,unresolved,"
          "human_unsafe,human_clean,human_unknown",
          f);
    for (size_t j = 0; j < n_k; j++)
        fprintf(f, ",safefast_gt_%g", k[j]);
    fputc('\n', f);
    for (size_t i = 0; i < n_gates; i++) {
        const struct kvs_gate_result *r = &g[i].r;
        fprintf(f, "%s,", g[i].name);
        if (g[i].gate.eligibility == KVS_ELIGIBLE_WEAK)
            report_csv_string(f, l->validators[g[i].gate.validator]);
        fprintf(f, ",%llu,%llu,%llu,%llu,%llu,%llu,%llu,%llu,%llu,%llu", (unsigned long long)r->tasks,
                (unsigned long long)r->slots, (unsigned long long)r->eligible, (unsigned long long)r->undecided,
                (unsigned long long)r->shipped, (unsigned long long)r->by_speedup, (unsigned long long)r->by_fallback,
                (unsigned long long)r->unsafe, (unsigned long long)r->c3, (unsigned long long)r->unresolved);
        if (p->labelled)
            fprintf(f, ",%llu,%llu,%llu", (unsigned long long)r->human_unsafe, (unsigned long long)r->human_clean,
                    (unsigned long long)r->human_unknown);
        else
            fputs(",,,", f);
        for (size_t j = 0; j < n_k; j++)
            fprintf(f, ",%llu", (unsigned long long)r->safefast[j]);
        fputc('\n', f);
    }
    if (!l->n_validators)
        return;
    fputs("\nvalidator,G_pp,R_pp\n", f);
    for (size_t v = 0; v < l->n_validators; v++) {
        report_csv_string(f, l->validators[v]);
        fprintf(f, ",%.6f,%.6f\n", gr[v][0], gr[v][1]);
    }
    fprintf(f, "mean,%.6f,%.6f\n", c->g_mean, c->r_mean);
}

static void print_json(FILE *f, const struct kvs_pool *p, const struct gate_row *g, size_t n_gates, const double *k,
                       size_t n_k, const struct kvs_contrasts *c, const double (*gr)[2])
{
    const struct kvs_ledger *l = p->ledger;
    fprintf(f, "{\n  \"kaudit_gates\": 1,\n  \"tasks\": %zu,\n  \"slots\": %zu,\n  \"human\": %s,\n  \"k\": [", p->n_tasks,
            p->n_slots, p->labelled ? "true" : "false");
    for (size_t j = 0; j < n_k; j++) {
        fputs(j ? ", " : "", f);
        report_json_number(f, k[j]);
    }
    fputs("],\n  \"task_names\": [", f);
    for (size_t t = 0; t < p->n_tasks; t++) {
        fputs(t ? ", " : "", f);
        report_json_string(f, p->tasks[t]);
    }
    fputs("],\n  \"gates\": [", f);
    static const char *const eligibility[] = { "weak", "audit", "axes" };
    for (size_t i = 0; i < n_gates; i++) {
        const struct kvs_gate_result *r = &g[i].r;
        fprintf(f, "%s\n    {\"gate\": \"%s\", \"validator\": ", i ? "," : "", g[i].name);
        if (g[i].gate.eligibility == KVS_ELIGIBLE_WEAK)
            report_json_string(f, l->validators[g[i].gate.validator]);
        else
            fputs("null", f);
        fprintf(f, ", \"eligibility\": \"%s\", \"order\": \"%s\", \"eligible_slots\": %llu, \"undecided_slots\": %llu, ",
                eligibility[g[i].gate.eligibility], g[i].gate.order == KVS_ORDER_FIRST ? "first" : "fastest",
                (unsigned long long)r->eligible, (unsigned long long)r->undecided);
        json_rate(f, "coverage", r->shipped, r->tasks);
        if (g[i].gate.order == KVS_ORDER_FASTEST)
            fprintf(f, ", \"by_speedup\": %llu, \"by_fallback\": %llu, ", (unsigned long long)r->by_speedup,
                    (unsigned long long)r->by_fallback);
        else
            fputs(", \"by_speedup\": null, \"by_fallback\": null, ", f);
        json_rate(f, "unsafe_tasks", r->unsafe, r->tasks);
        fputs(", ", f);
        json_rate(f, "unsafe_shipped", r->unsafe, r->shipped);
        fprintf(f, ", \"c3\": %llu, \"unresolved\": %llu, \"human\": ", (unsigned long long)r->c3,
                (unsigned long long)r->unresolved);
        if (p->labelled) {
            double lo, hi;
            fprintf(f, "{\"unsafe\": %llu, \"clean\": %llu, \"unknown\": %llu, \"unsafe_tasks\": [",
                    (unsigned long long)r->human_unsafe, (unsigned long long)r->human_clean,
                    (unsigned long long)r->human_unknown);
            kvs_human_bounds(r, r->tasks, &lo, &hi);
            report_json_number(f, lo);
            fputs(", ", f);
            report_json_number(f, hi);
            fputs("], \"unsafe_shipped\": [", f);
            kvs_human_bounds(r, r->shipped, &lo, &hi);
            report_json_number(f, lo);
            fputs(", ", f);
            report_json_number(f, hi);
            fputs("]}", f);
        } else {
            fputs("null", f);
        }
        fputs(", \"safefast\": [", f);
        for (size_t j = 0; j < n_k; j++) {
            fputs(j ? ", " : "", f);
            fputs("{\"k\": ", f);
            report_json_number(f, k[j]);
            fputs(", ", f);
            json_rate(f, "tasks", r->safefast[j], r->tasks);
            fputc('}', f);
        }
        fputs("], \"selections\": [", f);
        for (size_t t = 0; t < p->n_tasks; t++) {
            size_t s = g[i].chosen[t];
            fputs(t ? ", " : "", f);
            if (s == SIZE_MAX) {
                fputs("null", f);
                continue;
            }
            fprintf(f, "{\"slot\": %lld, \"id\": ", p->slots[s].slot);
            report_json_string(f, l->records[p->slots[s].record].id);
            fputc('}', f);
        }
        fputs("]}", f);
    }
    fputs("\n  ],\n  \"contrasts\": ", f);
    if (!l->n_validators) {
        fputs("null\n}\n", f);
        return;
    }
    fputs("{\"validators\": [", f);
    for (size_t v = 0; v < l->n_validators; v++) {
        fputs(v ? ", " : "", f);
        fputs("{\"validator\": ", f);
        report_json_string(f, l->validators[v]);
        fputs(", \"g_pp\": ", f);
        report_json_number(f, gr[v][0]);
        fputs(", \"r_pp\": ", f);
        report_json_number(f, gr[v][1]);
        fputc('}', f);
    }
    fputs("], \"g_mean\": ", f);
    report_json_number(f, c->g_mean);
    fputs(", \"g_min\": ", f);
    report_json_number(f, c->g_min);
    fputs(", \"g_max\": ", f);
    report_json_number(f, c->g_max);
    fputs(", \"r_mean\": ", f);
    report_json_number(f, c->r_mean);
    fputs(", \"r_min\": ", f);
    report_json_number(f, c->r_min);
    fputs(", \"r_max\": ", f);
    report_json_number(f, c->r_max);
    fputs("}\n}\n", f);
}

/* "1,2": positive, finite thresholds, at most KVS_MAX_K. */
static int parse_k(const char *s, double *k, size_t *n)
{
    *n = 0;
    const char *p = s;
    for (;;) {
        char *end;
        double x = strtod(p, &end);
        if (end == p || !isfinite(x) || x <= 0 || *n == KVS_MAX_K || (*end && *end != ','))
            return -1;
        k[(*n)++] = x;
        if (!*end)
            return 0;
        p = end + 1;
    }
}

int cmd_gates(int argc, char **argv)
{
    static const struct option longopts[] = { { "decisions", required_argument, 0, 'D' },
                                               { "human", required_argument, 0, 'H' },
                                               { "k", required_argument, 0, 'k' },
                                               { "format", required_argument, 0, 'F' },
                                               { "help", no_argument, 0, 'h' },
                                               { 0, 0, 0, 0 } };
    const char *format = "md", *output = NULL, *human = NULL;
    const char **decisions = NULL;
    size_t n_decisions = 0, n_k = 2;
    double k[KVS_MAX_K] = { 1, 2 };
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "o:h", longopts, NULL)) != -1) {
        switch (c) {
        case 'D':
            decisions = kat_xrealloc(decisions, (n_decisions + 1) * sizeof *decisions);
            decisions[n_decisions++] = optarg;
            break;
        case 'H':
            if (human) {
                free(decisions);
                return cli_usage_error(gates_usage, "--human is given once (merge the label files: a second label of "
                                                    "a record is refused)");
            }
            human = optarg;
            break;
        case 'k':
            if (parse_k(optarg, k, &n_k) != 0) {
                free(decisions);
                return cli_usage_error(gates_usage, "--k takes up to %d positive numbers, comma-separated, not '%s'",
                                       KVS_MAX_K, optarg);
            }
            break;
        case 'F':
            if (strcmp(optarg, "md") && strcmp(optarg, "csv") && strcmp(optarg, "json")) {
                free(decisions);
                return cli_usage_error(gates_usage, "--format takes md, csv or json, not '%s'", optarg);
            }
            format = optarg;
            break;
        case 'o':
            output = optarg;
            break;
        case 'h':
            free(decisions);
            fputs(gates_usage, stdout);
            return KAUDIT_EXIT_OK;
        default:
            free(decisions);
            return cli_usage_error(gates_usage, "unknown option");
        }
    }
    if (optind != argc - 1) {
        free(decisions);
        return cli_usage_error(gates_usage, "gates takes one ledger");
    }
    const char *ledger = argv[optind];
    struct kvs_ledger l = { 0 };
    struct kvs_pool p = { 0 };
    char err[8192];
    int rc = kvs_ledger_read(&l, ledger, err, sizeof err);
    for (size_t i = 0; rc == 0 && i < n_decisions; i++)
        rc = kvs_decisions_read(&l, decisions[i], err, sizeof err);
    free(decisions);
    if (rc == 0)
        rc = kvs_pool_read(&p, &l, ledger, err, sizeof err);
    if (rc == 0 && human)
        rc = kvs_pool_labels_read(&p, human, err, sizeof err);
    if (rc == 0 && !p.n_tasks)
        rc = -1, snprintf(err, sizeof err, "%s: no records: the pool is empty", ledger);
    if (rc != 0) {
        kvs_pool_free(&p);
        kvs_ledger_free(&l);
        cli_error("%s", err);
        return KAUDIT_EXIT_ERROR;
    }
    /* S0 and S0-fast per weak validator, then the audit's four */
    size_t nv = l.n_validators, n_gates = 2 * nv + 4;
    struct gate_row *g = kat_xcalloc(n_gates, sizeof *g);
    for (size_t v = 0; v < nv; v++) {
        g[2 * v] = (struct gate_row){ "S0", { KVS_ELIGIBLE_WEAK, v, KVS_ORDER_FIRST }, { 0 }, NULL };
        g[2 * v + 1] = (struct gate_row){ "S0-fast", { KVS_ELIGIBLE_WEAK, v, KVS_ORDER_FASTEST }, { 0 }, NULL };
    }
    g[2 * nv] = (struct gate_row){ "S1-first", { KVS_ELIGIBLE_AUDIT, 0, KVS_ORDER_FIRST }, { 0 }, NULL };
    g[2 * nv + 1] = (struct gate_row){ "S1", { KVS_ELIGIBLE_AUDIT, 0, KVS_ORDER_FASTEST }, { 0 }, NULL };
    g[2 * nv + 2] = (struct gate_row){ "S_axis-first", { KVS_ELIGIBLE_AXES, 0, KVS_ORDER_FIRST }, { 0 }, NULL };
    g[2 * nv + 3] = (struct gate_row){ "S_axis", { KVS_ELIGIBLE_AXES, 0, KVS_ORDER_FASTEST }, { 0 }, NULL };
    for (size_t i = 0; i < n_gates; i++) {
        g[i].chosen = kat_xcalloc(p.n_tasks, sizeof *g[i].chosen);
        kvs_gate_run(&p, &g[i].gate, k, n_k, &g[i].r, g[i].chosen);
    }
    uint64_t (*u)[4] = kat_xcalloc(nv ? nv : 1, sizeof *u);
    double (*gr)[2] = kat_xcalloc(nv ? nv : 1, sizeof *gr);
    for (size_t v = 0; v < nv; v++) {
        u[v][KVS_U_WEAK_FIRST] = g[2 * v].r.unsafe;
        u[v][KVS_U_WEAK_FASTEST] = g[2 * v + 1].r.unsafe;
        u[v][KVS_U_AUDIT_FIRST] = g[2 * nv].r.unsafe;
        u[v][KVS_U_AUDIT_FASTEST] = g[2 * nv + 1].r.unsafe;
        gr[v][0] = kvs_contrast_gate(u[v], p.n_tasks);
        gr[v][1] = kvs_contrast_order(u[v], p.n_tasks);
    }
    struct kvs_contrasts contrasts;
    kvs_contrasts_average((const uint64_t(*)[4])u, nv, p.n_tasks, &contrasts);
    FILE *f = output ? fopen(output, "w") : stdout;
    int werr = !f;
    if (f) {
        if (!strcmp(format, "json"))
            print_json(f, &p, g, n_gates, k, n_k, &contrasts, (const double(*)[2])gr);
        else if (!strcmp(format, "csv"))
            print_csv(f, &p, g, n_gates, k, n_k, &contrasts, (const double(*)[2])gr);
        else
            print_md(f, &p, g, n_gates, k, n_k, &contrasts, (const double(*)[2])gr, human);
        werr = ferror(f) || (output && fclose(f) != 0);
    }
    for (size_t i = 0; i < n_gates; i++)
        free(g[i].chosen);
    free(g);
    free(u);
    free(gr);
    kvs_pool_free(&p);
    kvs_ledger_free(&l);
    if (werr) {
        cli_error("%s: cannot write", output ? output : "standard output");
        return KAUDIT_EXIT_ERROR;
    }
    return KAUDIT_EXIT_OK;
}
