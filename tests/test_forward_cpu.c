/* test_forward_cpu.c — the CPU forward engine against an independent naive reference.
 *
 * The reference below is written from docs/checkpoints.md alone: plain loops, double precision, and
 * explicit per-head matrices W_Q^h, W_K^h, W_V^h [C, hd] and W_O^h [hd, C] copied out of the fused
 * tensors, so a stride or layout mistake in the engine cannot be mirrored here.
 * Tolerances: every bound is the rounding of the computation compared, CHECK_FP32_TOL (check.h):
 * relative to the magnitude of the values (or of the terms summed) and growing with the length of
 * the reductions along the forward (forward_roundings), never a fixed absolute number: OpenBLAS
 * runs other kernels on other CPUs (AVX-512, AVX2 on AMD Zen), which round otherwise. Each test
 * prints its worst error as a share of its bound.
 */
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <omp.h>

#include "check.h"
#include "engine/cpu_team.h"
#include "engine/forward.h"
#include "engine/model.h"

/* ---- a tiny random model (deterministic) ---- */

static uint64_t rng_state;
static double urand(void) { /* uniform in [-1, 1) */
    rng_state = rng_state * 6364136223846793005ULL + 1442695040888963407ULL;
    return (double)(rng_state >> 11) / (double)(1ULL << 52) - 1.0;
}

static void fill(float *p, size_t n, double centre, double spread) {
    for (size_t i = 0; i < n; i++) p[i] = (float)(centre + spread * urand());
}

/* Weights large enough that attention is far from uniform (so a wrong mask or stride shows). */
static void make_model(andrea_model *m, int L, int H, int C, int V, int Vp, int maxT, uint64_t seed) {
    andrea_config c = {.max_seq_len = maxT, .vocab_size = V, .padded_vocab_size = Vp, .n_layer = L,
                       .n_head = H, .d_model = C, .head_dim = C / H};
    ae_error err = {{0}};
    memset(m, 0, sizeof *m);
    if (andrea_model_alloc(m, &c, &err)) {
        fprintf(stderr, "alloc: %s\n", err.msg);
        exit(2);
    }
    snprintf(m->path, sizeof m->path, "random-test-model");
    rng_state = seed;
    size_t LC = (size_t)L * C, CC = (size_t)C * C;
    fill(m->p.wte, (size_t)Vp * C, 0, 0.5);
    fill(m->p.wpe, (size_t)maxT * C, 0, 0.3);
    fill(m->p.ln1w, LC, 1, 0.2);
    fill(m->p.ln1b, LC, 0, 0.1);
    fill(m->p.qkvw, 3 * CC * L, 0, 1.5 / sqrt(C));
    fill(m->p.qkvb, 3 * LC, 0, 0.1);
    fill(m->p.attprojw, CC * L, 0, 1.0 / sqrt(C));
    fill(m->p.attprojb, LC, 0, 0.1);
    fill(m->p.ln2w, LC, 1, 0.2);
    fill(m->p.ln2b, LC, 0, 0.1);
    fill(m->p.fcw, 4 * CC * L, 0, 1.0 / sqrt(C));
    fill(m->p.fcb, 4 * LC, 0, 0.1);
    fill(m->p.fcprojw, 4 * CC * L, 0, 0.5 / sqrt(C));
    fill(m->p.fcprojb, LC, 0, 0.1);
    fill(m->p.lnfw, C, 1, 0.2);
    fill(m->p.lnfb, C, 0, 0.1);
}

static void random_tokens(int *tok, size_t n, int V) {
    for (size_t i = 0; i < n; i++) tok[i] = (int)((urand() + 1.0) * 0.5 * V) % V;
}

/* ---- the naive double-precision reference, one sequence of length T ---- */

typedef struct {
    double *attn;    /* [L, H, T, T] */
    double *contrib; /* [L, H, T, C] */
    double *attnout; /* [L, T, C] attention output incl. bias, ablated heads dropped */
    double *logits;  /* [T, V] */
    double *sigma;   /* [T] final LayerNorm scale */
    double score_max; /* the largest |scaled score q·k/sqrt(hd)| before the softmax */
} ref_out;

static void ref_layernorm(double *out, const double *x, const float *w, const float *b, int T, int C,
                          double *sigma) {
    for (int t = 0; t < T; t++) {
        double mean = 0, var = 0;
        for (int i = 0; i < C; i++) mean += x[t * C + i];
        mean /= C;
        for (int i = 0; i < C; i++) var += (x[t * C + i] - mean) * (x[t * C + i] - mean);
        var /= C;
        double sd = sqrt(var + 1e-5);
        if (sigma) sigma[t] = sd;
        for (int i = 0; i < C; i++) out[t * C + i] = (x[t * C + i] - mean) / sd * w[i] + b[i];
    }
}

