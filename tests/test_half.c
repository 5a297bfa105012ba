/* test_half.c — the array conversions of common/half.h give the scalar routines' bits: every one
 * of the 2^16 halves widened (in a separate buffer and in place), and fp32 values of every sign
 * and exponent with the mantissas that decide the rounding (ties to even both ways, one ulp each
 * side of a tie, overflow to Inf, the subnormal range), NaNs among them, at every offset of a
 * block of 8 (the F16C path converts 8 at a time and hands blocks with a NaN to the scalar one). */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../common/half.h"
#include "check.h"

static float from_bits(uint32_t u) {
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

static uint32_t bits(float f) {
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

static void test_every_half_widens_to_the_scalar_routines_bits_also_in_place(void) {
    const size_t n = 65536 + 5; /* a tail that is not a whole block */
    uint16_t *h = malloc(n * sizeof *h);
    float *f = malloc(n * sizeof *f), *in_place = malloc(n * sizeof *in_place);
    CHECK(h && f && in_place);
    if (!h || !f || !in_place) goto out;
    for (size_t i = 0; i < n; i++) h[i] = (uint16_t)(i * 40503u); /* every half, scattered */
    andrea_f16_to_f32_n(f, h, n);
    memcpy(in_place, h, n * sizeof *h);
    andrea_f16_to_f32_n(in_place, (const uint16_t *)in_place, n);
    size_t bad = 0, bad_in_place = 0;
    for (size_t i = 0; i < n; i++) {
        const uint32_t want = bits(andrea_f16_to_f32(h[i]));
        bad += bits(f[i]) != want;
        bad_in_place += bits(in_place[i]) != want;
    }
    CHECK(bad == 0);
    CHECK(bad_in_place == 0);
out:
    free(h);
    free(f);
    free(in_place);
}

/* The low 13 mantissa bits decide a normal half's rounding, the exponent where a value turns
 * subnormal or overflows: every exponent and sign with low bits around the tie and the ends,
 * and a spread of high mantissa bits (odd and even halves). */
static size_t rounding_cases(float *out) {
    static const uint32_t low[] = {0x0000, 0x0001, 0x0fff, 0x1000, 0x1001, 0x1fff, 0x0800, 0x17ff};
    static const uint32_t high[] = {0x000000, 0x002000, 0x004000, 0x3fe000, 0x7fe000, 0x555000, 0x2aa000};
    size_t n = 0;
    for (uint32_t s = 0; s < 2; s++)
        for (uint32_t e = 0; e < 256; e++)
            for (size_t a = 0; a < sizeof high / sizeof *high; a++)
                for (size_t b = 0; b < sizeof low / sizeof *low; b++) {
                    uint32_t m = high[a] | low[b];
                    out[n++] = from_bits(s << 31 | e << 23 | m); /* e = 255: Inf and NaNs */
                }
    return n;
}

static void test_fp32_values_round_to_the_scalar_routines_bits_at_every_block_offset(void) {
    const size_t cap = 2 * 256 * 7 * 8 + 64;
    float *f = malloc(cap * sizeof *f);
    uint16_t *h = malloc(cap * sizeof *h);
    CHECK(f && h);
    if (!f || !h) goto out;
    size_t n = rounding_cases(f);
    size_t bad = 0;
    for (size_t shift = 0; shift < 8; shift++) { /* NaNs and ties land in every lane */
        andrea_f32_to_f16_n(h, f + shift, n - shift);
        for (size_t i = 0; i + shift < n; i++) bad += h[i] != andrea_f32_to_f16(f[i + shift]);
    }
    CHECK(bad == 0);
    /* a long run of ordinary map values: probabilities of every magnitude */
    srand(7);
    for (size_t i = 0; i < cap; i++) f[i] = powf((float)rand() / RAND_MAX, 12.0f);
    andrea_f32_to_f16_n(h, f, cap);
    bad = 0;
    for (size_t i = 0; i < cap; i++) bad += h[i] != andrea_f32_to_f16(f[i]);
    CHECK(bad == 0);
    /* the scalar routine itself on the cases the arrays lean on */
    CHECK(andrea_f32_to_f16(from_bits(0x3f801000u)) == 0x3c00); /* tie, even: down */
    CHECK(andrea_f32_to_f16(from_bits(0x3f803000u)) == 0x3c02); /* tie, odd: up */
    CHECK(andrea_f32_to_f16(NAN) == 0x7e00);
out:
    free(f);
    free(h);
}

int main(void) {
    RUN(test_every_half_widens_to_the_scalar_routines_bits_also_in_place);
    RUN(test_fp32_values_round_to_the_scalar_routines_bits_at_every_block_offset);
    return check_summary("test_half");
}
