/*
 * analysis.c - from a recorded session and a contract to axis verdicts and a
 * certificate (analysis.h, docs/analysis.md).
 *
 * Per trace: pass 1 indexes everything but kernels (struct ka_proc), pass 2
 * streams the kernels and classifies each one.  After all traces, the
 * session-level rules (work thresholds, build failures, R-A) turn the sums and
 * findings into verdicts.  This file is the driver; the stages are the files
 * analysis_internal.h lists.
 */
#define _GNU_SOURCE
#include "analysis.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis_internal.h"
#include "inventory.h"
#include "session.h"
#include "toolbox.h"

static void session_facts_free(struct ka_session_facts *s)
{
    for (size_t i = 0; i < s->n_procs; i++) {
        free(s->procs[i].argv0);
        free(s->procs[i].file);
    }
    free(s->procs);
    for (size_t i = 0; i < s->n_child_exits; i++)
        free(s->child_exits[i].parent);
    free(s->child_exits);
    for (size_t i = 0; i < s->n_child_starts; i++)
        free(s->child_starts[i].parent);
    free(s->child_starts);
    free(s->missing_call_trace);
    free(s->cand_phases);
    memset(s, 0, sizeof *s);
}

/* ---- what info says against what the traces hold ----------------------------- */

/* kaudit run counts the session's traces at the end (info processes,
 * kernels, vendor_calls: session/info_writer.c) with the reader analyze
 * uses.  Different counts mean the traces changed after the run (a session
 * without a seal, or one recorded before seals). */
struct info_counts {
    unsigned long long processes, kernels, vendor_calls;
};

static int info_count(const struct kat_session *s, const char *key, unsigned long long *v)
{
    const char *text = kat_session_info(s, key);
    char *end;
    if (!text || !*text)
        return 0;
    errno = 0;
    *v = strtoull(text, &end, 10);
    return !errno && !*end;
}

static int info_counts_read(const struct kat_session *s, struct info_counts *c)
{
    const char *status = kat_session_info(s, "status");
    /* counted only when the run ended: a session still "running" has none */
    if (!status || !strcmp(status, "running") || !strcmp(status, "preparing") || !strncmp(status, "not started", 11))
        return 0;
    return info_count(s, "processes", &c->processes) && info_count(s, "kernels", &c->kernels) &&
           info_count(s, "vendor_calls", &c->vendor_calls);
}

static void info_counts_check(struct ka_run *run, const struct info_counts *said)
{
    const struct ka_analysis *a = run->a;
    unsigned long long readable = a->traces - a->unreadable_traces;
    if (said->processes == readable && said->kernels == a->kernels && said->vendor_calls == a->vendor_calls)
        return;
    run->facts.traces_changed = 1;
    struct ka_finding *x = ka_add_finding(
        &run->findings, KA_AXIS_IMPLEMENTATION, KA_FINDING_UNRESOLVED, "info-counts-disagree", NULL, 0,
        "the session's info, written by kaudit run when the command ended, counts %llu traces, %llu kernels and %llu "
        "vendor calls; the traces now hold %llu, %llu and %llu: they were changed after the run",
        said->processes, said->kernels, said->vendor_calls, readable, (unsigned long long)a->kernels,
        (unsigned long long)a->vendor_calls);
    ka_field_u64(x, "info_kernels", said->kernels);
    ka_field_u64(x, "trace_kernels", a->kernels);
    ka_field_u64(x, "info_vendor_calls", said->vendor_calls);
    ka_field_u64(x, "trace_vendor_calls", a->vendor_calls);
}

/* ---- the pipeline ----------------------------------------------------------- */

