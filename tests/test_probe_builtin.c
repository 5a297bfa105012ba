/* test_probe_builtin.c — the built-in probe suites: determinism, shapes and, above all, that the
 * targets are right. Target checks use independent re-implementations (a backward depth scan for
 * brackets, a name search for entities) on the decoded token text, with the byte tokenizer and
 * GPT-2 BPE (tests/data/gpt2). */
#include <stdlib.h>
#include <string.h>

#include "../probes/classes.h"
#include "../probes/probe.h"
#include "check.h"

#define GPT2_DIR ANDREA_SOURCE_DIR "/tests/data/gpt2"

static andrea_tokenizer *byte_tok(int vocab) {
    ae_error err;
    andrea_tokenizer *t = andrea_tokenizer_open(vocab, NULL, NULL, &err);
    if (!t) fprintf(stderr, "%s\n", err.msg);
    return t;
}

static andrea_tokenizer *gpt2_tok(void) {
    ae_error err;
    andrea_tokenizer *t = andrea_tokenizer_open(50257, GPT2_DIR, NULL, &err);
    if (!t) fprintf(stderr, "%s\n", err.msg);
    return t;
}

static int build(const char *name, andrea_tokenizer *tok, int vocab, int max_len, int n, int len, uint64_t seed,
                 probe_suite *s) {
    ae_error err;
    probe_options o = {n, len, seed};
    int rc = andrea_probe_suite_builtin(name, tok, vocab, max_len, &o, s, &err);
    if (rc) fprintf(stderr, "%s: %s\n", name, err.msg);
    return rc;
}

/* Decoded bytes of tokens [0, n) with each token's start offset (BOS covers nothing). */
static char *decode(andrea_tokenizer *tok, const int *ids, int n, int *start, int *end) {
    char *text = malloc((size_t)n * 64 + 1), piece[64];
    int len = 0;
    for (int i = 0; i < n; i++) {
        int m = ids[i] == andrea_tokenizer_bos(tok) ? 0 : andrea_tokenizer_token_bytes(tok, ids[i], piece, 64);
        if (m < 0) m = 0;
        start[i] = len;
        memcpy(text + len, piece, (size_t)m);
        len += m;
        end[i] = len;
    }
    text[len] = 0;
    return text;
}

static int has_target(const probe_item *it, int q, int k) {
    for (int i = 0; i < it->n_targets; i++)
        if (it->targets[i].query == q && it->targets[i].key == k) return 1;
    return 0;
}

static int targets_normalized(const probe_item *it) {
    for (int i = 0; i < it->n_targets; i++) {
        const probe_target *t = &it->targets[i];
        if (t->key < 0 || t->key > t->query || t->query >= it->n_tokens) return 0;
        if (i && (t->query < t[-1].query || (t->query == t[-1].query && t->key <= t[-1].key))) return 0;
    }
    return 1;
}

static void test_every_builtin_suite_is_deterministic_and_within_length(void) {
    andrea_tokenizer *tok = byte_tok(257);
    for (int s = 0; andrea_probe_classes[s].name; s++) {
        probe_suite a, b;
        CHECK(build(andrea_probe_classes[s].name, tok, 257, 1024, 8, 96, 7, &a) == 0);
        CHECK(build(andrea_probe_classes[s].name, tok, 257, 1024, 8, 96, 7, &b) == 0);
        CHECK(a.n_items == 8 && b.n_items == 8);
        CHECK(a.seed == 7 && !strcmp(a.source, "builtin") && !strcmp(a.name, andrea_probe_classes[s].name));
        for (int i = 0; i < a.n_items; i++) {
            CHECK(a.items[i].n_tokens == b.items[i].n_tokens);
            CHECK(!memcmp(a.items[i].tokens, b.items[i].tokens, sizeof(int) * (size_t)a.items[i].n_tokens));
            CHECK(a.items[i].n_targets == b.items[i].n_targets && a.items[i].n_targets > 0);
            CHECK(a.items[i].n_tokens >= 5 && a.items[i].n_tokens <= 96 && a.items[i].n_tokens <= a.max_len);
            CHECK_MSG(targets_normalized(&a.items[i]), "%s item %d", a.name, i);
            for (int t = 0; t < a.items[i].n_tokens; t++) CHECK(a.items[i].tokens[t] >= 0 && a.items[i].tokens[t] < 257);
        }
        andrea_probe_suite_free(&a);
        andrea_probe_suite_free(&b);
    }
    andrea_tokenizer_free(tok);
}

