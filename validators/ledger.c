/* ledger.c - reading ledgers and decisions, tallies and pairs (ledger.h). */
#define _GNU_SOURCE
#include "ledger.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <xxhash.h>

#include "validator_stats.h"
#include "toolbox.h"

const char *const kvs_outcome_names[KVS_OUTCOMES] = { "C0", "C1", "C2", "C3a", "C3b", "C3c", "INCONCL" };

static ssize_t name_index(char ***names, size_t *n, const char *name, int add)
{
    for (size_t i = 0; i < *n; i++)
        if (!strcmp((*names)[i], name))
            return (ssize_t)i;
    if (!add)
        return -1;
    char **grown = realloc(*names, (*n + 1) * sizeof *grown);
    char *copy = strdup(name);
    if (!grown || !copy) {
        free(copy);
        if (grown)
            *names = grown;
        return -2;
    }
    *names = grown;
    grown[*n] = copy;
    return (ssize_t)(*n)++;
}

/* A validator's column, made on first use (every record's decisions grow with it). */
static ssize_t validator_index(struct kvs_ledger *l, const char *name)
{
    ssize_t v = name_index(&l->validators, &l->n_validators, name, 0);
    if (v >= 0)
        return v;
    size_t before = l->n_validators;
    v = name_index(&l->validators, &l->n_validators, name, 1);
    if (v < 0)
        return v;
    for (size_t r = 0; r < l->n_records; r++) {
        unsigned char *d = realloc(l->records[r].decision, l->n_validators);
        if (!d)
            return -2;
        memset(d + before, KVS_NONE, l->n_validators - before);
        l->records[r].decision = d;
    }
    return v;
}

static int parse_decision(const cJSON *v)
{
    if (!cJSON_IsString(v))
        return -1;
    return !strcasecmp(v->valuestring, "ACCEPT") ? KVS_ACCEPT : !strcasecmp(v->valuestring, "REJECT") ? KVS_REJECT : -1;
}

static int parse_verdict(const char *s, enum ka_verdict *v)
{
    if (!strcmp(s, "PASS"))
        *v = KA_PASS;
    else if (!strcmp(s, "FAIL"))
        *v = KA_FAIL;
    else if (!strcmp(s, "INCONCL") || !strcmp(s, "INCONCLUSIVE"))
        *v = KA_INCONCLUSIVE;
    else if (!strcmp(s, "UNSUPPORTED"))
        *v = KA_UNSUPPORTED;
    else
        return -1;
    return 0;
}

static uint64_t id_hash(const char *id)
{
    return XXH3_64bits(id, strlen(id));
}

/* Through the hash (a ledger and its decisions look up every line's id); a
 * second id of the same hash is not in the map and is found by a scan. */
static ssize_t record_index(const struct kvs_ledger *l, const char *id)
{
    const uint64_t *slot = kat_u64map_find(&l->by_id, id_hash(id));
    if (!slot)
        return -1;
    if (!strcmp(l->records[*slot].id, id))
        return (ssize_t)*slot;
    for (size_t i = 0; i < l->n_records; i++)
        if (!strcmp(l->records[i].id, id))
            return (ssize_t)i;
    return -1;
}

const struct kvs_record *kvs_record_find(const struct kvs_ledger *l, const char *id)
{
    ssize_t r = l ? record_index(l, id) : -1;
    return r >= 0 ? &l->records[r] : NULL;
}

static int set_decision(struct kvs_ledger *l, size_t r, const char *validator, int decision, const char *where,
                        char *err, size_t errlen)
{
    ssize_t v = validator_index(l, validator);
    if (v < 0)
        return kat_fail(err, errlen, "%s: out of memory", where);
    unsigned char *d = &l->records[r].decision[v];
    if (*d != KVS_NONE)
        return kat_fail(err, errlen, "%s: a second decision of validator '%s' on record '%s' (refused: which one counts?)",
                    where, validator, l->records[r].id);
    *d = (unsigned char)decision;
    return 0;
}

