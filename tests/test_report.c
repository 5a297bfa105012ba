/* test_report.c — the report's pieces on data made here: colormap, labels, escaping, PNG bytes,
 * and andrea_report_write on a synthetic model (hostile names, several training steps). */
#define _GNU_SOURCE /* memmem */
#include <math.h>
#include <png.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "check.h"
#include "common/half.h"
#include "common/sha256.h"
#include "reports/canvas.h"
#include "reports/colormap.h"
#include "reports/font.h"
#include "reports/plots.h"
#include "reports/report_data.h"
#include "reports/series.h"
#include "reports/text.h"

/* ---------- helpers ---------- */

static unsigned char *slurp(const char *path, size_t *n) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *b = malloc((size_t)len + 1);
    if (b && fread(b, 1, (size_t)len, f) != (size_t)len) {
        free(b);
        b = NULL;
    }
    if (b) b[len] = 0;
    fclose(f);
    *n = (size_t)len;
    return b;
}

/* Decodes an RGB PNG with libpng's simplified API; returns pixels [h, w, 3] or NULL. */
static unsigned char *read_png(const char *path, int *w, int *h) {
    png_image img;
    memset(&img, 0, sizeof img);
    img.version = PNG_IMAGE_VERSION;
    if (!png_image_begin_read_from_file(&img, path)) return NULL;
    img.format = PNG_FORMAT_RGB;
    unsigned char *px = malloc(PNG_IMAGE_SIZE(img));
    if (!px || !png_image_finish_read(&img, NULL, px, 0, NULL)) {
        free(px);
        png_image_free(&img);
        return NULL;
    }
    *w = (int)img.width;
    *h = (int)img.height;
    return px;
}

/* A causal map whose row q puts 0.75 on key q-1 and spreads the rest evenly (row 0: all on 0). */
static float *prev_token_map(int T) {
    float *m = calloc((size_t)T * (size_t)T, sizeof *m);
    for (int q = 0; q < T; q++) {
        if (q == 0) {
            m[0] = 1;
            continue;
        }
        for (int k = 0; k <= q; k++) m[q * T + k] = 0.25f / (float)q;
        m[q * T + q - 1] += 0.75f - 0.25f / (float)q;
    }
    return m;
}

static canvas *sample_heatmap(int n, float bump) {
    float *m = prev_token_map(n);
    m[(n - 1) * n] += bump;
    char **labels = malloc((size_t)n * sizeof *labels);
    for (int i = 0; i < n; i++) {
        labels[i] = malloc(32);
        snprintf(labels[i], 32, "tok%d", i);
    }
    heatmap_spec s = {m, n, n, (const char *const *)labels, NULL, "L0 H0 \xC2\xB7 test", "subtitle"};
    ae_error err;
    canvas *c = andrea_draw_heatmap(&s, &err);
    for (int i = 0; i < n; i++) free(labels[i]);
    free(labels);
    free(m);
    return c;
}

/* ---------- colormap ---------- */

static void test_colormap_endpoints_are_magma_table_ends(void) {
    /* matplotlib's _magma_data[0] = (0.001462, 0.000466, 0.013866), [255] = (0.987053, 0.991438,
     * 0.749504); × 255 rounded: (0, 0, 4) and (252, 253, 191). */
    rgb lo = andrea_colormap_magma(0.0), hi = andrea_colormap_magma(1.0);
    CHECK(lo.r == 0 && lo.g == 0 && lo.b == 4);
    CHECK(hi.r == 252 && hi.g == 253 && hi.b == 191);
    CHECK(andrea_colormap_magma_entry(0, 0) == 0.001462f && andrea_colormap_magma_entry(255, 2) == 0.749504f);
    CHECK(andrea_colormap_magma_entry(128, 0) == 0.716387f); /* a middle entry, digit for digit */
}

static void test_colormap_clips_out_of_range_and_greys_nan(void) {
    rgb a = andrea_colormap_magma(-3.0), b = andrea_colormap_magma(0.0), c = andrea_colormap_magma(7.0), d = andrea_colormap_magma(1.0);
    CHECK(a.r == b.r && a.g == b.g && a.b == b.b);
    CHECK(c.r == d.r && c.g == d.g && c.b == d.b);
    rgb n = andrea_colormap_magma(NAN);
    CHECK(n.r == 128 && n.g == 128 && n.b == 128);
}

static void test_colormap_lightness_increases_along_the_scale(void) {
    int ok = 1;
    for (int i = 1; i < 256; i++) {
        rgb p = andrea_colormap_magma_index(i - 1), q = andrea_colormap_magma_index(i);
        if (p.r + p.g + p.b > q.r + q.g + q.b) ok = 0;
    }
    CHECK(ok);
}

/* ---------- labels and escaping ---------- */

static void test_token_label_makes_invisible_bytes_visible(void) {
    char out[64];
    CHECK(!strcmp(andrea_token_label((const unsigned char *)" the", 4, 0, LABEL_PNG, 14, out, sizeof out), "\xC2\xB7the"));
    CHECK(!strcmp(andrea_token_label((const unsigned char *)"\n", 1, 0, LABEL_PNG, 14, out, sizeof out), "\xE2\x8F\x8E"));
    CHECK(!strcmp(andrea_token_label((const unsigned char *)"\t", 1, 0, LABEL_PNG, 14, out, sizeof out), "\xE2\x86\x92"));
    CHECK(!strcmp(andrea_token_label((const unsigned char *)"\x01", 1, 0, LABEL_PNG, 14, out, sizeof out), "\\x01"));
    CHECK(!strcmp(andrea_token_label((const unsigned char *)"a\\b", 3, 0, LABEL_PNG, 14, out, sizeof out), "a\\\\b"));
    CHECK(!strcmp(andrea_token_label((const unsigned char *)"x", 1, 1, LABEL_PNG, 14, out, sizeof out), "<bos>"));
}

static void test_token_label_keeps_latin1_in_png_mode_and_escapes_what_the_font_lacks(void) {
    char out[64];
    const unsigned char e_acute[] = {0xC3, 0xA9}, euro[] = {0xE2, 0x82, 0xAC}, kanji[] = {0xE6, 0xBC, 0xA2};
    const unsigned char mid_dot[] = {0xC2, 0xB7}, nbsp[] = {0xC2, 0xA0};
    CHECK_MSG(!strcmp(andrea_token_label(e_acute, 2, 0, LABEL_PNG, 14, out, sizeof out), "\xC3\xA9"), "got '%s'", out);
    CHECK(!strcmp(andrea_token_label(euro, 3, 0, LABEL_PNG, 14, out, sizeof out), "\xE2\x82\xAC"));
    CHECK_MSG(!strcmp(andrea_token_label(kanji, 3, 0, LABEL_PNG, 14, out, sizeof out), "\\xe6\\xbc\\xa2"), "got '%s'", out);
    /* a literal middle dot or no-break space would read as a space marker or nothing: escaped */
    CHECK(!strcmp(andrea_token_label(mid_dot, 2, 0, LABEL_PNG, 14, out, sizeof out), "\\xc2\\xb7"));
    CHECK(!strcmp(andrea_token_label(nbsp, 2, 0, LABEL_PNG, 14, out, sizeof out), "\\xc2\\xa0"));
    CHECK(!strcmp(andrea_token_label(kanji, 3, 0, LABEL_UTF8, 14, out, sizeof out), "\xE6\xBC\xA2"));
    /* half of a UTF-8 sequence (BPE tokens split characters) stays escaped in both modes */
    CHECK(!strcmp(andrea_token_label(e_acute, 1, 0, LABEL_UTF8, 14, out, sizeof out), "\\xc3"));
    CHECK(!strcmp(andrea_token_label(e_acute, 1, 0, LABEL_PNG, 14, out, sizeof out), "\\xc3"));
}

