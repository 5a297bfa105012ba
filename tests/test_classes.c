/* test_classes.c — the class table (probes/classes.c): every entry is complete and unique, and
 * each class's loss positions for the causal check and hard queries for its extra statistic are
 * the documented ones (docs/scores.md), on small hand-made items. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../analyzer/pass.h"
#include "../probes/classes.h"
#include "../probes/probe.h"
#include "check.h"

static void test_every_class_entry_is_complete_and_names_are_unique(void) {
    int n = 0;
    for (int i = 0; andrea_probe_classes[i].name; i++, n++) {
        const probe_class *c = &andrea_probe_classes[i];
        CHECK_MSG(c->targets && c->generate && c->default_targets && c->loss_positions && c->loss_words, "%s", c->name);
        CHECK_MSG(c->rule.min_score > 0 && c->rule.min_ratio > 1 && c->rule.min_margin > 0, "%s", c->name);
        CHECK_MSG((c->extra == PROBE_EXTRA_NONE) == (c->extra_name == NULL), "%s", c->name);
        CHECK_MSG((c->extra == PROBE_EXTRA_HARD_TOP1) == (c->hard != NULL), "%s", c->name);
        CHECK(andrea_probe_class_find(c->name) == c && andrea_probe_is_builtin(c->name));
        for (int j = 0; j < i; j++) CHECK(strcmp(andrea_probe_classes[j].name, c->name));
        const andrea_pass *p = andrea_pass_for(c->name);
        /* the maps' extra statistics are the pass's functions; the others are filled later */
        const int of_maps = c->extra == PROBE_EXTRA_TOP1 || c->extra == PROBE_EXTRA_HARD_TOP1;
        CHECK(p->cls == c && p->rule.min_ratio == c->rule.min_ratio && (p->extra != NULL) == of_maps);
        CHECK(andrea_pass_has_extra(p) == (c->extra != PROBE_EXTRA_NONE));
        CHECK_MSG(c->rule.max_extra == 0 || c->extra != PROBE_EXTRA_NONE, "%s: max_extra without an extra", c->name);
    }
    CHECK(n == 12);
    CHECK(andrea_probe_class_find("bracket_close") && andrea_probe_class_find("my_suite") == NULL);
    CHECK(andrea_pass_for("my_suite") == &andrea_pass_generic);
}

/* An item of `len` tokens 0..len-1 (tokens[i] = i unless given) with these targets. */
static probe_item item(int len, const int *tokens, const int (*t)[2], int nt) {
    probe_item it = {0};
    it.n_tokens = len;
    it.tokens = malloc(sizeof(int) * (size_t)len);
    for (int i = 0; i < len; i++) it.tokens[i] = tokens ? tokens[i] : i;
    it.targets = malloc(sizeof(probe_target) * (size_t)(nt ? nt : 1));
    for (int i = 0; i < nt; i++) it.targets[i] = (probe_target){t[i][0], t[i][1]};
    it.n_targets = nt;
    return it;
}

/* "1" where the class's rule marks position p, "." elsewhere. */
static const char *marks(const char *cls, const probe_item *it, int hard) {
    static char out[128];
    unsigned char m[128] = {0};
    const probe_class *c = andrea_probe_class_find(cls);
    if (hard) c->hard(it, m);
    else c->loss_positions(it, m);
    for (int i = 0; i < it->n_tokens; i++) out[i] = m[i] ? '1' : '.';
    out[it->n_tokens] = 0;
    return out;
}

static void item_free(probe_item *it) {
    free(it->tokens);
    free(it->targets);
    free(it->entities);
}

/* copy_suppression's (and a retrieval probe file's) rule: from each position with a next token,
 * every earlier position holding that token. */
static void test_next_token_copies_are_the_earlier_positions_of_the_next_token(void) {
    const int toks[] = {5, 1, 2, 3, 1, 2, 3, 1};
    probe_item it = item(8, toks, NULL, 0);
    ae_error err;
    CHECK(andrea_probe_default_targets("copy_suppression", &it, NULL, &err) == 0);
    const int want[][2] = {{3, 1}, {4, 2}, {5, 3}, {6, 1}, {6, 4}};
    CHECK_MSG(it.n_targets == 5, "%d targets", it.n_targets);
    for (int i = 0; i < 5 && i < it.n_targets; i++)
        CHECK_MSG(it.targets[i].query == want[i][0] && it.targets[i].key == want[i][1], "target %d: (%d, %d)", i,
                  it.targets[i].query, it.targets[i].key);
    CHECK(!strcmp(marks("copy_suppression", &it, 0), "...1111."));
    item_free(&it);
}

