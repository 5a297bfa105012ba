/* ov_classes.c — successor and copy-suppression scores from each head's effective OV circuit
 * (see ov_classes.h for the definitions, docs/scores.md for the choices and their reasons).
 *
 * Notation (row vectors, C = d_model, hd = head_dim, V = vocab_size):
 *   wv [hd, C]: head h's value rows of qkvw with ln1w folded in (wv[j][c] = qkvw[2C + h hd + j][c] ln1w[c]),
 *   wo [hd, C]: its W_O rows (attprojw[c][h hd + j]), each centred over c, then times lnfw[c],
 *   x_t: centre(e_t) (layer 0: centre(W_E[t])), so the row of token t is (x_t wv^T) wo W_U^T.
 * Centring wo's rows is LN_f's centring of the head's output (centring is linear); dropping the
 * LayerNorms' divisions by a norm scales each row by a positive number, which changes no rank
 * within a row, and both scores are ranks within a row.
 *
 * Cost (ANDREA-120M: 144 heads, V = 50257, N = 1024 checked rows): the suppression rows are
 * N x V per head, 7.4e9 entries in all, 1.7 TFLOP as two rank-hd products. Almost every row
 * settles early: a row is out once K entries at or below its own are seen, which for a head that
 * does not suppress takes a few hundred entries. So each head first walks the vocabulary in
 * chunks of VOCAB_CHUNK on its own, the settled rows leaving after each chunk, each chunk in
 * whichever form is cheaper for the rows still open: Y form, L = X (wo W_U^T), at hd C + n hd
 * per column, while many are open; Z form, L = (X wo) W_U^T, at n C, once fewer than ~hd are.
 * A head that suppresses keeps its rows open and walks on. Once a head has HANDOFF_ROWS or fewer
 * open (after its first chunk, for a head that does not suppress), its rows join one table, and
 * the rows of all heads walk the rest of the vocabulary together: W_U (154 MB for GPT-2) read
 * by one pass, not one a head (a walk a head took 3.4 s against 2.2 s for the whole run on 2
 * cores: each head re-read W_U for its last few rows). Every product a
 * thread makes is a single-threaded BLAS call whose shape and inputs depend on the weights
 * alone (the table is in head order, its tasks cut by rows and columns), so no thread count
 * changes a score. Measured: docs/scores.md.
 */
#include "ov_classes.h"

#include <errno.h>
#include <math.h>
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cblas.h>

#include "../common/checked_size.h"
#include "../common/rng.h"
#include "../engine/blas_core.h"
#include "../probes/ordinals.h"

#define VOCAB_CHUNK 512   /* columns of one product of the suppression walk */
#define HANDOFF_ROWS 64   /* a head's first walk ends when this many rows or fewer are open */
#define WALK_COLS 4096    /* columns a step of the shared walk */
#define WALK_ROWS 64      /* rows a task of the shared walk */
#define LN_EPS 1e-5

/* ---------- the effective embedding and the token sample ---------- */

static double gelu(double v) { /* GPT-2's tanh approximation, as engine/forward_cpu.c */
    return 0.5 * v * (1.0 + tanh(0.7978845608028654 * (v + 0.044715 * v * v * v)));
}

/* e [n, C] = W_E[id] + MLP0(LN2_0(W_E[id])) for ids [n]: block 0 on each token alone with its
 * attention left out. The full LayerNorm (eps 1e-5) and every bias here: MLP0 is not linear, so
 * no part of its input can be dropped the way the ranks below allow. The two products in float
 * on the model's own float weights, as the forward computes them (in double they were half of
 * the run for ANDREA-120M); LayerNorm statistics and the sums into e in double. */
