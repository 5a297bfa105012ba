/* attn_code8.c — the 8-bit code of attention probabilities (see attn_code8.h). */
#include "attn_code8.h"

#include <math.h>
#include <pthread.h>
#include <string.h>

#define LOG_CODES 120   /* codes 1..120: log grid */
#define LOG_LO 1e-4     /* its first value: the log colour scale's floor */
#define GRIDS_MEET 0.109 /* code 120: where a log step (0.109 * 0.0605) equals a linear one (0.891 / 134) */

static float table[256];
static float mid[254]; /* mid[j]: the midpoint of codes j and j + 1 (j < 254) */
/* The nearest code of the first float of each bucket of [0, 1]: floats sharing their exponent and
 * top 8 mantissa bits (a bucket spans at most 2^-8 of its value, less than the closest codes'
 * relative distance, 0.665 % at 1), so a bucket holds at most one midpoint and a value's nearest
 * code is its bucket's or the next: one look-up and one comparison instead of a search. */
#define BUCKET_SHIFT 15
static uint8_t bucket_code[(127u << 8) + 1]; /* exponents up to 127 (1.0): the largest bucket */
static pthread_once_t once = PTHREAD_ONCE_INIT;

/* The nearest code by search (ties go down): the reference the buckets are built from. */
static uint8_t nearest_by_search(float p) {
    int lo = 0, hi = ANDREA_CODE8_NAN - 1;
    while (lo < hi) {
        const int m = (lo + hi) / 2;
        if (p <= mid[m]) hi = m;
        else lo = m + 1;
    }
    return (uint8_t)lo;
}

static uint32_t float_bits(float f) {
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

static void build(void) {
    const double ratio = pow(GRIDS_MEET / LOG_LO, 1.0 / (LOG_CODES - 1));
    const double step = (1.0 - GRIDS_MEET) / (ANDREA_CODE8_NAN - 1 - LOG_CODES);
    table[0] = 0.0f;
    for (int j = 1; j <= LOG_CODES; j++) table[j] = (float)(LOG_LO * pow(ratio, j - 1));
    for (int j = LOG_CODES + 1; j < ANDREA_CODE8_NAN; j++) table[j] = (float)(GRIDS_MEET + step * (j - LOG_CODES));
    table[ANDREA_CODE8_NAN - 1] = 1.0f; /* exactly, whatever the rounding of the sum */
    table[ANDREA_CODE8_NAN] = NAN;
    for (int j = 0; j < ANDREA_CODE8_NAN - 1; j++) mid[j] = 0.5f * (table[j] + table[j + 1]);
    for (uint32_t b = 0; b < sizeof bucket_code; b++) {
        const uint32_t u = b << BUCKET_SHIFT;
        float f;
        memcpy(&f, &u, sizeof f);
        bucket_code[b] = nearest_by_search(f);
    }
}

const float *andrea_code8_table(void) {
    pthread_once(&once, build);
    return table;
}

void andrea_code8_encode_n(uint8_t *dst, const float *src, size_t n) {
    pthread_once(&once, build);
    for (size_t i = 0; i < n; i++) {
        const float p = src[i];
        if (!isfinite(p)) {
            dst[i] = ANDREA_CODE8_NAN;
            continue;
        }
        if (!(p > 0.0f)) { /* zero, negative */
            dst[i] = 0;
            continue;
        }
        if (p >= 1.0f) {
            dst[i] = ANDREA_CODE8_NAN - 1;
            continue;
        }
        uint8_t c = bucket_code[float_bits(p) >> BUCKET_SHIFT];
        if (c < ANDREA_CODE8_NAN - 1 && p > mid[c]) c++;
        dst[i] = c;
    }
}
