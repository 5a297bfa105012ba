/* bench_report_png.c — what a report heatmap costs to draw and to PNG-encode, per libpng/zlib
 * setting (one thread, no files): picks reports/canvas.c's defaults. Not a test.
 *
 *   bench_report_png [T] [reps]     (T = positions of the map, default 128; reps default 5)
 *
 * The map is synthetic but shaped like real attention: each query row is a softmax over its keys
 * of N(0, 1.5) logits plus a previous-token and a first-token bonus, so cells take many colours
 * of the scale (a flat map would compress far better than a real one); labels are short words.
 * Prints, per setting: encode ms (median of reps, thread CPU time), bytes; and the drawing time;
 * then the thumbnail grid of a 48 x 25-head model (GPT-2-XL's shape) drawn from that map, and
 * its encoding by libpng (zlib level 3) and by the report's encoder (one run each).
 */
#include <math.h>
#include <png.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zlib.h>

#include "../reports/canvas.h"
#include "../reports/plots.h"

/* CPU time of this thread: on a shared machine, wall time would measure the neighbours. */
static double cpu_seconds(void) {
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static double gauss(unsigned *s) {
    double u = 0;
    for (int i = 0; i < 12; i++) {
        *s = *s * 1103515245u + 12345u;
        u += ((*s >> 8) & 0xFFFF) / 65536.0;
    }
    return u - 6.0;
}

static int cmp_d(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv) {
    int T = argc > 1 ? atoi(argv[1]) : 128, reps = argc > 2 ? atoi(argv[2]) : 5;
    if (T < 2 || T > 1024 || reps < 1 || reps > 100) {
        fprintf(stderr, "usage: bench_report_png [T 2..1024] [reps 1..100]\n");
        return 2;
    }
    float *map = calloc((size_t)T * T, sizeof *map);
    unsigned char *tgt = calloc((size_t)T * T, 1);
    char **labels = calloc((size_t)T, sizeof *labels);
    static const char *words[] = {"the", "·cat", "sat", "(", "{", "]", "·on", "mat", "⏎", "induction", "x", "12"};
    unsigned seed = 7;
    for (int q = 0; q < T; q++) {
        double mx = -1e30, sum = 0;
        float *row = map + (size_t)q * T;
        for (int k = 0; k <= q; k++) {
            row[k] = (float)(1.5 * gauss(&seed) + (k == q - 1 ? 3.0 : 0) + (k == 0 ? 2.0 : 0));
            if (row[k] > mx) mx = row[k];
        }
        for (int k = 0; k <= q; k++) sum += (row[k] = (float)exp(row[k] - mx));
        for (int k = 0; k <= q; k++) row[k] = (float)(row[k] / sum);
        if (q > 0) tgt[(size_t)q * T + q - 1] = 1;
        labels[q] = (char *)words[q % 12];
    }
    heatmap_spec hs = {map, T, T, (const char *const *)labels, tgt, "L3 H5 · prev_token · example 0 (128 tokens)",
                       "andrea-bundled.bin · class prev_token: score 0.496 (baseline 0.035, Δloss +0.120) · LABELLED"};
    ae_error err = {{0}};
    double t0 = cpu_seconds();
    canvas *c = NULL;
    for (int r = 0; r < reps; r++) {
        andrea_canvas_free(c);
        if (!(c = andrea_draw_heatmap(&hs, &err))) {
            fprintf(stderr, "%s\n", err.msg);
            return 1;
        }
    }
    double t_draw = (cpu_seconds() - t0) / reps;
    printf("heatmap T=%d: %d x %d px, draw %.1f ms\n", T, c->w, c->h, t_draw * 1e3);
    struct {
        const char *name;
        canvas_png_settings s;
    } cases[] = {
        {"none  z3 default (before)", {3, PNG_FILTER_NONE, Z_DEFAULT_STRATEGY}},
        {"none  z0 (stored)", {0, PNG_FILTER_NONE, Z_DEFAULT_STRATEGY}},
        {"none  z1 default", {1, PNG_FILTER_NONE, Z_DEFAULT_STRATEGY}},
        {"none  z2 default", {2, PNG_FILTER_NONE, Z_DEFAULT_STRATEGY}},
        {"none  z4 default", {4, PNG_FILTER_NONE, Z_DEFAULT_STRATEGY}},
        {"none  z6 default", {6, PNG_FILTER_NONE, Z_DEFAULT_STRATEGY}},
        {"none  z1 rle", {1, PNG_FILTER_NONE, Z_RLE}},
        {"sub   z1 rle", {1, PNG_FILTER_SUB, Z_RLE}},
        {"up    z1 rle", {1, PNG_FILTER_UP, Z_RLE}},
        {"sub|up z1 rle", {1, PNG_FILTER_SUB | PNG_FILTER_UP, Z_RLE}},
        {"sub|up z1 default", {1, PNG_FILTER_SUB | PNG_FILTER_UP, Z_DEFAULT_STRATEGY}},
        {"sub|up z3 default", {3, PNG_FILTER_SUB | PNG_FILTER_UP, Z_DEFAULT_STRATEGY}},
        {"sub|up z6 default", {6, PNG_FILTER_SUB | PNG_FILTER_UP, Z_DEFAULT_STRATEGY}},
        {"sub|up z9 default", {9, PNG_FILTER_SUB | PNG_FILTER_UP, Z_DEFAULT_STRATEGY}},
        {"sub|up z1 filtered", {1, PNG_FILTER_SUB | PNG_FILTER_UP, Z_FILTERED}},
        {"all   z6 default", {6, PNG_ALL_FILTERS, Z_DEFAULT_STRATEGY}},
        {"paeth z3 default", {3, PNG_FILTER_PAETH, Z_DEFAULT_STRATEGY}},
    };
    for (size_t i = 0; i <= sizeof cases / sizeof cases[0]; i++) {
        const int rowmatch = i == sizeof cases / sizeof cases[0]; /* last: the report's encoder */
        double ts[100];
        size_t len = 0;
        for (int r = 0; r < reps; r++) {
            unsigned char *buf = NULL;
            double a = cpu_seconds();
            if (rowmatch ? andrea_canvas_encode_png(c, &buf, &len, &err)
                         : andrea_canvas_encode_png_with(c, &cases[i].s, &buf, &len, &err)) {
                fprintf(stderr, "%s\n", err.msg);
                return 1;
            }
            ts[r] = cpu_seconds() - a;
            free(buf);
        }
        qsort(ts, (size_t)reps, sizeof ts[0], cmp_d);
        printf("  %-26s encode %6.1f ms  %8zu bytes\n", rowmatch ? "row/run matches (report)" : cases[i].name,
               ts[reps / 2] * 1e3, len);
    }
    andrea_canvas_free(c);
    /* the thumbnail grid of a GPT-2-XL-shaped model (48 x 25 heads), every head this map */
    const int TL = 48, TH = 25, S = T < HEATMAP_MAX_TOKENS ? T : HEATMAP_MAX_TOKENS;
    float *maps = malloc((size_t)TL * TH * S * S * sizeof *maps);
    for (int i = 0; i < TL * TH; i++)
        for (int q = 0; q < S; q++) memcpy(maps + ((size_t)i * S + q) * S, map + (size_t)q * T, (size_t)S * sizeof *maps);
    thumbs_spec ts = {TL, TH, maps, S, S, "all heads \xC2\xB7 prev_token \xC2\xB7 example 0", "bench", NULL};
    t0 = cpu_seconds();
    if (!(c = andrea_draw_thumbs(&ts, &err))) {
        fprintf(stderr, "%s\n", err.msg);
        return 1;
    }
    printf("thumbnails %d x %d heads: %d x %d px, draw %.1f ms\n", TL, TH, c->w, c->h, (cpu_seconds() - t0) * 1e3);
    for (int k = 0; k < 2; k++) {
        unsigned char *buf = NULL;
        size_t len = 0;
        canvas_png_settings z3 = andrea_canvas_png_default();
        double a = cpu_seconds();
        if (k ? andrea_canvas_encode_png(c, &buf, &len, &err) : andrea_canvas_encode_png_with(c, &z3, &buf, &len, &err)) {
            fprintf(stderr, "%s\n", err.msg);
            return 1;
        }
        printf("  %-26s encode %6.1f ms  %8zu bytes\n", k ? "row/run matches (report)" : "none  z3 default (before)",
               (cpu_seconds() - a) * 1e3, len);
        free(buf);
    }
    andrea_canvas_free(c);
    free(maps);
    free(map);
    free(tgt);
    free(labels);
    return 0;
}