static int effective_embedding(const andrea_model *m, const int *ids, int n, double *e, ae_error *err) {
    const int C = m->cfg.d_model, F = 4 * C;
    size_t nC, nF;
    if (ae_mul((size_t)n, (size_t)C, &nC) || ae_mul((size_t)n, (size_t)F, &nF))
        return andrea_fail(err, "ov classes: sizes overflow");
    float *x = malloc(sizeof(float) * nC), *h = malloc(sizeof(float) * nF), *y = malloc(sizeof(float) * nC);
    if (!x || !h || !y) {
        free(x), free(h), free(y);
        return andrea_fail(err, "ov classes: out of memory");
    }
    for (int i = 0; i < n; i++) {
        const float *w = m->p.wte + (size_t)ids[i] * C;
        double mean = 0, var = 0;
        for (int c = 0; c < C; c++) mean += w[c];
        mean /= C;
        for (int c = 0; c < C; c++) var += (w[c] - mean) * (w[c] - mean);
        const double rs = 1.0 / sqrt(var / C + LN_EPS);
        for (int c = 0; c < C; c++) x[(size_t)i * C + c] = (float)((w[c] - mean) * rs * m->p.ln2w[c] + m->p.ln2b[c]);
    }
    /* h [n, 4C] = GELU(x fcw^T + fcb) (layer 0's fcw [4C, C]); y [n, C] = h fcprojw^T ([C, 4C]) */
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, n, F, C, 1.0f, x, C, m->p.fcw, C, 0.0f, h, F);
    for (int i = 0; i < n; i++)
        for (int j = 0; j < F; j++) h[(size_t)i * F + j] = (float)gelu((double)h[(size_t)i * F + j] + m->p.fcb[j]);
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, n, C, F, 1.0f, h, F, m->p.fcprojw, F, 0.0f, y, C);
    for (int i = 0; i < n; i++)
        for (int c = 0; c < C; c++)
            e[(size_t)i * C + c] = (double)m->p.wte[(size_t)ids[i] * C + c] + y[(size_t)i * C + c] + m->p.fcprojb[c];
    free(x), free(h), free(y);
    return 0;
}

/* Each row minus its mean over C: the centring of the LayerNorm the head reads through. */
static void centre_rows(double *x, int n, int C) {
    for (int i = 0; i < n; i++) {
        double *r = x + (size_t)i * C, mean = 0;
        for (int c = 0; c < C; c++) mean += r[c];
        mean /= C;
        for (int c = 0; c < C; c++) r[c] -= mean;
    }
}

