/* ablation.h — the causal check of one suite (internal to classify; see classify.h).
 * Invariant: the loss positions are the class's (probes/classes.h `loss_positions`; a user suite:
 * its target queries) p with p + 1 < length, the predicted token is tokens[p + 1]; the same items
 * and positions serve the clean run and every ablated run, so deltas of different heads are
 * comparable. */
#ifndef ANDREA_ABLATION_H
#define ANDREA_ABLATION_H

#include "../engine/forward.h"
#include "../probes/probe.h"
#include "analysis.h"

/* Fills s->clean_loss, s->n_ablation_items, s->ablation_mean and heads[].ablation_delta (NaN for
 * heads not ablated). max_items: items to use (the first ones with a loss position). */
int andrea_ablation_suite(andrea_engine *e, const andrea_config *cfg, const probe_suite *items, int max_items,
                   andrea_suite_scores *s, ae_error *err);

#endif