static void test_png_font_draws_every_latin1_character(void) {
    for (unsigned cp = 0xA0; cp <= 0xFF; cp++) CHECK_MSG(andrea_report_font_glyph(&andrea_report_font_small, cp) != NULL, "U+%04X", cp);
    CHECK(andrea_report_font_glyph(&andrea_report_font_large, 0x201C) != NULL && andrea_report_font_glyph(&andrea_report_font_medium, 0x20AC) != NULL);
}

static void test_token_label_truncates_long_tokens_with_an_ellipsis(void) {
    char out[64];
    andrea_token_label((const unsigned char *)"abcdefghijklmnopqrstuvwxyz", 26, 0, LABEL_PNG, 8, out, sizeof out);
    CHECK_MSG(!strcmp(out, "abcdefg\xE2\x80\xA6"), "got '%s'", out);
    andrea_token_label((const unsigned char *)"abcdefgh", 8, 0, LABEL_PNG, 8, out, sizeof out);
    CHECK_MSG(!strcmp(out, "abcdefgh"), "a label of exactly max_chars is kept whole, got '%s'", out);
}

static void test_html_escaping_covers_the_five_special_characters(void) {
    andrea_buf b;
    andrea_buf_init(&b);
    andrea_html_add(&b, "<script>alert(1)</script> \"&'");
    CHECK_MSG(!strcmp(b.s, "&lt;script&gt;alert(1)&lt;/script&gt; &quot;&amp;&#39;"), "got %s", b.s);
    andrea_buf_free(&b);
}

/* A name is bytes (a file name may hold any byte but '/' and NUL): what is not well-formed,
 * printable UTF-8 reaches a page as the visible text \xNN, so every page is valid UTF-8 and
 * holds no control character but tab and newline; well-formed UTF-8 stays as it is. */
static void test_html_shows_bytes_that_are_not_printable_utf8_as_hex(void) {
    andrea_buf b;
    andrea_buf_init(&b);
    andrea_html_add(&b, "a\xff\xfe<b\x01\x1b[31m\x7f\xc3\xa9\xc3(\xe2\x82\xc2\x85\xed\xa0\x80\tz\n\r\xe2\x82");
    CHECK_MSG(!strcmp(b.s, "a\\xff\\xfe&lt;b\\x01\\x1b[31m\\x7f\xc3\xa9\\xc3(\\xe2\\x82\\xc2\\x85\\xed\\xa0\\x80\tz\n"
                             "\\x0d\\xe2\\x82"),
              "got %s", b.s);
    andrea_buf_free(&b);
}

/* A bidirectional control (U+202E RIGHT-TO-LEFT OVERRIDE, U+2066..2069 isolates, U+200E/F marks,
 * U+061C) is invisible and reorders the text after it: in a token view a token "\u202eevil" read
 * "live" and every later token backwards ("(4)trela:tpi"). Labels (both modes) and page text
 * show it as \xNN; other characters of the same block stay. */
/* The HTML token lists escape what would be invisible or read as a marker: a token of no-break
 * spaces, a zero-width space or a soft hyphen showed as a blank, a literal "·" as a space; the
 * rest of UTF-8 (here an em dash and "é") stays as it is. */
static void test_html_labels_show_invisible_characters_and_marker_look_alikes(void) {
    char out[128];
    const unsigned char nbsp2[] = {0xC2, 0xA0, 0xC2, 0xA0}, zwsp[] = {0xE2, 0x80, 0x8B}, shy[] = {'w', 0xC2, 0xAD};
    const unsigned char dot[] = {' ', 0xC2, 0xB7}, keep[] = {0xE2, 0x80, 0x94, 0xC3, 0xA9}, bom[] = {0xEF, 0xBB, 0xBF};
    CHECK_MSG(!strcmp(andrea_token_label(nbsp2, 4, 0, LABEL_UTF8, 0, out, sizeof out), "\\xc2\\xa0\\xc2\\xa0"), "got '%s'", out);
    CHECK_MSG(!strcmp(andrea_token_label(zwsp, 3, 0, LABEL_UTF8, 0, out, sizeof out), "\\xe2\\x80\\x8b"), "got '%s'", out);
    CHECK_MSG(!strcmp(andrea_token_label(shy, 3, 0, LABEL_UTF8, 0, out, sizeof out), "w\\xc2\\xad"), "got '%s'", out);
    CHECK_MSG(!strcmp(andrea_token_label(dot, 3, 0, LABEL_UTF8, 0, out, sizeof out), "\xC2\xB7\\xc2\\xb7"), "got '%s'", out);
    CHECK_MSG(!strcmp(andrea_token_label(bom, 3, 0, LABEL_UTF8, 0, out, sizeof out), "\\xef\\xbb\\xbf"), "got '%s'", out);
    CHECK_MSG(!strcmp(andrea_token_label(keep, 5, 0, LABEL_UTF8, 0, out, sizeof out), "\xE2\x80\x94\xC3\xA9"), "got '%s'", out);
}

static void test_bidi_controls_are_shown_as_hex_in_labels_and_pages(void) {
    char out[128];
    const unsigned char rlo_evil[] = {0xE2, 0x80, 0xAE, 'e', 'v', 'i', 'l'};
    CHECK_MSG(!strcmp(andrea_token_label(rlo_evil, 7, 0, LABEL_UTF8, 40, out, sizeof out), "\\xe2\\x80\\xaeevil"), "got '%s'", out);
    CHECK_MSG(!strcmp(andrea_token_label(rlo_evil, 7, 0, LABEL_PNG, 40, out, sizeof out), "\\xe2\\x80\\xaeevil"), "got '%s'", out);
    const unsigned char marks[] = {0xD8, 0x9C, 0xE2, 0x80, 0x8F, 0xE2, 0x81, 0xA6, 0xE2, 0x81, 0xA9, 0xE2, 0x80, 0x94};
    CHECK_MSG(!strcmp(andrea_token_label(marks, (int)sizeof marks, 0, LABEL_UTF8, 0, out, sizeof out),
                      "\\xd8\\x9c\\xe2\\x80\\x8f\\xe2\\x81\\xa6\\xe2\\x81\\xa9\xE2\x80\x94"),
              "got '%s'", out);
    andrea_buf b;
    andrea_buf_init(&b);
    andrea_html_add(&b, "run\xE2\x80\xAEnib.exe");
    CHECK_MSG(!strcmp(b.s, "run\\xe2\\x80\\xaenib.exe"), "got %s", b.s);
    CHECK(andrea_utf8_printable_len("\xE2\x80\xAE") == 0 && andrea_utf8_printable_len("\xE2\x80\x94") == 3);
    andrea_buf_free(&b);
}

static void test_file_slug_keeps_only_safe_characters(void) {
    char out[64];
    andrea_file_slug("../<x> y\"/", out, sizeof out);
    CHECK_MSG(!strcmp(out, "____x__y__"), "got %s", out);
}

/* A suite's images are named after it (report_kept.h): names that slug alike keep apart, and no
 * form holds '/', "..", or a leading '.'; 63 bytes of any value fit ANDREA_FILE_TAG_MAX. */
