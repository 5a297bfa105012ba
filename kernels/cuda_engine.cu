/* cuda_engine.cu — the CUDA backend of engine/forward.h.
 *
 * Job: the same instrumented forward as the CPU engine, on the GPU. Weights are uploaded at open
 * (and again, into the same buffers, when a series swaps in its next checkpoint); scratch is sized for max_B x max_T at open (per-layer attention staging, per-head
 * contributions and logits are allocated on first use, still bounded by the batch).
 * Per layer: LayerNorm; ONE cuBLAS call for Q, K and V of all heads ([B*T, C] x [C, 3C]); a
 * split-heads kernel (adds the bias, [B,T,3C] -> q, k, v [B,H,T,hd]); ONE attention kernel for
 * all heads (kernels/attention.h); concatenation back to [B,T,C] (ablated heads zeroed); one W_O
 * matmul; bias + residual; LayerNorm; MLP (two matmuls, bias+GELU); bias + residual.
 * Instrumentation, only when asked: probabilities written by the attention kernel; per-head
 * W_O contributions by ONE cublasSgemmStridedBatched over heads, their norms and DLA reduced on
 * the GPU (DLA's final-LayerNorm scale applied after the last layer).
 * Precision (ANDREA_CUDA_PRECISION at open, the CLI's --precision): tf32, the default, TF32 tensor
 * cores for matmuls and attention; tf32x3, every layer matmul and attention's Q·Kᵀ and P·V as
 * three TF32 products of high and low parts (fp32-level maps at ~2.1x the time: kernels/NOTES.md);
 * fp32 (or ANDREA_CUDA_FP32=1), full fp32 matmuls and the exact fp32 attention kernel (v1).
 * Failure contract: every CUDA / cuBLAS call is checked (cuda_check.h); errors come back in
 * ae_error, nothing exits, open frees what it allocated.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

extern "C" {
#include "../common/checked_size.h"
#include "../common/error.h"
#include "../engine/forward.h"
#include "cuda_engine.h"
#include "host_copy.h"
}
#include "attention.h"
#include "tf32_split.cuh"
#include "cuda_check.h"

typedef struct {
    andrea_engine base; /* first: engine.c dispatches through it */
    const andrea_model *m;
    int max_B, max_T, fp32;
    int split;           /* tf32x3: the layers' matmuls as three TF32 products of high and low parts */
    int split_qk;        /* tf32x3: attention v3's layout of Q's low parts (attention.h's split_qk) */
    int piece_maps;      /* the options' pipeline_piece_maps (0 = the pipeline's own piece size) */
    int attn_version;    /* 1, 2 or 3 (tensor-core versions only where head_dim allows) */
    cudaStream_t st;
    cublasHandle_t blas;
    float *w;            /* all parameters, the model's single buffer */
    float *wte_mean;     /* [C] mean over the real vocabulary of wte rows */
    float *x, *ln, *qkv, *ycat, *att, *fc; /* activations, N = max_B*max_T rows (attention reads its
                                            * q, k, v from qkv and writes ycat: attention.h) */
    float *rstd;         /* [N] final LayerNorm 1/sigma */
    float *w3[4];        /* tf32x3: qkvw, attprojw, fcw, fcprojw with rows [hi | hi | lo] (W3_*) */
    float *in3;          /* tf32x3: [N, 3 * 4C] rows [hi | lo | hi] of a matmul's input */
    int *tok, *len;      /* [N], [max_B] */
    unsigned char *abl;  /* [max_B, L*H]: one mask for all sequences, or one each (ablate_per_seq) */
    float *abl_vals;     /* [L, Bv, T, C] replacement outputs of ablated heads (ablate_values), grown on use */
    size_t abl_vals_bytes;
    const float *abl_vals_src; /* the host values abl_vals holds (ablate_values_unchanged skips them) */
    int abl_vals_src_B, abl_vals_src_T;
    float *kept_x;       /* [L, kept_B, kept_T, C] layer inputs of a keep_layers forward, grown on use */
    size_t kept_bytes;
    int kept_B, kept_T;  /* 0: nothing kept */
    int *h_tok;          /* [N] host scratch: tokens with padding ids made safe */
    float *contrib;      /* [H, N, C], on first use */
    float *stage;        /* [max_B, H, T, T] per-layer probabilities, on first use */
    float *norm, *dla;   /* [max_B, L, H, max_T], on first use */
    float *logits;       /* [N, V], on first use, grown to the largest forward's N (logits_cap floats) */
    size_t logits_cap;
    int *loss_tgt;       /* [N] token-loss targets, on first use */
    float *loss;         /* [N] token losses, on first use */
    int *loss_rows;      /* [N] the rows with a target, on first use; h_rows: their host copy */
    int *h_rows;
    cublasLtHandle_t lt; /* fused matmul + bias (+ GELU, + residual) epilogues */
    void *lt_ws;         /* its workspace */
    struct lt_plan *plans;
    int n_plans;
} cuda_engine;

#define LT_WORKSPACE ((size_t)32 << 20)
#define LT_MAX_PLANS 32
enum { LIN_BIAS = 0, LIN_GELU = 1, LIN_RESID = 2 };

/* One cached cublasLt setup per (shape, kind, alignment): descriptors and the heuristic's algo. */
struct lt_plan {
    int O, N, I, kind;
    unsigned align;
    int ok; /* 0: cublasLt offers nothing for it, use cublasSgemm + a kernel */
    cublasLtMatmulDesc_t desc;
    cublasLtMatrixLayout_t la, lb, lc;
    cublasLtMatmulAlgo_t algo;
};

static const float *dev_param(const cuda_engine *e, const float *host) {
    return e->w + (host - e->m->memory);
}

/* ---------- small kernels ---------- */

static __global__ void embed_kernel(float *x, const int *tok, const float *wte, const float *wpe, int N, int T,
                             int C) {
    size_t idx = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (idx >= (size_t)N * C) return;
    int n = (int)(idx / C), c = (int)(idx % C);
    x[idx] = wte[(size_t)tok[n] * C + c] + wpe[(size_t)(n % T) * C + c];
}

/* One warp per row: out = (x - mean) / sqrt(var + 1e-5) * w + b; rstd_out (optional) gets 1/sigma.
 * The sums are float; a row whose float sum or sum of squares overflows (|x - mean| past ~1e19:
 * finite activations of a hostile checkpoint) is summed again in double, as the CPU engine always
 * sums: in float the variance became Inf, 1/sigma 0, and the LayerNorm quietly returned its bias
 * (wrong maps and norms, DLA 0). The branch is warp-uniform (every lane holds the reduced sums)
 * and never taken by a model whose squares fit a float, whose results stay bit-identical. */
static __global__ void layernorm_kernel(float *out, float *rstd_out, const float *x, const float *w, const float *b,
                                 int N, int C) {
    int row = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32, lane = threadIdx.x % 32;
    if (row >= N) return;
    const float *xr = x + (size_t)row * C;
    float s = 0.f;
    for (int c = lane; c < C; c += 32) s += xr[c];
    for (int o = 16; o > 0; o /= 2) s += __shfl_xor_sync(0xffffffffu, s, o);
    float mean = s / C, v = 0.f;
    for (int c = lane; c < C; c += 32) {
        float d = xr[c] - mean;
        v += d * d;
    }
    for (int o = 16; o > 0; o /= 2) v += __shfl_xor_sync(0xffffffffu, v, o);
    float rs = 1.f / sqrtf(v / C + 1e-5f);
    if (!isfinite(s) || !isfinite(v)) { /* the CPU engine's sums (engine/forward_cpu.c layernorm_row) */
        double sd = 0, vd = 0;
        for (int c = lane; c < C; c += 32) sd += xr[c];
        for (int o = 16; o > 0; o /= 2) sd += __shfl_xor_sync(0xffffffffu, sd, o);
        const double md = sd / C;
        for (int c = lane; c < C; c += 32) vd += (xr[c] - md) * (xr[c] - md);
        for (int o = 16; o > 0; o /= 2) vd += __shfl_xor_sync(0xffffffffu, vd, o);
        mean = (float)md;
        rs = (float)(1.0 / sqrt(vd / C + 1e-5));
    }
    float *orow = out + (size_t)row * C;
    for (int c = lane; c < C; c += 32) orow[c] = (xr[c] - mean) * rs * w[c] + b[c];
    if (rstd_out && lane == 0) rstd_out[row] = rs;
}

/* The ablated heads' columns of ycat [B, T, C] (ablate[b * abl_bstride + h] != 0; abl_bstride 0:
 * one mask for every sequence) become zeros, or, with vals ([Bv, T, C]: this layer's replacement
 * outputs), row b % Bv's values; the other heads' attention outputs stay as written. */
static __global__ void ablate_heads_kernel(float *ycat, const unsigned char *ablate, size_t abl_bstride,
                                           const float *vals, int Bv, int B, int T, int H, int hd) {
    const int C = H * hd;
    size_t idx = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (idx >= (size_t)B * T * C) return;
    int c = (int)(idx % C);
    size_t n = idx / C;
    int b = (int)(n / T), t = (int)(n % T), h = c / hd;
    if (ablate[(size_t)b * abl_bstride + h]) ycat[idx] = vals ? vals[((size_t)(b % Bv) * T + t) * C + c] : 0.f;
}

/* x += a + bias[c] (bias then residual, in one pass) */
static __global__ void residual_bias_kernel(float *x, const float *a, const float *bias, size_t total, int C) {
    size_t idx = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (idx < total) x[idx] += a[idx] + bias[idx % C];
}

