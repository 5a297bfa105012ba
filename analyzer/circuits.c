/* circuits.c — composition, copying and positional scores from the weights (see circuits.h and
 * docs/scores.md for the conventions, and the cost argument below).
 *
 * Notation (row vectors, C = d_model, hd = head_dim, gamma = the head's own layer's ln1 weight):
 *   Qr, Kr, Vr [hd, C]: the head's rows of qkvw with gamma folded in (Qr[j][c] = qkvw[j][c] gamma[c]),
 *   Or [hd, C]: W_O of the head (Or[j][c] = attprojw[c][h*hd + j]),
 *   W_QK = Qr^T Kr, W_OV = Vr^T Or (both [C, C], rank <= hd), rg(X) = X X^T [hd, hd].
 * Composition of src s into dst d, kind k, M_k as in docs/scores.md:
 *   ||M_Q|| = ||W_OV^s W_QK^d||, ||M_K|| = ||W_QK^d W_OV^s^T|| = ||W_OV^s W_QK^d^T||,
 *   ||M_V|| = ||W_OV^s W_OV^d||.
 * Each is ||Vr_s^T (Or_s X_d^T) Y_d||_F with (X, Y) = (Qr, Kr) for Q, (Kr, Qr) for K, (Vr, Or) for V,
 * and ||M||^2 = <S_s, D_d> (Frobenius inner product of two C x C symmetric matrices) with
 *   S_s = Or_s^T rg(Vr_s) Or_s      (one per source head),
 *   D_d = X_d^T rg(Y_d) X_d          (one per destination head and kind).
 * Cost for ANDREA-120M: the direct products Or_s X_d^T for all pairs cost ~180 GFLOP; the Gram
 * form costs one rank-hd syrk per matrix (~20 GFLOP) and one C(C+1)/2-long dot per pair (~17 GFLOP,
 * float products summed in double per 4096-long chunk: the sum cancels, ||M||^2 is ~hd/C of |S||D|).
 */
#include "circuits.h"

#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include <cblas.h>

#include "../common/checked_size.h"
#include "../engine/blas_core.h"
#include "../engine/forward.h"
#ifdef ANDREA_HAVE_CUDA
#include "../kernels/circuits_cuda.h"
#endif

const char *const andrea_circuit_kind_names[CIRCUIT_N_KINDS] = {"Q", "K", "V"};

/* LAPACK (OpenBLAS exports it): Cholesky, symmetric and general eigenvalues, column-major. */
extern void dpotrf_(const char *uplo, const int *n, double *a, const int *lda, int *info);
extern void dsyev_(const char *jobz, const char *uplo, const int *n, double *a, const int *lda, double *w,
                   double *work, const int *lwork, int *info);
extern void dgeev_(const char *jobvl, const char *jobvr, const int *n, double *a, const int *lda, double *wr,
                   double *wi, double *vl, const int *ldvl, double *vr, const int *ldvr, double *work,
                   const int *lwork, int *info);

/* ---------- small dense helpers ---------- */

/* out [hd, hd] = X X^T for X [hd, C] float, in double. */
static void row_gram(const float *X, int hd, int C, double *out) {
    double *x = malloc(sizeof(double) * (size_t)hd * C);
    if (!x) { /* scalar fallback, same sums */
        for (int i = 0; i < hd; i++)
            for (int j = i; j < hd; j++) {
                double s = 0;
                for (int c = 0; c < C; c++) s += (double)X[(size_t)i * C + c] * X[(size_t)j * C + c];
                out[i * hd + j] = out[j * hd + i] = s;
            }
        return;
    }
    for (size_t i = 0; i < (size_t)hd * C; i++) x[i] = X[i];
    cblas_dsyrk(CblasRowMajor, CblasUpper, CblasNoTrans, hd, C, 1.0, x, C, 0.0, out, hd);
    for (int i = 0; i < hd; i++)
        for (int j = 0; j < i; j++) out[i * hd + j] = out[j * hd + i];
    free(x);
}

/* tr(A B) for symmetric A, B [n, n] = sum of A ⊙ B. */
static double trace_prod(const double *A, const double *B, int n) {
    double s = 0;
    for (int i = 0; i < n * n; i++) s += A[i] * B[i];
    return s;
}

/* R [hd, hd] float with R^T R = P (P symmetric PSD): the Cholesky factor, or where P is singular
 * (a head with zero weights) R = diag(sqrt(max(lambda, 0))) V^T from P = V diag(lambda) V^T. */