static void test_another_seed_gives_other_items(void) {
    andrea_tokenizer *tok = byte_tok(256);
    probe_suite a, b;
    CHECK(build("prev_token", tok, 256, 1024, 4, 64, 1, &a) == 0);
    CHECK(build("prev_token", tok, 256, 1024, 4, 64, 2, &b) == 0);
    int same = 1;
    for (int i = 0; i < 4; i++)
        same &= a.items[i].n_tokens == b.items[i].n_tokens &&
                !memcmp(a.items[i].tokens, b.items[i].tokens, sizeof(int) * (size_t)a.items[i].n_tokens);
    CHECK(!same);
    andrea_probe_suite_free(&a);
    andrea_probe_suite_free(&b);
    andrea_tokenizer_free(tok);
}

static void test_default_sizes_and_clipping_to_the_model_length(void) {
    andrea_tokenizer *tok = byte_tok(256);
    probe_suite s;
    ae_error err;
    CHECK(andrea_probe_suite_builtin("bos", tok, 256, 1024, NULL, &s, &err) == 0);
    CHECK(s.n_items == PROBE_DEFAULT_N_ITEMS && s.max_len == PROBE_DEFAULT_SEQ_LEN && s.seed == PROBE_DEFAULT_SEED);
    andrea_probe_suite_free(&s);
    CHECK(andrea_probe_suite_builtin("entity", tok, 256, 1024, NULL, &s, &err) == 0);
    CHECK(s.n_items == PROBE_ENTITY_N_ITEMS && s.max_len == PROBE_ENTITY_SEQ_LEN);
    andrea_probe_suite_free(&s);
    CHECK(build("bracket", tok, 256, 40, 3, 500, 0, &s) == 0);
    CHECK(s.max_len == 40);
    andrea_probe_suite_free(&s);
    andrea_tokenizer_free(tok);
}

static void test_prev_token_targets_are_the_previous_position(void) {
    andrea_tokenizer *tok = byte_tok(256);
    probe_suite s;
    CHECK(build("prev_token", tok, 256, 1024, 4, 64, 3, &s) == 0);
    for (int i = 0; i < s.n_items; i++) {
        CHECK(s.items[i].n_targets == s.items[i].n_tokens - 1);
        for (int q = 1; q < s.items[i].n_tokens; q++) CHECK(has_target(&s.items[i], q, q - 1));
    }
    andrea_probe_suite_free(&s);
    andrea_tokenizer_free(tok);
}

static void test_bos_suite_starts_with_bos_and_targets_position_zero(void) {
    andrea_tokenizer *tok = byte_tok(257), *nobos = byte_tok(256);
    probe_suite s, t;
    CHECK(build("bos", tok, 257, 1024, 4, 64, 3, &s) == 0);
    CHECK(build("bos", nobos, 256, 1024, 4, 64, 3, &t) == 0);
    for (int i = 0; i < s.n_items; i++) {
        CHECK(s.items[i].tokens[0] == 256);
        CHECK(t.items[i].tokens[0] != 256 && t.items[i].tokens[0] < 256);
        for (int q = 1; q < s.items[i].n_tokens; q++) CHECK(has_target(&s.items[i], q, 0));
        CHECK(s.items[i].n_targets == s.items[i].n_tokens - 1);
    }
    andrea_probe_suite_free(&s);
    andrea_probe_suite_free(&t);
    andrea_tokenizer_free(tok);
    andrea_tokenizer_free(nobos);
}

