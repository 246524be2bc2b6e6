/*
 * semantic.c - the semantic verdict from the runner's event log and tensor
 * files (semantic.h; docs/audit.md, "The semantic verdict"): reading the log
 * event by event, what a failed stage or an early end means, and the
 * decision.  One slot's calls are judged in semantic_slots.c and
 * semantic_compare.c, the record is written by semantic_record.c
 * (semantic_internal.h).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "events.h"
#include "semantic.h"
#include "semantic_internal.h"

/* ------------------------------------------------------------ building */

char *sem_strdup(struct ctx *c, const char *s)
{
    if (!s)
        return NULL;
    char *d = strdup(s);
    if (!d)
        c->oom = 1;
    return d;
}

void *sem_grow(struct ctx *c, void *p, size_t n, size_t size)
{
    /* capacity doubles at powers of two */
    if (n & (n - 1))
        return p;
    size_t cap = n ? 2 * n : 1;
    void *q = realloc(p, cap * size);
    if (!q) {
        c->oom = 1;
        return NULL;
    }
    return q;
}

struct kat_sem_finding *sem_add(struct ctx *c, enum kat_sem_kind kind, const char *code, const struct kat_sem_slot *slot,
                                int call, const char *fmt, ...)
{
    struct kat_semantic *s = c->s;
    void *q = sem_grow(c, s->findings, s->n_findings, sizeof *s->findings);
    if (!q)
        return NULL;
    s->findings = q;
    struct kat_sem_finding *f = &s->findings[s->n_findings++];
    memset(f, 0, sizeof *f);
    f->kind = kind;
    snprintf(f->code, sizeof f->code, "%s", code);
    f->slot = slot ? slot->index : -1;
    f->call = call;
    f->slot_name = slot ? sem_strdup(c, slot->name) : NULL;
    f->stress_slot = slot && strcmp(slot->kind, "native") != 0;
    va_list ap;
    va_start(ap, fmt);
    if (vasprintf(&f->text, fmt, ap) < 0) {
        f->text = NULL;
        c->oom = 1;
    }
    va_end(ap);
    return f;
}

/* "slot 2 (value_large) call 0" */
void sem_where(char *buf, size_t n, const struct kat_sem_slot *slot, int call)
{
    if (slot->n_calls > 1 || call > 0)
        snprintf(buf, n, "slot %d (%s) call %d", slot->index, slot->name, call);
    else
        snprintf(buf, n, "slot %d (%s)", slot->index, slot->name);
}

/* Stages and what their failure means (paper Table 2: build/import failure or
 * resource exhaustion leaves no executable audit path: INCONCLUSIVE). */
static const char *stage_cause(const char *stage)
{
    static const struct {
        const char *stage, *code;
    } map[] = {
        { "import_reference", "reference-failed" }, { "get_init_inputs", "reference-failed" },
        { "build_reference", "reference-failed" },  { "get_inputs", "reference-failed" },
        { "build_reference_fp64", "fp64-unsupported" }, { "import_candidate", "candidate-build-failed" },
        { "build_candidate", "candidate-build-failed" }, { "device", "device-unavailable" },
    };
    for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
        if (strcmp(map[i].stage, stage) == 0)
            return map[i].code;
    return "runner-stage-failed";
}

/* The extra slots the runner leaves out when the reference cannot run them
 * (runner/kaudit_runner.py): what each event says was not tested, or NULL. */
static const char *skipped_check(const char *event)
{
    static const struct {
        const char *event, *check;
    } map[] = {
        { "long_run_skipped", "the long run" },
        { "state_reload_skipped", "the state reload" },
        { "train_mode_skipped", "the train-mode slot" },
        { "timed_calls_skipped", "the timed calls' comparison" },
    };
    for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
        if (strcmp(map[i].event, event) == 0)
            return map[i].check;
    return NULL;
}

