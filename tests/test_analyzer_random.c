/* test_analyzer_random.c — a random-weight control model gets no label from the default rules,
 * on every built-in suite (the whole path: built-in probes -> dump -> classify -> catalog).
 * Shape: the bundled model's (L=4, H=8, C=256, byte vocabulary with BOS, maxT 256). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../analyzer/ablation.h"
#include "../catalog/catalog.h"
#include "../analyzer/classify.h"
#include "../dump/dump_write.h"
#include "support/model_random.h"
#include "../tokenizer/tokenizer.h"
#include "check.h"

static const char *path_in_tmp(const char *name) {
    static char buf[3][512];
    static int k;
    k = (k + 1) % 3;
    snprintf(buf[k], sizeof buf[k], "%s/%s", check_tmpdir(), name);
    return buf[k];
}

static void test_random_model_gets_no_label_on_builtin_suites(void) {
    andrea_config cfg = {0};
    cfg.n_layer = 4;
    cfg.n_head = 8;
    cfg.d_model = 256;
    cfg.vocab_size = 257;
    cfg.padded_vocab_size = 320;
    cfg.max_seq_len = 256;
    ae_error err = {{0}};
    andrea_model rnd, m;
    memset(&rnd, 0, sizeof rnd);
    memset(&m, 0, sizeof m);
    CHECK(andrea_model_init_random(&rnd, &cfg, 1, &err) == 0);
    char ckpt[512]; /* path_in_tmp returns a static buffer */
    snprintf(ckpt, sizeof ckpt, "%s", path_in_tmp("random_step0.bin"));
    CHECK_MSG(andrea_model_save_bin(&rnd, ckpt, 3, &err) == 0, "%s", err.msg);
    andrea_model_free(&rnd);
    CHECK_MSG(andrea_model_load(&m, ckpt, &err) == 0, "%s", err.msg);
    andrea_tokenizer *tok = andrea_tokenizer_open(m.cfg.vocab_size, m.dir, NULL, &err);
    CHECK_MSG(tok != NULL, "%s", err.msg);
    if (!tok) return;
    probe_suite suites[16];
    int n = 0;
    for (int i = 0; andrea_probe_classes[i].name && n < 16; i++) {
        CHECK_MSG(andrea_probe_suite_builtin(andrea_probe_classes[i].name, tok, m.cfg.vocab_size, m.cfg.max_seq_len, NULL,
                                      &suites[n], &err) == 0,
                  "%s", err.msg);
        n++;
    }
    char dump[512];
    snprintf(dump, sizeof dump, "%s", path_in_tmp("random.h5"));
    andrea_dump_options o;
    andrea_dump_options_init(&o);
    o.out_path = dump;
    o.run.engine.device = ANDREA_DEVICE_CPU;
    CHECK_MSG(andrea_dump_write(&m, suites, n, &o, &err) == 0, "%s", err.msg);
    andrea_classify_options co;
    andrea_classify_options_init(&co);
    co.engine.device = ANDREA_DEVICE_CPU;
    co.ablate_items = 2; /* exercise the causal check on the path recorded in the dump, cheaply (mean
                            ablation takes the other item's outputs) */
    andrea_analysis a;
    CHECK_MSG(andrea_classify_dump(dump, &co, &a, &err) == 0, "%s", err.msg);
    CHECK(a.n_suites == n);
    CHECK(a.has_step && a.step == 0);
    /* 2 items: deltas without intervals, and the note says so */
    CHECK_MSG(!strstr(a.ablation_note, "no causal check") && strstr(a.interval_note, "no intervals or verdicts"), "%s / %s",
              a.ablation_note, a.interval_note);
    int labels = 0;
    for (int s = 0; s < a.n_suites; s++) {
        double best_s = 0, best_r = 0, best_m = -1;
        for (int h = 0; h < 32; h++) {
            const andrea_head_score *hs = &a.suites[s].heads[h];
            labels += hs->label;
            if (hs->score > best_s) best_s = hs->score;
            if (hs->score / hs->baseline > best_r) best_r = hs->score / hs->baseline;
            if (hs->score - hs->control > best_m) best_m = hs->score - hs->control;
            if (hs->label)
                fprintf(stderr, "  labelled %s %d.%d score %.3f baseline %.3f control %.3f\n", a.suites[s].name,
                        hs->layer, hs->head, hs->score, hs->baseline, hs->control);
        }
        fprintf(stderr, "  random %-10s baseline %.3f max score %.3f max ratio %.2f max margin %.3f clean loss %.3f mean rise %.4f\n",
                a.suites[s].name, a.suites[s].heads[0].baseline, best_s, best_r, best_m, a.suites[s].clean_loss,
                a.suites[s].ablation_mean);
        CHECK(isfinite(a.suites[s].ablation_mean));
    }
    CHECK(labels == 0);
    /* duplicate and induction share their items but not their loss positions (docs/scores.md):
     * their causal-check deltas must differ (they were equal, head for head, when both measured
     * at the target queries). */
    int ind = -1, dup = -1, differ = 0;
    for (int s = 0; s < a.n_suites; s++) {
        if (!strcmp(a.suites[s].name, "induction")) ind = s;
        if (!strcmp(a.suites[s].name, "duplicate")) dup = s;
    }
    CHECK(ind >= 0 && dup >= 0);
    for (int h = 0; ind >= 0 && dup >= 0 && h < 32; h++)
        differ += a.suites[ind].heads[h].ablation_delta != a.suites[dup].heads[h].ablation_delta;
    CHECK_MSG(differ > 16, "%d of 32 heads have a duplicate delta other than their induction delta", differ);
    /* ... and the catalog holds the run with no label. */
    const char *db = path_in_tmp("random.db");
    CHECK_MSG(andrea_catalog_write(db, &a, NULL, &err) == 0, "%s", err.msg);
    catalog_rows rows;
    CHECK(andrea_catalog_sql(db, "SELECT count(*) FROM head_catalog WHERE label", NULL, &rows, &err) == 0);
    CHECK(rows.n_rows == 1 && !strcmp(rows.cells[0], "0"));
    andrea_catalog_rows_free(&rows);
    andrea_analysis_free(&a);
    for (int i = 0; i < n; i++) andrea_probe_suite_free(&suites[i]);
    andrea_tokenizer_free(tok);
    andrea_model_free(&m);
}

