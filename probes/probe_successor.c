/* probe_successor.c — the successor suite: runs of ordinal tokens (docs/probes.md).
 *
 * Job: items on which the successor class's causal check measures what its heads are for
 * (Gould et al. 2024): predicting the next ordinal of a kind (Tuesday after Monday, 'e' after
 * 'd'). The class's score comes from the weights (analyzer/ov_classes.h); these items give its
 * maps and its loss positions. Item i holds kind i mod K of probes/data/ordinals.txt (the kinds
 * the model's tokenizer keeps, probes/ordinals.h), its pairs in order from a seeded start, the
 * chain broken where a pair does not follow on (a dropped item, the end of a kind that does not
 * wrap around), BOS first, at most seq_len tokens. Targets: andrea_probe_successor_targets's rule
 * (pair_targets), on the kinds read once for the suite.
 * Failure contract: -1 with "successor: problem" or ordinals.txt's message; no kind survives the
 * tokenizer (a vocabulary without ordinals): items of BOS alone, which score nothing.
 */
#include <stdlib.h>
#include <string.h>

#include "classes.h"
#include "ordinals.h"
#include "probe.h"
#include "probe_internal.h"

/* The tokens of kind k from its pair p0 on (cyclically over its pairs) into it, BOS first. */
static int kind_run(const andrea_ordinals *o, int k, int p0, int bos, int seq_len, probe_item *it, ae_error *err) {
    const int t0 = o->start[k], np = o->pair_start[k + 1] - o->pair_start[k];
    it->tokens = malloc(sizeof(int) * (size_t)seq_len);
    if (!it->tokens) return andrea_fail(err, "successor: out of memory");
    int n = 0;
    if (bos >= 0) it->tokens[n++] = bos;
    for (int i = 0; i < np && n < seq_len; i++) {
        const int *pr = o->pair + 2 * (o->pair_start[k] + (p0 + i) % np);
        const int a = o->tok[t0 + pr[0]], b = o->tok[t0 + pr[1]];
        if (n == 0 || it->tokens[n - 1] != a) it->tokens[n++] = a;
        if (n < seq_len) it->tokens[n++] = b;
    }
    it->n_tokens = n;
    return 0;
}

/* (q, q) for each position q whose token and the next are a pair of one of o's kinds: the rule of
 * andrea_probe_successor_targets on kinds already loaded (the generator's, once a suite). */
static int pair_targets(const andrea_ordinals *o, probe_item *it, ae_error *err) {
    int cap = 0;
    for (int q = 0; q + 1 < it->n_tokens; q++)
        for (int k = 0; k < o->n_kinds; k++) {
            const int t0 = o->start[k];
            int hit = 0;
            for (int p = o->pair_start[k]; p < o->pair_start[k + 1] && !hit; p++)
                hit = o->tok[t0 + o->pair[2 * p]] == it->tokens[q] && o->tok[t0 + o->pair[2 * p + 1]] == it->tokens[q + 1];
            if (hit) {
                if (andrea_probe_targets_push(&it->targets, &it->n_targets, &cap, q, q, err)) return -1;
                break;
            }
        }
    return 0;
}

int andrea_probe_gen_successor(const probe_class *c, const probe_gen *g, probe_suite *s, ae_error *err) {
    andrea_ordinals o;
    (void)c;
    if (andrea_ordinals_load(g->tok, g->vocab_size, &o, err)) return -1;
    const int bos = andrea_tokenizer_bos(g->tok);
    int rc = 0;
    for (int i = 0; i < s->n_items && !rc; i++) {
        probe_item *it = &s->items[i];
        memset(it, 0, sizeof *it);
        if (o.n_kinds == 0) { /* nothing to count with: BOS alone (or one token), no target */
            it->tokens = malloc(sizeof(int));
            rc = it->tokens ? 0 : andrea_fail(err, "successor: out of memory");
            if (!rc) it->tokens[0] = bos >= 0 ? bos : 0, it->n_tokens = 1;
            continue;
        }
        const int k = i % o.n_kinds, np = o.pair_start[k + 1] - o.pair_start[k];
        const int p0 = (int)andrea_probe_rng_below(g->rng, (uint32_t)np);
        rc = kind_run(&o, k, p0, bos, g->seq_len, it, err) || pair_targets(&o, it, err);
    }
    andrea_ordinals_free(&o);
    return rc;
}

int andrea_probe_successor_targets(probe_item *it, const andrea_tokenizer *tok, ae_error *err) {
    andrea_ordinals o;
    if (!tok) return 0; /* token ids without a tokenizer: no kind to know them by */
    if (andrea_ordinals_load(tok, andrea_tokenizer_vocab_size(tok), &o, err)) return -1;
    const int rc = pair_targets(&o, it, err);
    andrea_ordinals_free(&o);
    return rc;
}
