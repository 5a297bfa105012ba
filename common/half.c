/* half.c — see half.h. */
#include "half.h"

#include <math.h>

float andrea_f16_to_f32(uint16_t h) {
    uint32_t sign = (uint32_t)(h >> 15) << 31, exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
    union { uint32_t u; float f; } v;
    if (exp == 0x1f) {
        v.u = sign | 0x7f800000u | (mant << 13); /* Inf or NaN */
    } else if (exp == 0) {
        /* zero or subnormal: mant * 2^-24, exact in fp32 */
        float f = ldexpf((float)mant, -24);
        return sign ? -f : f;
    } else {
        v.u = sign | ((exp + 112) << 23) | (mant << 13);
    }
    return v.f;
}

uint16_t andrea_f32_to_bf16(float f) {
    union { float f; uint32_t u; } v = {f};
    if ((v.u & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((v.u >> 16) | 0x40); /* quiet NaN */
    uint32_t rounding = 0x7fffu + ((v.u >> 16) & 1u);
    return (uint16_t)((v.u + rounding) >> 16);
}

uint16_t andrea_f32_to_f16(float f) {
    union { float f; uint32_t u; } v = {f};
    uint16_t sign = (uint16_t)((v.u >> 16) & 0x8000u);
    uint32_t a = v.u & 0x7fffffffu;
    if (a > 0x7f800000u) return sign | 0x7e00u;         /* NaN */
    if (a >= 0x477ff000u) return sign | 0x7c00u;        /* >= 65520 rounds to Inf */
    if (a < 0x38800000u) {                              /* below the smallest normal 2^-14 */
        /* subnormal: value / 2^-24, rounded to nearest even by the FPU */
        float x = ldexpf(fabsf(f), 24);
        return sign | (uint16_t)nearbyintf(x);
    }
    uint32_t exp = (a >> 23) - 112, mant = a & 0x7fffffu;
    uint32_t h = (exp << 10) | (mant >> 13);
    uint32_t rest = mant & 0x1fffu;
    if (rest > 0x1000u || (rest == 0x1000u && (h & 1u))) h++; /* carry into exp is correct */
    return sign | (uint16_t)h;
}