static void test_file_tag_is_one_to_one_and_safe(void) {
    char a[ANDREA_FILE_TAG_MAX], b[ANDREA_FILE_TAG_MAX], c[ANDREA_FILE_TAG_MAX], d[ANDREA_FILE_TAG_MAX];
    andrea_file_tag("a.b", a, sizeof a);
    andrea_file_tag("a_b", b, sizeof b);
    andrea_file_tag("a.2eb", c, sizeof c);
    andrea_file_tag("../x/", d, sizeof d);
    CHECK_MSG(!strcmp(a, "a.2eb") && !strcmp(b, "a_b") && !strcmp(c, "a.2e2eb"), "got %s %s %s", a, b, c);
    CHECK_MSG(!strcmp(d, ".2e.2e.2fx.2f") && !strchr(d, '/') && !strstr(d, ".."), "got %s", d);
    char worst[64];
    memset(worst, 0xff, 63);
    worst[63] = 0;
    andrea_file_tag(worst, a, sizeof a);
    CHECK_MSG(strlen(a) == 3 * 63, "a 63-byte name cut to %zu bytes", strlen(a));
}

/* ---------- PNG ---------- */

static void test_png_bytes_are_the_same_for_the_same_drawing(void) {
    char p1[512], p2[512], p3[512];
    snprintf(p1, sizeof p1, "%s/a.png", check_tmpdir());
    snprintf(p2, sizeof p2, "%s/b.png", check_tmpdir());
    snprintf(p3, sizeof p3, "%s/c.png", check_tmpdir());
    ae_error err;
    canvas *c1 = sample_heatmap(20, 0), *c2 = sample_heatmap(20, 0), *c3 = sample_heatmap(20, 0.2f);
    CHECK(c1 && c2 && c3);
    if (!c1 || !c2 || !c3) return;
    CHECK(andrea_canvas_write_png(c1, p1, &err) == 0);
    CHECK(andrea_canvas_write_png(c2, p2, &err) == 0);
    CHECK(andrea_canvas_write_png(c3, p3, &err) == 0);
    andrea_canvas_free(c1);
    andrea_canvas_free(c2);
    andrea_canvas_free(c3);
    size_t n1, n2, n3;
    unsigned char *b1 = slurp(p1, &n1), *b2 = slurp(p2, &n2), *b3 = slurp(p3, &n3);
    CHECK(b1 && b2 && b3);
    if (b1 && b2 && b3) {
        char h1[65] = "1", h2[65] = "2", h3[65] = "3";
        CHECK(andrea_sha256_file(p1, h1, &err) == 0);
        CHECK(andrea_sha256_file(p2, h2, &err) == 0);
        CHECK(andrea_sha256_file(p3, h3, &err) == 0);
        CHECK_MSG(!strcmp(h1, h2), "same drawing, different bytes: %s vs %s", h1, h2);
        CHECK_MSG(strcmp(h1, h3) != 0, "a changed map must change the file");
        CHECK(memcmp(b1, "\x89PNG\r\n\x1a\n", 8) == 0);
        CHECK(memmem(b1, n1, "tIME", 4) == NULL); /* no timestamp chunk */
    }
    free(b1);
    free(b2);
    free(b3);
}

static void test_heatmap_cells_have_the_colormap_colour_of_their_value(void) {
    /* A 4-token map with known values; the PNG is decoded and the centre of each cell compared
     * with andrea_colormap_magma(value) (masked cells must be the mask grey, not a scale colour). */
    int n = 4;
    float m[16] = {1, 0, 0, 0, 0.5f, 0.5f, 0, 0, 0.1f, 0.2f, 0.7f, 0, 0.25f, 0.25f, 0.25f, 0.25f};
    const char *labels[4] = {"<bos>", "a", "b", "c"};
    heatmap_spec s = {m, n, n, labels, NULL, "cells", NULL};
    ae_error err;
    canvas *c = andrea_draw_heatmap(&s, &err);
    CHECK(c != NULL);
    if (!c) return;
    char path[512];
    snprintf(path, sizeof path, "%s/cells.png", check_tmpdir());
    CHECK(andrea_canvas_write_png(c, path, &err) == 0);
    andrea_canvas_free(c);
    int w, h;
    unsigned char *px = read_png(path, &w, &h);
    CHECK(px != NULL);
    if (!px) return;
    /* find the map: the first pixel (scanning rows) with the colour of value 1.0 is cell (0, 0) */
    rgb one = andrea_colormap_magma(1.0);
    int x0 = -1, y0 = -1;
    for (int y = 0; y < h && x0 < 0; y++)
        for (int x = 0; x < w; x++) {
            unsigned char *p = px + ((size_t)y * (size_t)w + (size_t)x) * 3;
            if (p[0] == one.r && p[1] == one.g && p[2] == one.b) {
                x0 = x;
                y0 = y;
                break;
            }
        }
    CHECK(x0 >= 0);
    int cs = 20; /* cell size for n <= 24 (plots.c) */
    int bad = 0;
    for (int q = 0; q < n && x0 >= 0; q++)
        for (int k = 0; k < n; k++) {
            unsigned char *p = px + ((size_t)(y0 + q * cs + cs / 2) * (size_t)w + (size_t)(x0 + k * cs + cs / 2)) * 3;
            rgb want = k > q ? (rgb){214, 214, 220} : andrea_colormap_magma(m[q * n + k]);
            if (p[0] != want.r || p[1] != want.g || p[2] != want.b) bad++;
        }
    CHECK_MSG(bad == 0, "%d cells with the wrong colour", bad);
    free(px);
}

/* Writes c through andrea_canvas_write_png, decodes the file with libpng and compares every pixel;
 * the count of differing pixels, or -1 when the file does not decode. */
static long png_pixels_differ(const canvas *c, const char *name) {
    char path[512];
    ae_error err = {{0}};
    snprintf(path, sizeof path, "%s/%s", check_tmpdir(), name);
    if (andrea_canvas_write_png(c, path, &err) != 0) return -1;
    int w = 0, h = 0;
    unsigned char *px = read_png(path, &w, &h);
    if (!px || w != c->w || h != c->h) {
        free(px);
        return -1;
    }
    long bad = 0;
    for (size_t i = 0; i < (size_t)w * (size_t)h; i++) bad += memcmp(px + 3 * i, c->px + 3 * i, 3) != 0;
    free(px);
    return bad;
}

static void test_png_of_a_heatmap_decodes_to_the_canvas_pixels(void) {
    /* 128 positions: the cells, labels and colour bar of a real report image (~700 colours) */
    canvas *c = sample_heatmap(128, 0.1f);
    CHECK(c != NULL);
    if (!c) return;
    long bad = png_pixels_differ(c, "exact.png");
    CHECK_MSG(bad == 0, "%ld pixels differ (-1: the file did not decode)", bad);
    andrea_canvas_free(c);
}

static void test_png_of_noise_and_tiny_canvases_decodes_to_their_pixels(void) {
    /* noise: no row repeats and no run, every byte a literal (the row-match encoder's worst case,
     * 150 x 97; 333 x 97 is past its budget and goes to zlib); then a 1 x 1 and a 1-pixel-wide
     * canvas, and rows that repeat only in part */
    const int sizes[][2] = {{150, 97}, {333, 97}, {1, 1}, {1, 40}, {40, 1}, {2, 3}};
    ae_error err = {{0}};
    unsigned s = 12345;
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        canvas *c = andrea_canvas_new(sizes[k][0], sizes[k][1], (rgb){250, 250, 250}, &err);
        CHECK(c != NULL);
        if (!c) return;
        for (size_t i = 0; i < (size_t)c->w * (size_t)c->h * 3; i++) {
            s = s * 1103515245u + 12345u;
            c->px[i] = (unsigned char)(s >> 16);
        }
        long bad = png_pixels_differ(c, "noise.png");
        CHECK_MSG(bad == 0, "%d x %d noise: %ld pixels differ", c->w, c->h, bad);
        andrea_canvas_fill(c, 0, 0, c->w, c->h / 2, (rgb){1, 2, 3}); /* runs and repeated rows above noise */
        andrea_canvas_fill(c, c->w / 3, 0, 1, c->h, (rgb){9, 9, 9});
        bad = png_pixels_differ(c, "half.png");
        CHECK_MSG(bad == 0, "%d x %d half noise: %ld pixels differ", c->w, c->h, bad);
        andrea_canvas_free(c);
    }
}

