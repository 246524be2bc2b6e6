/*
 * trace_writer.c - the per-process trace file.
 *
 * Records go into a MAP_SHARED mapping of the trace file, one segment at a
 * time.  Each record's header word is stored last, with release ordering, so
 * whatever the page cache holds when the process dies (SIGKILL included) is
 * a readable prefix: the reader stops at the first zero header word.  Space
 * for a segment is reserved with posix_fallocate before it is mapped, because
 * touching an unbacked page of a shared mapping on a full disk raises SIGBUS
 * in the traced program.  Where fallocate is unsupported, records are written
 * with one pwrite each instead (slower, equally durable).
 *
 * The trace's descriptor is not ours alone: the traced program may close
 * every descriptor it did not open (close_range, a loop over 3..N) and its
 * next open() then gets the trace's number.  So the trace is remembered by
 * device, inode and path, its descriptor is moved high (away from the
 * numbers open() hands out first), and before every use of the number (a
 * new segment, a pwrite, ftruncate, close) fstat says whether it still
 * names the trace.  When it does not, the number is the program's: it is
 * forgotten, never written, mapped, truncated or closed, and the trace is
 * reopened by its path; if that fails, records are counted as lost.  Mapped
 * records need no check: a mapping outlives the descriptor it came from.
 *
 * Under kaudit run the trace is no file in a directory but a memory file
 * (memfd_create) handed to the supervisor when it is opened
 * (trace_handover.c): no other process can name it, and the supervisor
 * copies it into the session.  Its descriptor is guarded the same way; a
 * taken number is replaced by asking the supervisor for the trace again.
 *
 * Strings are interned per process: the table survives fork, and a fork
 * child's new file starts by re-defining every known string, so ids held by
 * the forking thread stay valid in the child.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "preload_internal.h"
#include "trace_handover.h"

#define SEGMENT_BYTES KAT_TRACE_SEGMENT_BYTES
#define MAX_STRING_BYTES (64u << 10)
/* Where the trace's descriptor is moved: programs rarely reach it, and
 * open() hands out the lowest free number first. */
#define TRACE_FD_FLOOR 700

enum writer_state {
    WRITER_UNOPENED = 0,   /* opens on first record */
    WRITER_OPEN = 1,
    WRITER_SUSPENDED = 2,  /* unmapped around an exec; resumes if it fails */
    WRITER_CLOSED = 3,     /* the end record is written */
    WRITER_FAILED = 4,     /* could not be opened: record nothing more */
};

struct intern_entry {
    uint64_t hash;
    uint32_t id;
    uint32_t length;
    char *bytes;
};

static struct {
    pthread_mutex_t lock;
    enum writer_state state;
    int fd;                 /* the trace, while fd_is_trace() says so */
    dev_t trace_dev;        /* what the trace is, to tell it from a program's file */
    ino_t trace_ino;
    char trace_path[4096 + 128];
    uint32_t fd_taken;      /* times the program had taken the number (reopened or not) */
    int use_pwrite;
    int handed;             /* a memory file handed to kaudit run (trace_handover.h), no path */
    pid_t owner_pid;
    uint8_t *map;           /* current segment */
    uint64_t map_offset;    /* file offset of the segment */
    uint8_t *spare;         /* the next segment, mapped ahead (kat_writer_prepare_spare) */
    uint64_t spare_offset;
    uint8_t *retired;       /* the last segment, to unmap outside the lock */
    int preparing;          /* a thread is mapping a spare outside the lock */
    int map_touched;        /* the current segment's pages were touched ahead (touch_pages) */
    int spare_touched;      /* and the spare's */
    uint8_t *touching;      /* a segment whose pages that thread reads outside the lock */
    uint64_t used;          /* bytes used in the segment */
    uint64_t records;
    uint64_t lost;
    uint32_t origin;
    char file_name[96];
    char parent_file_name[96]; /* fork children: the parent's trace */
    char session_dir[4096];
    int session_checked;
    /* string table */
    struct intern_entry *table;
    uint32_t table_capacity;   /* power of two */
    uint32_t table_count;
    uint32_t next_string_id;
    uint32_t ids_stored_before_suspend; /* strings up to this id are in the file */
    uint64_t segments_mapped_inline; /* crossings that found no spare (kat_writer_segments_mapped_inline) */
} writer = { .lock = PTHREAD_MUTEX_INITIALIZER, .fd = -1 };

static atomic_int tracing_state;
/* Signalled under the lock when kat_writer_prepare_spare ends its work
 * outside the lock (writer.preparing back to 0). */
static pthread_cond_t spare_done = PTHREAD_COND_INITIALIZER;
/* Set under the lock when the current segment has no spare or a retired
 * segment waits to be unmapped: kat_writer_prepare_spare has work. */
static atomic_int spare_wanted;

/*
 * The spare thread.  CUPTI's thread prepares the spare only when it
 * converts a buffer, about twice a second on the launch-bound loop (8 MiB
 * buffers, a 500 ms flush period), while the loop writes a 4 MiB segment in
 * about 200 ms: a crossing then may find no spare, and the thread that
 * crossed, the launching thread among them, reserves, zeroes and maps the
 * next 4 MiB under the writer lock.  On the H200 the vendor record's store
 * took about ten times as long that way as with this thread, which maps
 * every segment before a writer needs it (bench/notes/overhead.md, "Twelfth
 * session"; the profile counts kat_writer_segments_mapped_inline).  So a
 * thread of ours waits for each crossing and prepares the next spare at
 * once.  It is woken under the writer lock (next_segment), takes only its
 * own lock before that, and is gone in a fork child (started again there
 * with CUDA).
 */