/* Both copies identical, tokens distinct within a copy, targets i-n+1 (induction) / i-n. */
static void check_repeat_suite(andrea_tokenizer *tok, int vocab, int bos) {
    probe_suite ind, dup;
    CHECK(build("induction", tok, vocab, 1024, 6, 101, 11, &ind) == 0);
    CHECK(build("duplicate", tok, vocab, 1024, 6, 101, 11, &dup) == 0);
    int first = bos >= 0;
    for (int i = 0; i < ind.n_items; i++) {
        probe_item *a = &ind.items[i], *b = &dup.items[i];
        CHECK(a->n_tokens == b->n_tokens && !memcmp(a->tokens, b->tokens, sizeof(int) * (size_t)a->n_tokens));
        int n = (a->n_tokens - first) / 2;
        CHECK(n >= 2 && first + 2 * n == a->n_tokens);
        if (first) CHECK(a->tokens[0] == bos);
        for (int k = 0; k < n; k++) {
            int tk = a->tokens[first + k];
            CHECK(tk != bos);
            if (vocab <= 257) CHECK((tk >= 'a' && tk <= 'z') || (tk >= 'A' && tk <= 'Z'));
            else CHECK(tk < 50256);
            CHECK(a->tokens[first + n + k] == tk);
            for (int j = 0; j < k; j++) CHECK(a->tokens[first + j] != tk);
        }
        CHECK(a->n_targets == n && b->n_targets == n);
        for (int q = first + n; q < first + 2 * n; q++) {
            CHECK(has_target(a, q, q - n + 1));
            CHECK(has_target(b, q, q - n));
        }
    }
    andrea_probe_suite_free(&ind);
    andrea_probe_suite_free(&dup);
}

static void test_induction_and_duplicate_repeat_random_letters_for_byte_models(void) {
    andrea_tokenizer *t257 = byte_tok(257), *t256 = byte_tok(256);
    check_repeat_suite(t257, 257, 256);
    check_repeat_suite(t256, 256, -1);
    andrea_tokenizer_free(t257);
    andrea_tokenizer_free(t256);
}

static void test_induction_and_duplicate_draw_gpt2_ids_without_specials(void) {
    andrea_tokenizer *tok = gpt2_tok();
    if (!tok) {
        CHECK(!"GPT-2 tokenizer files missing");
        return;
    }
    check_repeat_suite(tok, 50257, andrea_tokenizer_bos(tok));
    andrea_tokenizer_free(tok);
}

static const char *opener_of(char c) { return c == ')' ? "(" : c == ']' ? "[" : c == '}' ? "{" : NULL; }

/* Independent matcher: for the closer at p, scan left keeping a depth count over all bracket
 * kinds; the first opener at depth 0 is the match (the generated code is well nested). Returns
 * the opener's byte, or -1. *not_recent = the most recent opener before p is another one. */
static int match_backwards(const char *text, int p, int *not_recent) {
    int depth = 0, most_recent = -1;
    for (int j = p - 1; j >= 0; j--) {
        char c = text[j];
        if (most_recent < 0 && (c == '(' || c == '[' || c == '{')) most_recent = j;
        if (c == ')' || c == ']' || c == '}') depth++;
        else if (c == '(' || c == '[' || c == '{') {
            if (depth == 0) {
                *not_recent = most_recent != j;
                return c == *opener_of(text[p]) ? j : -1;
            }
            depth--;
        }
    }
    return -1;
}

static int token_of(const int *start, const int *end, int n, int p) {
    for (int i = 0; i < n; i++)
        if (start[i] <= p && p < end[i]) return i;
    return -1;
}

/* bracket_close: every target is (token of a closer, token of its opener) and every such pair with
 * distinct tokens is a target; counts closers whose opener is not the most recent opener. */