/* x = hi + lo (tf32_split.cuh). Inf/NaN pass through as hi (their lo is 0: tf32_low); the few
 * finite values that would round up to Inf are truncated instead, so lo stays finite. */
__device__ __forceinline__ float tf32_high(float x) {
    const float h = tf32_round_high(x);
    return isinf(h) && isfinite(x) ? __uint_as_float(__float_as_uint(x) & 0xffffe000u) : h;
}
__device__ __forceinline__ float tf32_low(float x, float hi) { return isfinite(x) ? x - hi : 0.f; }

/* For the tf32x3 precision (3xTF32): a·b ~ ah·bh + al·bh + ah·bl, each product on TF32 tensor
 * cores, fp32-level accuracy (the dropped al·bl is ~2^-22 relative). The three products are ONE
 * matmul over a tripled inner dimension: input rows [ah | al | ah] against weight rows
 * [bh | bh | bl]: one pass over the output instead of three, and one accumulator.
 * in [rows, n] -> out [rows, 3n]; lo_last: weight layout [h | h | l], else input [h | l | h]. */
static __global__ void split3_tf32_kernel(float *out, const float *in, size_t rows, int n, int lo_last) {
    size_t idx = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (idx >= rows * (size_t)n) return;
    const size_t r = idx / (size_t)n;
    const int c = (int)(idx % (size_t)n);
    const float x = in[idx], h = tf32_high(x), l = tf32_low(x, h);
    float *o = out + r * 3 * (size_t)n + c;
    o[0] = h;
    o[n] = lo_last ? h : l;
    o[2 * (size_t)n] = lo_last ? l : h;
}

/* h += bias[c] */
static __global__ void bias_kernel(float *hbuf, const float *bias, size_t total, int C) {
    size_t idx = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (idx < total) hbuf[idx] += bias[idx % C];
}

/* h = gelu_tanh(h + bias[c]) in place */
static __global__ void bias_gelu_kernel(float *hbuf, const float *bias, size_t total, int C4) {
    size_t idx = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (idx >= total) return;
    float x = hbuf[idx] + bias[idx % C4];
    const float k = 0.7978845608028654f; /* sqrt(2/pi) */
    hbuf[idx] = 0.5f * x * (1.f + tanhf(k * (x + 0.044715f * x * x * x)));
}

/* One warp per (head, row): norm of the contribution c = contrib[h, n, :], and the unscaled DLA
 * sum_i (c_i - mean c) * lnfw_i * (wte[y, i] - wte_mean_i), y = tokens[n+1] (the final LayerNorm's
 * 1/sigma is applied after the last layer by dla_finish_kernel). */
static __global__ void head_stats_kernel(float *norm, float *dla, const float *contrib, const int *tok,
                                  const int *len, const float *wte, const float *wte_mean, const float *lnfw, int B, int T,
                                  int L, int H, int C, int layer) {
    const int N = B * T;
    size_t gw = ((size_t)blockIdx.x * blockDim.x + threadIdx.x) / 32;
    int lane = threadIdx.x % 32;
    if (gw >= (size_t)H * N) return;
    int h = (int)(gw / N), n = (int)(gw % N), b = n / T, t = n % T;
    const float *c = contrib + ((size_t)h * N + n) * C;
    size_t o = (((size_t)b * L + layer) * H + h) * T + t;
    float s2 = 0.f, s1 = 0.f, sg = 0.f, gs = 0.f;
    if (t >= len[b]) { /* padding: zero norm, as the CPU engine writes (DLA becomes NaN later) */
        if (lane == 0 && norm) norm[o] = 0.f;
        if (lane == 0 && dla) dla[o] = 0.f;
        return;
    }
    if (dla) {
        int yid = t + 1 < T ? tok[n + 1] : 0;
        const float *u = wte + (size_t)yid * C;
        for (int i = lane; i < C; i += 32) {
            float ci = c[i], g = lnfw[i] * (u[i] - wte_mean[i]);
            s2 += ci * ci;
            s1 += ci;
            sg += ci * g;
            gs += g;
        }
    } else {
        for (int i = lane; i < C; i += 32) s2 += c[i] * c[i];
    }
    for (int s = 16; s > 0; s /= 2) {
        s2 += __shfl_xor_sync(0xffffffffu, s2, s);
        s1 += __shfl_xor_sync(0xffffffffu, s1, s);
        sg += __shfl_xor_sync(0xffffffffu, sg, s);
        gs += __shfl_xor_sync(0xffffffffu, gs, s);
    }
    if (!isfinite(s2) || !isfinite(s1) || !isfinite(sg) || !isfinite(gs)) {
        /* a float sum overflowed (a contribution past ~1e19, finite): sum again in double, as the
         * CPU engine does, rather than report Inf for a finite norm (warp-uniform, see layernorm) */
        double d2 = 0, d1 = 0, dg = 0, dgs = 0;
        int yid = dla && t + 1 < T ? tok[n + 1] : 0;
        const float *u = wte + (size_t)yid * C;
        for (int i = lane; i < C; i += 32) {
            double ci = c[i], g = dla ? (double)(lnfw[i] * (u[i] - wte_mean[i])) : 0.0;
            d2 += ci * ci;
            d1 += ci;
            dg += ci * g;
            dgs += g;
        }
        for (int s = 16; s > 0; s /= 2) {
            d2 += __shfl_xor_sync(0xffffffffu, d2, s);
            d1 += __shfl_xor_sync(0xffffffffu, d1, s);
            dg += __shfl_xor_sync(0xffffffffu, dg, s);
            dgs += __shfl_xor_sync(0xffffffffu, dgs, s);
        }
        if (lane == 0) {
            if (norm) norm[o] = (float)sqrt(d2);
            if (dla) dla[o] = (float)(dg - (d1 / C) * dgs);
        }
        return;
    }
    if (lane == 0) {
        if (norm) norm[o] = sqrtf(s2);
        if (dla) dla[o] = sg - (s1 / C) * gs;
    }
}

/* contrib[h, b*T + t, :] = 0 for t >= len[b] (padding rows of head_out are written as zeros) */
static __global__ void zero_padding_rows_kernel(float *contrib, const int *len, int H, int B, int T, int C) {
    size_t idx = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (idx >= (size_t)H * B * T * C) return;
    size_t n = (idx / C) % ((size_t)B * T);
    int b = (int)(n / T), t = (int)(n % T);
    if (t >= len[b]) contrib[idx] = 0.f;
}

/* dla[b, l, h, t] *= rstd[b, t]; NaN where t + 1 >= lengths[b] (no next token). */
/* Cross-entropy of each logits row toward its target, on the device: the causal check needs one
 * number per position, and moving [N, V] logits to the host was most of its time on a GPU (a GPT-2
 * vocabulary: 200 KB a row). One block a row; the max in fp32, the sum of exp(logit - max) in
 * double like the CPU's row loss (analyzer/ablation.c), so both agree to ~1e-7 relative.
 * Logits row i belongs to position rows[i] (rows NULL: position i); loss[position] = NaN where
 * target[position] < 0. Launch with 256 threads, one block a logits row. */
static __global__ void token_loss_kernel(float *loss, const float *logits, const int *target, const int *rows, int V) {
    __shared__ float smax[256];
    __shared__ double ssum[256];
    const size_t r = rows ? (size_t)rows[blockIdx.x] : blockIdx.x;
    const int y = target[r], tid = threadIdx.x;
    if (y < 0) {
        if (tid == 0) loss[r] = NAN;
        return;
    }
    const float *row = logits + (size_t)blockIdx.x * (size_t)V;
    float mx = -INFINITY;
    for (int v = tid; v < V; v += blockDim.x) mx = fmaxf(mx, row[v]);
    smax[tid] = mx;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (tid < s) smax[tid] = fmaxf(smax[tid], smax[tid + s]);
        __syncthreads();
    }
    mx = smax[0];
    double z = 0;
    for (int v = tid; v < V; v += blockDim.x) z += (double)expf(row[v] - mx);
    ssum[tid] = z;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (tid < s) ssum[tid] += ssum[tid + s];
        __syncthreads();
    }
    if (tid == 0) loss[r] = (float)(-((double)row[y] - mx - log(ssum[0])));
}

/* out[i, :] = in[rows[i], :] for n rows of C floats: the loss rows, so that the LM head runs on
 * those only. */
static __global__ void gather_rows_kernel(float *out, const float *in, const int *rows, size_t n, int C) {
    size_t idx = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (idx >= n * C) return;
    out[idx] = in[(size_t)rows[idx / C] * C + idx % C];
}

static __global__ void dla_finish_kernel(float *dla, const float *rstd, const int *len, int B, int T, int LH) {
    size_t idx = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (idx >= (size_t)B * LH * T) return;
    int t = (int)(idx % T);
    int b = (int)(idx / ((size_t)LH * T));
    dla[idx] = t + 1 < len[b] ? dla[idx] * rstd[(size_t)b * T + t] : __int_as_float(0x7fc00000);
}

static unsigned blocks_for(size_t n, int threads) { return (unsigned)((n + threads - 1) / threads); }

/* ---------- matmuls: row-major out[N, O] = in[N, I] · W[O, I]ᵀ (Linear layout) ---------- */
static int linear(cuda_engine *e, float *out, const float *in, const float *W, int N, int O, int I,
                  ae_error *err) {
    const float one = 1.f, zero = 0.f;
    CUBLAS_CHECK(cublasSgemm(e->blas, CUBLAS_OP_T, CUBLAS_OP_N, O, N, I, &one, W, I, in, I, &zero, out, O));
    return 0;
fail:
    return -1;
}

