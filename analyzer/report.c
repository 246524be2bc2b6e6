/*
 * report.c - what an analysis decided and why: a summary, an explanation for
 * people, and the stable JSON document (docs/report-format.md).
 */
#define _GNU_SOURCE
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis.h"
#include "json_writer.h"

#define KA_REPORT_FORMAT "kaudit-report"
#define KA_REPORT_VERSION 2

void ka_report_summary(FILE *f, const struct ka_analysis *a)
{
    fprintf(f, "task %s  session %s\n", a->task_id, a->session_dir);
    if (a->inventory_file)
        fprintf(f, "  inventory: %s (digest %s)\n", a->inventory_file, a->inventory_digest);
    else
        fprintf(f, "  inventory: none (name matches and module digests not checked)\n");
    for (int i = 0; i < KA_AXIS_COUNT; i++) {
        const struct ka_axis_result *ax = &a->axis[i];
        fprintf(f, "  %-15s %-12s%s%s\n", ka_axis_name(i), ka_verdict_name(ax->verdict), ax->root_cause ? " " : "",
                ax->root_cause ? ax->root_cause : "");
    }
    fprintf(f, "  %-15s %-12s %s\n", "certificate", ka_certificate_name(a->certificate),
            a->certificate_reason ? a->certificate_reason : "");
    if (a->outcome[0])
        fprintf(f, "  %-15s %-12s weak verifier %s: %s\n", "outcome", a->outcome,
                a->weak == KA_WEAK_ACCEPT ? "ACCEPT" : "REJECT", a->outcome_reason ? a->outcome_reason : "");
}

/* The text report shows this many findings of one code per axis and kind, then
 * one line that counts the rest (the JSON report lists every finding). */
#define KA_FINDINGS_SHOWN 12

static void print_findings(FILE *f, const struct ka_analysis *a, enum ka_axis axis)
{
    static const enum ka_finding_kind order[] = { KA_FINDING_CONVICTS, KA_FINDING_UNRESOLVED, KA_FINDING_SUPPORT,
                                                  KA_FINDING_SIGNAL };
    static const char *const label[] = { "", "convicts", "unresolved", "signal", "support" };
    struct shown {
        const char *code;
        unsigned count;
    } *codes = NULL;
    size_t n_codes = 0, cap_codes = 0;
    for (size_t o = 0; o < sizeof order / sizeof order[0]; o++) {
        n_codes = 0;
        for (size_t i = 0; i < a->n_findings; i++) {
            const struct ka_finding *x = &a->findings[i];
            if (x->axis != axis || x->kind != order[o])
                continue;
            struct shown *c = NULL;
            for (size_t j = 0; j < n_codes; j++)
                if (!strcmp(codes[j].code, x->code))
                    c = &codes[j];
            if (!c && n_codes == cap_codes) {
                size_t cap = cap_codes ? 2 * cap_codes : 16;
                struct shown *grown = realloc(codes, cap * sizeof *grown);
                if (grown)
                    codes = grown, cap_codes = cap;
            }
            if (!c && n_codes < cap_codes) {
                c = &codes[n_codes++];
                c->code = x->code;
                c->count = 0;
            }
            if (c && ++c->count > KA_FINDINGS_SHOWN)
                continue;
            fprintf(f, "    [%s] %s: %s%s%s%s\n", label[x->kind], x->code, x->text ? x->text : "",
                    x->process ? " (" : "", x->process ? x->process : "", x->process ? ")" : "");
        }
        for (size_t j = 0; j < n_codes; j++)
            if (codes[j].count > KA_FINDINGS_SHOWN)
                fprintf(f, "    [%s] %s: ... and %u more like the above (all of them in the JSON report)\n",
                        label[order[o]], codes[j].code, codes[j].count - KA_FINDINGS_SHOWN);
    }
    free(codes);
}

