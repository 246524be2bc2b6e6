/*
 * outcome.c - from the axis verdicts to the certificate and the outcome code
 * (docs/analysis.md, "Certificate and outcome"; paper, Eq. 3 and Table 1).
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis_internal.h"

/* The semantic axis as supplied, the aggregate verdict, the certificate (R-B) and the outcome code. */
void ka_aggregate(struct ka_findings *f, const struct ka_options *opt, const struct ka_contract *c,
                  struct ka_analysis *a)
{
    const struct ka_semantic_evidence *sem = opt->semantic_evidence;
    if (sem) {
        a->semantic_audited = 1;
        a->axis[KA_AXIS_SEMANTIC].verdict = sem->verdict;
        a->axis[KA_AXIS_SEMANTIC].root_cause = sem->root_cause ? strdup(sem->root_cause) : NULL;
        for (size_t i = 0; i < sem->n_findings; i++)
            ka_add_finding(f, KA_AXIS_SEMANTIC, sem->findings[i].kind, sem->findings[i].code, NULL, 0, "%s",
                           sem->findings[i].text ? sem->findings[i].text : "");
        if (sem->degenerate)
            a->degenerate_reason = strdup(sem->degenerate);
    } else if (opt->semantic_given) {
        a->semantic_supplied = 1;
        a->axis[KA_AXIS_SEMANTIC].verdict = opt->semantic;
        a->axis[KA_AXIS_SEMANTIC].root_cause =
            opt->semantic == KA_PASS ? NULL : strdup("as supplied by a separate semantic run (--semantic)");
        struct ka_finding *x =
            ka_add_finding(f, KA_AXIS_SEMANTIC, opt->semantic == KA_FAIL ? KA_FINDING_CONVICTS : KA_FINDING_SIGNAL,
                           "semantic-supplied", NULL, 0,
                           "the semantic verdict %s was supplied, not decided from the traces",
                           ka_verdict_name(opt->semantic));
        ka_field_str(x, "verdict", ka_verdict_name(opt->semantic));
        ka_field_str(x, "source", "supplied");
    } else {
        a->axis[KA_AXIS_SEMANTIC].verdict = KA_UNSUPPORTED;
        a->axis[KA_AXIS_SEMANTIC].root_cause =
            strdup("semantic stress runs are not part of this analysis (traces cannot decide output correctness)");
    }
    int any_fail = 0, any_unresolved = 0;
    for (int i = 0; i < KA_AXIS_COUNT; i++) {
        if (a->axis[i].verdict == KA_FAIL)
            any_fail = 1;
        else if (a->axis[i].verdict != KA_PASS)
            any_unresolved = 1;
    }
    a->aggregate = any_fail ? KA_FAIL : any_unresolved ? KA_INCONCLUSIVE : KA_PASS;
    a->certificate = a->aggregate;
    if (a->aggregate == KA_FAIL) {
        a->certificate_reason = strdup("an axis FAILs on candidate-attributable evidence");
    } else if (a->aggregate == KA_INCONCLUSIVE) {
        for (int i = 0; i < KA_AXIS_COUNT; i++)
            if (a->axis[i].verdict != KA_PASS) {
                if (asprintf(&a->certificate_reason, "the %s axis is %s: %s", ka_axis_name(i),
                             ka_verdict_name(a->axis[i].verdict),
                             a->axis[i].root_cause ? a->axis[i].root_cause : "unresolved") < 0)
                    a->certificate_reason = NULL;
                break;
            }
    } else if (c->degenerate_reference) {
        a->certificate = KA_INCONCLUSIVE;
        a->certificate_reason = strdup("R-B: the contract lists the reference as degenerate: PASS is withheld");
    } else if (a->degenerate_reason) {
        a->certificate = KA_INCONCLUSIVE;
        if (asprintf(&a->certificate_reason, "%s: PASS is withheld", a->degenerate_reason) < 0)
            a->certificate_reason = NULL;
    } else {
        a->certificate_reason = strdup("no violation detected on the audited surfaces");
    }
    /* Outcome codes (Table 1) against the weak verifier's decision. */
    a->weak = opt->weak;
    if (a->weak == KA_WEAK_NONE)
        return;
    const char *why;
    const char *code = ka_outcome_code(a->certificate, a->weak, a->axis[KA_AXIS_IMPLEMENTATION].verdict,
                                       a->axis[KA_AXIS_MEASUREMENT].verdict, sem && sem->signature, &why);
    if (!strcmp(code, "INCONCL"))
        why = a->certificate_reason ? a->certificate_reason : "unresolved";
    snprintf(a->outcome, sizeof a->outcome, "%s", code);
    a->outcome_reason = strdup(why);
}

const char *ka_outcome_code(enum ka_verdict certificate, enum ka_weak weak, enum ka_verdict implementation,
                            enum ka_verdict measurement, int semantic_signature, const char **why)
{
    const char *unused;
    if (!why)
        why = &unused;
    if (certificate == KA_PASS) {
        *why = weak == KA_WEAK_ACCEPT ? "certified, and the weak verifier accepts"
                                      : "certified; the weak verifier's rejection is a false reject";
        return "C0";
    }
    if (certificate == KA_FAIL && weak == KA_WEAK_REJECT) {
        *why = "the weak verifier rejects and the certificate is FAIL (public failure)";
        return "C1";
    }
    if (certificate == KA_FAIL) {
        /* priority C3b over C3c over C3a over C2 */
        if (implementation == KA_FAIL) {
            *why = "false accept: the implementation axis FAILs";
            return "C3b";
        }
        if (measurement == KA_FAIL) {
            *why = "false accept: the measurement axis FAILs";
            return "C3c";
        }
        if (semantic_signature) {
            *why = "false accept: the semantic axis FAILs on a stress input the weak verifier does not draw";
            return "C3a";
        }
        *why = "false accept: the semantic axis FAILs without a mechanism signature";
        return "C2";
    }
    *why = "unresolved";
    return "INCONCL";
}

void ka_withhold_certificate(struct ka_analysis *a, const char *why)
{
    if (a->certificate != KA_PASS)
        return;
    a->certificate = KA_INCONCLUSIVE;
    free(a->certificate_reason);
    a->certificate_reason = strdup(why);
    if (a->outcome[0]) {
        snprintf(a->outcome, sizeof a->outcome, "INCONCL");
        free(a->outcome_reason);
        a->outcome_reason = strdup(why);
    }
}
