/*
 * trace_reader.h - a streaming reader of one trace file (trace_format.h).
 *
 * The file is mapped read-only and walked record by record; records are
 * never copied, so memory stays bounded by the string table whatever the
 * trace's size.  Every record header is validated before its body is looked
 * at, so a hostile or torn file yields an error naming the byte offset, never
 * a crash.  Depends on libc only: `kaudit dump` runs on the GPU machine too.
 *
 * Error messages are written into a caller buffer, git style, without the
 * "kaudit: error: " prefix (the command adds it):
 *   cannot read trace 'x.kat': record at offset 4096 has size 3 (not a multiple of 8)
 *
 * Typical use:
 *   struct kat_trace *t = kat_trace_open(path, err, sizeof err);
 *   struct kat_record r;
 *   int rc;
 *   while ((rc = kat_trace_next(t, &r, err, sizeof err)) == 1)
 *       if (r.type == KAT_REC_KERNEL) { const struct kat_kernel_rec *k = r.body; ... }
 *   if (rc < 0) report(err);
 *   if (!kat_trace_complete(t)) ... truncated ...
 *   kat_trace_close(t);
 */
#ifndef KAUDIT_TRACE_READER_H
#define KAUDIT_TRACE_READER_H

#include <stddef.h>
#include <stdint.h>

#include "trace_format.h"
#include "trace_names.h"

/*
 * One open trace file (mmap'd read-only).  The mapping covers the file as it
 * was at open: a trace still being written can be read (its committed prefix),
 * but records committed later are not seen.  Known limit: the writer shrinks
 * its file when it closes it; if that happens while a reader is open and the
 * reader's end-of-data word falls on a page the file no longer has, the read
 * faults (SIGBUS).  Read a session after `kaudit run` has returned.
 */
struct kat_trace;

/* One record as kat_trace_next returns it; pointers stay valid until close. */
struct kat_record {
    uint16_t type, flags;
    uint32_t size;              /* whole record, header included */
    uint64_t offset;            /* offset of the record header in the file */
    /*
     * The fixed struct for this type.  For known types body_size is exactly
     * sizeof that struct (a record shorter than it is an error; a longer one,
     * from a newer writer that appended fields, is accepted and the extra
     * bytes land in tail).  For unknown types (never returned) it would be 0.
     * body is 8-byte aligned, so it may be cast to the struct directly.
     */
    const void *body;
    uint32_t body_size;
    const void *tail;           /* bytes after the fixed struct */
    uint32_t tail_size;
};

/*
 * Open and validate the file header.  NULL with a message naming the file on
 * error: cannot be opened, not a regular file, too short, bad magic, or a
 * format_version outside [KAT_FORMAT_MIN_READABLE, KAT_FORMAT_VERSION]
 * (the message names both versions).
 */
struct kat_trace *kat_trace_open(const char *path, char *err, size_t err_size);
void kat_trace_close(struct kat_trace *t);

const struct kat_file_header *kat_trace_header(const struct kat_trace *t);
/* The path as given to kat_trace_open. */
const char *kat_trace_path(const struct kat_trace *t);
/* Size of the mapped file in bytes. */
uint64_t kat_trace_file_size(const struct kat_trace *t);

/*
 * 1: the next record is in *rec (STRING and PAD records are consumed
 *    internally and never returned; records of unknown types are skipped);
 * 0: end of committed data (a zero header word, or the end of the file);
 * -1: malformed; err names the file and the byte offset.  After -1 every
 *    further call returns -1 with the same message until kat_trace_rewind.
 * err may be NULL when the caller does not want the message.
 */
int kat_trace_next(struct kat_trace *t, struct kat_record *rec, char *err, size_t err_size);

/*
 * A string defined by a STRING record read so far (strings are defined before
 * their first use, so every id a returned record names is known).  "" for id
 * 0 or an unknown id.  The result is always NUL-terminated, but may also
 * contain NUL bytes (argv is NUL-joined): use kat_trace_string_length.
 */
const char *kat_trace_string(const struct kat_trace *t, uint32_t id);
uint32_t kat_trace_string_length(const struct kat_trace *t, uint32_t id);
/* 1 when id is defined (distinguishes an unknown id from an empty string). */
int kat_trace_string_known(const struct kat_trace *t, uint32_t id);

/*
 * A PROCESS_END record was read and no record followed it, as far as the
 * trace has been read (a rewind does not forget it).  0 after reading to the
 * end = a truncated trace.  Records after an end record are
 * legitimate: when an exec fails the image goes on writing the same trace
 * after its KAT_END_EXEC record, and only a later end record completes it.
 */
int kat_trace_complete(const struct kat_trace *t);

/*
 * Start again at the first record (and clear an error).  Strings already read
 * stay defined, so a second pass resolves every name, and kat_trace_complete
 * keeps describing the furthest point read.
 */
void kat_trace_rewind(struct kat_trace *t);

/* Offset of the next record header to be read. */
uint64_t kat_trace_offset(const struct kat_trace *t);
/* The message of the last -1 from kat_trace_next, "" if none. */
const char *kat_trace_error(const struct kat_trace *t);

/* "kernel", "vendor_call", ... for a record type; "unknown" otherwise. */
const char *kat_record_type_name(uint16_t type);
/* sizeof the fixed struct of a known record type; 0 for unknown types. */
uint32_t kat_record_body_min(uint16_t type);
/* The names of the other enums (health codes, ...) are in trace_names.h. */

#endif /* KAUDIT_TRACE_READER_H */
