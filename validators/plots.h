/*
 * plots.h - the validator statistics drawn (docs/validators.md, "Plots"):
 * the pooled false-accept rate of each validator with its abstention bounds,
 * and the Holm-adjusted McNemar p of each pair as a heat map, each as SVG
 * and PNG, drawn with cairo (plots.c; built only where cairo is found,
 * plots_none.c otherwise).  The layouts are public so that a test can find
 * the bars and cells in the pixels.
 */
#ifndef KAUDIT_VALIDATOR_PLOTS_H
#define KAUDIT_VALIDATOR_PLOTS_H

#include <stddef.h>

#include "ledger.h"

/* Whether this build draws plots (cairo was found). */
extern const int kvs_plot_available;

/* Writes DIR/false_accepts.svg, .png and DIR/mcnemar.svg, .png (DIR is
 * created when missing; the files are replaced).  pairs: kvs_pairs's.
 * 0, or -1 with a message naming the file in err. */
int kvs_plot_write(const struct kvs_ledger *l, const struct kvs_pair *pairs, size_t n_pairs, const char *dir,
                   char *err, size_t errlen);

/* The false-accept chart, in pixels of the PNG (SVG user units alike).
 * Validator i's slot spans [plot_left + i * slot_w, + slot_w); its bar is
 * bar_w wide from bar_left(i), from the 0% line y0 up to y0 - round(rate * h)
 * where h = y0 - y100.  Its bounds are a vertical line at the bar's centre
 * from low to high, with caps cap_w wide.  Bars are filled with
 * KVS_PLOT_BAR_RGB; a validator without decided accepts has no bar. */
struct kvs_fa_layout {
    int width, height;
    int plot_left, slot_w, bar_w, cap_w;
    int y0, y100;
    int title_top, title_bottom;
};
void kvs_plot_fa_layout(size_t n_validators, struct kvs_fa_layout *g);
int kvs_plot_bar_left(const struct kvs_fa_layout *g, size_t i);

/* The McNemar heat map: cell (row i, column j) spans [left + j * cell,
 * + cell) x [top + i * cell, + cell); both (i, j) and (j, i) show the pair's
 * Holm-adjusted p in the colour kvs_plot_p_color gives, the diagonal
 * KVS_PLOT_DIAGONAL_RGB.  The p is written in the cell's middle; the cell's
 * colour is whole within 4 pixels of its corners. */
struct kvs_heat_layout {
    int width, height;
    int left, top, cell;
};
void kvs_plot_heat_layout(size_t n_validators, struct kvs_heat_layout *g);
/* p (Holm-adjusted) to the heat map's colour: from near white at p = 1 to
 * dark red at p <= 1e-4, linear in -log10 p. */
void kvs_plot_p_color(double p, double rgb[3]);

#define KVS_PLOT_BAR_RGB 0.1216, 0.4667, 0.7059       /* the bars */
#define KVS_PLOT_BOUNDS_RGB 0.0, 0.0, 0.0             /* the abstention bounds */
#define KVS_PLOT_DIAGONAL_RGB 0.85, 0.85, 0.85
#define KVS_PLOT_BACKGROUND_RGB 1.0, 1.0, 1.0

#endif
