/* test_checkpoint_bin_errors — every way an ANDREA .bin can be wrong is refused with one line
 * naming the file and the problem, the model left empty. Each test spoils a freshly written
 * good file in exactly one way. */
#include <math.h>
#include <stdint.h>

#include "../engine/checkpoint.h"
#include "check.h"
#include "checkpoint_fixtures.h"

/* Writes a good tiny v3 file and returns its bytes (caller frees) so a test can spoil them. */
static unsigned char *good_bytes(const char *name, size_t *len, const char **path) {
    andrea_config cfg = fx_tiny_config();
    *path = fx_path(check_tmpdir(), name);
    andrea_model m = fx_make_bin(*path, &cfg, 3);
    andrea_model_free(&m);
    return fx_read(*path, len);
}

static void set_header(unsigned char *buf, int slot, int32_t v) { memcpy(buf + 4 * slot, &v, 4); }

/* Loads path expecting failure; checks the one-line message names the file and holds `want`. */
static void expect_refusal(const char *path, const char *want, const char *want2) {
    andrea_model m;
    ae_error err = {{0}};
    int rc = andrea_model_load(&m, path, &err);
    CHECK(rc == -1);
    CHECK_MSG(strncmp(err.msg, path, strlen(path)) == 0, "message does not start with the file: %s", err.msg);
    CHECK_MSG(fx_contains(err.msg, want), "want \"%s\" in: %s", want, err.msg);
    if (want2) CHECK_MSG(fx_contains(err.msg, want2), "want \"%s\" in: %s", want2, err.msg);
    CHECK(strchr(err.msg, '\n') == NULL);
    CHECK(m.memory == NULL && m.n_floats == 0);
}

static void spoil_header(const char *name, int slot, int32_t v, const char *want, const char *want2) {
    size_t len;
    const char *path;
    unsigned char *buf = good_bytes(name, &len, &path);
    set_header(buf, slot, v);
    fx_write(path, buf, len);
    expect_refusal(path, want, want2);
    free(buf);
}

static void test_wrong_magic_is_refused(void) { spoil_header("magic.bin", 0, 12345, "bad magic 12345", NULL); }

static void test_llmc_state_file_is_refused_with_a_pointer_to_the_model_file(void) {
    spoil_header("state.bin", 0, ANDREA_LLMC_STATE_MAGIC, "training-state", NULL);
}

static void test_wrong_version_is_refused(void) { spoil_header("version.bin", 1, 4, "unsupported version 4", NULL); }

static void test_truncated_checkpoint_is_refused_with_its_size(void) {
    size_t len;
    const char *path;
    unsigned char *buf = good_bytes("trunc.bin", &len, &path);
    fx_write(path, buf, len - 10);
    char want[64], have[64];
    snprintf(want, sizeof want, "needs %zu bytes", len);
    snprintf(have, sizeof have, "file has %zu", len - 10);
    expect_refusal(path, "truncated", want);
    expect_refusal(path, have, NULL);
    free(buf);
}

static void test_file_shorter_than_header_is_refused(void) {
    size_t len;
    const char *path;
    unsigned char *buf = good_bytes("short.bin", &len, &path);
    fx_write(path, buf, 100);
    expect_refusal(path, "100 bytes", "header");
    free(buf);
}

static void test_empty_file_is_refused(void) {
    const char *path = fx_path(check_tmpdir(), "empty.bin");
    fx_write(path, "", 0);
    expect_refusal(path, "truncated: 0 bytes", NULL);
}

static void test_trailing_garbage_is_refused(void) {
    size_t len;
    const char *path;
    unsigned char *buf = good_bytes("trailing.bin", &len, &path);
    unsigned char *big = malloc(len + 4);
    memcpy(big, buf, len);
    memcpy(big + len, "junk", 4);
    fx_write(path, big, len + 4);
    char have[64];
    snprintf(have, sizeof have, "file has %zu", len + 4);
    expect_refusal(path, "trailing bytes", have);
    free(big);
    free(buf);
}

/* d_model 16 instead of 8: a valid config, but the file holds an 8-wide model */
static void test_header_sizes_that_disagree_with_length_are_refused(void) {
    spoil_header("disagree.bin", 6, 16, "C=16", "needs");
}

