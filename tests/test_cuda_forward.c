#define _POSIX_C_SOURCE 200809L
/* test_cuda_forward.c — the CUDA engine computes what the CPU engine computes.
 *
 * Each test opens the CPU engine (the oracle) and the CUDA engine on the same random model
 * (engine/model_random.h) or fixture checkpoint, runs one instrumented forward on both with every
 * output requested, and compares over the valid (non-padding) positions. Outputs are poisoned
 * with NaN first, so an element the GPU never wrote fails the comparison.
 * Tolerances, and why:
 *   - attention probabilities, max abs error: 2e-3 with TF32 on random models (Q, K, P, V and
 *     every projection rounded to a 10-bit mantissa; probabilities are in [0, 1] and errors stay
 *     ~2e-4), 1e-2 with TF32 on the trained fixtures (measured 3.3e-3 and 1.8e-3 on the H200:
 *     trained heads' large logits turn TF32's 2^-11 rounding anywhere upstream into probability
 *     errors of that size, kernels/NOTES.md); 1e-4 with tf32x3 (every layer matmul, Q·Kᵀ and P·V
 *     as three TF32 products: fp32-level), 1e-5 in fp32 (only the summation order differs);
 *   - logits, head_out, norms, DLA, relative L2 error ||gpu - cpu|| / ||cpu||: 2e-2 with TF32
 *     (TF32's 2^-11 relative rounding accumulated over the layers), 1e-4 in fp32.
 * With no usable GPU the test prints SKIP and exits 77.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../analyzer/ablation.h"
#include "../engine/forward.h"
#include "../engine/model.h"
#include "support/model_random.h"
#include "check.h"
#ifdef ANDREA_HAVE_CUDA
#include <cuda_runtime.h>

#include "../kernels/cuda_engine.h"
#endif

typedef struct {
    float *attn, *head_out, *norm, *dla, *logits;
} outs;

static size_t n_attn, n_hout, n_stat, n_logit;

static void alloc_outs(outs *o, const andrea_config *c, int B, int T) {
    n_attn = (size_t)B * c->n_layer * c->n_head * T * T;
    n_hout = (size_t)B * c->n_layer * c->n_head * T * c->d_model;
    n_stat = (size_t)B * c->n_layer * c->n_head * T;
    n_logit = (size_t)B * T * c->vocab_size;
    o->attn = malloc(n_attn * sizeof(float));
    o->head_out = malloc(n_hout * sizeof(float));
    o->norm = malloc(n_stat * sizeof(float));
    o->dla = malloc(n_stat * sizeof(float));
    o->logits = malloc(n_logit * sizeof(float));
    if (!o->attn || !o->head_out || !o->norm || !o->dla || !o->logits) {
        fprintf(stderr, "out of memory\n");
        exit(2);
    }
    /* poison: NaN everywhere, so unwritten elements fail */
    for (size_t i = 0; i < n_attn; i++) o->attn[i] = NAN;
    for (size_t i = 0; i < n_hout; i++) o->head_out[i] = NAN;
    for (size_t i = 0; i < n_stat; i++) o->norm[i] = o->dla[i] = NAN;
    for (size_t i = 0; i < n_logit; i++) o->logits[i] = NAN;
}

static void free_outs(outs *o) {
    free(o->attn);
    free(o->head_out);
    free(o->norm);
    free(o->dla);
    free(o->logits);
}

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint32_t next_u32(void) {
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (uint32_t)(rng >> 11);
}

static int run(andrea_engine *e, const andrea_config *c, int B, int T, const int *tok, const int *len,
               const unsigned char *ablate, outs *o) {
    andrea_forward_io io = {.B = B, .T = T, .tokens = tok, .lengths = len, .ablate = ablate, .attn = o->attn,
                            .head_out = o->head_out, .head_out_norm = o->norm, .head_dla = o->dla, .logits = o->logits};
    ae_error err = {{0}};
    if (andrea_engine_forward(e, &io, &err) != 0) {
        fprintf(stderr, "forward on %s failed: %s\n", andrea_engine_name(e), err.msg);
        return -1;
    }
    (void)c;
    return 0;
}

/* Accumulates |g - c| max and L2 norms over element [i]; NaN in g counts as an infinite error. */
typedef struct {
    double maxabs, d2, r2;
} errs;
static void acc(errs *e, float g, float c) {
    double d = isnan(g) || isnan(c) ? (isnan(g) && isnan(c) ? 0 : INFINITY) : fabs((double)g - c);
    if (d > e->maxabs) e->maxabs = d;
    if (!isnan(c)) e->r2 += (double)c * c;
    e->d2 += d * d;
}
static double rel(const errs *e) { return e->r2 > 0 ? sqrt(e->d2 / e->r2) : sqrt(e->d2); }

/* Runs both engines and checks every output over valid positions. mode: 0 TF32, 1 full fp32,
 * 2 tf32x3 (the layer matmuls, Q·Kᵀ and P·V as three TF32 products); fp32 has the tight tolerances. */
