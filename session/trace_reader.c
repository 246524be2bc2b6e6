/*
 * trace_reader.c - streaming reader of one trace file; see trace_reader.h.
 *
 * Trust nothing in the file: every size is checked against the bytes that
 * are really there before anything is read through it, and every table the
 * reader builds grows only with records it has read, so its memory is
 * bounded by the file size whatever ids or lengths a hostile file claims.
 */
#define _GNU_SOURCE
#include "trace_reader.h"
#include "safe_file.h"

#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

enum reader_state { READ_OK = 0, READ_END = 1, READ_ERROR = -1 };

struct string_slot {
    uint32_t id;                /* 0: empty slot (id 0 is never stored) */
    uint32_t length;
    const char *text;           /* into the mapping, or `owned` */
    char *owned;                /* copy made when the bytes are not NUL-followed */
    uint64_t offset;            /* of the defining record, for duplicate messages */
};

struct kat_trace {
    char *path;
    const uint8_t *map;
    uint64_t size;
    const struct kat_file_header *header;
    uint64_t first_record;      /* header_size */
    uint64_t pos;               /* next record header */
    int state;
    int complete;
    char error[512];

    /* String table: open addressing, linear probing, power-of-two capacity. */
    struct string_slot *slots;
    uint32_t slot_count;
    uint32_t string_count;
    /*
     * Every record below this offset has been read before.  After a rewind
     * their STRING records are skipped instead of being reported as
     * duplicates (strings stay resolvable during a second pass), and they do
     * not change `complete`, which describes the furthest point read.
     */
    uint64_t read_to;
    /* Pages before this offset were handed back (see release_behind). */
    uint64_t released;
};

/*
 * Reading streams: the pages of a large trace already passed are handed back
 * to the kernel, so the resident set stays near RELEASE_WINDOW however large
 * the file.  The mapping is private and read-only, so a later touch (a
 * pointer the caller kept, a string, a second pass) reads the file again.
 */
#define RELEASE_WINDOW (32ull << 20)

static void release_behind(struct kat_trace *t)
{
    if (t->pos < t->released + 2 * RELEASE_WINDOW)
        return;
    long page = sysconf(_SC_PAGESIZE);
    uint64_t pagesz = page > 0 ? (uint64_t)page : 4096;
    uint64_t end = (t->pos - RELEASE_WINDOW) / pagesz * pagesz;
    uint64_t start = t->released / pagesz * pagesz;
    if (end > start)
        (void)madvise((void *)(t->map + start), (size_t)(end - start), MADV_DONTNEED);
    t->released = end;
}

/* ---- record type table ---------------------------------------------------- */

struct type_info {
    const char *name;
    uint32_t body;              /* sizeof the fixed struct */
};

