/*
 * test_host_clock.c - kaudit's host clock (preload/host_clock.c) against
 * clock_gettime(CLOCK_REALTIME): every reading lies between a system
 * reading taken just before and one just after it (within TOLERANCE_NS),
 * on one thread and on several at once, after the rate is calibrated and
 * across anchor renewals; a thread's readings never go back; where the
 * kernel's clocksource is the TSC the TSC path is the one taken, and
 * KAUDIT_HOST_CLOCK=realtime turns it off.
 *
 * Each test runs in a process of its own (Criterion's default), so the
 * clock's one-time decision is made afresh in each.
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <pthread.h>
#include <signal.h>
#include <sys/time.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "preload_internal.h"

/* host_clock.c's bound is 0.5 us (NTP's largest frequency correction over
 * one anchor's millisecond); the rest is room for the two system reads. */
#define TOLERANCE_NS 2000ull

static uint64_t system_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int kernel_keeps_time_with_tsc(void)
{
    FILE *f = fopen("/sys/devices/system/clocksource/clocksource0/current_clocksource", "r");
    char text[32] = {0};
    if (!f)
        return 0;
    int ok = fgets(text, sizeof text, f) != NULL && strcmp(text, "tsc\n") == 0;
    fclose(f);
#if !defined(__x86_64__)
    ok = 0;     /* host_clock.c reads the system clock there whatever the kernel uses */
#endif
    return ok;
}

struct bracket_run {
    uint64_t duration_ns;
    uint64_t readings, outside, went_back;
    uint64_t worst_outside_ns;
};

/* Read for duration_ns, each reading bracketed by two system readings. */
static void *bracket(void *arg)
{
    struct bracket_run *run = arg;
    uint64_t end = system_ns() + run->duration_ns, last = 0;
    for (;;) {
        uint64_t before = system_ns();
        uint64_t ours = kat_now_ns();
        uint64_t after = system_ns();
        run->readings++;
        if (ours + TOLERANCE_NS < before || ours > after + TOLERANCE_NS) {
            run->outside++;
            uint64_t off = ours < before ? before - ours : ours - after;
            if (off > run->worst_outside_ns)
                run->worst_outside_ns = off;
        }
        if (ours < last)
            run->went_back++;
        last = ours;
        if (after > end)
            return NULL;
    }
}

static void wait_calibrated(void)
{
    /* the rate is measured once the process is 20 ms into reading */
    uint64_t end = system_ns() + 60000000ull;
    while (system_ns() < end)
        (void)kat_now_ns();
}

Test(host_clock, takes_the_tsc_where_the_kernel_does)
{
    int tsc = kernel_keeps_time_with_tsc();
    cr_expect_str_eq(kat_host_clock_name(), tsc ? "tsc" : "realtime",
                     "the kernel's clocksource is %s", tsc ? "tsc" : "not tsc");
}

Test(host_clock, realtime_when_asked)
{
    setenv("KAUDIT_HOST_CLOCK", "realtime", 1);
    cr_expect_str_eq(kat_host_clock_name(), "realtime");
    struct bracket_run run = { .duration_ns = 50000000ull };
    bracket(&run);
    cr_expect_eq(run.outside, 0);
}

Test(host_clock, agrees_with_the_system_clock_on_one_thread)
{
    wait_calibrated();
    /* 300 ms: some 300 anchor renewals on this thread */
    struct bracket_run run = { .duration_ns = 300000000ull };
    bracket(&run);
    cr_expect_gt(run.readings, 1000);
    cr_expect_eq(run.outside, 0, "%llu of %llu readings outside [before, after] +- %llu ns (worst %llu ns)",
                 (unsigned long long)run.outside, (unsigned long long)run.readings,
                 (unsigned long long)TOLERANCE_NS, (unsigned long long)run.worst_outside_ns);
    cr_expect_eq(run.went_back, 0, "%llu readings went back", (unsigned long long)run.went_back);
}

Test(host_clock, agrees_with_the_system_clock_on_several_threads)
{
    wait_calibrated();
    enum { THREADS = 4 };
    pthread_t threads[THREADS];
    struct bracket_run runs[THREADS];
    for (int i = 0; i < THREADS; i++) {
        runs[i] = (struct bracket_run){ .duration_ns = 200000000ull };
        cr_assert_eq(pthread_create(&threads[i], NULL, bracket, &runs[i]), 0);
    }
    for (int i = 0; i < THREADS; i++) {
        pthread_join(threads[i], NULL);
        cr_expect_eq(runs[i].outside, 0, "thread %d: %llu of %llu readings outside (worst %llu ns)", i,
                     (unsigned long long)runs[i].outside, (unsigned long long)runs[i].readings,
                     (unsigned long long)runs[i].worst_outside_ns);
        cr_expect_eq(runs[i].went_back, 0);
    }
}

Test(host_clock, agrees_before_it_is_calibrated)
{
    /* the process's first milliseconds: the system clock itself */
    struct bracket_run run = { .duration_ns = 5000000ull };
    bracket(&run);
    cr_expect_eq(run.outside, 0);
}

Test(host_clock, renews_its_anchor_after_a_pause)
{
    wait_calibrated();
    /* a thread that sleeps past its anchor's millisecond renews it: the
     * first reading after the pause is as good as any */
    for (int i = 0; i < 50; i++) {
        struct timespec pause = { 0, 3000000 };
        nanosleep(&pause, NULL);
        uint64_t before = system_ns(), ours = kat_now_ns(), after = system_ns();
        cr_expect(ours + TOLERANCE_NS >= before && ours <= after + TOLERANCE_NS,
                  "after pause %d: %llu outside [%llu, %llu]", i, (unsigned long long)ours,
                  (unsigned long long)before, (unsigned long long)after);
    }
}

/* A signal handler reading the clock, bracketed like the main loop, about
 * every 50 us: it lands inside renewals and inside reads of the anchor. */
static volatile sig_atomic_t handler_readings, handler_outside;

static void read_in_handler(int sig)
{
    (void)sig;
    uint64_t before = system_ns(), ours = kat_now_ns(), after = system_ns();
    handler_readings++;
    if (ours + TOLERANCE_NS < before || ours > after + TOLERANCE_NS)
        handler_outside++;
}

Test(host_clock, agrees_when_signal_handlers_read_it_too)
{
    wait_calibrated();
    struct sigaction sa = { .sa_handler = read_in_handler, .sa_flags = SA_RESTART };
    sigemptyset(&sa.sa_mask);
    cr_assert_eq(sigaction(SIGALRM, &sa, NULL), 0);
    struct itimerval every = { .it_interval = { 0, 50 }, .it_value = { 0, 50 } };
    cr_assert_eq(setitimer(ITIMER_REAL, &every, NULL), 0);
    struct bracket_run run = { .duration_ns = 300000000ull };
    bracket(&run);
    struct itimerval off = { 0 };
    setitimer(ITIMER_REAL, &off, NULL);
    cr_expect_gt(handler_readings, 100, "%d readings in the handler", (int)handler_readings);
    cr_expect_eq(handler_outside, 0, "%d of %d handler readings outside", (int)handler_outside,
                 (int)handler_readings);
    cr_expect_eq(run.outside, 0, "%llu of %llu readings outside (worst %llu ns)", (unsigned long long)run.outside,
                 (unsigned long long)run.readings, (unsigned long long)run.worst_outside_ns);
    cr_expect_eq(run.went_back, 0);
}
