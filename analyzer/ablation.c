/* ablation.c — rise of a suite's next-token loss when one head's W_O contribution is dropped. */
#include "ablation.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../common/checked_size.h"
#include "../common/finite.h"
#include "../probes/classes.h"
#include "classify.h"

/* Mean of the engine's token losses at the loss positions, in position order; NaN when there is
 * none. *bad = 1 when a used loss is not finite (the forward overflowed). */
static double mean_token_loss(const float *loss, const unsigned char *use, int B, int T, int *bad) {
    double sum = 0;
    long n = 0;
    for (long r = 0; r < (long)B * T; r++) {
        if (r % T + 1 >= T || !use[r]) continue;
        if (!isfinite(loss[r])) *bad = 1;
        sum += loss[r];
        n++;
    }
    return n ? sum / (double)n : NAN;
}

/* The class's loss positions (probes/classes.c; a user suite: its target queries) of one item:
 * use[p] = 1 where predicting token p + 1 counts, p + 1 < len. Returns the last such p + 2
 * (the tokens the forward needs), 0 when there is none. use: [len], zeroed here. */
static int loss_positions(const probe_suite *s, const probe_item *it, int len, unsigned char *use) {
    const probe_class *c = andrea_probe_class_find(s->name);
    unsigned char *all = calloc((size_t)(it->n_tokens > 0 ? it->n_tokens : 1), 1);
    memset(use, 0, (size_t)len);
    if (!all) return -1;
    (c ? c->loss_positions : andrea_probe_loss_at_queries)(it, all);
    int need = 0;
    for (int p = 0; p + 1 < len && p + 1 < it->n_tokens; p++)
        if (all[p]) {
            use[p] = 1;
            need = p + 2;
        }
    free(all);
    return need;
}

/* The first max_items items of the suite with at least one loss position into pick[*B], and *T
 * the longest prefix they need. -1: out of memory. */
static int pick_items(const probe_suite *items, int max_items, int *pick, int *B_out, int *T_out) {
    int max_len = 1;
    for (int i = 0; i < items->n_items; i++)
        if (items->items[i].n_tokens > max_len) max_len = items->items[i].n_tokens;
    unsigned char *row = malloc((size_t)max_len);
    if (!row) return -1;
    int B = 0, T = 0;
    for (int i = 0; i < items->n_items && B < max_items; i++) {
        const probe_item *it = &items->items[i];
        /* Causal: tokens after the last loss position's target cannot change its loss. */
        int need = loss_positions(items, it, it->n_tokens, row);
        if (need < 0) {
            free(row);
            return -1;
        }
        if (need == 0) continue;
        pick[B++] = i;
        if (need > T) T = need;
    }
    free(row);
    *B_out = B;
    *T_out = T;
    return 0;
}

/* Where the engine can resume, the clean forward saves each layer's input ([L, B, T, C]) and, with
 * heads (engines that resume after a layer's attention: the CPU's), its head outputs, and the
 * ablation of a head of layer l runs layers l.. only (from layer l's W_O with the heads: the layers
 * before it and layer l's attention are those of the clean forward). Left NULL (too large, out of
 * memory): the whole forward each time. */
static void resume_buffers(size_t bt, const andrea_config *cfg, float **inputs, float **heads) {
    size_t btc;
    *inputs = NULL;
    if (heads) *heads = NULL;
    if (ae_mul(bt, (size_t)cfg->d_model, &btc) || ae_mul(btc, (size_t)cfg->n_layer, &btc) ||
        btc > ((size_t)1 << 30) / sizeof(float))
        return;
    *inputs = malloc(btc * sizeof(float));
    if (!heads) return;
    *heads = *inputs ? malloc(btc * sizeof(float)) : NULL;
    if (!*heads) {
        free(*inputs);
        *inputs = NULL;
    }
}

