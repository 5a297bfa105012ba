/* png_rows.h — the report's PNG encoder for images whose rows repeat the row above.
 *
 * Job: encode 8-bit RGB pixels as a PNG (filter "none") whose zlib stream is one deflate block
 * with only two match distances: the row above (1 + 3w bytes back: its filter byte and row) and
 * the pixel before (3 bytes back: a run of one colour). At each position the longer of the two
 * is taken when it is at least 3 bytes, else one literal: no hash table, no search, so it is
 * several times faster than zlib's level 3 on report heatmaps, whose hash chains find the same
 * matches. The block's Huffman codes are built from its symbols (dynamic) or are deflate's fixed
 * codes, whichever is smaller.
 * Invariants: the bytes depend only on the pixels; they decode (inflate) to exactly the pixels
 * given; widths up to PNG_ROWS_MAX_W (the row above within deflate's 32 KiB window).
 * Failure contract: 0 with the PNG in *out (malloc'd; caller frees); 1, nothing allocated, when
 * the stream would pass 1/PNG_ROWS_MIN_RATIO of the pixel bytes (rows that do not repeat: leave
 * the image to zlib); -1 with "canvas: problem" in err (size out of range, out of memory).
 */
#ifndef ANDREA_REPORT_PNG_ROWS_H
#define ANDREA_REPORT_PNG_ROWS_H

#include <stddef.h>
#include <stdint.h>

#include "../common/error.h"

#define PNG_ROWS_MAX_W 10922 /* 1 + 3 * w <= 32768 */
/* The stream must be at most 1/20 of the pixel bytes (as counted with the fixed codes while
 * matching), else the caller's zlib encodes the image. Measured on report images (pixel bytes
 * per stream byte, fixed codes vs zlib level 3): heatmaps 29 vs 37, where 12 of every 13 rows
 * repeat the row above outside the labels; thumbnail grids 6-15 vs 14-27 and score grids 9 vs
 * 43, whose rows do not repeat (one pixel per position; a number in each cell). */
#define PNG_ROWS_MIN_RATIO 20

/* px: [h, w, 3] row-major. */
int andrea_png_rows_encode(const uint8_t *px, int w, int h, unsigned char **out, size_t *out_len, ae_error *err);

#endif
