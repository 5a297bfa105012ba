/* test_probe_file.c — JSON Lines probe files: good files load with the right targets; each kind
 * of malformed line is refused with "FILE:LINE: problem" and nothing is returned. */
#include <stdlib.h>
#include <string.h>

#include "../probes/probe.h"
#include "check.h"

static andrea_tokenizer *tok;

static const char *write_file(const char *name, const char *content) {
    static char path[4096];
    snprintf(path, sizeof path, "%s/%s", check_tmpdir(), name);
    FILE *f = fopen(path, "wb");
    fwrite(content, 1, strlen(content), f);
    fclose(f);
    return path;
}

/* Loads content (byte tokenizer, vocab 257, max_seq_len 32); returns the error message or NULL
 * when it loaded. */
static const char *load(const char *content, probe_suite **s, int *n) {
    static ae_error err;
    const char *path = write_file("probes.jsonl", content);
    *s = NULL;
    *n = 0;
    if (andrea_probe_file_load(path, tok, 257, 32, s, n, &err) == 0) return NULL;
    return err.msg;
}

/* A bad file must fail, return nothing, and name the file and line with the problem. */
static void expect_refused(const char *content, int line, const char *problem) {
    probe_suite *s;
    int n;
    const char *msg = load(content, &s, &n);
    CHECK_MSG(msg != NULL, "accepted: %s", content);
    if (!msg) {
        andrea_probe_suites_free(s, n);
        return;
    }
    char want[256];
    snprintf(want, sizeof want, "probes.jsonl:%d: %s", line, problem);
    CHECK_MSG(strstr(msg, want) != NULL, "message '%s' lacks '%s'", msg, want);
    CHECK(s == NULL && n == 0);
}

static const char *GOOD = "{\"suite\": \"bos\", \"text\": \"hello world\"}\n";

static void test_text_and_token_items_group_by_suite_with_builtin_targets(void) {
    probe_suite *s;
    int n;
    const char *msg = load("{\"suite\": \"prev_token\", \"text\": \"abc\"}\n"
                           "\n"
                           "{\"suite\": \"my_class\", \"tokens\": [1, 2, 3, 4], \"targets\": [[3, [0]]]}\n"
                           "{\"suite\": \"prev_token\", \"tokens\": [5, 6]}\n"
                           "{\"suite\": \"induction\", \"tokens\": [256, 7, 8, 9, 7, 8, 9]}\n",
                           &s, &n);
    CHECK_MSG(msg == NULL, "%s", msg);
    if (msg) return;
    CHECK(n == 3);
    /* a text item starts with BOS (256), as built-in items do */
    CHECK(!strcmp(s[0].name, "prev_token") && s[0].n_items == 2 && s[0].max_len == 4);
    CHECK(s[0].items[0].n_tokens == 4 && s[0].items[0].tokens[0] == 256 && s[0].items[0].tokens[1] == 'a' &&
          s[0].items[0].tokens[3] == 'c');
    CHECK(s[0].items[0].n_targets == 3 && s[0].items[0].targets[2].query == 3 && s[0].items[0].targets[2].key == 2);
    CHECK(!strcmp(s[1].name, "my_class") && s[1].items[0].n_targets == 1); /* a user class: its own targets */
    CHECK(strstr(s[1].source, "probes.jsonl") != NULL && s[1].seed == 0);
    /* induction on tokens: the repeat of 7 at 4 targets 2 (after its earlier occurrence at 1) */
    probe_item *it = &s[2].items[0];
    CHECK(it->n_targets == 3 && it->targets[0].query == 4 && it->targets[0].key == 2);
    andrea_probe_suites_free(s, n);
}

static void test_explicit_targets_override_the_rule_and_are_sorted(void) {
    probe_suite *s;
    int n;
    const char *msg = load("{\"suite\": \"prev_token\", \"tokens\": [1,2,3,4,5], \"targets\": [[4, [3, 0]], [2, [2]]]}\n", &s, &n);
    CHECK_MSG(msg == NULL, "%s", msg);
    if (msg) return;
    probe_item *it = &s[0].items[0];
    CHECK(it->n_targets == 3);
    CHECK(it->targets[0].query == 2 && it->targets[0].key == 2);
    CHECK(it->targets[1].query == 4 && it->targets[1].key == 0);
    CHECK(it->targets[2].query == 4 && it->targets[2].key == 3);
    andrea_probe_suites_free(s, n);
}

