/* half.c — see half.h. */
#include "half.h"

#include <math.h>

#if defined(__x86_64__) && defined(__GNUC__)
#include <cpuid.h>
#include <immintrin.h>
#endif

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

/* ---- arrays: the F16C instructions where the CPU has them ----
 * Maps are converted by the million (every batch of analyze and dump, the report's maps), and the
 * scalar routines above cost ~5% of an analyze on the CPU. x86's F16C instructions (vcvtps2ph
 * with round-to-nearest-even, vcvtph2ps) give the same bits as the scalar routines for every
 * finite and infinite value; only NaNs differ (they keep payloads where the scalar routine writes
 * the canonical 0x7e00 or keeps a signalling NaN signalling), so a block of 8 with a NaN in it
 * goes through the scalar routine: the arrays' results equal the scalar ones bit for bit
 * (tests/test_half.c: every fp16, and fp32 across every exponent and rounding case). */
#if defined(__x86_64__) && defined(__GNUC__)
/* CPUID leaf 1: F16C (ECX bit 29) and AVX (bit 28), with OSXSAVE (bit 27) and the OS saving the
 * YMM registers (XCR0 bits 1-2). Read with cpuid.h rather than __builtin_cpu_supports("f16c"),
 * which clang 14 (Debian 12's, the sanitizer build's) does not know. */
static int have_f16c(void) {
    static int known = -1; /* threads may race to fill it: each finds the same answer */
    int k = __atomic_load_n(&known, __ATOMIC_RELAXED);
    if (k < 0) {
        unsigned a, b, c, d;
        k = 0;
        if (__get_cpuid(1, &a, &b, &c, &d) && (c & (1u << 27)) && (c & (1u << 28)) && (c & (1u << 29))) {
            unsigned lo, hi;
            __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
            k = (lo & 6u) == 6u;
        }
        __atomic_store_n(&known, k, __ATOMIC_RELAXED);
    }
    return k;
}

__attribute__((target("avx,f16c"))) static size_t f32_to_f16_f16c(uint16_t *dst, const float *src, size_t n) {
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m256 x = _mm256_loadu_ps(src + i);
        if (_mm256_movemask_ps(_mm256_cmp_ps(x, x, _CMP_UNORD_Q))) {
            for (size_t k = i; k < i + 8; k++) dst[k] = andrea_f32_to_f16(src[k]);
            continue;
        }
        _mm_storeu_si128((__m128i *)(dst + i), _mm256_cvtps_ph(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
    }
    return i;
}

/* From the back, a block of 8 at a time, each block's halves read before its floats are stored:
 * a float block ends above every half not yet read, so dst may be src's own memory. */
__attribute__((target("avx,f16c"))) static void f16_to_f32_f16c(float *dst, const uint16_t *src, size_t n) {
    for (size_t k = n; k-- > n - n % 8;) dst[k] = andrea_f16_to_f32(src[k]);
    for (size_t i = n - n % 8; i > 0;) {
        i -= 8;
        __m128i h = _mm_loadu_si128((const __m128i *)(src + i));
        /* exponent all ones and a nonzero mantissa: a NaN */
        __m128i mag = _mm_and_si128(h, _mm_set1_epi16(0x7fff));
        if (_mm_movemask_epi8(_mm_cmpgt_epi16(mag, _mm_set1_epi16(0x7c00)))) {
            uint16_t tmp[8];
            _mm_storeu_si128((__m128i *)tmp, h);
            for (int k = 7; k >= 0; k--) dst[i + (size_t)k] = andrea_f16_to_f32(tmp[k]);
            continue;
        }
        _mm256_storeu_ps(dst + i, _mm256_cvtph_ps(h));
    }
}
#endif

void andrea_f32_to_f16_n(uint16_t *dst, const float *src, size_t n) {
    size_t i = 0;
#if defined(__x86_64__) && defined(__GNUC__)
    if (have_f16c()) i = f32_to_f16_f16c(dst, src, n);
#endif
    for (; i < n; i++) dst[i] = andrea_f32_to_f16(src[i]);
}

void andrea_f16_to_f32_n(float *dst, const uint16_t *src, size_t n) {
#if defined(__x86_64__) && defined(__GNUC__)
    if (have_f16c()) {
        f16_to_f32_f16c(dst, src, n);
        return;
    }
#endif
    for (size_t i = n; i-- > 0;) dst[i] = andrea_f16_to_f32(src[i]);
}