static void on_stage(struct ctx *c, const cJSON *e)
{
    const char *stage = kat_event_str(e, "stage"), *status = kat_event_str(e, "status");
    if (!stage || !status)
        return;
    if (strcmp(stage, "align_state") == 0 && strcmp(status, "ok") == 0) {
        c->s->alignment = sem_strdup(c, kat_event_str(e, "mapping"));
        if (strcmp(c->s->alignment ? c->s->alignment : "", "by-name") != 0) {
            double u = kat_event_num(e, "unverified", 0);
            c->s->alignment_unverified = u > 0 && u < 1e9 ? (unsigned)u : 0;
        }
        return;
    }
    if (strcmp(status, "ok") == 0)
        return;
    const char *err = kat_event_str(e, "error") ? kat_event_str(e, "error") : "(no message)";
    if (strcmp(stage, "align_state") == 0) {
        sem_add(c, KAT_SEM_UNRESOLVED, kat_event_str(e, "code") ? kat_event_str(e, "code") : "unresolved-state-correspondence", NULL, -1,
            "the candidate's state cannot be aligned with the reference's: %s", err);
        return;
    }
    if (strcmp(stage, "time_reference") == 0 || strcmp(stage, "time_candidate") == 0) {
        sem_add(c, KAT_SEM_SIGNAL, "timing-raised", NULL, -1, "%s raised after the stress slots: %s", stage, err);
        return;
    }
    const char *code = kat_event_str(e, "code") ? kat_event_str(e, "code") : stage_cause(stage);
    if (strcmp(stage, "evidence") == 0) /* runner/kaudit_events.py, EvidenceLost: wherever it happened */
        sem_add(c, KAT_SEM_UNRESOLVED, code, NULL, -1, "the runner stopped, its evidence incomplete: %s", err);
    else
        sem_add(c, KAT_SEM_UNRESOLVED, code, NULL, -1, "the runner failed at %s: %s", stage, err);
}

/* PyTorch's switches the candidate flipped (runner/kaudit_flags.py): each a
 * signal; whether one changed the reference's results is the reported slot
 * reference_under_candidate_flags. */
static void global_state(struct ctx *c, const cJSON *e)
{
    const cJSON *before = cJSON_GetObjectItemCaseSensitive(e, "before");
    const cJSON *after = cJSON_GetObjectItemCaseSensitive(e, "after");
    const cJSON *name;
    cJSON_ArrayForEach(name, cJSON_GetObjectItemCaseSensitive(e, "changed"))
    {
        if (!cJSON_IsString(name))
            continue;
        char *was = cJSON_PrintUnformatted(cJSON_GetObjectItemCaseSensitive(before, name->valuestring));
        char *now = cJSON_PrintUnformatted(cJSON_GetObjectItemCaseSensitive(after, name->valuestring));
        sem_add(c, KAT_SEM_SIGNAL, "global-state-changed", NULL, -1,
            "the candidate changed PyTorch's %s from %s to %s (a harness that runs the reference in the same "
            "process runs it so too)",
            name->valuestring, was ? was : "?", now ? now : "?");
        free(was);
        free(now);
    }
}

static void runner_end(struct ctx *c, const struct kat_runner_end *end, int saw_start, int saw_done,
                       const char *in_progress)
{
    if (saw_done)
        return;
    char how[320];
    if (end->resource)
        snprintf(how, sizeof how, "was stopped: %.1f MiB %s, beyond its limit of %.1f MiB (--%s-limit)%s%s",
                 (double)end->resource_used / 1048576.0,
                 end->resource == 1 ? "resident in its processes" : "in the audit's directory",
                 (double)end->resource_limit / 1048576.0, end->resource == 1 ? "memory" : "disk",
                 end->resource_detail[0] ? "; " : "", end->resource_detail);
    else if (end->timed_out)
        snprintf(how, sizeof how, "was stopped at the time limit (%.0f s)", end->timeout_s);
    else if (end->recorder_killed)
        snprintf(how, sizeof how, "lost its parent: the recording process was killed by signal %d", end->signal);
    else if (end->signal)
        snprintf(how, sizeof how, "was killed by signal %d (%s)", end->signal, strsignal(end->signal));
    else if (end->exited)
        snprintf(how, sizeof how, "exited with status %d before it finished", end->status);
    else
        snprintf(how, sizeof how, "ended without finishing");
    sem_add(c, KAT_SEM_UNRESOLVED,
        end->resource    ? "runner-resource-limit"
        : end->timed_out ? "runner-timeout"
        : saw_start      ? "runner-ended-early"
                         : "runner-not-started",
        NULL, -1, "the runner %s%s%s", how, in_progress ? " during " : "", in_progress ? in_progress : "");
}