static pthread_mutex_t spare_thread_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t spare_thread_wake = PTHREAD_COND_INITIALIZER;
static int spare_thread_pending;
static atomic_int spare_thread_state;   /* 0 not started, 1 running, 2 off or failed */

static void *spare_thread_main(void *arg)
{
    (void)arg;
    prctl(PR_SET_NAME, "kaudit-spare");     /* so that ps and top say whose it is */
    for (;;) {
        pthread_mutex_lock(&spare_thread_lock);
        while (!spare_thread_pending)
            pthread_cond_wait(&spare_thread_wake, &spare_thread_lock);
        spare_thread_pending = 0;
        pthread_mutex_unlock(&spare_thread_lock);
        kat_writer_prepare_spare();
    }
    return NULL;
}

static void wake_spare_thread(void)
{
    if (atomic_load_explicit(&spare_thread_state, memory_order_acquire) != 1)
        return;
    pthread_mutex_lock(&spare_thread_lock);
    spare_thread_pending = 1;
    pthread_cond_signal(&spare_thread_wake);
    pthread_mutex_unlock(&spare_thread_lock);
}

void kat_writer_start_spare_thread(void)
{
    int expected = 0;
    if (!atomic_compare_exchange_strong(&spare_thread_state, &expected, 2))
        return;
    static int off = -1;
    if (kat_env_is(&off, "KAUDIT_SPARE_THREAD", "0"))
        return;
    pthread_mutex_lock(&spare_thread_lock);
    spare_thread_pending = 1;   /* the current segment may want its spare already */
    pthread_mutex_unlock(&spare_thread_lock);
    if (kat_start_helper_thread(spare_thread_main, NULL) == 0)
        atomic_store_explicit(&spare_thread_state, 1, memory_order_release);
}

static void mark_failed(void)
{
    writer.state = WRITER_FAILED;
    atomic_store(&tracing_state, 2);
}

static uint64_t hash_bytes(const char *s, size_t n)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a: strings are short */
    for (size_t i = 0; i < n; i++) {
        h ^= (unsigned char)s[i];
        h *= 1099511628211ull;
    }
    return h ? h : 1;
}

static const char *session_dir(void)
{
    if (!writer.session_checked) {
        const char *dir = getenv(KAT_ENV_SESSION);
        if (dir && dir[0] == '/')
            kat_strlcpy(writer.session_dir, dir, sizeof(writer.session_dir));
        writer.session_checked = 1;
    }
    return writer.session_dir[0] ? writer.session_dir : NULL;
}

/* Set only by the benchmark control (bench/bench_control.c): while paused, the
 * wrappers pass straight through. */
static atomic_int tracing_paused;

void kat_tracing_pause(int paused)
{
    atomic_store_explicit(&tracing_paused, paused, memory_order_release);
}

/* Asked on every vendor call: an atomic, not the writer lock.
 * tracing_state: 0 unknown, 1 enabled, 2 disabled (no session, or the
 * trace failed). */
int kat_tracing_enabled(void)
{
    if (atomic_load_explicit(&tracing_paused, memory_order_relaxed))
        return 0;
    int state = atomic_load_explicit(&tracing_state, memory_order_acquire);
    if (state == 0) {
        pthread_mutex_lock(&writer.lock);
        state = session_dir() != NULL && writer.state != WRITER_FAILED ? 1 : 2;
        pthread_mutex_unlock(&writer.lock);
        atomic_store_explicit(&tracing_state, state, memory_order_release);
    }
    return state == 1;
}

/* Move our own descriptor high (keeping close-on-exec); the original when
 * RLIMIT_NOFILE is below the floor. */
static int move_high(int fd)
{
    int high = fcntl(fd, F_DUPFD_CLOEXEC, TRACE_FD_FLOOR);
    if (high < 0)
        return fd;
    close(fd); /* ours: opened by us a moment ago */
    return high;
}

/* 1 when fd names the trace file (same device and inode). */
static int fd_is_trace(int fd)
{
    struct stat st;
    return fd >= 0 && fstat(fd, &st) == 0 && st.st_dev == writer.trace_dev && st.st_ino == writer.trace_ino;
}

/* Lock held.  Before any use of writer.fd: 0 when it names the trace
 * (reopened if the program had closed or taken the number), -1 when the
 * trace cannot be reached (writer.fd is -1 then).  A number that no longer
 * names the trace is forgotten, never closed: it is the program's now. */
static int trace_fd_check(void)
{
    if (fd_is_trace(writer.fd))
        return 0;
    if (writer.fd >= 0)
        writer.fd_taken++;
    writer.fd = -1;
    int fd;
    if (writer.handed)
        fd = kat_handover_again(kat_injected_supervisor(), writer.file_name); /* the supervisor has it */
    else
        fd = writer.trace_path[0] ? open(writer.trace_path, O_RDWR | O_CLOEXEC | O_NOFOLLOW) : -1;
    if (fd < 0)
        return -1;
    struct stat st;
    if (fstat(fd, &st) != 0 || st.st_dev != writer.trace_dev || st.st_ino != writer.trace_ino) {
        close(fd); /* ours, but another file now sits at the trace's path */
        return -1;
    }
    writer.fd = move_high(fd);
    return 0;
}

/* Close the trace's descriptor, only if it is still the trace's. */
static void close_trace_fd(void)
{
    if (fd_is_trace(writer.fd))
        close(writer.fd);
    writer.fd = -1;
}

/*
 * On some VMs the first access to each page of a new mapping costs the
 * thread that makes it several microseconds (on the development VM;
 * bench/page_touch.c measures it), once per page table entry, after
 * MAP_POPULATE has made it, through any access, read or write, and again
 * through another mapping of the same pages.  A writer would pay it every
 * 4 KiB of records.  So the thread that prepares the spare reads one byte of
 * every page of the spare, and of the current segment from the write
 * position on, before the writers get there; reading changes nothing in the
 * file.  On the H200's VM that first access costs nothing measurable, and
 * this changes nothing there (bench/notes/overhead.md, "Tenth session").
 * KAUDIT_TRACE_TOUCH=0 turns it off.
 */
