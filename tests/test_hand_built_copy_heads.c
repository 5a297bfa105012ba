/* test_hand_built_copy_heads — the copy_suppression and retrieval detectors end to end (`andrea
 * analyze`) on byte-level models whose heads are set by hand, so the truth is exact.
 *
 * copy_suppression needs both parts (docs/scores.md): attention to the earlier copy of the token
 * about to be predicted, and an OV circuit that lowers that token's own logit. Model: 2 layers x
 * 2 heads, C 64, 32 positions; position embeddings one-hot in dimensions 0..31, token embeddings
 * in 32..63. On the built-in induction items (BOS, n = 15 distinct letters, the same 15 again)
 * the earlier copy of the next token is always 14 positions back, so both heads of layer 0 attend
 * to offset 14 through the position embeddings (W_Q reads position t into head dimension t - 14,
 * W_K position s into dimension s). Head 0.0's OV is minus the identity on the token dimensions
 * (it writes -e_t: the own logit falls most), head 0.1's plus the identity (a copying head: same
 * attention, the opposite OV). Only 0.0 may be labelled copy_suppression.
 *
 * retrieval (Wu et al. 2024) needs attention that finds the needle's copy of the token being
 * produced wherever the needle sits: content, not position. Model: 2 layers x 2 heads, C 128, 64
 * positions; dimensions 0..63 positions (one-hot), 64..95 tokens (random +-1 codes), 96..127 the
 * previous token. Head 0.0 attends to the previous position and writes that token's code into
 * 96..127; head 1.0 matches the current token (Q reads 64..95) against the previous token of each
 * key (K reads 96..127), so it attends to the position after an earlier copy of the current
 * token: in the needle's final copy, the needle token being produced (an induction head, which is
 * what retrieves in Wu et al.'s models). Only 1.0 may be labelled retrieval. A control model whose
 * head 1.0 reads the key's own token instead (attending to earlier copies of the current token,
 * one position too early) gets no retrieval label.
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "check.h"
#include "support/hand_built.h"
#include "support/model_random.h"

/* Row j (output) of layer l's Q (part 0), K (1) or V (2) weights, head h, in a model of width C. */
static float *qkv_row(andrea_model *m, int l, int part, int h, int j) {
    const size_t C = (size_t)m->cfg.d_model, hd = C / (size_t)m->cfg.n_head;
    return m->p.qkvw + (size_t)l * 3 * C * C + ((size_t)part * C + (size_t)h * hd + (size_t)j) * C;
}

static float *qkv_bias(andrea_model *m, int l, int part, int h, int j) {
    const size_t C = (size_t)m->cfg.d_model, hd = C / (size_t)m->cfg.n_head;
    return m->p.qkvb + (size_t)l * 3 * C + (size_t)part * C + (size_t)h * hd + (size_t)j;
}

/* W_O of layer l (Linear layout [C_out, C_in]): output o, input column i. */
static float *wo(andrea_model *m, int l, int o, int i) {
    const size_t C = (size_t)m->cfg.d_model;
    return m->p.attprojw + (size_t)l * C * C + (size_t)o * C + (size_t)i;
}

/* Head h of layer l: Q, K and V rows and biases zeroed (the caller sets what it builds). */
static void clear_head(andrea_model *m, int l, int h) {
    const int C = m->cfg.d_model, hd = C / m->cfg.n_head;
    for (int part = 0; part < 3; part++)
        for (int j = 0; j < hd; j++) {
            memset(qkv_row(m, l, part, h, j), 0, sizeof(float) * (size_t)C);
            *qkv_bias(m, l, part, h, j) = 0;
        }
}

/* Position embeddings one-hot (scale a) in dimensions 0..maxT-1; token embeddings zero there. */
static void one_hot_positions(andrea_model *m, float a) {
    const int C = m->cfg.d_model, T = m->cfg.max_seq_len;
    for (int v = 0; v < m->cfg.padded_vocab_size; v++) memset(m->p.wte + (size_t)v * C, 0, sizeof(float) * (size_t)T);
    for (int t = 0; t < T; t++) {
        memset(m->p.wpe + (size_t)t * C, 0, sizeof(float) * (size_t)C);
        m->p.wpe[(size_t)t * C + t] = a;
    }
}

