/*
 * events.h - the runner's event log, runner_dir/events.jsonl (docs/audit.md,
 * "The runner's log"), read one event at a time by the parts of kaudit that
 * judge one kind of event each (audit/audit_timing.c, audit/audit_probe.c;
 * semantic.c reads the whole log and judges its damage).
 */
#ifndef KAUDIT_EVENTS_H
#define KAUDIT_EVENTS_H

#include <cjson/cJSON.h>

/* Calls fn(e, lineno, arg) for each line of runner_dir/events.jsonl that is
 * a JSON object whose "event" is name, or any event when name is NULL (lines that do not parse are left to
 * semantic.c); stops early when fn returns nonzero.  Returns 0, or -1 when
 * the log cannot be opened. */
int kat_events_each(const char *runner_dir, const char *name, int (*fn)(const cJSON *e, unsigned lineno, void *arg),
                    void *arg);

/* A string field of an event, NULL when missing or not a string. */
const char *kat_event_str(const cJSON *e, const char *key);
/* A number field of an event, dflt when missing or not a number. */
double kat_event_num(const cJSON *e, const char *key, double dflt);

#endif