static int cmp_int(const void *a, const void *b) {
    const int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

/* The checked rows: every token when V <= MAX, else a partial Fisher-Yates shuffle of 0..V-1
 * (for i = 0..MAX-1 swap i with i + ae_rng_below(state, V - i), state = the seed), its first
 * MAX sorted. */
static int sample_tokens(int V, int *out, int *n, ae_error *err) {
    if (V <= OV_CLASSES_SUPPRESSION_MAX_TOKENS) {
        for (int i = 0; i < V; i++) out[i] = i;
        *n = V;
        return 0;
    }
    int *perm = malloc(sizeof(int) * (size_t)V);
    if (!perm) return andrea_fail(err, "ov classes: out of memory");
    for (int i = 0; i < V; i++) perm[i] = i;
    uint64_t state = OV_CLASSES_SUPPRESSION_SEED;
    for (int i = 0; i < OV_CLASSES_SUPPRESSION_MAX_TOKENS; i++) {
        const int j = i + (int)ae_rng_below(&state, (uint64_t)(V - i)), t = perm[i];
        perm[i] = perm[j];
        perm[j] = t;
    }
    memcpy(out, perm, sizeof(int) * OV_CLASSES_SUPPRESSION_MAX_TOKENS);
    free(perm);
    qsort(out, OV_CLASSES_SUPPRESSION_MAX_TOKENS, sizeof(int), cmp_int);
    *n = OV_CLASSES_SUPPRESSION_MAX_TOKENS;
    return 0;
}

/* ---------- per head ---------- */

typedef struct { /* read-only inputs shared by every head */
    const andrea_model *m;
    const andrea_ordinals *ord;
    int N;                 /* checked rows */
    const int *sample;     /* [N] their tokens, ascending */
    const float *x0, *x1;  /* [N, C] centred W_E rows (layer 0's heads), centred e rows (the others) */
    const double *s0, *s1; /* [n_tok, C] the same for the ordinal tokens */
    const double *us;      /* [n_tok, C] the ordinal tokens' unembedding rows */
} ov_inputs;

typedef struct { /* one thread's scratch */
    double *wv, *wo;             /* [hd, C] */
    float *wvf, *wof;            /* [hd, C] */
    float *xh, *z, *g, *y, *l;   /* [N, hd], [N, C], [N, C], [hd, CHUNK], [N, CHUNK] */
    double *own;                 /* [N] */
    int *cnt, *act;              /* [N] */
    double *sv, *sz, *sl;        /* [n_tok, hd], [n_tok, C], [max kind, max kind] */
} ov_scratch;

static void scratch_free(ov_scratch *s) {
    void *p[] = {s->wv, s->wo, s->wvf, s->wof, s->xh, s->z,  s->g, s->y,
                 s->l,  s->own, s->cnt, s->act, s->sv, s->sz, s->sl};
    for (size_t i = 0; i < sizeof p / sizeof p[0]; i++) free(p[i]);
    memset(s, 0, sizeof *s);
}

/* Sizes here cannot overflow: N <= 1024, n_tok <= ORDINALS_MAX_ITEMS, and C x C floats were
 * allocated for the model already. */
static int scratch_alloc(ov_scratch *s, const ov_inputs *in) {
    const size_t C = (size_t)in->m->cfg.d_model, hd = (size_t)in->m->cfg.head_dim, N = (size_t)in->N;
    const size_t T = (size_t)(in->ord->n_tok > 0 ? in->ord->n_tok : 1);
    size_t kmax = 1;
    for (int k = 0; k < in->ord->n_kinds; k++) {
        const size_t nk = (size_t)(in->ord->start[k + 1] - in->ord->start[k]);
        kmax = nk > kmax ? nk : kmax;
    }
    memset(s, 0, sizeof *s);
    s->wv = malloc(sizeof(double) * hd * C);
    s->wo = malloc(sizeof(double) * hd * C);
    s->wvf = malloc(sizeof(float) * hd * C);
    s->wof = malloc(sizeof(float) * hd * C);
    s->xh = malloc(sizeof(float) * N * hd);
    s->z = malloc(sizeof(float) * N * C);
    s->g = malloc(sizeof(float) * N * C);
    s->y = malloc(sizeof(float) * hd * VOCAB_CHUNK);
    s->l = malloc(sizeof(float) * N * VOCAB_CHUNK);
    s->own = malloc(sizeof(double) * N);
    s->cnt = malloc(sizeof(int) * N);
    s->act = malloc(sizeof(int) * N);
    s->sv = malloc(sizeof(double) * T * hd);
    s->sz = malloc(sizeof(double) * T * C);
    s->sl = malloc(sizeof(double) * kmax * kmax);
    return s->wv && s->wo && s->wvf && s->wof && s->xh && s->z && s->g && s->y && s->l && s->own && s->cnt &&
                   s->act && s->sv && s->sz && s->sl
               ? 0
               : -1;
}

/* wv, wo [hd, C] of head h in layer l (notation at the top), in double and in float. */
static void head_factors(const andrea_model *m, int l, int h, ov_scratch *s) {
    const int C = m->cfg.d_model, hd = m->cfg.head_dim;
    const float *qkv = m->p.qkvw + (size_t)l * 3 * C * C + ((size_t)2 * C + (size_t)h * hd) * C;
    const float *g1 = m->p.ln1w + (size_t)l * C, *ao = m->p.attprojw + (size_t)l * C * C;
    for (int j = 0; j < hd; j++) {
        double *v = s->wv + (size_t)j * C, *o = s->wo + (size_t)j * C, mean = 0;
        for (int c = 0; c < C; c++) {
            v[c] = (double)qkv[(size_t)j * C + c] * g1[c];
            o[c] = ao[(size_t)c * C + (size_t)h * hd + j];
            mean += o[c];
        }
        mean /= C;
        for (int c = 0; c < C; c++) o[c] = (o[c] - mean) * m->p.lnfw[c];
    }
    for (size_t i = 0; i < (size_t)hd * C; i++) {
        s->wvf[i] = (float)s->wv[i];
        s->wof[i] = (float)s->wo[i];
    }
}

/* Share of pairs whose successor is the first maximum of the source's row among its kind's
 * tokens (in double: n_tok is small). */
static double successor_share(const ov_inputs *in, ov_scratch *s, int l) {
    const andrea_ordinals *o = in->ord;
    if (!o->n_pairs) return NAN;
    const int C = in->m->cfg.d_model, hd = in->m->cfg.head_dim, T = o->n_tok;
    /* sz [T, C] = (x wv^T) wo: the head's centred output for each ordinal token */
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, T, hd, C, 1.0, l ? in->s1 : in->s0, C, s->wv, C, 0.0, s->sv,
                hd);
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, T, C, hd, 1.0, s->sv, hd, s->wo, C, 0.0, s->sz, C);
    int hits = 0;
    for (int k = 0; k < o->n_kinds; k++) {
        const int t0 = o->start[k], nk = o->start[k + 1] - t0;
        /* sl [nk, nk]: rows and columns restricted to kind k */
        cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, nk, nk, C, 1.0, s->sz + (size_t)t0 * C, C,
                    in->us + (size_t)t0 * C, C, 0.0, s->sl, nk);
        for (int p = o->pair_start[k]; p < o->pair_start[k + 1]; p++) {
            const double *row = s->sl + (size_t)o->pair[2 * p] * nk;
            int best = 0;
            for (int j = 1; j < nk; j++)
                if (row[j] > row[best]) best = j; /* ties: the first in item order */
            hits += best == o->pair[2 * p + 1];
        }
    }
    return (double)hits / o->n_pairs;
}

