/*
 * host_clock.c - the host timestamps kaudit records: CLOCK_REALTIME in ns,
 * read from the TSC where the kernel itself keeps time with it.
 *
 * Why: a recorded launch reads the clock twice (the API record's enter and
 * exit), a vendor call twice (its window): about ten reads an iteration of
 * the launch-bound loop.  On the H200's VM this clock costs about half of a
 * clock_gettime (bench/host_clock.c measures both); the cuBLASLt wrapper's
 * clock stage got cheaper in the profile, and the loop's gain was at the
 * limit of what the in-process A/B resolves (bench/notes/overhead.md,
 * "Thirteenth session").
 *
 * When: x86-64, the invariant-TSC CPU flag, and the kernel's current
 * clocksource is "tsc" (then the kernel has already judged the TSC constant
 * in rate and in step across CPUs, and clock_gettime itself is a TSC read
 * scaled).  Anywhere else, or with KAUDIT_HOST_CLOCK=realtime, every read
 * is clock_gettime(CLOCK_REALTIME), as before.
 *
 * How: each thread keeps an anchor, a TSC value and the CLOCK_REALTIME read
 * beside it, and extrapolates from it at the TSC's rate for at most
 * ANCHOR_NS; an older anchor is renewed (one clock_gettime a millisecond a
 * busy thread).  The rate is CLOCK_MONOTONIC_RAW's against the TSC, measured
 * over the process's life so far (the raw clock has no NTP slew and no
 * steps, so a longer span only makes it better); until that span is
 * CALIBRATION_NS long every read is clock_gettime.  What this can be off
 * from clock_gettime: NTP's frequency correction (realtime's rate against
 * the raw one, at most 500 ppm, usually a few ppm) over at most a
 * millisecond, so at most 0.5 us and usually a few ns, plus the pairing
 * jitter of one anchor (an anchor whose two TSC reads are more than
 * ANCHOR_PAIR_TICKS apart, say because the thread was interrupted, is read
 * again).  A step of the realtime clock is followed within a millisecond.
 * Per thread the readings never go back by less than BACKWARD_TOLERANCE_NS
 * (the renewal of an anchor can land a few ns before the extrapolation);
 * a larger step back is a step of the clock and is kept.
 *
 * Async-signal-safe: thread-local state and atomics only.  A signal handler
 * that reads the clock while its thread renews the anchor takes the system
 * clock and leaves the anchor alone; one that renews the anchor while its
 * thread reads it makes that read start over with a renewal of its own.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#if defined(__x86_64__)
#include <cpuid.h>
#include <x86intrin.h>
#endif

#include "preload_internal.h"

#define ANCHOR_NS 1000000ull            /* extrapolate at most 1 ms */
#define CALIBRATION_NS 20000000ull      /* the rate, once measured over 20 ms */
#define BACKWARD_TOLERANCE_NS 10000ull
#define RATE_SHIFT 32                   /* ns per tick, fixed point */
#define UNCALIBRATED_TRY_TICKS (1ull << 22)
#define ANCHOR_PAIR_TICKS 2000          /* below a microsecond at any TSC rate */

static uint64_t timespec_ns(const struct timespec *ts)
{
    return (uint64_t)ts->tv_sec * 1000000000ull + (uint64_t)ts->tv_nsec;
}

uint64_t kat_realtime_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return timespec_ns(&ts);
}

uint64_t kat_monotonic_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return timespec_ns(&ts);
}

#if defined(__x86_64__)

enum { CLOCK_UNDECIDED = 0, CLOCK_TSC = 1, CLOCK_SYSTEM = 2 };
static atomic_int clock_kind;

/* Process-wide: the first raw pair; the rate (ns per tick << RATE_SHIFT, 0
 * until calibrated) and ANCHOR_NS in ticks at that rate. */
static _Atomic uint64_t first_tsc, first_raw_ns;
static _Atomic uint64_t rate_fixed, anchor_ticks;

struct anchor {
    uint64_t tsc;
    uint64_t realtime_ns;
    uint64_t last_ns;           /* the last value this thread returned */
    uint64_t tried_tsc;         /* the last try at the rate, before it is known */
};
static KAT_TLS struct anchor anchor;
static KAT_TLS int renewing;    /* a renewal is under way on this thread */

