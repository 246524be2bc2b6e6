/*
 * bench_control.c - switching recording on and off inside one process, for
 * the overhead benchmark (bench/kaudit_ab.py) and nothing else.
 *
 * On the GPU machine the host's launch cost moves between plateaus from one
 * process to the next (bench/notes/overhead.md), so a comparison of
 * a process under kaudit with a bare one needs many runs to resolve a few
 * percent.  With this control the benchmark compares kaudit recording with
 * kaudit paused in alternating segments of one process, on one machine
 * state.
 *
 * The control exists only when KAUDIT_BENCH_CONTROL=1 was in the
 * environment when the process started, so code that runs later in the
 * process (a candidate) cannot switch it on.  Whenever it exists the trace
 * says so (a BENCH_CONTROL health record), and every setting applied is
 * recorded as another, so a trace made with it is never taken as complete
 * evidence.
 *
 *   kaudit_bench_control("pause")          wrappers pass through, every
 *                                          activity kind and callback off
 *   kaudit_bench_control("resume")         everything as at start
 *   kaudit_bench_control("kinds=A,B")      recording on, with exactly the
 *                                          activity kinds A,B (the names of
 *                                          KAUDIT_CUPTI_KINDS; "kinds=" for none)
 *   kaudit_bench_control("callbacks")      our CUPTI callbacks (and the API and
 *                                          timing records they make) only:
 *                                          wrappers pass through, no activity
 *   kaudit_bench_control("wrappers")       the vendor wrappers (and their
 *                                          records) only: no callbacks, no
 *                                          activity
 * The last two split "kinds=" into its two halves.
 *   kaudit_bench_control("floor")          what a CUPTI client that records
 *                                          nothing costs (bench/cupti_toggle.c's
 *                                          cb_kernel): kernel activity counted,
 *                                          not kept, a callback noting each
 *                                          launch's id and time; wrappers pass
 *                                          through.  "resume" against it is
 *                                          what kaudit adds above that floor.
 *   kaudit_bench_control("floorcb")        the floor's callbacks alone, no activity
 *   kaudit_bench_control("noop")           our callbacks enabled but returning at
 *                                          once, no activity, wrappers passing
 *                                          through: CUPTI's dispatch of them
 * Returns 0, or -1 when the control is off, the setting unknown, or CUPTI
 * refused a change.
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "preload_internal.h"

static atomic_int control_state;        /* 0 not read yet, 1 on, 2 off */

static int control_on(void)
{
    int state = atomic_load(&control_state);
    if (state == 0) {
        const char *env = getenv("KAUDIT_BENCH_CONTROL");
        state = env && strcmp(env, "1") == 0 ? 1 : 2;
        int expected = 0;
        if (atomic_compare_exchange_strong(&control_state, &expected, state) && state == 1)
            kat_health(KAT_HEALTH_BENCH_CONTROL, "enabled: recording may be paused", 1);
        state = atomic_load(&control_state);
    }
    return state == 1;
}

/* Read at load time, before any code of the program runs. */
__attribute__((constructor)) static void bench_control_init(void)
{
    kat_process_init();
    if (kat_tracing_enabled())
        control_on();
}

KAT_EXPORT int kaudit_bench_control(const char *setting)
{
    if (!setting || atomic_load(&control_state) != 1)
        return -1;
    int rc;
    kat_cupti_bench_floor(0);
    kat_cupti_bench_noop(0);
    if (strcmp(setting, "floor") == 0 || strcmp(setting, "floorcb") == 0) {
        kat_health(KAT_HEALTH_BENCH_CONTROL, setting, 1);
        kat_tracing_pause(1);
        rc = kat_cupti_select_kinds(setting[5] ? "" : "kernel") | kat_cupti_set_callbacks(0)
             | kat_cupti_bench_floor(1);
    } else if (strcmp(setting, "noop") == 0) {
        kat_health(KAT_HEALTH_BENCH_CONTROL, setting, 1);
        kat_tracing_pause(1);
        rc = kat_cupti_select_kinds("") | kat_cupti_set_callbacks(1);
        kat_cupti_bench_noop(1);
    } else if (strcmp(setting, "pause") == 0) {
        kat_health(KAT_HEALTH_BENCH_CONTROL, setting, 1);
        rc = kat_cupti_select_kinds("") | kat_cupti_set_callbacks(0);
        kat_tracing_pause(1);
    } else if (strcmp(setting, "resume") == 0) {
        kat_tracing_pause(0);
        rc = kat_cupti_select_kinds(getenv("KAUDIT_CUPTI_KINDS")) | kat_cupti_set_callbacks(1);
        kat_health(KAT_HEALTH_BENCH_CONTROL, setting, 1);
    } else if (strncmp(setting, "kinds=", 6) == 0) {
        kat_tracing_pause(0);
        rc = kat_cupti_select_kinds(setting + 6) | kat_cupti_set_callbacks(1);
        kat_health(KAT_HEALTH_BENCH_CONTROL, setting, 1);
    } else if (strcmp(setting, "callbacks") == 0 || strcmp(setting, "wrappers") == 0) {
        int callbacks = setting[0] == 'c';
        kat_tracing_pause(callbacks);
        rc = kat_cupti_select_kinds("") | kat_cupti_set_callbacks(callbacks);
        kat_health(KAT_HEALTH_BENCH_CONTROL, setting, 1);
    } else {
        return -1;
    }
    return rc ? -1 : 0;
}

#ifdef KAUDIT_WRAPPER_PROFILE
__thread unsigned long long kat_wrapper_profile[KAT_PROF_COUNTERS];

/* Copies the calling thread's counters out (cycles per stage, [7] the calls)
 * and clears them. */
KAT_EXPORT void kaudit_wrapper_profile(unsigned long long out[KAT_PROF_COUNTERS])
{
    for (int i = 0; i < KAT_PROF_COUNTERS; i++) {
        out[i] = kat_wrapper_profile[i];
        kat_wrapper_profile[i] = 0;
    }
}

/* Segment ends crossed without a spare ready (trace_writer.c). */
KAT_EXPORT unsigned long long kaudit_segments_mapped_inline(void)
{
    return kat_writer_segments_mapped_inline();
}

/* The TSC's rate, from 20 ms of it against CLOCK_MONOTONIC. */
KAT_EXPORT double kaudit_tsc_hz(void)
{
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    unsigned long long c0 = __rdtsc();
    do
        clock_gettime(CLOCK_MONOTONIC, &b);
    while ((b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec) < 2e7);
    unsigned long long c1 = __rdtsc();
    return (double)(c1 - c0) / ((b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) * 1e-9);
}
#endif
