/* series_page.c — the series page (index.html) and the terminal table across steps (see series.h).
 * The page is one file: a matrix per class (rows: heads, columns: steps, cells coloured by score
 * with magma, labelled cells marked *), and per head a formation plot drawn as inline SVG (score
 * against step; the class's min_score as a dashed line; labelled steps as filled dots). */
#include "series.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../common/atomic_file.h"
#include "../common/percent_encode.h"
#include "colormap.h"
#include "text.h"

/* Heads per class above which only the heads labelled at some step get a formation plot. */
#define SERIES_PLOT_ALL_HEADS 64

static size_t at(const series_data *d, int ck, int c, int l, int h) {
    return (((size_t)ck * (size_t)d->n_classes + (size_t)c) * (size_t)d->n_layer + (size_t)l) * (size_t)d->n_head +
           (size_t)h;
}

/* x of checkpoint i in [0, 1]: by step (log when all steps are > 0 and span a decade or more),
 * or by position when a step is unknown. Sets *log_axis. */
static void x_positions(const series_data *d, double *x, int *log_axis) {
    int all = d->n_ck > 1;
    double lo = INFINITY, hi = -INFINITY;
    for (int i = 0; i < d->n_ck; i++) {
        all &= d->ck[i].has_step;
        if (d->ck[i].has_step) {
            lo = fmin(lo, (double)d->ck[i].step);
            hi = fmax(hi, (double)d->ck[i].step);
        }
    }
    *log_axis = all && lo > 0 && hi / lo >= 10;
    for (int i = 0; i < d->n_ck; i++) {
        if (!all || hi <= lo) x[i] = d->n_ck > 1 ? (double)i / (d->n_ck - 1) : 0.5;
        else if (*log_axis) x[i] = (log10((double)d->ck[i].step) - log10(lo)) / (log10(hi) - log10(lo));
        else x[i] = ((double)d->ck[i].step - lo) / (hi - lo);
    }
}

/* A checkpoint's label: its step, else "#i name" (a checkpoint without a step in a series), the
 * name's control bytes as '?' and cut at a character boundary within 40 bytes: plain text for the
 * terminal's table; HTML callers escape it (andrea_html_add). */
static void step_label(const series_checkpoint *c, int i, char *out, size_t cap) {
    if (c->has_step) {
        snprintf(out, cap, "%lld", c->step);
        return;
    }
    int k = snprintf(out, cap, "#%d ", i + 1);
    size_t n = k < 0 ? 0 : (size_t)k, taken = 0;
    for (const unsigned char *p = (const unsigned char *)c->name; *p && n + 1 < cap; p++) {
        if (taken >= 40 && (*p & 0xC0) != 0x80) break; /* the next character would pass 40 bytes */
        out[n++] = *p < 0x20 || *p == 0x7f ? '?' : (char)*p;
        taken++;
    }
    while (n > 0 && ((unsigned char)out[n - 1] & 0xC0) == 0xC0) n--; /* a lead byte cut from its tail */
    out[n] = 0;
}

/* The anchor of class name: "class-" and the name percent-encoded, in the link and the id alike,
 * so a catalog's class "a b#%41" is found as the id it links to (the browser looks a fragment up
 * as written, then decoded: "%41" would have become "A"); a suite name's own letters stay as
 * they are (#class-induction). */
static void class_anchor(andrea_buf *b, const char *name) {
    char enc[3 * 64 + 1];
    andrea_percent_encode(name, "", enc, sizeof enc);
    andrea_buf_puts(b, "class-");
    andrea_buf_puts(b, enc);
}

