/* events.c - the runner's event log, one kind of event at a time (events.h). */
#define _GNU_SOURCE
#include "events.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int kat_events_each(const char *runner_dir, const char *name, int (*fn)(const cJSON *e, unsigned lineno, void *arg),
                    void *arg)
{
    char path[4096], needle[96];
    snprintf(path, sizeof path, "%s/events.jsonl", runner_dir);
    snprintf(needle, sizeof needle, "\"%s\"", name ? name : "");
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    unsigned lineno = 0;
    int stop = 0;
    while (!stop && (len = getline(&line, &cap, f)) > 0) {
        lineno++;
        if (name && !strstr(line, needle))
            continue; /* cheap: most lines are other events */
        cJSON *e = cJSON_ParseWithLength(line, (size_t)len);
        const cJSON *ev = e ? cJSON_GetObjectItemCaseSensitive(e, "event") : NULL;
        if (cJSON_IsString(ev) && (!name || !strcmp(ev->valuestring, name)))
            stop = fn(e, lineno, arg);
        cJSON_Delete(e);
    }
    free(line);
    fclose(f);
    return 0;
}

const char *kat_event_str(const cJSON *e, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(e, key);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

double kat_event_num(const cJSON *e, const char *key, double dflt)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(e, key);
    return cJSON_IsNumber(v) ? v->valuedouble : dflt;
}
