/* checked_size.h — overflow-safe size arithmetic for every allocation a file can drive.
 * Each helper returns 0 and stores the result, or -1 (result untouched) on overflow. */
#ifndef ANDREA_CHECKED_SIZE_H
#define ANDREA_CHECKED_SIZE_H

#include <stddef.h>
#include <stdint.h>

static inline int ae_mul(size_t a, size_t b, size_t *out) {
    size_t r;
    if (__builtin_mul_overflow(a, b, &r)) return -1;
    *out = r;
    return 0;
}

static inline int ae_add(size_t a, size_t b, size_t *out) {
    size_t r;
    if (__builtin_add_overflow(a, b, &r)) return -1;
    *out = r;
    return 0;
}

/* Product of n dimensions; a negative dimension or an overflow returns -1. */
static inline int ae_mul_dims(const long long *dims, int n, size_t *out) {
    size_t r = 1;
    for (int i = 0; i < n; i++) {
        if (dims[i] < 0 || ae_mul(r, (size_t)dims[i], &r)) return -1;
    }
    *out = r;
    return 0;
}

#endif
