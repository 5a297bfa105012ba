/* analysis.h — the result of classifying one dump: per suite (= class) and head, the statistics
 * and the label, plus what the catalog needs to identify the model and the run.
 *
 * Invariants: heads[] of a suite holds n_layer * n_head entries in (layer, head) order; a
 * statistic that was not measured is NaN (stored as SQL NULL), never 0; `label` follows the
 * suite's rule (pass.h) applied to score, baseline, control.
 */
#ifndef ANDREA_ANALYSIS_H
#define ANDREA_ANALYSIS_H

#include <stdint.h>

#include "../engine/model.h"
#include "pass.h"

typedef struct {
    int layer, head;
    double score, baseline, control;
    double extra;            /* the pass's extra evidence (NaN when none) */
    double ablation_delta;   /* rise of the suite's next-token loss with this head ablated */
    double dla_mean;         /* mean head_dla at eligible queries (q+1 < length) */
    double norm_mean;        /* mean head_out_norm at eligible queries */
    int label;
} andrea_head_score;

typedef struct {
    char name[64];              /* suite name = class name */
    const andrea_pass *pass;
    andrea_label_rule rule;
    int n_items;
    int64_t n_queries;          /* eligible (item, query) pairs */
    int n_ablation_items;       /* items the causal check ran on (0 = none) */
    double clean_loss;          /* their next-token loss with nothing ablated (NaN = not run) */
    double ablation_mean;       /* mean ablation_delta over the heads ablated for the mean */
    andrea_head_score *heads;   /* [n_layer * n_head] */
} andrea_suite_scores;

typedef struct {
    char dump_path[4096];
    char ckpt_path[4096];       /* as recorded in the dump */
    char sha256[65];
    char dump_seal[65];         /* the dump's seal checksum: which run scored which dump */
    char maps_dtype[8];
    andrea_config cfg;
    int has_step;
    int step_given;             /* the step came from --step: it replaces a step the catalog knows */
    long long step;
    char ablation_note[768];    /* empty when the causal check ran; else why it did not */
    char skipped_note[768];     /* empty, or the map-only suites (no query with a target) that
                                   classify left out: their statistics would all be NULL */
    char *settings_json;        /* canonical settings of the run (rules, suites, ablation) */
    andrea_suite_scores *suites;
    int n_suites;
} andrea_analysis;

void andrea_analysis_free(andrea_analysis *a);

#endif
