/* test_tokenizer.c — byte-level and GPT-2 BPE tokenizers (tokenizer/tokenizer.h).
 * GPT-2 encodings are compared with tests/data/gpt2/reference_encodings.json, made independently
 * by tools/make_tokenizer_reference.sh (npm gpt-3-encoder, cross-checked with OpenAI's
 * encoder.py). Bad tokenizer files are written by the tests themselves into a temporary folder. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include <cJSON.h>

#include "check.h"
#include "tokenizer/tokenizer.h"

#define GPT2_DIR ANDREA_SOURCE_DIR "/tests/data/gpt2"
#define GPT2_VOCAB 50257

static andrea_tokenizer *gpt2(void) {
    static andrea_tokenizer *t;
    if (!t) {
        ae_error err = {{0}};
        t = andrea_tokenizer_open(GPT2_VOCAB, GPT2_DIR, NULL, &err);
        if (!t) {
            fprintf(stderr, "cannot open the GPT-2 tokenizer: %s\n", err.msg);
            exit(1);
        }
    }
    return t;
}

/* ---- helpers ---- */

static char *read_text(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)n + 1);
    if (fread(buf, 1, (size_t)n, f) != (size_t)n) n = 0;
    buf[n] = 0;
    fclose(f);
    *len = (size_t)n;
    return buf;
}

static void write_file(const char *path, const char *text) {
    FILE *f = fopen(path, "wb");
    fputs(text, f);
    fclose(f);
}

/* A fresh folder under the test's temporary directory. */
static const char *fresh_dir(const char *name) {
    static char path[4096];
    snprintf(path, sizeof path, "%s/%s", check_tmpdir(), name);
    mkdir(path, 0700);
    return path;
}

/* GPT-2's byte -> code point alphabet (encoder.py's bytes_to_unicode), written as UTF-8. */
static int put_alphabet_byte(char *out, unsigned char b) {
    int n = 0, cp = -1;
    for (int c = 0; c < 256; c++) {
        int printable = (c >= '!' && c <= '~') || (c >= 0xA1 && c <= 0xAC) || (c >= 0xAE && c <= 0xFF);
        int code = printable ? c : 256 + n;
        if (!printable) n++;
        if (c == b) cp = code;
    }
    if (cp < 0x80) {
        out[0] = (char)cp;
        return 1;
    }
    out[0] = (char)(0xC0 | (cp >> 6));
    out[1] = (char)(0x80 | (cp & 0x3F));
    return 2;
}

/* Writes DIR/vocab.json with the 256 byte tokens (ids 0..255, minus `skip_byte` when >= 0), then
 * `extra` (JSON members, with a leading comma, or ""), and DIR/merges.txt with `merges`. */
static void write_small_tokenizer(const char *dir, int skip_byte, const char *extra, const char *merges) {
    char path[4200];
    snprintf(path, sizeof path, "%s/vocab.json", dir);
    FILE *f = fopen(path, "wb");
    fputc('{', f);
    int first = 1;
    for (int b = 0; b < 256; b++) {
        if (b == skip_byte) continue;
        char u[3];
        int n = put_alphabet_byte(u, (unsigned char)b);
        fprintf(f, "%s\"%s%.*s\": %d", first ? "" : ", ", (b == '"' || b == '\\') ? "\\" : "", n, u, b);
        first = 0;
    }
    fprintf(f, "%s}\n", extra);
    fclose(f);
    snprintf(path, sizeof path, "%s/merges.txt", dir);
    write_file(path, merges);
}

static int contains(const char *hay, const char *needle) { return strstr(hay, needle) != NULL; }

/* Checks the tokenizer.h invariants on one encoding: ids in range, offsets strictly increasing
 * from 0, each token's bytes equal to its text span, the spans tiling the whole text. */
static void check_offsets_and_round_trip(const andrea_tokenizer *t, int vocab, const char *text, size_t len,
                                         const int *ids, const int *offsets, int n) {
    size_t at = 0;
    char buf[1024];
    int ok = 1;
    for (int i = 0; i < n && ok; i++) {
        int k = andrea_tokenizer_token_bytes(t, ids[i], buf, sizeof buf);
        ok = ids[i] >= 0 && ids[i] < vocab && offsets[i] == (int)at && k > 0 && at + (size_t)k <= len &&
             memcmp(buf, text + at, (size_t)k) == 0;
        CHECK_MSG(ok, "token %d (id %d, offset %d) does not match the text at byte %zu", i, ids[i], offsets[i], at);
        at += (size_t)(k > 0 ? k : 0);
    }
    CHECK_MSG(!ok || at == len, "tokens cover %zu of %zu bytes", at, len);
}

