/* head_scorer_gpu.c — the head scorer's GPU path (head_scorer_gpu.h; kernels/score_kernel.cu). */
#include "head_scorer_gpu.h"

#include <stdlib.h>

#ifdef ANDREA_HAVE_CUDA
#include <string.h>

#include "../kernels/score_kernel.h"

_Static_assert(ANDREA_SCORE_MAX_OFFSET == ANDREA_POS_MAX_OFFSET, "the kernel counts the offsets score.c counts");

struct hs_gpu {
    int NH;
    andrea_cuda_scorer *k;
    const score_seq_plan *plans; /* the suite's (the caller's), NULL: none */
    int n_plans;
    int begun;                   /* the kernel side has the suite's plan */
    /* the CSR of the suite's plans (kernels/score_kernel.h) */
    int *length, *q_off, *query, *k_off, *keys, *control;
    unsigned char *hard;
    andrea_score_plan csr;
    andrea_score_sums *sums;     /* [NH] */
};

static void csr_free(hs_gpu *g) {
    free(g->length), free(g->q_off), free(g->query), free(g->k_off), free(g->keys), free(g->control), free(g->hard);
    g->length = g->q_off = g->query = g->k_off = g->keys = g->control = NULL;
    g->hard = NULL;
}

/* Flattens the plans: sequence s's queries, then each query's keys, in plan order. */
static int csr_build(hs_gpu *g, ae_error *err) {
    size_t nq = 0, nk = 0;
    for (int s = 0; s < g->n_plans; s++) {
        nq += (size_t)g->plans[s].n_queries;
        nk += (size_t)g->plans[s].n_keys;
    }
    if (nq >= (size_t)1 << 31 || nk >= (size_t)1 << 31) return andrea_fail(err, "scorer: suite too large for the GPU plan");
    const size_t ns = g->n_plans > 0 ? (size_t)g->n_plans : 0;
    g->length = malloc(sizeof(int) * (ns ? ns : 1));
    g->q_off = malloc(sizeof(int) * (ns + 1));
    g->query = malloc(sizeof(int) * (nq ? nq : 1));
    g->hard = malloc(nq ? nq : 1);
    g->k_off = malloc(sizeof(int) * (nq + 1));
    g->keys = malloc(sizeof(int) * (nk ? nk : 1));
    g->control = malloc(sizeof(int) * (nk ? nk : 1));
    if (!g->length || !g->q_off || !g->query || !g->hard || !g->k_off || !g->keys || !g->control) {
        csr_free(g);
        return andrea_fail(err, "scorer: out of memory");
    }
    int jq = 0, jk = 0;
    for (int s = 0; s < g->n_plans; s++) {
        const score_seq_plan *p = &g->plans[s];
        g->length[s] = p->length;
        g->q_off[s] = jq;
        for (int i = 0; i < p->n_queries; i++, jq++) {
            const score_query *sq = &p->queries[i];
            g->query[jq] = sq->query;
            g->hard[jq] = (unsigned char)(sq->hard != 0);
            g->k_off[jq] = jk;
            memcpy(g->keys + jk, p->keys + sq->key_off, sizeof(int) * (size_t)sq->n_keys);
            memcpy(g->control + jk, p->control_keys + sq->key_off, sizeof(int) * (size_t)sq->n_keys);
            jk += sq->n_keys;
        }
    }
    g->q_off[ns] = jq;
    g->k_off[jq] = jk;
    andrea_score_plan c = {g->n_plans, g->length, g->q_off, g->query, g->hard, g->k_off, g->keys, g->control};
    g->csr = c;
    return 0;
}

hs_gpu *andrea_hs_gpu_open(int n_heads, ae_error *err) {
    hs_gpu *g = calloc(1, sizeof *g);
    if (g) g->sums = calloc((size_t)(n_heads > 0 ? n_heads : 1), sizeof *g->sums);
    if (g && g->sums) g->k = andrea_cuda_scorer_open(n_heads, err);
    if (!g || !g->sums || !g->k) {
        if (g) free(g->sums);
        free(g);
        andrea_fail(err, "scorer: out of memory");
        return NULL;
    }
    g->NH = n_heads;
    return g;
}

