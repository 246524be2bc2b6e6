/*
 * perfetto.c - a timeline of an analysis in the Chrome trace event format
 * (JSON), which ui.perfetto.dev and chrome://tracing open.
 *
 * One track per host thread (vendor calls, phases) and one per GPU stream
 * (kernels, coloured by origin; timed windows on their own track).  Events are
 * written as the analysis streams them, so a large session never sits in
 * memory.  Times are microseconds from the first event.  Strings go through
 * session/json_writer.h (always valid UTF-8 JSON).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis.h"
#include "json_writer.h"

/* GPU streams and window tracks live above any host thread id. */
#define STREAM_TRACK_BASE 0x40000000u
#define WINDOW_TRACK 0x7ffffff0u

struct ka_timeline {
    FILE *f;
    char *path;
    int first;
    uint64_t base_ns;
    int have_base;
    int failed;
    struct { uint32_t pid, tid; } *named;
    size_t n_named, cap_named;
};

/* Names come from arbitrary binaries: session/json_writer.h escapes them so
 * that the timeline is valid UTF-8 JSON whatever their bytes. */
static void put_string(FILE *f, const char *s)
{
    kat_json_cstring(f, s);
}

static double us(struct ka_timeline *t, uint64_t ns)
{
    if (!t->have_base) {
        t->base_ns = ns;
        t->have_base = 1;
    }
    return ns >= t->base_ns ? (double)(ns - t->base_ns) / 1e3 : -(double)(t->base_ns - ns) / 1e3;
}

static void begin_event(struct ka_timeline *t)
{
    fputs(t->first ? "\n" : ",\n", t->f);
    t->first = 0;
}

static void name_track(struct ka_timeline *t, uint32_t pid, uint32_t tid, const char *label)
{
    for (size_t i = 0; i < t->n_named; i++)
        if (t->named[i].pid == pid && t->named[i].tid == tid)
            return;
    if (t->n_named == t->cap_named) {
        size_t nc = t->cap_named ? t->cap_named * 2 : 32;
        void *p = realloc(t->named, nc * sizeof *t->named);
        if (!p)
            return;
        t->named = p;
        t->cap_named = nc;
    }
    t->named[t->n_named].pid = pid;
    t->named[t->n_named++].tid = tid;
    begin_event(t);
    fprintf(t->f, "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":%u,\"tid\":%u,\"args\":{\"name\":", pid, tid);
    put_string(t->f, label);
    fputs("}}", t->f);
}

static void on_process(void *arg, uint32_t pid, const char *label)
{
    struct ka_timeline *t = arg;
    begin_event(t);
    fprintf(t->f, "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":%u,\"args\":{\"name\":", pid);
    char buf[256];
    snprintf(buf, sizeof buf, "pid %u: %.200s", pid, label);
    put_string(t->f, buf);
    fputs("}}", t->f);
}

static const char *origin_colour(enum ka_origin o)
{
    /* trace-viewer's reserved colour names */
    switch (o) {
    case KA_ORIGIN_VENDOR: return "terrible";      /* red */
    case KA_ORIGIN_FRAMEWORK: return "yellow";
    case KA_ORIGIN_CANDIDATE: return "good";       /* green */
    default: return "grey";
    }
}

static void on_kernel(void *arg, uint32_t pid, const char *name, uint32_t stream, uint64_t start_ns, uint64_t end_ns,
                      enum ka_origin origin, enum ka_party party, enum ka_class cls, uint64_t vendor_call_id)
{
    struct ka_timeline *t = arg;
    char label[64];
    snprintf(label, sizeof label, "GPU stream %u", stream);
    name_track(t, pid, STREAM_TRACK_BASE + stream, label);
    begin_event(t);
    double ts = us(t, start_ns);
    fprintf(t->f, "{\"ph\":\"X\",\"pid\":%u,\"tid\":%u,\"ts\":%.3f,\"dur\":%.3f,\"cat\":\"%s\",\"cname\":\"%s\",\"name\":",
            pid, STREAM_TRACK_BASE + stream, ts, end_ns > start_ns ? (double)(end_ns - start_ns) / 1e3 : 0.0,
            ka_origin_name(origin), origin_colour(origin));
    put_string(t->f, name);
    fprintf(t->f, ",\"args\":{\"origin\":\"%s\",\"party\":\"%s\",\"class\":\"%s\",\"vendor_call\":%llu}}",
            ka_origin_name(origin), ka_party_name(party), ka_class_name(cls), (unsigned long long)vendor_call_id);
}

static void on_vendor_call(void *arg, uint32_t pid, uint32_t tid, const char *api, uint64_t call_id, uint64_t enter_ns,
                           uint64_t exit_ns, enum ka_party party)
{
    struct ka_timeline *t = arg;
    char label[64];
    snprintf(label, sizeof label, "thread %u", tid);
    name_track(t, pid, tid, label);
    begin_event(t);
    fprintf(t->f, "{\"ph\":\"X\",\"pid\":%u,\"tid\":%u,\"ts\":%.3f,\"dur\":%.3f,\"cat\":\"vendor_call\",\"cname\":\"terrible\",\"name\":",
            pid, tid, us(t, enter_ns), exit_ns > enter_ns ? (double)(exit_ns - enter_ns) / 1e3 : 0.0);
    put_string(t->f, api ? api : "?");
    fprintf(t->f, ",\"args\":{\"call_id\":%llu,\"party\":\"%s\"}}", (unsigned long long)call_id, ka_party_name(party));
}

