/* head_scorer.c — per-head statistics accumulated batch by batch (head_scorer.h, docs/scores.md). */
#include "head_scorer.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "head_scorer_gpu.h"
#include "reduce_mpi.h"
#include "score.h"

struct head_scorer {
    int L, H, NH;
    andrea_rules rules;
    int n_suites;
    andrea_suite_scores *suites; /* [n_suites], handed over by andrea_head_scorer_take */
    /* the suite being scored */
    score_seq_plan *plans;
    int n_plans;
    score_acc *acc;              /* [NH] */
    double *dla_sum, *norm_sum;  /* [NH] */
    int64_t *dla_n, *norm_n;     /* [NH] */
    float *row;                  /* [max T] scratch for fp16 rows */
    int row_cap;
    hs_gpu *gpu;                 /* the GPU path (head_scorer_gpu.h), NULL in a build without CUDA */
    int values_on_device;        /* the batch being handed over was taken on the GPU, DLA and norms too */
};

static void free_plans(head_scorer *hs) {
    andrea_hs_gpu_suite_begin(hs->gpu, NULL, 0); /* it points at the plans */
    for (int i = 0; i < hs->n_plans; i++) andrea_score_plan_free(&hs->plans[i]);
    free(hs->plans);
    hs->plans = NULL;
    hs->n_plans = 0;
}

static int suite_begin(void *self, int si, const probe_suite *s, ae_error *err) {
    head_scorer *hs = self;
    if (si < 0 || si >= hs->n_suites) return andrea_fail(err, "scorer: suite %d outside 0..%d", si, hs->n_suites - 1);
    andrea_suite_scores *su = &hs->suites[si];
    snprintf(su->name, sizeof su->name, "%s", s->name);
    su->pass = andrea_pass_for(s->name);
    su->rule = andrea_rules_for(&hs->rules, s->name, su->pass);
    su->n_items = s->n_items;
    if (!su->heads && !(su->heads = calloc((size_t)hs->NH, sizeof *su->heads)))
        return andrea_fail(err, "scorer: out of memory");
    andrea_suite_causal_clear(su, hs->NH);
    free_plans(hs);
    hs->plans = calloc((size_t)(s->n_items ? s->n_items : 1), sizeof *hs->plans);
    if (!hs->plans) return andrea_fail(err, "scorer: out of memory");
    hs->n_plans = s->n_items;
    for (int i = 0; i < s->n_items; i++)
        if (andrea_score_plan_build(&s->items[i], i, s->name, &hs->plans[i], err)) return -1;
    andrea_hs_gpu_suite_begin(hs->gpu, hs->plans, hs->n_plans);
    if (s->max_len > hs->row_cap) {
        float *r = realloc(hs->row, sizeof(float) * (size_t)s->max_len);
        if (!r) return andrea_fail(err, "scorer: out of memory");
        hs->row = r;
        hs->row_cap = s->max_len;
    }
    const size_t NH = (size_t)hs->NH;
    memset(hs->acc, 0, sizeof *hs->acc * NH);
    memset(hs->dla_sum, 0, sizeof *hs->dla_sum * NH);
    memset(hs->norm_sum, 0, sizeof *hs->norm_sum * NH);
    memset(hs->dla_n, 0, sizeof *hs->dla_n * NH);
    memset(hs->norm_n, 0, sizeof *hs->norm_n * NH);
    return 0;
}

int andrea_head_scorer_wants(const head_scorer *hs, int seq) {
    return seq >= 0 && seq < hs->n_plans && hs->plans[seq].n_queries > 0;
}

/* maps [first, first + n) of the batch: map m is head m % NH of sequence b0 + m / NH */
static int maps(void *self, const andrea_batch *b, size_t first, size_t n, const void *piece, ae_error *err) {
    head_scorer *hs = self;
    const size_t NH = (size_t)hs->NH, tt = (size_t)b->T * (size_t)b->T;
    for (size_t i = 0; i < n; i++) {
        const size_t m = first + i;
        const int seq = b->b0 + (int)(m / NH), h = (int)(m % NH);
        if (seq >= hs->n_plans) return andrea_fail(err, "scorer: sequence %d of suite %s outside its items", seq, b->s->name);
        const score_seq_plan *p = &hs->plans[seq];
        if (p->n_queries == 0) continue;
        if (b->maps_fp16) andrea_score_acc_add_f16(&hs->acc[h], p, (const uint16_t *)piece + i * tt, b->T, hs->row);
        else andrea_score_acc_add(&hs->acc[h], p, (const float *)piece + i * tt, b->T);
    }
    return 0;
}

static int wants_host_maps(void *self, const andrea_batch *b, int seq) {
    (void)b;
    return andrea_head_scorer_wants(self, seq);
}

/* A GPU batch: score, control, the argmax hits and the DLA / norm sums by the kernel on the
 * device maps (kernels/score_kernel.h); baselines, n and n_hard, which no map changes, here from
 * the plans, as andrea_score_acc_add adds them per map. 1: declined (GPU out of memory), the maps
 * then come to maps() from the host. */
static int device_batch(void *self, const andrea_batch *b, const andrea_device_batch *d, ae_error *err) {
    head_scorer *hs = self;
    if (b->b0 + b->nb > hs->n_plans)
        return andrea_fail(err, "scorer: sequence %d of suite %s outside its items", b->b0 + b->nb - 1, b->s->name);
    const int rc = andrea_hs_gpu_add(hs->gpu, b, d, err);
    if (rc) return rc;
    for (int i = 0; i < b->nb; i++)
        for (int h = 0; hs->plans[b->b0 + i].n_queries > 0 && h < hs->NH; h++) andrea_score_acc_add_plan(&hs->acc[h], &hs->plans[b->b0 + i]);
    hs->values_on_device = 1;
    return 0;
}