void andrea_hs_gpu_suite_begin(hs_gpu *g, const score_seq_plan *plans, int n_plans) {
    if (!g) return;
    csr_free(g);
    g->plans = plans;
    g->n_plans = n_plans;
    g->begun = 0;
}

int andrea_hs_gpu_add(hs_gpu *g, const andrea_batch *b, const andrea_device_batch *d, ae_error *err) {
    if (!g || !d->attn) return 1;
    if (!g->begun) {
        if (!g->length && csr_build(g, err)) return -1;
        if (andrea_cuda_scorer_begin(g->k, &g->csr, err)) return -1;
        g->begun = 1;
    }
    andrea_score_batch kb = {d->attn, b->maps_fp16, d->head_out_norm, d->head_dla, b->b0, b->nb, b->T, d->stream};
    return andrea_cuda_scorer_add(g->k, &kb, err);
}

int andrea_hs_gpu_suite_end(hs_gpu *g, score_acc *acc, double *dla_sum, double *norm_sum, int64_t *dla_n, int64_t *norm_n,
                     ae_error *err) {
    if (!g) return 0;
    int rc = 0;
    if (g->begun && !(rc = andrea_cuda_scorer_end(g->k, g->sums, err)))
        for (int h = 0; h < g->NH; h++) {
            const andrea_score_sums *x = &g->sums[h];
            acc[h].score_sum += x->score;
            acc[h].control_sum += x->control;
            acc[h].top1_sum += x->top1;
            acc[h].hard_top1_sum += x->hard_top1;
            acc[h].control_top1_sum += x->control_top1;
            for (int k = 1; k <= ANDREA_POS_MAX_OFFSET; k++) acc[h].offset_hits[k] += x->offset_hits[k - 1];
            dla_sum[h] += x->dla;
            norm_sum[h] += x->norm;
            dla_n[h] += (int64_t)x->dla_n;
            norm_n[h] += (int64_t)x->norm_n;
        }
    andrea_hs_gpu_suite_begin(g, NULL, 0);
    return rc ? -1 : 0;
}

void andrea_hs_gpu_set_chunk(hs_gpu *g, int max_seqs) {
    if (g) andrea_cuda_scorer_set_chunk(g->k, max_seqs);
}

void andrea_hs_gpu_free(hs_gpu *g) {
    if (!g) return;
    csr_free(g);
    andrea_cuda_scorer_free(g->k);
    free(g->sums);
    free(g);
}

#else /* a build without CUDA: no GPU path */

hs_gpu *andrea_hs_gpu_open(int n_heads, ae_error *err) {
    (void)n_heads;
    (void)err;
    return NULL;
}
void andrea_hs_gpu_suite_begin(hs_gpu *g, const score_seq_plan *plans, int n_plans) {
    (void)g, (void)plans, (void)n_plans;
}
int andrea_hs_gpu_add(hs_gpu *g, const andrea_batch *b, const andrea_device_batch *d, ae_error *err) {
    (void)g, (void)b, (void)d, (void)err;
    return 1;
}
int andrea_hs_gpu_suite_end(hs_gpu *g, score_acc *acc, double *dla_sum, double *norm_sum, int64_t *dla_n, int64_t *norm_n,
                     ae_error *err) {
    (void)g, (void)acc, (void)dla_sum, (void)norm_sum, (void)dla_n, (void)norm_n, (void)err;
    return 0;
}
void andrea_hs_gpu_set_chunk(hs_gpu *g, int max_seqs) {
    (void)g, (void)max_seqs;
}
void andrea_hs_gpu_free(hs_gpu *g) { (void)g; }

#endif
