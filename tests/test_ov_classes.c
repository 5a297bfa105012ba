/* test_ov_classes — the successor and copy-suppression scores from the weights (analyzer/ov_classes.h)
 * on hand-built models whose answer is exact: a head whose OV circuit maps every ordinal token to
 * its successor scores 1, a head whose OV circuit is minus the identity in the unembedding basis
 * suppresses every token, while the random heads beside them, and every head of random models,
 * stay below the proposed label cuts. Also: the rules of ordinals.txt (dropped items break a
 * chain, a repeated first item closes a cycle, kinds of fewer than 3 tokens go), every shipped
 * kind survives GPT-2's tokenizer, a vocabulary without ordinals scores NaN, a missing or
 * malformed ordinals.txt is a one-line error, the thread count changes no score, and every share
 * equals a direct double computation from the definitions (full LayerNorms included). */
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "analyzer/ov_classes.h"
#include "check.h"
#include "common/rng.h"
#include "tests/support/model_random.h"
#include "tokenizer/tokenizer.h"

#define GPT2_DIR ANDREA_SOURCE_DIR "/tests/data/gpt2"

/* The single-character kinds of probes/data/ordinals.txt, as a byte-level tokenizer keeps them. */
static const char *const BYTE_KINDS[] = {"0123456789", "abcdefghijklmnopqrstuvwxyz", "ABCDEFGHIJKLMNOPQRSTUVWXYZ"};

static void zero_mlp0(andrea_model *m) {
    const size_t C = (size_t)m->cfg.d_model;
    memset(m->p.fcw, 0, sizeof(float) * 4 * C * C);
    memset(m->p.fcb, 0, sizeof(float) * 4 * C);
    memset(m->p.fcprojw, 0, sizeof(float) * 4 * C * C);
    memset(m->p.fcprojb, 0, sizeof(float) * C);
}

/* Head h of layer l gets W_V [C, hd] = wv^T and W_O [hd, C] = wo, wv and wo given as [hd, C] rows. */
static void set_head(andrea_model *m, int l, int h, const float *wv, const float *wo) {
    const int C = m->cfg.d_model, hd = m->cfg.head_dim;
    float *v = m->p.qkvw + (size_t)l * 3 * C * C + ((size_t)2 * C + (size_t)h * hd) * C;
    float *o = m->p.attprojw + (size_t)l * C * C;
    for (int j = 0; j < hd; j++)
        for (int c = 0; c < C; c++) {
            v[(size_t)j * C + c] = wv[(size_t)j * C + c];
            o[(size_t)c * C + (size_t)h * hd + j] = wo[(size_t)j * C + c];
        }
}

static int compute(const andrea_model *m, const andrea_tokenizer *tok, andrea_ov_classes *o) {
    ae_error err = {{0}};
    const int rc = andrea_ov_classes_compute(m, tok, o, &err);
    CHECK_MSG(rc == 0, "%s", err.msg);
    return rc;
}

static double max_except(const double *x, int n, int skip) {
    double mx = -INFINITY;
    for (int i = 0; i < n; i++)
        if (i != skip && x[i] > mx) mx = x[i];
    return mx;
}

/* (a) Ordinal token k (the 62 single characters) gets the embedding b_2k - b_2k+1 (mean zero, the
 * LayerNorms centre nothing away; orthogonal), MLP0 is zero (e = W_E), and head 1.0's W_V W_O is
 * the sum over pairs of e_a^T w_b / |e_a|^2: each source's row is w_b, whose logit 2 is the only
 * nonzero one among its kind. 59 pairs <= hd = 64. */
