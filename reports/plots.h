/* plots.h — the report's images, drawn from data in memory (no files, no catalog).
 *
 * Job: the T × T attention heatmap of one head and example, the n_layer × n_head score grid of
 * one class, the grid of thumbnail maps of all heads for one example, and a score-against-step
 * line plot. Each returns a canvas the caller encodes (canvas.h).
 * Invariants: values are drawn on a fixed scale [0, 1] (attention probabilities and scores), so
 * colours compare across images; every text drawn fits inside the image (sizes are computed from
 * the text before drawing); maps longer than HEATMAP_MAX_TOKENS are cropped to their first
 * HEATMAP_MAX_TOKENS positions and the image says so (a causal map's first rows are complete: no
 * query in the crop attends to a key outside it). Nothing here reads global state, so images can
 * be drawn on several threads at once.
 * Failure contract: NULL with "canvas: problem" (only an impossible size or memory can fail).
 */
#ifndef ANDREA_REPORT_PLOTS_H
#define ANDREA_REPORT_PLOTS_H

#include "../common/error.h"
#include "canvas.h"

#define HEATMAP_MAX_TOKENS 128
#define LABEL_MAX_CHARS 14

typedef struct {
    const float *map;        /* [T, T] row-major, query × key, probabilities */
    int T;                   /* row stride of map */
    int n;                   /* positions in this example (<= T) */
    const char *const *labels; /* [n] display labels (andrea_token_label output), or NULL for none */
    const unsigned char *target; /* [T, T] 1 where (query, key) is a probe target, or NULL */
    const char *title;       /* line 1, large */
    const char *subtitle;    /* line 2 (may be NULL) */
} heatmap_spec;

canvas *andrea_draw_heatmap(const heatmap_spec *s, ae_error *err);

/* Where the heads sit in a grid image (score grid, thumbnails), so a page can map a click to a
 * head: head (l, h) covers x0 + h*cell_w .. + cell_w, y0 + l*cell_h .. + cell_h (pixels). */
typedef struct {
    int x0, y0, cell_w, cell_h;
} plot_grid;

typedef struct {
    int n_layer, n_head;
    const double *score;     /* [L, H]; NaN = not measured */
    const unsigned char *labelled; /* [L, H] 1 = classified as this class */
    const char *title, *subtitle;
    plot_grid *grid;         /* out, may be NULL: where the heads were drawn */
} score_grid_spec;

canvas *andrea_draw_score_grid(const score_grid_spec *s, ae_error *err);

typedef struct {
    int n_layer, n_head;
    const float *maps;       /* [L, H, T, T] */
    int T, n;                /* stride and positions shown (crop as in the heatmap) */
    const char *title, *subtitle;
    plot_grid *grid;         /* out, may be NULL: where the heads were drawn (caption included) */
} thumbs_spec;

canvas *andrea_draw_thumbs(const thumbs_spec *s, ae_error *err);
/* The positions each map of an n_layer x n_head thumbnail grid shows of maps of n positions: up to
 * HEATMAP_MAX_TOKENS, fewer where the grid would not fit one image (the crop its caller keeps). */
int andrea_thumbs_shown(int n_layer, int n_head, int n);

#define STEP_PLOT_MAX_SERIES 10

typedef struct {
    int n_series, n_points;
    const double *steps;     /* [n_points], increasing */
    const double *values;    /* [n_series, n_points]; NaN = missing */
    const char *const *names; /* [n_series] legend entries */
    const char *title, *subtitle, *y_label;
} step_plot_spec;

canvas *andrea_draw_step_plot(const step_plot_spec *s, ae_error *err);

#endif
