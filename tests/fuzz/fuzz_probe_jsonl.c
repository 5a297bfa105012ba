/* fuzz_probe_jsonl — user probe files (JSON Lines) for a byte-level model. */
#include <stdio.h>
#include <stdlib.h>

#include "../../probes/probe.h"
#include "fuzz_util.h"

static andrea_tokenizer *tok;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    ae_error err;
    if (!tok && !(tok = andrea_tokenizer_open(257, fuzz_dir(), NULL, &err))) return 0;
    const char *path = fuzz_write("probes.jsonl", data, size);
    probe_suite *suites = NULL;
    int n = 0;
    if (andrea_probe_file_load(path, tok, 257, 128, &suites, &n, &err) == 0) {
        for (int i = 0; i < n; i++) andrea_probe_suite_free(&suites[i]);
        free(suites);
    } else {
        fuzz_check_error("probe_file_load", &err);
    }
    return 0;
}