static void on_phase(void *arg, uint32_t pid, uint32_t tid, const char *name, uint64_t start_ns, uint64_t end_ns)
{
    struct ka_timeline *t = arg;
    if (end_ns == UINT64_MAX)
        end_ns = start_ns;
    char label[64];
    snprintf(label, sizeof label, tid ? "thread %u" : "process-wide ranges", tid);
    name_track(t, pid, tid, label);
    begin_event(t);
    char phase[80];
    snprintf(phase, sizeof phase, "phase: %s", name);
    fprintf(t->f, "{\"ph\":\"X\",\"pid\":%u,\"tid\":%u,\"ts\":%.3f,\"dur\":%.3f,\"cat\":\"phase\",\"name\":", pid, tid,
            us(t, start_ns), (double)(end_ns - start_ns) / 1e3);
    put_string(t->f, phase);
    fputs("}", t->f);
}

static void on_window(void *arg, uint32_t pid, unsigned index, uint32_t stream, uint64_t gpu_start_ns,
                      uint64_t gpu_end_ns, float elapsed_ms)
{
    struct ka_timeline *t = arg;
    if (!gpu_start_ns || !gpu_end_ns || gpu_end_ns < gpu_start_ns)
        return;
    name_track(t, pid, WINDOW_TRACK, "timed windows (CUDA events)");
    begin_event(t);
    char label[64];
    snprintf(label, sizeof label, "timed window #%u: %.4f ms", index, (double)elapsed_ms);
    fprintf(t->f, "{\"ph\":\"X\",\"pid\":%u,\"tid\":%u,\"ts\":%.3f,\"dur\":%.3f,\"cat\":\"timed_window\",\"cname\":\"olive\",\"name\":",
            pid, WINDOW_TRACK, us(t, gpu_start_ns), (double)(gpu_end_ns - gpu_start_ns) / 1e3);
    put_string(t->f, label);
    fprintf(t->f, ",\"args\":{\"stop_event_stream\":%u}}", stream);
}

/* Only the stretch in which the stop event completed is known: drawn as that,
 * not as a window whose start and end would be guesses. */
static void on_stop_bounds(void *arg, uint32_t pid, unsigned index, uint32_t stream, uint64_t lo_ns, uint64_t hi_ns,
                           float elapsed_ms)
{
    struct ka_timeline *t = arg;
    if (!lo_ns || hi_ns == UINT64_MAX || hi_ns < lo_ns)
        return;
    name_track(t, pid, WINDOW_TRACK, "timed windows (CUDA events)");
    begin_event(t);
    char label[96];
    snprintf(label, sizeof label, "stop event of timed window #%u completed in here (%.4f ms timed)", index,
             (double)elapsed_ms);
    fprintf(t->f, "{\"ph\":\"X\",\"pid\":%u,\"tid\":%u,\"ts\":%.3f,\"dur\":%.3f,\"cat\":\"stop_event_bounds\",\"cname\":\"olive\",\"name\":",
            pid, WINDOW_TRACK, us(t, lo_ns), (double)(hi_ns - lo_ns) / 1e3);
    put_string(t->f, label);
    fprintf(t->f, ",\"args\":{\"stop_event_stream\":%u}}", stream);
}

struct ka_timeline *ka_timeline_open(const char *path, char *err, size_t n)
{
    struct ka_timeline *t = calloc(1, sizeof *t);
    if (!t) {
        snprintf(err, n, "out of memory");
        return NULL;
    }
    t->f = fopen(path, "w");
    if (!t->f) {
        snprintf(err, n, "cannot write timeline '%s': %s", path, strerror(errno));
        free(t);
        return NULL;
    }
    t->path = strdup(path);
    t->first = 1;
    fputs("{\"displayTimeUnit\":\"ns\",\"traceEvents\":[", t->f);
    return t;
}

void ka_timeline_sink(struct ka_timeline *t, struct ka_options *opt)
{
    opt->sink_arg = t;
    opt->on_process = on_process;
    opt->on_kernel = on_kernel;
    opt->on_vendor_call = on_vendor_call;
    opt->on_phase = on_phase;
    opt->on_window = on_window;
    opt->on_stop_bounds = on_stop_bounds;
}

int ka_timeline_close(struct ka_timeline *t, char *err, size_t n)
{
    fputs("\n]}\n", t->f);
    int rc = 0;
    if (ferror(t->f) | (fclose(t->f) != 0)) {
        snprintf(err, n, "cannot write timeline '%s': %s", t->path, strerror(errno));
        rc = -1;
    }
    free(t->named);
    free(t->path);
    free(t);
    return rc;
}