static void test_png_wider_than_the_deflate_window_decodes_to_its_pixels(void) {
    /* 12000 px rows are farther back than deflate's 32 KiB window reaches: libpng and zlib */
    ae_error err = {{0}};
    canvas *c = andrea_canvas_new(12000, 6, (rgb){255, 255, 255}, &err);
    CHECK(c != NULL);
    if (!c) return;
    for (int x = 0; x < c->w; x += 7) andrea_canvas_fill(c, x, x % 5, 3, 2, (rgb){(uint8_t)x, (uint8_t)(x >> 8), 7});
    long bad = png_pixels_differ(c, "wide.png");
    CHECK_MSG(bad == 0, "%ld pixels differ", bad);
    andrea_canvas_free(c);
}

/* Large images go to the banded encoder (png_bands.c): bands of rows deflated on their own and
 * joined into one zlib stream. Noise under flat cells (3 bands of 349 rows), and the widest
 * canvas (rows farther back than deflate's window; 10 bands of 21 rows). The bytes must not
 * depend on the threads: encoded alone, then as a task of a 4-thread team. */
static void test_large_png_is_encoded_in_bands_that_decode_to_its_pixels_on_any_threads(void) {
    const int sizes[][2] = {{1000, 800}, {16384, 200}};
    ae_error err = {{0}};
    unsigned s = 777;
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        canvas *c = andrea_canvas_new(sizes[k][0], sizes[k][1], (rgb){250, 250, 250}, &err);
        CHECK(c != NULL);
        if (!c) return;
        for (size_t i = (size_t)c->w * 3 * (size_t)(c->h / 3); i < (size_t)c->w * (size_t)c->h * 3; i++) {
            s = s * 1103515245u + 12345u;
            c->px[i] = (unsigned char)(s >> 16);
        }
        andrea_canvas_fill(c, 10, 0, c->w / 2, c->h / 2, (rgb){1, 2, 3});
        long bad = png_pixels_differ(c, "bands.png");
        CHECK_MSG(bad == 0, "%d x %d: %ld pixels differ (-1: the file did not decode)", c->w, c->h, bad);
        unsigned char *alone = NULL, *team = NULL;
        size_t n_alone = 0, n_team = 0;
        int rc_alone = andrea_canvas_encode_png(c, &alone, &n_alone, &err), rc_team = -1;
#pragma omp parallel num_threads(4)
#pragma omp single
        rc_team = andrea_canvas_encode_png(c, &team, &n_team, &err);
        CHECK(rc_alone == 0 && rc_team == 0);
        CHECK_MSG(n_alone == n_team && alone && team && !memcmp(alone, team, n_alone),
                  "%d x %d: %zu bytes alone, %zu in a team", c->w, c->h, n_alone, n_team);
        free(alone);
        free(team);
        andrea_canvas_free(c);
    }
}

static void test_long_maps_are_cropped_and_say_so(void) {
    /* 200 positions draw like 128 (same map size) plus one line of crop notice above the map */
    canvas *full = sample_heatmap(128, 0), *crop = sample_heatmap(200, 0);
    CHECK(full != NULL && crop != NULL);
    if (full && crop) {
        CHECK_MSG(crop->h == full->h + andrea_report_font_medium.line + 2, "heights %d vs %d", crop->h, full->h);
        CHECK(crop->w >= full->w);
    }
    andrea_canvas_free(full);
    andrea_canvas_free(crop);
}

static void test_absurd_canvas_size_is_refused_with_a_message(void) {
    ae_error err = {{0}};
    canvas *c = andrea_canvas_new(100000, 10, (rgb){0, 0, 0}, &err);
    CHECK(c == NULL);
    CHECK_MSG(strstr(err.msg, "100000") != NULL, "got '%s'", err.msg);
}

static void test_png_into_a_missing_folder_fails_and_names_the_file(void) {
    ae_error err = {{0}};
    canvas *c = andrea_canvas_new(4, 4, (rgb){1, 2, 3}, &err);
    char path[512];
    snprintf(path, sizeof path, "%s/no/such/dir/x.png", check_tmpdir());
    CHECK(andrea_canvas_write_png(c, path, &err) == -1);
    CHECK_MSG(strstr(err.msg, "x.png") != NULL, "got '%s'", err.msg);
    andrea_canvas_free(c);
}

/* ---------- andrea_report_write on a synthetic model ---------- */

#define SL 2
#define SH 3
#define ST 12

static int syn_token_bytes(const report_data *d, int id, char *buf, size_t cap) {
    (void)d;
    /* id 0 is BOS; 1..: the bytes of HOSTILE cycling */
    static const char hostile[] = "<script>alert(1)</script>\"&'\n x";
    if (id <= 0 || cap < 1) return -1;
    buf[0] = hostile[(id - 1) % (int)(sizeof hostile - 1)];
    return 1;
}

static int syn_read_map(const report_data *d, int s, int e, int l, int h, float *out, ae_error *err) {
    (void)d;
    (void)s;
    (void)e;
    (void)l;
    (void)h;
    (void)err;
    float *m = prev_token_map(ST);
    memcpy(out, m, sizeof(float) * ST * ST);
    free(m);
    return 0;
}

static void syn_data(report_data *d) {
    memset(d, 0, sizeof *d);
    snprintf(d->model, sizeof d->model, "model_step300 <b>\"&'");
    snprintf(d->ckpt_path, sizeof d->ckpt_path, "/tmp/<script>alert(1)</script>/\"&'.bin");
    snprintf(d->sha256, sizeof d->sha256, "%064d", 0);
    snprintf(d->dump_path, sizeof d->dump_path, "d.h5");
    snprintf(d->db_path, sizeof d->db_path, "c.db");
    snprintf(d->maps_dtype, sizeof d->maps_dtype, "fp16");
    d->n_layer = SL;
    d->n_head = SH;
    d->d_model = 12;
    d->vocab_size = 100;
    d->n_suites = 2;
    d->suites = calloc(2, sizeof *d->suites);
    const char *names[2] = {"prev_token", "<script>alert(1)</script>"};
    for (int s = 0; s < 2; s++) {
        report_suite *su = &d->suites[s];
        snprintf(su->name, sizeof su->name, "%s", names[s]);
        su->T = ST;
        su->n_seq = 5;
        su->n_examples = 2;
        su->n_tokens = malloc(2 * sizeof(int));
        su->tokens = calloc(2 * ST, sizeof(int));
        su->target = calloc(2 * ST * ST, 1);
        for (int e = 0; e < 2; e++) {
            su->n_tokens[e] = ST - e;
            for (int i = 0; i < ST; i++) su->tokens[e * ST + i] = i + e;
            for (int q = 1; q < ST; q++) su->target[(e * ST + q) * ST + q - 1] = 1;
        }
    }
    d->n_classes = 2;
    d->classes = calloc(2, sizeof *d->classes);
    for (int c = 0; c < 2; c++) snprintf(d->classes[c], 64, "%s", names[c]);
    d->scores = malloc(sizeof *d->scores * 2 * SL * SH);
    for (int i = 0; i < 2 * SL * SH; i++)
        d->scores[i] = (report_score){.score = (i * 7 % 10) / 10.0, .baseline = 0.1, .control = 0.1, .ablation = 0.01 * i,
                                      .label = i % 5 == 0, .causal = i == 5 ? 0 : i % 5 == 0 ? 1 : -1};
    d->token_bytes = syn_token_bytes;
    d->bos = 0;
    d->read_map = syn_read_map;
    snprintf(d->run_name, sizeof d->run_name, "model_step#");
    d->n_steps = 3;
    d->steps = malloc(3 * sizeof(double));
    d->step_scores = malloc(sizeof *d->step_scores * 3 * 2 * SL * SH);
    for (int t = 0; t < 3; t++) {
        d->steps[t] = 100.0 * (t + 1);
        for (int i = 0; i < 2 * SL * SH; i++)
            d->step_scores[t * 2 * SL * SH + i] = (report_score){.score = 0.2 * t + 0.01 * i, .baseline = 0.1, .control = 0.1,
                                                                 .label = (i % 5 == 0) && t == 2, .causal = -1};
    }
}