static void test_a_head_mapping_each_ordinal_to_its_successor_scores_one(void) {
    andrea_config cfg = {.max_seq_len = 16, .vocab_size = 257, .padded_vocab_size = 320, .n_layer = 2, .n_head = 2,
                         .d_model = 128};
    andrea_model m;
    ae_error err = {{0}};
    CHECK(andrea_model_init_random(&m, &cfg, 11, &err) == 0);
    const int C = 128, hd = 64;
    zero_mlp0(&m);
    int k = 0;
    for (int s = 0; s < 3; s++)
        for (const char *c = BYTE_KINDS[s]; *c; c++, k++) {
            float *w = m.p.wte + (size_t)(unsigned char)*c * C;
            memset(w, 0, sizeof(float) * C);
            w[2 * k] = 1;
            w[2 * k + 1] = -1;
        }
    float *wv = calloc((size_t)hd * C, sizeof(float)), *wo = calloc((size_t)hd * C, sizeof(float));
    int j = 0;
    for (int s = 0; s < 3; s++)
        for (const char *c = BYTE_KINDS[s]; c[1]; c++, j++) {
            const float *ea = m.p.wte + (size_t)(unsigned char)c[0] * C;
            const float *wb = m.p.wte + (size_t)(unsigned char)c[1] * C;
            for (int x = 0; x < C; x++) {
                wv[(size_t)j * C + x] = ea[x] / 2; /* |e_a|^2 = 2 */
                wo[(size_t)j * C + x] = wb[x];
            }
        }
    CHECK(j == 59);
    set_head(&m, 1, 0, wv, wo);
    andrea_tokenizer *tok = andrea_tokenizer_open(257, NULL, NULL, &err);
    andrea_ov_classes o;
    if (tok && compute(&m, tok, &o) == 0) {
        const double chance = (9.0 / 10 + 25.0 / 26 + 25.0 / 26) / 59;
        fprintf(stderr, "  successor: head 1.0 %.4f, others at most %.4f (chance %.4f)\n", o.successor[2],
                max_except(o.successor, 4, 2), o.successor_chance);
        CHECK(o.n_successor_kinds == 3 && o.n_successor_pairs == 59);
        CHECK_MSG(fabs(o.successor_chance - chance) < 1e-12, "chance %.17g, want %.17g", o.successor_chance, chance);
        CHECK_MSG(o.successor[2] == 1.0, "head 1.0 scores %.4f", o.successor[2]);
        CHECK(max_except(o.successor, 4, 2) < OV_CLASSES_SUCCESSOR_CUT);
        andrea_ov_classes_free(&o);
    }
    andrea_tokenizer_free(tok);
    free(wv);
    free(wo);
    andrea_model_free(&m);
}

/* (b) Every embedding row a distinct unit vector of mean zero in the first hd coordinates, MLP0
 * zero, head 1.1's W_V = -I and W_O = I there: row t is -w_t W_U^T, whose own entry -1 is the
 * strict minimum (w_t . w_u < 1 for u != t). All 257 tokens are checked (V <= 1024). */
static void test_b_head_with_minus_identity_ov_suppresses_every_token(void) {
    andrea_config cfg = {.max_seq_len = 16, .vocab_size = 257, .padded_vocab_size = 320, .n_layer = 2, .n_head = 2,
                         .d_model = 64};
    andrea_model m;
    ae_error err = {{0}};
    CHECK(andrea_model_init_random(&m, &cfg, 12, &err) == 0);
    const int C = 64, hd = 32;
    zero_mlp0(&m);
    uint64_t st = 42;
    for (int t = 0; t < 257; t++) {
        float *w = m.p.wte + (size_t)t * C;
        double mean = 0, ss = 0;
        memset(w, 0, sizeof(float) * C);
        for (int c = 0; c < hd; c++)
            mean += w[c] = (float)((double)(ae_splitmix64(&st) >> 11) / 9007199254740992.0 - 0.5);
        mean /= hd;
        for (int c = 0; c < hd; c++) ss += (w[c] - mean) * (w[c] - mean);
        for (int c = 0; c < hd; c++) w[c] = (float)((w[c] - mean) / sqrt(ss));
    }
    float *wv = calloc((size_t)hd * C, sizeof(float)), *wo = calloc((size_t)hd * C, sizeof(float));
    for (int j = 0; j < hd; j++) {
        wv[(size_t)j * C + j] = -1;
        wo[(size_t)j * C + j] = 1;
    }
    set_head(&m, 1, 1, wv, wo);
    andrea_tokenizer *tok = andrea_tokenizer_open(257, NULL, NULL, &err);
    andrea_ov_classes o;
    if (tok && compute(&m, tok, &o) == 0) {
        fprintf(stderr, "  suppression: head 1.1 %.4f, others at most %.4f (chance %.4f)\n", o.suppression[3],
                max_except(o.suppression, 4, 3), o.suppression_chance);
        CHECK(o.n_suppression_tokens == 257 && o.suppression_chance == 10.0 / 257);
        CHECK_MSG(o.suppression[3] == 1.0, "head 1.1 scores %.4f", o.suppression[3]);
        CHECK(max_except(o.suppression, 4, 3) < OV_CLASSES_SUPPRESSION_CUT);
        andrea_ov_classes_free(&o);
    }
    andrea_tokenizer_free(tok);
    free(wv);
    free(wo);
    andrea_model_free(&m);
}

