/* attention_v3.cu — version 3 of the attention kernel: tensor cores, 8 warps, Q in registers.
 *
 * Same two-pass algorithm and numerics contract as v2 (kernels/attention_v2.cu), for
 * head_dim % 16 == 0 and <= 128. What changed from v2, and why (kernels/NOTES.md has the times):
 *   - 8 warps over a 128-row query tile (v2: 4 over 64): each K/V tile loaded to shared memory
 *     serves twice the rows, and twice the warps hide the latency of the loads;
 *   - the warp's Q rows live in registers as TF32 fragments for the whole kernel (v2 re-read them
 *     from shared memory for every key tile), freeing the Q tile's shared memory;
 *   - a warp skips key tiles wholly above its own 16 rows (v2 computed them masked), and zero-fills
 *     from its own causal end;
 *   - softmax in base 2 (exp2f of scores pre-scaled by log2(e)/sqrt(hd)), and each lane of a row
 *     pair takes interleaved columns (fewer shared-memory bank conflicts than v2's halves);
 *   - probabilities stored as float4 (fp32) / half2 (fp16) when the row length allows.
 * v3 with split_qk (the engine's tf32x3 precision): Q·Kᵀ and P·V as three TF32 products of high
 * and low parts each (x = hi + lo, hi = tf32(x), lo = tf32(x - hi): qh·khᵀ + qh·klᵀ + ql·khᵀ),
 * fp32-level results for 3x the tensor work (kernels/NOTES.md: on trained models TF32's rounding
 * anywhere upstream of a layer's logits moves its probabilities by more than 2e-3). Two layouts of Q's
 * low parts: split_qk 1 keeps them in registers beside the high parts (255 registers: 1 block per
 * SM), split_qk 2 in shared memory, read once per 8 columns of head_dim for the 4 key fragments
 * that use them (2 blocks per SM at head_dim <= 64, as without the split).
 */
#include <cuda_fp16.h>
#include <math.h>
#include <mma.h>

#include "attention.h"
#include "tf32_split.cuh"

using namespace nvcuda;


#define V3_WARPS 8
#define V3_BQ (16 * V3_WARPS)
#define V3_BK 64
#define V3_LDS (V3_BK + 4)

/* TF32 WMMA exists from sm_80 on: for an older target (-DCMAKE_CUDA_ARCHITECTURES=75) the kernel
 * below is a stub that the engine never launches (cuda_engine.cu takes version 1 there). */
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 800
typedef wmma::fragment<wmma::matrix_a, 16, 16, 8, wmma::precision::tf32, wmma::row_major> f3_a;
typedef wmma::fragment<wmma::matrix_b, 16, 16, 8, wmma::precision::tf32, wmma::col_major> f3_bt;
typedef wmma::fragment<wmma::matrix_b, 16, 16, 8, wmma::precision::tf32, wmma::row_major> f3_b;
typedef wmma::fragment<wmma::accumulator, 16, 16, 8, float> f3_c;

template <typename F> __device__ __forceinline__ void v3_tf32(F &f) {
#pragma unroll
    for (int t = 0; t < f.num_elements; t++) f.x[t] = wmma::__float_to_tf32(f.x[t]);
}

/* rows [r0, r0 + nrows) of a head's T rows (ld floats apart) into a [nrows][HD+4] shared tile, zero past T */
template <int HD>
__device__ __forceinline__ void v3_load(float *dst, const float *src, int r0, int nrows, int T, int ld) {
    constexpr int LD = HD + 4, V4 = HD / 4;
    const float *tile = src + r0 * ld;
    for (int idx = threadIdx.x; idx < nrows * V4; idx += V3_WARPS * 32) {
        int r = idx / V4, c = (idx % V4) * 4;
        float4 val = make_float4(0.f, 0.f, 0.f, 0.f);
        if (r < T - r0) val = *(const float4 *)(tile + (r * ld + c)); /* 32-bit: T * ld < 2^31 (launcher) */
        *(float4 *)(dst + r * LD + c) = val;
    }
}


