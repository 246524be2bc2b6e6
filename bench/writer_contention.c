/*
 * writer_contention.c - what a vendor call record's store costs the calling
 * thread while CUPTI's thread converts kernel records into the same trace,
 * host-only: the preload's trace writer linked alone (tests/writer.cmake),
 * no GPU, no CUPTI.
 *
 * One thread stores VENDOR_CALL records with kat_emit, as a cuBLAS/cuBLASLt/
 * cuDNN wrapper does (vendor_window.c), and times each store.  Meanwhile a
 * second thread appends kernel records flat out, as CUPTI's thread does while
 * it converts a completed buffer, in one of the ways cupti_activity.c can:
 *
 *   alone      no second thread
 *   per-record one kat_emit (one writer lock) per kernel record: before the
 *              chunked conversion, and KAUDIT_CUPTI_CHUNK_KB=0
 *   chunked    kernel records built into a 16 KiB chunk outside the lock,
 *              each chunk appended with one lock (kat_emit_chunk)
 *
 * The settings alternate by segment; printed: the median over segments of
 * the mean ns per store, its 99th percentile over all stores, and how many
 * kernel records the second thread appended per µs.  A flat-out second
 * thread is the worst case, CUPTI converting a full buffer; between buffers
 * the launching thread meets no one.  A rate paces it instead (bursts of
 * 256 records), so both ways append the same records per µs.
 *
 *   TMPDIR=/dev/shm build/bin/kaudit_writer_contention [stores per segment] [segments] [records per µs]
 *
 * (On a disk-backed TMPDIR the page cache's writeback dominates.)
 *
 * The trace goes into a temporary directory, removed at the end.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "preload_internal.h"

enum setting { ALONE, PER_RECORD, CHUNKED, N_SETTINGS };
static const char *const setting_name[N_SETTINGS] = { "alone", "per-record", "chunked" };

static atomic_int appender_setting = ALONE;   /* what the second thread does now */
static atomic_int appender_quit;
static atomic_ullong appended;
static double pace_per_us;                    /* 0: flat out */

static uint64_t now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

static void kernel_record(struct kat_kernel_rec *k, uint32_t i)
{
    memset(k, 0, sizeof *k);
    k->start_ns = i;
    k->end_ns = i + 1000;
    k->correlation_id = i;
    k->grid[0] = 64;
    k->block[0] = 256;
    k->name_string = 1;
}