static void ref_forward(const andrea_model *m, const int *tok, int T, const unsigned char *ablate, ref_out *r) {
    const int L = m->cfg.n_layer, H = m->cfg.n_head, C = m->cfg.d_model, hd = m->cfg.head_dim,
              V = m->cfg.vocab_size;
    const andrea_params *p = &m->p;
    double *x = calloc((size_t)T * C, sizeof(double)), *ln = calloc((size_t)T * C, sizeof(double));
    double *q = calloc((size_t)T * hd, sizeof(double)), *k = calloc((size_t)T * hd, sizeof(double)),
           *v = calloc((size_t)T * hd, sizeof(double)), *oh = calloc((size_t)T * hd, sizeof(double));
    double *wq = calloc((size_t)C * hd, sizeof(double)), *wk = calloc((size_t)C * hd, sizeof(double)),
           *wv = calloc((size_t)C * hd, sizeof(double)), *wo = calloc((size_t)hd * C, sizeof(double));
    double *hid = calloc((size_t)T * 4 * C, sizeof(double));
    for (int t = 0; t < T; t++)
        for (int i = 0; i < C; i++) x[t * C + i] = (double)p->wte[(size_t)tok[t] * C + i] + p->wpe[(size_t)t * C + i];
    r->score_max = 0;
    for (int l = 0; l < L; l++) {
        const float *qkvw = p->qkvw + (size_t)l * 3 * C * C, *qkvb = p->qkvb + (size_t)l * 3 * C;
        const float *ow = p->attprojw + (size_t)l * C * C, *ob = p->attprojb + (size_t)l * C;
        ref_layernorm(ln, x, p->ln1w + l * C, p->ln1b + l * C, T, C, NULL);
        double *aout = r->attnout + (size_t)l * T * C;
        for (int t = 0; t < T; t++)
            for (int i = 0; i < C; i++) aout[t * C + i] = ob[i];
        for (int h = 0; h < H; h++) {
            /* explicit per-head matrices: W_Q^h[i][d] is row h*hd+d, column i of the Q block */
            for (int i = 0; i < C; i++)
                for (int d = 0; d < hd; d++) {
                    wq[i * hd + d] = qkvw[(size_t)(h * hd + d) * C + i];
                    wk[i * hd + d] = qkvw[(size_t)(C + h * hd + d) * C + i];
                    wv[i * hd + d] = qkvw[(size_t)(2 * C + h * hd + d) * C + i];
                }
            /* W_O^h[d][j]: input column h*hd+d of attprojw [C out, C in] */
            for (int d = 0; d < hd; d++)
                for (int j = 0; j < C; j++) wo[d * C + j] = ow[(size_t)j * C + h * hd + d];
            for (int t = 0; t < T; t++)
                for (int d = 0; d < hd; d++) {
                    double sq = qkvb[h * hd + d], sk = qkvb[C + h * hd + d], sv = qkvb[2 * C + h * hd + d];
                    for (int i = 0; i < C; i++) {
                        sq += ln[t * C + i] * wq[i * hd + d];
                        sk += ln[t * C + i] * wk[i * hd + d];
                        sv += ln[t * C + i] * wv[i * hd + d];
                    }
                    q[t * hd + d] = sq;
                    k[t * hd + d] = sk;
                    v[t * hd + d] = sv;
                }
            double *A = r->attn + ((size_t)l * H + h) * T * T;
            for (int t = 0; t < T; t++) {
                double mx = -1e300;
                for (int j = 0; j < T; j++) {
                    double s = 0;
                    for (int d = 0; d < hd; d++) s += q[t * hd + d] * k[j * hd + d];
                    A[t * T + j] = j <= t ? s / sqrt((double)hd) : -INFINITY;
                    if (j <= t && A[t * T + j] > mx) mx = A[t * T + j];
                    if (j <= t) r->score_max = fmax(r->score_max, fabs(A[t * T + j]));
                }
                double sum = 0;
                for (int j = 0; j < T; j++) {
                    A[t * T + j] = j <= t ? exp(A[t * T + j] - mx) : 0.0;
                    sum += A[t * T + j];
                }
                for (int j = 0; j < T; j++) A[t * T + j] /= sum;
                for (int d = 0; d < hd; d++) {
                    double s = 0;
                    for (int j = 0; j < T; j++) s += A[t * T + j] * v[j * hd + d];
                    oh[t * hd + d] = s;
                }
            }
            double *ch = r->contrib + ((size_t)l * H + h) * T * C;
            int dropped = ablate && ablate[l * H + h];
            for (int t = 0; t < T; t++)
                for (int j = 0; j < C; j++) {
                    double s = 0;
                    for (int d = 0; d < hd; d++) s += oh[t * hd + d] * wo[d * C + j];
                    ch[t * C + j] = s;
                    if (!dropped) aout[t * C + j] += s;
                }
        }
        for (int i = 0; i < T * C; i++) x[i] += aout[i];
        ref_layernorm(ln, x, p->ln2w + l * C, p->ln2b + l * C, T, C, NULL);
        const float *fw = p->fcw + (size_t)l * 4 * C * C, *fb = p->fcb + (size_t)l * 4 * C;
        const float *pw = p->fcprojw + (size_t)l * 4 * C * C, *pb = p->fcprojb + (size_t)l * C;
        for (int t = 0; t < T; t++)
            for (int o = 0; o < 4 * C; o++) {
                double s = fb[o];
                for (int i = 0; i < C; i++) s += ln[t * C + i] * fw[(size_t)o * C + i];
                hid[(size_t)t * 4 * C + o] = 0.5 * s * (1 + tanh(sqrt(2 / M_PI) * (s + 0.044715 * s * s * s)));
            }
        for (int t = 0; t < T; t++)
            for (int o = 0; o < C; o++) {
                double s = pb[o];
                for (int i = 0; i < 4 * C; i++) s += hid[(size_t)t * 4 * C + i] * pw[(size_t)o * 4 * C + i];
                x[t * C + o] += s;
            }
    }
    ref_layernorm(ln, x, p->lnfw, p->lnfb, T, C, r->sigma);
    for (int t = 0; t < T; t++)
        for (int vv = 0; vv < V; vv++) {
            double s = 0;
            for (int i = 0; i < C; i++) s += ln[t * C + i] * p->wte[(size_t)vv * C + i];
            r->logits[(size_t)t * V + vv] = s;
        }
    free(x), free(ln), free(q), free(k), free(v), free(oh), free(wq), free(wk), free(wv), free(wo), free(hid);
}

static void ref_alloc(ref_out *r, const andrea_config *c, int T) {
    size_t LH = (size_t)c->n_layer * c->n_head;
    r->attn = calloc(LH * T * T, sizeof(double));
    r->contrib = calloc(LH * T * c->d_model, sizeof(double));
    r->attnout = calloc((size_t)c->n_layer * T * c->d_model, sizeof(double));
    r->logits = calloc((size_t)T * c->vocab_size, sizeof(double));
    r->sigma = calloc(T, sizeof(double));
}
static void ref_free(ref_out *r) { free(r->attn), free(r->contrib), free(r->attnout), free(r->logits), free(r->sigma); }

/* ---- engine outputs for a batch ---- */

typedef struct {
    float *attn, *head_out, *norm, *dla, *logits;
} eng_out;

static void eng_alloc(eng_out *o, const andrea_config *c, int B, int T) {
    size_t LH = (size_t)c->n_layer * c->n_head;
    o->attn = calloc((size_t)B * LH * T * T, sizeof(float));
    o->head_out = calloc((size_t)B * LH * T * c->d_model, sizeof(float));
    o->norm = calloc((size_t)B * LH * T, sizeof(float));
    o->dla = calloc((size_t)B * LH * T, sizeof(float));
    o->logits = calloc((size_t)B * T * c->vocab_size, sizeof(float));
}
static void eng_free(eng_out *o) { free(o->attn), free(o->head_out), free(o->norm), free(o->dla), free(o->logits); }

/* Runs the CPU engine with everything instrumented. Returns 0 on success. */
static int run_engine(const andrea_model *m, int B, int T, const int *tok, const int *lengths,
                      const unsigned char *ablate, eng_out *o) {
    ae_error err = {{0}};
    andrea_engine *e = andrea_cpu_engine_open(m, B, T, &err);
    if (!e) {
        fprintf(stderr, "open: %s\n", err.msg);
        return -1;
    }
    andrea_forward_io io = {.B = B, .T = T, .tokens = tok, .lengths = lengths, .ablate = ablate,
                            .attn = o->attn, .head_out = o->head_out, .head_out_norm = o->norm,
                            .head_dla = o->dla, .logits = o->logits};
    int rc = andrea_engine_forward(e, &io, &err);
    if (rc) fprintf(stderr, "forward: %s\n", err.msg);
    andrea_engine_close(e);
    return rc;
}

/* ---- tests ---- */

enum { TL = 2, TH = 4, TC = 32, TV = 50, TVP = 64, TMAXT = 16 };

/* The roundings along a logit's chain in the CPU engine, the n of CHECK_FP32_TOL (check.h): per
 * layer the reductions of QKV (C), a score (hd), P·V (up to T), W_O (C), the MLP's two (C, 4C);
 * then the unembedding (C). Every output of the forward is at most this far down the chain. */
static double forward_roundings(const andrea_config *c, int T) {
    return (double)c->n_layer * (7.0 * c->d_model + c->head_dim + T) + c->d_model;
}

/* The bound on an attention probability computed twice (or against the exact one): p_j =
 * softmax(s)_j moves by p_j (ds_j - sum_k p_k ds_k), at most 2 max|ds|, each score rounded as
 * CHECK_FP32_TOL of the chain relative to the largest |score|; plus the softmax's own rounding
 * (a sum of up to T exponentials, relative to 1). */
static double attn_tol(const andrea_config *c, int T, double score_max) {
    return 2 * CHECK_FP32_TOL(forward_roundings(c, T), score_max) + CHECK_FP32_TOL(T, 1.0);
}

