/*
 * cmd_validators.c - `kaudit validators LEDGER.jsonl [--decisions FILE]...
 * [--format md|csv|json] [-o FILE]`: the weak validators' false-accept, miss
 * and false-reject rates over audited records, per corpus and pooled, with
 * their abstention bounds and outcome codes, and McNemar's exact test on
 * every pair's paired misses with Holm's correction (docs/validators.md).
 * The numbers are the validators library's (validators/); this file parses
 * and prints.
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
#include "plots.h"
#include "report_text.h"
#include "validator_stats.h"
#include "validators_labels.h"

static const char validators_usage[] =
    "usage: kaudit validators LEDGER.jsonl [--decisions FILE]... [--format md|csv|json] [-o FILE] [--plot DIR]\n"
    "\n"
    "Scores weak validators against the certificates of audited records.  LEDGER is a\n"
    "`kaudit audit --batch` ledger (or any JSONL of {id, certificate, corpus, axes,\n"
    "stress_signature, weak, weak_decisions}); each --decisions file adds decisions made\n"
    "elsewhere, lines {id, validator, decision: ACCEPT|REJECT}.  Per validator and corpus,\n"
    "and pooled: false accepts a/b (FAIL certificates among accepted, decided records)\n"
    "with the abstention bounds [a/(b+u), (a+u)/(b+u)] over u accepted INCONCL records,\n"
    "misses (accepted FAIL certificates / FAIL certificates), false rejects (rejected\n"
    "PASS / PASS), decidability and outcome codes C0-C3c; then McNemar's exact two-sided\n"
    "test on each pair's paired misses (b: misses of the second alone, c: of the first)\n"
    "with Holm's correction over all pairs.\n"
    "\n"
    "  --decisions FILE   more decisions (repeatable); a second decision on a record is refused\n"
    "  --format F         md (default), csv or json\n"
    "  -o FILE            write there instead of standard output\n"
    "  --plot DIR         also draw DIR/false_accepts.svg/.png and DIR/mcnemar.svg/.png\n"
    VALIDATORS_LABELS_USAGE;

struct out {
    FILE *f;
    const char *format;
};

static void fraction(FILE *f, uint64_t a, uint64_t b)
{
    if (b)
        fprintf(f, "%llu/%llu (%.1f%%)", (unsigned long long)a, (unsigned long long)b, 100.0 * (double)a / (double)b);
    else
        fprintf(f, "%llu/0 (-)", (unsigned long long)a);
}

static void bounds(FILE *f, const struct kvs_cell *c)
{
    double lo, hi;
    kvs_abstention_bounds(c->accepted_fail, c->accepted_decided, c->accepted_inconcl, &lo, &hi);
    if (isnan(lo))
        fputs("-", f);
    else
        fprintf(f, "[%.1f%%, %.1f%%]", 100 * lo, 100 * hi);
}

static void json_rate(FILE *f, const char *key, uint64_t a, uint64_t b)
{
    double r = kvs_rate(a, b);
    fprintf(f, "\"%s\": {\"count\": %llu, \"of\": %llu, \"rate\": ", key, (unsigned long long)a,
            (unsigned long long)b);
    if (isnan(r))
        fputs("null}", f);
    else
        fprintf(f, "%.17g}", r);
}

static void cell_row(const struct out *o, const char *validator, const char *corpus, const struct kvs_cell *c, int first)
{
    FILE *f = o->f;
    if (!strcmp(o->format, "json")) {
        fprintf(f, "%s\n    {\"validator\": ", first ? "" : ",");
        report_json_string(f, validator);
        fputs(", \"corpus\": ", f);
        report_json_string(f, corpus);
        fprintf(f, ", \"records\": %llu, ", (unsigned long long)c->records);
        json_rate(f, "decidability", c->decided, c->records);
        fputs(", ", f);
        json_rate(f, "false_accepts", c->accepted_fail, c->accepted_decided);
        double lo, hi;
        kvs_abstention_bounds(c->accepted_fail, c->accepted_decided, c->accepted_inconcl, &lo, &hi);
        fprintf(f, ", \"accepted_inconcl\": %llu, \"abstention_bounds\": ", (unsigned long long)c->accepted_inconcl);
        if (isnan(lo))
            fputs("null", f);
        else
            fprintf(f, "[%.17g, %.17g]", lo, hi);
        fputs(", ", f);
        json_rate(f, "misses", c->accepted_fail, c->fail);
        fputs(", ", f);
        json_rate(f, "false_rejects", c->rejected_pass, c->pass);
        fputs(", \"outcomes\": {", f);
        for (int i = 0; i < KVS_OUTCOMES; i++)
            fprintf(f, "%s\"%s\": %llu", i ? ", " : "", kvs_outcome_names[i], (unsigned long long)c->outcome[i]);
        fputs("}}", f);
        return;
    }
    if (!strcmp(o->format, "csv")) {
        report_csv_string(f, validator);
        fputc(',', f);
        report_csv_string(f, corpus);
        fprintf(f, ",%llu,%llu,%llu,%llu,%llu,%llu,%llu,%llu", (unsigned long long)c->records,
                (unsigned long long)c->decided, (unsigned long long)c->accepted_fail,
                (unsigned long long)c->accepted_decided, (unsigned long long)c->accepted_inconcl,
                (unsigned long long)c->fail, (unsigned long long)c->rejected_pass, (unsigned long long)c->pass);
        for (int i = 0; i < KVS_OUTCOMES; i++)
            fprintf(f, ",%llu", (unsigned long long)c->outcome[i]);
        fputc('\n', f);
        return;
    }
    fputs("| ", f);
    report_md_string(f, validator);
    fputs(" | ", f);
    report_md_string(f, corpus);
    fprintf(f, " | %llu | ", (unsigned long long)c->records);
    fraction(f, c->decided, c->records);
    fputs(" | ", f);
    fraction(f, c->accepted_fail, c->accepted_decided);
    fputs(" | ", f);
    bounds(f, c);
    fputs(" | ", f);
    fraction(f, c->accepted_fail, c->fail);
    fputs(" | ", f);
    fraction(f, c->rejected_pass, c->pass);
    fputs(" |", f);
    for (int i = 0; i < KVS_OUTCOMES; i++)
        fprintf(f, " %llu |", (unsigned long long)c->outcome[i]);
    fputc('\n', f);
}

static void print_rates(const struct out *o, const struct kvs_ledger *l)
{
    FILE *f = o->f;
    if (!strcmp(o->format, "json")) {
        fputs("  \"rates\": [", f);
    } else if (!strcmp(o->format, "csv")) {
        fputs("validator,corpus,records,decided,accepted_fail,accepted_decided,accepted_inconcl,fail,rejected_pass,pass",
              f);
        for (int i = 0; i < KVS_OUTCOMES; i++)
            fprintf(f, ",%s", kvs_outcome_names[i]);
        fputc('\n', f);
    } else {
        fprintf(f, "## False accepts, misses and false rejects\n\n%zu records, %zu validators, %zu corpora. False "
                   "accepts: FAIL certificates among accepted, decided records; bounds: the accepted INCONCL "
                   "records all PASS, then all FAIL; misses: accepted FAIL certificates over FAIL certificates; "
                   "false rejects: rejected PASS over PASS certificates. \"pooled\" is every corpus together "
                   "(Appendix B: the corpora weighted by their decided accepts).\n\n",
                l->n_records, l->n_validators, l->n_corpora);
        fputs("| validator | corpus | records | decided | false accepts | bounds | misses | false rejects |", f);
        for (int i = 0; i < KVS_OUTCOMES; i++)
            fprintf(f, " %s |", kvs_outcome_names[i]);
        fputs("\n| --- | --- | ---: | ---: | ---: | --- | ---: | ---: |", f);
        for (int i = 0; i < KVS_OUTCOMES; i++)
            fputs(" ---: |", f);
        fputc('\n', f);
    }
    int first = 1;
    for (size_t v = 0; v < l->n_validators; v++) {
        struct kvs_cell c;
        for (size_t k = 0; k < l->n_corpora; k++) {
            kvs_tally(l, v, k, &c);
            if (c.records) {
                cell_row(o, l->validators[v], l->corpora[k], &c, first);
                first = 0;
            }
        }
        kvs_tally(l, v, SIZE_MAX, &c);
        cell_row(o, l->validators[v], "pooled", &c, first);
        first = 0;
    }
    if (!strcmp(o->format, "json"))
        fputs("\n  ],\n", f);
    else
        fputc('\n', f);
}

static void print_pairs(const struct out *o, const struct kvs_ledger *l, const struct kvs_pair *p, size_t n)
{
    FILE *f = o->f;
    if (!strcmp(o->format, "json")) {
        fputs("  \"pairs\": [", f);
        for (size_t i = 0; i < n; i++) {
            fprintf(f, "%s\n    {\"first\": ", i ? "," : "");
            report_json_string(f, l->validators[p[i].first]);
            fputs(", \"second\": ", f);
            report_json_string(f, l->validators[p[i].second]);
            fprintf(f, ", \"fail_records\": %llu, \"b\": %llu, \"c\": %llu, \"p_exact\": %.17g, \"p_holm\": %.17g}",
                    (unsigned long long)p[i].records, (unsigned long long)p[i].b, (unsigned long long)p[i].c, p[i].p,
                    p[i].p_holm);
        }
        fputs("\n  ]\n", f);
        return;
    }
    if (!strcmp(o->format, "csv")) {
        fputs("\nfirst,second,fail_records,b,c,p_exact,p_holm\n", f);
        for (size_t i = 0; i < n; i++) {
            report_csv_string(f, l->validators[p[i].first]);
            fputc(',', f);
            report_csv_string(f, l->validators[p[i].second]);
            fprintf(f, ",%llu,%llu,%llu,%.3e,%.3e\n", (unsigned long long)p[i].records, (unsigned long long)p[i].b,
                    (unsigned long long)p[i].c, p[i].p, p[i].p_holm);
        }
        return;
    }
    fprintf(f, "## Paired misses\n\nOn the FAIL certificates both validators decided: b the misses of the second "
               "alone, c of the first alone; McNemar's exact two-sided p, and Holm's adjustment over the %zu "
               "pairs (shared source kernels make records dependent: read p as a screen, not a proof).\n\n",
            n);
    fputs("| first | second | FAIL records | b | c | p (exact) | p (Holm) |\n| --- | --- | ---: | ---: | ---: | ---: | ---: |\n",
          f);
    for (size_t i = 0; i < n; i++) {
        fputs("| ", f);
        report_md_string(f, l->validators[p[i].first]);
        fputs(" | ", f);
        report_md_string(f, l->validators[p[i].second]);
        fprintf(f, " | %llu | %llu | %llu | %.2e | %.2e |\n", (unsigned long long)p[i].records,
                (unsigned long long)p[i].b, (unsigned long long)p[i].c, p[i].p, p[i].p_holm);
    }
}

int cmd_validators(int argc, char **argv)
{
    static const struct option longopts[] = { { "decisions", required_argument, 0, 'D' },
                                               { "format", required_argument, 0, 'F' },
                                               { "plot", required_argument, 0, 'P' },
                                               { "help", no_argument, 0, 'h' },
                                               VALIDATORS_LABELS_LONGOPTS,
                                               { 0, 0, 0, 0 } };
    const char *format = "md", *output = NULL, *plot_dir = NULL;
    const char **decisions = NULL;
    size_t n_decisions = 0;
    struct validators_labels labels = VALIDATORS_LABELS_INIT;
    char labels_err[256];
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "o:h", longopts, NULL)) != -1) {
        switch (c) {
        case 'D':
            decisions = kat_xrealloc(decisions, (n_decisions + 1) * sizeof *decisions);
            decisions[n_decisions++] = optarg;
            break;
        case 'F':
            if (strcmp(optarg, "md") && strcmp(optarg, "csv") && strcmp(optarg, "json")) {
                free(decisions);
                return cli_usage_error(validators_usage, "--format takes md, csv or json, not '%s'", optarg);
            }
            format = optarg;
            break;
        case 'o':
            output = optarg;
            break;
        case 'P':
            plot_dir = optarg;
            break;
        case VL_OPT_LABELS:
        case VL_OPT_SEED:
        case VL_OPT_FA_SEED:
        case VL_OPT_REPLICATES:
            if (validators_labels_option(&labels, c, optarg, labels_err, sizeof labels_err) != 0) {
                free(decisions);
                return cli_usage_error(validators_usage, "%s", labels_err);
            }
            break;
        case 'h':
            free(decisions);
            fputs(validators_usage, stdout);
            return KAUDIT_EXIT_OK;
        default:
            free(decisions);
            return cli_usage_error(validators_usage, "unknown option");
        }
    }
    if (optind != argc - 1) {
        free(decisions);
        return cli_usage_error(validators_usage, "validators takes one ledger");
    }
    if (labels.tuned && !labels.path) {
        free(decisions);
        return cli_usage_error(validators_usage, "%s goes with --labels (it tunes the labels' intervals)", labels.tuned);
    }
    struct kvs_ledger l = { 0 };
    char err[8192];
    int rc = kvs_ledger_read(&l, argv[optind], err, sizeof err);
    for (size_t i = 0; rc == 0 && i < n_decisions; i++)
        rc = kvs_decisions_read(&l, decisions[i], err, sizeof err);
    free(decisions);
    if (rc != 0) {
        kvs_ledger_free(&l);
        cli_error("%s", err);
        return KAUDIT_EXIT_ERROR;
    }
    if (!l.n_validators) {
        kvs_ledger_free(&l);
        cli_error("%s: no validator decided any record (no \"weak\", \"weak_decisions\" or --decisions)", argv[optind]);
        return KAUDIT_EXIT_ERROR;
    }
    if (labels.path && validators_labels_run(&labels, &l, err, sizeof err) != 0) {
        validators_labels_free(&labels);
        kvs_ledger_free(&l);
        cli_error("%s", err);
        return KAUDIT_EXIT_ERROR;
    }
    struct kvs_pair *pairs = NULL;
    size_t n_pairs = 0;
    if (kvs_pairs(&l, &pairs, &n_pairs) != 0) {
        validators_labels_free(&labels);
        kvs_ledger_free(&l);
        cli_error("out of memory");
        return KAUDIT_EXIT_ERROR;
    }
    FILE *f = output ? fopen(output, "w") : stdout;
    if (!f) {
        free(pairs);
        validators_labels_free(&labels);
        kvs_ledger_free(&l);
        cli_error("%s: cannot write", output);
        return KAUDIT_EXIT_ERROR;
    }
    struct out o = { f, format };
    if (!strcmp(format, "json"))
        fprintf(f, "{\n  \"kaudit_validators\": 1,\n  \"records\": %zu,\n", l.n_records);
    if (labels.path && !strcmp(format, "json"))
        validators_labels_print(f, format, &labels);
    print_rates(&o, &l);
    print_pairs(&o, &l, pairs, n_pairs);
    if (labels.path && strcmp(format, "json"))
        validators_labels_print(f, format, &labels);
    validators_labels_free(&labels);
    if (!strcmp(format, "json"))
        fputs("}\n", f);
    int werr = ferror(f) || (output && fclose(f) != 0);
    int plot_rc = plot_dir ? kvs_plot_write(&l, pairs, n_pairs, plot_dir, err, sizeof err) : 0;
    free(pairs);
    kvs_ledger_free(&l);
    if (werr) {
        cli_error("%s: write error", output ? output : "standard output");
        return KAUDIT_EXIT_ERROR;
    }
    if (plot_rc != 0) {
        cli_error("%s", err);
        return KAUDIT_EXIT_ERROR;
    }
    return KAUDIT_EXIT_OK;
}
