/* strict_input.h — two checks every reader of an outside file shares (checkpoints,
 * config.json, tokenizer files, probe lines).
 *
 * Job: (1) open a file that must be a regular file without ever blocking on it (a FIFO named
 * model.safetensors or config.json would otherwise hang open() until a writer appears);
 * (2) parse JSON the way the tools that wrote it read it back. cJSON alone is lenient where
 * Python's json, serde_json (safetensors) and Hugging Face are strict, and every leniency is a
 * way to read a file differently from its author:
 *   - data after the value ("{...} {...}" on one probe line: the second item silently dropped);
 *   - a key given twice (cJSON answers the first, Python the last: two programs, two models);
 *   - a NUL byte, raw or as the escape \u0000 (cJSON's strings end there: text silently cut);
 *   - a number JSON does not allow ("02", "2.", ".5": cJSON reads them, Python's json refuses);
 *   - a raw control byte (< 0x20) inside a string, or between values other than space, tab, LF,
 *     CR (cJSON keeps the first and skips the second as whitespace);
 *   - bytes that are not UTF-8: overlong forms, surrogates, past U+10FFFF, sequences cut short,
 *     0xC0, 0xC1, 0xF5..0xFF (cJSON copies them into its strings);
 *   - a UTF-8 byte-order mark at the start (cJSON skips it; Python's json.loads refuses it).
 * All are refused, each naming its byte. Trailing whitespace (safetensors pads its header with
 * spaces) is accepted. A number written as digits only ("64", not "64.0", "6.4e1" or "-0") is
 * marked ANDREA_JSON_DIGITS_ONLY, for readers whose writers' readers want an integer type
 * (serde's usize refuses "64.0"; cJSON keeps only the double 64).
 * Failure contract: the helpers fill a short reason without the path; callers prefix it.
 */
#ifndef ANDREA_CHECKPOINT_INPUT_H
#define ANDREA_CHECKPOINT_INPUT_H

#include <cJSON.h>
#include <stddef.h>
#include <stdio.h>

#include "error.h"

/* Opens path read-only (O_NONBLOCK, so a FIFO cannot block) and returns the descriptor with
 * O_NONBLOCK cleared, or -1 with "PATH: cannot open: ..." / "PATH: not a regular file (a
 * folder, FIFO or device)". */
int andrea_open_regular(const char *path, ae_error *err);
/* The same as a stdio stream ("rb"), or NULL with the message. */
FILE *andrea_fopen_regular(const char *path, ae_error *err);

/* The most values (array elements, object members) a parsed JSON text may hold: GPT-2's
 * vocab.json holds 50,257, a 250k-token vocabulary 250,000, the safetensors header of a model of
 * 10,000 tensors ~80,000; at ~100 bytes of cJSON tree a value this bounds the parse to ~400 MB. */
#define ANDREA_JSON_MAX_VALUES 4000000

/* Strict parse of text[0..len); refused before parsing: a NUL byte, a byte-order mark, bytes
 * that are not UTF-8, more than ANDREA_JSON_MAX_VALUES values, nesting past cJSON's limit.
 * check_dups: refuse a key given twice in any object (vocab.json
 * passes 0: its own check names the ids). Returns the tree, or NULL with why (cap bytes) set to
 * a reason such as "not valid JSON (near byte 12)" or "key \"n_layer\" is given twice", and
 * *syntax_at (may be NULL) set to the byte where cJSON gave up when the text is not JSON at all
 * (SIZE_MAX for the other refusals), so callers can keep their own wording for that case. */
cJSON *andrea_json_parse_strict(const char *text, size_t len, int check_dups, size_t *syntax_at, char *why,
                                size_t cap);

/* Offset of the first byte of s[0..len) that does not begin a well-formed UTF-8 sequence (RFC
 * 3629: shortest form, no surrogate, nothing past U+10FFFF, nothing cut short), or SIZE_MAX;
 * *what names the fault (a phrase such as "a sequence cut short"). */
size_t andrea_utf8_bad_at(const unsigned char *s, size_t len, const char **what);

/* Set in the type of a number node andrea_json_parse_strict read from digits only (no sign,
 * '.' or exponent). cJSON reads a node's type through (type & 0xFF) and uses 256 and 512 for its
 * own flags, so the bit changes nothing it does. */
#define ANDREA_JSON_DIGITS_ONLY (1 << 12)

/* 1 when v is a number written as digits only (a JSON non-negative integer), else 0. */
static inline int andrea_json_is_digits_only(const cJSON *v) {
    return cJSON_IsNumber(v) && (v->type & ANDREA_JSON_DIGITS_ONLY) != 0;
}

#endif