static unsigned ptr_align(const void *p) {
    uintptr_t a = (uintptr_t)p;
    unsigned al = 256;
    while (al > 4 && (a % al) != 0) al /= 2;
    return al;
}

static void destroy_plan(struct lt_plan *pl) {
    if (pl->lc) cublasLtMatrixLayoutDestroy(pl->lc);
    if (pl->lb) cublasLtMatrixLayoutDestroy(pl->lb);
    if (pl->la) cublasLtMatrixLayoutDestroy(pl->la);
    if (pl->desc) cublasLtMatmulDescDestroy(pl->desc);
}

/* Finds or makes the plan; NULL only on a cuBLAS error (err filled). */
static struct lt_plan *get_plan(cuda_engine *e, int O, int N, int I, int kind, unsigned al, ae_error *err) {
    struct lt_plan *pl = NULL;
    cublasLtMatmulPreference_t pref = NULL;
    cublasLtMatmulHeuristicResult_t res;
    int found = 0;
    const cublasOperation_t tA = CUBLAS_OP_T, tB = CUBLAS_OP_N;
    cublasLtEpilogue_t epi = kind == LIN_GELU ? CUBLASLT_EPILOGUE_GELU_BIAS : CUBLASLT_EPILOGUE_BIAS;
    size_t ws = LT_WORKSPACE;
    uint32_t al32 = al;
    for (int i = 0; i < e->n_plans; i++) {
        pl = &e->plans[i];
        if (pl->O == O && pl->N == N && pl->I == I && pl->kind == kind && pl->align == al) return pl;
    }
    if (e->n_plans == LT_MAX_PLANS) { /* shapes change with (B, T): recycle the oldest plan */
        destroy_plan(&e->plans[0]);
        memmove(e->plans, e->plans + 1, (LT_MAX_PLANS - 1) * sizeof *e->plans);
        e->n_plans--;
    }
    pl = &e->plans[e->n_plans];
    memset(pl, 0, sizeof *pl);
    pl->O = O; pl->N = N; pl->I = I; pl->kind = kind; pl->align = al;
    e->n_plans++;
    CUBLAS_CHECK(cublasLtMatmulDescCreate(&pl->desc, e->fp32 ? CUBLAS_COMPUTE_32F : CUBLAS_COMPUTE_32F_FAST_TF32,
                                          CUDA_R_32F));
    CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(pl->desc, CUBLASLT_MATMUL_DESC_TRANSA, &tA, sizeof tA));
    CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(pl->desc, CUBLASLT_MATMUL_DESC_TRANSB, &tB, sizeof tB));
    CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(pl->desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &epi, sizeof epi));
    /* column-major view of row-major Linear: W [O, I] is col-major [I, O]; in [N, I] is [I, N]; out [O, N] */
    CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&pl->la, CUDA_R_32F, I, O, I));
    CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&pl->lb, CUDA_R_32F, I, N, I));
    CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&pl->lc, CUDA_R_32F, O, N, O));
    CUBLAS_CHECK(cublasLtMatmulPreferenceCreate(&pref));
    CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws));
    CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, &al32, sizeof al32));
    CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, &al32, sizeof al32));
    CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, &al32, sizeof al32));
    CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, &al32, sizeof al32));
    if (cublasLtMatmulAlgoGetHeuristic(e->lt, pl->desc, pl->la, pl->lb, pl->lc, pl->lc, pref, 1, &res, &found) ==
            CUBLAS_STATUS_SUCCESS &&
        found > 0) {
        pl->algo = res.algo;
        pl->ok = 1;
    }
    cublasLtMatmulPreferenceDestroy(pref);
    return pl;
fail:
    if (pref) cublasLtMatmulPreferenceDestroy(pref);
    return NULL;
}

/* Row-major Linear with its bias fused into the matmul's epilogue:
 *   LIN_BIAS:  out = in · Wᵀ + b           LIN_GELU: out = gelu_tanh(in · Wᵀ + b)
 *   LIN_RESID: out += in · Wᵀ + b (out is the residual stream; tmp is scratch for the fallback)
 * in [N, I], W [O, I], b [O], out [N, O]. Full fp32 mode keeps GELU in andrea's own kernel (tanhf),
 * so that only summation order differs from the CPU engine. Where cublasLt has no algorithm for the
 * shape or alignment, cublasSgemm plus the elementwise kernels do the same. */
static int fused_linear(cuda_engine *e, float *out, const float *in, const float *W, const float *b, int N, int O,
                        int I, int kind, float *tmp, ae_error *err) {
    const float one = 1.f, zero = 0.f;
    const int TH = 256;
    struct lt_plan *pl = NULL;
    unsigned al = ptr_align(out);
    if (ptr_align(in) < al) al = ptr_align(in);
    if (ptr_align(W) < al) al = ptr_align(W);
    if (ptr_align(b) < al) al = ptr_align(b);
    if (!(e->fp32 && kind == LIN_GELU)) {
        pl = get_plan(e, O, N, I, kind, al, err);
        if (!pl) return -1;
    }
    if (pl && pl->ok) {
        const float *beta = kind == LIN_RESID ? &one : &zero;
        CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(pl->desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &b, sizeof b));
        CUBLAS_CHECK(cublasLtMatmul(e->lt, pl->desc, &one, W, pl->la, in, pl->lb, beta, out, pl->lc, out, pl->lc,
                                    &pl->algo, e->lt_ws, LT_WORKSPACE, e->st));
        return 0;
    }
    if (kind == LIN_RESID) {
        if (linear(e, tmp, in, W, N, O, I, err)) return -1;
        residual_bias_kernel<<<blocks_for((size_t)N * O, TH), TH, 0, e->st>>>(out, tmp, b, (size_t)N * O, O);
    } else {
        if (linear(e, out, in, W, N, O, I, err)) return -1;
        if (kind == LIN_GELU)
            bias_gelu_kernel<<<blocks_for((size_t)N * O, TH), TH, 0, e->st>>>(out, b, (size_t)N * O, O);
        else
            bias_kernel<<<blocks_for((size_t)N * O, TH), TH, 0, e->st>>>(out, b, (size_t)N * O, O);
    }
    CU_CHECK(cudaGetLastError());
    return 0;
fail:
    return -1;
}

/* One of a layer's four matmuls: out[N, O] = in[N, I] · W[O, I]ᵀ + epilogue, W layer l's slice of
 * the parameter `which`. tf32x3: ONE TF32 matmul over a tripled inner dimension, input rows
 * [hi | lo | hi] against weight rows [hi | hi | lo] (split3_tf32_kernel): fp32-level products. */
enum { W3_QKV, W3_ATTPROJ, W3_FC, W3_FCPROJ };
static int layer_linear(cuda_engine *e, int which, size_t l, float *out, const float *in, const float *W,
                        const float *b, int N, int O, int I, int kind, float *tmp, ae_error *err) {
    if (!e->split) return fused_linear(e, out, in, W, b, N, O, I, kind, tmp, err);
    split3_tf32_kernel<<<blocks_for((size_t)N * I, 256), 256, 0, e->st>>>(e->in3, in, (size_t)N, I, 0);
    CU_CHECK(cudaGetLastError());
    return fused_linear(e, out, e->in3, e->w3[which] + l * O * 3 * (size_t)I, b, N, O, 3 * I, kind, tmp, err);
fail:
    return -1;
}

/* ---------- engine ---------- */

/* Activations of a layer: residual, QKV, attention output, MLP hidden, per-head W_O
 * contributions, about (16 + H) x T x C floats; tf32x3 adds the split input of a matmul, up to
 * 12 x T x C floats, and keeps split copies of the layer weights, 3 x 12 x L x C^2 floats (all
 * of which are in host memory already, so that product cannot overflow). */
extern "C" int andrea_engine_bytes_per_seq(const andrea_config *c, const andrea_engine_options *o, int T,
                                           int maps_fp32, size_t *per_seq, size_t *fixed) {
    andrea_engine_options def;
    if (!o) {
        andrea_engine_options_init(&def);
        o = &def;
    }
    const int tf32x3 = !strcmp(o->precision, "tf32x3");
    const size_t lh = (size_t)c->n_layer * (size_t)c->n_head, t = (size_t)T, C = (size_t)c->d_model;
    const size_t split = tf32x3 ? 12 : 0;
    size_t maps, acts;
    if (ae_mul(lh, t * t * (maps_fp32 ? 4 : 2), &maps) || ae_mul(t * C * 4, 16 + split + (size_t)c->n_head, &acts))
        return -1;
    const size_t total = 2 * maps + 16 * lh * t + acts;
    if (total < maps) return -1;
    *per_seq = total ? total : 1;
    *fixed = tf32x3 ? 3 * 12 * (size_t)c->n_layer * C * C * sizeof(float) : 0;
    return 0;
}

extern "C" int andrea_cuda_total_memory(size_t *total_bytes) {
    size_t free_bytes = 0;
    *total_bytes = 0;
    if (!andrea_cuda_available() || cudaMemGetInfo(&free_bytes, total_bytes) != cudaSuccess) {
        cudaGetLastError();
        *total_bytes = 0;
        return -1;
    }
    return 0;
}

extern "C" int andrea_cuda_use_device(int device_index) {
    int n = 0;
    if (device_index < 0) return 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess || n < 1 || cudaSetDevice(device_index % n) != cudaSuccess) {
        cudaGetLastError(); /* clear the sticky error: the caller falls back as without a device */
        return -1;
    }
    return 0;
}

