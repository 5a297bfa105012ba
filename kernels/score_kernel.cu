/* score_kernel.cu — per-head statistics of docs/scores.md from device-resident maps
 * (kernels/score_kernel.h has the contract; analyzer/score.c is the CPU oracle).
 *
 * Two kernels per chunk of a batch, both on the caller's stream:
 *
 * score_maps_kernel: one block per (head, sequence) pair, grid (n_heads, chunk), 128 threads =
 *   4 warps. The map of the pair is [T, T] (query x key) at ((i * n_heads + h) * T * T).
 *   Each warp takes every 4th eligible query of the sequence (CSR q_off/query) and reads that
 *   query's row once, lanes striding over the keys 0..q (coalesced):
 *     - argmax: each lane keeps the first maximum of its keys (strict >, keys ascending); lanes
 *       merge by (larger value, then smaller key): the first maximum of the row, as score.c's
 *       sequential `if (row[k] > row[best]) best = k` finds it;
 *     - target and control mass: lanes stride over the query's keys (CSR k_off/keys/control),
 *       summing in double, then a butterfly of shuffles;
 *     - hit = some target key is the argmax (__any_sync): top1, and hard_top1 when marked hard;
 *       the same for the control keys, and the argmax's offset q - argmax (1..16: positional).
 *   All threads then stride over the eligible queries for head_dla (q + 1 < length, finite) and
 *   head_out_norm (finite) at [i, h, q]. The S_N sums of the pair are reduced in the block (warp
 *   butterflies, then warp 0..3 in order) and written to part[i, h, 0..7].
 *   Why a block per pair: the eligible rows of one map are a few KB to a few hundred KB and are
 *   read once, so the kernel is bound by reading them (about half of each map for prev_token,
 *   whose every position is eligible); 144 heads x a batch of sequences fill the GPU many times.
 *
 * score_reduce_kernel: one thread per (head, statistic): acc[h, k] += part[i, h, k] for the
 *   chunk's sequences i in order. Sequential in i on purpose: the suite's sums are the same bits
 *   whatever the batch size or chunk (the host path pools in sequence order too).
 *
 * Versions: v1 (this file), 2026-12-01: the first; timed in bench/RESULTS.md (issue 14 entry)
 * as `andrea analyze --timing`'s "scoring + report maps" on one H200.
 */
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_fp16.h>
#include <cuda_runtime.h>

extern "C" {
#include "../common/error.h"
#include "score_kernel.h"
}
#include "cuda_check.h"

