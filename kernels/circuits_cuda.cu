/* circuits_cuda.cu — circuit scores from the weights on the GPU: cuBLAS fp64 GEMMs and three
 * small kernels (see circuits_cuda.h for the contract, analyzer/circuits.c for the notation and
 * the Gram form, docs/scores.md for the conventions).
 *
 * Layout: every matrix is row-major as in analyzer/circuits.c; cuBLAS is column-major, so a
 * row-major [r, c] buffer is the column-major [c, r] matrix (its transpose) with ld c, and each
 * call below states the product it forms in row-major terms.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cublas_v2.h>
#include <cuda_runtime.h>

extern "C" {
#include "../common/error.h"
#include "../engine/model.h"
#include "circuits_cuda.h"
}
#include "cuda_check.h"

namespace {

/* The device state of one computation. */
struct cc_state {
    cublasHandle_t h;
    int L, H, C, hd, NH;
    size_t NP;             /* C (C + 1) / 2: a packed symmetric C x C matrix */
    float *w_qkv, *w_o, *w_g; /* all layers, as the model holds them: [L, 3C, C], [L, C, C], [L, C] */
    double *qkv, *o;       /* one layer's factors: [3C, C] gamma folded in, [C, C] W_O rows centred */
    double *rg;            /* [4, H, hd, hd]: rg(Qr), rg(Kr), rg(Vr), rg(Or) of that layer */
    double *tt, *g;        /* scratch [H, hd, C], [H, C, C] */
    double *S, *D, *dots;  /* [block H, NP] sources, [3H, NP] one destination layer, [block H, 3H] */
    double *nov, *nqk;     /* [NH] ||W_OV||_F, ||W_QK||_F */
    int block;             /* source layers whose Grams are held at once */
};

/* qkv[r, c] = float(w[r, c] g[c]) (the CPU's float product), as double. */
__global__ void k_fold_gamma(const float *w, const float *g, int C, size_t n, double *qkv) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        qkv[i] = (double)__fmul_rn(w[i], g[i % C]);
}

/* o[r, c] = p[c, r] - mean_c p[c, r], rounded to float as on the CPU; one block per row r. */
__global__ void k_o_centred(const float *p, int C, double *o) {
    __shared__ double part[256];
    const int r = blockIdx.x;
    double s = 0;
    for (int c = threadIdx.x; c < C; c += blockDim.x) s += p[(size_t)c * C + r];
    part[threadIdx.x] = s;
    __syncthreads();
    for (int w = blockDim.x / 2; w > 0; w /= 2) {
        if ((int)threadIdx.x < w) part[threadIdx.x] += part[threadIdx.x + w];
        __syncthreads();
    }
    const double mean = part[0] / C;
    for (int c = threadIdx.x; c < C; c += blockDim.x)
        o[(size_t)r * C + c] = (double)(float)((double)p[(size_t)c * C + r] - mean);
}

/* out[h] = sqrt(sum(a_h ⊙ b_h)) over hd x hd; one block per head. */
__global__ void k_frob(const double *a, const double *b, int n, double *out) {
    __shared__ double part[256];
    const size_t off = (size_t)blockIdx.x * n;
    double s = 0;
    for (int i = threadIdx.x; i < n; i += blockDim.x) s += a[off + i] * b[off + i];
    part[threadIdx.x] = s;
    __syncthreads();
    for (int w = blockDim.x / 2; w > 0; w /= 2) {
        if ((int)threadIdx.x < w) part[threadIdx.x] += part[threadIdx.x + w];
        __syncthreads();
    }
    if (threadIdx.x == 0) out[blockIdx.x] = sqrt(part[0]);
}

/* packed[h, j(j+1)/2 + i] = G_h[i, j] (i <= j), off-diagonal times sqrt(2): a dot product of two
 * packings is the Frobenius product of the symmetric matrices. Grid (C, H). */