/* f = tf32(f) and lo = tf32(f - tf32(f)), element by element (the fragments share a layout) */
template <typename F> __device__ __forceinline__ void v3_split(F &f, F &lo) {
#pragma unroll
    for (int t = 0; t < f.num_elements; t++) {
        /* non-finite inputs (a forward that already overflowed) give NaN low parts: no guard in
         * this inner loop (it cost registers); the dump writer's norm/DLA check and the dump
         * reader's check of every map row refuse non-finite results */
        const float x = f.x[t], hi = tf32_round_high(x);
        f.x[t] = hi;
        lo.x[t] = wmma::__float_to_tf32(x - hi);
    }
}

/* SPLIT 0: qf holds Q as TF32. SPLIT 1: qf its high parts, ql its low parts. SPLIT 2: qf its high
 * parts, Qlw (shared, [16][HD + 4]) its low parts. */
template <int HD, int SPLIT>
__device__ __forceinline__ void v3_scores(const f3_a (&qf)[HD / 8], const f3_a (&ql)[SPLIT == 1 ? HD / 8 : 1],
                                          const float *Qlw, const float *Ks, float *Sw) {
    constexpr int LD = HD + 4;
    f3_c acc[V3_BK / 16];
#pragma unroll
    for (int n = 0; n < V3_BK / 16; n++) wmma::fill_fragment(acc[n], 0.f);
#pragma unroll
    for (int kk = 0; kk < HD / 8; kk++) {
        f3_a qlf;
        if constexpr (SPLIT == 2) {
            wmma::load_matrix_sync(qlf, Qlw + kk * 8, LD);
            v3_tf32(qlf);
        }
#pragma unroll
        for (int n = 0; n < V3_BK / 16; n++) {
            f3_bt fb;
            wmma::load_matrix_sync(fb, Ks + n * 16 * LD + kk * 8, LD);
            if constexpr (SPLIT != 0) {
                f3_bt fbl;
                v3_split(fb, fbl);
                wmma::mma_sync(acc[n], qf[kk], fbl, acc[n]); /* the small products first */
                if constexpr (SPLIT == 1)
                    wmma::mma_sync(acc[n], ql[kk], fb, acc[n]);
                else
                    wmma::mma_sync(acc[n], qlf, fb, acc[n]);
            } else {
                v3_tf32(fb);
            }
            wmma::mma_sync(acc[n], qf[kk], fb, acc[n]);
        }
    }
#pragma unroll
    for (int n = 0; n < V3_BK / 16; n++) wmma::store_matrix_sync(Sw + n * 16, acc[n], V3_LDS, wmma::mem_row_major);
}

/* writes probabilities p(c) for c in [c0, c0 + n) of this warp's 16 rows (row-major, row ii) */
__device__ __forceinline__ void v3_store_row_chunk(const andrea_attn_args &a, int b, int h, int ii, int col0,
                                                   const float *src, int n, int lane_in_row, int lanes) {
    const size_t off = (size_t)b * a.probs_bstride + ((size_t)h * a.T + ii) * a.T + col0;
    if (a.probs_fp16) {
        __half *p = (__half *)a.probs + off;
        if ((a.T % 2) == 0 && (n % 2) == 0) {
            for (int c = 2 * lane_in_row; c < n; c += 2 * lanes)
                *(__half2 *)(p + c) = __floats2half2_rn(src ? src[c] : 0.f, src ? src[c + 1] : 0.f);
        } else {
            for (int c = lane_in_row; c < n; c += lanes) p[c] = __float2half(src ? src[c] : 0.f);
        }
    } else {
        float *p = (float *)a.probs + off;
        if ((a.T % 4) == 0 && (n % 4) == 0) {
            for (int c = 4 * lane_in_row; c < n; c += 4 * lanes)
                *(float4 *)(p + c) = src ? make_float4(src[c], src[c + 1], src[c + 2], src[c + 3])
                                         : make_float4(0.f, 0.f, 0.f, 0.f);
        } else {
            for (int c = lane_in_row; c < n; c += lanes) p[c] = src ? src[c] : 0.f;
        }
    }
}