static void test_entity_items_use_their_spans(void) {
    probe_suite *s;
    int n;
    const char *msg = load("{\"suite\": \"entity\", \"tokens\": [1,2,3,4,5,6], \"entities\": [[0, 2], [3, 4]]}\n", &s, &n);
    CHECK_MSG(msg == NULL, "%s", msg);
    if (msg) return;
    probe_item *it = &s[0].items[0];
    CHECK(it->n_entities == 2 && it->entities[2] == 3 && it->entities[3] == 4);
    /* query 2 -> span [0,2); 3 lies inside [3,4): not eligible; queries 4, 5 -> span [3,4) */
    CHECK(it->n_targets == 4);
    CHECK(it->targets[0].query == 2 && it->targets[0].key == 0 && it->targets[1].key == 1);
    CHECK(it->targets[2].query == 4 && it->targets[2].key == 3);
    CHECK(it->targets[3].query == 5 && it->targets[3].key == 3);
    andrea_probe_suites_free(s, n);
}

static void test_bracket_close_items_from_text_get_matching_openers(void) {
    probe_suite *s;
    int n;
    const char *msg = load("{\"suite\": \"bracket_close\", \"text\": \"f(a[i], b)\"}\n", &s, &n);
    CHECK_MSG(msg == NULL, "%s", msg);
    if (msg) return;
    probe_item *it = &s[0].items[0];
    /* BOS first, so: ']' at 6 -> '[' at 4; ')' at 10 -> '(' at 2 (not the most recent opener) */
    CHECK(it->n_targets == 2);
    CHECK(it->targets[0].query == 6 && it->targets[0].key == 4);
    CHECK(it->targets[1].query == 10 && it->targets[1].key == 2);
    andrea_probe_suites_free(s, n);
}

static void test_bracket_items_from_text_target_the_innermost_unclosed_opener(void) {
    probe_suite *s;
    int n;
    /* "bos": false: positions as in the text */
    const char *msg = load("{\"suite\": \"bracket\", \"text\": \"f(a[i], b)\", \"bos\": false}\n", &s, &n);
    CHECK_MSG(msg == NULL, "%s", msg);
    if (msg) return;
    probe_item *it = &s[0].items[0];
    /* tokens 0..9 = f ( a [ i ] , ' ' b ): 2..8 are inside '(' at 1, 4 inside '[' at 3; the
     * opener '[' itself (3) and the closer ']' (5) are inside '(' only. */
    static const int want[][2] = {{2, 1}, {3, 1}, {4, 3}, {5, 1}, {6, 1}, {7, 1}, {8, 1}};
    CHECK(it->n_targets == 7);
    for (int i = 0; i < 7 && i < it->n_targets; i++)
        CHECK_MSG(it->targets[i].query == want[i][0] && it->targets[i].key == want[i][1], "target %d: (%d, %d)", i,
                  it->targets[i].query, it->targets[i].key);
    andrea_probe_suites_free(s, n);
}

/* "(a[b)c]d)": the ')' at 4 does not match '[' and is ignored; ']' at 6 closes '[' at 2, the ')'
 * at 8 closes '(' at 0. "x(y[z": nothing closes: no target at all. "a)b(c": the stray ')' is
 * ignored, '(' never closes. */
static void test_bracket_items_with_unbalanced_or_mismatched_brackets_get_no_wrong_pair(void) {
    probe_suite *s;
    int n;
    const char *msg = load("{\"suite\": \"bracket\", \"text\": \"(a[b)c]d)\", \"bos\": false}\n"
                           "{\"suite\": \"bracket\", \"text\": \"x(y[z\", \"bos\": false}\n"
                           "{\"suite\": \"bracket\", \"text\": \"a)b(c\", \"bos\": false}\n"
                           "{\"suite\": \"bracket\", \"text\": \")]}\", \"bos\": false}\n",
                           &s, &n);
    CHECK_MSG(msg == NULL, "%s", msg);
    if (msg) return;
    CHECK(n == 1 && s[0].n_items == 4);
    probe_item *it = &s[0].items[0];
    static const int want[][2] = {{1, 0}, {2, 0}, {3, 2}, {4, 2}, {5, 2}, {6, 0}, {7, 0}};
    CHECK(it->n_targets == 7);
    for (int i = 0; i < 7 && i < it->n_targets; i++)
        CHECK_MSG(it->targets[i].query == want[i][0] && it->targets[i].key == want[i][1], "target %d: (%d, %d)", i,
                  it->targets[i].query, it->targets[i].key);
    for (int i = 1; i < 4; i++) CHECK_MSG(s[0].items[i].n_targets == 0, "item %d: %d targets", i, s[0].items[i].n_targets);
    andrea_probe_suites_free(s, n);
}

