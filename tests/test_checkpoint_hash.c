/* test_checkpoint_hash — the checkpoint's sha256 started on a thread when the load starts
 * (engine/checkpoint_hash.h) is the plain sha256 of the weights file, for a .bin, a safetensors
 * folder and a .safetensors path, asked once or twice (cached) or never (the model frees at
 * once); a hash told to stop gives up with one line; a missing file is one line too. */
#include <string.h>

#include "check.h"
#include "checkpoint_fixtures.h"
#include "common/sha256.h"
#include "engine/checkpoint.h"
#include "engine/checkpoint_hash.h"
#include "engine/model.h"
#include "tests/support/model_random.h"

static void same_hash(const char *load_path, const char *file) {
    andrea_model m;
    ae_error err = {{0}};
    char want[65] = "", got[65] = "", again[65] = "";
    CHECK_MSG(andrea_sha256_file(file, want, &err) == 0, "%s", err.msg);
    CHECK_MSG(andrea_model_load(&m, load_path, &err) == 0, "%s", err.msg);
    CHECK(m.sha_job != NULL);
    CHECK_MSG(andrea_checkpoint_sha256(&m, got, &err) == 0, "%s", err.msg);
    CHECK_MSG(strcmp(got, want) == 0, "%s: %s, want %s", load_path, got, want);
    CHECK(andrea_checkpoint_sha256(&m, again, &err) == 0 && strcmp(again, want) == 0);
    andrea_model_free(&m);
    CHECK(andrea_model_load(&m, load_path, &err) == 0); /* never asked: freed at once */
    andrea_model_free(&m);
}

static void test_hash_from_the_load_equals_the_file_sha256(void) {
    andrea_config cfg = {.max_seq_len = 16, .vocab_size = 300, .padded_vocab_size = 320, .n_layer = 2, .n_head = 4,
                         .d_model = 64};
    andrea_model m;
    ae_error err = {{0}};
    CHECK(andrea_model_init_random(&m, &cfg, 5, &err) == 0);
    const char *bin = fx_path(check_tmpdir(), "hash.bin"), *dir = fx_path(check_tmpdir(), "hash-st");
    CHECK_MSG(andrea_model_save_bin(&m, bin, 3, &err) == 0, "%s", err.msg);
    CHECK_MSG(andrea_model_save_safetensors(&m, dir, "F32", 1, &err) == 0, "%s", err.msg);
    andrea_model_free(&m);
    same_hash(bin, bin);
    const char *st = fx_path(dir, "model.safetensors");
    same_hash(dir, st);
    same_hash(st, st);
}

static void test_a_stopped_hash_gives_up_with_one_line(void) {
    const char *bin = fx_path(check_tmpdir(), "stop.bin");
    andrea_config cfg = {.max_seq_len = 16, .vocab_size = 300, .padded_vocab_size = 320, .n_layer = 1, .n_head = 2,
                         .d_model = 32};
    andrea_model m;
    ae_error err = {{0}};
    CHECK(andrea_model_init_random(&m, &cfg, 5, &err) == 0 && andrea_model_save_bin(&m, bin, 3, &err) == 0);
    andrea_model_free(&m);
    int stop = 1;
    char hex[65];
    CHECK(andrea_sha256_file_until(bin, &stop, hex, &err) == -1);
    CHECK_MSG(strstr(err.msg, "stop.bin: hashing stopped") != NULL, "%s", err.msg);
    stop = 0;
    char want[65];
    CHECK(andrea_sha256_file_until(bin, &stop, hex, &err) == 0 && andrea_sha256_file(bin, want, &err) == 0);
    CHECK(strcmp(hex, want) == 0);
}

static void test_a_job_on_a_missing_file_fails_with_one_line(void) {
    andrea_sha_job *j = andrea_sha_job_start(fx_path(check_tmpdir(), "no-such.bin"));
    ae_error err = {{0}};
    char hex[65];
    CHECK(j != NULL);
    CHECK(andrea_sha_job_result(j, hex, &err) == -1);
    CHECK_MSG(strstr(err.msg, "no-such.bin: cannot open") != NULL && !strchr(err.msg, '\n'), "%s", err.msg);
    andrea_sha_job_free(j);
    andrea_sha_job_free(NULL);
}

int main(void) {
    RUN(test_hash_from_the_load_equals_the_file_sha256);
    RUN(test_a_stopped_hash_gives_up_with_one_line);
    RUN(test_a_job_on_a_missing_file_fails_with_one_line);
    return check_summary("test_checkpoint_hash");
}