/* The largest float <= v: a float f is <= v exactly when f <= this. */
static float float_at_most(double v) {
    float f = (float)v;
    if ((double)f > v) f = nextafterf(f, -INFINITY);
    return f;
}

/* One chunk of columns v0 .. v0+vb-1 for the open rows act[0..n_act): counts the entries at or
 * below each row's own (its own entry excluded) and keeps the rows with fewer than K. */
static int suppression_chunk(const ov_inputs *in, ov_scratch *s, int n_act, int v0, int vb) {
    const int C = in->m->cfg.d_model, hd = in->m->cfg.head_dim;
    const float *w = in->m->p.wte + (size_t)v0 * C;
    const int full = n_act == in->N; /* act is 0..N-1: rows need no gathering */
    if ((long)n_act * (C - hd) > (long)hd * C) { /* Y form */
        const float *x = s->xh;
        if (!full) {
            for (int a = 0; a < n_act; a++)
                memcpy(s->g + (size_t)a * hd, s->xh + (size_t)s->act[a] * hd, sizeof(float) * hd);
            x = s->g;
        }
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, hd, vb, C, 1.0f, s->wof, C, w, C, 0.0f, s->y, vb);
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n_act, vb, hd, 1.0f, x, hd, s->y, vb, 0.0f, s->l, vb);
    } else { /* Z form */
        const float *z = s->z;
        if (!full) {
            for (int a = 0; a < n_act; a++)
                memcpy(s->g + (size_t)a * C, s->z + (size_t)s->act[a] * C, sizeof(float) * C);
            z = s->g;
        }
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, n_act, vb, C, 1.0f, z, C, w, C, 0.0f, s->l, vb);
    }
    int keep = 0;
    for (int a = 0; a < n_act; a++) {
        const int i = s->act[a], t = in->sample[i];
        const float *row = s->l + (size_t)a * vb, thr = float_at_most(s->own[i]);
        int c = 0;
        for (int u = 0; u < vb; u++) c += row[u] <= thr;
        if (t >= v0 && t < v0 + vb && row[t - v0] <= thr) c--; /* its own entry is no rival */
        s->cnt[i] += c;
        if (s->cnt[i] < OV_CLASSES_SUPPRESSION_K) s->act[keep++] = i;
    }
    return keep;
}

