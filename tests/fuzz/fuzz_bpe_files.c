/* fuzz_bpe_files — vocab.json + merges.txt ("vocab\n--\nmerges"), then an encode of fixed text. */
#include <stdlib.h>
#include <string.h>

#include "../../tokenizer/tokenizer.h"
#include "fuzz_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    const uint8_t *a, *b;
    size_t na, nb;
    fuzz_split(data, size, &a, &na, &b, &nb);
    fuzz_write("vocab.json", a, na);
    fuzz_write("merges.txt", b, nb);
    ae_error err;
    andrea_tokenizer *t = andrea_tokenizer_open(50257, fuzz_dir(), NULL, &err);
    if (!t) {
        fuzz_check_error("tokenizer_open", &err);
        return 0;
    }
    static const char text[] = "Hello world, it's (a) test: 12345 \xc3\xa9t\xc3\xa9\n\n  x";
    int *ids = NULL, *offs = NULL, n = 0;
    if (andrea_tokenizer_encode(t, text, strlen(text), &ids, &offs, &n, &err) == 0) {
        free(ids);
        free(offs);
    }
    andrea_tokenizer_free(t);
    return 0;
}
