/* report_write.c — lays a report_data out as PNGs and static HTML (see report_data.h).
 *
 * Folder layout (docs/report.md):
 *   index.html                    head table (sortable, filterable by class) + overview images
 *   heads/L{l}_H{h}.html          one page per head: its scores and every heatmap
 *   maps/L{l}_H{h}/s-{suite}_e{e}.png     heatmap of head (l, h), suite, example e
 *   overview/scores_c{i}-{class}.png      n_layer × n_head score grid of class i
 *   overview/thumbs_s-{suite}.png         all heads' maps of suite, example 0 (none for a twin suite:
 *                                         its leader's grid names it too)
 *   overview/steps_c{i}-{class}.png       labelled heads' score against training step
 *   overview/images.tsv                   the run each suite's images were drawn with (report_kept.h)
 *   assets/, data/, explore.html, compare.html   interactive views (report_interactive.c)
 * A suite's images are named after it, one to one (andrea_file_tag), so a report written again
 * keeps an earlier run's beside its own (report_kept.h); a class's images use a slug of its name
 * plus its index (names come from user probe files and may hold any character); every text in
 * HTML goes through andrea_html_add.
 * Images are drawn and PNG-encoded on OpenMP threads (tasks, below), and head pages built on them;
 * maps are read and files written by one thread at a time (HDF5 and the temporary-file registry
 * of atomic_file.h are not thread-safe).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../common/atomic_file.h"
#include "../common/checked_size.h"
#include "../common/progress.h"
#include "canvas.h"
#include "plots.h"
#include "out_folder.h"
#include "report_data.h"
#include "report_interactive.h"
#include "report_circuits.h"
#include "report_kept.h"
#include "text.h"

#define DEFAULT_EXAMPLES 2

int andrea_report_mkdirs(const char *dir, ae_error *err) {
    char p[AE_PATH_MAX];
    size_t n = strlen(dir);
    if (n == 0 || n >= sizeof p) return andrea_fail(err, "%s: output folder path empty or too long", dir);
    memcpy(p, dir, n + 1);
    for (size_t i = 1; i <= n; i++) {
        if (p[i] == '/' || p[i] == 0) {
            char c = p[i];
            p[i] = 0;
            if (mkdir(p, 0777) != 0 && errno != EEXIST) return andrea_fail(err, "%s: cannot create folder: %s", p, strerror(errno));
            struct stat st;
            if (stat(p, &st) != 0 || !S_ISDIR(st.st_mode)) return andrea_fail(err, "%s: exists and is not a folder", p);
            p[i] = c;
        }
    }
    return 0;
}

static const report_score *score_at(const report_data *d, const report_score *base, int cls, int l, int h) {
    if (!base || cls < 0) return NULL;
    return &base[((size_t)cls * (size_t)d->n_layer + (size_t)l) * (size_t)d->n_head + (size_t)h];
}

/* Labelled in some class of the catalog. */
static int head_labelled(const report_data *d, int l, int h) {
    for (int c = 0; c < d->n_classes; c++) {
        const report_score *sc = score_at(d, d->scores, c, l, h);
        if (sc && sc->label) return 1;
    }
    return 0;
}

/* PNGs for the labelled heads only: asked for, the default (small), or full past its budget
 * (report.h). */
/* The report's interactive data: every head, head pages, examples past REPORT_EXACT_TOKENS
 * summarised unless --report full. */
static report_interactive_options interactive_options(const andrea_render_options *opt) {
    const report_interactive_options io = {NULL, 1, 0, NULL, opt && opt->full ? 0 : REPORT_EXACT_TOKENS};
    return io;
}

static int labelled_only(const report_data *d, const andrea_render_options *opt) {
    const int m = opt ? opt->maps_per_suite : 0;
    const uint64_t pngs = (uint64_t)d->n_layer * (uint64_t)d->n_head * (uint64_t)d->n_suites;
    return m == ANDREA_REPORT_MAPS_LABELLED || (m == 0 && (!(opt && opt->full) || pngs > ANDREA_REPORT_PNG_BUDGET));
}

/* Head (l, h) gets the PNG of example e. */
static int head_png(const report_data *d, const andrea_render_options *opt, int l, int h, int e) {
    return andrea_render_png_wanted(opt, e) && (!labelled_only(d, opt) || head_labelled(d, l, h));
}

static int class_of_suite(const report_data *d, int s) {
    for (int c = 0; c < d->n_classes; c++)
        if (!strcmp(d->classes[c], d->suites[s].name)) return c;
    return -1;
}

static void map_name(const report_data *d, int l, int h, int s, int e, char *out, size_t cap) {
    andrea_report_map_name(l, h, d->suites[s].name, e, out, cap);
}

static void overview_name(const char *kind, char prefix, int i, const char *name, char *out, size_t cap) {
    char slug[64];
    andrea_file_slug(name, slug, sizeof slug);
    snprintf(out, cap, "overview/%s_%c%d-%s.png", kind, prefix, i, slug);
}

/* "0.912" or "n/a" (NaN: not measured) */
static void fmt_num(double v, const char *fmt, char *out, size_t cap) {
    if (v == v) snprintf(out, cap, fmt, v);
    else snprintf(out, cap, "n/a");
}

static int join_path(char *out, size_t cap, const char *dir, const char *rel, ae_error *err) {
    int n = snprintf(out, cap, "%s/%s", dir, rel);
    if (n < 0 || (size_t)n >= cap) return andrea_fail(err, "%s: path too long", dir);
    return 0;
}

/* Token display label of example e, position i, in the given mode. */
static void label_of(const report_data *d, const report_suite *su, int e, int i, label_mode mode, int max_chars,
                     char *out, size_t cap) {
    int id = su->tokens[(size_t)e * (size_t)su->T + (size_t)i];
    char bytes[256];
    int nb = d->token_bytes ? d->token_bytes(d, id, bytes, sizeof bytes) : -1;
    if (nb < 0 && id != d->bos) {
        snprintf(out, cap, "#%d", id);
        return;
    }
    andrea_token_label((const unsigned char *)bytes, nb < 0 ? 0 : nb, id == d->bos, mode, max_chars, out, cap);
}

/* ---------- images ---------- */

typedef struct {
    unsigned char *buf;
    size_t len;
    int failed;
    ae_error err;
} encoded;

/* Encodes canvas c (freed here) into e; a NULL canvas keeps e's error. */
static void encode(canvas *c, encoded *e) {
    if (!c) {
        e->failed = 1;
        return;
    }
    if (andrea_canvas_encode_png(c, &e->buf, &e->len, &e->err)) e->failed = 1;
    andrea_canvas_free(c);
}