/* Head h of layer 0 attends from position t to t - offset (position dimensions read by Q and K). */
static void attend_at_offset(andrea_model *m, int h, int offset, float beta) {
    const int hd = m->cfg.d_model / m->cfg.n_head, T = m->cfg.max_seq_len;
    for (int j = 0; j + offset < T && j < hd; j++) qkv_row(m, 0, 0, h, j)[j + offset] = beta;
    for (int j = 0; j < hd && j < T; j++) qkv_row(m, 0, 1, h, j)[j] = beta;
}

enum { CS_C = 64, CS_T = 32, CS_OFFSET = 14 };

/* Layer 0's heads at offset 14; 0.0's OV minus the identity on the token dimensions, 0.1's plus. */
static void build_copy_suppression(andrea_model *m) {
    const int hd = CS_C / 2;
    one_hot_positions(m, 4.0f);
    for (int h = 0; h < 2; h++) {
        clear_head(m, 0, h);
        attend_at_offset(m, h, CS_OFFSET, 1.5f);
        for (int j = 0; j < hd; j++) qkv_row(m, 0, 2, h, j)[CS_T + j] = 1.0f; /* v_j = token dimension j */
        for (int o = 0; o < CS_C; o++)
            for (int i = h * hd; i < (h + 1) * hd; i++) *wo(m, 0, o, i) = 0;
        for (int j = 0; j < hd; j++) *wo(m, 0, CS_T + j, h * hd + j) = h == 0 ? -1.0f : 1.0f;
    }
}

static void test_copy_suppression_needs_the_attention_and_the_suppressing_ov(void) {
    const andrea_config cfg = {.max_seq_len = CS_T, .vocab_size = 257, .padded_vocab_size = 257, .n_layer = 2,
                               .n_head = 2, .d_model = CS_C};
    andrea_model m;
    ae_error err = {{0}};
    CHECK(andrea_model_init_random(&m, &cfg, 43, &err) == 0);
    const char *const fast[] = {"--probes", "copy_suppression,induction", "--ablate-items", "0", NULL};
    char got[256];
    const char *db = andrea_test_analyze(&m, "cs-random", fast);
    CHECK(db && andrea_test_labels_of(db, "copy_suppression", got, sizeof got) == 0);
    CHECK_MSG(!strcmp(got, ""), "random weights: copy_suppression %s", got);
    build_copy_suppression(&m);
    db = andrea_test_analyze(&m, "cs-built", fast);
    CHECK(db && andrea_test_labels_of(db, "copy_suppression", got, sizeof got) == 0);
    CHECK_MSG(!strcmp(got, "0.0"), "copy_suppression: %s (want 0.0 alone)", got);
    const double minus = db ? andrea_test_extra_of(db, "copy_suppression", 0, 0) : NAN,
                 plus = db ? andrea_test_extra_of(db, "copy_suppression", 0, 1) : NAN;
    CHECK_MSG(minus >= 0.9, "0.0 (minus the identity): suppression share %g", minus);
    CHECK_MSG(plus <= 0.1, "0.1 (plus the identity): suppression share %g", plus);
    /* both attend like induction heads on these items: the attention part alone labels both */
    CHECK(db && andrea_test_labels_of(db, "induction", got, sizeof got) == 0);
    CHECK_MSG(!strcmp(got, "0.0 0.1"), "induction: %s (the attention part of both)", got);
    andrea_model_free(&m);
}

enum { RT_C = 128, RT_T = 64, RT_TOK = 64, RT_PREV = 96, RT_CODE = 32 };

