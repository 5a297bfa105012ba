/* plots.c — heatmaps, score grids, thumbnail grids and step plots (see plots.h).
 * Layout: every size is computed from the font metrics and the text before the canvas is
 * allocated, so nothing is cut off; all arithmetic is in int on bounded inputs (n <= 128,
 * L, H <= 1024: a model's limits), and the grids of every head shrink to fit one image. */
#include "plots.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "colormap.h"

static const rgb WHITE = {255, 255, 255};
static const rgb INK = {20, 20, 24};
static const rgb GREY = {110, 110, 118};
static const rgb LIGHT = {232, 232, 236};
static const rgb MASKED = {214, 214, 220};
static const rgb WARN = {176, 48, 0};
static const rgb TARGET = {0, 229, 255}; /* cyan: not on magma's scale, visible on dark and light */

#define MARGIN 14

static int imax(int a, int b) { return a > b ? a : b; }

/* andrea_colormap_magma(v) from the table of andrea_colormap_magma_table. */
static inline rgb magma_cell(const rgb *magma, float v) {
    int i = andrea_colormap_magma_slot(v);
    return i < 0 ? (rgb){128, 128, 128} : magma[i];
}

/* The header every plot starts with, stacked from the top margin: the title (large, ink), then
 * the subtitle (ink), a warning (WARN) and a note (small, grey), each optional (NULL: absent).
 * header_width is the canvas width the header needs, margins included. */
static int header_width(const char *title, const char *subtitle, const char *warn, const char *note) {
    int w = MARGIN * 2 + andrea_text_width(&andrea_report_font_large, title);
    if (subtitle) w = imax(w, MARGIN * 2 + andrea_text_width(&andrea_report_font_medium, subtitle));
    if (warn) w = imax(w, MARGIN * 2 + andrea_text_width(&andrea_report_font_medium, warn));
    if (note) w = imax(w, MARGIN * 2 + andrea_text_width(&andrea_report_font_small, note));
    return w;
}

static void draw_header(canvas *c, const char *title, const char *subtitle, const char *warn, const char *note) {
    const report_font *fs = &andrea_report_font_small, *fm = &andrea_report_font_medium, *fl = &andrea_report_font_large;
    int y = MARGIN + fl->ascent;
    andrea_canvas_text(c, fl, MARGIN, y, title, INK);
    y += fl->line - fl->ascent + 4;
    if (subtitle) {
        andrea_canvas_text(c, fm, MARGIN, y + fm->ascent, subtitle, INK);
        y += fm->line + 2;
    }
    if (warn) {
        andrea_canvas_text(c, fm, MARGIN, y + fm->ascent, warn, WARN);
        y += fm->line + 2;
    }
    if (note) andrea_canvas_text(c, fs, MARGIN, y + fs->ascent, note, GREY);
}

/* Black or white, whichever reads better on background c (relative luminance, integer). */
static rgb text_on(rgb c) {
    int y = 2126 * c.r + 7152 * c.g + 722 * c.b; /* ×10000 */
    return y > 1400000 ? INK : WHITE;
}

/* Draws the vertical colour bar with ticks at x, y (height h) and returns its total width. */
static int colour_bar(canvas *c, int x, int y, int h, const char *caption) {
    const report_font *f = &andrea_report_font_small;
    int bw = 16;
    if (c) {
        for (int i = 0; i < h; i++) {
            double v = 1.0 - (double)i / (double)(h - 1);
            andrea_canvas_fill(c, x, y + i, bw, 1, andrea_colormap_magma(v));
        }
        andrea_canvas_rect(c, x - 1, y - 1, bw + 2, h + 2, 1, GREY);
        for (int t = 0; t <= 4; t++) {
            double v = t / 4.0;
            int ty = y + (int)lround((1.0 - v) * (h - 1));
            char lab[16];
            snprintf(lab, sizeof lab, "%.2f", v);
            andrea_canvas_fill(c, x + bw, ty, 4, 1, INK);
            andrea_canvas_text(c, f, x + bw + 6, ty + 4, lab, INK);
        }
        if (caption) andrea_canvas_text_up(c, f, x + bw + 6 + 4 * f->advance + 14, y + h / 2 + andrea_text_width(f, caption) / 2, caption, GREY);
    }
    return bw + 6 + 4 * f->advance + 14 + f->line;
}

