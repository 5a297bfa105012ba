/* attention_v1.cu — version 1 of the attention kernel: SIMT fp32, any head_dim.
 *
 * One warp per query row, 4 warps per block, 16 query rows per block; the grid is
 * (B*H, ceil(T/16)). Scores for the row are kept in shared memory (T floats per warp), so the
 * softmax is exact fp32 with expf and the same two-step form as the CPU engine
 * (max, then exp(s - max) / sum): probabilities match it to ~1e-7. This is the fallback for
 * head_dim % 16 != 0 (72, say) and the path used under ANDREA_CUDA_FP32=1.
 * Keys are read row-wise from global memory (L1/L2 cached); it is not the fast path.
 */
#include <cuda_fp16.h>
#include <math.h>

#include "attention.h"

#define V1_WARPS 4
#define V1_ROWS_PER_WARP 4

static __global__ void attention_v1_kernel(andrea_attn_args a) {
    extern __shared__ float sm[];
    const int T = a.T, hd = a.hd;
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int bh = blockIdx.x;
    const int b = bh / a.H, h = bh % a.H;
    float *q_s = sm + warp * (hd + T); /* [hd] */
    float *p_s = q_s + hd;             /* [T] scores, then probabilities */
    const size_t in = (size_t)b * a.in_bstride + (size_t)h * a.in_hstride, ld = (size_t)a.in_ld, old = (size_t)a.out_ld;
    const float *q = a.q + in, *k = a.k + in, *v = a.v + in;
    float *y = a.y + (size_t)b * a.out_bstride + (size_t)h * a.out_hstride;

    for (int r = 0; r < V1_ROWS_PER_WARP; r++) {
        const int i = blockIdx.y * (V1_WARPS * V1_ROWS_PER_WARP) + warp * V1_ROWS_PER_WARP + r;
        if (i >= T) break;
        for (int d = lane; d < hd; d += 32) q_s[d] = q[(size_t)i * ld + d];
        __syncwarp();
        float mx = -INFINITY;
        for (int j = lane; j <= i; j += 32) {
            const float *kr = k + (size_t)j * ld;
            float s = 0.f;
            for (int d = 0; d < hd; d++) s += q_s[d] * kr[d];
            s *= a.scale;
            p_s[j] = s;
            mx = fmaxf(mx, s);
        }
        for (int o = 16; o > 0; o /= 2) mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, o));
        float sum = 0.f;
        for (int j = lane; j <= i; j += 32) {
            float e = expf(p_s[j] - mx);
            p_s[j] = e;
            sum += e;
        }
        for (int o = 16; o > 0; o /= 2) sum += __shfl_xor_sync(0xffffffffu, sum, o);
        const float inv = 1.f / sum;
        for (int j = lane; j <= i; j += 32) p_s[j] *= inv;
        if (a.probs) {
            const bool pad = i >= a.len[b];
            const size_t base = (size_t)b * a.probs_bstride + ((size_t)h * T + i) * T;
            if (a.probs_fp16) {
                __half *pr = (__half *)a.probs + base;
                for (int j = lane; j < T; j += 32) pr[j] = __float2half(j <= i && !pad ? p_s[j] : 0.f);
            } else {
                float *pr = (float *)a.probs + base;
                for (int j = lane; j < T; j += 32) pr[j] = j <= i && !pad ? p_s[j] : 0.f;
            }
        }
        __syncwarp();
        for (int d = lane; d < hd; d += 32) {
            float acc = 0.f;
            for (int j = 0; j <= i; j++) acc += p_s[j] * v[(size_t)j * ld + d];
            y[(size_t)i * old + d] = acc;
        }
        __syncwarp(); /* q_s and p_s are reused by the next row */
    }
}

cudaError_t andrea_attention_v1(const andrea_attn_args *a, cudaStream_t st) {
    const int rows = V1_WARPS * V1_ROWS_PER_WARP;
    dim3 grid((unsigned)(a->B * a->H), (unsigned)((a->T + rows - 1) / rows));
    size_t smem = (size_t)V1_WARPS * (a->hd + a->T) * sizeof(float);
    if (smem > 48 * 1024) {
        cudaError_t rc = cudaFuncSetAttribute(attention_v1_kernel,
                                              cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem);
        if (rc != cudaSuccess) return rc;
    }
    attention_v1_kernel<<<grid, V1_WARPS * 32, smem, st>>>(*a);
    return cudaGetLastError();
}