static void analyze_trace(struct ka_run *run, const char *path, const char *file)
{
    struct ka_analysis *a = run->a;
    char err[1024];
    struct kat_trace *t = kat_trace_open(path, err, sizeof err);
    a->traces++;
    if (!t) {
        a->unreadable_traces++;
        run->facts.read_error = 1;
        ka_add_finding(&run->findings, KA_AXIS_IMPLEMENTATION, KA_FINDING_UNRESOLVED, "trace-unreadable", file, 0,
                       "%s", err);
        return;
    }
    struct ka_proc p;
    memset(&p, 0, sizeof p);
    p.file = strdup(file);
    const struct kat_file_header *h = kat_trace_header(t);
    p.pid = h->pid;
    p.ppid = h->ppid;
    struct ka_timing_rec *timing = NULL;
    size_t n_timing = 0;
    struct ka_event_rec *events = NULL;
    size_t n_events = 0;
    /* The process is the candidate's when the contract names its program. */
    ka_index_trace(run, t, &p, &timing, &n_timing, &events, &n_events);
    const char *exe = p.exe ? p.exe : "", *argv0 = p.argv0 ? p.argv0 : "";
    if (run->c->candidate.n_processes &&
        (ka_path_matches(exe, run->c->candidate.processes, run->c->candidate.n_processes) ||
         ka_path_matches(argv0, run->c->candidate.processes, run->c->candidate.n_processes))) {
        p.candidate_process = 1;
        for (size_t i = 0; i < p.n_modules; i++)
            run->facts.candidate_modules++;
    }
    p.build_tool = ka_is_build_tool(argv0, exe);
    ka_python_provenance_finding(&run->findings, &run->facts, &p, argv0, exe);
    if (run->opt->on_process)
        run->opt->on_process(run->opt->sink_arg, p.pid, p.argv ? p.argv : file);
    ka_finish_index(run, &p, timing, n_timing, events, n_events);
    if (p.untrusted_reference_phases) {
        struct ka_finding *x = ka_add_finding(
            &run->findings, KA_AXIS_IMPLEMENTATION, KA_FINDING_SIGNAL, "reference-phase-outside-reference-process",
            file, 0,
            "%u reference phases (NVTX ranges) were opened in pid %u (%s), which is not the reference's "
            "process: the work launched in them (and in Python frames of the reference's class names there) "
            "counts as the candidate's",
            p.untrusted_reference_phases, p.pid, argv0);
        ka_field_u64(x, "phases", p.untrusted_reference_phases);
        ka_field_u64(x, "pid", p.pid);
        ka_field_str(x, "program", argv0);
    }
    ka_bound_stop_events(t, &p, timing, n_timing);
    if (run->opt->on_stop_bounds)
        for (size_t w = 0; w < p.n_windows; w++)
            if (p.windows[w].end_bounded)
                run->opt->on_stop_bounds(run->opt->sink_arg, p.pid, p.windows[w].index, p.windows[w].end_stream,
                                         p.windows[w].end_lo_ns, p.windows[w].end_hi_ns, p.windows[w].elapsed_ms);
    free(timing);
    free(events);
    if (!p.complete) {
        a->truncated_traces++;
        /* A build tool or a helper that exec'd away is not evidence of lost kernels. */
        if (p.end_kind != KAT_END_EXEC) {
            run->facts.truncated = 1;
            struct ka_finding *x =
                ka_add_finding(&run->findings, KA_AXIS_IMPLEMENTATION, KA_FINDING_UNRESOLVED, "trace-truncated", file,
                               0,
                               "the trace of pid %u (%s) has no end record: the process was killed or crashed, and "
                               "kernels still in CUPTI's buffers were lost",
                               p.pid, argv0);
            ka_field_u64(x, "pid", p.pid);
            ka_field_str(x, "program", argv0);
        }
    }
    ka_stream_kernels(run, t, &p);
    if (p.unphased_compute) {
        struct ka_finding *x = ka_add_finding(
            &run->findings, KA_AXIS_IMPLEMENTATION, KA_FINDING_SIGNAL, "unphased-compute-in-candidate-process", file,
            0,
            "%llu launches or library calls of a family the candidate's process's harness never runs (GEMM, "
            "convolution, attention, normalization, softmax, pooling) were made outside every phase in pid %u "
            "(%s), which is not the reference's process: they count as the candidate's",
            (unsigned long long)p.unphased_compute, p.pid, argv0);
        ka_field_u64(x, "launches", p.unphased_compute);
        ka_field_u64(x, "pid", p.pid);
    }
    ka_note_reference_windows(run, &p);
    ka_check_window_work(&run->findings, &p);
    ka_vendor_call_items(&run->work, run->a, run->c, run->opt->inventory, &p);
    ka_timing_integrity(&run->findings, &run->timing, &p);
    ka_measurement_signals(&run->findings, run->c, &p);
    uint64_t header_start_ns = h->start_realtime_ns;
    kat_trace_close(t); /* h pointed into the mapping: not used from here on */

    if (!GROW(run->facts.procs, run->facts.n_procs, run->facts.cap_procs)) {
        struct ka_proc_summary *s = &run->facts.procs[run->facts.n_procs++];
        memset(s, 0, sizeof *s);
        s->pid = p.pid;
        s->ppid = p.ppid;
        s->argv0 = strdup(argv0);
        s->file = strdup(file);
        s->start_ns = p.start_ns ? p.start_ns : header_start_ns;
        s->build_tool = p.build_tool;
        s->status_known = p.end_known && p.status_known;
        s->status = p.status;
        s->end_kind = p.end_kind;
    }
    ka_proc_free(&p);
}

