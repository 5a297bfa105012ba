/* test_analyzer_score.c — score / baseline / control math on synthetic maps (docs/scores.md). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../analyzer/analysis.h"
#include "../analyzer/pass.h"
#include "../analyzer/rules.h"
#include "../analyzer/score.h"
#include "check.h"

#define T 6

/* An item of T tokens whose targets are given as (query, key) pairs. */
static probe_item item_with(const probe_target *tg, int n) {
    static int toks[T];
    probe_item it = {0};
    it.tokens = toks;
    it.n_tokens = T;
    it.targets = (probe_target *)tg;
    it.n_targets = n;
    return it;
}

/* Map where every query puts mass 1 on key f(q). */
static void one_hot_map(float *m, int (*f)(int)) {
    memset(m, 0, sizeof(float) * T * T);
    for (int q = 0; q < T; q++) m[q * T + f(q)] = 1.0f;
}
static void uniform_map(float *m) {
    memset(m, 0, sizeof(float) * T * T);
    for (int q = 0; q < T; q++)
        for (int k = 0; k <= q; k++) m[q * T + k] = 1.0f / (float)(q + 1);
}
static int prev(int q) { return q > 0 ? q - 1 : 0; }
static int first(int q) { (void)q; return 0; }

static void test_perfect_prev_token_head_scores_one_against_the_uniform_baseline(void) {
    probe_target tg[] = {{1, 0}, {2, 1}, {3, 2}, {4, 3}, {5, 4}};
    probe_item it = item_with(tg, 5);
    score_seq_plan p;
    ae_error err;
    CHECK(andrea_score_plan_build(&it, 0, "prev_token", &p, &err) == 0);
    float m[T * T];
    one_hot_map(m, prev);
    score_acc a = {0};
    andrea_score_acc_add(&a, &p, m, T);
    CHECK(fabs(andrea_score_acc_score(&a) - 1.0) < 1e-12);
    double base = (1.0 / 2 + 1.0 / 3 + 1.0 / 4 + 1.0 / 5 + 1.0 / 6) / 5;
    CHECK(fabs(andrea_score_acc_baseline(&a) - base) < 1e-12);
    CHECK(fabs(andrea_score_acc_top1(&a) - 1.0) < 1e-12);
    andrea_score_plan_free(&p);
}

static int back3(int q) { return q >= 3 ? q - 3 : 0; }

/* positional: a head whose argmax is 3 back for every query that has such a key gets offset 3,
 * its share among all eligible queries (1..5: 3 of 5), and the baseline of an argmax drawn
 * uniformly (queries 3..5: 1/4 + 1/5 + 1/6, over 5); the bundled scorer sums the same way. */
static void test_positional_head_gets_its_offset_share_and_baseline(void) {
    probe_target tg[] = {{1, 0}, {2, 1}, {3, 2}, {4, 3}, {5, 4}};
    probe_item it = item_with(tg, 5);
    score_seq_plan p;
    ae_error err;
    CHECK(andrea_score_plan_build(&it, 0, "positional", &p, &err) == 0);
    float m[T * T];
    one_hot_map(m, back3);
    score_acc a = {0};
    andrea_score_acc_add(&a, &p, m, T);
    score_offset o = andrea_score_acc_offset(&a);
    CHECK_MSG(o.offset == 3, "offset %d", o.offset);
    CHECK(fabs(o.share - 3.0 / 5) < 1e-12);
    CHECK(fabs(o.baseline - (1.0 / 4 + 1.0 / 5 + 1.0 / 6) / 5) < 1e-12);
    /* through the pass: score, baseline and the offset as the extra statistic */
    andrea_head_score x;
    andrea_pass_head_stats(andrea_pass_for("positional"), &a, &x);
    CHECK(x.score == o.share && x.baseline == o.baseline && x.control == o.control && x.extra == 3);
    /* a prev-token head: offset 1, share 1 */
    one_hot_map(m, prev);
    score_acc b = {0};
    andrea_score_acc_add(&b, &p, m, T);
    o = andrea_score_acc_offset(&b);
    CHECK(o.offset == 1 && fabs(o.share - 1.0) < 1e-12);
    score_acc none = {0};
    o = andrea_score_acc_offset(&none);
    CHECK(o.offset == 0 && isnan(o.share) && isnan(o.baseline));
    andrea_score_plan_free(&p);
}