/* The causal check of all built-in suites at once (suites with the same items share their
 * forwards: induction/duplicate, bracket/bracket_close) gives every suite the clean loss, mean
 * and deltas of checking it alone: shared forwards are longer (the longest prefix any member
 * needs), which moves a loss only by fp32 rounding. 72 heads: the mean takes 64 of them (more
 * than ANDREA_ABLATE_MEAN_HEADS: heads floor(k 72 / 64), all but 8, 17, ..., 71); heads 8 and 17,
 * outside it, are labelled in duplicate only, so a member's wanted heads are its own: induction
 * must leave them NaN. */
static void test_suites_sharing_items_get_the_deltas_of_one_suite_at_a_time(void) {
    andrea_config cfg = {.n_layer = 9, .n_head = 8, .d_model = 64, .vocab_size = 257, .padded_vocab_size = 320,
                         .max_seq_len = 256};
    enum { NH = 72, ITEMS = 2 };
    ae_error err = {{0}};
    andrea_model m = {0};
    CHECK_MSG(andrea_model_init_random(&m, &cfg, 7, &err) == 0, "%s", err.msg);
    andrea_tokenizer *tok = andrea_tokenizer_open(m.cfg.vocab_size, NULL, NULL, &err);
    CHECK_MSG(tok != NULL, "%s", err.msg);
    andrea_engine *e = andrea_cpu_engine_open(&m, ITEMS, m.cfg.max_seq_len, &err);
    CHECK_MSG(e != NULL, "%s", err.msg);
    if (!tok || !e) return;
    probe_suite suites[16];
    static andrea_head_score together[16][NH], alone[16][NH];
    andrea_suite_scores st[16], sa[16];
    int n = 0, dup = -1, ind = -1;
    for (int i = 0; andrea_probe_classes[i].name && n < 16; i++, n++) {
        CHECK_MSG(andrea_probe_suite_builtin(andrea_probe_classes[i].name, tok, m.cfg.vocab_size, 96, NULL, &suites[n],
                                             &err) == 0,
                  "%s", err.msg);
        st[n] = (andrea_suite_scores){.heads = together[n]};
        sa[n] = (andrea_suite_scores){.heads = alone[n]};
        snprintf(st[n].name, sizeof st[n].name, "%.63s", suites[n].name);
        snprintf(sa[n].name, sizeof sa[n].name, "%.63s", suites[n].name);
        if (!strcmp(suites[n].name, "duplicate")) dup = n;
        if (!strcmp(suites[n].name, "induction")) ind = n;
    }
    CHECK(dup >= 0 && ind >= 0);
    if (dup < 0 || ind < 0) return;
    together[dup][8].label = together[dup][17].label = alone[dup][8].label = alone[dup][17].label = 1;
    const andrea_ablation_options ao = {.method = ANDREA_ABLATION_MEAN, .max_items = ITEMS};
    CHECK_MSG(andrea_ablation_suites(e, &m.cfg, suites, n, &ao, st, NULL, 0, NULL, &err) == 0, "%s", err.msg);
    for (int s = 0; s < n; s++) CHECK_MSG(andrea_ablation_suite(e, &m.cfg, &suites[s], ITEMS, &sa[s], &err) == 0, "%s", err.msg);
    /* Bound: a shared forward is longer, so its sgemms have other shapes and round otherwise. Each
     * token loss moves by at most twice its largest logit error (-dz_y + sum_v p_v dz_v), and a logit
     * carries the rounding of the forward's chain (per layer QKV C, a score hd, P·V up to T, W_O C,
     * the MLP C + 4C; the unembedding C) relative to the logits' magnitude (the largest |logit| of a
     * forward of 96 random tokens); a delta or a mean of deltas is a difference of two losses (clean
     * and ablated): 2 x 2 x that. Not relative to the loss (~ln V here): this random model's logits
     * are far smaller, and so are its deltas. */
    const double n_round = (double)cfg.n_layer * (7.0 * cfg.d_model + cfg.d_model / cfg.n_head + 96) + cfg.d_model;
    double zmax = 0;
    {
        static int toks[96];
        static float logits[96 * 257];
        for (int t = 0; t < 96; t++) toks[t] = (t * 37 + 11) % cfg.vocab_size;
        andrea_forward_io io = {.B = 1, .T = 96, .tokens = toks, .logits = logits};
        CHECK_MSG(andrea_engine_forward(e, &io, &err) == 0, "%s", err.msg);
        for (int i = 0; i < 96 * 257; i++) zmax = fmax(zmax, fabs(logits[i]));
    }
    double worst = 0, worst_err = 0, smallest_delta = INFINITY, largest_delta = 0;
    int measured = 0, same_nan = 1;
    for (int s = 0; s < n; s++) {
        CHECK(st[s].n_ablation_items == ITEMS && sa[s].n_ablation_items == ITEMS);
        const double tol = 4 * CHECK_FP32_TOL(n_round, zmax);
        const double e_suite = fmax(fabs(st[s].clean_loss - sa[s].clean_loss), fabs(st[s].ablation_mean - sa[s].ablation_mean));
        worst = fmax(worst, e_suite / tol);
        worst_err = fmax(worst_err, e_suite);
        for (int h = 0; h < NH; h++) {
            same_nan &= isnan(together[s][h].ablation_delta) == isnan(alone[s][h].ablation_delta);
            if (isnan(alone[s][h].ablation_delta)) continue;
            measured++;
            const double e = fabs(together[s][h].ablation_delta - alone[s][h].ablation_delta);
            worst = fmax(worst, e / tol);
            worst_err = fmax(worst_err, e);
            smallest_delta = fmin(smallest_delta, fabs(alone[s][h].ablation_delta) / tol);
            largest_delta = fmax(largest_delta, fabs(alone[s][h].ablation_delta) / tol);
        }
    }
    fprintf(stderr, "  together vs alone: worst %.3g, %.3g of its bound (%.3g); |deltas| %.3g to %.3g bounds\n",
            worst_err, worst, 4 * CHECK_FP32_TOL(n_round, zmax), smallest_delta, largest_delta);
    CHECK_MSG(same_nan && measured == n * 64 + 2, "%d deltas measured (want %d), NaN alike %d", measured, n * 64 + 2,
              same_nan);
    CHECK(isnan(together[ind][8].ablation_delta) && !isnan(together[dup][8].ablation_delta));
    CHECK(isnan(together[ind][26].ablation_delta) && !isnan(together[ind][27].ablation_delta)); /* 26 = floor(23 * 72 / 64) + 1 */
    CHECK_MSG(worst <= 1, "suites checked together and alone differ by %.3g x their bound", worst);
    /* the loss positions are each member's own: duplicate's deltas are not induction's */
    int differ = 0;
    for (int h = 0; h < NH; h++) differ += !isnan(together[ind][h].ablation_delta) && together[dup][h].ablation_delta != together[ind][h].ablation_delta;
    CHECK_MSG(differ > 32, "%d of 64 heads have a duplicate delta other than their induction delta", differ);
    andrea_engine_close(e);
    for (int i = 0; i < n; i++) andrea_probe_suite_free(&suites[i]);
    andrea_tokenizer_free(tok);
    andrea_model_free(&m);
}