__global__ void k_pack(const double *G, int C, size_t NP, double *packed) {
    const int j = blockIdx.x, h = blockIdx.y;
    const double *g = G + (size_t)h * C * C + (size_t)j * C;
    double *out = packed + (size_t)h * NP + (size_t)j * (j + 1) / 2;
    for (int i = threadIdx.x; i <= j; i += blockDim.x) out[i] = i == j ? g[i] : M_SQRT2 * g[i];
}

/* E[i, :] *= f[i] (row scaling by the final LayerNorm's weight). */
__global__ void k_scale_rows(double *E, const float *f, int C) {
    const size_t n = (size_t)C * C;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        E[i] *= f[i / C];
}

__global__ void k_to_double(const float *src, size_t n, double *dst) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        dst[i] = src[i];
}

/* mass[h, i] = softmax over keys j <= i of (q_i . k_j) scale, at key i - 1; grid (T - 1, H),
 * query i = blockIdx.x + 1. QK [T, 2C]: queries in columns 0..C-1, keys in C..2C-1. T <= 128. */
__global__ void k_prev_pos(const double *QK, int C, int hd, int T, double scale, double *mass) {
    __shared__ double s[128];
    const int i = blockIdx.x + 1, h = blockIdx.y;
    const double *q = QK + (size_t)i * 2 * C + (size_t)h * hd;
    for (int j = threadIdx.x; j <= i; j += blockDim.x) {
        const double *k = QK + (size_t)j * 2 * C + C + (size_t)h * hd;
        double d = 0;
        for (int e = 0; e < hd; e++) d += q[e] * k[e];
        s[j] = d * scale;
    }
    __syncthreads();
    if (threadIdx.x != 0) return;
    double mx = -INFINITY, z = 0;
    for (int j = 0; j <= i; j++) mx = s[j] > mx ? s[j] : mx;
    for (int j = 0; j <= i; j++) z += exp(s[j] - mx);
    mass[(size_t)h * T + i] = exp(s[i - 1] - mx) / z;
}

unsigned grid_for(size_t n) {
    size_t b = (n + 255) / 256;
    return (unsigned)(b < 4096 ? b : 4096);
}

/* The factors of layer l and their row Grams: rg = X_h X_h^T for X in Qr, Kr, Vr, Or. */
int layer_factors(cc_state *s, int l, ae_error *err) {
    const int C = s->C, hd = s->hd, H = s->H;
    const size_t CC = (size_t)C * C;
    const double one = 1, zero = 0;
    k_fold_gamma<<<grid_for(3 * CC), 256>>>(s->w_qkv + (size_t)l * 3 * CC, s->w_g + (size_t)l * C, C, 3 * CC, s->qkv);
    CU_CHECK(cudaGetLastError());
    k_o_centred<<<C, 256>>>(s->w_o + (size_t)l * CC, C, s->o);
    CU_CHECK(cudaGetLastError());
    for (int x = 0; x < 4; x++) { /* X_h = rows h*hd.. of X: column-major X_h^T [C, hd], ld C */
        const double *X = x < 3 ? s->qkv + (size_t)x * CC : s->o;
        CUBLAS_CHECK(cublasDgemmStridedBatched(s->h, CUBLAS_OP_T, CUBLAS_OP_N, hd, hd, C, &one, X, C,
                                               (long long)hd * C, X, C, (long long)hd * C, &zero,
                                               s->rg + (size_t)x * H * hd * hd, hd, (long long)hd * hd, H));
    }
    return 0;
fail:
    return -1;
}

