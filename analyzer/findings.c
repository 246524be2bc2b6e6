/*
 * findings.c - the lines of evidence behind the verdicts (struct ka_finding,
 * analysis.h).  Up to KA_FINDINGS_KEPT_PER_CODE of each code are kept: the
 * JSON report lists them all, with their structured fields; the text report
 * shows the first few of each code and summarizes the rest (report.c).  Past
 * the bound a finding is only counted, and one 'findings-not-kept' finding
 * says how many of its code were dropped.  The per-code counts, of all of
 * them, are what the verdict rules read (ka_code_seen).
 */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis_internal.h"

/* A new, zeroed finding at the end of the list; NULL when out of memory. */
static struct ka_finding *append(struct ka_findings *fs, enum ka_axis axis, enum ka_finding_kind kind, const char *code)
{
    struct ka_analysis *a = fs->a;
    if (GROW(a->findings, a->n_findings, fs->cap_findings))
        return NULL;
    struct ka_finding *f = &a->findings[a->n_findings++];
    memset(f, 0, sizeof *f);
    f->axis = axis;
    f->kind = kind;
    snprintf(f->code, sizeof f->code, "%s", code);
    return f;
}

struct ka_finding *ka_add_finding(struct ka_findings *fs, enum ka_axis axis, enum ka_finding_kind kind,
                                  const char *code, const char *process, uint64_t time_ns, const char *fmt, ...)
{
    struct ka_code_count *cc = NULL;
    for (size_t i = 0; i < fs->n_codes; i++)
        if (!strcmp(fs->codes[i].code, code))
            cc = &fs->codes[i];
    if (!cc) {
        if (GROW(fs->codes, fs->n_codes, fs->cap_codes))
            return NULL;
        cc = &fs->codes[fs->n_codes++];
        memset(cc, 0, sizeof *cc);
        snprintf(cc->code, sizeof cc->code, "%s", code);
    }
    cc->seen++;
    struct ka_analysis *a = fs->a;
    if (cc->seen > KA_FINDINGS_KEPT_PER_CODE) {
        if (cc->summary)
            return NULL;
        /* The first one not kept: its place goes to the summary (text and counts at ka_findings_finish). */
        if (append(fs, axis, KA_FINDING_SIGNAL, "findings-not-kept"))
            cc->summary = a->n_findings;
        return NULL;
    }
    struct ka_finding *f = append(fs, axis, kind, code);
    if (!f)
        return NULL;
    f->process = process ? strdup(process) : NULL;
    f->time_ns = time_ns;
    va_list ap;
    va_start(ap, fmt);
    if (vasprintf(&f->text, fmt, ap) < 0)
        f->text = NULL;
    va_end(ap);
    return f;
}

static struct ka_field *new_field(struct ka_finding *x, const char *key, enum ka_field_type type)
{
    if (!x)
        return NULL;
    struct ka_field *grown = realloc(x->fields, (x->n_fields + 1) * sizeof *grown);
    if (!grown)
        return NULL;
    x->fields = grown;
    struct ka_field *f = &x->fields[x->n_fields++];
    memset(f, 0, sizeof *f);
    snprintf(f->key, sizeof f->key, "%s", key);
    f->type = type;
    return f;
}

void ka_field_str(struct ka_finding *x, const char *key, const char *value)
{
    char *copy = strdup(value ? value : "");
    if (!copy)
        return;
    struct ka_field *f = new_field(x, key, KA_FIELD_STRING);
    if (f)
        f->s = copy;
    else
        free(copy);
}

void ka_field_u64(struct ka_finding *x, const char *key, uint64_t value)
{
    struct ka_field *f = new_field(x, key, KA_FIELD_UINT);
    if (f)
        f->u = value;
}

void ka_field_num(struct ka_finding *x, const char *key, double value)
{
    struct ka_field *f = new_field(x, key, KA_FIELD_NUMBER);
    if (f)
        f->d = value;
}

unsigned ka_code_seen(const struct ka_findings *fs, const char *code)
{
    for (size_t i = 0; i < fs->n_codes; i++)
        if (!strcmp(fs->codes[i].code, code))
            return fs->codes[i].seen;
    return 0;
}

void ka_findings_finish(struct ka_findings *fs)
{
    for (size_t i = 0; i < fs->n_codes; i++) {
        const struct ka_code_count *cc = &fs->codes[i];
        if (!cc->summary || cc->summary > fs->a->n_findings)
            continue;
        struct ka_finding *f = &fs->a->findings[cc->summary - 1];
        unsigned dropped = cc->seen - KA_FINDINGS_KEPT_PER_CODE;
        free(f->text);
        if (asprintf(&f->text, "%u more '%s' findings were not kept (at most %u of one code are; the verdicts count "
                     "all %u)", dropped, cc->code, KA_FINDINGS_KEPT_PER_CODE, cc->seen) < 0)
            f->text = NULL;
        ka_field_str(f, "of_code", cc->code);
        ka_field_u64(f, "not_kept", dropped);
        ka_field_u64(f, "kept", KA_FINDINGS_KEPT_PER_CODE);
    }
}

void ka_findings_free(struct ka_findings *fs)
{
    free(fs->codes);
    fs->codes = NULL;
    fs->n_codes = fs->cap_codes = 0;
}
