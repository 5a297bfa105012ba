/* buf.h — the one growable buffer: bytes appended at the end (andrea_buf), and the one growth rule
 * for arrays of any element type (andrea_grow).
 *
 * Job: every text or byte stream built piece by piece (HTML pages, JSON data files, probe texts,
 * encoded PNGs, SQL result renderings) and every array that grows by doubling goes through here,
 * so the size arithmetic is checked in one place (common/checked_size.h).
 * Invariants: b->s[0 .. len) holds the bytes added, in order; once anything was added (even zero
 * bytes) s is non-NULL and s[len] == 0, so the text can be used as a C string; len < cap. A
 * buffer whose growth failed (size_t overflow or out of memory) stays failed: later adds do
 * nothing and return -1, and its contents are not used (check andrea_buf_failed before writing).
 * Zero-initialised ({0} or andrea_buf_init) is an empty buffer.
 * Failure contract: no error message (the caller knows what it was building and says so);
 * -1 from every add that could not complete. andrea_grow leaves the array and its capacity
 * untouched on failure.
 */
#ifndef ANDREA_BUF_H
#define ANDREA_BUF_H

#include <stddef.h>

typedef struct {
    char *s;    /* [cap] bytes, NUL after the last one added; NULL before the first add */
    size_t len; /* bytes added */
    size_t cap; /* bytes allocated */
    int failed; /* sticky: an add ran out of memory or overflowed size_t */
} andrea_buf;

void andrea_buf_init(andrea_buf *b);
void andrea_buf_free(andrea_buf *b);  /* frees and leaves an empty buffer */
int andrea_buf_failed(const andrea_buf *b);
/* Room for `extra` more bytes and the NUL: 0, or -1 (and failed) on overflow / out of memory. */
int andrea_buf_reserve(andrea_buf *b, size_t extra);
int andrea_buf_add(andrea_buf *b, const void *bytes, size_t n);
int andrea_buf_puts(andrea_buf *b, const char *s);
int andrea_buf_printf(andrea_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Makes room for `need` elements of `elem` bytes in the array *items (items is a T **): when
 * need > *cap, the capacity doubles from `first` (or from *cap) until it holds need, and the array
 * is reallocated to it. Returns 0, or -1 with *items and *cap untouched when the byte size
 * overflows size_t or memory runs out. */
int andrea_grow(void *items, size_t *cap, size_t need, size_t elem, size_t first);

#endif
