/* forward_cpu.c — the CPU backend of the instrumented forward pass (interface: forward.h).
 *
 * Job: run an ANDREA (GPT-2) model on a batch with CBLAS matmuls and OpenMP loops, and fill the
 * instrumentation buffers the caller asked for (attention maps, per-head W_O contributions,
 * their norms, direct logit attributions, logits), honouring head ablation.
 *
 * Per layer (docs/checkpoints.md): LayerNorm → ONE fused QKV sgemm into qkv [B*T, 3C] → causal
 * softmax attention per (batch, head), OpenMP over B×H, reading head h of qkv through strides
 * (q of head h at column h*hd, k at C + h*hd, v at 2C + h*hd: no per-head buffer or projection) →
 * concat o [B*T, C] → ONE W_O sgemm (+ bias) into the residual → LayerNorm → MLP (GELU tanh) →
 * residual. Final LayerNorm; logits only when asked; token losses from the loss rows' logits. Attention itself is two small sgemms per
 * band of query rows of each (batch, head), on strided views (see attention()).
 *
 * Invariants:
 *   - OpenMP is the only thread pool: during a forward OpenBLAS is set to one thread and each
 *     OpenMP thread runs a single-threaded sgemm on its block of rows (or columns) of the output.
 *     Two pools (OpenBLAS pthreads + OpenMP) that spin while the other works thrash on a loaded
 *     2-core machine: measured up to 26x slower (bench/RESULTS.md). The caller's OpenBLAS thread count
 *     is restored when the forward returns. A forward's team leaves the cores other processes
 *     are using when it starts (cpu_team.h; unless --threads or OMP_DYNAMIC decide), which
 *     changes nothing in the results: work is cut into fixed-size blocks, so the values never
 *     depend on the number of threads;
 *   - scratch is sized once at open for max_B × max_T with overflow-checked sizes; a forward
 *     allocates nothing, except the first one that asks for token losses ([64, V] logits, kept);
 *   - a forward resumed with resume_heads copies that layer's saved head outputs instead of running
 *     its LayerNorm, QKV and attention (bit for bit what they would compute from the same input);
 *   - token losses (loss_targets / token_loss) are computed from the loss rows' logits only; when
 *     they are all that is asked for, the last layer's W_O and MLP also run on the loss rows only
 *     (a row's W_O, MLP and final LayerNorm change nothing but that row: same losses, bit for bit
 *     up to sgemm's blocking of rows);
 *   - instrumentation costs nothing when its pointer is NULL: the per-head W_O products, norms and
 *     DLA run only when head_out, head_out_norm or head_dla is set; the softmax works in place in
 *     io->attn when it is set, else in a small per-thread band;
 *   - an ablated head's o_h slice is zeroed before the W_O matmul, so it adds nothing to the
 *     residual; its head_out / norm / DLA are reported as 0 (its contribution to this run), which
 *     keeps sum_h head_out + attprojb == attention output true for ablated runs too; its attention
 *     map is still reported (the head still computes it); with ablate_values its slice takes the
 *     caller's values instead, before the per-head products, so head_out is what they contribute;
 *   - DLA uses the final LayerNorm scale sigma of this run's own final residual (forward.h).
 *   - padded positions (t >= lengths[b]) are embedded as token 0 (their ids are not read) and never
 *     influence earlier positions (causal mask); their attention rows, head_out rows and norms are
 *     written as 0 and their DLA as NaN.
 * Failure contract: open and forward return NULL / -1 with "MODEL: problem" for B, T or token ids
 * out of range and for allocation failures; nothing is written to io on a refused call.
 */
#include "forward.h"

#include <cblas.h>
#include <limits.h>
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "../common/big_alloc.h"
#include "../common/checked_size.h"
#include "../common/finite.h"
#include "blas_core.h"
#include "cpu_team.h"

/* The loops around the matmuls (GELU, LayerNorm, the softmax, the heads' norms and DLA) are
 * compiled three times, for AVX-512F, AVX2 and baseline x86-64 (SSE2), and the loader picks the
 * widest the CPU runs (GCC's target_clones: an ifunc resolved once; ISA clones, not arch= ones,
 * into which GCC does not inline exp_f32 and layernorm_row, which have the default target).
 * GELU alone, in SSE2, was 8% of an analysis of the bundled model on an AVX-512 VM (perf); with
 * this change and the batched causal check, analyze went from 6.1 to 5.7 s there
 * (bench/RESULTS.md, 2026-12-02 evening). The build turns FMA contraction off for this file
 * (CMakeLists.txt), so every elementwise result is the baseline code's, bit for bit; only sums
 * across SIMD lanes (a softmax row's total, LayerNorm's mean and variance, a norm) are added in
 * another order, a few float ulps. Other compilers get the baseline code. */
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 12 && defined(__x86_64__) && defined(__linux__)
#define SIMD_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define SIMD_CLONES
#endif

typedef struct {
    andrea_engine base;
    const andrea_model *m;
    int max_B, max_T, n_threads;
    int fixed_threads; /* 1: n_threads was chosen (andrea_engine_options.threads): always that team */
    int team;          /* this forward's team, <= n_threads (cpu_team.h), set when it starts */
    float *wte_mean; /* [C] mean over the real vocabulary rows of wte (DLA centring) */
    float *x;        /* [BT, C] residual stream */
    float *ln;       /* [BT, C] LayerNorm output */
    float *big;      /* [BT, 4C]: qkv [BT, 3C] during attention, MLP hidden [BT, 4C] after */
    float *o;        /* [BT, C] concatenated head outputs, head h at columns h*hd.. */
    float *contrib;  /* [n_threads, T, C] per-thread W_O contribution of one (batch, head) */
    float *gdir;     /* [BT, C] centred, lnfw-scaled unembedding direction of the next token */
    float *sigma;    /* [BT] final LayerNorm scale */
    float *scores;   /* [n_threads, ATT_BLOCK, T] attention band when attn is not requested */
    int *loss_rows;  /* [BT] rows b*T + t with a loss target, in increasing order */
    float *loss_logits; /* [LOSS_CHUNK, V] logits of a chunk of loss rows; allocated by the first
                           forward that asks for token losses (NULL before) */
} cpu_engine;

