/* test_dump_roundtrip.c — andrea_dump_write then andrea_dump_open/read_* give back exactly what
 * the engine computed in memory and the items that went in; interruptions and failures leave no
 * file behind. Uses a tiny random model (2 layers, 4 heads, C 32) and the byte tokenizer. */
#include <dirent.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../common/atomic_file.h"
#include "../dump/dump.h"
#include "../dump/dump_write.h"
#include "../engine/head_mask.h"
#include "support/model_random.h"
#include "check.h"

static andrea_model model;
static andrea_tokenizer *tok;

static void setup(void) {
    ae_error err;
    andrea_config c = {0};
    c.max_seq_len = 64;
    c.vocab_size = 257;
    c.n_layer = 2;
    c.n_head = 4;
    c.d_model = 32;
    if (andrea_model_init_random(&model, &c, 7, &err)) fprintf(stderr, "%s\n", err.msg);
    tok = andrea_tokenizer_open(257, NULL, NULL, &err);
}

static char *tmp_path(const char *name) {
    static char buf[8][4096];
    static int k;
    char *p = buf[k++ % 8];
    snprintf(p, 4096, "%s/%s", check_tmpdir(), name);
    return p;
}

static int file_exists(const char *p) { return access(p, F_OK) == 0; }

/* No "<name>.tmp-*" left in the test directory. */
static int no_temporaries(void) {
    DIR *d = opendir(check_tmpdir());
    struct dirent *e;
    int found = 0;
    while (d && (e = readdir(d))) found |= strstr(e->d_name, ".tmp-") != NULL;
    if (d) closedir(d);
    return !found;
}

/* Three built-in suites (short, so items have different lengths and padding is exercised)
 * plus a hand-made entity suite. */
static int make_suites(probe_suite **out, int *n) {
    ae_error err;
    probe_options o = {3, 24, 5};
    if (andrea_probe_suites_builtin_list("prev_token,induction,entity", tok, 257, 64, &o, out, n, &err)) {
        fprintf(stderr, "%s\n", err.msg);
        return -1;
    }
    /* shorten one item so its suite has padding */
    probe_item *it = &(*out)[0].items[1];
    it->n_tokens = 17;
    int m = 0;
    for (int t = 0; t < it->n_targets; t++)
        if (it->targets[t].query < 17) it->targets[m++] = it->targets[t];
    it->n_targets = m;
    return 0;
}

static int write_dump(const char *path, probe_suite *s, int n, int fp32, andrea_contrib contrib,
                      const unsigned char *heads, ae_error *err) {
    andrea_dump_options o;
    andrea_dump_options_init(&o);
    o.out_path = path;
    o.run.engine.device = ANDREA_DEVICE_CPU;
    o.run.maps_fp32 = fp32;
    o.run.contrib = contrib;
    o.run.heads = heads;
    o.run.batch = 2; /* several batches per suite, the last one partial */
    return andrea_dump_write(&model, s, n, &o, err);
}

/* The engine's own outputs for item i, computed the way the dump computes them (the same
 * batch of 2 at the suite's padded length), so fp32 values must match bit for bit. Outputs are
 * [L, H, T, T], [L, H, T], [L, H, T], [L, H, T, C] for that item. */
static void engine_reference(const probe_suite *s, int i, float *attn, float *norm, float *dla, float *hout) {
    ae_error err;
    const int T = s->max_len, b0 = i - i % 2, nb = s->n_items - b0 < 2 ? s->n_items - b0 : 2, j = i - b0;
    const size_t LH = (size_t)model.cfg.n_layer * model.cfg.n_head, C = (size_t)model.cfg.d_model;
    int tokens[2 * 64] = {0}, lengths[2];
    for (int b = 0; b < nb; b++) {
        memcpy(tokens + b * T, s->items[b0 + b].tokens, sizeof(int) * (size_t)s->items[b0 + b].n_tokens);
        lengths[b] = s->items[b0 + b].n_tokens;
    }
    float *a = malloc(sizeof(float) * 2 * LH * T * T), *n = malloc(sizeof(float) * 2 * LH * T);
    float *d = malloc(sizeof(float) * 2 * LH * T), *o = malloc(sizeof(float) * 2 * LH * T * C);
    andrea_engine_options eo;
    andrea_engine_options_init(&eo);
    eo.device = ANDREA_DEVICE_CPU;
    andrea_engine *e = andrea_engine_open(&model, &eo, 2, T, &err);
    andrea_forward_io io = {0};
    io.B = nb;
    io.T = T;
    io.tokens = tokens;
    io.lengths = lengths;
    io.attn = a;
    io.head_out_norm = n;
    io.head_dla = d;
    io.head_out = o;
    if (!e || andrea_engine_forward(e, &io, &err)) fprintf(stderr, "%s\n", err.msg);
    andrea_engine_close(e);
    memcpy(attn, a + j * LH * T * T, sizeof(float) * LH * T * T);
    memcpy(norm, n + j * LH * T, sizeof(float) * LH * T);
    memcpy(dla, d + j * LH * T, sizeof(float) * LH * T);
    memcpy(hout, o + j * LH * T * C, sizeof(float) * LH * T * C);
    free(a);
    free(n);
    free(d);
    free(o);
}

