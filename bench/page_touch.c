/*
 * page_touch.c - what the first access to a page of a fresh trace segment
 * costs the thread that makes it, and whether touching the pages ahead from
 * another thread takes that cost away (preload/trace_writer.c, touch_pages).
 *
 *   cc -O2 -pthread bench/page_touch.c -o page_touch && ./page_touch [rounds]
 *
 * Each round maps a 4 MiB memory file (as kaudit run's traces are) with
 * MAP_SHARED | MAP_POPULATE, as the trace writer maps a segment, and stores
 * 272-byte records through it (a vendor call record and its header) in four ways:
 *   populated      nothing more, as the writer did before touching ahead
 *   touched        another thread first read one byte of every page
 *   touched_other  another thread read them through a second mapping
 *   stored_twice   the same stores again into pages already stored into
 * Output: one JSON line per round, ns per record store in each way.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define SEGMENT (4u << 20)
#define RECORD 272u

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

struct touch_job {
    const uint8_t *map;
    unsigned sum;
};

static void *touch_pages(void *arg)
{
    struct touch_job *job = arg;
    const volatile uint8_t *p = job->map;
    for (size_t at = 0; at < SEGMENT; at += 4096)
        job->sum += p[at];
    return NULL;
}

static void touch_from_another_thread(const uint8_t *map)
{
    struct touch_job job = { .map = map };
    pthread_t t;
    if (pthread_create(&t, NULL, touch_pages, &job) != 0 || pthread_join(t, NULL) != 0) {
        perror("pthread");
        exit(1);
    }
}

static double store_ns(uint8_t *map)
{
    uint8_t record[RECORD];
    memset(record, 0x5a, sizeof record);
    size_t n = SEGMENT / RECORD;
    double t0 = now_s();
    for (size_t i = 0; i < n; i++) {
        memcpy(map + i * RECORD, record, RECORD);
        __asm__ volatile("" ::: "memory");
    }
    return (now_s() - t0) * 1e9 / (double)n;
}

static uint8_t *map_fresh(int *fd_out)
{
    int fd = memfd_create("page-touch", 0);
    if (fd < 0 || ftruncate(fd, SEGMENT) != 0 || posix_fallocate(fd, 0, SEGMENT) != 0) {
        perror("memfd");
        exit(1);
    }
    void *map = mmap(NULL, SEGMENT, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, 0);
    if (map == MAP_FAILED) {
        perror("mmap");
        exit(1);
    }
    *fd_out = fd;
    return map;
}

static void unmap(uint8_t *map, int fd)
{
    munmap(map, SEGMENT);
    close(fd);
}

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 5;
    for (int r = 0; r < rounds; r++) {
        int fd;
        uint8_t *map = map_fresh(&fd);
        double populated = store_ns(map);
        double stored_twice = store_ns(map);
        unmap(map, fd);

        map = map_fresh(&fd);
        double t0 = now_s();
        touch_from_another_thread(map);
        double touch_ms = (now_s() - t0) * 1e3;
        double touched = store_ns(map);
        unmap(map, fd);

        map = map_fresh(&fd);
        uint8_t *other = mmap(NULL, SEGMENT, PROT_READ, MAP_SHARED, fd, 0);
        if (other == MAP_FAILED) {
            perror("mmap");
            return 1;
        }
        touch_from_another_thread(other);
        munmap(other, SEGMENT);
        double touched_other = store_ns(map);
        unmap(map, fd);

        printf("{\"round\": %d, \"record_bytes\": %u, \"populated_ns\": %.1f, \"touched_ns\": %.1f, "
               "\"touched_other_ns\": %.1f, \"stored_twice_ns\": %.1f, \"touch_ms\": %.2f, "
               "\"first_access_us_per_page\": %.2f}\n",
               r, RECORD, populated, touched, touched_other, stored_twice, touch_ms,
               (populated - touched) * (4096.0 / RECORD) / 1e3);
    }
    return 0;
}
