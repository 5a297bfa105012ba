/* ablation_direct.c — the direct effect of each labelled head (docs/scores.md, "Direct and total
 * effect"): the head's output replaced as the method says, its change carried straight to the
 * logits, with every later layer and the final LayerNorm's scale (1/sigma) frozen at the clean
 * forward's. At a loss row r of the clean forward, with final residual x (before ln_f), sigma its
 * LayerNorm scale and gamma, beta ln_f's weights:
 *   d      = (õ_h - o_h) · W_O[:, h]ᵀ            the head's change of the residual, [C]
 *   y      = gamma ⊙ (x - mean x) / sigma + beta  the clean final LayerNorm output
 *   y'     = y + gamma ⊙ (d - mean d) / sigma     (x + d through ln_f, its scale frozen)
 *   loss'  = logsumexp(y' W_Uᵀ) - (y' W_Uᵀ)[target]
 * The per-item sums of loss' and of the clean loss by the same path (y W_Uᵀ) give, through the
 * member's bootstrap, direct_delta: comparable with the total effect ablation_delta, which lets
 * the later layers react. Rows run in chunks of DIRECT_ROWS through one sgemm each ([rows, C] x
 * [C, V]); only labelled heads are measured (each costs rows x V x C). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cblas.h>

#include "ablation_internal.h"

#define DIRECT_ROWS 64
#define LN_EPS 1e-5 /* the engines' LayerNorm epsilon */

typedef struct {
    const andrea_model *m;
    const float *final_resid, *heads, *values; /* [B, T, C], [L, B, T, C], [L, B, T, C] or NULL (zeros) */
    int B, T, V;
    int rows[DIRECT_ROWS], n;      /* the chunk's rows b*T + t */
    float *y, *dy, *z, *zh;        /* [DIRECT_ROWS, C], [DIRECT_ROWS, C], [DIRECT_ROWS, V] x 2 */
    double sigma[DIRECT_ROWS];
} direct_chunk;

/* -log softmax(z)[target], in double. */
static double token_loss(const float *z, int V, int target) {
    double mx = z[0], s = 0;
    for (int v = 1; v < V; v++) mx = z[v] > mx ? z[v] : mx;
    for (int v = 0; v < V; v++) s += exp((double)z[v] - mx);
    return mx + log(s) - (double)z[target];
}

/* The chunk's clean ln_f outputs y, their sigmas, and clean logits z = y W_Uᵀ. */
static void clean_rows(direct_chunk *c) {
    const andrea_params *p = &c->m->p;
    const int C = c->m->cfg.d_model;
    for (int i = 0; i < c->n; i++) {
        const float *x = c->final_resid + (size_t)c->rows[i] * C;
        double mean = 0, var = 0;
        for (int k = 0; k < C; k++) mean += x[k];
        mean /= C;
        for (int k = 0; k < C; k++) var += (x[k] - mean) * (x[k] - mean);
        c->sigma[i] = sqrt(var / C + LN_EPS);
        for (int k = 0; k < C; k++) c->y[(size_t)i * C + k] = (float)((x[k] - mean) / c->sigma[i] * p->lnfw[k] + p->lnfb[k]);
    }
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, c->n, c->V, C, 1.0f, c->y, C, p->wte, C, 0.0f, c->z, c->V);
}

/* zh = z + (gamma ⊙ (d - mean d) / sigma) W_Uᵀ for head `head` (layer l, index hh) at the chunk's rows. */
static void head_rows(direct_chunk *c, int head) {
    const andrea_config *cf = &c->m->cfg;
    const int C = cf->d_model, hd = cf->head_dim, l = head / cf->n_head, hh = head % cf->n_head;
    const float *wo = c->m->p.attprojw + (size_t)l * C * C; /* [C out, C in] */
    for (int i = 0; i < c->n; i++) {
        const size_t at = ((size_t)l * c->B * c->T + (size_t)c->rows[i]) * C + (size_t)hh * hd;
        float dof[512];
        const int n_in = hd < 512 ? hd : 512;
        for (int k = 0; k < n_in; k++) dof[k] = (c->values ? c->values[at + k] : 0.0f) - c->heads[at + k];
        double mean = 0;
        float *dy = c->dy + (size_t)i * C;
        for (int o = 0; o < C; o++) {
            double d = 0;
            for (int k = 0; k < n_in; k++) d += (double)dof[k] * wo[(size_t)o * C + (size_t)hh * hd + k];
            dy[o] = (float)d;
            mean += d;
        }
        mean /= C;
        for (int o = 0; o < C; o++) dy[o] = (float)((dy[o] - mean) / c->sigma[i] * c->m->p.lnfw[o]);
    }
    memcpy(c->zh, c->z, sizeof(float) * (size_t)c->n * c->V);
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, c->n, c->V, C, 1.0f, c->dy, C, c->m->p.wte, C, 1.0f, c->zh, c->V);
}

/* One member's per-item sums: direct_clean[b] and, per labelled head j, direct_sum[j*B + b]. */
static void member_direct(direct_chunk *c, ablation_member *mb, const int *tokens) {
    const int B = c->B, T = c->T;
    for (int r0 = 0; r0 < B * T;) {
        c->n = 0;
        for (; r0 < B * T && c->n < DIRECT_ROWS; r0++)
            if (r0 % T + 1 < T && mb->use[r0]) c->rows[c->n++] = r0;
        if (c->n == 0) continue;
        clean_rows(c);
        for (int i = 0; i < c->n; i++)
            mb->direct_clean[c->rows[i] / T] += token_loss(c->z + (size_t)i * c->V, c->V, tokens[c->rows[i] + 1]);
        for (int j = 0; j < mb->k; j++) {
            head_rows(c, mb->labelled[j]);
            for (int i = 0; i < c->n; i++)
                mb->direct_sum[(size_t)j * B + c->rows[i] / T] +=
                    token_loss(c->zh + (size_t)i * c->V, c->V, tokens[c->rows[i] + 1]);
        }
    }
}

int andrea_ablation_direct(const andrea_model *m, ablation_group *g, const int *tokens, const float *final_resid,
                           const float *heads, const float *values, ae_error *err) {
    const int C = m->cfg.d_model, V = m->cfg.vocab_size;
    if (m->cfg.head_dim > 512) return andrea_fail(err, "direct effects: head_dim %d above 512", m->cfg.head_dim);
    direct_chunk c = {.m = m, .final_resid = final_resid, .heads = heads, .values = values, .B = g->B, .T = g->T, .V = V};
    c.y = malloc(sizeof(float) * DIRECT_ROWS * (size_t)C);
    c.dy = malloc(sizeof(float) * DIRECT_ROWS * (size_t)C);
    c.z = malloc(sizeof(float) * DIRECT_ROWS * (size_t)V);
    c.zh = malloc(sizeof(float) * DIRECT_ROWS * (size_t)V);
    int ret = 0;
    if (!c.y || !c.dy || !c.z || !c.zh) {
        ret = andrea_fail(err, "%s: out of memory for the direct effects", g->m[0].s->name);
    } else {
        for (int k = 0; k < g->n_members; k++)
            if (g->m[k].k > 0) member_direct(&c, &g->m[k], tokens);
    }
    free(c.y);
    free(c.dy);
    free(c.z);
    free(c.zh);
    return ret;
}