/* Q into the warp's registers once, apart from the passes that reuse it (SPLIT 2: low parts to Qlw). */
template <int HD, int SPLIT>
__device__ __forceinline__ void v3_load_q(f3_a (&qf)[HD / 8], f3_a (&ql)[SPLIT == 1 ? HD / 8 : 1], float *Ks,
                                          float *Qlw, const float *q, int ld, int q0, int T, int warp, int lane) {
    constexpr int LD = HD + 4;
    v3_load<HD>(Ks, q, q0, V3_BQ, T, ld);
    __syncthreads();
    if constexpr (SPLIT == 2) { /* this warp's 16 rows: x - tf32(x), exact in fp32 */
        for (int idx = lane; idx < 16 * HD; idx += 32) {
            const int rr = idx / HD, c = idx % HD;
            const float x = Ks[(warp * 16 + rr) * LD + c];
            Qlw[rr * LD + c] = x - tf32_round_high(x);
        }
        __syncwarp();
    }
#pragma unroll
    for (int kk = 0; kk < HD / 8; kk++) {
        wmma::load_matrix_sync(qf[kk], Ks + warp * 16 * LD + kk * 8, LD);
        if constexpr (SPLIT == 1)
            v3_split(qf[kk], ql[kk]);
        else
            v3_tf32(qf[kk]);
    }
}

/* O += P·V of one key tile on tensor cores: apart from the softmax, as it is pass 2's only MMA work. */
template <int HD, int SPLIT>
__device__ __forceinline__ void v3_accumulate_pv(const float *Sw, const float *Vs, f3_c (&o)[HD / 16]) {
    constexpr int LD = HD + 4;
#pragma unroll
    for (int kk = 0; kk < V3_BK; kk += 8) {
        f3_a fp, fpl;
        wmma::load_matrix_sync(fp, Sw + kk, V3_LDS);
        if constexpr (SPLIT != 0)
            v3_split(fp, fpl);
        else
            v3_tf32(fp);
#pragma unroll
        for (int n = 0; n < HD / 16; n++) {
            f3_b fv;
            wmma::load_matrix_sync(fv, Vs + kk * LD + n * 16, LD);
            if constexpr (SPLIT != 0) { /* P·V as three products too: y feeds the later layers */
                f3_b fvl;
                v3_split(fv, fvl);
                wmma::mma_sync(o[n], fp, fvl, o[n]);
                wmma::mma_sync(o[n], fpl, fv, o[n]);
            } else {
                v3_tf32(fv);
            }
            wmma::mma_sync(o[n], fp, fv, o[n]);
        }
    }
}

/* Zeros from the warp's tile-aligned causal end to T, keys the passes never visit: each p written once. */
__device__ __forceinline__ void v3_zero_tail(const andrea_attn_args &a, int T, int b, int h, int w0, int kend_w,
                                             int lane) {
    const int z0 = ((kend_w + V3_BK - 1) / V3_BK) * V3_BK;
    if (z0 < T)
        for (int rr = lane / 16; rr < 16; rr += 2) {
            const int ii = w0 + rr;
            if (ii < T) v3_store_row_chunk(a, b, h, ii, z0, NULL, T - z0, lane % 16, 16);
        }
}

/* O to y via the warp's rows of the K/V buffers (free after the caller's barrier): fragments have no order. */
template <int HD>
__device__ __forceinline__ void v3_store_out(const andrea_attn_args &a, const f3_c (&o)[HD / 16], float *Ks, int T,
                                             int bh, int warp, int w0, int lane) {
    constexpr int LD = HD + 4;
    float *Ow = Ks + warp * 16 * LD;
#pragma unroll
    for (int n = 0; n < HD / 16; n++) wmma::store_matrix_sync(Ow + n * 16, o[n], LD, wmma::mem_row_major);
    __syncwarp();
    float *y = a.y + (size_t)(bh / a.H) * a.out_bstride + (size_t)(bh % a.H) * a.out_hstride;
    for (int idx = lane; idx < 16 * (HD / 4); idx += 32) {
        const int rr = idx / (HD / 4), c = (idx % (HD / 4)) * 4;
        const int ii = w0 + rr;
        if (ii < T) *(float4 *)(y + (ii * a.out_ld + c)) = *(const float4 *)(Ow + rr * LD + c);
    }
}