static int sqrt_factor(const double *P, int hd, float *R, double *work, int lwork, ae_error *err) {
    double *a = work, *w = work + (size_t)hd * hd, *ws = w + hd;
    memcpy(a, P, sizeof(double) * (size_t)hd * hd);
    int n = hd, info = 0, lw = lwork - hd * hd - hd;
    /* Cholesky P = U^T U (column-major upper U: U(i,j) = a[j*n + i], i <= j) when P is definite */
    dpotrf_("U", &n, a, &n, &info);
    if (info == 0) {
        for (int i = 0; i < hd; i++)
            for (int j = 0; j < hd; j++) R[i * hd + j] = j >= i ? (float)a[(size_t)j * hd + i] : 0.0f;
        return 0;
    }
    memcpy(a, P, sizeof(double) * (size_t)hd * hd); /* semi-definite (e.g. zero weights): eigen-decompose */
    dsyev_("V", "U", &n, a, &n, w, ws, &lw, &info);
    if (info != 0) return andrea_fail(err, "LAPACK dsyev failed (info %d)", info);
    for (int k = 0; k < hd; k++) {
        double s = sqrt(w[k] > 0 ? w[k] : 0);
        for (int i = 0; i < hd; i++) R[k * hd + i] = (float)(s * a[(size_t)k * hd + i]); /* column k of V */
    }
    return 0;
}

/* packed [C(C+1)/2] = the upper triangle of X^T P X (X [hd, C], P [hd, hd] PSD), off-diagonal
 * entries times sqrt(2), so that a plain dot product of two packings is the Frobenius inner
 * product of the symmetric matrices. tmp: hd*C + C*C floats. */
static int sandwich_packed(const float *X, const double *P, int hd, int C, float *tmp, double *work, int lwork,
                           float *packed, ae_error *err) {
    float *R = tmp, *RX = tmp + (size_t)hd * hd, *G = RX + (size_t)hd * C;
    if (sqrt_factor(P, hd, R, work, lwork, err)) return -1;
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, hd, C, hd, 1.0f, R, hd, X, C, 0.0f, RX, C);
    cblas_ssyrk(CblasRowMajor, CblasUpper, CblasTrans, C, hd, 1.0f, RX, C, 0.0f, G, C); /* G = RX^T RX */
    size_t k = 0;
    for (int i = 0; i < C; i++) {
        packed[k++] = G[(size_t)i * C + i];
        for (int j = i + 1; j < C; j++) packed[k++] = (float)M_SQRT2 * G[(size_t)i * C + j];
    }
    return 0;
}

/* The per-layer factors: qkv [3C, C] = qkvw[l] with gamma folded in (rows: Q heads, K heads, V
 * heads), o [C, C] = attprojw[l]^T (row h*hd+j = W_O row j of head h). */
static void layer_factors(const andrea_model *m, int l, float *qkv, float *o) {
    const int C = m->cfg.d_model;
    const float *w = m->p.qkvw + (size_t)l * 3 * C * C, *g = m->p.ln1w + (size_t)l * C;
    for (size_t r = 0; r < (size_t)3 * C; r++)
        for (int c = 0; c < C; c++) qkv[r * C + c] = w[r * C + c] * g[c];
    const float *p = m->p.attprojw + (size_t)l * C * C;
    for (int r = 0; r < C; r++)
        for (int c = 0; c < C; c++) o[(size_t)c * C + r] = p[(size_t)r * C + c];
    /* every reader of the residual stream is a LayerNorm, which removes the mean over C: centre
     * each W_O row (TransformerLens's center_writing_weights) */
    for (int r = 0; r < C; r++) {
        double mean = 0;
        for (int c = 0; c < C; c++) mean += o[(size_t)r * C + c];
        mean /= C;
        for (int c = 0; c < C; c++) o[(size_t)r * C + c] = (float)(o[(size_t)r * C + c] - mean);
    }
}

/* Each head's blocks of the factors (its hd rows of Qr, Kr, Vr and Or) scaled to unit Frobenius
 * norm, for the composition scores: each is ||M|| / (||W_A|| ||W_B||), unchanged by scaling any
 * one factor, while the float Gram products below grow as the 14th power of the weights' scale:
 * a model whose weights were all 1e3 (or 1e-4) times a trained one's overflowed (underflowed) fp32
 * and scored wrong rankings (all zeros). An all-zero block stays zero (its score stays NaN). */