static float *alloc_floats(size_t a, size_t b, const char *path, const char *what, ae_error *err) {
    size_t n, bytes;
    if (ae_mul(a, b, &n) || ae_mul(n, sizeof(float), &bytes)) {
        andrea_fail(err, "%s: CPU engine scratch size for %s overflows", path, what);
        return NULL;
    }
    float *p = andrea_big_alloc(bytes);
    if (!p) andrea_fail(err, "%s: cannot allocate %zu bytes of CPU engine scratch for %s", path, bytes, what);
    return p;
}

static int *alloc_ints(size_t n, const char *path, ae_error *err) {
    size_t bytes;
    int *p = ae_mul(n, sizeof(int), &bytes) ? NULL : malloc(bytes ? bytes : 1);
    if (!p) andrea_fail(err, "%s: cannot allocate CPU engine scratch for %zu loss rows", path, n);
    return p;
}

static void cpu_close(andrea_engine *base) {
    cpu_engine *e = (cpu_engine *)base;
    if (!e) return;
    free(e->wte_mean);
    free(e->x);
    free(e->ln);
    free(e->big);
    free(e->o);
    free(e->contrib);
    free(e->gdir);
    free(e->sigma);
    free(e->scores);
    free(e->loss_rows);
    free(e->loss_logits);
    free(e);
}

/* ---- Linear layers with their elementwise neighbours fused in ---- */

/* One row of LayerNorm: out = (in - mean) / sigma * w + b, sigma = sqrt(var + 1e-5), returned.
 * Mean and variance accumulate in double: cheap, and it keeps the engine close to the reference.
 * The sums are SIMD reductions (lanes of doubles added at the end: a different order of double
 * additions than a scalar loop, far below fp32's resolution of the result). */
static float layernorm_row(float *out, const float *in, const float *w, const float *b, int C) {
    double s = 0, ss = 0;
#pragma omp simd reduction(+ : s)
    for (int i = 0; i < C; i++) s += in[i];
    const double mean = s / C;
#pragma omp simd reduction(+ : ss)
    for (int i = 0; i < C; i++) ss += (in[i] - mean) * (in[i] - mean);
    const double sd = sqrt(ss / C + 1e-5);
    const float rs = (float)(1.0 / sd), mf = (float)mean;
#pragma omp simd
    for (int i = 0; i < C; i++) out[i] = (in[i] - mf) * rs * w[i] + b[i];
    return (float)sd;
}

/* exp(x) in fp32 without a library call, so that loops over it vectorise (glibc's expf is a
 * call per element: with GELU and the softmax it was ~15% of a forward of the bundled model, perf).
 * Cephes' expf: x = n ln2 + r, |r| <= ln2/2 (n rounded with the 1.5 * 2^23 trick, ln2 split in
 * two so n ln2 is exact), e^r by a degree-7 polynomial, times 2^n built in the exponent bits.
 * Max relative error against double exp over [-86, 88]: 8.0e-8 (below 1 ulp; on a grid of step 1e-4;
 * test_forward_cpu compares the maps with a double reference). Below -86 the result is 0 (exact:
 * < 4.5e-38), above 88 it is inf (exact: > 1.65e38): never a denormal, whose arithmetic is ~100x
 * slower (microcode assists) here and in the sgemm that reads GELU's output next; GELU's
 * v / (1 + inf) is -0, its limit. NaN stays NaN (the comparisons are false for it).
 */
static inline float exp_f32(float x) {
    const float xc = x < -86.0f ? -86.0f : x > 88.0f ? 88.0f : x; /* NaN passes through */
    const float shift = 12582912.0f; /* 1.5 * 2^23: adding it rounds to an integer */
    const float t = xc * 1.44269504088896341f + shift;
    const float n = t - shift;
    const float r = (xc - n * 0.693359375f) - n * -2.12194440e-4f;
    float p = 1.9875691500e-4f;
    p = p * r + 1.3981999507e-3f;
    p = p * r + 8.3334519073e-3f;
    p = p * r + 4.1665795894e-2f;
    p = p * r + 1.6666665459e-1f;
    p = p * r + 5.0000001201e-1f;
    p = p * r * r + r + 1.0f;
    union {
        float f;
        unsigned i;
    } u = {.f = t};
    union {
        unsigned i;
        float f;
    } scale = {.i = (u.i - 0x4B400000u + 127u) << 23}; /* n from t's mantissa bits; unsigned: a NaN's
                                                           bits wrap instead of overflowing */
    const float y = p * scale.f;
    return x < -86.0f ? 0.0f : x > 88.0f ? INFINITY : y;
}

/* GELU, tanh approximation (GPT-2's): 0.5 v (1 + tanh(u)) = v / (1 + exp(-2u)), the same
 * function written with exp, which is 4x faster than glibc's tanhf (tanhf goes through expm1f:
 * the two were a third of a CPU classify's time, perf) at the same accuracy (max |error| against
 * double over [-20, 20]: 5.2e-7 vs 4.3e-7 for tanhf, on values up to 20). For u -> -inf the exp
 * is inf and v / inf is -0, the limit. */