/* Pass 1, the softmax and the probabilities store stay inline: as helpers they changed the SASS (NOTES.md). */
template <int HD, int SPLIT>
__global__ void __launch_bounds__(V3_WARPS * 32, SPLIT == 1 || (SPLIT == 2 && HD > 64) ? 1 : 2)
    attention_v3_kernel(andrea_attn_args a) {
    constexpr int LD = HD + 4;
    extern __shared__ __align__(128) float sm[];
    float *Ks = sm;                /* [64][LD] */
    float *Vs = Ks + V3_BK * LD;   /* [64][LD] */
    float *Ss = Vs + V3_BK * LD;   /* [8 warps][16][V3_LDS] */
    float *Ql = Ss + V3_WARPS * 16 * V3_LDS; /* SPLIT 2: [8 warps][16][LD] Q's low parts */
    const int T = a.T;
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int bh = blockIdx.x, b = bh / a.H, h = bh % a.H;
    const int q0 = (gridDim.y - 1 - blockIdx.y) * V3_BQ; /* heavy tiles first */
    const int w0 = q0 + warp * 16;                       /* this warp's first row */
    const size_t in = (size_t)b * a.in_bstride + (size_t)h * a.in_hstride;
    const int ld = a.in_ld;
    const float *q = a.q + in, *k = a.k + in, *v = a.v + in;
    float *Sw = Ss + warp * 16 * V3_LDS;
    const int kend_blk = min(q0 + V3_BQ, T);      /* keys any row of the block can see */
    const int kend_w = min(w0 + 16, T);           /* keys this warp's rows can see */
    const float sl2 = a.scale * 1.4426950408889634f; /* scores in base 2 */
    const int len_b = a.len[b];

    /* Q tile (128 rows) through the K and V buffers, which are adjacent, into registers */
    f3_a qf[HD / 8], ql[SPLIT == 1 ? HD / 8 : 1];
    float *Qlw = Ql + warp * 16 * LD;
    v3_load_q<HD, SPLIT>(qf, ql, Ks, Qlw, q, ld, q0, T, warp, lane);

    const int r = lane & 15, half = lane >> 4; /* row r of the warp's 16, columns c = 2j + half */
    const int i = w0 + r;
    float mx = -INFINITY, sum = 0.f; /* base-2 running max and sum of row i */

    for (int kt = 0; kt < kend_blk; kt += V3_BK) {
        __syncthreads(); /* Q staging / previous K consumed */
        v3_load<HD>(Ks, k, kt, V3_BK, T, ld);
        __syncthreads();
        if (kt >= kend_w) continue; /* tile wholly above this warp's rows */
        v3_scores<HD, SPLIT>(qf, ql, Qlw, Ks, Sw);
        __syncwarp();
        float tmax = -INFINITY;
#pragma unroll 8
        for (int j = 0; j < V3_BK / 2; j++) {
            const int c = 2 * j + half;
            if (kt + c <= i) tmax = fmaxf(tmax, Sw[r * V3_LDS + c] * sl2);
        }
        tmax = fmaxf(tmax, __shfl_xor_sync(0xffffffffu, tmax, 16));
        const float nmx = fmaxf(mx, tmax);
        if (nmx > -INFINITY) {
            float s = 0.f;
#pragma unroll 8
            for (int j = 0; j < V3_BK / 2; j++) {
                const int c = 2 * j + half;
                if (kt + c <= i) s += exp2f(Sw[r * V3_LDS + c] * sl2 - nmx);
            }
            s += __shfl_xor_sync(0xffffffffu, s, 16);
            sum = sum * exp2f(mx - nmx) + s;
            mx = nmx;
        }
        __syncwarp();
    }
    const float inv = sum > 0.f ? 1.f / sum : 0.f;

    f3_c o[HD / 16];
#pragma unroll
    for (int n = 0; n < HD / 16; n++) wmma::fill_fragment(o[n], 0.f);
    for (int kt = 0; kt < kend_blk; kt += V3_BK) {
        __syncthreads();
        v3_load<HD>(Ks, k, kt, V3_BK, T, ld);
        v3_load<HD>(Vs, v, kt, V3_BK, T, ld);
        __syncthreads();
        if (kt >= kend_w) continue;
        v3_scores<HD, SPLIT>(qf, ql, Qlw, Ks, Sw);
        __syncwarp();
#pragma unroll 8
        for (int j = 0; j < V3_BK / 2; j++) {
            const int c = 2 * j + half;
            float *s = &Sw[r * V3_LDS + c];
            *s = (kt + c <= i) ? exp2f(*s * sl2 - mx) * inv : 0.f;
        }
        __syncwarp();
        if (a.probs) { /* 16 rows x min(64, T - kt) columns; 2 rows per pass, 16 lanes a row */
            const int ncol = min(V3_BK, T - kt);
            for (int rr = lane / 16; rr < 16; rr += 2) {
                const int ii = w0 + rr;
                if (ii < T) v3_store_row_chunk(a, b, h, ii, kt, ii < len_b ? Sw + rr * V3_LDS : NULL, ncol, lane % 16, 16);
            }
        }
        v3_accumulate_pv<HD, SPLIT>(Sw, Vs, o);
        __syncwarp();
    }
    if (a.probs) v3_zero_tail(a, T, b, h, w0, kend_w, lane);
    /* O via shared memory (the K/V buffers, free after this barrier) to y, rows past T dropped */
    __syncthreads();
    v3_store_out<HD>(a, o, Ks, T, bh, warp, w0, lane);
}