enum { TF32 = 0, FP32 = 1, TF32X3 = 2 };
static void compare_engines_tol(const andrea_model *m, int B, int T, const unsigned char *ablate, int mode,
                                const char *what, double tf32_attn_tol) {
    static const char *const names[] = {"tf32", "fp32", "tf32x3"};
    const int fp32 = mode == FP32;
    const andrea_config *c = &m->cfg;
    const int L = c->n_layer, H = c->n_head, C = c->d_model, V = c->vocab_size;
    ae_error err = {{0}};
    int *tok = malloc((size_t)B * T * sizeof(int)), *len = malloc((size_t)B * sizeof(int));
    for (int b = 0; b < B; b++) len[b] = b == 0 ? T : 1 + (int)(next_u32() % (unsigned)T);
    for (int i = 0; i < B * T; i++) tok[i] = (int)(next_u32() % (unsigned)V);
    if (B > 1) tok[(size_t)1 * T + T - 1] = -5; /* padding id out of range: must not be read */
    if (B > 1 && len[1] == T) len[1] = T - 1;
    setenv("ANDREA_CUDA_PRECISION", names[mode], 1);
    andrea_engine *cpu = andrea_cpu_engine_open(m, B, T, &err);
    andrea_engine *gpu = cpu ? andrea_cuda_engine_open(m, NULL, B, T, &err) : NULL;
    unsetenv("ANDREA_CUDA_PRECISION"); /* the other tests choose with ANDREA_CUDA_FP32 */
    CHECK_MSG(cpu && gpu, "%s: open failed: %s", what, err.msg);
    if (!cpu || !gpu) {
        andrea_engine_close(cpu);
        free(tok);
        free(len);
        return;
    }
    outs oc, og;
    alloc_outs(&oc, c, B, T);
    alloc_outs(&og, c, B, T);
    int rc = run(cpu, c, B, T, tok, len, ablate, &oc) || run(gpu, c, B, T, tok, len, ablate, &og);
    CHECK_MSG(rc == 0, "%s: forward failed", what);
    if (rc == 0) {
        errs ea = {0}, eh = {0}, en = {0}, ed = {0}, el = {0}, es = {0};
        for (int b = 0; b < B; b++)
            for (int lh = 0; lh < L * H; lh++)
                for (int t = 0; t < T; t++) {
                    size_t si = ((size_t)b * L * H + lh) * T + t;
                    if (t < len[b]) acc(&en, og.norm[si], oc.norm[si]);
                    acc(&ed, og.dla[si], oc.dla[si]); /* NaN exactly where the CPU has NaN */
                    for (int j = 0; j < T; j++) acc(&ea, og.attn[si * T + j], oc.attn[si * T + j]);
                    if (t < len[b])
                        for (int i = 0; i < C; i++) acc(&eh, og.head_out[si * C + i], oc.head_out[si * C + i]);
                }
        for (int b = 0; b < B; b++)
            for (int t = 0; t < len[b]; t++) {
                size_t r = (size_t)b * T + t;
                for (int v = 0; v < V; v++) acc(&el, og.logits[r * V + v], oc.logits[r * V + v]);
                /* sum over heads of head_out, layer by layer: the W_O identity through both engines */
                for (int l = 0; l < L; l++)
                    for (int i = 0; i < C; i++) {
                        double sg = 0, sc = 0;
                        for (int h = 0; h < H; h++) {
                            size_t k = ((((size_t)b * L + l) * H + h) * T + t) * C + i;
                            sg += og.head_out[k];
                            sc += oc.head_out[k];
                        }
                        acc(&es, (float)sg, (float)sc);
                    }
            }
        const double tol_attn = fp32 ? 1e-5 : mode == TF32X3 ? 1e-4 : tf32_attn_tol, tol_rel = fp32 ? 1e-4 : 2e-2;
        fprintf(stderr,
                "  %s [%s]: attn maxabs %.3g | rel L2: logits %.3g head_out %.3g sum_h %.3g norm %.3g dla %.3g\n",
                what, names[mode], ea.maxabs, rel(&el), rel(&eh), rel(&es), rel(&en), rel(&ed));
        CHECK_MSG(ea.maxabs <= tol_attn, "%s: attention max abs error %g > %g", what, ea.maxabs, tol_attn);
        CHECK_MSG(rel(&el) <= tol_rel, "%s: logits rel error %g", what, rel(&el));
        CHECK_MSG(rel(&eh) <= tol_rel, "%s: head_out rel error %g", what, rel(&eh));
        CHECK_MSG(rel(&es) <= tol_rel, "%s: sum over heads of head_out rel error %g", what, rel(&es));
        CHECK_MSG(rel(&en) <= tol_rel, "%s: head_out_norm rel error %g", what, rel(&en));
        CHECK_MSG(rel(&ed) <= tol_rel, "%s: head_dla rel error %g", what, rel(&ed));
    }
    free_outs(&oc);
    free_outs(&og);
    andrea_engine_close(cpu);
    andrea_engine_close(gpu);
    free(tok);
    free(len);
}

static void compare_engines(const andrea_model *m, int B, int T, const unsigned char *ablate, int mode,
                            const char *what) {
    compare_engines_tol(m, B, T, ablate, mode, what, 2e-3);
}

static int random_model(andrea_model *m, int L, int H, int C, int V, int maxT, uint64_t seed) {
    andrea_config cfg = {0};
    cfg.max_seq_len = maxT;
    cfg.vocab_size = V;
    cfg.n_layer = L;
    cfg.n_head = H;
    cfg.d_model = C;
    ae_error err = {{0}};
    if (andrea_model_init_random(m, &cfg, seed, &err) != 0) {
        fprintf(stderr, "random model: %s\n", err.msg);
        return -1;
    }
    return 0;
}

static void test_cuda_matches_cpu_at_andrea_12m_shape(void) {
    andrea_model m = {0};
    CHECK(random_model(&m, 6, 12, 384, 1000, 256, 12) == 0);
    compare_engines(&m, 3, 96, NULL, 0, "ANDREA-12M");
    compare_engines(&m, 3, 96, NULL, 1, "ANDREA-12M");
    compare_engines(&m, 3, 96, NULL, TF32X3, "ANDREA-12M");
    setenv("ANDREA_CUDA_ATTN", "v2", 1); /* the kept earlier tensor-core version stays correct */
    compare_engines(&m, 3, 96, NULL, 0, "ANDREA-12M attention v2");
    unsetenv("ANDREA_CUDA_ATTN");
    andrea_model_free(&m);
}

static void test_cuda_matches_cpu_at_andrea_120m_shape(void) {
    andrea_model m = {0};
    CHECK(random_model(&m, 12, 12, 768, 2000, 256, 120) == 0);
    compare_engines(&m, 2, 128, NULL, 0, "ANDREA-120M");
    compare_engines(&m, 2, 128, NULL, 1, "ANDREA-120M");
    compare_engines(&m, 2, 128, NULL, TF32X3, "ANDREA-120M");
    setenv("ANDREA_CUDA_SPLIT_QLO", "regs", 1); /* the other layout of Q's low parts, kept for benchmarks */
    compare_engines(&m, 2, 128, NULL, TF32X3, "ANDREA-120M Q low parts in registers");
    unsetenv("ANDREA_CUDA_SPLIT_QLO");
    andrea_model_free(&m);
}

/* head_dim 72 is no multiple of 16: the fallback kernel serves it in both modes; T = 100 is no
 * multiple of any tile. */
static void test_cuda_matches_cpu_with_head_dim_72(void) {
    andrea_model m = {0};
    CHECK(random_model(&m, 2, 4, 288, 500, 128, 72) == 0);
    compare_engines(&m, 2, 100, NULL, 0, "head_dim 72");
    compare_engines(&m, 2, 100, NULL, 1, "head_dim 72");
    compare_engines(&m, 2, 100, NULL, TF32X3, "head_dim 72"); /* split matmuls beside the exact kernel */
    andrea_model_free(&m);
}

