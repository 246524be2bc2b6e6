/*
 * cmd_validators_labels.c - the --labels part of `kaudit validators`
 * (validators_labels.h): parses its options, calls validators/labels.c, and
 * prints.  The estimators and the completion live there.
 */
#include "validators_labels.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "report_text.h"
#include "toolbox.h"

static int number(const char *arg, unsigned long max, unsigned long *out)
{
    char *end;
    errno = 0;
    if (!arg[0] || arg[0] == '-')
        return -1;
    unsigned long long v = strtoull(arg, &end, 10);
    if (errno || *end || v > max)
        return -1;
    *out = (unsigned long)v;
    return 0;
}

int validators_labels_option(struct validators_labels *o, int opt, const char *arg, char *err, size_t errlen)
{
    unsigned long v;
    switch (opt) {
    case VL_OPT_LABELS:
        if (o->path)
            return kat_fail(err, errlen, "--labels is given once");
        o->path = arg;
        return 0;
    case VL_OPT_SEED:
    case VL_OPT_FA_SEED:
        if (number(arg, 0xffffffffUL, &v) != 0)
            return kat_fail(err, errlen, "%s takes an integer in [0, 2^32), not '%s'",
                        opt == VL_OPT_SEED ? "--seed" : "--fa-seed", arg);
        *(opt == VL_OPT_SEED ? &o->seed : &o->fa_seed) = v;
        if (!o->tuned)
            o->tuned = opt == VL_OPT_SEED ? "--seed" : "--fa-seed";
        return 0;
    case VL_OPT_REPLICATES:
        if (number(arg, 1000000UL, &v) != 0 || v < 1)
            return kat_fail(err, errlen, "--replicates takes an integer in [1, 10^6], not '%s'", arg);
        o->replicates = (unsigned)v;
        if (!o->tuned)
            o->tuned = "--replicates";
        return 0;
    }
    return kat_fail(err, errlen, "unknown option");
}

int validators_labels_run(struct validators_labels *o, const struct kvs_ledger *l, char *err, size_t errlen)
{
    if (kvl_read(&o->design, o->path, l, err, errlen) != 0)
        return -1;
    if (kvl_validity_estimates(&o->design, o->replicates, o->seed, o->validity) != 0)
        return kat_fail(err, errlen, "out of memory");
    size_t nv = o->design.n_validators;
    o->fa = calloc(nv ? nv : 1, sizeof *o->fa);
    if (!o->fa)
        return kat_fail(err, errlen, "out of memory");
    for (size_t v = 0; v < nv; v++)
        if (kvl_false_accept_estimates(&o->design, v, o->replicates, o->fa_seed, o->fa[v]) != 0)
            return kat_fail(err, errlen, "out of memory");
    return 0;
}

void validators_labels_free(struct validators_labels *o)
{
    kvl_free(&o->design);
    free(o->fa);
    o->fa = NULL;
}

static const char *const validity_titles[KVL_VALIDITY] = { "sensitivity", "specificity", "PPV", "NPV",
                                                           "unknown labels", "INCONCL defect" };
static const char *const fa_titles[KVL_FA] = { "decided", "all accepted, unknowns clean",
                                               "all accepted, unknowns defective" };

static void json_estimate(FILE *f, const struct kvl_estimate *e)
{
    fputs("{\"estimate\": ", f);
    report_json_number(f, e->estimate);
    fputs(", \"interval\": [", f);
    report_json_number(f, e->low);
    fputs(", ", f);
    report_json_number(f, e->high);
    fprintf(f, "], \"replicates_defined\": %u}", e->defined);
}

/* Proportions as 0.964, shares (unknowns, INCONCL defect) as 3.9%, like Table 8. */
static void md_estimate(FILE *f, const struct kvl_estimate *e, int percent)
{
    if (isnan(e->estimate))
        fputs("- | ", f);
    else if (percent)
        fprintf(f, "%.1f%% | ", 100 * e->estimate);
    else
        fprintf(f, "%.3f | ", e->estimate);
    if (isnan(e->low))
        fputs("-", f);
    else if (percent)
        fprintf(f, "[%.1f%%, %.1f%%]", 100 * e->low, 100 * e->high);
    else
        fprintf(f, "[%.3f, %.3f]", e->low, e->high);
}

/* CSV: an undefined value is an empty field. */
static void csv_values(FILE *f, const struct kvl_estimate *e)
{
    const double v[3] = { e->estimate, e->low, e->high };
    for (int i = 0; i < 3; i++)
        if (isnan(v[i]))
            fputc(',', f);
        else
            fprintf(f, ",%.6f", v[i]);
    fprintf(f, ",%u\n", e->defined);
}

