/* half.h — fp16 and bf16 <-> fp32, shared by the checkpoint readers, the dump and the catalog.
 * No state, no failure: every bit pattern has a defined result. */
#ifndef ANDREA_HALF_H
#define ANDREA_HALF_H

#include <stddef.h>
#include <stdint.h>

/* Number conversions shared by readers and writers. bf16/fp16 -> fp32 are exact; fp32 -> bf16 and
 * fp32 -> fp16 round to nearest even (NaN stays NaN, overflow becomes Inf). */
static inline float andrea_bf16_to_f32(uint16_t h) {
    union { uint32_t u; float f; } v;
    v.u = (uint32_t)h << 16;
    return v.f;
}
float andrea_f16_to_f32(uint16_t h);
uint16_t andrea_f32_to_bf16(float f);
uint16_t andrea_f32_to_f16(float f);
/* n values at once, the same bits as the scalar routines (with the CPU's F16C instructions where
 * it has them). andrea_f16_to_f32_n may widen in place: dst may be src's own memory. */
void andrea_f32_to_f16_n(uint16_t *dst, const float *src, size_t n);
void andrea_f16_to_f32_n(float *dst, const uint16_t *src, size_t n);

#endif