static void unit_head_blocks(float *X, int n_blocks, int hd, int C) {
    for (int b = 0; b < n_blocks; b++) {
        float *x = X + (size_t)b * hd * C;
        double ss = 0;
        for (size_t i = 0; i < (size_t)hd * C; i++) ss += (double)x[i] * x[i];
        if (!(ss > 0) || !isfinite(ss)) continue;
        const double r = 1.0 / sqrt(ss);
        for (size_t i = 0; i < (size_t)hd * C; i++) x[i] = (float)(x[i] * r);
    }
}

/* layer_factors for the composition scores: every head block of unit norm. */
static void layer_factors_unit(const andrea_model *m, int l, float *qkv, float *o) {
    const int C = m->cfg.d_model, H = m->cfg.n_head, hd = m->cfg.head_dim;
    layer_factors(m, l, qkv, o);
    unit_head_blocks(qkv, 3 * H, hd, C);
    unit_head_blocks(o, H, hd, C);
}

/* ---------- the baseline ---------- */

typedef struct {
    uint64_t s;
} crng;

static uint64_t splitmix64(uint64_t *s) {
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static double uniform01(crng *r) { /* in (0, 1] */
    return ((double)(splitmix64(&r->s) >> 11) + 1.0) * (1.0 / 9007199254740992.0);
}

/* n normals, two per pair of uniforms (cos, then sin): the order tests/test_circuits_numpy.py mirrors. */
static void fill_normal(double *p, size_t n, crng *r) {
    for (size_t i = 0; i < n; i += 2) {
        double u1 = uniform01(r), u2 = uniform01(r);
        double rad = sqrt(-2.0 * log(u1)), th = 6.283185307179586 * u2;
        p[i] = rad * cos(th);
        if (i + 1 < n) p[i + 1] = rad * sin(th);
    }
}

int andrea_circuits_baseline(int C, int hd, int samples, uint64_t seed, double *out, ae_error *err) {
    size_t n = (size_t)C * hd;
    double *buf = malloc(sizeof(double) * (4 * n + 5 * (size_t)hd * hd));
    if (!buf) return andrea_fail(err, "circuits: out of memory");
    double *U1 = buf, *V1 = U1 + n, *U2 = V1 + n, *V2 = U2 + n, *P1 = V2 + n, *Q1 = P1 + hd * hd, *P2 = Q1 + hd * hd,
           *Q2 = P2 + hd * hd, *G = Q2 + hd * hd;
    double *T1 = malloc(sizeof(double) * 2 * (size_t)hd * hd);
    if (!T1) {
        free(buf);
        return andrea_fail(err, "circuits: out of memory");
    }
    double *T2 = T1 + hd * hd;
    crng r = {seed};
    double sum = 0;
    for (int s = 0; s < samples; s++) {
        fill_normal(U1, n, &r); /* [C, hd] */
        fill_normal(V1, n, &r); /* [hd, C] */
        fill_normal(U2, n, &r);
        fill_normal(V2, n, &r);
        cblas_dgemm(CblasRowMajor, CblasTrans, CblasNoTrans, hd, hd, C, 1, U1, hd, U1, hd, 0, P1, hd);
        cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, hd, hd, C, 1, V1, C, V1, C, 0, Q1, hd);
        cblas_dgemm(CblasRowMajor, CblasTrans, CblasNoTrans, hd, hd, C, 1, U2, hd, U2, hd, 0, P2, hd);
        cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, hd, hd, C, 1, V2, C, V2, C, 0, Q2, hd);
        cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, hd, hd, C, 1, V1, C, U2, hd, 0, G, hd);
        /* ||U1 G V2||^2 = tr(G^T P1 G Q2) = sum((P1 G) ⊙ (G Q2)) */
        cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, hd, hd, hd, 1, P1, hd, G, hd, 0, T1, hd);
        cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, hd, hd, hd, 1, G, hd, Q2, hd, 0, T2, hd);
        double ab = trace_prod(T1, T2, hd), a = trace_prod(P1, Q1, hd), b = trace_prod(P2, Q2, hd);
        sum += sqrt(ab) / sqrt(a * b);
    }
    free(T1);
    free(buf);
    *out = sum / samples;
    return 0;
}