void ka_report_text(FILE *f, const struct ka_analysis *a)
{
    fprintf(f, "KernelAudit report\n");
    fprintf(f, "  session:   %s\n", a->session_dir);
    fprintf(f, "  contract:  %s (task %s, digest %s)\n", a->contract_file, a->task_id, a->contract_digest);
    if (a->inventory_file)
        fprintf(f, "  inventory: %s (digest %s)\n", a->inventory_file, a->inventory_digest);
    else
        fprintf(f, "  inventory: none (name matches and module digests not checked)\n");
    fprintf(f, "  read:      %zu traces (%zu truncated, %zu unreadable), %llu kernels, %llu vendor calls, %u timed "
               "windows%s\n",
            a->traces, a->truncated_traces, a->unreadable_traces, (unsigned long long)a->kernels,
            (unsigned long long)a->vendor_calls, a->timed_windows, a->phases_seen ? ", phase marks present" : ", no phase marks");
    fprintf(f, "\nkernels by origin and party (count / GPU ms)\n");
    fprintf(f, "  %-13s", "");
    for (int p = 0; p < KA_PARTY_COUNT; p++)
        fprintf(f, " %20s", ka_party_name(p));
    fprintf(f, "\n");
    for (int o = 0; o < KA_ORIGIN_COUNT; o++) {
        fprintf(f, "  %-13s", ka_origin_name(o));
        for (int p = 0; p < KA_PARTY_COUNT; p++) {
            char cell[64];
            snprintf(cell, sizeof cell, "%llu / %.3f", (unsigned long long)a->kernels_by[o][p],
                     (double)a->gpu_ns_by[o][p] / 1e6);
            fprintf(f, " %20s", cell);
        }
        fprintf(f, "\n");
    }
    if (a->dominant_class >= 0)
        fprintf(f, "\nreference work: %.4g (dominant class %s: thresholds are relative to it)\n", a->reference_total,
                ka_class_name(a->dominant_class));
    for (int i = 0; i < KA_AXIS_COUNT; i++) {
        const struct ka_axis_result *ax = &a->axis[i];
        fprintf(f, "\n%s: %s%s%s\n", ka_axis_name(i), ka_verdict_name(ax->verdict), ax->root_cause ? " — " : "",
                ax->root_cause ? ax->root_cause : "");
        print_findings(f, a, (enum ka_axis)i);
    }
    fprintf(f, "\ncertificate: %s — %s\n", ka_certificate_name(a->certificate),
            a->certificate_reason ? a->certificate_reason : "");
    if (a->outcome[0])
        fprintf(f, "outcome: %s — %s\n", a->outcome, a->outcome_reason ? a->outcome_reason : "");
}

/* Every string of the JSON report: names come from arbitrary binaries and
 * cJSON copies their bytes as they are, so invalid UTF-8 is repaired first
 * (session/json_writer.h, kat_utf8_repair): the report is always valid. */
static cJSON *add_string(cJSON *object, const char *key, const char *value)
{
    char *valid = kat_utf8_repair(value ? value : "", value ? strlen(value) : 0);
    if (!valid)
        return NULL;
    cJSON *item = cJSON_AddStringToObject(object, key, valid);
    free(valid);
    return item;
}

