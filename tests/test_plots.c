/*
 * test_plots.c - the plots of `kaudit validators --plot` (validators/plots.c)
 * read back: the PNGs decoded by cairo and measured in pixels (each bar as
 * high as its rate, the bounds drawn where they are, each heat-map cell in
 * its p's colour, the text rendered: fonts work), and the SVGs parsed as XML
 * by expat (one bar path per validator with decided accepts, at its place
 * and height; one cell path per ordered pair).
 *
 * The ledger, written here: 20 FAIL, 10 PASS and 3 INCONCL records, five
 * validators.  alpha accepts F1 F2, P1-P6, I1 I2: 2/8 = 25%, bounds
 * [2/10, 4/10]; beta accepts F1-F5 only: 5/5 = 100%, no INCONCL; gamma
 * accepts P1-P4: 0/4 = 0%; delta rejects everything: no decided accepts,
 * no bar; omega accepts every FAIL: 20/20.  omega against delta: b + c = 20,
 * all one way, exact p = 2^-19.
 */
#include <criterion/criterion.h>
#include <cairo.h>
#include <expat.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ledger.h"
#include "plots.h"
#include "validator_stats.h"

#define NV 5
static const char *const names[NV] = { "alpha", "beta", "gamma", "delta", "omega" };
static const double want_rate[NV] = { 0.25, 1.0, 0.0, NAN, 1.0 };

static char dir[64];
static struct kvs_ledger ledger;
static struct kvs_pair *pairs;
static size_t n_pairs;

static const char *decision(int v, char kind, int k)
{
    int acc = 0;
    switch (v) {
    case 0: acc = (kind == 'F' && k <= 2) || (kind == 'P' && k <= 6) || (kind == 'I' && k <= 2); break;
    case 1: acc = kind == 'F' && k <= 5; break;
    case 2: acc = kind == 'P' && k <= 4; break;
    case 3: acc = 0; break;
    case 4: acc = kind == 'F'; break;
    }
    return acc ? "ACCEPT" : "REJECT";
}

static void setup(void)
{
    snprintf(dir, sizeof dir, "/tmp/kaudit-plots.XXXXXX");
    cr_assert(mkdtemp(dir));
    char path[128];
    snprintf(path, sizeof path, "%s/ledger.jsonl", dir);
    FILE *f = fopen(path, "w");
    cr_assert(f);
    static const struct { char kind; int n; const char *cert; } groups[] = {
        { 'F', 20, "FAIL" }, { 'P', 10, "PASS" }, { 'I', 3, "INCONCL" } };
    for (int g = 0; g < 3; g++)
        for (int k = 1; k <= groups[g].n; k++) {
            fprintf(f, "{\"id\": \"%c%d\", \"certificate\": \"%s\", \"weak_decisions\": {", groups[g].kind, k,
                    groups[g].cert);
            for (int v = 0; v < NV; v++)
                fprintf(f, "%s\"%s\": \"%s\"", v ? ", " : "", names[v], decision(v, groups[g].kind, k));
            fputs("}}\n", f);
        }
    fclose(f);
    char err[1024];
    cr_assert_eq(kvs_ledger_read(&ledger, path, err, sizeof err), 0, "%s", err);
    cr_assert_eq(ledger.n_validators, NV);
    for (int v = 0; v < NV; v++)
        cr_assert_str_eq(ledger.validators[v], names[v]);
    cr_assert_eq(kvs_pairs(&ledger, &pairs, &n_pairs), 0);
    cr_assert_eq(n_pairs, NV * (NV - 1) / 2);
    snprintf(path, sizeof path, "%s/plots", dir);
    cr_assert_eq(kvs_plot_write(&ledger, pairs, n_pairs, path, err, sizeof err), 0, "%s", err);
}

static void teardown(void)
{
    static const char *const files[] = { "ledger.jsonl", "plots/false_accepts.svg", "plots/false_accepts.png",
                                         "plots/mcnemar.svg", "plots/mcnemar.png", NULL };
    char path[128];
    for (int i = 0; files[i]; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, files[i]);
        unlink(path);
    }
    snprintf(path, sizeof path, "%s/plots", dir);
    rmdir(path);
    rmdir(dir);
    free(pairs);
    kvs_ledger_free(&ledger);
}

/* ------------------------------------------------------------------ PNG */

struct image {
    cairo_surface_t *s;
    int w, h, stride;
    const unsigned char *data;
};

