/* tokenizer_byte.c — the byte-level tokenizer: token i is byte i (vocab 256), and with vocab 257
 * id 256 is BOS, which encode never emits (callers prepend it) and which has no bytes.
 * Invariant: one token per input byte, offsets[i] == i; any byte string encodes, so nothing here
 * can fail. */
#include <string.h>

#include "tokenizer_impl.h"

int andrea_tok_byte_encode(const andrea_tokenizer *t, const char *text, size_t len, int *ids, int *offsets,
                    int *n) {
    (void)t;
    const unsigned char *s = (const unsigned char *)text;
    for (size_t i = 0; i < len; i++) {
        ids[i] = s[i];
        if (offsets) offsets[i] = (int)i;
    }
    *n = (int)len;
    return 0;
}

int andrea_tok_byte_token_bytes(const andrea_tokenizer *t, int id, char *buf, size_t cap) {
    if (id < 0 || id >= t->vocab_size) return -1;
    if (id == t->bos) return 0; /* BOS stands for no text */
    if (cap < 1) return 0;
    buf[0] = (char)(unsigned char)id;
    return 1;
}