/* (c) Random weights (the bundled model's shape, byte vocabulary; and a GPT-2 vocabulary with its
 * tokenizer, 1024 sampled rows): no head reaches either cut. */
static void test_c_random_models_stay_below_both_cuts(void) {
    ae_error err = {{0}};
    andrea_tokenizer *byte = andrea_tokenizer_open(257, NULL, NULL, &err);
    andrea_tokenizer *bpe = andrea_tokenizer_open(50257, NULL, GPT2_DIR, &err);
    CHECK_MSG(byte && bpe, "%s", err.msg);
    for (int seed = 1; seed <= 4 && byte && bpe; seed++) {
        const int gpt2 = seed == 4;
        andrea_config cfg = {.max_seq_len = 64, .vocab_size = gpt2 ? 50257 : 257,
                             .padded_vocab_size = gpt2 ? 50304 : 320, .n_layer = gpt2 ? 2 : 4,
                             .n_head = gpt2 ? 4 : 8, .d_model = gpt2 ? 64 : 256};
        andrea_model m;
        CHECK(andrea_model_init_random(&m, &cfg, (uint64_t)seed, &err) == 0);
        andrea_ov_classes o;
        if (compute(&m, gpt2 ? bpe : byte, &o) == 0) {
            const int NH = cfg.n_layer * cfg.n_head;
            const double s = max_except(o.successor, NH, -1), p = max_except(o.suppression, NH, -1);
            fprintf(stderr,
                    "  random seed %d (V %d): max successor %.4f (chance %.4f), max suppression %.4f (chance %.4f)\n",
                    seed, cfg.vocab_size, s, o.successor_chance, p, o.suppression_chance);
            CHECK(s < OV_CLASSES_SUCCESSOR_CUT && p < OV_CLASSES_SUPPRESSION_CUT);
            CHECK(o.n_suppression_tokens == (gpt2 ? 1024 : 257));
            andrea_ov_classes_free(&o);
        }
        andrea_model_free(&m);
    }
    andrea_tokenizer_free(byte);
    andrea_tokenizer_free(bpe);
}

/* Every kind of the shipped ordinals.txt is one token an item under GPT-2's tokenizer. */
static void test_gpt2_tokenizer_keeps_every_shipped_kind(void) {
    ae_error err = {{0}};
    andrea_tokenizer *bpe = andrea_tokenizer_open(50257, NULL, GPT2_DIR, &err);
    CHECK_MSG(bpe != NULL, "%s", err.msg);
    andrea_config cfg = {.max_seq_len = 16, .vocab_size = 50257, .padded_vocab_size = 50257, .n_layer = 1, .n_head = 2,
                         .d_model = 16};
    andrea_model m;
    CHECK(andrea_model_init_random(&m, &cfg, 5, &err) == 0);
    andrea_ov_classes o;
    if (bpe && compute(&m, bpe, &o) == 0) {
        /* digits 9, lower- and uppercase 25 each, numbers 19, number and ordinal words 9 each, days 7
         * (with Sunday -> Monday), months 12 (with December -> January), letters 25 */
        CHECK_MSG(o.n_successor_kinds == 9 && o.n_successor_pairs == 140, "%d kinds, %d pairs", o.n_successor_kinds,
                  o.n_successor_pairs);
        andrea_ov_classes_free(&o);
    }
    andrea_model_free(&m);
    andrea_tokenizer_free(bpe);
}