/* Heads ablated in one forward of the batched check. On a GPU: every wanted head (at most
 * ABLATE_HEADS_PER_FORWARD) while K copies of the B items fit in a quarter of the GPU's free memory
 * (activations and logits, ~T (12 C + V) floats a sequence). On the CPU, whose forwards run layer
 * by layer from the clean forward's head outputs: the heads of one layer at most, and at most
 * ABLATE_CPU_ROWS rows: its matmuls run in blocks of 128 rows, and a few blocks per thread keep
 * both cores busy to the end of each matmul; more rows only cost memory. (The gain is small: the
 * CPU's matmuls already run near the core's peak; the bundled model's check took 4.01-4.14 s
 * with one head a forward and 3.90-4.10 s with a layer's 8 heads, side by side on a loaded
 * 2-core VM: bench/RESULTS.md.) The engine is grown to that batch where it can be, else K is
 * what its batch holds. */
#define ABLATE_HEADS_PER_FORWARD 64
#define ABLATE_CPU_ROWS 4096
static int heads_per_forward(andrea_engine *e, const andrea_config *cfg, const unsigned char *want, int B, int T) {
    const int NH = cfg->n_layer * cfg->n_head;
    int K = 0;
    for (int i = 0; i < NH; i++) K += want[i] != 0;
    if (K > ABLATE_HEADS_PER_FORWARD) K = ABLATE_HEADS_PER_FORWARD;
    size_t free_bytes;
    const double per_seq = (double)T * (12.0 * cfg->d_model + cfg->vocab_size) * sizeof(float);
    if (andrea_engine_can_resume_heads(e)) { /* chunks of one layer's heads (ablate_in_batches) */
        if (K > cfg->n_head) K = cfg->n_head;
        if ((double)K * B * T > ABLATE_CPU_ROWS) K = (int)(ABLATE_CPU_ROWS / ((double)B * T));
    } else if (andrea_cuda_free_memory(&free_bytes) == 0 && (double)K * B * per_seq > (double)free_bytes / 4) {
        K = (int)((double)free_bytes / 4 / per_seq / B);
    }
    if (K < 1) K = 1;
    ae_error ignored;
    if (K * B > andrea_engine_max_batch(e) && andrea_engine_reserve_batch(e, K * B, &ignored) != 0)
        K = andrea_engine_max_batch(e) / B; /* out of memory: the batch it has */
    return K > 1 ? K : 1;
}

/* The batched check's forwards take the wanted heads in layer order, K at a time; a forward
 * whose first head sits in layer l > 0 resumes there where the engine saved the clean forward's
 * layer inputs. Splitting a suite's heads into more forwards by layer to resume more of them was
 * measured on an H200 and did not pay: chunks of 16 copies (4096 rows), then 32 (16384 rows),
 * made the causal check slower than one forward of 64 copies from layer 0 (bench/RESULTS.md,
 * 23:05 and 23:50), since a smaller batch runs each layer less efficiently. So resuming only
 * shortens the forwards there are anyway; with the 64 spread heads of a suite in one forward
 * (heads in layer 0 among them) it changes nothing. 1 when some forward starts above layer 0. */
static int some_chunk_resumes(const unsigned char *want, int NH, int H, int K) {
    for (int i = 0, n = 0; i < NH; i++)
        if (want[i] && n++ % K == 0 && i / H > 0) return 1;
    return 0;
}

/* Suites whose picked items are the same token sequences (classes that share a stream:
 * induction and duplicate, bracket and bracket_close) share one set of forwards: a forward
 * gives the loss of every position any of them measures, and each suite averages its own
 * positions. A member is one suite of such a group, with what is its own. */
typedef struct {
    const probe_suite *items;
    const int *pick;        /* [B] its items (token for token the group's) */
    andrea_suite_scores *s;
    unsigned char *use;     /* [B*T] its loss positions */
    unsigned char *want;    /* [NH] the heads whose delta it stores: the mean's and its labelled ones */
    double clean;
} ablation_member;

