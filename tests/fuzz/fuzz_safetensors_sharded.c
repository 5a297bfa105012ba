/* fuzz_safetensors_sharded — a sharded safetensors checkpoint: the input is
 * "config.json\n--\nmodel.safetensors.index.json\n--\nshard 1\n--\nshard 2", written as
 * config.json, the index and model-00001-of-00002.safetensors / model-00002-of-00002.safetensors
 * in one folder, so the index (names, weight_map, total_size) and both shards mutate. The load must
 * succeed or fail cleanly with one line; a loaded model's identity must be computable the same
 * way by path (andrea_checkpoint_sha256_path) as the load's hash thread computed it. */
#include <stdlib.h>
#include <string.h>

#include "../../engine/checkpoint.h"
#include "../../engine/model.h"
#include "fuzz_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    const uint8_t *part[4], *rest = data;
    size_t len[4], n_rest = size;
    for (int i = 0; i < 3; i++) fuzz_split(rest, n_rest, &part[i], &len[i], &rest, &n_rest);
    part[3] = rest;
    len[3] = n_rest;
    fuzz_write("config.json", part[0], len[0]);
    fuzz_write(ANDREA_SHARD_INDEX_NAME, part[1], len[1]);
    fuzz_write("model-00001-of-00002.safetensors", part[2], len[2]);
    fuzz_write("model-00002-of-00002.safetensors", part[3], len[3]);
    andrea_model m = {0};
    ae_error err;
    if (andrea_model_load(&m, fuzz_dir(), &err) == 0) {
        char a[65], b[65];
        if (andrea_checkpoint_sha256(&m, a, &err) || andrea_checkpoint_sha256_path(fuzz_dir(), b, &err) ||
            strcmp(a, b) != 0)
            abort();
        (void)andrea_model_check_finite(&m, &err);
        andrea_model_free(&m);
    } else {
        fuzz_check_error("load", &err);
    }
    return 0;
}
