/* classes.c — the table of head classes (see classes.h, docs/probes.md, docs/scores.md).
 * Every rule here works on one item's tokens, targets and entity spans only, so it gives the same
 * answer on a generated item, a probe-file item and an item read back from a dump. */
#include "classes.h"

#include <stdlib.h>
#include <string.h>

#include "probe_internal.h"

/* ---------------- target rules ---------------- */

static int targets_prev(probe_item *it, const andrea_tokenizer *tok, ae_error *err) {
    (void)tok;
    int cap = 0;
    for (int i = 1; i < it->n_tokens; i++)
        if (andrea_probe_targets_push(&it->targets, &it->n_targets, &cap, i, i - 1, err)) return -1;
    return 0;
}

static int targets_bos(probe_item *it, const andrea_tokenizer *tok, ae_error *err) {
    (void)tok;
    int cap = 0;
    for (int i = 1; i < it->n_tokens; i++)
        if (andrea_probe_targets_push(&it->targets, &it->n_targets, &cap, i, 0, err)) return -1;
    return 0;
}

static int targets_induction(probe_item *it, const andrea_tokenizer *tok, ae_error *err) {
    (void)tok;
    return andrea_probe_repeat_targets(it, 1, err);
}

static int targets_duplicate(probe_item *it, const andrea_tokenizer *tok, ae_error *err) {
    (void)tok;
    return andrea_probe_repeat_targets(it, 0, err);
}

static int targets_entity(probe_item *it, const andrea_tokenizer *tok, ae_error *err) {
    (void)tok;
    return andrea_probe_entity_targets(it->entities, it->n_entities, it->n_tokens, &it->targets, &it->n_targets, err);
}

/* copy_suppression (and retrieval on a probe file's items): every earlier position holding the
 * token that comes next, from each position that has a next token. On the repeated sequences
 * the next token's one earlier copy is in the first copy (induction's target); in other text
 * these are the copies a head suppressing (or retrieving) the predicted token would look at. */
static int targets_next_token_copies(probe_item *it, const andrea_tokenizer *tok, ae_error *err) {
    (void)tok;
    int cap = 0;
    for (int q = 0; q + 1 < it->n_tokens; q++)
        for (int k = 0; k <= q; k++)
            if (it->tokens[k] == it->tokens[q + 1] &&
                andrea_probe_targets_push(&it->targets, &it->n_targets, &cap, q, k, err))
                return -1;
    return 0;
}

static int targets_bracket(probe_item *it, const andrea_tokenizer *tok, ae_error *err) {
    return andrea_probe_text_targets(it, tok, andrea_probe_bracket_inside_targets, err);
}

static int targets_bracket_close(probe_item *it, const andrea_tokenizer *tok, ae_error *err) {
    return andrea_probe_text_targets(it, tok, andrea_probe_bracket_close_targets, err);
}

/* ---------------- hard queries (the extra statistic) ---------------- */

/* Bracket classes: a single-key query q with key k is hard when another pair (o, k2) sits between
 * them, k < k2 < o < q: a bracket opened after k and (the targets being nested) closed before q,
 * so k is not the most recent opener. A head that merely attends to the last opener fails these.
 * A query of several keys (a BPE token closing several brackets, "))") is not hard itself (it has
 * no one opener), but each of its pairs is a pair closed in between for the queries after it. */
static void hard_not_most_recent_opener(const probe_item *it, unsigned char *hard) {
    const probe_target *t = it->targets;
    int n = it->n_targets;
    for (int i = 0; i < n; i++) {
        if ((i > 0 && t[i - 1].query == t[i].query) || (i + 1 < n && t[i + 1].query == t[i].query)) continue;
        int q = t[i].query, k = t[i].key;
        for (int j = 0; j < i && !hard[q]; j++)
            if (k < t[j].key && t[j].key < t[j].query) hard[q] = 1; /* t[j].query < q: sorted */
    }
}

/* ---------------- causal-check loss positions ---------------- */

void andrea_probe_loss_at_queries(const probe_item *it, unsigned char *use) {
    for (int i = 0; i < it->n_targets; i++) use[it->targets[i].query] = 1;
}

static void loss_every_token(const probe_item *it, unsigned char *use) {
    for (int p = 0; p + 1 < it->n_tokens; p++) use[p] = 1;
}

/* duplicate: predicting each repeated token itself (the position before it), where induction
 * measures the prediction made AT the repeat (the token after it). */
static void loss_before_queries(const probe_item *it, unsigned char *use) {
    for (int i = 0; i < it->n_targets; i++)
        if (it->targets[i].query >= 1) use[it->targets[i].query - 1] = 1;
}