static char saved_data[4096]; /* ANDREA_PROBE_DATA as the test found it ("" when unset) */

/* Puts ANDREA_PROBE_DATA back as the test found it. */
static void restore_data_folder(void) {
    if (saved_data[0]) setenv("ANDREA_PROBE_DATA", saved_data, 1);
    else unsetenv("ANDREA_PROBE_DATA");
}

/* ANDREA_PROBE_DATA = a fresh folder holding `text` as ordinals.txt (NULL: no file). */
static void data_folder_with(const char *name, const char *text) {
    const char *now = getenv("ANDREA_PROBE_DATA");
    snprintf(saved_data, sizeof saved_data, "%s", now ? now : "");
    char dir[512], path[600];
    snprintf(dir, sizeof dir, "%s/%s", check_tmpdir(), name);
    CHECK(mkdir(dir, 0700) == 0);
    if (text) {
        snprintf(path, sizeof path, "%s/ordinals.txt", dir);
        FILE *f = fopen(path, "w");
        CHECK(f != NULL);
        if (f) {
            fputs(text, f);
            fclose(f);
        }
    }
    setenv("ANDREA_PROBE_DATA", dir, 1);
}

static andrea_model small_byte_model(void) {
    andrea_config cfg = {.max_seq_len = 16, .vocab_size = 257, .padded_vocab_size = 257, .n_layer = 1, .n_head = 2,
                         .d_model = 16};
    andrea_model m;
    ae_error err = {{0}};
    CHECK(andrea_model_init_random(&m, &cfg, 7, &err) == 0);
    return m;
}

/* kinds: a (4 tokens, 3 pairs); b ("xy" is two bytes, dropped: 3 tokens, 2 pairs); c (2 tokens:
 * dropped); d (p q r p, a CR line end: a cycle, 3 tokens, 3 pairs); e (" x" is two bytes: 2 left,
 * dropped); f (5 xx 6 7 8: the dropped item breaks the chain, so 5-6 is no pair: 4 tokens, 2
 * pairs). Comments, blank lines and leading blanks are skipped. */
static void test_ordinals_rules_drop_items_and_kinds_and_close_cycles(void) {
    data_folder_with("rules",
                     "# comment\n\n  a: 1 2 3 4\nb: xy 5 6 7\nc: 8 9\nd: p q r p\r\ne: _x y z\nf:5 xx 6 7 8\n");
    andrea_model m = small_byte_model();
    ae_error err = {{0}};
    andrea_tokenizer *tok = andrea_tokenizer_open(257, NULL, NULL, &err);
    andrea_ov_classes o;
    if (tok && compute(&m, tok, &o) == 0) {
        const double chance = (3 / 4.0 + 2 / 3.0 + 3 / 3.0 + 2 / 4.0) / 10;
        CHECK_MSG(o.n_successor_kinds == 4 && o.n_successor_pairs == 10, "%d kinds, %d pairs", o.n_successor_kinds,
                  o.n_successor_pairs);
        CHECK_MSG(fabs(o.successor_chance - chance) < 1e-12, "chance %.17g, want %.17g", o.successor_chance, chance);
        andrea_ov_classes_free(&o);
    }
    restore_data_folder();
    andrea_tokenizer_free(tok);
    andrea_model_free(&m);
}

static void test_missing_ordinals_file_is_a_one_line_error(void) {
    data_folder_with("empty", NULL);
    andrea_model m = small_byte_model();
    ae_error err = {{0}};
    andrea_tokenizer *tok = andrea_tokenizer_open(257, NULL, NULL, &err);
    andrea_ov_classes o;
    const int rc = andrea_ov_classes_compute(&m, tok, &o, &err);
    fprintf(stderr, "  %s\n", err.msg);
    CHECK(rc == -1 && !strchr(err.msg, '\n') && strstr(err.msg, "empty/ordinals.txt") &&
          strstr(err.msg, "ANDREA_PROBE_DATA"));
    CHECK(o.successor == NULL && o.suppression == NULL);
    restore_data_folder();
    andrea_tokenizer_free(tok);
    andrea_model_free(&m);
}

