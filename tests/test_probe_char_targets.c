/* test_probe_char_targets.c — probe items that give their targets as character spans of their
 * text ("char_targets", docs/probes.md): the spans map to tokens through the tokenizer's offsets,
 * characters are code points (not bytes), and a span that starts or ends inside a token, lies
 * outside the text or puts a key after its query is refused naming the item and the offset.
 * GPT-2 BPE (tests/data/gpt2) and the byte-level tokenizer. */
#include <stdlib.h>
#include <string.h>

#include "../probes/probe.h"
#include "check.h"

#define GPT2_DIR ANDREA_SOURCE_DIR "/tests/data/gpt2"

static andrea_tokenizer *gpt2, *bytes;

/* Loads one line as a probe file with tokenizer t (vocab: its size); the error or NULL. */
static const char *load(andrea_tokenizer *t, int vocab, const char *content, probe_suite **s, int *n) {
    static ae_error err;
    static char path[4096];
    snprintf(path, sizeof path, "%s/chars.jsonl", check_tmpdir());
    FILE *f = fopen(path, "wb");
    fputs(content, f);
    fclose(f);
    *s = NULL;
    *n = 0;
    return andrea_probe_file_load(path, t, vocab, 64, s, n, &err) == 0 ? NULL : err.msg;
}

static void expect_refused(andrea_tokenizer *t, int vocab, const char *content, const char *problem) {
    probe_suite *s;
    int n;
    const char *msg = load(t, vocab, content, &s, &n);
    CHECK_MSG(msg != NULL, "accepted: %s", content);
    if (!msg) {
        andrea_probe_suites_free(s, n);
        return;
    }
    char want[512];
    snprintf(want, sizeof want, "chars.jsonl:1: %s", problem);
    CHECK_MSG(strstr(msg, want) != NULL, "message '%s' lacks '%s'", msg, want);
}

/* "Zoë met Zoë. Zoë" in GPT-2: Z | o | ë | " met" | " Zo" | ë | . | " Zo" | ë; characters
 * 0..15 (ë is one character of two bytes), tokens at characters 0,1,2,3,7,10,11,12,15. The
 * last "Zoë" (characters 12..15, with its space) looks at the second (7..10): text tokens 7,8
 * attend to 4,5, shifted past BOS. */
static void test_char_spans_map_to_the_tokens_they_cover(void) {
    probe_suite *s;
    int n;
    const char *msg = load(gpt2, 50257,
                           "{\"suite\": \"names\", \"text\": \"Zo\\u00eb met Zo\\u00eb. Zo\\u00eb\", "
                           "\"char_targets\": [[[12, 16], [[7, 11]]]]}\n", &s, &n);
    CHECK_MSG(msg == NULL, "%s", msg);
    if (msg) return;
    const probe_item *it = &s[0].items[0];
    CHECK(s[0].map_only == 0 && it->n_tokens == 10 && it->tokens[0] == 50256);
    CHECK_MSG(it->n_targets == 4, "%d targets", it->n_targets);
    if (it->n_targets == 4)
        CHECK(it->targets[0].query == 8 && it->targets[0].key == 5 && it->targets[1].query == 8 && it->targets[1].key == 6 &&
              it->targets[2].query == 9 && it->targets[2].key == 5 && it->targets[3].query == 9 && it->targets[3].key == 6);
    andrea_probe_suites_free(s, n);
}

/* "Zoë" without its space starts inside the token " Zo" */
static void test_a_span_starting_inside_a_token_is_refused_naming_the_offset(void) {
    expect_refused(gpt2, 50257,
                   "{\"suite\": \"names\", \"text\": \"Zo\\u00eb met Zo\\u00eb. Zo\\u00eb\", "
                   "\"char_targets\": [[[13, 16], [[7, 11]]]]}\n",
                   "\"char_targets\"[0]: character 13 falls inside text token 7 (characters 12..14)");
}

/* byte offsets of the same text (19 bytes) overrun its 16 characters */
static void test_a_span_outside_the_text_is_refused(void) {
    expect_refused(gpt2, 50257,
                   "{\"suite\": \"names\", \"text\": \"Zo\\u00eb met Zo\\u00eb. Zo\\u00eb\", "
                   "\"char_targets\": [[[14, 19], [[8, 13]]]]}\n",
                   "\"char_targets\"[0]: span [14, 19) lies outside the text's 16 characters");
}

static void test_a_key_span_after_its_query_is_refused(void) {
    expect_refused(bytes, 257, "{\"suite\": \"x\", \"text\": \"abcd\", \"char_targets\": [[[1, 2], [[2, 3]]]]}\n",
                   "\"char_targets\"[0]: a key span ends after the query span's first token");
}

