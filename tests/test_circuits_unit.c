/* test_circuits_unit — small pure functions of the circuit scores and the diff, without files:
 * the series rule of `andrea diff` (andrea_catalog_series_from_name), the random baseline (about 1/sqrt(C),
 * the same for the same seed, different for another), and a model whose heads' W_O are zero
 * (every norm 0: scores NaN, never a crash or a division by zero), a Gram-memory budget of one
 * layer per block gives the same scores as one block, and scaling every weight changes no
 * composition or copying score. */
#include <math.h>
#include <string.h>

#include "catalog/catalog.h"
#include "catalog/catalog_diff.h"
#include "analyzer/circuits.h"
#include "check.h"
#include "tests/support/model_random.h"

static void series_is(const char *name, const char *want) {
    char got[256];
    andrea_catalog_series_from_name(name, got, sizeof got);
    CHECK_MSG(!strcmp(got, want), "series of '%s' is '%s', want '%s'", name, got, want);
}

static void test_series_drops_the_trailing_step_part(void) {
    series_is("run-step00400", "run");
    series_is("dyck-step08000", "dyck");
    series_is("model_step12000", "model");
    series_is("ckpt.step-1200", "ckpt");
    series_is("runStep300", "run");
    series_is("run-step_5", "run");
    series_is("step300", "step300");      /* nothing would be left */
    series_is("andrea-bundled", "andrea-bundled");
    series_is("run-step400-final", "run-step400-final"); /* not trailing */
    series_is("gpt2-124", "gpt2");         /* a separator and digits: a step too (docs/catalog.md) */
}

static void test_baseline_is_about_one_over_sqrt_c_and_seeded(void) {
    double a = 0, b = 0, c = 0;
    ae_error err;
    CHECK(andrea_circuits_baseline(64, 16, 16, CIRCUITS_BASELINE_SEED, &a, &err) == 0);
    CHECK(andrea_circuits_baseline(64, 16, 16, CIRCUITS_BASELINE_SEED, &b, &err) == 0);
    CHECK(andrea_circuits_baseline(64, 16, 16, 12345, &c, &err) == 0);
    CHECK_MSG(a == b, "same seed: %.17g vs %.17g", a, b);
    CHECK_MSG(a != c, "another seed gives another mean: %.17g", c);
    CHECK_MSG(fabs(a - 1 / sqrt(64.0)) < 0.15 / sqrt(64.0), "baseline %.4f, 1/sqrt(C) %.4f", a, 1 / sqrt(64.0));
}

static void test_heads_without_output_score_nan(void) {
    andrea_config cfg = {.max_seq_len = 16, .vocab_size = 40, .padded_vocab_size = 40, .n_layer = 2, .n_head = 2,
                         .d_model = 16};
    andrea_model m;
    ae_error err = {{0}};
    CHECK(andrea_model_init_random(&m, &cfg, 3, &err) == 0);
    memset(m.p.attprojw, 0, sizeof(float) * 2 * 16 * 16);
    andrea_circuits c;
    CHECK_MSG(andrea_circuits_compute(&m, &c, &err) == 0, "%s", err.msg);
    for (int k = 0; k < CIRCUIT_N_KINDS; k++)
        for (int s = 0; s < 2; s++)
            for (int d = 2; d < 4; d++) CHECK(isnan(andrea_circuits_score(&c, k, s, d)));
    for (int i = 0; i < 4; i++) CHECK(c.copying[i] == 0 && c.prev_pos[i] > 0 && c.prev_pos[i] < 1);
    andrea_circuits_free(&c);
    andrea_model_free(&m);
}

/* The rounding bound on a composition score (analyzer/circuits.c): ||M||^2 = <S_s, D_d> is a
 * C(C+1)/2-term inner product of Gram matrices (each a C-term and two hd-term float products),
 * and the sum cancels to ~hd/C of sum |terms|: CHECK_FP32_TOL over those reductions, relative to the
 * score, times C/hd (the square root halves the relative error: left as margin). */
static double composition_tol(const andrea_config *c, double score) {
    const int C = c->d_model, hd = C / c->n_head;
    return CHECK_FP32_TOL(C + 2 * hd + C * (C + 1) / 2, fabs(score)) * C / hd;
}