static void load_png(const char *base, struct image *im)
{
    char path[128];
    snprintf(path, sizeof path, "%s/plots/%s.png", dir, base);
    im->s = cairo_image_surface_create_from_png(path);
    cr_assert_eq(cairo_surface_status(im->s), CAIRO_STATUS_SUCCESS, "%s does not decode: %s", path,
                 cairo_status_to_string(cairo_surface_status(im->s)));
    cairo_surface_flush(im->s);
    im->w = cairo_image_surface_get_width(im->s);
    im->h = cairo_image_surface_get_height(im->s);
    im->stride = cairo_image_surface_get_stride(im->s);
    im->data = cairo_image_surface_get_data(im->s);
    cr_assert(cairo_image_surface_get_format(im->s) == CAIRO_FORMAT_RGB24 ||
              cairo_image_surface_get_format(im->s) == CAIRO_FORMAT_ARGB32);
}

/* The pixel at (x, y) as r, g, b in [0, 1] (opaque: no premultiplication to undo). */
static void pixel(const struct image *im, int x, int y, double c[3])
{
    cr_assert(x >= 0 && x < im->w && y >= 0 && y < im->h, "pixel (%d, %d) outside %dx%d", x, y, im->w, im->h);
    uint32_t p;
    memcpy(&p, im->data + (size_t)y * (size_t)im->stride + 4 * (size_t)x, 4);
    c[0] = ((p >> 16) & 255) / 255.0;
    c[1] = ((p >> 8) & 255) / 255.0;
    c[2] = (p & 255) / 255.0;
}

static int near(const double a[3], const double b[3], double tol)
{
    return fabs(a[0] - b[0]) <= tol && fabs(a[1] - b[1]) <= tol && fabs(a[2] - b[2]) <= tol;
}

static const double bar_rgb[3] = { KVS_PLOT_BAR_RGB };
static const double background[3] = { KVS_PLOT_BACKGROUND_RGB };

static int is_bar(const struct image *im, int x, int y)
{
    double c[3];
    pixel(im, x, y, c);
    return near(c, bar_rgb, 2.5 / 255);
}

Test(plots, false_accepts_png_bars_as_high_as_their_rates, .init = setup, .fini = teardown)
{
    struct image im;
    load_png("false_accepts", &im);
    struct kvs_fa_layout g;
    kvs_plot_fa_layout(NV, &g);
    cr_assert_eq(im.w, g.width);
    cr_assert_eq(im.h, g.height);
    int h = g.y0 - g.y100;
    for (int v = 0; v < NV; v++) {
        int x = kvs_plot_bar_left(&g, (size_t)v) + 3;
        int run = 0;
        while (g.y0 - 1 - run > 0 && is_bar(&im, x, g.y0 - 1 - run))
            run++;
        int want = isnan(want_rate[v]) ? 0 : (int)lround(want_rate[v] * h);
        cr_assert(abs(run - want) <= 1, "%s: a bar %d pixels high, its rate %.2f makes %d", names[v], run,
                  want_rate[v], want);
        /* nothing bar-coloured between the slots */
        int gap = g.plot_left + v * g.slot_w + 2;
        cr_assert(!is_bar(&im, gap, g.y0 - 5), "%s: the bar spills into the gap", names[v]);
    }
    /* a bar is bar_w wide: its right edge */
    int right = kvs_plot_bar_left(&g, 1) + g.bar_w;
    cr_assert(is_bar(&im, right - 1, g.y0 - 10) && !is_bar(&im, right + 1, g.y0 - 10));
    cairo_surface_destroy(im.s);
}

Test(plots, false_accepts_png_bounds_where_they_are, .init = setup, .fini = teardown)
{
    struct image im;
    load_png("false_accepts", &im);
    struct kvs_fa_layout g;
    kvs_plot_fa_layout(NV, &g);
    int h = g.y0 - g.y100;
    double c[3];
    /* alpha's bounds [0.2, 0.4]: a dark line at the bar's centre from 20% to 40% */
    int cx = kvs_plot_bar_left(&g, 0) + g.bar_w / 2;
    for (double at = 0.22; at < 0.39; at += 0.04) {
        pixel(&im, cx, g.y0 - (int)lround(at * h), c);
        cr_assert(c[0] < 0.3 && c[1] < 0.3 && c[2] < 0.3, "alpha: no bound line at %.2f (%.2f %.2f %.2f)", at, c[0],
                  c[1], c[2]);
    }
    /* not above its upper bound: background (or grid) there */
    pixel(&im, cx, g.y0 - (int)lround(0.46 * h), c);
    cr_assert(c[0] > 0.8 && c[1] > 0.8 && c[2] > 0.8, "alpha: something drawn above its upper bound");
    /* the caps: at 40%, off the centre line by a quarter of the cap */
    pixel(&im, cx + g.cap_w / 4, g.y0 - (int)lround(0.4 * h), c);
    cr_assert(c[0] < 0.3, "alpha: no cap at the upper bound");
    /* beta has no INCONCL accepts: no bound line across its bar */
    int bx = kvs_plot_bar_left(&g, 1) + g.bar_w / 2;
    cr_assert(is_bar(&im, bx, g.y0 - h / 2), "beta: a bound line without INCONCL records");
    cairo_surface_destroy(im.s);
}