canvas *andrea_draw_heatmap(const heatmap_spec *s, ae_error *err) {
    const report_font *fs = &andrea_report_font_small, *fm = &andrea_report_font_medium, *fl = &andrea_report_font_large;
    int n = s->n < 1 ? 1 : s->n;
    int cropped = n > HEATMAP_MAX_TOKENS;
    int shown = cropped ? HEATMAP_MAX_TOKENS : n;
    int cs = shown <= 24 ? 20 : shown <= 48 ? 16 : 13; /* a label row needs >= 13 px (font ink 12 px) */

    /* Label widths: the longest label plus its position index. */
    int lab_w = 0;
    if (s->labels)
        for (int i = 0; i < shown; i++) lab_w = imax(lab_w, andrea_text_width(fs, s->labels[i]));
    char idx[16];
    snprintf(idx, sizeof idx, "%d", shown - 1);
    int idx_w = andrea_text_width(fs, idx);
    int left = MARGIN + lab_w + 6 + idx_w + 6; /* map x origin */
    int map = shown * cs;

    const char *note = "rows: queries, columns: keys; grey: masked (future); cyan: probe target";
    char crop[160];
    snprintf(crop, sizeof crop, "CROPPED: positions 0-%d of %d shown (the rows shown are complete: attention is causal)",
             shown - 1, n);

    int title_h = fl->line + 4 + (s->subtitle ? fm->line + 2 : 0) + (cropped ? fm->line + 2 : 0) + fs->line + 10;
    int top = MARGIN + title_h;
    int bar_w = colour_bar(NULL, 0, 0, 0, NULL);
    int w = left + map + 24 + bar_w + MARGIN;
    w = imax(w, header_width(s->title, s->subtitle, cropped ? crop : NULL, note));
    int bottom_lab = lab_w + 6 + idx_w + 6;
    int h = top + map + bottom_lab + MARGIN;
    int bar_h = map < 160 ? 160 : map;
    h = imax(h, top + bar_h + MARGIN);

    canvas *c = andrea_canvas_new(w, h, WHITE, err);
    if (!c) return NULL;
    draw_header(c, s->title, s->subtitle, cropped ? crop : NULL, note);

    /* cells: map[q * T + k]; keys after the query are masked by causality */
    rgb magma[256];
    andrea_colormap_magma_table(magma);
    for (int q = 0; q < shown; q++) {
        for (int k = 0; k < shown; k++) {
            rgb col = k > q ? MASKED : magma_cell(magma, s->map[(size_t)q * (size_t)s->T + (size_t)k]);
            andrea_canvas_fill(c, left + k * cs, top + q * cs, cs, cs, col);
        }
    }
    if (s->target) {
        for (int q = 0; q < shown; q++)
            for (int k = 0; k < shown; k++)
                if (s->target[(size_t)q * (size_t)s->T + (size_t)k])
                    andrea_canvas_rect(c, left + k * cs, top + q * cs, cs, cs, cs >= 16 ? 2 : 1, TARGET);
    }
    /* row labels (queries): label right-aligned, then the index, left of the map */
    int base_off = (cs - 12) / 2 + 9; /* baseline inside a cell: ink spans 9 above, 3 below */
    for (int q = 0; q < shown; q++) {
        char num[16];
        snprintf(num, sizeof num, "%d", q);
        int by = top + q * cs + base_off;
        andrea_canvas_text(c, fs, left - 6 - andrea_text_width(fs, num), by, num, GREY);
        if (s->labels) andrea_canvas_text(c, fs, left - 6 - idx_w - 6 - andrea_text_width(fs, s->labels[q]), by, s->labels[q], INK);
    }
    /* column labels (keys): turned to read upward, ending at the map's bottom edge */
    for (int k = 0; k < shown; k++) {
        char num[16];
        snprintf(num, sizeof num, "%d", k);
        int bx = left + k * cs + base_off;
        int y0 = top + map + 6;
        andrea_canvas_text_up(c, fs, bx, y0 + andrea_text_width(fs, num), num, GREY);
        if (s->labels)
            andrea_canvas_text_up(c, fs, bx, y0 + idx_w + 6 + andrea_text_width(fs, s->labels[k]), s->labels[k], INK);
    }
    andrea_canvas_rect(c, left - 1, top - 1, map + 2, map + 2, 1, GREY);
    colour_bar(c, left + map + 24, top, bar_h, "attention probability");
    return c;
}

