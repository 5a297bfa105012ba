/* probe_internal.h — helpers shared by the probe modules (not a public interface).
 *
 * Job: a seeded PRNG, adding to a text (common/buf.h) with a message, tokenized text with byte
 * offsets (so character positions map to token positions), and the two text-driven target rules
 * (brackets, entity spans) that both the built-in generators and andrea_probe_default_targets use.
 * Invariant of ptext: tokens [first, n) partition the text bytes [0, text_len') in order,
 * where text_len' <= text_len is where the kept tokens end; token `first - 1` (when first == 1)
 * is BOS and covers no bytes.
 */
#ifndef ANDREA_PROBE_INTERNAL_H
#define ANDREA_PROBE_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "../common/buf.h"
#include "../common/error.h"
#include "../tokenizer/tokenizer.h"
#include "probe_types.h"

/* the class table's types (classes.h), named here only: classes.c includes this header */
struct probe_class;
struct probe_gen_s;

/* ---- PRNG: splitmix64, seeded from (seed, stream name) so suites draw independent streams ---- */
typedef struct probe_rng_s {
    uint64_t s;
} probe_rng;

void andrea_probe_rng_seed(probe_rng *r, uint64_t seed, const char *stream);
uint64_t andrea_probe_rng_next(probe_rng *r);
/* Uniform in [0, n), n > 0 (rejection sampling, no modulo bias). */
uint32_t andrea_probe_rng_below(probe_rng *r, uint32_t n);

/* ---- texts are built in the one growable buffer (common/buf.h); these add with the message ---- */
int andrea_probe_text_add(andrea_buf *b, const char *s, size_t n, ae_error *err);
int andrea_probe_text_adds(andrea_buf *b, const char *s, ae_error *err);

/* ---- tokenized text ---- */
typedef struct {
    int *ids;      /* [n] */
    size_t *start; /* [n] byte where token i starts (BOS: 0) */
    size_t *end;   /* [n] byte where token i ends, exclusive (BOS: 0) */
    int n;
    int first;     /* 1 when ids[0] is BOS, else 0 */
} ptext;

/* Encodes text, prepends BOS when bos >= 0, keeps at most max_tokens tokens. */
int andrea_ptext_encode(const andrea_tokenizer *tok, int bos, const char *text, size_t len,
                    int max_tokens, ptext *tt, ae_error *err);
/* Builds a ptext from token ids by decoding each token's bytes; *text gets the decoded
 * bytes (malloc'd, NUL-terminated), BOS (when ids[0] == bos) covers no bytes. */
int andrea_ptext_decode(const andrea_tokenizer *tok, const int *ids, int n, ptext *tt, char **text,
                    size_t *text_len, ae_error *err);
void andrea_ptext_free(ptext *tt);
/* Token holding byte p, or -1 when p lies beyond the kept tokens. */
int andrea_ptext_token_at(const ptext *tt, size_t p);
/* Tokens overlapping bytes [cs, ce): *t0 .. *t1 exclusive. -1 when any of it is cut off. */
int andrea_ptext_span(const ptext *tt, size_t cs, size_t ce, int *t0, int *t1);

/* ---- target rules ---- */
/* A target rule over an item's text (tt maps bytes to kept tokens). */
typedef int (*probe_text_rule)(const char *text, size_t len, const ptext *tt, probe_target **out, int *n,
                               ae_error *err);
/* Brackets ()[]{} are matched with one stack over the text; a closer that does not match the
 * innermost open bracket is ignored (docs/probes.md).
 * bracket_close: for each matched pair whose closer lies in kept token q and opener in token
 * k < q, (q, k).
 * bracket (inside): every kept token q strictly between a pair's opener token and its closer
 * token (a closer cut off by the length limit counts as beyond the end) gets the opener token
 * of the innermost such pair; when that innermost bracket is never closed, q gets nothing. */
int andrea_probe_bracket_close_targets(const char *text, size_t len, const ptext *tt, probe_target **out, int *n,
                                ae_error *err);
int andrea_probe_bracket_inside_targets(const char *text, size_t len, const ptext *tt, probe_target **out, int *n,
                                 ae_error *err);
/* Runs a text rule on an item's decoded tokens (needs tok). */
int andrea_probe_text_targets(probe_item *it, const andrea_tokenizer *tok, probe_text_rule rule, ae_error *err);
/* induction (shift 1) / duplicate (shift 0) on arbitrary tokens: the nearest earlier occurrence
 * j of tokens[i] gives key j + shift. Appends to it->targets (unsorted). */
int andrea_probe_repeat_targets(probe_item *it, int shift, ae_error *err);
/* Entity rule: spans [n_spans, 2] token spans; query i outside every span gets every token of
 * the most recent span that ends at or before i; queries inside a span get none. */
int andrea_probe_entity_targets(const int *spans, int n_spans, int n_tokens, probe_target **out, int *n,
                   ae_error *err);

/* Appends a target, growing the array. */
int andrea_probe_targets_push(probe_target **t, int *n, int *cap, int query, int key, ae_error *err);

/* ---- data files (probes/data: prose.txt, people.txt, places.txt, ordinals.txt) ---- */
/* The whole file, NUL-terminated, malloc'd (at most 16 MiB, not empty). */
int andrea_probe_read_data(const char *name, char **out, size_t *len, ae_error *err);
/* `bytes` bytes of corpus from a random word start (wrapping around, whitespace between). */
int andrea_probe_prose_window(const char *corpus, size_t clen, probe_rng *r, size_t bytes, andrea_buf *out, ae_error *err);

/* ---- built-in generators (the classes' `generate`, classes.h) ---- */
int andrea_probe_gen_prose(const struct probe_class *c, const struct probe_gen_s *g, probe_suite *s, ae_error *err);
int andrea_probe_gen_repeat(const struct probe_class *c, const struct probe_gen_s *g, probe_suite *s, ae_error *err);
int andrea_probe_gen_code(const struct probe_class *c, const struct probe_gen_s *g, probe_suite *s, ae_error *err);
int andrea_probe_gen_entity(const struct probe_class *c, const struct probe_gen_s *g, probe_suite *s, ae_error *err);
int andrea_probe_gen_needle(const struct probe_class *c, const struct probe_gen_s *g, probe_suite *s, ae_error *err);
int andrea_probe_gen_successor(const struct probe_class *c, const struct probe_gen_s *g, probe_suite *s, ae_error *err);
/* successor's target rule: each position q whose token and the next are a pair of an ordinal kind
 * (probes/ordinals.h), key q itself (the ordinal the head reads); no tokenizer: none. */
int andrea_probe_successor_targets(probe_item *it, const andrea_tokenizer *tok, ae_error *err);

#endif