/* packed[h] = X_h^T P_h X_h for the layer's H heads (X_h rows h*hd.. of X, P_h [hd, hd]). */
int sandwich(cc_state *s, const double *X, const double *P, double *packed, ae_error *err) {
    const int C = s->C, hd = s->hd, H = s->H;
    const double one = 1, zero = 0;
    /* tt_h (row-major [hd, C]) = P_h X_h; column-major: X_h^T P_h */
    CUBLAS_CHECK(cublasDgemmStridedBatched(s->h, CUBLAS_OP_N, CUBLAS_OP_N, C, hd, hd, &one, X, C, (long long)hd * C,
                                           P, hd, (long long)hd * hd, &zero, s->tt, C, (long long)hd * C, H));
    /* g_h [C, C] = X_h^T tt_h */
    CUBLAS_CHECK(cublasDgemmStridedBatched(s->h, CUBLAS_OP_N, CUBLAS_OP_T, C, C, hd, &one, X, C, (long long)hd * C,
                                           s->tt, C, (long long)hd * C, &zero, s->g, C, (long long)C * C, H));
    k_pack<<<dim3(C, H), 256>>>(s->g, C, s->NP, packed);
    CU_CHECK(cudaGetLastError());
    return 0;
fail:
    return -1;
}

/* ||W_OV|| and ||W_QK|| of every head, into s->nov / s->nqk (device). */
int head_norms(cc_state *s, ae_error *err) {
    const size_t hh = (size_t)s->hd * s->hd, q = 0, k = s->H * hh, v = 2 * k, o = 3 * k;
    for (int l = 0; l < s->L; l++) {
        if (layer_factors(s, l, err)) return -1;
        k_frob<<<s->H, 256>>>(s->rg + v, s->rg + o, (int)hh, s->nov + (size_t)l * s->H);
        CU_CHECK(cudaGetLastError());
        k_frob<<<s->H, 256>>>(s->rg + q, s->rg + k, (int)hh, s->nqk + (size_t)l * s->H);
        CU_CHECK(cudaGetLastError());
    }
    return 0;
fail:
    return -1;
}

/* The destination Grams of layer l2 into s->D: D_(k,h) = X^T rg(Y) X, (X, Y) = (Qr, Kr) for Q,
 * (Kr, Qr) for K, (Vr, Or) for V. */
int dst_grams(cc_state *s, int l2, ae_error *err) {
    const size_t CC = (size_t)s->C * s->C, hh = (size_t)s->H * s->hd * s->hd;
    if (layer_factors(s, l2, err)) return -1;
    const double *X[3] = {s->qkv, s->qkv + CC, s->qkv + 2 * CC};
    const double *P[3] = {s->rg + hh, s->rg, s->rg + 3 * hh}; /* rg(K), rg(Q), rg(O) */
    for (int k = 0; k < 3; k++)
        if (sandwich(s, X[k], P[k], s->D + (size_t)k * s->H * s->NP, err)) return -1;
    return 0;
}

