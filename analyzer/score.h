/* score.h — the score, baseline and control statistics of docs/scores.md.
 *
 * Job: turn one head's attention maps, one sequence at a time, into three numbers per suite:
 *   score    = mean over ALL eligible (item, query) pairs of the suite, pooled across items, of
 *              sum_{k in targets(q)} attn[q, k]   (eligible: the query has >= 1 target key);
 *   baseline = the same mean under uniform causal attention: |targets(q) ∩ [0..q]| / (q + 1);
 *   control  = the same statistic of the same head on shuffled targets: for each eligible query,
 *              as many DISTINCT keys as it has targets, drawn uniformly from [0..q] (nothing
 *              excluded, the true targets may be drawn) by a generator seeded from
 *              (ANDREA_CONTROL_SEED, item index, query) — the same keys for every head and run;
 *              for a class marked PROBE_CONTROL_SAME_DISTANCE (entity) the targets shifted to the
 *              distance another eligible query of the item (drawn by that generator) has to its own.
 * and, for the positional class (Voita et al. 2019), where each query's most-attended key lies:
 *   offset hits[k] = eligible queries whose argmax key (first max) is q - k, k = 1..ANDREA_POS_MAX_OFFSET;
 *   offset base[k] = the same count's expectation for an argmax drawn uniformly from [0..q]:
 *                    sum over eligible queries with q >= k of 1 / (q + 1);
 *   control top1   = eligible queries whose argmax is one of their control keys.
 * A "plan" (score_seq_plan) holds the head-independent part of one sequence: its eligible queries,
 * their target keys and control keys. Accumulators (score_acc) are per head and add plans and maps.
 * Invariants: keys of a plan are within [0..q]; sums are in double; an accumulator with n = 0
 * reports NaN (no eligible query), never 0.
 * Failure contract: andrea_score_plan_build returns -1 with "SUITE: item N: problem" on malformed targets
 * (key > query, query >= length) or on allocation failure.
 */
#ifndef ANDREA_SCORE_H
#define ANDREA_SCORE_H

#include <stdint.h>

#include "../common/error.h"
#include "../probes/probe.h"

#define ANDREA_CONTROL_SEED 0x616e64726561ull /* "andrea" */
/* The largest relative offset the positional statistics count (docs/scores.md, positional). */
#define ANDREA_POS_MAX_OFFSET 16

typedef struct {
    int query;
    int n_keys;      /* targets of this query (>= 1) */
    int key_off;     /* offset of its keys in plan->keys and plan->control_keys */
    int hard;        /* counted by the extra statistic: the class's `hard` rule (probes/classes.h) */
} score_query;

typedef struct {
    int length;               /* tokens in the item */
    score_query *queries;     /* eligible queries, ascending */
    int n_queries;
    int *keys;                /* true target keys, grouped per query */
    int *control_keys;        /* shuffled keys, same grouping */
    int n_keys;
    double baseline_sum;      /* sum over queries of n_keys / (q + 1) */
    double offset_base[ANDREA_POS_MAX_OFFSET + 1]; /* [k]: sum over queries with q >= k of 1 / (q + 1) */
} score_seq_plan;

/* Builds the plan of one item (item index `seq` seeds the control keys). */
int andrea_score_plan_build(const probe_item *item, int seq, const char *suite, score_seq_plan *plan,
                     ae_error *err);
void andrea_score_plan_free(score_seq_plan *plan);

typedef struct {
    double score_sum, control_sum, baseline_sum;
    int64_t n;                /* eligible queries seen */
    double top1_sum;          /* queries whose argmax key (first max) is a target */
    double hard_top1_sum;     /* same, only over plan queries marked hard */
    int64_t n_hard;
    double control_top1_sum;  /* queries whose argmax key is one of their control keys */
    double offset_hits[ANDREA_POS_MAX_OFFSET + 1]; /* [k]: queries whose argmax key is q - k ([0] unused) */
    double offset_base[ANDREA_POS_MAX_OFFSET + 1]; /* [k]: the plans' offset_base, summed */
} score_acc;

/* Adds one head's map of one sequence. map: [T, T] row-major, query × key, T >= plan->length. */
void andrea_score_acc_add(score_acc *a, const score_seq_plan *plan, const float *map, int T);
/* Same for a map of IEEE fp16 bits (converted exactly, as a dump's reader does); row: [T] scratch. */
void andrea_score_acc_add_f16(score_acc *a, const score_seq_plan *plan, const uint16_t *map, int T, float *row);

double andrea_score_acc_score(const score_acc *a);
double andrea_score_acc_baseline(const score_acc *a);
double andrea_score_acc_control(const score_acc *a);
double andrea_score_acc_top1(const score_acc *a);
double andrea_score_acc_hard_top1(const score_acc *a);
/* Positional (docs/scores.md): the offset k in 1..ANDREA_POS_MAX_OFFSET that most queries' argmax
 * falls on (the smallest on a tie), its share of the eligible queries, that share's expectation
 * under a uniformly drawn argmax, and the share of queries whose argmax is a control key. NaN
 * statistics and offset 0 when no query was seen. */
typedef struct {
    int offset;
    double share, baseline, control;
} score_offset;
score_offset andrea_score_acc_offset(const score_acc *a);
/* Adds the head-independent sums of plan p (baseline, offset bases, n, n_hard) to a: what
 * andrea_score_acc_add adds besides the map's own sums (the GPU path adds the map's sums apart). */
void andrea_score_acc_add_plan(score_acc *a, const score_seq_plan *p);

#endif