static void check_roundtrip(int fp32) {
    probe_suite *s;
    int n;
    ae_error err;
    CHECK(make_suites(&s, &n) == 0);
    const char *path = tmp_path(fp32 ? "rt32.h5" : "rt16.h5");
    CHECK_MSG(write_dump(path, s, n, fp32, ANDREA_CONTRIB_FULL, NULL, &err) == 0, "%s", err.msg);
    andrea_dump *d = andrea_dump_open(path, &err);
    CHECK_MSG(d != NULL, "%s", err.msg);
    if (!d) return;
    const andrea_config *c = andrea_dump_config(d);
    CHECK(c->n_layer == 2 && c->n_head == 4 && c->d_model == 32 && c->head_dim == 8 && c->vocab_size == 257);
    CHECK(!strcmp(andrea_dump_maps_dtype(d), fp32 ? "fp32" : "fp16"));
    CHECK(!strcmp(andrea_dump_contrib(d), "full"));
    CHECK(!strcmp(andrea_dump_checkpoint_path(d), "random:7"));
    CHECK(andrea_dump_n_suites(d) == 3);
    const int L = 2, H = 4, C = 32;
    double max_err = 0;
    for (int k = 0; k < n; k++) {
        const andrea_dump_suite_info *si = andrea_dump_suite(d, k);
        CHECK(!strcmp(si->name, s[k].name) && si->n_seq == 3 && si->T == s[k].max_len && si->seed == 5);
        probe_suite back;
        CHECK_MSG(andrea_dump_read_items(d, k, &back, &err) == 0, "%s", err.msg);
        CHECK(back.n_items == s[k].n_items && !strcmp(back.name, s[k].name));
        int T = si->T;
        float *map = malloc(sizeof(float) * (size_t)T * T), *vals = malloc(sizeof(float) * (size_t)L * H * T);
        float *hrow = malloc(sizeof(float) * (size_t)T * C);
        for (int i = 0; i < s[k].n_items && i < back.n_items; i++) {
            const probe_item *a = &s[k].items[i], *b = &back.items[i];
            int len = a->n_tokens;
            CHECK(b->n_tokens == len && !memcmp(a->tokens, b->tokens, sizeof(int) * (size_t)len));
            CHECK(b->n_targets == a->n_targets &&
                  !memcmp(a->targets, b->targets, sizeof(probe_target) * (size_t)a->n_targets));
            CHECK(b->n_entities == a->n_entities &&
                  (!a->n_entities || !memcmp(a->entities, b->entities, sizeof(int) * 2 * (size_t)a->n_entities)));
            float *ra = malloc(sizeof(float) * (size_t)L * H * T * T), *rn = malloc(sizeof(float) * (size_t)L * H * T);
            float *rd = malloc(sizeof(float) * (size_t)L * H * T), *ro = malloc(sizeof(float) * (size_t)L * H * T * C);
            engine_reference(&s[k], i, ra, rn, rd, ro);
            for (int lh = 0; lh < L * H; lh++) {
                CHECK(andrea_dump_read_map(d, k, i, lh / H, lh % H, map, &err) == 0);
                for (int q = 0; q < T; q++)
                    for (int key = 0; key < T; key++) {
                        float got = map[q * T + key];
                        float want = q < len && key < len ? ra[((size_t)lh * T + q) * T + key] : 0.0f;
                        double e = fabs((double)got - want);
                        if (e > max_err) max_err = e;
                        /* fp16 keeps 11 significant bits: relative error <= 2^-11, plus the
                         * subnormal step 2^-24 for tiny probabilities */
                        double tol = fp32 ? 0.0 : fabs(want) * (1.0 / 2048) + 6e-8;
                        if (e > tol) {
                            CHECK_MSG(0, "%s seq %d head %d (%d,%d): %g vs %g", s[k].name, i, lh, q, key, got, want);
                            q = T;
                            break;
                        }
                    }
                CHECK(andrea_dump_read_head_out(d, k, i, lh / H, lh % H, hrow, &err) == 0);
                CHECK(!memcmp(hrow, ro + (size_t)lh * T * C, sizeof(float) * (size_t)len * C));
                for (int t = len; t < T; t++)
                    for (int cc = 0; cc < C; cc++) CHECK(hrow[(size_t)t * C + cc] == 0.0f);
            }
            CHECK(andrea_dump_read_head_values(d, k, i, "head_out_norm", vals, &err) == 0);
            for (int lh = 0; lh < L * H; lh++)
                for (int t = 0; t < T; t++) CHECK(vals[lh * T + t] == (t < len ? rn[lh * T + t] : 0.0f));
            CHECK(andrea_dump_read_head_values(d, k, i, "head_dla", vals, &err) == 0);
            for (int lh = 0; lh < L * H; lh++)
                for (int t = 0; t < T; t++) {
                    if (t + 1 < len) CHECK(vals[lh * T + t] == rd[lh * T + t]);
                    else CHECK(isnan(vals[lh * T + t]));
                }
            free(ra);
            free(rn);
            free(rd);
            free(ro);
        }
        free(map);
        free(vals);
        free(hrow);
        andrea_probe_suite_free(&back);
    }
    fprintf(stderr, "  %s maps: max |dump - engine| = %.3g\n", fp32 ? "fp32" : "fp16", max_err);
    andrea_dump_close(d);
    andrea_probe_suites_free(s, n);
}