/* One head's rows still open after its first walk, and the walk of all heads' open rows over the
 * rest of the vocabulary together: one pass over W_U for all of them instead of one a head. */
typedef struct {
    int n;                        /* rows */
    float *z;                     /* [n, C] each row's (x wv^T) wo */
    float *thr;                   /* [n] the largest float <= its own entry */
    int *tok, *cnt, *head, *from; /* [n] its token, entries <= thr so far, its head, first column not seen */
} ov_rows;

static void rows_free(ov_rows *w) {
    free(w->z);
    free(w->thr);
    free(w->tok);
    free(w->cnt);
    free(w->head);
    free(w->from);
    memset(w, 0, sizeof *w);
}

static int rows_alloc(ov_rows *w, size_t n, int C) {
    memset(w, 0, sizeof *w);
    if (!n) n = 1;
    w->z = malloc(sizeof(float) * n * (size_t)C);
    w->thr = malloc(sizeof(float) * n);
    w->tok = malloc(sizeof(int) * n);
    w->cnt = malloc(sizeof(int) * n);
    w->head = malloc(sizeof(int) * n);
    w->from = malloc(sizeof(int) * n);
    return w->z && w->thr && w->tok && w->cnt && w->head && w->from ? 0 : -1;
}

/* Head i's first walk: rows x wv^T wo, their own entries, then chunks until HANDOFF_ROWS or fewer
 * rows are open. Returns the rows settled as suppressed when the vocabulary was walked through,
 * else 0 with the open rows in *open (-1: out of memory). */
static int suppression_first_walk(const ov_inputs *in, ov_scratch *s, int l, int i, ov_rows *open) {
    const int C = in->m->cfg.d_model, hd = in->m->cfg.head_dim, V = in->m->cfg.vocab_size, N = in->N;
    /* xh [N, hd] = x wv^T; z [N, C] = xh wo */
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, N, hd, C, 1.0f, l ? in->x1 : in->x0, C, s->wvf, C, 0.0f,
                s->xh, hd);
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, N, C, hd, 1.0f, s->xh, hd, s->wof, C, 0.0f, s->z, C);
    for (int r = 0; r < N; r++) {
        const float *z = s->z + (size_t)r * C, *wt = in->m->p.wte + (size_t)in->sample[r] * C;
        double d = 0;
        for (int c = 0; c < C; c++) d += (double)z[c] * wt[c];
        s->own[r] = d;
        s->cnt[r] = 0;
        s->act[r] = r;
    }
    int n_act = N, v0 = 0;
    for (; v0 < V && n_act > HANDOFF_ROWS; v0 += VOCAB_CHUNK)
        n_act = suppression_chunk(in, s, n_act, v0, V - v0 < VOCAB_CHUNK ? V - v0 : VOCAB_CHUNK);
    if (v0 >= V || n_act == 0) return n_act;
    if (rows_alloc(open, (size_t)n_act, C)) return -1;
    for (int a = 0; a < n_act; a++) {
        const int r = s->act[a];
        memcpy(open->z + (size_t)a * C, s->z + (size_t)r * C, sizeof(float) * C);
        open->thr[a] = float_at_most(s->own[r]);
        open->tok[a] = in->sample[r];
        open->cnt[a] = s->cnt[r];
        open->head[a] = i;
        open->from[a] = v0;
    }
    open->n = n_act;
    return 0;
}

