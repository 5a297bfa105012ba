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

/* ---- the report's encoder: row and run matches, fixed Huffman codes ----
 * Report images are cells of one colour whose rows repeat the row above, plus text. The zlib
 * stream here holds one deflate block with the fixed codes of RFC 1951 (3.2.6) and only two
 * match distances: the row above (1 + 3w bytes back: filter byte and row) and the pixel before
 * (3 bytes back, a run of one colour). At each position the longer of the two matches is taken
 * when it is at least 3 bytes, else one literal (greedy; no hash table, no search). Every byte
 * it reads is compared at most twice, so it encodes several times faster than zlib's level 3,
 * whose hash chains find these same matches; the bytes depend only on the pixels. Filter
 * "none". Rows up to 10922 px (the row above must lie within deflate's 32 KiB window), and only
 * for images whose rows mostly repeat (ROWMATCH_MIN_RATIO); others go through libpng and zlib
 * (andrea_canvas_png_default). */

#define ROWMATCH_MAX_W 10922 /* 1 + 3 * w <= 32768 */
/* The stream must be at most 1/20 of the pixel bytes, else zlib encodes the image. Measured on
 * report images (bytes in / bytes out, this encoder vs zlib level 3): heatmaps 29 vs 37, where
 * 12 of every 13 rows repeat the row above outside the labels; thumbnail grids 6-15 vs 14-27 and
 * score grids 9 vs 43, whose rows do not repeat (one pixel per position; a number in each cell):
 * their few files are left to zlib's search, which finds matches at any distance. */
#define ROWMATCH_MIN_RATIO 20

typedef struct {
    unsigned char *p; /* output; room for the worst case was reserved before encoding */
    size_t len;
    uint64_t acc; /* bits not yet written, LSB first */
    int n;
} bit_out;

static inline void bits_put(bit_out *b, uint32_t v, int n) {
    b->acc |= (uint64_t)v << b->n;
    b->n += n;
    while (b->n >= 8) {
        b->p[b->len++] = (unsigned char)b->acc;
        b->acc >>= 8;
        b->n -= 8;
    }
}

static uint32_t bit_reverse(uint32_t v, int n) {
    uint32_t r = 0;
    for (int i = 0; i < n; i++) r |= ((v >> i) & 1u) << (n - 1 - i);
    return r;
}

/* Fixed literal/length code of symbol 0..287 (RFC 1951 3.2.6), bit-reversed for LSB-first output. */
static void fixed_code(int sym, uint32_t *code, int *len) {
    if (sym < 144) *code = 0x30u + (uint32_t)sym, *len = 8;
    else if (sym < 256) *code = 0x190u + (uint32_t)(sym - 144), *len = 9;
    else if (sym < 280) *code = (uint32_t)(sym - 256), *len = 7;
    else *code = 0xC0u + (uint32_t)(sym - 280), *len = 8;
    *code = bit_reverse(*code, *len);
}

/* Codes of one encoding: every literal, every match length 3..258 (code and extra bits as one
 * field) and the two distances. */
typedef struct {
    uint32_t lit[256], len_bits[259], dist_bits[2];
    uint8_t lit_n[256], len_n[259], dist_n[2];
} rowmatch_codes;

static void rowmatch_dist(rowmatch_codes *t, int i, unsigned dist) {
    static const unsigned base[30] = {1,    2,    3,    4,    5,    7,     9,     13,    17,    25,
                                      33,   49,   65,   97,   129,  193,   257,   385,   513,   769,
                                      1025, 1537, 2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577};
    int c = 29;
    while (base[c] > dist) c--;
    int extra = c < 4 ? 0 : c / 2 - 1;
    t->dist_bits[i] = bit_reverse((uint32_t)c, 5) | (uint32_t)(dist - base[c]) << 5;
    t->dist_n[i] = (uint8_t)(5 + extra);
}

static void rowmatch_tables(rowmatch_codes *t, unsigned row_dist) {
    static const unsigned base[29] = {3,  4,  5,  6,  7,  8,  9,  10, 11,  13,  15,  17,  19,  23, 27,
                                      31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258};
    static const uint8_t extra[29] = {0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0};
    for (int v = 0; v < 256; v++) {
        int n;
        fixed_code(v, &t->lit[v], &n);
        t->lit_n[v] = (uint8_t)n;
    }
    for (unsigned len = 3, c = 0; len <= 258; len++) {
        while (c < 28 && base[c + 1] <= len) c++;
        uint32_t code;
        int n;
        fixed_code(257 + (int)c, &code, &n);
        t->len_bits[len] = code | (uint32_t)(len - base[c]) << n;
        t->len_n[len] = (uint8_t)(n + extra[c]);
    }
    rowmatch_dist(t, 0, row_dist);
    rowmatch_dist(t, 1, 3);
}