/* Finite activations whose squares overflow float32 (a hostile checkpoint: one MLP bias of 1e20
 * puts ~1e20 into the residual stream; one W_O weight of 1e22 makes a head's contribution ~1e21,
 * whose square overflows).
 * The CPU engine sums LayerNorm statistics and head norms in double and gets the right, finite
 * answer; the GPU once summed them in float: Inf variance, 1/sigma 0, every later LayerNorm its
 * bias (wrong head_out, DLA 0), and an Inf norm that made the dump refuse a model the CPU
 * computes. fp32 matmuls: the usual fp32 tolerances hold. */
static void test_cuda_matches_cpu_with_activations_past_float_squares(void) {
    andrea_model m = {0};
    CHECK(random_model(&m, 2, 4, 64, 300, 64, 31) == 0);
    m.p.fcprojb[0] = 1e20f; /* layer 0, output 0 */
    compare_engines(&m, 2, 40, NULL, FP32, "MLP bias 1e20");
    andrea_model_free(&m);
    CHECK(random_model(&m, 2, 4, 64, 300, 64, 32) == 0);
    m.p.attprojw[(size_t)64 * 64 + 5] = 1e22f; /* layer 1, output 0, input 5 (head 0) */
    compare_engines(&m, 2, 40, NULL, FP32, "W_O weight 1e22");
    andrea_model_free(&m);
}

static void test_cuda_matches_cpu_with_heads_ablated(void) {
    andrea_model m = {0};
    CHECK(random_model(&m, 3, 4, 128, 300, 128, 7) == 0);
    unsigned char ablate[12] = {0};
    ablate[1] = ablate[6] = ablate[11] = 1;
    compare_engines(&m, 2, 70, ablate, 0, "ablated heads");
    compare_engines(&m, 2, 70, ablate, 1, "ablated heads");
    andrea_model_free(&m);
}

static void test_cuda_matches_cpu_on_fixture_checkpoints(void) {
    const char *names[] = {"andrea-tiny.bin", "andrea-bundled.bin"};
    for (int i = 0; i < 2; i++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/models/%s", ANDREA_SOURCE_DIR, names[i]);
        if (access(path, R_OK) != 0) {
            fprintf(stderr, "  (fixture %s not present: not compared)\n", path);
            continue;
        }
        andrea_model m = {0};
        ae_error err = {{0}};
        CHECK_MSG(andrea_model_load(&m, path, &err) == 0, "%s", err.msg);
        if (!m.memory) continue;
        int T = m.cfg.max_seq_len < 64 ? m.cfg.max_seq_len : 64;
        compare_engines_tol(&m, 2, T, NULL, TF32, names[i], 1e-2);
        compare_engines(&m, 2, T, NULL, FP32, names[i]);
        compare_engines(&m, 2, T, NULL, TF32X3, names[i]);
        andrea_model_free(&m);
    }
}

static void test_cuda_refuses_token_outside_vocabulary(void) {
    andrea_model m = {0};
    CHECK(random_model(&m, 1, 2, 32, 50, 16, 3) == 0);
    ae_error err = {{0}};
    andrea_engine *g = andrea_cuda_engine_open(&m, NULL, 1, 8, &err);
    CHECK(g != NULL);
    if (!g) return;
    int tok[8] = {1, 2, 3, 50, 4, 5, 6, 7};
    andrea_forward_io io = {.B = 1, .T = 8, .tokens = tok};
    CHECK(andrea_engine_forward(g, &io, &err) == -1);
    CHECK_MSG(strstr(err.msg, "token id 50") != NULL, "message: %s", err.msg);
    andrea_engine_close(g);
    andrea_model_free(&m);
}

static void test_cuda_refuses_batch_larger_than_opened(void) {
    andrea_model m = {0};
    CHECK(random_model(&m, 1, 2, 32, 50, 16, 4) == 0);
    ae_error err = {{0}};
    andrea_engine *g = andrea_cuda_engine_open(&m, NULL, 1, 8, &err);
    CHECK(g != NULL);
    if (!g) return;
    int tok[16] = {0};
    andrea_forward_io io = {.B = 2, .T = 8, .tokens = tok};
    CHECK(andrea_engine_forward(g, &io, &err) == -1);
    CHECK_MSG(strstr(err.msg, "B=2") != NULL, "message: %s", err.msg);
    andrea_engine_close(g);
    andrea_model_free(&m);
}

#ifdef ANDREA_HAVE_CUDA
/* fp16 maps written on the device equal the fp32 host maps rounded to fp16 (half an fp16 ulp of
 * a value <= 1 is <= 2^-12 ~ 2.4e-4). */
static void test_cuda_device_fp16_maps_equal_host_maps_rounded(void) {
    andrea_model m = {0};
    CHECK(random_model(&m, 2, 4, 128, 200, 128, 16) == 0);
    const int B = 2, T = 80, L = 2, H = 4;
    const size_t n = (size_t)B * L * H * T * T;
    ae_error err = {{0}};
    setenv("ANDREA_CUDA_FP32", "0", 1);
    andrea_engine *g = andrea_cuda_engine_open(&m, NULL, B, T, &err);
    CHECK_MSG(g != NULL, "%s", err.msg);
    if (!g) return;
    int tok[2 * 80];
    for (int i = 0; i < B * T; i++) tok[i] = (int)(next_u32() % 200u);
    float *host = malloc(n * sizeof(float)), *back = malloc(n * sizeof(float));
    uint16_t *h16 = malloc(n * sizeof(uint16_t));
    void *d16 = NULL;
    andrea_forward_io io = {.B = B, .T = T, .tokens = tok, .attn = host};
    CHECK(andrea_engine_forward(g, &io, &err) == 0);
    CHECK(cudaMalloc(&d16, n * 2) == cudaSuccess);
    andrea_forward_io io2 = {.B = B, .T = T, .tokens = tok};
    andrea_cuda_device_outputs out = {d16, 1, NULL, NULL, NULL};
    CHECK_MSG(andrea_cuda_forward_device(g, &io2, &out, &err) == 0, "%s", err.msg);
    CHECK(andrea_cuda_synchronize(g, &err) == 0);
    CHECK(cudaMemcpy(h16, d16, n * 2, cudaMemcpyDeviceToHost) == cudaSuccess);
    double worst = 0;
    for (size_t i = 0; i < n; i++) { /* fp16 -> fp32 by hand: no CUDA headers' half in C */
        uint16_t hv = h16[i];
        int ex = (hv >> 10) & 31, mant = hv & 1023;
        float f = ex == 0 ? ldexpf((float)mant, -24) : ldexpf((float)(mant | 1024), ex - 25);
        if (hv & 0x8000) f = -f;
        back[i] = f;
        double d = fabs((double)f - host[i]);
        if (d > worst) worst = d;
    }
    CHECK_MSG(worst <= 2.5e-4, "fp16 map differs from fp32 map by %g", worst);
    cudaFree(d16);
    free(host);
    free(back);
    free(h16);
    andrea_engine_close(g);
    andrea_model_free(&m);
}