/* "f(a[i], b)x" as tokens 0..10: bracket targets inside '(' at 1 and '[' at 3. */
static const int inside[][2] = {{2, 1}, {3, 1}, {4, 3}, {5, 1}, {6, 1}, {7, 1}, {8, 1}};
static const int closers[][2] = {{5, 3}, {9, 1}};

static void test_bracket_loss_is_predicting_each_closer_and_bracket_close_the_token_after_it(void) {
    probe_item a = item(11, NULL, inside, 7), b = item(11, NULL, closers, 2);
    /* bracket: p = 4 predicts ']' (5), p = 8 predicts ')' (9) */
    CHECK_MSG(!strcmp(marks("bracket", &a, 0), "....1...1.."), "%s", marks("bracket", &a, 0));
    /* bracket_close: p = 5 predicts ',' after ']', p = 9 predicts 'x' after ')' */
    CHECK_MSG(!strcmp(marks("bracket_close", &b, 0), ".....1...1."), "%s", marks("bracket_close", &b, 0));
    item_free(&a);
    item_free(&b);
}

static void test_bracket_hard_queries_are_those_behind_a_closed_pair(void) {
    probe_item a = item(11, NULL, inside, 7), b = item(11, NULL, closers, 2);
    /* after "[i]" closed, positions 5..8 still target '(' at 1: not the most recent opener */
    CHECK_MSG(!strcmp(marks("bracket", &a, 1), ".....1111.."), "%s", marks("bracket", &a, 1));
    CHECK_MSG(!strcmp(marks("bracket_close", &b, 1), ".........1."), "%s", marks("bracket_close", &b, 1));
    item_free(&a);
    item_free(&b);
    /* "[f(g(x)), y]" in BPE: "))" at 7 closes '(' at 3 and 5 in one token; ']' at 9 closes '[' at 1
     * with those pairs closed in between: hard; the two-key query itself is not */
    static const int two_closed[][2] = {{7, 3}, {7, 5}, {9, 1}};
    probe_item c = item(11, NULL, two_closed, 3);
    CHECK_MSG(!strcmp(marks("bracket_close", &c, 1), ".........1."), "%s", marks("bracket_close", &c, 1));
    item_free(&c);
}

static void test_induction_and_duplicate_measure_different_positions(void) {
    /* BOS a b c a b c: second copy 4..6; induction keys i-2, duplicate keys i-3 */
    int toks[] = {9, 1, 2, 3, 1, 2, 3};
    int ind[][2] = {{4, 2}, {5, 3}, {6, 4}}, dup[][2] = {{4, 1}, {5, 2}, {6, 3}};
    probe_item a = item(7, toks, ind, 3), b = item(7, toks, dup, 3);
    /* induction: at each second-copy position (the last one predicts nothing: dropped by the check) */
    CHECK_MSG(!strcmp(marks("induction", &a, 0), "....111"), "%s", marks("induction", &a, 0));
    CHECK_MSG(!strcmp(marks("duplicate", &b, 0), "...111."), "%s", marks("duplicate", &b, 0)); /* predicts 4, 5, 6 */
    item_free(&a);
    item_free(&b);
}

static void test_prev_token_and_bos_measure_every_next_token(void) {
    int t[][2] = {{1, 0}, {2, 1}};
    probe_item a = item(5, NULL, t, 2);
    CHECK(!strcmp(marks("prev_token", &a, 0), "1111."));
    CHECK(!strcmp(marks("bos", &a, 0), "1111."));
    item_free(&a);
}

static void test_entity_measures_the_re_mention_tokens(void) {
    /* spans [1,3) = "Ann Lee", [4,5) = "Rome", [6,8) = "Ann Lee" again */
    int toks[] = {0, 10, 11, 5, 20, 6, 10, 11, 7};
    int t[][2] = {{3, 1}, {3, 2}};
    probe_item a = item(9, toks, t, 2);
    a.entities = malloc(sizeof(int) * 6);
    int sp[] = {1, 3, 4, 5, 6, 8};
    memcpy(a.entities, sp, sizeof sp);
    a.n_entities = 3;
    CHECK_MSG(!strcmp(marks("entity", &a, 0), ".....11.."), "%s", marks("entity", &a, 0));
    item_free(&a);
}

