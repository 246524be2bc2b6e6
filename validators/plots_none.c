/*
 * plots_none.c - plots.h where cairo was not found at build time: no plots,
 * and a message that says how to get them.
 */
#include <stdio.h>

#include "plots.h"

const int kvs_plot_available = 0;

int kvs_plot_write(const struct kvs_ledger *l, const struct kvs_pair *pairs, size_t n_pairs, const char *dir,
                   char *err, size_t errlen)
{
    (void)l, (void)pairs, (void)n_pairs;
    snprintf(err, errlen, "cannot draw plots into '%s': kaudit was built without cairo (apt-get install "
                          "libcairo2-dev, then build again)", dir);
    return -1;
}