/* byte-level: character = byte; with BOS off the first character is position 0 */
static void test_the_first_token_as_a_query_is_refused(void) {
    expect_refused(bytes, 257,
                   "{\"suite\": \"x\", \"text\": \"abcd\", \"bos\": false, \"char_targets\": [[[0, 1], [[0, 1]]]]}\n",
                   "\"char_targets\"[0]: the query span holds the item's first token");
}

static void test_byte_level_spans_cover_one_token_per_character(void) {
    probe_suite *s;
    int n;
    const char *msg = load(bytes, 257, "{\"suite\": \"x\", \"text\": \"ab ab\", \"char_targets\": [[[3, 5], [[0, 2]]]]}\n", &s, &n);
    CHECK_MSG(msg == NULL, "%s", msg);
    if (msg) return;
    const probe_item *it = &s[0].items[0];
    CHECK(it->n_targets == 4 && it->targets[0].query == 4 && it->targets[0].key == 1 && it->targets[3].query == 5 &&
          it->targets[3].key == 2);
    andrea_probe_suites_free(s, n);
}

/* Spans that repeat or overlap give each (query, key) pair once, as it comes: one key span
 * repeated over a long line pushed every copy, gigabytes before the de-duplication at the end. */
static void test_repeated_and_overlapping_spans_give_each_pair_once(void) {
    const int copies = 5000;
    char *line = malloc((size_t)copies * 7 + 256);
    CHECK(line != NULL);
    if (!line) return;
    int at = sprintf(line, "{\"suite\": \"x\", \"text\": \"abcdefgh ab\", \"char_targets\": [[[9, 11], [[1, 3]");
    for (int i = 0; i < copies; i++) at += sprintf(line + at, ",[0,2]");
    sprintf(line + at, "]], [[10, 11], [[0, 1]]]]}\n");
    probe_suite *s;
    int n;
    const char *msg = load(bytes, 257, line, &s, &n);
    free(line);
    CHECK_MSG(msg == NULL, "%s", msg);
    if (msg) return;
    /* queries: characters 9, 10 (positions 10, 11 after BOS); keys: characters 0..2 (1..3) */
    const probe_item *it = &s[0].items[0];
    CHECK_MSG(it->n_targets == 6, "%d targets", it->n_targets);
    for (int i = 0; i < it->n_targets && it->n_targets == 6; i++)
        CHECK(it->targets[i].query == 10 + i / 3 && it->targets[i].key == 1 + i % 3);
    andrea_probe_suites_free(s, n);
}

static void test_char_targets_with_targets_or_on_a_tokens_item_are_refused(void) {
    expect_refused(bytes, 257,
                   "{\"suite\": \"x\", \"text\": \"abcd\", \"targets\": [[2, [1]]], \"char_targets\": [[[2, 3], [[1, 2]]]]}\n",
                   "give \"targets\" (token positions) or \"char_targets\" (character spans), not both");
    expect_refused(bytes, 257, "{\"suite\": \"x\", \"tokens\": [256, 97, 98], \"char_targets\": [[[1, 2], [[0, 1]]]]}\n",
                   "\"char_targets\" are character spans of a \"text\"");
}

static void test_a_malformed_span_is_refused(void) {
    expect_refused(bytes, 257, "{\"suite\": \"x\", \"text\": \"abcd\", \"char_targets\": [[[3, 3], [[0, 1]]]]}\n",
                   "\"char_targets\"[0]: a span is [start, end] with 0 <= start < end (characters)");
    expect_refused(bytes, 257, "{\"suite\": \"x\", \"text\": \"abcd\", \"char_targets\": [[3, [0]]]}\n",
                   "\"char_targets\"[0]: a span is [start, end]");
}

int main(void) {
    ae_error err;
    bytes = andrea_tokenizer_open(257, NULL, NULL, &err);
    gpt2 = andrea_tokenizer_open(50257, GPT2_DIR, NULL, &err);
    if (!bytes || !gpt2) return check_skip("tokenizers unavailable");
    RUN(test_char_spans_map_to_the_tokens_they_cover);
    RUN(test_a_span_starting_inside_a_token_is_refused_naming_the_offset);
    RUN(test_a_span_outside_the_text_is_refused);
    RUN(test_a_key_span_after_its_query_is_refused);
    RUN(test_the_first_token_as_a_query_is_refused);
    RUN(test_byte_level_spans_cover_one_token_per_character);
    RUN(test_repeated_and_overlapping_spans_give_each_pair_once);
    RUN(test_char_targets_with_targets_or_on_a_tokens_item_are_refused);
    RUN(test_a_malformed_span_is_refused);
    andrea_tokenizer_free(bytes);
    andrea_tokenizer_free(gpt2);
    return check_summary("test_probe_char_targets");
}