cJSON *kvs_json_line(const char *s, int *trailing)
{
    const char *end = NULL;
    cJSON *o = cJSON_ParseWithOpts(s, &end, 0);
    *trailing = 0;
    if (o && end && end[strspn(end, " \t\r\n")]) {
        cJSON_Delete(o);
        *trailing = 1;
        return NULL;
    }
    return o;
}

int kvs_jsonl_each(const char *path, const char *incomplete_hint,
                   int (*each)(void *, const cJSON *, const char *, unsigned, char *, size_t), void *ctx,
                   char *err, size_t errlen)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return kat_fail(err, errlen, "%s: %s", path, strerror(errno));
    char *line = NULL, where[4200];
    size_t cap = 0;
    ssize_t len;
    unsigned lineno = 0;
    int rc = 0;
    while (rc == 0 && (len = getline(&line, &cap, f)) >= 0) {
        lineno++;
        snprintf(where, sizeof where, "%s:%u", path, lineno);
        if (len == 0 || line[len - 1] != '\n') {
            rc = kat_fail(err, errlen, "%s: the last line is incomplete (no newline)%s", where, incomplete_hint);
            break;
        }
        char *s = line;
        while (*s == ' ' || *s == '\t')
            s++;
        if (*s == '\n' || *s == '\r' || *s == '#')
            continue;
        int trailing;
        cJSON *o = kvs_json_line(s, &trailing);
        if (trailing)
            rc = kat_fail(err, errlen, "%s: more than one JSON value on the line (two records run together?)", where);
        else if (!cJSON_IsObject(o))
            rc = kat_fail(err, errlen, "%s: not a JSON object", where);
        else
            rc = each(ctx, o, where, lineno, err, errlen);
        cJSON_Delete(o);
    }
    free(line);
    if (rc == 0 && ferror(f))
        rc = kat_fail(err, errlen, "%s: read error", path);
    fclose(f);
    return rc;
}

/* What a ledger's incomplete last line means. */
static const char ledger_incomplete[] = ": a batch still writing, or killed mid-line; finish or rerun it first";

