/* ablation.h — the causal check of one suite (internal to classify; see classify.h).
 * Invariant: the loss positions are the class's (probes/classes.h `loss_positions`; a user suite:
 * its target queries) p with p + 1 < length, the predicted token is tokens[p + 1]; the same items
 * and positions serve the clean run and every ablated run, so deltas of different heads are
 * comparable. */
#ifndef ANDREA_ABLATION_H
#define ANDREA_ABLATION_H

#include "../common/progress.h"
#include "../engine/forward.h"
#include "../probes/probe.h"
#include "analysis.h"

/* Fills s->clean_loss, s->n_ablation_items, s->ablation_mean and heads[].ablation_delta (NaN for
 * heads not ablated). max_items: items to use (the first ones with a loss position). */
int andrea_ablation_suite(andrea_engine *e, const andrea_config *cfg, const probe_suite *items, int max_items,
                          andrea_suite_scores *s, ae_error *err);

/* The same for n_suites suites into scores[] (prog, if not NULL, advances a suite at a time).
 * Suites whose picked items are the same token sequences (classes sharing a stream) share their
 * forwards, each averaging its own loss positions: the values are those of one suite at a time. */
int andrea_ablation_suites(andrea_engine *e, const andrea_config *cfg, const probe_suite *suites, int n_suites,
                           int max_items, andrea_suite_scores *scores, ae_progress *prog, ae_error *err);

/* The heads whose deltas make a suite's ablation_mean: in_mean[i] = 1 for every head when NH <=
 * ANDREA_ABLATE_MEAN_HEADS (64), else for the 64 heads floor(k NH / 64), k = 0..63. in_mean: [NH]. */
void andrea_ablation_mean_heads(int NH, unsigned char *in_mean);

#endif
