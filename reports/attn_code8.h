/* attn_code8.h — the report's 8-bit code for attention probabilities ("summarised" maps).
 *
 * Job: store a probability in one byte such that the report's two colour scales (linear over
 * [0, 1], log over [1e-4, 1], 256 colours each: reports/assets/andrea.js) draw it within one
 * colour step of its exact value, at half the bytes of fp16. The 256 codes:
 *   0              p = 0 (everything below 5e-5 rounds here)
 *   1 .. 120       log-spaced from 1e-4 to 0.109 (ratio 1.0605: within 3.0 % relative)
 *   121 .. 254     linear from 0.109 to 1 (step 0.00665: within 0.0033 absolute, 0.84 of a colour
 *                  step of the linear scale)
 *   255            not a probability (NaN or infinite input): read back as NaN, never as a number
 * The two grids meet where their steps are equal, so every code is within ANDREA_CODE8_ABS of its
 * value and, from 1e-4 up, within ANDREA_CODE8_REL of it. Encoding picks the nearest code.
 * No state beyond the table built once; no failure. */
#ifndef ANDREA_ATTN_CODE8_H
#define ANDREA_ATTN_CODE8_H

#include <stddef.h>
#include <stdint.h>

#define ANDREA_CODE8_NAN 255
/* Bounds of |decoded - p| for p in [0, 1] (tests/test_attn_code8.c checks them code by code). */
#define ANDREA_CODE8_ABS 0.0034
#define ANDREA_CODE8_REL 0.031 /* relative, for p >= 1e-4 */

/* The value of each code (table[255] is NaN); the same table every call. */
const float *andrea_code8_table(void);
/* dst[i] = the nearest code of src[i] (< 0 as 0, > 1 as 1, non-finite as ANDREA_CODE8_NAN). */
void andrea_code8_encode_n(uint8_t *dst, const float *src, size_t n);

#endif