/* One step of the shared walk, columns c0..c1-1: tasks of WALK_ROWS rows x VOCAB_CHUNK columns
 * (fixed by the rows and columns alone), each a single-threaded sgemm; part[sub * n + row] gets
 * the row's entries <= thr among the columns it had not seen, its own column excluded. */
static int walk_step(const andrea_model *m, const ov_rows *w, int c0, int c1, int *part) {
    const int C = m->cfg.d_model, nsub = (c1 - c0 + VOCAB_CHUNK - 1) / VOCAB_CHUNK;
    const int nblk = (w->n + WALK_ROWS - 1) / WALK_ROWS;
    int oom = 0;
#pragma omp parallel
    {
        float *l = malloc(sizeof(float) * WALK_ROWS * VOCAB_CHUNK);
        if (!l) {
#pragma omp atomic write
            oom = 1;
        }
#pragma omp for schedule(dynamic, 1)
        for (int task = 0; task < nblk * nsub; task++) {
            if (!l) continue;
            const int r0 = task / nsub * WALK_ROWS, u0 = c0 + task % nsub * VOCAB_CHUNK;
            const int nr = w->n - r0 < WALK_ROWS ? w->n - r0 : WALK_ROWS;
            const int ub = c1 - u0 < VOCAB_CHUNK ? c1 - u0 : VOCAB_CHUNK;
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, nr, ub, C, 1.0f, w->z + (size_t)r0 * C, C,
                        m->p.wte + (size_t)u0 * C, C, 0.0f, l, ub);
            for (int a = 0; a < nr; a++) {
                const int r = r0 + a, t = w->tok[r], from = w->from[r] > u0 ? w->from[r] - u0 : 0;
                const float *row = l + (size_t)a * ub, thr = w->thr[r];
                int c = 0;
                for (int u = from; u < ub; u++) c += row[u] <= thr;
                if (t >= u0 + from && t < u0 + ub && row[t - u0] <= thr) c--; /* its own entry is no rival */
                part[(size_t)(task % nsub) * w->n + r] = c;
            }
        }
        free(l);
    }
    return oom ? -1 : 0;
}

/* Walks the open rows of every head over the columns each has not seen, WALK_COLS at a time,
 * dropping the rows that reach K; adds the rows that never do to suppressed[head]. */
static int shared_walk(const andrea_model *m, ov_rows *w, int *suppressed) {
    const int C = m->cfg.d_model, V = m->cfg.vocab_size;
    int *part = malloc(sizeof(int) * (size_t)(w->n ? w->n : 1) * (WALK_COLS / VOCAB_CHUNK));
    if (!part) return -1;
    int c0 = V;
    for (int r = 0; r < w->n; r++) c0 = w->from[r] < c0 ? w->from[r] : c0;
    for (; c0 < V && w->n > 0; c0 += WALK_COLS) {
        const int c1 = V - c0 < WALK_COLS ? V : c0 + WALK_COLS, nsub = (c1 - c0 + VOCAB_CHUNK - 1) / VOCAB_CHUNK;
        if (walk_step(m, w, c0, c1, part)) {
            free(part);
            return -1;
        }
        int keep = 0;
        for (int r = 0; r < w->n; r++) {
            for (int sub = 0; sub < nsub; sub++) w->cnt[r] += part[(size_t)sub * w->n + r];
            if (w->cnt[r] >= OV_CLASSES_SUPPRESSION_K) continue;
            if (keep != r) {
                memmove(w->z + (size_t)keep * C, w->z + (size_t)r * C, sizeof(float) * C);
                w->thr[keep] = w->thr[r];
                w->tok[keep] = w->tok[r];
                w->cnt[keep] = w->cnt[r];
                w->head[keep] = w->head[r];
                w->from[keep] = w->from[r];
            }
            keep++;
        }
        w->n = keep;
    }
    for (int r = 0; r < w->n; r++) suppressed[w->head[r]]++;
    free(part);
    return 0;
}

/* ---------- the whole model ---------- */

