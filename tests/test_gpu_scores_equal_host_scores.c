/* test_gpu_scores_equal_host_scores.c — the head scorer's GPU kernel (kernels/score_kernel.cu)
 * gives the statistics of the host head scorer (analyzer/score.c, the oracle) on the same maps:
 * one CUDA forward feeds two scorers, one scoring the device-resident maps, the other the same
 * maps streamed to the host, for every built-in class and a user suite with several keys per
 * query, fp32 and fp16 maps, with and without the per-head W_O values, batches cut in chunks.
 * Tolerance 1e-6 absolute (relative for dla_mean / norm_mean): both sum the same floats in double,
 * only in another order (about 1e-15 apart); top1 / hard_top1 and the labels must be equal.
 * Also: with a report-like sink that wants the first sequence's maps only, no other map comes to
 * the host (the GPU scorer took every batch); and a GPU out of memory makes the scorer decline
 * the batch (scored on the host from its maps) without a wrong number or a sticky CUDA error.
 * Skips without a usable GPU. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../analyzer/head_scorer.h"
#include "../dump/dump_write.h"
#include "../engine/forward.h"
#include "../probes/probe.h"
#include "support/model_random.h"
#include "check.h"

#ifdef ANDREA_HAVE_CUDA
#include <cuda_runtime.h>

static andrea_model model;
static andrea_rules rules;
static double worst;

/* Every statistic of two analyses of the same suites. */
static void compare(const andrea_analysis *g, const andrea_analysis *h, const char *what) {
    CHECK(g->n_suites == h->n_suites);
    for (int s = 0; s < g->n_suites && s < h->n_suites; s++) {
        const andrea_suite_scores *a = &g->suites[s], *b = &h->suites[s];
        CHECK_MSG(a->n_queries == b->n_queries && a->n_queries > 0, "%s %s: n_queries %lld vs %lld", what, a->name,
                  (long long)a->n_queries, (long long)b->n_queries);
        const int NH = model.cfg.n_layer * model.cfg.n_head;
        for (int k = 0; k < NH; k++) {
            const andrea_head_score *x = &a->heads[k], *y = &b->heads[k];
            const double u[6] = {x->score, x->baseline, x->control, x->extra, x->dla_mean, x->norm_mean};
            const double v[6] = {y->score, y->baseline, y->control, y->extra, y->dla_mean, y->norm_mean};
            for (int i = 0; i < 6; i++) {
                if (isnan(u[i]) || isnan(v[i])) {
                    CHECK_MSG(isnan(u[i]) && isnan(v[i]), "%s %s head %d stat %d: %g vs %g", what, a->name, k, i, u[i],
                              v[i]);
                    continue;
                }
                const double d = fabs(u[i] - v[i]) / (i >= 4 ? fmax(1.0, fabs(v[i])) : 1.0);
                worst = fmax(worst, d);
                CHECK_MSG(d <= 1e-6, "%s %s head %d stat %d: %.17g vs %.17g", what, a->name, k, i, u[i], v[i]);
            }
            CHECK(x->label == y->label);
        }
    }
}

/* A sink that counts the maps it gets and wants those of sequence 0 only (as the report
 * collector wants its first examples). */
typedef struct {
    long long maps;
} spy;
static int spy_maps(void *self, const andrea_batch *b, size_t first, size_t n, const void *piece, ae_error *err) {
    (void)b, (void)first, (void)piece, (void)err;
    ((spy *)self)->maps += (long long)n;
    return 0;
}
static int spy_wants(void *self, const andrea_batch *b, int seq) {
    (void)self, (void)b;
    return seq == 0;
}

/* One GPU forward over the suites feeding a GPU scorer and a host scorer (its device_batch
 * removed: the pipeline streams it the maps); chunk: sequences per kernel launch. With
 * spy_only, the second sink is the spy instead and *host is not filled. */
static int score_both(const probe_suite *suites, int n, int fp32, andrea_contrib contrib, int batch, int chunk,
                      andrea_analysis *gpu, andrea_analysis *host, spy *sp) {
    ae_error err;
    head_scorer *g = andrea_head_scorer_open(&model.cfg, &rules, n, &err);
    head_scorer *h = andrea_head_scorer_open(&model.cfg, &rules, n, &err);
    if (!g || !h) return -1;
    andrea_head_scorer_set_gpu_chunk(g, chunk);
    andrea_batch_sink sinks[2] = {andrea_head_scorer_sink(g), andrea_head_scorer_sink(h)};
    CHECK(sinks[0].device_batch != NULL);
    sinks[1].device_batch = NULL;
    if (sp) {
        andrea_batch_sink k = {.self = sp, .maps = spy_maps, .wants_host_maps = spy_wants};
        sinks[1] = k;
    }
    andrea_dump_options o;
    andrea_dump_options_init(&o);
    o.run.engine.device = ANDREA_DEVICE_CUDA;
    o.run.maps_fp32 = fp32;
    o.run.contrib = contrib;
    o.run.batch = batch;
    o.sinks = sinks;
    o.n_sinks = 2;
    int rc = andrea_dump_write(&model, suites, n, &o, &err);
    if (rc) fprintf(stderr, "%s\n", err.msg);
    memset(gpu, 0, sizeof *gpu);
    memset(host, 0, sizeof *host);
    if (!rc) {
        andrea_head_scorer_take(g, gpu);
        if (!sp) andrea_head_scorer_take(h, host);
    }
    andrea_head_scorer_free(g);
    andrea_head_scorer_free(h);
    return rc;
}

