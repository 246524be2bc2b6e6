/*
 * audit_weak.c - the weak surfaces' decisions, from the runner's log
 * (audit_weak.h; runner/kaudit_weak.py runs them).
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "audit_weak.h"
#include "events.h"
#include "json_writer.h"

const char *const audit_weak_names[AUDIT_WEAK_N] = {
    "KernelBench", "robust-kbench", "CUDA-Agent", "KernelGYM", "DeepReinforce", "MusaCoder", "CUDA-L1",
};

static int name_index(const char *s, size_t len)
{
    for (int i = 0; i < AUDIT_WEAK_N; i++)
        if (strlen(audit_weak_names[i]) == len && !strncasecmp(audit_weak_names[i], s, len))
            return i;
    return -1;
}

int audit_weak_parse(const char *spec, unsigned *mask, char *err, size_t n)
{
    *mask = 0;
    if (!strcasecmp(spec, "none"))
        return 0;
    if (!strcasecmp(spec, "all")) {
        *mask = (1u << AUDIT_WEAK_N) - 1;
        return 0;
    }
    for (const char *p = spec;;) {
        size_t len = strcspn(p, ",");
        int i = name_index(p, len);
        if (i < 0) {
            char known[256] = "";
            for (int k = 0; k < AUDIT_WEAK_N; k++)
                snprintf(known + strlen(known), sizeof known - strlen(known), "%s%s", k ? ", " : "",
                         audit_weak_names[k]);
            snprintf(err, n, "unknown weak surface '%.*s' in '%s' (known: %s; or all, none)", (int)len, p, spec,
                     known);
            return -1;
        }
        *mask |= 1u << i;
        if (!p[len])
            break;
        p += len + 1;
    }
    return 0;
}

const char *audit_weak_plan_json(unsigned mask)
{
    static char buf[512];
    size_t k = 0;
    buf[k++] = '[';
    for (int i = 0; i < AUDIT_WEAK_N; i++)
        if (mask & (1u << i))
            k += (size_t)snprintf(buf + k, sizeof buf - k, "%s\"%s\"", k > 1 ? ", " : "", audit_weak_names[i]);
    snprintf(buf + k, sizeof buf - k, "]");
    return buf;
}

struct read_state {
    struct audit_weak *w;
    int started, finished;
};

static int on_weak(const cJSON *e, unsigned lineno, void *arg)
{
    (void)lineno;
    struct read_state *st = arg;
    const char *name = kat_event_str(e, "surface"), *decision = kat_event_str(e, "decision");
    int i = name ? name_index(name, strlen(name)) : -1;
    if (i < 0 || !(st->w->planned & (1u << i)) || st->w->d[i].reported)
        return 0;
    struct audit_weak_decision *d = &st->w->d[i];
    d->reported = 1;
    d->accept = decision && !strcmp(decision, "ACCEPT");
    const char *reason = kat_event_str(e, "reason");
    if (decision && strcmp(decision, "ACCEPT") && strcmp(decision, "REJECT"))
        snprintf(d->reason, sizeof d->reason, "the runner logged the decision '%s': counted as REJECT", decision);
    else
        snprintf(d->reason, sizeof d->reason, "%s", reason ? reason : "");
    d->seconds = kat_event_num(e, "seconds", 0);
    return 0;
}

static int on_start(const cJSON *e, unsigned lineno, void *arg)
{
    (void)e, (void)lineno;
    ((struct read_state *)arg)->started = 1;
    return 1;
}

static int on_done(const cJSON *e, unsigned lineno, void *arg)
{
    (void)lineno;
    struct read_state *st = arg;
    st->finished = 1;
    st->w->seconds = kat_event_num(e, "seconds", 0);
    return 1;
}

void audit_weak_read(const char *runner_dir, unsigned planned, const char *why_stopped, struct audit_weak *w)
{
    memset(w, 0, sizeof *w);
    w->planned = planned;
    if (!planned)
        return;
    struct read_state st = { .w = w };
    kat_events_each(runner_dir, "weak_start", on_start, &st);
    kat_events_each(runner_dir, "weak", on_weak, &st);
    kat_events_each(runner_dir, "weak_done", on_done, &st);
    for (int i = 0; i < AUDIT_WEAK_N; i++) {
        struct audit_weak_decision *d = &w->d[i];
        if (!(planned & (1u << i)) || d->reported)
            continue;
        d->accept = 0;
        if (!st.started)
            snprintf(d->reason, sizeof d->reason,
                     "not evaluated: the worker did not reach the weak phase (%s); counted as REJECT",
                     why_stopped ? why_stopped : "the candidate could not be imported");
        else
            snprintf(d->reason, sizeof d->reason,
                     "not evaluated: the worker stopped before this surface reported (%s); counted as REJECT",
                     why_stopped ? why_stopped : "no reason recorded");
    }
}

void audit_weak_write_json(struct kat_json *j, const struct audit_weak *w)
{
    if (!w->planned) {
        kat_json_null(j, "weak_surfaces");
        return;
    }
    kat_json_open(j, "weak_surfaces", '{');
    for (int i = 0; i < AUDIT_WEAK_N; i++) {
        const struct audit_weak_decision *d = &w->d[i];
        if (!(w->planned & (1u << i)))
            continue;
        kat_json_open(j, audit_weak_names[i], '{');
        kat_json_str(j, "decision", d->accept ? "ACCEPT" : "REJECT");
        kat_json_str(j, "reason", d->reason);
        kat_json_bool(j, "evaluated", d->reported);
        kat_json_double(j, "seconds", d->seconds);
        kat_json_close(j, '}');
    }
    kat_json_close(j, '}');
}

void audit_weak_print(FILE *f, const struct audit_weak *w)
{
    if (!w->planned)
        return;
    fprintf(f, "  weak surfaces:");
    for (int i = 0; i < AUDIT_WEAK_N; i++)
        if (w->planned & (1u << i))
            fprintf(f, " %s %s", audit_weak_names[i], w->d[i].accept ? "ACCEPT" : "REJECT");
    fputc('\n', f);
}