/* The heads' open rows in one table, head after head (the order threads finished them in must not
 * decide the shapes of the shared walk's products). */
static int gather_open(const ov_rows *open, int NH, int C, ov_rows *w) {
    size_t n = 0;
    for (int i = 0; i < NH; i++) n += (size_t)open[i].n;
    if (rows_alloc(w, n, C)) return -1;
    for (int i = 0; i < NH; i++) {
        const ov_rows *o = &open[i];
        const size_t k = (size_t)w->n;
        if (o->n == 0) continue; /* a head with no open row may hold no buffers (memcpy from NULL) */
        memcpy(w->z + k * C, o->z, sizeof(float) * (size_t)o->n * C);
        memcpy(w->thr + k, o->thr, sizeof(float) * (size_t)o->n);
        memcpy(w->tok + k, o->tok, sizeof(int) * (size_t)o->n);
        memcpy(w->cnt + k, o->cnt, sizeof(int) * (size_t)o->n);
        memcpy(w->head + k, o->head, sizeof(int) * (size_t)o->n);
        memcpy(w->from + k, o->from, sizeof(int) * (size_t)o->n);
        w->n += o->n;
    }
    return 0;
}

/* Every head on the OpenMP threads (OpenBLAS kept to one thread meanwhile, as circuits.c does):
 * successor, and the suppression rows' first walk; then the shared walk of the open rows. */
static int score_heads(const ov_inputs *in, andrea_ov_classes *out, ae_error *err) {
    const int H = out->n_head, NH = out->n_layer * H, C = in->m->cfg.d_model;
    if (andrea_blas_reserve(omp_get_max_threads(), err)) return -1;
    ov_rows *open = calloc((size_t)NH, sizeof *open), walk;
    memset(&walk, 0, sizeof walk);
    int *suppressed = calloc((size_t)NH, sizeof(int)), oom = !open || !suppressed;
    const int blas = andrea_blas_threads();
    andrea_blas_set_threads(1);
#pragma omp parallel if (!oom)
    {
        ov_scratch s;
        memset(&s, 0, sizeof s);
        const int ok = !oom && scratch_alloc(&s, in) == 0;
        if (!ok) {
#pragma omp atomic write
            oom = 1;
        }
#pragma omp for schedule(dynamic, 1)
        for (int i = 0; i < NH; i++) {
            if (!ok) continue;
            head_factors(in->m, i / H, i % H, &s);
            out->successor[i] = successor_share(in, &s, i / H);
            suppressed[i] = suppression_first_walk(in, &s, i / H, i, &open[i]);
            if (suppressed[i] < 0) {
                suppressed[i] = 0;
#pragma omp atomic write
                oom = 1;
            }
        }
        scratch_free(&s);
    }
    if (!oom) oom = gather_open(open, NH, C, &walk) || shared_walk(in->m, &walk, suppressed);
    andrea_blas_set_threads(blas);
    for (int i = 0; !oom && i < NH; i++) out->suppression[i] = (double)suppressed[i] / in->N;
    for (int i = 0; open && i < NH; i++) rows_free(&open[i]);
    free(open);
    free(suppressed);
    rows_free(&walk);
    return oom ? andrea_fail(err, "ov classes: out of memory") : 0;
}

typedef struct { /* what prepare_inputs allocates for ov_inputs */
    double *d;
    float *f;
    int *ids;
} ov_memory;