#else
template <int HD, int SPLIT> __global__ void attention_v3_kernel(andrea_attn_args a) { __trap(); }
#endif

int andrea_attention_v3_supports(int hd) { return hd % 16 == 0 && hd >= 16 && hd <= 128; }

template <int HD, int SPLIT> static cudaError_t launch_v3_as(const andrea_attn_args *a, cudaStream_t st) {
    constexpr int LD = HD + 4;
    const size_t smem = ((size_t)2 * V3_BK * LD + (size_t)V3_WARPS * 16 * V3_LDS +
                         (SPLIT == 2 ? (size_t)V3_WARPS * 16 * LD : 0)) * sizeof(float);
    cudaError_t rc = cudaFuncSetAttribute(attention_v3_kernel<HD, SPLIT>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                          (int)smem);
    if (rc != cudaSuccess) return rc;
    dim3 grid((unsigned)(a->B * a->H), (unsigned)((a->T + V3_BQ - 1) / V3_BQ));
    attention_v3_kernel<HD, SPLIT><<<grid, V3_WARPS * 32, smem, st>>>(*a);
    return cudaGetLastError();
}

template <int HD> static cudaError_t launch_v3(const andrea_attn_args *a, cudaStream_t st) {
    switch (a->split_qk) {
    case 0: return launch_v3_as<HD, 0>(a, st);
    case 1: return launch_v3_as<HD, 1>(a, st);
    case 2: return launch_v3_as<HD, 2>(a, st);
    default: return cudaErrorInvalidValue;
    }
}

cudaError_t andrea_attention_v3(const andrea_attn_args *a, cudaStream_t st) {
    if (!andrea_attn_rows_fit(a)) return cudaErrorInvalidValue;
    switch (a->hd) {
    case 16: return launch_v3<16>(a, st);
    case 32: return launch_v3<32>(a, st);
    case 48: return launch_v3<48>(a, st);
    case 64: return launch_v3<64>(a, st);
    case 80: return launch_v3<80>(a, st);
    case 96: return launch_v3<96>(a, st);
    case 112: return launch_v3<112>(a, st);
    case 128: return launch_v3<128>(a, st);
    default: return cudaErrorInvalidValue;
    }
}
