/* fuzz_safetensors — a safetensors file (header JSON + data) beside a config.json; the input is
 * "config.json\n--\nmodel.safetensors" so both halves mutate. */
#include <stdio.h>

#include "../../engine/model.h"
#include "fuzz_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    const uint8_t *a, *b;
    size_t na, nb;
    fuzz_split(data, size, &a, &na, &b, &nb);
    fuzz_write("config.json", a, na);
    fuzz_write("model.safetensors", b, nb);
    andrea_model m = {0};
    ae_error err;
    if (andrea_model_load(&m, fuzz_dir(), &err) == 0) andrea_model_free(&m);
    return 0;
}