void validators_labels_print(FILE *f, const char *format, const struct validators_labels *o)
{
    const struct kvl_design *d = &o->design;
    uint64_t cells[KVL_CELLS][KVL_LABELS], population = 0;
    kvl_sample_cells(d, cells);
    for (size_t h = 0; h < d->n_strata; h++)
        population += d->strata[h].N;
    if (!strcmp(format, "json")) {
        fputs("  \"labels\": {\"file\": ", f);
        report_json_string(f, o->path);
        fprintf(f, ", \"units\": %zu, \"strata\": %zu, \"population\": %llu, \"replicates\": %u, \"seed\": %lu, "
                   "\"fa_seed\": %lu,\n    \"sample_cells\": {",
                d->n_units, d->n_strata, (unsigned long long)population, o->replicates, o->seed, o->fa_seed);
        for (int j = 0; j < KVL_CELLS; j++)
            fprintf(f, "%s\"%s\": {\"defect\": %llu, \"clean\": %llu, \"unknown\": %llu}", j ? ", " : "",
                    kvl_cell_names[j], (unsigned long long)cells[j][0], (unsigned long long)cells[j][1],
                    (unsigned long long)cells[j][2]);
        fputs("},\n    \"agreement\": {", f);
        for (int m = 0; m < KVL_VALIDITY; m++) {
            fprintf(f, "%s\n      \"%s\": ", m ? "," : "", kvl_validity_names[m]);
            json_estimate(f, &o->validity[m]);
        }
        fputs("\n    },\n    \"false_accepts\": [", f);
        for (size_t v = 0; v < d->n_validators; v++) {
            fprintf(f, "%s\n      {\"validator\": ", v ? "," : "");
            report_json_string(f, d->validators[v]);
            for (int m = 0; m < KVL_FA; m++) {
                fprintf(f, ", \"%s\": ", kvl_fa_names[m]);
                json_estimate(f, &o->fa[v][m]);
            }
            fputc('}', f);
        }
        fputs("\n    ]\n  },\n", f);
        return;
    }
    if (!strcmp(format, "csv")) {
        fputs("\nmetric,validator,estimate,low,high,replicates_defined\n", f);
        for (int m = 0; m < KVL_VALIDITY; m++) {
            const struct kvl_estimate *e = &o->validity[m];
            fprintf(f, "%s,", kvl_validity_names[m]);
            csv_values(f, e);
        }
        for (size_t v = 0; v < d->n_validators; v++)
            for (int m = 0; m < KVL_FA; m++) {
                const struct kvl_estimate *e = &o->fa[v][m];
                fprintf(f, "false_accepts_%s,\"", kvl_fa_names[m]);
                for (const char *s = d->validators[v]; *s; s++)
                    fputs(*s == '"' ? "\"\"" : (char[2]){ *s, 0 }, f);
                fputc('"', f);
                csv_values(f, e);
            }
        return;
    }
    fprintf(f, "\n## Agreement with human labels\n\n%zu labelled units in %zu strata (population %llu), from %s. "
               "Estimates weight each unit by 1/pi_h; 95%% posterior intervals: quantiles over %u populations "
               "completed by the stratified Jeffreys-Dirichlet model (seed %lu). FAIL is audit-positive, defect "
               "reference-positive; sensitivity, specificity, PPV and NPV use the human-known units with a PASS or "
               "FAIL certificate; unknown labels (share of all units) and the INCONCL cell (its defect share, "
               "unknowns in the denominator) are reported apart.\n\n",
            d->n_units, d->n_strata, (unsigned long long)population, o->path, o->replicates, o->seed);
    fputs("| certificate | defect | clean | unknown |\n| --- | ---: | ---: | ---: |\n", f);
    for (int j = 0; j < KVL_CELLS; j++)
        fprintf(f, "| %s | %llu | %llu | %llu |\n", kvl_cell_names[j], (unsigned long long)cells[j][0],
                (unsigned long long)cells[j][1], (unsigned long long)cells[j][2]);
    fputs("\n| metric | estimate | 95% interval |\n| --- | ---: | --- |\n", f);
    for (int m = 0; m < KVL_VALIDITY; m++) {
        fprintf(f, "| %s | ", validity_titles[m]);
        md_estimate(f, &o->validity[m], m >= KVL_UNKNOWN_SHARE);
        fputs(" |\n", f);
    }
    if (!d->n_validators)
        return;
    fprintf(f, "\n## Human-referenced false accepts\n\nDefect share of each validator's accepted units (the strata "
               "crossed with acceptance; seed %lu): decided, over the human-known PASS or FAIL certificates; all "
               "accepted, with the unknown labels clean, then defective.\n\n| validator |",
            o->fa_seed);
    for (int m = 0; m < KVL_FA; m++)
        fprintf(f, " %s | 95%% interval |", fa_titles[m]);
    fputs("\n| --- | ---: | --- | ---: | --- | ---: | --- |\n", f);
    for (size_t v = 0; v < d->n_validators; v++) {
        fputs("| ", f);
        report_md_string(f, d->validators[v]);
        for (int m = 0; m < KVL_FA; m++) {
            fputs(" | ", f);
            md_estimate(f, &o->fa[v][m], 1);
        }
        fputs(" |\n", f);
    }
}