static void check_bracket_suite(andrea_tokenizer *tok, int vocab, int *n_closers, int *n_not_recent) {
    probe_suite s;
    CHECK(build("bracket_close", tok, vocab, 1024, 32, 128, 5, &s) == 0);
    *n_closers = *n_not_recent = 0;
    for (int i = 0; i < s.n_items; i++) {
        probe_item *it = &s.items[i];
        int *st = malloc(sizeof(int) * (size_t)it->n_tokens), *en = malloc(sizeof(int) * (size_t)it->n_tokens);
        char *text = decode(tok, it->tokens, it->n_tokens, st, en);
        int len = en[it->n_tokens - 1], expected = 0;
        CHECK(it->n_tokens == 128);
        for (int p = 0; p < len; p++) {
            if (!opener_of(text[p])) continue;
            int nr = 0, o = match_backwards(text, p, &nr);
            CHECK_MSG(o >= 0, "item %d byte %d: unmatched closer in generated code", i, p);
            if (o < 0) continue;
            int q = token_of(st, en, it->n_tokens, p), k = token_of(st, en, it->n_tokens, o);
            if (k < q) {
                CHECK_MSG(has_target(it, q, k), "item %d: closer token %d should target opener token %d", i, q, k);
                expected++;
            }
            (*n_closers)++;
            *n_not_recent += nr;
        }
        /* no extra targets: every target pair contains a closer and its matching opener */
        int distinct = 0;
        for (int t = 0; t < it->n_targets; t++) {
            int q = it->targets[t].query, k = it->targets[t].key, ok = 0;
            for (int p = st[q]; p < en[q] && !ok; p++) {
                int nr, o = opener_of(text[p]) ? match_backwards(text, p, &nr) : -1;
                ok = o >= st[k] && o < en[k];
            }
            CHECK_MSG(ok, "item %d: target (%d, %d) is not a closer and its opener", i, q, k);
            distinct++;
        }
        CHECK(distinct <= expected && it->n_targets > 0);
        free(text);
        free(st);
        free(en);
    }
    andrea_probe_suite_free(&s);
}

static void test_bracket_close_targets_are_matching_openers_on_byte_tokens(void) {
    andrea_tokenizer *tok = byte_tok(256);
    int n, nr;
    check_bracket_suite(tok, 256, &n, &nr);
    andrea_tokenizer_free(tok);
    CHECK(n > 200);
}

static void test_bracket_close_suite_has_many_closers_whose_opener_is_not_the_most_recent(void) {
    andrea_tokenizer *tok = byte_tok(256);
    int n, nr;
    check_bracket_suite(tok, 256, &n, &nr);
    andrea_tokenizer_free(tok);
    fprintf(stderr, "  bracket: %d closers, %d (%.0f%%) match an opener that is not the most recent\n", n, nr,
            100.0 * nr / (n ? n : 1));
    CHECK(nr >= 100 && nr * 4 >= n); /* at least a quarter */
}

static void test_bracket_close_targets_are_matching_openers_on_gpt2_tokens(void) {
    andrea_tokenizer *tok = gpt2_tok();
    if (!tok) {
        CHECK(!"GPT-2 tokenizer files missing");
        return;
    }
    int n, nr;
    check_bracket_suite(tok, 50257, &n, &nr);
    andrea_tokenizer_free(tok);
    CHECK(n > 100 && nr * 5 >= n);
}

/* Independent rule for `bracket` on byte tokens: the innermost opener still open at byte p (a
 * backward depth scan from p - 1), when a closer for it follows somewhere after p (a forward depth
 * scan); -1 when p is not inside a closed pair. */
static int innermost_open(const char *text, int len, int p) {
    int depth = 0;
    for (int j = p - 1; j >= 0; j--) {
        char c = text[j];
        if (c == ')' || c == ']' || c == '}') depth++;
        else if (c == '(' || c == '[' || c == '{') {
            if (depth > 0) {
                depth--;
                continue;
            }
            int d = 0; /* forward: its closer must come after p - 1 (p itself may be it) */
            for (int f = j + 1; f < len; f++) {
                if (text[f] == '(' || text[f] == '[' || text[f] == '{') d++;
                else if (text[f] == ')' || text[f] == ']' || text[f] == '}') {
                    if (d == 0) return f >= p ? (f == p ? -2 : j) : -1;
                    d--;
                }
            }
            return -1; /* never closed (cut off) */
        }
    }
    return -1;
}

