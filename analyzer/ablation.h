/* ablation.h — the causal check of the suites (internal to classify; see classify.h).
 * Invariant: the loss positions are the class's (probes/classes.h `loss_positions`; a user suite:
 * its target queries) p with p + 1 < length, the predicted token is tokens[p + 1]; the same items
 * and positions serve the clean run and every ablated run, so deltas of different heads are
 * comparable. */
#ifndef ANDREA_ABLATION_H
#define ANDREA_ABLATION_H

#include <stddef.h>
#include <stdint.h>

#include "../common/progress.h"
#include "../engine/forward.h"
#include "../probes/probe.h"
#include "analysis.h"

/* How an ablated head's output is replaced (docs/scores.md, "Ablation methods"): by its mean over
 * the check's other items at the same position (default), by its output on another item of the
 * suite (a fixed seeded derangement), or by zeros. Mean and resample need 2 items a suite. */
typedef enum { ANDREA_ABLATION_MEAN = 0, ANDREA_ABLATION_RESAMPLE = 1, ANDREA_ABLATION_ZERO = 2 } andrea_ablation_method;

/* "mean", "resample", "zero". */
const char *andrea_ablation_method_name(andrea_ablation_method m);
/* 0 and *m for a method's name; -1 for anything else. */
int andrea_ablation_method_parse(const char *name, andrea_ablation_method *m);
#define ANDREA_ABLATION_METHODS "mean, resample, zero"

/* Where a causal check's time went (seconds and counts, added to): the clean forwards, the
 * method's replacement outputs, the direct effects, the ablated forwards and how many units
 * (sets of heads) they measured in how many engine forwards. */
typedef struct {
    double t_clean, t_values, t_direct, t_ablated;
    long units, forwards;
} andrea_ablation_timing;

typedef struct {
    andrea_ablation_method method;
    uint64_t seed;          /* resample's derangement, the random sets, the bootstrap draws */
    int max_items;          /* items per suite (the first ones with a loss position) */
    const andrea_model *model; /* the checked model, for the labelled heads' direct effects
                                  (its weights); NULL: none measured */
    andrea_ablation_timing *timing; /* or NULL */
} andrea_ablation_options;

/* The causal check of n_suites suites into scores[] (prog, if not NULL, advances a suite at a
 * time): per head its delta, interval and percentile; per suite the yardstick, its labelled set's
 * group effect against random sets and each labelled head's leave-one-in and verdict. Suites whose
 * picked items are the same token sequences (classes sharing a stream) share their forwards, each
 * reading its own loss positions. note (cap bytes) gets what the run should say (a suite of one
 * item refused by mean and resample), appended "; "-separated. A suite checked on fewer than
 * ANDREA_CI_MIN_ITEMS items gets deltas without intervals or verdicts (its n_ablation_items
 * says so; classify.c words the note). */
int andrea_ablation_suites(andrea_engine *e, const andrea_config *cfg, const probe_suite *suites, int n_suites,
                           const andrea_ablation_options *o, andrea_suite_scores *scores, char *note, size_t cap,
                           ae_progress *prog, ae_error *err);

/* andrea_ablation_suites of one suite with the default method (mean), seed 0, max_items items and
 * no note. */
int andrea_ablation_suite(andrea_engine *e, const andrea_config *cfg, const probe_suite *items, int max_items,
                          andrea_suite_scores *s, ae_error *err);

/* The yardstick's heads: every head up to this many, else an even spread of this many. */
#define ANDREA_ABLATE_MEAN_HEADS 64

/* The heads whose deltas make a suite's ablation_mean: in_mean[i] = 1 for every head when NH <=
 * ANDREA_ABLATE_MEAN_HEADS (64), else for the 64 heads floor(k NH / 64), k = 0..63. in_mean: [NH]. */
void andrea_ablation_mean_heads(int NH, unsigned char *in_mean);

#endif