/* Compares engine (batch B, full length T) against the reference for every sequence: max_* is the
 * largest error, scale_* the magnitude the bound is relative to (largest |score|, |logit|, |head_out|). */
static void compare_with_reference(const andrea_model *m, int B, int T, double *max_attn, double *max_logit,
                                   double *max_contrib, double *scale_attn, double *scale_logit,
                                   double *scale_contrib) {
    const andrea_config *c = &m->cfg;
    const int L = c->n_layer, H = c->n_head, C = c->d_model, V = c->vocab_size;
    int *tok = malloc(sizeof(int) * B * T);
    random_tokens(tok, (size_t)B * T, V);
    eng_out o;
    eng_alloc(&o, c, B, T);
    *max_attn = *max_logit = *max_contrib = INFINITY;
    *scale_attn = *scale_logit = *scale_contrib = 0;
    if (run_engine(m, B, T, tok, NULL, NULL, &o) == 0) {
        *max_attn = *max_logit = *max_contrib = 0;
        ref_out r;
        ref_alloc(&r, c, T);
        for (int b = 0; b < B; b++) {
            ref_forward(m, tok + b * T, T, NULL, &r);
            *scale_attn = fmax(*scale_attn, r.score_max);
            for (size_t i = 0; i < (size_t)L * H * T * T; i++)
                *max_attn = fmax(*max_attn, fabs(o.attn[(size_t)b * L * H * T * T + i] - r.attn[i]));
            for (size_t i = 0; i < (size_t)T * V; i++) {
                *max_logit = fmax(*max_logit, fabs(o.logits[(size_t)b * T * V + i] - r.logits[i]));
                *scale_logit = fmax(*scale_logit, fabs(r.logits[i]));
            }
            for (size_t i = 0; i < (size_t)L * H * T * C; i++) {
                *max_contrib = fmax(*max_contrib, fabs(o.head_out[(size_t)b * L * H * T * C + i] - r.contrib[i]));
                *scale_contrib = fmax(*scale_contrib, fabs(r.contrib[i]));
            }
        }
        ref_free(&r);
    }
    eng_free(&o);
    free(tok);
}

/* The engine (fp32) against the float64 reference: the engine's rounding along the forward's chain,
 * relative to the largest |logit| and |head_out| (the terms of their last sums are of that size or
 * the errors carried from earlier layers are), and attn_tol for the probabilities. */
static void check_matches_reference(const andrea_model *m, int B, int T) {
    double ea, el, ec, sa, sl, sc;
    compare_with_reference(m, B, T, &ea, &el, &ec, &sa, &sl, &sc);
    const double n = forward_roundings(&m->cfg, T), ta = attn_tol(&m->cfg, T, sa), tl = CHECK_FP32_TOL(n, sl),
                 tc = CHECK_FP32_TOL(n, sc);
    fprintf(stderr, "  max abs err: attn %.2g (%.3g of its bound), logits %.2g (%.3g), head_out %.2g (%.3g)\n", ea,
            ea / ta, el, el / tl, ec, ec / tc);
    CHECK_MSG(ea <= ta, "attn max abs err %g > %g", ea, ta);
    CHECK_MSG(el <= tl, "logits max abs err %g > %g", el, tl);
    CHECK_MSG(ec <= tc, "head_out max abs err %g > %g", ec, tc);
}

static void test_forward_matches_naive_double_reference(void) {
    andrea_model m;
    make_model(&m, TL, TH, TC, TV, TVP, TMAXT, 1);
    check_matches_reference(&m, 3, 12);
    andrea_model_free(&m);
}

static void test_head_dim_72_shape_matches_reference(void) {
    andrea_model m;
    make_model(&m, 2, 2, 144, 40, 40, 8, 2);
    check_matches_reference(&m, 2, 7);
    andrea_model_free(&m);
}

/* T = 150 spans three bands of query rows in the engine's attention (64, 64, 22). */
static void test_long_sequence_spanning_several_attention_bands_matches_reference(void) {
    andrea_model m;
    make_model(&m, TL, TH, TC, TV, TVP, 160, 12);
    check_matches_reference(&m, 2, 150);
    andrea_model_free(&m);
}

static void test_attention_rows_sum_to_one_over_the_causal_prefix(void) {
    andrea_model m;
    make_model(&m, TL, TH, TC, TV, TVP, TMAXT, 3);
    const int B = 2, T = 10;
    int tok[20];
    random_tokens(tok, 20, TV);
    eng_out o;
    eng_alloc(&o, &m.cfg, B, T);
    CHECK(run_engine(&m, B, T, tok, NULL, NULL, &o) == 0);
    double worst_sum = 0, worst_above = 0;
    for (size_t map = 0; map < (size_t)B * TL * TH; map++)
        for (int t = 0; t < T; t++) {
            const float *row = o.attn + (map * T + t) * T;
            double s = 0;
            for (int j = 0; j <= t; j++) s += row[j];
            worst_sum = fmax(worst_sum, fabs(s - 1.0));
            for (int j = t + 1; j < T; j++) worst_above = fmax(worst_above, fabs(row[j]));
        }
    /* each probability is rounded (exp, the row's sum of up to T terms, the division): the row's sum
     * is off by the rounding of a 2T-term sum of terms adding up to 1 */
    const double sum_tol = CHECK_FP32_TOL(2 * T, 1.0);
    fprintf(stderr, "  row sums: worst %.3g (%.3g of its bound)\n", worst_sum, worst_sum / sum_tol);
    CHECK_MSG(worst_sum <= sum_tol, "row sum off by %g > %g", worst_sum, sum_tol);
    CHECK_MSG(worst_above == 0, "mass above the diagonal %g", worst_above);
    eng_free(&o);
    andrea_model_free(&m);
}

/* Sequence 0 is full; sequence 1 is its first len tokens followed by junk padding (even invalid
 * ids): every output at positions < len must agree. */
