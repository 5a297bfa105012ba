/* fuzz_safetensors — a safetensors file (header JSON + data) beside a config.json; the input is
 * "config.json\n--\nmodel.safetensors" so both halves mutate. The config-only peek and the full
 * load must each succeed or fail cleanly; a loaded model's finiteness check runs over it all. */
#include <stdio.h>
#include <stdlib.h>

#include "../../engine/model.h"
#include "fuzz_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    const uint8_t *a, *b;
    size_t na, nb;
    fuzz_split(data, size, &a, &na, &b, &nb);
    fuzz_write("config.json", a, na);
    fuzz_write("model.safetensors", b, nb);
    andrea_config peek;
    char dir[512];
    ae_error err;
    int peek_ok = andrea_checkpoint_peek_config(fuzz_dir(), &peek, dir, sizeof dir, &err) == 0;
    if (!peek_ok) fuzz_check_error("peek", &err);
    andrea_model m = {0};
    if (andrea_model_load(&m, fuzz_dir(), &err) == 0) {
        /* the peek reads config.json only: a model that loads has a config that peeks */
        if (!peek_ok || peek.n_layer != m.cfg.n_layer || peek.d_model != m.cfg.d_model) abort();
        (void)andrea_model_check_finite(&m, &err);
        andrea_model_free(&m);
    } else {
        fuzz_check_error("load", &err);
    }
    return 0;
}