char *ka_report_json(const struct ka_analysis *a)
{
    cJSON *root = cJSON_CreateObject();
    if (!root)
        return NULL;
    add_string(root, "format", KA_REPORT_FORMAT);
    cJSON_AddNumberToObject(root, "version", KA_REPORT_VERSION);
    add_string(root, "tool_version", KAUDIT_VERSION);
    add_string(root, "session", a->session_dir);
    cJSON *contract = cJSON_AddObjectToObject(root, "contract");
    add_string(contract, "file", a->contract_file);
    add_string(contract, "task_id", a->task_id);
    add_string(contract, "digest", a->contract_digest);
    if (a->inventory_file) {
        cJSON *inv = cJSON_AddObjectToObject(root, "inventory");
        add_string(inv, "file", a->inventory_file);
        add_string(inv, "digest", a->inventory_digest);
    } else {
        cJSON_AddNullToObject(root, "inventory");
    }
    cJSON *axes = cJSON_AddObjectToObject(root, "axes");
    for (int i = 0; i < KA_AXIS_COUNT; i++) {
        cJSON *ax = cJSON_AddObjectToObject(axes, ka_axis_name(i));
        add_string(ax, "verdict", ka_verdict_name(a->axis[i].verdict));
        if (a->axis[i].root_cause)
            add_string(ax, "root_cause", a->axis[i].root_cause);
        else
            cJSON_AddNullToObject(ax, "root_cause");
        /* version 2: where the semantic verdict came from, so that `kaudit report DIR` restores it */
        if (i == KA_AXIS_SEMANTIC)
            add_string(ax, "source", a->semantic_supplied ? "supplied" : "none");
    }
    cJSON *cert = cJSON_AddObjectToObject(root, "certificate");
    add_string(cert, "aggregate", ka_certificate_name(a->aggregate));
    add_string(cert, "verdict", ka_certificate_name(a->certificate));
    add_string(cert, "reason", a->certificate_reason ? a->certificate_reason : "");
    if (a->outcome[0]) {
        cJSON *oc = cJSON_AddObjectToObject(root, "outcome");
        add_string(oc, "weak", a->weak == KA_WEAK_ACCEPT ? "ACCEPT" : "REJECT");
        add_string(oc, "code", a->outcome);
        add_string(oc, "reason", a->outcome_reason ? a->outcome_reason : "");
    } else {
        cJSON_AddNullToObject(root, "outcome");
    }
    cJSON *findings = cJSON_AddArrayToObject(root, "findings");
    for (size_t i = 0; i < a->n_findings; i++) {
        const struct ka_finding *x = &a->findings[i];
        cJSON *o = cJSON_CreateObject();
        add_string(o, "axis", ka_axis_name(x->axis));
        add_string(o, "kind", ka_finding_kind_name(x->kind));
        add_string(o, "code", x->code);
        add_string(o, "text", x->text ? x->text : "");
        if (x->process)
            add_string(o, "trace", x->process);
        else
            cJSON_AddNullToObject(o, "trace");
        if (x->time_ns)
            cJSON_AddNumberToObject(o, "time_ns", (double)x->time_ns);
        else
            cJSON_AddNullToObject(o, "time_ns");
        if (x->n_fields) {
            /* version 2: the finding's structured fields; integers exact (ns times exceed 2^53) */
            cJSON *fo = cJSON_AddObjectToObject(o, "fields");
            for (size_t k = 0; k < x->n_fields; k++) {
                const struct ka_field *fd = &x->fields[k];
                if (fd->type == KA_FIELD_STRING) {
                    add_string(fo, fd->key, fd->s);
                } else if (fd->type == KA_FIELD_UINT) {
                    char num[24];
                    snprintf(num, sizeof num, "%llu", (unsigned long long)fd->u);
                    cJSON_AddRawToObject(fo, fd->key, num);
                } else if (isfinite(fd->d)) {
                    cJSON_AddNumberToObject(fo, fd->key, fd->d);
                } else {
                    cJSON_AddNullToObject(fo, fd->key);
                }
            }
        }
        cJSON_AddItemToArray(findings, o);
    }
    cJSON *stats = cJSON_AddObjectToObject(root, "read");
    cJSON_AddNumberToObject(stats, "traces", (double)a->traces);
    cJSON_AddNumberToObject(stats, "truncated_traces", (double)a->truncated_traces);
    cJSON_AddNumberToObject(stats, "unreadable_traces", (double)a->unreadable_traces);
    cJSON_AddNumberToObject(stats, "kernels", (double)a->kernels);
    cJSON_AddNumberToObject(stats, "vendor_calls", (double)a->vendor_calls);
    cJSON_AddNumberToObject(stats, "api_records", (double)a->api_records);
    cJSON_AddNumberToObject(stats, "timed_windows", a->timed_windows);
    cJSON_AddBoolToObject(stats, "phase_marks", a->phases_seen);
    cJSON_AddNumberToObject(stats, "build_failures", a->build_failures);
    cJSON_AddNumberToObject(stats, "build_processes", a->build_processes);
    if (a->build_wall_s >= 0)
        cJSON_AddNumberToObject(stats, "build_wall_s", a->build_wall_s);
    else
        cJSON_AddNullToObject(stats, "build_wall_s");
    cJSON *builds = cJSON_AddArrayToObject(stats, "builds");
    for (size_t i = 0; i < a->n_builds && i < KA_BUILDS_REPORTED; i++) {
        cJSON *b = cJSON_CreateObject();
        add_string(b, "folder", a->builds[i].folder);
        cJSON_AddNumberToObject(b, "processes", a->builds[i].processes);
        cJSON_AddNumberToObject(b, "wall_s", a->builds[i].wall_s);
        cJSON *tools = cJSON_AddArrayToObject(b, "tools");
        for (unsigned k = 0; k < a->builds[i].n_tools; k++) {
            const struct ka_build_tool *t = &a->builds[i].tools[k];
            cJSON *o = cJSON_CreateObject();
            add_string(o, "name", t->name);
            cJSON_AddNumberToObject(o, "processes", t->processes);
            cJSON_AddNumberToObject(o, "wall_s", t->wall_s);
            cJSON_AddItemToArray(tools, o);
        }
        cJSON_AddNumberToObject(b, "tools_seen", a->builds[i].tools_seen);
        cJSON_AddItemToArray(builds, b);
    }
    cJSON *kb = cJSON_AddObjectToObject(root, "kernels");
    for (int o = 0; o < KA_ORIGIN_COUNT; o++) {
        cJSON *row = cJSON_AddObjectToObject(kb, ka_origin_name(o));
        for (int p = 0; p < KA_PARTY_COUNT; p++) {
            cJSON *cell = cJSON_AddObjectToObject(row, ka_party_name(p));
            cJSON_AddNumberToObject(cell, "count", (double)a->kernels_by[o][p]);
            cJSON_AddNumberToObject(cell, "gpu_ns", (double)a->gpu_ns_by[o][p]);
        }
    }
    cJSON *work = cJSON_AddObjectToObject(root, "work");
    cJSON_AddNumberToObject(work, "reference_total", a->reference_total);
    if (a->dominant_class >= 0)
        add_string(work, "dominant_class", ka_class_name(a->dominant_class));
    else
        cJSON_AddNullToObject(work, "dominant_class");
    cJSON *cw = cJSON_AddObjectToObject(work, "candidate");
    cJSON *rw = cJSON_AddObjectToObject(work, "reference_measured");
    for (int i = 0; i < KA_CLASS_COUNT; i++) {
        cJSON_AddNumberToObject(cw, ka_class_name(i), a->candidate_work.amount[i]);
        cJSON_AddNumberToObject(rw, ka_class_name(i), a->reference_work.amount[i]);
    }
    char *text = cJSON_Print(root);
    cJSON_Delete(root);
    return text;
}