/* dormant: the extra is each head's mean output norm over the median head's; a head without
 * norms (--contrib none) has none, and max_extra then keeps its label away. */
static void test_dormant_extra_is_the_norm_ratio_to_the_median_head(void) {
    andrea_head_score h[4] = {0};
    const double norms[4] = {0.1, 2.0, 4.0, NAN};
    for (int i = 0; i < 4; i++) h[i].score = 0.9, h[i].baseline = 0.1, h[i].control = 0.1, h[i].norm_mean = norms[i];
    const andrea_pass *p = andrea_pass_for("dormant");
    andrea_pass_suite_finish(p, &p->rule, h, 4);
    CHECK(fabs(h[0].extra - 0.05) < 1e-12 && fabs(h[1].extra - 1.0) < 1e-12 && fabs(h[2].extra - 2.0) < 1e-12);
    CHECK(isnan(h[3].extra));
    CHECK(h[0].label == 1 && h[1].label == 0 && h[2].label == 0 && h[3].label == 0);
}

static void test_uniform_head_scores_exactly_its_baseline_and_control(void) {
    probe_target tg[] = {{2, 0}, {2, 1}, {4, 3}, {5, 0}};
    probe_item it = item_with(tg, 4);
    score_seq_plan p;
    ae_error err;
    CHECK(andrea_score_plan_build(&it, 3, "x", &p, &err) == 0);
    float m[T * T];
    uniform_map(m);
    score_acc a = {0};
    andrea_score_acc_add(&a, &p, m, T);
    /* queries 2 (2 keys), 4, 5: mean of 2/3, 1/5, 1/6 */
    double want = (2.0 / 3 + 1.0 / 5 + 1.0 / 6) / 3;
    CHECK(fabs(andrea_score_acc_score(&a) - want) < 1e-7);
    CHECK(fabs(andrea_score_acc_baseline(&a) - want) < 1e-12);
    CHECK(fabs(andrea_score_acc_control(&a) - want) < 1e-7);
    CHECK(a.n == 3);
    andrea_score_plan_free(&p);
}

static void test_scores_pool_queries_across_items_not_item_means(void) {
    /* item A: 1 eligible query hit fully; item B: 3 eligible queries, all missed.
     * Pooled mean = 1/4 (a mean of item means would be 1/2). */
    probe_target ta[] = {{1, 0}};
    probe_target tb[] = {{3, 1}, {4, 1}, {5, 1}};
    probe_item ia = item_with(ta, 1), ib = item_with(tb, 3);
    score_seq_plan pa, pb;
    ae_error err;
    CHECK(andrea_score_plan_build(&ia, 0, "x", &pa, &err) == 0);
    CHECK(andrea_score_plan_build(&ib, 1, "x", &pb, &err) == 0);
    float m[T * T];
    one_hot_map(m, first);
    score_acc a = {0};
    andrea_score_acc_add(&a, &pa, m, T);
    andrea_score_acc_add(&a, &pb, m, T);
    CHECK(fabs(andrea_score_acc_score(&a) - 0.25) < 1e-12);
    andrea_score_plan_free(&pa);
    andrea_score_plan_free(&pb);
}

static void test_control_keys_are_distinct_causal_and_reproducible(void) {
    probe_target tg[] = {{5, 0}, {5, 1}, {5, 2}, {5, 3}, {5, 4}, {5, 5}};
    probe_item it = item_with(tg, 6);
    score_seq_plan p1, p2, p3;
    ae_error err;
    CHECK(andrea_score_plan_build(&it, 7, "x", &p1, &err) == 0);
    CHECK(andrea_score_plan_build(&it, 7, "x", &p2, &err) == 0);
    CHECK(andrea_score_plan_build(&it, 8, "x", &p3, &err) == 0);
    /* All 6 keys of [0..5] drawn: a permutation of them. */
    int seen[6] = {0};
    for (int i = 0; i < 6; i++) {
        CHECK(p1.control_keys[i] >= 0 && p1.control_keys[i] <= 5);
        seen[p1.control_keys[i]]++;
    }
    for (int i = 0; i < 6; i++) CHECK(seen[i] == 1);
    CHECK(memcmp(p1.control_keys, p2.control_keys, sizeof(int) * 6) == 0);
    andrea_score_plan_free(&p1);
    andrea_score_plan_free(&p2);
    andrea_score_plan_free(&p3);
}

