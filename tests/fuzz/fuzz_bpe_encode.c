/* fuzz_bpe_encode — arbitrary bytes (valid or not UTF-8) through the real GPT-2 tokenizer. */
#include <stdio.h>
#include <stdlib.h>

#include "../../tokenizer/tokenizer.h"
#include "fuzz_util.h"

static andrea_tokenizer *tok;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    ae_error err;
    if (!tok) {
        tok = andrea_tokenizer_open(50257, ANDREA_SOURCE_DIR "/tests/data/gpt2", NULL, &err);
        if (!tok) {
            fprintf(stderr, "fuzz_bpe_encode: %s\n", err.msg);
            abort();
        }
    }
    int *ids = NULL, *offs = NULL, n = 0;
    if (andrea_tokenizer_encode(tok, (const char *)data, size, &ids, &offs, &n, &err) == 0) {
        /* offsets must stay inside the input and increase */
        for (int i = 0; i < n; i++) {
            if (offs[i] < 0 || (size_t)offs[i] > size || (i && offs[i] < offs[i - 1])) abort();
        }
        free(ids);
        free(offs);
    }
    return 0;
}