/* How many of the first max bytes of a and b are equal. */
static inline size_t equal_prefix(const unsigned char *a, const unsigned char *b, size_t max) {
    size_t n = 0;
#if defined(__GNUC__) && defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    for (; n + 8 <= max; n += 8) {
        uint64_t x, y;
        memcpy(&x, a + n, 8);
        memcpy(&y, b + n, 8);
        if (x != y) return n + (size_t)(__builtin_ctzll(x ^ y) >> 3);
    }
#endif
    while (n < max && a[n] == b[n]) n++;
    return n;
}

static inline void put_match(bit_out *o, const rowmatch_codes *t, size_t len, int d) {
    bits_put(o, t->len_bits[len], t->len_n[len]);
    bits_put(o, t->dist_bits[d], t->dist_n[d]);
}

/* One row's bytes (row: [3w], prev: the row above or NULL), after its filter byte. */
static void rowmatch_row(bit_out *o, const rowmatch_codes *t, const unsigned char *row, const unsigned char *prev,
                         size_t n) {
    size_t i = 0;
    if (prev) { /* the filter byte and the row's start repeat the row above */
        size_t up = 1 + equal_prefix(row, prev, n < 257 ? n : 257);
        if (up >= 3) {
            put_match(o, t, up, 0);
            i = up - 1;
        } else bits_put(o, t->lit[0], t->lit_n[0]);
    } else bits_put(o, t->lit[0], t->lit_n[0]);
    while (i < n) {
        size_t max = n - i < 258 ? n - i : 258;
        size_t up = prev ? equal_prefix(row + i, prev + i, max) : 0;
        size_t run = i >= 3 ? equal_prefix(row + i, row + i - 3, max) : 0; /* overlapping copy */
        size_t best = up >= run ? up : run;
        if (best >= 3) {
            put_match(o, t, best, up >= run ? 0 : 1);
            i += best;
        } else {
            bits_put(o, t->lit[row[i]], t->lit_n[row[i]]);
            i++;
        }
    }
}

/* Adler-32 (RFC 1950) of n bytes after the running value adler: what zlib's adler32 returns, in
 * 32 lanes the compiler can vectorize (zlib 1.2's loop is scalar: 4 of the ~9 ms this encoder
 * took per 128-position heatmap). Per chunk of at most 172 blocks of 32 bytes, lane j sums its
 * bytes (sa) and, after each block, the lane's sum so far (sb): each sum stays below 2^32. */
#if defined(__GNUC__) && !defined(__clang__)
__attribute__((optimize("O3"))) /* -O2 leaves the lane loop scalar (GCC 12) */
#endif
static uint32_t adler32_lanes(uint32_t adler, const unsigned char *p, size_t n) {
    const uint32_t MOD = 65521;
    uint32_t a = adler & 0xffffu, b = adler >> 16;
    while (n >= 32) {
        size_t blocks = n / 32 < 172 ? n / 32 : 172; /* 172 * 32 = 5504 bytes <= zlib's NMAX 5552 */
        uint32_t sa[32] = {0}, sb[32] = {0};
        b = (uint32_t)((b + (uint64_t)(blocks * 32) * a) % MOD);
        for (size_t k = 0; k < blocks; k++, p += 32)
            for (int j = 0; j < 32; j++) {
                sb[j] += sa[j];
                sa[j] += p[j];
            }
        uint64_t A = 0, B = 0;
        for (int j = 0; j < 32; j++) {
            A += sa[j];
            B += (uint64_t)sb[j] * 32 + (uint64_t)(32 - j) * sa[j];
        }
        a = (uint32_t)((a + A) % MOD);
        b = (uint32_t)((b + B) % MOD);
        n -= blocks * 32;
    }
    while (n--) {
        a += *p++;
        if (a >= MOD) a -= MOD;
        b += a;
        if (b >= MOD) b -= MOD;
    }
    return b << 16 | a;
}

