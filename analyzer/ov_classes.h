/* ov_classes.h — two head classes read off each head's effective OV circuit, from the weights
 * alone (no probes, no forward pass): successor heads (Gould et al. 2024, arXiv 2312.09230) and
 * the OV half of copy suppression (McDougall et al. 2023, arXiv 2310.04625). Definitions and the
 * choices behind them: docs/scores.md, "Successor and copy-suppression scores from the weights";
 * the ordinal kinds: probes/data/ordinals.txt, format in docs/probes.md.
 *
 * Job: for a model in memory and its tokenizer, compute per head
 *   - successor: the share of ordinal pairs (t_i, t_i+1) of one kind (Monday -> Tuesday) whose
 *     successor is the FIRST maximum, among the kind's tokens, of row t_i of the head's effective
 *     OV circuit;
 *   - suppression: the share of checked tokens t whose own entry of row t is among the
 *     OV_CLASSES_SUPPRESSION_K most negative entries of that row over the whole vocabulary
 *     (all tokens when V <= OV_CLASSES_SUPPRESSION_MAX_TOKENS, else a seeded sample of that many).
 * The effective OV circuit of head h in layer l > 0, row t (row vectors, C = d_model):
 *     e_t = W_E[t] + MLP0(LN2_0(W_E[t]))          (block 0 without its attention, no position)
 *     v_t = centre(e_t) diag(ln1w_l) W_V^h W_O^h  (head h's slices of qkvw / attprojw)
 *     row_t = centre(v_t) diag(lnfw) W_U^T        (W_U = wte rows 0..V-1, tied)
 * and in layer 0, which comes before MLP0, e_t = W_E[t]. Every bias and LayerNorm beta is left
 * out, and each LayerNorm's division by a norm, a positive factor per row that no rank within a
 * row depends on.
 * Invariants:
 *   - a pure function of the weights, the tokenizer and ordinals.txt: the token sample is drawn
 *     from splitmix64 seeded OV_CLASSES_SUPPRESSION_SEED, and no thread count changes a result
 *     (every product a thread makes has the same shape and inputs whatever the thread count);
 *   - successor[] is NaN for every head when no kind survives tokenization (or tok is NULL);
 *     suppression[] is in [0, 1] for every head.
 * Failure contract: -1 with one line "PATH: problem" (ordinals.txt missing or malformed, named
 * with its line; out of memory; a size that overflows); out zeroed, nothing to free.
 */
#ifndef ANDREA_OV_CLASSES_H
#define ANDREA_OV_CLASSES_H

#include "../common/error.h"
#include "../engine/model.h"
#include "../tokenizer/tokenizer.h"

/* "Among the K most negative entries" (McDougall et al. report the bottom 10). */
#define OV_CLASSES_SUPPRESSION_K 10
/* Rows checked for the suppression share: all when V is at most this, else a sample. */
#define OV_CLASSES_SUPPRESSION_MAX_TOKENS 1024
#define OV_CLASSES_SUPPRESSION_SEED 0x616e64726561ULL /* "andrea" */
/* Proposed label cuts (docs/scores.md: random-weight controls stay far below both). */
#define OV_CLASSES_SUCCESSOR_CUT 0.5
#define OV_CLASSES_SUPPRESSION_CUT 0.5

typedef struct {
    int n_layer, n_head;
    double *successor;          /* [NH] share, NaN when no ordinal kind survives tokenization */
    double successor_chance;    /* mean over pairs of 1/|kind| (NaN when none) */
    int n_successor_pairs, n_successor_kinds;
    double *suppression;        /* [NH] share of the checked tokens whose own logit is among the K most lowered */
    double suppression_chance;  /* K / V */
    int n_suppression_tokens;
} andrea_ov_classes;

/* Both scores for every head (index l * n_head + h). tok may be NULL: no kind survives, so the
 * successor scores are NaN and ordinals.txt is not read. */
int andrea_ov_classes_compute(const andrea_model *m, const andrea_tokenizer *tok, andrea_ov_classes *out,
                              ae_error *err);
void andrea_ov_classes_free(andrea_ov_classes *o);

#endif