static inline float gelu(float v) {
    const float k2 = 1.5957691216057308f; /* 2 sqrt(2/pi) */
    return v / (1.0f + exp_f32(-k2 * (v + 0.044715f * v * v * v)));
}

/* out[M, N] (+)= a[M, K] · w[N, K]ᵀ with one single-threaded sgemm. */
static void sgemm_nt(float *out, int ldo, const float *a, int lda, const float *w, int ldw, int M, int N,
                     int K, float beta) {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, M, N, K, 1.0f, a, lda, w, ldw, beta, out, ldo);
}

enum { BIAS_NONE, BIAS_SET, BIAS_ADD };

/* What surrounds one Linear layer (weights in [out, in] layout, a[M, K] · w[N, K]ᵀ):
 *   ln_in != NULL: a = LayerNorm(ln_in; ln_w, ln_b) is computed first (a is [M, K], lda = K);
 *   bias_mode: NONE out = a·wᵀ; SET out = a·wᵀ + bias; ADD out += a·wᵀ + bias (residual);
 *   post_gelu: out = GELU(out) afterwards. */
typedef struct {
    const float *ln_in, *ln_w, *ln_b;
    float *a;
    const float *w, *bias;
    float *out;
    int M, N, K, bias_mode, post_gelu;
} linear_step;

/* Output blocks have a fixed size whatever the number of threads: every output element is then
 * computed by an sgemm call of the same shape, so results do not depend on the size of the
 * (load-dependent: cpu_team.h) OpenMP team: the same dump twice gives the same
 * bytes. 128 = a multiple of 16 (full SIMD tiles); 64 cost ~10% more time in sgemm calls. */
#define LINEAR_BLOCK 128

/* Runs a linear_step in ONE OpenMP region (few barriers matter on a loaded machine): the output is
 * cut into blocks of LINEAR_BLOCK rows (of columns when rows are few, e.g. logits of a short
 * sequence against a large vocabulary); each block normalises its rows, sets the bias, runs a
 * single-threaded sgemm and applies GELU. Called outside OpenMP regions. */
SIMD_CLONES static void linear(int n_threads, const linear_step *s) {
    const int M = s->M, N = s->N, K = s->K;
    const int by_rows = M >= N || M >= 4 * LINEAR_BLOCK;
    const int extent = by_rows ? M : N;
    const int n_blocks = (extent + LINEAR_BLOCK - 1) / LINEAR_BLOCK;
#pragma omp parallel num_threads(n_threads)
    {
        if (s->ln_in && !by_rows) {
            /* every column block needs every normalised row: share the work (implied barrier) */
#pragma omp for schedule(static)
            for (int r = 0; r < M; r++)
                layernorm_row(s->a + (size_t)r * K, s->ln_in + (size_t)r * K, s->ln_w, s->ln_b, K);
        }
#pragma omp for schedule(static)
        for (int blk = 0; blk < n_blocks; blk++) {
            const int lo = blk * LINEAR_BLOCK, hi = lo + LINEAR_BLOCK < extent ? lo + LINEAR_BLOCK : extent;
            const int r0 = by_rows ? lo : 0, r1 = by_rows ? hi : M; /* this block's rows */
            const int c0 = by_rows ? 0 : lo, c1 = by_rows ? N : hi; /* and columns */
            for (int r = r0; s->ln_in && by_rows && r < r1; r++)
                layernorm_row(s->a + (size_t)r * K, s->ln_in + (size_t)r * K, s->ln_w, s->ln_b, K);
            for (int r = r0; r < r1 && s->bias_mode != BIAS_NONE; r++) {
                float *o = s->out + (size_t)r * N;
                if (s->bias_mode == BIAS_SET)
                    memcpy(o + c0, s->bias + c0, (size_t)(c1 - c0) * sizeof(float));
                else
#pragma omp simd
                    for (int j = c0; j < c1; j++) o[j] += s->bias[j];
            }
            sgemm_nt(s->out + (size_t)r0 * N + c0, N, s->a + (size_t)r0 * K, K, s->w + (size_t)c0 * K, K, r1 - r0,
                     c1 - c0, K, s->bias_mode == BIAS_NONE ? 0.0f : 1.0f);
            for (int r = r0; r < r1 && s->post_gelu; r++) {
                float *o = s->out + (size_t)r * N;
#pragma omp simd
                for (int j = c0; j < c1; j++) o[j] = gelu(o[j]);
            }
        }
    }
}

/* ---- attention ---- */

/* Query rows per attention block: bounds the per-thread scratch to ATT_BLOCK × T and skips most of
 * the masked upper triangle (work above the diagonal is at most one block per row band). */
#define ATT_BLOCK 64

/* Causal softmax attention of layer l, OpenMP over (batch, head). Per (b, h), with BLAS on
 * strided views of qkv [B*T, 3C] (q of head h at column h*hd, k at C + h*hd, v at 2C + h*hd,
 * row stride 3C; no copies), one band of query rows t0..t1-1 at a time (keys 0..t1-1):
 *   P [t1-t0, t1] = scale · Q_h[t0:t1] K_h[0:t1]ᵀ   (sgemm)
 *   P = causal softmax of each row (subtract the row max, exp, normalise; fp32), 0 above the diagonal
 *   O_h[t0:t1] = P V_h[0:t1]                        (sgemm) into o [B*T, C] at column h*hd.
 * Two sgemms per band measured far faster than a dot-product loop per query row, which was about as
 * slow as all the model's matmuls together at T = 512. P is written straight into io->attn when
 * requested (row t of map (b, l, h) has stride T), else into this thread's scratch; rows of padded
 * queries (t >= len) are zeroed afterwards. */