/* One formation plot: score of head (l, h) on class c against step. */
static void plot_svg(andrea_buf *b, const series_data *d, int c, int l, int h, const double *x, int log_axis) {
    const double W = 240, Ht = 130, ml = 30, mr = 8, mt = 8, mb = 22, pw = W - ml - mr, ph = Ht - mt - mb;
    andrea_buf_printf(b, "<figure><svg width=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" role=\"img\">", W, Ht, W, Ht);
    andrea_buf_printf(b, "<rect x=\"%.0f\" y=\"%.0f\" width=\"%.0f\" height=\"%.0f\" class=\"frame\"/>", ml, mt, pw, ph);
    for (int t = 0; t <= 2; t++) {
        const double y = mt + ph - ph * t / 2.0;
        andrea_buf_printf(b, "<text x=\"%.0f\" y=\"%.1f\" class=\"ax\" text-anchor=\"end\">%.1f</text>", ml - 5, y + 3, t / 2.0);
    }
    const double thr = d->threshold[c];
    if (isfinite(thr) && thr >= 0 && thr <= 1)
        andrea_buf_printf(b, "<line x1=\"%.0f\" x2=\"%.0f\" y1=\"%.1f\" y2=\"%.1f\" class=\"thr\"><title>label threshold %g</title></line>",
                    ml, ml + pw, mt + ph * (1 - thr), mt + ph * (1 - thr), thr);
    andrea_buf_puts(b, "<polyline class=\"line\" points=\"");
    for (int i = 0; i < d->n_ck; i++) {
        const double s = d->score[at(d, i, c, l, h)];
        if (isfinite(s)) andrea_buf_printf(b, "%.1f,%.1f ", ml + pw * x[i], mt + ph * (1 - fmin(fmax(s, 0), 1)));
    }
    andrea_buf_puts(b, "\"/>");
    for (int i = 0; i < d->n_ck; i++) {
        const double s = d->score[at(d, i, c, l, h)];
        if (!isfinite(s)) continue;
        char st[64];
        step_label(&d->ck[i], i, st, sizeof st);
        andrea_buf_printf(b, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3\" class=\"%s\"><title>step ", ml + pw * x[i],
                          mt + ph * (1 - fmin(fmax(s, 0), 1)), d->label[at(d, i, c, l, h)] ? "lab" : "nolab");
        andrea_html_add(b, st);
        andrea_buf_printf(b, ": %.3f%s</title></circle>", s, d->label[at(d, i, c, l, h)] ? " (labelled)" : "");
    }
    /* the first and last step under the axis */
    for (int e = 0; e < 2 && d->n_ck > 0; e++) {
        const int i = e ? d->n_ck - 1 : 0;
        char st[64];
        step_label(&d->ck[i], i, st, sizeof st);
        andrea_buf_printf(b, "<text x=\"%.1f\" y=\"%.0f\" class=\"ax\" text-anchor=\"%s\">", ml + pw * x[i], Ht - 8,
                          e ? "end" : "start");
        andrea_html_add(b, st);
        andrea_buf_puts(b, "</text>");
    }
    andrea_buf_printf(b, "<text x=\"%.1f\" y=\"%.0f\" class=\"ax\" text-anchor=\"middle\">step%s</text>", ml + pw / 2, Ht - 8,
                log_axis ? " (log)" : "");
    andrea_buf_printf(b, "</svg><figcaption>head %d.%d</figcaption></figure>\n", l, h);
}

/* Whether some checkpoint of the series has head (l, h): the grid is the largest shape's. */
static int head_somewhere(const series_data *d, int l, int h) {
    for (int i = 0; i < d->n_ck; i++)
        if (l < d->ck[i].n_layer && h < d->ck[i].n_head) return 1;
    return 0;
}

static void matrix(andrea_buf *b, const series_data *d, int c) {
    andrea_buf_puts(b, "<table class=\"matrix\"><tr><th>head</th>");
    for (int i = 0; i < d->n_ck; i++) {
        char st[64];
        step_label(&d->ck[i], i, st, sizeof st);
        andrea_buf_puts(b, "<th>");
        if (d->ck[i].href[0]) {
            andrea_buf_puts(b, "<a href=\"");
            andrea_html_add(b, d->ck[i].href);
            andrea_buf_puts(b, "\">");
        }
        andrea_html_add(b, st);
        andrea_buf_puts(b, d->ck[i].href[0] ? "</a></th>" : "</th>");
    }
    andrea_buf_puts(b, "</tr>\n");
    for (int l = 0; l < d->n_layer; l++)
        for (int h = 0; h < d->n_head; h++) {
            if (!head_somewhere(d, l, h)) continue; /* a mix of shapes: no checkpoint has this head */
            andrea_buf_printf(b, "<tr><th>%d.%d</th>", l, h);
            for (int i = 0; i < d->n_ck; i++) {
                const double s = d->score[at(d, i, c, l, h)];
                if (!isfinite(s)) {
                    andrea_buf_puts(b, "<td class=\"na\">-</td>");
                    continue;
                }
                const rgb col = andrea_colormap_magma(fmin(fmax(s, 0), 1));
                const int dark = 0.299 * col.r + 0.587 * col.g + 0.114 * col.b < 140;
                const int lab = d->label[at(d, i, c, l, h)];
                andrea_buf_printf(b, "<td style=\"background:#%02x%02x%02x;color:%s\"%s>%.3f%s</td>", col.r, col.g, col.b,
                            dark ? "#fff" : "#000", lab ? " class=\"lab\"" : "", s, lab ? "*" : "");
            }
            andrea_buf_puts(b, "</tr>\n");
        }
    andrea_buf_puts(b, "</table>\n");
}