static void test_bracket_suite_with_explicit_targets_keeps_them(void) {
    probe_suite *s;
    int n;
    const char *msg = load("{\"suite\": \"bracket\", \"text\": \"f(a[i], b)\", \"targets\": [[9, [1]], [5, [3]]]}\n", &s, &n);
    CHECK_MSG(msg == NULL, "%s", msg);
    if (msg) return;
    probe_item *it = &s[0].items[0];
    CHECK(it->n_targets == 2);
    /* the text's positions, shifted past the BOS the item starts with */
    CHECK(it->targets[0].query == 6 && it->targets[0].key == 4 && it->targets[1].query == 10 && it->targets[1].key == 2);
    andrea_probe_suites_free(s, n);
}

static void test_invalid_json_is_refused_with_its_line(void) { expect_refused("{\"suite\": \"bos\", \"text\": \"ok\"}\n{\"suite\": \n", 2, "not valid JSON"); }
static void test_non_object_line_is_refused(void) { expect_refused("[1, 2]\n", 1, "not a JSON object"); }
static void test_missing_suite_is_refused(void) { expect_refused("{\"text\": \"abc\"}\n", 1, "missing \"suite\""); }
static void test_suite_name_with_a_slash_is_refused(void) {
    expect_refused("{\"suite\": \"a/b\", \"text\": \"abc\"}\n", 1, "\"suite\" must be a name");
}
static void test_both_text_and_tokens_are_refused(void) {
    expect_refused("{\"suite\": \"bos\", \"text\": \"a\", \"tokens\": [1]}\n", 1, "needs exactly one of \"text\" and \"tokens\"");
}
static void test_neither_text_nor_tokens_is_refused(void) {
    expect_refused("{\"suite\": \"bos\"}\n", 1, "needs exactly one of \"text\" and \"tokens\"");
}
static void test_token_id_outside_the_vocabulary_is_refused(void) {
    expect_refused("{\"suite\": \"bos\", \"tokens\": [1, 257]}\n", 1, "\"tokens\"[1] is not a token id in 0..256");
}
static void test_fractional_token_id_is_refused(void) {
    expect_refused("{\"suite\": \"bos\", \"tokens\": [1.5]}\n", 1, "\"tokens\"[0] is not a token id");
}
static void test_empty_tokens_are_refused(void) { expect_refused("{\"suite\": \"bos\", \"tokens\": []}\n", 1, "\"tokens\" is empty"); }
static void test_item_longer_than_the_model_is_refused(void) {
    expect_refused("{\"suite\": \"bos\", \"text\": \"0123456789012345678901234567890123456789\"}\n", 1,
                   "\"text\" is 41 tokens with BOS, more than the model's max_seq_len 32");
}
static void test_target_key_after_its_query_is_refused(void) {
    expect_refused("{\"suite\": \"bos\", \"tokens\": [1,2,3], \"targets\": [[1, [2]]]}\n", 1,
                   "\"targets\"[0]: key[0] must be a token position in 0..1");
}
static void test_target_query_beyond_the_item_is_refused(void) {
    expect_refused("{\"suite\": \"bos\", \"tokens\": [1,2,3], \"targets\": [[3, [0]]]}\n", 1,
                   "\"targets\"[0]: query must be a token position in 1..2");
}
/* position 0 attends only to itself: as a query it would score 1 on every head */
static void test_target_query_at_position_0_is_refused(void) {
    expect_refused("{\"suite\": \"y\", \"tokens\": [1,2,3], \"targets\": [[0, [0]]]}\n", 1,
                   "\"targets\"[0]: query must be a token position in 1..2 (position 0 attends only to itself)");
}
/* ids written as floats are floats to every other JSON reader */
static void test_token_id_written_as_a_float_is_refused(void) {
    expect_refused("{\"suite\": \"bos\", \"tokens\": [1, 2.0, 3]}\n", 1, "\"tokens\"[1] is not a token id");
    expect_refused("{\"suite\": \"bos\", \"tokens\": [1, 2e0, 3]}\n", 1, "\"tokens\"[1] is not a token id");
}
static void test_malformed_target_pair_is_refused(void) {
    expect_refused("{\"suite\": \"bos\", \"tokens\": [1,2,3], \"targets\": [[1, 0]]}\n", 1,
                   "\"targets\"[0] must be [query, [key, ...]]");
}
static void test_entity_span_beyond_the_item_is_refused(void) {
    expect_refused("{\"suite\": \"entity\", \"tokens\": [1,2,3], \"entities\": [[1, 4]]}\n", 1,
                   "\"entities\"[0] must be [start, end] with 0 <= start < end <= 3");
}
static void test_unknown_key_is_refused(void) {
    expect_refused("{\"suite\": \"bos\", \"tokens\": [1], \"taregts\": []}\n", 1, "unknown key \"taregts\"");
}
static void test_text_without_a_tokenizer_is_refused(void) {
    const char *path = write_file("notok.jsonl", GOOD);
    probe_suite *s;
    int n;
    ae_error err;
    CHECK(andrea_probe_file_load(path, NULL, 50257, 32, &s, &n, &err) == -1);
    CHECK(strstr(err.msg, "notok.jsonl:1: a \"text\" item needs a tokenizer") != NULL);
    /* token ids work without one */
    path = write_file("notok2.jsonl", "{\"suite\": \"bos\", \"tokens\": [50000, 3]}\n");
    CHECK(andrea_probe_file_load(path, NULL, 50257, 32, &s, &n, &err) == 0);
    if (n == 1) CHECK(s[0].items[0].n_targets == 1 && s[0].items[0].targets[0].key == 0);
    andrea_probe_suites_free(s, n);
}
static void test_overlong_line_is_refused_without_reading_it_whole(void) {
    size_t big = PROBE_FILE_MAX_LINE + 10;
    char *content = malloc(big + 64);
    strcpy(content, GOOD);
    size_t k = strlen(content);
    memset(content + k, ' ', big);
    content[k + big] = '\n';
    content[k + big + 1] = 0;
    char want[64];
    snprintf(want, sizeof want, "line longer than %d bytes", PROBE_FILE_MAX_LINE);
    expect_refused(content, 2, want);
    free(content);
}
static void test_nul_byte_in_a_line_is_refused(void) {
    const char *path = write_file("nul.jsonl", "");
    FILE *f = fopen(path, "wb");
    fwrite("{\"suite\": \"bos\", \"text\": \"a\"}\0junk\n", 1, 36, f);
    fclose(f);
    probe_suite *s;
    int n;
    ae_error err;
    CHECK(andrea_probe_file_load(path, tok, 257, 32, &s, &n, &err) == -1);
    CHECK(strstr(err.msg, "nul.jsonl:1: contains a NUL byte") != NULL);
}
static void test_every_malformed_line_is_reported(void) {
    probe_suite *s;
    int n;
    const char *msg = load("{\"suite\": \"bos\", \"text\": \"ok\"}\n"
                           "nonsense\n"
                           "{\"suite\": \"bos\", \"text\": \"ok\"}\n"
                           "{\"suite\": \"bos\", \"tokens\": [999]}\n"
                           "[]\n",
                           &s, &n);
    CHECK(msg != NULL && s == NULL);
    if (!msg) return;
    CHECK(strstr(msg, "probes.jsonl:2: not valid JSON") != NULL);
    CHECK(strstr(msg, "probes.jsonl:4: \"tokens\"[0] is not a token id") != NULL);
    CHECK(strstr(msg, "probes.jsonl:5: not a JSON object") != NULL);
    CHECK(strstr(msg, "(3 malformed lines)") != NULL);
}
static void test_empty_file_is_refused(void) {
    probe_suite *s;
    int n;
    const char *msg = load("\n\n", &s, &n);
    CHECK(msg && strstr(msg, "probes.jsonl: no probe items") != NULL);
}
static void test_missing_file_is_refused_with_its_path(void) {
    probe_suite *s;
    int n;
    ae_error err;
    CHECK(andrea_probe_file_load("/nonexistent/p.jsonl", tok, 257, 32, &s, &n, &err) == -1);
    CHECK(strstr(err.msg, "/nonexistent/p.jsonl: cannot open probe file") != NULL);
}
static void test_probes_argument_tells_files_from_suite_lists(void) {
    CHECK(!andrea_probe_spec_is_file(NULL) && !andrea_probe_spec_is_file("all") && !andrea_probe_spec_is_file("bos,bracket"));
    CHECK(andrea_probe_spec_is_file("my.jsonl") && andrea_probe_spec_is_file("./bos") && andrea_probe_spec_is_file("x.json"));
}

