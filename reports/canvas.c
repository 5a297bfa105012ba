/* canvas.c — raster drawing and the libpng writer (see canvas.h). */
#include "canvas.h"

#include <errno.h>
#include <math.h>
#include <png.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "../common/atomic_file.h"
#include "../common/buf.h"
#include "../common/checked_size.h"
#include "png_bands.h"
#include "png_rows.h"

canvas *andrea_canvas_new(int w, int h, rgb bg, ae_error *err) {
    size_t n;
    if (w <= 0 || h <= 0 || w > CANVAS_MAX_SIDE || h > CANVAS_MAX_SIDE ||
        ae_mul((size_t)w, (size_t)h, &n) || ae_mul(n, 3, &n)) {
        andrea_fail(err, "canvas: image size %d x %d is out of range (1..%d per side)", w, h, CANVAS_MAX_SIDE);
        return NULL;
    }
    canvas *c = malloc(sizeof *c);
    uint8_t *px = malloc(n);
    if (!c || !px) {
        free(c);
        free(px);
        andrea_fail(err, "canvas: out of memory for a %d x %d image", w, h);
        return NULL;
    }
    c->w = w;
    c->h = h;
    c->px = px;
    andrea_canvas_fill(c, 0, 0, w, h, bg);
    return c;
}

void andrea_canvas_free(canvas *c) {
    if (!c) return;
    free(c->px);
    free(c);
}

static inline void put(canvas *c, int x, int y, rgb col) {
    if (x < 0 || y < 0 || x >= c->w || y >= c->h) return;
    uint8_t *p = c->px + ((size_t)y * (size_t)c->w + (size_t)x) * 3;
    p[0] = col.r;
    p[1] = col.g;
    p[2] = col.b;
}

/* Blends col over the pixel with coverage a in 0..255 (integer arithmetic: deterministic). */
static inline void blend(canvas *c, int x, int y, rgb col, unsigned a) {
    if (x < 0 || y < 0 || x >= c->w || y >= c->h || a == 0) return;
    uint8_t *p = c->px + ((size_t)y * (size_t)c->w + (size_t)x) * 3;
    p[0] = (uint8_t)((p[0] * (255u - a) + col.r * a + 127u) / 255u);
    p[1] = (uint8_t)((p[1] * (255u - a) + col.g * a + 127u) / 255u);
    p[2] = (uint8_t)((p[2] * (255u - a) + col.b * a + 127u) / 255u);
}

void andrea_canvas_fill(canvas *c, int x, int y, int w, int h, rgb col) {
    int x0 = x < 0 ? 0 : x, y0 = y < 0 ? 0 : y;
    int x1 = x + w > c->w ? c->w : x + w, y1 = y + h > c->h ? c->h : y + h;
    if (x0 >= x1 || y0 >= y1) return;
    /* the first row pixel by pixel, the others copied from it (heatmap cells are most of a
     * report's drawing time) */
    const size_t stride = (size_t)c->w * 3, len = (size_t)(x1 - x0) * 3;
    uint8_t *row = c->px + (size_t)y0 * stride + (size_t)x0 * 3;
    if (col.r == col.g && col.g == col.b) memset(row, col.r, len);
    else
        for (int xx = x0; xx < x1; xx++) put(c, xx, y0, col);
    for (int yy = y0 + 1; yy < y1; yy++) memcpy(c->px + (size_t)yy * stride + (size_t)x0 * 3, row, len);
}

void andrea_canvas_pixels(canvas *c, int x, int y, const rgb *px, int n) {
    if (y < 0 || y >= c->h) return;
    int k0 = x < 0 ? -x : 0, k1 = x + n > c->w ? c->w - x : n;
    uint8_t *p = c->px + ((size_t)y * (size_t)c->w + (size_t)(x + k0)) * 3;
    for (int k = k0; k < k1; k++, p += 3) {
        p[0] = px[k].r;
        p[1] = px[k].g;
        p[2] = px[k].b;
    }
}

void andrea_canvas_rect(canvas *c, int x, int y, int w, int h, int t, rgb col) {
    andrea_canvas_fill(c, x, y, w, t, col);
    andrea_canvas_fill(c, x, y + h - t, w, t, col);
    andrea_canvas_fill(c, x, y, t, h, col);
    andrea_canvas_fill(c, x + w - t, y, t, h, col);
}