static int touch_ahead_on(void)
{
    static int on = -1;
    return !kat_env_is(&on, "KAUDIT_TRACE_TOUCH", "0");
}

/*
 * The lines the next record will be stored into, asked for now, for writing.
 * Every record's stores reach the trace's pages before the writer lock is
 * given back (the unlock is a locked instruction, which waits for them), and
 * the lines of a fresh segment are not in this core's cache: on the H200 the
 * unlock after a vendor record took several times as long as the stores
 * themselves in the profile (bench/notes/overhead.md, "Twelfth session").
 * Asked for after a record, they arrive while the program runs, before the
 * next record of this thread (the usual next writer) stores into them.  A
 * hint only: it never faults, and never past the segment.
 * KAUDIT_WRITER_PREFETCH=0 turns it off (to measure it).
 */
#define PREFETCH_AHEAD_BYTES 512
static void prefetch_next_record(const uint8_t *next, const uint8_t *segment_end)
{
    static int off = -1;
    if (kat_env_is(&off, "KAUDIT_WRITER_PREFETCH", "0"))
        return;
    const uint8_t *end = next + PREFETCH_AHEAD_BYTES < segment_end ? next + PREFETCH_AHEAD_BYTES : segment_end;
    for (const uint8_t *line = next; line < end; line += 64)
        __builtin_prefetch(line, 1, 3);
}

/* A deliberate race: the writers may be storing into these pages meanwhile,
 * and the byte read is thrown away. */
static size_t page_bytes(void)
{
    static size_t page;
    if (!page) {
        long p = sysconf(_SC_PAGESIZE);
        page = p > 0 ? (size_t)p : 4096;
    }
    return page;
}

__attribute__((no_sanitize("thread"))) static void touch_pages(const uint8_t *from, const uint8_t *to)
{
    size_t page = page_bytes();
    uint8_t sink = 0;
    for (const volatile uint8_t *p = from; p < to; p += page)
        sink ^= *p;
    (void)sink;
}

/* Lock held.  Unmap a segment, unless kat_writer_prepare_spare is reading
 * its pages outside the lock: that thread unmaps it when it is done. */
static void unmap_unless_touched(uint8_t *map)
{
    if (map && map != writer.touching)
        munmap(map, SEGMENT_BYTES);
}

static int map_segment(uint64_t offset)
{
    if (writer.use_pwrite)
        return 0;
    /* Once per segment, not per record: the program may own the number now. */
    if (trace_fd_check() != 0)
        return -1;
    int rc = posix_fallocate(writer.fd, (off_t)offset, SEGMENT_BYTES);
    if (rc == EOPNOTSUPP || rc == EINVAL) {
        writer.use_pwrite = 1;
        return 0;
    }
    if (rc != 0)
        return -1;
    /* Populated at once: page by page, the first touches were faults on
     * whatever thread stored a record (KAUDIT_TRACE_POPULATE=0 to compare). */
    const char *populate = getenv("KAUDIT_TRACE_POPULATE");
    int flags = MAP_SHARED | (populate && strcmp(populate, "0") == 0 ? 0 : MAP_POPULATE);
    void *map = mmap(NULL, SEGMENT_BYTES, PROT_READ | PROT_WRITE, flags, writer.fd, (off_t)offset);
    if (map == MAP_FAILED)
        return -1;
    writer.map = map;
    writer.map_offset = offset;
    writer.map_touched = 0;
    return 0;
}

static void unmap_segment(void)
{
    unmap_unless_touched(writer.map);
    writer.map = NULL;
}

/* Lock held.  Until a spare being prepared outside the lock is finished:
 * that thread holds the trace's descriptor number and file offset, and the
 * file must not be trimmed, its number closed (then free for the program to
 * reuse) or the process forked meanwhile. */
static KAT_TLS int preparing_here;   /* this thread is in that window */

static void wait_spare_locked(void)
{
    /* Not on the preparing thread itself (a signal handler that ends or
     * execs the process there): that would wait for ever. */
    while (writer.preparing && !preparing_here)
        pthread_cond_wait(&spare_done, &writer.lock);
}

/* The spare and the retired segment, when the file is trimmed, closed or
 * left (fork child: they are the parent's).  A spare's reserved pages are
 * given back to the kernel when the file is handed over (a memory file) and
 * still ours. */
static void drop_spare(int give_back)
{
    if (writer.spare) {
        unmap_unless_touched(writer.spare);
        if (give_back && writer.handed && trace_fd_check() == 0)
            fallocate(writer.fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)writer.spare_offset,
                      (off_t)SEGMENT_BYTES);
        writer.spare = NULL;
    }
    unmap_unless_touched(writer.retired);
    writer.retired = NULL;
}

/*
 * A new segment costs its mapping: reserving and zeroing 4 MiB of pages
 * (MAP_POPULATE), under the writer lock, on whichever thread crossed the
 * end of the last one.  On the H200 (bench/wrapper_profile.py;
 * bench/notes/overhead.md) the launching thread's vendor records then
 * waited on that lock: their store took several times as long.  So CUPTI's
 * thread, which writes most of the bytes (kernel records), maps the next
 * segment ahead of time, outside the lock, and unmaps the last one there
 * too; the thread that crosses the end only swaps the spare in.  Without a
 * spare (none prepared yet, or no CUPTI thread) the crossing maps the
 * segment as before.
 *
 * The descriptor is checked (trace_fd_check) under the lock before it is
 * used, as map_segment does, and again (its identity, not only its number)
 * before the spare is kept; a spare made for an offset that is no longer
 * the next one (the writer crossed it meanwhile) is unmapped.  While the
 * number and offset are used outside the lock (writer.preparing), trim,
 * close and fork wait for the end (wait_spare_locked): the number closed
 * meanwhile could be the program's file by the time it is fallocated.
 */
