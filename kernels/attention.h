/* attention.h — the one causal attention kernel for all heads, in its numbered versions.
 *
 * Job: for every (batch, head) pair at once, y = softmax(q·kᵀ·scale, causal) · v, writing the
 * softmax probabilities as they are computed when asked (fp32 or fp16), nothing extra when not.
 * Layout: strides say where head (b, h)'s rows are: row i of q at q + b * in_bstride +
 * h * in_hstride + i * in_ld (k and v alike), of y at y + b * out_bstride + h * out_hstride +
 * i * out_ld. The engine reads q, k and v straight from the fused QKV matmul's [B, T, 3C] output
 * and writes y into the [B, T, C] rows the output projection reads (andrea_attn_fused: heads are a
 * stride pattern, no copy); [B, H, T, hd] tensors (the harness in kernels/dev/) are
 * andrea_attn_contiguous. The tensor-core versions load rows as float4: in_ld, out_ld and the head
 * offsets multiples of 4 floats. Probabilities of (b, h, i, j) go to
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
    const float *q, *k, *v; /* head (b, h) at + b * in_bstride + h * in_hstride, rows in_ld apart */
    float *y;               /* head (b, h) at + b * out_bstride + h * out_hstride, rows out_ld apart */
    long long in_bstride, in_hstride, out_bstride, out_hstride;
    int in_ld, out_ld;
    void *probs;            /* see above, or NULL */
    int probs_fp16;         /* probs holds __half instead of float */
    long long probs_bstride;
    const int *len;         /* [B] device: probability rows i >= len[b] are written as zeros */
    int B, H, T, hd;
    float scale;            /* 1 / sqrt(hd) */
    int split_qk;           /* v3: Q·Kᵀ and P·V as three TF32 products of high and low parts
                               (tf32x3): 0 no, 1 Q's low parts in registers, 2 in shared memory */
} andrea_attn_args;

/* The tensor-core versions index a head's rows in 32-bit ints (fewer registers, no spills): they
 * refuse (cudaErrorInvalidValue) shapes whose T rows span 2^31 floats or more. */
static inline int andrea_attn_rows_fit(const andrea_attn_args *a) {
    return (long long)a->T * (a->in_ld > a->out_ld ? a->in_ld : a->out_ld) < (1LL << 31);
}

/* q, k, v, y as [B, H, T, hd] tensors (set B, H, T, hd first). */
static inline void andrea_attn_contiguous(andrea_attn_args *a) {
    a->in_ld = a->out_ld = a->hd;
    a->in_hstride = a->out_hstride = (long long)a->T * a->hd;
    a->in_bstride = a->out_bstride = (long long)a->H * a->T * a->hd;
}

/* q, k, v the three C-wide column blocks of qkv's [B, T, 3C] rows (C = H * hd), y the [B, T, C]
 * rows of ycat: head h is columns h * hd.. of each (set B, H, T, hd first). */
static inline void andrea_attn_fused(andrea_attn_args *a, const float *qkv, float *ycat) {
    const long long C = (long long)a->H * a->hd;
    a->q = qkv;
    a->k = qkv + C;
    a->v = qkv + 2 * C;
    a->y = ycat;
    a->in_ld = (int)(3 * C);
    a->out_ld = (int)C;
    a->in_hstride = a->out_hstride = a->hd;
    a->in_bstride = 3 * C * a->T;
    a->out_bstride = C * a->T;
}

cudaError_t andrea_attention_v1(const andrea_attn_args *a, cudaStream_t st);
cudaError_t andrea_attention_v2(const andrea_attn_args *a, cudaStream_t st);
cudaError_t andrea_attention_v3(const andrea_attn_args *a, cudaStream_t st);
/* 1 when v2 / v3 can run this head_dim. */
int andrea_attention_v2_supports(int hd);
int andrea_attention_v3_supports(int hd);

#endif
