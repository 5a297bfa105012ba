/* attention_check.cu — each attention kernel version on its own, against a CPU oracle, then timed.
 *
 * The llm.c dev/cuda habit: one small program per kernel family that (1) fills q, k, v with seeded
 * random values, (2) runs the chosen version, (3) compares the probabilities and the output with
 * a double-precision CPU reference of softmax(q·kᵀ·scale, causal)·v, stating the tolerance and
 * why, and only then (4) times it with CUDA events after a warm-up, beside the floor (the bytes of
 * the maps it writes over the measured copy rate is not known here, so the map bytes are printed).
 * It replaces picking versions through the whole engine: the engine takes v3 (or v1 for exact fp32
 * and head_dims v3 cannot run); this harness is where v1, v2 and v3 are compared.
 *
 * Usage: bench_attention_versions [B H T hd] [v1|v2|v3|all]   (default 8 12 128 64 all)
 * Exit 1 when a version exceeds its tolerance, 2 on bad arguments, 77 with no GPU.
 * Tolerances: v1 is fp32 SIMT with expf: 2e-6 on probabilities (fp32 rounding over T terms).
 * v2/v3 take TF32 inputs to the tensor cores (10-bit mantissa, relative error 2^-11 per product):
 * on unit-variance random inputs with scale 1/sqrt(hd) the logits move by ~1e-3, so probabilities
 * by up to ~2e-3; 5e-3 is the bound, the measured value is printed beside it.
 */
#include <cuda_runtime.h>

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/rng.h"
#include "../attention.h"

#define CHECK_CUDA(x)                                                                                  \
    do {                                                                                               \
        cudaError_t e_ = (x);                                                                          \
        if (e_ != cudaSuccess) {                                                                       \
            fprintf(stderr, "attention_check: %s failed (%s:%d): %s\n", #x, __FILE__, __LINE__,       \
                    cudaGetErrorString(e_));                                                           \
            exit(1);                                                                                   \
        }                                                                                              \
    } while (0)

typedef cudaError_t (*attn_fn)(const andrea_attn_args *, cudaStream_t);

static float uniform_pm1(uint64_t *s) { return (float)((double)(ae_splitmix64(s) >> 11) * 0x1.0p-52 - 1.0); }

/* The engine's layout: q, k, v as column blocks of one [B, T, 3C] tensor (the fused QKV matmul's
 * output), y into [B, T, C] rows (andrea_attn_fused), on the device. */
typedef struct {
    andrea_attn_args a;
    float *qkv, *ycat, *hyc; /* device, device, host copy of ycat */
} fused_layout;

static fused_layout fused_layout_of(const andrea_attn_args *contiguous, const float *hq, const float *hk,
                                    const float *hv) {
    fused_layout f;
    f.a = *contiguous;
    const int B = f.a.B, H = f.a.H, T = f.a.T, hd = f.a.hd;
    const size_t C = (size_t)H * hd, n = (size_t)B * T * C;
    float *hqkv = (float *)malloc(n * 3 * 4);
    f.hyc = (float *)malloc(n * 4);
    if (!hqkv || !f.hyc) {
        fprintf(stderr, "attention_check: out of memory\n");
        exit(1);
    }
    for (int b = 0; b < B; b++)
        for (int h = 0; h < H; h++)
            for (int t = 0; t < T; t++)
                for (int d = 0; d < hd; d++) {
                    const size_t from = (((size_t)b * H + h) * T + t) * hd + d, row = ((size_t)b * T + t) * 3 * C;
                    hqkv[row + (size_t)h * hd + d] = hq[from];
                    hqkv[row + C + (size_t)h * hd + d] = hk[from];
                    hqkv[row + 2 * C + (size_t)h * hd + d] = hv[from];
                }
    CHECK_CUDA(cudaMalloc(&f.qkv, n * 3 * 4));
    CHECK_CUDA(cudaMalloc(&f.ycat, n * 4));
    CHECK_CUDA(cudaMemcpy(f.qkv, hqkv, n * 3 * 4, cudaMemcpyHostToDevice));
    free(hqkv);
    andrea_attn_fused(&f.a, f.qkv, f.ycat);
    return f;
}

/* Version fn on the fused layout gives the probabilities hp and outputs hy ([B, H, T, hd]) of the
 * contiguous run, bit for bit (the same arithmetic on the same values): 1, else 0. p: the device
 * probabilities buffer of n_p floats, overwritten. */