/* ---- GPT-2 BPE against the independent reference ---- */

static void test_gpt2_encodings_match_the_reference_and_map_back_to_the_text(void) {
    size_t len;
    char *json = read_text(GPT2_DIR "/reference_encodings.json", &len);
    CHECK(json != NULL);
    if (!json) return;
    cJSON *root = cJSON_Parse(json);
    cJSON *cases = cJSON_GetObjectItemCaseSensitive(root, "cases");
    CHECK(cJSON_GetArraySize(cases) >= 20);
    const cJSON *c;
    cJSON_ArrayForEach(c, cases) {
        const char *text = cJSON_GetObjectItemCaseSensitive(c, "text")->valuestring;
        const cJSON *want = cJSON_GetObjectItemCaseSensitive(c, "ids");
        int *ids, *offsets, n;
        ae_error err = {{0}};
        int rc = andrea_tokenizer_encode(gpt2(), text, strlen(text), &ids, &offsets, &n, &err);
        CHECK_MSG(rc == 0, "%s", err.msg);
        if (rc) continue;
        int same = n == cJSON_GetArraySize(want);
        for (int i = 0; same && i < n; i++) same = ids[i] == cJSON_GetArrayItem(want, i)->valueint;
        CHECK_MSG(same, "encoding of \"%s\" differs from the reference (%d tokens vs %d)", text, n,
                  cJSON_GetArraySize(want));
        check_offsets_and_round_trip(gpt2(), GPT2_VOCAB, text, strlen(text), ids, offsets, n);
        free(ids);
        free(offsets);
    }
    cJSON_Delete(root);
    free(json);
}

static void test_hello_world_is_15496_995_and_bos_is_endoftext(void) {
    int *ids, n;
    ae_error err = {{0}};
    CHECK(andrea_tokenizer_encode(gpt2(), "Hello world", 11, &ids, NULL, &n, &err) == 0);
    CHECK(n == 2 && ids[0] == 15496 && ids[1] == 995);
    free(ids);
    CHECK(andrea_tokenizer_bos(gpt2()) == 50256);
    CHECK(!strcmp(andrea_tokenizer_kind(gpt2()), "gpt2-bpe"));
    char buf[64];
    int k = andrea_tokenizer_token_bytes(gpt2(), 50256, buf, sizeof buf);
    CHECK(k == 13 && !memcmp(buf, "<|endoftext|>", 13));
    /* token_bytes gives raw bytes, not GPT-2's alphabet: " world" starts with a space, not "Ġ". */
    k = andrea_tokenizer_token_bytes(gpt2(), 995, buf, sizeof buf);
    CHECK(k == 6 && !memcmp(buf, " world", 6));
    CHECK(andrea_tokenizer_token_bytes(gpt2(), GPT2_VOCAB, buf, sizeof buf) == -1);
    CHECK(andrea_tokenizer_token_bytes(gpt2(), -1, buf, sizeof buf) == -1);
}

static void test_empty_text_has_no_tokens(void) {
    int *ids, *offsets, n = -1;
    ae_error err = {{0}};
    CHECK(andrea_tokenizer_encode(gpt2(), "", 0, &ids, &offsets, &n, &err) == 0);
    CHECK(n == 0 && ids != NULL && offsets != NULL);
    free(ids);
    free(offsets);
}

static void test_invalid_utf8_is_encoded_as_bytes_and_round_trips(void) {
    /* A stray continuation byte, an over-long encoding, a truncated 3-byte sequence at the end:
     * GPT-2 (which works on str) never sees these; andrea keeps every byte and leaves the valid
     * text around them encoded as usual. */
    const char text[] = "Hello\x80 world \xc0\xaf ok \xe4\xb8";
    size_t len = sizeof text - 1;
    int *ids, *offsets, n;
    ae_error err = {{0}};
    int rc = andrea_tokenizer_encode(gpt2(), text, len, &ids, &offsets, &n, &err);
    CHECK_MSG(rc == 0, "%s", err.msg);
    if (rc) return;
    check_offsets_and_round_trip(gpt2(), GPT2_VOCAB, text, len, ids, offsets, n);
    CHECK(n > 2 && ids[0] == 15496);
    int has_world = 0;
    for (int i = 0; i < n; i++) has_world |= ids[i] == 995;
    CHECK(has_world);
    free(ids);
    free(offsets);
}