extern "C" int andrea_cuda_available(void) {
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess || n < 1) {
        cudaGetLastError(); /* clear the sticky "no device" error */
        return 0;
    }
    void *p = NULL; /* a device that cannot allocate is not usable */
    if (cudaMalloc(&p, 16) != cudaSuccess) {
        cudaGetLastError();
        return 0;
    }
    cudaFree(p);
    return 1;
}

/* Frees what alloc_batch (below) allocated and the batch-sized buffers allocated on first use. */
static void free_batch(cuda_engine *e) {
    void **bufs[] = {(void **)&e->x,    (void **)&e->ln,  (void **)&e->qkv,  (void **)&e->ycat, (void **)&e->att,
                     (void **)&e->fc,
                     (void **)&e->rstd, (void **)&e->tok, (void **)&e->len,  (void **)&e->abl,      (void **)&e->in3,
                     (void **)&e->contrib, (void **)&e->stage, (void **)&e->norm, (void **)&e->dla,
                     (void **)&e->logits, (void **)&e->loss_tgt, (void **)&e->loss, (void **)&e->loss_rows,
                     (void **)&e->abl_vals};
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++) {
        if (*bufs[i]) cudaFree(*bufs[i]);
        *bufs[i] = NULL;
    }
    free(e->h_tok);
    free(e->h_rows);
    e->h_tok = NULL;
    e->h_rows = NULL;
    e->abl_vals_bytes = 0;
    e->logits_cap = 0;
}

static void free_engine(cuda_engine *e) {
    if (!e) return;
    free_batch(e);
    void *bufs[] = {e->w, e->wte_mean, e->w3[0], e->w3[1], e->w3[2], e->w3[3], e->kept_x};
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++)
        if (bufs[i]) cudaFree(bufs[i]);
    for (int i = 0; i < e->n_plans; i++) destroy_plan(&e->plans[i]);
    free(e->plans);
    if (e->lt_ws) cudaFree(e->lt_ws);
    if (e->lt) cublasLtDestroy(e->lt);
    if (e->blas) cublasDestroy(e->blas);
    if (e->st) cudaStreamDestroy(e->st);
    free(e);
}

static void cuda_close(andrea_engine *base) { free_engine((cuda_engine *)base); }

/* Page-locked host memory: copies to and from the device at full bus speed, without staging. */
static void *cuda_host_alloc(size_t bytes) {
    void *p = NULL;
    if (cudaHostAlloc(&p, bytes, cudaHostAllocDefault) == cudaSuccess) return p;
    (void)cudaGetLastError(); /* clears it: a later kernel's check must not report this one */
    return NULL;
}

static void cuda_host_free(void *p) { (void)cudaFreeHost(p); }

static int lazy_alloc(void **p, size_t bytes, ae_error *err) {
    if (*p) return 0;
    CU_CHECK(cudaMalloc(p, bytes));
    return 0;
fail:
    *p = NULL;
    return -1;
}

/* The buffers whose size follows the batch (max_B x max_T rows of activations, token ids,
 * lengths, ablation masks, tf32x3's split input, the host token staging), for max_B sequences.
 * The sizes were checked for overflow at open (max_B there) or by reserve. */
static int alloc_batch(cuda_engine *e, int max_B, ae_error *err) {
    const andrea_config *cf = &e->m->cfg;
    const size_t N = (size_t)max_B * e->max_T, C = (size_t)cf->d_model;
    if (!(e->h_tok = (int *)malloc((N + (size_t)max_B) * sizeof(int))) || !(e->h_rows = (int *)malloc(N * sizeof(int))))
        return andrea_fail(err, "%s: out of memory for the CUDA engine", e->m->path);
    float **acts[] = {&e->x, &e->ln, &e->ycat, &e->att};
    for (size_t i = 0; i < sizeof acts / sizeof acts[0]; i++) CU_CHECK(cudaMalloc((void **)acts[i], N * C * sizeof(float)));
    CU_CHECK(cudaMalloc((void **)&e->qkv, N * 3 * C * sizeof(float)));
    CU_CHECK(cudaMalloc((void **)&e->fc, N * 4 * C * sizeof(float)));
    CU_CHECK(cudaMalloc((void **)&e->rstd, N * sizeof(float)));
    CU_CHECK(cudaMalloc((void **)&e->tok, N * sizeof(int)));
    CU_CHECK(cudaMalloc((void **)&e->len, (size_t)max_B * sizeof(int)));
    CU_CHECK(cudaMalloc((void **)&e->abl, (size_t)max_B * cf->n_layer * cf->n_head));
    if (e->split) CU_CHECK(cudaMalloc((void **)&e->in3, N * 3 * 4 * C * sizeof(float)));
    return 0;
fail:
    return -1;
}

/* Room for batches of max_B sequences (the batched causal check: many copies of a few items),
 * the weights kept. Out of GPU memory: the old size again and -1 (the caller keeps its smaller
 * batches); if even that cannot be had, the engine refuses every forward after. */
static int cuda_reserve_batch(andrea_engine *base, int max_B, ae_error *err) {
    cuda_engine *e = (cuda_engine *)base;
    const int old = e->max_B;
    size_t N, acts;
    if (max_B <= old) return 0;
    if (__builtin_mul_overflow((size_t)max_B, (size_t)e->max_T, &N) ||
        __builtin_mul_overflow(N, (size_t)12 * e->m->cfg.d_model * sizeof(float), &acts))
        return andrea_fail(err, "%s: CUDA engine batch %d too large", e->m->path, max_B);
    CU_CHECK(cudaStreamSynchronize(e->st));
    free_batch(e);
    if (alloc_batch(e, max_B, err) == 0) {
        e->max_B = e->base.max_B = max_B;
        return 0;
    }
    cudaGetLastError(); /* an allocation failure is not sticky; clear it */
    free_batch(e);
    ae_error again;
    if (alloc_batch(e, old, &again)) {
        free_batch(e);
        e->max_B = e->base.max_B = 0; /* upload_inputs refuses every batch */
    }
    return -1;
fail:
    return -1;
}

typedef struct {
    void *attn_dev; int attn_fp16;     /* [B, L, H, T, T] device */
    float *attn_host;                  /* [B, L, H, T, T] host */
    float *head_out_host;              /* [B, L, H, T, C] host */
    float *norm_dev, *dla_dev;         /* [B, L, H, T] device */
    float *norm_host, *dla_host;       /* [B, L, H, T] host */
    float *logits_dev, *logits_host;   /* [B, T, V] */
    const int *loss_targets;           /* [B, T] host, with loss_host: token losses on the device */
    float *loss_host;                  /* [B, T] host */
} outputs;

/* What one forward computes, shared by its steps. */
typedef struct {
    int B, T;
    size_t N;                   /* B * T rows */
    int any_abl;                /* some head is ablated (io->ablate) */
    size_t abl_bstride;         /* L*H with ablate_per_seq, else 0 */
    int abl_vals_B;             /* rows of e->abl_vals (ablate_values), 0: ablated heads are zeros */
    int want_contrib;           /* per-head W_O contributions are computed (statistics or head_out) */
    float *norm, *dla, *logits; /* device: the caller's, the engine's (lazily allocated), or NULL: not wanted */
} fwd_step;

/* *p holds at least bytes (a buffer kept from forward to forward, grown when too small; its
 * contents are not kept). */
static int grow_device(void **p, size_t *cap, size_t bytes, ae_error *err) {
    if (bytes <= *cap) return 0;
    if (*p) CU_CHECK(cudaFree(*p));
    *p = NULL;
    *cap = 0;
    CU_CHECK(cudaMalloc(p, bytes));
    *cap = bytes;
    return 0;
fail:
    return -1;
}

/* ablate_values [L, Bv, T, C] onto the device (engine.c checked 1 <= Bv <= B <= max_B, so the size
 * cannot overflow: it is at most L x the activations' max_B x max_T x C). */
static int upload_ablate_values(cuda_engine *e, const andrea_forward_io *io, fwd_step *f, ae_error *err) {
    const andrea_config *cf = &e->m->cfg;
    const size_t bytes = (size_t)cf->n_layer * io->ablate_values_B * io->T * cf->d_model * sizeof(float);
    f->abl_vals_B = io->ablate_values_B;
    if (io->ablate_values_unchanged && e->abl_vals && e->abl_vals_src == io->ablate_values &&
        e->abl_vals_src_B == io->ablate_values_B && e->abl_vals_src_T == io->T)
        return 0; /* the caller's word: the same values as the last upload */
    e->abl_vals_src = NULL;
    if (grow_device((void **)&e->abl_vals, &e->abl_vals_bytes, bytes, err)) return -1;
    CU_CHECK(cudaMemcpyAsync(e->abl_vals, io->ablate_values, bytes, cudaMemcpyHostToDevice, e->st));
    e->abl_vals_src = io->ablate_values;
    e->abl_vals_src_B = io->ablate_values_B;
    e->abl_vals_src_T = io->T;
    return 0;
fail:
    return -1;
}

/* The inputs checked (shape, lengths, token ids) and copied to the device; padded positions embed
 * token 0, as the CPU engine does. */