/* The causal check's model must have the dump's whole config: a dump claiming another max_seq_len
 * or padded vocabulary than the checkpoint it names would be catalogued as that model's run. */
static void test_checkpoint_with_another_config_than_the_dump_is_refused(void) {
    andrea_config cfg = {.n_layer = 2, .n_head = 2, .d_model = 16, .vocab_size = 257, .padded_vocab_size = 320,
                         .max_seq_len = 32};
    ae_error err = {{0}};
    andrea_model m;
    char ckpt[512]; /* a checkpoint on disk: the dump records its sha256, which classify needs */
    snprintf(ckpt, sizeof ckpt, "%s", path_in_tmp("config.bin"));
    CHECK_MSG(andrea_model_init_random(&m, &cfg, 5, &err) == 0, "%s", err.msg);
    CHECK_MSG(andrea_model_save_bin(&m, ckpt, 3, &err) == 0, "%s", err.msg);
    andrea_model_free(&m);
    CHECK_MSG(andrea_model_load(&m, ckpt, &err) == 0, "%s", err.msg);
    andrea_tokenizer *tok = andrea_tokenizer_open(257, NULL, NULL, &err);
    CHECK_MSG(tok != NULL, "%s", err.msg);
    probe_suite s;
    probe_options po = {4, 16, 0};
    CHECK_MSG(andrea_probe_suite_builtin("prev_token", tok, 257, 32, &po, &s, &err) == 0, "%s", err.msg);
    char dump[512];
    snprintf(dump, sizeof dump, "%s", path_in_tmp("config.h5"));
    andrea_dump_options o;
    andrea_dump_options_init(&o);
    o.out_path = dump;
    o.run.engine.device = ANDREA_DEVICE_CPU;
    CHECK_MSG(andrea_dump_write(&m, &s, 1, &o, &err) == 0, "%s", err.msg);
    andrea_model_free(&m);
    const struct {
        const char *field;
        int max_seq_len, padded_vocab_size;
    } other[] = {{"max_seq_len 64, but 32", 64, 320}, {"padded_vocab_size 384, but 320", 32, 384}, {NULL, 32, 320}};
    for (int i = 0; i < 3; i++) {
        andrea_config c2 = cfg;
        c2.max_seq_len = other[i].max_seq_len;
        c2.padded_vocab_size = other[i].padded_vocab_size;
        CHECK_MSG(andrea_model_init_random(&m, &c2, 5, &err) == 0, "%s", err.msg);
        andrea_classify_options co;
        andrea_classify_options_init(&co);
        co.engine.device = ANDREA_DEVICE_CPU;
        co.ablate_items = 1;
        co.model = &m;
        andrea_analysis a;
        int rc = andrea_classify_dump(dump, &co, &a, &err);
        if (other[i].field)
            CHECK_MSG(rc == -1 && strstr(err.msg, "its config differs from the dump's") && strstr(err.msg, other[i].field),
                      "rc %d: %s", rc, rc ? err.msg : "classified");
        else
            CHECK_MSG(rc == 0, "%s", err.msg);
        if (rc == 0) andrea_analysis_free(&a);
        andrea_model_free(&m);
    }
    andrea_probe_suite_free(&s);
    andrea_tokenizer_free(tok);
}