void kat_writer_prepare_spare(void)
{
    if (!atomic_load_explicit(&spare_wanted, memory_order_relaxed))
        return;
    pthread_mutex_lock(&writer.lock);
    if (writer.state != WRITER_OPEN || writer.use_pwrite || !writer.map || writer.preparing
        || writer.owner_pid != getpid()) {
        pthread_mutex_unlock(&writer.lock);
        return;
    }
    atomic_store_explicit(&spare_wanted, 0, memory_order_relaxed);
    uint8_t *retired = writer.retired;
    writer.retired = NULL;
    uint64_t offset = writer.map_offset + SEGMENT_BYTES;
    int fd = -1;
    if (!writer.spare && trace_fd_check() == 0)
        fd = writer.fd;
    int touch = touch_ahead_on();
    int touch_current = touch && !writer.map_touched;
    writer.preparing = fd >= 0 || touch_current;
    preparing_here = writer.preparing;
    pthread_mutex_unlock(&writer.lock);

    if (retired)
        munmap(retired, SEGMENT_BYTES);
    if (fd < 0 && !touch_current)
        return;
    void *map = MAP_FAILED;
    if (fd >= 0 && posix_fallocate(fd, (off_t)offset, SEGMENT_BYTES) == 0)
        map = mmap(NULL, SEGMENT_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, (off_t)offset);
    if (map != MAP_FAILED && touch)
        touch_pages(map, (uint8_t *)map + SEGMENT_BYTES);   /* no one else has it yet */

    pthread_mutex_lock(&writer.lock);
    /* the number still names the trace (the program may have put its own
     * file there meanwhile: never write into that) */
    if (map != MAP_FAILED && writer.state == WRITER_OPEN && writer.owner_pid == getpid() && writer.fd == fd
        && fd_is_trace(fd) && !writer.spare && writer.map_offset + SEGMENT_BYTES == offset) {
        writer.spare = map;
        writer.spare_offset = offset;
        writer.spare_touched = touch;
        map = MAP_FAILED;
    }
    /* The current segment, from the page being written on.  While its pages
     * are read outside the lock, no one unmaps it (unmap_unless_touched):
     * a writer crossing its end meanwhile retires or drops it, and it is
     * unmapped here afterwards if it was dropped. */
    uint8_t *current = NULL;
    uint64_t from = 0;
    if (touch_current && writer.state == WRITER_OPEN && writer.map && !writer.map_touched) {
        current = writer.map;
        from = writer.used - writer.used % page_bytes();
        writer.touching = current;
    }
    pthread_mutex_unlock(&writer.lock);
    if (map != MAP_FAILED)
        munmap(map, SEGMENT_BYTES);
    if (current)
        touch_pages(current + from, current + SEGMENT_BYTES);

    pthread_mutex_lock(&writer.lock);
    int dropped = 0;
    if (current) {
        writer.touching = NULL;
        if (writer.map == current)
            writer.map_touched = 1;
        dropped = current != writer.map && current != writer.retired && current != writer.spare;
    }
    writer.preparing = 0;
    preparing_here = 0;
    pthread_cond_broadcast(&spare_done);
    pthread_mutex_unlock(&writer.lock);
    if (dropped)
        munmap(current, SEGMENT_BYTES);
}

/* The next record does not fit the current segment: pad the segment's
 * rest and move to the next one, the spare when it is ready.  Lock held.
 * 0 when records can go on (through the mapping, or with pwrite where the
 * file refused fallocate), -1 when the trace failed. */
static int next_segment(void)
{
    uint64_t rest = SEGMENT_BYTES - writer.used;
    if (rest >= sizeof(struct kat_record_header)) {
        uint64_t pad = rest | ((uint64_t)KAT_REC_PAD << 32);
        __atomic_store_n((uint64_t *)(writer.map + writer.used), pad, __ATOMIC_RELEASE);
    }
    uint64_t next = writer.map_offset + SEGMENT_BYTES;
    writer.used = 0;
    if (writer.spare && writer.spare_offset == next) {
        unmap_unless_touched(writer.retired);
        writer.retired = writer.map;
        writer.map = writer.spare;
        writer.map_offset = next;
        writer.map_touched = writer.spare_touched;
        writer.spare = NULL;
    } else {
        unmap_segment();
        writer.segments_mapped_inline++;
        if (map_segment(next) != 0) {
            mark_failed();
            return -1;
        }
        if (writer.use_pwrite) {
            writer.map_offset = next;
            return 0;
        }
    }
    atomic_store_explicit(&spare_wanted, 1, memory_order_relaxed);
    wake_spare_thread();
    return 0;
}