/* ---------- composition ---------- */

/* Frobenius norms of W_OV and W_QK per head: nov[NH], nqk[NH]. */
static void head_norms(const andrea_model *m, int l, const float *qkv, const float *o, double *rg, double *nov,
                       double *nqk) {
    const int C = m->cfg.d_model, H = m->cfg.n_head, hd = m->cfg.head_dim;
    double *a = rg, *b = rg + hd * hd;
    for (int h = 0; h < H; h++) {
        row_gram(qkv + ((size_t)2 * C + (size_t)h * hd) * C, hd, C, a);
        row_gram(o + (size_t)h * hd * C, hd, C, b);
        nov[l * H + h] = sqrt(trace_prod(a, b, hd));
        row_gram(qkv + (size_t)h * hd * C, hd, C, a);
        row_gram(qkv + ((size_t)C + (size_t)h * hd) * C, hd, C, b);
        nqk[l * H + h] = sqrt(trace_prod(a, b, hd));
    }
}

/* dots [M, N] (double) = S [M, NP] D [N, NP]^T (float): float products over chunks of CHUNK
 * columns, summed in double, so a rounding error never grows with the C(C+1)/2 length. */
enum { CHUNK = 4096 };
static void dot_rows(const float *S, const float *D, int M, int N, size_t NP, float *part, double *dots) {
    memset(dots, 0, sizeof(double) * (size_t)M * N);
    for (size_t off = 0; off < NP; off += CHUNK) {
        const int len = (int)(NP - off < CHUNK ? NP - off : CHUNK);
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, M, N, len, 1.0f, S + off, (int)NP, D + off, (int)NP, 0.0f,
                    part, N);
        for (size_t i = 0; i < (size_t)M * N; i++) dots[i] += part[i];
    }
}

/* The destination Grams of layer l2 into D [3H, NP]: D_(k,h) = X^T rg(Y) X, (X, Y) = (Qr, Kr) for Q,
 * (Kr, Qr) for K, (Vr, Or) for V. */
static int dst_grams(const andrea_model *m, int l2, float *qkv, float *o, float *D, float *tmp, double *work, int lwork,
                     double *rg, ae_error *err) {
    const int H = m->cfg.n_head, C = m->cfg.d_model, hd = m->cfg.head_dim;
    const size_t NP = (size_t)C * (C + 1) / 2;
    layer_factors_unit(m, l2, qkv, o);
    for (int h = 0; h < H; h++)
        for (int k = 0; k < CIRCUIT_N_KINDS; k++) {
            const float *qr = qkv + (size_t)h * hd * C, *kr = qkv + ((size_t)C + (size_t)h * hd) * C;
            const float *vr = qkv + ((size_t)2 * C + (size_t)h * hd) * C, *orow = o + (size_t)h * hd * C;
            const float *X = k == CIRCUIT_Q ? qr : k == CIRCUIT_K ? kr : vr;
            const float *Y = k == CIRCUIT_Q ? kr : k == CIRCUIT_K ? qr : orow;
            row_gram(Y, hd, C, rg);
            if (sandwich_packed(X, rg, hd, C, tmp, work, lwork, D + (size_t)(k * H + h) * NP, err)) return -1;
        }
    return 0;
}

/* Source Grams S_s = Or^T rg(Vr) Or are kept for a block of source layers at a time, as many as
 * fit in budget bytes (at least one); each block re-forms the destination Grams it needs, so a
 * model too large for one block costs more time, never more memory. */