static void test_bracket_targets_are_the_innermost_unclosed_opener_on_byte_tokens(void) {
    andrea_tokenizer *tok = byte_tok(257);
    probe_suite s;
    CHECK(build("bracket", tok, 257, 1024, 16, 128, 5, &s) == 0);
    int n_q = 0, n_not_recent = 0;
    for (int i = 0; i < s.n_items; i++) {
        probe_item *it = &s.items[i];
        int *st = malloc(sizeof(int) * (size_t)it->n_tokens), *en = malloc(sizeof(int) * (size_t)it->n_tokens);
        char *text = decode(tok, it->tokens, it->n_tokens, st, en);
        int len = en[it->n_tokens - 1], expected = 0;
        for (int q = 1; q < it->n_tokens; q++) {
            int o = innermost_open(text, len, st[q]);
            if (o == -2) { /* q closes its innermost pair: q is inside the pair around it, if any */
                int nr;
                int mine = match_backwards(text, st[q], &nr);
                o = mine >= 0 ? innermost_open(text, len, mine) : -1;
                if (o == -2) o = -1;
            }
            if (o < 0) continue;
            int k = token_of(st, en, it->n_tokens, o);
            CHECK_MSG(has_target(it, q, k), "item %d: token %d should target opener token %d", i, q, k);
            expected++;
            /* the most recent opener before q is another one: a pair closed in between */
            for (int j = st[q] - 1; j > o; j--)
                if (text[j] == '(' || text[j] == '[' || text[j] == '{') {
                    n_not_recent++;
                    break;
                }
        }
        CHECK_MSG(it->n_targets == expected, "item %d: %d targets, %d expected", i, it->n_targets, expected);
        n_q += expected;
        free(text);
        free(st);
        free(en);
    }
    fprintf(stderr, "  bracket: %d queries inside brackets, %d whose innermost opener is not the most recent\n", n_q,
            n_not_recent);
    CHECK(n_q > 16 * 40 && n_not_recent * 4 >= n_q);
    andrea_probe_suite_free(&s);
    andrea_tokenizer_free(tok);
}

/* 100,000 nested pairs (200,000 byte tokens): the rule is one sweep, not tokens x pairs (which
 * took minutes here); every position but the first opener and the last closer has a target, the
 * opener just before it (inside) or its own pair's outer opener (closers). */
static void test_bracket_rule_on_a_long_deeply_nested_text_is_linear(void) {
    andrea_tokenizer *tok = byte_tok(256);
    enum { N = 100000 };
    probe_item it = {0};
    it.n_tokens = 2 * N;
    it.tokens = malloc(sizeof(int) * 2 * N);
    for (int i = 0; i < N; i++) it.tokens[i] = '(', it.tokens[2 * N - 1 - i] = ')';
    ae_error err;
    CHECK(andrea_probe_default_targets("bracket", &it, tok, &err) == 0);
    CHECK_MSG(it.n_targets == 2 * N - 2, "%d targets", it.n_targets);
    CHECK(it.n_targets > 0 && it.targets[0].query == 1 && it.targets[0].key == 0);
    CHECK(it.n_targets > N && it.targets[N - 1].query == N && it.targets[N - 1].key == N - 2);
    free(it.tokens);
    free(it.targets);
    andrea_tokenizer_free(tok);
}

static void test_bracket_and_bracket_close_share_their_sequences(void) {
    andrea_tokenizer *tok = byte_tok(257);
    probe_suite a, b;
    CHECK(build("bracket", tok, 257, 1024, 4, 96, 9, &a) == 0);
    CHECK(build("bracket_close", tok, 257, 1024, 4, 96, 9, &b) == 0);
    for (int i = 0; i < 4; i++) {
        CHECK(a.items[i].n_tokens == b.items[i].n_tokens);
        CHECK(!memcmp(a.items[i].tokens, b.items[i].tokens, sizeof(int) * (size_t)a.items[i].n_tokens));
        CHECK(a.items[i].n_targets > b.items[i].n_targets);
    }
    andrea_probe_suite_free(&a);
    andrea_probe_suite_free(&b);
    andrea_tokenizer_free(tok);
}