static int upload_inputs(cuda_engine *e, const andrea_forward_io *io, fwd_step *f, ae_error *err) {
    const andrea_model *m = e->m;
    const andrea_config *cf = &m->cfg;
    const int B = io->B, T = io->T, L = cf->n_layer, H = cf->n_head, V = cf->vocab_size;
    const size_t N = (size_t)B * T;
    if (B < 1 || T < 1 || B > e->max_B || T > e->max_T || T > cf->max_seq_len || !io->tokens)
        return andrea_fail(err, "%s: forward of B=%d T=%d outside the engine's B<=%d T<=%d (max_seq_len %d)",
                       m->path, B, T, e->max_B, e->max_T, cf->max_seq_len);
    for (int b = 0; b < B; b++) {
        int len = io->lengths ? io->lengths[b] : T;
        if (len < 1 || len > T)
            return andrea_fail(err, "%s: length %d of sequence %d outside 1..%d", m->path, len, b, T);
        for (int t = 0; t < T; t++) {
            int id = io->tokens[(size_t)b * T + t];
            if (t >= len) {
                id = 0; /* padding embeds token 0, as the CPU engine does; its id is not read */
            } else if (id < 0 || id >= V) {
                return andrea_fail(err, "%s: token id %d at sequence %d position %d is outside the vocabulary 0..%d",
                               m->path, id, b, t, V - 1);
            }
            e->h_tok[(size_t)b * T + t] = id;
        }
    }
    if (io->resume_layer < 0 || io->resume_layer >= L || (io->resume_layer > 0) != (io->resume_x != NULL))
        return andrea_fail(err, "%s: resume at layer %d outside 0..%d, or without its input", m->path, io->resume_layer,
                       L - 1);
    if (io->resume_layer > 0 && (io->attn || io->head_out || io->head_out_norm || io->head_dla))
        return andrea_fail(err, "%s: a resumed forward computes logits only", m->path);
    if (io->resume_kept) {
        if (io->resume_layer > 0 || io->layer_inputs || io->keep_layers || io->attn || io->head_out ||
            io->head_out_norm || io->head_dla || io->final_resid)
            return andrea_fail(err, "%s: a forward resumed from kept layers computes logits or token losses only",
                               m->path);
        if (e->kept_B < 1 || e->kept_T != T)
            return andrea_fail(err, "%s: resume from kept layers of T=%d, but %s", m->path, T,
                               e->kept_B ? "they are of another T" : "none are kept");
        for (int b = 0; b < B; b++)
            if (io->resume_kept[b] < 0 || io->resume_kept[b] >= L || (b > 0 && io->resume_kept[b] < io->resume_kept[b - 1]))
                return andrea_fail(err, "%s: resume layer %d of sequence %d outside 0..%d or not ascending", m->path,
                                   io->resume_kept[b], b, L - 1);
    }
    if (io->keep_layers && io->resume_layer > 0)
        return andrea_fail(err, "%s: keep_layers in a forward resumed at a layer", m->path);
    for (size_t r = 0; io->loss_targets && r < N; r++)
        if (io->loss_targets[r] < -1 || io->loss_targets[r] >= V)
            return andrea_fail(err, "%s: loss target %d at row %zu outside -1..%d", m->path, io->loss_targets[r], r, V - 1);
    const size_t n_abl = (size_t)L * H * (io->ablate_per_seq ? (size_t)B : 1);
    f->abl_bstride = io->ablate_per_seq ? (size_t)L * H : 0;
    if (io->ablate)
        for (size_t i = 0; i < n_abl; i++) f->any_abl |= io->ablate[i] != 0;

    CU_CHECK(cudaMemcpyAsync(e->tok, e->h_tok, N * sizeof(int), cudaMemcpyHostToDevice, e->st));
    if (io->lengths) {
        CU_CHECK(cudaMemcpyAsync(e->len, io->lengths, (size_t)B * sizeof(int), cudaMemcpyHostToDevice, e->st));
    } else {
        for (int b = 0; b < B; b++) e->h_tok[N + b] = T; /* h_tok has max_B spare ints at its end */
        CU_CHECK(cudaMemcpyAsync(e->len, e->h_tok + N, (size_t)B * sizeof(int), cudaMemcpyHostToDevice, e->st));
    }
    if (f->any_abl)
        CU_CHECK(cudaMemcpyAsync(e->abl, io->ablate, n_abl, cudaMemcpyHostToDevice, e->st));
    if ((io->layer_heads || io->keep_layers) && f->any_abl) /* ycat holds the ablated outputs; the CPU's layer_heads do not */
        return andrea_fail(err, "%s: layer_heads or keep_layers in a forward that ablates heads", m->path);
    if (f->any_abl && io->ablate_values && upload_ablate_values(e, io, f, err)) return -1;
    return 0;
fail:
    return -1;
}

/* The engine's own device buffers for what the caller wants on the host only (allocated once,
 * for max_B x max_T). */
static int alloc_outputs(cuda_engine *e, const outputs *o, fwd_step *f, ae_error *err) {
    const andrea_config *cf = &e->m->cfg;
    const int L = cf->n_layer, H = cf->n_head, C = cf->d_model, V = cf->vocab_size;
    if (f->want_contrib && lazy_alloc((void **)&e->contrib, (size_t)H * e->max_B * e->max_T * C * sizeof(float), err))
        return -1;
    if (o->attn_host &&
        lazy_alloc((void **)&e->stage, (size_t)e->max_B * H * e->max_T * e->max_T * sizeof(float), err))
        return -1;
    if (!f->norm && o->norm_host) {
        if (lazy_alloc((void **)&e->norm, (size_t)e->max_B * L * H * e->max_T * sizeof(float), err)) return -1;
        f->norm = e->norm;
    }
    if (!f->dla && o->dla_host) {
        if (lazy_alloc((void **)&e->dla, (size_t)e->max_B * L * H * e->max_T * sizeof(float), err)) return -1;
        f->dla = e->dla;
    }
    if (!f->logits && (o->logits_host || o->loss_host)) {
        /* as large as this forward needs, not max_B x max_T x V: the causal check grows the batch
         * for short suites while max_T is the longest suite's (retrieval's 1024 tokens), and the
         * product would not fit (GPT-2's vocabulary: 200 KB a row) */
        const size_t need = f->N * (size_t)V;
        if (need > e->logits_cap) {
            if (e->logits) cudaFree(e->logits);
            e->logits = NULL;
            e->logits_cap = 0;
            if (lazy_alloc((void **)&e->logits, need * sizeof(float), err)) return -1;
            e->logits_cap = need;
        }
        f->logits = e->logits;
    }
    if (o->loss_host && (lazy_alloc((void **)&e->loss_tgt, (size_t)e->max_B * e->max_T * sizeof(int), err) ||
                         lazy_alloc((void **)&e->loss, (size_t)e->max_B * e->max_T * sizeof(float), err) ||
                         lazy_alloc((void **)&e->loss_rows, (size_t)e->max_B * e->max_T * sizeof(int), err)))
        return -1;
    return 0;
}

/* Layer l's attention: q, k, v -> y, its probabilities into the caller's device maps or, through
 * the stage, its host maps. */
static int layer_attention(cuda_engine *e, const outputs *o, const fwd_step *f, int l, ae_error *err) {
    const andrea_config *cf = &e->m->cfg;
    const int B = f->B, T = f->T, L = cf->n_layer, H = cf->n_head, hd = cf->head_dim;
    andrea_attn_args aa;
    memset(&aa, 0, sizeof aa);
    aa.len = e->len;
    aa.B = B; aa.H = H; aa.T = T; aa.hd = hd;
    andrea_attn_fused(&aa, e->qkv, e->ycat); /* heads as a stride pattern of the fused QKV, no copy */
    aa.scale = 1.f / sqrtf((float)hd);
    aa.split_qk = e->split_qk;
    if (o->attn_dev) {
        size_t elt = o->attn_fp16 ? sizeof(__half) : sizeof(float);
        aa.probs = (char *)o->attn_dev + (size_t)l * H * T * T * elt;
        aa.probs_fp16 = o->attn_fp16;
        aa.probs_bstride = (long long)L * H * T * T;
    } else if (o->attn_host) {
        aa.probs = e->stage;
        aa.probs_bstride = (long long)H * T * T;
    }
    if (e->attn_version == 3 && andrea_attention_v3_supports(hd)) {
        CU_CHECK(andrea_attention_v3(&aa, e->st));
    } else if (e->attn_version == 2 && andrea_attention_v2_supports(hd) && !e->split) {
        /* v2 has no split products: under tf32x3 the exact v1 below keeps the precision's promise */
        CU_CHECK(andrea_attention_v2(&aa, e->st));
    } else {
        CU_CHECK(andrea_attention_v1(&aa, e->st));
    }
    if (o->attn_host) /* [B, H, T, T] layer slice into [B, L, H, T, T] */
        CU_CHECK(cudaMemcpy2DAsync(o->attn_host + (size_t)l * H * T * T, (size_t)L * H * T * T * sizeof(float),
                                   e->stage, (size_t)H * T * T * sizeof(float), (size_t)H * T * T * sizeof(float),
                                   B, cudaMemcpyDeviceToHost, e->st));
    return 0;
fail:
    return -1;
}