static int composition(const andrea_model *m, andrea_circuits *out, float *qkv, float *o, size_t budget,
                       ae_error *err) {
    const int L = m->cfg.n_layer, H = m->cfg.n_head, C = m->cfg.d_model, hd = m->cfg.head_dim, NH = L * H;
    const size_t NP = (size_t)C * (C + 1) / 2, layer_bytes = sizeof(float) * (size_t)H * NP;
    const int lwork = hd * hd + hd + 64 * hd;
    int ret = -1, block = (int)(budget / layer_bytes);
    if (block < 1) block = 1;
    if (block > L - 1) block = L > 1 ? L - 1 : 1;
    float *S = malloc(layer_bytes * (size_t)block);                    /* [block H, NP] sources */
    float *D = malloc(sizeof(float) * (size_t)3 * H * NP);             /* [3H, NP] one dst layer */
    double *dots = malloc(sizeof(double) * (size_t)block * H * 3 * H); /* [block H, 3H] */
    float *part = malloc(sizeof(float) * (size_t)block * H * 3 * H);
    float *tmp = malloc(sizeof(float) * ((size_t)hd * hd + (size_t)hd * C + (size_t)C * C));
    double *work = malloc(sizeof(double) * (size_t)lwork), *rg = malloc(sizeof(double) * 2 * hd * hd);
    double *nov = malloc(sizeof(double) * NH), *nqk = malloc(sizeof(double) * NH);
    if (!S || !D || !dots || !part || !tmp || !work || !rg || !nov || !nqk) {
        andrea_fail(err, "circuits: out of memory (%zu MiB of Gram matrices)", (layer_bytes * block + 3 * layer_bytes) >> 20);
        goto out;
    }
    for (int l = 0; l < L; l++) {
        layer_factors_unit(m, l, qkv, o);
        head_norms(m, l, qkv, o, rg, nov, nqk);
    }
    for (int b0 = 0; b0 < L - 1; b0 += block) {
        const int b1 = b0 + block < L - 1 ? b0 + block : L - 1; /* source layers b0..b1-1 */
        for (int l = b0; l < b1; l++) {
            layer_factors_unit(m, l, qkv, o);
            for (int h = 0; h < H; h++) {
                row_gram(qkv + ((size_t)2 * C + (size_t)h * hd) * C, hd, C, rg);
                if (sandwich_packed(o + (size_t)h * hd * C, rg, hd, C, tmp, work, lwork,
                                    S + (size_t)((l - b0) * H + h) * NP, err))
                    goto out;
            }
        }
        for (int l2 = b0 + 1; l2 < L; l2++) {
            if (dst_grams(m, l2, qkv, o, D, tmp, work, lwork, rg, err)) goto out;
            /* dots[s, k*H + h] = <S_s, D_(k,h)> for the block's source heads in layers < l2 */
            const int n_src = ((l2 < b1 ? l2 : b1) - b0) * H;
            dot_rows(S, D, n_src, 3 * H, NP, part, dots);
            for (int i = 0; i < n_src; i++)
                for (int k = 0; k < CIRCUIT_N_KINDS; k++)
                    for (int h = 0; h < H; h++) {
                        const int s = b0 * H + i, d = l2 * H + h;
                        const double den = nov[s] * (k == CIRCUIT_V ? nov[d] : nqk[d]);
                        const double v = dots[(size_t)i * 3 * H + k * H + h];
                        out->comp[((size_t)k * NH + s) * NH + d] = den > 0 ? sqrt(v > 0 ? v : 0) / den : NAN;
                    }
        }
    }
    ret = 0;
out:
    free(S);
    free(D);
    free(dots);
    free(part);
    free(tmp);
    free(work);
    free(rg);
    free(nov);
    free(nqk);
    return ret;
}

/* ---------- per head: copying and prev_pos ---------- */

/* Eigenvalues this far below the largest one's modulus are zeros of a rank-deficient head (a
 * low-rank W_V, a vocabulary smaller than hd, the centred W_O of a one-head layer) that float32
 * products left with a sign that is rounding: counted, they moved a rank-1 head's score from 0 to
 * 0.25 or 0.5 with the order of the vocabulary's rows. Below a trained head's own small
 * eigenvalues (the bundled model's smallest: 1.4e-6 of the largest, in fp64): at 1e-5 two of its
 * heads lost real ones. */
#define COPYING_ZERO_EIGENVALUE 1e-6

/* out[i] = the share of the nonzero eigenvalues (|lambda| above COPYING_ZERO_EIGENVALUE times the
 * largest |lambda|) with positive real part of K_i [hd, hd] (0 when all are zero; row-major, double;
 * = K_i^T column-major: same eigenvalues), i < n, heads first_head.. of a model with H heads a
 * layer: one LAPACK dgeev per head on every OpenMP thread (OpenBLAS kept to one thread meanwhile,
 * as the CPU forward does), a 64 x 64 dgeev being ~1-2 ms. */