/* Three batches through the streaming pipeline (the last one smaller) hand back, in order, the
 * same maps, norms and DLA as the plain forward (bit-identical: same kernels, same inputs). */
static void test_cuda_pipeline_hands_back_what_forward_computes(void) {
    andrea_model m = {0};
    CHECK(random_model(&m, 2, 4, 128, 200, 64, 17) == 0);
    const int B = 3, T = 40, LH = 8;
    ae_error err = {{0}};
    setenv("ANDREA_CUDA_FP32", "0", 1);
    andrea_engine_options o;
    andrea_engine_options_init(&o);
    o.pipeline_piece_maps = 3; /* 8 pieces a batch: the ring of 4 wraps twice */
    andrea_engine *g = andrea_cuda_engine_open(&m, &o, B, T, &err);
    andrea_cuda_pipeline *p = g ? andrea_cuda_pipeline_open(g, B, T, 0, 1, 1, 1, &err) : NULL;
    CHECK_MSG(g && p, "%s", err.msg);
    if (!p) {
        andrea_engine_close(g);
        andrea_model_free(&m);
        return;
    }
    int tok[3][3 * 40];
    const int bsz[3] = {3, 3, 2};
    for (int k = 0; k < 3; k++)
        for (int i = 0; i < B * T; i++) tok[k][i] = (int)(next_u32() % 200u);
    const size_t nmap = (size_t)B * LH * T * T, nst = (size_t)B * LH * T;
    float *want = malloc(3 * nmap * sizeof(float)), *wn = malloc(3 * nst * sizeof(float)),
          *wd = malloc(3 * nst * sizeof(float));
    for (int k = 0; k < 3; k++) {
        andrea_forward_io io = {.B = bsz[k], .T = T, .tokens = tok[k], .attn = want + k * nmap,
                                .head_out_norm = wn + k * nst, .head_dla = wd + k * nst};
        CHECK(andrea_engine_forward(g, &io, &err) == 0);
    }
    int got = 0, same = 1;
    for (int k = 0; k <= 3; k++) {
        andrea_cuda_ready r;
        if (k < 3) {
            andrea_forward_io io = {.B = bsz[k], .T = T, .tokens = tok[k]};
            CHECK(andrea_cuda_pipeline_submit(p, &io, k, &r, &err) == 0);
        } else {
            CHECK(andrea_cuda_pipeline_flush(p, &r, &err) == 0);
        }
        if (!r.valid) continue;
        const int kk = (int)r.tag, b = r.B;
        CHECK(kk == got);
        got++;
        CHECK(r.attn == NULL); /* maps come piece by piece through the pinned ring */
        const size_t nmaps = (size_t)b * LH, tt = (size_t)T * T;
        for (size_t first = 0; first < nmaps;) {
            const void *piece = NULL;
            size_t n = 0;
            if (andrea_cuda_pipeline_maps(p, first, &piece, &n, &err) != 0 || n == 0 || first + n > nmaps) {
                CHECK_MSG(0, "pipeline_maps at %zu: %s", first, err.msg);
                same = 0;
                break;
            }
            same &= memcmp(piece, want + kk * nmap + first * tt, n * tt * sizeof(float)) == 0;
            first += n;
        }
        same &= memcmp(r.head_out_norm, wn + kk * nst, (size_t)b * LH * T * sizeof(float)) == 0;
        for (size_t i = 0; i < (size_t)b * LH * T; i++) /* NaN != NaN under ==: compare bits via isnan */
            same &= (isnan(r.head_dla[i]) && isnan(wd[kk * nst + i])) || r.head_dla[i] == wd[kk * nst + i];
    }
    CHECK(got == 3);
    CHECK(same);
    free(want);
    free(wn);
    free(wd);
    andrea_cuda_pipeline_close(p);
    andrea_engine_close(g);
    andrea_model_free(&m);
}
#endif

/* The causal check's losses on the device (token_loss) equal cross-entropies of the CPU engine's
 * logits. fp32 matmuls on the GPU so only summation order differs: 1e-4 absolute on losses of ~8
 * nats bounds fp32 logits agreeing to ~1e-5. Positions without a target come back NaN. */
static void test_cuda_token_loss_equals_cpu_cross_entropy(void) {
    andrea_model m = {0};
    CHECK(random_model(&m, 2, 4, 64, 5000, 64, 21) == 0);
    const int B = 3, T = 32, V = 5000;
    ae_error err = {{0}};
    andrea_engine_options eo;
    andrea_engine_options_init(&eo);
    snprintf(eo.precision, sizeof eo.precision, "fp32");
    andrea_engine *g = andrea_cuda_engine_open(&m, &eo, B, T, &err), *c = andrea_cpu_engine_open(&m, B, T, &err);
    CHECK(g && c && andrea_engine_can_token_loss(g));
    int tok[3 * 32], tgt[3 * 32];
    for (int i = 0; i < B * T; i++) tok[i] = (int)(next_u32() % (uint32_t)V);
    for (int i = 0; i < B * T; i++) tgt[i] = i % 5 == 3 ? -1 : tok[(i + 1) % (B * T)];
    float *logits = malloc(sizeof(float) * (size_t)B * T * V), loss[3 * 32];
    andrea_forward_io ci = {.B = B, .T = T, .tokens = tok, .logits = logits};
    andrea_forward_io gi = {.B = B, .T = T, .tokens = tok, .loss_targets = tgt, .token_loss = loss};
    CHECK(logits && g && c && andrea_engine_forward(c, &ci, &err) == 0 && andrea_engine_forward(g, &gi, &err) == 0);
    double worst = 0;
    int nan_ok = 1;
    for (int r = 0; r < B * T && logits; r++) {
        if (tgt[r] < 0) {
            nan_ok &= isnan(loss[r]);
            continue;
        }
        const float *row = logits + (size_t)r * V;
        double mx = row[0], z = 0;
        for (int v = 1; v < V; v++) mx = row[v] > mx ? row[v] : mx;
        for (int v = 0; v < V; v++) z += exp((double)row[v] - mx);
        double want = -((double)row[tgt[r]] - mx - log(z)), d = fabs(want - (double)loss[r]);
        if (!(d <= worst)) worst = d;
    }
    CHECK_MSG(worst < 1e-4, "token loss differs from the CPU cross-entropy by %.3g", worst);
    CHECK(nan_ok);
    andrea_forward_io both = {.B = B, .T = T, .tokens = tok, .token_loss = loss}; /* one without the other */
    CHECK(andrea_engine_forward(g, &both, &err) == -1);
    tgt[7] = V; /* a target outside the vocabulary: refused, not read past the logits row */
    CHECK(andrea_engine_forward(g, &gi, &err) == -1 && strstr(err.msg, "loss target") != NULL);
    tgt[7] = tok[8];
    /* the CPU engine computes token losses too (at the loss positions only): the same numbers */
    float cpu_loss[3 * 32];
    andrea_forward_io ci2 = {.B = B, .T = T, .tokens = tok, .loss_targets = tgt, .token_loss = cpu_loss};
    CHECK(andrea_engine_can_token_loss(c) && andrea_engine_forward(c, &ci2, &err) == 0);
    double worst_cpu = 0;
    for (int r = 0; r < B * T; r++) {
        if (tgt[r] < 0) continue;
        const double d = fabs((double)cpu_loss[r] - (double)loss[r]);
        if (!(d <= worst_cpu)) worst_cpu = d;
    }
    CHECK_MSG(worst_cpu < 1e-4, "CPU and GPU token losses differ by %.3g", worst_cpu);
    free(logits);
    andrea_engine_close(g);
    andrea_engine_close(c);
    andrea_model_free(&m);
}