/* The retrieval model; key_reads_previous 0 gives the control (K reads the key's own token). */
static void build_retrieval(andrea_model *m, int key_reads_previous, uint64_t seed) {
    const int hd = RT_C / 2;
    one_hot_positions(m, 4.0f);
    for (int v = 0; v < m->cfg.padded_vocab_size; v++) { /* +-1 codes: distinct tokens nearly orthogonal */
        float *e = m->p.wte + (size_t)v * RT_C;
        memset(e + RT_T, 0, sizeof(float) * (RT_C - RT_T));
        for (int j = 0; j < RT_CODE; j++) {
            seed = seed * 6364136223846793005ull + 1442695040888963407ull;
            e[RT_TOK + j] = (seed >> 63) ? 1.0f : -1.0f;
        }
    }
    /* layer 0: head 0.0 previous-token, writing the previous token's code; 0.1 silent; no MLP */
    for (int h = 0; h < 2; h++) clear_head(m, 0, h);
    attend_at_offset(m, 0, 1, 1.5f);
    for (int j = 0; j < RT_CODE; j++) qkv_row(m, 0, 2, 0, j)[RT_TOK + j] = 1.0f;
    for (int o = 0; o < RT_C; o++) {
        for (int i = 0; i < RT_C; i++) *wo(m, 0, o, i) = 0;
        m->p.attprojb[o] = 0;
        m->p.fcprojb[o] = 0;
        memset(m->p.fcprojw + (size_t)o * 4 * RT_C, 0, sizeof(float) * 4 * RT_C);
    }
    for (int j = 0; j < RT_CODE; j++) *wo(m, 0, RT_PREV + j, j) = 1.0f;
    /* layer 1: head 1.0 matches the query's token with the key's previous token (or own token) */
    for (int j = 0; j < hd; j++) {
        memset(qkv_row(m, 1, 0, 0, j), 0, sizeof(float) * RT_C);
        memset(qkv_row(m, 1, 1, 0, j), 0, sizeof(float) * RT_C);
        *qkv_bias(m, 1, 0, 0, j) = *qkv_bias(m, 1, 1, 0, j) = 0;
    }
    for (int j = 0; j < RT_CODE; j++) {
        qkv_row(m, 1, 0, 0, j)[RT_TOK + j] = 1.5f;
        qkv_row(m, 1, 1, 0, j)[(key_reads_previous ? RT_PREV : RT_TOK) + j] = 1.5f;
    }
}

static void test_retrieval_labels_the_head_that_finds_the_needle_by_content(void) {
    const andrea_config cfg = {.max_seq_len = RT_T, .vocab_size = 257, .padded_vocab_size = 257, .n_layer = 2,
                               .n_head = 2, .d_model = RT_C};
    andrea_model m;
    ae_error err = {{0}};
    const char *const fast[] = {"--probes", "retrieval", "--ablate-items", "0", NULL};
    char got[256];
    CHECK(andrea_model_init_random(&m, &cfg, 47, &err) == 0);
    const char *db = andrea_test_analyze(&m, "rt-random", fast);
    CHECK(db && andrea_test_labels_of(db, "retrieval", got, sizeof got) == 0);
    CHECK_MSG(!strcmp(got, ""), "random weights: retrieval %s", got);
    build_retrieval(&m, 1, 5);
    db = andrea_test_analyze(&m, "rt-built", fast);
    CHECK(db && andrea_test_labels_of(db, "retrieval", got, sizeof got) == 0);
    CHECK_MSG(!strcmp(got, "1.0"), "retrieval: %s (want 1.0 alone)", got);
    const double top1 = db ? andrea_test_extra_of(db, "retrieval", 1, 0) : NAN;
    CHECK_MSG(top1 >= 0.5, "1.0: retrieval top1 %g", top1);
    build_retrieval(&m, 0, 5);
    db = andrea_test_analyze(&m, "rt-control", fast);
    CHECK(db && andrea_test_labels_of(db, "retrieval", got, sizeof got) == 0);
    CHECK_MSG(!strcmp(got, ""), "control (key reads its own token): retrieval %s", got);
    andrea_model_free(&m);
}

int main(void) {
    if (andrea_test_scratch_begin()) return 1;
    RUN(test_copy_suppression_needs_the_attention_and_the_suppressing_ov);
    RUN(test_retrieval_labels_the_head_that_finds_the_needle_by_content);
    andrea_test_scratch_end();
    return check_summary("test_hand_built_copy_heads");
}