Test(plots, text_is_rendered, .init = setup, .fini = teardown)
{
    /* cairo's toy text needs fontconfig and a font: without one the title
     * band stays blank */
    struct image im;
    load_png("false_accepts", &im);
    struct kvs_fa_layout g;
    kvs_plot_fa_layout(NV, &g);
    int dark = 0;
    double c[3];
    for (int y = g.title_top; y < g.title_bottom; y++)
        for (int x = 0; x < im.w; x++) {
            pixel(&im, x, y, c);
            dark += c[0] < 0.5 && c[1] < 0.5 && c[2] < 0.5;
        }
    cr_assert_gt(dark, 300, "only %d dark pixels in the title band: no font?", dark);
    /* in DejaVu Sans Bold 16, as plots.c asks: the title's ink spans what
     * cairo measures for it (cairo's built-in fallback font is far narrower) */
    cairo_surface_t *scratch = cairo_image_surface_create(CAIRO_FORMAT_RGB24, 8, 8);
    cairo_t *cr = cairo_create(scratch);
    cairo_select_font_face(cr, "DejaVu Sans", CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_BOLD);
    cairo_set_font_size(cr, 16);
    cairo_text_extents_t e;
    cairo_text_extents(cr, "False accepts per validator, pooled over corpora", &e);
    cairo_destroy(cr);
    cairo_surface_destroy(scratch);
    int first = im.w, last = -1;
    for (int y = g.title_top; y < g.title_top + 24; y++)
        for (int x = 0; x < im.w; x++) {
            pixel(&im, x, y, c);
            if (c[0] < 0.5 && c[1] < 0.5 && c[2] < 0.5) {
                first = x < first ? x : first;
                last = x > last ? x : last;
            }
        }
    cr_assert(abs(first - (int)lround(16 + e.x_bearing)) <= 2 && abs(last + 1 - (int)lround(16 + e.x_bearing + e.width)) <= 2,
              "the title's ink spans x %d-%d, DejaVu Sans Bold 16 measures %.0f-%.0f", first, last + 1,
              16 + e.x_bearing, 16 + e.x_bearing + e.width);
    /* and nothing drawn outside the figure's title band above the plot, left of the axis labels */
    pixel(&im, 2, g.y100 + 5, c);
    cr_assert(near(c, background, 0.01));
    cairo_surface_destroy(im.s);
}

/* CI installs fonts-dejavu-core: cairo's toy API, through fontconfig, must
 * find DejaVu Sans, not fall back to its built-in font (an 'M' 0.61 em wide
 * where DejaVu Sans's is 0.863 em, 0.995 em in bold; hinting rounds them). */
Test(plots, the_font_is_dejavu_sans)
{
    cairo_surface_t *s = cairo_image_surface_create(CAIRO_FORMAT_RGB24, 8, 8);
    cairo_t *cr = cairo_create(s);
    cairo_text_extents_t e;
    cairo_select_font_face(cr, "DejaVu Sans", CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_NORMAL);
    cairo_set_font_size(cr, 100);
    cairo_text_extents(cr, "M", &e);
    cr_assert(e.x_advance > 85 && e.x_advance < 88, "'M' is %.1f wide at 100: not DejaVu Sans (fonts-dejavu-core?)",
              e.x_advance);
    cairo_select_font_face(cr, "DejaVu Sans", CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_BOLD);
    cairo_text_extents(cr, "M", &e);
    cr_assert(e.x_advance > 98 && e.x_advance < 101.5, "bold 'M' is %.1f wide at 100: not DejaVu Sans Bold",
              e.x_advance);
    cairo_destroy(cr);
    cairo_surface_destroy(s);
}

