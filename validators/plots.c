/*
 * plots.c - the validator statistics drawn with cairo (plots.h;
 * docs/validators.md, "Plots"): each figure is drawn once onto cairo's SVG
 * surface and once onto an image surface written as PNG, by the same code.
 * Text uses cairo's toy font API (fontconfig picks DejaVu Sans, or what it
 * has).  Built only where cairo is found; plots_none.c otherwise.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cairo-svg.h>
#include <cairo.h>

#include "plots.h"
#include "validator_stats.h"
#include "toolbox.h"

const int kvs_plot_available = 1;

/* ------------------------------------------------------------------ layout */

void kvs_plot_fa_layout(size_t n, struct kvs_fa_layout *g)
{
    memset(g, 0, sizeof *g);
    g->title_top = 8;
    g->title_bottom = 52;
    g->plot_left = 84;
    g->slot_w = 96;
    g->bar_w = 48;
    g->cap_w = 16;
    g->y100 = 84;
    g->y0 = g->y100 + 360;
    int w = g->plot_left + (int)(n ? n : 1) * g->slot_w + 40;
    g->width = w < 560 ? 560 : w;
    g->height = g->y0 + 110;
}

int kvs_plot_bar_left(const struct kvs_fa_layout *g, size_t i)
{
    return g->plot_left + (int)i * g->slot_w + (g->slot_w - g->bar_w) / 2;
}

void kvs_plot_heat_layout(size_t n, struct kvs_heat_layout *g)
{
    memset(g, 0, sizeof *g);
    g->cell = 64;
    g->left = 180;
    g->top = 170;
    int side = (int)(n ? n : 1) * g->cell;
    int legend = side < 200 ? 200 : side;
    g->width = g->left + side + 150;
    g->height = g->top + legend + 40;
    if (g->width < 560)
        g->width = 560;
}

/* The colour map: three stops, linear in t = -log10(p) / 4 between them. */
static const double stops[3][4] = {
    { 0.0, 0.97, 0.97, 0.97 },
    { 0.5, 0.99, 0.60, 0.35 },
    { 1.0, 0.55, 0.00, 0.05 },
};

void kvs_plot_p_color(double p, double rgb[3])
{
    double t = p > 0 ? -log10(p) / 4.0 : 1.0;
    if (!(t > 0))
        t = 0;
    if (t > 1)
        t = 1;
    int k = t <= 0.5 ? 0 : 1;
    double f = (t - stops[k][0]) / (stops[k + 1][0] - stops[k][0]);
    for (int c = 0; c < 3; c++)
        rgb[c] = stops[k][c + 1] + f * (stops[k + 1][c + 1] - stops[k][c + 1]);
}

/* ------------------------------------------------------------------ text */

static void font(cairo_t *cr, double size, int bold)
{
    cairo_select_font_face(cr, "DejaVu Sans", CAIRO_FONT_SLANT_NORMAL,
                           bold ? CAIRO_FONT_WEIGHT_BOLD : CAIRO_FONT_WEIGHT_NORMAL);
    cairo_set_font_size(cr, size);
}

/* A name from the ledger, cut to max characters (bytes of UTF-8 are not split). */
static void shorten(char *out, size_t size, const char *s, size_t max)
{
    size_t len = strlen(s);
    if (len <= max) {
        snprintf(out, size, "%s", s);
        return;
    }
    size_t cut = max - 3;
    while (cut > 0 && ((unsigned char)s[cut] & 0xC0) == 0x80)
        cut--;
    snprintf(out, size, "%.*s...", (int)cut, s);
}

/* Text at (x, y): align 0 left, 0.5 centred, 1 right of x; y the baseline. */
static void text_at(cairo_t *cr, double x, double y, double align, const char *s)
{
    cairo_text_extents_t e;
    cairo_text_extents(cr, s, &e);
    cairo_move_to(cr, x - align * e.x_advance, y);
    cairo_show_text(cr, s);
}

/* Text turned by angle (radians, clockwise) about (x, y) on its baseline:
 * align 0 starts it there, 0.5 centres it, 1 ends it there. */
static void text_turned(cairo_t *cr, double x, double y, double angle, double align, const char *s)
{
    cairo_text_extents_t e;
    cairo_text_extents(cr, s, &e);
    cairo_save(cr);
    cairo_translate(cr, x, y);
    cairo_rotate(cr, angle);
    cairo_move_to(cr, -align * e.x_advance, 0);
    cairo_show_text(cr, s);
    cairo_restore(cr);
}

static void rgb(cairo_t *cr, double r, double g, double b)
{
    cairo_set_source_rgb(cr, r, g, b);
}