/* 1 when name needs bash's $'...' to be written exactly: a control byte (a tab, an escape) or a
 * byte of no printable UTF-8 character, which a page cannot hold as it is. */
static int needs_ansi_c_quote(const char *name) {
    for (const char *p = name; *p; p++) {
        const unsigned char c = (unsigned char)*p;
        const int u = c >= 0x80 ? andrea_utf8_printable_len(p) : 1;
        if (c < 0x20 || c == 0x7F || u == 0) return 1;
        p += u - 1;
    }
    return 0;
}

/* name as one shell word, for a command the reader copies into a shell: as it is when it holds
 * only characters no shell treats specially; in single quotes (a quote inside as '\'') when it
 * holds printable UTF-8 only, so "x' $(id)" stays a name instead of running id; else as $'...'
 * (bash, zsh, ksh) with \\, \' and each control byte or byte of no printable character as
 * \xNN, so the word is the exact bytes of the name and the page stays text. Then HTML-escaped
 * into b. */
static void shell_word(andrea_buf *b, const char *name) {
    int plain = name[0] != 0;
    for (const char *p = name; *p && plain; p++)
        plain = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || strchr("_.,:/@%+=-", *p);
    if (plain) {
        andrea_html_add(b, name);
        return;
    }
    andrea_buf q;
    andrea_buf_init(&q);
    if (needs_ansi_c_quote(name)) {
        andrea_buf_puts(&q, "$'");
        for (const char *p = name; *p; p++) {
            const unsigned char c = (unsigned char)*p;
            const int u = c >= 0x80 ? andrea_utf8_printable_len(p) : 1;
            if (c == '\\' || c == '\'') andrea_buf_printf(&q, "\\%c", c);
            else if (c < 0x20 || c == 0x7F || u == 0) andrea_buf_printf(&q, "\\x%02x", c);
            else {
                andrea_buf_add(&q, p, (size_t)u);
                p += u - 1;
            }
        }
    } else {
        andrea_buf_puts(&q, "'");
        for (const char *p = name; *p; p++) {
            const char *quote = strchr(p, '\''), *end = quote ? quote : p + strlen(p);
            andrea_buf_add(&q, p, (size_t)(end - p));
            if (!quote) break;
            andrea_buf_puts(&q, "'\\''");
            p = quote;
        }
    }
    andrea_buf_puts(&q, "'");
    andrea_html_add(b, andrea_buf_failed(&q) ? "?" : q.s);
    andrea_buf_free(&q);
}

/* What changed between checkpoints i and i + 1: every (head, class) whose label changed, as
 * `andrea diff --changed` lists it, with the score before and after (docs/catalog.md, diff). */
static void step_diff(andrea_buf *b, const series_data *d, int i) {
    char from[64], to[64];
    step_label(&d->ck[i], i, from, sizeof from);
    step_label(&d->ck[i + 1], i + 1, to, sizeof to);
    andrea_buf_printf(b, "<h3 id=\"diff-%d\">", i);
    andrea_html_add(b, from);
    andrea_buf_puts(b, " &rarr; ");
    andrea_html_add(b, to);
    andrea_buf_puts(b, "</h3>\n<p><code>andrea diff --db catalog.db --from ");
    shell_word(b, d->ck[i].name);
    andrea_buf_puts(b, " --to ");
    shell_word(b, d->ck[i + 1].name);
    andrea_buf_puts(b, " --changed</code></p>\n");
    const series_checkpoint *p = &d->ck[i], *q = &d->ck[i + 1];
    if (p->n_layer != q->n_layer || p->n_head != q->n_head) { /* as diff refuses it */
        andrea_buf_printf(b, "<p>Different shapes (%d x %d and %d x %d heads): no head-by-head comparison.</p>\n",
                          p->n_layer, p->n_head, q->n_layer, q->n_head);
        return;
    }
    int rows = 0;
    for (int c = 0; c < d->n_classes; c++)
        for (int l = 0; l < d->n_layer; l++)
            for (int h = 0; h < d->n_head; h++) {
                const int a = d->label[at(d, i, c, l, h)], z = d->label[at(d, i + 1, c, l, h)];
                /* a class scored at one step only is no change of label (diff shows neither) */
                if (a == z || !isfinite(d->score[at(d, i, c, l, h)]) || !isfinite(d->score[at(d, i + 1, c, l, h)])) continue;
                if (!rows++) andrea_buf_puts(b, "<table class=\"matrix diff\"><tr><th>head</th><th>class</th><th>score</th>"
                                          "<th>&rarr;</th><th>&Delta;</th><th>label</th></tr>\n");
                const double s0 = d->score[at(d, i, c, l, h)], s1 = d->score[at(d, i + 1, c, l, h)];
                andrea_buf_printf(b, "<tr><td>%d.%d</td><td>", l, h);
                andrea_html_add(b, d->classes[c]);
                andrea_buf_printf(b, "</td><td>%.3f</td><td>%.3f</td><td>%+.3f</td><td>%s</td></tr>\n", s0, s1, s1 - s0,
                            z ? "gained" : "lost");
            }
    andrea_buf_puts(b, rows ? "</table>\n" : "<p>No label changed.</p>\n");
}