/* What kaudit run said in info about the run as a whole: a run that did
 * not start or was interrupted, traces refused or lost, processes without a
 * trace or not all seen, a session the command could write. */
static void session_info_findings(struct ka_run *r, const struct kat_session *s)
{
    const char *status = kat_session_info(s, "status");
    if (status && !strncmp(status, "not started", 11))
        ka_add_finding(&r->findings, KA_AXIS_IMPLEMENTATION, KA_FINDING_UNRESOLVED, "run-not-started", NULL, 0,
                       "the recorded run did not start: %s", status);
    /* kaudit run rewrites status when the command ends; still "running" (or
     * "preparing") means it was killed or is still at work: the session did
     * not end, whatever the traces say */
    if (status && (!strcmp(status, "running") || !strcmp(status, "preparing"))) {
        r->facts.session_incomplete = 1;
        ka_add_finding(&r->findings, KA_AXIS_IMPLEMENTATION, KA_FINDING_UNRESOLVED, "recording-interrupted", NULL, 0,
                       "the session's info still says '%s': kaudit run was killed before the command ended (or is "
                       "still running); what was recorded after its last copy is not in the session",
                       status);
    }
    /* what kaudit run's copier counted against the session (session-format.md, info) */
    static const struct {
        const char *key, *code, *text;
    } incomplete[] = {
        { "foreign_traces", "trace-from-another-session",
          "%s trace(s) handed over did not carry this session's token (copied in from another run): they were not "
          "copied, and the session is incomplete" },
        { "rejected_traces", "trace-rejected",
          "kaudit run refused %s trace(s) handed over by the run's processes (named for another process, or no "
          "trace; kaudit.log says which): a process tried to speak for another, and the session is incomplete" },
        /* a full disk: past that point a trace holds what the disk kept, which the seal cannot vouch for */
        { "copy_failures", "trace-copy-failed",
          "kaudit run could not copy %s trace(s) into the session completely (kaudit.log says why): the session "
          "is incomplete" },
    };
    for (size_t i = 0; i < sizeof incomplete / sizeof incomplete[0]; i++) {
        const char *count = kat_session_info(s, incomplete[i].key);
        if (count && strcmp(count, "0") != 0) {
            r->facts.session_incomplete = 1;
            ka_add_finding(&r->findings, KA_AXIS_IMPLEMENTATION, KA_FINDING_UNRESOLVED, incomplete[i].code, NULL, 0,
                           incomplete[i].text, count);
        }
    }
    /* processes kaudit run saw that left no trace (ran without the preload) */
    const char *untraced = kat_session_info(s, "untraced_processes");
    if (untraced && strcmp(untraced, "0") != 0) {
        r->facts.missing_traces++;
        ka_add_finding(&r->findings, KA_AXIS_IMPLEMENTATION, KA_FINDING_UNRESOLVED, "process-without-trace", NULL, 0,
                       "kaudit run saw processes of the run that have no trace (they ran without the preload, as "
                       "a raw clone and execve with an empty environment does): %s",
                       untraced);
    }
    /* how kaudit run saw the run's processes: anything but the kernel's
     * events leaves a short untraced process possible.  Sessions recorded
     * before the key existed (census only, not said) keep their old reading:
     * no finding (docs/session-format.md). */
    const char *accounting = kat_session_info(s, "process_accounting");
    if (accounting && strcmp(accounting, "proc-connector") != 0) {
        r->facts.processes_unaccounted = 1;
        ka_add_finding(&r->findings, KA_AXIS_IMPLEMENTATION, KA_FINDING_UNRESOLVED, "process-accounting-incomplete",
                       NULL, 0,
                       "kaudit run could not see every process of the run (process_accounting: %s): a process "
                       "shorter than its 50 ms census may have run without a trace unseen",
                       accounting);
    }
    /* Sessions recorded before kaudit protected them have no such key. */
    const char *protection = kat_session_info(s, "session_protection");
    if (protection && strncmp(protection, "read-only", 9) != 0)
        ka_add_finding(&r->findings, KA_AXIS_IMPLEMENTATION, KA_FINDING_SIGNAL, "session-writable", NULL, 0,
                       "reduced assurance: the recorded command could write the session directory (%s)",
                       protection);
}