static int ledger_line(void *ctx, const cJSON *o, const char *where, unsigned lineno, char *err, size_t errlen)
{
    struct kvs_ledger *l = ctx;
    (void)lineno;
    const cJSON *id = cJSON_GetObjectItemCaseSensitive(o, "id"), *cert = cJSON_GetObjectItemCaseSensitive(o, "certificate");
    const cJSON *corpus = cJSON_GetObjectItemCaseSensitive(o, "corpus");
    if (!cJSON_IsString(id) || !id->valuestring[0])
        return kat_fail(err, errlen, "%s: no \"id\" string", where);
    if (record_index(l, id->valuestring) >= 0)
        return kat_fail(err, errlen, "%s: id '%s' again (a ledger holds each record once)", where, id->valuestring);
    struct kvs_record rec = { 0 };
    if (!cJSON_IsString(cert) || parse_verdict(cert->valuestring, &rec.certificate) != 0 ||
        rec.certificate == KA_UNSUPPORTED)
        return kat_fail(err, errlen, "%s: \"certificate\" must be PASS, FAIL or INCONCL", where);
    if (corpus && !cJSON_IsString(corpus))
        return kat_fail(err, errlen, "%s: \"corpus\" must be a string", where);
    const cJSON *axes = cJSON_GetObjectItemCaseSensitive(o, "axes");
    for (int a = 0; a < KA_AXIS_COUNT; a++) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(axes, ka_axis_name(a));
        rec.axis[a] = KA_UNSUPPORTED;
        if (v && (!cJSON_IsString(v) || parse_verdict(v->valuestring, &rec.axis[a]) != 0))
            return kat_fail(err, errlen, "%s: axes.%s must be PASS, FAIL, INCONCLUSIVE or UNSUPPORTED", where,
                        ka_axis_name(a));
    }
    const cJSON *sig = cJSON_GetObjectItemCaseSensitive(o, "stress_signature");
    if (sig && !cJSON_IsBool(sig))
        return kat_fail(err, errlen, "%s: \"stress_signature\" must be true or false", where);
    rec.stress_signature = cJSON_IsTrue(sig);
    ssize_t ci = name_index(&l->corpora, &l->n_corpora, corpus ? corpus->valuestring : "default", 1);
    if (ci < 0)
        return kat_fail(err, errlen, "%s: out of memory", where);
    rec.corpus_index = (size_t)ci;
    rec.id = strdup(id->valuestring);
    rec.corpus = strdup(l->corpora[ci]);
    rec.decision = calloc(l->n_validators ? l->n_validators : 1, 1);
    if (l->n_records == l->records_alloc) {
        size_t alloc = l->records_alloc ? 2 * l->records_alloc : 64;
        struct kvs_record *grown = realloc(l->records, alloc * sizeof *grown);
        if (grown) {
            l->records = grown;
            l->records_alloc = alloc;
        }
    }
    int fresh = 0;
    uint64_t *slot = rec.id ? kat_u64map_get(&l->by_id, id_hash(rec.id), &fresh) : NULL;
    if (!rec.id || !rec.corpus || !rec.decision || !slot || l->n_records == l->records_alloc) {
        free(rec.id);
        free(rec.corpus);
        free(rec.decision);
        return kat_fail(err, errlen, "%s: out of memory", where);
    }
    size_t r = l->n_records++;
    l->records[r] = rec;
    if (fresh)
        *slot = r;
    const cJSON *weak = cJSON_GetObjectItemCaseSensitive(o, "weak");
    if (weak) {
        int d = parse_decision(weak);
        if (d < 0)
            return kat_fail(err, errlen, "%s: \"weak\" must be ACCEPT or REJECT", where);
        if (set_decision(l, r, "weak", d, where, err, errlen) != 0)
            return -1;
    }
    const cJSON *more = cJSON_GetObjectItemCaseSensitive(o, "weak_decisions"), *w;
    if (more && !cJSON_IsObject(more))
        return kat_fail(err, errlen, "%s: \"weak_decisions\" must be an object of validator: ACCEPT|REJECT", where);
    cJSON_ArrayForEach(w, more)
    {
        int d = parse_decision(w);
        if (d < 0)
            return kat_fail(err, errlen, "%s: weak_decisions.%s must be ACCEPT or REJECT", where, w->string);
        if (set_decision(l, r, w->string, d, where, err, errlen) != 0)
            return -1;
    }
    return 0;
}

static int decision_line(void *ctx, const cJSON *o, const char *where, unsigned lineno, char *err, size_t errlen)
{
    struct kvs_ledger *l = ctx;
    (void)lineno;
    const cJSON *id = cJSON_GetObjectItemCaseSensitive(o, "id"), *v = cJSON_GetObjectItemCaseSensitive(o, "validator");
    int d = parse_decision(cJSON_GetObjectItemCaseSensitive(o, "decision"));
    if (!cJSON_IsString(id) || !cJSON_IsString(v) || !v->valuestring[0] || d < 0)
        return kat_fail(err, errlen, "%s: a decision line is {\"id\", \"validator\", \"decision\": ACCEPT|REJECT}", where);
    ssize_t r = record_index(l, id->valuestring);
    if (r < 0)
        return kat_fail(err, errlen, "%s: record '%s' is not in the ledger", where, id->valuestring);
    return set_decision(l, (size_t)r, v->valuestring, d, where, err, errlen);
}

int kvs_ledger_read(struct kvs_ledger *l, const char *path, char *err, size_t errlen)
{
    return kvs_jsonl_each(path, ledger_incomplete, ledger_line, l, err, errlen);
}

int kvs_decisions_read(struct kvs_ledger *l, const char *path, char *err, size_t errlen)
{
    return kvs_jsonl_each(path, ledger_incomplete, decision_line, l, err, errlen);
}