/* Store one complete record; the header word goes last.  Lock held. */
static int store_record(uint16_t type, const void *body, uint32_t body_size,
                        const void *tail, uint32_t tail_size)
{
    uint64_t payload = (uint64_t)body_size + tail_size;
    uint64_t size = (sizeof(struct kat_record_header) + payload + 7) & ~7ull;
    if (size > SEGMENT_BYTES / 2) {
        writer.lost++;
        return -1;
    }
    uint64_t word = size | ((uint64_t)type << 32);

    if (writer.use_pwrite) {
        uint8_t stack[512];
        uint8_t *buf = size <= sizeof(stack) ? stack : malloc(size);
        if (!buf) {
            writer.lost++;
            return -1;
        }
        memset(buf, 0, size);
        memcpy(buf, &word, sizeof(word));
        if (body_size)
            memcpy(buf + 8, body, body_size);
        if (tail_size)
            memcpy(buf + 8 + body_size, tail, tail_size);
        /* No mapping to write through: each pwrite checks the number. */
        if (trace_fd_check() != 0) {
            if (buf != stack)
                free(buf);
            mark_failed();
            writer.lost++;
            return -1;
        }
        /* the body first, the header word last, as through the mapping: a
         * reader of the file as it is written (kaudit run's spool copier)
         * must not see a header whose body is not there yet */
        off_t at = (off_t)(writer.map_offset + writer.used);
        ssize_t n = pwrite(writer.fd, buf + 8, size - 8, at + 8);
        if (n == (ssize_t)(size - 8))
            n = pwrite(writer.fd, buf, 8, at) == 8 ? (ssize_t)size : -1;
        if (buf != stack)
            free(buf);
        if (n != (ssize_t)size) {
            writer.lost++;
            return -1;
        }
        writer.used += size;
        writer.records++;
        return 0;
    }

    if (writer.used + size > SEGMENT_BYTES) {
        if (next_segment() != 0) {
            writer.lost++;
            return -1;
        }
        if (writer.use_pwrite)
            return store_record(type, body, body_size, tail, tail_size);
    }
    uint8_t *p = writer.map + writer.used;
    if (body_size)
        memcpy(p + 8, body, body_size);
    if (tail_size)
        memcpy(p + 8 + body_size, tail, tail_size);
    uint64_t written = 8 + payload;
    if (written < size)
        memset(p + written, 0, size - written);
    __atomic_store_n((uint64_t *)p, word, __ATOMIC_RELEASE);
    writer.used += size;
    writer.records++;
    prefetch_next_record(p + size, writer.map + SEGMENT_BYTES);
    return 0;
}

static void store_string(const struct intern_entry *e)
{
    struct kat_string_rec rec = { .id = e->id, .length = e->length };
    store_record(KAT_REC_STRING, &rec, sizeof(rec), e->bytes, e->length);
}

static void read_self(const char *path, char *buf, size_t n, size_t *len, int nul_join)
{
    *len = 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return;
    ssize_t got = read(fd, buf, n - 1);
    close(fd);
    if (got <= 0)
        return;
    /* /proc/self/cmdline ends with a NUL: drop it, keep the separators. */
    if (nul_join && buf[got - 1] == '\0')
        got--;
    *len = (size_t)got;
}

static uint32_t intern_locked(const char *s, size_t n);

/* Open this process's trace.  Lock held.  Returns 0 when records can go in. */
static int open_trace(void)
{
    const char *dir = session_dir();
    if (!dir) {
        mark_failed();
        return -1;
    }
    pid_t pid = getpid();
    uint64_t now = kat_now_ns();
    char path[sizeof(writer.session_dir) + 128];
    int fd = -1;
    const char *supervisor = kat_injected_supervisor();
    writer.handed = supervisor != NULL;
    path[0] = '\0';
    if (supervisor) {
        /* under kaudit run: a memory file no other process can name, handed
         * over at once; the supervisor alone copies it into the session */
        snprintf(writer.file_name, sizeof(writer.file_name), "p%d-%llu%s", (int)pid, (unsigned long long)now,
                 KAT_TRACE_SUFFIX);
        fd = memfd_create("kaudit-trace", MFD_CLOEXEC | MFD_ALLOW_SEALING);
        /* high at once: the handover takes up to seconds, and meanwhile the
         * program's own threads may close and reuse the low numbers */
        if (fd >= 0)
            fd = move_high(fd);
        if (fd >= 0 && kat_handover_register(supervisor, fd, writer.file_name) != 0) {
            close(fd);
            fd = -1;
        }
    }
    for (int attempt = 0; !supervisor && attempt < 8 && fd < 0; attempt++) {
        snprintf(writer.file_name, sizeof(writer.file_name), "p%d-%llu%s%s", (int)pid,
                 (unsigned long long)now + (unsigned)attempt, "", KAT_TRACE_SUFFIX);
        snprintf(path, sizeof(path), "%s/%s", dir, writer.file_name);
        fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
        if (fd < 0 && errno != EEXIST)
            break;
    }
    if (fd < 0) {
        mark_failed();
        writer.file_name[0] = '\0';
        return -1;
    }
    struct stat st;
    if (fstat(fd, &st) != 0) {
        close(fd);
        mark_failed();
        return -1;
    }
    writer.trace_dev = st.st_dev;
    writer.trace_ino = st.st_ino;
    kat_strlcpy(writer.trace_path, path, sizeof(writer.trace_path));
    if (!supervisor)
        fd = move_high(fd); /* a handed-over memory file was moved when made */
    writer.fd = fd;
    writer.owner_pid = pid;
    writer.use_pwrite = 0;
    writer.map = NULL;
    writer.used = 0;
    writer.records = 0;
    if (map_segment(0) != 0) {
        close_trace_fd();
        mark_failed();
        return -1;
    }
    atomic_store_explicit(&spare_wanted, 1, memory_order_relaxed);
    struct kat_file_header header = {
        .format_version = KAT_FORMAT_VERSION,
        .header_size = sizeof(struct kat_file_header),
        .pid = (uint32_t)pid,
        .ppid = (uint32_t)getppid(),
        .start_realtime_ns = now,
        .start_monotonic_ns = kat_monotonic_ns(),
        .origin = writer.origin ? writer.origin : KAT_ORIGIN_EXEC,
    };
    memcpy(header.magic, KAT_TRACE_MAGIC, sizeof(header.magic));
    /* the run's token: kaudit run copies only traces that carry it */
    const char *token = kat_injected_token();
    for (int i = 0; token && i < 16 && token[2 * i] && token[2 * i + 1]; i++) {
        unsigned v;
        if (sscanf(token + 2 * i, "%2x", &v) != 1)
            break;
        header.session_token[i] = (uint8_t)v;
    }
    if (writer.use_pwrite) {
        if (trace_fd_check() != 0 || pwrite(writer.fd, &header, sizeof(header), 0) != (ssize_t)sizeof(header)) {
            close_trace_fd();
            mark_failed();
            return -1;
        }
        writer.map_offset = 0;
    } else {
        memcpy(writer.map, &header, sizeof(header));
    }
    writer.used = sizeof(header);
    writer.state = WRITER_OPEN;

    /* Strings interned before a fork keep their ids in the child. */
    for (uint32_t i = 0; i < writer.table_capacity; i++)
        if (writer.table[i].bytes)
            store_string(&writer.table[i]);

    char argv_buf[MAX_STRING_BYTES], exe[4096], cwd[4096];
    size_t argv_len;
    read_self("/proc/self/cmdline", argv_buf, sizeof(argv_buf), &argv_len, 1);
    ssize_t exe_len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
    exe[exe_len > 0 ? exe_len : 0] = '\0';
    if (!getcwd(cwd, sizeof(cwd)))
        cwd[0] = '\0';
    const char *reinjected = getenv(KAT_ENV_REINJECTED);
    struct kat_process_start_rec start = {
        .pid = (uint32_t)pid,
        .ppid = header.ppid,
        .origin = header.origin,
        .argv_string = argv_len ? intern_locked(argv_buf, argv_len) : 0,
        .exe_string = intern_locked(exe, strlen(exe)),
        .cwd_string = intern_locked(cwd, strlen(cwd)),
        .reinjected = reinjected && reinjected[0] == '1' && header.origin == KAT_ORIGIN_EXEC,
        .fork_parent_trace = header.origin == KAT_ORIGIN_FORK
                                 ? intern_locked(writer.parent_file_name, strlen(writer.parent_file_name))
                                 : 0,
        .time_ns = now,
    };
    store_record(KAT_REC_PROCESS_START, &start, sizeof(start), NULL, 0);
    return 0;
}