/* Layer l's per-head W_O contributions, their norms and DLA, and the host head_out. */
static int layer_contrib(cuda_engine *e, const andrea_forward_io *io, const outputs *o, const fwd_step *f, int l,
                         const float *Wo, ae_error *err) {
    const andrea_config *cf = &e->m->cfg;
    const andrea_params *p = &e->m->p;
    const int B = f->B, T = f->T, L = cf->n_layer, H = cf->n_head, C = cf->d_model, hd = cf->head_dim, TH = 256;
    const size_t N = f->N;
    const float one = 1.f, zero = 0.f;
    /* contrib[h] [N, C] = ycat[:, h*hd:(h+1)*hd] · W_O[:, h*hd:(h+1)*hd]ᵀ, all heads in one call */
    CUBLAS_CHECK(cublasSgemmStridedBatched(e->blas, CUBLAS_OP_T, CUBLAS_OP_N, C, (int)N, hd, &one, Wo, C,
                                           (long long)hd, e->ycat, C, (long long)hd, &zero, e->contrib, C,
                                           (long long)N * C, H));
    if (f->norm || f->dla) {
        head_stats_kernel<<<blocks_for((size_t)H * N * 32, TH), TH, 0, e->st>>>(
            f->norm, f->dla, e->contrib, e->tok, e->len, dev_param(e, p->wte), e->wte_mean, dev_param(e, p->lnfw), B,
            T, L, H, C, l);
        CU_CHECK(cudaGetLastError());
    }
    if (o->head_out_host && io->lengths) {
        zero_padding_rows_kernel<<<blocks_for((size_t)H * N * C, TH), TH, 0, e->st>>>(e->contrib, e->len, H, B, T, C);
        CU_CHECK(cudaGetLastError());
    }
    if (o->head_out_host)
        for (int h = 0; h < H; h++) /* contrib[h] [B, T*C] rows into [B, L, H, T, C] */
            CU_CHECK(cudaMemcpy2DAsync(o->head_out_host + ((size_t)l * H + h) * T * C,
                                       (size_t)L * H * T * C * sizeof(float), e->contrib + (size_t)h * N * C,
                                       (size_t)T * C * sizeof(float), (size_t)T * C * sizeof(float), B,
                                       cudaMemcpyDeviceToHost, e->st));
    return 0;
fail:
    return -1;
}

/* Layer l's replacement outputs of ablated heads ([Bv, T, C] of e->abl_vals), or NULL: zeros. */
static const float *layer_values(const cuda_engine *e, const fwd_step *f, int l) {
    const size_t per_layer = (size_t)f->abl_vals_B * f->T * e->m->cfg.d_model;
    return f->abl_vals_B ? e->abl_vals + (size_t)l * per_layer : NULL;
}

/* Transformer block l on the residual stream e->x [N, C]. */
static int layer_forward(cuda_engine *e, const andrea_forward_io *io, const outputs *o, const fwd_step *f, int l,
                         ae_error *err) {
    const andrea_config *cf = &e->m->cfg;
    const andrea_params *p = &e->m->p;
    const int B = f->B, T = f->T, H = cf->n_head, C = cf->d_model, hd = cf->head_dim, TH = 256;
    const size_t N = f->N;
    const float *Wo = dev_param(e, p->attprojw + (size_t)l * C * C);
    layernorm_kernel<<<blocks_for(N, 8), TH, 0, e->st>>>(e->ln, NULL, e->x, dev_param(e, p->ln1w + (size_t)l * C),
                                                        dev_param(e, p->ln1b + (size_t)l * C), (int)N, C);
    CU_CHECK(cudaGetLastError());
    /* ONE matmul for Q, K and V of all heads: [N, C] x [C, 3C] */
    if (layer_linear(e, W3_QKV, l, e->qkv, e->ln, dev_param(e, p->qkvw + (size_t)l * 3 * C * C),
                     dev_param(e, p->qkvb + (size_t)l * 3 * C), (int)N, 3 * C, C, LIN_BIAS, NULL, err))
        return -1;
    if (layer_attention(e, o, f, l, err)) return -1;
    if (f->any_abl) {
        ablate_heads_kernel<<<blocks_for(N * C, TH), TH, 0, e->st>>>(e->ycat, e->abl + (size_t)l * H, f->abl_bstride,
                                                                     layer_values(e, f, l), f->abl_vals_B, B, T, H, hd);
        CU_CHECK(cudaGetLastError());
    }
    if (io->layer_heads) /* [L, B, T, C]: this layer's head outputs (nothing is ablated: upload_inputs) */
        CU_CHECK(cudaMemcpyAsync(io->layer_heads + (size_t)l * N * C, e->ycat, N * C * sizeof(float),
                                 cudaMemcpyDeviceToHost, e->st));
    if (f->want_contrib && layer_contrib(e, io, o, f, l, Wo, err)) return -1;
    /* x += ycat · W_Oᵀ + attprojb: one matmul, bias and residual in its epilogue */
    if (layer_linear(e, W3_ATTPROJ, l, e->x, e->ycat, Wo, dev_param(e, p->attprojb + (size_t)l * C), (int)N, C, C,
                     LIN_RESID, e->att, err))
        return -1;
    layernorm_kernel<<<blocks_for(N, 8), TH, 0, e->st>>>(e->ln, NULL, e->x, dev_param(e, p->ln2w + (size_t)l * C),
                                                        dev_param(e, p->ln2b + (size_t)l * C), (int)N, C);
    CU_CHECK(cudaGetLastError());
    if (layer_linear(e, W3_FC, l, e->fc, e->ln, dev_param(e, p->fcw + (size_t)l * 4 * C * C),
                     dev_param(e, p->fcb + (size_t)l * 4 * C), (int)N, 4 * C, C, LIN_GELU, NULL, err))
        return -1;
    if (layer_linear(e, W3_FCPROJ, l, e->x, e->fc, dev_param(e, p->fcprojw + (size_t)l * C * 4 * C),
                     dev_param(e, p->fcprojb + (size_t)l * C), (int)N, C, 4 * C, LIN_RESID, e->att, err))
        return -1;
    return 0;
fail:
    return -1;
}

/* x rows of sequences lo..hi-1 (TC floats each) = the kept input of item s % kept_B. */
static __global__ void copy_kept_kernel(float *x, const float *kept, int lo, int hi, int kept_B, size_t TC) {
    size_t idx = (size_t)blockIdx.x * blockDim.x + threadIdx.x, n = (size_t)(hi - lo) * TC;
    if (idx >= n) return;
    size_t s = (size_t)lo + idx / TC;
    x[s * TC + idx % TC] = kept[(s % (size_t)kept_B) * TC + idx % TC];
}

/* keep_layers: room for [L, B, T, C] layer inputs. */
static int reserve_kept(cuda_engine *e, int B, int T, ae_error *err) {
    const andrea_config *cf = &e->m->cfg;
    const size_t bytes = (size_t)cf->n_layer * B * T * cf->d_model * sizeof(float); /* <= L x the activations */
    e->kept_B = e->kept_T = 0;
    if (grow_device((void **)&e->kept_x, &e->kept_bytes, bytes, err)) return -1;
    e->kept_B = B;
    e->kept_T = T;
    return 0;
}

/* Before layer l of a forward resumed from kept layers: the sequences that start at l (resume_kept
 * ascending: they follow those already running) take their kept input; the layer then runs on the
 * first *active sequences. Layer 0's starters were embedded. */
static int join_kept(cuda_engine *e, const andrea_forward_io *io, fwd_step *f, int l, int *active, ae_error *err) {
    const int C = e->m->cfg.d_model;
    int n = *active;
    while (n < io->B && io->resume_kept[n] <= l) n++;
    if (l > 0 && n > *active) {
        const size_t TC = (size_t)io->T * C, per_layer = (size_t)e->kept_B * TC;
        copy_kept_kernel<<<blocks_for((size_t)(n - *active) * TC, 256), 256, 0, e->st>>>(
            e->x, e->kept_x + (size_t)l * per_layer, *active, n, e->kept_B, TC);
        CU_CHECK(cudaGetLastError());
    }
    *active = n;
    f->B = n;
    f->N = (size_t)n * io->T;
    return 0;
fail:
    return -1;
}

/* Token losses alone (the causal check): the LM head runs on the rows with a target only (the
 * final LayerNorm's rows gathered into qkv, free after the last layer), as the CPU engine does;
 * the other rows' losses are NaN (all-ones bits). */
static int loss_rows_only(cuda_engine *e, const outputs *o, const fwd_step *f, ae_error *err) {
    const andrea_config *cf = &e->m->cfg;
    const int C = cf->d_model, V = cf->vocab_size;
    size_t n = 0;
    for (size_t r = 0; r < f->N; r++)
        if (o->loss_targets[r] >= 0) e->h_rows[n++] = (int)r;
    CU_CHECK(cudaMemsetAsync(e->loss, 0xff, f->N * sizeof(float), e->st));
    if (n > 0) {
        CU_CHECK(cudaMemcpyAsync(e->loss_tgt, o->loss_targets, f->N * sizeof(int), cudaMemcpyHostToDevice, e->st));
        CU_CHECK(cudaMemcpyAsync(e->loss_rows, e->h_rows, n * sizeof(int), cudaMemcpyHostToDevice, e->st));
        gather_rows_kernel<<<blocks_for(n * C, 256), 256, 0, e->st>>>(e->qkv, e->ln, e->loss_rows, n, C);
        CU_CHECK(cudaGetLastError());
        if (linear(e, f->logits, e->qkv, dev_param(e, e->m->p.wte), (int)n, V, C, err)) return -1;
        token_loss_kernel<<<(unsigned)n, 256, 0, e->st>>>(e->loss, f->logits, e->loss_tgt, e->loss_rows, V);
        CU_CHECK(cudaGetLastError());
    }
    CU_CHECK(cudaMemcpyAsync(o->loss_host, e->loss, f->N * sizeof(float), cudaMemcpyDeviceToHost, e->st));
    return 0;
fail:
    return -1;
}

