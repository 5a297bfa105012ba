/* attention_v2.cu — version 2 of the attention kernel: tensor cores (WMMA TF32 m16n16k8).
 *
 * For head_dim % 16 == 0 (and <= 128). Block = 4 warps over a 64-row query tile, key tiles of 64;
 * the grid is (B*H, ceil(T/64)), heavy (late) query tiles launched first. Two passes over the
 * causal key tiles: pass 1 computes S = Q·Kᵀ on tensor cores and keeps each row's running max and
 * sum; pass 2 recomputes the same S (bit-identical), forms P = exp(S·scale - max) / sum in fp32,
 * writes P to the probabilities output (when asked) straight from shared memory, coalesced, and
 * accumulates O += P·V on tensor cores. Recomputing S costs one extra Q·Kᵀ, small next to the
 * projections, and lets probabilities be written once, final, with no read-back.
 * Numerics: Q, K, P, V are rounded to TF32 (10-bit mantissa) inside the MMA; softmax and
 * accumulation are fp32, so probabilities differ from the fp32 CPU engine by ~1e-4 (tests allow 2e-3).
 */
#include <cuda_fp16.h>
#include <math.h>
#include <mma.h>

#include "attention.h"

using namespace nvcuda;


#define V2_BQ 64
#define V2_BK 64
#define V2_WARPS 4
#define V2_LDS (V2_BK + 4)

/* TF32 WMMA exists from sm_80 on: for an older target (-DCMAKE_CUDA_ARCHITECTURES=75) the kernel
 * below is a stub that the engine never launches (cuda_engine.cu takes version 1 there). */
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 800
typedef wmma::fragment<wmma::matrix_a, 16, 16, 8, wmma::precision::tf32, wmma::row_major> frag_a;
typedef wmma::fragment<wmma::matrix_b, 16, 16, 8, wmma::precision::tf32, wmma::col_major> frag_bt;
typedef wmma::fragment<wmma::matrix_b, 16, 16, 8, wmma::precision::tf32, wmma::row_major> frag_b;
typedef wmma::fragment<wmma::accumulator, 16, 16, 8, float> frag_c;

template <typename F> __device__ __forceinline__ void to_tf32(F &f) {
#pragma unroll
    for (int t = 0; t < f.num_elements; t++) f.x[t] = wmma::__float_to_tf32(f.x[t]);
}

/* Loads rows [r0, r0+64) of a head's T rows (ld floats apart) into a [64][HD+4] shared tile, zero past T. */
template <int HD>
__device__ __forceinline__ void load_tile(float *dst, const float *src, int r0, int T, int ld) {
    constexpr int LD = HD + 4;
    constexpr int V4 = HD / 4;
    const float *tile = src + r0 * ld;
    for (int idx = threadIdx.x; idx < V2_BQ * V4; idx += V2_WARPS * 32) {
        int r = idx / V4, c = (idx % V4) * 4;
        float4 val = make_float4(0.f, 0.f, 0.f, 0.f);
        if (r < T - r0) val = *(const float4 *)(tile + (r * ld + c)); /* 32-bit: T * ld < 2^31 (launcher) */
        *(float4 *)(dst + r * LD + c) = val;
    }
}

/* S (16 x 64, this warp's rows) = Q_w · K_tileᵀ, stored to S_w (fp32, unscaled). */
template <int HD>
__device__ __forceinline__ void scores(const float *Qw, const float *Ks, float *Sw) {
    constexpr int LD = HD + 4;
    frag_c acc[V2_BK / 16];
#pragma unroll
    for (int n = 0; n < V2_BK / 16; n++) wmma::fill_fragment(acc[n], 0.f);
#pragma unroll
    for (int kk = 0; kk < HD; kk += 8) {
        frag_a fa;
        wmma::load_matrix_sync(fa, Qw + kk, LD);
        to_tf32(fa);
#pragma unroll
        for (int n = 0; n < V2_BK / 16; n++) {
            frag_bt fb;
            wmma::load_matrix_sync(fb, Ks + n * 16 * LD + kk, LD);
            to_tf32(fb);
            wmma::mma_sync(acc[n], fa, fb, acc[n]);
        }
    }
#pragma unroll
    for (int n = 0; n < V2_BK / 16; n++)
        wmma::store_matrix_sync(Sw + n * 16, acc[n], V2_LDS, wmma::mem_row_major);
}