SIMD_CLONES static void attention(cpu_engine *e, const andrea_forward_io *io, int l) {
    const andrea_config *c = &e->m->cfg;
    const int B = io->B, T = io->T, H = c->n_head, hd = c->head_dim, C = c->d_model, L = c->n_layer;
    const int C3 = 3 * C;
    const float scale = 1.0f / sqrtf((float)hd);

#pragma omp parallel for schedule(dynamic, 1) num_threads(e->team)
    for (int bh = 0; bh < B * H; bh++) {
        const int b = bh / H, h = bh % H;
        const int len = io->lengths ? io->lengths[b] : T;
        const float *q = e->big + (size_t)b * T * C3 + (size_t)h * hd; /* [T, hd], row stride 3C */
        const float *k = q + C, *v = q + 2 * (size_t)C;
        float *map = io->attn ? io->attn + (((size_t)b * L + l) * H + h) * T * T : NULL; /* [T, T] */
        float *scratch = e->scores + (size_t)omp_get_thread_num() * ATT_BLOCK * e->max_T;
        for (int t0 = 0; t0 < T; t0 += ATT_BLOCK) {
            const int t1 = t0 + ATT_BLOCK < T ? t0 + ATT_BLOCK : T, nq = t1 - t0;
            float *P = map ? map + (size_t)t0 * T : scratch; /* [nq, t1], row stride ldp */
            const int ldp = map ? T : t1;
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, nq, t1, hd, scale, q + (size_t)t0 * C3, C3, k, C3,
                        0.0f, P, ldp);
            for (int i = 0; i < nq; i++) {
                const int t = t0 + i;
                float *row = P + (size_t)i * ldp;
                float mx = row[0];
#pragma omp simd reduction(max : mx)
                for (int j = 1; j <= t; j++) mx = row[j] > mx ? row[j] : mx;
                float sum = 0.0f;
#pragma omp simd reduction(+ : sum)
                for (int j = 0; j <= t; j++) {
                    row[j] = exp_f32(row[j] - mx);
                    sum += row[j];
                }
                const float inv = 1.0f / sum;
#pragma omp simd
                for (int j = 0; j <= t; j++) row[j] *= inv;
                /* zero the masked part: up to t1 for the P·V product, up to T in the caller's map */
                memset(row + t + 1, 0, (size_t)((map ? T : t1) - t - 1) * sizeof(float));
            }
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, nq, hd, t1, 1.0f, P, ldp, v, C3, 0.0f,
                        e->o + ((size_t)b * T + t0) * C + (size_t)h * hd, C);
        }
        if (map && len < T) memset(map + (size_t)len * T, 0, (size_t)(T - len) * T * sizeof(float));
    }
}

/* The ablation mask [L*H] of sequence b: one for the whole batch, or its own (ablate_per_seq);
 * NULL when nothing is ablated. */
static const unsigned char *ablation_mask(const andrea_forward_io *io, int b, int L, int H) {
    return io->ablate ? io->ablate + (io->ablate_per_seq ? (size_t)b * L * H : 0) : NULL;
}

/* The ablated heads' o_h slices of layer l: zeros, or the caller's values (ablate_values: row
 * b % ablate_values_B of [L, Bv, T, C] for sequence b). */
static void ablate_heads(cpu_engine *e, const andrea_forward_io *io, int l) {
    const andrea_config *c = &e->m->cfg;
    const int B = io->B, T = io->T, H = c->n_head, hd = c->head_dim, C = c->d_model;
    for (int b = 0; io->ablate && b < B; b++) {
        const unsigned char *mask = ablation_mask(io, b, c->n_layer, H);
        const float *vals = io->ablate_values
                                ? io->ablate_values + ((size_t)l * io->ablate_values_B + (size_t)(b % io->ablate_values_B)) * T * C
                                : NULL;
        for (int h = 0; h < H; h++) {
            if (!mask[(size_t)l * H + h]) continue;
            for (int t = 0; t < T; t++) {
                float *dst = e->o + ((size_t)b * T + t) * C + (size_t)h * hd;
                if (vals)
                    memcpy(dst, vals + (size_t)t * C + (size_t)h * hd, (size_t)hd * sizeof(float));
                else
                    memset(dst, 0, (size_t)hd * sizeof(float));
            }
        }
    }
}

/* Per-head W_O contributions of layer l (before ablation zeroes o), OpenMP over (b, h): per item one
 * single-threaded sgemm contrib[T, C] = o[b, :, h*hd:(h+1)*hd] · attprojw[:, h*hd:(h+1)*hd]ᵀ (no bias),
 * then norms and the un-normalised DLA (c · gdir; divided by the final sigma at the end). */