static int file_exists(const char *dir, const char *rel) {
    char p[1024];
    struct stat st;
    snprintf(p, sizeof p, "%s/%s", dir, rel);
    return stat(p, &st) == 0 && st.st_size > 0;
}

/* Every HTML file written must be free of the raw hostile strings. */
static void check_page_escaped(const char *dir, const char *rel) {
    char p[1024];
    size_t n;
    snprintf(p, sizeof p, "%s/%s", dir, rel);
    unsigned char *b = slurp(p, &n);
    CHECK_MSG(b != NULL, "%s missing", p);
    if (!b) return;
    CHECK_MSG(strstr((char *)b, "<script>alert") == NULL, "%s: raw <script>alert", rel);
    CHECK_MSG(strstr((char *)b, "<b>") == NULL, "%s: raw <b>", rel);
    CHECK_MSG(strstr((char *)b, "\"&'") == NULL, "%s: raw quote-amp-apostrophe", rel);
    free(b);
}

static void test_report_write_escapes_every_name_and_path(void) {
    report_data d;
    syn_data(&d);
    char dir[512];
    snprintf(dir, sizeof dir, "%s/rep1", check_tmpdir());
    ae_error err = {{0}};
    andrea_render_options o = {0, 1, 0, NULL, 0, NULL};
    CHECK_MSG(andrea_report_write(&d, dir, &o, &err) == 0, "%s", err.msg);
    check_page_escaped(dir, "index.html");
    check_page_escaped(dir, "heads/L0_H0.html");
    check_page_escaped(dir, "heads/L1_H2.html");
    char p[1024];
    size_t n;
    snprintf(p, sizeof p, "%s/index.html", dir);
    unsigned char *b = slurp(p, &n);
    if (b) {
        CHECK(strstr((char *)b, "&lt;script&gt;alert(1)&lt;/script&gt;") != NULL);
        CHECK(strstr((char *)b, "&quot;&amp;&#39;") != NULL);
        /* one table row per head */
        int rows = 0;
        for (char *s = (char *)b; (s = strstr(s, "<tr data-i=")); s++) rows++;
        CHECK_MSG(rows == SL * SH, "rows %d", rows);
    }
    free(b);
    andrea_report_data_free(&d);
}

/* 1 when the n bytes are well-formed UTF-8 holding no control character but tab and newline. */
static int page_text_ok(const unsigned char *s, size_t n, size_t *bad_at) {
    for (size_t i = 0; i < n;) {
        unsigned char c = s[i];
        size_t len = c < 0x80 ? 1 : (c >= 0xC2 && c <= 0xDF) ? 2 : (c >= 0xE0 && c <= 0xEF) ? 3 : (c >= 0xF0 && c <= 0xF4) ? 4 : 0;
        unsigned cp = len == 1 ? c : len == 2 ? c & 0x1Fu : len == 3 ? c & 0x0Fu : c & 0x07u;
        int ok = len > 0 && i + len <= n;
        for (size_t k = 1; ok && k < len; k++) {
            ok = (s[i + k] & 0xC0) == 0x80;
            cp = cp << 6 | (s[i + k] & 0x3Fu);
        }
        ok = ok && !(len == 3 && cp < 0x800) && !(len == 4 && (cp < 0x10000 || cp > 0x10FFFF)) &&
             !(cp >= 0xD800 && cp <= 0xDFFF) && !((cp < 0x20 && cp != '\t' && cp != '\n') || (cp >= 0x7F && cp < 0xA0));
        if (!ok) {
            *bad_at = i;
            return 0;
        }
        i += len;
    }
    return 1;
}

/* Checkpoint, dump and catalog paths are file names: any byte. Every page and data file stays
 * valid UTF-8 without control bytes whatever they hold (a page declared UTF-8 showed raw \xff). */
static void test_report_pages_are_utf8_whatever_bytes_the_paths_hold(void) {
    report_data d;
    syn_data(&d);
    snprintf(d.model, sizeof d.model, "m\xff\xfe\x01\x1b[2J\xc3");
    snprintf(d.ckpt_path, sizeof d.ckpt_path, "/tmp/a\tb\x7f\xc2\x85/m\xff\xfe\x01\x1b[2J\xc3.bin");
    snprintf(d.dump_path, sizeof d.dump_path, "d\xe2\x82.h5");
    snprintf(d.db_path, sizeof d.db_path, "c\xed\xa0\x80.db");
    char dir[512];
    snprintf(dir, sizeof dir, "%s/rep_bytes", check_tmpdir());
    ae_error err = {{0}};
    andrea_render_options o = {0, 1, 0, NULL, 0, NULL};
    CHECK_MSG(andrea_report_write(&d, dir, &o, &err) == 0, "%s", err.msg);
    const char *files[] = {"index.html", "heads/L0_H0.html", "heads/L1_H2.html", "explore.html", "compare.html", "data/meta.js"};
    for (size_t f = 0; f < sizeof files / sizeof files[0]; f++) {
        char p[1024];
        size_t n = 0, at = 0;
        snprintf(p, sizeof p, "%s/%s", dir, files[f]);
        unsigned char *b = slurp(p, &n);
        CHECK_MSG(b != NULL, "%s missing", files[f]);
        if (!b) continue;
        CHECK_MSG(page_text_ok(b, n, &at), "%s: byte 0x%02x at %zu is not printable UTF-8: ...%.40s", files[f], b[at], at,
                  (const char *)b + (at > 30 ? at - 30 : 0));
        CHECK_MSG(strstr((char *)b, "m\\xff\\xfe\\x01\\x1b[2J\\xc3") != NULL || strstr((char *)b, "m\\\\xff\\\\xfe") != NULL,
                  "%s: the model name is not shown as \\xNN", files[f]);
        free(b);
    }
    andrea_report_data_free(&d);
}

/* A labelled head whose ablation does not raise the loss above the mean head's (causal 0) is
 * flagged in the head table; causal 1 or unmeasured heads are not. */
/* The series page's class links ("Classes: ...") reach their section whatever the catalog's class
 * names: each href="#X" has an element id="X", X written with URL-safe characters only (a browser
 * looks the fragment up as the URL parser wrote it, then percent-decoded: "#class-a b#%41" found
 * neither, the link went nowhere); a suite name's anchor stays #class-NAME. */