/* What the traces' records lack: vendor call windows without their call's
 * record, kernels without a launch record. */
static void record_findings(struct ka_run *r)
{
    if (r->facts.windows_without_call) {
        r->facts.traces_changed = 1;
        struct ka_finding *x = ka_add_finding(
            &r->findings, KA_AXIS_IMPLEMENTATION, KA_FINDING_UNRESOLVED, "vendor-call-missing",
            r->facts.missing_call_trace, 0,
            "%llu kernels ran inside vendor call windows (call %llu first) that have no vendor call record, in traces "
            "that ended normally: a call's record is written when it returns, so records were removed, and what "
            "those calls did is not known",
            (unsigned long long)r->facts.windows_without_call, (unsigned long long)r->facts.missing_call_example);
        ka_field_u64(x, "kernels", r->facts.windows_without_call);
        ka_field_u64(x, "call_id", r->facts.missing_call_example);
    }
    if (r->facts.kernels_without_api)
        ka_field_u64(ka_add_finding(&r->findings, KA_AXIS_IMPLEMENTATION, KA_FINDING_SIGNAL,
                                    "kernels-without-launch-record", NULL, 0,
                                    "%llu kernels have no launch API record: their thread and phase are unknown",
                                    (unsigned long long)r->facts.kernels_without_api),
                     "kernels", r->facts.kernels_without_api);
}

