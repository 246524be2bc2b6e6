/* labels_read.c - reading and checking a labels file (labels.h; docs/validators.md, "Human labels"). */
#define _GNU_SOURCE
#include "labels.h"
#include "toolbox.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static int cell_of(const char *s)
{
    if (!strcmp(s, "PASS"))
        return KVL_PASS;
    if (!strcmp(s, "FAIL"))
        return KVL_FAIL;
    if (!strcmp(s, "INCONCL") || !strcmp(s, "INCONCLUSIVE"))
        return KVL_INCONCL;
    return -1;
}

static int label_of(const char *s)
{
    for (int l = 0; l < KVL_LABELS; l++)
        if (!strcmp(s, kvl_label_names[l]))
            return l;
    return -1;
}

/* A non-negative integer that fits: JSON numbers are doubles. */
static int count_of(const cJSON *v, uint64_t *out)
{
    if (!cJSON_IsNumber(v) || !(v->valuedouble >= 0) || v->valuedouble > 9007199254740992.0 ||
        v->valuedouble != floor(v->valuedouble))
        return -1;
    *out = (uint64_t)v->valuedouble;
    return 0;
}

static ssize_t stratum_index(const struct kvl_design *d, const char *name)
{
    for (size_t h = 0; h < d->n_strata; h++)
        if (!strcmp(d->strata[h].name, name))
            return (ssize_t)h;
    return -1;
}

static ssize_t validator_index(const struct kvl_design *d, const char *name)
{
    for (size_t v = 0; v < d->n_validators; v++)
        if (!strcmp(d->validators[v], name))
            return (ssize_t)v;
    return -1;
}

/* {"PASS": n, "FAIL": n, "INCONCL": n}, missing keys 0. */
static int cells_of(const cJSON *o, uint64_t out[KVL_CELLS], const char *where, const char *what, char *err, size_t errlen)
{
    if (!cJSON_IsObject(o))
        return kat_fail(err, errlen, "%s: \"%s\" must be an object {\"PASS\": N, \"FAIL\": N, \"INCONCL\": N}", where, what);
    memset(out, 0, sizeof(uint64_t) * KVL_CELLS);
    int seen[KVL_CELLS] = { 0 };
    const cJSON *c;
    cJSON_ArrayForEach(c, o)
    {
        int j = cell_of(c->string);
        if (j < 0)
            return kat_fail(err, errlen, "%s: \"%s\" has key '%s'; the cells are PASS, FAIL and INCONCL", where, what,
                        c->string);
        /* cJSON keeps both of a repeated key: which count would be meant? */
        if (seen[j]++)
            return kat_fail(err, errlen, "%s: \"%s\" has key '%s' twice", where, what, c->string);
        if (count_of(c, &out[j]) != 0)
            return kat_fail(err, errlen, "%s: \"%s\".%s must be a non-negative integer", where, what, c->string);
    }
    return 0;
}