/* Composition: sources in blocks of s->block layers, each block against every later layer. */
int composition(cc_state *s, double *comp, ae_error *err) {
    const int L = s->L, H = s->H, NH = s->NH;
    const double one = 1, zero = 0;
    double *nov = (double *)malloc(sizeof(double) * 2 * NH), *nqk = nov + NH;
    double *dots = (double *)malloc(sizeof(double) * (size_t)s->block * H * 3 * H);
    if (!nov || !dots) {
        andrea_fail(err, "circuits: out of memory");
        goto fail;
    }
    if (head_norms(s, err)) goto fail;
    CU_CHECK(cudaMemcpy(nov, s->nov, sizeof(double) * NH, cudaMemcpyDeviceToHost));
    CU_CHECK(cudaMemcpy(nqk, s->nqk, sizeof(double) * NH, cudaMemcpyDeviceToHost));
    for (int b0 = 0; b0 < L - 1; b0 += s->block) {
        const int b1 = b0 + s->block < L - 1 ? b0 + s->block : L - 1; /* source layers b0..b1-1 */
        for (int l = b0; l < b1; l++) /* S_s = Or^T rg(Vr) Or */
            if (layer_factors(s, l, err) ||
                sandwich(s, s->o, s->rg + (size_t)2 * H * s->hd * s->hd, s->S + (size_t)(l - b0) * H * s->NP, err))
                goto fail;
        for (int l2 = b0 + 1; l2 < L; l2++) {
            if (dst_grams(s, l2, err)) goto fail;
            const int n_src = ((l2 < b1 ? l2 : b1) - b0) * H;
            /* dots (column-major [n_src, 3H]) = S^T D: <S_i, D_c> over the NP packed entries */
            CUBLAS_CHECK(cublasDgemm(s->h, CUBLAS_OP_T, CUBLAS_OP_N, n_src, 3 * H, (int)s->NP, &one, s->S,
                                     (int)s->NP, s->D, (int)s->NP, &zero, s->dots, n_src));
            CU_CHECK(cudaMemcpy(dots, s->dots, sizeof(double) * (size_t)n_src * 3 * H, cudaMemcpyDeviceToHost));
            for (int i = 0; i < n_src; i++)
                for (int k = 0; k < 3; k++)
                    for (int h = 0; h < H; h++) {
                        const int src = b0 * H + i, dst = l2 * H + h;
                        const double den = nov[src] * (k == 2 ? nov[dst] : nqk[dst]);
                        const double v = dots[(size_t)(k * H + h) * n_src + i];
                        comp[((size_t)k * NH + src) * NH + dst] = den > 0 ? sqrt(v > 0 ? v : 0) / den : NAN;
                    }
        }
    }
    free(nov);
    free(dots);
    return 0;
fail:
    free(nov);
    free(dots);
    return -1;
}

/* ov_k[l, h] = Or_h Z[:, h*hd..] with Z = diag(lnfw) W_E^T W_E Vr^T (W_E: the real vocabulary). */
int copying(cc_state *s, const andrea_model *m, double *ov_k, ae_error *err) {
    const int C = s->C, V = m->cfg.vocab_size, hd = s->hd, H = s->H;
    const size_t CC = (size_t)C * C, nw = (size_t)V * C, hh = (size_t)hd * hd;
    const double one = 1, zero = 0;
    float *wf = NULL, *lnf = NULL;
    double *wd = NULL, *E = s->g, *Z = s->g + CC; /* g holds H C^2 >= 2 C^2 doubles (H >= 2) or is reused below */
    double *K = s->tt;                             /* [H, hd, hd] fits in [H, hd, C] */
    CU_CHECK(cudaMalloc(&wf, nw * sizeof(float)));
    CU_CHECK(cudaMalloc(&wd, nw * sizeof(double)));
    CU_CHECK(cudaMalloc(&lnf, C * sizeof(float)));
    CU_CHECK(cudaMemcpy(wf, m->p.wte, nw * sizeof(float), cudaMemcpyHostToDevice));
    CU_CHECK(cudaMemcpy(lnf, m->p.lnfw, C * sizeof(float), cudaMemcpyHostToDevice));
    k_to_double<<<grid_for(nw), 256>>>(wf, nw, wd);
    CU_CHECK(cudaGetLastError());
    CU_CHECK(cudaFree(wf));
    wf = NULL;
    /* E [C, C] = W_E^T W_E: the row-major wte [V, C] is the column-major W_E^T */
    CUBLAS_CHECK(cublasDgemm(s->h, CUBLAS_OP_N, CUBLAS_OP_T, C, C, V, &one, wd, C, wd, C, &zero, E, C));
    k_scale_rows<<<grid_for(CC), 256>>>(E, lnf, C);
    CU_CHECK(cudaGetLastError());
    for (int l = 0; l < s->L; l++) {
        if (layer_factors(s, l, err)) goto fail;
        /* Z = E Vr^T; column-major: Z^T = Vr E^T */
        CUBLAS_CHECK(cublasDgemm(s->h, CUBLAS_OP_T, CUBLAS_OP_N, C, C, C, &one, s->qkv + 2 * CC, C, E, C, &zero, Z, C));
        /* K_h = Or_h Z[:, h*hd..]; column-major: K_h^T = Z[:, h*hd..]^T Or_h^T */
        CUBLAS_CHECK(cublasDgemmStridedBatched(s->h, CUBLAS_OP_N, CUBLAS_OP_N, hd, hd, C, &one, Z, C, hd, s->o, C,
                                               (long long)hd * C, &zero, K, hd, (long long)hh, H));
        CU_CHECK(cudaMemcpy(ov_k + (size_t)l * H * hh, K, H * hh * sizeof(double), cudaMemcpyDeviceToHost));
    }
    cudaFree(wd);
    cudaFree(lnf);
    return 0;
fail:
    cudaFree(wf);
    cudaFree(wd);
    cudaFree(lnf);
    return -1;
}