static void check_padding(int maxT, int T, int len, uint64_t seed) {
    andrea_model m;
    make_model(&m, TL, TH, TC, TV, TVP, maxT, seed);
    const int V = TV, C = TC;
    int *tok = malloc(sizeof(int) * 2 * T), lengths[2] = {T, len};
    random_tokens(tok, T, V);
    for (int t = 0; t < T; t++) tok[T + t] = t < len ? tok[t] : -7;
    eng_out o;
    eng_alloc(&o, &m.cfg, 2, T);
    CHECK(run_engine(&m, 2, T, tok, lengths, NULL, &o) == 0);
    double e_logit = 0, e_attn = 0, e_out = 0, pad_attn = 0, s_logit = 0, s_out = 0;
    const size_t LH = TL * TH;
    for (int t = 0; t < len; t++) {
        for (int v = 0; v < V; v++) {
            e_logit = fmax(e_logit, fabs(o.logits[(size_t)t * V + v] - o.logits[(size_t)(T + t) * V + v]));
            s_logit = fmax(s_logit, fabs(o.logits[(size_t)t * V + v]));
        }
        for (size_t map = 0; map < LH; map++) {
            for (int j = 0; j < T; j++)
                e_attn = fmax(e_attn, fabs(o.attn[(map * T + t) * T + j] - o.attn[((LH + map) * T + t) * T + j]));
            for (int i = 0; i < C; i++) {
                e_out = fmax(e_out, fabs(o.head_out[(map * T + t) * C + i] - o.head_out[((LH + map) * T + t) * C + i]));
                s_out = fmax(s_out, fabs(o.head_out[(map * T + t) * C + i]));
            }
        }
    }
    /* padded query rows are written as zeros */
    for (size_t map = 0; map < LH; map++)
        for (int t = len; t < T; t++)
            for (int j = 0; j < T; j++) pad_attn = fmax(pad_attn, fabs(o.attn[((LH + map) * T + t) * T + j]));
    /* Bounds: the padded sequence runs other shapes (a shorter causal prefix in attention, its rows
     * elsewhere in the sgemm blocks), so it may round otherwise: the forward's rounding relative to the
     * largest |logit| / |head_out|, and attn_tol relative to the largest |score| (the reference's). */
    ref_out r;
    ref_alloc(&r, &m.cfg, T);
    ref_forward(&m, tok, T, NULL, &r);
    const double n = forward_roundings(&m.cfg, T), tl = CHECK_FP32_TOL(n, s_logit), to = CHECK_FP32_TOL(n, s_out),
                 ta = attn_tol(&m.cfg, T, r.score_max);
    ref_free(&r);
    fprintf(stderr, "  T=%d len=%d: logits %.3g (%.3g of its bound), attention %.3g (%.3g), head_out %.3g (%.3g)\n", T,
            len, e_logit, e_logit / tl, e_attn, e_attn / ta, e_out, e_out / to);
    CHECK_MSG(e_logit <= tl, "T=%d len=%d: logits differ by %g > %g", T, len, e_logit, tl);
    CHECK_MSG(e_attn <= ta, "T=%d len=%d: attention differs by %g > %g", T, len, e_attn, ta);
    CHECK_MSG(e_out <= to, "T=%d len=%d: head_out differs by %g > %g", T, len, e_out, to);
    CHECK_MSG(pad_attn == 0, "T=%d len=%d: padded attention rows hold %g", T, len, pad_attn);
    /* DLA of the last real position has no next token */
    CHECK(isnan(o.dla[LH * T + len - 1]));
    CHECK(!isnan(o.dla[LH * T + len - 2]));
    eng_free(&o);
    free(tok);
    andrea_model_free(&m);
}

static void test_padding_does_not_change_earlier_positions(void) {
    check_padding(TMAXT, 9, 5, 4);
    check_padding(160, 150, 70, 13); /* length inside the second attention band */
}

static void test_head_contributions_sum_to_attention_output(void) {
    andrea_model m;
    make_model(&m, TL, TH, TC, TV, TVP, TMAXT, 5);
    const int T = 8, C = TC;
    int tok[8];
    random_tokens(tok, T, TV);
    eng_out o;
    eng_alloc(&o, &m.cfg, 1, T);
    CHECK(run_engine(&m, 1, T, tok, NULL, NULL, &o) == 0);
    ref_out r;
    ref_alloc(&r, &m.cfg, T);
    ref_forward(&m, tok, T, NULL, &r);
    /* relative L2 error against the norm of the terms summed (bias and every head's contribution,
     * so that cancellation between heads does not shrink the scale): the forward's rounding plus the
     * H float head outputs added up */
    double worst = 0;
    for (int l = 0; l < TL; l++)
        for (int t = 0; t < T; t++) {
            double num = 0, den = 0;
            for (int i = 0; i < C; i++) {
                double s = m.p.attprojb[l * C + i], terms = fabs(m.p.attprojb[l * C + i]);
                for (int h = 0; h < TH; h++) {
                    s += o.head_out[(((size_t)l * TH + h) * T + t) * C + i];
                    terms += fabs(o.head_out[(((size_t)l * TH + h) * T + t) * C + i]);
                }
                double ref = r.attnout[((size_t)l * T + t) * C + i];
                num += (s - ref) * (s - ref);
                den += terms * terms;
            }
            worst = fmax(worst, sqrt(num / den));
        }
    const double tol = CHECK_FP32_TOL(forward_roundings(&m.cfg, T) + TH, 1.0);
    fprintf(stderr, "  sum of heads: relative error %.3g (%.3g of its bound)\n", worst, worst / tol);
    CHECK_MSG(worst <= tol, "relative error %g > %g", worst, tol);
    ref_free(&r);
    eng_free(&o);
    andrea_model_free(&m);
}

static void test_norms_are_the_l2_norms_of_head_out(void) {
    andrea_model m;
    make_model(&m, TL, TH, TC, TV, TVP, TMAXT, 6);
    const int T = 6, C = TC;
    int tok[6];
    random_tokens(tok, T, TV);
    eng_out o;
    eng_alloc(&o, &m.cfg, 1, T);
    CHECK(run_engine(&m, 1, T, tok, NULL, NULL, &o) == 0);
    double worst = 0;
    for (size_t i = 0; i < (size_t)TL * TH * T; i++) {
        double s = 0;
        for (int k = 0; k < C; k++) s += (double)o.head_out[i * C + k] * o.head_out[i * C + k];
        worst = fmax(worst, fabs(sqrt(s) - o.norm[i]) / fmax(1e-30, sqrt(s)));
    }
    /* the engine sums the squares of the same floats in double and rounds the root to float once:
     * half an ulp (the double sum's own rounding, ~C 2^-53, is far below); one ulp allowed */
    fprintf(stderr, "  norms: relative error %.3g (%.3g of FLT_EPSILON)\n", worst, worst / FLT_EPSILON);
    CHECK_MSG(worst <= FLT_EPSILON, "relative norm error %g", worst);
    eng_free(&o);
    andrea_model_free(&m);
}

static void test_dla_matches_naive_double_recomputation(void) {
    andrea_model m;
    make_model(&m, TL, TH, TC, TV, TVP, TMAXT, 7);
    const int T = 8, C = TC, V = TV;
    int tok[8];
    random_tokens(tok, T, V);
    eng_out o;
    eng_alloc(&o, &m.cfg, 1, T);
    CHECK(run_engine(&m, 1, T, tok, NULL, NULL, &o) == 0);
    ref_out r;
    ref_alloc(&r, &m.cfg, T);
    ref_forward(&m, tok, T, NULL, &r);
    double wmean[TC] = {0};
    for (int v = 0; v < V; v++)
        for (int i = 0; i < C; i++) wmean[i] += m.p.wte[(size_t)v * C + i] / V;
    /* each DLA is a C-term dot product of values carrying the forward's rounding: its bound is the
     * forward's rounding relative to the sum of the |terms| (not to |dla|, which cancels) */
    const double n = forward_roundings(&m.cfg, T) + C;
    double worst = 0, biggest = 0, worst_err = 0;
    for (int lh = 0; lh < TL * TH; lh++)
        for (int t = 0; t + 1 < T; t++) {
            const double *c = r.contrib + ((size_t)lh * T + t) * C;
            double mc = 0;
            for (int i = 0; i < C; i++) mc += c[i] / C;
            const int y = tok[t + 1];
            double dla = 0, terms = 0;
            for (int i = 0; i < C; i++) {
                const double term = (c[i] - mc) / r.sigma[t] * m.p.lnfw[i] * (m.p.wte[(size_t)y * C + i] - wmean[i]);
                dla += term;
                terms += fabs(term);
            }
            const double err = fabs(dla - o.dla[(size_t)lh * T + t]);
            worst = fmax(worst, err / CHECK_FP32_TOL(n, terms));
            worst_err = fmax(worst_err, err);
            biggest = fmax(biggest, fabs(dla));
        }
    fprintf(stderr, "  DLA: max abs err %.3g, %.3g of its bound\n", worst_err, worst);
    CHECK_MSG(worst <= 1, "DLA error %g x its bound (largest |dla| %g)", worst, biggest);
    CHECK(biggest > 1e-3); /* the comparison is not vacuous */
    CHECK(isnan(o.dla[T - 1]));
    ref_free(&r);
    eng_free(&o);
    andrea_model_free(&m);
}