static int stratum_line(struct kvl_design *d, const cJSON *o, unsigned line, const char *where, char *err, size_t errlen)
{
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(o, "stratum");
    const cJSON *N = cJSON_GetObjectItemCaseSensitive(o, "N"), *n = cJSON_GetObjectItemCaseSensitive(o, "n");
    const cJSON *pi = cJSON_GetObjectItemCaseSensitive(o, "pi"), *cells = cJSON_GetObjectItemCaseSensitive(o, "cells");
    const cJSON *accepted = cJSON_GetObjectItemCaseSensitive(o, "accepted");
    if (!cJSON_IsString(name) || !name->valuestring[0])
        return kat_fail(err, errlen, "%s: no \"stratum\" string (a stratum line is {\"stratum\", \"N\", ...})", where);
    if (stratum_index(d, name->valuestring) >= 0)
        return kat_fail(err, errlen, "%s: stratum '%s' declared again", where, name->valuestring);
    struct kvl_stratum s = { 0 };
    s.line = line;
    s.n_declared = UINT64_MAX;
    s.pi = NAN;
    if (!N)
        return kat_fail(err, errlen, "%s: stratum '%s' has no \"N\" (its population size)", where, name->valuestring);
    if (count_of(N, &s.N) != 0 || s.N == 0 || s.N > 1000000000)
        return kat_fail(err, errlen, "%s: stratum '%s': \"N\" must be a positive integer (at most 10^9)", where,
                    name->valuestring);
    if (n && count_of(n, &s.n_declared) != 0)
        return kat_fail(err, errlen, "%s: stratum '%s': \"n\" must be a non-negative integer", where, name->valuestring);
    if (s.n_declared != UINT64_MAX && s.n_declared > s.N)
        return kat_fail(err, errlen, "%s: stratum '%s': n_h %llu > N_h %llu (more draws than units)", where,
                    name->valuestring, (unsigned long long)s.n_declared, (unsigned long long)s.N);
    if (pi) {
        if (!cJSON_IsNumber(pi) || !(pi->valuedouble > 0 && pi->valuedouble <= 1))
            return kat_fail(err, errlen, "%s: stratum '%s': \"pi\" must be a number in (0, 1]", where, name->valuestring);
        s.pi = pi->valuedouble;
    }
    if (cells) {
        if (cells_of(cells, s.cell_N, where, "cells", err, errlen) != 0)
            return -1;
        uint64_t sum = s.cell_N[KVL_PASS] + s.cell_N[KVL_FAIL] + s.cell_N[KVL_INCONCL];
        if (sum != s.N)
            return kat_fail(err, errlen, "%s: stratum '%s': its cells sum to %llu, not N_h %llu", where, name->valuestring,
                        (unsigned long long)sum, (unsigned long long)s.N);
        s.cells_given = 1;
    }
    if (accepted && !cJSON_IsObject(accepted))
        return kat_fail(err, errlen, "%s: \"accepted\" must be an object {validator: {\"PASS\": N, ...}}", where);
    size_t nv = d->n_validators + (size_t)cJSON_GetArraySize(accepted);
    s.accepted = calloc(nv ? nv : 1, sizeof *s.accepted);
    s.xa = calloc(nv ? nv : 1, sizeof *s.xa);
    s.name = strdup(name->valuestring);
    struct kvl_stratum *grown = realloc(d->strata, (d->n_strata + 1) * sizeof *grown);
    if (!s.accepted || !s.xa || !s.name || !grown) {
        free(s.accepted);
        free(s.xa);
        free(s.name);
        if (grown)
            d->strata = grown;
        return kat_fail(err, errlen, "%s: out of memory", where);
    }
    d->strata = grown;
    for (size_t v = 0; v < nv; v++)
        s.accepted[v][0] = UINT64_MAX;
    d->strata[d->n_strata++] = s;
    struct kvl_stratum *sp = &d->strata[d->n_strata - 1];
    const cJSON *a;
    cJSON_ArrayForEach(a, accepted)
    {
        ssize_t v = validator_index(d, a->string);
        if (v < 0) {
            if (d->n_strata > 1)
                return kat_fail(err, errlen, "%s: stratum '%s' gives accepted counts of validator '%s', which the strata "
                                         "before it do not (every stratum gives them, or none)",
                            where, sp->name, a->string);
            char **names = realloc(d->validators, (d->n_validators + 1) * sizeof *names);
            if (!names)
                return kat_fail(err, errlen, "%s: out of memory", where);
            d->validators = names;
            if (!(names[d->n_validators] = strdup(a->string)))
                return kat_fail(err, errlen, "%s: out of memory", where);
            v = (ssize_t)d->n_validators++;
        }
        if (sp->accepted[v][0] != UINT64_MAX)
            return kat_fail(err, errlen, "%s: validator '%s' twice in \"accepted\"", where, a->string);
        if (cells_of(a, sp->accepted[v], where, "accepted", err, errlen) != 0)
            return -1;
    }
    for (size_t v = 0; v < d->n_validators; v++)
        if (sp->accepted[v][0] == UINT64_MAX)
            return kat_fail(err, errlen, "%s: stratum '%s' gives no accepted counts of validator '%s' (every stratum "
                                     "gives them, or none)",
                        where, sp->name, d->validators[v]);
    return 0;
}