static int forward_impl(cuda_engine *e, const andrea_forward_io *io, const outputs *o, ae_error *err) {
    const andrea_model *m = e->m;
    const andrea_config *cf = &m->cfg;
    const int B = io->B, T = io->T, L = cf->n_layer, H = cf->n_head, C = cf->d_model, V = cf->vocab_size, TH = 256;
    const size_t N = (size_t)B * T;
    const andrea_params *p = &m->p;
    fwd_step f;
    int active = 0; /* resume_kept: the sequences running so far */
    memset(&f, 0, sizeof f);
    f.B = B;
    f.T = T;
    f.N = N;
    f.norm = o->norm_dev;
    f.dla = o->dla_dev;
    f.logits = o->logits_dev;
    f.want_contrib = o->norm_dev || o->dla_dev || o->norm_host || o->dla_host || o->head_out_host;
    if (upload_inputs(e, io, &f, err) || alloc_outputs(e, o, &f, err)) return -1;
    if (io->keep_layers && reserve_kept(e, B, T, err)) return -1;
    float *const norm = f.norm, *const dla = f.dla, *const logits = f.logits;

    /* x [N, C]: the embeddings, or the saved input of the resume layer (the caller's forward of
     * the same tokens: layers before it would compute it again) */
    if (io->resume_layer > 0) {
        CU_CHECK(cudaMemcpyAsync(e->x, io->resume_x, N * C * sizeof(float), cudaMemcpyHostToDevice, e->st));
    } else {
        /* resumed from kept layers: only the sequences that start at layer 0 */
        size_t n_embed = N;
        if (io->resume_kept) {
            int b0 = 0;
            while (b0 < B && io->resume_kept[b0] == 0) b0++;
            n_embed = (size_t)b0 * T;
        }
        if (n_embed > 0) {
            embed_kernel<<<blocks_for(n_embed * C, TH), TH, 0, e->st>>>(e->x, e->tok, dev_param(e, p->wte),
                                                                        dev_param(e, p->wpe), (int)n_embed, T, C);
            CU_CHECK(cudaGetLastError());
        }
    }
    for (int l = io->resume_kept ? io->resume_kept[0] : io->resume_layer; l < L; l++) {
        if (io->resume_kept && join_kept(e, io, &f, l, &active, err)) return -1;
        if (io->layer_inputs) /* [L, B, T, C]: layer l's input, for forwards resumed there */
            CU_CHECK(cudaMemcpyAsync(io->layer_inputs + (size_t)l * N * C, e->x, N * C * sizeof(float),
                                     cudaMemcpyDeviceToHost, e->st));
        if (io->keep_layers)
            CU_CHECK(cudaMemcpyAsync(e->kept_x + (size_t)l * N * C, e->x, N * C * sizeof(float),
                                     cudaMemcpyDeviceToDevice, e->st));
        if (layer_forward(e, io, o, &f, l, err)) return -1;
    }
    f.B = B; /* every sequence ran the last layer */
    f.N = N;
    if (io->final_resid) /* [N, C]: the residual before the final LayerNorm (every row runs every layer) */
        CU_CHECK(cudaMemcpyAsync(io->final_resid, e->x, N * C * sizeof(float), cudaMemcpyDeviceToHost, e->st));

    if (logits || dla) {
        layernorm_kernel<<<blocks_for(N, 8), TH, 0, e->st>>>(e->ln, e->rstd, e->x, dev_param(e, p->lnfw),
                                                            dev_param(e, p->lnfb), (int)N, C);
        CU_CHECK(cudaGetLastError());
    }
    if (logits && !o->logits_host && !o->logits_dev && o->loss_host) {
        if (loss_rows_only(e, o, &f, err)) return -1;
    } else if (logits) {
        if (linear(e, logits, e->ln, dev_param(e, p->wte), (int)N, V, C, err)) return -1;
        if (o->logits_host)
            CU_CHECK(cudaMemcpyAsync(o->logits_host, logits, N * V * sizeof(float), cudaMemcpyDeviceToHost, e->st));
        if (o->loss_host) {
            CU_CHECK(cudaMemcpyAsync(e->loss_tgt, o->loss_targets, N * sizeof(int), cudaMemcpyHostToDevice, e->st));
            token_loss_kernel<<<(unsigned)N, 256, 0, e->st>>>(e->loss, logits, e->loss_tgt, NULL, V);
            CU_CHECK(cudaGetLastError());
            CU_CHECK(cudaMemcpyAsync(o->loss_host, e->loss, N * sizeof(float), cudaMemcpyDeviceToHost, e->st));
        }
    }
    if (dla) {
        dla_finish_kernel<<<blocks_for((size_t)B * L * H * T, TH), TH, 0, e->st>>>(dla, e->rstd, e->len, B, T, L * H);
        CU_CHECK(cudaGetLastError());
        if (o->dla_host)
            CU_CHECK(cudaMemcpyAsync(o->dla_host, dla, (size_t)B * L * H * T * sizeof(float), cudaMemcpyDeviceToHost, e->st));
    }
    if (o->norm_host)
        CU_CHECK(cudaMemcpyAsync(o->norm_host, norm, (size_t)B * L * H * T * sizeof(float), cudaMemcpyDeviceToHost, e->st));
    return 0;
fail:
    return -1;
}

static int cuda_forward(andrea_engine *base, const andrea_forward_io *io, ae_error *err) {
    cuda_engine *e = (cuda_engine *)base;
    outputs o;
    memset(&o, 0, sizeof o);
    o.attn_host = io->attn;
    o.head_out_host = io->head_out;
    o.norm_host = io->head_out_norm;
    o.dla_host = io->head_dla;
    o.logits_host = io->logits;
    o.loss_targets = io->loss_targets;
    o.loss_host = io->token_loss;
    int rc = forward_impl(e, io, &o, err);
    /* host outputs are complete only after the stream drains; drain it on failure too */
    cudaError_t s = cudaStreamSynchronize(e->st);
    if (rc == 0 && s != cudaSuccess)
        return andrea_fail(err, "CUDA: cudaStreamSynchronize failed at %s:%d: %s", AE_SOURCE_FILE, __LINE__,
                       cudaGetErrorString(s));
    return rc;
}

extern "C" int andrea_cuda_forward_device(andrea_engine *base, const andrea_forward_io *io,
                                          const andrea_cuda_device_outputs *out, ae_error *err) {
    if (!base || !base->has_gpu) return andrea_fail(err, "andrea_cuda_forward_device: not a CUDA engine");
    if (io->attn || io->head_out || io->head_out_norm || io->head_dla || io->logits || io->token_loss)
        return andrea_fail(err, "andrea_cuda_forward_device: host outputs given; use andrea_engine_forward for those");
    if (io->layer_inputs || io->resume_layer || io->resume_x || io->layer_heads || io->resume_heads || io->final_resid ||
        io->keep_layers || io->resume_kept)
        return andrea_fail(err, "andrea_cuda_forward_device: a resumed forward has host outputs only");
    outputs o;
    memset(&o, 0, sizeof o);
    o.attn_dev = out->attn;
    o.attn_fp16 = out->attn_fp16;
    o.norm_dev = out->head_out_norm;
    o.dla_dev = out->head_dla;
    o.logits_dev = out->logits;
    return forward_impl((cuda_engine *)base, io, &o, err);
}

extern "C" int andrea_cuda_synchronize(andrea_engine *base, ae_error *err) {
    CU_CHECK(cudaStreamSynchronize(((cuda_engine *)base)->st));
    return 0;
fail:
    return -1;
}

extern "C" void *andrea_cuda_stream(andrea_engine *base) { return (void *)((cuda_engine *)base)->st; }

extern "C" const andrea_config *andrea_cuda_config(const andrea_engine *base) {
    return &((const cuda_engine *)base)->m->cfg;
}

extern "C" int andrea_cuda_is_fp32(const andrea_engine *base) { return ((const cuda_engine *)base)->fp32; }

extern "C" int andrea_cuda_piece_maps(const andrea_engine *base) { return ((const cuda_engine *)base)->piece_maps; }

extern "C" const char *andrea_cuda_precision(const andrea_engine *base) {
    const cuda_engine *e = (const cuda_engine *)base;
    return e->fp32 ? "fp32" : e->split ? "tf32x3" : "tf32";
}

#ifndef ANDREA_CUDA_ARCHS
#define ANDREA_CUDA_ARCHS "?"
#endif
/* The compute capability major of the current GPU, or -1 with err filled: a GPU this build has no
 * code for (CMAKE_CUDA_ARCHITECTURES, passed in as ANDREA_CUDA_ARCHS) is refused here, at engine
 * open, with what to do, instead of failing at the first kernel launch. */
static int cuda_device_major(ae_error *err) {
    int dev = 0;
    cudaDeviceProp p;
    cudaFuncAttributes fa;
    cudaError_t rc;
    CU_CHECK(cudaGetDevice(&dev));
    CU_CHECK(cudaGetDeviceProperties(&p, dev));
    rc = cudaFuncGetAttributes(&fa, (const void *)ablate_heads_kernel);
    if (rc == cudaErrorNoKernelImageForDevice || rc == cudaErrorInvalidDeviceFunction) {
        (void)cudaGetLastError();
        andrea_fail(err,
                "CUDA: %s (compute capability %d.%d) has no code in this build of andrea (built for %s): "
                "rebuild with -DCMAKE_CUDA_ARCHITECTURES=%d%d (or native), or run with --device cpu",
                p.name, p.major, p.minor, ANDREA_CUDA_ARCHS, p.major, p.minor);
        return -1;
    }
    CU_CHECK(rc);
    return p.major;
fail:
    return -1;
}

/* The weights' upload: chunks of 64 MiB copied on every host thread into one of three pinned
 * staging buffers while the DMA of the previous chunks runs (a pageable cudaMemcpy stages through
 * the driver's own buffer one chunk at a time, on one thread). Complete when this returns. */