/* O += P·V of one key tile on tensor cores: apart from the softmax, as it is pass 2's only MMA work. */
template <int HD>
__device__ __forceinline__ void v2_accumulate_pv(const float *Sw, const float *Vs, frag_c (&o)[HD / 16]) {
    constexpr int LD = HD + 4;
#pragma unroll
    for (int kk = 0; kk < V2_BK; kk += 8) {
        frag_a fp;
        wmma::load_matrix_sync(fp, Sw + kk, V2_LDS);
        to_tf32(fp);
#pragma unroll
        for (int n = 0; n < HD / 16; n++) {
            frag_b fv;
            wmma::load_matrix_sync(fv, Vs + kk * LD + n * 16, LD);
            to_tf32(fv);
            wmma::mma_sync(o[n], fp, fv, o[n]);
        }
    }
}

/* Zeros in columns [kend', T) (kend' tile-aligned), keys the passes never visit: each p written once. */
__device__ __forceinline__ void v2_zero_tail(const andrea_attn_args &a, int T, int b, int h, int q0, int warp,
                                             int kend, int lane) {
    const int z0 = ((kend + V2_BK - 1) / V2_BK) * V2_BK;
    const int nz = T - z0;
    if (nz > 0) {
        for (int rr = 0; rr < 16; rr++) {
            const int ii = q0 + warp * 16 + rr;
            if (ii >= T) break;
            const size_t off = (size_t)b * a.probs_bstride + ((size_t)h * T + ii) * T + z0;
            if (a.probs_fp16) {
                __half *p = (__half *)a.probs + off;
                for (int c = lane; c < nz; c += 32) p[c] = __float2half(0.f);
            } else {
                float *p = (float *)a.probs + off;
                for (int c = lane; c < nz; c += 32) p[c] = 0.f;
            }
        }
    }
}

/* O to y via Ow (the warp's Q rows, no longer read): fragments have no element order to store by. */
template <int HD>
__device__ __forceinline__ void v2_store_out(const andrea_attn_args &a, const frag_c (&o)[HD / 16], float *Ow, int T,
                                             int bh, int q0, int warp, int lane) {
    constexpr int LD = HD + 4;
#pragma unroll
    for (int n = 0; n < HD / 16; n++) wmma::store_matrix_sync(Ow + n * 16, o[n], LD, wmma::mem_row_major);
    __syncwarp();
    float *y = a.y + (size_t)(bh / a.H) * a.out_bstride + (size_t)(bh % a.H) * a.out_hstride;
    for (int idx = lane; idx < 16 * HD; idx += 32) {
        const int rr = idx / HD, c = idx % HD;
        const int ii = q0 + warp * 16 + rr;
        if (ii < T) y[ii * a.out_ld + c] = Ow[rr * LD + c];
    }
}