/* Entity spans hold a name of the lists; query q targets the whole most recent span ending at or
 * before q; names are re-mentioned within an item. */
static void check_entity_suite(andrea_tokenizer *tok, int vocab) {
    probe_suite s;
    CHECK(build("entity", tok, vocab, 1024, 8, 128, 9, &s) == 0);
    int remention_items = 0;
    for (int i = 0; i < s.n_items; i++) {
        probe_item *it = &s.items[i];
        int *st = malloc(sizeof(int) * (size_t)it->n_tokens), *en = malloc(sizeof(int) * (size_t)it->n_tokens);
        char *text = decode(tok, it->tokens, it->n_tokens, st, en);
        CHECK(it->n_entities >= 4);
        char names[64][64];
        int remention = 0;
        for (int e = 0; e < it->n_entities && e < 64; e++) {
            int a = it->entities[2 * e], b = it->entities[2 * e + 1];
            CHECK(a >= 0 && a < b && b <= it->n_tokens);
            if (e) CHECK(a >= it->entities[2 * e - 1]); /* in order, not overlapping */
            /* span text, trimmed of the leading space a BPE token carries */
            int p0 = st[a], p1 = en[b - 1];
            while (p0 < p1 && text[p0] == ' ') p0++;
            snprintf(names[e], sizeof names[e], "%.*s", p1 - p0, text + p0);
            CHECK_MSG(p1 - p0 >= 2 && names[e][0] >= 'A' && names[e][0] <= 'Z', "span '%s'", names[e]);
            for (int f = 0; f < e; f++) remention |= !strcmp(names[f], names[e]);
        }
        remention_items += remention;
        for (int q = 0; q < it->n_tokens; q++) {
            int best = -1, inside = 0;
            for (int e = 0; e < it->n_entities; e++) {
                if (it->entities[2 * e + 1] <= q) best = e; /* spans are in order: the last one wins */
                inside |= it->entities[2 * e] <= q && q < it->entities[2 * e + 1];
            }
            if (best < 0 || inside) {
                int none = 1;
                for (int t = 0; t < it->n_targets; t++) none &= it->targets[t].query != q;
                CHECK_MSG(none, "item %d: query %d precedes every mention or lies inside one, but has targets", i, q);
                continue;
            }
            for (int k = it->entities[2 * best]; k < it->entities[2 * best + 1]; k++) CHECK(has_target(it, q, k));
        }
        int expected = 0;
        for (int q = 0; q < it->n_tokens; q++) {
            int best = -1, inside = 0;
            for (int e = 0; e < it->n_entities; e++) {
                if (it->entities[2 * e + 1] <= q) best = e;
                inside |= it->entities[2 * e] <= q && q < it->entities[2 * e + 1];
            }
            if (best >= 0 && !inside) expected += it->entities[2 * best + 1] - it->entities[2 * best];
        }
        CHECK(it->n_targets == expected);
        free(text);
        free(st);
        free(en);
    }
    CHECK(remention_items == s.n_items);
    andrea_probe_suite_free(&s);
}

static void test_entity_targets_are_the_most_recent_mention_on_byte_tokens(void) {
    andrea_tokenizer *tok = byte_tok(257);
    check_entity_suite(tok, 257);
    andrea_tokenizer_free(tok);
}

static void test_entity_targets_are_the_most_recent_mention_on_gpt2_tokens(void) {
    andrea_tokenizer *tok = gpt2_tok();
    if (!tok) {
        CHECK(!"GPT-2 tokenizer files missing");
        return;
    }
    check_entity_suite(tok, 50257);
    andrea_tokenizer_free(tok);
}

/* retrieval: each item is [BOS] haystack NEEDLE haystack NEEDLE at one of four lengths; query
 * answer + j - 1 predicts needle token j and its one target is that token in the first needle. */