/* Heads ablated per sequence (ablate_per_seq, the batched causal check): copy j of the items with
 * head j ablated gives the token losses of the CPU engine's forward of the items with that one
 * head ablated (fp32: 1e-4 absolute, as above); copy 0 ablates nothing. The engine runs it after
 * growing its batch (andrea_engine_reserve_batch). */
static void test_cuda_ablate_per_seq_equals_one_head_per_forward(void) {
    andrea_model m = {0};
    CHECK(random_model(&m, 3, 4, 64, 500, 64, 23) == 0);
    enum { B = 2, T = 24, K = 5, NH = 12 };
    ae_error err = {{0}};
    andrea_engine_options eo;
    andrea_engine_options_init(&eo);
    snprintf(eo.precision, sizeof eo.precision, "fp32");
    /* opened for B sequences and grown to K * B (the batched causal check's reserve) */
    andrea_engine *g = andrea_cuda_engine_open(&m, &eo, B, T, &err), *c = andrea_cpu_engine_open(&m, B, T, &err);
    CHECK(g && c && andrea_engine_can_ablate_per_seq(g) && andrea_engine_can_ablate_per_seq(c));
    CHECK(g && andrea_engine_max_batch(g) == B && andrea_engine_reserve_batch(g, B * K, &err) == 0);
    CHECK(g && andrea_engine_max_batch(g) == B * K && andrea_engine_reserve_batch(g, B, &err) == 0);
    static int tok[K * B * T], tgt[K * B * T], len[K * B];
    static unsigned char mask[K * B * NH];
    static float loss[K * B * T], one[B * T];
    for (int i = 0; i < B * T; i++) tok[i] = (int)(next_u32() % 500u);
    for (int i = 0; i < B * T; i++) tgt[i] = i % T + 1 < T && i % 3 ? tok[i + 1] : -1;
    const int heads[K] = {-1, 0, 5, 7, 11}; /* -1: none */
    for (int j = 0; j < K; j++) {
        memcpy(tok + j * B * T, tok, sizeof(int) * B * T);
        memcpy(tgt + j * B * T, tgt, sizeof(int) * B * T);
        for (int b = 0; b < B; b++) {
            len[j * B + b] = T - 3 * b;
            if (heads[j] >= 0) mask[(j * B + b) * NH + heads[j]] = 1;
        }
    }
    for (int b = 0; b < B; b++)
        for (int t = len[b] - 1; t < T; t++) tgt[b * T + t] = -1; /* past a length: no target */
    for (int j = 1; j < K; j++) memcpy(tgt + j * B * T, tgt, sizeof(int) * B * T);
    andrea_forward_io gi = {.B = B * K, .T = T, .tokens = tok, .lengths = len, .ablate = mask, .ablate_per_seq = 1,
                            .loss_targets = tgt, .token_loss = loss};
    CHECK_MSG(g && andrea_engine_forward(g, &gi, &err) == 0, "%s", err.msg);
    double worst = 0;
    for (int j = 0; j < K && c; j++) {
        unsigned char single[NH] = {0};
        if (heads[j] >= 0) single[heads[j]] = 1;
        andrea_forward_io ci = {.B = B, .T = T, .tokens = tok, .lengths = len, .ablate = single, .loss_targets = tgt,
                                .token_loss = one};
        CHECK_MSG(andrea_engine_forward(c, &ci, &err) == 0, "%s", err.msg);
        for (int r = 0; r < B * T; r++) {
            if (tgt[r] < 0) continue;
            const double d = fabs((double)one[r] - (double)loss[j * B * T + r]);
            if (!(d <= worst)) worst = d;
        }
    }
    CHECK_MSG(worst < 1e-4, "per-sequence ablation differs from one head per forward by %.3g", worst);
    /* and the ablations did something: head 5's copy differs from the clean copy */
    double moved = 0;
    for (int r = 0; r < B * T; r++)
        if (tgt[r] >= 0) moved += fabs((double)loss[2 * B * T + r] - (double)loss[r]);
    CHECK_MSG(moved > 1e-4, "ablating head 5 changed no loss (%.3g)", moved);
    /* the CPU engine's own batched run of the K copies gives the same losses */
    static float cpu_loss[K * B * T];
    andrea_forward_io cpu_per_seq = gi;
    cpu_per_seq.token_loss = cpu_loss;
    CHECK_MSG(c && andrea_engine_reserve_batch(c, B * K, &err) == 0 && andrea_engine_forward(c, &cpu_per_seq, &err) == 0,
              "%s", err.msg);
    double cpu_worst = 0;
    for (int r = 0; r < K * B * T; r++)
        if (isnan(loss[r]) != isnan(cpu_loss[r]) || fabs((double)loss[r] - cpu_loss[r]) > cpu_worst)
            cpu_worst = isnan(loss[r]) != isnan(cpu_loss[r]) ? 1e9 : fabs((double)loss[r] - cpu_loss[r]);
    CHECK_MSG(cpu_worst < 1e-4, "the CPU's per-sequence ablation differs from the GPU's by %.3g", cpu_worst);
    andrea_engine_close(g);
    andrea_engine_close(c);
    andrea_model_free(&m);
}

