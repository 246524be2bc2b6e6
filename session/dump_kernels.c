/*
 * dump_kernels.c - `kaudit dump --kernels`: one TSV line per kernel (pid,
 * correlation_id, vendor_call_id or -, stream_id, start_ns, end_ns, name),
 * for grep/awk/join.
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdio.h>

#include "dump.h"

/* TSV field: tab, newline and backslash escaped so every kernel stays one line. */
static void tsv_text(FILE *f, const char *str, size_t n)
{
    const unsigned char *s = (const unsigned char *)str;
    if (n == 0) {
        putc('?', f);
        return;
    }
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '\\')
            fputs("\\\\", f);
        else if (s[i] == '\t')
            fputs("\\t", f);
        else if (s[i] == '\n')
            fputs("\\n", f);
        else if (s[i] < 0x20 || s[i] == 0x7f)
            fprintf(f, "\\x%02x", s[i]);
        else
            putc(s[i], f);
    }
}

void dump_kernels_process(struct proc *p)
{
    struct kat_record r;
    uint32_t pid = proc_pid(p);
    pass_begin(p);
    while (pass_next(p, &r, KAT_REC_KERNEL)) {
        const struct kat_kernel_rec *k = r.body;
        uint64_t call = kat_trace_index_vendor_call_of(&p->ix, k->correlation_id);
        printf("%" PRIu32 "\t%" PRIu32 "\t", pid, k->correlation_id);
        if (call)
            printf("%" PRIu64, call);
        else
            putchar('-');
        printf("\t%" PRIu32 "\t%" PRIu64 "\t%" PRIu64 "\t", k->stream_id, k->start_ns, k->end_ns);
        tsv_text(stdout, S(p, k->name_string), SL(p, k->name_string));
        putchar('\n');
    }
}