static void test_malformed_ordinals_line_is_named_with_its_line(void) {
    const char *bad[] = {"a: 1 2 3\nno colon here\n", "a: 1 2 3\n\nb c: 1 2 3\n", "a:   \n"};
    const char *want[] = {"ordinals.txt:2: expected", "ordinals.txt:3: a kind's name",
                          "ordinals.txt:1: a kind with no items"};
    for (int i = 0; i < 3; i++) {
        char name[32];
        snprintf(name, sizeof name, "bad%d", i);
        data_folder_with(name, bad[i]);
        andrea_model m = small_byte_model();
        ae_error err = {{0}};
        andrea_tokenizer *tok = andrea_tokenizer_open(257, NULL, NULL, &err);
        andrea_ov_classes o;
        const int rc = andrea_ov_classes_compute(&m, tok, &o, &err);
        CHECK_MSG(rc == -1 && strstr(err.msg, want[i]) && !strchr(err.msg, '\n'), "case %d: %s", i, err.msg);
        restore_data_folder();
        andrea_tokenizer_free(tok);
        andrea_model_free(&m);
    }
}

/* (d) A vocabulary of 40 tokens holds no ordinal (the byte tokenizer's ids are all >= 48; so
 * nothing survives) and a model without a tokenizer has no kinds: NaN, no crash; suppression
 * is still scored. */
static void test_vocabulary_without_ordinals_scores_nan(void) {
    andrea_config cfg = {.max_seq_len = 16, .vocab_size = 40, .padded_vocab_size = 40, .n_layer = 2, .n_head = 2,
                         .d_model = 16};
    andrea_model m;
    ae_error err = {{0}};
    CHECK(andrea_model_init_random(&m, &cfg, 3, &err) == 0);
    andrea_tokenizer *tok = andrea_tokenizer_open(257, NULL, NULL, &err);
    for (int with_tok = 0; with_tok < 2; with_tok++) {
        andrea_ov_classes o;
        if (compute(&m, with_tok ? tok : NULL, &o) == 0) {
            int nan = 1, in01 = 1;
            for (int i = 0; i < 4; i++) {
                nan &= isnan(o.successor[i]) != 0;
                in01 &= o.suppression[i] >= 0 && o.suppression[i] <= 1;
            }
            CHECK(nan && in01 && isnan(o.successor_chance) && o.n_successor_pairs == 0 && o.n_successor_kinds == 0);
            CHECK(o.n_suppression_tokens == 40 && o.suppression_chance == 10.0 / 40);
            andrea_ov_classes_free(&o);
        }
    }
    andrea_tokenizer_free(tok);
    andrea_model_free(&m);
}

/* One thread or three: the same bits (a GPT-2 vocabulary: the sample and the chunked walk). */
static void test_thread_count_changes_no_score(void) {
    ae_error err = {{0}};
    andrea_tokenizer *bpe = andrea_tokenizer_open(50257, NULL, GPT2_DIR, &err);
    andrea_config cfg = {.max_seq_len = 16, .vocab_size = 50257, .padded_vocab_size = 50304, .n_layer = 2, .n_head = 3,
                         .d_model = 48};
    andrea_model m;
    CHECK(andrea_model_init_random(&m, &cfg, 8, &err) == 0);
    andrea_ov_classes a, b;
    const int threads = omp_get_max_threads();
    omp_set_num_threads(1);
    const int ra = compute(&m, bpe, &a);
    omp_set_num_threads(3);
    const int rb = compute(&m, bpe, &b);
    omp_set_num_threads(threads);
    if (ra == 0 && rb == 0) {
        CHECK(!memcmp(a.successor, b.successor, sizeof(double) * 6) &&
              !memcmp(a.suppression, b.suppression, sizeof(double) * 6));
        andrea_ov_classes_free(&a);
        andrea_ov_classes_free(&b);
    }
    andrea_model_free(&m);
    andrea_tokenizer_free(bpe);
}

/* ---- an independent computation in double, straight from the definitions (docs/scores.md) ---- */

