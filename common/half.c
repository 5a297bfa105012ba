/* half.c — see half.h. */
#include "half.h"

#include <math.h>

float andrea_f16_to_f32(uint16_t h) {
    uint32_t sign = (uint32_t)(h >> 15) << 31, exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
    union { uint32_t u; float f; } v;
    if (exp == 0x1f) {
        v.u = sign | 0x7f800000u | (mant << 13); /* Inf or NaN */
    } else if (exp == 0) {
        /* zero or subnormal: mant * 2^-24, exact in fp32 (a multiply: ldexpf's call was a tenth of
         * the report's conversions, attention probabilities below 6.1e-5 being this case) */
        float f = (float)mant * 0x1p-24f;
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
        /* subnormal: |f| / 2^-24 (exact, < 1024) rounded to nearest even by adding 2^23 (fp32 has
         * no fraction bits left there), the integer read from the mantissa: the same bits as
         * nearbyintf(ldexpf(|f|, 24)) for every float (checked over all 2^32), 4x faster */
        union { uint32_t u; float f; } m = {a}, r;
        r.f = m.f * 0x1p24f + 0x1p23f;
        return sign | (uint16_t)(r.u - 0x4b000000u);
    }
    uint32_t exp = (a >> 23) - 112, mant = a & 0x7fffffu;
    uint32_t h = (exp << 10) | (mant >> 13);
    uint32_t rest = mant & 0x1fffu;
    if (rest > 0x1000u || (rest == 0x1000u && (h & 1u))) h++; /* carry into exp is correct */
    return sign | (uint16_t)h;
}