static void run_case(const probe_suite *suites, int n, int fp32, andrea_contrib contrib, int batch, int chunk,
                     const char *what) {
    andrea_analysis g, h;
    CHECK(score_both(suites, n, fp32, contrib, batch, chunk, &g, &h, NULL) == 0);
    compare(&g, &h, what);
    andrea_analysis_free(&g);
    andrea_analysis_free(&h);
}

static probe_suite *builtin, *user;
static int n_builtin, n_user;

static void test_gpu_scores_equal_host_scores_for_every_builtin_class(void) {
    run_case(builtin, n_builtin, 1, ANDREA_CONTRIB_NORM, 3, 0, "fp32 norm B3");
    run_case(builtin, n_builtin, 0, ANDREA_CONTRIB_NORM, 5, 2, "fp16 norm B5 chunk2");
    run_case(builtin, n_builtin, 1, ANDREA_CONTRIB_NONE, 4, 1, "fp32 none B4 chunk1");
    fprintf(stderr, "  worst difference GPU vs host: %.3g\n", worst);
}

static void test_gpu_scores_equal_host_scores_for_a_user_suite(void) {
    run_case(user, n_user, 1, ANDREA_CONTRIB_NORM, 2, 0, "user fp32");
    run_case(user, n_user, 0, ANDREA_CONTRIB_NORM, 3, 2, "user fp16");
}

static void test_no_map_leaves_the_gpu_but_those_a_host_sink_wants(void) {
    andrea_analysis g, h, ref, ref_h;
    spy sp = {0};
    CHECK(score_both(builtin, n_builtin, 1, ANDREA_CONTRIB_NORM, 3, 0, &g, &h, &sp) == 0);
    const long long lh = (long long)model.cfg.n_layer * model.cfg.n_head;
    CHECK_MSG(sp.maps == lh * n_builtin, "%lld maps came to the host, want %lld (sequence 0 of each suite)", sp.maps,
              lh * n_builtin);
    CHECK(score_both(builtin, n_builtin, 1, ANDREA_CONTRIB_NORM, 3, 0, &ref, &ref_h, NULL) == 0);
    compare(&g, &ref_h, "with the spy");
    andrea_analysis_free(&g);
    andrea_analysis_free(&ref);
    andrea_analysis_free(&ref_h);
}

/* Takes every free byte of the GPU (big blocks, then smaller); returns how many blocks. */
static int hog(void **blocks, int cap) {
    int n = 0;
    for (size_t sz = (size_t)1 << 34; sz >= 256 && n < cap;) {
        if (cudaMalloc(&blocks[n], sz) == cudaSuccess) n++;
        else {
            (void)cudaGetLastError();
            sz /= 2;
        }
    }
    return n;
}