static double ref_gelu(double v) { return 0.5 * v * (1 + tanh(sqrt(2 / M_PI) * (v + 0.044715 * v * v * v))); }

/* out [C] = (x - mean) / sd * g, the LayerNorm without its beta (the full division kept here: the
 * scores' claim is that it changes no rank). */
static void ref_ln(const double *x, const float *g, int C, double *out) {
    double mean = 0, var = 0;
    for (int c = 0; c < C; c++) mean += x[c];
    mean /= C;
    for (int c = 0; c < C; c++) var += (x[c] - mean) * (x[c] - mean);
    for (int c = 0; c < C; c++) out[c] = (x[c] - mean) / sqrt(var / C + 1e-5) * (g ? g[c] : 1);
}

/* The logit row of token t through head h of layer l: row [V]. */
static void ref_row(const andrea_model *m, int l, int h, int t, double *row) {
    const int C = m->cfg.d_model, hd = m->cfg.head_dim, V = m->cfg.vocab_size;
    double *e = calloc((size_t)C * 4, sizeof(double)), *x = e + C, *o = x + C, *f = o + C; /* one block */
    const float *w = m->p.wte + (size_t)t * C;
    for (int c = 0; c < C; c++) e[c] = w[c];
    if (l > 0) { /* e = W_E + MLP0(LN2_0(W_E)), every bias and beta of block 0 included */
        double *ln = calloc((size_t)C, sizeof(double)), *a = calloc((size_t)4 * C, sizeof(double));
        ref_ln(e, m->p.ln2w, C, ln);
        for (int c = 0; c < C; c++) ln[c] += m->p.ln2b[c];
        for (int j = 0; j < 4 * C; j++) {
            double s = m->p.fcb[j];
            for (int c = 0; c < C; c++) s += ln[c] * m->p.fcw[(size_t)j * C + c];
            a[j] = ref_gelu(s);
        }
        for (int c = 0; c < C; c++) {
            double s = m->p.fcprojb[c];
            for (int j = 0; j < 4 * C; j++) s += a[j] * m->p.fcprojw[(size_t)c * 4 * C + j];
            e[c] += s;
        }
        free(ln);
        free(a);
    }
    ref_ln(e, m->p.ln1w + (size_t)l * C, C, x);
    for (int c = 0; c < C; c++) o[c] = 0;
    for (int j = 0; j < hd; j++) { /* value j of head h, then W_O row j */
        const float *q = m->p.qkvw + (size_t)l * 3 * C * C + ((size_t)2 * C + (size_t)h * hd + j) * C;
        double s = 0;
        for (int c = 0; c < C; c++) s += x[c] * q[c];
        for (int c = 0; c < C; c++) o[c] += s * m->p.attprojw[(size_t)l * C * C + (size_t)c * C + (size_t)h * hd + j];
    }
    ref_ln(o, m->p.lnfw, C, f);
    for (int u = 0; u < V; u++) {
        double s = 0;
        for (int c = 0; c < C; c++) s += f[c] * m->p.wte[(size_t)u * C + c];
        row[u] = s;
    }
    free(e);
}

/* The documented sample: partial Fisher-Yates with splitmix64 seeded OV_CLASSES_SUPPRESSION_SEED. */
static void ref_sample(int V, int *out) {
    int *p = malloc(sizeof(int) * (size_t)V);
    for (int i = 0; i < V; i++) p[i] = i;
    uint64_t st = OV_CLASSES_SUPPRESSION_SEED;
    for (int i = 0; i < 1024; i++) {
        const int j = i + (int)ae_rng_below(&st, (uint64_t)(V - i)), t = p[i];
        p[i] = p[j];
        p[j] = t;
    }
    memcpy(out, p, sizeof(int) * 1024);
    free(p);
}

/* A random model of 3000 tokens (1024 sampled rows, the shared walk) with the byte tokenizer's
 * kinds: every share equals the one computed here in double from the definitions, except where
 * a row's own entry and its K-th rival lie within float rounding of each other (allowed: one row
 * a head; none seen). */