static void test_nul_and_control_bytes_round_trip(void) {
    const char text[] = "a\0b\x01\x7f\r\n\x0b\x0c end";
    size_t len = sizeof text - 1;
    int *ids, *offsets, n;
    ae_error err = {{0}};
    CHECK(andrea_tokenizer_encode(gpt2(), text, len, &ids, &offsets, &n, &err) == 0);
    check_offsets_and_round_trip(gpt2(), GPT2_VOCAB, text, len, ids, offsets, n);
    free(ids);
    free(offsets);
}

/* One pre-token of thousands of punctuation characters or emoji: the JIT's default 32 KiB stack
 * failed the match at 1365 '=' (PCRE2_ERROR_JIT_STACKLIMIT); a grown stack, then the interpreter,
 * match any length. */
static void test_long_punctuation_and_emoji_runs_tokenize(void) {
    const size_t lens[] = {1364, 1365, 5000, 1000000}; /* the last past the grown stack */
    for (size_t k = 0; k < sizeof lens / sizeof *lens; k++)
        for (int kind = 0; kind < 3; kind++) {
            const char *unit = kind == 0 ? "=" : kind == 1 ? "#-" : "\xF0\x9F\x98\x80"; /* U+1F600 */
            const size_t u = strlen(unit), len = lens[k] * u;
            char *text = malloc(len + 1);
            for (size_t i = 0; i < lens[k]; i++) memcpy(text + i * u, unit, u);
            text[len] = 0;
            int *ids = NULL, *offsets = NULL, n = 0;
            ae_error err = {{0}};
            const int rc = andrea_tokenizer_encode(gpt2(), text, len, &ids, &offsets, &n, &err);
            CHECK_MSG(rc == 0, "%zu x '%s': %s", lens[k], kind == 2 ? "U+1F600" : unit, err.msg);
            if (rc == 0) {
                check_offsets_and_round_trip(gpt2(), GPT2_VOCAB, text, len, ids, offsets, n);
                CHECK(n > 0 && (size_t)n <= len);
            }
            free(ids);
            free(offsets);
            free(text);
        }
}

static double seconds_to_encode(const char *text, size_t len, int *n_out) {
    struct timespec a, b;
    int *ids, *offsets, n = 0;
    ae_error err = {{0}};
    clock_gettime(CLOCK_MONOTONIC, &a);
    int rc = andrea_tokenizer_encode(gpt2(), text, len, &ids, &offsets, &n, &err);
    clock_gettime(CLOCK_MONOTONIC, &b);
    CHECK_MSG(rc == 0, "%s", err.msg);
    if (!rc) {
        check_offsets_and_round_trip(gpt2(), GPT2_VOCAB, text, len, ids, offsets, n);
        free(ids);
        free(offsets);
    }
    *n_out = n;
    return (double)(b.tv_sec - a.tv_sec) + 1e-9 * (double)(b.tv_nsec - a.tv_nsec);
}

static void test_100kb_of_text_tokenizes_well_under_a_second(void) {
    /* Ordinary prose plus the two shapes that defeat a quadratic BPE: one 100 KB word and one
     * 100 KB run of spaces. */
    const size_t len = 100 * 1000;
    char *text = malloc(len + 1);
    const char *prose = "The quick brown fox, 1,234 times, jumps over the lazy dog's back (twice)!\n";
    for (size_t i = 0; i < len; i++) text[i] = prose[i % strlen(prose)];
    int n;
    double t_prose = seconds_to_encode(text, len, &n);
    fprintf(stderr, "  100 KB prose: %d tokens in %.3f s\n", n, t_prose);
    CHECK(t_prose < 1.0);
    memset(text, 'a', len);
    double t_word = seconds_to_encode(text, len, &n);
    fprintf(stderr, "  100 KB single word: %d tokens in %.3f s\n", n, t_word);
    CHECK(t_word < 1.0);
    memset(text, ' ', len);
    double t_space = seconds_to_encode(text, len, &n);
    fprintf(stderr, "  100 KB of spaces: %d tokens in %.3f s\n", n, t_space);
    CHECK(t_space < 1.0);
    free(text);
}

/* ---- BPE semantics on a tiny hand-made vocabulary ---- */