/* Lock held.  Returns 0 when a record may be stored now. */
static int ensure_open(void)
{
    switch (writer.state) {
    case WRITER_OPEN:
        /* A vfork child shares our memory but is another process: it must
         * not write into the parent's trace. */
        return writer.owner_pid == kat_pid() ? 0 : -1;
    case WRITER_UNOPENED:
        return open_trace();
    default:
        return -1;
    }
}

static int grow_table(void)
{
    uint32_t capacity = writer.table_capacity ? writer.table_capacity * 2 : 1024;
    struct intern_entry *table = calloc(capacity, sizeof(*table));
    if (!table)
        return -1;
    for (uint32_t i = 0; i < writer.table_capacity; i++) {
        struct intern_entry *e = &writer.table[i];
        if (!e->bytes)
            continue;
        uint32_t slot = (uint32_t)e->hash & (capacity - 1);
        while (table[slot].bytes)
            slot = (slot + 1) & (capacity - 1);
        table[slot] = *e;
    }
    free(writer.table);
    writer.table = table;
    writer.table_capacity = capacity;
    return 0;
}

static uint32_t intern_locked(const char *s, size_t n)
{
    if (!s)
        return 0;
    if (n > MAX_STRING_BYTES)
        n = MAX_STRING_BYTES;
    uint64_t h = hash_bytes(s, n);
    if (writer.table_capacity) {
        uint32_t slot = (uint32_t)h & (writer.table_capacity - 1);
        while (writer.table[slot].bytes) {
            struct intern_entry *e = &writer.table[slot];
            if (e->hash == h && e->length == n && memcmp(e->bytes, s, n) == 0)
                return e->id;
            slot = (slot + 1) & (writer.table_capacity - 1);
        }
    }
    if ((writer.table_count + 1) * 2 > writer.table_capacity && grow_table() != 0)
        return 0;
    char *copy = malloc(n + 1);
    if (!copy)
        return 0;
    memcpy(copy, s, n);
    copy[n] = '\0';
    uint32_t slot = (uint32_t)h & (writer.table_capacity - 1);
    while (writer.table[slot].bytes)
        slot = (slot + 1) & (writer.table_capacity - 1);
    struct intern_entry *e = &writer.table[slot];
    e->hash = h;
    e->id = ++writer.next_string_id;
    e->length = (uint32_t)n;
    e->bytes = copy;
    writer.table_count++;
    if (writer.state == WRITER_OPEN && writer.owner_pid == kat_pid())
        store_string(e);
    return e->id;
}

uint32_t kat_intern_n(const char *s, size_t n)
{
    if (!s)
        return 0;
    pthread_mutex_lock(&writer.lock);
    uint32_t id = 0;
    if (session_dir() && writer.state != WRITER_FAILED && writer.state != WRITER_CLOSED) {
        /* Open first, so the definition lands in this process's file. */
        if (writer.state == WRITER_UNOPENED)
            ensure_open();
        if (writer.state == WRITER_OPEN || writer.state == WRITER_SUSPENDED)
            id = intern_locked(s, n);
    }
    pthread_mutex_unlock(&writer.lock);
    return id;
}

uint32_t kat_intern(const char *s)
{
    return s ? kat_intern_n(s, strlen(s)) : 0;
}

void kat_emit_tail(uint16_t type, const void *body, uint32_t body_size, const void *tail,
                   uint32_t tail_size)
{
    pthread_mutex_lock(&writer.lock);
    if (session_dir() && ensure_open() == 0)
        store_record(type, body, body_size, tail, tail_size);
    pthread_mutex_unlock(&writer.lock);
}