Test(plots, mcnemar_png_cells_in_their_p_colour, .init = setup, .fini = teardown)
{
    struct image im;
    load_png("mcnemar", &im);
    struct kvs_heat_layout g;
    kvs_plot_heat_layout(NV, &g);
    cr_assert_eq(im.w, g.width);
    cr_assert_eq(im.h, g.height);
    double c[3], want[3], diag[3] = { KVS_PLOT_DIAGONAL_RGB };
    int dark_pairs = 0, light_pairs = 0;
    for (size_t k = 0; k < n_pairs; k++) {
        kvs_plot_p_color(pairs[k].p_holm, want);
        size_t a = pairs[k].first, b = pairs[k].second;
        pixel(&im, g.left + (int)b * g.cell + 4, g.top + (int)a * g.cell + 4, c);
        cr_assert(near(c, want, 2.5 / 255), "%s/%s: cell (%zu, %zu) is %.3f %.3f %.3f, p %.3g makes %.3f %.3f %.3f",
                  names[a], names[b], a, b, c[0], c[1], c[2], pairs[k].p_holm, want[0], want[1], want[2]);
        pixel(&im, g.left + (int)a * g.cell + g.cell - 5, g.top + (int)b * g.cell + g.cell - 5, c);
        cr_assert(near(c, want, 2.5 / 255), "%s/%s: the mirrored cell differs", names[a], names[b]);
        dark_pairs += c[1] < 0.2;
        light_pairs += c[1] > 0.9;
    }
    /* the colours mean something: omega/delta (p = 2^-19 before Holm) is dark
     * red, and pairs with p = 1 are near white */
    size_t od = n_pairs;
    for (size_t k = 0; k < n_pairs; k++)
        if (pairs[k].first == 3 && pairs[k].second == 4)
            od = k;
    cr_assert_lt(od, n_pairs);
    cr_assert_lt(pairs[od].p_holm, 1e-4);
    kvs_plot_p_color(pairs[od].p_holm, want);
    cr_assert(want[0] < 0.6 && want[1] < 0.05, "p < 1e-4 is not the dark end");
    kvs_plot_p_color(1.0, want);
    cr_assert(want[0] > 0.95 && want[1] > 0.95 && want[2] > 0.95, "p = 1 is not the light end");
    cr_assert_gt(dark_pairs, 0);
    cr_assert_gt(light_pairs, 0);
    for (int i = 0; i < NV; i++) {
        pixel(&im, g.left + i * g.cell + 4, g.top + i * g.cell + 4, c);
        cr_assert(near(c, diag, 2.5 / 255), "diagonal cell %d", i);
    }
    cairo_surface_destroy(im.s);
}

/* ------------------------------------------------------------------ SVG */

struct svg_scan {
    int depth, elements;
    char root[16], view_box[64];
    /* paths whose fill is one of the colours looked for */
    const double (*colours)[3];
    size_t n_colours;
    double tol;
    int matched;
    double x_min[64], x_max[64], y_min[64], y_max[64];
};

/* "fill:rgb(12.2%,46.7%,70.6%)" in a style attribute, as cairo writes it */
static int style_fill(const char *style, double c[3])
{
    const char *f = strstr(style, "fill:rgb(");
    return f && sscanf(f, "fill:rgb(%lf%%,%lf%%,%lf%%)", &c[0], &c[1], &c[2]) == 3 ? (c[0] /= 100, c[1] /= 100,
                                                                                        c[2] /= 100, 1)
                                                                                     : 0;
}

/* The extent of a path of M/L/Z commands with absolute coordinates. */
static void path_extent(const char *d, double *x0, double *x1, double *y0, double *y1)
{
    *x0 = *y0 = INFINITY;
    *x1 = *y1 = -INFINITY;
    while (*d) {
        if (*d == 'M' || *d == 'L') {
            double x, y;
            int used;
            cr_assert_eq(sscanf(d + 1, " %lf %lf%n", &x, &y, &used), 2, "path '%s'", d);
            *x0 = fmin(*x0, x), *x1 = fmax(*x1, x), *y0 = fmin(*y0, y), *y1 = fmax(*y1, y);
            d += 1 + used;
        } else {
            cr_assert(*d == 'Z' || *d == ' ', "a bar path with a curve: '%s'", d);
            d++;
        }
    }
}

static void XMLCALL on_start(void *data, const XML_Char *name, const XML_Char **attr)
{
    struct svg_scan *s = data;
    if (s->depth++ == 0) {
        snprintf(s->root, sizeof s->root, "%s", name);
        for (int i = 0; attr[i]; i += 2)
            if (!strcmp(attr[i], "viewBox"))
                snprintf(s->view_box, sizeof s->view_box, "%s", attr[i + 1]);
    }
    s->elements++;
    if (strcmp(name, "path"))
        return;
    const char *style = NULL, *d = NULL;
    for (int i = 0; attr[i]; i += 2) {
        if (!strcmp(attr[i], "style"))
            style = attr[i + 1];
        else if (!strcmp(attr[i], "d"))
            d = attr[i + 1];
    }
    double c[3];
    if (!style || !d || !style_fill(style, c))
        return;
    for (size_t k = 0; k < s->n_colours; k++)
        if (near(c, s->colours[k], s->tol)) {
            cr_assert_lt(s->matched, 64);
            path_extent(d, &s->x_min[s->matched], &s->x_max[s->matched], &s->y_min[s->matched],
                        &s->y_max[s->matched]);
            s->matched++;
            return;
        }
}

