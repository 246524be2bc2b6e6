/*
 * findings.c - the lines of evidence behind the verdicts (struct ka_finding,
 * analysis.h).  A hostile or merely long trace can raise one code millions
 * of times: each code keeps its first KA_FINDINGS_PER_CODE findings and the
 * rest are counted, then summarized in one line.  The counts are what the
 * verdict rules read (ka_code_seen), so the cap never changes a verdict.
 */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis_internal.h"

#define KA_FINDINGS_PER_CODE 12

void ka_add_finding(struct ka_findings *fs, enum ka_axis axis, enum ka_finding_kind kind, const char *code,
                    const char *process, uint64_t time_ns, const char *fmt, ...)
{
    struct ka_code_count *cc = NULL;
    for (size_t i = 0; i < fs->n_codes; i++)
        if (!strcmp(fs->codes[i].code, code))
            cc = &fs->codes[i];
    if (!cc) {
        if (GROW(fs->codes, fs->n_codes, fs->cap_codes))
            return;
        cc = &fs->codes[fs->n_codes++];
        memset(cc, 0, sizeof *cc);
        snprintf(cc->code, sizeof cc->code, "%s", code);
    }
    if (++cc->seen > KA_FINDINGS_PER_CODE)
        return;
    struct ka_analysis *a = fs->a;
    struct ka_finding *grown = realloc(a->findings, (a->n_findings + 1) * sizeof *grown);
    if (!grown)
        return;
    a->findings = grown;
    struct ka_finding *f = &a->findings[a->n_findings++];
    memset(f, 0, sizeof *f);
    f->axis = axis;
    f->kind = kind;
    snprintf(f->code, sizeof f->code, "%s", code);
    f->process = process ? strdup(process) : NULL;
    f->time_ns = time_ns;
    va_list ap;
    va_start(ap, fmt);
    if (vasprintf(&f->text, fmt, ap) < 0)
        f->text = NULL;
    va_end(ap);
}

unsigned ka_code_seen(const struct ka_findings *fs, const char *code)
{
    for (size_t i = 0; i < fs->n_codes; i++)
        if (!strcmp(fs->codes[i].code, code))
            return fs->codes[i].seen;
    return 0;
}

/* Findings past the per-code limit are summarized in one line. */
void ka_summarize_dropped(struct ka_findings *fs)
{
    size_t n = fs->n_codes;
    for (size_t i = 0; i < n; i++) {
        if (fs->codes[i].seen <= KA_FINDINGS_PER_CODE)
            continue;
        enum ka_axis axis = KA_AXIS_IMPLEMENTATION;
        enum ka_finding_kind kind = KA_FINDING_SIGNAL;
        for (size_t j = 0; j < fs->a->n_findings; j++)
            if (!strcmp(fs->a->findings[j].code, fs->codes[i].code)) {
                axis = fs->a->findings[j].axis;
                kind = fs->a->findings[j].kind;
            }
        unsigned more = fs->codes[i].seen - KA_FINDINGS_PER_CODE;
        fs->codes[i].seen = 0; /* let the summary line through */
        ka_add_finding(fs, axis, kind, fs->codes[i].code, NULL, 0, "... and %u more like the above", more);
    }
}

void ka_findings_free(struct ka_findings *fs)
{
    free(fs->codes);
    fs->codes = NULL;
    fs->n_codes = fs->cap_codes = 0;
}