/* A forward resumed at layer l from the saved input of that layer (layer_inputs, resume_x: the
 * batched causal check's start) gives the token losses of the whole forward with the same
 * ablation, in fp32 (1e-6 absolute: the same kernels on the same inputs). The saved layer inputs
 * are the CPU engine's (relative L2 1e-4). Refused: a resumed forward asking for maps, a resume
 * layer outside the model, resume_heads (the CPU engine's only). */
static void test_cuda_resumed_forward_equals_the_whole_forward(void) {
    andrea_model m = {0};
    enum { L = 4, H = 4, C = 64, B = 3, T = 20, V = 400 };
    CHECK(random_model(&m, L, H, C, V, 64, 31) == 0);
    ae_error err = {{0}};
    andrea_engine_options eo;
    andrea_engine_options_init(&eo);
    snprintf(eo.precision, sizeof eo.precision, "fp32");
    andrea_engine *g = andrea_cuda_engine_open(&m, &eo, B, T, &err), *c = andrea_cpu_engine_open(&m, B, T, &err);
    CHECK(g && c && andrea_engine_can_resume(g) && !andrea_engine_can_resume_heads(g));
    static int tok[B * T], tgt[B * T];
    static float gin[L * B * T * C], cin[L * B * T * C], whole[B * T], resumed[B * T], clean[B * T];
    for (int i = 0; i < B * T; i++) tok[i] = (int)(next_u32() % (uint32_t)V);
    for (int i = 0; i < B * T; i++) tgt[i] = i % T + 1 < T ? tok[i + 1] : -1;
    andrea_forward_io gi = {.B = B, .T = T, .tokens = tok, .layer_inputs = gin, .loss_targets = tgt, .token_loss = clean};
    andrea_forward_io ci = {.B = B, .T = T, .tokens = tok, .layer_inputs = cin};
    CHECK_MSG(g && andrea_engine_forward(g, &gi, &err) == 0, "%s", err.msg);
    CHECK_MSG(c && andrea_engine_forward(c, &ci, &err) == 0, "%s", err.msg);
    double num = 0, den = 0;
    for (size_t i = 0; i < (size_t)L * B * T * C; i++) {
        num += ((double)gin[i] - cin[i]) * ((double)gin[i] - cin[i]);
        den += (double)cin[i] * cin[i];
    }
    CHECK_MSG(den > 0 && sqrt(num / den) < 1e-4, "saved layer inputs differ from the CPU's: %.3g", sqrt(num / den));
    for (int l = 1; l < L; l++) {
        unsigned char abl[L * H] = {0};
        abl[l * H + 1] = 1; /* a head of the resume layer */
        andrea_forward_io w = {.B = B, .T = T, .tokens = tok, .ablate = abl, .loss_targets = tgt, .token_loss = whole};
        andrea_forward_io r = w;
        r.token_loss = resumed;
        r.resume_layer = l;
        r.resume_x = gin + (size_t)l * B * T * C;
        CHECK_MSG(g && andrea_engine_forward(g, &w, &err) == 0 && andrea_engine_forward(g, &r, &err) == 0, "%s", err.msg);
        double worst = 0, moved = 0;
        for (int i = 0; i < B * T; i++) {
            if (tgt[i] < 0) continue;
            const double d = fabs((double)whole[i] - resumed[i]);
            if (!(d <= worst)) worst = d;
            moved += fabs((double)whole[i] - clean[i]);
        }
        CHECK_MSG(worst < 1e-6, "resumed at layer %d: losses differ from the whole forward by %.3g", l, worst);
        CHECK_MSG(moved > 1e-5, "layer %d: the ablation changed no loss", l);
    }
    static float maps[B * L * H * T * T];
    andrea_forward_io bad = {.B = B, .T = T, .tokens = tok, .resume_layer = 2, .resume_x = gin, .attn = maps};
    CHECK(g && andrea_engine_forward(g, &bad, &err) == -1 && strstr(err.msg, "logits only"));
    andrea_forward_io past = {.B = B, .T = T, .tokens = tok, .resume_layer = L, .resume_x = gin};
    CHECK(g && andrea_engine_forward(g, &past, &err) == -1 && strstr(err.msg, "outside"));
    andrea_forward_io heads = {.B = B, .T = T, .tokens = tok, .resume_layer = 1, .resume_x = gin, .resume_heads = gin};
    CHECK(g && andrea_engine_forward(g, &heads, &err) == -1 && strstr(err.msg, "attention"));
    andrea_engine_close(g);
    andrea_engine_close(c);
    andrea_model_free(&m);
}

/* A batch resumed from kept layers (keep_layers, resume_kept: the causal check's forwards on a
 * GPU) gives the token losses of whole forwards with the same ablations, in fp32, within the
 * rounding of the forward's chain (check.h; the layers of a resumed forward run on fewer rows,
 * which may pick other matmul kernels): copy j of the B0 kept items ablates a head of layer j and starts
 * there, all copies in one forward; with replacement values too, and again with the values
 * marked unchanged (not copied again). Refused: resume layers not ascending, keep_layers in an
 * ablated forward, maps from a resumed one, another T, the CPU engine. */