static int kernel_clocksource_is_tsc(void)
{
    int fd = open("/sys/devices/system/clocksource/clocksource0/current_clocksource", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    char text[32] = {0};
    ssize_t n = read(fd, text, sizeof text - 1);
    close(fd);
    return n >= 3 && strncmp(text, "tsc", 3) == 0 && (n == 3 || text[3] == '\n');
}

static int cpu_has_invariant_tsc(void)
{
    unsigned a, b, c, d;
    if (!__get_cpuid(0x80000000u, &a, &b, &c, &d) || a < 0x80000007u)
        return 0;
    __get_cpuid(0x80000007u, &a, &b, &c, &d);
    return (d >> 8) & 1;
}

static int decide_clock(void)
{
    int kind = atomic_load_explicit(&clock_kind, memory_order_relaxed);
    if (kind != CLOCK_UNDECIDED)
        return kind;
    int saved_errno = errno;    /* the program's, whatever we call from */
    const char *env = getenv("KAUDIT_HOST_CLOCK");
    int forced_system = env && strcmp(env, "realtime") == 0;
    kind = !forced_system && cpu_has_invariant_tsc() && kernel_clocksource_is_tsc() ? CLOCK_TSC : CLOCK_SYSTEM;
    atomic_store_explicit(&clock_kind, kind, memory_order_relaxed);
    errno = saved_errno;
    return kind;
}

/* A TSC value and a reading of `clock` taken together: the TSC read before
 * and after, kept only when the two are close (the thread was not
 * interrupted between); the midpoint.  0 when no try was close. */
static uint64_t paired_read(clockid_t clock, uint64_t *ns)
{
    for (int attempt = 0; attempt < 4; attempt++) {
        struct timespec ts;
        uint64_t before = __rdtsc();
        clock_gettime(clock, &ts);
        uint64_t after = __rdtsc();
        if (after > before && after - before < ANCHOR_PAIR_TICKS) {
            *ns = timespec_ns(&ts);
            return before + (after - before) / 2;
        }
    }
    return 0;
}

/* Measure (or improve) the rate from this raw pair and the first one. */
static void calibrate(void)
{
    uint64_t raw_ns, tsc = paired_read(CLOCK_MONOTONIC_RAW, &raw_ns);
    if (tsc == 0)
        return;
    /* the first pair once (a locked instruction only while there is none:
     * this runs at every renewal) */
    uint64_t expected = 0;
    if (atomic_load_explicit(&first_tsc, memory_order_relaxed) == 0
        && atomic_compare_exchange_strong(&first_tsc, &expected, tsc)) {
        atomic_store(&first_raw_ns, raw_ns);
        return;
    }
    uint64_t t0 = atomic_load(&first_tsc), n0 = atomic_load(&first_raw_ns);
    if (n0 == 0 || tsc <= t0 || raw_ns < n0 + CALIBRATION_NS)
        return;
    unsigned __int128 fixed = ((unsigned __int128)(raw_ns - n0) << RATE_SHIFT) / (tsc - t0);
    if (fixed == 0 || fixed >> 63)
        return;
    uint64_t ticks = (uint64_t)(((unsigned __int128)ANCHOR_NS << RATE_SHIFT) / fixed);
    atomic_store(&anchor_ticks, ticks ? ticks : 1);
    atomic_store(&rate_fixed, (uint64_t)fixed);
}

/* This thread's anchor, both halves from the same renewal (a signal handler
 * may renew it between two reads); 0 when there is none. */
static int read_anchor(uint64_t *tsc, uint64_t *realtime_ns)
{
    uint64_t first = anchor.tsc;
    atomic_signal_fence(memory_order_seq_cst);
    *realtime_ns = anchor.realtime_ns;
    atomic_signal_fence(memory_order_seq_cst);
    *tsc = anchor.tsc;
    return *tsc != 0 && *tsc == first;
}

/* Renew this thread's anchor; the realtime reading it made. */
static uint64_t renew_anchor(void)
{
    /* A signal handler that reads the clock while this thread renews finds
     * no anchor (tsc 0) and takes the system clock, leaving the anchor to
     * the renewal it interrupted. */
    if (renewing)
        return kat_realtime_ns();
    renewing = 1;
    atomic_signal_fence(memory_order_seq_cst);
    anchor.tsc = 0;
    atomic_signal_fence(memory_order_seq_cst);
    uint64_t now_ns, tsc = paired_read(CLOCK_REALTIME, &now_ns);
    if (tsc == 0) {
        atomic_signal_fence(memory_order_seq_cst);
        renewing = 0;
        return kat_realtime_ns();
    }
    anchor.realtime_ns = now_ns;
    atomic_signal_fence(memory_order_seq_cst);
    anchor.tsc = tsc;
    /* The rate is measured again with each renewal (at most one a
     * millisecond a thread): over a span that only grows, it only gets
     * better. */
    calibrate();
    atomic_signal_fence(memory_order_seq_cst);
    renewing = 0;
    return now_ns;
}

uint64_t kat_now_ns(void)
{
    if (decide_clock() != CLOCK_TSC)
        return kat_realtime_ns();
    uint64_t rate = atomic_load_explicit(&rate_fixed, memory_order_relaxed);
    uint64_t tsc = __rdtsc();
    uint64_t ns, base_tsc, base_ns;
    if (rate == 0) {
        /* Not calibrated yet (the process's first CALIBRATION_NS): the
         * system clock, and a try at the rate every UNCALIBRATED_TRY_TICKS */
        if (tsc - anchor.tried_tsc >= UNCALIBRATED_TRY_TICKS) {
            anchor.tried_tsc = tsc;
            calibrate();
        }
        ns = kat_realtime_ns();
    } else if (read_anchor(&base_tsc, &base_ns) &&
               tsc - base_tsc < atomic_load_explicit(&anchor_ticks, memory_order_relaxed)) {
        /* below 2^64: anchor_ticks * rate is about ANCHOR_NS << RATE_SHIFT
         * (and a TSC behind the anchor wraps to a large difference: renewed) */
        ns = base_ns + (((tsc - base_tsc) * rate) >> RATE_SHIFT);
    } else {
        ns = renew_anchor();
    }
    /* a renewal may land a little before the extrapolation it replaces */
    if (ns < anchor.last_ns && anchor.last_ns - ns < BACKWARD_TOLERANCE_NS)
        return anchor.last_ns;
    anchor.last_ns = ns;
    return ns;
}

const char *kat_host_clock_name(void)
{
    return decide_clock() == CLOCK_TSC ? "tsc" : "realtime";
}

#else /* not x86-64: the system clock every time */

uint64_t kat_now_ns(void)
{
    return kat_realtime_ns();
}

const char *kat_host_clock_name(void)
{
    return "realtime";
}

#endif
