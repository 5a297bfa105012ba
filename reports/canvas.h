/* canvas.h — an RGB raster to draw report images on, and its PNG writer.
 *
 * Job: fill rectangles, draw anti-aliased text from the committed font (font.h), horizontal or
 * rotated a quarter turn, draw lines, and write the raster as an 8-bit RGB PNG (filter "none").
 * The report's encoder (andrea_canvas_encode_png) is png_rows.h: one deflate block whose matches
 * are the row above and the pixel before (report images are cells whose rows repeat), with
 * Huffman codes built for the image. Canvases whose rows mostly do not repeat the row above
 * (thumbnail and score grids), canvases wider than 10922 px (the row above lies beyond deflate's
 * window) and andrea_canvas_encode_png_with go through libpng and zlib.
 * Report images hold 500-1100 colours (the colour bar alone has 256), so no palette PNG.
 * Invariants: drawing clips to the canvas (nothing writes outside the pixel buffer); the PNG bytes
 * depend only on the pixels (no time chunk, fixed encoding), so the same drawing gives the same
 * file, and it decodes to exactly those pixels (tests/test_report.c decodes with libpng); the PNG
 * is written under a temporary name and renamed (atomic_file.h).
 * Failure contract: andrea_canvas_new returns NULL and andrea_canvas_write_png -1, both with "FILE: problem"
 * (or "canvas: problem"); a failed write leaves no file under the final name.
 */
#ifndef ANDREA_REPORT_CANVAS_H
#define ANDREA_REPORT_CANVAS_H

#include <stdint.h>

#include "../common/error.h"
#include "font.h"

typedef struct {
    int w, h;
    uint8_t *px; /* [h, w, 3] row-major RGB */
} canvas;

typedef struct {
    uint8_t r, g, b;
} rgb;

#define CANVAS_MAX_SIDE 16384 /* refuse absurd sizes before allocating */

canvas *andrea_canvas_new(int w, int h, rgb background, ae_error *err);
void andrea_canvas_free(canvas *c);

void andrea_canvas_fill(canvas *c, int x, int y, int w, int h, rgb col);
/* n pixels px[0..n) into row y from column x (clipped to the canvas). */
void andrea_canvas_pixels(canvas *c, int x, int y, const rgb *px, int n);
/* One-pixel rectangle outline of thickness t inside (x, y, w, h). */
void andrea_canvas_rect(canvas *c, int x, int y, int w, int h, int t, rgb col);
/* Line from (x0, y0) to (x1, y1), width about `width` pixels, anti-aliased. */
void andrea_canvas_line(canvas *c, double x0, double y0, double x1, double y1, double width, rgb col);

/* Text in UTF-8 (a code point the font lacks is drawn as '?'). (x, y) is the pen position on the
 * baseline. Returns the width in pixels. */
int andrea_canvas_text(canvas *c, const report_font *f, int x, int y, const char *utf8, rgb col);
/* Text turned a quarter turn counter-clockwise (reads bottom to top); (x, y) is the baseline
 * position at the start of the text, which then runs upward. Returns the length in pixels. */
int andrea_canvas_text_up(canvas *c, const report_font *f, int x, int y, const char *utf8, rgb col);
/* Width in pixels that andrea_canvas_text would take. */
int andrea_text_width(const report_font *f, const char *utf8);

/* How the PNG is compressed: zlib level (0..9), libpng filter mask (PNG_FILTER_NONE, _SUB, _UP,
 * ... or several: libpng then picks one per row) and zlib strategy (Z_DEFAULT_STRATEGY, Z_RLE,
 * ...). The bytes depend only on the pixels and these settings. */
typedef struct {
    int level, filters, strategy;
} canvas_png_settings;

/* libpng's settings for canvases too wide for the row-match encoder (canvas.c says why: measured
 * by bench/bench_report_png.c). */
canvas_png_settings andrea_canvas_png_default(void);

/* Encodes the canvas as an RGB PNG into a malloc'd buffer (*out, *out_len; caller frees): the
 * row-match encoder above, or libpng with andrea_canvas_png_default (above). Thread-safe:
 * touches nothing shared. */
int andrea_canvas_encode_png(const canvas *c, unsigned char **out, size_t *out_len, ae_error *err);
int andrea_canvas_encode_png_with(const canvas *c, const canvas_png_settings *s, unsigned char **out, size_t *out_len,
                           ae_error *err);
/* Writes the canvas as an RGB PNG to path (temporary name, then rename). */
int andrea_canvas_write_png(const canvas *c, const char *path, ae_error *err);

#endif