static void test_cuda_forward_from_kept_layers_equals_the_whole_forward(void) {
    andrea_model m = {0};
    enum { L = 4, H = 4, C = 64, B0 = 3, K = L, B = K * B0, T = 20, V = 400 };
    CHECK(random_model(&m, L, H, C, V, 64, 37) == 0);
    ae_error err = {{0}};
    andrea_engine_options eo;
    andrea_engine_options_init(&eo);
    snprintf(eo.precision, sizeof eo.precision, "fp32");
    andrea_engine *g = andrea_cuda_engine_open(&m, &eo, B, T, &err), *c = andrea_cpu_engine_open(&m, B, T, &err);
    CHECK_MSG(g && c && andrea_engine_can_keep_layers(g) && !andrea_engine_can_keep_layers(c), "%s", err.msg);
    static int tok[B * T], tgt[B * T], resume[B];
    static unsigned char abl[B * L * H];
    static float values[L * B0 * T * C], clean[B0 * T], whole[B * T], kept[B * T];
    for (int i = 0; i < B0 * T; i++) tok[i] = (int)(next_u32() % (uint32_t)V);
    for (int j = 1; j < K; j++) memcpy(tok + (size_t)j * B0 * T, tok, sizeof(int) * B0 * T);
    for (int i = 0; i < B * T; i++) tgt[i] = i % T + 1 < T ? tok[i + 1] : -1;
    for (int i = 0; i < L * B0 * T * C; i++) values[i] = (float)((int)(next_u32() % 2001) - 1000) / 1000.0f;
    for (int j = 0; j < K; j++)
        for (int b = 0; b < B0; b++) {
            resume[j * B0 + b] = j;
            abl[(size_t)(j * B0 + b) * L * H + (size_t)j * H + (size_t)(j % H)] = 1;
        }
    static float logits[B0 * T * V];
    andrea_forward_io lg = {.B = B0, .T = T, .tokens = tok, .logits = logits};
    CHECK_MSG(g && andrea_engine_forward(g, &lg, &err) == 0, "%s", err.msg);
    double zmax = 0;
    for (int i = 0; i < B0 * T * V; i++) zmax = fmax(zmax, fabs(logits[i]));
    /* a loss is a logsumexp of logits minus one: twice a logit's rounding, for the chain's length */
    const double tol = 4 * CHECK_FP32_TOL((double)L * (7.0 * C + C / H + T) + C, zmax);
    andrea_forward_io keep = {.B = B0, .T = T, .tokens = tok, .loss_targets = tgt, .token_loss = clean, .keep_layers = 1};
    CHECK_MSG(g && andrea_engine_forward(g, &keep, &err) == 0, "%s", err.msg);
    for (int with_values = 0; with_values < 3; with_values++) {
        andrea_forward_io w = {.B = B, .T = T, .tokens = tok, .ablate = abl, .ablate_per_seq = 1, .loss_targets = tgt,
                               .token_loss = whole, .ablate_values = with_values ? values : NULL,
                               .ablate_values_B = with_values ? B0 : 0};
        andrea_forward_io r = w;
        r.token_loss = kept;
        r.resume_kept = resume;
        r.ablate_values_unchanged = with_values == 2;
        CHECK_MSG(g && andrea_engine_forward(g, &w, &err) == 0, "%s", err.msg);
        /* the whole forward uploaded the same values: "unchanged" holds for the resumed one */
        CHECK_MSG(g && andrea_engine_forward(g, &r, &err) == 0, "%s", err.msg);
        double worst = 0, moved = 0;
        for (int i = 0; i < B * T; i++) {
            if (tgt[i] < 0) continue;
            const double d = fabs((double)whole[i] - kept[i]);
            if (!(d <= worst)) worst = d;
            moved += fabs((double)whole[i] - clean[i % (B0 * T)]);
        }
        CHECK_MSG(worst <= tol, "values %d: losses from kept layers differ from the whole forwards by %.3g (bound %.3g)",
                  with_values, worst, tol);
        CHECK_MSG(moved > 1e-5, "values %d: the ablations changed no loss", with_values);
    }
    static float maps[B * L * H * T * T];
    int down[B];
    memcpy(down, resume, sizeof down);
    down[B - 1] = 0;
    andrea_forward_io bad = {.B = B, .T = T, .tokens = tok, .ablate = abl, .ablate_per_seq = 1, .resume_kept = down};
    CHECK(g && andrea_engine_forward(g, &bad, &err) == -1 && strstr(err.msg, "ascending"));
    bad.resume_kept = resume;
    bad.attn = maps;
    CHECK(g && andrea_engine_forward(g, &bad, &err) == -1 && strstr(err.msg, "kept layers"));
    bad.attn = NULL;
    bad.T = T - 1;
    CHECK(g && andrea_engine_forward(g, &bad, &err) == -1 && strstr(err.msg, "another T"));
    andrea_forward_io abl_keep = {.B = B, .T = T, .tokens = tok, .ablate = abl, .ablate_per_seq = 1, .keep_layers = 1};
    CHECK(g && andrea_engine_forward(g, &abl_keep, &err) == -1 && strstr(err.msg, "keep_layers"));
    andrea_forward_io cpu_keep = {.B = B0, .T = T, .tokens = tok, .keep_layers = 1};
    CHECK(c && andrea_engine_forward(c, &cpu_keep, &err) == -1 && strstr(err.msg, "cannot keep"));
    andrea_engine_close(g);
    andrea_engine_close(c);
    andrea_model_free(&m);
}

/* The causal check on the GPU (heads ablated per copy, 64 a forward, a forward resumed at the
 * layer of its first head) gives the CPU's deltas (one forward per head, resumed at its layer):
 * of 80 heads 64 spread for the mean (more than ANDREA_ABLATE_MEAN_HEADS: heads floor(k 80 / 64))
 * and 31 labelled ones, 6 of them outside the spread, 70 in all, so the second forward resumes at
 * a late layer; fp32, 1e-4 absolute on losses of ~6. */
static void test_cuda_causal_check_equals_the_cpu_one(void) {
    andrea_model m = {0};
    enum { L = 20, H = 4, NH = L * H, V = 300, ITEMS = 4 };
    CHECK(random_model(&m, L, H, 256, V, 256, 41) == 0);
    ae_error err = {{0}};
    andrea_engine_options eo;
    andrea_engine_options_init(&eo);
    snprintf(eo.precision, sizeof eo.precision, "fp32");
    andrea_engine *g = andrea_cuda_engine_open(&m, &eo, ITEMS, 256, &err), *c = andrea_cpu_engine_open(&m, ITEMS, 256, &err);
    CHECK(g && c);
    static int toks[ITEMS][256];
    static probe_target tg[ITEMS][6];
    probe_item items[ITEMS];
    probe_suite suite = {.name = "mine", .items = items, .n_items = ITEMS, .max_len = 256};
    for (int i = 0; i < ITEMS; i++) {
        for (int t = 0; t < 256; t++) toks[i][t] = (int)(next_u32() % (uint32_t)V);
        for (int j = 0; j < 6; j++) tg[i][j] = (probe_target){10 + 46 * j - i % 2, 2 + j};
        items[i] = (probe_item){.tokens = toks[i], .n_tokens = 256 - 3 * i, .targets = tg[i], .n_targets = 6};
    }
    static andrea_head_score gh[NH], ch[NH];
    for (int i = 7; i < NH; i += i < 21 ? 14 : 2) gh[i].label = ch[i].label = 1; /* 7, 21, 23, ..., 79 */
    andrea_suite_scores gs = {.name = "mine", .heads = gh}, cs = {.name = "mine", .heads = ch};
    CHECK_MSG(g && andrea_ablation_suite(g, &m.cfg, &suite, ITEMS, &gs, &err) == 0, "%s", err.msg);
    CHECK_MSG(c && andrea_ablation_suite(c, &m.cfg, &suite, ITEMS, &cs, &err) == 0, "%s", err.msg);
    double worst = fabs(gs.clean_loss - cs.clean_loss);
    int measured = 0, same_nan = 1;
    for (int i = 0; i < NH; i++) {
        same_nan &= isnan(gh[i].ablation_delta) == isnan(ch[i].ablation_delta);
        if (isnan(ch[i].ablation_delta)) continue;
        measured++;
        const double d = fabs(gh[i].ablation_delta - ch[i].ablation_delta);
        if (!(d <= worst)) worst = d;
    }
    CHECK_MSG(same_nan && measured == 70, "%d heads measured (want 64 spread + 6 more labelled), NaN alike %d", measured,
              same_nan);
    CHECK_MSG(worst < 1e-4, "GPU and CPU causal checks differ by %.3g", worst);
    CHECK(fabs(gs.ablation_mean - cs.ablation_mean) < 1e-4 && gs.n_ablation_items == ITEMS);
    andrea_engine_close(g);
    andrea_engine_close(c);
    andrea_model_free(&m);
}