typedef struct {
    int B, T, n_members;
    ablation_member *m;
    unsigned char *want;    /* [NH] any member's wanted heads */
    unsigned char *in_mean; /* [NH] the heads of the mean (the same for every suite) */
} ablation_group;

/* Head i's delta for every member that wants it, from the token losses [B*T] of the forward with
 * i ablated. */
static void store_deltas(const ablation_group *g, int i, const float *token_loss) {
    int bad = 0;
    for (int k = 0; k < g->n_members; k++) {
        const ablation_member *m = &g->m[k];
        if (m->want[i]) m->s->heads[i].ablation_delta = mean_token_loss(token_loss, m->use, g->B, g->T, &bad) - m->clean;
    }
}

/* Each wanted head's delta, K heads a forward (engines with can_ablate_per_seq): the batch holds K
 * copies of the B items, copy j with its own head ablated, resumed at the chunk's first layer from
 * the clean forward's layer inputs (layer_inputs [L, B, T, C], or NULL: from the embeddings).
 * With layer_heads ([L, B, T, C]: engines that resume after a layer's attention) a chunk holds
 * heads of one layer only and resumes after that layer's attention. Each copy's losses are those
 * of a forward of the B items alone, and are averaged in the same order. An engine left unable to
 * run any batch (reserve_batch's worst case) fails the forward with its message. */
static int ablate_in_batches(andrea_engine *e, const andrea_forward_io *clean_io, const andrea_config *cfg, int K,
                             const ablation_group *g, const float *layer_inputs, const float *layer_heads,
                             ae_error *err) {
    const int B = clean_io->B, T = clean_io->T;
    const int NH = cfg->n_layer * cfg->n_head, H = cfg->n_head, C = cfg->d_model;
    const size_t bt = (size_t)B * (size_t)T, btc = bt * (size_t)C;
    int *tokens = malloc(sizeof(int) * bt * (size_t)K), *lengths = malloc(sizeof(int) * (size_t)B * (size_t)K);
    int *targets = malloc(sizeof(int) * bt * (size_t)K), *heads = malloc(sizeof(int) * (size_t)NH);
    float *loss = malloc(sizeof(float) * bt * (size_t)K);
    /* the resume layer's input (and head outputs), once per copy; without the memory, every
     * forward from layer 0 */
    float *x = layer_inputs ? malloc(sizeof(float) * btc * (size_t)K) : NULL;
    float *o = layer_heads && x ? malloc(sizeof(float) * btc * (size_t)K) : NULL;
    unsigned char *mask = calloc((size_t)K * (size_t)B, (size_t)NH);
    int ret = -1, n = 0;
    if (!tokens || !lengths || !targets || !heads || !loss || !mask || (layer_heads && !o)) {
        andrea_fail(err, "%s: out of memory for the causal check", g->m[0].s->name);
        goto out;
    }
    for (int j = 0; j < K; j++) {
        memcpy(tokens + (size_t)j * bt, clean_io->tokens, sizeof(int) * bt);
        memcpy(lengths + (size_t)j * B, clean_io->lengths, sizeof(int) * (size_t)B);
        memcpy(targets + (size_t)j * bt, clean_io->loss_targets, sizeof(int) * bt);
    }
    for (int i = 0; i < NH; i++)
        if (g->want[i]) heads[n++] = i;
    andrea_forward_io io = *clean_io; /* the clean forward's, on K copies of its items */
    io.tokens = tokens;
    io.lengths = lengths;
    io.loss_targets = targets;
    io.token_loss = loss;
    io.ablate = mask;
    io.ablate_per_seq = 1;
    for (int c = 0, k; c < n; c += k) {
        const int *hc = heads + c, from = x ? hc[0] / H : 0;
        for (k = 1; k < K && c + k < n && (!o || hc[k] / H == from);) k++;
        memset(mask, 0, (size_t)K * (size_t)B * (size_t)NH);
        for (int j = 0; j < k; j++)
            for (int b = 0; b < B; b++) mask[((size_t)j * B + b) * (size_t)NH + (size_t)hc[j]] = 1;
        for (int j = 0; j < k && from > 0; j++)
            memcpy(x + (size_t)j * btc, layer_inputs + (size_t)from * btc, sizeof(float) * btc);
        for (int j = 0; j < k && o; j++)
            memcpy(o + (size_t)j * btc, layer_heads + (size_t)from * btc, sizeof(float) * btc);
        io.B = k * B;
        io.resume_layer = from;
        io.resume_x = from > 0 ? x : NULL;
        io.resume_heads = o;
        if (andrea_engine_forward(e, &io, err)) goto out;
        for (int j = 0; j < k; j++) store_deltas(g, hc[j], loss + (size_t)j * bt);
    }
    ret = 0;
out:
    free(tokens);
    free(lengths);
    free(targets);
    free(heads);
    free(loss);
    free(x);
    free(o);
    free(mask);
    return ret;
}