canvas *andrea_draw_score_grid(const score_grid_spec *s, ae_error *err) {
    const report_font *fs = &andrea_report_font_small, *fm = &andrea_report_font_medium, *fl = &andrea_report_font_large;
    char tmp[32];
    snprintf(tmp, sizeof tmp, "L%d", s->n_layer - 1);
    int left = MARGIN + andrea_text_width(fm, tmp) + 8;
    int title_h = fl->line + 4 + (s->subtitle ? fm->line + 2 : 0) + fs->line + 8;
    int top = MARGIN + title_h + fm->line + 4;
    int bar_w = colour_bar(NULL, 0, 0, 0, NULL);
    /* 54 x 30 pixels a head, with its score written in; smaller (colour only) where the grid
     * would not fit one image: beyond ~300 heads or ~540 layers */
    const int room_w = (CANVAS_MAX_SIDE - left - 20 - bar_w - MARGIN) / imax(s->n_head, 1);
    const int room_h = (CANVAS_MAX_SIDE - top - MARGIN) / imax(s->n_layer, 1);
    const int cw = room_w < 54 ? imax(room_w, 1) : 54, ch = room_h < 30 ? imax(room_h, 1) : 30;
    const int numbers = cw == 54 && ch == 30;
    const char *note = numbers ? "number: score (mean attention on targets); cyan frame + *: labelled"
                               : "colour: score (mean attention on targets); cyan frame: labelled";
    int gh = s->n_layer * ch;
    int bar_h = gh < 120 ? 120 : gh;
    int w = left + s->n_head * cw + 20 + bar_w + MARGIN;
    w = imax(w, header_width(s->title, s->subtitle, NULL, note));
    int h = top + imax(gh, bar_h) + MARGIN;
    if (s->grid) *s->grid = (plot_grid){left, top, cw, ch};
    canvas *c = andrea_canvas_new(w, h, WHITE, err);
    if (!c) return NULL;
    draw_header(c, s->title, s->subtitle, NULL, note);
    for (int hd = 0; hd < s->n_head && numbers; hd++) {
        snprintf(tmp, sizeof tmp, "H%d", hd);
        andrea_canvas_text(c, fm, left + hd * cw + (cw - andrea_text_width(fm, tmp)) / 2, top - 6, tmp, GREY);
    }
    for (int l = 0; l < s->n_layer; l++) {
        snprintf(tmp, sizeof tmp, "L%d", l);
        if (numbers) andrea_canvas_text(c, fm, left - 8 - andrea_text_width(fm, tmp), top + l * ch + ch / 2 + 4, tmp, GREY);
        for (int hd = 0; hd < s->n_head; hd++) {
            double v = s->score[l * s->n_head + hd];
            rgb col = andrea_colormap_magma(v);
            int x = left + hd * cw, yy = top + l * ch;
            andrea_canvas_fill(c, x, yy, cw, ch, col);
            if (!numbers) continue;
            if (v == v) snprintf(tmp, sizeof tmp, "%.2f%s", v, s->labelled && s->labelled[l * s->n_head + hd] ? "*" : "");
            else snprintf(tmp, sizeof tmp, "n/a");
            andrea_canvas_text(c, fm, x + (cw - andrea_text_width(fm, tmp)) / 2, yy + ch / 2 + 4, tmp, text_on(col));
        }
    }
    /* grid lines, then frames of labelled heads on top */
    for (int l = 0; l <= s->n_layer && numbers; l++) andrea_canvas_fill(c, left, top + l * ch, s->n_head * cw, 1, WHITE);
    for (int hd = 0; hd <= s->n_head && numbers; hd++) andrea_canvas_fill(c, left + hd * cw, top, 1, gh, WHITE);
    if (s->labelled)
        for (int l = 0; l < s->n_layer; l++)
            for (int hd = 0; hd < s->n_head; hd++)
                if (s->labelled[l * s->n_head + hd]) andrea_canvas_rect(c, left + hd * cw, top + l * ch, cw + 1, ch + 1, numbers ? 3 : 1, TARGET);
    colour_bar(c, left + s->n_head * cw + 20, top, bar_h, "score");
    return c;
}