int andrea_series_page_write(const series_data *d, const char *path, ae_error *err) {
    andrea_buf b;
    andrea_buf_init(&b);
    double *x = malloc((size_t)(d->n_ck > 0 ? d->n_ck : 1) * sizeof *x);
    if (!x) return andrea_fail(err, "%s: out of memory", path);
    int log_axis = 0;
    x_positions(d, x, &log_axis);
    andrea_buf_puts(&b, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>andrea: series ");
    andrea_html_add(&b, d->name);
    andrea_buf_puts(&b, "</title>\n<style>body{font-family:sans-serif;margin:1.5em}table.matrix{border-collapse:collapse;"
                  "font-size:12px}table.matrix td,table.matrix th{padding:2px 6px;text-align:right}"
                  "td.lab{font-weight:bold;outline:2px solid #0a0;outline-offset:-2px}td.na{color:#999}"
                  "figure{display:inline-block;margin:4px}figcaption{font-size:12px;text-align:center}"
                  ".frame{fill:none;stroke:#888}.ax{font-size:10px;fill:#444}.thr{stroke:#c00;stroke-dasharray:4 3}"
                  ".line{fill:none;stroke:#333}.lab{fill:#0a0}.nolab{fill:#fff;stroke:#333}</style></head><body>\n");
    andrea_buf_puts(&b, "<h1>Series ");
    andrea_html_add(&b, d->name);
    andrea_buf_printf(&b, ": %d checkpoints</h1>\n<p>Each checkpoint's report:", d->n_ck);
    for (int i = 0; i < d->n_ck; i++) {
        andrea_buf_puts(&b, i ? ", " : " ");
        if (d->ck[i].href[0]) {
            andrea_buf_puts(&b, "<a href=\"");
            andrea_html_add(&b, d->ck[i].href);
            andrea_buf_puts(&b, "\">");
        }
        andrea_html_add(&b, d->ck[i].name);
        if (d->ck[i].href[0]) andrea_buf_puts(&b, "</a>");
    }
    andrea_buf_puts(&b, ".</p>\n<p>Scores are the current runs' (docs/catalog.md); <b>*</b> marks a labelled head. In the "
                  "formation plots the dashed red line is the class's label threshold (min_score; the rule also "
                  "asks a ratio and a margin over the baseline: docs/scores.md), filled dots are labelled steps.</p>\n");
    andrea_buf_puts(&b, "<p>Classes:");
    for (int c = 0; c < d->n_classes; c++) {
        andrea_buf_puts(&b, c ? ", <a href=\"#" : " <a href=\"#");
        class_anchor(&b, d->classes[c]);
        andrea_buf_puts(&b, "\">");
        andrea_html_add(&b, d->classes[c]);
        andrea_buf_puts(&b, "</a>");
    }
    andrea_buf_puts(&b, "</p>\n<p>Changes between adjacent steps:");
    for (int i = 0; i + 1 < d->n_ck; i++) {
        char from[64], to[64];
        step_label(&d->ck[i], i, from, sizeof from);
        step_label(&d->ck[i + 1], i + 1, to, sizeof to);
        andrea_buf_printf(&b, "%s<a href=\"#diff-%d\">", i ? ", " : " ", i);
        andrea_html_add(&b, from);
        andrea_buf_puts(&b, "&rarr;");
        andrea_html_add(&b, to);
        andrea_buf_puts(&b, "</a>");
    }
    andrea_buf_puts(&b, "</p>\n");
    const int all_heads = d->n_layer * d->n_head <= SERIES_PLOT_ALL_HEADS;
    for (int c = 0; c < d->n_classes; c++) {
        andrea_buf_puts(&b, "<h2 id=\"");
        class_anchor(&b, d->classes[c]);
        andrea_buf_puts(&b, "\">");
        andrea_html_add(&b, d->classes[c]);
        andrea_buf_puts(&b, "</h2>\n");
        if (isfinite(d->threshold[c])) andrea_buf_printf(&b, "<p>Label threshold: score &ge; %g.</p>\n", d->threshold[c]);
        matrix(&b, d, c);
        andrea_buf_printf(&b, "<h3>Formation%s</h3><div class=\"plots\">\n", all_heads ? "" : " (heads labelled at some step)");
        for (int l = 0; l < d->n_layer; l++)
            for (int h = 0; h < d->n_head; h++) {
                int ever = all_heads;
                for (int i = 0; i < d->n_ck && !ever; i++) ever = d->label[at(d, i, c, l, h)];
                if (ever) plot_svg(&b, d, c, l, h, x, log_axis);
            }
        andrea_buf_puts(&b, "</div>\n");
    }
    andrea_buf_puts(&b, "<h2 id=\"changes\">Changes between adjacent steps</h2>\n");
    for (int i = 0; i + 1 < d->n_ck; i++) step_diff(&b, d, i);
    andrea_buf_puts(&b, "</body></html>\n");
    free(x);
    int rc;
    if (andrea_buf_failed(&b)) rc = andrea_fail(err, "%s: out of memory", path);
    else rc = andrea_write_file_atomic(path, b.s, b.len, err);
    andrea_buf_free(&b);
    return rc;
}

int andrea_series_page_write_pending(const char *path, ae_error *err) {
    static const char page[] =
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>andrea: series being written</title>\n"
        "<style>body{font-family:sans-serif;margin:1.5em}</style></head><body>\n"
        "<h1>This series is being written</h1>\n"
        "<p><code>andrea analyze</code> is writing the checkpoint reports of this series, or was stopped while it did: "
        "the reports in this folder may be missing, incomplete, or some from this run and some from an earlier one. "
        "When the run ends, the series page replaces this one. If it was stopped, run the same <code>andrea analyze</code> "
        "again.</p>\n</body></html>\n";
    return andrea_write_file_atomic(path, page, sizeof page - 1, err);
}

void andrea_series_table_write(FILE *out, const series_data *d) {
    /* cells: the labelled heads ("1.0 1.3") or "-" */
    size_t wstep = 4, *w = calloc((size_t)(d->n_classes > 0 ? d->n_classes : 1), sizeof *w);
    char *cell = malloc(4096);
    if (!w || !cell) {
        free(w);
        free(cell);
        return;
    }
    for (int i = 0; i < d->n_ck; i++) {
        char st[64];
        step_label(&d->ck[i], i, st, sizeof st);
        if (strlen(st) > wstep) wstep = strlen(st);
    }
    for (int pass = 0; pass < 2; pass++) {
        if (pass) {
            fprintf(out, "%-*s", (int)wstep, "step");
            for (int c = 0; c < d->n_classes; c++) fprintf(out, "  %-*s", c + 1 < d->n_classes ? (int)w[c] : 0, d->classes[c]);
            fputc('\n', out);
        } else {
            for (int c = 0; c < d->n_classes; c++) w[c] = strlen(d->classes[c]);
        }
        for (int i = 0; i < d->n_ck; i++) {
            char st[64];
            step_label(&d->ck[i], i, st, sizeof st);
            if (pass) fprintf(out, "%-*s", (int)wstep, st);
            for (int c = 0; c < d->n_classes; c++) {
                size_t n = 0;
                cell[0] = 0;
                for (int l = 0; l < d->n_layer; l++)
                    for (int h = 0; h < d->n_head; h++)
                        if (d->label[at(d, i, c, l, h)] && n + 24 < 4096)
                            n += (size_t)snprintf(cell + n, 4096 - n, "%s%d.%d", n ? " " : "", l, h);
                if (!n) snprintf(cell, 4096, "-");
                if (pass) fprintf(out, "  %-*s", c + 1 < d->n_classes ? (int)w[c] : 0, cell);
                else if (strlen(cell) > w[c]) w[c] = strlen(cell);
            }
            if (pass) fputc('\n', out);
        }
    }
    free(w);
    free(cell);
}