static void test_bpe_merges_every_occurrence_of_a_pair_before_pairs_it_created(void) {
    /* Merges: rank 0 "aa a", rank 1 "a a". For "aaaa", encoder.py's round for (a, a) merges both
     * occurrences, giving [aa, aa]; a merge-one-at-a-time BPE would instead take the rank-0 pair
     * (aa, a) created by the first merge and give [aaa, a]. */
    const char *dir = fresh_dir("rounds");
    write_small_tokenizer(dir, -1, ", \"aa\": 256, \"aaa\": 257", "#version: 0.2\naa a\na a\n");
    ae_error err = {{0}};
    andrea_tokenizer *t = andrea_tokenizer_open(300, dir, NULL, &err);
    CHECK_MSG(t != NULL, "%s", err.msg);
    if (!t) return;
    int *ids, n;
    CHECK(andrea_tokenizer_encode(t, "aaaa", 4, &ids, NULL, &n, &err) == 0);
    CHECK_MSG(n == 2 && ids[0] == 256 && ids[1] == 256, "got %d tokens, first %d", n, ids[0]);
    free(ids);
    CHECK(andrea_tokenizer_encode(t, "aaa", 3, &ids, NULL, &n, &err) == 0);
    CHECK(n == 1 && ids[0] == 257); /* (a, a) then (aa, a) */
    free(ids);
    CHECK(andrea_tokenizer_bos(t) == -1); /* no <|endoftext|> in this vocabulary */
    andrea_tokenizer_free(t);
}

static void test_tokenizer_dir_overrides_the_model_dir(void) {
    ae_error err = {{0}};
    andrea_tokenizer *t = andrea_tokenizer_open(GPT2_VOCAB, "/nonexistent", GPT2_DIR, &err);
    CHECK_MSG(t != NULL, "%s", err.msg);
    andrea_tokenizer_free(t);
}

/* ---- byte-level ---- */

static void test_byte_level_256_maps_bytes_to_ids_without_bos(void) {
    ae_error err = {{0}};
    andrea_tokenizer *t = andrea_tokenizer_open(256, "/nonexistent", NULL, &err);
    CHECK(t != NULL && !strcmp(andrea_tokenizer_kind(t), "byte"));
    CHECK(andrea_tokenizer_bos(t) == -1);
    const char text[] = "h\xc3\xa9\xff";
    int *ids, *offsets, n;
    CHECK(andrea_tokenizer_encode(t, text, 4, &ids, &offsets, &n, &err) == 0);
    CHECK(n == 4 && ids[0] == 'h' && ids[1] == 0xc3 && ids[2] == 0xa9 && ids[3] == 0xff);
    CHECK(offsets[0] == 0 && offsets[3] == 3);
    check_offsets_and_round_trip(t, 256, text, 4, ids, offsets, n);
    char buf[4];
    CHECK(andrea_tokenizer_token_bytes(t, 256, buf, sizeof buf) == -1);
    free(ids);
    free(offsets);
    andrea_tokenizer_free(t);
}

static void test_byte_level_257_has_bos_256_with_no_bytes(void) {
    ae_error err = {{0}};
    andrea_tokenizer *t = andrea_tokenizer_open(257, "/nonexistent", NULL, &err);
    CHECK(t != NULL && andrea_tokenizer_bos(t) == 256);
    char buf[4];
    CHECK(andrea_tokenizer_token_bytes(t, 256, buf, sizeof buf) == 0);
    CHECK(andrea_tokenizer_token_bytes(t, 257, buf, sizeof buf) == -1);
    CHECK(andrea_tokenizer_token_bytes(t, 65, buf, sizeof buf) == 1 && buf[0] == 'A');
    int *ids, n;
    CHECK(andrea_tokenizer_encode(t, "ab", 2, &ids, NULL, &n, &err) == 0);
    CHECK(n == 2 && ids[0] == 'a'); /* encode never prepends BOS: callers do */
    free(ids);
    andrea_tokenizer_free(t);
}

/* ---- bad tokenizer files: one failure per test ---- */

static void expect_open_error(int vocab_size, const char *dir, const char *want1, const char *want2) {
    ae_error err = {{0}};
    andrea_tokenizer *t = andrea_tokenizer_open(vocab_size, dir, NULL, &err);
    CHECK(t == NULL);
    andrea_tokenizer_free(t);
    CHECK_MSG(contains(err.msg, want1) && contains(err.msg, want2), "message was: %s", err.msg);
}