static void test_ablating_a_head_equals_zeroing_its_wo_columns(void) {
    andrea_model m, z;
    make_model(&m, TL, TH, TC, TV, TVP, TMAXT, 8);
    make_model(&z, TL, TH, TC, TV, TVP, TMAXT, 8);
    const int T = 10, C = TC, V = TV, hd = TC / TH, al = 0, ah = 2;
    /* copy z: W_O input columns of head (al, ah) zeroed */
    for (int j = 0; j < C; j++)
        for (int d = 0; d < hd; d++) z.p.attprojw[(size_t)al * C * C + (size_t)j * C + ah * hd + d] = 0.0f;
    int tok[10];
    random_tokens(tok, T, V);
    unsigned char ablate[TL * TH] = {0};
    ablate[al * TH + ah] = 1;
    eng_out oa, oz, on;
    eng_alloc(&oa, &m.cfg, 1, T);
    eng_alloc(&oz, &m.cfg, 1, T);
    eng_alloc(&on, &m.cfg, 1, T);
    CHECK(run_engine(&m, 1, T, tok, NULL, ablate, &oa) == 0);
    CHECK(run_engine(&z, 1, T, tok, NULL, NULL, &oz) == 0);
    CHECK(run_engine(&m, 1, T, tok, NULL, NULL, &on) == 0);
    double diff = 0, change = 0, scale = 0;
    for (size_t i = 0; i < (size_t)T * V; i++) {
        diff = fmax(diff, fabs(oa.logits[i] - oz.logits[i]));
        change = fmax(change, fabs(oa.logits[i] - on.logits[i]));
        scale = fmax(scale, fabs(on.logits[i]));
    }
    /* two fp32 forwards that may round otherwise (the zeros enter other products): the forward's
     * rounding relative to the largest |logit|; the ablation itself moves logits far more */
    const double tol = CHECK_FP32_TOL(forward_roundings(&m.cfg, T), scale);
    fprintf(stderr, "  ablated vs zeroed W_O: %.3g (%.3g of its bound); the ablation moves logits by %.3g bounds\n", diff,
            diff / tol, change / tol);
    CHECK_MSG(diff <= tol, "ablated vs zeroed-W_O logits differ by %g > %g", diff, tol);
    CHECK_MSG(change > 100 * tol, "ablation changed logits by only %g (bound %g)", change, tol);
    /* the ablated head contributes nothing; its attention map is still reported */
    double ho = 0;
    for (size_t i = 0; i < (size_t)T * C; i++) ho = fmax(ho, fabs(oa.head_out[((size_t)al * TH + ah) * T * C + i]));
    CHECK(ho == 0);
    CHECK(oa.attn[((size_t)al * TH + ah) * T * T] > 0.99f);
    eng_free(&oa), eng_free(&oz), eng_free(&on);
    andrea_model_free(&m);
    andrea_model_free(&z);
}

static void test_uninstrumented_run_gives_the_same_logits(void) {
    andrea_model m;
    make_model(&m, TL, TH, TC, TV, TVP, TMAXT, 9);
    const int B = 2, T = 11, V = TV;
    int tok[22];
    random_tokens(tok, 22, V);
    eng_out o;
    eng_alloc(&o, &m.cfg, B, T);
    CHECK(run_engine(&m, B, T, tok, NULL, NULL, &o) == 0);
    float *plain = calloc((size_t)B * T * V, sizeof(float));
    ae_error err = {{0}};
    andrea_engine *e = andrea_cpu_engine_open(&m, B, T, &err);
    CHECK(e != NULL);
    andrea_forward_io io = {.B = B, .T = T, .tokens = tok, .logits = plain};
    CHECK(e && andrea_engine_forward(e, &io, &err) == 0);
    double diff = 0;
    for (size_t i = 0; i < (size_t)B * T * V; i++) diff = fmax(diff, fabs(plain[i] - o.logits[i]));
    CHECK_MSG(diff == 0, "logits differ by %g", diff);
    andrea_engine_close(e);
    free(plain);
    eng_free(&o);
    andrea_model_free(&m);
}

/* Settings reach the engine as options; the environment is only a developer override, read by
 * andrea_engine_options_init alone (engine/forward.h). */
static void test_engine_options_read_developer_overrides_in_one_place(void) {
    andrea_engine_options o;
    unsetenv("ANDREA_CUDA_PRECISION");
    unsetenv("ANDREA_CUDA_FP32");
    unsetenv("ANDREA_CUDA_ATTN");
    unsetenv("ANDREA_CUDA_SPLIT_QLO");
    andrea_engine_options_init(&o);
    CHECK(o.device == ANDREA_DEVICE_AUTO && o.precision[0] == 0 && o.attention_version == 0 && !o.split_qlo_regs);
    setenv("ANDREA_CUDA_PRECISION", "tf32x3", 1);
    setenv("ANDREA_CUDA_ATTN", "v2", 1);
    setenv("ANDREA_CUDA_SPLIT_QLO", "regs", 1);
    andrea_engine_options_init(&o);
    CHECK(!strcmp(o.precision, "tf32x3") && o.attention_version == 2 && o.split_qlo_regs);
    unsetenv("ANDREA_CUDA_PRECISION");
    setenv("ANDREA_CUDA_FP32", "1", 1); /* the older switch still means fp32 */
    andrea_engine_options_init(&o);
    CHECK(!strcmp(o.precision, "fp32"));
    unsetenv("ANDREA_CUDA_FP32");
    unsetenv("ANDREA_CUDA_ATTN");
    unsetenv("ANDREA_CUDA_SPLIT_QLO");
}

/* The causal check's shortcut: a forward resumed at layer l from the saved input of layer l, with
 * a head of layer l ablated, gives the same logits, bit for bit, as the whole ablated forward. */