/* The clean forward, then every wanted head's ablated forwards, of one group whose items are in
 * tokens/lengths and loss positions in use (any member's). The engines compute the losses where
 * the logits are (token_loss) and ablate a head per copy of the items (ablate_per_seq). */
static int run_group(andrea_engine *e, const andrea_config *cfg, ablation_group *g, int *tokens, int *lengths,
                     const unsigned char *use, ae_error *err) {
    const int NH = cfg->n_layer * cfg->n_head, H = cfg->n_head, B = g->B, T = g->T;
    const size_t bt = (size_t)B * (size_t)T;
    const char *name = g->m[0].s->name;
    if (!andrea_engine_can_token_loss(e) || !andrea_engine_can_ablate_per_seq(e))
        return andrea_fail(err, "%s: the %s engine cannot run the causal check (token losses, a head ablated per "
                                "sequence)", name, andrea_engine_name(e));
    float *layer_inputs = NULL, *layer_heads = NULL, *tloss = malloc(bt * sizeof(float));
    int *targets = malloc(bt * sizeof(int));
    int ret = -1;
    if (!tloss || !targets) {
        andrea_fail(err, "%s: out of memory for the causal check", name);
        goto out;
    }
    const int K = heads_per_forward(e, cfg, g->want, B, T);
    const int heads = andrea_engine_can_resume_heads(e);
    if (andrea_engine_can_resume(e) && (heads || some_chunk_resumes(g->want, NH, H, K)))
        resume_buffers(bt, cfg, &layer_inputs, heads ? &layer_heads : NULL);
    andrea_forward_io io = {0};
    io.B = B;
    io.T = T;
    io.tokens = tokens;
    io.lengths = lengths;
    io.layer_inputs = layer_inputs;
    io.layer_heads = layer_heads;
    for (size_t r = 0; r < bt; r++) targets[r] = (r % (size_t)T) + 1 < (size_t)T && use[r] ? tokens[r + 1] : -1;
    io.loss_targets = targets;
    io.token_loss = tloss;
    if (andrea_engine_forward(e, &io, err)) goto out;
    io.layer_inputs = NULL;
    io.layer_heads = NULL;
    /* A forward that overflowed float32 (the CPU engine refuses it itself; a GPU's shows here)
     * would make every loss and delta NaN, stored as if nothing had been measured. */
    int bad = 0;
    for (int k = 0; k < g->n_members; k++) g->m[k].clean = mean_token_loss(tloss, g->m[k].use, B, T, &bad);
    if (bad) {
        andrea_fail(err, "%s: causal check: the forward overflows float32 (non-finite logits): the checkpoint's weights are "
                     "far outside a trained model's range", name);
        goto out;
    }
    if (ablate_in_batches(e, &io, cfg, K, g, layer_inputs, layer_heads, err)) goto out;
    ret = 0;
out:
    free(tloss);
    free(targets);
    free(layer_inputs);
    free(layer_heads);
    return ret;
}

