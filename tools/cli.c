/* cli.c - see cli.h. */
#define _GNU_SOURCE
#include "cli.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void vmessage(const char *fmt, va_list ap)
{
    kat_vsay("error", fmt, ap);
}

int cli_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vmessage(fmt, ap);
    va_end(ap);
    return -1;
}

int cli_usage_error(const char *usage, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vmessage(fmt, ap);
    va_end(ap);
    /* "usage: kaudit NAME ..." -> NAME, for the pointer to its --help */
    size_t line = strcspn(usage, "\n");
    const char *name = usage + strlen("usage: kaudit ");
    size_t name_len = strncmp(usage, "usage: kaudit ", 14) ? 0 : strcspn(name, " \n");
    if (name_len)
        fprintf(stderr, "%.*s (kaudit %.*s --help for more)\n", (int)line, usage, (int)name_len, name);
    else
        fprintf(stderr, "%.*s (kaudit --help for more)\n", (int)line, usage);
    return KAUDIT_EXIT_USAGE;
}

int cli_bad_option(const char *usage, int missing_value, const char *arg)
{
    if (missing_value)
        return cli_usage_error(usage, "option '%s' needs a value", arg);
    return cli_usage_error(usage, "unknown option '%s'", arg);
}

void cli_warn(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    kat_vsay("warning", fmt, ap);
    va_end(ap);
}

void cli_note(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    kat_vsay("note", fmt, ap);
    va_end(ap);
}
