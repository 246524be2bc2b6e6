/*
 * dump_shared.c - what the renderings of `kaudit dump` share (dump.h): a
 * wait status in words, and the per-name and per-API counts in the order
 * they are printed (most frequent first, ties by id so that the order does
 * not depend on the hash map).  Apart from dump_session.c so that the
 * renderers do not call back into their driver.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>

#include "dump.h"
#include "toolbox.h"

void dump_describe_wait_status(char *buf, size_t n, int status)
{
    if (WIFEXITED(status))
        snprintf(buf, n, "exited %d", WEXITSTATUS(status));
    else if (WIFSIGNALED(status))
        snprintf(buf, n, "killed by signal %d%s", WTERMSIG(status),
                 WCOREDUMP(status) ? " (core dumped)" : "");
    else
        snprintf(buf, n, "wait status 0x%x", (unsigned)status);
}

static int compare_name_count(const void *a, const void *b)
{
    const struct name_count *x = a, *y = b;
    if (x->count != y->count)
        return x->count > y->count ? -1 : 1;
    return x->name_string < y->name_string ? -1 : x->name_string > y->name_string;
}

struct name_count *dump_sorted_names(const struct kat_u64map *m)
{
    struct name_count *v = kat_xcalloc(m->count, sizeof(*v));
    size_t n = 0;
    for (size_t i = 0; i < m->cap; i++)
        if (m->used[i])
            v[n++] = (struct name_count){ (uint32_t)m->keys[i], m->vals[i] };
    if (n > 1)
        qsort(v, n, sizeof(*v), compare_name_count);
    return v;
}

static int compare_api(const void *a, const void *b)
{
    const struct api_count *x = a, *y = b;
    if (x->count != y->count)
        return x->count > y->count ? -1 : 1;
    if (x->domain != y->domain)
        return x->domain < y->domain ? -1 : 1;
    return x->cbid < y->cbid ? -1 : x->cbid > y->cbid;
}

void dump_sort_apis(struct proc *p)
{
    if (p->api_count > 1)
        qsort(p->apis, p->api_count, sizeof(*p->apis), compare_api);
}