static void test_control_of_a_sharp_head_is_near_its_baseline_over_many_queries(void) {
    /* 200 items of prev-token targets with a perfect prev-token head: the control (random keys)
     * must average near the baseline, far below the score. */
    probe_target tg[] = {{1, 0}, {2, 1}, {3, 2}, {4, 3}, {5, 4}};
    probe_item it = item_with(tg, 5);
    float m[T * T];
    one_hot_map(m, prev);
    score_acc a = {0};
    ae_error err;
    for (int i = 0; i < 200; i++) {
        score_seq_plan p;
        CHECK(andrea_score_plan_build(&it, i, "x", &p, &err) == 0);
        andrea_score_acc_add(&a, &p, m, T);
        andrea_score_plan_free(&p);
    }
    CHECK(fabs(andrea_score_acc_control(&a) - andrea_score_acc_baseline(&a)) < 0.05);
    CHECK(andrea_score_acc_score(&a) - andrea_score_acc_control(&a) > 0.6);
}

static void test_bracket_target_behind_a_closed_pair_is_marked_hard(void) {
    /* "( ( ) )": pairs (2,1) and (3,0): query 3's opener 0 is not the most recent opener (1). */
    probe_target tg[] = {{2, 1}, {3, 0}};
    probe_item it = item_with(tg, 2);
    score_seq_plan p;
    ae_error err;
    CHECK(andrea_score_plan_build(&it, 0, "bracket_close", &p, &err) == 0);
    CHECK(p.n_queries == 2);
    CHECK(p.queries[0].hard == 0);
    CHECK(p.queries[1].hard == 1);
    andrea_score_plan_free(&p);
}

static void test_target_after_its_query_is_refused(void) {
    probe_target tg[] = {{2, 3}};
    probe_item it = item_with(tg, 1);
    score_seq_plan p;
    ae_error err = {{0}};
    CHECK(andrea_score_plan_build(&it, 4, "bad", &p, &err) == -1);
    CHECK(strstr(err.msg, "bad: item 4") != NULL);
}

static void test_suite_without_eligible_query_reports_nan_not_zero(void) {
    score_acc a = {0};
    CHECK(isnan(andrea_score_acc_score(&a)));
    CHECK(isnan(andrea_score_acc_baseline(&a)));
}

static void test_rule_needs_score_ratio_and_margin_together(void) {
    andrea_label_rule r = {0.4, 3.0, 0.25, 0, 0};
    CHECK(andrea_rule_labels(&r, 0.9, 0.1, 0.1, 0, NAN) == 1);
    CHECK(andrea_rule_labels(&r, 0.39, 0.1, 0.1, 0, NAN) == 0);  /* score too low */
    CHECK(andrea_rule_labels(&r, 0.9, 0.5, 0.1, 0, NAN) == 0);   /* ratio 1.8 */
    CHECK(andrea_rule_labels(&r, 0.9, 0.1, 0.7, 0, NAN) == 0);   /* margin 0.2 */
    CHECK(andrea_rule_labels(&r, NAN, 0.1, 0.1, 0, NAN) == 0);
    r.min_extra = 0.75; /* binds only a class with an extra statistic; a NaN extra fails it */
    CHECK(andrea_rule_labels(&r, 0.9, 0.1, 0.1, 0, NAN) == 1);
    CHECK(andrea_rule_labels(&r, 0.9, 0.1, 0.1, 1, 0.80) == 1);
    CHECK(andrea_rule_labels(&r, 0.9, 0.1, 0.1, 1, 0.70) == 0);
    CHECK(andrea_rule_labels(&r, 0.9, 0.1, 0.1, 1, NAN) == 0);
    r.min_extra = 0;
    r.max_extra = 0.25; /* dormant: the extra (a norm ratio) must be small; NaN (no norms) fails it */
    CHECK(andrea_rule_labels(&r, 0.9, 0.1, 0.1, 1, 0.20) == 1);
    CHECK(andrea_rule_labels(&r, 0.9, 0.1, 0.1, 1, 0.25) == 1);
    CHECK(andrea_rule_labels(&r, 0.9, 0.1, 0.1, 1, 0.30) == 0);
    CHECK(andrea_rule_labels(&r, 0.9, 0.1, 0.1, 1, NAN) == 0);
    CHECK(andrea_rule_labels(&r, 0.9, 0.1, 0.1, 0, NAN) == 1);
}

