/* tf32_split.cuh — the high part of a float for 3xTF32 products (x = hi + lo, hi·hi + hi·lo + lo·hi).
 *
 * hi = x rounded to nearest at TF32's 10 mantissa bits (as cvt.rna.tf32.f32), its 13 low bits
 * zero, so lo = x - hi is exact in fp32. Inf/NaN pass through unchanged. Shared by the matmul split
 * (cuda_engine.cu) and attention v3's fragments (attention_v3.cu), which must round alike.
 */
#ifndef ANDREA_TF32_SPLIT_CUH
#define ANDREA_TF32_SPLIT_CUH

__device__ __forceinline__ float tf32_round_high(float x) {
    const unsigned u = __float_as_uint(x);
    return (u & 0x7f800000u) == 0x7f800000u ? x : __uint_as_float((u + 0x1000u) & 0xffffe000u);
}

#endif