static void test_resumed_forward_equals_the_whole_ablated_forward(void) {
    andrea_model m;
    make_model(&m, 3, 4, 32, 257, 257, 48, 21);
    const int B = 2, T = 24, L = 3, H = 4, C = 32, V = 257;
    int tok[48], lengths[2] = {24, 17};
    random_tokens(tok, B * T, V);
    ae_error err = {{0}};
    andrea_engine *e = andrea_cpu_engine_open(&m, B, T, &err);
    CHECK(e != NULL && andrea_engine_can_resume(e) && !andrea_engine_has_gpu(e)); /* capabilities, not the name */
    if (!e) return;
    float *saved = calloc((size_t)L * B * T * C, sizeof(float)), *heads = calloc((size_t)L * B * T * C, sizeof(float));
    float *whole = calloc((size_t)B * T * V, sizeof(float)), *resumed = calloc((size_t)B * T * V, sizeof(float));
    andrea_forward_io clean = {.B = B, .T = T, .tokens = tok, .lengths = lengths, .logits = whole, .layer_inputs = saved,
                               .layer_heads = heads};
    CHECK(andrea_engine_forward(e, &clean, &err) == 0);
    /* from the saved head outputs: layer l's attention skipped too (every layer, 0 included) */
    for (int l = 0; l < L; l++) {
        unsigned char ablate[12] = {0};
        ablate[l * H + 1] = 1;
        andrea_forward_io full = {.B = B, .T = T, .tokens = tok, .lengths = lengths, .ablate = ablate, .logits = whole};
        CHECK(andrea_engine_forward(e, &full, &err) == 0);
        andrea_forward_io part = {.B = B, .T = T, .tokens = tok, .lengths = lengths, .ablate = ablate,
                                  .logits = resumed, .resume_layer = l,
                                  .resume_x = l ? saved + (size_t)l * B * T * C : NULL,
                                  .resume_heads = heads + (size_t)l * B * T * C};
        CHECK_MSG(andrea_engine_forward(e, &part, &err) == 0, "%s", err.msg);
        CHECK_MSG(memcmp(whole, resumed, sizeof(float) * (size_t)B * T * V) == 0,
                  "layer %d: logits resumed from the saved head outputs differ", l);
    }
    for (int l = 1; l < L; l++) {
        unsigned char ablate[12] = {0};
        ablate[l * H + 2] = 1;
        andrea_forward_io full = {.B = B, .T = T, .tokens = tok, .lengths = lengths, .ablate = ablate, .logits = whole};
        CHECK(andrea_engine_forward(e, &full, &err) == 0);
        andrea_forward_io part = {.B = B, .T = T, .tokens = tok, .lengths = lengths, .ablate = ablate,
                                  .logits = resumed, .resume_layer = l, .resume_x = saved + (size_t)l * B * T * C};
        CHECK_MSG(andrea_engine_forward(e, &part, &err) == 0, "%s", err.msg);
        CHECK_MSG(memcmp(whole, resumed, sizeof(float) * (size_t)B * T * V) == 0, "layer %d: resumed logits differ", l);
    }
    /* a resumed forward computes logits only, and needs its input */
    float attn[2 * 3 * 4 * 24 * 24];
    andrea_forward_io bad = {.B = B, .T = T, .tokens = tok, .attn = attn, .resume_layer = 1, .resume_x = saved};
    CHECK(andrea_engine_forward(e, &bad, &err) == -1 && strstr(err.msg, "logits only"));
    andrea_forward_io no_x = {.B = B, .T = T, .tokens = tok, .logits = resumed, .resume_layer = 1};
    CHECK(andrea_engine_forward(e, &no_x, &err) == -1 && strstr(err.msg, "without its input"));
    andrea_forward_io maps_too = {.B = B, .T = T, .tokens = tok, .attn = attn, .resume_heads = heads};
    CHECK(andrea_engine_forward(e, &maps_too, &err) == -1 && strstr(err.msg, "logits only"));
    andrea_engine_close(e);
    free(saved);
    free(heads);
    free(whole);
    free(resumed);
    andrea_model_free(&m);
}

/* The team of a forward (engine/cpu_team.h): the cores other processes leave now, at least one;
 * this process's own runnable threads (an earlier forward's team still spinning) never count. */
static void test_team_leaves_the_cores_others_use(void) {
    CHECK(andrea_cpu_team_from(2, 1, 1) == 2);  /* only this process runs: every core */
    CHECK(andrea_cpu_team_from(2, 3, 3) == 2);  /* its own spinning threads are not others */
    CHECK(andrea_cpu_team_from(2, 2, 1) == 1);  /* one other task: the other core */
    CHECK(andrea_cpu_team_from(2, 9, 1) == 1);  /* a busy machine: still one thread */
    CHECK(andrea_cpu_team_from(16, 5, 1) == 12);
    CHECK(andrea_cpu_team_from(4, 0, 2) == 4);  /* counts read at two moments: never above max */
    CHECK(andrea_cpu_team_from(0, 1, 1) == 1);
    const int now = andrea_cpu_team_size(4);
    CHECK_MSG(now >= 1 && now <= 4, "team %d of 4", now);
}

/* The same inputs give the same bits whatever the size of the OpenMP team (the engine lets the
 * team shrink under load): shapes large enough that every projection spans several blocks. */
static void test_results_do_not_depend_on_the_number_of_threads(void) {
    setenv("OMP_DYNAMIC", "false", 1); /* the engine then keeps exactly the team asked for */
    andrea_model m;
    make_model(&m, 2, 4, 32, 257, 257, 48, 12);
    const int B = 2, T = 40;
    int tok[80];
    random_tokens(tok, B * T, 257);
    eng_out one, three;
    eng_alloc(&one, &m.cfg, B, T);
    eng_alloc(&three, &m.cfg, B, T);
    const int was = omp_get_max_threads();
    omp_set_num_threads(1);
    CHECK(run_engine(&m, B, T, tok, NULL, NULL, &one) == 0);
    omp_set_num_threads(3);
    CHECK(run_engine(&m, B, T, tok, NULL, NULL, &three) == 0);
    omp_set_num_threads(was);
    const size_t LH = (size_t)m.cfg.n_layer * m.cfg.n_head;
    CHECK(memcmp(one.attn, three.attn, sizeof(float) * (size_t)B * LH * T * T) == 0);
    CHECK(memcmp(one.head_out, three.head_out, sizeof(float) * (size_t)B * LH * T * m.cfg.d_model) == 0);
    CHECK(memcmp(one.dla, three.dla, sizeof(float) * (size_t)B * LH * T) == 0);
    CHECK(memcmp(one.logits, three.logits, sizeof(float) * (size_t)B * T * m.cfg.vocab_size) == 0);
    unsetenv("OMP_DYNAMIC");
    eng_free(&one);
    eng_free(&three);
    andrea_model_free(&m);
}

/* Opens an engine for B=2, T=8 on the tiny model and runs io, returning the forward's rc. */
static int forward_tiny(andrea_forward_io *io, ae_error *err) {
    andrea_model m;
    make_model(&m, TL, TH, TC, TV, TVP, TMAXT, 10);
    andrea_engine *e = andrea_cpu_engine_open(&m, 2, 8, err);
    int rc = e ? andrea_engine_forward(e, io, err) : -2;
    andrea_engine_close(e);
    andrea_model_free(&m);
    return rc;
}

static void test_sequence_longer_than_max_T_is_refused(void) {
    int tok[9] = {0};
    ae_error err = {{0}};
    andrea_forward_io io = {.B = 1, .T = 9, .tokens = tok};
    CHECK(forward_tiny(&io, &err) == -1);
    CHECK_MSG(strstr(err.msg, "random-test-model: sequence length 9") != NULL, "%s", err.msg);
}

static void test_batch_larger_than_max_B_is_refused(void) {
    int tok[24] = {0};
    ae_error err = {{0}};
    andrea_forward_io io = {.B = 3, .T = 8, .tokens = tok};
    CHECK(forward_tiny(&io, &err) == -1);
    CHECK_MSG(strstr(err.msg, "batch size 3") != NULL, "%s", err.msg);
}

static void test_token_id_outside_vocabulary_is_refused(void) {
    int tok[4] = {1, 2, TV, 3};
    float logits[4 * TV];
    ae_error err = {{0}};
    andrea_forward_io io = {.B = 1, .T = 4, .tokens = tok, .logits = logits};
    CHECK(forward_tiny(&io, &err) == -1);
    CHECK_MSG(strstr(err.msg, "token id 50 at sequence 0 position 2") != NULL, "%s", err.msg);
}