static void test_bos_false_leaves_a_text_item_without_bos(void) {
    probe_suite *s;
    int n;
    const char *msg = load("{\"suite\": \"prev_token\", \"text\": \"abc\", \"bos\": false}\n", &s, &n);
    CHECK_MSG(msg == NULL, "%s", msg);
    if (msg) return;
    CHECK(s[0].items[0].n_tokens == 3 && s[0].items[0].tokens[0] == 'a');
    andrea_probe_suites_free(s, n);
}

static void test_text_item_positions_count_from_the_first_text_token(void) {
    probe_suite *s;
    int n;
    /* "Ann met Bo": entities at text positions [0,3) and [8,10); targets [[4, [0]]] */
    const char *msg = load("{\"suite\": \"entity\", \"text\": \"Ann met Bo\", \"entities\": [[0, 3], [8, 10]]}\n"
                           "{\"suite\": \"my_class\", \"text\": \"abcde\", \"targets\": [[4, [0]]]}\n",
                           &s, &n);
    CHECK_MSG(msg == NULL, "%s", msg);
    if (msg) return;
    probe_item *it = &s[0].items[0];
    CHECK(it->n_tokens == 11 && it->entities[0] == 1 && it->entities[1] == 4 && it->entities[2] == 9);
    it = &s[1].items[0];
    CHECK(it->n_targets == 1 && it->targets[0].query == 5 && it->targets[0].key == 1);
    andrea_probe_suites_free(s, n);
}

