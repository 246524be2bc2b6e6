/*
 * audit_phases.c - the worker's time by phase, from the runner's event log
 * (audit_phases.h).  The runner stamps every event with "t", its seconds
 * since it started; a phase is the span between the events that bound it, or
 * the sum of the seconds its events carry.
 */
#include <string.h>

#include "audit_phases.h"
#include "events.h"
#include "json_writer.h"

const char *const audit_phase_names[AUDIT_PHASES] = {
    "runner_start", "reference", "candidate_build", "slots", "probe", "timing", "runner",
    "reference_fp64", "party_wait", "build_tools", "build_overlapped",
};

struct reading {
    double *s;
    double last_t;          /* the latest "t" before the candidate's build began */
    double reference_end;   /* -1 until the candidate's first build stage */
    double aligned;         /* t of align_state */
    double build_requested; /* t of the "party" event build_requested: the build began then */
    double last_slot;
    int building;
};

static int is_candidate_stage(const char *stage)
{
    return stage && (!strcmp(stage, "import_candidate") || !strcmp(stage, "build_candidate") ||
                     !strcmp(stage, "align_state"));
}

static void add(double *to, double v)
{
    if (v >= 0)
        *to = (*to < 0 ? 0 : *to) + v;
}

static int on_event(const cJSON *e, unsigned lineno, void *arg)
{
    (void)lineno;
    struct reading *r = arg;
    const char *ev = kat_event_str(e, "event");
    double t = kat_event_num(e, "t", -1);
    if (!ev || t < 0)
        return 0;
    const char *stage = kat_event_str(e, "stage");
    if (!strcmp(ev, "start")) {
        r->s[AUDIT_PHASE_RUNNER_START] = t;
    } else if (!strcmp(ev, "stage") && is_candidate_stage(stage)) {
        if (!r->building) {
            r->building = 1;
            r->reference_end = r->last_t;
        }
        if (!strcmp(stage, "align_state"))
            r->aligned = t;
    } else if (!strcmp(ev, "slot")) {
        /* the timed calls' slot is judged after the timing, which is a phase of its own */
        const char *kind = kat_event_str(e, "kind");
        if (!kind || strcmp(kind, "timed") != 0)
            r->last_slot = t;

        add(&r->s[AUDIT_PHASE_REFERENCE_FP64],
            kat_event_num(cJSON_GetObjectItemCaseSensitive(e, "seconds"), "reference_fp64", -1));
    } else if (!strcmp(ev, "party") && kat_event_str(e, "status") && !strcmp(kat_event_str(e, "status"), "ready")) {
        add(&r->s[AUDIT_PHASE_PARTY_WAIT], kat_event_num(e, "waited", -1));
    } else if (!strcmp(ev, "party") && kat_event_str(e, "status") &&
               !strcmp(kat_event_str(e, "status"), "build_requested")) {
        r->build_requested = t;
    } else if (!strcmp(ev, "probe")) {
        add(&r->s[AUDIT_PHASE_PROBE], kat_event_num(e, "seconds", -1));
    } else if (!strcmp(ev, "timing") && r->building) {
        add(&r->s[AUDIT_PHASE_TIMING], kat_event_num(e, "seconds", -1));
    } else if (!strcmp(ev, "stage") && stage && !strcmp(stage, "time_candidate")) {
        add(&r->s[AUDIT_PHASE_TIMING], kat_event_num(e, "seconds", -1));
    } else if (!strcmp(ev, "done")) {
        r->s[AUDIT_PHASE_RUNNER] = t;
    }
    if (!r->building)
        r->last_t = t;
    return 0;
}

void audit_phases_read(const char *runner_dir, double s[AUDIT_PHASES])
{
    for (int i = 0; i < AUDIT_PHASES; i++)
        s[i] = -1;
    struct reading r = { .s = s, .last_t = -1, .reference_end = -1, .aligned = -1, .last_slot = -1,
                         .build_requested = -1 };
    if (kat_events_each(runner_dir, NULL, on_event, &r) != 0)
        return;
    double start = s[AUDIT_PHASE_RUNNER_START];
    if (start >= 0 && r.reference_end >= start)
        s[AUDIT_PHASE_REFERENCE] = r.reference_end - start;
    if (r.reference_end >= 0 && r.aligned >= r.reference_end)
        s[AUDIT_PHASE_CANDIDATE_BUILD] = r.aligned - r.reference_end;
    if (r.aligned >= 0 && r.last_slot >= r.aligned)
        s[AUDIT_PHASE_SLOTS] = r.last_slot - r.aligned;
    if (r.build_requested >= 0 && r.reference_end >= r.build_requested)
        s[AUDIT_PHASE_BUILD_OVERLAPPED] = r.reference_end - r.build_requested;
}

void audit_phases_write(struct kat_json *j, const double s[AUDIT_PHASES])
{
    kat_json_open(j, "phases_s", '{');
    for (int i = 0; i < AUDIT_PHASES; i++) {
        if (s[i] >= 0)
            kat_json_double(j, audit_phase_names[i], s[i]);
        else
            kat_json_null(j, audit_phase_names[i]);
    }
    kat_json_close(j, '}');
}
