/* pass.h — one analysis pass per head class, all with the same interface.
 *
 * Job: the analyzer's view of a class: its name, its default label rule and its extra evidence
 * (a statistic beyond the mass, e.g. bracket heads' accuracy on non-recent openers). Everything
 * particular to a class lives in its entry of probes/classes.c; this module only turns that entry
 * into the statistic functions of score.h. The scoring itself is the same for every class
 * (score.h: attention mass on the class's targets, against a uniform-causal baseline and a
 * shuffled-target control). An unknown suite name gets the generic pass, under its own name.
 * Invariants: names are the class names of probes/classes.h; every rule threshold is finite.
 */
#ifndef ANDREA_PASS_H
#define ANDREA_PASS_H

#include "../probes/classes.h"
#include "score.h"

typedef struct andrea_head_score andrea_head_score;

/* A head is labelled with a class when its rule holds (probes/classes.h, docs/scores.md). */
typedef probe_label_rule andrea_label_rule;

typedef struct {
    const char *name;        /* class name (= suite name) */
    const char *targets;     /* the target rule, in words */
    andrea_label_rule rule;  /* default label rule */
    const char *extra_name;  /* extra evidence stored beside the score, or NULL */
    double (*extra)(const score_acc *a); /* an extra statistic of the maps, or NULL */
    const probe_class *cls;  /* the class's entry (NULL for the generic pass) */
} andrea_pass;

extern const andrea_pass andrea_pass_generic;

/* The pass for a suite name; unknown names get andrea_pass_generic. */
const andrea_pass *andrea_pass_for(const char *suite);

/* 1 when the rule labels a head with these statistics (NaN statistics never label). */
/* has_extra: the class has an extra statistic (extra: its value, NaN when it has none); min_extra
 * and max_extra bind only then. */
int andrea_rule_labels(const andrea_label_rule *r, double score, double baseline, double control, int has_extra,
                       double extra);
/* 1 when the pass's class has an extra statistic (of the maps, the suite's heads or the weights). */
int andrea_pass_has_extra(const andrea_pass *p);
/* score, baseline, control and the maps' extra statistic of one head from its sums (the class's
 * score kind: probes/classes.h); statistics the weights give stay NaN. */
void andrea_pass_head_stats(const andrea_pass *p, const score_acc *a, andrea_head_score *x);
/* The statistics that need every head of the suite (the output norm ratio), then each head's
 * label under rule. heads: [NH], their own statistics set. */
void andrea_pass_suite_finish(const andrea_pass *p, const andrea_label_rule *rule, andrea_head_score *heads, int NH);

#endif