/* CUPTI's thread, converting a buffer that never ends. */
static void *append_kernels(void *arg)
{
    (void)arg;
    static uint8_t bytes[16u << 10];
    struct kat_chunk chunk = { .bytes = bytes, .capacity = sizeof bytes };
    uint32_t i = 0;
    while (!atomic_load_explicit(&appender_quit, memory_order_relaxed)) {
        int setting = atomic_load_explicit(&appender_setting, memory_order_relaxed);
        if (setting == ALONE) {
            kat_emit_chunk(&chunk);
            kat_writer_prepare_spare(); /* the store thread never maps a segment itself */
            usleep(100);
            continue;
        }
        struct kat_kernel_rec k;
        for (int burst = 0; burst < 256; burst++) {
            kernel_record(&k, ++i);
            if (setting == PER_RECORD) {
                kat_emit(KAT_REC_KERNEL, &k, sizeof k);
            } else if (kat_chunk_add(&chunk, KAT_REC_KERNEL, &k, sizeof k) != 0) {
                kat_writer_prepare_spare();
                kat_emit_chunk(&chunk);
                kat_chunk_add(&chunk, KAT_REC_KERNEL, &k, sizeof k);
            }
        }
        if (setting == PER_RECORD)
            kat_writer_prepare_spare();   /* as cupti_activity.c: every 256 records */
        atomic_fetch_add_explicit(&appended, 256, memory_order_relaxed);
        if (pace_per_us > 0) {
            /* bursts of 256 at the asked mean rate */
            uint64_t due = (uint64_t)(256.0 / pace_per_us * 1000.0);
            struct timespec pause = { .tv_sec = (time_t)(due / 1000000000ull), .tv_nsec = (long)(due % 1000000000ull) };
            nanosleep(&pause, NULL);
        }
    }
    kat_emit_chunk(&chunk);
    return NULL;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

static void remove_session(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    char path[8192];
    while (d && (e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        unlink(path);
    }
    if (d)
        closedir(d);
    rmdir(dir);
}

int main(int argc, char **argv)
{
    int stores = argc > 1 ? atoi(argv[1]) : 20000;
    int segments = argc > 2 ? atoi(argv[2]) : 30;
    pace_per_us = argc > 3 ? atof(argv[3]) : 0;
    if (stores < 1 || segments < 1) {
        fprintf(stderr, "usage: %s [stores per segment] [segments] [kernel records per us, 0 flat out]\n",
                argv[0]);
        return 2;
    }
    const char *tmp = getenv("TMPDIR");
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/kaudit-writer-contention-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    setenv(KAT_ENV_SESSION, dir, 1);
    kat_intern("kernel_name"); /* opens the trace: not timed */

    pthread_t appender;
    if (pthread_create(&appender, NULL, append_kernels, NULL) != 0) {
        perror("pthread_create");
        return 1;
    }
    double *mean[N_SETTINGS], *rate[N_SETTINGS];
    uint32_t *each[N_SETTINGS];
    for (int s = 0; s < N_SETTINGS; s++) {
        mean[s] = calloc((size_t)segments, sizeof(double));
        rate[s] = calloc((size_t)segments, sizeof(double));
        each[s] = calloc((size_t)segments * (size_t)stores, sizeof(uint32_t));
        if (!mean[s] || !rate[s] || !each[s])
            return 1;
    }
    struct kat_vendor_call_rec rec = { .depth = 1, .library = 1 };
    for (int seg = 0; seg < segments * N_SETTINGS; seg++) {
        int s = (seg + seg / N_SETTINGS) % N_SETTINGS;  /* the order turns each round */
        int round = seg / N_SETTINGS;
        atomic_store(&appender_setting, s);
        usleep(2000);                                   /* the second thread has switched */
        unsigned long long before = atomic_load(&appended);
        uint64_t t0 = now_ns();
        for (int i = 0; i < stores; i++) {
            rec.call_id++;
            uint64_t a = now_ns();
            kat_emit(KAT_REC_VENDOR_CALL, &rec, sizeof rec);
            uint64_t b = now_ns();
            each[s][(size_t)round * stores + i] = (uint32_t)(b - a);
        }
        uint64_t t1 = now_ns();
        double sum = 0;
        for (int i = 0; i < stores; i++)
            sum += each[s][(size_t)round * stores + i];
        mean[s][round] = sum / stores;
        rate[s][round] = (double)(atomic_load(&appended) - before) / ((double)(t1 - t0) / 1000.0);
    }
    atomic_store(&appender_quit, 1);
    pthread_join(appender, NULL);
    kat_writer_close(KAT_END_EXIT, 0, 0);
    remove_session(dir);

    printf("vendor record store, ns per call (%d stores x %d segments per setting; clock read included)\n",
           stores, segments);
    printf("%-11s %12s %12s %22s\n", "setting", "median mean", "p99", "kernel records per us");
    for (int s = 0; s < N_SETTINGS; s++) {
        qsort(mean[s], (size_t)segments, sizeof(double), cmp_double);
        qsort(rate[s], (size_t)segments, sizeof(double), cmp_double);
        size_t n = (size_t)segments * (size_t)stores;
        qsort(each[s], n, sizeof(uint32_t), cmp_u32);
        printf("%-11s %12.1f %12u %22.2f\n", setting_name[s], mean[s][segments / 2], each[s][n * 99 / 100],
               rate[s][segments / 2]);
        free(mean[s]);
        free(rate[s]);
        free(each[s]);
    }
    return 0;
}