static void test_fp32_dump_reads_back_exactly_what_the_engine_computed(void) { check_roundtrip(1); }

static void test_fp16_dump_reads_back_the_engine_maps_within_half_precision(void) { check_roundtrip(0); }

static void test_heads_option_stores_only_the_chosen_heads_contributions(void) {
    probe_suite *s;
    int n;
    ae_error err;
    CHECK(make_suites(&s, &n) == 0);
    unsigned char mask[8] = {0};
    CHECK(andrea_parse_heads("1.2,0.0", &model.cfg, mask, &err) == 0);
    CHECK(mask[0] == 1 && mask[6] == 1 && mask[1] == 0);
    CHECK(andrea_parse_heads("2.0", &model.cfg, mask, &err) == -1 && strstr(err.msg, "2.0 does not exist"));
    CHECK(andrea_parse_heads("1.2,0.0", &model.cfg, mask, &err) == 0);
    const char *path = tmp_path("heads.h5");
    CHECK_MSG(write_dump(path, s, n, 0, ANDREA_CONTRIB_NONE, mask, &err) == 0, "%s", err.msg);
    andrea_dump *d = andrea_dump_open(path, &err);
    CHECK_MSG(d != NULL, "%s", err.msg);
    if (d) {
        CHECK(andrea_dump_has(d, 0, "head_out") && !andrea_dump_has(d, 0, "head_dla"));
        float vals[2 * 4 * 64];
        CHECK(andrea_dump_read_head_values(d, 0, 0, "head_dla", vals, &err) == -1);
        CHECK(strstr(err.msg, "--contrib none") != NULL);
        int T = andrea_dump_suite(d, 0)->T;
        float *row = malloc(sizeof(float) * (size_t)T * 32);
        for (int lh = 0; lh < 8; lh++) {
            CHECK(andrea_dump_read_head_out(d, 0, 0, lh / 4, lh % 4, row, &err) == 0);
            double sum = 0;
            for (int i = 0; i < T * 32; i++) sum += fabs(row[i]);
            CHECK(mask[lh] ? sum > 0 : sum == 0);
        }
        free(row);
        andrea_dump_close(d);
    }
    andrea_probe_suites_free(s, n);
}

static void test_interrupted_dump_leaves_no_file(void) {
    probe_suite *s;
    int n;
    ae_error err;
    CHECK(make_suites(&s, &n) == 0);
    const char *path = tmp_path("interrupted.h5");
    andrea_interrupted = 1;
    CHECK(write_dump(path, s, n, 0, ANDREA_CONTRIB_NORM, NULL, &err) == -1);
    andrea_interrupted = 0;
    CHECK(strstr(err.msg, "interrupted.h5: interrupted") != NULL);
    CHECK(!file_exists(path));
    CHECK(no_temporaries());
    andrea_probe_suites_free(s, n);
}

static void test_token_outside_the_vocabulary_is_refused_before_writing(void) {
    probe_suite *s;
    int n;
    ae_error err;
    CHECK(make_suites(&s, &n) == 0);
    s[1].items[2].tokens[3] = 300;
    const char *path = tmp_path("badtoken.h5");
    CHECK(write_dump(path, s, n, 0, ANDREA_CONTRIB_NORM, NULL, &err) == -1);
    CHECK(strstr(err.msg, "item 2: token 3 is 300, outside the vocabulary 0..256") != NULL);
    CHECK(!file_exists(path) && no_temporaries());
    andrea_probe_suites_free(s, n);
}

static void test_unwritable_output_is_reported_and_leaves_nothing(void) {
    probe_suite *s;
    int n;
    ae_error err;
    CHECK(make_suites(&s, &n) == 0);
    const char *path = tmp_path("no-such-dir/out.h5");
    CHECK(write_dump(path, s, n, 0, ANDREA_CONTRIB_NORM, NULL, &err) == -1);
    CHECK_MSG(strstr(err.msg, "no-such-dir/out.h5") != NULL, "%s", err.msg);
    CHECK(no_temporaries());
    andrea_probe_suites_free(s, n);
}

int main(void) {
    setup();
    if (!model.memory || !tok) return check_summary("test_dump_roundtrip (setup failed)") | 1;
    RUN(test_fp32_dump_reads_back_exactly_what_the_engine_computed);
    RUN(test_fp16_dump_reads_back_the_engine_maps_within_half_precision);
    RUN(test_heads_option_stores_only_the_chosen_heads_contributions);
    RUN(test_interrupted_dump_leaves_no_file);
    RUN(test_token_outside_the_vocabulary_is_refused_before_writing);
    RUN(test_unwritable_output_is_reported_and_leaves_nothing);
    andrea_tokenizer_free(tok);
    andrea_model_free(&model);
    return check_summary("test_dump_roundtrip");
}