static void test_negative_token_id_is_refused(void) {
    int tok[4] = {1, -1, 2, 3};
    ae_error err = {{0}};
    andrea_forward_io io = {.B = 1, .T = 4, .tokens = tok};
    CHECK(forward_tiny(&io, &err) == -1);
    CHECK_MSG(strstr(err.msg, "token id -1") != NULL, "%s", err.msg);
}

static void test_length_beyond_T_is_refused(void) {
    int tok[4] = {1, 2, 3, 4}, lengths[1] = {5};
    ae_error err = {{0}};
    andrea_forward_io io = {.B = 1, .T = 4, .tokens = tok, .lengths = lengths};
    CHECK(forward_tiny(&io, &err) == -1);
    CHECK_MSG(strstr(err.msg, "length 5 of sequence 0") != NULL, "%s", err.msg);
}

static void test_engine_max_T_beyond_model_context_is_refused(void) {
    andrea_model m;
    make_model(&m, TL, TH, TC, TV, TVP, TMAXT, 11);
    ae_error err = {{0}};
    andrea_engine *e = andrea_cpu_engine_open(&m, 1, TMAXT + 1, &err);
    CHECK(e == NULL);
    CHECK_MSG(strstr(err.msg, "max_seq_len 16") != NULL, "%s", err.msg);
    andrea_engine_close(e);
    andrea_model_free(&m);
}

/* Token losses (loss_targets / token_loss) equal the cross-entropy of the engine's own logits at
 * the loss rows, NaN elsewhere, for a whole forward, an ablated one and a resumed one; the engine
 * computes them from the loss rows' logits only, and with nothing else asked the last layer's W_O
 * and MLP run on the loss rows only, which must not change a loss. Bound per row: the logits of the
 * loss-only forward may round otherwise (sgemm over a different blocking of rows): the forward's
 * rounding relative to the row's largest |logit| (a loss moves by at most twice its largest logit
 * error), plus the loss's rounding to float (half an ulp of ~6 nats). More loss rows than one chunk of
 * 64 and a vocabulary over one column block. A target outside the vocabulary is refused. */
static double ce_ref(const float *row, int V, int y) {
    double mx = row[0], z = 0;
    for (int v = 1; v < V; v++) mx = row[v] > mx ? row[v] : mx;
    for (int v = 0; v < V; v++) z += exp(row[v] - mx);
    return -(row[y] - mx - log(z));
}

static void test_cpu_token_losses_equal_cross_entropy_of_the_logits(void) {
    andrea_model m;
    make_model(&m, 3, 4, 32, 300, 304, 48, 5);
    const int B = 3, T = 40, L = 3, H = 4, C = 32, V = 300;
    int tok[120], tgt[120], lengths[3] = {40, 31, 36};
    random_tokens(tok, B * T, V);
    for (int r = 0; r < B * T; r++) tgt[r] = (r % 3 != 1 && r % T + 1 < lengths[r / T]) ? tok[r + 1] : -1;
    ae_error err = {{0}};
    andrea_engine *e = andrea_cpu_engine_open(&m, B, T, &err);
    CHECK(e != NULL && andrea_engine_can_token_loss(e));
    if (!e) return;
    float *logits = calloc((size_t)B * T * V, sizeof(float)), *saved = calloc((size_t)L * B * T * C, sizeof(float));
    float loss[120], loss_resumed[120];
    const double n_round = forward_roundings(&m.cfg, T);
    for (int ab = -1; ab < L * H; ab += 5) { /* clean, then heads 4, 9 ablated (layers 1, 2) */
        unsigned char ablate[12] = {0};
        if (ab >= 0) ablate[ab] = 1;
        andrea_forward_io full = {.B = B, .T = T, .tokens = tok, .lengths = lengths, .ablate = ab >= 0 ? ablate : NULL,
                                  .logits = logits};
        andrea_forward_io only = {.B = B, .T = T, .tokens = tok, .lengths = lengths, .ablate = full.ablate,
                                  .loss_targets = tgt, .token_loss = loss, .layer_inputs = ab < 0 ? saved : NULL};
        CHECK_MSG(andrea_engine_forward(e, &full, &err) == 0 && andrea_engine_forward(e, &only, &err) == 0, "%s", err.msg);
        double worst = 0, worst_err = 0; /* worst: the largest error / bound */
        int nan_ok = 1;
        for (int r = 0; r < B * T; r++) {
            if (tgt[r] < 0) {
                nan_ok &= isnan(loss[r]);
                continue;
            }
            const double ce = ce_ref(logits + (size_t)r * V, V, tgt[r]), d = fabs(loss[r] - ce);
            double scale = 0;
            for (int v = 0; v < V; v++) scale = fmax(scale, fabs(logits[(size_t)r * V + v]));
            const double bound = CHECK_FP32_TOL(n_round, scale) + FLT_EPSILON * fabs(ce);
            worst = d / bound > worst || isnan(d) ? (isnan(d) ? 1e9 : d / bound) : worst;
            worst_err = fmax(worst_err, d);
        }
        fprintf(stderr, "  ablated %d: worst |loss - ce| %.3g, %.3g of its bound\n", ab, worst_err, worst);
        CHECK_MSG(worst <= 1 && nan_ok, "ablated %d: worst |loss - ce| %g x its bound, NaN where no target %d", ab, worst,
                  nan_ok);
        if (ab < 0) continue;
        const int l = ab / H;
        andrea_forward_io part = {.B = B, .T = T, .tokens = tok, .lengths = lengths, .ablate = ablate,
                                  .loss_targets = tgt, .token_loss = loss_resumed, .resume_layer = l,
                                  .resume_x = saved + (size_t)l * B * T * C};
        CHECK_MSG(andrea_engine_forward(e, &part, &err) == 0, "%s", err.msg);
        CHECK_MSG(memcmp(loss, loss_resumed, sizeof loss) == 0, "ablated %d: resumed losses differ", ab);
    }
    tgt[5] = V;
    andrea_forward_io bad = {.B = B, .T = T, .tokens = tok, .loss_targets = tgt, .token_loss = loss};
    CHECK(andrea_engine_forward(e, &bad, &err) == -1);
    CHECK_MSG(strstr(err.msg, "loss target 300 at row 5 is outside the vocabulary") != NULL, "message: %s", err.msg);
    andrea_engine_close(e);
    free(logits);
    free(saved);
    andrea_model_free(&m);
}

/* The CPU's batched causal check: one forward of K copies of the items, copy j with its own head
 * ablated (ablate_per_seq), resumed after that layer's attention from the saved head outputs,
 * gives each copy the token losses of a forward of the items alone with that head ablated. The
 * engine grows to the K copies (reserve_batch), and refuses a batch whose size overflows. */