static void test_missing_vocab_files_name_the_folder(void) {
    const char *dir = fresh_dir("empty");
    expect_open_error(1000, dir, dir, "vocab.json and merges.txt missing");
}

static void test_missing_merges_is_named(void) {
    const char *dir = fresh_dir("no_merges");
    write_small_tokenizer(dir, -1, "", "");
    char path[4200];
    snprintf(path, sizeof path, "%s/merges.txt", dir);
    remove(path);
    expect_open_error(1000, dir, dir, "(merges.txt missing)");
}

static void test_malformed_vocab_json_is_refused_with_its_line(void) {
    const char *dir = fresh_dir("bad_json");
    write_small_tokenizer(dir, -1, "", "");
    char path[4200];
    snprintf(path, sizeof path, "%s/vocab.json", dir);
    write_file(path, "{\"a\": 0,\n \"b\": 1,\n \"c\" 2}\n");
    char want[4300];
    snprintf(want, sizeof want, "%s:3: not valid JSON", path);
    expect_open_error(1000, dir, want, "");
}

static void test_vocab_that_is_not_an_object_is_refused(void) {
    const char *dir = fresh_dir("json_array");
    write_small_tokenizer(dir, -1, "", "");
    char path[4200];
    snprintf(path, sizeof path, "%s/vocab.json", dir);
    write_file(path, "[1, 2, 3]");
    expect_open_error(1000, dir, "vocab.json: not a JSON object", "");
}

static void test_vocab_id_out_of_range_is_refused(void) {
    const char *dir = fresh_dir("id_range");
    write_small_tokenizer(dir, -1, ", \"ab\": 300", "");
    expect_open_error(300, dir, "token \"ab\" has id 300, outside 0..299", "vocab_size is 300");
}

static void test_gpt2_vocab_is_refused_for_a_smaller_model(void) {
    expect_open_error(50000, GPT2_DIR, "vocab.json: 50257 tokens, more than the model's vocab_size 50000", "");
}

static void test_negative_or_fractional_ids_are_refused(void) {
    const char *dir = fresh_dir("id_negative");
    write_small_tokenizer(dir, -1, ", \"ab\": -1", "");
    expect_open_error(300, dir, "has id -1, outside", "");
    dir = fresh_dir("id_fraction");
    write_small_tokenizer(dir, -1, ", \"ab\": 256.5", "");
    expect_open_error(300, dir, "has id 256.5, which is not an integer", "");
    dir = fresh_dir("id_float_whole"); /* a float to Python's json, refused by Hugging Face's tokenizers */
    write_small_tokenizer(dir, -1, ", \"ab\": 256.0", "");
    expect_open_error(300, dir, "has id 256, which is not an integer written as digits", "");
    dir = fresh_dir("id_string");
    write_small_tokenizer(dir, -1, ", \"ab\": \"256\"", "");
    expect_open_error(300, dir, "token \"ab\" has a value that is not an id number", "");
}

static void test_duplicate_id_is_refused(void) {
    const char *dir = fresh_dir("dup_id");
    write_small_tokenizer(dir, -1, ", \"ab\": 256, \"cd\": 256", "");
    expect_open_error(300, dir, "id 256 is given to two tokens, \"ab\" and \"cd\"", "");
}

static void test_duplicate_token_is_refused(void) {
    const char *dir = fresh_dir("dup_token");
    write_small_tokenizer(dir, -1, ", \"ab\": 256, \"ab\": 257", "");
    expect_open_error(300, dir, "token \"ab\" is listed twice", "");
}

static void test_token_outside_the_byte_alphabet_is_refused(void) {
    /* A literal space is not in GPT-2's alphabet (space is written U+0120). */
    const char *dir = fresh_dir("alphabet");
    write_small_tokenizer(dir, -1, ", \"a b\": 256", "");
    expect_open_error(300, dir, "token \"a b\" (id 256) has character U+0020", "outside GPT-2's byte alphabet");
}

static void test_vocab_lacking_a_byte_token_is_refused(void) {
    const char *dir = fresh_dir("no_byte");
    write_small_tokenizer(dir, 'q', "", "");
    expect_open_error(300, dir, "lacks the token for byte 0x71", "");
}

static void test_malformed_merges_line_reports_its_line_number(void) {
    const char *dir = fresh_dir("bad_merge");
    write_small_tokenizer(dir, -1, ", \"ab\": 256", "#version: 0.2\na b\na b c\n");
    expect_open_error(300, dir, "merges.txt:3: \"a b c\" is not two tokens separated by one space", "");
}

