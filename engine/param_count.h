/* param_count.h — where the parameters of an ANDREA model sit (docs/checkpoints.md, "Model families").
 *
 * Job: the numbers `andrea info` prints, computed once here so the CLI holds no arithmetic and
 * tests can check them for any shape without a checkpoint file.
 * Invariants: counts are of real parameters: the token embedding counts vocab_size rows (the
 * padding rows up to padded_vocab_size are reported apart, in wte_padding, and not in total);
 * total = attention + MLP + LayerNorms (incl. final) + wte + wpe.
 * Failure contract: -1 with the config problem (andrea_param_sizes' message).
 */
#ifndef ANDREA_PARAM_COUNT_H
#define ANDREA_PARAM_COUNT_H

#include <stddef.h>

#include "model.h"

typedef struct {
    /* per layer */
    size_t attn_w_layer; /* 4*C^2: W_QKV [3C, C] + W_O [C, C] */
    size_t attn_b_layer; /* 4*C */
    size_t mlp_w_layer;  /* 8*C^2 */
    size_t mlp_b_layer;  /* 5*C */
    size_t ln_layer;     /* 4*C: two LayerNorms, weight + bias */
    /* whole model */
    size_t attn_w, attn_b, mlp_w, mlp_b, ln; /* per-layer counts times L; ln includes ln_f */
    size_t wte;         /* V*C */
    size_t wte_padding; /* (Vp - V)*C, stored but not counted */
    size_t wpe;         /* maxT*C */
    size_t total;
    double attn_share;  /* (attn_w + attn_b) / total */
} andrea_param_breakdown;

int andrea_param_count(const andrea_config *c, andrea_param_breakdown *b, ae_error *err);

#endif