/* ------------------------------------------------------------------ false accepts */

struct fa_row {
    const char *name;
    uint64_t a, b, u;
    double rate, low, high; /* NaN when undefined */
};

static void draw_false_accepts(cairo_t *cr, const struct kvs_fa_layout *g, const struct fa_row *rows, size_t n,
                               size_t n_records)
{
    rgb(cr, KVS_PLOT_BACKGROUND_RGB);
    cairo_paint(cr);
    double h = g->y0 - g->y100;
    int right = g->plot_left + (int)n * g->slot_w;
    /* grid and y axis */
    font(cr, 12, 0);
    cairo_set_line_width(cr, 1);
    for (int k = 0; k <= 4; k++) {
        int y = g->y0 - (int)lround(k * h / 4);
        rgb(cr, 0.88, 0.88, 0.88);
        cairo_move_to(cr, g->plot_left, y + 0.5);
        cairo_line_to(cr, right, y + 0.5);
        cairo_stroke(cr);
        char tick[16];
        snprintf(tick, sizeof tick, "%d%%", 25 * k);
        rgb(cr, 0.2, 0.2, 0.2);
        text_at(cr, g->plot_left - 8, y + 4, 1.0, tick);
    }
    font(cr, 13, 0);
    text_turned(cr, 24, g->y100 + h / 2, -M_PI / 2, 0.5, "false accepts (FAIL / accepted, decided)");
    /* bars, bounds, labels */
    for (size_t i = 0; i < n; i++) {
        const struct fa_row *r = &rows[i];
        int x = kvs_plot_bar_left(g, i);
        double cx = x + g->bar_w / 2.0;
        int top = g->y0;
        if (!isnan(r->rate)) {
            int bh = (int)lround(r->rate * h);
            top = g->y0 - bh;
            if (bh > 0) {
                rgb(cr, KVS_PLOT_BAR_RGB);
                cairo_rectangle(cr, x, top, g->bar_w, bh);
                cairo_fill(cr);
            }
        }
        int label_y = top;
        if (!isnan(r->low) && r->u > 0) {
            double ylo = g->y0 - r->low * h, yhi = g->y0 - r->high * h;
            rgb(cr, KVS_PLOT_BOUNDS_RGB);
            cairo_set_line_width(cr, 2);
            cairo_move_to(cr, cx, ylo);
            cairo_line_to(cr, cx, yhi);
            cairo_move_to(cr, cx - g->cap_w / 2.0, ylo);
            cairo_line_to(cr, cx + g->cap_w / 2.0, ylo);
            cairo_move_to(cr, cx - g->cap_w / 2.0, yhi);
            cairo_line_to(cr, cx + g->cap_w / 2.0, yhi);
            cairo_stroke(cr);
            if (yhi < label_y)
                label_y = (int)yhi;
        }
        char value[64];
        if (isnan(r->rate))
            snprintf(value, sizeof value, "%s", r->u ? "no decided" : "no accepts");
        else
            snprintf(value, sizeof value, "%.1f%%", 100 * r->rate);
        rgb(cr, 0.1, 0.1, 0.1);
        font(cr, 12, 1);
        text_at(cr, cx, label_y - 20, 0.5, value);
        char count[64];
        snprintf(count, sizeof count, "%llu/%llu, u=%llu", (unsigned long long)r->a, (unsigned long long)r->b,
                 (unsigned long long)r->u);
        font(cr, 10, 0);
        text_at(cr, cx, label_y - 7, 0.5, count);
        char name[64];
        shorten(name, sizeof name, r->name, 22);
        font(cr, 12, 0);
        text_turned(cr, cx + 4, g->y0 + 16, -M_PI / 6, 1.0, name);
    }
    /* the 0% axis over the bars' feet */
    rgb(cr, 0.2, 0.2, 0.2);
    cairo_set_line_width(cr, 1);
    cairo_move_to(cr, g->plot_left, g->y0 + 0.5);
    cairo_line_to(cr, right, g->y0 + 0.5);
    cairo_stroke(cr);
    /* title and key */
    rgb(cr, 0, 0, 0);
    font(cr, 16, 1);
    text_at(cr, 16, g->title_top + 20, 0, "False accepts per validator, pooled over corpora");
    font(cr, 11, 0);
    char sub[200];
    snprintf(sub, sizeof sub,
             "%zu records. Bar: a/b; whisker: abstention bounds [a/(b+u), (a+u)/(b+u)], u accepted INCONCL.",
             n_records);
    text_at(cr, 16, g->title_top + 38, 0, sub);
}

/* ------------------------------------------------------------------ McNemar */