static int write_encoded(const char *out_dir, const char *rel, encoded *e, ae_error *err) {
    char path[AE_PATH_MAX];
    int rc = 0;
    if (e->failed) rc = andrea_fail(err, "%s/%s: %s", out_dir, rel, e->err.msg);
    else if (join_path(path, sizeof path, out_dir, rel, err) || andrea_write_file_atomic(path, e->buf, e->len, err)) rc = -1;
    free(e->buf);
    e->buf = NULL;
    return rc;
}

static void score_text(const report_data *d, int cls, int l, int h, char *out, size_t cap) {
    const report_score *sc = score_at(d, d->scores, cls, l, h);
    if (!sc) {
        snprintf(out, cap, "no score in the catalog for this class");
        return;
    }
    char a[32], b[32], c[32];
    fmt_num(sc->score, "%.3f", a, sizeof a);
    fmt_num(sc->baseline, "%.3f", b, sizeof b);
    fmt_num(sc->ablation, "%+.3f", c, sizeof c);
    char how[40] = "";
    if (sc->ablation_method[0]) snprintf(how, sizeof how, " (%s ablation)", sc->ablation_method);
    /* the verdict where there is one, else causal (docs/scores.md): does ablating it raise the
     * loss more than the mean head's? */
    char causal[96];
    if (sc->evidence[0] && !strcmp(sc->evidence, "pattern_only"))
        snprintf(causal, sizeof causal, ", pattern only: no measurable use");
    else if (sc->evidence[0])
        snprintf(causal, sizeof causal, ", %s", sc->evidence);
    else
        snprintf(causal, sizeof causal, "%s", sc->causal < 0 ? "" : sc->causal ? ", causal 1" : ", causal 0");
    snprintf(out, cap, "score %s (baseline %s, \xCE\x94loss %s%s%s) \xC2\xB7 %s", a, b, c, how, causal,
             sc->label ? "LABELLED" : "not labelled");
}

/* ---------- heatmaps, in parallel ----------
 * One OpenMP task per (head, example) of a suite: it reads the map (one thread at a time: HDF5 is
 * not thread-safe), draws and PNG-encodes it on its own thread, then writes the file (one thread at
 * a time: atomic_file's registry of temporaries is not thread-safe). A suite's thumbnail grid is a
 * task of its own that runs beside the later suites' heatmaps (its PNG bands are tasks too:
 * png_bands.c). A file's bytes depend only on its map and texts, so any number of threads writes
 * the same files. Memory: one map per running task, the shown examples' labels and the
 * thumbnails' 128 x 128 crops of the suites whose grid is not drawn yet (at most all of them:
 * 7 x 78 MB for 1200 heads). */

typedef struct {
    const report_data *d;
    const char *out_dir;
    const andrea_render_options *opt;
    int failed;    /* read and set with omp atomic */
    ae_error *err; /* the first failure */
    ae_progress prog;
} map_run;

static int run_failed(map_run *r) {
    int f;
#pragma omp atomic read
    f = r->failed;
    return f;
}

static void run_fail(map_run *r, const ae_error *e) {
#pragma omp critical(report_err)
    {
        if (!r->failed) *r->err = *e;
#pragma omp atomic write
        r->failed = 1;
    }
}

/* Heatmap of head i (= l * H + h), suite s, example e: read, copy the thumbnail crop (thumbs !=
 * NULL: example 0), draw and write the PNG when the options want one (labels: [n] or NULL). */
static void map_task(map_run *r, int s, int e, int i, char *const *labels, float *thumbs) {
    const report_data *d = r->d;
    const report_suite *su = &d->suites[s];
    const int l = i / d->n_head, h = i % d->n_head, T = su->T, n = su->n_tokens[e];
    const int S = andrea_thumbs_shown(d->n_layer, d->n_head, T); /* the thumbnail's crop */
    ae_error me = {{0}};
    int rc = 0;
    if (run_failed(r)) return;
    if (andrea_interrupted) {
        andrea_fail(&me, "%s: interrupted", r->out_dir);
        run_fail(r, &me);
        return;
    }
    float *m = malloc((size_t)T * (size_t)T * sizeof *m); /* T*T checked by suite_maps */
    if (!m) {
        andrea_fail(&me, "%s: out of memory for a map of suite %s", r->out_dir, su->name);
        run_fail(r, &me);
        return;
    }
#pragma omp critical(report_read)
    rc = d->read_map(d, s, e, l, h, m, &me);
    if (!rc && thumbs)
        for (int q = 0; q < S; q++)
            memcpy(thumbs + ((size_t)i * (size_t)S + (size_t)q) * (size_t)S, m + (size_t)q * (size_t)T,
                   (size_t)S * sizeof(float));
    if (!rc && labels && head_png(d, r->opt, l, h, e)) {
        char title[256], sub[512], st[256], rel[512];
        snprintf(title, sizeof title, "L%d H%d \xC2\xB7 %.64s \xC2\xB7 example %d (%d tokens)", l, h, su->name, e, n);
        score_text(d, class_of_suite(d, s), l, h, st, sizeof st);
        snprintf(sub, sizeof sub, "%.80s \xC2\xB7 class %.64s: %s", d->model, su->name, st);
        heatmap_spec hs = {m, T, n, (const char *const *)labels, su->target + (size_t)e * (size_t)T * (size_t)T, title, sub};
        encoded enc = {0};
        encode(andrea_draw_heatmap(&hs, &enc.err), &enc);
        map_name(d, l, h, s, e, rel, sizeof rel);
#pragma omp critical(report_files)
        rc = write_encoded(r->out_dir, rel, &enc, &me);
    }
    free(m);
    if (rc) run_fail(r, &me);
#pragma omp critical(report_progress)
    andrea_progress_add(&r->prog, 1);
}

/* The thumbnail grid of suite s from its crops (freed here). */
static void thumbs_task(map_run *r, int s, float *thumbs, plot_grid *grid) {
    const report_data *d = r->d;
    const report_suite *su = &d->suites[s];
    const int S = andrea_thumbs_shown(d->n_layer, d->n_head, su->T);
    char title[256], sub[512], rel[512];
    /* the suite and its twins (the same items: one grid serves them all) */
    char names[160];
    int at = snprintf(names, sizeof names, "%.64s", su->name);
    for (int t = s + 1; t < d->n_suites && at < (int)sizeof names; t++)
        if (d->suites[t].maps_of == s + 1)
            at += snprintf(names + at, sizeof names - (size_t)at, ", %.64s", d->suites[t].name);
    snprintf(title, sizeof title, "all heads \xC2\xB7 %s \xC2\xB7 example 0 (%d tokens)", names, su->n_tokens[0]);
    snprintf(sub, sizeof sub, "%.120s", d->model);
    thumbs_spec ts = {d->n_layer, d->n_head, thumbs, S, su->n_tokens[0], title, sub, grid};
    encoded te = {0};
    ae_error me = {{0}};
    int rc;
    encode(andrea_draw_thumbs(&ts, &te.err), &te);
    free(thumbs);
    andrea_report_thumbs_name(su->name, rel, sizeof rel);
#pragma omp critical(report_files)
    rc = write_encoded(r->out_dir, rel, &te, &me);
    if (rc) run_fail(r, &me);
}

