/* finite.h — is any of these floats NaN or Inf? For the checks that keep a model whose numbers
 * overflow float32 from turning into silent NaN results (weights at load, activations after each
 * layer, values before they are written). */
#ifndef ANDREA_FINITE_H
#define ANDREA_FINITE_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* 1 when any of the n floats is NaN or Inf (exponent bits all ones). Branch-free over the bits so
 * the compiler vectorises it (an element-wise isfinite loop was 20% of loading a 500 MB checkpoint,
 * perf); memcpy, not a cast, reads the bits (no aliasing question). */
static inline int ae_any_nonfinite(const float *p, size_t n) {
    uint32_t bad = 0;
#pragma omp simd reduction(| : bad)
    for (size_t j = 0; j < n; j++) {
        uint32_t u;
        memcpy(&u, p + j, sizeof u);
        bad |= (uint32_t)((u & 0x7f800000u) == 0x7f800000u);
    }
    return bad != 0;
}

#endif
