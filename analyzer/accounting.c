/*
 * accounting.c - every process accounted for (docs/analysis.md, "Process
 * accounting").
 *
 * A trace records the children its process started (KAT_REC_FORK: fork and
 * posix_spawn) and reaped (KAT_REC_CHILD_EXIT), and every process the
 * preload runs in writes a trace of its own from its first moment (a fork
 * child writes one before it does anything else).  So a child pid that no
 * trace belongs to is a process whose work is unknown: its trace was deleted,
 * or it ran without the preload (a static program, a raw clone, a scrubbed
 * environment).  Either way the session is incomplete, and the axes that read
 * kernels cannot PASS on it.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>

#include "analysis_internal.h"

static int has_trace(const struct ka_session_facts *fs, uint32_t pid)
{
    for (size_t i = 0; i < fs->n_procs; i++)
        if (fs->procs[i].pid == pid)
            return 1;
    return 0;
}

void ka_account_processes(struct ka_findings *f, struct ka_session_facts *fs)
{
    for (size_t i = 0; i < fs->n_child_starts; i++) {
        const struct ka_child_start *cs = &fs->child_starts[i];
        if (has_trace(fs, cs->pid))
            continue;
        fs->missing_traces++;
        struct ka_finding *x = ka_add_finding(
            f, KA_AXIS_IMPLEMENTATION, KA_FINDING_UNRESOLVED, "process-without-trace", cs->parent, cs->time_ns,
            "%s started pid %u, which has no trace: what it ran is not known (its trace was removed, or it ran "
            "without the preload)",
            cs->kind == KAT_FORK_POSIX_SPAWN ? "a posix_spawn" : "a fork", cs->pid);
        ka_field_u64(x, "pid", cs->pid);
        ka_field_str(x, "parent_trace", cs->parent ? cs->parent : "");
    }
    /* reaped children that no trace saw start (a raw clone, a vfork) and none belongs to */
    for (size_t i = 0; i < fs->n_child_exits; i++) {
        const struct ka_child_exit *ce = &fs->child_exits[i];
        int started = 0;
        for (size_t j = 0; j < fs->n_child_starts && !started; j++)
            started = fs->child_starts[j].pid == ce->pid;
        if (started || has_trace(fs, ce->pid))
            continue;
        fs->missing_traces++;
        struct ka_finding *x = ka_add_finding(
            f, KA_AXIS_IMPLEMENTATION, KA_FINDING_UNRESOLVED, "process-without-trace", ce->parent, 0,
            "a child pid %u was reaped that no trace saw start and none belongs to: what it ran is not known",
            ce->pid);
        ka_field_u64(x, "pid", ce->pid);
        ka_field_str(x, "parent_trace", ce->parent ? ce->parent : "");
    }
}