SIMD_CLONES static void head_contributions(cpu_engine *e, const andrea_forward_io *io, int l) {
    const andrea_config *c = &e->m->cfg;
    const int B = io->B, T = io->T, H = c->n_head, hd = c->head_dim, C = c->d_model, L = c->n_layer;
    const float *wo = e->m->p.attprojw + (size_t)l * C * C; /* [C out, C in] */
#pragma omp parallel for schedule(dynamic, 1) num_threads(e->team)
    for (int bh = 0; bh < B * H; bh++) {
        const int b = bh / H, h = bh % H;
        const int len = io->lengths ? io->lengths[b] : T;
        const size_t map = ((size_t)b * L + l) * H + h; /* index of (b, l, h) */
        /* [T, C]: straight into head_out when requested, else this thread's scratch */
        float *dst = io->head_out ? io->head_out + map * T * C
                                  : e->contrib + (size_t)omp_get_thread_num() * e->max_T * C;
        const unsigned char *mask = ablation_mask(io, b, L, H);
        /* replaced heads (ablate_values) were replaced in o already: their contribution is computed */
        const int ablated = !io->ablate_values && mask && mask[(size_t)l * H + h];
        if (ablated) {
            if (io->head_out) memset(dst, 0, (size_t)T * C * sizeof(float));
        } else {
            sgemm_nt(dst, C, e->o + (size_t)b * T * C + (size_t)h * hd, C, wo + (size_t)h * hd, C, T, C, hd, 0.0f);
        }
        for (int t = 0; t < T; t++) {
            float *ct = dst + (size_t)t * C;
            if (t >= len || ablated) {
                if (t >= len && io->head_out && !ablated) memset(ct, 0, (size_t)C * sizeof(float));
                if (io->head_out_norm) io->head_out_norm[map * T + t] = 0.0f;
                if (io->head_dla) io->head_dla[map * T + t] = 0.0f;
                continue;
            }
            if (io->head_out_norm) {
                double ss = 0;
#pragma omp simd reduction(+ : ss)
                for (int i = 0; i < C; i++) ss += (double)ct[i] * ct[i];
                io->head_out_norm[map * T + t] = (float)sqrt(ss);
            }
            if (io->head_dla) {
                const float *g = e->gdir + ((size_t)b * T + t) * C;
                double dot = 0;
#pragma omp simd reduction(+ : dot)
                for (int i = 0; i < C; i++) dot += (double)ct[i] * g[i];
                io->head_dla[map * T + t] = (float)dot;
            }
        }
    }
}

/* gdir[b, t, :] = lnfw ⊙ (wte[y] - mean_v wte[v]) with its mean over C removed, y = tokens[b, t+1].
 * Then dla = c · gdir / sigma equals forward.h's sum_i (c_i - mean c)/sigma * lnfw_i * u_i, because
 * sum_i (c_i - mean c) g_i = sum_i c_i (g_i - mean g). Zero where there is no next token. */
SIMD_CLONES static void dla_directions(cpu_engine *e, const andrea_forward_io *io) {
    const andrea_model *m = e->m;
    const int B = io->B, T = io->T, C = m->cfg.d_model;
#pragma omp parallel for schedule(static) num_threads(e->team)
    for (int bt = 0; bt < B * T; bt++) {
        const int b = bt / T, t = bt % T;
        const int len = io->lengths ? io->lengths[b] : T;
        float *g = e->gdir + (size_t)bt * C;
        if (t + 1 >= len) {
            memset(g, 0, (size_t)C * sizeof(float));
            continue;
        }
        const float *u = m->p.wte + (size_t)io->tokens[(size_t)b * T + t + 1] * C;
        double s = 0;
        for (int i = 0; i < C; i++) {
            g[i] = m->p.lnfw[i] * (u[i] - e->wte_mean[i]);
            s += g[i];
        }
        const float mg = (float)(s / C);
        for (int i = 0; i < C; i++) g[i] -= mg;
    }
}

static int check_io(const cpu_engine *e, const andrea_forward_io *io, ae_error *err) {
    const andrea_model *m = e->m;
    if (!io->tokens) return andrea_fail(err, "%s: forward called without tokens", m->path);
    if (io->B <= 0 || io->B > e->max_B)
        return andrea_fail(err, "%s: batch size %d outside 1..%d (the engine was opened for %d)", m->path, io->B,
                       e->max_B, e->max_B);
    if (io->T <= 0 || io->T > e->max_T || io->T > m->cfg.max_seq_len)
        return andrea_fail(err, "%s: sequence length %d outside 1..%d (engine max_T %d, model max_seq_len %d)",
                       m->path, io->T, e->max_T < m->cfg.max_seq_len ? e->max_T : m->cfg.max_seq_len,
                       e->max_T, m->cfg.max_seq_len);
    for (int b = 0; b < io->B; b++) {
        const int len = io->lengths ? io->lengths[b] : io->T;
        if (len < 1 || len > io->T)
            return andrea_fail(err, "%s: length %d of sequence %d outside 1..%d", m->path, len, b, io->T);
        for (int t = 0; t < len; t++) {
            const int id = io->tokens[(size_t)b * io->T + t];
            if (id < 0 || id >= m->cfg.vocab_size)
                return andrea_fail(err, "%s: token id %d at sequence %d position %d is outside the vocabulary 0..%d",
                               m->path, id, b, t, m->cfg.vocab_size - 1);
        }
    }
    if (io->resume_layer < 0 || io->resume_layer >= m->cfg.n_layer || (io->resume_layer > 0) != (io->resume_x != NULL))
        return andrea_fail(err, "%s: resume at layer %d outside 0..%d, or without its input", m->path, io->resume_layer,
                       m->cfg.n_layer - 1);
    if ((io->resume_layer > 0 || io->resume_heads) && (io->attn || io->head_out || io->head_out_norm || io->head_dla))
        return andrea_fail(err, "%s: a resumed forward computes logits only", m->path);
    for (size_t r = 0; io->token_loss && io->loss_targets && r < (size_t)io->B * io->T; r++)
        if (io->loss_targets[r] < -1 || io->loss_targets[r] >= m->cfg.vocab_size)
            return andrea_fail(err, "%s: loss target %d at row %zu is outside the vocabulary 0..%d (or -1: none)", m->path,
                           io->loss_targets[r], r, m->cfg.vocab_size - 1);
    return 0;
}

/* Cross-entropy of one logits row [V] toward token y, in double (as the causal check computed it
 * from full logits before this engine computed its losses itself). */
