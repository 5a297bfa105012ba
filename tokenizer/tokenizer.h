/* tokenizer.h — text ↔ token ids for ANDREA models.
 *
 * Two kinds, chosen from the model's vocab_size (docs/checkpoints.md):
 *   - byte-level: vocab 256, or 257 where id 256 is BOS; token i is byte i;
 *   - GPT-2 byte-level BPE: vocab.json + merges.txt beside the checkpoint (or in the folder given
 *     by --tokenizer), with GPT-2's pre-tokenization regex run by PCRE2; BOS is <|endoftext|>.
 * Invariants: every id produced is < vocab_size; offsets[i] is the byte offset in the input text
 * where token i starts (a token covers [offsets[i], offsets[i+1]) ), so character spans (brackets,
 * entity names) map to token spans.
 * Failure contract: open fails with "PATH: problem" when no tokenizer fits the model (no vocab
 * files, malformed JSON, a merges line that is not two tokens, a vocab id out of range).
 */
#ifndef ANDREA_TOKENIZER_H
#define ANDREA_TOKENIZER_H

#include <stddef.h>

#include "../common/error.h"

typedef struct andrea_tokenizer andrea_tokenizer;

/* Picks the tokenizer for a model of vocab_size whose checkpoint lives in folder model_dir.
 * tok_dir (may be NULL) overrides where vocab.json + merges.txt are looked for. */
andrea_tokenizer *andrea_tokenizer_open(int vocab_size, const char *model_dir, const char *tok_dir,
                                        ae_error *err);
/* 1 when a model of vocab_size in model_dir has no tokenizer at all: no --tokenizer folder was
 * given, the vocabulary is not byte-level, and neither vocab.json nor merges.txt is beside the
 * checkpoint. Only then may a token-id probe file do without one; a tokenizer that is there but
 * broken, or a --tokenizer folder that is wrong, is an error for every probe source. */
int andrea_tokenizer_absent(int vocab_size, const char *model_dir, const char *tok_dir);
void andrea_tokenizer_free(andrea_tokenizer *t);

/* Encodes len bytes of UTF-8 text. *ids (and *offsets when offsets != NULL) are malloc'd arrays
 * of *n entries that the caller frees. */
int andrea_tokenizer_encode(const andrea_tokenizer *t, const char *text, size_t len, int **ids,
                            int **offsets, int *n, ae_error *err);

/* Longest token accepted (bytes): GPT-2's longest is 128; a vocab.json holding a longer one is
 * refused at open, so a buffer of this size always holds a whole token. */
#define ANDREA_TOKEN_MAX_BYTES 1024

/* The bytes of one token (for BPE: the decoded bytes, not the byte-to-unicode form). Returns the
 * number of bytes written to buf (at most cap), or -1 for an unknown id. */
int andrea_tokenizer_token_bytes(const andrea_tokenizer *t, int id, char *buf, size_t cap);

/* BOS id, or -1 when the vocabulary has none (plain 256-byte vocab). */
int andrea_tokenizer_bos(const andrea_tokenizer *t);
/* The characters of text (len bytes), as probe files' "char_targets" and `andrea tokenize
 * --offsets` count them: a well-formed UTF-8 sequence is one character (a code point, as Python
 * indexes a str), and so is each byte that does not begin one (any bytes have characters).
 * *chars (malloc'd, len + 1 entries): chars[b] = the index of the character holding byte b,
 * chars[len] = the number of characters. 0, or -1 with err (out of memory). */
int andrea_text_char_index(const char *text, size_t len, size_t **chars, ae_error *err);

/* The model's vocabulary size the tokenizer was opened for (every id it makes is below it). */
int andrea_tokenizer_vocab_size(const andrea_tokenizer *t);

/* "byte" or "gpt2-bpe" */
const char *andrea_tokenizer_kind(const andrea_tokenizer *t);

#endif