/* A thumbnail grid's cells. Captioned: whole pixels per position when the map is short, else one
 * pixel per position up to HEATMAP_MAX_TOKENS (max-pooled never: every position keeps its own
 * pixel), "L H" above each map. Where that grid would not fit one image (CANVAS_MAX_SIDE a side:
 * ~135 layers or ~155 heads), compact: no captions, one-pixel gaps, and each map cropped to the
 * first positions that fit (an 1024 x 1024-head model gets 13 x 13 pixels a head). The header is
 * sized with a subtitle, so both callers of thumbs_geometry agree whatever the title. */
typedef struct {
    int shown, ppp, side, gap, cap_h, cell_w, cell_h, top;
} thumbs_geom;

static thumbs_geom thumbs_geometry(int n_layer, int n_head, int n) {
    const report_font *fs = &andrea_report_font_small, *fm = &andrea_report_font_medium, *fl = &andrea_report_font_large;
    thumbs_geom g;
    g.shown = n < 1 ? 1 : n > HEATMAP_MAX_TOKENS ? HEATMAP_MAX_TOKENS : n;
    g.ppp = g.shown <= 16 ? 6 : g.shown <= 32 ? 3 : g.shown <= 64 ? 2 : 1;
    g.side = g.shown * g.ppp;
    g.gap = 10;
    g.cap_h = fs->line + 2;
    g.top = MARGIN + fl->line + 4 + fm->line + 2 + fs->line + 8;
    g.cell_w = imax(g.side, andrea_text_width(fs, "L00 H00")) + g.gap;
    g.cell_h = g.cap_h + g.side + g.gap;
    const int room_w = CANVAS_MAX_SIDE - 2 * MARGIN, room_h = CANVAS_MAX_SIDE - g.top - MARGIN;
    if ((long)n_head * g.cell_w <= room_w && (long)n_layer * g.cell_h <= room_h) return g;
    g.gap = 1;
    g.cap_h = 0;
    int side = room_w / imax(n_head, 1) < room_h / imax(n_layer, 1) ? room_w / imax(n_head, 1) : room_h / imax(n_layer, 1);
    side = imax(side - g.gap, 1);
    if (g.shown > side) g.shown = side;
    g.ppp = imax(1, g.ppp < side / g.shown ? g.ppp : side / g.shown);
    g.side = g.shown * g.ppp;
    g.cell_w = g.cell_h = g.side + g.gap;
    return g;
}

int andrea_thumbs_shown(int n_layer, int n_head, int n) { return thumbs_geometry(n_layer, n_head, n).shown; }