static void test_per_sequence_ablation_equals_one_forward_per_head(void) {
    andrea_model m;
    make_model(&m, 3, 4, 32, 300, 304, 48, 8);
    enum { B = 2, T = 40, L = 3, H = 4, C = 32, V = 300, NH = 12, K = 4 };
    static int tok[K * B * T], tgt[K * B * T], lengths[K * B];
    static unsigned char mask[K * B * NH];
    static float saved[L * B * T * C], heads[L * B * T * C], xs[K * B * T * C], os[K * B * T * C];
    static float batch_loss[K * B * T], one_loss[B * T], logits[B * T * V];
    random_tokens(tok, B * T, V);
    lengths[0] = T;
    lengths[1] = 29;
    for (int r = 0; r < B * T; r++) tgt[r] = r % 4 != 2 && r % T + 1 < lengths[r / T] ? tok[r + 1] : -1;
    ae_error err = {{0}};
    andrea_engine *e = andrea_cpu_engine_open(&m, B, T, &err);
    CHECK(e && andrea_engine_can_ablate_per_seq(e) && andrea_engine_max_batch(e) == B);
    if (!e) return;
    CHECK_MSG(andrea_engine_reserve_batch(e, K * B, &err) == 0 && andrea_engine_max_batch(e) == K * B, "%s", err.msg);
    CHECK(andrea_engine_reserve_batch(e, INT_MAX, &err) == -1 && strstr(err.msg, "too large") &&
          andrea_engine_max_batch(e) == K * B);
    andrea_forward_io clean = {.B = B, .T = T, .tokens = tok, .lengths = lengths, .loss_targets = tgt,
                               .token_loss = one_loss, .layer_inputs = saved, .layer_heads = heads};
    CHECK_MSG(andrea_engine_forward(e, &clean, &err) == 0, "%s", err.msg);
    /* Bound per loss row: the batched forward runs other sgemm shapes (K*B rows, resumed) than the
     * forward alone, so the logits differ in their rounding: CHECK_FP32_TOL over the forward's chain,
     * relative to the row's largest |logit| (a loss moves by at most twice its row's largest logit
     * error: -dz_y + sum_v p_v dz_v); plus each loss's own rounding to float, half an ulp of |loss|
     * each. A loss of ~6-10 nats rounds alone to ~5e-7: no absolute 1e-6 holds on every CPU. */
    andrea_forward_io with_logits = {.B = B, .T = T, .tokens = tok, .lengths = lengths, .logits = logits};
    CHECK_MSG(andrea_engine_forward(e, &with_logits, &err) == 0, "%s", err.msg);
    double row_scale[B * T];
    for (int r = 0; r < B * T; r++) {
        row_scale[r] = 0;
        for (int v = 0; v < V; v++) row_scale[r] = fmax(row_scale[r], fabs(logits[(size_t)r * V + v]));
    }
    const double n_round = forward_roundings(&m.cfg, T);
    double worst_ratio = 0, worst_err = 0, least_moved = INFINITY;
    for (int l = 0; l < L; l++) {
        const int h_of[K] = {-1, 0, 2, 3}; /* copy j ablates head h_of[j] of layer l (-1: none) */
        memset(mask, 0, sizeof mask);
        for (int j = 0; j < K; j++) {
            memcpy(tok + j * B * T, tok, sizeof(int) * B * T);
            memcpy(tgt + j * B * T, tgt, sizeof(int) * B * T);
            memcpy(lengths + j * B, lengths, sizeof(int) * B);
            memcpy(xs + (size_t)j * B * T * C, saved + (size_t)l * B * T * C, sizeof(float) * B * T * C);
            memcpy(os + (size_t)j * B * T * C, heads + (size_t)l * B * T * C, sizeof(float) * B * T * C);
            for (int b = 0; b < B && h_of[j] >= 0; b++) mask[(j * B + b) * NH + l * H + h_of[j]] = 1;
        }
        andrea_forward_io batch = {.B = K * B, .T = T, .tokens = tok, .lengths = lengths, .ablate = mask,
                                   .ablate_per_seq = 1, .loss_targets = tgt, .token_loss = batch_loss,
                                   .resume_layer = l, .resume_x = l ? xs : NULL, .resume_heads = os};
        CHECK_MSG(andrea_engine_forward(e, &batch, &err) == 0, "%s", err.msg);
        for (int j = 0; j < K; j++) {
            unsigned char single[NH] = {0};
            if (h_of[j] >= 0) single[l * H + h_of[j]] = 1;
            andrea_forward_io alone = {.B = B, .T = T, .tokens = tok, .lengths = lengths, .ablate = single,
                                       .loss_targets = tgt, .token_loss = one_loss};
            CHECK_MSG(andrea_engine_forward(e, &alone, &err) == 0, "%s", err.msg);
            double worst = 0, worst_bound = 0, moved = 0; /* worst: the largest error / bound */
            for (int r = 0; r < B * T; r++) {
                const float a = batch_loss[(size_t)j * B * T + r], o = one_loss[r];
                if (isnan(a) != isnan(o)) worst = 1e9;
                if (isnan(a) || isnan(o)) continue;
                const double bound = CHECK_FP32_TOL(n_round, row_scale[r]) + FLT_EPSILON * fabs((double)o);
                if (fabs((double)a - o) / bound > worst) worst = fabs((double)a - o) / bound, worst_bound = bound;
                worst_err = fmax(worst_err, fabs((double)a - o));
                /* an ablation moves the clean copy's losses by more than rounding */
                if (j > 0) moved = fmax(moved, fabs((double)a - batch_loss[r]) / bound);
            }
            worst_ratio = fmax(worst_ratio, worst);
            CHECK_MSG(worst <= 1, "layer %d copy %d: batched losses differ from one forward by %g x their bound (%g)", l, j,
                      worst, worst_bound);
            if (j > 0) least_moved = fmin(least_moved, moved);
            CHECK_MSG(j == 0 || moved > 100, "layer %d copy %d: the ablation moved no loss by more than 100 bounds (%g)", l,
                      j, moved);
        }
    }
    fprintf(stderr, "  batched vs alone: worst error %.3g, %.3g of its bound; an ablation moves a loss >= %.3g bounds\n",
            worst_err, worst_ratio, least_moved);
    andrea_engine_close(e);
    andrea_model_free(&m);
}

int main(void) {
    RUN(test_forward_matches_naive_double_reference);
    RUN(test_cpu_token_losses_equal_cross_entropy_of_the_logits);
    RUN(test_head_dim_72_shape_matches_reference);
    RUN(test_long_sequence_spanning_several_attention_bands_matches_reference);
    RUN(test_attention_rows_sum_to_one_over_the_causal_prefix);
    RUN(test_padding_does_not_change_earlier_positions);
    RUN(test_head_contributions_sum_to_attention_output);
    RUN(test_norms_are_the_l2_norms_of_head_out);
    RUN(test_dla_matches_naive_double_recomputation);
    RUN(test_ablating_a_head_equals_zeroing_its_wo_columns);
    RUN(test_uninstrumented_run_gives_the_same_logits);
    RUN(test_engine_options_read_developer_overrides_in_one_place);
    RUN(test_resumed_forward_equals_the_whole_ablated_forward);
    RUN(test_per_sequence_ablation_equals_one_forward_per_head);
    RUN(test_team_leaves_the_cores_others_use);
    RUN(test_results_do_not_depend_on_the_number_of_threads);
    RUN(test_sequence_longer_than_max_T_is_refused);
    RUN(test_batch_larger_than_max_B_is_refused);
    RUN(test_token_id_outside_vocabulary_is_refused);
    RUN(test_negative_token_id_is_refused);
    RUN(test_length_beyond_T_is_refused);
    RUN(test_engine_max_T_beyond_model_context_is_refused);
    return check_summary("test_forward_cpu");
}
