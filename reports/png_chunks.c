/* png_chunks.c — the PNG container (see png_chunks.h; PNG specification, 5.3 and 11.2.2). */
#include "png_chunks.h"

#include <string.h>
#include <zlib.h>

void andrea_png_put_be32(unsigned char *p, uint32_t v) {
    p[0] = (unsigned char)(v >> 24);
    p[1] = (unsigned char)(v >> 16);
    p[2] = (unsigned char)(v >> 8);
    p[3] = (unsigned char)v;
}

size_t andrea_png_chunk(unsigned char *out, size_t at, const char *type, size_t len) {
    andrea_png_put_be32(out + at, (uint32_t)len);
    memcpy(out + at + 4, type, 4);
    uLong crc = crc32(0L, out + at + 4, 4u);
    for (size_t done = 0; done < len;) { /* crc32 takes uInt lengths */
        size_t piece = len - done < 0x40000000u ? len - done : 0x40000000u;
        crc = crc32(crc, out + at + 8 + done, (uInt)piece);
        done += piece;
    }
    andrea_png_put_be32(out + at + 8 + len, (uint32_t)crc);
    return at + 12 + len;
}

size_t andrea_png_head(unsigned char *out, int w, int h) {
    static const unsigned char sig[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
    memcpy(out, sig, 8);
    unsigned char *ih = out + 8 + 8; /* IHDR: width, height, depth 8, RGB, deflate, filter 0, no interlace */
    andrea_png_put_be32(ih, (uint32_t)w);
    andrea_png_put_be32(ih + 4, (uint32_t)h);
    memcpy(ih + 8, "\x08\x02\x00\x00\x00", 5);
    return andrea_png_chunk(out, 8, "IHDR", 13);
}