void kat_emit(uint16_t type, const void *body, uint32_t body_size)
{
    kat_emit_tail(type, body, body_size, NULL, 0);
}

/* Many records under one lock (trace_stage.c): lock, then store while the
 * lock returned 0, then unlock in any case. */
int kat_emit_lock(void)
{
    pthread_mutex_lock(&writer.lock);
    return session_dir() && ensure_open() == 0 ? 0 : -1;
}

void kat_emit_locked(uint16_t type, const void *body, uint32_t body_size)
{
    store_record(type, body, body_size, NULL, 0);
}

void kat_emit_unlock(void)
{
    pthread_mutex_unlock(&writer.lock);
}

/*
 * Chunks: records made outside the writer lock, appended under it.
 *
 * CUPTI's thread converts thousands of kernel records per buffer.  Stored
 * one by one, each took the writer lock, and the launching thread's vendor
 * records waited on it (bench/notes/overhead.md, "Ninth session").  So that thread
 * builds whole records, header word and padding included, in a chunk of its
 * own (kat_chunk_add, no lock), and a chunk goes into the trace with one
 * lock: a copy per segment it touches, nothing else.
 *
 * The bytes in the trace are those store_record would have written for the
 * same records in the same order: a record goes into the next segment
 * exactly when it would not fit the current one (store_chunk_mapped walks
 * the chunk only then).  The durable prefix stays a prefix: everything but
 * a run's first header word is copied first, and that word is stored last,
 * with release ordering, so a reader (or a dead process's page cache) sees
 * the whole run or none of it.
 */
int kat_chunk_add(struct kat_chunk *chunk, uint16_t type, const void *body, uint32_t body_size)
{
    uint64_t size = (sizeof(struct kat_record_header) + (uint64_t)body_size + 7) & ~7ull;
    /* larger ones take kat_emit, which counts them lost as it always did;
     * so every chunked record fits an empty segment */
    if (size > chunk->capacity - chunk->used || size > SEGMENT_BYTES / 2)
        return -1;
    uint8_t *p = chunk->bytes + chunk->used;
    uint64_t word = size | ((uint64_t)type << 32);
    memcpy(p, &word, sizeof(word));
    if (body_size)
        memcpy(p + 8, body, body_size);
    memset(p + 8 + body_size, 0, size - 8 - body_size);
    chunk->used += (uint32_t)size;
    chunk->records++;
    return 0;
}

/* Bytes of the whole records at the start of BYTES that fit in ROOM; their
 * number in *records. */
static uint64_t whole_records_within(const uint8_t *bytes, uint64_t n, uint64_t room, uint32_t *records)
{
    uint64_t at = 0;
    *records = 0;
    while (at < n) {
        uint64_t word;
        memcpy(&word, bytes + at, sizeof(word));
        uint64_t size = (uint32_t)word;
        if (at + size > room)
            break;
        at += size;
        (*records)++;
    }
    return at;
}

/* Lock held, mapped trace: a run of whole records that fits the segment. */
static void copy_run(const uint8_t *bytes, uint64_t n, uint32_t records)
{
    uint8_t *p = writer.map + writer.used;
    uint64_t first;
    memcpy(&first, bytes, sizeof(first));
    memcpy(p + 8, bytes + 8, n - 8);
    __atomic_store_n((uint64_t *)p, first, __ATOMIC_RELEASE);
    writer.used += n;
    writer.records += records;
}

/* Lock held, pwrite trace (no mapping): the run's bytes, then its first
 * header word, as store_record does for one record. */
static void pwrite_run(const uint8_t *bytes, uint64_t n, uint32_t records)
{
    if (trace_fd_check() != 0) {
        mark_failed();
        writer.lost += records;
        return;
    }
    off_t at = (off_t)(writer.map_offset + writer.used);
    ssize_t got = pwrite(writer.fd, bytes + 8, n - 8, at + 8);
    if (got != (ssize_t)(n - 8) || pwrite(writer.fd, bytes, 8, at) != 8) {
        writer.lost += records;
        return;
    }
    writer.used += n;
    writer.records += records;
}

static void store_chunk(const uint8_t *bytes, uint64_t n, uint32_t records)
{
    while (n > 0) {
        if (writer.use_pwrite) {
            pwrite_run(bytes, n, records);
            return;
        }
        uint64_t fit = n;
        uint32_t fit_records = records;
        if (writer.used + n > SEGMENT_BYTES)
            fit = whole_records_within(bytes, n, SEGMENT_BYTES - writer.used, &fit_records);
        if (fit == 0) {
            if (next_segment() != 0) {
                writer.lost += records;
                return;
            }
            continue;
        }
        copy_run(bytes, fit, fit_records);
        bytes += fit;
        n -= fit;
        records -= fit_records;
    }
}

void kat_emit_chunk(struct kat_chunk *chunk)
{
    if (chunk->used == 0)
        return;
    pthread_mutex_lock(&writer.lock);
    if (session_dir() && ensure_open() == 0)
        store_chunk(chunk->bytes, chunk->used, chunk->records);
    pthread_mutex_unlock(&writer.lock);
    chunk->used = 0;
    chunk->records = 0;
}

static void write_end_locked(uint32_t end_kind, int32_t status, uint32_t flags)
{
    if (writer.lost) {
        /* Said before the end, where every reader looks for health. */
        struct kat_health_rec lost = { .code = KAT_HEALTH_WRITER_FULL,
                                       .value = (int64_t)writer.lost, .time_ns = kat_now_ns() };
        store_record(KAT_REC_HEALTH, &lost, sizeof(lost), NULL, 0);
    }
    /* The times the program had taken the trace's number: only in memory
     * until here. */
    if (writer.fd_taken)
        flags |= KAT_END_FLAG_TRACE_FD_TAKEN;
    struct kat_process_end_rec end = {
        .kind = end_kind,
        .status = status,
        .flags = flags,
        .fd_taken = writer.fd_taken,
        .time_ns = kat_now_ns(),
        .records_written = writer.records,
        .records_lost = writer.lost,
    };
    store_record(KAT_REC_PROCESS_END, &end, sizeof(end), NULL, 0);
}