static double cross_entropy_row(const float *row, int V, int y) {
    float mx = row[0];
    for (int v = 1; v < V; v++) mx = row[v] > mx ? row[v] : mx;
    double z = 0;
    for (int v = 0; v < V; v++) z += exp((double)row[v] - mx);
    return -((double)row[y] - mx - log(z));
}

/* Moves row rows[i] of buf [*, C] to row i, i = 0..n-1, in place: rows increases, so i <= rows[i]
 * and a row once overwritten is never read again. */
static void compact_rows(float *buf, const int *rows, int n, int C) {
    for (int i = 0; i < n; i++)
        if (rows[i] != i) memcpy(buf + (size_t)i * C, buf + (size_t)rows[i] * C, (size_t)C * sizeof(float));
}

/* One transformer block l on the residual e->x [BT, C]. With n_rows < B*T (the last layer of a
 * forward that asks for token losses only): attention runs for every row (the loss rows' queries
 * need every key and value), then o and x are compacted to the loss rows e->loss_rows[0..n_rows-1]
 * and W_O and the MLP run on those rows only: a row's W_O, MLP and final LayerNorm change nothing
 * but that row, so the losses are the same as with every row computed. */
static void block(cpu_engine *e, const andrea_forward_io *io, int l, int n_rows) {
    const andrea_params *p = &e->m->p;
    const int B = io->B, T = io->T, C = e->m->cfg.d_model, nt = e->team;
    const size_t BT = (size_t)B * T, C3 = 3 * (size_t)C, C4 = 4 * (size_t)C;
    if (io->layer_inputs) memcpy(io->layer_inputs + (size_t)l * BT * C, e->x, BT * C * sizeof(float));
    if (io->resume_heads && l == io->resume_layer) {
        memcpy(e->o, io->resume_heads, BT * C * sizeof(float)); /* this layer's attention, saved */
    } else {
        /* qkv [BT, 3C] = LN1(x) · qkvwᵀ + qkvb: one sgemm for Q, K and V of every head */
        linear(nt, &(linear_step){.ln_in = e->x, .ln_w = p->ln1w + (size_t)l * C, .ln_b = p->ln1b + (size_t)l * C,
                                  .a = e->ln, .w = p->qkvw + (size_t)l * C3 * C, .bias = p->qkvb + (size_t)l * C3,
                                  .out = e->big, .M = (int)BT, .N = (int)C3, .K = C, .bias_mode = BIAS_SET});
        attention(e, io, l);
    }
    if (io->layer_heads) memcpy(io->layer_heads + (size_t)l * BT * C, e->o, BT * C * sizeof(float));
    if (io->ablate_values) ablate_heads(e, io, l); /* before the contributions, which are the replaced ones */
    if (io->head_out || io->head_out_norm || io->head_dla) head_contributions(e, io, l);
    if (!io->ablate_values) ablate_heads(e, io, l); /* after them: an ablated head's head_out is zeros */
    const int M = n_rows;
    if ((size_t)M < BT) {
        compact_rows(e->o, e->loss_rows, M, C);
        compact_rows(e->x, e->loss_rows, M, C);
        if (M == 0) return;
    }
    /* x += o · attprojwᵀ + attprojb: one W_O sgemm accumulating into the residual */
    linear(nt, &(linear_step){.a = e->o, .w = p->attprojw + (size_t)l * C * C, .bias = p->attprojb + (size_t)l * C,
                              .out = e->x, .M = M, .N = C, .K = C, .bias_mode = BIAS_ADD});
    /* MLP: h [M, 4C] = GELU(LN2(x) · fcwᵀ + fcb); x += h · fcprojwᵀ + fcprojb */
    linear(nt, &(linear_step){.ln_in = e->x, .ln_w = p->ln2w + (size_t)l * C, .ln_b = p->ln2b + (size_t)l * C,
                              .a = e->ln, .w = p->fcw + (size_t)l * C4 * C, .bias = p->fcb + (size_t)l * C4,
                              .out = e->big, .M = M, .N = (int)C4, .K = C, .bias_mode = BIAS_SET, .post_gelu = 1});
    linear(nt, &(linear_step){.a = e->big, .w = p->fcprojw + (size_t)l * C * C4, .bias = p->fcprojb + (size_t)l * C,
                              .out = e->x, .M = M, .N = C, .K = (int)C4, .bias_mode = BIAS_ADD});
}

/* Logits rows computed per chunk of loss rows: bounds the scratch to LOSS_CHUNK × V. */
#define LOSS_CHUNK 64

/* token_loss[r] = -log softmax(logits[r])[loss_targets[r]] for the n loss rows e->loss_rows, NaN
 * elsewhere; only the loss rows' final LayerNorm and logits are computed (a GPT-2 vocabulary makes
 * the unembedding the biggest matmul per row). x row of loss row i: i when compacted, else
 * loss_rows[i]. Clobbers e->ln. -1 when the chunk's scratch cannot be allocated. */