/* entity: predicting the tokens of each re-mention (a span whose tokens equal an earlier span's). */
static void loss_remention(const probe_item *it, unsigned char *use) {
    if (it->n_entities == 0) {
        andrea_probe_loss_at_queries(it, use); /* explicit targets without spans: their queries */
        return;
    }
    const int *sp = it->entities;
    for (int s = 0; s < it->n_entities; s++) {
        int a = sp[2 * s], b = sp[2 * s + 1], again = 0;
        for (int r = 0; r < s && !again; r++) {
            int ra = sp[2 * r], rb = sp[2 * r + 1];
            again = rb - ra == b - a && !memcmp(it->tokens + ra, it->tokens + a, sizeof(int) * (size_t)(b - a));
        }
        if (!again) continue;
        for (int t = a; t < b && t < it->n_tokens; t++)
            if (t >= 1) use[t - 1] = 1;
    }
}

/* bracket: predicting each closing bracket, read from the inside-bracket targets: position p
 * (target k) is the last before a closer when p + 1 has no target (a closer at top level) or a
 * target before k (a closer inside an outer pair). An opener at p + 1 keeps target k. */
static void loss_before_closer(const probe_item *it, unsigned char *use) {
    const probe_target *t = it->targets;
    int n = it->n_targets;
    for (int i = 0; i < n; i++) {
        if ((i > 0 && t[i - 1].query == t[i].query) || (i + 1 < n && t[i + 1].query == t[i].query)) continue;
        int p = t[i].query, k = t[i].key;
        if (p + 1 >= it->n_tokens) continue;
        int next_key = -1; /* the target of p + 1: the next entry when it is query p + 1 */
        if (i + 1 < n && t[i + 1].query == p + 1) next_key = t[i + 1].key;
        if (next_key < k) use[p] = 1;
    }
}

/* ---------------- the table ---------------- */

#define RULE3 {0.30, 3.0, 0.15, 0, 0}