/* The series page's changes between steps are those `andrea diff --changed` shows: a class scored
 * at one of the two steps only (another run's --probes) changes no label, and checkpoints of two
 * shapes are not compared head by head (diff refuses them); the matrix lists only heads some
 * checkpoint has. They were "lost" rows of nan scores, and rows of heads of no checkpoint. */
static void test_series_page_changes_are_diffs_of_measured_heads(void) {
    /* three checkpoints, one class over a 2 x 2 grid: 2 x 2, 2 x 2 with the class unscored, 1 x 1 */
    series_checkpoint ck[3] = {{.name = "run-step1", .sha256 = "01", .has_step = 1, .step = 1, .n_layer = 2, .n_head = 2},
                               {.name = "run-step2", .sha256 = "02", .has_step = 1, .step = 2, .n_layer = 2, .n_head = 2},
                               {.name = "run-step3", .sha256 = "03", .has_step = 1, .step = 3, .n_layer = 1, .n_head = 1}};
    char classes[1][64] = {"induction"};
    double thr[1] = {0.4}, score[12];
    unsigned char label[12] = {0};
    for (int k = 0; k < 12; k++) score[k] = k < 4 ? 0.1 * (k + 1) : k == 8 ? 0.2 : NAN;
    label[3] = 1; /* head 1.1 labelled at step 1; step 2 did not score the class */
    series_data d = {.name = "run", .n_ck = 3, .ck = ck, .n_classes = 1, .classes = classes, .threshold = thr,
                     .n_layer = 2, .n_head = 2, .score = score, .label = label};
    char path[512];
    snprintf(path, sizeof path, "%s/series-diff.html", check_tmpdir());
    ae_error err = {{0}};
    CHECK_MSG(andrea_series_page_write(&d, path, &err) == 0, "%s", err.msg);
    size_t n;
    char *page = (char *)slurp(path, &n);
    if (!page) return;
    const char *changes = strstr(page, "id=\"changes\"");
    CHECK(changes != NULL);
    if (changes) {
        CHECK_MSG(!strstr(changes, "lost") && !strstr(changes, "nan"), "a phantom change: %s", changes);
        CHECK(strstr(changes, "Different shapes (2 x 2 and 1 x 1 heads)") != NULL);
    }
    CHECK(strstr(page, "<tr><th>1.1</th>") != NULL); /* 1.1: the 2 x 2 checkpoints have it */
    free(page);
}

static void test_series_page_class_links_reach_their_sections_whatever_the_names(void) {
    series_checkpoint ck = {.name = "run-step1", .sha256 = "00", .href = "", .has_step = 1, .step = 1, .n_layer = 1, .n_head = 1};
    char classes[2][64] = {"induction", "a b#%41"};
    double thr[2] = {NAN, NAN}, score[2] = {0.5, 0.5};
    unsigned char label[2] = {1, 0};
    series_data d = {.name = "run", .n_ck = 1, .ck = &ck, .n_classes = 2, .classes = classes, .threshold = thr,
                     .n_layer = 1, .n_head = 1, .score = score, .label = label};
    char path[512];
    snprintf(path, sizeof path, "%s/series.html", check_tmpdir());
    ae_error err = {{0}};
    CHECK_MSG(andrea_series_page_write(&d, path, &err) == 0, "%s", err.msg);
    size_t n;
    char *page = (char *)slurp(path, &n);
    if (!page) return;
    int links = 0;
    for (char *h = page; (h = strstr(h, "href=\"#")); links++) {
        h += 7;
        const size_t len = strcspn(h, "\"");
        char id[256];
        snprintf(id, sizeof id, "id=\"%.*s\"", (int)len, h);
        CHECK_MSG(strspn(h, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~%") >= len,
                  "fragment %.*s holds characters a URL writes otherwise", (int)len, h);
        CHECK_MSG(strstr(page, id) != NULL, "no element %s", id);
    }
    CHECK(links >= 2 && strstr(page, "href=\"#class-induction\"") && strstr(page, "href=\"#class-a%20b%23%2541\""));
    free(page);
}

static void test_report_flags_a_labelled_head_without_causal_evidence(void) {
    report_data d;
    syn_data(&d);
    char dir[512];
    snprintf(dir, sizeof dir, "%s/rep_causal", check_tmpdir());
    ae_error err = {{0}};
    andrea_render_options o = {0, 1, 0, NULL, 0, NULL};
    CHECK_MSG(andrea_report_write(&d, dir, &o, &err) == 0, "%s", err.msg);
    char p[1024];
    size_t n;
    snprintf(p, sizeof p, "%s/index.html", dir);
    unsigned char *b = slurp(p, &n);
    int flags = 0;
    for (char *s = b ? (char *)b : ""; (s = strstr(s, "(attention-only)")); s++) flags++;
    CHECK_MSG(flags == 1, "%d flags", flags); /* labelled: 0, 5 (causal 0) and 10 */
    free(b);
    andrea_report_data_free(&d);
}

/* The interactive data: data/meta.js escapes hostile text for JSON-in-script, and each
 * data/L{l}_H{h}.js holds every shown example's lower triangle as fp16 (deflated, base64). */
static int b64_val(int c) {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    return c == '+' ? 62 : c == '/' ? 63 : -1;
}

static void test_interactive_data_is_escaped_and_holds_each_map_as_fp16(void) {
    report_data d;
    syn_data(&d);
    char dir[512], p[1024];
    snprintf(dir, sizeof dir, "%s/rep_int", check_tmpdir());
    ae_error err = {{0}};
    andrea_render_options o = {0, 1, 0, NULL, 0, NULL};
    CHECK_MSG(andrea_report_write(&d, dir, &o, &err) == 0, "%s", err.msg);
    CHECK(file_exists(dir, "assets/andrea.js") && file_exists(dir, "assets/andrea.css"));
    CHECK(file_exists(dir, "explore.html") && file_exists(dir, "compare.html"));
    check_page_escaped(dir, "explore.html");
    check_page_escaped(dir, "compare.html");
    size_t n;
    snprintf(p, sizeof p, "%s/data/meta.js", dir);
    char *meta = (char *)slurp(p, &n);
    CHECK(meta != NULL);
    if (meta) {
        CHECK_MSG(strstr(meta, "<") == NULL && strstr(meta, ">") == NULL && strstr(meta, "&") == NULL,
                  "meta.js holds a raw < > or &");
        CHECK(strstr(meta, "\\u003cscript\\u003ealert(1)\\u003c/script\\u003e") != NULL); /* the suite name */
        CHECK(strstr(meta, "\"\\u003c\"") != NULL); /* the token "<" */
        CHECK(strstr(meta, "\"n\":12,") != NULL && strstr(meta, "\"n\":11,") != NULL);
        CHECK(strstr(meta, "\"tgt\":[1,0,2,1,") != NULL); /* prev-token targets (q, k) */
    }
    free(meta);
    snprintf(p, sizeof p, "%s/data/L1_H2.js", dir);
    char *js = (char *)slurp(p, &n);
    CHECK(js != NULL && !strncmp(js, "andrea_head(1,2,\"", 17));
    if (js) {
        /* decode base64 -> fp16 values; 2 suites x examples of 12 and 11 tokens */
        size_t want = 2 * (12 * 13 / 2 + 11 * 12 / 2), got = 0;
        unsigned char *bytes = malloc(want * 2 + 3);
        uint32_t acc = 0;
        int bits = 0;
        for (const char *c = js + 17; *c && *c != '"'; c++) {
            int v = b64_val(*c);
            if (v < 0) continue; /* '=' padding */
            acc = acc << 6 | (uint32_t)v;
            bits += 6;
            if (bits >= 8) {
                bits -= 8;
                if (got < want * 2 + 3) bytes[got++] = (unsigned char)(acc >> bits);
            }
        }
        /* the data is a zlib stream */
        unsigned char *raw = malloc(want * 2 + 1);
        uLongf raw_len = (uLongf)(want * 2 + 1);
        CHECK(raw && uncompress(raw, &raw_len, bytes, (uLong)got) == Z_OK);
        free(bytes);
        bytes = raw;
        got = raw ? (size_t)raw_len : 0;
        CHECK_MSG(got == want * 2, "inflated %zu bytes, want %zu", got, want * 2);
        float *ref = prev_token_map(ST);
        size_t at = 0;
        int bad = 0;
        for (int s = 0; s < 2; s++)
            for (int e = 0; e < 2; e++)
                for (int q = 0; q < ST - e; q++)
                    for (int k = 0; k <= q; k++, at++) {
                        if (2 * at + 1 >= got) continue;
                        float v = andrea_f16_to_f32((uint16_t)(bytes[2 * at] | bytes[2 * at + 1] << 8));
                        float r = ref[q * ST + k];
                        if (fabsf(v - r) > r * (1.0f / 2048) + 3e-8f) bad++;
                    }
        CHECK_MSG(bad == 0, "%d values off by more than fp16 rounding", bad);
        free(ref);
        free(bytes);
    }
    free(js);
    andrea_report_data_free(&d);
}

static void test_report_write_makes_every_image_it_links(void) {
    report_data d;
    syn_data(&d);
    char dir[512];
    snprintf(dir, sizeof dir, "%s/rep2", check_tmpdir());
    ae_error err = {{0}};
    andrea_render_options o = {0, 1, ANDREA_REPORT_MAPS_ALL, NULL, 0, NULL};
    CHECK_MSG(andrea_report_write(&d, dir, &o, &err) == 0, "%s", err.msg);
    CHECK(file_exists(dir, "maps/L1_H2/s-.3cscript.3ealert.281.29.3c.2fscript.3e_e1.png"));
    CHECK(file_exists(dir, "maps/L0_H0/s-prev_token_e0.png"));
    CHECK(file_exists(dir, "overview/scores_c0-prev_token.png"));
    CHECK(file_exists(dir, "overview/thumbs_s-.3cscript.3ealert.281.29.3c.2fscript.3e.png"));
    CHECK(file_exists(dir, "overview/steps_c0-prev_token.png"));
    /* every src="..." of the index and of one head page exists */
    const char *pages[2] = {"index.html", "heads/L0_H1.html"};
    for (int pg = 0; pg < 2; pg++) {
        char p[1024];
        size_t n;
        snprintf(p, sizeof p, "%s/%s", dir, pages[pg]);
        char *b = (char *)slurp(p, &n);
        CHECK(b != NULL);
        int n_img = 0, missing = 0;
        for (char *s = b; s && (s = strstr(s, "src=\"")); s += 5) {
            char rel[512];
            char *e = strchr(s + 5, '"');
            if (!e) break;
            snprintf(rel, sizeof rel, "%s%.*s", pg ? "heads/" : "", (int)(e - s - 5), s + 5);
            n_img++;
            if (!file_exists(dir, rel)) missing++;
        }
        CHECK_MSG(n_img > 0 && missing == 0, "%s: %d images, %d missing", pages[pg], n_img, missing);
        free(b);
    }
    andrea_report_data_free(&d);
}

static void test_report_write_is_deterministic(void) {
    report_data d;
    syn_data(&d);
    char a[512], b[512];
    snprintf(a, sizeof a, "%s/det_a", check_tmpdir());
    snprintf(b, sizeof b, "%s/det_b", check_tmpdir());
    ae_error err = {{0}};
    andrea_render_options o = {0, 1, ANDREA_REPORT_MAPS_ALL, NULL, 0, NULL};
    CHECK(andrea_report_write(&d, a, &o, &err) == 0);
    CHECK(andrea_report_write(&d, b, &o, &err) == 0);
    const char *files[] = {"index.html", "heads/L1_H1.html", "maps/L1_H1/s-prev_token_e1.png",
                           "overview/scores_c1-_script_alert_1___script_.png", "overview/steps_c0-prev_token.png",
                           "overview/thumbs_s-prev_token.png"};
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        char pa[1024], pb[1024];
        size_t na, nb;
        snprintf(pa, sizeof pa, "%s/%s", a, files[i]);
        snprintf(pb, sizeof pb, "%s/%s", b, files[i]);
        unsigned char *x = slurp(pa, &na), *y = slurp(pb, &nb);
        CHECK_MSG(x && y && na == nb && memcmp(x, y, na) == 0, "%s differs between two renders", files[i]);
        free(x);
        free(y);
    }
    andrea_report_data_free(&d);
}

