/* weights_evidence.h — the part of some classes' evidence that comes from the weights, not the
 * maps (docs/scores.md, "Successor and copy-suppression scores from the weights"):
 *   successor (score kind PROBE_SCORE_WEIGHTS): score = the head's successor share, baseline and
 *     control = its chance (a random row's first maximum is any token of the kind);
 *   copy_suppression (extra PROBE_EXTRA_WEIGHTS): extra = the head's OV suppression share, which
 *     its rule asks for beside the attention to the next token's earlier copies.
 * Job: compute them once a checkpoint (analyzer/ov_classes.h) when a scored suite needs them, put
 * them into the analysis and label those suites again (pass.h's andrea_pass_suite_finish), after
 * the maps' statistics and before the causal check (which ablates the labelled sets).
 * Invariants: suites that need nothing from the weights are left as they were; without a
 * tokenizer (tok NULL) or an ordinal kind that survives it, successor stays NaN and labels nothing.
 * Failure contract: -1 with "PATH: problem" (ordinals.txt, out of memory); a is then unchanged.
 */
#ifndef ANDREA_WEIGHTS_EVIDENCE_H
#define ANDREA_WEIGHTS_EVIDENCE_H

#include "../common/error.h"
#include "../engine/model.h"
#include "../tokenizer/tokenizer.h"
#include "analysis.h"

int andrea_weights_evidence(const andrea_model *m, const andrea_tokenizer *tok, andrea_analysis *a, ae_error *err);

#endif
