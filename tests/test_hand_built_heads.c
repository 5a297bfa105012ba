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
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "support/model_random.h"
#include "support/run_andrea.h"

enum { L = 2, H = 2, C = 64, HD = 32, MAXT = 32, V = 257, OFFSET = 3 };

static char tmp_dir[] = "/tmp/andrea-hand-XXXXXX";

static const char *tmp_path(const char *name) {
    static char buf[4][4200];
    static int k;
    k = (k + 1) % 4;
    snprintf(buf[k], sizeof buf[k], "%s/%s", tmp_dir, name);
    return buf[k];
}

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

/* Labels of class cls in the catalog as "L.H" words, and head (0, 0)'s extra value. */
static void labels_of(const char *db_path, const char *cls, char *out, size_t cap) {
    sqlite3 *db;
    out[0] = 0;
    CHECK(sqlite3_open_v2(db_path, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK);
    sqlite3_stmt *st;
    CHECK(sqlite3_prepare_v2(db, "SELECT layer, head FROM labels WHERE class = ? ORDER BY layer, head", -1, &st, NULL) ==
          SQLITE_OK);
    sqlite3_bind_text(st, 1, cls, -1, SQLITE_STATIC);
    while (sqlite3_step(st) == SQLITE_ROW) {
        size_t n = strlen(out);
        snprintf(out + n, cap - n, "%s%d.%d", n ? " " : "", sqlite3_column_int(st, 0), sqlite3_column_int(st, 1));
    }
    sqlite3_finalize(st);
    sqlite3_close(db);
}

static double extra_of(const char *db_path, const char *cls, int layer, int head) {
    sqlite3 *db;
    double v = NAN;
    CHECK(sqlite3_open_v2(db_path, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK);
    sqlite3_stmt *st;
    CHECK(sqlite3_prepare_v2(db, "SELECT extra_value FROM head_scores WHERE class = ? AND layer = ? AND head = ?", -1, &st,
                             NULL) == SQLITE_OK);
    sqlite3_bind_text(st, 1, cls, -1, SQLITE_STATIC);
    sqlite3_bind_int(st, 2, layer);
    sqlite3_bind_int(st, 3, head);
    if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL) v = sqlite3_column_double(st, 0);
    sqlite3_finalize(st);
    sqlite3_close(db);
    return v;
}

/* analyze of the model m (written to NAME.bin) into folder NAME-out; the catalog's path. */
static const char *analyze(const andrea_model *m, const char *name) {
    char bin[64], out[64], log[64];
    snprintf(bin, sizeof bin, "%s.bin", name);
    snprintf(out, sizeof out, "%s-out", name);
    snprintf(log, sizeof log, "%s.log", name);
    const char *bin_path = tmp_path(bin), *out_dir = tmp_path(out);
    ae_error err = {{0}};
    CHECK_MSG(andrea_model_save_bin(m, bin_path, 3, &err) == 0, "%s", err.msg);
    const char *args[] = {"analyze", bin_path, "--out", out_dir, "--quiet", "--report-maps", "0", NULL};
    CHECK_MSG(andrea_test_run_andrea(args, tmp_path(log)) == 0, "analyze of %s failed (see %s.err)", name, tmp_path(log));
    static char db[4200];
    snprintf(db, sizeof db, "%s/catalog.db", out_dir);
    return db;
}

static void test_the_built_heads_get_their_labels_and_no_other_head_does(void) {
    const andrea_config cfg = {.max_seq_len = MAXT, .vocab_size = V, .padded_vocab_size = V, .n_layer = L, .n_head = H,
                               .d_model = C};
    andrea_model m;
    ae_error err = {{0}};
    CHECK(andrea_model_init_random(&m, &cfg, 41, &err) == 0);
    char got[256];
    const char *db = analyze(&m, "random");
    labels_of(db, "positional", got, sizeof got);
    CHECK_MSG(!strcmp(got, ""), "random weights: positional %s", got);
    labels_of(db, "dormant", got, sizeof got);
    CHECK_MSG(!strcmp(got, ""), "random weights: dormant %s", got);
    build_positional_and_dormant(&m);
    db = analyze(&m, "built");
    labels_of(db, "positional", got, sizeof got);
    CHECK_MSG(!strcmp(got, "0.0"), "positional: %s", got);
    CHECK_MSG(extra_of(db, "positional", 0, 0) == OFFSET, "offset %g", extra_of(db, "positional", 0, 0));
    labels_of(db, "dormant", got, sizeof got);
    CHECK_MSG(!strcmp(got, "0.1"), "dormant: %s", got);
    CHECK_MSG(extra_of(db, "dormant", 0, 1) < 0.01, "norm ratio %g", extra_of(db, "dormant", 0, 1));
    labels_of(db, "prev_token", got, sizeof got);
    CHECK_MSG(!strcmp(got, ""), "prev_token: %s", got);
    andrea_model_free(&m);
}

int main(void) {
    if (!mkdtemp(tmp_dir)) return 1;
    RUN(test_the_built_heads_get_their_labels_and_no_other_head_does);
    char cmd[200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp_dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", tmp_dir);
    return check_summary("test_hand_built_heads");
}