void andrea_canvas_line(canvas *c, double x0, double y0, double x1, double y1, double width, rgb col) {
    /* Coverage from the distance of each pixel centre to the segment, over its bounding box:
     * simple, and exact enough for plot lines of a few pixels. */
    double r = width / 2.0;
    int bx0 = (int)floor(fmin(x0, x1) - r - 1), bx1 = (int)ceil(fmax(x0, x1) + r + 1);
    int by0 = (int)floor(fmin(y0, y1) - r - 1), by1 = (int)ceil(fmax(y0, y1) + r + 1);
    double dx = x1 - x0, dy = y1 - y0, len2 = dx * dx + dy * dy;
    for (int y = by0; y <= by1; y++) {
        for (int x = bx0; x <= bx1; x++) {
            double px = x + 0.5, py = y + 0.5;
            double t = len2 > 0 ? ((px - x0) * dx + (py - y0) * dy) / len2 : 0;
            t = t < 0 ? 0 : t > 1 ? 1 : t;
            double ex = x0 + t * dx - px, ey = y0 + t * dy - py;
            double d = sqrt(ex * ex + ey * ey);
            double cov = r + 0.5 - d;
            if (cov <= 0) continue;
            if (cov > 1) cov = 1;
            blend(c, x, y, col, (unsigned)lround(cov * 255.0));
        }
    }
}

const report_glyph *andrea_report_font_glyph(const report_font *f, unsigned cp) {
    int lo = 0, hi = f->n_glyphs - 1;
    while (lo <= hi) {
        int mid = (lo + hi) / 2;
        if (f->glyphs[mid].cp == cp) return &f->glyphs[mid];
        if (f->glyphs[mid].cp < cp) lo = mid + 1;
        else hi = mid - 1;
    }
    return NULL;
}

/* Next code point of a UTF-8 string; a malformed byte reads as U+FFFD and advances one byte. */
static unsigned next_cp(const char **sp) {
    const unsigned char *s = (const unsigned char *)*sp;
    unsigned c = s[0];
    int n = c < 0x80 ? 0 : (c & 0xE0) == 0xC0 ? 1 : (c & 0xF0) == 0xE0 ? 2 : (c & 0xF8) == 0xF0 ? 3 : -1;
    if (n < 0) {
        *sp += 1;
        return 0xFFFD;
    }
    unsigned cp = n == 0 ? c : c & (0x3Fu >> n);
    for (int i = 1; i <= n; i++) {
        if ((s[i] & 0xC0) != 0x80) {
            *sp += 1;
            return 0xFFFD;
        }
        cp = (cp << 6) | (s[i] & 0x3Fu);
    }
    *sp += n + 1;
    return cp;
}

static const report_glyph *glyph_or_q(const report_font *f, unsigned cp) {
    const report_glyph *g = andrea_report_font_glyph(f, cp);
    return g ? g : andrea_report_font_glyph(f, '?');
}

int andrea_text_width(const report_font *f, const char *s) {
    int n = 0;
    while (*s) {
        next_cp(&s);
        n++;
    }
    return n * f->advance;
}

int andrea_canvas_text(canvas *c, const report_font *f, int x, int y, const char *s, rgb col) {
    int pen = x;
    while (*s) {
        const report_glyph *g = glyph_or_q(f, next_cp(&s));
        const unsigned char *b = f->bitmap + g->off;
        for (int gy = 0; gy < g->h; gy++)
            for (int gx = 0; gx < g->w; gx++)
                blend(c, pen + g->left + gx, y - g->top + gy, col, b[gy * g->w + gx]);
        pen += f->advance;
    }
    return pen - x;
}

int andrea_canvas_text_up(canvas *c, const report_font *f, int x, int y, const char *s, rgb col) {
    /* Rotating (gx, gy) a quarter turn counter-clockwise about the pen: glyph column gx goes up
     * (y decreases), glyph row gy goes right (x increases). */
    int pen = y;
    while (*s) {
        const report_glyph *g = glyph_or_q(f, next_cp(&s));
        const unsigned char *b = f->bitmap + g->off;
        for (int gy = 0; gy < g->h; gy++)
            for (int gx = 0; gx < g->w; gx++)
                blend(c, x - g->top + gy, pen - g->left - gx, col, b[gy * g->w + gx]);
        pen -= f->advance;
    }
    return y - pen;
}

/* ---- PNG ---- */

/* libpng reports errors through longjmp; the message is kept here so the caller can name it.
 * The encoded bytes grow in a malloc'd buffer (encoding runs on worker threads; only the file
 * write, which touches atomic_file's registry, runs on one thread). */
typedef struct {
    jmp_buf jmp;
    char msg[256];
    unsigned char *buf;
    size_t len, cap;
} png_ctx;

static void on_png_error(png_structp png, png_const_charp msg) {
    png_ctx *ctx = png_get_error_ptr(png);
    snprintf(ctx->msg, sizeof ctx->msg, "%s", msg);
    longjmp(ctx->jmp, 1);
}

static void on_png_warning(png_structp png, png_const_charp msg) {
    (void)png;
    (void)msg; /* warnings do not change the bytes we asked for; nothing to report */
}