static void test_default_induction_on_repeated_text_scores_only_the_second_copy(void) {
    probe_suite *s;
    int n;
    /* no token repeats inside "Quick fox." (10 bytes); the space between the copies repeats one
     * alone (no query), the second copy starts at 1 (BOS) + 11 */
    const char *msg = load("{\"suite\": \"induction\", \"text\": \"Quick fox. Quick fox.\"}\n"
                           "{\"suite\": \"duplicate\", \"text\": \"Quick fox. Quick fox.\"}\n",
                           &s, &n);
    CHECK_MSG(msg == NULL, "%s", msg);
    if (msg) return;
    for (int d = 0; d < 2; d++) {
        probe_item *it = &s[d].items[0];
        CHECK_MSG(it->n_targets == 10, "%s: %d targets", s[d].name, it->n_targets);
        int good = 1;
        for (int k = 0; k < it->n_targets; k++)
            good &= it->targets[k].query >= 12 && it->targets[k].key == it->targets[k].query - 11 + (d == 0);
        CHECK_MSG(good, "%s: a target outside the second copy or not at its earlier occurrence", s[d].name);
    }
    andrea_probe_suites_free(s, n);
}

static void test_a_lone_repeated_token_is_no_induction_query(void) {
    probe_suite *s;
    int n;
    /* 5 repeats alone (neighbours differ); 7 8 repeats as a span: only 7 and 8 of the second copy */
    const char *msg = load("{\"suite\": \"induction\", \"tokens\": [256, 5, 7, 8, 1, 5, 2, 7, 8]}\n", &s, &n);
    CHECK_MSG(msg == NULL, "%s", msg);
    if (msg) return;
    probe_item *it = &s[0].items[0];
    CHECK(it->n_targets == 2 && it->targets[0].query == 7 && it->targets[0].key == 3 && it->targets[1].query == 8 &&
          it->targets[1].key == 4);
    andrea_probe_suites_free(s, n);
}