static void test_merges_line_with_one_token_reports_its_line_number(void) {
    const char *dir = fresh_dir("one_token");
    write_small_tokenizer(dir, -1, ", \"ab\": 256", "a b\nab\n"); /* no #version line: line 1 is a merge */
    expect_open_error(300, dir, "merges.txt:2: \"ab\" is not two tokens", "");
}

static void test_merge_of_a_token_not_in_the_vocab_reports_its_line(void) {
    const char *dir = fresh_dir("merge_unknown");
    write_small_tokenizer(dir, -1, ", \"ab\": 256", "#version: 0.2\na b\nab c\n");
    expect_open_error(300, dir, "merges.txt:3: the merged token \"abc\" is not in vocab.json", "");
    dir = fresh_dir("merge_unknown_half");
    write_small_tokenizer(dir, -1, ", \"ab\": 256", "#version: 0.2\nxy b\n");
    expect_open_error(300, dir, "merges.txt:2: token \"xy\" is not in vocab.json", "");
}

static void test_merge_outside_the_alphabet_reports_its_line(void) {
    const char *dir = fresh_dir("merge_alphabet");
    write_small_tokenizer(dir, -1, ", \"ab\": 256", "#version: 0.2\na \xe2\x82\xac\n"); /* U+20AC */
    expect_open_error(300, dir, "merges.txt:2: token", "U+20AC");
}

static void test_repeated_merge_is_refused(void) {
    const char *dir = fresh_dir("merge_twice");
    write_small_tokenizer(dir, -1, ", \"ab\": 256", "#version: 0.2\na b\na b\n");
    expect_open_error(300, dir, "merges.txt: the merge \"a\" + \"b\" (rank 0) is listed twice", "");
}

static void test_crlf_merges_are_read(void) {
    const char *dir = fresh_dir("crlf");
    write_small_tokenizer(dir, -1, ", \"ab\": 256", "#version: 0.2\r\na b\r\n");
    ae_error err = {{0}};
    andrea_tokenizer *t = andrea_tokenizer_open(300, dir, NULL, &err);
    CHECK_MSG(t != NULL, "%s", err.msg);
    if (!t) return;
    int *ids, n;
    CHECK(andrea_tokenizer_encode(t, "ab", 2, &ids, NULL, &n, &err) == 0 && n == 1 && ids[0] == 256);
    free(ids);
    andrea_tokenizer_free(t);
}

int main(void) {
    RUN(test_gpt2_encodings_match_the_reference_and_map_back_to_the_text);
    RUN(test_hello_world_is_15496_995_and_bos_is_endoftext);
    RUN(test_empty_text_has_no_tokens);
    RUN(test_long_punctuation_and_emoji_runs_tokenize);
    RUN(test_invalid_utf8_is_encoded_as_bytes_and_round_trips);
    RUN(test_nul_and_control_bytes_round_trip);
    RUN(test_100kb_of_text_tokenizes_well_under_a_second);
    RUN(test_bpe_merges_every_occurrence_of_a_pair_before_pairs_it_created);
    RUN(test_tokenizer_dir_overrides_the_model_dir);
    RUN(test_byte_level_256_maps_bytes_to_ids_without_bos);
    RUN(test_byte_level_257_has_bos_256_with_no_bytes);
    RUN(test_missing_vocab_files_name_the_folder);
    RUN(test_missing_merges_is_named);
    RUN(test_malformed_vocab_json_is_refused_with_its_line);
    RUN(test_vocab_that_is_not_an_object_is_refused);
    RUN(test_vocab_id_out_of_range_is_refused);
    RUN(test_gpt2_vocab_is_refused_for_a_smaller_model);
    RUN(test_negative_or_fractional_ids_are_refused);
    RUN(test_duplicate_id_is_refused);
    RUN(test_duplicate_token_is_refused);
    RUN(test_token_outside_the_byte_alphabet_is_refused);
    RUN(test_vocab_lacking_a_byte_token_is_refused);
    RUN(test_malformed_merges_line_reports_its_line_number);
    RUN(test_merges_line_with_one_token_reports_its_line_number);
    RUN(test_merge_of_a_token_not_in_the_vocab_reports_its_line);
    RUN(test_merge_outside_the_alphabet_reports_its_line);
    RUN(test_repeated_merge_is_refused);
    RUN(test_crlf_merges_are_read);
    andrea_tokenizer_free(gpt2());
    return check_summary("tokenizer");
}