canvas *andrea_draw_thumbs(const thumbs_spec *s, ae_error *err) {
    const report_font *fs = &andrea_report_font_small, *fm = &andrea_report_font_medium, *fl = &andrea_report_font_large;
    const int n = s->n < 1 ? 1 : s->n;
    const thumbs_geom g = thumbs_geometry(s->n_layer, s->n_head, n);
    const int shown = g.shown, ppp = g.ppp, side = g.side;
    char note[200];
    snprintf(note, sizeof note, "each map: rows queries, columns keys, %d positions%s%s", shown,
             shown < n ? " (CROPPED: first positions of a longer example)" : "",
             g.cap_h ? "" : "; too many heads for captions: layer by row, head by column");
    int title_h = fl->line + 4 + (s->subtitle ? fm->line + 2 : 0) + fs->line + 8;
    int top = MARGIN + title_h;
    int w = MARGIN * 2 + s->n_head * g.cell_w;
    w = imax(w, header_width(s->title, s->subtitle, NULL, note));
    int h = top + s->n_layer * g.cell_h + MARGIN;
    if (s->grid) *s->grid = (plot_grid){MARGIN, top, g.cell_w, g.cell_h};
    canvas *c = andrea_canvas_new(w, h, WHITE, err);
    if (!c) return NULL;
    draw_header(c, s->title, s->subtitle, NULL, note);
    size_t TT = (size_t)s->T * (size_t)s->T;
    rgb magma[256], line[HEATMAP_MAX_TOKENS * 6]; /* side <= 128 (ppp 1) or 6 * 16 */
    andrea_colormap_magma_table(magma);
    for (int l = 0; l < s->n_layer; l++) {
        for (int hd = 0; hd < s->n_head; hd++) {
            int x0 = MARGIN + hd * g.cell_w, y0 = top + l * g.cell_h;
            if (g.cap_h) {
                char cap[32];
                snprintf(cap, sizeof cap, "L%d H%d", l, hd);
                andrea_canvas_text(c, fs, x0, y0 + fs->ascent, cap, INK);
            }
            const float *m = s->maps + ((size_t)l * (size_t)s->n_head + (size_t)hd) * TT;
            int my = y0 + g.cap_h;
            for (int q = 0; q < shown; q++) { /* row q of the map, each position ppp pixels wide and tall */
                for (int k = 0; k < shown; k++) {
                    rgb col = k > q ? MASKED : magma_cell(magma, m[(size_t)q * (size_t)s->T + (size_t)k]);
                    for (int r = 0; r < ppp; r++) line[k * ppp + r] = col;
                }
                for (int r = 0; r < ppp; r++) andrea_canvas_pixels(c, x0, my + q * ppp + r, line, side);
            }
            if (g.gap > 1) andrea_canvas_rect(c, x0 - 1, my - 1, side + 2, side + 2, 1, LIGHT);
        }
    }
    return c;
}

/* Ten distinguishable colours (the "tab10" qualitative palette). */
static const rgb PALETTE[STEP_PLOT_MAX_SERIES] = {
    {31, 119, 180}, {255, 127, 14}, {44, 160, 44}, {214, 39, 40}, {148, 103, 189},
    {140, 86, 75},  {227, 119, 194}, {127, 127, 127}, {188, 189, 34}, {23, 190, 207},
};

/* A short, exact-enough text for an axis value (steps are integers). */
static void fmt_step(double v, char *out, size_t cap) {
    if (fabs(v) >= 1e6) snprintf(out, cap, "%.4gM", v / 1e6); /* 1M and 1.001M, not 1M twice */
    else if (fabs(v) >= 1e4) snprintf(out, cap, "%.4gk", v / 1e3);
    else snprintf(out, cap, "%.0f", v);
}

