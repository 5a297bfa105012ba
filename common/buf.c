/* buf.c — the growable buffer and the array growth rule (see buf.h). */
#include "buf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checked_size.h"

void andrea_buf_init(andrea_buf *b) { memset(b, 0, sizeof *b); }

void andrea_buf_free(andrea_buf *b) {
    free(b->s);
    andrea_buf_init(b);
}

int andrea_buf_failed(const andrea_buf *b) { return b->failed; }

/* The capacity: `from` (or `first` when from is 0) doubled until it is at least need; -1 on
 * overflow. */
static int doubled(size_t from, size_t first, size_t need, size_t *out) {
    size_t cap = from ? from : (first ? first : 1);
    while (cap < need) {
        if (ae_mul(cap, 2, &cap)) return -1;
    }
    *out = cap;
    return 0;
}

int andrea_grow(void *items, size_t *cap, size_t need, size_t elem, size_t first) {
    if (need <= *cap) return 0;
    size_t ncap, bytes;
    if (doubled(*cap, first, need, &ncap) || ae_mul(ncap, elem ? elem : 1, &bytes)) return -1;
    void *old;
    memcpy(&old, items, sizeof old); /* items is a T **: read and write the pointer as bytes */
    void *p = realloc(old, bytes);
    if (!p) return -1;
    memcpy(items, &p, sizeof p);
    *cap = ncap;
    return 0;
}

int andrea_buf_reserve(andrea_buf *b, size_t extra) {
    size_t need;
    if (b->failed) return -1;
    if (ae_add(b->len, extra, &need) || ae_add(need, 1, &need) || andrea_grow(&b->s, &b->cap, need, 1, 256)) {
        b->failed = 1;
        return -1;
    }
    return 0;
}

int andrea_buf_add(andrea_buf *b, const void *bytes, size_t n) {
    if (andrea_buf_reserve(b, n)) return -1;
    if (n) memcpy(b->s + b->len, bytes, n);
    b->len += n;
    b->s[b->len] = 0;
    return 0;
}

int andrea_buf_puts(andrea_buf *b, const char *s) { return andrea_buf_add(b, s, strlen(s)); }

int andrea_buf_printf(andrea_buf *b, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0) {
        b->failed = 1;
        return -1;
    }
    if (andrea_buf_reserve(b, (size_t)n)) return -1;
    va_start(ap, fmt);
    vsnprintf(b->s + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
    return 0;
}