static int positive_shares(const double *K, int n, int hd, int first_head, int H, double *out, ae_error *err) {
    int bad = -1, bad_info = 0;
    const int blas = andrea_blas_threads();
    andrea_blas_set_threads(1);
#pragma omp parallel
    {
        const int lwork = 8 * hd;
        double *a = malloc(sizeof(double) * ((size_t)hd * hd + 2 * (size_t)hd + (size_t)lwork));
#pragma omp for schedule(dynamic, 1)
        for (int i = 0; i < n; i++) {
            int nn = hd, lw = lwork, info = a ? 0 : -1000;
            if (a) {
                double *wr = a + (size_t)hd * hd, *wi = wr + hd, *ws = wi + hd;
                memcpy(a, K + (size_t)i * hd * hd, sizeof(double) * (size_t)hd * hd);
                dgeev_("N", "N", &nn, a, &nn, wr, wi, NULL, &nn, NULL, &nn, ws, &lw, &info);
                double top = 0;
                for (int e = 0; e < hd; e++) top = fmax(top, hypot(wr[e], wi[e]));
                int pos = 0, nonzero = 0;
                for (int e = 0; e < hd; e++) {
                    const int counted = hypot(wr[e], wi[e]) > COPYING_ZERO_EIGENVALUE * top;
                    nonzero += counted;
                    pos += counted && wr[e] > 0;
                }
                out[i] = nonzero ? (double)pos / nonzero : 0;
            }
            if (info != 0) {
#pragma omp critical(circuits_bad)
                if (bad < 0 || i < bad) {
                    bad = i;
                    bad_info = info;
                }
            }
        }
        free(a);
    }
    andrea_blas_set_threads(blas);
    if (bad < 0) return 0;
    if (bad_info == -1000) return andrea_fail(err, "circuits: out of memory");
    return andrea_fail(err, "circuits: LAPACK dgeev failed on L%d H%d (info %d)", (first_head + bad) / H,
                   (first_head + bad) % H, bad_info);
}

#ifdef ANDREA_HAVE_CUDA
/* copying from the GPU's K matrices ov_k [NH, hd, hd]. */
static int copying_from_k(const andrea_model *m, const double *ov_k, andrea_circuits *out, ae_error *err) {
    return positive_shares(ov_k, m->cfg.n_layer * m->cfg.n_head, m->cfg.head_dim, 0, m->cfg.n_head, out->copying, err);
}
#endif

/* copying: eigenvalues of K = Or diag(gamma_f) E Vr^T [hd, hd], E = W_E^T W_E over the real vocabulary:
 * the nonzero eigenvalues of W_E W_OV diag(gamma_f) W_E^T [V, V] (eig(AB) = eig(BA)). */
static int copying(const andrea_model *m, andrea_circuits *out, float *qkv, float *o, ae_error *err) {
    const int L = m->cfg.n_layer, H = m->cfg.n_head, C = m->cfg.d_model, hd = m->cfg.head_dim;
    int ret = -1;
    float *E = malloc(sizeof(float) * (size_t)C * C), *Z = malloc(sizeof(float) * (size_t)C * C);
    float *K = malloc(sizeof(float) * (size_t)hd * hd);
    double *Kl = malloc(sizeof(double) * (size_t)H * hd * hd); /* [H, hd, hd]: the layer's K */
    if (!E || !Z || !K || !Kl) {
        andrea_fail(err, "circuits: out of memory");
        goto out;
    }
    cblas_ssyrk(CblasRowMajor, CblasUpper, CblasTrans, C, m->cfg.vocab_size, 1.0f, m->p.wte, C, 0.0f, E, C);
    for (int i = 0; i < C; i++) /* symmetric fill, then rows times gamma_f */
        for (int j = 0; j < C; j++) {
            if (j < i) E[(size_t)i * C + j] = E[(size_t)j * C + i];
        }
    for (int i = 0; i < C; i++)
        for (int j = 0; j < C; j++) E[(size_t)i * C + j] *= m->p.lnfw[i];
    /* the share of positive eigenvalues does not change with a positive scale of E, Vr or Or: all
     * of unit norm keeps K's float products in range whatever the weights' scale (see
     * unit_head_blocks) */
    unit_head_blocks(E, 1, C, C);
    for (int l = 0; l < L; l++) {
        layer_factors_unit(m, l, qkv, o);
        /* Z [C, C] = E' Vr_all^T: column h*hd+j is E' times V row j of head h */
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, C, C, C, 1.0f, E, C, qkv + (size_t)2 * C * C, C, 0.0f, Z,
                    C);
        for (int h = 0; h < H; h++) {
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, hd, hd, C, 1.0f, o + (size_t)h * hd * C, C,
                        Z + (size_t)h * hd, C, 0.0f, K, hd);
            for (int i = 0; i < hd * hd; i++) Kl[(size_t)h * hd * hd + i] = K[i];
        }
        for (size_t i = 0; i < (size_t)H * hd * hd; i++)
            if (!isfinite(Kl[i])) { /* LAPACK would print its own complaint to stdout and fail */
                andrea_fail(err, "circuits: copying scores of layer %d overflow float32 (the weights are far outside a "
                                 "trained model's range)", l);
                goto out;
            }
        if (positive_shares(Kl, H, hd, l * H, H, out->copying + (size_t)l * H, err)) goto out;
    }
    ret = 0;
