/* test_checkpoint_param_count — the parameter breakdown `andrea info` prints, checked against
 * numbers known independently: docs/checkpoints.md's 2,359,296 attention projection weights per layer for
 * ANDREA-120M, and GPT-2 small's published total of 124,439,808 parameters (the same shape). */
#include <string.h>

#include "../engine/param_count.h"
#include "check.h"

static void test_andrea_120m_attention_projections_match_spec(void) {
    andrea_config c = {.max_seq_len = 1024, .vocab_size = 50257, .padded_vocab_size = 50304,
                       .n_layer = 12, .n_head = 12, .d_model = 768, .head_dim = 64};
    andrea_param_breakdown b;
    ae_error err = {{0}};
    CHECK_MSG(andrea_param_count(&c, &b, &err) == 0, "%s", err.msg);
    CHECK(b.attn_w_layer == 2359296);
    CHECK(b.attn_w == 28311552); /* "28.3M over 12 layers" */
    CHECK(b.attn_b_layer == 3072);
    CHECK(b.total == 124439808); /* GPT-2 small */
    CHECK(b.wte_padding == (50304 - 50257) * 768);
    CHECK(b.attn_share > 0.227 && b.attn_share < 0.228);
    CHECK(andrea_family_name(&c) && strcmp(andrea_family_name(&c), "ANDREA-120M") == 0);
}

static void test_breakdown_parts_sum_to_stored_parameters_minus_padding(void) {
    andrea_config c = {.max_seq_len = 256, .vocab_size = 257, .padded_vocab_size = 320,
                       .n_layer = 6, .n_head = 12, .d_model = 384, .head_dim = 32};
    andrea_param_breakdown b;
    size_t sizes[ANDREA_N_PARAM_TENSORS], stored;
    CHECK(andrea_param_count(&c, &b, NULL) == 0);
    CHECK(andrea_param_sizes(&c, sizes, &stored, NULL) == 0);
    CHECK(b.total + b.wte_padding == stored);
    CHECK(b.attn_w == sizes[4] + sizes[6]);
    CHECK(b.mlp_w == sizes[10] + sizes[12]);
    CHECK(strcmp(andrea_family_name(&c), "ANDREA-12M") == 0);
}

static void test_shape_outside_the_table_has_no_family(void) {
    andrea_config c = {.max_seq_len = 64, .vocab_size = 256, .padded_vocab_size = 256,
                       .n_layer = 4, .n_head = 4, .d_model = 288, .head_dim = 72};
    andrea_param_breakdown b;
    CHECK(andrea_param_count(&c, &b, NULL) == 0);
    CHECK(b.attn_w_layer == 4 * 288 * 288);
    CHECK(andrea_family_name(&c) == NULL);
}

static void test_invalid_config_is_refused(void) {
    andrea_config c = {.max_seq_len = 64, .vocab_size = 256, .padded_vocab_size = 256,
                       .n_layer = 4, .n_head = 5, .d_model = 288, .head_dim = 57};
    andrea_param_breakdown b;
    ae_error err = {{0}};
    CHECK(andrea_param_count(&c, &b, &err) == -1);
    CHECK_MSG(strstr(err.msg, "not divisible") != NULL, "%s", err.msg);
}

int main(void) {
    RUN(test_andrea_120m_attention_projections_match_spec);
    RUN(test_breakdown_parts_sum_to_stored_parameters_minus_padding);
    RUN(test_shape_outside_the_table_has_no_family);
    RUN(test_invalid_config_is_refused);
    return check_summary("test_checkpoint_param_count");
}