static void draw_mcnemar(cairo_t *cr, const struct kvs_heat_layout *g, const struct kvs_ledger *l,
                         const struct kvs_pair *pairs, size_t n_pairs)
{
    size_t n = l->n_validators;
    rgb(cr, KVS_PLOT_BACKGROUND_RGB);
    cairo_paint(cr);
    for (size_t i = 0; i < n; i++) {
        rgb(cr, KVS_PLOT_DIAGONAL_RGB);
        cairo_rectangle(cr, g->left + (int)i * g->cell, g->top + (int)i * g->cell, g->cell, g->cell);
        cairo_fill(cr);
    }
    for (size_t k = 0; k < n_pairs; k++) {
        const struct kvs_pair *p = &pairs[k];
        double c[3];
        kvs_plot_p_color(p->p_holm, c);
        char label[32];
        if (p->p_holm < 1e-4)
            snprintf(label, sizeof label, "%.1e", p->p_holm);
        else
            snprintf(label, sizeof label, "%.2g", p->p_holm);
        double lum = 0.299 * c[0] + 0.587 * c[1] + 0.114 * c[2];
        for (int t = 0; t < 2; t++) {
            size_t row = t ? p->second : p->first, col = t ? p->first : p->second;
            int x = g->left + (int)col * g->cell, y = g->top + (int)row * g->cell;
            rgb(cr, c[0], c[1], c[2]);
            cairo_rectangle(cr, x, y, g->cell, g->cell);
            cairo_fill(cr);
            if (lum < 0.5)
                rgb(cr, 1, 1, 1);
            else
                rgb(cr, 0, 0, 0);
            font(cr, 12, p->p_holm < 0.05);
            text_at(cr, x + g->cell / 2.0, y + g->cell / 2.0 + 4, 0.5, label);
        }
    }
    /* cell borders */
    rgb(cr, 1, 1, 1);
    cairo_set_line_width(cr, 1);
    for (size_t i = 0; i <= n; i++) {
        int at = (int)i * g->cell;
        cairo_move_to(cr, g->left + at + 0.5, g->top);
        cairo_line_to(cr, g->left + at + 0.5, g->top + (int)n * g->cell);
        cairo_move_to(cr, g->left, g->top + at + 0.5);
        cairo_line_to(cr, g->left + (int)n * g->cell, g->top + at + 0.5);
    }
    cairo_stroke(cr);
    /* names: rows on the left, columns turned above */
    rgb(cr, 0.1, 0.1, 0.1);
    font(cr, 12, 0);
    for (size_t i = 0; i < n; i++) {
        char name[64];
        shorten(name, sizeof name, l->validators[i], 22);
        text_at(cr, g->left - 8, g->top + (int)i * g->cell + g->cell / 2.0 + 4, 1.0, name);
        text_turned(cr, g->left + (int)i * g->cell + g->cell / 2.0 - 4, g->top - 8, -M_PI / 4, 0.0, name);
    }
    /* the colour key: p from 1 (bottom) to 1e-4 (top), with the 0.05 line */
    int side = (int)n * g->cell, kh = side < 200 ? 200 : side;
    int kx = g->left + side + 40, kw = 18;
    cairo_pattern_t *grad = cairo_pattern_create_linear(0, g->top + kh, 0, g->top);
    for (int s = 0; s < 3; s++)
        cairo_pattern_add_color_stop_rgb(grad, stops[s][0], stops[s][1], stops[s][2], stops[s][3]);
    cairo_set_source(cr, grad);
    cairo_rectangle(cr, kx, g->top, kw, kh);
    cairo_fill(cr);
    cairo_pattern_destroy(grad);
    font(cr, 11, 0);
    static const double ticks[] = { 1, 0.1, 0.05, 0.01, 0.001, 1e-4 };
    static const char *const names[] = { "1", "0.1", "0.05", "0.01", "0.001", "<=1e-4" };
    for (int t = 0; t < 6; t++) {
        double y = g->top + kh - (-log10(ticks[t]) / 4.0) * kh;
        rgb(cr, 0.2, 0.2, 0.2);
        cairo_set_line_width(cr, 1);
        cairo_move_to(cr, kx + kw, y);
        cairo_line_to(cr, kx + kw + 5, y);
        cairo_stroke(cr);
        text_at(cr, kx + kw + 8, y + 4, 0, names[t]);
    }
    text_turned(cr, kx - 8, g->top + kh / 2.0, -M_PI / 2, 0.5, "Holm-adjusted p");
    rgb(cr, 0, 0, 0);
    font(cr, 16, 1);
    text_at(cr, 16, 28, 0, "Paired misses: McNemar's exact test, Holm-adjusted p");
    font(cr, 11, 0);
    char sub[160];
    snprintf(sub, sizeof sub, "%zu pairs of %zu validators, on the FAIL certificates both decided; bold: p < 0.05.",
             n_pairs, n);
    text_at(cr, 16, 46, 0, sub);
}