/* Default: one PNG per head and suite (example 0); every shown example stays interactive. */
static void test_report_default_draws_one_png_per_head_and_suite_and_shows_every_example(void) {
    report_data d;
    syn_data(&d);
    char dir[512], p[1024];
    snprintf(dir, sizeof dir, "%s/maps_default", check_tmpdir());
    ae_error err = {{0}};
    andrea_render_options o = {0, 1, 0, NULL, 0, NULL};
    CHECK_MSG(andrea_report_write(&d, dir, &o, &err) == 0, "%s", err.msg);
    CHECK(file_exists(dir, "maps/L1_H2/s-.3cscript.3ealert.281.29.3c.2fscript.3e_e0.png"));
    CHECK(!file_exists(dir, "maps/L1_H2/s-.3cscript.3ealert.281.29.3c.2fscript.3e_e1.png"));
    CHECK(!file_exists(dir, "maps/L0_H0/s-prev_token_e1.png"));
    size_t n;
    snprintf(p, sizeof p, "%s/heads/L0_H0.html", dir);
    char *b = (char *)slurp(p, &n);
    CHECK(b != NULL);
    if (b) {
        CHECK(strstr(b, "s-prev_token_e0.png") != NULL);
        CHECK(strstr(b, "s-prev_token_e1.png") == NULL);
        CHECK(strstr(b, "data-s=\"0\" data-e=\"1\"") != NULL); /* example 1's interactive map */
    }
    free(b);
    CHECK(andrea_render_examples(&o) == 2);
    o.maps_per_suite = 5;
    CHECK(andrea_render_examples(&o) == 5); /* more PNGs than examples: more examples shown */
    andrea_report_data_free(&d);
}

/* --report-maps labelled, and the default past its budget: PNGs for the labelled heads only
 * (syn_data labels (0,0) and (1,2) in class 0, (1,1) in class 1); every head stays interactive. */