static int unit_line(struct kvl_design *d, const cJSON *o, unsigned line, const char *where,
                     const struct kvs_ledger *ledger, char *err, size_t errlen)
{
    const cJSON *id = cJSON_GetObjectItemCaseSensitive(o, "id"), *stratum = cJSON_GetObjectItemCaseSensitive(o, "stratum");
    const cJSON *label = cJSON_GetObjectItemCaseSensitive(o, "label"), *cert = cJSON_GetObjectItemCaseSensitive(o, "certificate");
    const cJSON *weak = cJSON_GetObjectItemCaseSensitive(o, "weak_decisions");
    if (!cJSON_IsString(id) || !id->valuestring[0])
        return kat_fail(err, errlen, "%s: \"id\" must be a non-empty string", where);
    for (size_t u = 0; u < d->n_units; u++)
        if (!strcmp(d->units[u].id, id->valuestring))
            return kat_fail(err, errlen, "%s: unit '%s' again (line %u has it)", where, id->valuestring, d->units[u].line);
    if (!cJSON_IsString(stratum))
        return kat_fail(err, errlen, "%s: unit '%s' has no \"stratum\" string", where, id->valuestring);
    ssize_t h = stratum_index(d, stratum->valuestring);
    if (h < 0)
        return kat_fail(err, errlen, "%s: unit '%s': stratum '%s' is not declared (its {\"stratum\", \"N\"} line comes "
                                 "before its units)",
                    where, id->valuestring, stratum->valuestring);
    int lab = cJSON_IsString(label) ? label_of(label->valuestring) : -1;
    if (lab < 0)
        return kat_fail(err, errlen, "%s: unit '%s': \"label\" must be defect, clean or unknown", where, id->valuestring);
    const struct kvs_record *rec = kvs_record_find(ledger, id->valuestring);
    int cell = -1;
    if (cert) {
        if (!cJSON_IsString(cert) || (cell = cell_of(cert->valuestring)) < 0)
            return kat_fail(err, errlen, "%s: unit '%s': \"certificate\" must be PASS, FAIL or INCONCL", where,
                        id->valuestring);
    }
    if (rec) {
        int from_ledger = rec->certificate == KA_PASS ? KVL_PASS : rec->certificate == KA_FAIL ? KVL_FAIL : KVL_INCONCL;
        if (cell >= 0 && cell != from_ledger)
            return kat_fail(err, errlen, "%s: unit '%s': certificate %s, but the ledger's record has %s", where,
                        id->valuestring, kvl_cell_names[cell], kvl_cell_names[from_ledger]);
        cell = from_ledger;
    }
    if (cell < 0)
        return kat_fail(err, errlen, "%s: unit '%s' has no \"certificate\" and no ledger record of its id", where,
                    id->valuestring);
    if (weak && !cJSON_IsObject(weak))
        return kat_fail(err, errlen, "%s: \"weak_decisions\" must be an object {validator: ACCEPT|REJECT}", where);
    struct kvl_unit u = { .stratum = (size_t)h, .cell = (enum kvl_cell)cell, .label = (enum kvl_label)lab, .line = line };
    u.decision = calloc(d->n_validators ? d->n_validators : 1, 1);
    u.id = strdup(id->valuestring);
    struct kvl_unit *grown = realloc(d->units, (d->n_units + 1) * sizeof *grown);
    if (!u.decision || !u.id || !grown) {
        free(u.decision);
        free(u.id);
        if (grown)
            d->units = grown;
        return kat_fail(err, errlen, "%s: out of memory", where);
    }
    d->units = grown;
    const cJSON *w;
    cJSON_ArrayForEach(w, weak)
    {
        ssize_t v = validator_index(d, w->string);
        int dec = cJSON_IsString(w) ? (!strcasecmp(w->valuestring, "ACCEPT")   ? KVS_ACCEPT
                                       : !strcasecmp(w->valuestring, "REJECT") ? KVS_REJECT
                                                                               : -1)
                                    : -1;
        if (dec < 0) {
            free(u.decision);
            free(u.id);
            return kat_fail(err, errlen, "%s: unit '%s': weak_decisions.%s must be ACCEPT or REJECT", where,
                        id->valuestring, w->string);
        }
        if (v >= 0) /* a validator without accepted counts has no false-accept strata: not used */
            u.decision[v] = (unsigned char)dec;
    }
    for (size_t v = 0; v < d->n_validators; v++) {
        if (u.decision[v] != KVS_NONE || !rec)
            continue;
        for (size_t lv = 0; lv < ledger->n_validators; lv++)
            if (!strcmp(ledger->validators[lv], d->validators[v]))
                u.decision[v] = rec->decision[lv];
    }
    for (size_t v = 0; v < d->n_validators; v++)
        if (u.decision[v] == KVS_NONE) {
            free(u.decision);
            free(u.id);
            return kat_fail(err, errlen, "%s: unit '%s' has no decision of validator '%s' (its stratum counts that "
                                     "validator's accepts)",
                        where, id->valuestring, d->validators[v]);
        }
    d->units[d->n_units++] = u;
    struct kvl_stratum *s = &d->strata[h];
    s->n++;
    s->x[cell][lab]++;
    for (size_t v = 0; v < d->n_validators; v++)
        if (u.decision[v] == KVS_ACCEPT)
            s->xa[v][cell][lab]++;
    return 0;
}