static int fused_matches(fused_layout *f, attn_fn fn, const float *hp, const float *hy, float *p, size_t n_p) {
    const int B = f->a.B, H = f->a.H, T = f->a.T, hd = f->a.hd;
    const size_t C = (size_t)H * hd;
    CHECK_CUDA(cudaMemset(p, 0xff, n_p * 4));
    CHECK_CUDA(cudaMemset(f->ycat, 0xff, (size_t)B * T * C * 4));
    CHECK_CUDA(fn(&f->a, 0));
    CHECK_CUDA(cudaDeviceSynchronize());
    float *hp2 = (float *)malloc(n_p * 4);
    if (!hp2) exit(1);
    CHECK_CUDA(cudaMemcpy(hp2, p, n_p * 4, cudaMemcpyDeviceToHost));
    CHECK_CUDA(cudaMemcpy(f->hyc, f->ycat, (size_t)B * T * C * 4, cudaMemcpyDeviceToHost));
    int same = !memcmp(hp2, hp, n_p * 4);
    for (int b = 0; b < B && same; b++)
        for (int h = 0; h < H && same; h++)
            for (int t = 0; t < T && same; t++)
                same = !memcmp(f->hyc + ((size_t)b * T + t) * C + (size_t)h * hd, hy + (((size_t)b * H + h) * T + t) * hd,
                               (size_t)hd * 4);
    free(hp2);
    return same;
}

/* CPU oracle in double: probs [B, H, T, T] and y [B, H, T, hd]. */
static void oracle(const float *q, const float *k, const float *v, int B, int H, int T, int hd, double *probs,
                   double *y) {
    const double scale = 1.0 / sqrt((double)hd);
    double *row = (double *)malloc((size_t)T * sizeof(double));
    for (long bh = 0; bh < (long)B * H; bh++) {
        const float *qb = q + bh * T * hd, *kb = k + bh * T * hd, *vb = v + bh * T * hd;
        for (int i = 0; i < T; i++) {
            double mx = -INFINITY, sum = 0;
            for (int j = 0; j <= i; j++) {
                double d = 0;
                for (int c = 0; c < hd; c++) d += (double)qb[(size_t)i * hd + c] * kb[(size_t)j * hd + c];
                row[j] = d * scale;
                if (row[j] > mx) mx = row[j];
            }
            for (int j = 0; j <= i; j++) sum += (row[j] = exp(row[j] - mx));
            double *p = probs + ((size_t)bh * T + i) * T, *yr = y + ((size_t)bh * T + i) * hd;
            for (int j = 0; j < T; j++) p[j] = j <= i ? row[j] / sum : 0.0;
            for (int c = 0; c < hd; c++) {
                double acc = 0;
                for (int j = 0; j <= i; j++) acc += p[j] * vb[(size_t)j * hd + c];
                yr[c] = acc;
            }
        }
    }
    free(row);
}

static double max_abs_diff(const float *a, const double *b, size_t n) {
    double m = 0;
    for (size_t i = 0; i < n; i++) {
        double d = fabs((double)a[i] - b[i]);
        if (!(d <= m)) m = d; /* NaN wins */
    }
    return m;
}