/* texts without targets in a suite that is no class: a map-only suite (maps, no scores) */
static void test_user_suite_without_targets_is_map_only(void) {
    probe_suite *s;
    int n;
    const char *msg = load("{\"suite\": \"my_texts\", \"text\": \"hello\"}\n"
                           "{\"suite\": \"my_texts\", \"tokens\": [1, 2, 3]}\n"
                           "{\"suite\": \"bos\", \"text\": \"hi there\"}\n",
                           &s, &n);
    CHECK_MSG(msg == NULL, "%s", msg);
    if (msg) return;
    CHECK(n == 2 && !strcmp(s[0].name, "my_texts") && s[0].map_only == 1 && s[0].n_items == 2);
    CHECK(s[0].items[0].n_targets == 0 && s[0].items[1].n_targets == 0 && s[0].items[0].n_tokens == 6);
    CHECK(!strcmp(s[1].name, "bos") && s[1].map_only == 0 && s[1].items[0].n_targets > 0);
    andrea_probe_suites_free(s, n);
}
/* a forgotten "targets" on one line must not make that item silently unscored */
static void test_suite_mixing_items_with_and_without_targets_is_refused(void) {
    expect_refused("{\"suite\": \"my_heads\", \"tokens\": [1, 2, 3], \"targets\": [[2, [1]]]}\n"
                   "{\"suite\": \"my_heads\", \"tokens\": [1, 2, 3]}\n",
                   2, "suite \"my_heads\" has targets on an earlier line, this item none");
    expect_refused("{\"suite\": \"my_heads\", \"tokens\": [1, 2, 3]}\n"
                   "{\"suite\": \"my_heads\", \"tokens\": [1, 2, 3], \"targets\": [[2, [1]]]}\n",
                   2, "suite \"my_heads\" is map-only on an earlier line (no targets), this item has them");
}
static void test_bos_that_is_not_a_boolean_is_refused(void) {
    expect_refused("{\"suite\": \"bos\", \"text\": \"ab\", \"bos\": 0}\n", 1, "\"bos\" must be true or false");
}
static void test_bos_on_a_tokens_item_is_refused(void) {
    expect_refused("{\"suite\": \"bos\", \"tokens\": [1, 2], \"bos\": true}\n", 1, "\"bos\" applies to \"text\" items");
}

int main(void) {
    ae_error err;
    tok = andrea_tokenizer_open(257, NULL, NULL, &err);
    if (!tok) return check_skip("byte tokenizer unavailable");
    RUN(test_text_and_token_items_group_by_suite_with_builtin_targets);
    RUN(test_explicit_targets_override_the_rule_and_are_sorted);
    RUN(test_entity_items_use_their_spans);
    RUN(test_bracket_close_items_from_text_get_matching_openers);
    RUN(test_bracket_items_from_text_target_the_innermost_unclosed_opener);
    RUN(test_bracket_items_with_unbalanced_or_mismatched_brackets_get_no_wrong_pair);
    RUN(test_bracket_suite_with_explicit_targets_keeps_them);
    RUN(test_invalid_json_is_refused_with_its_line);
    RUN(test_non_object_line_is_refused);
    RUN(test_missing_suite_is_refused);
    RUN(test_suite_name_with_a_slash_is_refused);
    RUN(test_both_text_and_tokens_are_refused);
    RUN(test_neither_text_nor_tokens_is_refused);
    RUN(test_token_id_outside_the_vocabulary_is_refused);
    RUN(test_fractional_token_id_is_refused);
    RUN(test_empty_tokens_are_refused);
    RUN(test_item_longer_than_the_model_is_refused);
    RUN(test_target_key_after_its_query_is_refused);
    RUN(test_target_query_beyond_the_item_is_refused);
    RUN(test_target_query_at_position_0_is_refused);
    RUN(test_token_id_written_as_a_float_is_refused);
    RUN(test_malformed_target_pair_is_refused);
    RUN(test_entity_span_beyond_the_item_is_refused);
    RUN(test_unknown_key_is_refused);
    RUN(test_text_without_a_tokenizer_is_refused);
    RUN(test_overlong_line_is_refused_without_reading_it_whole);
    RUN(test_nul_byte_in_a_line_is_refused);
    RUN(test_every_malformed_line_is_reported);
    RUN(test_empty_file_is_refused);
    RUN(test_bos_false_leaves_a_text_item_without_bos);
    RUN(test_text_item_positions_count_from_the_first_text_token);
    RUN(test_default_induction_on_repeated_text_scores_only_the_second_copy);
    RUN(test_a_lone_repeated_token_is_no_induction_query);
    RUN(test_user_suite_without_targets_is_map_only);
    RUN(test_suite_mixing_items_with_and_without_targets_is_refused);
    RUN(test_bos_that_is_not_a_boolean_is_refused);
    RUN(test_bos_on_a_tokens_item_is_refused);
    RUN(test_missing_file_is_refused_with_its_path);
    RUN(test_probes_argument_tells_files_from_suite_lists);
    andrea_tokenizer_free(tok);
    return check_summary("test_probe_file");
}