static void test_retrieval_items_hold_a_needle_twice_at_four_lengths(void) {
    andrea_tokenizer *tok = byte_tok(257);
    probe_suite s;
    ae_error err = {{0}};
    CHECK_MSG(andrea_probe_suite_builtin("retrieval", tok, 257, 256, NULL, &s, &err) == 0, "%s", err.msg);
    CHECK(s.n_items == PROBE_RETRIEVAL_N_ITEMS);
    int lengths[4] = {0};
    for (int i = 0; i < s.n_items; i++) {
        const probe_item *it = &s.items[i];
        CHECK(it->tokens[0] == 256 && it->n_tokens <= 256 && it->n_targets == 8);
        if (i < 4) lengths[i] = it->n_tokens;
        const int answer = it->n_tokens - 8, needle = it->targets[0].key;
        for (int j = 0; j < it->n_targets; j++) {
            const probe_target t = it->targets[j];
            CHECK(t.query == answer + j - 1 && t.key == needle + j && it->tokens[t.key] == it->tokens[t.query + 1]);
            for (int k = 0; k < j; k++) CHECK(it->tokens[needle + k] != it->tokens[needle + j]); /* distinct */
        }
    }
    CHECK_MSG(lengths[0] < lengths[1] && lengths[1] < lengths[2] && lengths[2] < lengths[3] && lengths[3] > 200,
              "lengths %d %d %d %d", lengths[0], lengths[1], lengths[2], lengths[3]);
    andrea_probe_suite_free(&s);
    /* a short context (the suites' 5-token minimum) gets a shorter needle, not a refusal */
    CHECK_MSG(andrea_probe_suite_builtin("retrieval", tok, 257, 5, NULL, &s, &err) == 0, "%s", err.msg);
    for (int i = 0; i < s.n_items; i++)
        CHECK(s.items[i].n_tokens <= 5 && s.items[i].n_targets == 1 &&
              s.items[i].tokens[s.items[i].targets[0].key] == s.items[i].tokens[s.items[i].n_tokens - 1]);
    andrea_probe_suite_free(&s);
    CHECK_MSG(andrea_probe_suite_builtin("retrieval", tok, 257, 16, NULL, &s, &err) == 0, "%s", err.msg);
    CHECK(s.items[3].n_targets == 3 && s.items[3].n_tokens <= 16);
    andrea_probe_suite_free(&s);
    andrea_tokenizer_free(tok);
}

/* successor: runs of one ordinal kind a item (digits, a-z, A-Z for a byte-level model: consecutive
 * bytes), BOS first; the targets are the positions whose next token is their successor, keyed
 * on themselves, and there are some in every item. */
static void test_successor_items_are_runs_of_ordinals_targeting_each_predecessor(void) {
    andrea_tokenizer *tok = byte_tok(257);
    probe_suite s;
    ae_error err = {{0}};
    CHECK_MSG(andrea_probe_suite_builtin("successor", tok, 257, 256, NULL, &s, &err) == 0, "%s", err.msg);
    CHECK(s.n_items == PROBE_SUCCESSOR_N_ITEMS);
    for (int i = 0; i < s.n_items; i++) {
        const probe_item *it = &s.items[i];
        CHECK(it->tokens[0] == 256 && it->n_tokens <= PROBE_SUCCESSOR_SEQ_LEN && it->n_targets >= 2);
        for (int j = 0; j < it->n_targets; j++) {
            const int q = it->targets[j].query;
            CHECK(it->targets[j].key == q && q + 1 < it->n_tokens && it->tokens[q + 1] == it->tokens[q] + 1);
        }
        int pairs = 0; /* every consecutive pair in the item is a target */
        for (int q = 1; q + 1 < it->n_tokens; q++) pairs += it->tokens[q + 1] == it->tokens[q] + 1;
        CHECK_MSG(pairs == it->n_targets, "item %d: %d pairs, %d targets", i, pairs, it->n_targets);
    }
    CHECK(s.items[0].tokens[1] >= '0' && s.items[0].tokens[1] <= '9'); /* kind 0: the digits */
    CHECK(s.items[1].tokens[1] >= 'a' && s.items[1].tokens[1] <= 'z');
    andrea_probe_suite_free(&s);
    andrea_tokenizer_free(tok);
}

