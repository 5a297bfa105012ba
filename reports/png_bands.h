/* png_bands.h — zlib-encoded PNGs of large report images, bands of rows compressed in parallel.
 *
 * Job: encode 8-bit RGB pixels as a PNG (filter "none", zlib level 3: the report's libpng
 * settings, canvas.c) whose one zlib stream is made of bands of rows, each band deflated on its
 * own (an OpenMP task; the tasks join the caller's team where there is one) and ended on a byte
 * boundary by a sync flush, as pigz does. An XL thumbnail grid (3478 x 7433 px, 77 MB of pixels)
 * was one thread's zlib for ~0.5 s; its 74 bands run on every idle thread.
 * Invariants: a band holds the rows of PNG_BANDS_BYTES filtered bytes (at least one row), so the
 * bytes depend only on the pixels and zlib, never on the number of threads; the stream decodes to
 * exactly the pixels given; the Adler-32 is combined from the bands'.
 * Failure contract: 0 with the PNG in *out (malloc'd; caller frees); -1 with "canvas: problem"
 * in err (size out of range, out of memory, a zlib error), nothing allocated.
 */
#ifndef ANDREA_REPORT_PNG_BANDS_H
#define ANDREA_REPORT_PNG_BANDS_H

#include <stddef.h>
#include <stdint.h>

#include "../common/error.h"

#define PNG_BANDS_BYTES ((size_t)1 << 20)

/* px: [h, w, 3] row-major; level: zlib's 0..9. */
int andrea_png_bands_encode(const uint8_t *px, int w, int h, int level, unsigned char **out, size_t *out_len,
                            ae_error *err);

#endif