int main(int argc, char **argv) {
    int B = 8, H = 12, T = 128, hd = 64;
    const char *which = "all";
    if (argc >= 5) {
        B = atoi(argv[1]), H = atoi(argv[2]), T = atoi(argv[3]), hd = atoi(argv[4]);
        if (argc >= 6) which = argv[5];
    } else if (argc == 2) {
        which = argv[1];
    }
    if (B < 1 || H < 1 || T < 1 || hd < 1 || B > 64 || H > 64 || T > 2048 || hd > 256) {
        fprintf(stderr, "attention_check: B H T hd out of range (1..64, 1..64, 1..2048, 1..256)\n");
        return 2;
    }
    int ndev = 0;
    if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0) {
        printf("SKIP: no CUDA device\n");
        return 77;
    }
    const size_t n_qkv = (size_t)B * H * T * hd, n_p = (size_t)B * H * T * T;
    float *hq = (float *)malloc(n_qkv * 4), *hk = (float *)malloc(n_qkv * 4), *hv = (float *)malloc(n_qkv * 4);
    float *hp = (float *)malloc(n_p * 4), *hy = (float *)malloc(n_qkv * 4);
    double *rp = (double *)malloc(n_p * 8), *ry = (double *)malloc(n_qkv * 8);
    int *hlen = (int *)malloc((size_t)B * sizeof(int));
    if (!hq || !hk || !hv || !hp || !hy || !rp || !ry || !hlen) {
        fprintf(stderr, "attention_check: out of memory\n");
        return 1;
    }
    uint64_t s = 42;
    for (size_t i = 0; i < n_qkv; i++) hq[i] = 2.0f * uniform_pm1(&s), hk[i] = 2.0f * uniform_pm1(&s), hv[i] = uniform_pm1(&s);
    for (int b = 0; b < B; b++) hlen[b] = T;
    oracle(hq, hk, hv, B, H, T, hd, rp, ry);

    float *q, *k, *v, *y, *p;
    int *len;
    CHECK_CUDA(cudaMalloc(&q, n_qkv * 4));
    CHECK_CUDA(cudaMalloc(&k, n_qkv * 4));
    CHECK_CUDA(cudaMalloc(&v, n_qkv * 4));
    CHECK_CUDA(cudaMalloc(&y, n_qkv * 4));
    CHECK_CUDA(cudaMalloc(&p, n_p * 4));
    CHECK_CUDA(cudaMalloc(&len, (size_t)B * sizeof(int)));
    CHECK_CUDA(cudaMemcpy(q, hq, n_qkv * 4, cudaMemcpyHostToDevice));
    CHECK_CUDA(cudaMemcpy(k, hk, n_qkv * 4, cudaMemcpyHostToDevice));
    CHECK_CUDA(cudaMemcpy(v, hv, n_qkv * 4, cudaMemcpyHostToDevice));
    CHECK_CUDA(cudaMemcpy(len, hlen, (size_t)B * sizeof(int), cudaMemcpyHostToDevice));
    andrea_attn_args a;
    memset(&a, 0, sizeof a);
    a.q = q, a.k = k, a.v = v, a.y = y, a.probs = p, a.probs_fp16 = 0, a.probs_bstride = (long long)H * T * T;
    a.len = len, a.B = B, a.H = H, a.T = T, a.hd = hd, a.scale = 1.0f / sqrtf((float)hd);
    andrea_attn_contiguous(&a);
    fused_layout f = fused_layout_of(&a, hq, hk, hv);

    struct {
        const char *name;
        attn_fn fn;
        int supported;
        double tol;
    } versions[] = {{"v1", andrea_attention_v1, 1, 2e-6},
                    {"v2", andrea_attention_v2, andrea_attention_v2_supports(hd), 5e-3},
                    {"v3", andrea_attention_v3, andrea_attention_v3_supports(hd), 5e-3}};
    cudaEvent_t e0, e1;
    CHECK_CUDA(cudaEventCreate(&e0));
    CHECK_CUDA(cudaEventCreate(&e1));
    int failed = 0;
    printf("attention_check: B=%d H=%d T=%d hd=%d, maps %.1f MB fp32\n", B, H, T, hd, n_p * 4 / 1e6);
    for (int i = 0; i < 3; i++) {
        if (strcmp(which, "all") && strcmp(which, versions[i].name)) continue;
        if (!versions[i].supported) {
            printf("%s: does not run head_dim %d (fallback: v1)\n", versions[i].name, hd);
            continue;
        }
        CHECK_CUDA(cudaMemset(p, 0xff, n_p * 4)); /* NaN everywhere: a cell left unwritten shows */
        CHECK_CUDA(versions[i].fn(&a, 0));
        CHECK_CUDA(cudaDeviceSynchronize());
        CHECK_CUDA(cudaMemcpy(hp, p, n_p * 4, cudaMemcpyDeviceToHost));
        CHECK_CUDA(cudaMemcpy(hy, y, n_qkv * 4, cudaMemcpyDeviceToHost));
        double ep = max_abs_diff(hp, rp, n_p), ey = max_abs_diff(hy, ry, n_qkv);
        int ok = ep <= versions[i].tol && ey <= 10 * versions[i].tol;
        const int fused_same = fused_matches(&f, versions[i].fn, hp, hy, p, n_p);
        printf("%s: fused layout (q, k, v in [B, T, 3C], y in [B, T, C]): %s\n", versions[i].name,
               fused_same ? "the same bits as the contiguous one" : "DIFFERS from the contiguous one");
        ok &= fused_same;
        failed |= !ok;
        for (int w = 0; w < 5; w++) CHECK_CUDA(versions[i].fn(&a, 0));
        const int reps = 20;
        float ms = 0;
        CHECK_CUDA(cudaEventRecord(e0, 0));
        for (int r = 0; r < reps; r++) CHECK_CUDA(versions[i].fn(&a, 0));
        CHECK_CUDA(cudaEventRecord(e1, 0));
        CHECK_CUDA(cudaEventSynchronize(e1));
        CHECK_CUDA(cudaEventElapsedTime(&ms, e0, e1));
        printf("%s: max |probs - oracle| %.2e, max |y - oracle| %.2e (tolerance %.0e / %.0e): %s; %.1f us a call, "
               "%.0f GB/s of maps written\n",
               versions[i].name, ep, ey, versions[i].tol, 10 * versions[i].tol, ok ? "ok" : "FAIL",
               1e3 * ms / reps, n_p * 4 / (1e6 * ms / reps));
    }
    cudaFree(q), cudaFree(k), cudaFree(v), cudaFree(y), cudaFree(p), cudaFree(len), cudaFree(f.qkv), cudaFree(f.ycat);
    free(f.hyc);
    free(hq), free(hk), free(hv), free(hp), free(hy), free(rp), free(ry), free(hlen);
    return failed;
}
