/*
 * cmd_dump.c - `kaudit dump`: print what a recorded session holds.
 *
 *   kaudit dump [--json | --kernels] DIR
 *
 * Human output (default, dump_text.c): the session info, then one block per
 * trace.  --kernels (dump_kernels.c): one TSV line per kernel, for
 * grep/awk/join.  --json (dump_json.c): one JSON document (schema in
 * docs/session-format.md, "kaudit dump").  This file parses the options;
 * reading the traces and rendering them is session/dump_session.c.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "commands.h"
#include "dump.h"

static const char dump_usage[] =
    "usage: kaudit dump [--json | --kernels] DIR\n"
    "\n"
    "Print what the recorded session in DIR holds.\n"
    "\n"
    "  --json     one JSON document (format \"kaudit-dump\", version 1)\n"
    "  --kernels  one TSV line per kernel: pid, correlation_id, vendor_call_id or -,\n"
    "             stream_id, start_ns, end_ns, name\n";

int cmd_dump(int argc, char **argv)
{
    struct dump d = { 0 };
    const char *dir = NULL;
    int options_done = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!options_done && !strcmp(a, "--")) {
            options_done = 1;
        } else if (!options_done && !strcmp(a, "--json")) {
            d.json = 1;
        } else if (!options_done && !strcmp(a, "--kernels")) {
            d.kernels_only = 1;
        } else if (!options_done && (!strcmp(a, "--help") || !strcmp(a, "-h"))) {
            fputs(dump_usage, stdout);
            return 0;
        } else if (!options_done && a[0] == '-' && a[1] != '\0') {
            return cli_usage_error(dump_usage, "unknown option '%s'", a);
        } else if (dir) {
            return cli_usage_error(dump_usage, "dump takes one session directory, got '%s' and '%s'",
                                   dir, a);
        } else {
            dir = a;
        }
    }
    if (!dir) {
        return cli_usage_error(dump_usage, "dump needs a session directory");
    }
    if (d.json && d.kernels_only) {
        return cli_usage_error(dump_usage, "--json and --kernels cannot be used together");
    }

    char err[1024];
    if (kat_session_open(dir, &d.session, err, sizeof(err)) != 0) {
        cli_error("%s", err);
        return KAUDIT_EXIT_ERROR;
    }
    dump_session(&d);

    for (size_t i = 0; i < d.unreadable_count; i++)
        free(d.unreadable[i]);
    free(d.unreadable);
    free(d.exits);
    kat_session_close(d.session);
    return d.failed ? KAUDIT_EXIT_ERROR : KAUDIT_EXIT_OK;
}

