/* pass.h — one analysis pass per head class, all with the same interface.
 *
 * Job: describe what a class's pass measures and how it labels a head. The scoring itself is the
 * same for every class (score.h: attention mass on the class's targets, against a uniform-causal
 * baseline and a shuffled-target control); a pass adds its name, its default label rule, its
 * extra evidence (a statistic beyond the mass, e.g. bracket heads' accuracy on non-recent
 * openers) and where its causal check measures the loss. The class of a dump suite is its name;
 * an unknown suite name gets the generic pass, under its own name.
 * Invariants: names are the suite names of probe.h; every rule threshold is finite.
 */
#ifndef ANDREA_PASS_H
#define ANDREA_PASS_H

#include "score.h"

/* A head is labelled with a class when ALL three hold (docs/scores.md):
 *   score >= min_score, score / baseline >= min_ratio, score - control >= min_margin. */
typedef struct {
    double min_score, min_ratio, min_margin;
} andrea_label_rule;

typedef struct {
    const char *name;        /* class name (= suite name) */
    const char *targets;     /* the target rule, in words */
    andrea_label_rule rule;  /* default label rule */
    const char *extra_name;  /* extra evidence stored beside the score, or NULL */
    double (*extra)(const score_acc *a);
} andrea_pass;

extern const andrea_pass andrea_pass_prev_token, andrea_pass_induction, andrea_pass_duplicate,
    andrea_pass_bracket, andrea_pass_entity, andrea_pass_bos, andrea_pass_generic;

/* The pass for a suite name; unknown names get andrea_pass_generic. */
const andrea_pass *andrea_pass_for(const char *suite);
/* NULL-terminated list of the six class passes. */
extern const andrea_pass *const andrea_passes[];

/* 1 when the rule labels a head with these statistics (NaN statistics never label). */
int andrea_rule_labels(const andrea_label_rule *r, double score, double baseline, double control);

#endif