static int token_losses(cpu_engine *e, const andrea_forward_io *io, int n, int compacted) {
    const andrea_params *p = &e->m->p;
    const int C = e->m->cfg.d_model, V = e->m->cfg.vocab_size;
    for (size_t r = 0; r < (size_t)io->B * io->T; r++) io->token_loss[r] = NAN;
    if (!e->loss_logits && !(e->loss_logits = malloc((size_t)LOSS_CHUNK * (size_t)V * sizeof(float)))) return -1;
#pragma omp parallel for schedule(static) num_threads(e->team)
    for (int i = 0; i < n; i++)
        layernorm_row(e->ln + (size_t)i * C, e->x + (size_t)(compacted ? i : e->loss_rows[i]) * C, p->lnfw, p->lnfb, C);
    for (int i0 = 0; i0 < n; i0 += LOSS_CHUNK) {
        const int m = n - i0 < LOSS_CHUNK ? n - i0 : LOSS_CHUNK;
        /* [m, V] = lnf rows · wte[0:V]ᵀ (tied unembedding; padded vocab rows excluded) */
        linear(e->team, &(linear_step){.a = e->ln + (size_t)i0 * C, .w = p->wte, .out = e->loss_logits, .M = m,
                                            .N = V, .K = C});
#pragma omp parallel for schedule(dynamic, 1) num_threads(e->team)
        for (int i = 0; i < m; i++) {
            const int r = e->loss_rows[i0 + i];
            io->token_loss[r] = (float)cross_entropy_row(e->loss_logits + (size_t)i * V, V, io->loss_targets[r]);
        }
    }
    return 0;
}

static int cpu_forward(andrea_engine *base, const andrea_forward_io *io, ae_error *err) {
    cpu_engine *e = (cpu_engine *)base;
    const andrea_model *m = e->m;
    const andrea_params *p = &m->p;
    if (check_io(e, io, err)) return -1;
    const int B = io->B, T = io->T, C = m->cfg.d_model, L = m->cfg.n_layer, H = m->cfg.n_head, V = m->cfg.vocab_size;
    const size_t BT = (size_t)B * T;
    /* the cores other processes leave now (cpu_team.h), unless the caller fixed the team or
     * OMP_DYNAMIC in the environment hands the choice to libgomp */
    e->team = e->fixed_threads || getenv("OMP_DYNAMIC") ? e->n_threads : andrea_cpu_team_size(e->n_threads);
    const int nt = e->team, blas_threads = andrea_blas_threads();
    /* token losses only: the last layer runs W_O and the MLP on the loss rows alone */
    int n_loss = 0;
    for (size_t r = 0; io->token_loss && r < BT; r++)
        if (io->loss_targets[r] >= 0) e->loss_rows[n_loss++] = (int)r;
    const int loss_only =
        io->token_loss && !io->logits && !io->attn && !io->head_out && !io->head_out_norm && !io->head_dla;
    andrea_blas_set_threads(1);

    /* x[b, t, :] = wte[token] + wpe[t]; padding embeds token 0 (its id may be anything). A
     * resumed forward starts from the saved input of its layer instead. */
    if (io->resume_layer > 0) memcpy(e->x, io->resume_x, BT * C * sizeof(float));
#pragma omp parallel for schedule(static) num_threads(nt)
    for (size_t bt = 0; bt < (io->resume_layer > 0 ? 0 : BT); bt++) {
        const int b = (int)(bt / T), t = (int)(bt % T);
        const int len = io->lengths ? io->lengths[b] : T;
        const int id = t < len ? io->tokens[bt] : 0;
        const float *te = p->wte + (size_t)id * C, *pe = p->wpe + (size_t)t * C;
        float *xr = e->x + bt * C;
        for (int i = 0; i < C; i++) xr[i] = te[i] + pe[i];
    }
    if (io->head_dla) dla_directions(e, io);

    for (int l = io->resume_layer; l < L; l++) {
        const int rows = loss_only && l == L - 1 ? n_loss : (int)BT;
        block(e, io, l, rows);
        /* Finite weights can still overflow float32 on the way (a hostile or broken checkpoint):
         * NaN then spreads through every later layer and every map, and would be written and
         * scored as if it were a result. A NaN or Inf anywhere in this layer (a score, a map, a
         * head's output, the MLP) reaches the residual stream, so one pass over it per layer
         * (B*T*C floats, small beside the layer's matmuls) finds it and names the layer. */
        if (ae_any_nonfinite(e->x, (size_t)rows * C)) {
            andrea_blas_set_threads(blas_threads);
            return andrea_fail(err, "%s: the forward overflows float32 in layer %d (non-finite activations): the "
                                "checkpoint's weights are far outside a trained model's range", m->path, l);
        }
    }

    if (io->final_resid && loss_only && (size_t)n_loss < BT) { /* x holds the loss rows, compacted */
        for (int i = 0; i < n_loss; i++)
            memcpy(io->final_resid + (size_t)e->loss_rows[i] * C, e->x + (size_t)i * C, (size_t)C * sizeof(float));
    } else if (io->final_resid) {
        memcpy(io->final_resid, e->x, BT * C * sizeof(float));
    }
    if (io->logits || io->head_dla) {
#pragma omp parallel for schedule(static) num_threads(nt)
        for (size_t r = 0; r < BT; r++) e->sigma[r] = layernorm_row(e->ln + r * C, e->x + r * C, p->lnfw, p->lnfb, C);
    }
    if (io->head_dla) {
        /* head_dla holds c · gdir per (b, l, h, t); divide by the final sigma, NaN without a next token */
#pragma omp parallel for schedule(static) num_threads(nt)
        for (size_t i = 0; i < (size_t)B * L * H; i++) {
            const int b = (int)(i / ((size_t)L * H));
            const int len = io->lengths ? io->lengths[b] : T;
            float *d = io->head_dla + i * T;
            for (int t = 0; t < T; t++) d[t] = t + 1 < len ? d[t] / e->sigma[(size_t)b * T + t] : NAN;
        }
    }
    /* logits [BT, V] = lnf · wte[0:V]ᵀ (tied unembedding; padded vocab rows excluded) */
    if (io->logits)
        linear(nt, &(linear_step){.a = e->ln, .w = p->wte, .out = io->logits, .M = (int)BT, .N = V, .K = C});
    int rc = io->token_loss ? token_losses(e, io, n_loss, loss_only) : 0;
    andrea_blas_set_threads(blas_threads);
    if (rc) return andrea_fail(err, "%s: cannot allocate %d x %d floats of CPU engine scratch for token losses", m->path,
                           LOSS_CHUNK, V);
    return 0;
}

