/* probe_needle.c — the retrieval suite's generator: needle-in-a-haystack items (docs/probes.md).
 *
 * Job: items in which a head can show that it retrieves a token from far back (Wu et al. 2024,
 * "Retrieval head mechanistically explains long-context factuality"): a haystack of natural prose
 * with a needle of random tokens (NEEDLE_TOKENS, fewer where the context is short: a quarter of it)
 * put at a random depth, then the needle again at the
 * end, where the model produces it. Query q of the final copy predicts needle token j (q + 1 is its
 * position there); its target is the needle's first copy of that token. A head retrieves it when
 * its most attended key is that position: the suite's top1 is Wu et al.'s retrieval score, with
 * the token being produced taken from the item (teacher forcing) rather than sampled.
 * Items come at four context lengths, 1/4, 2/4, 3/4 and 4/4 of the suite's length (the model's
 * maximum by default), in turn, so that retrieval is measured near and far.
 * Needle tokens are distinct and drawn from tokens prose rarely holds (digits and capitals for
 * byte-level models; any spellable non-special id for BPE), so the target is the one earlier copy
 * a copying head would find; the haystack may still hold the same token (a byte-level 'E'), and
 * attending there does not count: the target is the needle's own copy.
 * Invariants: same (seed, n_items, seq_len, tokenizer) -> same items; BOS first when the
 * vocabulary has one; every item is at most seq_len tokens.
 * Failure contract: -1 with "retrieval: problem" (too short, out of memory) or the data file's.
 */
#include <stdlib.h>
#include <string.h>

#include "classes.h"
#include "probe.h"
#include "probe_internal.h"

#define NEEDLE_TOKENS 8
#define LENGTH_STEPS 4

/* n distinct ids into out. */
static void draw_needle(const andrea_tokenizer *tok, int vocab_size, probe_rng *r, int n, int *out) {
    static const char pool[] = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ";
    const int byte_level = !strcmp(andrea_tokenizer_kind(tok), "byte"), bos = andrea_tokenizer_bos(tok);
    char piece[64];
    for (int k = 0; k < n; k++) {
        int id, dup;
        do {
            if (byte_level) id = (unsigned char)pool[andrea_probe_rng_below(r, (uint32_t)(sizeof pool - 1))];
            else id = (int)andrea_probe_rng_below(r, (uint32_t)vocab_size);
            dup = !byte_level && (id == bos || andrea_tokenizer_token_bytes(tok, id, piece, sizeof piece) <= 0);
            for (int j = 0; j < k && !dup; j++) dup = out[j] == id;
        } while (dup);
        out[k] = id;
    }
}

/* haystack tokens (no BOS) of at most `want` tokens from a prose window into *ids, *n. */
static int haystack(const andrea_tokenizer *tok, const char *corpus, size_t clen, probe_rng *r, int want, ptext *tt,
                    ae_error *err) {
    andrea_buf text = {0};
    int rc = andrea_probe_prose_window(corpus, clen, r, (size_t)want * 8 + 16, &text, err) ||
             andrea_ptext_encode(tok, -1, text.s, text.len, want, tt, err);
    andrea_buf_free(&text);
    return rc ? -1 : 0;
}

/* Item i: [BOS] hay[0..d) NEEDLE hay[d..) NEEDLE, `len` tokens at most, and its targets; a
 * needle of n tokens. */
static int needle_item(const andrea_tokenizer *tok, int vocab_size, const char *corpus, size_t clen, probe_rng *r,
                       int len, int n, probe_item *item, ae_error *err) {
    const int first = andrea_tokenizer_bos(tok) >= 0, want = len - first - 2 * n;
    int needle[NEEDLE_TOKENS], cap = 0;
    ptext tt;
    draw_needle(tok, vocab_size, r, n, needle);
    if (haystack(tok, corpus, clen, r, want, &tt, err)) return -1;
    const int hay = tt.n, depth = (int)andrea_probe_rng_below(r, (uint32_t)hay + 1);
    memset(item, 0, sizeof *item);
    item->n_tokens = first + hay + 2 * n;
    item->tokens = malloc((size_t)item->n_tokens * sizeof(int));
    if (!item->tokens) {
        andrea_ptext_free(&tt);
        return andrea_fail(err, "retrieval: out of memory");
    }
    int *t = item->tokens, at = 0;
    if (first) t[at++] = andrea_tokenizer_bos(tok);
    memcpy(t + at, tt.ids, sizeof(int) * (size_t)depth);
    at += depth;
    const int needle_at = at;
    memcpy(t + at, needle, sizeof(int) * (size_t)n);
    at += n;
    memcpy(t + at, tt.ids + depth, sizeof(int) * (size_t)(hay - depth));
    at += hay - depth;
    const int answer_at = at;
    memcpy(t + at, needle, sizeof(int) * (size_t)n);
    andrea_ptext_free(&tt);
    /* query answer_at + j - 1 is where needle token j is predicted */
    for (int j = 0; j < n; j++)
        if (andrea_probe_targets_push(&item->targets, &item->n_targets, &cap, answer_at + j - 1, needle_at + j, err))
            return -1;
    return 0;
}

int andrea_probe_gen_needle(const probe_class *c, const probe_gen *g, probe_suite *s, ae_error *err) {
    /* a quarter of the context for the needle (at most NEEDLE_TOKENS), so short-context models
     * (the suites' 5-token minimum) get items too: [BOS] hay NEEDLE hay NEEDLE */
    const int first = andrea_tokenizer_bos(g->tok) >= 0;
    int n = (g->seq_len - first) / 4;
    if (n > NEEDLE_TOKENS) n = NEEDLE_TOKENS;
    if (n < 1) n = 1;
    const int shortest = first + 2 * n + 1;
    (void)c;
    if (g->seq_len < shortest)
        return andrea_fail(err, "retrieval: items need at least %d tokens (a needle of %d twice and a haystack), got %d",
                           shortest, n, g->seq_len);
    char *corpus;
    size_t clen;
    if (andrea_probe_read_data("prose.txt", &corpus, &clen, err)) return -1;
    int rc = 0;
    for (int i = 0; i < s->n_items && !rc; i++) {
        int len = (int)((long long)g->seq_len * (1 + i % LENGTH_STEPS) / LENGTH_STEPS);
        if (len < shortest) len = shortest;
        rc = needle_item(g->tok, g->vocab_size, corpus, clen, g->rng, len, n, &s->items[i], err);
    }
    free(corpus);
    return rc;
}
