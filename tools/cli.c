/* cli.c - see cli.h. */
#define _GNU_SOURCE
#include "cli.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void vmessage(const char *fmt, va_list ap)
{
    fputs("kaudit: error: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
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

void cli_die(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vmessage(fmt, ap);
    va_end(ap);
    exit(KAUDIT_EXIT_ERROR);
}

void *cli_xcalloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size ? size : 1);
    if (!p)
        cli_die("out of memory");
    return p;
}

void *cli_xrealloc(void *p, size_t size)
{
    p = realloc(p, size ? size : 1);
    if (!p)
        cli_die("out of memory");
    return p;
}

char *cli_xstrdup(const char *s)
{
    char *d = strdup(s);
    if (!d)
        cli_die("out of memory");
    return d;
}