canvas *andrea_draw_step_plot(const step_plot_spec *s, ae_error *err) {
    const report_font *fs = &andrea_report_font_small, *fm = &andrea_report_font_medium, *fl = &andrea_report_font_large;
    int ns = s->n_series > STEP_PLOT_MAX_SERIES ? STEP_PLOT_MAX_SERIES : s->n_series;
    int pw = 560, ph = 300;
    int title_h = fl->line + 4 + (s->subtitle ? fm->line + 2 : 0) + 10;
    int top = MARGIN + title_h;
    int left = MARGIN + fs->line + 6 + andrea_text_width(fs, "0.00") + 8;
    int leg_w = 0;
    for (int i = 0; i < ns; i++) leg_w = imax(leg_w, andrea_text_width(fm, s->names[i]));
    leg_w += 30;
    int w = left + pw + 20 + leg_w + MARGIN;
    w = imax(w, header_width(s->title, s->subtitle, NULL, NULL));
    int h = top + ph + 8 + fs->line + 6 + fm->line + MARGIN;
    canvas *c = andrea_canvas_new(w, h, WHITE, err);
    if (!c) return NULL;
    draw_header(c, s->title, s->subtitle, NULL, NULL);

    double x_lo = s->steps[0], x_hi = s->steps[s->n_points - 1];
    if (x_hi <= x_lo) x_hi = x_lo + 1;
    /* y: scores on [0, 1] */
    for (int t = 0; t <= 4; t++) {
        double v = t / 4.0;
        int gy = top + (int)lround((1.0 - v) * ph);
        andrea_canvas_fill(c, left, gy, pw, 1, LIGHT);
        char lab[16];
        snprintf(lab, sizeof lab, "%.2f", v);
        andrea_canvas_text(c, fs, left - 6 - andrea_text_width(fs, lab), gy + 4, lab, GREY);
    }
    /* Each step's label where it clears the one before and the last step's (always drawn): close
     * steps on a linear axis (30, 100, 300 of 8000) ran into one another. */
    char lab[32];
    const int n = s->n_points, gap = 6;
    fmt_step(s->steps[n - 1], lab, sizeof lab);
    const int last_x0 = left + (int)lround((s->steps[n - 1] - x_lo) / (x_hi - x_lo) * pw) - andrea_text_width(fs, lab) / 2;
    int drawn_right = INT_MIN;
    for (int i = 0; i < n; i++) {
        int gx = left + (int)lround((s->steps[i] - x_lo) / (x_hi - x_lo) * pw);
        andrea_canvas_fill(c, gx, top, 1, ph, LIGHT);
        andrea_canvas_fill(c, gx, top + ph, 1, 5, INK);
        fmt_step(s->steps[i], lab, sizeof lab);
        const int w = andrea_text_width(fs, lab), x0 = gx - w / 2;
        if (i < n - 1 && (x0 < drawn_right + gap || x0 + w + gap > last_x0)) continue;
        andrea_canvas_text(c, fs, x0, top + ph + 8 + fs->ascent, lab, GREY);
        drawn_right = x0 + w;
    }
    andrea_canvas_rect(c, left, top, pw + 1, ph + 1, 1, GREY);
    const char *xl = "training step";
    andrea_canvas_text(c, fm, left + (pw - andrea_text_width(fm, xl)) / 2, top + ph + 8 + fs->line + 6 + fm->ascent, xl, INK);
    if (s->y_label) andrea_canvas_text_up(c, fs, MARGIN + fs->ascent, top + ph / 2 + andrea_text_width(fs, s->y_label) / 2, s->y_label, INK);
    for (int si = 0; si < ns; si++) {
        rgb col = PALETTE[si];
        double px = 0, py = 0;
        int have = 0;
        for (int i = 0; i < s->n_points; i++) {
            double v = s->values[(size_t)si * (size_t)s->n_points + (size_t)i];
            if (!(v == v)) {
                have = 0;
                continue;
            }
            double x = left + (s->steps[i] - x_lo) / (x_hi - x_lo) * pw;
            double yy = top + (1.0 - (v < 0 ? 0 : v > 1 ? 1 : v)) * ph;
            if (have) andrea_canvas_line(c, px, py, x, yy, 2.0, col);
            andrea_canvas_fill(c, (int)lround(x) - 2, (int)lround(yy) - 2, 5, 5, col);
            px = x;
            py = yy;
            have = 1;
        }
        int ly = top + 6 + si * (fm->line + 4);
        andrea_canvas_fill(c, left + pw + 20, ly + fm->line / 2 - 1, 20, 3, col);
        andrea_canvas_text(c, fm, left + pw + 20 + 26, ly + fm->ascent, s->names[si], INK);
    }
    return c;
}
