/* session_name.c - numbering of default session directories (session_name.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <sys/stat.h>

#include "session_name.h"

#define KAUDIT_SESSION_MAX 100000

int kaudit_new_session_dir(char *out, size_t size)
{
    return kaudit_new_numbered_dir("kaudit", ".session", out, size);
}

int kaudit_new_numbered_dir(const char *stem, const char *suffix, char *out, size_t size)
{
    for (int n = 1; n < KAUDIT_SESSION_MAX; n++) {
        if (n == 1)
            snprintf(out, size, "%s%s", stem, suffix);
        else
            snprintf(out, size, "%s-%d%s", stem, n, suffix);
        if (mkdir(out, 0755) == 0)
            return 0;
        if (errno != EEXIST)
            return -1;
    }
    errno = EEXIST;
    return -1;
}