static int upload_weights(void *dst, const void *src, size_t n_bytes, cudaStream_t st, ae_error *err) {
    enum { NSTAGE = 3 };
    const size_t CH = (size_t)64 << 20;
    void *pin[NSTAGE] = {NULL, NULL, NULL};
    cudaEvent_t ev[NSTAGE] = {NULL, NULL, NULL};
    int rc = -1;
    if (n_bytes <= CH) { /* small models: the plain copy, no staging to set up */
        CU_CHECK(cudaMemcpy(dst, src, n_bytes, cudaMemcpyHostToDevice));
        return 0;
    }
    for (int b = 0; b < NSTAGE; b++) {
        CU_CHECK(cudaHostAlloc(&pin[b], CH, cudaHostAllocDefault));
        CU_CHECK(cudaEventCreateWithFlags(&ev[b], cudaEventDisableTiming));
    }
    for (size_t off = 0, k = 0; off < n_bytes; off += CH, k++) {
        const size_t len = n_bytes - off < CH ? n_bytes - off : CH;
        const int b = (int)(k % NSTAGE);
        CU_CHECK(cudaEventSynchronize(ev[b])); /* the DMA that last read this buffer is done */
        andrea_parallel_memcpy(pin[b], (const char *)src + off, len);
        CU_CHECK(cudaMemcpyAsync((char *)dst + off, pin[b], len, cudaMemcpyHostToDevice, st));
        CU_CHECK(cudaEventRecord(ev[b], st));
    }
    CU_CHECK(cudaStreamSynchronize(st));
    rc = 0;
fail:
    if (rc) cudaStreamSynchronize(st); /* never free a buffer a DMA may still read */
    for (int b = 0; b < NSTAGE; b++) {
        if (ev[b]) cudaEventDestroy(ev[b]);
        if (pin[b]) cudaFreeHost(pin[b]);
    }
    return rc;
}

/* Model m's weights into the engine (device buffers allocated on first use, kept after): its
 * parameters, wte's mean (DLA's centring) and, for tf32x3, the layer weights split into
 * [hi | hi | lo] rows. Complete when it returns; what the engine kept of the last model's forwards
 * (kept layers, uploaded replacement values) is dropped. */
static int load_weights(cuda_engine *e, const andrea_model *m, ae_error *err) {
    const andrea_config *cf = &m->cfg;
    const int C = cf->d_model;
    float *mean = (float *)malloc((size_t)C * sizeof(float));
    int rc = -1;
    if (!mean) return andrea_fail(err, "%s: out of memory for the CUDA engine", m->path);
    CU_CHECK(cudaStreamSynchronize(e->st)); /* no kernel of the last model's forwards still reads them */
    if (!e->w) CU_CHECK(cudaMalloc((void **)&e->w, m->n_floats * sizeof(float)));
    if (upload_weights(e->w, m->memory, m->n_floats * sizeof(float), e->st, err)) goto fail;
    e->m = m; /* dev_param's offsets are m's from here on */
    if (andrea_wte_mean(m, mean, err)) goto fail;
    if (!e->wte_mean) CU_CHECK(cudaMalloc((void **)&e->wte_mean, (size_t)C * sizeof(float)));
    CU_CHECK(cudaMemcpy(e->wte_mean, mean, (size_t)C * sizeof(float), cudaMemcpyHostToDevice));
    if (e->split) { /* the weights stay as they are; their rows as [hi | hi | lo] beside them: 3x the
                     * layers' weights, which are in memory (so the sizes cannot overflow) */
        const size_t Ls = (size_t)cf->n_layer, Cs = (size_t)C;
        const size_t rows[4] = {Ls * 3 * Cs, Ls * Cs, Ls * 4 * Cs, Ls * Cs}, cols[4] = {Cs, Cs, Cs, 4 * Cs};
        const float *src[4] = {dev_param(e, m->p.qkvw), dev_param(e, m->p.attprojw), dev_param(e, m->p.fcw),
                               dev_param(e, m->p.fcprojw)};
        /* the weights' upload (upload_weights: complete when it returns; a guard all the same) must be
         * complete before kernels on the non-blocking stream read them */
        CU_CHECK(cudaDeviceSynchronize());
        for (int i = 0; i < 4; i++) {
            if (!e->w3[i]) CU_CHECK(cudaMalloc((void **)&e->w3[i], rows[i] * 3 * cols[i] * sizeof(float)));
            split3_tf32_kernel<<<blocks_for(rows[i] * cols[i], 256), 256, 0, e->st>>>(e->w3[i], src[i], rows[i],
                                                                                      (int)cols[i], 1);
            CU_CHECK(cudaGetLastError());
        }
        CU_CHECK(cudaStreamSynchronize(e->st));
    }
    e->kept_B = 0;           /* layers kept from the last model's forwards are not this one's */
    e->abl_vals_src = NULL;  /* nor are its uploaded replacement values */
    rc = 0;
fail:
    free(mean);
    return rc;
}

static int cuda_swap_model(andrea_engine *base, const andrea_model *m, ae_error *err) {
    return load_weights((cuda_engine *)base, m, err);
}

extern "C" andrea_engine *andrea_cuda_engine_open(const andrea_model *m, const andrea_engine_options *opt, int max_B,
                                                  int max_T, ae_error *err) {
    andrea_engine_options def;
    if (!opt) {
        andrea_engine_options_init(&def);
        opt = &def;
    }
    const andrea_config *cf = &m->cfg;
    const int C = cf->d_model;
    size_t N = 0, acts = 0;
    int major;
    const char *prec = opt->precision[0] ? opt->precision : NULL;
    /* the options' device (an MPI rank's GPU) before the first allocation of this engine */
    if (opt->device_index >= 0 && andrea_cuda_use_device(opt->device_index) != 0) {
        andrea_fail(err, "%s: CUDA device %d cannot be selected", m->path, opt->device_index);
        return NULL;
    }
    cuda_engine *e = (cuda_engine *)calloc(1, sizeof *e);
    if (!e) {
        andrea_fail(err, "%s: out of memory for the CUDA engine", m->path);
        return NULL;
    }
    if (max_B < 1 || max_T < 1 || max_T > cf->max_seq_len ||
        __builtin_mul_overflow((size_t)max_B, (size_t)max_T, &N) || __builtin_mul_overflow(N, (size_t)4 * C, &acts)) {
        andrea_fail(err, "%s: CUDA engine size B=%d T=%d invalid (max_seq_len %d)", m->path, max_B, max_T, cf->max_seq_len);
        free(e);
        return NULL;
    }
    e->base.name = "cuda";
    e->base.has_gpu = 1;
    e->base.can_token_loss = 1;
    e->base.can_ablate_per_seq = 1;
    e->base.can_resume = 1; /* layer_inputs / resume_x; not resume_heads (engine.c refuses those) */
    e->base.can_keep_layers = 1;
    e->base.host_alloc = cuda_host_alloc;
    e->base.host_free = cuda_host_free;
    e->base.max_B = max_B;
    e->base.reserve_batch = cuda_reserve_batch;
    e->base.forward = cuda_forward;
    e->base.close = cuda_close;
    e->base.swap_model = cuda_swap_model;
    e->m = m;
    e->max_B = max_B;
    e->max_T = max_T;
    /* the options' precision (the CLI's --precision, or a developer override: engine.c) */
    if (prec && strcmp(prec, "tf32") && strcmp(prec, "tf32x3") && strcmp(prec, "fp32")) {
        andrea_fail(err, "precision '%.32s' (ANDREA_CUDA_PRECISION?): tf32, tf32x3 or fp32", prec);
        free(e);
        return NULL;
    }
    e->fp32 = prec && !strcmp(prec, "fp32");
    e->split = prec && !strcmp(prec, "tf32x3");
    /* split_qlo_regs: attention v3 keeps Q's low parts in registers (benchmarks) */
    e->split_qk = !e->split ? 0 : opt->split_qlo_regs ? 1 : 2;
    e->piece_maps = opt->pipeline_piece_maps > 0 ? opt->pipeline_piece_maps : 0;
    /* attention_version picks a kernel version (benchmarks); full fp32 always takes v1 */
    e->attn_version = e->fp32 ? 1 : opt->attention_version >= 1 && opt->attention_version <= 2 ? opt->attention_version : 3;
    e->plans = (struct lt_plan *)calloc(LT_MAX_PLANS, sizeof(struct lt_plan));
    if (!e->plans) {
        andrea_fail(err, "%s: out of memory for the CUDA engine", m->path);
        goto fail;
    }
    if ((major = cuda_device_major(err)) < 0) goto fail;
    if (major < 8) e->attn_version = 1; /* no TF32 tensor cores before sm_80: the fp32 fallback */
    CU_CHECK(cudaStreamCreateWithFlags(&e->st, cudaStreamNonBlocking));
    if (andrea_cublas_load(err)) goto fail; /* loaded now, not at start-up (cublas_lazy.h) */
    CUBLAS_CHECK(cublasCreate(&e->blas));
    CUBLAS_CHECK(cublasSetStream(e->blas, e->st));
    CUBLAS_CHECK(cublasSetMathMode(e->blas, e->fp32 ? CUBLAS_PEDANTIC_MATH : CUBLAS_TF32_TENSOR_OP_MATH));
    CUBLAS_CHECK(cublasLtCreate(&e->lt));
    CU_CHECK(cudaMalloc(&e->lt_ws, LT_WORKSPACE));

    if (load_weights(e, m, err) || alloc_batch(e, max_B, err)) goto fail;
    return &e->base;
fail:
    free_engine(e);
    return NULL;
}