static void decide(struct ctx *c, unsigned planned)
{
    struct kat_semantic *s = c->s;
    if (s->candidate_cudnn_tf32 == 1 || s->candidate_matmul_tf32 == 1) {
        /* Why an honest-looking candidate that hands a convolution (or a
         * matmul) to PyTorch differs: TF32's error (about 1e-3 relative)
         * is far above fp32's, and the reference ran with TF32 off.  A
         * signal, not a conviction: the values decide. */
        size_t value_fails = 0;
        for (size_t i = 0; i < s->n_findings; i++)
            value_fails += s->findings[i].kind == KAT_SEM_CONVICTS && !strcmp(s->findings[i].code, "value-mismatch");
        if (value_fails)
            sem_add(c, KAT_SEM_SIGNAL, "candidate-tf32-allowed", NULL, -1,
                "the candidate ran with PyTorch's TF32 allowed for %s (%s); what it hands to cuDNN or cuBLAS "
                "there computes float32 in TF32, whose error (about 1e-3 relative) is above this task's fp32 "
                "allowance; the reference ran with TF32 off",
                s->candidate_cudnn_tf32 == 1 && s->candidate_matmul_tf32 == 1 ? "cuDNN and matmuls"
                : s->candidate_cudnn_tf32 == 1                                  ? "cuDNN"
                                                                                : "matmuls",
                s->candidate_cudnn_tf32 == 1 ? "torch.backends.cudnn.allow_tf32, PyTorch's default"
                                             : "torch.backends.cuda.matmul.allow_tf32");
    }
    /* A mapping only the outputs verify (positional or by the names' words,
     * among tensors of one shape): outputs that differ may be the mapping's
     * fault, not the candidate's, so they convict nothing and the axis
     * abstains, as the paper does for a correspondence it cannot verify.
     * Outputs that match verify it: a swap of re-drawn values shows.  But
     * state_reload's first call ran on a state whose tensors of one shape and
     * dtype hold one value: no mapping among them changes what it computes,
     * so a mismatch there still convicts. */
    size_t unverified_mismatches = 0;
    if (s->alignment_unverified)
        for (size_t i = 0; i < s->n_findings; i++)
            if (s->findings[i].kind == KAT_SEM_CONVICTS) {
                if (s->symmetric_reload && s->findings[i].slot == s->symmetric_reload_slot &&
                    s->findings[i].call == 0)
                    continue;
                s->findings[i].kind = KAT_SEM_SIGNAL;
                unverified_mismatches++;
            }
    if (unverified_mismatches)
        sem_add(c, KAT_SEM_UNRESOLVED, "state-mapping-unverified", NULL, -1,
            "the outputs differ (%zu piece%s of evidence), but the state was aligned %s, with %u tensors that "
            "share their shape and dtype with another: the mapping may be what differs, so nothing convicts",
            unverified_mismatches, unverified_mismatches == 1 ? "" : "s",
            strcmp(s->alignment, "positional") == 0 ? "by position" : "by the words of the names",
            s->alignment_unverified);
    const struct kat_sem_finding *first_fail = NULL, *first_unresolved = NULL;
    size_t fails = 0;
    /* the slots that decide: reported slots and dropped ones do not */
    size_t gating = s->n_slots - s->dropped_slots - s->reported_slots - s->extra_slots;
    for (size_t i = 0; i < s->n_findings; i++) {
        const struct kat_sem_finding *f = &s->findings[i];
        if (f->kind == KAT_SEM_CONVICTS) {
            fails++;
            if (!first_fail)
                first_fail = f;
            if (f->stress_slot)
                s->signature = 1;
        } else if (f->kind == KAT_SEM_UNRESOLVED && !first_unresolved) {
            first_unresolved = f;
        }
    }
    if (first_fail) {
        s->verdict = KAT_SEM_FAIL;
        if (asprintf(&s->root_cause, "%zu piece%s of evidence that the outputs differ from the reference's: %s", fails,
                     fails == 1 ? "" : "s", first_fail->text ? first_fail->text : first_fail->code) < 0)
            s->root_cause = NULL;
    } else if (first_unresolved) {
        s->verdict = KAT_SEM_INCONCLUSIVE;
        s->root_cause = sem_strdup(c, first_unresolved->text ? first_unresolved->text : first_unresolved->code);
    } else if (gating < planned) {
        s->verdict = KAT_SEM_INCONCLUSIVE;
        if (asprintf(&s->root_cause, "only %zu of the %u slots ran", gating, planned) < 0)
            s->root_cause = NULL;
    } else {
        s->verdict = KAT_SEM_PASS;
        sem_add(c, KAT_SEM_SUPPORT, "slots-passed", NULL, -1,
            "%zu slots (%u replaced by native seeds), %u calls and %u leaves compared within the calibrated "
            "allowance%s",
            gating, s->replaced_slots, s->calls_compared, s->leaves_compared,
            s->reported_slots ? " (the reported slots' included; they do not gate)" : "");
    }
    /* R-B, measured: a reference output that cannot tell candidates apart */
    for (size_t i = 0; i < c->n_rb && !s->degenerate; i++) {
        const struct rb_leaf *r = &c->rb[i];
        if (r->seen < 2)
            continue;
        if (r->constant_holds) {
            if (asprintf(&s->degenerate, "R-B: the reference output %s is identically %.9g on all %u calls", r->path,
                         r->constant, r->seen) < 0)
                s->degenerate = NULL;
        } else if (!r->digest_varies) {
            if (asprintf(&s->degenerate, "R-B: the reference output %s is the same on all %u calls whatever the inputs",
                         r->path, r->seen) < 0)
                s->degenerate = NULL;
        }
    }
    if (s->degenerate)
        sem_add(c, KAT_SEM_SIGNAL, "degenerate-reference", NULL, -1, "%s: PASS is withheld", s->degenerate);
}

