/*
 * semantic_record.c - the semantic verdict written into the audit record
 * ("semantic" in docs/report-format.md), and the names it uses.  Apart from
 * the evaluation: it only reads a finished struct kat_semantic.
 */
#include <stdio.h>
#include <string.h>

#include "json_writer.h"
#include "semantic.h"

const char *kat_sem_verdict_name(enum kat_sem_verdict v)
{
    switch (v) {
    case KAT_SEM_PASS: return "PASS";
    case KAT_SEM_FAIL: return "FAIL";
    case KAT_SEM_INCONCLUSIVE: return "INCONCLUSIVE";
    }
    return "?";
}

static const char *kind_name(enum kat_sem_kind k)
{
    switch (k) {
    case KAT_SEM_CONVICTS: return "convicts";
    case KAT_SEM_UNRESOLVED: return "unresolved";
    case KAT_SEM_SIGNAL: return "signal";
    case KAT_SEM_SUPPORT: return "support";
    }
    return "?";
}

static void write_leaf(struct kat_json *j, const struct kat_sem_leaf *l)
{
    kat_json_open_line(j, '{');
    kat_json_str(j, "path", l->path);
    kat_json_str(j, "dtype", l->dtype);
    kat_json_str(j, "shape", l->shape);
    kat_json_str(j, "outcome", l->outcome ? l->outcome : "unresolved");
    kat_json_str(j, "rule", l->rule ? l->rule : "none");
    if (l->calibrated) {
        kat_json_double(j, "eps_abs", l->cal.eps_abs);
        kat_json_double(j, "eps_rel", l->cal.eps_rel);
        kat_json_double(j, "rho_bar", l->cal.rho_bar);
        kat_json_double(j, "rho", l->cal.rho);
        kat_json_double(j, "a", l->cal.a);
        kat_json_u64(j, "elements", l->cmp.n);
        kat_json_u64(j, "failing", l->cmp.n_fail);
        kat_json_u64(j, "passed_by_floor", l->cmp.n_pass_by_floor);
        if (l->cmp.worst.valid) {
            kat_json_u64(j, "worst_index", l->cmp.worst.index);
            kat_json_double(j, "worst_candidate", l->cmp.worst.candidate);
            kat_json_double(j, "worst_reference", l->cmp.worst.reference);
            kat_json_double(j, "worst_reference_fp64", l->cmp.worst.reference64);
            kat_json_double(j, "worst_allowance", l->cmp.worst.allowance);
            kat_json_double(j, "worst_ratio", l->cmp.worst.ratio);
        }
    }
    kat_json_close(j, '}');
}

void kat_semantic_write_json(struct kat_json *j, const char *key, const struct kat_semantic *s)
{
    kat_json_open(j, key, '{');
    kat_json_str(j, "verdict", kat_sem_verdict_name(s->verdict));
    /* a FAIL on a stress slot: the mechanism signature of outcome C3a */
    kat_json_bool(j, "stress_signature", s->signature != 0);
    if (s->root_cause)
        kat_json_str(j, "root_cause", s->root_cause);
    else
        kat_json_null(j, "root_cause");
    if (s->degenerate)
        kat_json_str(j, "degenerate_reference", s->degenerate);
    else
        kat_json_null(j, "degenerate_reference");
    kat_json_open(j, "tolerance", '{');
    kat_json_str(j, "mode", s->params.mode == KAT_TOL_PAPER ? "paper" : "reference-floor");
    kat_json_double(j, "c", s->params.c);
    kat_json_double(j, "rho_min", s->params.rho_min);
    kat_json_double(j, "rho_max", s->params.rho_max);
    kat_json_double(j, "a_min", s->params.a_min);
    kat_json_str(j, "percentile", "nearest-rank p99");
    kat_json_close(j, '}');
    if (s->alignment)
        kat_json_str(j, "state_alignment", s->alignment);
    else
        kat_json_null(j, "state_alignment");
    kat_json_bool(j, "state_reload_symmetric", s->symmetric_reload);
    kat_json_str(j, "python", s->python ? s->python : "");
    kat_json_str(j, "torch", s->torch ? s->torch : "");
    kat_json_open(j, "candidate_tf32", '{');
    if (s->candidate_cudnn_tf32 < 0)
        kat_json_null(j, "cudnn");
    else
        kat_json_bool(j, "cudnn", s->candidate_cudnn_tf32);
    if (s->candidate_matmul_tf32 < 0)
        kat_json_null(j, "matmul");
    else
        kat_json_bool(j, "matmul", s->candidate_matmul_tf32);
    kat_json_close(j, '}');
    kat_json_u64(j, "slots_judged", s->n_slots - s->dropped_slots - s->reported_slots - s->extra_slots);
    kat_json_u64(j, "slots_reported", s->reported_slots);
    kat_json_u64(j, "slots_dropped", s->dropped_slots);
    kat_json_u64(j, "slots_replaced", s->replaced_slots);
    kat_json_u64(j, "calls_compared", s->calls_compared);
    kat_json_open(j, "slots", '[');
    for (size_t i = 0; i < s->n_slots; i++) {
        const struct kat_sem_slot *slot = &s->slots[i];
        kat_json_open_line(j, '{');
        kat_json_i64(j, "index", slot->index);
        kat_json_str(j, "name", slot->name);
        kat_json_str(j, "kind", slot->kind);
        if (slot->layout)
            kat_json_str(j, "layout", slot->layout);
        kat_json_bool(j, "dropped", slot->dropped);
        if (slot->reported)
            kat_json_bool(j, "gating", 0);
        if (slot->replaces) {
            kat_json_str(j, "replaces", slot->replaces);
            kat_json_str(j, "replaced_because", slot->replaced_because ? slot->replaced_because : "");
        }
        kat_json_open(j, "calls", '[');
        for (size_t k = 0; k < slot->n_calls; k++) {
            const struct kat_sem_call *call = &slot->calls[k];
            kat_json_open_line(j, '{');
            kat_json_i64(j, "call", call->call);
            kat_json_str(j, "status", call->status);
            kat_json_str(j, "instance", call->instance);
            kat_json_open(j, "leaves", '[');
            for (size_t l = 0; l < call->n_leaves; l++)
                write_leaf(j, &call->leaves[l]);
            kat_json_close(j, ']');
            kat_json_close(j, '}');
        }
        kat_json_close(j, ']');
        kat_json_close(j, '}');
    }
    kat_json_close(j, ']');
    kat_json_open(j, "findings", '[');
    for (size_t i = 0; i < s->n_findings; i++) {
        const struct kat_sem_finding *f = &s->findings[i];
        kat_json_open_line(j, '{');
        kat_json_str(j, "kind", kind_name(f->kind));
        kat_json_str(j, "code", f->code);
        kat_json_str(j, "text", f->text ? f->text : "");
        if (f->slot >= 0) {
            kat_json_i64(j, "slot", f->slot);
            kat_json_str(j, "slot_name", f->slot_name ? f->slot_name : "");
            kat_json_i64(j, "call", f->call);
        }
        if (f->leaf)
            kat_json_str(j, "leaf", f->leaf);
        kat_json_close(j, '}');
    }
    kat_json_close(j, ']');
    kat_json_close(j, '}');
}

