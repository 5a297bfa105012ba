/* head_scorer_gpu.h — the head scorer's GPU path (internal to analyzer/head_scorer.c).
 *
 * Job: score a GPU batch where its maps are: the suite's plans (analyzer/score.h) flattened once
 * into the CSR of kernels/score_kernel.h, the batch's device maps, norms and DLA handed to the
 * scoring kernel, and at the suite's end its per-head sums added to the host accumulators.
 * The head-independent parts of the statistics (baseline, n_queries, n_hard) are the caller's.
 * Invariants: no CUDA call before the first GPU batch (a CPU run never touches the GPU); the
 * plans handed to suite_begin stay alive and unchanged until suite_end.
 * Failure contract: andrea_hs_gpu_add returns 0 (taken), 1 (declined: GPU out of memory, or a build
 * without CUDA; the caller scores the batch on the host) or -1 with err filled.
 */
#ifndef ANDREA_HEAD_SCORER_GPU_H
#define ANDREA_HEAD_SCORER_GPU_H

#include <stdint.h>

#include "../run/batch_sink.h"
#include "score.h"

typedef struct hs_gpu hs_gpu;

/* NULL without error in a build without CUDA (the scorer then has no GPU path). */
hs_gpu *andrea_hs_gpu_open(int n_heads, ae_error *err);
void andrea_hs_gpu_suite_begin(hs_gpu *g, const score_seq_plan *plans, int n_plans);
int andrea_hs_gpu_add(hs_gpu *g, const andrea_batch *b, const andrea_device_batch *d, ae_error *err);
/* Adds the suite's GPU sums (if any batch was taken) to acc[NH], dla_sum, ... and forgets the plans. */
int andrea_hs_gpu_suite_end(hs_gpu *g, score_acc *acc, double *dla_sum, double *norm_sum, int64_t *dla_n, int64_t *norm_n,
                     ae_error *err);
/* At most max_seqs sequences per kernel launch (tests: a batch cut in chunks scores the same). */
void andrea_hs_gpu_set_chunk(hs_gpu *g, int max_seqs);
void andrea_hs_gpu_free(hs_gpu *g);

#endif