/* prev_pos from the normalised positions P [T, C] (host float). */
int prev_pos(cc_state *s, const float *pos_rows, int T, double *out, ae_error *err) {
    const int C = s->C, H = s->H;
    const double one = 1, zero = 0;
    double *mass = (double *)calloc((size_t)H * T, sizeof(double));
    float *pf = NULL;
    double *P = NULL, *QK = NULL, *dmass = NULL; /* [T, C], [T, 2C], [H, T] */
    if (!mass) {
        andrea_fail(err, "circuits: out of memory");
        goto fail;
    }
    CU_CHECK(cudaMalloc(&pf, (size_t)T * C * sizeof(float)));
    CU_CHECK(cudaMalloc(&P, (size_t)T * C * sizeof(double)));
    CU_CHECK(cudaMalloc(&QK, (size_t)T * 2 * C * sizeof(double)));
    CU_CHECK(cudaMalloc(&dmass, (size_t)H * T * sizeof(double)));
    CU_CHECK(cudaMemcpy(pf, pos_rows, (size_t)T * C * sizeof(float), cudaMemcpyHostToDevice));
    k_to_double<<<grid_for((size_t)T * C), 256>>>(pf, (size_t)T * C, P);
    CU_CHECK(cudaGetLastError());
    for (int l = 0; l < s->L; l++) {
        if (layer_factors(s, l, err)) goto fail;
        /* QK [T, 2C] = P qkv[0:2C]^T; column-major: QK^T = qkv[0:2C] P^T */
        CUBLAS_CHECK(cublasDgemm(s->h, CUBLAS_OP_T, CUBLAS_OP_N, 2 * C, T, C, &one, s->qkv, C, P, C, &zero, QK, 2 * C));
        if (T > 1) {
            k_prev_pos<<<dim3(T - 1, H), 128>>>(QK, C, s->hd, T, 1.0 / sqrt((double)s->hd), dmass);
            CU_CHECK(cudaGetLastError());
            CU_CHECK(cudaMemcpy(mass, dmass, (size_t)H * T * sizeof(double), cudaMemcpyDeviceToHost));
        }
        for (int h = 0; h < H; h++) { /* queries 1..T-1 in order, as the CPU sums them */
            double sum = 0;
            for (int i = 1; i < T; i++) sum += mass[(size_t)h * T + i];
            out[l * H + h] = T > 1 ? sum / (T - 1) : NAN;
        }
    }
    cudaFree(pf);
    cudaFree(P);
    cudaFree(QK);
    cudaFree(dmass);
    free(mass);
    return 0;
fail:
    cudaFree(pf);
    cudaFree(P);
    cudaFree(QK);
    cudaFree(dmass);
    free(mass);
    return -1;
}

void state_free(cc_state *s) {
    void *p[] = {s->w_qkv, s->w_o, s->w_g, s->qkv, s->o, s->rg, s->tt, s->g, s->S, s->D, s->dots, s->nov, s->nqk};
    for (size_t i = 0; i < sizeof p / sizeof p[0]; i++) cudaFree(p[i]);
    if (s->h) cublasDestroy(s->h);
}

/* Uploads the weights the scores read and allocates the scratch; the source block takes what
 * half the remaining free memory holds. */
