/* head_scorer.h — the head scorer: a sink of the forward loop (run/batch_sink.h) that turns the
 * maps and per-head values of every batch into the statistics of docs/scores.md while they are in
 * memory: per suite (= class, or a user suite) and head, score / baseline / control, top1 and
 * hard_top1 (the pass's extra evidence), dla_mean, norm_mean, n_queries, and the label.
 *
 * Fed by `andrea analyze` straight from the engine's buffers (on a GPU, by a kernel over the
 * device-resident maps, kernels/score_kernel.h: no map leaves the GPU for scoring; a GPU out of
 * memory even for that kernel's small buffers gets the batch's maps on the host instead, never
 * a wrong number), and by `andrea classify` from a dump
 * file (analyzer/classify.c): one definition, so scores from the forward equal scores from a dump
 * of the same maps (same numbers pooled in the same order; tests/test_scores_forward_equal_dump).
 * Invariants: memory is the plans of one suite (its items' targets and control keys) plus
 * per-head sums, never maps; sums are in double; under MPI each rank scores its shard and
 * suite_end pools the sums over the ranks (reduce_mpi.h: a collective every rank reaches).
 * Failure contract: -1 with "SUITE: item N: problem" (bad targets) or "scorer: out of memory".
 */
#ifndef ANDREA_HEAD_SCORER_H
#define ANDREA_HEAD_SCORER_H

#include "../run/batch_sink.h"
#include "analysis.h"
#include "rules.h"

typedef struct head_scorer head_scorer;

/* A scorer for n_suites suites of a model of shape cfg, labelling with rules. */
head_scorer *andrea_head_scorer_open(const andrea_config *cfg, const andrea_rules *rules, int n_suites, ae_error *err);
andrea_batch_sink andrea_head_scorer_sink(head_scorer *hs);
/* 1 when sequence `seq` of the suite begun last has an eligible query (its maps matter). */
int andrea_head_scorer_wants(const head_scorer *hs, int seq);
/* Hands the scored suites (every suite ended) to a: a->suites, a->n_suites; the scorer keeps none. */
void andrea_head_scorer_take(head_scorer *hs, andrea_analysis *a);
/* GPU batches: at most max_seqs sequences per scoring-kernel launch (0: the whole batch). */
void andrea_head_scorer_set_gpu_chunk(head_scorer *hs, int max_seqs);
void andrea_head_scorer_free(head_scorer *hs);

#endif
