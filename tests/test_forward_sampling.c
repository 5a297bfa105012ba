/* test_forward_sampling.c — next-token choice for `andrea generate` (engine/sample.h). */
#include <math.h>
#include <string.h>

#include "check.h"
#include "engine/sample.h"

static void test_greedy_picks_the_largest_logit(void) {
    const float l[5] = {0.1f, 2.0f, -1.0f, 1.5f, 0.0f};
    CHECK(andrea_sample_greedy(l, 5) == 1);
}

static void test_greedy_breaks_ties_toward_the_lowest_id(void) {
    const float l[4] = {0.0f, 3.0f, 1.0f, 3.0f};
    CHECK(andrea_sample_greedy(l, 4) == 1);
}

static void test_greedy_never_picks_a_non_finite_logit(void) {
    const float l[4] = {NAN, INFINITY, -2.0f, -3.0f};
    CHECK(andrea_sample_greedy(l, 4) == 2);
}

static void test_temperature_zero_is_greedy(void) {
    const float l[3] = {1.0f, 0.0f, 5.0f};
    andrea_rng r;
    andrea_rng_seed(&r, 1);
    for (int i = 0; i < 100; i++) CHECK(andrea_sample(l, 3, 0.0f, &r) == 2);
}

static void test_sampling_follows_the_softmax_probabilities(void) {
    /* softmax of log(p) at temperature 1 is p; 40000 draws: each frequency within 0.015
     * (about 6 standard deviations, sqrt(0.25/40000) = 0.0025) */
    const double p[3] = {0.5, 0.3, 0.2};
    const float l[3] = {(float)log(p[0]), (float)log(p[1]), (float)log(p[2])};
    int count[3] = {0, 0, 0};
    andrea_rng r;
    andrea_rng_seed(&r, 7);
    for (int i = 0; i < 40000; i++) count[andrea_sample(l, 3, 1.0f, &r)]++;
    for (int k = 0; k < 3; k++) CHECK_MSG(fabs(count[k] / 40000.0 - p[k]) < 0.015, "token %d: %d draws", k, count[k]);
}

static void test_temperature_sharpens_the_distribution(void) {
    /* at temperature 0.5, p ∝ p^2: 0.25/0.38 = 0.658 for the first token */
    const float l[3] = {(float)log(0.5), (float)log(0.3), (float)log(0.2)};
    int first = 0;
    andrea_rng r;
    andrea_rng_seed(&r, 8);
    for (int i = 0; i < 40000; i++) first += andrea_sample(l, 3, 0.5f, &r) == 0;
    CHECK_MSG(fabs(first / 40000.0 - 0.25 / 0.38) < 0.015, "%d draws of token 0", first);
}

static void test_same_seed_gives_the_same_draws(void) {
    const float l[6] = {0, 0, 0, 0, 0, 0};
    andrea_rng a, b;
    andrea_rng_seed(&a, 99);
    andrea_rng_seed(&b, 99);
    int same = 1;
    for (int i = 0; i < 50; i++) same &= andrea_sample(l, 6, 1.0f, &a) == andrea_sample(l, 6, 1.0f, &b);
    CHECK(same);
}

static void test_uniform_draws_lie_in_the_unit_interval(void) {
    andrea_rng r;
    andrea_rng_seed(&r, 0);
    double lo = 1, hi = 0;
    for (int i = 0; i < 100000; i++) {
        double u = andrea_rng_uniform(&r);
        lo = fmin(lo, u), hi = fmax(hi, u);
    }
    CHECK(lo >= 0 && lo < 1e-3 && hi < 1 && hi > 1 - 1e-3);
}

int main(void) {
    RUN(test_greedy_picks_the_largest_logit);
    RUN(test_greedy_breaks_ties_toward_the_lowest_id);
    RUN(test_greedy_never_picks_a_non_finite_logit);
    RUN(test_temperature_zero_is_greedy);
    RUN(test_sampling_follows_the_softmax_probabilities);
    RUN(test_temperature_sharpens_the_distribution);
    RUN(test_same_seed_gives_the_same_draws);
    RUN(test_uniform_draws_lie_in_the_unit_interval);
    return check_summary("test_forward_sampling");
}
