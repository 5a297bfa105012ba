/* fuzz_checkpoint_bin — ANDREA .bin header and body: the header-only peek and the full load must
 * each succeed or fail cleanly, agree on the config, and a loaded model's finiteness check must
 * run over every parameter without fault. */
#include <stdlib.h>
#include <string.h>

#include "../../engine/model.h"
#include "fuzz_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    const char *path = fuzz_write("model.bin", data, size);
    andrea_config peek;
    char dir[512];
    ae_error err;
    int peek_ok = andrea_checkpoint_peek_config(path, &peek, dir, sizeof dir, &err) == 0;
    if (!peek_ok) fuzz_check_error("peek", &err);
    andrea_model m = {0};
    if (andrea_model_load(&m, path, &err) == 0) {
        /* whatever loads fully must also pass the header-only peek with the same shape */
        if (!peek_ok || peek.n_layer != m.cfg.n_layer || peek.d_model != m.cfg.d_model ||
            peek.vocab_size != m.cfg.vocab_size)
            abort();
        (void)andrea_model_check_finite(&m, &err);
        andrea_model_free(&m);
    } else {
        fuzz_check_error("load", &err);
    }
    return 0;
}
