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

struct andrea_head_score {
    int layer, head;
    double score, baseline, control;
    double extra;            /* the pass's extra evidence (NaN when none) */
    double ablation_delta;   /* rise of the suite's next-token loss with this head ablated */
    double ablation_ci_low, ablation_ci_high; /* its 95% bootstrap interval over items */
    double ablation_pct;     /* its percentile among the yardstick heads' deltas (0..100) */
    double restore_delta;    /* labelled heads: the class set's effect minus that of the set
                                without this head (what it restores alone), and its interval */
    double restore_ci_low, restore_ci_high;
    int evidence;            /* ANDREA_EVIDENCE_* (ablation_stats.h) of a labelled head; 0 = none */
    double direct_delta;     /* labelled heads: the loss rise through the head's direct path to
                                the logits alone (later layers and ln_f's scale frozen) */
    double dla_mean;         /* mean head_dla at eligible queries (q+1 < length) */
    double norm_mean;        /* mean head_out_norm at eligible queries */
    int label;
};

typedef struct {
    char name[64];              /* suite name = class name */
    const andrea_pass *pass;
    andrea_label_rule rule;
    int n_items;
    int64_t n_queries;          /* eligible (item, query) pairs */
    int n_ablation_items;       /* items the causal check ran on (0 = none) */
    double clean_loss;          /* their next-token loss with nothing ablated (NaN = not run) */
    double ablation_mean;       /* mean ablation_delta over the heads ablated for the mean */
    double ablation_median, ablation_mad; /* the yardstick: median and MAD of those deltas */
    /* the labelled set removed together, and random sets of its size from the other heads */
    int group_size, n_controls;
    double group_delta, group_ci_low, group_ci_high;
    double control_median, control_mad, control_q80, control_max;
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
    char ablation[16];          /* the causal check's method: "mean", "resample" or "zero" */
    char interval_note[192];    /* empty, or why intervals and verdicts are missing (too few items):
                                   stored with ablation_note, shown unless --quiet */
    char skipped_note[768];     /* empty, or the map-only suites (no query with a target) that
                                   classify left out: their statistics would all be NULL */
    char *settings_json;        /* canonical settings of the run (rules, suites, ablation) */
    andrea_suite_scores *suites;
    int n_suites;
} andrea_analysis;

void andrea_analysis_free(andrea_analysis *a);

/* Appends text to a run's note (cap bytes), "; "-separated, cutting what does not fit; NULL or
 * cap 0: nothing. */
void andrea_note_append(char *note, size_t cap, const char *text);

/* Every causal-check statistic of suite s (and of its NH heads, when allocated) to "not
 * measured": NaN, no evidence. */
void andrea_suite_causal_clear(andrea_suite_scores *s, int NH);

#endif