/* The shared inputs: the checked tokens and the ordinal tokens, through W_E and through block 0. */
static int prepare_inputs(const andrea_model *m, const andrea_ordinals *o, ov_inputs *in, ov_memory *mem, ae_error *err) {
    const int C = m->cfg.d_model, T = o->n_tok, NMAX = OV_CLASSES_SUPPRESSION_MAX_TOKENS;
    const size_t rows = (size_t)NMAX + (size_t)T;
    size_t n_d, n_f;
    if (ae_mul(rows, (size_t)C, &n_d) || ae_mul(n_d, 3, &n_d) || ae_mul((size_t)2 * NMAX, (size_t)C, &n_f))
        return andrea_fail(err, "ov classes: sizes overflow");
    mem->ids = malloc(sizeof(int) * rows);
    mem->d = malloc(sizeof(double) * n_d); /* W_E rows [R, C], effective rows [R, C], unembedding [T, C] */
    mem->f = malloc(sizeof(float) * n_f);  /* the checked rows in float: W_E [N, C], effective [N, C] */
    if (!mem->ids || !mem->d || !mem->f) return andrea_fail(err, "ov classes: out of memory");
    int N = 0;
    if (sample_tokens(m->cfg.vocab_size, mem->ids, &N, err)) return -1;
    memcpy(mem->ids + N, o->tok, sizeof(int) * (size_t)T);
    const int R = N + T;
    double *raw = mem->d, *eff = raw + (size_t)R * C, *us = eff + (size_t)R * C;
    if (effective_embedding(m, mem->ids, R, eff, err)) return -1;
    for (int i = 0; i < R; i++)
        for (int c = 0; c < C; c++) raw[(size_t)i * C + c] = m->p.wte[(size_t)mem->ids[i] * C + c];
    memcpy(us, raw + (size_t)N * C, sizeof(double) * (size_t)T * C);
    centre_rows(raw, R, C);
    centre_rows(eff, R, C);
    for (size_t i = 0; i < (size_t)N * C; i++) {
        mem->f[i] = (float)raw[i];
        mem->f[(size_t)N * C + i] = (float)eff[i];
    }
    *in = (ov_inputs){.m = m, .ord = o, .N = N, .sample = mem->ids, .x0 = mem->f, .x1 = mem->f + (size_t)N * C,
                      .s0 = raw + (size_t)N * C, .s1 = eff + (size_t)N * C, .us = us};
    return 0;
}

void andrea_ov_classes_free(andrea_ov_classes *o) {
    free(o->successor);
    free(o->suppression);
    memset(o, 0, sizeof *o);
}

int andrea_ov_classes_compute(const andrea_model *m, const andrea_tokenizer *tok, andrea_ov_classes *out,
                              ae_error *err) {
    memset(out, 0, sizeof *out);
    const int NH = m->cfg.n_layer * m->cfg.n_head;
    andrea_ordinals ord;
    memset(&ord, 0, sizeof ord);
    ov_memory mem = {NULL, NULL, NULL};
    ov_inputs in;
    out->n_layer = m->cfg.n_layer;
    out->n_head = m->cfg.n_head;
    out->successor = malloc(sizeof(double) * (size_t)NH);
    out->suppression = malloc(sizeof(double) * (size_t)NH);
    int rc = -1;
    if (!out->successor || !out->suppression) {
        andrea_fail(err, "%s: ov classes: out of memory", m->path);
        goto out;
    }
    if (tok) {
        if (andrea_ordinals_load(tok, m->cfg.vocab_size, &ord, err)) goto out; /* the message names the file */
    } else if (andrea_ordinals_none(&ord)) {
        andrea_fail(err, "%s: ov classes: out of memory", m->path);
        goto out;
    }
    if (prepare_inputs(m, &ord, &in, &mem, err) || score_heads(&in, out, err)) {
        andrea_prefix(err, "%s", m->path);
        goto out;
    }
    out->successor_chance = ord.chance;
    if (!ord.n_pairs) out->successor_chance = NAN;
    out->n_successor_pairs = ord.n_pairs;
    out->n_successor_kinds = ord.n_kinds;
    out->suppression_chance = (double)OV_CLASSES_SUPPRESSION_K / m->cfg.vocab_size;
    out->n_suppression_tokens = in.N;
    rc = 0;
out:
    free(mem.d);
    free(mem.f);
    free(mem.ids);
    andrea_ordinals_free(&ord);
    if (rc) andrea_ov_classes_free(out);
    return rc;
}