out:
    free(E);
    free(Z);
    free(K);
    free(Kl);
    return ret;
}

/* P [T, C]: the positions p_i = LayerNorm-normalised wpe rows (centred, unit variance, eps 1e-5;
 * the scale is in the folded W_Q/W_K, the bias ignored). */
static void position_rows(const andrea_model *m, int T, float *P) {
    const int C = m->cfg.d_model;
    for (int i = 0; i < T; i++) {
        const float *x = m->p.wpe + (size_t)i * C;
        double mean = 0, var = 0;
        for (int c = 0; c < C; c++) mean += x[c];
        mean /= C;
        for (int c = 0; c < C; c++) var += (x[c] - mean) * (x[c] - mean);
        var /= C;
        const double rs = 1.0 / sqrt(var + 1e-5);
        for (int c = 0; c < C; c++) P[(size_t)i * C + c] = (float)((x[c] - mean) * rs);
    }
}

/* prev_pos: logits (p_i W_Q)(p_j W_K)^T / sqrt(hd) over keys j <= i, mean softmax mass on
 * j = i-1 over queries i = 1..T-1, T = pos_window. */
static int prev_pos(const andrea_model *m, andrea_circuits *out, float *qkv, float *o, ae_error *err) {
    const int L = m->cfg.n_layer, H = m->cfg.n_head, C = m->cfg.d_model, hd = m->cfg.head_dim, T = out->pos_window;
    int ret = -1;
    float *P = malloc(sizeof(float) * (size_t)T * C), *QK = malloc(sizeof(float) * (size_t)T * 2 * C);
    double *row = malloc(sizeof(double) * (size_t)T);
    if (!P || !QK || !row) {
        andrea_fail(err, "circuits: out of memory");
        goto out;
    }
    position_rows(m, T, P);
    const double scale = 1.0 / sqrt((double)hd);
    for (int l = 0; l < L; l++) {
        layer_factors(m, l, qkv, o);
        /* QK [T, 2C] = P qkv[0:2C]^T: queries in columns 0..C-1, keys in C..2C-1 */
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, T, 2 * C, C, 1.0f, P, C, qkv, C, 0.0f, QK, 2 * C);
        for (int h = 0; h < H; h++) {
            double mass = 0;
            for (int i = 1; i < T; i++) {
                const float *q = QK + (size_t)i * 2 * C + (size_t)h * hd;
                double mx = -INFINITY, z = 0;
                for (int j = 0; j <= i; j++) {
                    const float *k = QK + (size_t)j * 2 * C + C + (size_t)h * hd;
                    double s = 0;
                    for (int e = 0; e < hd; e++) s += (double)q[e] * k[e];
                    row[j] = s * scale;
                    if (row[j] > mx) mx = row[j];
                }
                for (int j = 0; j <= i; j++) z += exp(row[j] - mx);
                mass += exp(row[i - 1] - mx) / z;
            }
            out->prev_pos[l * H + h] = T > 1 ? mass / (T - 1) : NAN;
        }
    }
    ret = 0;
out:
    free(P);
    free(QK);
    free(row);
    return ret;
}

void andrea_circuits_free(andrea_circuits *c) {
    free(c->comp);
    free(c->copying);
    free(c->prev_pos);
    memset(c, 0, sizeof *c);
}

int andrea_circuits_compute(const andrea_model *m, andrea_circuits *out, ae_error *err) {
    return andrea_circuits_compute_budget(m, CIRCUITS_GRAM_BUDGET, out, err);
}

/* The GPU's share (kernels/circuits_cuda.h): composition, the K matrices and prev_pos; the
 * eigenvalues of K stay on the CPU (LAPACK). */