/* The scratch whose size is the batch's (x, ln, big, o, gdir, sigma, loss_rows) for max_B sequences of
 * e->max_T tokens: allocated whole, then swapped in, so a failure leaves the engine as it was. */
static int alloc_batch_scratch(cpu_engine *e, int max_B, ae_error *err) {
    const andrea_model *m = e->m;
    /* BLAS takes int dimensions and the loops index B*T and B*H with int */
    if ((size_t)max_B * (size_t)e->max_T > INT_MAX || (size_t)max_B * (size_t)m->cfg.n_head > INT_MAX)
        return andrea_fail(err, "%s: CPU engine batch %d x length %d is too large", m->path, max_B, e->max_T);
    const size_t BT = (size_t)max_B * e->max_T, C = (size_t)m->cfg.d_model;
    float **slot[] = {&e->x, &e->ln, &e->big, &e->o, &e->gdir, &e->sigma};
    const size_t width[] = {C, C, 4 * C, C, C, 1};
    const char *what[] = {"residual", "layernorm", "qkv/mlp", "head outputs", "DLA directions", "final sigma"};
    enum { N_SLOTS = sizeof slot / sizeof slot[0] };
    float *got[N_SLOTS] = {0};
    int ok = 1;
    for (int i = 0; i < N_SLOTS && ok; i++) ok = (got[i] = alloc_floats(BT, width[i], m->path, what[i], err)) != NULL;
    int *rows = ok ? alloc_ints(BT, m->path, err) : NULL;
    ok = ok && rows;
    for (int i = 0; i < N_SLOTS; i++) {
        free(ok ? *slot[i] : got[i]);
        if (ok) *slot[i] = got[i];
    }
    if (!ok) return -1;
    free(e->loss_rows);
    e->loss_rows = rows;
    e->max_B = e->base.max_B = max_B;
    return 0;
}

/* Grows the batch (the batched causal check's K copies of its items); never shrinks it. */
static int cpu_reserve_batch(andrea_engine *base, int max_B, ae_error *err) {
    cpu_engine *e = (cpu_engine *)base;
    return max_B <= e->max_B ? 0 : alloc_batch_scratch(e, max_B, err);
}

/* The weights are read from the model at each forward: a new model is its pointer and its wte mean. */
static int cpu_swap_model(andrea_engine *base, const andrea_model *m, ae_error *err) {
    cpu_engine *e = (cpu_engine *)base;
    if (andrea_wte_mean(m, e->wte_mean, err)) return -1;
    e->m = m;
    return 0;
}

andrea_engine *andrea_cpu_engine_open(const andrea_model *m, int max_B, int max_T, ae_error *err) {
    return andrea_cpu_engine_open_with(m, NULL, max_B, max_T, err);
}

andrea_engine *andrea_cpu_engine_open_with(const andrea_model *m, const andrea_engine_options *o, int max_B, int max_T,
                                           ae_error *err) {
    const andrea_config *c = &m->cfg;
    if (max_B <= 0 || max_T <= 0) {
        andrea_fail(err, "%s: CPU engine needs max_B and max_T >= 1 (got %d, %d)", m->path, max_B, max_T);
        return NULL;
    }
    if (max_T > c->max_seq_len) {
        andrea_fail(err, "%s: max_T %d exceeds the model's max_seq_len %d", m->path, max_T, c->max_seq_len);
        return NULL;
    }
    cpu_engine *e = calloc(1, sizeof *e);
    if (!e) {
        andrea_fail(err, "%s: out of memory opening the CPU engine", m->path);
        return NULL;
    }
    /* links blas_core.o into every program with a CPU engine: its .preinit_array entry has then
     * chosen OpenBLAS's kernels from the CPU's features before OpenBLAS started (blas_core.c) */
    (void)andrea_blas_core_forced();
    e->base.name = "cpu";
    e->base.can_resume = 1;
    e->base.can_resume_heads = 1;
    e->base.can_token_loss = 1;
    e->base.can_ablate_per_seq = 1;
    e->base.forward = cpu_forward;
    e->base.reserve_batch = cpu_reserve_batch;
    e->base.close = cpu_close;
    e->base.swap_model = cpu_swap_model;
    e->m = m;
    e->max_T = max_T;
    /* a fixed team when the caller chose one; else every core, shrunk under load (cpu_forward) */
    e->fixed_threads = o && o->threads > 0;
    e->n_threads = e->fixed_threads ? o->threads : omp_get_max_threads();
    e->team = e->n_threads;
    const size_t C = (size_t)c->d_model;
    /* OpenBLAS's buffers before the batch's: where an address-space limit leaves no room for them,
     * a clean refusal, not OpenBLAS retrying forever (blas_core.h) */
    if (andrea_blas_reserve(e->n_threads, err) || alloc_batch_scratch(e, max_B, err) ||
        !(e->wte_mean = alloc_floats(C, 1, m->path, "wte mean", err)) ||
        !(e->contrib = alloc_floats((size_t)e->n_threads * max_T, C, m->path, "head contributions", err)) ||
        !(e->scores = alloc_floats((size_t)e->n_threads * ATT_BLOCK, (size_t)max_T, m->path, "attention", err))) {
        cpu_close(&e->base);
        return NULL;
    }
    if (andrea_wte_mean(m, e->wte_mean, err)) {
        cpu_close(&e->base);
        return NULL;
    }
    return &e->base;
}