int kat_semantic_evaluate(const char *runner_dir, unsigned planned_slots, const struct kat_tol_params *params,
                          const struct kat_runner_end *end, struct kat_semantic **out, char *err, size_t n)
{
    struct kat_semantic *s = calloc(1, sizeof *s);
    if (!s) {
        snprintf(err, n, "out of memory");
        return -1;
    }
    s->params = *params;
    s->candidate_cudnn_tf32 = s->candidate_matmul_tf32 = -1;
    struct ctx c = { .s = s, .dir = runner_dir };
    char path[4096];
    snprintf(path, sizeof path, "%s/events.jsonl", runner_dir);
    FILE *f = fopen(path, "r");
    int saw_start = 0, saw_done = 0;
    char *in_progress = NULL;
    if (!f) {
        if (errno != ENOENT)
            sem_add(&c, KAT_SEM_UNRESOLVED, "runner-log-unreadable", NULL, -1, "cannot read '%s': %s", path,
                strerror(errno));
    } else {
        char *line = NULL;
        size_t cap = 0;
        ssize_t len;
        unsigned lineno = 0;
        while ((len = getline(&line, &cap, f)) > 0) {
            lineno++;
            cJSON *e = cJSON_ParseWithLength(line, (size_t)len);
            if (!e || !cJSON_IsObject(e)) {
                /* A line cut short by a kill is the last one; anything else is damage. */
                int last = fgetc(f) == EOF;
                if (!last || line[len - 1] == '\n')
                    sem_add(&c, KAT_SEM_UNRESOLVED, "runner-log-malformed", NULL, -1,
                        "'%s' line %u is not a JSON object", path, lineno);
                cJSON_Delete(e);
                break;
            }
            const char *ev = kat_event_str(e, "event");
            if (!ev) {
            } else if (strcmp(ev, "start") == 0) {
                saw_start = 1;
                free(s->python);
                free(s->torch);
                s->python = sem_strdup(&c, kat_event_str(e, "python"));
                s->torch = sem_strdup(&c, kat_event_str(e, "torch"));
                c.on_gpu = kat_event_str(e, "device") && !strcmp(kat_event_str(e, "device"), "cuda");
            } else if (strcmp(ev, "stage") == 0) {
                on_stage(&c, e);
                free(in_progress);
                in_progress = NULL;
                if (asprintf(&in_progress, "the stage after %s", kat_event_str(e, "stage") ? kat_event_str(e, "stage") : "?") < 0)
                    in_progress = NULL;
            } else if (strcmp(ev, "slot") == 0) {
                sem_on_slot(&c, e);
                free(in_progress);
                if (asprintf(&in_progress, "the slot after slot %d", jint(e, "index", -1)) < 0)
                    in_progress = NULL;
            } else if (strcmp(ev, "write_outside") == 0) {
                /* refused by the runner's audit hook; the tasks' files must
                 * stay in their directories (docs/audit.md, "Confinement") */
                sem_add(&c, KAT_SEM_UNRESOLVED, "wrote-outside-directory", NULL, -1,
                    "the %s tried to write outside its directories (%s on '%s'); the write was refused",
                    kat_event_str(e, "party") ? kat_event_str(e, "party") : "task", kat_event_str(e, "op") ? kat_event_str(e, "op") : "?",
                    kat_event_str(e, "path") ? kat_event_str(e, "path") : "?");
            } else if (strcmp(ev, "precision") == 0 && c.on_gpu) {
                /* on a CPU the switches change nothing */
                s->candidate_cudnn_tf32 = jflag(e, "restored_cudnn_tf32");
                s->candidate_matmul_tf32 = jflag(e, "restored_matmul_tf32");
            } else if (strcmp(ev, "reported_slot_skipped") == 0 && jflag(e, "gating") == 1) {
                /* a slot --require made gating that the reference cannot run: that
                   transformation was not tested, so it cannot pass */
                sem_add(&c, KAT_SEM_UNRESOLVED, "required-slot-unavailable", NULL, -1,
                    "slot %s, required to gate, could not run: %s",
                    kat_event_str(e, "name") ? kat_event_str(e, "name") : "?",
                    kat_event_str(e, "reason") ? kat_event_str(e, "reason") : "?");
            } else if (skipped_check(ev)) {
                /* the reference could not run it: the verdict stands on the
                   rest, and the record says what was not tested */
                sem_add(&c, KAT_SEM_SIGNAL, "check-skipped", NULL, -1, "%s was not run: %s", skipped_check(ev),
                    kat_event_str(e, "reason") ? kat_event_str(e, "reason") : "?");
            } else if (strcmp(ev, "global_state") == 0) {
                global_state(&c, e);
            } else if (strcmp(ev, "slot_unavailable") == 0) {
                sem_add(&c, KAT_SEM_UNRESOLVED, "slot-unavailable", NULL, -1,
                    "slot %d (%s) could not run and no native seed was left to replace it: %s", jint(e, "index", -1),
                    kat_event_str(e, "name") ? kat_event_str(e, "name") : "?", kat_event_str(e, "reason") ? kat_event_str(e, "reason") : "?");
            } else if (strcmp(ev, "done") == 0) {
                saw_done = 1;
            }
            cJSON_Delete(e);
            if (c.oom)
                break;
        }
        free(line);
        fclose(f);
    }
    sem_use_reserves(&c);
    runner_end(&c, end, saw_start, saw_done, in_progress);
    free(in_progress);
    decide(&c, planned_slots);
    for (size_t i = 0; i < c.n_rb; i++)
        free(c.rb[i].path);
    free(c.rb);
    if (c.oom) {
        kat_semantic_free(s);
        snprintf(err, n, "out of memory");
        return -1;
    }
    *out = s;
    return 0;
}

void kat_semantic_free(struct kat_semantic *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->n_slots; i++) {
        struct kat_sem_slot *slot = &s->slots[i];
        for (size_t k = 0; k < slot->n_calls; k++) {
            for (size_t l = 0; l < slot->calls[k].n_leaves; l++)
                free(slot->calls[k].leaves[l].path);
            free(slot->calls[k].leaves);
        }
        free(slot->calls);
        free(slot->name);
        free(slot->kind);
        free(slot->layout);
        free(slot->replaces);
        free(slot->replaced_because);
    }
    free(s->slots);
    for (size_t i = 0; i < s->n_findings; i++) {
        free(s->findings[i].text);
        free(s->findings[i].slot_name);
        free(s->findings[i].leaf);
    }
    free(s->findings);
    free(s->root_cause);
    free(s->degenerate);
    free(s->alignment);
    free(s->python);
    free(s->torch);
    free(s);
}