/* PNG heatmaps of suite s: the first n examples the options want (they form a prefix). */
static int suite_png_examples(const map_run *r, int s) {
    int n = 0;
    while (n < r->d->suites[s].n_examples && andrea_render_png_wanted(r->opt, n)) n++;
    return n;
}

/* Spawns the tasks of suite s (called by one thread of the parallel region) and waits for its
 * heatmaps; its thumbnail task may still run when this returns. */
static void suite_maps(map_run *r, int s, plot_grid *grid) {
    const report_data *d = r->d;
    const report_suite *su = &d->suites[s];
    const int LH = d->n_layer * d->n_head, T = su->T, n_png = suite_png_examples(r, s);
    const int S = andrea_thumbs_shown(d->n_layer, d->n_head, T);
    /* a twin suite's thumbnail grid is its leader's, pixel for pixel: the index shows that one */
    const int own_thumbs = !su->maps_of;
    const int n_read = n_png > 0 ? n_png : own_thumbs && su->n_examples > 0; /* example 0 feeds the thumbnails */
    ae_error me = {{0}};
    size_t TT, n_thumbs, n_lab;
    if (n_read == 0) return;
    if (ae_mul((size_t)T, (size_t)T * sizeof(float), &TT) ||
        ae_mul((size_t)LH, (size_t)S * (size_t)S * sizeof(float), &n_thumbs) ||
        ae_mul((size_t)n_png * (size_t)T, 64, &n_lab)) {
        andrea_fail(&me, "%s: suite %s: maps too large (T = %d)", d->dump_path, su->name, T);
        run_fail(r, &me);
        return;
    }
    float *thumbs = own_thumbs ? malloc(n_thumbs) : NULL;
    char **labels = calloc((size_t)n_png * (size_t)T + 1, sizeof *labels);
    char *label_mem = malloc(n_lab + 1);
    if ((own_thumbs && !thumbs) || !labels || !label_mem) {
        free(thumbs);
        free(labels);
        free(label_mem);
        andrea_fail(&me, "%s: out of memory for suite %s", r->out_dir, su->name);
        run_fail(r, &me);
        return;
    }
    /* labels on this thread: the token text may come from the dump (HDF5) */
    for (int e = 0; e < n_png; e++)
        for (int i = 0; i < su->n_tokens[e]; i++) {
            size_t at = (size_t)e * (size_t)T + (size_t)i;
            labels[at] = label_mem + at * 64;
            label_of(d, su, e, i, LABEL_PNG, LABEL_MAX_CHARS, labels[at], 64);
        }
    /* a taskgroup, not a taskwait: taskwait would also wait for the earlier suites' thumbnail
     * tasks (children of this thread too), and the grids would be drawn one after another */
#pragma omp taskgroup
    for (int e = 0; e < n_read; e++)
        for (int i = 0; i < LH; i++) {
            char *const *lab = e < n_png ? labels + (size_t)e * (size_t)T : NULL;
            float *th = e == 0 ? thumbs : NULL;
#pragma omp task firstprivate(e, i, lab, th)
            map_task(r, s, e, i, lab, th);
        }
    free(labels);
    free(label_mem);
    if (run_failed(r) || !thumbs) {
        free(thumbs);
        return;
    }
#pragma omp task firstprivate(thumbs)
    thumbs_task(r, s, thumbs, grid);
}

/* Heatmaps of every head for every suite and shown example the options want, plus each suite's
 * thumbnail grid (example 0 of every head). */
static int write_maps(const report_data *d, const char *out_dir, const andrea_render_options *opt,
                      plot_grid *thumb_grids, ae_error *err) {
    map_run r = {d, out_dir, opt, 0, err, {0}};
    const int LH = d->n_layer * d->n_head;
    uint64_t total = 0;
    int any_png = 0;
    for (int s = 0; s < d->n_suites; s++) {
        int n_png = suite_png_examples(&r, s);
        any_png |= n_png > 0;
        total += (uint64_t)(n_png > 0 ? n_png : !d->suites[s].maps_of && d->suites[s].n_examples > 0) * (uint64_t)LH;
    }
    for (int l = 0; l < d->n_layer && any_png; l++)
        for (int h = 0; h < d->n_head; h++) {
            if (!head_png(d, opt, l, h, 0)) continue;
            char dir[AE_PATH_MAX];
            snprintf(dir, sizeof dir, "%s/maps/L%d_H%d", out_dir, l, h);
            if (andrea_report_mkdirs(dir, err)) return -1;
        }
    andrea_progress_begin(&r.prog, "render", total);
#pragma omp parallel
#pragma omp single
    for (int s = 0; s < d->n_suites && !run_failed(&r); s++) suite_maps(&r, s, &thumb_grids[s]);
    for (int s = 0; s < d->n_suites; s++) /* a twin shows its leader's grid */
        if (d->suites[s].maps_of) thumb_grids[s] = thumb_grids[d->suites[s].maps_of - 1];
    andrea_progress_end(&r.prog);
    return r.failed ? -1 : 0;
}

