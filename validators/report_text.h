/*
 * report_text.h - the escaping the report commands share (kaudit validators,
 * kaudit gates, the --labels tables): names from a ledger written into JSON,
 * CSV and markdown tables.  One copy, so that the commands escape alike.
 */
#ifndef KAUDIT_REPORT_TEXT_H
#define KAUDIT_REPORT_TEXT_H

#include <stdio.h>

/* s as a JSON string, quotes included: '"' and '\\' backslash-escaped,
 * control characters (< 0x20) as \u00XX, every other byte as it is. */
void report_json_string(FILE *f, const char *s);
/* s as a quoted CSV field, '"' doubled. */
void report_csv_string(FILE *f, const char *s);
/* s in a markdown table cell: '|' escaped, a newline a space. */
void report_md_string(FILE *f, const char *s);
/* x as %.17g, NaN as null. */
void report_json_number(FILE *f, double x);

#endif