/* The mean's heads (docs/scores.md): every head up to 64, else 64 spread evenly. Counted, and
 * spread: on 12 x 12 heads every layer gives 5 or 6 and odd heads are among them (a stride of
 * ceil(144 / 64) = 3 gave 48 heads, 0, 3, 6 and 9 of each layer). */
static void test_the_mean_takes_every_head_up_to_64_else_64_spread_evenly(void) {
    static unsigned char in[1000];
    const int shapes[] = {1, 32, 64, 65, 72, 144, 999};
    for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++) {
        const int NH = shapes[s];
        memset(in, 7, sizeof in);
        andrea_ablation_mean_heads(NH, in);
        int n = 0, odd = 0;
        for (int i = 0; i < NH; i++) {
            n += in[i] == 1;
            odd += in[i] == 1 && i % 2;
            CHECK(in[i] <= 1);
        }
        CHECK_MSG(n == (NH <= 64 ? NH : 64), "%d heads: %d in the mean", NH, n);
        CHECK(NH < 2 || odd > 0);
        CHECK(in[NH] == 7); /* nothing written past NH */
    }
    andrea_ablation_mean_heads(144, in);
    for (int l = 0; l < 12; l++) {
        int n = 0;
        for (int h = 0; h < 12; h++) n += in[l * 12 + h];
        CHECK_MSG(n == 5 || n == 6, "layer %d: %d heads in the mean", l, n);
    }
}

int main(void) {
    RUN(test_the_mean_takes_every_head_up_to_64_else_64_spread_evenly);
    RUN(test_random_model_gets_no_label_on_builtin_suites);
    RUN(test_suites_sharing_items_get_the_deltas_of_one_suite_at_a_time);
    RUN(test_checkpoint_with_another_config_than_the_dump_is_refused);
    return check_summary("test_analyzer_random");
}