static int write_overviews(const report_data *d, const char *out_dir, plot_grid *score_grids, ae_error *err) {
    int L = d->n_layer, H = d->n_head;
    size_t LH = (size_t)L * (size_t)H;
    double *v = malloc(LH * sizeof *v);
    unsigned char *lab = malloc(LH);
    if (!v || !lab) {
        free(v);
        free(lab);
        return andrea_fail(err, "%s: out of memory", out_dir);
    }
    int rc = 0;
    for (int c = 0; c < d->n_classes && d->scores && !rc; c++) {
        int scored = 0;
        for (int l = 0; l < L; l++)
            for (int h = 0; h < H; h++) {
                const report_score *sc = score_at(d, d->scores, c, l, h);
                v[l * H + h] = sc->score;
                lab[l * H + h] = (unsigned char)(sc->label != 0);
                scored |= isfinite(sc->score);
            }
        if (!scored) continue; /* a map-only suite (--texts, no targets): a grid of n/a says nothing */
        char title[256], sub[512], rel[512];
        snprintf(title, sizeof title, "class %.64s \xC2\xB7 score of every head", d->classes[c]);
        snprintf(sub, sizeof sub, "%.120s \xC2\xB7 sha256 %.12s", d->model, d->sha256);
        score_grid_spec gs = {L, H, v, lab, title, sub, &score_grids[c]};
        encoded e = {0};
        encode(andrea_draw_score_grid(&gs, &e.err), &e);
        overview_name("scores", 'c', c, d->classes[c], rel, sizeof rel);
        if (write_encoded(out_dir, rel, &e, err)) rc = -1;
    }
    /* Score against step: the heads labelled (at any step) for each class, at most
     * STEP_PLOT_MAX_SERIES of them (the highest best score first). */
    for (int c = 0; c < d->n_classes && d->n_steps >= 2 && !rc; c++) {
        int idx[STEP_PLOT_MAX_SERIES], n_ser = 0, n_lab = 0;
        double best[STEP_PLOT_MAX_SERIES];
        for (int l = 0; l < L; l++)
            for (int h = 0; h < H; h++) {
                int any = 0;
                double mx = -1;
                for (int t = 0; t < d->n_steps; t++) {
                    const report_score *sc = score_at(d, d->step_scores + (size_t)t * (size_t)d->n_classes * LH, c, l, h);
                    any |= sc->label;
                    if (sc->score == sc->score && sc->score > mx) mx = sc->score;
                }
                if (!any) continue;
                n_lab++;
                /* insertion into the top list, ordered by best score, then (l, h) */
                int pos = n_ser;
                while (pos > 0 && best[pos - 1] < mx) pos--;
                if (pos >= STEP_PLOT_MAX_SERIES) continue;
                int last = n_ser < STEP_PLOT_MAX_SERIES ? n_ser : STEP_PLOT_MAX_SERIES - 1;
                for (int j = last; j > pos; j--) {
                    idx[j] = idx[j - 1];
                    best[j] = best[j - 1];
                }
                idx[pos] = l * H + h;
                best[pos] = mx;
                if (n_ser < STEP_PLOT_MAX_SERIES) n_ser++;
            }
        if (n_ser == 0) continue;
        double *vals = malloc((size_t)n_ser * (size_t)d->n_steps * sizeof *vals);
        char names[STEP_PLOT_MAX_SERIES][32];
        const char *np[STEP_PLOT_MAX_SERIES];
        if (!vals) {
            rc = andrea_fail(err, "%s: out of memory", out_dir);
            break;
        }
        for (int si = 0; si < n_ser; si++) {
            int l = idx[si] / H, h = idx[si] % H;
            snprintf(names[si], sizeof names[si], "L%d H%d", l, h);
            np[si] = names[si];
            for (int t = 0; t < d->n_steps; t++)
                vals[si * d->n_steps + t] = score_at(d, d->step_scores + (size_t)t * (size_t)d->n_classes * LH, c, l, h)->score;
        }
        char title[256], sub[512], rel[512];
        snprintf(title, sizeof title, "class %.64s \xC2\xB7 score against training step", d->classes[c]);
        snprintf(sub, sizeof sub, "run %.100s \xC2\xB7 %d checkpoints \xC2\xB7 %d labelled heads%s", d->run_name, d->n_steps,
                 n_lab, n_lab > n_ser ? " (top 10 shown)" : "");
        step_plot_spec sp = {n_ser, d->n_steps, d->steps, vals, np, title, sub, "score"};
        encoded e = {0};
        encode(andrea_draw_step_plot(&sp, &e.err), &e);
        free(vals);
        overview_name("steps", 'c', c, d->classes[c], rel, sizeof rel);
        if (write_encoded(out_dir, rel, &e, err)) rc = -1;
    }
    free(v);
    free(lab);
    return rc;
}

/* ---------- HTML ---------- */


