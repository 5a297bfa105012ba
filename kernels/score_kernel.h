/* score_kernel.h — the head scorer's statistics accumulated on the GPU, from maps that never leave it.
 *
 * Job: docs/scores.md's per-head sums for one suite, batch by batch, from the device-resident
 * outputs of the CUDA forward (maps [B, L, H, T, T], per-head norms and DLA [B, L, H, T]): per
 * head the sum over eligible (item, query) pairs of the target mass (score), of the control keys'
 * mass (control), of top1, hard_top1 and control-key argmax hits, of argmax hits at each relative
 * offset 1..16 (the positional class), and of head_dla (where q + 1 < length) and
 * head_out_norm at the eligible queries with their counts (finite values only). The suite's plan
 * (eligible queries, target keys, control keys, hard marks) is built on the host by
 * analyzer/score.c and uploaded once per suite as CSR; the head-independent parts (baseline,
 * n_queries, n_hard) stay on the host with the plans. Only the [n_heads] sums come back.
 * Same definitions as analyzer/score.c's andrea_score_acc_add: a query's target and control masses are
 * summed in double, top1's argmax is the first maximum over keys 0..q, fp16 maps are converted
 * exactly to fp32 first. Sums are double; every (sequence, head) pair is reduced in a fixed order
 * and the pairs are added to the suite's sums in sequence order, so the result does not depend on
 * the batch size or on the chunking below (bit for bit).
 * Invariants: plan keys lie in [0, q] and q < length <= T (score.c checks them); work runs on the
 * caller's stream, after the forward that wrote the maps; the caller keeps the maps alive until
 * that stream has passed the work (kernels/cuda_pipeline.cu's copy stream does).
 * Out of GPU memory: a batch is scored in chunks of fewer sequences (halved until the per-chunk
 * buffer fits); when not even one sequence's buffer (or the suite's plan) fits, the call returns 1
 * and enqueues nothing, and the caller scores that batch on the host: never a wrong number.
 * Failure contract: -1 with err filled ("CUDA: call failed at file:line: reason").
 */
#ifndef ANDREA_SCORE_KERNEL_H
#define ANDREA_SCORE_KERNEL_H

#include "../common/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One suite's plan, host arrays: sequence s has eligible queries q_off[s] .. q_off[s+1]-1; query
 * j sits at position query[j] and has keys k_off[j] .. k_off[j+1]-1 (true targets keys[], control
 * keys control[], same grouping). */
typedef struct {
    int n_seq;
    const int *length;         /* [n_seq] tokens of each sequence */
    const int *q_off;          /* [n_seq + 1] */
    const int *query;          /* [n_q] */
    const unsigned char *hard; /* [n_q] 1: counted by hard_top1 */
    const int *k_off;          /* [n_q + 1] */
    const int *keys;           /* [n_k] */
    const int *control;        /* [n_k] */
} andrea_score_plan;

/* Relative offsets whose argmax hits are counted (analyzer/score.h's ANDREA_POS_MAX_OFFSET). */
#define ANDREA_SCORE_MAX_OFFSET 16

/* The sums of one head over the suite so far (counts as doubles: exact below 2^53):
 * control_top1 counts queries whose argmax is a control key, offset_hits[k - 1] those whose
 * argmax is key q - k (k = 1..ANDREA_SCORE_MAX_OFFSET). */
typedef struct {
    double score, control, top1, hard_top1, dla, norm, dla_n, norm_n;
    double control_top1, offset_hits[ANDREA_SCORE_MAX_OFFSET];
} andrea_score_sums;

/* One batch of device outputs: sequences b0 .. b0+nb-1 of the suite. */
typedef struct {
    const void *attn;       /* device [nb, n_heads, T, T]: __half bits (attn_fp16) or float */
    int attn_fp16;
    const float *norm;      /* device [nb, n_heads, T] or NULL */
    const float *dla;       /* device [nb, n_heads, T] or NULL */
    int b0, nb, T;
    void *stream;           /* cudaStream_t the work is enqueued on */
} andrea_score_batch;

typedef struct andrea_cuda_scorer andrea_cuda_scorer;

/* Host state only: no CUDA call until a suite begins. n_heads = L * H. */
andrea_cuda_scorer *andrea_cuda_scorer_open(int n_heads, ae_error *err);
/* Uploads the suite's plan and zeroes the sums: 0, or 1 when the GPU is out of memory for it
 * (the suite is then scored on the host), -1 on another failure. */
int andrea_cuda_scorer_begin(andrea_cuda_scorer *s, const andrea_score_plan *plan, ae_error *err);
/* Enqueues one batch: 0, or 1 (out of GPU memory even for one sequence: nothing enqueued), -1. */
int andrea_cuda_scorer_add(andrea_cuda_scorer *s, const andrea_score_batch *b, ae_error *err);
/* Waits for the suite's work and copies its sums into out[n_heads]; the scorer is ready for
 * the next suite. */
int andrea_cuda_scorer_end(andrea_cuda_scorer *s, andrea_score_sums *out, ae_error *err);
/* At most this many sequences per kernel launch (0: no limit): benchmarks and tests. */
void andrea_cuda_scorer_set_chunk(andrea_cuda_scorer *s, int max_seqs);
void andrea_cuda_scorer_free(andrea_cuda_scorer *s);

#ifdef __cplusplus
}
#endif

#endif
