/* param_count.c — the parameter breakdown of a config (see param_count.h). */
#include "param_count.h"

#include <string.h>

int andrea_param_count(const andrea_config *c, andrea_param_breakdown *b, ae_error *err) {
    size_t sizes[ANDREA_N_PARAM_TENSORS], stored;
    /* validates the config; with its limits none of the products below can overflow */
    if (andrea_param_sizes(c, sizes, &stored, err)) return -1;
    size_t L = (size_t)c->n_layer, C = (size_t)c->d_model;
    memset(b, 0, sizeof *b);
    b->attn_w_layer = 4 * C * C;
    b->attn_b_layer = 4 * C;
    b->mlp_w_layer = 8 * C * C;
    b->mlp_b_layer = 5 * C;
    b->ln_layer = 4 * C;
    b->attn_w = L * b->attn_w_layer;
    b->attn_b = L * b->attn_b_layer;
    b->mlp_w = L * b->mlp_w_layer;
    b->mlp_b = L * b->mlp_b_layer;
    b->ln = L * b->ln_layer + 2 * C;
    b->wte = (size_t)c->vocab_size * C;
    b->wte_padding = (size_t)(c->padded_vocab_size - c->vocab_size) * C;
    b->wpe = (size_t)c->max_seq_len * C;
    b->total = b->attn_w + b->attn_b + b->mlp_w + b->mlp_b + b->ln + b->wte + b->wpe;
    b->attn_share = (double)(b->attn_w + b->attn_b) / (double)b->total;
    return 0;
}