namespace {

constexpr int SCORE_WARPS = 4;
constexpr int SCORE_THREADS = SCORE_WARPS * 32;
/* the sums of a (sequence, head) pair, in andrea_score_sums order */
enum { S_SCORE, S_CONTROL, S_TOP1, S_HARD, S_DLA, S_NORM, S_DLA_N, S_NORM_N, S_CTOP1, S_OFF1,
       S_N = S_OFF1 + ANDREA_SCORE_MAX_OFFSET };

/* the suite's plan on the device: views into one int buffer */
struct dev_plan {
    int n_seq;
    const int *length, *q_off, *query, *hard, *k_off, *keys, *control;
};

__device__ __forceinline__ float map_value(const float *row, int k) { return row[k]; }
__device__ __forceinline__ float map_value(const __half *row, int k) { return __half2float(row[k]); }

__device__ __forceinline__ double warp_sum(double v) {
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

/* The first maximum of row[0..q] (the smallest key among the largest values). */
template <typename MapT>
__device__ int row_argmax(const MapT *row, int q, int lane) {
    float bv = 0;
    int bk = INT_MAX; /* none yet: a lane's first key is taken whatever its value */
    for (int k = lane; k <= q; k += 32) {
        const float v = map_value(row, k);
        if (bk == INT_MAX || v > bv) {
            bv = v;
            bk = k;
        }
    }
    for (int o = 16; o > 0; o >>= 1) {
        const float ov = __shfl_xor_sync(0xffffffffu, bv, o);
        const int ok = __shfl_xor_sync(0xffffffffu, bk, o);
        if (ok != INT_MAX && (bk == INT_MAX || ov > bv || (ov == bv && ok < bk))) {
            bv = ov;
            bk = ok;
        }
    }
    return bk;
}

/* One eligible query j of the plan, by one warp: adds its masses and hits to acc (lane 0's). */
template <typename MapT>
__device__ void score_query(const dev_plan &p, const MapT *map, int T, int j, int lane, double *acc) {
    const int q = p.query[j];
    const MapT *row = map + (size_t)q * T;
    const int best = row_argmax(row, q, lane);
    double s = 0, c = 0;
    int hit = 0, control_hit = 0;
    for (int t = p.k_off[j] + lane; t < p.k_off[j + 1]; t += 32) {
        s += (double)map_value(row, p.keys[t]);
        c += (double)map_value(row, p.control[t]);
        hit |= p.keys[t] == best;
        control_hit |= p.control[t] == best;
    }
    s = warp_sum(s);
    c = warp_sum(c);
    hit = __any_sync(0xffffffffu, hit);
    control_hit = __any_sync(0xffffffffu, control_hit);
    if (lane == 0) {
        acc[S_SCORE] += s;
        acc[S_CONTROL] += c;
        acc[S_TOP1] += hit;
        acc[S_CTOP1] += control_hit;
        if (p.hard[j]) acc[S_HARD] += hit;
        const int offset = q - best;
        /* unrolled compare, not acc[S_OFF1 + offset - 1]: a computed index would put acc in local memory */
#pragma unroll
        for (int k = 1; k <= ANDREA_SCORE_MAX_OFFSET; k++) acc[S_OFF1 + k - 1] += offset == k;
    }
}

template <typename MapT>
__global__ void __launch_bounds__(SCORE_THREADS) score_maps_kernel(double *part, dev_plan p, const MapT *maps,
                                                                   const float *norm, const float *dla, int b0,
                                                                   int n_heads, int T) {
    const int h = blockIdx.x, i = blockIdx.y, seq = b0 + i;
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    double acc[S_N];
    for (int k = 0; k < S_N; k++) acc[k] = 0;
    if (seq < p.n_seq) {
        const size_t pair = (size_t)i * n_heads + h;
        const MapT *map = maps + pair * (size_t)T * T;
        for (int j = p.q_off[seq] + warp; j < p.q_off[seq + 1]; j += SCORE_WARPS) score_query(p, map, T, j, lane, acc);
        for (int j = p.q_off[seq] + (int)threadIdx.x; j < p.q_off[seq + 1]; j += SCORE_THREADS) {
            const int q = p.query[j];
            if (dla) {
                const float v = dla[pair * T + q];
                if (q + 1 < p.length[seq] && isfinite(v)) {
                    acc[S_DLA] += v;
                    acc[S_DLA_N] += 1;
                }
            }
            if (norm) {
                const float v = norm[pair * T + q];
                if (isfinite(v)) {
                    acc[S_NORM] += v;
                    acc[S_NORM_N] += 1;
                }
            }
        }
    }
    __shared__ double red[SCORE_WARPS][S_N];
    for (int k = 0; k < S_N; k++) {
        const double v = warp_sum(acc[k]);
        if (lane == 0) red[warp][k] = v;
    }
    __syncthreads();
    if (threadIdx.x < S_N) {
        double v = 0;
        for (int w = 0; w < SCORE_WARPS; w++) v += red[w][threadIdx.x];
        part[((size_t)i * n_heads + h) * S_N + threadIdx.x] = v;
    }
}

__global__ void score_reduce_kernel(double *acc, const double *part, int n, int n_heads) {
    const int x = blockIdx.x * blockDim.x + threadIdx.x; /* h * S_N + k */
    if (x >= n_heads * S_N) return;
    double v = acc[x];
    for (int i = 0; i < n; i++) v += part[(size_t)i * n_heads * S_N + x];
    acc[x] = v;
}

} // namespace

struct andrea_cuda_scorer {
    int n_heads, max_chunk;
    const andrea_score_plan *plan; /* the suite begun (host, the caller's), NULL: none */
    int uploaded;                  /* plan and zeroed sums are on the device */
    int *d_plan;                   /* the plan as one int buffer */
    size_t plan_cap;               /* ints */
    int *h_stage;                  /* host staging of the plan (kept until the suite ends) */
    dev_plan dp;
    double *d_acc;                 /* [n_heads, S_N] the suite's sums */
    double *d_part;                /* [cap, n_heads, S_N] one chunk's pairs */
    int cap;
    cudaStream_t st;               /* of the suite's last batch */
};

/* cudaMalloc that tells an out-of-memory (1, the error cleared) from other failures (-1). */
static int try_malloc(void **p, size_t bytes, ae_error *err) {
    cudaError_t rc = cudaMalloc(p, bytes);
    if (rc == cudaSuccess) return 0;
    *p = NULL;
    if (rc == cudaErrorMemoryAllocation) {
        (void)cudaGetLastError(); /* not sticky: later checks must not see it */
        return 1;
    }
    andrea_fail(err, "CUDA: cudaMalloc(%zu bytes) failed in the head scorer: %s", bytes, cudaGetErrorString(rc));
    return -1;
}

extern "C" andrea_cuda_scorer *andrea_cuda_scorer_open(int n_heads, ae_error *err) {
    andrea_cuda_scorer *s = (andrea_cuda_scorer *)calloc(1, sizeof *s);
    if (!s) andrea_fail(err, "scorer: out of memory");
    else s->n_heads = n_heads;
    return s;
}

extern "C" void andrea_cuda_scorer_set_chunk(andrea_cuda_scorer *s, int max_seqs) { s->max_chunk = max_seqs; }

extern "C" int andrea_cuda_scorer_begin(andrea_cuda_scorer *s, const andrea_score_plan *plan, ae_error *err) {
    (void)err;
    s->plan = plan; /* uploaded with the suite's first batch, on its stream */
    s->uploaded = 0;
    return 0;
}

/* The plan into one int buffer on the device (stream order), the sums zeroed: 0, 1 (out of
 * memory), -1. */
static int upload(andrea_cuda_scorer *s, cudaStream_t st, ae_error *err) {
    const andrea_score_plan *p = s->plan;
    const size_t ns = (size_t)p->n_seq, nq = (size_t)p->q_off[p->n_seq], nk = nq ? (size_t)p->k_off[nq] : 0;
    const size_t total = ns + (ns + 1) + nq + nq + (nq + 1) + 2 * nk;
    int rc;
    if (!s->d_acc && (rc = try_malloc((void **)&s->d_acc, sizeof(double) * S_N * (size_t)s->n_heads, err))) return rc;
    if (total > s->plan_cap) {
        if (s->d_plan) {
            CU_CHECK(cudaStreamSynchronize(st)); /* the last suite's kernels may still read it */
            CU_CHECK(cudaFree(s->d_plan));
            s->d_plan = NULL;
            s->plan_cap = 0;
        }
        if ((rc = try_malloc((void **)&s->d_plan, total * sizeof(int), err))) return rc;
        s->plan_cap = total;
    }
    free(s->h_stage);
    if (!(s->h_stage = (int *)malloc(total * sizeof(int)))) return andrea_fail(err, "scorer: out of memory");
    {
        int *h = s->h_stage, *d = s->d_plan;
        dev_plan &v = s->dp;
        v.n_seq = p->n_seq;
        memcpy(h, p->length, ns * sizeof(int)), v.length = d, h += ns, d += ns;
        memcpy(h, p->q_off, (ns + 1) * sizeof(int)), v.q_off = d, h += ns + 1, d += ns + 1;
        memcpy(h, p->query, nq * sizeof(int)), v.query = d, h += nq, d += nq;
        for (size_t j = 0; j < nq; j++) h[j] = p->hard[j];
        v.hard = d, h += nq, d += nq;
        memcpy(h, p->k_off, (nq + 1) * sizeof(int)), v.k_off = d, h += nq + 1, d += nq + 1;
        memcpy(h, p->keys, nk * sizeof(int)), v.keys = d, h += nk, d += nk;
        memcpy(h, p->control, nk * sizeof(int)), v.control = d;
    }
    CU_CHECK(cudaMemcpyAsync(s->d_plan, s->h_stage, total * sizeof(int), cudaMemcpyHostToDevice, st));
    CU_CHECK(cudaMemsetAsync(s->d_acc, 0, sizeof(double) * S_N * (size_t)s->n_heads, st));
    s->uploaded = 1;
    return 0;
fail:
    return -1;
}

/* A buffer for the pairs of `want` sequences, or of as many as fit (halving): 0, 1 (not even
 * one), -1. */
static int reserve_chunk(andrea_cuda_scorer *s, int want, cudaStream_t st, ae_error *err) {
    if (want <= s->cap) return 0;
    if (s->d_part) CU_CHECK(cudaStreamSynchronize(st)); /* earlier chunks may still use it */
    for (; want > s->cap; want /= 2) {
        double *p;
        int rc = try_malloc((void **)&p, sizeof(double) * S_N * (size_t)s->n_heads * (size_t)want, err);
        if (rc < 0) return -1;
        if (rc == 0) {
            if (s->d_part) CU_CHECK(cudaFree(s->d_part));
            s->d_part = p;
            s->cap = want;
            break;
        }
    }
    return s->cap > 0 ? 0 : 1;
fail:
    return -1;
}

extern "C" int andrea_cuda_scorer_add(andrea_cuda_scorer *s, const andrea_score_batch *b, ae_error *err) {
    cudaStream_t st = (cudaStream_t)b->stream;
    int rc, chunk;
    if (!s->plan) return andrea_fail(err, "scorer: a GPU batch before its suite began");
    if (b->nb <= 0) return 0;
    if (!s->uploaded && (rc = upload(s, st, err))) return rc;
    s->st = st;
    chunk = s->max_chunk > 0 && s->max_chunk < b->nb ? s->max_chunk : b->nb;
    if ((rc = reserve_chunk(s, chunk, st, err))) return rc;
    if (chunk > s->cap) chunk = s->cap;
    for (int c0 = 0; c0 < b->nb; c0 += chunk) {
        const int n = b->nb - c0 < chunk ? b->nb - c0 : chunk;
        const size_t first = (size_t)c0 * s->n_heads, per = (size_t)b->T * b->T;
        const float *norm = b->norm ? b->norm + first * b->T : NULL, *dla = b->dla ? b->dla + first * b->T : NULL;
        const dim3 grid((unsigned)s->n_heads, (unsigned)n);
        if (b->attn_fp16)
            score_maps_kernel<__half><<<grid, SCORE_THREADS, 0, st>>>(
                s->d_part, s->dp, (const __half *)b->attn + first * per, norm, dla, b->b0 + c0, s->n_heads, b->T);
        else
            score_maps_kernel<float><<<grid, SCORE_THREADS, 0, st>>>(s->d_part, s->dp, (const float *)b->attn + first * per,
                                                                     norm, dla, b->b0 + c0, s->n_heads, b->T);
        CU_CHECK(cudaGetLastError());
        const int threads = 256, blocks = (s->n_heads * S_N + threads - 1) / threads;
        score_reduce_kernel<<<blocks, threads, 0, st>>>(s->d_acc, s->d_part, n, s->n_heads);
        CU_CHECK(cudaGetLastError());
    }
    return 0;
fail:
    return -1;
}

extern "C" int andrea_cuda_scorer_end(andrea_cuda_scorer *s, andrea_score_sums *out, ae_error *err) {
    static_assert(sizeof(andrea_score_sums) == S_N * sizeof(double), "andrea_score_sums is the S_N doubles");
    memset(out, 0, sizeof *out * (size_t)s->n_heads);
    if (s->uploaded) {
        CU_CHECK(cudaMemcpyAsync(out, s->d_acc, sizeof *out * (size_t)s->n_heads, cudaMemcpyDeviceToHost, s->st));
        CU_CHECK(cudaStreamSynchronize(s->st));
    }
    s->plan = NULL;
    s->uploaded = 0;
    free(s->h_stage);
    s->h_stage = NULL;
    return 0;
fail:
    s->plan = NULL;
    s->uploaded = 0;
    return -1;
}

extern "C" void andrea_cuda_scorer_free(andrea_cuda_scorer *s) {
    if (!s) return;
    /* cudaFree waits for the work that may still read these */
    if (s->d_plan) cudaFree(s->d_plan);
    if (s->d_acc) cudaFree(s->d_acc);
    if (s->d_part) cudaFree(s->d_part);
    free(s->h_stage);
    free(s);
}