/* Each member's statistics once its group ran: the clean loss, the mean over the mean's heads. */
static void finish_members(const ablation_group *g, int NH) {
    for (int k = 0; k < g->n_members; k++) {
        andrea_suite_scores *s = g->m[k].s;
        double sum = 0;
        int n = 0;
        for (int i = 0; i < NH; i++)
            if (g->in_mean[i]) {
                sum += s->heads[i].ablation_delta;
                n++;
            }
        s->clean_loss = g->m[k].clean;
        s->ablation_mean = n ? sum / n : NAN;
        s->n_ablation_items = g->B;
    }
}

/* The group's items (token for token those of every member), each member's loss positions and
 * wanted heads, and the union of both; then its forwards. */
static int ablate_group(andrea_engine *e, const andrea_config *cfg, ablation_group *g, ae_error *err) {
    const int NH = cfg->n_layer * cfg->n_head, B = g->B, T = g->T;
    const size_t bt = (size_t)B * (size_t)T;
    int *tokens = calloc(bt, sizeof(int)), *lengths = calloc((size_t)B, sizeof(int));
    unsigned char *use = calloc(bt, 1), *uses = calloc(bt, (size_t)g->n_members);
    unsigned char *wants = calloc((size_t)NH, (size_t)g->n_members);
    int ret = -1;
    if (!tokens || !lengths || !use || !uses || !wants) {
        ret = andrea_fail(err, "%s: out of memory for the causal check", g->m[0].s->name);
        goto out;
    }
    for (int b = 0; b < B; b++) {
        const probe_item *it = &g->m[0].items->items[g->m[0].pick[b]];
        int len = it->n_tokens < T ? it->n_tokens : T;
        memcpy(tokens + (size_t)b * T, it->tokens, sizeof(int) * (size_t)len);
        lengths[b] = len;
    }
    for (int k = 0; k < g->n_members; k++) {
        ablation_member *m = &g->m[k];
        m->use = uses + (size_t)k * bt;
        m->want = wants + (size_t)k * NH;
        for (int b = 0; b < B; b++)
            if (loss_positions(m->items, &m->items->items[m->pick[b]], lengths[b], m->use + (size_t)b * T) < 0) {
                ret = andrea_fail(err, "%s: out of memory for the causal check", m->s->name);
                goto out;
            }
        for (size_t r = 0; r < bt; r++) use[r] |= m->use[r];
        for (int i = 0; i < NH; i++) g->want[i] |= m->want[i] = g->in_mean[i] || m->s->heads[i].label;
    }
    ret = run_group(e, cfg, g, tokens, lengths, use, err);
    if (ret == 0) finish_members(g, NH);
out:
    free(tokens);
    free(lengths);
    free(use);
    free(uses);
    free(wants);
    return ret;
}

/* Whether suites a and b picked the same items, token for token. */
static int same_items(const probe_suite *a, const int *pick_a, int B_a, const probe_suite *b, const int *pick_b, int B_b) {
    if (B_a != B_b) return 0;
    for (int k = 0; k < B_a; k++) {
        const probe_item *x = &a->items[pick_a[k]], *y = &b->items[pick_b[k]];
        if (x->n_tokens != y->n_tokens || memcmp(x->tokens, y->tokens, sizeof(int) * (size_t)x->n_tokens)) return 0;
    }
    return 1;
}

void andrea_ablation_mean_heads(int NH, unsigned char *in_mean) {
    /* Past ANDREA_ABLATE_MEAN_HEADS an even spread bounds the cost on big models: head
     * floor(k NH / M) for k < M is M distinct heads (NH > M) from every part of the model. A
     * stride of ceil(NH / M) took fewer (36 of 72, 48 of 144) and, with an even stride, never an
     * odd head of a layer. */
    const long M = ANDREA_ABLATE_MEAN_HEADS;
    memset(in_mean, 0, (size_t)(NH > 0 ? NH : 0));
    if (NH <= M)
        memset(in_mean, 1, (size_t)(NH > 0 ? NH : 0));
    else
        for (long k = 0; k < M; k++) in_mean[k * NH / M] = 1;
}

