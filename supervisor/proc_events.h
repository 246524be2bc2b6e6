/*
 * proc_events.h - every process of a run, however short, as the kernel
 * reports it (docs/threat-model.md, "run work in a process kaudit does not
 * trace").
 *
 * The census (run_census.h) looks at /proc every 50 ms and misses a process
 * that starts and ends in between, all the more when SIGCHLD is ignored and
 * the kernel reaps it at once.  The proc connector (netlink
 * NETLINK_CONNECTOR, CN_IDX_PROC) reports every fork, exec and exit of the
 * system as it happens; kaudit run keeps those of its own descendants: the
 * processes whose parent, when they were made, was kaudit run (the command,
 * and any process made with CLONE_PARENT from it) or one of them already
 * kept.  Lineage is by fork, not by the parent a process has now, so a
 * double fork stays in view without the subreaper.
 *
 * Listening needs CAP_NET_ADMIN in the initial user and network namespace
 * (kaudit run as root in CI and on the GPU machine has it); elsewhere
 * proc_events_open fails with the reason and the census alone accounts for
 * the run (info process_accounting: census).  The harness is not touched:
 * the kernel sends the events whatever the process does, nothing is
 * installed in it, and nothing waits on kaudit.
 *
 * A thread of kaudit run reads the events as they come, so that a process
 * that lives a millisecond can still be looked at in /proc for its program
 * (static or not) and its start time; one already gone by then is kept with
 * its start time from the event's clock and its program unknown.
 */
#ifndef KAUDIT_PROC_EVENTS_H
#define KAUDIT_PROC_EVENTS_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* One process (a thread group) of the run, from its fork to its end. */
struct proc_instance {
    pid_t pid;
    unsigned long long start;   /* /proc/PID/stat field 22 (clock ticks since boot); from the fork
                                 * event's time when it ended before it could be read (within a tick) */
    char comm[20];              /* its program's name (the kernel's comm, 15 characters) */
    unsigned execs;             /* successful execs: program images after the one it was forked with */
    uint64_t first_exec_ns;     /* CLOCK_MONOTONIC of its first and last exec (0: none) */
    uint64_t last_exec_ns;
    int is_static;              /* its last program has no program interpreter: 1, 0, -1 unknown (it
                                 * ended before kaudit could look) */
    int superseded;             /* its pid was given to a later process: it has ended */
};

struct proc_events {
    int fd;                     /* the connector's socket, -1 when not listening */
    int stop[2];                /* the thread's wake-up: written to stop it */
    pthread_t thread;
    int thread_running;
    pthread_mutex_t lock;       /* over the list and the counters below */
    pid_t supervisor;           /* kaudit run: the parent of the run's first process */
    struct proc_instance *procs;
    size_t n, cap;
    unsigned long overflows;    /* the socket's buffer overflowed (ENOBUFS): events were lost */
    int too_many;               /* more processes than the list holds: the rest are not kept */
    uint64_t boottime_offset_ns;/* CLOCK_BOOTTIME - CLOCK_MONOTONIC, for start times from event times */
    long ticks_per_s;
    char why[160];              /* why not listening */
};

/* Listens to the kernel's process events for the descendants of the
 * calling process.  Before the command is forked, so that its first events
 * are queued; events are read once proc_events_start has run.  0, or -1 with
 * e->why (the connector absent or refused). */
int proc_events_open(struct proc_events *e);

/* Starts the thread that reads the events.  0, or -1 with e->why (then
 * proc_events_stop still drains what was queued). */
int proc_events_start(struct proc_events *e);

/* After the command has ended: reads every event queued until now, then
 * stops the thread and closes the socket.  The list stays for reading. */
void proc_events_stop(struct proc_events *e);

/* Whether the list is whole: listening from before the command's fork to
 * proc_events_stop, no event lost, no process left out, and the command's
 * own fork among the events (where the kernel accepts a listener that may
 * not listen, it sends nothing, and this tells). */
int proc_events_complete(const struct proc_events *e, pid_t command);

/* The process pid that started at start (clock ticks, within a tick), or
 * NULL.  After proc_events_stop. */
const struct proc_instance *proc_events_find(const struct proc_events *e, pid_t pid, unsigned long long start);

void proc_events_free(struct proc_events *e);

#endif