static void test_a_small_gram_budget_gives_the_same_scores(void) {
    andrea_config cfg = {.max_seq_len = 16, .vocab_size = 40, .padded_vocab_size = 40, .n_layer = 4, .n_head = 3,
                         .d_model = 24};
    andrea_model m;
    ae_error err = {{0}};
    CHECK(andrea_model_init_random(&m, &cfg, 5, &err) == 0);
    andrea_circuits a, b;
    CHECK(andrea_circuits_compute(&m, &a, &err) == 0);
    CHECK(andrea_circuits_compute_budget(&m, 1, &b, &err) == 0); /* one source layer per block */
    /* same within composition_tol: the BLAS may order sums differently for other shapes */
    int same = 1, n = 0;
    double worst = 0, worst_err = 0;
    for (int k = 0; k < CIRCUIT_N_KINDS; k++)
        for (int s = 0; s < 12; s++)
            for (int d = 0; d < 12; d++) {
                double x = andrea_circuits_score(&a, k, s, d), y = andrea_circuits_score(&b, k, s, d);
                if (s / 3 < d / 3) n += isfinite(x);
                same &= isnan(x) == isnan(y);
                if (isnan(x) || isnan(y)) continue;
                worst = fmax(worst, fabs(x - y) / composition_tol(&cfg, x));
                worst_err = fmax(worst_err, fabs(x - y));
            }
    fprintf(stderr, "  blocked vs whole: worst %.3g, %.3g of its bound\n", worst_err, worst);
    CHECK_MSG(same && worst <= 1 && n == 3 * 54, "blocked scores differ (%g x the bound) or missing (%d finite)", worst,
              n);
    andrea_circuits_free(&a);
    andrea_circuits_free(&b);
    andrea_model_free(&m);
}

/* Composition and copying scores do not change when every weight is scaled (each is a ratio of
 * norms, a share of eigenvalue signs): with weights 1e3 or 1e-4 times a model's, the float Gram
 * products once overflowed or underflowed and the scores came out wrong or all zero. Scaled by
 * 1e8 the copying scores' float K matrices overflowed into LAPACK. */
static void test_scores_from_the_weights_do_not_change_with_their_scale(void) {
    andrea_config cfg = {.max_seq_len = 16, .vocab_size = 40, .padded_vocab_size = 40, .n_layer = 3, .n_head = 2,
                         .d_model = 16};
    andrea_model m;
    ae_error err = {{0}};
    CHECK(andrea_model_init_random(&m, &cfg, 9, &err) == 0);
    andrea_circuits ref;
    CHECK_MSG(andrea_circuits_compute(&m, &ref, &err) == 0, "%s", err.msg);
    const double scales[] = {1e3, 1e-4 / 1e3, 1e8 / 1e-4}; /* cumulative: 1e3, 1e-4, 1e8 */
    for (int t = 0; t < 3; t++) {
        for (size_t i = 0; i < m.n_floats; i++) m.memory[i] = (float)(m.memory[i] * scales[t]);
        andrea_circuits c;
        CHECK_MSG(andrea_circuits_compute(&m, &c, &err) == 0, "scale %d: %s", t, err.msg);
        double worst = 0;
        int finite = 0, copying_same = 1;
        for (int k = 0; k < CIRCUIT_N_KINDS; k++)
            for (int s = 0; s < 6; s++)
                for (int d = 0; d < 6; d++) {
                    double x = andrea_circuits_score(&ref, k, s, d), y = andrea_circuits_score(&c, k, s, d);
                    if (isnan(x) != isnan(y)) worst = INFINITY;
                    if (isnan(x)) continue;
                    finite++;
                    /* the Grams' rounding (composition_tol), the scaled weights rounded to float too */
                    worst = fmax(worst, fabs(x - y) / composition_tol(&cfg, x));
                }
        for (int i = 0; i < 6; i++) copying_same &= ref.copying[i] == c.copying[i];
        fprintf(stderr, "  scale step %d: worst %.3g of its bound\n", t, worst);
        CHECK_MSG(finite == 3 * 12 && worst <= 1, "scale step %d: composition differs by %.3g x its bound (%d finite)", t,
                  worst, finite);
        CHECK_MSG(copying_same, "scale step %d: copying scores differ", t);
        andrea_circuits_free(&c);
    }
    andrea_circuits_free(&ref);
    andrea_model_free(&m);
}

int main(void) {
    RUN(test_a_small_gram_budget_gives_the_same_scores);
    RUN(test_series_drops_the_trailing_step_part);
    RUN(test_baseline_is_about_one_over_sqrt_c_and_seeded);
    RUN(test_heads_without_output_score_nan);
    RUN(test_scores_from_the_weights_do_not_change_with_their_scale);
    return check_summary("test_circuits_unit");
}