/* What only the whole file can tell: counted draws against the declared ones. */
static int check_design(struct kvl_design *d, char *err, size_t errlen)
{
    if (!d->n_strata)
        return kat_fail(err, errlen, "%s: no strata (lines {\"stratum\", \"N\", ...})", d->path);
    for (size_t h = 0; h < d->n_strata; h++) {
        struct kvl_stratum *s = &d->strata[h];
        const char *p = d->path;
        unsigned ln = s->line;
        if (s->n == 0)
            return kat_fail(err, errlen, "%s:%u: stratum '%s' has no labelled units (pi_h would be 0)", p, ln, s->name);
        if (s->n_declared != UINT64_MAX && s->n_declared != s->n)
            return kat_fail(err, errlen, "%s:%u: stratum '%s' declares n %llu but %llu units name it", p, ln, s->name,
                        (unsigned long long)s->n_declared, (unsigned long long)s->n);
        if (s->n > s->N)
            return kat_fail(err, errlen, "%s:%u: stratum '%s': n_h %llu > N_h %llu (more draws than units)", p, ln,
                        s->name, (unsigned long long)s->n, (unsigned long long)s->N);
        double ratio = (double)s->n / (double)s->N;
        if (isnan(s->pi))
            s->pi = ratio;
        else if (fabs(s->pi - ratio) > 5e-4)
            return kat_fail(err, errlen, "%s:%u: stratum '%s': pi %g disagrees with n_h/N_h = %llu/%llu = %.6f", p, ln,
                        s->name, s->pi, (unsigned long long)s->n, (unsigned long long)s->N, ratio);
        if (!s->cells_given) {
            int only = -1, several = 0;
            for (int j = 0; j < KVL_CELLS; j++)
                if (s->x[j][0] + s->x[j][1] + s->x[j][2]) {
                    several |= only >= 0;
                    only = j;
                }
            if (several)
                return kat_fail(err, errlen, "%s:%u: stratum '%s': its units have several certificates; give its "
                                         "\"cells\" (how many of its N_h units have each)",
                            p, ln, s->name);
            s->cell_N[only] = s->N;
        }
        for (int j = 0; j < KVL_CELLS; j++) {
            uint64_t nj = s->x[j][0] + s->x[j][1] + s->x[j][2];
            if (nj > s->cell_N[j])
                return kat_fail(err, errlen, "%s:%u: stratum '%s': %llu labelled units are %s but its cells have %llu", p,
                            ln, s->name, (unsigned long long)nj, kvl_cell_names[j], (unsigned long long)s->cell_N[j]);
            for (size_t v = 0; v < d->n_validators; v++) {
                uint64_t na = s->xa[v][j][0] + s->xa[v][j][1] + s->xa[v][j][2];
                if (s->accepted[v][j] > s->cell_N[j])
                    return kat_fail(err, errlen, "%s:%u: stratum '%s': validator '%s' accepts %llu %s units of %llu", p,
                                ln, s->name, d->validators[v], (unsigned long long)s->accepted[v][j], kvl_cell_names[j],
                                (unsigned long long)s->cell_N[j]);
                if (na > s->accepted[v][j])
                    return kat_fail(err, errlen, "%s:%u: stratum '%s': %llu labelled %s units accepted by '%s', but "
                                             "\"accepted\" counts %llu",
                                p, ln, s->name, (unsigned long long)na, kvl_cell_names[j], d->validators[v],
                                (unsigned long long)s->accepted[v][j]);
            }
        }
    }
    return 0;
}

struct labels_reader {
    struct kvl_design *d;
    const struct kvs_ledger *ledger;
};

/* A unit ({"id", ...}) or a stratum ({"stratum", "N", ...}). */
static int labels_line(void *ctx, const cJSON *o, const char *where, unsigned lineno, char *err, size_t errlen)
{
    struct labels_reader *r = ctx;
    if (cJSON_GetObjectItemCaseSensitive(o, "id"))
        return unit_line(r->d, o, lineno, where, r->ledger, err, errlen);
    if (cJSON_GetObjectItemCaseSensitive(o, "N") || cJSON_GetObjectItemCaseSensitive(o, "stratum"))
        return stratum_line(r->d, o, lineno, where, err, errlen);
    return kat_fail(err, errlen, "%s: neither a unit ({\"id\", \"stratum\", \"label\"}) nor a stratum ({\"stratum\", "
                             "\"N\"})", where);
}

int kvl_read(struct kvl_design *d, const char *path, const struct kvs_ledger *ledger, char *err, size_t errlen)
{
    memset(d, 0, sizeof *d);
    d->path = path;
    struct labels_reader r = { d, ledger };
    int rc = kvs_jsonl_each(path, "", labels_line, &r, err, errlen);
    if (rc == 0)
        rc = check_design(d, err, errlen);
    return rc;
}

void kvl_free(struct kvl_design *d)
{
    for (size_t h = 0; h < d->n_strata; h++) {
        free(d->strata[h].name);
        free(d->strata[h].accepted);
        free(d->strata[h].xa);
    }
    free(d->strata);
    for (size_t u = 0; u < d->n_units; u++) {
        free(d->units[u].id);
        free(d->units[u].decision);
    }
    free(d->units);
    for (size_t v = 0; v < d->n_validators; v++)
        free(d->validators[v]);
    free(d->validators);
    memset(d, 0, sizeof *d);
}