static const struct type_info type_table[KAT_REC_TYPE_COUNT] = {
    [KAT_REC_PAD] = { "pad", 0 },
    [KAT_REC_STRING] = { "string", sizeof(struct kat_string_rec) },
    [KAT_REC_PROCESS_START] = { "process_start", sizeof(struct kat_process_start_rec) },
    [KAT_REC_PROCESS_END] = { "process_end", sizeof(struct kat_process_end_rec) },
    [KAT_REC_EXEC] = { "exec", sizeof(struct kat_exec_rec) },
    [KAT_REC_FORK] = { "fork", sizeof(struct kat_fork_rec) },
    [KAT_REC_CHILD_EXIT] = { "child_exit", sizeof(struct kat_child_exit_rec) },
    [KAT_REC_HEALTH] = { "health", sizeof(struct kat_health_rec) },
    [KAT_REC_LIBRARY] = { "library", sizeof(struct kat_library_rec) },
    [KAT_REC_MODULE] = { "module", sizeof(struct kat_module_rec) },
    [KAT_REC_KERNEL] = { "kernel", sizeof(struct kat_kernel_rec) },
    [KAT_REC_API] = { "api", sizeof(struct kat_api_rec) },
    [KAT_REC_MEMCPY] = { "memcpy", sizeof(struct kat_memcpy_rec) },
    [KAT_REC_MEMSET] = { "memset", sizeof(struct kat_memset_rec) },
    [KAT_REC_SYNC] = { "sync", sizeof(struct kat_sync_rec) },
    [KAT_REC_CUDA_EVENT] = { "cuda_event", sizeof(struct kat_cuda_event_rec) },
    [KAT_REC_EXTERNAL_CORRELATION] = { "external_correlation",
                                       sizeof(struct kat_external_correlation_rec) },
    [KAT_REC_NVTX] = { "nvtx", sizeof(struct kat_nvtx_rec) },
    [KAT_REC_VENDOR_CALL] = { "vendor_call", sizeof(struct kat_vendor_call_rec) },
    [KAT_REC_TIMING_CALL] = { "timing_call", sizeof(struct kat_timing_call_rec) },
    [KAT_REC_TIMING_SYMBOL] = { "timing_symbol", sizeof(struct kat_timing_symbol_rec) },
    [KAT_REC_DEVICE] = { "device", sizeof(struct kat_device_rec) },
    [KAT_REC_VERSIONS] = { "versions", sizeof(struct kat_versions_rec) },
    [KAT_REC_THREAD] = { "thread", sizeof(struct kat_thread_rec) },
    [KAT_REC_FOREIGN_CUPTI] = { "foreign_cupti", sizeof(struct kat_foreign_cupti_rec) },
    [KAT_REC_CLOCK_SYNC] = { "clock_sync", sizeof(struct kat_clock_sync_rec) },
};

/* Records are 8-aligned in the file; bodies are cast in place, so every
 * fixed struct must keep a size that preserves that alignment. */
_Static_assert(sizeof(struct kat_file_header) == 64, "file header is 64 bytes");
_Static_assert(sizeof(struct kat_record_header) == 8, "record header is 8 bytes");
_Static_assert(sizeof(struct kat_vendor_call_rec) % 8 == 0, "vendor call keeps 8-alignment");

const char *kat_record_type_name(uint16_t type)
{
    if (type < KAT_REC_TYPE_COUNT && type_table[type].name)
        return type_table[type].name;
    return "unknown";
}

uint32_t kat_record_body_min(uint16_t type)
{
    if (type < KAT_REC_TYPE_COUNT && type_table[type].name)
        return type_table[type].body;
    return 0;
}


/* ---- errors ---------------------------------------------------------------- */

static void put_message(char *err, size_t err_size, const char *msg)
{
    if (err && err_size)
        snprintf(err, err_size, "%s", msg);
}

