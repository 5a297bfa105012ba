/* test_ablation_stats — the causal check's statistics (analyzer/ablation_stats.h): bootstrap
 * intervals, the robust yardstick, percentiles and each path of the verdict rule
 * (docs/scores.md, "Causal evidence"). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../analyzer/ablation_stats.h"
#include "check.h"

static int draws[ANDREA_BOOT_DRAWS * 64];
static double scratch[ANDREA_BOOT_DRAWS];

static void test_interval_brackets_the_pooled_effect_and_is_reproducible(void) {
    enum { B = 12 };
    double d[B], n[B], e1, lo1, hi1, e2, lo2, hi2;
    for (int b = 0; b < B; b++) d[b] = 0.1 * b, n[b] = 1 + b % 3; /* per-item sums over 1..3 positions */
    andrea_boot_draws(B, 7, draws);
    andrea_boot_effect(d, n, B, draws, scratch, &e1, &lo1, &hi1);
    double sd = 0, sn = 0;
    for (int b = 0; b < B; b++) sd += d[b], sn += n[b];
    CHECK_MSG(fabs(e1 - sd / sn) < 1e-15, "pooled effect %.17g, want %.17g", e1, sd / sn);
    CHECK_MSG(lo1 < e1 && e1 < hi1, "interval [%g, %g] around %g", lo1, hi1, e1);
    andrea_boot_draws(B, 7, draws);
    andrea_boot_effect(d, n, B, draws, scratch, &e2, &lo2, &hi2);
    CHECK(e1 == e2 && lo1 == lo2 && hi1 == hi2); /* the same seed, the same interval */
    andrea_boot_draws(B, 8, draws);
    andrea_boot_effect(d, n, B, draws, scratch, &e2, &lo2, &hi2);
    CHECK(e1 == e2 && (lo1 != lo2 || hi1 != hi2)); /* another seed: other draws */
}

static void test_no_interval_under_the_minimum_items_and_none_without_positions(void) {
    double d[ANDREA_CI_MIN_ITEMS] = {0}, n[ANDREA_CI_MIN_ITEMS], e, lo, hi;
    for (int b = 0; b < ANDREA_CI_MIN_ITEMS; b++) d[b] = b, n[b] = 2;
    const int B = ANDREA_CI_MIN_ITEMS - 1;
    andrea_boot_draws(B, 1, draws);
    andrea_boot_effect(d, n, B, draws, scratch, &e, &lo, &hi);
    CHECK(isfinite(e) && isnan(lo) && isnan(hi));
    andrea_boot_draws(ANDREA_CI_MIN_ITEMS, 1, draws);
    andrea_boot_effect(d, n, ANDREA_CI_MIN_ITEMS, draws, scratch, &e, &lo, &hi);
    CHECK(isfinite(lo) && isfinite(hi));
    for (int b = 0; b < ANDREA_CI_MIN_ITEMS; b++) n[b] = 0;
    andrea_boot_effect(d, n, ANDREA_CI_MIN_ITEMS, draws, scratch, &e, &lo, &hi);
    CHECK(isnan(e) && isnan(lo) && isnan(hi));
}

/* One huge head moves the mean, not the median or the MAD. */
static void test_yardstick_is_robust_to_one_huge_head(void) {
    double v[32], s[32], med, mad;
    for (int i = 0; i < 32; i++) v[i] = 0.01 * (i % 4); /* 0, .01, .02, .03 */
    v[7] = 3.8;
    v[9] = NAN; /* not measured: left out */
    andrea_median_mad(v, 32, s, &med, &mad);
    CHECK_MSG(fabs(med - 0.02) < 1e-12 && fabs(mad - 0.01) < 1e-12, "median %g MAD %g", med, mad); /* 31 values: 16th */
    CHECK(andrea_percentile_of(3.8, v, 32) > 98 && andrea_percentile_of(-1, v, 32) == 0);
    CHECK(isnan(andrea_percentile_of(NAN, v, 32)));
    CHECK(fabs(andrea_quantile(v, 32, 1.0, s) - 3.8) < 1e-15);
}

static andrea_verdict_input base(void) {
    return (andrea_verdict_input){.ci_low = 0.001, .median = 0.0, .mad = 0.001, .group_size = 3, .group_ci_low = 5.0,
                                  .control_median = 0.0, .control_mad = 0.5, .control_q80 = 1.0, .n_controls = 24,
                                  .group = 6.0, .restore = 3.0, .restore_ci_low = 2.5};
}

static void test_each_verdict_path(void) {
    andrea_verdict_input in = base();
    CHECK(andrea_evidence_verdict(&in) == ANDREA_EVIDENCE_REDUNDANT); /* weak alone, restores half its set */
    in.ci_low = 0.06; /* above median + max(3 x 1.4826 x 0.001, 0.01) */
    CHECK(andrea_evidence_verdict(&in) == ANDREA_EVIDENCE_NECESSARY);
    in = base();
    in.ci_low = 0.009; /* 3 robust SDs is 0.0044, but under the measurable 0.01 */
    CHECK(andrea_evidence_verdict(&in) != ANDREA_EVIDENCE_NECESSARY);
    in = base();
    in.group_ci_low = 0.9; /* the set under the random sets' 80th percentile */
    CHECK(andrea_evidence_verdict(&in) == ANDREA_EVIDENCE_PATTERN_ONLY);
    in = base();
    in.control_q80 = 0.1, in.control_median = 0.05; /* one random set with an outstanding head: its max does not decide */
    in.group_ci_low = 0.5;
    CHECK(andrea_evidence_verdict(&in) == ANDREA_EVIDENCE_REDUNDANT);
    in = base();
    in.restore = 0.9; /* under half its even share of a set of 3: 6.0 x 0.5 / 3 = 1.0 */
    CHECK(andrea_evidence_verdict(&in) == ANDREA_EVIDENCE_PATTERN_ONLY);
    in = base();
    in.restore_ci_low = -0.1; /* what it restores is not sure */
    CHECK(andrea_evidence_verdict(&in) == ANDREA_EVIDENCE_PATTERN_ONLY);
    in = base();
    in.group_size = 1; /* a set of one above random single heads: nothing backs it up */
    CHECK(andrea_evidence_verdict(&in) == ANDREA_EVIDENCE_NECESSARY);
    in = base();
    in.ci_low = NAN; /* too few items: no verdict */
    CHECK(andrea_evidence_verdict(&in) == ANDREA_EVIDENCE_NONE);
    CHECK(andrea_evidence_name(ANDREA_EVIDENCE_NONE) == NULL &&
          !strcmp(andrea_evidence_name(ANDREA_EVIDENCE_PATTERN_ONLY), "pattern_only"));
}

int main(void) {
    test_interval_brackets_the_pooled_effect_and_is_reproducible();
    test_no_interval_under_the_minimum_items_and_none_without_positions();
    test_yardstick_is_robust_to_one_huge_head();
    test_each_verdict_path();
    return check_summary("test_ablation_stats");
}