int andrea_ablation_suites(andrea_engine *e, const andrea_config *cfg, const probe_suite *suites, int n_suites,
                           int max_items, andrea_suite_scores *scores, ae_progress *prog, ae_error *err) {
    const int NH = cfg->n_layer * cfg->n_head, per = max_items > 0 ? max_items : 1, n = n_suites > 0 ? n_suites : 1;
    int *pick = malloc(sizeof(int) * (size_t)per * (size_t)n), *Bs = calloc((size_t)n, sizeof(int));
    int *Ts = calloc((size_t)n, sizeof(int)), *leader = calloc((size_t)n, sizeof(int));
    ablation_member *members = calloc((size_t)n, sizeof *members);
    unsigned char *in_mean = calloc((size_t)NH, 1), *want = calloc((size_t)NH, 1);
    int ret = -1;
    if (!pick || !Bs || !Ts || !leader || !members || !in_mean || !want) {
        ret = andrea_fail(err, "causal check: out of memory");
        goto out;
    }
    andrea_ablation_mean_heads(NH, in_mean);
    for (int s = 0; s < n_suites; s++) {
        andrea_suite_scores *sc = &scores[s];
        sc->clean_loss = sc->ablation_mean = NAN;
        sc->n_ablation_items = 0;
        for (int i = 0; i < NH; i++) sc->heads[i].ablation_delta = NAN;
        /* The first max_items items with at least one loss position. */
        if (pick_items(&suites[s], max_items, pick + (size_t)s * per, &Bs[s], &Ts[s])) {
            ret = andrea_fail(err, "%s: out of memory", sc->name);
            goto out;
        }
        size_t bt, btv;
        if (ae_mul((size_t)Bs[s], (size_t)Ts[s], &bt) || ae_mul(bt, (size_t)cfg->vocab_size, &btv) ||
            btv > ((size_t)1 << 34) / sizeof(float)) {
            ret = andrea_fail(err, "%s: causal check too large (%d items x %d tokens x vocab %d)", sc->name, Bs[s], Ts[s],
                              cfg->vocab_size);
            goto out;
        }
        leader[s] = s;
        for (int t = 0; t < s && Bs[s] > 0; t++)
            if (leader[t] == t && same_items(&suites[t], pick + (size_t)t * per, Bs[t], &suites[s], pick + (size_t)s * per, Bs[s])) {
                leader[s] = t;
                break;
            }
    }
    for (int s = 0; s < n_suites; s++) {
        if (leader[s] != s) continue;
        ablation_group g = {.B = Bs[s], .m = members, .want = want, .in_mean = in_mean};
        memset(want, 0, (size_t)NH);
        for (int t = s; t < n_suites; t++)
            if (leader[t] == s) {
                g.m[g.n_members++] = (ablation_member){.items = &suites[t], .pick = pick + (size_t)t * per, .s = &scores[t]};
                if (Ts[t] > g.T) g.T = Ts[t]; /* the longest prefix a member needs */
            }
        if (g.B > 0 && ablate_group(e, cfg, &g, err)) goto out;
        if (prog) andrea_progress_add(prog, (uint64_t)g.n_members);
    }
    ret = 0;
out:
    free(pick);
    free(Bs);
    free(Ts);
    free(leader);
    free(members);
    free(in_mean);
    free(want);
    return ret;
}

int andrea_ablation_suite(andrea_engine *e, const andrea_config *cfg, const probe_suite *items, int max_items,
                          andrea_suite_scores *s, ae_error *err) {
    return andrea_ablation_suites(e, cfg, items, 1, max_items, s, NULL, err);
}