static void test_gpu_out_of_memory_declines_the_batch_and_the_host_scores_it(void) {
    ae_error err;
    const probe_suite *s = &builtin[0];
    const int nb = 4, NH = model.cfg.n_layer * model.cfg.n_head, T = s->max_len;
    CHECK(s->n_items >= 2 * nb);
    const size_t per = (size_t)T * T, nmaps = (size_t)nb * NH;
    float *maps = malloc(sizeof(float) * nmaps * per);
    uint64_t x = 88172645463325252ull;
    for (size_t m = 0; m < nmaps; m++)
        for (int q = 0; q < T; q++) { /* a random causal softmax-like row */
            float *row = maps + m * per + (size_t)q * T, sum = 0;
            for (int k = 0; k < T; k++) {
                x ^= x << 13, x ^= x >> 7, x ^= x << 17;
                row[k] = k <= q ? (float)((x >> 11) % 1000 + 1) : 0.0f;
                sum += row[k];
            }
            for (int k = 0; k <= q; k++) row[k] /= sum;
        }
    void *d_maps = NULL;
    CHECK(cudaMalloc(&d_maps, sizeof(float) * nmaps * per) == cudaSuccess);
    CHECK(cudaMemcpy(d_maps, maps, sizeof(float) * nmaps * per, cudaMemcpyHostToDevice) == cudaSuccess);
    head_scorer *g = andrea_head_scorer_open(&model.cfg, &rules, 1, &err), *h = andrea_head_scorer_open(&model.cfg, &rules, 1, &err);
    andrea_batch_sink sg = andrea_head_scorer_sink(g), sh = andrea_head_scorer_sink(h);
    CHECK(sg.suite_begin(sg.self, 0, s, &err) == 0 && sh.suite_begin(sh.self, 0, s, &err) == 0);
    int lengths[8];
    for (int i = 0; i < 8; i++) lengths[i] = s->items[i].n_tokens;
    for (int bi = 0; bi < 2; bi++) { /* batch 0 with the GPU full, batch 1 with room: the same maps twice */
        andrea_batch b;
        memset(&b, 0, sizeof b);
        b.s = s, b.b0 = bi * nb, b.nb = nb, b.L = model.cfg.n_layer, b.H = model.cfg.n_head, b.T = T;
        b.C = model.cfg.d_model, b.lengths = lengths + bi * nb;
        andrea_device_batch d = {d_maps, NULL, NULL, NULL};
        static void *blocks[1 << 17];
        const int held = bi == 0 ? hog(blocks, 1 << 17) : 0;
        const int rc = sg.device_batch(sg.self, &b, &d, &err);
        for (int i = 0; i < held; i++) cudaFree(blocks[i]);
        CHECK_MSG(rc == (bi == 0 ? 1 : 0), "batch %d: device_batch returned %d (%s)", bi, rc, rc < 0 ? err.msg : "");
        CHECK(cudaGetLastError() == cudaSuccess); /* the out-of-memory error was not left behind */
        if (rc == 1) CHECK(sg.maps(sg.self, &b, 0, nmaps, maps, &err) == 0);
        CHECK(sg.batch(sg.self, &b, &err) == 0);
        CHECK(sh.maps(sh.self, &b, 0, nmaps, maps, &err) == 0 && sh.batch(sh.self, &b, &err) == 0);
    }
    CHECK(sg.suite_end(sg.self, 0, &err) == 0 && sh.suite_end(sh.self, 0, &err) == 0);
    andrea_analysis ag, ah;
    memset(&ag, 0, sizeof ag);
    memset(&ah, 0, sizeof ah);
    andrea_head_scorer_take(g, &ag);
    andrea_head_scorer_take(h, &ah);
    compare(&ag, &ah, "out of memory, then room");
    andrea_analysis_free(&ag);
    andrea_analysis_free(&ah);
    andrea_head_scorer_free(g);
    andrea_head_scorer_free(h);
    cudaFree(d_maps);
    free(maps);
}

/* A user suite: explicit targets, several keys per query (some repeated across queries), items
 * of different lengths (padding in the batch). */
static int write_user_file(const char *path) {
    FILE *f = fopen(path, "w");
    if (!f) return -1;
    uint64_t x = 1234567;
    for (int it = 0; it < 7; it++) {
        const int n = 20 + 7 * it;
        fprintf(f, "{\"suite\": \"mine\", \"tokens\": [");
        for (int t = 0; t < n; t++) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            fprintf(f, "%s%d", t ? ", " : "", (int)(x % 256));
        }
        fprintf(f, "], \"targets\": [");
        for (int q = 3, first = 1; q < n; q += 2, first = 0) {
            const int nk = 1 + q % 4;
            fprintf(f, "%s[%d, [", first ? "" : ", ", q);
            for (int j = nk - 1, firstk = 1; j >= 0; j--) /* keys q - 3j >= 0, ascending */
                if (q - 3 * j >= 0) {
                    fprintf(f, "%s%d", firstk ? "" : ", ", q - 3 * j);
                    firstk = 0;
                }
            fprintf(f, "]]");
        }
        fprintf(f, "]}\n");
    }
    return fclose(f);
}
#endif

int main(void) {
#ifndef ANDREA_HAVE_CUDA
    return check_skip("no CUDA device (built without CUDA)");
#else
    if (!andrea_cuda_available()) return check_skip("no CUDA device");
    ae_error err;
    andrea_config c = {0};
    c.max_seq_len = 96;
    c.vocab_size = 257;
    c.n_layer = 2;
    c.n_head = 4;
    c.d_model = 64;
    andrea_rules_init(&rules);
    andrea_tokenizer *tok = andrea_tokenizer_open(257, NULL, NULL, &err);
    probe_options po = {11, 64, 0};
    char path[4096];
    snprintf(path, sizeof path, "%s/mine.jsonl", check_tmpdir());
    if (!tok || andrea_model_init_random(&model, &c, 5, &err) ||
        andrea_probe_suites_builtin_list("all", tok, 257, 96, &po, &builtin, &n_builtin, &err) || write_user_file(path) ||
        andrea_probe_suites_load(path, tok, 257, 96, &po, &user, &n_user, &err)) {
        fprintf(stderr, "%s\n", err.msg);
        return 1;
    }
    RUN(test_gpu_scores_equal_host_scores_for_every_builtin_class);
    RUN(test_gpu_scores_equal_host_scores_for_a_user_suite);
    RUN(test_no_map_leaves_the_gpu_but_those_a_host_sink_wants);
    RUN(test_gpu_out_of_memory_declines_the_batch_and_the_host_scores_it);
    andrea_probe_suites_free(builtin, n_builtin);
    andrea_probe_suites_free(user, n_user);
    andrea_model_free(&model);
    andrea_tokenizer_free(tok);
    return check_summary("test_gpu_scores_equal_host_scores");
#endif
}