/* head_dla and head_out_norm at the eligible queries (DLA only where a next token exists) */
static int batch(void *self, const andrea_batch *b, ae_error *err) {
    head_scorer *hs = self;
    (void)err;
    if (hs->values_on_device) { /* summed by the kernel */
        hs->values_on_device = 0;
        return 0;
    }
    const int NH = hs->NH, T = b->T;
    for (int i = 0; i < b->nb; i++) {
        const score_seq_plan *p = &hs->plans[b->b0 + i];
        if (p->n_queries == 0) continue;
        const size_t base = (size_t)i * (size_t)NH * (size_t)T;
        for (int h = 0; b->head_dla && h < NH; h++)
            for (int q = 0; q < p->n_queries; q++) {
                int t = p->queries[q].query;
                float v = b->head_dla[base + (size_t)h * T + t];
                if (t + 1 < p->length && isfinite(v)) {
                    hs->dla_sum[h] += v;
                    hs->dla_n[h]++;
                }
            }
        for (int h = 0; b->head_out_norm && h < NH; h++)
            for (int q = 0; q < p->n_queries; q++) {
                float v = b->head_out_norm[base + (size_t)h * T + p->queries[q].query];
                if (isfinite(v)) {
                    hs->norm_sum[h] += v;
                    hs->norm_n[h]++;
                }
            }
    }
    return 0;
}

static int suite_end(void *self, int si, ae_error *err) {
    head_scorer *hs = self;
    andrea_suite_scores *su = &hs->suites[si];
    if (andrea_hs_gpu_suite_end(hs->gpu, hs->acc, hs->dla_sum, hs->norm_sum, hs->dla_n, hs->norm_n, err)) return -1;
    if (andrea_reduce_suite_stats(hs->acc, hs->dla_sum, hs->norm_sum, hs->dla_n, hs->norm_n, hs->NH, err)) return -1;
    for (int h = 0; h < hs->NH; h++) {
        andrea_head_score *x = &su->heads[h];
        const score_acc *a = &hs->acc[h];
        x->layer = h / hs->H;
        x->head = h % hs->H;
        andrea_pass_head_stats(su->pass, a, x);
        x->dla_mean = hs->dla_n[h] ? hs->dla_sum[h] / (double)hs->dla_n[h] : NAN;
        x->norm_mean = hs->norm_n[h] ? hs->norm_sum[h] / (double)hs->norm_n[h] : NAN;
        x->ablation_delta = x->ablation_ci_low = x->ablation_ci_high = x->ablation_pct = NAN;
        x->restore_delta = x->restore_ci_low = x->restore_ci_high = x->direct_delta = NAN;
        x->evidence = 0;
    }
    andrea_pass_suite_finish(su->pass, &su->rule, su->heads, hs->NH);
    su->n_queries = hs->acc[0].n;
    free_plans(hs);
    return 0;
}

head_scorer *andrea_head_scorer_open(const andrea_config *cfg, const andrea_rules *rules, int n_suites, ae_error *err) {
    head_scorer *hs = calloc(1, sizeof *hs);
    if (!hs) {
        andrea_fail(err, "scorer: out of memory");
        return NULL;
    }
    hs->L = cfg->n_layer;
    hs->H = cfg->n_head;
    hs->NH = hs->L * hs->H;
    hs->rules = *rules;
    hs->n_suites = n_suites;
    const size_t NH = (size_t)(hs->NH > 0 ? hs->NH : 1);
    hs->suites = calloc((size_t)(n_suites > 0 ? n_suites : 1), sizeof *hs->suites);
    hs->acc = calloc(NH, sizeof *hs->acc);
    hs->dla_sum = calloc(NH, sizeof *hs->dla_sum);
    hs->norm_sum = calloc(NH, sizeof *hs->norm_sum);
    hs->dla_n = calloc(NH, sizeof *hs->dla_n);
    hs->norm_n = calloc(NH, sizeof *hs->norm_n);
    if (!hs->suites || !hs->acc || !hs->dla_sum || !hs->norm_sum || !hs->dla_n || !hs->norm_n) {
        andrea_head_scorer_free(hs);
        andrea_fail(err, "scorer: out of memory");
        return NULL;
    }
    hs->gpu = andrea_hs_gpu_open(hs->NH, err);
#ifdef ANDREA_HAVE_CUDA
    if (!hs->gpu) {
        andrea_head_scorer_free(hs);
        return NULL;
    }
#endif
    return hs;
}

andrea_batch_sink andrea_head_scorer_sink(head_scorer *hs) {
    andrea_batch_sink k = {.self = hs, .suite_begin = suite_begin, .maps = maps, .batch = batch, .suite_end = suite_end,
                           .device_batch = hs->gpu ? device_batch : NULL, .wants_host_maps = wants_host_maps};
    return k;
}

void andrea_head_scorer_set_gpu_chunk(head_scorer *hs, int max_seqs) { andrea_hs_gpu_set_chunk(hs->gpu, max_seqs); }

void andrea_head_scorer_take(head_scorer *hs, andrea_analysis *a) {
    a->suites = hs->suites;
    a->n_suites = hs->n_suites;
    hs->suites = NULL;
    hs->n_suites = 0;
}

void andrea_head_scorer_free(head_scorer *hs) {
    if (!hs) return;
    free_plans(hs);
    for (int s = 0; s < hs->n_suites && hs->suites; s++) free(hs->suites[s].heads);
    free(hs->suites);
    free(hs->acc);
    free(hs->dla_sum);
    free(hs->norm_sum);
    free(hs->dla_n);
    free(hs->norm_n);
    free(hs->row);
    andrea_hs_gpu_free(hs->gpu);
    free(hs);
}