static void test_unknown_suite_name_is_refused(void) {
    andrea_tokenizer *tok = byte_tok(256);
    probe_suite s;
    ae_error err;
    CHECK(andrea_probe_suite_builtin("prev_tokens", tok, 256, 1024, NULL, &s, &err) == -1);
    CHECK(strstr(err.msg, "prev_tokens: not a built-in probe suite") != NULL);
    probe_suite *arr;
    int n;
    CHECK(andrea_probe_suites_builtin_list("bos,bos", tok, 256, 1024, NULL, &arr, &n, &err) == -1);
    CHECK(strstr(err.msg, "bos: suite named twice") != NULL);
    CHECK(andrea_probe_suites_builtin_list("all", tok, 256, 1024, &(probe_options){2, 32, 0}, &arr, &n, &err) == 0);
    CHECK(n == 12 && !strcmp(arr[4].name, "bracket_close") && !strcmp(arr[6].name, "bos") &&
          !strcmp(arr[10].name, "retrieval"));
    andrea_probe_suites_free(arr, n);
    /* the default suites (no list) leave out the opt-in class, retrieval; "all" has it */
    CHECK(andrea_probe_suites_builtin_list(NULL, tok, 256, 1024, &(probe_options){2, 32, 0}, &arr, &n, &err) == 0);
    CHECK(n == 11 && !strcmp(arr[10].name, "successor"));
    for (int i = 0; i < n; i++) CHECK(strcmp(arr[i].name, "retrieval"));
    andrea_probe_suites_free(arr, n);
    andrea_tokenizer_free(tok);
}

static void test_missing_probe_data_is_reported_with_its_path(void) {
    andrea_tokenizer *tok = byte_tok(256);
    setenv("ANDREA_PROBE_DATA", "/nonexistent-andrea-data", 1);
    probe_suite s;
    ae_error err;
    CHECK(andrea_probe_suite_builtin("entity", tok, 256, 1024, NULL, &s, &err) == -1);
    CHECK(strstr(err.msg, "/nonexistent-andrea-data/people.txt: cannot open") != NULL);
    CHECK(s.items == NULL);
    unsetenv("ANDREA_PROBE_DATA");
    andrea_tokenizer_free(tok);
}

int main(void) {
    RUN(test_every_builtin_suite_is_deterministic_and_within_length);
    RUN(test_another_seed_gives_other_items);
    RUN(test_default_sizes_and_clipping_to_the_model_length);
    RUN(test_prev_token_targets_are_the_previous_position);
    RUN(test_bos_suite_starts_with_bos_and_targets_position_zero);
    RUN(test_induction_and_duplicate_repeat_random_letters_for_byte_models);
    RUN(test_induction_and_duplicate_draw_gpt2_ids_without_specials);
    RUN(test_bracket_close_targets_are_matching_openers_on_byte_tokens);
    RUN(test_bracket_close_suite_has_many_closers_whose_opener_is_not_the_most_recent);
    RUN(test_bracket_close_targets_are_matching_openers_on_gpt2_tokens);
    RUN(test_bracket_targets_are_the_innermost_unclosed_opener_on_byte_tokens);
    RUN(test_bracket_and_bracket_close_share_their_sequences);
    RUN(test_bracket_rule_on_a_long_deeply_nested_text_is_linear);
    RUN(test_entity_targets_are_the_most_recent_mention_on_byte_tokens);
    RUN(test_entity_targets_are_the_most_recent_mention_on_gpt2_tokens);
    RUN(test_retrieval_items_hold_a_needle_twice_at_four_lengths);
    RUN(test_successor_items_are_runs_of_ordinals_targeting_each_predecessor);
    RUN(test_unknown_suite_name_is_refused);
    RUN(test_missing_probe_data_is_reported_with_its_path);
    return check_summary("test_probe_builtin");
}