const probe_class andrea_probe_classes[] = {
    {"prev_token", "position q-1 (the previous token)", NULL, 0, 0, andrea_probe_gen_prose, targets_prev,
     PROBE_EXTRA_TOP1, "top1", NULL, loss_every_token, "every next token", RULE3, PROBE_CONTROL_RANDOM, PROBE_SCORE_MASS, 0},
    {"induction", "the token after the earlier occurrence of the current token (second copy only)", NULL, 0, 0,
     andrea_probe_gen_repeat, targets_induction, PROBE_EXTRA_TOP1, "top1", NULL, andrea_probe_loss_at_queries,
     "the second copy's tokens (predicted at each second-copy position)", RULE3, PROBE_CONTROL_RANDOM, PROBE_SCORE_MASS, 0},
    {"duplicate", "the earlier occurrence of the current token (second copy only)", "induction", 0, 0,
     andrea_probe_gen_repeat, targets_duplicate, PROBE_EXTRA_TOP1, "top1", NULL, loss_before_queries,
     "each repeated token itself (predicted at the position before it)", RULE3, PROBE_CONTROL_RANDOM, PROBE_SCORE_MASS, 0},
    {"bracket", "the innermost unclosed opening bracket, from every position inside a bracket pair", NULL, 0, 0,
     andrea_probe_gen_code, targets_bracket, PROBE_EXTRA_HARD_TOP1, "hard_top1", hard_not_most_recent_opener,
     loss_before_closer, "each closing bracket (predicted at the position before it)", RULE3, PROBE_CONTROL_RANDOM, PROBE_SCORE_MASS, 0},
    {"bracket_close", "the matching opening bracket of each closing bracket", "bracket", 0, 0, andrea_probe_gen_code,
     targets_bracket_close, PROBE_EXTRA_HARD_TOP1, "hard_top1", hard_not_most_recent_opener,
     andrea_probe_loss_at_queries, "the token after each closing bracket", RULE3, PROBE_CONTROL_RANDOM, PROBE_SCORE_MASS, 0},
    /* entity: 24 items of 192 tokens: a mention covers several tokens, so in a short context the
     * uniform-attention baseline is high (0.15 at 128 byte tokens) and a real entity head cannot
     * stand out from it. min_ratio 2, not 3: targets are whole multi-token mentions, so the
     * baseline is several times that of single-key classes; random-weight heads stay at ratio ~1
     * (test_analyzer_random), so 2x keeps them out. The control keeps the targets' distance:
     * every query after a mention is eligible, so the most recent mention is often the most
     * recent few tokens, and a head that attends to the last tokens whatever they hold passed the
     * rule against random keys (6 of 8 heads of the dyck series at step 1000, a model that never
     * saw an entity). */
    {"entity", "the tokens of the most recent entity mention, from positions after a mention", NULL,
     PROBE_ENTITY_N_ITEMS, PROBE_ENTITY_SEQ_LEN, andrea_probe_gen_entity, targets_entity, PROBE_EXTRA_TOP1, "top1", NULL,
     loss_remention, "the tokens of each re-mention", {0.30, 2.0, 0.15, 0.75, 0}, PROBE_CONTROL_SAME_DISTANCE, PROBE_SCORE_MASS, 0},
    {"bos", "position 0 (attention sink)", NULL, 0, 0, andrea_probe_gen_prose, targets_bos, PROBE_EXTRA_NONE, NULL, NULL,
     loss_every_token, "every next token", RULE3, PROBE_CONTROL_RANDOM, PROBE_SCORE_MASS, 0},
    /* positional (Voita et al. 2019): the prev_token suite's windows; the score is the share of
     * queries whose most attended key sits at the head's most frequent offset (1..16), 0.90 as
     * in the paper ("at least 90% of the time"); its control, the share whose argmax is a random
     * key of the window, keeps out heads that attend to few keys by content */
    {"positional", "the most attended key at one fixed offset k = 1..16 before the query", "prev_token", 0, 0,
     andrea_probe_gen_prose, targets_prev, PROBE_EXTRA_OFFSET, "offset", NULL, loss_every_token, "every next token",
     {0.90, 3.0, 0.15, 0, 0}, PROBE_CONTROL_RANDOM, PROBE_SCORE_OFFSET, 0},
    /* dormant (Xiao et al. 2023; Sandoval-Segura et al. 2025): the bos suite's windows; most of the
     * attention on position 0 AND a mean output norm at most a quarter of the median head's */
    {"dormant", "position 0, with a small output (norm ratio to the median head)", "bos", 0, 0, andrea_probe_gen_prose,
     targets_bos, PROBE_EXTRA_NORM_RATIO, "norm_ratio", NULL, loss_every_token, "every next token",
     {0.50, 3.0, 0.15, 0, 0.25}, PROBE_CONTROL_RANDOM, PROBE_SCORE_MASS, 0},
    /* copy_suppression (McDougall et al. 2023): the induction suite's sequences; attention to the
     * earlier copy of the token about to be predicted AND an OV circuit that lowers that token's
     * own logit (its extra, from the weights); without the weights' part no label */
    {"copy_suppression", "earlier copies of the next token (and an OV circuit that suppresses it)", "induction", 0, 0,
     andrea_probe_gen_repeat, targets_next_token_copies, PROBE_EXTRA_WEIGHTS, "suppression", NULL,
     andrea_probe_loss_at_queries, "the second copy's tokens (predicted at each second-copy position)",
     {0.30, 3.0, 0.15, 0.50, 0}, PROBE_CONTROL_RANDOM, PROBE_SCORE_MASS, 0},
    /* retrieval (Wu et al. 2024): needle-in-a-haystack items at 1/4..4/4 of the model's context;
     * top1 is the retrieval score, 0.1 the paper's cut. Opt-in (--probes retrieval or all): its
     * items are the whole context (1024 tokens for GPT-2 shapes), and their forwards and causal
     * check cost more than every other suite together (ANDREA-120M on one H200: 6.4-7.0 s with
     * it against 3.7-3.9 s before the new classes; bench/RESULTS.md) */
    {"retrieval", "the needle's copy of the token being produced (needle-in-a-haystack items)", NULL,
     PROBE_RETRIEVAL_N_ITEMS, PROBE_RETRIEVAL_SEQ_LEN, andrea_probe_gen_needle, targets_next_token_copies,
     PROBE_EXTRA_TOP1, "top1", NULL, andrea_probe_loss_at_queries, "each needle token of the final copy",
     {0.10, 3.0, 0.05, 0.10, 0}, PROBE_CONTROL_RANDOM, PROBE_SCORE_MASS, 1},
    /* successor (Gould et al. 2024): the score is the head's successor share from the weights
     * (analyzer/ov_classes.h), its baseline and control the chance of a random row; the runs of
     * ordinals give the maps and the causal check's loss (predicting each successor) */
    {"successor", "the current ordinal token (the score is from the weights: the OV circuit maps it to its successor)",
     NULL, PROBE_SUCCESSOR_N_ITEMS, PROBE_SUCCESSOR_SEQ_LEN, andrea_probe_gen_successor, andrea_probe_successor_targets,
     PROBE_EXTRA_NONE, NULL, NULL, andrea_probe_loss_at_queries, "each ordinal's successor (predicted at the ordinal)",
     {0.50, 3.0, 0.15, 0, 0}, PROBE_CONTROL_RANDOM, PROBE_SCORE_WEIGHTS, 0},
    {NULL, NULL, NULL, 0, 0, NULL, NULL, PROBE_EXTRA_NONE, NULL, NULL, NULL, NULL, {0, 0, 0, 0, 0}, PROBE_CONTROL_RANDOM, PROBE_SCORE_MASS, 0},
};

const probe_class *andrea_probe_class_find(const char *name) {
    for (int i = 0; name && andrea_probe_classes[i].name; i++)
        if (!strcmp(andrea_probe_classes[i].name, name)) return &andrea_probe_classes[i];
    return NULL;
}