/* Pass 1, the softmax and the probabilities store stay inline: as helpers they changed the SASS (NOTES.md). */
template <int HD>
__global__ void __launch_bounds__(V2_WARPS * 32) attention_v2_kernel(andrea_attn_args a) {
    constexpr int LD = HD + 4;
    extern __shared__ __align__(16) float sm[];
    float *Qs = sm;                 /* [64][LD] */
    float *Ks = Qs + V2_BQ * LD;    /* [64][LD] */
    float *Vs = Ks + V2_BK * LD;    /* [64][LD] */
    float *Ss = Vs + V2_BK * LD;    /* [4 warps][16][V2_LDS] */
    const int T = a.T;
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int bh = blockIdx.x;
    const int b = bh / a.H, h = bh % a.H;
    const int q0 = (gridDim.y - 1 - blockIdx.y) * V2_BQ; /* heavy tiles first */
    const size_t in = (size_t)b * a.in_bstride + (size_t)h * a.in_hstride;
    const int ld = a.in_ld;
    const float *q = a.q + in, *k = a.k + in, *v = a.v + in;
    float *Sw = Ss + warp * 16 * V2_LDS;
    const float *Qw = Qs + warp * 16 * LD;
    const int kend = min(q0 + V2_BQ, T); /* keys [0, kend) can be attended by this tile */

    load_tile<HD>(Qs, q, q0, T, ld);

    /* Each row of the warp's 16 is owned by a lane pair: lane/2 = row, lane%2 = column half. */
    const int r = lane / 2, half = lane % 2;
    const int i = q0 + warp * 16 + r;
    float mx = -INFINITY, sum = 0.f;

    /* pass 1: running max and sum of exp per row */
    for (int kt = 0; kt < kend; kt += V2_BK) {
        __syncthreads(); /* previous tile fully consumed */
        load_tile<HD>(Ks, k, kt, T, ld);
        __syncthreads();
        scores<HD>(Qw, Ks, Sw);
        __syncwarp();
        float tmax = -INFINITY;
        for (int c = half * 32; c < half * 32 + 32; c++)
            if (kt + c <= i) tmax = fmaxf(tmax, Sw[r * V2_LDS + c] * a.scale);
        tmax = fmaxf(tmax, __shfl_xor_sync(0xffffffffu, tmax, 1));
        const float nmx = fmaxf(mx, tmax);
        if (nmx > -INFINITY) {
            float s = 0.f;
            for (int c = half * 32; c < half * 32 + 32; c++)
                if (kt + c <= i) s += expf(Sw[r * V2_LDS + c] * a.scale - nmx);
            s += __shfl_xor_sync(0xffffffffu, s, 1);
            sum = sum * expf(mx - nmx) + s;
            mx = nmx;
        }
        __syncwarp();
    }
    const float inv = sum > 0.f ? 1.f / sum : 0.f;

    /* pass 2: probabilities, written once, and O = P·V */
    frag_c o[HD / 16];
#pragma unroll
    for (int n = 0; n < HD / 16; n++) wmma::fill_fragment(o[n], 0.f);
    for (int kt = 0; kt < kend; kt += V2_BK) {
        __syncthreads();
        load_tile<HD>(Ks, k, kt, T, ld);
        load_tile<HD>(Vs, v, kt, T, ld);
        __syncthreads();
        scores<HD>(Qw, Ks, Sw);
        __syncwarp();
        for (int c = half * 32; c < half * 32 + 32; c++) {
            float *s = &Sw[r * V2_LDS + c];
            *s = (kt + c <= i) ? expf(*s * a.scale - mx) * inv : 0.f;
        }
        __syncwarp();
        if (a.probs) {
            const int ncol = min(V2_BK, T - kt), len = a.len[b];
            for (int idx = lane; idx < 16 * V2_BK; idx += 32) {
                const int rr = idx / V2_BK, c = idx % V2_BK;
                const int ii = q0 + warp * 16 + rr;
                if (ii < T && c < ncol) {
                    const size_t off = (size_t)b * a.probs_bstride + ((size_t)h * T + ii) * T + kt + c;
                    const float p = ii < len ? Sw[rr * V2_LDS + c] : 0.f;
                    if (a.probs_fp16) ((__half *)a.probs)[off] = __float2half(p);
                    else ((float *)a.probs)[off] = p;
                }
            }
        }
        v2_accumulate_pv<HD>(Sw, Vs, o);
        __syncwarp();
    }
    if (a.probs) v2_zero_tail(a, T, b, h, q0, warp, kend, lane);
    v2_store_out<HD>(a, o, Qs + warp * 16 * LD, T, bh, q0, warp, lane);
}

#else
template <int HD> __global__ void attention_v2_kernel(andrea_attn_args a) { __trap(); }
#endif

int andrea_attention_v2_supports(int hd) { return hd % 16 == 0 && hd >= 16 && hd <= 128; }

template <int HD> static cudaError_t launch_v2(const andrea_attn_args *a, cudaStream_t st) {
    constexpr int LD = HD + 4;
    const size_t smem = ((size_t)(V2_BQ + 2 * V2_BK) * LD + (size_t)V2_WARPS * 16 * V2_LDS) * sizeof(float);
    cudaError_t rc = cudaFuncSetAttribute(attention_v2_kernel<HD>,
                                          cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem);
    if (rc != cudaSuccess) return rc;
    dim3 grid((unsigned)(a->B * a->H), (unsigned)((a->T + V2_BQ - 1) / V2_BQ));
    attention_v2_kernel<HD><<<grid, V2_WARPS * 32, smem, st>>>(*a);
    return cudaGetLastError();
}

cudaError_t andrea_attention_v2(const andrea_attn_args *a, cudaStream_t st) {
    if (!andrea_attn_rows_fit(a)) return cudaErrorInvalidValue;
    switch (a->hd) {
    case 16: return launch_v2<16>(a, st);
    case 32: return launch_v2<32>(a, st);
    case 48: return launch_v2<48>(a, st);
    case 64: return launch_v2<64>(a, st);
    case 80: return launch_v2<80>(a, st);
    case 96: return launch_v2<96>(a, st);
    case 112: return launch_v2<112>(a, st);
    case 128: return launch_v2<128>(a, st);
    default: return cudaErrorInvalidValue;
    }
}