static void test_scores_match_a_direct_double_computation(void) {
    andrea_config cfg = {.max_seq_len = 16, .vocab_size = 3000, .padded_vocab_size = 3008, .n_layer = 2, .n_head = 3,
                         .d_model = 48};
    andrea_model m;
    ae_error err = {{0}};
    CHECK(andrea_model_init_random(&m, &cfg, 21, &err) == 0);
    for (size_t i = 0; i < 2 * 48; i++) m.p.ln1w[i] = 0.5f + (float)(i % 7) / 7; /* gains that matter */
    for (size_t i = 0; i < 48; i++) m.p.lnfw[i] = 1.5f - (float)(i % 5) / 5;
    /* head 1.2 minus a projection onto 16 of the 48 coordinates: it suppresses some rows, not all */
    float wv[16 * 48] = {0}, wo[16 * 48] = {0};
    for (int j = 0; j < 16; j++) {
        wv[j * 48 + 3 * j] = -1;
        wo[j * 48 + 3 * j] = 1;
    }
    set_head(&m, 1, 2, wv, wo);
    andrea_tokenizer *tok = andrea_tokenizer_open(257, NULL, NULL, &err);
    andrea_ov_classes o;
    if (!tok || compute(&m, tok, &o)) {
        andrea_tokenizer_free(tok);
        andrea_model_free(&m);
        return;
    }
    int sample[1024], worst = 0;
    ref_sample(3000, sample);
    double *row = malloc(sizeof(double) * 3000);
    for (int i = 0; i < 6; i++) {
        int suppressed = 0, hits = 0, pairs = 0;
        for (int r = 0; r < 1024; r++) {
            ref_row(&m, i / 3, i % 3, sample[r], row);
            int below = 0;
            for (int u = 0; u < 3000; u++) below += u != sample[r] && row[u] <= row[sample[r]];
            suppressed += below < OV_CLASSES_SUPPRESSION_K;
        }
        for (int s = 0; s < 3; s++)
            for (const char *c = BYTE_KINDS[s]; c[1]; c++, pairs++) {
                ref_row(&m, i / 3, i % 3, (unsigned char)c[0], row);
                const char *best = BYTE_KINDS[s];
                for (const char *d = BYTE_KINDS[s]; *d; d++)
                    if (row[(unsigned char)*d] > row[(unsigned char)*best]) best = d;
                hits += best == c + 1;
            }
        const int diff = abs((int)lround(o.suppression[i] * 1024) - suppressed);
        fprintf(stderr, "  head %d.%d: %d rows suppressed (direct %d), successor %d of %d\n", i / 3, i % 3,
                (int)lround(o.suppression[i] * 1024), suppressed, (int)lround(o.successor[i] * pairs), pairs);
        worst = diff > worst ? diff : worst;
        CHECK_MSG(diff <= 1, "head %d: suppression %d rows, direct %d", i, (int)lround(o.suppression[i] * 1024),
                  suppressed);
        CHECK_MSG(o.successor[i] == (double)hits / pairs, "head %d: successor %.4f, direct %.4f", i, o.successor[i],
                  (double)hits / pairs);
    }
    fprintf(stderr, "  suppressed rows: worst difference from the direct computation %d\n", worst);
    free(row);
    andrea_ov_classes_free(&o);
    andrea_tokenizer_free(tok);
    andrea_model_free(&m);
}

int main(void) {
    RUN(test_a_head_mapping_each_ordinal_to_its_successor_scores_one);
    RUN(test_b_head_with_minus_identity_ov_suppresses_every_token);
    RUN(test_c_random_models_stay_below_both_cuts);
    RUN(test_gpt2_tokenizer_keeps_every_shipped_kind);
    RUN(test_ordinals_rules_drop_items_and_kinds_and_close_cycles);
    RUN(test_missing_ordinals_file_is_a_one_line_error);
    RUN(test_malformed_ordinals_line_is_named_with_its_line);
    RUN(test_vocabulary_without_ordinals_scores_nan);
    RUN(test_thread_count_changes_no_score);
    RUN(test_scores_match_a_direct_double_computation);
    return check_summary("test_ov_classes");
}