static void test_unknown_suite_gets_the_generic_pass(void) {
    CHECK(!strcmp(andrea_pass_for("induction")->name, "induction") && andrea_pass_for("induction")->cls == andrea_probe_class_find("induction"));
    CHECK(andrea_pass_for("my_suite") == &andrea_pass_generic);
}

static const char *write_file(const char *name, const char *text) {
    static char path[512];
    snprintf(path, sizeof path, "%s/%s", check_tmpdir(), name);
    FILE *f = fopen(path, "w");
    fputs(text, f);
    fclose(f);
    return path;
}

static void test_rules_file_overrides_one_class_and_flags_override_all(void) {
    andrea_rules r;
    andrea_rules_init(&r);
    ae_error err = {{0}};
    const char *p = write_file("rules.json", "{\"induction\": {\"min_score\": 0.7}, \"default\": {\"min_margin\": 0.05}}");
    CHECK(andrea_rules_load(&r, p, &err) == 0);
    const andrea_pass *pi = andrea_pass_for("induction"), *pb = andrea_pass_for("bos");
    andrea_label_rule ind = andrea_rules_for(&r, "induction", pi);
    CHECK(ind.min_score == 0.7 && ind.min_ratio == pi->rule.min_ratio && ind.min_margin == 0.05);
    andrea_label_rule bos = andrea_rules_for(&r, "bos", pb);
    CHECK(bos.min_score == pb->rule.min_score && bos.min_margin == 0.05);
    r.flags.has_min_score = 1;
    r.flags.r.min_score = 0.1;
    CHECK(andrea_rules_for(&r, "induction", pi).min_score == 0.1);
}

static void test_rules_file_with_a_misspelt_field_is_refused_naming_it(void) {
    andrea_rules r;
    andrea_rules_init(&r);
    ae_error err = {{0}};
    const char *p = write_file("typo.json", "{\"bos\": {\"min_scor\": 0.7}}");
    CHECK(andrea_rules_load(&r, p, &err) == -1);
    CHECK(strstr(err.msg, "min_scor") && strstr(err.msg, p));
}

static void test_rules_file_that_is_not_json_is_refused(void) {
    andrea_rules r;
    andrea_rules_init(&r);
    ae_error err = {{0}};
    const char *p = write_file("bad.json", "{\"bos\": ");
    CHECK(andrea_rules_load(&r, p, &err) == -1);
    CHECK(strstr(err.msg, "not valid JSON") != NULL);
}

int main(void) {
    RUN(test_perfect_prev_token_head_scores_one_against_the_uniform_baseline);
    RUN(test_positional_head_gets_its_offset_share_and_baseline);
    RUN(test_dormant_extra_is_the_norm_ratio_to_the_median_head);
    RUN(test_uniform_head_scores_exactly_its_baseline_and_control);
    RUN(test_scores_pool_queries_across_items_not_item_means);
    RUN(test_control_keys_are_distinct_causal_and_reproducible);
    RUN(test_control_of_a_sharp_head_is_near_its_baseline_over_many_queries);
    RUN(test_bracket_target_behind_a_closed_pair_is_marked_hard);
    RUN(test_target_after_its_query_is_refused);
    RUN(test_suite_without_eligible_query_reports_nan_not_zero);
    RUN(test_rule_needs_score_ratio_and_margin_together);
    RUN(test_unknown_suite_gets_the_generic_pass);
    RUN(test_rules_file_overrides_one_class_and_flags_override_all);
    RUN(test_rules_file_with_a_misspelt_field_is_refused_naming_it);
    RUN(test_rules_file_that_is_not_json_is_refused);
    return check_summary("test_analyzer_score");
}