static void test_report_maps_labelled_draws_the_labelled_heads_only(void) {
    report_data d;
    syn_data(&d);
    char dir[512], p[1024];
    snprintf(dir, sizeof dir, "%s/maps_labelled", check_tmpdir());
    ae_error err = {{0}};
    andrea_render_options o = {0, 1, ANDREA_REPORT_MAPS_LABELLED, NULL, 0, NULL};
    CHECK_MSG(andrea_report_write(&d, dir, &o, &err) == 0, "%s", err.msg);
    CHECK(file_exists(dir, "maps/L0_H0/s-prev_token_e0.png"));
    CHECK(file_exists(dir, "maps/L1_H2/s-prev_token_e0.png"));
    CHECK(file_exists(dir, "maps/L1_H1/s-prev_token_e0.png"));
    CHECK(!file_exists(dir, "maps/L0_H0/s-prev_token_e1.png"));
    CHECK(!file_exists(dir, "maps/L0_H1"));
    CHECK(!file_exists(dir, "maps/L1_H0"));
    CHECK(file_exists(dir, "data/L0_H1.js"));
    size_t n;
    snprintf(p, sizeof p, "%s/index.html", dir);
    char *b = (char *)slurp(p, &n);
    CHECK(b && strstr(b, "labelled heads only") != NULL);
    free(b);
    snprintf(p, sizeof p, "%s/heads/L0_H1.html", dir);
    b = (char *)slurp(p, &n);
    /* no PNG: the examples' interactive maps as one placeholder per suite (andrea.js expands it) */
    CHECK(b && strstr(b, ".png") == NULL && strstr(b, "<div class=\"ex-list\" data-l=") != NULL && strstr(b, "hm-slot") == NULL);
    free(b);
    /* the default (--report small) draws the labelled heads' only too, and says so */
    snprintf(dir, sizeof dir, "%s/maps_small", check_tmpdir());
    o.maps_per_suite = 0;
    CHECK_MSG(andrea_report_write(&d, dir, &o, &err) == 0, "%s", err.msg);
    CHECK(file_exists(dir, "maps/L1_H1/s-prev_token_e0.png"));
    CHECK(!file_exists(dir, "maps/L0_H1"));
    CHECK(file_exists(dir, "data/L0_H1.js"));
    snprintf(p, sizeof p, "%s/index.html", dir);
    b = (char *)slurp(p, &n);
    CHECK(b && strstr(b, "labelled heads only (the default, --report small)") != NULL);
    free(b);
    /* --report full within its budget (6 heads x 2 suites) draws every head and says nothing */
    snprintf(dir, sizeof dir, "%s/maps_budget", check_tmpdir());
    o.full = 1;
    CHECK_MSG(andrea_report_write(&d, dir, &o, &err) == 0, "%s", err.msg);
    CHECK(file_exists(dir, "maps/L0_H1/s-prev_token_e0.png"));
    snprintf(p, sizeof p, "%s/index.html", dir);
    b = (char *)slurp(p, &n);
    CHECK(b && strstr(b, "labelled heads only") == NULL);
    free(b);
    andrea_report_data_free(&d);
}

static void test_report_maps_none_writes_no_heatmap_but_keeps_the_overviews(void) {
    report_data d;
    syn_data(&d);
    char dir[512], p[1024];
    snprintf(dir, sizeof dir, "%s/maps_none", check_tmpdir());
    ae_error err = {{0}};
    andrea_render_options o = {0, 1, ANDREA_REPORT_MAPS_NONE, NULL, 0, NULL};
    CHECK_MSG(andrea_report_write(&d, dir, &o, &err) == 0, "%s", err.msg);
    CHECK(!file_exists(dir, "maps"));
    CHECK(file_exists(dir, "overview/thumbs_s-prev_token.png"));
    CHECK(file_exists(dir, "data/L0_H0.js"));
    CHECK(file_exists(dir, "index.html"));
    size_t n;
    snprintf(p, sizeof p, "%s/heads/L1_H1.html", dir);
    char *b = (char *)slurp(p, &n);
    /* no PNG: the examples' interactive maps as one placeholder per suite (andrea.js expands it) */
    CHECK(b && strstr(b, ".png") == NULL && strstr(b, "<div class=\"ex-list\" data-l=") != NULL && strstr(b, "hm-slot") == NULL);
    free(b);
    andrea_report_data_free(&d);
}

static void test_report_into_a_path_under_a_file_fails_with_its_name(void) {
    report_data d;
    syn_data(&d);
    char file[512], dir[600];
    snprintf(file, sizeof file, "%s/plainfile", check_tmpdir());
    FILE *f = fopen(file, "w");
    if (f) fclose(f);
    snprintf(dir, sizeof dir, "%s/out", file);
    ae_error err = {{0}};
    andrea_render_options o = {0, 1, 0, NULL, 0, NULL};
    CHECK(andrea_report_write(&d, dir, &o, &err) == -1);
    CHECK_MSG(strstr(err.msg, "plainfile") != NULL, "got '%s'", err.msg);
    andrea_report_data_free(&d);
}

static void test_report_without_scores_still_renders_maps(void) {
    report_data d;
    syn_data(&d);
    free(d.scores);
    d.scores = NULL;
    d.n_steps = 0;
    char dir[512];
    snprintf(dir, sizeof dir, "%s/noscores", check_tmpdir());
    ae_error err = {{0}};
    andrea_render_options o = {0, 1, 0, NULL, 1, NULL}; /* full: no head is labelled without scores */
    CHECK_MSG(andrea_report_write(&d, dir, &o, &err) == 0, "%s", err.msg);
    CHECK(file_exists(dir, "index.html"));
    CHECK(file_exists(dir, "maps/L0_H0/s-prev_token_e0.png"));
    CHECK(!file_exists(dir, "overview/scores_c0-prev_token.png"));
    andrea_report_data_free(&d);
}

int main(void) {
    RUN(test_colormap_endpoints_are_magma_table_ends);
    RUN(test_colormap_clips_out_of_range_and_greys_nan);
    RUN(test_colormap_lightness_increases_along_the_scale);
    RUN(test_token_label_makes_invisible_bytes_visible);
    RUN(test_token_label_keeps_latin1_in_png_mode_and_escapes_what_the_font_lacks);
    RUN(test_png_font_draws_every_latin1_character);
    RUN(test_token_label_truncates_long_tokens_with_an_ellipsis);
    RUN(test_html_escaping_covers_the_five_special_characters);
    RUN(test_html_shows_bytes_that_are_not_printable_utf8_as_hex);
    RUN(test_bidi_controls_are_shown_as_hex_in_labels_and_pages);
    RUN(test_html_labels_show_invisible_characters_and_marker_look_alikes);
    RUN(test_file_slug_keeps_only_safe_characters);
    RUN(test_file_tag_is_one_to_one_and_safe);
    RUN(test_png_bytes_are_the_same_for_the_same_drawing);
    RUN(test_heatmap_cells_have_the_colormap_colour_of_their_value);
    RUN(test_png_of_a_heatmap_decodes_to_the_canvas_pixels);
    RUN(test_png_of_noise_and_tiny_canvases_decodes_to_their_pixels);
    RUN(test_png_wider_than_the_deflate_window_decodes_to_its_pixels);
    RUN(test_large_png_is_encoded_in_bands_that_decode_to_its_pixels_on_any_threads);
    RUN(test_long_maps_are_cropped_and_say_so);
    RUN(test_absurd_canvas_size_is_refused_with_a_message);
    RUN(test_png_into_a_missing_folder_fails_and_names_the_file);
    RUN(test_report_write_escapes_every_name_and_path);
    RUN(test_report_pages_are_utf8_whatever_bytes_the_paths_hold);
    RUN(test_report_flags_a_labelled_head_without_causal_evidence);
    RUN(test_series_page_class_links_reach_their_sections_whatever_the_names);
    RUN(test_series_page_changes_are_diffs_of_measured_heads);
    RUN(test_report_write_makes_every_image_it_links);
    RUN(test_interactive_data_is_escaped_and_holds_each_map_as_fp16);
    RUN(test_report_write_is_deterministic);
    RUN(test_report_into_a_path_under_a_file_fails_with_its_name);
    RUN(test_report_without_scores_still_renders_maps);
    RUN(test_report_default_draws_one_png_per_head_and_suite_and_shows_every_example);
    RUN(test_report_maps_none_writes_no_heatmap_but_keeps_the_overviews);
    RUN(test_report_maps_labelled_draws_the_labelled_heads_only);
    return check_summary("test_report");
}
