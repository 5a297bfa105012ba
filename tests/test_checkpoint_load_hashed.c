/* test_checkpoint_load_hashed.c — andrea_model_load_hashed (engine/checkpoint_hashed.c): the
 * checkpoint's sha256 computed on a thread beside the load equals the sha256 of the loaded
 * model's weights file, for a .bin and a safetensors folder; the loaded weights equal a plain
 * load's; a missing or damaged checkpoint fails with the load's one-line message and leaves the
 * model zeroed. */
#include <stdio.h>
#include <string.h>

#include "../engine/checkpoint.h"
#include "support/model_random.h"
#include "check.h"

static andrea_model rnd;

static void same_as_plain_load(const char *path) {
    ae_error err;
    andrea_model a, b;
    char hex[65] = "", want[65] = "";
    double t = -1;
    CHECK_MSG(andrea_model_load_hashed(&a, path, hex, &t, &err) == 0, "%s", err.msg);
    CHECK_MSG(andrea_model_load(&b, path, &err) == 0, "%s", err.msg);
    CHECK_MSG(andrea_checkpoint_sha256(&b, want, &err) == 0, "%s", err.msg);
    CHECK(strlen(hex) == 64 && strcmp(hex, want) == 0);
    CHECK(t >= 0);
    CHECK(a.n_floats == b.n_floats && a.n_floats > 0 && !memcmp(a.memory, b.memory, a.n_floats * sizeof(float)));
    CHECK(!strcmp(a.path, b.path) && !strcmp(a.dir, b.dir));
    andrea_model_free(&a);
    andrea_model_free(&b);
}

static void test_hash_beside_the_load_equals_the_hash_after_it(void) {
    ae_error err;
    char bin[4096], dir[4096];
    snprintf(bin, sizeof bin, "%s/m.bin", check_tmpdir());
    snprintf(dir, sizeof dir, "%s/hf", check_tmpdir());
    CHECK_MSG(andrea_model_save_bin(&rnd, bin, 3, &err) == 0, "%s", err.msg);
    CHECK_MSG(andrea_model_save_safetensors(&rnd, dir, "F32", 1, &err) == 0, "%s", err.msg);
    same_as_plain_load(bin);
    same_as_plain_load(dir);
}

static void test_missing_or_truncated_checkpoint_fails_with_the_loads_message(void) {
    ae_error err, plain;
    andrea_model m;
    char hex[65] = "", path[4096];
    snprintf(path, sizeof path, "%s/none.bin", check_tmpdir());
    CHECK(andrea_model_load_hashed(&m, path, hex, NULL, &err) != 0);
    CHECK(andrea_model_load(&m, path, &plain) != 0);
    CHECK_MSG(!strcmp(err.msg, plain.msg) && !strchr(err.msg, '\n'), "%s", err.msg);
    CHECK(m.memory == NULL && hex[0] == 0);
    /* a truncated .bin: the loader's size check speaks, the hash of the short file is dropped */
    snprintf(path, sizeof path, "%s/short.bin", check_tmpdir());
    FILE *f = fopen(path, "wb");
    int header[256] = {20240326, 3, 64, 257, 2, 4, 64, 257};
    fwrite(header, sizeof header, 1, f);
    fclose(f);
    CHECK(andrea_model_load_hashed(&m, path, hex, NULL, &err) != 0);
    CHECK(andrea_model_load(&m, path, &plain) != 0);
    CHECK_MSG(!strcmp(err.msg, plain.msg) && strstr(err.msg, path), "%s", err.msg);
    CHECK(m.memory == NULL && hex[0] == 0);
}

int main(void) {
    ae_error err;
    andrea_config c = {64, 257, 257, 2, 4, 64, 16};
    if (andrea_model_init_random(&rnd, &c, 7, &err)) {
        fprintf(stderr, "%s\n", err.msg);
        return 1;
    }
    RUN(test_hash_beside_the_load_equals_the_hash_after_it);
    RUN(test_missing_or_truncated_checkpoint_fails_with_the_loads_message);
    andrea_model_free(&rnd);
    return check_summary("checkpoint_load_hashed");
}