static void test_d_model_not_divisible_by_n_head_is_refused(void) {
    spoil_header("divisible.bin", 5, 3, "d_model 8 is not divisible by n_head 3", NULL);
}

static void test_zero_layers_is_refused(void) { spoil_header("zero-l.bin", 4, 0, "n_layer 0 out of range", NULL); }
static void test_zero_vocab_is_refused(void) { spoil_header("zero-v.bin", 3, 0, "vocab_size 0 out of range", NULL); }
static void test_zero_seq_len_is_refused(void) { spoil_header("zero-t.bin", 2, 0, "max_seq_len 0 out of range", NULL); }
static void test_negative_d_model_is_refused(void) { spoil_header("neg-c.bin", 6, -8, "d_model -8 out of range", NULL); }

static void test_absurd_layer_count_is_refused_before_allocating(void) {
    spoil_header("absurd-l.bin", 4, 1 << 30, "n_layer 1073741824 out of range", NULL);
}

/* Every size at its limit: about 220 TB of fp32 parameters. The length check must refuse it
 * (an allocation attempt would say "cannot allocate" instead, or take the machine down). */
static void test_header_claiming_terabytes_is_refused_by_length_not_by_allocation(void) {
    size_t len;
    const char *path;
    unsigned char *buf = good_bytes("huge.bin", &len, &path);
    set_header(buf, 2, 1 << 20);
    set_header(buf, 3, 1 << 24);
    set_header(buf, 4, 1024);
    set_header(buf, 5, 1024);
    set_header(buf, 6, 65536);
    set_header(buf, 7, 1 << 24);
    fx_write(path, buf, len);
    expect_refusal(path, "truncated", "needs");
    free(buf);
}

static void test_padded_vocab_smaller_than_vocab_is_refused(void) {
    spoil_header("vp-small.bin", 7, 12, "padded_vocab_size 12", NULL);
}

static void poison(const char *name, size_t float_index, float v, const char *want, const char *want2) {
    size_t len;
    const char *path;
    unsigned char *buf = good_bytes(name, &len, &path);
    memcpy(buf + 1024 + 4 * float_index, &v, 4);
    fx_write(path, buf, len);
    expect_refusal(path, want, want2);
    free(buf);
}

/* tiny config: wte 16*8 = 128 floats, wpe 10*8 = 80, ln1w 16, ln1b 16, then qkvw [2, 24, 8] */
static void test_nan_weight_is_refused_naming_the_tensor(void) {
    poison("nan.bin", 128 + 80 + 16 + 16 + 192 + 5, NAN, "tensor qkvw, layer 1", "NaN");
}

static void test_inf_weight_is_refused_naming_the_tensor(void) {
    poison("inf.bin", 128 + 3, INFINITY, "tensor wpe", "Inf");
}

static void test_missing_file_is_refused(void) {
    expect_refusal(fx_path(check_tmpdir(), "no-such.bin"), "cannot open", NULL);
}

int main(void) {
    RUN(test_wrong_magic_is_refused);
    RUN(test_llmc_state_file_is_refused_with_a_pointer_to_the_model_file);
    RUN(test_wrong_version_is_refused);
    RUN(test_truncated_checkpoint_is_refused_with_its_size);
    RUN(test_file_shorter_than_header_is_refused);
    RUN(test_empty_file_is_refused);
    RUN(test_trailing_garbage_is_refused);
    RUN(test_header_sizes_that_disagree_with_length_are_refused);
    RUN(test_d_model_not_divisible_by_n_head_is_refused);
    RUN(test_zero_layers_is_refused);
    RUN(test_zero_vocab_is_refused);
    RUN(test_zero_seq_len_is_refused);
    RUN(test_negative_d_model_is_refused);
    RUN(test_absurd_layer_count_is_refused_before_allocating);
    RUN(test_header_claiming_terabytes_is_refused_by_length_not_by_allocation);
    RUN(test_padded_vocab_smaller_than_vocab_is_refused);
    RUN(test_nan_weight_is_refused_naming_the_tensor);
    RUN(test_inf_weight_is_refused_naming_the_tensor);
    RUN(test_missing_file_is_refused);
    return check_summary("test_checkpoint_bin_errors");
}
