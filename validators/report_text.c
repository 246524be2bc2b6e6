/*
 * report_text.c - the escaping of report_text.h.
 */
#include "report_text.h"

#include <math.h>

#include "json_writer.h"

void report_json_string(FILE *f, const char *s)
{
    /* the one JSON string rule (json_writer.h): invalid UTF-8 is repaired as
     * every other writer repairs it */
    kat_json_cstring(f, s);
}

void report_csv_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"')
            fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

void report_md_string(FILE *f, const char *s)
{
    for (; *s; s++)
        if (*s == '|')
            fputs("\\|", f);
        else if (*s == '\n')
            fputc(' ', f);
        else
            fputc(*s, f);
}

void report_json_number(FILE *f, double x)
{
    if (isnan(x))
        fputs("null", f);
    else
        fprintf(f, "%.17g", x);
}
