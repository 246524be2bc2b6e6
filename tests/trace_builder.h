/*
 * trace_builder.h - write synthetic trace files for tests.
 *
 * Builds a trace in memory exactly as the preload writer lays it out (file
 * header, 8-aligned records, zero padding), plus a few ways to break it, so
 * that reader tests need no GPU and no preload library.
 */
#ifndef KAUDIT_TRACE_BUILDER_H
#define KAUDIT_TRACE_BUILDER_H

#include <stddef.h>
#include <stdint.h>

#include "trace_format.h"

struct tb {
    uint8_t *buf;
    size_t len, cap;
    uint32_t next_string_id;
};

/* A file header for pid/ppid/origin/start; the buffer holds only it. */
void tb_init(struct tb *b, uint32_t pid, uint32_t ppid, uint32_t origin, uint64_t start_ns);
void tb_free(struct tb *b);

/* The header in place, for tests that corrupt it. */
struct kat_file_header *tb_header(struct tb *b);

/* Append a record: header, body, tail, zero padding to 8.  Returns its offset. */
size_t tb_record(struct tb *b, uint16_t type, const void *body, uint32_t body_size,
                 const void *tail, uint32_t tail_size);
/* Define a new string (next id); returns the id. */
uint32_t tb_string(struct tb *b, const char *s);
uint32_t tb_string_n(struct tb *b, const void *s, uint32_t n);
/* Define a string with a chosen id (duplicates and hostile ids). */
size_t tb_string_id(struct tb *b, uint32_t id, const void *s, uint32_t n);
/* The PROCESS_START record for the header's process, argv NUL-joined from a NULL-ended list. */
void tb_process_start(struct tb *b, const char *const *argv, const char *exe, const char *cwd);
/* A PROCESS_END record. */
void tb_process_end(struct tb *b, uint32_t kind, int32_t status, int status_known);
/* Raw bytes (a hand-made header word, garbage...). */
size_t tb_raw(struct tb *b, const void *bytes, size_t n);
/* Zero bytes: the unwritten tail of a segment. */
void tb_zeros(struct tb *b, size_t n);

/* Write the buffer to path; 0 on success. */
int tb_write(const struct tb *b, const char *path);

/* A fresh directory under $TMPDIR (or /tmp); the path is malloc'd. */
char *tb_tempdir(void);
/* Write `text` to dir/name; 0 on success. */
int tb_write_text(const char *dir, const char *name, const char *text);
/* rm -r of a directory made by tb_tempdir (one level of files). */
void tb_remove_dir(const char *dir);

#endif