/* The documented rule, straight from docs/probes.md: for each i, the nearest j with the longest
 * match of at least 2 tokens (backward from j and i, forward while j + k < i). */
static int brute_repeat_key(const int *t, int n, int i) {
    int best = -1, best_len = 1;
    for (int j = i - 1; j >= 0; j--) {
        if (t[j] != t[i]) continue;
        int len = 1;
        for (int k = 1; j - k >= 0 && t[j - k] == t[i - k]; k++) len++;
        for (int k = 1; i + k < n && j + k < i && t[j + k] == t[i + k]; k++) len++;
        if (len > best_len) {
            best_len = len;
            best = j;
        }
    }
    return best;
}

/* The targets of induction (key j + 1) or duplicate (key j) for an item without targets equal
 * the rule's, also where matches run past 64 tokens (they were once cut at 64, so every long
 * match tied and the nearest partial copy won). */
static int repeat_targets_match_the_rule(const char *cls, const int *toks, int n) {
    const int shift = !strcmp(cls, "induction");
    probe_item it = item(n, toks, NULL, 0);
    ae_error err = {{0}};
    int ok = andrea_probe_class_find(cls)->default_targets(&it, NULL, &err) == 0, k = 0;
    for (int i = 1; i < n && ok; i++) {
        const int j = brute_repeat_key(toks, n, i);
        if (j < 0 || j + shift > i) continue;
        ok = k < it.n_targets && it.targets[k].query == i && it.targets[k].key == j + shift;
        k++;
    }
    ok = ok && k == it.n_targets;
    item_free(&it);
    return ok;
}

static void test_repeat_targets_are_the_longest_nearest_match(void) {
    uint64_t x = 7;
    int toks[300];
    for (int round = 0; round < 300; round++) {
        const int n = 2 + round % 60, alphabet = 2 + round % 5;
        for (int i = 0; i < n; i++) {
            x = x * 6364136223846793005ULL + 1442695040888963407ULL;
            toks[i] = (int)((x >> 33) % (uint64_t)alphabet);
        }
        CHECK_MSG(repeat_targets_match_the_rule("induction", toks, n), "induction, round %d", round);
        CHECK_MSG(repeat_targets_match_the_rule("duplicate", toks, n), "duplicate, round %d", round);
    }
    /* BOS, R (80 distinct), a, R[14..], b, R: R's third copy matches the first copy over 80+
     * tokens and the nearer partial copy over 66 */
    int n = 0;
    toks[n++] = 256;
    for (int i = 0; i < 80; i++) toks[n++] = i;
    toks[n++] = 100;
    for (int i = 14; i < 80; i++) toks[n++] = i;
    toks[n++] = 101;
    for (int i = 0; i < 80; i++) toks[n++] = i;
    CHECK(repeat_targets_match_the_rule("induction", toks, n));
    CHECK(repeat_targets_match_the_rule("duplicate", toks, n));
    probe_item it = item(n, toks, NULL, 0);
    ae_error err = {{0}};
    CHECK(andrea_probe_class_find("induction")->default_targets(&it, NULL, &err) == 0);
    int first_copy = 0;
    for (int k = 0; k < it.n_targets; k++) first_copy += it.targets[k].query > 148 && it.targets[k].key <= 81;
    CHECK_MSG(first_copy == 80, "the third copy's 80 queries look at the first copy: %d do", first_copy);
    item_free(&it);
    /* one token repeated: every match is long; the rule still takes the nearest longest */
    for (int i = 0; i < 200; i++) toks[i] = 5;
    CHECK(repeat_targets_match_the_rule("induction", toks, 200));
}

int main(void) {
    RUN(test_every_class_entry_is_complete_and_names_are_unique);
    RUN(test_next_token_copies_are_the_earlier_positions_of_the_next_token);
    RUN(test_bracket_loss_is_predicting_each_closer_and_bracket_close_the_token_after_it);
    RUN(test_bracket_hard_queries_are_those_behind_a_closed_pair);
    RUN(test_induction_and_duplicate_measure_different_positions);
    RUN(test_repeat_targets_are_the_longest_nearest_match);
    RUN(test_prev_token_and_bos_measure_every_next_token);
    RUN(test_entity_measures_the_re_mention_tokens);
    return check_summary("test_classes");
}