static void open_error(char *err, size_t err_size, const char *path, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void open_error(char *err, size_t err_size, const char *path, const char *fmt, ...)
{
    char detail[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(detail, sizeof(detail), fmt, ap);
    va_end(ap);
    if (err && err_size)
        snprintf(err, err_size, "cannot read trace '%s': %s", path, detail);
}

/* Enter the sticky error state: later calls repeat the same message. */
static int read_error(struct kat_trace *t, char *err, size_t err_size, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int read_error(struct kat_trace *t, char *err, size_t err_size, const char *fmt, ...)
{
    char detail[384];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(detail, sizeof(detail), fmt, ap);
    va_end(ap);
    snprintf(t->error, sizeof(t->error), "cannot read trace '%s': %s", t->path, detail);
    t->state = READ_ERROR;
    put_message(err, err_size, t->error);
    return -1;
}

/* ---- open / close ---------------------------------------------------------- */

struct kat_trace *kat_trace_open(const char *path, char *err, size_t err_size)
{
    /* O_NONBLOCK: opening a FIFO by mistake must fail below, not hang here. */
    /* O_NOFOLLOW too: a trace lives in a session directory (safe_file.h). */
    char detail[PATH_MAX + 128];
    off_t file_size = 0;
    int fd = kat_open_input(path, KAT_SAFE_NOFOLLOW, &file_size, detail, sizeof detail);
    if (fd < 0 && errno == EINVAL) {
        open_error(err, err_size, path, "%s", detail);
        return NULL;
    }
    if (fd < 0) {
        if (err && err_size)
            snprintf(err, err_size, "cannot open trace '%s': %s", path, strerror(errno));
        return NULL;
    }
    uint64_t size = (uint64_t)file_size;
    if (size < sizeof(struct kat_file_header)) {
        open_error(err, err_size, path, "file is %llu bytes, too short for the %zu-byte trace header",
                   (unsigned long long)size, sizeof(struct kat_file_header));
        close(fd);
        return NULL;
    }
    if (size > (uint64_t)SIZE_MAX) {
        open_error(err, err_size, path, "file is too large to map");
        close(fd);
        return NULL;
    }
    void *map = mmap(NULL, (size_t)size, PROT_READ, MAP_PRIVATE, fd, 0);
    int map_errno = errno;
    close(fd);                  /* the mapping keeps the file */
    if (map == MAP_FAILED) {
        open_error(err, err_size, path, "cannot map: %s", strerror(map_errno));
        return NULL;
    }

    const struct kat_file_header *h = map;
    const char *why = NULL;
    char why_buf[192];
    if (memcmp(h->magic, KAT_TRACE_MAGIC, sizeof(h->magic)) != 0) {
        why = "not a kaudit trace (bad magic)";
    } else if (h->format_version > KAT_FORMAT_VERSION) {
        snprintf(why_buf, sizeof(why_buf),
                 "format version %u is newer than this kaudit reads (versions %u to %u); "
                 "use a newer kaudit", h->format_version, KAT_FORMAT_MIN_READABLE,
                 KAT_FORMAT_VERSION);
        why = why_buf;
    } else if (h->format_version < KAT_FORMAT_MIN_READABLE) {
        snprintf(why_buf, sizeof(why_buf),
                 "format version %u is older than this kaudit reads (versions %u to %u)",
                 h->format_version, KAT_FORMAT_MIN_READABLE, KAT_FORMAT_VERSION);
        why = why_buf;
    } else if (h->header_size < sizeof(struct kat_file_header) || h->header_size % 8 != 0 ||
               h->header_size > size) {
        /* A newer writer may grow the header; records start at header_size
         * either way, and must stay 8-aligned. */
        snprintf(why_buf, sizeof(why_buf),
                 "file header claims size %u (must be a multiple of 8, at least %zu, "
                 "and within the %llu-byte file)", h->header_size,
                 sizeof(struct kat_file_header), (unsigned long long)size);
        why = why_buf;
    }
    if (why) {
        open_error(err, err_size, path, "%s", why);
        munmap(map, (size_t)size);
        return NULL;
    }

    struct kat_trace *t = calloc(1, sizeof(*t));
    char *path_copy = strdup(path);
    if (!t || !path_copy) {
        free(t);
        free(path_copy);
        munmap(map, (size_t)size);
        open_error(err, err_size, path, "out of memory");
        return NULL;
    }
    t->path = path_copy;
    t->map = map;
    t->size = size;
    t->header = h;
    t->first_record = h->header_size;
    t->pos = t->first_record;
    t->read_to = t->first_record;
    return t;
}

void kat_trace_close(struct kat_trace *t)
{
    if (!t)
        return;
    for (uint32_t i = 0; i < t->slot_count; i++)
        free(t->slots[i].owned);
    free(t->slots);
    munmap((void *)t->map, (size_t)t->size);
    free(t->path);
    free(t);
}

const struct kat_file_header *kat_trace_header(const struct kat_trace *t) { return t->header; }
const char *kat_trace_path(const struct kat_trace *t) { return t->path; }
uint64_t kat_trace_file_size(const struct kat_trace *t) { return t->size; }
uint64_t kat_trace_offset(const struct kat_trace *t) { return t->pos; }
int kat_trace_complete(const struct kat_trace *t) { return t->complete; }
const char *kat_trace_error(const struct kat_trace *t)
{
    return t->state == READ_ERROR ? t->error : "";
}

void kat_trace_rewind(struct kat_trace *t)
{
    t->pos = t->first_record;
    t->released = 0;
    t->state = READ_OK;
    t->error[0] = '\0';
}

/* ---- string table ------------------------------------------------------------ */

static uint32_t hash_id(uint32_t id)
{
    /* Fibonacci hashing: ids are usually dense small integers, which a
     * multiplicative hash spreads over the whole table. */
    return (uint32_t)(id * 2654435769u);
}

static struct string_slot *find_slot(const struct kat_trace *t, uint32_t id)
{
    if (id == 0 || t->slot_count == 0)
        return NULL;
    uint32_t mask = t->slot_count - 1;
    for (uint32_t i = hash_id(id) & mask;; i = (i + 1) & mask) {
        struct string_slot *s = &t->slots[i];
        if (s->id == id)
            return s;
        if (s->id == 0)
            return NULL;        /* load factor <= 1/2: an empty slot always exists */
    }
}

static int grow_strings(struct kat_trace *t)
{
    uint32_t new_count = t->slot_count ? t->slot_count * 2 : 64;
    if (new_count < t->slot_count)
        return -1;
    struct string_slot *slots = calloc(new_count, sizeof(*slots));
    if (!slots)
        return -1;
    uint32_t mask = new_count - 1;
    for (uint32_t i = 0; i < t->slot_count; i++) {
        if (t->slots[i].id == 0)
            continue;
        uint32_t j = hash_id(t->slots[i].id) & mask;
        while (slots[j].id != 0)
            j = (j + 1) & mask;
        slots[j] = t->slots[i];
    }
    free(t->slots);
    t->slots = slots;
    t->slot_count = new_count;
    return 0;
}

/*
 * Define one string from a STRING record at `offset`.  The table holds one
 * slot per STRING record read (each at least 16 bytes of file), so its size
 * is bounded by the file, not by the ids the file claims.
 */
static int define_string(struct kat_trace *t, uint64_t offset, uint32_t record_size,
                         char *err, size_t err_size)
{
    const struct kat_string_rec *s = (const void *)(t->map + offset + sizeof(struct kat_record_header));
    uint32_t room = record_size - (uint32_t)sizeof(struct kat_record_header) - (uint32_t)sizeof(*s);
    if (s->id == 0)
        return read_error(t, err, err_size,
                          "string record at offset %llu defines id 0 (reserved for no string)",
                          (unsigned long long)offset);
    if (s->length > room)
        return read_error(t, err, err_size,
                          "string record at offset %llu has length %u (more than the %u bytes it holds)",
                          (unsigned long long)offset, s->length, room);
    const struct string_slot *dup = find_slot(t, s->id);
    if (dup)
        return read_error(t, err, err_size,
                          "string record at offset %llu redefines string id %u (defined at offset %llu)",
                          (unsigned long long)offset, s->id, (unsigned long long)dup->offset);
    if ((uint64_t)(t->string_count + 1) * 2 > t->slot_count && grow_strings(t) != 0)
        return read_error(t, err, err_size, "out of memory for the string table at offset %llu",
                          (unsigned long long)offset);

    const char *text = (const char *)(s + 1);
    char *owned = NULL;
    /* Zero padding usually terminates the string in place; only a length that
     * fills its record exactly (or non-zero padding) needs a terminated copy. */
    if (s->length == room || text[s->length] != '\0') {
        owned = malloc((size_t)s->length + 1);
        if (!owned)
            return read_error(t, err, err_size, "out of memory for the string at offset %llu",
                              (unsigned long long)offset);
        memcpy(owned, text, s->length);
        owned[s->length] = '\0';
        text = owned;
    }
    uint32_t mask = t->slot_count - 1;
    uint32_t i = hash_id(s->id) & mask;
    while (t->slots[i].id != 0)
        i = (i + 1) & mask;
    t->slots[i] = (struct string_slot){ s->id, s->length, text, owned, offset };
    t->string_count++;
    return 0;
}

const char *kat_trace_string(const struct kat_trace *t, uint32_t id)
{
    const struct string_slot *s = find_slot(t, id);
    return s ? s->text : "";
}

uint32_t kat_trace_string_length(const struct kat_trace *t, uint32_t id)
{
    const struct string_slot *s = find_slot(t, id);
    return s ? s->length : 0;
}

int kat_trace_string_known(const struct kat_trace *t, uint32_t id)
{
    return find_slot(t, id) != NULL;
}

/* ---- records ------------------------------------------------------------------ */

int kat_trace_next(struct kat_trace *t, struct kat_record *rec, char *err, size_t err_size)
{
    if (t->state == READ_ERROR) {
        put_message(err, err_size, t->error);
        return -1;
    }
    if (t->state == READ_END)
        return 0;

    release_behind(t);
    for (;;) {
        uint64_t off = t->pos;
        uint64_t left = t->size - off;
        if (left == 0) {
            /* The writer grows the file in zero-filled steps, so a file that
             * ends exactly after a record is just as finished. */
            t->state = READ_END;
            return 0;
        }
        if (left < sizeof(struct kat_record_header)) {
            for (uint64_t i = 0; i < left; i++)
                if (t->map[off + i] != 0)
                    return read_error(t, err, err_size,
                                      "%llu trailing bytes at offset %llu are not a record header",
                                      (unsigned long long)left, (unsigned long long)off);
            t->state = READ_END;
            return 0;
        }

        struct kat_record_header h;
        memcpy(&h, t->map + off, sizeof(h));
        if (h.size == 0 && h.type == 0 && h.flags == 0) {
            /* The header word is stored last, in one 64-bit store: zero means
             * nothing was ever committed from here on. */
            t->state = READ_END;
            return 0;
        }
        if (h.size < sizeof(h))
            return read_error(t, err, err_size,
                              "record at offset %llu has size %u (smaller than the 8-byte record header)",
                              (unsigned long long)off, h.size);
        if (h.size % 8 != 0)
            return read_error(t, err, err_size,
                              "record at offset %llu has size %u (not a multiple of 8)",
                              (unsigned long long)off, h.size);
        if (h.size > left)
            return read_error(t, err, err_size,
                              "record at offset %llu has size %u (past the end of the %llu-byte file)",
                              (unsigned long long)off, h.size, (unsigned long long)t->size);

        uint32_t payload = h.size - (uint32_t)sizeof(h);
        int known = h.type < KAT_REC_TYPE_COUNT && type_table[h.type].name != NULL;
        if (!known) {
            /* A newer writer's record type: its size is valid, so step over it. */
            t->pos = off + h.size;
            continue;
        }
        uint32_t need = type_table[h.type].body;
        if (payload < need)
            return read_error(t, err, err_size,
                              "record at offset %llu (%s) has size %u (its fixed part needs %u)",
                              (unsigned long long)off, type_table[h.type].name, h.size,
                              need + (uint32_t)sizeof(h));

        if (h.type == KAT_REC_PAD) {
            t->pos = off + h.size;
            continue;
        }
        if (h.type == KAT_REC_STRING) {
            if (off >= t->read_to) {
                if (define_string(t, off, h.size, err, err_size) != 0)
                    return -1;
                t->read_to = off + h.size;
            }
            t->pos = off + h.size;
            continue;
        }

        const uint8_t *body = t->map + off + sizeof(h);
        rec->type = h.type;
        rec->flags = h.flags;
        rec->size = h.size;
        rec->offset = off;
        rec->body = body;
        rec->body_size = need;
        rec->tail = body + need;
        rec->tail_size = payload - need;
        /* A failed exec resumes the same trace after its exec end record,
         * so only an end record that nothing follows makes the trace complete. */
        if (off >= t->read_to) {
            t->complete = h.type == KAT_REC_PROCESS_END;
            t->read_to = off + h.size;
        }
        t->pos = off + h.size;
        return 1;
    }
}
