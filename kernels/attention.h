/* attention.h — the one causal attention kernel for all heads, in its numbered versions.
 *
 * Job: for every (batch, head) pair at once, y = softmax(q·kᵀ·scale, causal) · v, writing the
 * softmax probabilities as they are computed when asked (fp32 or fp16), nothing extra when not.
 * Layout: q, k, v, y are [B, H, T, hd] (each head's T × hd slice contiguous, the head dimension a
 * stride pattern of one tensor); probabilities of (b, h, i, j) go to
 * probs[b * probs_bstride + h * T * T + i * T + j], zeros above the diagonal, so the caller can
 * point straight into a [B, L, H, T, T] dump (probs_bstride = L*H*T*T, probs offset by layer) or
 * into a per-layer [B, H, T, T] buffer (probs_bstride = H*T*T). Rows of padding positions
 * (i >= len[b]) are written as zeros, as the CPU engine and the dumps store them.
 * The grid is (B*H, query tiles): the kernels never know how many heads there are.
 * Versions (kernels/NOTES.md): v1 SIMT fp32, any head_dim, exact (the ANDREA_CUDA_FP32 path);
 * v2 tensor cores (WMMA TF32 m16n16k8), head_dim % 16 == 0 and <= 128; v3 the same with 8 warps,
 * Q in registers, causal tile skipping per warp and vector stores (the default).
 * Failure contract: launchers return the CUDA error of the launch (cudaSuccess when fine).
 */
#ifndef ANDREA_KERNELS_ATTENTION_H
#define ANDREA_KERNELS_ATTENTION_H

#include <cuda_runtime.h>

typedef struct {
    const float *q, *k, *v; /* [B, H, T, hd] */
    float *y;               /* [B, H, T, hd] */
    void *probs;            /* see above, or NULL */
    int probs_fp16;         /* probs holds __half instead of float */
    long long probs_bstride;
    const int *len;         /* [B] device: probability rows i >= len[b] are written as zeros */
    int B, H, T, hd;
    float scale;            /* 1 / sqrt(hd) */
    int split_qk;           /* v3: Q·Kᵀ and P·V as three TF32 products of high and low parts
                               (tf32x3): 0 no, 1 Q's low parts in registers, 2 in shared memory */
} andrea_attn_args;

cudaError_t andrea_attention_v1(const andrea_attn_args *a, cudaStream_t st);
cudaError_t andrea_attention_v2(const andrea_attn_args *a, cudaStream_t st);
cudaError_t andrea_attention_v3(const andrea_attn_args *a, cudaStream_t st);
/* 1 when v2 / v3 can run this head_dim. */
int andrea_attention_v2_supports(int hd);
int andrea_attention_v3_supports(int hd);

#endif