static void XMLCALL on_end(void *data, const XML_Char *name)
{
    (void)name;
    ((struct svg_scan *)data)->depth--;
}

static void scan_svg(const char *base, struct svg_scan *s)
{
    char path[128];
    snprintf(path, sizeof path, "%s/plots/%s.svg", dir, base);
    FILE *f = fopen(path, "r");
    cr_assert(f, "%s missing", path);
    XML_Parser p = XML_ParserCreate(NULL);
    XML_SetUserData(p, s);
    XML_SetElementHandler(p, on_start, on_end);
    char buf[8192];
    size_t n;
    int done = 0;
    while (!done) {
        n = fread(buf, 1, sizeof buf, f);
        done = n < sizeof buf;
        cr_assert(XML_Parse(p, buf, (int)n, done) == XML_STATUS_OK, "%s: not XML: %s at line %lu", path,
                  XML_ErrorString(XML_GetErrorCode(p)), (unsigned long)XML_GetCurrentLineNumber(p));
    }
    XML_ParserFree(p);
    fclose(f);
    cr_assert_str_eq(s->root, "svg");
    cr_assert_eq(s->depth, 0);
}

Test(plots, false_accepts_svg_one_bar_path_per_validator, .init = setup, .fini = teardown)
{
    static const double colours[1][3] = { { KVS_PLOT_BAR_RGB } };
    struct svg_scan s = { .colours = colours, .n_colours = 1, .tol = 0.002 };
    scan_svg("false_accepts", &s);
    struct kvs_fa_layout g;
    kvs_plot_fa_layout(NV, &g);
    char vb[64];
    snprintf(vb, sizeof vb, "0 0 %d %d", g.width, g.height);
    cr_assert_str_eq(s.view_box, vb);
    /* alpha, beta, omega: a positive rate each; gamma's 0% and delta's none draw no bar */
    cr_assert_eq(s.matched, 3, "%d bar paths, expected 3 (alpha, beta, omega)", s.matched);
    int h = g.y0 - g.y100;
    static const int with_bar[3] = { 0, 1, 4 };
    for (int k = 0; k < 3; k++) {
        int v = with_bar[k];
        cr_assert_float_eq(s.x_min[k], kvs_plot_bar_left(&g, (size_t)v), 0.01, "%s: bar at x %.1f", names[v],
                           s.x_min[k]);
        cr_assert_float_eq(s.x_max[k] - s.x_min[k], g.bar_w, 0.01);
        cr_assert_float_eq(s.y_max[k], g.y0, 0.01, "%s: the bar does not stand on 0%%", names[v]);
        cr_assert_float_eq(g.y0 - s.y_min[k], lround(want_rate[v] * h), 0.01, "%s: bar height %.1f", names[v],
                           g.y0 - s.y_min[k]);
    }
}

Test(plots, mcnemar_svg_one_cell_per_ordered_pair, .init = setup, .fini = teardown)
{
    double colours[NV * NV][3];
    for (size_t k = 0; k < n_pairs; k++)
        kvs_plot_p_color(pairs[k].p_holm, colours[k]);
    struct svg_scan s = { .colours = (const double (*)[3])colours, .n_colours = n_pairs, .tol = 0.002 };
    scan_svg("mcnemar", &s);
    cr_assert_eq(s.matched, (int)(2 * n_pairs), "%d cell paths, expected %zu", s.matched, 2 * n_pairs);
    static const double diag[1][3] = { { KVS_PLOT_DIAGONAL_RGB } };
    struct svg_scan d = { .colours = diag, .n_colours = 1, .tol = 0.002 };
    scan_svg("mcnemar", &d);
    cr_assert_eq(d.matched, NV);
}

Test(plots, a_file_in_the_way_is_an_error)
{
    char tmp[] = "/tmp/kaudit-plots-file.XXXXXX";
    int fd = mkstemp(tmp);
    cr_assert_geq(fd, 0);
    close(fd);
    struct kvs_ledger l = { 0 };
    char err[512];
    cr_assert_eq(kvs_plot_write(&l, NULL, 0, tmp, err, sizeof err), -1);
    cr_assert(strstr(err, tmp), "the message does not name the path: %s", err);
    unlink(tmp);
}