/* Two suites with the same items but other loss positions share the GPU's batched forwards
 * (andrea_ablation_suites): each gets the deltas of checking it alone on the GPU, and the heads
 * labelled only in the first (72 heads: the mean takes 64, not 8, 17, ..., 71) stay NaN in the
 * second. fp32; 1e-4 absolute on losses of ~6 (the shared forwards are longer). */
static void test_cuda_suites_sharing_items_get_the_deltas_of_one_suite_at_a_time(void) {
    andrea_model m = {0};
    enum { L = 9, H = 8, NH = L * H, V = 300, ITEMS = 3, T = 160 };
    CHECK(random_model(&m, L, H, 128, V, T, 43) == 0);
    ae_error err = {{0}};
    andrea_engine_options eo;
    andrea_engine_options_init(&eo);
    snprintf(eo.precision, sizeof eo.precision, "fp32");
    andrea_engine *g = andrea_cuda_engine_open(&m, &eo, ITEMS, T, &err);
    CHECK_MSG(g != NULL, "%s", err.msg);
    if (!g) return;
    static int toks[ITEMS][T];
    static probe_target ta[ITEMS][4], tb[ITEMS][4];
    probe_item ia[ITEMS], ib[ITEMS];
    for (int i = 0; i < ITEMS; i++) {
        for (int t = 0; t < T; t++) toks[i][t] = (int)(next_u32() % (uint32_t)V);
        for (int j = 0; j < 4; j++) {
            ta[i][j] = (probe_target){20 + 30 * j + i, 1 + j};      /* queries up to ~110 */
            tb[i][j] = (probe_target){40 + 35 * j - i, 3 + j};      /* queries up to ~145: a longer prefix */
        }
        ia[i] = (probe_item){.tokens = toks[i], .n_tokens = T - 2 * i, .targets = ta[i], .n_targets = 4};
        ib[i] = (probe_item){.tokens = toks[i], .n_tokens = T - 2 * i, .targets = tb[i], .n_targets = 4};
    }
    probe_suite suites[2] = {{.name = "a", .items = ia, .n_items = ITEMS, .max_len = T},
                             {.name = "b", .items = ib, .n_items = ITEMS, .max_len = T}};
    static andrea_head_score together[2][NH], alone[2][NH];
    andrea_suite_scores st[2] = {{.name = "a", .heads = together[0]}, {.name = "b", .heads = together[1]}};
    andrea_suite_scores sa[2] = {{.name = "a", .heads = alone[0]}, {.name = "b", .heads = alone[1]}};
    together[0][8].label = alone[0][8].label = together[0][35].label = alone[0][35].label = 1; /* outside the mean's 64 */
    const andrea_ablation_options ao = {.method = ANDREA_ABLATION_MEAN, .max_items = ITEMS};
    CHECK_MSG(andrea_ablation_suites(g, &m.cfg, suites, 2, &ao, st, NULL, 0, NULL, &err) == 0, "%s", err.msg);
    for (int s = 0; s < 2; s++) CHECK_MSG(andrea_ablation_suite(g, &m.cfg, &suites[s], ITEMS, &sa[s], &err) == 0, "%s", err.msg);
    double worst = 0;
    int measured = 0, same_nan = 1;
    for (int s = 0; s < 2; s++) {
        worst = fmax(worst, fmax(fabs(st[s].clean_loss - sa[s].clean_loss), fabs(st[s].ablation_mean - sa[s].ablation_mean)));
        for (int h = 0; h < NH; h++) {
            same_nan &= isnan(together[s][h].ablation_delta) == isnan(alone[s][h].ablation_delta);
            if (isnan(alone[s][h].ablation_delta)) continue;
            measured++;
            worst = fmax(worst, fabs(together[s][h].ablation_delta - alone[s][h].ablation_delta));
        }
    }
    CHECK_MSG(same_nan && measured == 64 + 2 + 64, "%d deltas measured (want 130), NaN alike %d", measured, same_nan);
    CHECK(isnan(together[1][8].ablation_delta) && !isnan(together[0][8].ablation_delta));
    CHECK_MSG(worst < 1e-4, "GPU suites checked together and alone differ by %.3g", worst);
    CHECK(fabs(st[0].clean_loss - st[1].clean_loss) > 1e-3); /* their own positions, not one loss for both */
    andrea_engine_close(g);
    andrea_model_free(&m);
}

int main(void) {
    if (!andrea_cuda_available()) return check_skip("no usable CUDA device (or built without CUDA)");
    RUN(test_cuda_refuses_token_outside_vocabulary);
    RUN(test_cuda_refuses_batch_larger_than_opened);
    RUN(test_cuda_matches_cpu_with_head_dim_72);
    RUN(test_cuda_matches_cpu_with_heads_ablated);
    RUN(test_cuda_matches_cpu_with_activations_past_float_squares);
    RUN(test_cuda_token_loss_equals_cpu_cross_entropy);
    RUN(test_cuda_ablate_per_seq_equals_one_head_per_forward);
    RUN(test_cuda_resumed_forward_equals_the_whole_forward);
    RUN(test_cuda_forward_from_kept_layers_equals_the_whole_forward);
    RUN(test_cuda_causal_check_equals_the_cpu_one);
    RUN(test_cuda_suites_sharing_items_get_the_deltas_of_one_suite_at_a_time);
    RUN(test_cuda_matches_cpu_at_andrea_12m_shape);
#ifdef ANDREA_HAVE_CUDA
    RUN(test_cuda_device_fp16_maps_equal_host_maps_rounded);
    RUN(test_cuda_pipeline_hands_back_what_forward_computes);
#endif
    if (!getenv("ANDREA_TEST_QUICK")) RUN(test_cuda_matches_cpu_at_andrea_120m_shape);
    RUN(test_cuda_matches_cpu_on_fixture_checkpoints);
    return check_summary("test_cuda_forward");
}