/* ------------------------------------------------------------------ files */

struct figure {
    int width, height;
    void (*draw)(cairo_t *cr, const void *ctx);
    const void *ctx;
};

struct fa_ctx {
    const struct kvs_fa_layout *g;
    const struct fa_row *rows;
    size_t n, n_records;
};
static void fa_draw(cairo_t *cr, const void *ctx)
{
    const struct fa_ctx *c = ctx;
    draw_false_accepts(cr, c->g, c->rows, c->n, c->n_records);
}

struct heat_ctx {
    const struct kvs_heat_layout *g;
    const struct kvs_ledger *l;
    const struct kvs_pair *pairs;
    size_t n_pairs;
};
static void heat_draw(cairo_t *cr, const void *ctx)
{
    const struct heat_ctx *c = ctx;
    draw_mcnemar(cr, c->g, c->l, c->pairs, c->n_pairs);
}

/* DIR/BASE.svg and DIR/BASE.png, the same drawing on both. */
static int write_figure(const struct figure *f, const char *dir, const char *base, char *err, size_t errlen)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s.svg", dir, base);
    cairo_surface_t *s = cairo_svg_surface_create(path, f->width, f->height);
    cairo_t *cr = cairo_create(s);
    f->draw(cr, f->ctx);
    cairo_status_t st = cairo_status(cr);
    cairo_destroy(cr);
    cairo_surface_finish(s);
    if (st == CAIRO_STATUS_SUCCESS)
        st = cairo_surface_status(s);
    cairo_surface_destroy(s);
    if (st != CAIRO_STATUS_SUCCESS)
        return kat_fail(err, errlen, "cannot write the plot '%s': %s", path, cairo_status_to_string(st));
    snprintf(path, sizeof path, "%s/%s.png", dir, base);
    s = cairo_image_surface_create(CAIRO_FORMAT_RGB24, f->width, f->height);
    cr = cairo_create(s);
    f->draw(cr, f->ctx);
    st = cairo_status(cr);
    cairo_destroy(cr);
    cairo_surface_flush(s);
    if (st == CAIRO_STATUS_SUCCESS)
        st = cairo_surface_write_to_png(s, path);
    cairo_surface_destroy(s);
    if (st != CAIRO_STATUS_SUCCESS)
        return kat_fail(err, errlen, "cannot write the plot '%s': %s", path, cairo_status_to_string(st));
    return 0;
}

int kvs_plot_write(const struct kvs_ledger *l, const struct kvs_pair *pairs, size_t n_pairs, const char *dir,
                   char *err, size_t errlen)
{
    if (mkdir(dir, 0755) != 0 && errno != EEXIST)
        return kat_fail(err, errlen, "cannot create the plot directory '%s': %s", dir, strerror(errno));
    struct stat st;
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
        return kat_fail(err, errlen, "the plot directory '%s' is not a directory", dir);
    size_t n = l->n_validators;
    struct fa_row *rows = calloc(n ? n : 1, sizeof *rows);
    if (!rows)
        return kat_fail(err, errlen, "out of memory");
    for (size_t v = 0; v < n; v++) {
        struct kvs_cell c;
        kvs_tally(l, v, SIZE_MAX, &c);
        rows[v].name = l->validators[v];
        rows[v].a = c.accepted_fail;
        rows[v].b = c.accepted_decided;
        rows[v].u = c.accepted_inconcl;
        rows[v].rate = kvs_rate(c.accepted_fail, c.accepted_decided);
        kvs_abstention_bounds(c.accepted_fail, c.accepted_decided, c.accepted_inconcl, &rows[v].low,
                              &rows[v].high);
    }
    struct kvs_fa_layout fg;
    kvs_plot_fa_layout(n, &fg);
    struct fa_ctx fc = { &fg, rows, n, l->n_records };
    struct figure fa = { fg.width, fg.height, fa_draw, &fc };
    int rc = write_figure(&fa, dir, "false_accepts", err, errlen);
    free(rows);
    if (rc != 0)
        return rc;
    struct kvs_heat_layout hg;
    kvs_plot_heat_layout(n, &hg);
    struct heat_ctx hc = { &hg, l, pairs, n_pairs };
    struct figure heat = { hg.width, hg.height, heat_draw, &hc };
    return write_figure(&heat, dir, "mcnemar", err, errlen);
}
