/* ordinals.h — the ordinal kinds of probes/data/ordinals.txt as a model's tokens: what the
 * successor class ranks (analyzer/ov_classes.h, from the weights) and what its suite's items
 * hold (probes/classes.c), read by one parser so both see the same kinds. Format and rules:
 * docs/probes.md, "Ordinal kinds (ordinals.txt)": one kind a line, `name: item item ...`; a
 * leading `_` is a space; an item that is not exactly one token of the model is dropped (a gap
 * that breaks the chain of pairs); a last item equal to the first closes a cycle; a kind left
 * with fewer than 3 tokens is dropped.
 * Failure contract: -1 with one line "PATH:LINE: problem" (missing or malformed file, out of
 * memory); the struct is then freed.
 */
#ifndef ANDREA_ORDINALS_H
#define ANDREA_ORDINALS_H

#include "../common/error.h"
#include "../tokenizer/tokenizer.h"

/* The file, looked up in the probe data folder (andrea_probe_data_dir). */
#define ANDREA_ORDINALS_FILE "ordinals.txt"

typedef struct {
    int *tok;        /* [n_tok] each kind's distinct tokens in item order, kind after kind */
    int *start;      /* [n_kinds + 1] kind k holds tok[start[k] .. start[k + 1]) */
    int *pair_start; /* [n_kinds + 1] kind k's pairs are pair[2 pair_start[k] .. 2 pair_start[k + 1]) */
    int *pair;       /* [2 n_pairs] (source, successor): i for the token tok[start[k] + i] of kind k */
    int n_tok, n_kinds, n_pairs, n_items;
    double chance;   /* mean over pairs of 1 / (its kind's token count) */
    /* parsing scratch: one line's items (decoded in place) and their positions in tok */
    char **item;
    int *item_len, *pos;
    int *stamp, *where; /* [V] line that last took the token, and its index in tok */
} andrea_ordinals;

/* Reads DATA/ordinals.txt and keeps the kinds that tok (ids below V) leaves >= 3 tokens. */
int andrea_ordinals_load(const andrea_tokenizer *tok, int V, andrea_ordinals *o, ae_error *err);
/* No kinds at all (a model without a tokenizer): 0, or -1 out of memory. */
int andrea_ordinals_none(andrea_ordinals *o);
void andrea_ordinals_free(andrea_ordinals *o);

#endif
