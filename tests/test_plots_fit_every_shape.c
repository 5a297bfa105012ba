/* test_plots_fit_every_shape.c — the grids of every head (reports/plots.h: score grids and
 * thumbnail grids) fit one image for every shape a model may have (layers and heads up to 1024):
 * a 140-layer or 1024-head model's report failed on "image size ... out of range" after its
 * scoring, its earlier report already cleared. Shapes that fitted before keep their layout
 * (captions, every position of a short map); the thumbnails' crop is what the drawing shows. */
#include <stdlib.h>

#include "../reports/plots.h"
#include "check.h"

/* Draws both grids for an L x H model with maps of n positions; checks the canvases. */
static void both_grids_fit(int L, int H, int n) {
    const size_t LH = (size_t)L * (size_t)H;
    const int S = andrea_thumbs_shown(L, H, n);
    float *maps = calloc(LH * (size_t)S * (size_t)S, sizeof *maps);
    double *score = calloc(LH, sizeof *score);
    unsigned char *labelled = calloc(LH, 1);
    CHECK(maps && score && labelled);
    if (!maps || !score || !labelled) goto out;
    for (size_t i = 0; i < LH; i++) score[i] = (double)(i % 7) / 7.0;
    labelled[LH / 2] = 1;
    plot_grid tg = {0}, sg = {0};
    ae_error err = {{0}};
    thumbs_spec ts = {L, H, maps, S, n, "all heads", "model", &tg};
    canvas *t = andrea_draw_thumbs(&ts, &err);
    CHECK_MSG(t != NULL, "%d x %d heads, %d positions: %s\n", L, H, n, err.msg);
    if (t) {
        CHECK(t->w <= CANVAS_MAX_SIDE && t->h <= CANVAS_MAX_SIDE);
        /* the clickable grid lies inside the image, a cell a head */
        CHECK(tg.x0 + H * tg.cell_w <= t->w + 1 && tg.y0 + L * tg.cell_h <= t->h);
        CHECK(tg.cell_w >= 2 && tg.cell_h >= 2);
        andrea_canvas_free(t);
    }
    score_grid_spec gs = {L, H, score, labelled, "scores", "model", &sg};
    canvas *g = andrea_draw_score_grid(&gs, &err);
    CHECK_MSG(g != NULL, "%d x %d heads: %s\n", L, H, err.msg);
    if (g) {
        CHECK(g->w <= CANVAS_MAX_SIDE && g->h <= CANVAS_MAX_SIDE);
        CHECK(sg.x0 + H * sg.cell_w <= g->w && sg.y0 + L * sg.cell_h <= g->h);
        andrea_canvas_free(g);
    }
out:
    free(maps);
    free(score);
    free(labelled);
}

static void small_models_keep_every_position(void) {
    CHECK(andrea_thumbs_shown(12, 12, 64) == 64);
    CHECK(andrea_thumbs_shown(12, 12, 300) == HEATMAP_MAX_TOKENS);
    CHECK(andrea_thumbs_shown(48, 25, 128) == 128); /* GPT-2-XL */
    CHECK(andrea_thumbs_shown(1, 1, 5) == 5);
}

static void deep_and_wide_models_are_cropped_to_fit(void) {
    const int s140 = andrea_thumbs_shown(140, 1, 128), s1024 = andrea_thumbs_shown(1024, 1024, 128);
    CHECK(s140 < 128 && s140 > 64);
    CHECK(s1024 >= 8 && s1024 < 16);
    /* the crop grows with the room, never with the example: a shorter one is never cut more */
    CHECK(andrea_thumbs_shown(140, 1, 16) == 16);
    CHECK(andrea_thumbs_shown(1024, 1024, 4) == 4);
}

int main(void) {
    small_models_keep_every_position();
    deep_and_wide_models_are_cropped_to_fit();
    both_grids_fit(12, 12, 128);
    both_grids_fit(140, 1, 16);
    both_grids_fit(1, 1024, 16);
    both_grids_fit(1024, 1, 128);
    both_grids_fit(600, 400, 8);
    both_grids_fit(1024, 1024, 4);
    return check_summary("plots_fit_every_shape");
}