void kvs_ledger_free(struct kvs_ledger *l)
{
    for (size_t i = 0; i < l->n_records; i++) {
        free(l->records[i].id);
        free(l->records[i].corpus);
        free(l->records[i].decision);
    }
    for (size_t i = 0; i < l->n_validators; i++)
        free(l->validators[i]);
    for (size_t i = 0; i < l->n_corpora; i++)
        free(l->corpora[i]);
    free(l->records);
    free(l->validators);
    free(l->corpora);
    kat_u64map_free(&l->by_id);
    memset(l, 0, sizeof *l);
}

static int outcome_index(const char *code)
{
    for (int i = 0; i < KVS_OUTCOMES; i++)
        if (!strcmp(kvs_outcome_names[i], code))
            return i;
    return KVS_INCONCL;
}

void kvs_tally(const struct kvs_ledger *l, size_t validator, size_t corpus, struct kvs_cell *c)
{
    memset(c, 0, sizeof *c);
    for (size_t i = 0; i < l->n_records; i++) {
        const struct kvs_record *r = &l->records[i];
        int d = validator < l->n_validators ? r->decision[validator] : KVS_NONE;
        if (d == KVS_NONE || (corpus != SIZE_MAX && r->corpus_index != corpus))
            continue;
        c->records++;
        int decided = r->certificate == KA_PASS || r->certificate == KA_FAIL;
        c->decided += decided;
        c->fail += r->certificate == KA_FAIL;
        c->pass += r->certificate == KA_PASS;
        if (d == KVS_ACCEPT) {
            c->accepted_decided += decided;
            c->accepted_fail += r->certificate == KA_FAIL;
            c->accepted_inconcl += !decided;
        } else {
            c->rejected_pass += r->certificate == KA_PASS;
        }
        if (r->certificate == KA_PASS && d == KVS_REJECT)
            continue; /* a false reject, counted apart: C0 is a certified record the validator accepts */
        const char *code = ka_outcome_code(r->certificate, d == KVS_ACCEPT ? KA_WEAK_ACCEPT : KA_WEAK_REJECT,
                                           r->axis[KA_AXIS_IMPLEMENTATION], r->axis[KA_AXIS_MEASUREMENT],
                                           r->stress_signature, NULL);
        c->outcome[outcome_index(code)]++;
    }
}

int kvs_pairs(const struct kvs_ledger *l, struct kvs_pair **pairs, size_t *n)
{
    size_t v = l->n_validators, count = v > 1 ? v * (v - 1) / 2 : 0, k = 0;
    *pairs = NULL;
    *n = 0;
    if (!count)
        return 0;
    struct kvs_pair *p = calloc(count, sizeof *p);
    double *raw = malloc(count * sizeof *raw), *adj = malloc(count * sizeof *adj);
    if (!p || !raw || !adj) {
        free(p);
        free(raw);
        free(adj);
        return -1;
    }
    for (size_t i = 0; i < v; i++)
        for (size_t j = i + 1; j < v; j++, k++) {
            p[k].first = i;
            p[k].second = j;
            for (size_t r = 0; r < l->n_records; r++) {
                const struct kvs_record *rec = &l->records[r];
                if (rec->certificate != KA_FAIL || rec->decision[i] == KVS_NONE || rec->decision[j] == KVS_NONE)
                    continue;
                p[k].records++;
                int first_miss = rec->decision[i] == KVS_ACCEPT, second_miss = rec->decision[j] == KVS_ACCEPT;
                p[k].b += second_miss && !first_miss;
                p[k].c += first_miss && !second_miss;
            }
            raw[k] = p[k].p = kvs_mcnemar_exact(p[k].b, p[k].c);
        }
    if (kvs_holm(raw, count, adj) != 0) {
        free(p);
        free(raw);
        free(adj);
        return -1;
    }
    for (k = 0; k < count; k++)
        p[k].p_holm = adj[k];
    free(raw);
    free(adj);
    *pairs = p;
    *n = count;
    return 0;
}