/* Drop the unused, zero-filled rest of the file.  Lock held, and no spare
 * being prepared (kat_writer_close waited for it). */
static void trim_locked(void)
{
    uint64_t length = writer.map_offset + writer.used;
    drop_spare(1);
    unmap_segment();
    /* A handed-over trace is sealed against shrinking (its copy has no
     * tail): the unused, reserved rest of its segment is given back to the
     * kernel instead, or every process ended would hold 4 MiB of memory
     * until the run ends.  The next segment too: kat_writer_prepare_spare
     * may have reserved it for a spare it then did not keep (the number had
     * changed meanwhile), which drop_spare does not know of. */
    if (writer.handed) {
        if (!writer.use_pwrite && trace_fd_check() == 0)
            fallocate(writer.fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)length,
                      (off_t)(writer.map_offset + 2 * SEGMENT_BYTES - length));
    } else if (trace_fd_check() == 0 && ftruncate(writer.fd, (off_t)length) != 0) {
        /* the zero tail stays: readers stop at it */
    }
}

void kat_writer_close(uint32_t end_kind, int32_t status, uint32_t flags)
{
    kat_stage_flush_all();
    pthread_mutex_lock(&writer.lock);
    if (writer.state == WRITER_OPEN && writer.owner_pid == getpid()) {
        /* Before the end record, not in trim_locked after it: the wait lets
         * go of the lock, and the records other threads stored meanwhile
         * would follow the end, a trace that reads as cut short (seen in CI
         * in a fork child whose first spare was still being mapped). */
        wait_spare_locked();
        write_end_locked(end_kind, status, flags);
        if (end_kind == KAT_END_EXEC) {
            /* If the exec fails, kat_writer_resume() maps the file again. */
            trim_locked();
            writer.ids_stored_before_suspend = writer.next_string_id;
            writer.state = WRITER_SUSPENDED;
        } else {
            trim_locked();
            close_trace_fd();
            writer.state = WRITER_CLOSED;
        }
    }
    pthread_mutex_unlock(&writer.lock);
}

/* The exec failed and this image goes on: continue the same file. */
void kat_writer_resume(void)
{
    pthread_mutex_lock(&writer.lock);
    if (writer.state == WRITER_SUSPENDED && writer.owner_pid == getpid()) {
        if (writer.use_pwrite) {
            writer.state = WRITER_OPEN;
        } else {
            uint64_t used = writer.used;
            if (map_segment(writer.map_offset) == 0) {
                writer.used = used;
                writer.state = WRITER_OPEN;
                atomic_store_explicit(&spare_wanted, 1, memory_order_relaxed);
            } else {
                mark_failed();
            }
        }
        /* Another thread may have interned strings while the file was
         * unmapped: define them now, before any record uses them. */
        if (writer.state == WRITER_OPEN)
            for (uint32_t i = 0; i < writer.table_capacity; i++)
                if (writer.table[i].bytes && writer.table[i].id > writer.ids_stored_before_suspend)
                    store_string(&writer.table[i]);
    }
    pthread_mutex_unlock(&writer.lock);
}

/* pthread_atfork: keep the lock consistent across fork. */
void kat_writer_before_fork(void)
{
    kat_stage_flush_all();
    pthread_mutex_lock(&writer.lock);
    /* not while a spare is mapped outside the lock: the child would keep
     * that mapping of the parent's file, which no one there knows of */
    wait_spare_locked();
}

void kat_writer_after_fork_parent(void)
{
    pthread_mutex_unlock(&writer.lock);
}

void kat_writer_after_fork_child(void)
{
    /* The parent's mapping is the parent's file: never write into it. */
    unmap_segment();
    drop_spare(0);
    writer.preparing = 0;   /* kat_writer_before_fork waited for it ... */
    preparing_here = 0;     /* ... unless this thread forked from a handler inside it */
    pthread_cond_init(&spare_done, NULL);
    /* The inherited number: closed only if it is still the parent's trace,
     * never when the program has put its own file there. */
    close_trace_fd();
    writer.trace_path[0] = '\0';
    writer.fd_taken = 0;
    writer.used = 0;
    writer.map_offset = 0;
    writer.records = 0;
    writer.lost = 0;
    writer.segments_mapped_inline = 0;
    memcpy(writer.parent_file_name, writer.file_name, sizeof(writer.parent_file_name));
    writer.file_name[0] = '\0';
    writer.origin = KAT_ORIGIN_FORK;
    if (writer.state != WRITER_FAILED)
        writer.state = WRITER_UNOPENED;
    pthread_mutex_init(&writer.lock, NULL);
    /* the spare thread is the parent's; a child that uses CUDA starts its own */
    pthread_mutex_init(&spare_thread_lock, NULL);
    pthread_cond_init(&spare_thread_wake, NULL);
    spare_thread_pending = 0;
    atomic_store(&spare_thread_state, 0);
    kat_stage_after_fork_child();
}

uint64_t kat_writer_segments_mapped_inline(void)
{
    pthread_mutex_lock(&writer.lock);
    uint64_t n = writer.segments_mapped_inline;
    pthread_mutex_unlock(&writer.lock);
    return n;
}

int kat_writer_owned_by_this_process(void)
{
    return writer.owner_pid == getpid() && writer.state == WRITER_OPEN;
}
