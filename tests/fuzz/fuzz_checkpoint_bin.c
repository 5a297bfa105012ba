/* fuzz_checkpoint_bin — ANDREA .bin header and body: load must succeed or fail cleanly. */
#include "../../engine/model.h"
#include "fuzz_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    const char *path = fuzz_write("model.bin", data, size);
    andrea_model m = {0};
    ae_error err;
    if (andrea_model_load(&m, path, &err) == 0) andrea_model_free(&m);
    return 0;
}