static void on_png_write(png_structp png, png_bytep data, size_t n) {
    png_ctx *ctx = png_get_io_ptr(png);
    size_t need;
    if (ae_add(ctx->len, n, &need)) png_error(png, "encoded image too large");
    if (andrea_grow(&ctx->buf, &ctx->cap, need, 1, 65536)) png_error(png, "out of memory");
    memcpy(ctx->buf + ctx->len, data, n);
    ctx->len = need;
}

static void on_png_flush(png_structp png) { (void)png; }

/* Filter "none" at zlib level 3: report images are flat cells whose rows repeat, which deflate
 * matches one row back. bench/bench_report_png on a 1889 x 1851 heatmap (128 positions): 24 ms
 * for 232 kB; level 2 23 ms for 248 kB; level 6 48 ms for 157 kB; Sub or Up chosen per row 38 ms
 * for 193-230 kB; all filters at level 6 88 ms for 140 kB; stored (level 0) already 9.6 ms. The
 * report's time is this encoding, so the fastest setting stays (bench/RESULTS.md). */
canvas_png_settings andrea_canvas_png_default(void) {
    canvas_png_settings s = {3, PNG_FILTER_NONE, Z_DEFAULT_STRATEGY};
    return s;
}

int andrea_canvas_encode_png(const canvas *c, unsigned char **out, size_t *out_len, ae_error *err) {
    if (c->w <= PNG_ROWS_MAX_W) {
        int rc = andrea_png_rows_encode(c->px, c->w, c->h, out, out_len, err);
        if (rc <= 0) return rc; /* 1: rows that do not repeat, zlib does better */
    }
    canvas_png_settings s = andrea_canvas_png_default();
    /* large images (thumbnail grids of big models) in bands on every idle thread; the bands'
     * settings are andrea_canvas_png_default's */
    if ((size_t)c->w * 3 * (size_t)c->h >= 2 * PNG_BANDS_BYTES)
        return andrea_png_bands_encode(c->px, c->w, c->h, s.level, out, out_len, err);
    return andrea_canvas_encode_png_with(c, &s, out, out_len, err);
}

int andrea_canvas_encode_png_with(const canvas *c, const canvas_png_settings *s, unsigned char **out, size_t *out_len,
                           ae_error *err) {
    /* The context lives on the heap and the libpng pointers are volatile: locals changed between
     * setjmp and longjmp would be indeterminate after the jump. */
    png_ctx *ctx = calloc(1, sizeof *ctx);
    if (!ctx) return andrea_fail(err, "out of memory encoding a PNG");
    png_structp volatile png = png_create_write_struct(PNG_LIBPNG_VER_STRING, ctx, on_png_error, on_png_warning);
    png_infop volatile info = png ? png_create_info_struct(png) : NULL;
    if (!png || !info) {
        if (png) png_destroy_write_struct((png_structpp)&png, NULL);
        free(ctx);
        return andrea_fail(err, "png_create_write_struct failed (out of memory)");
    }
    if (setjmp(ctx->jmp)) {
        png_destroy_write_struct((png_structpp)&png, (png_infopp)&info);
        andrea_fail(err, "libpng: %s", ctx->msg);
        free(ctx->buf);
        free(ctx);
        return -1;
    }
    png_set_write_fn(png, ctx, on_png_write, on_png_flush);
    /* Fixed settings (andrea_canvas_png_default, above) so the same pixels give the same bytes, and no
     * tIME chunk. */
    png_set_compression_level(png, s->level);
    png_set_compression_strategy(png, s->strategy);
    png_set_filter(png, PNG_FILTER_TYPE_BASE, s->filters);
    png_set_IHDR(png, info, (png_uint_32)c->w, (png_uint_32)c->h, 8, PNG_COLOR_TYPE_RGB, PNG_INTERLACE_NONE,
                 PNG_COMPRESSION_TYPE_BASE, PNG_FILTER_TYPE_BASE);
    png_write_info(png, info);
    for (int y = 0; y < c->h; y++) png_write_row(png, c->px + (size_t)y * (size_t)c->w * 3);
    png_write_end(png, NULL);
    png_destroy_write_struct((png_structpp)&png, (png_infopp)&info);
    *out = ctx->buf;
    *out_len = ctx->len;
    free(ctx);
    return 0;
}

int andrea_canvas_write_png(const canvas *c, const char *path, ae_error *err) {
    unsigned char *buf;
    size_t len;
    if (andrea_canvas_encode_png(c, &buf, &len, err)) return andrea_prefix(err, "%s", path);
    int rc = andrea_write_file_atomic(path, buf, len, err);
    free(buf);
    return rc;
}