int ka_analyze(const char *dir, const struct ka_contract *c, const struct ka_options *opt, struct ka_analysis **out,
               char *err, size_t n)
{
    *out = NULL;
    struct kat_session *s;
    if (kat_session_open(dir, &s, err, n) != 0)
        return -1;
    struct ka_options none;
    if (!opt) {
        memset(&none, 0, sizeof none);
        opt = &none;
    }
    struct ka_analysis *a = calloc(1, sizeof *a);
    if (!a) {
        kat_session_close(s);
        snprintf(err, n, "out of memory");
        return -1;
    }
    a->session_dir = strdup(dir);
    a->contract_file = strdup(c->file);
    a->task_id = strdup(c->task_id);
    kinv_digest_hex(c->digest, a->contract_digest);
    a->dominant_class = -1;
    if (opt->inventory) {
        a->inventory_file = strdup(opt->inventory_path ? opt->inventory_path : "");
        kinv_digest_hex(opt->inventory->digest, a->inventory_digest);
    }
    struct ka_run run;
    memset(&run, 0, sizeof run);
    run.a = a;
    run.c = c;
    run.opt = opt;
    run.findings.a = a;

    session_info_findings(&run, s);
    const char *command_pid = kat_session_info(s, "command_pid");
    run.command_pid = command_pid ? strtol(command_pid, NULL, 10) : 0;
    size_t count = kat_session_trace_count(s);
    if (!count) {
        run.facts.read_error = 1;
        ka_add_finding(&run.findings, KA_AXIS_IMPLEMENTATION, KA_FINDING_UNRESOLVED, "no-traces", NULL, 0,
                       "the session holds no trace: nothing was recorded");
    }
    struct info_counts said;
    int have_said = info_counts_read(s, &said);
    /* the builds are read also where the trace axes are not judged (--device
       cpu): their tools' times are the audit's cost, no evidence; not from a
       session whose seal is broken */
    if (!opt->trace_axes_inconclusive)
        ka_collect_built_objects(&run, s);
    /* the command's own process first (kaudit audit: the runner, whose marks the
       others' analysis reads), then the rest */
    char first[32] = "";
    if (run.command_pid > 0)
        snprintf(first, sizeof first, "p%ld-", run.command_pid);
    for (int pass = 0; pass < 2; pass++)
        for (size_t i = 0; i < count && !opt->trace_axes_unsupported; i++) {
            const char *name = kat_session_trace_name(s, i);
            int is_first = first[0] && name && !strncmp(name, first, strlen(first));
            if (is_first == (pass == 0))
                analyze_trace(&run, kat_session_trace_path(s, i), name);
        }
    kat_session_close(s);
    if (have_said && !opt->trace_axes_unsupported)
        info_counts_check(&run, &said);
    if (opt->trace_axes_unsupported) {
        for (int axis = KA_AXIS_IMPLEMENTATION; axis <= KA_AXIS_MEASUREMENT; axis++) {
            a->axis[axis].verdict = opt->trace_axes_inconclusive ? KA_INCONCLUSIVE : KA_UNSUPPORTED;
            a->axis[axis].root_cause = strdup(opt->trace_axes_unsupported);
        }
        /* the causal probe needs no trace: it can convict on its own (probe.c) */
        if (!opt->trace_axes_inconclusive)
            ka_probe_only_verdict(&run.findings, opt->probe, c, opt->semantic_evidence, a);
        ka_aggregate(&run.findings, opt, c, a);
        goto done;
    }

    record_findings(&run);
    ka_check_reference_windows(&run);
    ka_account_processes(&run.findings, &run.facts);
    ka_build_failures(&run.findings, &run.facts, a);
    ka_implementation_verdict(&run.findings, &run.work, &run.facts, c, opt->probe, opt->semantic_evidence, a);
    ka_measurement_verdict(&run.findings, &run.timing, &run.facts, &run.work, c, a);
    ka_aggregate(&run.findings, opt, c, a);
done:
    ka_work_tally_free(&run.work);
    ka_built_objects_free(&run);
    ka_reference_windows_free(&run);
    session_facts_free(&run.facts);
    ka_findings_finish(&run.findings);
    ka_findings_free(&run.findings);
    *out = a;
    return 0;
}

void ka_analysis_free(struct ka_analysis *a)
{
    if (!a)
        return;
    for (size_t i = 0; i < a->n_builds; i++)
        free(a->builds[i].folder);
    free(a->builds);
    free(a->session_dir);
    free(a->contract_file);
    free(a->task_id);
    free(a->inventory_file);
    for (int i = 0; i < KA_AXIS_COUNT; i++)
        free(a->axis[i].root_cause);
    free(a->certificate_reason);
    free(a->outcome_reason);
    free(a->degenerate_reason);
    for (size_t i = 0; i < a->n_findings; i++) {
        free(a->findings[i].text);
        free(a->findings[i].process);
        for (size_t j = 0; j < a->findings[i].n_fields; j++)
            free(a->findings[i].fields[j].s);
        free(a->findings[i].fields);
    }
    free(a->findings);
    free(a);
}