static int compute_gpu(const andrea_model *m, andrea_circuits *out, ae_error *err) {
#ifdef ANDREA_HAVE_CUDA
    const int NH = out->n_layer * out->n_head, hd = out->head_dim, T = out->pos_window;
    double *ov_k = malloc(sizeof(double) * (size_t)NH * hd * hd);
    float *P = malloc(sizeof(float) * (size_t)(T > 0 ? T : 1) * out->d_model);
    int rc = -1;
    if (!ov_k || !P) {
        andrea_fail(err, "circuits: out of memory");
    } else {
        position_rows(m, T, P);
        rc = andrea_circuits_cuda(m, T, P, out->comp, ov_k, out->prev_pos, err) || copying_from_k(m, ov_k, out, err);
    }
    free(ov_k);
    free(P);
    return rc ? -1 : 0;
#else
    (void)m;
    (void)out;
    return andrea_fail(err, "circuits: this andrea was built without CUDA");
#endif
}

static int circuits_init(const andrea_model *m, andrea_circuits *out, size_t *ncomp, ae_error *err) {
    memset(out, 0, sizeof *out);
    /* BLAS and LAPACK on every OpenMP thread: their OpenBLAS buffers first (blas_core.h) */
    if (andrea_blas_reserve(omp_get_max_threads(), err)) return -1;
    const andrea_config *cfg = &m->cfg;
    const int NH = cfg->n_layer * cfg->n_head;
    out->n_layer = cfg->n_layer;
    out->n_head = cfg->n_head;
    out->d_model = cfg->d_model;
    out->head_dim = cfg->head_dim;
    out->pos_window = cfg->max_seq_len < CIRCUITS_POS_WINDOW ? cfg->max_seq_len : CIRCUITS_POS_WINDOW;
    out->baseline_samples = CIRCUITS_BASELINE_SAMPLES;
    out->baseline_seed = CIRCUITS_BASELINE_SEED;
    if (ae_mul((size_t)3 * NH, (size_t)NH, ncomp)) return andrea_fail(err, "circuits: too many heads");
    out->comp = malloc(sizeof(double) * *ncomp);
    out->copying = malloc(sizeof(double) * NH);
    out->prev_pos = malloc(sizeof(double) * NH);
    if (!out->comp || !out->copying || !out->prev_pos) return andrea_fail(err, "circuits: out of memory");
    for (size_t i = 0; i < *ncomp; i++) out->comp[i] = NAN;
    return andrea_circuits_baseline(out->d_model, out->head_dim, out->baseline_samples, out->baseline_seed,
                                    &out->baseline, err);
}

int andrea_circuits_compute_on(const andrea_model *m, andrea_device device, andrea_circuits *out, ae_error *err) {
    if (device == ANDREA_DEVICE_AUTO) device = andrea_cuda_available() ? ANDREA_DEVICE_CUDA : ANDREA_DEVICE_CPU;
    if (device != ANDREA_DEVICE_CUDA) return andrea_circuits_compute(m, out, err);
    if (!andrea_cuda_available()) {
        memset(out, 0, sizeof *out);
        return andrea_fail(err, "%s: circuits: no CUDA device (or this andrea was built without CUDA)", m->path);
    }
    size_t ncomp;
    if (circuits_init(m, out, &ncomp, err) || compute_gpu(m, out, err)) {
        andrea_prefix(err, "%s", m->path);
        andrea_circuits_free(out);
        return -1;
    }
    out->gpu = 1;
    return 0;
}

int andrea_circuits_compute_budget(const andrea_model *m, size_t budget, andrea_circuits *out, ae_error *err) {
    const int C = m->cfg.d_model;
    size_t ncomp;
    float *qkv = malloc(sizeof(float) * (size_t)3 * C * C), *o = malloc(sizeof(float) * (size_t)C * C);
    int ret = -1;
    if (!qkv || !o) {
        memset(out, 0, sizeof *out);
        andrea_fail(err, "circuits: out of memory");
    } else if (!circuits_init(m, out, &ncomp, err) && !composition(m, out, qkv, o, budget, err) &&
               !copying(m, out, qkv, o, err) && !prev_pos(m, out, qkv, o, err)) {
        ret = 0;
    }
    free(qkv);
    free(o);
    if (ret) {
        andrea_prefix(err, "%s", m->path);
        andrea_circuits_free(out);
    }
    return ret;
}