void andrea_report_html_head(andrea_buf *b, const char *title, const char *up) {
    andrea_buf_puts(b, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n");
    /* Offline by construction: nothing but this folder's images, styles and scripts (the
     * interactive data are scripts beside the page), inline style and inline script. */
    andrea_buf_puts(b, "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; img-src 'self' file:; "
                 "style-src 'self' file: 'unsafe-inline'; script-src 'self' file: 'unsafe-inline'\">\n<title>");
    andrea_html_add(b, title);
    /* the style is the folder's assets/andrea.css (written inline it was 1.3 KB of every head page) */
    andrea_buf_printf(b, "</title>\n<link rel=\"stylesheet\" href=\"%sassets/andrea.css\">\n</head>\n<body>\n", up);
}

int andrea_report_write_html(const char *out_dir, const char *rel, andrea_buf *b, ae_error *err) {
    char path[AE_PATH_MAX];
    if (andrea_buf_failed(b)) return andrea_fail(err, "%s/%s: out of memory building the page", out_dir, rel);
    if (join_path(path, sizeof path, out_dir, rel, err)) return -1;
    return andrea_write_file_atomic(path, b->s, b->len, err);
}

/* One table cell with a number for sorting (data-v) and its text; NaN sorts last. */
static void num_cell(andrea_buf *b, double v, const char *fmt, int labelled) {
    char t[32];
    fmt_num(v, fmt, t, sizeof t);
    if (v == v) andrea_buf_printf(b, "<td%s data-v=\"%.9g\">%s</td>", labelled ? " class=\"lab\"" : "", v, t);
    else andrea_buf_printf(b, "<td data-v=\"\">%s</td>", t);
}

static const char *SORT_JS =
    "<script>\n"
    "(function(){\n"
    "var table=document.getElementById('heads'),body=table.tBodies[0];\n"
    "function key(tr,col){var td=tr.cells[col],v=td.getAttribute('data-v');"
    "return v===null?td.textContent:(v===''?null:parseFloat(v));}\n"
    "function sortBy(th){var col=+th.getAttribute('data-col');"
    "var desc=th.classList.contains('desc')?false:(th.classList.contains('asc')?true:th.hasAttribute('data-num'));"
    "table.querySelectorAll('th[data-col]').forEach(function(t){t.classList.remove('asc','desc');});"
    "th.classList.add(desc?'desc':'asc');"
    "var rows=Array.prototype.slice.call(body.rows);"
    "rows.sort(function(a,b){var x=key(a,col),y=key(b,col);"
    "if(x===null&&y===null)return a.getAttribute('data-i')-b.getAttribute('data-i');"
    "if(x===null)return 1;if(y===null)return -1;"
    "var c=(typeof x==='number')?x-y:String(x).localeCompare(String(y));if(desc)c=-c;"
    "return c!==0?c:a.getAttribute('data-i')-b.getAttribute('data-i');});"
    "rows.forEach(function(r){body.appendChild(r);});}\n"
    "table.querySelectorAll('th[data-col]').forEach(function(th){th.addEventListener('click',function(){sortBy(th);});});\n"
    "var sel=document.getElementById('filter'),count=document.getElementById('count');\n"
    "function filter(){var v=sel.value,n=0;Array.prototype.forEach.call(body.rows,function(r){"
    "var c=r.getAttribute('data-classes');"
    "var show=v===''||(v==='any'?c.trim()!=='':c.indexOf(' '+v+' ')>=0);"
    "r.style.display=show?'':'none';if(show)n++;});count.textContent=n+' of '+body.rows.length+' heads shown';}\n"
    "sel.addEventListener('change',filter);filter();\n"
    "})();\n"
    "</script>\n";

/* The attributes that make a grid image clickable (andrea.js: gridImage). */
static void grid_attrs(andrea_buf *b, const plot_grid *g, int L, int H) {
    andrea_buf_printf(b, "\" data-grid=\"%d,%d,%d,%d,%d,%d\" data-href=\"heads/L{l}_H{h}.html", g->x0, g->y0, g->cell_w,
                g->cell_h, L, H);
}

/* The index page's heading and table of what was analysed (checkpoint, shape, dump, catalog, suites).
 * Its sha256 row, "<tr><th>sha256</th><td><code>" and the hex, is read back by reports/out_folder.c
 * (andrea_out_folder_reports: a series page links the reports its folder holds): keep it so. */
static void index_meta(andrea_buf *b, const report_data *d, const andrea_render_options *opt) {
    andrea_buf_puts(b, "<h1>andrea report: ");
    andrea_html_add(b, d->model);
    andrea_buf_puts(b, "</h1>\n<table class=\"meta\">\n<tr><th>checkpoint</th><td><code>");
    andrea_html_add(b, d->ckpt_path);
    andrea_buf_puts(b, "</code></td></tr>\n<tr><th>sha256</th><td><code>");
    andrea_html_add(b, d->sha256);
    andrea_buf_printf(b, "</code></td></tr>\n<tr><th>shape</th><td>%d layers \xC3\x97 %d heads, d_model %d, vocab %d</td></tr>\n",
                d->n_layer, d->n_head, d->d_model, d->vocab_size);
    andrea_buf_puts(b, "<tr><th>dump</th><td><code>");
    andrea_html_add(b, d->dump_path);
    andrea_buf_puts(b, "</code> (maps ");
    andrea_html_add(b, d->maps_dtype);
    andrea_buf_puts(b, ")</td></tr>\n<tr><th>catalog</th><td><code>");
    andrea_html_add(b, d->db_path);
    andrea_buf_puts(b, "</code></td></tr>\n<tr><th>suites</th><td>");
    for (int s = 0; s < d->n_suites; s++) {
        if (s) andrea_buf_puts(b, ", ");
        andrea_html_add(b, d->suites[s].name);
        andrea_buf_printf(b, " (%d items, T=%d)", d->suites[s].n_seq, d->suites[s].T);
    }
    andrea_buf_puts(b, "</td></tr>\n</table>\n");
    if (d->note[0]) {
        andrea_buf_puts(b, "<p class=\"note\">");
        andrea_html_add(b, d->note);
        andrea_buf_puts(b, "</p>\n");
    }
    if (labelled_only(d, opt))
        andrea_buf_printf(b, "<p class=\"note\">Static PNG heatmaps are drawn for the labelled heads only (%s); every "
                             "head's maps are interactive on its page. <code>--report-maps 1</code> draws a PNG for "
                             "every head and suite.</p>\n",
                          opt && opt->maps_per_suite == ANDREA_REPORT_MAPS_LABELLED ? "--report-maps labelled"
                          : opt && opt->full ? "--report full past 1024 heads x suites"
                                             : "the default, --report small");
}

/* The sortable table of every head: labels, then score / baseline / delta-loss per class. */
static void index_heads(andrea_buf *b, const report_data *d) {
    const int L = d->n_layer, H = d->n_head;
    andrea_buf_puts(b, "<h2>Heads</h2>\n<p>Click a column header to sort; score = mean attention on the probe targets, "
                  "base = the same under uniform causal attention, \xCE\x94loss = rise of the suite's next-token "
                  "loss when the head is ablated. Highlighted: labelled. Beside a label, the causal check's "
                  "verdict: necessary (removing it alone hurts the class's predictions more than removing a "
                  "typical head), redundant (its class's heads back each other up: removed together they hurt, "
                  "and it restores much of that alone), pattern only (it attends like the class, but removing "
                  "it, alone or with the class's other heads, hurts no more than removing other heads).</p>\n"
                  "<p><label>Show: <select id=\"filter\"><option value=\"\">all heads</option>"
                  "<option value=\"any\">heads with any label</option>");
    for (int c = 0; c < d->n_classes; c++) {
        andrea_buf_printf(b, "<option value=\"%d\">labelled ", c);
        andrea_html_add(b, d->classes[c]);
        andrea_buf_puts(b, "</option>");
    }
    andrea_buf_puts(b, "</select></label> <span id=\"count\"></span></p>\n");
    andrea_buf_puts(b, "<table id=\"heads\">\n<thead>\n<tr><th colspan=\"3\"></th>");
    for (int c = 0; c < d->n_classes; c++) {
        andrea_buf_puts(b, "<th colspan=\"3\" style=\"text-align:center\">");
        andrea_html_add(b, d->classes[c]);
        andrea_buf_puts(b, "</th>");
    }
    andrea_buf_puts(b, "</tr>\n<tr><th data-col=\"0\" data-num>layer</th><th data-col=\"1\" data-num>head</th>"
                  "<th data-col=\"2\" class=\"l\">labels</th>");
    for (int c = 0; c < d->n_classes; c++)
        andrea_buf_printf(b, "<th data-col=\"%d\" data-num class=\"score\">score</th><th data-col=\"%d\" data-num>base</th>"
                    "<th data-col=\"%d\" data-num>\xCE\x94loss</th>",
                    3 + 3 * c, 4 + 3 * c, 5 + 3 * c);
    andrea_buf_puts(b, "</tr>\n</thead>\n<tbody>\n");
    for (int l = 0; l < L; l++)
        for (int h = 0; h < H; h++) {
            andrea_buf_printf(b, "<tr data-i=\"%d\" data-classes=\" ", l * H + h);
            for (int c = 0; c < d->n_classes; c++) {
                const report_score *sc = score_at(d, d->scores, c, l, h);
                if (sc && sc->label) andrea_buf_printf(b, "%d ", c);
            }
            andrea_buf_printf(b, "\"><td data-v=\"%d\">%d</td><td data-v=\"%d\"><a href=\"heads/L%d_H%d.html\">H%d</a></td><td class=\"l\">",
                        l, l, h, l, h, h);
            int first = 1;
            for (int c = 0; c < d->n_classes; c++) {
                const report_score *sc = score_at(d, d->scores, c, l, h);
                if (!sc || !sc->label) continue;
                if (!first) andrea_buf_puts(b, ", ");
                andrea_html_add(b, d->classes[c]);
                /* causal 0 (docs/scores.md): a pattern_only verdict, or the mean rule without one */
                if (sc->causal == 0) andrea_buf_puts(b, sc->evidence[0] ? " (pattern only)" : " (attention-only)");
                else if (sc->evidence[0]) andrea_buf_printf(b, " (%s)", sc->evidence);
                first = 0;
            }
            andrea_buf_puts(b, "</td>");
            for (int c = 0; c < d->n_classes; c++) {
                const report_score *sc = score_at(d, d->scores, c, l, h);
                num_cell(b, sc ? sc->score : NAN, "%.3f", sc && sc->label);
                num_cell(b, sc ? sc->baseline : NAN, "%.3f", 0);
                num_cell(b, sc ? sc->ablation : NAN, "%+.3f", 0);
            }
            andrea_buf_puts(b, "</tr>\n");
        }
    andrea_buf_puts(b, "</tbody>\n</table>\n");

}

/* The overview images: score grids per class, scores against step (a series), thumbnails per suite. */
static int index_galleries(andrea_buf *b, const report_data *d, const report_earlier *e, const char *out_dir,
                           const plot_grid *thumb_grids, const plot_grid *score_grids, ae_error *err) {
    const int L = d->n_layer, H = d->n_head;
    char rel[512];
    if (d->scores && d->n_classes) {
        andrea_buf_puts(b, "<h2>Scores per class</h2>\n<div class=\"gallery\">\n");
        for (int c = 0; c < d->n_classes; c++) {
            if (score_grids[c].cell_w == 0) continue; /* not drawn: no head scored (write_overviews) */
            overview_name("scores", 'c', c, d->classes[c], rel, sizeof rel);
            andrea_buf_puts(b, "<img src=\"");
            andrea_html_add(b, rel);
            grid_attrs(b, &score_grids[c], L, H);
            andrea_buf_puts(b, "\" alt=\"scores of class ");
            andrea_html_add(b, d->classes[c]);
            andrea_buf_puts(b, "\">\n");
        }
        andrea_buf_puts(b, "</div>\n");
    }
    if (d->n_steps >= 2 && d->step_scores) {
        andrea_buf_puts(b, "<h2>Scores against training step</h2>\n<p>Run <code>");
        andrea_html_add(b, d->run_name);
        andrea_buf_printf(b, "</code>: %d checkpoints, steps", d->n_steps);
        for (int t = 0; t < d->n_steps; t++) andrea_buf_printf(b, "%s %.0f", t ? "," : "", d->steps[t]);
        andrea_buf_puts(b, ".</p>\n<div class=\"gallery\">\n");
        int n_plots = 0;
        for (int c = 0; c < d->n_classes; c++) {
            overview_name("steps", 'c', c, d->classes[c], rel, sizeof rel);
            char path[AE_PATH_MAX];
            struct stat st;
            /* a class with no labelled head at any step has no plot */
            if (join_path(path, sizeof path, out_dir, rel, err) || stat(path, &st) != 0) continue;
            andrea_buf_puts(b, "<img src=\"");
            andrea_html_add(b, rel);
            andrea_buf_puts(b, "\" alt=\"score against step, class ");
            andrea_html_add(b, d->classes[c]);
            andrea_buf_puts(b, "\">\n");
            n_plots++;
        }
        if (n_plots == 0) andrea_buf_puts(b, "<p>No head is labelled at any step of this run.</p>\n");
        andrea_buf_puts(b, "</div>\n");
    }
    andrea_buf_puts(b, "<h2>All heads, first example of each suite</h2>\n<div class=\"gallery\">\n");
    for (int s = 0; s < d->n_suites; s++) {
        if (d->suites[s].n_examples < 1 || d->suites[s].maps_of) continue; /* a twin: in its leader's grid */
        andrea_report_thumbs_name(d->suites[s].name, rel, sizeof rel);
        andrea_buf_puts(b, "<img src=\"");
        andrea_html_add(b, rel);
        grid_attrs(b, &thumb_grids[s], L, H);
        andrea_buf_puts(b, "\" alt=\"all heads, suite ");
        andrea_html_add(b, d->suites[s].name);
        for (int t = s + 1; t < d->n_suites; t++)
            if (d->suites[t].maps_of == s + 1) {
                andrea_buf_puts(b, ", ");
                andrea_html_add(b, d->suites[t].name);
            }
        andrea_buf_puts(b, "\">\n");
    }
    for (int i = 0; i < e->n; i++) { /* the kept grids of earlier runs' suites (report_kept.h) */
        const char *name = d->classes[e->cls[i]];
        if (!e->kept[i]) continue;
        andrea_report_thumbs_name(name, rel, sizeof rel);
        andrea_buf_puts(b, "<img src=\"");
        andrea_html_add(b, rel);
        if (e->drawn[i].grid.cell_w > 0) grid_attrs(b, &e->drawn[i].grid, L, H);
        andrea_buf_puts(b, "\" alt=\"all heads, suite ");
        andrea_html_add(b, name);
        andrea_buf_puts(b, " (an earlier run)\">\n");
    }
    return 0;
}

static int write_index(const report_data *d, const report_earlier *e, const char *out_dir,
                       const andrea_render_options *opt, const plot_grid *thumb_grids, const plot_grid *score_grids,
                       ae_error *err) {
    andrea_buf b;
    andrea_buf_init(&b);
    char title[512];
    snprintf(title, sizeof title, "andrea \xC2\xB7 %s", d->model);
    andrea_report_html_head(&b, title, "");
    index_meta(&b, d, opt);
    andrea_report_earlier_index_html(&b, d, e);
    if (!d->scores) andrea_buf_puts(&b, "<p class=\"note\">The catalog holds no scores for this checkpoint.</p>\n");

    andrea_buf_puts(&b, "<p>Interactive: <a href=\"explore.html\">token view</a> (click a token, colour the text by a "
                  "head's attention) \xC2\xB7 <a href=\"compare.html\">compare two heads</a>. Click a head in the "
                  "score grids and thumbnails below to open its page.</p>\n");
    index_heads(&b, d);
    if (index_galleries(&b, d, e, out_dir, thumb_grids, score_grids, err)) {
        andrea_buf_free(&b);
        return -1;
    }
    andrea_buf_puts(&b, "</div>\n<p><small>Made by andrea " ANDREA_VERSION ". Static and offline: open this file in any browser.</small></p>\n");
    andrea_buf_puts(&b, SORT_JS);
    andrea_buf_puts(&b, "<script src=\"assets/andrea.js\"></script>\n"); /* clickable grids; no data needed */
    andrea_buf_puts(&b, "</body>\n</html>\n");
    int rc = andrea_report_write_html(out_dir, "index.html", &b, err);
    andrea_buf_free(&b);
    return rc;
}

/* Head (l, h)'s page into b: its scores, the circuits fragment (NULL: none), then per suite and
 * shown example the interactive map, the PNG where one was drawn and a slot for the token list,
 * then the earlier runs' suites (e: their kept heatmaps in out_dir, or why none). The token lists
 * are drawn by andrea.js from data/meta.js, which holds them once: written into every page they
 * were ~90% of its bytes (22 examples of up to 128 tokens: ~110 KB a page, 16 MB over the 144
 * heads of an ANDREA-120M). */
static void head_page(andrea_buf *b, const report_data *d, const report_earlier *e, const char *out_dir,
                      const andrea_render_options *opt, const char *circuits, int l, int h) {
    int L = d->n_layer, H = d->n_head;
    char title[512];
    snprintf(title, sizeof title, "L%d H%d \xC2\xB7 %s", l, h, d->model);
    andrea_report_html_head(b, title, "../");
    andrea_buf_puts(b, "<nav><a href=\"../index.html\">\xE2\x86\x90 all heads</a>");
    int prev = l * H + h - 1, next = l * H + h + 1;
    if (prev >= 0) andrea_buf_printf(b, "<a href=\"L%d_H%d.html\">previous: L%d H%d</a>", prev / H, prev % H, prev / H, prev % H);
    if (next < L * H) andrea_buf_printf(b, "<a href=\"L%d_H%d.html\">next: L%d H%d</a>", next / H, next % H, next / H, next % H);
    int other = next < L * H ? next : (prev >= 0 ? prev : 0);
    andrea_buf_printf(b, "<a href=\"../explore.html#l=%d&amp;h=%d\">token view</a><a href=\"../compare.html#a=%d.%d&amp;b=%d.%d\">"
                    "compare with another head</a>", l, h, l, h, other / H, other % H);
    andrea_buf_printf(b, "</nav>\n<h1>Layer %d, head %d</h1>\n<p>", l, h);
    andrea_html_add(b, d->model);
    andrea_buf_puts(b, " \xC2\xB7 <code>");
    andrea_html_add(b, d->ckpt_path);
    andrea_buf_puts(b, "</code></p>\n<table>\n<tr><th class=\"l\">class</th><th>score</th><th>baseline</th><th>control</th>"
                  "<th>\xCE\x94loss (ablation)</th><th>labelled</th></tr>\n");
    for (int c = 0; c < d->n_classes; c++) {
        const report_score *sc = score_at(d, d->scores, c, l, h);
        andrea_buf_puts(b, "<tr><td class=\"l\">");
        andrea_html_add(b, d->classes[c]);
        andrea_buf_puts(b, "</td>");
        num_cell(b, sc ? sc->score : NAN, "%.3f", sc && sc->label);
        num_cell(b, sc ? sc->baseline : NAN, "%.3f", 0);
        num_cell(b, sc ? sc->control : NAN, "%.3f", 0);
        num_cell(b, sc ? sc->ablation : NAN, "%+.3f", 0);
        /* the verdict in words (docs/scores.md, Causal evidence), with the method that measured it */
        const char *why = !sc || !sc->label || !sc->evidence[0]        ? ""
                          : !strcmp(sc->evidence, "necessary")          ? " \xC2\xB7 necessary: removing it alone hurts"
                          : !strcmp(sc->evidence, "redundant")          ? " \xC2\xB7 redundant: backed up by its class's other heads"
                                                                         : " \xC2\xB7 pattern only: it attends like the class, but "
                                                                           "removing it, alone or with the class's other heads, "
                                                                           "hurts no more than removing other heads";
        andrea_buf_printf(b, "<td class=\"l\">%s%s%s%s%s</td></tr>\n", sc && sc->label ? "yes" : "", why,
                          why[0] && sc->ablation_method[0] ? " (" : "", why[0] ? sc->ablation_method : "",
                          why[0] && sc->ablation_method[0] ? " ablation)" : "");
    }
    andrea_buf_puts(b, "</table>\n");
    /* Extra sections about this head go here, between the scores and the maps, in this order. */
    if (circuits) andrea_buf_puts(b, circuits); /* top sources/destinations */
    const report_interactive_options io = interactive_options(opt);
    andrea_buf_printf(b, "<p class=\"precision\">%s%s The PNGs are drawn from %s (maps as %s). Hover a map for values; "
                      "the wheel, a drag or the buttons zoom and pan; cyan-on-black frames are probe targets.</p>\n",
                      REPORT_PRECISION_NOTE, andrea_report_any_summarised(d, &io) ? " " REPORT_SUMMARY_NOTE : "",
                      d->from_dump ? "the dump's own values" : "the forward's maps", d->maps_dtype);
    for (int s = 0; s < d->n_suites; s++) {
        const report_suite *su = &d->suites[s];
        andrea_buf_puts(b, "<h2>");
        andrea_html_add(b, su->name);
        andrea_buf_printf(b, "</h2>\n<p>%d of %d examples shown.</p>\n", su->n_examples, su->n_seq);
        int any_png = 0;
        for (int e = 0; e < su->n_examples; e++) any_png |= head_png(d, opt, l, h, e);
        /* No PNG to link: one placeholder that andrea.js turns into the figures below (their
         * markup, written out for the 22 examples of a page, was ~70% of its bytes: 19 MB over
         * the 1200 heads of GPT-2-XL's shape). */
        if (!any_png && su->n_examples > 0) {
            andrea_buf_printf(b, "<div class=\"ex-list\" data-l=\"%d\" data-h=\"%d\" data-s=\"%d\" data-n=\"%d\"></div>\n", l, h,
                              s, su->n_examples);
            continue;
        }
        for (int e = 0; e < su->n_examples; e++) {
            char rel[512];
            map_name(d, l, h, s, e, rel, sizeof rel);
            /* the interactive map (andrea.js), then the static PNG: it links to itself, so a page
             * narrower than the image scales it down and the link shows it at full size */
            andrea_buf_printf(b, "<figure><div class=\"hm-slot\" data-l=\"%d\" data-h=\"%d\" data-s=\"%d\" data-e=\"%d\"></div>\n"
                            "<div><a href=\"../explore.html#l=%d&amp;h=%d&amp;s=%d&amp;e=%d\">token view of this example</a>",
                        l, h, s, e, l, h, s, e);
            if (head_png(d, opt, l, h, e)) { /* --report-maps: the examples that have a PNG */
                andrea_buf_puts(b, " \xC2\xB7 <details style=\"display:inline\"><summary>static image (PNG)</summary><a href=\"../");
                andrea_html_add(b, rel);
                /* lazy: a PNG loads when its details are opened, so the page opens at once */
                andrea_buf_puts(b, "\"><img loading=\"lazy\" src=\"../");
                andrea_html_add(b, rel);
                andrea_buf_printf(b, "\" alt=\"L%d H%d, suite ", l, h);
                andrea_html_add(b, su->name);
                andrea_buf_printf(b, ", example %d\"></a></details>", e);
            }
            /* the token list: open for the first two examples; closed details beyond are filled
             * when opened (laying out thousands of token spans would double the time a page of 32
             * examples takes to open) */
            andrea_buf_printf(b, "</div><figcaption class=\"toks\"><details%s><summary>example %d, %d tokens</summary>"
                                 "<span class=\"tok-slot\" data-s=\"%d\" data-e=\"%d\"></span></details></figcaption></figure>\n",
                              e < 2 ? " open" : "", e, su->n_tokens[e], s, e);
        }
    }
    andrea_report_earlier_head_html(b, d, e, out_dir, l, h);
    andrea_report_html_scripts(b, "../", l, h);
    andrea_buf_puts(b, "</body>\n</html>\n");
}

/* Every head's page, built on OpenMP threads (a page's bytes do not depend on the thread); the
 * circuits' links of all of them from one read of the catalog (a catalog that cannot be read:
 * pages without the section, as andrea_circuits_head_html says); files written one at a time. */
static int write_head_pages(const report_data *d, const report_earlier *e, const char *out_dir,
                            const andrea_render_options *opt, ae_error *err) {
    ae_error cerr;
    andrea_circuit_reader *cr = andrea_circuit_reader_open(d->db_path, d->sha256, &cerr);
    const int LH = d->n_layer * d->n_head;
    int failed = 0;
#pragma omp parallel
    {
        ae_error me = {{0}};
        int rc = 0;
#pragma omp for schedule(dynamic, 1)
        for (int i = 0; i < LH; i++) {
            int stop;
#pragma omp atomic read
            stop = failed;
            if (rc || stop) continue;
            if (andrea_interrupted) {
                rc = andrea_fail(&me, "%s: interrupted", out_dir);
                continue;
            }
            const int l = i / d->n_head, h = i % d->n_head;
            char *circuits = andrea_circuits_head_html(cr, l, h), rel[64]; /* the reader is read-only: any thread */
            andrea_buf b;
            andrea_buf_init(&b);
            head_page(&b, d, e, out_dir, opt, circuits, l, h);
            free(circuits);
            snprintf(rel, sizeof rel, "heads/L%d_H%d.html", l, h);
#pragma omp critical(report_files)
            rc = andrea_report_write_html(out_dir, rel, &b, &me);
            andrea_buf_free(&b);
        }
        if (rc)
#pragma omp critical(report_err)
        {
            if (!failed) *err = me;
#pragma omp atomic write
            failed = 1;
        }
    }
    andrea_circuit_reader_close(cr);
    return failed ? -1 : 0;
}

/* Adds the time since *t to stage i of st (NULL: not measured) and restarts the clock. */
static void stage_done(double *st, int i, double *t) {
    const double now = andrea_now_seconds();
    if (st) st[i] += now - *t;
    *t = now;
}

static int write_report_held(const report_data *d, const char *out_dir, const andrea_render_options *opt, ae_error *err);

int andrea_report_write(const report_data *d, const char *out_dir, const andrea_render_options *opt, ae_error *err) {
    if (andrea_report_mkdirs(out_dir, err)) return -1;
    const int lock = andrea_out_folder_lock(out_dir, NULL, opt->quiet); /* one report writer of the folder at a time */
    const int rc = write_report_held(d, out_dir, opt, err);
    andrea_out_folder_unlock(lock);
    return rc;
}

/* The report into out_dir, whose lock this process holds. */
static int write_report_held(const report_data *d, const char *out_dir, const andrea_render_options *opt, ae_error *err) {
    char dir[AE_PATH_MAX];
    report_earlier e;
    /* checked again now that the folder is this writer's: a `show` page, series page or someone's
     * index.html written there while it waited would be replaced (render's check before its work
     * only spares that work) */
    if (andrea_out_folder_check(out_dir, OUT_FOLDER_REPORT, err)) return -1;
    /* the earlier suites still current in the catalog keep their images (report_kept.h) */
    if (andrea_report_earlier_find(d, out_dir, &e, err)) return -1;
    /* where each grid image put its heads, for the index's clickable grids */
    plot_grid *thumb_grids = calloc((size_t)d->n_suites + 1, sizeof *thumb_grids);
    plot_grid *score_grids = calloc((size_t)d->n_classes + 1, sizeof *score_grids);
    int rc = -1;
    if (!thumb_grids || !score_grids) {
        andrea_fail(err, "%s: out of memory", out_dir);
        goto out;
    }
    if (andrea_out_folder_clear(out_dir, andrea_report_kept_file, &e, err)) goto out;
    const report_interactive_options io = interactive_options(opt);
    if (andrea_report_write_mark(d, out_dir, &io, err)) goto out;
    if (join_path(dir, sizeof dir, out_dir, "heads", err) || andrea_report_mkdirs(dir, err)) goto out;
    if (join_path(dir, sizeof dir, out_dir, "overview", err) || andrea_report_mkdirs(dir, err)) goto out;
    double *st = opt ? opt->stage_seconds : NULL, t = andrea_now_seconds();
    if (write_maps(d, out_dir, opt, thumb_grids, err)) goto out;
    stage_done(st, 0, &t);
    if (write_overviews(d, out_dir, score_grids, err)) goto out;
    stage_done(st, 1, &t);
    if (andrea_report_write_interactive(d, out_dir, &io, err)) goto out;
    stage_done(st, 2, &t);
    if (write_head_pages(d, &e, out_dir, opt, err)) goto out;
    stage_done(st, 3, &t);
    /* the list of what drew the images, then the index last: its presence means the report is complete */
    if (andrea_report_images_write(d, &e, thumb_grids, out_dir, err)) goto out;
    rc = write_index(d, &e, out_dir, opt, thumb_grids, score_grids, err);
    stage_done(st, 4, &t);
out:
    andrea_report_earlier_free(&e);
    free(thumb_grids);
    free(score_grids);
    return rc;
}

int andrea_report_default_examples(void) { return DEFAULT_EXAMPLES; }

int andrea_render_examples(const andrea_render_options *opt) {
    int n = opt && opt->examples_per_suite > 0 ? opt->examples_per_suite : DEFAULT_EXAMPLES;
    return opt && opt->maps_per_suite > n ? opt->maps_per_suite : n;
}

int andrea_render_png_wanted(const andrea_render_options *opt, int e) {
    int m = opt ? opt->maps_per_suite : 0;
    if (m == ANDREA_REPORT_MAPS_ALL) return 1;
    if (m == 0 || m == ANDREA_REPORT_MAPS_LABELLED) m = ANDREA_REPORT_MAPS_DEFAULT;
    return e < m; /* ANDREA_REPORT_MAPS_NONE: never */
}
