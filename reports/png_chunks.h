/* png_chunks.h — the PNG container around an encoder's zlib stream.
 *
 * Job: the signature, IHDR of an 8-bit RGB image and the chunks (length, type, data, CRC) that the
 * report's own encoders (png_rows.c, png_bands.c) write around their zlib streams.
 * Invariants: a chunk's data is written in place by the caller at out + at + 8; the caller has
 * reserved room for the chunk (12 bytes beyond its data) and keeps every length below 2^31.
 * Failure contract: none (no allocation, no I/O).
 */
#ifndef ANDREA_REPORT_PNG_CHUNKS_H
#define ANDREA_REPORT_PNG_CHUNKS_H

#include <stddef.h>
#include <stdint.h>

#define PNG_HEAD_BYTES 33 /* signature 8 + IHDR chunk 25 */

void andrea_png_put_be32(unsigned char *p, uint32_t v);
/* A chunk whose data already sits at out + at + 8: fills its length and type, appends its CRC;
 * returns the offset just past it. */
size_t andrea_png_chunk(unsigned char *out, size_t at, const char *type, size_t len);
/* The signature and the IHDR of a w x h 8-bit RGB image (no interlace) at out; returns
 * PNG_HEAD_BYTES. */
size_t andrea_png_head(unsigned char *out, int w, int h);

#endif