int state_open(cc_state *s, const andrea_model *m, ae_error *err) {
    const int L = m->cfg.n_layer, H = m->cfg.n_head, C = m->cfg.d_model, hd = m->cfg.head_dim;
    const size_t CC = (size_t)C * C;
    s->L = L, s->H = H, s->C = C, s->hd = hd, s->NH = L * H, s->NP = (size_t)C * (C + 1) / 2;
    if (andrea_cublas_load(err)) goto fail; /* loaded now, not at start-up (cublas_lazy.h) */
    CUBLAS_CHECK(cublasCreate(&s->h));
    CUBLAS_CHECK(cublasSetMathMode(s->h, CUBLAS_DEFAULT_MATH)); /* fp64 as written: no TF32, no emulation */
    CU_CHECK(cudaMalloc(&s->w_qkv, (size_t)L * 3 * CC * sizeof(float)));
    CU_CHECK(cudaMalloc(&s->w_o, (size_t)L * CC * sizeof(float)));
    CU_CHECK(cudaMalloc(&s->w_g, (size_t)L * C * sizeof(float)));
    CU_CHECK(cudaMemcpy(s->w_qkv, m->p.qkvw, (size_t)L * 3 * CC * sizeof(float), cudaMemcpyHostToDevice));
    CU_CHECK(cudaMemcpy(s->w_o, m->p.attprojw, (size_t)L * CC * sizeof(float), cudaMemcpyHostToDevice));
    CU_CHECK(cudaMemcpy(s->w_g, m->p.ln1w, (size_t)L * C * sizeof(float), cudaMemcpyHostToDevice));
    CU_CHECK(cudaMalloc(&s->qkv, 3 * CC * sizeof(double)));
    CU_CHECK(cudaMalloc(&s->o, CC * sizeof(double)));
    CU_CHECK(cudaMalloc(&s->rg, (size_t)4 * H * hd * hd * sizeof(double)));
    CU_CHECK(cudaMalloc(&s->tt, (size_t)H * hd * C * sizeof(double) + CC * sizeof(double)));
    CU_CHECK(cudaMalloc(&s->g, (size_t)(H > 2 ? H : 2) * CC * sizeof(double)));
    CU_CHECK(cudaMalloc(&s->D, (size_t)3 * H * s->NP * sizeof(double)));
    CU_CHECK(cudaMalloc(&s->nov, (size_t)s->NH * sizeof(double)));
    CU_CHECK(cudaMalloc(&s->nqk, (size_t)s->NH * sizeof(double)));
    {
        size_t free_b = 0, total_b = 0;
        CU_CHECK(cudaMemGetInfo(&free_b, &total_b));
        const size_t layer_bytes = (size_t)H * s->NP * sizeof(double);
        size_t block = free_b / 2 / layer_bytes;
        if (block < 1) block = 1;
        if (block > (size_t)(L > 1 ? L - 1 : 1)) block = L > 1 ? L - 1 : 1;
        s->block = (int)block;
        if (cudaMalloc(&s->S, block * layer_bytes) != cudaSuccess)
            return andrea_fail(err, "circuits: out of GPU memory (%zu MiB for one layer's Gram matrices)",
                           (block * layer_bytes) >> 20);
        CU_CHECK(cudaMalloc(&s->dots, block * H * 3 * H * sizeof(double)));
    }
    return 0;
fail:
    return -1;
}

} // namespace

extern "C" int andrea_circuits_cuda(const andrea_model *m, int pos_window, const float *pos_rows, double *comp,
                                    double *ov_k, double *prev_pos_out, ae_error *err) {
    cc_state s;
    memset(&s, 0, sizeof s);
    int rc = state_open(&s, m, err) || composition(&s, comp, err) || copying(&s, m, ov_k, err) ||
                     prev_pos(&s, pos_rows, pos_window, prev_pos_out, err)
                 ? -1
                 : 0;
    state_free(&s);
    return rc;
}
