/* png_bands.c — banded parallel deflate for large report images (see png_bands.h).
 *
 * The stream (RFC 1950/1951): zlib header; band 0's raw deflate ... band n-1's, each but the last
 * ended by Z_SYNC_FLUSH (an empty stored block: the next band starts on a byte boundary and a
 * fresh dictionary is legal, since no match reaches back past a band) and the last by Z_FINISH;
 * then the Adler-32 of all filtered bytes, combined from the bands' with adler32_combine. */
#include "png_bands.h"

#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "../common/checked_size.h"
#include "png_chunks.h"

typedef struct {
    unsigned char *z; /* raw deflate of the band */
    size_t len;
    uLong adler;
    size_t raw; /* filtered bytes: rows * (1 + 3w) */
    int failed;
} band;

/* Deflates rows [y0, y1) (each with its filter byte 0) into b. */
static void band_deflate(const uint8_t *px, size_t n, int y0, int y1, int last, int level, band *b) {
    static const unsigned char filter_none = 0;
    z_stream zs;
    memset(&zs, 0, sizeof zs);
    b->raw = (size_t)(y1 - y0) * (n + 1);
    b->adler = adler32(0L, Z_NULL, 0);
    if (deflateInit2(&zs, level, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
        b->failed = 1;
        return;
    }
    size_t cap = deflateBound(&zs, (uLong)b->raw) + 64; /* + the sync flush's empty block */
    b->z = malloc(cap);
    if (!b->z) {
        deflateEnd(&zs);
        b->failed = 1;
        return;
    }
    zs.next_out = b->z;
    zs.avail_out = (uInt)cap;
    int rc = Z_OK;
    for (int y = y0; y < y1 && rc == Z_OK; y++) {
        const unsigned char *row = px + (size_t)y * n;
        b->adler = adler32(adler32(b->adler, &filter_none, 1), row, (uInt)n);
        zs.next_in = (Bytef *)&filter_none;
        zs.avail_in = 1;
        rc = deflate(&zs, Z_NO_FLUSH);
        zs.next_in = (Bytef *)row;
        zs.avail_in = (uInt)n;
        if (rc == Z_OK) rc = deflate(&zs, y + 1 < y1 ? Z_NO_FLUSH : last ? Z_FINISH : Z_SYNC_FLUSH);
        if (rc == Z_OK && zs.avail_in) rc = Z_BUF_ERROR; /* the bound was too small: cannot happen */
    }
    b->len = cap - zs.avail_out;
    /* a sync flush is complete only when it left room in the output */
    if (rc != (last ? Z_STREAM_END : Z_OK) || (!last && zs.avail_out == 0)) b->failed = 1;
    deflateEnd(&zs);
}

int andrea_png_bands_encode(const uint8_t *px, int w, int h, int level, unsigned char **out, size_t *out_len,
                            ae_error *err) {
    const size_t n = (size_t)w * 3;
    size_t raw;
    if (w < 1 || h < 1 || ae_mul(n + 1, (size_t)h, &raw) || n + 1 > 0x7fffffffu || raw > ((size_t)1 << 40))
        return andrea_fail(err, "canvas: %d x %d image out of range for the banded encoder", w, h);
    const size_t rows_per = PNG_BANDS_BYTES / (n + 1) > 0 ? PNG_BANDS_BYTES / (n + 1) : 1;
    const int n_bands = (int)(((size_t)h + rows_per - 1) / rows_per);
    band *bands = calloc((size_t)n_bands, sizeof *bands);
    if (!bands) return andrea_fail(err, "canvas: out of memory encoding a %d x %d PNG", w, h);
#pragma omp taskloop grainsize(1)
    for (int i = 0; i < n_bands; i++) {
        const size_t y0 = (size_t)i * rows_per, y1 = y0 + rows_per < (size_t)h ? y0 + rows_per : (size_t)h;
        band_deflate(px, n, (int)y0, (int)y1, i == n_bands - 1, level, &bands[i]);
    }
    size_t total = PNG_HEAD_BYTES + 12 + 2 + 4 + 12; /* head, IDAT framing, zlib header and check, IEND */
    int failed = 0;
    uLong adler = adler32(0L, Z_NULL, 0);
    for (int i = 0; i < n_bands; i++) {
        failed |= bands[i].failed;
        if (!failed) adler = adler32_combine(adler, bands[i].adler, (z_off_t)bands[i].raw);
        total += bands[i].len;
    }
    /* one IDAT chunk: its length must stay below 2^31 */
    unsigned char *buf = failed || total > 0x7fffff00u ? NULL : malloc(total);
    if (buf) {
        size_t at = andrea_png_head(buf, w, h), z = at + 8;
        buf[z++] = 0x78; /* zlib header: deflate, 32 KiB window, no dictionary */
        buf[z++] = 0x01;
        for (int i = 0; i < n_bands; i++) {
            memcpy(buf + z, bands[i].z, bands[i].len);
            z += bands[i].len;
        }
        andrea_png_put_be32(buf + z, (uint32_t)adler);
        z += 4;
        at = andrea_png_chunk(buf, at, "IDAT", z - at - 8);
        at = andrea_png_chunk(buf, at, "IEND", 0);
        *out = buf;
        *out_len = at;
    }
    for (int i = 0; i < n_bands; i++) free(bands[i].z);
    free(bands);
    if (!buf)
        return andrea_fail(err, failed ? "canvas: zlib failed encoding a %d x %d PNG"
                                       : "canvas: out of memory encoding a %d x %d PNG", w, h);
    return 0;
}