static void put_be32(unsigned char *p, uint32_t v) {
    p[0] = (unsigned char)(v >> 24);
    p[1] = (unsigned char)(v >> 16);
    p[2] = (unsigned char)(v >> 8);
    p[3] = (unsigned char)v;
}

/* A chunk whose data already sits at out + at + 8: fills its length and type, appends its CRC. */
static size_t png_chunk(unsigned char *out, size_t at, const char *type, size_t len) {
    put_be32(out + at, (uint32_t)len);
    memcpy(out + at + 4, type, 4);
    uLong crc = crc32(0L, out + at + 4, (uInt)4);
    for (size_t done = 0; done < len;) { /* crc32 takes uInt lengths */
        size_t piece = len - done < 0x40000000u ? len - done : 0x40000000u;
        crc = crc32(crc, out + at + 8 + done, (uInt)piece);
        done += piece;
    }
    put_be32(out + at + 8 + len, (uint32_t)crc);
    return at + 12 + len;
}

/* 0 with the PNG in *out, -1 on error, or 1 (nothing in *out) when the deflate stream would pass
 * 1/ROWMATCH_MIN_RATIO of the pixel bytes: rows that do not repeat the row above. */
static int encode_rowmatch(const canvas *c, unsigned char **out, size_t *out_len, ae_error *err) {
    const size_t n = (size_t)c->w * 3, rows = (size_t)c->h;
    size_t raw, cap;
    /* worst case: 9 bits per byte (every byte a literal of 144..255), plus headers */
    if (ae_mul(n + 1, rows, &raw) || ae_mul(raw / 8 + 1, 9, &cap) || ae_add(cap, 256, &cap) || cap > 0x7fffffffu)
        return andrea_fail(err, "canvas: %d x %d image too large to encode", c->w, c->h);
    unsigned char *buf = malloc(cap);
    rowmatch_codes *t = malloc(sizeof *t);
    if (!buf || !t) {
        free(buf);
        free(t);
        return andrea_fail(err, "canvas: out of memory encoding a %d x %d PNG", c->w, c->h);
    }
    rowmatch_tables(t, (unsigned)(n + 1));
    static const unsigned char sig[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
    memcpy(buf, sig, 8);
    unsigned char *ih = buf + 8 + 8; /* IHDR: width, height, depth 8, RGB, deflate, filter 0, no interlace */
    put_be32(ih, (uint32_t)c->w);
    put_be32(ih + 4, (uint32_t)c->h);
    memcpy(ih + 8, "\x08\x02\x00\x00\x00", 5);
    size_t at = png_chunk(buf, 8, "IHDR", 13);
    bit_out o = {buf + at + 8, 0, 0, 0};
    o.p[o.len++] = 0x78; /* zlib header: deflate, 32 KiB window, no dictionary */
    o.p[o.len++] = 0x01;
    bits_put(&o, 3, 3); /* BFINAL 1, BTYPE 01: the one block, fixed codes */
    uint32_t adler = 1;
    static const unsigned char filter_none = 0;
    const size_t budget = raw / ROWMATCH_MIN_RATIO;
    for (size_t y = 0; y < rows; y++) {
        const unsigned char *row = c->px + y * n;
        rowmatch_row(&o, t, row, y ? row - n : NULL, n);
        if (o.len > budget && raw >= 65536) { /* small images: any size will do */
            free(buf);
            free(t);
            return 1;
        }
        adler = adler32_lanes(adler32_lanes(adler, &filter_none, 1), row, n);
    }
    bits_put(&o, 0, 7); /* end of block: symbol 256, seven 0 bits */
    if (o.n > 0) bits_put(&o, 0, 8 - o.n);
    put_be32(o.p + o.len, adler);
    o.len += 4;
    at = png_chunk(buf, at, "IDAT", o.len);
    at = png_chunk(buf, at, "IEND", 0);
    free(t);
    *out = buf;
    *out_len = at;
    return 0;
}

int andrea_canvas_encode_png(const canvas *c, unsigned char **out, size_t *out_len, ae_error *err) {
    if (c->w <= ROWMATCH_MAX_W) {
        int rc = encode_rowmatch(c, out, out_len, err);
        if (rc <= 0) return rc; /* 1: over its budget, zlib does better */
    }
    canvas_png_settings s = andrea_canvas_png_default();
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
