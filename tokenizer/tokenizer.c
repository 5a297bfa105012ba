/* tokenizer.c — picks the tokenizer for a model (tokenizer.h) and dispatches to its kind.
 * Rule (docs/checkpoints.md): vocab_size 256 or 257 is byte-level; anything else needs GPT-2 BPE
 * files, vocab.json + merges.txt, in tok_dir when given, else in the checkpoint's folder.
 * Failure contract: "PATH: problem", naming the folder that lacks the files or the file at fault. */
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../common/checked_size.h"
#include "../common/strict_input.h"
#include "tokenizer_impl.h"

int andrea_tok_alloc_output(size_t len, int **ids, int **offsets, ae_error *err) {
    size_t count = len ? len : 1, bytes;
    if (ae_mul(count, sizeof(int), &bytes)) return andrea_fail(err, "text of %zu bytes is too long", len);
    *ids = malloc(bytes);
    if (offsets) *offsets = malloc(bytes);
    if (!*ids || (offsets && !*offsets)) {
        free(*ids);
        *ids = NULL;
        if (offsets) {
            free(*offsets);
            *offsets = NULL;
        }
        return andrea_fail(err, "cannot allocate %zu bytes for token ids", bytes);
    }
    return 0;
}

/* Present at all: a FIFO or folder of that name is then refused by the loader as "not a regular
 * file" rather than reported missing. */
static int is_file(const char *path) {
    struct stat st;
    return stat(path, &st) == 0;
}

int andrea_tokenizer_absent(int vocab_size, const char *model_dir, const char *tok_dir) {
    if (tok_dir || vocab_size == 256 || vocab_size == 257) return 0;
    const char *dir = model_dir && *model_dir ? model_dir : ".";
    char vocab_path[4096], merges_path[4096];
    if ((size_t)snprintf(vocab_path, sizeof vocab_path, "%s/vocab.json", dir) >= sizeof vocab_path ||
        (size_t)snprintf(merges_path, sizeof merges_path, "%s/merges.txt", dir) >= sizeof merges_path)
        return 0;
    struct stat st;
    return stat(vocab_path, &st) != 0 && stat(merges_path, &st) != 0;
}

andrea_tokenizer *andrea_tokenizer_open(int vocab_size, const char *model_dir, const char *tok_dir,
                                        ae_error *err) {
    if (vocab_size <= 0) {
        andrea_fail(err, "%s: vocab_size %d is not a vocabulary size", model_dir ? model_dir : "(model)",
                vocab_size);
        return NULL;
    }
    struct stat st;
    if (tok_dir && (stat(tok_dir, &st) != 0 || !S_ISDIR(st.st_mode))) {
        /* checked for byte-level models too, which need no files: a mistyped folder is not silently ignored */
        andrea_fail(err, "%s: not a folder (--tokenizer names the folder holding vocab.json and merges.txt)", tok_dir);
        return NULL;
    }
    andrea_tokenizer *t = calloc(1, sizeof *t);
    if (!t) {
        andrea_fail(err, "cannot allocate a tokenizer");
        return NULL;
    }
    t->vocab_size = vocab_size;
    t->bos = -1;
    if (vocab_size == 256 || vocab_size == 257) {
        t->kind = TOK_BYTE;
        t->bos = vocab_size == 257 ? 256 : -1;
        return t;
    }

    const char *dir = tok_dir ? tok_dir : (model_dir && *model_dir ? model_dir : ".");
    char vocab_path[4096], merges_path[4096];
    int a = snprintf(vocab_path, sizeof vocab_path, "%s/vocab.json", dir);
    int b = snprintf(merges_path, sizeof merges_path, "%s/merges.txt", dir);
    if (a < 0 || (size_t)a >= sizeof vocab_path || b < 0 || (size_t)b >= sizeof merges_path) {
        andrea_fail(err, "%.200s...: path too long", dir);
        free(t);
        return NULL;
    }
    int have_vocab = is_file(vocab_path), have_merges = is_file(merges_path);
    if (!have_vocab || !have_merges) {
        andrea_fail(err, "%s: no GPT-2 tokenizer here (%s%s%s missing); a model of vocab_size %d needs "
                     "vocab.json + merges.txt beside the checkpoint or in the folder --tokenizer names",
                dir, have_vocab ? "" : "vocab.json", !have_vocab && !have_merges ? " and " : "",
                have_merges ? "" : "merges.txt", vocab_size);
        free(t);
        return NULL;
    }
    t->kind = TOK_BPE;
    t->bpe = andrea_tok_bpe_load(vocab_path, merges_path, vocab_size, &t->bos, err);
    if (!t->bpe) {
        free(t);
        return NULL;
    }
    return t;
}

void andrea_tokenizer_free(andrea_tokenizer *t) {
    if (!t) return;
    andrea_tok_bpe_free(t->bpe);
    free(t);
}

int andrea_tokenizer_encode(const andrea_tokenizer *t, const char *text, size_t len, int **ids,
                            int **offsets, int *n, ae_error *err) {
    *ids = NULL;
    if (offsets) *offsets = NULL;
    *n = 0;
    /* ids and offsets are int: a text longer than INT_MAX bytes could overflow them. */
    if (len > (size_t)INT_MAX) return andrea_fail(err, "text of %zu bytes is too long to tokenize", len);
    if (andrea_tok_alloc_output(len, ids, offsets, err)) return -1;
    int rc = t->kind == TOK_BYTE
                 ? andrea_tok_byte_encode(t, text, len, *ids, offsets ? *offsets : NULL, n)
                 : andrea_tok_bpe_encode(t->bpe, text, len, *ids, offsets ? *offsets : NULL, n, err);
    if (rc) {
        free(*ids);
        *ids = NULL;
        if (offsets) {
            free(*offsets);
            *offsets = NULL;
        }
        *n = 0;
    }
    return rc;
}

int andrea_tokenizer_token_bytes(const andrea_tokenizer *t, int id, char *buf, size_t cap) {
    return t->kind == TOK_BYTE ? andrea_tok_byte_token_bytes(t, id, buf, cap)
                               : andrea_tok_bpe_token_bytes(t->bpe, id, buf, cap);
}

int andrea_tokenizer_bos(const andrea_tokenizer *t) { return t->bos; }

int andrea_tokenizer_vocab_size(const andrea_tokenizer *t) { return t->vocab_size; }

const char *andrea_tokenizer_kind(const andrea_tokenizer *t) {
    return t->kind == TOK_BYTE ? "byte" : "gpt2-bpe";
}

int andrea_text_char_index(const char *text, size_t len, size_t **chars, ae_error *err) {
    size_t bytes;
    *chars = NULL;
    if (ae_mul(len + 1, sizeof(size_t), &bytes) || !(*chars = malloc(bytes)))
        return andrea_fail(err, "out of memory indexing the characters of a %zu-byte text", len);
    const unsigned char *s = (const unsigned char *)text;
    size_t c = 0;
    for (size_t i = 0; i < len; c++) {
        /* the length the lead byte announces; one byte when the sequence is not well-formed */
        const unsigned b = s[i];
        size_t n = b < 0xC2 || b > 0xF4 ? 1 : b < 0xE0 ? 2 : b < 0xF0 ? 3 : 4;
        const char *what;
        if (n > 1 && (i + n > len || andrea_utf8_bad_at(s + i, n, &what) != SIZE_MAX)) n = 1;
        for (size_t k = 0; k < n; k++) (*chars)[i + k] = c;
        i += n;
    }
    (*chars)[len] = c;
    return 0;
}
