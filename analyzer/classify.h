/* classify.h — the analysis passes over one dump: scores, labels, W_O evidence, causal check.
 *
 * Job: read a dump streamingly (one [T, T] attention map and one [L, H, T] block of per-head
 * values at a time: memory is bounded by one sequence, never the file), compute per suite and head
 * the score / baseline / control of score.h and the pass's extra evidence, apply the label rules,
 * average head_dla and head_out_norm over the eligible queries, and run the causal check:
 * ablate heads one at a time (forward.h's `ablate`) and measure the rise of the suite's next-token
 * loss at the eligible queries q with q + 1 < length (predicting token q + 1) on the first
 * `ablate_items` items that have such a query. Every labelled head is ablated; for the mean rise,
 * all heads when L*H <= 64, else 64 heads spread evenly (andrea_ablation_mean_heads; plus the
 * labelled ones).
 * The checkpoint for the causal check is opt->ckpt (a file, or a folder searched by sha256), else
 * the dump's checkpoint_path while its sha256 still equals the dump's, else a .bin or .safetensors file
 * beside the dump with that sha256. None found is an error, unless opt->no_causal: then ablation
 * statistics stay NaN and out->ablation_note says why (so does ablate_items == 0, and so it names
 * a suite none of whose items has a loss position). The causal check is never skipped silently.
 * Failure contract: -1 with "FILE: problem"; out is left freed.
 */
#ifndef ANDREA_CLASSIFY_H
#define ANDREA_CLASSIFY_H

#include "../engine/forward.h"
#include "../probes/probe.h"
#include "../tokenizer/tokenizer.h"
#include "ablation.h"
#include "analysis.h"
#include "rules.h"

/* --ablate-items by default: enough items for a useful interval (docs/scores.md), more where
 * forwards are cheap */
#define ANDREA_ABLATE_ITEMS_AUTO (-1)
#define ANDREA_ABLATE_ITEMS_GPU 16
#define ANDREA_ABLATE_ITEMS_CPU 8

/* Where a classification's time went (seconds, added to): scoring and head-value means, the
 * causal check and its parts. */
typedef struct {
    double t_scoring, t_causal;
    andrea_ablation_timing causal;
} andrea_classify_timing;

typedef struct {
    andrea_rules rules;
    const char *ckpt;       /* override of the dump's checkpoint path, or NULL */
    int ablate_items;       /* items per suite for the causal check; 0 = off; ANDREA_ABLATE_ITEMS_AUTO:
                               16 on a GPU, 8 on the CPU (andrea_ablate_items) */
    andrea_ablation_method ablation; /* how ablated heads are replaced (default mean) */
    int no_causal;          /* 1: a checkpoint that cannot be found skips the causal check (note)
                               instead of failing */
    int has_step;
    long long step;         /* training step (else parsed from the checkpoint's file name) */
    andrea_engine_options engine; /* how the causal check opens its engine (andrea_engine_options_init's
                                     defaults; analyze passes the forwards' options) */
    const andrea_model *model; /* already loaded checkpoint whose sha256 the caller has matched
                                  with the dump's (andrea analyze): used instead of loading */
    andrea_classify_timing *timing; /* or NULL */
    const andrea_tokenizer *tok; /* the model's tokenizer, for the successor class's ordinal kinds;
                                    NULL: classify opens the one beside the checkpoint, if any */
} andrea_classify_options;

void andrea_classify_options_init(andrea_classify_options *o);

/* The items the causal check runs on: o->ablate_items, or for AUTO the default of the engine
 * kind (gpu: 1 when it runs on a GPU). */
int andrea_ablate_items(const andrea_classify_options *o, int gpu);

int andrea_classify_dump(const char *dump_path, const andrea_classify_options *opt, andrea_analysis *out,
                         ae_error *err);

/* The analysis of a run whose head scorer was fed in the forward (andrea analyze: the scorer was
 * a sink of dump/dump_write.h's loop over `suites`): takes the scores from hs, runs the causal
 * check on eng (NULL: an engine opened here on opt->device) and fills out. dump_path: the dump
 * written beside (--dump), or NULL (stored as ""). sha256: the checkpoint's. */
struct head_scorer;
int andrea_classify_scored(const andrea_model *m, const char *sha256, const probe_suite *suites, int n_suites,
                           struct head_scorer *hs, andrea_engine *eng, const char *dump_path, const char *maps_dtype,
                           const andrea_classify_options *opt, andrea_analysis *out, ae_error *err);

/* The causal check of every suite on model mp (its ablation statistics into a->suites[]), on eng
 * when given (max_B >= ablate_items, max_T >= every suite's max_len), else on an engine opened
 * with eo. */
int andrea_causal_check(const andrea_model *mp, andrea_engine *eng, const andrea_engine_options *eo, const probe_suite *suites,
                        int n_suites, const andrea_ablation_options *ao, andrea_analysis *a, ae_error *err);

#endif
