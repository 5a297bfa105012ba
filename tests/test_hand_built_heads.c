/* test_hand_built_heads — detectors against models whose truth is exact by construction.
 *
 * A 2-layer, 2-head byte-level model (C 64, head_dim 32, 32 positions) with random weights but for
 * two heads of layer 0, set by hand:
 *   0.0 positional at offset 3: position embeddings are the one-hot directions e_t (scaled; the
 *       token embeddings live in the other dimensions), W_K reads e_s into head dimension s and
 *       W_Q reads e_t into head dimension t - 3, so q_t . k_s is large only for s = t - 3;
 *   0.1 dormant: W_K reads e_0 alone and a constant query bias meets it, so every query attends
 *       to position 0 (BOS), and its W_O columns are scaled by 1e-3 (an output ~1000x smaller
 *       than a random head's).
 * `andrea analyze` of that checkpoint must label 0.0 positional with offset 3 and nothing else as
 * positional, 0.1 dormant and nothing else as dormant, and neither as prev_token; the random
 * model it was made from labels neither class at all.
 */
#include <math.h>
#include <string.h>

#include "check.h"
#include "support/hand_built.h"
#include "support/model_random.h"

enum { L = 2, H = 2, C = 64, HD = 32, MAXT = 32, V = 257, OFFSET = 3 };

/* Row j (output) of layer 0's Q (part 0), K (1) or V (2) weights, head h. */
static float *qkv_row(andrea_model *m, int part, int h, int j) {
    return m->p.qkvw + ((size_t)part * C + (size_t)h * HD + (size_t)j) * C;
}

static void build_positional_and_dormant(andrea_model *m) {
    const float A = 4.0f, beta = 1.5f, gamma = 3.0f;
    for (int v = 0; v < m->cfg.padded_vocab_size; v++) memset(m->p.wte + (size_t)v * C, 0, sizeof(float) * HD);
    for (int t = 0; t < MAXT; t++) {
        memset(m->p.wpe + (size_t)t * C, 0, sizeof(float) * C);
        m->p.wpe[(size_t)t * C + t] = A;
    }
    for (int part = 0; part < 2; part++)
        for (int h = 0; h < H; h++)
            for (int j = 0; j < HD; j++) {
                memset(qkv_row(m, part, h, j), 0, sizeof(float) * C);
                m->p.qkvb[(size_t)part * C + (size_t)h * HD + (size_t)j] = 0;
            }
    /* 0.0: q_t[j] reads position dimension j + OFFSET, k_s[j] position dimension j */
    for (int j = 0; j + OFFSET < MAXT && j < HD; j++) qkv_row(m, 0, 0, j)[j + OFFSET] = beta;
    for (int j = 0; j < HD && j < MAXT; j++) qkv_row(m, 1, 0, j)[j] = beta;
    /* 0.1: k_s[0] reads position dimension 0; every query's q[0] is the bias gamma */
    qkv_row(m, 1, 1, 0)[0] = beta;
    m->p.qkvb[(size_t)0 * C + 1 * HD + 0] = gamma;
    /* 0.1's output: W_O's input columns of head 1 (Linear layout [C_out, C_in]) and its V bias */
    for (int o = 0; o < C; o++)
        for (int i = HD; i < 2 * HD; i++) m->p.attprojw[(size_t)o * C + i] *= 1e-3f;
    for (int j = 0; j < HD; j++) m->p.qkvb[(size_t)2 * C + HD + j] *= 1e-3f;
}

static void test_the_built_heads_get_their_labels_and_no_other_head_does(void) {
    const andrea_config cfg = {.max_seq_len = MAXT, .vocab_size = V, .padded_vocab_size = V, .n_layer = L, .n_head = H,
                               .d_model = C};
    andrea_model m;
    ae_error err = {{0}};
    CHECK(andrea_model_init_random(&m, &cfg, 41, &err) == 0);
    char got[256];
    const char *db = andrea_test_analyze(&m, "random", NULL);
    CHECK(db && andrea_test_labels_of(db, "positional", got, sizeof got) == 0);
    CHECK_MSG(!strcmp(got, ""), "random weights: positional %s", got);
    CHECK(db && andrea_test_labels_of(db, "dormant", got, sizeof got) == 0);
    CHECK_MSG(!strcmp(got, ""), "random weights: dormant %s", got);
    build_positional_and_dormant(&m);
    db = andrea_test_analyze(&m, "built", NULL);
    CHECK(db && andrea_test_labels_of(db, "positional", got, sizeof got) == 0);
    CHECK_MSG(!strcmp(got, "0.0"), "positional: %s", got);
    CHECK_MSG(db && andrea_test_extra_of(db, "positional", 0, 0) == OFFSET, "offset %g",
              db ? andrea_test_extra_of(db, "positional", 0, 0) : NAN);
    CHECK(db && andrea_test_labels_of(db, "dormant", got, sizeof got) == 0);
    CHECK_MSG(!strcmp(got, "0.1"), "dormant: %s", got);
    CHECK_MSG(db && andrea_test_extra_of(db, "dormant", 0, 1) < 0.01, "norm ratio %g",
              db ? andrea_test_extra_of(db, "dormant", 0, 1) : NAN);
    CHECK(db && andrea_test_labels_of(db, "prev_token", got, sizeof got) == 0);
    CHECK_MSG(!strcmp(got, ""), "prev_token: %s", got);
    andrea_model_free(&m);
}

int main(void) {
    if (andrea_test_scratch_begin()) return 1;
    RUN(test_the_built_heads_get_their_labels_and_no_other_head_does);
    andrea_test_scratch_end();
    return check_summary("test_hand_built_heads");
}
