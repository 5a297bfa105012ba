/* tokenizer_impl.h — what tokenizer.c (dispatch), tokenizer_byte.c and tokenizer_bpe.c share.
 * Private to tokenizer/tokenizer*.c; everything else uses tokenizer.h.
 * Invariant: kind says which member is live; bos is -1 or a valid id < vocab_size. */
#ifndef ANDREA_TOKENIZER_IMPL_H
#define ANDREA_TOKENIZER_IMPL_H

#include "tokenizer.h"

typedef enum { TOK_BYTE = 1, TOK_BPE = 2 } tok_kind;

typedef struct tok_bpe tok_bpe;

struct andrea_tokenizer {
    tok_kind kind;
    int vocab_size;
    int bos;
    tok_bpe *bpe; /* TOK_BPE only */
};

/* Shared by both kinds: allocates *ids and *offsets for up to len tokens (every token covers at
 * least one byte, so len bounds the count). At least one entry is allocated so that an empty
 * text still yields freeable arrays. */
int andrea_tok_alloc_output(size_t len, int **ids, int **offsets, ae_error *err);

int andrea_tok_byte_encode(const andrea_tokenizer *t, const char *text, size_t len, int *ids, int *offsets,
                    int *n);
int andrea_tok_byte_token_bytes(const andrea_tokenizer *t, int id, char *buf, size_t cap);

/* Loads vocab.json + merges.txt (paths given); fills *bos with the id of <|endoftext|> or -1. */
tok_bpe *andrea_tok_bpe_load(const char *vocab_path, const char *merges_path, int vocab_size, int *bos,
                      ae_error *err);
void andrea_tok_bpe_free(tok_bpe *b);
int andrea_tok_bpe_encode(const tok_bpe *b, const char *text, size_t len, int *ids, int *offsets, int *n,
                   ae_error *err);
int andrea_tok_bpe_token_bytes(const tok_bpe *b, int id, char *buf, size_t cap);

#endif
